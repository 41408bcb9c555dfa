/* lower/lower.h: the lowering passes, IR -> IR (design.md, "Warps on
 * wavefronts"; docs/lowering.md).
 *
 * Each pass replaces one family of PTX-level operations with the wave-level
 * target operations of ir_ops.def (level TGT) that codegen maps to AMDGPU
 * intrinsics and the emulator executes at the target's wave size.  Every
 * pass has one shape (style.md #7):
 *
 *     bool lower_X(ir_module *m, const lower_X_options *opt);
 *
 * returning whether it changed the module.  A pass that meets an operation
 * it cannot lower leaves it in place and reports it to opt->diag (if set);
 * the verifier's require_lowered mode then names what is left.
 *
 * What a pass lowers for is the module's target facts (ir.h, m->facts: the
 * row of ir/ir_targets.def, its wave size and generation), never an option:
 * lower_module() sets them first (ir_module_set_target), then runs the
 * passes top to bottom (pipeline.c); a tool or test that runs one pass
 * alone calls ir_module_set_target before it.  A module without a target
 * (facts.target NULL) is lowered for wave32 with no target-specific
 * instructions.
 */
#ifndef PW_LOWER_H
#define PW_LOWER_H

#include <stdbool.h>
#include <stdio.h>

#include "ir/ir.h"
#include "util/diag.h"

/* ---- lower_warps.c ------------------------------------------------------ */
/* shfl vote match redux activemask elect bar.warp.sync and the warp special
 * registers (%laneid %warpid %nwarpid %lanemask_*), for the module's wave
 * of 32 (a warp is a wave) or 64 (two warps per wave). */
typedef struct lower_warps_options {
  pw_diag *diag;
} lower_warps_options;
bool lower_warps(ir_module *m, const lower_warps_options *opt);

/* ---- lower_wmma.c ------------------------------------------------------- */
/* wmma.load / wmma.store / wmma.mma in the fragment layout of ir/ir_wmma.h
 * (the mma.sync layouts of its tiles) as per-thread loads and stores and
 * mma.sync, which lower_mma (next) puts on MFMA/WMMA or expands.  Forms it
 * does not have (sub-byte types) are reported by lower_warps. */
typedef struct lower_wmma_options {
  pw_diag *diag;
} lower_wmma_options;
bool lower_wmma(ir_module *m, const lower_wmma_options *opt);

/* ---- lower_mma.c -------------------------------------------------------- */
/* ldmatrix, stmatrix, movmatrix and the mma.sync forms of ir/ir_mma.h as
 * per-thread code: full-warp shfl.sync.idx (lowered next by lower_warps),
 * loads, stores, fma/dp4a/cvt.  Target independent; runs before
 * lower_warps.  wgmma.* is reported here, the other matrix ops it cannot
 * expand (sub-byte wmma.*, mma.sp, other shapes) by lower_warps. */
typedef struct lower_mma_options {
  bool expand_mma;         /* mma.sync per thread even where the target has MFMA/WMMA */
  pw_diag *diag;
} lower_mma_options;
bool lower_mma(ir_module *m, const lower_mma_options *opt);

/* ---- lower_async.c ------------------------------------------------------ */
/* cp.async as a synchronous ld.global + st.shared (zero fill past src-size);
 * commit_group / wait_group / wait_all removed (nothing left to wait for). */
typedef struct lower_async_options {
  pw_diag *diag;
} lower_async_options;
bool lower_async(ir_module *m, const lower_async_options *opt);

/* ---- lower_cluster.c ---------------------------------------------------- */
/* barrier.cluster, mapa, getctarank and clusterlaunchcontrol.* for clusters
 * of one CTA: fences, workgroup_barrier, the identity, 0, and a failed
 * try_cancel (a store and mbarrier.complete_tx, so it runs before
 * lower_mbarrier). */
typedef struct lower_cluster_options {
  pw_diag *diag;
} lower_cluster_options;
bool lower_cluster(ir_module *m, const lower_cluster_options *opt);

/* ---- lower_mbarrier.c --------------------------------------------------- */
/* mbarrier.* and cp.async.mbarrier.arrive as 64-bit loads, stores and
 * compare-and-swap loops on the object word (ir/ir_mbarrier.h).  Runs after
 * lower_async (cp.async is then synchronous). */
typedef struct lower_mbarrier_options {
  pw_diag *diag;
} lower_mbarrier_options;
bool lower_mbarrier(ir_module *m, const lower_mbarrier_options *opt);

/* ---- lower_video.c ------------------------------------------------------ */
/* vadd vsub vabsdiff vmin vmax vshl vshr (scalar video) as 64-bit integer
 * arithmetic. */
typedef struct lower_video_options {
  pw_diag *diag;
} lower_video_options;
bool lower_video(ir_module *m, const lower_video_options *opt);

/* ---- lower_multimem.c --------------------------------------------------- */
/* multimem.ld_reduce / st / red to ld / st / red: on a runtime of one
 * device a multimem address names one copy (multicast is reported
 * unsupported), so the reduction is over one value.  Target independent:
 * also run on unlowered IR before the emulator loads it. */
typedef struct lower_multimem_options {
  pw_diag *diag;
} lower_multimem_options;
bool lower_multimem(ir_module *m, const lower_multimem_options *opt);

/* ---- lower_sregs.c ------------------------------------------------------ */
/* %tid %ntid %ctaid %nctaid %dynamic_smem_size %clock* %globaltimer* %smid
 * to workitem/workgroup ids, sizes, counts, counters and hw_id. */
