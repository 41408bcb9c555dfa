/* runtime/rt_umem.c: memory beyond cuMemAlloc: managed memory, several
 * devices and peer access, virtual memory management, IPC of memory
 * (docs/runtime.md "Managed memory, several devices, VMM, IPC"); the
 * pointer attributes of that memory are answered in rt_memory.c.
 *
 * This layer keeps CUDA's rules and books; the backend does the work
 * (rt_backend.h): on the emulator host and device share memory, so
 * managed memory is device memory the host uses in place, prefetching
 * moves nothing, and advice changes nothing but what cuMemRangeGetAttribute
 * reports, which is kept here per page (CUDA rounds a range to host
 * pages) for both backends; on HIP each call is its hip* counterpart.
 *
 * Managed allocations: a sorted array (base, size, device, the per-page
 * advice made on first need).  VMM: the physical allocations
 * (CUmemGenericAllocationHandle is the address of a record here, counted:
 * its handle and each mapping hold it; the memory goes when the count
 * reaches zero, as CUDA documents for cuMemRelease), the reserved ranges
 * and the mappings with their access per device.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/rt.h"

static pthread_mutex_t U = PTHREAD_MUTEX_INITIALIZER;

/* ---- managed memory -------------------------------------------------------- */
typedef struct upage {
  int8_t pref, last;          /* device, CU_DEVICE_CPU (-1) or CU_DEVICE_INVALID (-2) */
  uint8_t read_mostly;
  uint32_t accessed;          /* bit d: device d; bit 31: the host */
} upage;

typedef struct managed {
  CUdeviceptr base;
  size_t size;
  int dev;
  unsigned flags;
  upage *pages;               /* NULL until advised or prefetched */
} managed;

static managed *M;
static size_t nM, capM;

static size_t page_size(void) {
  static size_t ps;
  if (!ps) ps = (size_t)sysconf(_SC_PAGESIZE);
  return ps;
}

/* Under U: the allocation holding p, or NULL. */
static managed *managed_at(CUdeviceptr p) {
  size_t lo = 0, hi = nM;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (M[mid].base <= p) lo = mid + 1;
    else hi = mid;
  }
  if (!lo) return NULL;
  managed *m = &M[lo - 1];
  return p < m->base + m->size ? m : NULL;
}

bool rt_managed_find(CUdeviceptr p, CUdeviceptr *base, size_t *bytes, int *dev) {
  pthread_mutex_lock(&U);
  managed *m = managed_at(p);
  if (m) {
    if (base) *base = m->base;
    if (bytes) *bytes = m->size;
    if (dev) *dev = m->dev;
  }
  pthread_mutex_unlock(&U);
  return m != NULL;
}

void rt_managed_forget(CUdeviceptr p) {
  pthread_mutex_lock(&U);
  managed *m = managed_at(p);
  if (m && m->base == p) {
    free(m->pages);
    size_t i = (size_t)(m - M);
    memmove(&M[i], &M[i + 1], (nM - i - 1) * sizeof *M);
    nM--;
  }
  pthread_mutex_unlock(&U);
}

static int current_device(void) {
  CUcontext c = rt_current_ctx();
  return c ? c->device : 0;
}

RT_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *dptr, size_t bytes, unsigned int flags) {
  RT_TRACE("%p, %zu, %#x", (void *)dptr, bytes, flags);
  if (!dptr || !bytes || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r == CUDA_SUCCESS) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!rt_driver.backend->mem_alloc_managed) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  pthread_mutex_lock(&U);
  if (nM == capM) {
    size_t nc = capM ? capM * 2 : 16;
    managed *nm = realloc(M, nc * sizeof *nm);
    if (!nm) {
      pthread_mutex_unlock(&U);
      return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
    }
    M = nm;
    capM = nc;
  }
  pthread_mutex_unlock(&U);
  uint64_t p;
  r = rt_driver.backend->mem_alloc_managed(rt_driver.backend, bytes, flags, &p);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&U);
  size_t i = nM;
  while (i > 0 && M[i - 1].base > p) i--;
  memmove(&M[i + 1], &M[i], (nM - i) * sizeof *M);
  M[i] = (managed){.base = p, .size = bytes, .dev = current_device(), .flags = flags};
  nM++;
  pthread_mutex_unlock(&U);
  *dptr = p;
  return rt_ret(CUDA_SUCCESS);
}

/* A __managed__ variable (cudart registers each with cuLibraryGetManaged
 * and points the host's symbol at the address it gets).  On the emulator a
 * module's variables are host memory the device uses, so the variable
 * itself is managed memory.  On HIP a module variable is device memory the
 * host cannot read: a managed variable would need its own hipMallocManaged
 * storage that the code object reaches through a pointer, which codegen
 * does not make (docs/runtime.md "Not done yet"). */
RT_EXPORT CUresult cuLibraryGetManaged(CUdeviceptr *dptr, size_t *bytes, CUlibrary l, const char *name) {
  RT_TRACE("%p, %p, %p, %s", (void *)dptr, (void *)bytes, (void *)l, name ? name : "(null)");
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (strcmp(rt_driver.backend->name, "emu") != 0) {
    RT_LOG(rt_warn, "__managed__ variable %s: not supported on the %s backend", name ? name : "?", rt_driver.backend->name);
    return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  }
  return rt_ret(cuLibraryGetGlobal(dptr, bytes, l, name));
}

