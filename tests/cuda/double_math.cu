/*
 * double_math: double-precision arithmetic in every rounding mode,
 * conversions to and from double, and a few libdevice functions.
 *
 * Exact part (bit for bit; a NaN reference accepts any NaN, fmin/fmax a
 * zero of either sign): __dadd/__dmul/__ddiv/__dsqrt/__drcp _rn _rz _rd _ru,
 * fma (rn), fmin/fmax (a NaN operand yields the other), trunc floor ceil
 * rint round fabs negation copysign, __double2int_rn/rz/rd/ru,
 * __double2uint_rz, __double2ll_rn, __double2ull_rz (saturating, NaN -> 0),
 * __double2float_rn/rz/rd/ru (cvt.rn/rz/rm/rp.f32.f64, including overflow
 * and float subnormals), __ll2double_rn/rz, __ull2double_rd/ru,
 * __int2double_rn, float -> double (cvt.f64.f32), __hiloint2double, __double2hiint/loint.
 * References: fpref.h's dbl_* (round-to-nearest result moved one step
 * toward the exact value when an error-free transformation says it lies
 * beyond), valid because operands stay in 2^-300 .. 2^300 (no overflow or
 * subnormal results in the directed-rounding operations).
 *
 * Approximate part, tolerances from the CUDA Programming Guide's
 * double-precision table plus 1 ulp for the host's own rounding: sin 2 ulp,
 * exp 1 ulp, log 1 ulp, rsqrt 1 ulp, atan2 2 ulp, pow 2 ulp.
 */
#include "check.h"
#include "fpref.h"

#include <math.h>

#define KD 51
#define KA 6

__global__ void double_exact(const double *A, const double *B, const double *C, const long long *L,
                             unsigned long long *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double a = A[i], b = B[i], c = C[i];
    long long ll = L[i];
    unsigned long long *o = out + (size_t)i * KD;
    int k = 0;
#define D(x) o[k++] = (unsigned long long)__double_as_longlong(x)
    D(__dadd_rn(a, b)); D(__dadd_rz(a, b)); D(__dadd_rd(a, b)); D(__dadd_ru(a, b));
    D(__dmul_rn(a, b)); D(__dmul_rz(a, b)); D(__dmul_rd(a, b)); D(__dmul_ru(a, b));
    D(__ddiv_rn(a, b)); D(__ddiv_rz(a, b)); D(__ddiv_rd(a, b)); D(__ddiv_ru(a, b));
    D(__dsqrt_rn(a)); D(__dsqrt_rz(a)); D(__dsqrt_rd(a)); D(__dsqrt_ru(a));
    D(__drcp_rn(a)); D(__drcp_rz(a)); D(__drcp_rd(a)); D(__drcp_ru(a));
    D(fma(a, b, c));
    D(fmin(a, b)); D(fmax(a, b));
    D(trunc(a)); D(floor(a)); D(ceil(a)); D(rint(a)); D(round(a));
    D(fabs(a)); D(-a); D(copysign(a, b));
#undef D
    o[k++] = (unsigned long long)(long long)__double2int_rn(a);
    o[k++] = (unsigned long long)(long long)__double2int_rz(a);
    o[k++] = (unsigned long long)(long long)__double2int_rd(a);
    o[k++] = (unsigned long long)(long long)__double2int_ru(a);
    o[k++] = __double2uint_rz(a);
    o[k++] = (unsigned long long)__double2ll_rn(a);
    o[k++] = __double2ull_rz(a);
    o[k++] = __float_as_uint(__double2float_rn(a));
    o[k++] = __float_as_uint(__double2float_rz(a));
    o[k++] = __float_as_uint(__double2float_rd(a));
    o[k++] = __float_as_uint(__double2float_ru(a));
    o[k++] = (unsigned long long)__double_as_longlong(__ll2double_rn(ll));
    o[k++] = (unsigned long long)__double_as_longlong(__ll2double_rz(ll));
    o[k++] = (unsigned long long)__double_as_longlong(__ull2double_rd((unsigned long long)ll));
    o[k++] = (unsigned long long)__double_as_longlong(__ull2double_ru((unsigned long long)ll));
    o[k++] = (unsigned long long)__double_as_longlong(__int2double_rn((int)ll));
    o[k++] = (unsigned long long)__double_as_longlong((double)__int_as_float((int)(ll >> 32)));
    o[k++] = (unsigned long long)__double_as_longlong(__hiloint2double((int)(ll >> 32), (int)ll));
    o[k++] = (unsigned)__double2hiint(a);
    o[k++] = (unsigned)__double2loint(a);
}

__global__ void double_approx(const double *X, const double *Y, double *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    double x = X[i], y = Y[i];
    double *o = out + (size_t)i * KA;
    o[0] = sin(x * 10.0);
    o[1] = exp(x * 70.0);
    o[2] = log(fabs(y) + 1e-300);
    o[3] = rsqrt(fabs(y) + 1e-300);
    o[4] = atan2(y, x);
    o[5] = pow(fabs(x) + 0.5, y);
}

/* ---- host reference ---------------------------------------------------------- */

