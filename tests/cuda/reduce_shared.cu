/*
 * reduce_shared: tree reduction in shared memory, two passes.
 *
 * Each block of B threads sums 2*B consecutive elements: every thread adds
 * two elements, then a tree over the next power of two P >= B folds
 * sdata[t + s] into sdata[t] for s = P/2, P/4, ..., 1 (only where t + s < B),
 * with __syncthreads() between levels.  B = 48 and 96 are not powers of two,
 * so the guard matters; B = 1024 is the largest block.  A second launch of
 * the same kernel, one block of 512 threads, sums the block results.
 *
 * unsigned: wrapping sums, exact.  float: the inputs are integers in
 * [-100, 100] and n <= 65536, so every partial sum is an integer of
 * magnitude < 2^23 and every float addition is exact: the result does not
 * depend on the order, and the reference sums in any order.
 */
#include "check.h"

template <typename T>
__global__ void reduce_smem(const T *in, T *block_sums, int n)
{
    __shared__ T sdata[1024];
    unsigned tid = threadIdx.x;
    unsigned bs = blockDim.x;
    unsigned i = blockIdx.x * bs * 2 + tid;
    T v = 0;
    if (i < (unsigned)n)
        v = in[i];
    if (i + bs < (unsigned)n)
        v += in[i + bs];
    sdata[tid] = v;
    __syncthreads();

    unsigned p = 1;
    while (p < bs)
        p <<= 1;
    for (unsigned s = p / 2; s > 0; s >>= 1) {
        if (tid < s && tid + s < bs)
            sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    if (tid == 0)
        block_sums[blockIdx.x] = sdata[0];
}

template <typename T>
static void run(pw_report *rep, const char *what, const T *h_in, int n, int bs)
{
    int nb = PW_DIV_UP(n, 2 * bs);
    T *d_in, *d_part, *d_total;
    CHECK(cudaMalloc(&d_in, n * sizeof(T)));
    CHECK(cudaMalloc(&d_part, nb * sizeof(T)));
    CHECK(cudaMalloc(&d_total, sizeof(T)));
    CHECK(cudaMemcpy(d_in, h_in, n * sizeof(T), cudaMemcpyHostToDevice));

    reduce_smem<T><<<nb, bs>>>(d_in, d_part, n);
    CHECK_LAUNCH();
    /* nb <= 1024 for every configuration below: one block of 512 suffices */
    reduce_smem<T><<<1, 512>>>(d_part, d_total, nb);
    CHECK_LAUNCH();

    T *part = (T *)malloc(nb * sizeof(T));
    T total;
    CHECK(cudaMemcpy(part, d_part, nb * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&total, d_total, sizeof(T), cudaMemcpyDeviceToHost));

    T want_total = 0;
    for (int b = 0; b < nb; b++) {
        T want = 0;
        for (int i = b * 2 * bs; i < (b + 1) * 2 * bs && i < n; i++)
            want += h_in[i];
        want_total += want;
        pw_expect(rep, part[b] == want, "%s bs=%d block %d: %.17g want %.17g", what, bs, b,
                  (double)part[b], (double)want);
    }
    pw_expect(rep, total == want_total, "%s bs=%d total %.17g want %.17g", what, bs, (double)total,
              (double)want_total);
    free(part);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_part));
    CHECK(cudaFree(d_total));
}

int main(void)
{
    pw_report rep = pw_report_start("reduce_shared");
    pw_rng rng = pw_rng_seed(2);
    const int n = 65536 - 77;
    unsigned *u = (unsigned *)malloc(n * sizeof(unsigned));
    float *f = (float *)malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        u[i] = pw_rng_u32(&rng);
        f[i] = (float)pw_rng_int(&rng, -100, 100);
    }
    const int sizes[] = {1024, 96, 48};
    for (size_t k = 0; k < PW_ARRAY_SIZE(sizes); k++) {
        run<unsigned>(&rep, "u32", u, n, sizes[k]);
        run<float>(&rep, "f32", f, n, sizes[k]);
    }
    /* a tiny input: most threads of the only block load nothing */
    run<unsigned>(&rep, "u32-small", u, 37, 96);
    free(u);
    free(f);
    return pw_finish(&rep);
}
