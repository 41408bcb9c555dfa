/* ir/ir_wmma.h: the facts of wmma.load / wmma.store / wmma.mma (PTX ISA
 * 9.7.14.4 "Warp Level Matrix Multiply-Accumulate Instructions") that the
 * emulator runs unlowered (emu/emu_matrix.c) and lower/lower_wmma.c turns
 * into per-thread loads, stores and mma.sync: which forms exist here, how
 * many registers each fragment has, and the fragment layout.
 *
 * CUDA leaves the layout of a wmma fragment unspecified ("the mapping of
 * matrix elements into fragment storage is unspecified", PTX ISA 9.7.14.4.1
 * and CUDA's nvcuda::wmma): a program may only load, store, run mma and
 * apply the same operation to every element.  The layout chosen here is
 * the one of mma.sync (ir/ir_mma.h), so that wmma.mma becomes mma.sync
 * instructions, which lower_mma then puts on MFMA / WMMA where the target
 * has them and expands per thread elsewhere:
 *
 *   wmma shape   class        mma.sync    tiles (M x N)   transposed
 *   m16n16k16    f16/bf16/s8  m16n8k16    1 x 2
 *   m32n8k16     f16/bf16/s8  m16n8k16    2 x 1
 *   m8n32k16     f16/bf16/s8  m16n8k16    2 x 1           yes
 *   m16n16k8     tf32         m16n8k8     1 x 2
 *   m8n8k4       f64          m8n8k4      1 x 1
 *   m8n8k32      s4/u4        m8n8k32     1 x 1
 *   m8n8k128     b1           m8n8k128    1 x 1
 *
 * A fragment is the mma.sync fragments of its tiles one after another:
 * A of m32n8k16 is the A fragment of rows 0-15 then that of rows 16-31;
 * B of m16n16k16 the B fragment of columns 0-7 then that of columns 8-15;
 * C/D the C fragments of the tiles in row-major tile order.  m8n32k16 has
 * only 8 rows of A, fewer than one m16n8k16 tile: it is computed
 * transposed, D^T (32 x 8) = B^T (32 x 16) A^T (16 x 8) + C^T, an
 * m32n8k16 problem whose A is B^T and whose B is A^T; its wmma A fragment
 * is then the mma B fragment of A^T, its B fragment the two mma A
 * fragments of B^T, its C/D fragments those of C^T.  The products and the
 * k order of each sum are the same as untransposed.
 *
 * Register counts are the ISA's (9.7.14.4.1, "Matrix Fragments for WMMA"):
 * A and B of .f16 have 8 .f16x2 registers whatever the shape, where the
 * matrix has 2, 4 or 8 registers of data per thread (16 x 16 x 2 bytes /
 * 32 threads = 4 registers for m16n16k16): element i >= ndata of such a
 * fragment is a copy of element i % ndata (the loads write the copies,
 * mma reads the first ndata).  Every other fragment holds exactly its
 * share of the matrix: M * K / 32 elements of A, K * N / 32 of B, M * N /
 * 32 of C and D, packed into .b32 registers low to high as mma.sync packs
 * them (two f16/bf16, four s8/u8, one tf32/f32/s32, an f64 per .f64).
 *
 * The sub-byte forms (9.7.14.4.1: A .row and B .col only) are exactly
 * one mma.sync tile with the ISA's register counts (one .b32 of A, one of
 * B, two .s32 of C/D), so their fragments are the mma.sync ones: a
 * thread's 8 .s4/.u4 (32 .b1) elements of A are row g, columns 8t..8t+7
 * (32t..32t+31), those of B column g, rows likewise: one aligned 32-bit
 * word of the row-major A and of the column-major B each, packed as in
 * memory (element i of a register in bits 4i (i) and up: the order of
 * mma.sync's registers and of CUDA's packed storage).  wmma.mma is then
 * mma.sync m8n8k32 / m8n8k128 with its .satfinite or .xor/.and.popc, whose
 * i8 MFMA / iu8 WMMA path (s4/u4) or expansion (b1) applies.
 *
 * wmma.mma's modifiers checked here: .satfinite on the integer forms and
 * (PTX 6.0-6.4) on .f16 inputs; .f64's .rn/.rz/.rm/.rp; .b1's .xor.popc or
 * .and.popc (mods.boolop).
 *
 * Header only (like ir_mma.h): no link dependency between emu/ and lower/.
 */
#ifndef PW_IR_WMMA_H
#define PW_IR_WMMA_H

