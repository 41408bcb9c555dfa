/* ir/ir_builder.c: the builder (ir_builder.h) and the type rules that the
 * builder, printer, parser and verifier share (ir_priv.h).
 *
 * The builder never refuses: it builds what it is asked, even with operand
 * counts or types the opcode table does not allow, and leaves judgement to
 * ir_verify (so broken IR can be built in tests, and the .pwir parser can
 * hand anything syntactically valid to the verifier).
 *
 * Result types (ir_expected_dst_type): result 0 follows the opcode table's
 * rule, with mul.wide/mad.wide doubling the width, sreg reading the special
 * register table and vote giving b32 for .ballot and pred otherwise.  Later
 * results have the first one's type, except the carry-out of .cc (the last
 * result) and the second of a d|p pair (ir_ops.def's count column: setp,
 * shfl, match, elect), which are pred.
 */
#include <string.h>

#include "ir_priv.h"
#include "util/diag.h"

/* ---- cursors ---------------------------------------------------------- */

ir_builder ir_builder_at_end(ir_block *b) {
  return (ir_builder){.module = b->func->module, .func = b->func, .block = b, .before = NULL};
}

ir_builder ir_builder_before(ir_instr *i) {
  ir_block *b = i->block;
  return (ir_builder){.module = b->func->module, .func = b->func, .block = b, .before = i,
                      .loc = i->loc};
}

ir_builder ir_builder_after(ir_instr *i) {
  ir_block *b = i->block;
  return (ir_builder){.module = b->func->module, .func = b->func, .block = b, .before = i->next,
                      .loc = i->loc};
}

static pw_arena *arena_of(ir_builder *b) { return &b->module->arena; }

/* ---- types ------------------------------------------------------------ */

uint64_t ir_mask_bits(ir_type t, uint64_t bits) {
  unsigned w = ir_type_bits(t);
  if (w == 0 || w >= 64) return bits;
  return bits & ((UINT64_C(1) << w) - 1);
}

static ir_type widen(ir_type t) {
  switch (t) {
  case ir_type_u16: return ir_type_u32;
  case ir_type_s16: return ir_type_s32;
  case ir_type_u32: return ir_type_u64;
  case ir_type_s32: return ir_type_s64;
  case ir_type_b16: return ir_type_b32;
  case ir_type_b32: return ir_type_b64;
  case ir_type_f32: return ir_type_f64;  /* not PTX, but total */
  default: return t;
  }
}

static bool is_wide(const ir_instr *i) {
  return (i->op == ir_op_mul || i->op == ir_op_mad || i->op == ir_op_mul24 ||
          i->op == ir_op_mad24) &&
         i->mods.mulmode == IR_MUL_WIDE;
}

ir_type ir_expected_dst_type(const ir_instr *i, unsigned k) {
  if (i->op >= ir_op_count) return ir_type_none;
  const ir_op_info *info = &ir_op_infos[i->op];
  if (k > 0) {
    if (i->mods.cc && k + 1 == i->ndst) return ir_type_pred;
    /* d|p pairs: the count column's PAIR, SETP and SHFL */
    ir_count_rule r = (ir_count_rule)info->count;
    if (k == 1 && (r == IR_COUNT_PAIR || r == IR_COUNT_SETP || r == IR_COUNT_SHFL)) return ir_type_pred;
    return ir_expected_dst_type(i, 0);
  }
  switch (info->result) {
  case RES_NONE: return ir_type_none;
  case RES_TYPE: return is_wide(i) ? widen((ir_type)i->type) : (ir_type)i->type;
  case RES_PRED: return ir_type_pred;
  case RES_U32: return ir_type_u32;
  case RES_U64: return ir_type_u64;
  case RES_B32: return ir_type_b32;
  case RES_B64: return ir_type_b64;
  case RES_ANY:
    if (i->op == ir_op_sreg && i->sreg < ir_sreg_count) return ir_sreg_infos[i->sreg].type;
    if (i->op == ir_op_vote) return i->mods.vote == IR_VOTE_BALLOT ? ir_type_b32 : ir_type_pred;
    return ir_type_none;
  }
  return ir_type_none;
}

