/* ir/ir_divergence.c: uniformity analysis, ir_compute_divergence (ir.h).
 *
 * A value is divergent when it may differ between the lanes of one wave
 * (the lanes that execute its definition together); otherwise uniform.
 * Codegen keeps uniform values in scalar registers and branches on them
 * without EXEC masking; the hazard check (lower/lower_hazards.c) looks for
 * barriers under divergent branches.  The classic propagation (Karrenberg
 * and Hack, "Whole-Function Vectorization", 2011; LLVM's
 * UniformityAnalysis, Mesa's nir_divergence_analysis):
 *
 *   1. sources: what differs per lane by definition (op_rule below):
 *      %tid, %laneid, %lanemask_*, wave_lane_id, workitem_id; atomics (each
 *      lane gets its own old value); calls (the callee is not analysed);
 *      per-lane memory (.local loads, a .local variable's generic address,
 *      alloca); lane-dependent warp ops (shfl's predicate, match, elect,
 *      the matrix fragments).  A warp-level value (%warpid, vote,
 *      activemask, redux) is one per warp: uniform on wave32, whatever the
 *      lanes gave; on wave64 the wave's two warps have one each;
 *   2. data dependence: the results of an instruction that reads a
 *      divergent operand, is guarded by a divergent predicate or keeps a
 *      divergent value are divergent, except the wave-wide reads
 *      (readfirstlane, readlane, wave_ballot, wave_exec), which give every
 *      lane the same value, and bar.red (one value for the whole CTA);
 *   3. sync dependence: a branch on a divergent condition at block B sends
 *      lanes of one wave different ways until its immediate post-dominator
 *      P.  Where two of those paths meet (a join point: a block of the
 *      region between B and P, or P, reached from two different successors
 *      of B by paths that meet there first), a phi chooses by the path its
 *      lane took: divergent, unless every path from B brings it the same
 *      value.  And when B can reach itself before P (a loop exit), lanes
 *      leave the loop at different iterations: a value defined in the loop
 *      and used after it is divergent (temporal divergence) even where it
 *      is uniform inside, unless it is the same in every iteration.
 *
 * Counterexample for 3 (why data dependence alone is not enough):
 *     cbr %tid_is_0, a, b;  a: br c;  b: br c;  c: %x = phi [1, a], [2, b]
 * %x reads only constants, yet lane 0 sees 1 and the others 2.
 *
 * Conservative where it must guess: a value leaving a loop is marked
 * for its uses inside the loop too (one bit per value); in a loop, phis,
 * loads and instructions with effects are taken to change every
 * iteration; a device function's register parameters are uniform (the
 * analysis is per function: the hazard check documents that).  Monotone:
 * bits only go from uniform to divergent, so a worklist over the def-use
 * edges reaches the fixpoint; each divergent branch's region is walked
 * once, its join labels a few times (linear per branch: nested structured
 * code costs its nesting depth per block).
 */
#include "ir_priv.h"

typedef struct div_ctx {
  ir_func *f;
  unsigned wave;
  pw_arena a;
  uint32_t nv, nb;
  /* users of value v: use[first[v] .. first[v + 1]) (CSR; src, guard, keep) */
  uint32_t *first;
  ir_instr **use;
  ir_value **work;         /* values that became divergent, users not yet visited */
  uint32_t nwork;
  ir_block **blocks;       /* by id */
  uint8_t *branch_done;    /* by block id: its divergent terminator handled */
  uint32_t *region;        /* by block id: == stamp when in the current region */
  uint32_t stamp;
  /* the region of one divergent branch (region()): by block id the DFS's
   * next successor and the block's place among the nodes; by place the
   * nodes, their predecessors (CSR), label and whether they are joins */
  uint32_t *next, *lid, *poff, *fill;
  ir_block **stack, **post, **node, **pred, **label;
  uint8_t *is_join;
  uint32_t *variant;       /* by value id: == stamp when it may change between iterations */
  ir_value **vwork;
} div_ctx;

