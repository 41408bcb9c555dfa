/* ir/ir_link.c: linking modules at the IR level (ir_link.h, docs/ir.md
 * "Linking").
 *
 * Algorithm, in two phases so that a failed link changes nothing:
 *   1. resolve: for each module-scope function and variable of src, look
 *      the name up in dst and decide (ir_link.h's table) which entity wins;
 *      the loser is recorded in a replacement map (loser -> winner).  A
 *      module-local name that meets any other entity of that name is
 *      renamed in src instead.  Errors are collected, then reported.
 *   2. merge: drop the losers from dst's function list and variable array,
 *      append src's survivors, rewrite every symbol reference of the merged
 *      module (instruction operands, keep values, call target lists,
 *      initializer relocations) through the map, and adopt src's arena.
 *
 * Invariants afterwards: a name names at most one module-scope entity;
 * every reference points to an entity in dst's lists; f->module is dst for
 * every function.  Value ids are per function, so they need no renumbering.
 *
 * Counterexample for "first declaration wins": dst declares
 * `.extern .func f` and calls it, src defines `.visible .func f`.  The
 * call's symbol value points to dst's declaration; it must be rewritten to
 * src's definition, or codegen would still see a call of an external
 * function.
 */
#include "ir_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir_priv.h"

typedef struct linker {
  ir_module *dst, *src;
  pw_diag *d;
  pw_map repl;      /* loser entity (ir_func* / ir_global*) -> winner */
  pw_arena scratch; /* repl's storage: freed at the end */
  int errors;
  /* dst entities that lose to src ones: removed from dst's lists */
  pw_map dst_losers;
} linker;

static const char *mod_name(const ir_module *m) { return m->source_name ? m->source_name : "<module>"; }

static void link_error(linker *L, const char *fmt, const char *name, const char *extra) {
  L->errors++;
  if (!L->d) return;
  char msg[512];
  snprintf(msg, sizeof msg, fmt, name, mod_name(L->dst), mod_name(L->src), extra ? extra : "");
  pw_error(L->d, mod_name(L->src), "%s", msg);
}

static bool func_defined(const ir_func *f) { return !f->is_decl; }
static bool global_defined(const ir_global *g) { return g->linkage != IR_LINK_EXTERN; }

/* Strength of a definition: a .visible one beats .weak/.common. */
static bool strong(uint8_t linkage) { return linkage == IR_LINK_VISIBLE || linkage == IR_LINK_INTERNAL; }

static void replace(linker *L, const void *loser, void *winner, bool loser_in_dst) {
  bool found;
  *pw_map_ptr_slot(&L->repl, loser, &found) = winner;
  if (loser_in_dst) *pw_map_ptr_slot(&L->dst_losers, loser, &found) = winner;
}

/* A fresh name for a module-local entity of src that meets another of its
 * name: name_pwl1, name_pwl2 ... not used in either module. */
static const char *fresh_name(linker *L, const char *name) {
  size_t n = strlen(name) + 24;
  char *buf = IR_NEW_ARRAY(&L->src->arena, char, n);
  for (unsigned k = 1;; k++) {
    snprintf(buf, n, "%s_pwl%u", name, k);
    if (!ir_module_find_func(L->dst, buf) && !ir_module_find_global(L->dst, buf) &&
        !ir_module_find_func(L->src, buf) && !ir_module_find_global(L->src, buf))
      return buf;
  }
}

/* Decides between dst's entity and src's of one name; *rename set when
 * src's must take a fresh name instead. */
