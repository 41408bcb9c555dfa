/*
 * mempool.cu: the stream-ordered allocator and cudaMemGetInfo (runtime-only).
 *
 * cudaDevAttrMemoryPoolsSupported is 1; cudaMallocAsync / cudaFreeAsync
 * on a stream around kernels that use the memory (reference on the host:
 * out[i] = 5 * i + 2); the default pool's used-memory attributes count
 * the allocation while it lives (at least its size) and nothing after
 * the free; the release threshold reads back what was set; a created pool
 * (cudaMemPoolCreate) serves cudaMallocFromPoolAsync, becomes the
 * device's current pool (cudaDeviceSetMemPool / GetMemPool), is trimmed
 * and destroyed.  cudaMemGetInfo: free memory drops by at least a 64 MiB
 * allocation and comes back after cudaFree (CUDA Runtime API: "free and
 * total amount of memory available for allocation by the device").
 */
#include "check.h"

#define N 4096

__global__ void affine(unsigned *p, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 5u * i + 2u;
}

__global__ void copy_out(const unsigned *p, unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = p[i];
}

static unsigned long long attr(cudaMemPool_t p, cudaMemPoolAttr a)
{
    unsigned long long v = 0; /* the attributes are cuuint64_t: 64 bits */
    CHECK(cudaMemPoolGetAttribute(p, a, &v));
    return (unsigned long long)v;
}

static void use(pw_report *rep, unsigned *d, cudaStream_t s, const char *what)
{
    static unsigned h[N];
    unsigned *out;
    CHECK(cudaMalloc(&out, N * sizeof(unsigned)));
    affine<<<PW_DIV_UP(N, 256), 256, 0, s>>>(d, N);
    copy_out<<<PW_DIV_UP(N, 96), 96, 0, s>>>(d, out, N);
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++)
        if (!pw_expect(rep, h[i] == 5u * i + 2u, "%s: out[%u] = %u", what, i, h[i]))
            break;
    CHECK(cudaFree(out));
}

int main(void)
{
    pw_report rep = pw_report_start("mempool");
    int supported = 0;
    CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, 0));
    pw_expect(&rep, supported == 1, "cudaDevAttrMemoryPoolsSupported = %d", supported);

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    cudaMemPool_t def;
    CHECK(cudaDeviceGetDefaultMemPool(&def, 0));
    unsigned long long used0 = attr(def, cudaMemPoolAttrUsedMemCurrent);

    unsigned *d;
    CHECK(cudaMallocAsync((void **)&d, N * sizeof(unsigned), s));
    unsigned long long used = attr(def, cudaMemPoolAttrUsedMemCurrent);
    unsigned long long reserved = attr(def, cudaMemPoolAttrReservedMemCurrent);
    pw_expect(&rep, used >= used0 + N * sizeof(unsigned), "used %llu after a %zu-byte allocation (was %llu)",
              used, N * sizeof(unsigned), used0);
    pw_expect(&rep, reserved >= used, "reserved %llu < used %llu", reserved, used);
    use(&rep, d, s, "cudaMallocAsync");
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaStreamSynchronize(s));
    pw_expect(&rep, attr(def, cudaMemPoolAttrUsedMemCurrent) == used0, "used %llu after the free, want %llu",
              attr(def, cudaMemPoolAttrUsedMemCurrent), used0);
    pw_expect(&rep, attr(def, cudaMemPoolAttrUsedMemHigh) >= used, "high water mark below the peak");

    unsigned long long thr = 1ull << 30;
    CHECK(cudaMemPoolSetAttribute(def, cudaMemPoolAttrReleaseThreshold, &thr));
    pw_expect(&rep, attr(def, cudaMemPoolAttrReleaseThreshold) == thr, "release threshold %llu",
              attr(def, cudaMemPoolAttrReleaseThreshold));

    cudaMemPoolProps props;
    memset(&props, 0, sizeof props);
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = 0;
    cudaMemPool_t pool, cur;
    CHECK(cudaMemPoolCreate(&pool, &props));
    CHECK(cudaMallocFromPoolAsync((void **)&d, N * sizeof(unsigned), pool, s));
    pw_expect(&rep, attr(pool, cudaMemPoolAttrUsedMemCurrent) >= N * sizeof(unsigned), "created pool: used %llu",
              attr(pool, cudaMemPoolAttrUsedMemCurrent));
    use(&rep, d, s, "cudaMallocFromPoolAsync");
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaDeviceSetMemPool(0, pool));
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    pw_expect(&rep, cur == pool, "the current pool is not the one set");
    CHECK(cudaMallocAsync((void **)&d, N * sizeof(unsigned), s)); /* from the current pool */
    pw_expect(&rep, attr(pool, cudaMemPoolAttrUsedMemCurrent) >= N * sizeof(unsigned),
              "cudaMallocAsync did not use the current pool");
    use(&rep, d, s, "cudaMallocAsync from the current pool");
    CHECK(cudaFreeAsync(d, s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaMemPoolTrimTo(pool, 0));
    /* CUDA 13's location-based forms name the same pools */
    cudaMemLocation loc;
    memset(&loc, 0, sizeof loc);
    loc.type = cudaMemLocationTypeDevice;
    loc.id = 0;
    cudaMemPool_t byloc;
    CHECK(cudaMemGetMemPool(&byloc, &loc, cudaMemAllocationTypePinned));
    pw_expect(&rep, byloc == pool, "cudaMemGetMemPool is not the current pool");
    CHECK(cudaMemGetDefaultMemPool(&byloc, &loc, cudaMemAllocationTypePinned));
    pw_expect(&rep, byloc == def, "cudaMemGetDefaultMemPool is not the default pool");
    CHECK(cudaMemSetMemPool(&loc, cudaMemAllocationTypePinned, def));
    CHECK(cudaDeviceGetMemPool(&cur, 0));
    pw_expect(&rep, cur == def, "cudaMemSetMemPool did not set the current pool");
    CHECK(cudaDeviceSetMemPool(0, def));
    CHECK(cudaMemPoolDestroy(pool));

    size_t free0, total0, free1, total1, free2, total2;
    CHECK(cudaMemGetInfo(&free0, &total0));
    void *big;
    size_t bytes = 64u << 20;
    CHECK(cudaMalloc(&big, bytes));
    CHECK(cudaMemGetInfo(&free1, &total1));
    CHECK(cudaFree(big));
    CHECK(cudaMemGetInfo(&free2, &total2));
    pw_expect(&rep, total0 == total1 && total1 == total2 && free0 <= total0, "totals %zu %zu %zu", total0, total1, total2);
    pw_expect(&rep, free1 + bytes <= free0, "free %zu before and %zu after a 64 MiB allocation", free0, free1);
    pw_expect(&rep, free2 >= free1 + bytes, "free %zu after cudaFree, %zu while allocated", free2, free1);
    CHECK(cudaStreamDestroy(s));
    return pw_finish(&rep);
}
