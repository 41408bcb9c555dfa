/*
 * concurrent.cu: work on different streams and devices runs at the same
 * time, and a launch returns at once (runtime-only; the harness runs it
 * with PTXWAVE_EMU_DEVICES=2).  CUDA Programming Guide, "Asynchronous
 * Concurrent Execution": kernels on different streams may run
 * concurrently, and a launch is asynchronous with the host.
 *
 * From one host thread:
 *  - a kernel on device 0 spins on a flag in device 1's memory (peer
 *    access) that a kernel launched after it, on device 1, sets;
 *  - the same with two streams of one device (both blocking streams:
 *    they synchronise with the legacy stream, not with each other);
 *  - while the spinner waits, its stream and an event recorded after it
 *    are not ready (cudaStreamQuery, cudaEventQuery: cudaErrorNotReady),
 *    a host function queued after it has not run, and a copy from pinned
 *    memory queued after it returns at once (and lands after it);
 *  - event-ordered work across streams: a slow kernel on stream A writes
 *    a buffer, A records an event, stream B waits for it and a kernel on B
 *    doubles the buffer into another (checked on the host: without the
 *    wait B reads zeros).
 * A spinner gives up after a bound (about a second of emulation) and
 * reports it, so a runtime that runs the work in turn fails instead of
 * hanging.
 */
#include "check.h"

#define BOUND 20000000ull
#define N 4096

__global__ void spin_until(volatile unsigned *flag, unsigned *result, unsigned long long bound)
{
    unsigned long long n = 0;
    while (*flag == 0 && n < bound)
        n++;
    *result = *flag ? 1u : 2u;   /* 2: gave up */
}

__global__ void set_flag(volatile unsigned *flag)
{
    *flag = 1;
    __threadfence_system();
}

/* data[i] = i + 1, after a delay long enough that a reader not ordered
 * after it would read the zeros before */
__global__ void slow_write(unsigned *data, unsigned n, unsigned delay)
{
    volatile unsigned sink = 0;
    for (unsigned k = 0; k < delay; k++)
        sink = sink + k;
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        data[i] = i + 1;
}

__global__ void doubled(unsigned *out, const unsigned *in, unsigned n)
{
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = 2 * in[i];
}

static volatile int host_ran;
static void CUDART_CB mark(void *p) { host_ran = *(int *)p; }

static int check_pending(pw_report *rep, cudaStream_t s, const char *what)
{
    cudaEvent_t ev;
    CHECK(cudaEventCreate(&ev));
    CHECK(cudaEventRecord(ev, s));
    cudaError_t q = cudaStreamQuery(s), e = cudaEventQuery(ev);
    pw_expect(rep, q == cudaErrorNotReady, "%s: cudaStreamQuery while the spinner waits is %s, want cudaErrorNotReady",
             what, cudaGetErrorName(q));
    pw_expect(rep, e == cudaErrorNotReady, "%s: cudaEventQuery while the spinner waits is %s, want cudaErrorNotReady",
             what, cudaGetErrorName(e));
    CHECK(cudaEventDestroy(ev));
    return q == cudaErrorNotReady;
}

