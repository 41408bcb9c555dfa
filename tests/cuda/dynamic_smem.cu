/*
 * dynamic_smem: extern __shared__ arrays sized at launch.
 *
 *  - reverse_mixed: one dynamic buffer carved into a float array and a
 *    double array (offset rounded up to 8 bytes); each block reverses its
 *    segment through it.  Blocks of 96 and 33 (33 * 4 = 132 bytes, so the
 *    double array starts at 136).  Also reads %dynamic_smem_size, which
 *    must equal the size given at launch.
 *  - static_and_dynamic: a static __shared__ array next to a dynamic one:
 *    they must not overlap.
 *  - typed_view<T>: the same extern __shared__ symbol seen as int and as
 *    double in two template instances (the usual idiom: one raw byte array).
 *  - big_dynamic: 64 KiB of dynamic shared memory, more than the default
 *    48 KiB limit, after cudaFuncSetAttribute(MaxDynamicSharedMemorySize);
 *    16384 ints read back in the order i * 7919 mod 16384 (7919 is odd, so
 *    this is a permutation).
 */
#include "check.h"

__global__ void reverse_mixed(const float *fin, const double *din, float *fout, double *dout, unsigned *dsmem_size,
                              int n)
{
    extern __shared__ unsigned char smem[];
    unsigned bs = blockDim.x, t = threadIdx.x;
    float *f = (float *)smem;
    double *d = (double *)(smem + ((bs * sizeof(float) + 7) & ~(size_t)7));
    int g = blockIdx.x * bs + t;
    f[t] = g < n ? fin[g] : 0.0f;
    d[t] = g < n ? din[g] : 0.0;
    __syncthreads();
    /* the segment of the last block is shorter: reverse only what exists */
    int len = min((int)bs, n - (int)(blockIdx.x * bs));
    if ((int)t < len) {
        fout[g] = f[len - 1 - t];
        dout[g] = d[len - 1 - t];
    }
    if (g == 0) {
        unsigned s;
#ifdef PTXWAVE_NATIVE
        /* native twin (benchmarks/native/cuda_on_hip.h defines the macro):
         * %dynamic_smem_size, the launch's dynamic shared memory bytes (PTX ISA
         * "Special registers"): COV5's hidden_dynamic_lds_size argument */
        s = pw_dynamic_smem_size();
#else
        asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(s));
#endif
        *dsmem_size = s;
    }
}

__global__ void static_and_dynamic(const int *in, int *out)
{
    __shared__ int st[32];
    extern __shared__ int dyn[];
    int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    if (t < 32)
        st[t] = 1000 + t;
    dyn[t] = in[g];
    __syncthreads();
    out[g] = dyn[(t + 1) % blockDim.x] + st[t % 32];
}

template <typename T>
__device__ T *typed_shared()
{
    extern __shared__ __align__(16) unsigned char raw[];
    return reinterpret_cast<T *>(raw);
}

template <typename T>
__global__ void typed_view(const T *in, T *out)
{
    T *s = typed_shared<T>();
    int t = threadIdx.x, g = blockIdx.x * blockDim.x + t;
    s[t] = in[g];
    __syncthreads();
    out[g] = s[blockDim.x - 1 - t] + s[t];
}

#define BIG_INTS 16384 /* 64 KiB */

__global__ void big_dynamic(const int *in, int *out)
{
    extern __shared__ int big[];
    for (int i = threadIdx.x; i < BIG_INTS; i += blockDim.x)
        big[i] = in[blockIdx.x * BIG_INTS + i];
    __syncthreads();
    for (int i = threadIdx.x; i < BIG_INTS; i += blockDim.x)
        out[blockIdx.x * BIG_INTS + i] = big[(i * 7919) % BIG_INTS];
}

