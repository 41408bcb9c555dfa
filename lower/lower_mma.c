/* lower/lower_mma.c: the warp-level matrix instructions as per-thread code
 * (docs/lowering.md, "Warp-level matrix instructions").
 *
 *   ldmatrix.sync.aligned.m8n8.x1/.x2/.x4[.trans]{.shared{::cta}}.b16  (PTX ISA 9.7.14.5.15)
 *   stmatrix.sync.aligned.m8n8.x1/.x2/.x4[.trans]{.shared{::cta}}.b16  (9.7.14.5.16)
 *   movmatrix.sync.aligned.m8n8.trans.b16                              (9.7.14.5.17)
 *   mma.sync.aligned.<shape>.row.col (the forms of ir/ir_mma.h)        (9.7.14.5.14):
 *     m16n8k16/m16n8k8 .f16/.bf16 -> .f32/.f16, m16n8k8/m16n8k4 .tf32 -> .f32,
 *     m16n8k32/m16n8k16 .s8/.u8 -> .s32 (.satfinite), m16n8k32/m16n8k16
 *     .e4m3/.e5m2 -> .f32/.f16, m8n8k4 .f64, m16n8k4/k8/k16 .f64 (sm_90),
 *     m8n8k16 .s8/.u8 and m8n8k32/m16n8k32/m16n8k64 .s4/.u4 -> .s32
 *     (.satfinite), m8n8k128/m16n8k128/m16n8k256 .b1 .and.popc/.xor.popc,
 *     and Volta's m8n8k4 .f16 in every .row/.col pair (lower_mma_m8n8k4; on
 *     MFMA/WMMA targets lower_mma_volta.c first; m8n8k4 .f64 on CDNA's f64
 *     MFMA: lower_mma_f64.c, which keeps this expansion on its other side)
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
 * are shuffled (f8_to_f32, a_elem); so do sm_120a's .kind::f8f6f4 e3m2,
 * e2m3 and e2m1 (f6f4_to_f32: the fp6 value in bits 5..0 of its byte, the
 * fp4 one in bits 5..2, or a nibble of m16n8k64).
 * Block scaling (.kind::mxf8f6f4 / mxf4 / mxf4nvf4, PTX ISA 9.7.14.3): per
 * scale block j, p_j summed as above from 0, then acc += p_j * SF_A * SF_B
 * with the product taken in f64 (exact) and rounded once to f32, the
 * emulator's order (emu/emu_matrix.c); SF_A of the thread's row shuffled
 * from lane 4g + 2 thread-id-a + (row >= 8), SF_B of its column from lane
 * 4n + thread-id-b, the byte byte-id + j (ir/ir_mma.h).
 * are shuffled (f8_to_f32, a_elem).  .s4/.u4: each shuffled register's
 * nibbles widened to bytes (lower_mma_widen4), then dp4a as .s8/.u8.
 * .b1: popc of the and/xor of a shuffled A and B register (32 k each).
 *
 * Correct, not fast: an m16n8k16 is 32 shuffles and 64 fma per thread
 * where the hardware has one instruction, so the forms that have MFMA
 * (gfx90a/gfx942/gfx950) or WMMA (gfx11/gfx12) go there first
 * (lower_mma_amd.c); this expansion is the fallback and the reference.
 *
 * wmma.* reaches here as mma.sync (lower_wmma.c, the pass before).
 * What is not expanded here (sub-byte wmma, mma.sp, wgmma.*, other mma shapes and
 * types such as sm_120's .kind::f8f6f4, other ldmatrix shapes) is reported with the instruction, the
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
  lower_ldm_plan ldm;      /* ldmatrix loaded in AMD's layout (lower_ldm_plan.c) */
  lower_mma_volta_cache volta;   /* the scheme of each m8n8k4 .f16 form (lower_mma_volta) */
  lower_mma_webs *webs;    /* ... and across phis (lower_mma_web.c); NULL: none */
  lower_mma_f64_cache *f64;   /* the f64 mma on the f64 MFMA, for chains (lower_mma_f64.c) */
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
#define MMA_MAX_REGS 8     /* m16n8k16 .f64: 8 A registers */
#define MMA_MAX_WORDS 64   /* 16 A + 32 B shuffled words, 4 C registers */
#define MMA_MAX_ELEMS 32   /* A of m16n8k64 .e2m1 */

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
  /* .s4/.u4: a shuffled register's nibbles widened to bytes, by half */
  ir_value *awide[MMA_MAX_REGS][4][2], *bwide[MMA_MAX_REGS][4][2][2];
  ir_value *aval[MMA_MAX_ELEMS][4], *bval[MMA_MAX_ELEMS][4][2];
  ir_value *bcol[2];        /* 4 (ct t + c0): the first lane holding column ct t + c0 of B */
  ir_value *aown[MMA_MAX_ELEMS], *bown[MMA_MAX_ELEMS];   /* e4m3/e5m2: the thread's own elements, widened before the shuffle */
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