int main(void)
{
    pw_report rep = pw_report_start("concurrent");
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    pw_expect(&rep, ndev >= 2, "%d devices, the test wants 2 (PTXWAVE_EMU_DEVICES=2)", ndev);

    /* two devices: device 0 spins on device 1's memory */
    if (ndev >= 2) {
        unsigned *flag, *result, h = 0;
        cudaStream_t s0, s1;
        CHECK(cudaSetDevice(1));
        CHECK(cudaMalloc(&flag, sizeof *flag));
        CHECK(cudaMemset(flag, 0, sizeof *flag));
        CHECK(cudaStreamCreate(&s1));
        CHECK(cudaSetDevice(0));
        CHECK(cudaDeviceEnablePeerAccess(1, 0));
        CHECK(cudaMalloc(&result, sizeof *result));
        CHECK(cudaMemset(result, 0, sizeof *result));
        CHECK(cudaStreamCreate(&s0));
        host_ran = 0;
        static int one = 1;
        spin_until<<<1, 1, 0, s0>>>(flag, result, BOUND);
        CHECK(cudaGetLastError());
        CHECK(cudaLaunchHostFunc(s0, mark, &one));
        check_pending(&rep, s0, "two devices");
        pw_expect(&rep, host_ran == 0, "two devices: the host function after the spinner ran before it");
        CHECK(cudaSetDevice(1));
        set_flag<<<1, 1, 0, s1>>>(flag);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(s1));
        CHECK(cudaSetDevice(0));
        CHECK(cudaStreamSynchronize(s0));
        pw_expect(&rep, host_ran == 1, "two devices: the host function did not run by cudaStreamSynchronize");
        CHECK(cudaMemcpy(&h, result, sizeof h, cudaMemcpyDeviceToHost));
        pw_expect(&rep, h == 1, "two devices: the spinner on device 0 %s (result %u)",
                 h == 2 ? "gave up: device 1's kernel did not run while it waited" : "did not finish", h);
        CHECK(cudaStreamDestroy(s0));
        CHECK(cudaFree(result));
        CHECK(cudaSetDevice(1));
        CHECK(cudaStreamDestroy(s1));
        CHECK(cudaFree(flag));
        CHECK(cudaSetDevice(0));
    }

    /* two streams of one device */
    {
        unsigned *flag, *result, h = 0;
        cudaStream_t a, b;
        CHECK(cudaMalloc(&flag, sizeof *flag));
        CHECK(cudaMalloc(&result, sizeof *result));
        CHECK(cudaMemset(flag, 0, sizeof *flag));
        CHECK(cudaMemset(result, 0, sizeof *result));
        CHECK(cudaStreamCreate(&a));
        CHECK(cudaStreamCreate(&b));
        unsigned *pinned, *dcopy;
        CHECK(cudaMallocHost(&pinned, N * sizeof *pinned));
        CHECK(cudaMalloc(&dcopy, N * sizeof *dcopy));
        for (unsigned i = 0; i < N; i++)
            pinned[i] = 3 * i + 7;
        spin_until<<<1, 1, 0, a>>>(flag, result, BOUND);
        CHECK(cudaGetLastError());
        check_pending(&rep, a, "two streams");
        /* a copy from pinned memory queued behind the spinner returns at once */
        CHECK(cudaMemcpyAsync(dcopy, pinned, N * sizeof *pinned, cudaMemcpyHostToDevice, a));
        set_flag<<<1, 1, 0, b>>>(flag);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(b));
        CHECK(cudaStreamSynchronize(a));
        CHECK(cudaMemcpy(&h, result, sizeof h, cudaMemcpyDeviceToHost));
        pw_expect(&rep, h == 1, "two streams: the spinner on stream A %s (result %u)",
                 h == 2 ? "gave up: stream B's kernel did not run while it waited" : "did not finish", h);
        static unsigned hcopy[N];
        CHECK(cudaMemcpy(hcopy, dcopy, sizeof hcopy, cudaMemcpyDeviceToHost));
        for (unsigned i = 0; i < N; i++)
            pw_expect(&rep, hcopy[i] == 3 * i + 7, "pinned copy: [%u] = %u, want %u", i, hcopy[i], 3 * i + 7);
        CHECK(cudaFreeHost(pinned));
        CHECK(cudaFree(dcopy));

        /* event-ordered: B's kernel after A's slow one */
        unsigned *data, *out;
        static unsigned hout[N];
        CHECK(cudaMalloc(&data, N * sizeof *data));
        CHECK(cudaMalloc(&out, N * sizeof *out));
        CHECK(cudaMemset(data, 0, N * sizeof *data));
        CHECK(cudaMemset(out, 0, N * sizeof *out));
        cudaEvent_t done;
        CHECK(cudaEventCreate(&done));
        slow_write<<<4, 64, 0, a>>>(data, N, 200000);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(done, a));
        CHECK(cudaStreamWaitEvent(b, done, 0));
        doubled<<<4, 64, 0, b>>>(out, data, N);
        CHECK(cudaGetLastError());
        CHECK(cudaStreamSynchronize(b));
        CHECK(cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost));
        for (unsigned i = 0; i < N; i++)
            pw_expect(&rep, hout[i] == 2 * (i + 1), "event-ordered: out[%u] = %u, want %u", i, hout[i], 2 * (i + 1));
        CHECK(cudaEventDestroy(done));
        CHECK(cudaStreamDestroy(a));
        CHECK(cudaStreamDestroy(b));
        CHECK(cudaFree(flag));
        CHECK(cudaFree(result));
        CHECK(cudaFree(data));
        CHECK(cudaFree(out));
    }
    return pw_finish(&rep);
}
