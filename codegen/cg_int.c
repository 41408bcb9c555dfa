/* codegen/cg_int.c: integer arithmetic and bit operations (PTX ISA 9.7.1,
 * 9.7.8), comparisons and selects (9.7.7), with PTX's results where LLVM
 * would give poison (shifts by the width or more, bfe/bfi positions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* mul.hi / mul.wide / mad.hi on N-bit integers. */
LLVMValueRef cg_mul_ext(cg_emitter *E, LLVMValueRef a, LLVMValueRef b, bool sgn, unsigned n, bool hi) {
  LLVMTypeRef w = LLVMIntTypeInContext(E->c->ctx, 2 * n);
  LLVMValueRef x = sgn ? LLVMBuildSExt(E->b, a, w, "") : LLVMBuildZExt(E->b, a, w, "");
  LLVMValueRef y = sgn ? LLVMBuildSExt(E->b, b, w, "") : LLVMBuildZExt(E->b, b, w, "");
  LLVMValueRef p = LLVMBuildMul(E->b, x, y, "");
  if (!hi) return p;
  return LLVMBuildTrunc(E->b, LLVMBuildLShr(E->b, p, kint(w, n), ""), LLVMTypeOf(a), "");
}

LLVMValueRef cg_fcmp_or_icmp(cg_emitter *E, const ir_instr *i, ir_type t, LLVMValueRef a, LLVMValueRef b) {
  bool f = is_float(t), s = is_signed(t);
  LLVMRealPredicate rp = LLVMRealOEQ;
  LLVMIntPredicate ip = LLVMIntEQ;
  switch ((ir_cmp)i->mods.cmp) {
  case IR_CMP_EQ: rp = LLVMRealOEQ; ip = LLVMIntEQ; break;
  case IR_CMP_NE: rp = LLVMRealONE; ip = LLVMIntNE; break;
  case IR_CMP_LT: rp = LLVMRealOLT; ip = s ? LLVMIntSLT : LLVMIntULT; break;
  case IR_CMP_LE: rp = LLVMRealOLE; ip = s ? LLVMIntSLE : LLVMIntULE; break;
  case IR_CMP_GT: rp = LLVMRealOGT; ip = s ? LLVMIntSGT : LLVMIntUGT; break;
  case IR_CMP_GE: rp = LLVMRealOGE; ip = s ? LLVMIntSGE : LLVMIntUGE; break;
  case IR_CMP_LO: ip = LLVMIntULT; break;
  case IR_CMP_LS: ip = LLVMIntULE; break;
  case IR_CMP_HI: ip = LLVMIntUGT; break;
  case IR_CMP_HS: ip = LLVMIntUGE; break;
  case IR_CMP_EQU: rp = LLVMRealUEQ; break;
  case IR_CMP_NEU: rp = LLVMRealUNE; break;
  case IR_CMP_LTU: rp = LLVMRealULT; break;
  case IR_CMP_LEU: rp = LLVMRealULE; break;
  case IR_CMP_GTU: rp = LLVMRealUGT; break;
  case IR_CMP_GEU: rp = LLVMRealUGE; break;
  case IR_CMP_NUM: rp = LLVMRealORD; break;
  case IR_CMP_NAN: rp = LLVMRealUNO; break;
  case IR_CMP_NONE: cg_unsupported(E, i, "comparison without an operator"); break;
  }
  return f ? LLVMBuildFCmp(E->b, rp, a, b, "") : LLVMBuildICmp(E->b, ip, a, b, "");
}

/* <2 x T> with x in both elements. */
LLVMValueRef cg_splat2(cg_emitter *E, LLVMValueRef x) {
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(x), 2));
  v = LLVMBuildInsertElement(E->b, v, x, E->c->i32_0, "");
  return LLVMBuildInsertElement(E->b, v, x, E->c->i32_1, "");
}

