/* emu/emu_matrix.c: the warp-level matrix instructions, unlowered (PTX ISA
 * 9.7.14.5.14 mma, 9.7.14.5.15 ldmatrix, 9.7.14.5.16 stmatrix,
 * 9.7.14.5.17 movmatrix).
 *
 * All are .sync.aligned: every thread of the warp executes the same
 * instruction, so the wave loop runs them (EMU_K_SYNC with the full warp as
 * member mask, emu_exec.c) once all non-exited lanes of the warp have
 * arrived, and a handler reads the operands of all 32 lanes of each warp
 * (a 32-lane half of a wave of 64) that takes part.  Registers of lanes
 * that do not take part are read as they are (zero if never written), as
 * shfl does; the ISA makes that case undefined.
 *
 * mma (D = A * B + C): the fragments are gathered into matrices with the
 * layouts of ir/ir_mma.h.  Products of f16, bf16, tf32, e4m3 and e5m2
 * inputs are exact in f32 (at most 11 + 11 significant bits, exponents in
 * range), so each step
 * acc = fmaf(a, b, acc) rounds only the sum: the accumulation is f32,
 * round to nearest even, in k order starting from C (f16 C widened
 * exactly, f16 D rounded to nearest at the end).  The ISA does not specify
 * the hardware's internal order or precision of the sum; this order is the
 * one lower/lower_mma.c computes, and tests use values whose sums are exact
 * in any order.  tf32 operands are .b32 registers of which only the tf32
 * bits (sign, 8-bit exponent, 10-bit mantissa) are used: the low 13 bits
 * are cleared.  f64: fma in k order, each in the instruction's rounding
 * (.rz/.rm/.rp: emu_f64_fma_chain).  s8/u8 and s4/u4: exact integer sum,
 * then + C wrapping at 32 bits, or with .satfinite clamped to the s32
 * range.  .b1: C + the count of k where A and B are both 1 (.and.popc) or
 * differ (.xor.popc).  Volta's m8n8k4 .f16: per quad-pair (h_mma_m8n8k4).
 * mma's operands are in aux (emu_decode.c): up to 16 sources, 8 results.
 * NaN results are the canonical NaN (docs/emulator.md, "Arithmetic").
 *
 * sm_120a's .kind::f8f6f4: e3m2/e2m3 (bits 5..0 of their byte) and e2m1
 * (bits 5..2) are read from their containers, the other bits (padding)
 * ignored (what the hardware does with nonzero padding is not
 * documented), and summed as the fp8 forms are.  Block scaling (9.7.14.3,
 * .kind::mxf8f6f4 / mxf4 / mxf4nvf4, f32 only): the ISA defines D = (A
 * scale_A)(B scale_B) + C and leaves the precision open; here each scale
 * block j of K (32 or 16 k) is summed as above from 0 in k order (p_j), then
 * t_j = p_j * (SF_A * SF_B) rounded once to f32 (the scales' product is
 * exact: powers of two for ue8m0, 4-bit significands for ue4m3; the product
 * with p_j is taken in double, where it is exact, so t_j rounds only once
 * even where SF_A * SF_B alone is outside f32's range), and D = C + t_0 +
 * t_1 ... in f32 in block order.  A NaN scale (ue8m0 0xff, ue4m3 0x7f)
 * makes its terms NaN.  ue4m3 is read from the low 7 bits (unsigned e4m3).
 */
#include <math.h>

#include "emu_internal.h"
#include "ir/ir_amd_matrix.h"
#include "ir/ir_mma.h"
#include "ir/ir_wmma.h"

#define S(k) EMU_U64(x, in->src[k])
/* mma's operands are in aux (up to 16: A, B, C, and block scaling's six) */
#define MS(k) EMU_U64(x, ((const emu_opnd *)in->aux)[k])
#define D(k) EMU_U64(x, in->dst[k])

/* The halves (warps) of a wave that lanes of m belong to: bit 0 lanes
 * 0-31, bit 1 lanes 32-63. */
static unsigned warps_of(emu_mask m) { return ((uint32_t)m ? 1u : 0u) | ((m >> 32) ? 2u : 0u); }

/* ---- ldmatrix / stmatrix ----------------------------------------------------- */
/* Row addresses: thread 8j + r of the warp (j < .x1/.x2/.x4) gives the
 * address of row r of matrix j, 8 .b16 elements (16 bytes).  Matrix j
 * goes to or comes from register j of every thread: thread L holds row
 * L >> 2, elements 2 (L & 3) and 2 (L & 3) + 1 (low half first); with
 * .trans it holds column L >> 2 instead: rows 2 (L & 3) and 2 (L & 3) + 1
 * of that column. */
static uint64_t row_addr(emu_exec *x, const emu_inst *in, unsigned base, unsigned src_lane, uint64_t byte) {
  return (S(0)[base + src_lane] + (uint64_t)in->imm + byte) & in->amask;
}

static void h_ldmatrix(emu_exec *x, const emu_inst *in, emu_mask m) {
  unsigned n = in->vec;
  uint64_t tmp[4][EMU_MAX_LANES];
  EMU_EACH(m, l, {
    unsigned lane = l & 31, base = l & 32;
    for (unsigned j = 0; j < n; j++) {
      if (!in->mods.trans) {
        const uint8_t *p = emu_addr(x, in, l, in->space, row_addr(x, in, base, j * 8 + (lane >> 2), (lane & 3) * 4u), 4, false);
        if (!p) return;
        tmp[j][l] = __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
      } else {
        uint32_t v = 0;
        for (unsigned h = 0; h < 2; h++) {
          const uint8_t *p = emu_addr(x, in, l, in->space,
                                      row_addr(x, in, base, j * 8 + (lane & 3) * 2 + h, (lane >> 2) * 2u), 2, false);
          if (!p) return;
          v |= (uint32_t)__atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED) << (16 * h);
        }
        tmp[j][l] = v;
      }
    }
  });
  for (unsigned j = 0; j < n; j++) {
    uint64_t *d = D(j);
    EMU_EACH(m, l, d[l] = tmp[j][l]);
  }
}

