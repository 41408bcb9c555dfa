/* runtime/rt_pool.c: the stream-ordered allocator and memory pools.
 *
 * cuMemAllocAsync / cuMemAllocFromPoolAsync / cuMemFreeAsync allocate and
 * free "in stream order": the memory may be used by work queued after the
 * allocation and must not be by work queued after the free.  Both backends
 * keep that order without deferring anything: the allocation is made at
 * once (usable earlier than promised), and a free waits for the work
 * already queued (the emulator's operations are complete when they
 * return; a free waits for another thread's launch, rt_backend_emu.c; HIP's
 * hipFree synchronises).  So a pool caches nothing: what it has reserved is
 * what is in use, cuMemPoolTrimTo has nothing to release, and the release
 * threshold and reuse flags are kept and reported but change nothing.
 *
 * A pool (CUmemoryPool) is a set of attributes and byte counts: reserved
 * and used memory, current and high water marks (CU_MEMPOOL_ATTR_*), over
 * the allocations made from it, found by address when freed.  Each device
 * has a default pool and a current pool (cuDeviceGet/SetMemPool), the
 * default until set.  Pools are device pools of pinned memory with no
 * shareable handle types; IPC export and import are not supported.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"
#include "util/pw_vec.h"

struct CUmemPoolHandle_st {
  int device;
  bool is_default;
  cuuint64_t release_threshold;
  int reuse_follow_events, reuse_opportunistic, reuse_internal;
  size_t used, used_high;
};

typedef struct pool_alloc {
  CUdeviceptr ptr;
  size_t bytes;
  struct CUmemPoolHandle_st *pool;
} pool_alloc;

static struct {
  pthread_mutex_t lock;
  struct CUmemPoolHandle_st defaults[16];
  bool made[16];
  struct CUmemPoolHandle_st *current[16];
  pool_alloc *allocs;
  size_t n, cap;
} P = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void pool_init(struct CUmemPoolHandle_st *p, int dev, bool def) {
  *p = (struct CUmemPoolHandle_st){.device = dev, .is_default = def, .reuse_follow_events = 1,
                                   .reuse_opportunistic = 1, .reuse_internal = 1};
}

/* Under P.lock: device dev's default pool, made on first use. */
static struct CUmemPoolHandle_st *default_pool(int dev) {
  if (!P.made[dev]) {
    pool_init(&P.defaults[dev], dev, true);
    rt_handle_add(rt_h_pool, &P.defaults[dev]);
    P.made[dev] = true;
  }
  return &P.defaults[dev];
}

static bool pool_valid(CUmemoryPool p) { return rt_handle_valid(rt_h_pool, p); }

static int current_device(void) {
  CUcontext c = rt_current_ctx();
  return c ? c->device : 0;
}

void rt_pool_forget(CUdeviceptr ptr) {
  pthread_mutex_lock(&P.lock);
  for (size_t i = 0; i < P.n; i++)
    if (P.allocs[i].ptr == ptr) {
      P.allocs[i].pool->used -= P.allocs[i].bytes;
      P.allocs[i] = P.allocs[--P.n];
      break;
    }
  pthread_mutex_unlock(&P.lock);
}

CUmemoryPool rt_pool_of(CUdeviceptr base) {
  CUmemoryPool pool = NULL;
  pthread_mutex_lock(&P.lock);
  for (size_t i = 0; i < P.n && !pool; i++)
    if (P.allocs[i].ptr == base) pool = P.allocs[i].pool;
  pthread_mutex_unlock(&P.lock);
  return pool;
}

