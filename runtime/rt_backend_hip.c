/* runtime/rt_backend_hip.c: the HIP backend.
 *
 * libamdhip64 is dlopen'ed (.so.7, .so.6, .so.5; PTXWAVE_HIP_LIBRARY names
 * another file, e.g. the tests' recording stand-in), so the shim loads on
 * machines without ROCm.  With no library, or hipInit / hipGetDeviceCount
 * reporting no device (101 / 100, in under a millisecond), it answers NULL
 * and cuInit falls back to the emulator.
 *
 * The mapping is one to one: device memory is hipMalloc'ed and a device
 * pointer is HIP's; copies keep their direction (hipMemcpyKind); streams
 * are hipStreams; a module is hipModuleLoadData of the code object compiled
 * from the PTX, and a launch is hipModuleLaunchKernel with the parameter
 * buffer passed as HIP_LAUNCH_PARAM_BUFFER_POINTER: the kernel ABI keeps
 * CUDA's .param layout as the kernarg layout (design.md), so the bytes
 * CUDA's caller packed are the kernarg segment.
 *
 * The code object: PTX -> IR (ptx/) -> lower/ -> codegen/ (.hsaco for the
 * device's gfx arch), looked up first in the bundles that `ptxwave convert`
 * writes next to binaries (rt_bundle.h), then in the kernel cache
 * (rt_cache.h), both under rt_code_object_key (PTX, arch, compiler version,
 * options).  The compile step (hip_compile) is cg_compile_ptx, the entry
 * `ptxwave compile` uses: parse, lower/ for the arch, codegen/ to a linked
 * .hsaco.  PTXWAVE_HIP_PASSTHROUGH=1 hands the PTX text itself to
 * hipModuleLoadData instead (cached under another compiler key): the
 * recording stand-in's tests of the launch paths use it where the code
 * object's content does not matter (docs/runtime.md).
 *
 * Device printf and assert (docs/runtime.md, "Device printf"): a code
 * object whose kernels print has the variable __ptxwave_printf
 * (lower/lower_printf.c); at load the backend points it at the context's
 * printf buffer (allocated on first need), and every synchronising call
 * (stream and device synchronise, synchronous copies, module unload)
 * drains the buffer to stdout (rt_printf.c); an assert record makes that
 * call return CUDA_ERROR_ASSERT.
 *
 * HIP's declarations are written here from its documented C API (no HIP
 * headers are needed to build): hipError_t is an int, handles are pointers.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ptx/ptx_parse.h"
#include "pw_config.h"
#include "runtime/rt.h"
#include "runtime/rt_bundle.h"
#include "runtime/rt_cache.h"
#include "runtime/rt_printf.h"
#include "util/pw_printf.h"

typedef int hip_err;
typedef void *hip_ptr;
enum { hip_h2h = 0, hip_h2d = 1, hip_d2h = 2, hip_d2d = 3 };
#define HIP_LAUNCH_PARAM_BUFFER_POINTER ((void *)0x01)
#define HIP_LAUNCH_PARAM_BUFFER_SIZE ((void *)0x02)
#define HIP_LAUNCH_PARAM_END ((void *)0x03)

/* X(name, return, params) of every HIP entry point used */
#define HIP_FUNCS(X)                                                                        \
  X(hipInit, (unsigned))                                                                    \
  X(hipGetDeviceCount, (int *))                                                             \
  X(hipSetDevice, (int))                                                                    \
  X(hipDeviceGetName, (char *, int, int))                                                   \
  X(hipDeviceTotalMem, (size_t *, int))                                                     \
  X(hipMemGetInfo, (size_t *, size_t *))                                                    \
  X(hipMalloc, (void **, size_t))                                                           \
  X(hipFree, (void *))                                                                      \
  X(hipHostRegister, (void *, size_t, unsigned))                                            \
  X(hipHostUnregister, (void *))                                                            \
  X(hipMemGetAddressRange, (hip_ptr *, size_t *, hip_ptr))                                  \
  X(hipMemcpy, (void *, const void *, size_t, int))                                         \
  X(hipMemcpyAsync, (void *, const void *, size_t, int, void *))                            \
  X(hipMemsetD8, (hip_ptr, unsigned char, size_t))                                          \
  X(hipMemsetD16, (hip_ptr, unsigned short, size_t))                                        \
  X(hipMemsetD32, (hip_ptr, int, size_t))                                                   \
  X(hipMemsetD8Async, (hip_ptr, unsigned char, size_t, void *))                             \
  X(hipMemsetD16Async, (hip_ptr, unsigned short, size_t, void *))                           \
  X(hipMemsetD32Async, (hip_ptr, int, size_t, void *))                                      \
  X(hipModuleLoadData, (void **, const void *))                                             \
  X(hipModuleUnload, (void *))                                                              \
  X(hipModuleGetFunction, (void **, void *, const char *))                                  \
  X(hipModuleGetGlobal, (hip_ptr *, size_t *, void *, const char *))                        \
  X(hipModuleLaunchKernel, (void *, unsigned, unsigned, unsigned, unsigned, unsigned,       \
                            unsigned, unsigned, void *, void **, void **))                  \
  X(hipStreamCreate, (void **))                                                             \
  X(hipStreamDestroy, (void *))                                                             \
  X(hipStreamSynchronize, (void *))                                                         \
  X(hipDeviceSynchronize, (void))

