/* lower/lower_mma.c: the warp-level matrix instructions as per-thread code
 * (docs/lowering.md, "Warp-level matrix instructions").
 *
 *   ldmatrix.sync.aligned.m8n8.x1/.x2/.x4[.trans]{.shared{::cta}}.b16  (PTX ISA 9.7.14.5.15)
 *   stmatrix.sync.aligned.m8n8.x1/.x2/.x4[.trans]{.shared{::cta}}.b16  (9.7.14.5.16)
 *   movmatrix.sync.aligned.m8n8.trans.b16                              (9.7.14.5.17)
 *   mma.sync.aligned.<shape>.row.col (the forms of ir/ir_mma.h)        (9.7.14.5.14):
 *     m16n8k16/m16n8k8 .f16/.bf16 -> .f32/.f16, m16n8k8/m16n8k4 .tf32 -> .f32,
 *     m16n8k32/m16n8k16 .s8/.u8 -> .s32 (.satfinite), m16n8k32/m16n8k16
 *     .e4m3/.e5m2 -> .f32/.f16, m8n8k4 .f64
 *
 * Each becomes, in every thread, full-warp shfl.sync.idx ops (which
 * lower_warps, the next pass, maps onto the wave: ds_bpermute inside the
 * thread's 32-lane half on wave64) plus ordinary loads, stores and
 * arithmetic, so the expansion is target independent.
 *
 * ldmatrix: thread 8j + r holds the address of row r of matrix j; thread L
 * receives row L >> 2, .b16 elements 2 (L & 3) and 2 (L & 3) + 1 of matrix
 * j in register j.  So thread L shuffles the address from lane
 * 8j + (L >> 2) and loads the .b32 at + 4 (L & 3).  With .trans it
 * receives column L >> 2 instead: the .b16 at + 2 (L >> 2) of rows
 * 2 (L & 3) and 2 (L & 3) + 1 (two shuffles, two loads, one pack).
 * stmatrix is the same with stores; movmatrix.trans shuffles the two
 * registers holding M[2 (L & 3) + h][L >> 2] and selects the half.
 *
 * mma (D = A * B + C): thread L computes its own D elements (row g + r0,
 * column ct * t + c0 with g = L >> 2, t = L & 3; ir/ir_mma.h has every
 * layout).  The A elements of its row are held by the threads of its own
 * group (lanes 4g .. 4g + 3); the B elements of its column c by lanes
 * 4c .. 4c + 3.  So each A register is shuffled from lane 4g + s and each
 * B register from lane 4c + s (s = 0..3): for m16n8k16.f16, 16 + 16
 * shuffles, then per D element k fma in k order:
 *     acc = C;  for k in 0 .. K-1: acc = fma.rn(A[row][k], B[k][col], acc)
 * in f32 (f16/bf16/tf32/e4m3/e5m2 inputs, widened exactly: products are
 * exact in f32) or f64.  This is the emulator's order (emu/emu_matrix.c); the
 * hardware's internal order and precision are not specified by the ISA.
 * f16 C is widened, f16 D rounded to nearest at the end; tf32 operands
 * keep their tf32 bits (the low 13 bits cleared).  s8/u8: dp4a over each
 * register's four products (exact: at most 32 * 255 * 255 in magnitude),
 * then + C with add.s32 (wrapping) or add.sat.s32 (.satfinite).
 * e4m3/e5m2: each thread widens its own bytes to f32 first and the f32s
 * are shuffled (f8_to_f32, a_elem).
 *
 * Correct, not fast: an m16n8k16 is 32 shuffles and 64 fma per thread
 * where the hardware has one instruction, so the forms that have MFMA
 * (gfx90a/gfx942/gfx950) or WMMA (gfx11/gfx12) go there first
 * (lower_mma_amd.c); this expansion is the fallback and the reference.
 *
 * wmma.* reaches here as mma.sync (lower_wmma.c, the pass before).
 * What is not expanded here (sub-byte wmma, mma.sp, wgmma.*, other mma shapes and
 * types, other ldmatrix shapes) is reported with the instruction, the
 * kernel, its position and the target.
 */
#include <string.h>

#include "ir/ir_mma.h"
#include "ir/ir_wmma.h"
#include "lower_internal.h"

