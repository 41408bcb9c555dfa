/* codegen/cg_int.c: integer arithmetic and bit operations (PTX ISA 9.7.1,
 * 9.7.8), comparisons and selects (9.7.7), with PTX's results where LLVM
 * would give poison (shifts by the width or more, bfe/bfi positions).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* mul.hi / mul.wide / mad.hi on N-bit integers. */
static LLVMValueRef mul_ext(cg_emitter *E, LLVMValueRef a, LLVMValueRef b, bool sgn, unsigned n, bool hi) {
  LLVMTypeRef w = LLVMIntTypeInContext(E->c->ctx, 2 * n);
  LLVMValueRef x = sgn ? LLVMBuildSExt(E->b, a, w, "") : LLVMBuildZExt(E->b, a, w, "");
  LLVMValueRef y = sgn ? LLVMBuildSExt(E->b, b, w, "") : LLVMBuildZExt(E->b, b, w, "");
  LLVMValueRef p = LLVMBuildMul(E->b, x, y, "");
  if (!hi) return p;
  return LLVMBuildTrunc(E->b, LLVMBuildLShr(E->b, p, kint(w, n), ""), LLVMTypeOf(a), "");
}

static LLVMValueRef fcmp_or_icmp(cg_emitter *E, const ir_instr *i, ir_type t, LLVMValueRef a, LLVMValueRef b) {
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
static LLVMValueRef splat2(cg_emitter *E, LLVMValueRef x) {
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(x), 2));
  v = LLVMBuildInsertElement(E->b, v, x, E->c->i32_0, "");
  return LLVMBuildInsertElement(E->b, v, x, E->c->i32_1, "");
}

static LLVMValueRef boolop(cg_emitter *E, const ir_instr *i, LLVMValueRef p, LLVMValueRef q) {
  switch ((ir_boolop)i->mods.boolop) {
  case IR_BOOL_AND: return LLVMBuildAnd(E->b, p, q, "");
  case IR_BOOL_OR: return LLVMBuildOr(E->b, p, q, "");
  case IR_BOOL_XOR: return LLVMBuildXor(E->b, p, q, "");
  case IR_BOOL_NONE: break;
  }
  return p;
}

/* shl, shr with PTX semantics: amounts >= the width give 0 (shl, shr.u) or
 * the sign (shr.s), where LLVM would give poison. */
