/* lower/lower_mma_amd.c: mma.sync on AMD's matrix instructions (wave_mma,
 * ir/ir_amd_matrix.def), where the target has one; lower_mma.c's per-thread
 * expansion stays the fallback and the reference (docs/lowering.md,
 * "Matrix instructions").
 *
 *   mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32     (PTX ISA 9.7.14.5.14,
 *   mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32    fragments 9.7.14.5.8;
 *   mma.sync.aligned.m16n8k8.row.col.f32.{f16,bf16}...     9.7.14.5.7)
 *   the .f16 forms with .f16 accumulators (C widened to f32 exactly, the
 *   f32 scheme, D rounded once), and
 *   mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 as two bf16
 *   m16n8k16 of a per-thread hi/lo split (lower_tf32, below), and
 *   mma.sync.aligned.m16n8k{32,16}.row.col{.satfinite}.s32.{s8,u8}.{s8,u8}.s32
 *   on the i8 MFMA (u8 split) or RDNA3's / RDNA4's iu8 WMMA (u8 read
 *   unsigned: the row of the operands' signs) from C = 0, C added after
 *   (wrapping or clamped; lower_i8), and
 *   mma.sync.aligned.m16n8k{32,16}.row.col.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}
 *   as two (one) m16n8k16 .f16 of the bytes widened to f16 in their own
 *   thread (lower_f8).
 * (m8n8k16 .s8/.u8 and the .s4/.u4 forms reach the i8 rows through the
 * m16n8 .s8 forms: lower_mma.c, mma_via_s8.)
 * Not here: the .f64 forms (the f64 MFMA's K and D rows span both halves of
 * the wave: m8n8k4 .f64 is lower_mma_f64.c's, behind a run-time test that
 * both warps are at the mma; the m16n8 .f64 shapes stay on the expansion),
 * .b1, the other forms; Volta's m8n8k4 .f16 is lower_mma_volta.c's (which
 * uses this file's gather and lane functions).
 *
 * A scheme says which element of the warp's problem D (16x8) = A (16x16)
 * B (16x8) + C each element of each AMD instruction's operands is:
 *
 *   wave64, v_mfma_f32_4x4x4_16b_* (gfx90a, gfx94x, gfx950): four
 *     instructions chained through C.  Block b' = 0..7 of a warp (lanes
 *     4b'..4b'+3 of its half: a warp's blocks are its own lanes, so the two
 *     warps of a wave need no lane of each other, and a wave whose other
 *     half has no thread or is elsewhere still computes right) is the 4x4
 *     tile of rows {2bm, 2bm+1, 2bm+8, 2bm+9} (bm = b' >> 1; the rows one
 *     group of four threads holds) and columns 4bn..4bn+3 (bn = b' & 1);
 *     instruction c adds the k pairs c and c + 4 (the pairs one thread of
 *     the group holds; m16n8k8: two instructions, pairs c and c + 2).  16x16x16 MFMA would need all 64 lanes for one
 *     warp's tile: a half-empty wave (blocks of 32 threads) would feed it
 *     what the idle half's registers hold.
 *   wave32, v_wmma_f32_16x16x16_* (RDNA3, RDNA4): one instruction, D
 *     transposed (D^T = B^T A^T): WMMA's A is B^T (16 rows, 8 of them
 *     real: columns n of D, permuted so that a lane's registers hold the
 *     rows one thread's C/D registers hold), WMMA's B is A^T; k is
 *     permuted in both alike (a reordering of the K sum); m16n8k8 leaves
 *     WMMA's k 8..15 zero.
 *
 * From a scheme and the two layout tables (ir/ir_mma.h, ir/ir_amd_matrix.h)
 * the pass computes, for every AMD register and lane, which thread's
 * register holds its pair of elements, and moves it with shfl.sync.idx
 * (lower_warps: ds_bpermute inside the warp's half): when the register to
 * read depends only on the source thread, the source selects it first and
 * one shuffle suffices; otherwise one shuffle per candidate register and
 * selects by the destination lane.  Lane functions are built from %laneid
 * bits (every one here is a permutation of bits); a scheme whose maps are
 * not is not used (the expansion is).  D goes back to NVIDIA's layout the
 * same way.
 *
 * Arithmetic: products exact, f32 sums (the emulator's wave_mma); the order
 * of the K sum differs from the expansion's, so the two agree bit for bit
 * where the sums are exact (tests/lower/ptx/mma_amd.ptx) and otherwise
 * within the rounding of a 16-term f32 sum.  NVIDIA does not specify its
 * order either (PTX ISA 9.7.14.5.14).
 */
#include <string.h>

#include "ir/ir_amd_matrix.h"
#include "ir/ir_mma.h"
#include "lower_internal.h"

/* An element of the warp's problem: which NVIDIA operand, row, column. */
enum { NV_PAD, NV_ZERO, NV_A, NV_B, NV_C };   /* PAD: any value will do; ZERO: must be 0 */
typedef struct nv_elem { uint8_t what, row, col; } nv_elem;

typedef struct scheme {
  const ir_amx_info *r;
  unsigned row;          /* ir_amx_id */
  unsigned ninst;        /* instructions chained through C */
  unsigned k;            /* the form's K: 16, or 8 (WMMA's k 8..15 are zero) */
  bool transposed;       /* AMD's A is B^T, AMD's B is A^T, D^T */
  unsigned per;          /* A/B elements per register: 2 (f16, bf16) or 4 (s8) */
} scheme;

/* An accumulator kept in AMD's C layout from one mma to the next (lower_mma_amd_chained) */
typedef struct chain_io {
  ir_value *const *in;   /* the earlier mma's accumulator, or NULL: gather C */
  ir_value **out;        /* where this mma's accumulator goes, or NULL */
  ir_value *const *pre;  /* A/B words loaded by ldmatrix (LDM_PRE, step h at + h LDM_STEP), or NULL */
  const ir_instr *mma;   /* with pre: the mma (its registers' conversions: ldm_form) */
} chain_io;
/* The index of register reg of AMD operand ab (0: A, 1: B) of instruction
 * c among an mma's A/B registers that ldmatrix loaded in the scheme's
 * layout (lower_ldm_load; LOWER_LDM_NPRE in all); step h of a chain (tf32's
 * hi and lo, fp8 m16n8k32's two k halves) at + h LDM_STEP */
#define LDM_PRE(c, ab, reg) ((c) * 16u + (ab) * 8u + (reg))
#define LDM_STEP 64u
_Static_assert(LOWER_LDM_NPRE >= 2 * LDM_STEP, "two chained steps of ldmatrix-loaded registers");
typedef struct ldm_form ldm_form;
typedef struct ldm_memo ldm_memo;

/* ---- the schemes: AMD (instruction c, block, index, k) -> NVIDIA -------- */
/* warp-local block: lanes of the warp only (wave64 4x4x4_16b: blocks 8w..8w+7) */
static unsigned local_blk(const scheme *s, unsigned blk) { return s->r->wave == 64 ? blk & 7 : blk; }

/* MFMA 4x4x4_16b: the rows of block-row bm, the k pair of (c, r) */
static unsigned m4_row(unsigned bm, unsigned i) { return 2 * bm + (i & 1) + 8 * (i >> 1); }
/* k pairs c and c + ninst: what thread 4g + c holds (m16n8k16: c, c + 4; m16n8k8: c, c + 2) */
/* s8 (four k per register): instruction c takes k 4t .. 4t + 3 of thread
 * t = c % 4, register group c / 4 (m16n8k32: + 16), one whole register */
static unsigned m4_k(const scheme *s, unsigned c, unsigned k) {
  if (s->per == 4) return 4 * (c % 4) + 16 * (c / 4) + k;
  return 2 * (c + s->ninst * (k >> 1)) + (k & 1);
}

/* WMMA: which column n of D is WMMA row i (transposed; -1: padding), and
 * which k of the problem is WMMA's k.  RDNA3 rows i = 2v + s (v the D
 * register, s = lane >> 4) are n = 4s + v; RDNA4 rows i = 8s + v, v < 4, are
 * n = 4s + v: a lane's four D registers are then columns 2t, 2t+1 pairs as
 * a thread holds them.  RDNA4 k: register r, half-wave s, half h -> pair
 * 4 (r & 1) + 2 s + (r >> 1), so the B^T register a lane reads is the same
 * for every lane. */
static int wm_n(const scheme *s, unsigned i) {
  if (s->r->layout == IR_AMX_L_WMMA_GFX11) return i < 8 ? (int)(4 * (i & 1) + (i >> 1)) : -1;
  return (i & 7) < 4 ? (int)(4 * (i >> 3) + (i & 7)) : -1;
}
static unsigned wm_k(const scheme *s, unsigned k) {
  if (s->r->layout != IR_AMX_L_WMMA_GFX12) return k;   /* RDNA3; RDNA4's iu8: a lane's bytes are 4 consecutive k */
  unsigned p = 4 * ((k >> 1) & 1) + 2 * ((k >> 2) & 1) + (k >> 3);
  return 2 * p + (k & 1);
}

/* Element x (row i of AMD's A, or column j of AMD's B), k, of block blk in
 * instruction c. */
static nv_elem amd_ab(const scheme *s, bool is_b, unsigned c, unsigned blk, unsigned x, unsigned k) {
  if (s->r->layout == IR_AMX_L_MFMA_4X4_16B) {
    unsigned b = local_blk(s, blk), bm = b >> 1, bn = b & 1, kk = m4_k(s, c, k);
    return is_b ? (nv_elem){NV_B, (uint8_t)kk, (uint8_t)(4 * bn + x)} : (nv_elem){NV_A, (uint8_t)m4_row(bm, x), (uint8_t)kk};
  }
  unsigned kk = wm_k(s, k) + 16 * c;   /* s8 m16n8k32: two WMMA, k 16c .. 16c + 15 */
  if (kk >= s->k) return (nv_elem){NV_ZERO, 0, 0};
  if (!is_b) {   /* B^T: row x of AMD's A is column n of B */
    int n = wm_n(s, x);
    return n < 0 ? (nv_elem){NV_PAD, 0, 0} : (nv_elem){NV_B, (uint8_t)kk, (uint8_t)n};
  }
  return (nv_elem){NV_A, (uint8_t)x, (uint8_t)kk};   /* A^T: column x of AMD's B is row m of A */
}
/* Element (i, j) of C/D of block blk: (row, col) of NVIDIA's C/D. */
static nv_elem amd_cd(const scheme *s, unsigned blk, unsigned i, unsigned j) {
  if (s->r->layout == IR_AMX_L_MFMA_4X4_16B) {
    unsigned b = local_blk(s, blk);
    return (nv_elem){NV_C, (uint8_t)m4_row(b >> 1, i), (uint8_t)(4 * (b & 1) + j)};
  }
  int n = wm_n(s, i);
  return n < 0 ? (nv_elem){NV_PAD, 0, 0} : (nv_elem){NV_C, (uint8_t)j, (uint8_t)n};
}

/* ---- NVIDIA's layouts, inverted: (row, col) -> (thread, element) ------- */
typedef struct nv_inv { uint8_t lane[32][32], elem[32][32]; } nv_inv;   /* up to 16 x 32 (s8 k32) */
static void invert(const ir_mma_frag *f, nv_inv *v) {
  memset(v, 0xff, sizeof *v);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned e = 0; e < f->nelem; e++) {
      unsigned r, c;
      ir_mma_elem(f, l, e, &r, &c);
      v->lane[r][c] = (uint8_t)l, v->elem[r][c] = (uint8_t)e;
    }
}

/* ---- lane maps and their emission --------------------------------------- */
#define ANY 0xff
/* For each lane of the warp (0..31): the source lane and the candidate
 * value index (ANY: padding, any value will do). */
typedef struct lane_map { uint8_t src[32], val[32]; } lane_map;

