/*
 * fp16_sm90: fp16.cu compiled for sm_90, where bf16 add, sub and mul are
 * native instructions (add.rn.bf16, ...) and conversions such as
 * cvt.rn.bf16.f64 and cvt.rni.s32.bf16 exist, plus native bf16 atomics:
 *
 *  - atomicAdd(__nv_bfloat162 *, v) (atom.add.noftz.bf16x2) and
 *    atomicAdd(__nv_bfloat16 *, v) (atom.add.noftz.bf16): 384 threads add
 *    (1.0, 0.5) and 1.0 into 4 counters each, 96 adds per counter, so every
 *    intermediate sum is a multiple of 0.5 below 2^7 and exact in bf16 (8
 *    significant bits): the totals are exact in any order, and the old
 *    values returned to the 96 adders of a counter are exactly 0, 1, ..., 95
 *    in some order.
 */
#include "check.h"

#include <cuda_bf16.h>

#define PROGRAM_NAME "fp16_sm90"

__global__ void bf16_atomics(__nv_bfloat162 *acc2, __nv_bfloat16 *acc1, float *old2, float *old1)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    __nv_bfloat162 inc = __floats2bfloat162_rn(1.0f, 0.5f);
    __nv_bfloat162 o2 = atomicAdd(&acc2[t % 4], inc);
    __nv_bfloat16 o1 = atomicAdd(&acc1[t % 4], __float2bfloat16_rn(1.0f));
    old2[t] = __low2float(o2);
    old1[t] = __bfloat162float(o1);
}

static void bf16_atomics_check(pw_report *rep, pw_rng *rng)
{
    (void)rng;
    const int grid = 4, bs = 96, n = grid * bs;
    __nv_bfloat162 *d2;
    __nv_bfloat16 *d1;
    float *dold2, *dold1;
    CHECK(cudaMalloc(&d2, 4 * sizeof(__nv_bfloat162)));
    CHECK(cudaMalloc(&d1, 4 * sizeof(__nv_bfloat16)));
    CHECK(cudaMalloc(&dold2, n * sizeof(float)));
    CHECK(cudaMalloc(&dold1, n * sizeof(float)));
    CHECK(cudaMemset(d2, 0, 4 * sizeof(__nv_bfloat162))); /* +0.0 in bf16 */
    CHECK(cudaMemset(d1, 0, 4 * sizeof(__nv_bfloat16)));
    bf16_atomics<<<grid, bs>>>(d2, d1, dold2, dold1);
    CHECK_LAUNCH();
    uint16_t h2[8], h1[4];
    float old2[n], old1[n];
    CHECK(cudaMemcpy(h2, d2, sizeof(h2), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(h1, d1, sizeof(h1), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(old2, dold2, sizeof(old2), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(old1, dold1, sizeof(old1), cudaMemcpyDeviceToHost));
    /* bf16 bits: 96.0 = 0x42c0, 48.0 = 0x4240 */
    for (int c = 0; c < 4; c++) {
        pw_expect(rep, h2[2 * c] == 0x42c0 && h2[2 * c + 1] == 0x4240, "bf16x2 atomic counter %d = (%04x, %04x)", c,
                  h2[2 * c], h2[2 * c + 1]);
        pw_expect(rep, h1[c] == 0x42c0, "bf16 atomic counter %d = %04x", c, h1[c]);
        int seen2[96] = {0}, seen1[96] = {0};
        for (int t = c; t < n; t += 4) {
            int k2 = (int)old2[t], k1 = (int)old1[t];
            if (old2[t] == (float)k2 && k2 >= 0 && k2 < 96)
                seen2[k2]++;
            if (old1[t] == (float)k1 && k1 >= 0 && k1 < 96)
                seen1[k1]++;
        }
        for (int k = 0; k < 96; k++)
            pw_expect(rep, seen2[k] == 1 && seen1[k] == 1, "counter %d: old value %d returned %d/%d times", c, k,
                      seen2[k], seen1[k]);
    }
    CHECK(cudaFree(d2));
    CHECK(cudaFree(d1));
    CHECK(cudaFree(dold2));
    CHECK(cudaFree(dold1));
}

#define FP16_EXTRA bf16_atomics_check
#include "fp16.cu"
