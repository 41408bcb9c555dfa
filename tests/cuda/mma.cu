/*
 * mma: warp-level matrix instructions through inline PTX, bit for bit.
 *
 *   mma_f16     ldmatrix.x4 (A, row-major 16x16 f16 in shared memory) and
 *               ldmatrix.x2.trans (B, row-major 16x8) feeding
 *               mma.m16n8k16.f32.f16.f16.f32, mma.m16n8k16.f16.f16.f16.f16
 *               and mma.m16n8k8.f32.f16.f16.f32 (the first half of K)
 *   mma_bf16    ldmatrix.x4 (A) and two ldmatrix.x1 (B stored transposed,
 *               B^T row-major 8x16) feeding mma.m16n8k16.f32.bf16.bf16.f32
 *   mma_tf32    mma.m16n8k8.f32.tf32.tf32.f32, fragments loaded directly, and
 *               mma.m16n8k4.f32.tf32.tf32.f32 (the first half of K)
 *   mma_int8    mma.m16n8k32.s32.s8.s8.s32 with and without .satfinite (C
 *               near INT32_MAX/INT32_MIN: the wrapped and the clamped sum),
 *               mma.m16n8k16.s32.u8.s8.s32
 *   mma_f64     mma.m8n8k4.f64.f64.f64.f64
 *   movmatrix   movmatrix.m8n8.trans.b16 of an 8x8 .b16 matrix
 *
 * Fragment layouts are the PTX ISA's (9.7.14.5.x "Matrix Fragments for
 * mma.mMnNkK", 9.7.14.5.15 ldmatrix): with g = lane >> 2, t = lane & 3,
 *   C/D (m16n8):  c_i at row g + 8 (i >> 1), column 2t + (i & 1)
 *   A f16 k16:    reg r = {row g + 8 (r & 1), columns 2t, 2t+1 (+ 8 for r >= 2)}
 *   A tf32 k8:    a_i at row g + 8 (i & 1), column t + 4 (i >> 1)
 *   B tf32 k8:    b_i at row t + 4 i, column g
 *   A tf32 k4:    a_i at row g + 8 i, column t; B tf32 k4: b0 at row t, column g
 *   A s8 k32:     reg r = 4 bytes of row g + 8 (r & 1), columns 4t .. 4t+3 (+ 16 for r >= 2)
 *   B s8 k32:     reg r = 4 bytes of column g, rows 4t .. 4t+3 (+ 16 for r = 1)
 *   f64 m8n8k4:   a0 = A[g][t], b0 = B[t][g], c_i = C[g][2t + i]
 * written out here independently of ptxwave's tables.
 *
 * Inputs are small integers, so every product and every partial sum is
 * exact in f32 (and in f16 for the f16 accumulator: |sum| <= 2048): the
 * result does not depend on the order or the precision of the hardware's
 * accumulation, which the ISA does not specify.  The host reference is a
 * plain triple loop in integers (and in int64 with clamping for .satfinite).
 *
 * Each warp computes its own tile (tile = global thread index / 32); a warp
 * that is not complete (blocks of 33 or 48 threads in the differential
 * tests) does nothing, since the .aligned instructions need all 32 threads.
 */
#include "check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define WARPS_PER_BLOCK 2
#define NTILES 6
#define MAX_WARPS 32 /* shared arrays: up to 1024 threads per block */

__device__ static unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

