// tests/libs/forward.cu: the forwarding layer (forward/, docs/runtime.md "The
// forwarding layer") under NVIDIA's cuBLAS and cuBLASLt, at shapes and with
// handle state the other programs do not use.  Whichever kernel the library
// picks (one with PTX, run by ptxwave's JIT, or one it ships as SASS only,
// which the layer takes over), the result must match plain C on the host:
// dgemm with both transposes, padded leading dimensions, device pointer
// mode and a stream of its own; sgemm at 48 (a size at which cuBLAS picks
// SASS-only kernels); dgemm strided batched; gemmEx f16 in, f16 out;
// gemmEx bf16 in, f32 out; dgemv transposed with negative increments;
// cublasLt f32 with RELU_BIAS and a batch of 2 (bias batch stride), the
// same row-major without epilogue; cublasLt f16 with beta != 0 and C
// distinct from D.  At the default 12.0 (measured) the layer takes over
// dgemm TT, sgemm 48, both gemmEx and the f16 matmul; the rest run on
// NVIDIA's PTX.  Each operation prints "forward:
// op NAME failed" when it fails; "forward: PASS" when none did.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); return 1; } } while (0)

static int bad;
static cublasHandle_t h;
static cublasLtHandle_t lt;

static void close_to(const char *what, int i, double got, double want, double tol) {
  if (!(fabs(got - want) <= tol * (1.0 + fabs(want)))) {
    if (bad < 10) printf("%s[%d]: got %.9g, want %.9g\n", what, i, got, want);
    bad++;
  }
}

/* multiples of 1/8 in [-1, 1]: exact in every type used here */
static double val(int i, int salt) { return (double)(((i * 37 + salt * 11) % 17) - 8) / 8.0; }

template <typename T> static T *dev(const T *h, size_t n) {
  T *d = NULL;
  if (cudaMalloc(&d, n * sizeof(T)) || cudaMemcpy(d, h, n * sizeof(T), cudaMemcpyHostToDevice)) exit(2);
  return d;
}

/* C = alpha op(A) op(B) + beta C, column major, in double */
template <typename TA, typename TC>
static void ref(char ta, char tb, int m, int n, int k, double alpha, const TA *A, int lda,
                const TA *B, int ldb, double beta, TC *C, int ldc, double (*rd)(TA),
                double (*rc)(TC), TC (*wc)(double)) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++)
        s += rd(ta == 'N' ? A[i + p * lda] : A[p + i * lda]) * rd(tb == 'N' ? B[p + j * ldb] : B[j + p * ldb]);
      C[i + j * ldc] = wc(alpha * s + (beta != 0 ? beta * rc(C[i + j * ldc]) : 0));
    }
}
static double rd_d(double x) { return x; }
static double wd_id(double x) { return x; }
static double rd_f(float x) { return x; }
static float wf(double x) { return (float)x; }
static double rd_h(__half x) { return __half2float(x); }
static __half wh(double x) { return __float2half((float)x); }
static double rd_b(__nv_bfloat16 x) { return __bfloat162float(x); }

static int dgemm_tt(void) {
  const int m = 7, n = 5, k = 6, lda = k + 3, ldb = n + 2, ldc = m + 1;
  double A[lda * m], B[ldb * k], C[ldc * n], R[ldc * n], got[ldc * n];
  for (int i = 0; i < lda * m; i++) A[i] = val(i, 1);
  for (int i = 0; i < ldb * k; i++) B[i] = val(i, 2);
  for (int i = 0; i < ldc * n; i++) C[i] = R[i] = val(i, 3);
  ref<double, double>('T', 'T', m, n, k, -1.5, A, lda, B, ldb, 0.75, R, ldc, rd_d, rd_d, wd_id);
  double *dA = dev(A, lda * m), *dB = dev(B, ldb * k), *dC = dev(C, ldc * n);
  double sc[2] = {-1.5, 0.75}, *dsc = dev(sc, 2);
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CHECK(cublasSetStream(h, s));
  CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  CHECK(cublasDgemm(h, CUBLAS_OP_T, CUBLAS_OP_T, m, n, k, dsc, dA, lda, dB, ldb, dsc + 1, dC, ldc));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
  CHECK(cublasSetStream(h, 0));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaMemcpy(got, dC, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < ldc * n; i++) close_to("dgemm TT", i, got[i], R[i], 1e-14);
  cudaFree(dA); cudaFree(dB); cudaFree(dC); cudaFree(dsc);
  return 0;
}

