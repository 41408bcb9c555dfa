/* tests/forward/fake_blas.c: a stand-in for cuBLAS (libfakeblas.so) with
 * the entry points the forwarding layer's test needs: cublasDgemm_v2, whose
 * behaviour the case (m) chooses (fake_blas.h), cublasSgemv_v2, which calls
 * cublasDgemm_v2 through the dynamic linker as a library calling another
 * interposed entry point would, and the handle queries the layer makes.
 * A SASS-only kernel is a cubin of one kernel (tests/runtime/cubin.h),
 * whose launches ptxwave's driver refuses. */
#include <stdint.h>

#include "fake_blas.h"
#include "../runtime/cubin.h"

#define EXPORT __attribute__((visibility("default")))

EXPORT cublasStatus_t cublasGetStream_v2(cublasHandle_t h, cudaStream_t *s) {
  *s = (cudaStream_t)((fake_handle *)h)->stream;
  return CUBLAS_STATUS_SUCCESS;
}

EXPORT cublasStatus_t cublasGetPointerMode_v2(cublasHandle_t h, cublasPointerMode_t *m) {
  *m = ((fake_handle *)h)->mode;
  return CUBLAS_STATUS_SUCCESS;
}

/* a launch of the SASS-only kernel: the driver refuses it */
static cublasStatus_t sass_launch(void) {
  static uint8_t cubin[448];
  CUmodule m;
  CUfunction f;
  make_cubin(cubin);
  if (cuModuleLoadData(&m, cubin) || cuModuleGetFunction(&f, m, "sass_k"))
    return CUBLAS_STATUS_INTERNAL_ERROR;
  CUresult r = cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
  cuModuleUnload(m);
  return r == CUDA_ERROR_NO_BINARY_FOR_GPU ? CUBLAS_STATUS_EXECUTION_FAILED
                                           : CUBLAS_STATUS_INTERNAL_ERROR;
}

EXPORT cublasStatus_t cublasDgemm_v2(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                     int m, int n, int k, const double *alpha, const double *A,
                                     int lda, const double *B, int ldb, const double *beta,
                                     double *C, int ldc) {
  switch (m) {
  case case_ptx: {
    double v = 42;
    return cuMemcpyHtoD((CUdeviceptr)(uintptr_t)C, &v, sizeof v) ? CUBLAS_STATUS_INTERNAL_ERROR
                                                                  : CUBLAS_STATUS_SUCCESS;
  }
  case case_own_error: return CUBLAS_STATUS_INVALID_VALUE;
  case case_sass_after:
  case case_sass_after_b0:
    /* work that writes the output before the refused kernel */
    if (cuMemsetD32((CUdeviceptr)(uintptr_t)C, 0x7fc00000u, 2))
      return CUBLAS_STATUS_INTERNAL_ERROR;
    return sass_launch();
  default: return sass_launch();
  }
}

/* y = alpha A x + beta y through an inner call of cublasDgemm_v2 that
 * meets a SASS-only kernel: the outer call is the layer's to take over,
 * the inner one must go through untouched (its C is y, so an inner
 * take-over would write y). */
EXPORT cublasStatus_t cublasSgemv_v2(cublasHandle_t h, cublasOperation_t t, int m, int n,
                                     const float *alpha, const float *A, int lda, const float *x,
                                     int incx, const float *beta, float *y, int incy) {
  double one = 1;
  return cublasDgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, case_sass, 1, 1, &one, (const double *)x, 4,
                        (const double *)x, 1, &one, (double *)y, 4);
}
