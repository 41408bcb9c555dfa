/*
 * fp16: __half / __half2 and __nv_bfloat16 / __nv_bfloat162, bit for bit.
 *
 * One kernel template runs every operation below on 4096 input triples
 * (a, b, c) for each of the two formats; inputs cover zeros of both signs,
 * subnormals, large values whose products overflow, infinities and NaNs,
 * and a == b pairs.  References are computed on the host from the exact
 * values by fpref.h (round-to-odd in double, then one rounding to the
 * format), independent of any half-precision support on the host.
 *
 *   arithmetic (rn)    __hadd __hsub __hmul __hfma __hneg __habs
 *   min/max            __hmin __hmax (a NaN operand yields the other one),
 *                      __hmin_nan __hmax_nan (NaN propagates)
 *   saturate / relu    __hadd_sat (clamp to [0, 1], NaN -> 0),
 *                      __hfma_relu (negative -> 0, NaN stays NaN)
 *   comparisons        __heq __hne __hlt __hle __hgt __hge (ordered),
 *                      __hequ __hneu __hltu __hgeu (unordered), __hisnan,
 *                      __hisinf
 *   pairs              __hadd2 __hmul2 __hfma2 __hmax2 __hneg2 on packed
 *                      pairs, __floats2half2_rn, __halves2half2, __low2half
 *   conversions        float -> rn rz rd ru, double -> rn, int -> rn,
 *                      ushort -> rn, -> float (exact), -> int rn rz rd ru,
 *                      -> short rz, -> uint rn (saturating, NaN -> 0, as
 *                      cvt defines float-to-integer conversions)
 *
 * Comparison rules: a NaN reference accepts any NaN (payloads are not
 * specified); for min/max/sat/relu a zero reference accepts either sign
 * (the sign of min(+0, -0) is not something programs may rely on).
 *
 * Compiled for sm_80, bf16 add/sub/mul are fma.rn.bf16 with a constant
 * operand; fp16_sm90.cu includes this file to get native add/mul.bf16 and
 * adds its own checks through FP16_EXTRA (a function called from main).
 */
#include "check.h"
#include "fpref.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#ifndef PROGRAM_NAME
#define PROGRAM_NAME "fp16"
#endif

#define K16 32 /* 16-bit results per element */
#define K32 8  /* 32-bit results per element */

template <typename T>
struct hx;

template <>
struct hx<__half> {
    typedef __half2 T2;
    static __device__ __half bits(unsigned short u) { return __ushort_as_half(u); }
    static __device__ unsigned short raw(__half h) { return __half_as_ushort(h); }
    static __device__ __half f_rn(float f) { return __float2half_rn(f); }
    static __device__ __half f_rz(float f) { return __float2half_rz(f); }
    static __device__ __half f_rd(float f) { return __float2half_rd(f); }
    static __device__ __half f_ru(float f) { return __float2half_ru(f); }
    static __device__ __half from_d(double d) { return __double2half(d); }
    static __device__ __half from_i(int i) { return __int2half_rn(i); }
    static __device__ __half from_us(unsigned short u) { return __ushort2half_rn(u); }
    static __device__ float to_f(__half h) { return __half2float(h); }
    static __device__ int to_i_rn(__half h) { return __half2int_rn(h); }
    static __device__ int to_i_rz(__half h) { return __half2int_rz(h); }
    static __device__ int to_i_rd(__half h) { return __half2int_rd(h); }
    static __device__ int to_i_ru(__half h) { return __half2int_ru(h); }
    static __device__ short to_s_rz(__half h) { return __half2short_rz(h); }
    static __device__ unsigned to_u_rn(__half h) { return __half2uint_rn(h); }
    static __device__ T2 pair(__half lo, __half hi) { return __halves2half2(lo, hi); }
    static __device__ __half lo(T2 v) { return __low2half(v); }
    static __device__ __half hi(T2 v) { return __high2half(v); }
    static __device__ T2 floats(float lo, float hi) { return __floats2half2_rn(lo, hi); }
};

