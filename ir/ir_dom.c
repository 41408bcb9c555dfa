/* ir/ir_dom.c: predecessors, dominators and post-dominators.
 *
 * Algorithm: Lengauer and Tarjan (1979), the simple version: semidominators
 * by EVAL/LINK with path compression, O(m log n) on every CFG.  Cooper,
 * Harvey and Kennedy's iteration (used before) is near-linear on the CFGs
 * nvcc emits but quadratic on a long chain of blocks that all branch to
 * one label (issue 20: 70,000 such branches took 10 s).  Every walk is
 * iterative: functions with 100k blocks do not recurse.
 *
 * After idom, the dominator tree is numbered by a DFS (pre on entry, post on
 * exit), so ir_block_dominates(a, b) is two comparisons.
 *
 * The CFG is read from the terminators (ir_block_succ), not from
 * block->preds, so the analyses are right even when preds are stale.
 * Both analyses renumber block ids in layout order (ir.h: ids are dense, in
 * layout order; inserting blocks breaks that until the next analysis), and
 * mark themselves current in ir_func.analyses.
 *
 * Unreachable blocks (nvcc leaves some after a ret): idom NULL, dom_pre and
 * dom_post 0; such a block dominates and is dominated only by itself.
 *
 * Post-dominators run the same solver on the reversed CFG from a virtual
 * exit whose predecessors are the blocks without successors (ret, exit,
 * trap, unreachable, and blocks not yet terminated).  ipdom is NULL both
 * for blocks whose immediate post-dominator is that exit and for blocks
 * that cannot reach it at all (an infinite loop with no exit path): there is
 * no reconvergence point for either.  Paths into such a loop are no paths
 * to the exit, so they do not count for the blocks before it: in
 * "bb0: cbr bb1 (loops forever), bb2 (ret)", bb2 post-dominates bb0 (the
 * textbook definition; LLVM instead ties infinite loops to the exit).
 */
#include <string.h>

#include "ir_priv.h"
#include "util/diag.h"

/* EVAL(v) of Lengauer-Tarjan: the node of least semi on v's path up the
 * forest, compressing the path (from its top down, iteratively: path is
 * scratch room for it). */
static uint32_t lt_eval(uint32_t v, uint32_t *ancestor, uint32_t *label, const uint32_t *semi, uint32_t *path) {
  if (ancestor[v] == IR_DOM_NONE) return v;
  uint32_t np = 0;
  for (uint32_t x = v; ancestor[ancestor[x]] != IR_DOM_NONE; x = ancestor[x]) path[np++] = x;
  while (np) {
    uint32_t x = path[--np], ax = ancestor[x];
    if (semi[label[ax]] < semi[label[x]]) label[x] = label[ax];
    ancestor[x] = ancestor[ax];
  }
  return label[v];
}

/* ---- the solver ------------------------------------------------------- */

