/* lower/lower_math.c: math that has no one-to-one AMD instruction, expanded
 * into plain IR ops that codegen maps directly (integer and bit ops, f64
 * round-to-nearest add/mul/fma, selects) and the emulator executes exactly
 * (docs/lowering.md, "Math").
 *
 *  - cvt to and from the small float formats (PTX ISA 9.7.9.21, 5.2.5):
 *    e4m3 e5m2 (fp8), e2m3 e3m2 (fp6), e2m1 (fp4), scalar and x2 pairs
 *    (`cvt.rn.satfinite.e4m3x2.f32 d, a, b`, `cvt.rn.f16x2.e4m3x2 d, a`,
 *    `cvt.rn.satfinite.e5m2x2.f16x2 d, a`), tf32 (`cvt.rna/.rn/.rz
 *    [.satfinite][.relu].tf32.f32`), f64 -> f16 with .rz/.rm/.rp, f64 ->
 *    bf16 in every mode, and
 *    `cvt.rn.satfinite.{f16,bf16}x2.f32`.  Every one goes through the source
 *    value's exact f64 bit pattern, then one correctly rounded encoding into
 *    the destination format done on the integer bits (enc_from_f64): the
 *    same algorithm as the emulator's emu_fp_round (emu/emu_fp.c), so the
 *    lowered code is bit-identical to the unlowered reference.  Except the
 *    fp8x2 <-> f16x2 forms NCCL's fp8 reductions are full of: both halves
 *    at once with 32-bit integer ops and one or two packed f16 ops
 *    (f16x2_from_f8x2, f8x2_from_f16x2), and cuBLASLt's fp8 GEMM modules'
 *    cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32: per element on the f32
 *    bits (f8_from_f32), bit-identical as well.
 *  - cvt.pack.sat (9.7.9.22): clamps, masks and shifts.
 *  - fns (9.7.1.17): the n-th set bit by a five-step binary search of popc.
 *  - fma/mad.rz/.rm/.rp.f64 (9.7.3.5): fma.rn plus the exact sign of its
 *    error (Boldo and Muller's ErrFma: TwoProduct by fma, two TwoSums), then
 *    one ulp of integer stepping toward the asked direction.
 *  - mul.rz/.rm/.rp.f32/.f64 and div/rcp/sqrt.rz/.rm/.rp.f32/.f64 (9.7.3.3,
 *    9.7.3.8, 9.7.3.13, 9.7.3.15): exactly, also where codegen's residual
 *    would underflow.
 *  - ex2/tanh .approx of f16x2/bf16x2 (9.7.4.x): split per half; tanh of
 *    f16/bf16 and ex2 of bf16 through the f32 approximation.
 */
#include "lower_internal.h"

/* ---- float formats ------------------------------------------------------ */
/* The PTX float formats this pass encodes or decodes (PTX ISA 5.2.5, the
 * OCP 8-bit and MX formats): width, exponent and mantissa bits, bias, and
 * how NaN and infinity are encoded.  The emulator's emu_fp.c describes the
 * same formats for its own (host) arithmetic. */
typedef enum { MF_IEEE, MF_FN, MF_NONE } mf_nan;  /* IEEE; e4m3: only S.1111.111 is NaN, no inf; none */
typedef struct mfmt {
  unsigned bits, ebits, mbits;
  int bias;
  mf_nan nan;
} mfmt;

#define LOWER_MATH_FORMATS(X)                                                                      \
  X(f64, 64, 11, 52, 1023, MF_IEEE)                                                                \
  X(f32, 32, 8, 23, 127, MF_IEEE)                                                                  \
  X(tf32, 19, 8, 10, 127, MF_IEEE) /* encoded as the top 19 bits of an f32 */                      \
  X(f16, 16, 5, 10, 15, MF_IEEE)                                                                   \
  X(bf16, 16, 8, 7, 127, MF_IEEE)                                                                  \
  X(e4m3, 8, 4, 3, 7, MF_FN)                                                                       \
  X(e5m2, 8, 5, 2, 15, MF_IEEE)                                                                    \
  X(e2m3, 6, 2, 3, 1, MF_NONE)                                                                     \
  X(e3m2, 6, 3, 2, 3, MF_NONE)                                                                     \
  X(e2m1, 4, 2, 1, 1, MF_NONE)

#define X(name, b, e, m, bias, nan) static const mfmt mf_##name = {b, e, m, bias, nan};
LOWER_MATH_FORMATS(X)
#undef X

/* The element format of a scalar or packed float type (NULL: none here). */
static const mfmt *fmt_of(ir_type t) {
  switch (t) {
#define X(name, b, e, m, bias, nan) case ir_type_##name: return &mf_##name;
  LOWER_MATH_FORMATS(X)
#undef X
  case ir_type_f16x2: return &mf_f16;
  case ir_type_bf16x2: return &mf_bf16;
  case ir_type_e4m3x2: return &mf_e4m3;
  case ir_type_e5m2x2: return &mf_e5m2;
  case ir_type_e2m3x2: return &mf_e2m3;
  case ir_type_e3m2x2: return &mf_e3m2;
  case ir_type_e2m1x2: return &mf_e2m1;
  default: return NULL;
  }
}

/* Pairs: element stride in the register (6-bit elements sit in bytes). */
static bool is_pair(ir_type t) {
  switch (t) {
  case ir_type_f16x2: case ir_type_bf16x2: case ir_type_e4m3x2: case ir_type_e5m2x2:
  case ir_type_e2m3x2: case ir_type_e3m2x2: case ir_type_e2m1x2: return true;
  default: return false;
  }
}
static unsigned stride_of(const mfmt *f) { return f->bits == 6 ? 8 : f->bits; }

/* Types that only lower/ converts (codegen maps f16/bf16/f32/f64 itself). */
static bool is_small(ir_type t) {
  const mfmt *f = fmt_of(t);
  return f && (f->bits <= 8 || t == ir_type_tf32);
}

static uint64_t max_finite(const mfmt *f) {
  uint64_t emask = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
  switch (f->nan) {
  case MF_IEEE: return ((emask - 1) << f->mbits) | mmask;
  case MF_FN: return (emask << f->mbits) | (mmask - 1);
  default: return (emask << f->mbits) | mmask;
  }
}
static uint64_t inf_bits(const mfmt *f) { return ((1ull << f->ebits) - 1) << f->mbits; }
static uint64_t canon_nan(const mfmt *f) { return (1ull << (f->ebits + f->mbits)) - 1; }

/* ---- small IR helpers ------------------------------------------------- */
static ir_value *k32(ir_builder *b, uint32_t v) { return ir_imm(b, ir_type_b32, v); }
static ir_value *k64(ir_builder *b, uint64_t v) { return ir_imm(b, ir_type_b64, v); }
static ir_value *a32(ir_builder *b, ir_op op, ir_value *x, ir_value *y) { return lower_alu(b, op, ir_type_b32, x, y); }
static ir_value *a64(ir_builder *b, ir_op op, ir_value *x, ir_value *y) { return lower_alu(b, op, ir_type_b64, x, y); }
static ir_value *cmp(ir_builder *b, ir_cmp c, ir_type t, ir_value *x, ir_value *y) { return lower_setp(b, c, t, x, y); }
static ir_value *sel(ir_builder *b, ir_type t, ir_value *p, ir_value *yes, ir_value *no) {
  return ir_selp(b, t, yes, no, p);
}
static ir_value *pand(ir_builder *b, ir_value *p, ir_value *q) { return ir_alu2(b, ir_op_and, ir_type_pred, p, q); }
static ir_value *por(ir_builder *b, ir_value *p, ir_value *q) { return ir_alu2(b, ir_op_or, ir_type_pred, p, q); }
static ir_value *pnot(ir_builder *b, ir_value *p) { return ir_alu1(b, ir_op_not, ir_type_pred, p); }
static ir_value *smax(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_max, ir_type_s32, x, y); }
static ir_value *smin(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_min, ir_type_s32, x, y); }
static ir_value *umin(ir_builder *b, ir_value *x, ir_value *y) { return ir_alu2(b, ir_op_min, ir_type_u32, x, y); }

static void split64(ir_builder *b, ir_value *x, ir_value **lo, ir_value **hi) {
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b64, 1, (ir_value *[]){x}, 2,
                         (ir_type[]){ir_type_b32, ir_type_b32}, NULL);
  *lo = u->dst[0];
  *hi = u->dst[1];
}
static ir_value *join64(ir_builder *b, ir_value *lo, ir_value *hi) {
  return ir_build_value(b, ir_op_pack, ir_type_b64, 2, (ir_value *[]){lo, hi}, NULL);
}
/* A b32 value narrowed to a 16- or 8-bit register type (cvt.u16.u32). */
static ir_value *narrow_to(ir_builder *b, ir_value *x, unsigned bits) {
  if (bits >= 32) return x;
  return ir_convert(b, bits > 8 ? ir_type_u16 : ir_type_u8, ir_type_u32, x);
}

/* ---- decode: an encoding to the bits of the same value as an f64 ------- */
/* v: b32 whose low f->bits bits are the encoding (f narrower than f64).
 * ftz: a subnormal input reads as a signed zero (.ftz on an f32 source). */
