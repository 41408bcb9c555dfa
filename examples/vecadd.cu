// examples/vecadd.cu: the bundled example that README's first command runs.
// c[i] = a[i] + b[i] over n floats, checked on the host.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__global__ void vecadd(const float *a, const float *b, float *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

int main() {
  const int n = 1000;
  size_t bytes = n * sizeof(float);
  float *a = (float *)malloc(bytes), *b = (float *)malloc(bytes), *c = (float *)malloc(bytes);
  for (int i = 0; i < n; i++) { a[i] = (float)i; b[i] = 0.5f * (float)i; }
  float *da, *db, *dc;
  if (cudaMalloc(&da, bytes) || cudaMalloc(&db, bytes) || cudaMalloc(&dc, bytes)) {
    fprintf(stderr, "vecadd: cudaMalloc failed\n");
    return 1;
  }
  cudaMemcpy(da, a, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b, bytes, cudaMemcpyHostToDevice);
  vecadd<<<(n + 255) / 256, 256>>>(da, db, dc, n);
  cudaError_t err = cudaMemcpy(c, dc, bytes, cudaMemcpyDeviceToHost);
  if (err != cudaSuccess) {
    fprintf(stderr, "vecadd: %s\n", cudaGetErrorString(err));
    return 1;
  }
  for (int i = 0; i < n; i++)
    if (c[i] != 1.5f * (float)i) {
      fprintf(stderr, "vecadd: c[%d] = %g, want %g\n", i, c[i], 1.5f * (float)i);
      return 1;
    }
  printf("vecadd: %d elements OK\n", n);
  return 0;
}