static int sgemm_48(void) {
  const int n = 48;
  static float A[n * n], B[n * n], C[n * n], R[n * n], got[n * n];
  for (int i = 0; i < n * n; i++) { A[i] = val(i, 4); B[i] = val(i, 5); C[i] = R[i] = val(i, 6); }
  ref<float, float>('N', 'T', n, n, n, 1.0, A, n, B, n, -1.0, R, n, rd_f, rd_f, wf);
  float *dA = dev(A, n * n), *dB = dev(B, n * n), *dC = dev(C, n * n), one = 1, mone = -1;
  CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, n, n, n, &one, dA, n, dB, n, &mone, dC, n));
  CHECK(cudaMemcpy(got, dC, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n * n; i++) close_to("sgemm 48", i, got[i], R[i], 1e-6);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

static int dgemm_strided(void) {
  const int m = 4, n = 3, k = 5, batch = 3, sa = m * k + 2, sb = k * n + 1, sc = m * n + 3;
  double A[sa * batch], B[sb * batch], C[sc * batch], R[sc * batch], got[sc * batch];
  for (int i = 0; i < sa * batch; i++) A[i] = val(i, 7);
  for (int i = 0; i < sb * batch; i++) B[i] = val(i, 8);
  for (int i = 0; i < sc * batch; i++) C[i] = R[i] = val(i, 9);
  for (int q = 0; q < batch; q++)
    ref<double, double>('N', 'N', m, n, k, 2.0, A + q * sa, m, B + q * sb, k, 0.5, R + q * sc, m, rd_d, rd_d, wd_id);
  double *dA = dev(A, sa * batch), *dB = dev(B, sb * batch), *dC = dev(C, sc * batch), a = 2, b = 0.5;
  CHECK(cublasDgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &a, dA, m, sa, dB, k, sb, &b, dC, m, sc, batch));
  CHECK(cudaMemcpy(got, dC, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < sc * batch; i++) close_to("dgemm strided batched", i, got[i], R[i], 1e-14);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

static int gemm_ex_h_h(void) {
  const int m = 16, n = 8, k = 16;
  __half A[m * k], B[k * n], C[m * n], R[m * n], got[m * n];
  for (int i = 0; i < m * k; i++) A[i] = __float2half((float)val(i, 10));
  for (int i = 0; i < k * n; i++) B[i] = __float2half((float)val(i, 11));
  for (int i = 0; i < m * n; i++) C[i] = R[i] = __float2half((float)val(i, 12));
  ref<__half, __half>('N', 'N', m, n, k, 1.0, A, m, B, k, 1.0, R, m, rd_h, rd_h, wh);
  __half *dA = dev(A, m * k), *dB = dev(B, k * n), *dC = dev(C, m * n);
  float one = 1;
  CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &one, dA, CUDA_R_16F, m, dB, CUDA_R_16F, k, &one, dC,
                     CUDA_R_16F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CHECK(cudaMemcpy(got, dC, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < m * n; i++) close_to("gemmEx f16 out", i, rd_h(got[i]), rd_h(R[i]), 1e-3);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

static int gemm_ex_bf16(void) {
  const int m = 8, n = 8, k = 32;
  __nv_bfloat16 A[k * m], B[k * n];
  float C[m * n], R[m * n], got[m * n];
  for (int i = 0; i < k * m; i++) A[i] = __float2bfloat16((float)val(i, 13));
  for (int i = 0; i < k * n; i++) B[i] = __float2bfloat16((float)val(i, 14));
  for (int i = 0; i < m * n; i++) C[i] = R[i] = 0;
  ref<__nv_bfloat16, float>('T', 'N', m, n, k, 1.0, A, k, B, k, 0.0, R, m, rd_b, rd_f, wf);
  __nv_bfloat16 *dA = dev(A, k * m), *dB = dev(B, k * n);
  float *dC = dev(C, m * n), one = 1, zero = 0;
  CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, &one, dA, CUDA_R_16BF, k, dB, CUDA_R_16BF, k, &zero, dC,
                     CUDA_R_32F, m, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  CHECK(cudaMemcpy(got, dC, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < m * n; i++) close_to("gemmEx bf16", i, got[i], R[i], 1e-6);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

/* y = alpha A^T x + beta y, x and y backwards (negative increments) */
static int dgemv_t(void) {
  const int m = 6, n = 5, lda = 7, incx = -2, incy = -1;
  double A[lda * n], x[1 + (m - 1) * 2], y[n], R[n], got[n];
  for (int i = 0; i < lda * n; i++) A[i] = val(i, 15);
  for (int i = 0; i < 1 + (m - 1) * 2; i++) x[i] = val(i, 16);
  for (int i = 0; i < n; i++) y[i] = R[i] = val(i, 17);
  /* BLAS: element j of a vector with increment inc < 0 is at (len - 1 - j) * |inc| */
  for (int j = 0; j < n; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += A[i + j * lda] * x[(m - 1 - i) * 2];
    R[n - 1 - j] = 1.25 * s - 2.0 * y[n - 1 - j];
  }
  double *dA = dev(A, lda * n), *dx = dev(x, 1 + (m - 1) * 2), *dy = dev(y, n), a = 1.25, b = -2;
  CHECK(cublasDgemv(h, CUBLAS_OP_T, m, n, &a, dA, lda, dx, incx, &b, dy, incy));
  CHECK(cudaMemcpy(got, dy, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) close_to("dgemv T", i, got[i], R[i], 1e-14);
  cudaFree(dA); cudaFree(dx); cudaFree(dy);
  return 0;
}

/* cublasLt: D = relu(A B + bias) (row major: no epilogue, cuBLASLt
 * refuses one there), batch 2 (strided), f32 */
static int lt_batch(bool row_major) {
  const int m = 8, n = 4, k = 8, batch = 2;
  float A[batch * m * k], B[batch * k * n], bias[batch * m], R[batch * m * n], got[batch * m * n];
  for (int i = 0; i < batch * m * k; i++) A[i] = (float)val(i, 18);
  for (int i = 0; i < batch * k * n; i++) B[i] = (float)val(i, 19);
  for (int i = 0; i < batch * m; i++) bias[i] = (float)val(i, 20);
  for (int q = 0; q < batch; q++)
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double s = row_major ? 0 : bias[q * m + i];
        for (int p = 0; p < k; p++)
          s += row_major ? (double)A[q * m * k + i * k + p] * B[q * k * n + p * n + j]
                         : (double)A[q * m * k + i + p * m] * B[q * k * n + p + j * k];
        R[q * m * n + (row_major ? i * n + j : i + j * m)] = (float)(s > 0 || row_major ? s : 0);
      }
  float *dA = dev(A, batch * m * k), *dB = dev(B, batch * k * n), *db = dev(bias, batch * m), *dD;
  CHECK(cudaMalloc(&dD, sizeof got));
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, ld;
  cublasLtOrder_t row = CUBLASLT_ORDER_ROW;
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_RELU_BIAS;
  int32_t bc = batch;
  int64_t sa = m * k, sb = k * n, sd = m * n, sbias = m;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  if (!row_major) {
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &db, sizeof db));
    CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, &sbias, sizeof sbias));
  }
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, m, k, row_major ? k : m));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, k, n, row_major ? n : k));
  CHECK(cublasLtMatrixLayoutCreate(&ld, CUDA_R_32F, m, n, row_major ? n : m));
  cublasLtMatrixLayout_t ls[3] = {la, lb, ld};
  int64_t strides[3] = {sa, sb, sd};
  for (int i = 0; i < 3; i++) {
    if (row_major)
      CHECK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof row));
    CHECK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &bc, sizeof bc));
    CHECK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &strides[i],
                                           sizeof strides[i]));
  }
  float one = 1, zero = 0;
  void *work;
  CHECK(cudaMalloc(&work, 1 << 20));
  CHECK(cublasLtMatmul(lt, op, &one, dA, la, dB, lb, &zero, dD, ld, dD, ld, NULL, work, 1 << 20, 0));
  CHECK(cudaMemcpy(got, dD, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < batch * m * n; i++)
    close_to(row_major ? "lt row major" : "lt relu+bias", i, got[i], R[i], 1e-6);
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(op);
  cudaFree(dA); cudaFree(dB); cudaFree(db); cudaFree(dD); cudaFree(work);
  return 0;
}

