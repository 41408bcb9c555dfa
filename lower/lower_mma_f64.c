/* lower/lower_mma_f64.c: mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64
 * (PTX ISA 9.7.14.5.14; fragments 9.7.14.5.2, ir/ir_mma.h A_F64_K4,
 * B_F64_K4, C_M8N8) on CDNA's f64 MFMA, v_mfma_f64_16x16x4_f64
 * (ir/ir_amd_matrix.def mfma_f64_16x16x4_f64: gfx90a, gfx94x, gfx950),
 * where a wave64 runs it with all 64 lanes; lower_mma.c's per-thread
 * expansion everywhere else (docs/lowering.md, "Matrix instructions", "f64:
 * both warps in one f64 MFMA, behind a test of EXEC").
 *
 * Why a run-time test: the f64 MFMA puts K (A's k = lane / 16) and the
 * rows of D (i % 4 = lane / 16) in all four 16-lane groups, so one warp's
 * tile needs the other warp's lanes (lanes 0-31 are warp 2w, 32-63 warp
 * 2w + 1 of the wave).  Those lanes may belong to an idle warp (a 32-thread
 * block), a warp that has exited, or one elsewhere in the program.  But
 * where EXEC is all 64 lanes at this mma, both warps execute this same
 * mma.sync, each with all its threads (.aligned: every thread of the warp
 * executes the same mma), so the wave holds both warps' operands and the
 * two 8x8x4 products can share one instruction.  So each f64 mma becomes
 *
 *     pre:  (the region's lane functions, once) full = wave_exec == ~0 (uniform)
 *           cbr full, fast, slow
 *     fast: up to 12 wave_bpermute, one wave_mma, 4 selects;  br join
 *     slow: the expansion (lower_mma.c, unchanged);           br join
 *     join: d0, d1 = phi(fast's, slow's)
 *
 * The branch is wave-uniform (a ballot), so the hardware takes one side.
 * A run of mma (each right after the previous one's join, none reading a D
 * of the run) shares one diamond: fast holds their MFMA code in order, slow
 * their expansions, join their D phis (run_of).
 *
 * The placement (fast path), transposed: AMD's D is the problem's D^T, so
 * AMD's A holds B^T and AMD's B holds A^T.  Warp w's tile is block (w, w)
 * of the 16x16 (its rows and columns 8w .. 8w + 7); AMD column j = 8w + r
 * is the problem's row r, AMD row i = 8w + 4 (c & 1) + (c >> 1) its
 * column c, so that an AMD register pair R (rows 4R .. 4R + 3) holds
 * columns of one parity: C's element c & 1 = R & 1 is the same in every
 * lane, and one bpermute per word fills a register.  With l = lane % 16,
 * k = lane / 16 (the problem's lane of warp w, NVIDIA layout: A[r][k] in
 * 32w + 4r + k, B[k][c] in 32w + 4c + k, C[r][c] in 32w + 4r + c / 2,
 * element c % 2):
 *
 *     AMD A[l][k] = B[k][c]   from lane 32 (l >> 3) + 8 (l & 3) + 4 ((l >> 2) & 1) + k
 *     AMD B[k][l] = A[l & 7][k]  from lane 4 l + k
 *     AMD C pair R, lane L: C[l & 7][2 k + (R & 1)] of warp R >> 1, from
 *       lane 4 l + k, element R & 1, where the lane is in block (R >> 1,
 *       l >> 3) on the diagonal; the off-diagonal blocks take the same value
 *       unchanged: their D is dropped, and an element of D depends only on
 *       its own C element, A row and B column, so whatever they hold (even
 *       Inf or NaN) reaches nothing kept
 *     D[r][2q + e] of warp w (lane 32w + 4r + q) = AMD D pair 2w + e of lane
 *       16 q + 8w + r: each AMD lane first picks pair e or 2 + e by its own
 *       block column (l >> 3 = w), then one bpermute per word.
 *
 * 12 bpermutes, 4 selects, 1 MFMA (32 cycles) for both warps' mma, against
 * the expansion's 16 shuffles and 8 fma per lane; half of the MFMA's
 * products (the off-diagonal blocks) are wasted.  The 4-block 4x4x4 f64
 * MFMA (v_mfma_f64_4x4x4_4b_f64, 16 cycles) also spreads K over the four
 * 16-lane groups, so it needs the same test and would take two
 * instructions (one per warp, 32 cycles) with twice the A/B moves: not used.
 *
 * Chains: an mma whose C is an earlier f64 mma's D (both registers, in
 * order) where EXEC is the same (same_exec: the same block of the function
 * before the walk, whose parts this file's branches, being uniform, leave
 * EXEC alone; or control-equivalent blocks of one loop iteration) takes,
 * on its fast path, the earlier one's AMD accumulator as its C (a phi in
 * the earlier join: the accumulator from the fast side, undef from the
 * slow side, which never reaches this fast path), without the 4 C moves;
 * likewise an A or B operand that an earlier fast side moved (as the same
 * AMD operand) where EXEC is the same is not moved again, and the lane
 * functions are built once, before the first branch.  After the
 * walk (lower_mma_f64_finish), a D read only by the expansions of such mma
 * (their slow sides) takes undef from its fast side, so its 4 D moves die
 * (opt_dce).  (Sending the slow side's D words through the accumulator's
 * phis instead, so that one set of registers carries the tile, cut
 * cuSPARSE c0163 from 336 to 281 VGPRs, but LLVM's coalescer then put
 * copies on the fast side: 16.9 instructions per chained tile instead of
 * 8.6; not done.)  A K chain of one tile moves A and B per step (4
 * bpermutes, or none where another tile moved them) and C and D once.  cuSPARSE's and
 * cuSOLVER's kernels keep 16 tiles of an outer product in flight (each A
 * and B read by 4 mma, each tile chained 16 mma later); through the K
 * loop's phis nothing chains (each iteration moves C in and D out once per
 * tile).
 *
 * Arithmetic: the emulator's wave_mma (emu/emu_matrix.c) is acc = fma(a, b,
 * acc) from C in k order in f64, the expansion's order, and AMD's products
 * are the problem's with the factors swapped (exact before the one
 * rounding of each fma): the two paths are bit-identical on every input
 * (NaN: the canonical NaN on both).  The hardware's order is not
 * documented (CDNA2/CDNA3 ISA guides), so tests use exact sums.  .rz, .rm
 * and .rp stay on the expansion: nothing at hand says that the f64 MFMA
 * rounds in MODE's rounding mode (docs/decisions.md).
 */
