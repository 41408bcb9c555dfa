/* tests/runtime/stress_client.c: freeing is ordered, under host threads
 * launching, allocating, freeing and unloading at once (emulator backend).
 *
 * CUDA's cuMemFree and cuModuleUnload wait for the work that may still use
 * what they free.  Two races are forced, ROUNDS times each: one thread
 * launches a long kernel (every thread stores to its buffer on every one
 * of ITERS iterations) and, once it is inside the launch, another thread
 * frees that buffer, or unloads that kernel's module.  Ordered freeing
 * makes both wait: the free (unload) returns only after the kernel is done
 * (when it returns, the stream the launch went to has no work left:
 * cuStreamQuery, not a duration, which a loaded machine makes
 * meaningless), the launch succeeds and no fault appears (with
 * PTXWAVE_EMU_MEMCHECK=1 a store to freed memory is an illegal address;
 * in the ASan build a heap use after free).  Then WORKERS threads
 * each run LOOPS of allocate, set, launch, copy back, check, free while
 * one more loads, launches from and unloads modules; every result is
 * checked against the host's (out[i] = i * k + seed).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"

#define ROUNDS 4
#define ITERS 200000
#define WORKERS 4
#define LOOPS 25

static const char ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    /* spin(p, iters): p[tid] = iters, stored on every iteration */
    ".visible .entry spin(.param .u64 p, .param .u32 n)\n{\n"
    "  .reg .b64 %rd<4>;\n  .reg .b32 %r<5>;\n  .reg .pred %q;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r2, %tid.x;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd2, %rd2, %rd3;\n"
    "  mov.u32 %r3, 0;\n"
    "LOOP:\n  add.s32 %r3, %r3, 1;\n  st.global.u32 [%rd2], %r3;\n"
    "  setp.lt.u32 %q, %r3, %r1;\n  @%q bra LOOP;\n  ret;\n}\n"
    /* axb(p, k, b): p[tid] = tid * k + b */
    ".visible .entry axb(.param .u64 p, .param .u32 k, .param .u32 b)\n{\n"
    "  .reg .b64 %rd<4>;\n  .reg .b32 %r<5>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [k];\n  ld.param.u32 %r4, [b];\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mov.u32 %r2, %tid.x;\n"
    "  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd2, %rd2, %rd3;\n"
    "  mad.lo.u32 %r3, %r2, %r1, %r4;\n  st.global.u32 [%rd2], %r3;\n  ret;\n}\n";

static CUcontext ctx;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}
static atomic_int inside;       /* the launching thread is about to launch */
static atomic_int failures;

#define FAIL(...) (fprintf(stderr, __VA_ARGS__), atomic_fetch_add(&failures, 1))

typedef struct race {
  CUmodule m;
  CUdeviceptr buf;
  CUresult launch, sync;
} race;

static void *race_launch(void *arg) {
  race *r = arg;
  cuCtxSetCurrent(ctx);
  CUfunction f;
  if (cuModuleGetFunction(&f, r->m, "spin") != CUDA_SUCCESS) {
    r->launch = CUDA_ERROR_NOT_FOUND;
    atomic_store(&inside, 1);
    return NULL;
  }
  unsigned n = ITERS;
  void *args[] = {&r->buf, &n};
  atomic_store(&inside, 1);
  r->launch = cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL);
  r->sync = cuCtxSynchronize();
  return NULL;
}

/* free (what = 0) or unload (1) while the launch runs */
static int run_race(int what, int round) {
  race r = {0};
  CUmodule m;
  CK(cuModuleLoadData(&m, ptx));
  CK(cuMemAlloc(&r.buf, 64 * 4));
  r.m = m;
  atomic_store(&inside, 0);
  pthread_t t;
  pthread_create(&t, NULL, race_launch, &r);
  while (!atomic_load(&inside)) usleep(100);
  usleep(2000);   /* well inside the kernel: it runs for hundreds of ms */
  double t0 = now_ms();
  if (what == 0) {
    CUresult fr = cuMemFree(r.buf);
    if (fr != CUDA_SUCCESS) FAIL("round %d: cuMemFree during a launch = %d\n", round, fr);
  } else {
    CUresult ur = cuModuleUnload(m);
    if (ur != CUDA_SUCCESS) FAIL("round %d: cuModuleUnload during a launch = %d\n", round, ur);
  }
  /* Waiting is checked by state, not by time (a loaded machine makes any
   * duration meaningless): when the free or unload returns, the launch it
   * had to wait for must be finished, so the stream both threads share has
   * no work left. */
  CUresult q = cuStreamQuery(NULL);
  double waited = now_ms() - t0;
  pthread_join(t, NULL);
  if (q != CUDA_SUCCESS)
    FAIL("round %d: %s returned after %.1f ms with the launch still running (cuStreamQuery = %d): it did not wait\n",
         round, what ? "cuModuleUnload" : "cuMemFree", waited, q);
  if (r.launch != CUDA_SUCCESS || r.sync != CUDA_SUCCESS)
    FAIL("round %d: %s during the launch: launch %d, synchronize %d\n", round,
         what ? "unload" : "free", r.launch, r.sync);
  if (what == 0) CK(cuModuleUnload(m));
  else CK(cuMemFree(r.buf));
  return 0;
}