/* ---- what each op gives ------------------------------------------------- */
/* ir_ops.def's div column (ir_div_rule): DATA, LANE, VALUE, WARP (one value
 * per warp: warp_value()), UNIFORM; the ops marked OWN have their rule in
 * own_rule() below. */

/* The special registers that differ between the lanes of a wave. */
static ir_div_rule sreg_rule(const ir_instr *i) {
  if (i->sreg >= ir_sreg_count) return IR_DIV_LANE;
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_tid: case ir_sreg_laneid: case ir_sreg_lanemask_eq: case ir_sreg_lanemask_le:
  case ir_sreg_lanemask_lt: case ir_sreg_lanemask_ge: case ir_sreg_lanemask_gt:
    return IR_DIV_LANE;
  case ir_sreg_warpid:
    return IR_DIV_WARP;
  case ir_sreg_ntid: case ir_sreg_nwarpid: case ir_sreg_ctaid: case ir_sreg_nctaid: case ir_sreg_smid:
  case ir_sreg_nsmid: case ir_sreg_gridid: case ir_sreg_is_explicit_cluster: case ir_sreg_clusterid:
  case ir_sreg_nclusterid: case ir_sreg_cluster_ctaid: case ir_sreg_cluster_nctaid:
  case ir_sreg_cluster_ctarank: case ir_sreg_cluster_nctarank: case ir_sreg_clock: case ir_sreg_clock_hi:
  case ir_sreg_clock64: case ir_sreg_pm: case ir_sreg_pm_64: case ir_sreg_envreg: case ir_sreg_globaltimer:
  case ir_sreg_globaltimer_lo: case ir_sreg_globaltimer_hi: case ir_sreg_reserved_smem_offset_begin:
  case ir_sreg_reserved_smem_offset_end: case ir_sreg_reserved_smem_offset_cap:
  case ir_sreg_reserved_smem_offset_2: case ir_sreg_total_smem_size: case ir_sreg_aggr_smem_size:
  case ir_sreg_dynamic_smem_size: case ir_sreg_current_graph_exec:
    return IR_DIV_DATA;   /* the same for the whole wave (counters: read once per wave) */
  case ir_sreg_count:
    break;
  }
  return IR_DIV_LANE;
}

/* A value that names per-lane memory: the address of a .local variable. */
static bool local_symbol(const ir_value *v) {
  return v && v->kind == IR_VAL_SYMBOL && v->symref.sym.kind == IR_SYM_GLOBAL && v->symref.sym.global &&
         v->symref.sym.global->space == IR_SPACE_LOCAL;
}

/* Result k of an op whose div column is OWN: the rule depends on its
 * modifiers, its operands or which result it is.  No default: an op marked
 * OWN without a case here is the analysis's bug, and is taken as LANE. */
static ir_div_rule own_rule(const ir_instr *i, unsigned k) {
  switch ((ir_op)i->op) {
  case ir_op_sreg:
    return sreg_rule(i);
  /* per-lane memory (PTX ISA 5.1.5: .local is private to each thread) */
  case ir_op_ld: case ir_op_ldu:
    return i->mods.space == IR_SPACE_LOCAL ? IR_DIV_LANE : IR_DIV_DATA;
  case ir_op_cvta:   /* the generic address of a .local variable names each lane's own copy */
    return !i->mods.cvta_to && i->mods.space == IR_SPACE_LOCAL ? IR_DIV_LANE : IR_DIV_DATA;
  case ir_op_symaddr:
    return i->nsrc && local_symbol(i->src[0]) ? IR_DIV_LANE : IR_DIV_DATA;
  /* PTX ISA 9.7.9.6 shfl: the value is another lane's, the predicate is per lane */
  case ir_op_shfl:
    return k == 1 ? IR_DIV_LANE : IR_DIV_VALUE;
  default:
    return IR_DIV_LANE;
  }
}

/* Result k of i: the table's rule (ir_ops.def's div column; its comments
 * there cite why: atomics and the matrix fragments are per lane, vote and
 * redux per warp, bar.red per CTA ...). */
