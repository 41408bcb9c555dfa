/* ptx/ptx_ssa.c: SSA construction for the PTX parser.
 *
 * Every .reg name (each %r<N> element, each inline-asm scope's register)
 * is a variable with a dense number; the carry flag of add.cc/addc is one
 * more.  Construction has two halves.
 *
 * While parsing (one pass): blocks are filled in order.  A run of blocks
 * each entered right after its only predecessor was left (a fall-through
 * after a conditional branch) is a region and shares one table of current
 * values, so most reads are an array load.  A read of a variable not yet
 * seen in the region yields a placeholder value, recorded as an upward-
 * exposed read of the region's first block; each block records the value
 * each variable it writes has at its end.
 *
 * At the end of the function (the CFG complete), Cytron et al.'s
 * construction ("Efficiently Computing Static Single Assignment Form and
 * the Control Dependence Graph", TOPLAS 1991) on those summaries only, not
 * on the instructions: dominators (Cooper-Harvey-Kennedy, ir_dom.c),
 * dominance frontiers, phis at the iterated frontier of each variable's
 * writing blocks for variables with upward-exposed reads (Briggs's
 * semi-pruned form), then a walk of the dominator tree that gives each
 * placeholder the value reaching its block and fills phi operands.  One
 * ir_replace_uses pass substitutes the placeholders; trivial phis
 * (operands all one value or the phi) and dead ones are removed.
 * Reads reached by no write see undef (PTX leaves such registers
 * undefined).  Every walk is iterative: 100,000-block functions do not
 * recurse.
 *
 * Why not Braun et al.'s on-the-fly construction, which a one-pass parser
 * suggests: measured on nvcc's code, whose every branch target is a label
 * whose predecessors are only known at the end of the function, it made 3.6
 * phis per instruction (98 % trivial), and even with sealing from a
 * pre-count of label references and placeholder phis it spent more time in
 * its (block, variable) lookups than the rest of the parser together.
 *
 * Invariants: a block index is never entered twice; our block indices
 * count block creations (ir_block.id is renumbered by the dominator
 * analysis, so the two are mapped at the end).
 */
#include <string.h>

#include "ptx_internal.h"

#define GROW(p, ptr, n, cap, T)                                        \
  do {                                                                 \
    if ((n) >= (cap)) {                                                \
      uint32_t nc_ = (cap) ? (cap) * 2 : 64;                           \
      while (nc_ <= (n)) nc_ *= 2;                                     \
      T *np_ = PW_NEW_ARRAY(&(p)->fscratch, T, nc_);                   \
      if (!np_) ptx_oom(p);                               \
      if (ptr) memcpy(np_, (ptr), (size_t)(cap) * sizeof(T));          \
      (ptr) = np_;                                                     \
      (cap) = nc_;                                                     \
    }                                                                  \
  } while (0)

void ptx_ssa_begin_func(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  memset(s, 0, sizeof *s);
  s->cur = PTX_NONE;
  s->last_left = PTX_NONE;
  s->region = 1;  /* stamps start at 0: no region */
  s->cc_var = ptx_ssa_new_vars(p, 1, ir_type_pred);
  s->var_name[s->cc_var] = "%cc";
  uint32_t entry = ptx_ssa_new_block(p, NULL, false, PTX_NONE);
  ptx_ssa_enter(p, entry);
}