typedef struct hip_be {
  rt_backend b;
  void *lib;
#define X(name, params) hip_err (*name) params;
  HIP_FUNCS(X)
#undef X
  int ndev;
  rt_cache *cache;
  uint64_t compiled, cache_hits, bundle_hits;
  uint64_t printf_buf;        /* the device printf buffer (0: none yet) */
  uint32_t printf_cap;
} hip_be;

struct rt_bmodule {
  void *hmod;
  ir_module *ir;              /* for parameter layouts */
  rt_param_layout *layouts;
  unsigned nlayouts;
};

static hip_be *H(rt_backend *b) { return (hip_be *)b; }

static CUresult from_hip(rt_backend *b, const char *what, hip_err e) {
  if (e == 0) return CUDA_SUCCESS;
  snprintf(b->error, sizeof b->error, "%s failed: hipError_t %d", what, e);
  switch (e) {
  case 1: return CUDA_ERROR_INVALID_VALUE;
  case 2: return CUDA_ERROR_OUT_OF_MEMORY;
  case 100: return CUDA_ERROR_NO_DEVICE;
  case 101: return CUDA_ERROR_INVALID_DEVICE;
  case 200: return CUDA_ERROR_INVALID_IMAGE;
  case 400: return CUDA_ERROR_INVALID_HANDLE;
  case 500: return CUDA_ERROR_NOT_FOUND;
  case 700: return CUDA_ERROR_ILLEGAL_ADDRESS;
  default: return CUDA_ERROR_UNKNOWN;
  }
}

static int device_count(rt_backend *b) { return H(b)->ndev; }

/* Limits of AMD's CDNA/RDNA parts as CUDA would report them; the name and
 * memory come from HIP. */
static CUresult device_props(rt_backend *b, int dev, rt_device_props *p) {
  hip_be *h = H(b);
  memset(p, 0, sizeof *p);
  if (h->hipDeviceGetName(p->name, (int)sizeof p->name, dev) != 0)
    snprintf(p->name, sizeof p->name, "AMD GPU %d", dev);
  h->hipDeviceTotalMem(&p->total_mem, dev);
  const char *arch = getenv("PTXWAVE_HIP_ARCH");
  snprintf(p->arch, sizeof p->arch, "%s", arch && *arch ? arch : "gfx942");
  p->sm_count = 64;
  p->max_threads_per_block = 1024;
  p->max_block[0] = p->max_block[1] = 1024;
  p->max_block[2] = 1024;
  p->max_grid[0] = 0x7fffffff;
  p->max_grid[1] = p->max_grid[2] = 65535;
  p->shared_per_block = 48 * 1024;
  p->shared_per_block_optin = 64 * 1024;   /* LDS per workgroup */
  p->shared_per_sm = 64 * 1024;
  p->regs_per_block = p->regs_per_sm = 65536;
  p->max_threads_per_sm = 2048;
  p->max_blocks_per_sm = 32;
  p->clock_khz = 2100000;
  p->mem_clock_khz = 1300000;
  p->mem_bus_width = 8192;
  p->l2_bytes = 4 << 20;
  p->pci_device = dev;
  p->wave_size = 64;
  return CUDA_SUCCESS;
}

