/* benchmarks/cg_bench.c: codegen over a corpus of PTX modules.
 *
 *   cg_bench [--arch gfx942] [--pipeline TEXT]... [--ptxas] [--each] [--limit N] [--threads N]
 *            [--llvm OPT]... [--out DIR] [--expand-mma]
 *            (--libdir DIR --list FILE | FILE.ptx...)
 *
 * For each module: parse and lower/ for the target (timed apart: the front
 * end), then compile to a linked code object
 * (cg_compile, CG_EMIT_HSACO) once per --pipeline ("none" = no passes; the
 * default pipeline when none is given), on one thread.  Prints per library
 * (the name's part before ".c<container>") the modules that compiled, and
 * overall the compile time per 1,000 PTX instructions for each pipeline.
 * With --ptxas, the same module text (with .target lowered to sm_90 when
 * higher) is also compiled by `ptxas -O3 -arch=sm_90` in a subprocess and
 * timed, on the modules both compilers accept: the ratio of the two is
 * printed in the same run, for ptxwave's whole compile (parse + lower/ +
 * codegen with the first pipeline: what ptxas's process does from text) and
 * for codegen alone.  --libdir/--list read the modules from the
 * libraries through the container API, as ptx_bench does (names as
 * `ptxwave extract` writes them); a missing DIR skips (exit 77).
 * With --threads N, every module that compiled is compiled twice more with
 * the default pipeline, timed in wall-clock time (the split compile runs on
 * several threads): unsplit (cg_options.threads = 1) and split into N
 * partitions (threads = N; 0 = the automatic choice); the sums, their ratio, and the ratio on the
 * largest modules are printed (docs/codegen.md "Parallel compile").
 * --expand-mma lowers mma.sync to the per-thread expansion even where the
 * target has MFMA/WMMA (lower_pipeline_options.expand_mma): the compile
 * time before the matrix instructions, in the same run's conditions.
 * A failing module's first error is counted by its reason (the text after
 * "for gfxNNN: "), and the most frequent reasons are printed.
 * A module that uses functions or variables it only declares (.extern:
 * relocatable device code, meant for cuLinkAddData with the modules that
 * define them) is compiled to a relocatable object (CG_EMIT_OBJ, the
 * symbols left undefined) instead, and counted as compiled; how many were
 * is printed ("as relocatable objects").
 * With --out DIR, the first pipeline's output of each module is written to
 * DIR/NAME.hsaco (DIR/NAME.o for a relocatable one), so that two builds'
 * code can be compared file by file (scripts/cmp-codegen.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "lower/lower.h"
#include "ir/ir.h"
#include "ir/ir_link.h"
#include "ptx/container.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

/* Wall-clock time, for --threads (the split compile runs on several
 * threads: their CPU time is not the point). */
static double wall(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* CPU time of the process, all threads (the extra work a split costs). */
static double proc_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* CPU time of this thread: the machine is shared, wall time is noise. */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

#define MAXP 8
#define MAXLIB 64
#define MAXREASON 256

typedef struct lib_stat {
  char name[64];
  unsigned n, ok, reloc;
  unsigned both_n;              /* --ptxas: modules both compile, */
  double both_pw, both_ptxas;   /* ptxwave's whole compile and ptxas's CPU time on them */
} lib_stat;

typedef struct split_stat {
  char name[96];
  uint64_t instrs;
  double t1, tn;          /* wall clock */
  double c1, cn;          /* process CPU time */
  unsigned nparts;
} split_stat;

typedef struct bench {
  const ir_target *target;
  bool split;            /* --threads N given: also time split compiles */
  unsigned threads;      /* N; 0 = cg_options' automatic choice */
  split_stat *splits;
  size_t nsplits, splits_cap;
  const char *pipelines[MAXP];
  unsigned npipe;
  bool ptxas;
  bool expand_mma;       /* --expand-mma */
  unsigned limit;
  char **names;          /* --list */
  size_t nnames;
  lib_stat libs[MAXLIB];
  unsigned nlibs;
  struct { char text[160]; unsigned n; } reasons[MAXREASON];
  unsigned nreasons;
  uint64_t nmod, nok, nreloc, instrs_ok[MAXP];
  double t[MAXP];
  /* both compilers */
  uint64_t both_n, both_instrs;
  double both_cg, both_front, both_ptxas;
  double front;           /* parse + lower/ of the modules that compiled */
  bool each;              /* --each: a line per module (name, instructions, seconds) */
  const char *out_dir;    /* --out: where each module's code object is written */
  unsigned nwrite_failed;
} bench;

/* DIR/NAME.EXT with the bytes of one compile; a failure is counted and
 * named, never silent (a comparison over a missing file would pass). */
static void write_output(bench *B, const char *name, const char *ext, const cg_output *out) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", B->out_dir, name, ext);
  FILE *f = fopen(path, "wb");
  bool ok = f && fwrite(out->data, 1, out->size, f) == out->size;
  if (f && fclose(f) != 0) ok = false;
  if (!ok) {
    fprintf(stderr, "cg_bench: cannot write %s\n", path);
    B->nwrite_failed++;
  }
}

