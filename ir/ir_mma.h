/* ir/ir_mma.h: the facts of the warp-level matrix instructions that the
 * emulator runs (emu/emu_matrix.c) and lower/lower_mma.c expands, in one
 * place: which mma.sync forms exist here, and where each element of each
 * fragment lives (PTX ISA 9.7.14.5.x, "Matrix Fragments for mma.mMnNkK").
 *
 * A fragment's element i in the thread with %laneid L, where
 *     g = L >> 2 (groupID), t = L & 3 (threadID_in_group),
 * is the matrix element at
 *     row = rg*g + rt*t + (i & rm) + ((i >> rs) & 1) * rx
 *     col = cg*g + ct*t + (i & cm) + ((i >> cs) & 1) * cx
 * (every layout of the forms below has that shape; the formulas are the
 * ISA's, e.g. m16n8k16 A: row = g for a0,a1,a4,a5 and g + 8 otherwise,
 * col = 2t + (i & 1), + 8 for i >= 4).  Elements are packed into .b32
 * registers low to high (two f16/bf16, four s8/u8, one tf32/f32/s32); an
 * f64 element is one .f64 register.
 *
 * Header only: no link dependency between emu/ and lower/.
 */
#ifndef PW_IR_MMA_H
#define PW_IR_MMA_H

#include "ir/ir.h"

/* IR_MMA_FRAG(name, nelem, rg, rt, rm, rs, rx, cg, ct, cm, cs, cx) */
#define IR_MMA_FRAGS(X)                                                                    \
  /* multiplicand A (M x K) */                                                             \
  X(A_F16_K16, 8, 1, 0, 0, 1, 8, 0, 2, 1, 2, 8)   /* m16n8k16 .f16/.bf16 (9.7.14.5.8) */    \
  X(A_F16_K8, 4, 1, 0, 0, 1, 8, 0, 2, 1, 0, 0)    /* m16n8k8 .f16/.bf16 (9.7.14.5.7) */     \
  X(A_TF32_K8, 4, 1, 0, 0, 0, 8, 0, 1, 0, 1, 4)   /* m16n8k8 .tf32: row +8 for a1 a3 */     \
  X(A_TF32_K4, 2, 1, 0, 0, 0, 8, 0, 1, 0, 0, 0)   /* m16n8k4 .tf32 (9.7.14.5.6): a1 row +8 */ \
  X(A_I8_K32, 16, 1, 0, 0, 2, 8, 0, 4, 3, 3, 16)  /* m16n8k32 .s8/.u8 (9.7.14.5.10) */      \
  X(A_I8_K16, 8, 1, 0, 0, 2, 8, 0, 4, 3, 0, 0)    /* m16n8k16 .s8/.u8 (9.7.14.5.9) */       \
  X(A_F64_K4, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0)    /* m8n8k4 .f64 (9.7.14.5.2) */            \
  /* multiplicand B (K x N): the row is the k index */                                     \
  X(B_F16_K16, 4, 0, 2, 1, 1, 8, 1, 0, 0, 0, 0)                                            \
  X(B_F16_K8, 2, 0, 2, 1, 0, 0, 1, 0, 0, 0, 0)                                             \
  X(B_TF32_K8, 2, 0, 1, 0, 0, 4, 1, 0, 0, 0, 0)                                            \
  X(B_TF32_K4, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0)   /* m16n8k4 .tf32: b0 row t, column g */   \
  X(B_I8_K32, 8, 0, 4, 3, 2, 16, 1, 0, 0, 0, 0)                                            \
  X(B_I8_K16, 4, 0, 4, 3, 0, 0, 1, 0, 0, 0, 0)                                             \
  X(B_F64_K4, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0)                                             \
  /* accumulators C and D (M x N) */                                                       \
  X(C_M16N8, 4, 1, 0, 0, 1, 8, 0, 2, 1, 0, 0)     /* c0 c1 row g, c2 c3 row g + 8 */        \
  X(C_M8N8, 2, 1, 0, 0, 0, 0, 0, 2, 1, 0, 0)      /* m8n8k4 .f64 */

