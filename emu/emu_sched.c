/* emu/emu_sched.c: workgroups on host threads, and the launch.
 *
 * Workgroups (CUDA blocks) are numbered by linear index x + y*gx + z*gx*gy
 * and started in that order from one atomic counter by N host threads
 * (the "SMs": %smid is the host thread).  A host thread runs one workgroup
 * at a time; inside it the waves take turns (emu_run_wg): a wave runs until
 * it finishes, blocks at a barrier or warp-synchronous op, or spins.
 *
 * Forward progress (the guarantee CUB's decoupled look-back needs): a wave
 * that takes `spin_limit` backward branches without a store or atomic in
 * between is spinning; it yields to the other waves of its workgroup, and
 * when a whole round of the workgroup's waves only spun, the workgroup
 * yields its host thread: it is parked, and the thread resumes the oldest
 * parked workgroup (lowest linear index) or starts the next new one.
 * Every workgroup a spinning one can wait for has a lower linear index, so
 * it has been started, and it is running on some thread or parked; parked
 * ones are resumed oldest first, so it runs again.  A kernel that spins on
 * work no workgroup will ever do hangs, as it would on a GPU.  At most
 * EMU_MAX_RESIDENT workgroups are started and unfinished at once, except
 * in a cooperative launch, where every workgroup of the grid may be: there
 * grid.sync() makes the lowest-numbered workgroup wait for the highest.
 *
 * Deadlock: when no wave of a workgroup can run (all wait at barriers or
 * warp-synchronous ops) and none is released, the launch fails with the
 * place every wave waits at.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "emu_internal.h"

#define EMU_MAX_RESIDENT_PER_THREAD 16

/* ---- workgroups ----------------------------------------------------------------- */
static void wg_destroy(emu_wg *wg) {
  if (!wg) return;
  for (uint32_t i = 0; i < wg->nwaves; i++) {
    emu_wave *w = &wg->waves[i];
    for (uint32_t d = 0; d < w->frames_cap; d++) free(w->frames[d].regs);
    free(w->frames);
  }
  free(wg->waves);
  free(wg->shared);
  if (wg->local) munmap(wg->local, wg->local_bytes);
  free(wg);
}

