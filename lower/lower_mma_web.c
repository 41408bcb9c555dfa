/* lower/lower_mma_web.c: mma accumulators kept in AMD's C layout across
 * phis (docs/lowering.md, "Accumulators across the K loop's phis";
 * docs/decisions.md).
 *
 * A GEMM's K loop keeps its accumulator tiles in registers: each mma's C is
 * a group of four phis (the m16n8 C/D registers, in order) whose operands
 * are the initial C (zeros, or loaded) and the previous iteration's D.
 * lower_mma_amd_chained keeps the accumulator in AMD's layout from one mma
 * to the next only inside a block, so every iteration paid the C gather
 * (8 shuffles + 4 selects per m16n8k16 on wave64) and the D gather (8 + 4).
 * Here, per function (no state outside the walk's), before lower_mma's
 * walk:
 *
 *   - Candidates: every unguarded mma lower_mma_amd_chained would chain
 *     (f32 C and D, a scheme on the target: lower_mma_amd_acc_row; not f16
 *     accumulators, whose D is rounded between two mma, not s8, whose C is
 *     added after the MFMA, not the block-scaled forms), with its row's C
 *     layout class (every MFMA 4x4x4_16b row alike, every WMMA row of one
 *     generation alike).
 *   - Tuples: four distinct 32-bit phis of one block that are, in order, a
 *     candidate's C, or a selp of them with one constant and a predicate
 *     uniform in the wave (selp_of); then, to a fixed point, four phis of
 *     one block whose operands from one predecessor are, in order (through
 *     copies), a candidate's D or a tuple (the merge after a guarded loop,
 *     an outer loop's phis).  A phi is in at most one tuple; a tuple has
 *     the class of the mma or tuple that made it.
 *   - Kept are the tuples that pay (prune): a candidate's C, a tuple that
 *     flows into a kept one, and a merge fed by a D that leaves its loop
 *     and has no other reader.
 *   - Each kept tuple gets nc twin phis (b32) in its block: the
 *     accumulator in that class's layout.
 *
 * During the walk an mma whose C is a tuple (or, in another block, a
 * lowered candidate's D) of its class takes the twin phis (that mma's
 * accumulator) as its C, through lower_mma_chain: no C gather.  After the
 * walk, the twins' operand from each predecessor is the tuple of the same
 * class that operand is, or the lowered mma's accumulator, or, where every
 * element is one constant (zeros: the same in every layout), that constant
 * in every register, or else the four NVIDIA values converted once at the
 * end of the predecessor (the preheader for a loaded C).  Whatever else
 * reads a tuple's phis (a store after the loop, a non-mma use inside it,
 * an mma of another class) reads the NVIDIA value converted once after the
 * twins in the tuple's block (or in the loop's exit block: exits()), and
 * the old phis go: the D gathers that fed
 * them are then dead (opt_dce), unless the program reads that D elsewhere.
 *
 * Every step keeps the values: a value that enters in NVIDIA's layout is
 * converted, one that leaves is converted back, and the conversions are
 * permutations of bits, so results are bit-identical to the chain-free
 * lowering.  Where it goes on the wave: the conversions are shuffles of the
 * whole warp, placed at the end of a predecessor of the tuple's block and
 * at the start of that block, points that a warp running the .aligned mma
 * of the loop reaches together (the loop and its guard are uniform).
 */
#include <string.h>

#include "ir/ir_amd_matrix.h"
#include "lower_internal.h"

typedef struct tuple {
  ir_block *block;
  ir_instr *phi[4];       /* NVIDIA's phis, C/D registers 0..3 */
  ir_instr *twin[8];      /* the accumulator in row's layout */
  ir_value *amd[8];
  unsigned row;
} tuple;

/* a candidate mma lowered to wave_mma with its accumulator in AMD's layout */
typedef struct rec {
  const ir_value *dst[4];   /* its D before the walk */
  ir_value *out[4];         /* what the walk replaced them with */
  ir_value *acc[8];
  const ir_block *block;
  unsigned row;
} rec;

typedef struct fweb {
  ir_func *f;
  uint32_t n0;                  /* f->nvalues before the walk: the ids below */
  int32_t *tuple_of;            /* per value: the tuple a phi result is in, or -1 */
  uint8_t *elem_of;             /* its register in the tuple */
  int32_t *rec_of;              /* per candidate's D[0]: its rec, or -1 */
  uint8_t *uniform;             /* per value: uniform in the warp (ir_compute_divergence before the walk) */
  tuple *t;
  size_t nt, capt;
  rec *r;
  size_t nr, capr;
  struct fweb *next;
} fweb;