bool ir_op_src_is_pred(ir_op op, unsigned k, unsigned nsrc) {
  unsigned mask = op < ir_op_count ? ir_op_infos[op].pred : 0;
  if ((mask & IR_PRED_LAST) && k + 1 == nsrc) return true;
  return k < 15 && (mask >> k) & 1;
}

bool ir_src_is_pred(const ir_instr *i, unsigned k) { return ir_op_src_is_pred((ir_op)i->op, k, i->nsrc); }

void ir_op_counts(ir_op op, const ir_mods *m, unsigned *nsrc, unsigned *ndst) {
  const ir_op_info *info = &ir_op_infos[op];
  unsigned vec = m->vec ? m->vec : 1, hint = m->has_cache_hint;
  *nsrc = info->nsrc;
  *ndst = info->ndst;
  switch ((ir_count_rule)info->count) {
  case IR_COUNT_CC: *ndst = 1u + m->cc; break;
  case IR_COUNT_BOOLOP: case IR_COUNT_SETP: *nsrc = 2u + (m->boolop != 0); break;
  case IR_COUNT_LD: *nsrc = 1u + hint; *ndst = vec; break;
  case IR_COUNT_LDU: case IR_COUNT_ATOM: *ndst = vec; break;
  case IR_COUNT_ST: *nsrc = 1u + vec + hint; break;
  case IR_COUNT_SHFL: *nsrc = m->sync ? 4u : 3u; break;
  case IR_COUNT_VOTE: *nsrc = 1u + m->sync; break;
  case IR_COUNT_FIXED: case IR_COUNT_PAIR: case IR_COUNT_RED: case IR_COUNT_CALL: case IR_COUNT_SWIZZLE:
  case IR_COUNT_WAVE_MMA: case IR_COUNT_SYMADDR: case IR_COUNT_BR: case IR_COUNT_CBR: case IR_COUNT_BRX:
    break;
  }
}

/* ir_ops.def's srcs column: operands from src_from on take src_kind. */
ir_type ir_default_src_type(const ir_instr *i, unsigned k) {
  ir_type t = (ir_type)i->type;
  if (i->op >= ir_op_count) return t == ir_type_none ? ir_type_b32 : t;
  if (ir_src_is_pred(i, k)) return ir_type_pred;
  if (k == 0 && ir_op_has_address(i->op)) return ir_type_u64;
  const ir_op_info *info = &ir_op_infos[i->op];
  if (k >= info->src_from) {
    switch ((ir_src_kind)info->src_kind) {
    case IR_SRC_TYPE: break;
    case IR_SRC_TYPE2:
      if (i->type2) t = (ir_type)i->type2;
      break;
    case IR_SRC_WIDE:
      if (is_wide(i)) t = widen(t);
      break;
    case IR_SRC_HINT:
      if (i->mods.has_cache_hint && k + 1 == i->nsrc) t = ir_type_b64;
      break;
    case IR_SRC_U32: t = ir_type_u32; break;
    case IR_SRC_B32: t = ir_type_b32; break;
    case IR_SRC_U64: t = ir_type_u64; break;
    }
  }
  return t == ir_type_none ? ir_type_b32 : t;
}

/* ---- values ----------------------------------------------------------- */

ir_value *ir_value_create(ir_func *f, ir_value_kind kind, ir_type t) {
  ir_value *v = IR_NEW(&f->module->arena, ir_value);
  v->id = f->nvalues++;
  v->kind = (uint8_t)kind;
  v->type = (uint8_t)t;
  return v;
}

ir_value *ir_imm(ir_builder *b, ir_type t, uint64_t bits) {
  ir_value *v = ir_value_create(b->func, IR_VAL_CONST, t);
  v->imm = ir_mask_bits(t, bits);
  return v;
}

ir_value *ir_imm_f32(ir_builder *b, float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return ir_imm(b, ir_type_f32, u);
}

ir_value *ir_imm_f64(ir_builder *b, double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return ir_imm(b, ir_type_f64, u);
}

