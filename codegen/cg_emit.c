/* codegen/cg_emit.c: ptxwave IR -> LLVM IR for the AMDGPU backend: the
 * driver (module, functions, blocks, phis, guarded instructions, one
 * dispatch over the ops); each concern's handlers live in their own file
 * (cg_emit.h lists them).
 *
 * Algorithm: declare every function and variable first (calls and address
 * constants may point forward), then translate each body in reverse post-
 * order of its CFG, so every definition is emitted before its non-phi uses;
 * phis are created empty at the top of their block and filled once every
 * block is done, from the LLVM block that ends each IR predecessor (a guard
 * may have split it).
 *
 * Invariant: an instruction that cannot be translated reports an error naming
 * the PTX instruction, the function, the line and the target, and emission
 * goes on (to report more); the module is then discarded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* ---- one instruction ------------------------------------------------------- */

static LLVMValueRef emit_value_op(cg_emitter *E, const ir_instr *i, bool *handled);

static void emit_instr(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  switch ((ir_op)i->op) {
  case ir_op_phi: return; /* created with the block */
  case ir_op_ld:
  case ir_op_ldu:
    cg_mem_load(E, i);
    return;
  case ir_op_st:
    cg_mem_store(E, i);
    return;
  case ir_op_atom:
  case ir_op_red:
    cg_mem_atomic(E, i);
    return;
  case ir_op_call:
    cg_call(E, i);
    return;
  case ir_op_wave_mma:
    cg_wave_mma(E, i);
    return;
  case ir_op_unpack: {
    LLVMValueRef x = cg_val(E, i, i->src[0]);
    unsigned tb = cg_type_bits(LLVMTypeOf(x));
    LLVMValueRef xi = cg_coerce(E, x, LLVMIntTypeInContext(c->ctx, tb));
    unsigned off = 0;
    for (unsigned k = 0; k < i->ndst; k++) {
      if (!i->dst[k]) continue;
      LLVMTypeRef dt = cg_ltype(E, (ir_type)i->dst[k]->type);
      unsigned db = cg_type_bits(dt);
      LLVMValueRef part = LLVMBuildLShr(B, xi, kint(LLVMTypeOf(xi), off), "");
      part = LLVMBuildTrunc(B, part, LLVMIntTypeInContext(c->ctx, db), "");
      cg_set_dst(E, i, k, part, false);
      off += db;
    }
    return;
  }
  case ir_op_setp: {
    ir_type t = (ir_type)i->type;
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    if (is_fvec(t)) {
      /* setp.f16x2 p|q: p from the low halves, q from the high ones, each
       * combined with c: p = BoolOp(t[0], c), q = BoolOp(t[1], c) */
      LLVMValueRef v = cg_fcmp_or_icmp(E, i, ir_type_f32, a, b);
      if (i->nsrc > 2) v = cg_boolop(E, i, v, cg_splat2(E, cg_op_as(E, i, 2, c->i1)));
      cg_set_dst(E, i, 0, LLVMBuildExtractElement(B, v, c->i32_0, ""), false);
      cg_set_dst(E, i, 1, LLVMBuildExtractElement(B, v, c->i32_1, ""), false);
      return;
    }
    LLVMValueRef p = cg_fcmp_or_icmp(E, i, t, a, b);
    LLVMValueRef q = LLVMBuildNot(B, p, "");
    if (i->nsrc > 2) {
      LLVMValueRef cc = cg_op_as(E, i, 2, c->i1);
      p = cg_boolop(E, i, p, cc);
      q = cg_boolop(E, i, q, cc);
    }
    cg_set_dst(E, i, 0, p, false);
    cg_set_dst(E, i, 1, q, false);
    return;
  }
  case ir_op_add:
  case ir_op_sub:
  case ir_op_mad:
    if (i->mods.cc) {
      /* carry out (.cc): the unsigned overflow of the add; for sub.cc the
       * carry-out of a + ~b + 1, i.e. no borrow (emu/emu_alu.c's head:
       * NVIDIA's CC.CF, which addc/madc after a sub.cc read). */
      LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
      LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
      if (i->op == ir_op_mad) {
        a = i->mods.mulmode == IR_MUL_HI ? cg_mul_ext(E, a, b, is_signed((ir_type)i->type), cg_type_bits(t), true)
                                         : LLVMBuildMul(B, a, b, "");
        b = cg_op(E, i, 2);
      }
      LLVMValueRef r = cg_intr2(E, i->op == ir_op_sub ? "llvm.usub.with.overflow" : "llvm.uadd.with.overflow", a, b);
      cg_set_dst(E, i, 0, LLVMBuildExtractValue(B, r, 0, ""), false);
      LLVMValueRef ov = LLVMBuildExtractValue(B, r, 1, "");
      cg_set_dst(E, i, i->ndst - 1, i->op == ir_op_sub ? LLVMBuildNot(B, ov, "") : ov, false);
      return;
    }
    break;
  case ir_op_addc:
  case ir_op_subc:
  case ir_op_madc: {
    LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    unsigned cin = i->op == ir_op_madc ? 3 : 2;
    if (i->op == ir_op_madc) {
      a = i->mods.mulmode == IR_MUL_HI ? cg_mul_ext(E, a, b, is_signed((ir_type)i->type), cg_type_bits(t), true)
                                       : LLVMBuildMul(B, a, b, "");
      b = cg_op(E, i, 2);
    }
    bool sub = i->op == ir_op_subc;
    /* subc: a + ~b + CC.CF, i.e. a - b - (1 - CC.CF), and CC.CF out is
     * "no borrow" (emu/emu_alu.c's head) */
    LLVMValueRef cf = cg_op_as(E, i, cin, c->i1);
    LLVMValueRef ci = LLVMBuildZExt(B, sub ? LLVMBuildNot(B, cf, "") : cf, t, "");
    const char *n = sub ? "llvm.usub.with.overflow" : "llvm.uadd.with.overflow";
    LLVMValueRef r1 = cg_intr2(E, n, a, b);
    LLVMValueRef r2 = cg_intr2(E, n, LLVMBuildExtractValue(B, r1, 0, ""), ci);
    cg_set_dst(E, i, 0, LLVMBuildExtractValue(B, r2, 0, ""), false);
    if (i->mods.cc) {
      LLVMValueRef ov = LLVMBuildOr(B, LLVMBuildExtractValue(B, r1, 1, ""), LLVMBuildExtractValue(B, r2, 1, ""), "");
      cg_set_dst(E, i, i->ndst - 1, sub ? LLVMBuildNot(B, ov, "") : ov, false);
    }
    return;
  }
  case ir_op_br:
    LLVMBuildBr(B, E->bbs[i->targets[0]->id]);
    return;
  case ir_op_cbr:
    LLVMBuildCondBr(B, cg_op_as(E, i, 0, c->i1), E->bbs[i->targets[0]->id], E->bbs[i->targets[1]->id]);
    return;
  case ir_op_brx: {
    LLVMValueRef idx = cg_op_as(E, i, 0, c->i32);
    /* an index past the list is undefined in PTX: the last target */
    LLVMValueRef sw = LLVMBuildSwitch(B, idx, E->bbs[i->targets[i->ntargets - 1]->id], i->ntargets);
    for (uint32_t k = 0; k + 1 < i->ntargets; k++) LLVMAddCase(sw, kint(c->i32, k), E->bbs[i->targets[k]->id]);
    return;
  }
  case ir_op_ret:
  case ir_op_exit:
    if (!E->f->is_kernel && i->op == ir_op_exit) {
      cg_intrinsic(c, "llvm.amdgcn.endpgm", NULL, 0, NULL, 0, false);
      LLVMBuildUnreachable(B);
      return;
    }
    if (E->ret_buf) {
      LLVMBuildRet(B, LLVMBuildLoad2(B, E->ret_ty, E->ret_buf, ""));
    } else if (LLVMGetTypeKind(LLVMGetReturnType(LLVMGlobalGetValueType(E->fn))) == LLVMStructTypeKind) {
      /* several .reg returns (multi_reg_ret): ret's operands, in order */
      LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(E->fn));
      LLVMValueRef agg = LLVMGetUndef(rt);
      for (unsigned r = 0; r < LLVMCountStructElementTypes(rt) && r < i->nsrc; r++)
        agg = LLVMBuildInsertValue(B, agg, cg_op_as(E, i, r, LLVMStructGetTypeAtIndex(rt, r)), r, "");
      LLVMBuildRet(B, agg);
    } else if (LLVMGetReturnType(LLVMGlobalGetValueType(E->fn)) != c->voidt) {
      LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(E->fn));
      LLVMBuildRet(B, i->nsrc ? cg_op_as(E, i, 0, rt) : LLVMGetUndef(rt));
    } else {
      LLVMBuildRetVoid(B);
    }
    return;
  case ir_op_trap:
    cg_trap(E);
    LLVMBuildUnreachable(B);
    return;
  case ir_op_unreachable:
    LLVMBuildUnreachable(B);
    return;
  case ir_op_bar:
    if (i->mods.barmode == IR_BAR_SYNC && (i->nsrc == 0 || (i->nsrc == 1 && i->src[0]->kind == IR_VAL_CONST && i->src[0]->imm == 0))) {
      cg_workgroup_barrier(E);
      return;
    }
    cg_unsupported(E, i, "named barriers, thread counts and bar.arrive are left to lower/ (not run)");
    return;
  case ir_op_workgroup_barrier:
    cg_workgroup_barrier(E);
    return;
  case ir_op_wave_sync:
    cg_intrinsic(c, "llvm.amdgcn.wave.barrier", NULL, 0, NULL, 0, true);
    return;
  case ir_op_membar:
  case ir_op_fence:
    if (i->mods.proxy) return; /* proxy fences order nothing on AMD GPUs (one proxy) */
    cg_fence(E, i->op == ir_op_membar || i->mods.sem == IR_SEM_SC || i->mods.sem == IR_SEM_NONE
                 ? LLVMAtomicOrderingSequentiallyConsistent
                 : cg_ordering((ir_sem)i->mods.sem, LLVMAtomicOrderingSequentiallyConsistent),
          cg_sync_scope(E, (ir_scope)i->mods.scope));
    return;
  case ir_op_prefetch:
  case ir_op_prefetchu:
  case ir_op_pmevent:
  case ir_op_nanosleep:
  case ir_op_applypriority:
  case ir_op_discard:
  case ir_op_cp_async_bulk_prefetch:
  case ir_op_cp_async_bulk_prefetch_tensor:
    /* Hints without a required effect (PTX ISA 9.7.9.14-15, 9.7.9.25.4.3:
     * discard leaves the lines' contents undefined, which keeping them is).
     * AMDGPU has no per-thread data prefetch: gfx12's s_prefetch_data (what
     * LLVM makes of llvm.prefetch there, AMDGPUUsage) takes a uniform
     * scalar address, gfx9-gfx11 have none, and a prefetch that never
     * faults cannot be a load.  Eviction priorities have no counterpart
     * either (the cache-policy bits of AMD loads are per instruction,
     * not per line), so these are no-ops. */
    return;
  case ir_op_brkpt:
    cg_intrinsic(c, "llvm.debugtrap", NULL, 0, NULL, 0, false);
    return;
  default: break;
  }
  bool handled = true;
  LLVMValueRef v = emit_value_op(E, i, &handled);
  if (!handled) return;
  if (v) cg_set_dst(E, i, 0, v, is_signed((ir_type)i->type));
}

