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
 *     blocks (iteratively: no recursion, so a 100,000-block function
 *     cannot overflow the stack);
 *   - a labeled block can gain predecessors until the end of the function
 *     (any later branch may target it), so it is sealed only then: a read
 *     places an operand-less phi at its top and queues it.
 * At the end of the function every block is sealed at once: queued phis get
 * one operand per predecessor (reading at the end of each, which may queue
 * more phis), then trivial phis (all operands the same value or the phi
 * itself) are replaced by that value until none is left, in one
 * ir_replace_uses pass.
 *
 * Invariants: a block index is never entered twice; block indices are
 * ours (p->ssa.blocks), distinct from ir_block.id, which the IR renumbers.
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
    if (!vt || !vn || !cv || !cs) PW_DIE("out of memory");
    if (s->nvars) {
      memcpy(vt, s->var_type, s->nvars);
      memcpy(vn, s->var_name, s->nvars * sizeof *vn);
      memcpy(cv, s->cur_val, s->nvars * sizeof *cv);
      memcpy(cs, s->cur_stamp, s->nvars * sizeof *cs);
    }
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
  s->cur = blk;
  s->ncur_defs = 0;
  p->b = ir_builder_at_end(s->blocks[blk].block);
}

void ptx_ssa_leave(ptx_parser *p) {
  ptx_ssa *s = &p->ssa;
  if (s->cur == PTX_NONE) return;
  for (uint32_t i = 0; i < s->ncur_defs; i++) {
    uint32_t v = s->cur_defs[i];
    u64map_put(p, &s->defs, mkkey(KEY_DEF, s->cur, v), s->cur_val[v]);
  }
  s->ncur_defs = 0;
  s->cur = PTX_NONE;
}

