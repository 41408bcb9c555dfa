/* lower/lower_video.c: the scalar video instructions (PTX ISA 9.7.18.1)
 * vadd vsub vabsdiff vmin vmax vshl vshr as plain 64-bit integer IR, and
 * the SIMD ones (9.7.18.2, lower_simd below) as 32-bit integer IR, so
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
 * since its low 32 bits are what d keeps.  Operand selectors never reach
 * here: the front end makes them a bfe of a or b before the op and a
 * clamp and bfi after it (ptx_instr.c, build_video_selected), so a, b and
 * d are whole words.
 */
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  switch ((ir_op)i->op) {
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr: case ir_op_vset:
  case ir_op_vadd2: case ir_op_vsub2: case ir_op_vavrg2: case ir_op_vabsdiff2: case ir_op_vmin2:
  case ir_op_vmax2: case ir_op_vset2: case ir_op_vadd4: case ir_op_vsub4: case ir_op_vavrg4:
  case ir_op_vabsdiff4: case ir_op_vmin4: case ir_op_vmax4: case ir_op_vset4:
    return true;
  default:
    return false;
  }
}


/* Eliminates the scalar and SIMD video ops.  Preserves nothing: the walker turns a
 * guarded instruction into a branch. */
const lower_contract lower_video_contract = {
    .pass = "lower_video",
    .ops = (const ir_op[]){ir_op_vadd, ir_op_vsub, ir_op_vabsdiff, ir_op_vmin, ir_op_vmax, ir_op_vshl, ir_op_vshr,
                           ir_op_vset, ir_op_vadd2, ir_op_vsub2, ir_op_vavrg2, ir_op_vabsdiff2, ir_op_vmin2, ir_op_vmax2,
                           ir_op_vset2, ir_op_vadd4, ir_op_vsub4, ir_op_vavrg4, ir_op_vabsdiff4, ir_op_vmin4,
                           ir_op_vmax4, ir_op_vset4, ir_op_count},
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

/* element k (w bits) of x, sign- or zero-extended to s32 */
static ir_value *simd_elem(ir_builder *b, ir_value *x, unsigned k, unsigned w, bool sgn) {
  if (!sgn) {
    ir_value *v = k ? alu(b, ir_op_shr, ir_type_u32, x, lower_imm32(b, k * w)) : x;
    return alu(b, ir_op_and, ir_type_b32, v, lower_imm32(b, (1u << w) - 1));
  }
  ir_value *v = alu(b, ir_op_shl, ir_type_b32, x, lower_imm32(b, 32 - (k + 1) * w));
  return alu(b, ir_op_shr, ir_type_s32, v, lower_imm32(b, 32 - w));
}

/* The SIMD forms (9.7.18.2; emu/emu_video.c has the pseudocode), element
 * by element in s32, where every intermediate fits (17-bit operands):
 *   t = va + vb | va - vb | |va - vb| | min | max | (va cmp vb ? 1 : 0)
 *   vavrg: s = va + vb, t = (s + 1 + (s >> 31)) >> 1 (arithmetic): the
 *          ISA's (s + 1) >> 1 for s >= 0 and s >> 1 below, with no branch
 *   .sat: clamped to dtype's element range
 *   .add: d = c + the t's; else d = the t's low bits, each in its place. */
static bool lower_simd(ir_builder *b, ir_instr *i, ir_value **out, const lower_video_options *o) {
  ir_op op = (ir_op)i->op;
  bool four = ir_video_simd_elems(op) == 4, set = op == ir_op_vset2 || op == ir_op_vset4;
  unsigned n = four ? 4 : 2, w = four ? 8 : 16;
  ir_type dt = (ir_type)i->type, at = set ? dt : (ir_type)i->type2, bt = set ? (ir_type)i->type2 : (ir_type)i->type3;
  unsigned op2 = i->mods.atomop;
  if (i->nsrc != 3 || (op2 != IR_ATOM_NONE && op2 != IR_ATOM_ADD) || ir_type_bits(dt) != 32 ||
      ir_type_bits(at) != 32 || ir_type_bits(bt) != 32 ||
      (set && (i->mods.cmp < IR_CMP_EQ || i->mods.cmp > IR_CMP_GE))) {
    lower_error(o->diag, i, "this form of %s is not supported", ir_op_infos[i->op].ptx);
    return false;
  }
  int32_t lo = is_signed(dt) ? -(1 << (w - 1)) : 0, hi = is_signed(dt) ? (1 << (w - 1)) - 1 : (1 << w) - 1;
  ir_value *d = op2 ? i->src[2] : NULL;
  for (unsigned k = 0; k < n; k++) {
    ir_value *va = simd_elem(b, i->src[0], k, w, is_signed(at)), *vb = simd_elem(b, i->src[1], k, w, is_signed(bt));
    ir_value *t;
    switch (op) {
    case ir_op_vadd2: case ir_op_vadd4: t = alu(b, ir_op_add, ir_type_s32, va, vb); break;
    case ir_op_vsub2: case ir_op_vsub4: t = alu(b, ir_op_sub, ir_type_s32, va, vb); break;
    case ir_op_vavrg2: case ir_op_vavrg4: {
      ir_value *sum = alu(b, ir_op_add, ir_type_s32, va, vb);
      ir_value *up = alu(b, ir_op_add, ir_type_s32, alu(b, ir_op_add, ir_type_s32, sum, lower_imm32(b, 1)),
                         alu(b, ir_op_shr, ir_type_s32, sum, lower_imm32(b, 31)));
      t = alu(b, ir_op_shr, ir_type_s32, up, lower_imm32(b, 1));
      break;
    }
    case ir_op_vabsdiff2: case ir_op_vabsdiff4:
      t = ir_alu1(b, ir_op_abs, ir_type_s32, alu(b, ir_op_sub, ir_type_s32, va, vb));
      break;
    case ir_op_vmin2: case ir_op_vmin4: t = alu(b, ir_op_min, ir_type_s32, va, vb); break;
    case ir_op_vmax2: case ir_op_vmax4: t = alu(b, ir_op_max, ir_type_s32, va, vb); break;
    default:
      t = lower_selp(b, ir_type_b32, lower_imm32(b, 1), lower_imm32(b, 0),
                     lower_setp(b, (ir_cmp)i->mods.cmp, ir_type_s32, va, vb));
      break;
    }
    if (i->mods.sat)
      t = alu(b, ir_op_max, ir_type_s32, alu(b, ir_op_min, ir_type_s32, t, lower_imm32(b, (uint32_t)hi)),
              lower_imm32(b, (uint32_t)lo));
    if (op2) {
      d = alu(b, ir_op_add, ir_type_u32, d, t);
    } else {
      ir_value *e = alu(b, ir_op_and, ir_type_b32, t, lower_imm32(b, (1u << w) - 1));
      if (k) e = alu(b, ir_op_shl, ir_type_b32, e, lower_imm32(b, k * w));
      d = d ? alu(b, ir_op_or, ir_type_b32, d, e) : e;
    }
  }
  out[0] = d;
  return true;
}

/* vset (9.7.18.1.4): a and b extended to s64 by their types, compared,
 * 1 or 0; the secondary op with c unsigned (the result is unsigned):
 * add wraps to 32 bits, min/max are unsigned. */
static bool lower_vset(ir_builder *b, ir_instr *i, ir_value **out, const lower_video_options *o) {
  ir_type at = (ir_type)i->type, bt = (ir_type)i->type2;
  unsigned op2 = i->mods.atomop;
  bool op2_ok = op2 == IR_ATOM_NONE || op2 == IR_ATOM_ADD || op2 == IR_ATOM_MIN || op2 == IR_ATOM_MAX;
  if (i->nsrc < 2 || i->nsrc > 3 || (i->nsrc == 3) != (op2 != IR_ATOM_NONE) || !op2_ok || ir_type_bits(at) != 32 ||
      ir_type_bits(bt) != 32 || i->mods.cmp < IR_CMP_EQ || i->mods.cmp > IR_CMP_GE) {
    lower_error(o->diag, i, "this form of vset is not supported");
    return false;
  }
  ir_value *p = lower_setp(b, (ir_cmp)i->mods.cmp, ir_type_s64, ext64(b, i->src[0], at), ext64(b, i->src[1], bt));
  ir_value *t = lower_selp(b, ir_type_u32, lower_imm32(b, 1), lower_imm32(b, 0), p);
  if (op2) {
    ir_value *c = i->src[2]->type == ir_type_u32 ? i->src[2] : ir_alu1(b, ir_op_copy, ir_type_u32, i->src[2]);
    ir_op o2 = op2 == IR_ATOM_ADD ? ir_op_add : op2 == IR_ATOM_MIN ? ir_op_min : ir_op_max;
    t = alu(b, o2, ir_type_u32, t, c);
  }
  out[0] = t;
  return true;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_video_options *o = data;
  if (i->op == ir_op_vset) return lower_vset(b, i, out, o);
  if (i->op != ir_op_vadd && i->op != ir_op_vsub && i->op != ir_op_vabsdiff && i->op != ir_op_vmin &&
      i->op != ir_op_vmax && i->op != ir_op_vshl && i->op != ir_op_vshr)
    return lower_simd(b, i, out, o);
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