/* Ops with one result computed from their operands. */
static LLVMValueRef emit_value_op(cg_emitter *E, const ir_instr *i, bool *handled) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  bool f = is_float(t) || is_fvec(t), s = is_signed(t);
  switch ((ir_op)i->op) {
  case ir_op_copy: return cg_op(E, i, 0);
  case ir_op_symaddr: return cg_op(E, i, 0);
  case ir_op_sreg: {
    LLVMValueRef v = cg_sreg(E, i);
    cg_set_dst(E, i, 0, v, false);
    *handled = false;
    return NULL;
  }
  case ir_op_pack: {
    LLVMTypeRef it = LLVMIntTypeInContext(c->ctx, cg_type_bits(lt));
    LLVMValueRef r = kint(it, 0);
    unsigned off = 0;
    for (unsigned k = 0; k < i->nsrc; k++) {
      LLVMValueRef x = cg_val(E, i, i->src[k]);
      unsigned xb = cg_type_bits(LLVMTypeOf(x));
      x = LLVMBuildZExt(B, cg_coerce(E, x, LLVMIntTypeInContext(c->ctx, xb)), it, "");
      r = LLVMBuildOr(B, r, LLVMBuildShl(B, x, kint(it, off), ""), "");
      off += xb;
    }
    return r;
  }
  case ir_op_add:
  case ir_op_sub: {
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    bool add = i->op == ir_op_add;
    if (f) {
      LLVMValueRef r;
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64))
        r = cg_mode_rounded(E, i, add ? '+' : '-', (LLVMValueRef[]){a, b}, 2);
      else if (!cg_fp_round_ok(E, i)) return NULL;
      else r = add ? LLVMBuildFAdd(B, a, b, "") : LLVMBuildFSub(B, a, b, "");
      return i->mods.sat ? cg_sat01(E, r) : r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    if (i->mods.sat) return cg_intr2(E, add ? "llvm.sadd.sat" : "llvm.ssub.sat", a, b);
    return add ? LLVMBuildAdd(B, a, b, "") : LLVMBuildSub(B, a, b, "");
  }
  case ir_op_mul: {
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    if (f) {
      LLVMValueRef r;
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64)) r = cg_mode_rounded(E, i, '*', (LLVMValueRef[]){a, b}, 2);
      else if (!cg_fp_round_ok(E, i)) return NULL;
      else r = LLVMBuildFMul(B, a, b, "");
      return i->mods.sat ? cg_sat01(E, r) : r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    switch ((ir_mulmode)i->mods.mulmode) {
    case IR_MUL_HI: return cg_mul_ext(E, a, b, s, cg_type_bits(lt), true);
    case IR_MUL_WIDE: return cg_mul_ext(E, a, b, s, cg_type_bits(lt), false);
    case IR_MUL_LO:
    case IR_MUL_NONE: return LLVMBuildMul(B, a, b, "");
    }
    break;
  }
  case ir_op_mad:
  case ir_op_fma: {
    if (f) {
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64)) {
        LLVMValueRef r = cg_mode_rounded(E, i, 'f', (LLVMValueRef[]){cg_op(E, i, 0), cg_op(E, i, 1), cg_op(E, i, 2)}, 3);
        return i->mods.sat ? cg_sat01(E, r) : r;
      }
      if (!cg_fp_round_ok(E, i)) return NULL;
      /* mad.f32 with a rounding modifier and fma are fused (9.7.3.6) */
      LLVMValueRef r = cg_intr3(E, "llvm.fma", cg_op(E, i, 0), cg_op(E, i, 1), cg_op(E, i, 2));
      return i->mods.sat ? cg_sat01(E, r) : r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    switch ((ir_mulmode)i->mods.mulmode) {
    case IR_MUL_HI: {
      LLVMValueRef r = cg_mul_ext(E, a, b, s, cg_type_bits(lt), true);
      LLVMValueRef x = cg_op(E, i, 2);
      return i->mods.sat ? cg_intr2(E, "llvm.sadd.sat", r, x) : LLVMBuildAdd(B, r, x, "");
    }
    case IR_MUL_WIDE: {
      LLVMValueRef r = cg_mul_ext(E, a, b, s, cg_type_bits(lt), false);
      return LLVMBuildAdd(B, r, cg_coerce_ext(E, cg_val(E, i, i->src[2]), LLVMTypeOf(r), s), "");
    }
    case IR_MUL_LO:
    case IR_MUL_NONE: return LLVMBuildAdd(B, LLVMBuildMul(B, a, b, ""), cg_op(E, i, 2), "");
    }
    break;
  }
  case ir_op_mul24:
  case ir_op_mad24: {
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    LLVMValueRef k8 = kint(lt, 8);
    a = s ? LLVMBuildAShr(B, LLVMBuildShl(B, a, k8, ""), k8, "") : LLVMBuildAnd(B, a, kint(lt, 0xffffff), "");
    b = s ? LLVMBuildAShr(B, LLVMBuildShl(B, b, k8, ""), k8, "") : LLVMBuildAnd(B, b, kint(lt, 0xffffff), "");
    LLVMValueRef r;
    if (i->mods.mulmode == IR_MUL_HI) {
      /* .hi: bits 47..16 of the 48-bit product (9.7.1.5) */
      LLVMValueRef w = cg_mul_ext(E, a, b, s, cg_type_bits(lt), false);
      r = LLVMBuildTrunc(B, LLVMBuildLShr(B, w, kint(LLVMTypeOf(w), 16), ""), lt, "");
    } else {
      r = LLVMBuildMul(B, a, b, "");
    }
    return i->op == ir_op_mad24 ? LLVMBuildAdd(B, r, cg_op(E, i, 2), "") : r;
  }
  case ir_op_sad: {
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    LLVMValueRef d = LLVMBuildSub(B, cg_intr2(E, s ? "llvm.smax" : "llvm.umax", a, b),
                                  cg_intr2(E, s ? "llvm.smin" : "llvm.umin", a, b), "");
    return LLVMBuildAdd(B, d, cg_op(E, i, 2), "");
  }
  case ir_op_div:
  case ir_op_rem: {
    LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
    if (f) {
      if (i->op == ir_op_rem) break;
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64)) return cg_directed(E, i, '/', a, b);
      if (!i->mods.approx && !i->mods.full && !cg_fp_round_ok(E, i)) return NULL;
      LLVMValueRef r = LLVMBuildFDiv(B, a, b, "");
      if (i->mods.approx || i->mods.full) {
        /* div.approx/div.full.f32: within 2 ulp (9.7.3.8): !fpmath 2.5 */
        LLVMValueRef md = LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, (LLVMMetadataRef[]){
          LLVMValueAsMetadata(LLVMConstReal(c->f32, 2.5))}, 1));
        LLVMSetMetadata(r, LLVMGetMDKindIDInContext(c->ctx, "fpmath", 6), md);
      }
      return r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    /* PTX leaves x/0 unspecified; LLVM makes it undefined behaviour:
     * divide by 1 instead, keeping the result defined. */
    LLVMValueRef z = LLVMBuildICmp(B, LLVMIntEQ, b, kint(lt, 0), "");
    b = LLVMBuildSelect(B, z, kint(lt, 1), b, "");
    if (s) {
      /* INT_MIN / -1 is undefined in LLVM too */
      unsigned n = cg_type_bits(lt);
      LLVMValueRef ov = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 1ull << (n - 1)), ""),
                                     LLVMBuildICmp(B, LLVMIntEQ, b, kint(lt, ~0ull), ""), "");
      b = LLVMBuildSelect(B, ov, kint(lt, 1), b, "");
    }
    if (i->op == ir_op_div) return s ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
    return s ? LLVMBuildSRem(B, a, b, "") : LLVMBuildURem(B, a, b, "");
  }
  case ir_op_abs:
    if (f) return cg_intr1(E, "llvm.fabs", cg_op(E, i, 0));
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    {
      LLVMValueRef a = cg_op(E, i, 0);
      LLVMValueRef args[2] = {a, LLVMConstInt(c->i1, 0, 0)};
      LLVMTypeRef at = LLVMTypeOf(a);
      return cg_intrinsic(c, "llvm.abs", &at, 1, args, 2, false);
    }
  case ir_op_neg:
    if (f) return LLVMBuildFNeg(B, cg_op(E, i, 0), "");
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    return LLVMBuildNeg(B, cg_op(E, i, 0), "");
  case ir_op_min:
  case ir_op_max: {
    if (i->nsrc < 2 || i->nsrc > 3 || (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT && !is_fvec(t))) break;
    if (!f && (i->mods.absmod || i->mods.xorsign || (i->mods.relu && !s))) break;
    if (i->mods.xorsign != i->mods.absmod) break;   /* PTX has .xorsign only as .xorsign.abs */
    bool mn = i->op == ir_op_min;
    if (!f) {
      /* 9.7.1.10/11: two or three inputs; .relu (s32, s16x2) clamps below at 0 */
      const char *in = mn ? (s ? "llvm.smin" : "llvm.umin") : (s ? "llvm.smax" : "llvm.umax");
      LLVMValueRef r = cg_intr2(E, in, cg_op(E, i, 0), cg_op(E, i, 1));
      if (i->nsrc == 3) r = cg_intr2(E, in, r, cg_op(E, i, 2));
      if (i->mods.relu) r = cg_intr2(E, "llvm.smax", r, LLVMConstNull(LLVMTypeOf(r)));
      return r;
    }
    /* 9.7.3.10/11: minNum/maxNum (.NaN: a NaN input gives NaN), over two or
     * three inputs; .xorsign.abs: of the magnitudes, the result's sign the
     * xor of the inputs' signs (NaN results keep theirs); .relu: a negative
     * result becomes +0. */
    const char *fn = i->mods.nan ? (mn ? "llvm.minimum" : "llvm.maximum") : (mn ? "llvm.minnum" : "llvm.maxnum");
    bool vec = is_fvec(t);
    unsigned eb = vec ? ir_type_bits(t) / 2 : ir_type_bits(t);
    LLVMTypeRef ie = LLVMIntTypeInContext(c->ctx, eb), it = vec ? LLVMVectorType(ie, 2) : ie;
    LLVMValueRef r = NULL, sx = NULL;
    for (unsigned k = 0; k < i->nsrc; k++) {
      LLVMValueRef a = cg_op(E, i, k);
      if (i->mods.xorsign) {
        LLVMValueRef ab = LLVMBuildBitCast(B, a, it, "");
        sx = sx ? LLVMBuildXor(B, sx, ab, "") : ab;
        a = cg_intr1(E, "llvm.fabs", a);
      }
      r = r ? cg_intr2(E, fn, r, a) : a;
    }
    LLVMValueRef isnan = LLVMBuildFCmp(B, LLVMRealUNO, r, r, "");
    if (i->mods.xorsign) {
      LLVMValueRef smask = kint(ie, 1ull << (eb - 1));
      if (vec) smask = LLVMConstVector((LLVMValueRef[]){smask, smask}, 2);
      LLVMValueRef rb = LLVMBuildOr(B, LLVMBuildBitCast(B, r, it, ""), LLVMBuildAnd(B, sx, smask, ""), "");
      r = LLVMBuildSelect(B, isnan, r, LLVMBuildBitCast(B, rb, lt, ""), "");
    }
    if (i->mods.relu) {
      LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildBitCast(B, r, it, ""), LLVMConstNull(it), "");
      neg = LLVMBuildAnd(B, neg, LLVMBuildNot(B, isnan, ""), "");
      r = LLVMBuildSelect(B, neg, LLVMConstNull(lt), r, "");
    }
    return r;
  }
  case ir_op_popc: return cg_coerce(E, cg_intr1(E, "llvm.ctpop", cg_op(E, i, 0)), c->i32);
  case ir_op_clz: {
    LLVMValueRef a = cg_op(E, i, 0);
    return cg_coerce(E, cg_intr2(E, "llvm.ctlz", a, LLVMConstInt(c->i1, 0, 0)), c->i32);
  }
  case ir_op_bfind: {
    /* 9.7.1.16: the position of the most significant non-sign bit, or
     * 0xffffffff; .shiftamt: the left shift that brings it to the msb. */
    LLVMValueRef a = cg_op(E, i, 0);
    unsigned n = cg_type_bits(lt);
    if (s) a = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, kint(lt, 0), ""), LLVMBuildNot(B, a, ""), a, "");
    LLVMValueRef lz = cg_coerce(E, cg_intr2(E, "llvm.ctlz", a, LLVMConstInt(c->i1, 0, 0)), c->i32);
    LLVMValueRef none = LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 0), "");
    LLVMValueRef r = i->mods.bfind_shiftamt ? lz : LLVMBuildSub(B, kint(c->i32, n - 1), lz, "");
    return LLVMBuildSelect(B, none, kint(c->i32, 0xffffffff), r, "");
  }
  case ir_op_brev: return cg_intr1(E, "llvm.bitreverse", cg_op(E, i, 0));
  case ir_op_bfe: return cg_int_bfe(E, i);
  case ir_op_bfi: return cg_int_bfi(E, i);
  case ir_op_rcp:
  case ir_op_sqrt:
  case ir_op_rsqrt: {
    if (!f) break;
    LLVMValueRef a = cg_op(E, i, 0);
    bool approx = i->mods.approx;
    if (!approx && is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64) && i->op != ir_op_rsqrt)
      return cg_directed(E, i, i->op == ir_op_rcp ? '/' : 's', i->op == ir_op_rcp ? NULL : a, i->op == ir_op_rcp ? a : NULL);
    if (!approx && !cg_fp_round_ok(E, i)) return NULL;
    if (i->op == ir_op_rcp) {
      if (approx && t == ir_type_f32 && i->mods.ftz) return cg_intr1(E, "llvm.amdgcn.rcp", a);
      if (approx && t == ir_type_f32) {
        /* rcp.approx.f32 without .ftz keeps subnormal inputs and results
         * (PTX ISA, rcp); v_rcp_f32 flushes both (a subnormal input gives
         * inf where 1/x may be finite, 1/x below 2^-126 gives 0).  Scaling
         * by s = 2^24 below 2^-126 and 2^-24 above 2^126, rcp(x*s)*s, keeps
         * them (the scalings are exact, the last one rounds once into the
         * subnormal range); NaN, +-0 and +-inf map as before. */
        LLVMValueRef ab = cg_intr1(E, "llvm.fabs", a);
        LLVMValueRef tiny = LLVMBuildFCmp(B, LLVMRealOLT, ab, LLVMConstReal(lt, 0x1p-126), "");
        LLVMValueRef huge = LLVMBuildFCmp(B, LLVMRealOGT, ab, LLVMConstReal(lt, 0x1p126), "");
        LLVMValueRef sc = LLVMBuildSelect(B, tiny, LLVMConstReal(lt, 0x1p24),
                                          LLVMBuildSelect(B, huge, LLVMConstReal(lt, 0x1p-24), LLVMConstReal(lt, 1.0), ""), "");
        LLVMValueRef r = cg_intr1(E, "llvm.amdgcn.rcp", LLVMBuildFMul(B, a, sc, ""));
        return LLVMBuildFMul(B, r, sc, "");
      }
      return cg_fp_flags(LLVMBuildFDiv(B, LLVMConstReal(lt, 1.0), a, ""), i);
    }
    if (i->op == ir_op_sqrt) return cg_fp_flags(cg_intr1(E, "llvm.sqrt", a), i);
    if (t == ir_type_f32 && !i->mods.ftz) {
      /* rsqrt.approx.f32 keeps subnormal inputs (PTX ISA, rsqrt: only .ftz
       * flushes them), which v_rsq_f32 reads as zero (+inf, where the
       * answer is a finite 2^63..2^75; AMDGPUUsage: the f32 instructions do
       * not support denormal inputs).  Below 2^-126 the input is scaled by
       * 2^24 and the result by 2^12, both exact: the same relative error;
       * +-0 still gives +-inf. */
      LLVMValueRef tiny = LLVMBuildFCmp(B, LLVMRealOLT, cg_intr1(E, "llvm.fabs", a), LLVMConstReal(lt, 0x1p-126), "");
      LLVMValueRef x = LLVMBuildSelect(B, tiny, LLVMBuildFMul(B, a, LLVMConstReal(lt, 0x1p24), ""), a, "");
      LLVMValueRef r = cg_intr1(E, "llvm.amdgcn.rsq", x);
      return LLVMBuildSelect(B, tiny, LLVMBuildFMul(B, r, LLVMConstReal(lt, 0x1p12), ""), r, "");
    }
    if (t == ir_type_f32 || t == ir_type_f64) return cg_intr1(E, "llvm.amdgcn.rsq", a);
    break;
  }
  case ir_op_sin:
  case ir_op_cos: {
    if (t != ir_type_f32) break;
    /* v_sin_f32/v_cos_f32 take revolutions: x / 2pi (9.7.3.18: approx) */
    LLVMValueRef a = LLVMBuildFMul(B, cg_op(E, i, 0), LLVMConstReal(c->f32, 0.15915494309189535), "");
    return cg_intr1(E, i->op == ir_op_sin ? "llvm.amdgcn.sin" : "llvm.amdgcn.cos", a);
  }
  case ir_op_lg2:
  case ir_op_ex2: {
    if (t != ir_type_f32 && t != ir_type_f16) break;
    /* ex2/lg2.approx.ftz.f32 (PTX ISA, Floating-Point Instructions: ex2,
     * lg2) flush subnormal inputs and results to sign-preserving zero, which
     * is what v_exp_f32 / v_log_f32 do by themselves (1 ulp in the normal
     * range, as llvm.exp2/log2 use them); LLVM's llvm.exp2/log2 add a
     * rescaling around them for subnormal results/inputs unless the whole
     * function flushes f32 subnormals (nvcc's precise expf uses
     * ex2.approx.ftz.f32 also without -ftz). */
    if (t == ir_type_f32 && i->mods.ftz && i->mods.approx)
      return cg_intr1(E, i->op == ir_op_lg2 ? "llvm.amdgcn.log" : "llvm.amdgcn.exp2", cg_op(E, i, 0));
    return cg_fp_flags(cg_intr1(E, i->op == ir_op_lg2 ? "llvm.log2" : "llvm.exp2", cg_op(E, i, 0)), i);
  }
  case ir_op_tanh: {
    /* tanh.approx.f32 (9.7.3.22: max relative error 2^-11):
     * 1 - 2/(2^(2x log2 e) + 1), which saturates to +-1 through inf and 0;
     * near 0, where that cancels, x - x^3/3 (relative error < 2^-14 for
     * |x| < 1/8). */
    if (t != ir_type_f32) break;
    LLVMValueRef x = cg_op(E, i, 0);
    LLVMValueRef e = cg_intr1(E, "llvm.exp2", LLVMBuildFMul(B, x, LLVMConstReal(c->f32, 2.0 * 1.4426950408889634), ""));
    LLVMSetFastMathFlags(e, LLVMFastMathApproxFunc);
    LLVMValueRef big = LLVMBuildFSub(B, LLVMConstReal(c->f32, 1.0),
                                     LLVMBuildFDiv(B, LLVMConstReal(c->f32, 2.0), LLVMBuildFAdd(B, e, LLVMConstReal(c->f32, 1.0), ""), ""), "");
    LLVMValueRef x3 = LLVMBuildFMul(B, LLVMBuildFMul(B, x, x, ""), x, "");
    LLVMValueRef small = cg_intr3(E, "llvm.fma", x3, LLVMConstReal(c->f32, -1.0 / 3.0), x);
    LLVMValueRef near0 = LLVMBuildFCmp(B, LLVMRealOLT, cg_intr1(E, "llvm.fabs", x), LLVMConstReal(c->f32, 0.125), "");
    return LLVMBuildSelect(B, near0, small, big, "");
  }
  case ir_op_copysign:
    if (!f) break;
    return cg_intr2(E, "llvm.copysign", cg_op(E, i, 1), cg_op(E, i, 0));
  case ir_op_testp: {
    /* llvm.is.fpclass masks (LangRef): snan 1, qnan 2, -inf 4, -normal 8,
     * -subnormal 16, -0 32, +0 64, +subnormal 128, +normal 256, +inf 512 */
    unsigned m = 0;
    switch ((ir_testp)i->mods.testp) {
    case IR_TESTP_FINITE: m = 8 | 16 | 32 | 64 | 128 | 256; break;
    case IR_TESTP_INFINITE: m = 4 | 512; break;
    case IR_TESTP_NUMBER: m = 0x3fc; break;
    case IR_TESTP_NOTANUMBER: m = 3; break;
    case IR_TESTP_NORMAL: m = 8 | 256; break;
    case IR_TESTP_SUBNORMAL: m = 16 | 128; break;
    case IR_TESTP_NONE: break;
    }
    LLVMValueRef a = cg_op(E, i, 0);
    LLVMValueRef args[2] = {a, kint(c->i32, m)};
    LLVMTypeRef at = LLVMTypeOf(a);
    return cg_intrinsic(c, "llvm.is.fpclass", &at, 1, args, 2, false);
  }
  case ir_op_set: {
    ir_type st = i->type2 ? (ir_type)i->type2 : t;
    LLVMTypeRef sl = cg_ltype(E, st);
    bool packed = is_fvec(st);
    /* A packed source compares per half (fcmp on <2 x half>; f32 stands
     * for "a float" in fcmp_or_icmp) and gives a result per half: 1.0 in
     * an .f16x2/.bf16x2 destination, 0xffff in a .u32/.s32 one (PTX ISA,
     * half precision set; emu/emu_alu.c h_set). */
    LLVMValueRef p = cg_fcmp_or_icmp(E, i, packed ? ir_type_f32 : st, cg_op_as(E, i, 0, sl), cg_op_as(E, i, 1, sl));
    if (i->nsrc > 2) p = cg_boolop(E, i, p, packed ? cg_splat2(E, cg_op_as(E, i, 2, c->i1)) : cg_op_as(E, i, 2, c->i1));
    if (packed && is_fvec(t)) return LLVMBuildSelect(B, p, fconst(lt, 1.0), fconst(lt, 0.0), "");
    if (packed) {
      LLVMTypeRef h2 = LLVMVectorType(c->i16, 2);
      LLVMValueRef r = LLVMBuildSelect(B, p, LLVMConstAllOnes(h2), LLVMConstNull(h2), "");
      return cg_coerce(E, LLVMBuildBitCast(B, r, c->i32, ""), lt);
    }
    if (f) return LLVMBuildSelect(B, p, LLVMConstReal(lt, 1.0), LLVMConstReal(lt, 0.0), "");
    return LLVMBuildSelect(B, p, kint(lt, ~0ull), kint(lt, 0), "");
  }
  case ir_op_selp: return LLVMBuildSelect(B, cg_op_as(E, i, 2, c->i1), cg_op(E, i, 0), cg_op(E, i, 1), "");
  case ir_op_slct: {
    ir_type ct = i->type2 ? (ir_type)i->type2 : ir_type_s32;
    LLVMValueRef cc = cg_op_as(E, i, 2, cg_ltype(E, ct));
    LLVMValueRef ge = is_float(ct) ? LLVMBuildFCmp(B, LLVMRealOGE, cc, LLVMConstReal(LLVMTypeOf(cc), 0.0), "")
                                   : LLVMBuildICmp(B, LLVMIntSGE, cc, kint(LLVMTypeOf(cc), 0), "");
    return LLVMBuildSelect(B, ge, cg_op(E, i, 0), cg_op(E, i, 1), "");
  }
  case ir_op_and: return LLVMBuildAnd(B, cg_op(E, i, 0), cg_op(E, i, 1), "");
  case ir_op_or: return LLVMBuildOr(B, cg_op(E, i, 0), cg_op(E, i, 1), "");
  case ir_op_xor: return LLVMBuildXor(B, cg_op(E, i, 0), cg_op(E, i, 1), "");
  case ir_op_not: return LLVMBuildNot(B, cg_op(E, i, 0), "");
  case ir_op_cnot: {
    LLVMValueRef a = cg_op(E, i, 0);
    return LLVMBuildZExt(B, LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 0), ""), lt, "");
  }
  case ir_op_lop3: return cg_int_lop3(E, i);
  case ir_op_shf: {
    /* 9.7.8.7: shf.l d = high word of {b:a} << n; shf.r d = low word of
     * {b:a} >> n; .wrap takes n mod 32 (llvm.fshl/fshr do), .clamp min(n,32). */
    LLVMValueRef a = cg_op_as(E, i, 0, c->i32), b = cg_op_as(E, i, 1, c->i32), n = cg_op_as(E, i, 2, c->i32);
    bool left = i->mods.shf_left;
    LLVMValueRef r = cg_intr3(E, left ? "llvm.fshl" : "llvm.fshr", b, a, n);
    if (i->mods.shf_clamp) {
      LLVMValueRef big = LLVMBuildICmp(B, LLVMIntUGE, n, kint(c->i32, 32), "");
      r = LLVMBuildSelect(B, big, left ? a : b, r, "");
    }
    return r;
  }
  case ir_op_shl: return cg_int_shift(E, i, true);
  case ir_op_shr: return cg_int_shift(E, i, false);
  case ir_op_prmt: return cg_int_prmt(E, i);
  case ir_op_cvta: {
    /* cvta.<space>: window address -> generic; cvta.to.<space>: back.
     * Global addresses are the same in both (AMDGPUUsage: flat = global). */
    ir_space sp = (ir_space)i->mods.space;
    LLVMValueRef a = cg_val(E, i, i->src[0]);
    if (sp == IR_SPACE_GLOBAL) return a;
    unsigned as = cg_space_as(E, sp);
    bool narrow = as == CG_AS_LDS || as == CG_AS_PRIVATE;
    if (i->mods.cvta_to) {
      LLVMValueRef p = LLVMBuildIntToPtr(B, cg_coerce(E, a, c->i64), c->ptr[0], "");
      p = LLVMBuildAddrSpaceCast(B, p, c->ptr[as], "");
      return LLVMBuildPtrToInt(B, p, narrow ? c->i32 : c->i64, "");
    }
    LLVMValueRef p = LLVMBuildIntToPtr(B, cg_coerce(E, a, narrow ? c->i32 : c->i64), c->ptr[as], "");
    p = LLVMBuildAddrSpaceCast(B, p, c->ptr[0], "");
    return LLVMBuildPtrToInt(B, p, c->i64, "");
  }
  case ir_op_isspacep: {
    ir_space sp = (ir_space)i->mods.space;
    LLVMValueRef p = LLVMBuildIntToPtr(B, cg_coerce(E, cg_val(E, i, i->src[0]), c->i64), c->ptr[0], "");
    /* 9.7.9.19.  A generic address is in LDS or scratch iff it lies in
     * that aperture (AMDGPUUsage "Address Spaces"); a cluster is one CTA
     * here, so .shared::cluster is .shared.  Our .const variables live in
     * global memory (addrspace 4): .const is true inside one of the
     * module's .const variables, and .global is the rest of the flat
     * space, as the emulator answers (emu_mem.c h_isspacep: const is a
     * read-only allocation, global a writable one). */
    if (sp == IR_SPACE_SHARED || sp == IR_SPACE_SHARED_CTA || sp == IR_SPACE_SHARED_CLUSTER)
      return cg_intrinsic(c, "llvm.amdgcn.is.shared", NULL, 0, &p, 1, false);
    if (sp == IR_SPACE_LOCAL) return cg_intrinsic(c, "llvm.amdgcn.is.private", NULL, 0, &p, 1, false);
    if (sp != IR_SPACE_GLOBAL && sp != IR_SPACE_CONST) break;
    LLVMValueRef in_const = LLVMConstInt(c->i1, 0, 0), pi = LLVMBuildPtrToInt(B, p, c->i64, "");
    for (uint32_t g = 0; g < E->m->nglobals; g++) {
      const ir_global *v = E->m->globals[g];
      LLVMValueRef gv = v->space == IR_SPACE_CONST && v->size ? cg_map_get(&E->syms, v) : NULL;
      if (!gv) continue;
      LLVMValueRef base = LLVMBuildPtrToInt(B, LLVMBuildAddrSpaceCast(B, gv, c->ptr[0], ""), c->i64, "");
      LLVMValueRef off = LLVMBuildSub(B, pi, base, "");
      in_const = LLVMBuildOr(B, in_const, LLVMBuildICmp(B, LLVMIntULT, off, kint(c->i64, v->size), ""), "");
    }
    if (sp == IR_SPACE_CONST) return in_const;
    LLVMValueRef sh = cg_intrinsic(c, "llvm.amdgcn.is.shared", NULL, 0, &p, 1, false);
    LLVMValueRef pr = cg_intrinsic(c, "llvm.amdgcn.is.private", NULL, 0, &p, 1, false);
    return LLVMBuildNot(B, LLVMBuildOr(B, LLVMBuildOr(B, sh, pr, ""), in_const, ""), "");
  }
  case ir_op_cvt: return cg_cvt(E, i);
  case ir_op_dp4a: {
    /* 9.7.1.23: d = c + sum of the products of the four byte pairs. */
    LLVMValueRef a = cg_op_as(E, i, 0, c->i32), b = cg_op_as(E, i, 1, c->i32), x = cg_op_as(E, i, 2, c->i32);
    LLVMValueRef r = x;
    for (unsigned k = 0; k < 4; k++) {
      LLVMValueRef sh = kint(c->i32, 8 * k);
      LLVMValueRef ab = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, sh, ""), c->i8, "");
      LLVMValueRef bb = LLVMBuildTrunc(B, LLVMBuildLShr(B, b, sh, ""), c->i8, "");
      ab = i->mods.signed_a ? LLVMBuildSExt(B, ab, c->i32, "") : LLVMBuildZExt(B, ab, c->i32, "");
      bb = i->mods.signed_b ? LLVMBuildSExt(B, bb, c->i32, "") : LLVMBuildZExt(B, bb, c->i32, "");
      r = LLVMBuildAdd(B, r, LLVMBuildMul(B, ab, bb, ""), "");
    }
    return r;
  }
  case ir_op_bmsk:
  case ir_op_szext: {
    /* bmsk (9.7.1.22): b ones from bit a; szext (9.7.1.21): the low b
     * bits of a, sign- or zero-extended.  .clamp limits the counts to 32,
     * .wrap takes them mod 32. */
    LLVMValueRef a = cg_op_as(E, i, 0, c->i32), b = cg_op_as(E, i, 1, c->i32);
    LLVMValueRef k32 = kint(c->i32, 32), k31 = kint(c->i32, 31);
    if (i->mods.shf_clamp) {
      b = cg_intr2(E, "llvm.umin", b, k32);
      if (i->op == ir_op_bmsk) a = cg_intr2(E, "llvm.umin", a, k32);
    } else {
      b = LLVMBuildAnd(B, b, k31, "");
      if (i->op == ir_op_bmsk) a = LLVMBuildAnd(B, a, k31, "");
    }
    LLVMValueRef bfull = LLVMBuildICmp(B, LLVMIntUGE, b, k32, "");
    LLVMValueRef bs = LLVMBuildSelect(B, bfull, c->i32_0, b, "");
    LLVMValueRef ones = LLVMBuildSub(B, LLVMBuildShl(B, c->i32_1, bs, ""), c->i32_1, "");
    ones = LLVMBuildSelect(B, bfull, kint(c->i32, ~0ull), ones, "");
    if (i->op == ir_op_bmsk) {
      LLVMValueRef afull = LLVMBuildICmp(B, LLVMIntUGE, a, k32, "");
      LLVMValueRef m = LLVMBuildShl(B, ones, LLVMBuildSelect(B, afull, c->i32_0, a, ""), "");
      return LLVMBuildSelect(B, afull, c->i32_0, m, "");
    }
    if (!s) return LLVMBuildAnd(B, a, ones, "");
    /* sign: shift the field to the top and back; b == 0 gives 0 */
    LLVMValueRef sh = LLVMBuildSub(B, k32, LLVMBuildSelect(B, bfull, k32, LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, b, c->i32_0, ""), k32, b, ""), ""), "");
    LLVMValueRef r = LLVMBuildAShr(B, LLVMBuildShl(B, a, sh, ""), sh, "");
    return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, b, c->i32_0, ""), c->i32_0, r, "");
  }
  case ir_op_dp2a: {
    /* 9.7.1.24: d = c + a.h0 * b.b(k) + a.h1 * b.b(k+1), k = 0 (.lo) or 2 (.hi) */
    LLVMValueRef a = cg_op_as(E, i, 0, c->i32), b = cg_op_as(E, i, 1, c->i32), x = cg_op_as(E, i, 2, c->i32);
    LLVMValueRef r = x;
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef ah = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, kint(c->i32, 16 * k), ""), c->i16, "");
      LLVMValueRef bb = LLVMBuildTrunc(B, LLVMBuildLShr(B, b, kint(c->i32, 8 * (k + (i->mods.dp_hi ? 2 : 0))), ""), c->i8, "");
      ah = i->mods.signed_a ? LLVMBuildSExt(B, ah, c->i32, "") : LLVMBuildZExt(B, ah, c->i32, "");
      bb = i->mods.signed_b ? LLVMBuildSExt(B, bb, c->i32, "") : LLVMBuildZExt(B, bb, c->i32, "");
      r = LLVMBuildAdd(B, r, LLVMBuildMul(B, ah, bb, ""), "");
    }
    return r;
  }
  /* ---- wave-level target operations ---- */
  case ir_op_wave_lane_id: return cg_lane_id(E);
  case ir_op_wave_ballot: return cg_ballot(E, cg_op_as(E, i, 0, c->i1));
  case ir_op_wave_exec: return cg_ballot(E, LLVMConstInt(c->i1, 1, 0));
  case ir_op_wave_bpermute: {
    LLVMValueRef args[2] = {LLVMBuildShl(B, cg_op_as(E, i, 1, c->i32), kint(c->i32, 2), ""), cg_op_as(E, i, 0, c->i32)};
    return cg_intrinsic(c, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2, true);
  }
  case ir_op_wave_swizzle: {
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
  case ir_op_wave_readlane: {
    LLVMValueRef args[2] = {cg_op(E, i, 0), cg_op_as(E, i, 1, c->i32)};
    return cg_intrinsic(c, "llvm.amdgcn.readlane", &lt, 1, args, 2, true);
  }
  case ir_op_wave_readfirstlane: {
    LLVMValueRef a = cg_op(E, i, 0);
    return cg_intrinsic(c, "llvm.amdgcn.readfirstlane", &lt, 1, &a, 1, true);
  }
  case ir_op_workitem_id:
  case ir_op_workgroup_id:
  case ir_op_workgroup_size:
  case ir_op_workgroup_count: {
    unsigned dim;
    cg_dim_const(E, i, 0, &dim);
    return i->op == ir_op_workitem_id ? cg_workitem_id(E, dim)
           : i->op == ir_op_workgroup_id ? cg_workgroup_id(E, dim)
           : i->op == ir_op_workgroup_size ? cg_workgroup_size(E, dim)
                                           : cg_workgroup_count(E, dim);
  }
  case ir_op_dyn_lds_size: return cg_dyn_lds_size(E);
  case ir_op_cycle_counter: return cg_intrinsic(c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false);
  case ir_op_realtime_counter: return cg_realtime(E);
  case ir_op_hw_id: {
    /* s_getreg_b32 HW_ID (id 4, gfx9) / HW_ID1 (id 23, gfx10+), all 32
     * bits: simm16 = id | offset 0 << 6 | (size-1 = 31) << 11 */
    unsigned id = c->wave_size == 64 ? 4 : 23;
    LLVMValueRef a = kint(c->i32, id | (31u << 11));
    return cg_intrinsic(c, "llvm.amdgcn.s.getreg", NULL, 0, &a, 1, false);
  }
  /* handled in emit_instr */
  case ir_op_phi: case ir_op_ld: case ir_op_ldu: case ir_op_st: case ir_op_atom: case ir_op_red:
  case ir_op_call: case ir_op_unpack: case ir_op_wave_mma: case ir_op_setp: case ir_op_addc: case ir_op_subc:
  case ir_op_madc: case ir_op_br: case ir_op_cbr: case ir_op_brx: case ir_op_ret: case ir_op_exit:
  case ir_op_trap: case ir_op_unreachable: case ir_op_bar: case ir_op_workgroup_barrier:
  case ir_op_wave_sync: case ir_op_membar: case ir_op_fence: case ir_op_prefetch:
  case ir_op_prefetchu: case ir_op_pmevent: case ir_op_nanosleep: case ir_op_applypriority:
  case ir_op_discard: case ir_op_brkpt: case ir_op_cp_async_bulk_prefetch:
  case ir_op_cp_async_bulk_prefetch_tensor:
    break;
  case ir_op_createpolicy:
    /* The cache policy ld/st/cp.async take with .L2::cache_hint (PTX ISA
     * 9.7.9.16): an opaque 64-bit value that only those hints read, and
     * codegen honours none (above, prefetch), so any value is right.  0,
     * as the emulator gives (emu_mem.c). */
    return kint(c->i64, 0);
  /* warp-level: lower/ replaces them before codegen */
  case ir_op_shfl: case ir_op_vote: case ir_op_match: case ir_op_activemask: case ir_op_redux:
  case ir_op_elect: case ir_op_bar_warp_sync:
    cg_unsupported(E, i, "warp-level operation: run lower/ first (wave size %u)", c->wave_size);
    *handled = false;
    return NULL;
  /* math lower/lower_math.c expands into ops mapped here */
  case ir_op_fns: case ir_op_cvt_pack:
    cg_unsupported(E, i, "expanded by lower/ (lower_math.c): run lower/ first");
    *handled = false;
    return NULL;
  /* not implemented by codegen (lowering or later work) */
  case ir_op_st_async: case ir_op_mapa: case ir_op_getctarank:
  case ir_op_cp_async: case ir_op_cp_async_commit_group: case ir_op_cp_async_wait_group:
  case ir_op_cp_async_mbarrier_arrive: case ir_op_cp_async_bulk: case ir_op_cp_reduce_async_bulk:
  case ir_op_cp_async_bulk_tensor: case ir_op_cp_reduce_async_bulk_tensor:
  case ir_op_cp_async_bulk_commit_group: case ir_op_cp_async_bulk_wait_group:
  case ir_op_multimem_ld_reduce: case ir_op_multimem_st: case ir_op_multimem_red:
  case ir_op_tensormap_replace: case ir_op_tex: case ir_op_tld4:
  case ir_op_txq: case ir_op_istypep: case ir_op_suld: case ir_op_sust: case ir_op_sured:
  case ir_op_suq: case ir_op_bar_red: case ir_op_barrier_cluster: case ir_op_red_async:
  case ir_op_griddepcontrol: case ir_op_mbarrier_init: case ir_op_mbarrier_inval:
  case ir_op_mbarrier_expect_tx: case ir_op_mbarrier_complete_tx: case ir_op_mbarrier_arrive:
  case ir_op_mbarrier_arrive_drop: case ir_op_mbarrier_test_wait: case ir_op_mbarrier_try_wait:
  case ir_op_mbarrier_pending_count: case ir_op_setmaxnreg: case ir_op_wmma_load:
  case ir_op_wmma_store: case ir_op_wmma_mma: case ir_op_mma: case ir_op_mma_sp:
  case ir_op_ldmatrix: case ir_op_stmatrix: case ir_op_movmatrix: case ir_op_wgmma_fence:
  case ir_op_wgmma_commit_group: case ir_op_wgmma_wait_group: case ir_op_wgmma_mma_async:
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr: case ir_op_alloca: case ir_op_stacksave:
  case ir_op_stackrestore: case ir_op_opaque:
    cg_unsupported(E, i, "not implemented by codegen");
    *handled = false;
    return NULL;
  case ir_op_count:
    break;
  }
  if (t != ir_type_none && *ir_type_name(t)) cg_unsupported(E, i, "the .%s form is not implemented by codegen", ir_type_name(t));
  else if (i->op == ir_op_isspacep) cg_unsupported(E, i, "the .%s form is not implemented by codegen", ir_space_name((ir_space)i->mods.space));
  else cg_unsupported(E, i, "this form is not implemented by codegen");
  *handled = false;
  return NULL;
}

