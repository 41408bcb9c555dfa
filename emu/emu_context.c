/* emu/emu_context.c: contexts, device memory and modules.
 *
 * Device memory is host memory: emu_malloc returns the host address of a
 * zeroed, 256-byte aligned block (CUDA's alignment) from the context's
 * shared heap (emu_heap.c: one memfd mapping, so another process can map
 * it) and enters it in the context's allocation table, a sorted array
 * searched by address.  Module
 * .global and .const variables are allocations too (.const ones read-only
 * to device code).  Launches take a snapshot of the table, so device code
 * reads it without locks; memcpy and memset check their ranges against it,
 * so a bad pointer from the host is an error code, not a crash.
 *
 * memcheck: freed blocks stay in the table, marked freed, and their memory
 * is kept (never reused), so a later access reports a use after free.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "emu_heap.h"
#include "emu_internal.h"

const char *emu_status_name(emu_status s) {
  switch (s) {
  case EMU_OK: return "success";
  case EMU_ERR_INVALID_VALUE: return "invalid value";
  case EMU_ERR_OUT_OF_MEMORY: return "out of memory";
  case EMU_ERR_NOT_FOUND: return "not found";
  case EMU_ERR_UNSUPPORTED: return "unsupported";
  case EMU_ERR_ILLEGAL_ADDRESS: return "illegal address";
  case EMU_ERR_ASSERT: return "device assertion failed";
  case EMU_ERR_TRAP: return "trap";
  case EMU_ERR_DEADLOCK: return "deadlock";
  case EMU_ERR_LAUNCH: return "launch failure";
  }
  return "unknown";
}

void emu_set_error(emu_context *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&c->msg_lock);
  vsnprintf(c->msg, sizeof c->msg, fmt, ap);
  pthread_mutex_unlock(&c->msg_lock);
  va_end(ap);
}

const char *emu_error_message(const emu_context *c) { return c ? c->msg : "no context"; }

void emu_error_copy(emu_context *c, char *buf, size_t cap) {
  if (!buf || !cap) return;
  if (!c) {
    snprintf(buf, cap, "no context");
    return;
  }
  pthread_mutex_lock(&c->msg_lock);
  snprintf(buf, cap, "%s", c->msg);
  pthread_mutex_unlock(&c->msg_lock);
}

emu_status emu_context_create(const emu_options *opt, emu_context **out) {
  if (!out) return EMU_ERR_INVALID_VALUE;
  emu_context *c = calloc(1, sizeof *c);
  if (!c) return EMU_ERR_OUT_OF_MEMORY;
  if (opt) c->opt = *opt;
  if (c->opt.wave_size && c->opt.wave_size != 32 && c->opt.wave_size != 64) {
    free(c);
    return EMU_ERR_INVALID_VALUE;
  }
  if (!c->opt.stack_size) c->opt.stack_size = 64 * 1024;
  c->opt.stack_size = (c->opt.stack_size + 15) & ~15u;
  pthread_mutex_init(&c->lock, NULL);
  pthread_mutex_init(&c->print_lock, NULL);
  pthread_mutex_init(&c->msg_lock, NULL);
  *out = c;
  return EMU_OK;
}

void emu_context_destroy(emu_context *c) {
  if (!c) return;
  while (c->modules) emu_module_unload(c->modules);
  for (uint32_t i = 0; i < c->nallocs; i++)
    if (c->allocs[i].owned && !emu_heap_owns(c->dmem, (void *)(uintptr_t)c->allocs[i].base))
      free((void *)(uintptr_t)c->allocs[i].base);
  emu_heap_destroy(c->dmem);
  free(c->allocs);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->print_lock);
  pthread_mutex_destroy(&c->msg_lock);
  free(c);
}

void emu_last_stats(const emu_context *c, emu_stats *out) {
  if (c && out) {
    pthread_mutex_lock((pthread_mutex_t *)&c->lock);
    *out = c->last;
    pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
  }
}

emu_status emu_synchronize(emu_context *c) { return c ? EMU_OK : EMU_ERR_INVALID_VALUE; }

/* ---- the allocation table (caller holds c->lock) ---------------------------- */
static uint32_t lower_bound(const emu_context *c, uint64_t base) {
  uint32_t lo = 0, hi = c->nallocs;
  while (lo < hi) {
    uint32_t mid = (lo + hi) / 2;
    if (c->allocs[mid].base < base) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static bool table_insert(emu_context *c, emu_alloc a) {
  if (c->nallocs == c->allocs_cap) {
    uint32_t nc = c->allocs_cap ? c->allocs_cap * 2 : 64;
    emu_alloc *na = realloc(c->allocs, nc * sizeof *na);
    if (!na) return false;
    c->allocs = na;
    c->allocs_cap = nc;
  }
  uint32_t i = lower_bound(c, a.base);
  memmove(&c->allocs[i + 1], &c->allocs[i], (c->nallocs - i) * sizeof *c->allocs);
  c->allocs[i] = a;
  c->nallocs++;
  return true;
}

static void table_remove(emu_context *c, uint32_t i) {
  memmove(&c->allocs[i], &c->allocs[i + 1], (c->nallocs - i - 1) * sizeof *c->allocs);
  c->nallocs--;
}

/* The live allocation holding [p, p+n), or NULL. */
static const emu_alloc *range_ok(emu_context *c, uint64_t p, size_t n) {
  const emu_alloc *a = emu_find_alloc(c->allocs, c->nallocs, p);
  if (!a || a->freed) return NULL;
  if (p + n > a->base + a->size || p + n < p) return NULL;
  return a;
}

/* The address space of the shared heap: eight times the host's memory
 * (memcheck never reuses freed addresses), at least 16 and at most 512
 * GiB.  It is reserved, not committed; a system that refuses it gets
 * smaller ones, then private memory. */
static emu_heap *make_heap(void) {
  long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
  uint64_t ram = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : (uint64_t)4 << 30;
  uint64_t want = ram * 8;
  if (want < (uint64_t)16 << 30) want = (uint64_t)16 << 30;
  if (want > (uint64_t)512 << 30) want = (uint64_t)512 << 30;
  for (uint64_t n = want; n >= ((uint64_t)1 << 30); n /= 2) {
    emu_heap *h = emu_heap_create(n);
    if (h) return h;
  }
  return NULL;
}

static void *device_bytes(emu_context *c, size_t rounded) {
  pthread_mutex_lock(&c->lock);
  if (!c->dmem_tried) {
    c->dmem = make_heap();
    c->dmem_tried = true;
  }
  pthread_mutex_unlock(&c->lock);
  if (c->dmem) return emu_heap_alloc(c->dmem, rounded);
  void *p = aligned_alloc(256, rounded);
  if (p) memset(p, 0, rounded);
  return p;
}

emu_status emu_malloc_tagged(emu_context *c, size_t bytes, uint16_t tag, uint64_t *dptr) {
  if (!c || !dptr) return EMU_ERR_INVALID_VALUE;
  size_t sz = bytes ? bytes : 1;
  size_t rounded = (sz + 255) & ~(size_t)255;
  if (rounded < sz) return EMU_ERR_OUT_OF_MEMORY;
  void *p = device_bytes(c, rounded);
  if (!p) {
    emu_set_error(c, "out of memory allocating %zu bytes", bytes);
    return EMU_ERR_OUT_OF_MEMORY;
  }
  if ((uint64_t)(uintptr_t)p + rounded > EMU_WIN_SHARED) {
    if (!emu_heap_free(c->dmem, p, true)) free(p);
    emu_set_error(c, "the host returned memory above 2^48, where the emulator keeps its address windows");
    return EMU_ERR_OUT_OF_MEMORY;
  }
  pthread_mutex_lock(&c->lock);
  bool ok = table_insert(c, (emu_alloc){.base = (uint64_t)(uintptr_t)p, .size = sz, .owned = true, .tag = tag});
  pthread_mutex_unlock(&c->lock);
  if (!ok) {
    if (!emu_heap_free(c->dmem, p, true)) free(p);
    return EMU_ERR_OUT_OF_MEMORY;
  }
  *dptr = (uint64_t)(uintptr_t)p;
  return EMU_OK;
}

emu_status emu_malloc(emu_context *c, size_t bytes, uint64_t *dptr) {
  return emu_malloc_tagged(c, bytes, 0, dptr);
}

emu_status emu_free(emu_context *c, uint64_t dptr) {
  if (!c) return EMU_ERR_INVALID_VALUE;
  if (!dptr) return EMU_OK;
  pthread_mutex_lock(&c->lock);
  uint32_t i = lower_bound(c, dptr);
  if (i >= c->nallocs || c->allocs[i].base != dptr || !c->allocs[i].owned || c->allocs[i].freed) {
    pthread_mutex_unlock(&c->lock);
    emu_set_error(c, "free of 0x%llx, which is not the start of a live allocation", (unsigned long long)dptr);
    return EMU_ERR_INVALID_VALUE;
  }
  void *p = (void *)(uintptr_t)dptr;
  if (c->opt.memcheck) {
    c->allocs[i].freed = true;
    emu_heap_free(c->dmem, p, false);   /* the memory goes, the addresses stay taken */
  } else {
    if (!emu_heap_free(c->dmem, p, true)) free(p);
    table_remove(c, i);
  }
  pthread_mutex_unlock(&c->lock);
  return EMU_OK;
}

emu_status emu_register(emu_context *c, void *host, size_t bytes) {
  return emu_register_tagged(c, host, bytes, 0);
}

emu_status emu_register_tagged(emu_context *c, void *host, size_t bytes, uint16_t tag) {
  if (!c || !host || !bytes) return EMU_ERR_INVALID_VALUE;
  pthread_mutex_lock(&c->lock);
  bool ok = table_insert(c, (emu_alloc){.base = (uint64_t)(uintptr_t)host, .size = bytes, .tag = tag});
  pthread_mutex_unlock(&c->lock);
  return ok ? EMU_OK : EMU_ERR_OUT_OF_MEMORY;
}

emu_status emu_unregister(emu_context *c, void *host) {
  if (!c) return EMU_ERR_INVALID_VALUE;
  pthread_mutex_lock(&c->lock);
  uint32_t i = lower_bound(c, (uint64_t)(uintptr_t)host);
  emu_status st = EMU_ERR_INVALID_VALUE;
  if (i < c->nallocs && c->allocs[i].base == (uint64_t)(uintptr_t)host && !c->allocs[i].owned) {
    table_remove(c, i);
    st = EMU_OK;
  }
  pthread_mutex_unlock(&c->lock);
  return st;
}

static emu_status check_range(emu_context *c, uint64_t p, size_t n, const char *what) {
  pthread_mutex_lock(&c->lock);
  const emu_alloc *a = range_ok(c, p, n);
  pthread_mutex_unlock(&c->lock);
  if (!a) {
    emu_set_error(c, "%s: [0x%llx, +%zu) is not inside a live allocation", what, (unsigned long long)p, n);
    return EMU_ERR_INVALID_VALUE;
  }
  return EMU_OK;
}

emu_status emu_memcpy_htod(emu_context *c, uint64_t dst, const void *src, size_t bytes) {
  if (!c || (!src && bytes)) return EMU_ERR_INVALID_VALUE;
  if (!bytes) return EMU_OK;
  emu_status st = check_range(c, dst, bytes, "memcpy to device");
  if (st == EMU_OK) memcpy((void *)(uintptr_t)dst, src, bytes);
  return st;
}

emu_status emu_memcpy_dtoh(emu_context *c, void *dst, uint64_t src, size_t bytes) {
  if (!c || (!dst && bytes)) return EMU_ERR_INVALID_VALUE;
  if (!bytes) return EMU_OK;
  emu_status st = check_range(c, src, bytes, "memcpy from device");
  if (st == EMU_OK) memcpy(dst, (const void *)(uintptr_t)src, bytes);
  return st;
}

emu_status emu_memcpy_dtod(emu_context *c, uint64_t dst, uint64_t src, size_t bytes) {
  if (!c) return EMU_ERR_INVALID_VALUE;
  if (!bytes) return EMU_OK;
  emu_status st = check_range(c, src, bytes, "memcpy from device");
  if (st == EMU_OK) st = check_range(c, dst, bytes, "memcpy to device");
  if (st == EMU_OK) memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
  return st;
}

emu_status emu_memset(emu_context *c, uint64_t dst, uint32_t value, unsigned elem, size_t count) {
  if (!c || (elem != 1 && elem != 2 && elem != 4)) return EMU_ERR_INVALID_VALUE;
  if (!count) return EMU_OK;
  if (count > SIZE_MAX / elem) return EMU_ERR_INVALID_VALUE;
  emu_status st = check_range(c, dst, count * elem, "memset");
  if (st != EMU_OK) return st;
  uint8_t *p = (uint8_t *)(uintptr_t)dst;
  if (elem == 1) {
    memset(p, (int)(value & 0xff), count);
  } else {
    for (size_t i = 0; i < count; i++) memcpy(p + i * elem, &value, elem);
  }
  return EMU_OK;
}

emu_status emu_mem_range(emu_context *c, uint64_t dptr, uint64_t *base, size_t *bytes) {
  if (!c) return EMU_ERR_INVALID_VALUE;
  pthread_mutex_lock(&c->lock);
  const emu_alloc *a = emu_find_alloc(c->allocs, c->nallocs, dptr);
  bool ok = a && !a->freed;
  if (ok) {
    if (base) *base = a->base;
    if (bytes) *bytes = a->size;
  }
  pthread_mutex_unlock(&c->lock);
  return ok ? EMU_OK : EMU_ERR_NOT_FOUND;
}

emu_status emu_mem_query(emu_context *c, uint64_t dptr, emu_mem_desc *out) {
  if (!c || !out) return EMU_ERR_INVALID_VALUE;
  pthread_mutex_lock(&c->lock);
  const emu_alloc *a = emu_find_alloc(c->allocs, c->nallocs, dptr);
  bool ok = a && !a->freed;
  if (ok) {
    *out = (emu_mem_desc){.base = a->base, .bytes = a->size, .tag = a->tag, .owned = a->owned, .fd = -1};
    if (!a->owned || !emu_heap_share(c->dmem, (void *)(uintptr_t)a->base, &out->fd, &out->offset))
      out->fd = -1;
  }
  pthread_mutex_unlock(&c->lock);
  return ok ? EMU_OK : EMU_ERR_NOT_FOUND;
}

/* ---- modules ------------------------------------------------------------------- */
emu_func *emu_module_find_func(emu_module *m, const char *name) {
  for (uint32_t i = 0; i < m->nfuncs; i++)
    if (!strcmp(m->funcs[i]->ir->name, name)) return m->funcs[i];
  return NULL;
}

static uint64_t var_bytes(const ir_global *g) {
  if (g->size) return g->size;
  uint64_t e = ir_type_bits((ir_type)g->type) / 8;
  return (g->count ? g->count : 1) * (g->vec ? g->vec : 1) * (e ? e : 1);
}

/* .global and .const variables have storage for the module's life, those
 * declared in a function body too (PTX ISA 5.1.4: a .global variable of
 * a function is one per program, like a C static; it is not visible to
 * the host by name, emu_module_global). */
static bool has_storage(const ir_global *g) {
  return (g->space == IR_SPACE_GLOBAL || g->space == IR_SPACE_CONST) &&
         !(g->linkage == IR_LINK_EXTERN && !g->init && !g->count);
}

/* The address a relocation in an initializer stands for. */
static uint64_t reloc_target(emu_module *em, const ir_reloc *r) {
  switch (r->sym.kind) {
  case IR_SYM_GLOBAL:
    for (uint32_t g = 0; g < em->ngvars; g++)
      if (em->gvars[g].ir == r->sym.global && em->gvars[g].host) return (uint64_t)(uintptr_t)em->gvars[g].host;
    return 0;
  case IR_SYM_FUNC: {
    uint32_t i = 0;
    ir_foreach_func(em->ir, f) {
      if (f == r->sym.func) return EMU_WIN_FUNC + (uint64_t)i * 16;
      i++;
    }
    return 0;
  }
  case IR_SYM_PARAM:
    return 0;
  }
  return 0;
}

static void free_storage(emu_module *em) {
  emu_context *c = em->ctx;
  pthread_mutex_lock(&c->lock);
  for (uint32_t g = 0; g < em->ngvars; g++) {
    uint8_t *h = em->gvars[g].host;
    if (!h) continue;
    uint32_t i = lower_bound(c, (uint64_t)(uintptr_t)h);
    if (i < c->nallocs && c->allocs[i].base == (uint64_t)(uintptr_t)h) table_remove(c, i);
    free(h);
    em->gvars[g].host = NULL;
  }
  pthread_mutex_unlock(&c->lock);
}

emu_status emu_module_load(emu_context *c, ir_module *m, emu_module **out) {
  if (!c || !m || !out) return EMU_ERR_INVALID_VALUE;
  emu_module *em = calloc(1, sizeof *em);
  if (!em) return EMU_ERR_OUT_OF_MEMORY;
  em->ctx = c;
  em->ir = m;
  pw_arena_init(&em->arena);
  em->wave = c->opt.wave_size ? c->opt.wave_size : (m->facts.wave_size ? m->facts.wave_size : 32);
  if (em->wave != 32 && em->wave != 64) em->wave = 32;
  em->target = m->facts.target ? m->facts.target : ir_target_for_wave(em->wave);
  em->ngvars = m->nglobals;
  em->gvars = calloc(m->nglobals + 1, sizeof *em->gvars);
  emu_status st = em->gvars ? EMU_OK : EMU_ERR_OUT_OF_MEMORY;
  /* storage of .global and .const variables, initialized */
  for (uint32_t g = 0; g < m->nglobals && st == EMU_OK; g++) {
    const ir_global *gv = m->globals[g];
    em->gvars[g].ir = gv;
    if (!has_storage(gv)) continue;
    uint64_t size = var_bytes(gv);
    size_t alloc = (size_t)((size ? size : 1) + 15) & ~(size_t)15;
    uint32_t align = gv->align > 16 ? gv->align : 16;
    uint8_t *h = aligned_alloc(align, (alloc + align - 1) / align * align);
    if (!h) {
      st = EMU_ERR_OUT_OF_MEMORY;
      break;
    }
    memset(h, 0, alloc);
    if (gv->init) memcpy(h, gv->init, gv->size && gv->size < size ? gv->size : size);
    em->gvars[g].host = h;
    em->gvars[g].size = size;
    pthread_mutex_lock(&c->lock);
    bool ok = table_insert(c, (emu_alloc){.base = (uint64_t)(uintptr_t)h, .size = size ? size : 1,
                                          .readonly = gv->space == IR_SPACE_CONST});
    pthread_mutex_unlock(&c->lock);
    if (!ok) st = EMU_ERR_OUT_OF_MEMORY;
  }
  /* addresses inside initializers */
  for (uint32_t g = 0; g < m->nglobals && st == EMU_OK; g++) {
    const ir_global *gv = m->globals[g];
    uint8_t *h = em->gvars[g].host;
    if (!h) continue;
    for (uint32_t r = 0; r < gv->nrelocs; r++) {
      const ir_reloc *rl = &gv->relocs[r];
      uint64_t v = reloc_target(em, rl) + (uint64_t)rl->addend;
      if (rl->offset + rl->size <= em->gvars[g].size) memcpy(h + rl->offset, &v, rl->size == 4 ? 4 : 8);
    }
  }
  char err[512] = "";
  if (st == EMU_OK) st = emu_decode_module(em, err, sizeof err);
  /* device malloc needs a heap */
  if (st == EMU_OK) {
    bool wants_heap = false;
    for (uint32_t i = 0; i < em->nfuncs; i++) {
      wants_heap |= em->funcs[i]->builtin == EMU_BI_MALLOC;
      em->device_launches |= em->funcs[i]->builtin == EMU_BI_CDP_PARAM_BUFFER;
    }
    pthread_mutex_lock(&c->lock);
    bool need = wants_heap && !c->heap;
    pthread_mutex_unlock(&c->lock);
    uint64_t hp;
    if (need && emu_malloc(c, 8u << 20, &hp) == EMU_OK) {
      pthread_mutex_lock(&c->lock);
      if (!c->heap) {
        c->heap = hp;
        c->heap_size = 8u << 20;
        c->heap_used = 0;
        hp = 0;
      }
      pthread_mutex_unlock(&c->lock);
      if (hp) emu_free(c, hp);   /* another load made it first */
    }
  }
  if (st != EMU_OK) {
    emu_set_error(c, "loading %s: %s", m->source_name ? m->source_name : "a module", err[0] ? err : emu_status_name(st));
    free_storage(em);
    free(em->gvars);
    free(em->shared);
    pw_arena_free(&em->arena);
    free(em);
    return st;
  }
  pthread_mutex_lock(&c->lock);
  em->next = c->modules;
  c->modules = em;
  pthread_mutex_unlock(&c->lock);
  *out = em;
  return EMU_OK;
}

void emu_module_unload(emu_module *em) {
  if (!em) return;
  emu_context *c = em->ctx;
  pthread_mutex_lock(&c->lock);
  for (emu_module **p = &c->modules; *p; p = &(*p)->next)
    if (*p == em) {
      *p = em->next;
      break;
    }
  pthread_mutex_unlock(&c->lock);
  free_storage(em);
  free(em->gvars);
  free(em->shared);
  pw_arena_free(&em->arena);
  free(em);
}

emu_status emu_module_global(emu_module *m, const char *name, uint64_t *dptr, size_t *bytes) {
  if (!m || !name) return EMU_ERR_INVALID_VALUE;
  for (uint32_t g = 0; g < m->ngvars; g++)
    if (m->gvars[g].host && !m->gvars[g].ir->owner && !strcmp(m->gvars[g].ir->name, name)) {
      if (dptr) *dptr = (uint64_t)(uintptr_t)m->gvars[g].host;
      if (bytes) *bytes = (size_t)m->gvars[g].size;
      return EMU_OK;
    }
  emu_set_error(m->ctx, "no .global or .const variable named '%s'", name);
  return EMU_ERR_NOT_FOUND;
}

emu_status emu_kernel_params(emu_module *m, const char *kernel, unsigned *nparams, const emu_param_info **params,
                             uint32_t *buffer_size) {
  if (!m || !kernel) return EMU_ERR_INVALID_VALUE;
  emu_func *k = emu_module_find_func(m, kernel);
  if (!k || !k->ir->is_kernel) {
    emu_set_error(m->ctx, "no kernel named '%s'", kernel);
    return EMU_ERR_NOT_FOUND;
  }
  if (!k->kparams) {   /* its parameters have no layout (emu_decode.c) */
    emu_set_error(m->ctx, "kernel '%s' cannot run in the emulator: %s", kernel, k->closure_error);
    return EMU_ERR_UNSUPPORTED;
  }
  if (nparams) *nparams = k->ir->nparams;
  if (params) *params = k->kparams;
  if (buffer_size) *buffer_size = k->kparam_size;
  return EMU_OK;
}
