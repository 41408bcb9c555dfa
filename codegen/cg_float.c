/* codegen/cg_float.c: float arithmetic (PTX ISA 9.7.3, 9.7.4) and its
 * rounding: .sat, directed rounding by the mode register (add, sub, mul,
 * fma) or by a residual and one ulp of stepping (div, rcp, sqrt).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* x saturated as a float instruction's .sat asks (PTX ISA 9.7.3). */
LLVMValueRef cg_sat01(cg_emitter *E, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  /* PTX .sat: NaN -> 0, then clamp to [0, 1]; maxnum(NaN, 0) = 0. */
  x = cg_intr2(E, "llvm.maxnum", x, fconst(t, 0.0));
  return cg_intr2(E, "llvm.minnum", x, fconst(t, 1.0));
}

/* Float op with PTX rounding: rn (or none) is the plain IEEE op; rz/rm/rp
 * are done by mode_rounded() or directed() where they apply, else
 * reported. */
bool cg_fp_round_ok(cg_emitter *E, const ir_instr *i) {
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_NONE:
  case IR_RND_RN: return true;
  default:
    cg_unsupported(E, i, "rounding .%s needs mode-register switching (not implemented)", ir_rnd_name((ir_rnd)i->mods.rnd));
    return false;
  }
}

/* ---- directed rounding (.rz .rm .rp) of div, rcp, sqrt ------------------
 * add/sub/mul/fma are one instruction under the mode register
 * (mode_rounded below).  Division and square root are multi-instruction
 * sequences (v_div_scale/v_div_fmas/v_div_fixup, Newton steps) proven for
 * round-to-nearest only, so they cannot just run under another mode.
 * Instead: compute the round-to-nearest result r and the sign of the exact
 * result's difference from it, which the fma residual gives exactly, then
 * move r one ulp when the asked direction disagrees:
 *   rz: r > 0 and exact < r, or r < 0 and exact > r: one ulp toward zero
 *   rm: exact < r: next below;   rp: exact > r: next above.
 * Overflow to infinity from finite operands counts as "exact is below +inf /
 * above -inf", so rz/rm/rp give the largest finite value as IEEE requires.
 * Stepping is integer arithmetic on the bits (sign-magnitude).  Limit: a
 * quotient or root whose residual underflows below the smallest subnormal
 * (results near 2^-126 / 2^-1022, roots of tiny f64) may miss its one-ulp
 * step; lower/ (lower_math.c) expands directed div/rcp/sqrt exactly before
 * codegen, so only IR that skipped lower/ reaches these. */

LLVMValueRef cg_step_ulp(cg_emitter *E, const ir_instr *i, LLVMValueRef r, LLVMValueRef gt, LLVMValueRef lt) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(r);
  unsigned n = cg_type_bits(ft);
  LLVMTypeRef it = LLVMIntTypeInContext(E->c->ctx, n);
  LLVMValueRef bits = LLVMBuildBitCast(B, r, it, "");
  LLVMValueRef zero = LLVMConstReal(ft, 0.0);
  LLVMValueRef pos = LLVMBuildFCmp(B, LLVMRealOGT, r, zero, "");
  LLVMValueRef neg = LLVMBuildFCmp(B, LLVMRealOLT, r, zero, "");
  LLVMValueRef isz = LLVMBuildFCmp(B, LLVMRealOEQ, r, zero, "");
  LLVMValueRef minus1 = LLVMBuildSub(B, bits, kint(it, 1), "");
  LLVMValueRef plus1 = LLVMBuildAdd(B, bits, kint(it, 1), "");
  LLVMValueRef res = bits;
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_RZ: {
    LLVMValueRef away = LLVMBuildOr(B, LLVMBuildAnd(B, pos, lt, ""), LLVMBuildAnd(B, neg, gt, ""), "");
    res = LLVMBuildSelect(B, away, minus1, bits, "");
    break;
  }
  case IR_RND_RM: { /* next below: +x -> bits-1, -x -> bits+1, 0 -> -min subnormal */
    LLVMValueRef nd = LLVMBuildSelect(B, pos, minus1, plus1, "");
    nd = LLVMBuildSelect(B, isz, kint(it, (1ull << (n - 1)) | 1), nd, "");
    res = LLVMBuildSelect(B, lt, nd, bits, "");
    break;
  }
  case IR_RND_RP: { /* next above: +x -> bits+1, -x -> bits-1, 0 -> +min subnormal */
    LLVMValueRef nu = LLVMBuildSelect(B, neg, minus1, plus1, "");
    nu = LLVMBuildSelect(B, isz, kint(it, 1), nu, "");
    res = LLVMBuildSelect(B, gt, nu, bits, "");
    break;
  }
  default: break;
  }
  return LLVMBuildBitCast(B, res, ft, "");
}

