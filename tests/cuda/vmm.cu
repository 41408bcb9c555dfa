/*
 * vmm.cu: virtual memory management through the driver API (runtime-only).
 *
 * CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 1.  One
 * physical allocation A (2 granules, exportable as a POSIX file
 * descriptor) is mapped at two addresses of a reservation, va and
 * va + 2g; a kernel writes through va, and the bytes read through the
 * second mapping are the same (reference: the kernel's formula on the
 * host); a copy that crosses the boundary between the two mappings reads
 * A's second half then its first.  cuMemGetAccess, cuMemRetainAllocationHandle
 * and cuMemGetAllocationPropertiesFromHandle answer for the mapping.  The
 * second mapping is unmapped (a copy from it then fails) and another
 * allocation B mapped there instead, set by cuMemsetD32, while A's
 * bytes stay.  A's file descriptor (cuMemExportToShareableHandle),
 * imported (cuMemImportFromShareableHandle) and mapped at a second
 * reservation, shows A's bytes.  cuMemGetInfo's free memory falls by the
 * 3 granules cuMemCreate made and comes back after the last release.
 * Errors as the driver API documents them: a size that is not a multiple
 * of the granularity, a non-zero offset, a mapping over a mapped range.
 */
#include <cuda.h>
#include <unistd.h>

#include "check.h"