uint32_t ptx_ssa_new_vars(ptx_parser *p, uint32_t n, ir_type t) {
  ptx_ssa *s = &p->ssa;
  if (n > (1u << 23) - s->nvars) ptx_fail(p, &p->tok, "too many registers in one function (at most 8388608)");
  uint32_t base = s->nvars, need = base + n;
  if (need > s->vars_cap) {
    uint32_t cap = s->vars_cap ? s->vars_cap : 256;
    while (cap < need) cap *= 2;
    uint8_t *vt = PW_NEW_ARRAY(&p->fscratch, uint8_t, cap);
    const char **vn = PW_NEW_ARRAY(&p->fscratch, const char *, cap);
    ir_value **cv = PW_NEW_ARRAY(&p->fscratch, ir_value *, cap);
    uint32_t *cs = PW_NEW_ARRAY(&p->fscratch, uint32_t, cap);
    uint32_t *ws = PW_NEW_ARRAY(&p->fscratch, uint32_t, cap);
    if (!vt || !vn || !cv || !cs || !ws) ptx_oom(p);
    if (s->nvars) {
      memcpy(vt, s->var_type, s->nvars);
      memcpy(vn, s->var_name, s->nvars * sizeof *vn);
      memcpy(cv, s->cur_val, s->nvars * sizeof *cv);
      memcpy(cs, s->cur_stamp, s->nvars * sizeof *cs);
      memcpy(ws, s->wstamp, s->nvars * sizeof *ws);
    }
    s->var_type = vt;
    s->var_name = vn;
    s->cur_val = cv;
    s->cur_stamp = cs;
    s->wstamp = ws;
    s->vars_cap = cap;
  }
  memset(s->var_type + base, t, n);
  s->nvars = need;
  return base;
}

uint32_t ptx_ssa_new_block(ptx_parser *p, const char *name, bool labeled, uint32_t pred) {
  ptx_ssa *s = &p->ssa;
  GROW(p, s->blocks, s->nblocks, s->blocks_cap, ptx_blockinfo);
  ir_block *b = ir_block_create(p->fn, name);
  if (!b) ptx_oom(p);
  uint32_t i = s->nblocks++;
  s->blocks[i] = (ptx_blockinfo){.block = b, .labeled = labeled, .pred = pred};
  return i;
}

void ptx_ssa_enter(ptx_parser *p, uint32_t blk) {
  ptx_ssa *s = &p->ssa;
  ptx_blockinfo *bi = &s->blocks[blk];
  /* Same region: the only predecessor was just left, or the block just
   * left wrote nothing and shares our only predecessor (the lone
   * terminator of a guarded ret puts such a block between). */
  bool same_region = !bi->labeled && bi->pred != PTX_NONE && s->last_left != PTX_NONE &&
                     (bi->pred == s->last_left ||
                      (s->last_left_clean && s->blocks[s->last_left].pred == bi->pred &&
                       !s->blocks[s->last_left].labeled));
  if (!same_region) {
    s->region++;
    s->region_head = blk;
  }
  s->cur = blk;
  s->ncur_defs = 0;
  p->b = ir_builder_at_end(bi->block);
}

void ptx_ssa_leave(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  if (s->cur == PTX_NONE) return;
  for (uint32_t i = 0; i < s->ncur_defs; i++) {
    uint32_t v = s->cur_defs[i];
    GROW(p, s->defs, s->ndefs, s->defs_cap, ptx_def);
    s->defs[s->ndefs++] = (ptx_def){s->cur, v, s->cur_val[v]};
  }
  s->last_left_clean = s->ncur_defs == 0;
  s->last_left = s->cur;
  s->ncur_defs = 0;
  s->cur = PTX_NONE;
}

/* Records v as var's value in the current region (and, for a write, among
 * the block's definitions recorded when it is left). */
static void set_cur(ptx_parser *p, uint32_t var, ir_value *v, bool write) {
  ptx_ssa *s = &p->ssa;
  s->cur_stamp[var] = s->region;
  s->cur_val[var] = v;
  if (write && s->wstamp[var] != s->cur + 1) {
    s->wstamp[var] = s->cur + 1;
    GROW(p, s->cur_defs, s->ncur_defs, s->cur_defs_cap, uint32_t);
    s->cur_defs[s->ncur_defs++] = var;
  }
}

/* Moves a block to the end of the function's layout: a label's block is
 * made when the label is first referenced, but belongs where the label is
 * defined. */
