/* runtime/rt_memory.c: device and host memory, copies and sets in every
 * direction (synchronous and asynchronous), streams and events.
 *
 * Unified addressing: a pointer is device memory when the backend knows the
 * allocation holding it (mem_range), host memory otherwise; cuMemcpy and
 * cuMemcpyAsync copy by that rule.  Host allocations (cuMemAllocHost,
 * cuMemHostAlloc) are malloc'd and registered with the backend, so device
 * code can address them (mapped memory) and their device pointer is the host
 * pointer.
 *
 * Streams wrap a backend stream; NULL, CU_STREAM_LEGACY and
 * CU_STREAM_PER_THREAD are the backend's default stream.  Events are the
 * backend's where it has them (HIP: hipEventCreateWithFlags, Record,
 * Query, Synchronize, ElapsedTime, hipStreamWaitEvent, one to one, so a
 * record does not wait; the emulator's streams and events, rt_backend_emu.c,
 * the same); otherwise a record synchronises its stream and takes the
 * host's clock, which is then exact.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/rt.h"

#define STREAM_MAGIC 0x53747221u
#define EVENT_MAGIC 0x45767421u

struct CUstream_st {
  uint32_t magic;
  rt_bstream bs;
  unsigned flags;
  int priority;
};

struct CUevent_st {
  uint32_t magic;
  unsigned flags;
  bool recorded;
  double ms;
  void *be;                   /* the backend's event, when it has events */
};

static bool backend_events(void) { return rt_driver.backend && rt_driver.backend->event_create; }

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

rt_bstream rt_stream_backend(CUstream s, CUresult *r) {
  *r = CUDA_SUCCESS;
  if (!s || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) return NULL;
  if (!rt_handle_valid(rt_h_stream, s)) {
    *r = CUDA_ERROR_INVALID_HANDLE;
    return NULL;
  }
  return s->bs;
}