static void resolve_func(linker *L, ir_func *sf, bool *rename) {
  const char *name = sf->name;
  ir_global *dg_other = ir_module_find_global(L->dst, name);
  ir_func *df = ir_module_find_func(L->dst, name);
  if (sf->linkage == IR_LINK_INTERNAL && func_defined(sf) && (df || dg_other)) {
    *rename = true;
    return;
  }
  if (dg_other && !df) {
    link_error(L, "symbol '%s' is a variable in %s and a function in %s%s", name, NULL);
    return;
  }
  if (!df) return;
  if (df->linkage == IR_LINK_INTERNAL && func_defined(df)) {
    /* dst's is module-local: src's (a declaration or another definition)
     * cannot bind to it; src's keeps the name only if nothing else does,
     * which the name map does not allow: rename src's if it is local,
     * else it is an error to hide dst's local one. */
    if (func_defined(sf) && sf->linkage == IR_LINK_INTERNAL) *rename = true;
    else link_error(L, "symbol '%s' is module-local in %s and external in %s%s", name, NULL);
    return;
  }
  if (df->is_kernel != sf->is_kernel) {
    link_error(L, "symbol '%s' is a kernel in one of %s and %s and a function in the other%s", name, NULL);
    return;
  }
  if (df->nparams != sf->nparams || df->nrets != sf->nrets) {
    char extra[96];
    snprintf(extra, sizeof extra, " (%u and %u parameters, %u and %u return values)", df->nparams,
             sf->nparams, df->nrets, sf->nrets);
    link_error(L, "function '%s' has different signatures in %s and %s%s", name, extra);
    return;
  }
  bool dd = func_defined(df), sd = func_defined(sf);
  if (dd && sd) {
    if (strong(df->linkage) && strong(sf->linkage)) {
      link_error(L, "symbol '%s' is multiply defined (in %s and in %s)%s", name, NULL);
      return;
    }
    if (!strong(df->linkage) && strong(sf->linkage)) replace(L, df, sf, true);
    else replace(L, sf, df, false);
  } else if (sd) {
    replace(L, df, sf, true);
  } else {
    replace(L, sf, df, false);
  }
}

static void resolve_global(linker *L, ir_global *sg, bool *rename) {
  const char *name = sg->name;
  ir_global *dg = ir_module_find_global(L->dst, name);
  ir_func *df_other = ir_module_find_func(L->dst, name);
  if (sg->linkage == IR_LINK_INTERNAL && (dg || df_other)) {
    *rename = true;
    return;
  }
  if (df_other && !dg) {
    link_error(L, "symbol '%s' is a function in %s and a variable in %s%s", name, NULL);
    return;
  }
  if (!dg) return;
  if (dg->linkage == IR_LINK_INTERNAL) {
    link_error(L, "symbol '%s' is module-local in %s and external in %s%s", name, NULL);
    return;
  }
  if (dg->space != sg->space) {
    link_error(L, "variable '%s' is in different state spaces in %s and %s%s", name, NULL);
    return;
  }
  bool dd = global_defined(dg), sd = global_defined(sg);
  if (dd && sd) {
    if (strong(dg->linkage) && strong(sg->linkage)) {
      link_error(L, "symbol '%s' is multiply defined (in %s and in %s)%s", name, NULL);
      return;
    }
    /* .common: the largest size wins (11.6.4); .visible beats both. */
    bool take_src = (!strong(dg->linkage) && strong(sg->linkage)) ||
                    (dg->linkage == IR_LINK_COMMON && sg->linkage == IR_LINK_COMMON && sg->size > dg->size);
    if (take_src) replace(L, dg, sg, true);
    else replace(L, sg, dg, false);
  } else if (sd) {
    replace(L, dg, sg, true);
  } else {
    replace(L, sg, dg, false);
  }
}

/* ---- phase 2: rewriting references ---------------------------------------- */

static void remap_symbol(const linker *L, ir_symbol *s) {
  if (s->kind == IR_SYM_FUNC) {
    ir_func *w = pw_map_ptr_get(&L->repl, s->func);
    if (w) s->func = w;
  } else if (s->kind == IR_SYM_GLOBAL) {
    ir_global *w = pw_map_ptr_get(&L->repl, s->global);
    if (w) s->global = w;
  }
}

static void remap_value(const linker *L, ir_value *v) {
  if (v && v->kind == IR_VAL_SYMBOL) remap_symbol(L, &v->symref.sym);
}

static void remap_func(const linker *L, ir_func *f) {
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    for (unsigned k = 0; k < i->nsrc; k++) remap_value(L, i->src[k]);
    if (i->keep)
      for (unsigned k = 0; k < i->ndst; k++) remap_value(L, i->keep[k]);
    remap_value(L, i->guard);
    if (i->op == ir_op_call && i->aux) {
      ir_call_info *ci = i->aux;
      for (uint32_t k = 0; k < ci->ntargets; k++) {
        ir_func *w = pw_map_ptr_get(&L->repl, ci->targets[k]);
        if (w) ci->targets[k] = w;
      }
    }
  }
}

static void enter_func(ir_module *m, ir_func *f) { ir_symtab_set_func(m, f); }
static void enter_global(ir_module *m, ir_global *g) { ir_symtab_set_global(m, g); }