/* The library of a stable name LIB.cNNNN.eNN.sm_XX.ptx: up to ".c<digits>.e". */
static const char *lib_end(const char *name) {
  for (const char *p = strstr(name, ".c"); p; p = strstr(p + 1, ".c")) {
    const char *q = p + 2;
    while (*q >= '0' && *q <= '9') q++;
    if (q > p + 2 && !strncmp(q, ".e", 2)) return p;
  }
  return NULL;
}

static lib_stat *lib_of(bench *B, const char *name) {
  char lib[64];
  const char *dot = lib_end(name);
  size_t n = dot ? (size_t)(dot - name) : strlen(name);
  if (n >= sizeof lib) n = sizeof lib - 1;
  memcpy(lib, name, n);
  lib[n] = 0;
  for (unsigned i = 0; i < B->nlibs; i++)
    if (!strcmp(B->libs[i].name, lib)) return &B->libs[i];
  if (B->nlibs == MAXLIB) return &B->libs[MAXLIB - 1];
  snprintf(B->libs[B->nlibs].name, sizeof B->libs[0].name, "%s", lib);
  return &B->libs[B->nlibs++];
}

static void count_reason(bench *B, const char *diag) {
  const char *r = strstr(diag, ": error: ");
  if (!r) r = diag;
  /* "cannot compile 'OP' ...: not implemented ...": keep OP in the reason */
  char opname[48] = "";
  const char *cc = strstr(r, "cannot compile '");
  if (cc) {
    cc += 16;
    size_t n = strcspn(cc, "'");
    if (n < sizeof opname - 3) snprintf(opname, sizeof opname, "%.*s: ", (int)n, cc);
  }
  const char *f = strstr(r, " for gfx");
  if (f) {
    const char *c = strstr(f, ": ");
    if (c) r = c + 2;
  } else if (r != diag) {
    r += 9;
  }
  char t[160];
  size_t n = strcspn(r, "\n");
  size_t o = strlen(opname);
  if (n + o >= sizeof t) n = sizeof t - 1 - o;
  memcpy(t, opname, o);
  memcpy(t + o, r, n);
  t[o + n] = 0;
  /* fold operand numbers and names out of the reason */
  for (char *p = t; *p; p++)
    if (*p == '\'') {
      char *q = strchr(p + 1, '\'');
      if (q && q - p > 24) memmove(p + 1, q, strlen(q) + 1);
    }
  for (unsigned i = 0; i < B->nreasons; i++)
    if (!strcmp(B->reasons[i].text, t)) {
      B->reasons[i].n++;
      return;
    }
  if (B->nreasons < MAXREASON) {
    snprintf(B->reasons[B->nreasons].text, sizeof B->reasons[0].text, "%s", t);
    B->reasons[B->nreasons++].n = 1;
  }
}

