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

/* ---- several devices: peer access ------------------------------------------ */
RT_EXPORT CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer) {
  RT_TRACE("%p, %d, %d", (void *)can, dev, peer);
  if (!can) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = rt_check_device(dev);
  if (r == CUDA_SUCCESS) r = rt_check_device(peer);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  *can = 0;
  if (dev != peer && rt.backend->can_access_peer) r = rt.backend->can_access_peer(rt.backend, dev, peer, can);
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
  if (rt.backend->can_access_peer) rt.backend->can_access_peer(rt.backend, src, dst, &can);
  *value = 0;
  if (can && rt.backend->p2p_attribute) r = rt.backend->p2p_attribute(rt.backend, a, src, dst, value);
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
  if (rt.backend->can_access_peer) rt.backend->can_access_peer(rt.backend, cur->device, peer->device, &can);
  if (!can) return rt_ret(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED);
  uint32_t bit = 1u << peer->device;
  if (__atomic_load_n(&cur->peers, __ATOMIC_ACQUIRE) & bit) return rt_ret(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED);
  r = rt.backend->peer_access ? rt.backend->peer_access(rt.backend, peer->device, true) : CUDA_SUCCESS;
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
  r = rt.backend->peer_access ? rt.backend->peer_access(rt.backend, peer->device, false) : CUDA_SUCCESS;
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
  if (rt_capturing() || !rt.backend->memcpy_peer)
    return async ? cuMemcpyDtoDAsync(dst, src, n, s) : cuMemcpyDtoD(dst, src, n);
  if (!async && (r = rt_capture_unsafe()) != CUDA_SUCCESS) return r;
  return rt_fault(rt.backend->memcpy_peer(rt.backend, dst, dctx->device, src, sctx->device, n, bs, async));
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
