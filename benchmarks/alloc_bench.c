/* benchmarks/alloc_bench.c: the emulator's device allocator (emu/emu_heap.c,
 * shared memfd memory, so IPC can map any allocation) against what it
 * replaced (aligned_alloc + memset: private memory), on the same pattern of
 * allocations in the same run: a live set of 512 blocks, each step freeing
 * one at random and allocating another; sizes mostly 256 B-16 KiB (the
 * bookkeeping buffers programs allocate), one in eight up to 4 MiB.  Prints
 * ns per allocate+free pair for each and their ratio (heap / malloc).
 *
 *   alloc_bench [steps]      (default 200000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu_heap.h"

enum { LIVE = 512 };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static size_t size_of(uint32_t r) {
  return (r & 7) ? 256 + (r >> 8) % (16u << 10) : 256 + (r >> 8) % (4u << 20);
}

static void *m_alloc(void *ctx, size_t n) {
  size_t r = (n + 255) & ~(size_t)255;
  void *p = aligned_alloc(256, r);
  if (p) memset(p, 0, r);
  return p;
}
static void m_free(void *ctx, void *p) { free(p); }
static void *h_alloc(void *ctx, size_t n) { return emu_heap_alloc(ctx, n); }
static void h_free(void *ctx, void *p) { emu_heap_free(ctx, p, true); }

static double run(void *ctx, void *(*al)(void *, size_t), void (*fr)(void *, void *), long steps) {
  void *live[LIVE] = {0};
  uint32_t seed = 7;
  double t0 = now();
  for (long i = 0; i < steps; i++) {
    seed = seed * 1103515245u + 12345u;
    unsigned k = (seed >> 16) % LIVE;
    if (live[k]) fr(ctx, live[k]);
    seed = seed * 1103515245u + 12345u;
    live[k] = al(ctx, size_of(seed));
    if (!live[k]) {
      fprintf(stderr, "alloc_bench: allocation failed\n");
      exit(1);
    }
    ((volatile char *)live[k])[0] = 1;
  }
  for (unsigned k = 0; k < LIVE; k++)
    if (live[k]) fr(ctx, live[k]);
  return (now() - t0) / (double)steps * 1e9;
}

int main(int argc, char **argv) {
  long steps = argc > 1 ? atol(argv[1]) : 200000;
  emu_heap *h = emu_heap_create((uint64_t)16 << 30);
  if (!h) {
    fprintf(stderr, "alloc_bench: no memfd heap on this system\n");
    return 1;
  }
  run(h, h_alloc, h_free, steps / 10);   /* warm both */
  run(NULL, m_alloc, m_free, steps / 10);
  double tm = run(NULL, m_alloc, m_free, steps), th = run(h, h_alloc, h_free, steps);
  printf("alloc_bench: %ld steps, live %d: aligned_alloc+memset %.0f ns, emu_heap %.0f ns, ratio %.2f\n",
         steps, LIVE, tm, th, th / tm);
  emu_heap_destroy(h);
  return 0;
}
