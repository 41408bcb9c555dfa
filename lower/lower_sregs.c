/* lower/lower_sregs.c: PTX special registers (PTX ISA chapter 10) to the
 * target values of ir_ops.def (docs/lowering.md, "Special registers").
 *
 *   %tid.d         workitem_id d        (VGPR v0, or packed v0 on gfx90a+)
 *   %ntid.d        workgroup_size d     (COV5 hidden_group_size_d)
 *   %ctaid.d       workgroup_id d       (SGPRs set up by the dispatch)
 *   %nctaid.d      workgroup_count d    (COV5 hidden_block_count_d)
 *   %dynamic_smem_size  dyn_lds_size
 *   %clock64            cycle_counter; %clock / %clock_hi its halves
 *   %globaltimer        realtime_counter (100 MHz on CDNA and RDNA) * 10,
 *                       in nanoseconds; _lo / _hi its halves
 *   %smid               from hw_id, the hardware id register of the target's
 *                       generation: the unit that runs a workgroup, its
 *                       shader array and engine, packed low to high
 *                       (ir/ir_targets.def, IR_GEN rows, which cite the ISA
 *                       guides):
 *                       gfx9 (CDNA) HW_ID: CU_ID [11:8] | SE_ID [15:13] << 4
 *                       gfx10+ (RDNA) HW_ID1: WGP_ID [13:10] | SA_ID [16] << 4
 *                         | SE_ID << 5 ([19:18] gfx10, [20:18] gfx11, none
 *                         gfx12)
 *   %nsmid, %gridid     the constants 1 and 0 (no hardware register or
 *                       dispatch field holds either)
 *   the cluster registers (PTX ISA chapter 10): a launch is a grid of 1x1x1
 *                       clusters (docs/runtime.md), so %clusterid is
 *                       %ctaid, %nclusterid %nctaid, %cluster_ctaid and
 *                       %cluster_ctarank 0, %cluster_nctaid (x, y, z) and
 *                       %cluster_nctarank 1, %is_explicit_cluster false
 *                       (no launch gives cluster dimensions): the values
 *                       the emulator gives (emu_alu.c)
 * The warp registers (%laneid %warpid %lanemask_* ...) belong to
 * lower_warps.c.  The rest (%envreg %pm*,
 * %total_smem_size %aggr_smem_size %reserved_smem_* %current_graph_exec)
 * no stage translates for AMD GPUs: they stay as sreg reads, which the
 * emulator answers and codegen reports; they are not warp level, so
 * lowered IR may keep them (ir_verify's require_lowered).
 */
#include "lower_internal.h"

typedef struct sregs_state {
  const lower_sregs_options *opt;
  const ir_gen_info *gen;  /* the module's target's generation: %smid's layout */
} sregs_state;

static bool want(const ir_instr *i, void *data) {
  (void)data;
  if (i->op != ir_op_sreg) return false;
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_tid: case ir_sreg_ntid: case ir_sreg_ctaid: case ir_sreg_nctaid:
  case ir_sreg_dynamic_smem_size: case ir_sreg_clock: case ir_sreg_clock_hi: case ir_sreg_clock64:
  case ir_sreg_globaltimer: case ir_sreg_globaltimer_lo: case ir_sreg_globaltimer_hi: case ir_sreg_smid:
  case ir_sreg_nsmid: case ir_sreg_gridid:
  case ir_sreg_is_explicit_cluster: case ir_sreg_clusterid: case ir_sreg_nclusterid: case ir_sreg_cluster_ctaid:
  case ir_sreg_cluster_nctaid: case ir_sreg_cluster_ctarank: case ir_sreg_cluster_nctarank:
    return true;
  default:
    return false;
  }
}

/* Eliminates the reads of the special registers it maps (the others are
 * not warp level: the emulator answers them, codegen reports them). */
const lower_contract lower_sregs_contract = {
    .pass = "lower_sregs",
    .sregs = (const ir_sreg[]){ir_sreg_tid, ir_sreg_ntid, ir_sreg_ctaid, ir_sreg_nctaid, ir_sreg_dynamic_smem_size,
                               ir_sreg_clock, ir_sreg_clock_hi, ir_sreg_clock64, ir_sreg_globaltimer,
                               ir_sreg_globaltimer_lo, ir_sreg_globaltimer_hi, ir_sreg_smid, ir_sreg_nsmid,
                               ir_sreg_gridid, ir_sreg_is_explicit_cluster, ir_sreg_clusterid,
                               ir_sreg_nclusterid, ir_sreg_cluster_ctaid, ir_sreg_cluster_nctaid,
                               ir_sreg_cluster_ctarank, ir_sreg_cluster_nctarank, ir_sreg_count},
    .preserves = 0,
};

static ir_value *dim_op(ir_builder *b, ir_op op, unsigned d) {
  return ir_build_value(b, op, ir_type_u32, 1, (ir_value *[]){ir_imm(b, ir_type_u32, d)}, NULL);
}

