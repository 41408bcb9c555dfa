/* runtime/rt_pool.c: stream-ordered allocation and memory pools
 * (cuMemPoolCreate, cuMemAllocAsync, cuMemAllocFromPoolAsync,
 * cuMemFreeAsync, the default and current pool of a device).
 *
 * NCCL creates a pool in its init (issue 18) and cudart's cudaMallocAsync
 * lands here.  A pool is bookkeeping over the backend's ordinary
 * allocations: an allocation "from" a pool is cuMemAlloc's, recorded with
 * its pool so cuMemFreeAsync frees it and the pool's USED/RESERVED
 * attributes count it (reserved = used: nothing is kept back for reuse,
 * which CUDA allows; the release threshold and reuse flags are stored and
 * read back).  Stream order: the emulator completes every operation before
 * it returns, so "asynchronous" allocation is allocation; on HIP the
 * backend's cuMemAlloc is synchronous, as CUDA's stream-ordered allocator
 * may be.  Only device-located pinned pools exist; export and import of
 * shareable handles and pointers are not supported.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

#define POOL_MAGIC 0x506f6f6cu

struct CUmemPoolHandle_st {
  uint32_t magic;
  int device;
  CUmemPoolProps props;
  int reuse[3];                 /* FOLLOW_EVENT_DEPENDENCIES, OPPORTUNISTIC, INTERNAL */
  cuuint64_t threshold, used, used_high;
};

typedef struct pool_alloc {
  CUdeviceptr p;
  size_t bytes;
  struct CUmemPoolHandle_st *pool;
  struct pool_alloc *next;
} pool_alloc;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pool_alloc *allocs;
static struct CUmemPoolHandle_st default_pool[16], *current_pool[16];

static bool pool_valid(CUmemoryPool p) { return p && p->magic == POOL_MAGIC; }

static struct CUmemPoolHandle_st *device_default(int dev) {
  struct CUmemPoolHandle_st *p = &default_pool[dev];
  if (p->magic != POOL_MAGIC) {
    *p = (struct CUmemPoolHandle_st){.magic = POOL_MAGIC, .device = dev,
                                     .reuse = {1, 1, 1}};
    p->props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    p->props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    p->props.location.id = dev;
  }
  return p;
}