/* ---- memory ------------------------------------------------------------ */
RT_EXPORT CUresult cuMemAlloc(CUdeviceptr *dptr, size_t bytes) {
  RT_TRACE("%p, %zu", (void *)dptr, bytes);
  if (!dptr || !bytes) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r == CUDA_SUCCESS) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  uint64_t p;
  r = rt_driver.backend->mem_alloc(rt_driver.backend, bytes, &p);
  if (r == CUDA_SUCCESS) *dptr = p;
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemAllocPitch(CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height,
                                   unsigned int elem) {
  RT_TRACE("%p, %p, %zu, %zu, %u", (void *)dptr, (void *)pitch, width, height, elem);
  if (!pitch || !width || !height) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t p = (width + 255) & ~(size_t)255;
  CUresult r = cuMemAlloc(dptr, p * height);
  if (r == CUDA_SUCCESS) *pitch = p;
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemFree(CUdeviceptr dptr) {
  RT_TRACE("%#llx", (unsigned long long)dptr);
  CUresult r = rt_check_ctx();
  if (r == CUDA_SUCCESS) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!dptr) return rt_ret(CUDA_SUCCESS);
  r = rt_driver.backend->mem_free(rt_driver.backend, dptr);
  if (r == CUDA_SUCCESS) {
    rt_pool_forget(dptr);      /* cuMemFree takes cuMemAllocAsync's memory too */
    rt_managed_forget(dptr);   /* and cuMemAllocManaged's */
  }
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemGetInfo(size_t *free_bytes, size_t *total) {
  RT_TRACE("%p, %p", (void *)free_bytes, (void *)total);
  if (!free_bytes || !total) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  CUcontext c = rt_current_ctx();
  return rt_ret(rt_driver.backend->mem_info(rt_driver.backend, c ? c->device : 0, free_bytes, total));
}

RT_EXPORT CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr dptr) {
  RT_TRACE("%p, %p, %#llx", (void *)base, (void *)size, (unsigned long long)dptr);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  uint64_t b;
  size_t n;
  r = rt_driver.backend->mem_range(rt_driver.backend, dptr, &b, &n);
  if (r != CUDA_SUCCESS) return rt_ret(CUDA_ERROR_NOT_FOUND);
  if (base) *base = b;
  if (size) *size = n;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags) {
  RT_TRACE("%p, %zu, %#x", (void *)pp, bytes, flags);
  if (!pp) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  void *p = NULL;
  if (posix_memalign(&p, 4096, bytes ? bytes : 1)) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  r = rt_driver.backend->host_register(rt_driver.backend, p, bytes ? bytes : 1);
  if (r != CUDA_SUCCESS) {
    free(p);
    return rt_ret(r);
  }
  *pp = p;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemAllocHost(void **pp, size_t bytes) { return cuMemHostAlloc(pp, bytes, 0); }

RT_EXPORT CUresult cuMemFreeHost(void *p) {
  RT_TRACE("%p", p);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!p) return rt_ret(CUDA_SUCCESS);
  rt_driver.backend->host_unregister(rt_driver.backend, p);
  free(p);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemHostRegister(void *p, size_t bytes, unsigned int flags) {
  RT_TRACE("%p, %zu, %#x", p, bytes, flags);
  if (!p || !bytes) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(rt_driver.backend->host_register(rt_driver.backend, p, bytes));
}

RT_EXPORT CUresult cuMemHostUnregister(void *p) {
  RT_TRACE("%p", p);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(rt_driver.backend->host_unregister(rt_driver.backend, p));
}

RT_EXPORT CUresult cuMemHostGetDevicePointer(CUdeviceptr *dptr, void *p, unsigned int flags) {
  RT_TRACE("%p, %p, %u", (void *)dptr, p, flags);
  if (!dptr || !p || flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *dptr = (CUdeviceptr)(uintptr_t)p;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemHostGetFlags(unsigned int *flags, void *p) {
  RT_TRACE("%p, %p", (void *)flags, p);
  if (!flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *flags = CU_MEMHOSTALLOC_DEVICEMAP;
  return rt_ret(CUDA_SUCCESS);
}

static CUmemorytype kind_of(const void *p) {
  uint64_t b;
  size_t n;
  if (rt_driver.backend->mem_range(rt_driver.backend, (uint64_t)(uintptr_t)p, &b, &n) == CUDA_SUCCESS)
    return CU_MEMORYTYPE_DEVICE;
  return CU_MEMORYTYPE_HOST;
}

static CUresult copy(void *dst, CUmemorytype dk, const void *src, CUmemorytype sk, size_t bytes,
                     CUstream s, bool async) {
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  if (!bytes) return CUDA_SUCCESS;
  if (!dst || !src) return CUDA_ERROR_INVALID_VALUE;
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS && !async) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return r;
  if (dk == CU_MEMORYTYPE_UNIFIED) dk = kind_of(dst);
  if (sk == CU_MEMORYTYPE_UNIFIED) sk = kind_of(src);
  rt_fwd_mem_op();
  if (rt_capturing()) {
    /* a memcpy node of s's capture: a 3D copy of one row */
    rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMCPY};
    op.cp = (CUDA_MEMCPY3D){.srcMemoryType = sk, .dstMemoryType = dk, .WidthInBytes = bytes,
                            .Height = 1, .Depth = 1};
    if (sk == CU_MEMORYTYPE_HOST) op.cp.srcHost = src;
    else op.cp.srcDevice = (CUdeviceptr)(uintptr_t)src;
    if (dk == CU_MEMORYTYPE_HOST) op.cp.dstHost = dst;
    else op.cp.dstDevice = (CUdeviceptr)(uintptr_t)dst;
    bool captured;
    r = rt_capture_op(async ? s : NULL, &op, &captured);
    if (r != CUDA_SUCCESS || captured) return r;
  }
  return rt_fault(rt_driver.backend->memcpy(rt_driver.backend, dst, dk, src, sk, bytes, bs, async));
}

#define D(p) ((void *)(uintptr_t)(p))
#define H CU_MEMORYTYPE_HOST
#define DV CU_MEMORYTYPE_DEVICE
#define U CU_MEMORYTYPE_UNIFIED

RT_EXPORT CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  RT_TRACE("%#llx, %#llx, %zu", (unsigned long long)dst, (unsigned long long)src, n);
  return rt_ret(copy(D(dst), U, D(src), U, n, NULL, false));
}
RT_EXPORT CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  RT_TRACE("%#llx, %#llx, %zu, %p", (unsigned long long)dst, (unsigned long long)src, n, (void *)s);
  return rt_ret(copy(D(dst), U, D(src), U, n, s, true));
}
RT_EXPORT CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n) {
  RT_TRACE("%#llx, %p, %zu", (unsigned long long)dst, src, n);
  return rt_ret(copy(D(dst), DV, src, H, n, NULL, false));
}
RT_EXPORT CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n) {
  RT_TRACE("%p, %#llx, %zu", dst, (unsigned long long)src, n);
  return rt_ret(copy(dst, H, D(src), DV, n, NULL, false));
}
RT_EXPORT CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  RT_TRACE("%#llx, %#llx, %zu", (unsigned long long)dst, (unsigned long long)src, n);
  return rt_ret(copy(D(dst), DV, D(src), DV, n, NULL, false));
}
RT_EXPORT CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
  RT_TRACE("%#llx, %p, %zu, %p", (unsigned long long)dst, src, n, (void *)s);
  return rt_ret(copy(D(dst), DV, src, H, n, s, true));
}
RT_EXPORT CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s) {
  RT_TRACE("%p, %#llx, %zu, %p", dst, (unsigned long long)src, n, (void *)s);
  return rt_ret(copy(dst, H, D(src), DV, n, s, true));
}
RT_EXPORT CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
  RT_TRACE("%#llx, %#llx, %zu, %p", (unsigned long long)dst, (unsigned long long)src, n, (void *)s);
  return rt_ret(copy(D(dst), DV, D(src), DV, n, s, true));
}