static ir_value *hi32(ir_builder *b, ir_value *x64) {
  return lower_lo32(b, lower_alu(b, ir_op_shr, ir_type_b64, x64, lower_imm32(b, 32)));
}

/* %smid: each field of hw_id (unit, shader array, engine) moved to its
 * place in the result, pos, by one shift and one mask:
 * (h >> (lo - pos)) & (ones(bits) << pos).  The PTX ISA promises no more
 * than an id below %nsmid, neither contiguous nor stable over time. */
static ir_value *smid(ir_builder *b, const ir_gen_info *g) {
  ir_value *h = ir_build_value(b, ir_op_hw_id, ir_type_u32, 0, NULL, NULL), *r = NULL;
  const ir_hw_field f[3] = {g->unit, g->sa, g->se};
  unsigned pos = 0;
  for (unsigned k = 0; k < 3; k++) {
    if (!f[k].bits) continue;
    PW_ASSERT(f[k].lo >= pos);
    ir_value *x = lower_alu(b, ir_op_shr, ir_type_b32, h, lower_imm32(b, f[k].lo - pos));
    x = lower_alu(b, ir_op_and, ir_type_b32, x, lower_imm32(b, ((1u << f[k].bits) - 1) << pos));
    r = r ? lower_alu(b, ir_op_or, ir_type_b32, r, x) : x;
    pos += f[k].bits;
  }
  return r;
}

/* The result of a read must keep the sreg's type (u32/u64): the target ops
 * give u32/u64, the unpacks b32; a copy gives the declared type where the
 * uses care (they do not: b32 and u32 are compatible). */
static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const sregs_state *s = data;
  unsigned d = i->sreg_comp;
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_tid: out[0] = dim_op(b, ir_op_workitem_id, d); return true;
  case ir_sreg_ntid: out[0] = dim_op(b, ir_op_workgroup_size, d); return true;
  case ir_sreg_ctaid: out[0] = dim_op(b, ir_op_workgroup_id, d); return true;
  case ir_sreg_nctaid: out[0] = dim_op(b, ir_op_workgroup_count, d); return true;
  case ir_sreg_dynamic_smem_size:
    out[0] = ir_build_value(b, ir_op_dyn_lds_size, ir_type_u32, 0, NULL, NULL);
    return true;
  case ir_sreg_clock: case ir_sreg_clock_hi: case ir_sreg_clock64: {
    ir_value *c = ir_build_value(b, ir_op_cycle_counter, ir_type_u64, 0, NULL, NULL);
    out[0] = i->sreg == ir_sreg_clock64 ? c : i->sreg == ir_sreg_clock ? lower_lo32(b, c) : hi32(b, c);
    return true;
  }
  case ir_sreg_globaltimer: case ir_sreg_globaltimer_lo: case ir_sreg_globaltimer_hi: {
    ir_value *t = ir_build_value(b, ir_op_realtime_counter, ir_type_u64, 0, NULL, NULL);
    ir_value *ns = ir_mul(b, ir_type_u64, t, ir_imm(b, ir_type_u64, 10), .mulmode = IR_MUL_LO);
    out[0] = i->sreg == ir_sreg_globaltimer ? ns : i->sreg == ir_sreg_globaltimer_lo ? lower_lo32(b, ns) : hi32(b, ns);
    return true;
  }
  case ir_sreg_smid: out[0] = smid(b, s->gen); return true;
  case ir_sreg_nsmid: out[0] = ir_imm(b, ir_type_u32, 1); return true;
  case ir_sreg_gridid: out[0] = ir_imm(b, ir_type_u64, 0); return true;
  case ir_sreg_is_explicit_cluster:
    out[0] = lower_setp(b, IR_CMP_NE, ir_type_u32, lower_imm32(b, 0), lower_imm32(b, 0));
    return true;
  case ir_sreg_clusterid: out[0] = d < 3 ? dim_op(b, ir_op_workgroup_id, d) : ir_imm(b, ir_type_u32, 0); return true;
  case ir_sreg_nclusterid:
    out[0] = d < 3 ? dim_op(b, ir_op_workgroup_count, d) : ir_imm(b, ir_type_u32, 0);
    return true;
  case ir_sreg_cluster_ctaid: case ir_sreg_cluster_ctarank: out[0] = ir_imm(b, ir_type_u32, 0); return true;
  case ir_sreg_cluster_nctaid: out[0] = ir_imm(b, ir_type_u32, d < 3 ? 1 : 0); return true;
  case ir_sreg_cluster_nctarank: out[0] = ir_imm(b, ir_type_u32, 1); return true;
  default: return false;
  }
}

bool lower_sregs(ir_module *m, const lower_sregs_options *opt) {
  /* no target: the layout of the wave size's pseudo target (as the
   * emulator's hw_id) */
  const ir_target *t = m->facts.target ? m->facts.target : ir_target_for_wave(m->facts.wave_size);
  sregs_state s = {opt, ir_target_gen(t)};
  return lower_walk(m, want, lower_instr, &s);
}
