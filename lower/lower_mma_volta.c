/* lower/lower_mma_volta.c: Volta's
 *   mma.sync.aligned.m8n8k4.{row,col}.{row,col}.{f32,f16}.f16.f16.{f32,f16}
 * (PTX ISA 9.7.14.5.1; fragments: ir/ir_mma.h's m8n8k4 functions) on AMD's
 * matrix instructions (wave_mma, ir/ir_amd_matrix.def), where the target has
 * one; lower_mma.c's per-thread expansion (lower_mma_m8n8k4) stays the
 * fallback and the reference (docs/lowering.md, "Volta's m8n8k4 .f16").
 *
 * A warp's m8n8k4 is four independent 8x8x4 products D_q = A_q B_q + C_q,
 * one per quad-pair q = (L >> 2) & 3 (lanes 4q .. 4q + 3, 16 + 4q .. + 3).
 *
 *   wave64, v_mfma_f32_4x4x4_16b_f16 (gfx90a, gfx94x, gfx950): a quad-pair's
 *     8x8 is 2x2 blocks of 4x4 with all of K = 4, the warp's four quad-pairs
 *     16 blocks: two instructions, each using the warp's 8 blocks (its own
 *     half of the wave, as lower_mma_amd.c's m16n8 scheme: a wave whose other
 *     half is idle or elsewhere computes right).  Local block b' (lanes
 *     4b' .. 4b' + 3 of the warp) of instruction c is quad-pair b' & 3 and
 *     block (bm, bn) = (b' >> 2, c) or (c, b' >> 2).  No padding: every
 *     block's K is the problem's, in k order.
 *   wave32, v_wmma_f32_16x16x16_f16 (RDNA3, RDNA4): two instructions.  One
 *     16x16x16 cannot hold the four products block-diagonally without one
 *     quad-pair reaching another's block: with all four 8x8 blocks of D in
 *     use, a row block of A carries two quad-pairs' data and meets, in each
 *     of its column blocks, B's zeros at the other quad-pair's k, so an
 *     Inf or NaN of one quad-pair's A (or B) makes the other's D NaN (Inf *
 *     0); no padding value avoids that.  Instead instruction 0 computes
 *     quad-pairs 0 and 3 in the diagonal blocks and instruction 1 quad-pairs
 *     1 and 2 in the anti-diagonal ones (quad-pair q in block (q & 1,
 *     q >> 1), or (q >> 1, q & 1)), all four at WMMA k 0..3 (RDNA4: k 0, 1,
 *     4, 5, so that register 0 holds them in every lane), the rest of K
 *     padding; a used block meets only its own data and padding x padding,
 *     the other blocks are dropped.  The two results' used blocks do not
 *     overlap: D is one select per register, then gathered back once.
 *     Optionally transposed (D^T = B^T A^T), as lower_mma_amd's m16n8 scheme.
 *
 * Each candidate scheme (placement, transposition) is dry-run and costed
 * (shuffles, selects, half moves); the cheapest is built.  The lane maps
 * come from the two layout tables as in lower_mma_amd.c (its gather and
 * lane functions: lower_mma_amd_gather); an AMD register whose two f16
 * halves come from different lanes or registers (.col A, .row B: a thread
 * holds one k of four rows) is two gathers, each half moved into place.
 *
 * Arithmetic, bit for bit with the expansion and the emulator (CUDA
 * semantics: C, widened to f32 when .f16, then fma.rn.f32 in k order, f16 D
 * rounded once): the emulator's wave_mma is acc = fmaf(a, b, acc) from C in
 * the instruction's k order, and the problem's k 0..3 are in that order; the
 * WMMA's padding is -0 in AMD's A and +0 in its B, so that every padding
 * product is -0, which leaves any sum as it is (+0 + -0 = +0, -0 + -0 = -0),
 * where +0 products would turn a -0 sum into +0.  So results are identical
 * on every input, not only on exact sums (NaNs: the canonical NaN on both
 * paths).  The hardware's internal order is not documented (AMD's ISA
 * guides), as for every wave_mma.
 */
#include <string.h>

#include "ir/ir_amd_matrix.h"
#include "ir/ir_mma.h"
#include "lower_internal.h"

#define ANY LOWER_AMD_ANY
#define NINST 2
#define PAD_A 0x80008000u   /* two f16 -0 */
#define PAD_B 0u            /* two f16 +0 */