static CUresult alloc_from(CUdeviceptr *dptr, size_t bytes, struct CUmemPoolHandle_st *pool,
                           CUstream s) {
  if (!dptr || !bytes) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return r;
  if (rt_capturing()) {
    /* on a capturing stream: a memory allocation node (rt_graph.c) */
    bool captured;
    r = rt_capture_mem(s, true, bytes, dptr, &captured);
    if (r != CUDA_SUCCESS || captured) return r;
  }
  pthread_mutex_lock(&P.lock);
  pool_alloc *na = pw_vec_grow(P.allocs, &P.cap, P.n + 1, sizeof *na);
  if (!na) {
    pthread_mutex_unlock(&P.lock);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  P.allocs = na;
  pthread_mutex_unlock(&P.lock);
  uint64_t p;
  r = rt_driver.backend->mem_alloc(rt_driver.backend, bytes, &p);
  if (r != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&P.lock);
  P.allocs[P.n++] = (pool_alloc){p, bytes, pool};
  pool->used += bytes;
  if (pool->used > pool->used_high) pool->used_high = pool->used;
  pthread_mutex_unlock(&P.lock);
  *dptr = p;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s) {
  RT_TRACE("%p, %zu, %p", (void *)dptr, bytes, (void *)s);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  int dev = current_device();
  pthread_mutex_lock(&P.lock);
  struct CUmemPoolHandle_st *pool = P.current[dev] ? P.current[dev] : default_pool(dev);
  pthread_mutex_unlock(&P.lock);
  return rt_ret(alloc_from(dptr, bytes, pool, s));
}

RT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
                                           CUstream s) {
  RT_TRACE("%p, %zu, %p, %p", (void *)dptr, bytes, (void *)pool, (void *)s);
  if (!pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(alloc_from(dptr, bytes, pool, s));
}

RT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) {
  RT_TRACE("%#llx, %p", (unsigned long long)dptr, (void *)s);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!dptr) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (rt_capturing()) {
    bool captured;
    r = rt_capture_mem(s, false, 0, &dptr, &captured);   /* a memory free node */
    if (r != CUDA_SUCCESS || captured) return rt_ret(r);
  }
  /* the stream's queued work is done, or the free waits for it (above) */
  r = rt_driver.backend->mem_free(rt_driver.backend, dptr);
  if (r == CUDA_SUCCESS) rt_pool_forget(dptr);
  return rt_ret(r);
}

static CUresult check_props(const CUmemPoolProps *p) {
  if (!p || p->allocType != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  /* host and host-NUMA pools (CUDA 12.2+) are valid requests this runtime
   * does not serve: not supported, rather than a caller's mistake */
  if (p->location.type == CU_MEM_LOCATION_TYPE_HOST ||
      p->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA ||
      p->location.type == CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT)
    return CUDA_ERROR_NOT_SUPPORTED;
  if (p->location.type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_INVALID_VALUE;
  if (p->handleTypes != CU_MEM_HANDLE_TYPE_NONE) return CUDA_ERROR_NOT_SUPPORTED;
  return rt_check_device(p->location.id);
}

RT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *out, const CUmemPoolProps *props) {
  RT_TRACE("%p, %p", (void *)out, (const void *)props);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = check_props(props);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  struct CUmemPoolHandle_st *p = malloc(sizeof *p);
  if (!p) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  pool_init(p, props->location.id, false);
  if (!rt_handle_add(rt_h_pool, p)) {
    free(p);
    return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  }
  *out = p;
  return rt_ret(CUDA_SUCCESS);
}

/* "If any pointers obtained from this pool haven't been freed or the pool
 * has free operations that haven't completed when cuMemPoolDestroy is
 * invoked, the function will return immediately and the resources
 * associated with the pool will be released automatically once there are
 * no more outstanding allocations": the allocations stay valid and are
 * freed by the application; the pool's accounting goes with it. */
RT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  RT_TRACE("%p", (void *)pool);
  if (!pool_valid(pool) || pool->is_default) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&P.lock);
  rt_handle_remove(rt_h_pool, pool);
  for (int d = 0; d < 16; d++)
    if (P.current[d] == pool) P.current[d] = NULL;
  for (size_t i = 0; i < P.n;)
    if (P.allocs[i].pool == pool) P.allocs[i] = P.allocs[--P.n];
    else i++;
  pthread_mutex_unlock(&P.lock);
  free(pool);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  RT_TRACE("%p, %zu", (void *)pool, keep);
  if (!pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(CUDA_SUCCESS);   /* nothing cached: nothing to release */
}

