/* benchmarks/ptx_bench.c: the PTX front end over a corpus of modules.
 *
 *   ptx_bench [--verify] [--roundtrip] [--print-dir OUT] [--dir DIR] [--list FILE] [FILE|DIR...]
 *   ptx_bench [--verify] [--roundtrip] [--print-dir OUT] --libdir DIR [--list FILE]
 *   ptx_bench --peak FILE
 *
 * Reads each module into memory first, then times ptx_parse alone (and the
 * verifier with --verify) on one thread: the MB/s and instructions/s it
 * prints are the front end's, without file reading.  --roundtrip prints
 * each module, parses the printed IR back, prints again and compares (the
 * .pwir round trip the corpus suite checks).  --list takes module names,
 * one a line ('#' comments), relative to --dir; when that directory does
 * not exist the run is skipped (exit 77, meson's "skipped").
 * --libdir reads the modules from the libraries themselves through the
 * container API: every PTX entry of every file in DIR, or with --list the
 * entries named there by their stable names (libcublas.so.13.c0012.e04
 * .sm_120.ptx: library, container, entry); a missing DIR skips the run.
 * --peak parses one file and reports the process's peak resident memory.
 * --print-dir writes each module's IR to OUT/NAME.pwir: two builds' front
 * ends compared module by module (diff -r), for a change that must not
 * alter what the parser builds.
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
#include "ptx/container.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"
#include "util/pw_file.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* This thread's CPU time: on a shared machine the wall clock also counts
 * the time other processes had the core. */
static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
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

typedef struct totals {
  bool verify, roundtrip;
  const char *print_dir;   /* --print-dir */
  uint64_t nmod, bytes, instrs, opaque, nok, nfail, nrt_fail;
  double tparse, tverify;
  double cparse, cverify;  /* CPU time */
} totals;

/* --print-dir: the module's IR as DIR/NAME.pwir (NAME's slashes as '_'),
 * to compare two builds' front ends module by module. */
static void write_ir(const char *dir, const char *name, const ir_module *m) {
  char path[4096];
  int n = snprintf(path, sizeof path, "%s/", dir);
  for (const char *c = name; *c && n < (int)sizeof path - 6; c++) path[n++] = *c == '/' ? '_' : *c;
  snprintf(path + n, sizeof path - (size_t)n, ".pwir");
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    return;
  }
  ir_print_module(f, m);
  fclose(f);
}

/* Parses (verifies, round-trips) one module and adds it to the totals. */
static void one_module(totals *T, const char *name, const char *text, size_t len) {
  pw_diag d;
  pw_diag_init(&d, NULL); /* collect: print only the failures' first lines */
  d.max_errors = 3;
  ptx_parse_stats st;
  double t0 = now(), c0 = cpu_now();
  ir_module *m = ptx_parse(name, text, len, &d, &st);
  double t1 = now(), c1 = cpu_now();
  T->nmod++;
  T->tparse += t1 - t0;
  T->cparse += c1 - c0;
  T->bytes += len;
  T->instrs += st.instrs;
  T->opaque += st.opaque;
  bool ok = m != NULL;
  if (ok && T->verify) {
    ok = ir_verify(m, NULL, &d);
    T->tverify += now() - t1;
    T->cverify += cpu_now() - c1;
  }
  if (!ok) {
    T->nfail++;
    const char *msg = pw_diag_text(&d);
    printf("FAIL %s\n%.*s", name, (int)strnlen(msg, 2000), msg);
  } else {
    T->nok++;
  }
  if (ok && T->print_dir) write_ir(T->print_dir, name, m);
  if (ok && T->roundtrip) {
    size_t l1, l2;
    char *p1 = print_to_string(m, &l1);
    pw_diag d2;
    pw_diag_init(&d2, NULL);
    d2.max_errors = 3;
    ir_module *m2 = p1 ? ir_parse(name, p1, l1, &d2) : NULL;
    char *p2 = m2 ? print_to_string(m2, &l2) : NULL;
    if (!p2 || l1 != l2 || memcmp(p1, p2, l1)) {
      T->nrt_fail++;
      printf("ROUNDTRIP %s: %s\n%.*s", name,
             !m2 ? "printed IR does not parse back" : "second print differs",
             (int)strnlen(pw_diag_text(&d2), 2000), pw_diag_text(&d2));
    }
    free(p1);
    free(p2);
    if (m2) ir_module_destroy(m2);
    pw_diag_fini(&d2);
  }
  if (m) ir_module_destroy(m);
  pw_diag_fini(&d);
  fflush(stdout);
}

