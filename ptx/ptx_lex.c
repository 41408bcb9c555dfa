/* ptx/ptx_lex.c: see ptx_lex.h.
 *
 * A byte-class table drives the scanner; each token is one pass over its
 * bytes.  Numbers are converted while they are scanned (the parser needs
 * nearly every integer's value), decimal floats through strtod on a small
 * stack copy (nvcc never writes them; hand-written PTX rarely does).
 *
 * Invariant: every call advances lx->p by at least one byte unless it
 * returns EOF, so a caller that loops until EOF terminates on any input.
 */
#include "ptx_lex.h"

#include <stdlib.h>
#include <string.h>

enum {
  C_IDSTART = 1,  /* a-z A-Z */
  C_IDCHAR = 2,   /* a-z A-Z 0-9 _ $ */
  C_DIGIT = 4,
  C_HEX = 8,
  C_SPACE = 16,   /* space, tab, \r, \v, \f (not \n) */
};

static const uint8_t cls[256] = {
#define R(lo, hi, v) [lo ... hi] = v
    R('a', 'f', C_IDSTART | C_IDCHAR | C_HEX),
    R('g', 'z', C_IDSTART | C_IDCHAR),
    R('A', 'F', C_IDSTART | C_IDCHAR | C_HEX),
    R('G', 'Z', C_IDSTART | C_IDCHAR),
    R('0', '9', C_IDCHAR | C_DIGIT | C_HEX),
    ['_'] = C_IDCHAR,
    ['$'] = C_IDCHAR,
    [' '] = C_SPACE,
    ['\t'] = C_SPACE,
    ['\r'] = C_SPACE,
    ['\v'] = C_SPACE,
    ['\f'] = C_SPACE,
#undef R
};

#define IS(c, k) (cls[(unsigned char)(c)] & (k))

void ptx_lex_init(ptx_lexer *lx, const char *text, size_t len) {
  lx->src = text;
  lx->p = text;
  lx->end = text + len;
  lx->line_start = text;
  lx->line = 1;
}

static const char *const kind_names[PTX_TOK_COUNT_] = {
    [PTX_TOK_EOF] = "end of file",
    [PTX_TOK_ERROR] = "invalid token",
    [PTX_TOK_IDENT] = "identifier",
    [PTX_TOK_DOTWORD] = "directive or modifier",
    [PTX_TOK_INT] = "integer",
    [PTX_TOK_F32] = "f32 literal",
    [PTX_TOK_F64] = "f64 literal",
    [PTX_TOK_STRING] = "string",
    [PTX_TOK_LBRACE] = "'{'", [PTX_TOK_RBRACE] = "'}'",
    [PTX_TOK_LPAREN] = "'('", [PTX_TOK_RPAREN] = "')'",
    [PTX_TOK_LBRACKET] = "'['", [PTX_TOK_RBRACKET] = "']'",
    [PTX_TOK_LT] = "'<'", [PTX_TOK_GT] = "'>'",
    [PTX_TOK_COMMA] = "','", [PTX_TOK_SEMI] = "';'", [PTX_TOK_COLON] = "':'",
    [PTX_TOK_AT] = "'@'", [PTX_TOK_BANG] = "'!'", [PTX_TOK_PIPE] = "'|'",
    [PTX_TOK_PLUS] = "'+'", [PTX_TOK_MINUS] = "'-'", [PTX_TOK_STAR] = "'*'",
    [PTX_TOK_SLASH] = "'/'", [PTX_TOK_PERCENT] = "'%'", [PTX_TOK_TILDE] = "'~'",
    [PTX_TOK_AMP] = "'&'", [PTX_TOK_CARET] = "'^'", [PTX_TOK_EQ] = "'='",
    [PTX_TOK_QUESTION] = "'?'",
    [PTX_TOK_SHL] = "'<<'", [PTX_TOK_SHR] = "'>>'", [PTX_TOK_LE] = "'<='",
    [PTX_TOK_GE] = "'>='", [PTX_TOK_EQEQ] = "'=='", [PTX_TOK_NE] = "'!='",
    [PTX_TOK_ANDAND] = "'&&'", [PTX_TOK_OROR] = "'||'",
};