struct lower_mma_webs {
  pw_arena *a;
  const char *target;
  fweb *fns;
  uint8_t maps[256];   /* per wave_mma row: 0 not known, 1 its C layout converts both ways, 2 not */
};

static bool row_ok(lower_mma_webs *w, unsigned row) {
  if (row >= 256) return false;
  if (!w->maps[row]) w->maps[row] = lower_mma_amd_acc_maps(row) ? 1 : 2;
  return w->maps[row] == 1;
}

static fweb *fweb_of(lower_mma_webs *w, const ir_func *f) {
  for (fweb *x = w ? w->fns : NULL; x; x = x->next)
    if (x->f == f) return x;
  return NULL;
}

static bool is_phi32(const ir_value *v) {
  return v && v->kind == IR_VAL_INSTR && v->def && v->def->op == ir_op_phi && ir_type_bits((ir_type)v->type) == 32;
}

/* v through unguarded copies of the same width (mov.f32 %f10, %f40 between
 * the mma and the phi) */
static const ir_value *strip(const ir_value *v) {
  for (unsigned depth = 0; v && depth < 8; depth++) {
    const ir_instr *d = v->kind == IR_VAL_INSTR ? v->def : NULL;
    if (!d || d->op != ir_op_copy || d->guard || d->nsrc != 1 || !d->src[0] ||
        ir_type_bits((ir_type)d->src[0]->type) != ir_type_bits((ir_type)v->type))
      return v;
    v = d->src[0];
  }
  return v;
}

/* C = selp(phi_k, K, p) (or selp(K, phi_k, p)) for k = 0..3 with one
 * constant K, one predicate p and the phis on one side: cuBLASLt's zeroing
 * of the accumulator before its first K step.  With p uniform in the wave
 * it is the same selection of every element in any layout, so the
 * accumulator passes through in AMD's layout.  The phis into phi[], the
 * side (0: the phis are selp's first operand), K and p; false otherwise. */
static bool selp_of(ir_value *const *c, ir_instr **phi, unsigned *side, ir_value **kv, ir_value **p) {
  uint64_t k0 = 0;
  for (unsigned k = 0; k < 4; k++) {
    const ir_instr *d = c[k]->kind == IR_VAL_INSTR ? c[k]->def : NULL;
    if (!d || d->op != ir_op_selp || d->guard || d->nsrc != 3 || ir_type_bits((ir_type)c[k]->type) != 32) return false;
    uint64_t kk;
    unsigned sd = is_phi32(d->src[0]) ? 0 : 1;
    if (!is_phi32(d->src[sd]) || !lower_const_through_copies(d->src[1 - sd], &kk)) return false;
    if (k && (sd != *side || kk != k0 || d->src[2] != *p)) return false;
    *side = sd, k0 = kk, *p = d->src[2], *kv = d->src[1 - sd];
    phi[k] = d->src[sd]->def;
  }
  return true;
}

/* membership of a value in a tuple (kind 1) or as a candidate's D (kind 2) */
typedef struct memb { uint8_t kind, elem; int32_t idx; } memb;

static void add_tuple(lower_mma_webs *w, fweb *x, memb *m, ir_instr *const *phi, unsigned row) {
  if (!row_ok(w, row)) return;
  if (x->nt == x->capt) {
    x->t = lower_scratch_grow(w->a, x->t, x->nt, x->capt ? 2 * x->capt : 16, sizeof *x->t);
    x->capt = x->capt ? 2 * x->capt : 16;
  }
  tuple *t = &x->t[x->nt];
  *t = (tuple){.block = phi[0]->block, .row = row};
  for (unsigned k = 0; k < 4; k++) {
    t->phi[k] = phi[k];
    x->tuple_of[phi[k]->dst[0]->id] = (int32_t)x->nt;
    x->elem_of[phi[k]->dst[0]->id] = (uint8_t)k;
    m[phi[k]->dst[0]->id] = (memb){1, (uint8_t)k, (int32_t)x->nt};
  }
  x->nt++;
}

/* Four distinct phis of one block, in no tuple. */
static bool free_group(const fweb *x, ir_instr *const *phi) {
  for (unsigned k = 0; k < 4; k++) {
    if (!phi[k] || phi[k]->block != phi[0]->block || x->tuple_of[phi[k]->dst[0]->id] >= 0) return false;
    for (unsigned j = 0; j < k; j++)
      if (phi[j] == phi[k]) return false;
  }
  return true;
}

