// tests/libs/cublas.cu: cuBLAS level 1, 2 and 3 against plain C on the
// host: saxpy, sdot, snrm2, sgemv, sgemm (NN, TN, NT), dgemm, gemmEx with
// f16 inputs and f32 compute, sgemmStridedBatched; the program launches
// kernels of its own before and after the library's.  Sizes are tiny (the
// emulator runs every thread).  Each operation runs on its own and prints
// "cublas: op NAME failed" when it does; the program prints "cublas: PASS"
// when none did (tests/libs/run_lib.sh compares the failures with the
// SASS-only kernels of tests/libs/sass_only.txt).
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* a failing call fails the operation it is part of (returns 1) */
#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); return 1; } } while (0)

static int bad;   /* mismatches of the current operation */

static void close_to(const char *what, int i, double got, double want, double tol) {
  if (!(fabs(got - want) <= tol * (1.0 + fabs(want)))) {
    if (bad < 20) printf("%s[%d]: got %.9g, want %.9g\n", what, i, got, want);
    bad++;
  }
}

__global__ void fill(float *a, int n, float base) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = base + (float)(i % 7) * 0.25f;
}

__global__ void scale(float *a, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= s;
}

/* small exact-ish values: multiples of 1/8 in [-1, 1] */
static float val(int i, int salt) { return (float)(((i * 37 + salt * 11) % 17) - 8) / 8.0f; }

/* C = alpha op(A) op(B) + beta C, column major, on the host in double */
static void ref_gemm(char ta, char tb, int m, int n, int k, double alpha, const float *A, int lda,
                     const float *B, int ldb, double beta, const float *C0, float *C, int ldc) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) {
        double a = ta == 'N' ? A[i + p * lda] : A[p + i * lda];
        double b = tb == 'N' ? B[p + j * ldb] : B[j + p * ldb];
        s += a * b;
      }
      C[i + j * ldc] = (float)(alpha * s + beta * C0[i + j * ldc]);
    }
}

static float *dev_copy(const float *h, int n) {
  float *d = NULL;
  if (cudaMalloc(&d, n * sizeof *d) || cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice)) {
    printf("dev_copy: %d floats failed\n", n);
    exit(1);
  }
  return d;
}

static cublasHandle_t h;
static const int n = 40;
static float *dx, *dy, hx[40], hy[40];

static int sgemm(cublasOperation_t ta, cublasOperation_t tb, const char *name) {
  const int m = 5, nn = 4, k = 3;
  float A[5 * 5], B[5 * 5], C0[5 * 4], C[5 * 4], R[5 * 4];
  for (int i = 0; i < 25; i++) { A[i] = val(i, 1); B[i] = val(i, 2); }
  for (int i = 0; i < m * nn; i++) C0[i] = val(i, 3);
  int lda = ta == CUBLAS_OP_N ? m : k, ldb = tb == CUBLAS_OP_N ? k : nn;
  float *dA = dev_copy(A, 25), *dB = dev_copy(B, 25), *dC = dev_copy(C0, m * nn);
  float alpha = 1.5f, beta = -0.5f;
  CHECK(cublasSgemm(h, ta, tb, m, nn, k, &alpha, dA, lda, dB, ldb, &beta, dC, m));
  CHECK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
  ref_gemm(ta == CUBLAS_OP_N ? 'N' : 'T', tb == CUBLAS_OP_N ? 'N' : 'T', m, nn, k, alpha, A, lda,
           B, ldb, beta, C0, R, m);
  for (int i = 0; i < m * nn; i++) close_to(name, i, C[i], R[i], 1e-6);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}
static int sgemm_nn(void) { return sgemm(CUBLAS_OP_N, CUBLAS_OP_N, "sgemm NN"); }
static int sgemm_tn(void) { return sgemm(CUBLAS_OP_T, CUBLAS_OP_N, "sgemm TN"); }
static int sgemm_nt(void) { return sgemm(CUBLAS_OP_N, CUBLAS_OP_T, "sgemm NT"); }

