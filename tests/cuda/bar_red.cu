/*
 * bar_red: barriers that reduce, named barriers with thread counts, and
 * arrive/sync producer-consumer pairs.
 *
 *  - bar_reduce: __syncthreads_count / _and / _or (barrier.red.popc,
 *    .and, .or) on a mixed, an all-true and an all-false predicate, in
 *    blocks of 33, 48, 96 and 1024 threads (partial warps included).
 *  - named_barriers (inline PTX, 128 threads): warps 0-1 synchronize on
 *    barrier 1 with a count of 64 and warps 2-3 on barrier 2 with 64, each
 *    group reading only what its own group wrote; then warps 0-1 produce
 *    and `bar.arrive 3, 128` while warps 2-3 `bar.sync 3, 128` and consume.
 */
#include "check.h"

__global__ void bar_reduce(const unsigned *in, int *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[g];
    int *o = out + g * 9;
    int p1 = (v & 1) != 0, p2 = 1, p3 = 0;
    o[0] = __syncthreads_count(p1);
    o[1] = __syncthreads_and(p1) != 0;
    o[2] = __syncthreads_or(p1) != 0;
    o[3] = __syncthreads_count(p2);
    o[4] = __syncthreads_and(p2) != 0;
    o[5] = __syncthreads_or(p2) != 0;
    o[6] = __syncthreads_count(p3);
    o[7] = __syncthreads_and(p3) != 0;
    o[8] = __syncthreads_or(p3) != 0;
}

#ifdef PTXWAVE_NATIVE
/* Native twin for benchmarks/quality_bench.py (the macro is only defined by
 * benchmarks/native/cuda_on_hip.h).  PTX ISA "bar, barrier": bar.sync a, b
 * waits until b threads (whole warps) have arrived at barrier a;
 * bar.arrive a, b arrives without waiting.  gfx942 has one workgroup
 * barrier (s_barrier), so a counted barrier is an LDS arrival count and a
 * generation per id (the algorithm of lower/lower_barriers.c, docs/
 * lowering.md "Barriers"): the wave's first active lane adds the warps of
 * the wave that have an active lane, the wave completing the count resets
 * it and bumps the generation, a sync spins until the generation moves.
 * The words are zeroed at the kernel's entry (LDS starts undefined). */