enum { VE_PAD, VE_A, VE_B, VE_C };   /* PAD: WMMA's K padding (A, B), or a dropped block of C/D */
typedef struct velem { uint8_t what, q, row, col; } velem;

typedef struct vscheme {
  const ir_amx_info *r;
  unsigned row;          /* ir_amx_id */
  bool transposed;       /* AMD's A is B^T, its B A^T, its D D^T */
  unsigned variant;      /* MFMA: (bm, bn) = (b' >> 2, c) or (c, b' >> 2); WMMA: q at (q & 1, q >> 1) or swapped */
} vscheme;

/* ---- the schemes: AMD (instruction c, block, index, k) -> NVIDIA ---------- */
static bool is_mfma(const vscheme *s) { return s->r->layout == IR_AMX_L_MFMA_4X4_16B; }

/* MFMA: local block b' of instruction c -> quad-pair and 4x4 block (bm, bn) */
static void m4_block(const vscheme *s, unsigned c, unsigned blk, unsigned *q, unsigned *bm, unsigned *bn) {
  unsigned b = blk & 7, x = b >> 2;
  *q = b & 3;
  *bm = s->variant ? c : x, *bn = s->variant ? x : c;
}
/* WMMA: the 8x8 block (bi, bj) of quad-pair q; instruction c holds {0, 3} (c = 0) or {1, 2} */
static void wm_place(const vscheme *s, unsigned q, unsigned *bi, unsigned *bj) {
  *bi = s->variant ? q >> 1 : q & 1, *bj = s->variant ? q & 1 : q >> 1;
}
static bool wm_in(unsigned c, unsigned q) { return (((q & 1) ^ (q >> 1)) & 1) == c; }
/* the quad-pair of instruction c whose block row (by_row) or column is x */
static unsigned wm_qp(const vscheme *s, unsigned c, bool by_row, unsigned x) {
  for (unsigned q = 0; q < 4; q++) {
    unsigned bi, bj;
    wm_place(s, q, &bi, &bj);
    if (wm_in(c, q) && (by_row ? bi : bj) == x) return q;
  }
  return 0;   /* not reached: each instruction has one quad-pair per block row and column */
}
/* WMMA k -> the problem's k, or -1 (padding) */
static int wm_nvk(const vscheme *s, unsigned k) {
  if (s->r->layout == IR_AMX_L_WMMA_GFX12) return k < 8 && !(k & 2) ? (int)((k & 1) + 2 * (k >> 2)) : -1;
  return k < 4 ? (int)k : -1;
}

/* Element x (row of AMD's A, or column of its B), k, of block blk in instruction c. */
static velem v_ab(const vscheme *s, bool is_b, unsigned c, unsigned blk, unsigned x, unsigned k) {
  bool want_b = is_b != s->transposed;   /* which NVIDIA operand */
  if (is_mfma(s)) {
    unsigned q, bm, bn;
    m4_block(s, c, blk, &q, &bm, &bn);
    return want_b ? (velem){VE_B, (uint8_t)q, (uint8_t)k, (uint8_t)(4 * bn + x)}
                  : (velem){VE_A, (uint8_t)q, (uint8_t)(4 * bm + x), (uint8_t)k};
  }
  int nk = wm_nvk(s, k);
  if (nk < 0) return (velem){VE_PAD, 0, 0, 0};
  /* A's rows and B's columns: block row x >> 3 of A (D's rows), column of B (D's columns) */
  unsigned q = wm_qp(s, c, !want_b, x >> 3);
  return want_b ? (velem){VE_B, (uint8_t)q, (uint8_t)nk, (uint8_t)(x & 7)}
                : (velem){VE_A, (uint8_t)q, (uint8_t)(x & 7), (uint8_t)nk};
}
/* Element (i, j) of C/D of block blk in instruction c. */
static velem v_cd(const vscheme *s, unsigned c, unsigned blk, unsigned i, unsigned j) {
  if (s->transposed) {
    unsigned t = i;
    i = j, j = t;
  }
  if (is_mfma(s)) {
    unsigned q, bm, bn;
    m4_block(s, c, blk, &q, &bm, &bn);
    return (velem){VE_C, (uint8_t)q, (uint8_t)(4 * bm + i), (uint8_t)(4 * bn + j)};
  }
  for (unsigned q = 0; q < 4; q++) {
    unsigned bi, bj;
    wm_place(s, q, &bi, &bj);
    if (wm_in(c, q) && bi == i >> 3 && bj == j >> 3) return (velem){VE_C, (uint8_t)q, (uint8_t)(i & 7), (uint8_t)(j & 7)};
  }
  return (velem){VE_PAD, 0, 0, 0};
}

