/* tests/lower/lower_diff.c: see lower_diff.h. */
#include "lower_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu_internal.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "util/diag.h"

typedef struct snap {
  uint64_t base, size;
  uint8_t *bytes;
} snap;

/* Every live allocation of the context except those of module `skip`'s
 * variables (compared by name instead). */
static bool is_module_var(const emu_module *m, uint64_t base) {
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (m->gvars[g].host && (uint64_t)(uintptr_t)m->gvars[g].host == base) return true;
  return false;
}

static snap *take(emu_context *c, const emu_module *skip, uint32_t *n) {
  snap *s = calloc(c->nallocs + 1, sizeof *s);
  uint32_t k = 0;
  for (uint32_t i = 0; i < c->nallocs; i++) {
    const emu_alloc *a = &c->allocs[i];
    if (a->freed || (skip && is_module_var(skip, a->base))) continue;
    s[k].base = a->base;
    s[k].size = a->size;
    s[k].bytes = malloc(a->size ? a->size : 1);
    memcpy(s[k].bytes, (void *)(uintptr_t)a->base, a->size);
    k++;
  }
  *n = k;
  return s;
}

static void restore(const snap *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) memcpy((void *)(uintptr_t)s[i].base, s[i].bytes, s[i].size);
}

static void drop(snap *s, uint32_t n) {
  for (uint32_t i = 0; i < n; i++) free(s[i].bytes);
  free(s);
}

/* Module variables: copy or compare src's into dst's, by name. */
static long vars(emu_module *src, emu_module *dst, bool compare, uint64_t *where) {
  for (uint32_t g = 0; g < src->ngvars; g++) {
    const emu_gvar *v = &src->gvars[g];
    if (!v->host) continue;
    uint64_t d;
    size_t bytes;
    if (emu_module_global(dst, v->ir->name, &d, &bytes) != EMU_OK || bytes != v->size) continue;
    uint8_t *p = (uint8_t *)(uintptr_t)d;
    if (!compare) {
      memcpy(p, v->host, bytes);
      continue;
    }
    for (size_t i = 0; i < bytes; i++)
      if (p[i] != v->host[i]) {
        *where = (uint64_t)i;
        return (long)g;
      }
  }
  return -1;
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

/* Device printf output of a run, as sorted lines (workgroups run on several
 * host threads: the order of lines between them is not deterministic). */
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

static ir_module *lowered_copy(const ir_module *m, unsigned wave, pw_diag *d) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ir_print_module(f, m);
  fclose(f);
  ir_module *c = ir_parse(m->source_name ? m->source_name : "<module>", text, len, d);
  free(text);
  if (!c) return NULL;
  if (!lower_module(c, lower_target_for_wave(wave), &(lower_pipeline_options){.diag = d})) {
    ir_module_destroy(c);
    return NULL;
  }
  return c;
}

