/* tools/cmd_parse.c: `ptxwave parse FILE... [--print-ir] [--no-verify]`.
 *
 * Parses each PTX file into the IR, verifies it, and optionally prints it.
 * Errors go to stderr as file:line:col with the source line and a caret.
 * The exit status is 0 when every file parsed and verified, 1 otherwise,
 * 2 for bad usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ptx/ptx_parse.h"
#include "tools.h"
#include "util/diag.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave parse [--print-ir] [--no-verify] [--stats] FILE...\n"
          "\n"
          "Parses PTX files into ptxwave's SSA IR and verifies it.\n"
          "  --print-ir   print the IR of each module to stdout\n"
          "  --no-verify  skip the IR verifier\n"
          "  --stats      print instruction counts per file to stderr\n"
          "Exit status: 0 when every file parses and verifies.\n");
}

/* Reads a whole file; NULL with errno set on failure. */
static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    size_t r = fread(buf + n, 1, cap - n, f);
    n += r;
    if (n < cap) break;
    cap *= 2;
    char *nb = realloc(buf, cap);
    if (!nb) {
      free(buf);
      buf = NULL;
      break;
    }
    buf = nb;
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *len = n;
  return buf;
}

int cmd_parse(int argc, char **argv) {
  bool print = false, verify = true, stats = false;
  int nfiles = 0, failed = 0;
  for (int i = 1; i < argc; i++) {
    if (pw_is_help(argv[i])) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--print-ir")) print = true;
    else if (!strcmp(argv[i], "--no-verify")) verify = false;
    else if (!strcmp(argv[i], "--stats")) stats = true;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "ptxwave parse: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else nfiles++;
  }
  if (!nfiles) {
    usage(stderr);
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) continue;
    const char *path = argv[i];
    size_t len;
    char *text = read_file(path, &len);
    if (!text) {
      fprintf(stderr, "ptxwave parse: %s: %s\n", path, strerror(errno));
      failed++;
      continue;
    }
    pw_diag d;
    pw_diag_init(&d, stderr);
    d.max_errors = 50;
    ptx_parse_stats st;
    ir_module *m = ptx_parse(path, text, len, &d, &st);
    if (m && verify && !ir_verify(m, NULL, &d)) {
      ir_module_destroy(m);
      m = NULL;
    }
    if (stats)
      fprintf(stderr, "%s: %llu instructions, %llu kept opaque, %llu functions%s\n", path,
              (unsigned long long)st.instrs, (unsigned long long)st.opaque,
              (unsigned long long)st.funcs, m ? "" : " (failed)");
    if (!m) {
      failed++;
    } else {
      if (print) ir_print_module(stdout, m);
      ir_module_destroy(m);
    }
    pw_diag_fini(&d);
    free(text);
  }
  return failed ? 1 : 0;
}