static CUresult mem_info(rt_backend *b, int dev, size_t *f, size_t *t) {
  return from_hip(b, "hipMemGetInfo", H(b)->hipMemGetInfo(f, t));
}
static CUresult mem_alloc(rt_backend *b, size_t n, uint64_t *p) {
  void *q = NULL;
  CUresult r = from_hip(b, "hipMalloc", H(b)->hipMalloc(&q, n));
  *p = (uint64_t)(uintptr_t)q;
  return r;
}
static CUresult mem_free(rt_backend *b, uint64_t p) {
  return from_hip(b, "hipFree", H(b)->hipFree((void *)(uintptr_t)p));
}
static CUresult host_register(rt_backend *b, void *p, size_t n) {
  return from_hip(b, "hipHostRegister", H(b)->hipHostRegister(p, n, 0));
}
static CUresult host_unregister(rt_backend *b, void *p) {
  return from_hip(b, "hipHostUnregister", H(b)->hipHostUnregister(p));
}
static CUresult mem_range(rt_backend *b, uint64_t p, uint64_t *base, size_t *n) {
  hip_ptr bp = NULL;
  if (H(b)->hipMemGetAddressRange(&bp, n, (hip_ptr)(uintptr_t)p) != 0) return CUDA_ERROR_NOT_FOUND;
  *base = (uint64_t)(uintptr_t)bp;
  return CUDA_SUCCESS;
}

/* ---- device printf (rt_printf.h) ---------------------------------------- */
static bool printf_read(void *ctx, uint64_t addr, void *dst, size_t n) {
  hip_be *h = ctx;
  return h->hipMemcpy(dst, (const void *)(uintptr_t)addr, n, hip_d2h) == 0;
}
static bool printf_write(void *ctx, uint64_t addr, const void *src, size_t n) {
  hip_be *h = ctx;
  return h->hipMemcpy((void *)(uintptr_t)addr, src, n, hip_h2d) == 0;
}

/* Points the module's __ptxwave_printf at the buffer, if it has one. */
static void printf_attach(rt_backend *b, void *hmod) {
  hip_be *h = H(b);
  hip_ptr var = NULL;
  size_t n = 0;
  if (h->hipModuleGetGlobal(&var, &n, hmod, PW_PRINTF_VAR) != 0 || n < PW_PRINTF_VAR_BYTES) return;
  if (!h->printf_buf) {
    uint32_t cap = rt_printf_capacity();
    void *p = NULL;
    if (h->hipMalloc(&p, PW_PRINTF_BUF_HEADER + (size_t)cap) != 0 || !p) {
      RT_LOG(rt_warn, "hip: no memory for the device printf buffer (%u bytes): printf output is dropped", cap);
      return;
    }
    h->hipMemsetD8(p, 0, PW_PRINTF_BUF_HEADER + (size_t)cap);
    h->printf_buf = (uint64_t)(uintptr_t)p;
    h->printf_cap = cap;
  }
  uint8_t v[PW_PRINTF_VAR_BYTES] = {0};
  memcpy(v + PW_PRINTF_VAR_BUFFER, &h->printf_buf, 8);
  memcpy(v + PW_PRINTF_VAR_CAPACITY, &h->printf_cap, 4);
  h->hipMemcpy(var, v, sizeof v, hip_h2d);
}

/* After a synchronising call that returned r: prints what kernels left in
 * the buffer; an assert record turns r into CUDA_ERROR_ASSERT. */
static CUresult printf_drain(rt_backend *b, CUresult r) {
  hip_be *h = H(b);
  if (!h->printf_buf) return r;
  rt_printf_result res;
  if (!rt_printf_drain(&(rt_printf_mem){printf_read, printf_write, h}, h->printf_buf, h->printf_cap, stdout,
                       stderr, &res))
    RT_LOG(rt_warn, "hip: the device printf buffer cannot be read back");
  if (res.asserts) {
    snprintf(b->error, sizeof b->error, "device assertion failed: %.900s", res.first_assert);
    return CUDA_ERROR_ASSERT;
  }
  return r;
}