/* ---- f16 ------------------------------------------------------------------ */
__global__ void mma_f16(const __half *A, const __half *B, const float *C, float *D, __half *D16, float *D8, int ntiles)
{
    __shared__ __align__(16) __half sA[MAX_WARPS][16 * 16];
    __shared__ __align__(16) __half sB[MAX_WARPS][16 * 8];
    if ((threadIdx.x | 31) >= blockDim.x) return; /* incomplete warp */
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= ntiles || w >= MAX_WARPS) return;
    A += tile * 256, B += tile * 128, C += tile * 128, D += tile * 128, D16 += tile * 128, D8 += tile * 128;
    for (int i = lane; i < 256; i += 32) sA[w][i] = A[i];
    for (int i = lane; i < 128; i += 32) sB[w][i] = B[i];
    __syncwarp();
    unsigned a[4], b[2], c16[2];
    /* A: threads 0-15 give rows 0-15 of columns 0-7, threads 16-31 of columns 8-15 */
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(smem_addr(&sA[w][(lane & 15) * 16 + (lane >> 4) * 8])));
    /* B row-major [k][n]: .trans gives each thread B[2t][g], B[2t+1][g] */
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(b[0]), "=r"(b[1])
                 : "r"(smem_addr(&sB[w][(lane & 15) * 8])));
    int g = lane >> 2, t = lane & 3;
    float c[4], d[4], d8[4];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    for (int r = 0; r < 2; r++) {
        __half2 h = __floats2half2_rn(c[2 * r], c[2 * r + 1]);
        memcpy(&c16[r], &h, 4);
    }
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                   "f"(c[3]));
    unsigned d16[2];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
                 : "=r"(d16[0]), "=r"(d16[1])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c16[0]), "r"(c16[1]));
    /* m16n8k8: A columns 0-7 are registers 0 and 1, B rows 0-7 register 0 */
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d8[0]), "=f"(d8[1]), "=f"(d8[2]), "=f"(d8[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) {
        int o = (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
        D[o] = d[i];
        D8[o] = d8[i];
        unsigned short hb = (unsigned short)(d16[i >> 1] >> (16 * (i & 1)));
        D16[o] = __ushort_as_half(hb);
    }
}

/* ---- bf16 ----------------------------------------------------------------- */
__global__ void mma_bf16(const __nv_bfloat16 *A, const __nv_bfloat16 *Bt, const float *C, float *D, int ntiles)
{
    __shared__ __align__(16) __nv_bfloat16 sA[MAX_WARPS][16 * 16];
    __shared__ __align__(16) __nv_bfloat16 sB[MAX_WARPS][8 * 16];
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= ntiles || w >= MAX_WARPS) return;
    A += tile * 256, Bt += tile * 128, C += tile * 128, D += tile * 128;
    for (int i = lane; i < 256; i += 32) sA[w][i] = A[i];
    for (int i = lane; i < 128; i += 32) sB[w][i] = Bt[i];
    __syncwarp();
    unsigned a[4], b[2];
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3])
                 : "r"(smem_addr(&sA[w][(lane & 15) * 16 + (lane >> 4) * 8])));
    /* B^T row n = column n of B: threads 0-7 give rows 0-7, k 0-7 (then k 8-15) */
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];"
                 : "=r"(b[0])
                 : "r"(smem_addr(&sB[w][(lane & 7) * 16])));
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%0}, [%1];"
                 : "=r"(b[1])
                 : "r"(smem_addr(&sB[w][(lane & 7) * 16 + 8])));
    int g = lane >> 2, t = lane & 3;
    float c[4], d[4];
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                   "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

