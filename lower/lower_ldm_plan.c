/* lower/lower_ldm_plan.c: which ldmatrix results may be loaded straight into
 * the A/B layout of AMD's matrix instruction (lower_mma_amd.c builds the
 * loads; docs/lowering.md, "ldmatrix in AMD's layout").
 *
 * An ldmatrix result may reach the mma through a few per-thread instructions
 * (lower_ldm_root: cuSPARSE rounds tf32 operands with an add, abs, setp and
 * selp); those count as part of the ldmatrix (each of their results read
 * only by mma A/B operands, phis, or more of them), and the AMD lane applies
 * them to the word it loads.
 *
 * Per function, ldmatrix instructions, the phis that merge their results (a
 * software-pipelined K loop: the prologue's fragments and those the loop
 * loads for its next step before the back edge) and the mma that read
 * either as A or B operands are joined into components (an mma joins every
 * ldmatrix and phi it reads, a phi the ldmatrix it merges).  A component is
 * taken as a whole, or not at all (every ldmatrix in it keeps NVIDIA's
 * layout, lower_ldst_matrix), when any of these holds:
 *   - an ldmatrix is guarded, or one of its results is read by anything but
 *     an A/B operand of an unguarded mma or a phi all of whose operands are
 *     ldmatrix results (a shfl, a store, a movmatrix, a C operand, a keep
 *     value: that reader needs NVIDIA's fragment);
 *   - such a phi is read by anything but A/B operands of unguarded mma;
 *   - an mma of the component does not go on one of lower_mma_amd's schemes
 *     with A/B made per element (f16, bf16; tf32 split into bf16 hi/lo; e4m3
 *     and e5m2 widened to f16), or one of its AMD A/B registers reads these
 *     values in some lanes and others in others, or (through phis) two
 *     ldmatrix on one edge (lower_mma_amd_ldm_fits: a dry run);
 *   - an mma reads an ldmatrix result directly and comes first in the
 *     order the walker lowers them (the loads are built at the ldmatrix
 *     and recorded for the mma that comes later; through phis the order
 *     does not matter: the register's phi is made here and each ldmatrix
 *     fills the operands of its edges).
 * Not yet: phis of phis, arithmetic after a phi, tf32/fp8 from .trans.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir_mma.h"
#include "lower_internal.h"

static int cmp_use(const void *x, const void *y) {
  const struct lower_ldm_use *a = x, *b = y;
  uintptr_t p = (uintptr_t)a->ldm, q = (uintptr_t)b->ldm;
  if (p != q) return p < q ? -1 : 1;
  p = (uintptr_t)a->mma, q = (uintptr_t)b->mma;
  return p < q ? -1 : p > q;
}
static int cmp_mma(const void *x, const void *y) {
  uintptr_t p = (uintptr_t)((const struct lower_ldm_mma *)x)->mma, q = (uintptr_t)((const struct lower_ldm_mma *)y)->mma;
  return p < q ? -1 : p > q;
}

/* The number of A and B registers of mma i (0: not a form ir_mma_find knows). */
static unsigned ab_regs(const ir_instr *i) {
  const ir_mma_form *f = ir_mma_find(i, NULL);
  if (!f) return 0;
  return ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->a)->nelem, (ir_type)i->type2) +
         ir_mma_nregs(ir_mma_frag_info((ir_mma_frag_id)f->b)->nelem, (ir_type)i->type3);
}

static void count(uint32_t *n, const ir_value *v) {
  if (v && v->kind == IR_VAL_INSTR) n[v->id]++;
}

/* At most this many instructions between an ldmatrix result and the mma
 * operand made from it (cuSPARSE's rounding to tf32: add, mov, abs, setp,
 * selp). */
#define LDM_EXPR_MAX 8

static const ir_value *root_rec(const ir_value *v, unsigned *budget) {
  if (!v || v->kind != IR_VAL_INSTR) return NULL;
  const ir_instr *i = v->def;
  if (i->op == ir_op_ldmatrix) return v;
  /* flags 0: no memory, side effect, warp or matrix operation, no trap
   * (a special register read has no operand: never reached from a root) */
  if (!*budget || i->guard || i->op == ir_op_phi || i->ndst != 1 || !i->nsrc || i->nsrc > 4 ||
      ir_op_infos[i->op].flags)
    return NULL;
  (*budget)--;
  const ir_value *r = NULL;
  for (unsigned k = 0; k < i->nsrc; k++) {
    if (i->src[k]->kind == IR_VAL_CONST) continue;
    const ir_value *x = root_rec(i->src[k], budget);
    if (!x || (r && r != x)) return NULL;
    r = x;
  }
  return r;
}