typedef struct amd_ctx {
  ir_builder *b;
  bool dry;                     /* only check that every map can be built */
  ir_value *laneid;
  unsigned shuffles, selects;   /* what was built, for the docs' counts */
  /* chains of instructions of one scheme (fp8, tf32): the accumulator in
   * AMD's C layout, taken as C instead of gathering NVIDIA's C (in), and
   * handed on instead of D going back to NVIDIA's layout (out) */
  ir_value *const *acc_in;
  ir_value **acc_out;
  bool keep_d;   /* with acc_out: D goes back to NVIDIA's layout too */
  struct lane_memo *memo;   /* lane functions built for this mma (NULL: none kept) */
  ir_value *const *pre;     /* A/B words an ldmatrix loaded in this layout (LDM_PRE), or NULL */
  const ldm_form *lf;       /* with pre: how each register is made from its word (ldm_at_mma) */
  unsigned step;            /* ... in this step of the chain */
  ldm_memo *cm;             /* ... the conversions built for this mma */
} amd_ctx;

/* Register reg of AMD operand ab of instruction c made from w, the word its
 * ldmatrix loaded for it (lower_mma_amd_ldm_load): the per-element conversion
 * of the mma's path (ldm_src), at the mma. */
static ir_value *ldm_at_mma(amd_ctx *X, const nv_inv *inv_a, const nv_inv *inv_b, unsigned c, unsigned ab,
                            unsigned reg, ir_value *w);
static bool ldm_form_init(const ir_instr *mma, ldm_form *F);

/* The lane functions one mma has built, each reused by the later gathers of
 * the same mma (its code is one straight run in one block, so the first
 * dominates the others): a few distinct maps serve its 40 or so shuffles,
 * and building each once keeps the IR, and the compile time of modules with
 * hundreds of mma, down. */
typedef struct lane_memo {
  unsigned n;
  uint8_t f[24][32];
  ir_value *v[24];
} lane_memo;

typedef struct ldm_memo {
  ir_value *laneid;
  lane_memo fn;                          /* lane functions */
  unsigned na, nl, ncv;
  uint8_t af[16][32], lf[32][65];        /* shuffled row addresses by source lane; loads by (source, byte, width) */
  ir_value *av[16], *lv[32];
  ir_value *cin[32], *cout[32];          /* conversions (ldm_conv): by loaded word and kind */
  uint16_t ck[32];
  unsigned ne;                           /* per-thread arithmetic applied (ldm_apply): by value and word */
  const ir_value *ev[128];
  ir_value *ew[128], *eout[128];
} ldm_memo;

/* How an mma's A/B registers reach its scheme: the scheme's own f16/bf16
 * form vf (elements vt), in steps chained steps, each of whose registers is
 * made in its own thread from one register of the mma (ldm_src): as it is
 * (f16, bf16), split into bf16 hi/lo (tf32: lower_tf32) or half of a word of
 * fp8 bytes widened to f16x2 (lower_f8).  Every conversion is per element of
 * the word it reads, so an AMD lane loads the word its register is made from
 * (at the ldmatrix) and converts it itself (at the mma: ldm_at_mma). */
enum { LC_COPY, LC_TF32_A, LC_TF32_BH, LC_TF32_BL, LC_F8_LO, LC_F8_HI };
typedef struct ldm_form {
  scheme s;
  const ir_mma_form *f, *vf;
  ir_type vt, ta, tb;
  unsigned steps, na, nb, vna, vnb;   /* the mma's A/B registers, the scheme form's */
} ldm_form;


static ir_value *imm(ir_builder *b, uint32_t v) { return lower_imm32(b, v); }

/* f(lane) for the lanes whose entry is not ANY, as an expression of %laneid
 * when every bit of f is a bit of the lane, its complement or a constant;
 * NULL otherwise. */
static ir_value *lane_fn(amd_ctx *X, const uint8_t *f) {
  int srcbit[6];
  uint32_t cst = 0, neg = 0;
  bool any = false;
  for (unsigned o = 0; o < 6; o++) {
    int found = -3;
    for (int q = -2; q < 10 && found == -3; q++) {   /* -2: 0, -1: 1, 0..4 lane bit, 5..9 its complement */
      bool ok = true;
      for (unsigned l = 0; l < 32 && ok; l++) {
        if (f[l] == ANY) continue;
        unsigned bit = (f[l] >> o) & 1, want = q == -2 ? 0 : q == -1 ? 1 : q < 5 ? (l >> q) & 1 : ((l >> (q - 5)) & 1) ^ 1;
        ok = bit == want;
      }
      if (ok) found = q;
    }
    if (found == -3) return NULL;
    srcbit[o] = found;
    if (found == -1) cst |= 1u << o;
    if (found >= 5) neg |= 1u << o, srcbit[o] = found - 5;
    if (found >= 0) any = true;
  }
  ir_builder *b = X->b;
  if (X->dry) return X->laneid;
  if (!any) return imm(b, cst);
  lane_memo *mm = X->memo;
  if (mm)
    for (unsigned k = 0; k < mm->n; k++)
      if (!memcmp(mm->f[k], f, 32)) return mm->v[k];
  ir_value *acc = NULL;
  for (int sh = -5; sh <= 5; sh++) {   /* output bit o = lane bit o - sh ... grouped by shift */
    uint32_t mask = 0;
    for (unsigned o = 0; o < 6; o++)
      if (srcbit[o] >= 0 && (int)o - srcbit[o] == sh) mask |= 1u << o;
    if (!mask) continue;
    ir_value *t = sh > 0 ? lower_alu(b, ir_op_shl, ir_type_b32, X->laneid, imm(b, (uint32_t)sh))
                : sh < 0 ? lower_alu(b, ir_op_shr, ir_type_b32, X->laneid, imm(b, (uint32_t)-sh))
                         : X->laneid;
    t = lower_alu(b, ir_op_and, ir_type_b32, t, imm(b, mask));
    acc = acc ? lower_alu(b, ir_op_or, ir_type_b32, acc, t) : t;
  }
  if (neg) acc = lower_alu(b, ir_op_xor, ir_type_b32, acc, imm(b, neg));
  if (cst) acc = lower_alu(b, ir_op_or, ir_type_b32, acc, imm(b, cst));
  if (mm && mm->n < 24) {
    memcpy(mm->f[mm->n], f, 32);
    mm->v[mm->n++] = acc;
  }
  return acc;
}

static ir_value *shfl(amd_ctx *X, ir_value *v, ir_value *src) {
  X->shuffles++;
  if (X->dry) return v;
  return ir_shfl(X->b, ir_type_b32, v, src, imm(X->b, 0x1f), imm(X->b, 0xffffffffu), .shfl = IR_SHFL_IDX, .sync = 1);
}

/* sel = f(lane) picks among vals[cands[0..n)]: a chain of selects. */
static ir_value *select_by(amd_ctx *X, ir_value *const *vals, const uint8_t *cands, unsigned n, ir_value *sel) {
  ir_value *r = vals[cands[0]];
  for (unsigned k = 1; k < n; k++) {
    X->selects++;
    if (X->dry) continue;
    ir_value *p = lower_setp(X->b, IR_CMP_EQ, ir_type_u32, sel, imm(X->b, cands[k]));
    r = lower_selp(X->b, ir_type_b32, vals[cands[k]], r, p);
  }
  return r;
}

/* Every lane's value vals[map.val[lane]] of lane map.src[lane]; NULL when a
 * lane function cannot be built. */
static ir_value *gather(amd_ctx *X, const lane_map *M, ir_value *const *vals) {
  uint8_t cands[16];
  unsigned n = 0;
  bool identity = true;
  for (unsigned l = 0; l < 32; l++) {
    if (M->val[l] == ANY) continue;
    if (M->src[l] != l) identity = false;
    unsigned k = 0;
    while (k < n && cands[k] != M->val[l]) k++;
    if (k == n) cands[n++] = M->val[l];
  }
  if (!n) return vals[0];
  ir_value *src = identity ? NULL : lane_fn(X, M->src);
  if (!identity && !src) return NULL;
  if (n == 1) return identity ? vals[cands[0]] : shfl(X, vals[cands[0]], src);
  /* the source picks, when what a lane reads depends only on its source */
  uint8_t by_src[32];
  memset(by_src, ANY, sizeof by_src);
  bool src_pick = true;
  for (unsigned l = 0; l < 32 && src_pick; l++) {
    if (M->val[l] == ANY) continue;
    if (by_src[M->src[l]] != ANY && by_src[M->src[l]] != M->val[l]) src_pick = false;
    by_src[M->src[l]] = M->val[l];
  }
  if (src_pick) {
    ir_value *f = lane_fn(X, by_src);
    if (f) {
      ir_value *z = select_by(X, vals, cands, n, f);
      return identity ? z : shfl(X, z, src);
    }
  }
  ir_value *f = lane_fn(X, M->val);
  if (!f) return NULL;
  ir_value *got[16];
  for (unsigned k = 0; k < n; k++) got[cands[k]] = identity ? vals[cands[k]] : shfl(X, vals[cands[k]], src);
  return select_by(X, got, cands, n, f);
}

/* ---- the pass's entry ----------------------------------------------------- */
/* The scheme for an mma of form f with A/B elements of type ta (f32
 * accumulation; f16 C and D are converted around it) on target, or false. */
static bool pick(const ir_mma_form *f, ir_type ta, const char *target, scheme *s) {
  if (f && f->cls == IR_MMA_I8) {
    /* the signed x signed row: the i8 MFMA (u8 operands split) or the iu8
     * WMMA (lower_i8 takes the row of the operands' signs).  WMMA:
     * transposed like f16, one instruction per 16 k */
    (void)ta;
    int row = ir_amx_find(target, ir_type_s8, ir_type_s32, 4, 4, 4);
    if (row >= 0) {
      *s = (scheme){ir_amx_info_of((unsigned)row), (unsigned)row, f->k / 4u, f->k, false, 4};
      return true;
    }
    row = ir_amx_find(target, ir_type_s8, ir_type_s32, 16, 16, 16);
    if (row < 0 || ir_amx_info_of((unsigned)row)->wave != 32) return false;
    *s = (scheme){ir_amx_info_of((unsigned)row), (unsigned)row, f->k / 16u, f->k, true, 4};
    return true;
  }
  if (!f || (f->shape != IR_SHAPE_M16N8K16 && f->shape != IR_SHAPE_M16N8K8) || f->cls != IR_MMA_F16 ||
      (ta != ir_type_f16 && ta != ir_type_bf16))
    return false;
  int row = ir_amx_find(target, ta, ir_type_f32, 4, 4, 4);
  if (row >= 0) {
    *s = (scheme){ir_amx_info_of((unsigned)row), (unsigned)row, f->k / 4u, f->k, false, 2};
    return true;
  }
  row = ir_amx_find(target, ta, ir_type_f32, 16, 16, 16);
  if (row >= 0 && ir_amx_info_of((unsigned)row)->wave == 32) {
    *s = (scheme){ir_amx_info_of((unsigned)row), (unsigned)row, 1, f->k, true, 2};
    return true;
  }
  return false;
}

/* The lane map of register reg of AMD operand ab (0: A, 1: B) of
 * instruction c: for each lane, the thread and NVIDIA register (A 0..na-1,
 * B from na; zero: the constant 0) that hold its elements; false when a
 * register's parts are split between threads or registers (the scheme does
 * not fit). */
