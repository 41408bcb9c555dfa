/*
 * faults.cu: CUDA's error contract for kernel faults (runtime-only).
 *
 * A fault inside a kernel (a failed device assert, an access outside every
 * allocation, a trap) is not the launch's error: the launch succeeds and
 * the next synchronising call returns the fault (cudaErrorAssert 710,
 * cudaErrorIllegalAddress 700, cudaErrorLaunchFailure 719).  The error is
 * sticky (CUDA Runtime API, "Error Handling"; cuda.h: "the context cannot
 * be used ... must be destroyed"): every later call that uses the context
 * returns it (allocation, copies, synchronisation), also after
 * cudaGetLastError has reported it, and only cudaDeviceReset
 * (the primary context's reset) makes the device usable again, after which
 * a kernel computes the right values (host reference: 2 * i + 1).
 * The assert prints CUDA's message to stderr; that is expected.
 */
#include <assert.h>

#include "check.h"

#define N 256

__global__ void checked(const unsigned *in, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        assert(in[i] != 13u);
}

__global__ void wild(unsigned *p, unsigned far)
{
    if (threadIdx.x == 0)
        p[far] = 1u; /* far past the allocation */
}

__global__ void trap(unsigned *p)
{
    if (threadIdx.x == 5)
        __trap();
    p[threadIdx.x] = 0u;
}

__global__ void good(unsigned *out, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = 2u * i + 1u;
}

static void expect(pw_report *rep, cudaError_t got, cudaError_t want, const char *what)
{
    pw_expect(rep, got == want, "%s: %s, want %s", what, cudaGetErrorName(got), cudaGetErrorName(want));
}

/* The device works again after a reset: a fresh allocation and kernel. */
static void usable(pw_report *rep, const char *after)
{
    unsigned *d, h[N];
    CHECK(cudaMalloc(&d, sizeof h));
    good<<<PW_DIV_UP(N, 96), 96>>>(d, N);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < N; i++)
        if (!pw_expect(rep, h[i] == 2u * i + 1u, "after %s: out[%u] = %u", after, i, h[i]))
            break;
    CHECK(cudaFree(d));
}

/* The fault, then its stickiness, then the reset. */
/* An allocation made before the fault. */
static unsigned *d_before;

static void sticky(pw_report *rep, cudaError_t want, const char *what)
{
    char buf[128];
    expect(rep, cudaDeviceSynchronize(), want, what);
    void *p = NULL;
    snprintf(buf, sizeof buf, "cudaMalloc after %s", what);
    expect(rep, cudaMalloc(&p, 16), want, buf);
    unsigned h = 0;
    snprintf(buf, sizeof buf, "cudaMemcpy after %s", what);
    expect(rep, cudaMemcpy(&h, d_before, sizeof h, cudaMemcpyDeviceToHost), want, buf);
    snprintf(buf, sizeof buf, "cudaStreamSynchronize after %s", what);
    expect(rep, cudaStreamSynchronize(0), want, buf);
    snprintf(buf, sizeof buf, "cudaGetLastError after %s", what);
    expect(rep, cudaGetLastError(), want, buf);
    /* cudaGetLastError resets cudart's own record; the context stays poisoned */
    snprintf(buf, sizeof buf, "cudaMalloc after cudaGetLastError after %s", what);
    expect(rep, cudaMalloc(&p, 16), want, buf);
    CHECK(cudaDeviceReset());
    (void)cudaGetLastError(); /* cudart's record of the last failed call */
    usable(rep, what);
}

int main(void)
{
    pw_report rep = pw_report_start("faults");
    unsigned h[N];
    for (unsigned i = 0; i < N; i++)
        h[i] = i + 100u;
    h[77] = 13u;
    unsigned *d;
    usable(&rep, "start");

    CHECK(cudaMalloc(&d, sizeof h));
    CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
    d_before = d;
    checked<<<PW_DIV_UP(N, 64), 64>>>(d, N);
    expect(&rep, cudaGetLastError(), cudaSuccess, "the launch of a kernel that asserts");
    sticky(&rep, cudaErrorAssert, "a device assert");

    CHECK(cudaMalloc(&d, 64));
    d_before = d;
    wild<<<1, 32>>>(d, 1u << 28);
    sticky(&rep, cudaErrorIllegalAddress, "an illegal address");

    CHECK(cudaMalloc(&d, 64 * sizeof(unsigned)));
    d_before = d;
    trap<<<1, 64>>>(d);
    sticky(&rep, cudaErrorLaunchFailure, "a trap");
    return pw_finish(&rep);
}
