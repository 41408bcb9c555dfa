/* benchmarks/ptx_bench.c: the PTX front end over a corpus of modules.
 *
 *   ptx_bench [--verify] [--roundtrip] [--dir DIR] [--list FILE] [FILE|DIR...]
 *   ptx_bench --peak FILE
 *
 * Reads each module into memory first, then times ptx_parse alone (and the
 * verifier with --verify) on one thread: the MB/s and instructions/s it
 * prints are the front end's, without file reading.  --roundtrip prints
 * each module, parses the printed IR back, prints again and compares (the
 * .pwir round trip the corpus suite checks).  --list takes module names,
 * one a line ('#' comments), relative to --dir; when that directory does
 * not exist the run is skipped (exit 77, meson's "skipped").
 * --peak parses one file and reports the process's peak resident memory.
 *
 * Exit status: 0 when every module parsed (and verified, and round-tripped),
 * 1 otherwise.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "ir/ir.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return NULL;
  }
  long n = ftell(f);
  rewind(f);
  char *b = malloc(n > 0 ? (size_t)n : 1);
  if (b && n > 0 && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  *len = n > 0 ? (size_t)n : 0;
  return b;
}

typedef struct {
  char **v;
  size_t n, cap;
} strvec;

static void push(strvec *s, char *x) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 256;
    s->v = realloc(s->v, s->cap * sizeof *s->v);
    if (!s->v) abort();
  }
  s->v[s->n++] = x;
}

static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void add_path(strvec *files, const char *path) {
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *de;
    size_t first = files->n;
    while (d && (de = readdir(d))) {
      size_t l = strlen(de->d_name);
      if (l < 4 || strcmp(de->d_name + l - 4, ".ptx")) continue;
      size_t pl = strlen(path) + l + 2;
      char *full = malloc(pl);
      snprintf(full, pl, "%s/%s", path, de->d_name);
      push(files, full);
    }
    if (d) closedir(d);
    qsort(files->v + first, files->n - first, sizeof *files->v, cmpstr);
  } else {
    push(files, strdup(path));
  }
}

/* Prints m to a malloc'd string. */
static char *print_to_string(const ir_module *m, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f) return NULL;
  ir_print_module(f, m);
  fclose(f);
  return buf;
}

static long peak_rss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

