/* ir/ir_parse.c: reads the textual IR (.pwir) that ir_print.c writes.
 *
 * A hand-written lexer (tokens on demand, no token array) and a recursive
 * descent parser, one function per rule of the grammar in docs/ir.md; each
 * function carries its rule.  Errors are chibicc-style (pw_error_at:
 * file:line:col, the line, a caret); the first one ends the parse (a
 * longjmp back to ir_parse, which frees everything: all memory is in the
 * module's arena and a scratch arena).  No input crashes or hangs it: every
 * count read from the text is checked before it sizes anything, and every
 * loop consumes a token.
 *
 * Forward references: values (%x used before its definition, as phi
 * operands on back edges are), blocks (branches forward) and functions
 * (calls to later functions, initializers naming functions) get
 * placeholders that the definition fills in; at the end of a function
 * (values, blocks) or of the module (functions, relocations) a placeholder
 * still undefined is an error at its first use.
 *
 * What the text leaves implicit is rebuilt with the printer's own rules,
 * so print -> parse -> print is the identity: result types from
 * ir_expected_dst_type, literal types from ir_default_src_type, modifier
 * spellings resolved among the fields of the op at hand (ir_names.c), block
 * predecessors from the terminators in layout order, reordered to follow
 * the labels of the block's phis.
 *
 * Hand-written input may also: name values (%sum) and labels (loop:)
 * freely, omit `keep` on a guarded instruction (undef), omit parameter
 * offsets (CUDA's layout is computed), and put instructions before the
 * first label (an entry block is made).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ir_priv.h"
#include "util/diag.h"

/* ---- tokens ----------------------------------------------------------- */

typedef enum tok_kind {
  T_EOF, T_NL, T_WORD, T_VALUE, T_SYM, T_NUM, T_STR, T_PUNCT,
} tok_kind;

typedef struct tok {
  uint8_t kind;
  char punct;           /* T_PUNCT: the character; '>' stands for "->" */
  bool quoted;          /* T_SYM: @"..." */
  const char *s;        /* text (T_VALUE, T_SYM: after the sigil; T_STR and
                           quoted T_SYM: inside the quotes) */
  uint32_t len;
  uint32_t line, col;
} tok;

typedef struct lexer {
  const char *p, *end, *line_start;
  uint32_t line;
} lexer;

/* An untyped literal operand, typed once the instruction is known. */
typedef struct pend {
  ir_value *v;          /* a value already made, or NULL */
  uint8_t kind;         /* IR_VAL_CONST / UNDEF / SYMBOL when v == NULL */
  uint64_t bits;
  int64_t offset;
  tok name;             /* SYMBOL */
  uint32_t line, col;   /* of the literal */
} pend;

typedef struct vent {   /* a %name */
  ir_value *v;
  uint32_t line, col;   /* first use, for "undefined" errors */
} vent;

typedef struct lent {   /* a label */
  ir_block *b;
  bool defined;
  uint32_t line, col;
} lent;

typedef struct fent {   /* a function name */
  ir_func *f;
  bool defined;
  uint32_t line, col;
} fent;

typedef struct dst_spec {  /* a result named in the text */
  tok name;
  ir_type type;
  bool typed;
} dst_spec;

typedef struct phi_labels {
  ir_instr *phi;
  ir_block **labels;
  uint32_t line, col;
  struct phi_labels *next;
} phi_labels;

typedef struct fixup {  /* a relocation whose symbol is resolved at the end */
  ir_global *g;
  uint32_t reloc;
  tok name;
  struct fixup *next;
} fixup;

typedef struct parser {
  pw_diag *d;
  pw_src src;
  lexer lx;
  tok t;                /* the current token */
  jmp_buf fail;
  ir_module *m;
  pw_arena scratch;     /* the whole parse */
  pw_arena fn;          /* the function being parsed: freed at its end */
  pw_map opnames, words;  /* op names; type and modifier spellings */
  pw_map funcs, vars;   /* module scope: name -> fent, ir_global */
  fixup *fixups;
  /* the function being parsed */
  ir_func *f;
  ir_builder b;
  pw_map vals, labels, locals;  /* %name -> vent, label -> lent, @name -> ir_symbol (in fn) */
  vent **uses;          /* every vent made by a use (checked at the end; in fn) */
  uint32_t nuses, uses_cap;
  phi_labels *phis;
  /* reusable operand vectors */
  pend *ops;
  uint32_t nops, ops_cap;
  ir_block **targets;
  uint32_t ntargets, targets_cap;
  struct dst_spec *dsts;
  uint32_t dsts_cap;
} parser;

/* A word's meanings: an op is looked up in `opnames`; a dotted component
 * in `words` (ir_mod_words_init: one spelling can have several meanings,
 * lo: mulmode or cmp; and: boolop or atomop, chained). */
typedef ir_mod_word wmean;

/* ---- errors ----------------------------------------------------------- */