/* gt/lt of "exact vs r" from a residual whose sign is the error's sign
 * (times sign_of, when given), with overflow from finite operands. */
static void residual_sign(cg_emitter *E, LLVMValueRef r, LLVMValueRef res, LLVMValueRef sign_of,
                          LLVMValueRef ops_finite, LLVMValueRef *gt, LLVMValueRef *lt) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(r);
  LLVMValueRef zero = LLVMConstReal(ft, 0.0);
  LLVMValueRef rp = LLVMBuildFCmp(B, LLVMRealOGT, res, zero, "");
  LLVMValueRef rn = LLVMBuildFCmp(B, LLVMRealOLT, res, zero, "");
  if (sign_of) {
    LLVMValueRef sneg = LLVMBuildFCmp(B, LLVMRealOLT, sign_of, zero, "");
    LLVMValueRef t = LLVMBuildSelect(B, sneg, rn, rp, "");
    rn = LLVMBuildSelect(B, sneg, rp, rn, "");
    rp = t;
  }
  LLVMValueRef inf = LLVMBuildFCmp(B, LLVMRealOEQ, cg_intr1(E, "llvm.fabs", r), LLVMConstReal(ft, __builtin_inf()), "");
  LLVMValueRef ovf = LLVMBuildAnd(B, inf, ops_finite, "");
  LLVMValueRef rpos = LLVMBuildFCmp(B, LLVMRealOGT, r, zero, "");
  *gt = LLVMBuildSelect(B, ovf, LLVMBuildNot(B, rpos, ""), rp, "");
  *lt = LLVMBuildSelect(B, ovf, rpos, rn, "");
}

static LLVMValueRef is_finite(cg_emitter *E, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  return LLVMBuildFCmp(E->b, LLVMRealOLT, cg_intr1(E, "llvm.fabs", x), LLVMConstReal(ft, __builtin_inf()), "");
}

/* a / b with a directed rounding; also sqrt (op 's', b NULL) and rcp
 * (a NULL: 1/b). */
static LLVMValueRef directed(cg_emitter *E, const ir_instr *i, char op, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = E->b;
  LLVMValueRef r, res, sign_of = NULL, fin, gt, lt;
  LLVMTypeRef ft = LLVMTypeOf(a ? a : b);
  switch (op) {
  case '/': /* a/b - q has the sign of fma(-q, b, a) * sign(b) */
    if (!a) a = LLVMConstReal(ft, 1.0);
    r = LLVMBuildFDiv(B, a, b, "");
    res = cg_intr3(E, "llvm.fma", LLVMBuildFNeg(B, r, ""), b, a);
    sign_of = b;
    fin = LLVMBuildAnd(B, is_finite(E, a), LLVMBuildFCmp(B, LLVMRealONE, b, LLVMConstReal(ft, 0.0), ""), "");
    break;
  default: /* sqrt: sqrt(a) - s has the sign of fma(-s, s, a) */
    r = cg_intr1(E, "llvm.sqrt", a);
    res = cg_intr3(E, "llvm.fma", LLVMBuildFNeg(B, r, ""), r, a);
    fin = LLVMConstInt(E->c->i1, 0, 0);
    break;
  }
  residual_sign(E, r, res, sign_of, fin, &gt, &lt);
  return cg_step_ulp(E, i, r, gt, lt);
}

