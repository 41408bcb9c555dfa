/* emu/emu_video.c: the scalar video instructions (PTX ISA 9.7.18.1)
 * vadd vsub vabsdiff vmin vmax vshl vshr (and vset, h_vset), and the SIMD ones (9.7.18.2,
 * below), on whole words: the scalar ones' operand selectors are IR of
 * their own (the front end's bfe/bfi around the op, docs/ptx-front-end.md),
 * the SIMD ones' are refused.  The scalar ones:
 *
 *   ta = a sign- or zero-extended by atype, tb likewise by btype (u32 for
 *        the shifts), exactly (128-bit intermediates: a u32 shifted left
 *        by 32 needs 64 bits unsigned)
 *   tmp = ta + tb | ta - tb | |ta - tb| | min | max | ta << tb | ta >> tb
 *        (shifts: .clamp makes tb at most 32, .wrap takes tb & 31; >> is
 *        arithmetic for a signed atype)
 *   tmp = .sat ? clamp(tmp, the range of dtype) : tmp
 *   d = .op2 ? tmp + c | min(tmp, c) | max(tmp, c) (c extended by dtype) : tmp
 *   d = the low 32 bits
 * (the ISA's pseudocode: partSelectSignExtend, the op, optSaturate, then
 * optSecondaryOp).
 */
#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

static int64_t ext(uint64_t v, ir_type t) {
  return ir_type_kind_of(t) == IR_TK_SINT ? (int64_t)(int32_t)(uint32_t)v : (int64_t)(uint32_t)v;
}

typedef __int128 wide;
static wide vmin64(wide a, wide b) { return a < b ? a : b; }
static wide vmax64(wide a, wide b) { return a > b ? a : b; }

static void h_video(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_type dt = (ir_type)in->type, at = (ir_type)in->type2, bt = (ir_type)in->ir->type3;
  bool dsigned = ir_type_kind_of(dt) == IR_TK_SINT;
  bool shift = in->op == ir_op_vshl || in->op == ir_op_vshr;
  const uint64_t *a = S(0), *b = S(1), *c = in->nsrc > 2 ? S(2) : NULL;
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, {
    wide ta = ext(a[l], at), tb = ext(b[l], shift ? ir_type_u32 : bt), t = 0;
    switch ((ir_op)in->op) {
    case ir_op_vadd: t = ta + tb; break;
    case ir_op_vsub: t = ta - tb; break;
    case ir_op_vabsdiff: t = ta > tb ? ta - tb : tb - ta; break;
    case ir_op_vmin: t = vmin64(ta, tb); break;
    case ir_op_vmax: t = vmax64(ta, tb); break;
    case ir_op_vshl:
    case ir_op_vshr:
      tb = in->mods.shf_clamp ? vmin64(tb, 32) : (tb & 31);
      t = in->op == ir_op_vshl ? ta * ((wide)1 << (int)tb) : ta >> (int)tb;
      break;
    default: break;
    }
    if (in->mods.sat) t = dsigned ? vmax64(vmin64(t, INT32_MAX), INT32_MIN) : vmax64(vmin64(t, UINT32_MAX), 0);
    if (c) {
      wide tc = ext(c[l], dt);
      t = in->mods.atomop == IR_ATOM_ADD ? t + tc : in->mods.atomop == IR_ATOM_MIN ? vmin64(t, tc) : vmax64(t, tc);
    }
    d[l] = (uint32_t)(uint64_t)t;
  });
}

/* vset (9.7.18.1.4): tmp = compare(ta, tb, cmp) ? 1 : 0, then the
 * secondary op with c, all unsigned ("the intermediate result of the
 * comparison is always unsigned, and therefore destination d and operand c
 * are also unsigned"). */
static void h_vset(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_type at = (ir_type)in->type, bt = (ir_type)in->type2;
  const uint64_t *a = S(0), *b = S(1), *c = in->nsrc > 2 ? S(2) : NULL;
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, {
    int64_t ta = ext(a[l], at), tb = ext(b[l], bt);
    bool r = false;
    switch ((ir_cmp)in->mods.cmp) {
    case IR_CMP_EQ: r = ta == tb; break;
    case IR_CMP_NE: r = ta != tb; break;
    case IR_CMP_LT: r = ta < tb; break;
    case IR_CMP_LE: r = ta <= tb; break;
    case IR_CMP_GT: r = ta > tb; break;
    case IR_CMP_GE: r = ta >= tb; break;
    default: break;
    }
    uint32_t t = r, tc = c ? (uint32_t)c[l] : 0;
    if (c) t = in->mods.atomop == IR_ATOM_ADD ? t + tc : in->mods.atomop == IR_ATOM_MIN ? (t < tc ? t : tc)
                                                                                        : (t > tc ? t : tc);
    d[l] = t;
  });
}

const char *emu_sel_video(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  unsigned op2 = i->mods.atomop;
  bool has_c = i->nsrc == 3;
  if (i->nsrc < 2 || i->nsrc > 3 || has_c != (op2 != IR_ATOM_NONE) ||
      (op2 && op2 != IR_ATOM_ADD && op2 != IR_ATOM_MIN && op2 != IR_ATOM_MAX))
    return emu_dfmt(d, "'%s' with %u operands and this secondary operation", ir_op_infos[i->op].ptx, i->nsrc);
  if (i->op == ir_op_vset) {
    if (ir_type_bits((ir_type)i->type) != 32 || ir_type_bits((ir_type)i->type2) != 32)
      return emu_dfmt(d, "'vset' with types other than .u32/.s32");
    if (i->mods.cmp < IR_CMP_EQ || i->mods.cmp > IR_CMP_GE)
      return emu_dfmt(d, "'vset' with a comparison other than eq ne lt le gt ge");
    in->fn = h_vset;
    return NULL;
  }
  if (ir_type_bits((ir_type)i->type) != 32 || ir_type_bits((ir_type)i->type2) != 32 ||
      ir_type_bits((ir_type)i->type3) != 32)
    return emu_dfmt(d, "'%s' with types other than .u32/.s32", ir_op_infos[i->op].ptx);
  in->fn = h_video;
  return NULL;
}

