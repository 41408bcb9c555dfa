/* emu/emu_cvt.c: cvt in every form (PTX ISA 9.7.9.21).
 *
 * The instruction's type is the destination type, type2 the source type.
 * Every conversion goes through an exact intermediate: an integer as a
 * 64-bit value with its signedness, a float as a double (every PTX float
 * format, f64 included, is exactly a double).  Narrowing float conversions
 * then round once (emu_fp_round), so cvt.rz.f16.f64 is not an f64 -> f32 ->
 * f16 double rounding.
 *
 * Rules (PTX ISA): float -> integer rounds in the .rXi mode (rzi when none
 * is given), saturates to the destination range, and gives 0 for NaN;
 * integer -> integer truncates or extends unless .sat clamps; .sat on a
 * float destination clamps to [0, 1] with NaN giving 0; .ftz flushes f32
 * subnormal inputs and results; NaN results are the destination's canonical
 * NaN.  A destination register wider than the destination type receives the
 * value sign- or zero-extended (cvt.s8.s32 into a .s16 register).
 */
#include <math.h>

#include "emu_internal.h"

#define S(k) EMU_U64(x, in->src[k])
#define D(k) EMU_U64(x, in->dst[k])

static const emu_fpfmt *fmt_of(ir_type t) {
  switch (t) {
  case ir_type_f64: return &emu_fmt_f64;
  case ir_type_f32: return &emu_fmt_f32;
  case ir_type_tf32: return &emu_fmt_tf32;
  case ir_type_f16: case ir_type_f16x2: return &emu_fmt_f16;
  case ir_type_bf16: case ir_type_bf16x2: return &emu_fmt_bf16;
  case ir_type_e4m3: case ir_type_e4m3x2: case ir_type_e4m3x4: return &emu_fmt_e4m3;
  case ir_type_e5m2: case ir_type_e5m2x2: case ir_type_e5m2x4: return &emu_fmt_e5m2;
  case ir_type_e2m3: case ir_type_e2m3x2: case ir_type_e2m3x4: return &emu_fmt_e2m3;
  case ir_type_e3m2: case ir_type_e3m2x2: case ir_type_e3m2x4: return &emu_fmt_e3m2;
  case ir_type_e2m1: case ir_type_e2m1x2: case ir_type_e2m1x4: return &emu_fmt_e2m1;
  default: return NULL;
  }
}

static bool is_int(ir_type t) {
  ir_type_kind k = ir_type_kind_of(t);
  return k == IR_TK_UINT || k == IR_TK_SINT || k == IR_TK_BITS;
}

static emu_rnd float_mode(unsigned r) {
  switch (r) {
  case IR_RND_RZ: return EMU_RZ;
  case IR_RND_RM: return EMU_RM;
  case IR_RND_RP: return EMU_RP;
  case IR_RND_RNA: return EMU_RNA;
  default: return EMU_RN;
  }
}

static bool int_mode(unsigned r, emu_rnd *out) {
  switch (r) {
  case IR_RND_RNI: *out = EMU_RN; return true;
  case IR_RND_RZI: *out = EMU_RZ; return true;
  case IR_RND_RMI: *out = EMU_RM; return true;
  case IR_RND_RPI: *out = EMU_RP; return true;
  default: return false;
  }
}

static unsigned flags_of(const emu_inst *in) {
  return (in->mods.satfinite ? EMU_FP_SATFINITE : 0) | (in->mods.relu ? EMU_FP_RELU : 0);
}

/* A float source as a double, .ftz applied to f32 (and f16) subnormals. */
static double float_in(const emu_inst *in, ir_type st, uint64_t v) {
  if (st == ir_type_f32) {
    uint32_t b = (uint32_t)v;
    if (in->mods.ftz) b = emu_f32_ftz(b);
    return (double)emu_f32(b);
  }
  if (st == ir_type_f64) return emu_f64(v);
  const emu_fpfmt *f = fmt_of(st);
  uint64_t mk = emu_type_mask(f->bits == 6 ? 8 : f->bits);
  return emu_fp_to_double(f, v & mk);
}

