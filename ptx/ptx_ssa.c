/* ptx/ptx_ssa.c: SSA construction while parsing (Braun, Buchwald, Hack,
 * Leißa, Mallon, Zwinkau: "Simple and Efficient Construction of Static
 * Single Assignment Form", CC 2013).
 *
 * Every .reg name (each %r<N> element, each inline-asm scope's register)
 * is a variable with a dense number; the carry flag of add.cc/addc is one
 * more.  A write records the variable's current value in the block being
 * filled; a read looks it up there, else asks for the block's incoming
 * value:
 *   - an unlabeled block (the entry, a fall-through after a conditional
 *     branch, unreachable code after a terminator) has at most one
 *     predecessor, known when it is made: the incoming value is the
 *     predecessor's value at its end, found by walking back along such
 *     blocks;
 *   - a labeled block is "sealed" once all its predecessors are known.
 *     Before parsing a body, the parser counts how often each label is
 *     named (ptx_ssa_count_label_refs); a label's block is sealed when it
 *     is defined and that many branches to it have been made.  For labels
 *     only branched to from above (if/else joins) that is at the label; a
 *     loop header waits for its back edge.  A read in a sealed block with
 *     several predecessors makes a phi and fills it at once; in an unsealed
 *     one it makes an operand-less phi, filled when the block is sealed.
 *     Blocks of a .branchtargets list are sealed at the end of the body.
 * Filling goes through a work list, not recursion, so a function with
 * 100,000 blocks cannot overflow the stack.  A filled phi whose operands are
 * all one value (or itself) is trivial: it is unlinked and recorded in a
 * replacement map, reads resolve through that map, and one ir_replace_uses
 * pass at the end of the function rewrites the uses made before.  Without
 * sealing, nvcc's code makes some 3.6 phis per instruction, 98 % trivial.
 *
 * Invariant: a block index is never entered twice; block indices are ours
 * (p->ssa.blocks) and equal ir_block.id (both count creations).
 */
#include <string.h>

#include "ptx_internal.h"

enum { KEY_DEF = 0, KEY_PHI = 1 };

/* ---- (kind, block, var) -> value ----------------------------------------- */

static uint64_t mkkey(unsigned kind, uint32_t blk, uint32_t var) {
  return (((uint64_t)kind << 62) | ((uint64_t)blk << 32) | var) + 1;
}

static uint32_t hash64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  return (uint32_t)k;
}

static void u64map_init(ptx_parser *p, ptx_u64map *m, uint32_t cap) {
  m->keys = PW_NEW_ARRAY(&p->fscratch, uint64_t, cap);
  m->vals = PW_NEW_ARRAY(&p->fscratch, ir_value *, cap);
  if (!m->keys || !m->vals) PW_DIE("out of memory");
  m->mask = cap - 1;
  m->n = 0;
}