static bool ab_map(const scheme *sp, const nv_inv *inv_a, const nv_inv *inv_b, unsigned na, unsigned zero, unsigned c,
                   unsigned ab, unsigned reg, lane_map *M) {
  const scheme s = *sp;
  for (unsigned l = 0; l < 32; l++) {
    M->src[l] = M->val[l] = ANY;
    int th = -1, rg = -1;
    bool ok = true, pad = true;
    for (unsigned h = 0; h < s.per; h++) {
      unsigned blk, x, k;
      ir_amx_ab_elem(s.r, l, reg, h, &blk, &x, &k);
      nv_elem e = amd_ab(&s, ab, c, blk, x, k);
      if (e.what == NV_PAD) continue;
      pad = false;
      int ln, reg_nv;
      unsigned el = h;
      if (e.what == NV_ZERO) {   /* k past the form's K: the constant 0, read in place */
        ln = (int)l, reg_nv = (int)zero;
      } else {
        const nv_inv *v = e.what == NV_A ? inv_a : inv_b;
        el = v->elem[e.row][e.col], ln = v->lane[e.row][e.col];
        reg_nv = (e.what == NV_A ? 0 : (int)na) + (int)(el / s.per);
      }
      if (el % s.per != h || (th >= 0 && (th != ln || rg != reg_nv))) ok = false;
      th = ln, rg = reg_nv;
    }
    if (!ok) return false;
    if (!pad) M->src[l] = (uint8_t)th, M->val[l] = (uint8_t)rg;
  }
  return true;
}

/* Builds the scheme's code for the mma of form f whose A and B registers
 * (A/B elements of types ta, tb) are ab[], its C elements (f32) cv[0..3]
 * (NULL: C = 0), its D elements (the row's C type) into d[0..3] (dry:
 * only checks that it can be built). */
static bool build(amd_ctx *ctx, const scheme *sp, const ir_mma_form *f, ir_type ta, ir_type tb, ir_value *const *ab,
                  ir_value *const *cv, ir_value **d) {
  amd_ctx X = *ctx;
  ir_builder *b = X.b;
  scheme s = *sp;
  const ir_amx_info *r = s.r;
  nv_inv inv_a, inv_b, inv_c;
  invert(ir_mma_frag_info((ir_mma_frag_id)f->a), &inv_a);
  invert(ir_mma_frag_info((ir_mma_frag_id)f->b), &inv_b);
  invert(ir_mma_frag_info((ir_mma_frag_id)f->c), &inv_c);
  /* NVIDIA's registers (.f16x2/.bf16x2 pairs): A na, B nb, C 4, then 0; one value list */
  unsigned na = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->a)->nelem, ta);
  unsigned nb = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->b)->nelem, tb);
  ir_value *nv[12];
  for (unsigned k = 0; k < na + nb; k++) nv[k] = ab[k];
  for (unsigned k = 0; k < 4; k++) nv[na + nb + k] = cv ? cv[k] : ab[0];
  nv[na + nb + 4] = X.dry ? X.laneid : imm(b, 0);
  const uint8_t zero = (uint8_t)(na + nb + 4);
  /* lanes of the warp: wave32 the wave; wave64 the warp's half (lane 32w + l) */
  ir_value *ops[2][8], *acc[8];
  for (unsigned k = 0; k < 8; k++) acc[k] = X.dry ? X.laneid : NULL;
  for (unsigned c = 0; c < s.ninst; c++) {
    for (unsigned ab = 0; ab < 2; ab++) {
      unsigned nreg = ab ? r->nb : r->na;
      for (unsigned reg = 0; reg < nreg; reg++) {
        if (X.pre && X.pre[LDM_PRE(c, ab, reg)]) {   /* loaded by an ldmatrix in this layout */
          ops[ab][reg] = X.lf ? ldm_at_mma(&X, &inv_a, &inv_b, c, ab, reg, X.pre[LDM_PRE(c, ab, reg)])
                              : X.pre[LDM_PRE(c, ab, reg)];
          continue;
        }
        lane_map M;
        if (!ab_map(&s, &inv_a, &inv_b, na, zero, c, ab, reg, &M)) return false;
        ir_value *v = gather(&X, &M, nv);
        if (!v) return false;
        ops[ab][reg] = v;
      }
    }
    if (c == 0) {
      for (unsigned reg = 0; reg < r->nc; reg++) {
        if (X.acc_in) {   /* the previous step's accumulator, in place */
          acc[reg] = X.acc_in[reg];
          continue;
        }
        if (!cv) {   /* C = 0 */
          acc[reg] = X.dry ? X.laneid : imm(b, 0);
          continue;
        }
        lane_map M;
        for (unsigned l = 0; l < 32; l++) {
          unsigned blk, ii, jj;
          ir_amx_cd_elem(r, l, reg, &blk, &ii, &jj);
          nv_elem e = amd_cd(&s, blk, ii, jj);
          M.src[l] = M.val[l] = ANY;
          if (e.what == NV_PAD) continue;
          M.src[l] = inv_c.lane[e.row][e.col];
          M.val[l] = (uint8_t)(na + nb + inv_c.elem[e.row][e.col]);
        }
        ir_value *v = gather(&X, &M, nv);
        if (!v) return false;
        acc[reg] = v;
      }
    }
    ir_value *src[1 + 8 + 8 + 8];
    unsigned n = 0;
    src[n++] = X.dry ? X.laneid : imm(b, s.row);   /* a dry run builds nothing, not even a constant */
    for (unsigned k = 0; k < r->na; k++) src[n++] = ops[0][k];
    for (unsigned k = 0; k < r->nb; k++) src[n++] = ops[1][k];
    for (unsigned k = 0; k < r->nc; k++) src[n++] = acc[k];
    ir_type dt[8];
    for (unsigned k = 0; k < r->nc; k++) dt[k] = ir_type_b32;
    if (X.dry) continue;
    ir_instr *w = ir_build(b, ir_op_wave_mma, ir_type_b32, n, src, r->nc, dt, NULL);
    for (unsigned k = 0; k < r->nc; k++) acc[k] = w->dst[k];
  }
  if (X.acc_out) {   /* the next step takes the accumulator as it is */
    for (unsigned k = 0; k < r->nc; k++) X.acc_out[k] = acc[k];
    if (!X.keep_d) {
      ctx->shuffles = X.shuffles, ctx->selects = X.selects;
      return true;
    }
  }
  /* D back: thread T's element e is AMD D (blk, i, j) of the last instruction */
  for (unsigned e = 0; e < 4; e++) {
    lane_map M;
    for (unsigned t = 0; t < 32; t++) {
      unsigned row, col;
      ir_mma_elem(ir_mma_frag_info(IR_MMA_FRAG_C_M16N8), t, e, &row, &col);
      M.src[t] = M.val[t] = ANY;
      for (unsigned l = 0; l < 32 && M.src[t] == ANY; l++)
        for (unsigned reg = 0; reg < r->nc; reg++) {
          unsigned blk, ii, jj;
          ir_amx_cd_elem(r, l, reg, &blk, &ii, &jj);
          nv_elem x = amd_cd(&s, blk, ii, jj);
          if (x.what == NV_C && x.row == row && x.col == col) {
            M.src[t] = (uint8_t)l, M.val[t] = (uint8_t)reg;
            break;
          }
        }
      if (M.src[t] == ANY) return false;
    }
    ir_value *v = gather(&X, &M, acc);
    if (!v) return false;
    if (!X.dry) d[e] = ir_alu1(b, ir_op_copy, (ir_type)r->tc, v);
  }
  ctx->shuffles = X.shuffles, ctx->selects = X.selects;
  return true;
}

/* The scheme's code for form f (A/B registers ab[], C elements cv[], f32),
 * D elements into d[]: a dry run first, so a scheme that does not fit
 * leaves no code behind. */
static bool build_checked(ir_builder *b, const scheme *s, const ir_mma_form *f, ir_type ta, ir_value *const *ab,
                          ir_value *const *cv, ir_value **d) {
  amd_ctx X = {.b = b, .dry = true};
  X.laneid = (ir_value *)&X;   /* any non-NULL value: nothing is built */
  ir_value *dry[12];
  for (unsigned k = 0; k < 12; k++) dry[k] = X.laneid;
  ir_value *dd[4];
  if (!build(&X, s, f, ta, ta, dry, cv ? dry : NULL, dd)) return false;
  lane_memo memo = {0};
  X = (amd_ctx){.b = b, .laneid = ir_read_sreg(b, ir_sreg_laneid, 0), .memo = &memo};
  return build(&X, s, f, ta, ta, ab, cv, d);
}

/* steps chained mma of one scheme, D = mma(ab[n-1], ..., mma(ab[0], C)),
 * the accumulator kept in AMD's C layout between them: C gathered once,
 * D gathered back once (a step's D and the next step's C are the same
 * registers in the same layout: no shuffle between steps).  A dry run
 * first, as build_checked. */
/* io (may be NULL): io->in, when set, is the accumulator of an earlier mma
 * in this scheme's C layout, taken as C (no C gathered); io->out receives
 * the last step's accumulator (D is gathered back all the same). */
static bool build_chain(ir_builder *b, const scheme *s, const ir_mma_form *f, ir_type ta, ir_value *const *const *ab,
                        unsigned steps, ir_value *const *cv, ir_value **d, const chain_io *io) {
  amd_ctx X = {.b = b, .dry = true};
  X.laneid = (ir_value *)&X;
  ir_value *dry[12], *dd[4];
  for (unsigned k = 0; k < 12; k++) dry[k] = X.laneid;
  if (!build(&X, s, f, ta, ta, dry, cv ? dry : NULL, dd)) return false;
  ir_value *laneid = ir_read_sreg(b, ir_sreg_laneid, 0);
  ir_value *acc[2][8];
  lane_memo memo = {0};
  ldm_form lf;
  ldm_memo cm;
  bool conv = io && io->pre && ldm_form_init(io->mma, &lf);
  if (conv) cm = (ldm_memo){0}, lf.s = *s;
  for (unsigned h = 0; h < steps; h++) {
    bool last = h + 1 == steps;
    X = (amd_ctx){.b = b, .laneid = laneid, .memo = &memo, .acc_in = h ? acc[(h - 1) & 1] : io ? io->in : NULL,
                  .acc_out = !last ? acc[h & 1] : io ? io->out : NULL, .keep_d = last,
                  .pre = io && io->pre ? io->pre + h * LDM_STEP : NULL, .lf = conv ? &lf : NULL, .step = h, .cm = &cm};
    if (!build(&X, s, f, ta, ta, ab[h], cv, d)) return false;
  }
  return true;
}

static ir_value *and32(ir_builder *b, ir_value *x, uint32_t m) { return lower_alu(b, ir_op_and, ir_type_b32, x, imm(b, m)); }
static ir_value *or32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_or, ir_type_b32, x, y); }
static ir_value *shr16(ir_builder *b, ir_value *x) { return lower_alu(b, ir_op_shr, ir_type_b32, x, imm(b, 16)); }

/* Whether mma operand v came from an ldmatrix that loaded it straight into
 * the scheme's layout (io->pre; lower_ldm_plan takes an mma's ldmatrix
 * operands all or none): its NVIDIA register is left undefined and nothing
 * reads it, so it is not converted. */
static bool ldm_fed(const chain_io *io, const ir_value *v) { return io && io->pre && (lower_ldm_of(v) || lower_ldm_phi(v)); }

/* A tf32 operand (its tf32 bits: the low 13 cleared, PTX ISA 9.7.14.5.14)
 * as two bf16, hi + lo = x exactly: hi its top 16 bits (sign, exponent,
 * 7 of the 10 mantissa bits), lo = x - hi (exact in f32: at most the 3
 * low mantissa bits, which a bf16 holds; for |x| >= 2^-116 lo is a normal
 * bf16).  Inf and NaN: hi is x as a bf16 (a NaN made quiet, so that a NaN
 * whose payload was only in the low bits stays a NaN), lo 0. */
static void split_tf32(ir_builder *b, ir_value *w, ir_value **hi, ir_value **lo) {
  ir_value *x = and32(b, w, 0xffffe000u);
  ir_value *h = and32(b, x, 0xffff0000u);
  ir_value *l = ir_alu2(b, ir_op_sub, ir_type_f32, x, h, .rnd = IR_RND_RN);
  ir_value *exp = and32(b, x, 0x7f800000u);
  ir_value *finite = lower_setp(b, IR_CMP_NE, ir_type_u32, exp, imm(b, 0x7f800000u));
  ir_value *nan = lower_setp(b, IR_CMP_GT, ir_type_u32, and32(b, x, 0x7fffffffu), imm(b, 0x7f800000u));
  *hi = lower_selp(b, ir_type_b32, or32(b, h, imm(b, 0x00400000u)), h, nan);
  *lo = lower_selp(b, ir_type_b32, and32(b, l, 0xffff0000u), imm(b, 0), finite);
}

