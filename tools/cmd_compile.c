/* tools/cmd_compile.c: `ptxwave compile FILE.ptx|BINARY --arch gfx942[,...]
 * -o OUT [--emit ll|asm|obj|hsaco]`.
 *
 * Parses the PTX (a .ptx file, or every PTX entry of a fatbin, ELF or
 * archive), and compiles it with codegen/ for each target.  One target
 * writes OUT as asked; several targets with --emit hsaco write one clang
 * offload bundle holding a code object per target (the format
 * clang-offload-bundler writes and HIP's loader reads):
 *
 *   "__CLANG_OFFLOAD_BUNDLE__"  u64 entry count
 *   per entry: u64 offset, u64 size, u64 id length, id (no NUL)
 *   the code objects at their offsets (4096-aligned)
 *
 * with ids "host-x86_64-unknown-linux-gnu-" (empty, as clang writes it)
 * and "hipv4-amdgcn-amd-amdhsa--<gfx>".  A binary with several PTX modules
 * writes OUT.<n> for the n-th module.  OUT "-" is stdout.
 *
 * Several input files: every PTX module of every file is linked into one
 * module (ir/ir_link.h: each .extern bound to its definition) and compiled
 * to one OUT; --emit obj may leave symbols undefined, a .hsaco may not.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "ptx/container.h"
#include "ptx/ptx_parse.h"
#include "tools.h"
#include "util/diag.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave compile FILE... --arch gfx942[,gfx90a,...] -o OUT\n"
          "                       [--emit ll|asm|obj|hsaco] [--cov 4|5|6]\n"
          "                       [--pipeline TEXT] [--no-opt] [--no-lower] [--expand-mma]\n"
          "                       [--features +F,-G] [--time]\n"
          "                       [-j N] [--llvm OPT]...\n"
          "\n"
          "Compiles PTX (a .ptx file, or the PTX inside a fatbin, ELF or archive)\n"
          "to AMD GPU code.  --emit: LLVM IR, assembly, an ELF object, or a linked\n"
          "code object (default).  Several --arch targets with --emit hsaco make a\n"
          "clang offload bundle.  --cov: code object version (default 5).\n"
          "--features: extra LLVM target features (for experiments and tests).\n"
          "Several FILEs: all their PTX modules are linked into one (relocatable\n"
          "device code with the modules defining its .extern symbols).\n"
          "--time: print compile times to stderr.  The PTX is lowered for each\n"
          "target (lower/) before codegen; --no-lower skips it (tests).\n"
          "--expand-mma: mma.sync as per-thread shuffles and fma even where the\n"
          "target has MFMA/WMMA (the reference; benchmarks).\n"
          "-j N: compile the kernels of one module in N partitions on N threads,\n"
          "linked into one code object (--emit hsaco); 1: one thread; default 0:\n"
          "automatic, only for modules big enough to pay.\n"
          "--llvm OPT: an LLVM command-line option (llc's: -time-passes,\n"
          "-disable-lsr=0), for experiments; it wins over ptxwave's defaults.\n"
          "Targets:");
  unsigned n;
  const ir_target *t = cg_targets(&n);
  for (unsigned i = 0; i < n; i++) fprintf(f, " %s", t[i].name);
  fprintf(f, "\n");
}

typedef struct compile_job {
  const ir_target *targets[16];
  unsigned ntargets;
  cg_emit_kind emit;
  cg_options opt;
  const char *out;
  bool time;
  int nmodules, failed;
} compile_job;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static bool write_out(const char *path, const void *p, size_t n) {
  FILE *f = strcmp(path, "-") ? fopen(path, "wb") : stdout;
  if (!f) {
    fprintf(stderr, "ptxwave compile: %s: %s\n", path, strerror(errno));
    return false;
  }
  bool ok = fwrite(p, 1, n, f) == n;
  if (f != stdout) ok = fclose(f) == 0 && ok;
  else fflush(f);
  if (!ok) fprintf(stderr, "ptxwave compile: %s: write failed\n", path);
  return ok;
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* The clang offload bundle of the code objects objs[0..n). */
static uint8_t *bundle(const ir_target **t, cg_output *objs, unsigned n, size_t *size) {
  char ids[17][64];
  unsigned ne = n + 1;
  snprintf(ids[0], sizeof ids[0], "host-x86_64-unknown-linux-gnu-");
  for (unsigned i = 0; i < n; i++) snprintf(ids[i + 1], sizeof ids[i + 1], "hipv4-amdgcn-amd-amdhsa--%s", t[i]->name);
  size_t hdr = 24 + 8;
  for (unsigned i = 0; i < ne; i++) hdr += 24 + strlen(ids[i]);
  size_t off = (hdr + 4095) & ~(size_t)4095, total = off;
  size_t offs[17];
  offs[0] = off;
  for (unsigned i = 0; i < n; i++) {
    offs[i + 1] = total;
    total = (total + objs[i].size + 4095) & ~(size_t)4095;
  }
  uint8_t *b = calloc(1, total);
  if (!b) return NULL;
  memcpy(b, "__CLANG_OFFLOAD_BUNDLE__", 24);
  put64(b + 24, ne);
  size_t p = 32;
  for (unsigned i = 0; i < ne; i++) {
    size_t len = strlen(ids[i]);
    put64(b + p, offs[i]);
    put64(b + p + 8, i ? objs[i - 1].size : 0);
    put64(b + p + 16, len);
    memcpy(b + p + 24, ids[i], len);
    p += 24 + len;
  }
  for (unsigned i = 0; i < n; i++) memcpy(b + offs[i + 1], objs[i].data, objs[i].size);
  *size = total;
  return b;
}

