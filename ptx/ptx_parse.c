/* ptx/ptx_parse.c: the PTX parser's module level: directives, variable
 * declarations with their initializers, kernels and functions with their
 * parameters, performance directives and bodies.  Instructions are in
 * ptx_instr.c, SSA construction in ptx_ssa.c.
 *
 * Recursive descent over tokens pulled from the lexer, one token of
 * lookahead.  Each parse function carries its grammar rule (PTX ISA 9.1
 * chapters 4 "Syntax", 5 "State Spaces, Types, and Variables", 7 "Abstracting
 * the ABI" and 11 "Directives").
 *
 * Errors: a statement that goes wrong reports "expected X, found Y" and
 * unwinds (longjmp) to the statement loop, which skips to the next ';' at
 * the same brace depth and goes on; a function with errors is still parsed
 * to its end so later errors are found too.  Any error makes the result
 * NULL.  setjmp runs once per function or module loop, and again only after
 * an error, so recovery costs nothing on good input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_internal.h"

/* ---- tokens and errors ----------------------------------------------------- */

void ptx_next(ptx_parser *p) {
  if (p->has_ahead) {
    p->tok = p->ahead;
    p->has_ahead = false;
  } else {
    ptx_lex_next(&p->lx, &p->tok);
  }
  /* Lexical errors are reported where they are met; the statement fails. */
  if (p->tok.kind == PTX_TOK_ERROR) ptx_fail(p, &p->tok, "%s", p->tok.msg);
}

const ptx_tok *ptx_peek(ptx_parser *p) {
  if (!p->has_ahead) {
    ptx_lex_next(&p->lx, &p->ahead);
    p->has_ahead = true;
  }
  return &p->ahead;
}

static void verror(ptx_parser *p, const ptx_tok *t, const char *fmt, va_list ap) {
  p->errors++;
  pw_verror_at(p->diag, &p->src, t->line, t->col, false, fmt, ap);
}

void ptx_error_at(ptx_parser *p, const ptx_tok *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, t, fmt, ap);
  va_end(ap);
}

static _Noreturn void unwind(ptx_parser *p) {
  if (!p->recover) PW_DIE("parse error outside a recovery point");
  longjmp(*p->recover, 1);
}

_Noreturn void ptx_fail(ptx_parser *p, const ptx_tok *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(p, t, fmt, ap);
  va_end(ap);
  unwind(p);
}

/* Shows a token in a message: its text, cut at 40 bytes, or its kind. */
static void describe(const ptx_tok *t, char *buf, size_t n) {
  if (t->kind == PTX_TOK_EOF)
    snprintf(buf, n, "end of file");
  else if (t->kind == PTX_TOK_ERROR)
    snprintf(buf, n, "%s", t->msg ? t->msg : "invalid token");
  else
    snprintf(buf, n, "'%.*s'", (int)(t->len > 40 ? 40 : t->len), t->text);
}

_Noreturn void ptx_expected(ptx_parser *p, const char *what) {
  char found[64];
  describe(&p->tok, found, sizeof found);
  ptx_fail(p, &p->tok, "expected %s, found %s", what, found);
}

bool ptx_accept(ptx_parser *p, ptx_tok_kind k) {
  if (p->tok.kind != k) return false;
  ptx_next(p);
  return true;
}

void ptx_expect(ptx_parser *p, ptx_tok_kind k, const char *what) {
  if (p->tok.kind != k) ptx_expected(p, what ? what : ptx_tok_kind_name(k));
  ptx_next(p);
}

const char *ptx_strdup_tok(ptx_parser *p, const ptx_tok *t) {
  char *s = pw_arena_strndup(&p->m->arena, t->text, t->len);
  if (!s) ptx_oom(p);
  return s;
}

const ir_mod_word *ptx_word_of(ptx_parser *p, const ptx_tok *t) {
  if (t->len < 2 || t->text[0] != '.') return NULL;
  if (t->len > 16) return ir_mod_words_get(&p->words, t->text + 1, t->len - 1);
  uint64_t k[2] = {0, 0};
  memcpy(k, t->text, t->len);
  uint64_t h = (k[0] * 0x9E3779B97F4A7C15ull) ^ (k[1] * 0xC2B2AE3D27D4EB4Full) ^ t->len;
  uint32_t slot = (uint32_t)(h >> 55) & 511;
  if (p->modcache[slot].len == t->len && p->modcache[slot].k0 == k[0] && p->modcache[slot].k1 == k[1])
    return p->modcache[slot].w;
  const ir_mod_word *w = ir_mod_words_get(&p->words, t->text + 1, t->len - 1);
  p->modcache[slot].k0 = k[0];
  p->modcache[slot].k1 = k[1];
  p->modcache[slot].len = t->len;
  p->modcache[slot].w = w;
  return w;
}

/* Skips to just after the next ';' at this brace depth, or to a '}' that
 * closes the current one (left as the current token), or to EOF.  Lexical
 * errors met on the way are skipped silently: the statement already failed. */
static void skip_statement(ptx_parser *p) {
  int depth = 0;
  for (;;) {
    switch (p->tok.kind) {
    case PTX_TOK_EOF: return;
    case PTX_TOK_SEMI:
      if (depth == 0) {
        ptx_lex_next(&p->lx, &p->tok);
        p->has_ahead = false;
        return;
      }
      break;
    case PTX_TOK_LBRACE: depth++; break;
    case PTX_TOK_RBRACE:
      if (depth == 0) return;
      depth--;
      break;
    default: break;
    }
    if (p->has_ahead) {
      p->tok = p->ahead;
      p->has_ahead = false;
    } else {
      ptx_lex_next(&p->lx, &p->tok);
    }
  }
}

/* Skips the rest of a line-oriented directive (.loc, .file): every token on
 * the directive's line. */
static void skip_line(ptx_parser *p, uint32_t line) {
  while (p->tok.kind != PTX_TOK_EOF && p->tok.line == line) {
    if (p->has_ahead) {
      p->tok = p->ahead;
      p->has_ahead = false;
    } else {
      ptx_lex_next(&p->lx, &p->tok);
    }
  }
  if (p->tok.kind == PTX_TOK_ERROR) ptx_fail(p, &p->tok, "%s", p->tok.msg);
}

/* ---- constant expressions (4.6: C's operators and precedence) --------------- */

static int64_t expr_cond(ptx_parser *p);
static int64_t expr_unary_1(ptx_parser *p, const ptx_tok *tp);

/* primary := INT | '(' expr ')' | ('-' | '+' | '!' | '~') primary
 * Nesting is bounded (p->expr_depth): a megabyte of '(' must not
 * overflow the stack. */
static int64_t expr_unary(ptx_parser *p) {
  ptx_tok t = p->tok;
  if (++p->expr_depth > 256) ptx_fail(p, &t, "constant expression nested too deeply");
  int64_t v = expr_unary_1(p, &t);
  p->expr_depth--;
  return v;
}

static int64_t expr_unary_1(ptx_parser *p, const ptx_tok *tp) {
  ptx_tok t = *tp;
  switch (t.kind) {
  case PTX_TOK_INT:
    if (t.flags & PTX_TOKF_OVERFLOW) ptx_fail(p, &t, "integer literal does not fit in 64 bits");
    ptx_next(p);
    return (int64_t)t.ival;
  case PTX_TOK_LPAREN: {
    ptx_next(p);
    int64_t v = expr_cond(p);
    ptx_expect(p, PTX_TOK_RPAREN, "')'");
    return v;
  }
  case PTX_TOK_MINUS: ptx_next(p); return (int64_t)(0 - (uint64_t)expr_unary(p));
  case PTX_TOK_PLUS: ptx_next(p); return expr_unary(p);
  case PTX_TOK_BANG: ptx_next(p); return !expr_unary(p);
  case PTX_TOK_TILDE: ptx_next(p); return ~expr_unary(p);
  default: ptx_expected(p, "a constant expression");
  }
}

static int prec(ptx_tok_kind k) {
  switch (k) {
  case PTX_TOK_STAR: case PTX_TOK_SLASH: case PTX_TOK_PERCENT: return 10;
  case PTX_TOK_PLUS: case PTX_TOK_MINUS: return 9;
  case PTX_TOK_SHL: case PTX_TOK_SHR: return 8;
  case PTX_TOK_LT: case PTX_TOK_GT: case PTX_TOK_LE: case PTX_TOK_GE: return 7;
  case PTX_TOK_EQEQ: case PTX_TOK_NE: return 6;
  case PTX_TOK_AMP: return 5;
  case PTX_TOK_CARET: return 4;
  case PTX_TOK_PIPE: return 3;
  case PTX_TOK_ANDAND: return 2;
  case PTX_TOK_OROR: return 1;
  default: return 0;
  }
}

/* binary := unary (binop unary)*   by precedence climbing */
static int64_t expr_binary(ptx_parser *p, int min_prec) {
  int64_t l = expr_unary(p);
  for (;;) {
    ptx_tok op = p->tok;
    int pr = prec(op.kind);
    if (pr == 0 || pr < min_prec) return l;
    ptx_next(p);
    int64_t r = expr_binary(p, pr + 1);
    uint64_t ul = (uint64_t)l, ur = (uint64_t)r;
    switch (op.kind) {
    case PTX_TOK_STAR: l = (int64_t)(ul * ur); break;
    case PTX_TOK_SLASH:
    case PTX_TOK_PERCENT:
      if (r == 0) ptx_fail(p, &op, "division by zero in a constant expression");
      if (l == INT64_MIN && r == -1) l = op.kind == PTX_TOK_SLASH ? INT64_MIN : 0;
      else l = op.kind == PTX_TOK_SLASH ? l / r : l % r;
      break;
    case PTX_TOK_PLUS: l = (int64_t)(ul + ur); break;
    case PTX_TOK_MINUS: l = (int64_t)(ul - ur); break;
    case PTX_TOK_SHL: l = (int64_t)(ur >= 64 ? 0 : ul << ur); break;
    case PTX_TOK_SHR: l = ur >= 64 ? (l < 0 ? -1 : 0) : l >> ur; break;
    case PTX_TOK_LT: l = l < r; break;
    case PTX_TOK_GT: l = l > r; break;
    case PTX_TOK_LE: l = l <= r; break;
    case PTX_TOK_GE: l = l >= r; break;
    case PTX_TOK_EQEQ: l = l == r; break;
    case PTX_TOK_NE: l = l != r; break;
    case PTX_TOK_AMP: l &= r; break;
    case PTX_TOK_CARET: l ^= r; break;
    case PTX_TOK_PIPE: l |= r; break;
    case PTX_TOK_ANDAND: l = l && r; break;
    case PTX_TOK_OROR: l = l || r; break;
    default: break;
    }
  }
}