static void layout_move_to_end(ir_func *f, ir_block *b) {
  if (f->last_block == b) return;
  if (b->prev) b->prev->next = b->next;
  else f->entry = b->next;
  if (b->next) b->next->prev = b->prev;
  b->prev = f->last_block;
  b->next = NULL;
  if (f->last_block) f->last_block->next = b;
  else f->entry = b;
  f->last_block = b;
}

/* The current block, opened as an unreachable one if the last instruction
 * was a terminator. */
void ptx_ssa_ensure_block(ptx_parser *p) {
  if (p->ssa.cur == PTX_NONE) ptx_ssa_enter(p, ptx_ssa_new_block(p, NULL, false, PTX_NONE));
}
#define ensure_block ptx_ssa_ensure_block

void ptx_ssa_label(ptx_parser *p, uint32_t blk, const char *name) {
  ptx_ssa *s = &p->ssa;
  (void)name;
  if (s->cur != PTX_NONE) {
    /* fall through into the label */
    p->b.loc = (ir_loc){p->tok.line, p->tok.col};
    ir_br(&p->b, s->blocks[blk].block);
    ptx_ssa_leave(p);
  }
  s->blocks[blk].defined = true;
  layout_move_to_end(p->fn, s->blocks[blk].block);
  ptx_ssa_enter(p, blk);
}

ir_value *ptx_ssa_read(ptx_parser *p, uint32_t var) {
  ptx_ssa *s = &p->ssa;
  ensure_block(p);
  if (s->cur_stamp[var] == s->region) return s->cur_val[var];
  /* Not seen in this region: the value entering its first block, known
   * after renaming. */
  ir_value *ph = ir_value_create(p->fn, IR_VAL_INSTR, (ir_type)s->var_type[var]);
  if (!ph) ptx_oom(p);
  GROW(p, s->up, s->nup, s->up_cap, ptx_upread);
  s->up[s->nup++] = (ptx_upread){s->region_head, var, ph};
  set_cur(p, var, ph, false);
  return ph;
}

void ptx_ssa_write(ptx_parser *p, uint32_t var, ir_value *v) {
  ensure_block(p);
  if (!v->name) v->name = p->ssa.var_name[var];
  set_cur(p, var, v, true);
}

/* ---- the end of the function: phis and renaming ------------------------------ */

/* Counting sort of n records by key into per-key [off[k], off[k+1]). */
static uint32_t *bucket_offsets(ptx_parser *p, uint32_t nkeys, uint32_t n,
                                uint32_t (*key)(const void *, uint32_t), const void *recs) {
  uint32_t *off = PW_NEW_ARRAY(&p->fscratch, uint32_t, nkeys + 2);
  if (!off) ptx_oom(p);
  for (uint32_t i = 0; i < n; i++) off[key(recs, i) + 2]++;
  for (uint32_t k = 0; k < nkeys; k++) off[k + 2] += off[k + 1];
  return off;  /* off[k + 1] is the start of key k; filled by advancing it */
}

static uint32_t up_blk(const void *r, uint32_t i) { return ((const ptx_upread *)r)[i].blk; }
static uint32_t def_blk(const void *r, uint32_t i) { return ((const ptx_def *)r)[i].blk; }
static uint32_t def_var(const void *r, uint32_t i) { return ((const ptx_def *)r)[i].var; }

typedef struct placed {   /* a phi placed in a block */
  uint32_t var;
  ir_instr *phi;
  uint32_t next;          /* next phi of the same block, index + 1 */
} placed;

static ir_value *undef_of(ptx_parser *p, uint32_t var) {
  ir_value *u = ir_undef(&p->b, (ir_type)p->ssa.var_type[var]);
  if (!u) ptx_oom(p);
  return u;
}

/* Removes trivial phis (operands all one value, or the phi itself) to a
 * fixed point, then substitutes placeholders and removed phis in one
 * ir_replace_uses pass (map holds the placeholders' values on entry), then
 * removes phis no instruction uses even through other phis.  Phi operands
 * never hold placeholders (renaming filled them from definitions), so the
 * trivial ones can be found before the substitution. */
