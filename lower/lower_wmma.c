/* lower/lower_wmma.c: wmma.load, wmma.store and wmma.mma (PTX ISA 9.7.14.4,
 * "Warp Level Matrix Multiply-Accumulate Instructions") as per-thread loads
 * and stores and mma.sync instructions (docs/lowering.md, "Matrix
 * instructions").
 *
 *   wmma.load.{a,b,c}.sync.aligned.{row,col}.shape{.space}.type r, [p]{, stride}
 *   wmma.store.d.sync.aligned.{row,col}.shape{.space}.type [p], r{, stride}
 *   wmma.mma.sync.aligned.alayout.blayout.shape.dtype{.atype.btype}.ctype d, a, b, c
 *   shapes and types: m16n16k16 / m32n8k16 / m8n32k16 .f16 (-> .f16/.f32,
 *   .satfinite up to PTX 6.4), .bf16 (-> .f32), .s8/.u8 (-> .s32,
 *   .satfinite); m16n16k8 .tf32 (-> .f32); m8n8k4 .f64 (.rn/.rz/.rm/.rp);
 *   m8n8k32 .s4/.u4 (-> .s32, .satfinite) and m8n8k128 .b1 (.xor/.and.popc),
 *   A .row and B .col only
 *
 * CUDA does not specify which element of the matrix each register of a
 * fragment holds; ptxwave's layout (ir/ir_wmma.h) is the mma.sync layout of
 * the m16n8k16 / m16n8k8 / m8n8k4 tiles the wmma shape splits into, so
 *
 *   - wmma.load: each thread loads its own elements, no other thread's:
 *     element (row, col) of a .row matrix at row * stride + col elements
 *     from the address, of a .col matrix at col * stride + row.  Both
 *     coordinates are affine in g = %laneid >> 2 and t = %laneid & 3, so
 *     the thread's offset is computed once and each element adds a
 *     constant (times the stride).  Two .f16/.bf16 (four .s8/.u8) elements
 *     of one register that are adjacent in memory are one .b32 load: the
 *     ISA requires a 256-bit aligned address and a stride of a multiple of
 *     16 bytes, and the pairs start at even columns, so it is aligned.
 *     Otherwise the elements are loaded one by one and packed.  The .f16
 *     A/B registers past the data are copies (ir_wmma.h).  Sub-byte
 *     (.s4/.u4/.b1) registers are always one aligned word (8 or 32
 *     elements of one row of A / column of B), the stride in elements
 *     turned into bytes as stride * bits / 8.
 *   - wmma.store: the same addresses, stores.
 *   - wmma.mma: one mma.sync.m16n8k16 (m16n8k8 tf32, m8n8k4 f64) per
 *     tile: m16n16k16 and m32n8k16 are two tiles, m8n32k16 the same two
 *     of D^T = B^T A^T + C^T (its fragments are laid out transposed for
 *     that), m8n8k4, m8n8k32 and m8n8k128 one (with f64's rounding, the
 *     integer .satfinite and .b1's operation).  The layouts of wmma.mma
 *     only say how the fragments were loaded: the registers hold the same
 *     elements for either, so they play no part here.  .satfinite of the
 *     .f16 forms: after the mma, an infinite element becomes the largest
 *     finite value of its sign (satfinite(), below).
 *
 * lower_mma, the next pass, then puts the mma.sync on MFMA / WMMA where
 * the target has the instruction and expands it per thread elsewhere; no
 * lane exchange is added for wmma itself.  Where the target's instruction
 * takes the whole form and the fragments' web allows it
 * (lower_wmma_web.c), the fragments are instead kept in the instruction's
 * own layout from load to store (below, "fragments in AMD's layout"), and
 * lower_mma_amd's shuffles into and out of it disappear.  Forms not in
 * ir_wmma.h (sub-byte A .col / B .row, .s4 with .u4, .satfinite on
 * bf16/tf32/f64) are left to lower_warps, which reports them with the
 * kernel and the target.
 */
#include "ir/ir_amd_matrix.h"
#include "ir/ir_wmma.h"
#include "lower_internal.h"

typedef struct wmma_state {
  const lower_wmma_options *opt;
  const char *target;      /* the module's target, or NULL (CUDA semantics, pseudo targets) */
  unsigned wave;           /* its wave size */
  lower_wmma_web web;      /* the instructions in AMD's layout (lower_wmma_web.c) */
} wmma_state;

static ir_value *imm(ir_builder *b, uint32_t v) { return lower_imm32(b, v); }
static ir_value *add32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_add, ir_type_u32, x, y); }
static ir_value *mul32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_mul, ir_type_u32, x, y); }

/* v as type t (a bit copy where the types differ: a packed .b32 for a
 * fragment register declared .f32, ...). */
static ir_value *as_type(ir_builder *b, ir_value *v, ir_type t) {
  return (ir_type)v->type == t ? v : ir_alu1(b, ir_op_copy, t, v);
}

