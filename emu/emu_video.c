/* emu/emu_video.c: the scalar video instructions (PTX ISA 9.7.18.1)
 * vadd vsub vabsdiff vmin vmax vshl vshr, without operand selectors (the
 * front end refuses those: docs/ptx-front-end.md):
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

const char *emu_sel_video(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  unsigned op2 = i->mods.atomop;
  bool has_c = i->nsrc == 3;
  if (i->nsrc < 2 || i->nsrc > 3 || has_c != (op2 != IR_ATOM_NONE) ||
      (op2 && op2 != IR_ATOM_ADD && op2 != IR_ATOM_MIN && op2 != IR_ATOM_MAX))
    return emu_dfmt(d, "'%s' with %u operands and this secondary operation", ir_op_infos[i->op].ptx, i->nsrc);
  if (ir_type_bits((ir_type)i->type) != 32 || ir_type_bits((ir_type)i->type2) != 32 ||
      ir_type_bits((ir_type)i->type3) != 32)
    return emu_dfmt(d, "'%s' with types other than .u32/.s32", ir_op_infos[i->op].ptx);
  in->fn = h_video;
  return NULL;
}