/* sm_120a's fp6/fp4 (PTX ISA 5.2.5.x, the OCP MX formats: no infinity, no
 * NaN): element e of w, in its byte's bits 5..0 (e3m2, e2m3) or 5..2
 * (e2m1, .kind::f8f6f4), or nibble e (packed e2m1, m16n8k64), as the bits
 * of the f32 of the same value (exact), as f8_to_f32: normal values by
 * shifting the exponent and mantissa into place and rebiasing, subnormal
 * ones as mantissa * 2^(1 - bias - mbits). */
static ir_value *f6f4_to_f32(ir_builder *b, ir_type t, ir_value *w, unsigned e, bool packed) {
  unsigned mbits = t == ir_type_e3m2 ? 2 : t == ir_type_e2m3 ? 3 : 1, bias = t == ir_type_e3m2 ? 3 : 1;
  unsigned width = t == ir_type_e2m1 ? 4 : 6;
  unsigned pos = packed ? 4 * e : 8 * e + (t == ir_type_e2m1 ? 2 : 0);
  ir_value *v = and32(b, pos ? shr32(b, w, pos) : w, (1u << width) - 1);
  ir_value *mag = and32(b, v, (1u << (width - 1)) - 1);
  ir_value *sign = shl32(b, and32(b, v, 1u << (width - 1)), 32 - width);
  ir_value *norm = add32(b, shl32(b, mag, 23 - mbits), imm(b, (127 - bias) << 23));
  ir_value *m = ir_convert(b, ir_type_f32, ir_type_u32, and32(b, mag, (1u << mbits) - 1), .rnd = IR_RND_RN);
  ir_value *sub = ir_alu2(b, ir_op_mul, ir_type_f32, m, imm(b, (127u + 1 - bias - mbits) << 23), .rnd = IR_RND_RN);
  v = lower_selp(b, ir_type_b32, sub, norm, lower_setp(b, IR_CMP_LT, ir_type_u32, mag, imm(b, 1u << mbits)));
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
  case ir_type_e3m2: case ir_type_e2m3: case ir_type_e2m1: return f6f4_to_f32(b, t, w, e, X->f->cls == IR_MMA_F4);
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
static bool f8(ir_type t) {
  return t == ir_type_e4m3 || t == ir_type_e5m2 || t == ir_type_e3m2 || t == ir_type_e2m3 || t == ir_type_e2m1;
}

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

/* A scale selector as a u32 (an immediate, or a .b16/.b32 register). */
static ir_value *selector(ir_builder *b, ir_value *v) {
  uint64_t c;
  if (lower_const_through_copies(v, &c)) return imm(b, (uint32_t)c);
  if (ir_type_bits((ir_type)v->type) == 16) return ir_convert(b, ir_type_u32, ir_type_u16, v);
  return v;
}
/* Byte j of a scale word shifted down: w >> 8 ((byte-id + j) & 3), & 0xff. */
static ir_value *scale_byte(ir_builder *b, ir_value *w, ir_value *bid_op, unsigned j) {
  ir_value *bid = add32(b, selector(b, bid_op), imm(b, j));
  ir_value *sh = shl32(b, and32(b, bid, 3), 3);
  return and32(b, lower_alu(b, ir_op_shr, ir_type_b32, w, sh), 0xff);
}
/* A scale factor's byte as an f64: ue8m0 2^(e - 127), NaN for 0xff, built
 * as bits; ue4m3 through f8_to_f32 (the low 7 bits as e4m3). */
static ir_value *scale_f64(ir_builder *b, ir_type st, ir_value *byte) {
  if (st == ir_type_ue4m3)
    return ir_convert(b, ir_type_f64, ir_type_f32, lower_f8_to_f32(b, ir_type_e4m3, and32(b, byte, 0x7f), 0));
  ir_value *hi = shl32(b, add32(b, byte, imm(b, 1023 - 127)), 20);
  hi = lower_selp(b, ir_type_b32, imm(b, 0x7ff80000u), hi, lower_setp(b, IR_CMP_EQ, ir_type_u32, byte, imm(b, 0xff)));
  return ir_build_value(b, ir_op_pack, ir_type_b64, 2, (ir_value *[]){imm(b, 0), hi}, NULL);
}
/* The first scale operand of a block-scaled mma (after A, B and C). */
static unsigned scale_first(const ir_instr *i) {
  const ir_mma_form *f = ir_mma_find(i, NULL);
  const ir_mma_frag *fa = ir_mma_frag_info((ir_mma_frag_id)f->a), *fb = ir_mma_frag_info((ir_mma_frag_id)f->b);
  return ir_mma_ab_nregs(f, fa->nelem, (ir_type)i->type2) + ir_mma_ab_nregs(f, fb->nelem, (ir_type)i->type3) +
         ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->c)->nelem, (ir_type)i->type4);
}

