/* tests/lower/lower_diff.c: see lower_diff.h.
 *
 * One run of a variant (the unlowered module, or a lowered copy) starts
 * from the memory state saved before the first run: every allocation that
 * existed then, and the module's .global/.const variables (copied by name
 * into a lowered copy's own).  Its result is the bytes of those
 * allocations and variables afterwards, the device printf lines (sorted:
 * workgroups on several host threads print in any order) and the status.
 *
 * When a lowered run at wave W differs from the unlowered one, the
 * unlowered module is run again with the emulator's own wave-W execution
 * (two warps per wave, CUDA semantics per warp).  If that run equals the
 * lowered one, the kernel's result depends on the order in which waves of
 * W run (a race between blocks or warps, e.g. atomics whose return values
 * are stored), not on lowering: it is counted as schedule-dependent, not
 * as a failure.  Kernels that read clocks or timers are not comparable and
 * are skipped by the callers that know it (diff_ptx.c).
 */
#include "lower_diff.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu_internal.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "runtime/rt_printf.h"
#include "util/diag.h"
#include "util/pw_printf.h"

typedef struct snap {
  uint64_t base, size;
  uint8_t *bytes;
} snap;

typedef struct state {
  snap *mem;            /* allocations, as in `pre` */
  uint32_t n;
  uint8_t **vars;       /* per variable of the unlowered module, by index */
  char *out;            /* sorted printf lines */
  emu_status st;
  char msg[512];
  char printf_err[256]; /* the lowered run's printf buffer failed */
} state;

static bool is_module_var(const emu_module *m, uint64_t base) {
  for (uint32_t g = 0; m && g < m->ngvars; g++)
    if (m->gvars[g].host && (uint64_t)(uintptr_t)m->gvars[g].host == base) return true;
  return false;
}

/* The allocations of the context that are not module variables. */
static snap *take_allocs(emu_context *c, uint32_t *n) {
  snap *s = calloc(c->nallocs + 1, sizeof *s);
  uint32_t k = 0;
  for (uint32_t i = 0; i < c->nallocs; i++) {
    const emu_alloc *a = &c->allocs[i];
    if (a->freed) continue;
    bool var = false;
    for (emu_module *m = c->modules; m && !var; m = m->next) var = is_module_var(m, a->base);
    if (var) continue;
    s[k].base = a->base;
    s[k].size = a->size;
    s[k].bytes = malloc(a->size ? a->size : 1);
    memcpy(s[k].bytes, (void *)(uintptr_t)a->base, a->size);
    k++;
  }
  *n = k;
  return s;
}

static snap *reread(const snap *pre, uint32_t n) {
  snap *s = calloc(n + 1, sizeof *s);
  for (uint32_t i = 0; i < n; i++) {
    s[i] = pre[i];
    s[i].bytes = malloc(pre[i].size ? pre[i].size : 1);
    memcpy(s[i].bytes, (void *)(uintptr_t)pre[i].base, pre[i].size);
  }
  return s;
}

static void restore(const snap *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) memcpy((void *)(uintptr_t)s[i].base, s[i].bytes, s[i].size);
}

static void drop(snap *s, uint32_t n) {
  for (uint32_t i = 0; s && i < n; i++) free(s[i].bytes);
  free(s);
}

/* Host storage of variable g of m (the unlowered module) in module v. */
static uint8_t *var_in(emu_module *m, uint32_t g, emu_module *v, size_t *bytes) {
  if (!m->gvars[g].host) return NULL;
  if (v == m) {
    *bytes = m->gvars[g].size;
    return m->gvars[g].host;
  }
  uint64_t d;
  size_t b;
  if (emu_module_global(v, m->gvars[g].ir->name, &d, &b) != EMU_OK || b != m->gvars[g].size) return NULL;
  *bytes = b;
  return (uint8_t *)(uintptr_t)d;
}

