/* ir/ir_module.c: modules, functions, parameters, variables and blocks.
 *
 * Everything lives in the module's arena (ir.h, "Ownership").  Arrays that
 * grow (m->globals, f->params, block preds) double into fresh arena memory
 * and abandon the old copy there: at most half of such memory is waste,
 * and nothing is ever freed on its own.
 *
 * Name index: module-scope variables (owner NULL) and functions are entered
 * into two maps (util/pw_map.h) of m->symtab when created, so
 * ir_module_find_* are O(1).  A second entity with the same name does not
 * replace the first (PTX declares a function before defining it; the front
 * end reuses the declaration).
 */
#include <string.h>

#include "ir_priv.h"
#include "util/diag.h"

/* ---- memory ----------------------------------------------------------- */

void *ir_alloc(pw_arena *a, size_t size) {
  void *p = pw_arena_alloc(a, size);
  if (!p) PW_DIE("out of memory (%zu bytes)", size);
  return p;
}

void *ir_alloc_array(pw_arena *a, size_t n, size_t elem) {
  if (elem && n > SIZE_MAX / 2 / elem) PW_DIE("array too large (%zu x %zu)", n, elem);
  return ir_alloc(a, n * elem);
}

void *ir_grow_array(pw_arena *a, void *old, size_t n, size_t want, size_t elem) {
  void *p = ir_alloc_array(a, want, elem);
  if (n) memcpy(p, old, n * elem);
  return p;
}

/* ---- module ----------------------------------------------------------- */

struct ir_symtab {
  pw_map globals, funcs;
};

ir_module *ir_module_create(const char *source_name) {
  pw_arena a;
  pw_arena_init(&a);
  ir_module *m = IR_NEW(&a, ir_module);
  m->arena = a;  /* the arena now lives in the module it allocated */
  m->address_size = 64;
  m->facts.wave_size = 32;
  m->source_name = pw_arena_strdup(&m->arena, source_name ? source_name : "<ir>");
  if (!m->source_name) PW_DIE("out of memory");
  m->symtab = IR_NEW(&m->arena, struct ir_symtab);
  pw_map_init(&m->symtab->globals, &m->arena, 16);
  pw_map_init(&m->symtab->funcs, &m->arena, 16);
  return m;
}

void ir_module_destroy(ir_module *m) {
  if (!m) return;
  pw_arena a = m->arena;  /* m itself is in the arena */
  pw_arena_free(&a);
}

ir_func *ir_module_find_func(const ir_module *m, const char *name) {
  return pw_map_str_get(&m->symtab->funcs, name, strlen(name));
}

/* Module-scope variables only; function-scope ones are found through their
 * function's scope by the front end. */
ir_global *ir_module_find_global(const ir_module *m, const char *name) {
  return pw_map_str_get(&m->symtab->globals, name, strlen(name));
}

/* Points the name index at f / g (its current name), replacing whatever
 * that name named: ir_link's merge and renames. */
void ir_symtab_set_func(ir_module *m, ir_func *f) {
  bool found;
  *pw_map_str_slot(&m->symtab->funcs, f->name, strlen(f->name), &found) = f;
}

void ir_symtab_set_global(ir_module *m, ir_global *g) {
  bool found;
  *pw_map_str_slot(&m->symtab->globals, g->name, strlen(g->name), &found) = g;
}

static const char *dup_name(ir_module *m, const char *name) {
  if (!name) return NULL;
  char *s = pw_arena_strdup(&m->arena, name);
  if (!s) PW_DIE("out of memory");
  return s;
}

/* ---- functions -------------------------------------------------------- */

ir_func *ir_func_new_unlinked(ir_module *m, const char *name, bool is_kernel) {
  ir_func *f = IR_NEW(&m->arena, ir_func);
  f->name = dup_name(m, name ? name : "");
  f->is_kernel = is_kernel;
  f->module = m;
  bool found;
  void **slot = pw_map_str_slot(&m->symtab->funcs, f->name, strlen(f->name), &found);
  if (!found) *slot = f;
  return f;
}

void ir_func_link(ir_func *f) {
  ir_module *m = f->module;
  if (m->last_func) m->last_func->next = f;
  else m->funcs = f;
  m->last_func = f;
  m->nfuncs++;
}

ir_func *ir_func_create(ir_module *m, const char *name, bool is_kernel) {
  ir_func *f = ir_func_new_unlinked(m, name, is_kernel);
  ir_func_link(f);
  return f;
}

static unsigned natural_align(ir_type t) {
  unsigned bytes = (ir_type_bits(t) + 7) / 8;
  return bytes ? bytes : 1;
}

static ir_param *add_param(ir_func *f, ir_param **arr, uint32_t *n, const char *name, ir_type type,
                           ir_space space, uint32_t align, uint64_t count) {
  /* Capacity is implicit: the next power of two (>= 4) above n. */
  uint32_t cap = ir_phi_cap(*n);
  if (*n == 0 || *n == cap) *arr = ir_grow_array(&f->module->arena, *arr, *n, *n ? cap * 2 : 4, sizeof(ir_param));
  ir_param *p = &(*arr)[(*n)++];
  memset(p, 0, sizeof(*p));
  p->name = dup_name(f->module, name);
  p->type = (uint8_t)type;
  p->space = (uint8_t)space;
  p->align = align ? align : natural_align(type);
  p->count = count;
  return p;
}