/* A guarded instruction (@p): pure ops become a select against the keep
 * values; anything with an effect, a load or a possible fault is branched
 * around, with phis joining its results and the keep values. */
static void emit_guarded(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  const ir_op_info *info = &ir_op_infos[i->op];
  LLVMValueRef g = cg_val(E, i, i->guard);
  g = cg_coerce(E, g, c->i1);
  if (i->guard_neg) g = LLVMBuildNot(E->b, g, "");
  if (!(info->flags & (IR_F_SIDE | IR_F_LOAD | IR_F_STORE | IR_F_TRAP | IR_F_CONV))) {
    emit_instr(E, i);
    for (unsigned k = 0; k < i->ndst; k++) {
      if (!i->dst[k] || !E->vals[i->dst[k]->id]) continue;
      LLVMValueRef kv = cg_coerce(E, cg_val(E, i, i->keep[k]), LLVMTypeOf(E->vals[i->dst[k]->id]));
      E->vals[i->dst[k]->id] = LLVMBuildSelect(E->b, g, E->vals[i->dst[k]->id], kv, "");
    }
    return;
  }
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(E->b);
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(c->ctx, E->fn, "guarded");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->ctx, E->fn, "join");
  LLVMValueRef *keep = calloc(i->ndst ? i->ndst : 1, sizeof *keep);
  for (unsigned k = 0; k < i->ndst; k++)
    if (i->dst[k]) keep[k] = cg_coerce(E, cg_val(E, i, i->keep[k]), cg_ltype(E, (ir_type)i->dst[k]->type));
  LLVMBuildCondBr(E->b, g, then, cont);
  LLVMPositionBuilderAtEnd(E->b, then);
  emit_instr(E, i);
  LLVMBasicBlockRef then_end = LLVMGetInsertBlock(E->b);
  LLVMBuildBr(E->b, cont);
  LLVMPositionBuilderAtEnd(E->b, cont);
  for (unsigned k = 0; k < i->ndst; k++) {
    if (!i->dst[k] || !E->vals[i->dst[k]->id]) continue;
    LLVMValueRef v = E->vals[i->dst[k]->id];
    LLVMValueRef phi = LLVMBuildPhi(E->b, LLVMTypeOf(v), "");
    LLVMValueRef in[2] = {v, keep[k]};
    LLVMBasicBlockRef bb[2] = {then_end, pre};
    LLVMAddIncoming(phi, in, bb, 2);
    E->vals[i->dst[k]->id] = phi;
  }
  free(keep);
}

