/* runtime/rt_module.c: modules and libraries, functions and kernels,
 * globals, launches, function attributes and occupancy.
 *
 * A module image is PTX text, a fatbin container (0xBA55ED50) or a fatbin
 * wrapper (0x466243B1, what __cudaRegisterFatBinary and the export table
 * hand over).  From a fatbin the PTX is chosen with ptx_rank (ptx/select.c:
 * the newest SM not above the reported compute capability first); when one
 * entry fails to load the next is tried, and the first failure is reported.
 * Cubins are not translatable: a fatbin with no usable PTX answers
 * CUDA_ERROR_NO_BINARY_FOR_GPU.
 *
 * A library (cuLibraryLoadData) is a module; a CUkernel is the CUfunction
 * of that module (cuKernelGetFunction returns it unchanged).
 *
 * Launches pack kernelParams into one buffer in the kernel's .param layout
 * (from the backend), or take CU_LAUNCH_PARAM_BUFFER_POINTER as it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/container.h"
#include "runtime/rt.h"

#define MOD_MAGIC 0x4d6f6421u
#define FUNC_MAGIC 0x46756e21u
#define LIB_MAGIC 0x4c696221u

struct CUfunc_st {
  uint32_t magic;
  struct CUmod_st *mod;
  char *name;
  rt_param_layout layout;
  int max_dynamic_shared;       /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES */
  int carveout;
  struct CUfunc_st *next;
};

struct CUmod_st {
  uint32_t magic;
  rt_bmodule *bm;
  struct CUfunc_st *funcs;
  pthread_mutex_t lock;
};

struct CUlib_st {
  uint32_t magic;
  struct CUmod_st *mod;
};