static ir_value *u64map_get(const ptx_u64map *m, uint64_t key) {
  for (uint32_t i = hash64(key) & m->mask;; i = (i + 1) & m->mask) {
    if (m->keys[i] == key) return m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

static void u64map_put(ptx_parser *p, ptx_u64map *m, uint64_t key, ir_value *v) {
  if (2 * (m->n + 1) > m->mask + 1) {
    ptx_u64map old = *m;
    u64map_init(p, m, (old.mask + 1) * 2);
    for (uint32_t i = 0; i <= old.mask; i++)
      if (old.keys[i]) {
        uint32_t j = hash64(old.keys[i]) & m->mask;
        while (m->keys[j]) j = (j + 1) & m->mask;
        m->keys[j] = old.keys[i];
        m->vals[j] = old.vals[i];
        m->n++;
      }
  }
  uint32_t i = hash64(key) & m->mask;
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & m->mask;
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->n++;
  }
  m->vals[i] = v;
}

/* ---- growth helpers ------------------------------------------------------- */

#define GROW(p, ptr, n, cap, T)                                        \
  do {                                                                 \
    if ((n) >= (cap)) {                                                \
      uint32_t nc_ = (cap) ? (cap) * 2 : 64;                           \
      while (nc_ <= (n)) nc_ *= 2;                                     \
      T *np_ = PW_NEW_ARRAY(&(p)->fscratch, T, nc_);                   \
      if (!np_) PW_DIE("out of memory");                               \
      if (ptr) memcpy(np_, (ptr), (size_t)(cap) * sizeof(T));          \
      (ptr) = np_;                                                     \
      (cap) = nc_;                                                     \
    }                                                                  \
  } while (0)

void ptx_ssa_begin_func(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  memset(s, 0, sizeof *s);
  u64map_init(p, &s->defs, 1024);
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
  if (n > (1u << 26) - s->nvars) ptx_fail(p, &p->tok, "too many registers in one function");
  uint32_t base = s->nvars, need = base + n;
  if (need > s->vars_cap) {
    uint32_t cap = s->vars_cap ? s->vars_cap : 256;
    while (cap < need) cap *= 2;
    uint8_t *vt = PW_NEW_ARRAY(&p->fscratch, uint8_t, cap);
    const char **vn = PW_NEW_ARRAY(&p->fscratch, const char *, cap);
    ir_value **cv = PW_NEW_ARRAY(&p->fscratch, ir_value *, cap);
    uint32_t *cs = PW_NEW_ARRAY(&p->fscratch, uint32_t, cap);
    uint32_t *ws = PW_NEW_ARRAY(&p->fscratch, uint32_t, cap);
    if (!vt || !vn || !cv || !cs || !ws) PW_DIE("out of memory");
    if (s->nvars) {
      memcpy(vt, s->var_type, s->nvars);
      memcpy(vn, s->var_name, s->nvars * sizeof *vn);
      memcpy(cv, s->cur_val, s->nvars * sizeof *cv);
      memcpy(cs, s->cur_stamp, s->nvars * sizeof *cs);
      memcpy(ws, s->wstamp, s->nvars * sizeof *ws);
    }
    s->wstamp = ws;
    s->var_type = vt;
    s->var_name = vn;
    s->cur_val = cv;
    s->cur_stamp = cs;
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
  if (!b) PW_DIE("out of memory");
  uint32_t i = s->nblocks++;
  s->blocks[i] = (ptx_blockinfo){.block = b, .labeled = labeled, .pred = pred};
  return i;
}

void ptx_ssa_enter(ptx_parser *p, uint32_t blk) {
  ptx_ssa *s = &p->ssa;
  ptx_blockinfo *bi = &s->blocks[blk];
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
    u64map_put(p, &s->defs, mkkey(KEY_DEF, s->cur, v), s->cur_val[v]);
  }
  s->last_left_clean = s->ncur_defs == 0;
  s->last_left = s->cur;
  s->ncur_defs = 0;
  s->cur = PTX_NONE;
}

/* Records v as var's value in the current region (and, for a write, in the
 * block's definitions flushed when it is left). */
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
static void ensure_block(ptx_parser *p) {
  if (p->ssa.cur == PTX_NONE) ptx_ssa_enter(p, ptx_ssa_new_block(p, NULL, false, PTX_NONE));
}

/* ---- replacement of trivial phis ----------------------------------------- */

static ir_value *resolve(ptx_ssa *s, ir_value *v) {
  while (v && v->id < s->repl_cap && s->repl[v->id]) v = s->repl[v->id];
  return v;
}

static void set_repl(ptx_parser *p, ir_value *from, ir_value *to) {
  ptx_ssa *s = &p->ssa;
  if (from->id >= s->repl_cap) {
    uint32_t cap = s->repl_cap ? s->repl_cap : 1024;
    while (cap <= from->id) cap *= 2;
    ir_value **n = PW_NEW_ARRAY(&p->fscratch, ir_value *, cap);
    if (!n) PW_DIE("out of memory");
    if (s->repl) memcpy(n, s->repl, s->repl_cap * sizeof *n);
    s->repl = n;
    s->repl_cap = cap;
  }
  s->repl[from->id] = to;
  s->any_repl = true;
}

/* ---- phis -------------------------------------------------------------------- */

static ir_value *undef(ptx_parser *p, uint32_t var) {
  ir_value *u = ir_undef(&p->b, (ir_type)p->ssa.var_type[var]);
  if (!u) PW_DIE("out of memory");
  return u;
}

/* A real phi at the top of blk, first among the block's instructions
 * after the phis already there. */
static ir_instr *make_phi(ptx_parser *p, uint32_t blk, uint32_t var) {
  ptx_ssa *s = &p->ssa;
  ir_builder b = ir_builder_at_end(s->blocks[blk].block);
  b.loc = p->b.loc;
  ir_instr *phi = ir_phi(&b, s->blocks[blk].block, (ir_type)s->var_type[var], 0);
  if (!phi) PW_DIE("out of memory");
  phi->dst[0]->name = s->var_name[var];
  GROW(p, s->pending, s->npending, s->pending_cap, ptx_pending_phi);
  s->pending[s->npending++] = (ptx_pending_phi){blk, var, phi, 0};
  p->stats.phis++;
  return phi;
}

/* The incoming value of var at labeled block blk, as a phi.  In an unsealed
 * block a real phi waits on the block's list until it is sealed.  In a
 * sealed block a placeholder value goes on the work list: its operands are
 * read before the current read returns, and only if they differ does it
 * become a real phi (most do not: this saves making and unlinking millions
 * of phis on nvcc's code). */
static ir_value *new_phi(ptx_parser *p, uint32_t blk, uint32_t var) {
  ptx_ssa *s = &p->ssa;
  ptx_blockinfo *bi = &s->blocks[blk];
  ir_value *v;
  if (bi->sealed) {
    v = ir_value_create(p->fn, IR_VAL_INSTR, (ir_type)s->var_type[var]);
    if (!v) PW_DIE("out of memory");
    GROW(p, s->work, s->nwork, s->work_cap, ptx_work);
    s->work[s->nwork++] = (ptx_work){.blk = blk, .var = var, .ph = v};
  } else {
    ir_instr *phi = make_phi(p, blk, var);
    s->pending[s->npending - 1].next = bi->first_pending;
    bi->first_pending = s->npending;
    v = phi->dst[0];
  }
  u64map_put(p, &s->defs, mkkey(KEY_PHI, blk, var), v);
  return v;
}

/* The value of var at the top of labeled block blk (already left or being
 * filled): its phi, made if needed; in a sealed block with one
 * predecessor, that predecessor's value (returned through *walk). */
static ir_value *labeled_in(ptx_parser *p, uint32_t var, uint32_t blk, uint32_t *walk) {
  ptx_ssa *s = &p->ssa;
  ptx_blockinfo *bi = &s->blocks[blk];
  *walk = PTX_NONE;
  ir_value *v = u64map_get(&s->defs, mkkey(KEY_PHI, blk, var));
  if (v) return resolve(s, v);
  if (bi->sealed) {
    ir_block *b = bi->block;
    if (b->npreds == 0) return undef(p, var);
    if (b->npreds == 1) {
      *walk = b->preds[0]->id;
      return NULL;
    }
  }
  return new_phi(p, blk, var);
}

/* The value of var at the end of block blk (a block already left). */
static ir_value *read_end(ptx_parser *p, uint32_t var, uint32_t blk) {
  ptx_ssa *s = &p->ssa;
  uint32_t path[64], npath = 0;
  ir_value *v;
  for (;;) {
    v = u64map_get(&s->defs, mkkey(KEY_DEF, blk, var));
    if (v) {
      v = resolve(s, v);
      break;
    }
    ptx_blockinfo *bi = &s->blocks[blk];
    uint32_t next = bi->pred;
    if (bi->labeled) {
      v = labeled_in(p, var, blk, &next);
      if (v) break;
    }
    if (next == PTX_NONE) {
      v = undef(p, var);
      break;
    }
    /* Remember a bounded part of the path; a later walk stops at the
     * memoized blocks. */
    if (npath < 64) path[npath++] = blk;
    blk = next;
  }
  for (uint32_t i = 0; i < npath; i++) u64map_put(p, &s->defs, mkkey(KEY_DEF, path[i], var), v);
  return v;
}

/* Fills the phis on the work list (reads may add more), removes those
 * that turn out trivial and makes the other placeholders real phis. */
static void drain(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  for (uint32_t done = 0; done < s->nwork; done++) {
    ptx_work w = s->work[done];
    ir_block *b = s->blocks[w.blk].block;
    if (w.phi) {
      for (uint32_t i = 0; i < b->npreds; i++) ir_phi_add_src(w.phi, read_end(p, w.var, b->preds[i]->id));
      continue;
    }
    uint32_t first = s->nops;
    for (uint32_t i = 0; i < b->npreds; i++) {
      ir_value *v = read_end(p, w.var, b->preds[i]->id);
      GROW(p, s->ops, s->nops, s->ops_cap, ir_value *);
      s->ops[s->nops++] = v;
    }
    s->work[done].first_op = first;
    s->work[done].nops = b->npreds;
  }
  /* Trivial ones, to a fixed point among them (one may make another so). */
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t k = 0; k < s->nwork; k++) {
      ptx_work *w = &s->work[k];
      if (w->decided) continue;
      ir_value *self = w->phi ? w->phi->dst[0] : w->ph, *same = NULL;
      uint32_t n = w->phi ? w->phi->nsrc : w->nops;
      bool trivial = true;
      for (uint32_t i = 0; i < n; i++) {
        ir_value *v = resolve(s, w->phi ? w->phi->src[i] : s->ops[w->first_op + i]);
        if (v == self || v == same) continue;
        if (same) {
          trivial = false;
          break;
        }
        same = v;
      }
      if (!trivial) continue;
      if (!same) same = undef(p, w->var);
      set_repl(p, self, same);
      if (w->phi) {
        ir_instr_remove(w->phi);
        p->stats.phis_removed++;
      }
      w->decided = true;
      changed = true;
    }
  }
  for (uint32_t k = 0; k < s->nwork; k++) {
    ptx_work *w = &s->work[k];
    if (w->decided || w->phi) continue;
    ir_instr *phi = make_phi(p, w->blk, w->var);
    for (uint32_t i = 0; i < w->nops; i++) ir_phi_add_src(phi, resolve(s, s->ops[w->first_op + i]));
    set_repl(p, w->ph, phi->dst[0]);
  }
  s->nwork = 0;
  s->nops = 0;
}