/* ---- functions ---------------------------------------------------------------- */

/* Reverse post-order of the CFG from the entry; unreachable blocks after. */
static uint32_t rpo(const ir_func *f, ir_block **blocks, ir_block **order) {
  uint32_t n = 0;
  ir_foreach_block(f, b) blocks[n++] = b;
  bool *seen = calloc(n ? n : 1, 1);
  ir_block **stack = calloc(n ? n : 1, sizeof *stack);
  uint32_t *next = calloc(n ? n : 1, sizeof *next);
  uint32_t sp = 0, pos = n;
  if (n) {
    stack[sp++] = f->entry;
    seen[f->entry->id] = 1;
  }
  while (sp) {
    ir_block *b = stack[sp - 1];
    uint32_t ns = ir_block_nsuccs(b);
    if (next[b->id] < ns) {
      ir_block *s = ir_block_succ(b, next[b->id]++);
      if (s && !seen[s->id]) {
        seen[s->id] = 1;
        stack[sp++] = s;
      }
    } else {
      order[--pos] = b;
      sp--;
    }
  }
  /* reachable blocks sit in order[pos..n); move them to the front */
  uint32_t nr = n - pos;
  memmove(order, order + pos, nr * sizeof *order);
  uint32_t k = nr;
  for (uint32_t j = 0; j < n; j++)
    if (!seen[blocks[j]->id]) order[k++] = blocks[j];
  free(seen);
  free(stack);
  free(next);
  return n;
}