/* ---- addresses --------------------------------------------------------------- */
/* Element e's offset in elements from the address is P * stride + Q with
 * P = Pg g + Pt t + P0 and Q = Qg g + Qt t + Q0 (P the row of a .row
 * matrix, the column of a .col one; Q the other). */
typedef struct affine { int g, t, c; } affine;
#define WMMA_MAX_P 32   /* P0 < 32: a row or column of a matrix of at most 32 x 32 */
typedef struct elem_addr { affine p, q; } elem_addr;

static elem_addr elem_affine(const ir_wmma_form *f, unsigned frag, unsigned e, bool row_major) {
  unsigned r0, c0, rg, cg, rt, ct;
  ir_wmma_elem(f, frag, 0, e, &r0, &c0);
  ir_wmma_elem(f, frag, 4, e, &rg, &cg);
  ir_wmma_elem(f, frag, 1, e, &rt, &ct);
  affine row = {(int)rg - (int)r0, (int)rt - (int)r0, (int)r0}, col = {(int)cg - (int)c0, (int)ct - (int)c0, (int)c0};
  return row_major ? (elem_addr){row, col} : (elem_addr){col, row};
}

/* Whether the layout is affine in g and t for every lane (true of every
 * mma.sync layout; checked, not assumed). */
static bool affine_ok(const ir_wmma_form *f, unsigned frag, unsigned ndata, bool row_major) {
  for (unsigned e = 0; e < ndata; e++) {
    elem_addr a = elem_affine(f, frag, e, row_major);
    for (unsigned l = 0; l < 32; l++) {
      unsigned r, c;
      ir_wmma_elem(f, frag, l, e, &r, &c);
      int g = (int)(l >> 2), t = (int)(l & 3);
      int p = a.p.g * g + a.p.t * t + a.p.c, q = a.q.g * g + a.q.t * t + a.q.c;
      if (p != (int)(row_major ? r : c) || q != (int)(row_major ? c : r)) return false;
    }
  }
  return true;
}

typedef struct addr_ctx {
  ir_builder *b;
  ir_instr *i;
  unsigned bits;           /* of one element (4 and 1: .s4/.u4, .b1) */
  ir_value *lane_addr;     /* the address + the thread's part (P's and Q's lane terms) */
  ir_value *stride_bytes;  /* stride * bytes, u32 */
  ir_value *row_addr[WMMA_MAX_P];   /* lane_addr + P0 * stride_bytes, by P0 (built on first use) */
} addr_ctx;

/* x * c for a constant c: folded for 0, 1 and powers of two. */
static ir_value *mul_c(ir_builder *b, ir_value *x, int c) {
  if (c == 0) return imm(b, 0);
  if (c == 1) return x;
  if (c > 0 && !(c & (c - 1))) return lower_alu(b, ir_op_shl, ir_type_b32, x, imm(b, (uint32_t)__builtin_ctz((unsigned)c)));
  return mul32(b, x, imm(b, (uint32_t)c));
}

/* base + the u32 offset off, in the address's width. */
static ir_value *add_offset(ir_builder *b, ir_value *base, ir_value *off) {
  if (ir_type_bits((ir_type)base->type) == 64) return lower_alu(b, ir_op_add, ir_type_u64, base, lower_zext64(b, off));
  return add32(b, base, off);
}

/* The address of element e (its affine form a) as a register and the
 * constant Q0 * bytes the access adds to the instruction's offset. */
static ir_value *elem_address(addr_ctx *A, elem_addr a, int64_t *disp) {
  ir_builder *b = A->b;
  PW_ASSERT(a.p.c >= 0 && a.p.c < WMMA_MAX_P && a.q.c >= 0);
  if (!A->row_addr[a.p.c])
    A->row_addr[a.p.c] = a.p.c ? add_offset(b, A->lane_addr, mul_c(b, A->stride_bytes, a.p.c)) : A->lane_addr;
  *disp = A->i->offset + (int64_t)a.q.c * A->bits / 8;
  return A->row_addr[a.p.c];
}