#include "ir/ir_mma.h"

/* IR_WMMA_FORM(shape, class, M, N, K, mma shape, transposed) */
#define IR_WMMA_FORMS(X)                          \
  X(M16N16K16, F16, 16, 16, 16, M16N8K16, 0)      \
  X(M32N8K16, F16, 32, 8, 16, M16N8K16, 0)        \
  X(M8N32K16, F16, 8, 32, 16, M16N8K16, 1)        \
  X(M16N16K16, I8, 16, 16, 16, M16N8K16, 0)       \
  X(M32N8K16, I8, 32, 8, 16, M16N8K16, 0)         \
  X(M8N32K16, I8, 8, 32, 16, M16N8K16, 1)         \
  X(M16N16K8, TF32, 16, 16, 8, M16N8K8, 0)        \
  X(M8N8K4, F64, 8, 8, 4, M8N8K4, 0)              \
  X(M8N8K32, I4, 8, 8, 32, M8N8K32, 0)           \
  X(M8N8K128, B1, 8, 8, 128, M8N8K128, 0)

typedef struct ir_wmma_form {
  uint8_t shape, cls;      /* ir_shape, ir_mma_class */
  uint8_t m, n, k;
  uint8_t mma_shape;       /* ir_shape of the mma.sync tiles */
  uint8_t transposed;
  const ir_mma_form *mma;  /* the mma.sync form of a tile */
  uint8_t tiles_m, tiles_n; /* tiles of the mma problem (transposed: of D^T) */
} ir_wmma_form;

/* The form of shape for inputs of class cls into *out; false if none.
 * (By value: no table of pointers to fill, no state.) */
static inline bool ir_wmma_form_of(unsigned shape, int cls, ir_wmma_form *out) {
  static const struct { uint8_t shape, cls, m, n, k, mma_shape, tr; } rows[] = {
#define IR_WMMA_FORM_ROW(sh, cl, M, N, K, ms, tr) {IR_SHAPE_##sh, IR_MMA_##cl, M, N, K, IR_SHAPE_##ms, tr},
      IR_WMMA_FORMS(IR_WMMA_FORM_ROW)
#undef IR_WMMA_FORM_ROW
  };
  for (unsigned k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    if (rows[k].shape != shape || (int)rows[k].cls != cls) continue;
    const ir_mma_form *mf = ir_mma_form_of(rows[k].mma_shape, rows[k].cls);
    unsigned pm = rows[k].tr ? rows[k].n : rows[k].m, pn = rows[k].tr ? rows[k].m : rows[k].n;
    *out = (ir_wmma_form){rows[k].shape, rows[k].cls, rows[k].m, rows[k].n, rows[k].k, rows[k].mma_shape, rows[k].tr,
                          mf, (uint8_t)(pm / mf->m), (uint8_t)(pn / mf->n)};
    return true;
  }
  return false;
}

/* The class of a fragment of element type t loaded or stored with frag
 * (ir_frag) at wmma shape, or -1: A and B by their type, C and D by the
 * shape and type (f16/f32 at m16n16k8 belong to tf32, s32 to s8/u8, or
 * to s4/u4 at m8n8k32 and b1 at m8n8k128). */
static inline int ir_wmma_class(unsigned shape, unsigned frag, ir_type t) {
  if (frag == IR_FRAG_A || frag == IR_FRAG_B) return t == ir_type_f32 || t == ir_type_s32 ? -1 : ir_mma_class_of(t);
  switch (t) {
  case ir_type_s32: return shape == IR_SHAPE_M8N8K32 ? IR_MMA_I4 : shape == IR_SHAPE_M8N8K128 ? IR_MMA_B1 : IR_MMA_I8;
  case ir_type_f64: return IR_MMA_F64;
  case ir_type_f32: return shape == IR_SHAPE_M16N16K8 ? IR_MMA_TF32 : IR_MMA_F16;
  case ir_type_f16: return shape == IR_SHAPE_M16N16K8 ? -1 : IR_MMA_F16;
  default: return -1;
  }
}

/* Elements of the matrix one thread holds (its share, without copies). */
static inline unsigned ir_wmma_ndata(const ir_wmma_form *f, unsigned frag) {
  unsigned rows = frag == IR_FRAG_B ? f->k : f->m, cols = frag == IR_FRAG_A ? f->k : f->n;
  return rows * cols / 32u;
}
/* Registers of the fragment (the ISA's count), elements of type t. */
static inline unsigned ir_wmma_nregs(const ir_wmma_form *f, unsigned frag, ir_type t) {
  if ((frag == IR_FRAG_A || frag == IR_FRAG_B) && t == ir_type_f16) return 8;
  return ir_mma_nregs(ir_wmma_ndata(f, frag), t);
}

