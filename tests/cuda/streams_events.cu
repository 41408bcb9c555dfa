/*
 * streams_events: the runtime API around kernels (for the libcuda shim).
 *
 *  - device queries: cudaGetDeviceCount, cudaGetDeviceProperties (warpSize
 *    32, maxThreadsPerBlock >= 1024), cudaDeviceGetAttribute, cudaMemGetInfo
 *    (free <= total), cudaFuncGetAttributes,
 *    cudaOccupancyMaxActiveBlocksPerMultiprocessor (>= 1).
 *  - pinned host memory (cudaMallocHost / cudaHostAlloc), cudaMemcpyAsync in
 *    both directions and device to device, cudaMemsetAsync, cudaMallocPitch
 *    and cudaMemcpy2D.
 *  - two blocking streams and one non-blocking stream; events recorded in
 *    one stream and waited on by another (cudaStreamWaitEvent), so stream B
 *    consumes what stream A produced; cudaEventSynchronize,
 *    cudaEventElapsedTime (only checked to be >= 0), cudaEventQuery and
 *    cudaStreamQuery after synchronization.
 *  - the legacy default stream: a kernel on stream 0 after a kernel on a
 *    blocking stream sees its writes (legacy default-stream semantics).
 *  - cudaLaunchHostFunc: a host callback enqueued after a kernel runs after
 *    it, and sets a flag.
 */
#include "check.h"

__global__ void affine(const int *in, int *out, int n, int mul, int add)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = in[i] * mul + add;
}

__global__ void combine(const int *a, const int *b, int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = a[i] - b[n - 1 - i];
}

static void CUDART_CB host_callback(void *arg)
{
    *(volatile int *)arg = 1;
}