/* ---- NVIDIA's layouts inverted: (quad-pair, row, col) -> (lane, element) -- */
typedef struct vinv { uint8_t lane[4][8][8], elem[4][8][8]; } vinv;
static void inv_ab(bool is_b, bool row_major, vinv *v) {
  memset(v, 0xff, sizeof *v);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned e = 0; e < 4; e++) {
      unsigned r, c, q = (l >> 2) & 3;
      ir_mma_m8n8k4_ab(is_b, row_major, l, e, &r, &c);
      v->lane[q][r][c] = (uint8_t)l, v->elem[q][r][c] = (uint8_t)e;
    }
}
static void inv_cd(bool f32, vinv *v) {
  memset(v, 0xff, sizeof *v);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned e = 0; e < 8; e++) {
      unsigned r, c, q = (l >> 2) & 3;
      ir_mma_m8n8k4_cd(f32, l, e, &r, &c);
      v->lane[q][r][c] = (uint8_t)l, v->elem[q][r][c] = (uint8_t)e;
    }
}

/* ---- building --------------------------------------------------------------- */
typedef struct vctx {
  ir_builder *b;
  bool dry;
  ir_value *laneid;
  unsigned counts[2];    /* shuffles, selects */
  unsigned ops;          /* other lane-local ops (half moves) */
  /* AMD A/B registers built, by their per-lane sources (the two instructions often share them) */
  struct { uint8_t key[3][2][32]; ir_value *v; } memo[32];
  unsigned nmemo;
} vctx;

static ir_value *imm(ir_builder *b, uint32_t v) { return lower_imm32(b, v); }
static ir_value *alu(vctx *V, ir_op op, ir_value *x, ir_value *y) {
  V->ops++;
  return V->dry ? V->laneid : lower_alu(V->b, op, ir_type_b32, x, y);
}

/* The lanes' f16 half nvh[L] of word w moved into half `to` (the rest zero). */
static ir_value *half_of(vctx *V, ir_value *w, const uint8_t *nvh, unsigned to) {
  uint8_t sh[32];
  bool cst = true;
  for (unsigned l = 0; l < 32; l++) {
    sh[l] = (uint8_t)(16 * nvh[l]);
    cst = cst && sh[l] == sh[0];
  }
  if (cst && sh[0] == 16 * to) return alu(V, ir_op_and, w, V->dry ? NULL : imm(V->b, to ? 0xffff0000u : 0xffffu));
  if (cst)   /* the other half: one shift */
    return alu(V, to ? ir_op_shl : ir_op_shr, w, V->dry ? NULL : imm(V->b, 16));
  ir_value *f = lower_mma_amd_lane_fn(V->b, V->laneid, V->dry, sh);
  if (!f) return NULL;
  ir_value *x = alu(V, ir_op_shr, w, f);
  if (to) return alu(V, ir_op_shl, x, V->dry ? NULL : imm(V->b, 16));
  return alu(V, ir_op_and, x, V->dry ? NULL : imm(V->b, 0xffff));
}

/* p(L) for the lanes whose entry is not ANY (0 or 1): a lane bit, its
 * complement, a constant, or the parity of two lane bits; NULL otherwise.
 * (WMMA's two results meet at blocks (bi, bj) with bi ^ bj the
 * instruction: on RDNA4 bi and bj are both lane bits.) */