const char *ptx_tok_kind_name(ptx_tok_kind k) {
  return (unsigned)k < PTX_TOK_COUNT_ && kind_names[k] ? kind_names[k] : "token";
}

/* Skips white space and comments.  Returns true when something was skipped.
 * An unterminated block comment is reported by the caller (it stops at the
 * end and sets *unterminated). */
static bool skip_space(ptx_lexer *lx, bool *unterminated, const char **ustart,
                       uint32_t *uline, uint32_t *ucol) {
  const char *p = lx->p, *end = lx->end, *start = p;
  for (;;) {
    while (p < end && IS(*p, C_SPACE)) p++;
    if (p >= end) break;
    if (*p == '\n') {
      p++;
      lx->line++;
      lx->line_start = p;
      continue;
    }
    if (*p == '/' && p + 1 < end) {
      if (p[1] == '/') {
        p += 2;
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        p = nl ? nl : end;
        continue;
      }
      if (p[1] == '*') {
        *ustart = p;
        *uline = lx->line;
        *ucol = (uint32_t)(p - lx->line_start) + 1;
        p += 2;
        for (;;) {
          if (p >= end) {
            *unterminated = true;
            break;
          }
          if (*p == '\n') {
            lx->line++;
            lx->line_start = p + 1;
          } else if (*p == '*' && p + 1 < end && p[1] == '/') {
            p += 2;
            break;
          }
          p++;
        }
        if (*unterminated) break;
        continue;
      }
    }
    break;
  }
  lx->p = p;
  return p != start;
}

static inline int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

/* Scans a number starting at p (a digit).  Sets kind, ival, flags or an
 * error message; returns the end. */