void ir_dom_solve(uint32_t n, uint32_t r, const uint32_t *soff, const uint32_t *succ,
                  const uint32_t *poff, const uint32_t *pred, uint32_t *idom, uint32_t *pre,
                  uint32_t *post) {
  pw_arena a;
  pw_arena_init(&a);
  /* Nodes are renumbered by DFS preorder (0 = r); "num" is a node's
   * number, "vertex" the node of a number.  Arrays below indexed by number
   * unless named otherwise. */
  uint32_t *num = IR_NEW_ARRAY(&a, uint32_t, n);      /* by node; NONE: unreachable */
  uint32_t *vertex = IR_NEW_ARRAY(&a, uint32_t, n);
  uint32_t *parent = IR_NEW_ARRAY(&a, uint32_t, n);   /* DFS tree parent */
  uint32_t *semi = IR_NEW_ARRAY(&a, uint32_t, n);
  uint32_t *dom = IR_NEW_ARRAY(&a, uint32_t, n);
  uint32_t *ancestor = IR_NEW_ARRAY(&a, uint32_t, n); /* the forest of LINK */
  uint32_t *label = IR_NEW_ARRAY(&a, uint32_t, n);
  uint32_t *bucket = IR_NEW_ARRAY(&a, uint32_t, n);   /* head of the nodes w with semi(w) = v */
  uint32_t *bnext = IR_NEW_ARRAY(&a, uint32_t, n);
  uint32_t *stack = IR_NEW_ARRAY(&a, uint32_t, n);
  uint32_t *next = IR_NEW_ARRAY(&a, uint32_t, n);     /* DFS: next successor to try (by node) */

  for (uint32_t v = 0; v < n; v++) {
    idom[v] = IR_DOM_NONE;
    pre[v] = post[v] = 0;
    num[v] = IR_DOM_NONE;
  }
  /* Preorder numbers and the DFS tree of the nodes reachable from r. */
  uint32_t nr = 0, sp = 0;
  num[r] = nr;
  vertex[nr] = r;
  parent[nr++] = IR_DOM_NONE;
  stack[sp++] = r;
  next[r] = soff[r];
  while (sp) {
    uint32_t v = stack[sp - 1];
    if (next[v] < soff[v + 1]) {
      uint32_t s = succ[next[v]++];
      if (num[s] == IR_DOM_NONE) {
        num[s] = nr;
        vertex[nr] = s;
        parent[nr++] = num[v];
        next[s] = soff[s];
        stack[sp++] = s;
      }
    } else {
      sp--;
    }
  }
  for (uint32_t w = 0; w < nr; w++) {
    semi[w] = label[w] = w;
    ancestor[w] = bucket[w] = IR_DOM_NONE;
  }

  /* Semidominators in reverse preorder, immediate dominators implicitly
   * (Lengauer, Tarjan, "A Fast Algorithm for Finding Dominators in a
   * Flowgraph", 1979: the simple version, LINK without balancing and EVAL
   * with path compression, O(m log n)).  The Cooper-Harvey-Kennedy
   * iteration it replaces is quadratic on a long chain of blocks that all
   * branch to one label (70,000 of them: 10 s). */
  uint32_t *path = stack;   /* COMPRESS's path; the DFS stack is free again */
  for (uint32_t w = nr; w-- > 1;) {
    uint32_t node = vertex[w];
    for (uint32_t e = poff[node]; e < poff[node + 1]; e++) {
      uint32_t v = num[pred[e]];
      if (v == IR_DOM_NONE) continue;  /* an unreachable predecessor */
      uint32_t u = lt_eval(v, ancestor, label, semi, path);
      if (semi[u] < semi[w]) semi[w] = semi[u];
    }
    bnext[w] = bucket[semi[w]];
    bucket[semi[w]] = w;
    uint32_t p = parent[w];
    ancestor[w] = p;  /* LINK(parent(w), w) */
    for (uint32_t v = bucket[p]; v != IR_DOM_NONE; v = bnext[v]) {
      uint32_t u = lt_eval(v, ancestor, label, semi, path);
      dom[v] = semi[u] < semi[v] ? u : p;
    }
    bucket[p] = IR_DOM_NONE;
  }
  for (uint32_t w = 1; w < nr; w++) {
    if (dom[w] != semi[w]) dom[w] = dom[dom[w]];
    idom[vertex[w]] = vertex[dom[w]];
  }
  idom[r] = r;

  /* Children lists of the tree (CSR), then a DFS for pre/post numbers. */
  uint32_t *coff = IR_NEW_ARRAY(&a, uint32_t, n + 1);
  uint32_t *child = IR_NEW_ARRAY(&a, uint32_t, n ? n : 1);
  for (uint32_t v = 0; v < n; v++)
    if (v != r && idom[v] != IR_DOM_NONE) coff[idom[v] + 1]++;
  for (uint32_t v = 0; v < n; v++) coff[v + 1] += coff[v];
  uint32_t *fill = IR_NEW_ARRAY(&a, uint32_t, n ? n : 1);
  for (uint32_t v = 0; v < n; v++) fill[v] = coff[v];
  for (uint32_t v = 0; v < n; v++)
    if (v != r && idom[v] != IR_DOM_NONE) child[fill[idom[v]]++] = v;
  uint32_t clock = 1;
  sp = 0;
  stack[sp++] = r;
  next[r] = coff[r];
  pre[r] = clock++;
  while (sp) {
    uint32_t v = stack[sp - 1];
    if (next[v] < coff[v + 1]) {
      uint32_t c = child[next[v]++];
      next[c] = coff[c];
      pre[c] = clock++;
      stack[sp++] = c;
    } else {
      post[v] = clock++;
      sp--;
    }
  }
  pw_arena_free(&a);
}

/* ---- the CFG as arrays ------------------------------------------------ */

typedef struct cfg {
  uint32_t n;
  ir_block **blocks;          /* by id (layout order) */
  uint32_t *soff, *succ;      /* successors, CSR */
  uint32_t *poff, *pred;      /* predecessors, CSR, in layout order of the source */
} cfg;

static bool is_block_of(const cfg *g, const ir_func *f, const ir_block *t) {
  return t && t->func == f && t->id < g->n && g->blocks[t->id] == t;
}

/* Renumbers f's blocks in layout order and builds successor and
 * predecessor arrays from the terminators; edges to blocks outside the
 * layout are dropped (the verifier reports them). */