ir_value *lower_mma_scale_term(ir_builder *b, const ir_instr *i, lower_mma_scale_words *sw, ir_value *p, unsigned e,
                               unsigned j) {
  const ir_mma_frag *fc = ir_mma_frag_info(IR_MMA_FRAG_C_M16N8);
  unsigned r0 = ir_mma_row0(fc, e), c0 = ir_mma_col0(fc, e), s0 = scale_first(i);
  ir_type st = ir_mma_scale_type(i->mods.mmakind);
  if (!sw->lane) sw->lane = laneid(b);
  if (!sw->a[r0 >> 3]) {   /* SF_A: lane 4g + 2 (thread-id-a & 1) + (row >= 8) */
    ir_value *tida = shl32(b, and32(b, selector(b, i->src[s0 + 2]), 1), 1);
    ir_value *la = lower_alu(b, ir_op_or, ir_type_b32, and32(b, sw->lane, 0x1c), add32(b, tida, imm(b, r0 >> 3)));
    sw->a[r0 >> 3] = shfl32(b, i->src[s0], la);
  }
  if (!sw->b[c0]) {   /* SF_B: lane 4 (2t + c0) + (thread-id-b & 3) */
    ir_value *col = add32(b, shl32(b, and32(b, sw->lane, 3), 1), imm(b, c0));
    ir_value *lb = add32(b, shl32(b, col, 2), and32(b, selector(b, i->src[s0 + 5]), 3));
    sw->b[c0] = shfl32(b, i->src[s0 + 3], lb);
  }
  ir_value **s = &sw->sab[r0 >> 3][c0][j & 3];
  if (!*s) {
    ir_value *sa = scale_f64(b, st, scale_byte(b, sw->a[r0 >> 3], i->src[s0 + 1], j));
    ir_value *sb = scale_f64(b, st, scale_byte(b, sw->b[c0], i->src[s0 + 4], j));
    *s = ir_alu2(b, ir_op_mul, ir_type_f64, sa, sb, .rnd = IR_RND_RN);
  }
  ir_value *p64 = ir_convert(b, ir_type_f64, ir_type_f32, p);
  ir_value *t = ir_alu2(b, ir_op_mul, ir_type_f64, p64, *s, .rnd = IR_RND_RN);
  return ir_convert(b, ir_type_f32, ir_type_f64, t, .rnd = IR_RND_RN);
}

/* Nibbles 4h .. 4h + 3 of w (.s4 or .u4 elements, low first) as four
 * bytes (.s8 or .u8, the same values): spread to bytes by two
 * shift-or-mask steps, then for .s4 bit 3 of each nibble copied into the
 * byte's high four bits (x | (x >> 3 & 1) * 0xf0 per byte: no carry
 * between bytes).  Exact; lets dp4a and the s8 routes take .s4/.u4. */
static ir_value *lower_mma_widen4(ir_builder *b, ir_value *w, unsigned h, bool sgn) {
  ir_value *t = and32(b, h ? shr32(b, w, 16) : w, 0xffffu);
  t = and32(b, lower_alu(b, ir_op_or, ir_type_b32, t, shl32(b, t, 8)), 0x00ff00ffu);
  t = and32(b, lower_alu(b, ir_op_or, ir_type_b32, t, shl32(b, t, 4)), 0x0f0f0f0fu);
  if (!sgn) return t;
  ir_value *s = lower_alu(b, ir_op_mul, ir_type_u32, and32(b, shr32(b, t, 3), 0x01010101u), imm(b, 0xf0));
  return lower_alu(b, ir_op_or, ir_type_b32, t, s);
}

static ir_value *a_wide(mma_ctx *X, unsigned reg, unsigned s, unsigned h) {
  if (!X->awide[reg][s][h]) X->awide[reg][s][h] = lower_mma_widen4(X->b, a_reg(X, reg, s), h, X->ta == ir_type_s4);
  return X->awide[reg][s][h];
}
static ir_value *b_wide(mma_ctx *X, unsigned reg, unsigned s, unsigned c0, unsigned h) {
  if (!X->bwide[reg][s][c0][h])
    X->bwide[reg][s][c0][h] = lower_mma_widen4(X->b, b_reg(X, reg, s, c0), h, X->tb == ir_type_s4);
  return X->bwide[reg][s][c0][h];
}

