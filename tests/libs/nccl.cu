// tests/libs/nccl.cu: NCCL with one rank (ncclCommInitAll on device 0):
// ncclAllReduce (sum, f32 and i32) and ncclBroadcast, each checked against
// plain C on the host (with one rank a sum is the input itself, and a
// broadcast from rank 0 copies it: NCCL's kernels still run).  Prints
// "nccl: PASS".
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); return 1; } } while (0)

enum { N = 1000 };
static int bad;

static int allreduce_f32(ncclComm_t c, cudaStream_t s) {
  float h[N], o[N], *d, *r;
  for (int i = 0; i < N; i++) h[i] = (float)(i % 37) * 0.5f - 3.0f;
  CHECK(cudaMalloc(&d, sizeof h)); CHECK(cudaMalloc(&r, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(ncclAllReduce(d, r, N, ncclFloat, ncclSum, c, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(o, r, sizeof o, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    if (o[i] != h[i]) { if (bad++ < 10) printf("allreduce f32[%d] = %g, want %g\n", i, o[i], h[i]); }
  cudaFree(d); cudaFree(r);
  return 0;
}

static int allreduce_i32_inplace(ncclComm_t c, cudaStream_t s) {
  int h[N], o[N], *d;
  for (int i = 0; i < N; i++) h[i] = i * 7 - 3000;
  CHECK(cudaMalloc(&d, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(ncclAllReduce(d, d, N, ncclInt32, ncclSum, c, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(o, d, sizeof o, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    if (o[i] != h[i]) { if (bad++ < 10) printf("allreduce i32[%d] = %d, want %d\n", i, o[i], h[i]); }
  cudaFree(d);
  return 0;
}

static int broadcast(ncclComm_t c, cudaStream_t s) {
  unsigned h[N], o[N], *d, *r;
  for (int i = 0; i < N; i++) h[i] = 0x9e3779b9u * (unsigned)i;
  CHECK(cudaMalloc(&d, sizeof h)); CHECK(cudaMalloc(&r, sizeof h));
  CHECK(cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice));
  CHECK(cudaMemset(r, 0, sizeof h));
  CHECK(ncclBroadcast(d, r, N, ncclUint32, 0, c, s));
  CHECK(cudaStreamSynchronize(s));
  CHECK(cudaMemcpy(o, r, sizeof o, cudaMemcpyDeviceToHost));
  for (int i = 0; i < N; i++)
    if (o[i] != h[i]) { if (bad++ < 10) printf("broadcast[%d] = %u, want %u\n", i, o[i], h[i]); }
  cudaFree(d); cudaFree(r);
  return 0;
}

int main(void) {
  ncclComm_t c;
  int dev = 0;
  if (ncclCommInitAll(&c, 1, &dev)) { printf("nccl: op ncclCommInitAll failed\n"); return 1; }
  cudaStream_t s;
  if (cudaStreamCreate(&s)) return 1;
  static const struct { const char *name; int (*fn)(ncclComm_t, cudaStream_t); } ops[] = {
      {"allreduce sum f32", allreduce_f32}, {"allreduce sum i32 in place", allreduce_i32_inplace},
      {"broadcast", broadcast}};
  int failed = 0;
  for (int i = 0; i < 3; i++) {
    bad = 0;
    if (ops[i].fn(c, s) || bad) { printf("nccl: op %s failed\n", ops[i].name); failed++; }
  }
  cudaStreamDestroy(s);
  ncclCommDestroy(c);
  if (failed) { printf("nccl: %d operations failed\n", failed); return 1; }
  printf("nccl: PASS\n");
  return 0;
}
