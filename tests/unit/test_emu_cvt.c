/* tests/unit/test_emu_cvt.c: cvt in every form (PTX ISA 9.7.9.21):
 * integer <-> integer with and without .sat and with destination registers
 * wider than the type, float -> integer in the four .rXi modes (saturating,
 * NaN -> 0, .ftz), integer -> float in the four modes, float -> float
 * narrowing in every mode (f64->f32, f32->f16/bf16/tf32, fp8/fp6/fp4 with
 * .satfinite and .relu; fp8x2 from f32 on every top-16-bit pattern),
 * widening, packed pairs (fp8x2 <-> f16x2 on every input), ue8m0.
 *
 * References: the host FPU under fesetround for f32/f64 results (compiled
 * with -frounding-math), emu_fpref.h's table rounding for narrow formats,
 * C integer arithmetic for the rest. */
#include <fenv.h>
#include <math.h>

#include "emu_fpref.h"
#include "emu_test.h"

static const int host_mode[] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
static const char *fmode[] = {"rn", "rz", "rm", "rp"};
static const char *imode[] = {"rni", "rzi", "rmi", "rpi"};

enum { N = 2048 };

static uint64_t ftz32(uint64_t b) { return (b & 0x7f800000u) == 0 ? b & 0x80000000u : b & 0xffffffffu; }

static const uint32_t f32e[] = {0, 0x80000000, 0x3f000000, 0xbf000000, 0x3fc00000, 0xbfc00000, 0x40200000, 0xc0200000,
                                0x3f800000, 0x7f800000, 0xff800000, 0x7fc00000, 0x00000001, 0x80000001, 0x4f000000,
                                0x4f800000, 0xcf000000, 0x5f000000, 0x5f800000, 0xdf000000, 0x477fe000, 0x477ff000,
                                0x477fefff, 0x33800000, 0x33000000, 0x387fc000, 0x38800000, 0x43e00000, 0x43f00000,
                                0x47600000, 0x47700000, 0x3effffff};

static void f32_inputs(uint64_t *a, uint64_t *b, uint64_t seed) {
  uint64_t s = seed;
  size_t ne = sizeof f32e / sizeof f32e[0];
  for (int i = 0; i < N; i++) {
    if (i < (int)ne) a[i] = f32e[i];
    else {
      uint64_t r = et_rand(&s);
      switch (i % 4) {
      case 0: a[i] = (uint32_t)r; break;
      case 1: a[i] = et_f32b((float)((int64_t)r >> (r & 63)) / 4.0f); break;   /* near integers, ties */
      case 2: a[i] = (uint32_t)r & 0x8fffffffu; break;                           /* small magnitudes */
      default: a[i] = (((uint32_t)r & 0x807fffffu) | ((uint32_t)(100 + (r >> 40) % 60) << 23)); break;
      }
    }
    b[i] = i < (int)ne ? f32e[(i * 5) % ne] : (uint32_t)et_rand(&s);
  }
}

/* ---- integer <-> integer ------------------------------------------------------ */
typedef struct itype {
  const char *name;
  unsigned bits;
  bool sgn;
} itype;

static const itype itypes[] = {{"u8", 8, false}, {"s8", 8, true}, {"u16", 16, false}, {"s16", 16, true},
                               {"u32", 32, false}, {"s32", 32, true}, {"u64", 64, false}, {"s64", 64, true}};