static void cleanup_phis(ptx_parser *p, placed *ph, uint32_t nph, ir_value **map, uint32_t nv) {
  ir_func *f = p->fn;
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t k = 0; k < nph; k++) {
      ir_instr *phi = ph[k].phi;
      if (!phi->block) continue;
      ir_value *self = phi->dst[0], *same = NULL;
      bool trivial = true;
      for (uint32_t i = 0; i < phi->nsrc; i++) {
        ir_value *v = phi->src[i];
        while (v && v->id < nv && map[v->id]) v = map[v->id];
        if (v == self || v == same) continue;
        if (same) {
          trivial = false;
          break;
        }
        same = v;
      }
      if (!trivial) continue;
      map[self->id] = same ? same : undef_of(p, ph[k].var);
      ir_instr_remove(phi);
      p->stats.phis_removed++;
      changed = true;
    }
  }
  /* ir_replace_uses wants an entry per value, undefs made above included;
   * it follows chains (a placeholder -> a removed phi -> its value). */
  if (f->nvalues > nv) {
    ir_value **full = PW_NEW_ARRAY(&p->fscratch, ir_value *, f->nvalues + 1);
    if (!full) ptx_oom(p);
    memcpy(full, map, nv * sizeof *full);
    map = full;
  }
  ir_replace_uses(f, map);
  uint32_t left = 0;
  for (uint32_t k = 0; k < nph; k++) left += ph[k].phi->block != NULL;
  if (!left) return;  /* nothing to mark: most small functions */
  /* Liveness of phis: used by a non-phi instruction, or by a live phi. */
  uint32_t nv2 = f->nvalues;
  uint8_t *live = PW_NEW_ARRAY(&p->fscratch, uint8_t, nv2 + 1);
  ir_instr **def_phi = PW_NEW_ARRAY(&p->fscratch, ir_instr *, nv2 + 1);
  uint32_t *stack = PW_NEW_ARRAY(&p->fscratch, uint32_t, nph + 1);
  uint32_t nstack = 0;
  if (!live || !def_phi || !stack) ptx_oom(p);
  for (uint32_t k = 0; k < nph; k++)
    if (ph[k].phi->block) def_phi[ph[k].phi->dst[0]->id] = ph[k].phi;
#define MARK(v)                                                                  \
  do {                                                                           \
    ir_value *v_ = (v);                                                          \
    if (v_ && v_->id < nv2 && def_phi[v_->id] && !live[v_->id]) {                \
      live[v_->id] = 1;                                                          \
      stack[nstack++] = v_->id;                                                  \
    }                                                                            \
  } while (0)
  ir_foreach_block(f, b) {
    ir_foreach_instr(b, i) {
      if (i->op == ir_op_phi) continue;
      for (unsigned k = 0; k < i->nsrc; k++) MARK(i->src[k]);
      MARK(i->guard);
      if (i->keep)
        for (unsigned k = 0; k < i->ndst; k++) MARK(i->keep[k]);
    }
  }
  while (nstack) {
    ir_instr *phi = def_phi[stack[--nstack]];
    for (unsigned k = 0; k < phi->nsrc; k++) MARK(phi->src[k]);
  }
#undef MARK
  for (uint32_t k = 0; k < nph; k++) {
    ir_instr *phi = ph[k].phi;
    if (phi->block && !live[phi->dst[0]->id]) {
      ir_instr_remove(phi);
      p->stats.phis_removed++;
    }
  }
}

void ptx_ssa_check_labels(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  for (uint32_t i = 0; i < s->nblocks; i++)
    if (s->blocks[i].labeled && !s->blocks[i].defined) {
      const ptx_tok *t = &s->blocks[i].first_ref;
      ptx_error_at(p, t, "label '%.*s' is not defined", (int)t->len, t->text);
    }
}