ir_value *ir_undef(ir_builder *b, ir_type t) { return ir_value_create(b->func, IR_VAL_UNDEF, t); }

ir_value *ir_symref(ir_builder *b, ir_symbol sym, int64_t offset, ir_type t) {
  ir_value *v = ir_value_create(b->func, IR_VAL_SYMBOL, t);
  v->symref.sym = sym;
  v->symref.offset = offset;
  return v;
}

/* ---- instructions ----------------------------------------------------- */

static void insert(ir_builder *b, ir_instr *i) {
  ir_block *blk = b->block;
  i->block = blk;
  if (b->before) {
    ir_instr *n = b->before;
    i->next = n;
    i->prev = n->prev;
    if (n->prev) n->prev->next = i;
    else blk->first = i;
    n->prev = i;
  } else {
    i->prev = blk->last;
    if (blk->last) blk->last->next = i;
    else blk->first = i;
    blk->last = i;
  }
}

ir_instr *ir_instr_new(ir_builder *b, ir_op op, ir_type type, unsigned nsrc, unsigned ndst) {
  pw_arena *a = arena_of(b);
  ir_instr *i = IR_NEW(a, ir_instr);
  i->op = (uint16_t)op;
  i->type = (uint8_t)type;
  if (nsrc > UINT16_MAX || ndst > UINT16_MAX) PW_DIE("too many operands (%u, %u)", nsrc, ndst);
  i->nsrc = (uint16_t)nsrc;
  i->ndst = (uint16_t)ndst;
  unsigned cap = op == ir_op_phi ? ir_phi_cap(nsrc) : nsrc;
  if (cap) i->src = IR_NEW_ARRAY(a, ir_value *, cap);
  if (ndst) i->dst = IR_NEW_ARRAY(a, ir_value *, ndst);
  i->loc = b->loc;
  if (b->block) insert(b, i);
  return i;
}

ir_value *ir_instr_make_dst(ir_instr *i, unsigned k, ir_type t) {
  ir_value *v = ir_value_create(i->block->func, IR_VAL_INSTR, t);
  v->def = i;
  v->index = (uint16_t)k;
  i->dst[k] = v;
  return v;
}

ir_instr *ir_build(ir_builder *b, ir_op op, ir_type type, unsigned nsrc, ir_value *const *src,
                   unsigned ndst, const ir_type *dst_types, const ir_mods *mods) {
  ir_instr *i = ir_instr_new(b, op, type, nsrc, ndst);
  if (mods) i->mods = *mods;
  for (unsigned k = 0; k < nsrc; k++) i->src[k] = src ? src[k] : NULL;
  for (unsigned k = 0; k < ndst; k++) {
    ir_type t = dst_types ? dst_types[k] : ir_expected_dst_type(i, k);
    if (t == ir_type_none && !dst_types) t = type;
    ir_instr_make_dst(i, k, t);
  }
  return i;
}

ir_value *ir_build_value(ir_builder *b, ir_op op, ir_type type, unsigned nsrc,
                         ir_value *const *src, const ir_mods *mods) {
  unsigned ndst = ir_op_infos[op].ndst == 0 ? 0 : 1 + (mods && mods->cc);
  ir_instr *i = ir_build(b, op, type, nsrc, src, ndst, NULL, mods);
  return ndst ? i->dst[0] : NULL;
}

ir_value *ir_read_sreg(ir_builder *b, ir_sreg sr, unsigned comp) {
  ir_instr *i = ir_instr_new(b, ir_op_sreg, ir_type_none, 0, 1);
  i->sreg = (uint8_t)sr;
  i->sreg_comp = (uint8_t)comp;
  return ir_instr_make_dst(i, 0, sr < ir_sreg_count ? ir_sreg_infos[sr].type : ir_type_none);
}