int main(void)
{
    pw_report rep = pw_report_start("dynamic_smem");
    pw_rng rng = pw_rng_seed(15);

    /* reverse_mixed */
    const int n = 1000;
    float *fin = (float *)malloc(n * sizeof(float)), *fout = (float *)malloc(n * sizeof(float));
    double *din = (double *)malloc(n * sizeof(double)), *dout = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        fin[i] = pw_rng_float(&rng, -1.0f, 1.0f);
        din[i] = (double)pw_rng_u64(&rng);
    }
    float *dfin, *dfout;
    double *ddin, *ddout;
    unsigned *dsz;
    CHECK(cudaMalloc(&dfin, n * sizeof(float)));
    CHECK(cudaMalloc(&dfout, n * sizeof(float)));
    CHECK(cudaMalloc(&ddin, n * sizeof(double)));
    CHECK(cudaMalloc(&ddout, n * sizeof(double)));
    CHECK(cudaMalloc(&dsz, sizeof(unsigned)));
    CHECK(cudaMemcpy(dfin, fin, n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(ddin, din, n * sizeof(double), cudaMemcpyHostToDevice));
    const int sizes[] = {96, 33};
    for (size_t k = 0; k < PW_ARRAY_SIZE(sizes); k++) {
        int bs = sizes[k];
        size_t bytes = ((bs * sizeof(float) + 7) & ~(size_t)7) + bs * sizeof(double);
        reverse_mixed<<<PW_DIV_UP(n, bs), bs, bytes>>>(dfin, ddin, dfout, ddout, dsz, n);
        CHECK_LAUNCH();
        unsigned sz;
        CHECK(cudaMemcpy(fout, dfout, n * sizeof(float), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(dout, ddout, n * sizeof(double), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(&sz, dsz, sizeof(unsigned), cudaMemcpyDeviceToHost));
        pw_expect(&rep, sz == bytes, "bs=%d %%dynamic_smem_size=%u want %zu", bs, sz, bytes);
        for (int i = 0; i < n; i++) {
            int b = i / bs, base = b * bs, len = n - base < bs ? n - base : bs;
            int src = base + (len - 1 - (i - base));
            pw_expect(&rep, f2u(fout[i]) == f2u(fin[src]) && d2u(dout[i]) == d2u(din[src]),
                      "reverse bs=%d [%d]: got %a/%a want [%d] %a/%a", bs, i, fout[i], dout[i], src, fin[src], din[src]);
        }
    }

    /* static_and_dynamic: 4 blocks of 48 */
    {
        const int bs = 48, m = 4 * bs;
        int in[m], out[m];
        for (int i = 0; i < m; i++)
            in[i] = (int)(pw_rng_u32(&rng) % 100000);
        int *di, *dout2;
        CHECK(cudaMalloc(&di, sizeof(in)));
        CHECK(cudaMalloc(&dout2, sizeof(out)));
        CHECK(cudaMemcpy(di, in, sizeof(in), cudaMemcpyHostToDevice));
        static_and_dynamic<<<4, bs, bs * sizeof(int)>>>(di, dout2);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, dout2, sizeof(out), cudaMemcpyDeviceToHost));
        for (int i = 0; i < m; i++) {
            int t = i % bs, b = i / bs;
            int want = in[b * bs + (t + 1) % bs] + 1000 + t % 32;
            pw_expect(&rep, out[i] == want, "static+dynamic [%d]=%d want %d", i, out[i], want);
        }
        CHECK(cudaFree(di));
        CHECK(cudaFree(dout2));
    }

    /* typed_view<int> and typed_view<double>: 2 blocks of 64 */
    {
        const int bs = 64, m = 2 * bs;
        int ii[m], io[m];
        double di_[m], do_[m];
        for (int i = 0; i < m; i++) {
            ii[i] = (int)(pw_rng_u32(&rng) >> 2);
            di_[i] = (double)(pw_rng_u32(&rng) >> 8);
        }
        int *dii, *dio;
        double *ddi, *ddo;
        CHECK(cudaMalloc(&dii, sizeof(ii)));
        CHECK(cudaMalloc(&dio, sizeof(io)));
        CHECK(cudaMalloc(&ddi, sizeof(di_)));
        CHECK(cudaMalloc(&ddo, sizeof(do_)));
        CHECK(cudaMemcpy(dii, ii, sizeof(ii), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(ddi, di_, sizeof(di_), cudaMemcpyHostToDevice));
        typed_view<int><<<2, bs, bs * sizeof(int)>>>(dii, dio);
        CHECK_LAUNCH();
        typed_view<double><<<2, bs, bs * sizeof(double)>>>(ddi, ddo);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(io, dio, sizeof(io), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(do_, ddo, sizeof(do_), cudaMemcpyDeviceToHost));
        for (int i = 0; i < m; i++) {
            int t = i % bs, b = i / bs;
            int wi = ii[b * bs + bs - 1 - t] + ii[i]; /* both < 2^30: no overflow */
            double wd = di_[b * bs + bs - 1 - t] + di_[i]; /* integers < 2^25: exact */
            pw_expect(&rep, io[i] == wi && do_[i] == wd, "typed [%d] %d/%g want %d/%g", i, io[i], do_[i], wi, wd);
        }
        CHECK(cudaFree(dii));
        CHECK(cudaFree(dio));
        CHECK(cudaFree(ddi));
        CHECK(cudaFree(ddo));
    }

    /* big_dynamic: 3 blocks of 1024 threads, 64 KiB each */
    {
        const int blocks = 3, m = blocks * BIG_INTS;
        int *in = (int *)malloc(m * sizeof(int)), *out = (int *)malloc(m * sizeof(int));
        for (int i = 0; i < m; i++)
            in[i] = (int)pw_rng_u32(&rng);
        int *dbin, *dbout;
        CHECK(cudaMalloc(&dbin, m * sizeof(int)));
        CHECK(cudaMalloc(&dbout, m * sizeof(int)));
        CHECK(cudaMemcpy(dbin, in, m * sizeof(int), cudaMemcpyHostToDevice));
        CHECK(cudaFuncSetAttribute(big_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, BIG_INTS * sizeof(int)));
        big_dynamic<<<blocks, 1024, BIG_INTS * sizeof(int)>>>(dbin, dbout);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, dbout, m * sizeof(int), cudaMemcpyDeviceToHost));
        for (int b = 0; b < blocks; b++)
            for (int i = 0; i < BIG_INTS; i++) {
                int want = in[b * BIG_INTS + (int)(((long)i * 7919) % BIG_INTS)];
                pw_expect(&rep, out[b * BIG_INTS + i] == want, "big block %d [%d]=%d want %d", b, i,
                          out[b * BIG_INTS + i], want);
            }
        free(in);
        free(out);
        CHECK(cudaFree(dbin));
        CHECK(cudaFree(dbout));
    }

    free(fin); free(fout); free(din); free(dout);
    CHECK(cudaFree(dfin)); CHECK(cudaFree(dfout)); CHECK(cudaFree(ddin)); CHECK(cudaFree(ddout)); CHECK(cudaFree(dsz));
    return pw_finish(&rep);
}