static ir_value *dec_to_f64(ir_builder *b, const mfmt *f, ir_value *v, bool ftz) {
  uint32_t emask = (1u << f->ebits) - 1, mmask = (1u << f->mbits) - 1;
  ir_value *s = a32(b, ir_op_and, a32(b, ir_op_shr, v, k32(b, f->bits - 1)), k32(b, 1));
  ir_value *e = a32(b, ir_op_and, a32(b, ir_op_shr, v, k32(b, f->mbits)), k32(b, emask));
  ir_value *m = a32(b, ir_op_and, v, k32(b, mmask));
  ir_value *ez = cmp(b, IR_CMP_EQ, ir_type_b32, e, k32(b, 0));
  if (ftz) m = sel(b, ir_type_b32, ez, k32(b, 0), m);
  ir_value *M = sel(b, ir_type_b32, ez, m, a32(b, ir_op_or, m, k32(b, 1u << f->mbits)));
  /* value = M * 2^ex, ex = max(e, 1) - bias - mbits */
  ir_value *ex = a32(b, ir_op_sub, sel(b, ir_type_b32, ez, k32(b, 1), e), k32(b, (uint32_t)(f->bias + (int)f->mbits)));
  ir_value *lz = ir_alu1(b, ir_op_clz, ir_type_b32, M);
  ir_value *L = a32(b, ir_op_sub, k32(b, 31), lz);               /* leading one of M */
  ir_value *fe = a32(b, ir_op_add, a32(b, ir_op_add, ex, L), k32(b, 1023));
  ir_value *mant = a64(b, ir_op_and, a64(b, ir_op_shl, lower_zext64(b, M), a32(b, ir_op_sub, k32(b, 52), L)),
                       k64(b, (1ull << 52) - 1));
  ir_value *sgn = a32(b, ir_op_shl, s, k32(b, 31));
  ir_value *ml, *mh;
  split64(b, mant, &ml, &mh);
  ir_value *hi = a32(b, ir_op_or, a32(b, ir_op_or, sgn, a32(b, ir_op_shl, fe, k32(b, 20))), mh);
  ir_value *zero = cmp(b, IR_CMP_EQ, ir_type_b32, M, k32(b, 0));
  hi = sel(b, ir_type_b32, zero, sgn, hi);
  ir_value *lo = sel(b, ir_type_b32, zero, k32(b, 0), ml);
  if (f->nan != MF_NONE) {
    ir_value *top = cmp(b, IR_CMP_EQ, ir_type_b32, e, k32(b, emask));
    ir_value *isnan = f->nan == MF_IEEE ? pand(b, top, cmp(b, IR_CMP_NE, ir_type_b32, m, k32(b, 0)))
                                        : pand(b, top, cmp(b, IR_CMP_EQ, ir_type_b32, m, k32(b, mmask)));
    if (f->nan == MF_IEEE) {
      ir_value *isinf = pand(b, top, cmp(b, IR_CMP_EQ, ir_type_b32, m, k32(b, 0)));
      hi = sel(b, ir_type_b32, isinf, a32(b, ir_op_or, sgn, k32(b, 0x7ff00000)), hi);
      lo = sel(b, ir_type_b32, isinf, k32(b, 0), lo);
    }
    hi = sel(b, ir_type_b32, isnan, k32(b, 0x7ff80000), hi);
    lo = sel(b, ir_type_b32, isnan, k32(b, 0), lo);
  }
  return join64(b, lo, hi);
}

/* ---- encode: f64 bits to a format, correctly rounded ------------------ */
typedef struct enc_opts {
  ir_rnd rnd;            /* RN (or none), RNA, RZ, RM, RP */
  bool satfinite, relu;
} enc_opts;

/* The encoding (low f->bits bits of a b32) of the f64 value x (b64), as
 * emu_fp_round does it: the value M * 2^ex (M the 53-bit significand) has
 * its leading one at E = ex + L; the quantum of the result is 2^(max(E,
 * emin) - mbits) (subnormals share emin's); N = M >> shift with a round
 * and a sticky bit below it; N rounded per mode; then the encoding is
 * ((max(E, emin) - emin) << mbits) + N, where a carry out of N moves into
 * the exponent by itself.  Overflow is decided on the rounded encoding. */
static ir_value *enc_from_f64(ir_builder *b, const mfmt *f, ir_value *x, const enc_opts *o) {
  ir_value *lo, *hi;
  split64(b, x, &lo, &hi);
  int emin = 1 - f->bias;
  ir_value *s = a32(b, ir_op_shr, hi, k32(b, 31));
  ir_value *neg = cmp(b, IR_CMP_NE, ir_type_b32, s, k32(b, 0));
  ir_value *e = a32(b, ir_op_and, a32(b, ir_op_shr, hi, k32(b, 20)), k32(b, 0x7ff));
  ir_value *frac = a64(b, ir_op_and, x, k64(b, (1ull << 52) - 1));
  ir_value *ez = cmp(b, IR_CMP_EQ, ir_type_b32, e, k32(b, 0));
  ir_value *top = cmp(b, IR_CMP_EQ, ir_type_b32, e, k32(b, 0x7ff));
  ir_value *fracz = cmp(b, IR_CMP_EQ, ir_type_b64, frac, k64(b, 0));
  ir_value *isnan = pand(b, top, pnot(b, fracz)), *isinf = pand(b, top, fracz);
  ir_value *M = sel(b, ir_type_b64, ez, frac, a64(b, ir_op_or, frac, k64(b, 1ull << 52)));
  ir_value *ex = a32(b, ir_op_sub, sel(b, ir_type_b32, ez, k32(b, 1), e), k32(b, 1075));
  ir_value *lz = ir_alu1(b, ir_op_clz, ir_type_b64, M);
  ir_value *E = a32(b, ir_op_add, ex, a32(b, ir_op_sub, k32(b, 63), lz));
  ir_value *Emax = smax(b, E, k32(b, (uint32_t)emin));
  /* shift = quantum exponent - ex, at least 52 - mbits; at 60 or more every
   * bit of M is below the round bit (N = 0, round 0, sticky = M != 0) */
  ir_value *shift = umin(b, a32(b, ir_op_sub, a32(b, ir_op_sub, Emax, k32(b, f->mbits)), ex), k32(b, 60));
  ir_value *N = lower_lo32(b, a64(b, ir_op_shr, M, shift));
  ir_value *sh1 = a32(b, ir_op_sub, shift, k32(b, 1));
  ir_value *rb = cmp(b, IR_CMP_NE, ir_type_b64, a64(b, ir_op_and, a64(b, ir_op_shr, M, sh1), k64(b, 1)), k64(b, 0));
  ir_value *below = a64(b, ir_op_sub, a64(b, ir_op_shl, k64(b, 1), sh1), k64(b, 1));
  ir_value *st = cmp(b, IR_CMP_NE, ir_type_b64, a64(b, ir_op_and, M, below), k64(b, 0));
  ir_value *inexact = por(b, rb, st);
  ir_value *up;
  switch (o->rnd) {
  case IR_RND_RNA: up = rb; break;
  case IR_RND_RZ: up = NULL; break;
  case IR_RND_RM: up = pand(b, inexact, neg); break;
  case IR_RND_RP: up = pand(b, inexact, pnot(b, neg)); break;
  default: { /* nearest, ties to even */
    ir_value *odd = cmp(b, IR_CMP_NE, ir_type_b32, a32(b, ir_op_and, N, k32(b, 1)), k32(b, 0));
    up = pand(b, rb, por(b, st, odd));
    break;
  }
  }
  if (up) N = a32(b, ir_op_add, N, sel(b, ir_type_b32, up, k32(b, 1), k32(b, 0)));
  /* the exponent field, clamped just past the largest so the shift stays in
   * 32 bits: anything clamped overflows anyway */
  ir_value *Ec = smin(b, Emax, k32(b, (uint32_t)(emin + (1 << f->ebits))));
  ir_value *enc = a32(b, ir_op_add, a32(b, ir_op_shl, a32(b, ir_op_sub, Ec, k32(b, (uint32_t)emin)), k32(b, f->mbits)), N);
  uint64_t mf = max_finite(f);
  uint32_t limit = f->nan == MF_IEEE ? (uint32_t)inf_bits(f) : (uint32_t)mf + 1;
  ir_value *ovf = cmp(b, IR_CMP_GE, ir_type_u32, enc, k32(b, limit));
  ir_value *sign = a32(b, ir_op_shl, s, k32(b, f->bits - 1));
  bool has_inf = f->nan == MF_IEEE;
  ir_value *big;   /* magnitude on overflow */
  if (!has_inf || o->satfinite) {
    big = k32(b, (uint32_t)mf);
  } else {
    switch (o->rnd) {
    case IR_RND_RZ: big = k32(b, (uint32_t)mf); break;
    case IR_RND_RM: big = sel(b, ir_type_b32, neg, k32(b, (uint32_t)inf_bits(f)), k32(b, (uint32_t)mf)); break;
    case IR_RND_RP: big = sel(b, ir_type_b32, neg, k32(b, (uint32_t)mf), k32(b, (uint32_t)inf_bits(f))); break;
    default: big = k32(b, (uint32_t)inf_bits(f)); break;
    }
  }
  ir_value *mag = sel(b, ir_type_b32, ovf, big, enc);
  uint32_t infmag = (uint32_t)(!has_inf || o->satfinite ? mf : inf_bits(f));
  mag = sel(b, ir_type_b32, isinf, k32(b, infmag), mag);
  ir_value *r = a32(b, ir_op_or, sign, mag);
  if (o->relu) r = sel(b, ir_type_b32, neg, k32(b, 0), r);
  uint32_t nanbits = (uint32_t)(f->nan == MF_NONE ? mf : canon_nan(f));
  return sel(b, ir_type_b32, isnan, k32(b, nanbits), r);
}

/* .sat on a float destination: NaN, negatives and zeros to +0, above 1 to
 * 1 (on the f64 bits: positive values order as integers). */