/* ptxas -O3 -arch=sm_90 on the text (a lower .target when it names a newer
 * one); its CPU time, or a negative value when ptxas refuses it.  A module
 * ptxwave compiles to a relocatable object goes through `ptxas -c` (a
 * relocatable cubin): the same job.  Without -c ptxas compiles the whole
 * program and drops the device functions no kernel reaches: all of them in
 * a module without kernels (libcudadevrt: 0.4 s for nothing against
 * ptxwave's 4.6 s for 206 functions). */
static double run_ptxas(const char *text, size_t len, bool reloc) {
  char in[] = "/tmp/cg_bench_XXXXXX.ptx";
  int fd = mkstemps(in, 4);
  if (fd < 0) return -1;
  FILE *f = fdopen(fd, "wb");
  const char *tg = strstr(text, ".target sm_");
  size_t pre = tg ? (size_t)(tg - text) : len;
  fwrite(text, 1, pre, f);
  if (tg) {
    int sm = atoi(tg + 11);
    const char *rest = tg + 11;
    while (*rest >= '0' && *rest <= '9') rest++;
    while (*rest == 'a' || *rest == 'f') rest++;
    fprintf(f, ".target sm_%d", sm > 90 ? 90 : sm);
    fwrite(rest, 1, len - (size_t)(rest - text), f);
  }
  fclose(f);
  fflush(stdout); /* else the child's freopen writes our buffered output again */
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    if (reloc) execlp("ptxas", "ptxas", "-c", "-O3", "-arch=sm_90", in, "-o", "/dev/null", (char *)NULL);
    else execlp("ptxas", "ptxas", "-O3", "-arch=sm_90", in, "-o", "/dev/null", (char *)NULL);
    _exit(127);
  }
  int st = 0;
  struct rusage ru;
  wait4(pid, &st, 0, &ru); /* ptxas's own CPU time, user + system */
  double t = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
  unlink(in);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? t : -1;
}

