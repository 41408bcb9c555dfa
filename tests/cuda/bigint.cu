/*
 * bigint: multi-word integer arithmetic through the carry flag (CC.CF).
 *
 * Inline PTX, so that the exact carry instructions appear (one asm block per
 * chain: the carry flag does not survive between asm statements):
 *  - add256 / sub256: 8-word chains add.cc.u32, addc.cc.u32 x6, addc.cc.u32,
 *    then addc.u32 d, 0, 0 to read the carry out; the same with sub.cc /
 *    subc.cc / subc (a borrow reads back as 0xffffffff).
 *  - add256_u64: the same sum as 4-word chains of add.cc.u64 / addc.cc.u64 /
 *    addc.u64.
 *  - mul128: 4x4-word schoolbook product into 8 words with mad.lo.cc.u32,
 *    madc.lo.cc.u32, addc.u32 and mad.hi.cc.u32, madc.hi.cc.u32,
 *    madc.hi.u32: for each b[i], the low halves of a*b[i] are added into
 *    r[i..i+3] with the carry into r[i+4], then the high halves into
 *    r[i+1..i+4].  The last madc.hi cannot carry out: after row i the value
 *    is below 2^(32(i+5)).
 *  - warp_add1024: one warp adds two 1024-bit numbers, one 32-bit limb per
 *    lane, with carry lookahead by ballot: G = lanes that generate a carry
 *    (s < a), P = lanes that propagate (s == ~0); the carries into the lanes
 *    are the carries of the integer addition G + (G | P), i.e.
 *    (G + (G|P)) ^ G ^ (G|P), and its carry out of bit 31 is the carry out
 *    of the whole number.
 * Edge cases: operands of all-ones and zeros (carry through every word).
 */
#include "check.h"

#define FULL 0xffffffffu

#ifdef PTXWAVE_NATIVE
/* Native twins for benchmarks/quality_bench.py (the macro is only defined
 * by benchmarks/native/cuda_on_hip.h): the same carry chains with clang's
 * __builtin_addc / __builtin_subc (llvm.uadd/usub.with.overflow: AMDGPU's
 * v_add_co / v_addc_co), word by word as the PTX ISA defines add.cc /
 * addc.cc / sub.cc / subc.cc (CC.CF in and out; a borrow read back by
 * subc.u32 d, 0, 0 is 0 - 0 - CF = 0xffffffff), and mad.lo.cc / madc.lo.cc /
 * mad.hi.cc / madc.hi (the low or high half of the 64-bit product added
 * with the carry). */
__device__ void add256(const unsigned *a, const unsigned *b, unsigned *r, unsigned *carry)
{
    unsigned c = 0;
    for (int k = 0; k < 8; k++)
        r[k] = __builtin_addc(a[k], b[k], c, &c);
    *carry = c;
}

__device__ void sub256(const unsigned *a, const unsigned *b, unsigned *r, unsigned *borrow)
{
    unsigned c = 0;
    for (int k = 0; k < 8; k++)
        r[k] = __builtin_subc(a[k], b[k], c, &c);
    *borrow = 0u - c;
}

__device__ void add256_u64(const unsigned long long *a, const unsigned long long *b, unsigned long long *r,
                           unsigned long long *carry)
{
    unsigned long long c = 0;
    for (int k = 0; k < 4; k++)
        r[k] = __builtin_addcll(a[k], b[k], c, &c);
    *carry = c;
}

