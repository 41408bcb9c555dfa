/* emu/emu_exec.c: running one wave.
 *
 * Divergence: per-lane program counters with min-PC scheduling.  Each
 * frame keeps a pc per lane (an index into the function's code); the lanes
 * that execute together, `cur`, are all the runnable lanes whose pc is the
 * smallest.  A branch sends each lane of cur to its target; if they all go
 * to one target and no other lane of the frame is waiting, execution just
 * continues there, else the lanes store their pcs and the smallest pc is
 * chosen again.  Because the decoder lays blocks out in a weak topological
 * order (emu_decode.c), lanes that reach a join point wait there until
 * every lane still on a path to it has arrived: they reconverge at the
 * immediate post-dominator of the branch, and also at any earlier point
 * where paths meet after some lanes exited, which a post-dominator stack
 * cannot do.  This holds for unstructured flow: loops with several exits,
 * exit and ret inside divergent code, brx.idx, indirect calls with
 * different targets per lane.
 *
 * Counterexample that shaped this: `if (c) { if (x) exit; a(); } b();
 * bar.sync` - the branch on c has no immediate post-dominator but the
 * virtual exit, so a post-dominator stack would reach bar.sync with the two
 * halves separately; here both halves meet at b().
 *
 * Forward progress inside a warp (Volta's independent thread scheduling):
 * when one group of lanes keeps taking a backward branch while other lanes
 * of the frame wait, after EMU_INTRA_SPIN such branches the waiting lanes
 * run instead, so a lane spinning on a lock held by another lane of its own
 * warp cannot starve it.
 *
 * Calls run the callee for the lanes that call, in a new frame; the other
 * lanes of the caller wait until every calling lane has returned or exited.
 * Phis are parallel copies on edges, run by the lanes taking the edge.
 *
 * Barriers count warps (PTX ISA 9.7.13.1: a warp arrives when all its
 * non-exited threads have executed the barrier); a barrier with no thread
 * count expects every warp with a live thread, so exited threads never
 * block one.  .sync warp operations wait until every non-exited lane of
 * the member mask has arrived at the same instruction.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"

#define EMU_INTRA_SPIN 1024

static inline emu_mask runnable(const emu_frame *f) { return f->live & ~f->blocked & ~f->incall; }

/* Chooses the lanes with the smallest pc; false if no lane can run. */
static bool select_lanes(emu_frame *f) {
  emu_mask run = runnable(f);
  if (!run) {
    f->cur = 0;
    return false;
  }
  uint32_t best = UINT32_MAX;
  EMU_EACH(run, l, if (f->lane_pc[l] < best) best = f->lane_pc[l]);
  emu_mask cur = 0;
  EMU_EACH(run, l, if (f->lane_pc[l] == best) cur |= 1ull << l);
  f->cur = cur;
  f->ip = best;
  return true;
}

/* The lanes of `except` keep waiting: run the smallest pc among the others. */
static bool select_others(emu_frame *f, emu_mask except) {
  emu_mask run = runnable(f) & ~except;
  if (!run) return select_lanes(f);
  uint32_t best = UINT32_MAX;
  EMU_EACH(run, l, if (f->lane_pc[l] < best) best = f->lane_pc[l]);
  emu_mask cur = 0;
  EMU_EACH(run, l, if (f->lane_pc[l] == best) cur |= 1ull << l);
  f->cur = cur;
  f->ip = best;
  return true;
}

static inline void set_pc(emu_frame *f, emu_mask m, uint32_t pc) { EMU_EACH(m, l, f->lane_pc[l] = pc); }

/* ---- register copies -------------------------------------------------------- */
static void copy_slot(emu_exec *x, uint8_t cls, emu_opnd dst, emu_opnd src, emu_mask m) {
  if (cls == EMU_CLS_PRED) {
    emu_pred_write(x, dst, m, EMU_PRED(x, src));
    return;
  }
  uint64_t *d = EMU_U64(x, dst);
  const uint64_t *s = EMU_U64(x, src);
  if (cls == EMU_CLS_WIDE) {
    EMU_EACH(m, l, d[2 * l] = s[2 * l]; d[2 * l + 1] = s[2 * l + 1]);
  } else {
    EMU_LANES(x, m, l, d[l] = s[l]);
  }
}

