/* benchmarks/lower_bench.c: lowering over the library corpus.
 *
 *   lower_bench --libdir DIR --list FILE [--target gfx942[,gfx1100...]] [--quiet]
 *   lower_bench --libdir DIR --list FILE --hazards
 *
 * Reads each PTX module named in FILE (stable entry names, as in
 * tests/corpus/sample.txt) straight from the libraries in DIR, parses it,
 * and lowers it for each target.  A module that uses a tensor-core or
 * asynchronous-copy instruction lower/ does not lower yet (wmma, wgmma,
 * mma.sp, cp.async.bulk*, cp.async.mbarrier.arrive, mbarrier, tcgen05 ...)
 * is counted apart; mma.sync, ldmatrix, stmatrix, movmatrix (lower_mma)
 * and plain cp.async with its commit/wait (lower_async) are lowered like
 * everything else.  For every other module lowering must succeed; when it does not,
 * the instruction it could not lower is named.  Prints one line per
 * failure and the rate per target, with the lowering time.
 *
 * --hazards: no lowering; every module (tensor-core ones too) is parsed and
 * given to the wave64 hazard check (lower_check_hazards, gfx942's facts),
 * and the kernels it flags are counted with the patterns it found
 * (docs/lowering.md "The hazard"): how much wave splitting would have to
 * handle.
 *
 * Exit status: 0 when every module without tensor-core/async instructions
 * lowered for every target, 1 otherwise; 77 (skipped) without DIR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/container.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The first tensor-core or async-copy instruction of m that lower/ does
 * not lower, or NULL. */
static const char *tensor_or_async(const ir_module *m) {
  ir_foreach_func(m, f) ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    switch ((ir_op)i->op) {
    case ir_op_mma_sp: case ir_op_wmma_load: case ir_op_wmma_store: case ir_op_wmma_mma: case ir_op_wgmma_fence:
    case ir_op_wgmma_commit_group: case ir_op_wgmma_wait_group: case ir_op_wgmma_mma_async:
    case ir_op_cp_async_mbarrier_arrive: case ir_op_cp_async_bulk: case ir_op_cp_reduce_async_bulk:
    case ir_op_cp_reduce_async_bulk_tensor: case ir_op_cp_async_bulk_prefetch:
    case ir_op_cp_async_bulk_prefetch_tensor: case ir_op_cp_async_bulk_commit_group:
    case ir_op_cp_async_bulk_wait_group: case ir_op_mbarrier_init: case ir_op_mbarrier_inval:
    case ir_op_mbarrier_expect_tx: case ir_op_mbarrier_complete_tx: case ir_op_mbarrier_arrive:
    case ir_op_mbarrier_arrive_drop: case ir_op_mbarrier_test_wait: case ir_op_mbarrier_try_wait:
    case ir_op_mbarrier_pending_count: case ir_op_st_async: case ir_op_red_async: case ir_op_tensormap_replace:
    case ir_op_tensormap_cp_fenceproxy:
      return ir_op_infos[i->op].ptx;
    case ir_op_opaque:
      return i->opaque ? i->opaque : "opaque";
    default:
      break;
    }
  }
  return NULL;
}

typedef struct totals {
  unsigned modules, parse_fail, tensor, clean;
  unsigned ok[8], fail[8];
  double secs[8];
  unsigned generic[8], converted[8];   /* opt_addrspace: generic accesses, made specific */
  unsigned long long instrs;
  lower_hazards_stats hz;
  unsigned hz_modules_flagged;
} totals;

