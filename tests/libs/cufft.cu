// tests/libs/cufft.cu: cuFFT 1-D transforms against a direct DFT computed
// on the host in double: C2C forward of sizes 64 (a power of two) and 1000
// (2^3 5^3: mixed radix), and R2C of size 64 (the n/2+1 non-redundant
// outputs).  Tolerance relative to the input's L1 norm (single precision).
// Prints "cufft: PASS".
#include <cuda_runtime.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static int bad;

/* X[k] = sum_j x[j] exp(-2 pi i j k / n) */
static void dft(const double *re, const double *im, int n, int k, double *ore, double *oim) {
  double sr = 0, si = 0;
  for (int j = 0; j < n; j++) {
    double a = -2.0 * M_PI * (double)(((long)j * k) % n) / n;
    sr += re[j] * cos(a) - im[j] * sin(a);
    si += re[j] * sin(a) + im[j] * cos(a);
  }
  *ore = sr;
  *oim = si;
}

static void c2c(int n) {
  cufftComplex *h = (cufftComplex *)malloc(n * sizeof *h), *o = (cufftComplex *)malloc(n * sizeof *o);
  double *re = (double *)malloc(n * sizeof(double)), *im = (double *)malloc(n * sizeof(double));
  double l1 = 0;
  for (int j = 0; j < n; j++) {
    h[j].x = (float)sin(0.1 * j) + (float)(j % 3) * 0.25f;
    h[j].y = (float)cos(0.37 * j) - 0.5f;
    re[j] = h[j].x;
    im[j] = h[j].y;
    l1 += fabs(re[j]) + fabs(im[j]);
  }
  cufftComplex *d;
  CHECK(cudaMalloc(&d, n * sizeof *d));
  CHECK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
  cufftHandle p;
  CHECK(cufftPlan1d(&p, n, CUFFT_C2C, 1));
  CHECK(cufftExecC2C(p, d, d, CUFFT_FORWARD));
  CHECK(cudaMemcpy(o, d, n * sizeof *o, cudaMemcpyDeviceToHost));
  for (int k = 0; k < n; k++) {
    double wr, wi;
    dft(re, im, n, k, &wr, &wi);
    if (!(fabs(o[k].x - wr) <= 1e-5 * l1 && fabs(o[k].y - wi) <= 1e-5 * l1)) {
      if (bad < 20) printf("c2c %d: X[%d] = (%g, %g), want (%g, %g)\n", n, k, o[k].x, o[k].y, wr, wi);
      bad++;
    }
  }
  CHECK(cufftDestroy(p));
  cudaFree(d);
  free(h); free(o); free(re); free(im);
}

static void r2c(int n) {
  float *h = (float *)malloc(n * sizeof *h);
  cufftComplex *o = (cufftComplex *)malloc((n / 2 + 1) * sizeof *o);
  double *re = (double *)malloc(n * sizeof(double)), *im = (double *)calloc(n, sizeof(double));
  double l1 = 0;
  for (int j = 0; j < n; j++) {
    h[j] = (float)((j * 13) % 9) / 4.0f - 1.0f;
    re[j] = h[j];
    l1 += fabs(re[j]);
  }
  float *d;
  cufftComplex *dout;
  CHECK(cudaMalloc(&d, n * sizeof *d));
  CHECK(cudaMalloc(&dout, (n / 2 + 1) * sizeof *dout));
  CHECK(cudaMemcpy(d, h, n * sizeof *d, cudaMemcpyHostToDevice));
  cufftHandle p;
  CHECK(cufftPlan1d(&p, n, CUFFT_R2C, 1));
  CHECK(cufftExecR2C(p, d, dout));
  CHECK(cudaMemcpy(o, dout, (n / 2 + 1) * sizeof *o, cudaMemcpyDeviceToHost));
  for (int k = 0; k <= n / 2; k++) {
    double wr, wi;
    dft(re, im, n, k, &wr, &wi);
    if (!(fabs(o[k].x - wr) <= 1e-5 * l1 && fabs(o[k].y - wi) <= 1e-5 * l1)) {
      if (bad < 20) printf("r2c %d: X[%d] = (%g, %g), want (%g, %g)\n", n, k, o[k].x, o[k].y, wr, wi);
      bad++;
    }
  }
  CHECK(cufftDestroy(p));
  cudaFree(d); cudaFree(dout);
  free(h); free(o); free(re); free(im);
}

int main(void) {
  c2c(64);
  c2c(1000);
  r2c(64);
  if (bad) { printf("cufft: %d mismatches\n", bad); return 1; }
  printf("cufft: PASS\n");
  return 0;
}
