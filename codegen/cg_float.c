/* codegen/cg_float.c: float arithmetic (PTX ISA 9.7.3, 9.7.4) and its
 * rounding: .sat, directed rounding by the mode register (add, sub, mul,
 * fma) or by a residual and one ulp of stepping (div, rcp, sqrt).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* The f32 value x flushed to sign-preserving zero when subnormal (.ftz on
 * one instruction in a function that keeps subnormals). */
LLVMValueRef cg_sat01(cg_emitter *E, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  /* PTX .sat: NaN -> 0, then clamp to [0, 1]; maxnum(NaN, 0) = 0. */
  x = cg_intr2(E, "llvm.maxnum", x, fconst(t, 0.0));
  return cg_intr2(E, "llvm.minnum", x, fconst(t, 1.0));
}

/* Float op with PTX rounding: rn (or none) is the plain IEEE op; rz/rm/rp
 * are done by cg_directed() where it applies, else reported. */
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
LLVMValueRef cg_directed(cg_emitter *E, const ir_instr *i, char op, LLVMValueRef a, LLVMValueRef b) {
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
LLVMValueRef cg_mode_rounded(cg_emitter *E, const ir_instr *i, char op, LLVMValueRef *ops, unsigned n) {
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

LLVMValueRef cg_fp_flags(LLVMValueRef v, const ir_instr *i) {
  if (i->mods.approx && LLVMIsAInstruction(v)) LLVMSetFastMathFlags(v, LLVMFastMathApproxFunc | LLVMFastMathAllowReciprocal);
  return v;
}
