/* emu/emu_float.c: floating-point arithmetic (PTX ISA 9.7.3, 9.7.4 half
 * precision, 9.7.5 mixed precision) in every rounding mode.
 *
 * Rounding: .rn is the host's default mode; .rz/.rm/.rp set the host
 * rounding mode with fesetround() around the lane loop of one instruction
 * and restore it after (this file is compiled with -frounding-math so the
 * compiler neither folds nor moves float operations across those calls).
 * f16 and bf16 results are computed exactly in double (sums and products of
 * two halves are exact there; fma uses a round-to-odd double, which rounds
 * correctly to any format of at most 51 bits) and rounded once by
 * emu_fp_round.
 *
 * NaN: every NaN result is the canonical NaN of its type (f32 0x7fffffff,
 * f64 0x7fffffffffffffff, f16/bf16 0x7fff): NVIDIA GPUs do not propagate
 * NaN payloads in single precision, and one rule for all types keeps
 * results independent of the host's NaN propagation.
 *
 * .ftz flushes subnormal inputs and results to sign-preserving zero (f32,
 * f16); .sat clamps to [0, 1] with NaN giving +0.  Approximate functions
 * (rcp/sqrt/rsqrt/sin/cos/lg2/ex2/tanh .approx) are computed in double and
 * rounded to the result type: well inside the PTX ISA's error bounds, and
 * deterministic on one host.
 */
#ifdef __clang__
#pragma STDC FENV_ACCESS ON
#endif
#include <fenv.h>
#include <math.h>

#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])
#define LANES(...) EMU_LANES(x, m, l, __VA_ARGS__)

static int host_mode(unsigned rnd) {
  switch (rnd) {
  case IR_RND_RZ: return FE_TOWARDZERO;
  case IR_RND_RM: return FE_DOWNWARD;
  case IR_RND_RP: return FE_UPWARD;
  default: return FE_TONEAREST;
  }
}

static emu_rnd emu_mode(unsigned rnd) {
  switch (rnd) {
  case IR_RND_RZ: return EMU_RZ;
  case IR_RND_RM: return EMU_RM;
  case IR_RND_RP: return EMU_RP;
  case IR_RND_RNA: return EMU_RNA;
  default: return EMU_RN;
  }
}

/* Sets the host rounding mode for one instruction; returns the old one. */
static inline int mode_enter(const emu_inst *in) {
  int old = fegetround();
  if (in->mods.rnd && in->mods.rnd != IR_RND_RN) fesetround(host_mode(in->mods.rnd));
  return old;
}
static inline void mode_leave(const emu_inst *in, int old) {
  if (in->mods.rnd && in->mods.rnd != IR_RND_RN) fesetround(old);
}

/* ---- f32 ------------------------------------------------------------------ */
static inline uint32_t f32_out(const emu_inst *in, float r) {
  uint32_t b = emu_f32_bits(r);
  if (emu_f32_is_nan(b)) return in->mods.sat ? 0 : EMU_F32_CANON_NAN;
  if (in->mods.ftz) b = emu_f32_ftz(b);
  if (in->mods.sat) {
    float v = emu_f32(b);
    if (!(v > 0.0f)) b = 0;
    else if (v >= 1.0f) b = 0x3f800000u;
  }
  return b;
}

static inline float f32_in(const emu_inst *in, uint64_t v) {
  uint32_t b = (uint32_t)v;
  return emu_f32(in->mods.ftz ? emu_f32_ftz(b) : b);
}

/* the fast cases: .rn, no .ftz/.sat */
#define F32_FAST2(name, OP) \
  static void name(emu_exec *x, const emu_inst *in, emu_mask m) { \
    const uint64_t *a = S(0), *b = S(1); \
    uint64_t *d = D(0); \
    LANES({ \
      float r = emu_f32((uint32_t)a[l]) OP emu_f32((uint32_t)b[l]); \
      uint32_t rb = emu_f32_bits(r); \
      d[l] = r != r ? EMU_F32_CANON_NAN : rb; \
    }); \
  }
F32_FAST2(h_add_f32, +)
F32_FAST2(h_sub_f32, -)
F32_FAST2(h_mul_f32, *)