/* ---- loading ----------------------------------------------------------- */
static CUresult load_ptx(const char *name, const char *text, size_t len, struct CUmod_st **out) {
  rt_backend *b = rt.backend;
  rt_bmodule *bm = NULL;
  CUresult r = b->module_load_ptx(b, name, text, len, &bm);
  if (r != CUDA_SUCCESS) {
    RT_LOG(rt_error, "module %s: %s", name, b->error);
    return r;
  }
  struct CUmod_st *m = calloc(1, sizeof *m);
  if (!m) {
    b->module_unload(b, bm);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->magic = MOD_MAGIC;
  m->bm = bm;
  pthread_mutex_init(&m->lock, NULL);
  if (!rt_handle_add(rt_h_module, m)) {
    b->module_unload(b, bm);
    pthread_mutex_destroy(&m->lock);
    free(m);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = m;
  RT_LOG(rt_debug, "module %s loaded (%zu bytes of PTX)", name, len);
  return CUDA_SUCCESS;
}

static CUresult load_container(const uint8_t *c, struct CUmod_st **out) {
  uint16_t version, hsize;
  uint64_t bytes;
  memcpy(&version, c + 4, 2);
  memcpy(&hsize, c + 6, 2);
  memcpy(&bytes, c + 8, 8);
  /* The image's size is the container's own: its 16-byte header and the
   * bytes it states.  A header size other than 16 is no layout we know (the
   * front end's rule, ptx/fatbin.c) and would make us read up to 64 KiB
   * past an image that ends after its header. */
  if (version != 1 || hsize != 16 || bytes > ((uint64_t)1 << 34)) {
    RT_LOG(rt_error, "fatbin at %p: container version %u, header size %u, %llu bytes: "
           "only version 1 with a 16-byte header is known", (const void *)c, version, hsize,
           (unsigned long long)bytes);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_file *f = ptx_file_from_memory("fatbin", c, hsize + bytes, &d);
  if (!f || f->ncontainers == 0) {
    RT_LOG(rt_error, "fatbin at %p: %s", (const void *)c, pw_diag_text(&d));
    if (f) ptx_file_close(f);
    pw_diag_fini(&d);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  ptx_target t = {.max_isa_major = 9, .max_isa_minor = 1,
                  .max_sm = (uint32_t)(rt.cc_major * 10 + rt.cc_minor), .arch_specific = false};
  uint32_t order[64];
  const ptx_container *pc = &f->containers[0];
  uint32_t n = ptx_rank(pc, &t, order, 64);
  CUresult r = n ? CUDA_ERROR_INVALID_PTX : CUDA_ERROR_NO_BINARY_FOR_GPU;
  CUresult first = CUDA_SUCCESS;
  if (!n) RT_LOG(rt_error, "fatbin at %p: no PTX for compute capability %d.%d (%u entries)",
                 (const void *)c, rt.cc_major, rt.cc_minor, pc->nentries);
  for (uint32_t i = 0; i < n && i < 64; i++) {
    const ptx_entry *e = &pc->entries[order[i]];
    ptx_payload p;
    if (!ptx_entry_read(f, e, NULL, NULL, &d, &p)) continue;
    char name[64];
    snprintf(name, sizeof name, "fatbin@%p.sm_%u.ptx", (const void *)c, e->arch);
    r = load_ptx(name, (const char *)p.data, p.len, out);
    ptx_payload_free(&p);
    if (r == CUDA_SUCCESS) break;
    if (first == CUDA_SUCCESS) first = r;
  }
  if (r != CUDA_SUCCESS && first != CUDA_SUCCESS) r = first;
  ptx_file_close(f);
  pw_diag_fini(&d);
  return r;
}

/* True when p begins with the n bytes of m.  Compared byte by byte, in
 * order: no magic number here has a zero byte, so a NUL-terminated text
 * shorter than the magic stops the comparison at its NUL, and nothing is
 * read past the end of a string image (cuModuleLoadData has no size). */
static bool starts_with(const uint8_t *p, const uint8_t *m, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (p[i] != m[i]) return false;
  return true;
}

CUresult rt_module_load_image(const void *image, struct CUmod_st **out) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  const uint8_t *p = image;
  static const uint8_t wrapper[4] = {0xb1, 0x43, 0x62, 0x46};   /* PTX_WRAPPER_MAGIC, LE */
  static const uint8_t fatbin[4] = {0x50, 0xed, 0x55, 0xba};    /* PTX_FATBIN_MAGIC, LE */
  static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  uint32_t magic = 0;
  if (starts_with(p, wrapper, 4)) magic = PTX_WRAPPER_MAGIC;
  else if (starts_with(p, fatbin, 4)) magic = PTX_FATBIN_MAGIC;
  if (magic == PTX_WRAPPER_MAGIC) {
    const uint8_t *c;
    memcpy(&c, p + 8, sizeof c);
    if (!c) return CUDA_ERROR_INVALID_IMAGE;
    if (!starts_with(c, fatbin, 4)) return CUDA_ERROR_INVALID_IMAGE;
    return load_container(c, out);
  }
  if (magic == PTX_FATBIN_MAGIC) return load_container(p, out);
  if (starts_with(p, elf, 4)) {
    RT_LOG(rt_error, "module image at %p is a cubin: only PTX can be translated", image);
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  return load_ptx("ptx", (const char *)p, strlen((const char *)p), out);
}

/* Handles are checked against the registry (rt_handle.c), never by
 * reading a struct a destroyed or made-up handle points to. */
static bool mod_valid(CUmodule m) { return rt_handle_valid(rt_h_module, m); }
static bool func_valid(CUfunction f) { return rt_handle_valid(rt_h_function, f); }

RT_EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  RT_TRACE("%p, %p", (void *)module, image);
  if (!module || !image) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_load_image(image, module));
}

RT_EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n,
                                      CUjit_option *options, void **values) {
  RT_TRACE("%p, %p, %u, %p, %p", (void *)module, image, n, (void *)options, (void *)values);
  if (!module || !image) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_load_image(image, module));
}