static CUresult set(CUdeviceptr dst, uint32_t v, unsigned elem, size_t count, CUstream s,
                    bool async) {
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  if (!count) return CUDA_SUCCESS;
  if (!dst || dst % elem) return CUDA_ERROR_INVALID_VALUE;
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS && !async) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return r;
  rt_fwd_mem_op();
  if (rt_capturing()) {
    /* a memset node of s's capture: one row */
    rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMSET};
    op.ms = (CUDA_MEMSET_NODE_PARAMS){.dst = dst, .value = v, .elementSize = elem,
                                      .width = count, .height = 1};
    bool captured;
    r = rt_capture_op(async ? s : NULL, &op, &captured);
    if (r != CUDA_SUCCESS || captured) return r;
  }
  return rt_driver.backend->memset(rt_driver.backend, dst, v, elem, count, bs, async);
}

RT_EXPORT CUresult cuMemsetD8(CUdeviceptr d, unsigned char v, size_t n) {
  RT_TRACE("%#llx, %u, %zu", (unsigned long long)d, v, n);
  return rt_ret(set(d, v, 1, n, NULL, false));
}
RT_EXPORT CUresult cuMemsetD16(CUdeviceptr d, unsigned short v, size_t n) {
  RT_TRACE("%#llx, %u, %zu", (unsigned long long)d, v, n);
  return rt_ret(set(d, v, 2, n, NULL, false));
}
RT_EXPORT CUresult cuMemsetD32(CUdeviceptr d, unsigned int v, size_t n) {
  RT_TRACE("%#llx, %u, %zu", (unsigned long long)d, v, n);
  return rt_ret(set(d, v, 4, n, NULL, false));
}
RT_EXPORT CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char v, size_t n, CUstream s) {
  RT_TRACE("%#llx, %u, %zu, %p", (unsigned long long)d, v, n, (void *)s);
  return rt_ret(set(d, v, 1, n, s, true));
}
RT_EXPORT CUresult cuMemsetD16Async(CUdeviceptr d, unsigned short v, size_t n, CUstream s) {
  RT_TRACE("%#llx, %u, %zu, %p", (unsigned long long)d, v, n, (void *)s);
  return rt_ret(set(d, v, 2, n, s, true));
}
RT_EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s) {
  RT_TRACE("%#llx, %u, %zu, %p", (unsigned long long)d, v, n, (void *)s);
  return rt_ret(set(d, v, 4, n, s, true));
}

/* One attribute of the memory at p (CUDA Driver API, cuPointerGetAttribute):
 * CUDA_ERROR_INVALID_VALUE where it does not apply to p. */