RT_EXPORT CUresult cuMemPoolCreate(CUmemoryPool *pool, const CUmemPoolProps *props) {
  RT_TRACE("%p, %p", (void *)pool, (const void *)props);
  if (!pool || !props) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (props->allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      props->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  r = rt_check_device(props->location.id);
  if (r != CUDA_SUCCESS) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  struct CUmemPoolHandle_st *p = calloc(1, sizeof *p);
  if (!p) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  *p = (struct CUmemPoolHandle_st){.magic = POOL_MAGIC, .device = props->location.id,
                                   .props = *props, .reuse = {1, 1, 1}};
  *pool = p;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemPoolDestroy(CUmemoryPool pool) {
  RT_TRACE("%p", (void *)pool);
  if (!pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (pool >= default_pool && pool < default_pool + 16) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&lock);
  /* CUDA frees what is still allocated from it when the pool goes */
  for (pool_alloc **a = &allocs; *a;) {
    if ((*a)->pool == pool) {
      pool_alloc *d = *a;
      *a = d->next;
      cuMemFree(d->p);
      free(d);
    } else {
      a = &(*a)->next;
    }
  }
  for (int i = 0; i < 16; i++)
    if (current_pool[i] == pool) current_pool[i] = NULL;
  pthread_mutex_unlock(&lock);
  pool->magic = 0;
  free(pool);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemPoolSetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
  RT_TRACE("%p, %d, %p", (void *)pool, (int)a, v);
  if (!pool_valid(pool) || !v) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&lock);
  CUresult r = CUDA_SUCCESS;
  switch (a) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    pool->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES] = *(int *)v;
    break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: pool->threshold = *(cuuint64_t *)v; break;
  /* only the high-water marks can be set, and only to 0 (a reset) */
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH:
    if (*(cuuint64_t *)v != 0) r = CUDA_ERROR_INVALID_VALUE;
    else pool->used_high = pool->used;
    break;
  default: r = CUDA_ERROR_INVALID_VALUE; break;
  }
  pthread_mutex_unlock(&lock);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemPoolGetAttribute(CUmemoryPool pool, CUmemPool_attribute a, void *v) {
  RT_TRACE("%p, %d, %p", (void *)pool, (int)a, v);
  if (!pool_valid(pool) || !v) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&lock);
  CUresult r = CUDA_SUCCESS;
  switch (a) {
  case CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC:
  case CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES:
    *(int *)v = pool->reuse[a - CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES];
    break;
  case CU_MEMPOOL_ATTR_RELEASE_THRESHOLD: *(cuuint64_t *)v = pool->threshold; break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT:
  case CU_MEMPOOL_ATTR_USED_MEM_CURRENT: *(cuuint64_t *)v = pool->used; break;
  case CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH:
  case CU_MEMPOOL_ATTR_USED_MEM_HIGH: *(cuuint64_t *)v = pool->used_high; break;
  default: r = CUDA_ERROR_INVALID_VALUE; break;
  }
  pthread_mutex_unlock(&lock);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemPoolSetAccess(CUmemoryPool pool, const CUmemAccessDesc *map, size_t n) {
  RT_TRACE("%p, %p, %zu", (void *)pool, (const void *)map, n);
  if (!pool_valid(pool) || (n && !map)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  /* one address space: every device reads and writes every pool */
  for (size_t i = 0; i < n; i++)
    if (map[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
        rt_check_device(map[i].location.id) != CUDA_SUCCESS)
      return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemPoolGetAccess(CUmemAccess_flags *flags, CUmemoryPool pool,
                                      CUmemLocation *loc) {
  RT_TRACE("%p, %p, %p", (void *)flags, (void *)pool, (void *)loc);
  if (!flags || !loc || !pool_valid(pool)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemPoolTrimTo(CUmemoryPool pool, size_t keep) {
  RT_TRACE("%p, %zu", (void *)pool, keep);
  return rt_ret(pool_valid(pool) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE);
}

static CUresult alloc_from(CUdeviceptr *dptr, size_t bytes, struct CUmemPoolHandle_st *pool,
                           CUstream s) {
  if (!dptr || !pool_valid(pool)) return CUDA_ERROR_INVALID_VALUE;
  CUresult r;
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return r;
  pool_alloc *a = calloc(1, sizeof *a);
  if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
  r = cuMemAlloc(dptr, bytes);
  if (r != CUDA_SUCCESS) {
    free(a);
    return r;
  }
  pthread_mutex_lock(&lock);
  *a = (pool_alloc){.p = *dptr, .bytes = bytes, .pool = pool, .next = allocs};
  allocs = a;
  pool->used += bytes;
  if (pool->used > pool->used_high) pool->used_high = pool->used;
  pthread_mutex_unlock(&lock);
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *dptr, size_t bytes, CUmemoryPool pool,
                                           CUstream s) {
  RT_TRACE("%p, %zu, %p, %p", (void *)dptr, bytes, (void *)pool, (void *)s);
  return rt_ret(alloc_from(dptr, bytes, pool, s));
}

RT_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *dptr, size_t bytes, CUstream s) {
  RT_TRACE("%p, %zu, %p", (void *)dptr, bytes, (void *)s);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&lock);
  struct CUmemPoolHandle_st *p = current_pool[0] ? current_pool[0] : device_default(0);
  pthread_mutex_unlock(&lock);
  return rt_ret(alloc_from(dptr, bytes, p, s));
}

RT_EXPORT CUresult cuMemFreeAsync(CUdeviceptr dptr, CUstream s) {
  RT_TRACE("%#llx, %p", (unsigned long long)dptr, (void *)s);
  CUresult r;
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&lock);
  for (pool_alloc **a = &allocs; *a; a = &(*a)->next)
    if ((*a)->p == dptr) {
      pool_alloc *d = *a;
      *a = d->next;
      d->pool->used -= d->bytes;
      free(d);
      break;
    }
  pthread_mutex_unlock(&lock);
  /* an allocation of cuMemAlloc may be freed this way too */
  return rt_ret(cuMemFree(dptr));
}

RT_EXPORT CUresult cuDeviceGetDefaultMemPool(CUmemoryPool *pool, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)pool, dev);
  if (!pool) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&lock);
  *pool = device_default(dev);
  pthread_mutex_unlock(&lock);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceGetMemPool(CUmemoryPool *pool, CUdevice dev) {
  RT_TRACE("%p, %d", (void *)pool, dev);
  if (!pool) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&lock);
  *pool = current_pool[dev] ? current_pool[dev] : device_default(dev);
  pthread_mutex_unlock(&lock);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuDeviceSetMemPool(CUdevice dev, CUmemoryPool pool) {
  RT_TRACE("%d, %p", dev, (void *)pool);
  CUresult r = rt_check_device(dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!pool_valid(pool) || pool->device != dev) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&lock);
  current_pool[dev] = pool;
  pthread_mutex_unlock(&lock);
  return rt_ret(CUDA_SUCCESS);
}