static const char *value_name(cg_emitter *E, const char *prefix, const char *name, char *buf, size_t cap) {
  (void)E;
  snprintf(buf, cap, "%s%s", prefix, name);
  return buf;
}

/* Float modes of a function: denormal-fp-math-f32 "preserve-sign" when every
 * f32 arithmetic instruction of it has .ftz (nvcc's -ftz=true), else IEEE.
 * A mix keeps subnormals (the ftz ones then keep them too: documented). */
static void float_modes(cg_emitter *E, const ir_func *f, LLVMValueRef fn) {
  unsigned ftz = 0, noftz = 0;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    if (i->type != ir_type_f32) continue;
    switch ((ir_op)i->op) {
    case ir_op_add: case ir_op_sub: case ir_op_mul: case ir_op_fma: case ir_op_mad: case ir_op_div:
    case ir_op_min: case ir_op_max: case ir_op_rcp: case ir_op_sqrt: case ir_op_rsqrt: case ir_op_setp:
      break;
    default: continue;
    }
    if (i->mods.ftz) ftz++;
    else noftz++;
  }
  if (ftz && !noftz) cg_fn_attr(E->c, fn, "denormal-fp-math-f32", "preserve-sign,preserve-sign");
}

static bool emit_body(cg_emitter *E, const ir_func *f, LLVMValueRef fn) {
  cg_context *c = E->c;
  ir_compute_preds((ir_func *)f);
  E->f = f;
  E->fn = fn;
  E->vals = calloc(f->nvalues ? f->nvalues : 1, sizeof *E->vals);
  E->bbs = calloc(f->nblocks + 1, sizeof *E->bbs);
  E->bb_end = calloc(f->nblocks + 1, sizeof *E->bb_end);
  ir_block **blocks = calloc(f->nblocks + 1, sizeof *blocks), **order = calloc(f->nblocks + 1, sizeof *order);
  char nb[256];

  E->alloca_bb = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
  ir_foreach_block(f, b) E->bbs[b->id] = LLVMAppendBasicBlockInContext(c->ctx, fn, b->name ? b->name : "");

  /* Parameters. */
  unsigned k = 0;
  for (uint32_t p = 0; p < f->nparams; p++, k++) {
    LLVMValueRef a = LLVMGetParam(fn, k);
    LLVMSetValueName2(a, f->params[p].name, strlen(f->params[p].name));
    LLVMTypeRef pv = cg_param_by_value(E, f, p);
    if (!f->is_kernel && f->params[p].space == IR_SPACE_REG && f->params[p].value) {
      E->vals[f->params[p].value->id] = a;
    } else if (pv) { /* the callee's own buffer of a by-value .param */
      LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
      LLVMValueRef buf = LLVMBuildAlloca(E->b, pv, "");
      LLVMSetAlignment(buf, f->params[p].align ? f->params[p].align : 4);
      LLVMBuildStore(E->b, a, buf);
      cg_map_put(&E->syms, &f->params[p], buf);
    } else {
      cg_map_put(&E->syms, &f->params[p], a);
    }
  }
  E->ret_buf = NULL;
  E->ret_ty = cg_ret_by_value(E, f);
  for (uint32_t r = 0; r < f->nrets; r++) {
    if (E->ret_ty) { /* the callee's own buffer; ret returns its contents */
      LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
      E->ret_buf = LLVMBuildAlloca(E->b, E->ret_ty, f->rets[r].name);
      LLVMSetAlignment(E->ret_buf, f->rets[r].align ? f->rets[r].align : 4);
      cg_map_put(&E->syms, &f->rets[r], E->ret_buf);
      continue;
    }
    if (f->rets[r].space == IR_SPACE_REG && ((r == 0 && f->nrets == 1) || cg_multi_reg_ret(E, f))) continue;
    LLVMValueRef a = LLVMGetParam(fn, k++);
    LLVMSetValueName2(a, f->rets[r].name, strlen(f->rets[r].name));
    cg_map_put(&E->syms, &f->rets[r], a);
  }

  /* Function-scope .local and .param variables: allocas in the entry. */
  LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
  for (uint32_t g = 0; g < E->m->nglobals; g++) {
    const ir_global *v = E->m->globals[g];
    if (v->owner != f || (v->space != IR_SPACE_LOCAL && v->space != IR_SPACE_PARAM &&
                          v->space != IR_SPACE_PARAM_FUNC))
      continue;
    LLVMTypeRef at = LLVMArrayType2(c->i8, v->size ? v->size : 1);
    LLVMValueRef a = LLVMBuildAlloca(E->b, at, value_name(E, "", v->name, nb, sizeof nb));
    LLVMSetAlignment(a, v->align ? v->align : 4);
    /* a call's argument/return buffer: scoped to its call sequence
     * (cg_compile.c gives it lifetime markers) */
    if (v->space == IR_SPACE_PARAM) LLVMSetMetadata(a, c->kind_callbuf, LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, NULL, 0)));
    cg_map_put(&E->syms, v, a);
  }
  LLVMBuildBr(E->b, E->bbs[f->entry->id]);

  uint32_t n = rpo(f, blocks, order);
  /* Blocks no path from the entry reaches are left empty (unreachable):
   * their instructions may use values of other unreachable blocks in any
   * order, and nothing observes them. */
  bool *reach = calloc(f->nblocks + 1, 1);
  reach[f->entry->id] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t j = 0; j < n; j++)
      if (reach[order[j]->id])
        for (uint32_t k = 0; k < ir_block_nsuccs(order[j]); k++) {
          ir_block *sb = ir_block_succ(order[j], k);
          if (sb && !reach[sb->id]) reach[sb->id] = changed = true;
        }
  }
  /* Phis first, so back edges find them. */
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    LLVMPositionBuilderAtEnd(E->b, E->bbs[b->id]);
    ir_foreach_instr(b, i) {
      if (i->op != ir_op_phi) break;
      ir_type pt = (ir_type)i->dst[0]->type;
      E->vals[i->dst[0]->id] = reach[b->id] ? LLVMBuildPhi(E->b, cg_ltype(E, pt), "") : LLVMGetUndef(cg_ltype(E, pt));
    }
  }
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    LLVMBasicBlockRef bb = E->bbs[b->id];
    LLVMPositionBuilderAtEnd(E->b, bb);
    if (!reach[b->id]) {
      ir_foreach_instr(b, i) for (unsigned k = 0; k < i->ndst; k++)
        if (i->dst[k] && !E->vals[i->dst[k]->id]) E->vals[i->dst[k]->id] = LLVMGetUndef(cg_ltype(E, (ir_type)i->dst[k]->type));
      LLVMBuildUnreachable(E->b);
      E->bb_end[b->id] = bb;
      continue;
    }
    ir_foreach_instr(b, i) {
      if (i->guard) emit_guarded(E, i);
      else emit_instr(E, i);
      /* a result left undefined by an error (reported) must not report
       * again at every use */
      for (unsigned k = 0; k < i->ndst; k++)
        if (i->dst[k] && !E->vals[i->dst[k]->id]) E->vals[i->dst[k]->id] = LLVMGetUndef(cg_ltype(E, (ir_type)i->dst[k]->type));
    }
    E->bb_end[b->id] = LLVMGetInsertBlock(E->b);
    if (!LLVMGetBasicBlockTerminator(E->bb_end[b->id])) LLVMBuildUnreachable(E->b);
  }
  /* Phi operands, from the block that ends each predecessor. */
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    if (!reach[b->id]) continue;
    ir_foreach_instr(b, i) {
      if (i->op != ir_op_phi) break;
      LLVMValueRef phi = E->vals[i->dst[0]->id];
      for (uint32_t p = 0; p < i->nsrc && p < b->npreds; p++) {
        LLVMBasicBlockRef from = E->bb_end[b->preds[p]->id];
        if (!from) continue;
        if (!reach[b->preds[p]->id]) continue; /* ends in unreachable: no edge */
        LLVMBasicBlockRef cur = LLVMGetInsertBlock(E->b);
        /* coercions of the incoming value go at the end of the predecessor */
        LLVMPositionBuilderBefore(E->b, LLVMGetBasicBlockTerminator(from));
        LLVMValueRef v = cg_coerce(E, cg_val(E, i, i->src[p]), LLVMTypeOf(phi));
        LLVMPositionBuilderAtEnd(E->b, cur);
        LLVMAddIncoming(phi, &v, &from, 1);
      }
    }
  }
  float_modes(E, f, fn);
  free(reach);
  free(blocks);
  free(order);
  free(E->vals);
  free(E->bbs);
  free(E->bb_end);
  E->vals = NULL;
  return !E->failed;
}

