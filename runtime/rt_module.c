/* runtime/rt_module.c: modules and libraries, functions and kernels,
 * globals, launches, function attributes and occupancy.
 *
 * A module image is PTX text, a fatbin container (0xBA55ED50) or a fatbin
 * wrapper (0x466243B1, what __cudaRegisterFatBinary and the export table
 * hand over).
 *
 * Loading is lazy, as CUDA's CU_MODULE_LAZY_LOADING is (docs/runtime.md
 * "Loading"): a fatbin's module is only checked at load (its container
 * header and entry table), whether or not it has an image ptxwave can
 * use, and its PTX is translated when a kernel of it is first looked up.
 * NVIDIA's libraries register thousands of fatbins at start (cuBLASLt:
 * 2,782) and use few of them; translating each at load made start-up
 * minutes long and failed it on the first fatbin without usable PTX.  PTX
 * text given directly (cuModuleLoadData) is translated at load, so its
 * errors come from the call that gave it, as CUDA's JIT reports them.
 *
 * The PTX of a fatbin is chosen with ptx_rank (ptx/select.c) for the
 * reported compute capability with any_ptx: the newest SM not above it
 * first, then PTX for newer SMs (ptxwave translates any PTX it parses);
 * when one entry fails to translate the next is tried, and the first
 * failure is reported.  A kernel that only a cubin of the fatbin defines
 * (SASS, from its ELF symbol table) gets a handle whose launches fail with
 * CUDA_ERROR_NO_BINARY_FOR_GPU and one log line naming the kernel and its
 * library; everything else the library does goes on.
 *
 * A library (cuLibraryLoadData) is a module; a CUkernel is the CUfunction
 * of that module (cuKernelGetFunction returns it unchanged).
 *
 * Launches pack kernelParams into one buffer in the kernel's .param layout
 * (from the backend), or take CU_LAUNCH_PARAM_BUFFER_POINTER as it is.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/container.h"
#include "runtime/rt.h"
#include "util/pw_file.h"

struct ptx_file *rt_ptx_file(const char *name, const void *data, size_t len, pw_diag *d) {
  ptx_file *f = ptx_file_from_memory(name, data, len, d);
  const char *e = getenv("PTXWAVE_DECOMPRESS_BUDGET_MB");
  if (f && e && *e) {
    char *end;
    unsigned long long mb = strtoull(e, &end, 10);
    if (*end || mb > UINT64_MAX >> 20)
      RT_LOG(rt_warn, "PTXWAVE_DECOMPRESS_BUDGET_MB=%s is not a number of MiB; the default budget stays", e);
    else
      f->decompress_budget = (uint64_t)mb << 20;
  }
  return f;
}

#define MOD_MAGIC 0x4d6f6421u
#define FUNC_MAGIC 0x46756e21u
#define LIB_MAGIC 0x4c696221u

struct CUfunc_st {
  uint32_t magic;
  struct CUmod_st *mod;
  char *name;
  rt_param_layout layout;
  bool sass_only;               /* defined only by a cubin: launches fail */
  atomic_flag sass_logged;      /* its one log line */
  /* CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, _PREFERRED_SHARED_MEMORY_CARVEOUT:
   * atomic, NCCL's init threads set and read them at once */
  _Atomic int max_dynamic_shared;
  _Atomic int carveout;
  struct CUfunc_st *next;
};

struct CUmod_st {
  uint32_t magic;
  rt_bmodule *bm;               /* NULL until translated, or with no usable PTX */
  struct CUfunc_st *funcs;
  pthread_mutex_t lock;
  /* A fatbin's module before (and after) translation: its container (the
   * caller's registered one, or `copy`), translated on first lookup. */
  const uint8_t *fatbin;
  uint8_t *copy;
  size_t fatbin_len;
  const void *origin;           /* the caller's image (dladdr names its library) */
  /* nvcc -rdc=true: the relocatable fatbins (each file's __nv_relfatbin
   * container) the registered device-linked cubin was linked from; their
   * PTX, linked, is what translates (rt_link_relocatable) */
  const uint8_t **prelinked;
  uint32_t nprelinked;
  bool translated;              /* the PTX was tried (bm set, or `failure`) */
  CUresult failure;             /* of that translation; NO_BINARY_FOR_GPU: no PTX */
  uint32_t ptx_arch;            /* .target of the PTX translated: 80 for sm_80 */
  uint32_t ptx_isa;             /* its .version, major * 10 + minor */
  pw_arena names;               /* the kernels of that PTX (.entry), in order */
  const char **kernels;
  uint32_t nkernels;
  /* the cluster directives of kernels[0 .. nclusters-1] (the PTX's) */
  ptx_kernel_cluster *clusters;
  uint32_t nclusters;
};

struct CUlib_st {
  uint32_t magic;
  struct CUmod_st *mod;
};

/* ---- loading ----------------------------------------------------------- */
static const ptx_target *load_target(ptx_target *t) {
  *t = (ptx_target){.max_isa_major = 9, .max_isa_minor = 1,
                    .max_sm = (uint32_t)(rt_driver.cc_major * 10 + rt_driver.cc_minor), .any_ptx = true};
  return t;
}

uint32_t rt_ptx_rank(const ptx_container *c, uint32_t *order, uint32_t cap) {
  ptx_target t;
  return ptx_rank(c, load_target(&t), order, cap);
}

/* The library holding an image, for messages: "libcublas.so.13", or the
 * program's own name, or "module at 0x...". */
