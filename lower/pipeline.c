/* lower/pipeline.c: lower_module() runs the passes top to bottom for one
 * target (style.md #8).  It first sets the module's target facts
 * (ir_module_set_target: the row, its wave size and generation), which
 * every pass reads.  One macro runs a pass: it reports progress, prints
 * the IR after the pass when asked (--print-after=PASS or "all"), and
 * verifies the module after it when asked (verify_each, or a build with
 * -Dlower_verify_each=true: below), so a pass that breaks an invariant is
 * named at once.
 *
 * Order: first the families that become plain IR no later pass rewrites:
 * lower_async (cp.async as ld + st), then lower_mbarrier (mbarrier objects
 * as 64-bit atomics; its arrive on cp.async completion is due at once,
 * the copies being done), lower_video (vadd ... as integer IR),
 * lower_multimem (multimem.* as ld/st/red) and textures (their expansion
 * is plain IR that every later pass and codegen take as it is).  Then
 * printf (its records read %tid/%ctaid, which sregs lowers; it builds no
 * warp op), the matrix ops (lower_wmma: wmma.* become loads, stores and
 * mma.sync; lower_mma: ldmatrix/mma become shfl.sync and
 * %laneid reads, which lower_warps then lowers), warps (it reads
 * %tid/%ntid for %warpid, which sregs then lowers), barriers (bar.red and
 * the named barriers' zeroing read %tid), special registers, then math
 * (independent of the others), then opt_addrspace (generic accesses of
 * provable spaces to specific ones) and opt_dce, which sweeps what the
 * lowerings built and did not use.  Then the module is marked lowered and
 * verified with require_lowered: no warp-level op or register may remain.
 */
#include <setjmp.h>

#include "lower_internal.h"

/* Verifying the module after every pass names the pass that broke it, but
 * it walks the whole IR once per pass: three fifths of the front end's time in
 * the ptxas comparison (docs/lowering.md).  Every compile verifies the
 * parsed module and the lowered one (below, require_lowered); after each
 * pass only with verify_each (ptxwave lower, fuzz_lower) or in a build
 * configured with -Dlower_verify_each=true (the ASan build of
 * scripts/test.sh, so the whole test suite still checks every pass).
 * The macro hands the pass's progress to lower_pass_done (lower_contract.c,
 * as NIR_PASS does): only after progress are the analyses the pass does
 * not preserve invalidated, the IR printed and verified; verifying builds
 * then check the pass's contract (nothing it eliminates remains). */
#define LOWER_PASS(name, ...)                                                                      \
  do {                                                                                             \
    const name##_options o_ = {__VA_ARGS__};                                                       \
    bool progress_ = name(m, &o_);                                                                 \
    if (!lower_pass_done(m, &name##_contract, progress_, opt)) return false;                      \
  } while (0)

static bool lower_module_passes(ir_module *m, const ir_target *t, const lower_pipeline_options *opt);

/* Out of memory in the module's arena while lowering is an error return
 * (the module is then half lowered: the caller discards it, as after any
 * failure), not an abort.  The passes' scratch arenas take the same
 * recovery point (their chunks leak on that path). */
bool lower_module(ir_module *m, const ir_target *t, const lower_pipeline_options *opt) {
  pw_diag *diag = opt ? opt->diag : NULL;
  jmp_buf oomjb;
  void *outer = m->arena.on_oom;
  if (setjmp(oomjb)) {
    m->arena.on_oom = outer;
    if (diag) pw_error(diag, m->source_name, "out of memory lowering the module for %s", t ? t->name : "wave32");
    return false;
  }
  m->arena.on_oom = &oomjb;
  bool ok = lower_module_passes(m, t, opt);
  m->arena.on_oom = outer;
  return ok;
}

static bool lower_module_passes(ir_module *m, const ir_target *t, const lower_pipeline_options *opt) {
  pw_diag *diag = opt ? opt->diag : NULL;
  int errors0 = diag ? diag->nerrors : 0;
  ir_module_set_target(m, t);   /* the facts every pass reads: target, wave size */
  if (opt && opt->warn_hazards)
    lower_check_hazards(m, &(lower_hazards_options){.diag = diag, .stats = opt->hazard_stats});
  LOWER_PASS(lower_async, .diag = diag);
  LOWER_PASS(lower_cluster, .diag = diag);
  LOWER_PASS(lower_mbarrier, .diag = diag);
  LOWER_PASS(lower_video, .diag = diag);
  LOWER_PASS(lower_multimem, .diag = diag);
  LOWER_PASS(lower_tex, .diag = diag);
  LOWER_PASS(lower_printf, .diag = diag);
  LOWER_PASS(lower_wmma, .diag = diag);
  LOWER_PASS(lower_mma, .expand_mma = opt && opt->expand_mma, .diag = diag);
  LOWER_PASS(lower_warps, .diag = diag);
  LOWER_PASS(lower_barriers, .diag = diag);
  LOWER_PASS(lower_sregs, .diag = diag);
  LOWER_PASS(lower_math, .diag = diag);
  LOWER_PASS(opt_addrspace, .generic = opt ? opt->generic_accesses : NULL,
             .converted = opt ? opt->generic_converted : NULL);
  LOWER_PASS(opt_dce, 0);
  m->facts.lowered = 1;
  if (diag && diag->nerrors > errors0) return false;
  if (!ir_verify(m, &(ir_verify_options){.require_lowered = true}, diag)) return false;
  return true;
}

const ir_instr *lower_first_unlowered(const ir_module *m, const char **what) {
  ir_foreach_func(m, f) ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    if (ir_instr_is_unlowered(i)) {
      if (what) *what = i->op == ir_op_sreg ? ir_sreg_infos[i->sreg].name : ir_op_infos[i->op].ptx;
      return i;
    }
  }
  return NULL;
}