int main(void)
{
    pw_report rep = pw_report_start("streams_events");
    int ndev = 0;
    CHECK(cudaGetDeviceCount(&ndev));
    pw_expect(&rep, ndev >= 1, "cudaGetDeviceCount: %d", ndev);
    CHECK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    pw_expect(&rep, prop.warpSize == 32, "warpSize %d", prop.warpSize);
    pw_expect(&rep, prop.maxThreadsPerBlock >= 1024, "maxThreadsPerBlock %d", prop.maxThreadsPerBlock);
    int smem_per_block = 0;
    CHECK(cudaDeviceGetAttribute(&smem_per_block, cudaDevAttrMaxSharedMemoryPerBlock, 0));
    pw_expect(&rep, smem_per_block >= 48 * 1024, "max shared memory per block %d", smem_per_block);
    size_t mfree = 0, mtotal = 0;
    CHECK(cudaMemGetInfo(&mfree, &mtotal));
    pw_expect(&rep, mtotal > 0 && mfree <= mtotal, "cudaMemGetInfo free %zu total %zu", mfree, mtotal);
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, affine));
    pw_expect(&rep, fa.maxThreadsPerBlock >= 96, "affine maxThreadsPerBlock %d", fa.maxThreadsPerBlock);
    int occ = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ, affine, 96, 0));
    pw_expect(&rep, occ >= 1, "occupancy %d", occ);

    const int n = 10000, bs = 96, nb = PW_DIV_UP(n, bs);
    int *h_in, *h_out, *h_out2;
    CHECK(cudaMallocHost(&h_in, n * sizeof(int)));
    CHECK(cudaHostAlloc(&h_out, n * sizeof(int), cudaHostAllocDefault));
    CHECK(cudaMallocHost(&h_out2, n * sizeof(int)));
    pw_rng rng = pw_rng_seed(26);
    for (int i = 0; i < n; i++)
        h_in[i] = pw_rng_int(&rng, -100000, 100000);

    int *d_in, *d_a, *d_b, *d_c, *d_copy;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_a, n * sizeof(int)));
    CHECK(cudaMalloc(&d_b, n * sizeof(int)));
    CHECK(cudaMalloc(&d_c, n * sizeof(int)));
    CHECK(cudaMalloc(&d_copy, n * sizeof(int)));

    cudaStream_t sa, sb, snb;
    CHECK(cudaStreamCreate(&sa));
    CHECK(cudaStreamCreate(&sb));
    CHECK(cudaStreamCreateWithFlags(&snb, cudaStreamNonBlocking));
    cudaEvent_t start, uploaded, a_done, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming));
    CHECK(cudaEventCreate(&a_done));
    CHECK(cudaEventCreate(&stop));

    /* stream A: upload, a = 3*in + 7 */
    CHECK(cudaEventRecord(start, sa));
    CHECK(cudaMemcpyAsync(d_in, h_in, n * sizeof(int), cudaMemcpyHostToDevice, sa));
    CHECK(cudaEventRecord(uploaded, sa));
    affine<<<nb, bs, 0, sa>>>(d_in, d_a, n, 3, 7);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(a_done, sa));
    /* stream B: b = -in + 1 after A's upload, then c = a - reverse(b) after A's kernel */
    CHECK(cudaStreamWaitEvent(sb, a_done, 0));
    affine<<<nb, bs, 0, sb>>>(d_in, d_b, n, -1, 1);
    CHECK(cudaGetLastError());
    combine<<<nb, bs, 0, sb>>>(d_a, d_b, d_c, n);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(h_out, d_c, n * sizeof(int), cudaMemcpyDeviceToHost, sb));
    CHECK(cudaEventRecord(stop, sb));
    volatile int callback_ran = 0;
    CHECK(cudaLaunchHostFunc(sb, host_callback, (void *)&callback_ran));
    /* non-blocking stream: memset, then (after the upload) a device-to-device copy of d_in */
    CHECK(cudaMemsetAsync(d_copy, 0, n * sizeof(int), snb));
    CHECK(cudaStreamWaitEvent(snb, uploaded, 0));
    CHECK(cudaMemcpyAsync(d_copy, d_in, n * sizeof(int), cudaMemcpyDeviceToDevice, snb));
    CHECK(cudaStreamSynchronize(snb));

    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaStreamSynchronize(sb));
    float ms = -1.0f;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    pw_expect(&rep, ms >= 0.0f, "cudaEventElapsedTime %g", (double)ms);
    pw_expect(&rep, cudaEventQuery(stop) == cudaSuccess, "cudaEventQuery after synchronize");
    pw_expect(&rep, cudaStreamQuery(sb) == cudaSuccess, "cudaStreamQuery after synchronize");
    pw_expect(&rep, callback_ran == 1, "cudaLaunchHostFunc callback did not run");
    for (int i = 0; i < n; i++) {
        int want = (3 * h_in[i] + 7) - (-h_in[n - 1 - i] + 1);
        pw_expect(&rep, h_out[i] == want, "streams c[%d]=%d want %d", i, h_out[i], want);
    }
    CHECK(cudaMemcpy(h_out2, d_copy, n * sizeof(int), cudaMemcpyDeviceToHost));
    pw_expect(&rep, memcmp(h_out2, h_in, n * sizeof(int)) == 0, "device-to-device copy differs");

    /* legacy default stream: ordered after work on blocking streams */
    affine<<<nb, bs, 0, sa>>>(d_in, d_a, n, 5, -2);
    CHECK(cudaGetLastError());
    affine<<<nb, bs>>>(d_a, d_b, n, 2, 0); /* stream 0 */
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h_out, d_b, n * sizeof(int), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++)
        pw_expect(&rep, h_out[i] == 2 * (5 * h_in[i] - 2), "default stream b[%d]=%d want %d", i, h_out[i],
                  2 * (5 * h_in[i] - 2));

    /* 2D copy: a 7-column window out of rows of 100 ints */
    {
        const int rows = 13, cols = 100, win = 7;
        int *d2;
        size_t pitch;
        CHECK(cudaMallocPitch(&d2, &pitch, cols * sizeof(int), rows));
        CHECK(cudaMemcpy2D(d2, pitch, h_in, cols * sizeof(int), cols * sizeof(int), rows, cudaMemcpyHostToDevice));
        int back[rows * win];
        CHECK(cudaMemcpy2D(back, win * sizeof(int), (char *)d2 + 3 * sizeof(int), pitch, win * sizeof(int), rows,
                           cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < win; c++)
                pw_expect(&rep, back[r * win + c] == h_in[r * cols + 3 + c], "memcpy2D [%d][%d]", r, c);
        CHECK(cudaFree(d2));
    }

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(uploaded));
    CHECK(cudaEventDestroy(a_done));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(sa));
    CHECK(cudaStreamDestroy(sb));
    CHECK(cudaStreamDestroy(snb));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    CHECK(cudaFree(d_copy));
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFreeHost(h_out2));
    return pw_finish(&rep);
}
