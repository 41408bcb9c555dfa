/*
 * mma_forms: the mma.sync forms beyond sm_80's m16n8 f16/bf16/tf32/s8 ones,
 * through inline PTX, bit for bit against a host reference.
 *
 *   m8n8k16       mma.m8n8k16.s32.s8.s8.s32 and .satfinite .u8.s8 (Turing's int8)
 *   s4            mma.m8n8k32.s32.s4.s4.s32 and mma.m16n8k64.satfinite.s32.u4.s4.s32
 *   b1            mma.m16n8k256.s32.b1.b1.s32 with .xor.popc and with .and.popc
 *   m8n8k4        Volta's mma.m8n8k4.row.col.f32.f16.f16.f32 (four 8x8x4 products,
 *                 one per quad-pair) and .col.row.f16.f16.f16.f16
 *
 * Fragment layouts are the PTX ISA's (9.7.14.5.1-13, "Matrix Fragments for
 * mma.mMnNkK"), written out here independently of ptxwave's tables; with
 * g = lane >> 2, t = lane & 3, h = lane >> 4:
 *   m8n8 C/D (s32):  c_i = C[g][2t + i];  m16n8: c_i = C[g + 8 (i >> 1)][2t + (i & 1)]
 *   m8n8k16 .s8:     A reg = bytes A[g][4t .. 4t+3]; B reg = bytes B[4t .. 4t+3][g]
 *   m8n8k32 .s4:     A reg = nibbles A[g][8t .. 8t+7]; B reg = nibbles B[8t .. 8t+7][g]
 *   m16n8k64 .s4:    A reg r = nibbles of row g + 8 (r & 1), k 8t + 32 (r >> 1) ..; B reg r: k 8t + 32 r ..
 *   m16n8k256 .b1:   A reg r = bits of row g + 8 (r & 1), k 32t + 128 (r >> 1) ..; B reg r: k 32t + 128 r ..
 *   m8n8k4 .f16:     quad-pair q = (lane >> 2) & 3; A .row: a_i = A[t + 4h][i], .col: A[i + 4h][t];
 *                    B .col: b_i = B[i][t + 4h], .row: B[t][i + 4h]; C .f16: c_i = C[t + 4h][i];
 *                    C .f32: c_i = C[(lane & 1) + (i & 2) + 4h][(i & 4) + (lane & 2) + (i & 1)]
 *
 * Integer sums are exact; the .satfinite forms take C near INT32_MAX /
 * INT32_MIN so that the clamp is reached.  The f16 inputs are small
 * integers, exact in f32 and f16 in any order.  Each warp computes its own
 * tile; an incomplete warp does nothing (.aligned).
 */
#include "check.h"

#include <cuda_fp16.h>

#define WARPS_PER_BLOCK 2
#define NT 4

/* ---- m8n8k16 .s8 / .u8 ---------------------------------------------------- */
/* A: 8 rows of 16 bytes; Bt: B transposed, 8 columns of 16 bytes; C, D: 8x8 */
__global__ void k_m8n8k16(const unsigned *A, const unsigned *Bt, const int *C, const int *Cbig, int *D, int *Dsat)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31, tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= NT) return;
    int g = lane >> 2, t = lane & 3;
    unsigned a = A[tile * 32 + g * 4 + t], b = Bt[tile * 32 + g * 4 + t];
    int c0 = C[tile * 64 + g * 8 + 2 * t], c1 = C[tile * 64 + g * 8 + 2 * t + 1];
    int cb0 = Cbig[tile * 64 + g * 8 + 2 * t], cb1 = Cbig[tile * 64 + g * 8 + 2 * t + 1], d0, d1, s0, s1;
    asm volatile("mma.sync.aligned.m8n8k16.row.col.s32.s8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=r"(d0), "=r"(d1) : "r"(a), "r"(b), "r"(c0), "r"(c1));
    asm volatile("mma.sync.aligned.m8n8k16.row.col.satfinite.s32.u8.s8.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=r"(s0), "=r"(s1) : "r"(a), "r"(b), "r"(cb0), "r"(cb1));
    D[tile * 64 + g * 8 + 2 * t] = d0, D[tile * 64 + g * 8 + 2 * t + 1] = d1;
    Dsat[tile * 64 + g * 8 + 2 * t] = s0, Dsat[tile * 64 + g * 8 + 2 * t + 1] = s1;
}