/* A device ordinal or CU_DEVICE_CPU as CUDA's managed calls take it. */
static CUresult check_target(int dev, bool cpu_ok) {
  if (dev == CU_DEVICE_CPU) return cpu_ok ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
  return dev >= 0 && dev < rt_driver.ndev ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

/* A CUmemLocation as a device ordinal (hosts: CU_DEVICE_CPU). */
static CUresult location_device(CUmemLocation l, int *dev) {
  switch (l.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE: *dev = l.id; return check_target(l.id, false);
  case CU_MEM_LOCATION_TYPE_HOST:
  case CU_MEM_LOCATION_TYPE_HOST_NUMA:
  case CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT: *dev = CU_DEVICE_CPU; return CUDA_SUCCESS;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
}

/* Under U: [p, p + n) rounded out to host pages, inside one managed
 * allocation whose page records exist; its first page and page count. */
static CUresult managed_pages(CUdeviceptr p, size_t n, managed **out, size_t *first, size_t *count) {
  if (!n) return CUDA_ERROR_INVALID_VALUE;
  managed *m = managed_at(p);
  if (!m || n > m->base + m->size - p) return CUDA_ERROR_INVALID_VALUE;
  size_t ps = page_size();
  size_t npages = (m->size + (m->base % ps) + ps - 1) / ps;
  if (!m->pages) {
    m->pages = malloc(npages * sizeof *m->pages);
    if (!m->pages) return CUDA_ERROR_OUT_OF_MEMORY;
    for (size_t i = 0; i < npages; i++)
      m->pages[i] = (upage){.pref = CU_DEVICE_INVALID, .last = CU_DEVICE_INVALID};
  }
  CUdeviceptr first_page = m->base / ps * ps;
  *first = (size_t)((p / ps * ps - first_page) / ps);
  *count = (size_t)(((p + n + ps - 1) / ps * ps - p / ps * ps) / ps);
  if (*first + *count > npages) *count = npages - *first;
  *out = m;
  return CUDA_SUCCESS;
}

static CUresult prefetch(CUdeviceptr p, size_t n, int dev, CUstream s) {
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r == CUDA_SUCCESS) r = check_target(dev, true);
  if (r != CUDA_SUCCESS) return r;
  if (dev >= 0 && !rt_driver.props[dev].concurrent_managed) return CUDA_ERROR_INVALID_DEVICE;
  pthread_mutex_lock(&U);
  managed *m;
  size_t first, count;
  r = managed_pages(p, n, &m, &first, &count);
  if (r == CUDA_SUCCESS)
    for (size_t i = 0; i < count; i++) m->pages[first + i].last = (int8_t)dev;
  pthread_mutex_unlock(&U);
  if (r != CUDA_SUCCESS) return r;
  return rt_driver.backend->mem_prefetch ? rt_driver.backend->mem_prefetch(rt_driver.backend, p, n, dev, bs) : CUDA_SUCCESS;
}

/* CUDA 8's form, with a device ordinal. */
RT_EXPORT CUresult rt_cuMemPrefetchAsync_v1(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
    __asm__("cuMemPrefetchAsync");
RT_EXPORT CUresult rt_cuMemPrefetchAsync_v1(CUdeviceptr p, size_t n, CUdevice dev, CUstream s) {
  RT_TRACE("%#llx, %zu, %d, %p", (unsigned long long)p, n, dev, (void *)s);
  return rt_ret(prefetch(p, n, dev, s));
}

RT_EXPORT CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags,
                                      CUstream s) {
  RT_TRACE("%#llx, %zu, {%d, %d}, %#x, %p", (unsigned long long)p, n, (int)loc.type, loc.id, flags, (void *)s);
  if (flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  int dev;
  CUresult r = location_device(loc, &dev);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(prefetch(p, n, dev, s));
}

/* CUDA 13's batches: prefetchLocs[k] applies to ranges prefetchLocIdxs[k]
 * up to the next index (the last to the end); every range is managed. */
static CUresult prefetch_batch(CUdeviceptr *p, size_t *n, size_t count, CUmemLocation *locs, size_t *idx,
                               size_t nlocs, unsigned long long flags, CUstream s, bool discard) {
  if (flags || !count || !p || !n) return CUDA_ERROR_INVALID_VALUE;
  if (!discard && (!locs || !idx || !nlocs || idx[0] != 0)) return CUDA_ERROR_INVALID_VALUE;
  for (size_t k = 0; k + 1 < nlocs; k++)
    if (idx[k + 1] <= idx[k] || idx[k + 1] > count) return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < count; i++) {
    CUdeviceptr base;
    size_t bytes;
    if (!rt_managed_find(p[i], &base, &bytes, NULL) || n[i] > base + bytes - p[i]) return CUDA_ERROR_INVALID_VALUE;
  }
  CUresult r = CUDA_SUCCESS;
  for (size_t k = 0; !discard && r == CUDA_SUCCESS && k < nlocs; k++) {
    int dev;
    if ((r = location_device(locs[k], &dev)) != CUDA_SUCCESS) break;
    size_t end = k + 1 < nlocs ? idx[k + 1] : count;
    for (size_t i = idx[k]; r == CUDA_SUCCESS && i < end; i++) r = prefetch(p[i], n[i], dev, s);
  }
  return r;
}

RT_EXPORT CUresult cuMemPrefetchBatchAsync(CUdeviceptr *p, size_t *n, size_t count, CUmemLocation *locs,
                                           size_t *idx, size_t nlocs, unsigned long long flags, CUstream s) {
  RT_TRACE("%p, %p, %zu, %p, %p, %zu, %#llx, %p", (void *)p, (void *)n, count, (void *)locs, (void *)idx, nlocs,
           flags, (void *)s);
  return rt_ret(prefetch_batch(p, n, count, locs, idx, nlocs, flags, s, false));
}

/* A discard leaves the contents undefined: keeping them is one choice of
 * undefined, and nothing else changes (no memory moves here). */
RT_EXPORT CUresult cuMemDiscardBatchAsync(CUdeviceptr *p, size_t *n, size_t count, unsigned long long flags,
                                          CUstream s) {
  RT_TRACE("%p, %p, %zu, %#llx, %p", (void *)p, (void *)n, count, flags, (void *)s);
  CUresult r = rt_check_ctx();
  if (r == CUDA_SUCCESS) rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(prefetch_batch(p, n, count, NULL, NULL, 0, flags, s, true));
}

RT_EXPORT CUresult cuMemDiscardAndPrefetchBatchAsync(CUdeviceptr *p, size_t *n, size_t count, CUmemLocation *locs,
                                                     size_t *idx, size_t nlocs, unsigned long long flags,
                                                     CUstream s) {
  RT_TRACE("%p, %p, %zu, %p, %p, %zu, %#llx, %p", (void *)p, (void *)n, count, (void *)locs, (void *)idx, nlocs,
           flags, (void *)s);
  return rt_ret(prefetch_batch(p, n, count, locs, idx, nlocs, flags, s, false));
}

static CUresult advise(CUdeviceptr p, size_t n, CUmem_advise a, int dev) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  bool uses_dev = a != CU_MEM_ADVISE_SET_READ_MOSTLY && a != CU_MEM_ADVISE_UNSET_READ_MOSTLY;
  if (a < CU_MEM_ADVISE_SET_READ_MOSTLY || a > CU_MEM_ADVISE_UNSET_ACCESSED_BY) return CUDA_ERROR_INVALID_VALUE;
  if (uses_dev && (r = check_target(dev, true)) != CUDA_SUCCESS) return r;
  pthread_mutex_lock(&U);
  managed *m;
  size_t first, count;
  r = managed_pages(p, n, &m, &first, &count);
  for (size_t i = 0; r == CUDA_SUCCESS && i < count; i++) {
    upage *pg = &m->pages[first + i];
    uint32_t bit = dev == CU_DEVICE_CPU ? 1u << 31 : 1u << (dev & 15);
    switch (a) {
    case CU_MEM_ADVISE_SET_READ_MOSTLY: pg->read_mostly = 1; break;
    case CU_MEM_ADVISE_UNSET_READ_MOSTLY: pg->read_mostly = 0; break;
    case CU_MEM_ADVISE_SET_PREFERRED_LOCATION: pg->pref = (int8_t)dev; break;
    case CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION: pg->pref = CU_DEVICE_INVALID; break;
    case CU_MEM_ADVISE_SET_ACCESSED_BY: pg->accessed |= bit; break;
    case CU_MEM_ADVISE_UNSET_ACCESSED_BY: pg->accessed &= ~bit; break;
    }
  }
  pthread_mutex_unlock(&U);
  if (r != CUDA_SUCCESS) return r;
  return rt_driver.backend->mem_advise ? rt_driver.backend->mem_advise(rt_driver.backend, p, n, a, uses_dev ? dev : 0) : CUDA_SUCCESS;
}