int main(int argc, char **argv) {
  bool verify = false, roundtrip = false;
  const char *dir = NULL, *list = NULL, *peak = NULL;
  strvec files = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--verify")) verify = true;
    else if (!strcmp(argv[i], "--roundtrip")) roundtrip = true;
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
    else if (!strcmp(argv[i], "--peak") && i + 1 < argc) peak = argv[++i];
    else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: ptx_bench [--verify] [--roundtrip] [--dir DIR] [--list FILE] [FILE|DIR...]\n"
                      "       ptx_bench --peak FILE\n");
      return 2;
    } else add_path(&files, argv[i]);
  }
  if (peak) {
    size_t len;
    char *text = slurp(peak, &len);
    if (!text) {
      perror(peak);
      return 1;
    }
    long before = peak_rss_kb();
    pw_diag d;
    pw_diag_init(&d, stderr);
    d.max_errors = 20;
    ptx_parse_stats st;
    double t0 = now();
    ir_module *m = ptx_parse(peak, text, len, &d, &st);
    double t1 = now();
    bool ok = m && ir_verify(m, NULL, &d);
    double t2 = now();
    printf("%s: %zu bytes, %llu instructions, parse %.3f s, verify %.3f s, peak RSS %.1f MiB "
           "(%.1f MiB before parsing, the text included)%s\n",
           peak, len, (unsigned long long)st.instrs, t1 - t0, t2 - t1, peak_rss_kb() / 1024.0,
           before / 1024.0, ok ? "" : " FAILED");
    if (m) ir_module_destroy(m);
    pw_diag_fini(&d);
    free(text);
    return ok ? 0 : 1;
  }
  if (list) {
    struct stat st;
    if (!dir || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      printf("ptx_bench: corpus directory %s not present: skipped\n", dir ? dir : "(none)");
      return 77;
    }
    FILE *f = fopen(list, "r");
    if (!f) {
      perror(list);
      return 1;
    }
    char line[1024];
    while (fgets(line, sizeof line, f)) {
      size_t l = strcspn(line, "\r\n");
      line[l] = 0;
      if (!l || line[0] == '#') continue;
      size_t pl = strlen(dir) + l + 2;
      char *full = malloc(pl);
      snprintf(full, pl, "%s/%s", dir, line);
      push(&files, full);
    }
    fclose(f);
  } else if (dir) {
    add_path(&files, dir);
  }
  if (!files.n) {
    fprintf(stderr, "ptx_bench: no modules\n");
    return 2;
  }
  uint64_t bytes = 0, instrs = 0, opaque = 0, nok = 0, nfail = 0, nrt_fail = 0;
  double tparse = 0, tverify = 0;
  for (size_t i = 0; i < files.n; i++) {
    size_t len;
    char *text = slurp(files.v[i], &len);
    if (!text) {
      perror(files.v[i]);
      nfail++;
      continue;
    }
    pw_diag d;
    pw_diag_init(&d, NULL); /* collect: print only the failures' first lines */
    d.max_errors = 3;
    ptx_parse_stats st;
    double t0 = now();
    ir_module *m = ptx_parse(files.v[i], text, len, &d, &st);
    double t1 = now();
    tparse += t1 - t0;
    bytes += len;
    instrs += st.instrs;
    opaque += st.opaque;
    bool ok = m != NULL;
    if (ok && verify) {
      ok = ir_verify(m, NULL, &d);
      tverify += now() - t1;
    }
    if (!ok) {
      nfail++;
      const char *msg = pw_diag_text(&d);
      printf("FAIL %s\n%.*s", files.v[i], (int)strnlen(msg, 2000), msg);
    } else {
      nok++;
    }
    if (ok && roundtrip) {
      size_t l1, l2;
      char *p1 = print_to_string(m, &l1);
      pw_diag d2;
      pw_diag_init(&d2, NULL);
      d2.max_errors = 3;
      ir_module *m2 = p1 ? ir_parse(files.v[i], p1, l1, &d2) : NULL;
      char *p2 = m2 ? print_to_string(m2, &l2) : NULL;
      if (!p2 || l1 != l2 || memcmp(p1, p2, l1)) {
        nrt_fail++;
        printf("ROUNDTRIP %s: %s\n%.*s", files.v[i], !m2 ? "printed IR does not parse back" : "second print differs",
               (int)strnlen(pw_diag_text(&d2), 2000), pw_diag_text(&d2));
      }
      free(p1);
      free(p2);
      if (m2) ir_module_destroy(m2);
      pw_diag_fini(&d2);
    }
    if (m) ir_module_destroy(m);
    pw_diag_fini(&d);
    free(text);
    fflush(stdout);
  }
  printf("%llu modules: %llu parsed%s, %llu failed", (unsigned long long)files.n,
         (unsigned long long)nok, verify ? " and verified" : "", (unsigned long long)nfail);
  if (roundtrip) printf(", %llu round trips differ", (unsigned long long)nrt_fail);
  printf("\n%.1f MB, %llu instructions (%llu kept opaque)\n", bytes / 1e6,
         (unsigned long long)instrs, (unsigned long long)opaque);
  printf("parse: %.2f s, %.1f MB/s, %.2f M instructions/s (one thread)\n", tparse,
         bytes / 1e6 / tparse, instrs / 1e6 / tparse);
  if (verify)
    printf("parse+verify: %.2f s, %.1f MB/s\n", tparse + tverify, bytes / 1e6 / (tparse + tverify));
  return nfail || nrt_fail ? 1 : 0;
}
