/* ptx/ptx_operand.c: PTX operands (PTX ISA 9.1 chapter 6) and their
 * values.
 *
 * One grammar for every instruction: the families decide afterwards which
 * operands are results and which are sources.  Registers are looked up by
 * name (a %r<N> range element or a plain .reg name) through a small cache
 * of the ranges last used; special registers through ir_sregs.def.
 */
#include <string.h>

#include "ptx_instr.h"

/* A register by name: %r57 is element 57 of a %r<N> range (keyed "%r<"),
 * else a plain .reg name.  PTX_NONE if neither.  Leading zeros count for
 * nothing (ptxas 13 takes %r08 as element 8).  A plain %r1 of an inner
 * scope hides element 1 of an outer %r<8> (ptx_parse.c, "scopes"); the
 * range counts such registers, so an element of one no inner register
 * hides costs no second lookup. */
uint32_t ptx_find_reg(ptx_parser *p, const ptx_tok *t) { return ptx_find_reg_decl(p, t, NULL); }

/* The same, and the declaration it belongs to (a vector register's first
 * component: decl->vec says how many follow). */
uint32_t ptx_find_reg_decl(ptx_parser *p, const ptx_tok *t, const ptx_regdecl **decl) {
  const ptx_regdecl *dummy;
  if (!decl) decl = &dummy;
  *decl = NULL;
  uint32_t n = t->len, d = n;
  while (d > 1 && t->text[d - 1] >= '0' && t->text[d - 1] <= '9') d--;
  if (d < n && n - d <= 9) {
    uint32_t idx = 0;
    for (uint32_t i = d; i < n; i++) idx = idx * 10 + (uint32_t)(t->text[i] - '0');
    ptx_regdecl *r = NULL;
    uint64_t key = 0;
    if (d <= 8) {
      memcpy(&key, t->text, d);
      for (uint32_t k = 0; k < p->nrcache; k++)
        if (p->rcache[k].len == d && p->rcache[k].key == key) {
          r = p->rcache[k].decl;
          break;
        }
    }
    if (!r) {
      char buf[256];
      if (d + 1 <= sizeof buf) {
        memcpy(buf, t->text, d);
        buf[d] = '<';
        ptx_sym *s = pw_map_str_get(&p->fsyms, buf, d + 1);
        if (s && s->kind == PTX_SYM_REG) {
          r = s->reg;
          if (d <= 8) {
            uint32_t slot = p->nrcache < 8 ? p->nrcache++ : (uint32_t)(key % 8);
            p->rcache[slot].key = key;
            p->rcache[slot].len = d;
            p->rcache[slot].decl = r;
          }
        }
      }
    }
    if (r && idx < r->count) {
      if (r->shadowed) {
        ptx_sym *s = pw_map_str_get(&p->fsyms, t->text, t->len);
        if (s && s->kind == PTX_SYM_REG && !s->reg->range && s->reg->scope > r->scope) {
          *decl = s->reg;
          return s->reg->base;
        }
      }
      *decl = r;
      return r->base + idx * (r->vec ? r->vec : 1);
    }
  }
  ptx_sym *s = pw_map_str_get(&p->fsyms, t->text, t->len);
  if (s && s->kind == PTX_SYM_REG && !s->reg->range) {
    *decl = s->reg;
    return s->reg->base;
  }
  return PTX_NONE;
}

/* A special register: %tid.x, %laneid, %envreg3, %pm2_64.  Sets sreg and
 * comp; false if the name is none. */
