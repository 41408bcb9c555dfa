/*
 * mma_f8f6f4: sm_120a's mma.sync kinds through inline PTX, bit for bit.
 *
 *   D0  mma.m16n8k32.kind::f8f6f4.f32.e2m1.e3m2.f32
 *   D1  mma.m16n8k32.kind::f8f6f4.f32.e2m3.e4m3.f32
 *   D2  mma.m16n8k32.kind::f8f6f4.f32.e5m2.e2m1.f32
 *   D3  mma.m16n8k32.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e2m1.f32.ue8m0
 *       selectors {1, 1} (A) and {2, 3} (B)
 *   D4  mma.m16n8k64.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0,
 *       selectors {2, 0}, {0, 1}
 *   D5  mma.m16n8k64.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3,
 *       selectors {0, 1}, {0, 2}
 *
 * Fragments as the PTX ISA draws them (9.7.14.5.10, 9.7.14.5.12), with
 * g = lane >> 2, t = lane & 3, written out here independently of ptxwave's
 * tables: m16n8k32 A reg r = the 4 bytes of row g + 8 (r & 1), columns
 * 4t + 16 (r >> 1) ..; B reg r = column g, rows 4t + 16 r ..; m16n8k64 (8
 * nibbles a register, the low nibble first) A reg r = row g + 8 (r & 1),
 * columns 8t + 32 (r >> 1) ..; B reg r = column g, rows 8t + 32 r ..; C/D
 * c_i at row g + 8 (i >> 1), column 2t + (i & 1).  An fp6 value sits in
 * bits 5..0 of its byte, an fp4 one in bits 5..2.  Block scaling (9.7.14.3):
 * D = C + sum over blocks j of SF_A[m][j] SF_B[j][n] (sum over the block of
 * a b), SF_A[m][j] byte (byte-id-a + j) of scale-a-data in lane
 * 4 (m & 7) + 2 thread-id-a + (m >> 3), SF_B[j][n] byte (byte-id-b + j) of
 * scale-b-data in lane 4 n + thread-id-b.
 *
 * The formats are decoded on the host from their definitions (sign,
 * exponent, mantissa, bias; no infinity or NaN in the inputs), and the
 * inputs keep every sum exact in f32 (short values, power-of-two scales),
 * so the result does not depend on the order or the precision of the
 * hardware's accumulation, which the ISA leaves open.
 */
#include "check.h"

#include <math.h>

#define NFORMS 6

__global__ void mma_kinds(const unsigned *A, const unsigned *B, const float *C, const unsigned *S, float *D)
{
    unsigned lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    if (threadIdx.x >= 32)
        return;
    float c[4];
    for (int i = 0; i < 4; i++)
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
    unsigned sa = S[lane], sb = S[32 + lane], sa4 = S[64 + lane], sb4 = S[96 + lane];
    for (int f = 0; f < NFORMS; f++) {
        /* A: 16 rows of 32 bytes = 8 words a row; B^T: 8 rows of 8 words */
        const unsigned *a = A + f * 128, *b = B + f * 64;
        unsigned a0 = a[g * 8 + t], a1 = a[(g + 8) * 8 + t], a2 = a[g * 8 + 4 + t], a3 = a[(g + 8) * 8 + 4 + t];
        unsigned b0 = b[g * 8 + t], b1 = b[g * 8 + 4 + t];
        float d[4];
#if defined(__CUDA_ARCH__)
        switch (f) {
        case 0:
            asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                         : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
            break;
        case 1:
            asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m3.e4m3.f32 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                         : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
            break;
        case 2:
            asm volatile("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e5m2.e2m1.f32 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
                         : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
            break;
        case 3:
            asm volatile("mma.sync.aligned.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e2m3.e2m1.f32.ue8m0 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13}, %14, {1, 1}, %15, {2, 3};"
                         : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]),
                           "r"(sa), "r"(sb));
            break;
        case 4: {
            /* the selectors from registers, as CUTLASS passes them ("h") */
            unsigned short bida = 2, tida = 0, bidb = 0, tidb = 1;
            asm volatile("mma.sync.aligned.kind::mxf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue8m0 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13}, %14, {%15, %16}, %17, {%18, %19};"
                         : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]),
                           "r"(sa), "h"(bida), "h"(tida), "r"(sb), "h"(bidb), "h"(tidb));
            break;
        }
        default:
            asm volatile("mma.sync.aligned.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32.ue4m3 "
                         "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13}, %14, {0, 1}, %15, {0, 2};"
                         : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
                         : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]),
                           "r"(sa4), "r"(sb4));
            break;
        }
#endif
        for (int i = 0; i < 4; i++)
            D[f * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
    }
}

/* ---- the host reference ---------------------------------------------------- */
/* A small float of e exponent and m mantissa bits (bias b), its sign above them. */
static double decode(unsigned v, int e, int m, int bias)
{
    int s = (v >> (e + m)) & 1, ex = (v >> m) & ((1 << e) - 1), man = v & ((1 << m) - 1);
    double x = ex ? ldexp(1.0 + man / (double)(1 << m), ex - bias) : ldexp(man / (double)(1 << m), 1 - bias);
    return s ? -x : x;
}
enum { E4M3, E5M2, E3M2, E2M3, E2M1 };
/* A byte of .kind::f8f6f4: fp6 in bits 5..0, fp4 in bits 5..2. */
static double byte_value(int type, unsigned b)
{
    switch (type) {
    case E4M3: return decode(b, 4, 3, 7);
    case E5M2: return decode(b, 5, 2, 15);
    case E3M2: return decode(b & 0x3f, 3, 2, 3);
    case E2M3: return decode(b & 0x3f, 2, 3, 1);
    default: return decode((b >> 2) & 0xf, 2, 1, 1);
    }
}
/* A random byte of type whose value keeps the sums exact. */
static unsigned char rand_byte(pw_rng *r, int type)
{
    unsigned x = pw_rng_u32(r);
    switch (type) {
    case E4M3: return (unsigned char)(x & 0xbf);          /* below 2 */
    case E5M2: return (unsigned char)((x & 0x87) | 0x38); /* 0.5 .. 1.75 */
    case E3M2: case E2M3: return (unsigned char)(x & 0x3f);
    default: return (unsigned char)(x & 0x3c);
    }
}