/* The matrix element (row, col of A: M x K, B: K x N, C/D: M x N) that
 * element i (< ndata) of the fragment holds in the thread with %laneid
 * lane. */
static inline void ir_wmma_elem(const ir_wmma_form *f, unsigned frag, unsigned lane, unsigned i, unsigned *row,
                                unsigned *col) {
  const ir_mma_form *mf = f->mma;
  const ir_mma_frag *fa = ir_mma_frag_info((ir_mma_frag_id)mf->a), *fb = ir_mma_frag_info((ir_mma_frag_id)mf->b),
                    *fc = ir_mma_frag_info((ir_mma_frag_id)mf->c);
  unsigned r, c, tile;
  bool ab = frag == IR_FRAG_A || frag == IR_FRAG_B;
  /* the mma operand this fragment is: transposed, A is B' and B is A' */
  bool mma_a = frag == IR_FRAG_A ? !f->transposed : frag == IR_FRAG_B ? f->transposed : false;
  if (ab && mma_a) {
    tile = i / fa->nelem;
    ir_mma_elem(fa, lane, i % fa->nelem, &r, &c);
    r += tile * mf->m;                     /* A' (P_M x K): row r, k c */
    if (f->transposed) *row = c, *col = r;   /* B = A'^T */
    else *row = r, *col = c;
  } else if (ab) {
    tile = i / fb->nelem;
    ir_mma_elem(fb, lane, i % fb->nelem, &r, &c);
    c += tile * mf->n;                     /* B' (K x P_N): k r, column c */
    if (f->transposed) *row = c, *col = r;   /* A = B'^T */
    else *row = r, *col = c;
  } else {
    tile = i / fc->nelem;
    ir_mma_elem(fc, lane, i % fc->nelem, &r, &c);
    r += (tile / f->tiles_n) * mf->m;
    c += (tile % f->tiles_n) * mf->n;
    if (f->transposed) *row = c, *col = r;   /* C = C'^T */
    else *row = r, *col = c;
  }
}

/* The stride (in elements) of a fragment stored without one: the matrix's
 * width in the layout's direction (a row of the row-major matrix, a column
 * of the column-major one), the tightly packed tile. */
static inline unsigned ir_wmma_default_stride(const ir_wmma_form *f, unsigned frag, bool row_major) {
  unsigned rows = frag == IR_FRAG_B ? f->k : f->m, cols = frag == IR_FRAG_A ? f->k : f->n;
  return row_major ? cols : rows;
}

/* Types of a wmma.mma (type = D; .f16 forms spell only D and C: type2 = C;
 * the others D, A, B, C). */
typedef struct ir_wmma_types { ir_type d, a, b, c; } ir_wmma_types;
static inline ir_wmma_types ir_wmma_mma_types(const ir_instr *i) {
  if (i->type3 == ir_type_none)
    return (ir_wmma_types){(ir_type)i->type, ir_type_f16, ir_type_f16, (ir_type)i->type2};
  return (ir_wmma_types){(ir_type)i->type, (ir_type)i->type2, (ir_type)i->type3, (ir_type)i->type4};
}

/* The form of a wmma.load, wmma.store or wmma.mma into *out, or false
 * with *why saying what is not supported; *has_stride (load/store)
 * whether the stride operand is there. */