#include <string.h>

#include "ir/ir_amd_matrix.h"
#include "ir/ir_mma.h"
#include "lower_internal.h"

/* One lowered f64 mma. */
typedef struct f64_tile {
  const ir_value *d[2];     /* its results as the walk still names them (uses are replaced after it) */
  const ir_func *f;
  ir_block *root, *join, *fast, *slow;
  ir_value *acc[8];         /* its AMD accumulator (D of the wave_mma, in fast) */
  ir_instr *accphi[8];      /* acc into join (made when a later mma chains) */
  ir_instr *dphi[2];        /* D in NVIDIA's layout: phi(fast's, slow's) in join */
  ir_block *readers[4];     /* slow sides of the mma chained to it: there the expansion reads D */
  unsigned nreaders;
} f64_tile;

/* The lane functions of a region, built once before its first branch. */
typedef struct f64_lanes {
  const ir_func *f;
  ir_block *root;
  ir_value *L, *l, *src_a, *src_bc, *hi_col, *src_d;
} f64_lanes;

/* An A or B operand moved into AMD's layout on a tile's fast side. */
typedef struct f64_move {
  const ir_value *v;
  const ir_func *f;
  ir_block *root;
  unsigned kind;            /* 0: as AMD's A (the problem's B), 1: as AMD's B (the problem's A) */
  size_t tile;              /* the tile whose fast side moved it */
  ir_value *w[2];           /* the moved words, there */
  ir_instr *phi[2];         /* into its join (made when a later tile reuses them) */
} f64_move;

/* A function's blocks as they were before the walk, with the innermost
 * natural loop of each (its header's id, or UINT32_MAX), for same_exec. */
typedef struct f64_fn {
  const ir_func *f;
  uint32_t nblocks;
  ir_block **blocks;
  uint32_t *inner;
} f64_fn;

