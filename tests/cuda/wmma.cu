/*
 * wmma: nvcuda::wmma GEMMs (PTX wmma.load / wmma.mma / wmma.store) checked
 * against a GEMM on the host.
 *
 *   D = 2 * (A * B + C)    A: M x K, B: K x N, C and D: M x N
 *
 * Every warp computes one TM x TN tile of D: it loads C's tile into an
 * accumulator fragment, then for each TK step of K loads A's and B's tiles
 * and runs mma_sync, doubles every element of the accumulator through the
 * fragment's x[] (elementwise work on a fragment must hold whatever the
 * fragment layout is, which CUDA leaves unspecified) and stores it.
 *
 *   f16 -> f32  the shapes m16n16k16, m32n8k16, m8n32k16, each with A and B
 *               row- and column-major, D stored row- and column-major
 *   f16 -> f16  m16n16k16 and m32n8k16 (f16 C and D)
 *   bf16 -> f32 the three shapes
 *   tf32 -> f32 m16n16k8 (elements rounded with __float_to_tf32)
 *   f64         m8n8k4
 *   s8/u8 -> s32 the three shapes
 *   shared      f16 -> f32 m16n16k16 with A, B, C and D staged in shared
 *               memory (the .shared forms of wmma.load/store)
 *
 * Inputs are small integers (|sum| < 2048, s8/u8 over their full range), so
 * every product and partial sum is exact in each accumulator type: the
 * result does not depend on the order or the internal precision of the
 * hardware's sum, which the PTX ISA leaves unspecified.  The reference is a
 * triple loop over the same integers in int64 on the host.
 */
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>
#include <type_traits>

using namespace nvcuda;

#define GM 64
#define GN 64
#define GK 32
#define THREADS 128 /* four warps per block */

/* A stored row-major has lda = K, column-major lda = M; likewise B. */
template <typename L> struct is_row { static const bool v = std::is_same<L, wmma::row_major>::value; };

template <typename TI, typename TS, typename TACC, int TM, int TN, int TK, typename LA, typename LB>
__global__ void gemm(const TS *A, const TS *B, const TACC *C, TACC *D, int dcol)
{
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int tiles_n = GN / TN, tm = warp / tiles_n, tn = warp % tiles_n;
    if (tm >= GM / TM) return;
    int lda = is_row<LA>::v ? GK : GM, ldb = is_row<LB>::v ? GN : GK;
    wmma::fragment<wmma::matrix_a, TM, TN, TK, TI, LA> a;
    wmma::fragment<wmma::matrix_b, TM, TN, TK, TI, LB> b;
    wmma::fragment<wmma::accumulator, TM, TN, TK, TACC> c;
    wmma::load_matrix_sync(c, C + tm * TM * GN + tn * TN, GN, wmma::mem_row_major);
    for (int k = 0; k < GK; k += TK) {
        const TS *pa = is_row<LA>::v ? A + tm * TM * lda + k : A + k * lda + tm * TM;
        const TS *pb = is_row<LB>::v ? B + k * ldb + tn * TN : B + tn * TN * ldb + k;
        wmma::load_matrix_sync(a, pa, lda);
        wmma::load_matrix_sync(b, pb, ldb);
        if constexpr (std::is_same<TI, wmma::precision::tf32>::value) {
            for (int i = 0; i < a.num_elements; i++) a.x[i] = wmma::__float_to_tf32(a.x[i]);
            for (int i = 0; i < b.num_elements; i++) b.x[i] = wmma::__float_to_tf32(b.x[i]);
        }
        wmma::mma_sync(c, a, b, c);
    }
    for (int i = 0; i < c.num_elements; i++) c.x[i] = c.x[i] + c.x[i];
    if (dcol) wmma::store_matrix_sync(D + tn * TN * GM + tm * TM, c, GM, wmma::mem_col_major);
    else wmma::store_matrix_sync(D + tm * TM * GN + tn * TN, c, GN, wmma::mem_row_major);
}

/* f16 -> f32 m16n16k16 through shared memory: each warp stages its tiles
 * (A 16 x K row-major, B K x 16 column-major, C and D 16 x 16) in its own
 * part of a shared array. */
