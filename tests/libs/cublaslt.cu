// tests/libs/cublaslt.cu: cublasLtMatmul with a bias epilogue
// (D = A B + bias, bias per row) in f32 and in f16 (f16 inputs and output,
// f32 compute), the algorithm from cublasLtMatmulAlgoGetHeuristic; checked
// against plain C on the host.  Column major, no transposes.  Each
// operation prints "cublaslt: op NAME failed" when it fails; "cublaslt:
// PASS" when none did (tests/libs/run_lib.py, sass_only.txt).
#include <cublasLt.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* a failing call fails the operation it is part of (rc 1), and what the
 * operation holds is released: an ASan build's leak check runs this */
#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); rc = 1; goto done; } } while (0)

enum { M = 16, N = 8, K = 16 };
static int bad;

static float val(int i, int salt) { return (float)(((i * 29 + salt * 7) % 13) - 6) / 8.0f; }

static int run(cublasLtHandle_t lt, cudaDataType_t t, const char *name) {
  size_t es = t == CUDA_R_16F ? 2 : 4;
  float A[M * K], B[K * N], bias[M], R[M * N], D[M * N];
  for (int i = 0; i < M * K; i++) A[i] = val(i, 1);
  for (int i = 0; i < K * N; i++) B[i] = val(i, 2);
  for (int i = 0; i < M; i++) bias[i] = val(i, 3);
  for (int j = 0; j < N; j++)
    for (int i = 0; i < M; i++) {
      double s = bias[i];
      for (int p = 0; p < K; p++) s += (double)A[i + p * M] * B[p + j * K];
      R[i + j * M] = (float)s;
    }
  /* every resource, declared before the first CHECK can jump to done */
  int rc = 0, found = 0;
  void *dA = NULL, *dB = NULL, *db = NULL, *dD = NULL, *work = NULL;
  size_t wsize = 1 << 20;
  cublasLtMatmulDesc_t op = NULL;
  cublasLtMatrixLayout_t la = NULL, lb = NULL, ld = NULL;
  cublasLtMatmulPreference_t pref = NULL;
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  cudaDataType_t bt = t;
  cublasLtMatmulHeuristicResult_t h[4];
  float alpha = 1, beta = 0;
  double tol = es == 2 ? 1e-3 : 1e-6;
  /* device copies in the element type (the values are exact in f16) */
  void *hA = malloc(M * K * es), *hB = malloc(K * N * es), *hb = malloc(M * es), *hD = malloc(M * N * es);
  for (int i = 0; i < M * K; i++) if (es == 2) ((__half *)hA)[i] = __float2half(A[i]); else ((float *)hA)[i] = A[i];
  for (int i = 0; i < K * N; i++) if (es == 2) ((__half *)hB)[i] = __float2half(B[i]); else ((float *)hB)[i] = B[i];
  for (int i = 0; i < M; i++) if (es == 2) ((__half *)hb)[i] = __float2half(bias[i]); else ((float *)hb)[i] = bias[i];
  CHECK(cudaMalloc(&dA, M * K * es)); CHECK(cudaMalloc(&dB, K * N * es));
  CHECK(cudaMalloc(&db, M * es)); CHECK(cudaMalloc(&dD, M * N * es)); CHECK(cudaMalloc(&work, wsize));
  CHECK(cudaMemcpy(dA, hA, M * K * es, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, hB, K * N * es, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(db, hb, M * es, cudaMemcpyHostToDevice));

  CHECK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &db, sizeof db));
  CHECK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt));
  CHECK(cublasLtMatrixLayoutCreate(&la, t, M, K, M));
  CHECK(cublasLtMatrixLayoutCreate(&lb, t, K, N, K));
  CHECK(cublasLtMatrixLayoutCreate(&ld, t, M, N, M));
  CHECK(cublasLtMatmulPreferenceCreate(&pref));
  CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsize,
                                             sizeof wsize));
  CHECK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 4, h, &found));
  if (found < 1) { printf("%s: no algorithm\n", name); rc = 1; goto done; }
  CHECK(cublasLtMatmul(lt, op, &alpha, dA, la, dB, lb, &beta, dD, ld, dD, ld, &h[0].algo, work,
                       wsize, 0));
  CHECK(cudaMemcpy(hD, dD, M * N * es, cudaMemcpyDeviceToHost));
  for (int i = 0; i < M * N; i++) D[i] = es == 2 ? __half2float(((__half *)hD)[i]) : ((float *)hD)[i];
  for (int i = 0; i < M * N; i++)
    if (!(fabs(D[i] - R[i]) <= tol * (1 + fabs(R[i])))) {
      if (bad < 20) printf("%s[%d]: got %.7g, want %.7g\n", name, i, D[i], R[i]);
      bad++;
    }
done:
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (la) cublasLtMatrixLayoutDestroy(la);
  if (lb) cublasLtMatrixLayoutDestroy(lb);
  if (ld) cublasLtMatrixLayoutDestroy(ld);
  if (op) cublasLtMatmulDescDestroy(op);
  cudaFree(dA); cudaFree(dB); cudaFree(db); cudaFree(dD); cudaFree(work);
  free(hA); free(hB); free(hb); free(hD);
  return rc;
}

int main(void) {
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt)) { printf("cublaslt: op cublasLtCreate failed\n"); return 1; }
  static const struct { cudaDataType_t t; const char *name; } ops[] = {
      {CUDA_R_32F, "f32 matmul+bias"}, {CUDA_R_16F, "f16 matmul+bias"}};
  int failed = 0;
  for (int i = 0; i < 2; i++) {
    bad = 0;
    if (run(lt, ops[i].t, ops[i].name) || bad) {
      printf("cublaslt: op %s failed\n", ops[i].name);
      failed++;
    }
  }
  cublasLtDestroy(lt);
  if (failed) { printf("cublaslt: %d operations failed\n", failed); return 1; }
  printf("cublaslt: PASS\n");
  return 0;
}