/* IR_MMA_FRAG2(name, nelem, rg, rt, rm, rs, rx, cg, ct, cm, cs, cx, rs2, rx2, cs2, cx2):
 * the layouts whose row or column has a second static term,
 *     row += ((i >> rs2) & 1) * rx2,  col += ((i >> cs2) & 1) * cx2
 * (rx2 = 0 / cx2 = 0: none), and the sub-byte and .f64 layouts of the
 * sm_75 / sm_80 / sm_90 forms (PTX ISA 9.7.14.5.3-5.13). */
#define IR_MMA_FRAGS2(X)                                                                              \
  X(A_I8_M8K16, 4, 1, 0, 0, 0, 0, 0, 4, 3, 0, 0, 0, 0, 0, 0)    /* m8n8k16 .s8/.u8: row g, col 4t + i */   \
  X(A_I4_M8K32, 8, 1, 0, 0, 0, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0)    /* m8n8k32 .s4/.u4: row g, col 8t + i */   \
  X(B_I4_K32, 8, 0, 8, 7, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)      /* m8n8k32, m16n8k32 .s4/.u4: row 8t + i */ \
  X(A_I4_K32, 16, 1, 0, 0, 3, 8, 0, 8, 7, 0, 0, 0, 0, 0, 0)     /* m16n8k32 .s4/.u4: a8..a15 row g + 8 */  \
  X(A_I4_K64, 32, 1, 0, 0, 3, 8, 0, 8, 7, 4, 32, 0, 0, 0, 0)    /* m16n8k64 .s4/.u4 (9.7.14.5.11) */      \
  X(B_I4_K64, 16, 0, 8, 7, 3, 32, 1, 0, 0, 0, 0, 0, 0, 0, 0)    /* b8..b15 row 8t + (i & 7) + 32 */       \
  X(A_B1_M8K128, 32, 1, 0, 0, 0, 0, 0, 32, 31, 0, 0, 0, 0, 0, 0) /* m8n8k128 .b1: col 32t + i */          \
  X(B_B1_K128, 32, 0, 32, 31, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0)  /* m8n8k128, m16n8k128 .b1 */              \
  X(A_B1_K128, 64, 1, 0, 0, 5, 8, 0, 32, 31, 0, 0, 0, 0, 0, 0)  /* m16n8k128 .b1: a32..a63 row g + 8 */   \
  X(A_B1_K256, 128, 1, 0, 0, 5, 8, 0, 32, 31, 6, 128, 0, 0, 0, 0) /* m16n8k256 .b1 (9.7.14.5.13) */      \
  X(B_B1_K256, 64, 0, 32, 31, 5, 128, 1, 0, 0, 0, 0, 0, 0, 0, 0)                                         \
  X(A_F64_K16, 8, 1, 0, 0, 0, 8, 0, 1, 0, 1, 4, 0, 0, 2, 8)     /* m16n8k16 .f64: row +8 odd i, col t + 4 (i >> 1) */ \
  X(B_F64_K16, 4, 0, 1, 0, 0, 4, 1, 0, 0, 0, 0, 1, 8, 0, 0)     /* m16n8k16 .f64: row t + 4i */

typedef enum ir_mma_frag_id {
#define IR_MMA_FRAG_ENUM(n, ...) IR_MMA_FRAG_##n,
  IR_MMA_FRAGS(IR_MMA_FRAG_ENUM)
  IR_MMA_FRAGS2(IR_MMA_FRAG_ENUM)
#undef IR_MMA_FRAG_ENUM
  IR_MMA_FRAG_COUNT
} ir_mma_frag_id;

typedef struct ir_mma_frag {
  uint8_t nelem;
  uint8_t rg, rt, rm, rs, rx, cg, ct, cm, cs, cx;
  uint8_t rs2, rx2, cs2, cx2;   /* IR_MMA_FRAGS2's second terms (0 in IR_MMA_FRAGS's rows) */
} ir_mma_frag;

static inline const ir_mma_frag *ir_mma_frag_info(ir_mma_frag_id id) {
  static const ir_mma_frag frags[] = {
#define IR_MMA_FRAG_ROW(n, ne, rg, rt, rm, rs, rx, cg, ct, cm, cs, cx) {ne, rg, rt, rm, rs, rx, cg, ct, cm, cs, cx, 0, 0, 0, 0},
      IR_MMA_FRAGS(IR_MMA_FRAG_ROW)
#undef IR_MMA_FRAG_ROW
#define IR_MMA_FRAG_ROW2(n, ne, rg, rt, rm, rs, rx, cg, ct, cm, cs, cx, rs2, rx2, cs2, cx2) \
  {ne, rg, rt, rm, rs, rx, cg, ct, cm, cs, cx, rs2, rx2, cs2, cx2},
      IR_MMA_FRAGS2(IR_MMA_FRAG_ROW2)
#undef IR_MMA_FRAG_ROW2
  };
  return &frags[id];
}