static void hazards_module(totals *T, const char *name, const char *text, size_t len, bool quiet) {
  T->modules++;
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse(name, text, len, &d, NULL);
  if (!m) {
    T->parse_fail++;
    if (!quiet) printf("PARSE-FAIL %s\n", name);
    pw_diag_fini(&d);
    return;
  }
  ir_module_set_target(m, ir_target_find("gfx942"));
  unsigned before = T->hz.kernels_flagged;
  lower_hazards_stats one = {0};
  lower_check_hazards(m, &(lower_hazards_options){.stats = &one});
  T->hz.barrier += one.barrier;
  T->hz.named_barrier += one.named_barrier;
  T->hz.call += one.call;
  T->hz.spin += one.spin;
  T->hz.funcs += one.funcs;
  T->hz.funcs_flagged += one.funcs_flagged;
  T->hz.kernels += one.kernels;
  T->hz.kernels_flagged += one.kernels_flagged;
  if (one.funcs_flagged) {
    T->hz_modules_flagged++;
    if (!quiet)
      printf("HAZARD %s: %u of %u kernels, %u functions; %u barrier (%u named), %u call, %u spin\n", name,
             T->hz.kernels_flagged - before, one.kernels, one.funcs_flagged, one.barrier, one.named_barrier, one.call,
             one.spin);
  }
  ir_module_destroy(m);
  pw_diag_fini(&d);
}

static void one_module(totals *T, const char *name, const char *text, size_t len, const ir_target **tg,
                       unsigned ntg, bool quiet) {
  T->modules++;
  pw_diag d;
  pw_diag_init(&d, NULL);
  ptx_parse_stats st = {0};
  ir_module *m0 = ptx_parse(name, text, len, &d, &st);
  pw_diag_fini(&d);
  if (!m0) {
    T->parse_fail++;
    if (!quiet) printf("PARSE-FAIL %s\n", name);
    return;
  }
  const char *why = tensor_or_async(m0);
  ir_module_destroy(m0);
  if (why) {
    T->tensor++;
    return;
  }
  T->clean++;
  T->instrs += st.instrs;
  for (unsigned k = 0; k < ntg; k++) {
    pw_diag_init(&d, NULL);
    ir_module *m = ptx_parse(name, text, len, &d, NULL);
    double t0 = now();
    bool ok = m && lower_module(m, tg[k], &(lower_pipeline_options){.diag = &d, .generic_accesses = &T->generic[k],
                                                                   .generic_converted = &T->converted[k]});
    T->secs[k] += now() - t0;
    if (ok) {
      T->ok[k]++;
    } else {
      T->fail[k]++;
      const char *what = "?";
      if (m) lower_first_unlowered(m, &what);
      const char *msg = pw_diag_text(&d);
      const char *nl = msg ? strchr(msg, '\n') : NULL;
      printf("FAIL %s %s: %.*s\n", tg[k]->name, name, nl ? (int)(nl - msg) : 200, msg && *msg ? msg : what);
    }
    if (m) ir_module_destroy(m);
    pw_diag_fini(&d);
  }
}

