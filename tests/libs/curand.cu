// tests/libs/curand.cu: cuRAND's device generators (Philox4x32-10 and
// XORWOW) against its host generator (curandCreateGeneratorHost, which runs
// the same algorithms on the CPU): 32-bit words and uniform floats must be
// bit-identical.  Prints "curand: PASS".
#include <curand.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x) do { int r_ = (int)(x); if (r_) { printf("%s:%d: %s = %d\n", __FILE__, __LINE__, #x, r_); exit(1); } } while (0)

static int compare(const char *what, const void *dev, const void *host, size_t n) {
  const unsigned *a = (const unsigned *)dev, *b = (const unsigned *)host;
  for (size_t i = 0; i < n; i++)
    if (a[i] != b[i]) {
      printf("%s: word %zu: device %08x, host %08x\n", what, i, a[i], b[i]);
      return 1;
    }
  return 0;
}

static int run(curandRngType_t type, const char *name, size_t n) {
  curandGenerator_t g, h;
  unsigned *d, *wd = (unsigned *)malloc(n * 4), *wh = (unsigned *)malloc(n * 4);
  float *fd = (float *)malloc(n * 4), *fh = (float *)malloc(n * 4);
  CHECK(cudaMalloc(&d, n * 4));
  CHECK(curandCreateGenerator(&g, type));
  CHECK(curandCreateGeneratorHost(&h, type));
  CHECK(curandSetPseudoRandomGeneratorSeed(g, 1234ull));
  CHECK(curandSetPseudoRandomGeneratorSeed(h, 1234ull));
  CHECK(curandGenerate(g, d, n));
  CHECK(cudaMemcpy(wd, d, n * 4, cudaMemcpyDeviceToHost));
  CHECK(curandGenerate(h, wh, n));
  CHECK(curandGenerateUniform(g, (float *)d, n));
  CHECK(cudaMemcpy(fd, d, n * 4, cudaMemcpyDeviceToHost));
  CHECK(curandGenerateUniform(h, fh, n));
  char what[64];
  snprintf(what, sizeof what, "%s words", name);
  int bad = compare(what, wd, wh, n);
  snprintf(what, sizeof what, "%s uniforms", name);
  bad |= compare(what, fd, fh, n);
  for (size_t i = 0; i < n; i++)
    if (!(fd[i] > 0.0f && fd[i] <= 1.0f)) {
      printf("%s: uniform %zu = %g outside (0, 1]\n", name, i, fd[i]);
      bad = 1;
      break;
    }
  CHECK(curandDestroyGenerator(g));
  CHECK(curandDestroyGenerator(h));
  CHECK(cudaFree(d));
  free(wd); free(wh); free(fd); free(fh);
  return bad;
}

int main(void) {
  int bad = run(CURAND_RNG_PSEUDO_PHILOX4_32_10, "philox", 4096);
  bad |= run(CURAND_RNG_PSEUDO_XORWOW, "xorwow", 4096);
  if (bad) return 1;
  printf("curand: PASS\n");
  return 0;
}