RT_EXPORT CUresult rt_cuMemAdvise_v1(CUdeviceptr p, size_t n, CUmem_advise a, CUdevice dev) __asm__("cuMemAdvise");
RT_EXPORT CUresult rt_cuMemAdvise_v1(CUdeviceptr p, size_t n, CUmem_advise a, CUdevice dev) {
  RT_TRACE("%#llx, %zu, %d, %d", (unsigned long long)p, n, (int)a, dev);
  return rt_ret(advise(p, n, a, dev));
}

RT_EXPORT CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise a, CUmemLocation loc) {
  RT_TRACE("%#llx, %zu, %d, {%d, %d}", (unsigned long long)p, n, (int)a, (int)loc.type, loc.id);
  int dev = 0;
  if (a != CU_MEM_ADVISE_SET_READ_MOSTLY && a != CU_MEM_ADVISE_UNSET_READ_MOSTLY) {
    CUresult r = location_device(loc, &dev);
    if (r != CUDA_SUCCESS) return rt_ret(r);
  }
  return rt_ret(advise(p, n, a, dev));
}

RT_EXPORT CUresult cuStreamAttachMemAsync(CUstream s, CUdeviceptr p, size_t n, unsigned int flags) {
  RT_TRACE("%p, %#llx, %zu, %#x", (void *)s, (unsigned long long)p, n, flags);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST && flags != CU_MEM_ATTACH_SINGLE)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr base;
  size_t size;
  if (!rt_managed_find(p, &base, &size, NULL) || (n && (base != p || n != size)))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);   /* length 0 or the whole allocation */
  /* which streams may touch it changes nothing where the host always may */
  return rt_ret(CUDA_SUCCESS);
}

/* One attribute over a range of pages: the common value, or `mixed`. */
static int common(const managed *m, size_t first, size_t count, int (*get)(const upage *), int mixed) {
  int v = get(&m->pages[first]);
  for (size_t i = 1; i < count; i++)
    if (get(&m->pages[first + i]) != v) return mixed;
  return v;
}
static int get_rm(const upage *p) { return p->read_mostly; }
static int get_pref(const upage *p) { return p->pref; }
static int get_last(const upage *p) { return p->last; }