__global__ void gemm_shared(const __half *A, const __half *B, const float *C, float *D)
{
    __shared__ __align__(32) __half sA[THREADS / 32][16 * GK];
    __shared__ __align__(32) __half sB[THREADS / 32][GK * 16];
    __shared__ __align__(32) float sC[THREADS / 32][16 * 16];
    int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int tm = warp / (GN / 16), tn = warp % (GN / 16);
    if (tm >= GM / 16) return;
    for (int i = lane; i < 16 * GK; i += 32) {
        sA[w][i] = A[(tm * 16 + i / GK) * GK + i % GK];          /* row-major, ld GK */
        sB[w][i] = B[(tn * 16 + i / GK) * GK + i % GK];          /* B column-major: column n at n * GK */
    }
    for (int i = lane; i < 256; i += 32) sC[w][i] = C[(tm * 16 + i / 16) * GN + tn * 16 + i % 16];
    __syncwarp();
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> c;
    wmma::load_matrix_sync(c, sC[w], 16, wmma::mem_row_major);
    for (int k = 0; k < GK; k += 16) {
        wmma::load_matrix_sync(a, sA[w] + k, GK);
        wmma::load_matrix_sync(b, sB[w] + k, GK);
        wmma::mma_sync(c, a, b, c);
    }
    for (int i = 0; i < c.num_elements; i++) c.x[i] = c.x[i] + c.x[i];
    __syncwarp();
    wmma::store_matrix_sync(sC[w], c, 16, wmma::mem_col_major);
    __syncwarp();
    for (int i = lane; i < 256; i += 32) D[(tm * 16 + i % 16) * GN + tn * 16 + i / 16] = sC[w][i];
}

/* ---- host ----------------------------------------------------------------- */
/* D's element types, as floats (every value here is an exact small integer) */
static float to_f(float v) { return v; }
static float to_f(double v) { return (float)v; }
static float to_f(__half v) { return __half2float(v); }
static float to_f(int v) { return (float)v; }
template <typename T> static T from_i(int v) { return (T)v; }
template <> __half from_i<__half>(int v) { return __float2half((float)v); }
template <> __nv_bfloat16 from_i<__nv_bfloat16>(int v) { return __float2bfloat16((float)v); }

/* Runs gemm<...> on random integers in [lo, hi] (C in [-4, 4]) and compares
 * D with 2 * (A * B + C) computed in int64 on the host. */
template <typename TI, typename TS, typename TACC, int TM, int TN, int TK, typename LA, typename LB>
static void run(pw_rng *r, pw_report *rep, const char *what, int lo, int hi, int dcol)
{
    static TS hA[GM * GK], hB[GK * GN];
    static TACC hC[GM * GN], hD[GM * GN];
    static int64_t ia[GM][GK], ib[GK][GN], ic[GM][GN];
    bool ar = is_row<LA>::v, br = is_row<LB>::v;
    for (int m = 0; m < GM; m++)
        for (int k = 0; k < GK; k++) {
            ia[m][k] = pw_rng_int(r, lo, hi);
            hA[ar ? m * GK + k : k * GM + m] = from_i<TS>((int)ia[m][k]);
        }
    for (int k = 0; k < GK; k++)
        for (int n = 0; n < GN; n++) {
            ib[k][n] = pw_rng_int(r, lo, hi);
            hB[br ? k * GN + n : n * GK + k] = from_i<TS>((int)ib[k][n]);
        }
    for (int m = 0; m < GM; m++)
        for (int n = 0; n < GN; n++) {
            ic[m][n] = pw_rng_int(r, -4, 4);
            hC[m * GN + n] = from_i<TACC>((int)ic[m][n]);
        }
    TS *dA, *dB;
    TACC *dC, *dD;
    CHECK(cudaMalloc(&dA, sizeof hA));
    CHECK(cudaMalloc(&dB, sizeof hB));
    CHECK(cudaMalloc(&dC, sizeof hC));
    CHECK(cudaMalloc(&dD, sizeof hD));
    CHECK(cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, hC, sizeof hC, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dD, 0, sizeof hD));
    int warps = (GM / TM) * (GN / TN);
    gemm<TI, TS, TACC, TM, TN, TK, LA, LB><<<PW_DIV_UP(warps * 32, THREADS), THREADS>>>(dA, dB, dC, dD, dcol);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost));
    for (int m = 0; m < GM; m++)
        for (int n = 0; n < GN; n++) {
            int64_t s = ic[m][n];
            for (int k = 0; k < GK; k++) s += ia[m][k] * ib[k][n];
            float got = to_f(hD[dcol ? n * GM + m : m * GN + n]);
            pw_expect(rep, got == (float)(2 * s), "%s m%dn%dk%d %s.%s D%s: D[%d][%d] = %g, expected %lld", what, TM,
                      TN, TK, ar ? "row" : "col", br ? "row" : "col", dcol ? "col" : "row", m, n, got,
                      (long long)(2 * s));
        }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

