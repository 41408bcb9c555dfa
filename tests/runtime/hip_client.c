/* tests/runtime/hip_client.c: drives the HIP backend through the driver
 * API (test_hip.py checks what the recording stand-in saw). */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

#include "client.h"

/* Parameters: u64 at 0, u32 at 8, f32 at 12, u8 at 16, .align 8 .b8[12] at 24: 36 bytes. */
static const char ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n, .param .f32 a, .param .u8 c,\n"
    "                  .param .align 8 .b8 s[12])\n{\n  ret;\n}\n";

int main(void) {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  char name[64];
  CK(cuDeviceGetName(name, sizeof name, dev));
  printf("device: %s\n", name);
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule m;
  CK(cuModuleLoadData(&m, ptx));
  CUfunction f;
  CK(cuModuleGetFunction(&f, m, "k"));
  CUdeviceptr d, d2;
  CK(cuMemAlloc(&d, 64));
  CK(cuMemAlloc(&d2, 64));
  unsigned char h[16], back[16];
  for (int i = 0; i < 16; i++) h[i] = (unsigned char)(i * 7);
  CK(cuMemcpyHtoD(d, h, 16));
  CK(cuMemcpyDtoD(d2, d, 16));
  CK(cuMemcpyDtoH(back, d2, 16));
  if (memcmp(h, back, 16)) return 2;
  CK(cuMemsetD32(d, 0x01020304, 4));
  CUstream s;
  CK(cuStreamCreate(&s, 0));
  CK(cuMemcpyHtoDAsync(d, h, 8, s));
  /* the same arguments through kernelParams and through the extra buffer */
  unsigned long long p = 0x1122334455667788ull;
  unsigned n = 0xa1b2c3d4u;
  float a = 1.0f;  /* 0x3f800000 */
  unsigned char c = 0x5a;
  unsigned char sarr[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  void *params[] = {&p, &n, &a, &c, sarr};
  CK(cuLaunchKernel(f, 3, 2, 1, 64, 1, 1, 128, s, params, NULL));
  unsigned char buf[36] = {0};
  memcpy(buf, &p, 8);
  memcpy(buf + 8, &n, 4);
  memcpy(buf + 12, &a, 4);
  buf[16] = c;
  memcpy(buf + 24, sarr, 12);
  size_t size = sizeof buf;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  CK(cuLaunchKernel(f, 1, 1, 1, 32, 2, 1, 0, NULL, NULL, extra));
  /* events on the user stream: the record must not wait for the stream */
  CUevent e0, e1;
  CK(cuEventCreate(&e0, CU_EVENT_DEFAULT));
  CK(cuEventCreate(&e1, CU_EVENT_BLOCKING_SYNC));
  CK(cuEventRecord(e0, s));
  CK(cuEventRecord(e1, s));
  CUresult q1 = cuEventQuery(e1);
  CK(cuStreamWaitEvent(NULL, e1, 0));
  CK(cuEventSynchronize(e1));
  CUresult q2 = cuEventQuery(e1);
  float ms = -1;
  CK(cuEventElapsedTime(&ms, e0, e1));
  printf("events: query %d, after sync %d, elapsed %.3f ms\n", (int)q1, (int)q2, ms);
  CK(cuEventDestroy(e0));
  CK(cuEventDestroy(e1));
  int sms = 0, clock = 0, optin = 0, warp = 0;
  CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
  CK(cuDeviceGetAttribute(&clock, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev));
  CK(cuDeviceGetAttribute(&optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev));
  CK(cuDeviceGetAttribute(&warp, CU_DEVICE_ATTRIBUTE_WARP_SIZE, dev));
  printf("attributes: sms %d, clock %d, smem optin %d, warp %d\n", sms, clock, optin, warp);
  /* no grid barrier for AMD yet (docs/runtime.md "Cooperative launch"):
   * the attribute says so and a cooperative launch is refused, named */
  int coop = -1;
  CK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
  CUresult cr = cuLaunchCooperativeKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params);
  printf("cooperative: attribute %d, launch %d\n", coop, (int)cr);
  CK(cuStreamSynchronize(s));
  CK(cuStreamDestroy(s));
  CK(cuMemFree(d));
  CK(cuMemFree(d2));
  CK(cuModuleUnload(m));
  puts("hip_client: ok");
  return 0;
}