template <>
struct hx<__nv_bfloat16> {
    typedef __nv_bfloat162 T2;
    typedef __nv_bfloat16 T;
    static __device__ T bits(unsigned short u) { return __ushort_as_bfloat16(u); }
    static __device__ unsigned short raw(T h) { return __bfloat16_as_ushort(h); }
    static __device__ T f_rn(float f) { return __float2bfloat16_rn(f); }
    static __device__ T f_rz(float f) { return __float2bfloat16_rz(f); }
    static __device__ T f_rd(float f) { return __float2bfloat16_rd(f); }
    static __device__ T f_ru(float f) { return __float2bfloat16_ru(f); }
    static __device__ T from_d(double d) { return __double2bfloat16(d); }
    static __device__ T from_i(int i) { return __int2bfloat16_rn(i); }
    static __device__ T from_us(unsigned short u) { return __ushort2bfloat16_rn(u); }
    static __device__ float to_f(T h) { return __bfloat162float(h); }
    static __device__ int to_i_rn(T h) { return __bfloat162int_rn(h); }
    static __device__ int to_i_rz(T h) { return __bfloat162int_rz(h); }
    static __device__ int to_i_rd(T h) { return __bfloat162int_rd(h); }
    static __device__ int to_i_ru(T h) { return __bfloat162int_ru(h); }
    static __device__ short to_s_rz(T h) { return __bfloat162short_rz(h); }
    static __device__ unsigned to_u_rn(T h) { return __bfloat162uint_rn(h); }
    static __device__ T2 pair(T lo, T hi) { return __halves2bfloat162(lo, hi); }
    static __device__ T lo(T2 v) { return __low2bfloat16(v); }
    static __device__ T hi(T2 v) { return __high2bfloat16(v); }
    static __device__ T2 floats(float lo, float hi) { return __floats2bfloat162_rn(lo, hi); }
};