static void h_stmatrix(emu_exec *x, const emu_inst *in, emu_mask m) {
  unsigned n = in->vec;
  x->stores++;
  EMU_EACH(m, l, {
    unsigned lane = l & 31, base = l & 32;
    for (unsigned j = 0; j < n; j++) {
      uint32_t v = (uint32_t)S(1 + j)[l];
      if (!in->mods.trans) {
        uint8_t *p = emu_addr(x, in, l, in->space, row_addr(x, in, base, j * 8 + (lane >> 2), (lane & 3) * 4u), 4, true);
        if (!p) return;
        __atomic_store_n((uint32_t *)p, v, __ATOMIC_RELAXED);
      } else {
        for (unsigned h = 0; h < 2; h++) {
          uint8_t *p = emu_addr(x, in, l, in->space,
                                row_addr(x, in, base, j * 8 + (lane & 3) * 2 + h, (lane >> 2) * 2u), 2, true);
          if (!p) return;
          __atomic_store_n((uint16_t *)p, (uint16_t)(v >> (16 * h)), __ATOMIC_RELAXED);
        }
      }
    }
  });
}

/* movmatrix.trans: the 8x8 .b16 matrix held as ldmatrix leaves it (thread
 * L: row L >> 2, columns 2 (L & 3) + h), transposed: thread L receives
 * M[2 (L & 3) + h][L >> 2], held by thread 4 (2 (L & 3) + h) + (L >> 3) in
 * half (L >> 2) & 1. */
static void h_movmatrix(emu_exec *x, const emu_inst *in, emu_mask m) {
  const uint64_t *a = S(0);
  uint64_t tmp[EMU_MAX_LANES];
  EMU_EACH(m, l, {
    unsigned lane = l & 31, base = l & 32, r = lane >> 2, c = lane & 3;
    uint32_t v = 0;
    for (unsigned h = 0; h < 2; h++) {
      uint32_t w = (uint32_t)a[base + 4 * (2 * c + h) + (r >> 1)];
      v |= ((w >> (16 * (r & 1))) & 0xffffu) << (16 * h);
    }
    tmp[l] = v;
  });
  uint64_t *d = D(0);
  EMU_EACH(m, l, d[l] = tmp[l]);
}

/* ---- mma ------------------------------------------------------------------------ */
/* Raw bits of element i of a fragment of type t whose registers are
 * operands first.. of the instruction (in aux: emu_decode.c), in lane l. */
static uint64_t elem_bits_of(emu_exec *x, const emu_inst *in, unsigned first, unsigned bits, unsigned l, unsigned i) {
  unsigned per = bits >= 32 ? 1 : 32 / bits;
  uint64_t r = MS(first + i / per)[l];
  return bits >= 64 ? r : (r >> (bits * (i % per))) & emu_type_mask(bits);
}
static uint64_t frag_bits(emu_exec *x, const emu_inst *in, unsigned first, ir_type t, unsigned l, unsigned i) {
  return elem_bits_of(x, in, first, ir_mma_elem_bits(t), l, i);
}

/* Raw bits of A/B element i (ir_mma_ab_bits wide: m16n8k64's e2m1 packed eight to a register). */
static uint64_t ab_bits(emu_exec *x, const emu_inst *in, const ir_mma_form *f, unsigned first, ir_type t, unsigned l,
                        unsigned i) {
  return elem_bits_of(x, in, first, ir_mma_ab_bits(f, t), l, i);
}

static double elem_value(ir_type t, uint64_t b);
/* An A/B element's value: m16n8k64's e2m1 is a bare nibble. */
static double ab_value(const ir_mma_form *f, ir_type t, uint64_t b) {
  return f->cls == IR_MMA_F4 ? emu_fp_to_double(&emu_fmt_e2m1, b & 0xf) : elem_value(t, b);
}

static double elem_value(ir_type t, uint64_t b) {
  switch (t) {
  case ir_type_e3m2: return emu_fp_to_double(&emu_fmt_e3m2, b & 0x3f);
  case ir_type_e2m3: return emu_fp_to_double(&emu_fmt_e2m3, b & 0x3f);
  case ir_type_e2m1: return emu_fp_to_double(&emu_fmt_e2m1, (b >> 2) & 0xf);   /* kind::f8f6f4: bits 5..2 */
  case ir_type_f16: return emu_f16_to_f32((uint16_t)b);
  case ir_type_bf16: return emu_bf16_to_f32((uint16_t)b);
  case ir_type_tf32: return emu_f32((uint32_t)b & 0xffffe000u);
  case ir_type_e4m3: return emu_fp_to_double(&emu_fmt_e4m3, b);
  case ir_type_e5m2: return emu_fp_to_double(&emu_fmt_e5m2, b);
  case ir_type_f32: return emu_f32((uint32_t)b);
  case ir_type_s8: return (double)(int8_t)(uint8_t)b;
  case ir_type_u8: return (double)(uint8_t)b;
  case ir_type_s4: return (double)(((int)(b & 15u) ^ 8) - 8);
  case ir_type_u4: return (double)(b & 15u);
  case ir_type_b1: return (double)(b & 1u);
  case ir_type_s32: return (double)(int32_t)(uint32_t)b;
  default: return emu_f64(b);
  }
}

#define MMA_MAX_M 16
#define MMA_MAX_N 8
#define MMA_MAX_K 256   /* m16n8k256 .b1 */

/* One element of D: C (bits of type tc) + the sum over k of a[k] * b[k *
 * bstep], as the bits of td.  f16/bf16/tf32/e4m3/e5m2 products are exact
 * in f32 and fmaf rounds only the sums, in k order from C; f64 fma in k
 * order; s8/u8 exact, then + C wrapping or (.satfinite) clamped. */
