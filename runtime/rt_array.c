/* runtime/rt_array.c: CUDA arrays and the 3D copies (docs/runtime.md,
 * "Textures and surfaces").
 *
 * An array is a device allocation we own, row-major and tight: a row is
 * Width * element bytes, a slice Height rows (at least one), Depth slices
 * (at least one).  Layered arrays keep their layers as slices (CUDA gives
 * a layered array's layer count as its Depth): a 1D layered array is Depth
 * slices of one row, so its slice and pitch are equal and the layer is
 * both the slice and the row index (lower_tex addresses the layer of a1d
 * as the row, of a2d as the slice).  A cubemap is six slices, its faces;
 * a layered cubemap 6 * layers, cubemap l's faces at slices 6l..6l+5.
 * Textures and surfaces on an array get its base, pitch and slice
 * (rt_tex.c); the copies treat an array as device memory with that pitch.
 */
#include <stdlib.h>
#include <string.h>

#include "runtime/rt.h"

#define ARRAY_MAGIC 0x41727221u

struct CUarray_st {
  uint32_t magic;
  CUDA_ARRAY3D_DESCRIPTOR desc;
  uint64_t base;
  size_t pitch, slice;        /* bytes per row, per slice */
};

/* Bytes per channel of a CUarray_format (cuda.h), 0 if not supported. */
unsigned rt_format_bytes(CUarray_format f) {
  switch (f) {
  case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
  case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
  case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
  default: return 0;
  }
}

bool rt_array_get(CUarray a, rt_array_info *out) {
  if (!a || a->magic != ARRAY_MAGIC) return false;
  out->desc = a->desc;
  out->base = a->base;
  out->pitch = a->pitch;
  out->slice = a->slice;
  return true;
}

static CUresult create(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d) {
  if (!pa || !d || !d->Width) return CUDA_ERROR_INVALID_VALUE;
  unsigned cb = rt_format_bytes(d->Format);
  if (!cb) return CUDA_ERROR_NOT_SUPPORTED;
  if (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4) return CUDA_ERROR_INVALID_VALUE;
  if (d->Flags & ~(unsigned)(CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_TEXTURE_GATHER |
                             CUDA_ARRAY3D_CUBEMAP))
    return CUDA_ERROR_NOT_SUPPORTED;
  /* cuArray3DCreate (cuda.h): a cubemap has Width == Height and Depth six
   * (its faces, in CUarray_cubemap_face order), a layered one a multiple
   * of six; all three extents non-zero. */
  if (d->Flags & CUDA_ARRAY3D_CUBEMAP) {
    bool layered = d->Flags & CUDA_ARRAY3D_LAYERED;
    if (d->Width != d->Height || !d->Depth || (layered ? d->Depth % 6 : d->Depth != 6))
      return CUDA_ERROR_INVALID_VALUE;
  }
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  struct CUarray_st *a = calloc(1, sizeof *a);
  if (!a) return CUDA_ERROR_OUT_OF_MEMORY;
  a->magic = ARRAY_MAGIC;
  a->desc = *d;
  a->pitch = d->Width * cb * d->NumChannels;
  a->slice = a->pitch * (d->Height ? d->Height : 1);
  size_t bytes = a->slice * (d->Depth ? d->Depth : 1);
  r = rt_driver.backend->mem_alloc(rt_driver.backend, bytes, &a->base);
  if (r != CUDA_SUCCESS) {
    free(a);
    return r;
  }
  *pa = a;
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuArrayCreate(CUarray *pa, const CUDA_ARRAY_DESCRIPTOR *d) {
  RT_TRACE("%p, %p", (void *)pa, (const void *)d);
  if (!d) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUDA_ARRAY3D_DESCRIPTOR d3 = {.Width = d->Width, .Height = d->Height, .Depth = 0, .Format = d->Format,
                                .NumChannels = d->NumChannels, .Flags = 0};
  return rt_ret(create(pa, &d3));
}

RT_EXPORT CUresult cuArray3DCreate(CUarray *pa, const CUDA_ARRAY3D_DESCRIPTOR *d) {
  RT_TRACE("%p, %p", (void *)pa, (const void *)d);
  return rt_ret(create(pa, d));
}

RT_EXPORT CUresult cuArrayDestroy(CUarray a) {
  RT_TRACE("%p", (void *)a);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  CUresult r = rt_driver.backend->mem_free(rt_driver.backend, a->base);
  a->magic = 0;
  free(a);
  return rt_ret(r);
}

RT_EXPORT CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR *d, CUarray a) {
  RT_TRACE("%p, %p", (void *)d, (void *)a);
  if (!d) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  if (a->desc.Depth) return rt_ret(CUDA_ERROR_INVALID_VALUE);   /* a 3D array: cuArray3DGetDescriptor */
  *d = (CUDA_ARRAY_DESCRIPTOR){.Width = a->desc.Width, .Height = a->desc.Height, .Format = a->desc.Format,
                               .NumChannels = a->desc.NumChannels};
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuArray3DGetDescriptor(CUDA_ARRAY3D_DESCRIPTOR *d, CUarray a) {
  RT_TRACE("%p, %p", (void *)d, (void *)a);
  if (!d) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *d = a->desc;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- 3D copies: one row at a time ------------------------------------------ */
typedef struct side {
  CUmemorytype kind;          /* host or device (an array is device memory) */
  char *p;
  size_t pitch, height;
} side;

static CUresult resolve(CUmemorytype t, const void *host, CUdeviceptr dev, CUarray arr, size_t pitch,
                        size_t height, size_t width, side *s) {
  if (t == CU_MEMORYTYPE_ARRAY) {
    if (!arr || arr->magic != ARRAY_MAGIC) return CUDA_ERROR_INVALID_HANDLE;
    *s = (side){CU_MEMORYTYPE_DEVICE, (char *)(uintptr_t)arr->base, arr->pitch,
                arr->desc.Height ? arr->desc.Height : 1};
    return CUDA_SUCCESS;
  }
  if (t == CU_MEMORYTYPE_HOST) *s = (side){CU_MEMORYTYPE_HOST, (char *)(uintptr_t)host, pitch, height};
  else if (t == CU_MEMORYTYPE_DEVICE || t == CU_MEMORYTYPE_UNIFIED)
    *s = (side){t, (char *)(uintptr_t)dev, pitch, height};
  else return CUDA_ERROR_INVALID_VALUE;
  if (!s->pitch) s->pitch = width;
  return CUDA_SUCCESS;
}

static CUresult copy3d(const CUDA_MEMCPY3D *c, CUstream st, bool async) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  if (c->srcLOD || c->dstLOD) return CUDA_ERROR_NOT_SUPPORTED;   /* no mipmapped arrays */
  side s, d;
  r = resolve(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcArray, c->srcPitch, c->srcHeight, c->WidthInBytes, &s);
  if (r == CUDA_SUCCESS)
    r = resolve(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstArray, c->dstPitch, c->dstHeight, c->WidthInBytes, &d);
  if (r != CUDA_SUCCESS) return r;
  size_t depth = c->Depth ? c->Depth : 1, height = c->Height ? c->Height : 1;
  if (s.pitch < c->WidthInBytes || d.pitch < c->WidthInBytes) return CUDA_ERROR_INVALID_VALUE;
  if (depth > 1 && (s.height < height || d.height < height)) return CUDA_ERROR_INVALID_VALUE;
  rt_bstream bs = rt_stream_backend(st, &r);
  if (r == CUDA_SUCCESS && !async) r = rt_capture_unsafe();
  if (r != CUDA_SUCCESS) return r;
  if (rt_capturing()) {
    rt_op op = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .cp = *c};   /* a memcpy node (rt_graph.c) */
    bool captured;
    r = rt_capture_op(async ? st : NULL, &op, &captured);
    if (r != CUDA_SUCCESS || captured) return r;
  }
  for (size_t z = 0; z < depth; z++)
    for (size_t y = 0; y < height; y++) {
      const char *sp = s.p + ((c->srcZ + z) * s.height + c->srcY + y) * s.pitch + c->srcXInBytes;
      char *dp = d.p + ((c->dstZ + z) * d.height + c->dstY + y) * d.pitch + c->dstXInBytes;
      if (!c->WidthInBytes) continue;
      r = rt_driver.backend->memcpy(rt_driver.backend, dp, d.kind, sp, s.kind, c->WidthInBytes, bs, async);
      if (r != CUDA_SUCCESS) return r;
    }
  return CUDA_SUCCESS;
}