/* ---- .s4 / .u4 ------------------------------------------------------------- */
/* A8: 8 rows x 32 nibbles (4 words a row); B8t: 8 columns x 32; A16: 16 rows x 64
 * nibbles (8 words a row); B16t: 8 columns x 64 */
__global__ void k_s4(const unsigned *A8, const unsigned *B8t, const unsigned *A16, const unsigned *B16t, const int *C,
                     const int *Cbig, int *D8, int *D16)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31, tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= NT) return;
    int g = lane >> 2, t = lane & 3;
    unsigned a = A8[tile * 32 + g * 4 + t], b = B8t[tile * 32 + g * 4 + t], a4[4], b2[2];
    int c[4], cb[4], d8[2], d[4];
    for (int i = 0; i < 4; i++) {
        c[i] = C[tile * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
        cb[i] = Cbig[tile * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    }
    for (int r = 0; r < 4; r++) a4[r] = A16[tile * 128 + (g + 8 * (r & 1)) * 8 + t + 4 * (r >> 1)];
    for (int r = 0; r < 2; r++) b2[r] = B16t[tile * 64 + g * 8 + t + 4 * r];
    asm volatile("mma.sync.aligned.m8n8k32.row.col.s32.s4.s4.s32 {%0,%1}, {%2}, {%3}, {%4,%5};"
                 : "=r"(d8[0]), "=r"(d8[1]) : "r"(a), "r"(b), "r"(c[0]), "r"(c[1]));
    asm volatile("mma.sync.aligned.m16n8k64.row.col.satfinite.s32.u4.s4.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a4[0]), "r"(a4[1]), "r"(a4[2]), "r"(a4[3]), "r"(b2[0]), "r"(b2[1]), "r"(cb[0]), "r"(cb[1]),
                   "r"(cb[2]), "r"(cb[3]));
    for (int i = 0; i < 2; i++) D8[tile * 64 + g * 8 + 2 * t + i] = d8[i];
    for (int i = 0; i < 4; i++) D16[tile * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

/* ---- .b1 m16n8k256 ---------------------------------------------------------- */
/* A: 16 rows x 256 bits (8 words a row); Bt: 8 columns x 256 */
__global__ void k_b1(const unsigned *A, const unsigned *Bt, const int *C, int *Dx, int *Da)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31, tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= NT) return;
    int g = lane >> 2, t = lane & 3;
    unsigned a[4], b[2];
    int c[4], dx[4], da[4];
    for (int r = 0; r < 4; r++) a[r] = A[tile * 128 + (g + 8 * (r & 1)) * 8 + t + 4 * (r >> 1)];
    for (int r = 0; r < 2; r++) b[r] = Bt[tile * 64 + g * 8 + t + 4 * r];
    for (int i = 0; i < 4; i++) c[i] = C[tile * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.xor.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(dx[0]), "=r"(dx[1]), "=r"(dx[2]), "=r"(dx[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]),
                   "r"(c[3]));
    asm volatile("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};"
                 : "=r"(da[0]), "=r"(da[1]), "=r"(da[2]), "=r"(da[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]), "r"(c[2]),
                   "r"(c[3]));
    for (int i = 0; i < 4; i++) {
        int o = tile * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
        Dx[o] = dx[i], Da[o] = da[i];
    }
}

/* ---- Volta's m8n8k4 .f16 ------------------------------------------------------ */
/* per warp tile and quad-pair q: A[q] 8x4, B[q] 4x8, C[q] 8x8 (row-major) */
__global__ void k_m8n8k4(const __half *A, const __half *B, const float *C, const __half *C16, float *D, __half *D16)
{
    if ((threadIdx.x | 31) >= blockDim.x) return;
    int lane = threadIdx.x & 31, tile = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (tile >= NT) return;
    int q = (lane >> 2) & 3, t = lane & 3, h = lane >> 4, base = tile * 4 + q;
    A += base * 32, B += base * 32, C += base * 64, C16 += base * 64, D += base * 64, D16 += base * 64;
    __half ar[4], bc[4], ac[4], br[4];
    for (int i = 0; i < 4; i++) {
        ar[i] = A[(t + 4 * h) * 4 + i];   /* .row A */
        bc[i] = B[i * 8 + t + 4 * h];     /* .col B */
        ac[i] = A[(i + 4 * h) * 4 + t];   /* .col A */
        br[i] = B[t * 8 + i + 4 * h];     /* .row B */
    }
    unsigned a0 = __half_as_ushort(ar[0]) | (unsigned)__half_as_ushort(ar[1]) << 16;
    unsigned a1 = __half_as_ushort(ar[2]) | (unsigned)__half_as_ushort(ar[3]) << 16;
    unsigned b0 = __half_as_ushort(bc[0]) | (unsigned)__half_as_ushort(bc[1]) << 16;
    unsigned b1 = __half_as_ushort(bc[2]) | (unsigned)__half_as_ushort(bc[3]) << 16;
    float c[8], d[8];
    for (int i = 0; i < 8; i++) c[i] = C[((lane & 1) + (i & 2) + 4 * h) * 8 + (i & 4) + (lane & 2) + (i & 1)];
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f32.f16.f16.f32 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9}, {%10,%11}, "
                 "{%12,%13,%14,%15,%16,%17,%18,%19};"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7])
                 : "r"(a0), "r"(a1), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]), "f"(c[4]),
                   "f"(c[5]), "f"(c[6]), "f"(c[7]));
    for (int i = 0; i < 8; i++) D[((lane & 1) + (i & 2) + 4 * h) * 8 + (i & 4) + (lane & 2) + (i & 1)] = d[i];
    /* .col.row with .f16 C and D: c_i = C[t + 4h][i] */
    unsigned ca = __half_as_ushort(ac[0]) | (unsigned)__half_as_ushort(ac[1]) << 16;
    unsigned cb = __half_as_ushort(ac[2]) | (unsigned)__half_as_ushort(ac[3]) << 16;
    unsigned ra = __half_as_ushort(br[0]) | (unsigned)__half_as_ushort(br[1]) << 16;
    unsigned rb = __half_as_ushort(br[2]) | (unsigned)__half_as_ushort(br[3]) << 16;
    unsigned c16[4], d16[4];
    for (int j = 0; j < 4; j++)
        c16[j] = __half_as_ushort(C16[(t + 4 * h) * 8 + 2 * j]) |
                 (unsigned)__half_as_ushort(C16[(t + 4 * h) * 8 + 2 * j + 1]) << 16;
    asm volatile("mma.sync.aligned.m8n8k4.col.row.f16.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
                 : "=r"(d16[0]), "=r"(d16[1]), "=r"(d16[2]), "=r"(d16[3])
                 : "r"(ca), "r"(cb), "r"(ra), "r"(rb), "r"(c16[0]), "r"(c16[1]), "r"(c16[2]), "r"(c16[3]));
    for (int j = 0; j < 4; j++) {
        D16[(t + 4 * h) * 8 + 2 * j] = __ushort_as_half((unsigned short)(d16[j] & 0xffff));
        D16[(t + 4 * h) * 8 + 2 * j + 1] = __ushort_as_half((unsigned short)(d16[j] >> 16));
    }
}