static CUresult pointer_attribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
  CUmemorytype k = kind_of(D(p));
  uint64_t base = 0;
  size_t size = 0;
  bool found = k == CU_MEMORYTYPE_DEVICE &&
               rt_driver.backend->mem_range(rt_driver.backend, p, &base, &size) == CUDA_SUCCESS;
  /* managed memory (rt_umem.c) is device memory, found by its own books
   * where the backend's range lookup does not know it (HIP) */
  CUdeviceptr mbase;
  size_t msize;
  int mdev = 0;
  bool is_managed = rt_managed_find(p, &mbase, &msize, &mdev);
  if (is_managed && !found) {
    k = CU_MEMORYTYPE_DEVICE;
    found = true;
    base = mbase;
    size = msize;
  }
  switch (a) {
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE: *(unsigned *)data = k; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_MAPPED: *(int *)data = found; return CUDA_SUCCESS;
  case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return CUDA_ERROR_NOT_SUPPORTED;   /* no nv-p2p.h here */
  default: break;
  }
  if (!found) return CUDA_ERROR_INVALID_VALUE;
  /* the device the allocation belongs to (several devices, rt_umem.c) */
  int dev = is_managed ? mdev : 0;
  if (!is_managed && rt_driver.backend->mem_device) {
    int d = rt_driver.backend->mem_device(rt_driver.backend, p);
    if (d >= 0 && d < rt_driver.ndev) dev = d;
  }
  switch (a) {
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER: *(CUdeviceptr *)data = p; break;
  case CU_POINTER_ATTRIBUTE_HOST_POINTER: *(void **)data = D(p); break;
  case CU_POINTER_ATTRIBUTE_CONTEXT: *(CUcontext *)data = &rt_driver.primary[dev]; break;
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *(int *)data = dev; break;
  case CU_POINTER_ATTRIBUTE_IS_MANAGED: *(unsigned *)data = is_managed; break;
  /* cuFFT asks for the buffer id of its work area (issue 18): the
   * allocation's base address is unique among live allocations, as CUDA's
   * id is; the range attributes come from the same lookup.  An allocation
   * of cuMemAlloc is one mapping and one physical block: the mapping and
   * block attributes are the same range. */
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
  case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: *(unsigned long long *)data = base; break;
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
  case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR: *(CUdeviceptr *)data = base; break;
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
  case CU_POINTER_ATTRIBUTE_MAPPING_SIZE: *(size_t *)data = size; break;
  /* every synchronous operation here is synchronous (docs/runtime.md) */
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS: *(unsigned *)data = 1; break;
  /* cuIpcGetMemHandle takes cuMemAlloc's memory, not managed or VMM
   * memory (rt_umem.c) */
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
    *(unsigned *)data = rt_driver.backend->ipc_mem_get && !is_managed && !rt_vmm_mapped(p);
    break;
  /* no shareable handles on cuMemAlloc's memory, no GPUDirect RDMA, no
   * decompression engine; the calling context's device reads and writes */
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
  case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: *(unsigned *)data = 0; break;
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS: *(unsigned *)data = CU_MEM_ACCESS_FLAGS_PROT_READWRITE; break;
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE: *(CUmemoryPool *)data = rt_pool_of(base); break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p) {
  RT_TRACE("%p, %d, %#llx", data, (int)a, (unsigned long long)p);
  if (!data) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(pointer_attribute(data, a, p));
}

/* The size of each attribute's value, 0 for a value that is not an
 * attribute (CUDA Driver API, cuPointerGetAttribute: the types named there;
 * the flags and booleans are 32-bit, the ids 64-bit). */
static size_t attribute_size(CUpointer_attribute a) {
  switch (a) {
  case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
  case CU_POINTER_ATTRIBUTE_SYNC_MEMOPS:
  case CU_POINTER_ATTRIBUTE_IS_MANAGED:
  case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
  case CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE:
  case CU_POINTER_ATTRIBUTE_MAPPED:
  case CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
  case CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
  case CU_POINTER_ATTRIBUTE_ACCESS_FLAGS:
  case CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE: return 4;
  case CU_POINTER_ATTRIBUTE_CONTEXT:
  case CU_POINTER_ATTRIBUTE_DEVICE_POINTER:
  case CU_POINTER_ATTRIBUTE_HOST_POINTER:
  case CU_POINTER_ATTRIBUTE_BUFFER_ID:
  case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
  case CU_POINTER_ATTRIBUTE_RANGE_SIZE:
  case CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
  case CU_POINTER_ATTRIBUTE_MAPPING_SIZE:
  case CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR:
  case CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID: return 8;
  case CU_POINTER_ATTRIBUTE_P2P_TOKENS: return sizeof(CUDA_POINTER_ATTRIBUTE_P2P_TOKENS);
  }
  return 0;
}

/* Unlike cuPointerGetAttribute, a pointer CUDA does not know is no error:
 * its attributes are zero (NULL, CU_MEMORYTYPE 0: cudart's
 * cudaMemoryTypeUnregistered), and so is an attribute that does not apply
 * to a known one (a pool handle of memory from no pool ...). */
