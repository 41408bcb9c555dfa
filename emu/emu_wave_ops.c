/* emu/emu_wave_ops.c: the wave-level target operations (ir_ops.def, the
 * rows after "wave-level target operations") that lower/ produces, run at
 * the module's wave size W (x->nlanes, 32 or 64).
 *
 * These are what the lowered IR computes with instead of PTX's warp-level
 * ops and special registers, so their semantics here are the contract
 * between lower/ and codegen (each row's comment in ir_ops.def cites the
 * AMDGPU intrinsic):
 *   wave_lane_id        the lane, 0..W-1
 *   wave_ballot(p)      W-bit mask of the active lanes where p is true
 *   wave_exec           W-bit mask of the active lanes (EXEC)
 *   wave_bpermute(v,i)  v of lane i mod W, per lane (ds_bpermute_b32): an
 *                       inactive source lane gives its register's contents
 *                       (register files start zeroed: deterministic)
 *   wave_swizzle(v,P)   v of lane (l & ~31) | (((l & P[4:0]) | P[9:5]) ^ P[14:10])
 *                       (ds_swizzle_b32, bitmask mode; P an immediate)
 *   wave_readlane(v,i)  v of lane i (i read from the first active lane)
 *   wave_readfirstlane  v of the lowest active lane
 *   wave_sync           nothing (a compiler fence)
 *   workgroup_barrier   bar.sync 0 (run by the wave loop: EMU_K_BAR, id 0)
 *   workitem_id(d) workgroup_id(d) workgroup_size(d) workgroup_count(d)
 *                       %tid %ctaid %ntid %nctaid along dimension d
 *   dyn_lds_size        dynamic shared bytes of the launch
 *   cycle_counter       the wave's instruction count (as %clock64)
 *   realtime_counter    host CLOCK_REALTIME in 10 ns ticks (100 MHz)
 *   hw_id               the hardware id register of the module's target's
 *                       generation (ir/ir_targets.def: HW_ID on gfx9,
 *                       HW_ID1 on gfx10+): the wave's index in its WAVE_ID
 *                       field, the host thread that runs the workgroup (the
 *                       emulator's %smid) spread over the unit (CU / WGP),
 *                       shader array and engine fields, low bits first: the
 *                       layout lower_sregs.c decodes %smid from
 */
#include <time.h>

#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

static uint32_t hw_field(ir_hw_field f, uint32_t v) {
  return f.bits ? (v & ((1u << f.bits) - 1)) << f.lo : 0;
}

uint32_t emu_hw_id(const ir_gen_info *g, uint32_t wave, uint32_t smid) {
  uint32_t u = hw_field(g->wave, wave);
  const ir_hw_field f[3] = {g->unit, g->sa, g->se};
  for (unsigned k = 0; k < 3; k++) {
    u |= hw_field(f[k], smid);
    smid >>= f[k].bits;
  }
  return u;
}

static uint64_t wave_mask(const emu_exec *x) { return x->nlanes >= 64 ? ~0ull : (1ull << x->nlanes) - 1; }

static void h_lane_id(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = l);
}

static void h_ballot(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t v = EMU_PRED(x, in->src[0]) & m & wave_mask(x);
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = v);
}

static void h_exec(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  uint64_t v = m & wave_mask(x);
  EMU_EACH(m, l, d[l] = v);
}

static void h_swizzle(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint32_t p = (uint32_t)in->imm, and_m = p & 31, or_m = (p >> 5) & 31, xor_m = (p >> 10) & 31;
  uint64_t tmp[EMU_MAX_LANES];
  EMU_EACH(m, l, tmp[l] = a[((uint32_t)l & ~31u) | ((((uint32_t)l & and_m) | or_m) ^ xor_m)] & in->tmask);
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = tmp[l]);
}

static void h_bpermute(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *i = S(1);
  uint64_t tmp[EMU_MAX_LANES];
  EMU_EACH(m, l, tmp[l] = a[(uint32_t)i[l] % x->nlanes] & in->tmask);
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = tmp[l]);
}