typedef struct mma_state {
  const lower_mma_options *opt;
  const char *target;      /* the module's target: messages, its matrix instructions */
  lower_mma_chain chain;   /* accumulators left in AMD's layout (lower_mma_amd_chained) */
} mma_state;

static bool is_opaque_wgmma(const ir_instr *i);

/* ---- diagnostics ----------------------------------------------------------- */
const char *lower_matrix_why(const ir_instr *i) {
  const char *why = NULL;
  unsigned n = i->mods.vec ? i->mods.vec : 1;
  switch ((ir_op)i->op) {
  case ir_op_mma:
    if (!ir_mma_find(i, &why)) return why;
    return NULL;
  case ir_op_ldmatrix: case ir_op_stmatrix:
    if (i->mods.shape != IR_SHAPE_M8N8 || ir_type_bits((ir_type)i->type) != 16) return "the shape is not .m8n8 with .b16";
    if (n != 1 && n != 2 && n != 4) return "the count is not .x1, .x2 or .x4";
    if (i->op == ir_op_ldmatrix ? (i->nsrc != 1 || i->ndst != n) : (i->nsrc != 1 + n || i->ndst != 0))
      return "the register count does not match .x";
    return NULL;
  case ir_op_movmatrix:
    if (i->mods.shape != IR_SHAPE_M8N8 || !i->mods.trans || ir_type_bits((ir_type)i->type) != 16)
      return "only .m8n8.trans.b16 exists";
    return NULL;
  case ir_op_wmma_load: case ir_op_wmma_store: case ir_op_wmma_mma:
    if (!ir_wmma_find(i, NULL, &why, NULL)) return why;
    return NULL;
  default:
    return "mma.sp and wgmma have no expansion";
  }
}

void lower_matrix_error(pw_diag *d, const ir_instr *i, const char *target, const char *why) {
  const ir_func *f = i->block ? i->block->func : NULL;
  /* an opaque instruction (wgmma.*, which the front end keeps as text) by its spelling */
  const char *name = i->op == ir_op_opaque && i->opaque ? i->opaque : ir_op_infos[i->op].ptx;
  bool expanded = i->op == ir_op_mma || i->op == ir_op_ldmatrix || i->op == ir_op_stmatrix || i->op == ir_op_movmatrix ||
                  i->op == ir_op_wmma_load || i->op == ir_op_wmma_store || i->op == ir_op_wmma_mma;
  lower_error(d, i, "cannot lower '%s' in %s '%s' for %s: %s%s%s", name, f && f->is_kernel ? "kernel" : "function",
              f && f->name ? f->name : "?", target ? target : "this target", expanded ? "this form is not supported (" : "",
              why, expanded ? "; docs/lowering.md lists the forms)" : "");
}

/* wgmma.* as the front end keeps it: an opaque instruction with its spelling. */
static bool is_opaque_wgmma(const ir_instr *i) {
  return i->op == ir_op_opaque && i->opaque && !strncmp(i->opaque, "wgmma.", 6);
}

/* ---- helpers ---------------------------------------------------------------- */
static ir_value *imm(ir_builder *b, uint32_t v) { return lower_imm32(b, v); }
static ir_value *add32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_add, ir_type_u32, x, y); }
static ir_value *and32(ir_builder *b, ir_value *x, uint32_t y) { return lower_alu(b, ir_op_and, ir_type_b32, x, imm(b, y)); }
static ir_value *shr32(ir_builder *b, ir_value *x, uint32_t y) { return lower_alu(b, ir_op_shr, ir_type_b32, x, imm(b, y)); }
static ir_value *shl32(ir_builder *b, ir_value *x, uint32_t y) { return lower_alu(b, ir_op_shl, ir_type_b32, x, imm(b, y)); }

/* shfl.sync.idx.b32 v from lane src, the whole warp (c = 0x1f: one
 * segment of 32 lanes; member mask 0xffffffff: every thread executes the
 * .aligned matrix op). */