/* Whether block to is reachable from block from (a walk over successors). */
static bool reaches(ir_block *from, const ir_block *to, uint8_t *seen, ir_block **stack) {
  uint32_t n = from->func->nblocks, sp = 0;
  memset(seen, 0, n);
  stack[sp++] = from;
  seen[from->id] = 1;
  while (sp) {
    ir_block *b = stack[--sp];
    for (uint32_t k = 0; k < ir_block_nsuccs(b); k++) {
      ir_block *s = ir_block_succ(b, k);
      if (s == to) return true;
      if (s->id < n && !seen[s->id]) seen[s->id] = 1, stack[sp++] = s;
    }
  }
  return false;
}

/* The incoming tuple (kind 1) or candidate D (kind 2) of tuple t from
 * predecessor s, in order, or kind 0. */
static memb incoming(const fweb *x, const memb *m, const tuple *t, unsigned s) {
  memb r = {0, 0, 0};
  for (unsigned k = 0; k < 4; k++) {
    const ir_value *v = t->phi[k]->nsrc > s ? strip(t->phi[k]->src[s]) : NULL;
    if (!v || v->kind != IR_VAL_INSTR || v->id >= x->n0 || !m[v->id].kind || m[v->id].elem != k) return (memb){0, 0, 0};
    if (k && (m[v->id].kind != r.kind || m[v->id].idx != r.idx)) return (memb){0, 0, 0};
    r = m[v->id];
  }
  return r;
}

/* dirty[v] for the values (ids below n0) read by anything but a phi of a
 * kept tuple, an mma chained to the mma defining them (its C is their D,
 * in order) or an unguarded copy whose result is itself clean. */
static void dirty_uses(const fweb *x, const memb *m, const uint8_t *keep, uint8_t *dirty) {
  memset(dirty, 0, x->n0);
  for (bool changed = true; changed;) {
    changed = false;
    ir_foreach_block(x->f, blk) ir_foreach_instr(blk, i) {
      bool phi = i->op == ir_op_phi && i->dst[0]->id < x->n0 && m[i->dst[0]->id].kind == 1 &&
                 keep[m[i->dst[0]->id].idx];
      bool copy = i->op == ir_op_copy && !i->guard && i->nsrc == 1 && i->ndst == 1 && i->dst[0]->id < x->n0;
      for (unsigned k = 0; k < i->nsrc; k++) {
        const ir_value *v = i->src[k];
        if (!v || v->kind != IR_VAL_INSTR || v->id >= x->n0 || dirty[v->id] || phi) continue;
        bool ok = copy && !dirty[i->dst[0]->id];
        if (!ok && i->op == ir_op_mma && k + 4 <= i->nsrc && v->def->op == ir_op_mma) {
          /* C = the D of v's mma, in order: lower_mma_amd_chained's chain */
          unsigned c0 = i->nsrc - 4;
          ok = k >= c0;
          for (unsigned e = 0; e < 4 && ok; e++) ok = i->src[c0 + e] == v->def->dst[e];
        }
        if (!ok) dirty[v->id] = 1, changed = true;
      }
    }
  }
}

/* Keeps the tuples that pay: a candidate's C (no C gather), a tuple whose
 * value flows into a kept one (an outer loop's phis), and one fed by a
 * candidate's D from which that mma cannot be reached again (the merge
 * after the loop: the D gather leaves the loop).  The others (a loop's
 * phis that only a non-mma instruction reads, the phis of a later loop
 * that carries the finished tile) would only add conversions. */