static bool addr_init(addr_ctx *A, ir_builder *b, ir_instr *i, const ir_wmma_form *f, unsigned frag, unsigned ndata,
                      bool has_stride, unsigned stride_at, unsigned bits) {
  bool row_major = i->mods.layout == IR_LAYOUT_ROW;
  if (!affine_ok(f, frag, ndata, row_major)) return false;
  elem_addr a0 = elem_affine(f, frag, 0, row_major);
  for (unsigned e = 1; e < ndata; e++) {
    elem_addr a = elem_affine(f, frag, e, row_major);
    if (a.p.g != a0.p.g || a.p.t != a0.p.t || a.q.g != a0.q.g || a.q.t != a0.q.t) return false;
    if (bits < 8 && e % (32 / bits) == 0 && (a.q.c * (int)bits) % 8) return false;   /* a register's first */
  }
  /* sub-byte elements are accessed a register at a time (lower_load): the
   * lane's part of Q must fall on a byte too */
  if (bits < 8 && ((a0.q.g * (int)bits) % 8 || (a0.q.t * (int)bits) % 8)) return false;
  *A = (addr_ctx){.b = b, .i = i, .bits = bits};
  ir_value *lane = ir_read_sreg(b, ir_sreg_laneid, 0);
  ir_value *g = lower_alu(b, ir_op_shr, ir_type_b32, lane, imm(b, 2));
  ir_value *t = lower_alu(b, ir_op_and, ir_type_b32, lane, imm(b, 3));
  ir_value *stride = has_stride ? i->src[stride_at] : imm(b, ir_wmma_default_stride(f, frag, row_major));
  /* a sub-byte stride in elements: a multiple of 32 (.s4/.u4) or 128 (.b1)
   * elements by the ISA, 16 bytes, so stride * bits / 8 is exact */
  A->stride_bytes = bits >= 8 ? mul_c(b, stride, (int)bits / 8)
                              : lower_alu(b, ir_op_shr, ir_type_b32, mul_c(b, stride, (int)bits), imm(b, 3));
  /* (Pg g + Pt t) * stride_bytes + (Qg g + Qt t) * bits / 8 */
  ir_value *lp = add32(b, mul_c(b, g, a0.p.g), mul_c(b, t, a0.p.t));
  ir_value *lq = add32(b, mul_c(b, g, a0.q.g * (int)bits / 8), mul_c(b, t, a0.q.t * (int)bits / 8));
  A->lane_addr = add_offset(b, i->src[0], add32(b, mul32(b, lp, A->stride_bytes), lq));
  return true;
}

/* Whether the per elements of register j are consecutive in memory (one
 * .b32 access). */
static bool contiguous(const ir_wmma_form *f, unsigned frag, unsigned j, unsigned per, bool row_major) {
  elem_addr a = elem_affine(f, frag, j * per, row_major);
  if (a.q.c % (int)per) return false;
  for (unsigned k = 1; k < per; k++) {
    elem_addr n = elem_affine(f, frag, j * per + k, row_major);
    if (n.p.c != a.p.c || n.q.c != a.q.c + (int)k) return false;
  }
  return true;
}

static ir_type bits_type(unsigned bits) {
  return bits == 8 ? ir_type_b8 : bits == 16 ? ir_type_b16 : bits == 32 ? ir_type_b32 : ir_type_b64;
}

/* ---- wmma.load / wmma.store ------------------------------------------------------ */
static bool lower_load(ir_builder *b, ir_instr *i, const ir_wmma_form *f, bool has_stride, ir_value **out) {
  ir_type t = (ir_type)i->type;
  unsigned frag = i->mods.frag, bits = ir_mma_elem_bits(t), per = bits >= 32 ? 1 : 32 / bits;
  unsigned ndata = ir_wmma_ndata(f, frag), nreg = ir_wmma_nregs(f, frag, t), ndreg = ndata / per;
  bool row_major = i->mods.layout == IR_LAYOUT_ROW;
  addr_ctx A;
  if (!addr_init(&A, b, i, f, frag, ndata, has_stride, 1, bits)) return false;
  ir_mods mm = {.space = i->mods.space};
  ir_value *reg[8];
  for (unsigned j = 0; j < ndreg; j++) {
    if (per == 1 || contiguous(f, frag, j, per, row_major)) {
      int64_t d;
      ir_value *a = elem_address(&A, elem_affine(f, frag, j * per, row_major), &d);
      reg[j] = ir_build_mem(b, ir_op_ld, per == 1 ? (ir_type)i->dst[j]->type : ir_type_b32, a, d, 0, NULL, 1, &mm)->dst[0];
      continue;
    }
    if (bits < 8) return false;   /* sub-byte: one 32-bit word per register (ir_wmma.h), checked */
    ir_value *part[4];
    for (unsigned k = 0; k < per; k++) {
      int64_t d;
      ir_value *a = elem_address(&A, elem_affine(f, frag, j * per + k, row_major), &d);
      part[k] = ir_build_mem(b, ir_op_ld, bits_type(bits), a, d, 0, NULL, 1, &mm)->dst[0];
    }
    reg[j] = ir_build_value(b, ir_op_pack, ir_type_b32, per, part, NULL);
  }
  /* .f16 A/B: the registers past the data are copies of it */
  for (unsigned j = 0; j < nreg; j++) out[j] = as_type(b, reg[j % ndreg], (ir_type)i->dst[j]->type);
  return true;
}