static ir_value *shfl32c(ir_builder *b, ir_value *v, ir_value *src, uint32_t c) {
  return ir_shfl(b, ir_type_b32, v, src, imm(b, c), imm(b, 0xffffffffu), .shfl = IR_SHFL_IDX, .sync = 1);
}
static ir_value *shfl32(ir_builder *b, ir_value *v, ir_value *src) { return shfl32c(b, v, src, 0x1f); }
/* The same for a 32- or 64-bit value (two shuffles). */
static ir_value *shfl_any_c(ir_builder *b, ir_value *v, ir_value *src, uint32_t c) {
  if (ir_type_bits((ir_type)v->type) != 64) return shfl32c(b, v, src, c);
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b64, 1, (ir_value *[]){v}, 2,
                         (ir_type[]){ir_type_b32, ir_type_b32}, NULL);
  ir_value *lo = shfl32c(b, u->dst[0], src, c), *hi = shfl32c(b, u->dst[1], src, c);
  return ir_build_value(b, ir_op_pack, ir_type_b64, 2, (ir_value *[]){lo, hi}, NULL);
}
static ir_value *shfl_any(ir_builder *b, ir_value *v, ir_value *src) { return shfl_any_c(b, v, src, 0x1f); }
/* From lane 4g + s of the thread's quad (g = laneid / 4): shfl.idx with
 * b = s in segments of 4 (c = 0x1c1f: j = (laneid & ~3) | s), which
 * lower_warps makes one ds_swizzle (a broadcast within each quad) instead
 * of lane arithmetic and a ds_bpermute.  A's fragments come from the quad. */
static ir_value *shfl_quad(ir_builder *b, ir_value *v, unsigned s) { return shfl_any_c(b, v, imm(b, s), 0x1c1f); }
static void unpack16(ir_builder *b, ir_value *w, ir_value **lo, ir_value **hi) {
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, (ir_value *[]){w}, 2,
                         (ir_type[]){ir_type_b16, ir_type_b16}, NULL);
  *lo = u->dst[0];
  *hi = u->dst[1];
}
static ir_value *pack16(ir_builder *b, ir_value *lo, ir_value *hi) {
  return ir_build_value(b, ir_op_pack, ir_type_b32, 2, (ir_value *[]){lo, hi}, NULL);
}
static ir_value *laneid(ir_builder *b) { return ir_read_sreg(b, ir_sreg_laneid, 0); }

/* ---- ldmatrix / stmatrix / movmatrix ------------------------------------------ */
/* The address a thread accesses: the row address shuffled from lane src,
 * plus byte (a u32), in the address operand's width. */
static ir_value *row_address(ir_builder *b, ir_value *addr, ir_value *src, ir_value *byte) {
  ir_value *a = shfl_any(b, addr, src);
  if (ir_type_bits((ir_type)addr->type) == 64) return lower_alu(b, ir_op_add, ir_type_u64, a, lower_zext64(b, byte));
  return add32(b, a, byte);
}

static bool lower_ldst_matrix(ir_builder *b, ir_instr *i, ir_value **out) {
  bool ld = i->op == ir_op_ldmatrix;
  unsigned n = i->mods.vec ? i->mods.vec : 1;
  ir_value *addr = i->src[0], *lane = laneid(b);
  ir_mods mm = {.space = i->mods.space};
  ir_value *quad = shr32(b, lane, 2), *t = and32(b, lane, 3);
  /* non-trans: source row 8j + quad, byte 4t; trans: source rows 8j + 2t + k, byte 2 quad */
  ir_value *byte = i->mods.trans ? shl32(b, quad, 1) : shl32(b, t, 2);
  ir_value *row = i->mods.trans ? shl32(b, t, 1) : quad;
  for (unsigned j = 0; j < n; j++) {
    if (!i->mods.trans) {
      ir_value *a = row_address(b, addr, add32(b, imm(b, 8 * j), row), byte);
      if (ld) out[j] = ir_build_mem(b, ir_op_ld, ir_type_b32, a, i->offset, 0, NULL, 1, &mm)->dst[0];
      else ir_build_mem(b, ir_op_st, ir_type_b32, a, i->offset, 1, &i->src[1 + j], 0, &mm);
      continue;
    }
    ir_value *h[2] = {NULL, NULL};
    if (!ld) unpack16(b, i->src[1 + j], &h[0], &h[1]);
    for (unsigned k = 0; k < 2; k++) {
      ir_value *a = row_address(b, addr, add32(b, imm(b, 8 * j + k), row), byte);
      if (ld) h[k] = ir_build_mem(b, ir_op_ld, ir_type_b16, a, i->offset, 0, NULL, 1, &mm)->dst[0];
      else ir_build_mem(b, ir_op_st, ir_type_b16, a, i->offset, 1, &h[k], 0, &mm);
    }
    if (ld) out[j] = pack16(b, h[0], h[1]);
  }
  return true;
}