/* All predecessors of blk are known: fill its waiting phis. */
static void seal(ptx_parser *p, uint32_t blk) {
  ptx_ssa *s = &p->ssa;
  ptx_blockinfo *bi = &s->blocks[blk];
  if (bi->sealed) return;
  bi->sealed = true;
  for (uint32_t k = bi->first_pending; k; k = s->pending[k - 1].next) {
    GROW(p, s->work, s->nwork, s->work_cap, ptx_work);
    s->work[s->nwork++] = (ptx_work){.blk = blk, .var = s->pending[k - 1].var, .phi = s->pending[k - 1].phi};
  }
  bi->first_pending = 0;
  drain(p);
}

static void maybe_seal(ptx_parser *p, uint32_t blk) {
  ptx_blockinfo *bi = &p->ssa.blocks[blk];
  if (bi->defined && !bi->in_targets && bi->refs_seen >= bi->refs_expected) seal(p, blk);
}

void ptx_ssa_edge(ptx_parser *p, uint32_t blk) {
  ptx_blockinfo *bi = &p->ssa.blocks[blk];
  bi->refs_seen++;
  maybe_seal(p, blk);
}

void ptx_ssa_no_early_seal(ptx_parser *p, uint32_t blk) { p->ssa.blocks[blk].in_targets = true; }