/* ---- module ------------------------------------------------------------------ */

static LLVMValueRef declare_global(cg_emitter *E, const ir_global *g) {
  cg_context *c = E->c;
  unsigned as;
  switch ((ir_space)g->space) {
  case IR_SPACE_GLOBAL: as = CG_AS_GLOBAL; break;
  case IR_SPACE_SHARED:
  case IR_SPACE_SHARED_CTA:
  case IR_SPACE_SHARED_CLUSTER: as = CG_AS_LDS; break;
  case IR_SPACE_CONST: as = CG_AS_CONST; break;
  default: return NULL;
  }
  char name[512];
  if (g->owner) snprintf(name, sizeof name, "%s.%s", g->owner->name, g->name);
  else snprintf(name, sizeof name, "%s", g->name);
  bool dyn = g->is_extern_shared || (as == CG_AS_LDS && g->linkage == IR_LINK_EXTERN && !g->size);
  uint64_t size = g->size;
  LLVMTypeRef t = LLVMArrayType2(c->i8, dyn ? 0 : size);
  LLVMValueRef v = LLVMAddGlobalInAddressSpace(c->mod, t, name, as);
  LLVMSetAlignment(v, g->align ? g->align : 1);
  if (dyn) {
    /* dynamic LDS: a zero-sized external LDS array; LLVM places it after
     * the static LDS of the kernel (AMDGPUUsage "Dynamic LDS") */
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return v;
  }
  if (as == CG_AS_LDS) {
    /* Static LDS aligned to 16 bytes where its size allows (the largest
     * power of two dividing it, at most 16): the address of a shared
     * variable is the implementation's choice, and with it the backend
     * can merge a row of LDS reads into ds_read_b128 (cg_compile.c runs
     * infer-alignment and the load-store vectorizer after the pipeline):
     * PTX's .align 4 on a float array otherwise caps them at
     * ds_read2_b32. */
    unsigned a = g->align ? g->align : 1;
    uint64_t pow2 = size & (~size + 1);
    unsigned want = pow2 >= 16 || !size ? 16 : (unsigned)pow2;
    if (want > a) LLVMSetAlignment(v, want);
    LLVMSetInitializer(v, LLVMGetUndef(t));
    LLVMSetLinkage(v, LLVMInternalLinkage);
    return v;
  }
  if (g->linkage == IR_LINK_EXTERN && !g->init) {
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return v;
  }
  if (!g->nrelocs) {
    LLVMSetInitializer(v, g->init ? LLVMConstStringInContext2(c->ctx, (const char *)g->init, size, 1)
                                  : LLVMConstNull(t));
  }
  if (g->owner) {
    LLVMSetLinkage(v, LLVMInternalLinkage);
  } else {
    /* Module scope, .visible or not: the runtime finds it by name
     * (cuModuleGetGlobal).  A file-static __constant__ or __device__
     * variable is not .visible in nvcc's PTX (5.4.6: internal linkage), yet
     * cudart registers it and cudaMemcpyToSymbol reaches it through
     * cuModuleGetGlobal, which CUDA answers from the cubin's local symbols.
     * A code object's loader only sees exported symbols, so every module
     * variable is exported (protected: one definition, no interposition).
     * It also keeps LLVM from folding loads of a variable the host writes
     * (an internal constant never stored to looks constant to globalopt). */
    LLVMSetLinkage(v, g->linkage == IR_LINK_WEAK || g->linkage == IR_LINK_COMMON ? LLVMWeakAnyLinkage : LLVMExternalLinkage);
    LLVMSetVisibility(v, LLVMProtectedVisibility);
  }
  if (as == CG_AS_CONST) LLVMSetGlobalConstant(v, 0);
  return v;
}