static bool lower_movmatrix(ir_builder *b, ir_instr *i, ir_value **out) {
  ir_value *lane = laneid(b);
  /* the half of the source register: row (L >> 2) & 1 of the pair */
  ir_value *sh = shl32(b, and32(b, lane, 4), 2);
  ir_value *base = add32(b, shl32(b, and32(b, lane, 3), 3), shr32(b, lane, 3));
  ir_value *h[2];
  for (unsigned k = 0; k < 2; k++) {
    ir_value *w = shfl32(b, i->src[0], add32(b, base, imm(b, 4 * k)));
    h[k] = and32(b, lower_alu(b, ir_op_shr, ir_type_b32, w, sh), 0xffffu);
  }
  out[0] = lower_alu(b, ir_op_or, ir_type_b32, h[0], shl32(b, h[1], 16));
  return true;
}

/* ---- mma -------------------------------------------------------------------- */
#define MMA_MAX_REGS 4
#define MMA_MAX_WORDS 64   /* 16 A + 32 B shuffled words, 4 C registers */

typedef struct mma_ctx {
  ir_builder *b;
  ir_instr *i;
  const ir_mma_form *f;
  const ir_mma_frag *fa, *fb, *fc;
  ir_type ta, tb, tc, td;
  unsigned na, nb, aper, bper;
  ir_value *lane, *t;
  /* shuffled registers: A by (register, source thread s), B by (register,
   * s, the static part of the column c0) */
  ir_value *ash[MMA_MAX_REGS][4], *bsh[MMA_MAX_REGS][4][2];
  ir_value *aval[16][4], *bval[16][4][2];
  ir_value *bcol[2];        /* 4 (ct t + c0): the first lane holding column ct t + c0 of B */
  ir_value *aown[16], *bown[16];   /* e4m3/e5m2: the thread's own elements, widened before the shuffle */
  /* f16 words already split into their .b16 halves */
  ir_value *word[MMA_MAX_WORDS], *half[MMA_MAX_WORDS][2];
  unsigned nwords;
} mma_ctx;

/* The index of word w in the cache of split words. */
static unsigned split_word(mma_ctx *X, ir_value *w) {
  unsigned k = 0;
  while (k < X->nwords && X->word[k] != w) k++;
  if (k == X->nwords) {
    PW_ASSERT(k < MMA_MAX_WORDS);
    X->word[X->nwords++] = w;
    unpack16(X->b, w, &X->half[k][0], &X->half[k][1]);
  }
  return k;
}

static ir_value *f16_to_f32(ir_builder *b, ir_value *h) {
  return ir_convert(b, ir_type_f32, ir_type_f16, h);
}

/* Byte e of w, an e4m3 or e5m2 (PTX ISA 5.2.5.1: bias 7 / 15, 3 / 2
 * mantissa bits; e4m3 has no infinity and one NaN magnitude 0x7f, e5m2 the
 * IEEE ones), as the f32 of the same value (exact).  Normal: the exponent
 * and mantissa bits shifted into place, the exponent rebiased by one add;
 * subnormal (exponent 0): mantissa * 2^(1 - bias - mbits), a short integer
 * scaled by a power of two, both exact.  A dozen integer ops where
 * cvt.rn.f16x2.e4m3x2 through lower_math is ~80 per byte (cuBLASLt's fp8
 * GEMMs have 64 such conversions per mma). */
