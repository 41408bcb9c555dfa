/* emu/emu_fp.h: floating-point formats, bit for bit.
 *
 * Every narrow format PTX has (f16, bf16, tf32, the fp8/fp6/fp4 families,
 * ue8m0) and f32/f64 themselves are described by one emu_fpfmt; one
 * rounding core (emu_fp_round) turns an exact value, given as sign,
 * magnitude and power of two plus a sticky bit, into the encoding of a
 * format under a rounding mode.  Because the value handed to the core is
 * exact, no conversion rounds twice (a double-rounding f64 -> f32 -> f16
 * chain would be wrong on ties).  Decoding is exact (every format fits in
 * a double).
 *
 * NaN results are NVIDIA's canonical NaNs (all exponent and mantissa bits
 * set, sign clear: f32 0x7fffffff, f16 0x7fff, bf16 0x7fff, e4m3 0x7f,
 * e5m2 0x7f); see docs/emulator.md for the reasoning.
 */
#ifndef PW_EMU_FP_H
#define PW_EMU_FP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

typedef enum emu_rnd {
  EMU_RN,   /* to nearest, ties to even */
  EMU_RZ,   /* toward zero */
  EMU_RM,   /* toward -inf */
  EMU_RP,   /* toward +inf */
  EMU_RNA,  /* to nearest, ties away from zero */
} emu_rnd;

typedef enum emu_nan_kind {
  EMU_NAN_NONE,  /* no NaN encoding (e2m1, e2m3, e3m2) */
  EMU_NAN_IEEE,  /* exponent all ones, mantissa non-zero; all ones exponent + zero mantissa is inf */
  EMU_NAN_FN,    /* only exponent and mantissa all ones (e4m3): no infinity */
} emu_nan_kind;

typedef struct emu_fpfmt {
  uint8_t bits;    /* storage width */
  uint8_t ebits, mbits;
  int16_t bias;
  uint8_t nan;     /* emu_nan_kind */
  bool has_inf;
  bool ftz;        /* not a format property: set by callers that flush subnormals */
} emu_fpfmt;

extern const emu_fpfmt emu_fmt_f64, emu_fmt_f32, emu_fmt_tf32, emu_fmt_f16, emu_fmt_bf16,
    emu_fmt_e4m3, emu_fmt_e5m2, emu_fmt_e2m3, emu_fmt_e3m2, emu_fmt_e2m1;

enum {
  EMU_FP_SATFINITE = 1,  /* overflow and infinity give the largest finite value */
  EMU_FP_RELU = 2,       /* negative results (not NaN) give +0 */
  EMU_FP_FTZ = 4,        /* subnormal results give sign-preserving zero */
};

/* The encoding nearest (per r) to (-1)^neg * mag * 2^exp2, where sticky
 * says that the true value is a little more than that (bits below mag were
 * non-zero).  Never called with NaN. */
uint64_t emu_fp_round(const emu_fpfmt *f, bool neg, uint64_t mag, int exp2, bool sticky, emu_rnd r,
                      unsigned flags);
/* Exact double -> format, handling NaN and infinity. */
uint64_t emu_fp_from_double(const emu_fpfmt *f, double v, emu_rnd r, unsigned flags);
/* Integer -> format (cvt.rn.f32.s64 ...). */
uint64_t emu_fp_from_u64(const emu_fpfmt *f, uint64_t v, emu_rnd r);
uint64_t emu_fp_from_s64(const emu_fpfmt *f, int64_t v, emu_rnd r);
/* Exact value of an encoding. */
double emu_fp_to_double(const emu_fpfmt *f, uint64_t bits);
/* The canonical NaN of a format (its largest all-ones pattern, sign clear). */
uint64_t emu_fp_canonical_nan(const emu_fpfmt *f);
bool emu_fp_is_nan(const emu_fpfmt *f, uint64_t bits);

/* ue8m0 (exponent only, 2^(e-127), 0xff NaN): cvt.rz/.rp.ue8m0x2. */
uint8_t emu_ue8m0_from_double(double v, emu_rnd r, bool satfinite);
double emu_ue8m0_to_double(uint8_t b);

/* Float -> integer as cvt.rXi.intN.fM does it: round to an integral value
 * in mode r, then saturate to the range; NaN gives 0. */
uint64_t emu_double_to_int(double v, emu_rnd r, unsigned bits, bool is_signed);
/* Round to integral value in mode r (cvt.rni.f32.f32 ...). */
double emu_round_integral(double v, emu_rnd r);

/* ---- small inline helpers --------------------------------------------- */
static inline float emu_f32(uint32_t b) { float f; memcpy(&f, &b, 4); return f; }
static inline uint32_t emu_f32_bits(float f) { uint32_t b; memcpy(&b, &f, 4); return b; }
static inline double emu_f64(uint64_t b) { double f; memcpy(&f, &b, 8); return f; }
static inline uint64_t emu_f64_bits(double f) { uint64_t b; memcpy(&b, &f, 8); return b; }

#define EMU_F32_CANON_NAN 0x7fffffffu
#define EMU_F64_CANON_NAN 0x7fffffffffffffffull
#define EMU_F16_CANON_NAN 0x7fffu
#define EMU_BF16_CANON_NAN 0x7fffu

static inline bool emu_f32_is_nan(uint32_t b) { return (b & 0x7fffffffu) > 0x7f800000u; }
static inline bool emu_f64_is_nan(uint64_t b) { return (b & 0x7fffffffffffffffull) > 0x7ff0000000000000ull; }
static inline bool emu_f16_is_nan(uint16_t b) { return (b & 0x7fffu) > 0x7c00u; }
static inline bool emu_bf16_is_nan(uint16_t b) { return (b & 0x7fffu) > 0x7f80u; }

/* Subnormal -> signed zero (.ftz on an input or a result). */
static inline uint32_t emu_f32_ftz(uint32_t b) { return (b & 0x7f800000u) == 0 ? (b & 0x80000000u) : b; }
static inline uint64_t emu_f64_ftz(uint64_t b) {
  return (b & 0x7ff0000000000000ull) == 0 ? (b & 0x8000000000000000ull) : b;
}
static inline uint16_t emu_f16_ftz(uint16_t b) { return (b & 0x7c00u) == 0 ? (b & 0x8000u) : b; }

/* f16/bf16 <-> f32: widening is exact; narrowing rounds to nearest even. */
static inline float emu_f16_to_f32(uint16_t h) {
  uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return emu_f32(s | 0x7f800000u | (m << 13) | (m ? 0x400000u : 0));
  if (e == 0) {
    if (!m) return emu_f32(s);
    /* subnormal: m * 2^-24, exact in f32 */
    float f = (float)m * (1.0f / 16777216.0f);
    return s ? -f : f;
  }
  return emu_f32(s | ((e + 112) << 23) | (m << 13));
}
static inline float emu_bf16_to_f32(uint16_t h) { return emu_f32((uint32_t)h << 16); }
static inline uint16_t emu_f32_to_f16(float f, emu_rnd r) {
  return (uint16_t)emu_fp_from_double(&emu_fmt_f16, (double)f, r, 0);
}
static inline uint16_t emu_f32_to_bf16(float f, emu_rnd r) {
  return (uint16_t)emu_fp_from_double(&emu_fmt_bf16, (double)f, r, 0);
}

#endif
