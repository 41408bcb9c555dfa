/* codegen/cg_wave.c: the wave-level target operations of ir_ops.def (what
 * lower/ emits): lane ids and cross-lane operations, barriers, the dispatch
 * values (ids, sizes, counts), counters and the matrix instruction
 * (wave_mma).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"
#include "ir/ir_amd_matrix.h"

/* ---- barriers ------------------------------------------------------------ */

/* CUDA's bar.sync 0 / __syncthreads: every thread's earlier writes are seen
 * by the workgroup after it.  AMDGPUUsage "Memory Model GFX942": release
 * fence at workgroup scope, s_barrier, acquire fence at workgroup scope. */
void cg_workgroup_barrier(cg_emitter *E) {
  cg_fence(E, LLVMAtomicOrderingRelease, E->c->ss_workgroup);
  cg_intrinsic(E->c, "llvm.amdgcn.s.barrier", NULL, 0, NULL, 0, true);
  cg_fence(E, LLVMAtomicOrderingAcquire, E->c->ss_workgroup);
}

/* ---- dispatch values ----------------------------------------------------- */

LLVMValueRef cg_dim_const(cg_emitter *E, const ir_instr *i, unsigned k, unsigned *dim) {
  const ir_value *v = i->src[k];
  if (v->kind != IR_VAL_CONST || v->imm > 2) {
    cg_unsupported(E, i, "the dimension must be an immediate 0, 1 or 2");
    *dim = 0;
    return NULL;
  }
  *dim = (unsigned)v->imm;
  return NULL;
}

static LLVMValueRef load_at(cg_emitter *E, LLVMTypeRef t, LLVMValueRef base, int64_t off, unsigned align) {
  LLVMValueRef p = cg_gep_bytes(E, base, off);
  LLVMValueRef l = LLVMBuildLoad2(E->b, t, p, "");
  LLVMSetAlignment(l, align);
  return l;
}

LLVMValueRef cg_workitem_id(cg_emitter *E, unsigned dim) {
  static const char *const n[] = {"llvm.amdgcn.workitem.id.x", "llvm.amdgcn.workitem.id.y",
                                  "llvm.amdgcn.workitem.id.z"};
  return cg_intrinsic(E->c, n[dim], NULL, 0, NULL, 0, false);
}

LLVMValueRef cg_workgroup_id(cg_emitter *E, unsigned dim) {
  static const char *const n[] = {"llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y",
                                  "llvm.amdgcn.workgroup.id.z"};
  return cg_intrinsic(E->c, n[dim], NULL, 0, NULL, 0, false);
}

/* %ntid: COV5 hidden_group_size_x/y/z (u16 at implicit argument offsets
 * 12, 14, 16); COV4 the dispatch packet's workgroup_size_x (u16 at 4).
 * The alignment is what the offset from the base gives: the implicit
 * arguments are 8-aligned (LLVM's getAlignmentForImplicitArgPtr on HSA),
 * the dispatch packet 64-aligned (AMDGPUUsage).  With align 2 everywhere,
 * the backend merged the x and y loads into a dword that SMEM cannot load
 * (scalar loads need 4-byte alignment): a VMEM load into VGPRs and a wait
 * on vmcnt in nearly every kernel (benchmarks/quality_bench.py). */
LLVMValueRef cg_workgroup_size(cg_emitter *E, unsigned dim) {
  cg_context *c = E->c;
  LLVMValueRef v;
  unsigned off = c->cov >= 5 ? 12 + 2 * dim : 4 + 2 * dim;
  if (c->cov >= 5) {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.implicitarg.ptr", NULL, 0, NULL, 0, false);
    v = load_at(E, c->i16, p, off, off % 4 ? 2 : 4);
  } else {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
    v = load_at(E, c->i16, p, off, off % 4 ? 2 : 4);
  }
  return LLVMBuildZExt(E->b, v, c->i32, "");
}

/* %nctaid: COV5 hidden_block_count_x/y/z (u32 at offsets 0, 4, 8); COV4
 * grid_size_x (u32 at 12 + 4*dim of the packet) / workgroup size. */
LLVMValueRef cg_workgroup_count(cg_emitter *E, unsigned dim) {
  cg_context *c = E->c;
  if (c->cov >= 5) {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.implicitarg.ptr", NULL, 0, NULL, 0, false);
    return load_at(E, c->i32, p, 4 * dim, 4);
  }
  LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
  LLVMValueRef g = load_at(E, c->i32, p, 12 + 4 * dim, 4);
  return LLVMBuildUDiv(E->b, g, cg_workgroup_size(E, dim), "");
}

LLVMValueRef cg_dyn_lds_size(cg_emitter *E) {
  cg_context *c = E->c;
  LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
  LLVMValueRef total = load_at(E, c->i32, p, 24, 4);
  LLVMValueRef st = cg_intrinsic(c, "llvm.amdgcn.groupstaticsize", NULL, 0, NULL, 0, false);
  return LLVMBuildSub(E->b, total, st, "");
}

LLVMValueRef cg_lane_id(cg_emitter *E) {
  cg_context *c = E->c;
  LLVMValueRef a[2] = {LLVMConstInt(c->i32, ~0ull, 0), c->i32_0};
  LLVMValueRef lo = cg_intrinsic(c, "llvm.amdgcn.mbcnt.lo", NULL, 0, a, 2, false), r = lo;
  if (c->wave_size != 32) {
    a[1] = lo;
    r = cg_intrinsic(c, "llvm.amdgcn.mbcnt.hi", NULL, 0, a, 2, false);
  }
  /* range(i32 0, wave size): the lanes below this one in a full mask.
   * LLVM does not know it of mbcnt.hi, and lower/'s (L & 31) + (L & 32)
   * folds back to L only with it (the shuffle source lanes). */
  unsigned kind = LLVMGetEnumAttributeKindForName("range", 5);
  uint64_t lower = 0, upper = c->wave_size;
  LLVMAddCallSiteAttribute(r, LLVMAttributeReturnIndex, LLVMCreateConstantRangeAttribute(c->ctx, kind, 32, &lower, &upper));
  return r;
}