/* ---- tf32 ----------------------------------------------------------------- */
__global__ void mma_tf32(const float *A, const float *B, const float *C, float *D, float *D4, int ntiles)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= ntiles) return;
    A += tile * 128, B += tile * 64, C += tile * 128, D += tile * 128, D4 += tile * 128;
    int g = lane >> 2, t = lane & 3;
    unsigned a[4], b[2];
    float c[4], d[4];
    for (int i = 0; i < 4; i++) a[i] = __float_as_uint(A[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)]);
    for (int i = 0; i < 2; i++) b[i] = __float_as_uint(B[(t + 4 * i) * 8 + g]);
    for (int i = 0; i < 4; i++) c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]),
                   "f"(c[3]));
    for (int i = 0; i < 4; i++) D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
    unsigned a4[2], b4 = __float_as_uint(B[t * 8 + g]);
    for (int i = 0; i < 2; i++) a4[i] = __float_as_uint(A[(g + 8 * i) * 8 + t]);
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                 : "r"(a4[0]), "r"(a4[1]), "r"(b4), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
    for (int i = 0; i < 4; i++) D4[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

/* ---- s8 / u8 -------------------------------------------------------------- */
/* A 16x32 bytes row-major, Bt 8x32 bytes (B^T row-major), C/Cbig 16x8 s32 */
__global__ void mma_int8(const unsigned char *A, const unsigned char *Bt, const int *C, const int *Cbig, int *D,
                         int *Dwrap, int *Dsat, int *Du8, int ntiles)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= ntiles) return;
    A += tile * 512, Bt += tile * 256;
    C += tile * 128, Cbig += tile * 128, D += tile * 128, Dwrap += tile * 128, Dsat += tile * 128, Du8 += tile * 128;
    int g = lane >> 2, t = lane & 3;
    unsigned a[4], b[2];
    int c[4], cb[4], d[4], dw[4], ds[4], du[4];
    for (int r = 0; r < 4; r++) a[r] = *(const unsigned *)&A[(g + 8 * (r & 1)) * 32 + 4 * t + 16 * (r >> 1)];
    for (int r = 0; r < 2; r++) b[r] = *(const unsigned *)&Bt[g * 32 + 4 * t + 16 * r];
    for (int i = 0; i < 4; i++) {
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
        cb[i] = Cbig[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    }
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]),
                   "r"(c[3]));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(dw[0]), "=r"(dw[1]), "=r"(dw[2]), "=r"(dw[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(cb[0]), "r"(cb[1]), "r"(cb[2]),
                   "r"(cb[3]));
    asm volatile("mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(ds[0]), "=r"(ds[1]), "=r"(ds[2]), "=r"(ds[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(cb[0]), "r"(cb[1]), "r"(cb[2]),
                   "r"(cb[3]));
    /* m16n8k16 u8 x s8: A columns 0-15 are registers 0 and 1, B rows 0-15 register 0 */
    asm volatile("mma.sync.aligned.m16n8k16.row.col.s32.u8.s8.s32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                 : "=r"(du[0]), "=r"(du[1]), "=r"(du[2]), "=r"(du[3])
                 : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
    for (int i = 0; i < 4; i++) {
        int o = (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
        D[o] = d[i];
        Dwrap[o] = dw[i];
        Dsat[o] = ds[i];
        Du8[o] = du[i];
    }
}

/* ---- f64 ------------------------------------------------------------------ */
__global__ void mma_f64(const double *A, const double *B, const double *C, double *D, int ntiles)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= ntiles) return;
    A += tile * 32, B += tile * 32, C += tile * 64, D += tile * 64;
    int g = lane >> 2, t = lane & 3;
    double a = A[g * 4 + t], b = B[t * 8 + g], c0 = C[g * 8 + 2 * t], c1 = C[g * 8 + 2 * t + 1], d0, d1;
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=d"(d0), "=d"(d1)
                 : "d"(a), "d"(b), "d"(c0), "d"(c1));
    D[g * 8 + 2 * t] = d0;
    D[g * 8 + 2 * t + 1] = d1;
}

/* ---- movmatrix ------------------------------------------------------------- */
__global__ void movmatrix_trans(const unsigned short *M, unsigned *out, int ntiles)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31;
    int tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= ntiles) return;
    M += tile * 64;
    unsigned a = *(const unsigned *)&M[(lane >> 2) * 8 + 2 * (lane & 3)], d;
    asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
    out[tile * 32 + lane] = d;
}

/* ---- host ------------------------------------------------------------------ */
static int small(pw_rng *r) { return pw_rng_int(r, -4, 4); }

template <typename T>
static T *dev_copy(const T *h, size_t n)
{
    T *d;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
    return d;
}
template <typename T>
static T *dev_zero(size_t n)
{
    T *d;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemset(d, 0, n * sizeof(T)));
    return d;
}
template <typename T>
static void to_host(T *h, const T *d, size_t n)
{
    CHECK(cudaMemcpy(h, d, n * sizeof(T), cudaMemcpyDeviceToHost));
}

static const int NT = NTILES;
static const int GRID = NTILES / WARPS_PER_BLOCK, BLOCK = 32 * WARPS_PER_BLOCK;