RT_EXPORT CUresult cuPointerGetAttributes(unsigned n, CUpointer_attribute *attrs, void **data,
                                          CUdeviceptr p) {
  RT_TRACE("%u, %p, %p, %#llx", n, (void *)attrs, (void *)data, (unsigned long long)p);
  if (n && (!attrs || !data)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  for (unsigned i = 0; i < n; i++)
    if (!data[i] || !attribute_size(attrs[i])) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  bool known = kind_of(D(p)) == CU_MEMORYTYPE_DEVICE;
  for (unsigned i = 0; i < n; i++)
    if (!known || pointer_attribute(data[i], attrs[i], p) != CUDA_SUCCESS)
      memset(data[i], 0, attribute_size(attrs[i]));
  return rt_ret(CUDA_SUCCESS);
}

/* SYNC_MEMOPS is the one settable attribute; every synchronous operation
 * here already synchronises, so setting it changes nothing. */
RT_EXPORT CUresult cuPointerSetAttribute(const void *value, CUpointer_attribute a, CUdeviceptr p) {
  RT_TRACE("%p, %d, %#llx", value, (int)a, (unsigned long long)p);
  if (!value || a != CU_POINTER_ATTRIBUTE_SYNC_MEMOPS) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(kind_of(D(p)) == CU_MEMORYTYPE_DEVICE ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

/* ---- streams ----------------------------------------------------------- */
static CUresult stream_create(CUstream *ps, unsigned flags, int prio) {
  if (!ps) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  struct CUstream_st *s = calloc(1, sizeof *s);
  if (!s) return CUDA_ERROR_OUT_OF_MEMORY;
  rt_backend *b = rt_driver.backend;
  r = b->stream_create_flags ? b->stream_create_flags(b, flags, &s->bs) : b->stream_create(b, &s->bs);
  if (r != CUDA_SUCCESS) {
    free(s);
    return r;
  }
  s->magic = STREAM_MAGIC;
  s->flags = flags;
  s->priority = prio;
  if (!rt_handle_add(rt_h_stream, s)) {
    rt_driver.backend->stream_destroy(rt_driver.backend, s->bs);
    free(s);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *ps = s;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuStreamCreate(CUstream *ps, unsigned int flags) {
  RT_TRACE("%p, %u", (void *)ps, flags);
  return rt_ret(stream_create(ps, flags, 0));
}

RT_EXPORT CUresult cuStreamCreateWithPriority(CUstream *ps, unsigned int flags, int prio) {
  RT_TRACE("%p, %u, %d", (void *)ps, flags, prio);
  return rt_ret(stream_create(ps, flags, prio));
}

RT_EXPORT CUresult cuStreamDestroy(CUstream s) {
  RT_TRACE("%p", (void *)s);
  if (!rt_handle_remove(rt_h_stream, s)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  rt_capture_stream_destroyed(s);
  CUresult r = rt_driver.backend->stream_destroy(rt_driver.backend, s->bs);
  s->magic = 0;
  free(s);
  return rt_ret(r);
}

RT_EXPORT CUresult cuStreamSynchronize(CUstream s) {
  RT_TRACE("%p", (void *)s);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS) r = rt_capture_sync(s);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(rt_fault(rt_driver.backend->stream_sync(rt_driver.backend, bs)));
}

RT_EXPORT CUresult cuStreamQuery(CUstream s) {
  RT_TRACE("%p", (void *)s);
  if (!rt_driver.backend || !rt_driver.backend->stream_query) return rt_ret(cuStreamSynchronize(s));
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS) r = rt_capture_sync(s);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  r = rt_driver.backend->stream_query(rt_driver.backend, bs);
  return rt_ret(r == CUDA_ERROR_NOT_READY ? r : rt_fault(r));
}

RT_EXPORT CUresult cuStreamGetFlags(CUstream s, unsigned int *flags) {
  RT_TRACE("%p, %p", (void *)s, (void *)flags);
  if (!flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r;
  rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS) *flags = s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD ? s->flags : 0;
  return rt_ret(r);
}

RT_EXPORT CUresult cuStreamGetPriority(CUstream s, int *prio) {
  RT_TRACE("%p, %p", (void *)s, (void *)prio);
  if (!prio) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r;
  rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS) *prio = s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD ? s->priority : 0;
  return rt_ret(r);
}

RT_EXPORT CUresult cuStreamGetCtx(CUstream s, CUcontext *pctx) {
  RT_TRACE("%p, %p", (void *)s, (void *)pctx);
  if (!pctx) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUcontext c = rt_current_ctx();
  *pctx = c ? c : &rt_driver.primary[0];
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuStreamGetId(CUstream s, unsigned long long *id) {
  RT_TRACE("%p, %p", (void *)s, (void *)id);
  if (!id) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *id = (unsigned long long)(uintptr_t)s;
  return rt_ret(CUDA_SUCCESS);
}

/* The wait is satisfied once the event's stream reached it, which a record
 * (synchronising its stream) guarantees. */
RT_EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  RT_TRACE("%p, %p, %u", (void *)s, (void *)e, flags);
  if (!rt_handle_valid(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  CUresult r;
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS && rt_capturing()) {
    bool handled;
    r = rt_capture_wait_event(s, e, flags, &handled);
    if (r != CUDA_SUCCESS || handled) return rt_ret(r);
  }
  if (r == CUDA_SUCCESS && e->be) r = rt_driver.backend->stream_wait_event(rt_driver.backend, bs, e->be);
  return rt_ret(r);
}

typedef struct host_fn_args {
  CUhostFn fn;
  void *user;
} host_fn_args;

RT_EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *user) {
  RT_TRACE("%p, %p, %p", (void *)s, (void *)(uintptr_t)fn, user);
  if (!fn) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (rt_capturing()) {
    CUresult r;
    rt_stream_backend(s, &r);
    if (r != CUDA_SUCCESS) return rt_ret(r);
    rt_op op = {.type = CU_GRAPH_NODE_TYPE_HOST, .host = {fn, user}};
    bool captured;
    r = rt_capture_op(s, &op, &captured);
    if (r != CUDA_SUCCESS || captured) return rt_ret(r);
  }
  if (rt_driver.backend && rt_driver.backend->host_fn) {
    /* in the stream's order, off this thread (the emulator) */
    CUresult r = rt_check_ctx();
    rt_bstream bs = r == CUDA_SUCCESS ? rt_stream_backend(s, &r) : NULL;
    if (r == CUDA_SUCCESS) r = rt_driver.backend->host_fn(rt_driver.backend, bs, fn, user);
    return rt_ret(r);
  }
  CUresult r = cuStreamSynchronize(s);
  if (r == CUDA_SUCCESS) fn(user);
  return rt_ret(r);
}

/* cuStreamAddCallback on a backend with host functions: the status passed
 * is CUDA_SUCCESS (a fault before it is returned by the next synchronising
 * call, as the context's error). */
typedef struct stream_callback {
  CUstreamCallback cb;
  CUstream s;
  void *user;
} stream_callback;

static void run_callback(void *p) {
  stream_callback c = *(stream_callback *)p;
  free(p);
  c.cb(c.s, CUDA_SUCCESS, c.user);
}

RT_EXPORT CUresult cuStreamAddCallback(CUstream s, CUstreamCallback cb, void *user,
                                       unsigned int flags) {
  RT_TRACE("%p, %p, %p, %u", (void *)s, (void *)(uintptr_t)cb, user, flags);
  if (!cb) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  /* not capturable (cuLaunchHostFunc is): a capturing stream refuses it */
  CUresult r = rt_capture_sync(s);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (rt_driver.backend && rt_driver.backend->host_fn) {
    /* in the stream's order, off this thread (the emulator) */
    rt_bstream bs = rt_stream_backend(s, &r);
    stream_callback *c = r == CUDA_SUCCESS ? malloc(sizeof *c) : NULL;
    if (r != CUDA_SUCCESS || !c) return rt_ret(r != CUDA_SUCCESS ? r : CUDA_ERROR_OUT_OF_MEMORY);
    *c = (stream_callback){cb, s, user};
    r = rt_driver.backend->host_fn(rt_driver.backend, bs, run_callback, c);
    if (r != CUDA_SUCCESS) free(c);
    return rt_ret(r);
  }
  r = cuStreamSynchronize(s);
  cb(s, r, user);
  return rt_ret(CUDA_SUCCESS);
}

/* ---- events ------------------------------------------------------------ */
RT_EXPORT CUresult cuEventCreate(CUevent *pe, unsigned int flags) {
  RT_TRACE("%p, %u", (void *)pe, flags);
  if (!pe) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  struct CUevent_st *e = calloc(1, sizeof *e);
  if (!e) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  e->magic = EVENT_MAGIC;
  e->flags = flags;
  if (backend_events()) {
    CUresult r = rt_driver.backend->event_create(rt_driver.backend, flags, &e->be);
    if (r != CUDA_SUCCESS) {
      free(e);
      return rt_ret(r);
    }
  }
  if (!rt_handle_add(rt_h_event, e)) {
    if (e->be) rt_driver.backend->event_destroy(rt_driver.backend, e->be);
    free(e);
    return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  }
  *pe = e;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuEventDestroy(CUevent e) {
  RT_TRACE("%p", (void *)e);
  if (!rt_handle_remove(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  rt_capture_event_destroyed(e);
  e->magic = 0;
  if (e->be) rt_driver.backend->event_destroy(rt_driver.backend, e->be);
  free(e);
  return rt_ret(CUDA_SUCCESS);
}

static CUresult event_record(CUevent e, CUstream s, unsigned flags) {
  if (!rt_handle_valid(rt_h_event, e)) return CUDA_ERROR_INVALID_HANDLE;
  if (rt_capturing()) {
    CUresult r;
    rt_stream_backend(s, &r);
    if (r != CUDA_SUCCESS) return r;
    bool handled;
    r = rt_capture_event_record(e, s, flags, &handled);
    if (r != CUDA_SUCCESS || handled) return r;
  }
  if (e->be) {
    CUresult r;
    rt_bstream bs = rt_stream_backend(s, &r);
    if (r == CUDA_SUCCESS) r = rt_driver.backend->event_record(rt_driver.backend, e->be, bs);
    e->recorded = r == CUDA_SUCCESS;
    return r;
  }
  CUresult r = cuStreamSynchronize(s);
  if (r != CUDA_SUCCESS) return r;
  e->recorded = true;
  e->ms = now_ms();
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuEventRecord(CUevent e, CUstream s) {
  RT_TRACE("%p, %p", (void *)e, (void *)s);
  return rt_ret(event_record(e, s, 0));
}

RT_EXPORT CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned int flags) {
  RT_TRACE("%p, %p, %#x", (void *)e, (void *)s, flags);
  return rt_ret(event_record(e, s, flags));
}

RT_EXPORT CUresult cuEventQuery(CUevent e) {
  RT_TRACE("%p", (void *)e);
  if (!rt_handle_valid(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if (e->be) return rt_ret(rt_driver.backend->event_query(rt_driver.backend, e->be));
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuEventSynchronize(CUevent e) {
  RT_TRACE("%p", (void *)e);
  if (!rt_handle_valid(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (e->be) return rt_ret(rt_fault(rt_driver.backend->event_sync(rt_driver.backend, e->be)));
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
  RT_TRACE("%p, %p, %p", (void *)ms, (void *)a, (void *)b);
  if (!ms) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!rt_handle_valid(rt_h_event, a) || !rt_handle_valid(rt_h_event, b))
    return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if (!a->recorded || !b->recorded) return rt_ret(CUDA_ERROR_NOT_READY);
  if (a->be && b->be) return rt_ret(rt_driver.backend->event_elapsed(rt_driver.backend, ms, a->be, b->be));
  *ms = (float)(b->ms - a->ms);
  return rt_ret(CUDA_SUCCESS);
}

/* cuda.h names the _v2 symbol cuEventElapsedTime; the first one has the
 * same signature. */
RT_EXPORT CUresult rt_cuEventElapsedTime_v1(float *ms, CUevent a, CUevent b) __asm__("cuEventElapsedTime");
RT_EXPORT CUresult rt_cuEventElapsedTime_v1(float *ms, CUevent a, CUevent b) {
  return cuEventElapsedTime(ms, a, b);
}

/* ---- IPC of events ----------------------------------------------------------
 * A backend with events (HIP, the emulator) hands out its own handles.
 * Without, every operation completes before it returns, so an event is
 * complete once recorded: an event opened in another process is one that
 * is always complete, which is what waiting on it there would find (a
 * record in the exporter happens after the work before it is done).  The
 * handle names the event and its process so a made-up or stale one is
 * refused. */
#define IPC_EVENT_MAGIC 0x50574945u   /* "PWIE" */
typedef struct ipc_event_wire {
  uint32_t magic, version;
  int32_t pid, pad;
  uint64_t event;
} ipc_event_wire;

RT_EXPORT CUresult cuIpcGetEventHandle(CUipcEventHandle *h, CUevent e) {
  RT_TRACE("%p, %p", (void *)h, (void *)e);
  if (!h) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!rt_handle_valid(rt_h_event, e)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  /* CUDA: only events made with CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING */
  if (!(e->flags & CU_EVENT_INTERPROCESS) || !(e->flags & CU_EVENT_DISABLE_TIMING))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (e->be) {
    if (!rt_driver.backend->ipc_event_get) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
    return rt_ret(rt_driver.backend->ipc_event_get(rt_driver.backend, e->be, h));
  }
  ipc_event_wire w = {.magic = IPC_EVENT_MAGIC, .version = 1, .pid = getpid(), .event = (uint64_t)(uintptr_t)e};
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, &w, sizeof w);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuIpcOpenEventHandle(CUevent *pe, CUipcEventHandle h) {
  RT_TRACE("%p", (void *)pe);
  if (!pe) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  void *be = NULL;
  if (backend_events()) {
    if (!rt_driver.backend->ipc_event_open) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
    if ((r = rt_driver.backend->ipc_event_open(rt_driver.backend, &h, &be)) != CUDA_SUCCESS) return rt_ret(r);
  } else {
    ipc_event_wire w;
    memcpy(&w, h.reserved, sizeof w);
    if (w.magic != IPC_EVENT_MAGIC || w.version != 1 || !w.event) return rt_ret(CUDA_ERROR_INVALID_VALUE);
    if (w.pid == getpid()) return rt_ret(CUDA_ERROR_INVALID_CONTEXT);   /* as for memory handles */
    if (kill(w.pid, 0) != 0 && errno == ESRCH) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  }
  struct CUevent_st *e = calloc(1, sizeof *e);
  if (!e) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  *e = (struct CUevent_st){.magic = EVENT_MAGIC, .flags = CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING,
                           .recorded = true, .ms = now_ms(), .be = be};
  if (!rt_handle_add(rt_h_event, e)) {
    if (be) rt_driver.backend->event_destroy(rt_driver.backend, be);
    free(e);
    return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  }
  *pe = e;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- 2D copies: one row at a time (arrays: rt_array.c) ------------------- */
static CUresult copy2d(const CUDA_MEMCPY2D *c, CUstream s, bool async) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  if (c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
    return rt_copy2d_array(c, s, async);
  const char *src = c->srcMemoryType == CU_MEMORYTYPE_HOST ? (const char *)c->srcHost
                                                            : (const char *)D(c->srcDevice);
  char *dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? (char *)c->dstHost : (char *)D(c->dstDevice);
  size_t spitch = c->srcPitch ? c->srcPitch : c->WidthInBytes;
  size_t dpitch = c->dstPitch ? c->dstPitch : c->WidthInBytes;
  if (spitch < c->WidthInBytes || dpitch < c->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
  for (size_t y = 0; y < c->Height; y++) {
    CUresult r = copy(dst + (c->dstY + y) * dpitch + c->dstXInBytes, c->dstMemoryType,
                      src + (c->srcY + y) * spitch + c->srcXInBytes, c->srcMemoryType,
                      c->WidthInBytes, s, async);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuMemcpy2D(const CUDA_MEMCPY2D *c) {
  RT_TRACE("%p", (const void *)c);
  return rt_ret(copy2d(c, NULL, false));
}
RT_EXPORT CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D *c) {
  RT_TRACE("%p", (const void *)c);
  return rt_ret(copy2d(c, NULL, false));
}
RT_EXPORT CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D *c, CUstream s) {
  RT_TRACE("%p, %p", (const void *)c, (void *)s);
  return rt_ret(copy2d(c, s, true));
}

static CUresult set2d(CUdeviceptr d, size_t pitch, uint32_t v, unsigned elem, size_t w, size_t h,
                      CUstream s, bool async) {
  for (size_t y = 0; y < h; y++) {
    CUresult r = set(d + y * pitch, v, elem, w, s, async);
    if (r != CUDA_SUCCESS) return r;
  }
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuMemsetD2D8(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h) {
  RT_TRACE("%#llx, %zu, %u, %zu, %zu", (unsigned long long)d, pitch, v, w, h);
  return rt_ret(set2d(d, pitch, v, 1, w, h, NULL, false));
}
RT_EXPORT CUresult cuMemsetD2D16(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h) {
  RT_TRACE("%#llx, %zu, %u, %zu, %zu", (unsigned long long)d, pitch, v, w, h);
  return rt_ret(set2d(d, pitch, v, 2, w, h, NULL, false));
}
RT_EXPORT CUresult cuMemsetD2D32(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h) {
  RT_TRACE("%#llx, %zu, %u, %zu, %zu", (unsigned long long)d, pitch, v, w, h);
  return rt_ret(set2d(d, pitch, v, 4, w, h, NULL, false));
}
RT_EXPORT CUresult cuMemsetD2D8Async(CUdeviceptr d, size_t pitch, unsigned char v, size_t w,
                                     size_t h, CUstream s) {
  RT_TRACE("%#llx, %zu, %u, %zu, %zu, %p", (unsigned long long)d, pitch, v, w, h, (void *)s);
  return rt_ret(set2d(d, pitch, v, 1, w, h, s, true));
}
RT_EXPORT CUresult cuMemsetD2D16Async(CUdeviceptr d, size_t pitch, unsigned short v, size_t w,
                                      size_t h, CUstream s) {
  RT_TRACE("%#llx, %zu, %u, %zu, %zu, %p", (unsigned long long)d, pitch, v, w, h, (void *)s);
  return rt_ret(set2d(d, pitch, v, 2, w, h, s, true));
}
RT_EXPORT CUresult cuMemsetD2D32Async(CUdeviceptr d, size_t pitch, unsigned int v, size_t w,
                                      size_t h, CUstream s) {
  RT_TRACE("%#llx, %zu, %u, %zu, %zu, %p", (unsigned long long)d, pitch, v, w, h, (void *)s);
  return rt_ret(set2d(d, pitch, v, 4, w, h, s, true));
}
