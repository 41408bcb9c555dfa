/*
 * wmma_subbyte: the rest of CUDA's wmma, each checked against a reference
 * on the host that does not share code with what it checks.
 *
 *   s4, u4     nvcuda::wmma::experimental m8n8k32 GEMMs (A row-major, B
 *              column-major: the only layouts the ISA has), D = A B + C
 *              stored row- and column-major; with satf = true (mma_sync's
 *              .satfinite) on accumulators near INT32_MAX / INT32_MIN,
 *              which clamp, and the same without, which wrap.
 *   b1         m8n8k128 bmma_sync with bmmaBitOpXOR and bmmaBitOpAND
 *              (.xor.popc / .and.popc): D = C + popc(A_row op B_col).
 *   f64 .rnd   wmma.mma m8n8k4 .f64 with .rn, .rz, .rm and .rp (inline PTX:
 *              mma.h has no rounding argument) on fragments loaded by
 *              load_matrix_sync.  The reference is the PTX ISA's f64 mma:
 *              D = C + sum A[m][k] B[k][n] as fma in k order, each rounded
 *              in the mode, computed on the host with fesetround.  Inputs
 *              have 21-bit significands and spread exponents, so most sums
 *              round and the four modes give different results (checked).
 *   satfinite  .satfinite on wmma.mma m16n16k16 with .f16 inputs (f16 and
 *              f32 results): PTX ISA 6.0-6.4 only (ptxas rejects it from
 *              6.5 on, and mma.h has no float satf), so the kernel is PTX
 *              text of .version 6.4 loaded with cuModuleLoadData.  Sums
 *              that overflow f16 become +-65504, an infinite C +-FLT_MAX, a
 *              NaN C stays NaN, other elements are the plain sums; the same
 *              kernel without .satfinite gives the infinities.
 *
 * Sub-byte matrices are packed as CUDA stores them: element i of a row
 * (column) at bits 4i (i) of the byte string, low bits first.
 */
#include "check.h"

#include <cfenv>
#include <cmath>
#include <cuda.h>
#include <float.h>
#include <mma.h>

using namespace nvcuda;
namespace wx = nvcuda::wmma::experimental;