static bool lower_mma_op(ir_builder *b, ir_instr *i, ir_value **out, pw_diag *diag) {
  mma_ctx X = {.b = b, .i = i};
  X.f = ir_mma_find(i, NULL);
  X.fa = ir_mma_frag_info((ir_mma_frag_id)X.f->a);
  X.fb = ir_mma_frag_info((ir_mma_frag_id)X.f->b);
  X.fc = ir_mma_frag_info((ir_mma_frag_id)X.f->c);
  X.td = (ir_type)i->type, X.ta = (ir_type)i->type2, X.tb = (ir_type)i->type3, X.tc = (ir_type)i->type4;
  X.na = ir_mma_ab_nregs(X.f, X.fa->nelem, X.ta), X.nb = ir_mma_ab_nregs(X.f, X.fb->nelem, X.tb);
  X.aper = X.f->cls == IR_MMA_F4 ? 8 : per_reg(X.ta), X.bper = X.f->cls == IR_MMA_F4 ? 8 : per_reg(X.tb);
  bool i8 = X.f->cls == IR_MMA_I8, f64 = X.f->cls == IR_MMA_F64, i4 = X.f->cls == IR_MMA_I4, b1 = X.f->cls == IR_MMA_B1;
  /* aval/bval (f16/tf32/f8/f4/f64 elements) hold MMA_MAX_ELEMS; i4 and b1 go by register */
  PW_ASSERT(X.na <= MMA_MAX_REGS && X.nb <= MMA_MAX_REGS &&
            ((X.fa->nelem <= MMA_MAX_ELEMS && X.fb->nelem <= MMA_MAX_ELEMS) || i4 || b1));
  X.lane = laneid(b);
  X.t = and32(b, X.lane, 3);
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
    acc[e] = i8 || i4 || b1 ? imm(b, 0) : c_elem(&X, e);
  }
  unsigned nblk = ir_mma_scale_vec(i->mods.mmakind), bk = nblk ? X.f->k / nblk : 0;
  ir_value *part[4];   /* block scaling: the block's sum, from 0 */
  lower_mma_scale_words sw = {.lane = X.lane};
  for (unsigned e = 0; e < X.fc->nelem && nblk; e++) part[e] = imm(b, 0);
  /* .s8/.u8 and (widened) .s4/.u4: four k per dp4a; .b1: a register's 32 k per popc */
  for (unsigned k = 0; k < X.f->k; k += i8 || i4 ? 4 : b1 ? 32 : 1) {
    for (unsigned e = 0; e < X.fc->nelem; e++) {
      unsigned r0 = ir_mma_row0(X.fc, e), c0 = ir_mma_col0(X.fc, e);
      unsigned ia, sa, ib, sb;
      if (!find_a(&X, r0, k, &ia, &sa) || !find_b(&X, k, &ib, &sb)) {
        lower_error(diag, i, "mma: no fragment element for k = %u (layout table)", k);
        return false;
      }
      if (b1) {
        /* .and.popc / .xor.popc (PTX ISA 9.7.14.5.14): 32 k at once,
         * register ia / 32 of A and ib / 32 of B (ir_mma.h: col/row 32t + (i & 31) + ...) */
        PW_ASSERT(ia % 32 == 0 && ib % 32 == 0);
        ir_value *ab = lower_alu(b, i->mods.boolop == IR_BOOL_XOR ? ir_op_xor : ir_op_and, ir_type_b32,
                                 a_reg(&X, ia / 32, sa), b_reg(&X, ib / 32, sb, c0));
        acc[e] = lower_alu(b, ir_op_add, ir_type_u32, acc[e], ir_alu1(b, ir_op_popc, ir_type_b32, ab));
      } else if (i4) {
        /* eight k per register (col/row 8t + (i & 7) + ...): half (ia % 8) / 4 widened to bytes */
        PW_ASSERT(ia % 4 == 0 && ib % 4 == 0);
        acc[e] = ir_alu3(b, ir_op_dp4a, ir_type_s32, a_wide(&X, ia / 8, sa, (ia % 8) / 4),
                         b_wide(&X, ib / 8, sb, c0, (ib % 8) / 4), acc[e],
                         .signed_a = X.ta == ir_type_s4, .signed_b = X.tb == ir_type_s4);
      } else if (i8) {
        /* four consecutive k in one register of A and of B (ir_mma.h: col/row = 4t + (i & 3) + ...) */
        PW_ASSERT(ia % 4 == 0 && ib % 4 == 0);
        acc[e] = ir_alu3(b, ir_op_dp4a, ir_type_s32, a_reg(&X, ia / 4, sa), b_reg(&X, ib / 4, sb, c0), acc[e],
                         .signed_a = X.ta == ir_type_s8, .signed_b = X.tb == ir_type_s8);
      } else {
        ir_value **sum = nblk ? &part[e] : &acc[e];
        /* .f64's .rz/.rm/.rp: each fma of the chain in that mode */
        *sum = ir_alu3(b, ir_op_fma, f64 ? ir_type_f64 : ir_type_f32, a_elem(&X, ia, sa), b_elem(&X, ib, sb, c0), *sum,
                       .rnd = f64 && i->mods.rnd ? i->mods.rnd : IR_RND_RN);
      }
    }
    if (nblk && (k + 1) % bk == 0) {
      for (unsigned e = 0; e < X.fc->nelem; e++) {
        ir_value *t = lower_mma_scale_term(b, i, &sw, part[e], e, k / bk);
        acc[e] = ir_alu2(b, ir_op_add, ir_type_f32, acc[e], t, .rnd = IR_RND_RN);
        part[e] = imm(b, 0);
      }
    }
  }
  if (i8 || i4 || b1)
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