/* ---- directed rounding by the mode register -------------------------------
 * add/sub/mul/fma of f32 and f64 with .rz/.rm/.rp (PTX ISA 9.7.3.1-9.7.3.6)
 * are the one hardware instruction under the wanted rounding: MODE.FP_ROUND
 * (hwreg 1) bits 1:0 round f32, bits 3:2 f64 and f16; 0 nearest even, 1
 * toward +inf, 2 toward -inf, 3 toward zero (the AMDGPU ISA manuals' MODE
 * register; LLVM's SIDefines.h FP_ROUND_*).  Every kernel starts in
 * round-to-nearest (the kernel descriptor's FLOAT_ROUND_MODE, which LLVM
 * leaves 0), so the mode goes back to 0 after the instruction.  The ROCm
 * device libraries do the same (ocml's fma_rtn etc.: set the round mode,
 * the plain op, set it back).
 * All in one inline asm, not llvm.amdgcn.s.setreg around an llvm.fma: LLVM
 * orders plain FP operations only by their data, so the SelectionDAG
 * scheduler may place another (round-to-nearest) operation of the block
 * between the two setregs, and IR passes may fold the op by its constants
 * assuming round-to-nearest (x + -0 -> x is wrong under .rm for x = +0).
 * The asm is opaque and indivisible.  Its s_nops: the hazard recognizer
 * does not look inside inline asm, so the two wait states the ISA asks
 * between an s_setreg and a later s_setreg/s_getreg of the same register
 * are explicit before the first and after the last setreg (LLVM's own
 * MODE setregs: f32 division's denormal switch, fptrunc.round), and so is
 * one between a VALU op and an s_setreg, where LLVM puts one on gfx9 (it
 * puts none between an s_setreg of the round mode and a VALU op).  The asm has no side effect (it restores MODE):
 * LLVM may move, merge or drop it like the op itself. */
typedef struct rnd_insn {
  char op;              /* '+', '-', '*', 'f' (fma) */
  const char *f32, *f64; /* the VOP3 form, $0 = $1 op $2 [op $3] */
} rnd_insn;
static const rnd_insn rnd_insns[] = {
    {'+', "v_add_f32_e64 $0, $1, $2", "v_add_f64 $0, $1, $2"},
    {'-', "v_sub_f32_e64 $0, $1, $2", "v_add_f64 $0, $1, -$2"},
    {'*', "v_mul_f32_e64 $0, $1, $2", "v_mul_f64 $0, $1, $2"},
    {'f', "v_fma_f32 $0, $1, $2, $3", "v_fma_f64 $0, $1, $2, $3"},
};

static unsigned hw_round_mode(ir_rnd r) {
  switch (r) {
  case IR_RND_RP: return 1;
  case IR_RND_RM: return 2;
  case IR_RND_RZ: return 3;
  default: return 0;
  }
}

/* i's op ('+', '-', '*', 'f') on n operands of f32 or f64 with i's
 * directed rounding (is_rnd_directed(i)). */
static LLVMValueRef mode_rounded(cg_emitter *E, const ir_instr *i, char op, LLVMValueRef *ops, unsigned n) {
  LLVMTypeRef t = LLVMTypeOf(ops[0]);
  bool f64 = t == E->c->f64;
  const char *insn = NULL;
  for (size_t k = 0; k < sizeof rnd_insns / sizeof rnd_insns[0]; k++)
    if (rnd_insns[k].op == op) insn = f64 ? rnd_insns[k].f64 : rnd_insns[k].f32;
  char text[256];
  unsigned off = f64 ? 2 : 0;
  snprintf(text, sizeof text,
           "s_nop 1\n\ts_setreg_imm32_b32 hwreg(1, %u, 2), %u\n\t%s\n\t"
           "s_nop 1\n\ts_setreg_imm32_b32 hwreg(1, %u, 2), 0\n\ts_nop 1",
           off, hw_round_mode((ir_rnd)i->mods.rnd), insn, off);
  const char *cons = n == 3 ? "=v,v,v,v" : "=v,v,v";
  LLVMTypeRef params[3] = {t, t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, n, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), (char *)cons, strlen(cons), 0, 0,
                                     LLVMInlineAsmDialectATT, 0);
  LLVMValueRef call = LLVMBuildCall2(E->b, fty, fn, ops, n, "");
  /* a pure function of its operands: nounwind, memory(none) */
  static const char *const attrs[] = {"nounwind", "memory"}; /* memory(none) is 0 */
  for (unsigned k = 0; k < 2; k++) {
    unsigned kind = LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k]));
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(E->c->ctx, kind, 0));
  }
  return call;
}