#define CHECK_CU(call)                                                                     \
    do {                                                                                   \
        CUresult pw_r_ = (call);                                                           \
        if (pw_r_ != CUDA_SUCCESS) {                                                       \
            const char *pw_name_ = "?";                                                    \
            cuGetErrorName(pw_r_, &pw_name_);                                              \
            fprintf(stderr, "%s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call, pw_name_, \
                    (int)pw_r_);                                                           \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

/* ---- s4 / u4 ---------------------------------------------------------------- */
#define IM 32
#define IN 32
#define IK 64

template <typename T>
__global__ void gemm_i4(const void *A, const void *B, const int *C, int *D, int dcol, int satf)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int tm = warp / (IN / 8), tn = warp % (IN / 8);
    if (tm >= IM / 8) return;
    wmma::fragment<wmma::matrix_a, 8, 8, 32, T, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 8, 8, 32, T, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 8, 8, 32, int> c;
    wmma::load_matrix_sync(c, C + tm * 8 * IN + tn * 8, IN, wmma::mem_row_major);
    for (int k = 0; k < IK; k += 32) {
        /* row-major A: IK 4-bit elements a row; column-major B: IK a column */
        wmma::load_matrix_sync(a, (const char *)A + (tm * 8 * IK + k) / 2, IK);
        wmma::load_matrix_sync(b, (const char *)B + (tn * 8 * IK + k) / 2, IK);
        wmma::mma_sync(c, a, b, c, satf != 0);
    }
    int *p = dcol ? D + tn * 8 * IM + tm * 8 : D + tm * 8 * IN + tn * 8;
    wmma::store_matrix_sync(p, c, dcol ? IM : IN, dcol ? wmma::mem_col_major : wmma::mem_row_major);
}

static void put4(unsigned char *buf, int idx, int v)
{
    buf[idx / 2] = (unsigned char)((buf[idx / 2] & ~(15 << (4 * (idx % 2)))) | ((v & 15) << (4 * (idx % 2))));
}

template <typename T>
static void run_i4(pw_rng *r, pw_report *rep, bool sgn, int dcol, bool satf, bool big)
{
    static unsigned char hA[IM * IK / 2], hB[IN * IK / 2];
    static int hC[IM * IN], hD[IM * IN];
    static int64_t ia[IM][IK], ib[IK][IN];
    int lo = sgn ? -8 : 0, hi = sgn ? 7 : 15;
    for (int m = 0; m < IM; m++)
        for (int k = 0; k < IK; k++) put4(hA, m * IK + k, (int)(ia[m][k] = pw_rng_int(r, lo, hi)));
    for (int k = 0; k < IK; k++)
        for (int n = 0; n < IN; n++) put4(hB, n * IK + k, (int)(ib[k][n] = pw_rng_int(r, lo, hi)));
    /* big: C at the ends of the s32 range, so that the sum leaves it */
    for (int i = 0; i < IM * IN; i++)
        hC[i] = big ? (i % 2 ? INT32_MAX - pw_rng_int(r, 0, 100) : INT32_MIN + pw_rng_int(r, 0, 100))
                    : pw_rng_int(r, -1000, 1000);
    if (big && sgn)   /* push the sums toward the end C is at */
        for (int m = 0; m < IM; m++)
            for (int k = 0; k < IK; k++) put4(hA, m * IK + k, (int)(ia[m][k] = -8));
    if (big)
        for (int k = 0; k < IK; k++)
            for (int n = 0; n < IN; n++) put4(hB, n * IK + k, (int)(ib[k][n] = sgn ? (n % 2 ? -8 : 7) : 15));
    if (big && !sgn)
        for (int m = 0; m < IM; m++)
            for (int k = 0; k < IK; k++) put4(hA, m * IK + k, (int)(ia[m][k] = 15));
    void *dA, *dB;
    int *dC, *dD;
    CHECK(cudaMalloc(&dA, sizeof hA));
    CHECK(cudaMalloc(&dB, sizeof hB));
    CHECK(cudaMalloc(&dC, sizeof hC));
    CHECK(cudaMalloc(&dD, sizeof hD));
    CHECK(cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, hC, sizeof hC, cudaMemcpyHostToDevice));
    gemm_i4<T><<<(IM / 8) * (IN / 8) * 32 / 128, 128>>>(dA, dB, dC, dD, dcol, satf);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost));
    int clamped = 0;
    for (int m = 0; m < IM; m++)
        for (int n = 0; n < IN; n++) {
            /* per k step of 32: C + that step's sum, clamped or wrapped each time */
            int64_t acc = hC[m * IN + n];
            for (int k0 = 0; k0 < IK; k0 += 32) {
                int64_t s = acc;
                for (int k = k0; k < k0 + 32; k++) s += ia[m][k] * ib[k][n];
                if (satf) {
                    if (s > INT32_MAX) s = INT32_MAX, clamped++;
                    if (s < INT32_MIN) s = INT32_MIN, clamped++;
                } else {
                    s = (int32_t)(uint32_t)(uint64_t)s;
                }
                acc = s;
            }
            int got = hD[dcol ? n * IM + m : m * IN + n];
            pw_expect(rep, got == (int)acc, "%s m8n8k32%s%s D%s: D[%d][%d] = %d, expected %lld", sgn ? "s4" : "u4",
                      satf ? " satf" : "", big ? " (big C)" : "", dcol ? "col" : "row", m, n, got, (long long)acc);
        }
    if (big && satf) pw_expect(rep, clamped > 0, "%s satf: no sum reached the clamp", sgn ? "s4" : "u4");
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

/* ---- b1 ---------------------------------------------------------------------- */
#define BM 16
#define BN 16
#define BK 256