/* ---- host ------------------------------------------------------------------ */
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

static const int GRID = NT / WARPS_PER_BLOCK, BLOCK = 32 * WARPS_PER_BLOCK;

/* element e (bits wide) of a packed row of words, as signed or unsigned */
static int elem(const unsigned *w, int e, int bits, int sgn)
{
    unsigned v = (w[e * bits / 32] >> (e * bits % 32)) & ((1u << bits) - 1);
    return sgn && (v >> (bits - 1)) ? (int)v - (1 << bits) : (int)v;
}
static int clamp32(long long s) { return s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : (int)s; }
/* C near INT32_MAX or INT32_MIN half the time (the clamp reached), small otherwise */
static int big(pw_rng *r)
{
    int k = pw_rng_int(r, 0, 3);
    return k == 0 ? INT32_MAX - pw_rng_int(r, 0, 50) : k == 1 ? INT32_MIN + pw_rng_int(r, 0, 50) : pw_rng_int(r, -1000, 1000);
}

static void test_m8n8k16(pw_rng *r, pw_report *rep)
{
    static unsigned A[NT * 32], Bt[NT * 32];
    static int C[NT * 64], Cb[NT * 64], D[NT * 64], Ds[NT * 64];
    for (int i = 0; i < NT * 32; i++) A[i] = pw_rng_u32(r), Bt[i] = pw_rng_u32(r);
    for (int i = 0; i < NT * 64; i++) C[i] = (int)pw_rng_u32(r), Cb[i] = big(r);
    unsigned *dA = dev_copy(A, NT * 32), *dB = dev_copy(Bt, NT * 32);
    int *dC = dev_copy(C, NT * 64), *dCb = dev_copy(Cb, NT * 64), *dD = dev_zero<int>(NT * 64), *dDs = dev_zero<int>(NT * 64);
    k_m8n8k16<<<GRID, BLOCK>>>(dA, dB, dC, dCb, dD, dDs);
    CHECK_LAUNCH();
    to_host(D, dD, NT * 64);
    to_host(Ds, dDs, NT * 64);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 8; m++)
            for (int n = 0; n < 8; n++) {
                long long s = 0, su = 0;
                for (int k = 0; k < 16; k++) {
                    int b = elem(&Bt[tl * 32 + n * 4], k, 8, 1);
                    s += (long long)elem(&A[tl * 32 + m * 4], k, 8, 1) * b;
                    su += (long long)elem(&A[tl * 32 + m * 4], k, 8, 0) * b;
                }
                int o = tl * 64 + m * 8 + n;
                int want = (int)(unsigned)((unsigned)C[o] + (unsigned)s), wsat = clamp32(Cb[o] + su);
                pw_expect(rep, D[o] == want, "m8n8k16 s8 tile %d D[%d][%d] = %d, want %d", tl, m, n, D[o], want);
                pw_expect(rep, Ds[o] == wsat, "m8n8k16 .satfinite u8.s8 tile %d D[%d][%d] = %d, want %d", tl, m, n,
                          Ds[o], wsat);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dCb));
    CHECK(cudaFree(dD));
    CHECK(cudaFree(dDs));
}