/* The static parts of element i's coordinates (what g and t do not add). */
static inline unsigned ir_mma_row0(const ir_mma_frag *f, unsigned i) {
  return (i & f->rm) + ((i >> f->rs) & 1u) * f->rx + ((i >> f->rs2) & 1u) * f->rx2;
}
static inline unsigned ir_mma_col0(const ir_mma_frag *f, unsigned i) {
  return (i & f->cm) + ((i >> f->cs) & 1u) * f->cx + ((i >> f->cs2) & 1u) * f->cx2;
}
/* Row and column of element i held by the thread with %laneid lane. */
static inline void ir_mma_elem(const ir_mma_frag *f, unsigned lane, unsigned i, unsigned *row, unsigned *col) {
  unsigned g = lane >> 2, t = lane & 3;
  *row = f->rg * g + f->rt * t + ir_mma_row0(f, i);
  *col = f->cg * g + f->ct * t + ir_mma_col0(f, i);
}

/* The input classes: what A and B hold. */
/* F8: e4m3/e5m2, and with .kind::f8f6f4 (sm_120a) e3m2/e2m3/e2m1 too, each
 * in a byte (9.7.14.5.10: "four .e4m3 / .e5m2 / .e3m2 / .e2m3 / .e2m1
 * elements" per register; the fp6 value in bits 5..0, the fp4 one in bits
 * 5..2, the other bits padding).  F4: .e2m1 packed eight to a register, the
 * block-scaled m16n8k64 (.kind::mxf4, .kind::mxf4nvf4).  I4: .s4/.u4, eight
 * to a register; B1: .b1, 32 to a register. */
typedef enum ir_mma_class {
  IR_MMA_F16, IR_MMA_TF32, IR_MMA_I8, IR_MMA_F8, IR_MMA_F64, IR_MMA_F4, IR_MMA_I4, IR_MMA_B1
} ir_mma_class;

/* IR_MMA_FORM(shape, class, M, N, K, A, B, C): the mma.sync forms this
 * project runs (all .row.col).  The accumulator types: f32 or f16 for the
 * f16/bf16 and e4m3/e5m2 classes, f32 for tf32, s32 for s8/u8, f64 for f64.
 * e4m3/e5m2 fragments have the s8/u8 layouts (9.7.14.5.9-10: "four .e4m3 /
 * .e5m2 elements" per register, the same row and column formulas). */
#define IR_MMA_FORMS(X)                                                  \
  X(M16N8K16, F16, 16, 8, 16, A_F16_K16, B_F16_K16, C_M16N8)             \
  X(M16N8K8, F16, 16, 8, 8, A_F16_K8, B_F16_K8, C_M16N8)                 \
  X(M16N8K8, TF32, 16, 8, 8, A_TF32_K8, B_TF32_K8, C_M16N8)              \
  X(M16N8K4, TF32, 16, 8, 4, A_TF32_K4, B_TF32_K4, C_M16N8)              \
  X(M16N8K32, I8, 16, 8, 32, A_I8_K32, B_I8_K32, C_M16N8)                \
  X(M16N8K16, I8, 16, 8, 16, A_I8_K16, B_I8_K16, C_M16N8)                \
  X(M16N8K32, F8, 16, 8, 32, A_I8_K32, B_I8_K32, C_M16N8)                \
  X(M16N8K16, F8, 16, 8, 16, A_I8_K16, B_I8_K16, C_M16N8)                \
  X(M8N8K4, F64, 8, 8, 4, A_F64_K4, B_F64_K4, C_M8N8)                    \
  /* sm_75 / sm_80: Turing's int8 and the sub-byte forms (9.7.14.5.3-5.5, 5.10-5.13) */ \
  X(M8N8K16, I8, 8, 8, 16, A_I8_M8K16, B_I8_K16, C_M8N8)                 \
  X(M8N8K32, I4, 8, 8, 32, A_I4_M8K32, B_I4_K32, C_M8N8)                 \
  X(M16N8K32, I4, 16, 8, 32, A_I4_K32, B_I4_K32, C_M16N8)                \
  X(M16N8K64, I4, 16, 8, 64, A_I4_K64, B_I4_K64, C_M16N8)                \
  X(M8N8K128, B1, 8, 8, 128, A_B1_M8K128, B_B1_K128, C_M8N8)             \
  X(M16N8K128, B1, 16, 8, 128, A_B1_K128, B_B1_K128, C_M16N8)            \
  X(M16N8K256, B1, 16, 8, 256, A_B1_K256, B_B1_K256, C_M16N8)            \
  /* sm_90's .f64 shapes: the tf32 layouts of k4 and k8 (9.7.14.5.6-7), k16 its own (5.8) */ \
  X(M16N8K4, F64, 16, 8, 4, A_TF32_K4, B_TF32_K4, C_M16N8)               \
  X(M16N8K8, F64, 16, 8, 8, A_TF32_K8, B_TF32_K8, C_M16N8)               \
  X(M16N8K16, F64, 16, 8, 16, A_F64_K16, B_F64_K16, C_M16N8)            \
  /* sm_120a: the block-scaled .e2m1 m16n8k64 (.kind::mxf4, .kind::mxf4nvf4): the .s4 layout (9.7.14.5.12) */ \
  X(M16N8K64, F4, 16, 8, 64, A_I4_K64, B_I4_K64, C_M16N8)

