/* forward/fw_lt.c: cublasLtMatmul in the forwarding layer.
 *
 *   D = epilogue(alpha op(A) op(B) + beta C)      (cuBLASLt documentation)
 *
 * The call goes to cuBLASLt first; when it met a SASS-only kernel, the
 * operation is read back from its descriptors (cublasLtMatmulDescGetAttribute,
 * cublasLtMatrixLayoutGetAttribute: the library's own record of them) and
 * run by the layer's GEMM kernel on the call's stream.  Covered: the
 * column- and row-major orders, transposes of A and B, leading dimensions,
 * strided batches (a batch count of 1 broadcasts), f16/bf16/f32/f64 data
 * in any mix the library accepted, the 16F/32F/64F compute types with their
 * scale type, host and device pointer modes, and the epilogues DEFAULT,
 * RELU, BIAS and RELU_BIAS (a bias of BIAS_DATA_TYPE, by default D's type,
 * one element per row of D, with its batch stride; added after scaling,
 * before the ReLU).  Anything else (GELU and the AUX/gradient epilogues,
 * vector pointer modes, fp8 scale and amax pointers, the tiled orders,
 * pointer-array batches, planar complex) leaves the library's error
 * standing, with a log line saying which.
 */
#include <string.h>

#include <cublasLt.h>

#include "forward/fw.h"

#define LT_SO "libcublasLt.so.13"

/* One attribute of a descriptor, read into `out` (size bytes), or false. */
static bool desc_get(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, void *out,
                     size_t size) {
  FW_REAL(cublasLtMatmulDescGetAttribute, LT_SO);
  size_t written = 0;
  return real && real(d, a, out, size, &written) == CUBLAS_STATUS_SUCCESS && written == size;
}

static bool layout_get(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, void *out,
                       size_t size) {
  FW_REAL(cublasLtMatrixLayoutGetAttribute, LT_SO);
  size_t written = 0;
  return real && real(l, a, out, size, &written) == CUBLAS_STATUS_SUCCESS && written == size;
}

/* A matrix layout: element (r, c) of batch q at r * rs + c * cs + q * qs. */
typedef struct lt_matrix {
  int type;
  uint64_t rows, cols;
  long long rs, cs, qs;
  int batch;
} lt_matrix;

static const char *layout(cublasLtMatrixLayout_t l, lt_matrix *m) {
  uint32_t type = 0, mode = 0;
  int32_t order = 0, batch = 1;
  int64_t ld = 0, stride = 0, plane = 0;
  if (!layout_get(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, 4) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, 4) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &m->rows, 8) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_COLS, &m->cols, 8) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_LD, &ld, 8) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, 4) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, 8) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_PLANE_OFFSET, &plane, 8) ||
      !layout_get(l, CUBLASLT_MATRIX_LAYOUT_BATCH_MODE, &mode, 4))
    return "a matrix layout does not read back";
  if (plane) return "planar complex layouts are not covered";
  if (mode != CUBLASLT_BATCH_MODE_STRIDED) return "pointer-array batches are not covered";
  if (order != CUBLASLT_ORDER_COL && order != CUBLASLT_ORDER_ROW)
    return "tiled memory orders (COL32 ...) are not covered";
  m->type = (int)type;
  m->rs = order == CUBLASLT_ORDER_COL ? 1 : ld;
  m->cs = order == CUBLASLT_ORDER_COL ? ld : 1;
  m->batch = batch;
  m->qs = batch > 1 ? stride : 0;
  return NULL;
}

/* The epilogues the kernel has: bias, relu, both, none. */
static bool epilogue(uint32_t e, bool *bias, bool *relu) {
  switch ((cublasLtEpilogue_t)e) {
  case CUBLASLT_EPILOGUE_DEFAULT: *bias = false, *relu = false; return true;
  case CUBLASLT_EPILOGUE_RELU: *bias = false, *relu = true; return true;
  case CUBLASLT_EPILOGUE_BIAS: *bias = true, *relu = false; return true;
  case CUBLASLT_EPILOGUE_RELU_BIAS: *bias = true, *relu = true; return true;
  default: return false;
  }
}

