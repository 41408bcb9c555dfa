// tests/libs/cub.cu: CUB (header-only, from the toolkit's CCCL) built for
// one architecture and run with the device reporting another: CUB's
// dispatch reads CU_FUNC_ATTRIBUTE_PTX_VERSION of its kernels and refuses
// to launch (cudaErrorInvalidDeviceFunction) unless it names an
// architecture the program was compiled for, so the attribute must be the
// module's PTX target, not the reported capability (issue 18, blocker 7).
// cub::DeviceReduce::Sum and cub::DeviceRadixSort::SortPairs against plain
// C on the host.  Prints "cub: PASS".
#include <cub/cub.cuh>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static int cmp_u32(const void *a, const void *b) {
  unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
  return x < y ? -1 : x > y;
}

int main(void) {
  const int n = 1000;
  int *h = (int *)malloc(n * sizeof(int));
  long long want = 0;
  for (int i = 0; i < n; i++) { h[i] = (i * 7919) % 1013 - 500; want += h[i]; }
  int *d_in, *d_out;
  CHECK(cudaMalloc(&d_in, n * sizeof(int)));
  CHECK(cudaMalloc(&d_out, sizeof(int)));
  CHECK(cudaMemcpy(d_in, h, n * sizeof(int), cudaMemcpyHostToDevice));
  void *tmp = NULL;
  size_t tmp_bytes = 0;
  CHECK(cub::DeviceReduce::Sum(tmp, tmp_bytes, d_in, d_out, n));
  CHECK(cudaMalloc(&tmp, tmp_bytes));
  CHECK(cub::DeviceReduce::Sum(tmp, tmp_bytes, d_in, d_out, n));
  int got = 0;
  CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
  int bad = 0;
  if (got != (int)want) { printf("DeviceReduce::Sum = %d, want %lld\n", got, want); bad++; }
  cudaFree(tmp);

  /* radix sort of (key, value) pairs: keys scrambled, values the index */
  unsigned *k = (unsigned *)malloc(n * 4), *kv = (unsigned *)malloc(n * 8), *ko = (unsigned *)malloc(n * 4);
  unsigned *vo = (unsigned *)malloc(n * 4), *v = (unsigned *)malloc(n * 4);
  for (int i = 0; i < n; i++) { k[i] = (unsigned)(i * 2654435761u) >> 7; v[i] = i; }
  unsigned *dk, *dv, *dko, *dvo;
  CHECK(cudaMalloc(&dk, n * 4)); CHECK(cudaMalloc(&dv, n * 4));
  CHECK(cudaMalloc(&dko, n * 4)); CHECK(cudaMalloc(&dvo, n * 4));
  CHECK(cudaMemcpy(dk, k, n * 4, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dv, v, n * 4, cudaMemcpyHostToDevice));
  tmp = NULL;
  tmp_bytes = 0;
  CHECK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, dk, dko, dv, dvo, n));
  CHECK(cudaMalloc(&tmp, tmp_bytes));
  CHECK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, dk, dko, dv, dvo, n));
  CHECK(cudaMemcpy(ko, dko, n * 4, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(vo, dvo, n * 4, cudaMemcpyDeviceToHost));
  for (int i = 0; i < n; i++) { kv[2 * i] = k[i]; kv[2 * i + 1] = v[i]; }
  /* host reference: sort the keys; each value must carry its own key */
  memcpy(v, k, n * 4);
  qsort(v, n, 4, cmp_u32);
  for (int i = 0; i < n; i++) {
    if (ko[i] != v[i] || vo[i] >= (unsigned)n || k[vo[i]] != ko[i]) {
      if (bad < 10) printf("SortPairs[%d] = (%u, %u), want key %u\n", i, ko[i], vo[i], v[i]);
      bad++;
    }
  }
  /* an ASan build's leak check runs this program */
  cudaFree(tmp); cudaFree(d_in); cudaFree(d_out);
  cudaFree(dk); cudaFree(dv); cudaFree(dko); cudaFree(dvo);
  free(h); free(k); free(kv); free(ko); free(vo); free(v);
  if (bad) { printf("cub: %d failures\n", bad); return 1; }
  printf("cub: PASS\n");
  return 0;
}
