/* codegen/cg_cvt.c: conversions (cvt, PTX ISA 9.7.9.21) and their rounding
 * modes: float <-> float, int <-> float, int <-> int, with saturation.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* ---- cvt (9.7.9.21) ------------------------------------------------------- */

static LLVMValueRef round_float(cg_emitter *E, const ir_instr *i, LLVMValueRef x) {
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_RNI: return cg_intr1(E, "llvm.rint", x);
  case IR_RND_RZI: return cg_intr1(E, "llvm.trunc", x);
  case IR_RND_RMI: return cg_intr1(E, "llvm.floor", x);
  case IR_RND_RPI: return cg_intr1(E, "llvm.ceil", x);
  default: return x;
  }
}

/* A narrowing float conversion of x to el with the instruction's rounding:
 * rn is fptrunc; rz/rm/rp are llvm.fptrunc.round where the backend selects
 * it (f32 -> f16, f64 -> f32: it sets the mode register around the
 * conversion); f32 -> bf16 is done on the bits (bf16 is f32's upper half:
 * truncate, then add one ulp of magnitude when rounding away from zero in
 * the asked direction; NaNs stay quiet NaNs).  NULL: not supported (the
 * backend would abort on it, so it must never be emitted). */
static LLVMValueRef narrow(cg_emitter *E, const ir_instr *i, LLVMValueRef x, LLVMTypeRef el) {
  LLVMBuilderRef B = E->b;
  cg_context *c = E->c;
  if (!is_rnd_directed(i)) return LLVMBuildFPTrunc(B, x, el, "");
  LLVMTypeRef sl = LLVMTypeOf(x);
  if ((sl == c->f32 && el == c->f16) || (sl == c->f64 && el == c->f32)) {
    const char *m = i->mods.rnd == IR_RND_RZ ? "round.towardzero" : i->mods.rnd == IR_RND_RM ? "round.downward" : "round.upward";
    LLVMTypeRef tys[2] = {el, sl};
    LLVMValueRef args[2] = {x, LLVMMetadataAsValue(c->ctx, LLVMMDStringInContext2(c->ctx, m, strlen(m)))};
    return cg_intrinsic(c, "llvm.fptrunc.round", tys, 2, args, 2, false);
  }
  if (sl == c->f32 && el == c->bf16) {
    LLVMValueRef bits = LLVMBuildBitCast(B, x, c->i32, "");
    LLVMValueRef hi = LLVMBuildLShr(B, bits, kint(c->i32, 16), "");
    LLVMValueRef inexact = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, bits, kint(c->i32, 0xffff), ""), c->i32_0, "");
    LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, bits, c->i32_0, "");
    LLVMValueRef up = LLVMConstInt(c->i1, 0, 0);
    if (i->mods.rnd == IR_RND_RP) up = LLVMBuildAnd(B, inexact, LLVMBuildNot(B, neg, ""), "");
    if (i->mods.rnd == IR_RND_RM) up = LLVMBuildAnd(B, inexact, neg, "");
    LLVMValueRef r = LLVMBuildAdd(B, hi, LLVMBuildZExt(B, up, c->i32, ""), "");
    LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, "");
    r = LLVMBuildSelect(B, nan, LLVMBuildOr(B, hi, kint(c->i32, 0x40), ""), r, "");
    return LLVMBuildBitCast(B, LLVMBuildTrunc(B, r, c->i16, ""), c->bf16, "");
  }
  return NULL;
}

/* cvt.rn[.relu].f16x2.f32 d, a, b (9.7.9.21): a to the upper half, b to
 * the lower */
static LLVMValueRef cvt_pair(cg_emitter *E, const ir_instr *i, LLVMTypeRef dl, LLVMTypeRef sl) {
  LLVMTypeRef el = LLVMGetElementType(dl);
  LLVMValueRef v = LLVMGetUndef(dl);
  for (unsigned k = 0; k < 2; k++) {
    LLVMValueRef x = cg_op_as(E, i, 1 - k, sl);
    LLVMValueRef h = narrow(E, i, x, el);
    if (!h) {
      cg_unsupported(E, i, "cvt.%s.%s.%s is not implemented", ir_rnd_name((ir_rnd)i->mods.rnd), ir_type_name((ir_type)i->type),
                     ir_type_name((ir_type)i->type2));
      return LLVMGetUndef(dl);
    }
    if (i->mods.relu) h = cg_intr2(E, "llvm.maxnum", h, LLVMConstReal(el, 0.0));
    v = LLVMBuildInsertElement(E->b, v, h, kint(E->c->i32, k), "");
  }
  return v;
}

/* float -> float: the same type rounds to an integer (.rni ...), a wider
 * one is exact, a narrower one rounds as asked (narrow); .sat */
static LLVMValueRef cvt_float_float(cg_emitter *E, const ir_instr *i, LLVMValueRef x, LLVMTypeRef dl, LLVMTypeRef sl) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  unsigned db = cg_type_bits(dl), sb = cg_type_bits(sl);
  LLVMValueRef r;
  if (db == sb && dt == st) {
    r = round_float(E, i, x);
  } else if (db > sb || (db == sb)) {
    r = db == sb ? LLVMBuildFPCast(E->b, LLVMBuildFPExt(E->b, x, E->c->f32, ""), dl, "") : LLVMBuildFPExt(E->b, x, dl, "");
  } else {
    r = narrow(E, i, x, dl);
    if (!r) {
      cg_unsupported(E, i, "cvt.%s.%s.%s is not implemented", ir_rnd_name((ir_rnd)i->mods.rnd), ir_type_name(dt), ir_type_name(st));
      return LLVMGetUndef(dl);
    }
  }
  if (i->mods.sat) r = cg_sat01(E, r);
  return r;
}

