/*
 * multidev.cu: two devices (runtime-only; the harness runs it with
 * PTXWAVE_EMU_DEVICES=2, so it needs no GPU at all).
 *
 * A cudaSetDevice loop: each device gets its own buffer, filled by a
 * kernel launched on it (buf_d[i] = (d + 1) * i + d, checked on the host);
 * each device has its own primary context and memory accounting (a 64 MiB
 * allocation on device 1 lowers device 1's free memory, not device 0's);
 * the driver names each buffer's device (CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL).
 * Peer access (CUDA Runtime API "Peer Device Memory Access"): device 0 can
 * access device 1; enabling twice is cudaErrorPeerAccessAlreadyEnabled,
 * disabling twice cudaErrorPeerAccessNotEnabled; with access enabled a
 * kernel on device 0 reads device 1's buffer; cudaMemcpyPeer and
 * cudaMemcpyPeerAsync copy between the devices; the P2P attributes say
 * access is supported; cudaDeviceReset takes the peer access with the
 * context.
 */
#include <cuda.h>

#include "check.h"

#define N 8192

__global__ void fill(unsigned *p, unsigned mul, unsigned add, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        p[i] = mul * i + add;
}

__global__ void add_from(unsigned *dst, const unsigned *peer, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        dst[i] += peer[i];
}

static void expect_buf(pw_report *rep, const unsigned *d, unsigned mul, unsigned add, const char *what)
{
    static unsigned h[N];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++)
        if (h[i] != mul * i + add) {
            pw_fail(rep, "%s: [%u] = %u, want %u", what, i, h[i], mul * i + add);
            return;
        }
}

int main(void)
{
    pw_report rep = pw_report_start("multidev");
    int n = 0;
    CHECK(cudaGetDeviceCount(&n));
    if (n < 2) {
        printf("multidev: %d device(s), this test needs 2 (PTXWAVE_EMU_DEVICES=2 on the emulator)\n", n);
        return 1;
    }
    unsigned *buf[2];
    CUcontext ctx[2];
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaMalloc(&buf[d], N * sizeof(unsigned)));
        fill<<<PW_DIV_UP(N, 128), 128>>>(buf[d], (unsigned)d + 1, (unsigned)d, N);
        CHECK_LAUNCH();
        cuCtxGetCurrent(&ctx[d]);
        int cur = -1;
        CHECK(cudaGetDevice(&cur));
        pw_expect(&rep, cur == d, "cudaGetDevice %d after cudaSetDevice(%d)", cur, d);
    }
    pw_expect(&rep, ctx[0] && ctx[1] && ctx[0] != ctx[1], "the devices share a context");
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        expect_buf(&rep, buf[d], (unsigned)d + 1, (unsigned)d, d ? "device 1's buffer" : "device 0's buffer");
        int ord = -1;
        pw_expect(&rep, cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)buf[d]) ==
                            CUDA_SUCCESS && ord == d,
                  "buffer of device %d: DEVICE_ORDINAL %d", d, ord);
    }

    /* memory accounting per device */
    size_t f0a, f1a, f0b, f1b, f1c, total;
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemGetInfo(&f0a, &total));
    CHECK(cudaSetDevice(1));
    CHECK(cudaMemGetInfo(&f1a, &total));
    void *big;
    CHECK(cudaMalloc(&big, 64u << 20));
    CHECK(cudaMemGetInfo(&f1b, &total));
    CHECK(cudaSetDevice(0));
    CHECK(cudaMemGetInfo(&f0b, &total));
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(big));
    CHECK(cudaMemGetInfo(&f1c, &total));
    pw_expect(&rep, f1a - f1b >= (64u << 20), "device 1's free memory fell by %zu for 64 MiB", f1a - f1b);
    pw_expect(&rep, f0b == f0a, "device 0's free memory moved (%zu -> %zu) with device 1's allocation", f0a, f0b);
    pw_expect(&rep, f1c >= f1a, "device 1's free memory %zu after cudaFree, %zu before", f1c, f1a);

    /* peer access */
    int can = 0, v = 0;
    CHECK(cudaDeviceCanAccessPeer(&can, 0, 1));
    pw_expect(&rep, can == 1, "cudaDeviceCanAccessPeer(0, 1) = %d", can);
    CHECK(cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrAccessSupported, 0, 1));
    pw_expect(&rep, v == 1, "cudaDevP2PAttrAccessSupported = %d", v);
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    cudaError_t e = cudaDeviceEnablePeerAccess(1, 0);
    pw_expect(&rep, e == cudaErrorPeerAccessAlreadyEnabled, "enabling twice: %s", cudaGetErrorName(e));
    CHECK(cudaDeviceDisablePeerAccess(1));
    e = cudaDeviceDisablePeerAccess(1);
    pw_expect(&rep, e == cudaErrorPeerAccessNotEnabled, "disabling twice: %s", cudaGetErrorName(e));
    cudaGetLastError();
    CHECK(cudaDeviceEnablePeerAccess(1, 0));
    /* device 0's kernel reads device 1's buffer: 1*i + 0 + 2*i + 1 */
    add_from<<<PW_DIV_UP(N, 128), 128>>>(buf[0], buf[1], N);
    CHECK_LAUNCH();
    expect_buf(&rep, buf[0], 3, 1, "device 0's buffer plus device 1's");

    /* copies between the devices */
    unsigned *back;
    CHECK(cudaMalloc(&back, N * sizeof(unsigned)));
    CHECK(cudaMemcpyPeer(back, 0, buf[1], 1, N * sizeof(unsigned)));
    expect_buf(&rep, back, 2, 1, "cudaMemcpyPeer from device 1");
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaMemcpyPeerAsync(buf[1], 1, buf[0], 0, N * sizeof(unsigned), s));
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaSetDevice(1));
    expect_buf(&rep, buf[1], 3, 1, "cudaMemcpyPeerAsync to device 1");
    CHECK(cudaSetDevice(0));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(back));
    CHECK(cudaFree(buf[0]));
    CHECK(cudaSetDevice(1));
    CHECK(cudaFree(buf[1]));
    /* a reset context has no peer access left: enabling it again succeeds */
    CHECK(cudaSetDevice(0));
    CHECK(cudaDeviceReset());
    CHECK(cudaSetDevice(0));
    e = cudaDeviceEnablePeerAccess(1, 0);
    pw_expect(&rep, e == cudaSuccess, "enabling peer access after cudaDeviceReset: %s", cudaGetErrorName(e));
    return pw_finish(&rep);
}