#define CU(call)                                                             \
    do {                                                                     \
        CUresult pw_r_ = (call);                                             \
        if (pw_r_ != CUDA_SUCCESS) {                                         \
            const char *pw_n_ = "?";                                         \
            cuGetErrorName(pw_r_, &pw_n_);                                   \
            fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__,    \
                    #call, pw_n_);                                           \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

__global__ void pattern(unsigned *p, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = (unsigned)(i * 2654435761u) ^ 0xabcdu;
}

static unsigned want(size_t i) { return (unsigned)(i * 2654435761u) ^ 0xabcdu; }

int main(void)
{
    pw_report rep = pw_report_start("vmm");
    CHECK(cudaSetDevice(0));
    CHECK(cudaFree(0)); /* the primary context, current */
    int v = 0;
    CU(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0));
    pw_expect(&rep, v == 1, "VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED %d", v);

    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t g = 0;
    CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    pw_expect(&rep, g > 0 && (g & (g - 1)) == 0, "granularity %zu", g);

    /* host-located allocations (CUDA 12.2): a granularity; the "closest
     * node" location is refused for allocations */
    CUmemAllocationProp hp = prop;
    size_t hg = 0;
    hp.location.type = CU_MEM_LOCATION_TYPE_HOST;
    pw_expect(&rep, cuMemGetAllocationGranularity(&hg, &hp, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && hg,
              "no granularity for host memory");
    hp.location.type = CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT;
    pw_expect(&rep, cuMemGetAllocationGranularity(&hg, &hp, CU_MEM_ALLOC_GRANULARITY_MINIMUM) ==
                        CUDA_ERROR_INVALID_VALUE, "HOST_NUMA_CURRENT accepted");

    size_t free0, free1, free2, total;
    CU(cuMemGetInfo(&free0, &total));
    CUmemGenericAllocationHandle A, B, bad;
    pw_expect(&rep, cuMemCreate(&bad, g + 1, &prop, 0) == CUDA_ERROR_INVALID_VALUE, "a size off the granularity");
    CU(cuMemCreate(&A, 2 * g, &prop, 0));
    CU(cuMemCreate(&B, g, &prop, 0));
    CU(cuMemGetInfo(&free1, &total));
    pw_expect(&rep, free0 - free1 >= 3 * g, "free memory fell by %zu for 3 granules of %zu", free0 - free1, g);

    CUdeviceptr va;
    CU(cuMemAddressReserve(&va, 4 * g, 0, 0, 0));
    CU(cuMemMap(va, 2 * g, 0, A, 0));
    CU(cuMemMap(va + 2 * g, 2 * g, 0, A, 0));
    pw_expect(&rep, cuMemMap(va, 2 * g, 0, B, 0) == CUDA_ERROR_INVALID_VALUE, "a mapping over a mapped range");
    CUmemAccessDesc acc;
    acc.location = prop.location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemSetAccess(va, 4 * g, &acc, 1));
    unsigned long long fl = 0;
    CU(cuMemGetAccess(&fl, &prop.location, va + 3 * g));
    pw_expect(&rep, fl == CU_MEM_ACCESS_FLAGS_PROT_READWRITE, "cuMemGetAccess %llu", fl);

    size_t n = 2 * g / sizeof(unsigned);
    pattern<<<(unsigned)PW_DIV_UP(n, 256), 256>>>((unsigned *)va, n);
    CHECK_LAUNCH();
    unsigned *h = (unsigned *)malloc(2 * g);
    CU(cuMemcpyDtoH(h, va + 2 * g, 2 * g));
    for (size_t i = 0; i < n; i++)
        if (h[i] != want(i)) {
            pw_fail(&rep, "second mapping [%zu] = %u, want %u", i, h[i], want(i));
            break;
        }
    /* across the boundary: A's second half, then its first */
    CU(cuMemcpyDtoH(h, va + g, 2 * g));
    for (size_t i = 0; i < n; i++) {
        size_t j = (i + n / 2) % n;
        if (h[i] != want(j)) {
            pw_fail(&rep, "across the mappings [%zu] = %u, want %u", i, h[i], want(j));
            break;
        }
    }

    CUmemGenericAllocationHandle R;
    CU(cuMemRetainAllocationHandle(&R, (void *)(va + 2 * g + 100)));
    pw_expect(&rep, R == A, "cuMemRetainAllocationHandle: not the allocation mapped there");
    CUmemAllocationProp got;
    CU(cuMemGetAllocationPropertiesFromHandle(&got, R));
    pw_expect(&rep, got.location.id == 0 && got.requestedHandleTypes == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
              "properties: device %d, handle types %d", got.location.id, (int)got.requestedHandleTypes);
    CU(cuMemRelease(R));

    /* unmap the second mapping, map B there */
    CU(cuMemUnmap(va + 2 * g, 2 * g));
    pw_expect(&rep, cuMemcpyDtoH(h, va + 2 * g, 16) != CUDA_SUCCESS, "a copy from an unmapped range succeeded");
    CU(cuMemMap(va + 2 * g, g, 0, B, 0));
    CU(cuMemSetAccess(va + 2 * g, g, &acc, 1));
    CU(cuMemsetD32(va + 2 * g, 0x77777777u, g / 4));
    CU(cuMemcpyDtoH(h, va + 2 * g, g));
    pw_expect(&rep, h[0] == 0x77777777u && h[g / 4 - 1] == 0x77777777u, "B through the new mapping: %x", h[0]);
    CU(cuMemcpyDtoH(h, va, 2 * g));
    pw_expect(&rep, h[0] == want(0) && h[n - 1] == want(n - 1), "A changed by B's memset");

    /* A's file descriptor, imported and mapped elsewhere */
    int fd = -1;
    CU(cuMemExportToShareableHandle(&fd, A, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    pw_expect(&rep, fd >= 0, "exported descriptor %d", fd);
    CUmemGenericAllocationHandle I;
    CU(cuMemImportFromShareableHandle(&I, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr va2;
    CU(cuMemAddressReserve(&va2, 2 * g, 0, 0, 0));
    CU(cuMemMap(va2, 2 * g, 0, I, 0));
    CU(cuMemSetAccess(va2, 2 * g, &acc, 1));
    CU(cuMemcpyDtoH(h, va2, 2 * g));
    for (size_t i = 0; i < n; i++)
        if (h[i] != want(i)) {
            pw_fail(&rep, "imported [%zu] = %u, want %u", i, h[i], want(i));
            break;
        }
    pw_expect(&rep, cuMemMap(va2, 2 * g, g, I, 0) == CUDA_ERROR_INVALID_VALUE, "a non-zero offset");

    CU(cuMemUnmap(va2, 2 * g));
    CU(cuMemRelease(I));
    CU(cuMemAddressFree(va2, 2 * g));
    CU(cuMemUnmap(va, 3 * g));
    CU(cuMemRelease(A));
    CU(cuMemRelease(B));
    pw_expect(&rep, cuMemRelease(B) == CUDA_ERROR_INVALID_VALUE, "B released twice");
    CU(cuMemAddressFree(va, 4 * g));
    CU(cuMemGetInfo(&free2, &total));
    pw_expect(&rep, free2 >= free0, "free memory %zu after the releases, %zu before", free2, free0);
    free(h);
    return pw_finish(&rep);
}