static ir_value *lane_pred(vctx *V, const uint8_t *f) {
  ir_value *x = lower_mma_amd_lane_fn(V->b, V->laneid, V->dry, f);
  if (x) {
    V->counts[1]++;
    return V->dry ? x : lower_setp(V->b, IR_CMP_EQ, ir_type_u32, x, imm(V->b, 1));
  }
  for (unsigned a = 0; a < 5; a++)
    for (unsigned c = a + 1; c < 5; c++)
      for (unsigned inv = 0; inv < 2; inv++) {
        bool ok = true;
        for (unsigned l = 0; l < 32 && ok; l++)
          ok = f[l] == ANY || f[l] == ((((l >> a) ^ (l >> c) ^ inv) & 1));
        if (!ok) continue;
        V->ops += 3, V->counts[1]++;
        if (V->dry) return V->laneid;
        ir_builder *b = V->b;
        ir_value *t = lower_alu(b, ir_op_xor, ir_type_b32, lower_alu(b, ir_op_shr, ir_type_b32, V->laneid, imm(b, a)),
                                lower_alu(b, ir_op_shr, ir_type_b32, V->laneid, imm(b, c)));
        t = lower_alu(b, ir_op_and, ir_type_b32, t, imm(b, 1));
        return lower_setp(b, IR_CMP_EQ, ir_type_u32, t, imm(b, inv ? 0 : 1));
      }
  return NULL;
}

/* Every lane L needs n values (n a power of two, at most 8): slot s is
 * value val[L][s] of lane src[L][s] (ANY: any value).  Gathered slot by slot,
 * two lanes that read one source lane for different values (L and L ^ 1
 * reading rows of one column of AMD's D, say) cost a shuffle each; so
 * shuffle k instead gives lane L its slot k ^ m(L), m made of lane bits
 * (one per slot bit, or none), chosen so that as few shuffles as possible
 * are needed, and the slots are put back in place by selects after.  m = 0
 * is the plain slot-by-slot gather. */
static bool exchange(vctx *V, unsigned n, uint8_t (*src)[8], uint8_t (*val)[8], ir_value *const *vals, ir_value **out) {
  unsigned nbits = n == 8 ? 3 : n == 4 ? 2 : n == 2 ? 1 : 0;
  int best[3] = {-1, -1, -1};
  unsigned best_cost = ~0u;
  for (unsigned code = 0; code < 216; code++) {   /* 6^3: each slot bit from no lane bit or lane bit 0..4 */
    int a[3] = {(int)(code % 6) - 1, (int)(code / 6 % 6) - 1, (int)(code / 36) - 1};
    bool skip = false;
    for (unsigned p = nbits; p < 3; p++) skip = skip || a[p] != -1;
    if (skip) continue;
    vctx D = {.b = V->b, .dry = true, .laneid = V->laneid};
    unsigned nsel = 1;
    for (unsigned p = 0; p < nbits; p++) nsel *= a[p] >= 0 ? 2 : 1;
    bool ok = true;
    for (unsigned k = 0; k < n && ok; k++) {
      uint8_t s1[32], v1[32];
      for (unsigned l = 0; l < 32; l++) {
        unsigned m = 0;
        for (unsigned p = 0; p < nbits; p++) m |= a[p] >= 0 ? ((l >> a[p]) & 1u) << p : 0;
        s1[l] = src[l][k ^ m], v1[l] = val[l][k ^ m];
      }
      ok = lower_mma_amd_gather(D.b, D.laneid, true, s1, v1, vals, D.counts) != NULL &&
           2 * D.counts[0] + D.counts[1] + n * (nsel - 1) < best_cost;   /* no better than the best: stop */
    }
    unsigned c = 2 * D.counts[0] + D.counts[1] + n * (nsel - 1);
    if (ok && c < best_cost) best_cost = c, memcpy(best, a, sizeof best);
  }
  if (best_cost == ~0u) return false;
  ir_value *z[8];
  uint8_t mv[32];
  for (unsigned l = 0; l < 32; l++) {
    unsigned m = 0;
    for (unsigned p = 0; p < nbits; p++) m |= best[p] >= 0 ? ((l >> best[p]) & 1u) << p : 0;
    mv[l] = (uint8_t)m;
  }
  for (unsigned k = 0; k < n; k++) {
    uint8_t s1[32], v1[32];
    for (unsigned l = 0; l < 32; l++) s1[l] = src[l][k ^ mv[l]], v1[l] = val[l][k ^ mv[l]];
    z[k] = lower_mma_amd_gather(V->b, V->laneid, V->dry, s1, v1, vals, V->counts);
    if (!z[k]) return false;
  }
  for (unsigned s = 0; s < n; s++) {   /* slot s is z[s ^ m(L)] */
    uint8_t f[32];
    bool cst = true;
    for (unsigned l = 0; l < 32; l++) f[l] = (uint8_t)(s ^ mv[l]), cst = cst && f[l] == f[0];
    if (cst) {
      out[s] = z[f[0]];
      continue;
    }
    ir_value *sel = lower_mma_amd_lane_fn(V->b, V->laneid, V->dry, f);
    if (!sel) return false;
    ir_value *r = NULL;
    for (unsigned k = 0; k < n; k++) {
      bool used = false;
      for (unsigned l = 0; l < 32; l++) used = used || f[l] == k;
      if (!used) continue;
      if (!r) {
        r = z[k];
        continue;
      }
      V->counts[1]++;
      if (V->dry) continue;
      ir_value *p = lower_setp(V->b, IR_CMP_EQ, ir_type_u32, sel, imm(V->b, k));
      r = lower_selp(V->b, ir_type_b32, z[k], r, p);
    }
    out[s] = r;
  }
  return true;
}