RT_EXPORT CUresult cuMemcpy3D(const CUDA_MEMCPY3D *c) {
  RT_TRACE("%p", (const void *)c);
  return rt_ret(copy3d(c, NULL, false));
}

RT_EXPORT CUresult cuMemcpy3DAsync(const CUDA_MEMCPY3D *c, CUstream s) {
  RT_TRACE("%p, %p", (const void *)c, (void *)s);
  return rt_ret(copy3d(c, s, true));
}

/* 2D copies are 3D copies of depth 1 (rt_memory.c calls this for arrays). */
CUresult rt_copy2d_array(const CUDA_MEMCPY2D *c, CUstream s, bool async) {
  CUDA_MEMCPY3D c3 = {
      .srcXInBytes = c->srcXInBytes, .srcY = c->srcY, .srcMemoryType = c->srcMemoryType,
      .srcHost = c->srcHost, .srcDevice = c->srcDevice, .srcArray = c->srcArray, .srcPitch = c->srcPitch,
      .dstXInBytes = c->dstXInBytes, .dstY = c->dstY, .dstMemoryType = c->dstMemoryType,
      .dstHost = c->dstHost, .dstDevice = c->dstDevice, .dstArray = c->dstArray, .dstPitch = c->dstPitch,
      .WidthInBytes = c->WidthInBytes, .Height = c->Height, .Depth = 1,
  };
  return copy3d(&c3, s, async);
}

/* The 1D copies to and from arrays: offsets in bytes from the array's
 * start (row-major). */
RT_EXPORT CUresult cuMemcpyHtoA(CUarray a, size_t off, const void *src, size_t n) {
  RT_TRACE("%p, %zu, %p, %zu", (void *)a, off, src, n);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return rt_ret(cuMemcpyHtoD(a->base + off, src, n));
}

RT_EXPORT CUresult cuMemcpyAtoH(void *dst, CUarray a, size_t off, size_t n) {
  RT_TRACE("%p, %p, %zu, %zu", dst, (void *)a, off, n);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return rt_ret(cuMemcpyDtoH(dst, a->base + off, n));
}

RT_EXPORT CUresult cuMemcpyAtoD(CUdeviceptr dst, CUarray a, size_t off, size_t n) {
  RT_TRACE("%#llx, %p, %zu, %zu", (unsigned long long)dst, (void *)a, off, n);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return rt_ret(cuMemcpyDtoD(dst, a->base + off, n));
}

RT_EXPORT CUresult cuMemcpyDtoA(CUarray a, size_t off, CUdeviceptr src, size_t n) {
  RT_TRACE("%p, %zu, %#llx, %zu", (void *)a, off, (unsigned long long)src, n);
  if (!a || a->magic != ARRAY_MAGIC) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return rt_ret(cuMemcpyDtoD(a->base + off, src, n));
}
