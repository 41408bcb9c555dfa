/* lower/lower_warps.c: CUDA's 32-thread warps onto AMD wavefronts
 * (design.md, "Warps on wavefronts"; docs/lowering.md).
 *
 * On wave32 a warp is a wave.  On wave64 a wave holds two warps: warp k of
 * a block is half (k & 1) of wave k >> 1 (waves and warps both take
 * consecutive linear thread ids), so for lane L of the wave
 *
 *     %laneid = L & 31          base = L & 32 (the half's first lane)
 *     warp mask (32 bits)  = wave mask (64 bits) >> base
 *     wave mask of a warp mask = (u64)mask << base
 *
 * Every PTX op below reads only its own half: ballots and EXEC are shifted
 * down by base, shuffles add base to the source lane (so they never cross
 * into the other warp), member masks are interpreted in the half.  With
 * base = 0 and 32-bit masks the same code is the wave32 lowering; the
 * helpers fold the shifts away there.
 *
 *   shfl.mode d|p, a, b, c, m   (PTX ISA 9.7.9.6): the source lane j and
 *       the predicate p follow the ISA's pseudocode with c's clamp
 *       (c & 31) and segment mask ((c >> 8) & 31); out of range: j = lane,
 *       p = 0; then d = wave_bpermute(a, base + j) (ds_bpermute_b32).
 *       idx/bfly with immediate b and c & 31 = 31 (nvcc's __shfl_sync,
 *       __shfl_xor_sync): j is a bit pattern of the lane and p is 1, so
 *       d = wave_swizzle(a, pattern) (ds_swizzle_b32, no lane arithmetic).
 *   vote (9.7.13.8): all/any/uni compare ballot(p) with EXEC in the half;
 *       ballot = ballot(p) of the half, & the member mask.
 *   activemask (9.7.13.10) = EXEC of the half.
 *   match.any/all (9.7.13.9): a loop over the distinct values: take the
 *       value of the lowest lane not yet matched (wave_readlane), ballot
 *       the lanes holding it, remove them; each lane keeps its own
 *       half's ballot.  One iteration per distinct value in the wave.
 *   redux (9.7.13.11): a loop over the active lanes of the wave, each lane
 *       accumulating the values of the lanes of its own group (half and
 *       member mask).  One iteration per active lane.
 *   elect (9.7.13.14): the lowest lane of the half's EXEC & member mask.
 *   bar.warp.sync (9.7.13.2): wave_sync (lanes of a wave are in lockstep;
 *       the member mask's lanes have reconverged where the IR's structured
 *       reconvergence puts them).
 *   %laneid %lanemask_* %warpid %nwarpid (10.x): from the lane and the
 *       linear thread id, %warpid counted in 32-thread warps.
 *
 * Invariant: after this pass no IR_F_WARP op and no IR_SR_WARP special
 * register remains, except the matrix ops lower_mma did not expand (wmma,
 * mma.sp, other shapes), which are reported as not lowered, naming the
 * instruction, the kernel and the target.
 */
#include <stdio.h>

#include "lower_internal.h"

typedef struct warps_state {
  const lower_warps_options *opt;
  unsigned wave;           /* the module's facts: its wave size */
  const char *target;      /* and its target, for messages (NULL: none) */
} warps_state;

/* ---- helpers --------------------------------------------------------------- */
static ir_value *wave_exec(ir_builder *b, const lower_wave *lw) {
  return ir_build_value(b, ir_op_wave_exec, lw->mask_type, 0, NULL, NULL);
}
static ir_value *wave_ballot(ir_builder *b, const lower_wave *lw, ir_value *p) {
  return ir_build_value(b, ir_op_wave_ballot, lw->mask_type, 1, (ir_value *[]){p}, NULL);
}
static ir_value *and32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_and, ir_type_b32, x, y); }
static ir_value *or32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_or, ir_type_b32, x, y); }
static ir_value *imm(ir_builder *b, uint32_t v) { return lower_imm32(b, v); }