/* mma.m16n8k8.row.col.f32.tf32.tf32.f32 as two m16n8k16 .bf16 on the
 * target's bf16 scheme: a * b = (ah + al) * b, b = bh + bl, so with the
 * problem's k' = 2t + s + 8u standing for k = t + 4u, part s (0: hi, 1: lo)
 * of A, D = C + A' B1 + A' B2 where A'[.][k'] = part s of A[.][k] and B1
 * (B2) holds bh (bl) of B[k] at both k' of k.  A thread's tf32 registers
 * are exactly the k it needs (A: a_r at k = t + 4 (r >> 1), B: b_r at
 * k = t + 4r), so the split is per thread: bf16 A register r = {hi, lo} of
 * a_r, B1 register r = {bh, bh} of b_r, B2 {bl, bl}.  Products are exact in
 * f32; the sum has 32 terms where tf32 has 8, so it agrees bit for bit with
 * the expansion where sums are exact (docs/lowering.md). */
static bool lower_tf32(ir_builder *b, ir_instr *i, const char *target, ir_value *const *cv, ir_value **d,
                       const chain_io *io) {
  /* m16n8k4: the same with m16n8k8 .bf16 (k' = 2t + s for k = t: A a_r at
   * row g + 8r, B b0) */
  bool k4 = i->mods.shape == IR_SHAPE_M16N8K4;
  const ir_mma_form *bf = ir_mma_form_of(k4 ? IR_SHAPE_M16N8K8 : IR_SHAPE_M16N8K16, IR_MMA_F16);
  unsigned na = k4 ? 2 : 4, nb = k4 ? 1 : 2;
  scheme s;
  if (!pick(bf, ir_type_bf16, target, &s)) return false;
  ir_value *ab1[6], *ab2[6];
  for (unsigned r = 0; r < na + nb; r++) ab1[r] = ab2[r] = i->src[r];   /* ldm_fed: never read */
  for (unsigned r = 0; r < na; r++) {
    ir_value *h, *l;
    if (ldm_fed(io, i->src[r])) continue;
    split_tf32(b, i->src[r], &h, &l);
    ab1[r] = ab2[r] = or32(b, shr16(b, h), l);
  }
  for (unsigned r = 0; r < nb; r++) {
    ir_value *h, *l;
    if (ldm_fed(io, i->src[na + r])) continue;
    split_tf32(b, i->src[na + r], &h, &l);
    ab1[na + r] = or32(b, shr16(b, h), h);
    ab2[na + r] = or32(b, shr16(b, l), l);
  }
  return build_chain(b, &s, bf, ir_type_bf16, (ir_value *const *const[]){ab1, ab2}, 2, cv, d, io);
}

/* s8/u8 -> s32 on the i8 MFMA or the iu8 WMMA: the products' sum from C = 0
 * (at most 32 * 255 * 255 in magnitude: exact, no wrap), then + C as the
 * expansion adds it: wrapping, or clamped with .satfinite (PTX ISA
 * 9.7.14.5.14).
 *
 * The iu8 WMMA reads each operand signed or unsigned as its row says
 * (ir_amd_matrix.def's IR_AMD_MATRIX_AB rows): i8_row takes the row whose
 * operand types are the mma's, so .u8 costs nothing there.  The scheme is
 * transposed (WMMA's A is B^T, its B is A^T), so NVIDIA's A type is the
 * row's tb and NVIDIA's B type its ta.
 *
 * The i8 MFMA multiplies signed bytes only.  A u8 byte a is as + 256 ha
 * with as the same byte read signed and ha = a >> 7, so for u8 A (and
 * likewise B)
 *     sum a b = sum as b + 256 sum ha b,
 * ha taken per byte as (w >> 7) & 0x01010101: one more chain of MFMA per
 * unsigned operand (three more for u8 x u8), each exact. */
/* The WMMA scheme s on the row of target for NVIDIA's A/B types ta, tb (the
 * same layout; s unchanged where there is none, and for the MFMA). */
static void i8_row(const char *target, ir_type ta, ir_type tb, scheme *s) {
  if (!s->transposed) return;
  int row = ir_amx_find_ab(target, tb, ta, ir_type_s32, s->r->m, s->r->n, s->r->k);
  if (row < 0 || ir_amx_info_of((unsigned)row)->layout != s->r->layout) return;
  s->r = ir_amx_info_of((unsigned)row), s->row = (unsigned)row;
}

static bool lower_i8(ir_builder *b, ir_instr *i, const ir_mma_form *f, const scheme *s0, unsigned na, unsigned nb,
                     const char *target, ir_value **out) {
  ir_type ta = (ir_type)i->type2, tb = (ir_type)i->type3;
  scheme sv = *s0, *s = &sv;
  i8_row(target, ta, tb, s);
  /* an unsigned operand the row reads signed: split (NVIDIA's A is the row's B when transposed) */
  bool ua = ta == ir_type_u8 && ir_amx_signed(s->r, s->transposed);
  bool ub = tb == ir_type_u8 && ir_amx_signed(s->r, !s->transposed);
  ir_value *lo[8], *hi[8];
  for (unsigned k = 0; k < na + nb; k++) {
    lo[k] = i->src[k];
    hi[k] = (k < na ? ua : ub) ? and32(b, lower_alu(b, ir_op_shr, ir_type_b32, i->src[k], imm(b, 7)), 0x01010101u) : NULL;
  }
  ir_value *p[4] = {NULL, NULL, NULL, NULL};
  for (unsigned ha = 0; ha <= (unsigned)ua; ha++)
    for (unsigned hb = 0; hb <= (unsigned)ub; hb++) {
      ir_value *ab[8], *d[4];
      for (unsigned k = 0; k < na; k++) ab[k] = ha ? hi[k] : lo[k];
      for (unsigned k = na; k < na + nb; k++) ab[k] = hb ? hi[k] : lo[k];
      if (!build_checked(b, s, f, ir_type_s8, ab, NULL, d)) return false;
      unsigned sh = 8 * (ha + hb);
      for (unsigned e = 0; e < 4; e++) {
        ir_value *t = sh ? lower_alu(b, ir_op_shl, ir_type_b32, d[e], imm(b, sh)) : d[e];
        p[e] = p[e] ? lower_alu(b, ir_op_add, ir_type_s32, p[e], t) : t;
      }
    }
  for (unsigned e = 0; e < 4; e++)
    out[e] = ir_alu2(b, ir_op_add, ir_type_s32, i->src[na + nb + e], p[e], .sat = i->mods.satfinite);
  return true;
}

/* Register w of sm_120a's .kind::f8f6f4 fp6/fp4 bytes (k = 4t + byte) as
 * two f16x2 registers, lo = bytes 0 and 1, hi = bytes 2 and 3.  The value
 * is in bits 5..0 (e3m2, e2m3) or 5..2 (e2m1) of its byte, bit 5 the sign
 * (PTX ISA 9.7.14.5.10); these formats have no infinity and no NaN and
 * every value is an f16 value.  The magnitude bits moved so that the
 * format's exponent field lands in the low bits of f16's and its mantissa
 * at the top of f16's read, as an f16, v * 2^(bias - 15) (normal: 1.m *
 * 2^(e - 15); e = 0: 0.m * 2^-14, an f16 subnormal), so one exact
 * mul.rn.f16x2 by 2^(15 - bias) gives v for both halves: with the sign,
 * six integer ops and one packed multiply per pair. */
static void widen_f6f4(ir_builder *b, ir_type t, ir_value *w, ir_value **lo, ir_value **hi) {
  unsigned sh = t == ir_type_e3m2 ? 8 : 7;
  uint32_t mag = t == ir_type_e2m1 ? 0x001c001cu : 0x001f001fu;
  uint32_t scale = t == ir_type_e3m2 ? 0x6c006c00u : 0x74007400u;   /* 2^12, 2^14 */
  for (unsigned h = 0; h < 2; h++) {
    /* bytes 2h and 2h + 1 into the low bytes of the two halves */
    ir_value *b0 = h ? and32(b, shr16(b, w), 0xff) : and32(b, w, 0xff);
    ir_value *b1 = h ? and32(b, lower_alu(b, ir_op_shr, ir_type_b32, w, imm(b, 8)), 0x00ff0000u)
                     : and32(b, lower_alu(b, ir_op_shl, ir_type_b32, w, imm(b, 8)), 0x00ff0000u);
    ir_value *x = or32(b, b0, b1);
    ir_value *m = lower_alu(b, ir_op_shl, ir_type_b32, and32(b, x, mag), imm(b, sh));
    ir_value *sg = lower_alu(b, ir_op_shl, ir_type_b32, and32(b, x, 0x00200020u), imm(b, 10));
    ir_value *v = ir_alu2(b, ir_op_mul, ir_type_f16x2, or32(b, m, sg), imm(b, scale), .rnd = IR_RND_RN);
    if (h) *hi = v;
    else *lo = v;
  }
}

/* Register w of e4m3/e5m2 bytes (k = 4t + byte) as two f16x2 registers:
 * lo = bytes 0 and 1, hi = bytes 2 and 3, each by cvt.rn.f16x2.{e4m3x2,
 * e5m2x2} (PTX ISA 9.7.9.21), which lower_math makes bit-exact (every fp8
 * value, subnormals included, is an f16 value: e4m3's range is 2^-9 .. 448,
 * e5m2's 2^-16 .. 57344, f16's 2^-24 .. 65504; NaN stays NaN, e5m2's
 * infinities stay infinities). */
static void widen_f8(ir_builder *b, ir_type t, ir_value *w, ir_value **lo, ir_value **hi) {
  if (t == ir_type_e3m2 || t == ir_type_e2m3 || t == ir_type_e2m1) {
    widen_f6f4(b, t, w, lo, hi);
    return;
  }
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, &w, 2, (ir_type[]){ir_type_b16, ir_type_b16}, NULL);
  ir_type from = t == ir_type_e4m3 ? ir_type_e4m3x2 : ir_type_e5m2x2;
  *lo = ir_convert(b, ir_type_f16x2, from, u->dst[0], .rnd = IR_RND_RN);
  *hi = ir_convert(b, ir_type_f16x2, from, u->dst[1], .rnd = IR_RND_RN);
}

/* mma.m16n8k{32,16}.row.col.{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2}.{f32,f16}
 * as one (k16) or two (k32) m16n8k16 .f16 on the target's f16 scheme,
 * chained through C in f32, with the bytes widened to f16 in their own
 * thread: no lane exchange beyond the f16 scheme's.  A reordering of k
 * applied to A and B alike leaves D alone, so step h (k 16h .. 16h + 15)
 * takes f16 k' = 2t + e as k = 16h + 4t + e and k' = 8 + 2t + e as
 * k = 16h + 4t + 2 + e (e = 0, 1): a thread's fp8 A register 2h (row g,
 * k 16h + 4t .. + 3) is f16 A registers 0 (its bytes 0, 1) and 2 (bytes
 * 2, 3), register 2h + 1 (row g + 8) f16 registers 1 and 3; fp8 B register
 * h (k 16h + 4t .. + 3, column g) f16 B registers 0 and 1 (fragments:
 * PTX ISA 9.7.14.5.8-10).  Why not the fp8 MFMA: gfx942's
 * v_mfma_f32_16x16x32_fp8 reads FNUZ bytes (bias 8 and 16, one NaN, no
 * infinity: OCP bytes would need re-encoding, and e4m3's 256 .. 448 and
 * e5m2's infinities have no FNUZ value), and both its and gfx950's OCP forms
 * (16x16x32, 32x32x16) spread K over all 64 lanes, so one warp's tile
 * would need the other half's lanes, as xf32 would (docs/lowering.md,
 * "fp8"). */
