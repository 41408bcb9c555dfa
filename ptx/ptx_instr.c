/* ptx/ptx_instr.c: PTX instructions (PTX ISA 9.1 chapter 9) to IR.
 *
 * A statement is read in three steps (the operand grammar is in
 * ptx_operand.c, the modifier decoder in ptx_modifier.c):
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

#include "ptx_instr.h"

/* ---- the mnemonic table ------------------------------------------------ */

enum { OPF_MULTI = 1 };  /* longer mnemonics start with this word */


static opent *opent_new(ptx_parser *p, uint16_t op) {
  opent *e = PW_NEW(&p->scratch, opent);
  if (!e) ptx_oom(p);
  e->op = op;
  return e;
}

static void add_mnemonic(ptx_parser *p, const char *s, ir_op op) {
  size_t n = strlen(s);
  opent *e = pw_map_str_get(&p->ops, s, n);
  if (!e) {
    e = opent_new(p, (uint16_t)op);
    pw_map_str_put(&p->ops, s, n, e);
  } else if (e->op == ir_op_count) {
    e->op = (uint16_t)op;
  }
  /* every proper prefix ending at a dot is marked MULTI */
  for (size_t i = 1; i < n; i++)
    if (s[i] == '.') {
      opent *pe = pw_map_str_get(&p->ops, s, i);
      if (!pe) {
        pe = opent_new(p, ir_op_count);
        pw_map_str_put(&p->ops, s, i, pe);
      }
      pe->flags |= OPF_MULTI;
    }
}

static struct ins *ins_alloc(ptx_parser *p) {
  ins *I = PW_NEW(&p->scratch, ins);
  if (!I) ptx_oom(p);
  return I;
}


void ptx_instr_init(ptx_parser *p) {
  pw_map_init(&p->ops, &p->scratch, 512);
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
  pw_map_init(&p->sregs, &p->scratch, 64);
  for (int s = 0; s < ir_sreg_count; s++) {
    const char *n = ir_sreg_infos[s].name;
    size_t l = strlen(n);
    char *k = pw_arena_alloc(&p->scratch, l + 2);
    k[0] = '%';
    memcpy(k + 1, n, l + 1);
    pw_map_str_put(&p->sregs, k, l + 1, (void *)(uintptr_t)(s + 1));
  }
  p->ins_buf = ins_alloc(p);
}

/* The first word's table entry, through a direct-mapped cache of words
 * up to 16 bytes compared as two machine words (one lookup per
 * instruction, a few dozen distinct words per module). */