/* fma with the host's FMA instruction where it has one, chosen at load time
 * (fmaf() through the PLT per lane costs a call each) */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define EMU_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define EMU_FMA_CLONES
#endif

EMU_FMA_CLONES static void h_fma_f32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  LANES({
    float r = fmaf(emu_f32((uint32_t)a[l]), emu_f32((uint32_t)b[l]), emu_f32((uint32_t)c[l]));
    uint32_t rb = emu_f32_bits(r);
    d[l] = r != r ? EMU_F32_CANON_NAN : rb;
  });
}

/* in->sub: 0 add, 1 sub, 2 mul, 3 fma, 4 div, 5 min, 6 max */
enum { FOP_ADD, FOP_SUB, FOP_MUL, FOP_FMA, FOP_DIV, FOP_MIN, FOP_MAX };

static void h_f32_generic(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = in->sub == FOP_FMA ? S(2) : NULL;
  uint64_t *d = D(0);
  int old = mode_enter(in);
  EMU_EACH(m, l, {
    float av = f32_in(in, a[l]), bv = f32_in(in, b[l]), r;
    switch (in->sub) {
    case FOP_ADD: r = av + bv; break;
    case FOP_SUB: r = av - bv; break;
    case FOP_MUL: r = av * bv; break;
    case FOP_FMA: r = fmaf(av, bv, f32_in(in, c[l])); break;
    default: r = av / bv; break;
    }
    d[l] = f32_out(in, r);
  });
  mode_leave(in, old);
}

/* f32x2 (PTX 8.6 add/sub/mul/fma.f32x2): two f32 in one 64-bit value */
static void h_f32x2(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = in->sub == FOP_FMA ? S(2) : NULL;
  uint64_t *d = D(0);
  int old = mode_enter(in);
  EMU_EACH(m, l, {
    uint64_t out = 0;
    for (unsigned h = 0; h < 2; h++) {
      float av = f32_in(in, a[l] >> (32 * h)), bv = f32_in(in, b[l] >> (32 * h)), r;
      switch (in->sub) {
      case FOP_ADD: r = av + bv; break;
      case FOP_SUB: r = av - bv; break;
      case FOP_MUL: r = av * bv; break;
      default: r = fmaf(av, bv, f32_in(in, c[l] >> (32 * h))); break;
      }
      out |= (uint64_t)f32_out(in, r) << (32 * h);
    }
    d[l] = out;
  });
  mode_leave(in, old);
}

/* ---- f64 ------------------------------------------------------------------ */
static inline uint64_t f64_out(const emu_inst *in, double r) {
  uint64_t b = emu_f64_bits(r);
  if (r != r) return in->mods.sat ? 0 : EMU_F64_CANON_NAN;
  if (in->mods.sat) {
    if (!(r > 0.0)) b = 0;
    else if (r >= 1.0) b = 0x3ff0000000000000ull;
  }
  return b;
}

static void h_add_f64(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES({
    double r = emu_f64(a[l]) + emu_f64(b[l]);
    d[l] = r != r ? EMU_F64_CANON_NAN : emu_f64_bits(r);
  });
}

static void h_mul_f64(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  LANES({
    double r = emu_f64(a[l]) * emu_f64(b[l]);
    d[l] = r != r ? EMU_F64_CANON_NAN : emu_f64_bits(r);
  });
}

EMU_FMA_CLONES static void h_fma_f64(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  LANES({
    double r = fma(emu_f64(a[l]), emu_f64(b[l]), emu_f64(c[l]));
    d[l] = r != r ? EMU_F64_CANON_NAN : emu_f64_bits(r);
  });
}

static void h_f64_generic(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = in->sub == FOP_FMA ? S(2) : NULL;
  uint64_t *d = D(0);
  int old = mode_enter(in);
  EMU_EACH(m, l, {
    double av = emu_f64(a[l]), bv = emu_f64(b[l]), r;
    switch (in->sub) {
    case FOP_ADD: r = av + bv; break;
    case FOP_SUB: r = av - bv; break;
    case FOP_MUL: r = av * bv; break;
    case FOP_FMA: r = fma(av, bv, emu_f64(c[l])); break;
    default: r = av / bv; break;
    }
    d[l] = f64_out(in, r);
  });
  mode_leave(in, old);
}