/* level 1 on x (the program's own kernel filled it) and y */
static int saxpy(void) {
  float alpha = 0.75f, out[40];
  CHECK(cublasSaxpy(h, n, &alpha, dx, 1, dy, 1));
  CHECK(cudaMemcpy(out, dy, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) close_to("saxpy", i, out[i], 0.75 * hx[i] + hy[i], 1e-7);
  for (int i = 0; i < n; i++) hy[i] = out[i];   /* y for sdot */
  return 0;
}

static int sdot(void) {
  float dot = 0;
  CHECK(cublasSdot(h, n, dx, 1, dy, 1, &dot));
  double r = 0;
  for (int i = 0; i < n; i++) r += (double)hx[i] * hy[i];
  close_to("sdot", 0, dot, r, 1e-6);
  return 0;
}

static int snrm2(void) {
  float nrm = 0;
  CHECK(cublasSnrm2(h, n, dx, 1, &nrm));
  double r = 0;
  for (int i = 0; i < n; i++) r += (double)hx[i] * hx[i];
  close_to("snrm2", 0, nrm, sqrt(r), 1e-6);
  return 0;
}

/* y = alpha A x + beta y, A 6x5 column major */
static int sgemv(void) {
  const int m = 6, k = 5;
  float A[30], x[5], y0[6], y[6];
  for (int i = 0; i < 30; i++) A[i] = val(i, 7);
  for (int i = 0; i < k; i++) x[i] = val(i, 8);
  for (int i = 0; i < m; i++) y0[i] = val(i, 9);
  float *dA = dev_copy(A, 30), *dxx = dev_copy(x, 5), *dyy = dev_copy(y0, 6);
  float a = 2.0f, b = 0.5f;
  CHECK(cublasSgemv(h, CUBLAS_OP_N, m, k, &a, dA, m, dxx, 1, &b, dyy, 1));
  CHECK(cudaMemcpy(y, dyy, sizeof y, cudaMemcpyDeviceToHost));
  for (int i = 0; i < m; i++) {
    double s = 0;
    for (int j = 0; j < k; j++) s += (double)A[i + j * m] * x[j];
    close_to("sgemv", i, y[i], 2.0 * s + 0.5 * y0[i], 1e-6);
  }
  cudaFree(dA); cudaFree(dxx); cudaFree(dyy);
  return 0;
}

static int dgemm(void) {
  const int m = 4, nn = 3, k = 5;
  double A[20], B[15], C[12], R[12];
  for (int i = 0; i < 20; i++) A[i] = val(i, 11) / 3.0;
  for (int i = 0; i < 15; i++) B[i] = val(i, 12) / 7.0;
  double *dA, *dB, *dC;
  CHECK(cudaMalloc(&dA, sizeof A)); CHECK(cudaMalloc(&dB, sizeof B)); CHECK(cudaMalloc(&dC, sizeof C));
  CHECK(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
  double one = 1, zero = 0;
  CHECK(cublasDgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, nn, k, &one, dA, m, dB, k, &zero, dC, m));
  CHECK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
  for (int j = 0; j < nn; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int p = 0; p < k; p++) s += A[i + p * m] * B[p + j * k];
      R[i + j * m] = s;
    }
  for (int i = 0; i < 12; i++) close_to("dgemm", i, C[i], R[i], 1e-14);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

/* f16 inputs (exact in half: multiples of 1/8), f32 output and compute */
static int gemm_ex_f16(void) {
  const int m = 8, nn = 8, k = 16;
  __half A[128], B[128];
  float Af[128], Bf[128], C[64], C0[64], R[64];
  for (int i = 0; i < 128; i++) {
    Af[i] = val(i, 13); Bf[i] = val(i, 14);
    A[i] = __float2half(Af[i]); B[i] = __float2half(Bf[i]);
  }
  for (int i = 0; i < 64; i++) C0[i] = 0;
  __half *dA, *dB;
  float *dC;
  CHECK(cudaMalloc(&dA, sizeof A)); CHECK(cudaMalloc(&dB, sizeof B)); CHECK(cudaMalloc(&dC, sizeof C));
  CHECK(cudaMemcpy(dA, A, sizeof A, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
  float one = 1, zero = 0;
  CHECK(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, m, nn, k, &one, dA, CUDA_R_16F, m, dB,
                     CUDA_R_16F, k, &zero, dC, CUDA_R_32F, m, CUBLAS_COMPUTE_32F,
                     CUBLAS_GEMM_DEFAULT));
  CHECK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
  ref_gemm('N', 'N', m, nn, k, 1, Af, m, Bf, k, 0, C0, R, m);
  for (int i = 0; i < 64; i++) close_to("gemmEx f16", i, C[i], R[i], 1e-6);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

static int sgemm_strided_batched(void) {
  const int m = 3, nn = 2, k = 4, batch = 3;
  float A[36], B[24], C0[18], C[18], R[18];
  for (int i = 0; i < 36; i++) A[i] = val(i, 15);
  for (int i = 0; i < 24; i++) B[i] = val(i, 16);
  for (int i = 0; i < 18; i++) C0[i] = val(i, 17);
  float *dA = dev_copy(A, 36), *dB = dev_copy(B, 24), *dC = dev_copy(C0, 18);
  float a = 1.0f, b = 1.0f;
  CHECK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, m, nn, k, &a, dA, m, m * k, dB, k,
                                  k * nn, &b, dC, m, m * nn, batch));
  CHECK(cudaMemcpy(C, dC, sizeof C, cudaMemcpyDeviceToHost));
  for (int q = 0; q < batch; q++)
    ref_gemm('N', 'N', m, nn, k, 1, A + q * m * k, m, B + q * k * nn, k, 1, C0 + q * m * nn,
             R + q * m * nn, m);
  for (int i = 0; i < 18; i++) close_to("sgemmStridedBatched", i, C[i], R[i], 1e-6);
  cudaFree(dA); cudaFree(dB); cudaFree(dC);
  return 0;
}

/* the program's own kernels, before and after the library's */
static int own_fill(void) {
  fill<<<2, 32>>>(dx, n, 1.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(hx, dx, sizeof hx, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) close_to("fill", i, hx[i], 1.0 + (i % 7) * 0.25, 0);
  return 0;
}

static int own_scale(void) {
  float out[40];
  scale<<<2, 32>>>(dx, n, 2.0f);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(out, dx, sizeof out, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) close_to("scale", i, out[i], 2.0 * hx[i], 0);
  return 0;
}

static int create(void) { CHECK(cublasCreate(&h)); return 0; }
static int destroy(void) { CHECK(cublasDestroy(h)); return 0; }

int main(void) {
  static const struct { const char *name; int (*fn)(void); } ops[] = {
      {"own kernel before", own_fill}, {"cublasCreate", create}, {"saxpy", saxpy},
      {"sdot", sdot}, {"snrm2", snrm2}, {"sgemv", sgemv}, {"sgemm NN", sgemm_nn},
      {"sgemm TN", sgemm_tn}, {"sgemm NT", sgemm_nt}, {"dgemm", dgemm},
      {"gemmEx f16", gemm_ex_f16}, {"sgemmStridedBatched", sgemm_strided_batched},
      {"cublasDestroy", destroy}, {"own kernel after", own_scale}};
  if (cudaMalloc(&dx, n * sizeof(float))) return 1;
  for (int i = 0; i < n; i++) hy[i] = val(i, 5);
  dy = dev_copy(hy, n);
  int failed = 0;
  for (unsigned i = 0; i < sizeof ops / sizeof ops[0]; i++) {
    bad = 0;
    if (ops[i].fn() || bad) {
      printf("cublas: op %s failed\n", ops[i].name);
      failed++;
      if (i < 2) break;   /* nothing else can run */
    }
  }
  cudaFree(dx); cudaFree(dy);
  if (failed) { printf("cublas: %d operations failed\n", failed); return 1; }
  printf("cublas: PASS\n");
  return 0;
}