/* expr := binary ['?' expr ':' expr]   (nesting bounded like primaries) */
static int64_t expr_cond(ptx_parser *p) {
  if (++p->expr_depth > 256) ptx_fail(p, &p->tok, "constant expression nested too deeply");
  int64_t c = expr_binary(p, 1);
  if (ptx_accept(p, PTX_TOK_QUESTION)) {
    int64_t a = expr_cond(p);
    ptx_expect(p, PTX_TOK_COLON, "':'");
    int64_t b = expr_cond(p);
    c = c ? a : b;
  }
  p->expr_depth--;
  return c;
}

int64_t ptx_const_expr(ptx_parser *p) { return expr_cond(p); }

/* ---- module-scope symbols ------------------------------------------------------ */

static ptx_sym *new_sym(ptx_parser *p, ptx_sym_kind k) {
  ptx_sym *s = PW_NEW(&p->scratch, ptx_sym);
  if (!s) ptx_oom(p);
  s->kind = k;
  return s;
}

static ir_type type_of_word(const ir_mod_word *w) {
  for (; w; w = w->next)
    if (w->field < 0) return (ir_type)w->value;
  return ir_type_none;
}

/* type := .pred | .b8 ... | .f16x2 | .texref ... */
static ir_type parse_type(ptx_parser *p) {
  if (p->tok.kind != PTX_TOK_DOTWORD) ptx_expected(p, "a type");
  ir_type t = type_of_word(ptx_word_of(p, &p->tok));
  if (t == ir_type_none) ptx_expected(p, "a type");
  ptx_next(p);
  return t;
}

/* The state space a directive or .ptr attribute names (5.1): the spaces
 * of variables, not every spelling of the space field (.param::entry,
 * .reg); generic when none. */
static ir_space space_of_word(const ir_mod_word *w) {
  for (; w; w = w->next) {
    if (w->field != ir_mod_space) continue;
    switch ((ir_space)w->value) {
    case IR_SPACE_GLOBAL: case IR_SPACE_SHARED: case IR_SPACE_SHARED_CTA: case IR_SPACE_SHARED_CLUSTER:
    case IR_SPACE_LOCAL: case IR_SPACE_CONST: case IR_SPACE_PARAM: case IR_SPACE_TEX:
      return (ir_space)w->value;
    default:
      return IR_SPACE_GENERIC;
    }
  }
  return IR_SPACE_GENERIC;
}

/* .v2 .v4 .v8: the vector width, or 0. */
static unsigned vec_of_word(const ir_mod_word *w) {
  for (; w; w = w->next)
    if (w->field == ir_mod_vec && w->value > 1) return w->value;
  return 0;
}

static uint32_t parse_u32(ptx_parser *p, const char *what) {
  ptx_tok t = p->tok;
  int64_t v = ptx_const_expr(p);
  if (v < 0 || v > UINT32_MAX) ptx_fail(p, &t, "%s must be between 0 and 4294967295", what);
  return (uint32_t)v;
}

static uint32_t parse_align(ptx_parser *p) {
  ptx_tok t = p->tok;
  uint32_t a = parse_u32(p, "an alignment");
  if (a == 0 || (a & (a - 1))) ptx_fail(p, &t, "alignment %u is not a power of two", a);
  return a;
}

/* ---- initializers (5.4.4) --------------------------------------------------- */

typedef struct init_ctx {
  ir_global *g;
  ir_type elem;          /* element type */
  uint32_t esize;        /* bytes per element */
  uint64_t nelem;        /* elements written so far */
  uint64_t cap;          /* declared elements (0: unsized) */
  uint8_t *bytes;        /* scratch buffer grown as needed */
  uint64_t bytes_cap;
  ir_reloc *relocs;
  uint32_t nrelocs, relocs_cap;
} init_ctx;

static void init_put(ptx_parser *p, init_ctx *c, uint64_t bits) {
  uint64_t need = (c->nelem + 1) * c->esize;
  if (need > c->bytes_cap) {
    uint64_t cap = c->bytes_cap ? c->bytes_cap * 2 : 64;
    while (cap < need) cap *= 2;
    uint8_t *nb = pw_arena_alloc(&p->scratch, cap);
    if (!nb) ptx_oom(p);
    if (c->bytes) memcpy(nb, c->bytes, c->bytes_cap);
    c->bytes = nb;
    c->bytes_cap = cap;
  }
  for (uint32_t i = 0; i < c->esize; i++) c->bytes[c->nelem * c->esize + i] = (uint8_t)(bits >> (8 * i));
  c->nelem++;
}

static ptx_sym *lookup_global_sym(ptx_parser *p, const ptx_tok *t) {
  ptx_sym *s = NULL;
  if (p->fn) s = pw_map_str_get(&p->fsyms, t->text, t->len);
  if (!s) s = pw_map_str_get(&p->syms, t->text, t->len);
  return s;
}

static ir_symbol sym_to_ir(ptx_parser *p, const ptx_tok *t, ptx_sym *s) {
  switch (s->kind) {
  case PTX_SYM_GLOBAL: return ir_sym_global(s->global);
  case PTX_SYM_FUNC: return ir_sym_func(s->func);
  case PTX_SYM_PARAM: return ir_sym_param(s->param);
  default: ptx_fail(p, t, "'%.*s' has no address", (int)t->len, t->text);
  }
}

/* elem := [-]FLOAT | constexpr | name [('+'|'-') constexpr]
 *       | generic '(' name ')' [('+'|'-') constexpr]               */
static void init_elem(ptx_parser *p, init_ctx *c) {
  ptx_tok t = p->tok;
  ir_type_kind k = ir_type_kind_of(c->elem);
  bool neg = false;
  if (t.kind == PTX_TOK_MINUS) {
    const ptx_tok *n = ptx_peek(p);
    if (n->kind == PTX_TOK_F32 || n->kind == PTX_TOK_F64) {
      ptx_next(p);
      neg = true;
      t = p->tok;
    }
  }
  if (t.kind == PTX_TOK_F32 || t.kind == PTX_TOK_F64) {
    ptx_next(p);
    uint64_t bits = t.ival;
    double d;
    float f;
    if (t.kind == PTX_TOK_F32) {
      uint32_t u = (uint32_t)bits;
      memcpy(&f, &u, 4);
      d = f;
    } else {
      memcpy(&d, &bits, 8);
    }
    if (neg) d = -d;
    if (c->elem == ir_type_f32 || (k != IR_TK_FLOAT && c->esize == 4)) {
      if (t.kind == PTX_TOK_F32 && !neg) {
        init_put(p, c, bits);
      } else {
        f = (float)d;
        uint32_t u;
        memcpy(&u, &f, 4);
        init_put(p, c, u);
      }
    } else if (c->elem == ir_type_f64 || c->esize == 8) {
      if (t.kind == PTX_TOK_F64 && !neg) {
        init_put(p, c, bits);
      } else {
        memcpy(&bits, &d, 8);
        init_put(p, c, bits);
      }
    } else {
      ptx_fail(p, &t, "a floating-point value cannot initialize a .%s",
               ir_type_name(c->elem));
    }
    return;
  }
  if (t.kind == PTX_TOK_IDENT) {
    bool generic = false;
    ptx_tok name = t;
    ptx_next(p);
    if (PTX_TOK_IS(&t, "generic") && p->tok.kind == PTX_TOK_LPAREN) {
      ptx_next(p);
      if (p->tok.kind != PTX_TOK_IDENT) ptx_expected(p, "a variable name");
      name = p->tok;
      ptx_next(p);
      ptx_expect(p, PTX_TOK_RPAREN, "')'");
      generic = true;
    }
    ptx_sym *s = lookup_global_sym(p, &name);
    if (!s) ptx_fail(p, &name, "undeclared symbol '%.*s'", (int)name.len, name.text);
    int64_t add = 0;
    if (p->tok.kind == PTX_TOK_PLUS) {
      ptx_next(p);
      add = ptx_const_expr(p);
    } else if (p->tok.kind == PTX_TOK_MINUS) {
      ptx_next(p);
      add = -ptx_const_expr(p);
    }
    if (c->esize != 4 && c->esize != 8)
      ptx_fail(p, &name, "an address needs a 32- or 64-bit element, not .%s",
               ir_type_name(c->elem));
    if (c->nrelocs == c->relocs_cap) {
      uint32_t cap = c->relocs_cap ? c->relocs_cap * 2 : 8;
      ir_reloc *nr = PW_NEW_ARRAY(&p->scratch, ir_reloc, cap);
      if (!nr) ptx_oom(p);
      if (c->relocs) memcpy(nr, c->relocs, c->nrelocs * sizeof *nr);
      c->relocs = nr;
      c->relocs_cap = cap;
    }
    c->relocs[c->nrelocs++] = (ir_reloc){
        .offset = c->nelem * c->esize, .size = (uint8_t)c->esize, .generic = generic,
        .sym = sym_to_ir(p, &name, s), .addend = add};
    init_put(p, c, 0);
    return;
  }
  int64_t v = ptx_const_expr(p);
  if (k == IR_TK_FLOAT && c->esize == 4) {
    float f = (float)v;
    uint32_t u;
    memcpy(&u, &f, 4);
    init_put(p, c, u);
  } else if (k == IR_TK_FLOAT && c->esize == 8) {
    double d = (double)v;
    uint64_t u;
    memcpy(&u, &d, 8);
    init_put(p, c, u);
  } else {
    init_put(p, c, (uint64_t)v);
  }
}