RT_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
  RT_TRACE("%p, %d, %p", (void *)pool, (int)a, v);
  if (!v || !pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&P.lock);
  switch (a) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: pool->reuse_follow_events = *(int *)v; break;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: pool->reuse_opportunistic = *(int *)v; break;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: pool->reuse_internal = *(int *)v; break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->release_threshold = *(cuuint64_t *)v; break;
  /* the high water marks can only be reset to zero (to the current value) */
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    if (*(cuuint64_t *)v) r = CUDA_ERROR_INVALID_VALUE;
    else pool->used_high = pool->used;
    break;
  default: r = CUDA_ERROR_INVALID_VALUE; break;
  }
  pthread_mutex_unlock(&P.lock);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
  RT_TRACE("%p, %d, %p", (void *)pool, (int)a, v);
  if (!v || !pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = CUDA_SUCCESS;
  pthread_mutex_lock(&P.lock);
  switch (a) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES: *(int *)v = pool->reuse_follow_events; break;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC: *(int *)v = pool->reuse_opportunistic; break;
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES: *(int *)v = pool->reuse_internal; break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)v = pool->release_threshold; break;
  /* nothing is cached: reserved is used */
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)v = pool->used; break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)v = pool->used_high; break;
  default: r = CUDA_ERROR_INVALID_VALUE; break;
  }
  pthread_mutex_unlock(&P.lock);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t n) {
  RT_TRACE("%p, %p, %zu", (void *)pool, (const void *)map, n);
  if (!pool_valid(pool) || (n && !map)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  for (size_t i = 0; i < n; i++) {
    if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE) return rt_ret(CUDA_ERROR_INVALID_VALUE);
    CUresult r = rt_check_device(map[i].location.id);
    if (r != CUDA_SUCCESS) return rt_ret(CUDA_ERROR_INVALID_DEVICE);
    /* one address space: every device reads and writes every pool */
    if (map[i].location.id == pool->device && map[i].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return rt_ret(CUDA_ERROR_INVALID_VALUE);
  }
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool, CUmemLocation *loc) {
  RT_TRACE("%p, %p, %p", (void *)flags, (void *)pool, (void *)loc);
  if (!flags || !loc || !pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(loc->id);
  if (r != CUDA_SUCCESS) return rt_ret(CUDA_ERROR_INVALID_DEVICE);
  *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *out, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)out, dev);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&P.lock);
  *out = default_pool(dev);
  pthread_mutex_unlock(&P.lock);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *out, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)out, dev);
  if (!out) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&P.lock);
  *out = P.current[dev] ? P.current[dev] : default_pool(dev);
  pthread_mutex_unlock(&P.lock);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  RT_TRACE("%d, %p", dev, (void *)pool);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!pool_valid(pool) || pool->device != dev) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&P.lock);
  P.current[dev] = pool;
  pthread_mutex_unlock(&P.lock);
  return rt_ret(CUDA_SUCCESS);
}

/* CUDA 13's location-based forms: device locations only (host and NUMA
 * pools are not modelled: CUDA_ERROR_NOT_SUPPORTED). */
static CUresult device_location(const CUmemLocation *loc, CUmemAllocationType type, int *dev) {
  if (!loc || type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  if (loc->type != CU_MEM_LOCATION_TYPE_DEVICE) return CUDA_ERROR_NOT_SUPPORTED;
  CUresult r = rt_check_device(loc->id);
  if (r == CUDA_SUCCESS) *dev = loc->id;
  return r;
}

RT_EXPORT CUresult cuMemGetDefaultMemPool(CUmemoryPool *out, CUmemLocation *loc,
                                          CUmemAllocationType type) {
  RT_TRACE("%p, %p, %d", (void *)out, (void *)loc, (int)type);
  int dev;
  CUresult r = device_location(loc, type, &dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return cuDeviceGetDefaultMemPool(out, dev);
}

RT_EXPORT CUresult cuMemGetMemPool(CUmemoryPool *out, CUmemLocation *loc, CUmemAllocationType type) {
  RT_TRACE("%p, %p, %d", (void *)out, (void *)loc, (int)type);
  int dev;
  CUresult r = device_location(loc, type, &dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return cuDeviceGetMemPool(out, dev);
}

RT_EXPORT CUresult cuMemSetMemPool(CUmemLocation *loc, CUmemAllocationType type, CUmemoryPool pool) {
  RT_TRACE("%p, %d, %p", (void *)loc, (int)type, (void *)pool);
  int dev;
  CUresult r = device_location(loc, type, &dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return cuDeviceSetMemPool(dev, pool);
}