/* The member mask operand of a .sync form, or NULL (the legacy forms: all). */
static ir_value *member_mask(const ir_instr *i) {
  switch ((ir_op)i->op) {
  case ir_op_shfl: return i->mods.sync && i->nsrc >= 4 ? i->src[3] : NULL;
  case ir_op_vote: return i->mods.sync && i->nsrc >= 2 ? i->src[1] : NULL;
  case ir_op_match: case ir_op_redux: return i->nsrc >= 2 ? i->src[1] : NULL;
  case ir_op_elect: case ir_op_bar_warp_sync: return i->src[0];
  default: return NULL;
  }
}

/* The lanes of the lane's warp this op computes with: EXEC of the half,
 * restricted to the member mask. */
static ir_value *group(ir_builder *b, const lower_wave *lw, const ir_instr *i) {
  ir_value *g = lower_warp_bits(b, lw, wave_exec(b, lw));
  ir_value *mm = member_mask(i);
  return mm ? and32(b, g, mm) : g;
}

/* Linear thread id in the block: tid.x + ntid.x * (tid.y + ntid.y * tid.z). */
static ir_value *linear_tid(ir_builder *b) {
  ir_value *t[3], *n[3];
  for (unsigned d = 0; d < 3; d++) {
    t[d] = ir_read_sreg(b, ir_sreg_tid, d);
    n[d] = ir_read_sreg(b, ir_sreg_ntid, d);
  }
  ir_value *yz = ir_alu3(b, ir_op_mad, ir_type_u32, n[1], t[2], t[1], .mulmode = IR_MUL_LO);
  return ir_alu3(b, ir_op_mad, ir_type_u32, n[0], yz, t[0], .mulmode = IR_MUL_LO);
}

/* ---- shfl ------------------------------------------------------------------ */
/* shfl.idx and shfl.bfly with an immediate lane operand b and an
 * immediate c whose clamp value is 31 (c & 0x1f = 0x1f: the whole warp,
 * or segments of it, which is how nvcc writes __shfl_sync and
 * __shfl_xor_sync; at -O3 it moves them into registers first, so
 * through copies) read a lane that is a fixed bit pattern of the lane
 * itself, and the predicate is true in every lane:
 *   idx:  j = (lane & seg) | (b & ~seg)            (minlane | b's low bits;
 *         j <= maxlane = (lane & seg) | (31 & ~seg) always)
 *   bfly: j = lane ^ b, with b & seg = 0 (j stays in the lane's segment,
 *         and j <= maxlane always; a b reaching into the segment bits
 *         clamps some lanes: the general path)
 * which is DS_SWIZZLE_B32's bitmask mode, lane l reading lane
 * ((l & and) | or) ^ xor within its group of 32 lanes: a PTX warp on
 * wave64, the wave on wave32.  No lane arithmetic, no address operand:
 * one instruction where ds_bpermute_b32 takes the lane id, five ALU ops
 * and a shift (warp reductions are chains of these).  The pattern is
 * the instruction's offset field: and_mask bits 4:0, or_mask 9:5,
 * xor_mask 14:10 (AMDGPU ISA, DS_SWIZZLE_B32; LLVM's
 * AMDGPU::Swizzle::BITMASK_*_SHIFT).  Returns the pattern, or -1. */
static int32_t swizzle_pattern(const ir_instr *i) {
  uint64_t bv, cv;
  if (!lower_const_through_copies(i->src[1], &bv) || !lower_const_through_copies(i->src[2], &cv) || (cv & 31) != 31)
    return -1;
  uint32_t lb = (uint32_t)bv & 31, seg = ((uint32_t)cv >> 8) & 31, and_m, or_m = 0, xor_m = 0;
  switch ((ir_shflmode)i->mods.shfl) {
  case IR_SHFL_IDX: and_m = seg; or_m = lb & ~seg; break;
  case IR_SHFL_BFLY:
    if (lb & seg) return -1;
    and_m = 31;
    xor_m = lb;
    break;
  default: return -1;
  }
  return (int32_t)(and_m | or_m << 5 | xor_m << 10);
}