/* AMD's A (is_b false) or B registers of instruction c into regs[], from
 * NVIDIA's A/B words nv[0..3] (a0 a1 b0 b1); false when the scheme does not
 * fit.  A register read whole (its two halves a source's two halves in
 * order) is one gather; the halves of the others (.col A, .row B: a thread
 * holds one k of four rows, AMD's registers hold k pairs of one row) are
 * slots of one exchange (at most 8), each half then moved into place. */
static bool ab_operand(vctx *V, const vscheme *s, const vinv *ia, const vinv *ib, bool is_b, unsigned c,
                       ir_value *const *nv, ir_value **regs) {
  unsigned nreg = is_b ? s->r->nb : s->r->na;
  uint8_t key[8][3][2][32];   /* per register, half: source lane, word, half (ANY: padding) */
  bool split[8];
  uint8_t xs[32][8], xw[32][8];
  unsigned nslot = 0, slot[8][2];
  for (unsigned reg = 0; reg < nreg; reg++) {
    unsigned pads = 0, data = 0;
    for (unsigned l = 0; l < 32; l++)
      for (unsigned h = 0; h < 2; h++) {
        unsigned blk, x, k;
        ir_amx_ab_elem(s->r, l, reg, h, &blk, &x, &k);
        velem e = v_ab(s, is_b, c, blk, x, k);
        if (e.what == VE_PAD) {
          key[reg][0][h][l] = key[reg][1][h][l] = key[reg][2][h][l] = ANY;
          pads++;
          continue;
        }
        const vinv *v = e.what == VE_A ? ia : ib;
        unsigned el = v->elem[e.q][e.row][e.col];
        key[reg][0][h][l] = v->lane[e.q][e.row][e.col];
        key[reg][1][h][l] = (uint8_t)((e.what == VE_B ? 2 : 0) + el / 2);
        key[reg][2][h][l] = (uint8_t)(el % 2);
        data++;
      }
    split[reg] = false;
    if (!data) {
      regs[reg] = V->dry ? V->laneid : imm(V->b, is_b ? PAD_B : PAD_A);
      continue;
    }
    if (pads) return false;   /* padding and data in one register: not in these schemes */
    bool whole = true;
    for (unsigned l = 0; l < 32 && whole; l++)
      whole = key[reg][0][0][l] == key[reg][0][1][l] && key[reg][1][0][l] == key[reg][1][1][l] &&
              key[reg][2][0][l] == 0 && key[reg][2][1][l] == 1;
    if (whole) {
      regs[reg] = NULL;
      for (unsigned k = 0; k < V->nmemo && !regs[reg]; k++)
        if (!memcmp(V->memo[k].key, key[reg], sizeof key[reg])) regs[reg] = V->memo[k].v;
      if (!regs[reg]) {
        regs[reg] = lower_mma_amd_gather(V->b, V->laneid, V->dry, key[reg][0][0], key[reg][1][0], nv, V->counts);
        if (!regs[reg]) return false;
        if (V->nmemo < 32) memcpy(V->memo[V->nmemo].key, key[reg], sizeof key[reg]), V->memo[V->nmemo++].v = regs[reg];
      }
      continue;
    }
    split[reg] = true;
    for (unsigned h = 0; h < 2; h++) {
      if (nslot == 8) return false;
      for (unsigned l = 0; l < 32; l++) xs[l][nslot] = key[reg][0][h][l], xw[l][nslot] = key[reg][1][h][l];
      slot[reg][h] = nslot++;
    }
  }
  if (!nslot) return true;
  unsigned n = nslot <= 2 ? 2 : nslot <= 4 ? 4 : 8;
  for (unsigned k = nslot; k < n; k++)
    for (unsigned l = 0; l < 32; l++) xs[l][k] = xw[l][k] = ANY;
  ir_value *w[8];
  if (!exchange(V, n, xs, xw, nv, w)) return false;
  for (unsigned reg = 0; reg < nreg; reg++) {
    if (!split[reg]) continue;
    ir_value *lo = half_of(V, w[slot[reg][0]], key[reg][2][0], 0);
    ir_value *hi = lo ? half_of(V, w[slot[reg][1]], key[reg][2][1], 1) : NULL;
    if (!hi) return false;
    regs[reg] = alu(V, ir_op_or, lo, hi);
  }
  return true;
}

