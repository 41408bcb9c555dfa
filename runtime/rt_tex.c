/* runtime/rt_tex.c: texture and surface objects (docs/runtime.md, "Textures
 * and surfaces").
 *
 * A CUtexObject / CUsurfObject is the device address of a descriptor of
 * ptxwave's own layout (lower/tex_desc.def) that this file fills from the
 * resource and texture descriptions and copies into device memory; the code
 * lower_tex expands tex/suld/... into reads it.  The host keeps the
 * descriptions it was made from (cuTexObjectGetResourceDesc ...) in a list
 * keyed by the handle.
 *
 * CUDA's rules applied here: wrap and mirror only with normalized
 * coordinates (clamp otherwise, as the hardware does); integer channels of
 * 8 and 16 bits read as normalized floats unless CU_TRSF_READ_AS_INTEGER;
 * no mipmapped arrays, no resource views.  Cubemaps (CUDA_ARRAY3D_CUBEMAP)
 * are arrays of 6 (or 6 * layers) slices; lower_tex picks the face.
 */
#include <stdlib.h>
#include <string.h>

#include "lower/tex_desc.h"
#include "runtime/rt.h"

typedef struct tex_obj {
  uint64_t handle;
  bool surface;
  CUDA_RESOURCE_DESC res;
  CUDA_TEXTURE_DESC tex;
  struct tex_obj *next;
} tex_obj;

static pthread_mutex_t objs_lock = PTHREAD_MUTEX_INITIALIZER;
static tex_obj *objs;

/* The channel kind of a format (tex_desc.def chan_kind). */
static lower_tex_chan chan_kind(CUarray_format f) {
  switch (f) {
  case CU_AD_FORMAT_SIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT32:
    return LOWER_TEX_CHAN_SINT;
  case CU_AD_FORMAT_HALF: case CU_AD_FORMAT_FLOAT: return LOWER_TEX_CHAN_FLOAT;
  default: return LOWER_TEX_CHAN_UINT;
  }
}

static CUresult set_format(lower_tex_desc *d, CUarray_format f, unsigned nch) {
  unsigned cb = rt_format_bytes(f);
  if (!cb) return CUDA_ERROR_NOT_SUPPORTED;
  if (nch != 1 && nch != 2 && nch != 4) return CUDA_ERROR_INVALID_VALUE;
  d->format = (uint32_t)f;
  d->channels = nch;
  d->chan_bits = 8 * cb;
  d->chan_kind = chan_kind(f);
  d->elem_bytes = cb * nch;
  return CUDA_SUCCESS;
}

/* The resource part of the descriptor. */
static CUresult from_resource(lower_tex_desc *d, const CUDA_RESOURCE_DESC *r) {
  CUresult e;
  switch (r->resType) {
  case CU_RESOURCE_TYPE_ARRAY: {
    rt_array_info a;
    if (!rt_array_get(r->res.array.hArray, &a)) return CUDA_ERROR_INVALID_HANDLE;
    if ((e = set_format(d, a.desc.Format, a.desc.NumChannels)) != CUDA_SUCCESS) return e;
    bool layered = a.desc.Flags & CUDA_ARRAY3D_LAYERED, cube = a.desc.Flags & CUDA_ARRAY3D_CUBEMAP;
    d->kind = LOWER_TEX_KIND_ARRAY;
    d->base = a.base;
    d->pitch = a.pitch;
    d->slice = a.slice;
    d->width = (uint32_t)a.desc.Width;
    d->height = a.desc.Height ? (uint32_t)a.desc.Height : 1;
    d->depth = a.desc.Depth ? (uint32_t)a.desc.Depth : 1;
    /* a cubemap's faces are layers too: surfCubemapread/write are
     * suld/sust.a2d with layer 6 * cubemap + face */
    d->layers = layered || cube ? d->depth : 0;
    d->cubemaps = cube ? d->depth / 6 : 0;
    return CUDA_SUCCESS;
  }
  case CU_RESOURCE_TYPE_LINEAR:
    if (!r->res.linear.devPtr) return CUDA_ERROR_INVALID_VALUE;
    if ((e = set_format(d, r->res.linear.format, r->res.linear.numChannels)) != CUDA_SUCCESS) return e;
    d->kind = LOWER_TEX_KIND_LINEAR;
    d->base = r->res.linear.devPtr;
    d->width = (uint32_t)(r->res.linear.sizeInBytes / d->elem_bytes);
    d->height = d->depth = 1;
    d->pitch = d->slice = r->res.linear.sizeInBytes;
    return d->width ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  case CU_RESOURCE_TYPE_PITCH2D:
    if (!r->res.pitch2D.devPtr) return CUDA_ERROR_INVALID_VALUE;
    if ((e = set_format(d, r->res.pitch2D.format, r->res.pitch2D.numChannels)) != CUDA_SUCCESS) return e;
    if (r->res.pitch2D.pitchInBytes < r->res.pitch2D.width * d->elem_bytes) return CUDA_ERROR_INVALID_VALUE;
    d->kind = LOWER_TEX_KIND_PITCH2D;
    d->base = r->res.pitch2D.devPtr;
    d->width = (uint32_t)r->res.pitch2D.width;
    d->height = (uint32_t)r->res.pitch2D.height;
    d->depth = 1;
    d->pitch = r->res.pitch2D.pitchInBytes;
    d->slice = d->pitch * d->height;
    return d->width && d->height ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  default:
    return CUDA_ERROR_NOT_SUPPORTED;   /* mipmapped arrays */
  }
}

