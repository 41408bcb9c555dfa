/*
 * dynpar.cu: dynamic parallelism (runtime-only), built with
 * nvcc -rdc=true -lcudadevrt.
 *
 * Each block of a parent kernel writes a seed to global memory and then
 * launches, with <<<>>> in device code, a child grid that fills the
 * block's 128-element part of an array from that seed (CUDA guarantees a
 * child sees what its parent wrote before the launch); thread 1 of each
 * block starts a chain of nested launches (a kernel launching itself down
 * to depth 4, each level adding to a per-block counter), and the device
 * cudaGetLastError after the launches is cudaSuccess.  Every value is
 * computed on the host from the same formulas.
 */
#include "check.h"

#define BLOCKS 8
#define PART 128
#define DEPTH 4

__global__ void child(unsigned *out, const unsigned *seed, unsigned block)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[block * PART + i] = seed[block] * 1000u + i;
}

__global__ void chain(unsigned *levels, unsigned block, unsigned depth)
{
    atomicAdd(&levels[block], depth * 10u + threadIdx.x);
    if (threadIdx.x == 0 && depth < DEPTH)
        chain<<<1, 2>>>(levels, block, depth + 1);
}

__global__ void parent(unsigned *out, unsigned *seed, unsigned *levels, int *errs)
{
    unsigned b = blockIdx.x;
    if (threadIdx.x == 0) {
        seed[b] = b * 7u + 3u; /* written before the launch: the child reads it */
        child<<<PART / 32, 32>>>(out, seed, b);
        errs[b] = (int)cudaGetLastError();
    } else if (threadIdx.x == 1) {
        chain<<<1, 2>>>(levels, b, 1);
    }
}

int main(void)
{
    pw_report rep = pw_report_start("dynpar");
    unsigned *out, *seed, *levels;
    int *errs;
    CHECK(cudaMalloc(&out, BLOCKS * PART * sizeof(unsigned)));
    CHECK(cudaMalloc(&seed, BLOCKS * sizeof(unsigned)));
    CHECK(cudaMalloc(&levels, BLOCKS * sizeof(unsigned)));
    CHECK(cudaMalloc(&errs, BLOCKS * sizeof(int)));
    CHECK(cudaMemset(out, 0xff, BLOCKS * PART * sizeof(unsigned)));
    CHECK(cudaMemset(levels, 0, BLOCKS * sizeof(unsigned)));
    CHECK(cudaMemset(errs, 0xff, BLOCKS * sizeof(int)));
    parent<<<BLOCKS, 64>>>(out, seed, levels, errs);
    CHECK_LAUNCH();

    static unsigned h[BLOCKS * PART];
    unsigned hl[BLOCKS];
    int he[BLOCKS];
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hl, levels, sizeof hl, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(he, errs, sizeof he, cudaMemcpyDeviceToHost));
    /* each level d of the chain adds (d*10 + 0) + (d*10 + 1) */
    unsigned want_levels = 0;
    for (unsigned d = 1; d <= DEPTH; d++)
        want_levels += 2 * d * 10u + 1u;
    for (unsigned b = 0; b < BLOCKS; b++) {
        for (unsigned i = 0; i < PART; i++) {
            unsigned want = (b * 7u + 3u) * 1000u + i;
            if (!pw_expect(&rep, h[b * PART + i] == want, "out[%u] = %u, want %u (block %u's child)", b * PART + i,
                           h[b * PART + i], want, b))
                break;
        }
        pw_expect(&rep, hl[b] == want_levels, "block %u: nested launches summed %u, want %u", b, hl[b], want_levels);
        pw_expect(&rep, he[b] == 0, "block %u: device cudaGetLastError after the launch = %d", b, he[b]);
    }
    CHECK(cudaFree(out));
    CHECK(cudaFree(seed));
    CHECK(cudaFree(levels));
    CHECK(cudaFree(errs));
    return pw_finish(&rep);
}
