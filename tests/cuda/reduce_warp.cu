/*
 * reduce_warp: reductions with warp shuffles.
 *
 *  - reduce_shfl: grid-stride accumulation, then a shfl.down tree in each
 *    warp, warp totals through shared memory, a second shfl.down tree in
 *    warp 0, and one atomicAdd per block into the grand total.  Blocks of
 *    33 and 48 threads end in a partial warp (1 and 16 lanes): its shuffles
 *    use a mask of exactly the lanes that exist, and a lane adds the value it
 *    received only when the source lane exists (lane + offset < lanes), since
 *    a shuffle from a lane outside the mask is undefined.
 *  - allreduce_xor: a butterfly (shfl.bfly) after which every lane holds the
 *    warp total, for 32-bit unsigned and for double (two 32-bit shuffles per
 *    step).  Doubles are integers below 2^40, so every sum is exact in any
 *    order.
 */
#include "check.h"

#define FULL 0xffffffffu

/* Sum over lanes [0, nlanes), which are exactly the lanes in mask; the total
 * ends in lane 0. */
__device__ unsigned warp_sum(unsigned v, unsigned mask, int nlanes)
{
    int lane = threadIdx.x & 31;
    for (int off = 16; off > 0; off >>= 1) {
        unsigned other = __shfl_down_sync(mask, v, off);
        if (lane + off < nlanes)
            v += other;
    }
    return v;
}

__global__ void reduce_shfl(const unsigned *in, unsigned *block_sums, unsigned *total, int n)
{
    __shared__ unsigned warp_sums[32];
    unsigned sum = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        sum += in[i];

    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    int nlanes = min(32, (int)blockDim.x - warp * 32);
    unsigned mask = nlanes == 32 ? FULL : (1u << nlanes) - 1;

    sum = warp_sum(sum, mask, nlanes);
    if (lane == 0)
        warp_sums[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        /* warp 0 has min(32, blockDim.x) lanes: the same mask as above */
        unsigned v = lane < nwarps ? warp_sums[lane] : 0;
        v = warp_sum(v, mask, nlanes);
        if (lane == 0) {
            block_sums[blockIdx.x] = v;
            atomicAdd(total, v);
        }
    }
}

template <typename T>
__global__ void allreduce_xor(const T *in, T *out)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    T v = in[i];
    for (int m = 1; m < 32; m <<= 1)
        v += __shfl_xor_sync(FULL, v, m);
    out[i] = v;
}

int main(void)
{
    pw_report rep = pw_report_start("reduce_warp");
    pw_rng rng = pw_rng_seed(3);
    const int n = 50000;
    unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
    for (int i = 0; i < n; i++)
        h[i] = pw_rng_u32(&rng);
    unsigned *d_in, *d_blocks, *d_total;
    CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_blocks, 64 * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_total, sizeof(unsigned)));
    CHECK(cudaMemcpy(d_in, h, n * sizeof(unsigned), cudaMemcpyHostToDevice));

    const int cfg[][2] = {{5, 33}, {7, 48}, {64, 96}, {3, 1024}, {1, 1}};
    for (size_t k = 0; k < PW_ARRAY_SIZE(cfg); k++) {
        int grid = cfg[k][0], bs = cfg[k][1];
        CHECK(cudaMemset(d_total, 0, sizeof(unsigned)));
        reduce_shfl<<<grid, bs>>>(d_in, d_blocks, d_total, n);
        CHECK_LAUNCH();
        unsigned blocks[64], total;
        CHECK(cudaMemcpy(blocks, d_blocks, grid * sizeof(unsigned), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&total, d_total, sizeof(unsigned), cudaMemcpyDeviceToHost));
        unsigned want_total = 0;
        for (int b = 0; b < grid; b++) {
            unsigned want = 0;
            for (int t = 0; t < bs; t++)
                for (int i = b * bs + t; i < n; i += grid * bs)
                    want += h[i];
            want_total += want;
            pw_expect(&rep, blocks[b] == want, "reduce_shfl %dx%d block %d: %u want %u", grid, bs, b, blocks[b], want);
        }
        pw_expect(&rep, total == want_total, "reduce_shfl %dx%d total %u want %u", grid, bs, total, want_total);
    }

    /* butterfly all-reduce: 4 blocks of 96, then 2 of 1024 */
    const int acfg[][2] = {{4, 96}, {2, 1024}};
    for (size_t k = 0; k < PW_ARRAY_SIZE(acfg); k++) {
        int cnt = acfg[k][0] * acfg[k][1];
        unsigned *u_out = (unsigned *)malloc(cnt * sizeof(unsigned));
        double *d_host = (double *)malloc(cnt * sizeof(double));
        double *d_outh = (double *)malloc(cnt * sizeof(double));
        for (int i = 0; i < cnt; i++)
            d_host[i] = (double)(pw_rng_u64(&rng) >> 30) - (double)(1ull << 33); /* |x| < 2^34 */
        unsigned *du;
        double *dd_in, *dd_out;
        CHECK(cudaMalloc(&du, cnt * sizeof(unsigned)));
        CHECK(cudaMalloc(&dd_in, cnt * sizeof(double)));
        CHECK(cudaMalloc(&dd_out, cnt * sizeof(double)));
        CHECK(cudaMemcpy(dd_in, d_host, cnt * sizeof(double), cudaMemcpyHostToDevice));
        allreduce_xor<unsigned><<<acfg[k][0], acfg[k][1]>>>(d_in, du);
        CHECK_LAUNCH();
        allreduce_xor<double><<<acfg[k][0], acfg[k][1]>>>(dd_in, dd_out);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(u_out, du, cnt * sizeof(unsigned), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(d_outh, dd_out, cnt * sizeof(double), cudaMemcpyDeviceToHost));
        for (int w = 0; w < cnt / 32; w++) {
            unsigned us = 0;
            double ds = 0;
            for (int l = 0; l < 32; l++) {
                us += h[w * 32 + l];
                ds += d_host[w * 32 + l]; /* integers < 2^39 in magnitude: exact */
            }
            for (int l = 0; l < 32; l++) {
                int i = w * 32 + l;
                pw_expect(&rep, u_out[i] == us, "allreduce u32 bs=%d [%d] %u want %u", acfg[k][1], i, u_out[i], us);
                pw_expect(&rep, d_outh[i] == ds, "allreduce f64 bs=%d [%d] %.17g want %.17g", acfg[k][1], i, d_outh[i], ds);
            }
        }
        free(u_out);
        free(d_host);
        free(d_outh);
        CHECK(cudaFree(du));
        CHECK(cudaFree(dd_in));
        CHECK(cudaFree(dd_out));
    }

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_blocks));
    CHECK(cudaFree(d_total));
    free(h);
    return pw_finish(&rep);
}