LLVMValueRef cg_boolop(cg_emitter *E, const ir_instr *i, LLVMValueRef p, LLVMValueRef q) {
  switch ((ir_boolop)i->mods.boolop) {
  case IR_BOOL_AND: return LLVMBuildAnd(E->b, p, q, "");
  case IR_BOOL_OR: return LLVMBuildOr(E->b, p, q, "");
  case IR_BOOL_XOR: return LLVMBuildXor(E->b, p, q, "");
  case IR_BOOL_NONE: break;
  }
  return p;
}

/* Shifts with PTX semantics: amounts >= the width give 0 (shl, shr.u) or
 * the sign (shr.s), where LLVM would give poison. */
LLVMValueRef cg_int_shift(cg_emitter *E, const ir_instr *i, bool left) {
  LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
  unsigned n = cg_type_bits(t);
  LLVMValueRef a = cg_op(E, i, 0);
  LLVMValueRef s = cg_coerce(E, cg_val(E, i, i->src[1]), E->c->i32);
  LLVMValueRef big = LLVMBuildICmp(E->b, LLVMIntUGE, s, kint(E->c->i32, n), "");
  LLVMValueRef sc = LLVMBuildSelect(E->b, big, kint(E->c->i32, n - 1), s, "");
  sc = cg_coerce(E, sc, t);
  if (!left && is_signed((ir_type)i->type)) return LLVMBuildAShr(E->b, a, sc, "");
  LLVMValueRef r = left ? LLVMBuildShl(E->b, a, sc, "") : LLVMBuildLShr(E->b, a, sc, "");
  return LLVMBuildSelect(E->b, big, kint(t, 0), r, "");
}

/* bfe (9.7.1.19): pos = b & 0xff, len = c & 0xff; bits beyond the msb read
 * as the sign (signed) or zero. */
