/*
 * coop_grid.cu: cooperative launch (runtime-only; the harness runs it with
 * PTXWAVE_EMU_DEVICES=2 and checks both devices).
 *
 * cudaDevAttrCooperativeLaunch is 1.  The largest grid that fits on the
 * device at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor times the
 * multiprocessor count, CUDA Programming Guide "Grid Synchronization")
 * runs a two-phase reduction of 64-bit sums: every block sums its
 * grid-stride share into partial[block], grid.sync(), block 0 sums the
 * partials, grid.sync() again (the barrier reused), and every thread reads
 * the total back.  Launched with cudaLaunchCooperativeKernel and with
 * cudaLaunchKernelEx's cooperative attribute; the host sums the same
 * inputs.  One block more than fits is
 * cudaErrorCooperativeLaunchTooLarge, a launch error that is not sticky.
 */
#include <cooperative_groups.h>

#include "check.h"

namespace cg = cooperative_groups;

#define N 100000
#define BLOCK 128

__global__ void reduce_grid(const unsigned *in, unsigned long long *partial, unsigned long long *seen, unsigned n)
{
    cg::grid_group grid = cg::this_grid();
    __shared__ unsigned long long s[BLOCK];
    unsigned long long acc = 0;
    for (unsigned long long i = grid.thread_rank(); i < n; i += grid.size())
        acc += in[i];
    s[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned k = BLOCK / 2; k; k /= 2) {
        if (threadIdx.x < k)
            s[threadIdx.x] += s[threadIdx.x + k];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partial[1 + blockIdx.x] = s[0];
    grid.sync();
    /* phase 2: block 0 sums the partials every block wrote before the sync */
    if (blockIdx.x == 0) {
        unsigned long long t = 0;
        for (unsigned b = threadIdx.x; b < gridDim.x; b += BLOCK)
            t += partial[1 + b];
        s[threadIdx.x] = t;
        __syncthreads();
        for (unsigned k = BLOCK / 2; k; k /= 2) {
            if (threadIdx.x < k)
                s[threadIdx.x] += s[threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0)
            partial[0] = s[0];
    }
    grid.sync();
    /* every thread sees block 0's total after the second barrier */
    seen[grid.thread_rank()] = partial[0];
}

static void run_on(pw_report *rep, int dev, const unsigned *h_in, unsigned long long want)
{
    CHECK(cudaSetDevice(dev));
    int coop = 0, sms = 0, per_sm = 0;
    CHECK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
    pw_expect(rep, coop == 1, "device %d: cudaDevAttrCooperativeLaunch = %d", dev, coop);
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_grid, BLOCK, 0));
    unsigned blocks = (unsigned)(per_sm * sms);
    if (!pw_expect(rep, blocks >= 2, "device %d: %d blocks per SM x %d SMs", dev, per_sm, sms))
        return;

    unsigned *in;
    unsigned long long *partial, *seen;
    size_t nthreads = (size_t)blocks * BLOCK;
    CHECK(cudaMalloc(&in, N * sizeof(unsigned)));
    CHECK(cudaMalloc(&partial, (blocks + 2) * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&seen, (nthreads + 1) * sizeof(unsigned long long)));
    CHECK(cudaMemcpy(in, h_in, N * sizeof(unsigned), cudaMemcpyHostToDevice));
    unsigned long long *h_seen = (unsigned long long *)malloc(nthreads * sizeof *h_seen);
    unsigned n = N;

    for (int how = 0; how < 2; how++) {
        CHECK(cudaMemset(partial, 0, (blocks + 2) * sizeof(unsigned long long)));
        CHECK(cudaMemset(seen, 0, nthreads * sizeof(unsigned long long)));
        if (how == 0) {
            void *args[] = {&in, &partial, &seen, &n};
            CHECK(cudaLaunchCooperativeKernel((void *)reduce_grid, dim3(blocks), dim3(BLOCK), args, 0, 0));
        } else {
            cudaLaunchAttribute attr;
            attr.id = cudaLaunchAttributeCooperative;
            attr.val.cooperative = 1;
            cudaLaunchConfig_t cfg = {};
            cfg.gridDim = dim3(blocks);
            cfg.blockDim = dim3(BLOCK);
            cfg.attrs = &attr;
            cfg.numAttrs = 1;
            CHECK(cudaLaunchKernelEx(&cfg, reduce_grid, (const unsigned *)in, partial, seen, n));
        }
        CHECK_LAUNCH();
        unsigned long long total = 0;
        CHECK(cudaMemcpy(&total, partial, sizeof total, cudaMemcpyDeviceToHost));
        pw_expect(rep, total == want, "device %d launch %d: total %llu, want %llu", dev, how, total, want);
        CHECK(cudaMemcpy(h_seen, seen, nthreads * sizeof *h_seen, cudaMemcpyDeviceToHost));
        for (size_t t = 0; t < nthreads; t++)
            if (!pw_expect(rep, h_seen[t] == want, "device %d launch %d: thread %zu saw %llu after grid.sync, want %llu",
                           dev, how, t, h_seen[t], want))
                break;
    }

    /* one block more than fits: refused before anything runs, not sticky */
    void *args[] = {&in, &partial, &seen, &n};
    cudaError_t e = cudaLaunchCooperativeKernel((void *)reduce_grid, dim3(blocks + 1), dim3(BLOCK), args, 0, 0);
    pw_expect(rep, e == cudaErrorCooperativeLaunchTooLarge, "device %d: %u blocks: %s, want cudaErrorCooperativeLaunchTooLarge",
              dev, blocks + 1, cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaDeviceSynchronize());

    free(h_seen);
    CHECK(cudaFree(in));
    CHECK(cudaFree(partial));
    CHECK(cudaFree(seen));
}

int main(void)
{
    pw_report rep = pw_report_start("coop_grid");
    static unsigned h_in[N];
    pw_rng r = pw_rng_seed(19);
    unsigned long long want = 0;
    for (int i = 0; i < N; i++) {
        h_in[i] = pw_rng_u32(&r);
        want += h_in[i];
    }
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    for (int d = 0; d < ndev && d < 2; d++)
        run_on(&rep, d, h_in, want);
    return pw_finish(&rep);
}