static void prune(lower_mma_webs *w, fweb *x, memb *m, ir_instr **cand, const unsigned *crow, size_t ncand) {
  if (!x->nt) return;
  uint8_t *keep = LOWER_SCRATCH(w->a, uint8_t, x->nt);
  for (size_t c = 0; c < ncand; c++) {
    unsigned row, c0;
    lower_mma_amd_acc_row(cand[c], w->target, &row, &c0);
    ir_value *cv[4];
    ir_instr *phi[4];
    unsigned side;
    ir_value *kv, *p;
    for (unsigned k = 0; k < 4; k++) cv[k] = cand[c]->src[c0 + k];
    if (selp_of(cv, phi, &side, &kv, &p) &&
        (p->kind != IR_VAL_INSTR || (x->uniform && p->id < x->n0 && x->uniform[p->id])))
      for (unsigned k = 0; k < 4; k++) cv[k] = phi[k]->dst[0];
    const ir_value *v = cv[0];
    int32_t t = v->kind == IR_VAL_INSTR && v->id < x->n0 ? x->tuple_of[v->id] : -1;
    bool in_order = t >= 0 && lower_mma_amd_same_acc(x->t[t].row, crow[c]);
    for (unsigned k = 0; k < 4 && in_order; k++) in_order = cv[k] == x->t[t].phi[k]->dst[0];
    if (in_order) keep[t] = 1;
  }
  /* kind 2: tuples fed by a D that leaves its mma's loop (2: maybe) */
  uint8_t *seen = LOWER_SCRATCH(w->a, uint8_t, x->f->nblocks + 1);
  ir_block **stack = LOWER_SCRATCH(w->a, ir_block *, x->f->nblocks + 1);
  int32_t *fed = LOWER_SCRATCH(w->a, int32_t, x->nt);
  for (size_t t = 0; t < x->nt; t++) {
    fed[t] = -1;
    for (unsigned s = 0; s < x->t[t].phi[0]->nsrc && !keep[t] && fed[t] < 0; s++) {
      memb in = incoming(x, m, &x->t[t], s);
      if (in.kind == 2 && lower_mma_amd_same_acc(crow[in.idx], x->t[t].row) &&
          !reaches(x->t[t].block, cand[in.idx]->block, seen, stack))
        fed[t] = in.idx, keep[t] = 2;
    }
  }
  uint8_t *dirty = LOWER_SCRATCH(w->a, uint8_t, x->n0);
  for (bool changed = true; changed;) {
    changed = false;
    /* the kept tuples' incoming tuples */
    for (size_t t = 0; t < x->nt; t++) {
      if (!keep[t]) continue;
      for (unsigned s = 0; s < x->t[t].phi[0]->nsrc; s++) {
        memb in = incoming(x, m, &x->t[t], s);
        if (in.kind == 1 && keep[in.idx] != 1 && lower_mma_amd_same_acc(x->t[in.idx].row, x->t[t].row))
          keep[in.idx] = 1, changed = true;
      }
    }
    /* a kind-2 tuple pays only when its D has no other reader than kept
     * tuples and chained mma (else the D gather stays in the loop) */
    dirty_uses(x, m, keep, dirty);
    for (size_t t = 0; t < x->nt; t++) {
      if (keep[t] != 2) continue;
      for (unsigned k = 0; k < 4 && keep[t]; k++)
        if (dirty[cand[fed[t]]->dst[k]->id]) keep[t] = 0, changed = true;
    }
  }
  size_t n = 0;
  for (size_t t = 0; t < x->nt; t++) {
    for (unsigned k = 0; k < 4; k++) {
      uint32_t id = x->t[t].phi[k]->dst[0]->id;
      x->tuple_of[id] = keep[t] ? (int32_t)n : -1;
      m[id] = keep[t] ? (memb){1, (uint8_t)k, (int32_t)n} : (memb){0, 0, 0};
    }
    if (keep[t]) x->t[n++] = x->t[t];
  }
  x->nt = n;
}

