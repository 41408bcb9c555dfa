/* benchmarks/scale_bench.c: the cost of each stage at n and 4n on the
 * generated inputs of issue 20 ("Large and hostile input"): every structure
 * that grows with the input must be built in linear (or n log n) time and
 * memory, so each ratio 4n / n should be about 4.
 *
 *   scale_bench [--n N] [--stage parse|lower|emu|codegen]... [CASE...]
 *
 * Each case generates its PTX in memory at size n and at 4n (codegen at a
 * smaller n of its own; --n sets both), and each
 * (case, size) runs in a forked child so that one measurement's heap does
 * not count in the next.  Per stage the child reports the CPU time of the
 * stage and its peak resident memory above the resident size at its start
 * (/proc/self/clear_refs "5" resets the peak before each stage; where that
 * is refused, getrusage's peak over the whole child is printed instead).
 * Stages: parse (ptx_parse, verification included), lower (lower_module for
 * gfx942), emu (emu_module_load of the parsed, unlowered module, as the
 * runtime's emulator backend loads it) and codegen (cg_compile of the
 * lowered module to a gfx942 code object).  Nothing is asserted: the output
 * is the table (benchmarks/README.md). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "emu/emu.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

#define HEADER ".version 8.5\n.target sm_90\n.address_size 64\n"

typedef struct sbuf { char *s; size_t n, cap; } sbuf;
static void sb(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = b->s ? vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap) : -1;
    va_end(ap);
    if (k >= 0 && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = b->cap ? b->cap * 2 : 1 << 16;
    b->s = realloc(b->s, b->cap);
    if (!b->s) {
      fprintf(stderr, "scale_bench: out of memory generating the input\n");
      exit(2);
    }
  }
}

/* ---- the generated inputs ------------------------------------------------ */

/* brx.idx to n labels, all branching to END: a block with n predecessors and
 * a phi of n operands. */
static void gen_preds(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
        "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n  mov.u32 %%r2, 5;\nT: .branchtargets ");
  for (unsigned i = 0; i < n; i++) sb(b, "%sL%u", i ? ", " : "", i);
  sb(b, ";\n  brx.idx %%r1, T;\n");
  for (unsigned i = 0; i < n; i++) sb(b, "L%u:\n  add.u32 %%r2, %%r2, %u;\n  bra END;\n", i, i);
  sb(b, "END:\n  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n");
}

static void gen_pragmas(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u64 out)\n{\n");
  for (unsigned i = 0; i < n; i++) sb(b, "  .pragma \"p%u\";\n", i);
  sb(b, "  ret;\n}\n");
}

/* n distinct immediates in a straight line */
static void gen_constants(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
        "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n");
  for (unsigned i = 0; i < n; i++) sb(b, "  xor.b32 %%r1, %%r1, %u;\n", 0x10000u + i * 7919u);
  sb(b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
}

/* a kernel of n u32 parameters, each read and summed */
static void gen_params(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u64 out");
  for (unsigned i = 0; i < n; i++) sb(b, ", .param .u32 p%u", i);
  sb(b, ")\n{\n  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  mov.u32 %%r1, 0;\n");
  for (unsigned i = 0; i < n; i++) sb(b, "  ld.param.u32 %%r2, [p%u];\n  add.u32 %%r1, %%r1, %%r2;\n", i);
  sb(b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
}

/* n instructions on 16 registers (mixed ops, a load and a store every 8) */
static void gen_straight(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u64 out)\n{\n"
        "  .reg .b32 %%r<16>;\n  .reg .b64 %%rd<2>;\n  ld.param.u64 %%rd1, [out];\n");
  /* from memory: constants would fold away in codegen */
  for (unsigned r = 0; r < 16; r++) sb(b, "  ld.global.u32 %%r%u, [%%rd1+%u];\n", r, r * 4);
  static const char *const ops[] = {"add.u32", "xor.b32", "mul.lo.u32", "sub.u32", "and.b32", "or.b32", "shl.b32"};
  for (unsigned i = 0; i < n; i++) {
    unsigned d = i % 16, a = (i * 5 + 1) % 16, c = (i * 11 + 3) % 16;
    if (i % 8 == 7) sb(b, "  st.global.u32 [%%rd1+%u], %%r%u;\n", (i % 64) * 4, d);
    else sb(b, "  %s %%r%u, %%r%u, %%r%u;\n", ops[i % 7], d, a, c);
  }
  sb(b, "  st.global.u32 [%%rd1], %%r0;\n  ret;\n}\n");
}

