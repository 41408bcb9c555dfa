/* tests/unit/test_emu_float.c: conformance of floating-point arithmetic
 * (PTX ISA 9.7.3, 9.7.4) in every rounding mode, with NaN, infinities,
 * denormals with and without .ftz, .sat, negative zero and rounding ties.
 *
 * f32/f64 references are the host's IEEE operations under fesetround (this
 * file is compiled with -frounding-math); f16/bf16 references round exact
 * values (long double / __float128) with emu_fpref.h's table search.
 * Every NaN result must be the canonical NaN (docs/emulator.md). */
#include <fenv.h>
#include <math.h>

#include "emu_fpref.h"
#include "emu_test.h"

static const uint32_t f32_edges[] = {
    0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001,
    0x7f800001, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff, 0x00800000, 0x80800000, 0x7f7fffff,
    0xff7fffff, 0x3f800001, 0x33800000, 0x34000000, 0x3f000000, 0x40490fdb, 0x00400000, 0x4b800001,
    0x3fffffff, 0xbf7fffff, 0x0f800000, 0x5f000000,
};
#define NF32 (sizeof f32_edges / sizeof f32_edges[0])

static const uint64_t f64_edges[] = {
    0, 0x8000000000000000ull, 0x3ff0000000000000ull, 0xbff0000000000000ull, 0x7ff0000000000000ull,
    0xfff0000000000000ull, 0x7ff8000000000000ull, 0xfff8000000000123ull, 0x0000000000000001ull,
    0x800fffffffffffffull, 0x0010000000000000ull, 0x7fefffffffffffffull, 0x3ff0000000000001ull,
    0x3ca0000000000000ull, 0x4340000000000001ull, 0x3fe0000000000000ull, 0x400921fb54442d18ull,
};
#define NF64 (sizeof f64_edges / sizeof f64_edges[0])

static size_t inputs32(uint64_t *a, uint64_t *b, uint64_t *c, size_t n, uint64_t seed) {
  size_t k = 0;
  for (size_t i = 0; i < NF32 && k < n; i++)
    for (size_t j = 0; j < NF32 && k < n; j++, k++) {
      a[k] = f32_edges[i];
      b[k] = f32_edges[j];
      c[k] = f32_edges[(i * 7 + j) % NF32];
    }
  uint64_t s = seed;
  for (; k < n; k++) {
    uint64_t r = et_rand(&s);
    a[k] = (uint32_t)r;
    b[k] = (uint32_t)(r >> 32);
    c[k] = (uint32_t)et_rand(&s);
    if (k % 3 == 0) {   /* comparable magnitudes: cancellation and ties */
      b[k] = (a[k] & 0xff800000u) | (b[k] & 0x807fffffu);
      c[k] = (a[k] & 0x7f800000u) | (c[k] & 0x807fffffu);
    }
  }
  return k;
}

static size_t inputs64(uint64_t *a, uint64_t *b, uint64_t *c, size_t n, uint64_t seed) {
  size_t k = 0;
  for (size_t i = 0; i < NF64 && k < n; i++)
    for (size_t j = 0; j < NF64 && k < n; j++, k++) {
      a[k] = f64_edges[i];
      b[k] = f64_edges[j];
      c[k] = f64_edges[(i * 5 + j) % NF64];
    }
  uint64_t s = seed;
  for (; k < n; k++) {
    a[k] = et_rand(&s);
    b[k] = et_rand(&s);
    c[k] = et_rand(&s);
    if (k % 3 == 0) {
      b[k] = (a[k] & 0xfff0000000000000ull) | (b[k] & 0x800fffffffffffffull);
      c[k] = (a[k] & 0x7ff0000000000000ull) | (c[k] & 0x800fffffffffffffull);
    }
  }
  return k;
}

enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FMA, OP_RCP, OP_SQRT };
static const int host_mode[] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
static const char *mode_name[] = {"rn", "rz", "rm", "rp"};

static uint32_t ftz32(uint32_t b) { return (b & 0x7f800000u) == 0 ? b & 0x80000000u : b; }