static void analyse(lower_mma_webs *w, ir_func *f) {
  uint32_t N = f->nvalues;
  pw_arena *a = w->a;
  size_t ncand = 0, cap = 0;
  ir_instr **cand = NULL;
  unsigned *crow = NULL;
  ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
    unsigned row, c0;
    if (i->op != ir_op_mma || i->guard || !lower_mma_amd_acc_row(i, w->target, &row, &c0)) continue;
    if (ncand == cap) {
      cand = lower_scratch_grow(a, cand, ncand, cap ? 2 * cap : 16, sizeof *cand);
      crow = lower_scratch_grow(a, crow, ncand, cap ? 2 * cap : 16, sizeof *crow);
      cap = cap ? 2 * cap : 16;
    }
    cand[ncand] = i, crow[ncand++] = row;
  }
  if (!ncand) return;
  fweb *x = PW_NEW(a, fweb);
  *x = (fweb){.f = f, .n0 = N, .tuple_of = LOWER_SCRATCH(a, int32_t, N), .elem_of = LOWER_SCRATCH(a, uint8_t, N),
              .rec_of = LOWER_SCRATCH(a, int32_t, N)};
  memb *m = LOWER_SCRATCH(a, memb, N);
  for (uint32_t k = 0; k < N; k++) x->tuple_of[k] = x->rec_of[k] = -1;
  for (size_t c = 0; c < ncand; c++)
    for (unsigned k = 0; k < 4; k++) m[cand[c]->dst[k]->id] = (memb){2, (uint8_t)k, (int32_t)c};
  /* seeds: a candidate's C, or a uniform selp of it */
  bool divergence = false;
  for (size_t c = 0; c < ncand; c++) {
    unsigned row, c0;
    lower_mma_amd_acc_row(cand[c], w->target, &row, &c0);
    ir_instr *phi[4];
    bool ok = true;
    for (unsigned k = 0; k < 4 && ok; k++) {
      ir_value *v = cand[c]->src[c0 + k];
      ok = is_phi32(v);
      phi[k] = ok ? v->def : NULL;
    }
    unsigned side;
    ir_value *kv, *p;
    if (!ok && selp_of(&cand[c]->src[c0], phi, &side, &kv, &p)) {
      if (!divergence) {
        ir_compute_divergence(f, 32);   /* per warp: a warp's elements stay in its lanes (its half of a wave64) */
        x->uniform = LOWER_SCRATCH(a, uint8_t, N);
        for (uint32_t k = 0; k < N; k++) x->uniform[k] = 1;
        ir_foreach_block(f, blk) ir_foreach_instr(blk, i)
          for (unsigned k = 0; k < i->ndst; k++) x->uniform[i->dst[k]->id] = !i->dst[k]->divergent;
        divergence = true;
      }
      ok = p->kind != IR_VAL_INSTR || (p->id < N && x->uniform[p->id]);
    }
    if (ok && free_group(x, phi)) add_tuple(w, x, m, phi, row);
  }
  /* groups whose operand from one predecessor is a candidate's D or a tuple */
  for (bool changed = true; changed;) {
    changed = false;
    ir_foreach_block(f, blk) ir_foreach_instr(blk, p) {
      if (p->op != ir_op_phi) break;
      if (!is_phi32(p->dst[0]) || x->tuple_of[p->dst[0]->id] >= 0) continue;
      for (unsigned s = 0; s < p->nsrc; s++) {
        const ir_value *v = strip(p->src[s]);
        if (!v || v->kind != IR_VAL_INSTR || v->id >= N || !m[v->id].kind || m[v->id].elem) continue;
        memb want = m[v->id];
        ir_instr *phi[4] = {p, NULL, NULL, NULL};
        for (unsigned k = 1; k < 4; k++)
          ir_foreach_instr(blk, q) {
            if (q->op != ir_op_phi) break;
            const ir_value *u = q->nsrc > s ? strip(q->src[s]) : NULL;
            if (q != p && is_phi32(q->dst[0]) && u && u->kind == IR_VAL_INSTR && u->id < N && m[u->id].kind == want.kind &&
                m[u->id].idx == want.idx && m[u->id].elem == k) {
              phi[k] = q;
              break;
            }
          }
        if (!free_group(x, phi)) continue;
        size_t before = x->nt;
        add_tuple(w, x, m, phi, want.kind == 1 ? x->t[want.idx].row : crow[want.idx]);
        changed = x->nt != before;
        break;
      }
    }
  }
  prune(w, x, m, cand, crow, ncand);
  if (!x->nt) return;
  if (!x->uniform) {   /* the loops' exit branches (finish_fn: where a tile leaves) */
    ir_compute_divergence(f, 32);   /* per warp: a warp's elements stay in its lanes (its half of a wave64) */
    x->uniform = LOWER_SCRATCH(a, uint8_t, N);
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i)
      for (unsigned k = 0; k < i->ndst; k++) x->uniform[i->dst[k]->id] = !i->dst[k]->divergent;
  }
  /* the twins, their operands set after the walk */
  for (size_t k = 0; k < x->nt; k++) {
    tuple *t = &x->t[k];
    ir_builder b = ir_builder_before(t->phi[0]);
    for (unsigned r = 0; r < lower_mma_amd_acc_regs(t->row); r++) {
      t->twin[r] = ir_phi(&b, t->block, ir_type_b32, t->phi[0]->nsrc);
      for (unsigned s = 0; s < t->phi[0]->nsrc; s++) ir_phi_set_src(t->twin[r], s, ir_undef(&b, ir_type_b32));
      t->amd[r] = t->twin[r]->dst[0];
    }
  }
  x->next = w->fns;
  w->fns = x;
}

