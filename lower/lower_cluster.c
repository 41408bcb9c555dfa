/* lower/lower_cluster.c: the cluster instructions for clusters of one CTA
 * (docs/lowering.md, "Clusters of one CTA").
 *
 * A launch without cluster dimensions is a grid of 1x1x1 clusters, and
 * ptxwave launches nothing larger (docs/runtime.md), so each instruction
 * has an exact meaning on the CTA alone:
 *   barrier.cluster.arrive{.release}  fence.cta (membar.cta orders at least
 *                                     what the release orders); .relaxed:
 *                                     removed
 *   barrier.cluster.wait{.acquire}    workgroup_barrier (release fence,
 *                                     s_barrier, acquire fence), as
 *                                     bar.sync 0 (lower_barriers.c)
 *   mapa a, rank                      a (rank 0 is the CTA itself; a rank
 *                                     >= 1 is undefined in the ISA)
 *   getctarank a                      0
 *   clusterlaunchcontrol.try_cancel [r], [mbar]
 *                                     the request fails: st.v2.b64 [r],
 *                                     {0, 0} (ir/ir_cluster.h's failed
 *                                     response), mbarrier.complete_tx
 *                                     [mbar], 16 (lower_mbarrier expands it:
 *                                     this pass runs first)
 *   clusterlaunchcontrol.query_cancel r
 *                                     the fields of ir/ir_cluster.h
 *   st.async [a], b, [mbar]           st.shared [a], b; mbarrier.complete_tx
 *                                     [mbar], bytes (the target is the
 *                                     CTA's own shared memory)
 *   red.async.op [a], b, [mbar]       red.shared.relaxed.cta.op [a], b;
 *                                     mbarrier.complete_tx [mbar], bytes
 * Why an arrive that does nothing but fence, and a wait that is the whole
 * barrier, is right, and the one schedule it does not give: docs/lowering.md.
 */
#include "ir/ir_cluster.h"
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_barrier_cluster: case ir_op_mapa: case ir_op_getctarank:
  case ir_op_clc_try_cancel: case ir_op_clc_query_cancel: case ir_op_st_async: case ir_op_red_async:
    return true;
  default:
    return false;
  }
}

/* Eliminates the cluster ops; builds fences, barriers, stores and
 * mbarrier.complete_tx. */
const lower_contract lower_cluster_contract = {
    .pass = "lower_cluster",
    .ops = (const ir_op[]){ir_op_barrier_cluster, ir_op_mapa, ir_op_getctarank, ir_op_clc_try_cancel,
                           ir_op_clc_query_cancel, ir_op_st_async, ir_op_red_async, ir_op_count},
    .preserves = 0,
};

static ir_value *field(ir_builder *b, ir_value *lo, ir_value *hi, unsigned d) {
  ir_value *v = d == 0 ? lower_alu(b, ir_op_shr, ir_type_b64, lo, lower_imm32(b, 32))
                : d == 1 ? hi
                         : lower_alu(b, ir_op_shr, ir_type_b64, hi, lower_imm32(b, 32));
  return lower_lo32(b, v);
}

static bool query_cancel(ir_builder *b, const lower_cluster_options *o, ir_instr *i, ir_value **out) {
  unsigned q = i->mods.query;
  bool v4 = q == IR_QUERY_FIRST_CTAID;
  if (i->nsrc != 1 || i->type2 != ir_type_b128 || q < IR_QUERY_IS_CANCELED || q > IR_QUERY_FIRST_CTAID_Z ||
      i->ndst != (v4 ? 4u : 1u)) {
    lower_error(o->diag, i, "clusterlaunchcontrol.query_cancel other than .is_canceled.pred, "
                "get_first_ctaid.v4.b32 or .get_first_ctaid::{x,y,z}.b32 of a .b128 response");
    return false;
  }
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b128, 1, (ir_value *[]){i->src[0]}, 2,
                         (ir_type[]){ir_type_b64, ir_type_b64}, NULL);
  ir_value *lo = u->dst[0], *hi = u->dst[1];
  if (q == IR_QUERY_IS_CANCELED) {
    out[0] = lower_setp(b, IR_CMP_NE, ir_type_b64, lower_alu(b, ir_op_and, ir_type_b64, lo, ir_imm(b, ir_type_b64, 1)),
                        ir_imm(b, ir_type_b64, 0));
  } else if (v4) {
    for (unsigned d = 0; d < 3; d++) out[d] = field(b, lo, hi, d);
    out[3] = lower_imm32(b, 0);   /* the ISA's `_`: no fourth component */
  } else {
    out[0] = field(b, lo, hi, q - IR_QUERY_FIRST_CTAID_X);
  }
  return true;
}

