/* emu/emu_warp.c: warp-level operations (PTX ISA 9.7.9.6 shfl, 9.7.13.8
 * vote, 9.7.13.9 match, 9.7.13.10 activemask, 9.7.13.11 redux, 9.7.13.14
 * elect, 9.7.13.2 bar.warp.sync).
 *
 * A warp is 32 lanes: in a wave of 64 (an unlowered op run at wave size 64)
 * each half is a warp, lane masks are 32 bits at the half's position, and
 * shuffles stay inside their half (design.md, "Warps on wavefronts").
 *
 * The .sync forms are run by the wave loop only once every non-exited lane
 * of the member mask has arrived (emu_exec.c), so m here is exactly the
 * participating lanes; the legacy forms run with the lanes active now.
 *
 * shfl reads the source lane's register whether or not that lane is active
 * (the PTX ISA leaves the value unspecified); register files start zeroed,
 * so the result is deterministic.
 */
#include <math.h>

#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

/* lanes of the warp (32-lane half) of lane l, as a wave mask */
static inline emu_mask warp_of(unsigned l) { return 0xffffffffull << (l & 32); }

/* The lanes lane l computes with: its warp, restricted to its member mask
 * for the .sync forms (each lane may name a different group: the tiles of
 * cooperative groups). */
static inline emu_mask group_of(emu_exec *x, const emu_inst *in, emu_mask m, unsigned l) {
  emu_mask g = m & warp_of(l);
  if (in->kind == EMU_K_SYNC) g &= (emu_mask)(uint32_t)EMU_U64(x, in->src[in->sub])[l] << (l & 32);
  return g;
}
static inline uint32_t warp_bits(emu_mask m, unsigned l) { return (uint32_t)(m >> (l & 32)); }

static void h_shfl(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t tmp[EMU_MAX_LANES];
  emu_mask p = 0;
  unsigned mode = in->mods.shfl;
  EMU_EACH(m, l, {
    unsigned lane = l & 31, base = l & 32;
    uint32_t bval = (uint32_t)b[l] & 0x1f, cv = (uint32_t)c[l];
    uint32_t cval = cv & 0x1f, segmask = (cv >> 8) & 0x1f;
    uint32_t maxlane = (lane & segmask) | (cval & ~segmask);
    uint32_t minlane = lane & segmask;
    int j;
    bool pv;
    switch (mode) {
    case IR_SHFL_UP: j = (int)lane - (int)bval; pv = j >= (int)maxlane; break;
    case IR_SHFL_DOWN: j = (int)(lane + bval); pv = j <= (int)maxlane; break;
    case IR_SHFL_BFLY: j = (int)(lane ^ bval); pv = j <= (int)maxlane; break;
    default: j = (int)(minlane | (bval & ~segmask)); pv = j <= (int)maxlane; break;
    }
    if (!pv) j = (int)lane;
    tmp[l] = a[base + (unsigned)j];
    p |= (emu_mask)pv << l;
  });
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = tmp[l] & 0xffffffffu);
  if (in->ndst > 1) emu_pred_write(x, in->dst[1], m, p);
}

static void h_vote(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_mask a = EMU_PRED(x, in->src[0]);
  unsigned mode = in->mods.vote;
  if (mode == IR_VOTE_BALLOT) {
    uint64_t *d = D(0);
    uint64_t tmp[EMU_MAX_LANES];
    EMU_EACH(m, l, tmp[l] = warp_bits(a & group_of(x, in, m, l), l));
    EMU_EACH(m, l, d[l] = tmp[l]);
    return;
  }
  emu_mask r = 0;
  EMU_EACH(m, l, {
    emu_mask grp = group_of(x, in, m, l);
    bool v;
    switch (mode) {
    case IR_VOTE_ALL: v = (a & grp) == grp; break;
    case IR_VOTE_ANY: v = (a & grp) != 0; break;
    default: v = (a & grp) == grp || (a & grp) == 0; break;   /* uni */
    }
    r |= (emu_mask)v << l;
  });
  emu_pred_write(x, in->dst[0], m, r);
}

static void h_activemask(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = warp_bits(m, l));
}

static void h_match(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  uint64_t mk = in->tmask;
  bool all = in->mods.match == IR_MATCH_ALL;
  emu_mask p = 0;
  uint64_t tmp[EMU_MAX_LANES];
  EMU_EACH(m, l, {
    emu_mask grp = group_of(x, in, m, l), same = 0;
    EMU_EACH(grp, k, if ((a[k] & mk) == (a[l] & mk)) same |= 1ull << k);
    if (all) {
      bool eq = same == grp;
      tmp[l] = eq ? warp_bits(grp, l) : 0;
      p |= (emu_mask)eq << l;
    } else {
      tmp[l] = warp_bits(same, l);
    }
  });
  EMU_EACH(m, l, d[l] = tmp[l]);
  if (in->ndst > 1) emu_pred_write(x, in->dst[1], m, p);
}