static void origin_name(const void *p, char *buf, size_t cap) {
  Dl_info di;
  if (p && dladdr(p, &di) && di.dli_fname && *di.dli_fname) {
    const char *s = strrchr(di.dli_fname, '/');
    snprintf(buf, cap, "%s", s ? s + 1 : di.dli_fname);
  } else {
    snprintf(buf, cap, "module at %p", p);
  }
}

static struct CUmod_st *mod_new(void) {
  struct CUmod_st *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->magic = MOD_MAGIC;
  pthread_mutex_init(&m->lock, NULL);
  pw_arena_init(&m->names);
  return m;
}

/* Lists the .entry names of the PTX translated (cuModuleEnumerateFunctions
 * and the TOOLS_MODULE table ask for them). */
static void list_kernels(struct CUmod_st *m, const char *text, size_t len) {
  uint32_t n = ptx_scan_kernels(text, len, NULL, NULL, 0);
  m->kernels = n ? pw_arena_alloc(&m->names, n * sizeof *m->kernels) : NULL;
  if (m->kernels) m->nkernels = ptx_scan_kernels(text, len, &m->names, m->kernels, n);
  m->clusters = m->nkernels ? pw_arena_alloc(&m->names, m->nkernels * sizeof *m->clusters) : NULL;
  if (m->clusters) m->nclusters = ptx_scan_kernel_clusters(text, len, m->clusters, m->nkernels);
}

static CUresult backend_load(const char *name, const char *text, size_t len, rt_bmodule **out) {
  rt_backend *b = rt_driver.backend;
  CUresult r = b->module_load_ptx(b, name, text, len, out);
  if (r != CUDA_SUCCESS) RT_LOG(rt_error, "module %s: %s", name, b->error);
  else RT_LOG(rt_debug, "module %s loaded (%zu bytes of PTX)", name, len);
  return r;
}