static bool one(const ptx_module *pm, void *user) {
  bench *B = user;
  if (pm->kind != ptx_kind_ptx) return true;
  if (B->names) {
    bool want = false;
    for (size_t i = 0; i < B->nnames && !want; i++) want = !strcmp(B->names[i], pm->name);
    if (!want) return true;
  }
  if (B->limit && B->nmod >= B->limit) return false;
  lib_stat *L = lib_of(B, pm->name);
  L->n++;
  B->nmod++;
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 1;
  pw_src src = {pm->name, pm->text, pm->len};
  ptx_parse_stats st = {0};
  double tf0 = now();
  ir_module *m = ptx_parse(pm->name, pm->text, pm->len, &d, &st);
  bool ok = m != NULL;
  /* relocatable device code: an object with its .extern symbols undefined;
   * a complete code object without the functions no kernel reaches, and
   * lower/ for the target first, as cg_compile_ptx does (timed as the
   * front end, apart from codegen) */
  bool reloc = ok && !ir_link_check_defined(m, NULL);
  if (ok && !reloc) ir_link_drop_unreached(m);
  if (ok) ok = lower_module(m, B->target, &(lower_pipeline_options){.diag = &d, .expand_mma = B->expand_mma});
  double tfront = now() - tf0;
  double tcg = 0;
  for (unsigned p = 0; ok && p < B->npipe; p++) {
    /* one thread: the CPU time of this thread is all of the compile */
    cg_options opt = {.target = B->target, .threads = 1};
    if (!strcmp(B->pipelines[p], "none")) opt.no_opt = true;
    else if (strcmp(B->pipelines[p], "default")) opt.pipeline = B->pipelines[p];
    cg_output out;
    double t0 = now();
    ok = cg_compile(m, &src, &opt, reloc ? CG_EMIT_OBJ : CG_EMIT_HSACO, &out, &d);
    double t = now() - t0;
    if (ok && p == 0 && B->out_dir) write_output(B, pm->name, reloc ? "o" : "hsaco", &out);
    free(out.data);
    if (ok) {
      B->t[p] += t;
      B->instrs_ok[p] += st.instrs;
      if (p == 0) tcg = t;
    }
  }
  if (ok && B->split) {
    double tt[2], cc[2];
    unsigned nparts = 1;
    for (unsigned k = 0; k < 2 && ok; k++) {
      cg_options opt = {.target = B->target, .threads = k ? B->threads : 1};
      cg_output out;
      double t0 = wall(), c0 = proc_cpu();
      ok = cg_compile(m, &src, &opt, CG_EMIT_HSACO, &out, &d);
      tt[k] = wall() - t0;
      cc[k] = proc_cpu() - c0;
      if (k) nparts = out.nparts;
      free(out.data);
    }
    if (ok) {
      if (B->nsplits == B->splits_cap)
        B->splits = realloc(B->splits, (B->splits_cap = B->splits_cap ? 2 * B->splits_cap : 64) * sizeof *B->splits);
      split_stat *S = &B->splits[B->nsplits++];
      snprintf(S->name, sizeof S->name, "%s", pm->name);
      S->instrs = st.instrs;
      S->t1 = tt[0];
      S->tn = tt[1];
      S->c1 = cc[0];
      S->cn = cc[1];
      S->nparts = nparts;
    }
  }
  double tp = -1;
  if (ok) {
    L->ok++;
    B->nok++;
    L->reloc += reloc;
    B->nreloc += reloc;
    B->front += tfront;
    if (B->ptxas) {
      tp = run_ptxas(pm->text, pm->len, reloc);
      if (tp >= 0) {
        B->both_n++;
        B->both_instrs += st.instrs;
        B->both_cg += tcg;
        B->both_front += tfront;
        B->both_ptxas += tp;
        L->both_n++;
        L->both_pw += tfront + tcg;
        L->both_ptxas += tp;
      }
    }
  } else {
    count_reason(B, pw_diag_text(&d));
  }
  if (B->each) {
    printf("module %s: %llu instructions, parse + lower/ %.3f s, codegen %.3f s%s", pm->name,
           (unsigned long long)st.instrs, tfront, tcg, ok ? "" : " (failed)");
    if (tp >= 0) printf(", ptxas %.3f s, ratio %.2f", tp, (tfront + tcg) / tp);
    printf("\n");
  }
  if (m) ir_module_destroy(m);
  pw_diag_fini(&d);
  return true;
}

static int by_instrs(const void *a, const void *b) {
  const split_stat *x = a, *y = b;
  return x->instrs < y->instrs ? 1 : x->instrs > y->instrs ? -1 : 0;
}

static int by_count(const void *a, const void *b) {
  const unsigned *x = a, *y = b;
  return (int)*y - (int)*x;
}