static double ref_min(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? NAN : isnan(a) ? b : a;
    return a < b ? a : b;
}
static double ref_max(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b) ? NAN : isnan(a) ? b : a;
    return a > b ? a : b;
}

static long double to_int(double v, int mode, long double lo, long double hi)
{
    if (isnan(v))
        return 0;
    double r = mode == FP_RN ? nearbyint(v) : mode == FP_RZ ? trunc(v) : mode == FP_RD ? floor(v) : ceil(v);
    return r < lo ? lo : r > hi ? hi : (long double)r;
}

static double i64_to_f64(long long v, int mode)
{
    return dbl_add(ldexp((double)(v >> 32), 32), (double)(unsigned)(v & 0xffffffffll), mode);
}
static double u64_to_f64(unsigned long long v, int mode)
{
    return dbl_add(ldexp((double)(v >> 32), 32), (double)(unsigned)(v & 0xffffffffull), mode);
}

static void reference(double a, double b, double c, long long ll, uint64_t *w, int *zero_free, int *is_fp)
{
    int k = 0;
#define W(x) (is_fp[k] = 1, w[k++] = d2u(x))
    for (int m = 0; m < 4; m++) W(dbl_add(a, b, m));
    for (int m = 0; m < 4; m++) W(dbl_mul(a, b, m));
    for (int m = 0; m < 4; m++) W(dbl_div(a, b, m));
    for (int m = 0; m < 4; m++) W(dbl_sqrt(a, m));
    for (int m = 0; m < 4; m++) W(dbl_div(1.0, a, m));
    W(fma(a, b, c));
    zero_free[k] = 1; W(ref_min(a, b));
    zero_free[k] = 1; W(ref_max(a, b));
    W(trunc(a)); W(floor(a)); W(ceil(a)); W(nearbyint(a)); W(round(a));
    W(fabs(a)); W(-a); W(copysign(a, b));
#undef W
    w[k++] = (uint64_t)(int64_t)(int32_t)to_int(a, FP_RN, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint64_t)(int64_t)(int32_t)to_int(a, FP_RZ, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint64_t)(int64_t)(int32_t)to_int(a, FP_RD, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint64_t)(int64_t)(int32_t)to_int(a, FP_RU, -2147483648.0L, 2147483647.0L);
    w[k++] = (uint64_t)(uint32_t)to_int(a, FP_RZ, 0.0L, 4294967295.0L);
    w[k++] = (uint64_t)(int64_t)to_int(a, FP_RN, -9223372036854775808.0L, 9223372036854775807.0L);
    w[k++] = (uint64_t)to_int(a, FP_RZ, 0.0L, 18446744073709551615.0L);
    for (int m = 0; m < 4; m++) {
        is_fp[k] = 2; /* a float in the low 32 bits */
        w[k++] = fp_round(a, FP_F32, m);
    }
    is_fp[k] = 1; w[k++] = d2u(i64_to_f64(ll, FP_RN));
    is_fp[k] = 1; w[k++] = d2u(i64_to_f64(ll, FP_RZ));
    is_fp[k] = 1; w[k++] = d2u(u64_to_f64((unsigned long long)ll, FP_RD));
    is_fp[k] = 1; w[k++] = d2u(u64_to_f64((unsigned long long)ll, FP_RU));
    w[k++] = d2u((double)(int)ll);
    is_fp[k] = 1; w[k++] = d2u((double)u2f((uint32_t)((unsigned long long)ll >> 32)));
    w[k++] = (uint64_t)ll;
    w[k++] = (uint64_t)(uint32_t)(d2u(a) >> 32);
    w[k++] = (uint64_t)(uint32_t)d2u(a);
    if (k != KD) {
        printf("double_math: reference produced %d values, expected %d\n", k, KD);
        exit(1);
    }
}

static double gen_double(pw_rng *r, int i)
{
    uint64_t u = pw_rng_u64(r);
    switch (i % 11) {
    case 0: return u2d(u & 0x8000000000000000ull);                              /* +-0 */
    case 1: return u2d((u & 0x8000000000000000ull) | 0x7ff0000000000000ull);    /* +-inf */
    case 2: return u2d(u | 0x7ff0000000000001ull);                              /* NaN */
    case 3: return (double)(int)(u % 4001) * 0.5 - 1000.0;                      /* halves */
    case 4: return u2d((u & 0x800fffffffffffffull) | ((uint64_t)(1023 - 150 + (u >> 52) % 280) << 52)); /* float range */
    case 5: return u2d((u & 0x801fffffffffffffull) | (1023ull + 62) << 52);    /* around 2^62..2^64 */
    default: return u2d((u & 0x800fffffffffffffull) | ((uint64_t)(1023 - 300 + (u >> 52) % 600) << 52));
    }
}