static uint64_t dot(ir_mma_class cls, ir_type tc, ir_type td, bool satfinite, const double *a, const double *b,
                    size_t bstep, uint64_t c, unsigned K) {
  switch (cls) {
  case IR_MMA_F16: case IR_MMA_TF32: case IR_MMA_F8: case IR_MMA_F4: {
    float acc = (float)elem_value(tc, c);
    for (unsigned k = 0; k < K; k++) acc = fmaf((float)a[k], (float)b[k * bstep], acc);
    if (td == ir_type_f16) return acc != acc ? EMU_F16_CANON_NAN : emu_f32_to_f16(acc, EMU_RN);
    return acc != acc ? EMU_F32_CANON_NAN : emu_f32_bits(acc);
  }
  case IR_MMA_F64: {
    double acc = emu_f64(c);
    for (unsigned k = 0; k < K; k++) acc = fma(a[k], b[k * bstep], acc);
    return acc != acc ? EMU_F64_CANON_NAN : emu_f64_bits(acc);
  }
  case IR_MMA_I8: case IR_MMA_I4: case IR_MMA_B1: {
    /* .b1: a[k] * b[k] of single bits is their .and; dot_b1 does .xor */
    int64_t s = (int64_t)(int32_t)(uint32_t)c;
    for (unsigned k = 0; k < K; k++) s += (int64_t)a[k] * (int64_t)b[k * bstep];
    if (satfinite) s = s > INT32_MAX ? INT32_MAX : s < INT32_MIN ? INT32_MIN : s;
    return (uint32_t)(uint64_t)s;
  }
  }
  return 0;
}

/* A scale factor: ue8m0 2^(b - 127) (0xff NaN), ue4m3 the unsigned e4m3 of
 * the low 7 bits. */
static double scale_value(ir_type st, uint8_t b) {
  return st == ir_type_ue8m0 ? emu_ue8m0_to_double(b) : emu_fp_to_double(&emu_fmt_e4m3, b & 0x7f);
}

/* One element of a block-scaled D (f32): C + sum over the nblk blocks of
 * round_f32(p_j * sa[j] * sb[j]), p_j the f32 sum of block j from 0 in k
 * order (file comment). */
static uint64_t dot_scaled(const double *a, const double *b, size_t bstep, uint64_t c, unsigned K, unsigned nblk,
                           const double *sa, const double *sb) {
  float acc = emu_f32((uint32_t)c);
  unsigned bk = K / nblk;
  for (unsigned j = 0; j < nblk; j++) {
    float p = 0.0f;
    for (unsigned k = j * bk; k < (j + 1) * bk; k++) p = fmaf((float)a[k], (float)b[k * bstep], p);
    acc += (float)((double)p * sa[j] * sb[j]);
  }
  return acc != acc ? EMU_F32_CANON_NAN : emu_f32_bits(acc);
}

/* .b1 with .xor.popc (PTX ISA 9.7.14.5.14): C + the number of k where the
 * bits differ, wrapping at 32 bits (at most 256: no wrap from the sum). */
static uint64_t dot_b1_xor(const double *a, const double *b, size_t bstep, uint64_t c, unsigned K) {
  uint32_t s = (uint32_t)c;
  for (unsigned k = 0; k < K; k++) s += a[k] != b[k * bstep];
  return s;
}

/* One element of D of an mma or wmma.mma instruction in: dot(), with .b1's
 * .xor.popc, .f64's rounding modes (each fma of the chain in the mode,
 * PTX ISA 9.7.14.5.14 / 9.7.14.4.3: .rz/.rm/.rp) and floating-point
 * .satfinite (wmma.mma of PTX ISA 6.0-6.4: an infinite result, after D's
 * rounding, becomes the largest finite value of D's type with its sign;
 * NaN stays the canonical NaN, as cvt's .satfinite keeps NaN). */
static uint64_t dot_of(const ir_instr *ii, ir_mma_class cls, ir_type tc, ir_type td, bool satfinite, const double *a,
                       const double *b, size_t bstep, uint64_t c, unsigned K) {
  if (cls == IR_MMA_B1 && ii->mods.boolop == IR_BOOL_XOR) return dot_b1_xor(a, b, bstep, c, K);
  if (cls == IR_MMA_F64 && ii->mods.rnd && ii->mods.rnd != IR_RND_RN) {
    double acc = emu_f64_fma_chain(a, b, bstep, emu_f64(c), K, ii->mods.rnd);
    return acc != acc ? EMU_F64_CANON_NAN : emu_f64_bits(acc);
  }
  bool fsat = satfinite && cls != IR_MMA_I8 && cls != IR_MMA_I4;
  uint64_t v = dot(cls, tc, td, satfinite && !fsat, a, b, bstep, c, K);
  /* infinity - 1 is the largest finite value of the same sign */
  if (fsat && td == ir_type_f16 && (v & 0x7fffu) == 0x7c00u) v -= 1;
  if (fsat && td == ir_type_f32 && (v & 0x7fffffffu) == 0x7f800000u) v -= 1;
  return v;
}

/* Volta's m8n8k4 .f16 (ir_mma.h): per warp, the four quad-pairs' 8x8x4
 * products, each D = A * B + C with dot()'s f16 arithmetic (f32 sums in k
 * order from C, f16 D rounded once). */