/* init := elem | '{' init {',' init} '}'    (nested braces: array rows) */
static void init_list(ptx_parser *p, init_ctx *c, int depth) {
  if (depth > 64) ptx_fail(p, &p->tok, "initializer nested too deeply");
  if (!ptx_accept(p, PTX_TOK_LBRACE)) {
    init_elem(p, c);
    return;
  }
  if (p->tok.kind != PTX_TOK_RBRACE) {
    do init_list(p, c, depth + 1);
    while (ptx_accept(p, PTX_TOK_COMMA));
  }
  ptx_expect(p, PTX_TOK_RBRACE, "',' or '}'");
}

/* ---- variable declarations (5.4) ----------------------------------------------- */

typedef struct decl_attrs {
  ir_linkage linkage;
  bool is_extern;
  ir_space space;
  uint32_t align;
  uint32_t vec;
  uint8_t ptr_space;
  uint32_t ptr_align;
} decl_attrs;

/* Function-scope variables of sibling scopes may share a name (every
 * call sequence declares its own `.param .b32 param0`); the IR names each
 * once per function, so later ones are called param0.1, param0.2 ... (a
 * '.' no PTX name has). */
static const char *unique_local_name(ptx_parser *p, const char *nm) {
  size_t n = strlen(nm);
  pw_map_entry *e = pw_map_str_find(&p->fvars, nm, n);
  if (!e) {
    pw_map_str_put(&p->fvars, nm, n, (void *)(uintptr_t)1);
    return nm;
  }
  for (;;) {
    uintptr_t k = (uintptr_t)e->val;
    e->val = (void *)(k + 1);
    char *alt = pw_arena_alloc(&p->m->arena, n + 24);
    if (!alt) ptx_oom(p);
    snprintf(alt, n + 24, "%s.%lu", nm, (unsigned long)k);
    size_t an = strlen(alt);
    if (!pw_map_str_find(&p->fvars, alt, an)) {
      pw_map_str_put(&p->fvars, alt, an, (void *)(uintptr_t)1);
      return alt;
    }
  }
}

/* name_decl := name ['<' INT '>'] {'[' [constexpr] ']'} ['=' init]
 * One variable of a declaration (the part after the type). */
static void var_one(ptx_parser *p, const decl_attrs *a, ir_type t) {
  if (p->tok.kind != PTX_TOK_IDENT) ptx_expected(p, "a variable name");
  ptx_tok name = p->tok;
  ptx_next(p);
  uint64_t count = 1;
  bool unsized = false;
  if (p->tok.kind == PTX_TOK_LT) { /* parameterized names: %r<N> only in .reg */
    ptx_fail(p, &p->tok, "a '<N>' range is only allowed in .reg declarations");
  }
  bool dims = false;
  while (ptx_accept(p, PTX_TOK_LBRACKET)) {
    if (p->tok.kind == PTX_TOK_RBRACKET) {
      /* x[] and x[][4]: the first dimension only (ptxas 13 rejects x[4][]
       * and x[][] as syntax errors) */
      if (dims) ptx_fail(p, &p->tok, "only the first dimension of an array may be left out");
      unsized = dims = true;
      ptx_next(p);
      continue;
    }
    dims = true;
    ptx_tok at = p->tok;
    int64_t n = ptx_const_expr(p);
    if (n < 0 || (n && count > UINT64_MAX / (uint64_t)n))
      ptx_fail(p, &at, "array size out of range");
    count *= (uint64_t)n;
    ptx_expect(p, PTX_TOK_RBRACKET, "']'");
  }
  /* An unsized array is an .extern declaration (its size is another
   * module's, or the launch's for .extern .shared) or has its size from
   * its initializer (PTX ISA 5.4.3): ptxas 13 refuses any other one
   * ("Non-external variable 'x' has incomplete type"). */
  if (unsized && !a->is_extern && p->tok.kind != PTX_TOK_EQ)
    ptx_fail(p, &name, "'%.*s' is an array of unknown size: only an .extern declaration or one with an initializer may leave the size out",
             (int)name.len, name.text);
  uint32_t vec = a->vec ? a->vec : 1;
  uint32_t esize = (ir_type_bits(t) + 7) / 8;
  if (t == ir_type_pred) esize = 1;
  if (count > ((uint64_t)1 << 48) / vec / (esize ? esize : 1))
    ptx_fail(p, &name, "variable '%.*s' is too large", (int)name.len, name.text);
  ir_global *g = NULL;
  /* A re-declaration of a module variable (an .extern then its definition)
   * names the same object. */
  ptx_sym *old = p->fn ? NULL : pw_map_str_get(&p->syms, name.text, name.len);
  if (old && old->kind == PTX_SYM_GLOBAL) {
    g = old->global;
  } else {
    if (old) ptx_fail(p, &name, "'%.*s' is already declared", (int)name.len, name.text);
    const char *nm = ptx_strdup_tok(p, &name);
    if (p->fn) nm = unique_local_name(p, nm);
    g = ir_global_create(p->m, p->fn, nm, a->space, t, unsized ? 0 : count,
                         a->align ? a->align : esize * vec);
    if (!g) ptx_oom(p);
    ptx_sym *s = new_sym(p, PTX_SYM_GLOBAL);
    s->global = g;
    if (p->fn) {
      (void)ptx_declare(p, &name, name.text, name.len, s);
    } else {
      pw_map_str_put(&p->syms, name.text, name.len, s);
    }
  }
  g->linkage = a->linkage;
  g->vec = vec;
  g->size = g->count * vec * esize;  /* count counts .v2/.v4 elements */
  g->ptr_space = a->ptr_space;
  g->loc = (ir_loc){name.line, name.col};
  if (a->is_extern && a->space == IR_SPACE_SHARED && unsized) g->is_extern_shared = 1;
  if (ptx_accept(p, PTX_TOK_EQ)) {
    init_ctx c = {.g = g, .elem = t, .esize = esize, .cap = count * vec};
    if (t == ir_type_texref || t == ir_type_samplerref || t == ir_type_surfref) {
      /* { filter_mode = nearest, addr_mode_0 = wrap, ... }: sampler state
       * of the deprecated texref/samplerref globals; kept as written. */
      int depth = 0;
      do {
        if (p->tok.kind == PTX_TOK_LBRACE) depth++;
        if (p->tok.kind == PTX_TOK_RBRACE) depth--;
        if (p->tok.kind == PTX_TOK_EOF) ptx_expected(p, "'}'");
        ptx_next(p);
      } while (depth > 0);
      return;
    }
    init_list(p, &c, 0);
    if (unsized) {
      g->count = (c.nelem + vec - 1) / vec;
    } else if (c.nelem > count * vec) {
      ptx_fail(p, &name, "%llu initializers for %llu elements",
               (unsigned long long)c.nelem, (unsigned long long)(count * vec));
    }
    uint64_t size = g->count * vec * esize;
    /* The initializer's bytes are kept whole: refuse what no GPU holds
     * rather than ask for it (a fuzzer's x[1 << 40] = {0}). */
    if (size > ((uint64_t)1 << 30))
      ptx_fail(p, &name, "initialized variable '%.*s' is larger than 1 GiB", (int)name.len, name.text);
    uint8_t *bytes = pw_arena_alloc(&p->m->arena, size ? size : 1);
    if (!bytes) ptx_oom(p);
    if (c.nelem) memcpy(bytes, c.bytes, c.nelem * esize);
    g->init = bytes;
    g->size = size;
    if (c.nrelocs) {
      g->relocs = PW_NEW_ARRAY(&p->m->arena, ir_reloc, c.nrelocs);
      memcpy(g->relocs, c.relocs, c.nrelocs * sizeof *c.relocs);
      g->nrelocs = c.nrelocs;
    }
  }
}

/* var_attrs := {.align N | .v2 | .v4 | .ptr [space] [.align N]
 *              | .attribute '(' ... ')'} type                        */
static ir_type var_attrs(ptx_parser *p, decl_attrs *a) {
  for (;;) {
    if (p->tok.kind != PTX_TOK_DOTWORD) ptx_expected(p, "a type");
    const ir_mod_word *m = ptx_word_of(p, &p->tok);
    if (type_of_word(m) != ir_type_none) return parse_type(p);
    if (PTX_TOK_IS(&p->tok, ".align")) {
      ptx_next(p);
      a->align = parse_align(p);
    } else if (vec_of_word(m)) {
      a->vec = vec_of_word(m);
      ptx_next(p);
    } else if (PTX_TOK_IS(&p->tok, ".attribute")) {
      /* .attribute(.managed) / .attribute(.unified(uuid1, uuid2)) */
      ptx_next(p);
      ptx_expect(p, PTX_TOK_LPAREN, "'('");
      int depth = 1;
      while (depth > 0) {
        if (p->tok.kind == PTX_TOK_LPAREN) depth++;
        else if (p->tok.kind == PTX_TOK_RPAREN) depth--;
        else if (p->tok.kind == PTX_TOK_EOF || p->tok.kind == PTX_TOK_SEMI) ptx_expected(p, "')'");
        ptx_next(p);
      }
    } else {
      ptx_expected(p, "a type");
    }
  }
}