static bool try_cancel(ir_builder *b, const lower_cluster_options *o, ir_instr *i) {
  if (i->nsrc != 2 || i->mods.bulk != IR_BULK_COMPLETE_TX) {
    lower_error(o->diag, i, "clusterlaunchcontrol.try_cancel other than [addr], [mbar] with "
                "mbarrier::complete_tx::bytes");
    return false;
  }
  /* .shared::cta or generic (no space) for both operands (9.7.12) */
  uint8_t sp = i->mods.space;
  ir_value *z = ir_imm(b, ir_type_b64, IR_CLC_FAILED_LO), *z2 = ir_imm(b, ir_type_b64, IR_CLC_FAILED_HI);
  ir_build_mem(b, ir_op_st, ir_type_b64, i->src[0], i->offset, 2, (ir_value *[]){z, z2}, 0,
               IR_MODS(.space = sp, .vec = 2));
  ir_build_mem(b, ir_op_mbarrier_complete_tx, ir_type_b64, i->src[1], 0, 1,
               (ir_value *[]){lower_imm32(b, IR_CLC_RESPONSE_BYTES)}, 0, IR_MODS(.space = sp));
  return true;
}

/* st.async / red.async into the CTA's own shared memory, then complete-tx
 * of the bytes on the mbarrier (lower_mbarrier expands it). */
static bool async_store(ir_builder *b, const lower_cluster_options *o, ir_instr *i) {
  bool st = i->op == ir_op_st_async;
  unsigned nv = st ? (i->mods.vec ? i->mods.vec : 1u) : 1u, tb = ir_type_bits((ir_type)i->type);
  if (i->nsrc != nv + 2 || i->mods.bulk != IR_BULK_COMPLETE_TX || (tb != 32 && tb != 64) ||
      (i->mods.space && i->mods.space != IR_SPACE_SHARED_CLUSTER) ||
      (!st && (i->mods.atomop < IR_ATOM_ADD || i->mods.atomop > IR_ATOM_XOR))) {
    lower_error(o->diag, i, "%s other than [a], b, [mbar] of 32- or 64-bit values with mbarrier::complete_tx::bytes",
                st ? "st.async" : "red.async");
    return false;
  }
  uint8_t sp = i->mods.space ? IR_SPACE_SHARED : 0;
  if (st)
    ir_build_mem(b, ir_op_st, (ir_type)i->type, i->src[0], i->offset, nv, i->src + 1, 0,
                 IR_MODS(.space = sp, .vec = nv > 1 ? nv : 0));
  else
    ir_build_mem(b, ir_op_red, (ir_type)i->type, i->src[0], i->offset, 1, i->src + 1, 0,
                 IR_MODS(.space = sp, .atomop = i->mods.atomop, .sem = IR_SEM_RELAXED, .scope = IR_SCOPE_CTA));
  ir_build_mem(b, ir_op_mbarrier_complete_tx, ir_type_b64, i->src[nv + 1], 0, 1,
               (ir_value *[]){lower_imm32(b, nv * tb / 8)}, 0, IR_MODS(.space = sp));
  return true;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_cluster_options *o = data;
  switch ((ir_op)i->op) {
  case ir_op_barrier_cluster:
    if (i->mods.barmode == IR_BAR_ARRIVE) {
      if (i->mods.sem != IR_SEM_RELAXED)
        ir_build(b, ir_op_membar, ir_type_none, 0, NULL, 0, NULL, IR_MODS(.scope = IR_SCOPE_CTA));
      return true;
    }
    if (i->mods.barmode == IR_BAR_WAIT) {
      ir_build(b, ir_op_workgroup_barrier, ir_type_none, 0, NULL, 0, NULL, NULL);
      return true;
    }
    lower_error(o->diag, i, "barrier.cluster other than .arrive or .wait");
    return false;
  case ir_op_mapa:
    out[0] = ir_copy(b, (ir_type)i->dst[0]->type, i->src[0]);
    return true;
  case ir_op_getctarank:
    out[0] = ir_copy(b, (ir_type)i->dst[0]->type, lower_imm32(b, 0));
    return true;
  case ir_op_clc_try_cancel:
    return try_cancel(b, o, i);
  case ir_op_clc_query_cancel:
    return query_cancel(b, o, i, out);
  case ir_op_st_async: case ir_op_red_async:
    return async_store(b, o, i);
  default:
    return false;
  }
}

bool lower_cluster(ir_module *m, const lower_cluster_options *opt) {
  return lower_walk(m, want, lower_instr, (void *)opt);
}
