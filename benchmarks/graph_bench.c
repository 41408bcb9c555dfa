/* benchmarks/graph_bench.c: replaying a CUDA graph against the same
 * launches one by one, through libcuda.so.1.
 *
 *   graph_bench [-k KERNELS] [-r REPS]     (default 100 kernels, 50 reps)
 *
 * A chain of KERNELS small launches (one block of 32 threads adding i to
 * 32 counters) is captured from a stream into a graph and instantiated.
 * Timed: REPS launches of the executable graph against REPS x KERNELS
 * cuLaunchKernel calls on the same stream, each synchronised at the end;
 * the line printed gives both per-kernel times and their ratio.  Both
 * halves are checked: every counter must end at REPS x (0 + 1 + ... +
 * KERNELS-1) for each of the two runs.  On the emulator the kernels
 * themselves dominate (each is an emulated launch); the difference is what
 * the runtime saves per launch (parameter packing, checks).
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char ptx[] =
    ".version 7.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry inc(.param .u64 p, .param .u32 k)\n{\n"
    "  .reg .b64 %rd<4>;\n  .reg .b32 %r<4>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [k];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r2, %tid.x;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd2, %rd2, %rd3;\n"
    "  ld.global.u32 %r3, [%rd2];\n  add.s32 %r3, %r3, %r1;\n"
    "  st.global.u32 [%rd2], %r3;\n  ret;\n}\n";

#define CK(x)                                                                  \
  do {                                                                         \
    CUresult r_ = (x);                                                         \
    if (r_ != CUDA_SUCCESS) {                                                  \
      const char *n_ = "?";                                                    \
      cuGetErrorName(r_, &n_);                                                 \
      fprintf(stderr, "graph_bench: %s: %s (%d)\n", #x, n_, (int)r_);          \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int check(CUdeviceptr d, unsigned want, const char *what) {
  unsigned h[32];
  CK(cuMemcpyDtoH(h, d, sizeof h));
  for (int i = 0; i < 32; i++)
    if (h[i] != want) {
      fprintf(stderr, "graph_bench: %s: counter %d = %u, want %u\n", what, i, h[i], want);
      return 1;
    }
  return 0;
}

int main(int argc, char **argv) {
  unsigned kernels = 100, reps = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "-k")) kernels = (unsigned)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "-r")) reps = (unsigned)atoi(argv[i + 1]);
  }
  CUdevice dev;
  CUcontext ctx;
  CUmodule mod;
  CUfunction f;
  CUstream s;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CK(cuModuleLoadData(&mod, ptx));
  CK(cuModuleGetFunction(&f, mod, "inc"));
  CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
  CUdeviceptr d;
  CK(cuMemAlloc(&d, 32 * sizeof(unsigned)));
  unsigned sum = 0;
  for (unsigned i = 0; i < kernels; i++) sum += i;

  /* one by one */
  CK(cuMemsetD32(d, 0, 32));
  double t0 = now_ms();
  for (unsigned r = 0; r < reps; r++)
    for (unsigned i = 0; i < kernels; i++) {
      void *args[] = {&d, &i};
      CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
    }
  CK(cuStreamSynchronize(s));
  double direct = now_ms() - t0;
  int bad = check(d, reps * sum, "launches one by one");

  /* captured once, replayed */
  CUgraph g;
  CUgraphExec x;
  CK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
  for (unsigned i = 0; i < kernels; i++) {
    void *args[] = {&d, &i};
    CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, args, NULL));
  }
  CK(cuStreamEndCapture(s, &g));
  CK(cuGraphInstantiate(&x, g, 0));
  CK(cuMemsetD32(d, 0, 32));
  t0 = now_ms();
  for (unsigned r = 0; r < reps; r++) CK(cuGraphLaunch(x, s));
  CK(cuStreamSynchronize(s));
  double graph = now_ms() - t0;
  bad |= check(d, reps * sum, "graph replays");

  double n = (double)kernels * reps;
  printf("graph_bench: %u kernels x %u reps: one by one %.2f us/kernel, graph %.2f us/kernel, "
         "ratio (one by one / graph) %.2f\n",
         kernels, reps, direct * 1e3 / n, graph * 1e3 / n, direct / graph);
  CK(cuGraphExecDestroy(x));
  CK(cuGraphDestroy(g));
  CK(cuMemFree(d));
  CK(cuStreamDestroy(s));
  CK(cuModuleUnload(mod));
  return bad;
}