/* A phi holds at most 65,534 operands (ir_instr.nsrc is 16 bits), yet
 * valid PTX may branch to one label from more places (it aborted the
 * process).  Such a block gets its predecessors through fan-in blocks of
 * at most PTX_FANIN each, empty but for a branch on to it: the CFG's paths
 * are the same, and the phis form a two-level tree.  Each entry of the
 * predecessor list is one edge; a predecessor's edges (a brx naming the
 * block many times) are consecutive, as its one terminator added them in
 * target order, so entry by entry the next such target is retargeted. */
#define PTX_FANIN 32768u
static void limit_preds(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  uint32_t nb = s->nblocks;
  for (uint32_t b = 0; b < nb; b++) {
    ir_block *bb = s->blocks[b].block;
    if (bb->npreds < 65534) continue;
    uint32_t n = bb->npreds;
    ir_block **old = PW_NEW_ARRAY(&p->fscratch, ir_block *, n);
    if (!old) ptx_oom(p);
    memcpy(old, bb->preds, n * sizeof *old);
    bb->npreds = 0;
    uint32_t last_e = 0;
    for (uint32_t i = 0; i < n;) {
      uint32_t fi = ptx_ssa_new_block(p, NULL, true, PTX_NONE);
      s->blocks[fi].defined = true;
      ir_block *fb = s->blocks[fi].block;
      uint32_t end = i + PTX_FANIN < n ? i + PTX_FANIN : n;
      for (uint32_t k = i; k < end; k++) {
        ir_block *pb = old[k];
        ir_block_add_pred(fb, pb);
        ir_instr *t = ir_block_terminator(pb);
        if (k == 0 || pb != old[k - 1]) last_e = 0;
        while (t && last_e < t->ntargets && t->targets[last_e] != bb) last_e++;
        if (t && last_e < t->ntargets) t->targets[last_e++] = fb;
      }
      ir_builder fbld = ir_builder_at_end(fb);
      fbld.loc = bb->first ? bb->first->loc : p->b.loc;
      ir_br(&fbld, bb);
      i = end;
    }
  }
}

/* What the steps of ptx_ssa_end_func share: the dominator tree in our
 * block numbering, the dominance frontiers, the placed phis. */
typedef struct ssa_build {
  uint32_t nb, nvar, entry;
  uint32_t *idx_of;        /* ir_block id -> our block index */
  uint32_t *idom;          /* by block: its immediate dominator, PTX_NONE if unreachable */
  uint32_t *df_head;       /* by block: its frontier list (index + 1) */
  uint32_t *df_blk, *df_next;
  placed *ph;              /* the phis placed, chained per block from phi_head */
  uint32_t nph;
  uint32_t *phi_head;      /* index + 1 */
} ssa_build;

static bool reachable(const ssa_build *B, uint32_t i) { return i == B->entry || B->idom[i] != PTX_NONE; }

/* The dominator tree (ir_compute_dominators renumbers ir_block ids: map
 * them back to ours); reachable: the entry and whatever has an idom. */
static void dominator_tree(ptx_parser *p, ssa_build *B) {
  ptx_ssa *s = &p->ssa;
  ir_func *f = p->fn;
  ir_compute_dominators(f);
  B->idx_of = PW_NEW_ARRAY(&p->fscratch, uint32_t, f->nblocks + 1);
  B->idom = PW_NEW_ARRAY(&p->fscratch, uint32_t, B->nb);
  if (!B->idx_of || !B->idom) ptx_oom(p);
  for (uint32_t i = 0; i < B->nb; i++) B->idx_of[s->blocks[i].block->id] = i;
  B->entry = B->idx_of[f->entry->id];
  for (uint32_t i = 0; i < B->nb; i++) {
    ir_block *d = s->blocks[i].block->idom;
    B->idom[i] = d ? B->idx_of[d->id] : PTX_NONE;
  }
}