/* The phi copies of an edge for the lanes of m, as one parallel copy. */
static void edge_copies(emu_exec *x, const emu_edge *e, emu_mask m) {
  if (!e->ncopies || !m) return;
  if (!e->parallel) {
    for (uint32_t k = 0; k < e->ncopies; k++) copy_slot(x, e->copies[k].cls, e->copies[k].dst, e->copies[k].src, m);
    return;
  }
  /* read every source before writing any destination (the scratch buffer
   * grows to the largest phi group once, then is reused) */
  size_t need = (size_t)e->ncopies * EMU_MAX_LANES * 2;
  if (x->scratch_cap < need) {
    uint64_t *ns = realloc(x->scratch, need * 8);
    if (!ns) {
      /* the launch fails (CUDA_ERROR_OUT_OF_MEMORY through the runtime);
       * the wave stops at its next fault check */
      emu_fault(x, NULL, -1, EMU_ERR_OUT_OF_MEMORY, "out of host memory for the %u phi copies of an edge",
                e->ncopies);
      return;
    }
    x->scratch = ns;
    x->scratch_cap = need;
  }
  uint64_t *tmp = x->scratch;
  for (uint32_t k = 0; k < e->ncopies; k++) {
    const emu_copy *c = &e->copies[k];
    uint64_t *t = tmp + (size_t)k * EMU_MAX_LANES * 2;
    if (c->cls == EMU_CLS_PRED) t[0] = EMU_PRED(x, c->src);
    else if (c->cls == EMU_CLS_WIDE) memcpy(t, EMU_U64(x, c->src), 16 * x->nlanes);
    else memcpy(t, EMU_U64(x, c->src), 8 * x->nlanes);
  }
  for (uint32_t k = 0; k < e->ncopies; k++) {
    const emu_copy *c = &e->copies[k];
    uint64_t *t = tmp + (size_t)k * EMU_MAX_LANES * 2;
    if (c->cls == EMU_CLS_PRED) {
      emu_pred_write(x, c->dst, m, t[0]);
    } else {
      uint64_t *d = EMU_U64(x, c->dst);
      if (c->cls == EMU_CLS_WIDE) EMU_EACH(m, l, d[2 * l] = t[2 * l]; d[2 * l + 1] = t[2 * l + 1]);
      else EMU_EACH(m, l, d[l] = t[l]);
    }
  }
}

static void keep_copies(emu_exec *x, const emu_inst *in, emu_mask m) {
  for (unsigned k = 0; k < in->ndst; k++) {
    ir_type t = (ir_type)in->dtype[k];
    uint8_t cls = t == ir_type_pred ? EMU_CLS_PRED : ir_type_bits(t) > 64 ? EMU_CLS_WIDE : EMU_CLS_LANE;
    copy_slot(x, cls, in->dst[k], in->keep[k], m);
  }
}

static inline emu_mask guard_mask(emu_exec *x, const emu_inst *in, emu_mask m) {
  emu_mask g = EMU_PRED(x, in->guard);
  return m & (in->guard_neg ? ~g : g);
}

/* ---- frames ------------------------------------------------------------------ */
static void frame_symbols(const emu_grid *L, emu_frame *f) {
  const emu_func *fn = f->fn;
  for (uint32_t i = 0; i < fn->nsymslots; i++) {
    const emu_symslot *s = &fn->symslots[i];
    uint64_t v = 0;
    switch (s->kind) {
    case EMU_SYM_LOCAL: v = (uint64_t)f->local_base + (uint64_t)s->offset; break;
    case EMU_SYM_LOCAL_GENERIC: v = EMU_WIN_LOCAL | ((uint64_t)f->local_base + (uint64_t)s->offset); break;
    case EMU_SYM_SHARED: {
      uint32_t off = L->kernel->shared_off[s->index];
      if (off == UINT32_MAX - 1) off = L->dyn_off;
      v = (uint64_t)off + (uint64_t)s->offset;
      break;
    }
    }
    uint64_t *d = (uint64_t *)(f->regs + s->slot);
    for (unsigned l = 0; l < L->wave; l++) d[l] = v;
  }
}

static bool frame_alloc(emu_wave *w, uint32_t depth, const emu_func *fn) {
  if (depth >= w->frames_cap) {
    uint32_t nc = w->frames_cap ? w->frames_cap * 2 : 4;
    emu_frame *nf = realloc(w->frames, nc * sizeof *nf);
    if (!nf) return false;
    memset(nf + w->frames_cap, 0, (nc - w->frames_cap) * sizeof *nf);
    w->frames = nf;
    w->frames_cap = nc;
  }
  emu_frame *f = &w->frames[depth];
  size_t need = fn->regs_size ? fn->regs_size : 8;
  if (f->regs_cap < need) {
    free(f->regs);
    f->regs = aligned_alloc(64, (need + 63) / 64 * 64);
    if (!f->regs) {
      f->regs_cap = 0;
      return false;
    }
    f->regs_cap = (need + 63) / 64 * 64;
  }
  memset(f->regs, 0, need);
  f->fn = fn;
  f->live = f->cur = f->blocked = f->incall = f->returned = f->syncwait = 0;
  f->ip = 0;
  f->backjumps = 0;
  return true;
}

void emu_wave_start(emu_wave *w, const emu_func *kernel) {
  w->depth = 0;
  w->exited = 0;
  w->state = EMU_W_RUN;
  w->spins = 0;
  w->clock = 0;
  memset(w->bar_arrived, 0, sizeof w->bar_arrived);
  memset(w->bar_wait, 0, sizeof w->bar_wait);
  memset(w->bar_counted, 0, sizeof w->bar_counted);
  if (!frame_alloc(w, 0, kernel)) {
    w->state = EMU_W_DONE;
    return;
  }
  emu_frame *f = &w->frames[0];
  f->live = f->cur = w->exists;
  f->local_base = 0;
  for (unsigned l = 0; l < EMU_MAX_LANES; l++) f->sp[l] = kernel->frame_local;
  w->depth = 1;
  frame_symbols(w->wg->l, f);
  for (unsigned l = 0; l < EMU_MAX_LANES; l++) f->lane_pc[l] = 0;
}

