/* ptx/ptx_instr.c: PTX instructions (PTX ISA 9.1 chapter 9) to IR.
 *
 * A statement is read in three steps:
 *   1. guard, mnemonic and modifiers:  [@[!]p] word{.mod}  -- the mnemonic
 *      is the longest run of words that names an op of ir_ops.def's ptx
 *      column ("cp.async.commit_group", "bar.red", "mbarrier.try_wait");
 *      the remaining dotwords are modifiers;
 *   2. operands, by one generic grammar (operand() below): registers (with
 *      d|p pairs and !p), immediates, symbols, labels, vectors {a, b},
 *      addresses [base+off] or [tex, {coords}], and ( lists ) of calls;
 *   3. the family's meaning: the modifiers become ir_mods fields and type
 *      suffixes (decode_mods), the operands IR values.  Most families share
 *      one shape: results first (a register, a d|p pair or a vector), then
 *      the sources, vectors flattened, the first address's offset in
 *      instr->offset.  mov, setp/set, branches, calls and returns have
 *      their own.
 * A mnemonic that no op row covers, or a modifier its family does not
 * know, keeps the instruction as ir_op_opaque with its dotted spelling:
 * never a parse error (later stages call it unsupported, by name).
 *
 * Result types: a result takes the type of the register it is written to
 * (PTX registers are typed storage; the instruction's type suffix, kept in
 * instr->type, says how the bits are read), so that an SSA variable's
 * values and phis agree and wide results (mul.wide, cvt) are the width of
 * their register.  A `_` sink takes the instruction's type.
 */
#include <stdio.h>
#include <string.h>

#include "ptx_internal.h"

/* ---- the mnemonic table ------------------------------------------------ */

enum { OPF_MULTI = 1 };  /* longer mnemonics start with this word */

typedef struct opent {
  uint16_t op;     /* ir_op, or ir_op_count for a word that is only a prefix */
  uint8_t flags;
} opent;

static opent *opent_new(ptx_parser *p, uint16_t op) {
  opent *e = PW_NEW(&p->scratch, opent);
  if (!e) PW_DIE("out of memory");
  e->op = op;
  return e;
}

static void add_mnemonic(ptx_parser *p, const char *s, ir_op op) {
  size_t n = strlen(s);
  opent *e = ptx_map_get(&p->ops, s, n);
  if (!e) {
    e = opent_new(p, (uint16_t)op);
    ptx_map_put(&p->ops, s, n, e);
  } else if (e->op == ir_op_count) {
    e->op = (uint16_t)op;
  }
  /* every proper prefix ending at a dot is marked MULTI */
  for (size_t i = 1; i < n; i++)
    if (s[i] == '.') {
      opent *pe = ptx_map_get(&p->ops, s, i);
      if (!pe) {
        pe = opent_new(p, ir_op_count);
        ptx_map_put(&p->ops, s, i, pe);
      }
      pe->flags |= OPF_MULTI;
    }
}

static struct ins *ins_alloc(ptx_parser *p);

void ptx_instr_init(ptx_parser *p) {
  ptx_map_init(&p->ops, &p->scratch, 512);
  for (int op = 0; op < ir_op_count; op++) {
    const char *s = ir_op_infos[op].ptx;
    if (!s || !*s) continue;
    add_mnemonic(p, s, (ir_op)op);
  }
  /* barrier.sync is bar.sync without the implied .aligned (9.7.13.1) */
  add_mnemonic(p, "barrier", ir_op_bar);
  add_mnemonic(p, "barrier.red", ir_op_bar_red);
  /* cp.async.wait_all is cp.async.wait_group 0 without the operand */
  add_mnemonic(p, "cp.async.wait_all", ir_op_cp_async_wait_group);
  /* Special registers, keyed with their '%'. */
  ptx_map_init(&p->sregs, &p->scratch, 128);
  for (int s = 0; s < ir_sreg_count; s++) {
    const char *n = ir_sreg_infos[s].name;
    size_t l = strlen(n);
    char *k = pw_arena_alloc(&p->scratch, l + 2);
    k[0] = '%';
    memcpy(k + 1, n, l + 1);
    ptx_map_put(&p->sregs, k, l + 1, (void *)(uintptr_t)(s + 1));
  }
  p->ins_buf = ins_alloc(p);
}

/* The first word's table entry, through a direct-mapped cache of words
 * up to 16 bytes compared as two machine words (one lookup per
 * instruction, a few dozen distinct words per module). */
static opent *lookup_mnemonic(ptx_parser *p, const ptx_tok *t) {
  if (t->len > 16) return ptx_map_get(&p->ops, t->text, t->len);
  uint64_t k[2] = {0, 0};
  memcpy(k, t->text, t->len);
  uint64_t h = (k[0] * 0x9E3779B97F4A7C15ull) ^ (k[1] * 0xC2B2AE3D27D4EB4Full) ^ t->len;
  uint32_t slot = (uint32_t)(h >> 58) & 63;
  if (p->opcache[slot].len == t->len && p->opcache[slot].k0 == k[0] && p->opcache[slot].k1 == k[1])
    return p->opcache[slot].e;
  opent *e = ptx_map_get(&p->ops, t->text, t->len);
  p->opcache[slot].k0 = k[0];
  p->opcache[slot].k1 = k[1];
  p->opcache[slot].len = t->len;
  p->opcache[slot].e = e;
  return e;
}

/* ---- operands ------------------------------------------------------------ */

typedef enum okind {
  O_REG, O_SREG, O_IMM, O_SYM, O_LABEL, O_ADDR, O_VEC, O_SINK, O_LIST,
} okind;

enum { IMM_INT, IMM_F32, IMM_F64 };

typedef struct opnd {
  uint8_t kind;      /* okind */
  uint8_t neg;       /* !%p */
  uint8_t immk;      /* O_IMM: IMM_* */
  uint32_t var;      /* O_REG */
  uint32_t var2;     /* O_REG: the p of a d|p pair, or PTX_NONE */
  uint16_t sreg, comp;
  uint64_t imm;
  ptx_sym *sym;      /* O_SYM */
  int64_t off;       /* O_SYM, O_ADDR */
  uint32_t first, n; /* O_VEC, O_ADDR, O_LIST: children in the pool */
  ptx_tok tok;
} opnd;

#define MAX_MODS 24
#define MAX_TOP 24
#define MAX_POOL 512

struct ins {
  ptx_tok at;              /* the mnemonic */
  bool guarded, guard_neg;
  uint32_t guard_var;
  ir_op op;
  ptx_tok mtok[MAX_MODS];  /* modifiers as written */
  uint16_t mods[MAX_MODS];
  uint32_t nmods;
  opnd top[MAX_TOP];
  uint32_t ntop;
  opnd pool[MAX_POOL];
  uint32_t npool;
  /* decoded */
  ir_mods m;
  ir_type type, type2, type3, type4;
  uint32_t ntypes;
};
typedef struct ins ins;

static struct ins *ins_alloc(ptx_parser *p) {
  ins *I = PW_NEW(&p->scratch, ins);
  if (!I) PW_DIE("out of memory");
  return I;
}

/* A register by name: %r57 is element 57 of a %r<N> range (keyed "%r<"),
 * else a plain .reg name.  PTX_NONE if neither. */
static uint32_t find_reg(ptx_parser *p, const ptx_tok *t) {
  uint32_t n = t->len, d = n;
  while (d > 1 && t->text[d - 1] >= '0' && t->text[d - 1] <= '9') d--;
  if (d < n && n - d <= 9 && (t->text[d] != '0' || d == n - 1)) {
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
        ptx_sym *s = ptx_map_get(&p->fsyms, buf, d + 1);
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
    if (r && idx < r->count) return r->base + idx;
  }
  ptx_sym *s = ptx_map_get(&p->fsyms, t->text, t->len);
  if (s && s->kind == PTX_SYM_REG && !s->reg->range) return s->reg->base;
  return PTX_NONE;
}

/* A special register: %tid.x, %laneid, %envreg3, %pm2_64.  Sets sreg and
 * comp; false if the name is none. */
