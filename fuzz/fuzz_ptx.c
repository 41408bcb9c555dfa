/* fuzz/fuzz_ptx.c: the PTX front end on arbitrary bytes.
 *
 * The lexer must terminate, make progress on every token and keep each
 * token inside the input; the parser must report errors or produce IR that
 * verifies -- never crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ir/ir.h"
#include "ptx/ptx_lex.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *s = (const char *)data;
  ptx_lexer lx;
  ptx_lex_init(&lx, s, size);
  ptx_tok t;
  size_t guard = 0;
  do {
    ptx_lex_next(&lx, &t);
    if (t.text < s || t.text + t.len > s + size || t.line == 0 || t.col == 0) abort();
    if (t.kind != PTX_TOK_EOF && t.len == 0) abort();
    if (++guard > size + 1) abort(); /* at least one byte per token */
  } while (t.kind != PTX_TOK_EOF);

  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 10;
  ir_module *m = ptx_parse("fuzz.ptx", s, size, &d, NULL);
  if (m) {
    if (!ir_verify(m, NULL, &d)) abort(); /* what parses must verify */
    ir_module_destroy(m);
  }
  pw_diag_fini(&d);
  return 0;
}