/* A double to a float destination type. */
static uint64_t float_out(const emu_inst *in, ir_type dt, double v, emu_rnd mode) {
  if (in->mods.sat) {
    if (v != v || !(v > 0)) v = 0;
    else if (v > 1) v = 1;
  }
  const emu_fpfmt *f = fmt_of(dt);
  unsigned flags = flags_of(in);
  if (in->mods.ftz && dt == ir_type_f32) flags |= EMU_FP_FTZ;
  if (dt == ir_type_tf32) {
    if (v != v) return EMU_F32_CANON_NAN;
    return emu_fp_from_double(f, v, mode, flags) << 13;
  }
  return emu_fp_from_double(f, v, mode, flags);
}

/* One scalar conversion; the result in the destination type's bits. */
static uint64_t cvt_scalar(const emu_inst *in, ir_type dt, ir_type st, uint64_t v) {
  unsigned sw = ir_type_bits(st), dw = ir_type_bits(dt);
  emu_rnd irnd;
  bool have_irnd = int_mode(in->mods.rnd, &irnd);
  if (is_int(st)) {
    bool ss = ir_type_kind_of(st) == IR_TK_SINT;
    int64_t sv = ss ? emu_sext(v, sw) : (int64_t)(v & emu_type_mask(sw));
    if (is_int(dt)) {
      bool ds = ir_type_kind_of(dt) == IR_TK_SINT;
      uint64_t dmk = emu_type_mask(dw);
      if (!in->mods.sat) return (uint64_t)sv & dmk;
      /* clamp the source value to the destination range */
      if (ds) {
        int64_t lo = dw == 64 ? INT64_MIN : -(int64_t)(1ull << (dw - 1));
        int64_t hi = dw == 64 ? INT64_MAX : (int64_t)((1ull << (dw - 1)) - 1);
        if (!ss && (v & emu_type_mask(sw)) > (uint64_t)hi) return (uint64_t)hi & dmk;
        if (ss && sv < lo) return (uint64_t)lo & dmk;
        if (ss && sv > hi) return (uint64_t)hi & dmk;
        return (uint64_t)sv & dmk;
      }
      if (ss && sv < 0) return 0;
      uint64_t uv = ss ? (uint64_t)sv : v & emu_type_mask(sw);
      return uv > dmk ? dmk : uv;
    }
    /* int -> float */
    const emu_fpfmt *f = fmt_of(dt);
    emu_rnd mode = float_mode(in->mods.rnd);
    uint64_t r = ss ? emu_fp_from_s64(f, sv, mode) : emu_fp_from_u64(f, (uint64_t)sv, mode);
    if (dt == ir_type_tf32) r <<= 13;
    if (in->mods.sat) return float_out(in, dt, ss ? (double)sv : (double)(uint64_t)sv, mode);
    return r;
  }
  /* float source */
  double fv = float_in(in, st, v);
  if (is_int(dt)) {
    bool ds = ir_type_kind_of(dt) == IR_TK_SINT;
    return emu_double_to_int(fv, have_irnd ? irnd : EMU_RZ, dw, ds);
  }
  if (fv != fv) {
    const emu_fpfmt *f = fmt_of(dt);
    if (in->mods.sat) return 0;
    if (dt == ir_type_tf32) return EMU_F32_CANON_NAN;
    return f->nan == EMU_NAN_NONE ? emu_fp_from_double(f, fv, EMU_RN, flags_of(in)) : emu_fp_canonical_nan(f);
  }
  if (have_irnd) return float_out(in, dt, emu_round_integral(fv, irnd), EMU_RN);
  return float_out(in, dt, fv, float_mode(in->mods.rnd));
}

static uint64_t extend_to_reg(uint64_t r, ir_type dt, ir_type reg) {
  unsigned dw = ir_type_bits(dt), rw = ir_type_bits(reg);
  if (rw <= dw || rw > 64) return r & emu_type_mask(dw < 64 ? dw : 64);
  if (ir_type_kind_of(dt) == IR_TK_SINT) return (uint64_t)emu_sext(r, dw) & emu_type_mask(rw);
  return r & emu_type_mask(dw);
}