static void test_s4(pw_rng *r, pw_report *rep)
{
    static unsigned A8[NT * 32], B8[NT * 32], A16[NT * 128], B16[NT * 64];
    static int C[NT * 128], Cb[NT * 128], D8[NT * 64], D16[NT * 128];
    for (int i = 0; i < NT * 32; i++) A8[i] = pw_rng_u32(r), B8[i] = pw_rng_u32(r);
    for (int i = 0; i < NT * 128; i++) A16[i] = pw_rng_u32(r), C[i] = (int)pw_rng_u32(r), Cb[i] = big(r);
    for (int i = 0; i < NT * 64; i++) B16[i] = pw_rng_u32(r);
    unsigned *dA8 = dev_copy(A8, NT * 32), *dB8 = dev_copy(B8, NT * 32), *dA16 = dev_copy(A16, NT * 128),
             *dB16 = dev_copy(B16, NT * 64);
    int *dC = dev_copy(C, NT * 128), *dCb = dev_copy(Cb, NT * 128), *dD8 = dev_zero<int>(NT * 64),
        *dD16 = dev_zero<int>(NT * 128);
    k_s4<<<GRID, BLOCK>>>(dA8, dB8, dA16, dB16, dC, dCb, dD8, dD16);
    CHECK_LAUNCH();
    to_host(D8, dD8, NT * 64);
    to_host(D16, dD16, NT * 128);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                if (m < 8) {
                    long long s = 0;
                    for (int k = 0; k < 32; k++)
                        s += (long long)elem(&A8[tl * 32 + m * 4], k, 4, 1) * elem(&B8[tl * 32 + n * 4], k, 4, 1);
                    int want = (int)(unsigned)((unsigned)C[tl * 128 + m * 8 + n] + (unsigned)s);
                    int got = D8[tl * 64 + m * 8 + n];
                    pw_expect(rep, got == want, "m8n8k32 s4 tile %d D[%d][%d] = %d, want %d", tl, m, n, got, want);
                }
                long long s = 0;
                for (int k = 0; k < 64; k++)
                    s += (long long)elem(&A16[tl * 128 + m * 8], k, 4, 0) * elem(&B16[tl * 64 + n * 8], k, 4, 1);
                int o = tl * 128 + m * 8 + n, want = clamp32(Cb[o] + s);
                pw_expect(rep, D16[o] == want, "m16n8k64 .satfinite u4.s4 tile %d D[%d][%d] = %d, want %d", tl, m, n,
                          D16[o], want);
            }
    CHECK(cudaFree(dA8));
    CHECK(cudaFree(dB8));
    CHECK(cudaFree(dA16));
    CHECK(cudaFree(dB16));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dCb));
    CHECK(cudaFree(dD8));
    CHECK(cudaFree(dD16));
}