/* Fills g from the call, or says why the layer does not cover it. */
static const char *describe(cublasLtMatmulDesc_t op, const void *alpha, const void *A,
                            cublasLtMatrixLayout_t la, const void *B, cublasLtMatrixLayout_t lb,
                            const void *beta, const void *C, cublasLtMatrixLayout_t lc, void *D,
                            cublasLtMatrixLayout_t ld, fw_gemm_args *g, fw_acc *acc,
                            bool *reads_output) {
  int32_t compute = 0, scale = 0, pm = 0, ta = 0, tb = 0, tc = 0, fill = 0, bias_type = -1;
  uint32_t epi = 0;
  const void *bias = NULL, *scales[6] = {0};
  int64_t bias_q = 0;
  static const cublasLtMatmulDescAttributes_t scale_attrs[6] = {
      CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
      CUBLASLT_MATMUL_DESC_C_SCALE_POINTER, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
      CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, CUBLASLT_MATMUL_DESC_D_OUT_SCALE_POINTER};
  if (!desc_get(op, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_SCALE_TYPE, &scale, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_POINTER_MODE, &pm, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_TRANSC, &tc, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_FILL_MODE, &fill, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, 4) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &bias_q, 8) ||
      !desc_get(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, 4))
    return "the matmul descriptor does not read back";
  for (int i = 0; i < 6; i++)
    if (!desc_get(op, scale_attrs[i], &scales[i], sizeof scales[i]) || scales[i])
      return "fp8 scale and amax pointers are not covered";
  int want_scale;
  if (!fw_compute_type(compute, acc, &want_scale)) return "the compute type is not covered";
  if (scale != want_scale) return "the scale type is not the compute type's";
  if (pm != CUBLASLT_POINTER_MODE_HOST && pm != CUBLASLT_POINTER_MODE_DEVICE)
    return "vector pointer modes are not covered";
  if (tc != CUBLAS_OP_N || fill != CUBLAS_FILL_MODE_FULL) return "TRANSC or FILL_MODE not covered";
  bool has_bias, relu;
  if (!epilogue(epi, &has_bias, &relu)) return "the epilogue is not covered";

  lt_matrix a, b, c, d;
  const char *why;
  if ((why = layout(la, &a)) || (why = layout(lb, &b)) || (why = layout(lc, &c)) ||
      (why = layout(ld, &d)))
    return why;
  if (bias_type < 0) bias_type = d.type;
  const int types[] = {a.type, b.type, c.type, d.type, has_bias ? bias_type : d.type};
  if (!fw_types_ok(*acc, types, 5)) return "the data types are not covered";
  /* op(A) is m x k, op(B) k x n, D m x n (cuBLASLt: TRANS swaps a layout's
   * rows and columns) */
  bool at = ta != CUBLAS_OP_N, bt = tb != CUBLAS_OP_N;
  uint64_t m = d.rows, n = d.cols, k = at ? a.rows : a.cols;
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) return "a size above 2^31 - 1";
  *g = (fw_gemm_args){
      .a = A, .b = B, .c = C, .d = D,
      .a_r = at ? a.cs : a.rs, .a_c = at ? a.rs : a.cs, .a_q = a.qs,
      .b_r = bt ? b.cs : b.rs, .b_c = bt ? b.rs : b.cs, .b_q = b.qs,
      .c_r = c.rs, .c_c = c.cs, .c_q = c.qs,
      .d_r = d.rs, .d_c = d.cs, .d_q = d.qs,
      .bias = has_bias ? bias : NULL, .bias_q = d.batch > 1 ? bias_q : 0,
      .m = (int)m, .n = (int)n, .k = (int)k, .batch = d.batch,
      .a_type = a.type, .b_type = b.type, .c_type = c.type, .d_type = d.type,
      .bias_type = bias_type, .scale_type = scale, .relu = relu};
  if (has_bias && !bias) return "the bias epilogue has no bias pointer";
  /* the output is read when beta is not 0 and C is D (then the library's
   * own work may have changed it) */
  if (pm == CUBLASLT_POINTER_MODE_DEVICE) {
    g->alpha_p = alpha, g->beta_p = beta;
    *reads_output = C == D;
  } else {
    g->alpha = fw_host_scalar(alpha, scale);
    g->beta = fw_host_scalar(beta, scale);
    *reads_output = C == D && g->beta != 0;
  }
  return NULL;
}

FW_EXPORT cublasStatus_t cublasLtMatmul(cublasLtHandle_t lt, cublasLtMatmulDesc_t op,
                                        const void *alpha, const void *A,
                                        cublasLtMatrixLayout_t la, const void *B,
                                        cublasLtMatrixLayout_t lb, const void *beta,
                                        const void *C, cublasLtMatrixLayout_t lc, void *D,
                                        cublasLtMatrixLayout_t ld, const cublasLtMatmulAlgo_t *algo,
                                        void *work, size_t work_size, cudaStream_t s) {
  FW_REAL(cublasLtMatmul, LT_SO);
  if (!real) return CUBLAS_STATUS_NOT_INITIALIZED;
  fw_call c;
  fw_enter(&c, "cublasLtMatmul");
  cublasStatus_t r = real(lt, op, alpha, A, la, B, lb, beta, C, lc, D, ld, algo, work, work_size, s);
  if (!fw_refused(&c)) return r;
  fw_gemm_args g;
  fw_acc acc;
  bool reads_output = true;
  const char *why = describe(op, alpha, A, la, B, lb, beta, C, lc, D, ld, &g, &acc, &reads_output);
  if (why) {
    fw_decline(&c, why);
    return r;
  }
  if (!fw_may_take(&c, reads_output)) return r;
  return fw_gemm(&g, acc, (CUstream)s) == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : r;
}