/* ---- f16 / bf16 (scalar and packed) ----------------------------------------- */
/* Round-to-odd sum of two doubles: s + e == p + c exactly (TwoSum); the
 * result's last bit records whether e was non-zero.  Rounding that to a
 * format with at most 51 significand bits gives the correctly rounded sum. */
static double sum_rto(double p, double c) {
  double s = p + c;
  if (isinf(s) || isnan(s)) return s;
  double bp = s - c, e = (p - bp) + (c - (s - bp));
  if (e == 0) return s;   /* exact, signed zeros included (s == 0 implies exact) */
  uint64_t bits = emu_f64_bits(s);
  bool same = (e > 0) == (s > 0);
  if (!same) bits -= 1;      /* truncate toward zero: the predecessor in magnitude */
  bits |= 1;
  return emu_f64(bits);
}

static const emu_fpfmt *half_fmt(ir_type t) {
  return (t == ir_type_bf16 || t == ir_type_bf16x2) ? &emu_fmt_bf16 : &emu_fmt_f16;
}

static inline double half_in(const emu_inst *in, const emu_fpfmt *f, uint64_t bits) {
  uint16_t h = (uint16_t)bits;
  if (in->mods.ftz && f == &emu_fmt_f16) h = emu_f16_ftz(h);
  return emu_fp_to_double(f, h);
}

static inline uint16_t half_out(const emu_inst *in, const emu_fpfmt *f, double r) {
  if (r != r) return in->mods.sat ? 0 : 0x7fff;
  if (in->mods.sat) {
    if (!(r > 0)) return 0;
    if (r >= 1) return f == &emu_fmt_f16 ? 0x3c00 : 0x3f80;
  }
  unsigned flags = (in->mods.ftz && f == &emu_fmt_f16 ? EMU_FP_FTZ : 0) | (in->mods.relu ? EMU_FP_RELU : 0);
  if (in->mods.satfinite) flags |= EMU_FP_SATFINITE;
  uint16_t h = (uint16_t)emu_fp_from_double(f, r, emu_mode(in->mods.rnd), flags);
  return h;
}

static double half_op(unsigned op, double a, double b, double c) {
  switch (op) {
  case FOP_ADD: return a + b;                      /* exact in double */
  case FOP_SUB: return a - b;
  case FOP_MUL: return a * b;                      /* 22 bits: exact */
  case FOP_FMA: return sum_rto(a * b, c);
  default: return a / b;
  }
}

static void h_half(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = in->sub == FOP_FMA ? S(2) : NULL;
  uint64_t *d = D(0);
  const emu_fpfmt *f = half_fmt((ir_type)in->type);
  bool packed = in->type == ir_type_f16x2 || in->type == ir_type_bf16x2;
  unsigned nh = packed ? 2 : 1;
  EMU_EACH(m, l, {
    uint64_t out = 0;
    for (unsigned h = 0; h < nh; h++) {
      double av = half_in(in, f, a[l] >> (16 * h)), bv = half_in(in, f, b[l] >> (16 * h));
      double cv = c ? half_in(in, f, c[l] >> (16 * h)) : 0;
      out |= (uint64_t)half_out(in, f, half_op(in->sub, av, bv, cv)) << (16 * h);
    }
    d[l] = out;
  });
}

/* ---- min / max ---------------------------------------------------------------- */
/* IEEE minNum/maxNum with -0 < +0: NaN inputs are ignored unless all are
 * NaN; with .NaN any NaN input gives NaN.  .xorsign.abs: min/max of the
 * magnitudes, with the xor of the input signs. */
static inline double fpick(bool mx, double a, double b) {
  if (a == b) {
    bool as = signbit(a);
    return mx ? (as ? b : a) : (as ? a : b);
  }
  return mx ? (a > b ? a : b) : (a < b ? a : b);
}

