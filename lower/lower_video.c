/* lower/lower_video.c: the scalar video instructions (PTX ISA 9.7.18.1)
 * vadd vsub vabsdiff vmin vmax vshl vshr as plain 64-bit integer IR, so
 * codegen needs nothing of its own (docs/lowering.md, "Video").
 *
 * The ISA's pseudocode (emu/emu_video.c runs it as written):
 *   ta, tb = a, b extended by atype, btype (u32 for the shift amount)
 *   tmp = ta op tb exactly;  .sat: clamp to dtype's range;
 *   d = .op2 ? tmp + c | min(tmp, c) | max(tmp, c) : tmp  (low 32 bits)
 * Every intermediate fits a signed 64-bit value (33-bit operands, sums,
 * differences), except ta << tb of an unsigned ta (up to 2^64 - 2^32):
 * that one is kept as u64 and compared unsigned.  A min/max against c of
 * such a value above 2^32 (c is below 2^32) is decided by that alone,
 * since its low 32 bits are what d keeps.  Operand selectors are refused
 * by the front end, so a, b and d are whole words.
 */
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr:
    return true;
  default:
    return false;
  }
}

/* Eliminates the scalar video ops.  Preserves nothing: the walker turns a
 * guarded instruction into a branch. */
const lower_contract lower_video_contract = {
    .pass = "lower_video",
    .ops = (const ir_op[]){ir_op_vadd, ir_op_vsub, ir_op_vabsdiff, ir_op_vmin, ir_op_vmax, ir_op_vshl, ir_op_vshr,
                           ir_op_count},
    .preserves = 0,
};

static bool is_signed(ir_type t) { return ir_type_kind_of(t) == IR_TK_SINT; }

/* x (32 bits) widened to s64 by t's signedness */
static ir_value *ext64(ir_builder *b, ir_value *x, ir_type t) {
  if (!is_signed(t)) return lower_zext64(b, x);
  return ir_convert(b, ir_type_s64, ir_type_s32, x);
}

static ir_value *k64(ir_builder *b, int64_t v) { return ir_imm(b, ir_type_s64, (uint64_t)v); }
static ir_value *alu(ir_builder *b, ir_op op, ir_type t, ir_value *x, ir_value *y) { return ir_alu2(b, op, t, x, y); }

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_video_options *o = data;
  ir_type dt = (ir_type)i->type, at = (ir_type)i->type2, bt = (ir_type)i->type3;
  unsigned op2 = i->mods.atomop;
  /* .op2 is .add, .min or .max (9.7.18.1.1); the field takes every atomop */
  bool op2_ok = op2 == IR_ATOM_NONE || op2 == IR_ATOM_ADD || op2 == IR_ATOM_MIN || op2 == IR_ATOM_MAX;
  if (i->nsrc < 2 || i->nsrc > 3 || (i->nsrc == 3) != (op2 != IR_ATOM_NONE) || !op2_ok || ir_type_bits(dt) != 32 ||
      ir_type_bits(at) != 32 || ir_type_bits(bt) != 32) {
    lower_error(o->diag, i, "this form of %s is not supported", ir_op_infos[i->op].ptx);
    return false;
  }
  bool shift = i->op == ir_op_vshl || i->op == ir_op_vshr;
  bool u64dom = i->op == ir_op_vshl && !is_signed(at);   /* the one value that may pass 2^63 */
  ir_value *ta = ext64(b, i->src[0], at), *t = NULL;
  if (shift) {
    ir_value *n = i->src[1];
    n = i->mods.shf_clamp ? alu(b, ir_op_min, ir_type_u32, n, lower_imm32(b, 32))
                          : alu(b, ir_op_and, ir_type_b32, n, lower_imm32(b, 31));
    t = i->op == ir_op_vshl ? alu(b, ir_op_shl, ir_type_b64, ta, n)
                            : alu(b, ir_op_shr, is_signed(at) ? ir_type_s64 : ir_type_u64, ta, n);
  } else {
    ir_value *tb = ext64(b, i->src[1], bt);
    switch ((ir_op)i->op) {
    case ir_op_vadd: t = alu(b, ir_op_add, ir_type_s64, ta, tb); break;
    case ir_op_vsub: t = alu(b, ir_op_sub, ir_type_s64, ta, tb); break;
    case ir_op_vabsdiff: t = ir_alu1(b, ir_op_abs, ir_type_s64, alu(b, ir_op_sub, ir_type_s64, ta, tb)); break;
    case ir_op_vmin: t = alu(b, ir_op_min, ir_type_s64, ta, tb); break;
    case ir_op_vmax: t = alu(b, ir_op_max, ir_type_s64, ta, tb); break;
    default: return false;
    }
  }
  if (i->mods.sat) {
    int64_t lo = is_signed(dt) ? INT32_MIN : 0, hi = is_signed(dt) ? INT32_MAX : (int64_t)UINT32_MAX;
    if (u64dom) {
      t = alu(b, ir_op_min, ir_type_u64, t, k64(b, hi));   /* t >= 0 */
    } else {
      t = alu(b, ir_op_max, ir_type_s64, alu(b, ir_op_min, ir_type_s64, t, k64(b, hi)), k64(b, lo));
    }
    u64dom = false;   /* below 2^32 now */
  }
  if (op2) {
    ir_value *tc = ext64(b, i->src[2], dt);
    if (op2 == IR_ATOM_ADD) {
      t = alu(b, ir_op_add, ir_type_s64, t, tc);
    } else {
      ir_op mm = op2 == IR_ATOM_MIN ? ir_op_min : ir_op_max;
      ir_value *r = alu(b, mm, ir_type_s64, t, tc);
      if (u64dom) {  /* t above 2^32 is above every c: min is c, max is t */
        ir_value *big = lower_setp(b, IR_CMP_GT, ir_type_u64, t, k64(b, (int64_t)UINT32_MAX + 1));
        r = lower_selp(b, ir_type_b64, op2 == IR_ATOM_MIN ? tc : t, r, big);
      }
      t = r;
    }
  }
  out[0] = lower_lo32(b, t);
  return true;
}

bool lower_video(ir_module *m, const lower_video_options *opt) {
  lower_video_options o = opt ? *opt : (lower_video_options){0};
  return lower_walk(m, want, lower_instr, &o);
}
