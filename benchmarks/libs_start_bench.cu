// benchmarks/libs_start_bench.cu: one program, two starts (libs_start_bench.py).
// Without arguments it initialises the runtime (cudaFree(0)) and exits; with
// "cublas" it also times cublasCreate and cublasDestroy.  Linked to cuBLAS
// both ways, so the difference is the library's start alone.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  if (cudaFree(0)) return 1;
  if (argc > 1 && !strcmp(argv[1], "cublas")) {
    cublasHandle_t h;
    double t = now();
    if (cublasCreate(&h)) return 2;
    double c = now() - t;
    if (cublasDestroy(h)) return 3;
    printf("cublasCreate %.6f s\n", c);
  }
  return 0;
}