static void h_redux(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  ir_type t = (ir_type)in->type;
  unsigned op = in->mods.atomop;
  uint64_t res[EMU_MAX_LANES];
  EMU_EACH(m, l0, {
    emu_mask grp = group_of(x, in, m, l0);
    if (t == ir_type_f32) {
      bool any_nan = false, have = false, mx = op == IR_ATOM_MAX;
      float r = 0;
      EMU_EACH(grp, l, {
        float v = emu_f32((uint32_t)a[l]);
        if (in->mods.absmod) v = fabsf(v);
        if (v != v) {
          any_nan = true;
        } else if (!have) {
          r = v;
          have = true;
        } else if (v == r) {
          /* +0 > -0 */
          if (mx ? signbit(r) : !signbit(r)) r = v;
        } else if (mx ? v > r : v < r) {
          r = v;
        }
      });
      res[l0] = (!have || (in->mods.nan && any_nan)) ? EMU_F32_CANON_NAN : emu_f32_bits(r);
    } else {
      bool sgn = t == ir_type_s32;
      uint32_t acc = 0;
      bool first = true;
      EMU_EACH(grp, l, {
        uint32_t v = (uint32_t)a[l];
        if (first) {
          acc = v;
          first = false;
        } else {
          switch (op) {
          case IR_ATOM_ADD: acc += v; break;
          case IR_ATOM_AND: acc &= v; break;
          case IR_ATOM_OR: acc |= v; break;
          case IR_ATOM_XOR: acc ^= v; break;
          case IR_ATOM_MIN: acc = sgn ? (uint32_t)((int32_t)acc < (int32_t)v ? (int32_t)acc : (int32_t)v) : (acc < v ? acc : v); break;
          case IR_ATOM_MAX: acc = sgn ? (uint32_t)((int32_t)acc > (int32_t)v ? (int32_t)acc : (int32_t)v) : (acc > v ? acc : v); break;
          default: break;
          }
        }
      });
      res[l0] = acc;
    }
  });
  EMU_EACH(m, l, d[l] = res[l]);
}

static void h_elect(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_mask p = 0;
  uint64_t leader[EMU_MAX_LANES];
  EMU_EACH(m, l, {
    emu_mask grp = group_of(x, in, m, l);
    unsigned ll = grp ? (unsigned)__builtin_ctzll(grp) : l;
    leader[l] = ll & 31;
    if (ll == l) p |= 1ull << l;
  });
  if (in->ndst == 2) {
    uint64_t *d = D(0);
    EMU_EACH(m, l, d[l] = leader[l]);
    emu_pred_write(x, in->dst[1], m, p);
  } else if (in->ndst == 1) {
    emu_pred_write(x, in->dst[0], m, p);
  }
}

static void h_warp_nop(emu_exec *x, const emu_inst *in, emu_mask m) {
  (void)x;
  (void)in;
  (void)m;
}

const char *emu_sel_warp(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  switch ((ir_op)i->op) {
  case ir_op_shfl:
    if (i->nsrc < 3) return "shfl with fewer than three operands";
    if (ir_type_bits((ir_type)i->type) != 32) return "shfl of a type other than b32";
    in->fn = h_shfl;
    return NULL;
  case ir_op_vote:
    if (i->nsrc < 1 || in->stype[0] != ir_type_pred) return "vote of a non-predicate";
    if (i->mods.vote == IR_VOTE_NONE) return "vote without a mode";
    in->fn = h_vote;
    return NULL;
  case ir_op_match:
    if (i->mods.match == IR_MATCH_NONE) return "match without a mode";
    in->fn = h_match;
    return NULL;
  case ir_op_activemask:
    in->fn = h_activemask;
    return NULL;
  case ir_op_redux:
    if (i->mods.atomop == IR_ATOM_NONE) return "redux without an operation";
    in->fn = h_redux;
    return NULL;
  case ir_op_elect:
    in->fn = h_elect;
    return NULL;
  case ir_op_bar_warp_sync:
    in->fn = h_warp_nop;
    return NULL;
  default:
    break;
  }
  return emu_dfmt(d, "unsupported warp instruction '%s'", ir_op_infos[i->op].ptx);
}