static CUresult publish(const lower_tex_desc *d, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t, bool surface,
                        uint64_t *handle) {
  tex_obj *o = calloc(1, sizeof *o);
  if (!o) return CUDA_ERROR_OUT_OF_MEMORY;
  uint64_t p;
  CUresult e = rt_driver.backend->mem_alloc(rt_driver.backend, sizeof *d, &p);
  if (e == CUDA_SUCCESS)
    e = rt_driver.backend->memcpy(rt_driver.backend, (void *)(uintptr_t)p, CU_MEMORYTYPE_DEVICE, d, CU_MEMORYTYPE_HOST,
                           sizeof *d, NULL, false);
  if (e != CUDA_SUCCESS) {
    free(o);
    return e;
  }
  o->handle = p;
  o->surface = surface;
  o->res = *r;
  if (t) o->tex = *t;
  pthread_mutex_lock(&objs_lock);
  o->next = objs;
  objs = o;
  pthread_mutex_unlock(&objs_lock);
  *handle = p;
  return CUDA_SUCCESS;
}

/* Unlinks (take) or finds the object of a handle. */
static bool lookup(uint64_t h, bool surface, bool take, tex_obj *copy) {
  bool found = false;
  pthread_mutex_lock(&objs_lock);
  for (tex_obj **pp = &objs; *pp; pp = &(*pp)->next) {
    tex_obj *o = *pp;
    if (o->handle != h || o->surface != surface) continue;
    *copy = *o;
    if (take) {
      *pp = o->next;
      free(o);
    }
    found = true;
    break;
  }
  pthread_mutex_unlock(&objs_lock);
  return found;
}

RT_EXPORT CUresult cuTexObjectCreate(CUtexObject *out, const CUDA_RESOURCE_DESC *r, const CUDA_TEXTURE_DESC *t,
                                     const CUDA_RESOURCE_VIEW_DESC *view) {
  RT_TRACE("%p, %p, %p, %p", (void *)out, (const void *)r, (const void *)t, (const void *)view);
  if (!out || !r || !t) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (view) return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
  CUresult e = rt_check_init();
  if (e != CUDA_SUCCESS) return rt_ret(e);
  lower_tex_desc d = {0};
  if ((e = from_resource(&d, r)) != CUDA_SUCCESS) return rt_ret(e);
  d.normalized = (t->flags & CU_TRSF_NORMALIZED_COORDINATES) != 0;
  d.srgb = (t->flags & CU_TRSF_SRGB) != 0;
  d.read_float = d.chan_kind != LOWER_TEX_CHAN_FLOAT && d.chan_bits < 32 && !(t->flags & CU_TRSF_READ_AS_INTEGER);
  d.filter = t->filterMode == CU_TR_FILTER_MODE_LINEAR ? LOWER_TEX_FILTER_LINEAR : LOWER_TEX_FILTER_POINT;
  bool cube = false;
  rt_array_info ai;
  if (r->resType == CU_RESOURCE_TYPE_ARRAY && rt_array_get(r->res.array.hArray, &ai))
    cube = ai.desc.Flags & CUDA_ARRAY3D_CUBEMAP;
  /* cuTexObjectCreate (cuda.h), CU_TRSF_SEAMLESS_CUBEMAP: only on a
   * cubemap array; the address modes are then ignored: with point
   * filtering clamp applies, with linear filtering the footprint crosses
   * onto the neighbouring faces (lower_tex, cube_fold: the descriptor's
   * seamless field). */
  bool seamless = t->flags & CU_TRSF_SEAMLESS_CUBEMAP;
  if (seamless && !cube) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  d.seamless = seamless;
  uint32_t *modes[3] = {&d.addr0, &d.addr1, &d.addr2};
  for (unsigned k = 0; k < 3; k++) {
    unsigned m = (unsigned)t->addressMode[k];
    if (m > CU_TR_ADDRESS_MODE_BORDER) return rt_ret(CUDA_ERROR_INVALID_VALUE);
    /* Programming Guide: wrap and mirror need normalized coordinates; a
     * cube face's coordinates are normalized (lower_tex, cube_face) */
    if (!d.normalized && !cube && (m == CU_TR_ADDRESS_MODE_WRAP || m == CU_TR_ADDRESS_MODE_MIRROR))
      m = CU_TR_ADDRESS_MODE_CLAMP;
    if (seamless) m = CU_TR_ADDRESS_MODE_CLAMP;
    *modes[k] = m;
  }
  /* tex1Dfetch on linear memory: out of range reads zero */
  if (d.kind == LOWER_TEX_KIND_LINEAR) d.addr0 = LOWER_TEX_ADDR_BORDER;
  else {
    d.border0 = t->borderColor[0];
    d.border1 = t->borderColor[1];
    d.border2 = t->borderColor[2];
    d.border3 = t->borderColor[3];
  }
  uint64_t h;
  e = publish(&d, r, t, false, &h);
  if (e == CUDA_SUCCESS) *out = h;
  return rt_ret(e);
}

