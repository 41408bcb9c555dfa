/*
 * handles: destroyed and made-up handles (driver and runtime API).
 *
 * CUDA answers a handle that does not name a live object with
 * CUDA_ERROR_INVALID_HANDLE (streams, events, modules, functions,
 * libraries) or CUDA_ERROR_INVALID_CONTEXT (contexts), and with
 * CUDA_ERROR_INVALID_VALUE for graphs and executable graphs (the codes the
 * CUDA Driver API reference lists for each call); never a crash.  Every
 * handle here is either destroyed before use or made up (0x1234, the
 * address of a stack variable), and every call must come back with its
 * code; then the device is still usable (a kernel computes i * 3).
 */
#include "check.h"

#include <cuda.h>

static const char ptx[] = R"PTX(
.version 7.0
.target sm_70
.address_size 64
.visible .entry triple(.param .u64 p)
{
  .reg .b64 %rd<4>;
  .reg .b32 %r<3>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd2, %rd2, %rd3;
  mul.lo.u32 %r2, %r1, 3;
  st.global.u32 [%rd2], %r2;
  ret;
}
)PTX";

static void want(pw_report *rep, CUresult got, CUresult exp, const char *what)
{
    const char *g = "?", *e = "?";
    cuGetErrorName(got, &g);
    cuGetErrorName(exp, &e);
    pw_expect(rep, got == exp, "%s: %s, want %s", what, g, e);
}