static LLVMValueRef fp_flags(LLVMValueRef v, const ir_instr *i) {
  if (i->mods.approx && LLVMIsAInstruction(v)) LLVMSetFastMathFlags(v, LLVMFastMathApproxFunc | LLVMFastMathAllowReciprocal);
  return v;
}

/* ---- arithmetic (9.7.3, 9.7.4) ------------------------------------------------ */

/* .rz/.rm/.rp of f32 or f64: by the mode register (mode_rounded) or by the
 * residual (directed) */
static bool directed_rounding(const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  return is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64);
}

/* add, sub */
LLVMValueRef cg_float_add(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  bool add = i->op == ir_op_add;
  LLVMValueRef r;
  if (directed_rounding(i))
    r = mode_rounded(E, i, add ? '+' : '-', (LLVMValueRef[]){a, b}, 2);
  else if (!cg_fp_round_ok(E, i)) return NULL;
  else r = add ? LLVMBuildFAdd(B, a, b, "") : LLVMBuildFSub(B, a, b, "");
  return i->mods.sat ? cg_sat01(E, r) : r;
}

LLVMValueRef cg_float_mul(cg_emitter *E, const ir_instr *i) {
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  LLVMValueRef r;
  if (directed_rounding(i)) r = mode_rounded(E, i, '*', (LLVMValueRef[]){a, b}, 2);
  else if (!cg_fp_round_ok(E, i)) return NULL;
  else r = LLVMBuildFMul(E->b, a, b, "");
  return i->mods.sat ? cg_sat01(E, r) : r;
}

/* fma, and mad of floats: mad.f32 with a rounding modifier and fma are
 * fused (9.7.3.6) */
LLVMValueRef cg_float_fma(cg_emitter *E, const ir_instr *i) {
  if (directed_rounding(i)) {
    LLVMValueRef r = mode_rounded(E, i, 'f', (LLVMValueRef[]){cg_op(E, i, 0), cg_op(E, i, 1), cg_op(E, i, 2)}, 3);
    return i->mods.sat ? cg_sat01(E, r) : r;
  }
  if (!cg_fp_round_ok(E, i)) return NULL;
  LLVMValueRef r = cg_intr3(E, "llvm.fma", cg_op(E, i, 0), cg_op(E, i, 1), cg_op(E, i, 2));
  return i->mods.sat ? cg_sat01(E, r) : r;
}

/* div (rem has no float form) */
LLVMValueRef cg_float_div(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  if (i->op == ir_op_rem) return cg_no_form(E, i);
  if (directed_rounding(i)) return directed(E, i, '/', a, b);
  if (!i->mods.approx && !i->mods.full && !cg_fp_round_ok(E, i)) return NULL;
  LLVMValueRef r = LLVMBuildFDiv(E->b, a, b, "");
  if (i->mods.approx || i->mods.full) {
    /* div.approx/div.full.f32: within 2 ulp (9.7.3.8): !fpmath 2.5 */
    LLVMValueRef md = LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, (LLVMMetadataRef[]){
      LLVMValueAsMetadata(LLVMConstReal(c->f32, 2.5))}, 1));
    LLVMSetMetadata(r, LLVMGetMDKindIDInContext(c->ctx, "fpmath", 6), md);
  }
  return r;
}

LLVMValueRef cg_float_abs(cg_emitter *E, const ir_instr *i) { return cg_intr1(E, "llvm.fabs", cg_op(E, i, 0)); }

LLVMValueRef cg_float_neg(cg_emitter *E, const ir_instr *i) { return LLVMBuildFNeg(E->b, cg_op(E, i, 0), ""); }

