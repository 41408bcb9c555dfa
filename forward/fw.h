/* forward/fw.h: the forwarding layer (libptxwave_forward.so), ptxwave's
 * library in front of NVIDIA's (docs/runtime.md "The forwarding layer").
 *
 * `ptxwave run` preloads it.  It defines some of cuBLAS's, cuBLASLt's and
 * cuDNN's entry points; each calls the real one (the next definition in
 * the process, fw_real) and, only when that call met a kernel NVIDIA ships
 * as SASS only (the driver's counts, runtime/rt_forward.h), computes the
 * operation itself with kernels of ptxwave's own (fw_gemm.cu), loaded from
 * PTX through the driver API like any program's.  Every other call, and
 * every call under a driver that is not ptxwave's, goes through untouched.
 *
 * fw_core.c: the driver, the real symbols, the decision, the kernels;
 * fw_blas.c (cuBLAS), fw_lt.c (cuBLASLt), fw_dnn.c (cuDNN): the entry points.
 */
#ifndef PW_FW_H
#define PW_FW_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

#include "forward/fw_gemm.h"
#include "runtime/rt_forward.h"

#define FW_EXPORT __attribute__((visibility("default")))

/* ---- fw_core.c ----------------------------------------------------------- */
typedef enum fw_level { fw_error, fw_warn, fw_info, fw_debug } fw_level;
/* A line in the driver's log (PTXWAVE_LOG), "forward: " prefixed. */
void fw_log(fw_level l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The definition of `name` after ours: the library's own.  RTLD_NEXT finds
 * it in libraries of the global scope; a library loaded RTLD_LOCAL (whose
 * callers still bind to us, preloaded first) is found by its soname. */
void *fw_real(const char *name, const char *soname);
/* Declares `var` pointing at the library's `name`, resolved once. */
#define FW_SYM(var, name, soname)                                               \
  static __typeof__(name) *var##_once;                                          \
  __typeof__(name) *var = __atomic_load_n(&var##_once, __ATOMIC_ACQUIRE);       \
  if (!var) {                                                                   \
    var = (__typeof__(name) *)fw_real(#name, soname);                           \
    __atomic_store_n(&var##_once, var, __ATOMIC_RELEASE);                       \
  }
#define FW_REAL(name, soname) FW_SYM(real, name, soname)

/* One interposed call.  fw_enter before the real call, fw_refused after:
 * the outermost interposed call of a thread (a library's call into another
 * interposed entry point, cuBLAS into cublasLtMatmul, is the outer call's
 * business) that met a SASS-only kernel.  fw_may_take then decides whether
 * the result can be recomputed from the operands (below). */
typedef struct fw_call {
  const char *name;
  bool active;                  /* outermost, under ptxwave's driver */
  rt_fwd_counts before, after;
} fw_call;
void fw_enter(fw_call *c, const char *name);
bool fw_refused(fw_call *c);
/* The call ran or captured other device work besides the refused launch
 * (launches, memsets, copies): it may have written its output.  Taking
 * over is sound unless the operation also reads that output (beta != 0 on
 * a C that is D), which the work may have changed: then the library's
 * error stands, logged.  Logs the decision. */
bool fw_may_take(fw_call *c, bool reads_output);
/* Logs that the call met a SASS-only kernel and the layer does not cover
 * it (why), so the library's error stands. */
void fw_decline(const fw_call *c, const char *why);

/* The accumulator of a GEMM: the kernel that runs it. */
typedef enum fw_acc { fw_acc_f32, fw_acc_f64, fw_acc_f16 } fw_acc;
/* Runs D = alpha op(A) op(B) + beta C (+ bias, relu) on stream s with the
 * layer's own kernel (fw_gemm.cu), in the current context. */
CUresult fw_gemm(const fw_gemm_args *g, fw_acc acc, CUstream s);
/* Bytes of an element type (fw_r_*), 0 for one the kernels do not know. */
int fw_type_size(int type);
/* The offset, in elements, from a BLAS vector's pointer to its element 0:
 * with a negative increment the vector runs backwards from the end
 * (BLAS: x(1 + (n - i) * |inc|)). */
static inline long long fw_vec_base(long long n, long long inc) {
  return inc < 0 ? (n - 1) * -inc : 0;
}

/* ---- fw_blas.c: shared with fw_lt.c and fw_dnn.c ------------------------ */
/* A cublasComputeType_t the kernels run: their accumulator and the type of
 * alpha and beta; false for one they do not (the integer ones). */
bool fw_compute_type(int compute, fw_acc *acc, int *scale);
/* A host scalar of type fw_r_16f, _32f or _64f, as a double (exact). */
double fw_host_scalar(const void *p, int type);
/* Whether the kernels read and write these element types with accumulator
 * acc (any mix of f16, bf16, f32, f64; with an f16 accumulator only f16). */
bool fw_types_ok(fw_acc acc, const int *types, int n);

#endif
