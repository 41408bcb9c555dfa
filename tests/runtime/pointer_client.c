/* tests/runtime/pointer_client.c: cuPointerGetAttributes and
 * cuPointerGetAttribute on the emulator (docs/runtime.md "Memory").  Every
 * attribute of a device allocation, asked at an interior address, against
 * what the driver says elsewhere (cuMemGetAddressRange, the current
 * context, the pool it came from) and CUDA's documented values; a pointer
 * CUDA does not know answers zeros and success from cuPointerGetAttributes
 * and INVALID_VALUE from cuPointerGetAttribute; a bad attribute or a NULL
 * slot is INVALID_VALUE; SYNC_MEMOPS can be set. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "client.h"

enum { NA = 21 };

int main(void) {
  CUdevice dv;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dv, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dv));
  CK(cuCtxSetCurrent(ctx));
  CUdeviceptr d, base;
  size_t size;
  CK(cuMemAlloc(&d, 1000));
  CK(cuMemGetAddressRange(&base, &size, d + 100));
  EXPECT(base == d && size >= 1000);

  /* every attribute 1..21 but P2P_TOKENS, each into an 8-byte slot */
  CUpointer_attribute at[NA];
  unsigned long long v[NA];
  void *slots[NA];
  unsigned n = 0;
  for (int a = 1; a <= NA; a++) {
    if (a == CU_POINTER_ATTRIBUTE_P2P_TOKENS) continue;
    at[n] = (CUpointer_attribute)a;
    v[n] = 0xababababababababull;
    slots[n] = &v[n];
    n++;
  }
  CK(cuPointerGetAttributes(n, at, slots, d + 100));
  unsigned long long want[NA + 1] = {0};
  want[CU_POINTER_ATTRIBUTE_CONTEXT] = (uintptr_t)ctx;
  want[CU_POINTER_ATTRIBUTE_MEMORY_TYPE] = CU_MEMORYTYPE_DEVICE;
  want[CU_POINTER_ATTRIBUTE_DEVICE_POINTER] = d + 100;
  want[CU_POINTER_ATTRIBUTE_HOST_POINTER] = d + 100;
  want[CU_POINTER_ATTRIBUTE_SYNC_MEMOPS] = 1;
  want[CU_POINTER_ATTRIBUTE_BUFFER_ID] = base;
  want[CU_POINTER_ATTRIBUTE_RANGE_START_ADDR] = base;
  want[CU_POINTER_ATTRIBUTE_RANGE_SIZE] = size;
  want[CU_POINTER_ATTRIBUTE_MAPPED] = 1;
  want[CU_POINTER_ATTRIBUTE_ACCESS_FLAGS] = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  want[CU_POINTER_ATTRIBUTE_MAPPING_SIZE] = size;
  want[CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR] = base;
  want[CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID] = base;
  /* cuMemAlloc's memory is what cuIpcGetMemHandle takes (the emulator
   * shares it: docs/runtime.md "IPC") */
  want[CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE] = 1;
  /* IS_MANAGED, DEVICE_ORDINAL, handle types, RDMA, pool, decompress: 0 */
  for (unsigned i = 0; i < n; i++) {
    /* 4-byte attributes leave the slot's upper half alone */
    unsigned long long got = v[i];
    bool four = at[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE || at[i] == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS ||
                at[i] == CU_POINTER_ATTRIBUTE_IS_MANAGED || at[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL ||
                at[i] == CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE ||
                at[i] == CU_POINTER_ATTRIBUTE_MAPPED || at[i] == CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES ||
                at[i] == CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE ||
                at[i] == CU_POINTER_ATTRIBUTE_ACCESS_FLAGS ||
                at[i] == CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE;
    if (four) {
      EXPECT((got >> 32) == 0xababababull);
      got &= 0xffffffffull;
    }
    if (got != want[at[i]]) {
      fprintf(stderr, "attribute %d = %#llx, want %#llx\n", (int)at[i], got, want[at[i]]);
      return 1;
    }
    /* the single-attribute call agrees */
    unsigned long long one = four ? 0xababababababababull : 0;
    CK(cuPointerGetAttribute(&one, at[i], d + 100));
    if (four) one &= 0xffffffffull;
    EXPECT(one == want[at[i]]);
  }

  /* from a pool: its handle */
  CUmemoryPool pool, got_pool = NULL;
  CUdeviceptr pd;
  CK(cuDeviceGetDefaultMemPool(&pool, dv));
  CK(cuMemAllocFromPoolAsync(&pd, 256, pool, NULL));
  CUpointer_attribute pa = CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE;
  void *ps = &got_pool;
  CK(cuPointerGetAttributes(1, &pa, &ps, pd + 8));
  EXPECT(got_pool == pool);
  CK(cuMemFreeAsync(pd, NULL));

  /* a pointer CUDA does not know: zeros and success; the single call refuses */
  int host_var = 0;
  CUdeviceptr hp = (CUdeviceptr)(uintptr_t)&host_var;
  for (unsigned i = 0; i < n; i++) v[i] = ~0ull;
  CK(cuPointerGetAttributes(n, at, slots, hp));
  for (unsigned i = 0; i < n; i++) {
    unsigned long long got = v[i];
    if (got != 0 && got != 0xffffffff00000000ull) {
      fprintf(stderr, "unknown pointer: attribute %d = %#llx, want 0\n", (int)at[i], got);
      return 1;
    }
  }
  CUcontext c2;
  WANT(cuPointerGetAttribute(&c2, CU_POINTER_ATTRIBUTE_CONTEXT, hp), CUDA_ERROR_INVALID_VALUE);
  int mapped = 7;
  CK(cuPointerGetAttribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPED, hp));
  EXPECT(mapped == 0);

  /* bad input */
  CUpointer_attribute bad = (CUpointer_attribute)99;
  WANT(cuPointerGetAttributes(1, &bad, slots, d), CUDA_ERROR_INVALID_VALUE);
  void *null_slot = NULL;
  WANT(cuPointerGetAttributes(1, at, &null_slot, d), CUDA_ERROR_INVALID_VALUE);
  WANT(cuPointerGetAttributes(1, NULL, slots, d), CUDA_ERROR_INVALID_VALUE);
  CK(cuPointerGetAttributes(0, NULL, NULL, d));

  /* SYNC_MEMOPS: settable on device memory, the only settable one */
  unsigned one_flag = 1;
  CK(cuPointerSetAttribute(&one_flag, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, d));
  WANT(cuPointerSetAttribute(&one_flag, CU_POINTER_ATTRIBUTE_SYNC_MEMOPS, hp),
       CUDA_ERROR_INVALID_VALUE);
  WANT(cuPointerSetAttribute(&one_flag, CU_POINTER_ATTRIBUTE_MAPPED, d), CUDA_ERROR_INVALID_VALUE);
  CK(cuMemFree(d));
  cuDevicePrimaryCtxRelease(dv);
  printf("pointer_client: ok\n");
  return 0;
}