static void push_global(ir_module *m, ir_global *g) {
  if (m->nglobals == m->globals_cap) {
    uint32_t cap = m->globals_cap ? m->globals_cap * 2 : 16;
    m->globals = ir_grow_array(&m->arena, m->globals, m->nglobals, cap, sizeof(ir_global *));
    m->globals_cap = cap;
  }
  m->globals[m->nglobals++] = g;
}

static void merge(linker *L) {
  ir_module *dst = L->dst, *src = L->src;
  /* functions: dst's survivors in order, then src's */
  ir_func *list = dst->funcs;
  dst->funcs = dst->last_func = NULL;
  dst->nfuncs = 0;
  for (ir_func *f = list, *next; f; f = next) {
    next = f->next;
    f->next = NULL;
    if (pw_map_ptr_get(&L->dst_losers, f)) continue;
    ir_func_link(f);
  }
  for (ir_func *f = src->funcs, *next; f; f = next) {
    next = f->next;
    f->next = NULL;
    if (pw_map_ptr_get(&L->repl, f)) continue;
    f->module = dst;
    ir_func_link(f);
    enter_func(dst, f);
  }
  /* variables */
  uint32_t n = 0;
  /* a variable goes with its function: a losing .weak definition's
   * function-scope variables are dropped with it */
  for (uint32_t k = 0; k < dst->nglobals; k++) {
    ir_global *g = dst->globals[k];
    if (pw_map_ptr_get(&L->dst_losers, g) || (g->owner && pw_map_ptr_get(&L->dst_losers, g->owner))) continue;
    dst->globals[n++] = g;
  }
  dst->nglobals = n;
  for (uint32_t k = 0; k < src->nglobals; k++) {
    ir_global *g = src->globals[k];
    if (pw_map_ptr_get(&L->repl, g) || (g->owner && pw_map_ptr_get(&L->repl, g->owner))) continue;
    push_global(dst, g);
    if (!g->owner) enter_global(dst, g);
  }
  /* references */
  ir_foreach_func(dst, f) remap_func(L, f);
  for (uint32_t k = 0; k < dst->nglobals; k++)
    for (uint32_t r = 0; r < dst->globals[k]->nrelocs; r++) remap_symbol(L, &dst->globals[k]->relocs[r].sym);
  /* module facts: the newest ISA and target of the inputs */
  if (src->ptx_version > dst->ptx_version) dst->ptx_version = src->ptx_version;
  if (src->sm > dst->sm) {
    dst->sm = src->sm;
    dst->sm_suffix = src->sm_suffix;
  }
  dst->debug |= src->debug;
  size_t len = strlen(mod_name(dst)) + strlen(mod_name(src)) + 2;
  char *name = IR_NEW_ARRAY(&dst->arena, char, len);
  snprintf(name, len, "%s+%s", mod_name(dst), mod_name(src));
  pw_arena_adopt(&dst->arena, &src->arena);  /* src's memory now dies with dst */
  dst->source_name = name;
}

bool ir_link(ir_module *dst, ir_module *src, pw_diag *d) {
  linker L = {.dst = dst, .src = src, .d = d};
  pw_arena_init(&L.scratch);
  pw_map_init(&L.repl, &L.scratch, 64);
  pw_map_init(&L.dst_losers, &L.scratch, 16);
  if (dst->address_size != src->address_size) {
    L.errors++;
    if (d)
      pw_error(d, mod_name(src), "cannot link a %u-bit module (%s) with a %u-bit one (%s)",
               src->address_size, mod_name(src), dst->address_size, mod_name(dst));
  }
  /* Module-local names of src that meet another entity are renamed: names
   * are collected first, renamed after (renaming changes the lookups). */
  size_t nren = 0;
  void **ren = calloc((size_t)src->nfuncs + src->nglobals + 1, sizeof *ren);
  bool *ren_func = calloc((size_t)src->nfuncs + src->nglobals + 1, sizeof *ren_func);
  if (!ren || !ren_func) PW_DIE("out of memory");
  ir_foreach_func(src, f) {
    bool rename = false;
    resolve_func(&L, f, &rename);
    if (rename) ren_func[nren] = true, ren[nren++] = f;
  }
  for (uint32_t k = 0; k < src->nglobals; k++) {
    ir_global *g = src->globals[k];
    if (g->owner) continue;
    bool rename = false;
    resolve_global(&L, g, &rename);
    if (rename) ren[nren++] = g;
  }
  bool ok = L.errors == 0;
  if (ok) {
    /* Renames happen in src's own name map too, so fresh names stay fresh. */
    for (size_t k = 0; k < nren; k++) {
      if (ren_func[k]) {
        ir_func *f = ren[k];
        f->name = fresh_name(&L, f->name);
        enter_func(src, f);
      } else {
        ir_global *g = ren[k];
        g->name = fresh_name(&L, g->name);
        enter_global(src, g);
      }
    }
    merge(&L);
  }
  free(ren);
  free(ren_func);
  pw_arena_free(&L.scratch);
  return ok;
}