static bool lower_shfl(ir_builder *b, const lower_wave *lw, ir_instr *i, ir_value **out) {
  int32_t pat = swizzle_pattern(i);
  if (pat >= 0) {
    out[0] = ir_alu2(b, ir_op_wave_swizzle, ir_type_b32, i->src[0], imm(b, (uint32_t)pat));
    if (i->ndst > 1) out[1] = lower_setp(b, IR_CMP_EQ, ir_type_u32, imm(b, 0), imm(b, 0));
    return true;
  }
  ir_value *lane = lw->laneid;
  ir_value *bval = and32(b, i->src[1], imm(b, 31));
  /* idx with an immediate c whose clamp is 31 and segment mask 0 (the
   * whole warp: nvcc's __shfl_sync(m, v, lane) with a variable lane, and
   * every lane move of lower_mma_amd): minlane 0, maxlane 31, so j = b & 31
   * is always in range and p = 1; the source is base + j, without the
   * general case's clamp arithmetic (a third of the IR of the tensor-core
   * modules: docs/codegen.md, "Compile time of the tensor-core modules") */
  uint64_t ck;
  if ((ir_shflmode)i->mods.shfl == IR_SHFL_IDX && lower_const_through_copies(i->src[2], &ck) && (ck & 31) == 31 &&
      ((ck >> 8) & 31) == 0) {
    out[0] = ir_alu2(b, ir_op_wave_bpermute, ir_type_b32, i->src[0], lower_alu(b, ir_op_add, ir_type_b32, bval, lw->base));
    if (i->ndst > 1) out[1] = lower_setp(b, IR_CMP_EQ, ir_type_u32, imm(b, 0), imm(b, 0));
    return true;
  }
  ir_value *c = i->src[2];
  ir_value *cval = and32(b, c, imm(b, 31));
  ir_value *seg = and32(b, lower_alu(b, ir_op_shr, ir_type_b32, c, imm(b, 8)), imm(b, 31));
  ir_value *notseg = lower_not(b, ir_type_b32, seg);
  ir_value *minlane = and32(b, lane, seg);
  ir_value *maxlane = or32(b, minlane, and32(b, cval, notseg));
  ir_value *j, *pv;
  switch ((ir_shflmode)i->mods.shfl) {
  case IR_SHFL_UP:
    j = lower_alu(b, ir_op_sub, ir_type_b32, lane, bval);
    pv = lower_setp(b, IR_CMP_GE, ir_type_s32, j, maxlane);
    break;
  case IR_SHFL_DOWN:
    j = lower_alu(b, ir_op_add, ir_type_b32, lane, bval);
    pv = lower_setp(b, IR_CMP_LE, ir_type_u32, j, maxlane);
    break;
  case IR_SHFL_BFLY:
    j = lower_alu(b, ir_op_xor, ir_type_b32, lane, bval);
    pv = lower_setp(b, IR_CMP_LE, ir_type_u32, j, maxlane);
    break;
  case IR_SHFL_IDX:
    j = or32(b, minlane, and32(b, bval, notseg));
    pv = lower_setp(b, IR_CMP_LE, ir_type_u32, j, maxlane);
    break;
  default:
    return false;
  }
  /* base + (pv ? j : lane); for up/down/bfly as (lane + base) -/+/^
   * (pv ? b : 0), equal because base's bits (0 or 32) are above lane's and
   * b's: LLVM then folds (L & 31) + (L & 32) back to the wave lane L, one
   * instruction less per shuffle than selecting j. */
  ir_value *src, *whole = lower_alu(b, ir_op_add, ir_type_b32, lane, lw->base);
  ir_value *delta = lower_selp(b, ir_type_b32, bval, imm(b, 0), pv);
  switch ((ir_shflmode)i->mods.shfl) {
  case IR_SHFL_UP: src = lower_alu(b, ir_op_sub, ir_type_b32, whole, delta); break;
  case IR_SHFL_DOWN: src = lower_alu(b, ir_op_add, ir_type_b32, whole, delta); break;
  case IR_SHFL_BFLY: src = lower_alu(b, ir_op_xor, ir_type_b32, whole, delta); break;
  default: src = lower_alu(b, ir_op_add, ir_type_b32, lower_selp(b, ir_type_b32, j, lane, pv), lw->base); break;
  }
  out[0] = ir_alu2(b, ir_op_wave_bpermute, ir_type_b32, i->src[0], src);
  if (i->ndst > 1) out[1] = pv;
  return true;
}