struct lower_mma_f64_cache {
  pw_arena *a;
  f64_fn *fns;
  size_t nfns;
  f64_tile *t;
  size_t n, cap;
  struct f64_root { const ir_block *blk; ir_block *root; } *roots;
  size_t nroots, rcap;
  f64_lanes *lanes;
  size_t nlanes, lcap;
  f64_move *mv;
  size_t nmv, mcap;
  size_t group;             /* the first tile of the last diamond (its tiles share root, fast, slow and join) */
};

#define GROW(c, arr, n, cap)                                                                   \
  do {                                                                                         \
    if ((n) == (cap)) {                                                                        \
      (arr) = lower_scratch_grow((c)->a, (arr), (n), (cap) ? 2 * (cap) : 64, sizeof *(arr));   \
      (cap) = (cap) ? 2 * (cap) : 64;                                                          \
    }                                                                                          \
  } while (0)

/* x (defined on tile t's fast side) after t's join: phi(x, undef) there.
 * Valid in the later fast sides of t's region only: they run only where
 * t's fast side ran (the same EXEC). */
static ir_instr *carry(f64_tile *t, ir_value *x) {
  ir_builder jb = ir_builder_at_end(t->join);
  ir_instr *phi = ir_phi(&jb, t->join, (ir_type)x->type, t->join->npreds);
  for (uint32_t p = 0; p < t->join->npreds; p++)
    ir_phi_set_src(phi, p, t->join->preds[p] == t->fast ? x : ir_undef(&jb, (ir_type)x->type));
  return phi;
}

static int f64_row(const ir_instr *i, const char *target);

/* Natural loops of f (back edge u -> h, h dominating u; body: what reaches
 * u without passing h): each block's innermost one, by body size. */
static void loops(pw_arena *a, f64_fn *r) {
  uint32_t n = r->nblocks, *size = LOWER_SCRATCH(a, uint32_t, n), *mark = LOWER_SCRATCH(a, uint32_t, n);
  ir_block **work = LOWER_SCRATCH(a, ir_block *, n + 1);
  for (uint32_t k = 0; k < n; k++) r->inner[k] = UINT32_MAX, size[k] = UINT32_MAX;
  for (uint32_t h = 0; h < n; h++) {
    ir_block *hb = r->blocks[h];
    uint32_t body = 0, top = 0;
    for (uint32_t p = 0; p < hb->npreds; p++) {
      ir_block *u = hb->preds[p];
      if (!ir_block_dominates(hb, u) || u->id >= n || r->blocks[u->id] != u) continue;
      if (mark[h] != h + 1) mark[h] = h + 1, body++;
      if (mark[u->id] != h + 1) mark[u->id] = h + 1, body++, work[top++] = u;
      while (top) {
        ir_block *x = work[--top];
        for (uint32_t q = 0; q < x->npreds; q++) {
          ir_block *y = x->preds[q];
          if (y->id < n && r->blocks[y->id] == y && mark[y->id] != h + 1) mark[y->id] = h + 1, body++, work[top++] = y;
        }
      }
    }
    if (!body) continue;
    for (uint32_t k = 0; k < n; k++)
      if (mark[k] == h + 1 && body < size[k]) size[k] = body, r->inner[k] = h;
  }
}

lower_mma_f64_cache *lower_mma_f64_begin(ir_module *m, pw_arena *a, const char *target) {
  lower_mma_f64_cache *c = LOWER_SCRATCH(a, lower_mma_f64_cache, 1);
  c->a = a;
  size_t nf = 0;
  ir_foreach_func(m, f) nf++;
  c->fns = LOWER_SCRATCH(a, f64_fn, nf ? nf : 1);
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    bool any = false;
    ir_foreach_block(f, b) ir_foreach_instr(b, i) any |= i->op == ir_op_mma && f64_row(i, target) >= 0;
    if (!any) continue;
    ir_require_analyses(f, IR_ANALYSIS_DOMINANCE | IR_ANALYSIS_POST_DOMINANCE);
    f64_fn *r = &c->fns[c->nfns++];
    r->f = f;
    ir_foreach_block(f, b) r->nblocks = b->id + 1 > r->nblocks ? b->id + 1 : r->nblocks;
    r->blocks = LOWER_SCRATCH(a, ir_block *, r->nblocks);
    r->inner = LOWER_SCRATCH(a, uint32_t, r->nblocks);
    ir_foreach_block(f, b) r->blocks[b->id] = b;
    loops(a, r);
  }
  return c;
}