static ir_value *sat01_f64(ir_builder *b, ir_value *x) {
  ir_value *lo, *hi;
  split64(b, x, &lo, &hi);
  ir_value *one = k64(b, 0x3ff0000000000000ull);
  ir_value *neg = cmp(b, IR_CMP_NE, ir_type_b32, a32(b, ir_op_shr, hi, k32(b, 31)), k32(b, 0));
  ir_value *nan = cmp(b, IR_CMP_GT, ir_type_u64, a64(b, ir_op_and, x, k64(b, ~0ull >> 1)), k64(b, 0x7ff0000000000000ull));
  ir_value *above = cmp(b, IR_CMP_GT, ir_type_u64, x, one);
  ir_value *r = sel(b, ir_type_b64, above, one, x);
  return sel(b, ir_type_b64, por(b, neg, nan), k64(b, 0), r);
}

/* ---- cvt ---------------------------------------------------------------- */
typedef struct cvt_ctx {
  const ir_instr *i;
  ir_type de, se;          /* element types */
  const mfmt *df, *sf;
  enc_opts o;
} cvt_ctx;

/* One element: v holds the source encoding (low bits; the f64 value itself
 * for an f64 source); returns the destination encoding in a b32 (for tf32,
 * the f32 bits). */
static ir_value *cvt_elem(ir_builder *b, const cvt_ctx *c, ir_value *v) {
  ir_value *x = c->se == ir_type_f64 ? v : dec_to_f64(b, c->sf, v, c->i->mods.ftz && c->se == ir_type_f32);
  if (c->i->mods.sat) x = sat01_f64(b, x);
  ir_value *r = enc_from_f64(b, c->df, x, &c->o);
  if (c->de == ir_type_tf32) {
    /* NaN stays the f32 canonical NaN (the emulator's rule for tf32) */
    ir_value *nan = cmp(b, IR_CMP_GT, ir_type_u64, a64(b, ir_op_and, x, k64(b, ~0ull >> 1)), k64(b, 0x7ff0000000000000ull));
    r = sel(b, ir_type_b32, nan, k32(b, 0x7fffffff), a32(b, ir_op_shl, r, k32(b, 13)));
  }
  return r;
}

static ir_type elem_type(ir_type t) {
  switch (t) {
  case ir_type_f16x2: return ir_type_f16;
  case ir_type_bf16x2: return ir_type_bf16;
  case ir_type_e4m3x2: return ir_type_e4m3;
  case ir_type_e5m2x2: return ir_type_e5m2;
  case ir_type_e2m3x2: return ir_type_e2m3;
  case ir_type_e3m2x2: return ir_type_e3m2;
  case ir_type_e2m1x2: return ir_type_e2m1;
  default: return t;
  }
}

static bool is_float_scalar(ir_type t) {
  return t == ir_type_f16 || t == ir_type_bf16 || t == ir_type_f32 || t == ir_type_f64 || is_small(t);
}

static bool is_directed(unsigned r) { return r == IR_RND_RZ || r == IR_RND_RM || r == IR_RND_RP; }

static bool is_int(ir_type t);

/* cvt.rn.bf16 from a 32- or 64-bit integer: LLVM 22's AMDGPU backend
 * converts to f32 first and rounds that to bf16 (v_cvt_f32_i32, then the
 * bf16 rounding on the bits): two roundings, wrong where the first lands
 * on a bf16 midpoint (2^24 + 2^16 + 1 gives 2^24, not 2^24 + 2^17).
 * 16-bit sources are exact in f32, so one rounding. */
static bool is_int_bf16_rn(const ir_instr *i) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  return dt == ir_type_bf16 && is_int(st) && ir_type_bits(st) >= 32 &&
         (i->mods.rnd == IR_RND_RN || i->mods.rnd == IR_RND_NONE);
}

static bool want_cvt(const ir_instr *i) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  if (dt == ir_type_ue8m0x2)
    return (st == ir_type_f32 && i->nsrc == 2) || (st == ir_type_bf16x2 && i->nsrc == 1);
  if (st == ir_type_ue8m0x2) return dt == ir_type_bf16x2 && i->nsrc == 1;
  if ((dt == ir_type_f32 || dt == ir_type_f64 || dt == ir_type_f16 || dt == ir_type_bf16) && is_int(st) &&
      i->nsrc == 1)
    return (is_directed(i->mods.rnd) || is_int_bf16_rn(i)) && !i->mods.sat && !i->mods.ftz;
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_NONE: case IR_RND_RN: case IR_RND_RNA: case IR_RND_RZ: case IR_RND_RM: case IR_RND_RP: break;
  default: return false;   /* .rs, integer roundings */
  }
  if (st == ir_type_tf32) return false;
  if (is_pair(dt) && i->nsrc == 2 && is_float_scalar(st))
    return is_small(dt) || i->mods.satfinite;            /* f16x2/bf16x2 pairs without it: codegen */
  if (is_pair(dt) && i->nsrc == 1 && is_pair(st)) return is_small(dt) || is_small(st);
  if (i->nsrc != 1 || !is_float_scalar(dt) || !is_float_scalar(st)) return false;
  if (is_small(dt) || is_small(st)) return true;
  /* f64 -> bf16 in every mode: one rounding, where a backend may go
   * through f32 (a double rounding) */
  return st == ir_type_f64 && ((dt == ir_type_f16 && is_directed(i->mods.rnd)) || dt == ir_type_bf16);
}

/* ---- fp8 x2 <-> f16x2, both halves at once -------------------------------- */
/* The helpers of the packed paths: a f16x2 op on a constant pair; prmt with
 * a zero second word (9.7.9.7; a constant selector is one v_perm_b32); the
 * bitwise select m ? x : y as ((x ^ y) & m) ^ y (three LLVM instructions
 * where lop3 0xca's (m & x) | (~m & y) is four; both are one v_bfi_b32);
 * the carry of the halves whose value (below 0x8000) plus k reaches bit 15,
 * and from it the lane mask: the carry moved to bit 0 of the half (at most
 * 0x10001, so v_mul_u32_u24) times fill, 0xff00 for the high byte of the
 * half or 0xffff for all of it. */
static ir_value *h2k(ir_builder *b, ir_op op, ir_value *x, uint32_t k) {
  if (op == ir_op_min) return ir_alu2(b, op, ir_type_f16x2, x, k32(b, k));
  return ir_alu2(b, op, ir_type_f16x2, x, k32(b, k), .rnd = IR_RND_RN);
}
static ir_value *prmt0(ir_builder *b, ir_value *x, uint32_t sel) {
  return ir_build_value(b, ir_op_prmt, ir_type_b32, 3, (ir_value *[]){x, k32(b, 0), k32(b, sel)}, NULL);
}
static ir_value *bitsel(ir_builder *b, ir_value *m, ir_value *x, ir_value *y) {
  return a32(b, ir_op_xor, a32(b, ir_op_and, a32(b, ir_op_xor, x, y), m), y);
}
static ir_value *lane_carry(ir_builder *b, ir_value *lanes, uint32_t k) {
  return a32(b, ir_op_and, a32(b, ir_op_add, lanes, k32(b, k)), k32(b, 0x80008000u));
}
static ir_value *lane_mask(ir_builder *b, ir_value *carry, uint32_t fill) {
  return a32(b, ir_op_mul, a32(b, ir_op_shr, carry, k32(b, 15)), k32(b, fill));
}
/* v with the marked halves (carry at bit 15) made 0x7fff (fill 0xffff) or
 * their high byte 0x7f (fill 0xff00), whatever they held: a select of the
 * constant, one v_bfi_b32 once the constant sits in a register (or-ing the
 * mask in and flipping the carry's bit 15 back is one LLVM instruction
 * fewer but one machine instruction more in NCCL's modules). */
static ir_value *nan_fill(ir_builder *b, ir_value *v, ir_value *carry, uint32_t fill) {
  return bitsel(b, lane_mask(b, carry, fill), k32(b, fill == 0xffff ? 0x7fff7fffu : 0x7f007f00u), v);
}

/* cvt.rn.f16x2.{e4m3x2,e5m2x2} (PTX ISA 9.7.9.21; formats 5.2.5.1): every
 * fp8 value is an f16 value.  One prmt puts byte k in the high byte of half
 * k (w = {0, b0, 0, b1}).  e5m2 has the f16 layout (5 exponent bits, bias
 * 15), so w is the result, infinities included.  e4m3 (bias 7): its
 * magnitude bits eeee.mmm moved to f16 bits 13..7 ((w & 0x7fff7fff) >> 1)
 * read as an f16 are the value times 2^-8 (exponent field e is 2^(e-15)
 * against e4m3's 2^(e-7); the subnormal 0.mmm * 2^-6 becomes the f16
 * subnormal mmm * 2^-17), so one mul.rn.f16x2 by 2^8 (0x5c00) gives the
 * value, exactly, subnormals included (no .ftz; codegen keeps f16
 * denormals, the "denormal-fp-math" default); the sign is or-ed back.  NaN
 * (e4m3 S.1111.111, e5m2 magnitude above 0x7c) gives the f16 canonical NaN
 * 0x7fff whatever its sign, as the emulator does: the halves whose
 * magnitude plus 0x100 (e4m3) or 0x3ff (e5m2) reaches 0x8000 are filled
 * (nan_fill).  The pair costs 13 IR ops for e4m3 (gfx942, alone in a
 * kernel: 15 LLVM / 14 machine instructions; the per-byte f32 path took
 * 43 / 36) and 9 for e5m2 (9 / 9; were 47 / 42). */
static ir_value *f16x2_from_f8x2(ir_builder *b, bool e4, ir_value *src) {
  ir_value *w = prmt0(b, src, 0x1404);
  ir_value *mag = a32(b, ir_op_and, w, k32(b, 0x7fff7fffu));
  ir_value *v = w;
  if (e4) {
    ir_value *f = h2k(b, ir_op_mul, a32(b, ir_op_shr, mag, k32(b, 1)), 0x5c005c00u);
    v = a32(b, ir_op_or, f, a32(b, ir_op_and, w, k32(b, 0x80008000u)));
  }
  return nan_fill(b, v, lane_carry(b, mag, e4 ? 0x01000100u : 0x03ff03ffu), 0xffff);
}

/* cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2 without .relu (9.7.9.21): the
 * magnitude a = |x| of each half is first clamped (min.f16x2) to the
 * largest value that still rounds to the largest finite fp8: 464 (0x5f40,
 * halfway between 448 and 480, rounds to the even 448) for e4m3, 0x7b7f
 * (just under the 57344/61440 midpoint) for e5m2.  .satfinite makes every
 * larger value, infinity included, the largest finite one.
 *  - e5m2 has the f16 layout: the encoding is the high byte of a rounded
 *    to nearest even at bit 8 (a + 0x7f + bit 8), subnormal results
 *    included (both formats' subnormals sit on the same exponent field).
 *  - e4m3, normal results (a >= 2^-6, 0x2400): c * 2^-8 (mul.rn.f16x2,
 *    exact there) holds e4m3's biased exponent in the f16 exponent field,
 *    so rounding its bits at bit 7 (+ 0x3f + bit 7) leaves the encoding in
 *    bits 14..7, the high byte after a shift by one.  Subnormal results
 *    (a < 2^-6): add.rn.f16x2(c, 2.0) rounds once, to the f16 quantum 2^-9
 *    of [2, 4), which is e4m3's subnormal quantum: the sum's low byte is
 *    the encoding (0..8; 8 the smallest normal), shifted to the high byte.
 *    A select per half (the carry of a + 0x5c00) picks one.
 *  - the sign of x is the top bit of that byte; NaN halves give 0x7f, no
 *    sign (nan_fill); one prmt takes bytes 1 and 3.
 * Every half stays below 0x8080 through the integer steps (a NaN that
 * min/mul make of the positive a is positive: the emulator's canonical
 * 0x7fff, the hardware's quieted input or 0x7e00), so nothing carries
 * across halves.  The pair costs 28 IR ops for e4m3 (gfx942, alone in
 * a kernel: 30 LLVM / 28 machine instructions; the per-half f32 path took
 * 47 / 49) and 17 for e5m2 (18 / 18; were 47 / 49). */
static ir_value *f8x2_from_f16x2(ir_builder *b, bool e4, ir_value *x) {
  ir_value *a = a32(b, ir_op_and, x, k32(b, 0x7fff7fffu));
  ir_value *c = h2k(b, ir_op_min, a, e4 ? 0x5f405f40u : 0x7b7f7b7fu);
  ir_value *v;
  if (e4) {
    ir_value *c8 = h2k(b, ir_op_mul, c, 0x1c001c00u);   /* 2^-8 */
    ir_value *lsb = a32(b, ir_op_and, a32(b, ir_op_shr, c8, k32(b, 7)), k32(b, 0x00010001u));
    ir_value *r = a32(b, ir_op_add, a32(b, ir_op_add, c8, k32(b, 0x003f003fu)), lsb);
    ir_value *norm = a32(b, ir_op_shl, r, k32(b, 1));
    ir_value *sub = a32(b, ir_op_shl, h2k(b, ir_op_add, c, 0x40004000u), k32(b, 8));
    v = bitsel(b, lane_mask(b, lane_carry(b, a, 0x5c005c00u), 0xff00), norm, sub);
  } else {
    ir_value *lsb = a32(b, ir_op_and, a32(b, ir_op_shr, c, k32(b, 8)), k32(b, 0x00010001u));
    v = a32(b, ir_op_add, a32(b, ir_op_add, c, k32(b, 0x007f007fu)), lsb);
  }
  v = a32(b, ir_op_or, v, a32(b, ir_op_and, x, k32(b, 0x80008000u)));
  v = nan_fill(b, v, lane_carry(b, a, 0x03ff03ffu), 0xff00);
  return narrow_to(b, prmt0(b, v, 0x4431), 16);
}

/* cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32 d, a, b (9.7.9.21; a in the
 * high byte): cuBLASLt's fp8 GEMM modules hold ~22,000.  Per element,
 * on the bits u = |x| of the f32 (bias 127), for e4m3 (mbits 3, bias 7)
 * or e5m2 (mbits 2, bias 15), drop = 23 - mbits:
 *  - normal results (|x| >= 2^(1-bias), 2^-6 / 2^-14): u rounded to
 *    nearest even at bit drop (+ 2^(drop-1) - 1 + the kept bit; a carry out
 *    of the mantissa moves into the exponent, which is the rounding up to
 *    the next binade) and rebiased by (127 - bias) << 23 in the same add,
 *    then shifted down by drop: the encoding.  The sum stays under 2^31
 *    for every u up to 0x7fffffff (NaN's result is replaced below).
 *  - subnormal results: add.rn.f32(|x|, 2^14 / 2^7) rounds once, to
 *    nearest even, to the f32 quantum of that binade, 2^-9 / 2^-16, which
 *    is the fp8 subnormal quantum: the sum's bits less the constant's are
 *    the encoding (0 .. 2^mbits; 2^mbits the smallest normal's).  An add
 *    rather than |x| * 2^9 and cvt.rni: one rounding and nothing that can
 *    underflow; an f32 subnormal input (under 2^-126, far below half the
 *    quantum) gives 0 whether the hardware keeps it or flushes it.
 *  - .satfinite: umin by the largest finite encoding (0x7e, 448; 0x7b,
 *    57344): what rounds past it, infinity included, is clamped (the
 *    rounding above reaches 0x7f just above 464, the tie 464 staying at
 *    the even 0x7e, and 0x7c from the tie 61440 up: the decisions
 *    emu_fp_round makes before its overflow test).
 *  - the sign or-ed in; NaN gives 0x7f, no sign (both formats, as the
 *    emulator's canonical NaN).  .relu: u = smax(x, 0) as s32 (every
 *    negative, -0 and -inf included, is +0) and NaN by a setp.nan.
 * The threshold between the two is not sharp: |x| in [2^-6, 2^-5) has the
 * subnormal quantum too, so either branch gives its encoding.  16 IR ops
 * per element where the general path (cvt_elem) takes ~80.  Per pair on
 * gfx942 (LLVM IR / machine instructions, a one-conversion kernel less the
 * same kernel without it): e4m3 and e5m2 179 / 168 -> 37 / 36, .relu
 * 183 / 176 -> 33 / 30.  Lowered IR of libcublasLt.so.13.c0032.e05.sm_120
 * (93 of each form): 101,565 -> 75,525 lines; c1705.e02 (2,560 e4m3):
 * 2,209,481 -> 1,851,081. */
static ir_value *f8_from_f32(ir_builder *b, bool e4, bool relu, ir_value *x) {
  unsigned mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15, drop = 23 - mbits;
  uint32_t minnorm = (127u - bias + 1) << 23, rebias = (127u - bias) << 23;
  uint32_t magic = (127u + 24u - bias - mbits) << 23;   /* 2^(23 + 1 - bias - mbits): quantum 2^(1-bias-mbits) */
  ir_value *u = relu ? smax(b, x, k32(b, 0)) : a32(b, ir_op_and, x, k32(b, 0x7fffffffu));
  ir_value *lsb = a32(b, ir_op_and, a32(b, ir_op_shr, u, k32(b, drop)), k32(b, 1));
  ir_value *r = a32(b, ir_op_add, a32(b, ir_op_add, u, k32(b, (1u << (drop - 1)) - 1 - rebias)), lsb);
  ir_value *norm = a32(b, ir_op_shr, r, k32(b, drop));
  ir_value *sum = ir_alu2(b, ir_op_add, ir_type_f32, u, k32(b, magic), .rnd = IR_RND_RN);
  ir_value *sub = a32(b, ir_op_sub, sum, k32(b, magic));
  ir_value *enc = sel(b, ir_type_b32, cmp(b, IR_CMP_LT, ir_type_u32, u, k32(b, minnorm)), sub, norm);
  enc = umin(b, enc, k32(b, e4 ? 0x7e : 0x7b));
  ir_value *nan;
  if (relu) {
    nan = cmp(b, IR_CMP_NAN, ir_type_f32, x, x);
  } else {
    enc = a32(b, ir_op_or, enc, a32(b, ir_op_and, a32(b, ir_op_shr, x, k32(b, 24)), k32(b, 0x80)));
    nan = cmp(b, IR_CMP_GT, ir_type_u32, u, k32(b, 0x7f800000u));
  }
  return sel(b, ir_type_b32, nan, k32(b, 0x7f), enc);
}