/* ---- device printf of lowered modules ------------------------------------
 * A lowered module prints through the runtime's printf buffer
 * (lower_printf.c): before its run it gets a buffer in its __ptxwave_printf
 * variable, as the HIP backend gives it one, and after the run the buffer
 * is drained by the runtime's own host side (rt_printf_drain) into the
 * same stream the unlowered run's native vprintf wrote to, so the printed
 * lines are compared as they are.  Records dropped (a full buffer, or no
 * buffer) are a failure. */
#define PRINTF_CAPACITY (8u << 20)

static bool emu_read(void *ctx, uint64_t addr, void *dst, size_t n) {
  return emu_memcpy_dtoh(ctx, dst, addr, n) == EMU_OK;
}
static bool emu_write(void *ctx, uint64_t addr, const void *src, size_t n) {
  return emu_memcpy_htod(ctx, addr, src, n) == EMU_OK;
}

typedef struct printf_buf {
  uint64_t var, buf;       /* the module's variable; the buffer (0: none) */
} printf_buf;

static printf_buf printf_attach(emu_context *c, emu_module *v) {
  printf_buf p = {0, 0};
  size_t bytes;
  if (!v->ir->facts.lowered || emu_module_global(v, PW_PRINTF_VAR, &p.var, &bytes) != EMU_OK ||
      bytes < PW_PRINTF_VAR_BYTES)
    return (printf_buf){0, 0};
  if (emu_malloc(c, PW_PRINTF_BUF_HEADER + PRINTF_CAPACITY, &p.buf) != EMU_OK) return (printf_buf){0, 0};
  emu_memset(c, p.buf, 0, 1, PW_PRINTF_BUF_HEADER + PRINTF_CAPACITY);
  uint8_t var[PW_PRINTF_VAR_BYTES] = {0};
  uint32_t cap = PRINTF_CAPACITY;
  memcpy(var + PW_PRINTF_VAR_BUFFER, &p.buf, 8);
  memcpy(var + PW_PRINTF_VAR_CAPACITY, &cap, 4);
  emu_memcpy_htod(c, p.var, var, sizeof var);
  return p;
}

/* Drains into out; a failure or a dropped record leaves a message in why. */
static void printf_detach(emu_context *c, printf_buf p, FILE *out, char *why, size_t n) {
  if (!p.var) return;
  rt_printf_result res;
  rt_printf_mem mem = {emu_read, emu_write, c};
  if (!rt_printf_drain(&mem, p.buf, PRINTF_CAPACITY, out, out, &res))
    snprintf(why, n, "the device printf buffer cannot be read back");
  uint32_t dropped = 0;
  emu_memcpy_dtoh(c, &dropped, p.var + PW_PRINTF_VAR_DROPPED, 4);
  if (dropped && !*why) snprintf(why, n, "%u device printf records dropped", dropped);
  emu_free(c, p.buf);
}