/* The block of the function as it was before the walk that this region
 * starts in (lower_mma_f64 splits at each mma it lowers). */
static ir_block *root_of(const lower_mma_f64_cache *c, ir_block *b) {
  for (size_t k = c->nroots; k-- > 0;)
    if (c->roots[k].blk == b) return c->roots[k].root;
  return b;
}

/* Whether EXEC is the same wherever region y runs as where region x ran
 * before it, so that a value of x's fast side may stand for y's: x = y,
 * or x and y blocks of the function before the walk with x dominating y,
 * y post-dominating x (every lane at x reaches y, none joins: the
 * emulator's reconvergence at immediate post-dominators, and LLVM's
 * structured control flow, restore EXEC there) and the same innermost
 * loop (one iteration).  Irreducible cycles are not seen as loops: nvcc
 * emits none. */
static bool same_exec(const lower_mma_f64_cache *c, ir_block *x, ir_block *y) {
  if (x == y) return true;
  if (x->func != y->func) return false;
  const f64_fn *r = NULL;
  for (size_t k = 0; k < c->nfns && !r; k++)
    if (c->fns[k].f == x->func) r = &c->fns[k];
  if (!r || x->id >= r->nblocks || y->id >= r->nblocks || r->blocks[x->id] != x || r->blocks[y->id] != y) return false;
  if (r->inner[x->id] != r->inner[y->id] || !ir_block_dominates(x, y)) return false;
  for (const ir_block *b = x; b; b = b->ipdom)
    if (b == y) return true;
  return false;
}

/* The tile whose D is i's C, in i's region and function, or NULL. */
#define CHAIN_WINDOW 64   /* the tiles searched back: cuSPARSE's outer products keep 16 in flight */
static f64_tile *chained(lower_mma_f64_cache *c, const ir_instr *i) {
  if (!c) return NULL;
  ir_block *root = root_of(c, i->block);
  for (size_t k = c->n, seen = 0; k-- > 0 && seen < CHAIN_WINDOW; seen++) {
    f64_tile *t = &c->t[k];
    if (t->d[0] == i->src[2] && t->d[1] == i->src[3] && t->f == i->block->func && t->nreaders < 4 &&
        same_exec(c, t->root, root))
      return t;
  }
  return NULL;
}

static ir_value *imm(ir_builder *b, uint32_t v) { return lower_imm32(b, v); }
static ir_value *and32(ir_builder *b, ir_value *x, uint32_t m) { return lower_alu(b, ir_op_and, ir_type_b32, x, imm(b, m)); }
static ir_value *shr32(ir_builder *b, ir_value *x, unsigned s) { return lower_alu(b, ir_op_shr, ir_type_b32, x, imm(b, s)); }
static ir_value *shl32(ir_builder *b, ir_value *x, unsigned s) { return lower_alu(b, ir_op_shl, ir_type_b32, x, imm(b, s)); }
static ir_value *or32(ir_builder *b, ir_value *x, ir_value *y) { return lower_alu(b, ir_op_or, ir_type_b32, x, y); }
static ir_value *bperm(ir_builder *b, ir_value *v, ir_value *lane) {
  return ir_alu2(b, ir_op_wave_bpermute, ir_type_b32, v, lane);
}
static void words(ir_builder *b, ir_value *v, ir_value **w) {
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b64, 1, (ir_value *[]){v}, 2, (ir_type[]){ir_type_b32, ir_type_b32},
                         NULL);
  w[0] = u->dst[0], w[1] = u->dst[1];
}