/* ---- Volta's m8n8k4 .f16 ------------------------------------------------------ */
/* Thread L computes its own eight D elements (ir_mma.h's layouts), each
 * acc = C; acc = fma.rn.f32(A[r][k], B[k][c], acc) for k = 0..3 (f16
 * widened exactly, as the emulator's dot()), D rounded to f16 once.  Every
 * element it needs (A[r][k], B[k][c], and C[r][c] when C's layout is not
 * D's) lies in a lane of its own quad-pair; for each need the source lane,
 * register and half are computed for all 32 lanes from the layout
 * functions and expressed in %laneid bits: the source lane is (L & keep) |
 * const (every need here keeps the quad-pair's bits and replaces or keeps
 * the others), the register and half constants or single lane bits.  One
 * shuffle per distinct (source, register), a select where the register
 * depends on the lane.  For .row A (.col B) with .f16 D the thread's own
 * registers hold its row (column) and no shuffle is built. */
typedef struct vneed {
  uint32_t keep, cst;           /* source lane = (L & keep) | cst */
  int8_t regbit[3];             /* register bit j = lane bit regbit[j], or (-1) bit j of regcst */
  uint8_t regcst;
  int8_t halfbit;               /* half = lane bit halfbit, or (-1) halfcst */
  uint8_t halfcst;
} vneed;

typedef struct vctx {
  ir_builder *b;
  ir_instr *i;
  ir_value *lane;
  struct { unsigned first; uint32_t keep, cst; unsigned reg; ir_value *v; } words[64];
  unsigned nwords;
} vctx;

/* The bits of lane value f(L) (L = 0..31) as lane bits or constants; false if one is neither. */
static bool v_bits(const uint8_t *f, unsigned nbits, int8_t *bit, uint8_t *cst) {
  *cst = 0;
  for (unsigned o = 0; o < nbits; o++) {
    bit[o] = -2;
    for (int q = -1; q < 5 && bit[o] == -2; q++) {
      bool ok = true;
      unsigned v0 = (f[0] >> o) & 1;
      for (unsigned L = 0; L < 32 && ok; L++)
        ok = ((f[L] >> o) & 1) == (q < 0 ? v0 : (L >> q) & 1);
      if (ok) bit[o] = (int8_t)q, *cst |= (uint8_t)(q < 0 ? v0 << o : 0);
    }
    if (bit[o] == -2) return false;
  }
  return true;
}

static bool v_need(const uint8_t *src, const uint8_t *reg, const uint8_t *half, vneed *n) {
  int8_t sb[5];
  uint8_t sc;
  if (!v_bits(src, 5, sb, &sc)) return false;
  n->keep = n->cst = 0;
  for (unsigned o = 0; o < 5; o++) {
    if (sb[o] >= 0 && sb[o] != (int8_t)o) return false;   /* a lane bit moved: not (L & keep) | cst */
    if (sb[o] >= 0) n->keep |= 1u << o;
  }
  n->cst = sc;
  return v_bits(reg, 3, n->regbit, &n->regcst) && v_bits(half, 1, &n->halfbit, &n->halfcst);
}

/* Register reg (operand first + reg) of the lane (L & keep) | cst. */
static ir_value *v_word(vctx *V, unsigned first, const vneed *n, unsigned reg) {
  for (unsigned k = 0; k < V->nwords; k++)
    if (V->words[k].first == first && V->words[k].keep == n->keep && V->words[k].cst == n->cst && V->words[k].reg == reg)
      return V->words[k].v;
  ir_builder *b = V->b;
  ir_value *v = V->i->src[first + reg];
  if (n->keep != 0x1f) {   /* another lane: shuffle (the whole warp takes part) */
    ir_value *src = lower_alu(b, ir_op_or, ir_type_b32, and32(b, V->lane, n->keep), imm(b, n->cst));
    v = shfl32(b, v, src);
  }
  PW_ASSERT(V->nwords < 64);
  V->words[V->nwords].first = first, V->words[V->nwords].keep = n->keep, V->words[V->nwords].cst = n->cst;
  V->words[V->nwords].reg = reg, V->words[V->nwords++].v = v;
  return v;
}

