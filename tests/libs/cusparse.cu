// tests/libs/cusparse.cu: cuSPARSE's generic API on a CSR matrix: SpMV
// (y = alpha A x + beta y) and SpMM (C = alpha A B + beta C, B and C column
// major) against plain C on the host.  Prints "cusparse: PASS".
#include <cuda_runtime.h>
#include <cusparse.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static int bad;
static void close_to(const char *what, int i, double got, double want) {
  if (!(fabs(got - want) <= 1e-6 * (1.0 + fabs(want)))) {
    if (bad < 20) printf("%s[%d]: got %.9g, want %.9g\n", what, i, got, want);
    bad++;
  }
}

int main(void) {
  /* A: 5x6, entries where (i + 2j) % 3 == 0, values (i - j) / 4 + 1 */
  enum { M = 5, N = 6, K = 3 };
  int rowptr[M + 1], col[M * N], nnz = 0;
  float v[M * N], dense[M][N] = {{0}};
  for (int i = 0; i < M; i++) {
    rowptr[i] = nnz;
    for (int j = 0; j < N; j++)
      if ((i + 2 * j) % 3 == 0) {
        col[nnz] = j;
        v[nnz] = (float)(i - j) / 4.0f + 1.0f;
        dense[i][j] = v[nnz++];
      }
  }
  rowptr[M] = nnz;
  float x[N], y0[M], y[M], B[N * K], C0[M * K], C[M * K];
  for (int j = 0; j < N; j++) x[j] = (float)(j % 4) - 1.5f;
  for (int i = 0; i < M; i++) y0[i] = (float)i * 0.5f;
  for (int i = 0; i < N * K; i++) B[i] = (float)((i * 5) % 7) / 2.0f - 1.0f;
  for (int i = 0; i < M * K; i++) C0[i] = (float)(i % 3);

  int *dr, *dc;
  float *dv, *dx, *dy, *dB, *dC;
  CHECK(cudaMalloc(&dr, sizeof rowptr)); CHECK(cudaMalloc(&dc, nnz * sizeof(int)));
  CHECK(cudaMalloc(&dv, nnz * sizeof(float))); CHECK(cudaMalloc(&dx, sizeof x));
  CHECK(cudaMalloc(&dy, sizeof y0)); CHECK(cudaMalloc(&dB, sizeof B)); CHECK(cudaMalloc(&dC, sizeof C0));
  CHECK(cudaMemcpy(dr, rowptr, sizeof rowptr, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dc, col, nnz * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, v, nnz * sizeof(float), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dy, y0, sizeof y0, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dC, C0, sizeof C0, cudaMemcpyHostToDevice));

  cusparseHandle_t h;
  CHECK(cusparseCreate(&h));
  cusparseSpMatDescr_t A;
  cusparseDnVecDescr_t vx, vy;
  cusparseDnMatDescr_t mB, mC;
  CHECK(cusparseCreateCsr(&A, M, N, nnz, dr, dc, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                          CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
  CHECK(cusparseCreateDnVec(&vx, N, dx, CUDA_R_32F));
  CHECK(cusparseCreateDnVec(&vy, M, dy, CUDA_R_32F));
  CHECK(cusparseCreateDnMat(&mB, N, K, N, dB, CUDA_R_32F, CUSPARSE_ORDER_COL));
  CHECK(cusparseCreateDnMat(&mC, M, K, M, dC, CUDA_R_32F, CUSPARSE_ORDER_COL));
  float alpha = 2.0f, beta = 0.5f;
  size_t bytes = 0;
  void *work = NULL;
  CHECK(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vx, &beta, vy,
                                CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  if (bytes) CHECK(cudaMalloc(&work, bytes));
  CHECK(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, vx, &beta, vy, CUDA_R_32F,
                     CUSPARSE_SPMV_ALG_DEFAULT, work));
  CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
  for (int i = 0; i < M; i++) {
    double s = 0;
    for (int j = 0; j < N; j++) s += (double)dense[i][j] * x[j];
    close_to("spmv", i, y[i], 2.0 * s + 0.5 * y0[i]);
  }
  if (work) cudaFree(work);
  work = NULL;
  CHECK(cusparseSpMM_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, mB, &beta, mC,
                                CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &bytes));
  if (bytes) CHECK(cudaMalloc(&work, bytes));
  CHECK(cusparseSpMM(h, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
                     &alpha, A, mB, &beta, mC, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, work));
  CHECK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
  for (int q = 0; q < K; q++)
    for (int i = 0; i < M; i++) {
      double s = 0;
      for (int j = 0; j < N; j++) s += (double)dense[i][j] * B[j + q * N];
      close_to("spmm", i + q * M, C[i + q * M], 2.0 * s + 0.5 * C0[i + q * M]);
    }
  CHECK(cusparseDestroySpMat(A));
  CHECK(cusparseDestroyDnVec(vx)); CHECK(cusparseDestroyDnVec(vy));
  CHECK(cusparseDestroyDnMat(mB)); CHECK(cusparseDestroyDnMat(mC));
  CHECK(cusparseDestroy(h));
  if (bad) { printf("cusparse: %d mismatches\n", bad); return 1; }
  printf("cusparse: PASS\n");
  return 0;
}