static void h_minmax_f(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_type t = (ir_type)in->type;
  bool mx = in->op == ir_op_max, nanm = in->mods.nan, xs = in->mods.xorsign;
  unsigned n = in->nsrc;
  const uint64_t *s[3] = {S(0), S(1), n > 2 ? S(2) : NULL};
  uint64_t *d = D(0);
  bool packed = t == ir_type_f16x2 || t == ir_type_bf16x2;
  const emu_fpfmt *hf = half_fmt(t);
  unsigned nh = packed ? 2 : 1;
  EMU_EACH(m, l, {
    uint64_t out = 0;
    for (unsigned h = 0; h < nh; h++) {
      bool sign_x = false, any_nan = false, have = false;
      double r = 0;
      for (unsigned k = 0; k < n; k++) {
        uint64_t raw = s[k][l];
        double val;
        if (t == ir_type_f64) val = emu_f64(raw);
        else if (t == ir_type_f32) val = f32_in(in, raw);
        else val = half_in(in, hf, raw >> (16 * h));
        if (xs) {
          /* the sign is the xor of every input's, NaN inputs included */
          sign_x ^= (bool)signbit(val);
          val = fabs(val);
        }
        if (val != val) {
          any_nan = true;
          continue;
        }
        r = have ? fpick(mx, r, val) : val;
        have = true;
      }
      bool nanres = !have || (nanm && any_nan);
      if (!nanres && xs) r = sign_x ? -fabs(r) : fabs(r);
      if (!nanres && in->mods.relu && (r < 0 || signbit(r))) r = 0.0;
      uint64_t bits;
      if (t == ir_type_f64) {
        bits = nanres ? EMU_F64_CANON_NAN : emu_f64_bits(r);
      } else if (t == ir_type_f32) {
        bits = nanres ? EMU_F32_CANON_NAN : emu_f32_bits((float)r);
        if (!nanres && in->mods.ftz) bits = emu_f32_ftz((uint32_t)bits);
      } else {
        bits = nanres ? 0x7fff : emu_fp_from_double(hf, r, EMU_RN, 0);
      }
      out |= bits << (16 * h);
    }
    d[l] = out;
  });
}

/* ---- abs / neg / copysign --------------------------------------------------- */
static void h_absneg_f(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  ir_type t = (ir_type)in->type;
  bool neg = in->op == ir_op_neg;
  uint64_t sign;
  switch (t) {
  case ir_type_f64: sign = 1ull << 63; break;
  case ir_type_f32: sign = 1ull << 31; break;
  case ir_type_f16x2: case ir_type_bf16x2: sign = 0x80008000ull; break;
  default: sign = 0x8000; break;
  }
  bool ftz = in->mods.ftz;
  LANES({
    uint64_t v = a[l];
    if (ftz && t == ir_type_f32) v = emu_f32_ftz((uint32_t)v);
    if (ftz && t == ir_type_f16) v = emu_f16_ftz((uint16_t)v);
    if (ftz && t == ir_type_f16x2) v = emu_f16_ftz((uint16_t)v) | (uint64_t)emu_f16_ftz((uint16_t)(v >> 16)) << 16;
    d[l] = neg ? v ^ sign : v & ~sign;
  });
}

/* copysign: d = b with the sign of a */
static void h_copysign(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  uint64_t sign = in->type == ir_type_f64 ? 1ull << 63 : 1ull << 31;
  LANES(d[l] = (b[l] & ~sign) | (a[l] & sign));
}

static void h_testp(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  emu_mask r = 0;
  bool f64 = in->type == ir_type_f64;
  EMU_EACH(m, l, {
    double v = f64 ? emu_f64(a[l]) : (double)emu_f32((uint32_t)a[l]);
    int c = fpclassify(v);
    bool sub = f64 ? c == FP_SUBNORMAL : ((uint32_t)a[l] & 0x7f800000u) == 0 && ((uint32_t)a[l] & 0x7fffffu);
    bool res;
    switch (in->mods.testp) {
    case IR_TESTP_FINITE: res = isfinite(v); break;
    case IR_TESTP_INFINITE: res = isinf(v); break;
    case IR_TESTP_NUMBER: res = !isnan(v); break;
    case IR_TESTP_NOTANUMBER: res = isnan(v); break;
    case IR_TESTP_NORMAL: res = c == FP_NORMAL && !sub; break;
    case IR_TESTP_SUBNORMAL: res = sub; break;
    default: res = false; break;
    }
    r |= (emu_mask)res << l;
  });
  emu_pred_write(x, in->dst[0], m, r);
}

