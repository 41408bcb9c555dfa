/* emu/emu_fp.c: one correctly-rounding encoder for every floating-point
 * format (see emu_fp.h).
 *
 * Algorithm of emu_fp_round: the value v = mag * 2^exp2 (+ sticky) is
 * normalised so the leading one of mag is at bit 63.  Its unbounded
 * exponent E decides the quantum: 2^(max(E, emin) - mbits), where emin =
 * 1 - bias is the smallest normal exponent (subnormals share emin's
 * quantum).  v / quantum is split into an integer N and the bits below it
 * (a round bit and a sticky bit); N is rounded per mode; a carry out of
 * the significand bumps the exponent.  Overflow is decided on the rounded
 * value, so "max finite + half an ulp" rounds to infinity under RN exactly
 * as IEEE 754 says.
 */
#include "emu_fp.h"

#include <math.h>

const emu_fpfmt emu_fmt_f64 = {64, 11, 52, 1023, EMU_NAN_IEEE, true, false};
const emu_fpfmt emu_fmt_f32 = {32, 8, 23, 127, EMU_NAN_IEEE, true, false};
const emu_fpfmt emu_fmt_tf32 = {32, 8, 10, 127, EMU_NAN_IEEE, true, false};  /* see emu_tf32 note */
const emu_fpfmt emu_fmt_f16 = {16, 5, 10, 15, EMU_NAN_IEEE, true, false};
const emu_fpfmt emu_fmt_bf16 = {16, 8, 7, 127, EMU_NAN_IEEE, true, false};
const emu_fpfmt emu_fmt_e4m3 = {8, 4, 3, 7, EMU_NAN_FN, false, false};
const emu_fpfmt emu_fmt_e5m2 = {8, 5, 2, 15, EMU_NAN_IEEE, true, false};
const emu_fpfmt emu_fmt_e2m3 = {6, 2, 3, 1, EMU_NAN_NONE, false, false};
const emu_fpfmt emu_fmt_e3m2 = {6, 3, 2, 3, EMU_NAN_NONE, false, false};
const emu_fpfmt emu_fmt_e2m1 = {4, 2, 1, 1, EMU_NAN_NONE, false, false};

static unsigned total_bits(const emu_fpfmt *f) { return 1u + f->ebits + f->mbits; }

uint64_t emu_fp_canonical_nan(const emu_fpfmt *f) {
  if (f->nan == EMU_NAN_NONE) return 0;
  return (1ull << (f->ebits + f->mbits)) - 1;
}

/* Largest finite encoding, sign clear. */
static uint64_t max_finite(const emu_fpfmt *f) {
  uint64_t emask = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
  switch (f->nan) {
  case EMU_NAN_IEEE: return ((emask - 1) << f->mbits) | mmask;
  case EMU_NAN_FN: return (emask << f->mbits) | (mmask - 1);
  default: return (emask << f->mbits) | mmask;
  }
}

static uint64_t inf_bits(const emu_fpfmt *f) { return ((1ull << f->ebits) - 1) << f->mbits; }

bool emu_fp_is_nan(const emu_fpfmt *f, uint64_t b) {
  uint64_t emask = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
  uint64_t e = (b >> f->mbits) & emask, m = b & mmask;
  switch (f->nan) {
  case EMU_NAN_IEEE: return e == emask && m != 0;
  case EMU_NAN_FN: return e == emask && m == mmask;
  default: return false;
  }
}

static uint64_t overflow_result(const emu_fpfmt *f, bool neg, emu_rnd r, unsigned flags) {
  uint64_t sign = neg ? 1ull << (total_bits(f) - 1) : 0;
  if (!f->has_inf || (flags & EMU_FP_SATFINITE)) return sign | max_finite(f);
  bool to_inf;
  switch (r) {
  case EMU_RZ: to_inf = false; break;
  case EMU_RM: to_inf = neg; break;
  case EMU_RP: to_inf = !neg; break;
  default: to_inf = true; break;
  }
  return sign | (to_inf ? inf_bits(f) : max_finite(f));
}