/* ---- completeness ------------------------------------------------------------ */

typedef struct undef_state {
  const ir_module *m;
  pw_diag *d;
  pw_map seen;
  pw_arena scratch;
  int n;
} undef_state;

/* Functions CUDA provides to every module without a definition in PTX:
 * device printf, assert, and the device heap (PTX ISA 7.2 "System Calls"
 * lists vprintf, malloc, free; __assertfail is CUDA's assert()).  Each
 * backend supplies them (emu_decode.c's builtins).  The device runtime's
 * calls into the driver that libcudadevrt's device-side launch makes
 * (dynamic parallelism) are system calls too: the emulator supplies them,
 * codegen refuses a call of one by name. */
static const char *const system_calls[] = {
    "vprintf", "malloc", "free", "__assertfail",
    "__cuda_syscall_cnpv2GetParameterBufferV2", "__cuda_syscall_cnpv2LaunchDeviceV2",
    "__cuda_syscall_cnpv2GetLastError", "__cuda_syscall_cnpv2SetLastError",
};

static bool is_system_call(const char *name) {
  for (size_t k = 0; k < sizeof system_calls / sizeof system_calls[0]; k++)
    if (!strcmp(name, system_calls[k])) return true;
  return false;
}

static bool undefined_symbol(const ir_symbol *s, const char **name, const void **key) {
  if (s->kind == IR_SYM_FUNC && s->func->is_decl && !is_system_call(s->func->name)) {
    *name = s->func->name;
    *key = s->func;
    return true;
  }
  if (s->kind == IR_SYM_GLOBAL && !global_defined(s->global) && !s->global->is_extern_shared &&
      s->global->space != IR_SPACE_SHARED) {
    *name = s->global->name;
    *key = s->global;
    return true;
  }
  return false;
}

static void note_undefined(undef_state *u, const ir_symbol *s, ir_loc loc, const char *where) {
  const char *name;
  const void *key;
  if (!undefined_symbol(s, &name, &key)) return;
  bool found;
  pw_map_ptr_slot(&u->seen, key, &found);
  if (found) return;
  u->n++;
  if (!u->d) return;
  pw_src src = {.path = mod_name(u->m)};
  pw_error_at(u->d, &src, loc.line, loc.col, "undefined symbol '%s' (used by %s)", name, where);
}

bool ir_link_check_defined(const ir_module *m, pw_diag *d) {
  undef_state u = {.m = m, .d = d};
  pw_arena_init(&u.scratch);
  pw_map_init(&u.seen, &u.scratch, 16);
  ir_foreach_func(m, f) ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    for (unsigned k = 0; k < i->nsrc; k++)
      if (i->src[k] && i->src[k]->kind == IR_VAL_SYMBOL) note_undefined(&u, &i->src[k]->symref.sym, i->loc, f->name);
    if (i->op == ir_op_call && i->aux) {
      const ir_call_info *ci = i->aux;
      for (uint32_t k = 0; k < ci->ntargets; k++) note_undefined(&u, &(ir_symbol){.kind = IR_SYM_FUNC, .func = ci->targets[k]}, i->loc, f->name);
    }
  }
  for (uint32_t k = 0; k < m->nglobals; k++)
    for (uint32_t r = 0; r < m->globals[k]->nrelocs; r++)
      note_undefined(&u, &m->globals[k]->relocs[r].sym, m->globals[k]->loc, m->globals[k]->name);
  pw_arena_free(&u.scratch);
  return u.n == 0;
}

/* In rounds of neighbouring pairs (0+1, 2+3, ... then the results), which
 * keeps the modules' order (the first of two weak definitions still wins)
 * and does the same links as one at a time into mods[0]: ir_link walks
 * all of dst's code to rebind it, so linking one module at a time into a
 * growing one costs the square of the number of modules.  NCCL's
 * device-linked module is 127 relocatable modules, 136 MB of PTX: one at
 * a time, the links took 45 s of the 80 s to load it on the emulator. */