static CUmemLocationType loc_type(int dev) {
  return dev == CU_DEVICE_INVALID ? CU_MEM_LOCATION_TYPE_INVALID
         : dev == CU_DEVICE_CPU   ? CU_MEM_LOCATION_TYPE_HOST
                                  : CU_MEM_LOCATION_TYPE_DEVICE;
}

static CUresult range_attribute(void *data, size_t size, CUmem_range_attribute a, CUdeviceptr p, size_t n) {
  if (!data) return CUDA_ERROR_INVALID_VALUE;
  bool list = a == CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY;
  if (list ? (!size || size % 4) : size != 4) return CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_lock(&U);
  managed *m;
  size_t first, count;
  CUresult r = managed_pages(p, n, &m, &first, &count);
  int *out = data;
  if (r == CUDA_SUCCESS) switch (a) {
    case CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY: *out = common(m, first, count, get_rm, 0); break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION:
      *out = common(m, first, count, get_pref, CU_DEVICE_INVALID);
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION:
      *out = common(m, first, count, get_last, CU_DEVICE_INVALID);
      break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE:
      *out = loc_type(common(m, first, count, get_pref, CU_DEVICE_INVALID));
      break;
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE:
      *out = loc_type(common(m, first, count, get_last, CU_DEVICE_INVALID));
      break;
    case CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID:
    case CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID: {
      /* the device ordinal; for the host, its NUMA node (one node here: 0) */
      int d = common(m, first, count, a == CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID ? get_pref : get_last,
                     CU_DEVICE_INVALID);
      *out = d == CU_DEVICE_CPU ? 0 : d;
      break;
    }
    case CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY: {
      /* the devices advised for the whole range, then CU_DEVICE_INVALID */
      uint32_t all = ~0u;
      for (size_t i = 0; i < count; i++) all &= m->pages[first + i].accessed;
      size_t k = 0, cap = size / 4;
      if ((all >> 31) & 1 && k < cap) out[k++] = CU_DEVICE_CPU;
      for (int d = 0; d < rt_driver.ndev && k < cap; d++)
        if ((all >> d) & 1) out[k++] = d;
      while (k < cap) out[k++] = CU_DEVICE_INVALID;
      break;
    }
    default: r = CUDA_ERROR_INVALID_VALUE; break;
    }
  pthread_mutex_unlock(&U);
  return r;
}

RT_EXPORT CUresult cuMemRangeGetAttribute(void *data, size_t size, CUmem_range_attribute a, CUdeviceptr p,
                                          size_t n) {
  RT_TRACE("%p, %zu, %d, %#llx, %zu", data, size, (int)a, (unsigned long long)p, n);
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  return rt_ret(range_attribute(data, size, a, p, n));
}

RT_EXPORT CUresult cuMemRangeGetAttributes(void **data, size_t *sizes, CUmem_range_attribute *attrs, size_t num,
                                           CUdeviceptr p, size_t n) {
  RT_TRACE("%p, %p, %p, %zu, %#llx, %zu", (void *)data, (void *)sizes, (void *)attrs, num, (unsigned long long)p, n);
  if (!data || !sizes || !attrs || !num) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_init();
  for (size_t i = 0; r == CUDA_SUCCESS && i < num; i++) r = range_attribute(data[i], sizes[i], attrs[i], p, n);
  return rt_ret(r);
}

/* ---- several devices: peer access ------------------------------------------ */
RT_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
  RT_TRACE("%p, %d, %d", (void *)can, dev, peer);
  if (!can) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r == CUDA_SUCCESS) r = rt_check_device(peer);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  *can = 0;
  if (dev != peer && rt_driver.backend->can_access_peer) r = rt_driver.backend->can_access_peer(rt_driver.backend, dev, peer, can);
  return rt_ret(r);
}

