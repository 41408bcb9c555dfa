/* lower/lower_hazards.c: the known hazard of two warps per wave64
 * (design.md, "Warps on wavefronts"; docs/lowering.md, "The hazard").
 *
 * On an NVIDIA GPU since Volta each warp, and each thread, makes progress
 * on its own.  On wave64 the two warps of a wave share one program counter
 * and one EXEC mask: when they diverge, one side runs to the reconvergence
 * point before the other side starts.  Two patterns then break:
 *   1. a barrier reached by one warp of the wave while the other warp is
 *      on the other side of a branch: the wave waits at the barrier with
 *      half its lanes, and the other half cannot run to complete it (named
 *      barriers), or the barrier completes early for it (s_barrier counts
 *      waves, not warps);
 *   2. a spin loop waiting on memory that the other warp of the same wave
 *      writes after the loop's reconvergence point.
 * This analysis finds the places where that can happen, by the IR's
 * divergence analysis (ir_compute_divergence, ir/ir_divergence.c, for a
 * wave of 64: values derived from %tid, %laneid, %warpid, lane masks,
 * atomics, calls and loads through varying addresses vary within a wave,
 * and so do the phis where a varying branch's paths meet; bar.red's result
 * is one for the CTA):
 *   - a barrier, or a call of a function that has one, in a block control
 *     dependent on a varying branch (between the branch and its immediate
 *     post-dominator);
 *   - a loop whose exit condition reads shared or global memory through a
 *     volatile load or an atomic, and that contains no barrier: a spin-wait.
 * It warns; it does not change the IR.  What it cannot see (the condition
 * is uniform in the IR but the data makes warps of one wave wait on each
 * other) is documented in docs/lowering.md.
 */
#include "lower_internal.h"

/* barrier.cluster.wait is the workgroup barrier after lower_cluster (the
 * arrive is a fence) */
static bool is_barrier(const ir_instr *i) {
  return (i->op == ir_op_bar && i->mods.barmode != IR_BAR_ARRIVE) || i->op == ir_op_bar_red ||
         i->op == ir_op_workgroup_barrier || (i->op == ir_op_barrier_cluster && i->mods.barmode == IR_BAR_WAIT);
}

/* Does f, or a function it calls directly (a few levels down), contain a
 * barrier?  A call under a varying branch is then a barrier there too. */
static bool func_has_barrier(const ir_func *f, unsigned depth) {
  if (!f || f->is_decl || depth > 4) return false;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    if (is_barrier(i)) return true;
    if (i->op == ir_op_call && i->nsrc && i->src[0] && i->src[0]->kind == IR_VAL_SYMBOL &&
        i->src[0]->symref.sym.kind == IR_SYM_FUNC && func_has_barrier(i->src[0]->symref.sym.func, depth + 1))
      return true;
  }
  return false;
}

static bool calls_barrier(const ir_instr *i) {
  return i->op == ir_op_call && i->nsrc && i->src[0] && i->src[0]->kind == IR_VAL_SYMBOL &&
         i->src[0]->symref.sym.kind == IR_SYM_FUNC && func_has_barrier(i->src[0]->symref.sym.func, 0);
}

/* Does the value depend on a volatile load or an atomic (a spin's flag)? */
static bool reads_flag(const ir_value *v, unsigned depth) {
  if (!v || v->kind != IR_VAL_INSTR || depth > 8) return false;
  const ir_instr *i = v->def;
  if (i->op == ir_op_atom) return true;
  if (i->op == ir_op_ld && (i->mods.sem == IR_SEM_VOLATILE || i->mods.sem == IR_SEM_ACQUIRE ||
                            i->mods.sem == IR_SEM_RELAXED))
    return true;
  if (i->op == ir_op_phi) return false;
  for (unsigned k = 0; k < i->nsrc; k++)
    if (reads_flag(i->src[k], depth + 1)) return true;
  return false;
}

/* Scratch: one arena, emptied after each function. */
/* A barrier other than CTA barrier 0: named barriers (bar.sync 1, bar.arrive
 * pairs between producer and consumer warps) are where wave splitting must
 * keep counts per warp (PTX ISA 9.7.13.1). */
