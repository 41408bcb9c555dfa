// forward/fw_gemm.cu: the kernels of ptxwave's forwarding layer (docs/runtime.md
// "The forwarding layer").  One strided GEMM covers every operation the layer
// takes over from NVIDIA's libraries:
//
//   D[q](i,j) = epi(alpha * sum_p A[q](i,p) B[q](p,j) + beta * C[q](i,j) + bias[q](i))
//
// for 0 <= i < m, 0 <= j < n, 0 <= p < k and q < batch.  Every operand is
// described by element strides (row, column, batch), so one kernel serves
// transposes, leading dimensions, row- and column-major layouts, strided
// batches, broadcast batches (stride 0) and GEMV (n = 1, the vector's
// increment as its row stride).  With ptr_array set, a, b, c and d are
// device arrays of `batch` pointers (cuBLAS's pointer-array batched calls).
// Element types are cudaDataType_t codes read at run time (one uniform
// switch per load); the accumulator is the kernel's: f32, f64 or f16.
//
// BLAS semantics kept: C is not read when beta is 0 (it may hold NaN), A and
// B not when alpha is 0 or k is 0.  Results round to nearest even.
//
// Built by scripts/gen_forward_ptx.sh (nvcc -ptx, checked in as
// fw_gemm.ptx): the forwarding layer loads that PTX through the driver API,
// so it goes through ptxwave's own JIT path on every backend.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fw_gemm.h"

__device__ static double ld_f64(const void *p, long long i, int t) {
  switch (t) {
  case fw_r_64f: return ((const double *)p)[i];
  case fw_r_32f: return ((const float *)p)[i];
  case fw_r_16f: return __half2float(((const __half *)p)[i]);
  case fw_r_16bf: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
  }
  return 0;
}

__device__ static float ld_f32(const void *p, long long i, int t) {
  switch (t) {
  case fw_r_32f: return ((const float *)p)[i];
  case fw_r_16f: return __half2float(((const __half *)p)[i]);
  case fw_r_16bf: return __bfloat162float(((const __nv_bfloat16 *)p)[i]);
  case fw_r_64f: return (float)((const double *)p)[i];
  }
  return 0;
}

__device__ static void st(void *p, long long i, int t, double v) {
  switch (t) {
  case fw_r_64f: ((double *)p)[i] = v; break;
  case fw_r_32f: ((float *)p)[i] = (float)v; break;
  case fw_r_16f: ((__half *)p)[i] = __double2half(v); break;
  case fw_r_16bf: ((__nv_bfloat16 *)p)[i] = __double2bfloat16(v); break;
  }
}

__device__ static void st_f32(void *p, long long i, int t, float v) {
  switch (t) {
  case fw_r_32f: ((float *)p)[i] = v; break;
  case fw_r_16f: ((__half *)p)[i] = __float2half_rn(v); break;
  case fw_r_16bf: ((__nv_bfloat16 *)p)[i] = __float2bfloat16_rn(v); break;
  case fw_r_64f: ((double *)p)[i] = v; break;
  }
}

/* The operand of batch q: its base (pointer arrays hold one per batch). */
__device__ static const void *operand(const void *base, int ptr_array, int q, long long stride,
                                      int type) {
  if (ptr_array) return ((const void *const *)base)[q];
  int size = type == fw_r_64f ? 8 : type == fw_r_32f ? 4 : 2;
  return (const char *)base + q * stride * size;
}

/* One output element per thread, grid-stride over m*n and over the batch. */
#define FW_LOOP(body)                                                                   \
  long long mn = (long long)p.m * p.n;                                                  \
  for (int q = blockIdx.y; q < p.batch; q += gridDim.y) {                               \
    const void *A = operand(p.a, p.ptr_array, q, p.a_q, p.a_type);                     \
    const void *B = operand(p.b, p.ptr_array, q, p.b_q, p.b_type);                     \
    const void *C = p.c ? operand(p.c, p.ptr_array, q, p.c_q, p.c_type) : 0;           \
    void *D = (void *)operand(p.d, p.ptr_array, q, p.d_q, p.d_type);                    \
    const void *bias = p.bias ? (const char *)p.bias + q * p.bias_q *                   \
        (p.bias_type == fw_r_64f ? 8 : p.bias_type == fw_r_32f ? 4 : 2) : 0;            \
    for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < mn;        \
         e += (long long)gridDim.x * blockDim.x) {                                      \
      int i = (int)(e % p.m), j = (int)(e / p.m);                                       \
      body                                                                              \
    }                                                                                   \
  }

extern "C" __global__ void fw_gemm_f32(fw_gemm_args p) {
  float alpha = p.alpha_p ? ld_f32(p.alpha_p, 0, p.scale_type) : (float)p.alpha;
  float beta = p.beta_p ? ld_f32(p.beta_p, 0, p.scale_type) : (float)p.beta;
  FW_LOOP({
    float acc = 0;
    if (alpha != 0)
      for (int l = 0; l < p.k; l++)
        acc += ld_f32(A, i * p.a_r + l * p.a_c, p.a_type) *
               ld_f32(B, l * p.b_r + j * p.b_c, p.b_type);
    float v = alpha * acc;
    if (beta != 0) v += beta * ld_f32(C, i * p.c_r + j * p.c_c, p.c_type);
    if (bias) v += ld_f32(bias, i, p.bias_type);
    if (p.relu && !(v > 0)) v = 0;
    st_f32(D, i * p.d_r + j * p.d_c, p.d_type, v);
  })
}

extern "C" __global__ void fw_gemm_f64(fw_gemm_args p) {
  double alpha = p.alpha_p ? ld_f64(p.alpha_p, 0, p.scale_type) : p.alpha;
  double beta = p.beta_p ? ld_f64(p.beta_p, 0, p.scale_type) : p.beta;
  FW_LOOP({
    double acc = 0;
    if (alpha != 0)
      for (int l = 0; l < p.k; l++)
        acc += ld_f64(A, i * p.a_r + l * p.a_c, p.a_type) *
               ld_f64(B, l * p.b_r + j * p.b_c, p.b_type);
    double v = alpha * acc;
    if (beta != 0) v += beta * ld_f64(C, i * p.c_r + j * p.c_c, p.c_type);
    if (bias) v += ld_f64(bias, i, p.bias_type);
    if (p.relu && !(v > 0)) v = 0;
    st(D, i * p.d_r + j * p.d_c, p.d_type, v);
  })
}

/* CUBLAS_COMPUTE_16F: the products accumulate in f16 (fma rounds once per
 * step), alpha and beta are f16; the operands are f16 (cuBLAS requires it). */
extern "C" __global__ void fw_gemm_f16(fw_gemm_args p) {
  __half alpha = p.alpha_p ? ((const __half *)p.alpha_p)[0] : __double2half(p.alpha);
  __half beta = p.beta_p ? ((const __half *)p.beta_p)[0] : __double2half(p.beta);
  __half zero = __float2half(0.0f);
  FW_LOOP({
    __half acc = zero;
    if (!__heq(alpha, zero))
      for (int l = 0; l < p.k; l++)
        acc = __hfma(((const __half *)A)[i * p.a_r + l * p.a_c],
                     ((const __half *)B)[l * p.b_r + j * p.b_c], acc);
    __half v = __hmul(alpha, acc);
    if (!__heq(beta, zero)) v = __hfma(beta, ((const __half *)C)[i * p.c_r + j * p.c_c], v);
    if (bias) v = __hadd(v, ((const __half *)bias)[i]);
    if (p.relu && !__hgt(v, zero)) v = zero;
    ((__half *)D)[i * p.d_r + j * p.d_c] = v;
  })
}
