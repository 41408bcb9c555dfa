/*
 * float_math: single-precision arithmetic, rounding modes, conversions and
 * math functions.
 *
 * Exact part, compared bit for bit with fpref.h (a NaN reference accepts
 * any NaN; min/max accept either zero when the reference is a zero):
 *   __fadd/__fmul/__fmaf/__fdiv _rn _rz _rd _ru, a / b (div.rn.f32),
 *   sqrtf and __fsqrt_rz/rd/ru, __frcp_rn/rz/rd/ru, fminf/fmaxf (min/max.f32:
 *   a NaN operand yields the other), min.NaN/max.NaN (inline PTX), fabsf,
 *   negation, copysignf, truncf/floorf/ceilf/rintf (cvt.rzi/rmi/rpi/rni),
 *   roundf, __saturatef, add.ftz/mul.ftz (inline PTX: subnormal operands
 *   and results become zeros of the same sign), __float2int_rn/rz/rd/ru,
 *   __float2uint_rn/rz, __float2ll_rn, __float2ull_rz (saturating, NaN -> 0,
 *   as cvt defines), __int2float_rn/rz/rd/ru, __uint2float_rn,
 *   __ll2float_rn/rz, __ull2float_rd.
 * Inputs mix random floats over the whole range with subnormals, zeros of
 * both signs, infinities and NaNs.
 *
 * Approximate part, each on its own input range, tolerances from the CUDA
 * Programming Guide's tables (Mathematical Functions: standard and intrinsic
 * functions) and the PTX ISA's bounds for the .approx instruction behind
 * them; the reference is the double-precision function, rounded to float,
 * so 1 ulp is added to every ulp bound:
 *   __fdividef (div.approx.f32)  2 ulp for 2^-126 <= |y| <= 2^126
 *   __expf (ex2.approx of x*log2 e)  2 + floor(|1.173 x|) ulp
 *   __sinf, __cosf (sin/cos.approx)  absolute 2^-21.41 / 2^-21.19 on
 *                                    [-pi, pi]; checked at 2^-20
 *   __logf (lg2.approx * ln 2)  absolute 2^-21.41 on [0.5, 2], else 3 ulp
 *   exp2f (ex2.approx.f32 with special cases)  2 ulp
 *   rsqrtf (rsqrt.approx.f32, "max relative error 2^-22.9" in the ISA)  2 ulp
 *   sinf, expf  2 ulp;  logf  1 ulp;  atan2f  3 ulp
 *   tanh.approx.f32 (inline PTX)  the ISA's maximum relative error 2^-11,
 *                                 checked at 2^-10 relative
 */
#include "check.h"
#include "fpref.h"

#include <math.h>

#define KE 58 /* exact results per element */
#define KA 12 /* approximate results per element */