static emu_wg *wg_alloc(emu_grid *L) {
  emu_wg *wg = calloc(1, sizeof *wg);
  if (!wg) return NULL;
  wg->l = L;
  wg->nwaves = L->nwaves;
  wg->waves = calloc(L->nwaves, sizeof *wg->waves);
  wg->shared = calloc(1, L->shared_total ? L->shared_total : 16);
  wg->local_bytes = (size_t)L->nthreads * L->stack_size;
  wg->local = mmap(NULL, wg->local_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (wg->local == MAP_FAILED) wg->local = NULL;
  if (!wg->waves || !wg->shared || !wg->local) {
    wg_destroy(wg);
    return NULL;
  }
  pthread_mutex_lock(&L->lock);
  wg->next_all = L->all_wgs;
  L->all_wgs = wg;
  pthread_mutex_unlock(&L->lock);
  return wg;
}

/* A workgroup for linear index idx: fresh memory state, waves at entry. */
static emu_wg *wg_start(emu_grid *L, uint64_t idx) {
  emu_wg *wg = NULL;
  pthread_mutex_lock(&L->lock);
  if (L->free_wgs) {
    wg = L->free_wgs;
    L->free_wgs = wg->next_free;
  }
  L->nresident++;
  pthread_mutex_unlock(&L->lock);
  if (wg) {
    /* reuse: shared memory and the used part of local memory start zeroed,
     * so no workgroup sees another's data (same inputs, same outputs) */
    memset(wg->shared, 0, L->shared_total ? L->shared_total : 16);
    if (wg->local_hwm)
      for (uint32_t t = 0; t < L->nthreads; t++) memset(wg->local + (size_t)t * L->stack_size, 0, wg->local_hwm);
  } else if (!(wg = wg_alloc(L))) {
    emu_launch_fail(L, EMU_ERR_OUT_OF_MEMORY, "out of memory for a workgroup of %u threads", L->nthreads);
    return NULL;
  }
  wg->local_hwm = L->kernel->frame_local;
  wg->linear = idx;
  wg->ctaid[0] = (uint32_t)(idx % L->grid.x);
  wg->ctaid[1] = (uint32_t)((idx / L->grid.x) % L->grid.y);
  wg->ctaid[2] = (uint32_t)(idx / ((uint64_t)L->grid.x * L->grid.y));
  wg->next_wave = 0;
  memset(wg->bars, 0, sizeof wg->bars);
  for (unsigned b = 0; b < EMU_NBARRIERS; b++) wg->bars[b].red_and = true;
  uint32_t bx = L->block.x, by = L->block.y;
  for (uint32_t i = 0; i < wg->nwaves; i++) {
    emu_wave *w = &wg->waves[i];
    w->wg = wg;
    w->index = i;
    w->first_thread = i * L->wave;
    w->exists = 0;
    for (unsigned l = 0; l < L->wave; l++) {
      uint32_t t = w->first_thread + l;
      if (t < L->nthreads) {
        w->exists |= 1ull << l;
        w->tid[0][l] = t % bx;
        w->tid[1][l] = (t / bx) % by;
        w->tid[2][l] = t / (bx * by);
      } else {
        w->tid[0][l] = w->tid[1][l] = w->tid[2][l] = 0;
      }
    }
    emu_wave_start(w, L->kernel);
    if (w->state == EMU_W_DONE && w->exists) {
      emu_launch_fail(L, EMU_ERR_OUT_OF_MEMORY, "out of memory for the registers of a wave");
      return NULL;
    }
  }
  return wg;
}

static void wg_finish(emu_grid *L, emu_wg *wg) {
  pthread_mutex_lock(&L->lock);
  wg->next_free = L->free_wgs;
  L->free_wgs = wg;
  L->nresident--;
  pthread_mutex_unlock(&L->lock);
}

static void report_deadlock(emu_grid *L, emu_wg *wg) {
  char buf[1800];
  int n = snprintf(buf, sizeof buf, "deadlock in block (%u,%u,%u): every wave waits and nothing can release it:",
                   wg->ctaid[0], wg->ctaid[1], wg->ctaid[2]);
  for (uint32_t i = 0; i < wg->nwaves && n < (int)sizeof buf - 64; i++) {
    emu_wave *w = &wg->waves[i];
    if (w->state != EMU_W_BLOCKED) continue;
    n += snprintf(buf + n, sizeof buf - (size_t)n, " wave %u (threads %u..%u):", i, w->first_thread,
                  w->first_thread + L->wave - 1);
    if (n < (int)sizeof buf) n += emu_describe_wait(buf + n, sizeof buf - (size_t)n, w);
    if (n < (int)sizeof buf - 1) {
      buf[n++] = '.';
      buf[n] = 0;
    }
  }
  emu_launch_fail(L, EMU_ERR_DEADLOCK, "%s", buf);
}

/* Runs the waves of a workgroup in turns until it finishes, faults, or
 * only spins (then EMU_RUN_YIELD: park it). */
static emu_run_result run_wg(emu_wg *wg, emu_exec *x) {
  emu_grid *L = wg->l;
  for (;;) {
    bool any_ran = false, progress = false, all_done = true;
    for (uint32_t k = 0; k < wg->nwaves; k++) {
      uint32_t i = (wg->next_wave + k) % wg->nwaves;
      emu_wave *w = &wg->waves[i];
      if (w->state == EMU_W_DONE) continue;
      all_done = false;
      if (w->state == EMU_W_BLOCKED) continue;
      any_ran = true;
      uint32_t stores = x->stores;
      emu_run_result r = emu_run_wave(w, x);
      if (r == EMU_RUN_FAULT) return EMU_RUN_FAULT;
      if (r != EMU_RUN_YIELD || x->stores != stores) progress = true;
      if (atomic_load_explicit(&L->abort, memory_order_relaxed)) return EMU_RUN_FAULT;
    }
    wg->next_wave = (wg->next_wave + 1) % wg->nwaves;
    if (all_done) {
      /* every wave ran to the end: a count-barrier nobody completes is not an error */
      return EMU_RUN_DONE;
    }
    if (!any_ran) {
      /* a barrier may have been completed by the last exits */
      emu_check_barriers(wg);
      bool runnable = false;
      for (uint32_t i = 0; i < wg->nwaves; i++) runnable |= wg->waves[i].state == EMU_W_RUN;
      if (runnable) continue;
      report_deadlock(L, wg);
      return EMU_RUN_FAULT;
    }
    if (!progress) return EMU_RUN_YIELD;
  }
}

/* ---- host threads ----------------------------------------------------------------- */
typedef struct worker {
  emu_grid *L;
  unsigned smid;
  pthread_t th;
} worker;

static emu_wg *take_parked(emu_grid *L) {
  if (L->cooperative) {
    /* grid.sync(): the lowest-numbered workgroups spin there first, so
     * oldest-first would resume only them; round robin (the one parked
     * longest) lets every workgroup reach the barrier */
    if (!L->nparked) return NULL;
    emu_wg *first = L->parked[0];
    memmove(L->parked, L->parked + 1, --L->nparked * sizeof *L->parked);
    return first;
  }
  emu_wg *best = NULL;
  uint32_t bi = 0;
  for (uint32_t i = 0; i < L->nparked; i++)
    if (!best || L->parked[i]->linear < best->linear) {
      best = L->parked[i];
      bi = i;
    }
  if (best) L->parked[bi] = L->parked[--L->nparked];
  return best;
}

static bool park(emu_grid *L, emu_wg *wg) {
  if (L->nparked == L->parked_cap) {
    uint32_t nc = L->parked_cap ? L->parked_cap * 2 : 16;
    emu_wg **np = realloc(L->parked, nc * sizeof *np);
    if (!np) return false;
    L->parked = np;
    L->parked_cap = nc;
  }
  L->parked[L->nparked++] = wg;
  return true;
}

static emu_wg *start_new(emu_grid *L) {
  uint64_t idx = atomic_fetch_add(&L->next_wg, 1);
  if (idx >= L->nwg) return NULL;
  return wg_start(L, idx);
}

static void *worker_main(void *p) {
  worker *wk = p;
  emu_grid *L = wk->L;
  emu_exec x = {0};
  x.l = L;
  x.nlanes = L->wave;
  x.all = L->wave >= 64 ? ~0ull : (1ull << L->wave) - 1;
  const char *tr = getenv("PTXWAVE_EMU_TRACE");
  x.trace = tr && *tr == '1';
  emu_wg *cur = NULL;
  uint32_t cap = EMU_MAX_RESIDENT_PER_THREAD * L->nthreads_host;
  /* a cooperative grid waits for all its workgroups at grid.sync(): every
   * one must be started (the caller bounded the grid by occupancy) */
  if (L->cooperative && L->nwg > cap) cap = (uint32_t)L->nwg;
  while (!atomic_load_explicit(&L->abort, memory_order_relaxed)) {
    if (!cur) {
      pthread_mutex_lock(&L->lock);
      cur = take_parked(L);
      pthread_mutex_unlock(&L->lock);
      if (!cur) cur = start_new(L);
      if (!cur) break;
    }
    cur->smid = wk->smid;
    emu_run_result r = run_wg(cur, &x);
    if (r == EMU_RUN_DONE) {
      wg_finish(L, cur);
      cur = NULL;
      continue;
    }
    if (r == EMU_RUN_FAULT) break;
    /* spinning: run something else, oldest first */
    atomic_fetch_add(&L->stat_yields, 1);
    emu_wg *other = NULL;
    /* a cooperative grid's spinner waits for workgroups not started yet
     * (grid.sync() waits for all): start those before resuming others */
    if (L->cooperative && atomic_load(&L->next_wg) < L->nwg) other = start_new(L);
    pthread_mutex_lock(&L->lock);
    if (!other) other = take_parked(L);
    bool room = L->nresident < cap;
    pthread_mutex_unlock(&L->lock);
    if (!other && room) other = start_new(L);
    if (other) {
      pthread_mutex_lock(&L->lock);
      bool ok = park(L, cur);
      pthread_mutex_unlock(&L->lock);
      if (!ok) {
        emu_launch_fail(L, EMU_ERR_OUT_OF_MEMORY, "out of memory parking a workgroup");
        break;
      }
      cur = other;
    }
  }
  free(x.scratch);
  atomic_fetch_add(&L->stat_inst, x.ninst);
  atomic_fetch_add(&L->stat_lanes, x.nlanes_ops);
  return NULL;
}

void emu_launch_fail(emu_grid *L, emu_status st, const char *fmt, ...) {
  pthread_mutex_lock(&L->lock);
  if (L->status == EMU_OK) {
    char what[1900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(L->msg, sizeof L->msg, "in kernel '%s': %s", L->kernel->ir->name, what);
    L->status = st;
  }
  pthread_mutex_unlock(&L->lock);
  atomic_store(&L->abort, true);
}

emu_status emu_run_launch(emu_grid *L) {
  unsigned nth = L->ctx->opt.threads;
  if (!nth) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    nth = n > 0 ? (unsigned)n : 1;
  }
  if (nth > L->nwg) nth = (unsigned)L->nwg;
  if (nth < 1) nth = 1;
  L->nthreads_host = nth;
  worker *ws = calloc(nth, sizeof *ws);
  if (!ws) return EMU_ERR_OUT_OF_MEMORY;
  for (unsigned i = 0; i < nth; i++) {
    ws[i].L = L;
    ws[i].smid = i;
  }
  unsigned started = 1;
  for (unsigned i = 1; i < nth; i++) {
    if (pthread_create(&ws[i].th, NULL, worker_main, &ws[i]) != 0) break;
    started++;
  }
  worker_main(&ws[0]);
  for (unsigned i = 1; i < started; i++) pthread_join(ws[i].th, NULL);
  free(ws);
  for (emu_wg *wg = L->all_wgs, *n; wg; wg = n) {
    n = wg->next_all;
    wg_destroy(wg);
  }
  L->all_wgs = NULL;
  free(L->parked);
  L->parked = NULL;
  return L->status;
}

/* ---- the launch API ------------------------------------------------------------------ */
static uint32_t align_up32(uint32_t v, uint32_t a) { return a ? (v + a - 1) / a * a : v; }

emu_status emu_launch_buffer(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                             uint32_t shared_bytes, const void *buffer, size_t buffer_size) {
  return emu_launch_buffer_opts(m, kernel, grid, block, shared_bytes, buffer, buffer_size, NULL);
}

static emu_status launch_at(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block, uint32_t shared_bytes,
                            const void *buffer, size_t buffer_size, const emu_launch_opts *opts, unsigned depth);

/* CUDA's limit on the nesting of device-side launches (CUDA Programming
 * Guide, "Nesting and Synchronization Depth": 24 levels). */
#define EMU_MAX_LAUNCH_DEPTH 24
/* The launch arena of a grid that can launch: bytes of parameter buffers
 * pending at once (CUDA's default pending launch count is 2048). */
#define EMU_CDP_ARENA (2048u * 64u)

static int child_order(const void *a, const void *b) {
  const emu_child *x = a, *y = b;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The children a finished grid launched, in launch order, each after the
 * one before has finished (a child's own children run before the next). */
static emu_status run_children(emu_grid *L) {
  if (!L->nlaunched) return EMU_OK;
  qsort(L->children, L->nchildren, sizeof *L->children, child_order);
  for (uint32_t i = 0; i < L->nchildren; i++) {
    const emu_child *ch = &L->children[i];
    if (!ch->order) continue;   /* a buffer never launched */
    if (L->depth + 1 >= EMU_MAX_LAUNCH_DEPTH) {
      emu_set_error(L->ctx, "in kernel '%s': device-side launch of '%s' nested deeper than %d levels",
                    L->kernel->ir->name, ch->k->ir->name, EMU_MAX_LAUNCH_DEPTH);
      return EMU_ERR_LAUNCH;
    }
    emu_status st = launch_at(L->mod, ch->k->ir->name, ch->grid, ch->block, ch->shared,
                              (const void *)(uintptr_t)ch->buf, ch->size, NULL, L->depth + 1);
    if (st != EMU_OK) return st;
  }
  return EMU_OK;
}

emu_status emu_launch_buffer_opts(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                                  uint32_t shared_bytes, const void *buffer, size_t buffer_size,
                                  const emu_launch_opts *opts) {
  return launch_at(m, kernel, grid, block, shared_bytes, buffer, buffer_size, opts, 0);
}

/* The checks before anything runs; *out the kernel. */
static emu_status launch_check(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                               uint32_t shared_bytes, size_t buffer_size, bool have_buffer, emu_func **out) {
  if (!m || !kernel) return EMU_ERR_INVALID_VALUE;
  emu_context *ctx = m->ctx;
  emu_func *k = emu_module_find_func(m, kernel);
  if (!k || !k->ir->is_kernel) {
    emu_set_error(ctx, "no kernel named '%s' in %s", kernel, m->ir->source_name ? m->ir->source_name : "the module");
    return EMU_ERR_NOT_FOUND;
  }
  if (k->closure_error) {
    emu_set_error(ctx, "kernel '%s' cannot run in the emulator: %s", kernel, k->closure_error);
    return EMU_ERR_UNSUPPORTED;
  }
  uint64_t nthreads = (uint64_t)block.x * block.y * block.z;
  uint64_t nwg = (uint64_t)grid.x * grid.y * grid.z;
  if (!nthreads || !nwg) {
    emu_set_error(ctx, "launch of '%s' with an empty grid or block", kernel);
    return EMU_ERR_INVALID_VALUE;
  }
  if (nthreads > 1024 || block.z > 64 || grid.y > 65535 || grid.z > 65535) {
    emu_set_error(ctx, "launch of '%s': block (%u,%u,%u) or grid (%u,%u,%u) exceeds CUDA's limits", kernel, block.x,
                  block.y, block.z, grid.x, grid.y, grid.z);
    return EMU_ERR_LAUNCH;
  }
  const ir_func *f = k->ir;
  if (f->reqntid[0] && (f->reqntid[0] != block.x || (f->reqntid[1] ? f->reqntid[1] : 1) != block.y ||
                        (f->reqntid[2] ? f->reqntid[2] : 1) != block.z)) {
    emu_set_error(ctx, "launch of '%s' with block (%u,%u,%u), but .reqntid is %u,%u,%u", kernel, block.x, block.y,
                  block.z, f->reqntid[0], f->reqntid[1], f->reqntid[2]);
    return EMU_ERR_LAUNCH;
  }
  if (f->maxntid[0]) {
    uint64_t mx = (uint64_t)f->maxntid[0] * (f->maxntid[1] ? f->maxntid[1] : 1) * (f->maxntid[2] ? f->maxntid[2] : 1);
    if (nthreads > mx) {
      emu_set_error(ctx, "launch of '%s' with %llu threads per block, but .maxntid allows %llu", kernel,
                    (unsigned long long)nthreads, (unsigned long long)mx);
      return EMU_ERR_LAUNCH;
    }
  }
  if (buffer_size < k->kparam_size || (k->kparam_size && !have_buffer)) {
    emu_set_error(ctx, "launch of '%s' with %zu bytes of parameters, the kernel takes %u", kernel, buffer_size,
                  k->kparam_size);
    return EMU_ERR_INVALID_VALUE;
  }
  uint64_t shared_total = (uint64_t)align_up32(k->shared_static, k->dyn_align) + shared_bytes;  /* no wrap */
  if (shared_total > 1024 * 1024) {
    emu_set_error(ctx, "launch of '%s' with %llu bytes of shared memory per block (at most 1 MiB)", kernel,
                  (unsigned long long)shared_total);
    return EMU_ERR_LAUNCH;
  }
  uint32_t stack = ctx->opt.stack_size ? ctx->opt.stack_size : 64 * 1024;
  if (k->frame_local > stack) {
    emu_set_error(ctx, "kernel '%s' needs %u bytes of local memory per thread, the stack size is %u", kernel,
                  k->frame_local, stack);
    return EMU_ERR_LAUNCH;
  }
  *out = k;
  return EMU_OK;
}

emu_status emu_launch_check(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block,
                            uint32_t shared_bytes, size_t buffer_size) {
  emu_func *k;
  return launch_check(m, kernel, grid, block, shared_bytes, buffer_size, true, &k);
}

static emu_status launch_at(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block, uint32_t shared_bytes,
                            const void *buffer, size_t buffer_size, const emu_launch_opts *opts, unsigned depth) {
  emu_func *k;
  emu_status cs = launch_check(m, kernel, grid, block, shared_bytes, buffer_size, buffer != NULL, &k);
  if (cs != EMU_OK) return cs;
  emu_context *ctx = m->ctx;
  uint64_t nthreads = (uint64_t)block.x * block.y * block.z;
  uint64_t nwg = (uint64_t)grid.x * grid.y * grid.z;
  emu_grid *L = calloc(1, sizeof *L);
  if (!L) return EMU_ERR_OUT_OF_MEMORY;
  L->ctx = ctx;
  L->mod = m;
  L->kernel = k;
  L->grid = grid;
  L->block = block;
  L->nthreads = (uint32_t)nthreads;
  L->wave = m->wave;
  L->nwaves = (uint32_t)((nthreads + m->wave - 1) / m->wave);
  L->nwg = nwg;
  uint8_t *params = malloc(k->kparam_size ? k->kparam_size : 1);
  if (!params) {
    free(L);
    return EMU_ERR_OUT_OF_MEMORY;
  }
  if (k->kparam_size) memcpy(params, buffer, k->kparam_size);
  L->params = params;
  L->params_size = k->kparam_size;
  L->shared_dyn = shared_bytes;
  L->dyn_off = align_up32(k->shared_static, k->dyn_align);
  uint64_t shared_total = (uint64_t)L->dyn_off + shared_bytes;   /* 64-bit: no wrap past 4 GiB */
  L->shared_total = shared_total > UINT32_MAX ? UINT32_MAX : (uint32_t)shared_total;
  L->stack_size = ctx->opt.stack_size ? ctx->opt.stack_size : 64 * 1024;
  L->spin_limit = ctx->opt.spin_limit ? ctx->opt.spin_limit : 4096;
  L->max_inst = ctx->opt.max_instructions;
  L->memcheck = ctx->opt.memcheck;
  L->gridid = atomic_fetch_add(&ctx->launches, 1) + 1;
  L->cooperative = opts && opts->cooperative;
  L->depth = depth;
  pthread_mutex_init(&L->lock, NULL);
  emu_status st = EMU_OK;
  if (L->cooperative) {
    /* the grid workspace: zeroed device memory (the allocation snapshot
     * below must include it); grid.sync() adds to the word at +4 */
    st = emu_malloc(ctx, 64, &L->grid_workspace);
    if (st == EMU_OK) st = emu_memset(ctx, L->grid_workspace, 0, 4, 16);
    if (st != EMU_OK) emu_set_error(ctx, "launch of '%s': no memory for the cooperative grid's workspace", kernel);
  }
  if (st == EMU_OK && m->device_launches) {
    /* before the allocation snapshot: device code writes the buffers */
    st = emu_malloc(ctx, EMU_CDP_ARENA, &L->cdp_arena);
    if (st == EMU_OK) L->cdp_arena_size = EMU_CDP_ARENA;
    else emu_set_error(ctx, "launch of '%s': no memory for device-side launches", kernel);
  }
  if (st == EMU_OK) {
    /* a snapshot of the allocation table: device code reads it without locks */
    pthread_mutex_lock(&ctx->lock);
    emu_alloc *snap = malloc((ctx->nallocs + 1) * sizeof *snap);
    if (snap && ctx->nallocs) memcpy(snap, ctx->allocs, ctx->nallocs * sizeof *snap);
    L->nallocs = ctx->nallocs;
    pthread_mutex_unlock(&ctx->lock);
    L->allocs = snap;
    if (!snap) st = EMU_ERR_OUT_OF_MEMORY;
  }
  if (st == EMU_OK) {
    st = emu_run_launch(L);
    if (st != EMU_OK) {
      emu_set_error(ctx, "%s", L->msg);
      if (opts && opts->msg && opts->msg_cap) snprintf(opts->msg, opts->msg_cap, "%s", L->msg);
    }
    pthread_mutex_lock(&ctx->lock);
    ctx->last.instructions = atomic_load(&L->stat_inst);
    ctx->last.lane_ops = atomic_load(&L->stat_lanes);
    ctx->last.workgroups = nwg;
    ctx->last.wg_yields = atomic_load(&L->stat_yields);
    pthread_mutex_unlock(&ctx->lock);
    if (st == EMU_OK) st = run_children(L);
  }
  free((void *)L->allocs);
  free(params);
  if (L->grid_workspace) emu_free(ctx, L->grid_workspace);
  if (L->cdp_arena) emu_free(ctx, L->cdp_arena);
  free(L->children);
  pthread_mutex_destroy(&L->lock);
  free(L);
  return st;
}

emu_status emu_launch(emu_module *m, const char *kernel, emu_dim3 grid, emu_dim3 block, uint32_t shared_bytes,
                      void **params) {
  if (!m || !kernel) return EMU_ERR_INVALID_VALUE;
  emu_func *k = emu_module_find_func(m, kernel);
  if (!k || !k->ir->is_kernel) {
    emu_set_error(m->ctx, "no kernel named '%s'", kernel);
    return EMU_ERR_NOT_FOUND;
  }
  /* A kernel that cannot run is refused by emu_launch_buffer before it
   * reads a parameter; its parameters may have no layout at all (one past
   * CUDA's limit leaves kparam_size 0), so nothing is packed for it. */
  if (k->closure_error) return emu_launch_buffer(m, kernel, grid, block, shared_bytes, NULL, 0);
  uint8_t *buf = calloc(1, k->kparam_size ? k->kparam_size : 1);
  if (!buf) return EMU_ERR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < k->ir->nparams; i++) {
    if (!params || !params[i]) {
      free(buf);
      emu_set_error(m->ctx, "launch of '%s': parameter %u is missing", kernel, i);
      return EMU_ERR_INVALID_VALUE;
    }
    memcpy(buf + k->kparams[i].offset, params[i], k->kparams[i].size);
  }
  emu_status st = emu_launch_buffer(m, kernel, grid, block, shared_bytes, buf, k->kparam_size);
  free(buf);
  return st;
}