static void h_cvt(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  ir_type dt = (ir_type)in->type, st = (ir_type)in->type2, reg = (ir_type)in->dtype[0];
  EMU_EACH(m, l, d[l] = extend_to_reg(cvt_scalar(in, dt, st, a[l]), dt, reg));
}

/* fast paths */
static void h_cvt_f32_s32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = emu_f32_bits((float)(int32_t)(uint32_t)a[l]));
}
static void h_cvt_f32_u32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = emu_f32_bits((float)(uint32_t)a[l]));
}
static void h_cvt_f64_f32(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, {
    uint32_t b = (uint32_t)a[l];
    d[l] = emu_f32_is_nan(b) ? EMU_F64_CANON_NAN : emu_f64_bits((double)emu_f32(b));
  });
}
static void h_cvt_ext(emu_exec *x, const emu_inst *in, emu_mask m) {   /* u64.u32 and friends */
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = emu_type_mask(ir_type_bits((ir_type)in->type2));
  EMU_LANES(x, m, l, d[l] = a[l] & mk);
}
static void h_cvt_sext32_64(emu_exec *x, const emu_inst *in, emu_mask m) {   /* s64.s32 */
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  EMU_LANES(x, m, l, d[l] = (uint64_t)(int64_t)(int32_t)(uint32_t)a[l]);
}
static void h_cvt_trunc(emu_exec *x, const emu_inst *in, emu_mask m) {   /* u32.u64 ... */
  const uint64_t *a = S(0);
  uint64_t *d = D(0), mk = in->tmask;
  EMU_LANES(x, m, l, d[l] = a[l] & mk);
}

/* Two sources a, b packed into halves of the destination: a high, b low
 * (f16x2, bf16x2, and the 8/6/4-bit pairs). */
static void h_cvt_pair(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1);
  uint64_t *d = D(0);
  ir_type dt = (ir_type)in->type, st = (ir_type)in->type2;
  ir_type et;   /* element type */
  unsigned ew, shift;
  switch (dt) {
  case ir_type_f16x2: et = ir_type_f16; ew = 16; shift = 16; break;
  case ir_type_bf16x2: et = ir_type_bf16; ew = 16; shift = 16; break;
  case ir_type_e4m3x2: et = ir_type_e4m3; ew = 8; shift = 8; break;
  case ir_type_e5m2x2: et = ir_type_e5m2; ew = 8; shift = 8; break;
  case ir_type_e2m3x2: et = ir_type_e2m3; ew = 6; shift = 8; break;
  case ir_type_e3m2x2: et = ir_type_e3m2; ew = 6; shift = 8; break;
  default: et = ir_type_e2m1; ew = 4; shift = 4; break;   /* e2m1x2 */
  }
  uint64_t emk = emu_type_mask(ew);
  EMU_EACH(m, l, {
    uint64_t hi = cvt_scalar(in, et, st, a[l]) & emk, lo = cvt_scalar(in, et, st, b[l]) & emk;
    d[l] = (hi << shift) | lo;
  });
}

/* One packed source split into two narrower elements: f16x2 -> e4m3x2 and
 * friends (high half to high byte), and the widening unpack e4m3x2 ->
 * f16x2.  in->sub: source element width in bits, in->vec: its stride. */