static bool lower_store(ir_builder *b, ir_instr *i, const ir_wmma_form *f, bool has_stride) {
  ir_type t = (ir_type)i->type;
  unsigned bits = ir_mma_elem_bits(t), per = bits >= 32 ? 1 : 32 / bits;
  unsigned ndata = ir_wmma_ndata(f, IR_FRAG_D), nreg = ir_wmma_nregs(f, IR_FRAG_D, t);
  bool row_major = i->mods.layout == IR_LAYOUT_ROW;
  addr_ctx A;
  if (!addr_init(&A, b, i, f, IR_FRAG_D, ndata, has_stride, 1 + nreg, bits)) return false;
  ir_mods mm = {.space = i->mods.space};
  for (unsigned j = 0; j < ndata / per; j++) {
    ir_value *v = i->src[1 + j];
    if (per == 1 || contiguous(f, IR_FRAG_D, j, per, row_major)) {
      int64_t d;
      ir_value *a = elem_address(&A, elem_affine(f, IR_FRAG_D, j * per, row_major), &d);
      ir_build_mem(b, ir_op_st, per == 1 ? (ir_type)v->type : ir_type_b32, a, d, 1, &v, 0, &mm);
      continue;
    }
    ir_type pt[4] = {bits_type(bits), bits_type(bits), bits_type(bits), bits_type(bits)};
    ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, (ir_value *[]){as_type(b, v, ir_type_b32)}, per, pt, NULL);
    for (unsigned k = 0; k < per; k++) {
      int64_t d;
      ir_value *a = elem_address(&A, elem_affine(f, IR_FRAG_D, j * per + k, row_major), &d);
      ir_build_mem(b, ir_op_st, bits_type(bits), a, d, 1, &u->dst[k], 0, &mm);
    }
  }
  return true;
}

/* ---- wmma.mma ------------------------------------------------------------------ */
/* .satfinite of a floating-point wmma.mma (PTX ISA 6.0-6.4, on .f16
 * inputs): an infinite element of D (after D's rounding) becomes the
 * largest finite value of its sign, NaN stays NaN (the emulator's
 * dot_of).  On the bits of register v (one .f32, or two .f16): the
 * infinity's bits minus one are that value. */
static ir_value *satfinite(ir_builder *b, ir_value *v, ir_type td) {
  ir_value *x = as_type(b, v, ir_type_b32);
  unsigned nh = td == ir_type_f16 ? 2 : 1;
  for (unsigned h = 0; h < nh; h++) {
    uint32_t mag = td == ir_type_f16 ? 0x7fffu << (16 * h) : 0x7fffffffu;
    uint32_t inf = td == ir_type_f16 ? 0x7c00u << (16 * h) : 0x7f800000u;
    uint32_t one = td == ir_type_f16 ? 1u << (16 * h) : 1u;
    ir_value *p = lower_setp(b, IR_CMP_EQ, ir_type_b32, lower_alu(b, ir_op_and, ir_type_b32, x, imm(b, mag)), imm(b, inf));
    ir_value *dec = lower_selp(b, ir_type_b32, imm(b, one), imm(b, 0), p);
    /* a half's infinity minus one borrows nothing from the other half */
    x = lower_alu(b, ir_op_sub, ir_type_b32, x, dec);
  }
  return as_type(b, x, (ir_type)v->type);
}

/* One mma.sync per tile (tm, tn) of the mma problem: A' tile tm, B' tile
 * tn, C' and D' tile tm * tiles_n + tn, where A' and B' are wmma's A and B,
 * or B and A transposed (ir_wmma.h). */
static bool lower_mma_tiles(ir_builder *b, ir_instr *i, const ir_wmma_form *f, ir_value **out) {
  ir_wmma_types ty = ir_wmma_mma_types(i);
  const ir_mma_form *mf = f->mma;
  ir_type ta = f->transposed ? ty.b : ty.a, tb = f->transposed ? ty.a : ty.b;
  unsigned na = ir_wmma_nregs(f, IR_FRAG_A, ty.a), nb = ir_wmma_nregs(f, IR_FRAG_B, ty.b);
  unsigned nc = ir_wmma_nregs(f, IR_FRAG_C, ty.c);
  ir_value *const *wa = &i->src[0], *const *wb = &i->src[na], *const *wc = &i->src[na + nb];
  ir_value *const *pa = f->transposed ? wb : wa, *const *pb = f->transposed ? wa : wb;
  unsigned ra = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)mf->a)->nelem, ta);
  unsigned rb = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)mf->b)->nelem, tb);
  unsigned rc = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)mf->c)->nelem, ty.c);
  unsigned rd = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)mf->c)->nelem, ty.d);
  (void)nc;
  /* integer .satfinite and .b1's operation are mma.sync's; f64 keeps its
   * rounding (default .rn); float .satfinite is applied after (below) */
  bool fsat = i->mods.satfinite && mf->cls != IR_MMA_I8 && mf->cls != IR_MMA_I4;
  ir_mods mods = {.sync = 1, .aligned = 1, .shape = mf->shape, .layout = IR_LAYOUT_ROW_COL,
                  .satfinite = i->mods.satfinite && !fsat, .boolop = i->mods.boolop,
                  .rnd = mf->cls == IR_MMA_F64 ? (i->mods.rnd ? i->mods.rnd : IR_RND_RN) : 0};
  for (unsigned tm = 0; tm < f->tiles_m; tm++)
    for (unsigned tn = 0; tn < f->tiles_n; tn++) {
      unsigned tile = tm * f->tiles_n + tn;
      ir_value *src[4 + 4 + 4];
      ir_type dt[4];
      unsigned n = 0;
      for (unsigned k = 0; k < ra; k++) src[n++] = pa[tm * ra + k];
      for (unsigned k = 0; k < rb; k++) src[n++] = pb[tn * rb + k];
      for (unsigned k = 0; k < rc; k++) src[n++] = wc[tile * rc + k];
      for (unsigned k = 0; k < rd; k++) dt[k] = (ir_type)i->dst[tile * rd + k]->type;
      ir_instr *m = ir_build_mma(b, ty.d, ta, tb, ty.c, n, src, rd, dt, &mods);
      for (unsigned k = 0; k < rd; k++) out[tile * rd + k] = fsat ? satfinite(b, m->dst[k], ty.d) : m->dst[k];
    }
  return true;
}