static CUresult do_memcpy(rt_backend *b, void *dst, CUmemorytype dk, const void *src,
                          CUmemorytype sk, size_t n, rt_bstream s, bool async) {
  int kind = dk == CU_MEMORYTYPE_DEVICE ? (sk == CU_MEMORYTYPE_DEVICE ? hip_d2d : hip_h2d)
                                        : (sk == CU_MEMORYTYPE_DEVICE ? hip_d2h : hip_h2h);
  if (async) return from_hip(b, "hipMemcpyAsync", H(b)->hipMemcpyAsync(dst, src, n, kind, s));
  return printf_drain(b, from_hip(b, "hipMemcpy", H(b)->hipMemcpy(dst, src, n, kind)));
}

static CUresult do_memset(rt_backend *b, uint64_t d, uint32_t v, unsigned elem, size_t count,
                          rt_bstream s, bool async) {
  hip_be *h = H(b);
  hip_ptr p = (hip_ptr)(uintptr_t)d;
  hip_err e;
  if (elem == 1) e = async ? h->hipMemsetD8Async(p, (unsigned char)v, count, s) : h->hipMemsetD8(p, (unsigned char)v, count);
  else if (elem == 2) e = async ? h->hipMemsetD16Async(p, (unsigned short)v, count, s) : h->hipMemsetD16(p, (unsigned short)v, count);
  else e = async ? h->hipMemsetD32Async(p, (int)v, count, s) : h->hipMemsetD32(p, (int)v, count);
  return from_hip(b, "hipMemset", e);
}

static bool hip_passthrough(void) {
  const char *pt = getenv("PTXWAVE_HIP_PASSTHROUGH");
  return pt && *pt == '1';
}

/* PTX -> code object for arch: cg_compile_ptx, as `ptxwave compile --arch
 * ARCH --emit hsaco`. */