/* Removes exited lanes from every frame. */
static void lanes_exit(emu_wave *w, emu_mask m) {
  w->exited |= m;
  for (uint32_t d = 0; d < w->depth; d++) {
    emu_frame *f = &w->frames[d];
    f->live &= ~m;
    f->cur &= ~m;
    f->blocked &= ~m;
    f->incall &= ~m;
    f->syncwait &= ~m;
  }
  for (unsigned b = 0; b < EMU_NBARRIERS; b++) w->bar_wait[b] &= ~m;
}

/* ---- barriers ------------------------------------------------------------------ */
static emu_mask warp_lanes(unsigned h) { return 0xffffffffull << (32 * h); }

/* Counts the warps of w whose live lanes have all arrived at barrier b. */
static void count_warps(emu_wg *wg, emu_wave *w, unsigned b) {
  emu_mask alive = w->exists & ~w->exited;
  for (unsigned h = 0; h < 2; h++) {
    emu_mask wl = warp_lanes(h) & alive;
    if (!wl || (w->bar_counted[b] & (1u << h))) continue;
    if ((w->bar_arrived[b] & wl) == wl) {
      w->bar_counted[b] |= (uint8_t)(1u << h);
      wg->bars[b].arrived++;
    }
  }
}

static uint32_t live_warps(const emu_wg *wg) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < wg->nwaves; i++) {
    const emu_wave *w = &wg->waves[i];
    emu_mask alive = w->exists & ~w->exited;
    n += (alive & warp_lanes(0)) != 0;
    n += (alive & warp_lanes(1)) != 0;
  }
  return n;
}

static void release_barrier(emu_wg *wg, unsigned b) {
  emu_bar *bar = &wg->bars[b];
  for (uint32_t i = 0; i < wg->nwaves; i++) {
    emu_wave *w = &wg->waves[i];
    emu_mask wait = w->bar_wait[b];
    if (wait) {
      emu_frame *f = &w->frames[w->bar_depth[b] < w->depth ? w->bar_depth[b] : w->depth - 1];
      f->blocked &= ~wait;
      const emu_inst *in = w->bar_inst[b];
      if (in && in->op == ir_op_bar_red && in->ndst) {
        if (in->dtype[0] == ir_type_pred) {
          bool v = in->mods.atomop == IR_ATOM_AND ? bar->red_and : bar->red_or;
          emu_mask *p = (emu_mask *)(f->regs + in->dst[0]);
          *p = (*p & ~wait) | (v ? wait : 0);
        } else {
          uint64_t *d = (uint64_t *)(f->regs + in->dst[0]);
          uint64_t v = bar->popc;
          if (in->mods.atomop == IR_ATOM_AND) v = bar->red_and;
          else if (in->mods.atomop == IR_ATOM_OR) v = bar->red_or;
          EMU_EACH(wait, l, d[l] = v);
        }
      }
      if (w->state == EMU_W_BLOCKED) w->state = EMU_W_RUN;
    }
    w->bar_wait[b] = 0;
    w->bar_arrived[b] = 0;
    w->bar_counted[b] = 0;
  }
  memset(bar, 0, sizeof *bar);
  bar->red_and = true;
}

static void check_barrier(emu_wg *wg, unsigned b, uint32_t *lw) {
  emu_bar *bar = &wg->bars[b];
  uint32_t expected = bar->expected;
  if (!expected) {
    if (*lw == UINT32_MAX) *lw = live_warps(wg);
    expected = *lw;
  }
  if (bar->arrived >= expected) release_barrier(wg, b);
}

void emu_check_barriers(emu_wg *wg) {
  uint32_t lw = UINT32_MAX;
  for (unsigned b = 0; b < EMU_NBARRIERS; b++) {
    bool any = false;
    for (uint32_t i = 0; i < wg->nwaves; i++)
      if (wg->waves[i].bar_arrived[b]) {
        any = true;
        count_warps(wg, &wg->waves[i], b);
      }
    if (any) check_barrier(wg, b, &lw);
  }
}

int emu_describe_wait(char *buf, size_t n, const emu_wave *w) {
  int len = 0;
  const emu_grid *L = w->wg->l;
  for (unsigned b = 0; b < EMU_NBARRIERS; b++)
    if (w->bar_wait[b]) {
      char where[512];
      emu_where(where, sizeof where, L, w->bar_inst[b]);
      len += snprintf(buf + len, n > (size_t)len ? n - len : 0, "%s lanes 0x%llx wait at barrier %u (%s)",
                      len ? ";" : "", (unsigned long long)w->bar_wait[b], b, where);
    }
  if (w->depth) {
    const emu_frame *f = &w->frames[w->depth - 1];
    emu_mask sw = f->syncwait;
    while (sw) {
      unsigned l0 = (unsigned)__builtin_ctzll(sw);
      uint32_t pc = f->lane_pc[l0];
      emu_mask g = 0;
      EMU_EACH(sw, l, if (f->lane_pc[l] == pc) g |= 1ull << l);
      sw &= ~g;
      char where[512];
      emu_where(where, sizeof where, L, &f->fn->code[pc]);
      len += snprintf(buf + len, n > (size_t)len ? n - len : 0,
                      "%s lanes 0x%llx wait at a warp-synchronous %s for the rest of the member mask",
                      len ? ";" : "", (unsigned long long)g, where);
    }
  }
  return len;
}