static void test_f16(pw_rng *r, pw_report *rep)
{
    static int ai[NT * 256], bi[NT * 128], ci[NT * 128];
    static __half A[NT * 256], B[NT * 128], D16[NT * 128];
    static float C[NT * 128], D[NT * 128], D8[NT * 128];
    for (int i = 0; i < NT * 256; i++) A[i] = __int2half_rn(ai[i] = small(r));
    for (int i = 0; i < NT * 128; i++) B[i] = __int2half_rn(bi[i] = small(r));
    for (int i = 0; i < NT * 128; i++) C[i] = (float)(ci[i] = pw_rng_int(r, -100, 100));
    __half *dA = dev_copy(A, NT * 256), *dB = dev_copy(B, NT * 128), *dD16 = dev_zero<__half>(NT * 128);
    float *dC = dev_copy(C, NT * 128), *dD = dev_zero<float>(NT * 128), *dD8 = dev_zero<float>(NT * 128);
    mma_f16<<<GRID, BLOCK>>>(dA, dB, dC, dD, dD16, dD8, NT);
    CHECK_LAUNCH();
    to_host(D, dD, NT * 128);
    to_host(D16, dD16, NT * 128);
    to_host(D8, dD8, NT * 128);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                int s = ci[tl * 128 + m * 8 + n], s8 = s;
                for (int k = 0; k < 16; k++) {
                    int p = ai[tl * 256 + m * 16 + k] * bi[tl * 128 + k * 8 + n];
                    s += p;
                    if (k < 8) s8 += p;
                }
                int o = tl * 128 + m * 8 + n;
                pw_expect(rep, D[o] == (float)s, "f16 m16n8k16 tile %d D[%d][%d] = %g, want %d", tl, m, n, D[o], s);
                pw_expect(rep, __half2float(D16[o]) == (float)s, "f16 acc m16n8k16 tile %d D[%d][%d] = %g, want %d",
                          tl, m, n, __half2float(D16[o]), s);
                pw_expect(rep, D8[o] == (float)s8, "f16 m16n8k8 tile %d D[%d][%d] = %g, want %d", tl, m, n, D8[o], s8);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
    CHECK(cudaFree(dD16));
    CHECK(cudaFree(dD8));
}