LLVMValueRef cg_int_shift(cg_emitter *E, const ir_instr *i) {
  bool left = i->op == ir_op_shl;
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

/* ---- moves (9.7.9.1) ------------------------------------------------------ */

/* mov.b64 %rd, {%r1, %r2}: the parts from the low bits up */
LLVMValueRef cg_int_pack(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  LLVMTypeRef lt = cg_ltype(E, (ir_type)i->type);
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

/* mov.b64 {%r1, %r2}, %rd: each result its part, from the low bits up */
void cg_int_unpack(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
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
}

/* ---- arithmetic (9.7.1, 9.7.2) --------------------------------------------- */

/* add.cc, sub.cc, mad.cc: the result and the carry out, the unsigned
 * overflow of the add; for sub.cc the carry-out of a + ~b + 1, i.e. no
 * borrow (emu/emu_alu.c's head: NVIDIA's CC.CF, which addc/madc after a
 * sub.cc read). */
static void add_cc(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  if (i->op == ir_op_mad) {
    a = i->mods.mulmode == IR_MUL_HI ? mul_ext(E, a, b, is_signed((ir_type)i->type), cg_type_bits(t), true)
                                     : LLVMBuildMul(B, a, b, "");
    b = cg_op(E, i, 2);
  }
  LLVMValueRef r = cg_intr2(E, i->op == ir_op_sub ? "llvm.usub.with.overflow" : "llvm.uadd.with.overflow", a, b);
  cg_set_dst(E, i, 0, LLVMBuildExtractValue(B, r, 0, ""), false);
  LLVMValueRef ov = LLVMBuildExtractValue(B, r, 1, "");
  cg_set_dst(E, i, i->ndst - 1, i->op == ir_op_sub ? LLVMBuildNot(B, ov, "") : ov, false);
}

/* add, sub (.sat: signed saturation); .cc stores both its results (NULL) */
LLVMValueRef cg_int_add(cg_emitter *E, const ir_instr *i) {
  if (i->mods.cc) {
    add_cc(E, i);
    return NULL;
  }
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  bool add = i->op == ir_op_add;
  if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
  if (i->mods.sat) return cg_intr2(E, add ? "llvm.sadd.sat" : "llvm.ssub.sat", a, b);
  return add ? LLVMBuildAdd(B, a, b, "") : LLVMBuildSub(B, a, b, "");
}

/* addc, subc, madc: with the carry in (src[2], madc src[3]); .cc also
 * stores the carry out */
void cg_int_addc(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = cg_ltype(E, (ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  unsigned cin = i->op == ir_op_madc ? 3 : 2;
  if (i->op == ir_op_madc) {
    a = i->mods.mulmode == IR_MUL_HI ? mul_ext(E, a, b, is_signed((ir_type)i->type), cg_type_bits(t), true)
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
}

/* mul.lo, mul.hi, mul.wide */
LLVMValueRef cg_int_mul(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  bool s = is_signed(t);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
  switch ((ir_mulmode)i->mods.mulmode) {
  case IR_MUL_HI: return mul_ext(E, a, b, s, cg_type_bits(lt), true);
  case IR_MUL_WIDE: return mul_ext(E, a, b, s, cg_type_bits(lt), false);
  case IR_MUL_LO:
  case IR_MUL_NONE: return LLVMBuildMul(B, a, b, "");
  }
  return cg_no_form(E, i);
}

/* mad.lo, mad.hi (.sat), mad.wide; .cc stores both its results (NULL) */
LLVMValueRef cg_int_mad(cg_emitter *E, const ir_instr *i) {
  if (i->mods.cc) {
    add_cc(E, i);
    return NULL;
  }
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  bool s = is_signed(t);
  if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  switch ((ir_mulmode)i->mods.mulmode) {
  case IR_MUL_HI: {
    LLVMValueRef r = mul_ext(E, a, b, s, cg_type_bits(lt), true);
    LLVMValueRef x = cg_op(E, i, 2);
    return i->mods.sat ? cg_intr2(E, "llvm.sadd.sat", r, x) : LLVMBuildAdd(B, r, x, "");
  }
  case IR_MUL_WIDE: {
    LLVMValueRef r = mul_ext(E, a, b, s, cg_type_bits(lt), false);
    return LLVMBuildAdd(B, r, cg_coerce_ext(E, cg_val(E, i, i->src[2]), LLVMTypeOf(r), s), "");
  }
  case IR_MUL_LO:
  case IR_MUL_NONE: return LLVMBuildAdd(B, LLVMBuildMul(B, a, b, ""), cg_op(E, i, 2), "");
  }
  return cg_no_form(E, i);
}

/* mul24, mad24: of the low 24 bits (sign-extended for .s32) */
LLVMValueRef cg_int_mul24(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  bool s = is_signed(t);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  LLVMValueRef k8 = kint(lt, 8);
  a = s ? LLVMBuildAShr(B, LLVMBuildShl(B, a, k8, ""), k8, "") : LLVMBuildAnd(B, a, kint(lt, 0xffffff), "");
  b = s ? LLVMBuildAShr(B, LLVMBuildShl(B, b, k8, ""), k8, "") : LLVMBuildAnd(B, b, kint(lt, 0xffffff), "");
  LLVMValueRef r;
  if (i->mods.mulmode == IR_MUL_HI) {
    /* .hi: bits 47..16 of the 48-bit product (9.7.1.5) */
    LLVMValueRef w = mul_ext(E, a, b, s, cg_type_bits(lt), false);
    r = LLVMBuildTrunc(B, LLVMBuildLShr(B, w, kint(LLVMTypeOf(w), 16), ""), lt, "");
  } else {
    r = LLVMBuildMul(B, a, b, "");
  }
  return i->op == ir_op_mad24 ? LLVMBuildAdd(B, r, cg_op(E, i, 2), "") : r;
}

/* sad: c + |a - b| */
LLVMValueRef cg_int_sad(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  bool s = is_signed((ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  LLVMValueRef d = LLVMBuildSub(B, cg_intr2(E, s ? "llvm.smax" : "llvm.umax", a, b),
                                cg_intr2(E, s ? "llvm.smin" : "llvm.umin", a, b), "");
  return LLVMBuildAdd(B, d, cg_op(E, i, 2), "");
}

/* div, rem */
LLVMValueRef cg_int_div(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  bool s = is_signed(t);
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
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

LLVMValueRef cg_int_abs(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  if (ir_type_kind_of((ir_type)i->type) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
  LLVMValueRef a = cg_op(E, i, 0);
  LLVMValueRef args[2] = {a, LLVMConstInt(c->i1, 0, 0)};
  LLVMTypeRef at = LLVMTypeOf(a);
  return cg_intrinsic(c, "llvm.abs", &at, 1, args, 2, false);
}

LLVMValueRef cg_int_neg(cg_emitter *E, const ir_instr *i) {
  if (ir_type_kind_of((ir_type)i->type) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
  return LLVMBuildNeg(E->b, cg_op(E, i, 0), "");
}

/* min, max (9.7.1.10/11): two or three inputs; .relu (s32, s16x2) clamps
 * below at 0 */
LLVMValueRef cg_int_minmax(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  bool s = is_signed(t);
  if (i->nsrc < 2 || i->nsrc > 3 || ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) return cg_no_form(E, i);
  if (i->mods.absmod || i->mods.xorsign || (i->mods.relu && !s)) return cg_no_form(E, i);
  bool mn = i->op == ir_op_min;
  const char *in = mn ? (s ? "llvm.smin" : "llvm.umin") : (s ? "llvm.smax" : "llvm.umax");
  LLVMValueRef r = cg_intr2(E, in, cg_op(E, i, 0), cg_op(E, i, 1));
  if (i->nsrc == 3) r = cg_intr2(E, in, r, cg_op(E, i, 2));
  if (i->mods.relu) r = cg_intr2(E, "llvm.smax", r, LLVMConstNull(LLVMTypeOf(r)));
  return r;
}

/* ---- bits (9.7.1.14-24) ------------------------------------------------------ */

LLVMValueRef cg_int_popc(cg_emitter *E, const ir_instr *i) {
  return cg_coerce(E, cg_intr1(E, "llvm.ctpop", cg_op(E, i, 0)), E->c->i32);
}

LLVMValueRef cg_int_clz(cg_emitter *E, const ir_instr *i) {
  LLVMValueRef a = cg_op(E, i, 0);
  return cg_coerce(E, cg_intr2(E, "llvm.ctlz", a, LLVMConstInt(E->c->i1, 0, 0)), E->c->i32);
}

/* bfind (9.7.1.16): the position of the most significant non-sign bit, or
 * 0xffffffff; .shiftamt: the left shift that brings it to the msb. */
LLVMValueRef cg_int_bfind(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  LLVMValueRef a = cg_op(E, i, 0);
  unsigned n = cg_type_bits(lt);
  if (is_signed(t)) a = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, kint(lt, 0), ""), LLVMBuildNot(B, a, ""), a, "");
  LLVMValueRef lz = cg_coerce(E, cg_intr2(E, "llvm.ctlz", a, LLVMConstInt(c->i1, 0, 0)), c->i32);
  LLVMValueRef none = LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 0), "");
  LLVMValueRef r = i->mods.bfind_shiftamt ? lz : LLVMBuildSub(B, kint(c->i32, n - 1), lz, "");
  return LLVMBuildSelect(B, none, kint(c->i32, 0xffffffff), r, "");
}

LLVMValueRef cg_int_brev(cg_emitter *E, const ir_instr *i) { return cg_intr1(E, "llvm.bitreverse", cg_op(E, i, 0)); }

/* bmsk (9.7.1.22): b ones from bit a; szext (9.7.1.21): the low b bits of
 * a, sign- or zero-extended.  .clamp limits the counts to 32, .wrap takes
 * them mod 32. */
LLVMValueRef cg_int_bmsk(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
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
  if (!is_signed((ir_type)i->type)) return LLVMBuildAnd(B, a, ones, "");
  /* sign: shift the field to the top and back; b == 0 gives 0 */
  LLVMValueRef sh = LLVMBuildSub(B, k32, LLVMBuildSelect(B, bfull, k32, LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, b, c->i32_0, ""), k32, b, ""), ""), "");
  LLVMValueRef r = LLVMBuildAShr(B, LLVMBuildShl(B, a, sh, ""), sh, "");
  return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, b, c->i32_0, ""), c->i32_0, r, "");
}

/* dp4a (9.7.1.23): d = c + sum of the products of the four byte pairs. */
LLVMValueRef cg_int_dp4a(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
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

/* dp2a (9.7.1.24): d = c + a.h0 * b.b(k) + a.h1 * b.b(k+1), k = 0 (.lo) or
 * 2 (.hi) */
LLVMValueRef cg_int_dp2a(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
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

/* ---- comparisons and selects (9.7.6) ---------------------------------------- */

/* setp: p = a cmp b, q = !p, each combined with c (BoolOp); setp.f16x2
 * p|q: p from the low halves, q from the high ones, each combined with c:
 * p = BoolOp(t[0], c), q = BoolOp(t[1], c) */
void cg_int_setp(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMValueRef a = cg_op(E, i, 0), b = cg_op(E, i, 1);
  if (is_fvec(t)) {
    LLVMValueRef v = fcmp_or_icmp(E, i, ir_type_f32, a, b);
    if (i->nsrc > 2) v = boolop(E, i, v, splat2(E, cg_op_as(E, i, 2, c->i1)));
    cg_set_dst(E, i, 0, LLVMBuildExtractElement(B, v, c->i32_0, ""), false);
    cg_set_dst(E, i, 1, LLVMBuildExtractElement(B, v, c->i32_1, ""), false);
    return;
  }
  LLVMValueRef p = fcmp_or_icmp(E, i, t, a, b);
  LLVMValueRef q = LLVMBuildNot(B, p, "");
  if (i->nsrc > 2) {
    LLVMValueRef cc = cg_op_as(E, i, 2, c->i1);
    p = boolop(E, i, p, cc);
    q = boolop(E, i, q, cc);
  }
  cg_set_dst(E, i, 0, p, false);
  cg_set_dst(E, i, 1, q, false);
}

/* set: the comparison as all ones (integers) or 1.0 (floats) */
LLVMValueRef cg_int_set(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  ir_type st = i->type2 ? (ir_type)i->type2 : t;
  LLVMTypeRef sl = cg_ltype(E, st);
  bool packed = is_fvec(st);
  /* A packed source compares per half (fcmp on <2 x half>; f32 stands
   * for "a float" in fcmp_or_icmp) and gives a result per half: 1.0 in
   * an .f16x2/.bf16x2 destination, 0xffff in a .u32/.s32 one (PTX ISA,
   * half precision set; emu/emu_alu.c h_set). */
  LLVMValueRef p = fcmp_or_icmp(E, i, packed ? ir_type_f32 : st, cg_op_as(E, i, 0, sl), cg_op_as(E, i, 1, sl));
  if (i->nsrc > 2) p = boolop(E, i, p, packed ? splat2(E, cg_op_as(E, i, 2, c->i1)) : cg_op_as(E, i, 2, c->i1));
  if (packed && is_fvec(t)) return LLVMBuildSelect(B, p, fconst(lt, 1.0), fconst(lt, 0.0), "");
  if (packed) {
    LLVMTypeRef h2 = LLVMVectorType(c->i16, 2);
    LLVMValueRef r = LLVMBuildSelect(B, p, LLVMConstAllOnes(h2), LLVMConstNull(h2), "");
    return cg_coerce(E, LLVMBuildBitCast(B, r, c->i32, ""), lt);
  }
  if (is_float(t) || is_fvec(t)) return LLVMBuildSelect(B, p, LLVMConstReal(lt, 1.0), LLVMConstReal(lt, 0.0), "");
  return LLVMBuildSelect(B, p, kint(lt, ~0ull), kint(lt, 0), "");
}

LLVMValueRef cg_int_selp(cg_emitter *E, const ir_instr *i) {
  return LLVMBuildSelect(E->b, cg_op_as(E, i, 2, E->c->i1), cg_op(E, i, 0), cg_op(E, i, 1), "");
}

/* slct: a if c >= 0, else b */
LLVMValueRef cg_int_slct(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  ir_type ct = i->type2 ? (ir_type)i->type2 : ir_type_s32;
  LLVMValueRef cc = cg_op_as(E, i, 2, cg_ltype(E, ct));
  LLVMValueRef ge = is_float(ct) ? LLVMBuildFCmp(B, LLVMRealOGE, cc, LLVMConstReal(LLVMTypeOf(cc), 0.0), "")
                                 : LLVMBuildICmp(B, LLVMIntSGE, cc, kint(LLVMTypeOf(cc), 0), "");
  return LLVMBuildSelect(B, ge, cg_op(E, i, 0), cg_op(E, i, 1), "");
}

/* ---- logic (9.7.8) ------------------------------------------------------------ */

/* and, or, xor, not, cnot (of integers and predicates) */
LLVMValueRef cg_int_logic(cg_emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  if (i->op == ir_op_and) return LLVMBuildAnd(B, cg_op(E, i, 0), cg_op(E, i, 1), "");
  if (i->op == ir_op_or) return LLVMBuildOr(B, cg_op(E, i, 0), cg_op(E, i, 1), "");
  if (i->op == ir_op_xor) return LLVMBuildXor(B, cg_op(E, i, 0), cg_op(E, i, 1), "");
  if (i->op == ir_op_not) return LLVMBuildNot(B, cg_op(E, i, 0), "");
  LLVMTypeRef lt = cg_ltype(E, (ir_type)i->type);
  LLVMValueRef a = cg_op(E, i, 0);
  return LLVMBuildZExt(B, LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 0), ""), lt, "");
}

/* shf (9.7.8.7): shf.l d = high word of {b:a} << n; shf.r d = low word of
 * {b:a} >> n; .wrap takes n mod 32 (llvm.fshl/fshr do), .clamp min(n,32). */
LLVMValueRef cg_int_shf(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  LLVMValueRef a = cg_op_as(E, i, 0, c->i32), b = cg_op_as(E, i, 1, c->i32), n = cg_op_as(E, i, 2, c->i32);
  bool left = i->mods.shf_left;
  LLVMValueRef r = cg_intr3(E, left ? "llvm.fshl" : "llvm.fshr", b, a, n);
  if (i->mods.shf_clamp) {
    LLVMValueRef big = LLVMBuildICmp(B, LLVMIntUGE, n, kint(c->i32, 32), "");
    r = LLVMBuildSelect(B, big, left ? a : b, r, "");
  }
  return r;
}