static bool find_sreg(ptx_parser *p, const ptx_tok *t, uint16_t *sreg, uint16_t *comp) {
  const ptx_map *m = &p->sregs;
  void *v = ptx_map_get(m, t->text, t->len);
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
  v = ptx_map_get(m, buf, bl);
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

/* A register operand, with the p of a d|p pair. */
static void reg_operand(ptx_parser *p, opnd *o, uint32_t v) {
  o->kind = O_REG;
  o->var = v;
  if (p->tok.kind != PTX_TOK_PIPE) return;
  ptx_next(p);
  ptx_tok t2 = p->tok;
  if (t2.kind != PTX_TOK_IDENT) ptx_expected(p, "a predicate register");
  ptx_next(p);
  o->var2 = find_reg(p, &t2);
  if (o->var2 == PTX_NONE && !PTX_TOK_IS(&t2, "_"))
    ptx_fail(p, &t2, "undeclared register '%.*s'", (int)t2.len, t2.text);
}

/* scalar := ['!'] reg ['|' reg] | sreg ['.' comp] | ['-'] number
 *         | name ['+' constexpr] | '_'                            */
static void scalar(ptx_parser *p, opnd *o) {
  /* Every field a reader looks at for the kind it finds is set below;
   * neg and off are read for any kind. */
  o->neg = 0;
  o->off = 0;
  o->var2 = PTX_NONE;
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
    uint32_t v = find_reg(p, &t);
    if (v != PTX_NONE) {
      reg_operand(p, o, v);
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
    o->kind = O_SINK;
    return;
  }
  ptx_sym *s = ptx_map_get(&p->fsyms, t.text, t.len);
  if (!s) s = ptx_map_get(&p->syms, t.text, t.len);
  if (s && s->kind == PTX_SYM_REG && !s->reg->range) {
    reg_operand(p, o, s->reg->base);
    return;
  }
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
static void operand(ptx_parser *p, ins *I, opnd *o) {
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
        scalar(p, &tmp[n++]);
      } while (ptx_accept(p, PTX_TOK_COMMA));
    }
    ptx_expect(p, PTX_TOK_RPAREN, "',' or ')'");
    o->first = I->npool;
    o->n = n;
    for (uint32_t i = 0; i < n; i++) pool_add(p, I, &tmp[i]);
    return;
  }
  default: scalar(p, o); return;
  }
}

/* ---- values -------------------------------------------------------------- */

static ir_type var_type(ptx_parser *p, uint32_t var) { return (ir_type)p->ssa.var_type[var]; }

/* An immediate of type t from a literal as written. */
static ir_value *imm_value(ptx_parser *p, const opnd *o, ir_type t) {
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
  if (!v) PW_DIE("out of memory");
  return v;
}