uint64_t emu_fp_round(const emu_fpfmt *f, bool neg, uint64_t mag, int exp2, bool sticky, emu_rnd r,
                      unsigned flags) {
  uint64_t sign = neg ? 1ull << (total_bits(f) - 1) : 0;
  if (neg && (flags & EMU_FP_RELU)) return 0;
  if (mag == 0) {
    if (!sticky) return sign;
    /* a value so tiny that only the sticky bit remains: treat as mag=1 far below */
    mag = 1;
    exp2 = -100000;
    sticky = false;
  }
  int lz = __builtin_clzll(mag);
  mag <<= lz;
  exp2 -= lz;                       /* v = mag * 2^exp2, bit 63 of mag set */
  long E = (long)exp2 + 63;         /* unbounded exponent of the leading one */
  long emin = 1 - f->bias;
  long q = (E < emin ? emin : E) - f->mbits;  /* exponent of the quantum */
  /* N = floor(v / 2^q); shift = q - exp2 bits of mag fall below the quantum */
  long shift = q - exp2;
  uint64_t N, rem_round = 0;
  bool rem_sticky = sticky;
  if (shift <= 0) {
    N = mag << -shift;              /* cannot overflow: mbits < 63 and shift >= -(mbits) */
  } else if (shift >= 64) {
    N = 0;
    if (shift == 64) {
      rem_round = mag >> 63;
      rem_sticky |= (mag << 1) != 0;
    } else {
      rem_sticky |= mag != 0;
    }
  } else {
    N = mag >> shift;
    rem_round = (mag >> (shift - 1)) & 1;
    rem_sticky |= (mag & ((1ull << (shift - 1)) - 1)) != 0;
  }
  bool inexact = rem_round || rem_sticky;
  bool up = false;
  switch (r) {
  case EMU_RN: up = rem_round && (rem_sticky || (N & 1)); break;
  case EMU_RNA: up = rem_round; break;
  case EMU_RZ: up = false; break;
  case EMU_RM: up = inexact && neg; break;
  case EMU_RP: up = inexact && !neg; break;
  }
  N += up;
  if (N == 0) return sign;
  if (N >> (f->mbits + 1)) {        /* carry out of the significand */
    N >>= 1;
    q++;
  }
  uint64_t enc;
  if (N < (1ull << f->mbits)) {
    /* subnormal (q == emin - mbits) */
    if (flags & EMU_FP_FTZ) return sign;
    enc = N;
  } else {
    long biased = q + f->mbits + f->bias;
    uint64_t mant = N - (1ull << f->mbits);
    uint64_t emask = (1ull << f->ebits) - 1;
    if (biased > (long)emask) return overflow_result(f, neg, r, flags);
    enc = ((uint64_t)biased << f->mbits) | mant;
    if (f->nan == EMU_NAN_IEEE && (uint64_t)biased == emask) return overflow_result(f, neg, r, flags);
    if (f->nan == EMU_NAN_FN && enc == ((emask << f->mbits) | ((1ull << f->mbits) - 1)))
      return overflow_result(f, neg, r, flags);
  }
  return sign | enc;
}

uint64_t emu_fp_from_double(const emu_fpfmt *f, double v, emu_rnd r, unsigned flags) {
  uint64_t b = emu_f64_bits(v);
  bool neg = b >> 63;
  uint64_t sign = neg ? 1ull << (total_bits(f) - 1) : 0;
  int e = (int)((b >> 52) & 0x7ff);
  uint64_t m = b & 0xfffffffffffffull;
  if (e == 0x7ff) {
    if (m) { /* NaN */
      if (f->nan == EMU_NAN_NONE) return max_finite(f);
      return emu_fp_canonical_nan(f);
    }
    if (neg && (flags & EMU_FP_RELU)) return 0;
    if (!f->has_inf || (flags & EMU_FP_SATFINITE)) return sign | max_finite(f);
    return sign | inf_bits(f);
  }
  if (e == 0) {
    if (!m) return (neg && (flags & EMU_FP_RELU)) ? 0 : sign;
    return emu_fp_round(f, neg, m, -1074, false, r, flags);
  }
  return emu_fp_round(f, neg, m | (1ull << 52), e - 1075, false, r, flags);
}

