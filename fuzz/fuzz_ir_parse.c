/* fuzz/fuzz_ir_parse.c: libFuzzer target for the .pwir parser.
 *
 * Any input: the parser returns a module or an error, never crashes, hangs
 * or leaks.  Every module it returns also goes through the verifier and the
 * dominator analyses (which must take any parsed IR), and through the round
 * trip: print, parse the printed text (it must parse), print again (it must
 * be the same text); a difference aborts with both texts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "util/diag.h"

static char *print_str(const ir_module *m, size_t *len) {
  char *buf = NULL;
  FILE *f = open_memstream(&buf, len);
  if (!f) abort();
  ir_print_module(f, m);
  fclose(f);
  return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("fuzz.pwir", (const char *)data, size, &d);
  if (m) {
    ir_verify(m, &(ir_verify_options){.require_lowered = size & 1}, &d);
    ir_foreach_func(m, f) {
      ir_compute_dominators(f);
      ir_compute_post_dominators(f);
    }
    size_t l1, l2;
    char *t1 = print_str(m, &l1);
    pw_diag d2;
    pw_diag_init(&d2, NULL);
    ir_module *m2 = ir_parse("printed.pwir", t1, l1, &d2);
    if (!m2) {
      fprintf(stderr, "printed IR does not parse back:\n%s\n---\n%s\n", t1, pw_diag_text(&d2));
      abort();
    }
    char *t2 = print_str(m2, &l2);
    if (l1 != l2 || memcmp(t1, t2, l1)) {
      fprintf(stderr, "print -> parse -> print differs:\n%s\n--- reprinted:\n%s\n", t1, t2);
      abort();
    }
    free(t1);
    free(t2);
    ir_module_destroy(m2);
    pw_diag_fini(&d2);
    ir_module_destroy(m);
  }
  pw_diag_fini(&d);
  return 0;
}