static bool lower_f8(ir_builder *b, ir_instr *i, const ir_mma_form *f, const char *target, ir_value *const *cv,
                     ir_value **d, const chain_io *io) {
  const ir_mma_form *hf = ir_mma_form_of(IR_SHAPE_M16N8K16, IR_MMA_F16);
  ir_type ta = (ir_type)i->type2, tb = (ir_type)i->type3;
  unsigned steps = f->k / 16u, na = 2 * steps;
  scheme s;
  if (!pick(hf, ir_type_f16, target, &s)) return false;
  ir_value *ab[2][6];
  for (unsigned h = 0; h < steps; h++) {
    static const unsigned reg[3] = {0, 1, 0}, vreg[3][2] = {{0, 2}, {1, 3}, {4, 5}};
    for (unsigned q = 0; q < 3; q++) {
      ir_value *w = i->src[q < 2 ? 2 * h + reg[q] : na + h];
      if (ldm_fed(io, w)) ab[h][vreg[q][0]] = ab[h][vreg[q][1]] = w;   /* never read */
      else widen_f8(b, q < 2 ? ta : tb, w, &ab[h][vreg[q][0]], &ab[h][vreg[q][1]]);
    }
  }
  return build_chain(b, &s, hf, ir_type_f16, (ir_value *const *const[]){ab[0], ab[1]}, steps, cv, d, io);
}

/* The accumulator of an earlier mma in chain whose D registers are this
 * mma's C registers c[0..3], in the same C layout, built in the same block
 * (so that it dominates here: an mma with a guard sits in a block of its
 * own), or NULL. */
static ir_value *const *chain_find(const lower_mma_chain *chain, ir_value *const *c, const scheme *s,
                                   const ir_block *blk) {
  if (!chain) return NULL;
  for (unsigned k = 0; k < LOWER_MMA_CHAIN_N; k++) {
    const struct lower_mma_acc *e = &chain->e[k];
    if (e->block != blk || e->layout != s->r->layout || e->wave != s->r->wave || e->nc != s->r->nc) continue;
    if (e->d[0] == c[0] && e->d[1] == c[1] && e->d[2] == c[2] && e->d[3] == c[3]) return e->acc;
  }
  return NULL;
}

/* Nibbles 4q .. 4q + 3 of w, m16n8k64's packed .e2m1 (k = 8t + 32 (r >> 1)
 * + nibble for A register r), as two f16x2 (nibbles 4q, 4q + 1 and 4q + 2,
 * 4q + 3): spread into the bits 5..2 of four bytes, .kind::f8f6f4's
 * container, and widened as those. */
static void widen_nibbles(ir_builder *b, ir_value *w, unsigned q, ir_value **lo, ir_value **hi) {
  ir_value *x = q ? shr16(b, w) : and32(b, w, 0xffff), *bytes = NULL;
  for (unsigned n = 0; n < 4; n++) {
    ir_value *v = lower_alu(b, ir_op_shl, ir_type_b32, and32(b, x, 0xfu << (4 * n)), imm(b, 2 + 4 * n));
    bytes = bytes ? or32(b, bytes, v) : v;
  }
  widen_f6f4(b, ir_type_e2m1, bytes, lo, hi);
}

/* A scale selector (an immediate, or a .b16/.b32 register) as a u32. */
static ir_value *selector(ir_builder *b, ir_value *v) {
  if (ir_type_bits((ir_type)v->type) == 16) return ir_convert(b, ir_type_u32, ir_type_u16, v);
  return v;
}

/* .kind::mxf4nvf4 .scale_vec::4X .ue4m3 (m16n8k64, blocks of 16 k): step h
 * of the f16 chain (the nibbles of lower_scaled's m16n8k64 steps) holds k
 * 8t + 32 (h >> 1) + 4 (h & 1) + 0..3, of block (t >> 1) + 2 (h >> 1) in
 * thread t: two blocks per step, so the block sums cannot be taken apart.
 * Instead each element is scaled before the MMA, in its own thread: an
 * e2m1 value (2 significant bits, 0.5 .. 6) times a ue4m3 scale (4 bits,
 * 2^-9 .. 448) is exact in f16 (6 bits, 2^-10 .. 2688), and the products
 * of two of them exact in f32, so D = C + sum (a SF_A)(b SF_B) over all 64
 * k in one chain of four steps from C.  Equal to the expansion (block sums
 * scaled and added) where the sums are exact; otherwise the two round
 * differently.  The scales: SF_A of rows g and g + 8 from lanes 4g + 2
 * thread-id-a and + 1, SF_B of column g from lane 4g + thread-id-b (each
 * thread's own row group: a quad broadcast), byte (t >> 1) + 2 (h >> 1)
 * (byte-id is 0 with 4X), as f16 (f8_to_f32 of the low 7 bits, then
 * cvt.rn.f16.f32, exact). */
static bool lower_scaled_4x(ir_builder *b, ir_instr *i, const char *target, ir_value **out) {
  const ir_mma_form *hf = ir_mma_form_of(IR_SHAPE_M16N8K16, IR_MMA_F16);
  scheme s;
  if (!pick(hf, ir_type_f16, target, &s)) return false;
  ir_value *lane = ir_read_sreg(b, ir_sreg_laneid, 0);
  ir_value *quad = and32(b, lane, 0x1c);
  ir_value *tida = lower_alu(b, ir_op_shl, ir_type_b32, and32(b, selector(b, i->src[12]), 1), imm(b, 1));
  ir_value *la = or32(b, quad, tida);
  ir_value *la8 = or32(b, la, imm(b, 1));
  ir_value *lb = or32(b, quad, and32(b, selector(b, i->src[15]), 3));
  ir_value *sw[3];
  ir_value *src[3] = {la, la8, lb};
  for (unsigned k = 0; k < 3; k++)
    sw[k] = ir_shfl(b, ir_type_b32, i->src[k < 2 ? 10 : 13], src[k], imm(b, 0x1f), imm(b, 0xffffffffu),
                    .shfl = IR_SHFL_IDX, .sync = 1);
  /* byte (t >> 1) of the pair 2 (h >> 1): shift 8 ((lane >> 1) & 1) + 16 (h >> 1) */
  ir_value *tsh = lower_alu(b, ir_op_shl, ir_type_b32, and32(b, lane, 2), imm(b, 2));
  ir_value *ab[4][6];
  for (unsigned h = 0; h < 4; h++) {
    ir_value *sc[3];
    for (unsigned k = 0; k < 3; k++) {
      ir_value *sh = h >> 1 ? lower_alu(b, ir_op_add, ir_type_u32, tsh, imm(b, 16)) : tsh;
      ir_value *byte = and32(b, lower_alu(b, ir_op_shr, ir_type_b32, sw[k], sh), 0x7f);
      ir_value *f = ir_convert(b, ir_type_f16, ir_type_f32, lower_f8_to_f32(b, ir_type_e4m3, byte, 0), .rnd = IR_RND_RN);
      sc[k] = ir_build_value(b, ir_op_pack, ir_type_b32, 2, (ir_value *[]){f, f}, NULL);
    }
    widen_nibbles(b, i->src[2 * (h >> 1)], h & 1, &ab[h][0], &ab[h][2]);
    widen_nibbles(b, i->src[2 * (h >> 1) + 1], h & 1, &ab[h][1], &ab[h][3]);
    widen_nibbles(b, i->src[4 + (h >> 1)], h & 1, &ab[h][4], &ab[h][5]);
    static const unsigned which[6] = {0, 1, 0, 1, 2, 2};   /* row g, row g + 8, column g */
    for (unsigned r = 0; r < 6; r++)
      ab[h][r] = ir_alu2(b, ir_op_mul, ir_type_f16x2, ab[h][r], sc[which[r]], .rnd = IR_RND_RN);
  }
  return build_chain(b, &s, hf, ir_type_f16, (ir_value *const *const[]){ab[0], ab[1], ab[2], ab[3]}, 4, &i->src[6],
                     out, NULL);
}

/* Block-scaled mma (PTX ISA 9.7.14.3) with ue8m0 scales: .kind::mxf8f6f4
 * (m16n8k32, one scale block) and .kind::mxf4 / mxf4nvf4 .scale_vec::2X
 * (m16n8k64, two blocks of 32 k) as f16 m16n8k16 steps of the widened
 * elements, chained per block from C = 0 (lower_f8's steps for m16n8k32;
 * for m16n8k64 step h takes nibbles 4 (h & 1) .. + 3 of A registers
 * 2 (h >> 1) (row g) and 2 (h >> 1) + 1 (row g + 8) and of B register
 * h >> 1, k = 8t + 32 (h >> 1) + 4 (h & 1) + 0..3 alike in A and B, so
 * steps 0-1 are block 0 and steps 2-3 block 1), then each block's sum
 * scaled as the expansion scales it (lower_mma_scale_term: SF_A * SF_B * p
 * in f64, rounded once) and added to C in block order: bit-identical to the
 * expansion where the block sums are exact.  .scale_vec::4X: above. */
static bool lower_scaled(ir_builder *b, ir_instr *i, const ir_mma_form *f, const char *target, ir_value **out) {
  unsigned nblk = ir_mma_scale_vec(i->mods.mmakind);
  if (nblk == 4) return lower_scaled_4x(b, i, target, out);
  if (nblk != 1 && nblk != 2) return false;
  const ir_mma_form *hf = ir_mma_form_of(IR_SHAPE_M16N8K16, IR_MMA_F16);
  ir_type ta = (ir_type)i->type2, tb = (ir_type)i->type3;
  bool f4 = f->cls == IR_MMA_F4;
  unsigned steps = f->k / 16u, per = steps / nblk;
  scheme s;
  if (!pick(hf, ir_type_f16, target, &s)) return false;
  ir_value *ab[4][6];
  for (unsigned h = 0; h < steps; h++) {
    if (f4) {
      widen_nibbles(b, i->src[2 * (h >> 1)], h & 1, &ab[h][0], &ab[h][2]);
      widen_nibbles(b, i->src[2 * (h >> 1) + 1], h & 1, &ab[h][1], &ab[h][3]);
      widen_nibbles(b, i->src[4 + (h >> 1)], h & 1, &ab[h][4], &ab[h][5]);
    } else {
      widen_f8(b, ta, i->src[2 * h], &ab[h][0], &ab[h][2]);
      widen_f8(b, ta, i->src[2 * h + 1], &ab[h][1], &ab[h][3]);
      widen_f8(b, tb, i->src[4 + h], &ab[h][4], &ab[h][5]);
    }
  }
  ir_value *acc[4];
  lower_mma_scale_words sw = {0};
  for (unsigned e = 0; e < 4; e++) acc[e] = i->src[6 + e];
  for (unsigned j = 0; j < nblk; j++) {
    ir_value *p[4];
    ir_value *const *const chain[2] = {ab[j * per], ab[j * per + 1]};
    if (!build_chain(b, &s, hf, ir_type_f16, chain, per, NULL, p, NULL)) return false;
    for (unsigned e = 0; e < 4; e++)
      acc[e] = ir_alu2(b, ir_op_add, ir_type_f32, acc[e], lower_mma_scale_term(b, i, &sw, p[e], e, j), .rnd = IR_RND_RN);
  }
  for (unsigned e = 0; e < 4; e++) out[e] = acc[e];
  return true;
}

/* ---- ldmatrix straight into the scheme's A/B layout (issue 21) ----------
 * Where every result of an ldmatrix is an A or B operand of mma that go on
 * this file's f16/bf16 schemes (lower_ldm_plan.c decides), each AMD A/B
 * register that reads the ldmatrix's results is loaded from shared memory
 * at the ldmatrix's place in AMD's layout, instead of loading NVIDIA's
 * fragments and moving them across lanes at the mma.  Thread T's register j
 * of an ldmatrix (PTX ISA 9.7.14.5.15) is matrix j's row T >> 2, halves
 * 2 (T & 3) and + 1: the 32-bit word at the row address of lane 8j + (T >> 2)
 * plus 4 (T & 3); with .trans, the halves at 2 (T >> 2) bytes from the row
 * addresses of lanes 8j + 2 (T & 3) and + 1.  So an AMD register whose lane
 * l needs register j(l) of thread T(l) shuffles the *row address* from lane
 * 8 j(l) + (T(l) >> 2) (one shuffle of a lane function, shared by the
 * registers that read the same rows) and loads at the lane's offset: the
 * data shuffles and selects of the gather disappear. */
