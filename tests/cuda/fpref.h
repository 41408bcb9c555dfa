/*
 * fpref.h: bit-exact host references for floating-point rounding.
 *
 * The programs compare f16, bf16, f32 and f64 results bit for bit, including
 * the directed rounding modes (rz, rd, ru) that the host's C operators do not
 * offer without fesetround.  Everything is built from two facts:
 *
 *  1. fp_round() rounds a double that holds the EXACT value to any binary
 *     format (f16, bf16, f32) in any mode, by integer arithmetic on the
 *     scaled significand.  It handles subnormal results, the carry into the
 *     next binade, and overflow per mode (IEEE 754-2008 §7.4: rn overflows to
 *     inf, rz to the largest finite, ru/rd to inf on their side only).
 *
 *  2. When the exact value does not fit a double, a double rounded to ODD
 *     (round toward zero, then set the last bit if inexact) carries enough
 *     information: rounding the odd-rounded value again to a format with
 *     p <= 53 - 2 bits gives the correctly rounded result in every mode
 *     (Boldo & Melquiond, "Emulation of FMA and correctly rounded sums:
 *     proved algorithms using rounding to odd", IEEE TC 2008).  rto_add,
 *     rto_fma, rto_div and rto_sqrt compute it from the error-free
 *     transformations TwoSum (Knuth) and fma remainders, which are exact for
 *     operands that are f16/bf16/f32 values held in doubles.
 *
 * For f64 results in directed modes, dbl_dir() moves the round-to-nearest
 * result one step toward the exact value when the sign of the exact error
 * (known from the same transformations) says it lies on the other side.
 *
 * Assumptions: the host's double arithmetic is IEEE binary64 with round to
 * nearest even and no excess precision (x86-64 SSE2, aarch64; not x87), and
 * its fma() is correctly rounded (glibc).  Inputs stay far from the double
 * overflow and underflow limits (true for f16/bf16/f32 operands).
 */
#ifndef PW_CUDA_FPREF_H
#define PW_CUDA_FPREF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

enum { FP_RN, FP_RZ, FP_RD, FP_RU };

/* Formats by (exponent bits, fraction bits). */
#define FP_F16 5, 10
#define FP_BF16 8, 7
#define FP_F32 8, 23