static _Noreturn void fail_at(parser *P, uint32_t line, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static _Noreturn void fail_at(parser *P, uint32_t line, uint32_t col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pw_verror_at(P->d, &P->src, line, col, false, fmt, ap);
  va_end(ap);
  longjmp(P->fail, 1);
}

#define FAIL(P, t, ...) fail_at((P), (t)->line, (t)->col, __VA_ARGS__)

static const char *describe(const tok *t, char *buf, size_t n) {
  switch (t->kind) {
  case T_EOF: return "end of file";
  case T_NL: return "end of line";
  case T_PUNCT:
    if (t->punct == '>') return "'->'";
    snprintf(buf, n, "'%c'", t->punct);
    return buf;
  case T_VALUE: snprintf(buf, n, "'%%%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s); return buf;
  case T_SYM: snprintf(buf, n, "'@%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s); return buf;
  case T_STR: return "a string";
  default: snprintf(buf, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->s); return buf;
  }
}

static _Noreturn void expected(parser *P, const char *what) {
  char buf[64];
  FAIL(P, &P->t, "expected %s, found %s", what, describe(&P->t, buf, sizeof buf));
}

/* ---- lexer ------------------------------------------------------------ */

static bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}
static bool is_ident(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static void lex(parser *P) {
  lexer *L = &P->lx;
  tok *t = &P->t;
  for (;;) {
    while (L->p < L->end && (*L->p == ' ' || *L->p == '\t' || *L->p == '\r')) L->p++;
    if (L->p < L->end && *L->p == ';')
      while (L->p < L->end && *L->p != '\n') L->p++;
    else
      break;
  }
  memset(t, 0, sizeof(*t));
  t->line = L->line;
  t->col = (uint32_t)(L->p - L->line_start) + 1;
  t->s = L->p;
  if (L->p >= L->end) {
    t->kind = T_EOF;
    return;
  }
  const char *p = L->p;
  char c = *p;
  if (c == '\n') {
    t->kind = T_NL;
    L->p++;
    L->line++;
    L->line_start = L->p;
    return;
  }
  if (c == '"' || (c == '@' && p + 1 < L->end && p[1] == '"')) {
    bool sym = c == '@';
    const char *q = p + (sym ? 2 : 1);
    while (q < L->end && *q != '"' && *q != '\n') q += *q == '\\' && q + 1 < L->end && q[1] != '\n' ? 2 : 1;
    if (q >= L->end || *q != '"') FAIL(P, t, "unterminated string");
    t->kind = sym ? T_SYM : T_STR;
    t->quoted = true;
    t->s = p + (sym ? 2 : 1);
    t->len = (uint32_t)(q - t->s);
    L->p = q + 1;
    return;
  }
  if (c == '%' || (c == '@' && p + 1 < L->end && is_ident_start(p[1]))) {
    const char *q = p + 1;
    while (q < L->end && (is_ident(*q) || (c == '%' && *q == '.'))) q++;
    if (q == p + 1) FAIL(P, t, "expected a name after '%%'");
    t->kind = c == '%' ? T_VALUE : T_SYM;
    t->s = p + 1;
    t->len = (uint32_t)(q - t->s);
    L->p = q;
    return;
  }
  if (is_digit(c) || (c == '-' && p + 1 < L->end && is_digit(p[1]))) {
    const char *q = p + 1;
    while (q < L->end && (is_ident(*q) || *q == '.')) q++;
    t->kind = T_NUM;
    t->len = (uint32_t)(q - p);
    L->p = q;
    return;
  }
  if (is_ident_start(c)) {
    const char *q = p + 1;
    for (;;) {
      if (q < L->end && (is_ident(*q) || *q == '.')) q++;
      else if (q + 1 < L->end && q[0] == ':' && q[1] == ':') q += 2;
      else break;
    }
    t->kind = T_WORD;
    t->len = (uint32_t)(q - p);
    L->p = q;
    return;
  }
  if (c == '-' && p + 1 < L->end && p[1] == '>') {
    t->kind = T_PUNCT;
    t->punct = '>';
    L->p += 2;
    return;
  }
  if (strchr("=,()[]{}:+!@", c)) {
    t->kind = T_PUNCT;
    t->punct = c;
    L->p++;
    return;
  }
  if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f) FAIL(P, t, "unexpected character '%c'", c);
  FAIL(P, t, "unexpected byte 0x%02x", (unsigned char)c);
}

static bool is_punct(parser *P, char c) { return P->t.kind == T_PUNCT && P->t.punct == c; }

static bool is_word(parser *P, const char *w) {
  size_t n = strlen(w);
  return P->t.kind == T_WORD && P->t.len == n && memcmp(P->t.s, w, n) == 0;
}

static bool accept(parser *P, char c) {
  if (!is_punct(P, c)) return false;
  lex(P);
  return true;
}

static void expect(parser *P, char c) {
  if (!accept(P, c)) {
    char what[8];
    snprintf(what, sizeof what, c == '>' ? "'->'" : "'%c'", c);
    expected(P, what);
  }
}

static bool accept_word(parser *P, const char *w) {
  if (!is_word(P, w)) return false;
  lex(P);
  return true;
}

static void skip_nl(parser *P) {
  while (P->t.kind == T_NL) lex(P);
}

static void expect_eol(parser *P) {
  if (P->t.kind == T_EOF) return;
  if (P->t.kind != T_NL) expected(P, "end of line");
  skip_nl(P);
}

/* A string token's (or quoted symbol's) text with escapes decoded, in the
 * module arena. */
static char *decode(parser *P, const tok *t) {
  char *out = ir_alloc(&P->m->arena, t->len + 1);
  size_t n = 0;
  for (uint32_t k = 0; k < t->len; k++) {
    char c = t->s[k];
    if (!c) fail_at(P, t->line, t->col, "NUL byte in string");
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    if (k + 1 < t->len && (t->s[k + 1] == '"' || t->s[k + 1] == '\\')) {
      out[n++] = t->s[++k];
      continue;
    }
    unsigned v = 0;
    int digits = 0;
    for (; digits < 2 && k + 1 < t->len; digits++) {
      char h = t->s[k + 1];
      unsigned d = h >= '0' && h <= '9' ? (unsigned)(h - '0')
                 : h >= 'a' && h <= 'f' ? (unsigned)(h - 'a' + 10)
                 : h >= 'A' && h <= 'F' ? (unsigned)(h - 'A' + 10) : 16u;
      if (d == 16) break;
      v = v * 16 + d;
      k++;
    }
    if (digits != 2) fail_at(P, t->line, t->col, "bad escape in string: \\ takes \" \\ or two hex digits");
    if (!v) fail_at(P, t->line, t->col, "NUL byte in string");
    out[n++] = (char)v;
  }
  out[n] = 0;
  return out;
}

/* A symbol token's name: the text itself, or decoded when quoted. */
static const char *sym_text(parser *P, const tok *t, uint32_t *len) {
  if (!t->quoted) {
    *len = t->len;
    return t->s;
  }
  char *s = decode(P, t);
  *len = (uint32_t)strlen(s);
  return s;
}

/* ---- numbers ---------------------------------------------------------- */

static int hexval(char h) {
  return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
       : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

/* number := '-'? decimal | '-'? '0x' hex | '0f' 8 hex (f32) | '0d' 16 hex (f64) */
static uint64_t number(parser *P, const tok *t) {
  if (t->kind != T_NUM) expected(P, "a number");
  const char *s = t->s, *e = t->s + t->len;
  bool neg = *s == '-';
  if (neg) s++;
  uint64_t v = 0;
  if (e - s > 2 && s[0] == '0' && (s[1] == 'f' || s[1] == 'd') && !neg) {
    int want = s[1] == 'f' ? 8 : 16;
    if (e - s != 2 + want) FAIL(P, t, "a 0%c literal has %d hex digits", s[1], want);
    for (s += 2; s < e; s++) {
      int h = hexval(*s);
      if (h < 0) FAIL(P, t, "bad hex digit '%c'", *s);
      v = v << 4 | (uint64_t)h;
    }
    return v;
  }
  if (e - s > 2 && s[0] == '0' && s[1] == 'x') {
    if (e - s > 18) FAIL(P, t, "number too large for 64 bits");
    for (s += 2; s < e; s++) {
      int h = hexval(*s);
      if (h < 0) FAIL(P, t, "bad hex digit '%c'", *s);
      v = v << 4 | (uint64_t)h;
    }
  } else {
    if (s == e) FAIL(P, t, "bad number");
    for (; s < e; s++) {
      if (!is_digit(*s)) FAIL(P, t, "bad number");
      unsigned dgt = (unsigned)(*s - '0');
      if (v > (UINT64_MAX - dgt) / 10) FAIL(P, t, "number too large for 64 bits");
      v = v * 10 + dgt;
    }
  }
  return neg ? (uint64_t)0 - v : v;
}

static uint64_t unsigned_num(parser *P, uint64_t max) {
  if (P->t.kind != T_NUM || P->t.s[0] == '-') expected(P, "an unsigned number");
  uint64_t v = number(P, &P->t);
  if (v > max) FAIL(P, &P->t, "number out of range (at most %llu)", (unsigned long long)max);
  lex(P);
  return v;
}

/* offset := ('+' number | negative-number)? */
static int64_t offset(parser *P) {
  if (accept(P, '+')) {
    if (P->t.kind != T_NUM || P->t.s[0] == '-') expected(P, "an offset");
    int64_t v = (int64_t)number(P, &P->t);
    lex(P);
    return v;
  }
  if (P->t.kind == T_NUM && P->t.s[0] == '-') {
    int64_t v = (int64_t)number(P, &P->t);
    lex(P);
    return v;
  }
  return 0;
}

/* ---- words ------------------------------------------------------------ */

static void init_words(parser *P) {
  pw_map_init(&P->opnames, &P->scratch, ir_op_count);
  for (unsigned o = 0; o < ir_op_count; o++) {
    bool found;
    const char *n = ir_op_infos[o].name;
    *pw_map_str_slot(&P->opnames, n, strlen(n), &found) = (void *)(uintptr_t)(o + 1);
  }
  ir_mod_words_init(&P->words, &P->scratch);
  ir_mod_words_add(&P->words, &P->scratch, "none", -1, ir_type_none);
}

static ir_type type_word(parser *P, const tok *t, bool *ok) {
  *ok = false;
  if (t->kind != T_WORD) return ir_type_none;
  for (const wmean *w = pw_map_str_get(&P->words, t->s, t->len); w; w = w->next)
    if (w->field < 0) {
      *ok = true;
      return (ir_type)w->value;
    }
  return ir_type_none;
}

/* type := a type name | 'none' */
static ir_type type(parser *P) {
  bool ok;
  ir_type ty = type_word(P, &P->t, &ok);
  if (!ok) expected(P, "a type");
  lex(P);
  return ty;
}

static ir_space space_of(parser *P, const tok *t, bool *ok) {
  *ok = false;
  if (t->kind != T_WORD) return IR_SPACE_GENERIC;
  if (t->len == 7 && !memcmp(t->s, "generic", 7)) {
    *ok = true;
    return IR_SPACE_GENERIC;
  }
  for (const wmean *w = pw_map_str_get(&P->words, t->s, t->len); w; w = w->next)
    if (w->field == ir_mod_space) {
      *ok = true;
      return (ir_space)w->value;
    }
  return IR_SPACE_GENERIC;
}

static ir_space space(parser *P) {
  bool ok;
  ir_space s = space_of(P, &P->t, &ok);
  if (!ok) expected(P, "a state space");
  lex(P);
  return s;
}

static bool reserved(const tok *t) {
  static const char *const kw[] = {"keep", "offset", "undef", "none", "proto", "targets", "generic"};
  for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++)
    if (t->len == strlen(kw[k]) && !memcmp(t->s, kw[k], t->len)) return true;
  return false;
}

/* mnemonic := op ('.' component)*, a component being a modifier spelling
 * of a field the op uses (longest match over up to four dotted parts, for
 * "proxy.async.shared::cta"), or a type (the first is type, the second
 * type2, then type3 and type4).  A spelling of a field the op does not use is still accepted
 * (the verifier reports it). */
static ir_op mnemonic(parser *P, ir_instr *i) {
  tok t = P->t;
  if (t.kind != T_WORD) expected(P, "an instruction");
  const char *s = t.s, *e = t.s + t.len, *dot = memchr(s, '.', t.len);
  const char *opend = dot ? dot : e;
  uintptr_t o = (uintptr_t)pw_map_str_get(&P->opnames, s, (size_t)(opend - s));
  if (!o) fail_at(P, t.line, t.col, "unknown op '%.*s'", (int)(opend - s), s);
  ir_op op = (ir_op)(o - 1);
  i->op = (uint16_t)op;
  int ntypes = 0;
  uint64_t seen = 0;
  const char *c = opend;
  while (c < e) {
    c++;  /* the dot */
    uint32_t col = t.col + (uint32_t)(c - s);
    /* Ends of the next 1..4 components. */
    const char *ends[4];
    int n = 0;
    for (const char *q = c; n < 4; q++) {
      if (q == e || *q == '.') {
        ends[n++] = q;
        if (q == e) break;
      }
    }
    if (ends[0] == c) fail_at(P, t.line, col, "empty modifier in '%.*s'", (int)t.len, t.s);
    const wmean *pick = NULL;
    int len = 0;
    for (int pass = 0; pass < 2 && !pick; pass++)
      for (int k = n; k-- > 0 && !pick;)
        for (const wmean *w = pw_map_str_get(&P->words, c, (size_t)(ends[k] - c)); w; w = w->next)
          if ((w->field < 0 && k == 0) ||
              (w->field >= 0 && (pass == 1 || ir_op_uses_mod(op, (ir_mod_field)w->field)))) {
            pick = w;
            len = k;
            break;
          }
    if (!pick)
      fail_at(P, t.line, col, "unknown modifier '.%.*s' on '%s'", (int)(ends[0] - c), c,
              ir_op_infos[op].name);
    if (pick->field < 0) {
      if (ntypes == 4) fail_at(P, t.line, col, "more than four types on '%s'", ir_op_infos[op].name);
      switch (ntypes++) {
      case 0: i->type = pick->value; break;
      case 1: i->type2 = pick->value; break;
      case 2: i->type3 = pick->value; break;
      default: i->type4 = pick->value; break;
      }
    } else {
      uint64_t bit = UINT64_C(1) << pick->field;
      if (seen & bit)
        fail_at(P, t.line, col, "modifier field '%s' given twice",
                ir_mod_field_infos[pick->field].name);
      seen |= bit;
      ir_mods_set(&i->mods, (ir_mod_field)pick->field, pick->value);
    }
    c = ends[len];
  }
  lex(P);
  return op;
}

/* ---- symbols and values ----------------------------------------------- */

static fent *func_ref(parser *P, const char *name, uint32_t len, const tok *at) {
  bool found;
  void **slot = pw_map_str_slot(&P->funcs, name, len, &found);
  if (!found) {
    fent *fe = IR_NEW(&P->scratch, fent);
    fe->f = ir_func_new_unlinked(P->m, pw_arena_strndup(&P->scratch, name, len), false);
    fe->line = at->line;
    fe->col = at->col;
    *slot = fe;
  }
  return *slot;
}

/* A symbol by name: function scope (parameters, function variables), then
 * module variables, then functions (made as forward references). */
static ir_symbol symbol(parser *P, const tok *t) {
  uint32_t len;
  const char *name = sym_text(P, t, &len);
  if (P->f) {
    ir_symbol *s = pw_map_str_get(&P->locals, name, len);
    if (s) return *s;
  }
  ir_global *g = pw_map_str_get(&P->vars, name, len);
  if (g) return ir_sym_global(g);
  return ir_sym_func(func_ref(P, name, len, t)->f);
}

static vent *value_ref(parser *P, const tok *t) {
  bool found;
  void **slot = pw_map_str_slot(&P->vals, t->s, t->len, &found);
  if (!found) {
    vent *ve = IR_NEW(&P->fn, vent);
    /* A placeholder: no id until its definition gives it one. */
    ir_value *v = IR_NEW(&P->m->arena, ir_value);
    v->id = UINT32_MAX;
    v->kind = IR_VAL_INSTR;
    ve->v = v;
    ve->line = t->line;
    ve->col = t->col;
    *slot = ve;
    if (P->nuses == P->uses_cap) {
      uint32_t cap = P->uses_cap ? P->uses_cap * 2 : 64;
      P->uses = ir_grow_array(&P->fn, P->uses, P->nuses, cap, sizeof(vent *));
      P->uses_cap = cap;
    }
    P->uses[P->nuses++] = ve;
  }
  return *slot;
}

/* Whether bits (as written: a 64-bit two's complement) fits type t
 * unsigned or signed: 255 and -1 fit u8, 256 does not; pred takes 0, 1, -1. */
static bool fits(ir_type t, uint64_t bits) {
  unsigned w = ir_type_bits(t);
  if (w == 0 || w >= 64) return true;
  uint64_t hi = bits >> w;
  return hi == 0 || (hi == (UINT64_MAX >> w) && (bits >> (w - 1)) & 1);
}

static ir_value *make_literal(parser *P, const pend *o, ir_type t) {
  switch (o->kind) {
  case IR_VAL_CONST:
    if (!fits(t, o->bits))
      fail_at(P, o->line, o->col, "literal does not fit in %s", t ? ir_type_name(t) : "none");
    return ir_imm(&P->b, t, o->bits);
  case IR_VAL_UNDEF: return ir_undef(&P->b, t);
  default: return ir_symref(&P->b, symbol(P, &o->name), o->offset, t);
  }
}

/* literal := number | 'undef' | symbol offset */
static bool literal(parser *P, pend *o) {
  memset(o, 0, sizeof(*o));
  o->line = P->t.line;
  o->col = P->t.col;
  if (P->t.kind == T_NUM) {
    o->kind = IR_VAL_CONST;
    o->bits = number(P, &P->t);
    lex(P);
  } else if (is_word(P, "undef")) {
    o->kind = IR_VAL_UNDEF;
    lex(P);
  } else if (P->t.kind == T_SYM) {
    o->kind = IR_VAL_SYMBOL;
    o->name = P->t;
    lex(P);
    o->offset = offset(P);
  } else {
    return false;
  }
  return true;
}

/* operand := '%' name | type literal | literal
 * Untyped literals stay pending (o->v NULL) until the instruction says
 * their type. */
static bool operand(parser *P, pend *o) {
  memset(o, 0, sizeof(*o));
  if (P->t.kind == T_VALUE) {
    o->v = value_ref(P, &P->t)->v;
    lex(P);
    return true;
  }
  bool ok;
  ir_type ty = type_word(P, &P->t, &ok);
  if (ok) {
    lex(P);
    if (!literal(P, o)) expected(P, "a literal after the type");
    o->v = make_literal(P, o, ty);
    return true;
  }
  return literal(P, o);
}

static ir_value *value(parser *P, ir_type expect) {
  pend o;
  if (!operand(P, &o)) expected(P, "a value");
  return o.v ? o.v : make_literal(P, &o, expect);
}

/* ---- blocks ----------------------------------------------------------- */

static lent *label_ref(parser *P, const tok *t) {
  bool found;
  void **slot = pw_map_str_slot(&P->labels, t->s, t->len, &found);
  if (!found) {
    lent *le = IR_NEW(&P->fn, lent);
    le->b = ir_block_new_unlinked(P->f, NULL);
    le->line = t->line;
    le->col = t->col;
    *slot = le;
  }
  return *slot;
}

static ir_block *label(parser *P) {
  if (P->t.kind != T_WORD || reserved(&P->t)) expected(P, "a label");
  bool ok;
  type_word(P, &P->t, &ok);
  if (ok) expected(P, "a label");
  ir_block *b = label_ref(P, &P->t)->b;
  lex(P);
  return b;
}

static void push_op(parser *P, const pend *o) {
  if (P->nops == P->ops_cap) {
    uint32_t cap = P->ops_cap ? P->ops_cap * 2 : 16;
    P->ops = ir_grow_array(&P->scratch, P->ops, P->nops, cap, sizeof(pend));
    P->ops_cap = cap;
  }
  if (P->nops >= UINT16_MAX) FAIL(P, &P->t, "too many operands");
  P->ops[P->nops++] = *o;
}

static void push_target(parser *P, ir_block *b) {
  if (P->ntargets == P->targets_cap) {
    uint32_t cap = P->targets_cap ? P->targets_cap * 2 : 16;
    P->targets = ir_grow_array(&P->scratch, P->targets, P->ntargets, cap, sizeof(ir_block *));
    P->targets_cap = cap;
  }
  if (P->ntargets >= UINT32_MAX / 2) FAIL(P, &P->t, "too many targets");
  P->targets[P->ntargets++] = b;
}

/* ---- instructions ----------------------------------------------------- */


static void define(parser *P, ir_instr *i, unsigned k, const dst_spec *ds) {
  ir_type t = ds->typed ? ds->type : ir_expected_dst_type(i, k);
  if (!ds->typed && t == ir_type_none)
    FAIL(P, &ds->name, "the type of result %u of '%s' must be stated (%%%.*s:type)", k,
         ir_op_infos[i->op].name, (int)ds->name.len, ds->name.s);
  bool found;
  void **slot = pw_map_str_slot(&P->vals, ds->name.s, ds->name.len, &found);
  if (!found) {
    vent *ve = IR_NEW(&P->fn, vent);
    ve->v = ir_instr_make_dst(i, k, t);
    *slot = ve;
    return;
  }
  vent *ve = *slot;
  ir_value *v = ve->v;
  if (v->id != UINT32_MAX || v->kind != IR_VAL_INSTR)
    FAIL(P, &ds->name, "value %%%.*s defined twice", (int)ds->name.len, ds->name.s);
  v->id = P->f->nvalues++;
  v->type = (uint8_t)t;
  v->def = i;
  v->index = (uint16_t)k;
  i->dst[k] = v;
}

/* call-operands := ['(' operands ')' ','] operand ',' '(' operands ')'
 *                  ['proto' string] ['targets' symbol (',' symbol)*] */
static ir_call_info *call_operands(parser *P) {
  ir_call_info *ci = IR_NEW(&P->m->arena, ir_call_info);
  pend o;
  uint32_t nret = 0, narg = 0;
  pend callee;
  bool rets = is_punct(P, '(');
  if (rets) {
    lex(P);
    push_op(P, &(pend){0});  /* the callee's slot, filled below */
    if (!is_punct(P, ')'))
      do {
        if (!operand(P, &o)) expected(P, "a return operand");
        push_op(P, &o);
        nret++;
      } while (accept(P, ','));
    expect(P, ')');
    expect(P, ',');
  }
  if (!operand(P, &callee)) expected(P, "the callee");
  if (rets) P->ops[0] = callee;
  else push_op(P, &callee);
  expect(P, ',');
  expect(P, '(');
  if (!is_punct(P, ')'))
    do {
      if (!operand(P, &o)) expected(P, "an argument");
      push_op(P, &o);
      narg++;
    } while (accept(P, ','));
  expect(P, ')');
  ci->nret = (uint16_t)nret;
  ci->narg = (uint16_t)narg;
  if (accept_word(P, "proto")) {
    if (P->t.kind != T_STR) expected(P, "the prototype's name as a string");
    ci->proto = decode(P, &P->t);
    lex(P);
  }
  if (accept_word(P, "targets")) {
    uint32_t n = 0, cap = 4;
    ir_func **fs = IR_NEW_ARRAY(&P->m->arena, ir_func *, cap);
    do {
      if (P->t.kind != T_SYM) expected(P, "a function");
      ir_symbol s = symbol(P, &P->t);
      if (s.kind != IR_SYM_FUNC) FAIL(P, &P->t, "call target is not a function");
      if (n == cap) {
        fs = ir_grow_array(&P->m->arena, fs, n, cap * 2, sizeof(ir_func *));
        cap *= 2;
      }
      if (n >= UINT32_MAX / 2) FAIL(P, &P->t, "too many call targets");
      fs[n++] = s.func;
      lex(P);
    } while (accept(P, ','));
    ci->targets = fs;
    ci->ntargets = n;
  }
  return ci;
}

/* sreg-operand := name ['.' (x|y|z|number)] */
static void sreg_operand(parser *P, ir_instr *i) {
  tok t = P->t;
  if (t.kind != T_WORD) expected(P, "a special register");
  const char *dot = NULL;
  for (uint32_t k = 0; k < t.len; k++)
    if (t.s[k] == '.') dot = t.s + k;
  size_t nlen = dot ? (size_t)(dot - t.s) : t.len;
  unsigned sr = 0;
  for (; sr < ir_sreg_count; sr++) {
    const char *n = ir_sreg_name((ir_sreg)sr);
    if (strlen(n) == nlen && !memcmp(n, t.s, nlen)) break;
  }
  if (sr == ir_sreg_count) FAIL(P, &t, "unknown special register '%.*s'", (int)nlen, t.s);
  unsigned comp = 0;
  if (dot) {
    const char *c = dot + 1, *e = t.s + t.len;
    if (e - c == 1 && *c >= 'x' && *c <= 'z') {
      comp = (unsigned)(*c - 'x');
    } else {
      if (c == e) FAIL(P, &t, "bad special register component");
      for (; c < e; c++) {
        if (!is_digit(*c) || comp > 25) FAIL(P, &t, "bad special register component");
        comp = comp * 10 + (unsigned)(*c - '0');
      }
    }
  }
  if (comp > 255) FAIL(P, &t, "bad special register component");
  i->sreg = (uint8_t)sr;
  i->sreg_comp = (uint8_t)comp;
  lex(P);
}

/* instr := [dst (',' dst)* '='] [guard] mnemonic [string] operands
 *          ['offset' number] ['keep' operand (',' operand)*]
 * dst   := '%' name [':' type]
 * guard := '@' ['!'] ('%' name | '(' operand ')')
 * operands (generic) := [item (',' item)*]
 * item  := '[' operand offset ']' | label | operand
 * phi   := '[' operand ',' label ']' (',' ...)* */
static void instr(parser *P) {
  /* Results. */
  uint32_t ndst = 0;
  if (P->t.kind == T_VALUE) {
    for (;;) {
      if (P->t.kind != T_VALUE) expected(P, "a result");
      if (ndst == P->dsts_cap) {
        uint32_t cap = P->dsts_cap ? P->dsts_cap * 2 : 8;
        P->dsts = ir_grow_array(&P->scratch, P->dsts, ndst, cap, sizeof(dst_spec));
        P->dsts_cap = cap;
      }
      dst_spec *dsts = P->dsts;
      if (ndst >= UINT16_MAX) FAIL(P, &P->t, "too many results");
      dst_spec *ds = &dsts[ndst++];
      memset(ds, 0, sizeof(*ds));
      ds->name = P->t;
      lex(P);
      if (accept(P, ':')) {
        ds->type = type(P);
        ds->typed = true;
      }
      if (!accept(P, ',')) break;
    }
    expect(P, '=');
  }
  /* Guard. */
  ir_value *guard = NULL;
  bool neg = false;
  if (accept(P, '@')) {
    neg = accept(P, '!');
    if (accept(P, '(')) {
      guard = value(P, ir_type_pred);
      expect(P, ')');
    } else {
      if (P->t.kind != T_VALUE) expected(P, "a predicate");
      guard = value_ref(P, &P->t)->v;
      lex(P);
    }
  }
  /* Op and modifiers, in a scratch instruction until the counts are known. */
  ir_instr proto;
  memset(&proto, 0, sizeof proto);
  tok at = P->t;
  ir_op op = mnemonic(P, &proto);
  const char *opaque = NULL;
  if (P->t.kind == T_STR) {
    opaque = decode(P, &P->t);
    lex(P);
  }
  P->nops = P->ntargets = 0;
  ir_call_info *ci = NULL;
  int64_t off = 0;
  pend o;
  if (op == ir_op_phi) {
    if (P->t.kind != T_NL && P->t.kind != T_EOF)
      do {
        expect(P, '[');
        if (!operand(P, &o)) expected(P, "a phi operand");
        push_op(P, &o);
        expect(P, ',');
        push_target(P, label(P));
        expect(P, ']');
      } while (accept(P, ','));
  } else if (op == ir_op_sreg) {
    sreg_operand(P, &proto);
  } else if (op == ir_op_call) {
    ci = call_operands(P);
  } else if (P->t.kind != T_NL && P->t.kind != T_EOF && !is_word(P, "keep") &&
             !is_word(P, "offset")) {
    bool addr = ir_op_has_address(op);
    do {
      if (addr && P->nops == 0 && P->ntargets == 0) {
        expect(P, '[');
        if (!operand(P, &o)) expected(P, "an address");
        off = offset(P);
        expect(P, ']');
        push_op(P, &o);
      } else if (operand(P, &o)) {
        push_op(P, &o);
      } else if (P->t.kind == T_WORD) {
        push_target(P, label(P));
      } else {
        expected(P, "an operand");
      }
    } while (accept(P, ','));
  }
  if (accept_word(P, "offset")) {
    if (P->t.kind != T_NUM) expected(P, "an offset");
    off = (int64_t)number(P, &P->t);
    lex(P);
  }

  /* Build. */
  dst_spec *dsts = P->dsts;
  ir_instr *i = ir_instr_new(&P->b, op, (ir_type)proto.type, P->nops, ndst);
  i->loc = (ir_loc){at.line, at.col};
  if (ndst) i->loc = (ir_loc){dsts[0].name.line, dsts[0].name.col};
  i->type2 = proto.type2;
  i->type3 = proto.type3;
  i->type4 = proto.type4;
  i->mods = proto.mods;
  i->sreg = proto.sreg;
  i->sreg_comp = proto.sreg_comp;
  i->opaque = opaque;
  i->offset = off;
  i->aux = ci;
  if (op == ir_op_phi) {
    phi_labels *pl = IR_NEW(&P->fn, phi_labels);
    pl->phi = i;
    pl->labels = IR_NEW_ARRAY(&P->fn, ir_block *, P->ntargets ? P->ntargets : 1);
    if (P->ntargets) memcpy(pl->labels, P->targets, P->ntargets * sizeof(ir_block *));
    pl->line = at.line;
    pl->col = at.col;
    pl->next = P->phis;
    P->phis = pl;
  } else if (P->ntargets) {
    i->ntargets = P->ntargets;
    i->targets = IR_NEW_ARRAY(&P->m->arena, ir_block *, P->ntargets);
    memcpy(i->targets, P->targets, P->ntargets * sizeof(ir_block *));
  }
  for (uint32_t k = 0; k < P->nops; k++) {
    pend *po = &P->ops[k];
    i->src[k] = po->v ? po->v : make_literal(P, po, ir_default_src_type(i, k));
  }
  for (uint32_t k = 0; k < ndst; k++) define(P, i, k, &dsts[k]);

  /* Guard and keep values. */
  if (is_word(P, "keep")) {
    if (!guard) FAIL(P, &P->t, "'keep' without a guard");
    lex(P);
    if (!ndst) FAIL(P, &P->t, "'keep' on an instruction without results");
    i->keep = IR_NEW_ARRAY(&P->m->arena, ir_value *, ndst);
    for (uint32_t k = 0; k < ndst; k++) {
      if (k) expect(P, ',');
      i->keep[k] = value(P, (ir_type)i->dst[k]->type);
    }
  }
  if (guard) {
    ir_value **keep = i->keep;
    ir_instr_set_guard(&P->b, i, guard, neg, keep);
  }
  expect_eol(P);
}

/* ---- functions -------------------------------------------------------- */

/* Orders each block's predecessors by the labels of its first phi and every
 * phi's operands by those predecessors.  preds come from the terminators
 * in layout order (ir_compute_preds_raw), so blocks without phis print
 * the same after a round trip. */
static void resolve_phis(parser *P) {
  ir_func *f = P->f;
  uint32_t n = f->nblocks;
  uint32_t *head = IR_NEW_ARRAY(&P->fn, uint32_t, n ? n : 1);
  for (uint32_t k = 0; k < n; k++) head[k] = UINT32_MAX;
  /* Phis were pushed in reverse; walk them per block in order. */
  phi_labels *rev = NULL;
  for (phi_labels *pl = P->phis, *nx; pl; pl = nx) {
    nx = pl->next;
    pl->next = rev;
    rev = pl;
  }
  ir_block *cur = NULL;
  for (phi_labels *pl = rev; pl; pl = pl->next) {
    ir_instr *phi = pl->phi;
    ir_block *b = phi->block;
    uint32_t np = b->npreds, ns = phi->nsrc;
    if (ns != np)
      fail_at(P, pl->line, pl->col, "phi has %u operands but its block has %u predecessors", ns, np);
    uint32_t *next = IR_NEW_ARRAY(&P->fn, uint32_t, np ? np : 1);
    for (uint32_t j = np; j-- > 0;) {
      uint32_t id = b->preds[j]->id;
      next[j] = head[id];
      head[id] = j;
    }
    uint32_t *slot = IR_NEW_ARRAY(&P->fn, uint32_t, ns ? ns : 1);
    for (uint32_t l = 0; l < ns; l++) {
      ir_block *lb = pl->labels[l];
      uint32_t j = lb->id < n ? head[lb->id] : UINT32_MAX;
      if (j == UINT32_MAX || b->preds[j] != lb)
        fail_at(P, pl->line, pl->col, "phi operand %u names a block that is not (or no more often) a predecessor", l);
      head[lb->id] = next[j];
      slot[l] = j;
    }
    for (uint32_t j = 0; j < np; j++) head[b->preds[j]->id] = UINT32_MAX;
    if (b != cur) {
      /* The first phi of the block fixes the order of its preds. */
      cur = b;
      if (np) memcpy(b->preds, pl->labels, np * sizeof(ir_block *));
      continue;
    }
    ir_value **src = IR_NEW_ARRAY(&P->fn, ir_value *, ns ? ns : 1);
    for (uint32_t l = 0; l < ns; l++) src[slot[l]] = phi->src[l];
    if (ns) memcpy(phi->src, src, ns * sizeof(ir_value *));
  }
}

static void end_function(parser *P) {
  ir_func *f = P->f;
  for (uint32_t k = 0; k < P->nuses; k++) {
    vent *ve = P->uses[k];
    if (ve->v->id == UINT32_MAX) fail_at(P, ve->line, ve->col, "use of an undefined value");
  }
  for (const pw_map_entry *e = NULL; (e = pw_map_next(&P->labels, e));) {
    lent *le = e->val;
    if (!le->defined)
      fail_at(P, le->line, le->col, "undefined label '%.*s'", (int)e->len, (const char *)e->key);
  }
  ir_compute_preds_raw(f);
  resolve_phis(P);
  P->f = NULL;
  pw_arena_free(&P->fn);
  P->uses = NULL;
  P->nuses = P->uses_cap = 0;
}

static void begin_function(parser *P, ir_func *f) {
  P->f = f;
  P->b = (ir_builder){.module = P->m, .func = f};
  pw_arena_init(&P->fn);
  pw_map_init(&P->vals, &P->fn, 64);
  pw_map_init(&P->labels, &P->fn, 16);
  pw_map_init(&P->locals, &P->fn, 16);
  P->nuses = 0;
  P->phis = NULL;
}

static void add_local(parser *P, const char *name, ir_symbol s, const tok *at) {
  bool found;
  void **slot = pw_map_str_slot(&P->locals, name, strlen(name), &found);
  if (found) FAIL(P, at, "'@%s' declared twice in this function", name);
  ir_symbol *p = IR_NEW(&P->fn, ir_symbol);
  *p = s;
  *slot = p;
}

static const char *sym_name_dup(parser *P, const tok *t) {
  uint32_t len;
  const char *s = sym_text(P, t, &len);
  return pw_arena_strndup(&P->scratch, s, len);
}

/* count := '[' [number] ']' */
static uint64_t count(parser *P) {
  if (!accept(P, '[')) return 1;
  uint64_t n = 0;
  if (!is_punct(P, ']')) n = unsigned_num(P, UINT64_MAX);
  expect(P, ']');
  return n;
}

/* param := space type symbol [count] ['align' n] ['offset' n]
 *          ['ptr' space ['align' n]] ['=' '%' name] */
static void param(parser *P, ir_func *f, bool ret, bool *had_offset) {
  ir_space sp = space(P);
  ir_type ty = type(P);
  if (P->t.kind != T_SYM) expected(P, "the parameter's name");
  tok nt = P->t;
  const char *name = sym_name_dup(P, &nt);
  lex(P);
  uint64_t cnt = count(P);
  uint32_t al = 0;
  if (accept_word(P, "align")) al = (uint32_t)unsigned_num(P, UINT32_MAX);
  if ((ret ? f->nrets : f->nparams) >= UINT16_MAX) FAIL(P, &nt, "too many parameters");
  ir_param *q = ret ? ir_func_add_ret(f, name, ty, sp, al, cnt) : ir_func_add_param(f, name, ty, sp, al, cnt);
  if (accept_word(P, "offset")) {
    q->offset = unsigned_num(P, UINT64_MAX);
    *had_offset = true;
  }
  if (accept_word(P, "ptr")) {
    q->ptr_space = (uint8_t)space(P);
    if (accept_word(P, "align")) q->ptr_align = (uint32_t)unsigned_num(P, UINT32_MAX);
  }
  if (accept(P, '=')) {
    if (!q->value) FAIL(P, &P->t, "only 'reg' parameters have a value");
    if (P->t.kind != T_VALUE) expected(P, "the parameter's value");
    bool found;
    void **slot = pw_map_str_slot(&P->vals, P->t.s, P->t.len, &found);
    if (found) FAIL(P, &P->t, "value %%%.*s defined twice", (int)P->t.len, P->t.s);
    vent *ve = IR_NEW(&P->fn, vent);
    ve->v = q->value;
    *slot = ve;
    lex(P);
  }
}

static void params(parser *P, ir_func *f, bool ret, bool *had_offset) {
  expect(P, '(');
  if (!is_punct(P, ')'))
    do param(P, f, ret, had_offset);
    while (accept(P, ','));
  expect(P, ')');
}

static void triple(parser *P, uint32_t v[3]) {
  for (int k = 0; k < 3; k++) {
    if (k && !accept(P, ',')) break;
    v[k] = (uint32_t)unsigned_num(P, UINT32_MAX);
  }
}

static void var(parser *P, ir_func *owner, ir_linkage link);

/* block := label [string] ':' NL instr* */
static void body(parser *P) {
  ir_func *f = P->f;
  skip_nl(P);
  while (is_word(P, "var") || is_word(P, "visible") || is_word(P, "extern") ||
         is_word(P, "weak") || is_word(P, "common")) {
    ir_linkage link = IR_LINK_INTERNAL;
    if (!is_word(P, "var")) {
      link = is_word(P, "visible") ? IR_LINK_VISIBLE : is_word(P, "extern") ? IR_LINK_EXTERN
           : is_word(P, "weak") ? IR_LINK_WEAK : IR_LINK_COMMON;
      lex(P);
    }
    var(P, f, link);
    skip_nl(P);
  }
  while (!is_punct(P, '}')) {
    if (P->t.kind == T_EOF) expected(P, "'}'");
    /* A label is a word, the block's name as a string maybe, and ':'
     * (`opaque "spelling"` is a word and a string too). */
    if (P->t.kind == T_WORD) {
      lexer save = P->lx;
      tok word = P->t;
      lex(P);
      if (P->t.kind == T_STR) lex(P);
      bool is_label = is_punct(P, ':');
      P->lx = save;
      P->t = word;
      if (is_label) {
        ir_block *b0 = label(P);
        lent *le = pw_map_str_get(&P->labels, word.s, word.len);
        if (le->defined) FAIL(P, &word, "label '%.*s' defined twice", (int)word.len, word.s);
        le->defined = true;
        if (P->t.kind == T_STR) {
          b0->name = decode(P, &P->t);
          lex(P);
        }
        expect(P, ':');
        expect_eol(P);
        ir_block_link(b0);
        P->b.block = b0;
        continue;
      }
    }
    if (!P->b.block) {
      P->b.block = ir_block_create(f, NULL);
    }
    instr(P);
  }
  lex(P);
}

/* func := [linkage] ('kernel' | 'func') symbol '(' params ')'
 *         ['->' '(' params ')'] attr* ['{' NL var* block* '}'] NL
 * attr := 'noreturn' | 'maxntid' n,n,n | 'reqntid' n,n,n | 'minnctapersm' n
 *       | 'maxnreg' n | 'maxclusterrank' n | 'reqnctapercluster' n,n,n
 *       | 'explicitcluster' | 'pragma' string */
static void func(parser *P, ir_linkage link) {
  bool kernel = is_word(P, "kernel");
  lex(P);
  if (P->t.kind != T_SYM) expected(P, "the function's name");
  tok nt = P->t;
  uint32_t len;
  const char *name = sym_text(P, &nt, &len);
  if (pw_map_str_get(&P->vars, name, len))
    FAIL(P, &nt, "'@%.*s' is already a variable (one namespace for both)", (int)len, name);
  fent *fe = func_ref(P, name, len, &nt);
  if (fe->defined) FAIL(P, &nt, "function '@%.*s' defined twice", (int)len, name);
  fe->defined = true;
  ir_func *f = fe->f;
  f->is_kernel = kernel;
  f->linkage = (uint8_t)link;
  f->loc = (ir_loc){nt.line, nt.col};
  ir_func_link(f);
  lex(P);
  begin_function(P, f);
  bool had_offset = false;
  params(P, f, false, &had_offset);
  if (accept(P, '>')) params(P, f, true, &had_offset);
  if (!had_offset) ir_func_layout_params(f);
  for (uint32_t k = 0; k < f->nparams; k++)
    add_local(P, f->params[k].name, ir_sym_param(&f->params[k]), &nt);
  for (uint32_t k = 0; k < f->nrets; k++)
    add_local(P, f->rets[k].name, ir_sym_param(&f->rets[k]), &nt);
  for (;;) {
    if (accept_word(P, "noreturn")) f->noreturn = 1;
    else if (accept_word(P, "maxntid")) triple(P, f->maxntid);
    else if (accept_word(P, "reqntid")) triple(P, f->reqntid);
    else if (accept_word(P, "minnctapersm")) f->minnctapersm = (uint32_t)unsigned_num(P, UINT32_MAX);
    else if (accept_word(P, "maxnreg")) f->maxnreg = (uint32_t)unsigned_num(P, UINT32_MAX);
    else if (accept_word(P, "maxclusterrank")) f->maxclusterrank = (uint32_t)unsigned_num(P, UINT32_MAX);
    else if (accept_word(P, "reqnctapercluster")) triple(P, f->reqnctapercluster);
    else if (accept_word(P, "explicitcluster")) f->explicitcluster = 1;
    else if (accept_word(P, "pragma")) {
      if (P->t.kind != T_STR) expected(P, "the pragma as a string");
      if (f->npragmas == ir_phi_cap(f->npragmas) || !f->npragmas)
        f->pragmas = ir_grow_array(&P->m->arena, f->pragmas, f->npragmas,
                                   f->npragmas ? f->npragmas * 2 : 4, sizeof(char *));
      if (f->npragmas >= UINT32_MAX / 4) FAIL(P, &P->t, "too many pragmas");
      f->pragmas[f->npragmas++] = decode(P, &P->t);
      lex(P);
    } else break;
  }
  if (accept(P, '{')) {
    expect_eol(P);
    body(P);
  } else {
    f->is_decl = 1;
  }
  end_function(P);
  expect_eol(P);
}

/* ---- variables -------------------------------------------------------- */

typedef struct bytes {
  uint8_t *p;
  uint64_t n, cap;
} bytes;

static void put(parser *P, bytes *b, uint64_t v, unsigned w) {
  if (b->n + w > b->cap) {
    uint64_t cap = b->cap ? b->cap * 2 : 64;
    if (cap > (UINT64_C(1) << 34)) FAIL(P, &P->t, "initializer too large");
    b->p = ir_grow_array(&P->scratch, b->p, b->n, cap, 1);
    b->cap = cap;
  }
  for (unsigned k = 0; k < w; k++) b->p[b->n++] = (uint8_t)(v >> (8 * k));
}

/* init := '{' [item (',' item)*] '}'
 * item := [type] (number | symbol offset | 'generic' '(' symbol offset ')') */
static void init(parser *P, ir_global *g) {
  ir_type et;
  unsigned eb = ir_init_elem((ir_type)g->type, &et);
  bytes data = {0};
  ir_reloc *rel = NULL;
  uint32_t nrel = 0, rcap = 0;
  fixup *fx = NULL;
  expect(P, '{');
  skip_nl(P);
  if (!is_punct(P, '}'))
    for (;;) {
      skip_nl(P);
      unsigned w = eb;
      ir_type it = et;
      bool ok;
      ir_type pt = type_word(P, &P->t, &ok);
      if (ok) {
        unsigned bits = ir_type_bits(pt);
        if (bits == 0 || bits > 64) FAIL(P, &P->t, "initializer items are 1 to 8 bytes");
        it = pt;
        w = (bits + 7) / 8;
        lex(P);
      }
      bool generic = false;
      if (accept_word(P, "generic")) {
        generic = true;
        expect(P, '(');
      }
      if (P->t.kind == T_SYM) {
        if (w != 4 && w != 8) FAIL(P, &P->t, "an address takes 4 or 8 bytes, not %u", w);
        if (nrel == rcap) {
          rcap = rcap ? rcap * 2 : 4;
          rel = ir_grow_array(&P->scratch, rel, nrel, rcap, sizeof(ir_reloc));
        }
        if (nrel >= UINT32_MAX / 4) FAIL(P, &P->t, "too many relocations");
        ir_reloc *r = &rel[nrel];
        memset(r, 0, sizeof(*r));
        r->offset = data.n;
        r->size = (uint8_t)w;
        r->generic = generic;
        fixup *x = IR_NEW(&P->scratch, fixup);
        x->g = g;
        x->reloc = nrel++;
        x->name = P->t;
        x->next = fx;
        fx = x;
        lex(P);
        r->addend = offset(P);
        put(P, &data, 0, w);
      } else if (!generic && P->t.kind == T_NUM) {
        uint64_t v = number(P, &P->t);
        if (!fits(it, v)) FAIL(P, &P->t, "literal does not fit in %s", ir_type_name(it));
        put(P, &data, ir_mask_bits(it, v), w);
        lex(P);
      } else {
        expected(P, "an initializer item");
      }
      if (generic) expect(P, ')');
      skip_nl(P);
      if (!accept(P, ',')) break;
    }
  skip_nl(P);
  expect(P, '}');
  g->init = ir_alloc(&P->m->arena, data.n ? data.n : 1);
  if (data.n) memcpy(g->init, data.p, data.n);
  g->size = data.n;
  if (nrel) {
    g->relocs = IR_NEW_ARRAY(&P->m->arena, ir_reloc, nrel);
    memcpy(g->relocs, rel, nrel * sizeof(ir_reloc));
    g->nrelocs = nrel;
  }
  while (fx) {
    fixup *n = fx->next;
    fx->next = P->fixups;
    P->fixups = fx;
    fx = n;
  }
}

/* var := [linkage] 'var' space ['v' n] type symbol [count]
 *        ['align' n] ['ptr' space] ['size' n] ['extern_shared'] ['=' init] NL */
static void var(parser *P, ir_func *owner, ir_linkage link) {
  if (!accept_word(P, "var")) expected(P, "'var'");
  ir_space sp = space(P);
  uint32_t vec = 1;
  if (P->t.kind == T_WORD && P->t.len >= 2 && P->t.s[0] == 'v' && is_digit(P->t.s[1])) {
    vec = 0;
    for (uint32_t k = 1; k < P->t.len; k++) {
      if (!is_digit(P->t.s[k]) || vec > 100000) FAIL(P, &P->t, "bad vector width");
      vec = vec * 10 + (uint32_t)(P->t.s[k] - '0');
    }
    lex(P);
  }
  ir_type ty = type(P);
  if (P->t.kind != T_SYM) expected(P, "the variable's name");
  tok nt = P->t;
  const char *name = sym_name_dup(P, &nt);
  lex(P);
  uint64_t cnt = count(P);
  ir_global *g = ir_global_create(P->m, owner, name, sp, ty, cnt, 0);
  g->linkage = (uint8_t)link;
  g->vec = vec;
  g->loc = (ir_loc){nt.line, nt.col};
  uint64_t size = 0;
  bool has_size = false;
  for (;;) {
    if (accept_word(P, "align")) g->align = (uint32_t)unsigned_num(P, UINT32_MAX);
    else if (accept_word(P, "ptr")) g->ptr_space = (uint8_t)space(P);
    else if (accept_word(P, "size")) {
      size = unsigned_num(P, UINT64_MAX);
      has_size = true;
    } else if (accept_word(P, "extern_shared")) g->is_extern_shared = 1;
    else break;
  }
  unsigned eb = ir_type_bits(ty) ? (ir_type_bits(ty) + 7) / 8 : 1;
  g->size = has_size ? size : cnt * vec * eb;  /* may wrap for absurd counts: no allocation uses it */
  if (accept(P, '=')) {
    if (has_size) FAIL(P, &nt, "'size' and an initializer: the initializer gives the size");
    init(P, g);
  }
  if (owner) {
    add_local(P, g->name, ir_sym_global(g), &nt);
  } else {
    bool found;
    if (pw_map_str_get(&P->funcs, g->name, strlen(g->name)))
      FAIL(P, &nt, "'@%s' is already a function (one namespace for both)", g->name);
    void **slot = pw_map_str_slot(&P->vars, g->name, strlen(g->name), &found);
    if (found) FAIL(P, &nt, "variable '@%s' defined twice", g->name);
    *slot = g;
  }
  expect_eol(P);
}

/* ---- module ----------------------------------------------------------- */

/* module-line := 'module' ('ptx' version | sm_NN[a|f] | 'addr32' | 'addr64'
 *   | 'texmode_independent' | 'map_f64_to_f32' | 'debug' | 'wave' n
 *   | 'lowered' | 'target' string)* NL */
static void module_line(parser *P) {
  ir_module *m = P->m;
  lex(P);
  while (P->t.kind == T_WORD) {
    tok w = P->t;
    if (accept_word(P, "ptx")) {
      if (P->t.kind != T_NUM) expected(P, "a PTX version");
      const char *s = P->t.s, *e = s + P->t.len;
      unsigned maj = 0, min = 0;
      const char *q = s;
      while (q < e && is_digit(*q) && maj < 1000) maj = maj * 10 + (unsigned)(*q++ - '0');
      if (q + 2 != e || *q != '.' || !is_digit(q[1]) || maj >= 1000)
        FAIL(P, &P->t, "expected a version like 8.5");
      min = (unsigned)(q[1] - '0');
      m->ptx_version = (uint16_t)(maj * 10 + min);
      lex(P);
    } else if (w.len > 3 && !memcmp(w.s, "sm_", 3)) {
      unsigned sm = 0;
      uint32_t k = 3;
      while (k < w.len && is_digit(w.s[k]) && sm < 100000) sm = sm * 10 + (unsigned)(w.s[k++] - '0');
      if (k == 3 || sm > UINT16_MAX || (k < w.len && (k + 1 != w.len || (w.s[k] != 'a' && w.s[k] != 'f'))))
        FAIL(P, &w, "expected a target like sm_90a");
      m->sm = (uint16_t)sm;
      m->sm_suffix = k < w.len ? w.s[k] : 0;
      lex(P);
    } else if (accept_word(P, "addr64")) m->address_size = 64;
    else if (accept_word(P, "addr32")) m->address_size = 32;
    else if (accept_word(P, "texmode_independent")) m->texmode_independent = 1;
    else if (accept_word(P, "map_f64_to_f32")) m->map_f64_to_f32 = 1;
    else if (accept_word(P, "debug")) m->debug = 1;
    else if (accept_word(P, "wave")) m->facts.wave_size = (uint8_t)unsigned_num(P, 255);
    else if (accept_word(P, "lowered")) m->facts.lowered = 1;
    else if (accept_word(P, "target")) {
      if (P->t.kind != T_STR) expected(P, "the target as a string");
      const char *name = decode(P, &P->t);
      m->facts.target = ir_target_find(name);
      if (!m->facts.target) FAIL(P, &P->t, "unknown target \"%s\" (ir/ir_targets.def)", name);
      lex(P);
    } else FAIL(P, &w, "unknown module attribute '%.*s'", (int)w.len, w.s);
  }
  expect_eol(P);
}

static void resolve_fixups(parser *P) {
  for (fixup *x = P->fixups; x; x = x->next) {
    uint32_t len;
    const char *name = sym_text(P, &x->name, &len);
    ir_reloc *r = &x->g->relocs[x->reloc];
    ir_global *g = pw_map_str_get(&P->vars, name, len);
    fent *fe = g ? NULL : pw_map_str_get(&P->funcs, name, len);
    if (g) r->sym = ir_sym_global(g);
    else if (fe && fe->defined) r->sym = ir_sym_func(fe->f);
    else FAIL(P, &x->name, "undefined symbol '@%.*s'", (int)len, name);
  }
  for (const pw_map_entry *e = NULL; (e = pw_map_next(&P->funcs, e));) {
    fent *fe = e->val;
    if (!fe->defined)
      fail_at(P, fe->line, fe->col, "undefined symbol '@%.*s'", (int)e->len, (const char *)e->key);
  }
}

/* module := NL* [module-line] (var | func | NL)* EOF */
static void module(parser *P) {
  skip_nl(P);
  if (is_word(P, "module")) module_line(P);
  for (;;) {
    skip_nl(P);
    if (P->t.kind == T_EOF) break;
    ir_linkage link = IR_LINK_INTERNAL;
    if (accept_word(P, "visible")) link = IR_LINK_VISIBLE;
    else if (accept_word(P, "extern")) link = IR_LINK_EXTERN;
    else if (accept_word(P, "weak")) link = IR_LINK_WEAK;
    else if (accept_word(P, "common")) link = IR_LINK_COMMON;
    if (is_word(P, "var")) var(P, NULL, link);
    else if (is_word(P, "kernel") || is_word(P, "func")) func(P, link);
    else if (is_word(P, "module")) FAIL(P, &P->t, "'module' must come first");
    else expected(P, "'var', 'kernel' or 'func'");
  }
  resolve_fixups(P);
}

ir_module *ir_parse(const char *path, const char *text, size_t len, pw_diag *d) {
  parser *P = calloc(1, sizeof(parser));
  if (!P) PW_DIE("out of memory");
  P->d = d;
  P->src = (pw_src){path ? path : "<ir>", text, len};
  P->lx = (lexer){text, text + len, text, 1};
  pw_arena_init(&P->scratch);
  pw_arena_init(&P->fn);
  P->m = ir_module_create(path);
  ir_module *volatile result = NULL;
  if (!setjmp(P->fail)) {
    init_words(P);
    pw_map_init(&P->funcs, &P->scratch, 16);
    pw_map_init(&P->vars, &P->scratch, 16);
    lex(P);
    module(P);
    result = P->m;
  } else {
    ir_module_destroy(P->m);
  }
  pw_arena_free(&P->fn);
  pw_arena_free(&P->scratch);
  free(P);
  return result;
}