/* n { } scopes in nests 200 deep (the parser refuses more than 256 levels,
 * ptx_parse.c), each declaring a register that hides the outer one */
static void gen_nesting(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<2>;\n"
        "  ld.param.u64 %%rd1, [out];\n  ld.global.u32 %%r1, [%%rd1];\n");
  for (unsigned done = 0; done < n;) {
    unsigned depth = n - done < 200 ? n - done : 200;
    for (unsigned i = 0; i < depth; i++)
      sb(b, "{\n  .reg .b32 %%t;\n  add.u32 %%t, %%r1, %u;\n  mov.u32 %%r1, %%t;\n", done + i);
    for (unsigned i = 0; i < depth; i++) sb(b, "}\n");
    done += depth;
  }
  sb(b, "  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
}

/* n device functions, each called once from the kernel */
static void gen_calls(sbuf *b, unsigned n) {
  sb(b, HEADER);
  for (unsigned i = 0; i < n; i++)
    sb(b, ".func (.param .b32 r) f%u(.param .b32 a)\n{\n  .reg .b32 %%x;\n  ld.param.b32 %%x, [a];\n"
          "  add.u32 %%x, %%x, %u;\n  st.param.b32 [r], %%x;\n  ret;\n}\n", i, i + 1);
  sb(b, ".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<2>;\n"
        "  ld.param.u64 %%rd1, [out];\n  mov.u32 %%r1, 0;\n");
  for (unsigned i = 0; i < n; i++)
    sb(b, "  {\n  .param .b32 a%u;\n  .param .b32 r%u;\n  st.param.b32 [a%u], %%r1;\n"
          "  call.uni (r%u), f%u, (a%u);\n  ld.param.b32 %%r1, [r%u];\n  }\n", i, i, i, i, i, i, i);
  sb(b, "  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
}

/* n kernels, each calling a device function of its own: the emulator's
 * per-kernel layout walked all functions per kernel (kernels x functions) */
static void gen_kernels(sbuf *b, unsigned n) {
  sb(b, HEADER);
  for (unsigned i = 0; i < n; i++)
    sb(b, ".func (.param .b32 r) f%u(.param .b32 a)\n{\n  .reg .b32 %%x;\n  ld.param.b32 %%x, [a];\n"
          "  add.u32 %%x, %%x, %u;\n  st.param.b32 [r], %%x;\n  ret;\n}\n"
          ".visible .entry k%u(.param .u64 out)\n{\n  .reg .b32 %%r<2>;\n  .reg .b64 %%rd<2>;\n"
          "  ld.param.u64 %%rd1, [out];\n  ld.global.u32 %%r1, [%%rd1];\n  {\n  .param .b32 a;\n  .param .b32 r;\n"
          "  st.param.b32 [a], %%r1;\n  call.uni (r), f%u, (a);\n  ld.param.b32 %%r1, [r];\n  }\n"
          "  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n", i, i + 1, i, i);
}

/* a chain of n blocks, each one either going on or branching to END: END
 * has n predecessors along one path (the dominator solver's hard case) */
static void gen_domchain(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
        "  .reg .b32 %%r<3>;\n  .reg .pred %%p;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n  mov.u32 %%r2, 0;\n");
  for (unsigned i = 0; i < n; i++)
    sb(b, "  add.u32 %%r2, %%r2, 1;\n  setp.eq.u32 %%p, %%r2, %%r1;\n  @%%p bra END;\n");
  sb(b, "END:\n  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n");
}