/* mma's path in lower_mma_amd_chained as an ldm_form (plain f16/bf16, tf32,
 * e4m3/e5m2; not scaled, integer or fp6/fp4), but for the scheme; or false. */
static bool ldm_form_init(const ir_instr *mma, ldm_form *F) {
  const ir_mma_form *f = ir_mma_find(mma, NULL);
  if (!f || f->m != 16 || ir_mma_scale_vec(mma->mods.mmakind)) return false;
  ir_type ta = (ir_type)mma->type2, tb = (ir_type)mma->type3;
  *F = (ldm_form){.f = f, .vf = f, .vt = ta, .ta = ta, .tb = tb, .steps = 1};
  if (f->cls == IR_MMA_TF32) {   /* lower_tf32: hi and lo on the bf16 scheme */
    F->vf = ir_mma_form_of(f->k == 4 ? IR_SHAPE_M16N8K8 : IR_SHAPE_M16N8K16, IR_MMA_F16);
    F->vt = ir_type_bf16, F->steps = 2;
  } else if (f->cls == IR_MMA_F8) {   /* lower_f8: 16 k per f16 step */
    if ((ta != ir_type_e4m3 && ta != ir_type_e5m2) || (tb != ir_type_e4m3 && tb != ir_type_e5m2) ||
        (f->k != 16 && f->k != 32))
      return false;
    F->vf = ir_mma_form_of(IR_SHAPE_M16N8K16, IR_MMA_F16);
    F->vt = ir_type_f16, F->steps = f->k / 16u;
  } else if (f->cls != IR_MMA_F16) {
    return false;
  }
  if (!F->vf || F->steps * LDM_STEP > LOWER_LDM_NPRE) return false;
  F->na = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->a)->nelem, ta);
  F->nb = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->b)->nelem, tb);
  F->vna = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)F->vf->a)->nelem, F->vt);
  F->vnb = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)F->vf->b)->nelem, F->vt);
  return true;
}

/* The same with the scheme on target, or false. */
static bool ldm_scheme(const ir_instr *mma, const char *target, ldm_form *F) {
  return target && ldm_form_init(mma, F) && pick(F->vf, F->vt, target, &F->s);
}

/* Which register *r of the mma register v (0 .. vna + vnb - 1) of the
 * scheme's form in step h is made from, and how (LC_*): lower_tf32's A
 * {hi, lo} of a_r, B {bh, bh} (step 0) and {bl, bl} (step 1) of b_r;
 * lower_f8's step h f16 A registers 0, 1, 2, 3 = the low halves of fp8 A
 * registers 2h, 2h + 1 and their high halves, B registers 4, 5 = the
 * halves of fp8 B register h. */
static unsigned ldm_src(const ldm_form *F, unsigned h, unsigned v, unsigned *r) {
  if (F->f->cls == IR_MMA_TF32) {
    *r = v;
    return v < F->na ? LC_TF32_A : h ? LC_TF32_BL : LC_TF32_BH;
  }
  if (F->f->cls == IR_MMA_F8) {
    *r = v < 4 ? 2 * h + (v & 1) : F->na + h;
    return (v < 4 ? v >> 1 : v - 4) ? LC_F8_HI : LC_F8_LO;
  }
  *r = v;
  return LC_COPY;
}

/* The row address of lane src[l] for each lane l (ANY: any lane). */
static ir_value *ldm_addr(amd_ctx *X, ldm_memo *mm, const ir_instr *ldm, const uint8_t *src) {
  bool identity = true;
  for (unsigned l = 0; l < 32; l++) identity &= src[l] == ANY || src[l] == l;
  if (identity) return ldm->src[0];
  for (unsigned k = 0; k < mm->na; k++)
    if (!memcmp(mm->af[k], src, 32)) return mm->av[k];
  ir_value *f = lane_fn(X, src);
  if (!f || X->dry) return f;
  ir_value *a = ldm->src[0], *v;
  if (ir_type_bits((ir_type)a->type) == 64) {
    ir_instr *u = ir_build(X->b, ir_op_unpack, ir_type_b64, 1, (ir_value *[]){a}, 2,
                           (ir_type[]){ir_type_b32, ir_type_b32}, NULL);
    ir_value *lo = shfl(X, u->dst[0], f), *hi = shfl(X, u->dst[1], f);
    v = ir_build_value(X->b, ir_op_pack, ir_type_b64, 2, (ir_value *[]){lo, hi}, NULL);
  } else {
    v = shfl(X, a, f);
  }
  if (mm->na < 16) memcpy(mm->af[mm->na], src, 32), mm->av[mm->na++] = v;
  return v;
}

/* The word (t: b32 or b16) each lane l loads at byte[l] from the row address
 * of lane src[l]. */
static ir_value *ldm_word(amd_ctx *X, ldm_memo *mm, const ir_instr *ldm, const uint8_t *src, const uint8_t *byte,
                          ir_type t) {
  uint8_t key[65];
  memcpy(key, src, 32), memcpy(key + 32, byte, 32), key[64] = (uint8_t)t;
  for (unsigned k = 0; k < mm->nl; k++)
    if (!memcmp(mm->lf[k], key, 65)) return mm->lv[k];
  int cst = -1;
  bool same = true;
  for (unsigned l = 0; l < 32; l++) {
    if (byte[l] == ANY) continue;
    if (cst >= 0 && cst != byte[l]) same = false;
    cst = byte[l];
  }
  ir_value *a = ldm_addr(X, mm, ldm, src);
  ir_value *off = same ? NULL : lane_fn(X, byte);
  if (!a || (!same && !off)) return NULL;
  if (X->dry) return a;
  ir_builder *b = X->b;
  if (off)
    a = ir_type_bits((ir_type)a->type) == 64 ? lower_alu(b, ir_op_add, ir_type_u64, a, lower_zext64(b, off))
                                             : lower_alu(b, ir_op_add, ir_type_u32, a, off);
  ir_mods mods = {.space = ldm->mods.space};
  int64_t disp = ldm->offset + (same && cst > 0 ? cst : 0);
  ir_value *v = ir_build_mem(b, ir_op_ld, t, a, disp, 0, NULL, 1, &mods)->dst[0];
  if (mm->nl < 32) memcpy(mm->lf[mm->nl], key, 65), mm->lv[mm->nl++] = v;
  return v;
}

/* The register each lane l holds when it is register j[l] of thread th[l]
 * of ldm (ANY: padding). */
static ir_value *ldm_reg(amd_ctx *X, ldm_memo *mm, const ir_instr *ldm, const uint8_t *th, const uint8_t *j) {
  bool trans = ldm->mods.trans;
  ir_value *h[2] = {NULL, NULL};
  for (unsigned k = 0; k < (trans ? 2u : 1u); k++) {
    uint8_t src[32], byte[32];
    for (unsigned l = 0; l < 32; l++) {
      src[l] = byte[l] = ANY;
      if (th[l] == ANY) continue;
      unsigned g = th[l] >> 2, t = th[l] & 3;
      src[l] = (uint8_t)(trans ? 8 * j[l] + 2 * t + k : 8 * j[l] + g);
      byte[l] = (uint8_t)(trans ? 2 * g : 4 * t);
    }
    h[k] = ldm_word(X, mm, ldm, src, byte, trans ? ir_type_b16 : ir_type_b32);
    if (!h[k]) return NULL;
  }
  if (!trans || X->dry) return h[0];
  return ir_build_value(X->b, ir_op_pack, ir_type_b32, 2, h, NULL);
}

/* Which register of ldm value v is (-1: none). */
static int ldm_index(const ir_instr *ldm, const ir_value *v) {
  for (unsigned k = 0; ldm && k < ldm->ndst; k++)
    if (ldm->dst[k] == v) return (int)k;
  return -1;
}
/* Whether a (made from the ldmatrix result ra) and b (from rb) are the same
 * instructions on their roots: then a lane that loaded either root's word
 * applies a's instructions to it. */
static bool expr_alike(const ir_value *a, const ir_value *ra, const ir_value *b, const ir_value *rb) {
  if (a == ra || b == rb) return a == ra && b == rb;
  if (a->kind != b->kind || a->type != b->type || a->index != b->index) return false;
  if (a->kind == IR_VAL_CONST) return a->imm == b->imm;
  if (a->kind != IR_VAL_INSTR) return false;
  const ir_instr *x = a->def, *y = b->def;
  if (x->op != y->op || x->type != y->type || x->type2 != y->type2 || x->type3 != y->type3 || x->type4 != y->type4 ||
      x->nsrc != y->nsrc || x->ndst != y->ndst || x->offset != y->offset || x->sreg != y->sreg ||
      x->sreg_comp != y->sreg_comp || memcmp(&x->mods, &y->mods, sizeof x->mods))
    return false;
  for (unsigned k = 0; k < x->nsrc; k++)
    if (!expr_alike(x->src[k], ra, y->src[k], rb)) return false;
  return true;
}
/* v's per-thread arithmetic on its ldmatrix result root, applied to the word
 * w a lane loaded for it: copies of the instructions at the builder (their
 * operands immediates or made from root: lower_ldm_root), once per (v, w). */
static ir_value *ldm_apply(amd_ctx *X, ldm_memo *mm, const ir_value *v, const ir_value *root, ir_value *w) {
  if (v == root) return w;
  if (v->kind != IR_VAL_INSTR) return (ir_value *)v;
  for (unsigned k = 0; k < mm->ne; k++)
    if (mm->ev[k] == v && mm->ew[k] == w) return mm->eout[k];
  const ir_instr *i = v->def;
  ir_value *src[4];
  for (unsigned k = 0; k < i->nsrc; k++) src[k] = ldm_apply(X, mm, i->src[k], root, w);
  ir_value *r = ir_clone(X->b, i, src, NULL)->dst[v->index];
  if (mm->ne < 128) mm->ev[mm->ne] = v, mm->ew[mm->ne] = w, mm->eout[mm->ne++] = r;
  return r;
}
/* Conversion conv (LC_*) of the word w each lane loaded, in the lane:
 * lower_tf32's split_tf32 and packing, lower_f8's widen_f8 of the half, t
 * the fp8 type.  Built once per (w, kind) for the mma. */
static ir_value *ldm_conv(amd_ctx *X, ldm_memo *mm, ir_value *w, unsigned conv, ir_type t) {
  if (conv == LC_COPY || X->dry) return w;
  enum { K_HI = 8, K_LO, K_UNPACK };   /* the memo's inner steps: split_tf32's hi and lo, the fp8 word's halves */
  ir_builder *b = X->b;
  ir_value *hl[2] = {NULL, NULL}, *x = w;
  for (unsigned k = 0; k < mm->ncv; k++) {
    if (mm->cin[k] != w) continue;
    uint16_t c = mm->ck[k];
    if (c == (uint16_t)(conv | (unsigned)t << 4)) return mm->cout[k];
    if (c == K_HI) hl[0] = mm->cout[k];
    if (c == K_LO) hl[1] = mm->cout[k];
    if (c == K_UNPACK) x = mm->cout[k];
  }
#define MEMO(kind, v) (mm->ncv < 32 ? (mm->cin[mm->ncv] = w, mm->ck[mm->ncv] = (uint16_t)(kind), mm->cout[mm->ncv++] = (v)) : (v))
  ir_value *v;
  if (conv == LC_F8_LO || conv == LC_F8_HI) {
    if (x == w)
      x = MEMO(K_UNPACK, ir_build(b, ir_op_unpack, ir_type_b32, 1, &w, 2, (ir_type[]){ir_type_b16, ir_type_b16},
                                  NULL)->dst[0]);
    x = x->def->dst[conv == LC_F8_HI];
    v = ir_convert(b, ir_type_f16x2, t == ir_type_e4m3 ? ir_type_e4m3x2 : ir_type_e5m2x2, x, .rnd = IR_RND_RN);
  } else {
    if (!hl[0]) {
      split_tf32(b, w, &hl[0], &hl[1]);
      MEMO(K_HI, hl[0]), MEMO(K_LO, hl[1]);
    }
    v = conv == LC_TF32_A ? or32(b, shr16(b, hl[0]), hl[1]) : or32(b, shr16(b, hl[conv == LC_TF32_BL]), hl[conv == LC_TF32_BL]);
  }
  return MEMO(conv | (unsigned)t << 4, v);
#undef MEMO
}