__global__ void exact_ops(const float *A, const float *B, const float *C, const long long *L, unsigned *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float a = A[i], b = B[i], c = C[i];
    long long ll = L[i];
    int ii = (int)ll;
    unsigned *o = out + (size_t)i * KE;
    int k = 0;
    float r;
#define F(x) o[k++] = __float_as_uint(x)
    F(__fadd_rn(a, b)); F(__fadd_rz(a, b)); F(__fadd_rd(a, b)); F(__fadd_ru(a, b));
    F(__fmul_rn(a, b)); F(__fmul_rz(a, b)); F(__fmul_rd(a, b)); F(__fmul_ru(a, b));
    F(__fmaf_rn(a, b, c)); F(__fmaf_rz(a, b, c)); F(__fmaf_rd(a, b, c)); F(__fmaf_ru(a, b, c));
    F(__fdiv_rn(a, b)); F(__fdiv_rz(a, b)); F(__fdiv_rd(a, b)); F(__fdiv_ru(a, b));
    F(a / b);
    F(sqrtf(a)); F(__fsqrt_rz(a)); F(__fsqrt_rd(a)); F(__fsqrt_ru(a));
    F(__frcp_rn(a)); F(__frcp_rz(a)); F(__frcp_rd(a)); F(__frcp_ru(a));
    F(fminf(a, b)); F(fmaxf(a, b));
#ifdef PTXWAVE_NATIVE
    /* native twin (benchmarks/native/cuda_on_hip.h defines the macro): PTX ISA
     * "min"/"max" .NaN: a NaN operand gives NaN, -0 < +0 (IEEE 754-2019
     * minimum/maximum, llvm.minimum/maximum) */
    F(__builtin_elementwise_minimum(a, b));
    F(__builtin_elementwise_maximum(a, b));
#else
    asm("min.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    F(r);
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    F(r);
#endif
    F(fabsf(a)); F(-a); F(copysignf(a, b));
    F(truncf(a)); F(floorf(a)); F(ceilf(a)); F(rintf(a)); F(roundf(a));
    F(__saturatef(a));
#ifdef PTXWAVE_NATIVE
    /* native twin: .ftz flushes subnormal inputs and results to zero (PTX ISA
     * "Floating-point instructions: .ftz"): the MODE register's f32 denormal
     * bits set to flush around each operation (cuda_on_hip.h) */
    {
        float x = a, y = b;
        pw_ftz_in(x, y);
        F(pw_ftz_out(x + y));
        x = a, y = b;
        pw_ftz_in(x, y);
        F(pw_ftz_out(x * y));
    }
#else
    asm("add.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    F(r);
    asm("mul.rn.ftz.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    F(r);
#endif
#undef F
    o[k++] = (unsigned)__float2int_rn(a);
    o[k++] = (unsigned)__float2int_rz(a);
    o[k++] = (unsigned)__float2int_rd(a);
    o[k++] = (unsigned)__float2int_ru(a);
    o[k++] = __float2uint_rn(a);
    o[k++] = __float2uint_rz(a);
    long long q = __float2ll_rn(a);
    o[k++] = (unsigned)q;
    o[k++] = (unsigned)((unsigned long long)q >> 32);
    unsigned long long uq = __float2ull_rz(a);
    o[k++] = (unsigned)uq;
    o[k++] = (unsigned)(uq >> 32);
    o[k++] = __float_as_uint(__int2float_rn(ii));
    o[k++] = __float_as_uint(__int2float_rz(ii));
    o[k++] = __float_as_uint(__int2float_rd(ii));
    o[k++] = __float_as_uint(__int2float_ru(ii));
    o[k++] = __float_as_uint(__uint2float_rn((unsigned)ll));
    o[k++] = __float_as_uint(__ll2float_rn(ll));
    o[k++] = __float_as_uint(__ll2float_rz(ll));
    o[k++] = __float_as_uint(__ull2float_rd((unsigned long long)ll));
}

struct approx_in {
    float p, q;   /* fdividef: |p|, |q| in [2^-60, 2^60] */
    float xe;     /* [-80, 80] */
    float xs;     /* [-pi, pi] */
    float xl;     /* positive, 2^-100 .. 2^100 */
    float y;      /* [-10, 10], for atan2f and tanh */
};

__global__ void approx_ops(const approx_in *in, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    approx_in v = in[i];
    float *o = out + (size_t)i * KA;
    o[0] = __fdividef(v.p, v.q);
    o[1] = __expf(v.xe);
    o[2] = __sinf(v.xs);
    o[3] = __cosf(v.xs);
    o[4] = __logf(v.xl);
    o[5] = exp2f(v.xe * 1.5f);
    o[6] = rsqrtf(v.xl);
    o[7] = sinf(v.xs * 30.0f);
    o[8] = expf(v.xe);
    o[9] = logf(v.xl);
    o[10] = atan2f(v.y, v.xs);
    float t;
#ifdef PTXWAVE_NATIVE
    /* native twin: no tanh instruction on gfx942 and no device library:
     * tanhf is a pw_nolib_ function (cuda_on_hip.h), so quality_bench lists
     * this kernel instead of comparing it */
    t = tanhf(v.y * 0.25f);
#else
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(v.y * 0.25f));
#endif
    o[11] = t;
}

/* ---- host reference ------------------------------------------------------------ */

static uint32_t R32(double x, int mode) { return fp_round(x, FP_F32, mode); }

static double ftz(double x)
{
    return (x != 0 && fabs(x) < ldexp(1.0, -126)) ? copysign(0.0, x) : x;
}

/* float-to-integer cvt: round in mode, NaN -> 0, saturate */
static long double to_int(double v, int mode, long double lo, long double hi)
{
    if (isnan(v))
        return 0;
    double r = mode == FP_RN ? nearbyint(v) : mode == FP_RZ ? trunc(v) : mode == FP_RD ? floor(v) : ceil(v);
    return r < lo ? lo : r > hi ? hi : (long double)r;
}

/* exact 64-bit integer rounded to float: hi * 2^32 + lo, added with
 * round-to-odd (both parts are exact doubles) */
static uint32_t i64_to_f32(long long v, int mode)
{
    double hi = ldexp((double)(v >> 32), 32), lo = (double)(unsigned)(v & 0xffffffffll);
    return fp_round(rto_add(hi, lo), FP_F32, mode);
}
static uint32_t u64_to_f32(unsigned long long v, int mode)
{
    double hi = ldexp((double)(v >> 32), 32), lo = (double)(unsigned)(v & 0xffffffffull);
    return fp_round(rto_add(hi, lo), FP_F32, mode);
}

static double ref_min(double a, double b, int nan_prop)
{
    if (isnan(a) || isnan(b))
        return nan_prop || (isnan(a) && isnan(b)) ? NAN : isnan(a) ? b : a;
    return a < b ? a : b;
}
static double ref_max(double a, double b, int nan_prop)
{
    if (isnan(a) || isnan(b))
        return nan_prop || (isnan(a) && isnan(b)) ? NAN : isnan(a) ? b : a;
    return a > b ? a : b;
}

static void exact_reference(float fa, float fb, float fc, long long ll, uint32_t *w, int *zero_free)
{
    double a = fa, b = fb, c = fc;
    int k = 0;
    for (int m = 0; m < 4; m++) w[k++] = fp_add(a, b, FP_F32, m);
    for (int m = 0; m < 4; m++) w[k++] = fp_mul(a, b, FP_F32, m);
    for (int m = 0; m < 4; m++) w[k++] = fp_fma(a, b, c, FP_F32, m);
    for (int m = 0; m < 4; m++) w[k++] = fp_div(a, b, FP_F32, m);
    w[k++] = fp_div(a, b, FP_F32, FP_RN);
    w[k++] = fp_sqrt(a, FP_F32, FP_RN);
    w[k++] = fp_sqrt(a, FP_F32, FP_RZ);
    w[k++] = fp_sqrt(a, FP_F32, FP_RD);
    w[k++] = fp_sqrt(a, FP_F32, FP_RU);
    for (int m = 0; m < 4; m++) w[k++] = fp_div(1.0, a, FP_F32, m);
    zero_free[k] = 1; w[k++] = R32(ref_min(a, b, 0), FP_RN);
    zero_free[k] = 1; w[k++] = R32(ref_max(a, b, 0), FP_RN);
    zero_free[k] = 1; w[k++] = R32(ref_min(a, b, 1), FP_RN);
    zero_free[k] = 1; w[k++] = R32(ref_max(a, b, 1), FP_RN);
    w[k++] = R32(fabs(a), FP_RN);
    w[k++] = R32(-a, FP_RN);
    w[k++] = R32(copysign(a, b), FP_RN);
    w[k++] = R32(trunc(a), FP_RN);
    w[k++] = R32(floor(a), FP_RN);
    w[k++] = R32(ceil(a), FP_RN);
    w[k++] = R32(nearbyint(a), FP_RN);
    w[k++] = R32(round(a), FP_RN);
    zero_free[k] = 1; w[k++] = R32(isnan(a) ? 0.0 : a < 0 ? 0.0 : a > 1 ? 1.0 : a, FP_RN);
    {
        double fa2 = ftz(a), fb2 = ftz(b);
        w[k++] = R32(ftz(fp_decode(fp_add(fa2, fb2, FP_F32, FP_RN), FP_F32)), FP_RN);
        w[k++] = R32(ftz(fp_decode(fp_mul(fa2, fb2, FP_F32, FP_RN), FP_F32)), FP_RN);
    }
    w[k++] = (uint32_t)(int32_t)to_int(a, FP_RN, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint32_t)(int32_t)to_int(a, FP_RZ, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint32_t)(int32_t)to_int(a, FP_RD, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint32_t)(int32_t)to_int(a, FP_RU, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint32_t)to_int(a, FP_RN, 0.0L, 4294967295.0L);
    w[k++] = (uint32_t)to_int(a, FP_RZ, 0.0L, 4294967295.0L);
    {
        long long q = (long long)to_int(a, FP_RN, -9223372036854775808.0L, 9223372036854775807.0L);
        w[k++] = (uint32_t)q;
        w[k++] = (uint32_t)((unsigned long long)q >> 32);
        unsigned long long uq = (unsigned long long)to_int(a, FP_RZ, 0.0L, 18446744073709551615.0L);
        w[k++] = (uint32_t)uq;
        w[k++] = (uint32_t)(uq >> 32);
    }
    int ii = (int)ll;
    for (int m = 0; m < 4; m++) w[k++] = R32((double)ii, m);
    w[k++] = R32((double)(unsigned)ll, FP_RN);
    w[k++] = i64_to_f32(ll, FP_RN);
    w[k++] = i64_to_f32(ll, FP_RZ);
    w[k++] = u64_to_f32((unsigned long long)ll, FP_RD);
    if (k != KE) {
        printf("float_math: reference produced %d values, expected %d\n", k, KE);
        exit(1);
    }
}

static float gen_float(pw_rng *r, int i)
{
    uint32_t u = pw_rng_u32(r);
    switch (i % 13) {
    case 0: return u2f(u & 0x80000000u);                    /* +-0 */
    case 1: return u2f(u & 0x807fffffu);                    /* subnormal */
    case 2: return u2f((u & 0x80000000u) | 0x7f800000u);   /* +-inf */
    case 3: return u2f(u | 0x7f800001u);                    /* NaN */
    case 4: return (float)(int)(u % 2001) * 0.5f - 500.0f;  /* halves: rounding ties */
    case 5: return u2f((u & 0x80ffffffu) | 0x4e800000u);   /* around 2^30..2^32: int saturation */
    case 6: return u2f((u & 0x80ffffffu) | 0x5e800000u);   /* around 2^62..2^64 */
    default: {
        uint32_t e = 64 + (u >> 8) % 128; /* 2^-63 .. 2^64 */
        return u2f((u & 0x807fffffu) | (e << 23));
    }
    }
}

int main(void)
{
    pw_report rep = pw_report_start("float_math");
    pw_rng rng = pw_rng_seed(20);
    const int n = 4096, bs = 96;
    float *A = (float *)malloc(n * 4), *B = (float *)malloc(n * 4), *C = (float *)malloc(n * 4);
    long long *L = (long long *)malloc(n * 8);
    for (int i = 0; i < n; i++) {
        A[i] = gen_float(&rng, i);
        B[i] = (i % 17 == 0) ? A[i] : (i % 19 == 0) ? -A[i] : gen_float(&rng, i / 2 + 5 * i);
        C[i] = gen_float(&rng, i + 3);
        uint64_t r = pw_rng_u64(&rng);
        L[i] = (i % 3 == 0) ? (long long)r : (i % 3 == 1) ? (long long)(int)r : (long long)(r >> (r & 63));
    }
    float *dA, *dB, *dC;
    long long *dL;
    unsigned *dout;
    CHECK(cudaMalloc(&dA, n * 4));
    CHECK(cudaMalloc(&dB, n * 4));
    CHECK(cudaMalloc(&dC, n * 4));
    CHECK(cudaMalloc(&dL, n * 8));
    CHECK(cudaMalloc(&dout, (size_t)n * KE * 4));
    CHECK(cudaMemcpy(dA, A, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C, n * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dL, L, n * 8, cudaMemcpyHostToDevice));
    exact_ops<<<PW_DIV_UP(n, bs), bs>>>(dA, dB, dC, dL, dout, n);
    CHECK_LAUNCH();
    unsigned *out = (unsigned *)malloc((size_t)n * KE * 4);
    CHECK(cudaMemcpy(out, dout, (size_t)n * KE * 4, cudaMemcpyDeviceToHost));
    static const char *names[KE] = {
        "add.rn", "add.rz", "add.rm", "add.rp", "mul.rn", "mul.rz", "mul.rm", "mul.rp", "fma.rn", "fma.rz",
        "fma.rm", "fma.rp", "div.rn", "div.rz", "div.rm", "div.rp", "a/b", "sqrt.rn", "sqrt.rz", "sqrt.rm",
        "sqrt.rp", "rcp.rn", "rcp.rz", "rcp.rm", "rcp.rp", "fminf", "fmaxf", "min.NaN", "max.NaN", "fabsf", "neg",
        "copysignf", "truncf", "floorf", "ceilf", "rintf", "roundf", "saturatef", "add.ftz", "mul.ftz",
        "f2i.rn", "f2i.rz", "f2i.rm", "f2i.rp", "f2u.rn", "f2u.rz", "f2ll.rn.lo", "f2ll.rn.hi", "f2ull.rz.lo",
        "f2ull.rz.hi", "i2f.rn", "i2f.rz", "i2f.rm", "i2f.rp", "u2f.rn", "ll2f.rn", "ll2f.rz", "ull2f.rm"};
    for (int i = 0; i < n; i++) {
        uint32_t w[KE];
        int zero_free[KE] = {0};
        exact_reference(A[i], B[i], C[i], L[i], w, zero_free);
        for (int k = 0; k < KE; k++) {
            uint32_t got = out[(size_t)i * KE + k];
            int is_float_result = k < 40 || k >= 50;
            int ok;
            if (is_float_result && isnan(u2f(w[k])))
                ok = isnan(u2f(got));
            else if (zero_free[k] && u2f(w[k]) == 0.0f)
                ok = u2f(got) == 0.0f;
            else
                ok = got == w[k];
            pw_expect(&rep, ok, "%s [%d] a=%a b=%a c=%a ll=%lld: %08x (%a) want %08x (%a)", names[k], i, (double)A[i],
                      (double)B[i], (double)C[i], L[i], got, (double)u2f(got), w[k], (double)u2f(w[k]));
        }
    }

    /* approximate functions */
    approx_in *ai = (approx_in *)malloc(n * sizeof(approx_in));
    for (int i = 0; i < n; i++) {
        approx_in v;
        uint32_t u = pw_rng_u32(&rng);
        v.p = u2f((u & 0x807fffffu) | ((uint32_t)(67 + (u >> 8) % 121) << 23)); /* 2^-60 .. 2^60 */
        u = pw_rng_u32(&rng);
        v.q = u2f((u & 0x807fffffu) | ((uint32_t)(67 + (u >> 8) % 121) << 23));
        v.xe = pw_rng_float(&rng, -80.0f, 80.0f);
        v.xs = pw_rng_float(&rng, -3.14159265f, 3.14159265f);
        u = pw_rng_u32(&rng);
        v.xl = (i % 4 == 0) ? pw_rng_float(&rng, 0.5f, 2.0f)
                            : u2f((u & 0x007fffffu) | ((uint32_t)(27 + (u >> 8) % 201) << 23)); /* 2^-100 .. 2^100 */
        v.y = pw_rng_float(&rng, -10.0f, 10.0f);
        ai[i] = v;
    }
    approx_in *dai;
    float *daout;
    CHECK(cudaMalloc(&dai, n * sizeof(approx_in)));
    CHECK(cudaMalloc(&daout, (size_t)n * KA * sizeof(float)));
    CHECK(cudaMemcpy(dai, ai, n * sizeof(approx_in), cudaMemcpyHostToDevice));
    approx_ops<<<PW_DIV_UP(n, bs), bs>>>(dai, daout, n);
    CHECK_LAUNCH();
    float *aout = (float *)malloc((size_t)n * KA * sizeof(float));
    CHECK(cudaMemcpy(aout, daout, (size_t)n * KA * sizeof(float), cudaMemcpyDeviceToHost));
    static const char *anames[KA] = {"__fdividef", "__expf", "__sinf", "__cosf", "__logf", "exp2f",
                                     "rsqrtf", "sinf", "expf", "logf", "atan2f", "tanh.approx"};
    for (int i = 0; i < n; i++) {
        approx_in v = ai[i];
        const float *g = aout + (size_t)i * KA;
        /* reference values in double, inputs exactly as the device saw them */
        double ref[KA] = {(double)v.p / v.q, exp((double)v.xe), sin((double)v.xs), cos((double)v.xs),
                          log((double)v.xl), exp2((double)h_mul(v.xe, 1.5f)), 1.0 / sqrt((double)v.xl),
                          sin((double)h_mul(v.xs, 30.0f)), exp((double)v.xe), log((double)v.xl),
                          atan2((double)v.y, (double)v.xs), tanh((double)h_mul(v.y, 0.25f))};
        for (int k = 0; k < KA; k++) {
            float want = fp_round_f32(ref[k], FP_RN);
            long ulps = fp_ulp_dist_f32(g[k], want);
            int ok;
            switch (k) {
            case 1: ok = ulps <= 2 + (long)floor(fabs(1.173 * v.xe)) + 1; break;
            case 2:
            case 3: ok = fabs((double)g[k] - ref[k]) <= ldexp(1.0, -20); break;
            case 4:
                ok = (v.xl >= 0.5f && v.xl <= 2.0f) ? fabs((double)g[k] - ref[k]) <= ldexp(1.0, -21) : ulps <= 3 + 1;
                break;
            case 9: ok = ulps <= 1 + 1; break;
            case 10: ok = ulps <= 3 + 1; break;
            case 11: ok = fabs((double)g[k] - ref[k]) <= ldexp(1.0, -10) * fabs(ref[k]); break;
            default: ok = ulps <= 2 + 1; break; /* fdividef, exp2f, rsqrtf, sinf, expf */
            }
            pw_expect(&rep, ok && !isnan(g[k]), "%s [%d]: %.9g want %.9g (%ld ulp)", anames[k], i, (double)g[k],
                      ref[k], ulps);
        }
    }

    free(A); free(B); free(C); free(L); free(out); free(ai); free(aout);
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dC)); CHECK(cudaFree(dL)); CHECK(cudaFree(dout));
    CHECK(cudaFree(dai)); CHECK(cudaFree(daout));
    return pw_finish(&rep);
}