static void set_cur(ptx_parser *p, uint32_t var, ir_value *v) {
  ptx_ssa *s = &p->ssa;
  if (s->cur_stamp[var] != s->cur + 1) {
    s->cur_stamp[var] = s->cur + 1;
    GROW(p, s->cur_defs, s->ncur_defs, s->cur_defs_cap, uint32_t);
    s->cur_defs[s->ncur_defs++] = var;
  }
  s->cur_val[var] = v;
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

void ptx_ssa_label(ptx_parser *p, uint32_t blk, const char *name) {
  ptx_ssa *s = &p->ssa;
  (void)name;
  if (s->cur != PTX_NONE) {
    /* fall through into the label */
    p->b.loc = (ir_loc){p->tok.line, p->tok.col};
    ir_br(&p->b, s->blocks[blk].block);
    ptx_ssa_leave(p);
  }
  layout_move_to_end(p->fn, s->blocks[blk].block);
  ptx_ssa_enter(p, blk);
}

static ir_value *new_phi(ptx_parser *p, uint32_t blk, uint32_t var) {
  ptx_ssa *s = &p->ssa;
  ir_builder b = ir_builder_at_end(s->blocks[blk].block);
  b.loc = p->b.loc;
  ir_instr *phi = ir_phi(&b, s->blocks[blk].block, (ir_type)s->var_type[var], 0);
  if (!phi) PW_DIE("out of memory");
  phi->dst[0]->name = s->var_name[var];
  u64map_put(p, &s->defs, mkkey(KEY_PHI, blk, var), phi->dst[0]);
  GROW(p, s->pending, s->npending, s->pending_cap, ptx_pending_phi);
  s->pending[s->npending++] = (ptx_pending_phi){blk, var, phi};
  return phi->dst[0];
}

static ir_value *undef(ptx_parser *p, uint32_t var) {
  ir_value *u = ir_undef(&p->b, (ir_type)p->ssa.var_type[var]);
  if (!u) PW_DIE("out of memory");
  return u;
}

/* The value of var at the end of block blk (a block already left). */
static ir_value *read_end(ptx_parser *p, uint32_t var, uint32_t blk) {
  ptx_ssa *s = &p->ssa;
  uint32_t path[64], npath = 0;
  ir_value *v;
  for (;;) {
    v = u64map_get(&s->defs, mkkey(KEY_DEF, blk, var));
    if (v) break;
    ptx_blockinfo *bi = &s->blocks[blk];
    if (bi->labeled) {
      v = u64map_get(&s->defs, mkkey(KEY_PHI, blk, var));
      if (!v) v = new_phi(p, blk, var);
      break;
    }
    if (bi->pred == PTX_NONE) {
      v = undef(p, var);
      break;
    }
    /* Remember a bounded part of the path; the rest is found again by the
     * next walk, which then stops at the memoized blocks. */
    if (npath < 64) path[npath++] = blk;
    blk = bi->pred;
  }
  for (uint32_t i = 0; i < npath; i++) u64map_put(p, &s->defs, mkkey(KEY_DEF, path[i], var), v);
  if (npath == 0 || path[npath - 1] != blk) u64map_put(p, &s->defs, mkkey(KEY_DEF, blk, var), v);
  return v;
}

ir_value *ptx_ssa_read(ptx_parser *p, uint32_t var) {
  ptx_ssa *s = &p->ssa;
  ensure_block(p);
  if (s->cur_stamp[var] == s->cur + 1) return s->cur_val[var];
  ptx_blockinfo *bi = &s->blocks[s->cur];
  ir_value *v;
  if (bi->labeled) {
    v = u64map_get(&s->defs, mkkey(KEY_PHI, s->cur, var));
    if (!v) v = new_phi(p, s->cur, var);
  } else if (bi->pred != PTX_NONE) {
    v = read_end(p, var, bi->pred);
  } else {
    v = undef(p, var);
  }
  set_cur(p, var, v);
  return v;
}

void ptx_ssa_write(ptx_parser *p, uint32_t var, ir_value *v) {
  ensure_block(p);
  if (!v->name) v->name = p->ssa.var_name[var];
  set_cur(p, var, v);
}

/* ---- sealing and trivial phis ---------------------------------------------- */

static ir_value *resolve(ir_value **map, uint32_t n, ir_value *v) {
  while (v && v->id < n && map[v->id]) v = map[v->id];
  return v;
}

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

  ir_compute_preds(f);
  /* Our block index for each ir_block id (the IR renumbered them). */
  uint32_t *idx_of = PW_NEW_ARRAY(&p->fscratch, uint32_t, f->nblocks + 1);
  if (!idx_of) PW_DIE("out of memory");
  for (uint32_t i = 0; i < s->nblocks; i++) {
    uint32_t id = s->blocks[i].block->id;
    if (id <= f->nblocks) idx_of[id] = i;
  }

  /* Seal every block: give queued phis their operands.  read_end may queue
   * more phis, which this loop reaches too. */
  for (uint32_t k = 0; k < s->npending; k++) {
    ptx_pending_phi pp = s->pending[k];
    ir_block *b = s->blocks[pp.blk].block;
    p->b.loc = pp.phi->loc;
    for (uint32_t i = 0; i < b->npreds; i++) {
      ir_value *v = read_end(p, pp.var, idx_of[b->preds[i]->id]);
      ir_phi_add_src(pp.phi, v);
    }
  }

  /* Remove trivial phis, to a fixed point. */
  uint32_t nmap = f->nvalues;
  ir_value **map = PW_NEW_ARRAY(&p->fscratch, ir_value *, nmap + 1);
  if (!map) PW_DIE("out of memory");
  bool changed = true, any = false;
  while (changed) {
    changed = false;
    for (uint32_t k = 0; k < s->npending; k++) {
      ir_instr *phi = s->pending[k].phi;
      ir_value *self = phi->dst[0];
      if (map[self->id]) continue;
      ir_value *same = NULL;
      bool trivial = true;
      for (uint32_t i = 0; i < phi->nsrc; i++) {
        ir_value *v = resolve(map, nmap, phi->src[i]);
        if (v == self || v == same) continue;
        if (same) {
          trivial = false;
          break;
        }
        same = v;
      }
      if (!trivial) continue;
      if (!same) same = undef(p, s->pending[k].var);
      /* An undef made here has an id past the map: never mapped itself. */
      map[self->id] = same;
      changed = any = true;
    }
  }
  if (any) {
    /* ir_replace_uses wants an entry per value, undefs made above included. */
    ir_value **full = PW_NEW_ARRAY(&p->fscratch, ir_value *, f->nvalues + 1);
    if (!full) PW_DIE("out of memory");
    memcpy(full, map, nmap * sizeof *full);
    ir_replace_uses(f, full);
    for (uint32_t k = 0; k < s->npending; k++) {
      ir_instr *phi = s->pending[k].phi;
      if (map[phi->dst[0]->id]) ir_instr_remove(phi);
    }
  }
}