typedef struct lower_sregs_options {
  pw_diag *diag;
} lower_sregs_options;
bool lower_sregs(ir_module *m, const lower_sregs_options *opt);

/* ---- lower_barriers.c --------------------------------------------------- */
/* bar.sync 0 / barrier.sync 0 without a count -> workgroup_barrier; named
 * and counted barriers and bar.arrive -> counters in shared memory;
 * bar.red.popc/and/or -> a shared accumulator between two barriers. */
typedef struct lower_barriers_options {
  pw_diag *diag;
} lower_barriers_options;
bool lower_barriers(ir_module *m, const lower_barriers_options *opt);

/* ---- lower_tex.c ------------------------------------------------------- */
/* tex tld4 txq suld sust sured suq on texture/surface objects to loads of
 * ptxwave's descriptor (tex_desc.def), address arithmetic, global loads
 * and stores, format conversion and filtering (docs/lowering.md,
 * "Textures").  Target independent: the runtime's emulator backend runs it
 * alone on unlowered IR. */
typedef struct lower_tex_options {
  pw_diag *diag;
} lower_tex_options;
bool lower_tex(ir_module *m, const lower_tex_options *opt);

/* ---- lower_printf.c ----------------------------------------------------- */
/* vprintf and __assertfail calls -> records in the runtime's device printf
 * buffer (util/pw_printf.h); __assertfail then ends the thread (exit). */
typedef struct lower_printf_options {
  pw_diag *diag;
} lower_printf_options;
bool lower_printf(ir_module *m, const lower_printf_options *opt);

/* ---- lower_math.c ------------------------------------------------------- */
/* Math without a one-to-one AMD instruction, expanded into integer, bit,
 * f64 round-to-nearest and select ops: cvt to/from fp8/fp6/fp4/tf32 and
 * between packed types, f64 -> f16/bf16 with .rz/.rm/.rp, cvt.pack, fns,
 * fma/mad.rz/.rm/.rp.f64, mul.rz/.rm/.rp.f32/.f64, div/rcp/sqrt.rz/.rm/.rp.f32,
 * ex2/tanh of f16x2/bf16x2, tanh.f16/bf16 and ex2.bf16 (docs/lowering.md). */
typedef struct lower_math_options {
  pw_diag *diag;
} lower_math_options;
bool lower_math(ir_module *m, const lower_math_options *opt);

/* ---- lower_hazards.c ---------------------------------------------------- */
/* An analysis, not a transformation: warns where two warps of one wave64
 * may diverge around a barrier (a barrier control dependent on a value
 * that varies inside a wave).  Returns the number of warnings. */
/* Counts added to for a survey (benchmarks/lower_bench --hazards): the
 * warnings by pattern, and the functions and kernels with at least one in
 * their own body (a spin loop in a device function counts for it, not for
 * the kernels that call it). */
typedef struct lower_hazards_stats {
  unsigned barrier;        /* bar.sync/bar.red/workgroup barrier under a wave-varying branch */
  unsigned named_barrier;  /* of those, barriers with a non-constant id or an id other than 0 */
  unsigned call;           /* call of a function with a barrier under such a branch */
  unsigned spin;           /* spin-wait loops on memory with no barrier inside */
  unsigned funcs, funcs_flagged, kernels, kernels_flagged;
} lower_hazards_stats;
typedef struct lower_hazards_options {
  pw_diag *diag;           /* warnings go here (NULL: only counted) */
  lower_hazards_stats *stats;  /* NULL: not counted by pattern */
} lower_hazards_options;
unsigned lower_check_hazards(ir_module *m, const lower_hazards_options *opt);

/* ---- opt_addrspace.c ---------------------------------------------------- */
/* Generic ld/st/atom/red whose address provably comes from cvta of one
 * space (through mov/add/sub/mad/phi) become accesses of that space.
 * Counts (added to, when set): the generic accesses seen, those converted. */
typedef struct opt_addrspace_options {
  unsigned *generic, *converted;
} opt_addrspace_options;
bool opt_addrspace(ir_module *m, const opt_addrspace_options *opt);

/* ---- opt_dce.c ---------------------------------------------------------- */
/* Removes unused results of pure (and convergent) ops, after lowering. */
typedef struct opt_dce_options {
  int unused;
} opt_dce_options;
bool opt_dce(ir_module *m, const opt_dce_options *opt);

/* ---- pipeline.c --------------------------------------------------------- */
typedef struct lower_pipeline_options {
  const char *print_after; /* pass name, or "all": print the IR after it */
  FILE *print_out;         /* where (stdout if NULL) */
  bool verify_each;        /* verify after each pass (always with -Dlower_verify_each=true) */
  bool warn_hazards;       /* run lower_check_hazards (warnings to diag) */
  lower_hazards_stats *hazard_stats;  /* with warn_hazards: counted by pattern here */
  bool expand_mma;         /* mma.sync per thread, not on MFMA/WMMA (the reference; benchmarks) */
  pw_diag *diag;
  unsigned *generic_accesses, *generic_converted;  /* opt_addrspace's counts, if set */
} lower_pipeline_options;
/* Lowers m for target t (a row of ir/ir_targets.def: ir_target_find);
 * true when every operation was lowered and the result verifies with
 * require_lowered.  Errors go to opt->diag. */
bool lower_module(ir_module *m, const ir_target *t, const lower_pipeline_options *opt);
/* The first instruction that is not lowered for m's target (its PTX name in
 * *what), or NULL: what the corpus benchmark reports. */
const ir_instr *lower_first_unlowered(const ir_module *m, const char **what);

#endif