static uint64_t ref_f32(int op, uint32_t a, uint32_t b, uint32_t c, int mode, bool ftz, bool sat) {
  if (ftz) a = ftz32(a), b = ftz32(b), c = ftz32(c);
  volatile float x = et_f32(a), y = et_f32(b), z = et_f32(c), r;
  fesetround(host_mode[mode]);
  switch (op) {
  case OP_ADD: r = x + y; break;
  case OP_SUB: r = x - y; break;
  case OP_MUL: r = x * y; break;
  case OP_DIV: r = x / y; break;
  case OP_FMA: r = fmaf(x, y, z); break;
  case OP_RCP: r = 1.0f / x; break;
  default: r = sqrtf(x); break;
  }
  fesetround(FE_TONEAREST);
  uint32_t rb = et_f32b(r);
  if (r != r) return sat ? 0 : 0x7fffffffu;
  if (ftz) rb = ftz32(rb);
  if (sat) {
    float v = et_f32(rb);
    if (!(v > 0)) rb = 0;
    else if (v >= 1) rb = 0x3f800000u;
  }
  return rb;
}

static uint64_t ref_f64(int op, uint64_t a, uint64_t b, uint64_t c, int mode) {
  volatile double x = et_f64(a), y = et_f64(b), z = et_f64(c), r;
  fesetround(host_mode[mode]);
  switch (op) {
  case OP_ADD: r = x + y; break;
  case OP_SUB: r = x - y; break;
  case OP_MUL: r = x * y; break;
  case OP_DIV: r = x / y; break;
  case OP_FMA: r = fma(x, y, z); break;
  case OP_RCP: r = 1.0 / x; break;
  default: r = sqrt(x); break;
  }
  fesetround(FE_TONEAREST);
  return r != r ? 0x7fffffffffffffffull : et_f64b(r);
}

#define N_IN 1536

static void check_f32(int op, const char *ptxop, int mode, bool ftz, bool sat) {
  uint64_t a[N_IN], b[N_IN], c[N_IN], d[N_IN], want[N_IN];
  size_t n = inputs32(a, b, c, N_IN, 0x1234 + (uint64_t)op * 16 + (uint64_t)mode);
  char body[256], name[96];
  const char *ops = op == OP_FMA ? "%fd, %fa, %fb, %fc" : (op == OP_RCP || op == OP_SQRT) ? "%fd, %fa" : "%fd, %fa, %fb";
  snprintf(name, sizeof name, "%s.%s%s%s.f32", ptxop, mode_name[mode], ftz ? ".ftz" : "", sat ? ".sat" : "");
  snprintf(body, sizeof body, "  %s %s;\n%s", name, ops, ET_RF);
  et_op(body, n, a, b, c, d, NULL);
  for (size_t i = 0; i < n; i++) want[i] = ref_f32(op, (uint32_t)a[i], (uint32_t)b[i], (uint32_t)c[i], mode, ftz, sat);
  ET_CHECK_ARRAY(name, n, d, want, a, b, c);
}

static void check_f64(int op, const char *ptxop, int mode) {
  uint64_t a[N_IN], b[N_IN], c[N_IN], d[N_IN], want[N_IN];
  size_t n = inputs64(a, b, c, N_IN, 0x4321 + (uint64_t)op * 16 + (uint64_t)mode);
  char body[256], name[96];
  const char *ops = op == OP_FMA ? "%dd, %da, %db, %dc" : (op == OP_RCP || op == OP_SQRT) ? "%dd, %da" : "%dd, %da, %db";
  snprintf(name, sizeof name, "%s.%s.f64", ptxop, mode_name[mode]);
  snprintf(body, sizeof body, "  %s %s;\n%s", name, ops, ET_RD);
  et_op(body, n, a, b, c, d, NULL);
  for (size_t i = 0; i < n; i++) want[i] = ref_f64(op, a[i], b[i], c[i], mode);
  ET_CHECK_ARRAY(name, n, d, want, a, b, c);
}

/* set/setp on packed halves (PTX ISA, half precision comparison): each
 * half is compared on its own; set writes 1.0 per half to an .f16x2 or
 * .bf16x2 destination and 0xffff per half to a .u32/.s32 one, setp.f16x2
 * p|q gives p from the low halves and q from the high ones, each combined
 * with c.  Expected values by hand: f16 1.0 = 0x3c00, 2.0 = 0x4000,
 * -inf = 0xfc00, NaN = 0x7e00; bf16 1.0 = 0x3f80, -1.0 = 0xbf80. */