/* ---- fragments in AMD's layout ------------------------------------------------ */
/* Where the target's matrix instruction takes a wmma form whole (one
 * instruction per wmma.mma, every operand fitting the fragment's ISA
 * register count) and the fragment's web allows it (lower_wmma_web.c),
 * the fragments are kept in the instruction's own layout
 * (ir/ir_amd_matrix.h): wmma.load puts each element straight into the
 * register and lane the instruction reads it from, wmma.mma is the
 * instruction, wmma.store stores from its result's layout; no lane
 * exchange anywhere.  Forms: m16n16k16 .f16 (.f32 or .f16 accumulators)
 * on RDNA3 and RDNA4 (v_wmma_f32_16x16x16_f16: A and B 8 registers on
 * RDNA3, 4 + 4 copies on RDNA4, C/D 8 .f32 or 4 .f16x2 holding the
 * instruction's 8 f32 rows in pairs), .bf16 on RDNA4 (4 registers: RDNA3's
 * 8 do not fit the ISA's 4).  The others (m32n8k16 and m8n32k16, whose
 * operands span two instructions; s8 and tf32; wave64 MFMA, whose 4x4x4
 * blocks need 24 operand registers for a 16x16x16 tile where the fragments
 * have 16: docs/lowering.md) keep ptxwave's layout. */

/* The row of the target's matrix instruction for A/B elements ta that
 * takes a whole wmma form f, or -1. */
static int amd_row(const wmma_state *s, const ir_wmma_form *f, ir_type ta) {
  if (!s->target || f->m != 16 || f->n != 16 || f->k != 16 || f->cls != IR_MMA_F16) return -1;
  int row = ir_amx_find(s->target, ta, ir_type_f32, 16, 16, 16);
  if (row < 0) return -1;
  const ir_amx_info *r = ir_amx_info_of((unsigned)row);
  if (r->blocks != 1 || r->wave != s->wave || r->wave != 32) return -1;
  return row;
}

/* Whether fragment frag of type t fits row r: the instruction's registers
 * for it at most the fragment's (f16 accumulators: two per register). */
static bool amd_frag_fits(const ir_amx_info *r, const ir_wmma_form *f, unsigned frag, ir_type t) {
  unsigned n = ir_wmma_nregs(f, frag, t);
  if (frag == IR_FRAG_A) return r->na <= n && r->ta == t;
  if (frag == IR_FRAG_B) return r->nb <= n && r->tb == t;
  if (t == ir_type_f32) return r->nc <= n;
  return t == ir_type_f16 && r->nc <= 2 * n && r->nc % 2 == 0;
}

/* The row whose layout wmma instruction i uses, or -1 (C and D: the f16
 * row's, which every row of the target shares). */
static int amd_row_of(const wmma_state *s, const ir_instr *i, const ir_wmma_form *f) {
  if (i->op == ir_op_wmma_mma) {
    ir_wmma_types ty = ir_wmma_mma_types(i);
    int row = amd_row(s, f, ty.a);
    if (row < 0) return -1;
    const ir_amx_info *r = ir_amx_info_of((unsigned)row);
    bool ok = amd_frag_fits(r, f, IR_FRAG_A, ty.a) && amd_frag_fits(r, f, IR_FRAG_B, ty.b) &&
              amd_frag_fits(r, f, IR_FRAG_C, ty.c) && amd_frag_fits(r, f, IR_FRAG_D, ty.d);
    return ok ? row : -1;
  }
  unsigned frag = i->mods.frag;
  ir_type t = (ir_type)i->type;
  int row = amd_row(s, f, frag == IR_FRAG_A || frag == IR_FRAG_B ? t : ir_type_f16);
  if (row < 0) return -1;
  int f16row = amd_row(s, f, ir_type_f16);
  if (f16row < 0 || ir_amx_info_of((unsigned)f16row)->layout != ir_amx_info_of((unsigned)row)->layout) return -1;
  return amd_frag_fits(ir_amx_info_of((unsigned)row), f, frag, t) ? row : -1;
}

