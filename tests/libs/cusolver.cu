// tests/libs/cusolver.cu: cuSOLVER's dense LAPACK: Cholesky (potrf, potrs)
// of a symmetric positive definite matrix and LU with pivoting (getrf,
// getrs) of a general one, each solving A X = B; checked against the
// residual computed on the host in plain C in double.  Prints
// "cusolver: PASS".
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

enum { N = 6, NRHS = 2 };
static int bad;

/* max |A X - B| over the entries (column major, double) */
static void check_solution(const char *what, const double *A, const double *X, const double *B) {
  for (int q = 0; q < NRHS; q++)
    for (int i = 0; i < N; i++) {
      double s = 0;
      for (int j = 0; j < N; j++) s += A[i + j * N] * X[j + q * N];
      if (!(fabs(s - B[i + q * N]) <= 1e-10)) {
        if (bad < 20) printf("%s: row %d rhs %d: A x = %.15g, b = %.15g\n", what, i, q, s, B[i + q * N]);
        bad++;
      }
    }
}

static double *dev(const double *h, int n) {
  double *d;
  CHECK(cudaMalloc(&d, n * sizeof *d));
  CHECK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
  return d;
}

int main(void) {
  double S[N * N], G[N * N], B[N * NRHS], X[N * NRHS];
  /* S = M^T M + N I (SPD); G general, diagonally weak so pivoting matters */
  double Mx[N * N];
  for (int i = 0; i < N * N; i++) Mx[i] = (double)((i * 7) % 11) / 5.0 - 1.0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      double s = i == j ? N : 0;
      for (int p = 0; p < N; p++) s += Mx[p + i * N] * Mx[p + j * N];
      S[i + j * N] = s;
      G[i + j * N] = (double)(((i + 1) * (j + 3)) % 7) - 3.0 + (i == j ? 0.5 : 0.0);
    }
  for (int i = 0; i < N * NRHS; i++) B[i] = (double)(i % 5) - 2.0;

  cusolverDnHandle_t h;
  CHECK(cusolverDnCreate(&h));
  int *info, hinfo = -1, lwork = 0;
  CHECK(cudaMalloc(&info, sizeof(int)));
  double *work;

  /* Cholesky */
  double *dS = dev(S, N * N), *dB = dev(B, N * NRHS);
  CHECK(cusolverDnDpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, N, dS, N, &lwork));
  CHECK(cudaMalloc(&work, (lwork ? lwork : 1) * sizeof(double)));
  CHECK(cusolverDnDpotrf(h, CUBLAS_FILL_MODE_LOWER, N, dS, N, work, lwork, info));
  CHECK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
  if (hinfo != 0) { printf("potrf: info %d\n", hinfo); bad++; }
  CHECK(cusolverDnDpotrs(h, CUBLAS_FILL_MODE_LOWER, N, NRHS, dS, N, dB, N, info));
  CHECK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
  if (hinfo != 0) { printf("potrs: info %d\n", hinfo); bad++; }
  CHECK(cudaMemcpy(X, dB, sizeof X, cudaMemcpyDeviceToHost));
  check_solution("potrf/potrs", S, X, B);
  cudaFree(work); cudaFree(dS); cudaFree(dB);

  /* LU with partial pivoting */
  double *dG = dev(G, N * N);
  dB = dev(B, N * NRHS);
  int *piv;
  CHECK(cudaMalloc(&piv, N * sizeof(int)));
  CHECK(cusolverDnDgetrf_bufferSize(h, N, N, dG, N, &lwork));
  CHECK(cudaMalloc(&work, (lwork ? lwork : 1) * sizeof(double)));
  CHECK(cusolverDnDgetrf(h, N, N, dG, N, work, piv, info));
  CHECK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
  if (hinfo != 0) { printf("getrf: info %d\n", hinfo); bad++; }
  CHECK(cusolverDnDgetrs(h, CUBLAS_OP_N, N, NRHS, dG, N, piv, dB, N, info));
  CHECK(cudaMemcpy(&hinfo, info, sizeof hinfo, cudaMemcpyDeviceToHost));
  if (hinfo != 0) { printf("getrs: info %d\n", hinfo); bad++; }
  CHECK(cudaMemcpy(X, dB, sizeof X, cudaMemcpyDeviceToHost));
  check_solution("getrf/getrs", G, X, B);
  cudaFree(work); cudaFree(dG); cudaFree(dB); cudaFree(piv); cudaFree(info);
  CHECK(cusolverDnDestroy(h));
  if (bad) { printf("cusolver: %d failures\n", bad); return 1; }
  printf("cusolver: PASS\n");
  return 0;
}