static opent *lookup_mnemonic(ptx_parser *p, const ptx_tok *t) {
  if (t->len > 16) return pw_map_str_get(&p->ops, t->text, t->len);
  uint64_t k[2] = {0, 0};
  memcpy(k, t->text, t->len);
  uint64_t h = (k[0] * 0x9E3779B97F4A7C15ull) ^ (k[1] * 0xC2B2AE3D27D4EB4Full) ^ t->len;
  uint32_t slot = (uint32_t)(h >> 58) & 63;
  if (p->opcache[slot].len == t->len && p->opcache[slot].k0 == k[0] && p->opcache[slot].k1 == k[1])
    return p->opcache[slot].e;
  opent *e = pw_map_str_get(&p->ops, t->text, t->len);
  p->opcache[slot].k0 = k[0];
  p->opcache[slot].k1 = k[1];
  p->opcache[slot].len = t->len;
  p->opcache[slot].e = e;
  return e;
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
  /* the type is the elements' (9.7.9.25.4.2): the size is a u32 */
  case ir_op_cp_reduce_async_bulk: return ir_type_u32;
  case ir_op_tensormap_cp_fenceproxy: return ir_type_u32;
  case ir_op_dp4a: case ir_op_dp2a: return pos == 2 ? I->type : ir_type_b32;
  /* block-scaled mma: immediates are the scale selectors (9.7.14.3) */
  case ir_op_mma: return I->m.mmakind > IR_MMAKIND_F8F6F4 ? ir_type_u32 : t;
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
/* Where `_` may stand for a result (ptx_sink.def). */
enum { SINK_WHOLE = 1, SINK_FIRST = 2, SINK_SECOND = 4 };
static const uint8_t sink_rule[ir_op_count] = {
#define SINK(op, whole, first, second) \
  [ir_op_##op] = (whole ? SINK_WHOLE : 0) | (first ? SINK_FIRST : 0) | (second ? SINK_SECOND : 0),
#include "ptx_sink.def"
#undef SINK
};

static void sink_refused(ptx_parser *p, const ins *I, const opnd *o, const char *what) {
  ptx_fail(p, &o->tok, "'%s' cannot discard %s with '_'", ir_op_infos[I->op].ptx, what);
}

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
  if (o->kind != O_REG || o->neg || o->reg_off)
    ptx_fail(p, &o->tok, "a result must be a register");
  d->var[d->n] = o->var;
  d->type[d->n++] = ptx_var_type(p, o->var);
}

/* Results from one operand: a register, a d|p pair, or a vector. */
static void dsts_of(ptx_parser *p, ins *I, const opnd *o, dstlist *d, ir_type dflt) {
  unsigned rule = I->op < ir_op_count ? sink_rule[I->op] : 0;
  if (o->kind == O_VEC) {
    uint32_t sinks = 0;
    for (uint32_t i = 0; i < o->n; i++) {
      sinks += I->pool[o->first + i].kind == O_SINK;
      dst_add(p, d, &I->pool[o->first + i], dflt);
    }
    if (o->n && sinks == o->n) sink_refused(p, I, o, "every element of its result vector");
    return;
  }
  if (o->kind == O_SINK && !o->pair && !(rule & SINK_WHOLE)) sink_refused(p, I, o, "its result");
  if (o->kind == O_SINK && o->pair && o->var2 != PTX_NONE && !(rule & SINK_FIRST))
    sink_refused(p, I, o, "the first result of d|p");
  dst_add(p, d, o, dflt);
  if (o->pair && o->var2 != PTX_NONE) {
    if (d->n >= 64) ptx_fail(p, &o->tok, "too many results");
    d->var[d->n] = o->var2;
    d->type[d->n++] = ptx_var_type(p, o->var2);
  } else if (o->pair && o->kind == O_SINK) {
    /* _|_ would discard both: not a form any instruction has */
    ptx_fail(p, &o->tok, "'_|_' discards both results");
  } else if (o->pair) {
    /* d|_: the second result is there and discarded.  elect.sync's
     * predicate is its result (9.7.13.14); ptxas 13 refuses d|_ there */
    if (I->op == ir_op_elect) ptx_fail(p, &o->tok, "'elect.sync' needs a predicate result: d|_ discards it");
    if (!(rule & SINK_SECOND)) sink_refused(p, I, o, "the second result of d|p");
    if (d->n >= 64) ptx_fail(p, &o->tok, "too many results");
    d->var[d->n] = PTX_NONE;
    d->type[d->n++] = ir_type_pred;
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
        src_push(p, s, ptx_value(p, e, src_type(I, *pos)), &e->tok);
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
      base = ptx_value(p, b, ir_type_u64);
    } else base = ptx_value(p, b, ir_type_u64);
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
    src_push(p, s, ptx_value(p, o, src_type(I, *pos)), &o->tok);
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
  if (!c) ptx_oom(p);
  c->type2 = (uint8_t)st;
  if (guard) {
    keep = retype(p, c, keep, dt);
    ir_instr_set_guard(&p->b, c, guard, neg, &keep);
  }
  /* into a float register (ld.b16 into an .f32): the register's bits, a
   * type its other values are compatible with, not an integer */
  ir_type_kind tk = ir_type_kind_of(t);
  if (tk == IR_TK_FLOAT || tk == IR_TK_PACKED_FLOAT) return ir_alu1(&p->b, ir_op_copy, bits[to], c->dst[0]);
  return c->dst[0];
}

/* The operand and result counts the op's rule fixes (the verifier's
 * check_counts, in PTX's terms): a statement with the wrong number of
 * operands is an input error here, at its position, not an IR that fails
 * verification later. */
static void check_shape(ptx_parser *p, const ins *I, ir_op op, const dstlist *d, const srclist *s) {
  const ir_op_info *info = &ir_op_infos[op];
  unsigned want_src, want_dst;
  ir_op_counts(op, &I->m, &want_src, &want_dst);
  if (want_src != IR_VAR && s->n != want_src)
    ptx_fail(p, &I->at, "'%.*s' takes %u source operands here, found %u", (int)I->at.len,
             I->at.text, want_src, s->n);
  if (want_dst != IR_VAR && d->n != want_dst)
    ptx_fail(p, &I->at, "'%.*s' takes %u results here, found %u", (int)I->at.len, I->at.text,
             want_dst, d->n);
  /* (match with an immediate where its result goes: the token walk) */
  if ((info->count == IR_COUNT_SETP || info->count == IR_COUNT_SHFL || info->count == IR_COUNT_PAIR) &&
      (d->n < 1 || d->n > 2))
    ptx_fail(p, &I->at, "'%.*s' takes one result or a d|p pair", (int)I->at.len, I->at.text);
  if ((info->count == IR_COUNT_ATOM || info->count == IR_COUNT_RED) && s->n < 2)
    ptx_fail(p, &I->at, "'%.*s' takes an address and a value", (int)I->at.len, I->at.text);
}

/* Predicates go where predicates are read and nowhere else (and.b32 on a
 * .pred register is an input error, and.pred is not; nor is an address or
 * a converted value a predicate: the token walk's cp.async [%p1] and
 * cvt.e4m3x2.f32 %rs, %p, %f reached lowering, whose verifier refused
 * them).  Besides the .pred ops (mov, and, not ... .pred), copies, calls
 * and returns, only cp.async's optional last operand may be either (an
 * ignore-src predicate or a src-size: PTX ISA 9.7.9.25, cp.async). */
static void check_preds(ptx_parser *p, const ins *I, ir_op op, const srclist *s) {
  bool data = I->type != ir_type_pred && op != ir_op_copy && op != ir_op_call && op != ir_op_ret;
  for (unsigned k = 0; k < s->n; k++) {
    bool is_pred = s->v[k] && s->v[k]->type == ir_type_pred;
    if (ir_op_src_is_pred(op, k, s->n)) {
      if (!is_pred)
        ptx_fail(p, &I->at, "operand %u of '%.*s' must be a predicate", k + 1, (int)I->at.len,
                 I->at.text);
    } else if (data && is_pred && !(op == ir_op_cp_async && k == 3)) {
      ptx_fail(p, &I->at, "operand %u of '%.*s' is a predicate", k + 1, (int)I->at.len, I->at.text);
    }
  }
}

/* An op whose result takes the instruction's type needs its type suffix
 * (add.s32, not add): ptxas 13 refuses "add %r1, %r2, %r3;" with
 * "Unexpected instruction types specified for 'add'", and the IR has no
 * typeless add (the fuzzer found one the verifier rejected).  cvt names
 * both types (9.7.9.21: cvt.frnd.dtype.atype); with one, its source was
 * read as the result's type. */
static void check_typed(ptx_parser *p, const ins *I, ir_op op, const dstlist *d) {
  if (ir_op_infos[op].result == RES_TYPE && d->n && I->type == ir_type_none)
    ptx_fail(p, &I->at, "'%.*s' needs its type suffix (.s32, .f32, ...): PTX has no untyped '%.*s'",
             (int)I->at.len, I->at.text, (int)I->at.len, I->at.text);
  /* bar/barrier takes a mode and no type (ptxas 13: "Barrier modifier
   * required", "Unexpected instruction types"); the IR's default mode is
   * .sync, so the words are looked at.  The token walk's barrier.pred
   * %p2, 0, %p1 read %p2 as a barrier id. */
  if (op == ir_op_bar) {
    bool mode = false;
    for (uint32_t k = 0; k < I->mfirst + I->nmods; k++) {
      const ptx_tok *t = &I->mtok[k];
      mode |= (t->len == 5 && !memcmp(t->text, ".sync", 5)) || (t->len == 7 && !memcmp(t->text, ".arrive", 7));
    }
    if (!mode || I->type != ir_type_none)
      ptx_fail(p, &I->at, "'%.*s' takes .sync or .arrive and no type", (int)I->at.len, I->at.text);
  }
  if (op == ir_op_cvt && I->type2 == ir_type_none)
    ptx_fail(p, &I->at, "'%.*s' needs a destination and a source type (cvt.f32.s32)", (int)I->at.len,
             I->at.text);
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
    check_typed(p, I, op, d);
  }
  /* shfl and vote without .sync (9.7.9.6, 9.7.13.8): "not supported on
   * sm_70 or higher starting PTX ISA version 6.4"; ptxas 13 refuses them by
   * the module's .target and .version (an sm_60 module at 6.4 assembles
   * for sm_90), and so does this. */
  if ((op == ir_op_shfl || op == ir_op_vote) && !I->m.sync && p->m->sm >= 70 && p->m->ptx_version >= 64)
    ptx_fail(p, &I->at, "'%.*s' without .sync is not supported on .target sm_70 and higher from PTX ISA 6.4",
             (int)I->at.len, I->at.text);
  /* vote.ballot is .b32 and vote.all/.any/.uni are .pred (9.7.13.8): the
   * IR's vote has no other result type (the fuzzer found a .b16 ballot) */
  if (op == ir_op_vote && (I->m.vote == IR_VOTE_NONE || I->type == ir_type_none))
    ptx_fail(p, &I->at, "'%.*s' needs a mode and a type: vote.sync.ballot.b32, or .all, .any, .uni with .pred",
             (int)I->at.len, I->at.text);
  if (op == ir_op_vote && I->type != ir_type_none) {
    ir_type want = I->m.vote == IR_VOTE_BALLOT ? ir_type_b32 : ir_type_pred;
    if (I->type != want)
      ptx_fail(p, &I->at, "'%.*s' is .%s: vote.ballot is .b32, vote.all, .any and .uni are .pred",
               (int)I->at.len, I->at.text, ir_type_name(I->type));
  }
  /* SIMD video (9.7.18.2): "Saturation cannot be used with the secondary
   * accumulate operation" (ptxas 13: "Illegal combination of .sat and .add
   * modifiers"); vset2/vset4 compare with .eq .ne .lt .le .gt .ge only. */
  if (ir_video_simd_elems(op) && I->m.sat && I->m.atomop == IR_ATOM_ADD)
    ptx_fail(p, &I->at, "'%.*s': .sat cannot be combined with .add", (int)I->at.len, I->at.text);
  if ((op == ir_op_vset || op == ir_op_vset2 || op == ir_op_vset4) && (I->m.cmp < IR_CMP_EQ || I->m.cmp > IR_CMP_GE))
    ptx_fail(p, &I->at, "'%.*s' compares with .eq, .ne, .lt, .le, .gt or .ge", (int)I->at.len, I->at.text);
  bool per_instr = ir_op_infos[op].result == RES_ANY;
  ir_instr *in = ir_build(&p->b, op, I->type, s->n, s->v, d->n, per_instr ? d->type : NULL, &I->m);
  if (!in) ptx_oom(p);
  /* vote's result has the instruction's type (.pred, or .b32 for ballot:
   * 9.7.13.8), not its register's: a ballot into a wider register is
   * widened below like any result (5.2.2 relaxed type-checking); a
   * predicate result needs a predicate register and the reverse. */
  if (op == ir_op_vote && d->n == 1 && d->var[0] != PTX_NONE && I->type != ir_type_none &&
      in->dst[0]->type != I->type) {
    if ((I->type == ir_type_pred) != (d->type[0] == ir_type_pred))
      ptx_fail(p, &I->at, "'%.*s' writes a .%s result: the destination register is .%s", (int)I->at.len,
               I->at.text, ir_type_name(I->type), ir_type_name((ir_type)d->type[0]));
    in->dst[0]->type = (uint8_t)I->type;
  }
  in->type2 = (uint8_t)I->type2;
  in->type3 = (uint8_t)I->type3;
  in->type4 = (uint8_t)I->type4;
  /* ir_build_mem's field, for any address.  An op without an address
   * (cvta, mov) has no offset field: PTX gives it a register or var+imm,
   * never [reg+imm] (the fuzzer found cvta ..., [%rd2+-4], which the IR
   * verifier then rejected); [reg] alone is read as reg. */
  if (s->have_off && s->off && op != ir_op_opaque && !ir_op_has_address(op))
    ptx_fail(p, &I->at, "'%.*s' takes no memory address: [...%+lld] is not one of its operands",
             (int)I->at.len, I->at.text, (long long)s->off);
  if (s->have_off) in->offset = s->off;
  /* A result and its register (ptxas 13's "Arguments mismatch"
   * otherwise; PTX ISA 5.2.2, relaxed type-checking): a .pred register
   * holds predicates only and a predicate goes only to one; of one width
   * the two types are compatible.  The token walk (test_ptx_mutate.c)
   * found shfl's b32 result in the p of a d|p pair whose d it had
   * deleted, and cvt.rn.s32 %f0 (the .f32 deleted) whose s32 value then
   * met the register's f32 ones in a phi. */
  for (uint32_t i = 0; i < d->n; i++) {
    ir_type rt = (ir_type)in->dst[i]->type, vt = d->type[i];
    if (d->var[i] == PTX_NONE) continue;
    ir_type_kind vk = ir_type_kind_of(vt);
    bool same_width = ir_type_bits(rt) == ir_type_bits(vt);
    if ((rt == ir_type_pred) != (vt == ir_type_pred) || (same_width && !ir_type_compatible(rt, vt, false)) ||
        /* a float register of another width takes only bits (ld.b16 into
         * an .f32: ptxas 13 takes it, and ld.u16 or mul.wide.u32 there
         * not; the token walk found the u64 of a mul.wide reaching an .f32
         * register's phi as a u32) */
        (!same_width && (vk == IR_TK_FLOAT || vk == IR_TK_PACKED_FLOAT) && ir_type_kind_of(rt) != IR_TK_BITS))
      ptx_fail(p, &I->at, "'%.*s' writes a .%s result to a .%s register", (int)I->at.len, I->at.text,
               ir_type_name(rt), ir_type_name(vt));
  }
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
  if (!s) ptx_oom(p);
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
      src_push(p, &s, ptx_imm_value(p, o, t), &o->tok);
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
  ptx_sym *s = pw_map_str_get(&p->fsyms, name->text, name->len);
  if (s && s->scope == p->scope) {
    if (s->kind != PTX_SYM_LABEL) ptx_fail(p, name, "'%.*s' is not a label", (int)name->len, name->text);
    return s->blk;
  }
  /* Not (yet) a label of this scope: the scope may define it further on
   * (a label is visible in all of its scope, before its definition too),
   * else it is the enclosing scope's, bound when this scope ends. */
  const char *nm = ptx_strdup_tok(p, name);
  uint32_t blk = ptx_ssa_new_block(p, nm, true, PTX_NONE);
  p->ssa.blocks[blk].first_ref = *name;
  s = PW_NEW(&p->fscratch, ptx_sym);
  if (!s) ptx_oom(p);
  s->kind = PTX_SYM_LABEL;
  s->blk = blk;
  ptx_declare(p, name, nm, name->len, s);
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
  ptx_sym *s = pw_map_str_get(&p->fsyms, tn->text, tn->len);
  if (!s || s->kind != PTX_SYM_TARGETS || s->targets->calls)
    ptx_fail(p, tn, "'%.*s' is not a .branchtargets list", (int)tn->len, tn->text);
  ir_value *idx = ptx_value(p, &I->top[0], ir_type_u32);
  ptx_targets *tg = s->targets;
  ir_block **blocks = PW_NEW_ARRAY(&p->fscratch, ir_block *, tg->n);
  for (uint32_t i = 0; i < tg->n; i++) blocks[i] = p->ssa.blocks[tg->blks[i]].block;
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
/* A .param variable named as a call operand: its element type, count and
 * alignment; false for anything else. */
static bool param_var_shape(const opnd *r, ir_type *type, uint64_t *count, uint32_t *align) {
  if (r->kind != O_SYM || r->off) return false;
  if (r->sym->kind == PTX_SYM_GLOBAL &&
      (r->sym->global->space == IR_SPACE_PARAM || r->sym->global->space == IR_SPACE_PARAM_FUNC) &&
      r->sym->global->vec <= 1) {
    *type = (ir_type)r->sym->global->type, *count = r->sym->global->count, *align = r->sym->global->align;
    return true;
  }
  if (r->sym->kind == PTX_SYM_PARAM && r->sym->param->space == IR_SPACE_PARAM_FUNC) {
    *type = (ir_type)r->sym->param->type, *count = r->sym->param->count, *align = r->sym->param->align;
    return true;
  }
  return false;
}

/* A direct call's operands against the callee's .param parameters, as
 * ptxas 13 matches them (one module per case assembled; 6.4, 7.1 "the
 * arguments ... must match the formal parameters in type, size and
 * alignment"): a scalar and an array never match ("Type of argument does
 * not match formal parameter"), scalars match by size (.f32 for .b32, .s32
 * for .u32), arrays by size and alignment ("Alignment of argument does not
 * match"), and a register only a scalar of its width.  (The IR records an
 * array of one element as a scalar: a[1] and a scalar are not told apart.)
 * Arrays of unknown size are checked in build_call. */
static void check_call_param(ptx_parser *p, const opnd *r, const ir_param *fp, const ptx_tok *callee, bool ret) {
  if (fp->space != IR_SPACE_PARAM_FUNC || !fp->count) return;
  const char *what = ret ? "return parameter" : "parameter";
  const char *fname = fp->name ? fp->name : "_";
  uint64_t fbytes = fp->count * (ir_type_bits((ir_type)fp->type) / 8);
  bool farr = fp->count > 1;
  ir_type t;
  uint64_t n;
  uint32_t al;
  if (param_var_shape(r, &t, &n, &al)) {
    uint64_t bytes = n * (ir_type_bits(t) / 8);
    bool arr = n > 1;
    if (arr != farr || bytes != fbytes)
      ptx_fail(p, &r->tok, "'%.*s' (%s of %llu bytes) does not match the %s '%s' of '%.*s' (%s of %llu bytes)",
               (int)r->tok.len, r->tok.text, arr ? "an array" : "a scalar", (unsigned long long)bytes, what, fname,
               (int)callee->len, callee->text, farr ? "an array" : "a scalar", (unsigned long long)fbytes);
    if (arr && al != fp->align)
      ptx_fail(p, &r->tok, "'%.*s' is aligned to %u bytes: the %s '%s' of '%.*s' is aligned to %u", (int)r->tok.len,
               r->tok.text, al, what, fname, (int)callee->len, callee->text, fp->align);
    return;
  }
  if (r->kind != O_REG) return;
  if (farr)
    ptx_fail(p, &r->tok, "the %s '%s' of '%.*s' is an array of %llu bytes: pass a .param array, not a register", what,
             fname, (int)callee->len, callee->text, (unsigned long long)fbytes);
  unsigned rb = ir_type_bits(ptx_var_type(p, r->var));
  if (rb != ir_type_bits((ir_type)fp->type))
    ptx_fail(p, &r->tok, "'%.*s' is a %u-bit register: the %s '%s' of '%.*s' is .%s", (int)r->tok.len, r->tok.text,
             rb, what, fname, (int)callee->len, callee->text, ir_type_name((ir_type)fp->type));
}

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
    ptx_sym *s = pr->kind == O_LABEL ? pw_map_str_get(&p->fsyms, pr->tok.text, pr->tok.len) : NULL;
    if (!s) s = pr->kind == O_LABEL ? pw_map_str_get(&p->syms, pr->tok.text, pr->tok.len) : NULL;
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
    src_push(p, &s, ptx_value(p, callee, ir_type_u64), &callee->tok);
  } else if (callee->kind == O_REG) {
    if (!proto && !targets) ptx_fail(p, &callee->tok, "an indirect call needs a prototype or a target list");
    src_push(p, &s, ptx_value(p, callee, ir_type_u64), &callee->tok);
  } else {
    ptx_fail(p, &callee->tok, "'%.*s' is not a function", (int)callee->tok.len, callee->tok.text);
  }
  /* A direct call's operands against the callee's vector register
   * parameters: a whole vector register of the same width for each (its
   * components are the IR call's operands), a scalar for each scalar. */
  const ptx_fshape *shape = callee->kind == O_SYM ? callee->sym->shape : NULL;
  for (uint32_t side = 0; side < 2; side++) {
    const opnd *l = side ? args : rets;
    if (!l) continue;
    for (uint32_t k = 0; k < l->n; k++) {
      const opnd *r = &I->pool[l->first + k];
      uint32_t want = 0;
      if (shape && k < (side ? shape->narg : shape->nret)) want = side ? shape->arg[k] : shape->ret[k];
      uint32_t got = r->kind == O_VEC ? r->n : 0;
      if (got != want) {
        if (want)
          ptx_fail(p, &r->tok, "the %s %u of '%.*s' is a .v%u register: pass a .v%u register", side ? "argument" : "result",
                   k + 1, (int)callee->tok.len, callee->tok.text, want, want);
        ptx_fail(p, &r->tok, "'%.*s' is a .v%u register: the %s %u of '%.*s' is %s", (int)r->tok.len, r->tok.text, got,
                 side ? "argument" : "result", k + 1, (int)callee->tok.len, callee->tok.text,
                 shape ? "not a vector of that width" : "a scalar");
      }
    }
  }
  /* A parameter array of unknown size (a[]) takes a .param array of the
   * formal's alignment, whose size it has for this call (ptxas 13: "Type
   * of argument does not match formal parameter" for a register,
   * "Alignment of argument does not match" for another alignment). */
  if (callee->kind == O_SYM && !shape && args) {
    const ir_func *cf = callee->sym->func;
    for (uint32_t k = 0; k < args->n && k < cf->nparams; k++) {
      const ir_param *fp = &cf->params[k];
      if (fp->count || fp->space != IR_SPACE_PARAM_FUNC) continue;
      const opnd *r = &I->pool[args->first + k];
      uint32_t align = 0;
      if (r->kind == O_SYM && r->sym->kind == PTX_SYM_GLOBAL &&
          (r->sym->global->space == IR_SPACE_PARAM || r->sym->global->space == IR_SPACE_PARAM_FUNC))
        align = r->sym->global->align;
      else if (r->kind == O_SYM && r->sym->kind == PTX_SYM_PARAM && r->sym->param->space == IR_SPACE_PARAM_FUNC)
        align = r->sym->param->align;
      else
        ptx_fail(p, &r->tok, "the argument for '%s' of '%.*s' (an array of unknown size) must be a .param variable",
                 fp->name ? fp->name : "_", (int)callee->tok.len, callee->tok.text);
      if (align != fp->align)
        ptx_fail(p, &r->tok, "'%.*s' is aligned to %u bytes: the parameter '%s' of '%.*s' is aligned to %u",
                 (int)r->tok.len, r->tok.text, align, fp->name ? fp->name : "_", (int)callee->tok.len,
                 callee->tok.text, fp->align);
    }
  }
  if (callee->kind == O_SYM && !shape) {
    const ir_func *cf = callee->sym->func;
    for (uint32_t k = 0; args && k < args->n && k < cf->nparams; k++)
      check_call_param(p, &I->pool[args->first + k], &cf->params[k], &callee->tok, false);
    for (uint32_t k = 0; rets && k < rets->n && k < cf->nrets; k++)
      check_call_param(p, &I->pool[rets->first + k], &cf->rets[k], &callee->tok, true);
  }
  /* Return operands that name .param variables are sources (the callee
   * writes them); register return operands are results. */
  uint16_t nret = 0;
  if (rets)
    for (uint32_t k = 0; k < rets->n; k++) {
      const opnd *r = &I->pool[rets->first + k];
      if (r->kind == O_REG || r->kind == O_SINK) dst_add(p, &d, r, ir_type_b32);
      else if (r->kind == O_VEC) dsts_of(p, I, r, &d, ir_type_b32);
      else {
        srcs_of(p, I, r, &s, &pos);
        nret++;
      }
    }
  uint16_t narg = 0;
  if (args)
    for (uint32_t k = 0; k < args->n; k++) {
      const opnd *r = &I->pool[args->first + k];
      srcs_of(p, I, r, &s, &pos);
      narg = (uint16_t)(narg + (r->kind == O_VEC ? r->n : 1));
    }
  ir_call_info *ci = PW_NEW(&p->m->arena, ir_call_info);
  if (!ci) ptx_oom(p);
  ci->nret = nret;
  ci->narg = narg;
  ci->proto = proto;
  if (targets) {
    ci->targets = PW_NEW_ARRAY(&p->m->arena, ir_func *, targets->n);
    for (uint32_t k = 0; k < targets->n; k++) {
      ptx_sym *fs = pw_map_str_get(&p->syms, targets->names[k].text, targets->names[k].len);
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
  /* The pack and unpack forms are typed .b16 .b32 .b64 .b128 only (PTX
   * ISA 9.7.9.10, mov's second form); ptxas 13 refuses mov.u32 r, {a, b}
   * ("Arguments mismatch for instruction 'mov'"). */
  if ((d0->kind == O_VEC || a->kind == O_VEC) && I->type != ir_type_b16 && I->type != ir_type_b32 &&
      I->type != ir_type_b64 && I->type != ir_type_b128)
    ptx_fail(p, &I->at, "mov packs and unpacks as .b16, .b32, .b64 or .b128, not .%s", ir_type_name(I->type));
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
    if (!v) ptx_oom(p);
    if (ir_type_compatible(v->type, d.type[0], false)) {
      ptx_ssa_write(p, d.var[0], v);
      return;
    }
    /* Into a register of another kind or width: mov's own type decides,
     * as ptxas 13 does (mov.b32 %f, %tid.x and mov.u16 %h, %tid.x are
     * taken, the low bits; mov.u32 %f, %tid.x and mov.u64 %rd, %tid.x are
     * "Arguments mismatch").  The token walk found the u32 of %tid.x written
     * straight into an .f32 register, then met its f32 values in a phi. */
    ir_type_kind ik = ir_type_kind_of(I->type);
    unsigned ib = ir_type_bits(I->type), vb = ir_type_bits((ir_type)v->type);
    if (ib > vb || ib < 16 || (ik != IR_TK_BITS && ik != IR_TK_UINT && ik != IR_TK_SINT))
      ptx_fail(p, &I->at, "'%.*s' of a .%s special register: .%s is not its type or a narrower integer",
               (int)I->at.len, I->at.text, ir_type_name((ir_type)v->type), ir_type_name(I->type));
    if (ib < vb) v = ir_convert(&p->b, ib == 16 ? ir_type_u16 : ir_type_u32, (ir_type)v->type, v);
    src_push(p, &s, v, &a->tok);
    emit(p, I, ir_op_copy, &d, &s);
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

/* mov.v2/.v4.t {d0, d1, ...}, {a0, a1, ...}: each di = ai, the sources all
 * read before any is written (`mov.v4.u16 {b, c, d, a}, {a, b, c, d}`
 * rotates).  ptxas 13 refuses .v8 ("Illegal vector size: 8"), and so does
 * this. */
static void build_mov_vec(ptx_parser *p, ins *I, unsigned vec) {
  if (vec != 2 && vec != 4)
    ptx_fail(p, &I->at, "mov takes .v2 or .v4, not .v%u (ptxas: \"Illegal vector size\")", vec);
  if (I->ntop != 2) ptx_fail(p, &I->at, "mov takes two operands");
  const opnd *d0 = &I->top[0], *a = &I->top[1];
  if (d0->kind != O_VEC || a->kind != O_VEC || d0->n != vec || a->n != vec)
    ptx_fail(p, &I->at, "mov.v%u takes two vectors of %u elements", vec, vec);
  dstlist d;
  d.n = 0;
  dsts_of(p, I, d0, &d, I->type);
  ir_value *v[4];
  for (unsigned k = 0; k < vec; k++) {
    const opnd *e = &I->pool[a->first + k];
    v[k] = e->kind == O_SINK ? ir_undef(&p->b, I->type) : ptx_value(p, e, I->type);
  }
  for (unsigned k = 0; k < vec; k++) {
    if (d.var[k] == PTX_NONE) continue;
    dstlist d1 = {.n = 1};
    d1.var[0] = d.var[k];
    d1.type[0] = d.type[k];
    srclist s1 = {.n = 1};
    s1.v[0] = v[k];
    emit(p, I, ir_op_copy, &d1, &s1);
  }
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

/* lop3.BoolOp.b32 d|p, a, b, c, immLut, q (PTX ISA 9.7.8.6, PTX 8.2):
 * d is lop3's result and "p = (d != 0) BoolOp q", BoolOp .and or .or.  The
 * predicate is setp's combining form, so the statement becomes lop3 and
 * setp.ne.BoolOp.b32 p, d, 0, q: the IR has no lop3 with two results.
 * ptxas 13 refuses d|_ and a plain d ("Predicate output expected"), .xor
 * ("Illegal operation"), d|p without a BoolOp ("Boolean operation is
 * required") and a register immLut; it accepts _|p and !q. */
static void build_lop3_pred(ptx_parser *p, ins *I, ir_boolop bop) {
  if (bop == IR_BOOL_XOR) ptx_fail(p, &I->at, "'lop3' combines its predicate result with .and or .or, not .xor");
  if (bop == IR_BOOL_NONE) ptx_fail(p, &I->at, "'lop3' with a predicate result d|p needs .and or .or");
  if (I->ntop != 6) ptx_fail(p, &I->at, "'lop3.%s' takes 6 operands (d|p, a, b, c, immLut, q), found %u",
                             bop == IR_BOOL_AND ? "and" : "or", I->ntop);
  const opnd *od = &I->top[0];
  if (!od->pair || (od->kind == O_REG && od->var2 == PTX_NONE))
    ptx_fail(p, &od->tok, "'lop3.%s' needs a predicate result: d|p", bop == IR_BOOL_AND ? "and" : "or");
  if (I->top[4].kind != O_IMM) ptx_fail(p, &I->top[4].tok, "'lop3': immLut must be an integer constant");
  if (I->type != ir_type_b32) ptx_fail(p, &I->at, "'lop3' is .b32");
  dstlist d;
  d.n = 0;
  dst_add(p, &d, od, I->type);
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  unsigned pos = 0;
  for (uint32_t i = 1; i < 5; i++) srcs_of(p, I, &I->top[i], &s, &pos);
  ir_instr *l = emit(p, I, ir_op_lop3, &d, &s);
  dstlist dp;
  dp.n = 1;
  dp.var[0] = od->var2;
  dp.type[0] = ptx_var_type(p, od->var2);
  srclist sp;
  sp.n = 0;
  sp.have_off = false;
  sp.off = 0;
  src_push(p, &sp, l->dst[0], &I->at);
  src_push(p, &sp, ir_imm(&p->b, ir_type_b32, 0), &I->at);
  src_push(p, &sp, ptx_value(p, &I->top[5], ir_type_pred), &I->top[5].tok);
  I->m.cmp = IR_CMP_NE;
  I->m.boolop = (uint8_t)bop;
  emit(p, I, ir_op_setp, &dp, &sp);
}

/* setmaxnreg.{inc,dec}.sync.aligned.u32 imm (PTX ISA 9.7.19.8): a hint
 * with no AMD counterpart (cg_emit.c), checked as ptxas 13 checks it:
 * ".sync modifier required", ".aligned modifier required", and the count
 * "in range [24..256]" and "multiple of 8". */
static void build_generic(ptx_parser *p, ins *I);
static void build_setmaxnreg(ptx_parser *p, ins *I) {
  if (I->m.atomop != IR_ATOM_INC && I->m.atomop != IR_ATOM_DEC)
    ptx_fail(p, &I->at, "'setmaxnreg' is setmaxnreg.inc or setmaxnreg.dec");
  if (!I->m.sync || !I->m.aligned) ptx_fail(p, &I->at, "'setmaxnreg' needs .sync.aligned");
  if (I->type != ir_type_u32) ptx_fail(p, &I->at, "'setmaxnreg' is .u32");
  if (I->ntop != 1) ptx_fail(p, &I->at, "'setmaxnreg' takes 1 operand, found %u", I->ntop);
  const opnd *o = &I->top[0];
  if (o->kind != O_IMM || o->immk != IMM_INT) ptx_fail(p, &o->tok, "'setmaxnreg': the register count is an integer constant");
  if (o->imm < 24 || o->imm > 256) ptx_fail(p, &o->tok, "'setmaxnreg': the register count %llu is outside [24, 256]",
                                            (unsigned long long)o->imm);
  if (o->imm % 8) ptx_fail(p, &o->tok, "'setmaxnreg': the register count %llu is not a multiple of 8",
                           (unsigned long long)o->imm);
  build_generic(p, I);
}

/* alloca.type ptr, size{, immAlign}; stacksave.type d; stackrestore.type a
 * (PTX ISA 9.7.17: "Both ptr and size have the same type as the instruction
 * type", .type = { .u32, .u64 }; immAlign "an integer constant, must be a
 * power of 2 and must not exceed 2^23").  ptxas 13 also refuses a state
 * space ("No state space qualifier expected for instruction 'alloca'"),
 * registers of another width ("Arguments mismatch"), `_` ("Result discard
 * mode is not allowed") and a constant for stackrestore ("Result register
 * required"). */
static void build_stack(ptx_parser *p, ins *I) {
  const char *name = ir_op_infos[I->op].ptx;
  if (I->type != ir_type_u32 && I->type != ir_type_u64) ptx_fail(p, &I->at, "'%s' is .u32 or .u64", name);
  if (I->m.space) ptx_fail(p, &I->at, "'%s' takes no state space: its memory is .local", name);
  unsigned want = I->op == ir_op_alloca ? 2 : 1;
  if (I->ntop < want || I->ntop > (I->op == ir_op_alloca ? 3u : 1u))
    ptx_fail(p, &I->at, "'%s' takes %s", name,
             I->op == ir_op_alloca ? "ptr, size{, immAlign}" : I->op == ir_op_stacksave ? "one result" : "one operand");
  unsigned bits = ir_type_bits(I->type);
  for (uint32_t k = 0; k < I->ntop && k < 2; k++) {
    const opnd *o = &I->top[k];
    if (o->kind == O_SINK) ptx_fail(p, &o->tok, "'%s' cannot discard its result with '_'", name);
    if (o->kind == O_IMM && k == 1) continue;  /* alloca's size */
    if (o->kind != O_REG || o->neg || o->reg_off || o->pair)
      ptx_fail(p, &o->tok, "'%s': operand %u must be a register", name, k + 1);
    if (ir_type_bits(ptx_var_type(p, o->var)) != bits)
      ptx_fail(p, &o->tok, "'%s.%s': operand %u is a %u-bit register", name, ir_type_name(I->type), k + 1,
               ir_type_bits(ptx_var_type(p, o->var)));
  }
  if (I->ntop == 3) {
    const opnd *o = &I->top[2];
    if (o->kind != O_IMM || o->immk != IMM_INT) ptx_fail(p, &o->tok, "'alloca': immAlign is an integer constant");
    if (!o->imm || (o->imm & (o->imm - 1))) ptx_fail(p, &o->tok, "'alloca': immAlign %llu is not a power of 2",
                                                     (unsigned long long)o->imm);
    if (o->imm > (1u << 23)) ptx_fail(p, &o->tok, "'alloca': immAlign %llu exceeds 2^23", (unsigned long long)o->imm);
  }
  build_generic(p, I);
}

/* ---- scalar video operand selectors ---------------------------------------------------- */

static bool video_scalar(ir_op op) {
  switch (op) {
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr: case ir_op_vset:
    return true;
  default:
    return false;
  }
}

/* Bit position and width of a selector's byte or half-word. */
static void vsel_field(unsigned sel, unsigned *pos, unsigned *len) {
  bool byte = sel <= PTX_VSEL_B3;
  *len = byte ? 8 : 16;
  *pos = byte ? 8 * (sel - PTX_VSEL_B0) : 16 * (sel - PTX_VSEL_H0);
}

/* partSelectSignExtend(x, xtype, xsel) of the ISA's pseudocode (9.7.18.1):
 * the selected byte or half-word, sign-extended for a signed xtype, else
 * zero-extended; as a value of type `as`. */
static ir_value *vsel_extract(ptx_parser *p, ir_value *x, unsigned sel, ir_type xtype, ir_type as) {
  unsigned pos, len;
  vsel_field(sel, &pos, &len);
  ir_type t = ir_type_kind_of(xtype) == IR_TK_SINT ? ir_type_s32 : ir_type_u32;
  ir_value *src[3] = {x->type == t ? x : ir_alu1(&p->b, ir_op_copy, t, x), ir_imm(&p->b, ir_type_u32, pos),
                      ir_imm(&p->b, ir_type_u32, len)};
  ir_instr *e = ir_build(&p->b, ir_op_bfe, t, 3, src, 1, NULL, NULL);
  if (!e) ptx_oom(p);
  return t == as ? e->dst[0] : ir_alu1(&p->b, ir_op_copy, as, e->dst[0]);
}

/* vop d{.dsel}, a{.asel}, b{.bsel}{, c}: the selectors become IR of their
 * own around the plain video op, as the ISA's pseudocode orders them:
 *   ta = partSelectSignExtend(a, atype, asel), tb likewise (a bfe: signed
 *        or unsigned by the operand's type; shifts read b as .u32);
 *   tmp = the op (with .sat: clamped to dtype's range, and the secondary
 *        op when there is no merge);
 *   merge (d.dsel, c): with .sat, tmp clamped again to the range of the
 *        selected byte or half-word of dtype's signedness ("saturate,
 *        taking into account destination type and merge operations");
 *        d = c with that field replaced by tmp's low bits (a bfi).
 * A clamp to 32 bits then to the field's range is the clamp to the
 * field's range, so the op's own .sat does the first step.  The selecting
 * ops are unguarded (pure); the instruction's guard goes on its last op.
 * True when it built the instruction (some selector was given). */
static bool build_video_selected(ptx_parser *p, ins *I, ir_op op, const dstlist *d, srclist *s, bool has_dst) {
  unsigned first = has_dst ? 1 : 0;
  unsigned dsel = has_dst ? I->top[0].vsel : 0;
  unsigned asel = I->ntop > first ? I->top[first].vsel : 0, bsel = I->ntop > first + 1 ? I->top[first + 1].vsel : 0;
  if (I->ntop > first + 2 && I->top[first + 2].vsel)
    ptx_fail(p, &I->top[first + 2].tok, "'%.*s': c takes no operand selector", (int)I->at.len, I->at.text);
  if (!dsel && !asel && !bsel) return false;
  if (s->n < 2) return false;   /* check_shape reports it */
  /* vset has no dtype: its a and b are type and type2 */
  bool shift = op == ir_op_vshl || op == ir_op_vshr, set = op == ir_op_vset;
  ir_type at = set ? I->type : I->type2, bt = shift ? ir_type_u32 : set ? I->type2 : I->type3;
  if (asel) s->v[0] = vsel_extract(p, s->v[0], asel, at, s->v[0]->type);
  if (bsel) s->v[1] = vsel_extract(p, s->v[1], bsel, bt, s->v[1]->type);
  if (!dsel) {
    emit(p, I, op, d, s);
    return true;
  }
  if (s->n != 3 || I->m.atomop)
    ptx_fail(p, &I->top[0].tok, "'%.*s' with a destination selector merges into c: it takes operand c and no "
             ".add/.min/.max", (int)I->at.len, I->at.text);
  ir_instr *v = ir_build(&p->b, op, I->type, 2, s->v, 1, NULL, &I->m);
  if (!v) ptx_oom(p);
  v->type2 = (uint8_t)I->type2;
  v->type3 = (uint8_t)I->type3;
  ir_value *t = v->dst[0];
  unsigned pos, len;
  vsel_field(dsel, &pos, &len);
  if (I->m.sat) {   /* vset has no .sat */
    bool sgn = ir_type_kind_of(I->type) == IR_TK_SINT;
    uint32_t lo = sgn ? (uint32_t)-(int32_t)(1u << (len - 1)) : 0, hi = sgn ? (1u << (len - 1)) - 1 : (1u << len) - 1;
    t = ir_alu2(&p->b, ir_op_max, I->type, t, ir_imm(&p->b, I->type, lo));
    t = ir_alu2(&p->b, ir_op_min, I->type, t, ir_imm(&p->b, I->type, hi));
  }
  srclist m;
  m.n = 0;
  m.have_off = false;
  m.off = 0;
  src_push(p, &m, ir_alu1(&p->b, ir_op_copy, ir_type_b32, t), &I->at);
  src_push(p, &m, s->v[2]->type == ir_type_b32 ? s->v[2] : ir_alu1(&p->b, ir_op_copy, ir_type_b32, s->v[2]), &I->at);
  src_push(p, &m, ir_imm(&p->b, ir_type_u32, pos), &I->at);
  src_push(p, &m, ir_imm(&p->b, ir_type_u32, len), &I->at);
  I->m = (ir_mods){0};
  I->type = ir_type_b32;
  I->type2 = I->type3 = I->type4 = ir_type_none;
  emit(p, I, ir_op_bfi, d, &m);
  return true;
}

/* ---- SIMD video operand selectors and masks ------------------------------------------- */

/* The selector of SIMD operand a or b (9.7.18.2) as a prmt byte selector:
 * vop2's .hxy puts half-word x of the 64-bit {b, a} in element 1 and y in
 * element 0; vop4's .bxyzw puts byte x in element 3 ... w in element 0.
 * Each element then is what the plain instruction (the defaults, .h10 /
 * .b3210 for a and .h32 / .b7654 for b) reads of a: the selection is a
 * prmt of a and b.  Refused as ptxas 13 refuses it ("Incorrect video
 * selector"): vop2 takes .h and two digits 0-3, vop4 .b and four 0-7. */
static uint32_t vsimd_operand_sel(ptx_parser *p, const ins *I, const opnd *o, unsigned n) {
  bool ok = o->vkind == (n == 2 ? 'h' : 'b') && o->vndig == (n == 2 ? 2 : 4);
  for (unsigned k = 0; ok && k < o->vndig; k++) ok = (o->vdig >> 4 * k & 15) <= (n == 2 ? 3u : 7u);
  if (!ok)
    ptx_fail(p, &o->tok, "'%.*s' selects its operands' %s with %s", (int)I->at.len, I->at.text,
             n == 2 ? "half-words" : "bytes", n == 2 ? ".hxy (x, y from 0-3)" : ".bxyzw (x, y, z, w from 0-7)");
  uint32_t sel = 0;
  for (unsigned e = 0; e < n; e++) {   /* element e: the digit written (n - 1 - e)th */
    unsigned src = o->vdig >> 4 * (n - 1 - e) & 15;
    if (n == 2) sel |= (2 * src) << 8 * e | (2 * src + 1) << (8 * e + 4);
    else sel |= src << 4 * e;
  }
  return sel;
}

/* The destination mask (9.7.18.2) as element bits: vop2 .h0 .h1 .h10,
 * vop4 .b plus 1-4 distinct digits 0-3 in decreasing order (.b3210, .b20,
 * .b1 ...), as the ISA lists them and ptxas 13 takes them. */
static unsigned vsimd_mask(ptx_parser *p, const ins *I, const opnd *o, unsigned n) {
  bool ok = o->vkind == (n == 2 ? 'h' : 'b') && o->vndig >= 1 && o->vndig <= n;
  unsigned m = 0, last = 8;
  for (unsigned k = 0; ok && k < o->vndig; k++) {
    unsigned dg = o->vdig >> 4 * k & 15;
    ok = dg < n && dg < last;
    last = dg;
    m |= 1u << dg;
  }
  if (!ok)
    ptx_fail(p, &o->tok, "'%.*s' masks its result with %s", (int)I->at.len, I->at.text,
             n == 2 ? ".h0, .h1 or .h10" : ".b and the element numbers 3-0 in decreasing order (.b3210, .b20, ...)");
  return m;
}

/* vop2/vop4 d{.mask}, a{.asel}, b{.bsel}, c as the ISA's pseudocode has
 * it, around the plain instruction (which has the default selectors and
 * mask):
 *   Va, Vb = extractAndSignExt(a, b, sel): a' = prmt(a, b, asel) and
 *            b' = prmt(a, b, bsel), read element-wise by the plain op;
 *   merge:   d element i = mask[i] ? t[i] : Vc[i], so
 *            d = (t & M) | (c & ~M), M the mask's element bits;
 *   .add:    d = c + sum of t[i] over the mask: the plain op with .add on
 *            a' & M and b' & M, whose elements outside the mask give
 *            t = 0 for every arithmetic op (0 + 0, 0 - 0, avg, |0 - 0|,
 *            min, max), and 1 for vset's .eq .le .ge (0 cmp 0): those
 *            are taken back.
 * The selecting ops are pure and unguarded; the guard goes on the last.
 * True when it built the instruction (some selector or mask was given). */
static bool build_video_simd_selected(ptx_parser *p, ins *I, ir_op op, const dstlist *d, srclist *s) {
  unsigned n = ir_video_simd_elems(op), w = 32 / n;
  if (I->ntop != 4 || s->n != 3) return false;   /* check_shape reports it */
  const opnd *od = &I->top[0], *oa = &I->top[1], *ob = &I->top[2], *oc = &I->top[3];
  if (oc->vkind) ptx_fail(p, &oc->tok, "'%.*s': c takes no operand selector", (int)I->at.len, I->at.text);
  if (!od->vkind && !oa->vkind && !ob->vkind) return false;
  /* emit's checks, for the ops built here without it */
  if (I->m.sat && I->m.atomop == IR_ATOM_ADD)
    ptx_fail(p, &I->at, "'%.*s': .sat cannot be combined with .add", (int)I->at.len, I->at.text);
  if ((op == ir_op_vset2 || op == ir_op_vset4) && (I->m.cmp < IR_CMP_EQ || I->m.cmp > IR_CMP_GE))
    ptx_fail(p, &I->at, "'%.*s' compares with .eq, .ne, .lt, .le, .gt or .ge", (int)I->at.len, I->at.text);
  ir_builder *b = &p->b;
  unsigned mask = od->vkind ? vsimd_mask(p, I, od, n) : (1u << n) - 1;
  ir_value *a0 = s->v[0]->type == ir_type_b32 ? s->v[0] : ir_copy(b, ir_type_b32, s->v[0]);
  ir_value *b0 = s->v[1]->type == ir_type_b32 ? s->v[1] : ir_copy(b, ir_type_b32, s->v[1]);
  ir_value *c0 = s->v[2];
  ir_value *va = s->v[0], *vb = s->v[1];
  if (oa->vkind) {
    uint32_t sel = vsimd_operand_sel(p, I, oa, n);
    if (sel != 0x3210u)   /* .h10 / .b3210: a itself */
      va = ir_alu3(b, ir_op_prmt, ir_type_b32, a0, b0, ir_imm(b, ir_type_b32, sel));
  }
  if (ob->vkind) {
    uint32_t sel = vsimd_operand_sel(p, I, ob, n);
    if (sel != 0x7654u) vb = ir_alu3(b, ir_op_prmt, ir_type_b32, a0, b0, ir_imm(b, ir_type_b32, sel));
    else vb = b0;
  }
  uint32_t M = 0;
  for (unsigned e = 0; e < n; e++)
    if (mask >> e & 1) M |= (w == 16 ? 0xffffu : 0xffu) << (w * e);
  srclist m;
  m.n = 0;
  m.have_off = false;
  m.off = 0;
  if (M == 0xffffffffu) {
    src_push(p, &m, va, &I->at);
    src_push(p, &m, vb, &I->at);
    src_push(p, &m, c0, &I->at);
    emit(p, I, op, d, &m);
    return true;
  }
  ir_value *Mv = ir_imm(b, ir_type_b32, M);
  if (I->m.atomop == IR_ATOM_ADD) {
    src_push(p, &m, ir_and(b, ir_type_b32, va, Mv), &I->at);
    src_push(p, &m, ir_and(b, ir_type_b32, vb, Mv), &I->at);
    src_push(p, &m, c0, &I->at);
    unsigned off = 0;   /* vset's elements outside the mask that compare 0 with 0 as true */
    if (op == ir_op_vset2 || op == ir_op_vset4)
      if (I->m.cmp == IR_CMP_EQ || I->m.cmp == IR_CMP_LE || I->m.cmp == IR_CMP_GE)
        off = n - (unsigned)__builtin_popcount(mask);
    if (!off) {
      emit(p, I, op, d, &m);
      return true;
    }
    ir_instr *v = ir_build(b, op, I->type, 3, m.v, 1, NULL, &I->m);
    if (!v) ptx_oom(p);
    v->type2 = (uint8_t)I->type2;
    v->type3 = (uint8_t)I->type3;
    srclist f;
    f.n = 0;
    f.have_off = false;
    f.off = 0;
    src_push(p, &f, v->dst[0], &I->at);
    src_push(p, &f, ir_imm(b, I->type, off), &I->at);
    I->m = (ir_mods){0};
    I->type2 = I->type3 = I->type4 = ir_type_none;
    emit(p, I, ir_op_sub, d, &f);
    return true;
  }
  ir_value *src[3] = {va, vb, c0};
  ir_instr *v = ir_build(b, op, I->type, 3, src, 1, NULL, &I->m);
  if (!v) ptx_oom(p);
  v->type2 = (uint8_t)I->type2;
  v->type3 = (uint8_t)I->type3;
  ir_value *cb = c0->type == ir_type_b32 ? c0 : ir_copy(b, ir_type_b32, c0);
  ir_value *tb = v->dst[0]->type == ir_type_b32 ? v->dst[0] : ir_copy(b, ir_type_b32, v->dst[0]);
  src_push(p, &m, ir_and(b, ir_type_b32, tb, Mv), &I->at);
  src_push(p, &m, ir_and(b, ir_type_b32, cb, ir_imm(b, ir_type_b32, ~M)), &I->at);
  I->m = (ir_mods){0};
  I->type = ir_type_b32;
  I->type2 = I->type3 = I->type4 = ir_type_none;
  emit(p, I, ir_op_or, d, &m);
  return true;
}

/* ---- vmad -------------------------------------------------------------------------------- */

static bool tok_is(const ptx_tok *t, const char *s) { return t->len == strlen(s) && !memcmp(t->text, s, t->len); }

/* vmad.dtype.atype.btype{.po}{.sat}{.scale} d, {-}a{.asel}, {-}b{.bsel}, {-}c
 * (PTX ISA 9.7.18.1.3).  No IR op of its own: the ISA's pseudocode as
 * 64-bit IR, here.
 *   ta, tb = partSelectSignExtend (a bfe by the operand's type, then
 *            extended to 64 bits)
 *   signedFinal = atype or btype signed, or a negation
 *   V = (po: P + c + 1 | -a^-b: ~P + c + 1 = c - P | -c: P + ~c + 1 =
 *       P - c | P + c), P = ta * tb, c sign-extended if signedFinal
 *   scale: V >> 7 or 15 (arithmetic if signedFinal), .sat: clamp to the
 *   32-bit range of signedFinal's sign; d the low 32 bits.
 * P is exact in 64 bits (|s32 * u32| < 2^63, u32 * u32 < 2^64), and so is
 * V, except for u32 * u32 with a negation, whose V needs 65 bits signed:
 * there, P >= 2^62 puts V (and V >> 15) beyond the 32-bit range on the
 * side of the negation, which only .sat needs (the low 32 bits of V and of
 * V >> 15 are bits of V below 64 either way).  Without a negation and
 * signed types V stays below 2^64 unsigned.  dtype does not enter the
 * pseudocode. */
static void build_vmad(ptx_parser *p, ins *I) {
  ir_type ty[3];
  unsigned nty = 0, scale = 0;
  bool sat = false, po = false;
  for (uint32_t k = 0; k < I->nmods; k++) {
    const ptx_tok *w = &I->mtok[k];
    if ((tok_is(w, ".u32") || tok_is(w, ".s32")) && nty < 3) ty[nty++] = w->text[1] == 's' ? ir_type_s32 : ir_type_u32;
    else if (tok_is(w, ".sat") && !sat) sat = true;
    else if (tok_is(w, ".po") && !po) po = true;
    else if (tok_is(w, ".shr7") && !scale) scale = 7;
    else if (tok_is(w, ".shr15") && !scale) scale = 15;
    else ptx_fail(p, w, "'vmad' does not take '%.*s' here (vmad.dtype.atype.btype{.po}{.sat}{.shr7|.shr15})",
                  (int)w->len, w->text);
  }
  if (nty != 3) ptx_fail(p, &I->at, "'vmad' needs three types: .dtype.atype.btype (.u32 or .s32)");
  if (I->ntop != 4) ptx_fail(p, &I->at, "'vmad' takes 4 operands, found %u", I->ntop);
  const opnd *od = &I->top[0], *oa = &I->top[1], *ob = &I->top[2], *oc = &I->top[3];
  if (od->minus || od->vsel) ptx_fail(p, &od->tok, "'vmad': the result takes no '-' or selector");
  if (oc->vsel) ptx_fail(p, &oc->tok, "'vmad': c takes no operand selector");
  bool negp = oa->minus ^ ob->minus, negc = oc->minus;
  if (po && (oa->minus || ob->minus || negc))
    ptx_fail(p, &I->at, "'vmad.po': source operands may not be negated in .po mode");
  if (negp && negc) ptx_fail(p, &oc->tok, "'vmad' negates either the product a*b or c, not both");
  bool sa = ty[1] == ir_type_s32, sb = ty[2] == ir_type_s32, sf = sa || sb || negp || negc;
  ir_builder *b = &p->b;
  dstlist d;
  d.n = 0;
  dsts_of(p, I, od, &d, ir_type_u32);
  if (d.n != 1) ptx_fail(p, &od->tok, "'vmad' has one result");
  ir_value *v[3];
  const opnd *os[3] = {oa, ob, oc};
  for (unsigned k = 0; k < 3; k++) {
    if (os[k]->kind != O_REG && os[k]->kind != O_IMM) ptx_fail(p, &os[k]->tok, "'vmad' takes registers or numbers");
    v[k] = ptx_value(p, os[k], ir_type_u32);
  }
  ir_value *t64[2];
  for (unsigned k = 0; k < 2; k++) {
    bool sg = k ? sb : sa;
    ir_value *x = os[k]->vsel ? vsel_extract(p, v[k], os[k]->vsel, ty[k + 1], ir_type_u32) : v[k];
    t64[k] = sg ? ir_convert(b, ir_type_s64, ir_type_s32, ir_alu1(b, ir_op_copy, ir_type_s32, x))
                : ir_convert(b, ir_type_u64, ir_type_u32, x);
    if (t64[k]->type != ir_type_u64) t64[k] = ir_alu1(b, ir_op_copy, ir_type_u64, t64[k]);
  }
  ir_value *prod = ir_alu2(b, ir_op_mul, ir_type_u64, t64[0], t64[1], .mulmode = IR_MUL_LO);
  ir_value *c64 = sf ? ir_convert(b, ir_type_s64, ir_type_s32, ir_alu1(b, ir_op_copy, ir_type_s32, v[2]))
                     : ir_convert(b, ir_type_u64, ir_type_u32, v[2]);
  if (c64->type != ir_type_u64) c64 = ir_alu1(b, ir_op_copy, ir_type_u64, c64);
  ir_value *val;
  if (negp) val = ir_alu2(b, ir_op_sub, ir_type_u64, c64, prod);
  else if (negc) val = ir_alu2(b, ir_op_sub, ir_type_u64, prod, c64);
  else val = ir_alu2(b, ir_op_add, ir_type_u64, prod, c64);
  if (po) val = ir_alu2(b, ir_op_add, ir_type_u64, val, ir_imm(b, ir_type_u64, 1));
  if (scale) {
    ir_type st = sf ? ir_type_s64 : ir_type_u64;
    val = ir_alu2(b, ir_op_shr, st, ir_alu1(b, ir_op_copy, st, val), ir_imm(b, ir_type_u32, scale));
    val = ir_alu1(b, ir_op_copy, ir_type_u64, val);
  }
  if (sat && !sf) {
    val = ir_alu2(b, ir_op_min, ir_type_u64, val, ir_imm(b, ir_type_u64, UINT32_MAX));
  } else if (sat) {
    ir_value *s = ir_alu1(b, ir_op_copy, ir_type_s64, val);
    s = ir_alu2(b, ir_op_max, ir_type_s64, s, ir_imm(b, ir_type_s64, (uint64_t)(int64_t)INT32_MIN));
    s = ir_alu2(b, ir_op_min, ir_type_s64, s, ir_imm(b, ir_type_s64, (uint64_t)INT32_MAX));
    if (!sa && !sb && (negp || negc)) {
      ir_value *big = ir_setp(b, ir_type_u64, prod, ir_imm(b, ir_type_u64, UINT64_C(1) << 62), .cmp = IR_CMP_GE);
      ir_value *lim = ir_imm(b, ir_type_s64, negp ? (uint64_t)(int64_t)INT32_MIN : (uint64_t)INT32_MAX);
      s = ir_selp(b, ir_type_s64, lim, s, big);
    }
    val = ir_alu1(b, ir_op_copy, ir_type_u64, s);
  }
  srclist s;
  s.n = 0;
  s.have_off = false;
  s.off = 0;
  src_push(p, &s, val, &I->at);
  I->m = (ir_mods){0};
  I->type = ir_type_u32;
  I->type2 = ir_type_u64;
  I->type3 = I->type4 = ir_type_none;
  emit(p, I, ir_op_cvt, &d, &s);
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
  /* cp.async.bulk.shared::cluster.shared::cta [dst], [src], size, [mbar]:
   * the IR's cp.async.bulk into shared memory reads a generic source (a
   * global address is one), so the shared::cta source becomes one by cvta
   * (docs/lowering.md "cp.async.bulk") */
  if (op == ir_op_cp_async_bulk && I->bulk_src_shared && s.n >= 2) {
    ir_value *a = s.v[1];
    if (ir_type_bits((ir_type)a->type) != 64) a = ir_convert(&p->b, ir_type_u64, ir_type_u32, a);
    s.v[1] = ir_alu1(&p->b, ir_op_cvta, ir_type_u64, a, .space = IR_SPACE_SHARED);
  }
  check_typed(p, I, op, &d);
  if (video_scalar(op) && build_video_selected(p, I, op, &d, &s, first == 1)) return;
  if (ir_video_simd_elems(op) && build_video_simd_selected(p, I, op, &d, &s)) return;
  emit(p, I, op, &d, &s);
}

/* ---- the statement --------------------------------------------------------------------- */

/* The atom/red forms PTX ISA 9.0 has (9.7.13.5-6), as ptxas 13 checks them
 * at sm_90, sm_100a and sm_120a (one module per form): no 8-bit type at
 * all and no 16-bit integer one but atom.cas.b16 ("Unexpected instruction
 * types", "Arguments mismatch" for exch.b16); vectors (.v2/.v4/.v8, sm_90)
 * only in .global (or generic) memory ("State space incorrect for feature
 * 'atom instruction with vector types'"), only of .f32 with .add, and of
 * .f16/.bf16/.f16x2/.bf16x2 with .add, .min or .max ("Vector qualifier is
 * not allowed" for integers, .f64, .cas and .exch; ".min requires ..." for
 * .f32). */
static void check_atom(ptx_parser *p, const ins *I) {
  const char *name = ir_op_infos[I->op].ptx;
  ir_type t = I->type;
  ir_atomop op = (ir_atomop)I->m.atomop;
  ir_type_kind k = ir_type_kind_of(t);
  bool intk = k == IR_TK_UINT || k == IR_TK_SINT || k == IR_TK_BITS;
  if (ir_type_bits(t) == 8) ptx_fail(p, &I->at, "'%s' has no 8-bit form (.%s)", name, ir_type_name(t));
  if (ir_type_bits(t) == 16 && intk && !(I->op == ir_op_atom && op == IR_ATOM_CAS && !I->m.vec))
    ptx_fail(p, &I->at, "'%s.%s.%s': the only 16-bit integer atomic is atom.cas.b16", name, ir_atomop_name(op),
             ir_type_name(t));
  if (I->m.vec <= 1) return;
  if (I->m.space != IR_SPACE_GLOBAL && I->m.space != IR_SPACE_GENERIC)
    ptx_fail(p, &I->at, "'%s.v%u' is in .global memory only", name, I->m.vec);
  bool half = t == ir_type_f16 || t == ir_type_bf16 || t == ir_type_f16x2 || t == ir_type_bf16x2;
  if (t == ir_type_f32 ? op != IR_ATOM_ADD
                       : !half || (op != IR_ATOM_ADD && op != IR_ATOM_MIN && op != IR_ATOM_MAX))
    ptx_fail(p, &I->at, "'%s.v%u.%s.%s': vector atomics are .add of .f32 and .add, .min or .max of .f16, .bf16, "
             ".f16x2 or .bf16x2", name, I->m.vec, ir_type_name(t), ir_atomop_name(op));
}

/* lop3's .and/.or belong to its predicate result (build_lop3_pred), not
 * to lop3: taken out of the modifiers before they are decoded. */
static ir_boolop take_lop3_boolop(ins *I, uint32_t words) {
  uint32_t nm = I->nmods;
  if (!nm) return IR_BOOL_NONE;
  const ptx_tok *w = &I->mtok[words];
  ir_boolop b = tok_is(w, ".and") ? IR_BOOL_AND : tok_is(w, ".or") ? IR_BOOL_OR : tok_is(w, ".xor") ? IR_BOOL_XOR
                                                                                               : IR_BOOL_NONE;
  if (b) {
    memmove(I->mods, I->mods + 1, (nm - 1) * sizeof I->mods[0]);
    memmove(I->mtok + words, I->mtok + words + 1, (nm - 1) * sizeof I->mtok[0]);
    I->nmods = nm - 1;
  }
  return b;
}

/* Step 3: the family's meaning, for an op whose modifiers are known. */
static void build_family(ptx_parser *p, ins *I, ir_op op, uint8_t mov_vec, ir_boolop lop3_bool) {
  switch (op) {
  case ir_op_copy:
    if (mov_vec > 1) build_mov_vec(p, I, mov_vec);
    else build_mov(p, I);
    break;
  case ir_op_br: build_bra(p, I); break;
  case ir_op_setmaxnreg: build_setmaxnreg(p, I); break;
  case ir_op_atom:
  case ir_op_red:
    check_atom(p, I);
    build_generic(p, I);
    break;
  case ir_op_alloca:
  case ir_op_stacksave:
  case ir_op_stackrestore: build_stack(p, I); break;
  case ir_op_lop3:
    if (lop3_bool || (I->ntop && I->top[0].pair)) build_lop3_pred(p, I, lop3_bool);
    else build_generic(p, I);
    break;
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
}

void ptx_parse_instruction(ptx_parser *p) {
  ins *I = p->ins_buf;
  I->guarded = I->guard_neg = false;
  I->nmods = I->ntop = I->npool = 0;
  I->m = (ir_mods){0};
  I->type = I->type2 = I->type3 = I->type4 = ir_type_none;
  I->ntypes = 0;
  I->bulk_src_shared = false;
  if (p->tok.kind == PTX_TOK_AT) {
    ptx_next(p);
    I->guarded = true;
    if (ptx_accept(p, PTX_TOK_BANG)) I->guard_neg = true;
    ptx_tok g = p->tok;
    if (g.kind != PTX_TOK_IDENT) ptx_expected(p, "a predicate register");
    I->guard_var = ptx_find_reg(p, &g);
    if (I->guard_var == PTX_NONE) ptx_fail(p, &g, "undeclared register '%.*s'", (int)g.len, g.text);
    if (ptx_var_type(p, I->guard_var) != ir_type_pred)
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
    I->mods[I->nmods++] = ptx_word_of(p, &p->tok);
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
          opent *e2 = pw_map_str_get(&p->ops, buf, n);
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
  bool vmad = !e && tok_is(&I->at, "vmad");
  /* operands */
  if (p->tok.kind != PTX_TOK_SEMI) {
    do {
      if (I->ntop == MAX_TOP) ptx_fail(p, &p->tok, "too many operands");
      ptx_operand(p, I, &I->top[I->ntop++]);
    } while (ptx_accept(p, PTX_TOK_COMMA));
  }
  if (p->tok.kind != PTX_TOK_SEMI) ptx_expected(p, "',' or ';'");
  /* ';' is consumed after building, so errors point inside the statement */
  I->op = op;
  ptx_ssa_ensure_block(p);
  p->b.loc = (ir_loc){I->at.line, I->at.col};
  /* drop the mnemonic's own words from the modifiers */
  if (words) memmove(I->mods, I->mods + words, (I->nmods - words) * sizeof I->mods[0]);
  I->mfirst = words;   /* mods[k] is the word mtok[mfirst + k] */
  uint32_t nm = I->nmods - words;
  I->nmods = nm;
  ir_boolop lop3_bool = op == ir_op_lop3 ? take_lop3_boolop(I, words) : IR_BOOL_NONE;
  nm = I->nmods;
  /* A modifier the family does not know, or one its op does not take
   * (ld.ftz): kept as written, for lowering to name. */
  bool known = op != ir_op_count && op != ir_op_opaque && ptx_decode_mods(p, I);
  /* mov.v2/.v4: element-wise copies (build_mov_vec), not a mov row's field */
  uint8_t mov_vec = op == ir_op_copy && known ? I->m.vec : 0;
  if (mov_vec) I->m.vec = 0;
  known = known && ir_mods_fit_op(op, &I->m);
  /* .lo/.hi/.wide are integer multiplies (PTX ISA 9.7.1.5/9.7.1.6):
   * mul.wide.e4m3 was kept and failed inside LLVM; ptxas 13 refuses it
   * ("Unexpected instruction types specified for 'mul.wide'") */
  if (known && (op == ir_op_mul || op == ir_op_mad) && I->m.mulmode != IR_MUL_NONE) {
    ir_type_kind k = ir_type_kind_of(I->type);
    if (k != IR_TK_UINT && k != IR_TK_SINT)
      ptx_fail(p, &I->at, "'%.*s' with .%s: .lo, .hi and .wide take an integer type", (int)I->at.len,
               I->at.text, ir_type_name(I->type));
  }
  /* a selector the scalar video instructions (and vmad) read is one byte
   * or half-word: .b0-.b3, .h0, .h1 (9.7.18.1) */
  for (uint32_t k = 0; k < I->ntop; k++)
    if (I->top[k].vkind && !I->top[k].vsel && (vmad || (known && video_scalar(op))))
      ptx_fail(p, &I->top[k].tok, "'%.*s' selects one byte or half-word of an operand: .b0, .b1, .b2, .b3, .h0 or .h1",
               (int)I->at.len, I->at.text);
  if (vmad) {   /* no IR op: its pseudocode as IR (build_vmad) */
    build_vmad(p, I);
    ptx_next(p);
    return;
  }
  if (!known && lop3_bool)
    ptx_fail(p, &I->at, "'lop3' with a predicate result is lop3.BoolOp.b32 (.and or .or)");
  if (!known) {
    /* restore the words for the spelling */
    I->nmods = nm + words;
    build_opaque(p, I);
    ptx_next(p);
    return;
  }
  /* operand selectors belong to the scalar video instructions only, '-'
   * before a register to vmad */
  for (uint32_t k = 0; k < I->ntop; k++) {
    if (I->top[k].vkind && !video_scalar(op) && !ir_video_simd_elems(op))
      ptx_fail(p, &I->top[k].tok, "'%.*s' takes no operand selectors (only the video instructions do)",
               (int)I->at.len, I->at.text);
    if (I->top[k].minus)
      ptx_fail(p, &I->top[k].tok, "'%.*s' takes no negated register (only vmad does)", (int)I->at.len, I->at.text);
  }
  build_family(p, I, op, mov_vec, lop3_bool);
  ptx_next(p);
}
