/* tools/cmd_lower.c: `ptxwave lower FILE --target gfx942 [--print-ir]
 * [--print-after=PASS|all] [--hazards] [--no-verify]`.
 *
 * Reads PTX (or .pwir, by its extension), lowers it for the target
 * (lower_module: warps onto waves, barriers, special registers), verifies
 * that nothing warp-level is left, and prints the lowered IR.  Errors name
 * the instruction that could not be lowered, as file:line:col.  Exit
 * status 0 when the module lowered, 1 when not, 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "tools.h"
#include "util/diag.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave lower FILE --target GFX [--print-ir] [--print-after=PASS|all] [--hazards]\n"
          "                     [--expand-mma]\n"
          "\n"
          "Lowers a PTX (or .pwir) module for an AMD target: warps onto wavefronts,\n"
          "barriers, special registers.\n"
          "  --target GFX     a processor or a test's pseudo target (below)\n"
          "  --print-ir       print the lowered IR\n"
          "  --print-after=P  print the IR after pass P (lower_multimem, lower_warps, lower_barriers,\n"
          "                   lower_sregs) or after each (all)\n"
          "  --hazards        warn where two warps of one wave64 may wait on each other\n"
          "  --expand-mma     mma.sync per thread even where the target has MFMA/WMMA\n"
          "Targets (ir/ir_targets.def):");
  unsigned n;
  const ir_target *t = ir_targets(&n);
  for (unsigned w = 64; w >= 32; w -= 32) {
    fprintf(f, "\n  wave%u:", w);
    for (unsigned i = 0; i < n; i++)
      if (t[i].wave_size == w) fprintf(f, " %s", t[i].name);
  }
  fprintf(f, "\n");
}

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      char *nb = realloc(buf, cap *= 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (!got) break;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = n;
  return buf;
}

int cmd_lower(int argc, char **argv) {
  const char *file = NULL, *target = NULL, *print_after = NULL;
  bool print = false, hazards = false, expand_mma = false;
  for (int i = 1; i < argc; i++) {
    if (cmd_is_help(argv[i])) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--print-ir")) print = true;
    else if (!strcmp(argv[i], "--hazards")) hazards = true;
    else if (!strcmp(argv[i], "--expand-mma")) expand_mma = true;
    else if (!strcmp(argv[i], "--target") && i + 1 < argc) target = argv[++i];
    else if (!strncmp(argv[i], "--target=", 9)) target = argv[i] + 9;
    else if (!strncmp(argv[i], "--print-after=", 14)) print_after = argv[i] + 14;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "ptxwave lower: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else file = argv[i];
  }
  if (!file || !target) {
    usage(stderr);
    return 2;
  }
  const ir_target *t = ir_target_find(target);
  if (!t) {
    fprintf(stderr, "ptxwave lower: unknown target '%s'\n", target);
    return 2;
  }
  size_t len = 0;
  char *text = slurp(file, &len);
  if (!text) {
    fprintf(stderr, "ptxwave lower: cannot read %s\n", file);
    return 1;
  }
  pw_diag d;
  pw_diag_init(&d, stderr);
  size_t fl = strlen(file);
  bool pwir = fl > 5 && !strcmp(file + fl - 5, ".pwir");
  ir_module *m = pwir ? ir_parse(file, text, len, &d) : ptx_parse(file, text, len, &d, NULL);
  int rc = 1;
  if (m && ir_verify(m, NULL, &d)) {
    /* a debugging tool: verify after every pass, to name the one at fault */
    lower_hazards_stats hz = {0};
    lower_pipeline_options o = {.print_after = print_after, .print_out = stdout, .warn_hazards = hazards,
                                .hazard_stats = &hz, .expand_mma = expand_mma, .diag = &d, .verify_each = true};
    bool ok = lower_module(m, t, &o);
    if (hazards && t->wave_size == 64)
      fprintf(stderr,
              "hazards: %u of %u kernels flagged (%u of %u functions): %u barrier under a wave-varying branch "
              "(%u named), %u call of a function with a barrier under one, %u spin-wait\n",
              hz.kernels_flagged, hz.kernels, hz.funcs_flagged, hz.funcs, hz.barrier, hz.named_barrier, hz.call,
              hz.spin);
    if (ok) {
      rc = 0;
      if (print) ir_print_module(stdout, m);
    }
  }
  if (m) ir_module_destroy(m);
  pw_diag_fini(&d);
  free(text);
  return rc;
}
