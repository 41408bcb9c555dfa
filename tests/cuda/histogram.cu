/*
 * histogram: 256-bin byte histogram with atomics, counts exact.
 *
 *  - hist_global: grid-stride, one atomicAdd per byte on the global bins,
 *    its result unused (nvcc 13 still emits atom, not red).
 *  - hist_shared: per-block bins in shared memory (cleared and merged with
 *    loops strided by blockDim, since 48 and 33 threads do not cover 256
 *    bins), shared-memory atomics, then one global atomicAdd per non-zero bin.
 *  - hist_weighted_u64: bins of unsigned long long, each byte adds a weight
 *    (i % 7 + 1), with atom.global.add.u64 whose old value is also used:
 *    the old values of bin 0 are summed.
 *
 * A quarter of the bytes are 7, so bin 7 is heavily contended.
 */
#include "check.h"

#define NBINS 256

__global__ void hist_global(const unsigned char *data, unsigned *hist, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&hist[data[i]], 1u);
}

__global__ void hist_shared(const unsigned char *data, unsigned *hist, int n)
{
    __shared__ unsigned bins[NBINS];
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        bins[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&bins[data[i]], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < NBINS; b += blockDim.x)
        if (bins[b])
            atomicAdd(&hist[b], bins[b]);
}

__global__ void hist_weighted_u64(const unsigned char *data, unsigned long long *hist,
                                  unsigned long long *old_sum0, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        unsigned long long old = atomicAdd(&hist[data[i]], (unsigned long long)(i % 7 + 1));
        if (data[i] == 0)
            atomicAdd(old_sum0, old);
    }
}

int main(void)
{
    pw_report rep = pw_report_start("histogram");
    pw_rng rng = pw_rng_seed(5);
    const int n = 60000;
    unsigned char *h = (unsigned char *)malloc(n);
    for (int i = 0; i < n; i++)
        h[i] = (pw_rng_u32(&rng) & 3) == 0 ? 7 : (unsigned char)pw_rng_u32(&rng);

    unsigned want[NBINS] = {0};
    unsigned long long want64[NBINS] = {0};
    for (int i = 0; i < n; i++) {
        want[h[i]]++;
        want64[h[i]] += (unsigned long long)(i % 7 + 1);
    }

    unsigned char *d_data;
    unsigned *d_hist;
    unsigned long long *d_hist64, *d_old0;
    CHECK(cudaMalloc(&d_data, n));
    CHECK(cudaMalloc(&d_hist, NBINS * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_hist64, NBINS * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_old0, sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_data, h, n, cudaMemcpyHostToDevice));

    unsigned got[NBINS];
    struct { int shared, grid, bs; } cfg[] = {{0, 13, 96}, {1, 40, 48}, {1, 8, 1024}, {1, 3, 33}};
    for (size_t k = 0; k < PW_ARRAY_SIZE(cfg); k++) {
        CHECK(cudaMemset(d_hist, 0, NBINS * sizeof(unsigned)));
        if (cfg[k].shared)
            hist_shared<<<cfg[k].grid, cfg[k].bs>>>(d_data, d_hist, n);
        else
            hist_global<<<cfg[k].grid, cfg[k].bs>>>(d_data, d_hist, n);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got, d_hist, sizeof(got), cudaMemcpyDeviceToHost));
        for (int b = 0; b < NBINS; b++)
            pw_expect(&rep, got[b] == want[b], "%s %dx%d bin %d: %u want %u", cfg[k].shared ? "shared" : "global",
                      cfg[k].grid, cfg[k].bs, b, got[b], want[b]);
    }

    /* Weighted: the bins are exact.  The old values returned for bin 0 are
     * the exclusive prefix sums of its weights in whatever order the atomics
     * happened, so their sum depends on that order; check that it lies
     * between the smallest (weights ascending) and the largest (weights
     * descending) sum that any order can give. */
    CHECK(cudaMemset(d_hist64, 0, NBINS * sizeof(unsigned long long)));
    CHECK(cudaMemset(d_old0, 0, sizeof(unsigned long long)));
    hist_weighted_u64<<<9, 33>>>(d_data, d_hist64, d_old0, n);
    CHECK_LAUNCH();
    unsigned long long got64[NBINS], old0;
    CHECK(cudaMemcpy(got64, d_hist64, sizeof(got64), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&old0, d_old0, sizeof(old0), cudaMemcpyDeviceToHost));
    for (int b = 0; b < NBINS; b++)
        pw_expect(&rep, got64[b] == want64[b], "weighted bin %d: %llu want %llu", b, got64[b], want64[b]);
    {
        /* weights of bin 0, counted per value 1..7 */
        unsigned long long cnt[8] = {0};
        for (int i = 0; i < n; i++)
            if (h[i] == 0)
                cnt[i % 7 + 1]++;
        /* sum of exclusive prefix sums is smallest when large weights come
         * last (ascending order) and largest when they come first */
        unsigned long long lo = 0, hi = 0, run = 0;
        for (int w = 1; w <= 7; w++)
            for (unsigned long long c = 0; c < cnt[w]; c++) {
                lo += run;
                run += (unsigned long long)w;
            }
        run = 0;
        for (int w = 7; w >= 1; w--)
            for (unsigned long long c = 0; c < cnt[w]; c++) {
                hi += run;
                run += (unsigned long long)w;
            }
        pw_expect(&rep, old0 >= lo && old0 <= hi, "weighted bin 0 old-value sum %llu outside [%llu, %llu]", old0, lo, hi);
    }

    CHECK(cudaFree(d_data));
    CHECK(cudaFree(d_hist));
    CHECK(cudaFree(d_hist64));
    CHECK(cudaFree(d_old0));
    free(h);
    return pw_finish(&rep);
}