static void h_cvt_split(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t *d = D(0);
  ir_type dt = (ir_type)in->type, st = (ir_type)in->type2;
  const emu_fpfmt *sf = fmt_of(st), *df = fmt_of(dt);
  unsigned sstride = in->sub, dstride = in->vec;
  unsigned sw = sf ? (sf->bits == 6 ? 6 : sf->bits) : 16;
  unsigned dw = df ? (df->bits == 6 ? 6 : df->bits) : 16;
  ir_type se = st == ir_type_f16x2 ? ir_type_f16 : st == ir_type_bf16x2 ? ir_type_bf16
             : st == ir_type_e4m3x2 ? ir_type_e4m3 : st == ir_type_e5m2x2 ? ir_type_e5m2
             : st == ir_type_e2m3x2 ? ir_type_e2m3 : st == ir_type_e3m2x2 ? ir_type_e3m2 : ir_type_e2m1;
  ir_type de = dt == ir_type_f16x2 ? ir_type_f16 : dt == ir_type_bf16x2 ? ir_type_bf16
             : dt == ir_type_e4m3x2 ? ir_type_e4m3 : dt == ir_type_e5m2x2 ? ir_type_e5m2
             : dt == ir_type_e2m3x2 ? ir_type_e2m3 : dt == ir_type_e3m2x2 ? ir_type_e3m2 : ir_type_e2m1;
  EMU_EACH(m, l, {
    uint64_t out = 0;
    for (unsigned h = 0; h < 2; h++) {
      uint64_t e = (a[l] >> (h * sstride)) & emu_type_mask(sw);
      out |= (cvt_scalar(in, de, se, e) & emu_type_mask(dw)) << (h * dstride);
    }
    d[l] = out;
  });
}

/* ue8m0x2 from two f32 (a high) or from bf16x2; bf16x2 from ue8m0x2 */
static void h_cvt_ue8m0(emu_exec *x, const emu_inst *in, emu_mask m) {
  uint64_t *d = D(0);
  ir_type dt = (ir_type)in->type, st = (ir_type)in->type2;
  emu_rnd mode = in->mods.rnd == IR_RND_RP ? EMU_RP : EMU_RZ;
  bool sf = in->mods.satfinite;
  if (dt == ir_type_ue8m0x2 && st == ir_type_f32) {
    const uint64_t *a = S(0), *b = S(1);
    EMU_EACH(m, l, {
      uint64_t hi = emu_ue8m0_from_double(emu_f32((uint32_t)a[l]), mode, sf);
      uint64_t lo = emu_ue8m0_from_double(emu_f32((uint32_t)b[l]), mode, sf);
      d[l] = (hi << 8) | lo;
    });
  } else if (dt == ir_type_ue8m0x2) {
    const uint64_t *a = S(0);
    EMU_EACH(m, l, {
      uint64_t hi = emu_ue8m0_from_double(emu_bf16_to_f32((uint16_t)(a[l] >> 16)), mode, sf);
      uint64_t lo = emu_ue8m0_from_double(emu_bf16_to_f32((uint16_t)a[l]), mode, sf);
      d[l] = (hi << 8) | lo;
    });
  } else {
    const uint64_t *a = S(0);
    EMU_EACH(m, l, {
      uint64_t out = 0;
      for (unsigned h = 0; h < 2; h++) {
        double v = emu_ue8m0_to_double((uint8_t)(a[l] >> (8 * h)));
        uint64_t bits = v != v ? 0x7fff : emu_fp_from_double(&emu_fmt_bf16, v, EMU_RN, 0);
        out |= bits << (16 * h);
      }
      d[l] = out;
    });
  }
}

/* cvt.pack.sat.ctype.s32{.b32} d, a, b{, c} (PTX ISA 9.7.9.22): a and b
 * saturated to ctype's range and packed with b in the low field and a above
 * it; the bits above the two fields come from c, shifted up by them (so
 * four u8 values pack in two steps).  Without c the fields fill 32 bits
 * (16-bit ctypes). */
static void h_cvt_pack(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0), *b = S(1), *c = in->nsrc > 2 ? S(2) : NULL;
  uint64_t *d = D(0);
  unsigned bits = ir_type_bits((ir_type)in->type);
  bool sgn = ir_type_kind_of((ir_type)in->type) == IR_TK_SINT;
  int64_t lo = sgn ? -(int64_t)(1ll << (bits - 1)) : 0, hi = sgn ? (1ll << (bits - 1)) - 1 : (1ll << bits) - 1;
  uint32_t fmask = (uint32_t)((1ull << bits) - 1);
  EMU_EACH(m, l, {
    int64_t va = (int32_t)(uint32_t)a[l], vb = (int32_t)(uint32_t)b[l];
    va = va < lo ? lo : va > hi ? hi : va;
    vb = vb < lo ? lo : vb > hi ? hi : vb;
    uint32_t r = ((uint32_t)va & fmask) << bits | ((uint32_t)vb & fmask);
    if (c && 2 * bits < 32) r |= (uint32_t)c[l] << (2 * bits);
    d[l] = r;
  });
}

