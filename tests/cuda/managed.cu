/*
 * managed.cu: managed memory (runtime-only).
 *
 * cudaDevAttrManagedMemory and cudaDevAttrConcurrentManagedAccess are 1;
 * cudaMallocManaged memory and a __managed__ variable are written by the
 * host, transformed by a kernel
 * (a[i] = 3 * a[i] + 1), and read back by the host with no copy
 * (reference: the same formula on the host); the driver's pointer
 * attributes say it is managed and device memory; cudaMemAdvise and
 * cudaMemPrefetchAsync are accepted, and cudaMemRangeGetAttribute reads
 * back what they set (CUDA Runtime API, cudaMemRangeGetAttribute: read
 * mostly 1, the preferred location, the accessed-by list padded with
 * cudaInvalidDeviceId, the last prefetch location, per range after
 * cudaMemPrefetchBatchAsync); cudaMemGetInfo's free
 * memory drops by at least a 64 MiB managed allocation and comes back
 * after cudaFree.
 */
#include <cuda.h>

#include "check.h"

#define N (1 << 16)

__managed__ int counters[4];

__global__ void bump(void)
{
    counters[threadIdx.x] += (int)threadIdx.x + 1;
}

__global__ void affine(unsigned *a, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        a[i] = 3u * a[i] + 1u;
}

static int range_int(cudaMemRangeAttribute a, const void *p, size_t n)
{
    int v = 12345;
    CHECK(cudaMemRangeGetAttribute(&v, sizeof v, a, p, n));
    return v;
}