template <typename T>
__global__ void fp16_ops(const unsigned short *A, const unsigned short *B, const unsigned short *C, const float *F,
                         const double *D, const int *I, unsigned short *o16, unsigned *o32, int n)
{
    typedef hx<T> X;
    typedef typename X::T2 T2;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    T a = X::bits(A[i]), b = X::bits(B[i]), c = X::bits(C[i]);
    unsigned short *o = o16 + (size_t)i * K16;
    unsigned *p = o32 + (size_t)i * K32;

    o[0] = X::raw(__hadd(a, b));
    o[1] = X::raw(__hsub(a, b));
    o[2] = X::raw(__hmul(a, b));
    o[3] = X::raw(__hfma(a, b, c));
    o[4] = X::raw(__hneg(a));
    o[5] = X::raw(__habs(a));
    o[6] = X::raw(__hmin(a, b));
    o[7] = X::raw(__hmax(a, b));
    o[8] = X::raw(__hmin_nan(a, b));
    o[9] = X::raw(__hmax_nan(a, b));
    o[10] = X::raw(__hadd_sat(a, b));
    o[11] = X::raw(__hfma_relu(a, b, c));
    unsigned m = 0;
    m |= (unsigned)__heq(a, b) << 0;
    m |= (unsigned)__hne(a, b) << 1;
    m |= (unsigned)__hlt(a, b) << 2;
    m |= (unsigned)__hle(a, b) << 3;
    m |= (unsigned)__hgt(a, b) << 4;
    m |= (unsigned)__hge(a, b) << 5;
    m |= (unsigned)__hequ(a, b) << 6;
    m |= (unsigned)__hneu(a, b) << 7;
    m |= (unsigned)__hltu(a, b) << 8;
    m |= (unsigned)__hgeu(a, b) << 9;
    m |= (unsigned)__hisnan(a) << 10;
    m |= (unsigned)(__hisinf(a) != 0) << 11;
    m |= (unsigned)(__hisinf(a) < 0) << 12;
    o[12] = (unsigned short)m;
    o[13] = X::raw(X::f_rn(F[i]));
    o[14] = X::raw(X::f_rz(F[i]));
    o[15] = X::raw(X::f_rd(F[i]));
    o[16] = X::raw(X::f_ru(F[i]));
    o[17] = X::raw(X::from_d(D[i]));
    o[18] = X::raw(X::from_i(I[i]));
    o[19] = X::raw(X::from_us((unsigned short)I[i]));

    T2 x = X::pair(a, b), y = X::pair(c, a), z = X::pair(b, c);
    T2 s2 = __hadd2(x, y), m2 = __hmul2(x, y), f2 = __hfma2(x, y, z), mx2 = __hmax2(x, y), n2 = __hneg2(x);
    o[20] = X::raw(X::lo(s2));
    o[21] = X::raw(X::hi(s2));
    o[22] = X::raw(X::lo(m2));
    o[23] = X::raw(X::hi(m2));
    o[24] = X::raw(X::lo(f2));
    o[25] = X::raw(X::hi(f2));
    o[26] = X::raw(X::lo(mx2));
    o[27] = X::raw(X::hi(mx2));
    o[28] = X::raw(X::lo(n2));
    o[29] = X::raw(X::hi(n2));
    T2 ff = X::floats(F[i], F[(i + 1) % n]);
    o[30] = X::raw(X::lo(ff));
    o[31] = X::raw(X::hi(ff));

    p[0] = __float_as_uint(X::to_f(a));
    p[1] = (unsigned)X::to_i_rn(a);
    p[2] = (unsigned)X::to_i_rz(a);
    p[3] = (unsigned)X::to_i_rd(a);
    p[4] = (unsigned)X::to_i_ru(a);
    p[5] = (unsigned)(int)X::to_s_rz(a);
    p[6] = X::to_u_rn(a);
    p[7] = __float_as_uint(X::to_f(X::hi(x))); /* b through a pair */
}

/* ---- host reference --------------------------------------------------------- */

typedef struct {
    const char *name;
    int ebits, mbits;
} fmt_desc;

static int ref_is_nan(uint32_t bits, const fmt_desc *f) { return fp_is_nan(bits, f->ebits, f->mbits); }
static double dec(uint16_t bits, const fmt_desc *f) { return fp_decode(bits, f->ebits, f->mbits); }
static uint16_t rnd(double x, const fmt_desc *f, int mode) { return (uint16_t)fp_round(x, f->ebits, f->mbits, mode); }

/* IEEE minNum/maxNum as PTX min/max: a NaN operand yields the other. */
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

/* float-to-integer cvt: round in mode, NaN -> 0, saturate to [lo, hi] */
static int64_t ref_to_int(double v, int mode, double lo, double hi)
{
    if (isnan(v))
        return 0;
    double r = mode == FP_RN ? nearbyint(v) : mode == FP_RZ ? trunc(v) : mode == FP_RD ? floor(v) : ceil(v);
    if (r < lo)
        return (int64_t)lo;
    if (r > hi)
        return (int64_t)hi;
    return (int64_t)r;
}

/* Random value of the format, cycling through the interesting classes. */
static uint16_t gen(pw_rng *r, int i, const fmt_desc *f)
{
    uint32_t u = pw_rng_u32(r);
    uint32_t sign = (u >> 31) << (f->ebits + f->mbits);
    uint32_t emax = (1u << f->ebits) - 1;
    uint32_t man = u & ((1u << f->mbits) - 1);
    uint32_t e;
    switch (i % 16) {
    case 0: return (uint16_t)sign;                              /* +-0 */
    case 1: return (uint16_t)(sign | (man ? man : 1));          /* subnormal */
    case 2: return (uint16_t)(sign | (emax << f->mbits));       /* +-inf */
    case 3: return (uint16_t)(sign | (emax << f->mbits) | (man | 1)); /* NaN */
    case 4: e = emax - 1 - (u >> 20) % 3; break;                 /* huge */
    case 5: e = 1 + (u >> 20) % 3; break;                        /* tiny normal */
    default: e = 1 + (u >> 16) % (emax - 1); break;              /* any finite */
    }
    /* keep exponents moderate for most values so that sums and products
     * are mostly representable */
    if (i % 16 >= 8) {
        uint32_t bias = emax >> 1;
        e = bias - 6 + (u >> 12) % 13;
    }
    return (uint16_t)(sign | (e << f->mbits) | man);
}

