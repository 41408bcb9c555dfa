/* lower/opt_dce.c: removes instructions whose results nobody uses and that
 * have no effect besides them (style.md: an opt_ pass keeps the meaning
 * and may be skipped).
 *
 * The lowering passes build each replacement from scratch (the lane id,
 * EXEC, the half's base ...), and a replacement often needs only part of
 * what its helpers made; this pass sweeps the rest, so printed IR shows
 * what the code computes.  Kept: anything with side effects, stores,
 * terminators, loads and ops that may fault (removing one would hide a
 * fault the program has), and calls.  Removed: pure ops, phis and
 * convergent ops (ballots, EXEC) with no use: removing a convergent op is
 * safe; moving it is what is not.
 *
 * Algorithm: use counts over the function, then a worklist of dead
 * instructions whose removal decrements their operands' counts.
 */
#include <string.h>

#include "lower_internal.h"

static bool removable(const ir_instr *i) {
  unsigned fl = ir_op_infos[i->op].flags;
  if (fl & (IR_F_SIDE | IR_F_STORE | IR_F_TERM | IR_F_LOAD | IR_F_TRAP)) return false;
  if (i->op == ir_op_call || i->op == ir_op_opaque) return false;
  return true;
}

static void count_uses(const ir_instr *i, uint32_t *uses, int delta) {
  for (unsigned k = 0; k < i->nsrc; k++)
    if (i->src[k] && i->src[k]->kind == IR_VAL_INSTR) uses[i->src[k]->id] += (uint32_t)delta;
  if (i->guard && i->guard->kind == IR_VAL_INSTR) uses[i->guard->id] += (uint32_t)delta;
  for (unsigned k = 0; i->keep && k < i->ndst; k++)
    if (i->keep[k] && i->keep[k]->kind == IR_VAL_INSTR) uses[i->keep[k]->id] += (uint32_t)delta;
}

static bool dead(const ir_instr *i, const uint32_t *uses) {
  if (!removable(i)) return false;
  for (unsigned k = 0; k < i->ndst; k++)
    if (uses[i->dst[k]->id]) return false;
  return true;
}

/* Eliminates nothing it could name by op (dead results of any op);
 * removes only instructions without uses, no terminator: the CFG and every
 * remaining value's divergence stay. */
const lower_contract opt_dce_contract = {
    .pass = "opt_dce",
    .preserves = IR_ANALYSIS_ALL,
};

/* The worklist, pushing onto a scratch array that doubles when full. */
typedef struct worklist {
  pw_arena *scratch;
  ir_instr **v;
  size_t n, cap;
} worklist;

static void push(worklist *w, ir_instr *i) {
  if (w->n == w->cap) {
    w->v = lower_scratch_grow(w->scratch, w->v, w->n, w->cap ? 2 * w->cap : 256, sizeof *w->v);
    w->cap = w->cap ? 2 * w->cap : 256;
  }
  w->v[w->n++] = i;
}

/* Scratch: one arena; the use counts and the worklist are reused from one
 * function to the next. */
bool opt_dce(ir_module *m, const opt_dce_options *opt) {
  (void)opt;
  bool progress = false;
  pw_arena scratch;
  pw_arena_init(&scratch);
  scratch.on_oom = m->arena.on_oom;  /* out of memory unwinds as in the module's arena */
  LOWER_SCRATCH_BUF(uint32_t) ubuf = {0};
  worklist w = {.scratch = &scratch};
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    uint32_t *uses = LOWER_RESERVE(&scratch, ubuf, f->nvalues + 1);
    memset(uses, 0, (f->nvalues + 1) * sizeof *uses);
    w.n = 0;
    ir_foreach_block(f, b) ir_foreach_instr(b, i) count_uses(i, uses, 1);
    ir_foreach_block(f, b) ir_foreach_instr(b, i) if (dead(i, uses)) push(&w, i);
    while (w.n) {
      ir_instr *i = w.v[--w.n];
      if (!i->block) continue;            /* already removed (ir_instr_remove clears block) */
      if (!dead(i, uses)) continue;
      count_uses(i, uses, -1);
      ir_instr_remove(i);
      progress = true;
      for (unsigned k = 0; k < i->nsrc; k++) {
        ir_value *v = i->src[k];
        if (v && v->kind == IR_VAL_INSTR && v->def && v->def->block && dead(v->def, uses)) push(&w, v->def);
      }
    }
  }
  pw_arena_free(&scratch);
  return progress;
}