int main(void)
{
    pw_report rep = pw_report_start("double_math");
    pw_rng rng = pw_rng_seed(21);
    const int n = 4096, bs = 96;
    double *A = (double *)malloc(n * 8), *B = (double *)malloc(n * 8), *C = (double *)malloc(n * 8);
    long long *L = (long long *)malloc(n * 8);
    for (int i = 0; i < n; i++) {
        A[i] = gen_double(&rng, i);
        B[i] = (i % 17 == 0) ? A[i] : (i % 19 == 0) ? -A[i] : gen_double(&rng, i / 2 + 3 * i);
        C[i] = gen_double(&rng, i + 5);
        uint64_t r = pw_rng_u64(&rng);
        L[i] = (i % 2) ? (long long)r : (long long)(r >> (r & 63));
    }
    double *dA, *dB, *dC;
    long long *dL;
    unsigned long long *dout;
    CHECK(cudaMalloc(&dA, n * 8));
    CHECK(cudaMalloc(&dB, n * 8));
    CHECK(cudaMalloc(&dC, n * 8));
    CHECK(cudaMalloc(&dL, n * 8));
    CHECK(cudaMalloc(&dout, (size_t)n * KD * 8));
    CHECK(cudaMemcpy(dA, A, n * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, n * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C, n * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dL, L, n * 8, cudaMemcpyHostToDevice));
    double_exact<<<PW_DIV_UP(n, bs), bs>>>(dA, dB, dC, dL, dout, n);
    CHECK_LAUNCH();
    uint64_t *out = (uint64_t *)malloc((size_t)n * KD * 8);
    CHECK(cudaMemcpy(out, dout, (size_t)n * KD * 8, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        uint64_t w[KD];
        int zero_free[KD] = {0}, is_fp[KD] = {0};
        reference(A[i], B[i], C[i], L[i], w, zero_free, is_fp);
        for (int k = 0; k < KD; k++) {
            uint64_t got = out[(size_t)i * KD + k];
            int ok;
            if (is_fp[k] == 1 && isnan(u2d(w[k])))
                ok = isnan(u2d(got));
            else if (is_fp[k] == 2 && isnan(u2f((uint32_t)w[k])))
                ok = got <= 0xffffffffull && isnan(u2f((uint32_t)got));
            else if (zero_free[k] && u2d(w[k]) == 0)
                ok = u2d(got) == 0;
            else
                ok = got == w[k];
            pw_expect(&rep, ok, "op %d [%d] a=%a b=%a c=%a ll=%lld: %016llx want %016llx", k, i, A[i], B[i], C[i], L[i],
                      (unsigned long long)got, (unsigned long long)w[k]);
        }
    }

    /* approximate functions */
    double *X = (double *)malloc(n * 8), *Y = (double *)malloc(n * 8), *aout = (double *)malloc((size_t)n * KA * 8);
    for (int i = 0; i < n; i++) {
        X[i] = (double)pw_rng_float(&rng, -10.0f, 10.0f) + ldexp((double)pw_rng_u32(&rng), -60);
        Y[i] = (double)pw_rng_float(&rng, -8.0f, 8.0f) * ldexp(1.0, pw_rng_int(&rng, -30, 30) / 10);
    }
    double *dX, *dY, *daout;
    CHECK(cudaMalloc(&dX, n * 8));
    CHECK(cudaMalloc(&dY, n * 8));
    CHECK(cudaMalloc(&daout, (size_t)n * KA * 8));
    CHECK(cudaMemcpy(dX, X, n * 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dY, Y, n * 8, cudaMemcpyHostToDevice));
    double_approx<<<PW_DIV_UP(n, bs), bs>>>(dX, dY, daout, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(aout, daout, (size_t)n * KA * 8, cudaMemcpyDeviceToHost));
    static const char *anames[KA] = {"sin", "exp", "log", "rsqrt", "atan2", "pow"};
    const long tol[KA] = {2 + 1, 1 + 1, 1 + 1, 1 + 1, 2 + 1, 2 + 1};
    for (int i = 0; i < n; i++) {
        double x = X[i], y = Y[i];
        volatile double x10 = x * 10.0, x70 = x * 70.0, ay = fabs(y) + 1e-300, ax = fabs(x) + 0.5;
        double ref[KA] = {sin(x10), exp(x70), log(ay), 1.0 / sqrt(ay), atan2(y, x), pow(ax, y)};
        for (int k = 0; k < KA; k++) {
            double g = aout[(size_t)i * KA + k];
            /* ulp distance between doubles of the same sign */
            int64_t ig = (int64_t)d2u(g), ir = (int64_t)d2u(ref[k]);
            if (ig < 0) ig = INT64_MIN - ig;
            if (ir < 0) ir = INT64_MIN - ir;
            long long ulps = ig > ir ? ig - ir : ir - ig;
            /* 1/sqrt in double is itself within 1 ulp: one more for rsqrt */
            long t = tol[k] + (k == 3);
            pw_expect(&rep, !isnan(g) && ulps <= t, "%s [%d] x=%a y=%a: %a want %a (%lld ulp)", anames[k], i, x, y, g,
                      ref[k], ulps);
        }
    }

    free(A); free(B); free(C); free(L); free(out); free(X); free(Y); free(aout);
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dC)); CHECK(cudaFree(dL)); CHECK(cudaFree(dout));
    CHECK(cudaFree(dX)); CHECK(cudaFree(dY)); CHECK(cudaFree(daout));
    return pw_finish(&rep);
}