/* The needed element as an f32 (f16 halves widened; f32 C registers as they are). */
static ir_value *v_fetch(vctx *V, unsigned first, bool f16, const vneed *n) {
  ir_builder *b = V->b;
  ir_value *w = NULL;
  for (unsigned r = 0; r < 8; r++) {   /* the registers the lane bits can select */
    bool fits = true;
    ir_value *p = NULL;
    for (unsigned j = 0; j < 3; j++) {
      unsigned bit = (r >> j) & 1;
      if (n->regbit[j] < 0) fits = fits && bit == ((n->regcst >> j) & 1u);
    }
    if (!fits) continue;
    for (unsigned j = 0; j < 3; j++) {
      if (n->regbit[j] < 0) continue;
      ir_value *lb = and32(b, shr32(b, V->lane, (uint32_t)n->regbit[j]), 1);
      ir_value *e = lower_setp(b, IR_CMP_EQ, ir_type_u32, lb, imm(b, (r >> j) & 1));
      p = p ? lower_alu(b, ir_op_and, ir_type_pred, p, e) : e;
    }
    ir_value *v = v_word(V, first, n, r);
    w = !w ? v : lower_selp(b, ir_type_b32, v, w, p);
  }
  if (!f16) return w;
  ir_value *lo, *hi;
  unpack16(b, w, &lo, &hi);
  ir_value *h;
  if (n->halfbit < 0) h = n->halfcst ? hi : lo;
  else {
    ir_value *p = lower_setp(b, IR_CMP_NE, ir_type_u32, and32(b, shr32(b, V->lane, (uint32_t)n->halfbit), 1), imm(b, 0));
    h = lower_selp(b, ir_type_b16, hi, lo, p);
  }
  return f16_to_f32(b, h);
}

static bool lower_mma_m8n8k4(ir_builder *b, ir_instr *i, ir_value **out, pw_diag *diag) {
  vctx V = {.b = b, .i = i, .lane = laneid(b)};
  bool arow = ir_mma_a_row(i), brow = ir_mma_b_row(i);
  bool cf32 = (ir_type)i->type4 == ir_type_f32, df32 = (ir_type)i->type == ir_type_f32;
  ir_value *acc[8];
  for (unsigned e = 0; e < 8; e++) {
    uint8_t src[32], reg[32], half[32];
    vneed n;
    /* C[r][c] of the thread's D element e, from C's layout */
    for (unsigned L = 0; L < 32; L++) {
      unsigned r, c, rr, cc;
      ir_mma_m8n8k4_cd(df32, L, e, &r, &c);
      src[L] = 0xff;
      for (unsigned l2 = 0; l2 < 32 && src[L] == 0xff; l2++)
        for (unsigned e2 = 0; e2 < 8; e2++) {
          ir_mma_m8n8k4_cd(cf32, l2, e2, &rr, &cc);
          if (((l2 >> 2) & 3) == ((L >> 2) & 3) && rr == r && cc == c) {
            src[L] = (uint8_t)l2, reg[L] = (uint8_t)(cf32 ? e2 : e2 / 2), half[L] = (uint8_t)(cf32 ? 0 : e2 % 2);
            break;
          }
        }
    }
    if (!v_need(src, reg, half, &n)) goto fail;
    acc[e] = v_fetch(&V, 4, !cf32, &n);
  }
  for (unsigned k = 0; k < 4; k++)
    for (unsigned e = 0; e < 8; e++) {
      ir_value *ab[2];
      for (unsigned o = 0; o < 2; o++) {
        uint8_t src[32], reg[32], half[32];
        vneed n;
        for (unsigned L = 0; L < 32; L++) {
          unsigned r, c, rr, cc;
          ir_mma_m8n8k4_cd(df32, L, e, &r, &c);
          src[L] = 0xff;
          for (unsigned l2 = 0; l2 < 32 && src[L] == 0xff; l2++)
            for (unsigned e2 = 0; e2 < 4; e2++) {
              ir_mma_m8n8k4_ab(o == 1, o ? brow : arow, l2, e2, &rr, &cc);
              if (((l2 >> 2) & 3) == ((L >> 2) & 3) && (o ? rr == k && cc == c : rr == r && cc == k)) {
                src[L] = (uint8_t)l2, reg[L] = (uint8_t)(e2 / 2), half[L] = (uint8_t)(e2 % 2);
                break;
              }
            }
        }
        if (!v_need(src, reg, half, &n)) goto fail;
        ab[o] = v_fetch(&V, 2 * o, true, &n);
      }
      acc[e] = ir_alu3(b, ir_op_fma, ir_type_f32, ab[0], ab[1], acc[e], .rnd = IR_RND_RN);
    }
  if (df32) {
    for (unsigned e = 0; e < 8; e++) out[e] = acc[e];
  } else {
    for (unsigned j = 0; j < 4; j++)
      out[j] = pack16(b, ir_convert(b, ir_type_f16, ir_type_f32, acc[2 * j], .rnd = IR_RND_RN),
                      ir_convert(b, ir_type_f16, ir_type_f32, acc[2 * j + 1], .rnd = IR_RND_RN));
  }
  return true;
fail:
  lower_error(diag, i, "mma.m8n8k4: a fragment element outside the lane functions (layout table)");
  return false;
}

