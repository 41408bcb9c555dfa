/*
 * threadfence: the "last block" reduction of the CUDA samples
 * (threadFenceReduction): every block writes its partial sum, executes
 * __threadfence() so the write is visible device-wide before it takes a
 * ticket with atomicInc, and the block that draws the last ticket sums the
 * partials.  atomicInc's limit is gridDim.x - 1, so the last ticket wraps
 * the counter back to 0 and the next launch starts clean (checked over
 * three launches with different grids).
 *
 * No block ever waits for another: the pattern needs no forward-progress
 * guarantee between blocks (a decoupled look-back with a spin-wait is left
 * out on purpose: it can hang an emulator that runs blocks one at a time).
 * Also exercises __threadfence_block() and __threadfence_system() (membar /
 * fence at cta and sys scope), which have no observable effect here.
 */
#include "check.h"

__device__ unsigned g_tickets = 0;

__global__ void sum_last_block(const unsigned *in, unsigned *partial, unsigned *result, unsigned *last_block, int n)
{
    __shared__ unsigned sdata[256];
    __shared__ bool am_last;
    unsigned tid = threadIdx.x;
    unsigned s = 0;
    for (int i = blockIdx.x * blockDim.x + tid; i < n; i += gridDim.x * blockDim.x)
        s += in[i];
    sdata[tid] = s;
    __syncthreads();
    for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) { /* blockDim.x is a power of two here */
        if (tid < st)
            sdata[tid] += sdata[tid + st];
        __syncthreads();
    }
    if (tid == 0) {
        partial[blockIdx.x] = sdata[0];
        __threadfence();
        unsigned ticket = atomicInc(&g_tickets, gridDim.x - 1);
        am_last = ticket == gridDim.x - 1;
    }
    __syncthreads();
    if (am_last) {
        __threadfence_block();
        unsigned t = 0;
        for (unsigned b = tid; b < gridDim.x; b += blockDim.x)
            t += ((volatile unsigned *)partial)[b];
        sdata[tid] = t;
        __syncthreads();
        for (unsigned st = blockDim.x / 2; st > 0; st >>= 1) {
            if (tid < st)
                sdata[tid] += sdata[tid + st];
            __syncthreads();
        }
        if (tid == 0) {
            *result = sdata[0];
            *last_block = blockIdx.x;
            __threadfence_system();
        }
    }
}

int main(void)
{
    pw_report rep = pw_report_start("threadfence");
    pw_rng rng = pw_rng_seed(25);
    const int n = 40000;
    unsigned *in = (unsigned *)malloc(n * 4);
    unsigned want = 0;
    for (int i = 0; i < n; i++) {
        in[i] = pw_rng_u32(&rng);
        want += in[i];
    }
    unsigned *din, *dpart, *dres, *dlast;
    CHECK(cudaMalloc(&din, n * 4));
    CHECK(cudaMalloc(&dpart, 64 * 4));
    CHECK(cudaMalloc(&dres, 4));
    CHECK(cudaMalloc(&dlast, 4));
    CHECK(cudaMemcpy(din, in, n * 4, cudaMemcpyHostToDevice));
    const int cfg[][2] = {{17, 128}, {64, 256}, {5, 64}};
    for (size_t k = 0; k < PW_ARRAY_SIZE(cfg); k++) {
        CHECK(cudaMemset(dres, 0, 4));
        CHECK(cudaMemset(dlast, 0xff, 4));
        sum_last_block<<<cfg[k][0], cfg[k][1]>>>(din, dpart, dres, dlast, n);
        CHECK_LAUNCH();
        unsigned res, last, tickets;
        CHECK(cudaMemcpy(&res, dres, 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&last, dlast, 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpyFromSymbol(&tickets, g_tickets, 4));
        pw_expect(&rep, res == want, "launch %zu (%dx%d): sum %u want %u", k, cfg[k][0], cfg[k][1], res, want);
        pw_expect(&rep, last < (unsigned)cfg[k][0], "launch %zu: last block %u out of range", k, last);
        pw_expect(&rep, tickets == 0, "launch %zu: ticket counter %u, want 0 (atomicInc wrap)", k, tickets);
    }
    free(in);
    CHECK(cudaFree(din));
    CHECK(cudaFree(dpart));
    CHECK(cudaFree(dres));
    CHECK(cudaFree(dlast));
    return pw_finish(&rep);
}