ir_value *lower_f8_to_f32(ir_builder *b, ir_type t, ir_value *w, unsigned e) {
  bool e4 = t == ir_type_e4m3;
  unsigned mbits = e4 ? 3 : 2, bias = e4 ? 7 : 15;
  ir_value *byte = and32(b, e ? shr32(b, w, 8 * e) : w, 0xff);
  ir_value *mag = and32(b, byte, 0x7f);
  ir_value *sign = shl32(b, and32(b, byte, 0x80), 24);
  ir_value *norm = add32(b, shl32(b, mag, 23 - mbits), imm(b, (127 - bias) << 23));
  ir_value *m = ir_convert(b, ir_type_f32, ir_type_u32, and32(b, mag, (1u << mbits) - 1), .rnd = IR_RND_RN);
  ir_value *sub = ir_alu2(b, ir_op_mul, ir_type_f32, m, imm(b, (127u + 1 - bias - mbits) << 23), .rnd = IR_RND_RN);
  ir_value *v = lower_selp(b, ir_type_b32, sub, norm, lower_setp(b, IR_CMP_LT, ir_type_u32, mag, imm(b, 1u << mbits)));
  if (e4) {
    v = lower_selp(b, ir_type_b32, imm(b, 0x7fffffffu), v, lower_setp(b, IR_CMP_EQ, ir_type_u32, mag, imm(b, 0x7f)));
  } else {
    v = lower_selp(b, ir_type_b32, imm(b, 0x7f800000u), v, lower_setp(b, IR_CMP_EQ, ir_type_u32, mag, imm(b, 0x7c)));
    v = lower_selp(b, ir_type_b32, imm(b, 0x7fffffffu), v, lower_setp(b, IR_CMP_GT, ir_type_u32, mag, imm(b, 0x7c)));
  }
  return lower_alu(b, ir_op_or, ir_type_b32, v, sign);
}

/* Element e of the 32-bit word w of a fragment of type t, as an f32 (or
 * the word itself for f32/s32): f16 widened by cvt (exact), bf16 and tf32
 * by their bits (a bf16 is the high half of an f32; tf32 keeps its 19
 * bits), e4m3/e5m2 by f8_to_f32. */
static ir_value *elem_f32(mma_ctx *X, ir_type t, ir_value *w, unsigned e) {
  ir_builder *b = X->b;
  switch (t) {
  case ir_type_f16: return f16_to_f32(b, X->half[split_word(X, w)][e]);
  case ir_type_e4m3: case ir_type_e5m2: return lower_f8_to_f32(b, t, w, e);
  case ir_type_bf16: return e ? and32(b, w, 0xffff0000u) : shl32(b, w, 16);
  case ir_type_tf32: return and32(b, w, 0xffffe000u);
  default: return w;
  }
}

static unsigned per_reg(ir_type t) {
  unsigned bits = ir_mma_elem_bits(t);
  return bits >= 32 ? 1 : 32 / bits;
}

/* A register reg of lane 4g + s. */
static ir_value *a_reg(mma_ctx *X, unsigned reg, unsigned s) {
  if (!X->ash[reg][s]) X->ash[reg][s] = shfl_quad(X->b, X->i->src[reg], s);
  return X->ash[reg][s];
}
/* B register reg of lane 4 (ct t + c0) + s. */
static ir_value *b_reg(mma_ctx *X, unsigned reg, unsigned s, unsigned c0) {
  if (!X->bsh[reg][s][c0]) {
    ir_builder *b = X->b;
    if (!X->bcol[c0]) {
      ir_value *col = add32(b, lower_alu(b, ir_op_mul, ir_type_u32, X->t, imm(b, X->fc->ct)), imm(b, c0));
      X->bcol[c0] = shl32(b, col, 2);
    }
    X->bsh[reg][s][c0] = shfl_any(b, X->i->src[X->na + reg], lower_alu(b, ir_op_or, ir_type_b32, X->bcol[c0], imm(b, s)));
  }
  return X->bsh[reg][s][c0];
}

/* e4m3/e5m2 are widened before the shuffle: a thread widens its own 16 (A)
 * and 8 (B) bytes once and shuffles f32s, where widening after the shuffle
 * would widen every byte it receives (128 per m16n8k32): 24 widenings and
 * 128 shuffles instead of 128 and 32, about half the code. */
static bool f8(ir_type t) { return t == ir_type_e4m3 || t == ir_type_e5m2; }

