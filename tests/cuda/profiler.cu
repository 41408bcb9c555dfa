/*
 * profiler.cu: cudaProfilerStart/Stop around a kernel, as benchmarks do.
 *
 * Without a profiler attached, CUDA's driver accepts cuProfilerStart and
 * cuProfilerStop and does nothing (CUDA Driver API, "Profiler Control"), so
 * the calls succeed, twice in a row too, and the kernel between them runs.
 * Reference: out[i] = 3 * in[i] + 1 computed on the host.
 */
#include <cuda_profiler_api.h>

#include "check.h"

__global__ void axpb(const unsigned *in, unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 3u * in[i] + 1u;
}

int main(void)
{
    pw_report rep = pw_report_start("profiler");
    enum { N = 1000 };
    unsigned h_in[N], h_out[N];
    pw_rng rng = pw_rng_seed(19);
    for (int i = 0; i < N; i++)
        h_in[i] = pw_rng_u32(&rng);
    unsigned *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof h_in));
    CHECK(cudaMalloc(&d_out, sizeof h_out));
    CHECK(cudaMemcpy(d_in, h_in, sizeof h_in, cudaMemcpyHostToDevice));

    CHECK(cudaProfilerStart());
    CHECK(cudaProfilerStart()); /* already started: no effect */
    axpb<<<PW_DIV_UP(N, 96), 96>>>(d_in, d_out, N);
    CHECK_LAUNCH();
    CHECK(cudaProfilerStop());
    CHECK(cudaProfilerStop());

    CHECK(cudaMemcpy(h_out, d_out, sizeof h_out, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++)
        pw_expect(&rep, h_out[i] == 3u * h_in[i] + 1u, "out[%d] = %u, want %u", i, h_out[i],
                  3u * h_in[i] + 1u);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return pw_finish(&rep);
}
