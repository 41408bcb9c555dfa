/* tests/runtime/hip_graph_client.c: a captured graph on the HIP backend
 * (test_hip.py checks what the recording stand-in saw).
 *
 * Captured on a stream: launches of k with grids 1, 2, 3 (kernel argument
 * n = 10, 20, 30) and a cuMemsetD32Async of 5 words between the second
 * and third.  Nothing reaches HIP while capturing; hipMemsetD8 of 7 bytes
 * marks the end of the capture; each of two cuGraphLaunch calls must then
 * replay the four operations in capture order with their arguments, on
 * the user stream; a 9-byte hipMemsetD8 marks the end.
 */
#include <cuda.h>

#include <stdio.h>

#include "client.h"

static const char ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry k(.param .u32 n)\n{\n  ret;\n}\n";

int main(void) {
  CK(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule m;
  CUfunction f;
  CK(cuModuleLoadData(&m, ptx));
  CK(cuModuleGetFunction(&f, m, "k"));
  CUdeviceptr d;
  CK(cuMemAlloc(&d, 64));
  CUstream s;
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUgraph g;
  CUgraphExec x;
  CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (unsigned i = 1; i <= 3; i++) {
    unsigned n = 10 * i;
    void *args[] = {&n};
    if (i == 3) CK(cuMemsetD32Async(d, 0xabcd, 5, s));
    CK(cuLaunchKernel(f, i, 1, 1, 32, 1, 1, 0, s, args, NULL));
  }
  CK(cuStreamEndCapture(s, &g));
  CK(cuGraphInstantiate(&x, g, 0));
  CK(cuMemsetD8(d, 0, 7));
  CK(cuGraphLaunch(x, s));
  CK(cuGraphLaunch(x, s));
  CK(cuStreamSynchronize(s));
  CK(cuMemsetD8(d, 0, 9));
  CK(cuGraphExecDestroy(x));
  CK(cuGraphDestroy(g));
  puts("hip_graph_client: ok");
  return 0;
}
