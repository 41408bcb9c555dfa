/* emu/emu_cluster.c: the cluster instructions for a cluster of one CTA.
 *
 * A launch without cluster dimensions runs as a grid of 1x1x1 clusters on
 * sm_90+ (docs/runtime.md: larger clusters are refused at launch), and then
 * each of these has an exact meaning:
 *   mapa (PTX ISA 9.7.9.19)        rank 0 is the CTA itself: the address
 *                                  is unchanged (shared::cluster and
 *                                  shared::cta addresses share one window
 *                                  here); a rank >= %cluster_nctarank (1)
 *                                  is undefined in the ISA: the launch
 *                                  fails naming the kernel and line
 *   getctarank (9.7.9.20)          0
 *   clusterlaunchcontrol.try_cancel (9.7.12): the request fails (a legal
 *                                  outcome): the response of
 *                                  ir/ir_cluster.h is written, then
 *                                  complete-tx of its 16 bytes on the
 *                                  mbarrier, at once (a legal schedule of
 *                                  an asynchronous operation, as
 *                                  cp.async.bulk's in emu_mbarrier.c)
 *   clusterlaunchcontrol.query_cancel: decodes such a response
 *   st.async / red.async (9.7.9.12, 9.7.13.7): the store or reduction into
 *                                  the CTA's own shared memory (the only
 *                                  shared::cluster there is), then
 *                                  complete-tx of its bytes on the
 *                                  mbarrier, at once
 * barrier.cluster is run by the wave loop (EMU_K_CBAR, emu_exec.c).
 */
#include <string.h>

#include "emu_internal.h"
#include "ir/ir_cluster.h"
#include "ir/ir_mbarrier.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

static void h_mapa(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *r = S(1);
  uint64_t *d = D(0);
  EMU_EACH(m, l, {
    if ((uint32_t)r[l] != 0) {
      emu_fault(x, in, (int)l, EMU_ERR_LAUNCH,
                "mapa to CTA rank %u in a cluster of 1 CTA (the rank must be below %%cluster_nctarank, "
                "PTX ISA 9.7.9.19)", (unsigned)(uint32_t)r[l]);
      return;
    }
    d[l] = a[l];
  });
}

static void h_zero(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = 0);
}