static ir_value *ldm_at_mma(amd_ctx *X, const nv_inv *inv_a, const nv_inv *inv_b, unsigned c, unsigned ab,
                            unsigned reg, ir_value *w) {
  const ldm_form *F = X->lf;
  lane_map M;
  if (X->dry || !ab_map(&F->s, inv_a, inv_b, F->vna, F->vna + F->vnb + 4, c, ab, reg, &M)) return w;
  for (unsigned l = 0; l < 32; l++) {   /* one conversion in every lane (ldm_each checked) */
    if (M.val[l] == ANY || M.val[l] >= F->vna + F->vnb) continue;
    unsigned r, k = ldm_src(F, X->step, M.val[l], &r);
    return ldm_conv(X, X->cm, w, k, r < F->na ? F->ta : F->tb);
  }
  return w;
}

#define LDM_ALL ((const ir_instr *)1)   /* ldm_each: every ldmatrix the mma reads (dry) */

/* For mma on its scheme, every AMD A/B register (of every step of its
 * chain: ldm_form) that reads ldmatrix results (directly, or through phis of
 * one block whose operands on each edge are results of one ldmatrix): with
 * ldm NULL, checks that each such register reads nothing else (or false);
 * with LDM_ALL, also that each of their loads can be built (dry); with ldm,
 * checks (dry) or builds the loads (and the per-thread arithmetic between
 * ldmatrix and mma: ldm_apply) of the registers that read ldm:
 * pre[LDM_PRE(c, ab, reg) + h LDM_STEP] directly, or operand e of the phi
 * pre[] holds (lower_mma_amd_ldm_phis made it; registers that read the same
 * words share one) for the edges e on which ldm's results arrive.  pre[]
 * holds the words: the tf32 split and the fp8 widening are made at the mma
 * (ldm_at_mma), as lower_tf32/lower_f8 make them, so that what lives from
 * the ldmatrix to the mma (and around a pipelined loop) is one word per
 * register, not its hi/lo or f16 halves.  False when mma does not go on a
 * scheme, when a register reads ldmatrix results in some lanes and other
 * values in others, when an fp8 register's lanes read different halves of
 * their words (no scheme does), when a converted register comes from a
 * .trans ldmatrix (its 16-bit transposition splits the words), or when an
 * address is not a lane function. */
static bool ldm_each(amd_ctx *X, ldm_memo *mm, const ir_instr *ldm, const ir_instr *mma, const char *target,
                     ir_value **pre, ir_builder *phib) {
  ldm_form F;
  if (!ldm_scheme(mma, target, &F)) return false;
  const scheme s = F.s;
  if (ldm == LDM_ALL) {   /* the whole mma must go on the scheme (as build_checked's dry run) */
    amd_ctx D = {.dry = true};
    D.laneid = (ir_value *)&D;
    ir_value *dry[12], *dd[4];
    for (unsigned k = 0; k < 12; k++) dry[k] = D.laneid;
    if (!build(&D, &s, F.vf, F.vt, F.vt, dry, dry, dd)) return false;
  }
  nv_inv inv_a, inv_b;
  invert(ir_mma_frag_info((ir_mma_frag_id)F.vf->a), &inv_a);
  invert(ir_mma_frag_info((ir_mma_frag_id)F.vf->b), &inv_b);
  const unsigned vn = F.vna + F.vnb;
  /* the phis made here, by the words their lanes read: the registers of two
   * steps (tf32 A; B's hi and lo) or of two fp8 halves share one */
  unsigned nphis = 0;
  uint16_t phi_slot[LOWER_LDM_NPRE];
  uint8_t phi_key[LOWER_LDM_NPRE][64];
  /* LDM_ALL: the words a lane loads (distinct (source lanes, mma register)
   * maps over all registers) and the mma registers they come from */
  unsigned nwords = 0, conv_any = 0;
  uint8_t word_key[LOWER_LDM_NPRE][64], nv_read[16] = {0};
  for (unsigned h = 0; h < F.steps; h++)
    for (unsigned c = 0; c < s.ninst; c++)
      for (unsigned ab = 0; ab < 2; ab++)
        for (unsigned reg = 0; reg < (ab ? s.r->nb : s.r->na); reg++) {
          const unsigned slot = h * LDM_STEP + LDM_PRE(c, ab, reg);
          lane_map M;
          if (!ab_map(&s, &inv_a, &inv_b, F.vna, vn + 4, c, ab, reg, &M)) return false;
          /* what each lane reads: an ldmatrix result (direct), a phi of them, or other;
           * the mma register it is made from (nr) and how (cv) */
          unsigned ndirect = 0, nphi = 0, nother = 0;
          const ir_instr *dl = NULL;   /* the one ldmatrix read directly */
          const ir_block *pb = NULL;   /* the block of the phis */
          bool mixed = false;
          uint8_t nr[32], cv[32];
          int conv = -1;
          for (unsigned l = 0; l < 32; l++) {
            nr[l] = cv[l] = ANY;
            if (M.val[l] == ANY) continue;
            const ir_value *v = NULL;
            if (M.val[l] < vn) {
              unsigned r;
              cv[l] = (uint8_t)ldm_src(&F, h, M.val[l], &r);
              nr[l] = (uint8_t)r, v = mma->src[r];
            }
            const ir_instr *p = v ? lower_ldm_phi(v) : NULL;
            if (v && lower_ldm_of(v)) {
              ndirect++;
              mixed |= dl && dl != lower_ldm_of(v);
              dl = lower_ldm_of(v);
            } else if (p) {
              nphi++;
              mixed |= pb && pb != p->block;
              pb = p->block;
            } else {
              nother++;
              continue;
            }
            /* one conversion in every lane (ldm_at_mma), fp8 one half */
            mixed |= conv >= 0 && conv != cv[l];
            conv = cv[l];
          }
          if (!ndirect && !nphi) continue;
          if (mixed || nother || (ndirect && nphi)) return false;
          if (ldm == LDM_ALL) {
            uint8_t key[64];
            memcpy(key, M.src, 32), memcpy(key + 32, nr, 32);
            unsigned k = 0;
            while (k < nwords && memcmp(word_key[k], key, 64)) k++;
            if (k == nwords) memcpy(word_key[nwords++], key, 64);
            for (unsigned l = 0; l < 32; l++)
              if (nr[l] != ANY && nr[l] < 16) nv_read[nr[l]] = 1;
            conv_any |= conv != LC_COPY;
          }
          if (ndirect && ldm != LDM_ALL && (!ldm || dl != ldm)) continue;   /* another ldmatrix's register */
          if (phib && nphi && !pre[slot]) {   /* the register's phi, its operands set per ldmatrix */
            uint8_t key[64];
            memcpy(key, M.src, 32), memcpy(key + 32, nr, 32);
            for (unsigned k = 0; k < nphis && !pre[slot]; k++)
              if (!memcmp(phi_key[k], key, 64)) pre[slot] = pre[phi_slot[k]];
            if (!pre[slot]) {
              ir_instr *q = ir_phi(phib, (ir_block *)pb, ir_type_b32, pb->npreds);
              for (unsigned e = 0; e < pb->npreds; e++) ir_phi_set_src(q, e, ir_undef(phib, ir_type_b32));
              pre[slot] = q->dst[0];
              memcpy(phi_key[nphis], key, 64), phi_slot[nphis++] = (uint16_t)slot;
            }
          }
          /* per edge (one pass when direct): the ldmatrix and its registers */
          for (unsigned e = 0; e < (nphi ? pb->npreds : 1u); e++) {
            uint8_t th[32], j[32];
            const ir_instr *el = ndirect ? dl : NULL;
            const ir_value *rv = NULL, *rr = NULL;   /* the first lane's value and its ldmatrix result */
            bool same = true;
            for (unsigned l = 0; l < 32; l++) {
              th[l] = j[l] = ANY;
              if (M.val[l] == ANY) continue;
              const ir_value *v = mma->src[nr[l]];
              if (nphi) v = v->def->src[e];
              const ir_value *r = lower_ldm_root(v);
              same &= !el || el == r->def;
              el = r->def;
              if (!rv) rv = v, rr = r;
              same &= expr_alike(rv, rr, v, r);   /* every lane the same arithmetic on its word */
              th[l] = M.src[l], j[l] = (uint8_t)ldm_index(el, r);
            }
            if (!same) return false;   /* on one edge, two ldmatrix (or two computations) in one register */
            if (conv != LC_COPY && el->mods.trans) return false;
            if (ldm != LDM_ALL && (!ldm || el != ldm)) continue;
            ir_value *v = ldm_reg(X, mm, el, th, j);
            if (!v) return false;
            if (X->dry || !pre) continue;
            v = ldm_apply(X, mm, rv, rr, v);
            if (ndirect) pre[slot] = v;
            else ir_phi_set_src(pre[slot]->def, e, v);
          }
        }
  if (ldm == LDM_ALL && conv_any) {
    /* tf32/fp8: each lane converts every word it loads, so a scheme that
     * replicates the operands across lanes (wave64 4x4x4: A twice, B four
     * times; RDNA3's WMMA: both halves of the wave) converts each element
     * several times where the threads converted it once before moving it.
     * Measured per tile (docs/codegen.md, 2026-12-03): with 16 words per lane
     * for 6 thread registers (gfx90a-gfx950, gfx1100) the conversions cost
     * more than the lane moves they replace (llvm-mca +48-133 %, compile
     * time +15-40 %); with RDNA4's 8 (gfx1200/gfx1201) the tile is a third
     * faster.  So converted forms are loaded in AMD's layout only where a lane
     * loads fewer than twice the words a thread holds. */
    unsigned nnv = 0;
    for (unsigned k = 0; k < 16; k++) nnv += nv_read[k];
    if (nwords >= 2 * nnv) return false;
  }
  return true;
}

void lower_mma_amd_ldm_phis(ir_builder *b, const ir_instr *mma, const char *target, ir_value **pre) {
  ldm_memo mm = {0};
  amd_ctx X = {.dry = true};
  X.laneid = (ir_value *)&X;
  (void)ldm_each(&X, &mm, NULL, mma, target, pre, b);
}

bool lower_mma_amd_ldm_fits(const ir_instr *mma, const char *target) {
  ldm_memo mm = {0};
  amd_ctx X = {.dry = true};
  X.laneid = (ir_value *)&X;
  return ldm_each(&X, &mm, LDM_ALL, mma, target, NULL, NULL);
}

bool lower_mma_amd_ldm_load(ir_builder *b, const ir_instr *ldm, const lower_ldm_plan *p, const char *target) {
  size_t first, n = lower_ldm_users(p, ldm, &first);
  if (!n) return false;
  /* lower_ldm_plan's dry run (lower_mma_amd_ldm_fits) checked every map */
  ldm_memo mm = {.laneid = ir_read_sreg(b, ir_sreg_laneid, 0)};
  amd_ctx X = {.b = b, .laneid = mm.laneid, .memo = &mm.fn};
  for (size_t k = 0; k < n; k++) {
    const ir_instr *mma = p->use[first + k].mma;
    if (!ldm_each(&X, &mm, ldm, mma, target, lower_ldm_pre(p, mma), NULL)) return false;
  }
  return true;
}