static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static char *sorted_lines(const char *text) {
  size_t n = 0, len = strlen(text);
  for (const char *p = text; *p; p++) n += *p == '\n';
  char *copy = strdup(text);
  char **lines = calloc(n + 2, sizeof *lines);
  size_t k = 0;
  for (char *save = NULL, *t = strtok_r(copy, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) lines[k++] = t;
  qsort(lines, k, sizeof *lines, cmp_line);
  char *out = malloc(len + 2), *o = out;
  for (size_t i = 0; i < k; i++) o += sprintf(o, "%s\n", lines[i]);
  *o = 0;
  free(lines);
  free(copy);
  return out;
}

typedef struct launch {
  lower_diff_launch_fn real;
  const char *kernel;
  emu_dim3 grid, block;
  uint32_t shared;
  const void *buffer;
  size_t size;
} launch;

/* Runs v from the state before (pre, prevars) and records the result. */
static void run_variant(emu_module *m, emu_module *v, const launch *L, const snap *pre, uint32_t npre,
                        uint8_t **prevars, bool echo, state *r) {
  emu_context *c = m->ctx;
  restore(pre, npre);
  for (uint32_t g = 0; g < m->ngvars; g++) {
    size_t bytes;
    uint8_t *p = var_in(m, g, v, &bytes);
    if (p && prevars[g]) memcpy(p, prevars[g], bytes);
  }
  FILE *user_out = c->opt.printf_out;
  char *out = NULL;
  size_t out_len = 0;
  c->opt.printf_out = open_memstream(&out, &out_len);
  printf_buf pb = printf_attach(c, v);
  r->st = L->real(v, L->kernel, L->grid, L->block, L->shared, L->buffer, L->size);
  snprintf(r->msg, sizeof r->msg, "%s", emu_error_message(c));
  printf_detach(c, pb, c->opt.printf_out, r->printf_err, sizeof r->printf_err);
  fclose(c->opt.printf_out);
  c->opt.printf_out = user_out;
  if (echo && out_len) {
    fwrite(out, 1, out_len, user_out ? user_out : stdout);
    fflush(user_out ? user_out : stdout);
  }
  r->out = sorted_lines(out);
  free(out);
  r->mem = reread(pre, npre);
  r->n = npre;
  r->vars = calloc(m->ngvars + 1, sizeof *r->vars);
  for (uint32_t g = 0; g < m->ngvars; g++) {
    size_t bytes;
    uint8_t *p = var_in(m, g, v, &bytes);
    if (!p) continue;
    r->vars[g] = malloc(bytes ? bytes : 1);
    memcpy(r->vars[g], p, bytes);
  }
}

static void state_free(emu_module *m, state *r) {
  drop(r->mem, r->n);
  for (uint32_t g = 0; r->vars && g < m->ngvars; g++) free(r->vars[g]);
  free(r->vars);
  free(r->out);
  memset(r, 0, sizeof *r);
}

/* "" when equal, else what differs first. */
static const char *difference(emu_module *m, const state *a, const state *b, char *buf, size_t n) {
  buf[0] = 0;
  if (*b->printf_err) {
    snprintf(buf, n, "%s", b->printf_err);
    return buf;
  }
  if (a->st != b->st) {
    snprintf(buf, n, "launch %s (%s), unlowered %s", emu_status_name(b->st), b->msg, emu_status_name(a->st));
    return buf;
  }
  for (uint32_t i = 0; i < a->n; i++) {
    if (!memcmp(a->mem[i].bytes, b->mem[i].bytes, a->mem[i].size)) continue;
    size_t at = 0;
    while (a->mem[i].bytes[at] == b->mem[i].bytes[at]) at++;
    snprintf(buf, n, "memory differs at byte %zu of a %llu-byte allocation: %02x, unlowered %02x", at,
             (unsigned long long)a->mem[i].size, b->mem[i].bytes[at], a->mem[i].bytes[at]);
    return buf;
  }
  for (uint32_t g = 0; g < m->ngvars; g++) {
    if (!a->vars[g] || !b->vars[g]) continue;
    size_t size = m->gvars[g].size;
    if (memcmp(a->vars[g], b->vars[g], size)) {
      snprintf(buf, n, "variable %s differs", m->gvars[g].ir->name);
      return buf;
    }
  }
  if (strcmp(a->out, b->out)) {
    snprintf(buf, n, "device printf output differs");
    return buf;
  }
  return buf;
}

static void fail(lower_diff_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(lower_diff_stats *st, const char *fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  fprintf(stderr, "lower-diff: %s\n", buf);
  if (!st->failures) snprintf(st->first_failure, sizeof st->first_failure, "%s", buf);
  st->failures++;
}

/* The targets the lowered runs use: the pseudo targets wave64 and wave32
 * unless lower_diff_set_targets names real ones (whose features lower/ uses:
 * MFMA/WMMA). */
static const char *const default_targets[] = {"wave64", "wave32"};
static const char *const *diff_targets = default_targets;
static unsigned ndiff_targets = 2;
void lower_diff_set_targets(const char *const *names, unsigned n) {
  diff_targets = n ? names : default_targets;
  ndiff_targets = n ? n : 2;
}

/* The lowered copies, kept: every launch of a kernel lowers the whole
 * module again otherwise (K kernels x seeds x block sizes x targets
 * lowerings of K kernels: most of a differential test's time).  Keyed by
 * the module's printed text (a module freed and another loaded at the same
 * address must not hit) and the target; a few entries, oldest replaced.
 * Reachable from here until exit, so not a leak; a mutex because the
 * runtime's launches (lower_diff_cuda) may come from several threads. */
#include <pthread.h>
enum { LOWERED_CACHE = 8 };
static struct lowered_entry {
  char *text;
  size_t len;
  const ir_target *t;
  ir_module *lowered;
  emu_context *ctx;     /* where `loaded` was loaded (maybe destroyed since) */
  emu_module *loaded;   /* `lowered` loaded, reused while valid() */
  unsigned long used;
} lowered_cache[LOWERED_CACHE];
static unsigned long lowered_clock;
static pthread_mutex_t lowered_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whether e's loaded module is still loaded in c.  Only this file loads
 * e->lowered, which lives as long as e, so a module of c's list whose IR is
 * e->lowered is e's, even if c is a new context at a freed one's address. */
static bool valid(const struct lowered_entry *e, emu_context *c) {
  if (e->ctx != c || !e->loaded) return false;
  for (emu_module *x = c->modules; x; x = x->next)
    if (x == e->loaded && x->ir == e->lowered) return true;
  return false;
}

/* The lowered copy of m for t loaded in c, owned by the cache (NULL, with d
 * filled or c's error set, when lowering or loading fails).  Reusing the
 * loaded module is sound because each run starts by copying every variable
 * of the unlowered module into it (run_variant), and what lowering adds is
 * .shared (per launch) or the printf variable (set per run). */
static emu_module *load(emu_context *c, const ir_module *ir, unsigned wave);
static emu_module *lowered_copy(emu_context *c, const ir_module *m, const ir_target *t, pw_diag *d,
                                bool *lowering_failed) {
  *lowering_failed = false;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ir_print_module(f, m);
  fclose(f);
  pthread_mutex_lock(&lowered_lock);
  struct lowered_entry *e = NULL, *victim = &lowered_cache[0];
  for (unsigned k = 0; k < LOWERED_CACHE; k++) {
    struct lowered_entry *x = &lowered_cache[k];
    if (x->text && x->t == t && x->len == len && !memcmp(x->text, text, len)) e = x;
    if (x->used < victim->used) victim = x;
  }
  if (e) {
    free(text);
  } else {
    ir_module *lc = ir_parse(m->source_name ? m->source_name : "<module>", text, len, d);
    if (lc && !lower_module(lc, t, &(lower_pipeline_options){.diag = d})) {
      ir_module_destroy(lc);
      lc = NULL;
    }
    if (!lc) {
      pthread_mutex_unlock(&lowered_lock);
      free(text);
      *lowering_failed = true;
      return NULL;
    }
    if (valid(victim, c)) emu_module_unload(victim->loaded);
    free(victim->text);
    if (victim->lowered) ir_module_destroy(victim->lowered);
    *victim = (struct lowered_entry){.text = text, .len = len, .t = t, .lowered = lc};
    e = victim;
  }
  e->used = ++lowered_clock;
  if (!valid(e, c)) {
    e->ctx = c;
    e->loaded = load(c, e->lowered, 0);
  }
  emu_module *lm = e->loaded;
  pthread_mutex_unlock(&lowered_lock);
  return lm;
}

/* Loads ir with the wave size forced (0: the module's own). */
static emu_module *load(emu_context *c, const ir_module *ir, unsigned wave) {
  unsigned forced = c->opt.wave_size;
  c->opt.wave_size = wave;
  emu_module *em = NULL;
  emu_status s = emu_module_load(c, (ir_module *)ir, &em);   /* read only: it keeps a pointer */
  c->opt.wave_size = forced;
  return s == EMU_OK ? em : NULL;
}

emu_status lower_diff_launch(lower_diff_launch_fn real, emu_module *m, const char *kernel, emu_dim3 grid,
                             emu_dim3 block, uint32_t shared_bytes, const void *buffer, size_t buffer_size,
                             lower_diff_stats *st) {
  emu_context *c = m->ctx;
  if (m->ir->facts.lowered) return real(m, kernel, grid, block, shared_bytes, buffer, buffer_size);
  st->launches++;
  launch L = {real, kernel, grid, block, shared_bytes, buffer, buffer_size};
  const char *src = m->ir->source_name ? m->ir->source_name : "<module>";
  uint32_t npre;
  snap *pre = take_allocs(c, &npre);
  uint8_t **prevars = calloc(m->ngvars + 1, sizeof *prevars);
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (m->gvars[g].host) {
      prevars[g] = malloc(m->gvars[g].size ? m->gvars[g].size : 1);
      memcpy(prevars[g], m->gvars[g].host, m->gvars[g].size);
    }
  state r0 = {0};
  run_variant(m, m, &L, pre, npre, prevars, true, &r0);
  if (r0.st != EMU_OK) {
    st->skipped++;
  } else {
    for (unsigned ti = 0; ti < ndiff_targets; ti++) {
      const ir_target *tg = ir_target_find(diff_targets[ti]);
      if (!tg) {
        fail(st, "no target %s", diff_targets[ti]);
        continue;
      }
      unsigned wave = tg->wave_size;
      pw_diag d;
      pw_diag_init(&d, NULL);
      bool lowering_failed;
      emu_module *lm = lowered_copy(c, m->ir, tg, &d, &lowering_failed);
      if (lowering_failed) {
        fail(st, "%s: kernel %s: lowering for wave%u failed: %.600s", src, kernel, wave, pw_diag_text(&d));
        pw_diag_fini(&d);
        continue;
      }
      pw_diag_fini(&d);
      if (!lm) {
        fail(st, "%s: kernel %s: the wave%u module does not load: %s", src, kernel, wave, emu_error_message(c));
        continue;
      }
      state rw = {0};
      run_variant(m, lm, &L, pre, npre, prevars, false, &rw);
      st->compared++;
      char why[768];
      if (*difference(m, &r0, &rw, why, sizeof why)) {
        /* the same module, unlowered, run by waves of W */
        emu_module *um = load(c, m->ir, wave);
        state ru = {0};
        char why2[768] = "";
        if (um) {
          run_variant(m, um, &L, pre, npre, prevars, false, &ru);
          difference(m, &ru, &rw, why2, sizeof why2);
          emu_module_unload(um);
        }
        if (um && !*why2) {
          st->schedule++;
        } else {
          fail(st, "%s: kernel %s block (%u,%u,%u) grid (%u,%u,%u): %s (wave%u): %s", src, kernel, block.x, block.y,
               block.z, grid.x, grid.y, grid.z, tg->name, wave, why);
        }
        state_free(m, &ru);
      }
      state_free(m, &rw);
    }
  }
  /* leave memory as the unlowered run left it */
  restore(r0.mem, r0.n);
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (r0.vars[g]) memcpy(m->gvars[g].host, r0.vars[g], m->gvars[g].size);
  emu_set_error(c, "%s", r0.msg);
  emu_status s0 = r0.st;
  state_free(m, &r0);
  drop(pre, npre);
  for (uint32_t g = 0; g < m->ngvars; g++) free(prevars[g]);
  free(prevars);
  return s0;
}