/* The A element (index ia) of the thread's own row group, held by lane 4g + s. */
static ir_value *a_elem(mma_ctx *X, unsigned ia, unsigned s) {
  if (X->aval[ia][s]) return X->aval[ia][s];
  if (f8(X->ta)) {
    if (!X->aown[ia]) X->aown[ia] = elem_f32(X, X->ta, X->i->src[ia / X->aper], ia % X->aper);
    X->aval[ia][s] = shfl_quad(X->b, X->aown[ia], s);
  } else {
    X->aval[ia][s] = elem_f32(X, X->ta, a_reg(X, ia / X->aper, s), ia % X->aper);
  }
  return X->aval[ia][s];
}
static ir_value *b_elem(mma_ctx *X, unsigned ib, unsigned s, unsigned c0) {
  if (X->bval[ib][s][c0]) return X->bval[ib][s][c0];
  if (f8(X->tb)) {
    ir_builder *b = X->b;
    if (!X->bown[ib]) X->bown[ib] = elem_f32(X, X->tb, X->i->src[X->na + ib / X->bper], ib % X->bper);
    if (!X->bcol[c0]) {
      ir_value *col = add32(b, lower_alu(b, ir_op_mul, ir_type_u32, X->t, imm(b, X->fc->ct)), imm(b, c0));
      X->bcol[c0] = shl32(b, col, 2);
    }
    X->bval[ib][s][c0] = shfl32(b, X->bown[ib], lower_alu(b, ir_op_or, ir_type_b32, X->bcol[c0], imm(b, s)));
  } else {
    X->bval[ib][s][c0] = elem_f32(X, X->tb, b_reg(X, ib / X->bper, s, c0), ib % X->bper);
  }
  return X->bval[ib][s][c0];
}

/* Which A element (and source thread s) holds A[g + r0][k]; which B
 * element holds B[k][c]: searched in the layout table. */
static bool find_a(const mma_ctx *X, unsigned r0, unsigned k, unsigned *ia, unsigned *s) {
  for (unsigned e = 0; e < X->fa->nelem; e++)
    for (unsigned ss = 0; ss < 4; ss++)
      if (ir_mma_row0(X->fa, e) == r0 && X->fa->ct * ss + ir_mma_col0(X->fa, e) == k) {
        *ia = e;
        *s = ss;
        return true;
      }
  return false;
}
static bool find_b(const mma_ctx *X, unsigned k, unsigned *ib, unsigned *s) {
  for (unsigned e = 0; e < X->fb->nelem; e++)
    for (unsigned ss = 0; ss < 4; ss++)
      if (X->fb->rt * ss + ir_mma_row0(X->fb, e) == k) {
        *ib = e;
        *s = ss;
        return true;
      }
  return false;
}

/* C element e as the accumulator's starting value (f32, f64 or s32). */
static ir_value *c_elem(mma_ctx *X, unsigned e) {
  unsigned per = per_reg(X->tc);
  ir_value *w = X->i->src[X->na + X->nb + e / per];
  return X->tc == ir_type_f16 ? elem_f32(X, ir_type_f16, w, e % per) : w;
}