/* var_decl := space var_attrs name_decl {',' name_decl} ';' */
static void var_decl(ptx_parser *p, decl_attrs *a) {
  ir_type t = var_attrs(p, a);
  do var_one(p, a, t);
  while (ptx_accept(p, PTX_TOK_COMMA));
  ptx_expect(p, PTX_TOK_SEMI, "';'");
}

/* ---- functions (7, 11.3) ------------------------------------------------------ */

/* A parameter as declared, before it joins a function. */
typedef struct pdesc {
  const char *name;
  ir_type type;
  ir_space space;
  uint32_t align, ptr_align;
  uint8_t ptr_space;
  uint8_t vec;            /* .reg .v2/.v4: N components; 0 for a scalar */
  uint64_t count;         /* 0: an array of unknown size (a[]) */
  ptx_tok at;             /* the unknown size's ']' ... for its errors */
} pdesc;

typedef struct pdesc_list {
  pdesc *v;
  uint32_t n, cap;
} pdesc_list;

/* ptr_attr := .ptr [.global|.shared|.const|.local] [.align N] */
static void ptr_attr(ptx_parser *p, pdesc *d) {
  ptx_next(p);
  ir_space s = p->tok.kind == PTX_TOK_DOTWORD ? space_of_word(ptx_word_of(p, &p->tok)) : IR_SPACE_GENERIC;
  if (s != IR_SPACE_GENERIC) {
    d->ptr_space = (uint8_t)s;
    ptx_next(p);
  }
  if (PTX_TOK_IS(&p->tok, ".align")) {
    ptx_next(p);
    d->ptr_align = parse_align(p);
  }
}

/* param := (.param | .reg) {.align N | ptr_attr} type [ptr_attr]
 *          [name] {'[' INT ']'}
 * Parameters are named in definitions; prototypes may omit the name. */
static void param_decl(ptx_parser *p, pdesc *d, bool is_kernel) {
  memset(d, 0, sizeof *d);
  if (PTX_TOK_IS(&p->tok, ".param")) d->space = is_kernel ? IR_SPACE_PARAM_ENTRY : IR_SPACE_PARAM_FUNC;
  else if (PTX_TOK_IS(&p->tok, ".reg")) d->space = IR_SPACE_REG;
  else ptx_expected(p, "'.param' or '.reg'");
  ptx_next(p);
  d->type = ir_type_none;
  ptx_tok vtok = p->tok;
  while (p->tok.kind == PTX_TOK_DOTWORD) {
    const ir_mod_word *m = ptx_word_of(p, &p->tok);
    if (type_of_word(m) != ir_type_none) {
      d->type = parse_type(p);
      break;
    }
    if (PTX_TOK_IS(&p->tok, ".align")) {
      ptx_next(p);
      d->align = parse_align(p);
    } else if (PTX_TOK_IS(&p->tok, ".ptr")) {
      ptr_attr(p, d);
    } else if (vec_of_word(m)) {
      /* The PTX ISA's grammar lists vector parameters; ptxas 13 refuses
       * every .param one ("cannot be allocated in .param state space") and
       * takes .reg ones of a .func as vector registers, with reg_decl's
       * limits (.v2/.v4, no .pred, at most 128 bits). */
      vtok = p->tok;
      if (d->space != IR_SPACE_REG)
        ptx_fail(p, &p->tok, "vector parameters (.param %.*s) are not supported: ptxas 13 rejects them too",
                 (int)p->tok.len, p->tok.text);
      if (vec_of_word(m) == 8) ptx_fail(p, &p->tok, "a vector register is .v2 or .v4, not .v8");
      d->vec = (uint8_t)vec_of_word(m);
      ptx_next(p);
    } else {
      ptx_expected(p, "a parameter type");
    }
  }
  if (d->type == ir_type_none) ptx_expected(p, "a parameter type");
  if (d->vec && d->type == ir_type_pred) ptx_fail(p, &vtok, "a .pred register cannot be a vector");
  if (d->vec && ir_type_bits(d->type) * d->vec > 128)
    ptx_fail(p, &vtok, "vector register of %u x .%s exceeds 128 bits", d->vec, ir_type_name(d->type));
  /* .ptr may also follow the type: .param .u64 .ptr .global .align 16 name */
  if (PTX_TOK_IS(&p->tok, ".ptr")) ptr_attr(p, d);
  if (p->tok.kind == PTX_TOK_IDENT) {
    d->name = ptx_strdup_tok(p, &p->tok);
    ptx_next(p);
  }
  d->count = 1;
  while (ptx_accept(p, PTX_TOK_LBRACKET)) {
    ptx_tok at = p->tok;
    /* .param .b8 a[]: ptxas 13 refuses it in a kernel ("cannot be an
     * incomplete array") and takes it as a .func's last input parameter,
     * whose size is each caller's argument's (the IR's count 0);
     * func_params_check has the other rules. */
    if (p->tok.kind == PTX_TOK_RBRACKET) {
      if (is_kernel) ptx_fail(p, &at, "a kernel parameter cannot be an array of unknown size");
      if (d->count != 1) ptx_fail(p, &at, "only the first dimension of an array can be left out");
      ptx_next(p);
      /* ptxas 13: a[][2] is a syntax error */
      if (p->tok.kind == PTX_TOK_LBRACKET)
        ptx_fail(p, &p->tok, "an array parameter of unknown size has one dimension");
      d->count = 0;
      d->at = at;
      break;
    }
    int64_t n = ptx_const_expr(p);
    if (n <= 0 || (uint64_t)n > (UINT64_MAX >> 8) / d->count) ptx_fail(p, &at, "array size out of range");
    d->count *= (uint64_t)n;
    ptx_expect(p, PTX_TOK_RBRACKET, "']'");
  }
  if (d->vec && d->count != 1) ptx_fail(p, &vtok, "a vector register parameter cannot be an array");
  if (!d->count && d->space != IR_SPACE_PARAM_FUNC)
    ptx_fail(p, &d->at, "an array parameter of unknown size must be in the .param state space");
  uint32_t esize = d->type == ir_type_pred ? 1 : (ir_type_bits(d->type) + 7) / 8;
  if (!d->align) d->align = esize ? esize : 1;
}

/* A .func's parameter arrays of unknown size (a[]), as ptxas 13 takes
 * them: input parameters only ("Output parameter cannot be an incomplete
 * array"), and only the last ("Only the last input parameter can be an
 * incomplete array"); each call's argument gives the size (build_call). */
static void func_params_check(ptx_parser *p, const pdesc_list *rets, const pdesc_list *args) {
  for (uint32_t i = 0; i < rets->n; i++)
    if (!rets->v[i].count) ptx_fail(p, &rets->v[i].at, "a return parameter cannot be an array of unknown size");
  for (uint32_t i = 0; i + 1 < args->n; i++)
    if (!args->v[i].count)
      ptx_fail(p, &args->v[i].at, "only the last parameter can be an array of unknown size");
}

/* IR parameters a declared list becomes: one per scalar, N per .vN. */
static uint32_t params_flat(const pdesc_list *l) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < l->n; i++) n += l->v[i].vec ? l->v[i].vec : 1;
  return n;
}

/* params := '(' [param {',' param}] ')' */
static void param_list(ptx_parser *p, pdesc_list *l, bool is_kernel) {
  ptx_expect(p, PTX_TOK_LPAREN, "'('");
  if (p->tok.kind != PTX_TOK_RPAREN) {
    do {
      if (l->n == l->cap) {
        uint32_t cap = l->cap ? l->cap * 2 : 8;
        pdesc *nv = PW_NEW_ARRAY(&p->scratch, pdesc, cap);
        if (!nv) ptx_oom(p);
        if (l->v) memcpy(nv, l->v, l->n * sizeof *nv);
        l->v = nv;
        l->cap = cap;
      }
      param_decl(p, &l->v[l->n++], is_kernel);
    } while (ptx_accept(p, PTX_TOK_COMMA));
  }
  ptx_expect(p, PTX_TOK_RPAREN, "')'");
}

/* A vector parameter's components after the first are named NAME$y,
 * NAME$z, NAME$w in the IR: names for printing only (the body refers to a
 * register parameter by its value, func_body binds NAME to all of them). */
static void add_params(ptx_parser *p, ir_func *f, const pdesc_list *l, bool ret) {
  for (uint32_t i = 0; i < l->n; i++) {
    const pdesc *d = &l->v[i];
    for (uint32_t k = 0; k < (d->vec ? d->vec : 1u); k++) {
      const char *name = d->name;
      if (k && name) {
        size_t len = strlen(name);
        char *nm = pw_arena_alloc(&p->m->arena, len + 3);
        if (!nm) ptx_oom(p);
        memcpy(nm, name, len);
        nm[len] = '$';
        nm[len + 1] = "xyzw"[k];
        name = nm;
      }
      ir_param *prm = ret ? ir_func_add_ret(f, name, d->type, d->space, d->align, d->count)
                          : ir_func_add_param(f, name, d->type, d->space, d->align, d->count);
      if (!prm) ptx_oom(p);
      prm->ptr_space = d->ptr_space;
      prm->ptr_align = d->ptr_align;
    }
  }
}

/* The shapes of lists with a vector parameter (ptx_fshape), else NULL. */
static const ptx_fshape *params_shape(ptx_parser *p, const pdesc_list *rets, const pdesc_list *args) {
  if (params_flat(rets) == rets->n && params_flat(args) == args->n) return NULL;
  ptx_fshape *sh = PW_NEW(&p->scratch, ptx_fshape);
  uint8_t *v = pw_arena_alloc(&p->scratch, rets->n + args->n + 1);
  if (!sh || !v) ptx_oom(p);
  for (uint32_t i = 0; i < rets->n; i++) v[i] = rets->v[i].vec;
  for (uint32_t i = 0; i < args->n; i++) v[rets->n + i] = args->v[i].vec;
  sh->ret = v;
  sh->arg = v + rets->n;
  sh->nret = rets->n;
  sh->narg = args->n;
  return sh;
}