static const char *scan_number(const char *p, const char *end, ptx_tok *t) {
  const char *s = p;
  t->kind = PTX_TOK_INT;
  if (*p == '0' && p + 1 < end) {
    char c = p[1];
    if (c == 'f' || c == 'F' || c == 'd' || c == 'D') {
      /* 0fXXXXXXXX or 0dXXXXXXXXXXXXXXXX: exact bit patterns. */
      int want = (c == 'f' || c == 'F') ? 8 : 16;
      const char *q = p + 2;
      uint64_t v = 0;
      int n = 0;
      while (q < end && IS(*q, C_HEX)) {
        v = (v << 4) | (uint64_t)hexval(*q);
        q++;
        n++;
      }
      t->kind = want == 8 ? PTX_TOK_F32 : PTX_TOK_F64;
      t->ival = v;
      if (n != want || (q < end && IS(*q, C_IDCHAR))) {
        while (q < end && IS(*q, C_IDCHAR)) q++;
        t->kind = PTX_TOK_ERROR;
        t->msg = want == 8 ? "an f32 literal 0f needs exactly 8 hex digits"
                           : "an f64 literal 0d needs exactly 16 hex digits";
      }
      return q;
    }
    if (c == 'x' || c == 'X' || c == 'b' || c == 'B') {
      int shift = (c == 'x' || c == 'X') ? 4 : 1;
      const char *q = p + 2, *digits = q;
      uint64_t v = 0;
      bool ovf = false;
      while (q < end && (shift == 4 ? IS(*q, C_HEX) : (*q == '0' || *q == '1'))) {
        if (v >> (64 - shift)) ovf = true;
        v = (v << shift) | (uint64_t)hexval(*q);
        q++;
      }
      t->ival = v;
      if (ovf) t->flags |= PTX_TOKF_OVERFLOW;
      if (q < end && *q == 'U') {
        t->flags |= PTX_TOKF_UNSIGNED;
        q++;
      }
      if (q == digits || (q < end && IS(*q, C_IDCHAR))) {
        while (q < end && IS(*q, C_IDCHAR)) q++;
        t->kind = PTX_TOK_ERROR;
        t->msg = "malformed integer literal";
      }
      return q;
    }
  }
  /* Decimal or octal integer, or a decimal float. */
  const char *q = p;
  while (q < end && IS(*q, C_DIGIT)) q++;
  bool is_float = false;
  if (q < end && *q == '.' && !(q + 1 < end && IS(q[1], C_IDSTART) && q[1] != 'e' && q[1] != 'E')) {
    is_float = true;
    q++;
    while (q < end && IS(*q, C_DIGIT)) q++;
  }
  if (q < end && (*q == 'e' || *q == 'E')) {
    const char *r = q + 1;
    if (r < end && (*r == '+' || *r == '-')) r++;
    if (r < end && IS(*r, C_DIGIT)) {
      is_float = true;
      q = r;
      while (q < end && IS(*q, C_DIGIT)) q++;
    }
  }
  if (is_float) {
    char buf[80];
    size_t n = (size_t)(q - s);
    t->kind = PTX_TOK_F64;
    if (n >= sizeof buf || (q < end && IS(*q, C_IDCHAR))) {
      while (q < end && IS(*q, C_IDCHAR)) q++;
      t->kind = PTX_TOK_ERROR;
      t->msg = "malformed floating-point literal";
      return q;
    }
    memcpy(buf, s, n);
    buf[n] = 0;
    double d = strtod(buf, NULL);
    memcpy(&t->ival, &d, sizeof d);
    return q;
  }
  /* Integer: octal when it starts with 0 and has more digits. */
  bool octal = *s == '0' && q - s > 1;
  uint64_t v = 0;
  bool ovf = false, bad = false;
  for (const char *r = s; r < q; r++) {
    unsigned dgt = (unsigned)(*r - '0');
    if (octal) {
      if (dgt > 7) bad = true;
      if (v >> 61) ovf = true;
      v = (v << 3) | dgt;
    } else {
      if (v > (UINT64_MAX - dgt) / 10) ovf = true;
      v = v * 10 + dgt;
    }
  }
  t->ival = v;
  if (ovf) t->flags |= PTX_TOKF_OVERFLOW;
  if (q < end && *q == 'U') {
    t->flags |= PTX_TOKF_UNSIGNED;
    q++;
  }
  if (bad || (q < end && IS(*q, C_IDCHAR))) {
    while (q < end && IS(*q, C_IDCHAR)) q++;
    t->kind = PTX_TOK_ERROR;
    t->msg = bad ? "digit 8 or 9 in an octal literal" : "malformed integer literal";
  }
  return q;
}

