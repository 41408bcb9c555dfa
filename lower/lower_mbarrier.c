/* lower/lower_mbarrier.c: mbarrier objects (PTX ISA 9.7.13.15) and
 * cp.async.mbarrier.arrive (9.7.9.25.3.3) as 64-bit atomics on the object
 * word (docs/lowering.md, "mbarrier").
 *
 * The object is the 64-bit word of ir/ir_mbarrier.h, the layout the
 * emulator uses too (phase parity in bit 63, tx-count in bits 40..61,
 * expected and pending arrival counts in bits 20..39 and 0..19):
 *
 *   init [a], n         st.b64 [a], n << 20 | n           (phase 0, tx 0)
 *   inval [a]           st.b64 [a], 0
 *   arrive, arrive_drop, expect_tx, complete_tx, cp.async.mbarrier.arrive.noinc:
 *     pre:   old0 = ld.b64 [a]
 *     loop:  old = phi(old0, seen)
 *            state = old with pending -= arrive, expected -= drop,
 *                    tx += delta (each field modulo its width)
 *            new = pending' == 0 && tx' == 0 ? phase ^ 1, tx 0, pending = expected'
 *                                             : state
 *            seen = atom.cas.b64 [a], old, new       (acq_rel at the op's scope)
 *            cbr seen == old, join, loop
 *     join:  the arrive's result is state
 *   test_wait / try_wait [a], state | parity:
 *            w = ld.acquire.b64 [a];  done = w >> 63 != (state >> 63 | parity & 1)
 *   pending_count state:  state & 0xfffff
 *
 * The same function of the old word as ir_mbar_update, field by field, so a
 * kernel that copies the word around sees the same bits lowered and
 * unlowered.  try_wait returns at once (its time limit may be zero,
 * 9.7.13.15.16): the program's loop around it spins.  cp.async completes as
 * it is issued (lower_async, which runs first), so the arrive that
 * cp.async.mbarrier.arrive triggers on completion happens at once: without
 * .noinc it raises the pending count and arrives (no change: removed), with
 * .noinc it is an arrive of count 1.
 *
 * Every lane runs its own compare-and-swap loop: the lanes of a wave that
 * update one word at once succeed one per iteration, so a wave of 64 lanes
 * arriving together takes up to 64 iterations (correct; aggregating a
 * wave's arrivals into one atomic is an optimisation left for later).  The
 * wave64 hazard (design.md "Warps on wavefronts"): two warps of one wave
 * that diverge, one spinning in try_wait for the other's arrive, do not
 * make progress on AMD hardware, which runs a wave's divergent paths one
 * after the other (docs/lowering.md).
 */
#include "ir/ir_mbarrier.h"
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_mbarrier_init: case ir_op_mbarrier_inval: case ir_op_mbarrier_expect_tx:
  case ir_op_mbarrier_complete_tx: case ir_op_mbarrier_arrive: case ir_op_mbarrier_arrive_drop:
  case ir_op_mbarrier_test_wait: case ir_op_mbarrier_try_wait: case ir_op_mbarrier_pending_count:
  case ir_op_cp_async_mbarrier_arrive:
    return true;
  default:
    return false;
  }
}

/* Eliminates every mbarrier op and cp.async.mbarrier.arrive; builds
 * compare-and-swap loops. */
const lower_contract lower_mbarrier_contract = {
    .pass = "lower_mbarrier",
    .ops = (const ir_op[]){ir_op_mbarrier_init, ir_op_mbarrier_inval, ir_op_mbarrier_expect_tx,
                           ir_op_mbarrier_complete_tx, ir_op_mbarrier_arrive, ir_op_mbarrier_arrive_drop,
                           ir_op_mbarrier_test_wait, ir_op_mbarrier_try_wait, ir_op_mbarrier_pending_count,
                           ir_op_cp_async_mbarrier_arrive, ir_op_count},
    .preserves = 0,
};

static ir_value *k64(ir_builder *b, uint64_t v) { return ir_imm(b, ir_type_b64, v); }
static ir_value *op64(ir_builder *b, ir_op op, ir_value *x, ir_value *y) { return lower_alu(b, op, ir_type_b64, x, y); }