LLVMValueRef cg_int_bfe(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
  unsigned n = cg_type_bits(t);
  bool sgn = is_signed((ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0);
  LLVMValueRef pos = LLVMBuildAnd(B, cg_coerce(E, cg_val(E, i, i->src[1]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef len = LLVMBuildAnd(B, cg_coerce(E, cg_val(E, i, i->src[2]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef posbig = LLVMBuildICmp(B, LLVMIntUGE, pos, kint(E->c->i32, n), "");
  LLVMValueRef posc = cg_coerce(E, LLVMBuildSelect(B, posbig, kint(E->c->i32, n - 1), pos, ""), t);
  LLVMValueRef sh = sgn ? LLVMBuildAShr(B, a, posc, "") : LLVMBuildLShr(B, a, posc, "");
  if (!sgn) sh = LLVMBuildSelect(B, posbig, kint(t, 0), sh, "");
  LLVMValueRef lenbig = LLVMBuildICmp(B, LLVMIntUGE, len, kint(E->c->i32, n), "");
  LLVMValueRef lenzero = LLVMBuildICmp(B, LLVMIntEQ, len, E->c->i32_0, "");
  /* 0 < len < n: keep len bits (sign-extend from bit len-1 when signed) */
  LLVMValueRef lensafe = LLVMBuildSelect(B, LLVMBuildOr(B, lenbig, lenzero, ""), kint(E->c->i32, 1), len, "");
  LLVMValueRef k = cg_coerce(E, LLVMBuildSub(B, kint(E->c->i32, n), lensafe, ""), t);
  LLVMValueRef part = LLVMBuildShl(B, sh, k, "");
  part = sgn ? LLVMBuildAShr(B, part, k, "") : LLVMBuildLShr(B, part, k, "");
  LLVMValueRef r = LLVMBuildSelect(B, lenbig, sh, part, "");
  return LLVMBuildSelect(B, lenzero, kint(t, 0), r, "");
}

/* bfi (9.7.1.20): insert len bits of a into b at pos. */
LLVMValueRef cg_int_bfi(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
  unsigned n = cg_type_bits(t);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  LLVMValueRef pos = LLVMBuildAnd(B, cg_coerce(E, cg_val(E, i, i->src[2]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef len = LLVMBuildAnd(B, cg_coerce(E, cg_val(E, i, i->src[3]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef posbig = LLVMBuildICmp(B, LLVMIntUGE, pos, kint(E->c->i32, n), "");
  LLVMValueRef lenbig = LLVMBuildICmp(B, LLVMIntUGE, len, kint(E->c->i32, n), "");
  LLVMValueRef posc = cg_coerce(E, LLVMBuildSelect(B, posbig, E->c->i32_0, pos, ""), t);
  LLVMValueRef lenc = cg_coerce(E, LLVMBuildSelect(B, lenbig, E->c->i32_0, len, ""), t);
  LLVMValueRef ones = LLVMBuildSub(B, LLVMBuildShl(B, kint(t, 1), lenc, ""), kint(t, 1), "");
  ones = LLVMBuildSelect(B, lenbig, kint(t, ~0ull), ones, "");
  LLVMValueRef mask = LLVMBuildShl(B, ones, posc, "");
  LLVMValueRef r = LLVMBuildOr(B, LLVMBuildAnd(B, b, LLVMBuildNot(B, mask, ""), ""),
                               LLVMBuildAnd(B, LLVMBuildShl(B, a, posc, ""), mask, ""), "");
  return LLVMBuildSelect(B, posbig, b, r, "");
}

/* prmt (9.7.9.7), default mode: byte k of d is byte (c >> 4k) & 7 of {b, a}
 * (a the low word), or its sign replicated when bit 3 of the nibble is set.
 * A constant selector without sign bits is exactly v_perm_b32 with src0 = b,
 * src1 = a (llvm.amdgcn.perm); anything else is expanded bytewise. */
LLVMValueRef cg_int_prmt(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  cg_context *c = E->c;
  LLVMValueRef a = cg_op_as(E, i, 0, c->i32), b = cg_op_as(E, i, 1, c->i32);
  if (i->mods.prmt != IR_PRMT_NONE) {
    /* the modes' byte tables (9.7.9.7), d.b0 first, per c[1:0], as
     * v_perm selectors (byte k of the selector picks byte k of d) */
    static const uint8_t tab[7][4][4] = {
        [IR_PRMT_F4E] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},
        [IR_PRMT_B4E] = {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},
        [IR_PRMT_RC8] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
        [IR_PRMT_ECL] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},
        [IR_PRMT_ECR] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},
        [IR_PRMT_RC16] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},
    };
    uint32_t sels[4];
    for (unsigned k = 0; k < 4; k++) {
      const uint8_t *e = tab[i->mods.prmt][k];
      sels[k] = e[0] | e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
    }
    LLVMValueRef sel;
    if (i->src[2]->kind == IR_VAL_CONST) {
      sel = kint(c->i32, sels[i->src[2]->imm & 3]);
    } else {
      LLVMValueRef cc = LLVMBuildAnd(B, cg_op_as(E, i, 2, c->i32), kint(c->i32, 3), "");
      sel = kint(c->i32, sels[3]);
      for (int k = 2; k >= 0; k--)
        sel = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, cc, kint(c->i32, k), ""), kint(c->i32, sels[k]), sel, "");
    }
    LLVMValueRef args[3] = {b, a, sel};
    return cg_intrinsic(c, "llvm.amdgcn.perm", NULL, 0, args, 3, false);
  }
  const ir_value *sv = i->src[2];
  if (sv->kind == IR_VAL_CONST && !(sv->imm & 0x8888)) {
    uint32_t sel = 0;
    for (unsigned k = 0; k < 4; k++) sel |= (uint32_t)((sv->imm >> (4 * k)) & 7) << (8 * k);
    LLVMValueRef args[3] = {b, a, kint(c->i32, sel)};
    return cg_intrinsic(c, "llvm.amdgcn.perm", NULL, 0, args, 3, false);
  }
  LLVMValueRef s = cg_op_as(E, i, 2, c->i32);
  LLVMValueRef ab = LLVMBuildOr(B, LLVMBuildShl(B, LLVMBuildZExt(B, b, c->i64, ""), kint(c->i64, 32), ""),
                                LLVMBuildZExt(B, a, c->i64, ""), "");
  LLVMValueRef r = c->i32_0;
  for (unsigned k = 0; k < 4; k++) {
    LLVMValueRef nib = LLVMBuildAnd(B, LLVMBuildLShr(B, s, kint(c->i32, 4 * k), ""), kint(c->i32, 0xf), "");
    LLVMValueRef idx = LLVMBuildAnd(B, nib, kint(c->i32, 7), "");
    LLVMValueRef byte = LLVMBuildTrunc(B, LLVMBuildLShr(B, ab, LLVMBuildZExt(B, LLVMBuildShl(B, idx, kint(c->i32, 3), ""), c->i64, ""), ""), c->i8, "");
    LLVMValueRef sgn = LLVMBuildAShr(B, byte, kint(c->i8, 7), "");
    LLVMValueRef use_sgn = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, nib, kint(c->i32, 8), ""), c->i32_0, "");
    byte = LLVMBuildSelect(B, use_sgn, sgn, byte, "");
    r = LLVMBuildOr(B, r, LLVMBuildShl(B, LLVMBuildZExt(B, byte, c->i32, ""), kint(c->i32, 8 * k), ""), "");
  }
  return r;
}

/* lop3 (9.7.8.6): the sum of the minterms the LUT selects, with the
 * indices of PTX's ta = 0xF0, tb = 0xCC, tc = 0xAA; LLVM folds it and the
 * backend picks v_bfi/v_and_or/v_xor3 ... */
LLVMValueRef cg_int_lop3(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1), x = cg_op(E, i, 2);
  if (i->src[3]->kind != IR_VAL_CONST) {
    cg_unsupported(E, i, "the LUT must be an immediate");
    return LLVMGetUndef(t);
  }
  unsigned lut = (unsigned)i->src[3]->imm & 0xff;
  if (lut == 0) return kint(t, 0);
  if (lut == 0xff) return kint(t, ~0ull);
  /* the common tables nvcc emits, as the expressions instcombine and the
   * backend recognise (v_xor3, v_and_or, v_bfi ...) */
  switch (lut) {
  case 0x96: return LLVMBuildXor(B, LLVMBuildXor(B, a, b, ""), x, "");
  case 0x69: return LLVMBuildNot(B, LLVMBuildXor(B, LLVMBuildXor(B, a, b, ""), x, ""), "");
  case 0x80: return LLVMBuildAnd(B, LLVMBuildAnd(B, a, b, ""), x, "");
  case 0xfe: return LLVMBuildOr(B, LLVMBuildOr(B, a, b, ""), x, "");
  case 0xe8: /* majority */
    return LLVMBuildOr(B, LLVMBuildAnd(B, a, b, ""), LLVMBuildAnd(B, x, LLVMBuildOr(B, a, b, ""), ""), "");
  case 0xca: /* a ? b : c, bitwise */
    return LLVMBuildOr(B, LLVMBuildAnd(B, a, b, ""), LLVMBuildAnd(B, LLVMBuildNot(B, a, ""), x, ""), "");
  case 0xf8: return LLVMBuildOr(B, a, LLVMBuildAnd(B, b, x, ""), "");
  case 0xea: return LLVMBuildOr(B, LLVMBuildAnd(B, a, b, ""), x, "");
  case 0x78: return LLVMBuildXor(B, a, LLVMBuildAnd(B, b, x, ""), "");
  case 0x6a: return LLVMBuildXor(B, LLVMBuildAnd(B, a, b, ""), x, "");
  default: break;
  }
  LLVMValueRef na = LLVMBuildNot(B, a, ""), nb = LLVMBuildNot(B, b, ""), nx = LLVMBuildNot(B, x, "");
  LLVMValueRef r = NULL;
  for (unsigned k = 0; k < 8; k++) {
    if (!(lut >> k & 1)) continue;
    LLVMValueRef m = LLVMBuildAnd(B, LLVMBuildAnd(B, k & 4 ? a : na, k & 2 ? b : nb, ""), k & 1 ? x : nx, "");
    r = r ? LLVMBuildOr(B, r, m, "") : m;
  }
  return r;
}