typedef struct ir_mma_form {
  uint8_t shape;        /* ir_shape */
  uint8_t cls;          /* ir_mma_class */
  uint8_t m, n;
  uint16_t k;           /* up to 256 (.b1) */
  uint8_t a, b, c;      /* ir_mma_frag_id */
} ir_mma_form;

/* The class of an A/B element type, or -1. */
static inline int ir_mma_class_of(ir_type t) {
  switch (t) {
  case ir_type_f16: case ir_type_bf16: return IR_MMA_F16;
  case ir_type_tf32: return IR_MMA_TF32;
  case ir_type_s8: case ir_type_u8: return IR_MMA_I8;
  case ir_type_e4m3: case ir_type_e5m2: return IR_MMA_F8;
  case ir_type_e3m2: case ir_type_e2m3: case ir_type_e2m1: return IR_MMA_F8;
  case ir_type_f64: return IR_MMA_F64;
  case ir_type_s4: case ir_type_u4: return IR_MMA_I4;
  case ir_type_b1: return IR_MMA_B1;
  default: return -1;
  }
}

/* Bits of one element of a fragment of type t in its register. */
static inline unsigned ir_mma_elem_bits(ir_type t) {
  switch (t) {
  case ir_type_f16: case ir_type_bf16: return 16;
  case ir_type_s8: case ir_type_u8: case ir_type_e4m3: case ir_type_e5m2: return 8;
  case ir_type_e3m2: case ir_type_e2m3: case ir_type_e2m1: return 8;   /* kind::f8f6f4's containers */
  case ir_type_f64: return 64;
  case ir_type_s4: case ir_type_u4: return 4;
  case ir_type_b1: return 1;
  default: return 32;
  }
}
/* Registers of a fragment of nelem elements of type t. */
static inline unsigned ir_mma_nregs(unsigned nelem, ir_type t) {
  unsigned b = ir_mma_elem_bits(t), per = b >= 32 ? 1 : 32 / b;
  return (nelem + per - 1) / per;
}

/* Bits of one A/B element of form f: 4 for the packed .e2m1 of m16n8k64. */
static inline unsigned ir_mma_ab_bits(const ir_mma_form *f, ir_type t) {
  return f->cls == IR_MMA_F4 ? 4 : ir_mma_elem_bits(t);
}
static inline unsigned ir_mma_ab_nregs(const ir_mma_form *f, unsigned nelem, ir_type t) {
  return f->cls == IR_MMA_F4 ? (nelem * 4 + 31) / 32 : ir_mma_nregs(nelem, t);
}