template <int TM, int TN, int TK>
static void f16_f32_all_layouts(pw_rng *r, pw_report *rep)
{
    run<__half, __half, float, TM, TN, TK, wmma::row_major, wmma::col_major>(r, rep, "f16->f32", -3, 3, 0);
    run<__half, __half, float, TM, TN, TK, wmma::row_major, wmma::row_major>(r, rep, "f16->f32", -3, 3, 1);
    run<__half, __half, float, TM, TN, TK, wmma::col_major, wmma::col_major>(r, rep, "f16->f32", -3, 3, 1);
    run<__half, __half, float, TM, TN, TK, wmma::col_major, wmma::row_major>(r, rep, "f16->f32", -3, 3, 0);
}

static void test_shared(pw_rng *r, pw_report *rep)
{
    static __half hA[GM * GK], hB[GN * GK];
    static float hC[GM * GN], hD[GM * GN];
    static int64_t ia[GM][GK], ib[GK][GN];
    for (int m = 0; m < GM; m++)
        for (int k = 0; k < GK; k++) hA[m * GK + k] = __float2half((float)(ia[m][k] = pw_rng_int(r, -3, 3)));
    for (int k = 0; k < GK; k++)
        for (int n = 0; n < GN; n++) hB[n * GK + k] = __float2half((float)(ib[k][n] = pw_rng_int(r, -3, 3)));
    for (int i = 0; i < GM * GN; i++) hC[i] = (float)pw_rng_int(r, -4, 4);
    __half *dA, *dB;
    float *dC, *dD;
    CHECK(cudaMalloc(&dA, sizeof hA));
    CHECK(cudaMalloc(&dB, sizeof hB));
    CHECK(cudaMalloc(&dC, sizeof hC));
    CHECK(cudaMalloc(&dD, sizeof hD));
    CHECK(cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, hC, sizeof hC, cudaMemcpyHostToDevice));
    gemm_shared<<<(GM / 16) * (GN / 16) * 32 / THREADS, THREADS>>>(dA, dB, dC, dD);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost));
    for (int m = 0; m < GM; m++)
        for (int n = 0; n < GN; n++) {
            int64_t s = (int64_t)hC[m * GN + n];
            for (int k = 0; k < GK; k++) s += ia[m][k] * ib[k][n];
            pw_expect(rep, hD[m * GN + n] == (float)(2 * s), "shared f16->f32: D[%d][%d] = %g, expected %lld", m, n,
                      hD[m * GN + n], (long long)(2 * s));
        }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

int main(void)
{
    pw_report rep = pw_report_start("wmma");
    pw_rng r = pw_rng_seed(0x776d6d61);
    using wmma::col_major;
    using wmma::row_major;
    f16_f32_all_layouts<16, 16, 16>(&r, &rep);
    f16_f32_all_layouts<32, 8, 16>(&r, &rep);
    f16_f32_all_layouts<8, 32, 16>(&r, &rep);
    run<__half, __half, __half, 16, 16, 16, row_major, col_major>(&r, &rep, "f16->f16", -3, 3, 0);
    run<__half, __half, __half, 32, 8, 16, col_major, row_major>(&r, &rep, "f16->f16", -3, 3, 1);
    run<__half, __half, __half, 8, 32, 16, row_major, row_major>(&r, &rep, "f16->f16", -3, 3, 0);
    run<__nv_bfloat16, __nv_bfloat16, float, 16, 16, 16, row_major, col_major>(&r, &rep, "bf16->f32", -3, 3, 0);
    run<__nv_bfloat16, __nv_bfloat16, float, 32, 8, 16, col_major, row_major>(&r, &rep, "bf16->f32", -3, 3, 1);
    run<__nv_bfloat16, __nv_bfloat16, float, 8, 32, 16, row_major, row_major>(&r, &rep, "bf16->f32", -3, 3, 0);
    run<wmma::precision::tf32, float, float, 16, 16, 8, row_major, col_major>(&r, &rep, "tf32->f32", -3, 3, 0);
    run<wmma::precision::tf32, float, float, 16, 16, 8, col_major, row_major>(&r, &rep, "tf32->f32", -3, 3, 1);
    run<double, double, double, 8, 8, 4, row_major, col_major>(&r, &rep, "f64", -100, 100, 0);
    run<double, double, double, 8, 8, 4, col_major, row_major>(&r, &rep, "f64", -100, 100, 1);
    run<signed char, signed char, int, 16, 16, 16, row_major, col_major>(&r, &rep, "s8->s32", -128, 127, 0);
    run<signed char, signed char, int, 32, 8, 16, col_major, row_major>(&r, &rep, "s8->s32", -128, 127, 1);
    run<unsigned char, unsigned char, int, 8, 32, 16, row_major, row_major>(&r, &rep, "u8->s32", 0, 255, 0);
    test_shared(&r, &rep);
    return pw_finish(&rep);
}