static void test_bf16(pw_rng *r, pw_report *rep)
{
    static int ai[NT * 256], bti[NT * 128], ci[NT * 128];
    static __nv_bfloat16 A[NT * 256], Bt[NT * 128];
    static float C[NT * 128], D[NT * 128];
    for (int i = 0; i < NT * 256; i++) A[i] = __float2bfloat16_rn((float)(ai[i] = small(r)));
    for (int i = 0; i < NT * 128; i++) Bt[i] = __float2bfloat16_rn((float)(bti[i] = small(r)));
    for (int i = 0; i < NT * 128; i++) C[i] = (float)(ci[i] = pw_rng_int(r, -100, 100));
    __nv_bfloat16 *dA = dev_copy(A, NT * 256), *dB = dev_copy(Bt, NT * 128);
    float *dC = dev_copy(C, NT * 128), *dD = dev_zero<float>(NT * 128);
    mma_bf16<<<GRID, BLOCK>>>(dA, dB, dC, dD, NT);
    CHECK_LAUNCH();
    to_host(D, dD, NT * 128);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                int s = ci[tl * 128 + m * 8 + n];
                for (int k = 0; k < 16; k++) s += ai[tl * 256 + m * 16 + k] * bti[tl * 128 + n * 16 + k];
                int o = tl * 128 + m * 8 + n;
                pw_expect(rep, D[o] == (float)s, "bf16 tile %d D[%d][%d] = %g, want %d", tl, m, n, D[o], s);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

static void test_tf32(pw_rng *r, pw_report *rep)
{
    static int ai[NT * 128], bi[NT * 64], ci[NT * 128];
    static float A[NT * 128], B[NT * 64], C[NT * 128], D[NT * 128], D4[NT * 128];
    for (int i = 0; i < NT * 128; i++) A[i] = (float)(ai[i] = pw_rng_int(r, -50, 50));
    for (int i = 0; i < NT * 64; i++) B[i] = (float)(bi[i] = pw_rng_int(r, -50, 50));
    for (int i = 0; i < NT * 128; i++) C[i] = (float)(ci[i] = pw_rng_int(r, -1000, 1000));
    float *dA = dev_copy(A, NT * 128), *dB = dev_copy(B, NT * 64), *dC = dev_copy(C, NT * 128);
    float *dD = dev_zero<float>(NT * 128), *dD4 = dev_zero<float>(NT * 128);
    mma_tf32<<<GRID, BLOCK>>>(dA, dB, dC, dD, dD4, NT);
    CHECK_LAUNCH();
    to_host(D, dD, NT * 128);
    to_host(D4, dD4, NT * 128);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                int s = ci[tl * 128 + m * 8 + n];
                for (int k = 0; k < 8; k++) s += ai[tl * 128 + m * 8 + k] * bi[tl * 64 + k * 8 + n];
                int o = tl * 128 + m * 8 + n;
                pw_expect(rep, D[o] == (float)s, "tf32 tile %d D[%d][%d] = %g, want %d", tl, m, n, D[o], s);
                int s4 = ci[tl * 128 + m * 8 + n];
                for (int k = 0; k < 4; k++) s4 += ai[tl * 128 + m * 8 + k] * bi[tl * 64 + k * 8 + n];
                pw_expect(rep, D4[o] == (float)s4, "tf32 k4 tile %d D[%d][%d] = %g, want %d", tl, m, n, D4[o], s4);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
    CHECK(cudaFree(dD4));
}

static void test_int8(pw_rng *r, pw_report *rep)
{
    static unsigned char A[NT * 512], Bt[NT * 256];
    static int C[NT * 128], Cbig[NT * 128], D[NT * 128], Dw[NT * 128], Ds[NT * 128], Du[NT * 128];
    for (int i = 0; i < NT * 512; i++) A[i] = (unsigned char)pw_rng_int(r, 0, 255);
    for (int i = 0; i < NT * 256; i++) Bt[i] = (unsigned char)pw_rng_int(r, 0, 255);
    for (int i = 0; i < NT * 128; i++) {
        C[i] = pw_rng_int(r, -100000, 100000);
        /* within 2^20 of either end of the s32 range: sums of 32 products
         * (|p| <= 2^14) overflow about half the time */
        int off = pw_rng_int(r, 0, 1 << 20);
        Cbig[i] = (i & 1) ? INT32_MAX - off : INT32_MIN + off;
    }
    unsigned char *dA = dev_copy(A, NT * 512), *dB = dev_copy(Bt, NT * 256);
    int *dC = dev_copy(C, NT * 128), *dCb = dev_copy(Cbig, NT * 128);
    int *dD = dev_zero<int>(NT * 128), *dDw = dev_zero<int>(NT * 128), *dDs = dev_zero<int>(NT * 128),
        *dDu = dev_zero<int>(NT * 128);
    mma_int8<<<GRID, BLOCK>>>(dA, dB, dC, dCb, dD, dDw, dDs, dDu, NT);
    CHECK_LAUNCH();
    to_host(D, dD, NT * 128);
    to_host(Dw, dDw, NT * 128);
    to_host(Ds, dDs, NT * 128);
    to_host(Du, dDu, NT * 128);
    int overflows = 0;
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                long long s = 0, su = 0;
                for (int k = 0; k < 32; k++) {
                    int b = (signed char)Bt[tl * 256 + n * 32 + k];
                    s += (long long)(signed char)A[tl * 512 + m * 32 + k] * b;
                    if (k < 16) su += (long long)A[tl * 512 + m * 32 + k] * b;
                }
                int o = tl * 128 + m * 8 + n;
                long long want = C[o] + s, big = (long long)Cbig[o] + s;
                long long sat = big > INT32_MAX ? INT32_MAX : big < INT32_MIN ? INT32_MIN : big;
                int wrap = (int)(uint32_t)(uint64_t)big;
                overflows += sat != big;
                pw_expect(rep, D[o] == want, "s8 tile %d D[%d][%d] = %d, want %lld", tl, m, n, D[o], want);
                pw_expect(rep, Dw[o] == wrap, "s8 wrap tile %d D[%d][%d] = %d, want %d", tl, m, n, Dw[o], wrap);
                pw_expect(rep, Ds[o] == sat, "s8 satfinite tile %d D[%d][%d] = %d, want %lld", tl, m, n, Ds[o], sat);
                pw_expect(rep, Du[o] == C[o] + su, "u8.s8 m16n8k16 tile %d D[%d][%d] = %d, want %lld", tl, m, n, Du[o],
                          C[o] + su);
            }
    pw_expect(rep, overflows > 0, "no overflowing .satfinite case among the inputs");
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dCb));
    CHECK(cudaFree(dD));
    CHECK(cudaFree(dDw));
    CHECK(cudaFree(dDs));
    CHECK(cudaFree(dDu));
}