ir_value *lower_mma_amd_gather(ir_builder *b, ir_value *laneid, bool dry, const uint8_t *src, const uint8_t *val,
                               ir_value *const *vals, unsigned counts[2]) {
  amd_ctx X = {.b = b, .dry = dry, .laneid = laneid};
  lane_map M;
  memcpy(M.src, src, 32), memcpy(M.val, val, 32);
  ir_value *v = gather(&X, &M, vals);
  counts[0] += X.shuffles, counts[1] += X.selects;
  return v;
}

ir_value *lower_mma_amd_lane_fn(ir_builder *b, ir_value *laneid, bool dry, const uint8_t *f) {
  amd_ctx X = {.b = b, .dry = dry, .laneid = laneid};
  return lane_fn(&X, f);
}

bool lower_mma_amd_fits(const ir_mma_form *f, ir_type ta, const char *target) {
  scheme s;
  return target && pick(f, ta, target, &s);
}

bool lower_mma_amd(ir_builder *b, ir_instr *i, ir_value **out, const char *target) {
  return lower_mma_amd_chained(b, i, out, target, NULL);
}

bool lower_mma_amd_chained(ir_builder *b, ir_instr *i, ir_value **out, const char *target, lower_mma_chain *chain) {
  const ir_mma_form *f = ir_mma_find(i, NULL);
  ir_type td = (ir_type)i->type, ta = (ir_type)i->type2, tc = (ir_type)i->type4;
  if (!target || !f || f->m != 16) return false;   /* m8n8 forms: lower_mma.c's mma_via_s8 */
  if (ir_mma_scale_vec(i->mods.mmakind)) return lower_scaled(b, i, f, target, out);
  bool tf32 = f->cls == IR_MMA_TF32, f8 = f->cls == IR_MMA_F8;
  scheme s;
  if (f8 && !pick(ir_mma_form_of(IR_SHAPE_M16N8K16, IR_MMA_F16), ir_type_f16, target, &s)) return false;
  if (!tf32 && !f8 && !pick(f, ta, target, &s)) return false;
  if (tf32 && !pick(ir_mma_form_of(f->k == 4 ? IR_SHAPE_M16N8K8 : IR_SHAPE_M16N8K16, IR_MMA_F16), ir_type_bf16, target, &s))
    return false;
  unsigned na = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->a)->nelem, ta);
  unsigned nb = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->b)->nelem, (ir_type)i->type3);
  if (f->cls == IR_MMA_I8) return lower_i8(b, i, f, &s, na, nb, target, out);
  /* C as four f32: f16 C widened (exact), and D rounded to f16 once at the
   * end, as the expansion and the emulator do */
  ir_value *cv[4], *d[4];
  for (unsigned e = 0; e < 4; e++) {
    if (tc != ir_type_f16) {
      cv[e] = i->src[na + nb + e];
      continue;
    }
    if (e % 2) continue;
    ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b32, 1, &i->src[na + nb + e / 2], 2,
                           (ir_type[]){ir_type_b16, ir_type_b16}, NULL);
    cv[e] = ir_convert(b, ir_type_f32, ir_type_f16, u->dst[0]);
    cv[e + 1] = ir_convert(b, ir_type_f32, ir_type_f16, u->dst[1]);
  }
  /* f32 C and D: the accumulator may stay in AMD's layout from the mma
   * whose D this C is to this one (a chain of mma through C, as a K loop
   * unrolled makes: no D gathered back and C gathered in between; the D
   * gathered all the same for its other uses is dead code otherwise).
   * Every scheme of one layout puts C's elements in the same places; the
   * round trip it saves is a permutation of bits, so results are the
   * same bit for bit. */
  bool chained = chain && tc == ir_type_f32 && td == ir_type_f32;
  ir_value *acc[8] = {0};
  chain_io io = {chained ? chain_find(chain, cv, &s, b->block) : NULL, chained ? acc : NULL,
                 chain ? lower_ldm_pre(chain->ldm, i) : NULL, i};
  if (tf32 ? !lower_tf32(b, i, target, cv, d, &io)
      : f8  ? !lower_f8(b, i, f, target, cv, d, &io)
            : !build_chain(b, &s, f, ta, (ir_value *const *const[]){i->src}, 1, cv, d, &io))
    return false;
  if (chained && acc[0]) {
    struct lower_mma_acc *e = &chain->e[chain->next++ % LOWER_MMA_CHAIN_N];
    *e = (struct lower_mma_acc){.block = b->block, .layout = s.r->layout, .wave = s.r->wave, .nc = s.r->nc};
    for (unsigned k = 0; k < 4; k++) e->d[k] = i->dst[k];
    for (unsigned k = 0; k < s.r->nc; k++) e->acc[k] = acc[k];
  }
  if (td != ir_type_f16) {
    for (unsigned e = 0; e < 4; e++) out[e] = d[e];
    return true;
  }
  for (unsigned j = 0; j < 2; j++) {
    ir_value *h0 = ir_convert(b, ir_type_f16, ir_type_f32, d[2 * j], .rnd = IR_RND_RN);
    ir_value *h1 = ir_convert(b, ir_type_f16, ir_type_f32, d[2 * j + 1], .rnd = IR_RND_RN);
    out[j] = ir_build_value(b, ir_op_pack, ir_type_b32, 2, (ir_value *[]){h0, h1}, NULL);
  }
  return true;
}

/* ---- accumulators in AMD's layout across phis (lower_mma_web.c) ---------- */
/* The AMD C layout mma i would keep its accumulator in, as the wave_mma row
 * of its scheme (every row of one layout, wave and register count puts C's
 * elements in the same places: lower_mma_amd_chained's classes), and the
 * index of its first C register; false where lower_mma_amd_chained would not
 * chain it (f16 C or D, s8, block scaling, no scheme on target). */
bool lower_mma_amd_acc_row(const ir_instr *i, const char *target, unsigned *row, unsigned *c_first) {
  const ir_mma_form *f = ir_mma_find(i, NULL);
  ir_type ta = (ir_type)i->type2;
  if (!target || !f || f->m != 16 || ir_mma_scale_vec(i->mods.mmakind) || f->cls == IR_MMA_I8) return false;
  if ((ir_type)i->type != ir_type_f32 || (ir_type)i->type4 != ir_type_f32) return false;
  scheme s;
  if (f->cls == IR_MMA_F8) {
    if (!pick(ir_mma_form_of(IR_SHAPE_M16N8K16, IR_MMA_F16), ir_type_f16, target, &s)) return false;
  } else if (f->cls == IR_MMA_TF32) {
    if (!pick(ir_mma_form_of(f->k == 4 ? IR_SHAPE_M16N8K8 : IR_SHAPE_M16N8K16, IR_MMA_F16), ir_type_bf16, target, &s))
      return false;
  } else if (!pick(f, ta, target, &s)) {
    return false;
  }
  *row = s.row;
  *c_first = ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->a)->nelem, ta) +
             ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->b)->nelem, (ir_type)i->type3);
  return i->nsrc == *c_first + 4 && i->ndst == 4;
}

bool lower_mma_amd_same_acc(unsigned row1, unsigned row2) {
  const ir_amx_info *a = ir_amx_info_of(row1), *b = ir_amx_info_of(row2);
  return a->layout == b->layout && a->wave == b->wave && a->nc == b->nc;
}

unsigned lower_mma_amd_acc_regs(unsigned row) { return ir_amx_info_of(row)->nc; }

/* NVIDIA's C elements cv[0..3] (m16n8, f32) in row's C layout, acc[0..nc):
 * build()'s C gather on its own (a dry run first, nothing built when a map
 * cannot be: the rows in use always can; acc NULL: only the dry run). */
bool lower_mma_amd_acc_in(ir_builder *b, unsigned row, ir_value *const *cv, ir_value **acc) {
  scheme s = {.r = ir_amx_info_of(row), .row = row};
  nv_inv inv_c;
  invert(ir_mma_frag_info(IR_MMA_FRAG_C_M16N8), &inv_c);
  lane_memo memo = {0};
  for (unsigned dry = 1;; dry = 0) {
    amd_ctx X = {.b = b, .dry = dry, .memo = dry ? NULL : &memo};
    X.laneid = dry ? (ir_value *)&X : ir_read_sreg(b, ir_sreg_laneid, 0);
    ir_value *dv[4] = {X.laneid, X.laneid, X.laneid, X.laneid};
    ir_value *const *vals = dry ? dv : cv;
    for (unsigned reg = 0; reg < s.r->nc; reg++) {
      lane_map M;
      for (unsigned l = 0; l < 32; l++) {
        unsigned blk, ii, jj;
        ir_amx_cd_elem(s.r, l, reg, &blk, &ii, &jj);
        nv_elem e = amd_cd(&s, blk, ii, jj);
        M.src[l] = M.val[l] = ANY;
        if (e.what == NV_PAD) continue;
        M.src[l] = inv_c.lane[e.row][e.col];
        M.val[l] = inv_c.elem[e.row][e.col];
      }
      ir_value *v = gather(&X, &M, vals);
      if (!v) return false;
      if (!dry) acc[reg] = v;
    }
    if (!dry || !acc) return true;
  }
}

/* Thread t's D element e from lane src[t], register val[t] of row's C
 * layout (build()'s D map for one element). */
static bool d_map(const scheme *s, unsigned e, lane_map *M) {
  const ir_amx_info *r = s->r;
  for (unsigned t = 0; t < 32; t++) {
    unsigned rw, col;
    ir_mma_elem(ir_mma_frag_info(IR_MMA_FRAG_C_M16N8), t, e, &rw, &col);
    M->src[t] = M->val[t] = ANY;
    for (unsigned l = 0; l < 32 && M->src[t] == ANY; l++)
      for (unsigned reg = 0; reg < r->nc; reg++) {
        unsigned blk, ii, jj;
        ir_amx_cd_elem(r, l, reg, &blk, &ii, &jj);
        nv_elem x = amd_cd(s, blk, ii, jj);
        if (x.what == NV_C && x.row == rw && x.col == col) {
          M->src[t] = (uint8_t)l, M->val[t] = (uint8_t)reg;
          break;
        }
      }
    if (M->src[t] == ANY) return false;
  }
  return true;
}

/* Element e of NVIDIA's D (m16n8, f32) from the accumulator acc[0..nc) in
 * row's C layout: build()'s D gather for one element; NULL when the map
 * cannot be built (nothing built then). */
ir_value *lower_mma_amd_acc_out(ir_builder *b, unsigned row, ir_value *const *acc, unsigned e) {
  scheme s = {.r = ir_amx_info_of(row), .row = row};
  lane_map M;
  if (!d_map(&s, e, &M)) return NULL;
  amd_ctx D = {.b = b, .dry = true};
  D.laneid = (ir_value *)&D;
  ir_value *dv[8];
  for (unsigned k = 0; k < 8; k++) dv[k] = D.laneid;
  if (!gather(&D, &M, dv)) return NULL;
  amd_ctx X = {.b = b, .laneid = ir_read_sreg(b, ir_sreg_laneid, 0)};
  ir_value *v = gather(&X, &M, acc);
  return v ? ir_alu1(b, ir_op_copy, (ir_type)s.r->tc, v) : NULL;
}

/* Whether row's C layout can be converted both ways (dry runs only). */
bool lower_mma_amd_acc_maps(unsigned row) {
  scheme s = {.r = ir_amx_info_of(row), .row = row};
  if (!lower_mma_amd_acc_in(NULL, row, NULL, NULL)) return false;
  for (unsigned e = 0; e < 4; e++) {
    lane_map M;
    amd_ctx D = {.dry = true};
    D.laneid = (ir_value *)&D;
    ir_value *dv[8];
    for (unsigned k = 0; k < 8; k++) dv[k] = D.laneid;
    if (!d_map(&s, e, &M) || !gather(&D, &M, dv)) return false;
  }
  return true;
}