/* The row this route uses on target, or -1: m8n8k4 .f64 in .rn. */
static int f64_row(const ir_instr *i, const char *target) {
  const ir_mma_form *f = ir_mma_find(i, NULL);
  if (!f || f->cls != IR_MMA_F64 || f->shape != IR_SHAPE_M8N8K4) return -1;
  if (i->mods.rnd && i->mods.rnd != IR_RND_RN) return -1;
  int row = ir_amx_find(target, ir_type_f64, ir_type_f64, 16, 16, 4);
  return row >= 0 && ir_amx_info_of((unsigned)row)->wave == 64 ? row : -1;
}

/* The region's lane functions (built at p, before its first branch, the
 * first time). */
static const f64_lanes *find_lanes(const lower_mma_f64_cache *c, const ir_func *f, ir_block *root) {
  for (size_t k = c ? c->nlanes : 0; k-- > 0;)   /* pure values: where they dominate */
    if (c->lanes[k].f == f && (c->lanes[k].root == root || same_exec(c, c->lanes[k].root, root)))
      return &c->lanes[k];
  return NULL;
}

static const f64_lanes *lanes_of(lower_mma_f64_cache *c, ir_builder *p, ir_block *root, f64_lanes *own) {
  const f64_lanes *found = find_lanes(c, p->block->func, root);
  if (found) return found;
  f64_lanes *x = own;
  if (c) {
    GROW(c, c->lanes, c->nlanes, c->lcap);
    x = &c->lanes[c->nlanes++];
  }
  ir_builder *b = p;
  x->f = b->block->func, x->root = root;
  x->L = ir_build_value(b, ir_op_wave_lane_id, ir_type_u32, 0, NULL, NULL);
  x->l = and32(b, x->L, 15);
  ir_value *k = shr32(b, x->L, 4);
  /* AMD B and C: lane 4 l + k */
  x->src_bc = or32(b, shl32(b, x->l, 2), k);
  /* AMD A: lane 32 (l >> 3) + 8 (l & 3) + 4 ((l >> 2) & 1) + k */
  x->src_a = or32(b, or32(b, shl32(b, and32(b, x->l, 8), 2), shl32(b, and32(b, x->l, 3), 3)), or32(b, and32(b, x->l, 4), k));
  /* D: the AMD lane's own block column, and lane 16 q + 8w + r for the problem's lane 32w + 4r + q */
  x->hi_col = lower_setp(b, IR_CMP_NE, ir_type_b32, and32(b, x->l, 8), imm(b, 0));
  x->src_d = or32(b, or32(b, shl32(b, and32(b, x->L, 3), 4), and32(b, shr32(b, x->L, 2), 8)), and32(b, shr32(b, x->L, 2), 7));
  return x;
}

/* Operand v moved as kind (0: AMD A, 1: AMD B) by an earlier tile of the
 * region, through that tile's join; false if none. */
#define MOVE_WINDOW 256
static bool moved(lower_mma_f64_cache *c, const ir_value *v, unsigned kind, ir_block *root, const ir_func *f,
                  ir_value **w) {
  for (size_t k = c ? c->nmv : 0, seen = 0; k-- > 0 && seen < MOVE_WINDOW; seen++) {
    f64_move *m = &c->mv[k];
    if (m->v != v || m->kind != kind || m->f != f || !same_exec(c, m->root, root)) continue;
    if (m->tile >= c->group) {   /* moved earlier on this fast side itself */
      w[0] = m->w[0], w[1] = m->w[1];
      return true;
    }
    for (unsigned h = 0; h < 2; h++) {
      if (!m->phi[h]) m->phi[h] = carry(&c->t[m->tile], m->w[h]);
      w[h] = m->phi[h]->dst[0];
    }
    return true;
  }
  return false;
}

/* The fast path at b: both warps' m8n8k4 in one MFMA; d[0], d[1] the
 * thread's D elements (f64), acc[] the MFMA's D; cacc (or NULL) C already in
 * AMD's layout. */