static void h_mma_m8n8k4(emu_exec *x, const emu_inst *in, emu_mask m) {
  const ir_instr *ii = in->ir;
  ir_type td = (ir_type)ii->type, tc = (ir_type)ii->type4;
  bool arow = ir_mma_a_row(ii), brow = ir_mma_b_row(ii), cf32 = tc == ir_type_f32, df32 = td == ir_type_f32;
  unsigned nd = df32 ? 8 : 4;
  const emu_opnd *ops = in->aux;
  double A[4][8][4], B[4][4][8];
  uint64_t C[4][8][8];
  uint64_t out[8][EMU_MAX_LANES];
  unsigned warps = warps_of(m);
  for (unsigned w = 0; w < 2; w++) {
    if (!(warps & (1u << w))) continue;
    unsigned base = 32 * w;
    for (unsigned lane = 0; lane < 32; lane++) {
      unsigned q = (lane >> 2) & 3, r, c;
      for (unsigned i = 0; i < 4; i++) {
        ir_mma_m8n8k4_ab(false, arow, lane, i, &r, &c);
        A[q][r][c] = elem_value(ir_type_f16, frag_bits(x, in, 0, ir_type_f16, base + lane, i));
        ir_mma_m8n8k4_ab(true, brow, lane, i, &r, &c);
        B[q][r][c] = elem_value(ir_type_f16, frag_bits(x, in, 2, ir_type_f16, base + lane, i));
      }
      for (unsigned i = 0; i < 8; i++) {
        ir_mma_m8n8k4_cd(cf32, lane, i, &r, &c);
        C[q][r][c] = frag_bits(x, in, 4, tc, base + lane, i);
      }
    }
    emu_mask wm = m & (0xffffffffull << base);
    EMU_EACH(wm, l, {
      unsigned lane = l & 31, q = (lane >> 2) & 3;
      for (unsigned j = 0; j < nd; j++) out[j][l] = 0;
      for (unsigned i = 0; i < 8; i++) {
        unsigned r, c;
        ir_mma_m8n8k4_cd(df32, lane, i, &r, &c);
        uint64_t v = dot(IR_MMA_F16, tc, td, false, A[q][r], &B[q][0][c], 8, C[q][r][c], 4);
        if (df32) out[i][l] = v;
        else out[i / 2][l] |= v << (16 * (i % 2));
      }
    });
  }
  for (unsigned j = 0; j < nd; j++) {
    uint64_t *d = EMU_U64(x, ops[ii->nsrc + j]);
    EMU_EACH(m, l, d[l] = out[j][l]);
  }
}

static void h_mma(emu_exec *x, const emu_inst *in, emu_mask m) {
  if (ir_mma_is_m8n8k4_f16(in->ir)) {
    h_mma_m8n8k4(x, in, m);
    return;
  }
  const ir_mma_form *f = ir_mma_find(in->ir, NULL);   /* checked at decode */
  const ir_mma_frag *fa = ir_mma_frag_info((ir_mma_frag_id)f->a), *fb = ir_mma_frag_info((ir_mma_frag_id)f->b),
                    *fc = ir_mma_frag_info((ir_mma_frag_id)f->c);
  ir_type td = (ir_type)in->type, ta = (ir_type)in->ir->type2, tb = (ir_type)in->ir->type3,
          tc = (ir_type)in->ir->type4;
  unsigned na = ir_mma_ab_nregs(f, fa->nelem, ta), nb = ir_mma_ab_nregs(f, fb->nelem, tb);
  unsigned cfirst = na + nb, nc = ir_mma_nregs(fc->nelem, tc);
  unsigned nblk = ir_mma_scale_vec(in->ir->mods.mmakind);
  ir_type st = ir_mma_scale_type(in->ir->mods.mmakind);
  double SA[MMA_MAX_M][4], SB[MMA_MAX_N][4];
  unsigned dbits = ir_mma_elem_bits(td), dper = dbits >= 32 ? 1 : 32 / dbits;
  double A[MMA_MAX_M][MMA_MAX_K], B[MMA_MAX_K][MMA_MAX_N];
  uint64_t C[MMA_MAX_M][MMA_MAX_N], Dm[MMA_MAX_M][MMA_MAX_N];
  uint64_t out[8][EMU_MAX_LANES];
  unsigned warps = warps_of(m);
  for (unsigned w = 0; w < 2; w++) {
    if (!(warps & (1u << w))) continue;
    unsigned base = 32 * w;
    for (unsigned lane = 0; lane < 32; lane++) {
      unsigned r, c;
      for (unsigned i = 0; i < fa->nelem; i++) {
        ir_mma_elem(fa, lane, i, &r, &c);
        A[r][c] = ab_value(f, ta, ab_bits(x, in, f, 0, ta, base + lane, i));
      }
      for (unsigned i = 0; i < fb->nelem; i++) {
        ir_mma_elem(fb, lane, i, &r, &c);
        B[r][c] = ab_value(f, tb, ab_bits(x, in, f, na, tb, base + lane, i));
      }
      for (unsigned i = 0; i < fc->nelem; i++) {
        ir_mma_elem(fc, lane, i, &r, &c);
        C[r][c] = frag_bits(x, in, cfirst, tc, base + lane, i);
      }
    }
    if (nblk) {
      /* the selectors: immediates, or registers read in the warp's first
       * lane (the ISA has every thread give the same) */
      unsigned s0 = cfirst + nc;
      uint32_t bida = (uint32_t)MS(s0 + 1)[base], tida = (uint32_t)MS(s0 + 2)[base];
      uint32_t bidb = (uint32_t)MS(s0 + 4)[base], tidb = (uint32_t)MS(s0 + 5)[base];
      for (unsigned j = 0; j < nblk; j++) {
        for (unsigned r = 0; r < f->m; r++)
          SA[r][j] = scale_value(st, (uint8_t)(MS(s0)[base + ir_mma_sfa_lane(r, tida)] >> (8 * ((bida + j) & 3))));
        for (unsigned c = 0; c < f->n; c++)
          SB[c][j] = scale_value(st, (uint8_t)(MS(s0 + 3)[base + ir_mma_sfb_lane(c, tidb)] >> (8 * ((bidb + j) & 3))));
      }
      for (unsigned r = 0; r < f->m; r++)
        for (unsigned c = 0; c < f->n; c++)
          Dm[r][c] = dot_scaled(A[r], &B[0][c], MMA_MAX_N, C[r][c], f->k, nblk, SA[r], SB[c]);
    } else
    for (unsigned r = 0; r < f->m; r++)
      for (unsigned c = 0; c < f->n; c++)
        Dm[r][c] = dot_of(in->ir, (ir_mma_class)f->cls, tc, td, in->mods.satfinite, A[r], &B[0][c], MMA_MAX_N, C[r][c],
                          f->k);
    /* scatter D into the registers of this warp's lanes of m */
    emu_mask wm = m & (0xffffffffull << base);
    EMU_EACH(wm, l, {
      unsigned lane = l & 31;
      for (unsigned j = 0; j < in->ndst; j++) out[j][l] = 0;
      for (unsigned i = 0; i < fc->nelem; i++) {
        unsigned r, c;
        ir_mma_elem(fc, lane, i, &r, &c);
        unsigned j = i / dper, sh = dbits >= 32 ? 0 : dbits * (i % dper);
        out[j][l] |= Dm[r][c] << sh;
      }
    });
  }
  for (unsigned j = 0; j < in->ndst; j++) {
    uint64_t *d = EMU_U64(x, ((const emu_opnd *)in->aux)[in->ir->nsrc + j]);
    EMU_EACH(m, l, d[l] = out[j][l]);
  }
}