/* ---- block scaling (PTX ISA 9.7.14.3) ------------------------------------
 * D = (A * scale_A) (B * scale_B) + C: row r of A is cut along K into
 * ir_mma_scale_vec() blocks, block j multiplied by SF_A[r][j]; column n of
 * B likewise by SF_B[j][n].  The operands after C are scale-a-data,
 * byte-id-a, thread-id-a, scale-b-data, byte-id-b, thread-id-b: SF_A[r][j]
 * is byte byte-id-a + j of scale-a-data in the thread of lane
 * ir_mma_sfa_lane(r, thread-id-a), SF_B[j][n] byte byte-id-b + j in lane
 * ir_mma_sfb_lane(n, thread-id-b).  (ptxas 13's ranges: thread-id-a 0..1,
 * thread-id-b 0..3, byte-id 0..3 with 1X, 0 or 2 with 2X, 0 with 4X.  The
 * lanes are those of CUTLASS's SM120 SFALayout/SFBLayout, which the ISA's
 * scale-factor figures draw: row g and g + 8 of A in the pair 4g + 2 tid,
 * 4g + 2 tid + 1; column n of B in 4n + tid.) */
static inline unsigned ir_mma_scale_vec(unsigned kind) {
  switch (kind) {
  case IR_MMAKIND_MXF8F6F4_1X: return 1;
  case IR_MMAKIND_MXF4_2X: case IR_MMAKIND_MXF4NVF4_2X: return 2;
  case IR_MMAKIND_MXF4NVF4_4X: return 4;
  default: return 0;
  }
}
static inline ir_type ir_mma_scale_type(unsigned kind) {
  return kind == IR_MMAKIND_MXF4NVF4_4X ? ir_type_ue4m3 : ir_type_ue8m0;
}
static inline unsigned ir_mma_sfa_lane(unsigned row, unsigned tid) { return 4 * (row & 7) + 2 * (tid & 1) + (row >> 3); }
static inline unsigned ir_mma_sfb_lane(unsigned col, unsigned tid) { return 4 * col + (tid & 3); }