/* An initializer holding addresses ({ f, g+8, generic(s) }, 5.4.4): a
 * packed struct of byte runs and the 32/64-bit address constants. */
static bool reloc_init(cg_emitter *E, const ir_global *g) {
  cg_context *c = E->c;
  LLVMValueRef gv = cg_map_get(&E->syms, g);
  if (!gv) return true;
  uint32_t n = g->nrelocs;
  LLVMValueRef *parts = calloc(2 * n + 1, sizeof *parts);
  unsigned np = 0;
  uint64_t pos = 0;
  for (uint32_t k = 0; k < n; k++) {
    const ir_reloc *r = &g->relocs[k];
    if (r->offset < pos || r->offset + r->size > g->size) {
      free(parts);
      pw_error_at(E->d, E->src, g->loc.line, g->loc.col, "initializer of '%s': relocations overlap", g->name);
      return false;
    }
    if (r->offset > pos)
      parts[np++] = LLVMConstStringInContext2(c->ctx, (const char *)g->init + pos, r->offset - pos, 1);
    const void *key = r->sym.kind == IR_SYM_GLOBAL ? (const void *)r->sym.global
                      : r->sym.kind == IR_SYM_FUNC ? (const void *)r->sym.func
                                                   : (const void *)r->sym.param;
    LLVMValueRef p = cg_map_get(&E->syms, key);
    LLVMTypeRef it = r->size == 4 ? c->i32 : c->i64;
    if (!p) {
      free(parts);
      pw_error_at(E->d, E->src, g->loc.line, g->loc.col, "initializer of '%s': unknown symbol", g->name);
      return false;
    }
    if (r->generic && LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != CG_AS_FLAT)
      p = LLVMConstAddrSpaceCast(p, c->ptr[CG_AS_FLAT]);
    LLVMValueRef a = LLVMConstPtrToInt(p, c->i64);
    if (r->addend) a = LLVMConstAdd(a, LLVMConstInt(c->i64, (uint64_t)r->addend, 1));
    if (r->size == 4) a = LLVMConstTrunc(a, it);
    parts[np++] = a;
    pos = r->offset + r->size;
  }
  if (pos < g->size)
    parts[np++] = LLVMConstStringInContext2(c->ctx, (const char *)g->init + pos, g->size - pos, 1);
  LLVMValueRef init = LLVMConstStructInContext(c->ctx, parts, np, 1);
  free(parts);
  /* the variable's type becomes the struct: replace it */
  LLVMValueRef nv = LLVMAddGlobalInAddressSpace(c->mod, LLVMTypeOf(init), "", LLVMGetPointerAddressSpace(LLVMTypeOf(gv)));
  LLVMSetInitializer(nv, init);
  LLVMSetLinkage(nv, LLVMGetLinkage(gv));
  LLVMSetVisibility(nv, LLVMGetVisibility(gv));
  LLVMSetAlignment(nv, LLVMGetAlignment(gv));
  LLVMReplaceAllUsesWith(gv, nv);
  size_t len;
  const char *name = LLVMGetValueName2(gv, &len);
  char *keep = strndup(name, len);
  LLVMDeleteGlobal(gv);
  LLVMSetValueName2(nv, keep, len);
  free(keep);
  cg_map_put(&E->syms, g, nv);
  return true;
}