int main(int argc, char **argv) {
  const char *libdir = NULL, *list = NULL, *targets = "gfx942,gfx1100";
  bool quiet = false, hazards = false;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--libdir") && i + 1 < argc) libdir = argv[++i];
    else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
    else if (!strcmp(argv[i], "--target") && i + 1 < argc) targets = argv[++i];
    else if (!strcmp(argv[i], "--quiet")) quiet = true;
    else if (!strcmp(argv[i], "--hazards")) hazards = true;
    else {
      fprintf(stderr, "usage: lower_bench --libdir DIR --list FILE [--target gfx942,gfx1100] [--quiet]\n");
      return 2;
    }
  }
  if (!libdir || !list) {
    fprintf(stderr, "usage: lower_bench --libdir DIR --list FILE [--target gfx942,gfx1100] [--quiet]\n");
    return 2;
  }
  struct stat sb;
  if (stat(libdir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
    printf("lower_bench: library directory %s not present: skipped\n", libdir);
    return 77;
  }
  const ir_target *tg[8];
  unsigned ntg = 0;
  char *tcopy = strdup(targets);
  for (char *save = NULL, *t = strtok_r(tcopy, ",", &save); t && ntg < 8; t = strtok_r(NULL, ",", &save)) {
    tg[ntg] = ir_target_find(t);
    if (!tg[ntg]) {
      fprintf(stderr, "lower_bench: unknown target %s\n", t);
      return 2;
    }
    ntg++;
  }
  FILE *lf = fopen(list, "r");
  if (!lf) {
    perror(list);
    return 1;
  }
  totals T = {0};
  ptx_decoder *dec = ptx_decoder_new();
  pw_diag d;
  pw_diag_init(&d, stderr);
  ptx_file *f = NULL;
  char cur[512] = "", line[1024];
  while (fgets(line, sizeof line, lf)) {
    char *n = line;
    while (*n == ' ' || *n == '\t') n++;
    n[strcspn(n, "\r\n")] = 0;
    if (!*n || *n == '#') continue;
    /* a stable name: LIBRARY.cCONTAINER.eENTRY.sm_XX.ptx */
    const char *c = strstr(n, ".c");
    while (c && !(c[2] >= '0' && c[2] <= '9')) c = strstr(c + 2, ".c");
    if (!c || (size_t)(c - n) >= sizeof cur) continue;
    if (strncmp(cur, n, (size_t)(c - n)) || cur[c - n]) {
      if (f) ptx_file_close(f);
      memcpy(cur, n, (size_t)(c - n));
      cur[c - n] = 0;
      char path[1024];
      snprintf(path, sizeof path, "%s/%s", libdir, cur);
      f = ptx_file_open(path, &d);
    }
    unsigned long ci = strtoul(c + 2, NULL, 10), ei = 0;
    const char *e = strstr(c + 2, ".e");
    if (e) ei = strtoul(e + 2, NULL, 10);
    ptx_payload pl = {0};
    if (!f || !e || ci >= f->ncontainers || ei >= f->containers[ci].nentries ||
        f->containers[ci].entries[ei].kind != ptx_kind_ptx ||
        !ptx_entry_read(f, &f->containers[ci].entries[ei], NULL, dec, &d, &pl)) {
      printf("MISSING %s\n", n);
      continue;
    }
    if (hazards) hazards_module(&T, n, (const char *)pl.data, pl.len, quiet);
    else one_module(&T, n, (const char *)pl.data, pl.len, tg, ntg, quiet);
    ptx_payload_free(&pl);
  }
  if (f) ptx_file_close(f);
  fclose(lf);
  pw_diag_fini(&d);
  ptx_decoder_free(dec);
  if (hazards) {
    lower_hazards_stats *h = &T.hz;
    printf("lower_bench --hazards (wave64): %u modules (%u did not parse), %u with a warning\n", T.modules,
           T.parse_fail, T.hz_modules_flagged);
    printf("  kernels flagged: %u of %u (%.2f%%); functions flagged: %u of %u\n", h->kernels_flagged, h->kernels,
           h->kernels ? 100.0 * h->kernels_flagged / h->kernels : 0.0, h->funcs_flagged, h->funcs);
    printf("  warnings: %u barrier under a wave-varying branch (%u of them named barriers or bar.red with an id "
           "other than 0), %u call of a function with a barrier under one, %u spin-wait loops\n",
           h->barrier, h->named_barrier, h->call, h->spin);
    return 0;
  }
  printf("lower_bench: %u modules, %u with tensor-core/async-copy instructions lower/ does not lower, %u parse failures, "
         "%u others (%llu instructions)\n", T.modules, T.tensor, T.parse_fail, T.clean, T.instrs);
  bool all = true;
  for (unsigned k = 0; k < ntg; k++) {
    printf("lower_bench: %s (wave%u): %u of %u lowered (%.1f%%), %.3f s, %.0f k instructions/s\n", tg[k]->name,
           tg[k]->wave_size, T.ok[k], T.clean, T.clean ? 100.0 * T.ok[k] / T.clean : 100.0, T.secs[k],
           T.secs[k] > 0 ? T.instrs / T.secs[k] / 1000 : 0);
    printf("lower_bench: %s: opt_addrspace made %u of %u generic ld/st/atom/red specific (%.1f%%)\n", tg[k]->name,
           T.converted[k], T.generic[k], T.generic[k] ? 100.0 * T.converted[k] / T.generic[k] : 0.0);
    if (T.fail[k]) all = false;
  }
  free(tcopy);
  return all ? 0 : 1;
}