static void dims(ptx_parser *p, uint32_t out[3]) {
  out[0] = parse_u32(p, "a dimension");
  out[1] = out[2] = 1;
  if (ptx_accept(p, PTX_TOK_COMMA)) out[1] = parse_u32(p, "a dimension");
  if (ptx_accept(p, PTX_TOK_COMMA)) out[2] = parse_u32(p, "a dimension");
}

/* func_attr := .maxntid dims | .reqntid dims | .minnctapersm N | .maxnctapersm N
 *            | .maxnreg N | .noreturn | .reqnctapercluster dims
 *            | .maxclusterrank N | .explicitcluster | .blocksareclusters
 *            | .pragma STRING {',' STRING} ';'                            */
static bool func_attr(ptx_parser *p, ir_func *f) {
  if (p->tok.kind != PTX_TOK_DOTWORD) return false;
  ptx_tok t = p->tok;
  if (PTX_TOK_IS(&t, ".maxntid")) { ptx_next(p); dims(p, f->maxntid); }
  else if (PTX_TOK_IS(&t, ".reqntid")) { ptx_next(p); dims(p, f->reqntid); }
  else if (PTX_TOK_IS(&t, ".minnctapersm")) { ptx_next(p); f->minnctapersm = parse_u32(p, "a count"); }
  else if (PTX_TOK_IS(&t, ".maxnctapersm")) { ptx_next(p); (void)parse_u32(p, "a count"); }
  else if (PTX_TOK_IS(&t, ".maxnreg")) { ptx_next(p); f->maxnreg = parse_u32(p, "a count"); }
  else if (PTX_TOK_IS(&t, ".noreturn")) {
    /* PTX ISA 11.4 ".noreturn": a property of device functions; ptxas 13
     * refuses it on an .entry ("Parsing error near '.noreturn'") */
    if (f->is_kernel) ptx_fail(p, &t, "'.noreturn' applies to a .func, not to a kernel (.entry)");
    ptx_next(p);
    f->noreturn = 1;
  }
  else if (PTX_TOK_IS(&t, ".reqnctapercluster")) { ptx_next(p); dims(p, f->reqnctapercluster); }
  else if (PTX_TOK_IS(&t, ".maxclusterrank")) { ptx_next(p); f->maxclusterrank = parse_u32(p, "a count"); }
  else if (PTX_TOK_IS(&t, ".explicitcluster")) { ptx_next(p); f->explicitcluster = 1; }
  else if (PTX_TOK_IS(&t, ".blocksareclusters")) { ptx_next(p); }
  else return false;
  return true;
}

/* The array grows by doubling (its capacity is the power of two at or
 * above npragmas), so n pragmas cost O(n) memory: copying it per pragma
 * made 32k pragmas take 4 GB. */
static void add_pragma(ptx_parser *p, ir_func *f, const ptx_tok *s) {
  uint32_t n = f->npragmas;
  if ((n & (n - 1)) == 0) {  /* 0, 1, 2, 4 ...: full */
    const char **np = PW_NEW_ARRAY(&p->m->arena, const char *, n ? 2 * (size_t)n : 1);
    if (!np) ptx_oom(p);
    if (n) memcpy(np, f->pragmas, n * sizeof *np);
    f->pragmas = np;
  }
  /* without the quotes */
  f->pragmas[n] = pw_arena_strndup(&p->m->arena, s->text + 1, s->len - 2);
  f->npragmas = n + 1;
}

/* pragma := .pragma STRING {',' STRING} ';' */
static void pragma_stmt(ptx_parser *p, ir_func *f) {
  ptx_next(p);
  do {
    if (p->tok.kind != PTX_TOK_STRING) ptx_expected(p, "a string");
    if (f) add_pragma(p, f, &p->tok);
    ptx_next(p);
  } while (ptx_accept(p, PTX_TOK_COMMA));
  ptx_expect(p, PTX_TOK_SEMI, "';'");
}

/* ---- function bodies ------------------------------------------------------------- */

/* ---- scopes ---------------------------------------------------------------------
 *
 * A function's parameters and body are one scope; each '{ }' block in it
 * opens another.  The PTX ISA lets blocks declare registers and variables
 * (inline asm relies on it) without spelling out the rules, so these are
 * what ptxas 13 does on the same text (tests/filecheck/parse/scopes*.ptx):
 *   - a name may be declared once per scope, whatever it names (register,
 *     range element, variable, label, prototype, target list, parameter):
 *     `.reg .b32 %r<8>; .reg .b32 %r1;` and `L: .reg .b32 L;` are
 *     duplicates, `%r<4>` and `%r9` are not;
 *   - a block's declaration hides the enclosing scope's of the same name
 *     until the block ends, whether the outer one is a plain name or an
 *     element of a range, and whatever kind either is;
 *   - a label is visible in all of its scope, before its definition too:
 *     `{ bra L; ...  L: }` branches to the block's L even when the
 *     enclosing scope has an L; a label the block does not define is the
 *     enclosing scope's, and one no scope defines is an error.
 * Scopes get increasing ids as they open, so of two visible declarations
 * the one with the greater scope id is the inner one. */

static void scope_add(ptx_parser *p, const char *key, size_t len, ptx_sym *s, ptx_sym *outer) {
  if (p->nscope_ents == p->scope_ents_cap) {
    uint32_t cap = p->scope_ents_cap ? p->scope_ents_cap * 2 : 64;
    ptx_scope_ent *ne = PW_NEW_ARRAY(&p->fscratch, ptx_scope_ent, cap);
    if (!ne) ptx_oom(p);
    if (p->scope_ents) memcpy(ne, p->scope_ents, p->nscope_ents * sizeof *ne);
    p->scope_ents = ne;
    p->scope_ents_cap = cap;
  }
  p->scope_ents[p->nscope_ents++] = (ptx_scope_ent){key, (uint32_t)len, s, outer};
}

/* Binds key to s in the current scope, hiding any outer declaration. */
void ptx_declare(ptx_parser *p, const ptx_tok *at, const char *key, size_t len, ptx_sym *s) {
  bool found;
  void **slot = pw_map_str_slot(&p->fsyms, key, len, &found);
  ptx_sym *old = found ? *slot : NULL;
  if (old && old->scope == p->scope) {
    if (old->kind == PTX_SYM_LABEL && s->kind == PTX_SYM_LABEL)
      ptx_fail(p, at, "label '%.*s' is defined twice", (int)at->len, at->text);
    ptx_fail(p, at, "'%.*s' is already declared in this scope", (int)at->len, at->text);
  }
  s->scope = p->scope;
  *slot = s;
  scope_add(p, key, len, s, old);
}

static void scope_open(ptx_parser *p) {
  p->scope_stack[p->depth].mark = p->nscope_ents;
  p->scope_stack[p->depth].id = p->scope;
  p->depth++;
  p->scope = ++p->nscopes;
}

/* Ends the innermost block: its names go, the ranges its registers hid
 * are visible again, and each label it used but did not define binds to
 * the enclosing scope's (the block's placeholder branches on to it) or,
 * if none is visible yet, becomes the enclosing scope's own placeholder. */
static void scope_close(ptx_parser *p) {
  p->depth--;
  uint32_t mark = p->scope_stack[p->depth].mark;
  ptx_sym **open = NULL;
  uint32_t nopen = 0;
  for (uint32_t i = mark; i < p->nscope_ents; i++) {
    ptx_sym *s = p->scope_ents[i].sym;
    if (s->kind == PTX_SYM_LABEL && !p->ssa.blocks[s->blk].defined) nopen++;
  }
  if (nopen) {
    open = PW_NEW_ARRAY(&p->fscratch, ptx_sym *, nopen);
    if (!open) ptx_oom(p);
    nopen = 0;
  }
  while (p->nscope_ents > mark) {
    const ptx_scope_ent *se = &p->scope_ents[--p->nscope_ents];
    ptx_sym *s = se->sym;
    if (s->kind == PTX_SYM_REG && s->reg->shadows) s->reg->shadows->shadowed--;
    if (s->kind == PTX_SYM_LABEL && !p->ssa.blocks[s->blk].defined) open[nopen++] = s;
    /* Scopes end in the reverse order of their declarations: the name
     * denotes s now, and denotes what it hid again. */
    if (se->outer) pw_map_str_put(&p->fsyms, se->key, se->len, se->outer);
    else pw_map_str_remove(&p->fsyms, se->key, se->len);
  }
  p->scope = p->scope_stack[p->depth].id;
  p->nrcache = 0;
  /* open[] is in reverse order of first use: bind the first used first. */
  while (nopen) {
    ptx_sym *u = open[--nopen];
    ptx_blockinfo *bi = &p->ssa.blocks[u->blk];
    const ptx_tok *name = &bi->first_ref;
    ptx_sym *outer = pw_map_str_get(&p->fsyms, name->text, name->len);
    if (!outer) {
      (void)ptx_declare(p, name, name->text, name->len, u);
    } else if (outer->kind == PTX_SYM_LABEL) {
      ir_builder bb = ir_builder_at_end(bi->block);
      bb.loc = (ir_loc){name->line, name->col};
      ir_br(&bb, p->ssa.blocks[outer->blk].block);
      bi->defined = true;
    }
    /* else a register or variable of that name is visible: the label
     * stays undefined, and ptx_ssa_check_labels says so. */
  }
}