/* D of the instructions back as one list dv: where no register of a lane is
 * used by both instructions (WMMA) the two results merged by one select per
 * register (*merged: dv has nc values), otherwise both as they are. */
static bool merge_results(vctx *V, const vscheme *s, ir_value *const *dres, ir_value **dv, bool *merged) {
  const ir_amx_info *r = s->r;
  ir_builder *b = V->b;
  uint8_t own[8][32];
  bool merge = true;
  for (unsigned reg = 0; reg < r->nc; reg++)
    for (unsigned l = 0; l < 32; l++) {
      own[reg][l] = ANY;
      for (unsigned c = 0; c < NINST; c++) {
        unsigned blk, ii, jj;
        ir_amx_cd_elem(r, l, reg, &blk, &ii, &jj);
        if (v_cd(s, c, blk, ii, jj).what == VE_PAD) continue;
        if (own[reg][l] != ANY) merge = false;
        own[reg][l] = (uint8_t)c;
      }
    }
  *merged = merge;
  unsigned nd = merge ? r->nc : NINST * r->nc;
  for (unsigned k = 0; k < nd; k++) dv[k] = dres[k];
  if (!merge) return true;
  for (unsigned reg = 0; reg < r->nc; reg++) {
    bool c1 = false, c0 = false;
    for (unsigned l = 0; l < 32; l++) c1 = c1 || own[reg][l] == 1, c0 = c0 || own[reg][l] == 0;
    if (!c1) continue;
    if (!c0) {
      dv[reg] = dres[r->nc + reg];
      continue;
    }
    ir_value *p = lane_pred(V, own[reg]);
    if (!p) return false;
    if (!V->dry) dv[reg] = lower_selp(b, ir_type_b32, dres[r->nc + reg], dres[reg], p);
  }
  return true;
}