typedef struct pcase { const char *body; uint32_t a, b, c, want; } pcase;
START_TEST(packed_half_set_setp) {
  static const pcase cs[] = {
      /* {lo 1.0, hi 2.0} vs {lo 2.0, hi 1.0}: lo false, hi true */
      {"  set.gt.u32.f16x2 %rd32, %ra, %rb;\n" ET_R32, 0x40003c00, 0x3c004000, 0, 0xffff0000},
      {"  set.lt.s32.f16x2 %rd32, %ra, %rb;\n" ET_R32, 0x40003c00, 0x3c004000, 0, 0x0000ffff},
      {"  set.gt.f16x2.f16x2 %rd32, %ra, %rb;\n" ET_R32, 0x40003c00, 0x3c004000, 0, 0x3c000000},
      /* NaN in the low halves: ordered eq false, unordered equ true */
      {"  set.eq.f16x2.f16x2 %rd32, %ra, %rb;\n" ET_R32, 0x3c007e00, 0x3c007e00, 0, 0x3c000000},
      {"  set.equ.f16x2.f16x2 %rd32, %ra, %rb;\n" ET_R32, 0x3c007e00, 0x3c007e00, 0, 0x3c003c00},
      /* -inf > 0 is false, 1 > -0 true */
      {"  set.gtu.u32.f16x2 %rd32, %ra, %rb;\n" ET_R32, 0xfc003c00, 0x00008000, 0, 0x0000ffff},
      /* combined with c: and with false clears both, or with true sets both */
      {"  set.gt.and.u32.f16x2 %rd32, %ra, %rb, %pc;\n" ET_R32, 0x40003c00, 0x3c004000, 0, 0},
      {"  set.gt.and.u32.f16x2 %rd32, %ra, %rb, %pc;\n" ET_R32, 0x40003c00, 0x3c004000, 1, 0xffff0000},
      {"  set.gt.or.u32.f16x2 %rd32, %ra, %rb, %pc;\n" ET_R32, 0x40003c00, 0x3c004000, 1, 0xffffffff},
      {"  set.gt.xor.f16x2.f16x2 %rd32, %ra, %rb, %pc;\n" ET_R32, 0x40003c00, 0x3c004000, 1, 0x00003c00},
      /* bf16x2: {lo 1.0, hi -1.0} >= {lo 1.0, hi 0} */
      {"  set.ge.u32.bf16x2 %rd32, %ra, %rb;\n" ET_R32, 0xbf803f80, 0x00003f80, 0, 0x0000ffff},
      {"  set.ge.bf16x2.bf16x2 %rd32, %ra, %rb;\n" ET_R32, 0xbf803f80, 0x00003f80, 0, 0x00003f80},
      /* setp p|q with c: bit 0 = p, bit 1 = q */
      {"  setp.gt.and.f16x2 %pd|%pe, %ra, %rb, %pc;\n  selp.u32 %r1, 1, 0, %pd;\n  selp.u32 %r2, 2, 0, %pe;\n"
       "  or.b32 %rd32, %r1, %r2;\n" ET_R32, 0x40003c00, 0x3c004000, 1, 2},
      {"  setp.gt.and.f16x2 %pd|%pe, %ra, %rb, %pc;\n  selp.u32 %r1, 1, 0, %pd;\n  selp.u32 %r2, 2, 0, %pe;\n"
       "  or.b32 %rd32, %r1, %r2;\n" ET_R32, 0x40003c00, 0x3c004000, 0, 0},
      {"  setp.lt.or.bf16x2 %pd|%pe, %ra, %rb, %pc;\n  selp.u32 %r1, 1, 0, %pd;\n  selp.u32 %r2, 2, 0, %pe;\n"
       "  or.b32 %rd32, %r1, %r2;\n" ET_R32, 0xbf803f80, 0x00003f80, 0, 2},
  };
  for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
    uint64_t a = cs[k].a, b = cs[k].b, c = cs[k].c, d = 0;
    et_op(cs[k].body, 1, &a, &b, &c, &d, NULL);
    ck_assert_msg(d == cs[k].want, "%s: got 0x%llx, want 0x%x", cs[k].body, (unsigned long long)d, cs[k].want);
  }
}
END_TEST