bool cg_emit_module(cg_context *c, const ir_module *m, const pw_src *src, pw_diag *d) {
  cg_emitter E = {.c = c, .b = c->b, .m = m, .src = src, .d = d};
  bool ok = true;
  /* Variables.  LLVM's AMDGPU backend counts a kernel's LDS in 32 bits:
   * a .shared variable of 4 GiB or more, or static LDS adding up to that,
   * would wrap and alias (a 4 GiB array and a 64-byte one once compiled
   * to 48 bytes).  No target holds it: refuse it by name, in 64 bits;
   * below that, LLVM reports a kernel's LDS past the target's limit. */
  uint64_t lds_total = 0;
  for (uint32_t g = 0; g < m->nglobals; g++) {
    const ir_global *v = m->globals[g];
    if ((v->space == IR_SPACE_SHARED || v->space == IR_SPACE_SHARED_CTA || v->space == IR_SPACE_SHARED_CLUSTER) &&
        !v->is_extern_shared) {
      lds_total += v->size;
      if (v->size > UINT32_MAX || lds_total > UINT32_MAX) {
        pw_error_at(d, src, v->loc.line, v->loc.col,
                    "shared variable '%s' (%llu bytes) takes static shared memory to %llu bytes; %s has %u bytes of "
                    "LDS per workgroup",
                    v->name, (unsigned long long)v->size, (unsigned long long)lds_total, c->target->name,
                    c->target->lds_bytes);
        ok = false;
        break;
      }
    }
  }
  for (uint32_t g = 0; g < m->nglobals && ok; g++) {
    const ir_global *v = m->globals[g];
    LLVMValueRef gv = declare_global(&E, v);
    if (gv) cg_map_put(&E.syms, v, gv);
  }
  if (!ok) {
    cg_map_free(&E.syms);
    return false;
  }
  /* Functions. */
  ir_foreach_func(m, f) {
    LLVMValueRef fn = LLVMAddFunction(c->mod, f->name, cg_func_type(&E, f));
    cg_map_put(&E.syms, f, fn);
    if (f->is_kernel) {
      cg_kernel_attrs(&E, f, fn);
    } else {
      LLVMSetLinkage(fn, f->is_decl ? LLVMExternalLinkage
                         : c->relocatable && f->linkage == IR_LINK_VISIBLE ? LLVMExternalLinkage
                         : c->relocatable && f->linkage == IR_LINK_WEAK ? LLVMWeakAnyLinkage
                         : LLVMInternalLinkage);
    }
  }
  for (uint32_t g = 0; g < m->nglobals; g++)
    if (m->globals[g]->nrelocs && !reloc_init(&E, m->globals[g])) ok = false;
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    E.failed = false;
    if (!emit_body(&E, f, cg_map_get(&E.syms, f))) ok = false;
  }
  cg_map_free(&E.syms);
  return ok;
}