static bool find_sreg(ptx_parser *p, const ptx_tok *t, uint16_t *sreg, uint16_t *comp) {
  const pw_map *m = &p->sregs;
  void *v = pw_map_str_get(m, t->text, t->len);
  if (v) {
    *sreg = (uint16_t)((uintptr_t)v - 1);
    *comp = 0;
    return true;
  }
  /* indexed families: name then digits, %pmN_64 */
  uint32_t n = t->len;
  bool is64 = n > 3 && !memcmp(t->text + n - 3, "_64", 3);
  if (is64) n -= 3;
  uint32_t d = n;
  while (d > 1 && t->text[d - 1] >= '0' && t->text[d - 1] <= '9') d--;
  if (d == n || n - d > 3) return false;
  char buf[64];
  if (d + 4 > sizeof buf) return false;
  memcpy(buf, t->text, d);
  size_t bl = d;
  if (is64) {
    memcpy(buf + bl, "_64", 3);
    bl += 3;
  }
  v = pw_map_str_get(m, buf, bl);
  if (!v) return false;
  uint32_t idx = 0;
  for (uint32_t i = d; i < n; i++) idx = idx * 10 + (uint32_t)(t->text[i] - '0');
  uint16_t s = (uint16_t)((uintptr_t)v - 1);
  if (ir_sreg_infos[s].ncomp <= 1 || idx >= ir_sreg_infos[s].ncomp) return false;
  *sreg = s;
  *comp = (uint16_t)idx;
  return true;
}

static opnd *pool_add(ptx_parser *p, ins *I, const opnd *o) {
  if (I->npool >= MAX_POOL) ptx_fail(p, &o->tok, "too many operands");
  I->pool[I->npool] = *o;
  return &I->pool[I->npool++];
}

/* The p of a d|p pair, after d (PTX ISA 9.7.13.14 elect.sync, 9.7.7.4
 * setp): a predicate register or '_', which leaves var2 PTX_NONE. */
static void pair_operand(ptx_parser *p, opnd *o) {
  if (p->tok.kind != PTX_TOK_PIPE) return;
  o->pair = 1;
  ptx_next(p);
  ptx_tok t2 = p->tok;
  if (t2.kind != PTX_TOK_IDENT) ptx_expected(p, "a predicate register");
  ptx_next(p);
  o->var2 = ptx_find_reg(p, &t2);
  if (o->var2 == PTX_NONE && !PTX_TOK_IS(&t2, "_"))
    ptx_fail(p, &t2, "undeclared register '%.*s'", (int)t2.len, t2.text);
}

/* A register operand, with the p of a d|p pair. */
static void reg_operand(ptx_parser *p, opnd *o, uint32_t v) {
  o->kind = O_REG;
  o->var = v;
  pair_operand(p, o);
}

/* A vector register's operand (t its name, just read; v its first
 * component): %v.y is one component (.x .y .z .w or .r .g .b .a, PTX ISA
 * "Vectors"), %v alone the whole vector, which only an operand of its own
 * may be (whole_ok: ptx_operand turns it into the brace list). */
static void vreg_operand(ptx_parser *p, opnd *o, const ptx_tok *t, const ptx_regdecl *r, uint32_t v,
                         bool whole_ok) {
  if (p->tok.kind == PTX_TOK_DOTWORD && !(p->tok.flags & PTX_TOKF_SPACE_BEFORE) && p->tok.len == 2) {
    static const char names[] = "xyzwrgba";
    const char *c = memchr(names, p->tok.text[1], 8);
    if (c) {
      uint32_t k = (uint32_t)(c - names) % 4;
      if (k >= r->vec)
        ptx_fail(p, &p->tok, "'%.*s' is a .v%u register: it has no component '%.*s'", (int)t->len, t->text, r->vec,
                 (int)p->tok.len, p->tok.text);
      ptx_next(p);
      reg_operand(p, o, v + k);
      return;
    }
  }
  if (!whole_ok)
    ptx_fail(p, t, "'%.*s' is a vector register: name a component (%.*s.x) here", (int)t->len, t->text,
             (int)t->len, t->text);
  o->kind = O_VEC;
  o->var = v;
  o->n = r->vec;
  o->first = UINT32_MAX; /* the components are put in the pool by ptx_operand */
}

/* scalar := ['!'] reg ['|' reg] | sreg ['.' comp] | ['-'] number
 *         | name ['+' constexpr] | '_'                            */
static void scalar_ex(ptx_parser *p, opnd *o, bool whole_ok);
static void scalar(ptx_parser *p, opnd *o) { scalar_ex(p, o, false); }