emu_status lower_diff_launch(lower_diff_launch_fn real, emu_module *m, const char *kernel, emu_dim3 grid,
                             emu_dim3 block, uint32_t shared_bytes, const void *buffer, size_t buffer_size,
                             lower_diff_stats *st) {
  emu_context *c = m->ctx;
  if (m->ir->facts.lowered) return real(m, kernel, grid, block, shared_bytes, buffer, buffer_size);
  st->launches++;
  uint32_t npre;
  snap *pre = take(c, m, &npre);
  /* the module's own variables, before */
  snap *mvars = calloc(m->ngvars + 1, sizeof *mvars);
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (m->gvars[g].host) {
      mvars[g].bytes = malloc(m->gvars[g].size ? m->gvars[g].size : 1);
      memcpy(mvars[g].bytes, m->gvars[g].host, m->gvars[g].size);
    }
  FILE *user_out = c->opt.printf_out;
  char *out0 = NULL;
  size_t out0_len = 0;
  c->opt.printf_out = open_memstream(&out0, &out0_len);
  emu_status s0 = real(m, kernel, grid, block, shared_bytes, buffer, buffer_size);
  fclose(c->opt.printf_out);
  c->opt.printf_out = user_out;
  if (out0_len) {
    fwrite(out0, 1, out0_len, user_out ? user_out : stdout);
    fflush(user_out ? user_out : stdout);
  }
  char *sorted0 = sorted_lines(out0);
  free(out0);
  char msg0[512];
  snprintf(msg0, sizeof msg0, "%s", emu_error_message(c));
  if (s0 != EMU_OK) {
    st->skipped++;
    free(sorted0);
    drop(pre, npre);
    for (uint32_t g = 0; g < m->ngvars; g++) free(mvars[g].bytes);
    free(mvars);
    return s0;
  }
  uint32_t npost;
  snap *post = take(c, m, &npost);
  /* the module's variables after the unlowered run: kept in m; save them */
  snap *mpost = calloc(m->ngvars + 1, sizeof *mpost);
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (m->gvars[g].host) {
      mpost[g].bytes = malloc(m->gvars[g].size ? m->gvars[g].size : 1);
      memcpy(mpost[g].bytes, m->gvars[g].host, m->gvars[g].size);
    }
  const char *kname = kernel;
  for (unsigned wave = 64; wave >= 32; wave /= 2) {
    pw_diag d;
    pw_diag_init(&d, NULL);
    ir_module *lir = lowered_copy(m->ir, wave, &d);
    if (!lir) {
      fail(st, "%s: kernel %s: lowering for wave%u failed: %.600s", m->ir->source_name, kname, wave, pw_diag_text(&d));
      pw_diag_fini(&d);
      continue;
    }
    pw_diag_fini(&d);
    emu_module *lm = NULL;
    /* a context made to run unlowered IR at wave 64 (the emulator's own
     * wave64 warp tests) must still run lowered code at its own wave size */
    unsigned forced = c->opt.wave_size;
    c->opt.wave_size = 0;
    emu_status ls = emu_module_load(c, lir, &lm);
    c->opt.wave_size = forced;
    if (ls != EMU_OK) {
      fail(st, "%s: kernel %s: the wave%u module does not load: %s", m->ir->source_name, kname, wave,
           emu_error_message(c));
      ir_module_destroy(lir);
      continue;
    }
    /* the state before the launch, in both modules' variables */
    restore(pre, npre);
    for (uint32_t g = 0; g < m->ngvars; g++)
      if (m->gvars[g].host) memcpy(m->gvars[g].host, mvars[g].bytes, m->gvars[g].size);
    vars(m, lm, false, NULL);
    char *out1 = NULL;
    size_t out1_len = 0;
    c->opt.printf_out = open_memstream(&out1, &out1_len);
    emu_status s1 = real(lm, kernel, grid, block, shared_bytes, buffer, buffer_size);
    fclose(c->opt.printf_out);
    c->opt.printf_out = user_out;
    char *sorted1 = sorted_lines(out1);
    free(out1);
    if (strcmp(sorted0, sorted1))
      fail(st, "%s: kernel %s: wave%u: device printf output differs", m->ir->source_name, kname, wave);
    free(sorted1);
    st->compared++;
    if (s1 != s0) {
      fail(st, "%s: kernel %s block (%u,%u,%u): wave%u launch %s: %s", m->ir->source_name, kname, block.x, block.y,
           block.z, wave, emu_status_name(s1), emu_error_message(c));
    } else {
      /* compare every allocation with the unlowered run's */
      for (uint32_t i = 0; i < npost; i++) {
        const uint8_t *now = (const uint8_t *)(uintptr_t)post[i].base;
        if (!memcmp(now, post[i].bytes, post[i].size)) continue;
        size_t at = 0;
        while (now[at] == post[i].bytes[at]) at++;
        fail(st, "%s: kernel %s block (%u,%u,%u) grid (%u,%u,%u): wave%u memory differs at byte %zu of a %llu-byte "
                 "allocation: %02x, unlowered %02x",
             m->ir->source_name, kname, block.x, block.y, block.z, grid.x, grid.y, grid.z, wave, at,
             (unsigned long long)post[i].size, now[at], post[i].bytes[at]);
        break;
      }
      /* and the module variables: restore m's post state, compare lm's to it */
      for (uint32_t g = 0; g < m->ngvars; g++)
        if (m->gvars[g].host) memcpy(m->gvars[g].host, mpost[g].bytes, m->gvars[g].size);
      uint64_t where = 0;
      long g = vars(m, lm, true, &where);
      if (g >= 0)
        fail(st, "%s: kernel %s: wave%u: variable %s differs at byte %llu", m->ir->source_name, kname, wave,
             m->gvars[g].ir->name, (unsigned long long)where);
    }
    emu_module_unload(lm);
    ir_module_destroy(lir);
  }
  /* leave memory as the unlowered run left it */
  restore(post, npost);
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (m->gvars[g].host) memcpy(m->gvars[g].host, mpost[g].bytes, m->gvars[g].size);
  emu_set_error(c, "%s", msg0);
  free(sorted0);
  drop(pre, npre);
  drop(post, npost);
  for (uint32_t g = 0; g < m->ngvars; g++) {
    free(mvars[g].bytes);
    free(mpost[g].bytes);
  }
  free(mvars);
  free(mpost);
  return s0;
}