RT_EXPORT CUresult cuDeviceGetP2PAttribute(int *value, CUdevice_P2PAttribute a, CUdevice src, CUdevice dst) {
  RT_TRACE("%p, %d, %d, %d", (void *)value, (int)a, src, dst);
  if (!value) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(src);
  if (r == CUDA_SUCCESS) r = rt_check_device(dst);
  if (r == CUDA_SUCCESS && src == dst) r = CUDA_ERROR_INVALID_DEVICE;
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (a < CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK || a > CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  int can = 0;
  if (rt_driver.backend->can_access_peer) rt_driver.backend->can_access_peer(rt_driver.backend, src, dst, &can);
  *value = 0;
  if (can && rt_driver.backend->p2p_attribute) r = rt_driver.backend->p2p_attribute(rt_driver.backend, a, src, dst, value);
  return rt_ret(r);
}

static CUresult peer_ctx(CUcontext peer, CUcontext *cur) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  *cur = rt_current_ctx();
  if (!*cur || !rt_handle_valid(rt_h_context, peer)) return CUDA_ERROR_INVALID_CONTEXT;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  RT_TRACE("%p, %#x", (void *)peer, flags);
  if (flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUcontext cur;
  CUresult r = peer_ctx(peer, &cur);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (peer->device == cur->device) return rt_ret(CUDA_ERROR_INVALID_DEVICE);
  int can = 0;
  if (rt_driver.backend->can_access_peer) rt_driver.backend->can_access_peer(rt_driver.backend, cur->device, peer->device, &can);
  if (!can) return rt_ret(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  uint32_t bit = 1u << peer->device;
  if (__atomic_load_n(&cur->peers, __ATOMIC_ACQUIRE) & bit) return rt_ret(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  r = rt_driver.backend->peer_access ? rt_driver.backend->peer_access(rt_driver.backend, peer->device, true) : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) __atomic_fetch_or(&cur->peers, bit, __ATOMIC_ACQ_REL);
  return rt_ret(r);
}

RT_EXPORT CUresult cuCtxDisablePeerAccess(CUcontext peer) {
  RT_TRACE("%p", (void *)peer);
  CUcontext cur;
  CUresult r = peer_ctx(peer, &cur);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  uint32_t bit = 1u << peer->device;
  if (!(__atomic_load_n(&cur->peers, __ATOMIC_ACQUIRE) & bit)) return rt_ret(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED);
  r = rt_driver.backend->peer_access ? rt_driver.backend->peer_access(rt_driver.backend, peer->device, false) : CUDA_SUCCESS;
  if (r == CUDA_SUCCESS) __atomic_fetch_and(&cur->peers, ~bit, __ATOMIC_ACQ_REL);
  return rt_ret(r);
}

/* Device to device across contexts: HIP's hipMemcpyPeer; captured, a copy
 * node (one address space: the devices do not matter to the graph). */
static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s,
                          bool async) {
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  if (!rt_handle_valid(rt_h_context, dctx) || !rt_handle_valid(rt_h_context, sctx)) return CUDA_ERROR_INVALID_CONTEXT;
  if (!n) return CUDA_SUCCESS;
  rt_bstream bs = rt_stream_backend(s, &r);
  if (r != CUDA_SUCCESS) return r;
  if (rt_capturing() || !rt_driver.backend->memcpy_peer)
    return async ? cuMemcpyDtoDAsync(dst, src, n, s) : cuMemcpyDtoD(dst, src, n);
  if (!async && (r = rt_capture_unsafe()) != CUDA_SUCCESS) return r;
  return rt_fault(rt_driver.backend->memcpy_peer(rt_driver.backend, dst, dctx->device, src, sctx->device, n, bs, async));
}

RT_EXPORT CUresult cuMemcpyPeer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n) {
  RT_TRACE("%#llx, %p, %#llx, %p, %zu", (unsigned long long)dst, (void *)dctx, (unsigned long long)src,
           (void *)sctx, n);
  return rt_ret(copy_peer(dst, dctx, src, sctx, n, NULL, false));
}

RT_EXPORT CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n,
                                     CUstream s) {
  RT_TRACE("%#llx, %p, %#llx, %p, %zu, %p", (unsigned long long)dst, (void *)dctx, (unsigned long long)src,
           (void *)sctx, n, (void *)s);
  return rt_ret(copy_peer(dst, dctx, src, sctx, n, s, true));
}

/* A 3D copy between contexts is a 3D copy: one address space. */
static CUresult copy3d_peer(const CUDA_MEMCPY3D_PEER *c, CUstream s, bool async) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  if ((c->srcMemoryType == CU_MEMORYTYPE_DEVICE && c->srcContext && !rt_handle_valid(rt_h_context, c->srcContext)) ||
      (c->dstMemoryType == CU_MEMORYTYPE_DEVICE && c->dstContext && !rt_handle_valid(rt_h_context, c->dstContext)))
    return CUDA_ERROR_INVALID_CONTEXT;
  CUDA_MEMCPY3D d = {.srcXInBytes = c->srcXInBytes, .srcY = c->srcY, .srcZ = c->srcZ, .srcLOD = c->srcLOD,
                     .srcMemoryType = c->srcMemoryType, .srcHost = c->srcHost, .srcDevice = c->srcDevice,
                     .srcArray = c->srcArray, .srcPitch = c->srcPitch, .srcHeight = c->srcHeight,
                     .dstXInBytes = c->dstXInBytes, .dstY = c->dstY, .dstZ = c->dstZ, .dstLOD = c->dstLOD,
                     .dstMemoryType = c->dstMemoryType, .dstHost = c->dstHost, .dstDevice = c->dstDevice,
                     .dstArray = c->dstArray, .dstPitch = c->dstPitch, .dstHeight = c->dstHeight,
                     .WidthInBytes = c->WidthInBytes, .Height = c->Height, .Depth = c->Depth};
  return async ? cuMemcpy3DAsync(&d, s) : cuMemcpy3D(&d);
}

RT_EXPORT CUresult cuMemcpy3DPeer(const CUDA_MEMCPY3D_PEER *c) {
  RT_TRACE("%p", (const void *)c);
  return rt_ret(copy3d_peer(c, NULL, false));
}

RT_EXPORT CUresult cuMemcpy3DPeerAsync(const CUDA_MEMCPY3D_PEER *c, CUstream s) {
  RT_TRACE("%p, %p", (const void *)c, (void *)s);
  return rt_ret(copy3d_peer(c, s, true));
}

/* ---- IPC of memory (events: rt_memory.c) -------------------------------- */
RT_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr p) {
  RT_TRACE("%p, %#llx", (void *)h, (unsigned long long)p);
  if (!h || !p) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!rt_driver.backend->ipc_mem_get) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  return rt_ret(rt_driver.backend->ipc_mem_get(rt_driver.backend, p, h));
}