/* "%r<" and the current scope's id: the key of plainmin (11 more bytes). */
static const char *scope_key(ptx_parser *p, const char *key, size_t len) {
  char *k = pw_arena_alloc(&p->fscratch, len + 12);
  if (!k) ptx_oom(p);
  memcpy(k, key, len);
  snprintf(k + len, 12, " %010u", (unsigned)p->scope);
  return k;
}

/* A plain register whose name is a range's element name (%r1 beside
 * %r<8>): in the range's scope a duplicate (ptxas: "Duplicate definition
 * of variable"), in an inner scope it hides that element. */
static void plain_reg_vs_range(ptx_parser *p, ptx_regdecl *r, const ptx_tok *name) {
  uint32_t n = name->len, d = n;
  while (d > 1 && name->text[d - 1] >= '0' && name->text[d - 1] <= '9') d--;
  if (d == n || n - d > 9) return;
  uint32_t idx = 0;
  for (uint32_t i = d; i < n; i++) idx = idx * 10 + (uint32_t)(name->text[i] - '0');
  char *key = pw_arena_alloc(&p->fscratch, d + 1);
  if (!key) ptx_oom(p);
  memcpy(key, name->text, d);
  key[d] = '<';
  ptx_sym *rs = pw_map_str_get(&p->fsyms, key, d + 1);
  if (rs && rs->kind == PTX_SYM_REG && idx < rs->reg->count) {
    if (rs->scope == p->scope)
      ptx_fail(p, name, "'%.*s' is already declared in this scope", (int)n, name->text);
    r->shadows = rs->reg;
    rs->reg->shadowed++;
  }
  /* for a range of this prefix declared after it in this scope */
  const char *sk = scope_key(p, key, d + 1);
  bool found;
  void **min = pw_map_str_slot(&p->plainmin, sk, d + 1 + 11, &found);
  if (!found || (uintptr_t)*min > idx + 1) *min = (void *)(uintptr_t)(idx + 1);
}

/* reg_decl := .reg ['.align' N] ['.v2' | '.v4'] type reg_name {',' reg_name} ';'
 * reg_name := name ['<' INT '>']          (%r<100>: %r0 .. %r99)
 * A vector register (.reg .v4 .b32 %v; PTX ISA "Vectors") is its
 * components as consecutive scalar registers: %v.x (or .r) is the first,
 * and %v alone, where an instruction takes a vector operand, is the brace
 * list {%v.x, %v.y, %v.z, %v.w} (ptx_operand.c).  As ptxas 13 has them:
 * .v2 and .v4 only, no .pred vectors, at most 128 bits, ranges allowed
 * (%v<2>: %v0 and %v1, each a vector). */
static void reg_decl(ptx_parser *p) {
  ptx_next(p);
  uint32_t align = 0;
  if (PTX_TOK_IS(&p->tok, ".align")) {
    ptx_next(p);
    align = parse_align(p);
  }
  (void)align;
  uint8_t vec = 0;
  ptx_tok vtok = p->tok;
  if (p->tok.kind == PTX_TOK_DOTWORD) {
    unsigned w = vec_of_word(ptx_word_of(p, &p->tok));
    if (w == 8) ptx_fail(p, &p->tok, "a vector register is .v2 or .v4, not .v8");
    if (w == 2 || w == 4) {
      vec = (uint8_t)w;
      ptx_next(p);
    }
  }
  ir_type t = parse_type(p);
  if (vec && t == ir_type_pred) ptx_fail(p, &vtok, "a .pred register cannot be a vector");
  if (vec && ir_type_bits(t) * vec > 128)
    ptx_fail(p, &vtok, "vector register of %u x .%s exceeds 128 bits", vec, ir_type_name(t));
  do {
    if (p->tok.kind != PTX_TOK_IDENT) ptx_expected(p, "a register name");
    ptx_tok name = p->tok;
    ptx_next(p);
    ptx_regdecl *r = PW_NEW(&p->fscratch, ptx_regdecl);
    if (!r) ptx_oom(p);
    r->type = (uint8_t)t;
    r->vec = vec;
    if (ptx_accept(p, PTX_TOK_LT)) {
      ptx_tok at = p->tok;
      if (p->tok.kind != PTX_TOK_INT) ptx_expected(p, "a register count");
      if (p->tok.ival > (1u << 22)) ptx_fail(p, &at, "register range too large (at most 4194304)");
      r->count = (uint32_t)p->tok.ival;
      r->range = true;
      ptx_next(p);
      ptx_expect(p, PTX_TOK_GT, "'>'");
    } else {
      r->count = 1;
    }
    r->base = ptx_ssa_new_vars(p, r->count * (vec ? vec : 1), t);
    r->scope = p->scope;
    ptx_sym *s = new_sym(p, PTX_SYM_REG);
    s->reg = r;
    /* Ranges are keyed "%r<" so %r<5> and a plain %r can coexist. */
    p->nrcache = 0;
    if (r->range) {
      char *key = pw_arena_alloc(&p->fscratch, name.len + 1);
      memcpy(key, name.text, name.len);
      key[name.len] = '<';
      ptx_declare(p, &name, key, name.len + 1, s);
      /* %r1 then %r<8> in one scope: the same register twice */
      uintptr_t least = (uintptr_t)pw_map_str_get(&p->plainmin, scope_key(p, key, name.len + 1),
                                               name.len + 1 + 11);
      if (least && least - 1 < r->count)
        ptx_fail(p, &name, "'%.*s%lu' is already declared in this scope", (int)name.len, name.text,
                 (unsigned long)(least - 1));
    } else {
      plain_reg_vs_range(p, r, &name);
      ptx_declare(p, &name, name.text, name.len, s);
    }
    /* value names for messages */
    if (!r->range && !vec) p->ssa.var_name[r->base] = ptx_strdup_tok(p, &name);
  } while (ptx_accept(p, PTX_TOK_COMMA));
  ptx_expect(p, PTX_TOK_SEMI, "';'");
}

/* proto := name ':' .callprototype ['(' param ')'] '_' '(' [param {',' param}] ')'
 *          [.noreturn] ';'
 * targets := name ':' (.branchtargets | .calltargets) name {',' name} ';' */
static void label_directive(ptx_parser *p, const ptx_tok *name) {
  ptx_tok d = p->tok;
  ptx_next(p);
  if (PTX_TOK_IS(&d, ".callprototype")) {
    ptx_proto *pr = PW_NEW(&p->fscratch, ptx_proto);
    pr->name = ptx_strdup_tok(p, name);
    pdesc_list rets = {0}, args = {0};
    if (p->tok.kind == PTX_TOK_LPAREN) param_list(p, &rets, false);
    if (!(p->tok.kind == PTX_TOK_IDENT && PTX_TOK_IS(&p->tok, "_"))) ptx_expected(p, "'_'");
    ptx_next(p);
    if (p->tok.kind == PTX_TOK_LPAREN) param_list(p, &args, false);
    func_params_check(p, &rets, &args);
    if (PTX_TOK_IS(&p->tok, ".noreturn")) ptx_next(p);
    pr->nret = params_flat(&rets);
    pr->narg = params_flat(&args);
    ptx_sym *s = new_sym(p, PTX_SYM_PROTO);
    s->proto = pr;
    (void)ptx_declare(p, name, name->text, name->len, s);
    ptx_expect(p, PTX_TOK_SEMI, "';'");
    return;
  }
  if (PTX_TOK_IS(&d, ".branchtargets") || PTX_TOK_IS(&d, ".calltargets")) {
    ptx_targets *tg = PW_NEW(&p->fscratch, ptx_targets);
    tg->calls = PTX_TOK_IS(&d, ".calltargets");
    uint32_t cap = 8;
    ptx_tok *names = PW_NEW_ARRAY(&p->fscratch, ptx_tok, cap);
    do {
      if (p->tok.kind != PTX_TOK_IDENT) ptx_expected(p, "a label");
      if (tg->n == cap) {
        ptx_tok *nn = PW_NEW_ARRAY(&p->fscratch, ptx_tok, cap * 2);
        memcpy(nn, names, cap * sizeof *nn);
        names = nn;
        cap *= 2;
      }
      names[tg->n++] = p->tok;
      ptx_next(p);
    } while (ptx_accept(p, PTX_TOK_COMMA));
    tg->names = names;
    if (!tg->calls) {
      /* the labels of the scope that declares the list */
      tg->blks = PW_NEW_ARRAY(&p->fscratch, uint32_t, tg->n);
      if (!tg->blks) ptx_oom(p);
      for (uint32_t i = 0; i < tg->n; i++) tg->blks[i] = ptx_label_block(p, &names[i]);
    }
    ptx_sym *s = new_sym(p, PTX_SYM_TARGETS);
    s->targets = tg;
    (void)ptx_declare(p, name, name->text, name->len, s);
    ptx_expect(p, PTX_TOK_SEMI, "';'");
    return;
  }
  ptx_fail(p, &d, "expected '.callprototype', '.branchtargets' or '.calltargets', found '%.*s'",
           (int)d.len, d.text);
}

static void body_stmts(ptx_parser *p, int depth);

/* A label starts a block: the current one falls through into it. */
static void label_stmt(ptx_parser *p, const ptx_tok *name) {
  uint32_t blk = ptx_label_block(p, name);  /* this scope's, made if new */
  ptx_blockinfo *bi = &p->ssa.blocks[blk];
  if (bi->defined) ptx_fail(p, name, "label '%.*s' is defined twice", (int)name->len, name->text);
  bi->defined = true;
  ptx_ssa_label(p, blk, NULL);
}

/* stmt := '{' stmt* '}' | label ':' | name ':' label_directive
 *       | .reg ... | (.local|.shared|.param|.const|.global) var_decl
 *       | .pragma ... | .loc ... | .file ... | instruction           */
