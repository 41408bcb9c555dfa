/*
 * scan: inclusive prefix sum of unsigned values (wrapping), any length.
 *
 * Three passes, the textbook multi-block scan:
 *   1. every block scans its own B elements and writes its total;
 *   2. one block of 1024 threads scans the block totals (nb <= 1024);
 *   3. every element of block b > 0 adds the scanned total of block b-1.
 *
 * Two block-level scans, used in either pass:
 *   - scan_block_warp: shfl.up scan inside each warp (a partial last warp
 *     uses a mask of its existing lanes; shfl.up only reads lower lanes, which
 *     exist), warp totals through shared memory, scanned by warp 0, added back.
 *   - scan_block_smem: Hillis-Steele with two shared buffers and a barrier per
 *     step, for any block size.
 * Block sizes 96, 48 (partial warps), 33 and 1024.
 */
#include "check.h"

#define FULL 0xffffffffu

__global__ void scan_block_warp(const unsigned *in, unsigned *out, unsigned *block_sums, int n)
{
    __shared__ unsigned wsum[32];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int nwarps = (blockDim.x + 31) >> 5;
    int nlanes = min(32, (int)blockDim.x - warp * 32);
    unsigned mask = nlanes == 32 ? FULL : (1u << nlanes) - 1;

    unsigned v = i < n ? in[i] : 0;
    for (int d = 1; d < 32; d <<= 1) {
        unsigned t = __shfl_up_sync(mask, v, d);
        if (lane >= d)
            v += t;
    }
    if (lane == nlanes - 1)
        wsum[warp] = v;
    __syncthreads();
    if (warp == 0) {
        /* warp 0 has min(32, blockDim.x) lanes, i.e. this same mask */
        unsigned w = lane < nwarps ? wsum[lane] : 0;
        for (int d = 1; d < 32; d <<= 1) {
            unsigned t = __shfl_up_sync(mask, w, d);
            if (lane >= d)
                w += t;
        }
        if (lane < nwarps)
            wsum[lane] = w;
    }
    __syncthreads();
    if (warp > 0)
        v += wsum[warp - 1];
    if (i < n)
        out[i] = v;
    if (threadIdx.x == blockDim.x - 1)
        block_sums[blockIdx.x] = v;
}

__global__ void scan_block_smem(const unsigned *in, unsigned *out, unsigned *block_sums, int n)
{
    __shared__ unsigned buf[2][1024];
    int tid = threadIdx.x;
    int i = blockIdx.x * blockDim.x + tid;
    int src = 0;
    buf[0][tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (int off = 1; off < (int)blockDim.x; off <<= 1) {
        int dst = src ^ 1;
        unsigned v = buf[src][tid];
        if (tid >= off)
            v += buf[src][tid - off];
        buf[dst][tid] = v;
        src = dst;
        __syncthreads();
    }
    if (i < n)
        out[i] = buf[src][tid];
    if (tid == (int)blockDim.x - 1)
        block_sums[blockIdx.x] = buf[src][tid];
}

__global__ void add_offsets(unsigned *out, const unsigned *scanned_sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (blockIdx.x > 0 && i < n)
        out[i] += scanned_sums[blockIdx.x - 1];
}

typedef void (*scan_kernel)(const unsigned *, unsigned *, unsigned *, int);

static void run(pw_report *rep, const char *what, int n, int bs, scan_kernel pass1, scan_kernel pass2, pw_rng *rng)
{
    int nb = PW_DIV_UP(n, bs);
    unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
    unsigned *got = (unsigned *)malloc(n * sizeof(unsigned));
    for (int i = 0; i < n; i++)
        h[i] = pw_rng_u32(rng) >> (i % 3 == 0 ? 0 : 20); /* mix of large and small values */
    unsigned *d_in, *d_out, *d_sums, *d_sums_scanned, *d_dummy;
    CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_sums, nb * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_sums_scanned, nb * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_dummy, sizeof(unsigned)));
    CHECK(cudaMemcpy(d_in, h, n * sizeof(unsigned), cudaMemcpyHostToDevice));

    pass1<<<nb, bs>>>(d_in, d_out, d_sums, n);
    CHECK_LAUNCH();
    pass2<<<1, 1024>>>(d_sums, d_sums_scanned, d_dummy, nb);
    CHECK_LAUNCH();
    add_offsets<<<nb, bs>>>(d_out, d_sums_scanned, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got, d_out, n * sizeof(unsigned), cudaMemcpyDeviceToHost));

    unsigned acc = 0;
    for (int i = 0; i < n; i++) {
        acc += h[i];
        pw_expect(rep, got[i] == acc, "%s n=%d bs=%d out[%d]=%u want %u", what, n, bs, i, got[i], acc);
    }
    free(h);
    free(got);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_sums));
    CHECK(cudaFree(d_sums_scanned));
    CHECK(cudaFree(d_dummy));
}

int main(void)
{
    pw_report rep = pw_report_start("scan");
    pw_rng rng = pw_rng_seed(4);
    run(&rep, "warp+smem", 50000, 96, scan_block_warp, scan_block_smem, &rng);
    run(&rep, "smem+warp", 5000, 33, scan_block_smem, scan_block_warp, &rng);
    run(&rep, "warp+warp", 30000, 48, scan_block_warp, scan_block_warp, &rng);
    run(&rep, "smem+smem", 65536, 1024, scan_block_smem, scan_block_smem, &rng);
    return pw_finish(&rep);
}