START_TEST(f32_arith_all_modes) {
  for (int mode = 0; mode < 4; mode++) {
    check_f32(OP_ADD, "add", mode, false, false);
    check_f32(OP_SUB, "sub", mode, false, false);
    check_f32(OP_MUL, "mul", mode, false, false);
    check_f32(OP_FMA, "fma", mode, false, false);
    check_f32(OP_DIV, "div", mode, false, false);
    check_f32(OP_RCP, "rcp", mode, false, false);
    check_f32(OP_SQRT, "sqrt", mode, false, false);
  }
}
END_TEST

START_TEST(f32_ftz_sat) {
  for (int mode = 0; mode < 4; mode += 3) {
    check_f32(OP_ADD, "add", mode, true, false);
    check_f32(OP_MUL, "mul", mode, true, true);
    check_f32(OP_FMA, "fma", mode, true, false);
    check_f32(OP_FMA, "fma", mode, false, true);
    check_f32(OP_SUB, "sub", mode, true, true);
    check_f32(OP_DIV, "div", mode, true, false);
  }
}
END_TEST

START_TEST(f64_arith_all_modes) {
  for (int mode = 0; mode < 4; mode++) {
    check_f64(OP_ADD, "add", mode);
    check_f64(OP_SUB, "sub", mode);
    check_f64(OP_MUL, "mul", mode);
    check_f64(OP_FMA, "fma", mode);
    check_f64(OP_DIV, "div", mode);
    check_f64(OP_RCP, "rcp", mode);
    check_f64(OP_SQRT, "sqrt", mode);
  }
}
END_TEST

/* ---- min / max: IEEE minNum/maxNum, -0 < +0, .NaN, .xorsign.abs -------------- */
static uint32_t ref_minmax32(uint32_t a, uint32_t b, bool mx, bool nanm, bool xs) {
  float x = et_f32(a), y = et_f32(b);
  bool xn = x != x, yn = y != y;
  if ((nanm && (xn || yn)) || (xn && yn)) return 0x7fffffffu;
  if (xn) return xs ? (et_f32b(fabsf(y)) | ((a ^ b) & 0x80000000u)) : b;
  if (yn) return xs ? (et_f32b(fabsf(x)) | ((a ^ b) & 0x80000000u)) : a;
  uint32_t sx = (a ^ b) & 0x80000000u;
  if (xs) x = fabsf(x), y = fabsf(y), a &= 0x7fffffffu, b &= 0x7fffffffu;
  uint32_t r;
  if (x == y) r = mx ? ((a & 0x80000000u) ? b : a) : ((a & 0x80000000u) ? a : b);
  else r = mx ? (x > y ? a : b) : (x < y ? a : b);
  return xs ? (r & 0x7fffffffu) | sx : r;
}

START_TEST(f32_minmax) {
  static const struct { const char *op; bool mx, nanm, xs; } cs[] = {
      {"min.f32", false, false, false}, {"max.f32", true, false, false},
      {"min.NaN.f32", false, true, false}, {"max.NaN.f32", true, true, false},
      {"min.xorsign.abs.f32", false, false, true}, {"max.xorsign.abs.f32", true, false, true},
  };
  uint64_t a[N_IN], b[N_IN], c[N_IN], d[N_IN], want[N_IN];
  for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
    size_t n = inputs32(a, b, c, N_IN, 77 + k);
    char body[128];
    snprintf(body, sizeof body, "  %s %%fd, %%fa, %%fb;\n%s", cs[k].op, ET_RF);
    et_op(body, n, a, b, c, d, NULL);
    for (size_t i = 0; i < n; i++) want[i] = ref_minmax32((uint32_t)a[i], (uint32_t)b[i], cs[k].mx, cs[k].nanm, cs[k].xs);
    ET_CHECK_ARRAY(cs[k].op, n, d, want, a, b, c);
  }
  /* f64 min: same rules, canonical f64 NaN */
  size_t n = inputs64(a, b, c, N_IN, 99);
  et_op("  min.f64 %dd, %da, %db;\n" ET_RD, n, a, b, c, d, NULL);
  for (size_t i = 0; i < n; i++) {
    double x = et_f64(a[i]), y = et_f64(b[i]);
    if (x != x && y != y) want[i] = 0x7fffffffffffffffull;
    else if (x != x) want[i] = b[i];
    else if (y != y) want[i] = a[i];
    else if (x == y) want[i] = (a[i] >> 63) ? a[i] : b[i];
    else want[i] = x < y ? a[i] : b[i];
  }
  ET_CHECK_ARRAY("min.f64", n, d, want, a, b, c);
}
END_TEST