static int64_t as_signed(uint64_t v, unsigned bits) {
  return bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

START_TEST(cvt_int_int) {
  uint64_t a[N], d[N], want[N], s = 7;
  for (int i = 0; i < N; i++) {
    uint64_t r = et_rand(&s);
    a[i] = i % 3 == 0 ? r : i % 3 == 1 ? (uint64_t)(int64_t)(int16_t)r : r & 0x1ff;
  }
  a[0] = 0, a[1] = ~0ull, a[2] = 0x80, a[3] = 0x7f, a[4] = 0xff, a[5] = 0x8000, a[6] = 0x80000000ull, a[7] = 0x7fffffffffffffffull;
  for (size_t si = 0; si < 8; si++)
    for (size_t di = 0; di < 8; di++)
      for (int sat = 0; sat < 2; sat++) {
        const itype *st = &itypes[si], *dt = &itypes[di];
        /* registers: 64-bit source view, destination in a 64-bit or 32-bit register */
        char body[256], name[64];
        snprintf(name, sizeof name, "cvt%s.%s.%s", sat ? ".sat" : "", dt->name, st->name);
        bool d64 = dt->bits == 64;
        snprintf(body, sizeof body, "  %s %s, %s;\n%s", name, d64 ? "%rdd" : "%rd32", st->bits == 64 ? "%rda" : "%ra",
                 d64 ? "" : ET_R32);
        et_op(body, N, a, NULL, NULL, d, NULL);
        for (int i = 0; i < N; i++) {
          uint64_t v = st->bits == 64 ? a[i] : a[i] & ((1ull << st->bits) - 1);
          int64_t sv = st->sgn ? as_signed(v, st->bits) : (int64_t)v;
          bool vneg = st->sgn && sv < 0;
          uint64_t r;
          if (sat) {
            if (dt->sgn) {
              int64_t lo = dt->bits == 64 ? INT64_MIN : -(int64_t)(1ull << (dt->bits - 1));
              int64_t hi = dt->bits == 64 ? INT64_MAX : (int64_t)((1ull << (dt->bits - 1)) - 1);
              if (!st->sgn && v > (uint64_t)hi) r = (uint64_t)hi;
              else if (vneg && sv < lo) r = (uint64_t)lo;
              else if (!vneg && sv > hi) r = (uint64_t)hi;
              else r = (uint64_t)sv;
            } else {
              uint64_t hi = dt->bits == 64 ? ~0ull : (1ull << dt->bits) - 1;
              r = vneg ? 0 : ((uint64_t)sv > hi ? hi : (uint64_t)sv);
            }
          } else {
            r = (uint64_t)sv;
          }
          /* the value in the destination type, then extended to the register */
          uint64_t t = dt->bits == 64 ? r : r & ((1ull << dt->bits) - 1);
          if (!d64) t = (uint32_t)(dt->sgn ? (uint64_t)as_signed(t, dt->bits) : t);
          want[i] = t;
        }
        ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
      }
}
END_TEST

/* ---- float -> integer ---------------------------------------------------------------- */
static uint64_t ref_f2i(double x, int mode, const itype *t) {
  if (x != x) return 0;
  fesetround(host_mode[mode]);
  volatile double r = nearbyint(x);
  fesetround(FE_TONEAREST);
  uint64_t mk = t->bits == 64 ? ~0ull : (1ull << t->bits) - 1;
  if (t->sgn) {
    double lo = -ldexp(1, (int)t->bits - 1), hi = ldexp(1, (int)t->bits - 1);
    if (r < lo) return (uint64_t)(t->bits == 64 ? INT64_MIN : -(int64_t)(1ull << (t->bits - 1))) & mk;
    if (r >= hi) return (uint64_t)(t->bits == 64 ? INT64_MAX : (int64_t)((1ull << (t->bits - 1)) - 1));
    return (uint64_t)(int64_t)r & mk;
  }
  if (r <= 0) return 0;
  if (r >= ldexp(1, (int)t->bits)) return mk;
  return (uint64_t)r;
}

START_TEST(cvt_float_int) {
  uint64_t a[N], b[N], d[N], want[N];
  f32_inputs(a, b, 11);
  for (int m = 0; m < 4; m++)
    for (size_t ti = 0; ti < 8; ti++) {
      const itype *t = &itypes[ti];
      for (int src64 = 0; src64 < 2; src64++) {
        char body[256], name[64];
        snprintf(name, sizeof name, "cvt.%s.%s.%s", imode[m], t->name, src64 ? "f64" : "f32");
        /* f64 sources: the f32 inputs widened, so both see the same values */
        snprintf(body, sizeof body, "%s  %s %s, %s;\n%s", src64 ? "  cvt.f64.f32 %fd1, %fa;\n" : "", name,
                 t->bits == 64 ? "%rdd" : t->bits <= 16 ? "%hd" : "%rd32", src64 ? "%fd1" : "%fa",
                 t->bits == 64 ? "" : t->bits <= 16 ? ET_RH : ET_R32);
        et_op(body, N, a, NULL, NULL, d, NULL);
        for (int i = 0; i < N; i++) {
          uint64_t r = ref_f2i(et_f32((uint32_t)a[i]), m, t);
          if (t->bits == 8) r = (uint16_t)(t->sgn ? (uint64_t)as_signed(r, 8) : r);  /* in a .b16 register */
          want[i] = r;
        }
        ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
      }
    }
  /* .ftz: a negative subnormal rounds as -0, so rmi gives 0, not -1 */
  et_op("  cvt.rmi.ftz.s32.f32 %rd32, %fa;\n" ET_R32, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) want[i] = (uint32_t)ref_f2i(et_f32((uint32_t)ftz32(a[i])), 2, &itypes[5]);
  ET_CHECK_ARRAY("cvt.rmi.ftz.s32.f32", (size_t)N, d, want, a, a, a);
}
END_TEST

/* ---- integer -> float ----------------------------------------------------------------- */
START_TEST(cvt_int_float) {
  uint64_t a[N], d[N], want[N], s = 3;
  for (int i = 0; i < N; i++) {
    uint64_t r = et_rand(&s);
    a[i] = r >> (r & 63);
    if (i % 5 == 0) a[i] = r | 0x8000000000000000ull;
  }
  a[0] = 0, a[1] = ~0ull, a[2] = 0x7fffffffffffffffull, a[3] = 0x8000000000000000ull, a[4] = 16777217, a[5] = 0xffffffff;
  /* just off a bf16 (and f16) midpoint, where rounding through f32 first
   * rounds twice: 2^k + 2^(k-8) + {1, -1}, k = 24..63, both signs */
  for (int k = 24, i = 6; k < 64; k++, i += 4) {
    uint64_t mid = (1ull << k) + (1ull << (k - 8));
    a[i] = mid + 1, a[i + 1] = mid - 1, a[i + 2] = 0 - (mid + 1), a[i + 3] = 0 - (mid - 1);
  }
  rf_fmt F16 = rf_make(5, 10, 15, true, false, 0x7fff);
  rf_fmt BF16 = rf_make(8, 7, 127, true, false, 0x7fff);
  for (int m = 0; m < 4; m++) {
    static const char *srcs[] = {"s32", "u32", "s64", "u64"};
    for (int si = 0; si < 4; si++) {
      char body[256], name[64];
      bool s64 = si >= 2;
      /* to f32 */
      snprintf(name, sizeof name, "cvt.%s.f32.%s", fmode[m], srcs[si]);
      snprintf(body, sizeof body, "  %s %%fd, %s;\n%s", name, s64 ? "%rda" : "%ra", ET_RF);
      et_op(body, N, a, NULL, NULL, d, NULL);
      for (int i = 0; i < N; i++) {
        fesetround(host_mode[m]);
        volatile float r;
        switch (si) {
        case 0: r = (float)(int32_t)(uint32_t)a[i]; break;
        case 1: r = (float)(uint32_t)a[i]; break;
        case 2: r = (float)(int64_t)a[i]; break;
        default: r = (float)a[i]; break;
        }
        fesetround(FE_TONEAREST);
        want[i] = et_f32b(r);
      }
      ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
      /* to f64 */
      snprintf(name, sizeof name, "cvt.%s.f64.%s", fmode[m], srcs[si]);
      snprintf(body, sizeof body, "  %s %%dd, %s;\n%s", name, s64 ? "%rda" : "%ra", ET_RD);
      et_op(body, N, a, NULL, NULL, d, NULL);
      for (int i = 0; i < N; i++) {
        fesetround(host_mode[m]);
        volatile double r;
        switch (si) {
        case 0: r = (double)(int32_t)(uint32_t)a[i]; break;
        case 1: r = (double)(uint32_t)a[i]; break;
        case 2: r = (double)(int64_t)a[i]; break;
        default: r = (double)a[i]; break;
        }
        fesetround(FE_TONEAREST);
        want[i] = et_f64b(r);
      }
      ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
      /* to f16 and bf16: table rounding of the exact value */
      for (int h = 0; h < 2; h++) {
        snprintf(name, sizeof name, "cvt.%s.%s.%s", fmode[m], h ? "bf16" : "f16", srcs[si]);
        snprintf(body, sizeof body, "  %s %%hd, %s;\n%s", name, s64 ? "%rda" : "%ra", ET_RH);
        et_op(body, N, a, NULL, NULL, d, NULL);
        for (int i = 0; i < N; i++) {
          __float128 v;
          switch (si) {
          case 0: v = (int32_t)(uint32_t)a[i]; break;
          case 1: v = (uint32_t)a[i]; break;
          case 2: v = (int64_t)a[i]; break;
          default: v = a[i]; break;
          }
          want[i] = rf_round(h ? &BF16 : &F16, v, m, false);
        }
        ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
      }
    }
  }
  /* by hand: 2^24 + 2^16 + 1 is above the midpoint of 2^24 and 2^24 + 2^17 */
  {
    uint64_t x[1] = {(1u << 24) + (1u << 16) + 1}, r[1];
    et_op("  cvt.rn.bf16.s32 %hd, %ra;\n" ET_RH, 1, x, NULL, NULL, r, NULL);
    ck_assert_uint_eq(r[0], 0x4b81);
  }
  rf_free(&BF16);
  rf_free(&F16);
}
END_TEST

/* ---- float -> float ---------------------------------------------------------------------- */
START_TEST(cvt_f64_f32) {
  uint64_t a[N], d[N], want[N], s = 99;
  for (int i = 0; i < N; i++) {
    uint64_t r = et_rand(&s);
    /* exponents around the f32 range, its subnormals and beyond */
    a[i] = (r & 0x800fffffffffffffull) | ((uint64_t)(1023 - 160 + (r >> 52) % 330) << 52);
  }
  a[0] = 0x7ff8000000000001ull, a[1] = 0xfff0000000000000ull, a[2] = 0x36a0000000000000ull;   /* NaN, -inf, 2^-149 */
  a[3] = 0x47efffffe0000000ull;   /* f32 max + half ulp: a tie */
  a[4] = 0x3ff0000010000000ull;   /* 1 + 2^-24: a tie */
  for (int m = 0; m < 4; m++)
    for (int ftz = 0; ftz < 2; ftz++) {
      char body[128], name[64];
      snprintf(name, sizeof name, "cvt.%s%s.f32.f64", fmode[m], ftz ? ".ftz" : "");
      snprintf(body, sizeof body, "  %s %%fd, %%da;\n%s", name, ET_RF);
      et_op(body, N, a, NULL, NULL, d, NULL);
      for (int i = 0; i < N; i++) {
        fesetround(host_mode[m]);
        volatile float r = (float)et_f64(a[i]);
        fesetround(FE_TONEAREST);
        uint32_t rb = et_f32b(r);
        if (r != r) rb = 0x7fffffff;
        else if (ftz) rb = (uint32_t)ftz32(rb);
        want[i] = rb;
      }
      ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
    }
  /* widening is exact, NaN becomes canonical */
  uint64_t b[N];
  f32_inputs(a, b, 5);
  et_op("  cvt.f64.f32 %dd, %fa;\n" ET_RD, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    float f = et_f32((uint32_t)a[i]);
    want[i] = f != f ? 0x7fffffffffffffffull : et_f64b((double)f);
  }
  ET_CHECK_ARRAY("cvt.f64.f32", (size_t)N, d, want, a, a, a);
  /* round to integral in float, .sat, .ftz */
  for (int m = 0; m < 4; m++) {
    char body[128], name[64];
    snprintf(name, sizeof name, "cvt.%s.f32.f32", imode[m]);
    snprintf(body, sizeof body, "  %s %%fd, %%fa;\n%s", name, ET_RF);
    et_op(body, N, a, NULL, NULL, d, NULL);
    for (int i = 0; i < N; i++) {
      float f = et_f32((uint32_t)a[i]);
      fesetround(host_mode[m]);
      volatile float r = nearbyintf(f);
      fesetround(FE_TONEAREST);
      want[i] = f != f ? 0x7fffffff : et_f32b(r);
    }
    ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
  }
  et_op("  cvt.sat.f32.f32 %fd, %fa;\n  cvt.ftz.f32.f32 %fe, %fa;\n" ET_RF "  mov.b32 %re32, %fe;\n" ET_RE32, N, a, NULL,
        NULL, d, b);
  for (int i = 0; i < N; i++) {
    float f = et_f32((uint32_t)a[i]);
    uint32_t sat = (f != f || !(f > 0)) ? 0 : f >= 1 ? 0x3f800000 : (uint32_t)a[i];
    ck_assert_msg(d[i] == sat, "cvt.sat.f32.f32(%08llx) = %08llx", (unsigned long long)a[i], (unsigned long long)d[i]);
    uint64_t ftz = f != f ? 0x7fffffff : ftz32(a[i]);
    ck_assert_msg(b[i] == ftz, "cvt.ftz.f32.f32(%08llx) = %08llx", (unsigned long long)a[i], (unsigned long long)b[i]);
  }
}
END_TEST

START_TEST(cvt_f32_narrow) {
  rf_fmt F16 = rf_make(5, 10, 15, true, false, 0x7fff);
  rf_fmt BF16 = rf_make(8, 7, 127, true, false, 0x7fff);
  rf_fmt TF32 = rf_make(8, 10, 127, true, false, 0x3ffff);
  uint64_t a[N], b[N], d[N], want[N];
  f32_inputs(a, b, 17);
  for (int m = 0; m < 4; m++) {
    char body[128], name[64];
    snprintf(name, sizeof name, "cvt.%s.f16.f32", fmode[m]);
    snprintf(body, sizeof body, "  %s %%hd, %%fa;\n%s", name, ET_RH);
    et_op(body, N, a, NULL, NULL, d, NULL);
    for (int i = 0; i < N; i++) want[i] = rf_round(&F16, et_f32((uint32_t)a[i]), m, false);
    ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
    snprintf(name, sizeof name, "cvt.%s.bf16.f32", fmode[m]);
    snprintf(body, sizeof body, "  %s %%hd, %%fa;\n%s", name, ET_RH);
    et_op(body, N, a, NULL, NULL, d, NULL);
    for (int i = 0; i < N; i++) want[i] = rf_round(&BF16, et_f32((uint32_t)a[i]), m, false);
    ET_CHECK_ARRAY(name, (size_t)N, d, want, a, a, a);
    /* f64 -> f16 rounds once: not through f32 */
    snprintf(name, sizeof name, "cvt.%s.f16.f64", fmode[m]);
    snprintf(body, sizeof body, "  mov.b64 %%fd1, %%rdb;\n  %s %%hd, %%fd1;\n%s", name, ET_RH);
    uint64_t s = 5 + (uint64_t)m;
    for (int i = 0; i < N; i++) {
      uint64_t r = et_rand(&s);
      b[i] = (r & 0x800fffffffffffffull) | ((uint64_t)(1023 - 30 + (r >> 52) % 50) << 52);
    }
    et_op(body, N, a, b, NULL, d, NULL);
    for (int i = 0; i < N; i++) want[i] = rf_round(&F16, et_f64(b[i]), m, false);
    ET_CHECK_ARRAY(name, (size_t)N, d, want, b, b, b);
  }
  f32_inputs(a, b, 19);
  /* .relu and .satfinite */
  et_op("  cvt.rn.relu.f16.f32 %hd, %fa;\n" ET_RH, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    float f = et_f32((uint32_t)a[i]);
    /* .relu: the result is never negative, -0 included (docs/emulator.md) */
    want[i] = f != f ? 0x7fff : signbit(f) ? 0 : rf_round(&F16, f, RF_RN, false);
  }
  ET_CHECK_ARRAY("cvt.rn.relu.f16.f32", (size_t)N, d, want, a, a, a);
  et_op("  cvt.rz.satfinite.bf16.f32 %hd, %fa;\n" ET_RH, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) want[i] = rf_round(&BF16, et_f32((uint32_t)a[i]), RF_RZ, true);
  ET_CHECK_ARRAY("cvt.rz.satfinite.bf16.f32", (size_t)N, d, want, a, a, a);
  /* tf32 in f32 layout: low 13 bits zero */
  et_op("  cvt.rna.tf32.f32 %rd32, %fa;\n" ET_R32, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    float f = et_f32((uint32_t)a[i]);
    want[i] = f != f ? 0x7fffffff : (uint64_t)rf_round(&TF32, f, RF_RNA, false) << 13;
  }
  ET_CHECK_ARRAY("cvt.rna.tf32.f32", (size_t)N, d, want, a, a, a);
  /* packed pair: a to the high half, b to the low half */
  et_op("  cvt.rn.f16x2.f32 %rd32, %fa, %fb;\n" ET_R32, N, a, b, NULL, d, NULL);
  for (int i = 0; i < N; i++)
    want[i] = (uint64_t)rf_round(&F16, et_f32((uint32_t)a[i]), RF_RN, false) << 16 |
              rf_round(&F16, et_f32((uint32_t)b[i]), RF_RN, false);
  ET_CHECK_ARRAY("cvt.rn.f16x2.f32", (size_t)N, d, want, a, b, b);
  et_op("  cvt.rz.relu.bf16x2.f32 %rd32, %fa, %fb;\n" ET_R32, N, a, b, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    float x = et_f32((uint32_t)a[i]), y = et_f32((uint32_t)b[i]);
    uint64_t hi = x != x ? 0x7fff : signbit(x) ? 0 : rf_round(&BF16, x, RF_RZ, false);
    uint64_t lo = y != y ? 0x7fff : signbit(y) ? 0 : rf_round(&BF16, y, RF_RZ, false);
    want[i] = hi << 16 | lo;
  }
  ET_CHECK_ARRAY("cvt.rz.relu.bf16x2.f32", (size_t)N, d, want, a, b, b);
  /* widening halves is exact */
  et_op("  cvt.f32.f16 %fd, %ha;\n  cvt.f32.bf16 %fe, %hb;\n" ET_RF "  mov.b32 %re32, %fe;\n" ET_RE32, N, a, b, NULL, d,
        want);
  for (int i = 0; i < N; i++) {
    double x = rf_value(&F16, (uint16_t)a[i]), y = rf_value(&BF16, (uint16_t)b[i]);
    ck_assert_uint_eq(d[i], x != x ? 0x7fffffff : et_f32b((float)x));
    ck_assert_uint_eq(want[i], y != y ? 0x7fffffff : et_f32b((float)y));
  }
  rf_free(&F16);
  rf_free(&BF16);
  rf_free(&TF32);
}
END_TEST

/* ---- fp8 / fp6 / fp4 and ue8m0 --------------------------------------------------------------- */
START_TEST(cvt_fp8) {
  rf_fmt E4M3 = rf_make(4, 3, 7, false, true, 0x7f);
  rf_fmt E5M2 = rf_make(5, 2, 15, true, false, 0x7f);
  rf_fmt E2M3 = rf_make(2, 3, 1, false, false, 0);
  rf_fmt E3M2 = rf_make(3, 2, 3, false, false, 0);
  rf_fmt E2M1 = rf_make(2, 1, 1, false, false, 0);
  rf_fmt F16 = rf_make(5, 10, 15, true, false, 0x7fff);
  uint64_t a[N], b[N], d[N], want[N], s = 31;
  for (int i = 0; i < N; i++) {
    uint64_t r = et_rand(&s);
    float f = (float)((int64_t)(r >> 16) % 2000000) / (float)(1u << (r % 24));   /* -1e6 .. 1e6, fine steps */
    a[i] = et_f32b(f);
    b[i] = et_f32b(-f / 3.0f);
  }
  a[0] = 0x7fc00000, b[0] = 0x7f800000, a[1] = 0xff800000, b[1] = 0x43e00000, a[2] = 0x43e80000, b[2] = 0x47600000;
  const struct { const char *ty; rf_fmt *f; unsigned w, shift; } fp[] = {
      {"e4m3x2", &E4M3, 8, 8}, {"e5m2x2", &E5M2, 8, 8}, {"e2m3x2", &E2M3, 6, 8}, {"e3m2x2", &E3M2, 6, 8},
      {"e2m1x2", &E2M1, 4, 4}};
  for (size_t k = 0; k < sizeof fp / sizeof fp[0]; k++)
    for (int relu = 0; relu < 2; relu++) {
      char body[160], name[64];
      snprintf(name, sizeof name, "cvt.rn.satfinite%s.%s.f32", relu ? ".relu" : "", fp[k].ty);
      snprintf(body, sizeof body, "  %s %%hd, %%fa, %%fb;\n%s", name, ET_RH);
      if (fp[k].w == 4) snprintf(body, sizeof body, "  .reg .b8 %%q;\n  %s %%q, %%fa, %%fb;\n  cvt.u64.u8 %%rdd, %%q;\n", name);
      et_op(body, N, a, b, NULL, d, NULL);
      for (int i = 0; i < N; i++) {
        uint64_t v[2];
        float in[2] = {et_f32((uint32_t)a[i]), et_f32((uint32_t)b[i])};
        for (int h = 0; h < 2; h++) {
          float x = in[h];
          if (x != x) v[h] = fp[k].f->nan ? fp[k].f->nan : ((1u << (fp[k].w - 1)) - 1);
          else if (relu && signbit(x)) v[h] = 0;
          else v[h] = rf_round(fp[k].f, x, RF_RN, true);
        }
        want[i] = v[0] << fp[k].shift | v[1];
      }
      ET_CHECK_ARRAY(name, (size_t)N, d, want, a, b, b);
    }
  /* f16x2 -> e4m3x2 (high half to the high byte), and back */
  for (int i = 0; i < N; i++) a[i] = (uint32_t)et_rand(&s);
  et_op("  cvt.rn.satfinite.e4m3x2.f16x2 %hd, %ra;\n" ET_RH, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    uint64_t v[2];
    for (int h = 0; h < 2; h++) {
      double x = rf_value(&F16, (uint16_t)(a[i] >> (16 * h)));
      v[h] = x != x ? 0x7f : rf_round(&E4M3, x, RF_RN, true);
    }
    want[i] = v[1] << 8 | v[0];
  }
  ET_CHECK_ARRAY("cvt.rn.satfinite.e4m3x2.f16x2", (size_t)N, d, want, a, a, a);
  for (int i = 0; i < N; i++) a[i] &= 0xffff;
  et_op("  cvt.rn.f16x2.e4m3x2 %rd32, %ha;\n  cvt.rn.f16x2.e5m2x2 %re32, %ha;\n" ET_R32 ET_RE32, N, a, NULL, NULL, d,
        b);
  for (int i = 0; i < N; i++) {
    uint64_t w4 = 0, w5 = 0;
    for (int h = 0; h < 2; h++) {
      double x4 = rf_value(&E4M3, (uint8_t)(a[i] >> (8 * h))), x5 = rf_value(&E5M2, (uint8_t)(a[i] >> (8 * h)));
      w4 |= (uint64_t)(x4 != x4 ? 0x7fff : rf_round(&F16, x4, RF_RN, false)) << (16 * h);
      w5 |= (uint64_t)(x5 != x5 ? 0x7fff : rf_round(&F16, x5, RF_RN, false)) << (16 * h);
    }
    ck_assert_msg(d[i] == w4, "cvt.rn.f16x2.e4m3x2(%04llx) = %08llx want %08llx", (unsigned long long)a[i],
                  (unsigned long long)d[i], (unsigned long long)w4);
    ck_assert_msg(b[i] == w5, "cvt.rn.f16x2.e5m2x2(%04llx) = %08llx want %08llx", (unsigned long long)a[i],
                  (unsigned long long)b[i], (unsigned long long)w5);
  }
  /* ue8m0x2: powers of two, rz or rp */
  static const float uv[] = {1.0f, 1.5f, 0.75f, 3.0e38f, 1e-39f, 0.0f, -2.0f, 4.0f};
  uint64_t ua[8], ub[8], ud[8];
  for (int i = 0; i < 8; i++) ua[i] = et_f32b(uv[i]), ub[i] = et_f32b(uv[7 - i]);
  et_op("  cvt.rp.satfinite.ue8m0x2.f32 %hd, %fa, %fb;\n" ET_RH, 8, ua, ub, NULL, ud, NULL);
  for (int i = 0; i < 8; i++) {
    uint64_t v[2];
    float in[2] = {uv[i], uv[7 - i]};
    for (int h = 0; h < 2; h++) {
      float x = in[h];
      if (!(x > 0)) v[h] = 0;
      else {
        int e;
        double fr = frexp(x, &e);
        int k = e - 1 + (fr != 0.5);
        v[h] = k + 127 > 254 ? 254 : k + 127 < 0 ? 0 : (uint64_t)(k + 127);
      }
    }
    ck_assert_uint_eq(ud[i], v[0] << 8 | v[1]);
  }
  rf_free(&E4M3), rf_free(&E5M2), rf_free(&E2M3), rf_free(&E3M2), rf_free(&E2M1), rf_free(&F16);
}
END_TEST

/* Every input of the fp8 <-> f16x2 pair conversions that lower_math.c
 * expands on both halves at once (NCCL's fp8 reductions): all 65,536
 * e4m3x2/e5m2x2 words widened, and every f16 in each half narrowed with
 * .satfinite (the high half is a bijection of the low one, so each of the
 * 65,536 values meets a different partner in each position).  The
 * reference is emu_fpref.h's table rounding; the lowered runs are compared
 * with these in lower_diff_emu_cvt. */
START_TEST(cvt_fp8_f16x2_all) {
  enum { ALL = 65536 };
  rf_fmt E4M3 = rf_make(4, 3, 7, false, true, 0x7f);
  rf_fmt E5M2 = rf_make(5, 2, 15, true, false, 0x7f);
  rf_fmt F16 = rf_make(5, 10, 15, true, false, 0x7fff);
  uint64_t *a = malloc(ALL * 8), *d = malloc(ALL * 8), *e = malloc(ALL * 8);
  for (uint32_t i = 0; i < ALL; i++) a[i] = i;
  et_op("  cvt.rn.f16x2.e4m3x2 %rd32, %ha;\n  cvt.rn.f16x2.e5m2x2 %re32, %ha;\n" ET_R32 ET_RE32, ALL, a, NULL, NULL, d,
        e);
  int bad = 0;
  for (uint32_t i = 0; i < ALL; i++) {
    uint64_t w4 = 0, w5 = 0;
    for (int h = 0; h < 2; h++) {
      double x4 = rf_value(&E4M3, (uint8_t)(i >> (8 * h))), x5 = rf_value(&E5M2, (uint8_t)(i >> (8 * h)));
      w4 |= (uint64_t)(x4 != x4 ? 0x7fff : rf_round(&F16, x4, RF_RN, false)) << (16 * h);
      w5 |= (uint64_t)(x5 != x5 ? 0x7fff : rf_round(&F16, x5, RF_RN, false)) << (16 * h);
    }
    if ((d[i] != w4 || e[i] != w5) && bad++ < 8)
      fprintf(stderr, "cvt.rn.f16x2.{e4m3x2,e5m2x2}(%04x) = %08llx %08llx want %08llx %08llx\n", i,
              (unsigned long long)d[i], (unsigned long long)e[i], (unsigned long long)w4, (unsigned long long)w5);
  }
  ck_assert_msg(bad == 0, "cvt.rn.f16x2.{e4m3x2,e5m2x2}: %d of %d words wrong", bad, ALL);
  for (uint32_t i = 0; i < ALL; i++) a[i] = i | ((i * 0x9e37u + 0x5bd1u) & 0xffffu) << 16;
  et_op("  cvt.rn.satfinite.e4m3x2.f16x2 %hd, %ra;\n  cvt.rn.satfinite.e5m2x2.f16x2 %he, %ra;\n" ET_RH
        "  cvt.u64.u16 %rde, %he;\n",
        ALL, a, NULL, NULL, d, e);
  for (uint32_t i = 0; i < ALL; i++) {
    uint64_t w4 = 0, w5 = 0;
    for (int h = 0; h < 2; h++) {
      double x = rf_value(&F16, (uint16_t)(a[i] >> (16 * h)));
      w4 |= (uint64_t)(x != x ? 0x7f : rf_round(&E4M3, x, RF_RN, true)) << (8 * h);
      w5 |= (uint64_t)(x != x ? 0x7f : rf_round(&E5M2, x, RF_RN, true)) << (8 * h);
    }
    if ((d[i] != w4 || e[i] != w5) && bad++ < 8)
      fprintf(stderr, "cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2(%08llx) = %04llx %04llx want %04llx %04llx\n",
              (unsigned long long)a[i], (unsigned long long)d[i], (unsigned long long)e[i], (unsigned long long)w4,
              (unsigned long long)w5);
  }
  ck_assert_msg(bad == 0, "cvt.rn.satfinite.{e4m3x2,e5m2x2}.f16x2: %d of %d words wrong", bad, ALL);
  free(a), free(d), free(e);
  rf_free(&E4M3), rf_free(&E5M2), rf_free(&F16);
}
END_TEST

/* ---- fp8x2 from two f32, dense: every f32 top half (sign, exponent, 7
 * mantissa bits: all 65,536, f32 subnormals, infinities and NaNs included)
 * with the low 16 bits 0, 1, 0x7fff, 0x8000, 0x8001, 0xffff.  Every
 * rounding midpoint of both formats sits at f32 mantissa bit 19 (e4m3
 * normals) or 20 (e5m2) or above, so this meets each one exactly, just
 * below (the bits under it all ones) and just above (a sticky bit), through
 * cvt.rn.satfinite{.relu}.{e4m3x2,e5m2x2}.f32, a in the high byte.  b is
 * a bijection of a's top half with the next low pattern, so every value
 * meets both positions.  Reference: emu_fpref.h's table rounding; the
 * lowered runs (lower_math.c's f8_from_f32) are compared with these in
 * lower_diff_emu_cvt. */
START_TEST(cvt_fp8_f32_dense) {
  enum { ALL = 65536 };
  static const uint32_t low[] = {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff};
  enum { NL = sizeof low / sizeof low[0] };
  rf_fmt E4M3 = rf_make(4, 3, 7, false, true, 0x7f);
  rf_fmt E5M2 = rf_make(5, 2, 15, true, false, 0x7f);
  uint64_t *a = malloc(ALL * 8), *b = malloc(ALL * 8), *d = malloc(ALL * 8), *e = malloc(ALL * 8);
  int bad = 0;
  for (unsigned l = 0; l < NL; l++) {
    for (uint32_t i = 0; i < ALL; i++) {
      a[i] = i << 16 | low[l];
      b[i] = ((i * 0x9e37u + 0x5bd1u) & 0xffffu) << 16 | low[(l + 1) % NL];
    }
    /* d: e4m3x2 in bits 0-15, with .relu in 16-31; e: the same for e5m2x2 */
    et_op("  cvt.rn.satfinite.e4m3x2.f32 %h1, %fa, %fb;\n  cvt.rn.satfinite.relu.e4m3x2.f32 %h2, %fa, %fb;\n"
          "  cvt.rn.satfinite.e5m2x2.f32 %h3, %fa, %fb;\n  cvt.rn.satfinite.relu.e5m2x2.f32 %h4, %fa, %fb;\n"
          "  cvt.u64.u16 %x1, %h1;\n  cvt.u64.u16 %x2, %h2;\n  shl.b64 %x2, %x2, 16;\n  or.b64 %rdd, %x1, %x2;\n"
          "  cvt.u64.u16 %x3, %h3;\n  cvt.u64.u16 %x4, %h4;\n  shl.b64 %x4, %x4, 16;\n  or.b64 %rde, %x3, %x4;\n",
          ALL, a, b, NULL, d, e);
    for (uint32_t i = 0; i < ALL; i++) {
      uint64_t w4 = 0, w5 = 0;
      for (int relu = 0; relu < 2; relu++)
        for (int h = 0; h < 2; h++) {
          float x = et_f32((uint32_t)(h ? a[i] : b[i]));   /* a: the high byte */
          uint64_t v4, v5;
          if (x != x) v4 = v5 = 0x7f;
          else if (relu && signbit(x)) v4 = v5 = 0;
          else v4 = rf_round(&E4M3, x, RF_RN, true), v5 = rf_round(&E5M2, x, RF_RN, true);
          w4 |= v4 << (16 * relu + 8 * h);
          w5 |= v5 << (16 * relu + 8 * h);
        }
      if ((d[i] != w4 || e[i] != w5) && bad++ < 8)
        fprintf(stderr, "cvt.rn.satfinite{,.relu}.{e4m3x2,e5m2x2}.f32(%08llx, %08llx) = %08llx %08llx want %08llx %08llx\n",
                (unsigned long long)a[i], (unsigned long long)b[i], (unsigned long long)d[i], (unsigned long long)e[i],
                (unsigned long long)w4, (unsigned long long)w5);
    }
  }
  ck_assert_msg(bad == 0, "cvt.rn.satfinite{,.relu}.{e4m3x2,e5m2x2}.f32: %d of %d words wrong", bad, ALL * NL);
  free(a), free(b), free(d), free(e);
  rf_free(&E4M3), rf_free(&E5M2);
}
END_TEST

/* ---- cvt.pack: saturate and pack, b low, a above, c's bits shifted up ------------------------ */
static uint64_t sat(int32_t v, unsigned bits, bool sgn) {
  int64_t lo = sgn ? -(1ll << (bits - 1)) : 0, hi = sgn ? (1ll << (bits - 1)) - 1 : (1ll << bits) - 1;
  int64_t r = v < lo ? lo : v > hi ? hi : v;
  return (uint64_t)r & ((1ull << bits) - 1);
}

START_TEST(cvt_pack) {
  uint64_t a[N], b[N], c[N], d[N], e[N], s = 77;
  for (int i = 0; i < N; i++) {
    a[i] = (uint32_t)(int32_t)((int64_t)(et_rand(&s) % 1200) - 600);
    b[i] = i % 3 ? (uint32_t)et_rand(&s) : (uint32_t)(int32_t)((int64_t)(et_rand(&s) % 80000) - 40000);
    c[i] = (uint32_t)et_rand(&s);
  }
  et_op("  cvt.pack.sat.u8.s32.b32 %rd32, %ra, %rb, %rc;\n  cvt.pack.sat.s16.s32 %re32, %ra, %rb;\n" ET_R32 ET_RE32, N,
        a, b, c, d, e);
  for (int i = 0; i < N; i++) {
    uint64_t w8 = (uint32_t)(sat((int32_t)a[i], 8, false) << 8 | sat((int32_t)b[i], 8, false) | (uint32_t)c[i] << 16);
    uint64_t w16 = (uint32_t)(sat((int32_t)a[i], 16, true) << 16 | sat((int32_t)b[i], 16, true));
    ck_assert_msg(d[i] == w8, "cvt.pack.sat.u8(%d, %d, %08x) = %08llx want %08llx", (int32_t)a[i], (int32_t)b[i],
                  (uint32_t)c[i], (unsigned long long)d[i], (unsigned long long)w8);
    ck_assert_msg(e[i] == w16, "cvt.pack.sat.s16(%d, %d) = %08llx want %08llx", (int32_t)a[i], (int32_t)b[i],
                  (unsigned long long)e[i], (unsigned long long)w16);
  }
}
END_TEST

Suite *emu_cvt_suite(void) {
  Suite *s = suite_create("emu_cvt");
  TCase *tc = tcase_create("conformance");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, cvt_int_int);
  tcase_add_test(tc, cvt_float_int);
  tcase_add_test(tc, cvt_int_float);
  tcase_add_test(tc, cvt_f64_f32);
  tcase_add_test(tc, cvt_f32_narrow);
  tcase_add_test(tc, cvt_fp8);
  tcase_add_test(tc, cvt_fp8_f16x2_all);
  tcase_add_test(tc, cvt_fp8_f32_dense);
  tcase_add_test(tc, cvt_pack);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_cvt_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