__global__ void gemm_b1(const unsigned *A, const unsigned *B, const int *C, int *D, int op)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int tm = warp / (BN / 8), tn = warp % (BN / 8);
    if (tm >= BM / 8) return;
    wmma::fragment<wmma::matrix_a, 8, 8, 128, wx::precision::b1, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 8, 8, 128, wx::precision::b1, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 8, 8, 128, int> c;
    wmma::load_matrix_sync(c, C + tm * 8 * BN + tn * 8, BN, wmma::mem_row_major);
    for (int k = 0; k < BK; k += 128) {
        wmma::load_matrix_sync(a, A + (tm * 8 * BK + k) / 32, BK);
        wmma::load_matrix_sync(b, B + (tn * 8 * BK + k) / 32, BK);
        if (op)
            wmma::bmma_sync(c, a, b, c, wx::bmmaBitOpAND);
        else
            wmma::bmma_sync(c, a, b, c, wx::bmmaBitOpXOR);
    }
    wmma::store_matrix_sync(D + tm * 8 * BN + tn * 8, c, BN, wmma::mem_row_major);
}

static void run_b1(pw_rng *r, pw_report *rep, int op)
{
    static unsigned hA[BM * BK / 32], hB[BN * BK / 32];
    static int hC[BM * BN], hD[BM * BN];
    for (unsigned i = 0; i < PW_ARRAY_SIZE(hA); i++) hA[i] = pw_rng_u32(r);
    for (unsigned i = 0; i < PW_ARRAY_SIZE(hB); i++) hB[i] = pw_rng_u32(r);
    for (int i = 0; i < BM * BN; i++) hC[i] = pw_rng_int(r, -50, 50);
    unsigned *dA, *dB;
    int *dC, *dD;
    CHECK(cudaMalloc(&dA, sizeof hA));
    CHECK(cudaMalloc(&dB, sizeof hB));
    CHECK(cudaMalloc(&dC, sizeof hC));
    CHECK(cudaMalloc(&dD, sizeof hD));
    CHECK(cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, hC, sizeof hC, cudaMemcpyHostToDevice));
    gemm_b1<<<1, (BM / 8) * (BN / 8) * 32>>>(dA, dB, dC, dD, op);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost));
    for (int m = 0; m < BM; m++)
        for (int n = 0; n < BN; n++) {
            int s = hC[m * BN + n];
            for (int k = 0; k < BK; k++) {
                int a = (hA[(m * BK + k) / 32] >> (k % 32)) & 1, b = (hB[(n * BK + k) / 32] >> (k % 32)) & 1;
                s += op ? (a & b) : (a ^ b);
            }
            pw_expect(rep, hD[m * BN + n] == s, "b1 %s.popc: D[%d][%d] = %d, expected %d", op ? "and" : "xor", m, n,
                      hD[m * BN + n], s);
        }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

/* ---- f64 rounding modes -------------------------------------------------------- */
/* One 8x8x4 tile per warp; D[mode] for the four modes. */
#define F64_MMA(rnd)                                                                                 \
    asm volatile("wmma.mma.sync.aligned.row.col.m8n8k4." rnd ".f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%4, %5};" \
                 : "=d"(d.x[0]), "=d"(d.x[1])                                                        \
                 : "d"(a.x[0]), "d"(b.x[0]), "d"(c.x[0]), "d"(c.x[1]))

__global__ void f64_modes(const double *A, const double *B, const double *C, double *D)
{
    wmma::fragment<wmma::matrix_a, 8, 8, 4, double, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 8, 8, 4, double, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 8, 8, 4, double> c, d;
    wmma::load_matrix_sync(a, A, 4);
    wmma::load_matrix_sync(b, B, 4);
    wmma::load_matrix_sync(c, C, 8, wmma::mem_row_major);
    F64_MMA("rn");
    wmma::store_matrix_sync(D, d, 8, wmma::mem_row_major);
    F64_MMA("rz");
    wmma::store_matrix_sync(D + 64, d, 8, wmma::mem_row_major);
    F64_MMA("rm");
    wmma::store_matrix_sync(D + 128, d, 8, wmma::mem_row_major);
    F64_MMA("rp");
    wmma::store_matrix_sync(D + 192, d, 8, wmma::mem_row_major);
}