static void h_readlane(emu_exec *x, const emu_inst *in, emu_mask m) {
  unsigned l0 = (unsigned)__builtin_ctzll(m);
  uint64_t v = S(0)[(uint32_t)S(1)[l0] % x->nlanes] & in->tmask;
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = v);
}

static void h_readfirstlane(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t v = S(0)[__builtin_ctzll(m)] & in->tmask;
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = v);
}

static void h_nop(emu_exec *x, const emu_inst *in, emu_mask m) {
  (void)x;
  (void)in;
  (void)m;
}

static void h_workitem_id(emu_exec *x, const emu_inst *in, emu_mask m) {
  unsigned dim = (unsigned)S(0)[__builtin_ctzll(m)];
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = dim < 3 ? x->w->tid[dim][l] : 0);
}

static void h_uniform(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_grid *L = x->l;
  unsigned dim = in->nsrc ? (unsigned)S(0)[__builtin_ctzll(m)] : 0;
  const uint32_t b[3] = {L->block.x, L->block.y, L->block.z};
  const uint32_t g[3] = {L->grid.x, L->grid.y, L->grid.z};
  uint64_t u = 0;
  struct timespec ts;
  switch ((ir_op)in->op) {
  case ir_op_workgroup_id: u = dim < 3 ? x->wg->ctaid[dim] : 0; break;
  case ir_op_workgroup_size: u = dim < 3 ? b[dim] : 0; break;
  case ir_op_workgroup_count: u = dim < 3 ? g[dim] : 0; break;
  case ir_op_dyn_lds_size: u = L->shared_dyn; break;
  case ir_op_cycle_counter: u = x->w->clock; break;
  case ir_op_realtime_counter:
    clock_gettime(CLOCK_REALTIME, &ts);
    u = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) / 10;
    break;
  case ir_op_hw_id: u = emu_hw_id(ir_target_gen(L->mod->target), x->w->index, x->wg->smid); break;
  default: break;
  }
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = u & in->tmask);
}

const char *emu_sel_wave(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  (void)d;
  if (i->ndst) in->tmask = emu_type_mask(ir_type_bits((ir_type)i->dst[0]->type));
  switch ((ir_op)i->op) {
  case ir_op_wave_lane_id: in->fn = h_lane_id; return NULL;
  case ir_op_wave_ballot:
    if (i->nsrc != 1 || in->stype[0] != ir_type_pred) return "wave_ballot of a non-predicate";
    in->fn = h_ballot;
    return NULL;
  case ir_op_wave_exec: in->fn = h_exec; return NULL;
  case ir_op_wave_bpermute: in->fn = h_bpermute; return NULL;
  case ir_op_wave_swizzle:
    if (i->nsrc != 2 || i->src[1]->kind != IR_VAL_CONST || i->src[1]->imm >= 0x8000)
      return "wave_swizzle without an immediate bitmask pattern below 0x8000";
    in->imm = (int64_t)i->src[1]->imm;
    in->fn = h_swizzle;
    return NULL;
  case ir_op_wave_readlane: in->fn = h_readlane; return NULL;
  case ir_op_wave_readfirstlane: in->fn = h_readfirstlane; return NULL;
  case ir_op_wave_sync: in->fn = h_nop; return NULL;
  case ir_op_workgroup_barrier:
    /* the wave loop's barrier: no operands = barrier 0, all threads, sync */
    in->kind = EMU_K_BAR;
    in->fn = h_nop;
    return NULL;
  case ir_op_workitem_id: in->fn = h_workitem_id; return NULL;
  case ir_op_workgroup_id: case ir_op_workgroup_size: case ir_op_workgroup_count:
  case ir_op_dyn_lds_size: case ir_op_cycle_counter: case ir_op_realtime_counter: case ir_op_hw_id:
    in->fn = h_uniform;
    return NULL;
  default: break;
  }
  return "unsupported wave-level operation";
}