static bool amd_fits(const ir_instr *i, void *data) {
  ir_wmma_form f;
  return ir_wmma_find(i, &f, NULL, NULL) && amd_row_of(data, i, &f) >= 0;
}

/* Registers of data of the fragment in row r's layout (the rest of the
 * ISA's count are copies). */
static unsigned amd_ndreg(const ir_amx_info *r, unsigned frag, ir_type t) {
  if (frag == IR_FRAG_A) return r->na;
  if (frag == IR_FRAG_B) return r->nb;
  return t == ir_type_f16 ? r->nc / 2u : r->nc;
}

/* The matrix element (row, col of A: M x K, B: K x N, C/D: M x N) that
 * part h of data register j of the fragment holds in lane `lane`. */
static void amd_elem(const ir_amx_info *r, unsigned frag, ir_type t, unsigned lane, unsigned j, unsigned h,
                     unsigned *row, unsigned *col) {
  unsigned blk, x, y;
  if (frag == IR_FRAG_A || frag == IR_FRAG_B) {
    ir_amx_ab_elem(r, lane, j, h, &blk, &x, &y);   /* x: row of A / column of B, y: k */
    if (frag == IR_FRAG_A) *row = x, *col = y;
    else *row = y, *col = x;
    return;
  }
  ir_amx_cd_elem(r, lane, t == ir_type_f16 ? 2 * j + h : j, &blk, &x, &y);
  *row = x, *col = y;
}

/* Element e = per j + h as P (row of a .row matrix, column of a .col one)
 * and Q, affine in lo = %laneid & 15 (.g) and hi = %laneid >> 4 (.t);
 * false if it is not, for some lane. */
static bool amd_affine(const ir_amx_info *r, unsigned frag, ir_type t, unsigned e, unsigned per, bool row_major,
                       elem_addr *out) {
  unsigned pq[3][2];
  const unsigned probe[3] = {0, 1, 16};
  for (unsigned k = 0; k < 3; k++) {
    unsigned row, col;
    amd_elem(r, frag, t, probe[k], e / per, e % per, &row, &col);
    pq[k][0] = row_major ? row : col, pq[k][1] = row_major ? col : row;
  }
  affine a[2];
  for (unsigned z = 0; z < 2; z++)
    a[z] = (affine){(int)pq[1][z] - (int)pq[0][z], (int)pq[2][z] - (int)pq[0][z], (int)pq[0][z]};
  for (unsigned l = 0; l < 32; l++) {
    unsigned row, col;
    amd_elem(r, frag, t, l, e / per, e % per, &row, &col);
    int lo = (int)(l & 15), hi = (int)(l >> 4);
    int p = a[0].g * lo + a[0].t * hi + a[0].c, q = a[1].g * lo + a[1].t * hi + a[1].c;
    if (p != (int)(row_major ? row : col) || q != (int)(row_major ? col : row)) return false;
  }
  *out = (elem_addr){a[0], a[1]};
  return true;
}

/* As addr_init, for the elements e < nelem of the AMD layout; the
 * elements' affine forms into ea[]. */
static bool amd_addr_init(addr_ctx *A, ir_builder *b, ir_instr *i, const ir_wmma_form *f, const ir_amx_info *r,
                          unsigned frag, ir_type t, unsigned nelem, unsigned per, bool has_stride, unsigned stride_at,
                          elem_addr *ea) {
  bool row_major = i->mods.layout == IR_LAYOUT_ROW;
  for (unsigned e = 0; e < nelem; e++) {
    if (!amd_affine(r, frag, t, e, per, row_major, &ea[e])) return false;
    if (ea[e].p.g != ea[0].p.g || ea[e].p.t != ea[0].p.t || ea[e].q.g != ea[0].q.g || ea[e].q.t != ea[0].q.t)
      return false;
    if (ea[e].p.c < 0 || ea[e].p.c >= WMMA_MAX_P || ea[e].q.c < 0) return false;
  }
  unsigned bytes = ir_mma_elem_bits(t) / 8;
  *A = (addr_ctx){.b = b, .i = i, .bits = 8 * bytes};
  ir_value *lane = ir_read_sreg(b, ir_sreg_laneid, 0);
  ir_value *lo = lower_alu(b, ir_op_and, ir_type_b32, lane, imm(b, 15));
  ir_value *hi = lower_alu(b, ir_op_shr, ir_type_b32, lane, imm(b, 4));
  ir_value *stride = has_stride ? i->src[stride_at] : imm(b, ir_wmma_default_stride(f, frag, row_major));
  A->stride_bytes = mul_c(b, stride, (int)bytes);
  elem_addr a0 = ea[0];
  ir_value *lp = add32(b, mul_c(b, lo, a0.p.g), mul_c(b, hi, a0.p.t));
  ir_value *lq = add32(b, mul_c(b, lo, a0.q.g * (int)bytes), mul_c(b, hi, a0.q.t * (int)bytes));
  A->lane_addr = add_offset(b, i->src[0], add32(b, mul32(b, lp, A->stride_bytes), lq));
  return true;
}