/* ---- unary functions: rcp sqrt rsqrt sin cos lg2 ex2 tanh -------------------- */
enum { UF_RCP, UF_SQRT, UF_RSQRT, UF_SIN, UF_COS, UF_LG2, UF_EX2, UF_TANH };

static double unary(unsigned op, double v) {
  switch (op) {
  case UF_RCP: return 1.0 / v;
  case UF_SQRT: return sqrt(v);
  case UF_RSQRT: return 1.0 / sqrt(v);
  case UF_SIN: return sin(v);
  case UF_COS: return cos(v);
  case UF_LG2: return log2(v);
  case UF_EX2: return exp2(v);
  default: return tanh(v);
  }
}

/* f32 rcp/sqrt with IEEE rounding: the host operation in the mode */
static void h_unary_f32_ieee(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  int old = mode_enter(in);
  EMU_EACH(m, l, {
    float v = f32_in(in, a[l]);
    float r = in->sub == UF_RCP ? 1.0f / v : sqrtf(v);
    d[l] = f32_out(in, r);
  });
  mode_leave(in, old);
}

static void h_unary_f64_ieee(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  int old = mode_enter(in);
  EMU_EACH(m, l, {
    double v = emu_f64(a[l]);
    double r = in->sub == UF_RCP ? 1.0 / v : sqrt(v);
    d[l] = f64_out(in, r);
  });
  mode_leave(in, old);
}

/* approximate f32: computed in double, rounded to nearest f32 */
static void h_unary_f32_approx(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  EMU_EACH(m, l, {
    float v = f32_in(in, a[l]);
    d[l] = f32_out(in, (float)unary(in->sub, (double)v));
  });
}

/* approximate f64 (rcp.approx.ftz.f64, rsqrt.approx.f64 ...): in double;
 * .ftz flushes subnormal inputs and results */
static void h_unary_f64_approx(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  EMU_EACH(m, l, {
    uint64_t ab = in->mods.ftz ? emu_f64_ftz(a[l]) : a[l];
    double r = unary(in->sub, emu_f64(ab));
    uint64_t rb = f64_out(in, r);
    d[l] = in->mods.ftz ? emu_f64_ftz(rb) : rb;
  });
}

/* approximate f16/bf16 (ex2, tanh, and the .f16x2/.bf16x2 forms) */
static void h_unary_half(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  const emu_fpfmt *f = half_fmt((ir_type)in->type);
  bool packed = in->type == ir_type_f16x2 || in->type == ir_type_bf16x2;
  EMU_EACH(m, l, {
    uint64_t out = 0;
    for (unsigned h = 0; h < (packed ? 2u : 1u); h++)
      out |= (uint64_t)half_out(in, f, unary(in->sub, half_in(in, f, a[l] >> (16 * h)))) << (16 * h);
    d[l] = out;
  });
}

/* ---- selection ----------------------------------------------------------------- */
static bool is_half(ir_type t) {
  return t == ir_type_f16 || t == ir_type_bf16 || t == ir_type_f16x2 || t == ir_type_bf16x2;
}