RT_EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatbin) {
  RT_TRACE("%p, %p", (void *)module, fatbin);
  if (!module || !fatbin) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_load_image(fatbin, module));
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  if (b) {
    b[n] = 0;
    *len = (size_t)n;
  }
  return b;
}

RT_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname) {
  RT_TRACE("%p, %s", (void *)module, fname ? fname : "(null)");
  if (!module || !fname) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t len;
  char *b = slurp(fname, &len);
  if (!b) return rt_ret(CUDA_ERROR_FILE_NOT_FOUND);
  CUresult r = len >= 4 ? rt_module_load_image(b, module) : CUDA_ERROR_INVALID_IMAGE;
  free(b);
  return rt_ret(r);
}

static void module_free(struct CUmod_st *m) {
  rt.backend->module_unload(rt.backend, m->bm);
  for (struct CUfunc_st *f = m->funcs, *n; f; f = n) {
    n = f->next;
    rt_handle_remove(rt_h_function, f);
    f->magic = 0;
    free(f->name);
    free(f);
  }
  rt_handle_remove(rt_h_module, m);
  m->magic = 0;
  pthread_mutex_destroy(&m->lock);
  free(m);
}

RT_EXPORT CUresult cuModuleUnload(CUmodule m) {
  RT_TRACE("%p", (void *)m);
  /* removed first: of two threads unloading one module, one frees it */
  if (!rt_handle_remove(rt_h_module, m)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  module_free(m);
  return rt_ret(CUDA_SUCCESS);
}

static CUresult get_function(struct CUmod_st *m, const char *name, CUfunction *out) {
  pthread_mutex_lock(&m->lock);
  for (struct CUfunc_st *f = m->funcs; f; f = f->next)
    if (!strcmp(f->name, name)) {
      *out = f;
      pthread_mutex_unlock(&m->lock);
      return CUDA_SUCCESS;
    }
  rt_param_layout layout;
  CUresult r = rt.backend->kernel_params(rt.backend, m->bm, name, &layout);
  if (r == CUDA_SUCCESS) {
    struct CUfunc_st *f = calloc(1, sizeof *f);
    char *n = strdup(name);
    if (!f || !n) {
      free(f);
      free(n);
      r = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
      *f = (struct CUfunc_st){.magic = FUNC_MAGIC, .mod = m, .name = n, .layout = layout,
                              .max_dynamic_shared = rt.props[0].shared_per_block,
                              .next = m->funcs};
      if (!rt_handle_add(rt_h_function, f)) {
        free(f->name);
        free(f);
        r = CUDA_ERROR_OUT_OF_MEMORY;
      } else {
        m->funcs = f;
        *out = f;
      }
    }
  }
  pthread_mutex_unlock(&m->lock);
  return r;
}

RT_EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule m, const char *name) {
  RT_TRACE("%p, %p, %s", (void *)hfunc, (void *)m, name ? name : "(null)");
  if (!hfunc || !name) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!mod_valid(m)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return rt_ret(get_function(m, name, hfunc));
}

RT_EXPORT CUresult cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule m, const char *name) {
  RT_TRACE("%p, %p, %p, %s", (void *)dptr, (void *)bytes, (void *)m, name ? name : "(null)");
  if (!name) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!mod_valid(m)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  uint64_t p = 0;
  size_t n = 0;
  CUresult r = rt.backend->module_global(rt.backend, m->bm, name, &p, &n);
  if (r == CUDA_SUCCESS) {
    if (dptr) *dptr = p;
    if (bytes) *bytes = n;
  }
  return rt_ret(r);
}