__device__ void mul128(const unsigned *a, const unsigned *b, unsigned *r)
{
    unsigned w[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        unsigned c = 0;
        for (int j = 0; j < 4; j++) /* mad.lo.cc, madc.lo.cc x3 */
            w[i + j] = __builtin_addc(a[j] * b[i], w[i + j], c, &c);
        w[i + 4] += c; /* addc.u32 R4, R4, 0 */
        c = 0;
        for (int j = 0; j < 3; j++) /* mad.hi.cc, madc.hi.cc x2 */
            w[i + 1 + j] = __builtin_addc(__umulhi(a[j], b[i]), w[i + 1 + j], c, &c);
        w[i + 4] = __umulhi(a[3], b[i]) + w[i + 4] + c; /* madc.hi.u32 */
    }
    for (int k = 0; k < 8; k++)
        r[k] = w[k];
}
#else
__device__ void add256(const unsigned *a, const unsigned *b, unsigned *r, unsigned *carry)
{
    asm("add.cc.u32  %0, %9, %17;\n\t"
        "addc.cc.u32 %1, %10, %18;\n\t"
        "addc.cc.u32 %2, %11, %19;\n\t"
        "addc.cc.u32 %3, %12, %20;\n\t"
        "addc.cc.u32 %4, %13, %21;\n\t"
        "addc.cc.u32 %5, %14, %22;\n\t"
        "addc.cc.u32 %6, %15, %23;\n\t"
        "addc.cc.u32 %7, %16, %24;\n\t"
        "addc.u32    %8, 0, 0;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(*carry)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]), "r"(b[0]),
          "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(b[4]), "r"(b[5]), "r"(b[6]), "r"(b[7]));
}

__device__ void sub256(const unsigned *a, const unsigned *b, unsigned *r, unsigned *borrow)
{
    asm("sub.cc.u32  %0, %9, %17;\n\t"
        "subc.cc.u32 %1, %10, %18;\n\t"
        "subc.cc.u32 %2, %11, %19;\n\t"
        "subc.cc.u32 %3, %12, %20;\n\t"
        "subc.cc.u32 %4, %13, %21;\n\t"
        "subc.cc.u32 %5, %14, %22;\n\t"
        "subc.cc.u32 %6, %15, %23;\n\t"
        "subc.cc.u32 %7, %16, %24;\n\t"
        "subc.u32    %8, 0, 0;"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]), "=r"(r[4]), "=r"(r[5]), "=r"(r[6]), "=r"(r[7]),
          "=r"(*borrow)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(a[4]), "r"(a[5]), "r"(a[6]), "r"(a[7]), "r"(b[0]),
          "r"(b[1]), "r"(b[2]), "r"(b[3]), "r"(b[4]), "r"(b[5]), "r"(b[6]), "r"(b[7]));
}

__device__ void add256_u64(const unsigned long long *a, const unsigned long long *b, unsigned long long *r,
                           unsigned long long *carry)
{
    asm("add.cc.u64  %0, %5, %9;\n\t"
        "addc.cc.u64 %1, %6, %10;\n\t"
        "addc.cc.u64 %2, %7, %11;\n\t"
        "addc.cc.u64 %3, %8, %12;\n\t"
        "addc.u64    %4, 0, 0;"
        : "=l"(r[0]), "=l"(r[1]), "=l"(r[2]), "=l"(r[3]), "=l"(*carry)
        : "l"(a[0]), "l"(a[1]), "l"(a[2]), "l"(a[3]), "l"(b[0]), "l"(b[1]), "l"(b[2]), "l"(b[3]));
}

/* r[R0..R4] += a[0..3] * B, see the file comment */
#define MUL_ROW(R0, R1, R2, R3, R4, B)                     \
    "mad.lo.cc.u32  " R0 ", %8, " B ", " R0 ";\n\t"         \
    "madc.lo.cc.u32 " R1 ", %9, " B ", " R1 ";\n\t"         \
    "madc.lo.cc.u32 " R2 ", %10, " B ", " R2 ";\n\t"        \
    "madc.lo.cc.u32 " R3 ", %11, " B ", " R3 ";\n\t"        \
    "addc.u32       " R4 ", " R4 ", 0;\n\t"                 \
    "mad.hi.cc.u32  " R1 ", %8, " B ", " R1 ";\n\t"         \
    "madc.hi.cc.u32 " R2 ", %9, " B ", " R2 ";\n\t"         \
    "madc.hi.cc.u32 " R3 ", %10, " B ", " R3 ";\n\t"        \
    "madc.hi.u32    " R4 ", %11, " B ", " R4 ";\n\t"