/* Dominance frontiers (Cooper, Harvey, Kennedy): for each join, walk up
 * from each predecessor to the join's idom.  Lists chained in arrays. */
static void dominance_frontiers(ptx_parser *p, ssa_build *B) {
  ptx_ssa *s = &p->ssa;
  uint32_t nb = B->nb;
  B->df_head = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);
  uint32_t *df_stamp = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);
  uint32_t ndf = 0, df_cap = 0, df_cap2 = 0;
  if (!B->df_head || !df_stamp) ptx_oom(p);
  for (uint32_t b = 0; b < nb; b++) {
    ir_block *bb = s->blocks[b].block;
    if (bb->npreds < 2 || !reachable(B, b)) continue;
    for (uint32_t k = 0; k < bb->npreds; k++) {
      uint32_t r = B->idx_of[bb->preds[k]->id];
      if (!reachable(B, r)) continue;
      while (r != PTX_NONE && r != B->idom[b]) {
        if (df_stamp[r] == b + 1) break;  /* already has b (and so do its dominators up to idom) */
        df_stamp[r] = b + 1;
        GROW(p, B->df_blk, ndf, df_cap, uint32_t);
        GROW(p, B->df_next, ndf, df_cap2, uint32_t);
        B->df_blk[ndf] = b;
        B->df_next[ndf] = B->df_head[r];
        B->df_head[r] = ++ndf;
        r = B->idom[r];
      }
    }
  }
}

/* Phi placement at the iterated dominance frontier of the writing blocks
 * of each global variable (one with an upward-exposed read: semi-pruned
 * SSA); by_var/dv_off: the writes grouped by variable. */
static void place_phis(ptx_parser *p, ssa_build *B, const uint32_t *dv_off, const uint32_t *by_var) {
  ptx_ssa *s = &p->ssa;
  uint32_t nb = B->nb, nvar = B->nvar, ph_cap = 0;
  uint8_t *global = PW_NEW_ARRAY(&p->fscratch, uint8_t, nvar);
  if (!global) ptx_oom(p);
  for (uint32_t i = 0; i < s->nup; i++) global[s->up[i].var] = 1;
  B->phi_head = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);
  uint32_t *has_phi = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);
  uint32_t *in_work = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);
  uint32_t *work = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb + 1);
  if (!B->phi_head || !has_phi || !in_work || !work) ptx_oom(p);
  for (uint32_t v = 0; v < nvar; v++) {
    if (!global[v] || dv_off[v] == dv_off[v + 1]) continue;
    uint32_t nw = 0;
    for (uint32_t k = dv_off[v]; k < dv_off[v + 1]; k++) {
      uint32_t b = s->defs[by_var[k]].blk;
      if (in_work[b] != v + 1 && reachable(B, b)) {
        in_work[b] = v + 1;
        work[nw++] = b;
      }
    }
    while (nw) {
      uint32_t x = work[--nw];
      for (uint32_t d = B->df_head[x]; d; d = B->df_next[d - 1]) {
        uint32_t y = B->df_blk[d - 1];
        if (has_phi[y] == v + 1) continue;
        has_phi[y] = v + 1;
        ir_block *yb = s->blocks[y].block;
        /* At the top of the block: before its first instruction, so no
         * walk over the phis already there. */
        ir_builder bb = yb->first ? ir_builder_before(yb->first) : ir_builder_at_end(yb);
        bb.loc = yb->first ? yb->first->loc : p->b.loc;
        ir_type t = (ir_type)s->var_type[v];
        ir_instr *phi = ir_build(&bb, ir_op_phi, t, yb->npreds, NULL, 1, &t, NULL);
        if (!phi) ptx_oom(p);
        phi->dst[0]->name = s->var_name[v];
        p->stats.phis++;
        GROW(p, B->ph, B->nph, ph_cap, placed);
        B->ph[B->nph] = (placed){v, phi, B->phi_head[y]};
        B->phi_head[y] = ++B->nph;
        if (in_work[y] != v + 1) {
          in_work[y] = v + 1;
          work[nw++] = y;
        }
      }
    }
  }
}