RT_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags) {
  RT_TRACE("%p, %#x", (void *)p, flags);
  if (!p || (flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!rt_driver.backend->ipc_mem_open) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  uint64_t q = 0;
  r = rt_driver.backend->ipc_mem_open(rt_driver.backend, &h, &q);
  if (r == CUDA_SUCCESS) *p = q;
  else RT_LOG(rt_debug, "cuIpcOpenMemHandle: %s", rt_driver.backend->error);
  return rt_ret(r);
}

/* CUDA 4.1's symbol: the same signature. */
RT_EXPORT CUresult rt_cuIpcOpenMemHandle_v1(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags)
    __asm__("cuIpcOpenMemHandle");
RT_EXPORT CUresult rt_cuIpcOpenMemHandle_v1(CUdeviceptr *p, CUipcMemHandle h, unsigned int flags) {
  return cuIpcOpenMemHandle(p, h, flags);
}

RT_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p) {
  RT_TRACE("%#llx", (unsigned long long)p);
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!rt_driver.backend->ipc_mem_close) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  return rt_ret(rt_driver.backend->ipc_mem_close(rt_driver.backend, p));
}

/* ---- virtual memory management ------------------------------------------------ */
typedef struct vphys {
  void *bh;                   /* the backend's */
  size_t size;
  CUmemAllocationProp prop;
  int handles;                /* handles not yet released (cuMemCreate, Retain, Import) */
  int mapped;                 /* mappings of it */
  struct vphys *next;
} vphys;

typedef struct vmap {
  CUdeviceptr va;
  size_t size;
  vphys *ph;
  unsigned long long access[16];   /* CUmemAccess_flags per device */
  unsigned long long host;         /* the host's (host-located allocations) */
} vmap;

typedef struct vres {
  CUdeviceptr va;
  size_t size;
} vres;

static vphys *phys_list;
static vmap *maps;
static size_t nmaps, capmaps;
static vres *res;
static size_t nres, capres;

static bool phys_valid(vphys *p) {
  for (vphys *q = phys_list; q; q = q->next)
    if (q == p) return true;
  return false;
}

/* Under U: with its last handle released and its last mapping unmapped,
 * the memory goes (cuMemRelease's documentation). */
static void phys_drop(vphys *p) {
  if (p->handles || p->mapped) return;
  for (vphys **q = &phys_list; *q; q = &(*q)->next)
    if (*q == p) {
      *q = p->next;
      break;
    }
  rt_driver.backend->vmm_release(rt_driver.backend, p->bh);
  free(p);
}

static CUresult vmm_ready(void) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  return rt_driver.backend->vmm_granularity ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

/* A pinned allocation on a device or on the host (CUDA 12.2's host
 * locations: a host NUMA node, or the host; the node closest to the
 * caller is refused, as the driver API documents). */