static void *worker(void *arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  cuCtxSetCurrent(ctx);
  CUmodule m;
  CUfunction f;
  if (cuModuleLoadData(&m, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "axb") != CUDA_SUCCESS) {
    FAIL("worker %u: module\n", seed);
    return NULL;
  }
  for (unsigned i = 0; i < LOOPS; i++) {
    CUdeviceptr d;
    unsigned k = seed * 7 + i, b = seed + i * 3, n = 32 + (i % 3) * 32, h[96];
    if (cuMemAlloc(&d, n * 4) != CUDA_SUCCESS) {
      FAIL("worker %u: alloc\n", seed);
      break;
    }
    void *args[] = {&d, &k, &b};
    CUresult r = cuMemsetD32(d, 0xdeadbeef, n);
    if (r == CUDA_SUCCESS) r = cuLaunchKernel(f, 1, 1, 1, n, 1, 1, 0, NULL, args, NULL);
    if (r == CUDA_SUCCESS) r = cuMemcpyDtoH(h, d, n * 4);
    if (r != CUDA_SUCCESS) FAIL("worker %u loop %u: %d\n", seed, i, r);
    for (unsigned j = 0; r == CUDA_SUCCESS && j < n; j++)
      if (h[j] != j * k + b) {
        FAIL("worker %u loop %u: out[%u] = %u, want %u\n", seed, i, j, h[j], j * k + b);
        break;
      }
    if (cuMemFree(d) != CUDA_SUCCESS) FAIL("worker %u: free\n", seed);
  }
  cuModuleUnload(m);
  return NULL;
}

static void *loader(void *arg) {
  cuCtxSetCurrent(ctx);
  for (int i = 0; i < LOOPS; i++) {
    CUmodule m;
    CUfunction f;
    CUdeviceptr d;
    if (cuModuleLoadData(&m, ptx) != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "spin") != CUDA_SUCCESS ||
        cuMemAlloc(&d, 64 * 4) != CUDA_SUCCESS) {
      FAIL("loader %d: setup\n", i);
      return NULL;
    }
    unsigned n = 50;
    void *args[] = {&d, &n};
    if (cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL) != CUDA_SUCCESS) FAIL("loader %d: launch\n", i);
    if (cuModuleUnload(m) != CUDA_SUCCESS || cuMemFree(d) != CUDA_SUCCESS) FAIL("loader %d: teardown\n", i);
  }
  return NULL;
}

int main(void) {
  CUdevice dev;
  CK(cuInit(0));
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  {
    CUmodule m;
    CUfunction f;
    CUdeviceptr d;
    unsigned n = ITERS;
    CK(cuModuleLoadData(&m, ptx));
    CK(cuModuleGetFunction(&f, m, "spin"));
    CK(cuMemAlloc(&d, 64 * 4));
    void *args[] = {&d, &n};
    CK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, args, NULL));
    CK(cuCtxSynchronize());
    unsigned h[64];
    CK(cuMemcpyDtoH(h, d, sizeof h));
    for (int i = 0; i < 64; i++)
      if (h[i] != ITERS) FAIL("spin: out[%d] = %u, want %u\n", i, h[i], ITERS);
    CK(cuMemFree(d));
    CK(cuModuleUnload(m));
  }
  for (int i = 0; i < ROUNDS; i++) {
    if (run_race(0, i)) return 1;
    if (run_race(1, i)) return 1;
  }
  pthread_t t[WORKERS + 1];
  for (unsigned i = 0; i < WORKERS; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)(i + 1));
  pthread_create(&t[WORKERS], NULL, loader, NULL);
  for (unsigned i = 0; i <= WORKERS; i++) pthread_join(t[i], NULL);
  CK(cuCtxSynchronize());
  if (atomic_load(&failures)) {
    fprintf(stderr, "stress_client: %d failures\n", atomic_load(&failures));
    return 1;
  }
  puts("stress_client: ok");
  return 0;
}
