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

/* bar.sync 0 / barrier.sync 0 (bar with no operand or an immediate 0) is
 * the workgroup barrier; lower/ makes the other barriers of PTX */
void cg_wave_bar(cg_emitter *E, const ir_instr *i) {
  if (i->mods.barmode == IR_BAR_SYNC && (i->nsrc == 0 || (i->nsrc == 1 && i->src[0]->kind == IR_VAL_CONST && i->src[0]->imm == 0))) {
    cg_workgroup_barrier(E);
    return;
  }
  cg_unsupported(E, i, "named barriers, thread counts and bar.arrive are left to lower/ (not run)");
}

void cg_wave_sync(cg_emitter *E, const ir_instr *i) {
  (void)i;
  cg_intrinsic(E->c, "llvm.amdgcn.wave.barrier", NULL, 0, NULL, 0, true);
}

/* ---- lanes and cross-lane operations --------------------------------------- */

/* wave_lane_id: mbcnt.lo of all ones, then mbcnt.hi of it on wave64 */
LLVMValueRef cg_wave_lane_id(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  (void)i;
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

static LLVMValueRef ballot(cg_emitter *E, LLVMValueRef pred) {
  LLVMTypeRef t = E->c->wave_mask;
  return cg_intrinsic(E->c, E->c->wave_size == 64 ? "llvm.amdgcn.ballot.i64" : "llvm.amdgcn.ballot.i32",
                      &t, 1, &pred, 1, true);
}

/* wave_ballot of src[0]; wave_exec, the ballot of true */
LLVMValueRef cg_wave_ballot(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  if (i->op == ir_op_wave_exec) return ballot(E, LLVMConstInt(c->i1, 1, 0));
  return ballot(E, cg_op_as(E, i, 0, c->i1));
}

LLVMValueRef cg_wave_bpermute(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMValueRef args[2] = {LLVMBuildShl(E->b, cg_op_as(E, i, 1, c->i32), kint(c->i32, 2), ""), cg_op_as(E, i, 0, c->i32)};
  return cg_intrinsic(c, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2, true);
}

LLVMValueRef cg_wave_swizzle(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  const ir_value *pat = i->src[1];
  if (pat->kind != IR_VAL_CONST || pat->imm >= 0x8000) {
    cg_unsupported(E, i, "the swizzle pattern must be an immediate below 0x8000 (bitmask mode)");
    return NULL;
  }
  /* A pattern that stays inside each quad of lanes (and_mask keeps bits
   * 4:2, or_mask and xor_mask touch only bits 1:0) is a DPP quad_perm:
   * v_mov_b32_dpp, one VALU op without the LDS crossbar or a wait, which
   * LLVM's DPP combine can fold into the op that uses it (the last steps
   * of a butterfly reduction, lower_mma's quad broadcasts).  quad_perm
   * lane i of each quad reads lane sel_i: dpp_ctrl = sel_0 | sel_1 << 2 |
   * sel_2 << 4 | sel_3 << 6 (AMDGPU ISA, DPP_CTRL QUAD_PERM 0x00-0xff),
   * row and bank masks all on, bound_ctrl on (a source lane that is
   * not active reads as 0, which PTX leaves undefined; with it LLVM's
   * DPP combine folds the move into a VOP2 user: v_add_f32_dpp).  Every
   * target of the table has DPP16 quad_perm. */
  uint32_t p = (uint32_t)pat->imm, and_m = p & 31, or_m = (p >> 5) & 31, xor_m = (p >> 10) & 31;
  if ((and_m & 0x1c) == 0x1c && !(or_m & 0x1c) && !(xor_m & 0x1c)) {
    uint32_t ctrl = 0;
    for (uint32_t q = 0; q < 4; q++) ctrl |= (((q & and_m) | or_m) ^ xor_m) << (2 * q);
    LLVMValueRef args[6] = {LLVMGetPoison(c->i32), cg_op_as(E, i, 0, c->i32), kint(c->i32, ctrl & 0xff),
                            kint(c->i32, 15), kint(c->i32, 15), LLVMConstInt(c->i1, 1, 0)};
    return cg_intrinsic(c, "llvm.amdgcn.update.dpp", &c->i32, 1, args, 6, true);
  }
  LLVMValueRef args[2] = {cg_op_as(E, i, 0, c->i32), kint(c->i32, pat->imm)};
  return cg_intrinsic(c, "llvm.amdgcn.ds.swizzle", NULL, 0, args, 2, true);
}

LLVMValueRef cg_wave_readlane(cg_emitter *E, const ir_instr *i) {
  LLVMTypeRef lt = cg_ltype(E, (ir_type)i->type);
  LLVMValueRef args[2] = {cg_op(E, i, 0), cg_op_as(E, i, 1, E->c->i32)};
  return cg_intrinsic(E->c, "llvm.amdgcn.readlane", &lt, 1, args, 2, true);
}

LLVMValueRef cg_wave_readfirstlane(cg_emitter *E, const ir_instr *i) {
  LLVMTypeRef lt = cg_ltype(E, (ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0);
  return cg_intrinsic(E->c, "llvm.amdgcn.readfirstlane", &lt, 1, &a, 1, true);
}

/* The f64 MFMA (llvm.amdgcn.mfma.f64.16x16x4f64(double A, double B,
 * <4 x double> C, i32 cbsz, i32 abid, i32 blgp)): A and B each one double
 * of two registers (low word first), C and D <4 x double> of eight; cbsz,
 * abid and blgp 0 (no broadcast, no negation). */
static void cg_wave_mma_f64(cg_emitter *E, const ir_instr *i, const ir_amx_info *r) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  LLVMValueRef v[3];
  unsigned first[3] = {1, 1u + r->na, 1u + r->na + r->nb}, count[3] = {r->na, r->nb, r->nc};
  for (unsigned k = 0; k < 3; k++) {
    LLVMValueRef x = LLVMGetPoison(LLVMVectorType(c->i32, count[k]));
    for (unsigned w = 0; w < count[k]; w++)
      x = LLVMBuildInsertElement(B, x, cg_op_as(E, i, first[k] + w, c->i32), kint(c->i32, w), "");
    v[k] = LLVMBuildBitCast(B, x, count[k] == 2 ? c->f64 : LLVMVectorType(c->f64, count[k] / 2), "");
  }
  LLVMValueRef args[6] = {v[0], v[1], v[2], c->i32_0, c->i32_0, c->i32_0};
  LLVMValueRef d = cg_intrinsic(c, r->llvm, NULL, 0, args, 6, true);
  if (!d) {
    cg_unsupported(E, i, "LLVM has no intrinsic %s", r->llvm);
    return;
  }
  d = LLVMBuildBitCast(B, d, LLVMVectorType(c->i32, r->nc), "");
  for (unsigned k = 0; k < r->nc; k++) cg_set_dst(E, i, k, LLVMBuildExtractElement(B, d, kint(c->i32, k), ""), false);
}

/* wave_mma: one MFMA or WMMA instruction through its intrinsic (row r of
 * ir/ir_amd_matrix.def).  A and B go as the vectors the intrinsic takes
 * (<2na x half> for f16, <2na x i16> for bf16: IntrinsicsAMDGPU.td gives
 * bf16 operands as i16; one i32 of four s8 for the i8 MFMA), C as
 * <nc x float> (<nc x i32> for s32); the MFMA rows' cbsz, abid and
 * blgp are 0 (no broadcast), the WMMA intrinsics are overloaded on the D
 * and A types.  LLVM places A/B/C in VGPRs or AGPRs and inserts the MFMA
 * and WMMA hazard waits (GCNHazardRecognizer). */
void cg_wave_mma(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  const ir_amx_info *r = ir_amx_info_of((unsigned)i->src[0]->imm);
  if (r->ta == ir_type_f64) {
    cg_wave_mma_f64(E, i, r);
    return;
  }
  bool i8 = r->ta == ir_type_s8 || r->ta == ir_type_u8;
  LLVMTypeRef et = r->ta == ir_type_bf16 ? c->i16 : c->f16, ct = r->tc == ir_type_s32 ? c->i32 : c->f32;
  LLVMValueRef vec[3];
  unsigned first[3] = {1, 1u + r->na, 1u + r->na + r->nb}, count[3] = {r->na, r->nb, r->nc};
  for (unsigned v = 0; v < 3; v++) {
    if (v < 2 && i8 && count[v] == 1) {   /* the intrinsic takes the register as an i32 */
      vec[v] = cg_op_as(E, i, first[v], c->i32);
      continue;
    }
    LLVMTypeRef wt = LLVMVectorType(v < 2 ? c->i32 : ct, count[v]);
    LLVMValueRef x = LLVMGetPoison(wt);
    for (unsigned k = 0; k < count[v]; k++)
      x = LLVMBuildInsertElement(B, x, cg_op_as(E, i, first[v] + k, v < 2 ? c->i32 : ct), kint(c->i32, k), "");
    vec[v] = v < 2 && !i8 ? LLVMBuildBitCast(B, x, LLVMVectorType(et, 2 * count[v]), "") : x;
  }
  LLVMValueRef d;
  if (r->layout == IR_AMX_L_MFMA_4X4_16B) {
    LLVMValueRef args[6] = {vec[0], vec[1], vec[2], c->i32_0, c->i32_0, c->i32_0};
    d = cg_intrinsic(c, r->llvm, NULL, 0, args, 6, true);
  } else if (i8) {
    /* llvm.amdgcn.wmma.i32.16x16x16.iu8(i1 A signed, A, i1 B signed, B, C, i1 clamp): each
     * sign flag the row's type of that operand (s8 1, u8 0: the ISA's NEG_LO[0] / NEG_LO[1],
     * which llc prints as neg_lo:[A,B,0]) */
    LLVMTypeRef i1 = LLVMInt1TypeInContext(LLVMGetTypeContext(c->i32));
    LLVMValueRef no = LLVMConstInt(i1, 0, 0);
    LLVMValueRef args[6] = {LLVMConstInt(i1, ir_amx_signed(r, false), 0), vec[0], LLVMConstInt(i1, ir_amx_signed(r, true), 0),
                            vec[1], vec[2], no};
    LLVMTypeRef types[2] = {LLVMTypeOf(vec[2]), LLVMTypeOf(vec[0])};
    d = cg_intrinsic(c, r->llvm, types, 2, args, 6, true);
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

/* ---- dispatch values ----------------------------------------------------- */

/* The dimension operand k of a dispatch value: an immediate 0, 1 or 2
 * (x, y, z); 0 after reporting anything else. */
static unsigned dim_const(cg_emitter *E, const ir_instr *i, unsigned k) {
  const ir_value *v = i->src[k];
  if (v->kind != IR_VAL_CONST || v->imm > 2) {
    cg_unsupported(E, i, "the dimension must be an immediate 0, 1 or 2");
    return 0;
  }
  return (unsigned)v->imm;
}

static LLVMValueRef load_at(cg_emitter *E, LLVMTypeRef t, LLVMValueRef base, int64_t off, unsigned align) {
  LLVMValueRef p = cg_gep_bytes(E, base, off);
  LLVMValueRef l = LLVMBuildLoad2(E->b, t, p, "");
  LLVMSetAlignment(l, align);
  return l;
}

static LLVMValueRef workitem_id(cg_emitter *E, unsigned dim) {
  static const char *const n[] = {"llvm.amdgcn.workitem.id.x", "llvm.amdgcn.workitem.id.y",
                                  "llvm.amdgcn.workitem.id.z"};
  return cg_intrinsic(E->c, n[dim], NULL, 0, NULL, 0, false);
}

static LLVMValueRef workgroup_id(cg_emitter *E, unsigned dim) {
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
static LLVMValueRef workgroup_size(cg_emitter *E, unsigned dim) {
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
static LLVMValueRef workgroup_count(cg_emitter *E, unsigned dim) {
  cg_context *c = E->c;
  if (c->cov >= 5) {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.implicitarg.ptr", NULL, 0, NULL, 0, false);
    return load_at(E, c->i32, p, 4 * dim, 4);
  }
  LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
  LLVMValueRef g = load_at(E, c->i32, p, 12 + 4 * dim, 4);
  return LLVMBuildUDiv(E->b, g, workgroup_size(E, dim), "");
}

/* workitem_id, workgroup_id, workgroup_size, workgroup_count of the
 * dimension src[0] */
LLVMValueRef cg_wave_dispatch_id(cg_emitter *E, const ir_instr *i) {
  unsigned dim = dim_const(E, i, 0);
  return i->op == ir_op_workitem_id ? workitem_id(E, dim)
         : i->op == ir_op_workgroup_id ? workgroup_id(E, dim)
         : i->op == ir_op_workgroup_size ? workgroup_size(E, dim)
                                         : workgroup_count(E, dim);
}

/* dyn_lds_size: the dispatch packet's group_segment_size (u32 at 24) less
 * the static LDS (llvm.amdgcn.groupstaticsize) */
LLVMValueRef cg_wave_dyn_lds_size(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  (void)i;
  LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
  LLVMValueRef total = load_at(E, c->i32, p, 24, 4);
  LLVMValueRef st = cg_intrinsic(c, "llvm.amdgcn.groupstaticsize", NULL, 0, NULL, 0, false);
  return LLVMBuildSub(E->b, total, st, "");
}

/* ---- counters and hardware registers -------------------------------------- */

LLVMValueRef cg_wave_cycle_counter(cg_emitter *E, const ir_instr *i) {
  (void)i;
  return cg_intrinsic(E->c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false);
}

/* realtime_counter, the 100 MHz counter: s_memrealtime on gfx9
 * (IR_TARGET_MEMTIME), llvm.readsteadycounter (s_sendmsg_rtn REALTIME) on
 * gfx11+ */
LLVMValueRef cg_wave_realtime_counter(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  (void)i;
  if (c->target->features & IR_TARGET_MEMTIME)
    return cg_intrinsic(c, "llvm.amdgcn.s.memrealtime", NULL, 0, NULL, 0, false);
  return cg_intrinsic(c, "llvm.readsteadycounter", NULL, 0, NULL, 0, false);
}

/* s_getreg_b32 of the generation's hardware id register (ir_targets.def:
 * HW_ID, id 4, on gfx9; HW_ID1, id 23, on gfx10+), all 32 bits:
 * simm16 = id | offset 0 << 6 | (size-1 = 31) << 11 */
LLVMValueRef cg_wave_hw_id(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  (void)i;
  LLVMValueRef a = kint(c->i32, ir_target_gen(c->target)->hw_id_reg | (31u << 11));
  return cg_intrinsic(c, "llvm.amdgcn.s.getreg", NULL, 0, &a, 1, false);
}