/* ---- wmma (PTX ISA 9.7.14.4), unlowered ------------------------------------------------ */
/* The fragment layout is ptxwave's (ir/ir_wmma.h: the mma.sync layouts of
 * the tiles), the one lower/lower_wmma.c builds, so unlowered and lowered
 * runs hold the same registers.  wmma.load and wmma.store touch only the
 * thread's own elements: each lane loads (stores) element i of its
 * fragment at row * stride + col (.row) or col * stride + row (.col)
 * elements from its address, the stride its operand or, without one, the
 * matrix's width (ir_wmma_default_stride); sub-byte elements by their
 * bits (h_wmma_load). */
static uint64_t wmma_stride(emu_exec *x, const emu_inst *in, const ir_wmma_form *f, unsigned k, bool has, unsigned l) {
  if (has) return (uint32_t)S(k)[l];
  return ir_wmma_default_stride(f, in->mods.frag, in->mods.layout == IR_LAYOUT_ROW);
}
static uint64_t wmma_index(const emu_inst *in, unsigned row, unsigned col, uint64_t stride) {
  return in->mods.layout == IR_LAYOUT_ROW ? row * stride + col : col * stride + row;
}

static void h_wmma_load(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_wmma_form f;
  bool has_stride;
  ir_wmma_find(in->ir, &f, NULL, &has_stride);   /* checked at decode */
  ir_type t = (ir_type)in->type;
  unsigned frag = in->mods.frag, bits = ir_mma_elem_bits(t), per = bits >= 32 ? 1 : 32 / bits, eb = bits / 8;
  unsigned ndata = ir_wmma_ndata(&f, frag), nreg = ir_wmma_nregs(&f, frag, t), ndreg = ndata / per;
  uint64_t tmp[8][EMU_MAX_LANES];
  EMU_EACH(m, l, {
    uint64_t stride = wmma_stride(x, in, &f, 1, has_stride, l);
    for (unsigned j = 0; j < ndreg; j++) tmp[j][l] = 0;
    for (unsigned e = 0; e < ndata; e++) {
      unsigned row, col;
      ir_wmma_elem(&f, frag, l & 31, e, &row, &col);
      if (bits < 8) {
        /* .s4/.u4/.b1: element index i at bit (i * bits) % 8 of byte
         * i * bits / 8 (packed low to high, as CUDA stores them) */
        uint64_t bit = wmma_index(in, row, col, stride) * bits;
        uint64_t a = (S(0)[l] + (uint64_t)in->imm + bit / 8) & in->amask;
        const uint8_t *p = emu_addr(x, in, l, in->space, a, 1, false);
        if (!p) return;
        uint64_t v = (__atomic_load_n(p, __ATOMIC_RELAXED) >> (bit % 8)) & emu_type_mask(bits);
        tmp[e / per][l] |= v << (bits * (e % per));
        continue;
      }
      uint64_t a = (S(0)[l] + (uint64_t)in->imm + wmma_index(in, row, col, stride) * eb) & in->amask;
      const uint8_t *p = emu_addr(x, in, l, in->space, a, eb, false);
      if (!p) return;
      uint64_t v = eb == 1 ? __atomic_load_n(p, __ATOMIC_RELAXED)
                 : eb == 2 ? __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED)
                 : eb == 4 ? __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED)
                           : __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
      tmp[e / per][l] |= v << (bits * (e % per) % 64);
    }
  });
  for (unsigned j = 0; j < nreg; j++) {
    uint64_t *d = D(j);
    EMU_EACH(m, l, d[l] = tmp[j % ndreg][l]);   /* .f16 A/B: the registers past the data are copies */
  }
}

static void h_wmma_store(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_wmma_form f;
  bool has_stride;
  ir_wmma_find(in->ir, &f, NULL, &has_stride);
  ir_type t = (ir_type)in->type;
  unsigned bits = ir_mma_elem_bits(t), per = bits >= 32 ? 1 : 32 / bits, eb = bits / 8;
  unsigned ndata = ir_wmma_ndata(&f, IR_FRAG_D), nreg = ir_wmma_nregs(&f, IR_FRAG_D, t);
  x->stores++;
  EMU_EACH(m, l, {
    uint64_t stride = wmma_stride(x, in, &f, 1 + nreg, has_stride, l);
    for (unsigned e = 0; e < ndata; e++) {
      unsigned row, col;
      ir_wmma_elem(&f, IR_FRAG_D, l & 31, e, &row, &col);
      uint64_t v = S(1 + e / per)[l] >> (bits * (e % per) % 64);
      uint64_t a = (S(0)[l] + (uint64_t)in->imm + wmma_index(in, row, col, stride) * eb) & in->amask;
      uint8_t *p = emu_addr(x, in, l, in->space, a, eb, true);
      if (!p) return;
      if (eb == 1) __atomic_store_n(p, (uint8_t)v, __ATOMIC_RELAXED);
      else if (eb == 2) __atomic_store_n((uint16_t *)p, (uint16_t)v, __ATOMIC_RELAXED);
      else if (eb == 4) __atomic_store_n((uint32_t *)p, (uint32_t)v, __ATOMIC_RELAXED);
      else __atomic_store_n((uint64_t *)p, v, __ATOMIC_RELAXED);
    }
  });
}

