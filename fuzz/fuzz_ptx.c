/* fuzz/fuzz_ptx.c: the PTX front end on arbitrary bytes.  Whatever the
 * input, the lexer must terminate, make progress on every token, and keep
 * each token inside the input with a sane position. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "ptx/ptx_lex.h"

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
  return 0;
}