const char *emu_sel_float(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  ir_type t = (ir_type)i->type;
  const ir_mods *md = &i->mods;
  bool plain = (!md->rnd || md->rnd == IR_RND_RN) && !md->ftz && !md->sat;
  if (md->rnd == IR_RND_RNA || md->rnd == IR_RND_RS || md->rnd >= IR_RND_RNI)
    return emu_dfmt(d, "'%s' with rounding .%s", ir_op_infos[i->op].ptx, ir_rnd_name((ir_rnd)md->rnd));
  switch ((ir_op)i->op) {
  case ir_op_add:
  case ir_op_sub:
  case ir_op_mul:
  case ir_op_mad:
  case ir_op_fma:
  case ir_op_div: {
    unsigned op = i->op == ir_op_add ? FOP_ADD : i->op == ir_op_sub ? FOP_SUB : i->op == ir_op_mul ? FOP_MUL
                : i->op == ir_op_div ? FOP_DIV : FOP_FMA;
    in->sub = (uint8_t)op;
    if (op == FOP_FMA && i->nsrc < 3) return "fma with fewer than three operands";
    if (t == ir_type_f32) {
      if (op == FOP_DIV && md->approx && md->rnd) return "div.approx with a rounding mode";
      if (plain && !md->approx && !md->full && op == FOP_ADD) in->fn = h_add_f32;
      else if (plain && op == FOP_SUB) in->fn = h_sub_f32;
      else if (plain && op == FOP_MUL) in->fn = h_mul_f32;
      else if (plain && op == FOP_FMA) in->fn = h_fma_f32;
      else in->fn = h_f32_generic;
      return NULL;
    }
    if (t == ir_type_f64) {
      if (plain && op == FOP_ADD) in->fn = h_add_f64;
      else if (plain && op == FOP_MUL) in->fn = h_mul_f64;
      else if (plain && op == FOP_FMA) in->fn = h_fma_f64;
      else in->fn = h_f64_generic;
      return NULL;
    }
    if (is_half(t)) {
      if (op == FOP_DIV) return "div of half-precision values";
      in->fn = h_half;
      return NULL;
    }
    if (t == ir_type_f32x2) {
      if (op == FOP_DIV) return "div.f32x2";
      in->fn = h_f32x2;
      return NULL;
    }
    break;
  }
  case ir_op_min:
  case ir_op_max:
    if (t != ir_type_f32 && t != ir_type_f64 && !is_half(t)) break;
    if (i->nsrc < 2 || i->nsrc > 3) return "min/max with an unexpected operand count";
    in->fn = h_minmax_f;
    return NULL;
  case ir_op_abs:
  case ir_op_neg:
    in->fn = h_absneg_f;
    return NULL;
  case ir_op_copysign:
    if (t != ir_type_f32 && t != ir_type_f64) break;
    in->fn = h_copysign;
    return NULL;
  case ir_op_testp:
    if (t != ir_type_f32 && t != ir_type_f64) break;
    in->fn = h_testp;
    return NULL;
  case ir_op_rcp:
  case ir_op_sqrt:
  case ir_op_rsqrt:
  case ir_op_sin:
  case ir_op_cos:
  case ir_op_lg2:
  case ir_op_ex2:
  case ir_op_tanh: {
    static const uint8_t uf[] = {[ir_op_rcp] = UF_RCP, [ir_op_sqrt] = UF_SQRT, [ir_op_rsqrt] = UF_RSQRT,
                                 [ir_op_sin] = UF_SIN, [ir_op_cos] = UF_COS, [ir_op_lg2] = UF_LG2,
                                 [ir_op_ex2] = UF_EX2, [ir_op_tanh] = UF_TANH};
    in->sub = uf[i->op];
    bool ieee = (i->op == ir_op_rcp || i->op == ir_op_sqrt) && !md->approx;
    if (t == ir_type_f32) {
      in->fn = ieee ? h_unary_f32_ieee : h_unary_f32_approx;
      return NULL;
    }
    if (t == ir_type_f64) {
      in->fn = ieee ? h_unary_f64_ieee : h_unary_f64_approx;
      return NULL;
    }
    if (is_half(t) && (i->op == ir_op_ex2 || i->op == ir_op_tanh)) {
      in->fn = h_unary_half;
      return NULL;
    }
    break;
  }
  default:
    break;
  }
  return emu_dfmt(d, "unsupported instruction '%s.%s'", ir_op_infos[i->op].ptx, ir_type_name(t));
}

/* The .f64 mma chain of emu_internal.h: the host mode set once around it. */
double emu_f64_fma_chain(const double *a, const double *b, size_t bstep, double c, unsigned K, unsigned rnd) {
  int old = fegetround();
  if (rnd && rnd != IR_RND_RN) fesetround(host_mode(rnd));
  double acc = c;
  for (unsigned k = 0; k < K; k++) acc = fma(a[k], b[k * bstep], acc);
  if (rnd && rnd != IR_RND_RN) fesetround(old);
  return acc;
}
