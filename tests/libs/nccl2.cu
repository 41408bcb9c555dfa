// tests/libs/nccl2.cu: NCCL with two ranks on two emulated devices from one
// host thread (ncclCommInitAll on devices 0 and 1; the harness runs it with
// PTXWAVE_EMU_DEVICES=2).  Each collective is issued for both ranks inside
// ncclGroupStart/End, so rank 0's kernel is launched before rank 1's and
// waits for it: it finishes only if work on the two devices runs at once
// (docs/runtime.md "Asynchronous streams on the emulator").  Checked against
// plain C on the host: ncclAllReduce (sum, f32, out of place; max, i32, in
// place) and ncclBroadcast from rank 1.  Prints "nccl2: PASS".
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); return 1; } } while (0)

enum { N = 1000 };
static int bad;

static void expect(const char *what, int rank, int i, double got, double want) {
  if (got != want && bad++ < 10) printf("%s: rank %d [%d] = %g, want %g\n", what, rank, i, got, want);
}

int main(void) {
  ncclComm_t c[2];
  int devs[2] = {0, 1}, ndev = 0;
  CHECK(cudaGetDeviceCount(&ndev));
  if (ndev < 2) { printf("nccl2: %d devices, want 2 (PTXWAVE_EMU_DEVICES=2)\n", ndev); return 1; }
  CHECK(ncclCommInitAll(c, 2, devs));
  cudaStream_t s[2];
  float *fin[2], *fout[2];
  int *iv[2];
  static float hf[2][N], of[N];
  static int hi[2][N], oi[N];
  for (int r = 0; r < 2; r++) {
    CHECK(cudaSetDevice(r));
    CHECK(cudaStreamCreate(&s[r]));
    CHECK(cudaMalloc(&fin[r], N * sizeof(float)));
    CHECK(cudaMalloc(&fout[r], N * sizeof(float)));
    CHECK(cudaMalloc(&iv[r], N * sizeof(int)));
    for (int i = 0; i < N; i++) {
      hf[r][i] = (float)(i % 13) * 0.25f + (float)r * 100.0f;   // exact in f32: the sum is too
      hi[r][i] = (i * 7 + r * 5) % 31 - 15;
    }
    CHECK(cudaMemcpy(fin[r], hf[r], N * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(iv[r], hi[r], N * sizeof(int), cudaMemcpyHostToDevice));
  }
  // sum, f32, out of place
  CHECK(ncclGroupStart());
  for (int r = 0; r < 2; r++) CHECK(ncclAllReduce(fin[r], fout[r], N, ncclFloat, ncclSum, c[r], s[r]));
  CHECK(ncclGroupEnd());
  // max, i32, in place
  CHECK(ncclGroupStart());
  for (int r = 0; r < 2; r++) CHECK(ncclAllReduce(iv[r], iv[r], N, ncclInt, ncclMax, c[r], s[r]));
  CHECK(ncclGroupEnd());
  for (int r = 0; r < 2; r++) {
    CHECK(cudaSetDevice(r));
    CHECK(cudaStreamSynchronize(s[r]));
    CHECK(cudaMemcpy(of, fout[r], sizeof of, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(oi, iv[r], sizeof oi, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) {
      expect("allreduce sum f32", r, i, of[i], hf[0][i] + hf[1][i]);
      expect("allreduce max i32", r, i, oi[i], hi[0][i] > hi[1][i] ? hi[0][i] : hi[1][i]);
    }
  }
  // broadcast rank 1's input to both ranks' outputs
  CHECK(ncclGroupStart());
  for (int r = 0; r < 2; r++) CHECK(ncclBroadcast(fin[r], fout[r], N, ncclFloat, 1, c[r], s[r]));
  CHECK(ncclGroupEnd());
  for (int r = 0; r < 2; r++) {
    CHECK(cudaSetDevice(r));
    CHECK(cudaStreamSynchronize(s[r]));
    CHECK(cudaMemcpy(of, fout[r], sizeof of, cudaMemcpyDeviceToHost));
    for (int i = 0; i < N; i++) expect("broadcast from rank 1", r, i, of[i], hf[1][i]);
  }
  for (int r = 0; r < 2; r++) {
    CHECK(cudaSetDevice(r));
    CHECK(cudaFree(fin[r]));
    CHECK(cudaFree(fout[r]));
    CHECK(cudaFree(iv[r]));
    CHECK(cudaStreamDestroy(s[r]));
    CHECK(ncclCommDestroy(c[r]));
  }
  printf(bad ? "nccl2: FAIL (%d mismatches)\n" : "nccl2: PASS\n", bad);
  return bad != 0;
}