/* a wide CFG: n independent diamonds in sequence (if/else per step) */
static void gen_domwide(sbuf *b, unsigned n) {
  sb(b, HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
        "  .reg .b32 %%r<3>;\n  .reg .pred %%p;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n  mov.u32 %%r2, 0;\n");
  for (unsigned i = 0; i < n; i++)
    sb(b, "  setp.lt.u32 %%p, %%r1, %u;\n  @%%p bra A%u;\n  add.u32 %%r2, %%r2, 3;\n  bra J%u;\n"
          "A%u:\n  xor.b32 %%r2, %%r2, 5;\nJ%u:\n", i, i, i, i, i);
  sb(b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n");
}

typedef struct bench_case {
  const char *name, *what;
  void (*gen)(sbuf *, unsigned);
  unsigned n;          /* default n for parse, lower and emu (4n is the second size) */
  unsigned cg_n;       /* default n for codegen (LLVM is slower): 0 = not measured */
} bench_case;

enum { S_PARSE = 1, S_LOWER = 2, S_EMU = 4, S_CODEGEN = 8 };
static const char *const stage_names[] = {"parse", "lower", "emu", "codegen"};

/* 4n of preds is 65,536 predecessors; codegen sizes keep LLVM's share to
 * seconds (README.md: LLVM's own passes grow faster than n on some). */
static const bench_case cases[] = {
    {"preds", "a block with n predecessors (brx.idx)", gen_preds, 16384, 1000},
    {"pragmas", "n .pragma lines", gen_pragmas, 16384, 0},
    {"constants", "n distinct constants", gen_constants, 100000, 2000},
    {"params", "n u32 kernel parameters", gen_params, 2000, 1000},
    {"straight", "an n-instruction straight-line kernel", gen_straight, 50000, 5000},
    {"nesting", "n { } scopes, nested 200 deep", gen_nesting, 20000, 2000},
    {"calls", "n functions, each called once", gen_calls, 2000, 1000},
    {"kernels", "n kernels, each calling its own function", gen_kernels, 4000, 250},
    {"domchain", "a chain of n blocks all branching to one label", gen_domchain, 16384, 1000},
    {"domwide", "n if/else diamonds in sequence", gen_domwide, 16384, 1000},
};
#define NCASES (sizeof cases / sizeof cases[0])

/* ---- measuring in a child ------------------------------------------------ */

typedef struct stage_result {
  double cpu_s;        /* < 0: the stage failed or did not run */
  double peak_mb;
} stage_result;

static double cpu_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* VmRSS or VmHWM of this process in kB, -1 if unknown */
static long status_kb(const char *key) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long v = -1;
  size_t kl = strlen(key);
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, key, kl) && line[kl] == ':') {
      v = strtol(line + kl + 1, NULL, 10);
      break;
    }
  fclose(f);
  return v;
}

static bool reset_peak(void) {
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  bool ok = fputs("5", f) >= 0;
  return fclose(f) == 0 && ok;
}

typedef struct meter { bool resettable; long rss0; double t0; } meter;

static void meter_start(meter *m) {
  m->resettable = reset_peak();
  m->rss0 = status_kb("VmRSS");
  m->t0 = cpu_now();
}

static stage_result meter_stop(const meter *m, bool ok) {
  stage_result r = {.cpu_s = cpu_now() - m->t0};
  if (m->resettable) {
    long hwm = status_kb("VmHWM");
    r.peak_mb = hwm > m->rss0 ? (hwm - m->rss0) / 1024.0 : 0;
  } else {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    r.peak_mb = ru.ru_maxrss / 1024.0;
  }
  if (!ok) r.cpu_s = -1;
  return r;
}

/* Runs the chosen stages on case c at size n; writes 4 results to fd. */
static void child(const bench_case *c, unsigned n, unsigned stages, int fd) {
  stage_result res[4];
  for (int s = 0; s < 4; s++) res[s] = (stage_result){-1, 0};
  sbuf b = {0};
  c->gen(&b, n);
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 1;
  meter m;
  meter_start(&m);
  ir_module *mod = ptx_parse(c->name, b.s, b.n, &d, NULL);
  res[0] = meter_stop(&m, mod != NULL);
  if (!mod) fprintf(stderr, "%s n=%u: parse: %s\n", c->name, n, pw_diag_text(&d));
  if (mod && (stages & S_EMU)) {
    emu_context *ctx;
    if (emu_context_create(&(emu_options){.threads = 1}, &ctx) == EMU_OK) {
      emu_module *em = NULL;
      meter_start(&m);
      emu_status st = emu_module_load(ctx, mod, &em);
      res[2] = meter_stop(&m, st == EMU_OK);
      if (st != EMU_OK) fprintf(stderr, "%s n=%u: emu: %s\n", c->name, n, emu_error_message(ctx));
      else emu_module_unload(em);
      emu_context_destroy(ctx);
    }
  }
  const ir_target *t = cg_target_find("gfx942");
  bool lowered = false;
  if (mod && (stages & (S_LOWER | S_CODEGEN))) {
    meter_start(&m);
    lowered = lower_module(mod, t, &(lower_pipeline_options){.diag = &d});
    res[1] = meter_stop(&m, lowered);
    if (!lowered) fprintf(stderr, "%s n=%u: lower: %s\n", c->name, n, pw_diag_text(&d));
  }
  if (lowered && (stages & S_CODEGEN)) {
    pw_src src = {c->name, b.s, b.n};
    cg_options opt = {.target = t, .threads = 1};
    cg_output out = {0};
    meter_start(&m);
    bool ok = cg_compile(mod, &src, &opt, CG_EMIT_HSACO, &out, &d);
    res[3] = meter_stop(&m, ok);
    if (!ok) fprintf(stderr, "%s n=%u: codegen: %s\n", c->name, n, pw_diag_text(&d));
    free(out.data);
  }
  if (!(stages & S_LOWER)) res[1] = (stage_result){-1, 0};
  if (write(fd, res, sizeof res) != (ssize_t)sizeof res) _exit(3);
  _exit(0);
}