static ir_value *lower_cvt(ir_builder *b, ir_instr *i) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  /* fp8 <-> f16x2 with both 16-bit halves at once (the register holds two
   * lanes; every integer step below keeps each lane's value under 2^16, so
   * no carry or borrow crosses from one half into the other): NCCL's fp8
   * reductions hold thousands of these conversions.  Per-lane conditions
   * are carries: (lane + K) & 0x8000 marks the lanes >= 0x8000 - K, and
   * such a mark moved to bit 0 times 0xff00 or 0xffff is the lane's high
   * byte or whole mask for a bitwise select (v_bfi_b32). */
  if ((dt == ir_type_e4m3x2 || dt == ir_type_e5m2x2) && st == ir_type_f16x2 && i->nsrc == 1 && !i->mods.relu &&
      i->mods.satfinite && i->mods.rnd == IR_RND_RN)
    return f8x2_from_f16x2(b, dt == ir_type_e4m3x2, i->src[0]);
  if (dt == ir_type_f16x2 && (st == ir_type_e4m3x2 || st == ir_type_e5m2x2) && i->nsrc == 1 && !i->mods.relu &&
      !i->mods.satfinite && (i->mods.rnd == IR_RND_RN || i->mods.rnd == IR_RND_NONE))
    return f16x2_from_f8x2(b, st == ir_type_e4m3x2, i->src[0]);
  if ((dt == ir_type_e4m3x2 || dt == ir_type_e5m2x2) && st == ir_type_f32 && i->nsrc == 2 && i->mods.satfinite &&
      i->mods.rnd == IR_RND_RN && !i->mods.ftz && !i->mods.sat) {
    /* d = {a high, b low} */
    bool e4 = dt == ir_type_e4m3x2, relu = i->mods.relu;
    ir_value *hi = f8_from_f32(b, e4, relu, i->src[0]), *lo = f8_from_f32(b, e4, relu, i->src[1]);
    return narrow_to(b, a32(b, ir_op_or, a32(b, ir_op_shl, hi, k32(b, 8)), lo), 16);
  }
  cvt_ctx c = {.i = i, .de = elem_type(dt), .se = elem_type(st)};
  c.df = fmt_of(c.de);
  c.sf = fmt_of(c.se);
  c.o = (enc_opts){.rnd = (ir_rnd)i->mods.rnd, .satfinite = i->mods.satfinite, .relu = i->mods.relu};
  unsigned dbits = ir_type_bits(dt);
  if (is_pair(dt)) {
    unsigned ds = stride_of(c.df);
    ir_value *h[2];   /* [0] low element, [1] high */
    if (i->nsrc == 2) {
      /* d = {a high, b low} */
      h[1] = cvt_elem(b, &c, i->src[0]);
      h[0] = cvt_elem(b, &c, i->src[1]);
    } else {
      unsigned ss = stride_of(c.sf);
      for (unsigned k = 0; k < 2; k++) {
        ir_value *e = a32(b, ir_op_and, a32(b, ir_op_shr, i->src[0], k32(b, k * ss)),
                          k32(b, (uint32_t)((1ull << c.sf->bits) - 1)));
        h[k] = cvt_elem(b, &c, e);
      }
    }
    uint32_t emk = (uint32_t)((1ull << c.df->bits) - 1);
    ir_value *r = a32(b, ir_op_or, a32(b, ir_op_shl, a32(b, ir_op_and, h[1], k32(b, emk)), k32(b, ds)),
                      a32(b, ir_op_and, h[0], k32(b, emk)));
    return narrow_to(b, r, dbits);
  }
  ir_value *v = i->src[0];
  if (st != ir_type_f64) v = a32(b, ir_op_and, v, k32(b, (uint32_t)((1ull << c.sf->bits) - 1)));
  ir_value *r = cvt_elem(b, &c, v);
  if (dbits < 32) r = a32(b, ir_op_and, r, k32(b, (uint32_t)((1ull << c.df->bits) - 1)));
  return narrow_to(b, r, dbits);
}

/* ---- cvt from an integer to f32/f64 with .rz/.rm/.rp (9.7.9.21) -------- */
/* AMD converts integers to float only to nearest (a directed mode would
 * need a mode-register switch).  The source, widened to 64 bits, is
 * converted to nearest; the result r is an integer value, so converting it
 * back (cvt.rzi, exact) and comparing with the source says whether r lies
 * above or below it, except where r is 2^63 (s64) or 2^64 (u64), out of
 * the integer range and above every source.  An inexact r is nonzero and
 * the directed result is its neighbour one encoding away: the magnitude
 * steps by one in the bits (powers of two included). */
static bool is_int(ir_type t) {
  return ir_type_kind_of(t) == IR_TK_SINT || ir_type_kind_of(t) == IR_TK_UINT;
}

static ir_value *int_to_float_directed(ir_builder *b, ir_value *x, ir_type st, ir_type dt, ir_rnd rnd) {
  bool sgn = ir_type_kind_of(st) == IR_TK_SINT;
  ir_type wt = sgn ? ir_type_s64 : ir_type_u64;
  if (ir_type_bits(st) < 64) x = ir_convert(b, wt, st, x);
  ir_value *r = ir_convert(b, dt, wt, x, .rnd = IR_RND_RN);
  if (ir_type_bits(st) <= 32 && dt == ir_type_f64) return r;     /* exact */
  ir_value *ri = ir_convert(b, wt, dt, r, .rnd = IR_RND_RZI);
  bool d64 = dt == ir_type_f64;
  ir_type bt = d64 ? ir_type_b64 : ir_type_b32, st_bits = d64 ? ir_type_s64 : ir_type_s32;
  /* 2^63 (s64) or 2^64 (u64) as bits of dt; positive floats order as integers */
  uint64_t lim = d64 ? (sgn ? 0x43e0000000000000ull : 0x43f0000000000000ull) : (sgn ? 0x5f000000u : 0x5f800000u);
  ir_value *klim = d64 ? k64(b, lim) : k32(b, (uint32_t)lim);
  ir_value *big = cmp(b, IR_CMP_GE, st_bits, r, klim);
  ir_value *gt = por(b, big, cmp(b, IR_CMP_GT, wt, ri, x));
  ir_value *lt = pand(b, pnot(b, big), cmp(b, IR_CMP_LT, wt, ri, x));
  ir_value *zero = d64 ? k64(b, 0) : k32(b, 0);
  ir_value *neg = cmp(b, IR_CMP_LT, st_bits, r, zero);
  ir_value *pos = pnot(b, neg);
  ir_value *dec, *inc;   /* magnitude one step down / up */
  switch (rnd) {
  case IR_RND_RZ: dec = por(b, pand(b, gt, pos), pand(b, lt, neg)); inc = NULL; break;
  case IR_RND_RM: dec = pand(b, gt, pos); inc = pand(b, gt, neg); break;
  default: dec = pand(b, lt, neg); inc = pand(b, lt, pos); break;   /* RP */
  }
  ir_value *one = d64 ? k64(b, 1) : k32(b, 1);
  ir_value *res = lower_alu(b, ir_op_sub, bt, r, sel(b, bt, dec, one, zero));
  if (inc) res = lower_alu(b, ir_op_add, bt, res, sel(b, bt, inc, one, zero));
  return res;
}

/* cvt.rn.bf16 from a 32- or 64-bit integer in one rounding (is_int_bf16_rn).
 * A 32-bit integer is exact in f64: f64, then bf16 to nearest.  A 64-bit
 * one goes to f64 rounded to odd (the .rz result with its last bit set when
 * inexact; inexact when converting it back does not give the source):
 * rounding to odd at 53 bits and then to nearest at 8 equals rounding to
 * nearest once, since 53 >= 8 + 2 (Boldo and Melquiond, "Emulation of FMA
 * and correctly rounded sums: proved algorithms using rounding to odd"). */
static ir_value *lower_cvt_int_bf16_rn(ir_builder *b, ir_instr *i) {
  ir_type st = (ir_type)i->type2;
  ir_value *x = i->src[0];
  ir_value *r;
  enc_opts o = {.rnd = IR_RND_RN};
  if (ir_type_bits(st) <= 32) {
    r = ir_convert(b, ir_type_f64, st, x, .rnd = IR_RND_RN);
  } else {
    r = int_to_float_directed(b, x, st, ir_type_f64, IR_RND_RZ);
    ir_value *back = ir_convert(b, st, ir_type_f64, r, .rnd = IR_RND_RZI);
    ir_value *inexact = cmp(b, IR_CMP_NE, ir_type_b64, back, x);
    r = lower_alu(b, ir_op_or, ir_type_b64, r, sel(b, ir_type_b64, inexact, k64(b, 1), k64(b, 0)));
  }
  return narrow_to(b, enc_from_f64(b, fmt_of(ir_type_bf16), r, &o), 16);
}

/* f16/bf16 destinations: the directed f64 result, then one directed
 * rounding into the half format.  Rounding twice in one direction equals
 * rounding once, since every half value is an f64 value. */
static ir_value *lower_cvt_int_directed(ir_builder *b, ir_instr *i) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  ir_rnd rnd = (ir_rnd)i->mods.rnd;
  if (is_int_bf16_rn(i)) return lower_cvt_int_bf16_rn(b, i);
  if (dt == ir_type_f32 || dt == ir_type_f64) return int_to_float_directed(b, i->src[0], st, dt, rnd);
  ir_value *x = int_to_float_directed(b, i->src[0], st, ir_type_f64, rnd);
  enc_opts o = {.rnd = rnd};
  return narrow_to(b, enc_from_f64(b, fmt_of(dt), x, &o), 16);
}

/* ---- cvt to and from ue8m0x2 (9.7.9.21, the MX scale format) ------------ */
/* ue8m0 is 2^(b-127), b in 0..254, 255 NaN; only .rz and .rp exist.  From
 * the f32 bits (a bf16 is the top half of one): NaN -> 255; zero and
 * negatives -> 0; inf -> 255 (254 with .satfinite); a normal with exponent
 * field e -> e (rz) or e + 1 when inexact (rp), 255 past 254 (254 with
 * .satfinite); a subnormal m * 2^-149 -> 0, or 1 under rp when m > 2^22
 * (emu_ue8m0_from_double's floor(log2 v) + 127, clamped at 0). */