static void print_totals(const totals *T) {
  printf("%llu modules: %llu parsed%s, %llu failed", (unsigned long long)T->nmod,
         (unsigned long long)T->nok, T->verify ? " and verified" : "", (unsigned long long)T->nfail);
  if (T->roundtrip) printf(", %llu round trips differ", (unsigned long long)T->nrt_fail);
  printf("\n%.1f MB, %llu instructions (%llu kept opaque)\n", T->bytes / 1e6,
         (unsigned long long)T->instrs, (unsigned long long)T->opaque);
  printf("parse: %.2f s, %.1f MB/s, %.2f M instructions/s (one thread, wall clock)\n", T->tparse,
         T->bytes / 1e6 / T->tparse, T->instrs / 1e6 / T->tparse);
  printf("parse: %.2f s, %.1f MB/s, %.2f M instructions/s (one thread, its CPU time)\n", T->cparse,
         T->bytes / 1e6 / T->cparse, T->instrs / 1e6 / T->cparse);
  if (T->verify)
    printf("parse+verify: %.2f s wall, %.1f MB/s; %.2f s CPU, %.1f MB/s\n", T->tparse + T->tverify,
           T->bytes / 1e6 / (T->tparse + T->tverify), T->cparse + T->cverify,
           T->bytes / 1e6 / (T->cparse + T->cverify));
}

/* --libdir: modules straight from the libraries. */
typedef struct lib_walk {
  totals *T;
  const char *only;    /* with --list: the one stable name wanted, or NULL for all */
  bool found;
} lib_walk;

static bool on_lib_module(const ptx_module *pm, void *user) {
  lib_walk *w = user;
  if (w->only && strcmp(pm->name, w->only)) return true;
  w->found = true;
  one_module(w->T, pm->name, pm->text, pm->len);
  return !w->only;
}