static CUresult check_prop(const CUmemAllocationProp *p) {
  if (!p || p->type != CU_MEM_ALLOCATION_TYPE_PINNED) return CUDA_ERROR_INVALID_VALUE;
  switch (p->location.type) {
  case CU_MEM_LOCATION_TYPE_DEVICE:
    if (p->location.id < 0 || p->location.id >= rt_driver.ndev) return CUDA_ERROR_INVALID_DEVICE;
    break;
  case CU_MEM_LOCATION_TYPE_HOST: break;
  case CU_MEM_LOCATION_TYPE_HOST_NUMA:
    if (p->location.id < 0) return CUDA_ERROR_INVALID_VALUE;
    break;
  default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (p->requestedHandleTypes & ~(unsigned)CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return CUDA_ERROR_NOT_SUPPORTED;
  return CUDA_SUCCESS;
}

/* The device an allocation's memory counts against; -1 for the host. */
static int prop_device(const CUmemAllocationProp *p) {
  return p->location.type == CU_MEM_LOCATION_TYPE_DEVICE ? p->location.id : -1;
}

RT_EXPORT CUresult cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *prop,
                                                 CUmemAllocationGranularity_flags option) {
  RT_TRACE("%p, %p, %d", (void *)g, (const void *)prop, (int)option);
  if (!g || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED))
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = vmm_ready();
  if (r == CUDA_SUCCESS) r = check_prop(prop);
  if (r == CUDA_SUCCESS) *g = rt_driver.backend->vmm_granularity;
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t align, CUdeviceptr addr,
                                       unsigned long long flags) {
  RT_TRACE("%p, %zu, %zu, %#llx, %#llx", (void *)ptr, size, align, (unsigned long long)addr, flags);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  size_t g = rt_driver.backend->vmm_granularity;
  if (!ptr || !size || size % g || (align & (align - 1)) || flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  uint64_t p;
  pthread_mutex_lock(&U);
  if (nres == capres) {
    size_t nc = capres ? capres * 2 : 8;
    vres *nr = realloc(res, nc * sizeof *nr);
    if (!nr) {
      pthread_mutex_unlock(&U);
      return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
    }
    res = nr;
    capres = nc;
  }
  r = rt_driver.backend->vmm_reserve(rt_driver.backend, size, align, addr, &p);
  if (r == CUDA_SUCCESS) {
    res[nres++] = (vres){p, size};
    *ptr = p;
  }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size) {
  RT_TRACE("%#llx, %zu", (unsigned long long)ptr, size);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  pthread_mutex_lock(&U);
  size_t i = 0;
  while (i < nres && !(res[i].va == ptr && res[i].size == size)) i++;
  r = i < nres ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  for (size_t k = 0; r == CUDA_SUCCESS && k < nmaps; k++)
    if (maps[k].va >= ptr && maps[k].va < ptr + size) r = CUDA_ERROR_INVALID_VALUE;   /* still mapped */
  if (r == CUDA_SUCCESS) r = rt_driver.backend->vmm_free(rt_driver.backend, ptr, size);
  if (r == CUDA_SUCCESS) res[i] = res[--nres];
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
                               unsigned long long flags) {
  RT_TRACE("%p, %zu, %p, %#llx", (void *)h, size, (const void *)prop, flags);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!h || !size || flags || size % rt_driver.backend->vmm_granularity) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if ((r = check_prop(prop)) != CUDA_SUCCESS) return rt_ret(r);
  vphys *p = calloc(1, sizeof *p);
  if (!p) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  r = rt_driver.backend->vmm_create(rt_driver.backend, size, prop_device(prop),
                             prop->requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, &p->bh);
  if (r != CUDA_SUCCESS) {
    free(p);
    return rt_ret(r);
  }
  p->size = size;
  p->prop = *prop;
  p->handles = 1;
  pthread_mutex_lock(&U);
  p->next = phys_list;
  phys_list = p;
  pthread_mutex_unlock(&U);
  *h = (CUmemGenericAllocationHandle)(uintptr_t)p;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h) {
  RT_TRACE("%#llx", (unsigned long long)h);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  vphys *p = (vphys *)(uintptr_t)h;
  pthread_mutex_lock(&U);
  if (!phys_valid(p) || !p->handles) {
    r = CUDA_ERROR_INVALID_VALUE;
  } else {
    p->handles--;
    phys_drop(p);
  }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

/* Under U: the reservation holding [p, p + n), or NULL. */
static vres *reservation(CUdeviceptr p, size_t n) {
  for (size_t i = 0; i < nres; i++)
    if (p >= res[i].va && n <= res[i].size && p - res[i].va <= res[i].size - n) return &res[i];
  return NULL;
}

RT_EXPORT CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle h,
                            unsigned long long flags) {
  RT_TRACE("%#llx, %zu, %zu, %#llx, %#llx", (unsigned long long)ptr, size, offset, (unsigned long long)h, flags);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  size_t g = rt_driver.backend->vmm_granularity;
  /* CUDA: the offset "must currently be zero" */
  if (!size || size % g || ptr % g || offset || flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  vphys *p = (vphys *)(uintptr_t)h;
  pthread_mutex_lock(&U);
  if (!phys_valid(p) || size > p->size || !reservation(ptr, size)) r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; r == CUDA_SUCCESS && i < nmaps; i++)
    if (maps[i].va < ptr + size && ptr < maps[i].va + maps[i].size) r = CUDA_ERROR_INVALID_VALUE;  /* mapped */
  if (r == CUDA_SUCCESS && nmaps == capmaps) {
    size_t nc = capmaps ? capmaps * 2 : 16;
    vmap *nm = realloc(maps, nc * sizeof *nm);
    if (nm) {
      maps = nm;
      capmaps = nc;
    } else {
      r = CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  if (r == CUDA_SUCCESS) r = rt_driver.backend->vmm_map(rt_driver.backend, ptr, size, offset, p->bh);
  if (r == CUDA_SUCCESS) {
    maps[nmaps++] = (vmap){.va = ptr, .size = size, .ph = p};
    p->mapped++;
  }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size) {
  RT_TRACE("%#llx, %zu", (unsigned long long)ptr, size);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!size) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  pthread_mutex_lock(&U);
  /* whole mappings only, and at least one */
  bool any = false;
  for (size_t i = 0; r == CUDA_SUCCESS && i < nmaps; i++) {
    if (!(maps[i].va < ptr + size && ptr < maps[i].va + maps[i].size)) continue;
    if (maps[i].va < ptr || maps[i].va + maps[i].size > ptr + size) r = CUDA_ERROR_INVALID_VALUE;
    any = true;
  }
  if (r == CUDA_SUCCESS && !any) r = CUDA_ERROR_INVALID_VALUE;
  if (r == CUDA_SUCCESS) r = rt_driver.backend->vmm_unmap(rt_driver.backend, ptr, size);
  if (r == CUDA_SUCCESS)
    for (size_t i = 0; i < nmaps;) {
      if (maps[i].va >= ptr && maps[i].va < ptr + size) {
        vphys *ph = maps[i].ph;
        maps[i] = maps[--nmaps];
        ph->mapped--;
        phys_drop(ph);
      } else {
        i++;
      }
    }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count) {
  RT_TRACE("%#llx, %zu, %p, %zu", (unsigned long long)ptr, size, (const void *)desc, count);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!size || !desc || !count) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  for (size_t k = 0; k < count; k++) {
    CUmemLocationType t = desc[k].location.type;
    if (t != CU_MEM_LOCATION_TYPE_DEVICE && t != CU_MEM_LOCATION_TYPE_HOST && t != CU_MEM_LOCATION_TYPE_HOST_NUMA)
      return rt_ret(CUDA_ERROR_INVALID_VALUE);
    if (t == CU_MEM_LOCATION_TYPE_DEVICE && (desc[k].location.id < 0 || desc[k].location.id >= rt_driver.ndev))
      return rt_ret(CUDA_ERROR_INVALID_DEVICE);
    if (desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_NONE && desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_READ &&
        desc[k].flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
      return rt_ret(CUDA_ERROR_INVALID_VALUE);
  }
  pthread_mutex_lock(&U);
  /* the range is mapped throughout, by whole mappings */
  size_t covered = 0;
  for (size_t i = 0; r == CUDA_SUCCESS && i < nmaps; i++) {
    if (!(maps[i].va < ptr + size && ptr < maps[i].va + maps[i].size)) continue;
    if (maps[i].va < ptr || maps[i].va + maps[i].size > ptr + size) r = CUDA_ERROR_INVALID_VALUE;
    covered += maps[i].size;
  }
  if (r == CUDA_SUCCESS && covered != size) r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; r == CUDA_SUCCESS && i < nmaps; i++) {
    if (!(maps[i].va >= ptr && maps[i].va < ptr + size)) continue;
    for (size_t k = 0; r == CUDA_SUCCESS && k < count; k++) {
      if (desc[k].location.type != CU_MEM_LOCATION_TYPE_DEVICE) {
        /* the host's access to host memory: every mapping here is host
         * memory to the host (the emulator), or HIP's to set */
        maps[i].host = desc[k].flags;
        continue;
      }
      int d = desc[k].location.id;
      r = rt_driver.backend->vmm_set_access(rt_driver.backend, maps[i].va, maps[i].size, d, desc[k].flags);
      if (r == CUDA_SUCCESS) maps[i].access[d] = desc[k].flags;
    }
  }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr ptr) {
  RT_TRACE("%p, %p, %#llx", (void *)flags, (const void *)loc, (unsigned long long)ptr);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!flags || !loc) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  bool dev = loc->type == CU_MEM_LOCATION_TYPE_DEVICE;
  if (!dev && loc->type != CU_MEM_LOCATION_TYPE_HOST && loc->type != CU_MEM_LOCATION_TYPE_HOST_NUMA)
    return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (dev && (loc->id < 0 || loc->id >= rt_driver.ndev)) return rt_ret(CUDA_ERROR_INVALID_DEVICE);
  pthread_mutex_lock(&U);
  r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < nmaps; i++)
    if (ptr >= maps[i].va && ptr < maps[i].va + maps[i].size) {
      *flags = dev ? maps[i].access[loc->id] : maps[i].host;
      r = CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp *prop, CUmemGenericAllocationHandle h) {
  RT_TRACE("%p, %#llx", (void *)prop, (unsigned long long)h);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!prop) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  vphys *p = (vphys *)(uintptr_t)h;
  pthread_mutex_lock(&U);
  if (phys_valid(p)) *prop = p->prop;
  else r = CUDA_ERROR_INVALID_VALUE;
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle *h, void *addr) {
  RT_TRACE("%p, %p", (void *)h, addr);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!h) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUdeviceptr a = (CUdeviceptr)(uintptr_t)addr;
  pthread_mutex_lock(&U);
  r = CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < nmaps; i++)
    if (a >= maps[i].va && a < maps[i].va + maps[i].size) {
      maps[i].ph->handles++;   /* one more handle to release */
      *h = (CUmemGenericAllocationHandle)(uintptr_t)maps[i].ph;
      r = CUDA_SUCCESS;
      break;
    }
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemExportToShareableHandle(void *out, CUmemGenericAllocationHandle h,
                                                CUmemAllocationHandleType type, unsigned long long flags) {
  RT_TRACE("%p, %#llx, %d, %#llx", out, (unsigned long long)h, (int)type, flags);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!out || flags) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  vphys *p = (vphys *)(uintptr_t)h;
  pthread_mutex_lock(&U);
  if (!phys_valid(p) || !(p->prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR))
    r = CUDA_ERROR_INVALID_VALUE;   /* not made exportable (cuMemCreate's requestedHandleTypes) */
  else r = rt_driver.backend->vmm_export_fd(rt_driver.backend, p->bh, (int *)out);
  pthread_mutex_unlock(&U);
  return rt_ret(r);
}

