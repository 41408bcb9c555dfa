/* tools/cmd_extract.c: `ptxwave extract FILE... -o DIR`: every PTX and
 * cubin entry, decompressed, as one file each under DIR, with the stable
 * names of ptx_entry_name (library, container, entry, arch).
 *
 * Inputs that are the same file (a symlink and its target, as in
 * /usr/local/cuda/lib64) are extracted once.  Two different files with the
 * same base name would give the same output names: that is refused rather
 * than letting one overwrite the other.  Files are written to a temporary
 * name and renamed, so an interrupted run leaves no truncated module under
 * a final name.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptx/container.h"
#include "tools.h"

static void usage(FILE *out) {
  fprintf(out,
          "usage: ptxwave extract [OPTIONS] FILE... -o DIR\n"
          "\n"
          "Writes every PTX and cubin entry of the fatbin containers in each FILE,\n"
          "decompressed (LZ4, zstd), into DIR, one file per entry, named\n"
          "\n"
          "  FILE.cCONTAINER.eENTRY.sm_ARCH[a|f].ptx     e.g. libcublas.so.13.c0123.e04.sm_90a.ptx\n"
          "  FILE.cCONTAINER.eENTRY.sm_ARCH[a|f].cubin\n"
          "\n"
          "FILE is its base name; containers are numbered in file order across the\n"
          "whole input (all members of an archive), entries within their container,\n"
          "as `ptxwave inspect` lists them.  PTX loses the NUL padding nvcc adds.\n"
          "Entries of other kinds (8: LTO IR) are not extracted.\n"
          "\n"
          "options:\n"
          "  -o DIR, --output=DIR  where to write (created if missing)\n"
          "  --ptx-only            skip cubins\n"
          "  --cubin-only          skip PTX\n"
          "  --max-size=N          refuse payloads that decompress to more than N bytes\n"
          "                        (default 1073741824; K, M, G suffixes allowed)\n"
          "  -q, --quiet           no per-file summary\n"
          "  -h, --help            this text\n"
          "\n"
          "Exit status: 0 when every entry was written; 1 when an input is malformed or\n"
          "a write failed (everything readable is still written); 2 on a usage error.\n");
}

typedef struct extract_ctx {
  const char *dir;
  pw_diag *d;
  uint64_t nptx, ncubin, bytes;
  int errors;
} extract_ctx;

static bool write_file(const char *dir, const char *name, const void *data, size_t len, pw_diag *d) {
  char path[8192], tmp[8192 + 32];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    pw_error(d, tmp, "cannot create: %s", strerror(errno));
    return false;
  }
  const char *p = data;
  size_t left = len;
  while (left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      pw_error(d, tmp, "write failed: %s", w < 0 ? strerror(errno) : "no progress");
      close(fd);
      unlink(tmp);
      return false;
    }
    p += w;
    left -= (size_t)w;
  }
  if (close(fd) < 0 || rename(tmp, path) < 0) {
    pw_error(d, path, "cannot write: %s", strerror(errno));
    unlink(tmp);
    return false;
  }
  return true;
}

static bool on_module(const ptx_module *m, void *user) {
  extract_ctx *x = user;
  if (!write_file(x->dir, m->name, m->text, m->len, x->d)) {
    x->errors++;
    return true;
  }
  if (m->kind == ptx_kind_ptx)
    x->nptx++;
  else
    x->ncubin++;
  x->bytes += m->len;
  return true;
}

static bool mkdir_p(const char *dir, pw_diag *d) {
  char buf[4096];
  size_t n = strlen(dir);
  if (n >= sizeof buf) {
    pw_error(d, dir, "path too long");
    return false;
  }
  memcpy(buf, dir, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != 0) continue;
    char c = buf[i];
    buf[i] = 0;
    if (mkdir(buf, 0755) < 0 && errno != EEXIST) {
      pw_error(d, buf, "cannot create directory: %s", strerror(errno));
      return false;
    }
    buf[i] = c;
  }
  struct stat st;
  if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
    pw_error(d, dir, "not a directory");
    return false;
  }
  return true;
}

static const char *base_name(const char *p) {
  const char *b = strrchr(p, '/');
  return b ? b + 1 : p;
}

int cmd_extract(int argc, char **argv) {
  const char *dir = NULL;
  unsigned visit = PTX_VISIT_PTX | PTX_VISIT_CUBIN;
  bool quiet = false;
  ptx_read_options ro = {0};
  const char **files = calloc((size_t)argc, sizeof *files);
  if (!files) return 1;
  int nfiles = 0;
  bool only_files = false;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (only_files || a[0] != '-' || !a[1]) {
      files[nfiles++] = a;
    } else if (cmd_is_help(a)) {
      usage(stdout);
      free(files);
      return 0;
    } else if (!strcmp(a, "-o") && i + 1 < argc) {
      dir = argv[++i];
    } else if (!strncmp(a, "--output=", 9)) {
      dir = a + 9;
    } else if (!strcmp(a, "--ptx-only")) {
      visit = PTX_VISIT_PTX;
    } else if (!strcmp(a, "--cubin-only")) {
      visit = PTX_VISIT_CUBIN;
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      quiet = true;
    } else if (!strncmp(a, "--max-size=", 11)) {
      if (!cmd_parse_size(a + 11, &ro.max_decompressed)) {
        fprintf(stderr, "ptxwave extract: bad size '%s'\n", a + 11);
        free(files);
        return 2;
      }
    } else if (!strcmp(a, "--")) {
      only_files = true;
    } else {
      fprintf(stderr, "ptxwave extract: unknown option '%s'\n\n", a);
      usage(stderr);
      free(files);
      return 2;
    }
  }
  if (!dir || !nfiles) {
    fprintf(stderr, "ptxwave extract: %s\n\n", !dir ? "no output directory (-o DIR)" : "no input files");
    usage(stderr);
    free(files);
    return 2;
  }
  pw_diag d;
  pw_diag_init(&d, stderr);
  d.max_errors = 50;
  int errors = 0;
  if (!mkdir_p(dir, &d)) {
    free(files);
    pw_diag_fini(&d);
    return 1;
  }
  struct stat *seen = calloc((size_t)nfiles, sizeof *seen);
  ptx_decoder *dec = ptx_decoder_new();
  if (!seen || !dec) {
    fprintf(stderr, "ptxwave extract: out of memory\n");
    return 1;
  }
  uint64_t tot_ptx = 0, tot_cubin = 0, tot_bytes = 0;
  for (int i = 0; i < nfiles; i++) {
    const char *path = files[i];
    struct stat st;
    if (stat(path, &st) == 0) {
      bool dup = false;
      for (int j = 0; j < i; j++) {
        if (seen[j].st_ino == st.st_ino && seen[j].st_dev == st.st_dev) {
          if (!quiet) printf("%s: same file as %s, skipped\n", path, files[j]);
          dup = true;
          break;
        }
        if (seen[j].st_ino && !strcmp(base_name(files[j]), base_name(path))) {
          pw_error(&d, path, "same base name as %s: their output names would collide; extract them into different directories",
                   files[j]);
          errors++;
          dup = true;
          break;
        }
      }
      if (dup) continue;
      seen[i] = st;
    }
    ptx_file *f = ptx_file_open(path, &d);
    if (!f) {
      errors++;
      continue;
    }
    errors += f->nerrors;
    extract_ctx x = {.dir = dir, .d = &d};
    if (f->input == ptx_input_cubin && !quiet)
      printf("%s: a cubin; nothing to extract\n", path);
    else
      errors += ptx_file_for_each(f, visit, &ro, dec, &d, on_module, &x);
    errors += x.errors;
    if (!quiet && f->input != ptx_input_cubin)
      printf("%s: %" PRIu64 " PTX, %" PRIu64 " cubins, %" PRIu64 " bytes\n", path, x.nptx, x.ncubin, x.bytes);
    tot_ptx += x.nptx;
    tot_cubin += x.ncubin;
    tot_bytes += x.bytes;
    ptx_file_close(f);
  }
  if (!quiet && nfiles > 1)
    printf("total: %" PRIu64 " PTX, %" PRIu64 " cubins, %" PRIu64 " bytes in %s\n", tot_ptx, tot_cubin,
           tot_bytes, dir);
  ptx_decoder_free(dec);
  free(seen);
  free(files);
  pw_diag_fini(&d);
  return errors ? 1 : 0;
}