/* wmma.mma: like mma, the fragments of the warp's 32 lanes gathered into
 * matrices (ir_wmma_elem), D = A * B + C element by element with dot()
 * (the same arithmetic and k order as mma.sync and lower_mma's
 * expansion), D scattered back.  Operands in aux: A, B, C registers, then
 * the results. */
#define WMMA_MAX 32     /* M and N */
#define WMMA_MAX_K 128  /* m8n8k128 .b1 */

static void h_wmma_mma(emu_exec *x, const emu_inst *in, emu_mask m) {
  ir_wmma_form f;
  ir_wmma_find(in->ir, &f, NULL, NULL);
  ir_wmma_types ty = ir_wmma_mma_types(in->ir);
  const emu_opnd *ops = in->aux;
  unsigned na = ir_wmma_nregs(&f, IR_FRAG_A, ty.a), nb = ir_wmma_nregs(&f, IR_FRAG_B, ty.b);
  unsigned nc = ir_wmma_nregs(&f, IR_FRAG_C, ty.c), nd = ir_wmma_nregs(&f, IR_FRAG_C, ty.d);
  unsigned first[3] = {0, na, na + nb};
  ir_type types[3] = {ty.a, ty.b, ty.c};
  static const unsigned frags[3] = {IR_FRAG_A, IR_FRAG_B, IR_FRAG_C};
  unsigned dbits = ir_mma_elem_bits(ty.d), dper = dbits >= 32 ? 1 : 32 / dbits;
  double A[WMMA_MAX][WMMA_MAX_K], B[WMMA_MAX_K][WMMA_MAX];
  uint64_t C[WMMA_MAX][WMMA_MAX], Dm[WMMA_MAX][WMMA_MAX];
  uint64_t out[8][EMU_MAX_LANES];
  unsigned warps = warps_of(m);
  for (unsigned w = 0; w < 2; w++) {
    if (!(warps & (1u << w))) continue;
    unsigned base = 32 * w;
    for (unsigned o = 0; o < 3; o++) {
      unsigned bits = ir_mma_elem_bits(types[o]), per = bits >= 32 ? 1 : 32 / bits;
      for (unsigned lane = 0; lane < 32; lane++)
        for (unsigned e = 0; e < ir_wmma_ndata(&f, frags[o]); e++) {
          unsigned r, c;
          ir_wmma_elem(&f, frags[o], lane, e, &r, &c);
          uint64_t v = EMU_U64(x, ops[first[o] + e / per])[base + lane];
          v = bits >= 64 ? v : (v >> (bits * (e % per))) & emu_type_mask(bits);
          if (o == 0) A[r][c] = elem_value(types[o], v);
          else if (o == 1) B[r][c] = elem_value(types[o], v);
          else C[r][c] = v;
        }
    }
    for (unsigned r = 0; r < f.m; r++)
      for (unsigned c = 0; c < f.n; c++)
        Dm[r][c] = dot_of(in->ir, (ir_mma_class)f.cls, ty.c, ty.d, in->mods.satfinite, A[r], &B[0][c], WMMA_MAX, C[r][c],
                          f.k);
    emu_mask wm = m & (0xffffffffull << base);
    EMU_EACH(wm, l, {
      for (unsigned j = 0; j < nd; j++) out[j][l] = 0;
      for (unsigned e = 0; e < ir_wmma_ndata(&f, IR_FRAG_D); e++) {
        unsigned r, c;
        ir_wmma_elem(&f, IR_FRAG_D, l & 31, e, &r, &c);
        out[e / dper][l] |= Dm[r][c] << (dbits >= 32 ? 0 : dbits * (e % dper));
      }
    });
  }
  for (unsigned j = 0; j < nd; j++) {
    uint64_t *d = EMU_U64(x, ops[na + nb + nc + j]);
    EMU_EACH(m, l, d[l] = out[j][l]);
  }
}

const char *emu_sel_wmma(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  const char *why;
  ir_wmma_form f;
  if (!ir_wmma_find(i, &f, &why, NULL)) return emu_dfmt(d, "%s: %s", ir_op_infos[i->op].ptx, why);
  in->fn = i->op == ir_op_wmma_load ? h_wmma_load : i->op == ir_op_wmma_store ? h_wmma_store : h_wmma_mma;
  return NULL;
}

/* ---- wave_mma: one MFMA / WMMA instruction (ir/ir_amd_matrix.h) ------------------- */
/* The row's layout gives, for every lane of the wave and every half of every
 * A and B register, the element it holds, and for every C register the
 * element of C; each block's D = A * B + C is computed and written back
 * through the same layout.  Operands are read in every lane whatever the
 * exec mask (the instruction reads the whole wave; lower/ builds it only
 * where every lane it depends on holds its part), results written to the
 * lanes of m.
 *
 * Arithmetic: A and B elements (f16, bf16) are widened exactly; each
 * product is exact in f32, and acc = fmaf(a, b, acc) in k order from C
 * rounds only the sums, to nearest even, in f32.  The ISA guides do not say
 * in which order or at which internal precision the hardware adds the K
 * products of a block beyond accumulating in f32, so tests use inputs whose
 * sums are exact in any order.  NaN results are the canonical NaN.
 * Integer rows: each byte of A read as the row's ta says, of B as its tb
 * (s8 signed, u8 unsigned: the iu8 WMMA's sign flags, ir_amd_matrix.def),
 * products and sum exact, + C wrapping at 32 bits (the clamp bit is never
 * set: lower/ clamps after).
 *
 * WMMA_GFX11 requires lanes 16-31 to repeat lanes 0-15 in A and B (RDNA3
 * ISA, WMMA): where they differ the hardware's result is undefined, and
 * here the rows (A) or columns (B) that read them are the canonical NaN
 * (INT32_MIN for the iu8 rows), so a lowering that forgets the repetition
 * fails its tests. */