/* Whether the per elements of data register j are one aligned .b32 (the
 * lane's part of Q a multiple of per too). */
static bool amd_contiguous(const elem_addr *ea, unsigned j, unsigned per) {
  const elem_addr *a = &ea[j * per];
  if (a->q.c % (int)per || a->q.g % (int)per || a->q.t % (int)per) return false;
  for (unsigned k = 1; k < per; k++)
    if (ea[j * per + k].p.c != a->p.c || ea[j * per + k].q.c != a->q.c + (int)k) return false;
  return true;
}

static bool amd_load(ir_builder *b, ir_instr *i, const ir_wmma_form *f, const ir_amx_info *r, bool has_stride,
                     ir_value **out) {
  ir_type t = (ir_type)i->type;
  unsigned frag = i->mods.frag, bits = ir_mma_elem_bits(t), per = bits >= 32 ? 1 : 32 / bits;
  unsigned nd = amd_ndreg(r, frag, t), nreg = ir_wmma_nregs(f, frag, t);
  elem_addr ea[32];
  addr_ctx A;
  if (nd * per > 32 || !amd_addr_init(&A, b, i, f, r, frag, t, nd * per, per, has_stride, 1, ea)) return false;
  ir_mods mm = {.space = i->mods.space};
  ir_value *reg[16];
  for (unsigned j = 0; j < nd; j++) {
    int64_t d;
    if (per == 1 || amd_contiguous(ea, j, per)) {
      ir_value *a = elem_address(&A, ea[j * per], &d);
      reg[j] = ir_build_mem(b, ir_op_ld, per == 1 ? (ir_type)i->dst[j]->type : ir_type_b32, a, d, 0, NULL, 1, &mm)->dst[0];
      continue;
    }
    ir_value *part[4];
    for (unsigned k = 0; k < per; k++) {
      ir_value *a = elem_address(&A, ea[j * per + k], &d);
      part[k] = ir_build_mem(b, ir_op_ld, bits_type(bits), a, d, 0, NULL, 1, &mm)->dst[0];
    }
    reg[j] = ir_build_value(b, ir_op_pack, ir_type_b32, per, part, NULL);
  }
  /* registers past the instruction's: copies (RDNA4 .f16 A/B) */
  for (unsigned j = 0; j < nreg; j++) out[j] = as_type(b, reg[j % nd], (ir_type)i->dst[j]->type);
  return true;
}

static bool amd_store(ir_builder *b, ir_instr *i, const ir_wmma_form *f, const ir_amx_info *r, bool has_stride) {
  ir_type t = (ir_type)i->type;
  unsigned bits = ir_mma_elem_bits(t), per = bits >= 32 ? 1 : 32 / bits;
  unsigned nd = amd_ndreg(r, IR_FRAG_D, t), nreg = ir_wmma_nregs(f, IR_FRAG_D, t);
  elem_addr ea[32];
  addr_ctx A;
  if (nd * per > 32 || !amd_addr_init(&A, b, i, f, r, IR_FRAG_D, t, nd * per, per, has_stride, 1 + nreg, ea))
    return false;
  ir_mods mm = {.space = i->mods.space};
  for (unsigned j = 0; j < nd; j++) {
    ir_value *v = i->src[1 + j];
    int64_t d;
    if (per == 1 || amd_contiguous(ea, j, per)) {
      ir_value *a = elem_address(&A, ea[j * per], &d);
      ir_build_mem(b, ir_op_st, per == 1 ? (ir_type)v->type : ir_type_b32, a, d, 1, &v, 0, &mm);
      continue;
    }
    ir_type pt[4] = {bits_type(bits), bits_type(bits), bits_type(bits), bits_type(bits)};
    ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, (ir_value *[]){as_type(b, v, ir_type_b32)}, per, pt, NULL);
    for (unsigned k = 0; k < per; k++) {
      ir_value *a = elem_address(&A, ea[j * per + k], &d);
      ir_build_mem(b, ir_op_st, bits_type(bits), a, d, 1, &u->dst[k], 0, &mm);
    }
  }
  return true;
}

/* wmma.mma as the row's instruction: A, B and C as they are (.f16 C
 * widened to f32 exactly, D rounded to .f16 once: as lower_mma_amd does
 * for mma.sync and the emulator for wmma.mma). */
