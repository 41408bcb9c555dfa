/* ptx/ptx_lex.h: the PTX lexer.
 *
 * The lexer turns PTX text into tokens on demand, one call per token: no
 * token array, no allocation, nothing interned.  A token points into the
 * source text (which must outlive it) and carries its line and column.
 *
 * Token classes follow the PTX ISA, section "Syntax" (tokens):
 *   identifier   [a-zA-Z][a-zA-Z0-9_$]*  |  [_$%][a-zA-Z0-9_$]+  |  _
 *                (so %r1, %tid, $L__BB0_3, _Z6helperfi and the sink `_`)
 *   dotword      "." followed by [a-zA-Z0-9_$] characters, with embedded
 *                "::" (".global", ".v4", ".1d", ".L2::cache_hint",
 *                ".shared::cluster"): directives, types and modifiers alike
 *   integer      decimal, 0x hex, 0 octal, 0b binary, optional U suffix
 *   float        0fXXXXXXXX (f32 bits), 0dXXXXXXXXXXXXXXXX (f64 bits), and
 *                decimal with a '.' and/or an exponent (an f64 value)
 *   string       "..." with backslash escapes, on one line
 *   punctuation  { } ( ) [ ] < > , ; : @ ! | + - * / % ~ & ^ = ? and the
 *                two-character << >> <= >= == != && ||
 * Comments (// to the end of the line, and / * ... * /) and white space
 * separate tokens; a token records whether white space came before it, so
 * the parser can tell "ld.global" (one opcode) from "ld .global".
 *
 * An ill-formed token (a stray byte, an unterminated string or comment, a
 * malformed number) comes back as PTX_TOK_ERROR with a message; the lexer
 * always makes progress, so a parser that skips errors terminates.
 */
#ifndef PW_PTX_LEX_H
#define PW_PTX_LEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ptx_tok_kind {
  PTX_TOK_EOF = 0,
  PTX_TOK_ERROR,
  PTX_TOK_IDENT,    /* name, %name, $name, _ */
  PTX_TOK_DOTWORD,  /* .name (text includes the dot) */
  PTX_TOK_INT,      /* .ival, .is_unsigned for the U suffix */
  PTX_TOK_F32,      /* 0f literal: .ival holds the 32 bits */
  PTX_TOK_F64,      /* 0d literal or decimal float: .ival holds the 64 bits */
  PTX_TOK_STRING,   /* text includes the quotes; escapes left as written */
  /* punctuation: single characters */
  PTX_TOK_LBRACE, PTX_TOK_RBRACE, PTX_TOK_LPAREN, PTX_TOK_RPAREN,
  PTX_TOK_LBRACKET, PTX_TOK_RBRACKET, PTX_TOK_LT, PTX_TOK_GT,
  PTX_TOK_COMMA, PTX_TOK_SEMI, PTX_TOK_COLON, PTX_TOK_AT, PTX_TOK_BANG,
  PTX_TOK_PIPE, PTX_TOK_PLUS, PTX_TOK_MINUS, PTX_TOK_STAR, PTX_TOK_SLASH,
  PTX_TOK_PERCENT, PTX_TOK_TILDE, PTX_TOK_AMP, PTX_TOK_CARET, PTX_TOK_EQ,
  PTX_TOK_QUESTION,
  /* punctuation: two characters (constant expressions) */
  PTX_TOK_SHL, PTX_TOK_SHR, PTX_TOK_LE, PTX_TOK_GE, PTX_TOK_EQEQ, PTX_TOK_NE,
  PTX_TOK_ANDAND, PTX_TOK_OROR,
  PTX_TOK_COUNT_
} ptx_tok_kind;

enum {
  PTX_TOKF_SPACE_BEFORE = 1,   /* white space or a comment precedes the token */
  PTX_TOKF_UNSIGNED = 2,       /* integer literal with the U suffix */
  PTX_TOKF_OVERFLOW = 4,       /* integer literal does not fit in 64 bits */
};

typedef struct ptx_tok {
  const char *text;     /* into the source; not NUL-terminated */
  uint32_t len;
  uint32_t line, col;   /* 1-based; col counts bytes */
  uint8_t kind;         /* ptx_tok_kind */
  uint8_t flags;        /* PTX_TOKF_* */
  uint64_t ival;        /* INT value, F32/F64 bits */
  const char *msg;      /* PTX_TOK_ERROR: what is wrong (static string) */
} ptx_tok;

typedef struct ptx_lexer {
  const char *src, *p, *end;
  const char *line_start;
  uint32_t line;
} ptx_lexer;

void ptx_lex_init(ptx_lexer *lx, const char *text, size_t len);
/* Scans the next token into *t.  After EOF, keeps returning EOF. */
void ptx_lex_next(ptx_lexer *lx, ptx_tok *t);

/* The printable name of a token kind, for "expected X, found Y". */
const char *ptx_tok_kind_name(ptx_tok_kind k);
/* True when the token is an identifier or dotword spelled exactly s. */
static inline bool ptx_tok_is(const ptx_tok *t, const char *s, size_t n) {
  if (t->len != n) return false;
  for (size_t i = 0; i < n; i++)
    if (t->text[i] != s[i]) return false;
  return true;
}
#define PTX_TOK_IS(t, lit) ptx_tok_is((t), lit, sizeof(lit) - 1)

#endif