lower_mma_webs *lower_mma_webs_begin(ir_module *m, pw_arena *a, const char *target) {
  if (!target) return NULL;
  lower_mma_webs *w = PW_NEW(a, lower_mma_webs);
  *w = (lower_mma_webs){.a = a, .target = target};
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    analyse(w, f);
  }
  return w;
}

static void push(lower_mma_chain *chain, ir_value *const *c, ir_value *const *acc, unsigned row, const ir_block *blk) {
  const ir_amx_info *r = ir_amx_info_of(row);
  struct lower_mma_acc *e = &chain->e[chain->next++ % LOWER_MMA_CHAIN_N];
  *e = (struct lower_mma_acc){.block = blk, .layout = r->layout, .wave = r->wave, .nc = r->nc};
  for (unsigned k = 0; k < 4; k++) e->d[k] = c[k];
  for (unsigned k = 0; k < r->nc; k++) e->acc[k] = acc[k];
}

void lower_mma_web_before(lower_mma_webs *w, ir_builder *b, const ir_instr *i, lower_mma_chain *chain) {
  fweb *x = fweb_of(w, i->block ? i->block->func : NULL);
  unsigned row, c0;
  if (!x || i->guard || !lower_mma_amd_acc_row(i, w->target, &row, &c0)) return;
  ir_value *const *c = &i->src[c0];
  ir_instr *phi[4];
  unsigned side;
  ir_value *kv, *p;
  if (x->uniform && selp_of(c, phi, &side, &kv, &p) && (p->kind != IR_VAL_INSTR || (p->id < x->n0 && x->uniform[p->id]))) {
    int32_t t = phi[0]->dst[0]->id < x->n0 ? x->tuple_of[phi[0]->dst[0]->id] : -1;
    if (t < 0 || !lower_mma_amd_same_acc(x->t[t].row, row)) return;
    for (unsigned k = 0; k < 4; k++)
      if (x->t[t].phi[k] != phi[k]) return;
    ir_value *acc[8];
    for (unsigned r = 0; r < lower_mma_amd_acc_regs(x->t[t].row); r++)
      acc[r] = side ? lower_selp(b, ir_type_b32, kv, x->t[t].amd[r], p) : lower_selp(b, ir_type_b32, x->t[t].amd[r], kv, p);
    push(chain, c, acc, x->t[t].row, i->block);
    return;
  }
  for (unsigned k = 0; k < 4; k++)
    if (c[k]->kind != IR_VAL_INSTR || c[k]->id >= x->n0) return;
  int32_t t = x->tuple_of[c[0]->id];
  if (t >= 0) {
    for (unsigned k = 0; k < 4; k++)
      if (x->tuple_of[c[k]->id] != t || x->elem_of[c[k]->id] != k) return;
    if (lower_mma_amd_same_acc(x->t[t].row, row)) push(chain, c, x->t[t].amd, x->t[t].row, i->block);
    return;
  }
  int32_t r = x->rec_of[c[0]->id];
  if (r < 0 || x->r[r].block == i->block || !lower_mma_amd_same_acc(x->r[r].row, row)) return;
  for (unsigned k = 0; k < 4; k++)
    if (x->r[r].dst[k] != c[k]) return;
  push(chain, c, x->r[r].acc, x->r[r].row, i->block);   /* its D dominates this use: so does its accumulator */
}

void lower_mma_web_after(lower_mma_webs *w, const ir_instr *i, ir_value *const *out, const lower_mma_chain *chain,
                         unsigned chain_next_before) {
  fweb *x = fweb_of(w, i->block ? i->block->func : NULL);
  unsigned row, c0;
  if (!x || chain->next == chain_next_before || !lower_mma_amd_acc_row(i, w->target, &row, &c0)) return;
  const struct lower_mma_acc *e = &chain->e[(chain->next - 1) % LOWER_MMA_CHAIN_N];
  if (e->d[0] != i->dst[0] || i->dst[0]->id >= x->n0) return;
  if (x->nr == x->capr) {
    x->r = lower_scratch_grow(w->a, x->r, x->nr, x->capr ? 2 * x->capr : 16, sizeof *x->r);
    x->capr = x->capr ? 2 * x->capr : 16;
  }
  rec *r = &x->r[x->nr];
  *r = (rec){.block = i->block, .row = row};
  for (unsigned k = 0; k < 4; k++) r->dst[k] = i->dst[k], r->out[k] = out[k];
  for (unsigned k = 0; k < e->nc; k++) r->acc[k] = e->acc[k];
  x->rec_of[i->dst[0]->id] = (int32_t)x->nr++;
}