static void scalar_ex(ptx_parser *p, opnd *o, bool whole_ok) {
  /* Every field a reader looks at for the kind it finds is set below;
   * neg and off are read for any kind. */
  o->neg = 0;
  o->reg_off = 0;
  o->vsel = PTX_VSEL_NONE;
  o->vkind = o->vndig = 0;
  o->vdig = 0;
  o->minus = 0;
  o->off = 0;
  o->var2 = PTX_NONE;
  o->pair = 0;
  o->tok = p->tok;
  ptx_tok t = p->tok;
  if (t.kind == PTX_TOK_BANG) {
    ptx_next(p);
    if (p->tok.kind == PTX_TOK_BANG) ptx_fail(p, &p->tok, "expected a predicate register, found '!'");
    scalar(p, o);
    if (o->kind != O_REG) ptx_fail(p, &t, "'!' applies to a predicate register");
    o->neg = 1;
    o->tok = t;
    return;
  }
  if (t.kind == PTX_TOK_MINUS || t.kind == PTX_TOK_INT || t.kind == PTX_TOK_F32 ||
      t.kind == PTX_TOK_F64) {
    bool neg = false;
    if (t.kind == PTX_TOK_MINUS) {
      neg = true;
      ptx_next(p);
      t = p->tok;
      /* -%r: vmad's negated operand (9.7.18.1.3); the family checks
       * that nothing else has one */
      if (t.kind == PTX_TOK_IDENT && t.text[0] == '%') {
        ptx_tok m = o->tok;
        scalar_ex(p, o, whole_ok);
        if (o->kind != O_REG) ptx_fail(p, &m, "'-' applies to a number or, in vmad, a register");
        o->minus = 1;
        o->tok = m;
        return;
      }
    }
    o->kind = O_IMM;
    if (t.kind == PTX_TOK_INT) {
      if (t.flags & PTX_TOKF_OVERFLOW) ptx_fail(p, &t, "integer literal does not fit in 64 bits");
      o->immk = IMM_INT;
      o->imm = neg ? 0 - t.ival : t.ival;
    } else if (t.kind == PTX_TOK_F32) {
      o->immk = IMM_F32;
      o->imm = neg ? t.ival ^ 0x80000000u : t.ival;
    } else if (t.kind == PTX_TOK_F64) {
      o->immk = IMM_F64;
      o->imm = neg ? t.ival ^ 0x8000000000000000ull : t.ival;
    } else {
      ptx_expected(p, "a number");
    }
    ptx_next(p);
    return;
  }
  if (t.kind != PTX_TOK_IDENT) ptx_expected(p, "an operand");
  ptx_next(p);
  if (t.text[0] == '%') {
    const ptx_regdecl *rd;
    uint32_t v = ptx_find_reg_decl(p, &t, &rd);
    if (v != PTX_NONE) {
      if (rd && rd->vec) vreg_operand(p, o, &t, rd, v, whole_ok);
      else reg_operand(p, o, v);
      /* %r1.b2, %r2.h1: the scalar video instructions' operand selectors
       * (9.7.18.1: one byte or half-word, o->vsel); the SIMD ones'
       * (%r1.b3210, %r2.h10, the masks %r1.b20, %r1.h1: 9.7.18.2) are
       * kept as written, digits and all, for the instruction to check */
      if (o->kind == O_REG && p->tok.kind == PTX_TOK_DOTWORD && !(p->tok.flags & PTX_TOKF_SPACE_BEFORE)) {
        const ptx_tok *w = &p->tok;
        bool ok = w->len >= 3 && w->len <= 6 && (w->text[1] == 'b' || w->text[1] == 'h');
        for (uint32_t k = 2; ok && k < w->len; k++) ok = w->text[k] >= '0' && w->text[k] <= '7';
        if (!ok)
          ptx_fail(p, w, "'%.*s%.*s': a video operand selector is .b or .h and digits", (int)t.len, t.text,
                   (int)w->len, w->text);
        o->vkind = (uint8_t)w->text[1];
        o->vndig = (uint8_t)(w->len - 2);
        for (uint32_t k = 2; k < w->len; k++) o->vdig = (uint16_t)(o->vdig | (w->text[k] - '0') << 4 * (k - 2));
        if (w->len == 3 && w->text[1] == 'b' && w->text[2] <= '3')
          o->vsel = (uint8_t)(PTX_VSEL_B0 + (w->text[2] - '0'));
        else if (w->len == 3 && w->text[1] == 'h' && w->text[2] <= '1')
          o->vsel = (uint8_t)(PTX_VSEL_H0 + (w->text[2] - '0'));
        ptx_next(p);
      }
      return;
    }
    uint16_t sr, comp;
    if (find_sreg(p, &t, &sr, &comp)) {
      o->kind = O_SREG;
      o->sreg = sr;
      o->comp = comp;
      if (ir_sreg_infos[sr].ncomp == 3) {
        /* %tid.x / .y / .z; a bare %tid is not a value */
        if (p->tok.kind != PTX_TOK_DOTWORD || (p->tok.flags & PTX_TOKF_SPACE_BEFORE) ||
            p->tok.len != 2 || p->tok.text[1] < 'x' || p->tok.text[1] > 'z')
          ptx_fail(p, &t, "'%.*s' needs a component .x, .y or .z", (int)t.len, t.text);
        o->comp = (uint16_t)(p->tok.text[1] - 'x');
        ptx_next(p);
      }
      return;
    }
    ptx_fail(p, &t, "undeclared register '%.*s'", (int)t.len, t.text);
  }
  if (PTX_TOK_IS(&t, "_")) {
    o->kind = O_SINK; /* `_|%p`: elect.sync's leader discarded (nvcc 13 writes it) */
    pair_operand(p, o);
    return;
  }
  /* Register names need no '%' (PTX ISA, "Identifiers": '%' may only
   * allowed as a first character): `.reg .b32 temp<2>;` names temp0 and
   * temp1, `.reg .b16 in16_<2>;` in16_0 and in16_1. */
  ptx_sym *s = pw_map_str_get(&p->fsyms, t.text, t.len);
  if (p->fn && (!s || s->kind == PTX_SYM_REG)) {
    const ptx_regdecl *rd;
    uint32_t v = ptx_find_reg_decl(p, &t, &rd);
    if (v != PTX_NONE) {
      if (rd && rd->vec) vreg_operand(p, o, &t, rd, v, whole_ok);
      else reg_operand(p, o, v);
      return;
    }
  }
  if (!s) s = pw_map_str_get(&p->syms, t.text, t.len);
  if (!s && PTX_TOK_IS(&t, "WARP_SZ")) {
    /* the predefined constant (PTX ISA 4.5): the warp size */
    o->kind = O_IMM;
    o->immk = IMM_INT;
    o->imm = 32;
    return;
  }
  if (s && (s->kind == PTX_SYM_GLOBAL || s->kind == PTX_SYM_FUNC || s->kind == PTX_SYM_PARAM)) {
    o->kind = O_SYM;
    o->sym = s;
    if (p->tok.kind == PTX_TOK_PLUS) {
      ptx_next(p);
      o->off = ptx_const_expr(p);
    }
    return;
  }
  /* a label, a prototype or a target list: resolved by the family */
  o->kind = O_LABEL;
}

