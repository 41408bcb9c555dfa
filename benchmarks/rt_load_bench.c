/* benchmarks/rt_load_bench.c: module load time through the driver API.
 *
 *   rt_load_bench [-n N] FILE...     (PTX text, fatbins, or host ELFs are
 *                                     not read: pass .ptx or .fatbin files)
 *
 * For each file: the first cuModuleLoadData (cold: parse, decode, and on
 * HIP compile or read the kernel cache) and the mean of N more loads (warm:
 * on HIP with a filled cache this is a cache hit; the emulator has no code
 * object and parses again).  Run with PTXWAVE_BACKEND=emu, or hip with a
 * PTXWAVE_CACHE_DIR; the goal for a warm HIP load is under 1 ms per module.
 * Without an AMD GPU, the HIP path runs against the tests' recording
 * stand-in (PTXWAVE_HIP_LIBRARY=build/tests/libfakehip.so; it loads nothing,
 * so the time is the runtime's own: parse for the parameter layouts, key,
 * bundle and cache lookup, checks).  A second run on the same cache
 * measures a cold load that is a cache hit (a new process).  The last line
 * sums up the modules that loaded.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/pw_file.h"

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  int n = 10, first = 1;
  if (argc > 2 && !strcmp(argv[1], "-n")) {
    n = atoi(argv[2]);
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: rt_load_bench [-n N] FILE.ptx...\n");
    return 2;
  }
  CUcontext ctx;
  if (cuInit(0) || cuDevicePrimaryCtxRetain(&ctx, 0) || cuCtxSetCurrent(ctx)) {
    fprintf(stderr, "rt_load_bench: no device\n");
    return 1;
  }
  printf("%-40s %10s %10s\n", "module", "cold ms", "warm ms");
  double sum_cold = 0, sum_warm = 0, max_warm = 0;
  int loaded = 0, under_1ms = 0;
  for (int i = first; i < argc; i++) {
    char *img = pw_read_file(argv[i], &(size_t){0});
    if (!img) {
      fprintf(stderr, "rt_load_bench: cannot read %s\n", argv[i]);
      continue;
    }
    CUmodule m;
    double t0 = now_ms();
    CUresult r = cuModuleLoadData(&m, img);
    double cold = now_ms() - t0;
    if (r != CUDA_SUCCESS) {
      printf("%-40s load failed (%d)\n", argv[i], r);
      free(img);
      continue;
    }
    cuModuleUnload(m);
    double warm = 0;
    for (int k = 0; k < n; k++) {
      t0 = now_ms();
      cuModuleLoadData(&m, img);
      warm += now_ms() - t0;
      cuModuleUnload(m);
    }
    const char *base = strrchr(argv[i], '/');
    double w = n ? warm / n : 0.0;
    printf("%-40s %10.3f %10.3f\n", base ? base + 1 : argv[i], cold, w);
    loaded++;
    sum_cold += cold;
    sum_warm += w;
    if (w > max_warm) max_warm = w;
    under_1ms += w < 1.0;
    free(img);
  }
  if (loaded)
    printf("%d modules loaded: cold mean %.3f ms; warm mean %.3f ms, max %.3f ms, %d under 1 ms\n",
           loaded, sum_cold / loaded, sum_warm / loaded, max_warm, under_1ms);
  return 0;
}