static bool measure(const bench_case *c, unsigned n, unsigned stages, stage_result res[4]) {
  int p[2];
  if (pipe(p)) return false;
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(p[0]);
    child(c, n, stages, p[1]);
  }
  close(p[1]);
  ssize_t got = 0;
  while (got < (ssize_t)(4 * sizeof *res)) {
    ssize_t k = read(p[0], (char *)res + got, 4 * sizeof *res - (size_t)got);
    if (k <= 0) break;
    got += k;
  }
  close(p[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != (ssize_t)(4 * sizeof *res)) {
    fprintf(stderr, "%s n=%u: the child died (status 0x%x)\n", c->name, n, status);
    return false;
  }
  return true;
}

static void usage(void) {
  fprintf(stderr, "usage: scale_bench [--n N] [--stage parse|lower|emu|codegen]... [CASE...]\ncases:");
  for (size_t i = 0; i < NCASES; i++) fprintf(stderr, " %s", cases[i].name);
  fprintf(stderr, "\n");
  exit(2);
}

int main(int argc, char **argv) {
  unsigned n_override = 0, stage_override = 0;
  bool pick[NCASES] = {0}, any = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--n") && i + 1 < argc) {
      n_override = (unsigned)strtoul(argv[++i], NULL, 10);
      if (!n_override) usage();
    } else if (!strcmp(argv[i], "--stage") && i + 1 < argc) {
      const char *s = argv[++i];
      unsigned k = 0;
      while (k < 4 && strcmp(s, stage_names[k])) k++;
      if (k == 4) usage();
      stage_override |= 1u << k;
    } else {
      size_t k = 0;
      while (k < NCASES && strcmp(argv[i], cases[k].name)) k++;
      if (k == NCASES) usage();
      pick[k] = any = true;
    }
  }
  printf("%-10s %-8s %8s %10s %10s %6s %10s %10s %6s\n", "case", "stage", "n", "cpu n", "cpu 4n",
         "ratio", "peak n", "peak 4n", "ratio");
  for (size_t k = 0; k < NCASES; k++) {
    if (any && !pick[k]) continue;
    const bench_case *c = &cases[k];
    unsigned want = stage_override ? stage_override : S_PARSE | S_LOWER | S_EMU | S_CODEGEN;
    /* two runs: the front stages at n, codegen at its own n */
    for (int run = 0; run < 2; run++) {
      unsigned stages = run ? want & S_CODEGEN : want & ~(unsigned)S_CODEGEN;
      unsigned n = n_override ? n_override : run ? c->cg_n : c->n;
      if (!stages || !n) continue;
      if (run) stages |= S_LOWER;  /* codegen takes lowered IR */
      stage_result a[4], b[4];
      if (!measure(c, n, stages, a) || !measure(c, 4 * n, stages, b)) continue;
      for (int s = 0; s < 4; s++) {
        if (run ? s != 3 : (s && !(stages & (1u << s)))) continue;
        if (a[s].cpu_s < 0 || b[s].cpu_s < 0) {
          printf("%-10s %-8s %8u  failed (see above)\n", c->name, stage_names[s], n);
          continue;
        }
        printf("%-10s %-8s %8u %9.3fs %9.3fs %6.2f %8.1fMB %8.1fMB %6.2f\n", c->name, stage_names[s], n,
               a[s].cpu_s, b[s].cpu_s, a[s].cpu_s > 0 ? b[s].cpu_s / a[s].cpu_s : 0, a[s].peak_mb,
               b[s].peak_mb, a[s].peak_mb > 0 ? b[s].peak_mb / a[s].peak_mb : 0);
      }
      fflush(stdout);
    }
  }
  return 0;
}
