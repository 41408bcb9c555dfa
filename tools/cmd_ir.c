/* tools/cmd_ir.c: `ptxwave ir FILE.pwir [--verify] [--print]`: reads the
 * textual IR, verifies it, prints it back.  The FileCheck tests of ir/ run
 * through it (tests/filecheck/ir/).
 *
 * Exit status: 0 when everything asked for succeeded, 1 when parsing,
 * verification or the round trip failed, 2 on bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "tools.h"
#include "util/diag.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave ir FILE.pwir [--verify] [--require-lowered] [--print] [--locs]\n"
          "                            [--roundtrip]\n"
          "\n"
          "Reads IR in its textual form (FILE '-' is stdin).\n"
          "  --verify           check the IR's invariants; errors go to stderr\n"
          "  --require-lowered  with --verify: reject warp-level ops\n"
          "  --print            print the IR to stdout\n"
          "  --locs             with --print: each instruction's source position\n"
          "  --roundtrip        check that print -> parse -> print is the identity\n");
}

/* The whole file, NUL-terminated; NULL with a message on failure. */
static char *slurp(const char *path, size_t *len) {
  FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
  if (!f) {
    fprintf(stderr, "ptxwave ir: cannot open %s\n", path);
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  for (;;) {
    if (!buf) break;
    if (n + 1 >= cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  bool bad = ferror(f);
  if (f != stdin) fclose(f);
  if (!buf || bad) {
    fprintf(stderr, "ptxwave ir: cannot read %s\n", path);
    free(buf);
    return NULL;
  }
  buf[n] = 0;
  *len = n;
  return buf;
}

static char *print_to_string(const ir_module *m, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f) return NULL;
  ir_print_module(f, m);
  fclose(f);
  return buf;
}

static bool roundtrip(const ir_module *m, const char *path) {
  size_t l1, l2;
  char *t1 = print_to_string(m, &l1);
  pw_diag d;
  pw_diag_init(&d, stderr);
  ir_module *m2 = t1 ? ir_parse("<printed>", t1, l1, &d) : NULL;
  char *t2 = m2 ? print_to_string(m2, &l2) : NULL;
  bool ok = t2 && l1 == l2 && !memcmp(t1, t2, l1);
  if (!ok) {
    fprintf(stderr, "%s: error: print -> parse -> print differs\n", path);
    if (t2) {
      size_t k = 0;
      while (k < l1 && k < l2 && t1[k] == t2[k]) k++;
      size_t s = k > 60 ? k - 60 : 0;
      fprintf(stderr, "first difference at byte %zu:\n--- printed:\n%.*s\n--- reprinted:\n%.*s\n", k,
              (int)(k - s + 60 > l1 - s ? l1 - s : k - s + 60), t1 + s,
              (int)(k - s + 60 > l2 - s ? l2 - s : k - s + 60), t2 + s);
    }
  }
  free(t1);
  free(t2);
  ir_module_destroy(m2);
  pw_diag_fini(&d);
  return ok;
}

int cmd_ir(int argc, char **argv) {
  const char *path = NULL;
  bool verify = false, print = false, locs = false, lowered = false, rt = false;
  for (int k = 1; k < argc; k++) {
    if (cmd_is_help(argv[k])) {
      usage(stdout);
      return 0;
    } else if (!strcmp(argv[k], "--verify")) verify = true;
    else if (!strcmp(argv[k], "--print")) print = true;
    else if (!strcmp(argv[k], "--locs")) locs = true;
    else if (!strcmp(argv[k], "--require-lowered")) lowered = verify = true;
    else if (!strcmp(argv[k], "--roundtrip")) rt = true;
    else if (argv[k][0] == '-' && argv[k][1]) {
      fprintf(stderr, "ptxwave ir: unknown option %s\n", argv[k]);
      usage(stderr);
      return 2;
    } else if (path) {
      fprintf(stderr, "ptxwave ir: one file at a time\n");
      return 2;
    } else path = argv[k];
  }
  if (!path) {
    usage(stderr);
    return 2;
  }
  size_t len;
  char *text = slurp(path, &len);
  if (!text) return 1;
  pw_diag d;
  pw_diag_init(&d, stderr);
  int rc = 0;
  ir_module *m = ir_parse(strcmp(path, "-") ? path : "<stdin>", text, len, &d);
  if (!m) rc = 1;
  if (m && verify && !ir_verify(m, &(ir_verify_options){.require_lowered = lowered}, &d)) rc = 1;
  if (m && rt && !roundtrip(m, path)) rc = 1;
  if (m && print) {
    ir_print_module_opts(stdout, m, &(ir_print_options){.locs = locs});
    fflush(stdout);
  }
  ir_module_destroy(m);
  pw_diag_fini(&d);
  free(text);
  return rc;
}