static void cfg_build(cfg *g, ir_func *f, pw_arena *a) {
  uint32_t n = 0;
  ir_foreach_block(f, b) b->id = n++;
  f->nblocks = n;
  g->n = n;
  g->blocks = IR_NEW_ARRAY(a, ir_block *, n ? n : 1);
  ir_foreach_block(f, b) g->blocks[b->id] = b;
  g->soff = IR_NEW_ARRAY(a, uint32_t, n + 2);
  g->poff = IR_NEW_ARRAY(a, uint32_t, n + 2);
  uint32_t ne = 0;
  ir_foreach_block(f, b) {
    uint32_t ns = ir_block_nsuccs(b);
    for (uint32_t k = 0; k < ns; k++) {
      ir_block *t = ir_block_succ(b, k);
      if (!is_block_of(g, f, t)) continue;
      g->soff[b->id + 1]++;
      g->poff[t->id + 1]++;
      ne++;
    }
  }
  for (uint32_t v = 0; v < n; v++) {
    g->soff[v + 1] += g->soff[v];
    g->poff[v + 1] += g->poff[v];
  }
  g->succ = IR_NEW_ARRAY(a, uint32_t, ne ? ne : 1);
  g->pred = IR_NEW_ARRAY(a, uint32_t, ne ? ne : 1);
  uint32_t *sf = IR_NEW_ARRAY(a, uint32_t, n + 1), *pf = IR_NEW_ARRAY(a, uint32_t, n + 1);
  memcpy(sf, g->soff, (n + 1) * sizeof(uint32_t));
  memcpy(pf, g->poff, (n + 1) * sizeof(uint32_t));
  ir_foreach_block(f, b) {
    uint32_t ns = ir_block_nsuccs(b);
    for (uint32_t k = 0; k < ns; k++) {
      ir_block *t = ir_block_succ(b, k);
      if (!is_block_of(g, f, t)) continue;
      g->succ[sf[b->id]++] = t->id;
      g->pred[pf[t->id]++] = b->id;
    }
  }
}

/* ---- predecessors ----------------------------------------------------- */

void ir_compute_preds_raw(ir_func *f) {
  pw_arena a;
  pw_arena_init(&a);
  cfg g;
  cfg_build(&g, f, &a);
  pw_arena *ma = &f->module->arena;
  for (uint32_t v = 0; v < g.n; v++) {
    ir_block *b = g.blocks[v];
    uint32_t np = g.poff[v + 1] - g.poff[v];
    if (np > b->preds_cap) {
      b->preds = IR_NEW_ARRAY(ma, ir_block *, np);
      b->preds_cap = np;
    }
    for (uint32_t k = 0; k < np; k++) b->preds[k] = g.blocks[g.pred[g.poff[v] + k]];
    b->npreds = np;
  }
  pw_arena_free(&a);
}

/* Keeps the order of the predecessors that remain (so phis stay aligned),
 * drops those whose edge is gone together with their phi operands (LLVM's
 * removePredecessor), and appends new ones with a NULL phi operand for the
 * caller to fill. */
void ir_compute_preds(ir_func *f) {
  pw_arena a;
  pw_arena_init(&a);
  cfg g;
  cfg_build(&g, f, &a);
  pw_arena *ma = &f->module->arena;
  uint32_t *cnt = IR_NEW_ARRAY(&a, uint32_t, g.n ? g.n : 1);
  for (uint32_t v = 0; v < g.n; v++) {
    ir_block *b = g.blocks[v];
    uint32_t e0 = g.poff[v], e1 = g.poff[v + 1];
    for (uint32_t e = e0; e < e1; e++) cnt[g.pred[e]]++;
    uint32_t np = e1 - e0;
    ir_block **nw = IR_NEW_ARRAY(ma, ir_block *, np ? np : 1);
    uint32_t k = 0;
    /* Surviving old preds, in their order. */
    uint32_t old_n = b->npreds;
    uint8_t *keep = IR_NEW_ARRAY(&a, uint8_t, old_n ? old_n : 1);
    for (uint32_t j = 0; j < old_n; j++) {
      ir_block *p = b->preds[j];
      if (is_block_of(&g, f, p) && cnt[p->id]) {
        cnt[p->id]--;
        nw[k++] = p;
        keep[j] = 1;
      }
    }
    uint32_t kept = k;
    for (uint32_t e = e0; e < e1; e++)
      if (cnt[g.pred[e]]) {
        cnt[g.pred[e]]--;
        nw[k++] = g.blocks[g.pred[e]];
      }
    /* Phis: drop the operands of removed preds, NULL for added ones. */
    ir_foreach_instr(b, i) {
      if (i->op != ir_op_phi) break;
      uint32_t w = 0;
      for (uint32_t j = 0; j < i->nsrc && j < old_n; j++)
        if (keep[j]) i->src[w++] = i->src[j];
      i->nsrc = (uint16_t)w;
      for (uint32_t j = kept; j < k; j++) ir_phi_add_src(i, NULL);
    }
    b->preds = nw;
    b->preds_cap = np ? np : 1;
    b->npreds = k;  /* == np: every edge matched once */
  }
  pw_arena_free(&a);
}