/* ---- abs, neg, copysign, testp ------------------------------------------------------ */
START_TEST(f32_sign_testp) {
  uint64_t a[N_IN], b[N_IN], c[N_IN], d[N_IN], e[N_IN], want[N_IN], wante[N_IN];
  size_t n = inputs32(a, b, c, N_IN, 5);
  et_op("  abs.f32 %fd, %fa;\n  neg.ftz.f32 %fe, %fb;\n" ET_RF "  mov.b32 %re32, %fe;\n" ET_RE32, n, a, b, c, d, e);
  for (size_t i = 0; i < n; i++) {
    want[i] = a[i] & 0x7fffffffu;
    wante[i] = ftz32((uint32_t)b[i]) ^ 0x80000000u;
  }
  ET_CHECK_ARRAY("abs.f32", n, d, want, a, b, c);
  ET_CHECK_ARRAY("neg.ftz.f32", n, e, wante, a, b, c);
  et_op("  copysign.f32 %fd, %fa, %fb;\n" ET_RF, n, a, b, c, d, NULL);
  for (size_t i = 0; i < n; i++) want[i] = (b[i] & 0x7fffffffu) | (a[i] & 0x80000000u);
  ET_CHECK_ARRAY("copysign.f32", n, d, want, a, b, c);
  static const char *modes[] = {"finite", "infinite", "number", "notanumber", "normal", "subnormal"};
  for (int m = 0; m < 6; m++) {
    char body[128];
    snprintf(body, sizeof body, "  testp.%s.f32 %%pd, %%fa;\n%s", modes[m], ET_RP);
    et_op(body, n, a, b, c, d, NULL);
    for (size_t i = 0; i < n; i++) {
      uint32_t v = (uint32_t)a[i], ex = (v >> 23) & 0xff, man = v & 0x7fffff;
      bool r;
      switch (m) {
      case 0: r = ex != 0xff; break;
      case 1: r = ex == 0xff && !man; break;
      case 2: r = !(ex == 0xff && man); break;
      case 3: r = ex == 0xff && man; break;
      case 4: r = ex != 0 && ex != 0xff; break;
      default: r = ex == 0 && man; break;
      }
      want[i] = r;
    }
    ET_CHECK_ARRAY(modes[m], n, d, want, a, b, c);
  }
}
END_TEST