void ptx_ssa_label(ptx_parser *p, uint32_t blk, const char *name) {
  ptx_ssa *s = &p->ssa;
  (void)name;
  if (s->cur != PTX_NONE) {
    /* fall through into the label */
    p->b.loc = (ir_loc){p->tok.line, p->tok.col};
    ir_br(&p->b, s->blocks[blk].block);
    ptx_ssa_leave(p);
  }
  ptx_blockinfo *bi = &s->blocks[blk];
  void *n = ptx_map_get(&s->label_refs, bi->first_ref.text, bi->first_ref.len);
  bi->refs_expected = (uint32_t)(uintptr_t)n;
  bi->defined = true;
  layout_move_to_end(p->fn, bi->block);
  maybe_seal(p, blk);
  ptx_ssa_enter(p, blk);
}

ir_value *ptx_ssa_read(ptx_parser *p, uint32_t var) {
  ptx_ssa *s = &p->ssa;
  ensure_block(p);
  if (s->cur_stamp[var] == s->region) return resolve(s, s->cur_val[var]);
  /* Not seen in this region: the value entering its first block. */
  ptx_blockinfo *bi = &s->blocks[s->region_head];
  ir_value *v;
  uint32_t next = bi->pred;
  if (bi->labeled) {
    v = labeled_in(p, var, s->region_head, &next);
    if (!v) v = next == PTX_NONE ? undef(p, var) : read_end(p, var, next);
  } else if (next != PTX_NONE) {
    v = read_end(p, var, next);
  } else {
    v = undef(p, var);
  }
  if (s->nwork) drain(p);
  v = resolve(s, v);
  set_cur(p, var, v, false);
  return v;
}