int main(void)
{
    pw_report rep = pw_report_start("mma_f8f6f4");
    pw_rng r = pw_rng_seed(0xf8f6f4);
    static const int ta[NFORMS] = {E2M1, E2M3, E5M2, E2M3, -1, -1}, tb[NFORMS] = {E3M2, E4M3, E2M1, E2M1, -1, -1};
    static unsigned char A[NFORMS * 512], B[NFORMS * 256];
    static float C[128], D[NFORMS * 128];
    static unsigned S[128];
    for (int f = 0; f < NFORMS; f++) {
        for (int i = 0; i < 512; i++)
            A[f * 512 + i] = ta[f] < 0 ? (unsigned char)pw_rng_u32(&r) : rand_byte(&r, ta[f]);
        for (int i = 0; i < 256; i++)
            B[f * 256 + i] = tb[f] < 0 ? (unsigned char)pw_rng_u32(&r) : rand_byte(&r, tb[f]);
    }
    for (int i = 0; i < 128; i++)
        C[i] = (float)pw_rng_int(&r, -100, 100);
    for (int i = 0; i < 128; i++) {
        unsigned w = 0;
        for (int k = 0; k < 4; k++) {
            unsigned x = pw_rng_u32(&r);
            /* ue8m0 2^-2 .. 2^1; ue4m3 0.5, 1, 1.5, 2 */
            unsigned byte = i < 64 ? 125 + (x & 3) : (0x30 + 4 * (x & 3)) & 0xff;
            w |= byte << (8 * k);
        }
        S[i] = w;
    }
    unsigned *dA, *dB, *dS;
    float *dC, *dD;
    CHECK(cudaMalloc(&dA, sizeof A));
    CHECK(cudaMalloc(&dB, sizeof B));
    CHECK(cudaMalloc(&dC, sizeof C));
    CHECK(cudaMalloc(&dS, sizeof S));
    CHECK(cudaMalloc(&dD, sizeof D));
    CHECK(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dC, C, sizeof C, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dS, S, sizeof S, cudaMemcpyHostToDevice));
    mma_kinds<<<1, 32>>>(dA, dB, dC, dS, dD);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(D, dD, sizeof D, cudaMemcpyDeviceToHost));

    /* the scaled forms: vec blocks, selectors, scale words (A's, B's) and type */
    static const int vec[NFORMS] = {0, 0, 0, 1, 2, 4}, bida[NFORMS] = {0, 0, 0, 1, 2, 0}, tida[NFORMS] = {0, 0, 0, 1, 0, 1},
                     bidb[NFORMS] = {0, 0, 0, 2, 0, 0}, tidb[NFORMS] = {0, 0, 0, 3, 1, 2};
    for (int f = 0; f < NFORMS; f++) {
        int K = f >= 4 ? 64 : 32;
        const unsigned char *a = A + f * 512, *bt = B + f * 256;
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                double acc = C[m * 8 + n];
                int nb = vec[f] ? vec[f] : 1, bk = K / nb;
                for (int j = 0; j < nb; j++) {
                    double p = 0;
                    for (int k = j * bk; k < (j + 1) * bk; k++) {
                        double x, y;
                        if (K == 64) { /* nibbles, the low one first */
                            x = decode((a[m * 32 + k / 2] >> (4 * (k & 1))) & 0xf, 2, 1, 1);
                            y = decode((bt[n * 32 + k / 2] >> (4 * (k & 1))) & 0xf, 2, 1, 1);
                        } else {
                            x = byte_value(ta[f], a[m * 32 + k]);
                            y = byte_value(tb[f], bt[n * 32 + k]);
                        }
                        p += x * y;
                    }
                    if (vec[f]) {
                        unsigned wa = S[(f == 5 ? 64 : 0) + 4 * (m & 7) + 2 * tida[f] + (m >> 3)];
                        unsigned wb = S[(f == 5 ? 96 : 32) + 4 * n + tidb[f]];
                        unsigned ea = (wa >> (8 * (bida[f] + j))) & 0xff, eb = (wb >> (8 * (bidb[f] + j))) & 0xff;
                        double sa = f == 5 ? decode(ea & 0x7f, 4, 3, 7) : ldexp(1.0, (int)ea - 127);
                        double sb = f == 5 ? decode(eb & 0x7f, 4, 3, 7) : ldexp(1.0, (int)eb - 127);
                        p *= sa * sb;
                    }
                    acc += p;
                }
                float want = (float)acc;
                pw_expect(&rep, (double)want == acc, "form %d D[%d][%d]: the reference sum %.17g is not exact in f32", f, m, n, acc);
                pw_expect(&rep, f2u(D[f * 128 + m * 8 + n]) == f2u(want), "form %d D[%d][%d] = %.9g, want %.9g", f, m, n,
                          D[f * 128 + m * 8 + n], want);
            }
    }
    return pw_finish(&rep);
}