static void build_fast(ir_builder *b, lower_mma_f64_cache *c, const f64_lanes *x, const ir_instr *i, unsigned row,
                       ir_value *const *cacc, ir_value **d, ir_value **acc, ir_value *ab[2][2]) {
  const ir_amx_info *r = ir_amx_info_of(row);
  ir_value *src[1 + 2 + 2 + 8];
  unsigned n = 0;
  src[n++] = ir_imm(b, ir_type_u32, row);
  ir_value *w[2];
  /* AMD A = B^T, AMD B = A^T: moved here, or by an earlier tile of the region */
  for (unsigned kind = 0; kind < 2; kind++) {
    ir_value *v = i->src[kind ? 0 : 1], *use[2];
    ab[kind][0] = ab[kind][1] = NULL;   /* what this tile moves itself, for later ones */
    if (!moved(c, v, kind, x->root, x->f, use)) {
      words(b, v, w);
      for (unsigned h = 0; h < 2; h++) use[h] = ab[kind][h] = bperm(b, w[h], kind ? x->src_bc : x->src_a);
    }
    for (unsigned h = 0; h < 2; h++) src[n++] = use[h];
  }
  ir_value *src_bc = x->src_bc, *hi_col = x->hi_col, *src_d = x->src_d;   /* built before the branch */
  ir_value *ce[2][2];       /* C element e of lane 4 l + k, by word */
  for (unsigned e = 0; e < 2 && !cacc; e++) {
    words(b, i->src[2 + e], w);
    for (unsigned h = 0; h < 2; h++) ce[e][h] = bperm(b, w[h], src_bc);
  }
  for (unsigned R = 0; R < 4; R++)
    for (unsigned h = 0; h < 2; h++) src[n++] = cacc ? cacc[2 * R + h] : ce[R & 1][h];
  ir_type dt[8];
  for (unsigned q = 0; q < r->nc; q++) dt[q] = ir_type_b32;
  ir_instr *mma = ir_build(b, ir_op_wave_mma, ir_type_b32, n, src, r->nc, dt, NULL);
  for (unsigned q = 0; q < r->nc; q++) acc[q] = mma->dst[q];
  /* D: the AMD lane's own block column picks pair e or 2 + e, then lane
   * 16 q + 8w + r for the problem's lane 32w + 4r + q */
  for (unsigned e = 0; e < 2; e++) {
    ir_value *dw[2];
    for (unsigned h = 0; h < 2; h++) {
      ir_value *x = lower_selp(b, ir_type_b32, mma->dst[2 * (2 + e) + h], mma->dst[2 * e + h], hi_col);
      dw[h] = bperm(b, x, src_d);
    }
    d[e] = ir_build_value(b, ir_op_pack, ir_type_b64, 2, dw, NULL);
  }
}

/* The tile just lowered, and the operands it moved, for the later ones. */
static void record(lower_mma_f64_cache *c, const ir_instr *i, const ir_func *f, ir_block *root, ir_block *join,
                   ir_block *fast, ir_block *slow, ir_instr **dphi, ir_value **acc, ir_value *ab[2][2]) {
  GROW(c, c->t, c->n, c->cap);
  f64_tile *t = &c->t[c->n++];
  *t = (f64_tile){.d = {i->dst[0], i->dst[1]}, .f = f, .root = root, .join = join, .fast = fast, .slow = slow,
                  .dphi = {dphi[0], dphi[1]}};
  memcpy(t->acc, acc, sizeof t->acc);
  for (unsigned kind = 0; kind < 2; kind++) {
    if (!ab[kind][0]) continue;
    GROW(c, c->mv, c->nmv, c->mcap);
    c->mv[c->nmv++] = (f64_move){.v = i->src[kind ? 0 : 1], .f = f, .root = root, .kind = kind, .tile = c->n - 1,
                                 .w = {ab[kind][0], ab[kind][1]}};
  }
}

static bool lower_mma_f64_run(ir_builder *b, ir_instr *i, ir_value **out, int row, lower_mma_f64_cache *c,
                              f64_tile *run, lower_mma_expand_fn expand, void *data);

/* Whether i joins the last diamond: it comes right after that diamond's
 * join (nothing but the join's phis before it: the walk has removed the
 * earlier mma) and reads no D of the diamond's tiles (their values exist
 * only after the join).  Then its fast code follows theirs, its expansion
 * follows theirs, and one test of EXEC serves the run: cuSPARSE's and
 * cuSOLVER's outer products are 16 mma in a row, and a diamond per mma
 * cost LLVM about half its codegen time on c0163 (docs/codegen.md). */