__device__ void mul128(const unsigned *a, const unsigned *b, unsigned *r)
{
    unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0, r4 = 0, r5 = 0, r6 = 0, r7 = 0;
    asm(MUL_ROW("%0", "%1", "%2", "%3", "%4", "%12")
        MUL_ROW("%1", "%2", "%3", "%4", "%5", "%13")
        MUL_ROW("%2", "%3", "%4", "%5", "%6", "%14")
        MUL_ROW("%3", "%4", "%5", "%6", "%7", "%15")
        : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5), "+r"(r6), "+r"(r7)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(b[2]), "r"(b[3]));
    r[0] = r0; r[1] = r1; r[2] = r2; r[3] = r3;
    r[4] = r4; r[5] = r5; r[6] = r6; r[7] = r7;
}
#endif

/* per thread: a, b (8 words each) -> sum (8) + carry, diff (8) + borrow,
 * sum64 (4 x u64) + carry64, product of the low 4 words (8) */
__global__ void bigint_ops(const unsigned *A, const unsigned *B, unsigned *sum, unsigned *carry, unsigned *diff,
                           unsigned *borrow, unsigned long long *sum64, unsigned long long *carry64, unsigned *prod,
                           int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n)
        return;
    unsigned a[8], b[8], r[8], c;
    for (int k = 0; k < 8; k++) {
        a[k] = A[t * 8 + k];
        b[k] = B[t * 8 + k];
    }
    add256(a, b, r, &c);
    for (int k = 0; k < 8; k++)
        sum[t * 8 + k] = r[k];
    carry[t] = c;
    sub256(a, b, r, &c);
    for (int k = 0; k < 8; k++)
        diff[t * 8 + k] = r[k];
    borrow[t] = c;
    unsigned long long a64[4], b64[4], r64[4], c64;
    for (int k = 0; k < 4; k++) {
        a64[k] = (unsigned long long)a[2 * k] | (unsigned long long)a[2 * k + 1] << 32;
        b64[k] = (unsigned long long)b[2 * k] | (unsigned long long)b[2 * k + 1] << 32;
    }
    add256_u64(a64, b64, r64, &c64);
    for (int k = 0; k < 4; k++)
        sum64[t * 4 + k] = r64[k];
    carry64[t] = c64;
    mul128(a, b, r);
    for (int k = 0; k < 8; k++)
        prod[t * 8 + k] = r[k];
}

/* one warp per 1024-bit addition; limbs[lane] */
__global__ void warp_add1024(const unsigned *A, const unsigned *B, unsigned *S, unsigned *carry_out)
{
    int w = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    unsigned a = A[w * 32 + lane], b = B[w * 32 + lane];
    unsigned s = a + b;
    unsigned G = __ballot_sync(FULL, s < a);
    unsigned P = __ballot_sync(FULL, s == 0xffffffffu);
    unsigned long long x = G, y = G | P;
    unsigned long long total = x + y;
    unsigned carries_in = (unsigned)(total ^ x ^ y);
    S[w * 32 + lane] = s + ((carries_in >> lane) & 1u);
    if (lane == 0)
        carry_out[w] = (unsigned)(total >> 32);
}