ir_param *ir_func_add_param(ir_func *f, const char *name, ir_type type, ir_space space,
                            uint32_t align, uint64_t count) {
  ir_param *p = add_param(f, &f->params, &f->nparams, name, type, space, align, count);
  if (space == IR_SPACE_REG) {
    ir_value *v = ir_value_create(f, IR_VAL_PARAM, type);
    v->index = (uint16_t)(f->nparams - 1);
    v->name = p->name;
    p->value = v;
  }
  return p;
}

/* Return parameters have no SSA value: a .func returns through .param
 * space (st.param to the ret symbol before ret). */
ir_param *ir_func_add_ret(ir_func *f, const char *name, ir_type type, ir_space space,
                          uint32_t align, uint64_t count) {
  return add_param(f, &f->rets, &f->nrets, name, type, space, align, count);
}

static void layout(ir_param *ps, uint32_t n) {
  uint64_t off = 0;
  for (uint32_t i = 0; i < n; i++) {
    ir_param *p = &ps[i];
    if (p->space == IR_SPACE_REG) continue;
    uint64_t a = p->align ? p->align : 1;
    off = (off + a - 1) / a * a;
    p->offset = off;
    off += p->count * natural_align(p->type);
  }
}

/* CUDA's kernel parameter layout: in order, each at the next multiple of
 * its alignment; the kernarg segment uses the same offsets (design.md). */
void ir_func_layout_params(ir_func *f) {
  layout(f->params, f->nparams);
  layout(f->rets, f->nrets);
}

/* ---- variables -------------------------------------------------------- */

ir_global *ir_global_create(ir_module *m, ir_func *owner, const char *name, ir_space space,
                            ir_type type, uint64_t count, uint32_t align) {
  ir_global *g = IR_NEW(&m->arena, ir_global);
  g->name = dup_name(m, name ? name : "");
  g->space = (uint8_t)space;
  g->type = (uint8_t)type;
  g->count = count;
  g->vec = 1;
  g->align = align ? align : natural_align(type);
  g->size = count * natural_align(type);
  g->owner = owner;
  if (m->nglobals == m->globals_cap) {
    uint32_t cap = m->globals_cap ? m->globals_cap * 2 : 16;
    m->globals = ir_grow_array(&m->arena, m->globals, m->nglobals, cap, sizeof(ir_global *));
    m->globals_cap = cap;
  }
  m->globals[m->nglobals++] = g;
  if (!owner) {
    bool found;
    void **slot = pw_map_str_slot(&m->symtab->globals, g->name, strlen(g->name), &found);
    if (!found) *slot = g;
  }
  return g;
}

/* ---- blocks ----------------------------------------------------------- */

ir_block *ir_block_new_unlinked(ir_func *f, const char *name) {
  ir_block *b = IR_NEW(&f->module->arena, ir_block);
  b->name = dup_name(f->module, name);
  b->func = f;
  b->id = f->nblocks++;
  return b;
}

void ir_block_link(ir_block *b) {
  ir_func *f = b->func;
  b->prev = f->last_block;
  if (f->last_block) f->last_block->next = b;
  else f->entry = b;
  f->last_block = b;
}

ir_block *ir_block_create(ir_func *f, const char *name) {
  ir_block *b = ir_block_new_unlinked(f, name);
  ir_block_link(b);
  return b;
}

ir_block *ir_block_create_after(ir_func *f, ir_block *after, const char *name) {
  if (!after || after == f->last_block) return ir_block_create(f, name);
  ir_block *b = ir_block_new_unlinked(f, name);
  b->prev = after;
  b->next = after->next;
  after->next->prev = b;
  after->next = b;
  return b;
}

void ir_block_add_pred(ir_block *b, ir_block *pred) {
  if (b->npreds == b->preds_cap) {
    uint32_t cap = b->preds_cap ? b->preds_cap * 2 : 2;
    b->preds = ir_grow_array(&b->func->module->arena, b->preds, b->npreds, cap, sizeof(ir_block *));
    b->preds_cap = cap;
  }
  b->preds[b->npreds++] = pred;
}

ir_instr *ir_block_terminator(const ir_block *b) {
  return b->last && ir_is_terminator(b->last) ? b->last : NULL;
}

/* The moved instructions keep their order; the successors of the moved
 * terminator now have the new block as predecessor in the old one's slot,
 * so their phis stay aligned. */
ir_block *ir_block_split_before(ir_instr *at, const char *name) {
  ir_block *old = at->block;
  ir_block *nb = ir_block_create_after(old->func, old, name);
  nb->first = at;
  nb->last = old->last;
  old->last = at->prev;
  if (at->prev) at->prev->next = NULL;
  else old->first = NULL;
  at->prev = NULL;
  for (ir_instr *i = at; i; i = i->next) i->block = nb;
  ir_instr *t = ir_block_terminator(nb);
  if (t) {
    for (uint32_t k = 0; k < t->ntargets; k++) {
      ir_block *s = t->targets[k];
      if (!s) continue;
      /* Replace one occurrence of old per edge, in order. */
      for (uint32_t j = 0; j < s->npreds; j++)
        if (s->preds[j] == old) {
          s->preds[j] = nb;
          break;
        }
    }
  }
  return nb;
}
