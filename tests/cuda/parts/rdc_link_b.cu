/*
 * parts/rdc_link_b.cu: the second file of tests/cuda/rdc_link.cu (built
 * together with it, nvcc -rdc=true): the definitions rdc_link.cu uses, and
 * a kernel that calls back into rdc_link.cu.
 */
struct pair {
    unsigned a, b;
};

__device__ unsigned long long counter;
__device__ unsigned salt_b;
__constant__ unsigned table[16] = {3, 4, 7, 12, 19, 28, 39, 52, 67, 84, 103, 124, 147, 172, 199, 228};

extern __device__ unsigned twice_plus(unsigned x);

__device__ __noinline__ unsigned mix(unsigned x, unsigned salt) { return (x * 2654435761u) ^ (salt + (x >> 3)); }
__device__ __noinline__ unsigned tri(unsigned n) { return n ? n + tri(n - 1) : 0; }
__device__ __noinline__ unsigned pair_sum(struct pair p) { return p.a + p.b; }

__global__ void fill_b(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = twice_plus(i + salt_b);
}