RT_EXPORT CUresult cuTexObjectDestroy(CUtexObject h) {
  RT_TRACE("%#llx", (unsigned long long)h);
  tex_obj o;
  if (!lookup(h, false, true, &o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_driver.backend->mem_free(rt_driver.backend, h));
}

RT_EXPORT CUresult cuTexObjectGetResourceDesc(CUDA_RESOURCE_DESC *r, CUtexObject h) {
  RT_TRACE("%p, %#llx", (void *)r, (unsigned long long)h);
  tex_obj o;
  if (!r || !lookup(h, false, false, &o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *r = o.res;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuTexObjectGetTextureDesc(CUDA_TEXTURE_DESC *t, CUtexObject h) {
  RT_TRACE("%p, %#llx", (void *)t, (unsigned long long)h);
  tex_obj o;
  if (!t || !lookup(h, false, false, &o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *t = o.tex;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuTexObjectGetResourceViewDesc(CUDA_RESOURCE_VIEW_DESC *v, CUtexObject h) {
  RT_TRACE("%p, %#llx", (void *)v, (unsigned long long)h);
  tex_obj o;
  if (!v || !lookup(h, false, false, &o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(CUDA_ERROR_INVALID_VALUE);   /* never made with a view */
}

RT_EXPORT CUresult cuSurfObjectCreate(CUsurfObject *out, const CUDA_RESOURCE_DESC *r) {
  RT_TRACE("%p, %p", (void *)out, (const void *)r);
  if (!out || !r) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (r->resType != CU_RESOURCE_TYPE_ARRAY) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult e = rt_check_init();
  if (e != CUDA_SUCCESS) return rt_ret(e);
  lower_tex_desc d = {0};
  if ((e = from_resource(&d, r)) != CUDA_SUCCESS) return rt_ret(e);
  d.addr0 = d.addr1 = d.addr2 = LOWER_TEX_ADDR_CLAMP;
  uint64_t h;
  e = publish(&d, r, NULL, true, &h);
  if (e == CUDA_SUCCESS) *out = h;
  return rt_ret(e);
}

RT_EXPORT CUresult cuSurfObjectDestroy(CUsurfObject h) {
  RT_TRACE("%#llx", (unsigned long long)h);
  tex_obj o;
  if (!lookup(h, true, true, &o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_driver.backend->mem_free(rt_driver.backend, h));
}

RT_EXPORT CUresult cuSurfObjectGetResourceDesc(CUDA_RESOURCE_DESC *r, CUsurfObject h) {
  RT_TRACE("%p, %#llx", (void *)r, (unsigned long long)h);
  tex_obj o;
  if (!r || !lookup(h, true, false, &o)) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *r = o.res;
  return rt_ret(CUDA_SUCCESS);
}