static bool is_named_barrier(const ir_instr *i) {
  if (i->op == ir_op_workgroup_barrier || !i->nsrc || !i->src[0]) return false;
  return i->src[0]->kind != IR_VAL_CONST || i->src[0]->imm != 0;
}

unsigned lower_check_hazards(ir_module *m, const lower_hazards_options *opt) {
  if (m->facts.wave_size != 64) return 0;
  unsigned nwarn = 0;
  lower_hazards_stats none = {0}, *st = opt->stats ? opt->stats : &none;
  pw_arena scratch;
  pw_arena_init(&scratch);
  scratch.on_oom = m->arena.on_oom;  /* out of memory unwinds as in the module's arena */
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    unsigned nwarn0 = nwarn;
    ir_compute_preds(f);
    ir_require_analyses(f, IR_ANALYSIS_DOMINANCE | IR_ANALYSIS_POST_DOMINANCE);
    ir_compute_divergence(f, 64);   /* the hazards are those of wave64 (above) */
    uint32_t nb = 0;
    ir_foreach_block(f, b) b->id = nb++;
    uint8_t *seen = LOWER_SCRATCH(&scratch, uint8_t, nb + 1);
    ir_block **stack = LOWER_SCRATCH(&scratch, ir_block *, nb + 1);
    uint8_t *warned = LOWER_SCRATCH(&scratch, uint8_t, nb + 1);
    ir_foreach_block(f, a) {
      ir_instr *t = ir_block_terminator(a);
      if (!t || t->op != ir_op_cbr || !t->src[0] || !t->src[0]->divergent) continue;
      /* blocks between the branch and its immediate post-dominator */
      for (uint32_t k = 0; k < nb; k++) seen[k] = 0;
      uint32_t sp = 0;
      for (uint32_t s = 0; s < t->ntargets; s++)
        if (t->targets[s] != a->ipdom && !seen[t->targets[s]->id]) {
          seen[t->targets[s]->id] = 1;
          stack[sp++] = t->targets[s];
        }
      while (sp) {
        ir_block *x = stack[--sp];
        ir_foreach_instr(x, i) if ((is_barrier(i) || calls_barrier(i)) && !warned[x->id]) {
          warned[x->id] = 1;
          nwarn++;
          if (is_barrier(i)) {
            st->barrier++;
            if (is_named_barrier(i)) st->named_barrier++;
          } else {
            st->call++;
          }
          lower_warn(opt->diag, i,
                     "%s under a branch that varies inside a wave (line %u): if the two warps of one "
                     "wave64 take different sides, the barrier is reached by half a wave",
                     is_barrier(i) ? "barrier" : "call of a function with a barrier", t->loc.line);
        }
        for (uint32_t s = 0; s < ir_block_nsuccs(x); s++) {
          ir_block *y = ir_block_succ(x, s);
          if (y && y != a->ipdom && !seen[y->id]) {
            seen[y->id] = 1;
            stack[sp++] = y;
          }
        }
      }
    }
    /* spin loops: a back edge x -> h (h dominates x) whose branch reads a flag,
     * with no barrier in the block range h..x */
    ir_foreach_block(f, x) {
      ir_instr *t = ir_block_terminator(x);
      if (!t || t->op != ir_op_cbr) continue;
      for (uint32_t s = 0; s < t->ntargets; s++) {
        ir_block *h = t->targets[s];
        if (!h || !ir_block_dominates(h, x) || !reads_flag(t->src[0], 0)) continue;
        bool bar = false;
        for (ir_block *y = h; y && !bar; y = y->next) {
          ir_foreach_instr(y, i) if (is_barrier(i)) bar = true;
          if (y == x) break;
        }
        if (bar) continue;
        nwarn++;
        st->spin++;
        lower_warn(opt->diag, t,
                   "spin-wait on memory: if the thread it waits for is in the other warp of the same "
                   "wave64, it cannot run until this loop exits");
      }
    }
    st->funcs++;
    st->kernels += f->is_kernel;
    if (nwarn > nwarn0) {
      st->funcs_flagged++;
      st->kernels_flagged += f->is_kernel;
    }
    pw_arena_free(&scratch);
  }
  return nwarn;
}