static ir_div_rule op_rule(const ir_instr *i, unsigned k) {
  if (i->op >= ir_op_count) return IR_DIV_LANE;
  ir_div_rule r = (ir_div_rule)ir_op_infos[i->op].div;
  return r == IR_DIV_OWN ? own_rule(i, k) : r;
}

static bool is_div(const ir_value *v) { return v && v->divergent; }

/* A warp-level value: the same in every lane of a warp, whatever each lane
 * gives (a vote over a divergent predicate is one answer for the warp),
 * unless the member masks (the operands after the first) differ.  A wave of
 * 64 holds two warps with an answer each: equal only for vote.all/any/uni
 * of a uniform predicate. */
static bool warp_value(const div_ctx *c, const ir_instr *i) {
  for (unsigned s = 1; s < i->nsrc; s++)
    if (is_div(i->src[s])) return true;
  if (c->wave <= 32) return false;
  if (i->op == ir_op_vote && i->mods.vote != IR_VOTE_BALLOT) return i->nsrc && is_div(i->src[0]);
  return true;
}

static bool result_divergent(const div_ctx *c, const ir_instr *i, unsigned k) {
  if (is_div(i->guard)) return true;
  if (i->keep && is_div(i->keep[k])) return true;
  ir_div_rule r = op_rule(i, k);
  if (r == IR_DIV_WARP) return warp_value(c, i);
  if (r == IR_DIV_LANE) return true;
  if (r == IR_DIV_UNIFORM) return false;
  if (r == IR_DIV_VALUE) return i->nsrc && is_div(i->src[0]);   /* whichever lane it reads */
  for (unsigned s = 0; s < i->nsrc; s++)
    if (is_div(i->src[s])) return true;
  return false;
}

static void mark(div_ctx *c, ir_value *v) {
  if (!v || v->divergent) return;
  v->divergent = 1;
  if (v->kind == IR_VAL_INSTR && v->id < c->nv) c->work[c->nwork++] = v;   /* once per value */
}

/* ---- sync dependence ---------------------------------------------------- */
static bool in_region(const div_ctx *c, const ir_block *b) { return b && c->region[b->id] == c->stamp; }

/* Successor s of x, or NULL for an edge out of the function's layout
 * (broken IR: the verifier reports it). */
static ir_block *succ(const div_ctx *c, const ir_block *x, uint32_t s) {
  ir_block *y = ir_block_succ(x, s);
  return y && y->func == c->f && y->id < c->nb && c->blocks[y->id] == y ? y : NULL;
}

/* The blocks of the region of divergent branch b (reached from its
 * successors before p = ipdom(b)), in reverse postorder (so in
 * topological order but for back edges), then p; their predecessors in the
 * region or b (pred[poff[k] .. poff[k + 1]) for the k-th).  Returns the
 * count, p included when not NULL. */
static uint32_t region(div_ctx *c, ir_block *b, ir_block *p) {
  c->stamp++;
  uint32_t npost = 0;
  for (uint32_t s0 = 0; s0 < ir_block_nsuccs(b); s0++) {
    ir_block *root = succ(c, b, s0);
    if (!root || root == p || in_region(c, root)) continue;
    uint32_t sp = 0;
    c->region[root->id] = c->stamp;
    c->next[root->id] = 0;
    c->stack[sp++] = root;
    while (sp) {
      ir_block *x = c->stack[sp - 1];
      if (c->next[x->id] < ir_block_nsuccs(x)) {
        ir_block *y = succ(c, x, c->next[x->id]++);
        if (y && y != p && !in_region(c, y)) {
          c->region[y->id] = c->stamp;
          c->next[y->id] = 0;
          c->stack[sp++] = y;
        }
      } else {
        c->post[npost++] = x;
        sp--;
      }
    }
  }
  uint32_t n = 0;
  for (uint32_t k = npost; k-- > 0;) c->node[n++] = c->post[k];
  if (p) c->node[n++] = p;
  for (uint32_t k = 0; k < n; k++) {
    c->lid[c->node[k]->id] = k;
    c->poff[k + 1] = 0;
  }
  /* the edges into the nodes from the region, or from b (once, even when
   * b is in the region itself) */
  for (int pass = 0; pass < 2; pass++) {
    for (uint32_t k = 0; k <= npost; k++) {
      ir_block *x = k < npost ? c->node[k] : b;
      if (k == npost && in_region(c, b)) break;
      for (uint32_t s = 0; s < ir_block_nsuccs(x); s++) {
        ir_block *y = succ(c, x, s);
        if (!y || (y != p && !in_region(c, y))) continue;
        if (pass == 0) c->poff[c->lid[y->id] + 1]++;
        else c->pred[c->fill[c->lid[y->id]]++] = x;
      }
    }
    if (pass == 0) {
      c->poff[0] = 0;
      for (uint32_t k = 0; k < n; k++) c->poff[k + 1] += c->poff[k];
      for (uint32_t k = 0; k < n; k++) c->fill[k] = c->poff[k];
    }
  }
  return n;
}

