/* forward/fw_blas.c: the cuBLAS entry points of the forwarding layer
 * (fw_blas.def lists them).  Each calls cuBLAS's own; when that call met a
 * SASS-only kernel (fw_refused), the operation is described in BLAS terms
 * (blas_op) and run by the layer's GEMM kernel with the handle's state:
 * its stream (cublasGetStream) and pointer mode (cublasGetPointerMode:
 * alpha and beta read on the host, or handed to the kernel as device
 * pointers).  The math mode needs nothing: the kernels compute in the
 * compute type's full precision, which every mode allows (TF32 and the
 * FAST_* types permit less, never require it), and they are deterministic,
 * as CUBLAS_PEDANTIC_MATH and the atomics mode ask.
 *
 * Transposes: for real types CUBLAS_OP_C is CUBLAS_OP_T and
 * CUBLAS_OP_CONJG is CUBLAS_OP_N (cuBLAS documentation, cublasOperation_t).
 */
#include <limits.h>
#include <string.h>

#include <cublas_v2.h>

#include "forward/fw.h"

#define BLAS_SO "libcublas.so.13"

/* __half as the H routines take it (a 16-bit struct); cuda_fp16.h gives
 * C no __half, and cublas_api.h declares those routines for C++ only. */
typedef struct fw_half {
  uint16_t bits;
} fw_half;

/* One GEMM or GEMV as the call gave it (column major, BLAS's names). */
typedef struct blas_op {
  cublasHandle_t h;
  bool gemv;                    /* A is m x n, B is x (incx: ldb), C is y (incy: ldc) */
  cublasOperation_t ta, tb;
  int64_t m, n, k;
  const void *alpha, *beta;
  const void *A, *B;
  void *C;
  int64_t lda, ldb, ldc;
  long long sa, sb, sc;         /* batch strides, elements */
  int64_t batch;
  bool ptr_array;
  int at, bt, ct;               /* cudaDataType */
  int compute;                  /* cublasComputeType_t */
} blas_op;

/* The compute types the kernels run: their accumulator and the type of
 * alpha and beta (cuBLAS documentation, cublasComputeType_t: a 16F compute
 * type scales in half, 32F ones in float, 64F ones in double). */
bool fw_compute_type(int compute, fw_acc *acc, int *scale) {
  switch ((cublasComputeType_t)compute) {
  case CUBLAS_COMPUTE_16F:
  case CUBLAS_COMPUTE_16F_PEDANTIC: *acc = fw_acc_f16; *scale = fw_r_16f; return true;
  case CUBLAS_COMPUTE_32F:
  case CUBLAS_COMPUTE_32F_PEDANTIC:
  case CUBLAS_COMPUTE_32F_FAST_16F:
  case CUBLAS_COMPUTE_32F_FAST_16BF:
  case CUBLAS_COMPUTE_32F_FAST_TF32:
  case CUBLAS_COMPUTE_32F_EMULATED_16BFX9: *acc = fw_acc_f32; *scale = fw_r_32f; return true;
  case CUBLAS_COMPUTE_64F:
  case CUBLAS_COMPUTE_64F_PEDANTIC:
  case CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT: *acc = fw_acc_f64; *scale = fw_r_64f; return true;
  case CUBLAS_COMPUTE_32I:
  case CUBLAS_COMPUTE_32I_PEDANTIC: return false;
  }
  return false;
}

/* IEEE binary16 to double (a host-side alpha or beta of a 16F compute). */
static double half_to_double(uint16_t h) {
  int e = (h >> 10) & 31, f = h & 1023;
  double v = e == 0 ? f * 0x1p-24 : e == 31 ? (f ? __builtin_nan("") : __builtin_inf())
                                            : (1024 + f) * 0x1p-25 * (double)(1 << e);
  return h & 0x8000 ? -v : v;
}

double fw_host_scalar(const void *p, int type) {
  switch (type) {
  case fw_r_32f: return *(const float *)p;
  case fw_r_64f: return *(const double *)p;
  case fw_r_16f: {
    uint16_t h;
    memcpy(&h, p, 2);
    return half_to_double(h);
  }
  }
  return 0;
}