static CUresult load_ptx(const char *name, const char *text, size_t len, struct CUmod_st **out) {
  rt_bmodule *bm = NULL;
  CUresult r = backend_load(name, text, len, &bm);
  if (r != CUDA_SUCCESS) return r;
  struct CUmod_st *m = mod_new();
  if (!m) {
    rt_driver.backend->module_unload(rt_driver.backend, bm);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->bm = bm;
  m->translated = true;
  list_kernels(m, text, len);
  /* The .version and .target the function attributes report. */
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_file *f = rt_ptx_file("ptx", text, len, &d);
  if (f && f->input == ptx_input_ptx) {
    m->ptx_arch = f->arch;
    m->ptx_isa = f->version_major * 10u + f->version_minor;
  }
  if (f) ptx_file_close(f);
  pw_diag_fini(&d);
  *out = m;
  return CUDA_SUCCESS;
}

/* Checks a fatbin container's header and entry table and keeps it for a
 * translation at first use; no payload is decompressed.  `keep`: the
 * bytes outlive the module (a registered fatbin), else they are copied. */
static CUresult load_container(const uint8_t *c, const void *origin, bool keep,
                               struct CUmod_st **out) {
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
  size_t len = hsize + bytes;
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_file *f = rt_ptx_file("fatbin", c, len, &d);
  bool ok = f && f->ncontainers > 0;
  if (!ok) RT_LOG(rt_error, "fatbin at %p: %s", (const void *)c, pw_diag_text(&d));
  if (f) ptx_file_close(f);
  pw_diag_fini(&d);
  if (!ok) return CUDA_ERROR_INVALID_IMAGE;
  struct CUmod_st *m = mod_new();
  if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
  if (!keep) {
    if (!(m->copy = malloc(len))) {
      free(m);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    memcpy(m->copy, c, len);
  }
  m->fatbin = keep ? c : m->copy;
  m->fatbin_len = len;
  m->origin = origin;
  *out = m;
  RT_LOG(rt_debug, "fatbin at %p: %zu bytes, loaded lazily", (const void *)c, len);
  return CUDA_SUCCESS;
}

static bool each_cubin_kernel(const struct CUmod_st *m, bool (*fn)(const char *, void *),
                              void *user);
static bool add_listed(const char *n, void *user);

/* The first translation of a fatbin's module, under m->lock: its PTX in
 * rank order until one loads.  No PTX at all is not a failure of the
 * module (its kernels are SASS only); a PTX that does not translate is. */
/* The largest linked PTX of an -rdc=true module that is linked at load
 * (PTXWAVE_RDC_LINK_MAX_MB, default RDC_LINK_MAX_MB): a program's own
 * files and libcudadevrt's 0.8 MB are far below it; NCCL's 131 MB are
 * below it too, since several ranks need its kernels (docs/runtime.md
 * "Relocatable device code"). */
#define RDC_LINK_MAX_MB 256
static size_t rdc_link_max(void) {
  const char *v = getenv("PTXWAVE_RDC_LINK_MAX_MB");
  char *end;
  unsigned long mb = v && *v ? strtoul(v, &end, 10) : RDC_LINK_MAX_MB;
  if (v && *v && *end) mb = RDC_LINK_MAX_MB;
  return mb > (SIZE_MAX >> 21) ? SIZE_MAX : (size_t)mb << 20;
}

static void translate(struct CUmod_st *m) {
  m->translated = true;
  char lib[256];
  origin_name(m->origin, lib, sizeof lib);
  if (m->nprelinked) {
    /* -rdc=true: the registered image is the device-linked cubin; the
     * program's PTX is in the relocatable fatbins, linked here as cuLink*
     * links (the kernels and variables the cubin has are theirs) */
    char name[320], *img = NULL;
    size_t len = 0;
    snprintf(name, sizeof name, "%s: fatbin@%p (-rdc)", lib, (const void *)m->fatbin);
    CUresult r = rt_link_relocatable(m->prelinked, m->nprelinked, name, &img, &len);
    if (r == CUDA_SUCCESS && len > rdc_link_max()) {
      /* a module above the limit stays SASS only unless asked for
       * (NCCL's device-linked module, 127 relocatable fatbins and 136 MB
       * of PTX, is below the default: it loads in about 10 s of CPU) */
      RT_LOG(rt_info, "%s: %zu MB of relocatable PTX, above PTXWAVE_RDC_LINK_MAX_MB (%zu): not "
             "linked, its kernels are SASS only", name, len >> 20, rdc_link_max() >> 20);
      r = CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    if (r == CUDA_SUCCESS) r = backend_load(name, img, len, &m->bm);
    if (r == CUDA_SUCCESS) list_kernels(m, img, len);
    free(img);
    m->failure = r;
    if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) each_cubin_kernel(m, add_listed, m);
    return;
  }
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_file *f = rt_ptx_file("fatbin", m->fatbin, m->fatbin_len, &d);
  if (f && f->input == ptx_input_cubin) {
    m->failure = CUDA_ERROR_NO_BINARY_FOR_GPU;
    each_cubin_kernel(m, add_listed, m);
    ptx_file_close(f);
    pw_diag_fini(&d);
    return;
  }
  if (!f || !f->ncontainers) {
    m->failure = CUDA_ERROR_INVALID_IMAGE;
    if (f) ptx_file_close(f);
    pw_diag_fini(&d);
    return;
  }
  uint32_t order[64];
  const ptx_container *pc = &f->containers[0];
  uint32_t n = rt_ptx_rank(pc, order, 64);
  CUresult first = n ? CUDA_SUCCESS : CUDA_ERROR_NO_BINARY_FOR_GPU;
  if (!n) RT_LOG(rt_debug, "%s: fatbin at %p has no PTX (%u entries): its kernels are SASS only",
                 lib, (const void *)m->fatbin, pc->nentries);
  for (uint32_t i = 0; i < n && i < 64; i++) {
    const ptx_entry *e = &pc->entries[order[i]];
    ptx_payload p;
    if (!ptx_entry_read(f, e, NULL, NULL, &d, &p)) {
      if (first == CUDA_SUCCESS) first = CUDA_ERROR_INVALID_IMAGE;
      continue;
    }
    char name[320];
    snprintf(name, sizeof name, "%s: fatbin@%p.sm_%u.ptx", lib, (const void *)m->fatbin, e->arch);
    CUresult r = backend_load(name, (const char *)p.data, p.len, &m->bm);
    if (r == CUDA_SUCCESS) list_kernels(m, (const char *)p.data, p.len);
    ptx_payload_free(&p);
    if (r == CUDA_SUCCESS) {
      m->ptx_arch = e->arch;
      m->ptx_isa = e->version_major * 10u + e->version_minor;
      first = CUDA_SUCCESS;
      break;
    }
    if (first == CUDA_SUCCESS) first = r;
  }
  m->failure = m->bm ? CUDA_SUCCESS : first;
  ptx_file_close(f);
  pw_diag_fini(&d);
  if (m->failure == CUDA_ERROR_NO_BINARY_FOR_GPU) each_cubin_kernel(m, add_listed, m);
}

/* Calls fn for each kernel the module's cubins define (its fatbin's ELF
 * entries, or the cubin it is); stops when fn returns true.  Decompresses
 * the cubins: used only for names the PTX lacks, and for listing a module
 * without PTX. */
static bool each_cubin_kernel(const struct CUmod_st *m, bool (*fn)(const char *, void *),
                              void *user) {
  if (!m->fatbin) return false;
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_file *f = rt_ptx_file("fatbin", m->fatbin, m->fatbin_len, &d);
  bool stop = false;
  pw_arena a;
  pw_arena_init(&a);
  if (f && f->input == ptx_input_cubin) {
    uint32_t nk = ptx_cubin_kernels(f->data, f->size, NULL, NULL, 0);
    const char **names = nk ? pw_arena_alloc(&a, nk * sizeof *names) : NULL;
    if (names) ptx_cubin_kernels(f->data, f->size, &a, names, nk);
    for (uint32_t k = 0; names && k < nk && !stop; k++) stop = fn(names[k], user);
  }
  for (uint32_t i = 0; f && i < f->ncontainers && !stop; i++) {
    const ptx_container *pc = &f->containers[i];
    for (uint32_t j = 0; j < pc->nentries && !stop; j++) {
      if (pc->entries[j].kind != ptx_kind_elf) continue;
      ptx_payload p;
      if (!ptx_entry_read(f, &pc->entries[j], NULL, NULL, &d, &p)) continue;
      uint32_t nk = ptx_cubin_kernels(p.data, p.len, NULL, NULL, 0);
      const char **names = nk ? pw_arena_alloc(&a, nk * sizeof *names) : NULL;
      if (names) ptx_cubin_kernels(p.data, p.len, &a, names, nk);
      for (uint32_t k = 0; names && k < nk && !stop; k++) stop = fn(names[k], user);
      ptx_payload_free(&p);
    }
  }
  pw_arena_free(&a);
  if (f) ptx_file_close(f);
  pw_diag_fini(&d);
  return stop;
}

static bool same_name(const char *n, void *want) { return !strcmp(n, want); }

/* Whether a cubin of the module defines kernel `name`. */
static bool in_cubin(const struct CUmod_st *m, const char *name) {
  return each_cubin_kernel(m, same_name, (void *)name);
}

/* A module without PTX lists its cubins' kernels (each once). */
static bool add_listed(const char *n, void *user) {
  struct CUmod_st *m = user;
  for (uint32_t i = 0; i < m->nkernels; i++)
    if (!strcmp(m->kernels[i], n)) return false;
  const char **k = pw_arena_alloc(&m->names, (m->nkernels + 1) * sizeof *k);
  if (!k) return true;
  if (m->nkernels) memcpy(k, m->kernels, m->nkernels * sizeof *k);
  k[m->nkernels++] = pw_arena_strndup(&m->names, n, strlen(n));
  m->kernels = k;
  return false;
}

/* The size of an ELF image from its headers: the end of its section
 * header table or of its last section, whichever is later; 0 when the
 * header is not an ELF64's.  The image is the caller's, as trusted as any
 * cuModuleLoadData argument; sizes past 1 GiB are refused. */
static size_t elf_size(const uint8_t *p) {
  if (memcmp(p, "\177ELF", 4) || p[4] != 2) return 0;
  uint64_t shoff, end;
  uint16_t shentsize, shnum;
  memcpy(&shoff, p + 40, 8);
  memcpy(&shentsize, p + 58, 2);
  memcpy(&shnum, p + 60, 2);
  if (shentsize < 64 || shoff > ((uint64_t)1 << 30)) return 0;
  end = shoff + (uint64_t)shnum * shentsize;
  for (uint16_t i = 0; i < shnum; i++) {
    const uint8_t *sh = p + shoff + (uint64_t)i * shentsize;
    uint32_t type;
    uint64_t off, size;
    memcpy(&type, sh + 4, 4);
    memcpy(&off, sh + 24, 8);
    memcpy(&size, sh + 32, 8);
    if (type == 8) continue;  /* SHT_NOBITS */
    if (off > ((uint64_t)1 << 30) || size > ((uint64_t)1 << 30)) return 0;
    if (off + size > end) end = off + size;
  }
  return end <= ((uint64_t)1 << 30) ? (size_t)end : 0;
}

/* A cubin given as the image: a module of SASS-only kernels (its load
 * succeeds, as a fatbin's without PTX does; its launches fail). */
static CUresult load_cubin(const uint8_t *p, struct CUmod_st **out) {
  size_t len = elf_size(p);
  if (!len) return CUDA_ERROR_INVALID_IMAGE;
  struct CUmod_st *m = mod_new();
  if (!m || !(m->copy = malloc(len))) {
    free(m);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  memcpy(m->copy, p, len);
  m->fatbin = m->copy;
  m->fatbin_len = len;
  m->origin = p;
  char lib[256];
  origin_name(p, lib, sizeof lib);
  RT_LOG(rt_debug, "%s: module image at %p is a cubin (SASS only, no PTX): its kernels load, "
         "their launches fail", lib, (const void *)p);
  *out = m;
  return CUDA_SUCCESS;
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

static void module_free(struct CUmod_st *m);

/* A version 2 wrapper (fatbinary_section.h; what crt/link.stub registers
 * for an -rdc=true program) names, after its device-linked fatbin, a
 * NULL-terminated array of the relocatable fatbins it was linked from.
 * They live as long as the program, like the wrapper. */
static CUresult take_prelinked(struct CUmod_st *m, const uint8_t *wrapper) {
  static const uint8_t fatbin[4] = {0x50, 0xed, 0x55, 0xba};
  uint32_t version;
  const uint8_t *const *list;
  memcpy(&version, wrapper + 4, 4);
  memcpy(&list, wrapper + 16, sizeof list);
  if (version != 2 || !list) return CUDA_SUCCESS;
  uint32_t n = 0;
  while (n < 65536 && list[n]) n++;
  if (!n) return CUDA_SUCCESS;
  for (uint32_t i = 0; i < n; i++)
    if (!starts_with(list[i], fatbin, 4)) {
      RT_LOG(rt_error, "fatbin wrapper at %p: prelinked fatbin %u at %p is no fatbin container",
             (const void *)wrapper, i, (const void *)list[i]);
      return CUDA_ERROR_INVALID_IMAGE;
    }
  if (!(m->prelinked = malloc(n * sizeof *m->prelinked))) return CUDA_ERROR_OUT_OF_MEMORY;
  memcpy(m->prelinked, list, n * sizeof *m->prelinked);
  m->nprelinked = n;
  RT_LOG(rt_debug, "fatbin wrapper at %p: device-linked, from %u relocatable fatbins",
         (const void *)wrapper, n);
  return CUDA_SUCCESS;
}

static CUresult load_image(const void *image, struct CUmod_st **out) {
  const uint8_t *p = image;
  static const uint8_t wrapper[4] = {0xb1, 0x43, 0x62, 0x46};   /* PTX_WRAPPER_MAGIC, LE */
  static const uint8_t fatbin[4] = {0x50, 0xed, 0x55, 0xba};    /* PTX_FATBIN_MAGIC, LE */
  static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};
  if (starts_with(p, wrapper, 4)) {
    /* A registered fatbin: the wrapper and its container live as long as
     * the program or library that registered them. */
    const uint8_t *c;
    memcpy(&c, p + 8, sizeof c);
    if (!c || !starts_with(c, fatbin, 4)) return CUDA_ERROR_INVALID_IMAGE;
    CUresult r = load_container(c, image, true, out);
    if (r == CUDA_SUCCESS && (r = take_prelinked(*out, p)) != CUDA_SUCCESS) module_free(*out);
    return r;
  }
  if (starts_with(p, fatbin, 4)) return load_container(p, image, false, out);
  if (starts_with(p, elf, 4)) return load_cubin(p, out);
  return load_ptx("ptx", (const char *)p, strlen((const char *)p), out);
}

static void module_free(struct CUmod_st *m);

/* Every module is made here, and registered (rt_handle.c) once whole. */
CUresult rt_module_load_image(const void *image, struct CUmod_st **out) {
  CUresult r = rt_check_init();
  if (r != CUDA_SUCCESS) return r;
  r = load_image(image, out);
  if (r == CUDA_SUCCESS && !rt_handle_add(rt_h_module, *out)) {
    module_free(*out);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  return r;
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

RT_EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname) {
  RT_TRACE("%p, %s", (void *)module, fname ? fname : "(null)");
  if (!module || !fname) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  size_t len;
  char *b = pw_read_file(fname, &len);
  if (!b) return rt_ret(CUDA_ERROR_FILE_NOT_FOUND);
  CUresult r = len >= 4 ? rt_module_load_image(b, module) : CUDA_ERROR_INVALID_IMAGE;
  free(b);
  return rt_ret(r);
}

static void module_free(struct CUmod_st *m) {
  if (m->bm) rt_driver.backend->module_unload(rt_driver.backend, m->bm);
  free(m->copy);
  free(m->prelinked);
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
  pw_arena_free(&m->names);
  free(m);
}

RT_EXPORT CUresult cuModuleUnload(CUmodule m) {
  RT_TRACE("%p", (void *)m);
  /* removed first: of two threads unloading one module, one frees it */
  if (!rt_handle_remove(rt_h_module, m)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  module_free(m);
  return rt_ret(CUDA_SUCCESS);
}

/* The module translated (the first call translates a fatbin's PTX); the
 * translation's result, remembered.  Under m->lock. */
static CUresult ensure_translated(struct CUmod_st *m) {
  if (!m->translated) translate(m);
  return m->failure;
}

static CUresult add_function(struct CUmod_st *m, const char *name, const rt_param_layout *layout,
                             CUfunction *out) {
  struct CUfunc_st *f = calloc(1, sizeof *f);
  char *n = strdup(name);
  if (!f || !n) {
    free(f);
    free(n);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *f = (struct CUfunc_st){.magic = FUNC_MAGIC, .mod = m, .name = n,
                          .max_dynamic_shared = rt_driver.props[0].shared_per_block,
                          .next = m->funcs};
  if (layout) f->layout = *layout;
  else f->sass_only = true;
  atomic_flag_clear(&f->sass_logged);
  if (!rt_handle_add(rt_h_function, f)) {
    free(f->name);
    free(f);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  m->funcs = f;
  *out = f;
  return CUDA_SUCCESS;
}

/* A kernel by name: translates the module on first use; a name only a
 * cubin defines is a SASS-only function (its launches fail). */
static CUresult get_function(struct CUmod_st *m, const char *name, CUfunction *out) {
  pthread_mutex_lock(&m->lock);
  for (struct CUfunc_st *f = m->funcs; f; f = f->next)
    if (!strcmp(f->name, name)) {
      *out = f;
      pthread_mutex_unlock(&m->lock);
      return CUDA_SUCCESS;
    }
  CUresult r = ensure_translated(m);
  if (r == CUDA_SUCCESS) {
    rt_param_layout layout;
    r = rt_driver.backend->kernel_params(rt_driver.backend, m->bm, name, &layout);
    if (r == CUDA_SUCCESS) r = add_function(m, name, &layout, out);
  }
  if ((r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_NO_BINARY_FOR_GPU) && in_cubin(m, name))
    r = add_function(m, name, NULL, out);
  else if (r == CUDA_ERROR_NO_BINARY_FOR_GPU)
    r = CUDA_ERROR_NOT_FOUND;   /* no PTX, and no cubin defines it either */
  pthread_mutex_unlock(&m->lock);
  return r;
}

CUresult rt_module_functions(struct CUmod_st *m, CUfunction *out, unsigned cap, unsigned *n) {
  if (!mod_valid(m)) return CUDA_ERROR_INVALID_HANDLE;
  pthread_mutex_lock(&m->lock);
  CUresult r = ensure_translated(m);
  pthread_mutex_unlock(&m->lock);
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) r = CUDA_SUCCESS;   /* SASS only: its cubins' kernels */
  if (r != CUDA_SUCCESS) return r;
  *n = m->nkernels;
  for (unsigned i = 0; i < m->nkernels && i < cap && r == CUDA_SUCCESS; i++)
    r = get_function(m, m->kernels[i], &out[i]);
  return r;
}

RT_EXPORT CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule m) {
  RT_TRACE("%p, %p", (void *)count, (void *)m);
  if (!count) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  return rt_ret(rt_module_functions(m, NULL, 0, count));
}

RT_EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *fs, unsigned int n, CUmodule m) {
  RT_TRACE("%p, %u, %p", (void *)fs, n, (void *)m);
  if (!fs) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  unsigned have;
  return rt_ret(rt_module_functions(m, fs, n, &have));
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
  pthread_mutex_lock(&m->lock);
  CUresult r = ensure_translated(m);
  pthread_mutex_unlock(&m->lock);
  if (r == CUDA_ERROR_NO_BINARY_FOR_GPU) return rt_ret(CUDA_ERROR_NOT_FOUND);
  if (r == CUDA_SUCCESS) r = rt_driver.backend->module_global(rt_driver.backend, m->bm, name, &p, &n);
  if (r == CUDA_SUCCESS) {
    if (dptr) *dptr = p;
    if (bytes) *bytes = n;
  }
  return rt_ret(r);
}

RT_EXPORT CUresult cuModuleGetLoadingMode(CUmoduleLoadingMode *mode) {
  RT_TRACE("%p", (void *)mode);
  if (!mode) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  *mode = CU_MODULE_LAZY_LOADING;   /* fatbins translate at first use (file comment) */
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
  char *b = pw_read_file(fname, &len);
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

RT_EXPORT CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary l) {
  RT_TRACE("%p, %p", (void *)count, (void *)l);
  if (!count) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!lib_valid(l)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  return rt_ret(rt_module_functions(l->mod, NULL, 0, count));
}

RT_EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *ks, unsigned int n, CUlibrary l) {
  RT_TRACE("%p, %u, %p", (void *)ks, n, (void *)l);
  if (!ks) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!lib_valid(l)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  unsigned have;
  return rt_ret(rt_module_functions(l->mod, (CUfunction *)ks, n, &have));
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
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  /* a handle exists once its module is translated (get_function) */
  *state = CU_FUNCTION_LOADING_STATE_LOADED;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuFuncLoad(CUfunction f) {
  RT_TRACE("%p", (void *)f);
  return rt_ret(func_valid(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE);
}

/* ---- attributes ------------------------------------------------------- */
static ptx_kernel_cluster func_cluster(CUfunction f);
static CUresult cluster_check_at(CUfunction f, const unsigned *cluster, rt_level level, const char *what);

static CUresult func_attr(int *pi, CUfunction_attribute a, CUfunction f) {
  if (!pi) return CUDA_ERROR_INVALID_VALUE;
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  const rt_device_props *p = &rt_driver.props[0];
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = p->max_threads_per_block; break;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
  /* The virtual architecture of the PTX translated (cudaFuncAttributes'
   * ptxVersion: 80 for compute_80), and as the binary's the same: the code
   * ptxwave made is that PTX's.  CUB's dispatch picks its tuning policy by
   * PTX_VERSION and refuses to launch (cudaErrorInvalidDeviceFunction) when
   * no policy of the architectures it was compiled for matches, so these
   * describe the module, never the reported capability.  A SASS-only
   * function reports the capability it would have run at. */
  case CU_FUNC_ATTRIBUTE_PTX_VERSION:
  case CU_FUNC_ATTRIBUTE_BINARY_VERSION:
    *pi = f->mod->ptx_arch ? (int)f->mod->ptx_arch : rt_driver.cc_major * 10 + rt_driver.cc_minor;
    break;
  case CU_FUNC_ATTRIBUTE_CACHE_MODE_CA: *pi = 0; break;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dynamic_shared; break;
  case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->carveout; break;
  /* the PTX's .reqnctapercluster (0 when it has none), and whether a
   * launch must give cluster dimensions (.explicitcluster or a required
   * size); launches run only clusters of one CTA (cluster_check) */
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
  case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    *pi = (int)func_cluster(f).reqnctapercluster[a - CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH];
    break;
  case CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET: {
    ptx_kernel_cluster c = func_cluster(f);
    *pi = c.explicitcluster || c.reqnctapercluster[0];
    break;
  }
  default: *pi = 0; break;
  }
  return CUDA_SUCCESS;
}

static CUresult func_set_attr(CUfunction f, CUfunction_attribute a, int v) {
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  switch (a) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (v < 0 || v > rt_driver.props[0].shared_per_block_optin) return CUDA_ERROR_INVALID_VALUE;
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
  const rt_device_props *p = &rt_driver.props[0];
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

/* Clusters (docs/runtime.md "Clusters"): only clusters of one CTA run, so
 * the most co-resident clusters of a configuration are its most
 * co-resident blocks, and a larger cluster (the config's attribute, or the
 * kernel's .reqnctapercluster) is CUDA_ERROR_INVALID_CLUSTER_SIZE, as its
 * launch would be; the largest cluster size is 1. */
static CUresult config_cluster(CUfunction f, const CUlaunchConfig *c) {
  if (!c || (c->numAttrs && !c->attrs)) return CUDA_ERROR_INVALID_VALUE;
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  for (unsigned i = 0; i < c->numAttrs; i++)
    if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      const unsigned d[3] = {c->attrs[i].value.clusterDim.x, c->attrs[i].value.clusterDim.y,
                             c->attrs[i].value.clusterDim.z};
      /* cuBLAS probes cluster sizes this way at 9.0 and 10.0: a debug line */
      CUresult r = cluster_check_at(f, d, rt_debug, "occupancy query");
      if (r != CUDA_SUCCESS) return r;
    }
  return cluster_check_at(f, NULL, rt_debug, "occupancy query");
}

RT_EXPORT CUresult cuOccupancyMaxActiveClusters(int *n, CUfunction f, const CUlaunchConfig *c) {
  RT_TRACE("%p, %p, %p", (void *)n, (void *)f, (const void *)c);
  if (!n) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  CUresult r = config_cluster(f, c);
  if (r != CUDA_SUCCESS) return rt_ret(r);
  *n = blocks_per_sm((int)(c->blockDimX * c->blockDimY * c->blockDimZ), c->sharedMemBytes) *
       rt_driver.props[0].sm_count;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuOccupancyMaxPotentialClusterSize(int *n, CUfunction f, const CUlaunchConfig *c) {
  RT_TRACE("%p, %p, %p", (void *)n, (void *)f, (const void *)c);
  if (!n) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!c) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  *n = 1;
  return rt_ret(CUDA_SUCCESS);
}

RT_EXPORT CUresult cuOccupancyMaxPotentialBlockSize(int *min_grid, int *block, CUfunction f,
                                                    CUoccupancyB2DSize smem_of, size_t smem,
                                                    int limit) {
  RT_TRACE("%p, %p, %p, %p, %zu, %d", (void *)min_grid, (void *)block, (void *)f,
           (void *)(uintptr_t)smem_of, smem, limit);
  if (!min_grid || !block) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  if (!func_valid(f)) return rt_ret(CUDA_ERROR_INVALID_HANDLE);
  int best = rt_driver.props[0].max_threads_per_block;
  if (limit > 0 && limit < best) best = limit;
  best &= ~31;
  if (best == 0) best = limit > 0 ? limit : 32;
  size_t s = smem_of ? smem_of(best) : smem;
  *block = best;
  *min_grid = blocks_per_sm(best, s) * rt_driver.props[0].sm_count;
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
  *smem = (size_t)rt_driver.props[0].shared_per_block_optin;
  return rt_ret(CUDA_SUCCESS);
}

/* ---- launch ------------------------------------------------------------ */
extern rt_bstream rt_stream_backend(CUstream s, CUresult *r);

/* A kernel only a cubin defines: its launches (and graph kernel nodes)
 * fail, logged once per function. */
static CUresult sass_only_refused(CUfunction f) {
  rt_fwd_refused(f->name);
  if (!atomic_flag_test_and_set(&f->sass_logged)) {
    char lib[256];
    origin_name(f->mod->origin, lib, sizeof lib);
    /* inside a call the forwarding layer covers, the layer reports */
    RT_LOG(rt_fwd_covered() ? rt_info : rt_error, "kernel %s of %s: SASS only, no PTX: its "
           "launches fail with CUDA_ERROR_NO_BINARY_FOR_GPU", f->name, lib);
  }
  return CUDA_ERROR_NO_BINARY_FOR_GPU;
}

/* The cluster directives of f's PTX (.reqnctapercluster, .explicitcluster;
 * zeros when it has none or is SASS only). */
static ptx_kernel_cluster func_cluster(CUfunction f) {
  const struct CUmod_st *m = f->mod;
  for (uint32_t i = 0; i < m->nclusters && i < m->nkernels; i++)
    if (!strcmp(m->kernels[i], f->name)) return m->clusters[i];
  return (ptx_kernel_cluster){{0, 0, 0}, false};
}

/* Clusters (docs/runtime.md "Clusters"): a launch is a grid of 1x1x1
 * clusters, the only size ptxwave runs.  A cluster dimension of 0 is
 * CUDA_ERROR_INVALID_VALUE; a larger cluster, given at launch (cluster,
 * NULL: none) or required by the kernel's .reqnctapercluster, is
 * CUDA_ERROR_INVALID_CLUSTER_SIZE, CUDA's launch error for a cluster the
 * device cannot run ("cluster misconfiguration"), named in the log. */
static CUresult cluster_check_at(CUfunction f, const unsigned *cluster, rt_level level, const char *what) {
  if (cluster && (!cluster[0] || !cluster[1] || !cluster[2])) return CUDA_ERROR_INVALID_VALUE;
  if (cluster && (uint64_t)cluster[0] * cluster[1] * cluster[2] > 1) {
    RT_LOG((int)level, "kernel %s: %s with clusters of %ux%ux%u CTAs: ptxwave runs clusters of one CTA only",
           f->name, what, cluster[0], cluster[1], cluster[2]);
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  ptx_kernel_cluster c = func_cluster(f);
  const uint32_t *q = c.reqnctapercluster;
  if ((uint64_t)q[0] * q[1] * q[2] > 1) {
    RT_LOG((int)level, "kernel %s: its PTX requires clusters of %ux%ux%u CTAs (.reqnctapercluster%s): "
           "ptxwave runs clusters of one CTA only", f->name, q[0], q[1], q[2],
           c.explicitcluster ? ", .explicitcluster" : "");
    return CUDA_ERROR_INVALID_CLUSTER_SIZE;
  }
  return CUDA_SUCCESS;
}

static CUresult cluster_check(CUfunction f, const unsigned *cluster) {
  return cluster_check_at(f, cluster, rt_error, "launch");
}

/* The launch configuration CUDA checks before anything runs (CUDA Driver
 * API, cuLaunchKernel: CUDA_ERROR_INVALID_VALUE for a zero or too large
 * dimension and for more dynamic shared memory than the function allows). */
static CUresult launch_check(CUfunction f, const unsigned grid[3], const unsigned block[3],
                             unsigned shared) {
  const rt_device_props *p = &rt_driver.props[0];
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
    if (!ptr || !psize) return CUDA_ERROR_INVALID_VALUE;
    if (*psize >= L->size) {
      *buf = ptr;
    } else {
      /* A buffer shorter than the parameters: NCCL declares one 4 KiB
       * struct (ncclDevKernelArgsStorage<4096>) and passes only the bytes
       * it filled (144 for an AllReduce), which CUDA accepts; the rest of
       * the kernel's parameter space reads as zeros here. */
      if (L->size > small_size && !(*buf = calloc(1, L->size))) return CUDA_ERROR_OUT_OF_MEMORY;
      *owned = L->size > small_size;
      memset(*buf, 0, L->size);
      memcpy(*buf, ptr, *psize);
    }
  } else if (L->nparams) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult rt_launch_packed(CUfunction f, const unsigned grid[3], const unsigned block[3],
                          unsigned shared, CUstream hs, const void *buf, size_t size, bool coop) {
  CUresult r = rt_check_ctx();   /* a graph's later kernels after a fault in an earlier one */
  if (r != CUDA_SUCCESS) return r;
  rt_bstream bs = rt_stream_backend(hs, &r);
  if (r != CUDA_SUCCESS) return r;
  RT_LOG(rt_debug, "launch %s%s grid (%u,%u,%u) block (%u,%u,%u) shared %u, %zu bytes of params",
         coop ? "(cooperative) " : "", f->name, grid[0], grid[1], grid[2], block[0], block[1],
         block[2], shared, size);
  rt_backend *b = rt_driver.backend;
  if (coop)
    r = b->launch_cooperative(b, f->mod->bm, f->name, grid, block, shared, bs, buf, size);
  else
    r = b->launch(b, f->mod->bm, f->name, grid, block, shared, bs, buf, size);
  if (r != CUDA_SUCCESS) RT_LOG(rt_error, "kernel %s: %s", f->name, rt_driver.backend->error);
  /* A fault inside the kernel is not the launch's error: CUDA returns it
   * from the next synchronising call, and from every call after it (the
   * context's sticky error).  A backend that ran the kernel inside the
   * launch would know it here already (neither does now: the emulator
   * queues launches and reports a fault from the next synchronisation). */
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
  if (f->sass_only) return sass_only_refused(f);
  CUresult r = launch_check(f, grid, block, shared);
  if (r == CUDA_SUCCESS) r = cluster_check(f, NULL);
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

/* A cooperative launch (CUDA Driver API, cuLaunchCooperativeKernel): the
 * backend must have one (else CUDA_ERROR_NOT_SUPPORTED, named: the HIP
 * backend, docs/runtime.md "Cooperative launch"), and the grid must fit on
 * the device at once, at most cuOccupancyMaxActiveBlocksPerMultiprocessor
 * times the multiprocessor count blocks (else
 * CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE). */
static CUresult coop_check(CUfunction f, const unsigned grid[3], const unsigned block[3],
                           unsigned shared) {
  if (!rt_driver.backend->launch_cooperative) {
    RT_LOG(rt_error, "kernel %s: cooperative launch (grid.sync) is not supported on the %s "
           "backend", f->name, rt_driver.backend->name);
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  uint64_t blocks = (uint64_t)grid[0] * grid[1] * grid[2];
  uint64_t fit = (uint64_t)blocks_per_sm((int)(block[0] * block[1] * block[2]), shared) *
                 (uint64_t)rt_driver.props[0].sm_count;
  if (blocks > fit) {
    RT_LOG(rt_error, "kernel %s: cooperative grid of %llu blocks, at most %llu fit on the device "
           "at once", f->name, (unsigned long long)blocks, (unsigned long long)fit);
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  }
  return CUDA_SUCCESS;
}

static CUresult launch(CUfunction f, const unsigned grid[3], const unsigned block[3],
                       unsigned shared, CUstream hs, void **params, void **extra, bool coop,
                       const unsigned *cluster) {
  CUresult r = rt_check_ctx();
  if (r != CUDA_SUCCESS) return r;
  if (!func_valid(f)) return CUDA_ERROR_INVALID_HANDLE;
  if (f->sass_only) return sass_only_refused(f);
  r = launch_check(f, grid, block, shared);
  if (r == CUDA_SUCCESS) r = cluster_check(f, cluster);
  if (r == CUDA_SUCCESS && coop) r = coop_check(f, grid, block, shared);
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
    op.k.coop = coop;
    memcpy(op.k.grid, grid, sizeof op.k.grid);
    memcpy(op.k.block, block, sizeof op.k.block);
    op.k.buf = buf;
    op.k.size = size;
    r = rt_capture_op(hs, &op, &captured);
  }
  if (r == CUDA_SUCCESS && !captured)
    r = rt_launch_packed(f, grid, block, shared, hs, buf, size, coop);
  if (r == CUDA_SUCCESS) rt_fwd_launched();
  if (owned) free(buf);
  return r;
}

RT_EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                  unsigned by, unsigned bz, unsigned shared, CUstream s,
                                  void **params, void **extra) {
  RT_TRACE("%p, %u, %u, %u, %u, %u, %u, %u, %p, %p, %p", (void *)f, gx, gy, gz, bx, by, bz,
           shared, (void *)s, (void *)params, (void *)extra);
  const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  return rt_ret(launch(f, g, b, shared, s, params, extra, false, NULL));
}

RT_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                                    void **extra) {
  RT_TRACE("%p, %p, %p, %p", (void *)c, (void *)f, (void *)params, (void *)extra);
  if (!c) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  bool coop = false, has_cluster = false;
  unsigned cluster[3] = {1, 1, 1};
  if (c->numAttrs && !c->attrs) return rt_ret(CUDA_ERROR_INVALID_VALUE);
  for (unsigned i = 0; i < c->numAttrs; i++) {
    const CUlaunchAttribute *a = &c->attrs[i];
    if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
      has_cluster = true;
      cluster[0] = a->value.clusterDim.x;
      cluster[1] = a->value.clusterDim.y;
      cluster[2] = a->value.clusterDim.z;
    }
    if (a->id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE) coop = a->value.cooperative != 0;
  }
  const unsigned g[3] = {c->gridDimX, c->gridDimY, c->gridDimZ};
  const unsigned b[3] = {c->blockDimX, c->blockDimY, c->blockDimZ};
  return rt_ret(launch(f, g, b, c->sharedMemBytes, c->hStream, params, extra, coop, has_cluster ? cluster : NULL));
}

RT_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                                             unsigned bx, unsigned by, unsigned bz,
                                             unsigned shared, CUstream s, void **params) {
  RT_TRACE("%p, %u, %u, %u, %u, %u, %u, %u, %p, %p", (void *)f, gx, gy, gz, bx, by, bz, shared,
           (void *)s, (void *)params);
  const unsigned g[3] = {gx, gy, gz}, b[3] = {bx, by, bz};
  return rt_ret(launch(f, g, b, shared, s, params, NULL, true, NULL));
}