int main(int argc, char **argv) {
  static bench B;
  const char *libdir = NULL, *list = NULL;
  B.target = cg_target_find("gfx942");
  int first_file = argc;
  /* --llvm OPT: an LLVM command-line option (-time-passes, ...), for
   * measuring; parsed once before the first compile */
  const char *llvm_args[64];
  int nllvm = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--arch") && i + 1 < argc) B.target = cg_target_find(argv[++i]);
    else if (!strcmp(argv[i], "--pipeline") && i + 1 < argc && B.npipe < MAXP) B.pipelines[B.npipe++] = argv[++i];
    else if (!strcmp(argv[i], "--ptxas")) B.ptxas = true;
    else if (!strcmp(argv[i], "--each")) B.each = true;
    else if (!strcmp(argv[i], "--expand-mma")) B.expand_mma = true;
    else if (!strcmp(argv[i], "--limit") && i + 1 < argc) B.limit = (unsigned)atoi(argv[++i]);
    else if (!strcmp(argv[i], "--libdir") && i + 1 < argc) libdir = argv[++i];
    else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
    else if (!strcmp(argv[i], "--out") && i + 1 < argc) B.out_dir = argv[++i];
    else if (!strcmp(argv[i], "--llvm") && i + 1 < argc) {
      if (nllvm == 64) {
        fprintf(stderr, "cg_bench: at most 64 --llvm options\n");
        return 2;
      }
      llvm_args[nllvm++] = argv[++i];
    }
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
      B.split = true;
      B.threads = (unsigned)atoi(argv[++i]);
    }
    else if (argv[i][0] == '-') {
      fprintf(stderr, "usage: cg_bench [--arch gfx942] [--pipeline TEXT]... [--ptxas] [--each] [--limit N] [--threads N] [--llvm OPT]... [--out DIR] [--expand-mma] "
                      "(--libdir DIR --list FILE | FILE...)\n");
      return 2;
    } else {
      first_file = i;
      break;
    }
  }
  if (!B.target) {
    fprintf(stderr, "cg_bench: unknown --arch\n");
    return 2;
  }
  if (!B.npipe) B.pipelines[B.npipe++] = "default";
  char lerr[512];
  if (nllvm && !cg_llvm_options(nllvm, llvm_args, lerr, sizeof lerr)) {
    fprintf(stderr, "cg_bench: --llvm: %s\n", lerr);
    return 2;
  }
  pw_diag d;
  pw_diag_init(&d, stderr);
  if (libdir) {
    struct stat sb;
    if (stat(libdir, &sb) != 0) {
      printf("cg_bench: %s missing: skipped\n", libdir);
      return 77;
    }
    if (!list) {
      fprintf(stderr, "cg_bench: --libdir needs --list\n");
      return 2;
    }
    FILE *f = fopen(list, "r");
    if (!f) {
      perror(list);
      return 1;
    }
    char line[1024];
    size_t cap = 0;
    char **files = NULL;
    size_t nfiles = 0;
    while (fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = 0;
      if (!line[0] || line[0] == '#') continue;
      if (B.nnames == cap) B.names = realloc(B.names, (cap = cap ? 2 * cap : 256) * sizeof *B.names);
      B.names[B.nnames++] = strdup(line);
      /* the library file: the name up to ".c<digits>." */
      char *c = (char *)lib_end(line);
      if (c) *c = 0;
      bool have = false;
      for (size_t k = 0; k < nfiles && !have; k++) have = !strcmp(files[k], line);
      if (!have) {
        files = realloc(files, (nfiles + 1) * sizeof *files);
        files[nfiles++] = strdup(line);
      }
    }
    fclose(f);
    for (size_t k = 0; k < nfiles; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", libdir, files[k]);
      ptx_for_each_ptx(path, NULL, &d, one, &B);
      free(files[k]);
    }
    free(files);
  } else {
    for (int i = first_file; i < argc; i++) ptx_for_each_ptx(argv[i], NULL, &d, one, &B);
  }
  pw_diag_fini(&d);

  printf("target %s: %llu modules, %llu compiled (%.1f%%), %llu of them as relocatable objects "
         "(external symbols left for the linker)\n", B.target->name, (unsigned long long)B.nmod,
         (unsigned long long)B.nok, B.nmod ? 100.0 * B.nok / B.nmod : 0.0, (unsigned long long)B.nreloc);
  for (unsigned i = 0; i < B.nlibs; i++)
    printf("  %-28s %4u/%-4u %5.1f%%%s%.0u%s\n", B.libs[i].name, B.libs[i].ok, B.libs[i].n,
           B.libs[i].n ? 100.0 * B.libs[i].ok / B.libs[i].n : 0.0, B.libs[i].reloc ? "  (relocatable: " : "",
           B.libs[i].reloc, B.libs[i].reloc ? ")" : "");
  for (unsigned p = 0; p < B.npipe; p++)
    printf("pipeline %-12.60s %.3f s for %llu instructions: %.4f s per 1,000 PTX instructions\n", B.pipelines[p],
           B.t[p], (unsigned long long)B.instrs_ok[p], B.instrs_ok[p] ? 1000.0 * B.t[p] / B.instrs_ok[p] : 0.0);
  if (B.npipe && B.instrs_ok[0])
    printf("front end (parse + lower/) %.3f s: %.4f s per 1,000 PTX instructions\n", B.front,
           1000.0 * B.front / B.instrs_ok[0]);
  if (B.ptxas && B.both_n)
    printf("vs ptxas -O3 -arch=sm_90 on the %llu modules both compile (%llu instructions): "
           "ptxwave %.3f s (parse + lower/ %.3f s, codegen %.3f s), ptxas %.3f s CPU "
           "(%.4f vs %.4f s per 1,000 instructions; ptxas's process included); "
           "ratio ptxwave/ptxas %.2f whole, %.2f codegen alone\n",
           (unsigned long long)B.both_n, (unsigned long long)B.both_instrs, B.both_front + B.both_cg,
           B.both_front, B.both_cg, B.both_ptxas, 1000.0 * (B.both_front + B.both_cg) / B.both_instrs,
           1000.0 * B.both_ptxas / B.both_instrs, (B.both_front + B.both_cg) / B.both_ptxas,
           B.both_cg / B.both_ptxas);
  /* where the difference is: per library, the whole compile against ptxas's */
  if (B.ptxas && B.both_n)
    for (unsigned i = 0; i < B.nlibs; i++)
      if (B.libs[i].both_n)
        printf("  %-28s %4u both: ptxwave %8.3f s, ptxas %8.3f s, ratio %.2f, difference %+.3f s\n",
               B.libs[i].name, B.libs[i].both_n, B.libs[i].both_pw, B.libs[i].both_ptxas,
               B.libs[i].both_pw / B.libs[i].both_ptxas, B.libs[i].both_pw - B.libs[i].both_ptxas);
  if (B.split && B.nsplits) {
    double t1 = 0, tn = 0, c1 = 0, cn = 0;
    for (size_t i = 0; i < B.nsplits; i++) {
      t1 += B.splits[i].t1;
      tn += B.splits[i].tn;
      c1 += B.splits[i].c1;
      cn += B.splits[i].cn;
    }
    printf("split compile, %zu modules, one thread vs --threads %u (0: automatic):\n"
           "  wall clock %.3f s -> %.3f s: ratio split/unsplit %.2f\n"
           "  process CPU %.3f s -> %.3f s: ratio %.2f (the work the split adds)\n",
           B.nsplits, B.threads, t1, tn, t1 > 0 ? tn / t1 : 0.0, c1, cn, c1 > 0 ? cn / c1 : 0.0);
    qsort(B.splits, B.nsplits, sizeof *B.splits, by_instrs);
    printf("  the largest modules (wall clock; process CPU):\n");
    for (size_t i = 0; i < B.nsplits && i < 8; i++)
      printf("  %-56.56s %7llu instrs %2u parts  wall %.3f -> %.3f s (%.2f)  cpu %.3f -> %.3f s (%.2f)\n",
             B.splits[i].name, (unsigned long long)B.splits[i].instrs, B.splits[i].nparts, B.splits[i].t1,
             B.splits[i].tn, B.splits[i].t1 > 0 ? B.splits[i].tn / B.splits[i].t1 : 0.0, B.splits[i].c1,
             B.splits[i].cn, B.splits[i].c1 > 0 ? B.splits[i].cn / B.splits[i].c1 : 0.0);
  }
  free(B.splits);
  /* the most frequent failure reasons */
  unsigned order[MAXREASON][2];
  for (unsigned i = 0; i < B.nreasons; i++) {
    order[i][0] = B.reasons[i].n;
    order[i][1] = i;
  }
  qsort(order, B.nreasons, sizeof order[0], by_count);
  if (B.nreasons) printf("first errors of the failing modules:\n");
  for (unsigned i = 0; i < B.nreasons && i < 12; i++)
    printf("  %5u  %s\n", order[i][0], B.reasons[order[i][1]].text);
  for (size_t i = 0; i < B.nnames; i++) free(B.names[i]);
  free(B.names);
  /* LLVM's timers (-time-passes) report when LLVM shuts down */
  fflush(stdout);
  if (nllvm) cg_llvm_finish();
  if (B.nwrite_failed) {
    fprintf(stderr, "cg_bench: %u outputs not written\n", B.nwrite_failed);
    return 1;
  }
  return 0;
}
