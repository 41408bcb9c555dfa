/* tests/forward/fw_client.c: the forwarding layer (forward/) around a
 * stand-in cuBLAS (fake_blas.c), run by test_forward.py under `ptxwave
 * run`.  Each case is one cublasDgemm_v2 or cublasSgemv_v2 call; expected
 * values come from plain C on the host.
 *   - a call that succeeds on its own goes through untouched (its marker
 *     stays), and so does one that fails for a reason of its own;
 *   - a call that met a SASS-only kernel is taken over: C = alpha op(A) B +
 *     beta C with a transpose, padded leading dimensions, host and device
 *     pointer modes; padding untouched;
 *   - one that also wrote its output first keeps its error when it reads
 *     that output (beta != 0), and is taken over when it does not;
 *   - an interposed call inside another (sgemv calling dgemm) is the outer
 *     call's: only sgemv is taken over (a negative increment on x).
 * With argument "off" (PTXWAVE_FORWARD=off) every call is the stand-in's.
 * Prints "fw_client: ok". */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fake_blas.h"
#include "../runtime/client.h"

#define D(p) ((CUdeviceptr)(uintptr_t)(p))

static double *dev(const double *h, size_t n) {
  CUdeviceptr d;
  if (cuMemAlloc(&d, n * sizeof *h) || cuMemcpyHtoD(d, h, n * sizeof *h)) return NULL;
  return (double *)(uintptr_t)d;
}

/* C = alpha A^T B + beta C on the host, A stored k x m (lda), B k x n */
static void ref(int m, int n, int k, double alpha, const double *A, int lda, const double *B,
                int ldb, double beta, double *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) s += A[p + i * lda] * B[p + j * ldb];
      C[i + j * ldc] = alpha * s + (beta != 0 ? beta * C[i + j * ldc] : 0);
    }
}

/* One take-over case: m is the stand-in's case; returns the status */
static int gemm_case(fake_handle *fh, int m, double alpha, double beta, bool device_scalars,
                     cublasStatus_t *st, int *bad) {
  enum { n = 3, k = 5, lda = k + 1, ldb = k, ldc = 8 };
  double A[lda * 8], B[ldb * n], C[ldc * n], R[ldc * n], got[ldc * n];
  for (int i = 0; i < lda * 8; i++) A[i] = ((i * 7) % 11 - 5) / 8.0;
  for (int i = 0; i < ldb * n; i++) B[i] = ((i * 5) % 9 - 4) / 4.0;
  for (int i = 0; i < ldc * n; i++) C[i] = R[i] = ((i * 3) % 7 - 3) / 2.0;
  ref(m, n, k, alpha, A, lda, B, ldb, beta, R, ldc);
  double *dA = dev(A, lda * 8), *dB = dev(B, ldb * n), *dC = dev(C, ldc * n);
  double sc[2] = {alpha, beta}, *dsc = dev(sc, 2);
  EXPECT(dA && dB && dC && dsc);
  fh->mode = device_scalars ? CUBLAS_POINTER_MODE_DEVICE : CUBLAS_POINTER_MODE_HOST;
  const double *pa = device_scalars ? dsc : &sc[0], *pb = device_scalars ? dsc + 1 : &sc[1];
  *st = cublasDgemm_v2((cublasHandle_t)fh, CUBLAS_OP_T, CUBLAS_OP_N, m, n, k, pa, dA, lda, dB,
                       ldb, pb, dC, ldc);
  CK(cuMemcpyDtoH(got, D(dC), sizeof got));
  *bad = 0;
  for (int i = 0; i < ldc * n; i++)   /* rows m .. ldc-1 are padding: unchanged */
    if (!(fabs(got[i] - R[i]) <= 1e-12)) {
      if (*bad < 5) fprintf(stderr, "case %d: C[%d] = %g, want %g\n", m, i, got[i], R[i]);
      ++*bad;
    }
  cuMemFree(D(dA)), cuMemFree(D(dB)), cuMemFree(D(dC)), cuMemFree(D(dsc));
  return 0;
}