int main(void)
{
    pw_report rep = pw_report_start("managed");
    int dev = 0, v = 0;
    CHECK(cudaSetDevice(dev));
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrManagedMemory, dev));
    if (v != 1) pw_fail(&rep, "cudaDevAttrManagedMemory %d, want 1", v);
    CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrConcurrentManagedAccess, dev));
    if (v != 1) pw_fail(&rep, "cudaDevAttrConcurrentManagedAccess %d, want 1", v);

    unsigned *a;
    CHECK(cudaMallocManaged(&a, N * sizeof(unsigned), cudaMemAttachGlobal));
    for (unsigned i = 0; i < N; i++)
        a[i] = i ^ 0x5a5a;
    affine<<<PW_DIV_UP(N, 256), 256>>>(a, N);
    CHECK_LAUNCH();
    for (unsigned i = 0; i < N; i++)
        if (a[i] != 3u * (i ^ 0x5a5a) + 1u)
            pw_fail(&rep, "a[%u] = %u, want %u", i, a[i], 3u * (i ^ 0x5a5a) + 1u);

    /* the driver's view of the pointer */
    unsigned managed = 0, type = 0;
    int ordinal = -1;
    if (cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)a) != CUDA_SUCCESS ||
        managed != 1)
        pw_fail(&rep, "CU_POINTER_ATTRIBUTE_IS_MANAGED %u, want 1", managed);
    if (cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)(a + 100)) != CUDA_SUCCESS ||
        type != CU_MEMORYTYPE_DEVICE)
        pw_fail(&rep, "CU_POINTER_ATTRIBUTE_MEMORY_TYPE %u, want device", type);
    if (cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)a) != CUDA_SUCCESS ||
        ordinal != dev)
        pw_fail(&rep, "CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL %d, want %d", ordinal, dev);
    unsigned *plain;
    CHECK(cudaMalloc(&plain, 4096));
    managed = 7;
    if (cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)plain) != CUDA_SUCCESS ||
        managed != 0)
        pw_fail(&rep, "cudaMalloc memory: IS_MANAGED %u, want 0", managed);
    CHECK(cudaFree(plain));

    /* advice and prefetches, read back */
    size_t bytes = N * sizeof(unsigned);
    cudaMemLocation here = {cudaMemLocationTypeDevice, dev};
    cudaMemLocation host = {cudaMemLocationTypeHost, 0};
    if (range_int(cudaMemRangeAttributeReadMostly, a, bytes) != 0)
        pw_fail(&rep, "read mostly before any advice");
    if (range_int(cudaMemRangeAttributePreferredLocation, a, bytes) != cudaInvalidDeviceId)
        pw_fail(&rep, "a preferred location before any advice");
    CHECK(cudaMemAdvise(a, bytes, cudaMemAdviseSetReadMostly, here));
    if (range_int(cudaMemRangeAttributeReadMostly, a, bytes) != 1)
        pw_fail(&rep, "cudaMemAdviseSetReadMostly not read back");
    CHECK(cudaMemAdvise(a, bytes / 2, cudaMemAdviseSetPreferredLocation, here));
    if (range_int(cudaMemRangeAttributePreferredLocation, a, bytes / 2) != dev)
        pw_fail(&rep, "preferred location of the first half: want device %d", dev);
    if (range_int(cudaMemRangeAttributePreferredLocation, a, bytes) != cudaInvalidDeviceId)
        pw_fail(&rep, "preferred location of the whole range (half advised): want cudaInvalidDeviceId");
    CHECK(cudaMemAdvise(a, bytes, cudaMemAdviseSetAccessedBy, host));
    int by[3] = {7, 7, 7};
    CHECK(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, a, bytes));
    if (by[0] != cudaCpuDeviceId || by[1] != cudaInvalidDeviceId || by[2] != cudaInvalidDeviceId)
        pw_fail(&rep, "accessed by {%d, %d, %d}, want {cpu, invalid, invalid}", by[0], by[1], by[2]);
    CHECK(cudaMemAdvise(a, bytes, cudaMemAdviseUnsetReadMostly, here));
    if (range_int(cudaMemRangeAttributeReadMostly, a, bytes) != 0)
        pw_fail(&rep, "cudaMemAdviseUnsetReadMostly not read back");

    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemPrefetchAsync(a, bytes, here, 0, s));
    CHECK(cudaStreamSynchronize(s));
    if (range_int(cudaMemRangeAttributeLastPrefetchLocation, a, bytes) != dev)
        pw_fail(&rep, "last prefetch location: want device %d", dev);
    affine<<<PW_DIV_UP(N, 256), 256, 0, s>>>(a, N);
    CHECK(cudaMemPrefetchAsync(a, bytes, host, 0, s));
    CHECK(cudaStreamSynchronize(s));
    if (range_int(cudaMemRangeAttributeLastPrefetchLocation, a, bytes) != cudaCpuDeviceId)
        pw_fail(&rep, "last prefetch location: want the host");
    for (unsigned i = 0; i < N; i++) {
        unsigned want = 3u * (3u * (i ^ 0x5a5a) + 1u) + 1u;
        if (a[i] != want)
            pw_fail(&rep, "after the second kernel a[%u] = %u, want %u", i, a[i], want);
    }
    /* CUDA 13's batch: the first half to the device, the second to the host */
    {
        void *ptrs[2] = {a, a + N / 2};
        size_t sizes[2] = {bytes / 2, bytes / 2};
        cudaMemLocation locs[2] = {here, host};
        size_t idx[2] = {0, 1};
        CHECK(cudaMemPrefetchBatchAsync(ptrs, sizes, 2, locs, idx, 2, 0, 0));
        CHECK(cudaDeviceSynchronize());
        if (range_int(cudaMemRangeAttributeLastPrefetchLocation, a, bytes / 2) != dev ||
            range_int(cudaMemRangeAttributeLastPrefetchLocation, a + N / 2, bytes / 2) != cudaCpuDeviceId ||
            range_int(cudaMemRangeAttributeLastPrefetchLocation, a, bytes) != cudaInvalidDeviceId)
            pw_fail(&rep, "cudaMemPrefetchBatchAsync: last prefetch locations not per range");
    }
    /* not managed memory: refused */
    static unsigned stack_buf[1024];
    if (cudaMemAdvise(stack_buf, sizeof stack_buf, cudaMemAdviseSetReadMostly, here) == cudaSuccess)
        pw_fail(&rep, "cudaMemAdvise of pageable host memory succeeded");
    cudaGetLastError();
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(a));

    /* a __managed__ variable: the host writes it, a kernel adds, the host reads */
    counters[0] = 10;
    counters[3] = -4;
    bump<<<1, 4>>>();
    CHECK_LAUNCH();
    if (counters[0] != 11 || counters[1] != 2 || counters[2] != 3 || counters[3] != 0)
        pw_fail(&rep, "__managed__ counters {%d, %d, %d, %d}, want {11, 2, 3, 0}", counters[0], counters[1],
                counters[2], counters[3]);

    /* cudaMemGetInfo counts managed memory */
    size_t free0, free1, free2, total;
    CHECK(cudaMemGetInfo(&free0, &total));
    char *big;
    CHECK(cudaMallocManaged(&big, 64u << 20, cudaMemAttachGlobal));
    CHECK(cudaMemGetInfo(&free1, &total));
    CHECK(cudaFree(big));
    CHECK(cudaMemGetInfo(&free2, &total));
    if (free0 - free1 < (64u << 20))
        pw_fail(&rep, "free memory dropped by %zu bytes for a 64 MiB managed allocation", free0 - free1);
    if (free2 < free0)
        pw_fail(&rep, "free memory %zu after cudaFree, %zu before the allocation", free2, free0);
    return pw_finish(&rep);
}