/* Renaming: a walk of the dominator tree with each variable's current
 * value and an undo log.  Fills repl (by the id of an upward-exposed
 * read's placeholder: the value it reads) and the placed phis' operands. */
static void rename_vars(ptx_parser *p, ssa_build *B, ir_value **repl) {
  ptx_ssa *s = &p->ssa;
  uint32_t nb = B->nb;
  placed *ph = B->ph;
  /* Writes grouped by block, upward-exposed reads by block. */
  uint32_t *db_off = bucket_offsets(p, nb, s->ndefs, def_blk, s->defs);
  uint32_t *by_blk = PW_NEW_ARRAY(&p->fscratch, uint32_t, s->ndefs + 1);
  for (uint32_t i = 0; i < s->ndefs; i++) by_blk[db_off[s->defs[i].blk + 1]++] = i;
  uint32_t *ub_off = bucket_offsets(p, nb, s->nup, up_blk, s->up);
  uint32_t *up_by_blk = PW_NEW_ARRAY(&p->fscratch, uint32_t, s->nup + 1);
  for (uint32_t i = 0; i < s->nup; i++) up_by_blk[ub_off[s->up[i].blk + 1]++] = i;
  /* after the fill loops, off[k] .. off[k + 1] delimit key k */
  uint32_t *child_head = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);  /* index + 1 */
  uint32_t *child_next = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb);
  if (!child_head || !child_next) ptx_oom(p);
  for (uint32_t b = 0; b < nb; b++)
    if (B->idom[b] != PTX_NONE) {
      child_next[b] = child_head[B->idom[b]];
      child_head[B->idom[b]] = b + 1;
    }
  /* Each block's out-edges as (successor, predecessor slot), grouped by
   * block: a counting sort over every block's predecessor list. */
  typedef struct { uint32_t blk, slot; } edge_slot;
  uint32_t *edge_off = PW_NEW_ARRAY(&p->fscratch, uint32_t, nb + 2);
  uint64_t nedges = 0;
  if (!edge_off) ptx_oom(p);
  for (uint32_t b = 0; b < nb; b++) {
    ir_block *bb = s->blocks[b].block;
    for (uint32_t i = 0; i < bb->npreds; i++) edge_off[B->idx_of[bb->preds[i]->id] + 2]++;
    nedges += bb->npreds;
  }
  for (uint32_t b = 0; b < nb; b++) edge_off[b + 2] += edge_off[b + 1];
  edge_slot *edges = PW_NEW_ARRAY(&p->fscratch, edge_slot, nedges + 1);
  if (!edges) ptx_oom(p);
  for (uint32_t b = 0; b < nb; b++) {
    ir_block *bb = s->blocks[b].block;
    for (uint32_t i = 0; i < bb->npreds; i++) edges[edge_off[B->idx_of[bb->preds[i]->id] + 1]++] = (edge_slot){b, i};
  }
  ir_value **cur = PW_NEW_ARRAY(&p->fscratch, ir_value *, B->nvar);
  typedef struct { uint32_t var; ir_value *old; } undo;
  undo *log = NULL;
  uint32_t nlog = 0, log_cap = 0;
  typedef struct { uint32_t blk, mark; bool done; } frame;
  frame *st = PW_NEW_ARRAY(&p->fscratch, frame, nb + 1);
  if (!cur || !st) ptx_oom(p);
  uint32_t nst = 0;
  st[nst++] = (frame){B->entry, 0, false};
  while (nst) {
    frame *fr = &st[nst - 1];
    uint32_t b = fr->blk;
    if (fr->done) {
      while (nlog > fr->mark) {
        nlog--;
        cur[log[nlog].var] = log[nlog].old;
      }
      nst--;
      continue;
    }
    fr->done = true;
    fr->mark = nlog;
    for (uint32_t k = B->phi_head[b]; k; k = ph[k - 1].next) {
      GROW(p, log, nlog, log_cap, undo);
      log[nlog++] = (undo){ph[k - 1].var, cur[ph[k - 1].var]};
      cur[ph[k - 1].var] = ph[k - 1].phi->dst[0];
    }
    for (uint32_t k = ub_off[b]; k < ub_off[b + 1]; k++) {
      ptx_upread *u = &s->up[up_by_blk[k]];
      repl[u->ph->id] = cur[u->var];
    }
    for (uint32_t k = db_off[b]; k < db_off[b + 1]; k++) {
      ptx_def *d = &s->defs[by_blk[k]];
      GROW(p, log, nlog, log_cap, undo);
      log[nlog++] = (undo){d->var, cur[d->var]};
      cur[d->var] = d->v;
    }
    /* the phi operands of b's out-edges: each (successor, slot) once,
     * found through edge_off (a scan of the successor's predecessors per
     * edge was quadratic at a label with 70,000 branches to it) */
    for (uint32_t e = edge_off[b]; e < edge_off[b + 1]; e++) {
      uint32_t sidx = edges[e].blk, i = edges[e].slot;
      for (uint32_t k = B->phi_head[sidx]; k; k = ph[k - 1].next) {
        ir_instr *phi = ph[k - 1].phi;
        if (!phi->src[i]) ir_phi_set_src(phi, i, cur[ph[k - 1].var]);
      }
    }
    for (uint32_t c = child_head[b]; c; c = child_next[c - 1]) st[nst++] = (frame){c - 1, 0, false};
  }
}