/* ---- vote, activemask, elect ----------------------------------------------- */
static bool lower_vote(ir_builder *b, const lower_wave *lw, ir_instr *i, ir_value **out) {
  ir_value *mm = member_mask(i);
  ir_value *bal = lower_warp_bits(b, lw, wave_ballot(b, lw, i->src[0]));
  if (mm) bal = and32(b, bal, mm);
  if (i->mods.vote == IR_VOTE_BALLOT) {
    out[0] = bal;
    return true;
  }
  ir_value *zero = imm(b, 0);
  switch ((ir_votemode)i->mods.vote) {
  case IR_VOTE_ANY: out[0] = lower_setp(b, IR_CMP_NE, ir_type_b32, bal, zero); return true;
  case IR_VOTE_ALL: out[0] = lower_setp(b, IR_CMP_EQ, ir_type_b32, bal, group(b, lw, i)); return true;
  case IR_VOTE_UNI: {
    ir_value *all = lower_setp(b, IR_CMP_EQ, ir_type_b32, bal, group(b, lw, i));
    ir_value *none = lower_setp(b, IR_CMP_EQ, ir_type_b32, bal, zero);
    out[0] = ir_or(b, ir_type_pred, all, none);
    return true;
  }
  default: return false;
  }
}

static bool lower_elect(ir_builder *b, const lower_wave *lw, ir_instr *i, ir_value **out) {
  ir_value *g = group(b, lw, i);
  ir_value *low = and32(b, g, ir_alu2(b, ir_op_sub, ir_type_b32, imm(b, 0), g));
  ir_value *leader = ir_alu1(b, ir_op_bfind, ir_type_u32, low);
  ir_value *has = lower_setp(b, IR_CMP_NE, ir_type_b32, g, imm(b, 0));
  leader = lower_selp(b, ir_type_u32, leader, lw->laneid, has);
  ir_value *p = lower_setp(b, IR_CMP_EQ, ir_type_u32, leader, lw->laneid);
  if (i->ndst == 2) {
    out[0] = leader;
    out[1] = p;
  } else if (i->ndst == 1) {
    out[0] = p;
  }
  return true;
}

/* ---- match ----------------------------------------------------------------- */
static bool lower_match(ir_builder *b, const lower_wave *lw, ir_instr *i, ir_value **out) {
  ir_type t = ir_type_bits((ir_type)i->type) == 64 ? ir_type_b64 : ir_type_b32;
  ir_value *a = i->src[0];
  ir_value *grp = group(b, lw, i);
  ir_value *exec = wave_exec(b, lw);
  lower_lane_loop L;
  lower_lane_loop_begin(b, lw, exec, 1, (ir_value *[]){imm(b, 0)}, &L);
  ir_value *v = ir_alu2(b, ir_op_wave_readlane, t, a, L.k);
  ir_value *eq = lower_setp(b, IR_CMP_EQ, t, a, v);
  ir_value *eqb = wave_ballot(b, lw, eq);
  ir_value *mine = and32(b, lower_warp_bits(b, lw, eqb), grp);
  ir_value *res = lower_selp(b, ir_type_b32, mine, L.acc[0], eq);
  ir_value *rem = ir_alu2(b, ir_op_and, lw->mask_type, L.rem, ir_alu1(b, ir_op_not, lw->mask_type, eqb));
  lower_lane_loop_end(b, &L, rem, (ir_value *[]){res});
  ir_value *same = L.acc[0];
  if (i->mods.match == IR_MATCH_ALL) {
    ir_value *p = lower_setp(b, IR_CMP_EQ, ir_type_b32, same, grp);
    out[0] = lower_selp(b, ir_type_b32, grp, imm(b, 0), p);
    if (i->ndst > 1) out[1] = p;
  } else {
    out[0] = same;
    if (i->ndst > 1) out[1] = lower_setp(b, IR_CMP_EQ, ir_type_b32, same, grp);
  }
  return true;
}