static ir_value *ue8m0_from_f32(ir_builder *b, ir_value *x, bool rp, bool satfinite) {
  ir_value *mag = a32(b, ir_op_and, x, k32(b, 0x7fffffff));
  ir_value *nan = cmp(b, IR_CMP_GT, ir_type_u32, mag, k32(b, 0x7f800000));
  ir_value *nonpos = por(b, cmp(b, IR_CMP_NE, ir_type_b32, a32(b, ir_op_shr, x, k32(b, 31)), k32(b, 0)),
                         cmp(b, IR_CMP_EQ, ir_type_b32, mag, k32(b, 0)));
  ir_value *e = a32(b, ir_op_shr, mag, k32(b, 23));
  ir_value *m = a32(b, ir_op_and, mag, k32(b, 0x7fffff));
  ir_value *r = e;
  if (rp) {
    ir_value *up = cmp(b, IR_CMP_NE, ir_type_b32, m, k32(b, 0));
    r = a32(b, ir_op_add, e, sel(b, ir_type_b32, up, k32(b, 1), k32(b, 0)));
    ir_value *ez = cmp(b, IR_CMP_EQ, ir_type_b32, e, k32(b, 0));
    ir_value *sub1 = cmp(b, IR_CMP_GT, ir_type_u32, m, k32(b, 0x400000));
    r = sel(b, ir_type_b32, ez, sel(b, ir_type_b32, sub1, k32(b, 1), k32(b, 0)), r);
  }
  /* past 254 (inf is e = 255) */
  ir_value *ovf = cmp(b, IR_CMP_GT, ir_type_u32, r, k32(b, 254));
  r = sel(b, ir_type_b32, ovf, k32(b, satfinite ? 0xfe : 0xff), r);
  r = sel(b, ir_type_b32, nonpos, k32(b, 0), r);
  return sel(b, ir_type_b32, nan, k32(b, 0xff), r);
}

static ir_value *lower_cvt_ue8m0(ir_builder *b, ir_instr *i) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  bool rp = i->mods.rnd == IR_RND_RP, sf = i->mods.satfinite;
  if (dt == ir_type_ue8m0x2) {
    ir_value *hi, *lo;   /* d = {a high, b low} */
    if (st == ir_type_f32) {
      hi = ue8m0_from_f32(b, i->src[0], rp, sf);
      lo = ue8m0_from_f32(b, i->src[1], rp, sf);
    } else {             /* bf16x2: each half is the top of an f32 */
      hi = ue8m0_from_f32(b, a32(b, ir_op_and, i->src[0], k32(b, 0xffff0000u)), rp, sf);
      lo = ue8m0_from_f32(b, a32(b, ir_op_shl, i->src[0], k32(b, 16)), rp, sf);
    }
    return narrow_to(b, a32(b, ir_op_or, a32(b, ir_op_shl, hi, k32(b, 8)), lo), 16);
  }
  /* bf16x2 from ue8m0x2: 2^(b-127) exactly (b << 7; b = 0 is the bf16
   * subnormal 2^-127 = 0x0040), 255 -> the canonical NaN 0x7fff */
  ir_value *h[2];
  for (unsigned k = 0; k < 2; k++) {
    ir_value *v = a32(b, ir_op_and, a32(b, ir_op_shr, i->src[0], k32(b, 8 * k)), k32(b, 0xff));
    ir_value *r = a32(b, ir_op_shl, v, k32(b, 7));
    r = sel(b, ir_type_b32, cmp(b, IR_CMP_EQ, ir_type_b32, v, k32(b, 0)), k32(b, 0x40), r);
    h[k] = sel(b, ir_type_b32, cmp(b, IR_CMP_EQ, ir_type_b32, v, k32(b, 0xff)), k32(b, 0x7fff), r);
  }
  return a32(b, ir_op_or, a32(b, ir_op_shl, h[1], k32(b, 16)), h[0]);
}

/* ---- cvt.pack.sat.{u8,s8,u16,s16}.s32{.b32} (9.7.9.22) ------------------ */
static ir_value *lower_cvt_pack(ir_builder *b, ir_instr *i) {
  ir_type t = (ir_type)i->type;
  unsigned bits = ir_type_bits(t);
  bool sgn = ir_type_kind_of(t) == IR_TK_SINT;
  int32_t lo = sgn ? -(int32_t)(1u << (bits - 1)) : 0, hi = sgn ? (int32_t)(1u << (bits - 1)) - 1 : (int32_t)((1u << bits) - 1);
  uint32_t fmask = (1u << bits) - 1;
  ir_value *f[2];
  for (unsigned k = 0; k < 2; k++) {
    ir_value *v = smin(b, smax(b, i->src[k], k32(b, (uint32_t)lo)), k32(b, (uint32_t)hi));
    f[k] = a32(b, ir_op_and, v, k32(b, fmask));
  }
  ir_value *r = a32(b, ir_op_or, a32(b, ir_op_shl, f[0], k32(b, bits)), f[1]);
  if (i->nsrc > 2 && 2 * bits < 32) r = a32(b, ir_op_or, r, a32(b, ir_op_shl, i->src[2], k32(b, 2 * bits)));
  return r;
}

/* ---- fns.b32 d, mask, base, offset (9.7.1.17) --------------------------- */
/* The position of the |offset|-th set bit of mask counting from base up
 * (offset > 0) or down (offset < 0), base included; offset 0: base itself
 * if its bit is set; 0xffffffff when there is none or base is outside
 * 0..31.  Up: the k-th lowest set bit of mask & (~0 << base), k = offset;
 * down: of mask & ((2 << base) - 1), k = popc - |offset| + 1. */
static ir_value *nth_set_bit(ir_builder *b, ir_value *x, ir_value *k) {
  ir_value *pos = k32(b, 0), *n = k;
  for (unsigned w = 16; w; w >>= 1) {
    ir_value *low = a32(b, ir_op_and, a32(b, ir_op_shr, x, pos), k32(b, (1u << w) - 1));
    ir_value *c = ir_alu1(b, ir_op_popc, ir_type_b32, low);
    ir_value *go = cmp(b, IR_CMP_GT, ir_type_u32, n, c);
    pos = sel(b, ir_type_b32, go, a32(b, ir_op_add, pos, k32(b, w)), pos);
    n = sel(b, ir_type_b32, go, a32(b, ir_op_sub, n, c), n);
  }
  return pos;
}

static ir_value *lower_fns(ir_builder *b, ir_instr *i) {
  ir_value *mask = i->src[0], *base = i->src[1], *off = i->src[2];
  ir_value *inrange = cmp(b, IR_CMP_LT, ir_type_u32, base, k32(b, 32));
  ir_value *up = cmp(b, IR_CMP_GT, ir_type_s32, off, k32(b, 0));
  ir_value *mup = a32(b, ir_op_and, mask, a32(b, ir_op_shl, k32(b, 0xffffffffu), base));
  ir_value *mdn = a32(b, ir_op_and, mask, a32(b, ir_op_sub, a32(b, ir_op_shl, k32(b, 2), base), k32(b, 1)));
  ir_value *m = sel(b, ir_type_b32, up, mup, mdn);
  ir_value *pc = ir_alu1(b, ir_op_popc, ir_type_b32, m);
  ir_value *aoff = sel(b, ir_type_b32, up, off, a32(b, ir_op_sub, k32(b, 0), off));   /* |offset| (u32) */
  ir_value *k = sel(b, ir_type_b32, up, off, a32(b, ir_op_add, a32(b, ir_op_sub, pc, aoff), k32(b, 1)));
  ir_value *found = pand(b, inrange, cmp(b, IR_CMP_LE, ir_type_u32, aoff, pc));
  ir_value *r = sel(b, ir_type_b32, found, nth_set_bit(b, m, k), k32(b, 0xffffffffu));
  /* offset 0 */
  ir_value *bit = a32(b, ir_op_and, a32(b, ir_op_shr, mask, base), k32(b, 1));
  ir_value *r0 = sel(b, ir_type_b32, pand(b, inrange, cmp(b, IR_CMP_NE, ir_type_b32, bit, k32(b, 0))), base,
                     k32(b, 0xffffffffu));
  return sel(b, ir_type_b32, cmp(b, IR_CMP_EQ, ir_type_b32, off, k32(b, 0)), r0, r);
}

/* fma/mad and mul with .rz/.rm/.rp (9.7.3.3, 9.7.3.5) are not lowered:
 * codegen runs the one hardware instruction under the wanted rounding mode
 * (codegen/cg_emit.c mode_rounded, docs/codegen.md), exact everywhere,
 * subnormal results included. */
static ir_value *f2(ir_builder *b, ir_op op, ir_value *x, ir_value *y) {
  return ir_alu2(b, op, ir_type_f64, x, y, .rnd = IR_RND_RN);
}
static ir_value *ffma(ir_builder *b, ir_value *x, ir_value *y, ir_value *z) {
  return ir_alu3(b, ir_op_fma, ir_type_f64, x, y, z, .rnd = IR_RND_RN);
}
static ir_value *fneg(ir_builder *b, ir_value *x) { return a64(b, ir_op_xor, x, k64(b, 1ull << 63)); }
static ir_value *fcmp(ir_builder *b, ir_cmp c, ir_value *x, ir_value *y) { return cmp(b, c, ir_type_f64, x, y); }
static ir_value *fin64(ir_builder *b, ir_value *x) {
  return cmp(b, IR_CMP_LT, ir_type_u64, a64(b, ir_op_and, x, k64(b, ~0ull >> 1)), k64(b, 0x7ff0000000000000ull));
}
static ir_value *expfield(ir_builder *b, ir_value *x) {
  ir_value *lo, *hi;
  split64(b, x, &lo, &hi);
  return a32(b, ir_op_and, a32(b, ir_op_shr, hi, k32(b, 20)), k32(b, 0x7ff));
}

/* ---- div/rcp/sqrt.rz/.rm/.rp.f32 (9.7.3.8, 9.7.3.13, 9.7.3.15) ---------- */
/* In f64: q = a/b rounded to nearest, and the sign of the exact quotient's
 * difference from it, that of fma(-q, b, a) times b's sign (exact here:
 * f32 operands are far from f64's underflow, where codegen's f32 residual
 * is not).  r = cvt.rz/rm/rp.f32.f64(q) is the directed result unless q
 * itself is an f32 value (no f32 value lies strictly between q and the
 * exact quotient: q is the nearest f64 to it); then r = q and one f32 ulp
 * of integer stepping toward the exact side where the direction asks.
 * sqrt the same with q = sqrt.rn(a) and the residual a - q*q (checked
 * against the host's sqrtf in each mode for all 2^32 inputs). */