/* The label of the edge from x into join y (NULL: no lane of b's split
 * comes that way). */
static ir_block *edge_label(const div_ctx *c, const ir_block *b, ir_block *x, ir_block *y) {
  if (x == b) return y;
  return in_region(c, x) ? c->label[c->lid[x->id]] : NULL;
}

static bool same_value(const ir_value *a, const ir_value *v) {
  return a == v || (a && v && a->kind == IR_VAL_CONST && v->kind == IR_VAL_CONST && a->imm == v->imm);
}

/* Does phi (in join y of b) give lanes that came different ways from b
 * different values?  Only when its operands on edges of two labels are
 * two values (an undef operand stands for any value, LLVM's
 * hasConstantOrUndefValue): a phi whose paths from b all bring the same
 * value, with another only on an edge no lane of the split takes, is the
 * same for every lane of the split.  Operand k belongs to y->preds[k]. */
static bool join_chooses(const div_ctx *c, const ir_block *b, ir_block *y, const ir_instr *phi) {
  ir_block *l0 = NULL;
  const ir_value *v0 = NULL;
  bool labels = false, values = false;
  for (unsigned k = 0; k < phi->nsrc && k < y->npreds; k++) {
    ir_block *l = edge_label(c, b, y->preds[k], y);
    const ir_value *v = phi->src[k];
    if (!l) continue;
    if (!l0) l0 = l;
    else labels |= l != l0;
    if (!v || v->kind == IR_VAL_UNDEF) continue;
    if (!v0) v0 = v;
    else values |= !same_value(v, v0);
  }
  return labels && values;
}

/* Marks (variant[id] = stamp) the values of the region's n nodes that may
 * change from one iteration of a loop through it to the next: its phis,
 * what reads memory or has effects (a load may see another value on the
 * next pass), and whatever is computed from those.  The rest is computed
 * from values defined before the loop and constants only: the same in
 * every iteration (a loop-invariant computation nvcc left in the loop). */
static void iteration_variant(div_ctx *c, uint32_t n) {
  uint32_t top = 0;
  for (uint32_t k = 0; k < n; k++) {
    if (!in_region(c, c->node[k])) continue;   /* not p */
    ir_foreach_instr(c->node[k], i) {
      bool seed = i->op == ir_op_phi || i->op == ir_op_sreg || (ir_op_infos[i->op].flags & (IR_F_LOAD | IR_F_SIDE)) ||
                  op_rule(i, 0) == IR_DIV_LANE;
      if (!seed) continue;
      for (unsigned d = 0; d < i->ndst; d++)
        if (i->dst[d]->id < c->nv && c->variant[i->dst[d]->id] != c->stamp) {
          c->variant[i->dst[d]->id] = c->stamp;
          c->vwork[top++] = i->dst[d];
        }
    }
  }
  while (top) {
    ir_value *v = c->vwork[--top];
    for (uint32_t u = c->first[v->id]; u < c->first[v->id + 1]; u++) {
      ir_instr *j = c->use[u];
      if (!in_region(c, j->block)) continue;
      for (unsigned d = 0; d < j->ndst; d++)
        if (j->dst[d]->id < c->nv && c->variant[j->dst[d]->id] != c->stamp) {
          c->variant[j->dst[d]->id] = c->stamp;
          c->vwork[top++] = j->dst[d];
        }
    }
  }
}