RT_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle *h, void *os,
                                                  CUmemAllocationHandleType type) {
  RT_TRACE("%p, %p, %d", (void *)h, os, (int)type);
  CUresult r = vmm_ready();
  if (r != CUDA_SUCCESS) return rt_ret(r);
  if (!h) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  vphys *p = calloc(1, sizeof *p);
  if (!p) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  /* POSIX: the descriptor itself, passed as the pointer's value */
  r = rt_driver.backend->vmm_import_fd(rt_driver.backend, (int)(intptr_t)os, &p->bh, &p->size);
  if (r != CUDA_SUCCESS) {
    free(p);
    return rt_ret(r);
  }
  if (!p->size) p->size = SIZE_MAX;   /* the backend cannot tell: mappings are not bounded here */
  p->prop = (CUmemAllocationProp){.type = CU_MEM_ALLOCATION_TYPE_PINNED,
                                  .requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                                  .location = {.type = CU_MEM_LOCATION_TYPE_DEVICE, .id = current_device()}};
  p->handles = 1;
  pthread_mutex_lock(&U);
  p->next = phys_list;
  phys_list = p;
  pthread_mutex_unlock(&U);
  *h = (CUmemGenericAllocationHandle)(uintptr_t)p;
  return rt_ret(CUDA_SUCCESS);
}

bool rt_vmm_mapped(CUdeviceptr p) {
  pthread_mutex_lock(&U);
  bool found = false;
  for (size_t i = 0; i < nmaps && !found; i++) found = p >= maps[i].va && p < maps[i].va + maps[i].size;
  pthread_mutex_unlock(&U);
  return found;
}