static ir_value *lower_div_f32_directed(ir_builder *b, ir_instr *i) {
  ir_rnd rnd = (ir_rnd)i->mods.rnd;
  bool rcp = i->op == ir_op_rcp, sq = i->op == ir_op_sqrt;
  ir_value *w[2];
  for (unsigned k = 0; k < (rcp || sq ? 1u : 2u); k++) w[k] = ir_convert(b, ir_type_f64, ir_type_f32, i->src[k]);
  ir_value *a, *d, *q;
  if (sq) {   /* q = sqrt.rn(a), residual a - q*q (exact: q is the nearest) */
    a = w[0];
    q = d = ir_alu1(b, ir_op_sqrt, ir_type_f64, a, .rnd = IR_RND_RN);
  } else {
    a = rcp ? ir_imm_f64(b, 1.0) : w[0];
    d = rcp ? w[0] : w[1];
    q = f2(b, ir_op_div, a, d);
  }
  ir_value *res = ffma(b, fneg(b, q), d, a);
  ir_value *dneg = sq ? cmp(b, IR_CMP_NE, ir_type_b32, k32(b, 0), k32(b, 0))
                      : cmp(b, IR_CMP_NE, ir_type_b64, a64(b, ir_op_and, d, k64(b, 1ull << 63)), k64(b, 0));
  ir_value *rp = fcmp(b, IR_CMP_GT, res, ir_imm_f64(b, 0.0)), *rn = fcmp(b, IR_CMP_LT, res, ir_imm_f64(b, 0.0));
  ir_value *gt = sel(b, ir_type_pred, dneg, rn, rp), *lt = sel(b, ir_type_pred, dneg, rp, rn);   /* exact vs q */
  ir_value *r = ir_convert(b, ir_type_f32, ir_type_f64, q, .rnd = (uint8_t)rnd);
  ir_value *back = ir_convert(b, ir_type_f64, ir_type_f32, r);
  ir_value *onq = fcmp(b, IR_CMP_EQ, back, q);   /* q is an f32 value (false for NaN) */
  gt = pand(b, gt, onq);
  lt = pand(b, lt, onq);
  ir_value *rpos = cmp(b, IR_CMP_GT, ir_type_f32, r, ir_imm_f32(b, 0.0f));
  ir_value *rneg = cmp(b, IR_CMP_LT, ir_type_f32, r, ir_imm_f32(b, 0.0f));
  ir_value *isz = cmp(b, IR_CMP_EQ, ir_type_f32, r, ir_imm_f32(b, 0.0f));
  ir_value *m1 = a32(b, ir_op_sub, r, k32(b, 1)), *p1 = a32(b, ir_op_add, r, k32(b, 1));
  ir_value *out;
  switch (rnd) {
  case IR_RND_RZ: out = sel(b, ir_type_b32, por(b, pand(b, rpos, lt), pand(b, rneg, gt)), m1, r); break;
  case IR_RND_RM:
    out = sel(b, ir_type_b32, lt, sel(b, ir_type_b32, isz, k32(b, 0x80000001u), sel(b, ir_type_b32, rpos, m1, p1)), r);
    break;
  default:
    out = sel(b, ir_type_b32, gt, sel(b, ir_type_b32, isz, k32(b, 1), sel(b, ir_type_b32, rneg, m1, p1)), r);
    break;
  }
  return ir_copy(b, ir_type_f32, out);
}

/* ---- div/rcp.rz/.rm/.rp.f64 (9.7.3.8, 9.7.3.13) ------------------------- */
/* Codegen's residual method misses the one-ulp step where the residual
 * fma(-q, b, a) underflows (quotients near 2^-1022 and subnormal).  Exact
 * instead, for finite nonzero a and b:
 *   - a = A * 2^ea, b = B * 2^eb with A, B in [1, 2) (subnormals
 *     normalized on the integer bits, as enc_from_f64 does);
 *   - q = A/B rounded to nearest lies in [0.5, 2) and the residual
 *     r = fma(-q, B, A) is exact there (far from underflow and overflow:
 *     the remainder of a correctly rounded quotient is representable),
 *     its sign the side of q the exact A/B lies on (B > 0);
 *   - with q = Mq * 2^(eq-52), the exact a/b lies strictly inside
 *     (X - 1, X + 1) quarter-ulps of q, or is exactly X, where
 *     X = 4*Mq + sign(r): rounding X toward zero/down/up on any grid of
 *     at least two quarter-ulps gives the same result and inexactness as
 *     rounding a/b (no grid point lies strictly between X and a/b), so
 *     there is one rounding, never two;
 *   - X * 2^(eq+ea-eb-54) is then rounded once on the integers to the
 *     f64 grid, normal, subnormal (quantum 2^-1074) or past the largest
 *     (.rz: max finite; .rm/.rp: inf on the side the direction points
 *     to, max finite on the other), the encoding built as enc_from_f64
 *     builds it, with the sign of a times b.
 * Zero, inf and NaN operands take div.rn's result (exact there: 0, inf
 * or NaN, with the sign rules of 9.7.3.8).  Checked against the host's
 * division under fesetround on 3e7 random, edge, subnormal-boundary and
 * overflow pairs in each mode (plus 1/b), and by tests/lower/ptx/math.ptx. */
static void norm_f64(ir_builder *b, ir_value *x, ir_value **unit, ir_value **ex) {
  ir_value *e = expfield(b, x);
  ir_value *frac = a64(b, ir_op_and, x, k64(b, (1ull << 52) - 1));
  ir_value *ez = cmp(b, IR_CMP_EQ, ir_type_b32, e, k32(b, 0));
  ir_value *M0 = sel(b, ir_type_b64, ez, frac, a64(b, ir_op_or, frac, k64(b, 1ull << 52)));
  ir_value *L = a32(b, ir_op_sub, k32(b, 63), ir_alu1(b, ir_op_clz, ir_type_b64, M0));   /* leading one */
  ir_value *M = a64(b, ir_op_shl, M0, a32(b, ir_op_sub, k32(b, 52), L));
  *ex = a32(b, ir_op_add, a32(b, ir_op_sub, sel(b, ir_type_b32, ez, k32(b, 1), e), k32(b, 1075)), L);
  *unit = a64(b, ir_op_or, a64(b, ir_op_and, M, k64(b, (1ull << 52) - 1)), k64(b, 0x3ff0000000000000ull));
}

static ir_value *lower_div_f64_directed(ir_builder *b, ir_instr *i) {
  ir_rnd rnd = (ir_rnd)i->mods.rnd;
  bool rcp = i->op == ir_op_rcp;
  ir_value *a = rcp ? ir_imm_f64(b, 1.0) : i->src[0], *d = rcp ? i->src[0] : i->src[1];
  ir_value *qs = f2(b, ir_op_div, a, d);   /* the result for zero, inf and NaN operands */
  ir_value *plain = pand(b, pand(b, fin64(b, a), fin64(b, d)),
                         pand(b, fcmp(b, IR_CMP_NE, a, ir_imm_f64(b, 0.0)), fcmp(b, IR_CMP_NE, d, ir_imm_f64(b, 0.0))));
  ir_value *A, *Bu, *ea, *eb;
  norm_f64(b, a, &A, &ea);
  norm_f64(b, d, &Bu, &eb);
  ir_value *q = f2(b, ir_op_div, A, Bu);
  ir_value *r = ffma(b, fneg(b, q), Bu, A);
  ir_value *rpos = fcmp(b, IR_CMP_GT, r, ir_imm_f64(b, 0.0)), *rneg = fcmp(b, IR_CMP_LT, r, ir_imm_f64(b, 0.0));
  ir_value *Mq = a64(b, ir_op_or, a64(b, ir_op_and, q, k64(b, (1ull << 52) - 1)), k64(b, 1ull << 52));
  ir_value *X = a64(b, ir_op_shl, Mq, k32(b, 2));
  X = a64(b, ir_op_add, X, sel(b, ir_type_b64, rpos, k64(b, 1), sel(b, ir_type_b64, rneg, k64(b, ~0ull), k64(b, 0))));
  /* x0: the exponent of X's bit 0; E: of its leading one */
  ir_value *x0 = a32(b, ir_op_add, a32(b, ir_op_sub, expfield(b, q), k32(b, 1023 + 54)), a32(b, ir_op_sub, ea, eb));
  ir_value *E = a32(b, ir_op_add, x0, a32(b, ir_op_sub, k32(b, 63), ir_alu1(b, ir_op_clz, ir_type_b64, X)));
  ir_value *Emax = smax(b, E, k32(b, (uint32_t)-1022));
  /* at least 1 (X has 54 or 55 bits); at 60 every bit of X is below the quantum */
  ir_value *shift = umin(b, a32(b, ir_op_sub, a32(b, ir_op_sub, Emax, k32(b, 52)), x0), k32(b, 60));
  ir_value *N = a64(b, ir_op_shr, X, shift);
  ir_value *below = a64(b, ir_op_sub, a64(b, ir_op_shl, k64(b, 1), shift), k64(b, 1));
  ir_value *inexact = cmp(b, IR_CMP_NE, ir_type_b64, a64(b, ir_op_and, X, below), k64(b, 0));
  ir_value *sgn = a64(b, ir_op_and, rcp ? d : a64(b, ir_op_xor, a, d), k64(b, 1ull << 63));
  ir_value *neg = cmp(b, IR_CMP_NE, ir_type_b64, sgn, k64(b, 0));
  ir_value *up = NULL;
  if (rnd == IR_RND_RM) up = pand(b, inexact, neg);
  else if (rnd == IR_RND_RP) up = pand(b, inexact, pnot(b, neg));
  if (up) N = a64(b, ir_op_add, N, sel(b, ir_type_b64, up, k64(b, 1), k64(b, 0)));
  /* the exponent field, clamped just past the largest (anything clamped
   * overflows); a carry out of N moves into the exponent by itself */
  ir_value *Ec = smin(b, Emax, k32(b, 1025));
  ir_value *enc = a64(b, ir_op_add, a64(b, ir_op_shl, lower_zext64(b, a32(b, ir_op_add, Ec, k32(b, 1022))), k32(b, 52)), N);
  ir_value *inf = k64(b, 0x7ff0000000000000ull), *mf = k64(b, 0x7fefffffffffffffull);
  ir_value *big = rnd == IR_RND_RZ ? mf : rnd == IR_RND_RM ? sel(b, ir_type_b64, neg, inf, mf) : sel(b, ir_type_b64, neg, mf, inf);
  ir_value *mag = sel(b, ir_type_b64, cmp(b, IR_CMP_GE, ir_type_u64, enc, inf), big, enc);
  return ir_copy(b, ir_type_f64, sel(b, ir_type_b64, plain, a64(b, ir_op_or, sgn, mag), qs));
}