void ptx_ssa_write(ptx_parser *p, uint32_t var, ir_value *v) {
  ensure_block(p);
  if (!v->name) v->name = p->ssa.var_name[var];
  set_cur(p, var, v, true);
}

/* ---- the label pre-count ---------------------------------------------------- */

/* Counts the names in the body that could be branch targets: identifiers
 * without '%' that are neither a statement's first word (the mnemonic, or
 * a label being defined) nor followed by ':'.  Variables and functions are
 * counted too, harmlessly.  One extra pass of the lexer over the body. */
void ptx_ssa_count_label_refs(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  ptx_map_init(&s->label_refs, &p->fscratch, 256);
  ptx_lexer lx;
  const char *start = p->tok.text;
  ptx_lex_init(&lx, start, (size_t)(p->lx.end - start));
  ptx_tok t, prev = {0}, prev2 = {0};
  int depth = 0;
  bool stmt_start = true;
  ptx_lex_next(&lx, &t);
  while (t.kind != PTX_TOK_EOF) {
    ptx_tok next;
    ptx_lex_next(&lx, &next);
    switch (t.kind) {
    case PTX_TOK_LBRACE: depth++; break;
    case PTX_TOK_RBRACE:
      if (depth == 0) return;
      depth--;
      break;
    case PTX_TOK_IDENT:
      if (t.text[0] != '%' && next.kind != PTX_TOK_COLON && !stmt_start &&
          !(prev.kind == PTX_TOK_IDENT && (prev2.kind == PTX_TOK_AT || prev2.kind == PTX_TOK_BANG))) {
        ptx_map_ent *e = ptx_map_find(&s->label_refs, t.text, t.len);
        if (e) e->val = (void *)((uintptr_t)e->val + 1);
        else ptx_map_put(&s->label_refs, t.text, t.len, (void *)(uintptr_t)1);
      }
      break;
    default: break;
    }
    stmt_start = t.kind == PTX_TOK_SEMI || t.kind == PTX_TOK_LBRACE || t.kind == PTX_TOK_RBRACE ||
                 t.kind == PTX_TOK_COLON;
    prev2 = prev;
    prev = t;
    t = next;
  }
}

/* ---- the end of the function ---------------------------------------------- */

void ptx_ssa_end_func(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  ir_func *f = p->fn;
  if (s->cur != PTX_NONE) {
    /* Falling off the end of a function returns (PTX ISA 9.7.12.5: ret is
     * implicit at the end of a function body). */
    ir_ret(&p->b);
    ptx_ssa_leave(p);
  }
  for (uint32_t i = 0; i < s->nblocks; i++)
    if (s->blocks[i].labeled && !s->blocks[i].defined) {
      const ptx_tok *t = &s->blocks[i].first_ref;
      ptx_error_at(p, t, "label '%.*s' is not defined", (int)t->len, t->text);
    }
  if (p->errors) return;
  /* Seal what is left: loop headers whose back edge was counted more often
   * than made, blocks of .branchtargets lists. */
  for (uint32_t i = 0; i < s->nblocks; i++)
    if (s->blocks[i].labeled) seal(p, i);

  /* Phis found non-trivial early may have become trivial since (their
   * operands were trivial phis removed later): to a fixed point. */
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint32_t k = 0; k < s->npending; k++) {
      ir_instr *phi = s->pending[k].phi;
      if (!phi->block) continue;
      ir_value *self = phi->dst[0], *same = NULL;
      bool trivial = true;
      for (uint32_t i = 0; i < phi->nsrc; i++) {
        ir_value *v = resolve(s, phi->src[i]);
        if (v == self || v == same) continue;
        if (same) {
          trivial = false;
          break;
        }
        same = v;
      }
      if (!trivial) continue;
      if (!same) same = undef(p, s->pending[k].var);
      set_repl(p, self, same);
      ir_instr_remove(phi);
      p->stats.phis_removed++;
      changed = true;
    }
  }
  if (s->any_repl) {
    /* ir_replace_uses wants an entry per value of the function. */
    ir_value **full = PW_NEW_ARRAY(&p->fscratch, ir_value *, f->nvalues + 1);
    if (!full) PW_DIE("out of memory");
    memcpy(full, s->repl, (s->repl_cap < f->nvalues ? s->repl_cap : f->nvalues) * sizeof *full);
    ir_replace_uses(f, full);
  }
}