#define AMX_MAX_BLK 16
#define AMX_MAX_DIM 16

static void h_wave_mma(emu_exec *x, const emu_inst *in, emu_mask m) {
  const ir_amx_info *r = ir_amx_info_of(in->sub);
  const emu_opnd *ops = in->aux;
  unsigned W = x->nlanes, ebits = ir_amx_ab_bits(r);
  if (W != r->wave) {
    emu_fault(x, in, -1, EMU_ERR_UNSUPPORTED, "wave_mma %s runs at wave %u, this wave has %u lanes", r->name,
              r->wave, W);
    return;
  }
  /* per call, on the stack: the handler may run on several host threads */
  float Am[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM], Bm[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM];
  uint16_t Abits[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM], Bbits[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM];
  uint8_t Aset[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM], Bset[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM];
  bool Abad[AMX_MAX_BLK][AMX_MAX_DIM] = {{0}}, Bbad[AMX_MAX_BLK][AMX_MAX_DIM] = {{0}};
  float Cm[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM];
  int32_t Ci[AMX_MAX_BLK][AMX_MAX_DIM][AMX_MAX_DIM];
  memset(Aset, 0, sizeof Aset);
  memset(Bset, 0, sizeof Bset);
  for (unsigned ab = 0; ab < 2; ab++) {
    unsigned first = 1 + (ab ? r->na : 0), nreg = ab ? r->nb : r->na;
    for (unsigned reg = 0; reg < nreg; reg++) {
      const uint64_t *v = EMU_U64(x, ops[first + reg]);
      for (unsigned l = 0; l < W; l++)
        for (unsigned h = 0; h < 32 / ebits; h++) {
          unsigned blk, idx, k;
          ir_amx_ab_elem(r, l, reg, h, &blk, &idx, &k);
          uint16_t e = (uint16_t)((v[l] >> (ebits * h)) & ((1u << ebits) - 1));
          uint16_t(*bits)[AMX_MAX_DIM][AMX_MAX_DIM] = ab ? Bbits : Abits;
          uint8_t(*set)[AMX_MAX_DIM][AMX_MAX_DIM] = ab ? Bset : Aset;
          float(*mat)[AMX_MAX_DIM][AMX_MAX_DIM] = ab ? Bm : Am;
          if (set[blk][idx][k] && bits[blk][idx][k] != e) (ab ? Bbad : Abad)[blk][idx] = true;
          set[blk][idx][k] = 1;
          bits[blk][idx][k] = e;
          ir_type t = (ir_type)(ab ? r->tb : r->ta);   /* the iu8 WMMA: each operand's own sign */
          mat[blk][idx][k] = t == ir_type_bf16 ? emu_bf16_to_f32(e)
                           : t == ir_type_s8   ? (float)(int8_t)(uint8_t)e
                           : t == ir_type_u8   ? (float)(uint8_t)e
                                               : emu_f16_to_f32(e);
        }
    }
  }
  for (unsigned reg = 0; reg < r->nc; reg++) {
    const uint64_t *v = EMU_U64(x, ops[1 + r->na + r->nb + reg]);
    for (unsigned l = 0; l < W; l++) {
      unsigned blk, i, j;
      ir_amx_cd_elem(r, l, reg, &blk, &i, &j);
      Cm[blk][i][j] = r->tc == ir_type_s32 ? 0 : emu_f32((uint32_t)v[l]);
      Ci[blk][i][j] = (int32_t)(uint32_t)v[l];
    }
  }
  for (unsigned reg = 0; reg < r->nc; reg++) {
    uint64_t *d = EMU_U64(x, ops[1 + r->na + r->nb + r->nc + reg]);
    EMU_EACH(m, l, {
      unsigned blk, i, j;
      ir_amx_cd_elem(r, l, reg, &blk, &i, &j);
      bool bad = Abad[blk][i] || Bbad[blk][j];
      if (r->tc == ir_type_s32) {   /* exact products and sum, wrapping at 32 bits (no clamp) */
        if (bad) {   /* RDNA3's repetition broken: INT32_MIN stands for the undefined result */
          d[l] = 0x80000000u;
          continue;
        }
        int64_t s = Ci[blk][i][j];
        for (unsigned k = 0; k < r->k; k++) s += (int64_t)Am[blk][i][k] * (int64_t)Bm[blk][j][k];
        d[l] = (uint32_t)(uint64_t)s;
        continue;
      }
      float acc = Cm[blk][i][j];
      for (unsigned k = 0; k < r->k; k++) acc = fmaf(Am[blk][i][k], Bm[blk][j][k], acc);
      d[l] = bad || acc != acc ? EMU_F32_CANON_NAN : emu_f32_bits(acc);
    });
  }
}

/* The f64 rows (MFMA_F64_16X16): each element is two registers, low word
 * first.  D = A * B + C as acc = fma(a, b, acc) from C in k order, each
 * fma rounded to nearest even in f64: the order and rounding of the
 * per-thread expansion (lower_mma.c) and of the unlowered mma (h_mma), so
 * that the lowering is bit-identical to both on every input, not only on
 * exact sums.  The CDNA2/CDNA3 ISA guides do not say in which order, or
 * with how many roundings, the hardware sums the 4 products and C (nor
 * whether MODE's rounding applies): tests use exact sums.  NaN results are
 * the canonical NaN, as h_mma's. */