static inline bool ir_wmma_find(const ir_instr *i, ir_wmma_form *out, const char **why, bool *has_stride) {
  const char *w = NULL;
  ir_wmma_form fm;
  const ir_wmma_form *f = NULL;
  if (has_stride) *has_stride = false;
  if (i->op == ir_op_wmma_mma) {
    ir_wmma_types t = ir_wmma_mma_types(i);
    int cl = ir_mma_class_of(t.a);
    f = ir_wmma_form_of(i->mods.shape, cl, &fm) ? &fm : NULL;
    bool sub = cl == IR_MMA_I4 || cl == IR_MMA_B1;
    if (!f) w = "no wmma form of this shape has these input types";
    else if (i->mods.layout < IR_LAYOUT_ROW_ROW) w = "the layouts are not two of .row/.col";
    else if (sub && i->mods.layout != IR_LAYOUT_ROW_COL) w = "the sub-byte forms are .row.col only";
    /* s8 and u8 mix; .s4 and .u4 do not (ptxas 13: "unexpected instruction types") */
    else if (cl == IR_MMA_I8 ? ir_mma_class_of(t.b) != cl : t.b != t.a) w = "the A and B types do not match";
    else if (cl == IR_MMA_F16 && t.a == ir_type_f16 &&
             !((t.d == ir_type_f32 || t.d == ir_type_f16) && (t.c == ir_type_f32 || t.c == ir_type_f16)))
      w = "the accumulator types do not fit the inputs";
    else if (cl == IR_MMA_F16 && t.a == ir_type_bf16 && (t.d != ir_type_f32 || t.c != ir_type_f32))
      w = "bf16 needs .f32 accumulators";
    else if (cl == IR_MMA_TF32 && (t.d != ir_type_f32 || t.c != ir_type_f32)) w = "the accumulator types do not fit the inputs";
    else if ((cl == IR_MMA_I8 || sub) && (t.d != ir_type_s32 || t.c != ir_type_s32))
      w = "the accumulator types do not fit the inputs";
    else if (cl == IR_MMA_F64 && (t.d != ir_type_f64 || t.c != ir_type_f64)) w = "the accumulator types do not fit the inputs";
    /* .satfinite: the integer forms' clamp, and PTX ISA 6.0-6.4's on .f16
     * inputs (ptxas rejects it from PTX 6.5 on; bf16, tf32 and f64 came
     * later and never had it) */
    else if (i->mods.satfinite && cl != IR_MMA_I8 && cl != IR_MMA_I4 && !(cl == IR_MMA_F16 && t.a == ir_type_f16))
      w = ".satfinite needs integer or .f16 inputs";
    else if (cl == IR_MMA_B1 ? i->mods.boolop != IR_BOOL_AND && i->mods.boolop != IR_BOOL_XOR : i->mods.boolop != 0)
      w = cl == IR_MMA_B1 ? ".b1 needs .and.popc or .xor.popc" : ".and/.xor go with .b1 only";
    else if (i->mods.rnd && cl != IR_MMA_F64) w = "only .f64 takes a rounding modifier";
    else if (i->mods.rnd && i->mods.rnd != IR_RND_RN && i->mods.rnd != IR_RND_RZ && i->mods.rnd != IR_RND_RM &&
             i->mods.rnd != IR_RND_RP)
      w = ".f64 takes .rn, .rz, .rm or .rp";
    else if (i->nsrc != ir_wmma_nregs(f, IR_FRAG_A, t.a) + ir_wmma_nregs(f, IR_FRAG_B, t.b) + ir_wmma_nregs(f, IR_FRAG_C, t.c) ||
             i->ndst != ir_wmma_nregs(f, IR_FRAG_C, t.d))
      w = "the register counts do not fit the shape";
  } else {
    bool ld = i->op == ir_op_wmma_load;
    ir_type t = (ir_type)i->type;
    unsigned frag = i->mods.frag;
    int cl = ir_wmma_class(i->mods.shape, frag, t);
    f = cl >= 0 && ir_wmma_form_of(i->mods.shape, cl, &fm) ? &fm : NULL;
    if (!f) w = "no wmma form of this shape has this fragment type";
    else if (ld ? frag == IR_FRAG_D : frag != IR_FRAG_D) w = ld ? "wmma.load loads .a, .b or .c" : "wmma.store stores .d";
    else if (i->mods.layout != IR_LAYOUT_ROW && i->mods.layout != IR_LAYOUT_COL) w = "the layout is not .row or .col";
    else if ((cl == IR_MMA_I4 || cl == IR_MMA_B1) && frag == IR_FRAG_A && i->mods.layout != IR_LAYOUT_ROW)
      w = "sub-byte A fragments are .row only";
    else if ((cl == IR_MMA_I4 || cl == IR_MMA_B1) && frag == IR_FRAG_B && i->mods.layout != IR_LAYOUT_COL)
      w = "sub-byte B fragments are .col only";
    else {
      unsigned n = ir_wmma_nregs(f, frag, t), nsrc = ld ? 1 : 1 + n;
      if (ld ? i->ndst != n : i->ndst != 0) w = "the register count does not fit the shape";
      else if (i->nsrc != nsrc && i->nsrc != nsrc + 1) w = "the register count does not fit the shape";
      else if (has_stride) *has_stride = i->nsrc == nsrc + 1;
    }
  }
  if (why) *why = w;
  if (!w && out) *out = fm;
  return !w;
}

#endif