static bool is_pair_dst(ir_type t) {
  return t == ir_type_f16x2 || t == ir_type_bf16x2 || t == ir_type_e4m3x2 || t == ir_type_e5m2x2 ||
         t == ir_type_e2m3x2 || t == ir_type_e3m2x2 || t == ir_type_e2m1x2;
}

static bool is_scalar_type(ir_type t) {
  return is_int(t) || t == ir_type_f16 || t == ir_type_bf16 || t == ir_type_f32 || t == ir_type_f64 ||
         t == ir_type_tf32 || t == ir_type_e4m3 || t == ir_type_e5m2;
}

const char *emu_sel_cvt(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  if (i->op == ir_op_cvt_pack) {
    unsigned bits = ir_type_bits(dt);
    if (!i->mods.sat || (i->nsrc != 2 && i->nsrc != 3) || !bits || bits > 16 || !is_int(dt))
      return emu_dfmt(d, "cvt.pack.%s with %u operands", ir_type_name(dt), i->nsrc);
    in->fn = h_cvt_pack;
    return NULL;
  }
  if (i->mods.rnd == IR_RND_RS) return "cvt with stochastic rounding (.rs)";
  if (st == ir_type_none) st = (ir_type)in->stype[0];
  in->type2 = st;
  if (dt == ir_type_ue8m0x2 || (dt == ir_type_bf16x2 && st == ir_type_ue8m0x2)) {
    if (dt == ir_type_ue8m0x2 && st == ir_type_f32 && i->nsrc < 2) return "cvt to ue8m0x2 needs two sources";
    in->fn = h_cvt_ue8m0;
    return NULL;
  }
  if (is_pair_dst(dt) && i->nsrc == 2 && is_scalar_type(st)) {
    in->fn = h_cvt_pair;
    return NULL;
  }
  if (is_pair_dst(dt) && i->nsrc == 1 && is_pair_dst(st)) {
    /* f16x2 -> 8/6/4-bit pair, or pair -> f16x2/bf16x2 */
    const emu_fpfmt *sf = fmt_of(st), *df = fmt_of(dt);
    if (!sf || !df) return "cvt between these packed types";
    in->sub = (uint8_t)(sf->bits == 16 ? 16 : sf->bits == 4 ? 4 : 8);
    in->vec = (uint8_t)(df->bits == 16 ? 16 : df->bits == 4 ? 4 : 8);
    in->fn = h_cvt_split;
    return NULL;
  }
  if (i->nsrc != 1) return emu_dfmt(d, "cvt.%s.%s with %u sources", ir_type_name(dt), ir_type_name(st), i->nsrc);
  if (!is_scalar_type(dt) || !is_scalar_type(st))
    return emu_dfmt(d, "cvt.%s.%s", ir_type_name(dt), ir_type_name(st));
  bool plain = !i->mods.sat && !i->mods.ftz && !i->mods.relu && !i->mods.satfinite;
  in->fn = h_cvt;
  if (plain && dt == ir_type_f32 && (!i->mods.rnd || i->mods.rnd == IR_RND_RN)) {
    if (st == ir_type_s32) in->fn = h_cvt_f32_s32;
    else if (st == ir_type_u32) in->fn = h_cvt_f32_u32;
  }
  if (plain && dt == ir_type_f64 && st == ir_type_f32) in->fn = h_cvt_f64_f32;
  if (plain && is_int(dt) && is_int(st) && ir_type_bits(in->dtype[0]) == ir_type_bits(dt)) {
    unsigned dw = ir_type_bits(dt), sw = ir_type_bits(st);
    if (dw > sw && ir_type_kind_of(st) != IR_TK_SINT) in->fn = h_cvt_ext;
    else if (dw == 64 && sw == 32 && ir_type_kind_of(st) == IR_TK_SINT) in->fn = h_cvt_sext32_64;
    else if (dw <= sw) in->fn = h_cvt_trunc;
  }
  return NULL;
}