/* The branch ending b has become divergent: the phis where its paths meet,
 * and the values that leave a loop it exits. */
static void divergent_branch(div_ctx *c, ir_block *b) {
  if (c->branch_done[b->id]) return;
  c->branch_done[b->id] = 1;
  ir_block *p = b->ipdom;
  uint32_t n = region(c, b, p);
  /* joins (Karrenberg and Hack's join points; LLVM's sync dependence
   * labels): each node is labelled by the path its lanes took from b, the
   * successor they left b through, or the last join they met; a node
   * entered with two labels is a join, where lanes that left b different
   * ways meet: its phis choose by path.  Edges out of b carry their
   * target.  Sweeps in reverse postorder until nothing changes (one more
   * per loop nesting level); past a bound, every node with two
   * predecessors counts (more joins, never fewer: sound). */
  for (uint32_t k = 0; k < n; k++) c->label[k] = NULL;
  bool changed = true;
  for (uint32_t sweep = 0; changed && sweep < n + 2; sweep++) {
    changed = false;
    for (uint32_t k = 0; k < n; k++) {
      ir_block *y = c->node[k], *first = NULL;
      bool join = false;
      for (uint32_t e = c->poff[k]; e < c->poff[k + 1]; e++) {
        ir_block *x = c->pred[e];
        ir_block *l = x == b ? y : c->label[c->lid[x->id]];
        if (!l) continue;
        if (!first) first = l;
        else if (l != first) join = true;
      }
      c->is_join[k] = join;
      ir_block *l = join ? y : first;
      if (l != c->label[k]) {
        c->label[k] = l;
        changed = true;
      }
    }
  }
  if (changed)   /* not settled: every node with two predecessors (true joins have them) */
    for (uint32_t k = 0; k < n; k++) c->is_join[k] = c->poff[k + 1] - c->poff[k] >= 2;
  for (uint32_t k = 0; k < n; k++) {
    if (!c->is_join[k]) continue;
    ir_foreach_instr(c->node[k], i) {
      if (i->op != ir_op_phi) break;
      if (join_chooses(c, b, c->node[k], i)) mark(c, i->dst[0]);
    }
  }
  /* a loop exit: the values of the loop used after it that change from
   * one iteration to the next */
  if (!in_region(c, b)) return;
  iteration_variant(c, n);
  for (uint32_t k = 0; k < n; k++) {
    if (c->node[k] == p) continue;
    ir_foreach_instr(c->node[k], i) for (unsigned d = 0; d < i->ndst; d++) {
      ir_value *v = i->dst[d];
      if (v->divergent || v->id >= c->nv || c->variant[v->id] != c->stamp) continue;
      for (uint32_t u = c->first[v->id]; u < c->first[v->id + 1]; u++)
        if (!in_region(c, c->use[u]->block)) {
          mark(c, v);
          break;
        }
    }
  }
}

/* Re-evaluates i's results; a terminator on a divergent value makes its
 * branch divergent. */
static void visit(div_ctx *c, ir_instr *i) {
  if (!i->block) return;
  if ((i->op == ir_op_cbr || i->op == ir_op_brx) && i->nsrc && is_div(i->src[0])) {
    divergent_branch(c, i->block);
    return;
  }
  for (unsigned k = 0; k < i->ndst; k++)
    if (!i->dst[k]->divergent && result_divergent(c, i, k)) mark(c, i->dst[k]);
}

/* ---- the driver ----------------------------------------------------------- */
static void add_use(div_ctx *c, const ir_value *v, ir_instr *user, bool fill, uint32_t *pos) {
  if (!v || v->kind != IR_VAL_INSTR || v->id >= c->nv) return;
  if (fill) c->use[pos[v->id]++] = user;
  else c->first[v->id + 1]++;
}