static bool lower_mma_op(ir_builder *b, ir_instr *i, ir_value **out, pw_diag *diag) {
  mma_ctx X = {.b = b, .i = i};
  X.f = ir_mma_find(i, NULL);
  X.fa = ir_mma_frag_info((ir_mma_frag_id)X.f->a);
  X.fb = ir_mma_frag_info((ir_mma_frag_id)X.f->b);
  X.fc = ir_mma_frag_info((ir_mma_frag_id)X.f->c);
  X.td = (ir_type)i->type, X.ta = (ir_type)i->type2, X.tb = (ir_type)i->type3, X.tc = (ir_type)i->type4;
  X.na = ir_mma_nregs(X.fa->nelem, X.ta), X.nb = ir_mma_nregs(X.fb->nelem, X.tb);
  X.aper = per_reg(X.ta), X.bper = per_reg(X.tb);
  PW_ASSERT(X.na <= MMA_MAX_REGS && X.nb <= MMA_MAX_REGS && X.fa->nelem <= 16 && X.fb->nelem <= 16);
  X.lane = laneid(b);
  X.t = and32(b, X.lane, 3);
  bool i8 = X.f->cls == IR_MMA_I8, f64 = X.f->cls == IR_MMA_F64;
  /* k outermost, the thread's elements inside: each element's sum is still
   * one chain in k order from C (the emulator's order), but the A and B
   * values of one k are used by the elements that need them and then die.
   * Element-outer order kept every shuffled value of the fragment live
   * across all the chains (128 f32 per m16n8k32), which in cuBLASLt's fp8
   * GEMMs (several mma per loop iteration) made LLVM's greedy register
   * allocator evict for minutes (docs/lowering.md). */
  ir_value *acc[4];
  for (unsigned e = 0; e < X.fc->nelem; e++) {
    PW_ASSERT(ir_mma_col0(X.fc, e) < 2);
    acc[e] = i8 ? imm(b, 0) : c_elem(&X, e);
  }
  for (unsigned k = 0; k < X.f->k; k += i8 ? 4 : 1) {
    for (unsigned e = 0; e < X.fc->nelem; e++) {
      unsigned r0 = ir_mma_row0(X.fc, e), c0 = ir_mma_col0(X.fc, e);
      unsigned ia, sa, ib, sb;
      if (!find_a(&X, r0, k, &ia, &sa) || !find_b(&X, k, &ib, &sb)) {
        lower_error(diag, i, "mma: no fragment element for k = %u (layout table)", k);
        return false;
      }
      if (i8) {
        /* four consecutive k in one register of A and of B (ir_mma.h: col/row = 4t + (i & 3) + ...) */
        PW_ASSERT(ia % 4 == 0 && ib % 4 == 0);
        acc[e] = ir_alu3(b, ir_op_dp4a, ir_type_s32, a_reg(&X, ia / 4, sa), b_reg(&X, ib / 4, sb, c0), acc[e],
                         .signed_a = X.ta == ir_type_s8, .signed_b = X.tb == ir_type_s8);
      } else {
        acc[e] = ir_alu3(b, ir_op_fma, f64 ? ir_type_f64 : ir_type_f32, a_elem(&X, ia, sa), b_elem(&X, ib, sb, c0),
                         acc[e], .rnd = IR_RND_RN);
      }
    }
  }
  if (i8)
    for (unsigned e = 0; e < X.fc->nelem; e++)
      acc[e] = ir_alu2(b, ir_op_add, ir_type_s32, c_elem(&X, e), acc[e], .sat = i->mods.satfinite);
  if (X.td == ir_type_f16) {
    ir_value *h[4];
    for (unsigned e = 0; e < X.fc->nelem; e++) h[e] = ir_convert(b, ir_type_f16, ir_type_f32, acc[e], .rnd = IR_RND_RN);
    for (unsigned j = 0; j < i->ndst; j++) out[j] = pack16(b, h[2 * j], h[2 * j + 1]);
  } else {
    for (unsigned j = 0; j < i->ndst; j++) out[j] = acc[j];
  }
  return true;
}

/* ---- the pass ------------------------------------------------------------- */
static bool want(const ir_instr *i, void *data) {
  (void)data;
  return (ir_op_infos[i->op].flags & IR_F_MATRIX) || is_opaque_wgmma(i);
}

/* Eliminates ldmatrix, stmatrix, movmatrix and mma in the forms it expands
 * (lower_matrix_why: none); the others are reported, here (wgmma.*) or by
 * lower_warps. */
static bool expandable(const ir_instr *i, void *data) {
  (void)data;
  return lower_matrix_why(i) == NULL;
}

const lower_contract lower_mma_contract = {
    .pass = "lower_mma",
    .ops = (const ir_op[]){ir_op_mma, ir_op_ldmatrix, ir_op_stmatrix, ir_op_movmatrix, ir_op_count},
    .form = expandable,
    .preserves = 0,
};

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  mma_state *s = data;
  const char *why = lower_matrix_why(i);
  if (why) {
    /* warp-level ops left here are reported by lower_warps (which owns the
     * rule that none remains); the others (wgmma.*) here */
    if (!(ir_op_infos[i->op].flags & IR_F_WARP)) lower_matrix_error(s->opt->diag, i, s->target, why);
    return false;
  }
  switch ((ir_op)i->op) {
  case ir_op_ldmatrix: case ir_op_stmatrix: return lower_ldst_matrix(b, i, out);
  case ir_op_movmatrix: return lower_movmatrix(b, i, out);
  case ir_op_mma:
    /* AMD's matrix instructions where the target has them (lower_mma_amd.c) */
    if (!s->opt->expand_mma && lower_mma_amd_chained(b, i, out, s->target, &s->chain)) return true;
    return lower_mma_op(b, i, out, s->opt->diag);
  default: return false;
  }
}

bool lower_mma(ir_module *m, const lower_mma_options *opt) {
  lower_mma_options o = opt ? *opt : (lower_mma_options){0};
  mma_state s = {.opt = &o, .target = m->facts.target ? m->facts.target->name : NULL};
  return lower_walk(m, want, lower_instr, &s);
}
