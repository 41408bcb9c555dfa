/*
 * launch_errors.cu: the launch-configuration errors (runtime-only), as the
 * CUDA driver API documents them for cuLaunchKernel (cuda.h:
 * CUDA_ERROR_INVALID_VALUE, "one or more of the parameters passed to the
 * API call is not within an acceptable range of values";
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "the kernel launch specifies too many
 * threads for the kernel's register count"; docs/runtime.md "Launch
 * configuration errors" lists them):
 *   a zero grid or block dimension, more than 1024 threads per block, a
 *   block dimension or grid dimension past the device's maximum, more
 *   dynamic shared memory than the function allows -> INVALID_VALUE;
 *   more threads than the kernel's __launch_bounds__ -> LAUNCH_OUT_OF_RESOURCES.
 * Each is refused before anything runs and is not sticky: the next launch
 * runs and its result is checked.  Through the driver API (the CUfunction of
 * the runtime's kernel, cudaGetFuncBySymbol) and through <<<>>> (cudart
 * passes the driver's code on: an error, and cudaGetLastError clears it).
 * The limits come from the device's attributes, the expected values from
 * the host.
 */
#include <cuda.h>

#include "check.h"

__global__ void fill(unsigned *p, unsigned v)
{
    extern __shared__ unsigned s[];
    unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    s[0] = v;
    __syncthreads();
    p[blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z)] = s[0] + t * 0;
}

__global__ void __launch_bounds__(128) bounded(unsigned *p) { p[threadIdx.x] = threadIdx.x + 1; }

static void expect_fill(pw_report *rep, unsigned *d, unsigned v, const char *after)
{
    unsigned h = 0;
    CHECK(cudaMemset(d, 0, sizeof(unsigned)));
    fill<<<1, 32, sizeof(unsigned)>>>(d, v);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    pw_expect(rep, h == v, "after %s: a valid launch wrote %u, want %u", after, h, v);
}

int main(void)
{
    pw_report rep = pw_report_start("launch_errors");
    int dev = 0, max_threads = 0, max_bz = 0, max_gy = 0, smem = 0;
    CHECK(cudaDeviceGetAttribute(&max_threads, cudaDevAttrMaxThreadsPerBlock, dev));
    CHECK(cudaDeviceGetAttribute(&max_bz, cudaDevAttrMaxBlockDimZ, dev));
    CHECK(cudaDeviceGetAttribute(&max_gy, cudaDevAttrMaxGridDimY, dev));
    CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlock, dev));
    unsigned *d;
    CHECK(cudaMalloc(&d, 1024 * sizeof(unsigned)));

    CUfunction f;
    CHECK(cudaGetFuncBySymbol(&f, (const void *)fill));
    unsigned v = 7;
    void *args[] = {&d, &v};
    struct {
        const char *what;
        unsigned g[3], b[3], shared;
    } bad[] = {
        {"grid.x 0", {0, 1, 1}, {32, 1, 1}, 4},
        {"block.y 0", {1, 1, 1}, {32, 0, 1}, 4},
        {"max+1 threads per block", {1, 1, 1}, {(unsigned)max_threads + 1, 1, 1}, 4},
        {"32x32x2 threads", {1, 1, 1}, {32, 32, 2}, 4},
        {"block.z past its maximum", {1, 1, 1}, {1, 1, (unsigned)max_bz + 1}, 4},
        {"grid.y past its maximum", {1, (unsigned)max_gy + 1, 1}, {32, 1, 1}, 4},
        {"dynamic shared memory past the function's limit", {1, 1, 1}, {32, 1, 1}, (unsigned)smem + 16},
    };
    for (unsigned i = 0; i < PW_ARRAY_SIZE(bad); i++) {
        CUresult r = cuLaunchKernel(f, bad[i].g[0], bad[i].g[1], bad[i].g[2], bad[i].b[0], bad[i].b[1], bad[i].b[2],
                                    bad[i].shared, NULL, args, NULL);
        pw_expect(&rep, r == CUDA_ERROR_INVALID_VALUE, "cuLaunchKernel with %s: %d, want CUDA_ERROR_INVALID_VALUE (1)",
                  bad[i].what, (int)r);
        expect_fill(&rep, d, 100 + i, bad[i].what);
    }

    /* the limits themselves are fine */
    CUresult r = cuLaunchKernel(f, 2, 1, 1, (unsigned)max_threads, 1, 1, 4, NULL, args, NULL);
    pw_expect(&rep, r == CUDA_SUCCESS, "cuLaunchKernel with %d threads: %d", max_threads, (int)r);
    CHECK(cudaDeviceSynchronize());

    /* __launch_bounds__(128): 129 threads exceed what the kernel was built for */
    CUfunction fb;
    CHECK(cudaGetFuncBySymbol(&fb, (const void *)bounded));
    void *bargs[] = {&d};
    r = cuLaunchKernel(fb, 1, 1, 1, 129, 1, 1, 0, NULL, bargs, NULL);
    pw_expect(&rep, r == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
              "129 threads of a __launch_bounds__(128) kernel: %d, want CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701)", (int)r);
    cudaGetLastError();
    expect_fill(&rep, d, 200, "the launch-bounds error");
    bounded<<<1, 128>>>(d);
    CHECK_LAUNCH();
    unsigned h[128];
    CHECK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
    for (unsigned i = 0; i < 128; i++)
        if (!pw_expect(&rep, h[i] == i + 1, "bounded[%u] = %u", i, h[i]))
            break;

    /* <<<>>>: the runtime reports the driver's refusal, cudaGetLastError clears it */
    fill<<<1, max_threads + 1, 4>>>(d, 1);
    cudaError_t e = cudaGetLastError();
    pw_expect(&rep, e != cudaSuccess, "<<<1, %d>>> launched", max_threads + 1);
    pw_expect(&rep, cudaGetLastError() == cudaSuccess, "the launch error stayed after cudaGetLastError");
    fill<<<dim3(1, 0, 1), 32, 4>>>(d, 1);
    pw_expect(&rep, cudaGetLastError() != cudaSuccess, "a grid with y = 0 launched");
    expect_fill(&rep, d, 300, "the <<<>>> errors");

    /* opting in to more dynamic shared memory makes the launch valid */
    int optin = 0;
    CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    if (optin > smem) {
        CHECK(cudaFuncSetAttribute(fill, cudaFuncAttributeMaxDynamicSharedMemorySize, smem + 16));
        r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, (unsigned)smem + 16, NULL, args, NULL);
        pw_expect(&rep, r == CUDA_SUCCESS, "%d bytes of dynamic shared memory after opting in: %d", smem + 16, (int)r);
        CHECK(cudaDeviceSynchronize());
    }
    CHECK(cudaFree(d));
    return pw_finish(&rep);
}