static double rnd_fma(double a, double b, double c)
{
    volatile double va = a, vb = b, vc = c;
    volatile double r = std::fma(va, vb, vc);
    return r;
}

static void run_f64(pw_rng *r, pw_report *rep)
{
    static double hA[8 * 4], hB[8 * 4], hC[64], hD[256];
    /* 21-bit integers scaled by 2^e, e in [-40, 0]: products are exact in
     * f64 (42 bits), most sums of four of them and C are not */
    for (int i = 0; i < 32; i++) hA[i] = ldexp((double)pw_rng_int(r, -(1 << 20), 1 << 20), -pw_rng_int(r, 0, 40));
    for (int i = 0; i < 32; i++) hB[i] = ldexp((double)pw_rng_int(r, -(1 << 20), 1 << 20), -pw_rng_int(r, 0, 40));
    for (int i = 0; i < 64; i++) hC[i] = ldexp((double)pw_rng_int(r, -(1 << 20), 1 << 20), -pw_rng_int(r, 0, 40));
    double *dA, *dB, *dC, *dD;
    CHECK(cudaMalloc(&dA, sizeof hA));
    CHECK(cudaMalloc(&dB, sizeof hB));
    CHECK(cudaMalloc(&dC, sizeof hC));
    CHECK(cudaMalloc(&dD, sizeof hD));
    CHECK(cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, hC, sizeof hC, cudaMemcpyHostToDevice));
    f64_modes<<<1, 32>>>(dA, dB, dC, dD);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost));
    static const int modes[4] = {FE_TONEAREST, FE_TOWARDZERO, FE_DOWNWARD, FE_UPWARD};
    static const char *names[4] = {"rn", "rz", "rm", "rp"};
    double want[4][64];
    for (int md = 0; md < 4; md++) {
        int old = fegetround();
        fesetround(modes[md]);
        for (int m = 0; m < 8; m++)
            for (int n = 0; n < 8; n++) {
                double acc = hC[m * 8 + n];
                /* A row-major (lda 4), B column-major (ldb 4) */
                for (int k = 0; k < 4; k++) acc = rnd_fma(hA[m * 4 + k], hB[n * 4 + k], acc);
                want[md][m * 8 + n] = acc;
            }
        fesetround(old);
        for (int e = 0; e < 64; e++)
            pw_expect(rep, d2u(hD[64 * md + e]) == d2u(want[md][e]), "f64 .%s: D[%d][%d] = %a, expected %a",
                      names[md], e / 8, e % 8, hD[64 * md + e], want[md][e]);
    }
    /* the test can tell the modes apart */
    int differ = 0;
    for (int e = 0; e < 64; e++) differ += want[1][e] != want[3][e];
    pw_expect(rep, differ > 16, "f64: only %d elements differ between .rz and .rp", differ);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

/* ---- .satfinite of floating-point wmma.mma (PTX 6.4) ---------------------------------- */
/* sat(A, B, C, D16, D32, Draw): one m16n16k16 tile, A row-major and B
 * column-major f16 (ld 16), C f32 row-major; D16 (f16), D32 (f32) with
 * .satfinite and Draw (f32) without, all row-major. */