/* ---- dominators ------------------------------------------------------- */

void ir_compute_dominators(ir_func *f) {
  if (!f->entry) return;
  pw_arena a;
  pw_arena_init(&a);
  cfg g;
  cfg_build(&g, f, &a);
  uint32_t *idom = IR_NEW_ARRAY(&a, uint32_t, g.n);
  uint32_t *pre = IR_NEW_ARRAY(&a, uint32_t, g.n);
  uint32_t *post = IR_NEW_ARRAY(&a, uint32_t, g.n);
  ir_dom_solve(g.n, 0, g.soff, g.succ, g.poff, g.pred, idom, pre, post);
  for (uint32_t v = 0; v < g.n; v++) {
    ir_block *b = g.blocks[v];
    b->idom = v == 0 || idom[v] == IR_DOM_NONE ? NULL : g.blocks[idom[v]];
    b->dom_pre = pre[v];
    b->dom_post = post[v];
  }
  pw_arena_free(&a);
  f->analyses |= IR_ANALYSIS_DOMINANCE;
}

void ir_compute_post_dominators(ir_func *f) {
  if (!f->entry) return;
  pw_arena a;
  pw_arena_init(&a);
  cfg g;
  cfg_build(&g, f, &a);
  /* Reverse graph plus the virtual exit x = n: successors in the reverse
   * graph are CFG predecessors (x's are the exit blocks), predecessors are
   * CFG successors (plus x for exit blocks). */
  uint32_t n = g.n, x = n, nexit = 0;
  for (uint32_t v = 0; v < n; v++)
    if (g.soff[v + 1] == g.soff[v]) nexit++;
  uint32_t ne = g.soff[n];
  uint32_t *rsoff = IR_NEW_ARRAY(&a, uint32_t, n + 2), *rsucc = IR_NEW_ARRAY(&a, uint32_t, ne + nexit + 1);
  uint32_t *rpoff = IR_NEW_ARRAY(&a, uint32_t, n + 2), *rpred = IR_NEW_ARRAY(&a, uint32_t, ne + nexit + 1);
  uint32_t k = 0;
  for (uint32_t v = 0; v < n; v++) {
    rsoff[v] = k;
    for (uint32_t e = g.poff[v]; e < g.poff[v + 1]; e++) rsucc[k++] = g.pred[e];
  }
  rsoff[x] = k;
  for (uint32_t v = 0; v < n; v++)
    if (g.soff[v + 1] == g.soff[v]) rsucc[k++] = v;
  rsoff[x + 1] = k;
  k = 0;
  for (uint32_t v = 0; v < n; v++) {
    rpoff[v] = k;
    for (uint32_t e = g.soff[v]; e < g.soff[v + 1]; e++) rpred[k++] = g.succ[e];
    if (g.soff[v + 1] == g.soff[v]) rpred[k++] = x;
  }
  rpoff[x] = rpoff[x + 1] = k;
  uint32_t *idom = IR_NEW_ARRAY(&a, uint32_t, n + 1);
  uint32_t *pre = IR_NEW_ARRAY(&a, uint32_t, n + 1);
  uint32_t *post = IR_NEW_ARRAY(&a, uint32_t, n + 1);
  ir_dom_solve(n + 1, x, rsoff, rsucc, rpoff, rpred, idom, pre, post);
  for (uint32_t v = 0; v < n; v++)
    g.blocks[v]->ipdom = idom[v] == IR_DOM_NONE || idom[v] == x ? NULL : g.blocks[idom[v]];
  pw_arena_free(&a);
  f->analyses |= IR_ANALYSIS_POST_DOMINANCE;
}

void ir_require_analyses(ir_func *f, unsigned which) {
  if ((which & IR_ANALYSIS_DOMINANCE) && !(f->analyses & IR_ANALYSIS_DOMINANCE)) ir_compute_dominators(f);
  if ((which & IR_ANALYSIS_POST_DOMINANCE) && !(f->analyses & IR_ANALYSIS_POST_DOMINANCE))
    ir_compute_post_dominators(f);
}

bool ir_block_dominates(const ir_block *a, const ir_block *b) {
  if (a == b) return true;
  if (!a->dom_pre || !b->dom_pre) return false;
  return a->dom_pre <= b->dom_pre && b->dom_post <= a->dom_post;
}