/* Builds the scheme's code (dry: only checks and counts). */
static bool build(vctx *V, const vscheme *s, ir_instr *i, ir_value **out) {
  ir_builder *b = V->b;
  const ir_amx_info *r = s->r;
  bool arow = ir_mma_a_row(i), brow = ir_mma_b_row(i);
  bool cf32 = (ir_type)i->type4 == ir_type_f32, df32 = (ir_type)i->type == ir_type_f32;
  vinv ia, ib, ic, id;
  inv_ab(false, arow, &ia);
  inv_ab(true, brow, &ib);
  inv_cd(cf32, &ic);
  inv_cd(df32, &id);
  ir_value *nv[4], *cv[8];
  for (unsigned k = 0; k < 4; k++) nv[k] = V->dry ? V->laneid : i->src[k];
  for (unsigned e = 0; e < 8; e++) {   /* C as f32 per element (.f16: widened, exact) */
    if (V->dry) cv[e] = V->laneid;
    else if (cf32) cv[e] = i->src[4 + e];
    else if (e % 2 == 0) {
      ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, &i->src[4 + e / 2], 2,
                             (ir_type[]){ir_type_b16, ir_type_b16}, NULL);
      cv[e] = ir_convert(b, ir_type_f32, ir_type_f16, u->dst[0]);
      cv[e + 1] = ir_convert(b, ir_type_f32, ir_type_f16, u->dst[1]);
    }
  }
  /* C: where C's layout is D's (both .f32 or both .f16), the instructions
   * run from -0 and C is added to D in NVIDIA's layout after (no C gathered:
   * equal to the k-order chain from C where sums are exact, -0 included:
   * the product sum is -0 only if every product is, and -0 + C = C);
   * otherwise (.f16 C, .f32 D) C is gathered into AMD's accumulator, one
   * map per instruction and register, shared where they agree on every lane
   * both use (WMMA) */
  bool c_after = cf32 == df32;
  ir_value *acc[NINST][8];
  if (c_after)
    for (unsigned c = 0; c < NINST; c++)
      for (unsigned reg = 0; reg < r->nc; reg++) acc[c][reg] = V->dry ? V->laneid : imm(b, 0x80000000u);
  else {
    uint8_t src[NINST][8][32], val[NINST][8][32];
    bool share = true;
    for (unsigned reg = 0; reg < r->nc; reg++)
      for (unsigned c = 0; c < NINST; c++)
        for (unsigned l = 0; l < 32; l++) {
          unsigned blk, ii, jj;
          ir_amx_cd_elem(r, l, reg, &blk, &ii, &jj);
          velem e = v_cd(s, c, blk, ii, jj);
          src[c][reg][l] = val[c][reg][l] = ANY;
          if (e.what == VE_PAD) continue;
          src[c][reg][l] = ic.lane[e.q][e.row][e.col], val[c][reg][l] = ic.elem[e.q][e.row][e.col];
          if (c && src[0][reg][l] != ANY && (src[0][reg][l] != src[c][reg][l] || val[0][reg][l] != val[c][reg][l]))
            share = false;
        }
    unsigned n = share ? r->nc : NINST * r->nc;
    if (n > 8) return false;
    uint8_t ns[32][8], nvl[32][8];
    for (unsigned l = 0; l < 32; l++)
      for (unsigned k = 0; k < n; k++) {
        unsigned c = share ? 0 : k / r->nc, reg = k % r->nc;
        ns[l][k] = src[c][reg][l], nvl[l][k] = val[c][reg][l];
        if (share && ns[l][k] == ANY) ns[l][k] = src[1][reg][l], nvl[l][k] = val[1][reg][l];
      }
    ir_value *g[8];
    if (!exchange(V, n, ns, nvl, cv, g)) return false;
    for (unsigned c = 0; c < NINST; c++)
      for (unsigned reg = 0; reg < r->nc; reg++) acc[c][reg] = g[share ? reg : c * r->nc + reg];
  }
  /* the instructions */
  ir_value *dres[NINST * 8];
  for (unsigned c = 0; c < NINST; c++) {
    ir_value *ops[1 + 8 + 8 + 8];
    unsigned n = 0;
    ops[n++] = V->dry ? V->laneid : imm(b, s->row);
    for (unsigned ab = 0; ab < 2; ab++) {
      if (!ab_operand(V, s, &ia, &ib, ab, c, nv, &ops[n])) return false;
      n += ab ? r->nb : r->na;
    }
    for (unsigned reg = 0; reg < r->nc; reg++) ops[n++] = acc[c][reg];
    if (V->dry) {
      for (unsigned reg = 0; reg < r->nc; reg++) dres[c * r->nc + reg] = V->laneid;
      continue;
    }
    ir_type dt[8];
    for (unsigned k = 0; k < r->nc; k++) dt[k] = ir_type_b32;
    ir_instr *w = ir_build(b, ir_op_wave_mma, ir_type_b32, n, ops, r->nc, dt, NULL);
    for (unsigned k = 0; k < r->nc; k++) dres[c * r->nc + k] = w->dst[k];
  }
  ir_value *dv[NINST * 8];
  bool merge;
  if (!merge_results(V, s, dres, dv, &merge)) return false;
  uint8_t dsrc[32][8], dval[32][8];
  for (unsigned t = 0; t < 32; t++)
    for (unsigned e = 0; e < 8; e++) {
      unsigned row, col, q = (t >> 2) & 3;
      ir_mma_m8n8k4_cd(df32, t, e, &row, &col);
      dsrc[t][e] = dval[t][e] = ANY;
      for (unsigned c = 0; c < NINST && dsrc[t][e] == ANY; c++)
        for (unsigned l = 0; l < 32 && dsrc[t][e] == ANY; l++)
          for (unsigned reg = 0; reg < r->nc; reg++) {
            unsigned blk, ii, jj;
            ir_amx_cd_elem(r, l, reg, &blk, &ii, &jj);
            velem x = v_cd(s, c, blk, ii, jj);
            if (x.what == VE_C && x.q == q && x.row == row && x.col == col) {
              dsrc[t][e] = (uint8_t)l, dval[t][e] = (uint8_t)(merge ? reg : c * r->nc + reg);
              break;
            }
          }
      if (dsrc[t][e] == ANY) return false;
    }
  ir_value *d[8];
  if (!exchange(V, 8, dsrc, dval, dv, d)) return false;
  for (unsigned e = 0; e < 8; e++) {
    if (V->dry) {
      V->ops += c_after;
      continue;
    }
    d[e] = ir_alu1(b, ir_op_copy, ir_type_f32, d[e]);
    if (c_after) d[e] = ir_alu2(b, ir_op_add, ir_type_f32, d[e], cv[e], .rnd = IR_RND_RN);
  }
  if (V->dry) return true;
  if (df32) {
    for (unsigned e = 0; e < 8; e++) out[e] = d[e];
    return true;
  }
  for (unsigned j = 0; j < 4; j++) {   /* .f16 D: rounded once, as the expansion and the emulator */
    ir_value *h0 = ir_convert(b, ir_type_f16, ir_type_f32, d[2 * j], .rnd = IR_RND_RN);
    ir_value *h1 = ir_convert(b, ir_type_f16, ir_type_f32, d[2 * j + 1], .rnd = IR_RND_RN);
    out[j] = ir_build_value(b, ir_op_pack, ir_type_b32, 2, (ir_value *[]){h0, h1}, NULL);
  }
  return true;
}