ir_module *ir_link_modules(ir_module **mods, unsigned n, bool allow_undefined, pw_diag *d) {
  if (n == 0) return NULL;
  ir_module **live = malloc((size_t)n * sizeof *live);
  if (!live) PW_DIE("out of memory");
  memcpy(live, mods, (size_t)n * sizeof *live);
  unsigned nlive = n;
  bool ok = true;
  while (ok && nlive > 1) {
    unsigned out = 0, k = 0;
    for (; k < nlive; k += 2) {
      if (k + 1 < nlive && !ir_link(live[k], live[k + 1], d)) {
        ok = false;
        break;
      }
      live[out++] = live[k];
    }
    if (!ok) {
      /* the modules of this round not linked yet, and the results so far */
      for (unsigned j = k; j < nlive; j++) ir_module_destroy(live[j]);
      for (unsigned j = 0; j < out; j++) ir_module_destroy(live[j]);
      free(live);
      return NULL;
    }
    nlive = out;
  }
  ir_module *dst = live[0];
  free(live);
  if (!allow_undefined && !ir_link_check_defined(dst, d)) {
    ir_module_destroy(dst);
    return NULL;
  }
  return dst;
}

/* ---- ir_link_drop_unreached: device functions no kernel reaches ----------
 * Reachability from the kernels, the declarations and the variables'
 * initializers, through symbol operands (calls, addresses taken, guards'
 * keep values) and .calltargets lists; a depth-first walk. */
typedef struct reach {
  ir_func **fn;      /* the module's functions, in order */
  struct fn_at { const ir_func *f; uint32_t k; } *by_addr;   /* sorted by address */
  uint8_t *live;
  uint32_t n, *stack, sp;
} reach;

static int by_addr_cmp(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const struct fn_at *)a)->f, y = (uintptr_t)((const struct fn_at *)b)->f;
  return x < y ? -1 : x > y;
}

static uint32_t func_index(const reach *R, const ir_func *f) {
  const struct fn_at key = {f, 0}, *hit = bsearch(&key, R->by_addr, R->n, sizeof key, by_addr_cmp);
  return hit ? hit->k : UINT32_MAX;
}

static void reach_func(reach *R, const ir_func *f) {
  uint32_t k = f ? func_index(R, f) : UINT32_MAX;
  if (k == UINT32_MAX || R->live[k]) return;
  R->live[k] = 1;
  R->stack[R->sp++] = k;
}

static void reach_value(reach *R, const ir_value *v) {
  if (v && v->kind == IR_VAL_SYMBOL && v->symref.sym.kind == IR_SYM_FUNC) reach_func(R, v->symref.sym.func);
}

static void drop_unreached(ir_module *m, bool from_visible);

void ir_link_drop_unreached(ir_module *m) { drop_unreached(m, false); }
void ir_link_drop_unreached_local(ir_module *m) { drop_unreached(m, true); }

static void drop_unreached(ir_module *m, bool from_visible) {
  reach R = {0};
  ir_foreach_func(m, f) R.n++;
  R.fn = calloc(R.n ? R.n : 1, sizeof *R.fn);
  R.by_addr = calloc(R.n ? R.n : 1, sizeof *R.by_addr);
  R.live = calloc(R.n ? R.n : 1, 1);
  R.stack = calloc(R.n ? R.n : 1, sizeof *R.stack);
  if (!R.fn || !R.by_addr || !R.live || !R.stack) goto out;   /* nothing dropped: still correct */
  uint32_t n = 0;
  ir_foreach_func(m, f) {
    R.by_addr[n] = (struct fn_at){f, n};
    R.fn[n++] = f;
  }
  qsort(R.by_addr, R.n, sizeof *R.by_addr, by_addr_cmp);
  ir_foreach_func(m, f) {
    if (f->is_kernel || f->is_decl || (from_visible && f->linkage != IR_LINK_INTERNAL)) reach_func(&R, f);
  }
  for (uint32_t g = 0; g < m->nglobals; g++)
    for (uint32_t r = 0; r < m->globals[g]->nrelocs; r++)
      if (m->globals[g]->relocs[r].sym.kind == IR_SYM_FUNC) reach_func(&R, m->globals[g]->relocs[r].sym.func);
  while (R.sp) {
    const ir_func *f = R.fn[R.stack[--R.sp]];
    ir_foreach_block(f, b) ir_foreach_instr(b, i) {
      for (unsigned k = 0; k < i->nsrc; k++) reach_value(&R, i->src[k]);
      if (i->keep)
        for (unsigned k = 0; k < i->ndst; k++) reach_value(&R, i->keep[k]);
      if (i->op == ir_op_call && i->aux) {
        const ir_call_info *ci = i->aux;
        for (uint32_t t = 0; t < ci->ntargets; t++) reach_func(&R, ci->targets[t]);
      }
    }
  }
  /* unlink the dead (their memory is the module arena's): live[] becomes
   * the drop list, in the module's order like R.fn */
  for (uint32_t k = 0; k < R.n; k++) R.live[k] = !R.live[k];
  ir_link_remove_funcs(m, R.live);
out:
  free(R.fn);
  free(R.by_addr);
  free(R.live);
  free(R.stack);
}

