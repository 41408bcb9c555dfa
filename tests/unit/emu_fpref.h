/* tests/unit/emu_fpref.h: independent reference rounding for the float
 * tests.  A narrow format is described only by its list of finite values
 * (built by decoding every encoding from its field layout), and rounding
 * picks among neighbours in that list per mode: no bit tricks shared with
 * emu/emu_fp.c.  Values are exact in __float128. */
#ifndef PW_EMU_FPREF_H
#define PW_EMU_FPREF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

enum { RF_RN, RF_RZ, RF_RM, RF_RP, RF_RNA };

typedef struct rf_fmt {
  int ebits, mbits, bias;
  bool has_inf;       /* IEEE-like: all-ones exponent is inf/NaN */
  bool fn;            /* e4m3: only all-ones exponent+mantissa is NaN */
  uint32_t nan;       /* the canonical NaN encoding, or 0 if none */
  int n;              /* number of non-negative finite values */
  double *val;        /* sorted ascending, val[i] for encoding enc[i] */
  uint32_t *enc;
} rf_fmt;

static inline double rf_decode_fields(const rf_fmt *f, uint32_t e, uint32_t m) {
  if (e == 0) return ldexp((double)m, 1 - f->bias - f->mbits);
  return ldexp((double)((1u << f->mbits) + m), (int)e - f->bias - f->mbits);
}

static inline rf_fmt rf_make(int ebits, int mbits, int bias, bool has_inf, bool fn, uint32_t nan) {
  rf_fmt f = {ebits, mbits, bias, has_inf, fn, nan, 0, NULL, NULL};
  uint32_t count = 1u << (ebits + mbits);
  f.val = malloc(count * sizeof(double));
  f.enc = malloc(count * sizeof(uint32_t));
  for (uint32_t c = 0; c < count; c++) {
    uint32_t e = c >> mbits, m = c & ((1u << mbits) - 1);
    if (has_inf && e == (1u << ebits) - 1) continue;
    if (fn && e == (1u << ebits) - 1 && m == (1u << mbits) - 1) continue;
    f.val[f.n] = rf_decode_fields(&f, e, m);
    f.enc[f.n++] = c;   /* increasing c gives increasing value */
  }
  return f;
}

static inline void rf_free(rf_fmt *f) {
  free(f->val);
  free(f->enc);
}

static inline uint32_t rf_sign(const rf_fmt *f) { return 1u << (f->ebits + f->mbits); }

/* Rounds x (exact) to f in mode; satfinite clamps overflow to the largest
 * finite value.  NaN gives f->nan. */
static inline uint32_t rf_round(const rf_fmt *f, __float128 x, int mode, bool satfinite) {
  if (x != x) return f->nan;
  bool neg = x < 0 || (x == 0 && signbit((double)x));
  __float128 ax = neg ? -x : x;
  uint32_t sign = neg ? rf_sign(f) : 0;
  uint32_t inf = f->has_inf ? ((1u << f->ebits) - 1) << f->mbits : 0;
  double maxv = f->val[f->n - 1];
  if (ax > 1e300) return sign | ((f->has_inf && !satfinite) ? inf : f->enc[f->n - 1]);
  /* find lo <= ax < hi among the finite values */
  int lo = 0, hi = f->n - 1;
  if (ax >= maxv) {
    lo = f->n - 1;
    if (ax == maxv) return sign | f->enc[lo];
    /* beyond max: the next value up is inf (or, for formats without inf, a
     * virtual max + ulp used only to decide rounding) */
    double ulp = maxv - f->val[f->n - 2];
    __float128 up = (__float128)maxv + ulp;
    bool to_up;
    switch (mode) {
    case RF_RZ: to_up = false; break;
    case RF_RM: to_up = neg; break;
    case RF_RP: to_up = !neg; break;
    case RF_RNA: to_up = ax - maxv >= up - ax; break;
    default: {
      __float128 dl = ax - maxv, du = up - ax;
      to_up = dl > du || (dl == du && (f->enc[lo] & 1));
    }
    }
    if (!to_up || satfinite || !f->has_inf) return sign | f->enc[lo];
    return sign | inf;
  }
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (f->val[mid] <= ax) lo = mid;
    else hi = mid;
  }
  if (f->val[lo] == ax) return sign | f->enc[lo];
  bool up;
  switch (mode) {
  case RF_RZ: up = false; break;
  case RF_RM: up = neg; break;
  case RF_RP: up = !neg; break;
  case RF_RNA: up = ax - f->val[lo] >= f->val[hi] - ax; break;
  default: {
    __float128 dl = ax - f->val[lo], du = f->val[hi] - ax;
    up = dl > du || (dl == du && (f->enc[lo] & 1));
  }
  }
  return sign | f->enc[up ? hi : lo];
}

static inline double rf_value(const rf_fmt *f, uint32_t bits) {
  uint32_t s = bits & rf_sign(f);
  uint32_t e = (bits >> f->mbits) & ((1u << f->ebits) - 1), m = bits & ((1u << f->mbits) - 1);
  if (f->has_inf && e == (1u << f->ebits) - 1) return m ? NAN : (s ? -INFINITY : INFINITY);
  if (f->fn && e == (1u << f->ebits) - 1 && m == (1u << f->mbits) - 1) return NAN;
  double v = rf_decode_fields(f, e, m);
  return s ? -v : v;
}

#endif