/* What a scheme costs: a shuffle (ds_bpermute and its address) as two
 * lane-local ops. */
static unsigned cost(const vctx *V) { return 2 * V->counts[0] + V->counts[1] + V->ops; }

bool lower_mma_volta(ir_builder *b, ir_instr *i, ir_value **out, const char *target, lower_mma_volta_cache *cache) {
  if (!target || !ir_mma_is_m8n8k4_f16(i) || !ir_mma_find(i, NULL)) return false;
  int row = ir_amx_find(target, ir_type_f16, ir_type_f32, 4, 4, 4);
  if (row < 0) {
    row = ir_amx_find(target, ir_type_f16, ir_type_f32, 16, 16, 16);
    if (row < 0 || ir_amx_info_of((unsigned)row)->wave != 32) return false;
  }
  const ir_amx_info *r = ir_amx_info_of((unsigned)row);
  unsigned key = (unsigned)row << 4 | (unsigned)ir_mma_a_row(i) | (unsigned)ir_mma_b_row(i) << 1 |
                 (unsigned)((ir_type)i->type4 == ir_type_f32) << 2 | (unsigned)((ir_type)i->type == ir_type_f32) << 3;
  vscheme best = {0};
  bool known = false;
  for (unsigned k = 0; cache && k < cache->n && !known; k++)
    if (cache->e[k].key == key) {
      known = true;
      if (cache->e[k].ok) best = (vscheme){r, (unsigned)row, cache->e[k].t != 0, cache->e[k].v};
    }
  if (!known) {   /* every candidate dry-run and costed */
    unsigned best_cost = ~0u;
    for (unsigned t = 0; t < 2; t++)
      for (unsigned v = 0; v < 2; v++) {
        vscheme s = {r, (unsigned)row, t != 0, v};
        vctx X = {.b = b, .dry = true};
        X.laneid = (ir_value *)&X;   /* any non-NULL value: nothing is built */
        if (build(&X, &s, i, NULL) && cost(&X) < best_cost) best = s, best_cost = cost(&X);
      }
    if (cache && cache->n < 32) {
      unsigned k = cache->n++;
      cache->e[k].key = key, cache->e[k].t = (uint8_t)best.transposed, cache->e[k].v = (uint8_t)best.variant;
      cache->e[k].ok = best.r != NULL;
    }
  }
  if (!best.r) return false;
  vctx X = {.b = b, .laneid = ir_read_sreg(b, ir_sreg_laneid, 0)};
  return build(&X, &best, i, out);
}