/* Per-thread arithmetic on one ldmatrix register (cuSPARSE rounds each
 * tf32 operand to nearest, ties away, with an integer add, abs, setp and
 * selp between the ldmatrix and the mma) is per element as the tf32 split
 * and the fp8 widening are: an AMD lane that loads the register's word
 * applies the same instructions to it (lower_mma_amd.c, ldm_apply). */
const ir_value *lower_ldm_root(const ir_value *v) {
  unsigned budget = LDM_EXPR_MAX;
  return root_rec(v, &budget);
}

const ir_instr *lower_ldm_of(const ir_value *v) {
  const ir_value *r = lower_ldm_root(v);
  return r ? r->def : NULL;
}
const ir_instr *lower_ldm_phi(const ir_value *v) {
  if (!v || v->kind != IR_VAL_INSTR || v->def->op != ir_op_phi || v->def->guard || !v->def->nsrc) return NULL;
  for (unsigned e = 0; e < v->def->nsrc; e++)
    if (!lower_ldm_of(v->def->src[e])) return NULL;
  return v->def;
}


/* One function's scan: per value id the uses in all, as an A/B operand of
 * an unguarded mma, as an operand of a phi of ldmatrix results; the order
 * of ldmatrix and mma; the components (an mma joins every ldmatrix and phi
 * it reads as A/B, a phi the ldmatrix it merges), and which are bad. */
typedef struct plan_fn {
  uint32_t *total, *as_ab, *as_phi, *as_expr, *pos, *comp;
  uint8_t *bad;
} plan_fn;

/* Whether i is arithmetic on an ldmatrix result (lower_ldm_root), not the ldmatrix itself. */
static bool is_expr(const ir_instr *i) {
  return i->op != ir_op_ldmatrix && i->op != ir_op_phi && i->ndst == 1 && lower_ldm_of(i->dst[0]);
}

static void plan_scan(plan_fn *w, ir_func *f) {
  uint32_t at = 0;
  ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
    at++;
    if (i->ndst && (i->op == ir_op_ldmatrix || i->op == ir_op_mma)) w->pos[i->dst[0]->id] = at;
    for (unsigned k = 0; k < i->nsrc; k++) count(w->total, i->src[k]);
    count(w->total, i->guard);
    for (unsigned k = 0; i->guard && i->keep && k < i->ndst; k++) count(w->total, i->keep[k]);
    if (i->op == ir_op_phi && lower_ldm_phi(i->dst[0]))
      for (unsigned e = 0; e < i->nsrc; e++) {
        w->as_phi[i->src[e]->id]++;
        lower_uf_unite(w->comp, i->dst[0]->id, lower_ldm_of(i->src[e])->dst[0]->id);
      }
    if (is_expr(i)) {   /* its operands' other uses, its root's component */
      for (unsigned k = 0; k < i->nsrc; k++)
        if (i->src[k]->kind == IR_VAL_INSTR) w->as_expr[i->src[k]->id]++;
      lower_uf_unite(w->comp, i->dst[0]->id, lower_ldm_of(i->dst[0])->dst[0]->id);
    }
    if (i->op != ir_op_mma || i->guard) continue;
    unsigned nab = ab_regs(i);
    int first = -1;
    for (unsigned k = 0; k < nab && k < i->nsrc; k++) {
      const ir_value *v = i->src[k];
      if (v->kind != IR_VAL_INSTR) continue;
      w->as_ab[v->id]++;
      const ir_instr *n = lower_ldm_of(v) ? lower_ldm_of(v) : lower_ldm_phi(v);
      if (!n) continue;
      if (first >= 0) lower_uf_unite(w->comp, (uint32_t)first, n->dst[0]->id);
      first = (int)n->dst[0]->id;
    }
  }
}

/* The ldmatrix and phis of ldmatrix results that mma i reads as A/B: marks
 * their component bad where the scheme does not take them, or where i
 * comes before an ldmatrix it reads directly. */
static void plan_mma(plan_fn *w, const ir_instr *i, const char *target) {
  unsigned nab = ab_regs(i);
  bool fits = true, checked = false;
  for (unsigned k = 0; k < nab && k < i->nsrc; k++) {
    const ir_value *v = i->src[k];
    const ir_instr *p = lower_ldm_phi(v), *L = lower_ldm_of(v);
    if (!L && !p) continue;
    if (!checked) fits = lower_mma_amd_ldm_fits(i, target), checked = true;
    uint32_t c = lower_uf_find(w->comp, (L ? L : p)->dst[0]->id);
    if (!fits || (L && w->pos[L->dst[0]->id] >= w->pos[i->dst[0]->id])) w->bad[c] = 1;
  }
}

static void *grow(pw_arena *a, void *p, size_t n, size_t *cap, size_t elem) {
  if (n < *cap) return p;
  size_t want = *cap ? 2 * *cap : 64;
  p = lower_scratch_grow(a, p, n, want, elem);
  *cap = want;
  return p;
}