static f64_tile *run_of(lower_mma_f64_cache *c, const ir_instr *i) {
  if (!c || !c->n || c->group >= c->n) return NULL;
  f64_tile *t = &c->t[c->n - 1];
  if (t->join != i->block || t->f != i->block->func) return NULL;
  for (const ir_instr *p = i->block->first; p != i; p = p->next)
    if (p->op != ir_op_phi) return NULL;
  for (size_t k = c->group; k < c->n; k++)
    for (unsigned o = 0; o < i->nsrc; o++)
      if (i->src[o] == c->t[k].d[0] || i->src[o] == c->t[k].d[1]) return NULL;
  return t;
}

bool lower_mma_f64(ir_builder *b, ir_instr *i, ir_value **out, const char *target, lower_mma_f64_cache *c,
                   lower_mma_expand_fn expand, void *data) {
  int row = f64_row(i, target);
  if (row < 0) return false;
  f64_tile *run = run_of(c, i);
  if (run) return lower_mma_f64_run(b, i, out, row, c, run, expand, data);
  ir_loc loc = b->loc;
  ir_func *f = b->block->func;
  ir_block *pre = b->block;
  f64_tile *from = chained(c, i);
  ir_value *cacc[8];
  if (from) {   /* the earlier tile's accumulator through its join */
    for (unsigned q = 0; q < 8; q++) {
      if (!from->accphi[q]) from->accphi[q] = carry(from, from->acc[q]);
      cacc[q] = from->accphi[q]->dst[0];
    }
  }
  ir_block *root = root_of(c, pre);
  ir_block *join = ir_block_split_before(i, NULL);
  ir_block *fast = ir_block_create_after(f, pre, NULL);
  ir_block *slow = ir_block_create_after(f, fast, NULL);
  ir_builder p = ir_builder_at_end(pre);
  p.loc = loc;
  f64_lanes own;
  const f64_lanes *x = lanes_of(c, &p, root, &own);
  ir_value *exec = ir_build_value(&p, ir_op_wave_exec, ir_type_b64, 0, NULL, NULL);
  ir_value *full = lower_setp(&p, IR_CMP_EQ, ir_type_b64, exec, ir_imm(&p, ir_type_b64, ~0ull));
  ir_cbr(&p, full, fast, slow);

  ir_value *df[2], *ds[2] = {NULL, NULL}, *acc[8];
  ir_builder fb = ir_builder_at_end(fast);
  fb.loc = loc;
  ir_value *ab[2][2];
  if (c) c->group = c->n;   /* a new diamond: moves of earlier ones reach it through their joins */
  build_fast(&fb, c, x, i, (unsigned)row, from ? cacc : NULL, df, acc, ab);
  ir_br(&fb, join);

  ir_builder sb = ir_builder_at_end(slow);
  sb.loc = loc;
  bool ok = expand(&sb, i, ds, data);   /* false: reported there, the function is marked failed */
  ir_br(&sb, join);
  *b = ir_builder_before(i);
  b->loc = loc;
  if (!ok) return false;   /* i stays, in join: the same meaning */

  ir_instr *dphi[2];
  for (unsigned e = 0; e < 2; e++) {
    dphi[e] = ir_phi(b, join, (ir_type)i->dst[e]->type, join->npreds);
    for (uint32_t q = 0; q < join->npreds; q++) ir_phi_set_src(dphi[e], q, join->preds[q] == fast ? df[e] : ds[e]);
    out[e] = dphi[e]->dst[0];
  }
  if (!c) return true;
  if (from) from->readers[from->nreaders++] = slow;
  GROW(c, c->roots, c->nroots, c->rcap);
  c->roots[c->nroots++] = (struct f64_root){join, root};
  record(c, i, f, root, join, fast, slow, dphi, acc, ab);
  return true;
}

/* i in the diamond of run (run_of): its fast code before the fast side's
 * branch to the join, its expansion before the slow side's, its D a phi in
 * the same join. */