/* The value of a scalar operand read as type t. */
static ir_value *value(ptx_parser *p, const opnd *o, ir_type t) {
  switch ((okind)o->kind) {
  case O_REG: {
    ir_value *v = ptx_ssa_read(p, o->var);
    if (o->neg) {
      if (p->ssa.var_type[o->var] != ir_type_pred)
        ptx_fail(p, &o->tok, "'!' applies to a .pred register");
      v = ir_alu1(&p->b, ir_op_not, ir_type_pred, v);
    }
    return v;
  }
  case O_SREG: return ir_read_sreg(&p->b, (ir_sreg)o->sreg, o->comp);
  case O_IMM: return imm_value(p, o, t == ir_type_none ? ir_type_b32 : t);
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

/* ---- modifiers --------------------------------------------------------------- */

static ir_type mod_type(uint16_t m) {
  return m >= ptx_mod_type && m < ptx_mod_type + ir_type_count ? (ir_type)(m - ptx_mod_type) : ir_type_none;
}

static bool is_cmp_op(ir_op op) { return op == ir_op_setp || op == ir_op_set || op == ir_op_slct; }
static bool is_mul_op(ir_op op) {
  return op == ir_op_mul || op == ir_op_mad || op == ir_op_mul24 || op == ir_op_mad24 ||
         op == ir_op_madc;
}
static bool is_atomic_op(ir_op op) {
  return op == ir_op_atom || op == ir_op_red || op == ir_op_redux || op == ir_op_bar_red ||
         op == ir_op_multimem_ld_reduce || op == ir_op_multimem_red || op == ir_op_red_async ||
         op == ir_op_cp_reduce_async_bulk || op == ir_op_cp_reduce_async_bulk_tensor;
}

/* Gives each modifier its meaning for this op.  False if one is unknown
 * here (the instruction is then kept opaque). */
static bool decode_mods(ptx_parser *p, ins *I) {
  ir_mods *m = &I->m;
  ir_op op = I->op;
  for (uint32_t i = 0; i < I->nmods; i++) {
    uint16_t md = I->mods[i];
    ir_type t = mod_type(md);
    if (t != ir_type_none) {
      if (I->ntypes == 0) I->type = t;
      else if (I->ntypes == 1) I->type2 = t;
      else if (I->ntypes == 2) I->type3 = t;
      else if (I->ntypes == 3) I->type4 = t;
      else return false;
      I->ntypes++;
      continue;
    }
    switch ((ptx_mod)md) {
    case ptx_mod_rn: m->rnd = IR_RND_RN; break;
    case ptx_mod_rz: m->rnd = IR_RND_RZ; break;
    case ptx_mod_rm: m->rnd = IR_RND_RM; break;
    case ptx_mod_rp: m->rnd = IR_RND_RP; break;
    case ptx_mod_rna: m->rnd = IR_RND_RNA; break;
    case ptx_mod_rs: m->rnd = IR_RND_RS; break;
    case ptx_mod_rni: m->rnd = IR_RND_RNI; break;
    case ptx_mod_rzi: m->rnd = IR_RND_RZI; break;
    case ptx_mod_rmi: m->rnd = IR_RND_RMI; break;
    case ptx_mod_rpi: m->rnd = IR_RND_RPI; break;
    case ptx_mod_ftz: m->ftz = 1; break;
    case ptx_mod_sat: m->sat = 1; break;
    case ptx_mod_approx: m->approx = 1; break;
    case ptx_mod_full: m->full = 1; break;
    case ptx_mod_satfinite: m->satfinite = 1; break;
    case ptx_mod_relu: m->relu = 1; break;
    case ptx_mod_NaN: m->nan = 1; break;
    case ptx_mod_noftz: m->noftz_f16 = 1; break;
    case ptx_mod_xorsign: m->xorsign = 1; break;
    case ptx_mod_abs: m->absmod = 1; break;
    case ptx_mod_eq: m->cmp = IR_CMP_EQ; break;
    case ptx_mod_ne: m->cmp = IR_CMP_NE; break;
    case ptx_mod_lt: m->cmp = IR_CMP_LT; break;
    case ptx_mod_le: m->cmp = IR_CMP_LE; break;
    case ptx_mod_gt: m->cmp = IR_CMP_GT; break;
    case ptx_mod_ge: m->cmp = IR_CMP_GE; break;
    case ptx_mod_ls: m->cmp = IR_CMP_LS; break;
    case ptx_mod_hs: m->cmp = IR_CMP_HS; break;
    case ptx_mod_equ: m->cmp = IR_CMP_EQU; break;
    case ptx_mod_neu: m->cmp = IR_CMP_NEU; break;
    case ptx_mod_ltu: m->cmp = IR_CMP_LTU; break;
    case ptx_mod_leu: m->cmp = IR_CMP_LEU; break;
    case ptx_mod_gtu: m->cmp = IR_CMP_GTU; break;
    case ptx_mod_geu: m->cmp = IR_CMP_GEU; break;
    case ptx_mod_num: m->cmp = IR_CMP_NUM; break;
    case ptx_mod_nan: m->cmp = IR_CMP_NAN; break;
    case ptx_mod_lo:
      if (is_cmp_op(op)) m->cmp = IR_CMP_LO;
      else if (is_mul_op(op)) m->mulmode = IR_MUL_LO;
      else if (op == ir_op_dp2a) m->dp_hi = 0;
      else return false;
      break;
    case ptx_mod_hi:
      if (is_cmp_op(op)) m->cmp = IR_CMP_HI;
      else if (is_mul_op(op)) m->mulmode = IR_MUL_HI;
      else if (op == ir_op_dp2a) m->dp_hi = 1;
      else return false;
      break;
    case ptx_mod_wide: m->mulmode = IR_MUL_WIDE; break;
    case ptx_mod_cc: m->cc = 1; break;
    case ptx_mod_and:
    case ptx_mod_or:
    case ptx_mod_xor:
      if (is_cmp_op(op))
        m->boolop = md == ptx_mod_and ? IR_BOOL_AND : md == ptx_mod_or ? IR_BOOL_OR : IR_BOOL_XOR;
      else if (is_atomic_op(op))
        m->atomop = md == ptx_mod_and ? IR_ATOM_AND : md == ptx_mod_or ? IR_ATOM_OR : IR_ATOM_XOR;
      else return false;
      break;
    case ptx_mod_add: m->atomop = IR_ATOM_ADD; break;
    case ptx_mod_min: m->atomop = IR_ATOM_MIN; break;
    case ptx_mod_max: m->atomop = IR_ATOM_MAX; break;
    case ptx_mod_inc: m->atomop = IR_ATOM_INC; break;
    case ptx_mod_dec: m->atomop = IR_ATOM_DEC; break;
    case ptx_mod_exch: m->atomop = IR_ATOM_EXCH; break;
    case ptx_mod_cas: m->atomop = IR_ATOM_CAS; break;
    case ptx_mod_popc: m->atomop = IR_ATOM_POPC; break;
    case ptx_mod_global:
    case ptx_mod_shared:
    case ptx_mod_shared_cta:
    case ptx_mod_shared_cluster:
    case ptx_mod_local:
    case ptx_mod_const:
    case ptx_mod_param:
    case ptx_mod_param_entry:
    case ptx_mod_param_func:
    case ptx_mod_texspace: {
      static const uint8_t sp[] = {
          [ptx_mod_global] = IR_SPACE_GLOBAL, [ptx_mod_shared] = IR_SPACE_SHARED,
          [ptx_mod_shared_cta] = IR_SPACE_SHARED_CTA, [ptx_mod_shared_cluster] = IR_SPACE_SHARED_CLUSTER,
          [ptx_mod_local] = IR_SPACE_LOCAL, [ptx_mod_const] = IR_SPACE_CONST,
          [ptx_mod_param] = IR_SPACE_PARAM, [ptx_mod_param_entry] = IR_SPACE_PARAM_ENTRY,
          [ptx_mod_param_func] = IR_SPACE_PARAM_FUNC, [ptx_mod_texspace] = IR_SPACE_TEX};
      /* Copies name the destination's space first (cp.async.shared.global):
       * the first is kept; the source's follows from the op. */
      if (m->space && (op == ir_op_cp_async || op == ir_op_cp_async_bulk ||
                       op == ir_op_cp_async_bulk_tensor || op == ir_op_cp_reduce_async_bulk ||
                       op == ir_op_cp_reduce_async_bulk_tensor))
        break;
      m->space = sp[md];
      break;
    }
    case ptx_mod_weak: m->sem = IR_SEM_WEAK; break;
    case ptx_mod_volatile: m->sem = IR_SEM_VOLATILE; break;
    case ptx_mod_relaxed: m->sem = IR_SEM_RELAXED; break;
    case ptx_mod_acquire: m->sem = IR_SEM_ACQUIRE; break;
    case ptx_mod_release: m->sem = IR_SEM_RELEASE; break;
    case ptx_mod_acq_rel: m->sem = IR_SEM_ACQ_REL; break;
    case ptx_mod_sc: m->sem = IR_SEM_SC; break;
    case ptx_mod_mmio: m->sem = IR_SEM_MMIO; break;
    case ptx_mod_cta: m->scope = IR_SCOPE_CTA; break;
    case ptx_mod_cluster: m->scope = IR_SCOPE_CLUSTER; break;
    case ptx_mod_gpu: m->scope = IR_SCOPE_GPU; break;
    case ptx_mod_sys: m->scope = IR_SCOPE_SYS; break;
    case ptx_mod_gl: /* membar.gl is membar at GPU scope (9.7.13.4) */
      if (op != ir_op_membar) return false;
      m->scope = IR_SCOPE_GPU;
      break;
    case ptx_mod_ca: m->cache = IR_CACHE_CA; break;
    case ptx_mod_cg: m->cache = IR_CACHE_CG; break;
    case ptx_mod_cs: m->cache = IR_CACHE_CS; break;
    case ptx_mod_lu: m->cache = IR_CACHE_LU; break;
    case ptx_mod_cv: m->cache = IR_CACHE_CV; break;
    case ptx_mod_wb: m->cache = IR_CACHE_WB; break;
    case ptx_mod_wt: m->cache = IR_CACHE_WT; break;
    case ptx_mod_nc: m->nc = 1; break;
    case ptx_mod_L1_evict_normal: m->l1evict = IR_EVICT_NORMAL; break;
    case ptx_mod_L1_evict_unchanged: m->l1evict = IR_EVICT_UNCHANGED; break;
    case ptx_mod_L1_evict_first: m->l1evict = IR_EVICT_FIRST; break;
    case ptx_mod_L1_evict_last: m->l1evict = IR_EVICT_LAST; break;
    case ptx_mod_L1_no_allocate: m->l1evict = IR_EVICT_NO_ALLOCATE; break;
    case ptx_mod_L2_evict_normal: m->l2evict = IR_EVICT_NORMAL; break;
    case ptx_mod_L2_evict_unchanged: m->l2evict = IR_EVICT_UNCHANGED; break;
    case ptx_mod_L2_evict_first: m->l2evict = IR_EVICT_FIRST; break;
    case ptx_mod_L2_evict_last: m->l2evict = IR_EVICT_LAST; break;
    case ptx_mod_L2_64B: m->l2prefetch = 1; break;
    case ptx_mod_L2_128B: m->l2prefetch = 2; break;
    case ptx_mod_L2_256B: m->l2prefetch = 4; break;
    case ptx_mod_L2_cache_hint: m->has_cache_hint = 1; break;
    case ptx_mod_v2: m->vec = 2; break;
    case ptx_mod_v4: m->vec = 4; break;
    case ptx_mod_v8: m->vec = 8; break;
    case ptx_mod_sync: m->sync = 1; break;
    case ptx_mod_aligned: m->aligned = 1; break;
    case ptx_mod_uni:
      if (op == ir_op_vote) m->vote = IR_VOTE_UNI;
      else m->uni = 1;
      break;
    case ptx_mod_arrive: m->barmode = IR_BAR_ARRIVE; break;
    case ptx_mod_red:
      /* bar.red is its own op; the word names it */
      if (op != ir_op_bar_red) return false;
      break;
    case ptx_mod_wait:
      if (op == ir_op_griddepcontrol) m->gdc = IR_GDC_WAIT;
      else if (op == ir_op_bar || op == ir_op_barrier_cluster) m->barmode = IR_BAR_WAIT;
      else return false;
      break;
    case ptx_mod_up: m->shfl = IR_SHFL_UP; break;
    case ptx_mod_down: m->shfl = IR_SHFL_DOWN; break;
    case ptx_mod_bfly: m->shfl = IR_SHFL_BFLY; break;
    case ptx_mod_idx:
      if (op != ir_op_shfl) return false;
      m->shfl = IR_SHFL_IDX;
      break;
    case ptx_mod_all:
      if (op == ir_op_vote) m->vote = IR_VOTE_ALL;
      else if (op == ir_op_match) m->match = IR_MATCH_ALL;
      else return false;
      break;
    case ptx_mod_any:
      if (op == ir_op_vote) m->vote = IR_VOTE_ANY;
      else if (op == ir_op_match) m->match = IR_MATCH_ANY;
      else return false;
      break;
    case ptx_mod_ballot:
      if (op != ir_op_vote) return false;
      m->vote = IR_VOTE_BALLOT;
      break;
    case ptx_mod_to: m->cvta_to = 1; break;
    case ptx_mod_shiftamt: m->bfind_shiftamt = 1; break;
    case ptx_mod_f4e: m->prmt = IR_PRMT_F4E; break;
    case ptx_mod_b4e: m->prmt = IR_PRMT_B4E; break;
    case ptx_mod_rc8: m->prmt = IR_PRMT_RC8; break;
    case ptx_mod_ecl: m->prmt = IR_PRMT_ECL; break;
    case ptx_mod_ecr: m->prmt = IR_PRMT_ECR; break;
    case ptx_mod_rc16: m->prmt = IR_PRMT_RC16; break;
    case ptx_mod_finite: m->testp = IR_TESTP_FINITE; break;
    case ptx_mod_infinite: m->testp = IR_TESTP_INFINITE; break;
    case ptx_mod_number: m->testp = IR_TESTP_NUMBER; break;
    case ptx_mod_notanumber: m->testp = IR_TESTP_NOTANUMBER; break;
    case ptx_mod_normal: m->testp = IR_TESTP_NORMAL; break;
    case ptx_mod_subnormal: m->testp = IR_TESTP_SUBNORMAL; break;
    case ptx_mod_l:
      if (op != ir_op_shf) return false;
      m->shf_left = 1;
      break;
    case ptx_mod_r:
      if (op == ir_op_tld4) m->texcomp = IR_TEXCOMP_R;
      else if (op == ir_op_shf) m->shf_left = 0;
      else return false;
      break;
    case ptx_mod_g:
      if (op != ir_op_tld4) return false;
      m->texcomp = IR_TEXCOMP_G;
      break;
    case ptx_mod_a:
      if (op == ir_op_tld4) m->texcomp = IR_TEXCOMP_A;
      else if (op == ir_op_wmma_load || op == ir_op_wmma_store) m->frag = IR_FRAG_A;
      else return false;
      break;
    case ptx_mod_b:
      if (op == ir_op_tld4) m->texcomp = IR_TEXCOMP_B;
      else if (op == ir_op_wmma_load || op == ir_op_wmma_store) m->frag = IR_FRAG_B;
      else if (op == ir_op_suld || op == ir_op_sust || op == ir_op_sured) m->surfmode = IR_SURF_B;
      else return false;
      break;
    case ptx_mod_p:
      if (op != ir_op_suld && op != ir_op_sust && op != ir_op_sured) return false;
      m->surfmode = IR_SURF_P;
      break;
    case ptx_mod_c:
      if (op != ir_op_wmma_load && op != ir_op_wmma_store) return false;
      m->frag = IR_FRAG_C;
      break;
    case ptx_mod_d:
      if (op != ir_op_wmma_load && op != ir_op_wmma_store) return false;
      m->frag = IR_FRAG_D;
      break;
    case ptx_mod_clamp:
      if (op == ir_op_shf || op == ir_op_vshl || op == ir_op_vshr || op == ir_op_bmsk ||
          op == ir_op_szext)
        m->shf_clamp = 1;
      else if (op == ir_op_suld || op == ir_op_sust || op == ir_op_sured) m->clampmode = IR_CLAMP_CLAMP;
      else return false;
      break;
    case ptx_mod_wrap:
      if (op != ir_op_shf && op != ir_op_vshl && op != ir_op_vshr && op != ir_op_bmsk &&
          op != ir_op_szext)
        return false;
      m->shf_clamp = 0;
      break;
    case ptx_mod_trap:
      if (op != ir_op_suld && op != ir_op_sust && op != ir_op_sured) return false;
      m->clampmode = IR_CLAMP_TRAP;
      break;
    case ptx_mod_zero:
      if (op != ir_op_suld && op != ir_op_sust && op != ir_op_sured) return false;
      m->clampmode = IR_CLAMP_ZERO;
      break;
    case ptx_mod_g1d: m->geom = IR_GEOM_1D; break;
    case ptx_mod_g2d: m->geom = IR_GEOM_2D; break;
    case ptx_mod_g3d: m->geom = IR_GEOM_3D; break;
    case ptx_mod_a1d: m->geom = IR_GEOM_A1D; break;
    case ptx_mod_a2d: m->geom = IR_GEOM_A2D; break;
    case ptx_mod_cube: m->geom = IR_GEOM_CUBE; break;
    case ptx_mod_acube: m->geom = IR_GEOM_ACUBE; break;
    case ptx_mod_g2dms: m->geom = IR_GEOM_2DMS; break;
    case ptx_mod_a2dms: m->geom = IR_GEOM_A2DMS; break;
    case ptx_mod_base: m->texlod = IR_TEXLOD_BASE; break;
    case ptx_mod_level: m->texlod = IR_TEXLOD_LEVEL; break;
    case ptx_mod_grad: m->texlod = IR_TEXLOD_GRAD; break;
    case ptx_mod_width: m->query = IR_QUERY_WIDTH; break;
    case ptx_mod_height: m->query = IR_QUERY_HEIGHT; break;
    case ptx_mod_depth: m->query = IR_QUERY_DEPTH; break;
    case ptx_mod_channel_data_type: m->query = IR_QUERY_CHANNEL_DATA_TYPE; break;
    case ptx_mod_channel_order: m->query = IR_QUERY_CHANNEL_ORDER; break;
    case ptx_mod_normalized_coords: m->query = IR_QUERY_NORMALIZED_COORDS; break;
    case ptx_mod_filter_mode: m->query = IR_QUERY_FILTER_MODE; break;
    case ptx_mod_addr_mode_0: m->query = IR_QUERY_ADDR_MODE_0; break;
    case ptx_mod_addr_mode_1: m->query = IR_QUERY_ADDR_MODE_1; break;
    case ptx_mod_addr_mode_2: m->query = IR_QUERY_ADDR_MODE_2; break;
    case ptx_mod_array_size: m->query = IR_QUERY_ARRAY_SIZE; break;
    case ptx_mod_num_mipmap_levels: m->query = IR_QUERY_NUM_MIPMAP_LEVELS; break;
    case ptx_mod_num_samples: m->query = IR_QUERY_NUM_SAMPLES; break;
    case ptx_mod_force_unnormalized_coords: m->query = IR_QUERY_FORCE_UNNORMALIZED_COORDS; break;
    case ptx_mod_row:
      m->layout = m->layout == IR_LAYOUT_ROW ? IR_LAYOUT_ROW_ROW
                  : m->layout == IR_LAYOUT_COL ? IR_LAYOUT_COL_ROW : IR_LAYOUT_ROW;
      break;
    case ptx_mod_col:
      m->layout = m->layout == IR_LAYOUT_ROW ? IR_LAYOUT_ROW_COL
                  : m->layout == IR_LAYOUT_COL ? IR_LAYOUT_COL_COL : IR_LAYOUT_COL;
      break;
    case ptx_mod_x1: m->vec = 1; break;
    case ptx_mod_x2: m->vec = 2; break;
    case ptx_mod_x4: m->vec = 4; break;
    case ptx_mod_trans: m->trans = 1; break;
    case ptx_mod_acc_f32: m->acc_f32 = 1; break;
    case ptx_mod_launch_dependents: m->gdc = IR_GDC_LAUNCH_DEPENDENTS; break;
    case ptx_mod_m8n8k4: m->shape = IR_SHAPE_M8N8K4; break;
    case ptx_mod_m8n8k16: m->shape = IR_SHAPE_M8N8K16; break;
    case ptx_mod_m8n8k32: m->shape = IR_SHAPE_M8N8K32; break;
    case ptx_mod_m8n8k128: m->shape = IR_SHAPE_M8N8K128; break;
    case ptx_mod_m16n8k4: m->shape = IR_SHAPE_M16N8K4; break;
    case ptx_mod_m16n8k8: m->shape = IR_SHAPE_M16N8K8; break;
    case ptx_mod_m16n8k16: m->shape = IR_SHAPE_M16N8K16; break;
    case ptx_mod_m16n8k32: m->shape = IR_SHAPE_M16N8K32; break;
    case ptx_mod_m16n8k64: m->shape = IR_SHAPE_M16N8K64; break;
    case ptx_mod_m16n8k128: m->shape = IR_SHAPE_M16N8K128; break;
    case ptx_mod_m16n8k256: m->shape = IR_SHAPE_M16N8K256; break;
    case ptx_mod_m16n16k8: m->shape = IR_SHAPE_M16N16K8; break;
    case ptx_mod_m16n16k16: m->shape = IR_SHAPE_M16N16K16; break;
    case ptx_mod_m32n8k16: m->shape = IR_SHAPE_M32N8K16; break;
    case ptx_mod_m8n32k16: m->shape = IR_SHAPE_M8N32K16; break;
    case ptx_mod_m8n8: m->shape = IR_SHAPE_M8N8; break;
    case ptx_mod_m16n16: m->shape = IR_SHAPE_M16N16; break;
    case ptx_mod_m8n16: m->shape = IR_SHAPE_M8N16; break;
    case ptx_mod_m16n8: m->shape = IR_SHAPE_M16N8; break;
    case ptx_mod_proxy:
      if (op != ir_op_fence) return false;
      if (!m->proxy) m->proxy = IR_PROXY_GENERIC;
      break;
    case ptx_mod_alias: m->proxy = IR_PROXY_ALIAS; break;
    case ptx_mod_async: m->proxy = IR_PROXY_ASYNC; break;
    case ptx_mod_async_global: m->proxy = IR_PROXY_ASYNC_GLOBAL; break;
    case ptx_mod_async_shared_cta: m->proxy = IR_PROXY_ASYNC_SHARED_CTA; break;
    case ptx_mod_async_shared_cluster: m->proxy = IR_PROXY_ASYNC_SHARED_CLUSTER; break;
    case ptx_mod_tensormap_generic: m->proxy = IR_PROXY_TENSORMAP; break;
    default: return false;
    }
  }
  if (op == ir_op_dp4a || op == ir_op_dp2a) {
    /* dp4a.atype.btype: the result is .s32 if either is signed (9.7.1.23) */
    if (I->ntypes != 2) return false;
    m->signed_a = ir_type_kind_of(I->type) == IR_TK_SINT;
    m->signed_b = ir_type_kind_of(I->type2) == IR_TK_SINT;
    I->type = (m->signed_a || m->signed_b) ? ir_type_s32 : ir_type_u32;
    I->type2 = ir_type_none;
  }
  return true;
}

/* ---- building ------------------------------------------------------------ */

/* The type an immediate in source position `pos` is read as. */
static ir_type src_type(const ins *I, unsigned pos) {
  ir_type t = I->type != ir_type_none ? I->type : ir_type_b32;
  switch (I->op) {
  case ir_op_shl: case ir_op_shr: return pos == 1 ? ir_type_u32 : t;
  case ir_op_shf: return pos == 2 ? ir_type_u32 : ir_type_b32;
  case ir_op_bfe: return pos >= 1 ? ir_type_u32 : t;
  case ir_op_bfi: return pos >= 2 ? ir_type_u32 : t;
  case ir_op_selp: return pos == 2 ? ir_type_pred : t;
  case ir_op_slct: return pos == 2 ? I->type2 : t;
  case ir_op_set: return pos == 2 ? ir_type_pred : I->type2;
  case ir_op_setp: return pos == 2 ? ir_type_pred : t;
  case ir_op_cvt: return I->type2 != ir_type_none ? I->type2 : t;
  case ir_op_lop3: case ir_op_prmt: return ir_type_b32;
  case ir_op_shfl: return pos == 0 ? t : ir_type_b32;
  case ir_op_vote: return pos == 0 ? ir_type_pred : ir_type_b32;
  case ir_op_match: return pos == 0 ? t : ir_type_b32;
  case ir_op_redux: return pos == 0 ? t : ir_type_b32;
  case ir_op_bar: case ir_op_nanosleep: case ir_op_cp_async_wait_group:
  case ir_op_cp_async_bulk_wait_group: case ir_op_wgmma_wait_group: return ir_type_u32;
  case ir_op_bar_warp_sync: return ir_type_b32;
  case ir_op_bar_red: return ir_type_u32;
  case ir_op_dp4a: case ir_op_dp2a: return pos == 2 ? I->type : ir_type_b32;
  /* the stride after the address (load) or the fragment (store) */
  case ir_op_wmma_load: return pos >= 1 ? ir_type_b32 : t;
  case ir_op_wmma_store: return pos >= 2 ? ir_type_b32 : t;
  /* [handle, {coordinates}] then lod, gradients: coordinates of type2 */
  case ir_op_tex: case ir_op_tld4: return pos == 1 && I->type2 ? I->type2 : ir_type_f32;
  case ir_op_suld: case ir_op_sust: case ir_op_sured: return pos == 1 ? ir_type_s32 : t;
  default: return t;
  }
}

/* Result and source lists: only the first n entries are ever read, so
 * they are not cleared (they are built per instruction). */
typedef struct dstlist {
  uint32_t n;
  uint32_t var[64];        /* PTX_NONE for '_' */
  ir_type type[64];
} dstlist;

static void dst_add(ptx_parser *p, dstlist *d, const opnd *o, ir_type dflt) {
  if (d->n >= 64) ptx_fail(p, &o->tok, "too many results");
  if (o->kind == O_SINK) {
    d->var[d->n] = PTX_NONE;
    d->type[d->n++] = dflt == ir_type_none ? ir_type_b32 : dflt;
    return;
  }
  if (o->kind != O_REG || o->neg)
    ptx_fail(p, &o->tok, "a result must be a register");
  d->var[d->n] = o->var;
  d->type[d->n++] = var_type(p, o->var);
}

/* Results from one operand: a register, a d|p pair, or a vector. */
static void dsts_of(ptx_parser *p, ins *I, const opnd *o, dstlist *d, ir_type dflt) {
  if (o->kind == O_VEC) {
    for (uint32_t i = 0; i < o->n; i++) dst_add(p, d, &I->pool[o->first + i], dflt);
    return;
  }
  dst_add(p, d, o, dflt);
  if (o->kind == O_REG && o->var2 != PTX_NONE) {
    d->var[d->n] = o->var2;
    d->type[d->n++] = var_type(p, o->var2);
  } else if (o->kind == O_REG && o->var2 == PTX_NONE && o->tok.kind == PTX_TOK_IDENT) {
    /* d|_ leaves var2 NONE: nothing to add */
  }
}

typedef struct srclist {
  uint32_t n;
  ir_value *v[96];
  bool have_off;
  int64_t off;
} srclist;

static void src_push(ptx_parser *p, srclist *s, ir_value *v, const ptx_tok *at) {
  if (s->n >= 96) ptx_fail(p, at, "too many operands");
  s->v[s->n++] = v;
}

/* Sources from one operand: scalars, vectors flattened, an address's base
 * (its offset goes to instr->offset for the first address; later ones add
 * it explicitly) and its other components. */
static void srcs_of(ptx_parser *p, ins *I, const opnd *o, srclist *s, unsigned *pos) {
  switch ((okind)o->kind) {
  case O_VEC:
    for (uint32_t i = 0; i < o->n; i++) {
      const opnd *e = &I->pool[o->first + i];
      if (e->kind == O_SINK) {
        src_push(p, s, ir_undef(&p->b, src_type(I, *pos)), &e->tok);
      } else {
        src_push(p, s, value(p, e, src_type(I, *pos)), &e->tok);
      }
    }
    (*pos)++;
    return;
  case O_ADDR: {
    const opnd *b = &I->pool[o->first];
    ir_value *base;
    if (b->kind == O_IMM) base = ir_imm(&p->b, ir_type_u64, b->imm);
    else if (b->kind == O_LABEL && o->n > 1) {
      /* [texref, ...] of a texture or surface declared by name */
      base = value(p, b, ir_type_u64);
    } else base = value(p, b, ir_type_u64);
    if (!s->have_off) {
      s->have_off = true;
      s->off = o->off;
    } else if (o->off) {
      base = ir_alu2(&p->b, ir_op_add, ir_type_u64, base, ir_imm(&p->b, ir_type_s64, (uint64_t)o->off));
    }
    src_push(p, s, base, &o->tok);
    for (uint32_t i = 1; i < o->n; i++) srcs_of(p, I, &I->pool[o->first + i], s, pos);
    (*pos)++;
    return;
  }
  case O_LIST:
    for (uint32_t i = 0; i < o->n; i++) srcs_of(p, I, &I->pool[o->first + i], s, pos);
    return;
  default:
    src_push(p, s, value(p, o, src_type(I, *pos)), &o->tok);
    (*pos)++;
    return;
  }
}

/* Reads what a guarded instruction keeps when its guard is false. */
static void read_keeps(ptx_parser *p, const dstlist *d, ir_value **keep) {
  for (uint32_t i = 0; i < d->n; i++)
    keep[i] = d->var[i] == PTX_NONE ? ir_undef(&p->b, d->type[i]) : ptx_ssa_read(p, d->var[i]);
}

/* A register's previous value kept by a guarded instruction must have its
 * result's type: the register may last have been written as another type
 * of the same width (add.u32 then @p add.f16x2 on one .b32): a copy, placed
 * before the instruction, reinterprets the bits. */
static ir_value *retype(ptx_parser *p, ir_instr *before, ir_value *keep, ir_type t) {
  if (!keep || keep->type == t || ir_type_bits((ir_type)keep->type) != ir_type_bits(t)) return keep;
  ir_builder b = ir_builder_before(before);
  b.loc = before->loc;
  return ir_alu1(&b, ir_op_copy, t, keep);
}

/* v, of the instruction's result type, as a value of register type t when
 * the widths differ: PTX lets a result be written to a wider register
 * (ld.u32 into a .b64: zero- or sign-extended by the type, 5.2.2 relaxed
 * type-checking) or a narrower one (the low bits).  The IR keeps types
 * exact: the conversion is an instruction of its own.  Floats are first
 * reinterpreted as bits of their width. */
static ir_value *fit_width(ptx_parser *p, ir_value *v, ir_type t, ir_value *guard, bool neg,
                           ir_value *keep) {
  static const ir_type uints[] = {[1] = ir_type_u8, [2] = ir_type_u16, [4] = ir_type_u32, [8] = ir_type_u64};
  static const ir_type sints[] = {[1] = ir_type_s8, [2] = ir_type_s16, [4] = ir_type_s32, [8] = ir_type_s64};
  static const ir_type bits[] = {[1] = ir_type_b8, [2] = ir_type_b16, [4] = ir_type_b32, [8] = ir_type_b64};
  unsigned from = ir_type_bits((ir_type)v->type) / 8, to = ir_type_bits(t) / 8;
  if (from == 0 || to == 0 || from > 8 || to > 8 || from == 3 || to == 3 || from > 4 + 4 ||
      !uints[from] || !uints[to])
    return v; /* pred, b128, sub-byte: nothing to do that PTX allows */
  ir_type_kind k = ir_type_kind_of((ir_type)v->type);
  if (k == IR_TK_FLOAT || k == IR_TK_PACKED_FLOAT) {
    v = ir_alu1(&p->b, ir_op_copy, bits[from], v);
    k = IR_TK_BITS;
  }
  bool sign = k == IR_TK_SINT && to > from;
  ir_type dt = sign ? sints[to] : uints[to], st = sign ? sints[from] : uints[from];
  ir_value *src[1] = {v};
  ir_type dtt = dt;  /* the cvt's own type: the register may be an .f32 of that width */
  ir_instr *c = ir_build(&p->b, ir_op_cvt, dt, 1, src, 1, &dtt, NULL);
  if (!c) PW_DIE("out of memory");
  c->type2 = (uint8_t)st;
  if (guard) {
    keep = retype(p, c, keep, dt);
    ir_instr_set_guard(&p->b, c, guard, neg, &keep);
  }
  return c->dst[0];
}

/* The operand and result counts the op's rule fixes (the verifier's
 * check_counts, in PTX's terms): a statement with the wrong number of
 * operands is an input error here, at its position, not an IR that fails
 * verification later. */
static void check_shape(ptx_parser *p, const ins *I, ir_op op, const dstlist *d, const srclist *s) {
  const ir_op_info *info = &ir_op_infos[op];
  const ir_mods *m = &I->m;
  unsigned vec = m->vec ? m->vec : 1, hint = m->has_cache_hint;
  unsigned want_src = info->nsrc, want_dst = info->ndst;
  switch (op) {
  case ir_op_add: case ir_op_sub: case ir_op_mad: case ir_op_addc: case ir_op_subc: case ir_op_madc:
    want_dst = 1u + m->cc;
    break;
  case ir_op_set: case ir_op_setp: want_src = 2u + (m->boolop != 0); break;
  case ir_op_ld: want_src = 1u + hint; want_dst = vec; break;
  case ir_op_ldu: want_dst = vec; break;
  case ir_op_st: want_src = 1u + vec + hint; break;
  case ir_op_atom: want_dst = vec; break;
  case ir_op_shfl: want_src = m->sync ? 4u : 3u; break;
  case ir_op_vote: want_src = 1u + m->sync; break;
  default: break;
  }
  if (want_src != IR_VAR && s->n != want_src)
    ptx_fail(p, &I->at, "'%.*s' takes %u source operands here, found %u", (int)I->at.len,
             I->at.text, want_src, s->n);
  if (want_dst != IR_VAR && d->n != want_dst)
    ptx_fail(p, &I->at, "'%.*s' takes %u results here, found %u", (int)I->at.len, I->at.text,
             want_dst, d->n);
  if ((op == ir_op_setp || op == ir_op_shfl) && (d->n < 1 || d->n > 2))
    ptx_fail(p, &I->at, "'%.*s' takes one result or a d|p pair", (int)I->at.len, I->at.text);
  if ((op == ir_op_atom || op == ir_op_red) && s->n < 2)
    ptx_fail(p, &I->at, "'%.*s' takes an address and a value", (int)I->at.len, I->at.text);
}

/* Operand k of op is a predicate (the IR's rule, ir_src_is_pred). */
static bool pred_operand(ir_op op, unsigned k, unsigned nsrc) {
  switch (op) {
  case ir_op_cbr: return k == 0;
  case ir_op_selp: case ir_op_set: case ir_op_setp: return k == 2;
  case ir_op_addc: case ir_op_subc: return k == 2;
  case ir_op_madc: return k == 3;
  case ir_op_vote: return k == 0;
  case ir_op_bar_red: return k + 1 == nsrc;
  default: return false;
  }
}

/* Predicates go where predicates are read and nowhere else in arithmetic
 * (and.b32 on a .pred register is an input error, and.pred is not). */
static void check_preds(ptx_parser *p, const ins *I, ir_op op, const srclist *s) {
  const ir_op_info *info = &ir_op_infos[op];
  bool arith = info->nsrc != IR_VAR && info->result == RES_TYPE && I->type != ir_type_pred &&
               op != ir_op_copy;
  for (unsigned k = 0; k < s->n; k++) {
    bool is_pred = s->v[k] && s->v[k]->type == ir_type_pred;
    if (pred_operand(op, k, s->n)) {
      if (!is_pred)
        ptx_fail(p, &I->at, "operand %u of '%.*s' must be a predicate", k + 1, (int)I->at.len,
                 I->at.text);
    } else if (arith && is_pred) {
      ptx_fail(p, &I->at, "operand %u of '%.*s' is a predicate", k + 1, (int)I->at.len, I->at.text);
    }
  }
}

/* Builds op with these results and sources, guards it, and writes its
 * results to their registers.  Results take the op's types (the opcode
 * table's rule); ops whose rule is "stated per instruction" take their
 * registers' types. */
static ir_instr *emit(ptx_parser *p, ins *I, ir_op op, const dstlist *d, const srclist *s) {
  ir_value *guard = NULL;
  ir_value *keep[64];
  if (I->guarded) {
    guard = ptx_ssa_read(p, I->guard_var);
    read_keeps(p, d, keep);
  }
  if (op != ir_op_opaque && op != ir_op_call) {
    check_shape(p, I, op, d, s);
    check_preds(p, I, op, s);
  }
  bool per_instr = ir_op_infos[op].result == RES_ANY;
  ir_instr *in = ir_build(&p->b, op, I->type, s->n, s->v, d->n, per_instr ? d->type : NULL, &I->m);
  if (!in) PW_DIE("out of memory");
  in->type2 = (uint8_t)I->type2;
  in->type3 = (uint8_t)I->type3;
  in->type4 = (uint8_t)I->type4;
  if (s->have_off) in->offset = s->off;  /* ir_build_mem's field, for any address */
  bool fit[64], any_fit = false;
  for (uint32_t i = 0; i < d->n; i++) {
    fit[i] = d->var[i] != PTX_NONE && ir_type_bits((ir_type)in->dst[i]->type) != ir_type_bits(d->type[i]);
    any_fit |= fit[i];
  }
  if (guard) {
    ir_value *k2[64];
    for (uint32_t i = 0; i < d->n; i++) k2[i] = fit[i] ? NULL : retype(p, in, keep[i], (ir_type)in->dst[i]->type);
    ir_instr_set_guard(&p->b, in, guard, I->guard_neg, k2);
  }
  for (uint32_t i = 0; i < d->n; i++) {
    if (d->var[i] == PTX_NONE) continue;
    ir_value *v = in->dst[i];
    if (fit[i]) v = fit_width(p, v, d->type[i], guard, I->guard_neg, guard ? keep[i] : NULL);
    ptx_ssa_write(p, d->var[i], v);
  }
  (void)any_fit;
  return in;
}

/* The spelling of the instruction as written: word.mod.mod */
static const char *spelling(ptx_parser *p, const ins *I) {
  size_t n = I->at.len;
  for (uint32_t i = 0; i < I->nmods; i++) n += I->mtok[i].len;
  char *s = pw_arena_alloc(&p->m->arena, n + 1);
  if (!s) PW_DIE("out of memory");
  /* the mnemonic words and modifiers are contiguous in the text */
  size_t k = 0;
  memcpy(s, I->at.text, I->at.len);
  k = I->at.len;
  for (uint32_t i = 0; i < I->nmods; i++) {
    memcpy(s + k, I->mtok[i].text, I->mtok[i].len);
    k += I->mtok[i].len;
  }
  s[k] = 0;
  return s;
}

/* An instruction kept verbatim: the first operand is its result when it
 * is a register or a vector and more operands follow. */
static void build_opaque(ptx_parser *p, ins *I) {
  dstlist d;
  d.n = 0;
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  unsigned pos = 0;
  uint32_t first = 0;
  I->m = (ir_mods){0};
  I->type = I->type2 = I->type3 = I->type4 = ir_type_none;
  I->op = ir_op_opaque;
  if (I->ntop > 1 && (I->top[0].kind == O_REG || I->top[0].kind == O_VEC || I->top[0].kind == O_SINK)) {
    dsts_of(p, I, &I->top[0], &d, ir_type_b32);
    first = 1;
  }
  for (uint32_t i = first; i < I->ntop; i++) {
    const opnd *o = &I->top[i];
    if (o->kind == O_LABEL) continue;
    if (o->kind == O_IMM) {
      /* No type suffix to read it by: the literal's own kind decides. */
      ir_type t = o->immk == IMM_F32 ? ir_type_f32
                  : o->immk == IMM_F64 ? ir_type_f64
                  : (o->imm >> 32) && ~o->imm >> 31 ? ir_type_b64 : ir_type_b32;
      src_push(p, &s, imm_value(p, o, t), &o->tok);
      continue;
    }
    srcs_of(p, I, o, &s, &pos);
  }
  ir_instr *in = emit(p, I, ir_op_opaque, &d, &s);
  in->opaque = spelling(p, I);
  p->stats.opaque++;
}

/* ---- control flow -------------------------------------------------------------- */

uint32_t ptx_label_block(ptx_parser *p, const ptx_tok *name) {
  void *v = ptx_map_get(&p->labels, name->text, name->len);
  if (v) return (uint32_t)(uintptr_t)v - 1;
  const char *nm = ptx_strdup_tok(p, name);
  uint32_t blk = ptx_ssa_new_block(p, nm, true, PTX_NONE);
  p->ssa.blocks[blk].first_ref = *name;
  ptx_map_put(&p->labels, nm, name->len, (void *)(uintptr_t)(blk + 1));
  return blk;
}

/* ret: a function returning through .reg parameters returns their current
 * values (7.1: .func (.reg .b32 r) f(...)), as ret's operands. */
ir_instr *ptx_build_ret(ptx_parser *p, bool uni) {
  ir_func *f = p->fn;
  ir_value *vals[64];
  uint32_t n = 0;
  for (uint32_t i = 0; i < f->nrets && n < 64; i++)
    if (f->rets[i].space == IR_SPACE_REG) vals[n++] = ptx_ssa_read(p, p->ret_var_base + i);
  ir_instr *r = n ? ir_build(&p->b, ir_op_ret, ir_type_none, n, vals, 0, NULL, NULL) : ir_ret(&p->b);
  r->mods.uni = uni;
  return r;
}

/* Ends the current block with a terminator built by `make`; under a guard
 * the terminator goes to a block of its own, reached by a conditional
 * branch, and the code after it falls through. */
static void guarded_terminator(ptx_parser *p, ins *I, ir_op op) {
  ptx_ssa *s = &p->ssa;
  if (I->guarded) {
    ir_value *g = ptx_ssa_read(p, I->guard_var);
    uint32_t cur = s->cur;
    uint32_t tblk = ptx_ssa_new_block(p, NULL, false, cur);
    uint32_t fblk = ptx_ssa_new_block(p, NULL, false, cur);
    ir_block *tb = s->blocks[tblk].block, *fb = s->blocks[fblk].block;
    if (I->guard_neg) ir_cbr(&p->b, g, fb, tb);
    else ir_cbr(&p->b, g, tb, fb);
    ptx_ssa_leave(p);
    ptx_ssa_enter(p, tblk);
    p->b.loc = (ir_loc){I->at.line, I->at.col};
    switch (op) {
    case ir_op_ret: ptx_build_ret(p, I->m.uni); break;
    case ir_op_exit: ir_exit(&p->b); break;
    default: ir_build(&p->b, op, ir_type_none, 0, NULL, 0, NULL, &I->m); break;
    }
    ptx_ssa_leave(p);
    ptx_ssa_enter(p, fblk);
    return;
  }
  switch (op) {
  case ir_op_ret: ptx_build_ret(p, I->m.uni); break;
  case ir_op_exit: ir_exit(&p->b); break;
  default: ir_build(&p->b, op, ir_type_none, 0, NULL, 0, NULL, &I->m); break;
  }
  ptx_ssa_leave(p);
}

/* bra[.uni] label  |  @p bra label */
static void build_bra(ptx_parser *p, ins *I) {
  if (I->ntop != 1 || I->top[0].kind != O_LABEL)
    ptx_fail(p, &I->at, "bra takes one label");
  uint32_t target = ptx_label_block(p, &I->top[0].tok);
  ptx_ssa *s = &p->ssa;
  ir_block *tb = s->blocks[target].block;
  if (I->guarded) {
    ir_value *g = ptx_ssa_read(p, I->guard_var);
    uint32_t fblk = ptx_ssa_new_block(p, NULL, false, s->cur);
    ir_block *fb = s->blocks[fblk].block;
    ir_instr *br = I->guard_neg ? ir_cbr(&p->b, g, fb, tb) : ir_cbr(&p->b, g, tb, fb);
    br->mods.uni = I->m.uni;
    ptx_ssa_leave(p);
    ptx_ssa_enter(p, fblk);
    return;
  }
  ir_instr *br = ir_br(&p->b, tb);
  br->mods.uni = I->m.uni;
  ptx_ssa_leave(p);
}

/* brx.idx index, tlist   where tlist: .branchtargets L1, L2, ... */
static void build_brx(ptx_parser *p, ins *I) {
  if (I->ntop != 2 || I->top[1].kind != O_LABEL) ptx_fail(p, &I->at, "brx.idx takes an index and a target list");
  const ptx_tok *tn = &I->top[1].tok;
  ptx_sym *s = ptx_map_get(&p->fsyms, tn->text, tn->len);
  if (!s || s->kind != PTX_SYM_TARGETS || s->targets->calls)
    ptx_fail(p, tn, "'%.*s' is not a .branchtargets list", (int)tn->len, tn->text);
  ir_value *idx = value(p, &I->top[0], ir_type_u32);
  ptx_targets *tg = s->targets;
  ir_block **blocks = PW_NEW_ARRAY(&p->fscratch, ir_block *, tg->n);
  for (uint32_t i = 0; i < tg->n; i++) blocks[i] = p->ssa.blocks[ptx_label_block(p, &tg->names[i])].block;
  if (I->guarded) {
    /* @p brx.idx: a conditional branch around it */
    ir_value *g = ptx_ssa_read(p, I->guard_var);
    ptx_ssa *ss = &p->ssa;
    uint32_t cur = ss->cur;
    uint32_t tblk = ptx_ssa_new_block(p, NULL, false, cur);
    uint32_t fblk = ptx_ssa_new_block(p, NULL, false, cur);
    ir_block *tb = ss->blocks[tblk].block, *fb = ss->blocks[fblk].block;
    if (I->guard_neg) ir_cbr(&p->b, g, fb, tb);
    else ir_cbr(&p->b, g, tb, fb);
    ptx_ssa_leave(p);
    ptx_ssa_enter(p, tblk);
    p->b.loc = (ir_loc){I->at.line, I->at.col};
    ir_brx(&p->b, idx, tg->n, blocks);
    ptx_ssa_leave(p);
    ptx_ssa_enter(p, fblk);
    return;
  }
  ir_brx(&p->b, idx, tg->n, blocks);
  ptx_ssa_leave(p);
}

/* call[.uni] [(ret)] , callee, [(args)] [, proto | targets]
 * Forms (9.7.12.4):  call f;  call f, (a, b);  call (r), f, (a);
 *                    call (r), %rd, (a), proto;  call %rd, (), proto; */
static void build_call(ptx_parser *p, ins *I) {
  uint32_t i = 0;
  const opnd *rets = NULL, *args = NULL, *callee = NULL;
  if (i < I->ntop && I->top[i].kind == O_LIST) rets = &I->top[i++];
  if (i >= I->ntop) ptx_fail(p, &I->at, "call needs a callee");
  callee = &I->top[i++];
  if (i < I->ntop && I->top[i].kind == O_LIST) args = &I->top[i++];
  const char *proto = NULL;
  ptx_targets *targets = NULL;
  if (i < I->ntop) {
    const opnd *pr = &I->top[i++];
    ptx_sym *s = pr->kind == O_LABEL ? ptx_map_get(&p->fsyms, pr->tok.text, pr->tok.len) : NULL;
    if (!s) s = pr->kind == O_LABEL ? ptx_map_get(&p->syms, pr->tok.text, pr->tok.len) : NULL;
    if (s && s->kind == PTX_SYM_PROTO) proto = s->proto->name;
    else if (s && s->kind == PTX_SYM_TARGETS && s->targets->calls) targets = s->targets;
    else ptx_fail(p, &pr->tok, "expected a .callprototype or .calltargets name");
  }
  if (i != I->ntop) ptx_fail(p, &I->top[i].tok, "too many call operands");
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  dstlist d;
  d.n = 0;
  unsigned pos = 0;
  /* callee */
  if (callee->kind == O_SYM && callee->sym->kind == PTX_SYM_FUNC) {
    src_push(p, &s, value(p, callee, ir_type_u64), &callee->tok);
  } else if (callee->kind == O_REG) {
    if (!proto && !targets) ptx_fail(p, &callee->tok, "an indirect call needs a prototype or a target list");
    src_push(p, &s, value(p, callee, ir_type_u64), &callee->tok);
  } else {
    ptx_fail(p, &callee->tok, "'%.*s' is not a function", (int)callee->tok.len, callee->tok.text);
  }
  /* Return operands that name .param variables are sources (the callee
   * writes them); register return operands are results. */
  uint16_t nret = 0;
  if (rets)
    for (uint32_t k = 0; k < rets->n; k++) {
      const opnd *r = &I->pool[rets->first + k];
      if (r->kind == O_REG || r->kind == O_SINK) dst_add(p, &d, r, ir_type_b32);
      else {
        srcs_of(p, I, r, &s, &pos);
        nret++;
      }
    }
  uint16_t narg = 0;
  if (args)
    for (uint32_t k = 0; k < args->n; k++) {
      srcs_of(p, I, &I->pool[args->first + k], &s, &pos);
      narg++;
    }
  ir_call_info *ci = PW_NEW(&p->m->arena, ir_call_info);
  if (!ci) PW_DIE("out of memory");
  ci->nret = nret;
  ci->narg = narg;
  ci->proto = proto;
  if (targets) {
    ci->targets = PW_NEW_ARRAY(&p->m->arena, ir_func *, targets->n);
    for (uint32_t k = 0; k < targets->n; k++) {
      ptx_sym *fs = ptx_map_get(&p->syms, targets->names[k].text, targets->names[k].len);
      if (!fs || fs->kind != PTX_SYM_FUNC)
        ptx_fail(p, &targets->names[k], "'%.*s' is not a function", (int)targets->names[k].len,
                 targets->names[k].text);
      ci->targets[k] = fs->func;
    }
    ci->ntargets = targets->n;
  }
  I->type = ir_type_none;
  ir_instr *in = emit(p, I, ir_op_call, &d, &s);
  in->aux = ci;
}

/* ---- mov ------------------------------------------------------------------- */

/* mov.t d, a  (a: register, immediate, special register, variable address)
 * mov.b64 d, {a, b}  (pack)     mov.b64 {a, b}, d  (unpack) */
static void build_mov(ptx_parser *p, ins *I) {
  if (I->ntop != 2) ptx_fail(p, &I->at, "mov takes two operands");
  const opnd *d0 = &I->top[0], *a = &I->top[1];
  dstlist d;
  d.n = 0;
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  unsigned pos = 0;
  if (d0->kind == O_VEC) {
    dsts_of(p, I, d0, &d, ir_type_none);
    srcs_of(p, I, a, &s, &pos);
    for (uint32_t i = 0; i < d.n; i++)
      if (d.var[i] == PTX_NONE) d.type[i] = ir_type_b32;
    emit(p, I, ir_op_unpack, &d, &s);
    return;
  }
  dsts_of(p, I, d0, &d, I->type);
  if (a->kind == O_VEC) {
    srcs_of(p, I, a, &s, &pos);
    emit(p, I, ir_op_pack, &d, &s);
    return;
  }
  if (a->kind == O_SREG && !I->guarded && d.var[0] != PTX_NONE) {
    /* mov.u32 %r, %tid.x is the read itself */
    ir_value *v = ir_read_sreg(&p->b, (ir_sreg)a->sreg, a->comp);
    if (!v) PW_DIE("out of memory");
    ptx_ssa_write(p, d.var[0], v);
    return;
  }
  if (a->kind == O_LABEL) {
    /* mov.u64 %rd, fn_or_label: only functions and variables have
     * addresses */
    ptx_fail(p, &a->tok, "undeclared name '%.*s'", (int)a->tok.len, a->tok.text);
  }
  srcs_of(p, I, a, &s, &pos);
  /* mov.u64 %rd, var: the address of a variable or function */
  emit(p, I, a->kind == O_SYM ? ir_op_symaddr : ir_op_copy, &d, &s);
}

/* ---- setp / set ---------------------------------------------------------------- */

/* setp.cmp[.bool].type p[|q], a, b [, {!}c]
 * set.cmp[.bool].dtype.stype d, a, b [, {!}c]  */
static void build_setp(ptx_parser *p, ins *I) {
  if (I->ntop < 3 || I->ntop > 4) ptx_fail(p, &I->at, "%s takes 3 or 4 operands", ir_op_infos[I->op].ptx);
  if ((I->ntop == 4) != (I->m.boolop != IR_BOOL_NONE))
    ptx_fail(p, &I->at, "a fourth operand goes with .and, .or or .xor");
  dstlist d;
  d.n = 0;
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  unsigned pos = 0;
  dsts_of(p, I, &I->top[0], &d, I->op == ir_op_setp ? ir_type_pred : I->type);
  for (uint32_t i = 1; i < I->ntop; i++) srcs_of(p, I, &I->top[i], &s, &pos);
  emit(p, I, I->op, &d, &s);
}

/* ---- the generic shape -------------------------------------------------------------- */

/* results first (when the op has any), then sources.  .cc adds the carry
 * result; addc/subc/madc read it as their last source. */
static void build_generic(ptx_parser *p, ins *I) {
  ir_op op = I->op;
  const ir_op_info *info = &ir_op_infos[op];
  dstlist d;
  d.n = 0;
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  unsigned pos = 0;
  uint32_t first = 0;
  bool has_result = info->result != RES_NONE && info->ndst != 0;
  if (has_result) {
    if (I->ntop == 0) ptx_fail(p, &I->at, "'%s' needs a result operand", info->ptx);
    const opnd *o = &I->top[0];
    if (o->kind == O_REG || o->kind == O_VEC || o->kind == O_SINK) {
      dsts_of(p, I, o, &d, I->type);
      first = 1;
    } else if (info->ndst != IR_VAR) {
      ptx_fail(p, &o->tok, "expected a result register");
    }
  }
  for (uint32_t i = first; i < I->ntop; i++) {
    if (I->top[i].kind == O_LABEL) ptx_fail(p, &I->top[i].tok, "undeclared name '%.*s'",
                                            (int)I->top[i].tok.len, I->top[i].tok.text);
    srcs_of(p, I, &I->top[i], &s, &pos);
  }
  bool carry_in = op == ir_op_addc || op == ir_op_subc || op == ir_op_madc;
  if (carry_in) src_push(p, &s, ptx_ssa_read(p, p->ssa.cc_var), &I->at);
  if (I->m.cc) {
    if (d.n >= 64) ptx_fail(p, &I->at, "too many results");
    d.var[d.n] = p->ssa.cc_var;
    d.type[d.n++] = ir_type_pred;
  }
  emit(p, I, op, &d, &s);
}

/* ---- the statement --------------------------------------------------------------------- */

void ptx_parse_instruction(ptx_parser *p) {
  ins *I = p->ins_buf;
  I->guarded = I->guard_neg = false;
  I->nmods = I->ntop = I->npool = 0;
  I->m = (ir_mods){0};
  I->type = I->type2 = I->type3 = I->type4 = ir_type_none;
  I->ntypes = 0;
  if (p->tok.kind == PTX_TOK_AT) {
    ptx_next(p);
    I->guarded = true;
    if (ptx_accept(p, PTX_TOK_BANG)) I->guard_neg = true;
    ptx_tok g = p->tok;
    if (g.kind != PTX_TOK_IDENT) ptx_expected(p, "a predicate register");
    I->guard_var = find_reg(p, &g);
    if (I->guard_var == PTX_NONE) ptx_fail(p, &g, "undeclared register '%.*s'", (int)g.len, g.text);
    if (var_type(p, I->guard_var) != ir_type_pred)
      ptx_fail(p, &g, "a guard must be a .pred register");
    ptx_next(p);
    if (p->tok.kind != PTX_TOK_IDENT) ptx_expected(p, "an instruction");
  }
  I->at = p->tok;
  p->b.loc = (ir_loc){I->at.line, I->at.col};
  p->stats.instrs++;
  opent *e = lookup_mnemonic(p, &I->at);
  ptx_next(p);
  /* modifiers, contiguous with the mnemonic */
  while (p->tok.kind == PTX_TOK_DOTWORD && !(p->tok.flags & PTX_TOKF_SPACE_BEFORE)) {
    if (I->nmods == MAX_MODS) ptx_fail(p, &p->tok, "too many modifiers");
    I->mtok[I->nmods] = p->tok;
    I->mods[I->nmods++] = (uint16_t)ptx_mod_of(p, &p->tok);
    ptx_next(p);
  }
  /* the longest mnemonic: cp + .async + .commit_group */
  ir_op op = ir_op_count;
  uint32_t words = 0;
  if (e) {
    op = (ir_op)e->op;
    if (e->flags & OPF_MULTI) {
      char buf[128];
      size_t n = I->at.len;
      if (n < sizeof buf) {
        memcpy(buf, I->at.text, n);
        for (uint32_t k = 0; k < I->nmods && k < 5; k++) {
          if (n + I->mtok[k].len >= sizeof buf) break;
          memcpy(buf + n, I->mtok[k].text, I->mtok[k].len);
          n += I->mtok[k].len;
          opent *e2 = ptx_map_get(&p->ops, buf, n);
          if (!e2) break;
          if (e2->op != ir_op_count) {
            op = (ir_op)e2->op;
            words = k + 1;
          }
          if (!(e2->flags & OPF_MULTI)) break;
        }
      }
    }
  }
  /* operands */
  if (p->tok.kind != PTX_TOK_SEMI) {
    do {
      if (I->ntop == MAX_TOP) ptx_fail(p, &p->tok, "too many operands");
      operand(p, I, &I->top[I->ntop++]);
    } while (ptx_accept(p, PTX_TOK_COMMA));
  }
  if (p->tok.kind != PTX_TOK_SEMI) ptx_expected(p, "',' or ';'");
  /* ';' is consumed after building, so errors point inside the statement */
  I->op = op;
  ptx_ssa_ensure_block(p);
  p->b.loc = (ir_loc){I->at.line, I->at.col};
  /* drop the mnemonic's own words from the modifiers */
  if (words) memmove(I->mods, I->mods + words, (I->nmods - words) * sizeof I->mods[0]);
  uint32_t nm = I->nmods - words;
  I->nmods = nm;
  /* A modifier the family does not know, or one its op does not take
   * (ld.ftz): kept as written, for lowering to name. */
  bool known = op != ir_op_count && op != ir_op_opaque && decode_mods(p, I) &&
               ir_mods_fit_op(op, &I->m);
  if (!known) {
    /* restore the words for the spelling */
    I->nmods = nm + words;
    build_opaque(p, I);
    ptx_next(p);
    return;
  }
  switch (op) {
  case ir_op_copy: build_mov(p, I); break;
  case ir_op_br: build_bra(p, I); break;
  case ir_op_brx: build_brx(p, I); break;
  case ir_op_call: build_call(p, I); break;
  case ir_op_ret:
  case ir_op_exit:
  case ir_op_trap:
    if (I->ntop) ptx_fail(p, &I->top[0].tok, "'%s' takes no operands", ir_op_infos[op].ptx);
    guarded_terminator(p, I, op);
    break;
  case ir_op_setp:
  case ir_op_set: build_setp(p, I); break;
  case ir_op_bar:
  case ir_op_bar_red:
    /* bar.sync and bar.red are barrier.sync.aligned and barrier.red
     * .aligned (9.7.13.1) */
    if (I->at.len == 3) I->m.aligned = 1;
    build_generic(p, I);
    break;
  default: build_generic(p, I); break;
  }
  ptx_next(p);
}