void lower_ldm_plan_build(ir_module *m, pw_arena *a, const char *target, lower_ldm_plan *out) {
  *out = (lower_ldm_plan){0};
  if (!target) return;
  size_t ucap = 0, mcap = 0;
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    bool any = false;
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i) any |= i->op == ir_op_ldmatrix;
    if (!any) continue;
    size_t nv = f->nvalues + 1;
    plan_fn w = {LOWER_SCRATCH(a, uint32_t, nv), LOWER_SCRATCH(a, uint32_t, nv), LOWER_SCRATCH(a, uint32_t, nv),
                 LOWER_SCRATCH(a, uint32_t, nv), LOWER_SCRATCH(a, uint32_t, nv), LOWER_SCRATCH(a, uint32_t, nv),
                 LOWER_SCRATCH(a, uint8_t, nv)};
    for (uint32_t k = 0; k < nv; k++) w.comp[k] = k;
    plan_scan(&w, f);
    /* bad: an ldmatrix read by anything but mma A/B operands and phis of
     * ldmatrix results, guarded or of a form lower_ldst_matrix refuses; a
     * phi read by anything but mma A/B operands; an mma the scheme does not
     * take with these operands */
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
      if (i->op == ir_op_ldmatrix || is_expr(i)) {
        bool bad = i->guard || (i->op == ir_op_ldmatrix && lower_matrix_why(i) != NULL);
        for (unsigned d = 0; d < i->ndst; d++)
          bad |= w.total[i->dst[d]->id] != w.as_ab[i->dst[d]->id] + w.as_phi[i->dst[d]->id] + w.as_expr[i->dst[d]->id];
        if (bad) w.bad[lower_uf_find(w.comp, i->dst[0]->id)] = 1;
      } else if (i->op == ir_op_phi && lower_ldm_phi(i->dst[0])) {
        if (w.total[i->dst[0]->id] != w.as_ab[i->dst[0]->id]) w.bad[lower_uf_find(w.comp, i->dst[0]->id)] = 1;
      } else if (i->op == ir_op_mma && !i->guard) {
        plan_mma(&w, i, target);
      }
    }
    /* the accepted: each mma of a good component gets its pre[] (and the
     * phis of its registers read through phis), each of its ldmatrix a use */
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
      if (i->op != ir_op_mma || i->guard) continue;
      unsigned nab = ab_regs(i);
      ir_value **pre = NULL;
      for (unsigned k = 0; k < nab && k < i->nsrc; k++) {
        const ir_instr *p = lower_ldm_phi(i->src[k]), *L = lower_ldm_of(i->src[k]);
        if ((!L && !p) || w.bad[lower_uf_find(w.comp, (L ? L : p)->dst[0]->id)]) continue;
        if (!pre) {
          pre = LOWER_SCRATCH(a, ir_value *, LOWER_LDM_NPRE);
          out->mma = grow(a, out->mma, out->nmma, &mcap, sizeof *out->mma);
          out->mma[out->nmma++] = (struct lower_ldm_mma){i, pre};
          ir_builder b = ir_builder_before(i);
          lower_mma_amd_ldm_phis(&b, i, target, pre);
        }
        for (unsigned e = 0; e < (p ? p->nsrc : 1u); e++) {
          out->use = grow(a, out->use, out->nuse, &ucap, sizeof *out->use);
          out->use[out->nuse++] = (struct lower_ldm_use){p ? lower_ldm_of(p->src[e]) : L, i};
        }
      }
    }
  }
  if (!out->nuse) return;
  qsort(out->use, out->nuse, sizeof *out->use, cmp_use);
  size_t n = 0;   /* one use per (ldmatrix, mma) */
  for (size_t k = 0; k < out->nuse; k++)
    if (!n || cmp_use(&out->use[n - 1], &out->use[k])) out->use[n++] = out->use[k];
  out->nuse = n;
  qsort(out->mma, out->nmma, sizeof *out->mma, cmp_mma);
}

size_t lower_ldm_users(const lower_ldm_plan *p, const ir_instr *ldm, size_t *first) {
  if (!p || !p->nuse) return 0;
  size_t lo = 0, hi = p->nuse;   /* the first use of ldm */
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if ((uintptr_t)p->use[mid].ldm < (uintptr_t)ldm) lo = mid + 1;
    else hi = mid;
  }
  size_t e = lo;
  while (e < p->nuse && p->use[e].ldm == ldm) e++;
  *first = lo;
  return e - lo;
}

ir_value **lower_ldm_pre(const lower_ldm_plan *p, const ir_instr *mma) {
  if (!p || !p->nmma) return NULL;
  struct lower_ldm_mma key = {mma, NULL};
  const struct lower_ldm_mma *e = bsearch(&key, p->mma, p->nmma, sizeof *p->mma, cmp_mma);
  return e ? e->pre : NULL;
}