/* The layer's kernels read any mix of these; an f16 accumulator only f16. */
bool fw_types_ok(fw_acc acc, const int *types, int n) {
  for (int i = 0; i < n; i++)
    if (!fw_type_size(types[i]) || (acc == fw_acc_f16 && types[i] != fw_r_16f)) return false;
  return true;
}

static bool transposed(cublasOperation_t op) {
  return op == CUBLAS_OP_T || op == CUBLAS_OP_C;
}

static cublasStatus_t refuse(fw_call *c, cublasStatus_t lib, const char *why) {
  fw_decline(c, why);
  return lib;
}

/* The handle's stream and pointer mode, from cuBLAS itself. */
static bool handle_state(cublasHandle_t h, cudaStream_t *s, cublasPointerMode_t *pm) {
  FW_SYM(get_stream, cublasGetStream_v2, BLAS_SO);
  FW_SYM(get_mode, cublasGetPointerMode_v2, BLAS_SO);
  return get_stream && get_mode && get_stream(h, s) == CUBLAS_STATUS_SUCCESS &&
         get_mode(h, pm) == CUBLAS_STATUS_SUCCESS;
}

static cublasStatus_t take(fw_call *c, const blas_op *o, cublasStatus_t lib) {
  fw_acc acc;
  int scale;
  if (!fw_compute_type(o->compute, &acc, &scale)) return refuse(c, lib, "compute type not covered");
  const int types[] = {o->at, o->bt, o->ct};
  if (!fw_types_ok(acc, types, 3)) return refuse(c, lib, "data types not covered");
  if (o->m > INT_MAX || o->n > INT_MAX || o->k > INT_MAX || o->batch > INT_MAX)
    return refuse(c, lib, "a size above 2^31 - 1");
  cudaStream_t s = NULL;
  cublasPointerMode_t pm = CUBLAS_POINTER_MODE_HOST;
  if (!handle_state(o->h, &s, &pm)) return refuse(c, lib, "the handle's state is unknown");

  fw_gemm_args g = {.a_type = o->at, .b_type = o->bt, .c_type = o->ct, .d_type = o->ct,
                    .bias_type = o->ct, .scale_type = scale, .batch = (int)o->batch,
                    .ptr_array = o->ptr_array};
  const char *A = o->A, *B = o->B;
  char *C = o->C;
  if (o->gemv) {
    /* y = alpha op(A) x + beta y: D is m' x 1, x is k' x 1 */
    bool t = transposed(o->ta);
    int64_t rows = t ? o->n : o->m, len = t ? o->m : o->n;
    if (o->ptr_array && (o->ldb < 0 || o->ldc < 0))
      return refuse(c, lib, "negative increments with arrays of pointers");
    if (!o->ptr_array) {
      B += fw_vec_base(len, o->ldb) * fw_type_size(o->bt);
      C += fw_vec_base(rows, o->ldc) * fw_type_size(o->ct);
    }
    g.m = (int)rows, g.n = 1, g.k = (int)len;
    g.a_r = t ? o->lda : 1, g.a_c = t ? 1 : o->lda;
    g.b_r = o->ldb, g.b_c = 0;
    g.c_r = o->ldc, g.c_c = 0;
  } else {
    g.m = (int)o->m, g.n = (int)o->n, g.k = (int)o->k;
    g.a_r = transposed(o->ta) ? o->lda : 1, g.a_c = transposed(o->ta) ? 1 : o->lda;
    g.b_r = transposed(o->tb) ? o->ldb : 1, g.b_c = transposed(o->tb) ? 1 : o->ldb;
    g.c_r = 1, g.c_c = o->ldc;
  }
  g.a = A, g.b = B, g.c = C, g.d = C;
  g.a_q = o->sa, g.b_q = o->sb, g.c_q = o->sc;
  g.d_r = g.c_r, g.d_c = g.c_c, g.d_q = g.c_q;
  bool reads_output = true;
  if (pm == CUBLAS_POINTER_MODE_DEVICE) {
    g.alpha_p = o->alpha, g.beta_p = o->beta;
  } else {
    g.alpha = fw_host_scalar(o->alpha, scale);
    g.beta = fw_host_scalar(o->beta, scale);
    reads_output = g.beta != 0;
  }
  if (!fw_may_take(c, reads_output)) return lib;
  return fw_gemm(&g, acc, (CUstream)s) == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : lib;
}