/* The twins' operands from predecessor s of tuple t. */
static void twin_operands(fweb *x, tuple *t, unsigned s, const int32_t *rec_by_out, uint32_t N) {
  unsigned nc = lower_mma_amd_acc_regs(t->row);
  ir_value *v[4];
  for (unsigned k = 0; k < 4; k++) {
    v[k] = t->phi[k]->nsrc > s ? t->phi[k]->src[s] : NULL;
    if (!v[k]) {   /* an edge the walk added (none today): left to the verifier */
      for (unsigned r = 0; r < nc; r++) ir_phi_set_src(t->twin[r], s, NULL);
      return;
    }
  }
  ir_value *const *acc = NULL;
  const ir_value *sv[4];
  for (unsigned k = 0; k < 4; k++) sv[k] = strip(v[k]);
  /* another tuple of the same class, in order */
  int32_t u = sv[0]->kind == IR_VAL_INSTR && sv[0]->id < x->n0 ? x->tuple_of[sv[0]->id] : -1;
  if (u >= 0 && lower_mma_amd_same_acc(x->t[u].row, t->row)) {
    acc = x->t[u].amd;
    for (unsigned k = 0; k < 4 && acc; k++)
      if (sv[k] != x->t[u].phi[k]->dst[0]) acc = NULL;
  }
  /* a lowered mma's D (what replaced it: a copy itself), in order, through
   * the program's copies */
  for (unsigned k = 0; k < 4; k++) sv[k] = v[k];
  for (unsigned depth = 0; !acc && depth < 8; depth++) {
    int32_t r = sv[0]->kind == IR_VAL_INSTR && sv[0]->id < N ? rec_by_out[sv[0]->id] : -1;
    if (r >= 0 && lower_mma_amd_same_acc(x->r[r].row, t->row)) {
      acc = x->r[r].acc;
      for (unsigned k = 0; k < 4 && acc; k++)
        if (sv[k] != x->r[r].out[k]) acc = NULL;
    }
    bool copies = true;
    for (unsigned k = 0; k < 4; k++) {
      const ir_instr *d = sv[k]->kind == IR_VAL_INSTR ? sv[k]->def : NULL;
      copies = copies && d && d->op == ir_op_copy && !d->guard && d->nsrc == 1 && d->src[0];
    }
    if (acc || !copies) break;
    for (unsigned k = 0; k < 4; k++) sv[k] = sv[k]->def->src[0];
  }
  if (acc) {
    for (unsigned k = 0; k < nc; k++) ir_phi_set_src(t->twin[k], s, acc[k]);
    return;
  }
  ir_block *pred = t->block->preds[s];
  ir_builder b = pred->last && ir_is_terminator(pred->last) ? ir_builder_before(pred->last) : ir_builder_at_end(pred);
  /* one constant in every element (zeros): the same in every layout */
  uint64_t c0, ck;
  bool same = lower_const_through_copies(v[0], &c0);
  for (unsigned k = 1; k < 4 && same; k++) same = lower_const_through_copies(v[k], &ck) && ck == c0;
  ir_value *got[8];
  if (same) {
    for (unsigned k = 0; k < nc; k++) got[k] = lower_imm32(&b, (uint32_t)c0);
  } else {
    b.loc = t->phi[0]->loc;
    bool ok = lower_mma_amd_acc_in(&b, t->row, v, got);
    PW_ASSERT(ok);   /* row_ok */
  }
  for (unsigned k = 0; k < nc; k++) ir_phi_set_src(t->twin[k], s, got[k]);
}

/* Per tuple, the block where the loop it heads is left, when there is one
 * to convert its readers in instead of the tuple's own block (which a loop
 * tested at its head runs every iteration): a successor E of the tuple's
 * block with that block as its only predecessor, which cannot reach it
 * again, behind a branch uniform in the wave (so the whole warp enters E
 * together).  finish_fn keeps it only when E dominates every reader. */