RT_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode) {
  RT_TRACE("%p", (void *)mode);
  if (!mode) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *mode = CU_MODULE_EAGER_LOADING;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- libraries and kernels ---------------------------------------------- */
static bool lib_valid(CUlibrary l) { return rt_handle_valid(rt_h_library, l); }

RT_EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jo,
                                     void **jv, unsigned int njo, CUlibraryOption *lo, void **lv,
                                     unsigned int nlo) {
  RT_TRACE("%p, %p, %p, %p, %u, %p, %p, %u", (void *)library, code, (void *)jo, (void *)jv, njo,
           (void *)lo, (void *)lv, nlo);
  if (!library || !code) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  struct CUlib_st *l = calloc(1, sizeof *l);
  if (!l) return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  CUresult r = rt_module_load_image(code, &l->mod);
  if (r != CUDA_SUCCESS) {
    free(l);
    return rt_ret(r);
  }
  l->magic = LIB_MAGIC;
  if (!rt_handle_add(rt_h_library, l)) {
    module_free(l->mod);
    free(l);
    return rt_ret(CUDA_ERROR_OUT_OF_MEMORY);
  }
  *library = l;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fname, CUjit_option *jo,
                                         void **jv, unsigned int njo, CUlibraryOption *lo,
                                         void **lv, unsigned int nlo) {
  RT_TRACE("%p, %s", (void *)library, fname ? fname : "(null)");
  if (!library || !fname) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t len;
  char *b = slurp(fname, &len);
  if (!b) return rt_ret(CUDA_ERROR_FILE_NOT_FOUND);
  CUresult r = cuLibraryLoadData(library, b, jo, jv, njo, lo, lv, nlo);
  free(b);
  return rt_ret(r);
}