/* An entry point: the library's call, then the layer if it met SASS only. */
#define FW_ENTRY(name, params, args, describe) \
  FW_EXPORT cublasStatus_t name params {       \
    FW_REAL(name, BLAS_SO);                    \
    if (!real) return CUBLAS_STATUS_NOT_INITIALIZED; \
    fw_call c;                                 \
    fw_enter(&c, #name);                       \
    cublasStatus_t r = real args;              \
    if (!fw_refused(&c)) return r;             \
    blas_op o = describe;                      \
    return take(&c, &o, r);                    \
  }

#define GEMM_PARAMS(T, I) \
  cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, I m, I n, I k, const T *alpha
#define GEMM_OP(CT) \
  .h = h, .ta = ta, .tb = tb, .m = m, .n = n, .k = k, .alpha = alpha, .beta = beta, \
  .lda = lda, .ldb = ldb, .ldc = ldc, .compute = CT

#define FW_GEMM(name, T, type, compute, I)                                                    \
  FW_ENTRY(name,                                                                              \
           (GEMM_PARAMS(T, I), const T *A, I lda, const T *B, I ldb, const T *beta, T *C,    \
            I ldc),                                                                           \
           (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc),                         \
           ((blas_op){GEMM_OP(compute), .A = A, .B = B, .C = C, .batch = 1, .at = type, \
                      .bt = type, .ct = type}))
#define FW_GEMM_BATCHED(name, T, type, compute, I)                                          \
  FW_ENTRY(name,                                                                            \
           (GEMM_PARAMS(T, I), const T *const A[], I lda, const T *const B[], I ldb,       \
            const T *beta, T *const C[], I ldc, I batch),                                   \
           (h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, batch),                \
           ((blas_op){GEMM_OP(compute), .A = A, .B = B, .C = (void *)C,               \
                      .batch = batch, .ptr_array = true, .at = type, .bt = type, .ct = type}))
#define FW_GEMM_STRIDED(name, T, type, compute, I)                                          \
  FW_ENTRY(name,                                                                            \
           (GEMM_PARAMS(T, I), const T *A, I lda, long long sa, const T *B, I ldb,         \
            long long sb, const T *beta, T *C, I ldc, long long sc, I batch),               \
           (h, ta, tb, m, n, k, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch),    \
           ((blas_op){GEMM_OP(compute), .A = A, .B = B, .C = C, .sa = sa, .sb = sb,   \
                      .sc = sc, .batch = batch, .at = type, .bt = type, .ct = type}))

#define GEMV_PARAMS(T, I) cublasHandle_t h, cublasOperation_t ta, I m, I n, const T *alpha
#define GEMV_OP(TY, CT) \
  .h = h, .gemv = true, .ta = ta, .m = m, .n = n, .alpha = alpha, .beta = beta, .lda = lda, \
  .ldb = incx, .ldc = incy, .at = TY, .bt = TY, .ct = TY, .compute = CT

#define FW_GEMV(name, T, type, compute, I)                                                  \
  FW_ENTRY(name,                                                                            \
           (GEMV_PARAMS(T, I), const T *A, I lda, const T *x, I incx, const T *beta, T *y,  \
            I incy),                                                                        \
           (h, ta, m, n, alpha, A, lda, x, incx, beta, y, incy),                            \
           ((blas_op){GEMV_OP(type, compute), .A = A, .B = x, .C = y, .batch = 1}))
#define FW_GEMV_BATCHED(name, T, type, compute, I)                                          \
  FW_ENTRY(name,                                                                            \
           (GEMV_PARAMS(T, I), const T *const A[], I lda, const T *const x[], I incx,       \
            const T *beta, T *const y[], I incy, I batch),                                  \
           (h, ta, m, n, alpha, A, lda, x, incx, beta, y, incy, batch),                     \
           ((blas_op){GEMV_OP(type, compute), .A = A, .B = x, .C = (void *)y,               \
                      .batch = batch, .ptr_array = true}))
#define FW_GEMV_STRIDED(name, T, type, compute, I)                                          \
  FW_ENTRY(name,                                                                            \
           (GEMV_PARAMS(T, I), const T *A, I lda, long long sa, const T *x, I incx,         \
            long long sx, const T *beta, T *y, I incy, long long sy, I batch),              \
           (h, ta, m, n, alpha, A, lda, sa, x, incx, sx, beta, y, incy, sy, batch),         \
           ((blas_op){GEMV_OP(type, compute), .A = A, .B = x, .C = y, .sa = sa, .sb = sx,   \
                      .sc = sy, .batch = batch}))

#define EX_OP .at = at, .bt = bt, .ct = ct
#define FW_GEMM_EX(name, I)                                                                 \
  FW_ENTRY(name,                                                                            \
           (GEMM_PARAMS(void, I), const void *A, cudaDataType at, I lda, const void *B,     \
            cudaDataType bt, I ldb, const void *beta, void *C, cudaDataType ct, I ldc,      \
            cublasComputeType_t compute, cublasGemmAlgo_t algo),                            \
           (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, compute,   \
            algo),                                                                          \
           ((blas_op){GEMM_OP(compute), EX_OP, .A = A, .B = B, .C = C, .batch = 1}))
#define FW_GEMM_BATCHED_EX(name, I)                                                         \
  FW_ENTRY(name,                                                                            \
           (GEMM_PARAMS(void, I), const void *const A[], cudaDataType at, I lda,            \
            const void *const B[], cudaDataType bt, I ldb, const void *beta,                \
            void *const C[], cudaDataType ct, I ldc, I batch, cublasComputeType_t compute,  \
            cublasGemmAlgo_t algo),                                                         \
           (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc, batch,     \
            compute, algo),                                                                 \
           ((blas_op){GEMM_OP(compute), EX_OP, .A = A, .B = B, .C = (void *)C,           \
                      .batch = batch, .ptr_array = true}))
#define FW_GEMM_STRIDED_EX(name, I)                                                         \
  FW_ENTRY(name,                                                                            \
           (GEMM_PARAMS(void, I), const void *A, cudaDataType at, I lda, long long sa,      \
            const void *B, cudaDataType bt, I ldb, long long sb, const void *beta, void *C, \
            cudaDataType ct, I ldc, long long sc, I batch, cublasComputeType_t compute,     \
            cublasGemmAlgo_t algo),                                                         \
           (h, ta, tb, m, n, k, alpha, A, at, lda, sa, B, bt, ldb, sb, beta, C, ct, ldc,    \
            sc, batch, compute, algo),                                                      \
           ((blas_op){GEMM_OP(compute), EX_OP, .A = A, .B = B, .C = C, .sa = sa,         \
                      .sb = sb, .sc = sc, .batch = batch}))
#define FW_SGEMM_EX(name, I)                                                                \
  FW_ENTRY(name,                                                                            \
           (GEMM_PARAMS(float, I), const void *A, cudaDataType at, I lda, const void *B,    \
            cudaDataType bt, I ldb, const float *beta, void *C, cudaDataType ct, I ldc),    \
           (h, ta, tb, m, n, k, alpha, A, at, lda, B, bt, ldb, beta, C, ct, ldc),           \
           ((blas_op){GEMM_OP(CUBLAS_COMPUTE_32F), EX_OP,                                 \
                      .A = A, .B = B, .C = C, .batch = 1}))

#include "forward/fw_blas.def"
