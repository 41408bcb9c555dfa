/* tests/runtime/hip_memory_client.c: managed memory, two devices and peer
 * access, IPC and virtual memory through the driver API.  test_hip.py runs
 * it on the HIP backend against the recording stand-in (two devices:
 * PW_FAKE_HIP_DEVICES=2) and checks the hip* calls it saw; it runs on the
 * emulator too (PTXWAVE_EMU_DEVICES=2), where it checks the same answers.
 * Prints one line per family and "hip_memory_client: ok".
 *
 * Values the stand-in's calls must show (test_hip.py): a 4096-byte managed
 * allocation on device 1, a prefetch of it to device 1 and to the host
 * (-1), read-mostly (advice 1) and preferred-location device 1 (advice 3);
 * cudaMalloc on device 1 after hipSetDevice 1; peer access from device 0
 * to 1; a 256-byte peer copy 0 <- 1; P2P attribute ACCESS_SUPPORTED as
 * HIP's 1; IPC handles; VMM: the granularity, a 2-granule allocation
 * exportable as a file descriptor on device 1, mapped, given read-write
 * access for device 1, unmapped, released.
 */
#include <cuda.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client.h"

int main(void) {
  CK(cuInit(0));
  int n = 0;
  CK(cuDeviceGetCount(&n));
  EXPECT(n == 2);
  char name[256];
  CK(cuDeviceGetName(name, sizeof name, 0));
  int hip = strstr(name, "AMD") != NULL;
  CUcontext c0, c1;
  CK(cuDevicePrimaryCtxRetain(&c0, 0));
  CK(cuDevicePrimaryCtxRetain(&c1, 1));

  /* ---- managed memory on device 1 ---- */
  CK(cuCtxSetCurrent(c1));
  int v = -1;
  CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY, 1));
  EXPECT(v == 1);
  CK(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST, 1));
  EXPECT(v == (hip ? 0 : 1));   /* the stand-in says 0; the emulator's host reads in place */
  CUdeviceptr m;
  WANT(cuMemAllocManaged(&m, 4096, 3), CUDA_ERROR_INVALID_VALUE);
  CK(cuMemAllocManaged(&m, 4096, CU_MEM_ATTACH_GLOBAL));
  CUstream s;
  CK(cuStreamCreate(&s, 0));
  CUmemLocation d1 = {CU_MEM_LOCATION_TYPE_DEVICE, 1}, host = {CU_MEM_LOCATION_TYPE_HOST, 0};
  CK(cuMemPrefetchAsync(m, 4096, d1, 0, s));
  CK(cuMemAdvise(m, 4096, CU_MEM_ADVISE_SET_READ_MOSTLY, d1));
  CK(cuMemAdvise(m, 4096, CU_MEM_ADVISE_SET_PREFERRED_LOCATION, d1));
  CK(cuMemPrefetchAsync(m, 4096, host, 0, s));
  CK(cuStreamSynchronize(s));
  int rm = -5, pref = -5, last = -5;
  CK(cuMemRangeGetAttribute(&rm, 4, CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, m, 4096));
  CK(cuMemRangeGetAttribute(&pref, 4, CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION, m, 4096));
  CK(cuMemRangeGetAttribute(&last, 4, CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION, m, 4096));
  EXPECT(rm == 1 && pref == 1 && last == CU_DEVICE_CPU);
  unsigned managed = 0;
  int ord = -1;
  CK(cuPointerGetAttribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, m));
  CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, m + 8));
  EXPECT(managed == 1 && ord == 1);
  printf("managed: read mostly %d, preferred %d, last prefetch %d, device %d\n", rm, pref, last, ord);

  /* ---- two devices, peers ---- */
  CUdeviceptr a1, a0;
  CK(cuMemAlloc(&a1, 256));   /* on device 1: its context is current */
  CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a1));
  EXPECT(ord == 1);
  unsigned char pat[256], back[256];
  for (int i = 0; i < 256; i++) pat[i] = (unsigned char)(i * 7 + 1);
  CK(cuMemcpyHtoD(a1, pat, 256));
  CK(cuCtxSetCurrent(c0));
  CK(cuMemAlloc(&a0, 256));
  CK(cuPointerGetAttribute(&ord, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, a0));
  EXPECT(ord == 0);
  int can = -1;
  CK(cuDeviceCanAccessPeer(&can, 0, 1));
  EXPECT(can == 1);
  CK(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 0, 1));
  EXPECT(v == 1);
  WANT(cuDeviceGetP2PAttribute(&v, CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED, 1, 1), CUDA_ERROR_INVALID_DEVICE);
  CK(cuCtxEnablePeerAccess(c1, 0));
  WANT(cuCtxEnablePeerAccess(c1, 0), CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  WANT(cuCtxEnablePeerAccess(c0, 0), CUDA_ERROR_INVALID_DEVICE);
  CK(cuMemcpyPeer(a0, c0, a1, c1, 256));
  CK(cuMemcpyDtoH(back, a0, 256));
  EXPECT(!memcmp(back, pat, 256));
  CK(cuCtxDisablePeerAccess(c1));
  WANT(cuCtxDisablePeerAccess(c1), CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  size_t f0, t0;
  CK(cuMemGetInfo(&f0, &t0));
  EXPECT(f0 > 0 && f0 <= t0);
  printf("peers: device 0 reaches device 1, a peer copy of 256 bytes\n");

  /* ---- IPC: a handle of device memory and of an IPC event ---- */
  CUipcMemHandle ih;
  CK(cuIpcGetMemHandle(&ih, a0));
  CUevent ev, plain;
  CK(cuEventCreate(&ev, CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING));
  CK(cuEventCreate(&plain, 0));
  CUipcEventHandle eh;
  CK(cuIpcGetEventHandle(&eh, ev));
  WANT(cuIpcGetEventHandle(&eh, plain), CUDA_ERROR_INVALID_VALUE);
  if (hip) {   /* the stand-in plays the other process too */
    CUdeviceptr o;
    CK(cuIpcOpenMemHandle(&o, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS));
    EXPECT(o == a0);
    CK(cuIpcCloseMemHandle(o));
    CUevent oe;
    CK(cuIpcOpenEventHandle(&oe, eh));
    CK(cuEventDestroy(oe));
  } else {     /* a handle does not open in the process that made it */
    CUdeviceptr o;
    WANT(cuIpcOpenMemHandle(&o, ih, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS), CUDA_ERROR_INVALID_CONTEXT);
  }
  CK(cuEventDestroy(ev));
  CK(cuEventDestroy(plain));
  printf("ipc: handles made\n");

  /* ---- virtual memory on device 1 ---- */
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 1;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  size_t g = 0;
  CK(cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
  CUmemGenericAllocationHandle h;
  CK(cuMemCreate(&h, 2 * g, &prop, 0));
  CUdeviceptr va;
  CK(cuMemAddressReserve(&va, 2 * g, 0, 0, 0));
  CK(cuMemMap(va, 2 * g, 0, h, 0));
  CUmemAccessDesc acc = {{CU_MEM_LOCATION_TYPE_DEVICE, 1}, CU_MEM_ACCESS_FLAGS_PROT_READWRITE};
  CK(cuMemSetAccess(va, 2 * g, &acc, 1));
  CK(cuMemcpyHtoD(va + g, pat, 256));
  memset(back, 0, sizeof back);
  CK(cuMemcpyDtoH(back, va + g, 256));
  EXPECT(!memcmp(back, pat, 256));
  int fd = -1;
  CK(cuMemExportToShareableHandle(&fd, h, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0));
  EXPECT(fd >= 0);
  CUmemGenericAllocationHandle imp;
  CK(cuMemImportFromShareableHandle(&imp, (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
  close(fd);
  CK(cuMemRelease(imp));
  CK(cuMemUnmap(va, 2 * g));
  CK(cuMemRelease(h));
  CK(cuMemAddressFree(va, 2 * g));
  printf("vmm: granularity %zu\n", g);

  CK(cuMemFree(m));
  CK(cuMemFree(a0));
  CK(cuMemFree(a1));
  CK(cuStreamDestroy(s));
  printf("hip_memory_client: ok\n");
  return 0;
}