uint64_t emu_fp_from_u64(const emu_fpfmt *f, uint64_t v, emu_rnd r) {
  return emu_fp_round(f, false, v, 0, false, r, 0);
}

uint64_t emu_fp_from_s64(const emu_fpfmt *f, int64_t v, emu_rnd r) {
  bool neg = v < 0;
  uint64_t mag = neg ? 0 - (uint64_t)v : (uint64_t)v;
  return emu_fp_round(f, neg, mag, 0, false, r, 0);
}

double emu_fp_to_double(const emu_fpfmt *f, uint64_t b) {
  unsigned tb = total_bits(f);
  bool neg = (b >> (tb - 1)) & 1;
  uint64_t emask = (1ull << f->ebits) - 1, mmask = (1ull << f->mbits) - 1;
  uint64_t e = (b >> f->mbits) & emask, m = b & mmask;
  double v;
  if (emu_fp_is_nan(f, b)) return NAN;
  if (f->nan == EMU_NAN_IEEE && e == emask) v = INFINITY;
  else if (e == 0) v = ldexp((double)m, 1 - f->bias - f->mbits);
  else v = ldexp((double)(m | (1ull << f->mbits)), (int)e - f->bias - f->mbits);
  return neg ? -v : v;
}

uint8_t emu_ue8m0_from_double(double v, emu_rnd r, bool satfinite) {
  /* 2^(b-127), b in 0..254; 255 is NaN.  Only positive values exist:
   * negative inputs and zero give the smallest value (b = 0). */
  if (isnan(v)) return 0xff;
  if (v <= 0) return 0;
  if (isinf(v)) return satfinite ? 0xfe : 0xff;
  int e;
  double fr = frexp(v, &e);         /* v = fr * 2^e, fr in [0.5, 1) */
  int k = e - 1;                    /* floor(log2 v) */
  bool exact = fr == 0.5;
  if (!exact && r == EMU_RP) k++;
  long b = (long)k + 127;
  if (b < 0) return 0;
  if (b > 254) return satfinite ? 0xfe : 0xff;
  return (uint8_t)b;
}

double emu_ue8m0_to_double(uint8_t b) { return b == 0xff ? NAN : ldexp(1.0, (int)b - 127); }

/* Ties to even without touching the host rounding mode. */
static double round_half_even(double v) {
  double t = trunc(v), d = fabs(v - t);
  if (d > 0.5 || (d == 0.5 && fmod(t, 2.0) != 0)) t += copysign(1.0, v);
  return t;
}

double emu_round_integral(double v, emu_rnd r) {
  switch (r) {
  case EMU_RN: return round_half_even(v);
  case EMU_RZ: return trunc(v);
  case EMU_RM: return floor(v);
  case EMU_RP: return ceil(v);
  case EMU_RNA: return round(v);
  }
  return v;
}

uint64_t emu_double_to_int(double v, emu_rnd r, unsigned bits, bool is_signed) {
  if (isnan(v)) return 0;
  double x = emu_round_integral(v, r);
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  if (is_signed) {
    double lo = -ldexp(1.0, (int)bits - 1), hi = ldexp(1.0, (int)bits - 1);
    int64_t res;
    if (x < lo) res = bits == 64 ? INT64_MIN : -(int64_t)(1ull << (bits - 1));
    else if (x >= hi) res = bits == 64 ? INT64_MAX : (int64_t)((1ull << (bits - 1)) - 1);
    else res = (int64_t)x;
    return (uint64_t)res & mask;
  }
  double hi = ldexp(1.0, (int)bits);
  if (x <= 0) return 0;
  if (x >= hi) return mask;
  return (uint64_t)x;
}