/* n texts: one module, or several linked into one (cg_compile_ptx_linked). */
static bool compile_texts(compile_job *J, unsigned n, const char *const *names, const char *const *texts,
                          const size_t *lens, int index) {
  pw_diag d;
  pw_diag_init(&d, stderr);
  d.max_errors = 50;
  bool ok = true;
  cg_output outs[16];
  memset(outs, 0, sizeof outs);
  /* cg_compile_ptx: parse, lower for the target, compile; once per target
   * (lowering depends on the wave size) */
  for (unsigned k = 0; ok && k < J->ntargets; k++) {
    J->opt.target = J->targets[k];
    double c0 = now();
    if (!cg_compile_ptx_linked(n, names, texts, lens, &J->opt, J->emit, &outs[k], &d)) ok = false;
    if (J->time)
      fprintf(stderr, "%s%s: %s: parse + lower + compile %.3f s, %u kernels, %u partitions\n", names[0],
              n > 1 ? "+..." : "", J->targets[k]->name, now() - c0, outs[k].nkernels, outs[k].nparts);
  }
  if (ok) {
    char path[4096];
    if (index >= 0 && strcmp(J->out, "-")) snprintf(path, sizeof path, "%s.%d", J->out, index);
    else snprintf(path, sizeof path, "%s", J->out);
    if (J->ntargets == 1) {
      ok = write_out(path, outs[0].data, outs[0].size);
    } else {
      size_t bn;
      uint8_t *b = bundle(J->targets, outs, J->ntargets, &bn);
      ok = b && write_out(path, b, bn);
      free(b);
    }
  }
  for (unsigned k = 0; k < J->ntargets; k++) free(outs[k].data);
  pw_diag_fini(&d);
  return ok;
}

static bool on_module(const ptx_module *pm, void *user) {
  compile_job *J = user;
  int index = J->nmodules++;
  if (!compile_texts(J, 1, &pm->name, &pm->text, &pm->len, pm->container ? index : -1)) J->failed++;
  return true;
}

/* Several inputs: every PTX module of every file, kept to be linked. */
typedef struct link_set {
  unsigned n, cap;
  char **names, **texts;
  size_t *lens;
} link_set;

static bool collect(const ptx_module *pm, void *user) {
  link_set *L = user;
  if (L->n == L->cap) {
    L->cap = L->cap ? L->cap * 2 : 8;
    L->names = realloc(L->names, L->cap * sizeof *L->names);
    L->texts = realloc(L->texts, L->cap * sizeof *L->texts);
    L->lens = realloc(L->lens, L->cap * sizeof *L->lens);
    if (!L->names || !L->texts || !L->lens) PW_DIE("out of memory");
  }
  L->names[L->n] = strdup(pm->name);
  L->texts[L->n] = malloc(pm->len + 1);
  if (!L->names[L->n] || !L->texts[L->n]) PW_DIE("out of memory");
  memcpy(L->texts[L->n], pm->text, pm->len);
  L->texts[L->n][pm->len] = 0;
  L->lens[L->n++] = pm->len;
  return true;
}

static int compile_linked(compile_job *J, char **files, unsigned nfiles) {
  link_set L = {0};
  pw_diag d;
  pw_diag_init(&d, stderr);
  int errs = 0;
  for (unsigned k = 0; k < nfiles; k++) errs += ptx_for_each_ptx(files[k], NULL, &d, collect, &L);
  pw_diag_fini(&d);
  bool ok = !errs && L.n > 0;
  if (!L.n && !errs) fprintf(stderr, "ptxwave compile: no PTX found\n");
  if (ok) ok = compile_texts(J, L.n, (const char *const *)L.names, (const char *const *)L.texts, L.lens, -1);
  for (unsigned k = 0; k < L.n; k++) {
    free(L.names[k]);
    free(L.texts[k]);
  }
  free(L.names);
  free(L.texts);
  free(L.lens);
  return ok ? 0 : 1;
}