/* ---- faults -------------------------------------------------------------------- */
int emu_where(char *buf, size_t n, const emu_grid *l, const emu_inst *in) {
  const char *src = l->mod->ir->source_name ? l->mod->ir->source_name : "<ir>";
  const char *op = "?";
  if (in && in->ir) {
    op = in->ir->op == ir_op_opaque && in->ir->opaque ? in->ir->opaque : ir_op_infos[in->ir->op].ptx;
    if (!*op) op = ir_op_infos[in->ir->op].name;
  }
  return snprintf(buf, n, "%s:%u: in kernel '%s' (%s)", src, in ? in->line : 0, l->kernel->ir->name, op);
}

void emu_fault(emu_exec *x, const emu_inst *in, int lane, emu_status st, const char *fmt, ...) {
  x->fault = true;
  emu_grid *L = x->l;
  pthread_mutex_lock(&L->lock);
  if (L->status == EMU_OK) {
    char what[1024], where[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    emu_where(where, sizeof where, L, in);
    if (lane >= 0) {
      unsigned l = (unsigned)lane;
      snprintf(L->msg, sizeof L->msg, "%s, block (%u,%u,%u) thread (%u,%u,%u) lane %u: %s", where,
               x->wg->ctaid[0], x->wg->ctaid[1], x->wg->ctaid[2], x->w->tid[0][l], x->w->tid[1][l],
               x->w->tid[2][l], (x->w->first_thread + l) & 31, what);
    } else {
      snprintf(L->msg, sizeof L->msg, "%s, block (%u,%u,%u): %s", where, x->wg->ctaid[0], x->wg->ctaid[1],
               x->wg->ctaid[2], what);
    }
    L->status = st;
  }
  pthread_mutex_unlock(&L->lock);
  atomic_store(&L->abort, true);
}

/* ---- calls ----------------------------------------------------------------------- */
static uint64_t read_bytes_value(const uint8_t *p, uint32_t n) {
  uint64_t v = 0;
  memcpy(&v, p, n < 8 ? n : 8);
  return v;
}

/* Copies a call's arguments from the caller frame into the callee frame. */
static void pass_args(emu_exec *x, emu_frame *cf, emu_frame *nf, const emu_call *c, emu_mask m) {
  const emu_func *callee = nf->fn;
  uint32_t n = c->narg < callee->nparams ? c->narg : callee->nparams;
  for (uint32_t k = 0; k < n; k++) {
    const emu_fparam *p = &callee->params[k];
    uint32_t size = c->arg_is_local[k] ? c->arg_size[k] : p->size;
    if (p->size && size > p->size) size = p->size;
    EMU_EACH(m, l, {
      uint8_t *lm = emu_lane_local(x, l);
      uint64_t v = 0;
      uint8_t buf[256];
      const uint8_t *src;
      if (c->arg_is_local[k]) {
        src = lm + cf->local_base + c->arg_local[k];
      } else {
        x->regs = cf->regs;
        v = EMU_U64(x, c->arg_slot[k])[l];
        memcpy(buf, &v, 8);
        src = buf;
        if (size > 8) size = 8;
      }
      if (p->is_reg) {
        ((uint64_t *)(nf->regs + p->slot))[l] = read_bytes_value(src, size) & emu_type_mask(size * 8);
      } else {
        memmove(lm + nf->local_base + p->local, src, size);
      }
    });
  }
  x->regs = nf->regs;
}

/* Copies the callee's return values into the caller for the lanes of m. */
static void pass_rets(emu_exec *x, emu_frame *cf, emu_frame *nf, const emu_call *c, emu_mask m) {
  const emu_func *callee = nf->fn;
  uint32_t n = c->nret < callee->nrets ? c->nret : callee->nrets;
  for (uint32_t k = 0; k < n; k++) {
    const emu_fparam *p = &callee->rets[k];
    uint32_t size = c->ret_is_local[k] ? c->ret_size[k] : 8;
    if (p->size && size > p->size) size = p->size;
    EMU_EACH(m, l, {
      uint8_t *lm = emu_lane_local(x, l);
      uint8_t buf[16] = {0};
      const uint8_t *src;
      if (p->is_reg) {
        uint64_t v = ((uint64_t *)(nf->regs + p->slot))[l];
        memcpy(buf, &v, 8);
        src = buf;
      } else {
        src = lm + nf->local_base + p->local;
      }
      if (c->ret_is_local[k]) {
        memmove(lm + cf->local_base + c->ret_local[k], src, size);
      } else if (c->ret_slot[k] != EMU_OPND_NONE) {
        ((uint64_t *)(cf->regs + c->ret_slot[k]))[l] = read_bytes_value(src, size) & emu_type_mask(size * 8);
      }
    });
  }
}

static emu_func *indirect_target(emu_exec *x, uint64_t addr) {
  emu_module *em = x->l->mod;
  if ((addr & ~EMU_WIN_OFFMASK) != EMU_WIN_FUNC) return NULL;
  uint64_t off = addr & EMU_WIN_OFFMASK;
  if (off % 16 || off / 16 >= em->nfuncs) return NULL;
  return em->funcs[off / 16];
}

/* ---- the loop ---------------------------------------------------------------------- */
/* PTXWAVE_EMU_TRACE=1: one line per wave instruction on stderr. */
static void trace(emu_exec *x, emu_wave *w, emu_frame *f, const emu_inst *in) {
  char where[256];
  emu_where(where, sizeof where, x->l, in);
  fprintf(stderr, "trace: block %llu wave %u depth %u ip %u mask %016llx %s", (unsigned long long)w->wg->linear,
          w->index, w->depth, f->ip, (unsigned long long)f->cur, where);
  unsigned l = (unsigned)__builtin_ctzll(f->cur ? f->cur : 1);
  if (in->kind != EMU_K_CALL)
    for (unsigned k = 0; k < in->nsrc && k < EMU_MAXOPND; k++) {
      if (in->src[k] == EMU_OPND_NONE) continue;
      if (in->stype[k] == ir_type_pred) fprintf(stderr, " p%llx", (unsigned long long)EMU_PRED(x, in->src[k]));
      else fprintf(stderr, " 0x%llx", (unsigned long long)EMU_U64(x, in->src[k])[l]);
    }
  fputc('\n', stderr);
}

#define RELOAD() \
  do { \
    f = &w->frames[w->depth - 1]; \
    code = f->fn->code; \
    x->regs = f->regs; \
    x->consts = f->fn->consts; \
    x->f = f; \
  } while (0)

/* After lanes stopped (branch, exit, ret, block): picks what runs next in
 * the top frame, popping frames whose lanes have all returned.  Returns
 * false when the wave cannot run (done or blocked). */
/* Lanes waiting at a .sync warp op whose member mask's other lanes have
 * since exited (or returned from this frame) can go on: PTX ISA 9.1,
 * vote.sync (and shfl.sync, match.sync ...): "wait until all non-exited
 * threads corresponding to membermask have executed" it.  A lane of the
 * mask that branched past the op and then exits releases the others
 * (`if (lane < 16) v = __ballot_sync(~0u, p);` with lanes 16..31 leaving
 * the kernel), as on the hardware; one that stays alive elsewhere keeps
 * them waiting, which the launch reports as a deadlock.  The same
 * readiness rule as EMU_K_SYNC, so a released lane runs the op. */
static bool release_syncwait(emu_exec *x, emu_frame *f) {
  emu_mask sw = f->syncwait & f->blocked, alive = f->live & x->w->exists;
  bool any = false;
  while (sw) {
    uint32_t pc = f->lane_pc[__builtin_ctzll(sw)];
    emu_mask g = 0;
    EMU_EACH(sw, l, if (f->lane_pc[l] == pc) g |= 1ull << l);
    sw &= ~g;
    const emu_inst *in = &f->fn->code[pc];
    const uint64_t *mm = in->sub == EMU_SYNC_WHOLE_WARP ? NULL : EMU_U64(x, in->src[in->sub]);
    emu_mask here = 0, ready = 0;
    EMU_EACH(f->syncwait, l, if (f->lane_pc[l] == pc) here |= 1ull << l);
    EMU_EACH(g, l, {
      emu_mask need = ((emu_mask)(mm ? (uint32_t)mm[l] : 0xffffffffu) << (l & 32)) & alive;
      if (!(need & ~here)) ready |= 1ull << l;
    });
    if (ready) {
      f->blocked &= ~ready;
      any = true;
    }
  }
  return any;
}

static bool reschedule(emu_exec *x, emu_wave *w) {
  for (;;) {
    emu_frame *f = &w->frames[w->depth - 1];
    if (select_lanes(f)) return true;
    if (f->syncwait && release_syncwait(x, f) && select_lanes(f)) return true;
    if (f->live) {
      w->state = EMU_W_BLOCKED;
      return false;
    }
    if (w->depth == 1) {
      w->state = EMU_W_DONE;
      return false;
    }
    /* the callee is finished: return to the caller */
    emu_frame *cf = &w->frames[w->depth - 2];
    const emu_inst *call = &cf->fn->code[cf->call_ip];
    emu_mask ret = f->returned & ~w->exited;
    x->regs = cf->regs;
    x->consts = cf->fn->consts;
    if (ret) pass_rets(x, cf, f, call->aux, ret);
    cf->incall = 0;
    w->depth--;
  }
}

/* Runs wave w until it finishes, blocks at a barrier or faults.
 * Long: the interpreter's loop, one case per kind of emu_inst (ALU, the
 * branches with their reconvergence, calls, barriers, syncs); it is the
 * emulator's hot loop, whose frame, code and mask stay in locals across
 * cases (docs/emulator.md). */
emu_run_result emu_run_wave(emu_wave *w, emu_exec *x) {
  emu_wg *wg = w->wg;
  emu_grid *L = wg->l;
  x->w = w;
  x->wg = wg;
  x->l = L;
  x->full = w->exists;
  x->fault = false;
  if (w->state == EMU_W_DONE) return EMU_RUN_DONE;
  emu_frame *f;
  const emu_inst *code;
  RELOAD();
  if (!f->cur && !reschedule(x, w)) return w->state == EMU_W_DONE ? EMU_RUN_DONE : EMU_RUN_BLOCKED;
  RELOAD();
  w->state = EMU_W_RUN;
  uint32_t last_stores = x->stores;
  uint64_t clock0 = w->clock, nlanes = 0;
  emu_run_result result;

  for (;;) {
    const emu_inst *in = &code[f->ip];
    emu_mask m = f->cur;
    if (__builtin_expect(x->trace, 0)) trace(x, w, f, in);
    w->clock++;
    nlanes += m == x->all ? x->nlanes : (uint64_t)__builtin_popcountll(m);
    switch ((emu_kind)in->kind) {
    case EMU_K_ALU:
      if (in->guard != EMU_OPND_NONE) {
        emu_mask g = guard_mask(x, in, m);
        if (g != m && in->ndst) keep_copies(x, in, m & ~g);
        m = g;
        if (!m) {
          f->ip++;
          continue;
        }
      }
      in->fn(x, in, m);
      if (__builtin_expect(x->fault, 0)) goto fault;
      f->ip++;
      continue;

    case EMU_K_BR:
    case EMU_K_CBR:
    case EMU_K_BRX: {
      emu_mask tm[EMU_MAXOPND];
      uint32_t ngroups = 0, gi[EMU_MAXOPND];
      const emu_edge *edges = in->edges;
      if (in->kind == EMU_K_BR) {
        edge_copies(x, &edges[0], m);
        tm[0] = m;
        gi[0] = 0;
        ngroups = 1;
      } else if (in->kind == EMU_K_CBR) {
        emu_mask c = EMU_PRED(x, in->src[0]);
        emu_mask t = m & c, e = m & ~c;
        /* copies first for both edges: a lane takes exactly one */
        if (t) {
          edge_copies(x, &edges[0], t);
          tm[ngroups] = t;
          gi[ngroups++] = 0;
        }
        if (e) {
          edge_copies(x, &edges[1], e);
          tm[ngroups] = e;
          gi[ngroups++] = 1;
        }
      } else {
        const uint64_t *idx = EMU_U64(x, in->src[0]);
        emu_mask left = m;
        EMU_EACH(m, l, {
          if (idx[l] >= in->nedges) {
            emu_fault(x, in, (int)l, EMU_ERR_TRAP, "brx.idx index %llu out of range (%u targets)",
                      (unsigned long long)idx[l], in->nedges);
            goto fault;
          }
        });
        /* group lanes by target, in index order */
        while (left) {
          unsigned l0 = (unsigned)__builtin_ctzll(left);
          uint64_t t0 = idx[l0];
          emu_mask g = 0;
          EMU_EACH(left, l, if (idx[l] == t0) g |= 1ull << l);
          left &= ~g;
          edge_copies(x, &edges[t0], g);
          if (ngroups < EMU_MAXOPND) {
            tm[ngroups] = g;
            gi[ngroups++] = (uint32_t)t0;
          } else {
            set_pc(f, g, edges[t0].target);
            f->cur &= ~g;
          }
        }
      }
      uint32_t from = f->ip;
      bool others = (runnable(f) & ~m) != 0 || ngroups > 1;
      if (!others && ngroups == 1) {
        uint32_t to = edges[gi[0]].target;
        f->ip = to;
        if (to <= from) {
          if (__builtin_expect(L->max_inst && w->clock > L->max_inst, 0)) goto watchdog;
          /* a backward branch: spin detection for forward progress */
          if (x->stores != last_stores) {
            last_stores = x->stores;
            w->spins = 0;
          } else if (++w->spins >= L->spin_limit) {
            w->spins = 0;
            result = EMU_RUN_YIELD;
            goto out;
          }
          if (__builtin_expect(atomic_load_explicit(&L->abort, memory_order_relaxed), 0)) {
            result = EMU_RUN_FAULT;
            goto out;
          }
        }
        continue;
      }
      bool back = false;
      for (uint32_t g = 0; g < ngroups; g++) {
        set_pc(f, tm[g], edges[gi[g]].target);
        back |= edges[gi[g]].target <= from;
      }
      f->cur = 0;
      if (back && (runnable(f) & ~m)) {
        if (++f->backjumps >= EMU_INTRA_SPIN) {
          /* lanes looping while others of the warp wait: let the others run */
          f->backjumps = 0;
          select_others(f, m);
          RELOAD();
          continue;
        }
      }
      if (back) {
        if (__builtin_expect(L->max_inst && w->clock > L->max_inst, 0)) goto watchdog;
        if (x->stores != last_stores) {
          last_stores = x->stores;
          w->spins = 0;
        } else if (++w->spins >= L->spin_limit) {
          w->spins = 0;
          select_lanes(f);
          result = EMU_RUN_YIELD;
          goto out;
        }
      }
      select_lanes(f);
      continue;
    }

    case EMU_K_EXIT:
      lanes_exit(w, m);
      emu_check_barriers(wg);
      if (!reschedule(x, w)) {
        result = w->state == EMU_W_DONE ? EMU_RUN_DONE : EMU_RUN_BLOCKED;
        goto out;
      }
      RELOAD();
      continue;

    case EMU_K_RET:
      if (w->depth == 1) {
        lanes_exit(w, m);
        emu_check_barriers(wg);
      } else {
        /* register return values, named by ret's operands */
        for (unsigned k = 0; k < in->nsrc && k < f->fn->nrets; k++)
          if (f->fn->rets[k].is_reg) {
            ir_type t = (ir_type)in->stype[k];
            copy_slot(x, t == ir_type_pred ? EMU_CLS_PRED : ir_type_bits(t) > 64 ? EMU_CLS_WIDE : EMU_CLS_LANE,
                      f->fn->rets[k].slot, in->src[k], m);
          }
        f->returned |= m;
        f->live &= ~m;
        f->cur = 0;
      }
      if (!reschedule(x, w)) {
        result = w->state == EMU_W_DONE ? EMU_RUN_DONE : EMU_RUN_BLOCKED;
        goto out;
      }
      RELOAD();
      continue;

    case EMU_K_TRAP:
      emu_fault(x, in, __builtin_ctzll(m), EMU_ERR_TRAP,
                in->op == ir_op_trap ? "trap executed" : "reached unreachable code");
      goto fault;

    case EMU_K_UNSUPPORTED:
      emu_fault(x, in, __builtin_ctzll(m), EMU_ERR_UNSUPPORTED, "%s",
                f->fn->error ? f->fn->error : "unsupported instruction");
      goto fault;

    case EMU_K_CALL: {
      const emu_call *c = in->aux;
      if (in->guard != EMU_OPND_NONE) {
        emu_mask g = guard_mask(x, in, m);
        if (g != m) {
          set_pc(f, m & ~g, f->ip + 1);
          f->cur = g;
          m = g;
        }
        if (!m) {
          f->cur = 0;
          select_lanes(f);
          continue;
        }
      }
      emu_func *callee = c->callee;
      if (!callee) {
        /* indirect: the lanes with the first lane's target call now; the
         * others stay at the call and call theirs next */
        const uint64_t *fa = EMU_U64(x, in->src[0]);
        unsigned l0 = (unsigned)__builtin_ctzll(m);
        callee = indirect_target(x, fa[l0]);
        if (!callee) {
          emu_fault(x, in, (int)l0, EMU_ERR_ILLEGAL_ADDRESS, "indirect call to 0x%llx, which is not a function",
                    (unsigned long long)fa[l0]);
          goto fault;
        }
        emu_mask same = 0;
        EMU_EACH(m, l, if (fa[l] == fa[l0]) same |= 1ull << l);
        if (same != m) {
          set_pc(f, m & ~same, f->ip);
          m = same;
          f->cur = m;
        }
        if (callee->error && !callee->builtin) {
          emu_fault(x, in, (int)l0, EMU_ERR_UNSUPPORTED, "%s", callee->error);
          goto fault;
        }
      }
      if (callee->builtin) {
        emu_builtin_call(x, in, c, callee->builtin, m);
        if (x->fault) goto fault;
        if (f->cur != m || (runnable(f) & ~f->cur)) {
          set_pc(f, m, f->ip + 1);
          f->cur = 0;
          select_lanes(f);
        } else {
          f->ip++;
        }
        continue;
      }
      if (w->depth >= EMU_MAX_DEPTH) {
        emu_fault(x, in, __builtin_ctzll(m), EMU_ERR_LAUNCH, "call depth exceeds %d frames (unbounded recursion?)",
                  EMU_MAX_DEPTH);
        goto fault;
      }
      /* above every calling lane's dynamic stack (alloca) */
      uint32_t base = f->local_base + f->fn->frame_local;
      EMU_EACH(m, l, if (f->sp[l] > base) base = f->sp[l]);
      base = (base + 15) & ~15u;
      if ((uint64_t)base + callee->frame_local > L->stack_size) {
        emu_fault(x, in, __builtin_ctzll(m), EMU_ERR_LAUNCH,
                  "stack overflow: the call to '%s' needs %u bytes of local memory above %u, the stack has %u",
                  callee->ir->name, callee->frame_local, base, L->stack_size);
        goto fault;
      }
      if (base + callee->frame_local > wg->local_hwm) wg->local_hwm = base + callee->frame_local;
      uint32_t caller_depth = w->depth - 1;
      if (!frame_alloc(w, w->depth, callee)) {
        emu_fault(x, in, __builtin_ctzll(m), EMU_ERR_OUT_OF_MEMORY, "out of memory for a call frame");
        goto fault;
      }
      emu_frame *cf = &w->frames[caller_depth];   /* frames may have moved */
      emu_frame *nf = &w->frames[caller_depth + 1];
      set_pc(cf, m, cf->ip + 1);
      cf->call_ip = cf->ip;
      cf->incall = m;
      cf->cur = 0;
      nf->live = nf->cur = m;
      nf->local_base = base;
      EMU_EACH(m, l, nf->sp[l] = base + callee->frame_local);
      nf->ip = 0;
      EMU_EACH(m, l, nf->lane_pc[l] = 0);
      w->depth++;
      frame_symbols(L, nf);
      pass_args(x, cf, nf, c, m);
      RELOAD();
      continue;
    }

    case EMU_K_SYNC: {
      if (in->guard != EMU_OPND_NONE) {
        emu_mask g = guard_mask(x, in, m);
        if (g != m) {
          if (in->ndst) keep_copies(x, in, m & ~g);
          set_pc(f, m & ~g, f->ip + 1);
          f->cur = g;
          m = g;
        }
        if (!m) {
          f->cur = 0;
          select_lanes(f);
          continue;
        }
      }
      /* a lane goes on once every non-exited lane of its member mask has
       * arrived at this instruction; the others wait here */
      const uint64_t *mm = in->sub == EMU_SYNC_WHOLE_WARP ? NULL : EMU_U64(x, in->src[in->sub]);
      emu_mask here = 0;
      EMU_EACH(f->syncwait, l, if (f->lane_pc[l] == f->ip) here |= 1ull << l);
      emu_mask arrived = m | here, ready = 0, alive = f->live & w->exists;
      EMU_EACH(arrived, l, {
        emu_mask need = ((emu_mask)(mm ? (uint32_t)mm[l] : 0xffffffffu) << (l & 32)) & alive;
        if (!(need & ~arrived)) ready |= 1ull << l;
      });
      emu_mask wait = arrived & ~ready;
      f->syncwait = (f->syncwait & ~here) | wait;
      f->blocked = (f->blocked & ~here) | wait;
      set_pc(f, wait, f->ip);
      if (!ready) {
        f->cur = 0;
        if (!reschedule(x, w)) {
          result = EMU_RUN_BLOCKED;
          goto out;
        }
        RELOAD();
        continue;
      }
      f->cur = ready;
      in->fn(x, in, ready);
      if (x->fault) goto fault;
      f->ip++;
      continue;
    }

    case EMU_K_BAR: {
      if (in->guard != EMU_OPND_NONE) {
        emu_mask g = guard_mask(x, in, m);
        if (g != m) {
          set_pc(f, m & ~g, f->ip + 1);
          f->cur = g;
          m = g;
        }
        if (!m) {
          f->cur = 0;
          select_lanes(f);
          continue;
        }
      }
      unsigned l0 = (unsigned)__builtin_ctzll(m);
      bool red = in->op == ir_op_bar_red;
      uint64_t id = in->nsrc > 0 ? EMU_U64(x, in->src[0])[l0] : 0;
      uint64_t count = 0;
      if ((!red && in->nsrc >= 2) || (red && in->nsrc >= 3)) count = EMU_U64(x, in->src[1])[l0];
      if (id >= EMU_NBARRIERS) {
        emu_fault(x, in, (int)l0, EMU_ERR_TRAP, "barrier id %llu out of range 0..15", (unsigned long long)id);
        goto fault;
      }
      emu_bar *bar = &wg->bars[id];
      if (count) bar->expected = (uint32_t)((count + 31) / 32);
      if (red) {
        emu_mask p = EMU_PRED(x, in->src[in->nsrc - 1]) & m;
        if (!bar->red) {
          bar->red = in->mods.atomop ? in->mods.atomop : IR_ATOM_POPC;
          bar->red_and = true;
          bar->red_or = false;
        }
        bar->popc += (uint32_t)__builtin_popcountll(p);
        if (p != m) bar->red_and = false;
        if (p) bar->red_or = true;
      }
      w->bar_arrived[id] |= m;
      bool arrive = !red && in->mods.barmode == IR_BAR_ARRIVE;
      if (!arrive) {
        w->bar_wait[id] |= m;
        w->bar_depth[id] = w->depth - 1;
        w->bar_inst[id] = in;
        f->blocked |= m;
      }
      set_pc(f, m, f->ip + 1);
      f->cur = 0;
      count_warps(wg, w, (unsigned)id);
      uint32_t lw = UINT32_MAX;
      check_barrier(wg, (unsigned)id, &lw);
      if (!reschedule(x, w)) {
        result = w->state == EMU_W_DONE ? EMU_RUN_DONE : EMU_RUN_BLOCKED;
        goto out;
      }
      RELOAD();
      continue;
    }
    }
  }

watchdog:
  emu_fault(x, &code[f->ip], -1, EMU_ERR_LAUNCH, "a wave executed more than %llu instructions (watchdog)",
            (unsigned long long)L->max_inst);
fault:
  result = EMU_RUN_FAULT;
out:
  x->ninst += w->clock - clock0;
  x->nlanes_ops += nlanes;
  return result;
}