/* ---- the m8n8k16 and .s4/.u4 forms on the matrix instructions ------------- */
/* mma i with other shape, A/B types, registers and .satfinite: an sm_80
 * .s8/.u8 form that lower_mma_amd takes (a copy of i, not in any block). */
static bool amd_as(ir_builder *b, const ir_instr *i, unsigned shape, ir_type ta, ir_type tb, ir_value **src,
                   unsigned nsrc, bool sat, ir_value **out, const char *target) {
  ir_instr t = *i;
  t.mods.shape = (uint8_t)shape, t.mods.satfinite = sat;
  t.type2 = (uint8_t)ta, t.type3 = (uint8_t)tb;
  t.src = src, t.nsrc = (uint16_t)nsrc, t.ndst = 4;
  return lower_mma_amd(b, &t, out, target);
}
/* A widened .u4 byte is 0..15: the same value read as .s8, which spares
 * lower_i8's second chain for unsigned operands. */
static ir_type as_i8(ir_type t) { return t == ir_type_s4 || t == ir_type_u4 ? ir_type_s8 : t; }

/* Turing's m8n8k16 .s8/.u8 and the .s4/.u4 forms through the .s8/.u8
 * m16n8k16 / m16n8k32 that lower_mma_amd puts on the i8 MFMA or RDNA3's
 * iu8 WMMA, where the target has one; false (nothing built) otherwise.
 *   m8n8k16: m16n8k16 with A's rows 8-15 zero (a1 = 0, c2 = c3 = 0), D's
 *     c0, c1 kept (fragments: PTX ISA 9.7.14.5.3 and 9.7.14.5.9).
 *   .s4/.u4: each nibble widened to a byte of the same value in its own
 *     thread (lower_mma_widen4: exact), k renumbered in A and B alike (D
 *     does not depend on the order of k): a thread's A register (row g or
 *     g + 8, k 8t .. 8t + 7, 9.7.14.5.4/10/11) is .s8 registers lo (k 8t
 *     .. + 3) and hi (8t + 4 .. + 7), which m16n8k32 .s8 (9.7.14.5.10) holds
 *     at k' = 4t .. + 3 (registers 0 / 1: rows g / g + 8) and k' = 16 + 4t ..
 *     (registers 2 / 3); B register b0 likewise as .s8 registers 0 and 1.
 *     m8n8k32: that with rows 8-15 zero; m16n8k32: A {lo a0, lo a1, hi a0,
 *     hi a1}, B {lo b0, hi b0}; m16n8k64: two of those (k 0-31: a0 a1 b0;
 *     k 32-63: a2 a3 b1) chained from C = 0 without the clamp (|sum| <=
 *     64 * 15 * 15: exact), then + C wrapping or (.satfinite) clamped. */
