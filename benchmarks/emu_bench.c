/* benchmarks/emu_bench.c: how fast the emulator runs real kernels.
 *
 *   ./build/benchmarks/emu_bench [--ptx FILE] [--threads N] [--reps N]
 *
 * Runs the kernels of benchmarks/emu_bench.ptx (nvcc's PTX of
 * emu_bench.cu: an arithmetic loop, a tiled matrix multiply with shared
 * memory and barriers, a shuffle reduction with atomics, saxpy, a divergent
 * loop) once with one host thread and once with all of them, and prints
 * emulated lane operations per second (a lane operation: one instruction
 * for one active lane), per CPU second and per wall second, with the
 * all-threads/one-thread ratio.  CPU time is reported because shared
 * machines steal wall time.  Nothing is asserted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "emu/emu.h"
#include "ptx/ptx_parse.h"
#include "pw_config.h"
#include "util/diag.h"

static double now(clockid_t c) {
  struct timespec ts;
  clock_gettime(c, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

typedef struct bench {
  const char *name;
  emu_dim3 grid, block;
  unsigned shared;
} bench;

typedef struct result {
  double lane_ops, wall, cpu;
} result;

static emu_context *ctx;
static emu_module *mod;
static ir_module *irm;
static uint64_t buf[4];
static const size_t BUF = 64u << 20;

static result run(const char *kernel, emu_dim3 g, emu_dim3 b, void **params, int reps) {
  result r = {0, 0, 0};
  for (int i = 0; i < reps; i++) {
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
    emu_status st = emu_launch(mod, kernel, g, b, 0, params);
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_PROCESS_CPUTIME_ID);
    if (st != EMU_OK) {
      fprintf(stderr, "emu_bench: %s: %s\n", kernel, emu_error_message(ctx));
      exit(1);
    }
    emu_stats s;
    emu_last_stats(ctx, &s);
    r.lane_ops += (double)s.lane_ops;
    r.wall += w1 - w0;
    r.cpu += c1 - c0;
  }
  return r;
}

static void load(const char *path, unsigned threads) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "emu_bench: cannot open %s\n", path);
    exit(1);
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)n + 1);
  if (fread(text, 1, (size_t)n, f) != (size_t)n) exit(1);
  fclose(f);
  pw_diag d;
  pw_diag_init(&d, stderr);
  ir_module *m = ptx_parse(path, text, (size_t)n, &d, NULL);
  irm = m;
  pw_diag_fini(&d);
  free(text);
  if (!m) exit(1);
  emu_options o = {.threads = threads};
  if (emu_context_create(&o, &ctx) != EMU_OK || emu_module_load(ctx, m, &mod) != EMU_OK) {
    fprintf(stderr, "emu_bench: %s\n", ctx ? emu_error_message(ctx) : "no context");
    exit(1);
  }
  for (int i = 0; i < 4; i++) {
    emu_malloc(ctx, BUF, &buf[i]);
    float *h = malloc(BUF);
    for (size_t k = 0; k < BUF / 4; k++) h[k] = (float)(k % 1000) * 0.001f;
    emu_memcpy_htod(ctx, buf[i], h, BUF);
    free(h);
  }
}

int main(int argc, char **argv) {
  const char *ptx = PTXWAVE_SOURCE_ROOT "/benchmarks/emu_bench.ptx";
  unsigned all = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
  int reps = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--ptx") && i + 1 < argc) ptx = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) all = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: emu_bench [--ptx FILE] [--threads N] [--reps N]\n");
      return 2;
    }
  }
  printf("emulated lane operations per second (a lane operation: one instruction, one active lane)\n");
  printf("%-10s %8s %12s %12s %12s %12s %8s\n", "kernel", "threads", "Mlane-ops", "M/s (cpu)", "M/s (wall)",
         "M/s/thread", "ratio");
  int iters = 400, n = 1 << 20, mm = 256;
  float alpha = 2.0f;
  void *p_arith[] = {&buf[0], &iters};
  void *p_mm[] = {&buf[0], &buf[1], &buf[2], &mm};
  void *p_red[] = {&buf[0], &buf[3], &n};
  void *p_saxpy[] = {&buf[0], &buf[1], &alpha, &n};
  void *p_div[] = {&buf[0], &buf[1], &iters};
  struct {
    const char *k;
    emu_dim3 g, b;
    void **p;
  } ks[] = {
      {"arith", {128, 1, 1}, {256, 1, 1}, p_arith},
      {"matmul", {16, 16, 1}, {16, 16, 1}, p_mm},
      {"reduce", {256, 1, 1}, {256, 1, 1}, p_red},
      {"saxpy", {4096, 1, 1}, {256, 1, 1}, p_saxpy},
      {"divergent", {64, 1, 1}, {256, 1, 1}, p_div},
  };
  unsigned tcounts[2] = {1, all};
  double one[8] = {0};
  for (int t = 0; t < 2; t++) {
    load(ptx, tcounts[t]);
    for (size_t k = 0; k < sizeof ks / sizeof ks[0]; k++) {
      run(ks[k].k, ks[k].g, ks[k].b, ks[k].p, 1);   /* warm up */
      result r = run(ks[k].k, ks[k].g, ks[k].b, ks[k].p, reps);
      double mcpu = r.lane_ops / r.cpu / 1e6, mwall = r.lane_ops / r.wall / 1e6;
      if (t == 0) one[k] = mwall;
      printf("%-10s %8u %12.1f %12.1f %12.1f %12.1f %8.2f\n", ks[k].k, tcounts[t], r.lane_ops / 1e6, mcpu, mwall,
             mwall / tcounts[t], t ? mwall / one[k] : 1.0);
    }
    emu_context_destroy(ctx);
    ir_module_destroy(irm);
  }
  return 0;
}