/* vector := '{' scalar {',' scalar} '}' */
static void vector(ptx_parser *p, ins *I, opnd *o) {
  memset(o, 0, sizeof *o);
  o->tok = p->tok;
  o->kind = O_VEC;
  ptx_next(p);
  opnd tmp[64];
  uint32_t n = 0;
  if (p->tok.kind != PTX_TOK_RBRACE) {
    do {
      if (n == 64) ptx_fail(p, &p->tok, "vector too long");
      scalar(p, &tmp[n++]);
    } while (ptx_accept(p, PTX_TOK_COMMA));
  }
  ptx_expect(p, PTX_TOK_RBRACE, "',' or '}'");
  o->first = I->npool;
  o->n = n;
  for (uint32_t i = 0; i < n; i++) pool_add(p, I, &tmp[i]);
}

/* address := '[' base [('+' | '-') constexpr] {',' (scalar | vector)} ']'
 * base := reg | name | constexpr                                       */
static void address(ptx_parser *p, ins *I, opnd *o) {
  memset(o, 0, sizeof *o);
  o->tok = p->tok;
  o->kind = O_ADDR;
  ptx_next(p);
  opnd elems[8];
  uint32_t n = 0;
  opnd *b = &elems[n++];
  if (p->tok.kind == PTX_TOK_INT || p->tok.kind == PTX_TOK_LPAREN || p->tok.kind == PTX_TOK_MINUS) {
    memset(b, 0, sizeof *b);
    b->tok = p->tok;
    b->kind = O_IMM;
    b->imm = (uint64_t)ptx_const_expr(p);
  } else {
    scalar(p, b);
    if (b->kind != O_REG && b->kind != O_SYM && b->kind != O_LABEL)
      ptx_fail(p, &b->tok, "an address is a register, a variable or a number");
    if (b->kind == O_SYM) {
      o->off = b->off;
      b->off = 0;
    }
  }
  if (p->tok.kind == PTX_TOK_PLUS) {
    ptx_next(p);
    o->off += ptx_const_expr(p);
  } else if (p->tok.kind == PTX_TOK_MINUS) {
    ptx_next(p);
    o->off -= ptx_const_expr(p);
  }
  while (ptx_accept(p, PTX_TOK_COMMA)) {
    if (n == 8) ptx_fail(p, &p->tok, "too many address components");
    if (p->tok.kind == PTX_TOK_LBRACE) vector(p, I, &elems[n++]);
    else scalar(p, &elems[n++]);
  }
  ptx_expect(p, PTX_TOK_RBRACKET, "']'");
  o->first = I->npool;
  o->n = n;
  for (uint32_t i = 0; i < n; i++) pool_add(p, I, &elems[i]);
}