static void h_try_cancel(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  unsigned sp = in->space;
  EMU_EACH(m, l, {
    uint64_t ra = (S(0)[l] + (uint64_t)in->imm) & in->amask, mb = S(1)[l] & in->amask;
    uint8_t *p = emu_addr(x, in, l, sp, ra, IR_CLC_RESPONSE_BYTES, true);
    if (!p) return;
    uint64_t resp[2] = {IR_CLC_FAILED_LO, IR_CLC_FAILED_HI};
    memcpy(p, resp, sizeof resp);
    uint64_t *w = emu_addr(x, in, l, sp, mb, 8, true);
    if (!w) return;
    uint64_t old = __atomic_load_n(w, __ATOMIC_SEQ_CST), nw;
    do nw = ir_mbar_update(old, 0, 0, -(int32_t)IR_CLC_RESPONSE_BYTES, NULL);
    while (!__atomic_compare_exchange_n(w, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  });
}

static void h_query_cancel(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *r = S(0);   /* b128: two cells per lane */
  if (in->sub == IR_QUERY_IS_CANCELED) {
    emu_mask v = 0;
    EMU_EACH(m, l, v |= (emu_mask)ir_clc_is_canceled(r[2 * l], r[2 * l + 1]) << l);
    emu_pred_write(x, in->dst[0], m, v);
    return;
  }
  if (in->sub == IR_QUERY_FIRST_CTAID) {
    for (unsigned k = 0; k < in->ndst; k++) {
      uint64_t *d = D(k);
      EMU_LANES(x, m, l, d[l] = k < 3 ? ir_clc_first_ctaid(r[2 * l], r[2 * l + 1], k) : 0);
    }
    return;
  }
  unsigned dim = (unsigned)(in->sub - IR_QUERY_FIRST_CTAID_X);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = ir_clc_first_ctaid(r[2 * l], r[2 * l + 1], dim));
}

/* Subtracts n bytes from the tx-count of the mbarrier at mb (complete_tx). */
static bool complete_tx(emu_exec *x, const emu_inst *in, unsigned l, uint64_t mb, uint32_t n) {
  uint64_t *w = emu_addr(x, in, l, in->space, mb, 8, true);
  if (!w) return false;
  uint64_t old = __atomic_load_n(w, __ATOMIC_SEQ_CST), nw;
  do nw = ir_mbar_update(old, 0, 0, -(int32_t)n, NULL);
  while (!__atomic_compare_exchange_n(w, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
  return true;
}

static void h_st_async(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  unsigned nv = in->nsrc - 2u, eb = in->tbits / 8u;
  EMU_EACH(m, l, {
    uint64_t a = (S(0)[l] + (uint64_t)in->imm) & in->amask;
    for (unsigned k = 0; k < nv; k++) {
      uint8_t *p = emu_addr(x, in, l, in->space, a + (uint64_t)k * eb, eb, true);
      if (!p) return;
      uint64_t v = S(1 + k)[l];
      memcpy(p, &v, eb);
    }
    if (!complete_tx(x, in, l, S(1 + nv)[l] & in->amask, nv * eb)) return;
  });
}

static void h_red_async(emu_exec *x, const emu_inst *in, emu_mask m) {
  x->stores++;
  unsigned eb = in->tbits / 8u;
  bool sgn = in->sub;
  EMU_EACH(m, l, {
    uint64_t a = (S(0)[l] + (uint64_t)in->imm) & in->amask;
    uint8_t *p = emu_addr(x, in, l, in->space, a, eb, true);
    if (!p) return;
    uint64_t old = 0, b = S(1)[l] & in->tmask, r;
    memcpy(&old, p, eb);
    int64_t so = emu_sext(old, in->tbits), sb = emu_sext(b, in->tbits);
    switch ((ir_atomop)in->mods.atomop) {
    case IR_ATOM_ADD: r = old + b; break;
    case IR_ATOM_MIN: r = sgn ? (uint64_t)(so < sb ? so : sb) : (old < b ? old : b); break;
    case IR_ATOM_MAX: r = sgn ? (uint64_t)(so > sb ? so : sb) : (old > b ? old : b); break;
    case IR_ATOM_INC: r = old >= b ? 0 : old + 1; break;
    case IR_ATOM_DEC: r = old == 0 || old > b ? b : old - 1; break;
    case IR_ATOM_AND: r = old & b; break;
    case IR_ATOM_OR: r = old | b; break;
    case IR_ATOM_XOR: r = old ^ b; break;
    default: r = old; break;
    }
    r &= in->tmask;
    memcpy(p, &r, eb);
    if (!complete_tx(x, in, l, S(2)[l] & in->amask, eb)) return;
  });
}

const char *emu_sel_cluster(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  switch ((ir_op)i->op) {
  case ir_op_barrier_cluster:
    if (i->mods.barmode != IR_BAR_ARRIVE && i->mods.barmode != IR_BAR_WAIT)
      return "barrier.cluster other than .arrive or .wait";
    in->kind = EMU_K_CBAR;
    return NULL;
  case ir_op_mapa:
    if (i->nsrc != 2 || i->ndst != 1) return "mapa with unexpected operands";
    in->fn = h_mapa;
    return NULL;
  case ir_op_getctarank:
    if (i->ndst != 1) return "getctarank with unexpected operands";
    in->fn = h_zero;
    return NULL;
  case ir_op_clc_try_cancel:
    if (i->nsrc != 2 || i->mods.bulk != IR_BULK_COMPLETE_TX)
      return "clusterlaunchcontrol.try_cancel other than [addr], [mbar] with mbarrier::complete_tx::bytes";
    if (i->mods.space && i->mods.space != IR_SPACE_SHARED_CTA && i->mods.space != IR_SPACE_SHARED)
      return "clusterlaunchcontrol.try_cancel in a space other than shared::cta or generic";
    in->fn = h_try_cancel;
    return NULL;
  case ir_op_clc_query_cancel: {
    unsigned q = i->mods.query;
    bool v4 = q == IR_QUERY_FIRST_CTAID;
    if (i->nsrc != 1 || i->type2 != ir_type_b128 || q < IR_QUERY_IS_CANCELED || q > IR_QUERY_FIRST_CTAID_Z ||
        i->ndst != (v4 ? 4u : 1u) || (q == IR_QUERY_IS_CANCELED) != (i->type == ir_type_pred) ||
        (v4 && i->mods.vec != 4))
      return "clusterlaunchcontrol.query_cancel other than .is_canceled.pred, .get_first_ctaid.v4.b32 or "
             ".get_first_ctaid::{x,y,z}.b32 of a .b128 response";
    in->sub = (uint8_t)q;
    in->fn = h_query_cancel;
    return NULL;
  }
  case ir_op_st_async: {
    unsigned nv = i->mods.vec ? i->mods.vec : 1u, tb = ir_type_bits((ir_type)i->type);
    if (i->nsrc != nv + 2 || i->mods.bulk != IR_BULK_COMPLETE_TX || (tb != 32 && tb != 64) ||
        (i->mods.space && i->mods.space != IR_SPACE_SHARED_CLUSTER))
      return "st.async other than [a], b, [mbar] of 32- or 64-bit values with mbarrier::complete_tx::bytes";
    in->fn = h_st_async;
    return NULL;
  }
  case ir_op_red_async: {
    unsigned tb = ir_type_bits((ir_type)i->type);
    ir_atomop op = (ir_atomop)i->mods.atomop;
    if (i->nsrc != 3 || i->mods.bulk != IR_BULK_COMPLETE_TX || (tb != 32 && tb != 64) ||
        op < IR_ATOM_ADD || op > IR_ATOM_XOR || (i->mods.space && i->mods.space != IR_SPACE_SHARED_CLUSTER))
      return "red.async other than .add/.min/.max/.inc/.dec/.and/.or/.xor [a], b, [mbar] of a 32- or 64-bit "
             "integer with mbarrier::complete_tx::bytes";
    in->sub = ir_type_kind_of((ir_type)i->type) == IR_TK_SINT;
    in->fn = h_red_async;
    return NULL;
  }
  default:
    return emu_dfmt(d, "unsupported instruction '%s'", ir_op_infos[i->op].ptx);
  }
}