int main(int argc, char **argv) {
  bool off = argc > 1 && !strcmp(argv[1], "off");
  CUdevice dv;
  CUcontext ctx;
  CK(cuInit(0));
  CK(cuDeviceGet(&dv, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dv));
  CK(cuCtxSetCurrent(ctx));
  fake_handle fh = {.stream = NULL, .mode = CUBLAS_POINTER_MODE_HOST};
  cublasHandle_t h = (cublasHandle_t)&fh;

  /* untouched: success with the stand-in's marker; its own error */
  double c0[2] = {1, 2}, got[2], one = 1;
  double *dc = dev(c0, 2);
  EXPECT(dc);
  EXPECT(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, case_ptx, 1, 1, &one, dc, 1, dc, 1, &one, dc,
                        1) == CUBLAS_STATUS_SUCCESS);
  CK(cuMemcpyDtoH(got, D(dc), sizeof got));
  EXPECT(got[0] == 42 && got[1] == 2);
  EXPECT(cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, case_own_error, 1, 1, &one, dc, 1, dc, 1,
                        &one, dc, 1) == CUBLAS_STATUS_INVALID_VALUE);
  CK(cuMemcpyDtoH(got, D(dc), sizeof got));
  EXPECT(got[0] == 42 && got[1] == 2);
  cuMemFree(D(dc));

  cublasStatus_t st;
  int bad;
  if (off) {
    if (gemm_case(&fh, case_sass, 1.5, -0.5, false, &st, &bad)) return 1;
    EXPECT(st == CUBLAS_STATUS_EXECUTION_FAILED);
    printf("fw_client: ok\n");
    return 0;
  }
  /* taken over: host and device scalars */
  if (gemm_case(&fh, case_sass, 1.5, -0.5, false, &st, &bad)) return 1;
  EXPECT(st == CUBLAS_STATUS_SUCCESS && bad == 0);
  if (gemm_case(&fh, case_sass, -0.25, 2.0, true, &st, &bad)) return 1;
  EXPECT(st == CUBLAS_STATUS_SUCCESS && bad == 0);
  /* earlier work wrote C: kept error with beta != 0, taken over with 0 */
  if (gemm_case(&fh, case_sass_after, 1.5, -0.5, false, &st, &bad)) return 1;
  EXPECT(st == CUBLAS_STATUS_EXECUTION_FAILED);
  if (gemm_case(&fh, case_sass_after_b0, 0.5, 0.0, false, &st, &bad)) return 1;
  EXPECT(st == CUBLAS_STATUS_SUCCESS && bad == 0);

  /* nested: sgemv (its inner dgemm meets the SASS-only kernel), y = alpha
   * A x + beta y with A 3 x 2 (lda 4), x backwards (incx -2), y of 8 */
  float A[8] = {1, -2, 0.5f, 9, 3, 0.25f, -1, 9}, x[3] = {2, 9, -3}, y[8], Y[8], alpha = 2,
        beta = 0.5f;
  for (int i = 0; i < 8; i++) y[i] = Y[i] = (float)(i - 3);
  /* BLAS: element j of x is x[(n - 1 - j) * 2] for incx -2: x(0) = -3, x(1) = 2 */
  for (int i = 0; i < 3; i++) Y[i] = alpha * (A[i] * -3 + A[i + 4] * 2) + beta * y[i];
  CUdeviceptr dA, dx, dy;
  CK(cuMemAlloc(&dA, sizeof A));
  CK(cuMemAlloc(&dx, sizeof x));
  CK(cuMemAlloc(&dy, sizeof y));
  CK(cuMemcpyHtoD(dA, A, sizeof A));
  CK(cuMemcpyHtoD(dx, x, sizeof x));
  CK(cuMemcpyHtoD(dy, y, sizeof y));
  fh.mode = CUBLAS_POINTER_MODE_HOST;
  EXPECT(cublasSgemv_v2(h, CUBLAS_OP_N, 3, 2, &alpha, (const float *)(uintptr_t)dA, 4,
                        (const float *)(uintptr_t)dx, -2, &beta, (float *)(uintptr_t)dy, 1) ==
         CUBLAS_STATUS_SUCCESS);
  CK(cuMemcpyDtoH(y, dy, sizeof y));
  for (int i = 0; i < 8; i++)
    if (y[i] != Y[i]) {
      fprintf(stderr, "sgemv: y[%d] = %g, want %g\n", i, y[i], Y[i]);
      return 1;
    }
  cuMemFree(dA), cuMemFree(dx), cuMemFree(dy);
  cuDevicePrimaryCtxRelease(dv);
  printf("fw_client: ok\n");
  return 0;
}
