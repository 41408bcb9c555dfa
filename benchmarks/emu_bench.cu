// benchmarks/emu_bench.cu: the kernels of emu_bench (their PTX, made by
// `nvcc -arch=sm_80 -ptx emu_bench.cu`, is benchmarks/emu_bench.ptx).
extern "C" __global__ void arith(float *out, int iters)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float a = t * 0.001f, b = 1.0001f, c = 0.5f;
    unsigned h = t;
    for (int i = 0; i < iters; i++) {
        a = a * b + c;
        c = c * 0.999f - a * 0.0001f;
        h = h * 1664525u + 1013904223u;
        h ^= h >> 13;
        b = b + (h & 1) * 1e-7f;
    }
    out[t] = a + c + (float)h;
}

#define TILE 16
extern "C" __global__ void matmul(const float *A, const float *B, float *C, int n)
{
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0;
    for (int k0 = 0; k0 < n; k0 += TILE) {
        As[threadIdx.y][threadIdx.x] = A[row * n + k0 + threadIdx.x];
        Bs[threadIdx.y][threadIdx.x] = B[(k0 + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    C[row * n + col] = acc;
}

extern "C" __global__ void reduce(const float *in, float *out, int n)
{
    float s = 0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffff, s, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

extern "C" __global__ void saxpy(const float *x, float *y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" __global__ void divergent(const unsigned *in, unsigned *out, int iters)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[t], acc = 0;
    for (int i = 0; i < iters; i++) {
        if (v & 1) acc += v * 3 + 1; else acc ^= v >> 1;
        v = v * 1103515245u + 12345u;
    }
    out[t] = acc;
}
