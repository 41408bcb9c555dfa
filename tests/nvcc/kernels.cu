// tests/nvcc/kernels.cu: a small CUDA program for tests/nvcc/check_nvcc.py.
// Three kernels (one a template, one with warp shuffles) so the PTX has
// several .entry directives with mangled names.
template <typename T>
__global__ void vadd(const T *a, const T *b, T *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void warp_sum(const float *in, float *out) {
  float v = in[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v;
}

template __global__ void vadd<float>(const float *, const float *, float *, int);
template __global__ void vadd<int>(const int *, const int *, int *, int);

int main() {
  float *d = nullptr;
  cudaMalloc(&d, 256 * sizeof(float));
  warp_sum<<<1, 64>>>(d, d);
  cudaFree(d);
  return 0;
}
