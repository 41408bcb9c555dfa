/* lower/lower_ldm_plan.c: which ldmatrix results may be loaded straight into
 * the A/B layout of AMD's matrix instruction (lower_mma_amd.c builds the
 * loads; docs/lowering.md, "ldmatrix in AMD's layout").
 *
 * An ldmatrix (PTX ISA 9.7.14.5.15) is accepted, per function, when
 *   - it is not guarded, and every one of its results is read only as an A
 *     or B operand of unguarded mma instructions (a shfl, a store, a
 *     movmatrix, a phi, a keep value, a C operand or any other reader keeps
 *     NVIDIA's layout: the registers that reader sees must hold NVIDIA's
 *     fragment);
 *   - every such mma goes on one of lower_mma_amd's f16/bf16 schemes on the
 *     target, and each AMD A/B register of it that reads the ldmatrix's
 *     results reads only those (lower_mma_amd_ldm_fits: a dry run, nothing
 *     built);
 *   - the ldmatrix comes before each of its mma in the order the walker
 *     lowers them (the loads are built at the ldmatrix, whose result
 *     dominates its uses, and recorded for the mma that comes later).
 * Not yet: results that reach the mma through phis (a software-pipelined
 * loop's next fragments), and the tf32/fp8 mma forms.
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

void lower_ldm_plan_build(ir_module *m, pw_arena *a, const char *target, lower_ldm_plan *out) {
  *out = (lower_ldm_plan){0};
  if (!target) return;
  size_t ucap = 0, mcap = 0, pcap = 0;
  struct lower_ldm_use *pairs = NULL;
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    size_t nv = f->nvalues + 1, np = 0;
    uint32_t *total = LOWER_SCRATCH(a, uint32_t, nv), *as_ab = LOWER_SCRATCH(a, uint32_t, nv);
    uint32_t *pos = LOWER_SCRATCH(a, uint32_t, nv);
    uint32_t at = 0;
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
      at++;
      if (i->ndst && (i->op == ir_op_ldmatrix || i->op == ir_op_mma)) pos[i->dst[0]->id] = at;
      for (unsigned k = 0; k < i->nsrc; k++) count(total, i->src[k]);
      count(total, i->guard);
      for (unsigned k = 0; i->guard && i->keep && k < i->ndst; k++) count(total, i->keep[k]);
      if (i->op != ir_op_mma || i->guard) continue;
      unsigned nab = ab_regs(i);
      for (unsigned k = 0; k < nab && k < i->nsrc; k++) {
        const ir_value *v = i->src[k];
        if (v->kind != IR_VAL_INSTR) continue;
        as_ab[v->id]++;
        if (v->def->op != ir_op_ldmatrix) continue;
        if (np == pcap) {
          pairs = lower_scratch_grow(a, pairs, np, pcap ? 2 * pcap : 64, sizeof *pairs);
          pcap = pcap ? 2 * pcap : 64;
        }
        pairs[np++] = (struct lower_ldm_use){v->def, i};
      }
    }
    if (!np) continue;
    qsort(pairs, np, sizeof *pairs, cmp_use);
    for (size_t s = 0; s < np;) {
      size_t e = s;
      while (e < np && pairs[e].ldm == pairs[s].ldm) e++;
      const ir_instr *L = pairs[s].ldm;
      bool ok = !L->guard && lower_matrix_why(L) == NULL;
      for (unsigned d = 0; d < L->ndst && ok; d++) ok = total[L->dst[d]->id] == as_ab[L->dst[d]->id];
      for (size_t k = s; k < e && ok; k++) {
        if (k > s && pairs[k].mma == pairs[k - 1].mma) continue;
        ok = pos[L->dst[0]->id] < pos[pairs[k].mma->dst[0]->id] && lower_mma_amd_ldm_fits(L, pairs[k].mma, target);
      }
      for (size_t k = s; k < e && ok; k++) {
        if (k > s && pairs[k].mma == pairs[k - 1].mma) continue;
        if (out->nuse == ucap) {
          out->use = lower_scratch_grow(a, out->use, out->nuse, ucap ? 2 * ucap : 64, sizeof *out->use);
          ucap = ucap ? 2 * ucap : 64;
        }
        out->use[out->nuse++] = pairs[k];
        if (out->nmma == mcap) {
          out->mma = lower_scratch_grow(a, out->mma, out->nmma, mcap ? 2 * mcap : 64, sizeof *out->mma);
          mcap = mcap ? 2 * mcap : 64;
        }
        out->mma[out->nmma++] = (struct lower_ldm_mma){pairs[k].mma, NULL};
      }
      s = e;
    }
  }
  if (!out->nuse) return;
  qsort(out->use, out->nuse, sizeof *out->use, cmp_use);
  qsort(out->mma, out->nmma, sizeof *out->mma, cmp_mma);
  size_t n = 0;   /* one entry per mma (two ldmatrix may feed one) */
  for (size_t k = 0; k < out->nmma; k++)
    if (!n || out->mma[n - 1].mma != out->mma[k].mma) out->mma[n++] = out->mma[k];
  out->nmma = n;
  for (size_t k = 0; k < n; k++) out->mma[k].pre = LOWER_SCRATCH(a, ir_value *, LOWER_LDM_NPRE);
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