/* ---- redux ----------------------------------------------------------------- */
static bool lower_redux(ir_builder *b, const lower_wave *lw, ir_instr *i, ir_value **out, pw_diag *diag) {
  ir_type t = (ir_type)i->type;
  ir_atomop op = (ir_atomop)i->mods.atomop;
  bool f32 = t == ir_type_f32;
  if (f32 && op != IR_ATOM_MIN && op != IR_ATOM_MAX) {
    lower_error(diag, i, "cannot lower redux.%s.f32", ir_atomop_name(op));
    return false;
  }
  /* .NaN (9.7.13.11): the canonical NaN when any value of the group is
   * NaN; a second accumulator (b32, 0 or 1) records one, since min/max
   * drop NaNs (which is what starting from NaN relies on). */
  bool nan = f32 && i->mods.nan;
  uint32_t init;
  bool sgn = t == ir_type_s32;
  switch (op) {
  case IR_ATOM_ADD: case IR_ATOM_OR: case IR_ATOM_XOR: init = 0; break;
  case IR_ATOM_AND: init = 0xffffffffu; break;
  case IR_ATOM_MIN: init = f32 ? 0x7fffffffu : sgn ? 0x7fffffffu : 0xffffffffu; break;
  case IR_ATOM_MAX: init = f32 ? 0x7fffffffu : sgn ? 0x80000000u : 0; break;
  default: return false;
  }
  ir_value *a = i->src[0];
  if (f32 && i->mods.absmod) a = ir_alu1(b, ir_op_abs, ir_type_f32, a);
  ir_value *grp = group(b, lw, i);
  ir_value *exec = wave_exec(b, lw);
  lower_lane_loop L;
  lower_lane_loop_begin(b, lw, exec, nan ? 2 : 1,
                        (ir_value *[]){ir_imm(b, f32 ? ir_type_f32 : ir_type_b32, init), imm(b, 0)}, &L);
  ir_value *v = ir_alu2(b, ir_op_wave_readlane, f32 ? ir_type_f32 : ir_type_b32, a, L.k);
  /* lane k is in my group: same half, and its bit set in my group mask */
  ir_value *k32 = L.k;
  ir_value *bit = and32(b, lower_alu(b, ir_op_shr, ir_type_b32, grp, and32(b, k32, imm(b, 31))), imm(b, 1));
  ir_value *take = lower_setp(b, IR_CMP_NE, ir_type_b32, bit, imm(b, 0));
  if (lw->w == 64) {
    ir_value *same_half = lower_setp(b, IR_CMP_EQ, ir_type_b32, and32(b, k32, imm(b, 32)), lw->base);
    take = ir_and(b, ir_type_pred, take, same_half);
  }
  ir_value *acc = L.acc[0], *nv;
  ir_type ot = f32 ? ir_type_f32 : sgn ? ir_type_s32 : ir_type_u32;
  switch (op) {
  case IR_ATOM_ADD: nv = ir_add(b, ir_type_u32, acc, v); break;
  case IR_ATOM_AND: nv = ir_and(b, ir_type_b32, acc, v); break;
  case IR_ATOM_OR: nv = ir_or(b, ir_type_b32, acc, v); break;
  case IR_ATOM_XOR: nv = ir_xor(b, ir_type_b32, acc, v); break;
  case IR_ATOM_MIN: nv = ir_alu2(b, ir_op_min, ot, acc, v); break;
  default: nv = ir_alu2(b, ir_op_max, ot, acc, v); break;
  }
  nv = lower_selp(b, f32 ? ir_type_f32 : ir_type_b32, nv, acc, take);
  ir_value *nf = NULL;
  if (nan) {
    ir_value *isnan = ir_and(b, ir_type_pred, take, lower_setp(b, IR_CMP_NAN, ir_type_f32, v, v));
    nf = lower_selp(b, ir_type_b32, imm(b, 1), L.acc[1], isnan);
  }
  lower_lane_loop_end(b, &L, NULL, (ir_value *[]){nv, nf});
  out[0] = L.acc[0];
  if (nan)
    out[0] = lower_selp(b, ir_type_f32, imm(b, 0x7fffffffu), out[0],
                        lower_setp(b, IR_CMP_NE, ir_type_b32, L.acc[1], imm(b, 0)));
  return true;
}