/* ---- comparisons on floats ------------------------------------------------------------ */
START_TEST(f32_setp) {
  static const char *ops[] = {"eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
  uint64_t a[N_IN], b[N_IN], c[N_IN], d[N_IN], want[N_IN];
  size_t n = inputs32(a, b, c, N_IN, 11);
  for (int k = 0; k < 14; k++)
    for (int ftz = 0; ftz < 2; ftz++) {
      char body[128], name[64];
      snprintf(name, sizeof name, "setp.%s%s.f32", ops[k], ftz ? ".ftz" : "");
      snprintf(body, sizeof body, "  %s %%pd, %%fa, %%fb;\n%s", name, ET_RP);
      et_op(body, n, a, b, c, d, NULL);
      for (size_t i = 0; i < n; i++) {
        float x = et_f32(ftz ? ftz32((uint32_t)a[i]) : (uint32_t)a[i]);
        float y = et_f32(ftz ? ftz32((uint32_t)b[i]) : (uint32_t)b[i]);
        bool u = x != x || y != y, r;
        switch (k) {
        case 0: r = !u && x == y; break;
        case 1: r = !u && x != y; break;
        case 2: r = !u && x < y; break;
        case 3: r = !u && x <= y; break;
        case 4: r = !u && x > y; break;
        case 5: r = !u && x >= y; break;
        case 6: r = u || x == y; break;
        case 7: r = u || x != y; break;
        case 8: r = u || x < y; break;
        case 9: r = u || x <= y; break;
        case 10: r = u || x > y; break;
        case 11: r = u || x >= y; break;
        case 12: r = !u; break;
        default: r = u; break;
        }
        want[i] = r;
      }
      ET_CHECK_ARRAY(name, n, d, want, a, b, c);
    }
}
END_TEST

/* ---- approximate functions: within the PTX ISA's bounds --------------------------------- */
static void check_approx(const char *op, double (*ref)(double), double lo, double hi, double abs_tol, double rel_tol) {
  enum { N = 1024 };
  uint64_t a[N], d[N];
  for (int i = 0; i < N; i++) a[i] = et_f32b((float)(lo + (hi - lo) * i / (N - 1)));
  char body[128];
  snprintf(body, sizeof body, "  %s %%fd, %%fa;\n%s", op, ET_RF);
  et_op(body, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    double x = et_f32((uint32_t)a[i]), want = ref(x), got = et_f32((uint32_t)d[i]);
    double err = fabs(got - want);
    ck_assert_msg(err <= abs_tol || err <= rel_tol * fabs(want), "%s(%a) = %a, want %a (error %g)", op, x, got, want, err);
  }
}

static double r_rcp(double x) { return 1 / x; }
static double r_rsqrt(double x) { return 1 / sqrt(x); }
static double r_ex2(double x) { return exp2(x); }
static double r_lg2(double x) { return log2(x); }

START_TEST(f32_approx_bounds) {
  check_approx("sin.approx.f32", sin, -100 * M_PI, 100 * M_PI, ldexp(1, -20), 0);   /* 2^-20.9 abs */
  check_approx("cos.approx.f32", cos, -M_PI, M_PI, ldexp(1, -20), 0);
  check_approx("ex2.approx.f32", r_ex2, -100, 100, 0, ldexp(1, -22));               /* 2 ulp */
  check_approx("lg2.approx.f32", r_lg2, 0.5, 2, ldexp(1, -22), 0);                   /* 2^-22.6 abs */
  check_approx("lg2.approx.f32", r_lg2, 2, 1e30, 0, ldexp(1, -22));
  check_approx("rcp.approx.f32", r_rcp, 0.001, 1000, 0, ldexp(1, -23));             /* 1 ulp */
  check_approx("rsqrt.approx.f32", r_rsqrt, 1e-10, 1e10, 0, ldexp(1, -22));
  check_approx("sqrt.approx.f32", sqrt, 0, 1e20, 0, ldexp(1, -22));
  check_approx("tanh.approx.f32", tanh, -20, 20, 0, ldexp(1, -10));                  /* 2^-10.987 rel */
  /* special values */
  uint64_t a[8] = {0x7f800000, 0xff800000, 0x00000000, 0x80000000, 0xbf800000, 0x7fc00000, 0x3f800000, 0x40000000};
  uint64_t d[8], e[8];
  et_op("  sin.approx.f32 %fd, %fa;\n  lg2.approx.f32 %fe, %fa;\n" ET_RF "  mov.b32 %re32, %fe;\n" ET_RE32, 8, a, NULL,
        NULL, d, e);
  ck_assert_uint_eq(d[0], 0x7fffffff);                     /* sin(inf) = NaN */
  ck_assert_uint_eq(e[0], 0x7f800000);                     /* lg2(inf) = inf */
  ck_assert_uint_eq(e[2], 0xff800000);                     /* lg2(0) = -inf */
  ck_assert_uint_eq(e[4], 0x7fffffff);                     /* lg2(-1) = NaN */
  ck_assert_uint_eq(e[6], 0);                              /* lg2(1) = 0 */
  ck_assert_uint_eq(e[7], 0x3f800000);                     /* lg2(2) = 1 */
  et_op("  ex2.approx.ftz.f32 %fd, %fa;\n  rsqrt.approx.f32 %fe, %fa;\n" ET_RF "  mov.b32 %re32, %fe;\n" ET_RE32, 8, a,
        NULL, NULL, d, e);
  ck_assert_uint_eq(d[0], 0x7f800000);                     /* ex2(inf) */
  ck_assert_uint_eq(d[1], 0);                              /* ex2(-inf) = +0 */
  ck_assert_uint_eq(d[2], 0x3f800000);                     /* ex2(0) = 1 */
  ck_assert_uint_eq(e[2], 0x7f800000);                     /* rsqrt(+0) = inf */
  ck_assert_uint_eq(e[3], 0xff800000);                     /* rsqrt(-0) = -inf */
  ck_assert_uint_eq(e[4], 0x7fffffff);                     /* rsqrt(-1) = NaN */
}
END_TEST

/* ---- f16 and bf16 arithmetic ------------------------------------------------------------- */
static rf_fmt F16, BF16;

static void init_fmts(void) {
  if (!F16.val) {
    F16 = rf_make(5, 10, 15, true, false, 0x7fff);
    BF16 = rf_make(8, 7, 127, true, false, 0x7fff);
  }
}

static uint32_t ref_half(const rf_fmt *f, int op, uint16_t a, uint16_t b, uint16_t c, bool ftz, bool sat) {
  __float128 x = rf_value(f, a), y = rf_value(f, b), z = rf_value(f, c), r;
  if (ftz) {
    if ((a & 0x7c00) == 0) x = (a & 0x8000) ? -0.0 : 0.0;
    if ((b & 0x7c00) == 0) y = (b & 0x8000) ? -0.0 : 0.0;
    if ((c & 0x7c00) == 0) z = (c & 0x8000) ? -0.0 : 0.0;
  }
  switch (op) {
  case OP_ADD: r = x + y; break;
  case OP_SUB: r = x - y; break;
  case OP_MUL: r = x * y; break;
  default: r = x * y + z; break;
  }
  if (r != r) return sat ? 0 : f->nan;
  if (sat) {
    if (!(r > 0)) return 0;
    if (r >= 1) return f == &F16 ? 0x3c00 : 0x3f80;
  }
  uint32_t res = rf_round(f, r, RF_RN, false);
  if (ftz && (res & 0x7c00) == 0) res &= 0x8000;
  return res;
}

START_TEST(half_arith) {
  init_fmts();
  static const struct { const char *op; int kind; bool bf, ftz, sat; } cs[] = {
      {"add.rn.f16", OP_ADD, false, false, false}, {"sub.rn.f16", OP_SUB, false, false, false},
      {"mul.rn.f16", OP_MUL, false, false, false}, {"fma.rn.f16", OP_FMA, false, false, false},
      {"add.rn.ftz.f16", OP_ADD, false, true, false}, {"fma.rn.sat.f16", OP_FMA, false, false, true},
      {"mul.rn.ftz.sat.f16", OP_MUL, false, true, true},
      {"add.rn.bf16", OP_ADD, true, false, false}, {"mul.rn.bf16", OP_MUL, true, false, false},
      {"fma.rn.bf16", OP_FMA, true, false, false},
  };
  enum { N = 2048 };
  uint64_t a[N], b[N], c[N], d[N], want[N];
  static const uint16_t e16[] = {0, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x8001, 0x03ff,
                                 0x0400, 0x7bff, 0xfbff, 0x3c01, 0x1400, 0x5bff, 0x4000};
  for (size_t k = 0; k < sizeof cs / sizeof cs[0]; k++) {
    uint64_t s = 1000 + k;
    for (int i = 0; i < N; i++) {
      if (i < 17 * 17) {
        a[i] = e16[i / 17];
        b[i] = e16[i % 17];
        c[i] = e16[(i * 3) % 17];
      } else {
        uint64_t r = et_rand(&s);
        a[i] = r & 0xffff, b[i] = (r >> 16) & 0xffff, c[i] = (r >> 32) & 0xffff;
        if (i % 2) b[i] = (b[i] & 0x83ff) | (a[i] & 0x7c00);
      }
    }
    char body[128];
    const char *ops = cs[k].kind == OP_FMA ? "%hd, %ha, %hb, %hc" : "%hd, %ha, %hb";
    snprintf(body, sizeof body, "  %s %s;\n%s", cs[k].op, ops, ET_RH);
    et_op(body, N, a, b, c, d, NULL);
    for (int i = 0; i < N; i++)
      want[i] = ref_half(cs[k].bf ? &BF16 : &F16, cs[k].kind, (uint16_t)a[i], (uint16_t)b[i], (uint16_t)c[i], cs[k].ftz,
                         cs[k].sat);
    ET_CHECK_ARRAY(cs[k].op, (size_t)N, d, want, a, b, c);
  }
  /* packed: each half independently */
  uint64_t s = 4242;
  for (int i = 0; i < N; i++) {
    a[i] = (uint32_t)et_rand(&s), b[i] = (uint32_t)et_rand(&s), c[i] = (uint32_t)et_rand(&s);
  }
  et_op("  fma.rn.f16x2 %rd32, %ra, %rb, %rc;\n" ET_R32, N, a, b, c, d, NULL);
  for (int i = 0; i < N; i++)
    want[i] = ref_half(&F16, OP_FMA, (uint16_t)a[i], (uint16_t)b[i], (uint16_t)c[i], false, false) |
              ref_half(&F16, OP_FMA, (uint16_t)(a[i] >> 16), (uint16_t)(b[i] >> 16), (uint16_t)(c[i] >> 16), false,
                       false) << 16;
  ET_CHECK_ARRAY("fma.rn.f16x2", (size_t)N, d, want, a, b, c);
  et_op("  mul.rn.bf16x2 %rd32, %ra, %rb;\n" ET_R32, N, a, b, c, d, NULL);
  for (int i = 0; i < N; i++)
    want[i] = ref_half(&BF16, OP_MUL, (uint16_t)a[i], (uint16_t)b[i], 0, false, false) |
              ref_half(&BF16, OP_MUL, (uint16_t)(a[i] >> 16), (uint16_t)(b[i] >> 16), 0, false, false) << 16;
  ET_CHECK_ARRAY("mul.rn.bf16x2", (size_t)N, d, want, a, b, c);
  /* min/max on halves, and neg/abs as bit operations */
  et_op("  max.NaN.f16 %hd, %ha, %hb;\n" ET_RH, N, a, b, c, d, NULL);
  for (int i = 0; i < N; i++) {
    uint16_t x = (uint16_t)a[i], y = (uint16_t)b[i];
    double vx = rf_value(&F16, x), vy = rf_value(&F16, y);
    if (vx != vx || vy != vy) want[i] = 0x7fff;
    else if (vx == vy) want[i] = (x & 0x8000) ? y : x;
    else want[i] = vx > vy ? x : y;
  }
  ET_CHECK_ARRAY("max.NaN.f16", (size_t)N, d, want, a, b, c);
  et_op("  neg.f16 %hd, %ha;\n  abs.bf16 %he, %hb;\n" ET_RH "  cvt.u64.u16 %rde, %he;\n", N, a, b, c, d, want);
  for (int i = 0; i < N; i++) {
    ck_assert_uint_eq(d[i], (a[i] ^ 0x8000) & 0xffff);
    ck_assert_uint_eq(want[i], b[i] & 0x7fff);
  }
}
END_TEST

START_TEST(half_approx) {
  init_fmts();
  enum { N = 512 };
  uint64_t a[N], d[N];
  for (int i = 0; i < N; i++) a[i] = (uint16_t)(0x3000 + i * 31);   /* a spread of positive and larger values */
  et_op("  ex2.approx.f16 %hd, %ha;\n" ET_RH, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    double x = rf_value(&F16, (uint16_t)a[i]), want = exp2(x), got = rf_value(&F16, (uint16_t)d[i]);
    if (want > 65504) ck_assert_uint_eq(d[i], 0x7c00);
    else ck_assert_msg(fabs(got - want) <= fabs(want) * ldexp(1, -9.9), "ex2.f16(%g) = %g want %g", x, got, want);
  }
  et_op("  tanh.approx.f16 %hd, %ha;\n" ET_RH, N, a, NULL, NULL, d, NULL);
  for (int i = 0; i < N; i++) {
    double x = rf_value(&F16, (uint16_t)a[i]), want = tanh(x), got = rf_value(&F16, (uint16_t)d[i]);
    ck_assert_msg(fabs(got - want) <= fabs(want) * ldexp(1, -9.9), "tanh.f16(%g) = %g want %g", x, got, want);
  }
}
END_TEST

Suite *emu_float_suite(void) {
  Suite *s = suite_create("emu_float");
  TCase *tc = tcase_create("conformance");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, f32_arith_all_modes);
  tcase_add_test(tc, packed_half_set_setp);
  tcase_add_test(tc, f32_ftz_sat);
  tcase_add_test(tc, f64_arith_all_modes);
  tcase_add_test(tc, f32_minmax);
  tcase_add_test(tc, f32_sign_testp);
  tcase_add_test(tc, f32_setp);
  tcase_add_test(tc, f32_approx_bounds);
  tcase_add_test(tc, half_arith);
  tcase_add_test(tc, half_approx);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_float_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