__shared__ unsigned nb_count[4], nb_gen[4];
__device__ __forceinline__ void nb_init(void)
{
    if (threadIdx.x < 4)
        nb_count[threadIdx.x] = nb_gen[threadIdx.x] = 0;
    __syncthreads();
}
__device__ __forceinline__ void nb_bar(unsigned id, unsigned count, bool wait)
{
    unsigned long long act = __builtin_amdgcn_read_exec();
    unsigned warps = ((unsigned)act != 0) + ((unsigned)(act >> 32) != 0);
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    unsigned gen = __hip_atomic_load(&nb_gen[id], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
    if (pw_lane64() == (unsigned)__builtin_ctzll(act)) {
        unsigned old = __hip_atomic_fetch_add(&nb_count[id], warps, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
        if (old + warps == count / 32) {
            __hip_atomic_store(&nb_count[id], 0u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
            __hip_atomic_fetch_add(&nb_gen[id], 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
        }
    }
    if (wait)
        while (__hip_atomic_load(&nb_gen[id], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP) == gen)
            __builtin_amdgcn_s_sleep(1);
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
#endif

__global__ void named_barriers(const unsigned *in, unsigned *out)
{
    __shared__ unsigned sh[128];
    __shared__ unsigned prod[64];
    int t = threadIdx.x;
    int g = blockIdx.x * blockDim.x + t;
    unsigned v = in[g];
#ifdef PTXWAVE_NATIVE
    nb_init();
#endif
    sh[t] = v;
    if (t < 64) {
#ifdef PTXWAVE_NATIVE
        nb_bar(1, 64, true);
#else
        asm volatile("bar.sync 1, 64;" ::: "memory");
#endif
        out[2 * g] = sh[63 - t];
    } else {
#ifdef PTXWAVE_NATIVE
        nb_bar(2, 64, true);
#else
        asm volatile("bar.sync 2, 64;" ::: "memory");
#endif
        out[2 * g] = sh[64 + 127 - t];
    }
    if (t < 64) {
        prod[t] = v * 3u + 1u;
#ifdef PTXWAVE_NATIVE
        nb_bar(3, 128, false);
#else
        asm volatile("bar.arrive 3, 128;" ::: "memory");
#endif
        out[2 * g + 1] = 0;
    } else {
#ifdef PTXWAVE_NATIVE
        nb_bar(3, 128, true);
#else
        asm volatile("bar.sync 3, 128;" ::: "memory");
#endif
        out[2 * g + 1] = prod[127 - t];
    }
}

int main(void)
{
    pw_report rep = pw_report_start("bar_red");
    pw_rng rng = pw_rng_seed(23);
    const int sizes[] = {33, 48, 96, 1024};
    const int grid = 3;
    for (size_t k = 0; k < PW_ARRAY_SIZE(sizes); k++) {
        int bs = sizes[k], n = grid * bs;
        unsigned *in = (unsigned *)malloc(n * 4);
        int *out = (int *)malloc((size_t)n * 9 * sizeof(int));
        for (int i = 0; i < n; i++)
            in[i] = pw_rng_u32(&rng);
        /* block 1: all odd (the mixed predicate is all true); block 2: all even */
        for (int i = bs; i < 2 * bs; i++)
            in[i] |= 1u;
        for (int i = 2 * bs; i < 3 * bs; i++)
            in[i] &= ~1u;
        unsigned *din;
        int *dout;
        CHECK(cudaMalloc(&din, n * 4));
        CHECK(cudaMalloc(&dout, (size_t)n * 9 * sizeof(int)));
        CHECK(cudaMemcpy(din, in, n * 4, cudaMemcpyHostToDevice));
        bar_reduce<<<grid, bs>>>(din, dout);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, dout, (size_t)n * 9 * sizeof(int), cudaMemcpyDeviceToHost));
        for (int b = 0; b < grid; b++) {
            int cnt = 0;
            for (int t = 0; t < bs; t++)
                cnt += (in[b * bs + t] & 1) != 0;
            int want[9] = {cnt, cnt == bs, cnt > 0, bs, 1, 1, 0, 0, 0};
            for (int t = 0; t < bs; t++)
                for (int j = 0; j < 9; j++)
                    pw_expect(&rep, out[(size_t)(b * bs + t) * 9 + j] == want[j], "bs=%d block %d thread %d op %d: %d want %d",
                              bs, b, t, j, out[(size_t)(b * bs + t) * 9 + j], want[j]);
        }
        free(in);
        free(out);
        CHECK(cudaFree(din));
        CHECK(cudaFree(dout));
    }

    {
        const int nb = 4, bs = 128, n = nb * bs;
        unsigned in[n], out[2 * n];
        for (int i = 0; i < n; i++)
            in[i] = pw_rng_u32(&rng);
        unsigned *din, *dout;
        CHECK(cudaMalloc(&din, sizeof(in)));
        CHECK(cudaMalloc(&dout, sizeof(out)));
        CHECK(cudaMemcpy(din, in, sizeof(in), cudaMemcpyHostToDevice));
        named_barriers<<<nb, bs>>>(din, dout);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
        for (int g = 0; g < n; g++) {
            int b = g / bs, t = g % bs;
            unsigned w0 = t < 64 ? in[b * bs + 63 - t] : in[b * bs + 64 + 127 - t];
            unsigned w1 = t < 64 ? 0u : in[b * bs + 127 - t] * 3u + 1u;
            pw_expect(&rep, out[2 * g] == w0 && out[2 * g + 1] == w1, "named barriers thread %d: %08x %08x want %08x %08x", g,
                      out[2 * g], out[2 * g + 1], w0, w1);
        }
        CHECK(cudaFree(din));
        CHECK(cudaFree(dout));
    }
    return pw_finish(&rep);
}
