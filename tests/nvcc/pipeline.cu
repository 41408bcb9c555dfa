// tests/nvcc/pipeline.cu: cuda::barrier, cuda::memcpy_async and a two-stage
// cuda::pipeline (libcu++: mbarrier.*, cp.async, cp.async.mbarrier.arrive),
// and a plain kernel in the same module, checked against host C
// (run_cccl.py builds it with nvcc at test time).
#include <cuda/barrier>
#include <cuda/pipeline>
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;

// A plain kernel in the same module: must run whatever the others need.
__global__ void plain(int *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = i * 2 + 1;
}

// Block-wide cuda::barrier: each phase every thread writes, arrives and waits,
// then reads a neighbour's value.
__global__ void barrier_kernel(const int *in, int *out, int rounds) {
  __shared__ int buf[256];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  int t = threadIdx.x, v = in[blockIdx.x * blockDim.x + t];
  for (int r = 0; r < rounds; r++) {
    buf[t] = v;
    bar.arrive_and_wait();
    v = v + buf[(t + 1) % blockDim.x];
    bar.arrive_and_wait();
  }
  out[blockIdx.x * blockDim.x + t] = v;
}

// cuda::memcpy_async of tiles into shared memory through a barrier, then sum.
__global__ void memcpy_async_kernel(const int *in, int *out, int tiles) {
  __shared__ int tile[128];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ cuda::barrier<cuda::thread_scope_block> bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  int acc = 0;
  for (int k = 0; k < tiles; k++) {
    cuda::memcpy_async(block, tile, in + (blockIdx.x * tiles + k) * 128, sizeof(int) * 128, bar);
    bar.arrive_and_wait();
    acc += tile[threadIdx.x] * (k + 1);
    bar.arrive_and_wait();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

// A two-stage cuda::pipeline (producer/consumer in every thread).
__global__ void pipeline_kernel(const int *in, int *out, int tiles) {
  constexpr int stages = 2;
  __shared__ int buf[stages][128];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, stages> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  int acc = 0;
  for (int fetch = 0, use = 0; use < tiles; use++) {
    for (; fetch < tiles && fetch < use + stages; fetch++) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % stages], in + (blockIdx.x * tiles + fetch) * 128,
                         sizeof(int) * 128, pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc += buf[use % stages][(threadIdx.x * 5) % 128] - use;
    pipe.consumer_release();
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

static int check(const char *what, const int *got, const int *want, int n) {
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) {
      printf("%s[%d] = %d, expected %d\n", what, i, got[i], want[i]);
      return 1;
    }
  return 0;
}

int main() {
  const int blocks = 3, nt = 128, tiles = 5, rounds = 4, n = blocks * nt;
  static int hin[blocks * tiles * 128], hout[n], want[n];
  for (int i = 0; i < blocks * tiles * 128; i++) hin[i] = (i * 37) % 1001 - 500;
  int *din, *dout;
  cudaMalloc(&din, sizeof hin);
  cudaMalloc(&dout, sizeof hout);
  cudaMemcpy(din, hin, sizeof hin, cudaMemcpyHostToDevice);
  int bad = 0;

  plain<<<blocks, nt>>>(dout, n);
  cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; i++) want[i] = 2 * i + 1;
  bad += check("plain", hout, want, n);

  barrier_kernel<<<blocks, nt>>>(din, dout, rounds);
  cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; b++) {
    int v[nt], w[nt];
    for (int t = 0; t < nt; t++) v[t] = hin[b * nt + t];
    for (int r = 0; r < rounds; r++) {
      for (int t = 0; t < nt; t++) w[t] = v[t] + v[(t + 1) % nt];
      for (int t = 0; t < nt; t++) v[t] = w[t];
    }
    for (int t = 0; t < nt; t++) want[b * nt + t] = v[t];
  }
  bad += check("barrier", hout, want, n);

  memcpy_async_kernel<<<blocks, nt>>>(din, dout, tiles);
  cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; b++)
    for (int t = 0; t < nt; t++) {
      int acc = 0;
      for (int k = 0; k < tiles; k++) acc += hin[(b * tiles + k) * 128 + t] * (k + 1);
      want[b * nt + t] = acc;
    }
  bad += check("memcpy_async", hout, want, n);

  pipeline_kernel<<<blocks, nt>>>(din, dout, tiles);
  cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; b++)
    for (int t = 0; t < nt; t++) {
      int acc = 0;
      for (int k = 0; k < tiles; k++) acc += hin[(b * tiles + k) * 128 + (t * 5) % 128] - k;
      want[b * nt + t] = acc;
    }
  bad += check("pipeline", hout, want, n);

  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) { printf("error: %s\n", cudaGetErrorString(e)); bad++; }
  if (bad) { printf("pipeline: FAIL\n"); return 1; }
  printf("pipeline: PASS\n");
  return 0;
}