static bool amd_mma(ir_builder *b, ir_instr *i, const ir_wmma_form *f, unsigned rowid, ir_value **out) {
  const ir_amx_info *r = ir_amx_info_of(rowid);
  ir_wmma_types ty = ir_wmma_mma_types(i);
  unsigned na = ir_wmma_nregs(f, IR_FRAG_A, ty.a), nb = ir_wmma_nregs(f, IR_FRAG_B, ty.b);
  ir_value *src[1 + 8 + 8 + 8];
  unsigned n = 0;
  src[n++] = imm(b, rowid);
  for (unsigned k = 0; k < r->na; k++) src[n++] = as_type(b, i->src[k], ir_type_b32);
  for (unsigned k = 0; k < r->nb; k++) src[n++] = as_type(b, i->src[na + k], ir_type_b32);
  ir_value *const *c = &i->src[na + nb];
  for (unsigned k = 0; k < r->nc; k++) {
    if (ty.c == ir_type_f32) {
      src[n++] = as_type(b, c[k], ir_type_b32);
      continue;
    }
    if (k % 2) continue;
    ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, (ir_value *[]){as_type(b, c[k / 2], ir_type_b32)}, 2,
                           (ir_type[]){ir_type_b16, ir_type_b16}, NULL);
    src[n++] = ir_convert(b, ir_type_f32, ir_type_f16, u->dst[0]);
    src[n++] = ir_convert(b, ir_type_f32, ir_type_f16, u->dst[1]);
  }
  ir_type dt[8];
  for (unsigned k = 0; k < r->nc; k++) dt[k] = ir_type_b32;
  ir_instr *w = ir_build(b, ir_op_wave_mma, ir_type_b32, n, src, r->nc, dt, NULL);
  for (unsigned k = 0; k < i->ndst; k++) {
    if (ty.d == ir_type_f32) {
      out[k] = as_type(b, w->dst[k], (ir_type)i->dst[k]->type);
      continue;
    }
    ir_value *h0 = ir_convert(b, ir_type_f16, ir_type_f32, as_type(b, w->dst[2 * k], ir_type_f32), .rnd = IR_RND_RN);
    ir_value *h1 = ir_convert(b, ir_type_f16, ir_type_f32, as_type(b, w->dst[2 * k + 1], ir_type_f32), .rnd = IR_RND_RN);
    out[k] = as_type(b, ir_build_value(b, ir_op_pack, ir_type_b32, 2, (ir_value *[]){h0, h1}, NULL),
                     (ir_type)i->dst[k]->type);
  }
  for (unsigned k = 0; k < i->ndst && i->mods.satfinite; k++) out[k] = satfinite(b, out[k], ty.d);
  return true;
}

/* ---- the pass ------------------------------------------------------------------ */
static bool is_wmma(ir_op op) { return op == ir_op_wmma_load || op == ir_op_wmma_store || op == ir_op_wmma_mma; }

static bool want(const ir_instr *i, void *data) {
  (void)data;
  return is_wmma((ir_op)i->op);
}

/* Eliminates the forms ir_wmma.h has; lower_warps reports the others. */
static bool lowerable(const ir_instr *i, void *data) {
  (void)data;
  return is_wmma((ir_op)i->op) && ir_wmma_find(i, NULL, NULL, NULL);
}

const lower_contract lower_wmma_contract = {
    .pass = "lower_wmma",
    .ops = (const ir_op[]){ir_op_wmma_load, ir_op_wmma_store, ir_op_wmma_mma, ir_op_count},
    .form = lowerable,
    .preserves = 0,
};

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  wmma_state *s = data;
  ir_wmma_form f;
  bool has_stride;
  if (!ir_wmma_find(i, &f, NULL, &has_stride)) return false;   /* reported by lower_warps */
  bool ok;
  int row = lower_wmma_web_amd(&s->web, i) ? amd_row_of(s, i, &f) : -1;
  if (row >= 0) {   /* fragments in AMD's layout */
    const ir_amx_info *r = ir_amx_info_of((unsigned)row);
    switch ((ir_op)i->op) {
    case ir_op_wmma_load: ok = amd_load(b, i, &f, r, has_stride, out); break;
    case ir_op_wmma_store: ok = amd_store(b, i, &f, r, has_stride); break;
    default: ok = amd_mma(b, i, &f, (unsigned)row, out); break;
    }
    if (!ok) lower_error(s->opt->diag, i, "internal error: the AMD layout of this wmma form is not affine in the lane");
    return ok;
  }
  switch ((ir_op)i->op) {
  case ir_op_wmma_load: ok = lower_load(b, i, &f, has_stride, out); break;
  case ir_op_wmma_store: ok = lower_store(b, i, &f, has_stride); break;
  case ir_op_wmma_mma: ok = lower_mma_tiles(b, i, &f, out); break;
  default: return false;
  }
  if (!ok) lower_error(s->opt->diag, i, "internal error: the wmma layout of this form is not affine in the lane");
  return ok;
}

bool lower_wmma(ir_module *m, const lower_wmma_options *opt) {
  lower_wmma_options o = opt ? *opt : (lower_wmma_options){0};
  wmma_state s = {&o, m->facts.target ? m->facts.target->name : NULL, m->facts.wave_size, {0}};
  pw_arena scratch;
  pw_arena_init(&scratch);
  scratch.on_oom = m->arena.on_oom;
  if (s.target) lower_wmma_webs(m, &scratch, amd_fits, &s, &s.web);
  bool progress = lower_walk(m, want, lower_instr, &s);
  pw_arena_free(&scratch);
  return progress;
}