static bool lower_mma_f64_run(ir_builder *b, ir_instr *i, ir_value **out, int row, lower_mma_f64_cache *c,
                              f64_tile *run, lower_mma_expand_fn expand, void *data) {
  ir_loc loc = b->loc;
  ir_func *f = i->block->func;
  ir_block *join = run->join, *fast = run->fast, *slow = run->slow;
  f64_tile *from = chained(c, i);   /* never in this diamond: run_of refused i then */
  ir_value *cacc[8];
  if (from) {
    for (unsigned q = 0; q < 8; q++) {
      if (!from->accphi[q]) from->accphi[q] = carry(from, from->acc[q]);
      cacc[q] = from->accphi[q]->dst[0];
    }
  }
  const f64_lanes *x = find_lanes(c, f, run->root);   /* built before the diamond's first tile */
  if (!x) return false;   /* not reached */
  ir_value *df[2], *ds[2] = {NULL, NULL}, *acc[8], *ab[2][2];
  ir_builder fb = ir_builder_before(ir_block_terminator(fast));
  fb.loc = loc;
  build_fast(&fb, c, x, i, (unsigned)row, from ? cacc : NULL, df, acc, ab);
  ir_instr *sbr = ir_block_terminator(slow);
  ir_builder sb = ir_builder_before(sbr);
  sb.loc = loc;
  bool ok = expand(&sb, i, ds, data);
  *b = ir_builder_before(i);
  b->loc = loc;
  if (!ok) return false;
  slow = sbr->block;   /* the slow side's tail (the same block: the expansion is straight-line code) */
  ir_instr *dphi[2];
  for (unsigned e = 0; e < 2; e++) {
    dphi[e] = ir_phi(b, join, (ir_type)i->dst[e]->type, join->npreds);
    for (uint32_t q = 0; q < join->npreds; q++) ir_phi_set_src(dphi[e], q, join->preds[q] == fast ? df[e] : ds[e]);
    out[e] = dphi[e]->dst[0];
  }
  if (from) from->readers[from->nreaders++] = slow;
  record(c, i, f, run->root, join, fast, slow, dphi, acc, ab);
  return true;
}

/* After the walk: a tile's D read only in the slow sides of the mma chained
 * to it takes undef from its fast side (those slow sides follow its own slow
 * side: EXEC is the same), so that the fast side's D moves die. */
void lower_mma_f64_finish(ir_module *m, lower_mma_f64_cache *c) {
  if (!c || !c->n) return;
  ir_foreach_func(m, f) {
    bool any = false;
    for (size_t k = 0; k < c->n && !any; k++) any = c->t[k].f == f && c->t[k].nreaders;
    if (!any) continue;
    /* value id -> 1 + tile index, for the D phis of the tiles with readers */
    uint32_t *owner = LOWER_SCRATCH(c->a, uint32_t, f->nvalues + 1);
    bool *escapes = LOWER_SCRATCH(c->a, bool, c->n);
    for (size_t k = 0; k < c->n; k++)
      if (c->t[k].f == f && c->t[k].nreaders)
        for (unsigned e = 0; e < 2; e++) owner[c->t[k].dphi[e]->dst[0]->id] = (uint32_t)k + 1;
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
      unsigned nops = i->nsrc + (i->guard ? 1 + i->ndst : 0);
      for (unsigned o = 0; o < nops; o++) {
        const ir_value *v = o < i->nsrc ? i->src[o] : o == i->nsrc ? i->guard : i->keep ? i->keep[o - i->nsrc - 1] : NULL;
        if (!v || v->id > f->nvalues || !owner[v->id] || v->kind != IR_VAL_INSTR) continue;
        f64_tile *t = &c->t[owner[v->id] - 1];
        bool ok = false;
        for (unsigned r = 0; r < t->nreaders; r++) ok |= blk == t->readers[r];
        if (!ok) escapes[owner[v->id] - 1] = true;
      }
    }
    for (size_t k = 0; k < c->n; k++) {
      f64_tile *t = &c->t[k];
      if (t->f != f || !t->nreaders || escapes[k]) continue;
      ir_builder jb = ir_builder_at_end(t->join);
      for (unsigned e = 0; e < 2; e++)
        for (uint32_t p = 0; p < t->join->npreds; p++)
          if (t->join->preds[p] == t->fast) ir_phi_set_src(t->dphi[e], p, ir_undef(&jb, (ir_type)t->dphi[e]->dst[0]->type));
    }
  }
}