static void body_stmt(ptx_parser *p, int depth) {
  ptx_tok t = p->tok;
  switch (t.kind) {
  case PTX_TOK_LBRACE: {
    /* A nested scope: inline asm blocks and call sequences. */
    if (depth > 256) ptx_fail(p, &t, "scopes nested too deeply");
    ptx_next(p);
    scope_open(p);
    body_stmts(p, depth + 1);
    ptx_expect(p, PTX_TOK_RBRACE, "'}'");
    scope_close(p);
    return;
  }
  case PTX_TOK_IDENT: {
    const ptx_tok *n = ptx_peek(p);
    if (n->kind == PTX_TOK_COLON) {
      ptx_next(p);
      ptx_next(p);
      if (p->tok.kind == PTX_TOK_DOTWORD &&
          (PTX_TOK_IS(&p->tok, ".callprototype") || PTX_TOK_IS(&p->tok, ".branchtargets") ||
           PTX_TOK_IS(&p->tok, ".calltargets"))) {
        label_directive(p, &t);
        return;
      }
      label_stmt(p, &t);
      return;
    }
    ptx_parse_instruction(p);
    return;
  }
  case PTX_TOK_AT:
    ptx_parse_instruction(p);
    return;
  case PTX_TOK_DOTWORD: {
    if (PTX_TOK_IS(&t, ".reg")) {
      reg_decl(p);
      return;
    }
    if (PTX_TOK_IS(&t, ".pragma")) {
      pragma_stmt(p, p->fn);
      return;
    }
    if (PTX_TOK_IS(&t, ".loc") || PTX_TOK_IS(&t, ".file")) {
      skip_line(p, t.line);
      return;
    }
    ir_space s = space_of_word(ptx_word_of(p, &t));
    if (s != IR_SPACE_GENERIC) {
      decl_attrs a = {.space = s};
      ptx_next(p);
      var_decl(p, &a);
      return;
    }
    ptx_fail(p, &t, "unexpected directive '%.*s' in a function body", (int)t.len, t.text);
  }
  default:
    ptx_expected(p, "an instruction, a label or a declaration");
  }
}

/* Statements up to the '}' that closes this depth (left as current). */
static void body_stmts(ptx_parser *p, int depth) {
  while (p->tok.kind != PTX_TOK_RBRACE && p->tok.kind != PTX_TOK_EOF) body_stmt(p, depth);
}

/* The body of a function, with error recovery per statement. */
static void func_body(ptx_parser *p, ir_func *f, const pdesc_list *rets, const pdesc_list *args) {
  pw_arena_init(&p->fscratch);
  p->fscratch.on_oom = p->oom;
  p->fn = f;
  p->scope_ents = NULL;
  p->nscope_ents = p->scope_ents_cap = 0;
  pw_map_init(&p->fsyms, &p->fscratch, 64);
  pw_map_init(&p->fvars, &p->fscratch, 16);
  pw_map_init(&p->plainmin, &p->fscratch, 8);
  p->scope = p->nscopes = 0;
  p->nrcache = 0;
  ptx_ssa_begin_func(p);
  /* Parameters are names of the function scope.  Register parameters
   * are SSA variables, defined on entry for arguments; register return
   * parameters get consecutive variables from ret_var_base, read by ret. */
  p->ret_var_base = ptx_ssa_new_vars(p, f->nrets, ir_type_b32);
  for (uint32_t i = 0; i < f->nrets; i++) {
    p->ssa.var_type[p->ret_var_base + i] = f->rets[i].type;
    p->ssa.var_name[p->ret_var_base + i] = f->rets[i].name;
  }
  /* Declared parameter j of the list is IR parameter `first` on; a
   * vector one is N consecutive IR parameters bound to one name. */
  for (uint32_t j = 0, first = 0, nd = args->n + rets->n; j < nd; j++) {
    bool is_ret = j >= args->n;
    const pdesc *d = is_ret ? &rets->v[j - args->n] : &args->v[j];
    uint32_t ncomp = d->vec ? d->vec : 1;
    if (j == args->n) first = 0;
    uint32_t at = first;
    first += ncomp;
    ir_param *prm = is_ret ? &f->rets[at] : &f->params[at];
    if (!prm->name) continue;
    ptx_sym *s;
    if (prm->space == IR_SPACE_REG) {
      ptx_regdecl *r = PW_NEW(&p->fscratch, ptx_regdecl);
      r->type = prm->type;
      r->count = 1;
      r->vec = d->vec;
      if (is_ret) {
        r->base = p->ret_var_base + at;
      } else {
        r->base = ptx_ssa_new_vars(p, ncomp, (ir_type)prm->type);
        if (!d->vec) p->ssa.var_name[r->base] = prm->name;
        for (uint32_t k = 0; k < ncomp; k++)
          if (prm[k].value) ptx_ssa_write(p, r->base + k, prm[k].value);
      }
      s = new_sym(p, PTX_SYM_REG);
      s->reg = r;
    } else {
      s = new_sym(p, PTX_SYM_PARAM);
      s->param = prm;
    }
    /* Not ptx_declare: no statement is open to unwind to. */
    size_t len = strlen(prm->name);
    bool found;
    void **slot = pw_map_str_slot(&p->fsyms, prm->name, len, &found);
    if (found) {
      ptx_tok at = {.text = prm->name, .len = (uint32_t)len, .line = f->loc.line, .col = f->loc.col};
      ptx_error_at(p, &at, "parameter '%s' is declared twice", prm->name);
    }
    s->scope = 0;
    scope_add(p, prm->name, len, s, found ? *slot : NULL);
    *slot = s;
  }
  jmp_buf jb;
  jmp_buf *outer = p->recover;
  p->recover = &jb;
  p->depth = 0;
  if (setjmp(jb)) {
    p->expr_depth = 0;
    /* After an error: skip the statement.  A scope the error was in is
     * closed by its '}' in the loop below. */
    skip_statement(p);
  }
  for (;;) {
    if (p->tok.kind == PTX_TOK_EOF) break;
    if (p->tok.kind == PTX_TOK_RBRACE) {
      if (p->depth == 0) break;
      ptx_next(p);
      scope_close(p);
      continue;
    }
    body_stmt(p, p->depth);
  }
  p->recover = outer;
  ptx_expect(p, PTX_TOK_RBRACE, "'}'");
  ptx_ssa_check_labels(p);
  if (!p->errors) ptx_ssa_end_func(p);
  p->fn = NULL;
  pw_arena_free(&p->fscratch);
}

/* func := linkage* (.entry | .func [params]) name [params] func_attr*
 *         (';' | '{' body '}') */
static void func_decl(ptx_parser *p, ir_linkage linkage, bool is_kernel) {
  ptx_next(p); /* .entry / .func */
  /* Return parameters come before the name. */
  pdesc_list rets = {0}, args = {0};
  if (!is_kernel && p->tok.kind == PTX_TOK_LPAREN) param_list(p, &rets, false);
  if (p->tok.kind != PTX_TOK_IDENT) ptx_expected(p, "a function name");
  ptx_tok name = p->tok;
  ptx_next(p);
  if (p->tok.kind == PTX_TOK_LPAREN) param_list(p, &args, is_kernel);
  func_params_check(p, &rets, &args);
  ptx_sym *s = pw_map_str_get(&p->syms, name.text, name.len);
  ir_func *f;
  if (s && s->kind == PTX_SYM_FUNC) {
    f = s->func;
    if (f->is_kernel != is_kernel)
      ptx_fail(p, &name, "'%.*s' was declared as a%s", (int)name.len, name.text,
               f->is_kernel ? "n .entry" : " .func");
    /* A prototype seen before: the definition's parameters replace its
     * (the names may differ; the shapes must not, which the verifier of
     * calls checks). */
    f->nparams = 0;
    f->nrets = 0;
  } else {
    if (s) ptx_fail(p, &name, "'%.*s' is already declared", (int)name.len, name.text);
    f = ir_func_create(p->m, ptx_strdup_tok(p, &name), is_kernel);
    if (!f) ptx_oom(p);
    f->is_decl = 1;
    s = new_sym(p, PTX_SYM_FUNC);
    s->func = f;
    pw_map_str_put(&p->syms, name.text, name.len, s);
  }
  f->linkage = linkage;
  f->loc = (ir_loc){name.line, name.col};
  s->shape = params_shape(p, &rets, &args);
  add_params(p, f, &rets, true);
  add_params(p, f, &args, false);
  if (is_kernel) ir_func_layout_params(f);
  while (func_attr(p, f)) {}
  if (ptx_accept(p, PTX_TOK_SEMI)) return;
  if (p->tok.kind != PTX_TOK_LBRACE) ptx_expected(p, "'{' or ';'");
  if (!f->is_decl) ptx_fail(p, &name, "function '%.*s' is defined twice", (int)name.len, name.text);
  f->is_decl = 0;
  ptx_next(p);
  p->stats.funcs++;
  func_body(p, f, &rets, &args);
}

/* ---- the module ---------------------------------------------------------------------- */