/* ---- SIMD video (9.7.18.2) ------------------------------------------------
 * vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2 on 2 half-words, the same
 * with 4 on 4 bytes, as the ISA's pseudocode has them, with the default
 * selectors (element i of a with element i of b) and mask (every element):
 *   Va[i], Vb[i] = element i of a, b, sign- or zero-extended by atype, btype
 *   t[i] = Va+Vb | Va-Vb | avg (Va+Vb >= 0 ? (Va+Vb+1) >> 1 : (Va+Vb) >> 1)
 *          | |Va-Vb| | min | max | vset: Va cmp Vb ? 1 : 0
 *   .sat: t[i] clamped to dtype's element range (S16/U16, S8/U8)
 *   .add: d = c + t[0] + t[1] (...), 32 bits;  else element i of d is the
 *         low bits of t[i] (a masked-out element would keep c's).
 */

static int32_t simd_elem(uint32_t v, unsigned i, unsigned w, bool sgn) {
  uint32_t e = (v >> (i * w)) & ((1u << w) - 1);
  return sgn && (e >> (w - 1)) ? (int32_t)e - (int32_t)(1u << w) : (int32_t)e;
}

static bool simd_cmp(ir_cmp c, int32_t a, int32_t b) {
  switch (c) {
  case IR_CMP_EQ: return a == b;
  case IR_CMP_NE: return a != b;
  case IR_CMP_LT: return a < b;
  case IR_CMP_LE: return a <= b;
  case IR_CMP_GT: return a > b;
  default: return a >= b;   /* IR_CMP_GE: emu_sel_simd_video admits no other */
  }
}


static void h_simd_video(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_op op = (ir_op)in->op;
  bool four = ir_video_simd_elems(op) == 4, set = op == ir_op_vset2 || op == ir_op_vset4;
  unsigned n = four ? 4 : 2, w = four ? 8 : 16;
  ir_type dt = (ir_type)in->type, at = set ? dt : (ir_type)in->type2, bt = set ? (ir_type)in->type2 : (ir_type)in->ir->type3;
  bool ds = ir_type_kind_of(dt) == IR_TK_SINT, as = ir_type_kind_of(at) == IR_TK_SINT,
       bs = ir_type_kind_of(bt) == IR_TK_SINT, add = in->mods.atomop == IR_ATOM_ADD;
  int32_t lo = ds ? -(1 << (w - 1)) : 0, hi = ds ? (1 << (w - 1)) - 1 : (1 << w) - 1;
  const uint64_t *a = S(0), *b = S(1), *c = S(2);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, {
    uint32_t r = add ? (uint32_t)c[l] : 0;
    for (unsigned i = 0; i < n; i++) {
      int32_t va = simd_elem((uint32_t)a[l], i, w, as), vb = simd_elem((uint32_t)b[l], i, w, bs), t, s = va + vb;
      switch (op) {
      case ir_op_vadd2: case ir_op_vadd4: t = s; break;
      case ir_op_vsub2: case ir_op_vsub4: t = va - vb; break;
      case ir_op_vavrg2: case ir_op_vavrg4: t = s >= 0 ? (s + 1) >> 1 : s >> 1; break;
      case ir_op_vabsdiff2: case ir_op_vabsdiff4: t = va > vb ? va - vb : vb - va; break;
      case ir_op_vmin2: case ir_op_vmin4: t = va < vb ? va : vb; break;
      case ir_op_vmax2: case ir_op_vmax4: t = va > vb ? va : vb; break;
      default: t = simd_cmp((ir_cmp)in->mods.cmp, va, vb); break;
      }
      if (in->mods.sat) t = t < lo ? lo : t > hi ? hi : t;
      if (add) r += (uint32_t)t;
      else r |= ((uint32_t)t & ((1u << w) - 1)) << (i * w);
    }
    d[l] = r;
  });
}

const char *emu_sel_simd_video(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  bool set = i->op == ir_op_vset2 || i->op == ir_op_vset4;
  unsigned op2 = i->mods.atomop;
  if (i->nsrc != 3 || (op2 != IR_ATOM_NONE && op2 != IR_ATOM_ADD) || (op2 && i->mods.sat))
    return emu_dfmt(d, "'%s' with this secondary operation", ir_op_infos[i->op].ptx);
  if (ir_type_bits((ir_type)i->type) != 32 || ir_type_bits((ir_type)i->type2) != 32 ||
      (!set && ir_type_bits((ir_type)i->type3) != 32))
    return emu_dfmt(d, "'%s' with types other than .u32/.s32", ir_op_infos[i->op].ptx);
  if (set && (i->mods.cmp < IR_CMP_EQ || i->mods.cmp > IR_CMP_GE))
    return emu_dfmt(d, "'%s' with a comparison other than eq ne lt le gt ge", ir_op_infos[i->op].ptx);
  in->fn = h_simd_video;
  return NULL;
}
