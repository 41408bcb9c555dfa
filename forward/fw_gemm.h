/* forward/fw_gemm.h: the parameter block of the forwarding layer's GEMM
 * kernels (fw_gemm.cu), shared by the kernels and the host code that fills
 * it (fw_core.c), so that the two layouts are one definition: the kernels
 * take it by value as their one .param, which the host packs as this struct
 * (x86-64 and NVPTX64 lay it out alike: 8-byte pointers and long longs
 * first, ints after). */
#ifndef PW_FW_GEMM_H
#define PW_FW_GEMM_H

/* Element types: cudaDataType_t's codes (library_types.h). */
enum { fw_r_32f = 0, fw_r_64f = 1, fw_r_16f = 2, fw_r_16bf = 14 };

/* D[q](i,j) = relu?(alpha * sum_p A[q](i,p) B[q](p,j) + beta * C[q](i,j) + bias[q][i])
 * for i < m, j < n, p < k, q < batch; X[q](r,c) is element
 * r * x_r + c * x_c + q * x_q of X (or of X's q-th pointer with ptr_array,
 * x_q unused).  Strides may be negative (BLAS vectors with a negative
 * increment): the base is element 0's address, not the lowest one. */
typedef struct fw_gemm_args {
  const void *a, *b, *c;
  void *d;
  long long a_r, a_c, a_q;      /* op(A): m x k */
  long long b_r, b_c, b_q;      /* op(B): k x n */
  long long c_r, c_c, c_q;      /* C: m x n; c NULL: not read */
  long long d_r, d_c, d_q;      /* D: m x n */
  const void *bias;             /* NULL, or m elements of bias_type per batch */
  long long bias_q;
  const void *alpha_p, *beta_p; /* device scalars of scale_type, or NULL: alpha, beta below */
  double alpha, beta;
  int m, n, k, batch;
  int a_type, b_type, c_type, d_type, bias_type, scale_type;
  int ptr_array;
  int relu;
} fw_gemm_args;

#endif