/* int -> float: rn, or directed by comparing back */
static LLVMValueRef cvt_int_float(cg_emitter *E, const ir_instr *i, LLVMValueRef x, LLVMTypeRef dl, LLVMTypeRef sl) {
  LLVMBuilderRef B = E->b;
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  LLVMValueRef r = is_signed(st) ? LLVMBuildSIToFP(B, x, dl, "") : LLVMBuildUIToFP(B, x, dl, "");
  if (is_rnd_directed(i) && (dt == ir_type_f32 || dt == ir_type_f64)) {
    /* back = the result converted back (saturating); the rounding went
     * up when x < back, or when r reached 2^N (signed 2^(N-1)), which
     * the saturated back cannot show */
    unsigned sb = cg_type_bits(sl);
    LLVMTypeRef tys[2] = {sl, dl};
    LLVMValueRef back = cg_intrinsic(E->c, is_signed(st) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &r, 1, false);
    bool sg = is_signed(st);
    LLVMValueRef big = LLVMBuildFCmp(B, LLVMRealOGE, r, LLVMConstReal(dl, __builtin_ldexp(1.0, sg ? sb - 1 : sb)), "");
    LLVMValueRef lt = LLVMBuildOr(B, big, LLVMBuildICmp(B, sg ? LLVMIntSLT : LLVMIntULT, x, back, ""), "");
    LLVMValueRef gt = LLVMBuildAnd(B, LLVMBuildNot(B, big, ""), LLVMBuildICmp(B, sg ? LLVMIntSGT : LLVMIntUGT, x, back, ""), "");
    r = cg_step_ulp(E, i, r, gt, lt);
  } else if (!cg_fp_round_ok(E, i)) {
    return LLVMGetUndef(dl);
  }
  return i->mods.sat ? cg_sat01(E, r) : r;
}

/* float -> int: round as asked, then saturate (NaN -> 0) */
static LLVMValueRef cvt_float_int(cg_emitter *E, const ir_instr *i, LLVMValueRef x, LLVMTypeRef dl, LLVMTypeRef sl) {
  LLVMValueRef r = x;
  if (i->mods.rnd == IR_RND_NONE) {
    cg_unsupported(E, i, "float-to-integer cvt needs a rounding modifier");
    return LLVMGetUndef(dl);
  }
  r = round_float(E, i, x);
  LLVMTypeRef tys[2] = {dl, sl};
  return cg_intrinsic(E->c, is_signed((ir_type)i->type) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &r, 1, false);
}

/* int -> int: extend by the source's signedness; .sat clamps to the
 * destination's range. */
static LLVMValueRef cvt_int_int(cg_emitter *E, const ir_instr *i, LLVMValueRef x, LLVMTypeRef dl, LLVMTypeRef sl) {
  LLVMBuilderRef B = E->b;
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  unsigned db = cg_type_bits(dl), sb = cg_type_bits(sl);
  if (i->mods.sat) {
    LLVMTypeRef w = LLVMIntTypeInContext(E->c->ctx, (db > sb ? db : sb) + 1);
    LLVMValueRef xw = is_signed(st) ? LLVMBuildSExt(B, x, w, "") : LLVMBuildZExt(B, x, w, "");
    uint64_t lo = is_signed(dt) ? ~0ull << (db - 1) : 0;   /* -2^(db-1), no signed overflow at 64 */
    uint64_t hi = is_signed(dt) ? (1ull << (db - 1)) - 1 : (db == 64 ? ~0ull : (1ull << db) - 1);
    LLVMValueRef vlo = LLVMConstInt(w, lo, 1);
    LLVMValueRef vhi = LLVMConstInt(w, hi, 0);
    if (db == 64 && !is_signed(dt)) vhi = LLVMBuildZExt(B, LLVMConstInt(E->c->i64, ~0ull, 0), w, "");
    xw = cg_intr2(E, "llvm.smax", xw, vlo);
    xw = cg_intr2(E, "llvm.smin", xw, vhi);
    return LLVMBuildTrunc(B, xw, dl, "");
  }
  if (db == sb) return x;
  if (db < sb) return LLVMBuildTrunc(B, x, dl, "");
  return is_signed(st) ? LLVMBuildSExt(B, x, dl, "") : LLVMBuildZExt(B, x, dl, "");
}

/* cvt: type the destination's, type2 the source's.  Forms lower/ expands
 * (lower_math.c: fp8/fp6/fp4, tf32, packed types) are reported. */
LLVMValueRef cg_cvt(cg_emitter *E, const ir_instr *i) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  LLVMTypeRef dl = cg_ltype(E, dt), sl = cg_ltype(E, st);
  if (is_fvec(dt) && dt != ir_type_f32x2 && i->nsrc == 2 && st == ir_type_f32 && !i->mods.satfinite)
    return cvt_pair(E, i, dl, sl);
  LLVMValueRef x = cg_op_as(E, i, 0, sl);
  bool df = is_float(dt), sf = is_float(st);
  if (i->nsrc != 1 || ir_type_kind_of(dt) == IR_TK_PACKED_FLOAT || ir_type_kind_of(st) == IR_TK_PACKED_FLOAT ||
      (df && ir_type_bits(dt) < 16) || (sf && ir_type_bits(st) < 16) || dt == ir_type_tf32) {
    cg_unsupported(E, i, "cvt.%s.%s is expanded by lower/ (lower_math.c) where PTX has it", ir_type_name(dt), ir_type_name(st));
    return LLVMGetUndef(dl);
  }
  if (df && sf) return cvt_float_float(E, i, x, dl, sl);
  if (df) return cvt_int_float(E, i, x, dl, sl);
  if (sf) return cvt_float_int(E, i, x, dl, sl);
  return cvt_int_int(E, i, x, dl, sl);
}