ir_instr *ir_build_mem(ir_builder *b, ir_op op, ir_type type, ir_value *base, int64_t offset,
                       unsigned nval, ir_value *const *vals, unsigned ndst, const ir_mods *mods) {
  ir_instr *i = ir_instr_new(b, op, type, 1 + nval, ndst);
  if (mods) i->mods = *mods;
  i->src[0] = base;
  for (unsigned k = 0; k < nval; k++) i->src[1 + k] = vals[k];
  i->offset = offset;
  for (unsigned k = 0; k < ndst; k++) {
    ir_type t = ir_expected_dst_type(i, k);
    ir_instr_make_dst(i, k, t == ir_type_none ? type : t);
  }
  return i;
}

/* ---- phis ------------------------------------------------------------- */

ir_instr *ir_phi(ir_builder *b, ir_block *block, ir_type t, unsigned npreds) {
  /* After the phis already there, so phis keep their creation order. */
  ir_instr *at = block->first;
  while (at && at->op == ir_op_phi) at = at->next;
  ir_builder pb = {.module = block->func->module, .func = block->func, .block = block,
                   .before = at, .loc = b ? b->loc : (ir_loc){0, 0}};
  ir_instr *i = ir_instr_new(&pb, ir_op_phi, t, npreds, 1);
  ir_instr_make_dst(i, 0, t);
  return i;
}

void ir_phi_set_src(ir_instr *phi, unsigned i, ir_value *v) {
  PW_ASSERT(i < phi->nsrc);
  phi->src[i] = v;
}

void ir_phi_add_src(ir_instr *phi, ir_value *v) {
  unsigned n = phi->nsrc;
  if (n == ir_phi_cap(n)) {
    if (n >= UINT16_MAX) PW_DIE("phi with too many operands");
    phi->src = ir_grow_array(&phi->block->func->module->arena, phi->src, n, ir_phi_cap(n + 1),
                             sizeof(ir_value *));
  }
  phi->src[n] = v;
  phi->nsrc = (uint16_t)(n + 1);
}

/* ---- terminators ------------------------------------------------------ */

static ir_instr *branch(ir_builder *b, ir_op op, ir_value *cond, unsigned n, ir_block *const *t) {
  ir_instr *i = ir_instr_new(b, op, ir_type_none, cond ? 1 : 0, 0);
  if (cond) i->src[0] = cond;
  i->ntargets = n;
  i->targets = IR_NEW_ARRAY(arena_of(b), ir_block *, n ? n : 1);
  for (unsigned k = 0; k < n; k++) {
    i->targets[k] = t[k];
    if (t[k]) ir_block_add_pred(t[k], b->block);
  }
  return i;
}

ir_instr *ir_br(ir_builder *b, ir_block *target) {
  return branch(b, ir_op_br, NULL, 1, (ir_block *[]){target});
}

ir_instr *ir_cbr(ir_builder *b, ir_value *cond, ir_block *if_true, ir_block *if_false) {
  return branch(b, ir_op_cbr, cond, 2, (ir_block *[]){if_true, if_false});
}

ir_instr *ir_brx(ir_builder *b, ir_value *index, unsigned ntargets, ir_block *const *targets) {
  return branch(b, ir_op_brx, index, ntargets, targets);
}

ir_instr *ir_ret(ir_builder *b) { return ir_instr_new(b, ir_op_ret, ir_type_none, 0, 0); }
ir_instr *ir_exit(ir_builder *b) { return ir_instr_new(b, ir_op_exit, ir_type_none, 0, 0); }

/* ---- guards ----------------------------------------------------------- */

/* A NULL keep (or keep entry) means the register had no value before: the
 * result keeps an undef of its own type. */
void ir_instr_set_guard(ir_builder *b, ir_instr *i, ir_value *pred, bool neg,
                        ir_value *const *keep) {
  i->guard = pred;
  i->guard_neg = neg;
  i->keep = NULL;
  if (!pred || !i->ndst) return;
  i->keep = IR_NEW_ARRAY(arena_of(b), ir_value *, i->ndst);
  for (unsigned k = 0; k < i->ndst; k++) {
    ir_value *v = keep ? keep[k] : NULL;
    i->keep[k] = v ? v : ir_undef(b, i->dst[k] ? (ir_type)i->dst[k]->type : ir_type_none);
  }
}