int cmd_compile(int argc, char **argv) {
  compile_job J = {.emit = CG_EMIT_HSACO};
  const char *file = NULL, *arch = NULL;
  char *files[64];
  unsigned nfiles = 0;
  const char *llvm_opts[64];
  int nllvm = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cmd_is_help(a)) {
      usage(stdout);
      return 0;
    }
    bool has_next = i + 1 < argc;
    if (!strcmp(a, "--arch") && has_next) arch = argv[++i];
    else if (!strncmp(a, "--arch=", 7)) arch = a + 7;
    else if (!strcmp(a, "-o") && has_next) J.out = argv[++i];
    else if (!strcmp(a, "--emit") && has_next) {
      const char *e = argv[++i];
      if (!strcmp(e, "ll")) J.emit = CG_EMIT_LL;
      else if (!strcmp(e, "asm")) J.emit = CG_EMIT_ASM;
      else if (!strcmp(e, "obj")) J.emit = CG_EMIT_OBJ;
      else if (!strcmp(e, "hsaco")) J.emit = CG_EMIT_HSACO;
      else {
        fprintf(stderr, "ptxwave compile: --emit %s: expected ll, asm, obj or hsaco\n", e);
        return 2;
      }
    } else if (!strcmp(a, "--cov") && has_next) J.opt.cov = (unsigned)atoi(argv[++i]);
    else if (!strcmp(a, "--pipeline") && has_next) J.opt.pipeline = argv[++i];
    else if (!strcmp(a, "--no-opt")) J.opt.no_opt = true;
    else if (!strcmp(a, "-j") && has_next) J.opt.threads = (unsigned)atoi(argv[++i]);
    else if (!strcmp(a, "--features") && has_next) J.opt.extra_features = argv[++i];
    else if (!strcmp(a, "--time")) J.time = true;
    else if (!strcmp(a, "--no-lower")) J.opt.no_lower = true;
    else if (!strcmp(a, "--expand-mma")) J.opt.expand_mma = true;
    else if (!strcmp(a, "--llvm") && has_next) {
      if (nllvm == 64) {
        fprintf(stderr, "ptxwave compile: at most 64 --llvm options\n");
        return 2;
      }
      llvm_opts[nllvm++] = argv[++i];
    }
    else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "ptxwave compile: unknown option '%s'\n", a);
      usage(stderr);
      return 2;
    } else if (nfiles < 64) {
      if (!file) file = a;
      files[nfiles++] = (char *)a;
    } else {
      fprintf(stderr, "ptxwave compile: at most 64 input files\n");
      return 2;
    }
  }
  if (!file || !arch || !J.out) {
    usage(stderr);
    return 2;
  }
  char lerr[512];
  if (nllvm && !cg_llvm_options(nllvm, llvm_opts, lerr, sizeof lerr)) {
    fprintf(stderr, "ptxwave compile: --llvm: %s\n", lerr);
    return 2;
  }
  if (nllvm) atexit(cg_llvm_finish); /* -time-passes reports at LLVM's shutdown */
  char *list = strdup(arch);
  for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) {
    const ir_target *t = cg_target_find(s);
    if (!t) {
      fprintf(stderr, "ptxwave compile: unknown target '%s'\n", s);
      usage(stderr);
      free(list);
      return 2;
    }
    if (J.ntargets == 16) break;
    J.targets[J.ntargets++] = t;
  }
  free(list);
  if (J.ntargets > 1 && J.emit != CG_EMIT_HSACO) {
    fprintf(stderr, "ptxwave compile: several targets need --emit hsaco (an offload bundle)\n");
    return 2;
  }
  if (nfiles > 1) return compile_linked(&J, files, nfiles);
  pw_diag d;
  pw_diag_init(&d, stderr);
  size_t fl = strlen(file);
  if (fl > 5 && !strcmp(file + fl - 5, ".pwir")) {
    FILE *f = fopen(file, "rb");
    if (!f) {
      fprintf(stderr, "ptxwave compile: %s: %s\n", file, strerror(errno));
      return 1;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    size_t r;
    while (text && (r = fread(text + n, 1, cap - n, f)) > 0) {
      n += r;
      if (n == cap) text = realloc(text, cap *= 2);
    }
    fclose(f);
    const char *tp = text;
    bool ok = text && compile_texts(&J, 1, &file, &tp, &n, -1);
    free(text);
    pw_diag_fini(&d);
    return ok ? 0 : 1;
  }
  int errs = ptx_for_each_ptx(file, NULL, &d, on_module, &J);
  pw_diag_fini(&d);
  if (!J.nmodules && !errs) {
    fprintf(stderr, "ptxwave compile: %s: no PTX found\n", file);
    return 1;
  }
  return errs || J.failed ? 1 : 0;
}