static CUresult hip_compile(rt_backend *b, const char *name, const char *ptx, size_t len, const char *arch,
                            void **obj, size_t *obj_len) {
  if (hip_passthrough()) {
    *obj = malloc(len + 1);
    if (!*obj) return CUDA_ERROR_OUT_OF_MEMORY;
    memcpy(*obj, ptx, len);
    ((char *)*obj)[len] = 0;
    *obj_len = len + 1;
    return CUDA_SUCCESS;
  }
  const cg_target *t = cg_target_find(arch);
  if (!t) {
    snprintf(b->error, sizeof b->error, "no code generator for %s (targets: see `ptxwave compile --help`)", arch);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  pw_diag d;
  pw_diag_init(&d, NULL);
  cg_output out;
  bool ok = cg_compile_ptx(name, ptx, len, &(cg_options){.target = t}, CG_EMIT_HSACO, &out, &d);
  if (!ok) {
    snprintf(b->error, sizeof b->error, "compiling %s for %s:\n%s", name, arch, pw_diag_text(&d));
    pw_diag_fini(&d);
    return CUDA_ERROR_INVALID_PTX;
  }
  pw_diag_fini(&d);
  *obj = out.data;
  *obj_len = out.size;
  return CUDA_SUCCESS;
}

static CUresult module_load_ptx(rt_backend *b, const char *name, const char *ptx, size_t len,
                                rt_bmodule **out) {
  hip_be *h = H(b);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *ir = ptx_parse(name, ptx, len, &d, NULL);
  if (!ir) {
    snprintf(b->error, sizeof b->error, "the PTX does not parse:\n%s", pw_diag_text(&d));
    pw_diag_fini(&d);
    return CUDA_ERROR_INVALID_PTX;
  }
  pw_diag_fini(&d);
  if (!rt_ir_supported(ir, name, b->error, sizeof b->error)) {
    ir_module_destroy(ir);
    return CUDA_ERROR_INVALID_PTX;
  }
  rt_device_props props;
  device_props(b, 0, &props);
  rt_cache_key key = rt_code_object_key(ptx, len, props.arch);
  /* passthrough entries (PTX text, not code objects) never meet compiled ones */
  if (hip_passthrough()) key.compiler = RT_CODE_OBJECT_COMPILER "-passthrough";
  void *obj = NULL;
  size_t obj_len = 0;
  CUresult r = CUDA_SUCCESS;
  if (rt_bundles_get(&key, &obj, &obj_len)) {
    h->bundle_hits++;  /* converted ahead of time next to the binary (rt_bundle.h) */
  } else if (h->cache && rt_cache_get(h->cache, &key, &obj, &obj_len)) {
    h->cache_hits++;
  } else {
    r = hip_compile(b, name, ptx, len, props.arch, &obj, &obj_len);
    if (r == CUDA_SUCCESS) {
      h->compiled++;
      if (h->cache) rt_cache_put(h->cache, &key, obj, obj_len);
    }
  }
  RT_LOG(rt_info, "hip: %s: %s (modules compiled %llu, cache hits %llu, bundle hits %llu)", name,
         r != CUDA_SUCCESS ? "compile failed" : "loaded", (unsigned long long)h->compiled,
         (unsigned long long)h->cache_hits, (unsigned long long)h->bundle_hits);
  void *hmod = NULL;
  if (r == CUDA_SUCCESS) r = from_hip(b, "hipModuleLoadData", h->hipModuleLoadData(&hmod, obj));
  free(obj);
  rt_bmodule *m = r == CUDA_SUCCESS ? calloc(1, sizeof *m) : NULL;
  if (!m) {
    if (hmod) h->hipModuleUnload(hmod);
    ir_module_destroy(ir);
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->hmod = hmod;
  m->ir = ir;
  printf_attach(b, hmod);
  *out = m;
  return CUDA_SUCCESS;
}

static void module_unload(rt_backend *b, rt_bmodule *m) {
  if (!m) return;
  printf_drain(b, CUDA_SUCCESS);   /* its format strings go with it */
  H(b)->hipModuleUnload(m->hmod);
  for (unsigned i = 0; i < m->nlayouts; i++) free(m->layouts[i].params);
  free(m->layouts);
  ir_module_destroy(m->ir);
  free(m);
}

static CUresult module_global(rt_backend *b, rt_bmodule *m, const char *name, uint64_t *p,
                              size_t *n) {
  hip_ptr q = NULL;
  hip_err e = H(b)->hipModuleGetGlobal(&q, n, m->hmod, name);
  if (e) return e == 500 ? CUDA_ERROR_NOT_FOUND : from_hip(b, "hipModuleGetGlobal", e);
  *p = (uint64_t)(uintptr_t)q;
  return CUDA_SUCCESS;
}

/* CUDA's .param layout: each parameter at its declared alignment, in
 * order (the offsets the parser recorded, when it recorded them). */
static CUresult kernel_params(rt_backend *b, rt_bmodule *m, const char *kernel,
                              rt_param_layout *out) {
  const ir_func *f = m->ir->funcs;
  while (f && (!f->is_kernel || strcmp(f->name, kernel))) f = f->next;
  if (!f) {
    snprintf(b->error, sizeof b->error, "no kernel named %s", kernel);
    return CUDA_ERROR_NOT_FOUND;
  }
  rt_param_layout L = {.nparams = f->nparams};
  L.params = calloc(f->nparams ? f->nparams : 1, sizeof *L.params);
  rt_param_layout *nl = realloc(m->layouts, (m->nlayouts + 1) * sizeof *nl);
  if (!L.params || !nl) {
    free(L.params);
    if (nl) m->layouts = nl;
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->layouts = nl;
  bool have_offsets = false;
  for (uint32_t i = 0; i < f->nparams; i++) have_offsets |= f->params[i].offset != 0;
  uint32_t lay = 0, end = 0;
  for (uint32_t i = 0; i < f->nparams; i++) {
    const ir_param *p = &f->params[i];
    unsigned bits = ir_type_bits((ir_type)p->type);
    uint32_t elem = bits < 8 ? 1 : bits / 8;
    uint32_t size = elem * (uint32_t)(p->count ? p->count : 1);
    uint32_t a = p->align ? p->align : elem;
    lay = (lay + a - 1) / a * a;
    uint32_t o = have_offsets ? (uint32_t)p->offset : lay;
    L.params[i].offset = o;
    L.params[i].size = size;
    lay = o + size;
    if (lay > end) end = lay;
  }
  L.size = end;
  m->layouts[m->nlayouts++] = L;
  *out = L;
  return CUDA_SUCCESS;
}

static CUresult launch(rt_backend *b, rt_bmodule *m, const char *kernel, const unsigned g[3],
                       const unsigned bl[3], unsigned shared, rt_bstream s, const void *params,
                       size_t size) {
  hip_be *h = H(b);
  void *fn = NULL;
  CUresult r = from_hip(b, "hipModuleGetFunction", h->hipModuleGetFunction(&fn, m->hmod, kernel));
  if (r != CUDA_SUCCESS) return r;
  size_t sz = size;
  void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, (void *)params, HIP_LAUNCH_PARAM_BUFFER_SIZE,
                   &sz, HIP_LAUNCH_PARAM_END};
  return from_hip(b, "hipModuleLaunchKernel",
                  h->hipModuleLaunchKernel(fn, g[0], g[1], g[2], bl[0], bl[1], bl[2], shared, s,
                                           NULL, extra));
}

static CUresult stream_create(rt_backend *b, rt_bstream *out) {
  return from_hip(b, "hipStreamCreate", H(b)->hipStreamCreate(out));
}
static CUresult stream_destroy(rt_backend *b, rt_bstream s) {
  return from_hip(b, "hipStreamDestroy", H(b)->hipStreamDestroy(s));
}
static CUresult stream_sync(rt_backend *b, rt_bstream s) {
  return printf_drain(b, from_hip(b, "hipStreamSynchronize", H(b)->hipStreamSynchronize(s)));
}
static CUresult device_sync(rt_backend *b) {
  return printf_drain(b, from_hip(b, "hipDeviceSynchronize", H(b)->hipDeviceSynchronize()));
}

rt_backend *rt_backend_hip_create(void) {
  const char *want = getenv("PTXWAVE_HIP_LIBRARY");
  static const char *const libs[] = {"libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"};
  void *lib = NULL;
  if (want && *want) lib = dlopen(want, RTLD_NOW | RTLD_LOCAL);
  for (unsigned i = 0; i < sizeof libs / sizeof libs[0] && !lib && !(want && *want); i++)
    lib = dlopen(libs[i], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    RT_LOG(rt_info, "hip: no libamdhip64 (%s)", dlerror());
    return NULL;
  }
  hip_be *h = calloc(1, sizeof *h);
  if (!h) {
    dlclose(lib);
    return NULL;
  }
  h->lib = lib;
#define X(name, params)                                                         \
  if (!(*(void **)&h->name = dlsym(lib, #name))) {                              \
    RT_LOG(rt_warn, "hip: %s is missing from the HIP library", #name);         \
    goto fail;                                                                  \
  }
  HIP_FUNCS(X)
#undef X
  int n = 0;
  hip_err e = h->hipInit(0);
  if (e == 0) e = h->hipGetDeviceCount(&n);
  if (e != 0 || n <= 0) {
    RT_LOG(rt_info, "hip: no AMD GPU answers (hipError_t %d)", e);
    goto fail;
  }
  h->ndev = n > 16 ? 16 : n;
  h->hipSetDevice(0);
  h->cache = rt_cache_open(NULL, 0);
  h->b = (rt_backend){.name = "hip",
                      .device_count = device_count,
                      .device_props = device_props,
                      .mem_info = mem_info,
                      .mem_alloc = mem_alloc,
                      .mem_free = mem_free,
                      .host_register = host_register,
                      .host_unregister = host_unregister,
                      .mem_range = mem_range,
                      .memcpy = do_memcpy,
                      .memset = do_memset,
                      .module_load_ptx = module_load_ptx,
                      .module_unload = module_unload,
                      .module_global = module_global,
                      .kernel_params = kernel_params,
                      .launch = launch,
                      .stream_create = stream_create,
                      .stream_destroy = stream_destroy,
                      .stream_sync = stream_sync,
                      .device_sync = device_sync};
  RT_LOG(rt_info, "hip: %d device(s); kernel cache %s", n,
         h->cache ? rt_cache_dir(h->cache) : "disabled");
  return &h->b;
fail:
  dlclose(lib);
  free(h);
  return NULL;
}
