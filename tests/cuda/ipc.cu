/*
 * ipc.cu: CUDA IPC between a parent and a child process (runtime-only).
 *
 * The parent fills a cudaMalloc'ed buffer (buf[i] = i), makes an IPC
 * memory handle and an IPC event handle (an event created with
 * cudaEventInterprocess | cudaEventDisableTiming), and runs itself again
 * (fork + exec of /proc/self/exe) with both handles in hex on the command
 * line.  The child opens the memory handle (twice: the same pointer, as
 * CUDA counts opens), runs a kernel on it (buf[i] = 2 * buf[i] + 7),
 * opens the event, records and synchronises it, closes the handle twice
 * and exits 0.  The parent waits for it and reads its buffer: 2 * i + 7
 * everywhere (reference: the formula on the host); its own handle does not
 * open in itself (CUDA: another process's), and an event without
 * cudaEventInterprocess has no handle.
 *
 * The same through virtual memory management: the parent exports a
 * cuMemCreate allocation as a POSIX file descriptor (left open across the
 * exec, its number on the command line, as an application would pass it
 * over a Unix socket); the child imports it, maps it, and a kernel of its
 * own fills it (v[i] = 3 * i + 1); the parent reads that through its own
 * mapping.
 */
#include <cuda.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

#define CU(call)                                                             \
    do {                                                                     \
        CUresult pw_r_ = (call);                                             \
        if (pw_r_ != CUDA_SUCCESS) {                                         \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__,    \
                    #call, (int)pw_r_);                                      \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

#define N 100000

__global__ void fill(unsigned *p, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = i;
}

__global__ void three_plus1(unsigned *p, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 3u * i + 1u;
}

__global__ void twice_plus7(unsigned *p, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = 2u * p[i] + 7u;
}

static void to_hex(const void *p, size_t n, char *out)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static int from_hex(const char *s, void *p, size_t n)
{
    unsigned char *b = (unsigned char *)p;
    if (strlen(s) != 2 * n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        if (sscanf(s + 2 * i, "%2x", &v) != 1)
            return 0;
        b[i] = (unsigned char)v;
    }
    return 1;
}

/* A device-located, fd-exportable allocation's properties, and the
 * read-write access of device 0. */
static CUmemAllocationProp vmm_prop(void)
{
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    return prop;
}

static CUdeviceptr vmm_map(CUmemGenericAllocationHandle h, size_t size)
{
    CUdeviceptr va;
    CUmemAccessDesc acc;
    acc.location = vmm_prop().location;
    acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CU(cuMemAddressReserve(&va, size, 0, 0, 0));
    CU(cuMemMap(va, size, 0, h, 0));
    CU(cuMemSetAccess(va, size, &acc, 1));
    return va;
}

static int vmm_child(int fd, size_t size)
{
    CHECK(cudaFree(0));
    CUmemGenericAllocationHandle h;
    CU(cuMemImportFromShareableHandle(&h, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
    close(fd);
    CUdeviceptr va = vmm_map(h, size);
    three_plus1<<<PW_DIV_UP(N, 256), 256>>>((unsigned *)va, N);
    CHECK_LAUNCH();
    CU(cuMemUnmap(va, size));
    CU(cuMemAddressFree(va, size));
    CU(cuMemRelease(h));
    return 0;
}

static int run_child(char *const args[])
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid)
        return -1;
    return status;
}

static int child(const char *mem_hex, const char *ev_hex)
{
    cudaIpcMemHandle_t mh;
    cudaIpcEventHandle_t eh;
    if (!from_hex(mem_hex, &mh, sizeof mh) || !from_hex(ev_hex, &eh, sizeof eh)) {
        fprintf(stderr, "ipc child: bad handles on the command line\n");
        return 2;
    }
    unsigned *p, *q;
    CHECK(cudaIpcOpenMemHandle((void **)&p, mh, cudaIpcMemLazyEnablePeerAccess));
    CHECK(cudaIpcOpenMemHandle((void **)&q, mh, cudaIpcMemLazyEnablePeerAccess));
    if (p != q) {
        fprintf(stderr, "ipc child: the same handle opened at %p and %p\n", (void *)p, (void *)q);
        return 3;
    }
    twice_plus7<<<PW_DIV_UP(N, 256), 256>>>(p, N);
    CHECK_LAUNCH();
    cudaEvent_t e;
    CHECK(cudaIpcOpenEventHandle(&e, eh));
    CHECK(cudaEventRecord(e, 0));
    CHECK(cudaEventSynchronize(e));
    CHECK(cudaEventDestroy(e));
    CHECK(cudaIpcCloseMemHandle(q));
    CHECK(cudaIpcCloseMemHandle(p));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "child"))
        return child(argv[2], argv[3]);
    if (argc == 4 && !strcmp(argv[1], "vmm-child"))
        return vmm_child(atoi(argv[2]), (size_t)strtoull(argv[3], NULL, 10));
    pw_report rep = pw_report_start("ipc");
    unsigned *buf;
    CHECK(cudaMalloc(&buf, N * sizeof(unsigned)));
    fill<<<PW_DIV_UP(N, 256), 256>>>(buf, N);
    CHECK_LAUNCH();
    cudaIpcMemHandle_t mh;
    CHECK(cudaIpcGetMemHandle(&mh, buf));
    cudaEvent_t e, plain;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventInterprocess | cudaEventDisableTiming));
    cudaIpcEventHandle_t eh;
    CHECK(cudaIpcGetEventHandle(&eh, e));
    CHECK(cudaEventCreate(&plain));
    pw_expect(&rep, cudaIpcGetEventHandle(&eh, plain) != cudaSuccess, "an IPC handle of an ordinary event");
    CHECK(cudaIpcGetEventHandle(&eh, e));
    unsigned *self;
    pw_expect(&rep, cudaIpcOpenMemHandle((void **)&self, mh, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess,
              "the exporting process opened its own handle");
    cudaGetLastError();

    char mem_hex[2 * sizeof mh + 1], ev_hex[2 * sizeof eh + 1];
    to_hex(&mh, sizeof mh, mem_hex);
    to_hex(&eh, sizeof eh, ev_hex);
    char *args[] = {argv[0], (char *)"child", mem_hex, ev_hex, NULL};
    int status = run_child(args);
    pw_expect(&rep, WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child ended with status %#x", status);
    CHECK(cudaEventSynchronize(e));
    CHECK(cudaStreamWaitEvent(0, e, 0));
    static unsigned h[N];
    CHECK(cudaMemcpy(h, buf, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++)
        if (h[i] != 2u * i + 7u) {
            pw_fail(&rep, "buf[%u] = %u after the child, want %u", i, h[i], 2u * i + 7u);
            break;
        }
    CHECK(cudaEventDestroy(e));
    CHECK(cudaEventDestroy(plain));
    CHECK(cudaFree(buf));

    /* a VMM allocation's descriptor, to the child and back */
    CUmemAllocationProp prop = vmm_prop();
    size_t g = 0;
    CU(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
    size_t size = PW_DIV_UP(N * sizeof(unsigned), g) * g;
    CUmemGenericAllocationHandle vh;
    CU(cuMemCreate(&vh, size, &prop, 0));
    CUdeviceptr va = vmm_map(vh, size);
    CU(cuMemsetD32(va, 0, size / 4));
    int fd = -1;
    CU(cuMemExportToShareableHandle(&fd, vh, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
    fcntl(fd, F_SETFD, 0); /* open across the exec */
    char fd_s[16], size_s[32];
    snprintf(fd_s, sizeof fd_s, "%d", fd);
    snprintf(size_s, sizeof size_s, "%zu", size);
    char *vargs[] = {argv[0], (char *)"vmm-child", fd_s, size_s, NULL};
    status = run_child(vargs);
    close(fd);
    pw_expect(&rep, WIFEXITED(status) && WEXITSTATUS(status) == 0, "the VMM child ended with status %#x", status);
    CU(cuMemcpyDtoH(h, va, sizeof h));
    for (unsigned i = 0; i < N; i++)
        if (h[i] != 3u * i + 1u) {
            pw_fail(&rep, "VMM v[%u] = %u after the child, want %u", i, h[i], 3u * i + 1u);
            break;
        }
    CU(cuMemUnmap(va, size));
    CU(cuMemAddressFree(va, size));
    CU(cuMemRelease(vh));
    return pw_finish(&rep);
}