LLVMValueRef cg_realtime(cg_emitter *E) {
  cg_context *c = E->c;
  if (c->target->features & CG_FEAT_MEMTIME)
    return cg_intrinsic(c, "llvm.amdgcn.s.memrealtime", NULL, 0, NULL, 0, false);
  return cg_intrinsic(c, "llvm.readsteadycounter", NULL, 0, NULL, 0, false);
}

LLVMValueRef cg_ballot(cg_emitter *E, LLVMValueRef pred) {
  LLVMTypeRef t = E->c->wave_mask;
  return cg_intrinsic(E->c, E->c->wave_size == 64 ? "llvm.amdgcn.ballot.i64" : "llvm.amdgcn.ballot.i32",
                      &t, 1, &pred, 1, true);
}

/* Special registers read directly, before lower/ exists: the dispatch
 * values; everything warp-level is left to lower/. */
LLVMValueRef cg_sreg(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  unsigned k = i->sreg_comp;
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_tid: return cg_workitem_id(E, k);
  case ir_sreg_ctaid: return cg_workgroup_id(E, k);
  case ir_sreg_ntid: return cg_workgroup_size(E, k);
  case ir_sreg_nctaid: return cg_workgroup_count(E, k);
  case ir_sreg_laneid:
    /* %laneid is the lane of the warp: the wave's lane on wave32. */
    if (c->wave_size == 32) return cg_lane_id(E);
    break;
  case ir_sreg_clock: return LLVMBuildTrunc(E->b, cg_intrinsic(c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false), c->i32, "");
  case ir_sreg_clock64: return cg_intrinsic(c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false);
  case ir_sreg_globaltimer: /* ns from the 100 MHz real-time counter */
    return LLVMBuildMul(E->b, cg_realtime(E), LLVMConstInt(c->i64, 10, 0), "");
  case ir_sreg_globaltimer_lo:
    return LLVMBuildTrunc(E->b, LLVMBuildMul(E->b, cg_realtime(E), LLVMConstInt(c->i64, 10, 0), ""), c->i32, "");
  case ir_sreg_dynamic_smem_size: return cg_dyn_lds_size(E);
  case ir_sreg_gridid: return c->i64_0;
  case ir_sreg_nsmid: return LLVMConstInt(c->i32, 1, 0);
  default: break;
  }
  cg_unsupported(E, i, "special register %%%s needs lower/ (not run)", ir_sreg_infos[i->sreg].name);
  return LLVMGetUndef(cg_ltype(E, ir_sreg_infos[i->sreg].type));
}

/* wave_mma: one MFMA or WMMA instruction through its intrinsic (row r of
 * ir/ir_amd_matrix.def).  A and B go as the vectors the intrinsic takes
 * (<2na x half> for f16, <2na x i16> for bf16: IntrinsicsAMDGPU.td gives
 * bf16 operands as i16), C as <nc x float>; the MFMA rows' cbsz, abid and
 * blgp are 0 (no broadcast), the WMMA intrinsics are overloaded on the D
 * and A types.  LLVM places A/B/C in VGPRs or AGPRs and inserts the MFMA
 * and WMMA hazard waits (GCNHazardRecognizer). */
void cg_wave_mma(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  const ir_amx_info *r = ir_amx_info_of((unsigned)i->src[0]->imm);
  LLVMTypeRef et = r->ta == ir_type_bf16 ? c->i16 : c->f16;
  LLVMValueRef vec[3];
  unsigned first[3] = {1, 1u + r->na, 1u + r->na + r->nb}, count[3] = {r->na, r->nb, r->nc};
  for (unsigned v = 0; v < 3; v++) {
    LLVMTypeRef wt = LLVMVectorType(v < 2 ? c->i32 : c->f32, count[v]);
    LLVMValueRef x = LLVMGetPoison(wt);
    for (unsigned k = 0; k < count[v]; k++)
      x = LLVMBuildInsertElement(B, x, cg_op_as(E, i, first[v] + k, v < 2 ? c->i32 : c->f32), kint(c->i32, k), "");
    vec[v] = v < 2 ? LLVMBuildBitCast(B, x, LLVMVectorType(et, 2 * count[v]), "") : x;
  }
  LLVMValueRef d;
  if (r->layout == IR_AMX_L_MFMA_4X4_16B) {
    LLVMValueRef args[6] = {vec[0], vec[1], vec[2], c->i32_0, c->i32_0, c->i32_0};
    d = cg_intrinsic(c, r->llvm, NULL, 0, args, 6, true);
  } else {
    LLVMTypeRef types[2] = {LLVMTypeOf(vec[2]), LLVMTypeOf(vec[0])};
    d = cg_intrinsic(c, r->llvm, types, 2, vec, 3, true);
  }
  if (!d) {
    cg_unsupported(E, i, "LLVM has no intrinsic %s", r->llvm);
    return;
  }
  for (unsigned k = 0; k < r->nc; k++) cg_set_dst(E, i, k, LLVMBuildExtractElement(B, d, kint(c->i32, k), ""), false);
}