/* min, max (9.7.3.10/11): minNum/maxNum (.NaN: a NaN input gives NaN), over
 * two or three inputs; .xorsign.abs: of the magnitudes, the result's sign
 * the xor of the inputs' signs (NaN results keep theirs); .relu: a
 * negative result becomes +0. */
LLVMValueRef cg_float_minmax(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  if (i->nsrc < 2 || i->nsrc > 3) return cg_no_form(E, i);
  if (i->mods.xorsign != i->mods.absmod) return cg_no_form(E, i);   /* PTX has .xorsign only as .xorsign.abs */
  bool mn = i->op == ir_op_min;
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

LLVMValueRef cg_float_copysign(cg_emitter *E, const ir_instr *i) {
  if (!is_float((ir_type)i->type) && !is_fvec((ir_type)i->type)) return cg_no_form(E, i);
  return cg_intr2(E, "llvm.copysign", cg_op(E, i, 1), cg_op(E, i, 0));
}

/* testp (9.7.3.1) */
LLVMValueRef cg_float_testp(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
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

/* ---- reciprocals, roots, transcendentals (9.7.3.13-22) ---------------------- */

/* rcp, sqrt, rsqrt */
LLVMValueRef cg_float_rcp_sqrt(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  if (!is_float(t) && !is_fvec(t)) return cg_no_form(E, i);
  LLVMValueRef a = cg_op(E, i, 0);
  bool approx = i->mods.approx;
  if (!approx && directed_rounding(i) && i->op != ir_op_rsqrt)
    return directed(E, i, i->op == ir_op_rcp ? '/' : 's', i->op == ir_op_rcp ? NULL : a, i->op == ir_op_rcp ? a : NULL);
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
    return fp_flags(LLVMBuildFDiv(B, LLVMConstReal(lt, 1.0), a, ""), i);
  }
  if (i->op == ir_op_sqrt) return fp_flags(cg_intr1(E, "llvm.sqrt", a), i);
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
  return cg_no_form(E, i);
}

/* sin, cos (9.7.3.18-19, approx): v_sin_f32/v_cos_f32 take revolutions,
 * x / 2pi */
LLVMValueRef cg_float_sincos(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  if (i->type != ir_type_f32) return cg_no_form(E, i);
  LLVMValueRef a = LLVMBuildFMul(E->b, cg_op(E, i, 0), LLVMConstReal(c->f32, 0.15915494309189535), "");
  return cg_intr1(E, i->op == ir_op_sin ? "llvm.amdgcn.sin" : "llvm.amdgcn.cos", a);
}

/* lg2, ex2 */
LLVMValueRef cg_float_lg2_ex2(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  if (t != ir_type_f32 && t != ir_type_f16) return cg_no_form(E, i);
  /* ex2/lg2.approx.ftz.f32 (PTX ISA, Floating-Point Instructions: ex2,
   * lg2) flush subnormal inputs and results to sign-preserving zero, which
   * is what v_exp_f32 / v_log_f32 do by themselves (1 ulp in the normal
   * range, as llvm.exp2/log2 use them); LLVM's llvm.exp2/log2 add a
   * rescaling around them for subnormal results/inputs unless the whole
   * function flushes f32 subnormals (nvcc's precise expf uses
   * ex2.approx.ftz.f32 also without -ftz). */
  if (t == ir_type_f32 && i->mods.ftz && i->mods.approx)
    return cg_intr1(E, i->op == ir_op_lg2 ? "llvm.amdgcn.log" : "llvm.amdgcn.exp2", cg_op(E, i, 0));
  return fp_flags(cg_intr1(E, i->op == ir_op_lg2 ? "llvm.log2" : "llvm.exp2", cg_op(E, i, 0)), i);
}

/* tanh.approx.f32 (9.7.3.22: max relative error 2^-11):
 * 1 - 2/(2^(2x log2 e) + 1), which saturates to +-1 through inf and 0;
 * near 0, where that cancels, x - x^3/3 (relative error < 2^-14 for
 * |x| < 1/8). */
LLVMValueRef cg_float_tanh(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  if (i->type != ir_type_f32) return cg_no_form(E, i);
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