void ptx_ssa_end_func(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  ir_func *f = p->fn;
  if (s->cur != PTX_NONE) {
    /* Falling off the end of a function returns (PTX ISA 9.7.12.5: ret is
     * implicit at the end of a function body). */
    ptx_build_ret(p, false);
    ptx_ssa_leave(p);
  }
  if (p->errors) return;
  limit_preds(p);
  ssa_build B = {.nb = s->nblocks, .nvar = s->nvars};
  dominator_tree(p, &B);
  dominance_frontiers(p, &B);
  /* Writes grouped by variable. */
  uint32_t *dv_off = bucket_offsets(p, B.nvar, s->ndefs, def_var, s->defs);
  uint32_t *by_var = PW_NEW_ARRAY(&p->fscratch, uint32_t, s->ndefs + 1);
  for (uint32_t i = 0; i < s->ndefs; i++) by_var[dv_off[s->defs[i].var + 1]++] = i;
  place_phis(p, &B, dv_off, by_var);
  ir_value **repl = PW_NEW_ARRAY(&p->fscratch, ir_value *, f->nvalues + 1);
  if (!repl) ptx_oom(p);
  rename_vars(p, &B, repl);
  /* What nothing reaches is undefined: reads in unreachable blocks, phi
   * operands from unreachable predecessors, reads before any write. */
  for (uint32_t i = 0; i < s->nup; i++)
    if (!repl[s->up[i].ph->id]) repl[s->up[i].ph->id] = undef_of(p, s->up[i].var);
  for (uint32_t k = 0; k < B.nph; k++)
    for (uint32_t i = 0; i < B.ph[k].phi->nsrc; i++)
      if (!B.ph[k].phi->src[i]) ir_phi_set_src(B.ph[k].phi, i, undef_of(p, B.ph[k].var));
  /* repl was sized before the undefs above (never replaced themselves). */
  uint32_t nv = f->nvalues;
  ir_value **map = PW_NEW_ARRAY(&p->fscratch, ir_value *, nv + 1);
  if (!map) ptx_oom(p);
  for (uint32_t i = 0; i < s->nup; i++) map[s->up[i].ph->id] = repl[s->up[i].ph->id];
  cleanup_phis(p, B.ph, B.nph, map, nv);
}