/* ---- per-kernel failure ----------------------------------------------------
 * Each function's callees as indices (the edges of reach_value above), then
 * a fixed point: a function fails if it has failed_at or a callee fails.
 * Recursion converges: a cause, once set, never changes. */
typedef struct edges {
  uint32_t *to, n, cap;
} edges;

static bool edge_add(edges *E, uint32_t k) {
  if (k == UINT32_MAX) return true;
  if (E->n == E->cap) {
    uint32_t nc = E->cap ? E->cap * 2 : 8;
    uint32_t *t = realloc(E->to, nc * sizeof *t);
    if (!t) return false;
    E->to = t;
    E->cap = nc;
  }
  E->to[E->n++] = k;
  return true;
}

static uint32_t value_callee(const reach *R, const ir_value *v) {
  return v && v->kind == IR_VAL_SYMBOL && v->symref.sym.kind == IR_SYM_FUNC ? func_index(R, v->symref.sym.func)
                                                                         : UINT32_MAX;
}

bool ir_link_failure_causes(const ir_module *m, const ir_func **cause) {
  reach R = {0};
  ir_foreach_func(m, f) R.n++;
  R.fn = calloc(R.n ? R.n : 1, sizeof *R.fn);
  R.by_addr = calloc(R.n ? R.n : 1, sizeof *R.by_addr);
  edges *E = calloc(R.n ? R.n : 1, sizeof *E);
  bool ok = R.fn && R.by_addr && E;
  uint32_t n = 0;
  if (ok) {
    ir_foreach_func(m, f) {
      R.by_addr[n] = (struct fn_at){f, n};
      R.fn[n++] = (ir_func *)f;
    }
    qsort(R.by_addr, R.n, sizeof *R.by_addr, by_addr_cmp);
  }
  for (uint32_t k = 0; ok && k < R.n; k++) {
    cause[k] = R.fn[k]->failed_at ? R.fn[k] : NULL;
    ir_foreach_block(R.fn[k], b) ir_foreach_instr(b, i) {
      for (unsigned s = 0; ok && s < i->nsrc; s++) ok = edge_add(&E[k], value_callee(&R, i->src[s]));
      if (i->keep)
        for (unsigned s = 0; ok && s < i->ndst; s++) ok = edge_add(&E[k], value_callee(&R, i->keep[s]));
      if (ok && i->op == ir_op_call && i->aux) {
        const ir_call_info *ci = i->aux;
        for (uint32_t t = 0; ok && t < ci->ntargets; t++) ok = edge_add(&E[k], func_index(&R, ci->targets[t]));
      }
    }
  }
  for (bool changed = ok; changed;) {
    changed = false;
    for (uint32_t k = 0; k < R.n; k++) {
      if (cause[k]) continue;
      for (uint32_t e = 0; e < E[k].n; e++)
        if (cause[E[k].to[e]]) {
          cause[k] = cause[E[k].to[e]];
          changed = true;
          break;
        }
    }
  }
  for (uint32_t k = 0; E && k < R.n; k++) free(E[k].to);
  free(E);
  free(R.fn);
  free(R.by_addr);
  return ok;
}

void ir_link_remove_funcs(ir_module *m, const uint8_t *drop) {
  ir_func *prev = NULL, *next;
  uint32_t k = 0;
  m->nfuncs = 0;
  for (ir_func *f = m->funcs; f; f = next, k++) {
    next = f->next;
    if (drop[k]) continue;
    if (prev) prev->next = f;
    else m->funcs = f;
    prev = f;
    m->nfuncs++;
  }
  if (prev) prev->next = NULL;
  else m->funcs = NULL;
  m->last_func = prev;
}
