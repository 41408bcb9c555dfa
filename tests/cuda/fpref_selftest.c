/*
 * fpref_selftest: checks the host reference of fpref.h against the host's
 * own floating point, so that the references the CUDA programs compare with
 * are known good before any device runs them (no GPU needed).
 *
 *  - f32 add, mul, fma, div, sqrt in the four IEEE rounding modes, against
 *    the FPU under fesetround (operands over the whole float range,
 *    subnormals and x + (-x) included);
 *  - f64 add, mul, div, sqrt (dbl_*) in the four modes, specials included;
 *  - double -> f32 rounding in the four modes (fp_round);
 *  - double -> f16, and f16 add and mul, against GCC's _Float16 where the
 *    compiler has it (round to nearest only).
 */
#include "fpref.h"

#include <fenv.h>
#include <stdio.h>
#include <string.h>

static uint64_t state = 88172645463325252ull;
static uint64_t rnd(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

static float rnd_float(void)
{
    uint32_t b = (uint32_t)rnd();
    if (((b >> 23) & 0xff) == 0xff)
        b &= ~0x40000000u; /* no inf/NaN operands */
    float f;
    memcpy(&f, &b, 4);
    return f;
}

static const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
static long bad;

static void fail(const char *what, int mode, double a, double b, uint64_t got, uint64_t want)
{
    if (bad++ < 20)
        printf("fpref_selftest: %s mode %d a=%a b=%a: reference %llx, host FPU %llx\n", what, mode, a, b,
               (unsigned long long)got, (unsigned long long)want);
}

static void check_f32(void)
{
    for (int m = 0; m < 4; m++)
        for (long i = 0; i < 300000; i++) {
            float a = rnd_float(), b = rnd_float(), c = rnd_float();
            if (i % 7 == 0)
                b = -a;
            if (i % 11 == 0) {
                uint32_t x = (uint32_t)rnd() & 0x807fffffu; /* subnormal */
                memcpy(&a, &x, 4);
            }
            fesetround(modes[m]);
            volatile float va = a, vb = b, vc = c;
            volatile float s = va + vb, p = va * vb, q = va / vb, f = fmaf(va, vb, vc), r = sqrtf(fabsf(va));
            fesetround(FE_TONEAREST);
            uint32_t want[5], got[5] = {fp_add(a, b, FP_F32, m), fp_mul(a, b, FP_F32, m), fp_div(a, b, FP_F32, m),
                                        fp_fma(a, b, c, FP_F32, m), fp_sqrt(fabsf(a), FP_F32, m)};
            float w[5] = {s, p, q, f, r};
            static const char *names[5] = {"f32 add", "f32 mul", "f32 div", "f32 fma", "f32 sqrt"};
            for (int k = 0; k < 5; k++) {
                memcpy(&want[k], &w[k], 4);
                if (got[k] != want[k] && !(isnan(w[k]) && fp_is_nan(got[k], FP_F32)))
                    fail(names[k], m, a, b, got[k], want[k]);
            }
        }
}

static double rnd_double(long i)
{
    uint64_t x = rnd();
    switch (i % 9) {
    case 0: return 0.0;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    default: break;
    }
    x = (x & 0x800fffffffffffffull) | ((uint64_t)(700 + rnd() % 600) << 52); /* 2^-323 .. 2^276: products and quotients stay normal */
    double d;
    memcpy(&d, &x, 8);
    return d;
}

static void check_f64(void)
{
    for (int m = 0; m < 4; m++)
        for (long i = 0; i < 200000; i++) {
            double a = rnd_double(i), b = rnd_double(i / 3 + 1);
            if (i % 5 == 0)
                b = -a;
            fesetround(modes[m]);
            volatile double va = a, vb = b;
            volatile double s = va + vb, p = va * vb, q = va / vb, r = sqrt(fabs(va));
            fesetround(FE_TONEAREST);
            double got[4] = {dbl_add(a, b, m), dbl_mul(a, b, m), dbl_div(a, b, m), dbl_sqrt(fabs(a), m)};
            double want[4] = {s, p, q, r};
            static const char *names[4] = {"f64 add", "f64 mul", "f64 div", "f64 sqrt"};
            for (int k = 0; k < 4; k++)
                if (memcmp(&got[k], &want[k], 8) && !(isnan(got[k]) && isnan(want[k])))
                    fail(names[k], m, a, b, fp_bits_of(got[k]), fp_bits_of(want[k]));
        }
}

static void check_cvt_f32(void)
{
    for (int m = 0; m < 4; m++)
        for (long i = 0; i < 200000; i++) {
            uint64_t x = rnd();
            x = (x & 0x800fffffffffffffull) | ((uint64_t)(896 + rnd() % 262) << 52); /* float range and beyond */
            double a;
            memcpy(&a, &x, 8);
            fesetround(modes[m]);
            volatile double va = a;
            volatile float f = (float)va;
            fesetround(FE_TONEAREST);
            uint32_t want, got = fp_round(a, FP_F32, m);
            float fw = f;
            memcpy(&want, &fw, 4);
            if (got != want)
                fail("double->f32", m, a, 0, got, want);
        }
}

static void check_f16(void)
{
#if defined(__FLT16_MANT_DIG__)
    for (long i = 0; i < 300000; i++) {
        uint64_t x = rnd();
        x = (x & 0x800fffffffffffffull) | ((uint64_t)(1023 - 30 + rnd() % 50) << 52);
        double a;
        memcpy(&a, &x, 8);
        _Float16 h = (_Float16)a;
        uint16_t hb;
        memcpy(&hb, &h, 2);
        if (fp_round(a, FP_F16, FP_RN) != hb)
            fail("double->f16", 0, a, 0, fp_round(a, FP_F16, FP_RN), hb);
        uint16_t ua = (uint16_t)rnd(), ub = (uint16_t)rnd();
        if (((ua >> 10) & 31) == 31 || ((ub >> 10) & 31) == 31)
            continue;
        _Float16 ha, hb2;
        memcpy(&ha, &ua, 2);
        memcpy(&hb2, &ub, 2);
        _Float16 hs = ha + hb2, hm = ha * hb2;
        uint16_t sb, mb;
        memcpy(&sb, &hs, 2);
        memcpy(&mb, &hm, 2);
        double da = fp_decode(ua, FP_F16), db = fp_decode(ub, FP_F16);
        uint32_t es = fp_add(da, db, FP_F16, FP_RN), em = fp_mul(da, db, FP_F16, FP_RN);
        if (es != sb && !(fp_is_nan(es, FP_F16) && fp_is_nan(sb, FP_F16)))
            fail("f16 add", 0, da, db, es, sb);
        if (em != mb && !(fp_is_nan(em, FP_F16) && fp_is_nan(mb, FP_F16)))
            fail("f16 mul", 0, da, db, em, mb);
    }
#else
    printf("fpref_selftest: no _Float16 in this compiler, f16 cross-check skipped\n");
#endif
}

int main(void)
{
    check_f32();
    check_f64();
    check_cvt_f32();
    check_f16();
    if (bad) {
        printf("fpref_selftest: FAIL (%ld mismatches)\n", bad);
        return 1;
    }
    printf("fpref_selftest: PASS\n");
    return 0;
}