/* ---- conversions and clones ------------------------------------------ */

ir_value *ir_build_convert(ir_builder *b, ir_type to, ir_type from, ir_value *x, const ir_mods *mods) {
  ir_instr *i = ir_build(b, ir_op_cvt, to, 1, &x, 1, &to, mods);
  i->type2 = (uint8_t)from;
  return i->dst[0];
}

ir_instr *ir_build_mma(ir_builder *b, ir_type d, ir_type a, ir_type bt, ir_type c, unsigned nsrc,
                       ir_value *const *src, unsigned ndst, const ir_type *dst_types, const ir_mods *mods) {
  ir_instr *i = ir_build(b, ir_op_mma, d, nsrc, src, ndst, dst_types, mods);
  i->type2 = (uint8_t)a;
  i->type3 = (uint8_t)bt;
  i->type4 = (uint8_t)c;
  return i;
}

ir_instr *ir_clone(ir_builder *b, const ir_instr *i, ir_value *const *src, const ir_mods *mods) {
  ir_instr *n = ir_instr_new(b, (ir_op)i->op, (ir_type)i->type, i->nsrc, i->ndst);
  n->type2 = i->type2;
  n->type3 = i->type3;
  n->type4 = i->type4;
  n->sreg = i->sreg;
  n->sreg_comp = i->sreg_comp;
  n->mods = mods ? *mods : i->mods;
  n->offset = i->offset;
  n->opaque = i->opaque;
  n->aux = i->aux;
  for (unsigned k = 0; k < i->nsrc; k++) n->src[k] = src ? src[k] : i->src[k];
  for (unsigned k = 0; k < i->ndst; k++) ir_instr_make_dst(n, k, (ir_type)i->dst[k]->type);
  if (i->ntargets) {
    n->ntargets = i->ntargets;
    n->targets = IR_NEW_ARRAY(arena_of(b), ir_block *, i->ntargets);
    for (uint32_t k = 0; k < i->ntargets; k++) {
      n->targets[k] = i->targets[k];
      if (i->targets[k]) ir_block_add_pred(i->targets[k], b->block);
    }
  }
  if (i->guard) ir_instr_set_guard(b, n, i->guard, i->guard_neg, i->keep);
  return n;
}

void ir_instr_set_target(ir_instr *i, unsigned k, ir_block *t) {
  PW_ASSERT(k < i->ntargets);
  i->targets[k] = t;
}

/* ---- editing ---------------------------------------------------------- */

/* Block preds are not updated when a terminator goes: ir_compute_preds. */
void ir_instr_remove(ir_instr *i) {
  ir_block *b = i->block;
  if (!b) return;
  if (i->prev) i->prev->next = i->next;
  else b->first = i->next;
  if (i->next) i->next->prev = i->prev;
  else b->last = i->prev;
  i->prev = i->next = NULL;
  i->block = NULL;
}

static ir_value *resolve(ir_func *f, ir_value **map, ir_value *v) {
  if (!v || v->id >= f->nvalues || !map[v->id]) return v;
  ir_value *r = v;
  uint32_t steps = 0;
  while (r->id < f->nvalues && map[r->id] && map[r->id] != r) {
    r = map[r->id];
    if (++steps > f->nvalues) PW_DIE("ir_replace_uses: cycle in the replacement map");
  }
  /* Path compression: later lookups of v take one step. */
  for (ir_value *p = v; p != r;) {
    ir_value *n = map[p->id];
    map[p->id] = r;
    p = n;
  }
  return r;
}

void ir_replace_uses(ir_func *f, ir_value **map) {
  ir_foreach_block(f, b) {
    ir_foreach_instr(b, i) {
      for (unsigned k = 0; k < i->nsrc; k++) i->src[k] = resolve(f, map, i->src[k]);
      if (i->guard) i->guard = resolve(f, map, i->guard);
      if (i->keep)
        for (unsigned k = 0; k < i->ndst; k++) i->keep[k] = resolve(f, map, i->keep[k]);
    }
  }
}
