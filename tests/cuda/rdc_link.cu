/*
 * rdc_link.cu: relocatable device code (runtime-only), built with
 * nvcc -rdc=true together with parts/rdc_link_b.cu (what CMake's
 * CUDA_SEPARABLE_COMPILATION does).
 *
 * A kernel here calls __device__ functions defined only in rdc_link_b.cu
 * (one of them recursive, one taking a struct by value), and reads and
 * atomically updates an extern __device__ variable and an extern
 * __constant__ table that file defines; a kernel of rdc_link_b.cu calls a
 * __device__ function of this file.  Such a program's fatbin holds the
 * device-linked cubin and each file's PTX in an __nv_relfatbin container:
 * on the emulator the PTX modules are linked as cuLink* links them.  The
 * host computes every expected value.
 */
#include "check.h"

#define N 1000

struct pair {
    unsigned a, b;
};

/* defined in parts/rdc_link_b.cu */
extern __device__ unsigned mix(unsigned x, unsigned salt);
extern __device__ unsigned tri(unsigned n);
extern __device__ unsigned pair_sum(struct pair p);
extern __device__ unsigned long long counter;
extern __constant__ unsigned table[16];
extern __device__ unsigned salt_b;
__global__ void fill_b(unsigned *out, unsigned n);

/* called from rdc_link_b.cu's kernel */
__device__ unsigned twice_plus(unsigned x) { return 2 * x + 7; }

__global__ void use_b(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    struct pair p = {i, table[i % 16]};
    out[i] = mix(i, salt_b) + tri(i % 20) + pair_sum(p);
    atomicAdd(&counter, (unsigned long long)i);
}

/* host twins */
static unsigned h_mix(unsigned x, unsigned salt) { return (x * 2654435761u) ^ (salt + (x >> 3)); }
static unsigned h_tri(unsigned n) { return n ? n + h_tri(n - 1) : 0; }
static unsigned h_table(unsigned i) { return i * i + 3; }

int main(void)
{
    pw_report rep = pw_report_start("rdc_link");
    unsigned *d;
    CHECK(cudaMalloc(&d, N * sizeof(unsigned)));
    unsigned long long zero = 0;
    CHECK(cudaMemcpyToSymbol(counter, &zero, sizeof zero));
    unsigned salt = 0x5eed;
    CHECK(cudaMemcpyToSymbol(salt_b, &salt, sizeof salt));
    use_b<<<PW_DIV_UP(N, 128), 128>>>(d, N);
    CHECK_LAUNCH();
    static unsigned h[N];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++) {
        unsigned want = h_mix(i, salt) + h_tri(i % 20) + i + h_table(i % 16);
        if (!pw_expect(&rep, h[i] == want, "use_b[%u] = %u, want %u", i, h[i], want))
            break;
    }
    unsigned long long c = 0;
    CHECK(cudaMemcpyFromSymbol(&c, counter, sizeof c));
    pw_expect(&rep, c == (unsigned long long)N * (N - 1) / 2, "counter %llu, want %llu", c,
              (unsigned long long)N * (N - 1) / 2);

    fill_b<<<PW_DIV_UP(N, 64), 64>>>(d, N);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++)
        if (!pw_expect(&rep, h[i] == 2 * (i + salt) + 7, "fill_b[%u] = %u, want %u", i, h[i], 2 * (i + salt) + 7))
            break;
    CHECK(cudaFree(d));
    return pw_finish(&rep);
}