/* ---- sqrt.rz/.rm/.rp.f64 (9.7.3.15) ------------------------------------- */
/* Codegen's residual a - s*s lies on a grid about 2^-104 times a's, below
 * the subnormal grid for tiny inputs (a under about 2^-970), and then can
 * miss the one-ulp step.  Exact
 * instead, for finite a > 0: a = A * 2^(2h) with A in [1, 4) (A's
 * exponent 0 or 1, subnormals normalized as in norm_f64); q = sqrt.rn(A)
 * in [1, 2) and its residual fma(-q, q, A) are exact there; one ulp of
 * integer stepping toward the asked side (the root is positive: .rz is
 * .rm); then q * 2^h, exact because sqrt of any positive f64 is normal
 * (between 2^-537 and 2^512).  Other inputs (+-0, +inf, NaN, negatives)
 * take sqrt.rn's result.  Checked against the host's sqrt under fesetround
 * on 3.6e7 random, tiny, subnormal and edge inputs in each mode. */
static ir_value *lower_sqrt_f64_directed(ir_builder *b, ir_instr *i) {
  ir_rnd rnd = (ir_rnd)i->mods.rnd;
  ir_value *a = i->src[0];
  ir_value *qs = ir_alu1(b, ir_op_sqrt, ir_type_f64, a, .rnd = IR_RND_RN);
  /* finite and > 0: as a signed 64-bit integer, 0 < a < +inf */
  ir_value *plain = pand(b, cmp(b, IR_CMP_GT, ir_type_s64, a, k64(b, 0)),
                         cmp(b, IR_CMP_LT, ir_type_s64, a, k64(b, 0x7ff0000000000000ull)));
  ir_value *U, *e;
  norm_f64(b, a, &U, &e);
  ir_value *odd = a32(b, ir_op_and, e, k32(b, 1));
  ir_value *A = a64(b, ir_op_add, U, a64(b, ir_op_shl, lower_zext64(b, odd), k32(b, 52)));   /* [1, 4) */
  ir_value *q = ir_alu1(b, ir_op_sqrt, ir_type_f64, A, .rnd = IR_RND_RN);
  ir_value *r = ffma(b, fneg(b, q), q, A);
  ir_value *step = rnd == IR_RND_RP ? sel(b, ir_type_b64, fcmp(b, IR_CMP_GT, r, ir_imm_f64(b, 0.0)), k64(b, 1), k64(b, 0))
                                    : sel(b, ir_type_b64, fcmp(b, IR_CMP_LT, r, ir_imm_f64(b, 0.0)), k64(b, ~0ull), k64(b, 0));
  ir_value *qd = a64(b, ir_op_add, q, step);
  /* 2^h: the exponent field h + 1023 = (e - odd + 2046) / 2, positive */
  ir_value *hf = a32(b, ir_op_shr, a32(b, ir_op_add, a32(b, ir_op_sub, e, odd), k32(b, 2046)), k32(b, 1));
  ir_value *scale = a64(b, ir_op_shl, lower_zext64(b, hf), k32(b, 52));
  ir_value *res = f2(b, ir_op_mul, qd, scale);
  return ir_copy(b, ir_type_f64, sel(b, ir_type_b64, plain, res, qs));
}

/* ---- half-precision transcendentals -------------------------------------- */
/* ex2.approx.f16 is codegen's (v_exp_f16).  tanh.approx.f16/.bf16 and
 * ex2.approx.bf16 go through f32: the exact widening, the f32 approximation,
 * cvt.rn back.  In the emulator that is bit-identical to its direct f16/bf16
 * evaluation (rounding the double result once): checked for all 65,536
 * inputs of each (the f32 rounding never lands on a half tie).  .ftz is
 * dropped: the emulator keeps bf16 subnormals, and an f16 tanh has no
 * subnormal input that the f32 form would flush. */
static ir_value *half_unary(ir_builder *b, const ir_instr *i, ir_type et, ir_value *x) {
  if (i->op == ir_op_ex2 && et == ir_type_f16) {
    ir_mods m = i->mods;
    return ir_build_value(b, ir_op_ex2, et, 1, (ir_value *[]){x}, &m);
  }
  ir_value *w = ir_convert(b, ir_type_f32, et, x);
  ir_value *r = ir_build_value(b, (ir_op)i->op, ir_type_f32, 1, (ir_value *[]){w}, IR_MODS(.approx = 1));
  return ir_convert(b, et, ir_type_f32, r, .rnd = IR_RND_RN);
}

/* f16x2/bf16x2: per half (the emulator evaluates each half alone too). */
static ir_value *lower_half_unary(ir_builder *b, ir_instr *i) {
  if (i->type == ir_type_f16 || i->type == ir_type_bf16) return half_unary(b, i, (ir_type)i->type, i->src[0]);
  ir_type et = i->type == ir_type_f16x2 ? ir_type_f16 : ir_type_bf16;
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, (ir_value *[]){i->src[0]}, 2,
                         (ir_type[]){ir_type_b16, ir_type_b16}, NULL);
  ir_value *h[2];
  for (unsigned k = 0; k < 2; k++) h[k] = half_unary(b, i, et, u->dst[k]);
  return ir_build_value(b, ir_op_pack, ir_type_b32, 2, h, NULL);
}

/* ---- the pass ------------------------------------------------------------ */
static bool want(const ir_instr *i, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_cvt: return want_cvt(i);
  case ir_op_cvt_pack: {
    unsigned bits = ir_type_bits((ir_type)i->type);
    return i->mods.sat && (i->nsrc == 2 || i->nsrc == 3) && bits && bits <= 16 &&
           (ir_type_kind_of((ir_type)i->type) == IR_TK_UINT || ir_type_kind_of((ir_type)i->type) == IR_TK_SINT);
  }
  case ir_op_fns: return i->nsrc == 3;
  case ir_op_div:
    return (i->type == ir_type_f32 || i->type == ir_type_f64) && is_directed(i->mods.rnd) && i->nsrc == 2 && !i->mods.ftz && !i->mods.sat &&
           !i->mods.approx && !i->mods.full;
  case ir_op_rcp:
    return (i->type == ir_type_f32 || i->type == ir_type_f64) && is_directed(i->mods.rnd) && i->nsrc == 1 &&
           !i->mods.ftz && !i->mods.approx;
  case ir_op_sqrt:
    return (i->type == ir_type_f32 || i->type == ir_type_f64) && is_directed(i->mods.rnd) && i->nsrc == 1 && !i->mods.ftz && !i->mods.approx;
  case ir_op_ex2: case ir_op_tanh:
    return i->nsrc == 1 && (i->type == ir_type_f16x2 || i->type == ir_type_bf16x2 || i->type == ir_type_bf16 ||
                            (i->op == ir_op_tanh && i->type == ir_type_f16));
  default: return false;
  }
}

/* Eliminates the forms of these ops that want() selects (codegen maps the
 * others one to one); its expansions must not rebuild one (the check would
 * name it). */
const lower_contract lower_math_contract = {
    .pass = "lower_math",
    .ops = (const ir_op[]){ir_op_cvt, ir_op_cvt_pack, ir_op_fns, ir_op_div, ir_op_rcp, ir_op_sqrt, ir_op_ex2,
                           ir_op_tanh, ir_op_count},
    .form = want,
    .preserves = 0,
};

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_cvt:
    if (i->type == ir_type_ue8m0x2 || i->type2 == ir_type_ue8m0x2) out[0] = lower_cvt_ue8m0(b, i);
    else if (is_int((ir_type)i->type2)) out[0] = lower_cvt_int_directed(b, i);
    else out[0] = lower_cvt(b, i);
    return true;
  case ir_op_cvt_pack: out[0] = lower_cvt_pack(b, i); return true;
  case ir_op_fns: out[0] = lower_fns(b, i); return true;
  case ir_op_div: case ir_op_rcp: case ir_op_sqrt:
    out[0] = i->type != ir_type_f64 ? lower_div_f32_directed(b, i)
           : i->op == ir_op_sqrt  ? lower_sqrt_f64_directed(b, i) : lower_div_f64_directed(b, i);
    return true;
  case ir_op_ex2: case ir_op_tanh: out[0] = lower_half_unary(b, i); return true;
  default: return false;
  }
}

bool lower_math(ir_module *m, const lower_math_options *opt) {
  (void)opt;
  return lower_walk(m, want, lower_instr, NULL);
}