/* A u32 (or narrower) operand widened to b64; immediates folded. */
static ir_value *wide(ir_builder *b, ir_value *v) {
  uint64_t c;
  if (lower_const(v, &c)) return k64(b, c & 0xffffffffu);
  if (ir_type_bits((ir_type)v->type) == 64) return v;
  return lower_zext64(b, v);
}

/* The space of the lowered accesses: a cluster is one CTA here. */
static ir_mods access_mods(const ir_instr *i) {
  ir_mods m = {.space = i->mods.space == IR_SPACE_SHARED_CLUSTER ? IR_SPACE_SHARED_CTA : i->mods.space};
  return m;
}

static uint8_t scope_of(const ir_instr *i) {
  return i->mods.scope == IR_SCOPE_CLUSTER || !i->mods.scope ? IR_SCOPE_CTA : i->mods.scope;
}

/* field(w) = (w >> shift) & mask */
static ir_value *field(ir_builder *b, ir_value *w, unsigned shift, uint64_t mask) {
  ir_value *s = shift ? op64(b, ir_op_shr, w, k64(b, shift)) : w;
  return op64(b, ir_op_and, s, k64(b, mask));
}

/* The CAS loop of an update (see the top); returns the arrive's state. */
static ir_value *update(ir_builder *b, ir_instr *i, ir_value *arrive, ir_value *drop, ir_value *tx) {
  ir_func *f = b->block->func;
  ir_value *addr = i->src[0];
  ir_mods lm = access_mods(i);
  ir_value *old0 = ir_build_mem(b, ir_op_ld, ir_type_b64, addr, i->offset, 0, NULL, 1, &lm)->dst[0];
  ir_block *pre = b->block;
  ir_block *join = ir_block_split_before(b->before, NULL);
  ir_block *loop = ir_block_create_after(f, pre, NULL);
  ir_builder p = ir_builder_at_end(pre);
  p.loc = b->loc;
  ir_br(&p, loop);
  ir_builder h = ir_builder_at_end(loop);
  h.loc = b->loc;
  ir_instr *phi = ir_phi(&h, loop, ir_type_b64, 1);
  ir_phi_set_src(phi, 0, old0);
  ir_value *old = phi->dst[0];
  ir_value *phase = op64(&h, ir_op_and, old, k64(&h, 1ull << IR_MBAR_PHASE_SHIFT));
  ir_value *pend = field(&h, old, 0, IR_MBAR_COUNT_MASK);
  ir_value *exp = field(&h, old, IR_MBAR_EXPECTED_SHIFT, IR_MBAR_COUNT_MASK);
  ir_value *txf = field(&h, old, IR_MBAR_TX_SHIFT, IR_MBAR_TX_MASK);
  pend = op64(&h, ir_op_and, op64(&h, ir_op_sub, pend, arrive), k64(&h, IR_MBAR_COUNT_MASK));
  exp = op64(&h, ir_op_and, op64(&h, ir_op_sub, exp, drop), k64(&h, IR_MBAR_COUNT_MASK));
  txf = op64(&h, ir_op_and, op64(&h, ir_op_add, txf, tx), k64(&h, IR_MBAR_TX_MASK));
  ir_value *exp_sh = op64(&h, ir_op_shl, exp, k64(&h, IR_MBAR_EXPECTED_SHIFT));
  ir_value *state = op64(&h, ir_op_or, op64(&h, ir_op_or, phase, op64(&h, ir_op_shl, txf, k64(&h, IR_MBAR_TX_SHIFT))),
                         op64(&h, ir_op_or, exp_sh, pend));
  ir_value *done = ir_alu2(&h, ir_op_and, ir_type_pred,
                           lower_setp(&h, IR_CMP_EQ, ir_type_b64, pend, k64(&h, 0)),
                           lower_setp(&h, IR_CMP_EQ, ir_type_b64, txf, k64(&h, 0)));
  ir_value *next = op64(&h, ir_op_or, op64(&h, ir_op_xor, phase, k64(&h, 1ull << IR_MBAR_PHASE_SHIFT)),
                        op64(&h, ir_op_or, exp_sh, exp));
  ir_value *nw = lower_selp(&h, ir_type_b64, next, state, done);
  ir_mods am = access_mods(i);
  am.atomop = IR_ATOM_CAS;
  am.sem = IR_SEM_ACQ_REL;
  am.scope = scope_of(i);
  ir_value *seen = ir_build_mem(&h, ir_op_atom, ir_type_b64, addr, i->offset, 2, (ir_value *[]){old, nw}, 1, &am)->dst[0];
  ir_value *ok = lower_setp(&h, IR_CMP_EQ, ir_type_b64, seen, old);
  ir_cbr(&h, ok, join, loop);
  ir_phi_add_src(phi, seen);
  ir_loc loc = b->loc;
  *b = ir_builder_before(join->first);
  b->loc = loc;
  return state;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_mbarrier_options *o = data;
  ir_mods sm = access_mods(i);
  ir_value *one = k64(b, 1), *zero = k64(b, 0);
  switch ((ir_op)i->op) {
  case ir_op_mbarrier_init: {
    /* count in 1 .. 2^20-1 (9.7.13.15.9): both counts, phase 0, tx 0 */
    ir_value *n = op64(b, ir_op_and, wide(b, i->src[1]), k64(b, IR_MBAR_COUNT_MASK));
    ir_value *w = op64(b, ir_op_or, op64(b, ir_op_shl, n, k64(b, IR_MBAR_EXPECTED_SHIFT)), n);
    ir_build_mem(b, ir_op_st, ir_type_b64, i->src[0], i->offset, 1, (ir_value *[]){w}, 0, &sm);
    return true;
  }
  case ir_op_mbarrier_inval:
    ir_build_mem(b, ir_op_st, ir_type_b64, i->src[0], i->offset, 1, (ir_value *[]){zero}, 0, &sm);
    return true;
  case ir_op_mbarrier_expect_tx:
    update(b, i, zero, zero, wide(b, i->src[1]));
    return true;
  case ir_op_mbarrier_complete_tx:
    update(b, i, zero, zero, op64(b, ir_op_sub, zero, wide(b, i->src[1])));
    return true;
  case ir_op_mbarrier_arrive:
  case ir_op_mbarrier_arrive_drop: {
    bool drop = i->op == ir_op_mbarrier_arrive_drop;
    ir_value *cnt = one, *tx = zero;
    if (i->mods.mbar == IR_MBAR_EXPECT_TX) tx = wide(b, i->src[1]);   /* then an arrive of 1 */
    else if (i->nsrc >= 2) cnt = wide(b, i->src[1]);
    ir_value *state = update(b, i, cnt, drop ? cnt : zero, tx);
    if (i->ndst) out[0] = state;
    return true;
  }
  case ir_op_cp_async_mbarrier_arrive:
    if (i->mods.mbar == IR_MBAR_NOINC) update(b, i, one, zero, zero);
    return true;   /* without .noinc: +1, then the arrive: no change */
  case ir_op_mbarrier_test_wait:
  case ir_op_mbarrier_try_wait: {
    if (i->nsrc < 2 || i->ndst != 1) {
      lower_error(o->diag, i, "%s with %u operands", ir_op_infos[i->op].ptx, i->nsrc);
      return false;
    }
    ir_mods lm = sm;
    lm.sem = IR_SEM_ACQUIRE;
    lm.scope = scope_of(i);
    ir_value *w = ir_build_mem(b, ir_op_ld, ir_type_b64, i->src[0], i->offset, 0, NULL, 1, &lm)->dst[0];
    ir_value *cur = op64(b, ir_op_shr, w, k64(b, IR_MBAR_PHASE_SHIFT));
    ir_value *want_p = i->mods.mbar == IR_MBAR_PARITY
                           ? op64(b, ir_op_and, wide(b, i->src[1]), one)
                           : op64(b, ir_op_shr, wide(b, i->src[1]), k64(b, IR_MBAR_PHASE_SHIFT));
    out[0] = lower_setp(b, IR_CMP_NE, ir_type_b64, cur, want_p);
    return true;
  }
  case ir_op_mbarrier_pending_count:
    out[0] = lower_lo32(b, op64(b, ir_op_and, wide(b, i->src[0]), k64(b, IR_MBAR_COUNT_MASK)));
    return true;
  default:
    return false;
  }
}

bool lower_mbarrier(ir_module *m, const lower_mbarrier_options *opt) {
  lower_mbarrier_options o = opt ? *opt : (lower_mbarrier_options){0};
  return lower_walk(m, want, lower_instr, &o);
}