static void test_f64(pw_rng *r, pw_report *rep)
{
    static double A[NT * 32], B[NT * 32], C[NT * 64], D[NT * 64];
    for (int i = 0; i < NT * 32; i++) A[i] = pw_rng_int(r, -1000, 1000);
    for (int i = 0; i < NT * 32; i++) B[i] = pw_rng_int(r, -1000, 1000);
    for (int i = 0; i < NT * 64; i++) C[i] = pw_rng_int(r, -1000000, 1000000);
    double *dA = dev_copy(A, NT * 32), *dB = dev_copy(B, NT * 32), *dC = dev_copy(C, NT * 64);
    double *dD = dev_zero<double>(NT * 64);
    mma_f64<<<GRID, BLOCK>>>(dA, dB, dC, dD, NT);
    CHECK_LAUNCH();
    to_host(D, dD, NT * 64);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 8; m++)
            for (int n = 0; n < 8; n++) {
                long long s = (long long)C[tl * 64 + m * 8 + n];
                for (int k = 0; k < 4; k++) s += (long long)A[tl * 32 + m * 4 + k] * (long long)B[tl * 32 + k * 8 + n];
                int o = tl * 64 + m * 8 + n;
                pw_expect(rep, D[o] == (double)s, "f64 tile %d D[%d][%d] = %g, want %lld", tl, m, n, D[o], s);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dD));
}

static void test_movmatrix(pw_rng *r, pw_report *rep)
{
    static unsigned short M[NT * 64];
    static unsigned out[NT * 32];
    for (int i = 0; i < NT * 64; i++) M[i] = (unsigned short)pw_rng_u32(r);
    unsigned short *dM = dev_copy(M, NT * 64);
    unsigned *dO = dev_zero<unsigned>(NT * 32);
    movmatrix_trans<<<GRID, BLOCK>>>(dM, dO, NT);
    CHECK_LAUNCH();
    to_host(out, dO, NT * 32);
    for (int tl = 0; tl < NT; tl++)
        for (int l = 0; l < 32; l++) {
            int g = l >> 2, t = l & 3;
            /* row g of the transpose: M[2t][g], M[2t+1][g] */
            unsigned want = M[tl * 64 + 2 * t * 8 + g] | (unsigned)M[tl * 64 + (2 * t + 1) * 8 + g] << 16;
            pw_expect(rep, out[tl * 32 + l] == want, "movmatrix tile %d lane %d: %08x, want %08x", tl, l,
                      out[tl * 32 + l], want);
        }
    CHECK(cudaFree(dM));
    CHECK(cudaFree(dO));
}

int main(void)
{
    pw_report rep = pw_report_start("mma");
    pw_rng r = pw_rng_seed(0x6d6d61);
    test_f16(&r, &rep);
    test_bf16(&r, &rep);
    test_tf32(&r, &rep);
    test_int8(&r, &rep);
    test_f64(&r, &rep);
    test_movmatrix(&r, &rep);
    return pw_finish(&rep);
}