/* operand := scalar | vector | address | '(' [operand {',' operand}] ')' */
void ptx_operand(ptx_parser *p, ins *I, opnd *o) {
  switch (p->tok.kind) {
  case PTX_TOK_LBRACE: vector(p, I, o); return;
  case PTX_TOK_LBRACKET: address(p, I, o); return;
  case PTX_TOK_LPAREN: {
    memset(o, 0, sizeof *o);
    o->tok = p->tok;
    o->kind = O_LIST;
    ptx_next(p);
    opnd tmp[64];
    uint32_t n = 0;
    if (p->tok.kind != PTX_TOK_RPAREN) {
      do {
        if (n == 64) ptx_fail(p, &p->tok, "list too long");
        if (p->tok.kind == PTX_TOK_LBRACE) ptx_fail(p, &p->tok, "vectors cannot be call arguments");
        /* a whole vector register is a call's argument or result for a
         * vector register parameter (build_call checks the shapes) */
        scalar_ex(p, &tmp[n++], true);
      } while (ptx_accept(p, PTX_TOK_COMMA));
    }
    ptx_expect(p, PTX_TOK_RPAREN, "',' or ')'");
    o->first = I->npool;
    o->n = n;
    for (uint32_t i = 0; i < n; i++) pool_add(p, I, &tmp[i]);
    /* a vector register's components follow the list */
    for (uint32_t i = 0; i < n; i++) {
      opnd *e = &I->pool[o->first + i];
      if (e->kind != O_VEC) continue;
      opnd c = {.kind = O_REG, .var2 = PTX_NONE, .tok = e->tok};
      uint32_t base = e->var, first = I->npool;
      for (uint32_t k = 0; k < e->n; k++) {
        c.var = base + k;
        pool_add(p, I, &c);
      }
      e = &I->pool[o->first + i]; /* pool_add may have moved the pool */
      e->first = first;
      e->var = 0;
    }
    return;
  }
  default:
    scalar_ex(p, o, true);
    if (o->kind == O_VEC) {
      /* a whole vector register: the list of its components */
      opnd c = {.kind = O_REG, .var2 = PTX_NONE, .tok = o->tok};
      o->first = I->npool;
      for (uint32_t i = 0; i < o->n; i++) {
        c.var = o->var + i;
        pool_add(p, I, &c);
      }
      o->var = 0;
      return;
    }
    /* reg '+' constexpr: the register's value plus a constant, as ptxas 13
     * takes it (st.u64 [x], temp + 1 stores temp + 1); only as a whole
     * operand (not in a vector or a list), only '+', only after a .reg
     * (not a special register) and only as a source: ptx_value adds it,
     * dst_add refuses it as ptxas does ("Result register required"). */
    if (o->kind == O_REG && !o->neg && p->tok.kind == PTX_TOK_PLUS) {
      ptx_next(p);
      o->off = ptx_const_expr(p);
      o->reg_off = 1;
    }
    return;
  }
}

/* ---- values -------------------------------------------------------------- */