static ir_block **exits(lower_mma_webs *w, const fweb *x) {
  ir_func *f = x->f;
  ir_block **e = LOWER_SCRATCH(w->a, ir_block *, x->nt + 1);
  ir_invalidate_analyses(f, 0);   /* the walk changed blocks */
  ir_require_analyses(f, IR_ANALYSIS_DOMINANCE);
  uint8_t *seen = LOWER_SCRATCH(w->a, uint8_t, f->nblocks + 1);
  ir_block **stack = LOWER_SCRATCH(w->a, ir_block *, f->nblocks + 1);
  for (size_t k = 0; k < x->nt; k++) {
    ir_block *h = x->t[k].block;
    const ir_instr *br = h->last;
    if (!br || br->op != ir_op_cbr || br->nsrc < 1 || !x->uniform) continue;
    const ir_value *c = br->src[0];
    if (c->kind == IR_VAL_INSTR && (c->id >= x->n0 || !x->uniform[c->id])) continue;
    if (c->kind == IR_VAL_PARAM) continue;
    for (uint32_t s = 0; s < ir_block_nsuccs(h) && !e[k]; s++) {
      ir_block *b = ir_block_succ(h, s);
      if (b != h && b->npreds == 1 && !reaches(b, h, seen, stack)) e[k] = b;
    }
  }
  return e;
}

static void finish_fn(lower_mma_webs *w, fweb *x) {
  ir_func *f = x->f;
  uint32_t N = f->nvalues;
  int32_t *rec_by_out = LOWER_SCRATCH(w->a, int32_t, N);
  for (uint32_t k = 0; k < N; k++) rec_by_out[k] = -1;
  for (size_t k = 0; k < x->nr; k++)
    if (x->r[k].out[0] && x->r[k].out[0]->id < N) rec_by_out[x->r[k].out[0]->id] = (int32_t)k;
  for (size_t k = 0; k < x->nt; k++)
    for (unsigned s = 0; s < x->t[k].phi[0]->nsrc; s++) twin_operands(x, &x->t[k], s, rec_by_out, N);
  /* the readers of the old phis: their NVIDIA value, converted once after
   * the twins */
  uint8_t *need = LOWER_SCRATCH(w->a, uint8_t, x->nt * 4);
  ir_block **exit = exits(w, x);
  ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
    if (i->op == ir_op_phi && i->dst[0]->id < x->n0 && x->tuple_of[i->dst[0]->id] >= 0) continue;
    for (unsigned k = 0; k < i->nsrc; k++) {
      const ir_value *v = i->src[k];
      if (!v || v->kind != IR_VAL_INSTR || v->id >= x->n0 || x->tuple_of[v->id] < 0 || v->def->op != ir_op_phi) continue;
      int32_t t = x->tuple_of[v->id];
      need[4 * t + x->elem_of[v->id]] = 1;
      /* a reader the exit block does not dominate: convert at the tuple's block */
      const ir_block *rb = i->op == ir_op_phi ? (k < blk->npreds ? blk->preds[k] : NULL) : blk;
      if (exit[t] && (!rb || !ir_block_dominates(exit[t], rb))) exit[t] = NULL;
    }
  }
  ir_value **conv = LOWER_SCRATCH(w->a, ir_value *, x->nt * 4);
  bool any = false;
  for (size_t k = 0; k < x->nt; k++) {
    tuple *t = &x->t[k];
    ir_block *where = exit[k] ? exit[k] : t->block;
    ir_instr *at = where->first;
    while (at && at->op == ir_op_phi) at = at->next;
    ir_builder b = at ? ir_builder_before(at) : ir_builder_at_end(where);
    b.loc = t->phi[0]->loc;
    for (unsigned e = 0; e < 4; e++) {
      if (!need[4 * k + e]) continue;
      conv[4 * k + e] = lower_mma_amd_acc_out(&b, t->row, t->amd, e);
      PW_ASSERT(conv[4 * k + e]);   /* row_ok */
      any = true;
    }
  }
  /* the map after the conversions: ir_replace_uses reads it by every id */
  ir_value **map = LOWER_SCRATCH(w->a, ir_value *, f->nvalues + 1);
  for (size_t k = 0; k < x->nt; k++)
    for (unsigned e = 0; e < 4; e++)
      if (conv[4 * k + e]) map[x->t[k].phi[e]->dst[0]->id] = conv[4 * k + e];
  if (any) ir_replace_uses(f, map);
  for (size_t k = 0; k < x->nt; k++)
    for (unsigned e = 0; e < 4; e++) ir_instr_remove(x->t[k].phi[e]);
}

void lower_mma_webs_finish(lower_mma_webs *w) {
  for (fweb *x = w ? w->fns : NULL; x; x = x->next) finish_fn(w, x);
}