static void test_b1(pw_rng *r, pw_report *rep)
{
    static unsigned A[NT * 128], Bt[NT * 64];
    static int C[NT * 128], Dx[NT * 128], Da[NT * 128];
    for (int i = 0; i < NT * 128; i++) A[i] = pw_rng_u32(r), C[i] = pw_rng_int(r, -1000, 1000);
    for (int i = 0; i < NT * 64; i++) Bt[i] = pw_rng_u32(r);
    unsigned *dA = dev_copy(A, NT * 128), *dB = dev_copy(Bt, NT * 64);
    int *dC = dev_copy(C, NT * 128), *dDx = dev_zero<int>(NT * 128), *dDa = dev_zero<int>(NT * 128);
    k_b1<<<GRID, BLOCK>>>(dA, dB, dC, dDx, dDa);
    CHECK_LAUNCH();
    to_host(Dx, dDx, NT * 128);
    to_host(Da, dDa, NT * 128);
    for (int tl = 0; tl < NT; tl++)
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                int o = tl * 128 + m * 8 + n, sx = C[o], sa = C[o];
                for (int k = 0; k < 256; k++) {
                    int a = elem(&A[tl * 128 + m * 8], k, 1, 0), b = elem(&Bt[tl * 64 + n * 8], k, 1, 0);
                    sx += a ^ b, sa += a & b;
                }
                pw_expect(rep, Dx[o] == sx, "b1 .xor.popc tile %d D[%d][%d] = %d, want %d", tl, m, n, Dx[o], sx);
                pw_expect(rep, Da[o] == sa, "b1 .and.popc tile %d D[%d][%d] = %d, want %d", tl, m, n, Da[o], sa);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dDx));
    CHECK(cudaFree(dDa));
}

static void test_m8n8k4(pw_rng *r, pw_report *rep)
{
    const int NQ = NT * 4;   /* quad-pairs */
    static int ai[NQ * 32], bi[NQ * 32], ci[NQ * 64];
    static __half A[NQ * 32], B[NQ * 32], C16[NQ * 64], D16[NQ * 64];
    static float C[NQ * 64], D[NQ * 64];
    for (int i = 0; i < NQ * 32; i++) {
        A[i] = __int2half_rn(ai[i] = pw_rng_int(r, -4, 4));
        B[i] = __int2half_rn(bi[i] = pw_rng_int(r, -4, 4));
    }
    for (int i = 0; i < NQ * 64; i++) C[i] = (float)(ci[i] = pw_rng_int(r, -100, 100)), C16[i] = __int2half_rn(ci[i]);
    __half *dA = dev_copy(A, NQ * 32), *dB = dev_copy(B, NQ * 32), *dC16 = dev_copy(C16, NQ * 64),
           *dD16 = dev_zero<__half>(NQ * 64);
    float *dC = dev_copy(C, NQ * 64), *dD = dev_zero<float>(NQ * 64);
    k_m8n8k4<<<GRID, BLOCK>>>(dA, dB, dC, dC16, dD, dD16);
    CHECK_LAUNCH();
    to_host(D, dD, NQ * 64);
    to_host(D16, dD16, NQ * 64);
    for (int qp = 0; qp < NQ; qp++)
        for (int m = 0; m < 8; m++)
            for (int n = 0; n < 8; n++) {
                int s = ci[qp * 64 + m * 8 + n];
                for (int k = 0; k < 4; k++) s += ai[qp * 32 + m * 4 + k] * bi[qp * 32 + k * 8 + n];
                int o = qp * 64 + m * 8 + n;
                pw_expect(rep, D[o] == (float)s, "m8n8k4 .f32 quad-pair %d D[%d][%d] = %g, want %d", qp, m, n, D[o], s);
                pw_expect(rep, __half2float(D16[o]) == (float)s, "m8n8k4 .f16 quad-pair %d D[%d][%d] = %g, want %d",
                          qp, m, n, __half2float(D16[o]), s);
            }
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
    CHECK(cudaFree(dC16));
    CHECK(cudaFree(dD));
    CHECK(cudaFree(dD16));
}

int main(void)
{
    pw_report rep = pw_report_start("mma_forms");
    pw_rng r = pw_rng_seed(0x6d6d6166);
    test_m8n8k16(&r, &rep);
    test_s4(&r, &rep);
    test_b1(&r, &rep);
    test_m8n8k4(&r, &rep);
    return pw_finish(&rep);
}