template <typename T>
static void run(pw_report *rep, const fmt_desc *f, pw_rng *rng)
{
    const int n = 4096;
    uint16_t *A = (uint16_t *)malloc(n * 2), *B = (uint16_t *)malloc(n * 2), *C = (uint16_t *)malloc(n * 2);
    float *F = (float *)malloc(n * sizeof(float));
    double *D = (double *)malloc(n * sizeof(double));
    int *I = (int *)malloc(n * sizeof(int));
    uint16_t *o16 = (uint16_t *)malloc((size_t)n * K16 * 2);
    uint32_t *o32 = (uint32_t *)malloc((size_t)n * K32 * 4);
    for (int i = 0; i < n; i++) {
        A[i] = gen(rng, i, f);
        B[i] = (i % 7 == 0) ? A[i] : gen(rng, i / 3 + i * 5, f);
        C[i] = gen(rng, i + 11, f);
        /* floats over the format's range and beyond, with low bits that
         * exercise every rounding direction */
        uint32_t u = pw_rng_u32(rng);
        int bias = (1 << (f->ebits - 1)) - 1;
        int e = 127 + (int)((u >> 8) % (uint32_t)(2 * bias + f->mbits + 8)) - bias - f->mbits - 3;
        if (e < 1) e = 1;
        if (e > 254) e = 254;
        F[i] = u2f((u & 0x807fffffu) | ((uint32_t)e << 23));
        if (i % 32 == 5) F[i] = u2f(0x7fc00000u);  /* NaN */
        if (i % 32 == 6) F[i] = u2f(0xff800000u);  /* -inf */
        if (i % 32 == 7) F[i] = u2f(u & 0x80000fffu); /* float subnormal */
        D[i] = (double)F[i] * (1.0 + ldexp((double)(pw_rng_u32(rng) | 1), -52)); /* bits below float precision */
        I[i] = (i % 3 == 0) ? (int)pw_rng_u32(rng) : pw_rng_int(rng, -100000, 100000);
    }
    unsigned short *dA, *dB, *dC, *d16;
    float *dF;
    double *dD;
    int *dI;
    unsigned *d32;
    CHECK(cudaMalloc(&dA, n * 2));
    CHECK(cudaMalloc(&dB, n * 2));
    CHECK(cudaMalloc(&dC, n * 2));
    CHECK(cudaMalloc(&dF, n * sizeof(float)));
    CHECK(cudaMalloc(&dD, n * sizeof(double)));
    CHECK(cudaMalloc(&dI, n * sizeof(int)));
    CHECK(cudaMalloc(&d16, (size_t)n * K16 * 2));
    CHECK(cudaMalloc(&d32, (size_t)n * K32 * 4));
    CHECK(cudaMemcpy(dA, A, n * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, n * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C, n * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dF, F, n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dD, D, n * sizeof(double), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dI, I, n * sizeof(int), cudaMemcpyHostToDevice));
    fp16_ops<T><<<PW_DIV_UP(n, 96), 96>>>(dA, dB, dC, dF, dD, dI, d16, d32, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(o16, d16, (size_t)n * K16 * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(o32, d32, (size_t)n * K32 * 4, cudaMemcpyDeviceToHost));

    static const char *names16[K16] = {"add", "sub", "mul", "fma", "neg", "abs", "min", "max", "min_nan", "max_nan",
                                       "add_sat", "fma_relu", "cmp", "f2h_rn", "f2h_rz", "f2h_rd", "f2h_ru", "d2h",
                                       "i2h", "us2h", "add2.lo", "add2.hi", "mul2.lo", "mul2.hi", "fma2.lo", "fma2.hi",
                                       "max2.lo", "max2.hi", "neg2.lo", "neg2.hi", "floats2.lo", "floats2.hi"};
    static const char *names32[K32] = {"to_f", "to_i_rn", "to_i_rz", "to_i_rd", "to_i_ru", "to_s_rz", "to_u_rn", "pair.hi"};
    for (int i = 0; i < n; i++) {
        double a = dec(A[i], f), b = dec(B[i], f), c = dec(C[i], f);
        uint16_t want[K16];
        int zero_sign_free[K16] = {0};
        want[0] = (uint16_t)fp_add(a, b, f->ebits, f->mbits, FP_RN);
        want[1] = (uint16_t)fp_add(a, -b, f->ebits, f->mbits, FP_RN);
        want[2] = (uint16_t)fp_mul(a, b, f->ebits, f->mbits, FP_RN);
        want[3] = (uint16_t)fp_fma(a, b, c, f->ebits, f->mbits, FP_RN);
        want[4] = rnd(-a, f, FP_RN);
        want[5] = rnd(fabs(a), f, FP_RN);
        want[6] = rnd(ref_min(a, b, 0), f, FP_RN);
        want[7] = rnd(ref_max(a, b, 0), f, FP_RN);
        want[8] = rnd(ref_min(a, b, 1), f, FP_RN);
        want[9] = rnd(ref_max(a, b, 1), f, FP_RN);
        {
            double s = dec(want[0], f);
            s = isnan(s) ? 0.0 : s < 0 ? 0.0 : s > 1 ? 1.0 : s;
            want[10] = rnd(s, f, FP_RN);
            double r = dec((uint16_t)fp_fma(a, b, c, f->ebits, f->mbits, FP_RN), f);
            want[11] = rnd(isnan(r) ? r : r < 0 ? 0.0 : r, f, FP_RN);
        }
        zero_sign_free[6] = zero_sign_free[7] = zero_sign_free[8] = zero_sign_free[9] = 1;
        zero_sign_free[10] = zero_sign_free[11] = zero_sign_free[26] = zero_sign_free[27] = 1;
        {
            int un = isnan(a) || isnan(b);
            unsigned m = 0;
            m |= (unsigned)(!un && a == b) << 0;
            m |= (unsigned)(!un && a != b) << 1;
            m |= (unsigned)(!un && a < b) << 2;
            m |= (unsigned)(!un && a <= b) << 3;
            m |= (unsigned)(!un && a > b) << 4;
            m |= (unsigned)(!un && a >= b) << 5;
            m |= (unsigned)(un || a == b) << 6;
            m |= (unsigned)(un || a != b) << 7;
            m |= (unsigned)(un || a < b) << 8;
            m |= (unsigned)(un || a >= b) << 9;
            m |= (unsigned)(isnan(a) != 0) << 10;
            m |= (unsigned)(isinf(a) != 0) << 11;
            m |= (unsigned)(isinf(a) && a < 0) << 12;
            want[12] = (uint16_t)m;
        }
        want[13] = rnd(F[i], f, FP_RN);
        want[14] = rnd(F[i], f, FP_RZ);
        want[15] = rnd(F[i], f, FP_RD);
        want[16] = rnd(F[i], f, FP_RU);
        want[17] = rnd(D[i], f, FP_RN);
        want[18] = rnd((double)I[i], f, FP_RN);
        want[19] = rnd((double)(unsigned short)I[i], f, FP_RN);
        /* pairs: x = (a, b), y = (c, a), z = (b, c) */
        want[20] = (uint16_t)fp_add(a, c, f->ebits, f->mbits, FP_RN);
        want[21] = (uint16_t)fp_add(b, a, f->ebits, f->mbits, FP_RN);
        want[22] = (uint16_t)fp_mul(a, c, f->ebits, f->mbits, FP_RN);
        want[23] = (uint16_t)fp_mul(b, a, f->ebits, f->mbits, FP_RN);
        want[24] = (uint16_t)fp_fma(a, c, b, f->ebits, f->mbits, FP_RN);
        want[25] = (uint16_t)fp_fma(b, a, c, f->ebits, f->mbits, FP_RN);
        want[26] = rnd(ref_max(a, c, 0), f, FP_RN);
        want[27] = rnd(ref_max(b, a, 0), f, FP_RN);
        want[28] = rnd(-a, f, FP_RN);
        want[29] = rnd(-b, f, FP_RN);
        want[30] = rnd(F[i], f, FP_RN);
        want[31] = rnd(F[(i + 1) % n], f, FP_RN);

        for (int k = 0; k < K16; k++) {
            uint16_t got = o16[(size_t)i * K16 + k];
            int ok;
            if (k == 12)
                ok = got == want[k];
            else if (ref_is_nan(want[k], f))
                ok = ref_is_nan(got, f);
            else if (zero_sign_free[k] && dec(want[k], f) == 0)
                ok = dec(got, f) == 0 && !ref_is_nan(got, f);
            else
                ok = got == want[k];
            pw_expect(rep, ok, "%s %s [%d] a=%04x b=%04x c=%04x F=%a D=%a I=%d: %04x want %04x", f->name, names16[k], i,
                      A[i], B[i], C[i], (double)F[i], D[i], I[i], got, want[k]);
        }

        uint32_t w32[K32];
        int nan_ok[K32] = {0};
        w32[0] = f2u((float)a);
        nan_ok[0] = isnan(a) != 0;
        w32[1] = (uint32_t)(int32_t)ref_to_int(a, FP_RN, -2147483648.0, 2147483647.0);
        w32[2] = (uint32_t)(int32_t)ref_to_int(a, FP_RZ, -2147483648.0, 2147483647.0);
        w32[3] = (uint32_t)(int32_t)ref_to_int(a, FP_RD, -2147483648.0, 2147483647.0);
        w32[4] = (uint32_t)(int32_t)ref_to_int(a, FP_RU, -2147483648.0, 2147483647.0);
        w32[5] = (uint32_t)(int32_t)ref_to_int(a, FP_RZ, -32768.0, 32767.0);
        w32[6] = (uint32_t)ref_to_int(a, FP_RN, 0.0, 4294967295.0);
        w32[7] = f2u((float)b);
        nan_ok[7] = isnan(b) != 0;
        for (int k = 0; k < K32; k++) {
            uint32_t got = o32[(size_t)i * K32 + k];
            int ok = nan_ok[k] ? isnan(u2f(got)) : got == w32[k];
            pw_expect(rep, ok, "%s %s [%d] a=%04x: %08x want %08x", f->name, names32[k], i, A[i], got, w32[k]);
        }
    }
    free(A); free(B); free(C); free(F); free(D); free(I); free(o16); free(o32);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dF));
    CHECK(cudaFree(dD));
    CHECK(cudaFree(dI));
    CHECK(cudaFree(d16));
    CHECK(cudaFree(d32));
}

int main(void)
{
    pw_report rep = pw_report_start(PROGRAM_NAME);
    pw_rng rng = pw_rng_seed(13);
    const fmt_desc f16 = {"f16", 5, 10}, bf16 = {"bf16", 8, 7};
    run<__half>(&rep, &f16, &rng);
    run<__nv_bfloat16>(&rep, &bf16, &rng);
#ifdef FP16_EXTRA
    FP16_EXTRA(&rep, &rng);
#endif
    return pw_finish(&rep);
}
