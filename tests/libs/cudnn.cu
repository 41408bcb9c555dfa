// tests/libs/cudnn.cu: cuDNN 9's legacy API against plain C on the host:
// cudnnCreate, cudnnConvolutionForward (NCHW f32, 1x2x5x5 input, 3x2x3x3
// filters, padding 1, the IMPLICIT_GEMM algorithm) and cudnnSoftmaxForward
// (ACCURATE, per channel).  Each operation prints "cudnn: op NAME failed"
// when it fails (tests/libs/run_lib.py, sass_only.txt); "cudnn: PASS" when
// none did.
#include <cuda_runtime.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); return 1; } } while (0)

static cudnnHandle_t h;
static int bad;

enum { N = 1, C = 2, H = 5, W = 5, K = 3, R = 3, S = 3 };

static int conv(void) {
  float x[N * C * H * W], w[K * C * R * S], y[N * K * H * W], ref[N * K * H * W];
  for (int i = 0; i < N * C * H * W; i++) x[i] = (float)((i * 7) % 11) / 4.0f - 1.0f;
  for (int i = 0; i < K * C * R * S; i++) w[i] = (float)((i * 5) % 9) / 8.0f - 0.5f;
  /* cross-correlation (CUDNN_CROSS_CORRELATION), padding 1, stride 1 */
  for (int k = 0; k < K; k++)
    for (int p = 0; p < H; p++)
      for (int q = 0; q < W; q++) {
        double s = 0;
        for (int c = 0; c < C; c++)
          for (int r = 0; r < R; r++)
            for (int t = 0; t < S; t++) {
              int ih = p + r - 1, iw = q + t - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              s += (double)x[(c * H + ih) * W + iw] * w[((k * C + c) * R + r) * S + t];
            }
        ref[(k * H + p) * W + q] = (float)s;
      }
  float *dx, *dw, *dy;
  CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dw, sizeof w)); CHECK(cudaMalloc(&dy, sizeof y));
  CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dw, w, sizeof w, cudaMemcpyHostToDevice));
  cudnnTensorDescriptor_t xd, yd;
  cudnnFilterDescriptor_t wd;
  cudnnConvolutionDescriptor_t cd;
  CHECK(cudnnCreateTensorDescriptor(&xd)); CHECK(cudnnCreateTensorDescriptor(&yd));
  CHECK(cudnnCreateFilterDescriptor(&wd)); CHECK(cudnnCreateConvolutionDescriptor(&cd));
  CHECK(cudnnSetTensor4dDescriptor(xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W));
  CHECK(cudnnSetFilter4dDescriptor(wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, R, S));
  CHECK(cudnnSetConvolution2dDescriptor(cd, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                        CUDNN_DATA_FLOAT));
  int on, oc, oh, ow;
  CHECK(cudnnGetConvolution2dForwardOutputDim(cd, xd, wd, &on, &oc, &oh, &ow));
  if (on != N || oc != K || oh != H || ow != W) { printf("conv: output %dx%dx%dx%d\n", on, oc, oh, ow); return 1; }
  CHECK(cudnnSetTensor4dDescriptor(yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W));
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  size_t ws = 0;
  CHECK(cudnnGetConvolutionForwardWorkspaceSize(h, xd, wd, cd, yd, algo, &ws));
  void *work = NULL;
  if (ws) CHECK(cudaMalloc(&work, ws));
  float one = 1, zero = 0;
  CHECK(cudnnConvolutionForward(h, &one, xd, dx, wd, dw, cd, algo, work, ws, &zero, yd, dy));
  CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N * K * H * W; i++)
    if (!(fabs(y[i] - ref[i]) <= 1e-5 * (1 + fabs(ref[i])))) {
      if (bad++ < 10) printf("conv[%d] = %g, want %g\n", i, y[i], ref[i]);
    }
  cudaFree(dx); cudaFree(dw); cudaFree(dy); if (work) cudaFree(work);
  return 0;
}

static int softmax(void) {
  enum { SN = 2, SC = 5 };
  float x[SN * SC], y[SN * SC], ref[SN * SC];
  for (int i = 0; i < SN * SC; i++) x[i] = (float)(i % 7) * 0.75f - 2.0f;
  for (int n = 0; n < SN; n++) {
    double m = -1e30, s = 0;
    for (int c = 0; c < SC; c++) m = fmax(m, x[n * SC + c]);
    for (int c = 0; c < SC; c++) s += exp(x[n * SC + c] - m);
    for (int c = 0; c < SC; c++) ref[n * SC + c] = (float)(exp(x[n * SC + c] - m) / s);
  }
  float *dx, *dy;
  CHECK(cudaMalloc(&dx, sizeof x)); CHECK(cudaMalloc(&dy, sizeof y));
  CHECK(cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice));
  cudnnTensorDescriptor_t d;
  CHECK(cudnnCreateTensorDescriptor(&d));
  CHECK(cudnnSetTensor4dDescriptor(d, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, SN, SC, 1, 1));
  float one = 1, zero = 0;
  CHECK(cudnnSoftmaxForward(h, CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_CHANNEL, &one, d, dx,
                            &zero, d, dy));
  CHECK(cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost));
  for (int i = 0; i < SN * SC; i++)
    if (!(fabs(y[i] - ref[i]) <= 1e-5)) {
      if (bad++ < 10) printf("softmax[%d] = %g, want %g\n", i, y[i], ref[i]);
    }
  cudaFree(dx); cudaFree(dy);
  return 0;
}

int main(void) {
  if (cudnnCreate(&h)) { printf("cudnn: op cudnnCreate failed\n"); return 1; }
  static const struct { const char *name; int (*fn)(void); } ops[] = {
      {"convolution forward", conv}, {"softmax forward", softmax}};
  int failed = 0;
  for (int i = 0; i < 2; i++) {
    bad = 0;
    if (ops[i].fn() || bad) { printf("cudnn: op %s failed\n", ops[i].name); failed++; }
  }
  cudnnDestroy(h);
  if (failed) { printf("cudnn: %d operations failed\n", failed); return 1; }
  printf("cudnn: PASS\n");
  return 0;
}
