/* tests/forward/fake_blas.h: the stand-in cuBLAS of the forwarding layer's
 * test (fake_blas.c, fw_client.c).  Its handle is this struct; what its
 * cublasDgemm_v2 does is chosen by m, the cases of fw_client.c. */
#ifndef PW_TEST_FAKE_BLAS_H
#define PW_TEST_FAKE_BLAS_H

#include <cublas_v2.h>
#include <cuda.h>

typedef struct fake_handle {
  CUstream stream;
  cublasPointerMode_t mode;
} fake_handle;

enum {
  case_ptx = 1,          /* runs "on a kernel with PTX": writes 42 to C[0], success */
  case_own_error = 2,    /* fails for a reason of its own, before any launch */
  case_sass = 4,         /* launches a SASS-only kernel, fails */
  case_sass_after = 5,   /* writes C (a memset), then launches a SASS-only kernel, fails */
  case_sass_after_b0 = 6 /* as case_sass_after */
};

#endif
