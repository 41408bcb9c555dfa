/* runtime/rt.h: the driver API layer's internals (libcuda.so.1).
 *
 * Exports keep CUDA's names; everything internal is rt_.  The layer owns
 * every CUDA handle (contexts, modules, functions, streams, events) as a
 * struct of its own, checks them, and forwards device work to one backend
 * (rt_backend.h), chosen at cuInit: PTXWAVE_BACKEND=auto|hip|emu.
 *
 * Every entry point returns a CUresult and never aborts the host program.
 * With PTXWAVE_LOG=trace each implemented entry point logs its arguments
 * and its result (RT_TRACE / rt_ret).
 */
#ifndef PW_RT_H
#define PW_RT_H

#include <cuda.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/rt_backend.h"

#define RT_EXPORT __attribute__((visibility("default")))

/* ---- rt_log.c --------------------------------------------------------- */
typedef enum rt_level { rt_error, rt_warn, rt_info, rt_debug, rt_trace } rt_level;
extern int rt_log_level;   /* PTXWAVE_LOG, read once; default warn */
void rt_log_init(void);
void rt_log(rt_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define RT_LOG(l, ...) ((l) <= rt_log_level ? rt_log((l), __VA_ARGS__) : (void)0)
#define RT_TRACE(fmt, ...) RT_LOG(rt_trace, "%s(" fmt ")", __func__, ##__VA_ARGS__)
CUresult rt_ret_(const char *fn, CUresult r);
#define rt_ret(r) rt_ret_(__func__, (r))
const char *rt_error_name(CUresult r);

/* ---- rt_device.c: devices, contexts ----------------------------------- */
typedef struct rt_cls {         /* context-local storage (export table) */
  void *key, *value;
  void (*dtor)(CUcontext, void *, void *);
} rt_cls;

struct CUctx_st {
  uint32_t magic;
  int device;
  bool primary;
  int refs;                     /* primary: retain count */
  unsigned flags;
  rt_cls cls[16];
  int ncls;
};

typedef struct rt_state {
  pthread_mutex_t lock;
  bool initialized;
  CUresult init_result;
  rt_backend *backend;
  int ndev;
  rt_device_props props[16];
  struct CUctx_st primary[16];
  int cc_major, cc_minor;       /* PTXWAVE_CC, default 8.0 */
} rt_state;
extern rt_state rt;

#define RT_CTX_MAGIC 0x43747821u
/* CUDA_ERROR_NOT_INITIALIZED unless cuInit succeeded. */
CUresult rt_check_init(void);
/* The current context (pushing the primary context of device 0 if none
 * is current, as cudart expects after cuDevicePrimaryCtxRetain). */
CUcontext rt_current_ctx(void);
CUresult rt_check_device(CUdevice d);

/* ---- rt_module.c ------------------------------------------------------ */
struct CUmod_st;
struct CUfunc_st;
/* Loads a fatbin container, fatbin wrapper, or PTX text (NUL-terminated). */
CUresult rt_module_load_image(const void *image, struct CUmod_st **out);

/* ---- rt_array.c: CUDA arrays ------------------------------------------ */
typedef struct rt_array_info {
  CUDA_ARRAY3D_DESCRIPTOR desc;
  uint64_t base;                /* device address of element (0,0,0) */
  size_t pitch, slice;          /* bytes per row, per slice (layer) */
} rt_array_info;
/* False if a is not an array. */
bool rt_array_get(CUarray a, rt_array_info *out);
/* Bytes per channel of a format, 0 for formats we do not support. */
unsigned rt_format_bytes(CUarray_format f);
/* cuMemcpy2D with an array on either side. */
rt_bstream rt_stream_backend(CUstream s, CUresult *r);   /* rt_memory.c */
CUresult rt_copy2d_array(const CUDA_MEMCPY2D *c, CUstream s, bool async);

/* ---- rt_ir.c ---------------------------------------------------------- */
#include "ir/ir.h"
/* A launch of a kernel the code object lacks: true when m (module `name`)
 * has that kernel, which the compile then left out (cg_compile_ptx), with a
 * message naming the instruction, the function, the line and the target
 * where an opaque instruction explains it. */
bool rt_ir_left_out(const ir_module *m, const char *name, const char *kernel, const char *target, char *err,
                    size_t cap);

/* ---- rt_export.c ------------------------------------------------------ */
/* The HMAC-MD2 of CUDA's integrity check (docs/runtime.md), exposed for
 * the unit test. */
void rt_md2(const uint8_t *data, size_t len, uint8_t out[16]);

#endif