/* An immediate of type t from a literal as written. */
ir_value *ptx_imm_value(ptx_parser *p, const opnd *o, ir_type t) {
  uint64_t bits = o->imm;
  ir_type_kind k = ir_type_kind_of(t);
  unsigned tb = ir_type_bits(t);
  if (o->immk == IMM_INT && k == IR_TK_FLOAT && (tb == 32 || tb == 64)) {
    /* an integer literal where a float is read: its value, converted */
    if (tb == 32) {
      float f = (float)(int64_t)bits;
      uint32_t u;
      memcpy(&u, &f, 4);
      bits = u;
    } else {
      double d = (double)(int64_t)bits;
      memcpy(&bits, &d, 8);
    }
  } else if (o->immk == IMM_F32 && tb == 64 && k == IR_TK_FLOAT) {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, 4);
    double d = f;
    memcpy(&bits, &d, 8);
  } else if (o->immk == IMM_F64 && tb == 32 && k == IR_TK_FLOAT) {
    double d;
    memcpy(&d, &bits, 8);
    float f = (float)d;
    uint32_t u;
    memcpy(&u, &f, 4);
    bits = u;
  } else if (o->immk == IMM_F64 && tb == 16 && k == IR_TK_FLOAT) {
    ptx_fail(p, &o->tok, "a decimal literal cannot be a .%s; write its bits", ir_type_name(t));
  }
  if (tb && tb < 64) bits &= (~0ull) >> (64 - tb);
  ir_value *v = ir_imm(&p->b, t, bits);
  if (!v) ptx_oom(p);
  return v;
}

/* The value of a scalar operand read as type t. */
ir_value *ptx_value(ptx_parser *p, const opnd *o, ir_type t) {
  switch ((okind)o->kind) {
  case O_REG: {
    ir_value *v = ptx_ssa_read(p, o->var);
    if (o->reg_off) {
      /* ptxas 13 crashes on a float register + N and gives a predicate
       * one no documented meaning: integers only */
      ir_type vt = (ir_type)p->ssa.var_type[o->var];
      ir_type_kind k = ir_type_kind_of(vt);
      if (vt == ir_type_pred || (k != IR_TK_UINT && k != IR_TK_SINT && k != IR_TK_BITS))
        ptx_fail(p, &o->tok, "register + constant needs an integer register ('%.*s' is .%s)", (int)o->tok.len,
                 o->tok.text, ir_type_name(vt));
      ir_type ut = ir_type_bits(vt) <= 16 ? ir_type_u16 : ir_type_bits(vt) <= 32 ? ir_type_u32 : ir_type_u64;
      if (ir_type_bits(vt) == ir_type_bits(ut)) v = ir_alu2(&p->b, ir_op_add, ut, v, ir_imm(&p->b, ut, (uint64_t)o->off));
      else ptx_fail(p, &o->tok, "register + constant needs a 16-, 32- or 64-bit register");
    }
    if (o->neg) {
      if (p->ssa.var_type[o->var] != ir_type_pred)
        ptx_fail(p, &o->tok, "'!' applies to a .pred register");
      v = ir_alu1(&p->b, ir_op_not, ir_type_pred, v);
    }
    return v;
  }
  case O_SREG: return ir_read_sreg(&p->b, (ir_sreg)o->sreg, o->comp);
  case O_IMM: return ptx_imm_value(p, o, t == ir_type_none ? ir_type_b32 : t);
  case O_SYM: {
    ptx_sym *s = o->sym;
    ir_symbol sym = s->kind == PTX_SYM_GLOBAL ? ir_sym_global(s->global)
                    : s->kind == PTX_SYM_FUNC ? ir_sym_func(s->func)
                                              : ir_sym_param(s->param);
    return ir_symref(&p->b, sym, o->off, ir_type_u64);
  }
  case O_SINK: ptx_fail(p, &o->tok, "'_' cannot be read");
  case O_LABEL:
    ptx_fail(p, &o->tok, "undeclared name '%.*s'", (int)o->tok.len, o->tok.text);
  case O_ADDR:
  case O_VEC:
  case O_LIST: ptx_fail(p, &o->tok, "expected a scalar operand");
  }
  PW_DIE("bad operand kind");
}