static void users(div_ctx *c, bool fill, uint32_t *pos) {
  ir_foreach_block(c->f, b) ir_foreach_instr(b, i) {
    for (unsigned k = 0; k < i->nsrc; k++) add_use(c, i->src[k], i, fill, pos);
    add_use(c, i->guard, i, fill, pos);
    for (unsigned k = 0; i->keep && k < i->ndst; k++) add_use(c, i->keep[k], i, fill, pos);
  }
}

void ir_compute_divergence(ir_func *f, unsigned wave_size) {
  for (uint32_t k = 0; k < f->nparams; k++)
    if (f->params[k].value) f->params[k].value->divergent = 0;
  if (!f->entry) return;
  /* post-dominators number the blocks in layout order; blocks added since
   * they were computed mean they are not current */
  uint32_t nb = 0;
  bool dense = true;
  ir_foreach_block(f, b) dense &= b->id == nb++;
  if (!dense) ir_invalidate_analyses(f, ~(unsigned)IR_ANALYSIS_POST_DOMINANCE);
  ir_require_analyses(f, IR_ANALYSIS_POST_DOMINANCE);
  div_ctx c = {.f = f, .wave = wave_size ? wave_size : 32, .nv = f->nvalues, .nb = nb};
  pw_arena_init(&c.a);
  ir_foreach_block(f, b) ir_foreach_instr(b, i) for (unsigned k = 0; k < i->ndst; k++) i->dst[k]->divergent = 0;
  c.first = IR_NEW_ARRAY(&c.a, uint32_t, c.nv + 2);
  users(&c, false, NULL);
  for (uint32_t v = 0; v <= c.nv; v++) c.first[v + 1] += c.first[v];
  uint32_t *pos = IR_NEW_ARRAY(&c.a, uint32_t, c.nv + 1);
  for (uint32_t v = 0; v <= c.nv; v++) pos[v] = c.first[v];
  c.use = IR_NEW_ARRAY(&c.a, ir_instr *, c.first[c.nv] + 1);
  users(&c, true, pos);
  c.work = IR_NEW_ARRAY(&c.a, ir_value *, c.nv + 1);
  c.branch_done = IR_NEW_ARRAY(&c.a, uint8_t, nb + 1);
  c.region = IR_NEW_ARRAY(&c.a, uint32_t, nb + 1);
  uint32_t nedges = 0;
  ir_foreach_block(f, b) nedges += ir_block_nsuccs(b);
  c.next = IR_NEW_ARRAY(&c.a, uint32_t, nb + 1);
  c.lid = IR_NEW_ARRAY(&c.a, uint32_t, nb + 1);
  c.poff = IR_NEW_ARRAY(&c.a, uint32_t, nb + 2);
  c.fill = IR_NEW_ARRAY(&c.a, uint32_t, nb + 1);
  c.stack = IR_NEW_ARRAY(&c.a, ir_block *, nb + 1);
  c.post = IR_NEW_ARRAY(&c.a, ir_block *, nb + 1);
  c.node = IR_NEW_ARRAY(&c.a, ir_block *, nb + 1);
  c.pred = IR_NEW_ARRAY(&c.a, ir_block *, nedges + 1);
  c.label = IR_NEW_ARRAY(&c.a, ir_block *, nb + 1);
  c.is_join = IR_NEW_ARRAY(&c.a, uint8_t, nb + 1);
  c.variant = IR_NEW_ARRAY(&c.a, uint32_t, c.nv + 1);
  c.vwork = IR_NEW_ARRAY(&c.a, ir_value *, c.nv + 1);
  c.blocks = IR_NEW_ARRAY(&c.a, ir_block *, nb + 1);
  ir_foreach_block(f, b) c.blocks[b->id] = b;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) visit(&c, i);
  while (c.nwork) {
    ir_value *v = c.work[--c.nwork];
    for (uint32_t u = c.first[v->id]; u < c.first[v->id + 1]; u++) visit(&c, c.use[u]);
  }
  pw_arena_free(&c.a);
  f->analyses |= IR_ANALYSIS_DIVERGENCE;
  f->divergence_wave = (uint8_t)c.wave;
}
