/* fuzz/fuzz_ptx.c: the PTX front end on arbitrary bytes.
 *
 * The lexer must terminate, make progress on every token and keep each
 * token inside the input; the parser must report errors or produce IR that
 * verifies -- never crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "ptx/ptx_lex.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

/* Says which invariant broke before aborting (libFuzzer's report has no
 * line numbers). */
static void fail(const char *why) {
  fprintf(stderr, "fuzz_ptx: %s\n", why);
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  ptx_lexer lx;
  ptx_lex_init(&lx, s, size);
  ptx_tok t;
  size_t guard = 0;
  do {
    ptx_lex_next(&lx, &t);
    if (t.text < s || t.text + t.len > s + size || t.line == 0 || t.col == 0) fail("token outside the input");
    if (t.kind != PTX_TOK_EOF && t.len == 0) fail("empty token");
    if (++guard > size + 1) fail("more tokens than bytes"); /* at least one byte per token */
  } while (t.kind != PTX_TOK_EOF);

  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 10;
  ir_module *m = ptx_parse("fuzz.ptx", s, size, &d, NULL);
  if (m) {
    /* what parses must verify; the verifier's report (with the IR) goes
     * to the log, so a crash found on CI can be read there */
    pw_diag v;
    pw_diag_init(&v, stderr);
    if (!ir_verify(m, NULL, &v)) fail("the parsed module does not verify");
    pw_diag_fini(&v);
    ir_module_destroy(m);
  }
  pw_diag_fini(&d);
  return 0;
}