static bool mma_via_s8(ir_builder *b, ir_instr *i, ir_value **out, const char *target) {
  const ir_mma_form *f = ir_mma_find(i, NULL);
  ir_type ta = (ir_type)i->type2, tb = (ir_type)i->type3;
  bool sat = i->mods.satfinite;
  if (!target || !f || !((f->cls == IR_MMA_I8 && f->m == 8) || f->cls == IR_MMA_I4)) return false;
  const ir_mma_form *via = ir_mma_form_of(f->k == 16 ? IR_SHAPE_M16N8K16 : IR_SHAPE_M16N8K32, IR_MMA_I8);
  if (!lower_mma_amd_fits(via, as_i8(ta), target)) return false;
  ir_value *z = imm(b, 0), *d[4];
  if (f->cls == IR_MMA_I8) {   /* m8n8k16 */
    ir_value *src[7] = {i->src[0], z, i->src[1], i->src[2], i->src[3], z, z};
    if (!amd_as(b, i, IR_SHAPE_M16N8K16, ta, tb, src, 7, sat, d, target)) return false;
    out[0] = d[0], out[1] = d[1];
    return true;
  }
  bool m8 = f->m == 8, sa = ta == ir_type_s4, sb = tb == ir_type_s4;
  unsigned na = m8 ? 1 : f->k == 64 ? 4 : 2, nb = f->k == 64 ? 2 : 1, nc = m8 ? 2 : 4;
  ir_value *c[4] = {z, z, z, z};
  for (unsigned e = 0; e < nc; e++) c[e] = i->src[na + nb + e];
  unsigned steps = f->k == 64 ? 2 : 1;
  ir_value *acc[4] = {z, z, z, z};
  for (unsigned h = 0; h < steps; h++) {
    ir_value *a0 = i->src[2 * h], *a1 = m8 ? NULL : i->src[2 * h + 1], *b0 = i->src[na + h];
    ir_value *src[10] = {lower_mma_widen4(b, a0, 0, sa), a1 ? lower_mma_widen4(b, a1, 0, sa) : z,
                         lower_mma_widen4(b, a0, 1, sa), a1 ? lower_mma_widen4(b, a1, 1, sa) : z,
                         lower_mma_widen4(b, b0, 0, sb), lower_mma_widen4(b, b0, 1, sb)};
    for (unsigned e = 0; e < 4; e++) src[6 + e] = steps == 1 ? c[e] : acc[e];
    if (!amd_as(b, i, IR_SHAPE_M16N8K32, as_i8(ta), as_i8(tb), src, 10, steps == 1 && sat, d, target)) return false;
    for (unsigned e = 0; e < 4; e++) acc[e] = d[e];
  }
  for (unsigned e = 0; e < nc; e++)
    out[e] = steps == 1 ? acc[e] : ir_alu2(b, ir_op_add, ir_type_s32, c[e], acc[e], .sat = sat);
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

/* Whether an ldmatrix built some of mma i's A/B registers in AMD's layout. */
static bool ldm_loaded(const lower_ldm_plan *p, const ir_instr *i) {
  ir_value **pre = lower_ldm_pre(p, i);
  for (unsigned k = 0; pre && k < LOWER_LDM_NPRE; k++)
    if (pre[k]) return true;
  return false;
}

/* lower_mma_f64's other side: the expansion */
static bool expand_op(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const mma_state *s = data;
  return lower_mma_op(b, i, out, s->opt->diag);
}

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
  case ir_op_ldmatrix:
    /* straight into the A/B layout of the mma that read it (its results,
     * which nothing else reads, are left undefined) */
    if (lower_mma_amd_ldm_load(b, i, &s->ldm, s->target)) return true;
    if (lower_ldm_users(&s->ldm, i, &(size_t){0})) {   /* the plan's dry run said it fits */
      lower_error(s->opt->diag, i, "internal error: ldmatrix accepted in AMD's layout could not be built");
      return false;
    }
    return lower_ldst_matrix(b, i, out);
  case ir_op_stmatrix: return lower_ldst_matrix(b, i, out);
  case ir_op_movmatrix: return lower_movmatrix(b, i, out);
  case ir_op_mma:
    /* AMD's matrix instructions where the target has them (lower_mma_amd.c) */
    if (ir_mma_is_m8n8k4_f16(i))   /* Volta's: lower_mma_volta.c, the expansion where it has no scheme */
      return (!s->opt->expand_mma && lower_mma_volta(b, i, out, s->target, &s->volta)) || lower_mma_m8n8k4(b, i, out, s->opt->diag);
    if (!s->opt->expand_mma) {
      if (lower_mma_f64(b, i, out, s->target, s->f64, expand_op, s)) return true;   /* m8n8k4 .f64 (lower_mma_f64.c) */
      if (mma_via_s8(b, i, out, s->target)) return true;
      lower_mma_web_before(s->webs, b, i, &s->chain);
      unsigned next = s->chain.next;
      if (lower_mma_amd_chained(b, i, out, s->target, &s->chain)) {
        lower_mma_web_after(s->webs, i, out, &s->chain, next);
        return true;
      }
    }
    if (ldm_loaded(&s->ldm, i)) {   /* lower_ldm_plan's dry run said the scheme takes it */
      lower_error(s->opt->diag, i, "internal error: mma whose ldmatrix was loaded in AMD's layout left the scheme");
      return false;
    }
    return lower_mma_op(b, i, out, s->opt->diag);
  default: return false;
  }
}

bool lower_mma(ir_module *m, const lower_mma_options *opt) {
  lower_mma_options o = opt ? *opt : (lower_mma_options){0};
  mma_state s = {.opt = &o, .target = m->facts.target ? m->facts.target->name : NULL};
  pw_arena scratch;
  pw_arena_init(&scratch);
  scratch.on_oom = m->arena.on_oom;
  if (!o.expand_mma) {
    lower_ldm_plan_build(m, &scratch, s.target, &s.ldm);
    s.webs = lower_mma_webs_begin(m, &scratch, s.target);
    s.f64 = lower_mma_f64_begin(m, &scratch, s.target);
  }
  s.chain.ldm = &s.ldm;
  bool progress = lower_walk(m, want, lower_instr, &s);
  lower_mma_webs_finish(s.webs);
  lower_mma_f64_finish(m, s.f64);
  pw_arena_free(&scratch);
  return progress;
}
