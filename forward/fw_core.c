/* forward/fw_core.c: what every entry point of the forwarding layer shares
 * (fw.h): the driver it runs on, the library's own definitions, the
 * decision to take a call over, and the layer's kernels.
 *
 * The driver is whichever libcuda.so.1 the process loaded (cudart has, by
 * the time a library call arrives).  The layer is active only when that
 * driver hands out ptxwave's private table (runtime/rt_forward.h) and
 * PTXWAVE_FORWARD is not "off"; otherwise every entry point is a plain
 * call of the library's own.
 *
 * The kernels are the PTX of fw_gemm.cu, embedded at build time
 * (fw_gemm_ptx.h), loaded with cuModuleLoadData once per context and
 * launched with cuLaunchKernel on the library call's stream: the same JIT
 * path as a program's own PTX, on the emulator and on AMD GPUs alike.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/fw.h"
#include "forward/fw_gemm_ptx.h"

_Static_assert(sizeof(fw_gemm_args) == 224, "fw_gemm_args: the kernels' .param is 224 bytes");

typedef struct fw_driver {
  bool ok;                      /* ptxwave's driver, the layer on */
  rt_fwd_counts_fn counts;
  rt_fwd_vlog_fn vlog;
  rt_fwd_covered_fn covered;
  CUresult (*ctx_get_current)(CUcontext *);
  CUresult (*module_load_data)(CUmodule *, const void *);
  CUresult (*module_get_function)(CUfunction *, CUmodule, const char *);
  CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                     unsigned, CUstream, void **, void **);
  CUresult (*error_name)(CUresult, const char **);
} fw_driver;

/* Set once (pthread_once), read-only afterwards. */
static fw_driver drv;
static pthread_once_t drv_once = PTHREAD_ONCE_INIT;

static void drv_init(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (!h) h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) return;
  CUresult (*export_table)(const void **, const CUuuid *) =
      (CUresult(*)(const void **, const CUuuid *))dlsym(h, "cuGetExportTable");
  const CUuuid id = {.bytes = RT_FORWARD_UUID};
  void *const *t = NULL;
  if (!export_table || export_table((const void **)&t, &id) != CUDA_SUCCESS || !t ||
      (uintptr_t)t[rt_fwd_slot_size] < rt_fwd_slots * sizeof(void *))
    return;   /* not ptxwave's driver: forward everything */
  drv.counts = (rt_fwd_counts_fn)t[rt_fwd_slot_counts];
  drv.vlog = (rt_fwd_vlog_fn)t[rt_fwd_slot_vlog];
  drv.covered = (rt_fwd_covered_fn)t[rt_fwd_slot_covered];
  drv.ctx_get_current = (CUresult(*)(CUcontext *))dlsym(h, "cuCtxGetCurrent");
  drv.module_load_data = (CUresult(*)(CUmodule *, const void *))dlsym(h, "cuModuleLoadData");
  drv.module_get_function =
      (CUresult(*)(CUfunction *, CUmodule, const char *))dlsym(h, "cuModuleGetFunction");
  drv.launch = (__typeof__(drv.launch))dlsym(h, "cuLaunchKernel");
  drv.error_name = (CUresult(*)(CUresult, const char **))dlsym(h, "cuGetErrorName");
  const char *off = getenv("PTXWAVE_FORWARD");
  if (off && !strcmp(off, "off")) {
    fw_log(fw_info, "PTXWAVE_FORWARD=off: every call goes to NVIDIA's library untouched");
    return;
  }
  drv.ok = drv.counts && drv.covered && drv.ctx_get_current && drv.module_load_data &&
           drv.module_get_function && drv.launch && drv.error_name;
}

/* The driver's vlog takes a va_list: this makes one for a finished line. */
static void vlog_line(int level, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  drv.vlog(level, fmt, ap);
  va_end(ap);
}

void fw_log(fw_level l, const char *fmt, ...) {
  if (!drv.vlog) return;
  char buf[1280];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  vlog_line((int)l, "forward: %s", buf);
}

void *fw_real(const char *name, const char *soname) {
  void *p = dlsym(RTLD_NEXT, name);
  if (p) return p;
  void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
  if (!h) return NULL;
  p = dlsym(h, name);
  dlclose(h);   /* NOLOAD took a reference of the loaded library: give it back */
  return p;
}

/* ---- the decision -------------------------------------------------------- */
/* Interposed calls in progress on this thread: only the outermost decides. */
static __thread int depth;

void fw_enter(fw_call *c, const char *name) {
  c->name = name;
  c->active = false;
  if (depth++ > 0) return;
  pthread_once(&drv_once, drv_init);
  if (drv.ok) c->active = drv.counts(&c->before, sizeof c->before) == CUDA_SUCCESS;
  if (c->active) drv.covered(1);
}