int main(void)
{
    pw_report rep = pw_report_start("handles");
    CHECK(cudaFree(0)); /* cudart's context */
    int stackvar = 0;
    CUstream fake_s = (CUstream)(uintptr_t)0x1234, stack_s = (CUstream)&stackvar;
    CUevent fake_e = (CUevent)(uintptr_t)0x1234;

    /* streams */
    want(&rep, cuStreamSynchronize(fake_s), CUDA_ERROR_INVALID_HANDLE, "cuStreamSynchronize(0x1234)");
    want(&rep, cuStreamQuery(stack_s), CUDA_ERROR_INVALID_HANDLE, "cuStreamQuery(stack address)");
    CUstream s;
    if (cuStreamCreate(&s, 0) != CUDA_SUCCESS)
        return 1;
    want(&rep, cuStreamDestroy(s), CUDA_SUCCESS, "cuStreamDestroy");
    want(&rep, cuStreamSynchronize(s), CUDA_ERROR_INVALID_HANDLE, "cuStreamSynchronize(destroyed)");
    want(&rep, cuStreamDestroy(s), CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy(destroyed)");
    unsigned flags;
    want(&rep, cuStreamGetFlags(s, &flags), CUDA_ERROR_INVALID_HANDLE, "cuStreamGetFlags(destroyed)");
    cudaStream_t rs;
    CHECK(cudaStreamCreate(&rs));
    CHECK(cudaStreamDestroy(rs));
    pw_expect(&rep, cudaStreamSynchronize(rs) == cudaErrorInvalidResourceHandle,
              "cudaStreamSynchronize(destroyed) is not cudaErrorInvalidResourceHandle");
    (void)cudaGetLastError();

    /* events */
    want(&rep, cuEventRecord(fake_e, 0), CUDA_ERROR_INVALID_HANDLE, "cuEventRecord(0x1234)");
    CUevent e;
    if (cuEventCreate(&e, 0) != CUDA_SUCCESS)
        return 1;
    want(&rep, cuEventDestroy(e), CUDA_SUCCESS, "cuEventDestroy");
    want(&rep, cuEventSynchronize(e), CUDA_ERROR_INVALID_HANDLE, "cuEventSynchronize(destroyed)");
    want(&rep, cuEventQuery(e), CUDA_ERROR_INVALID_HANDLE, "cuEventQuery(destroyed)");
    want(&rep, cuStreamWaitEvent(0, e, 0), CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent(destroyed event)");

    /* modules and functions */
    CUmodule m;
    CUfunction f;
    if (cuModuleLoadData(&m, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "triple") != CUDA_SUCCESS)
        return 1;
    want(&rep, cuModuleUnload(m), CUDA_SUCCESS, "cuModuleUnload");
    want(&rep, cuModuleUnload(m), CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload(unloaded)");
    CUfunction f2;
    want(&rep, cuModuleGetFunction(&f2, m, "triple"), CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction(unloaded)");
    CUdeviceptr d;
    if (cuMemAlloc(&d, 32 * 4) != CUDA_SUCCESS)
        return 1;
    void *args[] = {&d};
    want(&rep, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL), CUDA_ERROR_INVALID_HANDLE,
         "cuLaunchKernel(function of an unloaded module)");
    want(&rep, cuLaunchKernel((CUfunction)(uintptr_t)0x1234, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL),
         CUDA_ERROR_INVALID_HANDLE, "cuLaunchKernel(0x1234)");
    int attr;
    want(&rep, cuFuncGetAttribute(&attr, CU_FUNC_ATTRIBUTE_NUM_REGS, (CUfunction)&stackvar),
         CUDA_ERROR_INVALID_HANDLE, "cuFuncGetAttribute(stack address)");
    CUlibrary lib;
    if (cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0) != CUDA_SUCCESS)
        return 1;
    want(&rep, cuLibraryUnload(lib), CUDA_SUCCESS, "cuLibraryUnload");
    want(&rep, cuLibraryUnload(lib), CUDA_ERROR_INVALID_HANDLE, "cuLibraryUnload(unloaded)");

    /* contexts */
    CUcontext primary, c;
    if (cuCtxGetCurrent(&primary) != CUDA_SUCCESS)
        return 1;
    CUdevice dev;
    if (cuDeviceGet(&dev, 0) != CUDA_SUCCESS || cuCtxCreate(&c, NULL, 0, dev) != CUDA_SUCCESS)
        return 1;
    want(&rep, cuCtxDestroy(c), CUDA_SUCCESS, "cuCtxDestroy");
    want(&rep, cuCtxDestroy(c), CUDA_ERROR_INVALID_CONTEXT, "cuCtxDestroy(destroyed)");
    want(&rep, cuCtxSetCurrent(c), CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent(destroyed)");
    want(&rep, cuCtxPushCurrent((CUcontext)(uintptr_t)0x1234), CUDA_ERROR_INVALID_CONTEXT, "cuCtxPushCurrent(0x1234)");
    if (cuCtxSetCurrent(primary) != CUDA_SUCCESS)
        return 1;

    /* graphs */
    CUgraph g;
    if (cuGraphCreate(&g, 0) != CUDA_SUCCESS)
        return 1;
    want(&rep, cuGraphDestroy(g), CUDA_SUCCESS, "cuGraphDestroy");
    want(&rep, cuGraphDestroy(g), CUDA_ERROR_INVALID_VALUE, "cuGraphDestroy(destroyed)");
    CUgraphExec x;
    want(&rep, cuGraphInstantiate(&x, g, 0), CUDA_ERROR_INVALID_VALUE, "cuGraphInstantiate(destroyed graph)");
    want(&rep, cuGraphLaunch((CUgraphExec)(uintptr_t)0x1234, 0), CUDA_ERROR_INVALID_VALUE, "cuGraphLaunch(0x1234)");

    /* still usable */
    if (cuModuleLoadData(&m, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "triple") != CUDA_SUCCESS)
        return 1;
    want(&rep, cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, NULL), CUDA_SUCCESS, "a good launch");
    unsigned h[32];
    want(&rep, cuMemcpyDtoH(h, d, sizeof h), CUDA_SUCCESS, "cuMemcpyDtoH");
    for (unsigned i = 0; i < 32; i++)
        pw_expect(&rep, h[i] == 3 * i, "out[%u] = %u, want %u", i, h[i], 3 * i);
    cuMemFree(d);
    cuModuleUnload(m);
    return pw_finish(&rep);
}