void ptx_lex_next(ptx_lexer *lx, ptx_tok *t) {
  bool unterminated = false;
  const char *ustart = NULL;
  uint32_t uline = 0, ucol = 0;
  bool space = skip_space(lx, &unterminated, &ustart, &uline, &ucol);
  t->flags = space ? PTX_TOKF_SPACE_BEFORE : 0;
  t->ival = 0;
  t->msg = NULL;
  if (unterminated) {
    t->kind = PTX_TOK_ERROR;
    t->msg = "unterminated comment";
    t->text = ustart;
    t->len = 2;
    t->line = uline;
    t->col = ucol;
    return;
  }
  const char *p = lx->p, *end = lx->end;
  t->text = p;
  t->line = lx->line;
  t->col = (uint32_t)(p - lx->line_start) + 1;
  if (p >= end) {
    t->kind = PTX_TOK_EOF;
    t->len = 0;
    return;
  }
  unsigned char c = (unsigned char)*p;
  const char *q = p + 1;
  if (IS(c, C_IDSTART)) {
    while (q < end && IS(*q, C_IDCHAR)) q++;
    t->kind = PTX_TOK_IDENT;
  } else if (c == '%' || c == '$' || c == '_') {
    while (q < end && IS(*q, C_IDCHAR)) q++;
    if (q == p + 1 && c != '_') {
      t->kind = c == '%' ? PTX_TOK_PERCENT : PTX_TOK_ERROR;
      if (c == '$') t->msg = "'$' must begin a name";
    } else {
      t->kind = PTX_TOK_IDENT;
    }
  } else if (c == '.') {
    /* .name, with "::" joining parts: .L2::cache_hint */
    if (q < end && IS(*q, C_IDCHAR)) {
      for (;;) {
        while (q < end && IS(*q, C_IDCHAR)) q++;
        if (q + 2 < end && q[0] == ':' && q[1] == ':' && IS(q[2], C_IDCHAR)) {
          q += 2;
          continue;
        }
        break;
      }
      t->kind = PTX_TOK_DOTWORD;
    } else {
      t->kind = PTX_TOK_ERROR;
      t->msg = "'.' must begin a directive or modifier";
    }
  } else if (IS(c, C_DIGIT)) {
    q = scan_number(p, end, t);
  } else if (c == '"') {
    while (q < end && *q != '"' && *q != '\n') {
      if (*q == '\\' && q + 1 < end && q[1] != '\n') q++;
      q++;
    }
    if (q < end && *q == '"') {
      q++;
      t->kind = PTX_TOK_STRING;
    } else {
      t->kind = PTX_TOK_ERROR;
      t->msg = "unterminated string";
    }
  } else {
    char n = q < end ? *q : 0;
    switch (c) {
    case '{': t->kind = PTX_TOK_LBRACE; break;
    case '}': t->kind = PTX_TOK_RBRACE; break;
    case '(': t->kind = PTX_TOK_LPAREN; break;
    case ')': t->kind = PTX_TOK_RPAREN; break;
    case '[': t->kind = PTX_TOK_LBRACKET; break;
    case ']': t->kind = PTX_TOK_RBRACKET; break;
    case ',': t->kind = PTX_TOK_COMMA; break;
    case ';': t->kind = PTX_TOK_SEMI; break;
    case ':': t->kind = PTX_TOK_COLON; break;
    case '@': t->kind = PTX_TOK_AT; break;
    case '+': t->kind = PTX_TOK_PLUS; break;
    case '-': t->kind = PTX_TOK_MINUS; break;
    case '*': t->kind = PTX_TOK_STAR; break;
    case '/': t->kind = PTX_TOK_SLASH; break;
    case '~': t->kind = PTX_TOK_TILDE; break;
    case '^': t->kind = PTX_TOK_CARET; break;
    case '?': t->kind = PTX_TOK_QUESTION; break;
    case '<':
      if (n == '<') t->kind = PTX_TOK_SHL, q++;
      else if (n == '=') t->kind = PTX_TOK_LE, q++;
      else t->kind = PTX_TOK_LT;
      break;
    case '>':
      if (n == '>') t->kind = PTX_TOK_SHR, q++;
      else if (n == '=') t->kind = PTX_TOK_GE, q++;
      else t->kind = PTX_TOK_GT;
      break;
    case '=':
      if (n == '=') t->kind = PTX_TOK_EQEQ, q++;
      else t->kind = PTX_TOK_EQ;
      break;
    case '!':
      if (n == '=') t->kind = PTX_TOK_NE, q++;
      else t->kind = PTX_TOK_BANG;
      break;
    case '&':
      if (n == '&') t->kind = PTX_TOK_ANDAND, q++;
      else t->kind = PTX_TOK_AMP;
      break;
    case '|':
      if (n == '|') t->kind = PTX_TOK_OROR, q++;
      else t->kind = PTX_TOK_PIPE;
      break;
    default:
      t->kind = PTX_TOK_ERROR;
      t->msg = c == 0 ? "NUL byte in the text" : "unexpected character";
      break;
    }
  }
  lx->p = q;
  t->len = (uint32_t)(q - p);
}