static void h_wave_mma_f64(emu_exec *x, const emu_inst *in, emu_mask m) {
  const ir_amx_info *r = ir_amx_info_of(in->sub);
  const emu_opnd *ops = in->aux;
  unsigned W = x->nlanes;
  if (W != r->wave) {
    emu_fault(x, in, -1, EMU_ERR_UNSUPPORTED, "wave_mma %s runs at wave %u, this wave has %u lanes", r->name,
              r->wave, W);
    return;
  }
  double A[AMX_MAX_DIM][AMX_MAX_DIM], B[AMX_MAX_DIM][AMX_MAX_DIM], C[AMX_MAX_DIM][AMX_MAX_DIM];
  for (unsigned ab = 0; ab < 2; ab++) {
    unsigned first = 1 + (ab ? r->na : 0);
    const uint64_t *lo = EMU_U64(x, ops[first]), *hi = EMU_U64(x, ops[first + 1]);
    for (unsigned l = 0; l < W; l++) {
      unsigned blk, idx, k;
      ir_amx_ab_elem(r, l, 0, 0, &blk, &idx, &k);
      double v = emu_f64((uint32_t)lo[l] | (uint64_t)(uint32_t)hi[l] << 32);
      if (ab) B[idx][k] = v;
      else A[idx][k] = v;
    }
  }
  unsigned c0 = 1 + r->na + r->nb, d0 = c0 + r->nc;
  for (unsigned reg = 0; reg < r->nc; reg += 2) {
    const uint64_t *lo = EMU_U64(x, ops[c0 + reg]), *hi = EMU_U64(x, ops[c0 + reg + 1]);
    for (unsigned l = 0; l < W; l++) {
      unsigned blk, i, j;
      ir_amx_cd_elem(r, l, reg, &blk, &i, &j);
      C[i][j] = emu_f64((uint32_t)lo[l] | (uint64_t)(uint32_t)hi[l] << 32);
    }
  }
  for (unsigned reg = 0; reg < r->nc; reg += 2) {
    uint64_t *lo = EMU_U64(x, ops[d0 + reg]), *hi = EMU_U64(x, ops[d0 + reg + 1]);
    EMU_EACH(m, l, {
      unsigned blk, i, j;
      ir_amx_cd_elem(r, l, reg, &blk, &i, &j);
      double acc = C[i][j];
      for (unsigned k = 0; k < r->k; k++) acc = fma(A[i][k], B[j][k], acc);
      uint64_t bits = acc != acc ? EMU_F64_CANON_NAN : emu_f64_bits(acc);
      lo[l] = (uint32_t)bits;
      hi[l] = (uint32_t)(bits >> 32);
    });
  }
}

const char *emu_sel_wave_mma(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  const ir_amx_info *r = i->nsrc && i->src[0]->kind == IR_VAL_CONST ? ir_amx_info_of((unsigned)i->src[0]->imm) : NULL;
  if (!r) return "wave_mma without an immediate row of ir_amd_matrix.def";
  if (i->nsrc != 1u + r->na + r->nb + r->nc || i->ndst != r->nc)
    return emu_dfmt(d, "wave_mma %s with %u operands and %u results", r->name, i->nsrc, i->ndst);
  if (r->blocks > AMX_MAX_BLK || r->m > AMX_MAX_DIM || r->n > AMX_MAX_DIM || r->k > AMX_MAX_DIM ||
      !((r->tc == ir_type_f32 && (r->ta == ir_type_f16 || r->ta == ir_type_bf16)) ||
        (r->tc == ir_type_s32 && (r->ta == ir_type_s8 || r->ta == ir_type_u8) &&
         (r->tb == ir_type_s8 || r->tb == ir_type_u8)) ||
        (r->tc == ir_type_f64 && r->ta == ir_type_f64 && r->layout == IR_AMX_L_MFMA_F64_16X16)))
    return emu_dfmt(d, "wave_mma %s: a shape or type the emulator does not run", r->name);
  in->sub = (uint8_t)i->src[0]->imm;
  in->fn = r->ta == ir_type_f64 ? h_wave_mma_f64 : h_wave_mma;
  return NULL;
}

const char *emu_sel_matrix(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  switch ((ir_op)i->op) {
  case ir_op_ldmatrix: case ir_op_stmatrix: {
    bool ld = i->op == ir_op_ldmatrix;
    unsigned n = i->mods.vec ? i->mods.vec : 1;
    if (i->mods.shape != IR_SHAPE_M8N8 || ir_type_bits((ir_type)i->type) != 16)
      return emu_dfmt(d, "%s of a shape other than .m8n8 .b16", ld ? "ldmatrix" : "stmatrix");
    if (n != 1 && n != 2 && n != 4) return emu_dfmt(d, "%s without .x1, .x2 or .x4", ld ? "ldmatrix" : "stmatrix");
    if (ld ? (i->nsrc != 1 || i->ndst != n) : (i->nsrc != 1 + n || i->ndst != 0))
      return emu_dfmt(d, "%s with %u registers for .x%u", ld ? "ldmatrix" : "stmatrix", ld ? i->ndst : i->nsrc - 1, n);
    in->vec = (uint8_t)n;
    in->fn = ld ? h_ldmatrix : h_stmatrix;
    return NULL;
  }
  case ir_op_movmatrix:
    if (i->mods.shape != IR_SHAPE_M8N8 || !i->mods.trans || ir_type_bits((ir_type)i->type) != 16)
      return "movmatrix other than .m8n8.trans.b16";
    in->fn = h_movmatrix;
    return NULL;
  case ir_op_mma: {
    const char *why;
    if (!ir_mma_find(i, &why)) return emu_dfmt(d, "mma: %s", why);
    in->fn = h_mma;
    return NULL;
  }
  default:
    break;
  }
  return emu_dfmt(d, "unsupported instruction '%s'", ir_op_infos[i->op].ptx);
}