/* PTX-BEGIN satfinite */
static const char ptx_sat[] = R"PTX(
.version 6.4
.target sm_75
.address_size 64
.visible .entry sat(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 pd16, .param .u64 pd32,
                    .param .u64 praw)
{
    .reg .b32 %a<8>;
    .reg .b32 %b<8>;
    .reg .f32 %c<8>;
    .reg .b32 %h<4>;
    .reg .f32 %f<8>;
    .reg .f32 %g<8>;
    .reg .b64 %p<6>;
    ld.param.u64 %p0, [pa];
    ld.param.u64 %p1, [pb];
    ld.param.u64 %p2, [pc];
    ld.param.u64 %p3, [pd16];
    ld.param.u64 %p4, [pd32];
    ld.param.u64 %p5, [praw];
    wmma.load.a.sync.aligned.row.m16n16k16.global.f16 {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, [%p0];
    wmma.load.b.sync.aligned.col.m16n16k16.global.f16 {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7}, [%p1];
    wmma.load.c.sync.aligned.row.m16n16k16.global.f32 {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7}, [%p2];
    wmma.mma.sync.aligned.row.col.m16n16k16.f16.f32.satfinite {%h0, %h1, %h2, %h3},
        {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7},
        {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f16 [%p3], {%h0, %h1, %h2, %h3};
    wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32.satfinite {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7},
        {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7},
        {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%p4], {%f0, %f1, %f2, %f3, %f4, %f5, %f6, %f7};
    wmma.mma.sync.aligned.row.col.m16n16k16.f32.f32 {%g0, %g1, %g2, %g3, %g4, %g5, %g6, %g7},
        {%a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7}, {%b0, %b1, %b2, %b3, %b4, %b5, %b6, %b7},
        {%c0, %c1, %c2, %c3, %c4, %c5, %c6, %c7};
    wmma.store.d.sync.aligned.row.m16n16k16.global.f32 [%p5], {%g0, %g1, %g2, %g3, %g4, %g5, %g6, %g7};
    ret;
}
)PTX";
/* PTX-END */

static float h2f(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    float v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexpf((float)(m | 1024), e - 25) : ldexpf((float)m, -24);
    return h & 0x8000 ? -v : v;
}

static void run_satfinite(pw_rng *r, pw_report *rep)
{
    /* A[m][k] = +-64 (m + 1) (odd rows negative), B[k][n] = n + 1 for even
     * k, 0 for odd, C[m][n] = 512 c with c in [-8, 8]: D = 512 ((m + 1)(n
     * + 1) +- c), at most 9 significant bits, exact in f16 and f32, and
     * beyond f16's largest finite value (65504 = 512 * 127.9) where |(m +
     * 1)(n + 1) + c| >= 128.  C is +inf, -inf and NaN in three places. */
    static uint16_t hA[256], hB[256], hD16[256];
    static float hC[256], hD32[256], hRaw[256];
    int64_t ia[16][16], ib[16][16];
    for (int m = 0; m < 16; m++)
        for (int k = 0; k < 16; k++) {
            ia[m][k] = (m % 2 ? -64 : 64) * (m + 1);
            float v = (float)ia[m][k];
            uint32_t u = f2u(v);   /* exact in f16: |v| <= 256, integer */
            hA[m * 16 + k] = (uint16_t)(((u >> 16) & 0x8000) | ((((u >> 23) & 255) - 112) << 10) | ((u >> 13) & 1023));
        }
    for (int n = 0; n < 16; n++)
        for (int k = 0; k < 16; k++) {
            ib[k][n] = k % 2 ? 0 : n + 1;
            float v = (float)ib[k][n];
            uint32_t u = f2u(v);
            hB[n * 16 + k] = v == 0 ? 0 : (uint16_t)((((u >> 23) & 255) - 112) << 10 | ((u >> 13) & 1023));
        }
    for (int i = 0; i < 256; i++) hC[i] = (float)(512 * pw_rng_int(r, -8, 8));
    hC[0] = INFINITY, hC[17] = -INFINITY, hC[34] = NAN;
    CUmodule mod;
    CUfunction fn;
    CHECK_CU(cuModuleLoadData(&mod, ptx_sat));
    CHECK_CU(cuModuleGetFunction(&fn, mod, "sat"));
    CUdeviceptr dA, dB, dC, dD16, dD32, dRaw;
    CHECK_CU(cuMemAlloc(&dA, sizeof hA));
    CHECK_CU(cuMemAlloc(&dB, sizeof hB));
    CHECK_CU(cuMemAlloc(&dC, sizeof hC));
    CHECK_CU(cuMemAlloc(&dD16, sizeof hD16));
    CHECK_CU(cuMemAlloc(&dD32, sizeof hD32));
    CHECK_CU(cuMemAlloc(&dRaw, sizeof hRaw));
    CHECK_CU(cuMemcpyHtoD(dA, hA, sizeof hA));
    CHECK_CU(cuMemcpyHtoD(dB, hB, sizeof hB));
    CHECK_CU(cuMemcpyHtoD(dC, hC, sizeof hC));
    void *args[] = {&dA, &dB, &dC, &dD16, &dD32, &dRaw};
    CHECK_CU(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, NULL, args, NULL));
    CHECK_CU(cuCtxSynchronize());
    CHECK_CU(cuMemcpyDtoH(hD16, dD16, sizeof hD16));
    CHECK_CU(cuMemcpyDtoH(hD32, dD32, sizeof hD32));
    CHECK_CU(cuMemcpyDtoH(hRaw, dRaw, sizeof hRaw));
    int over = 0;
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            int e = m * 16 + n;
            double s = hC[e];
            for (int k = 0; k < 16; k++) s += (double)(ia[m][k] * ib[k][n]);
            /* every finite sum is an integer below 2^24: exact in f32 */
            float want32 = std::isnan(s) ? NAN : std::isinf(s) ? (s > 0 ? FLT_MAX : -FLT_MAX) : (float)s;
            float wraw = (float)s;
            /* f16: the finite sums are exact where they are below 65520
             * (from where round to nearest gives infinity) */
            float want16 = std::isnan(s) ? NAN : std::fabs(s) >= 65520.0 ? (s > 0 ? 65504.0f : -65504.0f) : (float)s;
            over += !std::isinf(s) && std::fabs(s) >= 65520.0;
            float got16 = h2f(hD16[e]);
            bool ok16 = std::isnan(want16) ? std::isnan(got16) : got16 == want16;
            pw_expect(rep, ok16, "satfinite f16: D[%d][%d] = %g (0x%04x), expected %g", m, n, got16, hD16[e], want16);
            bool ok32 = std::isnan(want32) ? std::isnan(hD32[e]) : hD32[e] == want32;
            pw_expect(rep, ok32, "satfinite f32: D[%d][%d] = %g, expected %g", m, n, hD32[e], want32);
            bool okraw = std::isnan(wraw) ? std::isnan(hRaw[e]) : hRaw[e] == wraw;
            pw_expect(rep, okraw, "no satfinite f32: D[%d][%d] = %g, expected %g", m, n, hRaw[e], wraw);
        }
    pw_expect(rep, over > 10, "satfinite: only %d sums overflow f16", over);
    CHECK_CU(cuMemFree(dA));
    CHECK_CU(cuMemFree(dB));
    CHECK_CU(cuMemFree(dC));
    CHECK_CU(cuMemFree(dD16));
    CHECK_CU(cuMemFree(dD32));
    CHECK_CU(cuMemFree(dRaw));
    CHECK_CU(cuModuleUnload(mod));
}

int main(void)
{
    pw_report rep = pw_report_start("wmma_subbyte");
    pw_rng r = pw_rng_seed(0x73756262);
    CHECK(cudaFree(0));   /* the runtime's context, current for the driver API calls too */
    run_i4<wx::precision::s4>(&r, &rep, true, 0, false, false);
    run_i4<wx::precision::s4>(&r, &rep, true, 1, true, false);
    run_i4<wx::precision::u4>(&r, &rep, false, 0, false, false);
    run_i4<wx::precision::u4>(&r, &rep, false, 1, false, false);
    run_i4<wx::precision::s4>(&r, &rep, true, 0, true, true);
    run_i4<wx::precision::s4>(&r, &rep, true, 1, false, true);
    run_i4<wx::precision::u4>(&r, &rep, false, 0, true, true);
    run_b1(&r, &rep, 0);
    run_b1(&r, &rep, 1);
    run_f64(&r, &rep);
    run_satfinite(&r, &rep);
    return pw_finish(&rep);
}