int main(void)
{
    pw_report rep = pw_report_start("bigint");
    pw_rng rng = pw_rng_seed(14);
    const int n = 500, bs = 96;
    unsigned *A = (unsigned *)malloc(n * 8 * 4), *B = (unsigned *)malloc(n * 8 * 4);
    for (int t = 0; t < n; t++)
        for (int k = 0; k < 8; k++) {
            unsigned r = pw_rng_u32(&rng);
            switch (t % 8) {
            case 0: A[t * 8 + k] = 0xffffffffu; B[t * 8 + k] = k == 0 ? 1u : 0u; break;   /* carry ripples */
            case 1: A[t * 8 + k] = 0; B[t * 8 + k] = k == 0 ? 1u : 0u; break;             /* borrow ripples */
            case 2: A[t * 8 + k] = 0xffffffffu; B[t * 8 + k] = 0xffffffffu; break;
            case 3: A[t * 8 + k] = r; B[t * 8 + k] = r; break;                            /* a - a = 0 */
            case 4: A[t * 8 + k] = r; B[t * 8 + k] = ~r; break;                           /* a + ~a = ~0 */
            default: A[t * 8 + k] = r; B[t * 8 + k] = pw_rng_u32(&rng); break;
            }
        }
    unsigned *dA, *dB, *dsum, *dcarry, *ddiff, *dborrow, *dprod;
    unsigned long long *dsum64, *dcarry64;
    CHECK(cudaMalloc(&dA, n * 32));
    CHECK(cudaMalloc(&dB, n * 32));
    CHECK(cudaMalloc(&dsum, n * 32));
    CHECK(cudaMalloc(&dcarry, n * 4));
    CHECK(cudaMalloc(&ddiff, n * 32));
    CHECK(cudaMalloc(&dborrow, n * 4));
    CHECK(cudaMalloc(&dsum64, n * 32));
    CHECK(cudaMalloc(&dcarry64, n * 8));
    CHECK(cudaMalloc(&dprod, n * 32));
    CHECK(cudaMemcpy(dA, A, n * 32, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, n * 32, cudaMemcpyHostToDevice));
    bigint_ops<<<PW_DIV_UP(n, bs), bs>>>(dA, dB, dsum, dcarry, ddiff, dborrow, dsum64, dcarry64, dprod, n);
    CHECK_LAUNCH();
    unsigned *sum = (unsigned *)malloc(n * 32), *carry = (unsigned *)malloc(n * 4);
    unsigned *diff = (unsigned *)malloc(n * 32), *borrow = (unsigned *)malloc(n * 4);
    unsigned long long *sum64 = (unsigned long long *)malloc(n * 32), *carry64 = (unsigned long long *)malloc(n * 8);
    unsigned *prod = (unsigned *)malloc(n * 32);
    CHECK(cudaMemcpy(sum, dsum, n * 32, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(carry, dcarry, n * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(diff, ddiff, n * 32, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(borrow, dborrow, n * 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(sum64, dsum64, n * 32, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(carry64, dcarry64, n * 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(prod, dprod, n * 32, cudaMemcpyDeviceToHost));

    for (int t = 0; t < n; t++) {
        const unsigned *a = A + t * 8, *b = B + t * 8;
        uint64_t c = 0, br = 0;
        for (int k = 0; k < 8; k++) {
            uint64_t s = (uint64_t)a[k] + b[k] + c;
            c = s >> 32;
            pw_expect(&rep, sum[t * 8 + k] == (uint32_t)s, "t=%d sum[%d]=%08x want %08x", t, k, sum[t * 8 + k], (uint32_t)s);
            pw_expect(&rep, (uint32_t)(sum64[t * 4 + k / 2] >> (32 * (k & 1))) == (uint32_t)s, "t=%d sum64 word %d", t, k);
            uint64_t d = (uint64_t)a[k] - b[k] - br;
            br = (d >> 32) & 1; /* borrow: the 64-bit difference went negative */
            pw_expect(&rep, diff[t * 8 + k] == (uint32_t)d, "t=%d diff[%d]=%08x want %08x", t, k, diff[t * 8 + k], (uint32_t)d);
        }
        pw_expect(&rep, carry[t] == (unsigned)c, "t=%d carry %u want %u", t, carry[t], (unsigned)c);
        pw_expect(&rep, carry64[t] == c, "t=%d carry64 %llu want %u", t, carry64[t], (unsigned)c);
        pw_expect(&rep, borrow[t] == (br ? 0xffffffffu : 0u), "t=%d borrow %08x want %08x", t, borrow[t],
                  br ? 0xffffffffu : 0u);
        uint32_t p[8] = {0};
        for (int i = 0; i < 4; i++) {
            uint64_t cy = 0;
            for (int j = 0; j < 4; j++) {
                uint64_t v = (uint64_t)a[j] * b[i] + p[i + j] + cy;
                p[i + j] = (uint32_t)v;
                cy = v >> 32;
            }
            p[i + 4] = (uint32_t)cy;
        }
        for (int k = 0; k < 8; k++)
            pw_expect(&rep, prod[t * 8 + k] == p[k], "t=%d prod[%d]=%08x want %08x", t, k, prod[t * 8 + k], p[k]);
    }

    /* warp-wide 1024-bit adds: 6 warps (2 blocks of 96) */
    const int nw = 6;
    unsigned *WA = (unsigned *)malloc(nw * 128), *WB = (unsigned *)malloc(nw * 128), *WS = (unsigned *)malloc(nw * 128);
    unsigned wc[nw];
    for (int w = 0; w < nw; w++)
        for (int l = 0; l < 32; l++) {
            unsigned r = pw_rng_u32(&rng);
            switch (w) {
            case 0: WA[w * 32 + l] = 0xffffffffu; WB[w * 32 + l] = l == 0; break;            /* 32-limb ripple */
            case 1: WA[w * 32 + l] = r; WB[w * 32 + l] = ~r + (l == 0); break;               /* sums to 2^1024 */
            case 2: WA[w * 32 + l] = (l % 5 == 0) ? r : 0xffffffffu; WB[w * 32 + l] = l % 7 == 0 ? r : 0; break;
            default: WA[w * 32 + l] = r; WB[w * 32 + l] = pw_rng_u32(&rng); break;
            }
        }
    unsigned *dWA, *dWB, *dWS, *dwc;
    CHECK(cudaMalloc(&dWA, nw * 128));
    CHECK(cudaMalloc(&dWB, nw * 128));
    CHECK(cudaMalloc(&dWS, nw * 128));
    CHECK(cudaMalloc(&dwc, nw * 4));
    CHECK(cudaMemcpy(dWA, WA, nw * 128, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dWB, WB, nw * 128, cudaMemcpyHostToDevice));
    warp_add1024<<<2, 96>>>(dWA, dWB, dWS, dwc);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(WS, dWS, nw * 128, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(wc, dwc, nw * 4, cudaMemcpyDeviceToHost));
    for (int w = 0; w < nw; w++) {
        uint64_t c = 0;
        for (int l = 0; l < 32; l++) {
            uint64_t s = (uint64_t)WA[w * 32 + l] + WB[w * 32 + l] + c;
            c = s >> 32;
            pw_expect(&rep, WS[w * 32 + l] == (uint32_t)s, "warp %d limb %d: %08x want %08x", w, l, WS[w * 32 + l],
                      (uint32_t)s);
        }
        pw_expect(&rep, wc[w] == (unsigned)c, "warp %d carry out %u want %u", w, wc[w], (unsigned)c);
    }

    free(A); free(B); free(sum); free(carry); free(diff); free(borrow); free(sum64); free(carry64); free(prod);
    free(WA); free(WB); free(WS);
    CHECK(cudaFree(dA)); CHECK(cudaFree(dB)); CHECK(cudaFree(dsum)); CHECK(cudaFree(dcarry));
    CHECK(cudaFree(ddiff)); CHECK(cudaFree(dborrow)); CHECK(cudaFree(dsum64)); CHECK(cudaFree(dcarry64));
    CHECK(cudaFree(dprod)); CHECK(cudaFree(dWA)); CHECK(cudaFree(dWB)); CHECK(cudaFree(dWS)); CHECK(cudaFree(dwc));
    return pw_finish(&rep);
}