/* .version MAJOR.MINOR */
static void version_directive(ptx_parser *p) {
  ptx_next(p);
  ptx_tok t = p->tok;
  unsigned major = 0, minor = 0;
  if (t.kind == PTX_TOK_F64 || t.kind == PTX_TOK_INT) {
    /* Read the digits as written: "7.10" would be minor 10, not 1. */
    uint32_t i = 0;
    while (i < t.len && t.text[i] >= '0' && t.text[i] <= '9') major = major * 10 + (unsigned)(t.text[i++] - '0');
    if (i < t.len && t.text[i] == '.') i++;
    while (i < t.len && t.text[i] >= '0' && t.text[i] <= '9') minor = minor * 10 + (unsigned)(t.text[i++] - '0');
    if (i != t.len || major > 99 || minor > 9) ptx_fail(p, &t, "malformed PTX version");
  } else {
    ptx_expected(p, "a version number");
  }
  /* 5.x is accepted: 6.0 added to it (the .sync warp forms, wmma, the
   * memory model's scopes) and removed nothing, and its warp operations
   * without .sync parse as 6.x takes them for targets before sm_70.
   * cuDNN 9 loads such a module at start to see that the JIT works
   * (nopCudnnHardwareDetection, .version 5.0, .target sm_50). */
  if (major < 5)
    ptx_fail(p, &t, "PTX ISA %u.%u is not supported (5.0 or later)", major, minor);
  p->m->ptx_version = (uint16_t)(major * 10 + minor);
  ptx_next(p);
}

/* .target target {',' target}   target := sm_NN[a|f] | compute_NN |
 *   texmode_unified | texmode_independent | debug | map_f64_to_f32 */
static void target_directive(ptx_parser *p) {
  ptx_next(p);
  do {
    ptx_tok t = p->tok;
    if (t.kind != PTX_TOK_IDENT) ptx_expected(p, "a target");
    if (t.len > 3 && (!memcmp(t.text, "sm_", 3) || (t.len > 8 && !memcmp(t.text, "compute_", 8)))) {
      uint32_t i = t.text[0] == 's' ? 3 : 8, sm = 0;
      while (i < t.len && t.text[i] >= '0' && t.text[i] <= '9' && sm < 10000)
        sm = sm * 10 + (uint32_t)(t.text[i++] - '0');
      char suf = 0;
      if (i < t.len && (t.text[i] == 'a' || t.text[i] == 'f')) suf = t.text[i++];
      if (i != t.len || sm == 0) ptx_fail(p, &t, "malformed target '%.*s'", (int)t.len, t.text);
      p->m->sm = (uint16_t)sm;
      p->m->sm_suffix = suf;
    } else if (PTX_TOK_IS(&t, "texmode_independent")) {
      p->m->texmode_independent = 1;
    } else if (PTX_TOK_IS(&t, "texmode_unified")) {
    } else if (PTX_TOK_IS(&t, "debug")) {
      p->m->debug = 1;
    } else if (PTX_TOK_IS(&t, "map_f64_to_f32")) {
      p->m->map_f64_to_f32 = 1;
    } else {
      ptx_fail(p, &t, "unknown target '%.*s'", (int)t.len, t.text);
    }
    ptx_next(p);
  } while (ptx_accept(p, PTX_TOK_COMMA));
}

/* .address_size 64 */
static void address_size_directive(ptx_parser *p) {
  ptx_next(p);
  ptx_tok t = p->tok;
  if (t.kind != PTX_TOK_INT) ptx_expected(p, "32 or 64");
  if (t.ival == 32) ptx_fail(p, &t, ".address_size 32 is not supported (64-bit addresses only)");
  if (t.ival != 64) ptx_fail(p, &t, "address size must be 32 or 64");
  p->m->address_size = 64;
  ptx_next(p);
}

/* .section name '{' ... '}'   (DWARF sections: skipped) */
static void section_directive(ptx_parser *p) {
  ptx_next(p);
  while (p->tok.kind != PTX_TOK_LBRACE) {
    if (p->tok.kind == PTX_TOK_EOF || p->tok.kind == PTX_TOK_SEMI) ptx_expected(p, "'{'");
    ptx_next(p);
  }
  int depth = 0;
  do {
    if (p->tok.kind == PTX_TOK_LBRACE) depth++;
    else if (p->tok.kind == PTX_TOK_RBRACE) depth--;
    else if (p->tok.kind == PTX_TOK_EOF) ptx_expected(p, "'}'");
    /* Section contents are not PTX tokens everywhere; take any. */
    ptx_lex_next(&p->lx, &p->tok);
    p->has_ahead = false;
    while (p->tok.kind == PTX_TOK_ERROR) ptx_lex_next(&p->lx, &p->tok);
  } while (depth > 0);
}

/* top := .version | .target | .address_size | .file | .loc | .section
 *      | .pragma | linkage* (.entry | .func | space var_decl)
 *      | .alias name ',' name ';'                                   */
static void top_stmt(ptx_parser *p) {
  ptx_tok t = p->tok;
  if (t.kind != PTX_TOK_DOTWORD) ptx_expected(p, "a directive");
  if (PTX_TOK_IS(&t, ".version")) return version_directive(p);
  if (PTX_TOK_IS(&t, ".target")) return target_directive(p);
  if (PTX_TOK_IS(&t, ".address_size")) return address_size_directive(p);
  if (PTX_TOK_IS(&t, ".file") || PTX_TOK_IS(&t, ".loc")) return skip_line(p, t.line);
  if (PTX_TOK_IS(&t, ".section")) return section_directive(p);
  if (PTX_TOK_IS(&t, ".pragma")) return pragma_stmt(p, NULL);
  if (PTX_TOK_IS(&t, ".alias")) {
    /* .alias fAlias, fAliasee;  -- recorded as nothing more than checked */
    ptx_next(p);
    ptx_tok a = p->tok;
    ptx_expect(p, PTX_TOK_IDENT, "a function name");
    ptx_expect(p, PTX_TOK_COMMA, "','");
    ptx_tok b = p->tok;
    ptx_expect(p, PTX_TOK_IDENT, "a function name");
    ptx_sym *sb = pw_map_str_get(&p->syms, b.text, b.len);
    if (!sb || sb->kind != PTX_SYM_FUNC) ptx_fail(p, &b, "'%.*s' is not a function", (int)b.len, b.text);
    ptx_sym *sa = pw_map_str_get(&p->syms, a.text, a.len);
    if (!sa) pw_map_str_put(&p->syms, a.text, a.len, sb);
    ptx_expect(p, PTX_TOK_SEMI, "';'");
    return;
  }
  ir_linkage link = IR_LINK_INTERNAL;
  bool is_extern = false;
  for (;;) {
    if (PTX_TOK_IS(&p->tok, ".visible")) link = IR_LINK_VISIBLE;
    else if (PTX_TOK_IS(&p->tok, ".extern")) link = IR_LINK_EXTERN, is_extern = true;
    else if (PTX_TOK_IS(&p->tok, ".weak")) link = IR_LINK_WEAK;
    else if (PTX_TOK_IS(&p->tok, ".common")) link = IR_LINK_COMMON;
    else break;
    ptx_next(p);
  }
  if (PTX_TOK_IS(&p->tok, ".entry")) return func_decl(p, link, true);
  if (PTX_TOK_IS(&p->tok, ".func")) return func_decl(p, link, false);
  ir_space s = p->tok.kind == PTX_TOK_DOTWORD ? space_of_word(ptx_word_of(p, &p->tok)) : IR_SPACE_GENERIC;
  if (s == IR_SPACE_GENERIC || s == IR_SPACE_PARAM)
    ptx_expected(p, "a directive, '.entry', '.func' or a state space");
  ptx_next(p);
  decl_attrs a = {.linkage = link, .is_extern = is_extern, .space = s};
  var_decl(p, &a);
}

ir_module *ptx_parse(const char *path, const char *text, size_t len, pw_diag *d,
                     ptx_parse_stats *stats) {
  ptx_parser *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->src = (pw_src){path, text, len};
  p->diag = d;
  p->m = ir_module_create(path);
  if (!p->m) {
    free(p);
    return NULL;
  }
  p->m->address_size = 64;
  pw_arena_init(&p->scratch);
  /* Out of memory in the arenas (the module's, the parser's tables) is a
   * diagnostic and a NULL module, not an abort (issue 20: libcuda.so.1
   * parses untrusted PTX inside the application).  Other allocations of
   * the front end still stop the process (docs/ptx-front-end.md). */
  jmp_buf oomjb;
  if (setjmp(oomjb)) {
    pw_error(d, path, "out of memory parsing %zu bytes of PTX", len);
    if (p->fn) pw_arena_free(&p->fscratch);
    p->m->arena.on_oom = NULL;
    ir_module_destroy(p->m);
    pw_arena_free(&p->scratch);
    free(p);
    return NULL;
  }
  p->oom = &oomjb;
  p->m->arena.on_oom = &oomjb;
  p->scratch.on_oom = &oomjb;
  ir_mod_words_init(&p->words, &p->scratch);
  ptx_instr_init(p);
  pw_map_init(&p->syms, &p->scratch, 1024);
  ptx_lex_init(&p->lx, text, len);

  jmp_buf jb;
  p->recover = &jb;
  if (setjmp(jb)) {
    /* An error that left a function body (an unclosed one at the end of
     * the file): its scratch tables go with it. */
    if (p->fn) pw_arena_free(&p->fscratch);
    p->fn = NULL;
    p->expr_depth = 0;
    skip_statement(p);
    if (p->tok.kind == PTX_TOK_RBRACE) {
      /* a stray '}' at module level */
      ptx_lex_next(&p->lx, &p->tok);
      p->has_ahead = false;
    }
  } else {
    ptx_next(p);
  }
  while (p->tok.kind != PTX_TOK_EOF) {
    if (p->tok.kind == PTX_TOK_ERROR) ptx_fail(p, &p->tok, "%s", p->tok.msg);
    top_stmt(p);
  }
  p->recover = NULL;
  if (!p->errors && !p->m->ptx_version) {
    ptx_tok at = {.line = 1, .col = 1};
    ptx_error_at(p, &at, "missing .version directive");
  }
  ir_module *m = p->m;
  m->arena.on_oom = NULL;
  if (stats) *stats = p->stats;
  if (p->errors) {
    ir_module_destroy(m);
    m = NULL;
  }
  pw_arena_free(&p->scratch);
  free(p);
  return m;
}