/* The form of shape (ir_shape) for inputs of class cls, or NULL. */
static inline const ir_mma_form *ir_mma_form_of(unsigned shape, int cls) {
  static const ir_mma_form forms[] = {
#define IR_MMA_FORM_ROW(sh, cl, M, N, K, A, B, C) \
  {IR_SHAPE_##sh, IR_MMA_##cl, M, N, K, IR_MMA_FRAG_##A, IR_MMA_FRAG_##B, IR_MMA_FRAG_##C},
      IR_MMA_FORMS(IR_MMA_FORM_ROW)
#undef IR_MMA_FORM_ROW
  };
  for (unsigned k = 0; k < sizeof forms / sizeof forms[0]; k++)
    if (forms[k].shape == shape && (int)forms[k].cls == cls) return &forms[k];
  return NULL;
}

/* Volta's mma.sync.aligned.m8n8k4.{row,col}.{row,col}.{f16,f32}.f16.f16.{f16,f32}
 * (PTX ISA 9.7.14.5.1): four independent 8x8x4 products, one per quad-pair
 * (block q = (L >> 2) & 3: lanes 4q .. 4q + 3 and 16 + 4q .. 16 + 4q + 3).
 * With t = L % 4 and h = L >> 4 (the low or high group), element i of
 *   A .row: row t + 4h, col i          A .col: row i + 4h, col t
 *   B .row: row t, col i + 4h          B .col: row i, col t + 4h
 *   C/D .f16 (c0..c7 in four .f16x2): row t + 4h, col i
 *   C/D .f32 (c0..c7): row (L & 1) + (i & 2) + 4h, col (i & 4) + (L & 2) + (i & 1)
 * A and B: two .f16x2 registers (a0..a3).  Not of the g/t shape of
 * IR_MMA_FRAGS: these functions are the layouts' one statement. */
static inline bool ir_mma_is_m8n8k4_f16(const ir_instr *i) {
  return i->op == ir_op_mma && i->mods.shape == IR_SHAPE_M8N8K4 && (ir_type)i->type2 == ir_type_f16;
}
static inline void ir_mma_m8n8k4_ab(bool is_b, bool row_major, unsigned lane, unsigned i, unsigned *row,
                                    unsigned *col) {
  unsigned t = lane & 3, h = (lane >> 4) & 1, x = t + 4 * h, y = i + 4 * h;
  if (!is_b) *row = row_major ? x : y, *col = row_major ? i : t;
  else *row = row_major ? t : i, *col = row_major ? y : x;
}
static inline void ir_mma_m8n8k4_cd(bool f32, unsigned lane, unsigned i, unsigned *row, unsigned *col) {
  unsigned h = (lane >> 4) & 1;
  if (!f32) *row = (lane & 3) + 4 * h, *col = i;
  else *row = (lane & 1) + (i & 2) + 4 * h, *col = (i & 4) + (lane & 2) + (i & 1);
}
/* A's and B's layout: .row (true) or .col, from mods.layout (A's first). */
static inline bool ir_mma_a_row(const ir_instr *i) {
  return i->mods.layout == IR_LAYOUT_ROW_ROW || i->mods.layout == IR_LAYOUT_ROW_COL;
}
static inline bool ir_mma_b_row(const ir_instr *i) {
  return i->mods.layout == IR_LAYOUT_ROW_ROW || i->mods.layout == IR_LAYOUT_COL_ROW;
}

/* m8n8k4 .f16: the checks of ir_mma_find, and its form (whose fragment
 * ids mean nothing: callers take ir_mma_is_m8n8k4_f16 first). */
static inline const ir_mma_form *ir_mma_find_m8n8k4_f16(const ir_instr *i, const char **w) {
  static const ir_mma_form volta = {IR_SHAPE_M8N8K4, IR_MMA_F16, 8, 8, 4, 0, 0, 0};
  ir_type d = (ir_type)i->type, b = (ir_type)i->type3, c = (ir_type)i->type4;
  unsigned nc = c == ir_type_f32 ? 8 : 4, nd = d == ir_type_f32 ? 8 : 4;
  if (b != ir_type_f16) *w = "the A and B types do not match";
  else if ((d != ir_type_f16 && d != ir_type_f32) || (c != ir_type_f16 && c != ir_type_f32) ||
           (c == ir_type_f32 && d != ir_type_f32))   /* ptxas 13: ".dtype must be '.f32' when .ctype is '.f32'" */
    *w = "the accumulator types do not fit the inputs";
  else if (!i->mods.layout || i->mods.layout == IR_LAYOUT_ROW || i->mods.layout == IR_LAYOUT_COL)
    *w = "the layout is not .row/.col for A and B";
  else if (i->mods.satfinite || i->mods.rnd || i->mods.boolop) *w = "m8n8k4 .f16 takes no .satfinite, rounding or .b1 operation";
  else if (i->nsrc != 2u + 2u + nc || i->ndst != nd) *w = "the register counts do not fit the shape";
  else return &volta;
  return NULL;
}

/* The form of an mma instruction (type = D, type2 = A, type3 = B,
 * type4 = C), or NULL with *why saying what is not supported.  Checks the
 * layouts, the type combination and the operand counts. */
static inline const ir_mma_form *ir_mma_find(const ir_instr *i, const char **why) {
  ir_type d = (ir_type)i->type, a = (ir_type)i->type2, b = (ir_type)i->type3, c = (ir_type)i->type4;
  int cl = ir_mma_class_of(a);
  unsigned kind = i->mods.mmakind, nscale = ir_mma_scale_vec(kind) ? 6 : 0;
  bool f6 = a == ir_type_e3m2 || a == ir_type_e2m3 || a == ir_type_e2m1 || b == ir_type_e3m2 ||
            b == ir_type_e2m3 || b == ir_type_e2m1;
  if (cl == IR_MMA_F8 && i->mods.shape == IR_SHAPE_M16N8K64) cl = IR_MMA_F4;
  const char *w = NULL;
  if (ir_mma_is_m8n8k4_f16(i)) {
    const ir_mma_form *v = ir_mma_find_m8n8k4_f16(i, &w);
    if (why) *why = w;
    return v;
  }
  const ir_mma_form *f = ir_mma_form_of(i->mods.shape, cl);
  if (!f) w = "no form of this shape has these input types";
  else if (kind && cl != IR_MMA_F8 && cl != IR_MMA_F4) w = ".kind needs fp8, fp6 or fp4 inputs";
  else if (cl == IR_MMA_F8 && f6 && !kind) w = "fp6 and fp4 inputs need .kind::f8f6f4";
  else if (kind && (cl == IR_MMA_F4) != (kind >= IR_MMAKIND_MXF4_2X))
    w = "the .kind does not fit the shape (mxf4 and mxf4nvf4 are .m16n8k64 .e2m1, the others .m16n8k32)";
  else if (kind && cl == IR_MMA_F8 && i->mods.shape != IR_SHAPE_M16N8K32) w = ".kind::f8f6f4 and mxf8f6f4 are .m16n8k32 only";
  else if (cl == IR_MMA_F4 && (a != ir_type_e2m1 || b != ir_type_e2m1)) w = "the .m16n8k64 kinds take .e2m1 only";
  else if (cl == IR_MMA_F4 && !kind) w = ".m16n8k64 .e2m1 needs .kind::mxf4 or .kind::mxf4nvf4";
  else if (kind && (f6 || kind != IR_MMAKIND_F8F6F4) && (d != ir_type_f32 || c != ir_type_f32))
    w = "fp6, fp4 and block-scaled inputs need .f32 accumulators";
  else if (i->mods.layout != IR_LAYOUT_ROW_COL) w = "the layout is not .row.col";
  else if ((cl == IR_MMA_I8 || cl == IR_MMA_F8 || cl == IR_MMA_I4) ? ir_mma_class_of(b) != cl : cl != IR_MMA_F4 && b != a)
    w = "the A and B types do not match";
  else if ((cl == IR_MMA_F16 || cl == IR_MMA_F8) &&
           !((d == ir_type_f32 || d == ir_type_f16) && (c == ir_type_f32 || c == ir_type_f16)))
    w = "the accumulator types do not fit the inputs";
  else if (cl == IR_MMA_F16 && a == ir_type_bf16 && (d != ir_type_f32 || c != ir_type_f32))
    w = "bf16 needs .f32 accumulators";
  else if (cl == IR_MMA_TF32 && (d != ir_type_f32 || c != ir_type_f32)) w = "the accumulator types do not fit the inputs";
  else if ((cl == IR_MMA_I8 || cl == IR_MMA_I4 || cl == IR_MMA_B1) && (d != ir_type_s32 || c != ir_type_s32))
    w = "the accumulator types do not fit the inputs";
  else if (cl == IR_MMA_F64 && (d != ir_type_f64 || c != ir_type_f64)) w = "the accumulator types do not fit the inputs";
  else if (i->mods.satfinite && cl != IR_MMA_I8 && cl != IR_MMA_I4) w = ".satfinite needs integer inputs";
  else if (cl == IR_MMA_B1 ? i->mods.boolop != IR_BOOL_AND && i->mods.boolop != IR_BOOL_XOR : i->mods.boolop != 0)
    w = cl == IR_MMA_B1 ? ".b1 needs .and.popc or .xor.popc" : ".and/.xor go with .b1 only";
  /* .f64: .rn, .rz, .rm, .rp (9.7.14.5.14; ptxas 13 takes all four, and
   * wmma.mma's .f64 reaches here with its own) */
  else if (i->mods.rnd && (cl != IR_MMA_F64 || (i->mods.rnd != IR_RND_RN && i->mods.rnd != IR_RND_RZ &&
                                                i->mods.rnd != IR_RND_RM && i->mods.rnd != IR_RND_RP)))
    w = "only .f64 takes a rounding modifier (.rn, .rz, .rm, .rp)";
  else {
    unsigned na = ir_mma_ab_nregs(f, ir_mma_frag_info(f->a)->nelem, a);
    unsigned nb = ir_mma_ab_nregs(f, ir_mma_frag_info(f->b)->nelem, b);
    unsigned nc = ir_mma_nregs(ir_mma_frag_info(f->c)->nelem, c);
    unsigned nd = ir_mma_nregs(ir_mma_frag_info(f->c)->nelem, d);
    if (i->nsrc != na + nb + nc + nscale || i->ndst != nd) w = "the register counts do not fit the shape";
    /* the selectors, where they are immediates: in ptxas's ranges */
    for (unsigned k = 0; !w && nscale && k < 2; k++) {
      const ir_value *bid = i->src[na + nb + nc + 3 * k + 1], *tid = i->src[na + nb + nc + 3 * k + 2];
      unsigned vec = ir_mma_scale_vec(kind);
      if (bid->kind == IR_VAL_CONST && (bid->imm > 3 || bid->imm % vec)) w = "byte-id is out of range for .scale_vec";
      else if (tid->kind == IR_VAL_CONST && tid->imm > (k ? 3u : 1u)) w = "thread-id is out of range";
    }
  }
  if (why) *why = w;
  return w ? NULL : f;
}

#endif