RT_EXPORT CUresult cuLibraryUnload(CUlibrary l) {
  RT_TRACE("%p", (void *)l);
  if (!lib_valid(l)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  rt_handle_remove(rt_h_library, l);
  module_free(l->mod);
  l->magic = 0;
  free(l);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name) {
  RT_TRACE("%p, %p, %s", (void *)k, (void *)l, name ? name : "(null)");
  if (!k || !name) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!lib_valid(l)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  CUfunction f;
  CUresult r = get_function(l->mod, name, &f);
  if (r == CUDA_SUCCESS) *k = (CUkernel)f;
  return rt_ret(r);
}

RT_EXPORT CUresult cuLibraryGetModule(CUmodule *m, CUlibrary l) {
  RT_TRACE("%p, %p", (void *)m, (void *)l);
  if (!m) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!lib_valid(l)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *m = l->mod;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuLibraryGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUlibrary l,
                                      const char *name) {
  RT_TRACE("%p, %p, %p, %s", (void *)dptr, (void *)bytes, (void *)l, name ? name : "(null)");
  if (!lib_valid(l)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return cuModuleGetGlobal(dptr, bytes, l->mod, name);
}

RT_EXPORT CUresult cuKernelGetFunction(CUfunction *f, CUkernel k) {
  RT_TRACE("%p, %p", (void *)f, (void *)k);
  if (!f) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid((CUfunction)k)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *f = (CUfunction)k;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuKernelGetName(const char **name, CUkernel k) {
  RT_TRACE("%p, %p", (void *)name, (void *)k);
  if (!name) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid((CUfunction)k)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *name = ((CUfunction)k)->name;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuKernelGetLibrary(CUlibrary *l, CUkernel k) {
  RT_TRACE("%p, %p", (void *)l, (void *)k);
  return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
}

RT_EXPORT CUresult cuFuncGetName(const char **name, CUfunction f) {
  RT_TRACE("%p, %p", (void *)name, (void *)f);
  if (!name) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *name = f->name;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuFuncGetModule(CUmodule *m, CUfunction f) {
  RT_TRACE("%p, %p", (void *)m, (void *)f);
  if (!m) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *m = f->mod;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuFuncIsLoaded(CUfunctionLoadingState *state, CUfunction f) {
  RT_TRACE("%p, %p", (void *)state, (void *)f);
  if (!state) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuFuncLoad(CUfunction f) {
  RT_TRACE("%p", (void *)f);
  return rt_ret(func_valid(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

/* ---- attributes ------------------------------------------------------- */
static CUresult func_attr(int *pi, CUfunction_attribute a, CUfunction f) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  const rt_device_props *p = &rt.props[0];
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = p->max_threads_per_block; break;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = rt.cc_major * 10 + rt.cc_minor; break;
  case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dynamic_shared; break;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->carveout; break;
  default: *pi = 0; break;
  }
  return CUDA_SUCCESS;
}

static CUresult func_set_attr(CUfunction f, CUfunction_attribute a, int v) {
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (v < 0 || v > rt.props[0].shared_per_block_optin) return CUDA_ERROR_INVALID_VALUE;
    f->max_dynamic_shared = v;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    if (v < -1 || v > 100) return CUDA_ERROR_INVALID_VALUE;
    f->carveout = v;
    return CUDA_SUCCESS;
  default: return CUDA_SUCCESS;  /* hints without effect here */
  }
}

RT_EXPORT CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute a, CUfunction f) {
  RT_TRACE("%p, %d, %p", (void *)pi, (int)a, (void *)f);
  return rt_ret(func_attr(pi, a, f));
}

RT_EXPORT CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) {
  RT_TRACE("%p, %d, %d", (void *)f, (int)a, v);
  return rt_ret(func_set_attr(f, a, v));
}

RT_EXPORT CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute a, CUkernel k, CUdevice d) {
  RT_TRACE("%p, %d, %p, %d", (void *)pi, (int)a, (void *)k, d);
  return rt_ret(func_attr(pi, a, (CUfunction)k));
}

RT_EXPORT CUresult cuKernelSetAttribute(CUfunction_attribute a, int v, CUkernel k, CUdevice d) {
  RT_TRACE("%d, %d, %p, %d", (int)a, v, (void *)k, d);
  return rt_ret(func_set_attr((CUfunction)k, a, v));
}

RT_EXPORT CUresult cuFuncSetCacheConfig(CUfunction f, CUfunc_cache c) {
  RT_TRACE("%p, %d", (void *)f, (int)c);
  return rt_ret(func_valid(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

RT_EXPORT CUresult cuKernelSetCacheConfig(CUkernel k, CUfunc_cache c, CUdevice d) {
  RT_TRACE("%p, %d, %d", (void *)k, (int)c, d);
  return rt_ret(func_valid((CUfunction)k) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

RT_EXPORT CUresult cuFuncSetSharedMemConfig(CUfunction f, CUsharedconfig c) {
  RT_TRACE("%p, %d", (void *)f, (int)c);
  return rt_ret(func_valid(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

/* ---- occupancy --------------------------------------------------------- */
static int blocks_per_sm(int block, size_t smem) {
  const rt_device_props *p = &rt.props[0];
  if (block <= 0) return 0;
  int n = p->max_threads_per_sm / block;
  if (n > p->max_blocks_per_sm) n = p->max_blocks_per_sm;
  if (smem) {
    int s = (int)(p->shared_per_sm / smem);
    if (s < n) n = s;
  }
  return n;
}

RT_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block,
                                                               size_t smem) {
  RT_TRACE("%p, %p, %d, %zu", (void *)n, (void *)f, block, smem);
  if (!n) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *n = blocks_per_sm(block, smem);
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *n, CUfunction f,
                                                                        int block, size_t smem,
                                                                        unsigned flags) {
  return cuOccupancyMaxActiveBlocksPerMultiprocessor(n, f, block, smem);
}

RT_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f,
                                                    CUoccupancyB2DSize smem_of, size_t smem,
                                                    int limit) {
  RT_TRACE("%p, %p, %p, %p, %zu, %d", (void *)min_grid, (void *)block, (void *)f,
           (void *)(uintptr_t)smem_of, smem, limit);
  if (!min_grid || !block) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  int best = rt.props[0].max_threads_per_block;
  if (limit > 0 && limit < best) best = limit;
  best &= ~31;
  if (best == 0) best = limit > 0 ? limit : 32;
  size_t s = smem_of ? smem_of(best) : smem;
  *block = best;
  *min_grid = blocks_per_sm(best, s) * rt.props[0].sm_count;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *min_grid, int *block,
                                                             CUfunction f, CUoccupancyB2DSize sm,
                                                             size_t smem, int limit,
                                                             unsigned flags) {
  return cuOccupancyMaxPotentialBlockSize(min_grid, block, f, sm, smem, limit);
}

RT_EXPORT CUresult cuOccupancyAvailableDynamicSMemPerBlock(size_t *smem, CUfunction f, int blocks,
                                                           int block) {
  RT_TRACE("%p, %p, %d, %d", (void *)smem, (void *)f, blocks, block);
  if (!smem) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *smem = (size_t)rt.props[0].shared_per_block_optin;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- launch ------------------------------------------------------------ */
extern rt_bstream rt_stream_backend(CUstream s, CUresult *r);

/* The launch configuration CUDA checks before anything runs (CUDA Driver
 * API, cuLaunchKernel: CUDA_ERROR_INVALID_VALUE for a zero or too large
 * dimension and for more dynamic shared memory than the function allows). */
static CUresult launch_check(CUfunction f, const unsigned grid[3], const unsigned block[3],
                             unsigned shared) {
  const rt_device_props *p = &rt.props[0];
  for (int i = 0; i < 3; i++) {
    if (!grid[i] || !block[i]) return CUDA_ERROR_INVALID_VALUE;
    if (block[i] > (unsigned)p->max_block[i] || grid[i] > (unsigned)p->max_grid[i])
      return CUDA_ERROR_INVALID_VALUE;
  }
  if ((uint64_t)block[0] * block[1] * block[2] > (uint64_t)p->max_threads_per_block)
    return CUDA_ERROR_INVALID_VALUE;
  if (shared > (unsigned)f->max_dynamic_shared && shared > (unsigned)p->shared_per_block)
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/* kernelParams or extra, packed into *buf in the kernel's .param layout:
 * *buf is small, or malloc'd (*owned). */
static CUresult launch_pack(CUfunction f, void **params, void **extra, uint8_t *small,
                            size_t small_size, uint8_t **buf, size_t *size, bool *owned) {
  const rt_param_layout *L = &f->layout;
  *owned = false;
  *buf = small;
  *size = L->size;
  if (params) {
    if (L->size > small_size) {
      if (!(*buf = calloc(1, L->size))) return CUDA_ERROR_OUT_OF_MEMORY;
      *owned = true;
    }
    memset(*buf, 0, L->size);
    for (unsigned i = 0; i < L->nparams; i++) {
      if (!params[i]) {
        if (*owned) free(*buf);
        *owned = false;
        return CUDA_ERROR_INVALID_VALUE;
      }
      memcpy(*buf + L->params[i].offset, params[i], L->params[i].size);
    }
  } else if (extra) {
    void *ptr = NULL;
    size_t *psize = NULL;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
      if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) ptr = extra[i + 1];
      else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) psize = extra[i + 1];
      else return CUDA_ERROR_INVALID_VALUE;
    }
    if (!ptr || !psize || *psize < L->size) return CUDA_ERROR_INVALID_VALUE;
    *buf = ptr;
  } else if (L->nparams) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult rt_launch_packed(CUfunction f, const unsigned grid[3], const unsigned block[3],
                          unsigned shared, CUstream hs, const void *buf, size_t size) {
  CUresult r = rt_check_ctx();   /* a graph's later kernels after a fault in an earlier one */
  if (r != CUDA_SUCCESS) return r;
  rt_bstream bs = rt_stream_backend(hs, &r);
  if (r != CUDA_SUCCESS) return r;
  RT_LOG(rt_debug, "launch %s grid (%u,%u,%u) block (%u,%u,%u) shared %u, %zu bytes of params",
         f->name, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared, size);
  r = rt.backend->launch(rt.backend, f->mod->bm, f->name, grid, block, shared, bs, buf, size);
  if (r != CUDA_SUCCESS) RT_LOG(rt_error, "kernel %s: %s", f->name, rt.backend->error);
  /* A fault inside the kernel is not the launch's error: CUDA returns it
   * from the next synchronising call, and from every call after it (the
   * context's sticky error).  The emulator runs the kernel inside the
   * launch, so the fault is known here already. */
  if (rt_is_fault(r)) {
    rt_fault(r);
    return CUDA_SUCCESS;
  }
  return r;
}

CUresult rt_kernel_node_pack(CUfunction f, const unsigned grid[3], const unsigned block[3],
                             unsigned shared, void **params, void **extra, void **out,
                             size_t *size) {
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  CUresult r = launch_check(f, grid, block, shared);
  if (r != CUDA_SUCCESS) return r;
  uint8_t small[256], *buf;
  bool owned;
  r = launch_pack(f, params, extra, small, sizeof small, &buf, size, &owned);
  if (r != CUDA_SUCCESS) return r;
  *out = malloc(*size ? *size : 1);
  if (*out) memcpy(*out, buf, *size);
  if (owned) free(buf);
  return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

const rt_param_layout *rt_func_layout(CUfunction f) { return &f->layout; }
const char *rt_func_name(CUfunction f) { return f->name; }
bool rt_func_valid(CUfunction f) { return func_valid(f); }

static CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3],
                       unsigned shared, CUstream hs, void **params, void **extra) {
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  r = launch_check(f, grid, block, shared);
  if (r != CUDA_SUCCESS) return r;
  rt_stream_backend(hs, &r);
  if (r != CUDA_SUCCESS) return r;
  uint8_t small[4096], *buf;
  size_t size;
  bool owned;
  r = launch_pack(f, params, extra, small, sizeof small, &buf, &size, &owned);
  if (r != CUDA_SUCCESS) return r;
  bool captured = false;
  if (rt_capturing()) {
    /* recorded as a kernel node of the stream's capture (rt_graph.c) */
    rt_op op = {.type = CU_GRAPH_NODE_TYPE_KERNEL};
    op.k.f = f;
    op.k.shared = shared;
    memcpy(op.k.grid, grid, sizeof op.k.grid);
    memcpy(op.k.block, block, sizeof op.k.block);
    op.k.buf = buf;
    op.k.size = size;
    r = rt_capture_op(hs, &op, &captured);
  }
  if (r == CUDA_SUCCESS && !captured) r = rt_launch_packed(f, grid, block, shared, hs, buf, size);
  if (owned) free(buf);
  return r;
}

RT_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                  unsigned by, unsigned bz, unsigned shared, CUstream s,
                                  void **params, void **extra) {
  RT_TRACE("%p, %u, %u, %u, %u, %u, %u, %u, %p, %p, %p", (void *)f, gx, gy, gz, bx, by, bz,
           shared, (void *)s, (void *)params, (void *)extra);
  const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  return rt_ret(launch(f, g, b, shared, s, params, extra));
}

RT_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                    void **extra) {
  RT_TRACE("%p, %p, %p, %p", (void *)c, (void *)f, (void *)params, (void *)extra);
  if (!c) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  for (unsigned i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
        a->value.clusterDim.x * a->value.clusterDim.y * a->value.clusterDim.z > 1)
      return rt_ret(CUDA_ERROR_NOT_SUPPORTED);
    if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && a->value.cooperative)
      RT_LOG(rt_info, "cuLaunchKernelEx: cooperative launch runs as a normal launch");
  }
  const unsigned g[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
  const unsigned b[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
  return rt_ret(launch(f, g, b, c->sharedMemBytes, c->hStream, params, extra));
}

RT_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by, unsigned bz,
                                             unsigned shared, CUstream s, void **params) {
  RT_TRACE("%p, %u, %u, %u, %u, %u, %u, %u, %p, %p", (void *)f, gx, gy, gz, bx, by, bz, shared,
           (void *)s, (void *)params);
  const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  return rt_ret(launch(f, g, b, shared, s, params, NULL));
}