static int run_libdir(totals *T, const char *libdir, const strvec *names) {
  struct stat st;
  if (stat(libdir, &st) != 0 || !S_ISDIR(st.st_mode)) {
    printf("ptx_bench: library directory %s not present: skipped\n", libdir);
    return 77;
  }
  ptx_decoder *dec = ptx_decoder_new();
  pw_diag d;
  pw_diag_init(&d, stderr);
  if (names->n) {
    /* Group the names by library (they are sorted by it in sample.txt). */
    ptx_file *f = NULL;
    char cur[512] = "";
    for (size_t i = 0; i < names->n; i++) {
      const char *n = names->v[i];
      const char *c = strstr(n, ".c");
      while (c && !(c[2] >= '0' && c[2] <= '9')) c = strstr(c + 2, ".c");
      if (!c || (size_t)(c - n) >= sizeof cur) {
        printf("FAIL %s: not a stable entry name\n", n);
        T->nfail++;
        continue;
      }
      if (strncmp(cur, n, (size_t)(c - n)) || cur[c - n]) {
        if (f) ptx_file_close(f);
        memcpy(cur, n, (size_t)(c - n));
        cur[c - n] = 0;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", libdir, cur);
        f = ptx_file_open(path, &d);
      }
      /* .cCONTAINER.eENTRY: read that entry alone. */
      unsigned long ci = strtoul(c + 2, NULL, 10), ei = 0;
      const char *e = strstr(c + 2, ".e");
      if (e) ei = strtoul(e + 2, NULL, 10);
      ptx_payload pl = {0};
      if (!f || !e || ci >= f->ncontainers || ei >= f->containers[ci].nentries ||
          f->containers[ci].entries[ei].kind != ptx_kind_ptx ||
          !ptx_entry_read(f, &f->containers[ci].entries[ei], NULL, dec, &d, &pl)) {
        printf("FAIL %s: no such PTX entry in %s/%s\n", n, libdir, cur);
        T->nfail++;
        continue;
      }
      one_module(T, n, (const char *)pl.data, pl.len);
      ptx_payload_free(&pl);
    }
    if (f) ptx_file_close(f);
  } else {
    strvec all = {0};
    DIR *dir = opendir(libdir);
    struct dirent *de;
    while (dir && (de = readdir(dir))) {
      if (de->d_name[0] == '.') continue;
      size_t pl = strlen(libdir) + strlen(de->d_name) + 2;
      char *full = malloc(pl);
      snprintf(full, pl, "%s/%s", libdir, de->d_name);
      struct stat fs;
      if (lstat(full, &fs) == 0 && S_ISREG(fs.st_mode)) push(&all, full);
      else free(full);
    }
    if (dir) closedir(dir);
    qsort(all.v, all.n, sizeof *all.v, cmpstr);
    for (size_t i = 0; i < all.n; i++) {
      pw_diag q;
      pw_diag_init(&q, NULL); /* files without fatbins are not errors here */
      ptx_file *f = ptx_file_open(all.v[i], &q);
      if (f) {
        lib_walk w = {T, NULL, false};
        ptx_file_for_each(f, PTX_VISIT_PTX, NULL, dec, &q, on_lib_module, &w);
        ptx_file_close(f);
      }
      pw_diag_fini(&q);
      free(all.v[i]);
    }
    free(all.v);
  }
  pw_diag_fini(&d);
  ptx_decoder_free(dec);
  print_totals(T);
  return T->nfail || T->nrt_fail ? 1 : 0;
}

int main(int argc, char **argv) {
  bool verify = false, roundtrip = false;
  const char *dir = NULL, *list = NULL, *peak = NULL, *libdir = NULL, *print_dir = NULL;
  strvec files = {0};
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--verify")) verify = true;
    else if (!strcmp(argv[i], "--roundtrip")) roundtrip = true;
    else if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
    else if (!strcmp(argv[i], "--peak") && i + 1 < argc) peak = argv[++i];
    else if (!strcmp(argv[i], "--libdir") && i + 1 < argc) libdir = argv[++i];
    else if (!strcmp(argv[i], "--print-dir") && i + 1 < argc) print_dir = argv[++i];
    else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: ptx_bench [--verify] [--roundtrip] [--print-dir DIR] [--dir DIR] [--list FILE] [FILE|DIR...]\n"
                      "       ptx_bench --peak FILE\n");
      return 2;
    } else add_path(&files, argv[i]);
  }
  if (peak) {
    size_t len;
    char *text = pw_read_file(peak, &len);
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
  totals T = {.verify = verify, .roundtrip = roundtrip, .print_dir = print_dir};
  if (libdir) {
    strvec names = {0};
    if (list) {
      FILE *f = fopen(list, "r");
      if (!f) {
        perror(list);
        return 1;
      }
      char line[1024];
      while (fgets(line, sizeof line, f)) {
        size_t l = strcspn(line, "\r\n");
        line[l] = 0;
        if (l && line[0] != '#') push(&names, strdup(line));
      }
      fclose(f);
    }
    int rc = run_libdir(&T, libdir, &names);
    for (size_t i = 0; i < names.n; i++) free(names.v[i]);
    free(names.v);
    return rc;
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
  for (size_t i = 0; i < files.n; i++) {
    size_t len;
    char *text = pw_read_file(files.v[i], &len);
    if (!text) {
      perror(files.v[i]);
      T.nfail++;
      T.nmod++;
      continue;
    }
    one_module(&T, files.v[i], text, len);
    free(text);
  }
  print_totals(&T);
  for (size_t i = 0; i < files.n; i++) free(files.v[i]);
  free(files.v);
  return T.nfail || T.nrt_fail ? 1 : 0;
}