static inline uint64_t fp_bits_of(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline double fp_double_of(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

/* Decode a value of a small format into the double that holds it exactly. */
static inline double fp_decode(uint32_t bits, int ebits, int mbits)
{
    uint32_t sign = (bits >> (ebits + mbits)) & 1;
    uint32_t e = (bits >> mbits) & ((1u << ebits) - 1);
    uint32_t m = bits & ((1u << mbits) - 1);
    int bias = (1 << (ebits - 1)) - 1;
    double v;
    if (e == (1u << ebits) - 1)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp((double)m, 1 - bias - mbits);
    else
        v = ldexp((double)(m | (1u << mbits)), (int)e - bias - mbits);
    return sign ? -v : v;
}

static inline int fp_is_nan(uint32_t bits, int ebits, int mbits)
{
    uint32_t e = (bits >> mbits) & ((1u << ebits) - 1);
    return e == (1u << ebits) - 1 && (bits & ((1u << mbits) - 1)) != 0;
}

/* Round x (taken as exact) to the format, in the given mode; returns bits.
 * NaN gives the canonical quiet NaN with x's sign bit cleared (callers that
 * compare NaNs compare only NaN-ness). */
static inline uint32_t fp_round(double x, int ebits, int mbits, int mode)
{
    int bias = (1 << (ebits - 1)) - 1;
    uint32_t emask = (1u << ebits) - 1;
    int neg = signbit(x) != 0;
    uint32_t sign = (uint32_t)neg << (ebits + mbits);
    uint32_t inf = emask << mbits;
    uint32_t maxfin = ((emask - 1) << mbits) | ((1u << mbits) - 1);

    if (isnan(x))
        return inf | (1u << (mbits - 1));
    if (isinf(x))
        return sign | inf;
    if (x == 0)
        return sign;

    int e2;
    frexp(fabs(x), &e2);               /* |x| = f * 2^e2, f in [0.5, 1) */
    int q = e2 - 1 - mbits;            /* weight of the last kept bit */
    if (q < 1 - bias - mbits)
        q = 1 - bias - mbits;          /* subnormal: fixed last-bit weight */
    double s = ldexp(fabs(x), -q);     /* exact: a power-of-two scaling */
    double fl = floor(s);
    double frac = s - fl;              /* exact */
    uint64_t n = (uint64_t)fl;
    int up;
    switch (mode) {
    case FP_RN: up = frac > 0.5 || (frac == 0.5 && (n & 1)); break;
    case FP_RZ: up = 0; break;
    case FP_RU: up = frac > 0 && !neg; break;
    default:    up = frac > 0 && neg; break; /* FP_RD */
    }
    n += (uint64_t)up;
    if (n >> (mbits + 1)) {            /* carried into the next binade */
        n >>= 1;
        q++;
    }
    if (n < (1ull << mbits))           /* subnormal (q is the minimum) */
        return sign | (uint32_t)n;
    long E = (long)q + mbits + bias;
    if (E >= (long)emask) {            /* overflow */
        int to_inf = mode == FP_RN || (mode == FP_RU && !neg) || (mode == FP_RD && neg);
        return sign | (to_inf ? inf : maxfin);
    }
    return sign | ((uint32_t)E << mbits) | (uint32_t)(n - (1ull << mbits));
}

static inline float fp_round_f32(double x, int mode) { uint32_t b = fp_round(x, FP_F32, mode); float f; memcpy(&f, &b, 4); return f; }

/* Replace a round-to-nearest result r whose exact value is r + err
 * (sign of err known) by the round-to-odd result. */
static inline double fp_to_odd(double r, double err)
{
    if (!isfinite(r) || err == 0 || isnan(err) || (fp_bits_of(r) & 1))
        return r; /* exact, already odd, or an infinite/NaN operand */
    return nextafter(r, err > 0 ? INFINITY : -INFINITY);
}

/* a + b rounded to odd.  TwoSum gives the exact error of the rounded sum. */
static inline double rto_add(double a, double b)
{
    volatile double s = a + b;
    volatile double bv = s - a;
    volatile double av = s - bv;
    double err = (a - av) + (b - bv);
    return fp_to_odd(s, err);
}

/* a * b + c rounded to odd, for a, b with at most 26 significant bits (so the
 * product is exact in a double): f16, bf16 and f32 operands. */
static inline double rto_fma(double a, double b, double c)
{
    volatile double p = a * b;
    return rto_add(p, c);
}

/* a / b rounded to odd.  The remainder a - q*b of the nearest quotient q is
 * exactly representable and fma computes it exactly; its sign, times b's,
 * is the side of q on which a/b lies. */
static inline double rto_div(double a, double b)
{
    volatile double q = a / b;
    double r = fma(-q, b, a);
    double side = r == 0 ? 0.0 : ((r < 0) != (b < 0) ? -1.0 : 1.0);
    return fp_to_odd(q, side);
}

/* sqrt(a) rounded to odd: the residual a - s*s is exact and its sign says on
 * which side of s the root lies. */
static inline double rto_sqrt(double a)
{
    volatile double s = sqrt(a);
    double r = fma(-s, s, a);
    return fp_to_odd(s, r);
}

/* The sign of an exact zero sum p + c (IEEE 754-2008 §6.3): equal-signed
 * zeros keep their sign; any other exact zero is +0, or -0 when rounding
 * down. */
static inline double fp_exact_zero_sum(double p, double c, int mode)
{
    if (p == 0 && c == 0 && signbit(p) == signbit(c))
        return p;
    return mode == FP_RD ? -0.0 : 0.0;
}

/* Correctly rounded a + b, a * b + c, a * b, a / b, sqrt(a) of operands held
 * exactly in doubles, in a format of at most 24 significant bits. */
static inline uint32_t fp_add(double a, double b, int ebits, int mbits, int mode)
{
    double s = rto_add(a, b);
    if (s == 0)
        s = fp_exact_zero_sum(a, b, mode); /* a rounded-to-nearest zero sum is exact */
    return fp_round(s, ebits, mbits, mode);
}

static inline uint32_t fp_fma(double a, double b, double c, int ebits, int mbits, int mode)
{
    volatile double p = a * b; /* exact */
    double s = rto_add(p, c);
    if (s == 0)
        s = fp_exact_zero_sum(p, c, mode);
    return fp_round(s, ebits, mbits, mode);
}

static inline uint32_t fp_mul(double a, double b, int ebits, int mbits, int mode)
{
    volatile double p = a * b; /* exact, sign of zero included */
    return fp_round(p, ebits, mbits, mode);
}

static inline uint32_t fp_div(double a, double b, int ebits, int mbits, int mode)
{
    if (b == 0 || isinf(a) || isinf(b) || a == 0 || isnan(a) || isnan(b))
        return fp_round(a / b, ebits, mbits, mode); /* exact special cases */
    return fp_round(rto_div(a, b), ebits, mbits, mode);
}

static inline uint32_t fp_sqrt(double a, int ebits, int mbits, int mode)
{
    if (a <= 0 || isinf(a) || isnan(a))
        return fp_round(sqrt(a), ebits, mbits, mode); /* sqrt(-0) = -0, NaN, inf */
    return fp_round(rto_sqrt(a), ebits, mbits, mode);
}

/* ---- f64 in directed modes ------------------------------------------------ */

/* r is the round-to-nearest f64 result; side is the sign of (exact - r).
 * Returns the result in mode. */
static inline double dbl_dir(double r, double side, int mode)
{
    if (side == 0 || mode == FP_RN || isinf(r) || isnan(r))
        return r;
    switch (mode) {
    case FP_RU: return side > 0 ? nextafter(r, INFINITY) : r;
    case FP_RD: return side < 0 ? nextafter(r, -INFINITY) : r;
    default: /* FP_RZ: step toward zero when the exact value is nearer zero */
        if ((r > 0 && side < 0) || (r < 0 && side > 0))
            return nextafter(r, 0.0);
        return r;
    }
}

static inline double dbl_add(double a, double b, int mode)
{
    volatile double s = a + b;
    volatile double bv = s - a;
    volatile double av = s - bv;
    double err = (a - av) + (b - bv);
    /* An exact zero sum is +0 in every mode but rd, where it is -0 unless
     * both operands are +0 (IEEE 754-2008 §6.3). */
    if (s == 0 && mode == FP_RD)
        return (a == 0 && b == 0 && !signbit(a) && !signbit(b)) ? 0.0 : -0.0;
    return dbl_dir(s, err, mode);
}

static inline double dbl_mul(double a, double b, int mode)
{
    volatile double p = a * b;
    return dbl_dir(p, fma(a, b, -p), mode);
}

static inline double dbl_div(double a, double b, int mode)
{
    volatile double q = a / b;
    if (a == 0 || b == 0 || isinf(a) || isinf(b) || isnan(a) || isnan(b))
        return q; /* exact special cases: the remainder below would be NaN */
    double r = fma(-q, b, a);
    double side = r == 0 ? 0.0 : ((r < 0) != (b < 0) ? -1.0 : 1.0);
    return dbl_dir(q, side, mode);
}

static inline double dbl_sqrt(double a, int mode)
{
    volatile double s = sqrt(a);
    return dbl_dir(s, fma(-s, s, a), mode);
}

/* fma in directed modes for doubles needs more than these transformations;
 * the programs test fma only in rn, against the host's fma(). */

/* Distance in units in the last place between two finite floats of the same
 * sign, for tolerance checks of approximate functions. */
static inline long fp_ulp_dist_f32(float a, float b)
{
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    if (ia < 0) ia = (int32_t)0x80000000 - ia;
    if (ib < 0) ib = (int32_t)0x80000000 - ib;
    long d = (long)ia - (long)ib;
    return d < 0 ? -d : d;
}

#endif /* PW_CUDA_FPREF_H */
