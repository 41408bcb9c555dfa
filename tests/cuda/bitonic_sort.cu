/*
 * bitonic_sort: sorting networks, checked against the host's qsort.
 *
 *  - bitonic_block: each block sorts 2*blockDim.x keys in shared memory
 *    (512 threads -> 1024 keys, 1024 threads -> 2048 keys); thread t owns
 *    the pair (i, i + j) with i = 2t - (t & (j - 1)), the index with bit j
 *    clear; a barrier after every step.  Ascending and descending; unsigned
 *    keys with many duplicates, and float keys (negative and positive, no
 *    zeros or NaNs, so equal keys are equal bit patterns).
 *  - bitonic_step: the global network for 4096 keys, one launch per (k, j)
 *    step (78 launches), 96-thread blocks with a bounds guard.
 */
#include "check.h"

template <typename T>
__global__ void bitonic_block(T *keys, int ascending)
{
    __shared__ T s[2048];
    unsigned tid = threadIdx.x;
    unsigned half = blockDim.x;
    unsigned n = 2 * half;
    T *seg = keys + (size_t)blockIdx.x * n;
    s[tid] = seg[tid];
    s[tid + half] = seg[tid + half];
    __syncthreads();
    for (unsigned k = 2; k <= n; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            unsigned i = 2 * tid - (tid & (j - 1));
            unsigned p = i + j;
            bool up = ((i & k) == 0) == (ascending != 0);
            T a = s[i], b = s[p];
            if ((a > b) == up) {
                s[i] = b;
                s[p] = a;
            }
            __syncthreads();
        }
    }
    seg[tid] = s[tid];
    seg[tid + half] = s[tid + half];
}

__global__ void bitonic_step(unsigned *keys, int n, int j, int k)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (unsigned)n)
        return;
    unsigned p = i ^ (unsigned)j;
    if (p > i) {
        bool up = (i & (unsigned)k) == 0;
        unsigned a = keys[i], b = keys[p];
        if ((a > b) == up) {
            keys[i] = b;
            keys[p] = a;
        }
    }
}

static int cmp_u32(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static int cmp_f32(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? -1 : x > y;
}

template <typename T>
static void run_block(pw_report *rep, const char *what, int nblocks, int bs, int ascending, pw_rng *rng,
                      int (*cmp)(const void *, const void *))
{
    int seg = 2 * bs;
    int n = nblocks * seg;
    T *h = (T *)malloc(n * sizeof(T));
    T *got = (T *)malloc(n * sizeof(T));
    for (int i = 0; i < n; i++) {
        if (sizeof(T) == 4 && cmp == cmp_f32) {
            float f = pw_rng_float(rng, 0.001f, 100.0f);
            if (pw_rng_u32(rng) & 1)
                f = -f;
            memcpy(&h[i], &f, sizeof(T));
        } else {
            unsigned u = pw_rng_u32(rng) % 1000; /* many duplicates */
            memcpy(&h[i], &u, sizeof(T));
        }
    }
    T *d;
    CHECK(cudaMalloc(&d, n * sizeof(T)));
    CHECK(cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice));
    bitonic_block<T><<<nblocks, bs>>>(d, ascending);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got, d, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (int b = 0; b < nblocks; b++) {
        T *ref = h + b * seg;
        qsort(ref, seg, sizeof(T), cmp);
        for (int i = 0; i < seg; i++) {
            const T *want = ascending ? &ref[i] : &ref[seg - 1 - i];
            pw_expect(rep, memcmp(&got[b * seg + i], want, sizeof(T)) == 0, "%s bs=%d %s block %d [%d]: %.9g want %.9g",
                      what, bs, ascending ? "asc" : "desc", b, i, (double)got[b * seg + i], (double)*want);
        }
    }
    free(h);
    free(got);
    CHECK(cudaFree(d));
}

int main(void)
{
    pw_report rep = pw_report_start("bitonic_sort");
    pw_rng rng = pw_rng_seed(8);

    run_block<unsigned>(&rep, "u32", 4, 512, 1, &rng, cmp_u32);
    run_block<unsigned>(&rep, "u32", 2, 1024, 0, &rng, cmp_u32);
    run_block<float>(&rep, "f32", 3, 512, 1, &rng, cmp_f32);
    run_block<float>(&rep, "f32", 1, 1024, 0, &rng, cmp_f32);

    /* global network */
    const int n = 4096, bs = 96;
    unsigned *h = (unsigned *)malloc(n * sizeof(unsigned));
    unsigned *got = (unsigned *)malloc(n * sizeof(unsigned));
    for (int i = 0; i < n; i++)
        h[i] = pw_rng_u32(&rng);
    unsigned *d;
    CHECK(cudaMalloc(&d, n * sizeof(unsigned)));
    CHECK(cudaMemcpy(d, h, n * sizeof(unsigned), cudaMemcpyHostToDevice));
    for (int k = 2; k <= n; k <<= 1)
        for (int j = k >> 1; j > 0; j >>= 1) {
            bitonic_step<<<PW_DIV_UP(n, bs), bs>>>(d, n, j, k);
            CHECK(cudaGetLastError());
        }
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(got, d, n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    qsort(h, n, sizeof(unsigned), cmp_u32);
    for (int i = 0; i < n; i++)
        pw_expect(&rep, got[i] == h[i], "global [%d]: %u want %u", i, got[i], h[i]);
    free(h);
    free(got);
    CHECK(cudaFree(d));
    return pw_finish(&rep);
}