static int lt_col(void) { return lt_batch(false); }
static int lt_row(void) { return lt_batch(true); }

/* cublasLt f16: D = 0.5 A B + 2 C, C distinct from D, A transposed */
static int lt_f16_beta(void) {
  const int m = 16, n = 16, k = 32;
  __half A[k * m], B[k * n], C[m * n], R[m * n], got[m * n];
  for (int i = 0; i < k * m; i++) A[i] = __float2half((float)val(i, 21));
  for (int i = 0; i < k * n; i++) B[i] = __float2half((float)val(i, 22));
  for (int i = 0; i < m * n; i++) C[i] = R[i] = __float2half((float)val(i, 23));
  ref<__half, __half>('T', 'N', m, n, k, 0.5, A, k, B, k, 2.0, R, m, rd_h, rd_h, wh);
  __half *dA = dev(A, k * m), *dB = dev(B, k * n), *dC = dev(C, m * n), *dD;
  CHECK(cudaMalloc(&dD, sizeof got));
  cublasLtMatmulDesc_t op;
  cublasLtMatrixLayout_t la, lb, lc;
  cublasOperation_t t = CUBLAS_OP_T;
  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof t));
  CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16F, k, m, k));
  CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16F, k, n, k));
  CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16F, m, n, m));
  float a = 0.5f, b = 2;
  void *work;
  CHECK(cudaMalloc(&work, 1 << 20));
  CHECK(cublasLtMatmul(lt, op, &a, dA, la, dB, lb, &b, dC, lc, dD, lc, NULL, work, 1 << 20, 0));
  CHECK(cudaMemcpy(got, dD, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < m * n; i++) close_to("lt f16 beta", i, rd_h(got[i]), rd_h(R[i]), 1e-3);
  cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(op);
  cudaFree(dA); cudaFree(dB); cudaFree(dC); cudaFree(dD); cudaFree(work);
  return 0;
}

int main(void) {
  if (cublasCreate(&h) || cublasLtCreate(&lt)) { printf("forward: op create failed\n"); return 1; }
  static const struct { const char *name; int (*fn)(void); } ops[] = {
      {"dgemm TT", dgemm_tt}, {"sgemm 48", sgemm_48}, {"dgemm strided batched", dgemm_strided},
      {"gemmEx f16 out", gemm_ex_h_h}, {"gemmEx bf16", gemm_ex_bf16}, {"dgemv T", dgemv_t},
      {"lt relu+bias batched", lt_col}, {"lt row major batched", lt_row},
      {"lt f16 beta", lt_f16_beta}};
  int failed = 0;
  for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    bad = 0;
    if (ops[i].fn() || bad) { printf("forward: op %s failed\n", ops[i].name); failed++; }
  }
  cublasLtDestroy(lt);
  cublasDestroy(h);
  if (failed) { printf("forward: %d operations failed\n", failed); return 1; }
  printf("forward: PASS\n");
  return 0;
}