bool fw_refused(fw_call *c) {
  depth--;
  if (c->active) drv.covered(0);
  if (!c->active || drv.counts(&c->after, sizeof c->after) != CUDA_SUCCESS) return false;
  return c->after.sass_refused > c->before.sass_refused;
}

bool fw_may_take(fw_call *c, bool reads_output) {
  unsigned long long launches = c->after.launches - c->before.launches;
  unsigned long long ops = c->after.mem_ops - c->before.mem_ops;
  if ((launches || ops) && reads_output) {
    fw_log(fw_warn, "%s: not taken over: the library's kernel %s is SASS only, and the call also ran "
           "%llu launches and %llu memory operations, which may have changed the output it "
           "reads (beta != 0): the library's error stands", c->name, c->after.last_refused,
           launches, ops);
    return false;
  }
  fw_log(fw_info, "%s: taken over (the library's kernel %s is SASS only; the call also ran "
         "%llu launches, %llu memory operations)", c->name, c->after.last_refused, launches, ops);
  return true;
}

void fw_decline(const fw_call *c, const char *why) {
  fw_log(fw_warn, "%s: not taken over (the library's kernel %s is SASS only): %s", c->name,
         c->after.last_refused, why);
}

/* ---- the kernels --------------------------------------------------------- */
/* The layer's module in each context that used it, by the context's handle
 * (libraries run in cudart's primary contexts, which live as long as the
 * process; a context destroyed and another made at its address would find
 * the old entry: a limit, docs/runtime.md). */
typedef struct fw_module {
  CUcontext ctx;
  CUmodule mod;
  CUfunction fn[3];             /* by fw_acc */
} fw_module;

static pthread_mutex_t mods_lock = PTHREAD_MUTEX_INITIALIZER;
static fw_module mods[16];
static unsigned nmods;

static const char *const kernel_names[] = {
    [fw_acc_f32] = "fw_gemm_f32", [fw_acc_f64] = "fw_gemm_f64", [fw_acc_f16] = "fw_gemm_f16"};

static CUresult load(CUcontext ctx, fw_module *m) {
  CUresult r = drv.module_load_data(&m->mod, fw_gemm_ptx);
  for (int i = 0; r == CUDA_SUCCESS && i < 3; i++)
    r = drv.module_get_function(&m->fn[i], m->mod, kernel_names[i]);
  if (r == CUDA_SUCCESS) m->ctx = ctx;
  return r;
}

static CUresult kernel(fw_acc acc, CUfunction *f) {
  CUcontext ctx = NULL;
  CUresult r = drv.ctx_get_current(&ctx);
  if (r != CUDA_SUCCESS) return r;
  if (!ctx) return CUDA_ERROR_INVALID_CONTEXT;
  pthread_mutex_lock(&mods_lock);
  fw_module *m = NULL;
  for (unsigned i = 0; i < nmods && !m; i++)
    if (mods[i].ctx == ctx) m = &mods[i];
  if (!m) {
    m = &mods[nmods < 16 ? nmods++ : 15];   /* past 16 contexts the last slot is reloaded */
    r = load(ctx, m);
  }
  if (r == CUDA_SUCCESS) *f = m->fn[acc];
  pthread_mutex_unlock(&mods_lock);
  return r;
}

int fw_type_size(int type) {
  switch (type) {
  case fw_r_32f: return 4;
  case fw_r_64f: return 8;
  case fw_r_16f:
  case fw_r_16bf: return 2;
  }
  return 0;
}

CUresult fw_gemm(const fw_gemm_args *g, fw_acc acc, CUstream s) {
  if (g->m <= 0 || g->n <= 0 || g->batch <= 0) return CUDA_SUCCESS;
  CUfunction f;
  CUresult r = kernel(acc, &f);
  if (r != CUDA_SUCCESS) {
    const char *e = "?";
    drv.error_name(r, &e);
    fw_log(fw_error, "the layer's kernel %s does not load: %s", kernel_names[acc], e);
    return r;
  }
  /* one thread per element of D, whole warps, the grid's y over the batch
   * (the kernel strides over what a grid this size does not cover) */
  long long mn = (long long)g->m * g->n;
  unsigned block = mn >= 256 ? 256 : (unsigned)((mn + 31) & ~31LL);
  long long gx = (mn + block - 1) / block;
  unsigned grid_x = gx > 65535 ? 65535 : (unsigned)gx;
  unsigned grid_y = g->batch > 65535 ? 65535 : (unsigned)g->batch;
  fw_gemm_args a = *g;
  void *params[] = {&a};
  r = drv.launch(f, grid_x, grid_y, 1, block, 1, 1, 0, s, params, NULL);
  if (r != CUDA_SUCCESS) {
    const char *e = "?";
    drv.error_name(r, &e);
    fw_log(fw_error, "launch of %s failed: %s", kernel_names[acc], e);
  }
  return r;
}