/* ---- special registers ------------------------------------------------------ */
static bool lower_warp_sreg(ir_builder *b, const lower_wave *lw, ir_instr *i, ir_value **out) {
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_laneid: out[0] = lw->laneid; return true;
  case ir_sreg_warpid:
    out[0] = lower_alu(b, ir_op_shr, ir_type_b32, linear_tid(b), imm(b, 5));
    return true;
  case ir_sreg_nwarpid: {
    ir_value *n = ir_mul(b, ir_type_u32, ir_read_sreg(b, ir_sreg_ntid, 0), ir_read_sreg(b, ir_sreg_ntid, 1),
                         .mulmode = IR_MUL_LO);
    n = ir_mul(b, ir_type_u32, n, ir_read_sreg(b, ir_sreg_ntid, 2), .mulmode = IR_MUL_LO);
    out[0] = lower_alu(b, ir_op_shr, ir_type_b32, ir_add(b, ir_type_u32, n, imm(b, 31)), imm(b, 5));
    return true;
  }
  default: break;
  }
  ir_value *eq = ir_shl(b, ir_type_b32, imm(b, 1), lw->laneid);
  ir_value *lt = ir_sub(b, ir_type_b32, eq, imm(b, 1));
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_lanemask_eq: out[0] = eq; return true;
  case ir_sreg_lanemask_lt: out[0] = lt; return true;
  case ir_sreg_lanemask_le: out[0] = ir_or(b, ir_type_b32, lt, eq); return true;
  case ir_sreg_lanemask_ge: out[0] = ir_alu1(b, ir_op_not, ir_type_b32, lt); return true;
  case ir_sreg_lanemask_gt: out[0] = ir_alu1(b, ir_op_not, ir_type_b32, ir_or(b, ir_type_b32, lt, eq)); return true;
  default: return false;
  }
}

/* ---- the pass ------------------------------------------------------------- */
static bool want(const ir_instr *i, void *data) {
  (void)data;
  if (i->op == ir_op_sreg) return i->sreg < ir_sreg_count && (ir_sreg_infos[i->sreg].flags & IR_SR_WARP);
  return ir_op_infos[i->op].flags & IR_F_WARP;
}

/* Eliminates every warp-level op and special register (IR_F_WARP,
 * IR_SR_WARP): it owns the rule that none remains, and reports the matrix
 * ops lower_mma did not expand.  Builds loops (match, redux). */
const lower_contract lower_warps_contract = {
    .pass = "lower_warps",
    .op_flags = IR_F_WARP,
    .sreg_flags = IR_SR_WARP,
    .preserves = 0,
};

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  warps_state *s = data;
  lower_wave lw;
  switch ((ir_op)i->op) {
  case ir_op_shfl: case ir_op_vote: case ir_op_match: case ir_op_activemask: case ir_op_redux:
  case ir_op_elect: case ir_op_bar_warp_sync: case ir_op_sreg:
    break;
  default: {
    /* the matrix ops lower_mma did not expand */
    char wave[16];
    snprintf(wave, sizeof wave, "wave%u", s->wave);
    const char *why = lower_matrix_why(i);
    lower_matrix_error(s->opt->diag, i, s->target ? s->target : wave,
                       why ? why : "not expanded (lower_mma must run before lower_warps)");
    return false;
  }
  }
  lower_wave_init(b, s->wave, &lw);
  switch ((ir_op)i->op) {
  case ir_op_shfl:
    if (ir_type_bits((ir_type)i->type) != 32) break;
    return lower_shfl(b, &lw, i, out);
  case ir_op_vote: return lower_vote(b, &lw, i, out);
  case ir_op_activemask: out[0] = lower_warp_bits(b, &lw, wave_exec(b, &lw)); return true;
  case ir_op_elect: return lower_elect(b, &lw, i, out);
  case ir_op_match: return lower_match(b, &lw, i, out);
  case ir_op_redux: return lower_redux(b, &lw, i, out, s->opt->diag);
  case ir_op_bar_warp_sync:
    ir_build(b, ir_op_wave_sync, ir_type_none, 0, NULL, 0, NULL, NULL);
    return true;
  case ir_op_sreg: return lower_warp_sreg(b, &lw, i, out);
  default: break;
  }
  lower_error(s->opt->diag, i, "cannot lower this form of '%s'", ir_op_infos[i->op].ptx);
  return false;
}

bool lower_warps(ir_module *m, const lower_warps_options *opt) {
  PW_ASSERT(m->facts.wave_size == 32 || m->facts.wave_size == 64);
  warps_state s = {opt, m->facts.wave_size, m->facts.target ? m->facts.target->name : NULL};
  return lower_walk(m, want, lower_instr, &s);
}
