/* emu/emu_decode.c: IR function -> emu_func, once per module load.
 *
 * What decoding does, so that running does as little as possible:
 *   - orders the blocks in a weak topological order (Bourdoncle 1993):
 *     every loop is a contiguous range headed by its header, and every
 *     edge that is not a loop back edge goes forward.  The emulator runs the
 *     lanes with the smallest pc first (emu_exec.c), so lanes that left a
 *     loop or an if wait at the join for the others: with this order the
 *     first block where all lanes meet again is the immediate post-dominator
 *     of the branch that split them (or earlier, where lanes meet after an
 *     exit path);
 *   - gives every SSA value a slot of the register file (offset in bytes),
 *     every constant a splatted cell of a per-function constant pool, and
 *     every frame-relative symbol (locals, .param variables, shared
 *     variables whose offset depends on the kernel) a slot written on frame
 *     entry;
 *   - turns the phis of a block into a parallel copy on each incoming edge,
 *     run by the lanes that take that edge;
 *   - picks one handler per instruction from its op, types and modifiers
 *     (the family selectors: emu_sel_*), or records why it cannot run.
 *
 * Invariant: code[] holds the instructions of the blocks in WTO order, no
 * phis; a branch's edges name the index of the target's first instruction.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emu_internal.h"
#include "util/pw_map.h"

/* ---- pointer -> index maps (util/pw_map.h, malloc'd) -------------------- */
static bool index_get(const pw_map *m, const void *k, uint32_t *v) {
  const pw_map_entry *e = pw_map_ptr_find(m, k);
  if (e) *v = (uint32_t)(uintptr_t)e->val;
  return e != NULL;
}

static void index_put(pw_map *m, const void *k, uint32_t v) {
  pw_map_ptr_put(m, k, (void *)(uintptr_t)v);
}

/* ---- the decoder -------------------------------------------------------- */
struct emu_decoder {
  emu_module *em;
  emu_func *ef;
  const ir_func *f;
  pw_arena *arena;
  unsigned wave;
  /* register file */
  uint32_t *slot_of;        /* per value id; UINT32_MAX unassigned */
  uint32_t nvalues;
  uint32_t regs_size;
  /* constant pool: growable buffer + dedupe by (bits, cls) */
  uint8_t *consts;
  uint32_t consts_size, consts_cap;
  uint32_t *chash;          /* open addressing over the constants: index + 1 */
  uint32_t chash_cap;       /* a power of two, at least twice nconsts */
  uint64_t *ckeys;
  uint8_t *ccls;
  uint32_t *coffs;
  uint32_t nconsts, cconsts_cap;
  /* symbol slots, found by hash (open addressing: index + 1) */
  emu_symslot *syms;
  uint32_t nsyms, syms_cap;
  uint32_t *shash, shash_cap;
  /* frame locals: ir_global or ir_param -> offset in the frame */
  pw_map local_off;
  uint64_t frame_local;     /* 64-bit: a frame past 4 GiB is an error, not a wrap */
  /* blocks */
  const ir_block **blocks;  /* by local block number */
  uint32_t nblocks;
  pw_map block_num;
  uint32_t *start;          /* first instruction of each block number */
  /* shared variables referenced */
  uint32_t *shared_used;
  uint32_t nshared_used, shared_used_cap;
  uint8_t *shared_seen;     /* by module shared index, once one is used */
  emu_func **callees;
  uint32_t ncallees, callees_cap;
  pw_map callee_set;
  /* phi operand of an edge at a block of many predecessors: (to, from) ->
   * the first predecessor slot, pred_next[] the next slot of the same pair */
  pw_map pred_first;
  uint32_t *pred_next;      /* by slot: to's base + index in to->preds */
  uint32_t *pred_base;      /* by block number; UINT32_MAX: not indexed yet */
  uint32_t npred_slots, pred_next_cap;
  /* module-level maps */
  pw_map *gvar_index;       /* ir_global -> index in em->gvars, or shared index | SHARED_BIT */
  pw_map *func_index;       /* ir_func -> index */
  const char *error;
  uint32_t *order;          /* blocks in execution order (WTO) */
  pw_arena scratch;         /* the maps' tables */
  jmp_buf *oom;             /* out of host memory unwinds to decode_func */
};

_Noreturn static void decode_oom(emu_decoder *d) { longjmp(*d->oom, 1); }

#define SHARED_BIT 0x80000000u

/* p with room for need elements (capacity *cap, doubled); NULL when the
 * memory is not there or need past 2^31 (p is left as it was). */
static void *grow_or_null(void *p, uint32_t *cap, uint32_t need, size_t elem) {
  if (need <= *cap) return p;
  if (need > (1u << 31)) return NULL;
  uint32_t nc = *cap ? *cap : 16;
  while (nc < need) nc *= 2;
  void *np = realloc(p, (size_t)nc * elem);
  if (!np) return NULL;
  *cap = nc;
  return np;
}

/* The same, unwinding to decode_func when it fails. */
static void *grow(emu_decoder *d, void *p, uint32_t *cap, uint32_t need, size_t elem) {
  void *np = grow_or_null(p, cap, need, elem);
  if (!np) decode_oom(d);
  return np;
}

#define dfmt emu_dfmt
const char *emu_dfmt(emu_decoder *d, const char *fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return pw_arena_strdup(d->arena, buf);
}

static unsigned value_cls(ir_type t) {
  if (t == ir_type_pred) return EMU_CLS_PRED;
  if (ir_type_bits(t) > 64) return EMU_CLS_WIDE;
  return EMU_CLS_LANE;
}

static uint32_t cls_bytes(emu_decoder *d, unsigned cls) {
  return cls == EMU_CLS_PRED ? 8 : cls == EMU_CLS_WIDE ? 16 * d->wave : 8 * d->wave;
}

static emu_opnd new_slot(emu_decoder *d, unsigned cls) {
  uint32_t off = d->regs_size;
  d->regs_size += cls_bytes(d, cls);
  return off;
}

static emu_opnd value_slot(emu_decoder *d, const ir_value *v) {
  if (v->id >= d->nvalues) {
    /* a value the function's count does not cover: give it a fresh slot */
    return new_slot(d, value_cls((ir_type)v->type));
  }
  if (d->slot_of[v->id] == UINT32_MAX) d->slot_of[v->id] = new_slot(d, value_cls((ir_type)v->type));
  return d->slot_of[v->id];
}

static uint32_t const_hash(uint64_t bits, unsigned cls) {
  uint64_t h = (bits ^ ((uint64_t)cls << 59)) * 0x9e3779b97f4a7c15ull;
  return (uint32_t)(h >> 32);
}

/* A constant: splatted over the wave (a predicate constant is a mask).
 * Each distinct (bits, class) once, found through chash: a linear search
 * made loading a module with 400k constants take 29 s. */
static emu_opnd const_opnd(emu_decoder *d, uint64_t bits, unsigned cls) {
  if (d->chash_cap) {
    for (uint32_t j = const_hash(bits, cls) & (d->chash_cap - 1);; j = (j + 1) & (d->chash_cap - 1)) {
      uint32_t i = d->chash[j];
      if (!i) break;
      if (d->ckeys[i - 1] == bits && d->ccls[i - 1] == cls) return d->coffs[i - 1] | EMU_OPND_CONST;
    }
  }
  if ((d->nconsts + 1) * 2 > d->chash_cap) {
    uint32_t cap = d->chash_cap ? d->chash_cap * 2 : 64;
    uint32_t *nh = calloc(cap, sizeof *nh);
    if (!nh) decode_oom(d);
    for (uint32_t i = 0; i < d->nconsts; i++) {
      uint32_t j = const_hash(d->ckeys[i], d->ccls[i]) & (cap - 1);
      while (nh[j]) j = (j + 1) & (cap - 1);
      nh[j] = i + 1;
    }
    free(d->chash);
    d->chash = nh;
    d->chash_cap = cap;
  }
  {
    uint32_t j = const_hash(bits, cls) & (d->chash_cap - 1);
    while (d->chash[j]) j = (j + 1) & (d->chash_cap - 1);
    d->chash[j] = d->nconsts + 1;
  }
  uint32_t bytes = cls_bytes(d, cls);
  d->consts = grow(d, d->consts, &d->consts_cap, d->consts_size + bytes, 1);
  uint8_t *p = d->consts + d->consts_size;
  if (cls == EMU_CLS_PRED) {
    uint64_t m = bits ? ~0ull : 0;
    memcpy(p, &m, 8);
  } else if (cls == EMU_CLS_WIDE) {
    for (unsigned l = 0; l < d->wave; l++) {
      memcpy(p + 16 * l, &bits, 8);
      memset(p + 16 * l + 8, 0, 8);
    }
  } else {
    for (unsigned l = 0; l < d->wave; l++) memcpy(p + 8 * l, &bits, 8);
  }
  uint32_t off = d->consts_size;
  d->consts_size += bytes;
  uint32_t cap = d->cconsts_cap;
  d->ckeys = grow(d, d->ckeys, &cap, d->nconsts + 1, sizeof *d->ckeys);
  cap = d->cconsts_cap;
  d->ccls = grow(d, d->ccls, &cap, d->nconsts + 1, sizeof *d->ccls);
  d->coffs = grow(d, d->coffs, &d->cconsts_cap, d->nconsts + 1, sizeof *d->coffs);
  d->ckeys[d->nconsts] = bits;
  d->ccls[d->nconsts] = (uint8_t)cls;
  d->coffs[d->nconsts] = off;
  d->nconsts++;
  return off | EMU_OPND_CONST;
}

static uint32_t sym_hash(uint8_t kind, uint32_t index, int64_t offset) {
  uint64_t h = ((uint64_t)offset * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)index << 8 | kind);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return (uint32_t)(h ^ h >> 32);
}

/* One slot per (kind, index, offset), found by hash: a linear search made a
 * function of many distinct parameters or frame offsets quadratic to load
 * (8,000 parameters: seconds). */
static emu_opnd sym_slot(emu_decoder *d, uint8_t kind, uint32_t index, int64_t offset) {
  if (d->shash_cap) {
    uint32_t j = sym_hash(kind, index, offset) & (d->shash_cap - 1);
    for (; d->shash[j]; j = (j + 1) & (d->shash_cap - 1)) {
      const emu_symslot *e = &d->syms[d->shash[j] - 1];
      if (e->kind == kind && e->index == index && e->offset == offset) return e->slot;
    }
  }
  if (2 * (d->nsyms + 1) > d->shash_cap) {
    uint32_t cap = d->shash_cap ? d->shash_cap * 2 : 64;
    uint32_t *nh = calloc(cap, sizeof *nh);
    if (!nh) decode_oom(d);
    for (uint32_t i = 0; i < d->nsyms; i++) {
      uint32_t j = sym_hash(d->syms[i].kind, d->syms[i].index, d->syms[i].offset) & (cap - 1);
      while (nh[j]) j = (j + 1) & (cap - 1);
      nh[j] = i + 1;
    }
    free(d->shash);
    d->shash = nh;
    d->shash_cap = cap;
  }
  d->syms = grow(d, d->syms, &d->syms_cap, d->nsyms + 1, sizeof *d->syms);
  emu_opnd s = new_slot(d, EMU_CLS_LANE);
  uint32_t j = sym_hash(kind, index, offset) & (d->shash_cap - 1);
  while (d->shash[j]) j = (j + 1) & (d->shash_cap - 1);
  d->shash[j] = d->nsyms + 1;
  d->syms[d->nsyms++] = (emu_symslot){.slot = s, .kind = kind, .index = index, .offset = offset};
  return s;
}

static uint32_t align_up(uint32_t v, uint32_t a) { return a ? (v + a - 1) / a * a : v; }

static uint32_t type_bytes(ir_type t) {
  unsigned b = ir_type_bits(t);
  return b < 8 ? 1 : b / 8;
}

/* Sizes are 64-bit (the parser allows up to 2^48 bytes): layouts check
 * them against their limits instead of wrapping (a 4 GiB .shared array
 * once laid out as 0 bytes, the next variable aliasing it). */
static uint64_t global_bytes(const ir_global *g) {
  if (g->size) return g->size;
  return (g->count ? g->count : 1) * (g->vec ? g->vec : 1) * type_bytes((ir_type)g->type);
}

static uint64_t param_bytes(const ir_param *p) {
  return type_bytes((ir_type)p->type) * (p->count ? p->count : 1);
}

/* The emulator's limits: one frame's local memory (the launch also checks
 * it against the stack size), a block's shared memory (emu_sched.c checks
 * the total with the dynamic part), a kernel's parameters (CUDA's 32764
 * bytes, PTX ISA 8.1 and later). */
#define EMU_FRAME_MAX 0x7fffffffull
#define EMU_SHARED_MAX (1024u * 1024u)
#define EMU_KPARAM_MAX 32764u

static uint32_t param_align(const ir_param *p) {
  uint32_t a = p->align ? p->align : type_bytes((ir_type)p->type);
  return a ? a : 1;
}

/* Offset of a frame-local thing (a .local or .param variable of this
 * function, or one of its .param parameters), allocated on first use. */
static uint32_t frame_local(emu_decoder *d, const void *key, uint64_t bytes, uint32_t align) {
  uint32_t off;
  if (index_get(&d->local_off, key, &off)) return off;
  if (align < 1) align = 1;
  if (align > 256) align = 256;
  /* past EMU_FRAME_MAX the function is refused (emu_decode_func), so the
   * offsets handed out meanwhile are never used */
  uint64_t at = (d->frame_local + align - 1) / align * align;
  off = at > EMU_FRAME_MAX ? 0 : (uint32_t)at;
  d->frame_local = at + (bytes ? bytes : 1);
  if (d->frame_local > EMU_FRAME_MAX + 1) d->frame_local = EMU_FRAME_MAX + 1;
  index_put(&d->local_off, key, off);
  return off;
}

/* The lists are sets: a flag per shared variable and a map of callees (a
 * search of the list per use was quadratic in a function's callees). */
static void note_shared(emu_decoder *d, uint32_t idx) {
  if (!d->shared_seen) d->shared_seen = calloc(d->em->nshared ? d->em->nshared : 1, 1);
  if (!d->shared_seen) decode_oom(d);
  if (idx >= d->em->nshared) {
    d->error = "internal: shared variable index out of range";
    return;
  }
  if (d->shared_seen[idx]) return;
  d->shared_seen[idx] = 1;
  d->shared_used = grow(d, d->shared_used, &d->shared_used_cap, d->nshared_used + 1, sizeof(uint32_t));
  d->shared_used[d->nshared_used++] = idx;
}

static void note_callee(emu_decoder *d, emu_func *c) {
  bool found;
  pw_map_ptr_slot(&d->callee_set, c, &found);
  if (found) return;
  d->callees = grow(d, d->callees, &d->callees_cap, d->ncallees + 1, sizeof *d->callees);
  d->callees[d->ncallees++] = c;
}

static bool is_param_space(unsigned s) {
  return s == IR_SPACE_PARAM || s == IR_SPACE_PARAM_ENTRY || s == IR_SPACE_PARAM_FUNC;
}

/* Where a symbol lives, for memory operands: the operand giving its address
 * and the space the access goes to.  Also used for symbol values (mov). */
typedef struct symres {
  emu_opnd opnd;
  unsigned space;   /* EMU_SP_* the address is in */
} symres;

static symres resolve_symbol(emu_decoder *d, const ir_value *v, bool as_value) {
  const ir_symbol *s = &v->symref.sym;
  int64_t off = v->symref.offset;
  symres r = {EMU_OPND_NONE, EMU_SP_GENERIC};
  switch (s->kind) {
  case IR_SYM_FUNC: {
    uint32_t idx = 0;
    index_get(d->func_index, s->func, &idx);
    r.opnd = const_opnd(d, EMU_WIN_FUNC + (uint64_t)idx * 16 + (uint64_t)off, EMU_CLS_LANE);
    r.space = EMU_SP_GLOBAL;
    return r;
  }
  case IR_SYM_PARAM: {
    const ir_param *p = s->param;
    if (d->f->is_kernel && p->space != IR_SPACE_REG) {
      /* one of this kernel's own parameters (an address compare, not a
       * search of the list per reference: quadratic in the parameters) */
      uintptr_t pa = (uintptr_t)p, lo = (uintptr_t)d->f->params;
      if (d->f->nparams && pa >= lo && pa < (uintptr_t)(d->f->params + d->f->nparams)) {
        r.opnd = const_opnd(d, EMU_WIN_PARAM + p->offset + (uint64_t)off, EMU_CLS_LANE);
        r.space = EMU_SP_PARAM;
        return r;
      }
    }
    /* a .param parameter or return of a device function: per lane, in the frame */
    uint32_t lo = frame_local(d, p, param_bytes(p), param_align(p));
    if (as_value) {
      r.opnd = sym_slot(d, EMU_SYM_LOCAL_GENERIC, 0, (int64_t)lo + off);
      r.space = EMU_SP_GENERIC;
    } else {
      r.opnd = sym_slot(d, EMU_SYM_LOCAL, 0, (int64_t)lo + off);
      r.space = EMU_SP_LOCAL;
    }
    return r;
  }
  case IR_SYM_GLOBAL: {
    const ir_global *g = s->global;
    switch ((ir_space)g->space) {
    case IR_SPACE_SHARED: case IR_SPACE_SHARED_CTA: case IR_SPACE_SHARED_CLUSTER: {
      uint32_t idx;
      if (!index_get(d->gvar_index, g, &idx) || !(idx & SHARED_BIT)) {
        d->error = dfmt(d, "shared variable '%s' is not known to the module", g->name);
        return r;
      }
      idx &= ~SHARED_BIT;
      note_shared(d, idx);
      r.opnd = sym_slot(d, EMU_SYM_SHARED, idx, off);
      r.space = EMU_SP_SHARED;
      return r;
    }
    case IR_SPACE_LOCAL: {
      uint32_t lo = frame_local(d, g, global_bytes(g), g->align);
      r.opnd = sym_slot(d, EMU_SYM_LOCAL, 0, (int64_t)lo + off);
      r.space = EMU_SP_LOCAL;
      return r;
    }
    case IR_SPACE_PARAM: case IR_SPACE_PARAM_ENTRY: case IR_SPACE_PARAM_FUNC: {
      uint32_t lo = frame_local(d, g, global_bytes(g), g->align);
      if (as_value) {
        r.opnd = sym_slot(d, EMU_SYM_LOCAL_GENERIC, 0, (int64_t)lo + off);
        r.space = EMU_SP_GENERIC;
      } else {
        r.opnd = sym_slot(d, EMU_SYM_LOCAL, 0, (int64_t)lo + off);
        r.space = EMU_SP_LOCAL;
      }
      return r;
    }
    case IR_SPACE_GLOBAL: case IR_SPACE_CONST: case IR_SPACE_GENERIC: {
      uint32_t idx;
      if (!index_get(d->gvar_index, g, &idx) || (idx & SHARED_BIT) || !d->em->gvars[idx].host) {
        d->error = dfmt(d, "variable '%s' has no storage (extern and not defined in this module?)",
                        g->name);
        return r;
      }
      r.opnd = const_opnd(d, (uint64_t)(uintptr_t)d->em->gvars[idx].host + (uint64_t)off, EMU_CLS_LANE);
      r.space = g->space == IR_SPACE_CONST ? EMU_SP_CONST : EMU_SP_GLOBAL;
      return r;
    }
    default:
      d->error = dfmt(d, "variable '%s' in the %s state space is not supported", g->name,
                      ir_space_name((ir_space)g->space));
      return r;
    }
  }
  }
  return r;
}

/* The operand for a value used as a source. */
static emu_opnd src_opnd(emu_decoder *d, const ir_value *v) {
  if (!v) return EMU_OPND_NONE;
  switch ((ir_value_kind)v->kind) {
  case IR_VAL_INSTR:
  case IR_VAL_PARAM:
    return value_slot(d, v);
  case IR_VAL_CONST: {
    unsigned cls = value_cls((ir_type)v->type);
    uint64_t bits = v->imm;
    if (cls == EMU_CLS_LANE && v->type != ir_type_none)
      bits &= emu_type_mask(ir_type_bits((ir_type)v->type) ? ir_type_bits((ir_type)v->type) : 64);
    return const_opnd(d, bits, cls);
  }
  case IR_VAL_UNDEF:
    return const_opnd(d, 0, value_cls((ir_type)v->type));
  case IR_VAL_SYMBOL:
    return resolve_symbol(d, v, true).opnd;
  }
  return EMU_OPND_NONE;
}

/* ---- block order: Bourdoncle's weak topological order ------------------- */
typedef struct wto_frame {
  uint32_t v, k, head;
  uint8_t component;        /* 0: visit(v); 1: component(v) */
  uint8_t loop, pending;    /* visit: a back edge seen; a child visit's result is due */
} wto_frame;

typedef struct wto {
  uint32_t n;
  uint32_t **succ, *nsucc;
  uint32_t *dfn, *stack, sp, num, *out, outpos;
  wto_frame *frames;        /* the recursion, explicit: at most 2n deep */
  uint32_t nframes;
} wto;

#define WTO_INF UINT32_MAX

static void wto_prepend(wto *w, uint32_t v) { w->out[--w->outpos] = v; }

static void wto_push_visit(wto *w, uint32_t v) {
  w->stack[w->sp++] = v;
  w->dfn[v] = ++w->num;
  w->frames[w->nframes++] = (wto_frame){.v = v, .k = w->nsucc[v], .head = w->dfn[v]};
}

/* Bourdoncle's visit/component recursion (1993) with its frames on a heap
 * stack: the recursive form overflowed the C stack on a function of
 * 200,000 blocks (scale_bench domwide at 65,536 diamonds: SIGSEGV, in the
 * runtime inside the application's thread).  Successors are taken in
 * reverse in visit so the first target comes first in the order. */
static void wto_run(wto *w, uint32_t root) {
  uint32_t ret = 0;
  wto_push_visit(w, root);
  while (w->nframes) {
    wto_frame *f = &w->frames[w->nframes - 1];
    uint32_t v = f->v;
    if (f->component) {
      bool pushed = false;
      while (f->k < w->nsucc[v] && !pushed) {
        uint32_t s = w->succ[v][f->k++];
        if (w->dfn[s] == 0) {
          wto_push_visit(w, s);   /* its result is not used */
          pushed = true;
        }
      }
      if (pushed) continue;
      wto_prepend(w, v);
      ret = f->head;
      w->nframes--;
      continue;
    }
    if (f->pending) {
      f->pending = 0;
      if (ret <= f->head) {
        f->head = ret;
        f->loop = 1;
      }
    }
    bool pushed = false;
    while (f->k > 0 && !pushed) {
      uint32_t s = w->succ[v][--f->k];
      if (w->dfn[s] == 0) {
        f->pending = 1;
        wto_push_visit(w, s);   /* may move nothing: frames has room for 2n */
        pushed = true;
      } else if (w->dfn[s] <= f->head) {
        f->head = w->dfn[s];
        f->loop = 1;
      }
    }
    if (pushed) continue;
    uint32_t head = f->head;
    if (head == w->dfn[v]) {
      w->dfn[v] = WTO_INF;
      uint32_t e = w->stack[--w->sp];
      if (f->loop) {
        while (e != v) {
          w->dfn[e] = 0;
          e = w->stack[--w->sp];
        }
        /* component(v) runs in this frame's place, then returns head */
        *f = (wto_frame){.v = v, .k = 0, .head = head, .component = 1};
        continue;
      }
      wto_prepend(w, v);
    }
    ret = head;
    w->nframes--;
  }
}

static bool order_blocks(emu_decoder *d, uint32_t *order) {
  uint32_t n = d->nblocks;
  wto w = {.n = n};
  w.succ = calloc(n, sizeof *w.succ);
  w.nsucc = calloc(n, sizeof *w.nsucc);
  w.dfn = calloc(n, sizeof *w.dfn);
  w.stack = calloc(n, sizeof *w.stack);
  w.out = calloc(n, sizeof *w.out);
  w.frames = calloc(2 * (size_t)n + 2, sizeof *w.frames);
  /* duplicate targets are skipped with a stamp per block (a scan of the
   * list so far was quadratic in a brx.idx's 66,000 targets) */
  uint32_t *stamp = calloc(n ? n : 1, sizeof *stamp);
  bool oom = !w.succ || !w.nsucc || !w.dfn || !w.stack || !w.out || !w.frames || !stamp;
  for (uint32_t b = 0; b < n && !oom; b++) {
    const ir_block *bl = d->blocks[b];
    uint32_t ns = ir_block_nsuccs(bl);
    w.succ[b] = calloc(ns ? ns : 1, sizeof(uint32_t));
    if (!w.succ[b]) {
      oom = true;
      break;
    }
    for (uint32_t k = 0; k < ns; k++) {
      uint32_t t;
      if (!index_get(&d->block_num, ir_block_succ(bl, k), &t)) t = b;
      if (stamp[t] == b + 1) continue;
      stamp[t] = b + 1;
      w.succ[b][w.nsucc[b]++] = t;
    }
  }
  free(stamp);
  if (oom) {
    for (uint32_t b = 0; w.succ && b < n; b++) free(w.succ[b]);
    free(w.succ);
    free(w.nsucc);
    free(w.dfn);
    free(w.stack);
    free(w.out);
    free(w.frames);
    decode_oom(d);
  }
  w.outpos = n;
  wto_run(&w, 0);
  /* unreachable blocks go last, in layout order */
  uint32_t reach = n - w.outpos;
  uint32_t pos = 0;
  for (uint32_t i = w.outpos; i < n; i++) order[pos++] = w.out[i];
  for (uint32_t b = 0; b < n; b++)
    if (w.dfn[b] == 0) order[pos++] = b;
  (void)reach;
  for (uint32_t b = 0; b < n; b++) free(w.succ[b]);
  free(w.succ);
  free(w.nsucc);
  free(w.dfn);
  free(w.stack);
  free(w.out);
  free(w.frames);
  return pos == n;
}

/* ---- instructions ------------------------------------------------------- */
static const char *op_name(const ir_instr *i) {
  if (i->op >= ir_op_count) return "?";
  if (i->op == ir_op_opaque && i->opaque) return i->opaque;
  const char *p = ir_op_infos[i->op].ptx;
  return p && *p ? p : ir_op_infos[i->op].name;
}

/* A (to, from) pair as a map key: the bytes of two pointers, kept in the
 * arena for the map's life. */
typedef struct pred_key { const ir_block *to, *from; } pred_key;

/* Indexes to's predecessor slots by (to, from): the first slot of each pair
 * in the map, the later ones chained in pred_next. */
static bool index_preds(emu_decoder *d, uint32_t tn, const ir_block *to) {
  if (!d->pred_base) {
    d->pred_base = malloc((d->nblocks ? d->nblocks : 1) * sizeof *d->pred_base);
    if (!d->pred_base) return false;
    memset(d->pred_base, 0xff, (d->nblocks ? d->nblocks : 1) * sizeof *d->pred_base);
  }
  uint32_t base = d->npred_slots;
  uint32_t cap = d->pred_next_cap;
  if ((uint64_t)base + to->npreds > UINT32_MAX) return false;
  uint32_t *nn = grow(d, d->pred_next, &cap, base + to->npreds, sizeof *d->pred_next);
  if (!nn) return false;
  d->pred_next = nn;
  d->pred_next_cap = cap;
  pred_key *keys = PW_NEW_ARRAY(d->arena, pred_key, to->npreds ? to->npreds : 1);
  for (uint32_t p = to->npreds; p-- > 0;) {
    keys[p] = (pred_key){to, to->preds[p]};
    bool found;
    void **v = pw_map_str_slot(&d->pred_first, (const char *)&keys[p], sizeof keys[p], &found);
    d->pred_next[base + p] = found ? (uint32_t)(uintptr_t)*v : UINT32_MAX;
    *v = (void *)(uintptr_t)(base + p);
  }
  d->pred_base[tn] = base;
  d->npred_slots = base + to->npreds;
  return true;
}

/* Index of the phi operand for the k-th target of `from`'s terminator.
 * Past a few predecessors through the (to, from) index: scanning them per
 * edge was quadratic at a block of tens of thousands of predecessors. */
static uint32_t phi_pred_index(emu_decoder *d, uint32_t tn, const ir_block *from, uint32_t k,
                               const ir_block *to) {
  uint32_t occurrence = 0;
  for (uint32_t j = 0; j < k; j++)
    if (from->last->targets[j] == to) occurrence++;
  if (to->npreds > 16 && ((d->pred_base && d->pred_base[tn] != UINT32_MAX) || index_preds(d, tn, to))) {
    pred_key key = {to, from};
    const pw_map_entry *e = pw_map_str_find(&d->pred_first, (const char *)&key, sizeof key);
    if (!e) return UINT32_MAX;
    uint32_t base = d->pred_base[tn], first = (uint32_t)(uintptr_t)e->val, slot = first;
    for (uint32_t seen = 0; seen < occurrence && slot != UINT32_MAX; seen++) slot = d->pred_next[slot];
    return (slot == UINT32_MAX ? first : slot) - base;
  }
  uint32_t seen = 0, first = UINT32_MAX;
  for (uint32_t p = 0; p < to->npreds; p++)
    if (to->preds[p] == from) {
      if (first == UINT32_MAX) first = p;
      if (seen++ == occurrence) return p;
    }
  return first;
}

static emu_edge make_edge(emu_decoder *d, const ir_block *from, uint32_t k) {
  const ir_block *to = from->last->targets[k];
  emu_edge e = {0};
  uint32_t tn = 0;
  if (!index_get(&d->block_num, to, &tn)) {
    d->error = "branch to a block outside the function";
    return e;
  }
  e.target = d->start[tn];
  uint32_t nphi = 0;
  ir_foreach_instr(to, i) {
    if (i->op != ir_op_phi) break;
    nphi++;
  }
  if (!nphi) return e;
  uint32_t pi = phi_pred_index(d, tn, from, k, to);
  e.copies = PW_NEW_ARRAY(d->arena, emu_copy, nphi);
  ir_foreach_instr(to, i) {
    if (i->op != ir_op_phi) break;
    if (pi == UINT32_MAX || pi >= i->nsrc) {
      d->error = dfmt(d, "phi in block %s has no operand for the edge from %s",
                      to->name ? to->name : "?", from->name ? from->name : "?");
      return e;
    }
    const ir_value *dv = i->dst[0];
    emu_copy c = {.dst = value_slot(d, dv), .src = src_opnd(d, i->src[pi]),
                  .cls = (uint8_t)value_cls((ir_type)dv->type)};
    if (c.dst != c.src) e.copies[e.ncopies++] = c;
  }
  /* a parallel copy needs a temporary when a copy reads a slot another writes */
  for (uint32_t a = 0; a < e.ncopies && !e.parallel; a++)
    for (uint32_t b = 0; b < e.ncopies; b++)
      if (a != b && e.copies[a].src == e.copies[b].dst) {
        e.parallel = true;
        break;
      }
  return e;
}

static emu_func *func_of(emu_decoder *d, const ir_func *f) {
  uint32_t idx;
  if (!index_get(d->func_index, f, &idx)) return NULL;
  return d->em->funcs[idx];
}

static const char *decode_call(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  const ir_call_info *ci = i->aux;
  if (!ci || i->nsrc < 1) return "call without call information";
  emu_call *c = PW_NEW(d->arena, emu_call);
  c->nret = ci->nret;
  c->narg = ci->narg;
  if (1u + ci->nret + ci->narg > i->nsrc) return "call with fewer operands than its call information says";
  const ir_value *callee = i->src[0];
  if (callee->kind == IR_VAL_SYMBOL && callee->symref.sym.kind == IR_SYM_FUNC) {
    c->callee = func_of(d, callee->symref.sym.func);
    if (!c->callee) return "call of a function the module does not hold";
    note_callee(d, c->callee);
  } else {
    d->ef->has_indirect_calls = true;
    in->src[0] = src_opnd(d, callee);
  }
  c->ret_slot = PW_NEW_ARRAY(d->arena, emu_opnd, ci->nret + 1);
  c->ret_local = PW_NEW_ARRAY(d->arena, uint32_t, ci->nret + 1);
  c->ret_size = PW_NEW_ARRAY(d->arena, uint32_t, ci->nret + 1);
  c->ret_is_local = PW_NEW_ARRAY(d->arena, bool, ci->nret + 1);
  c->arg_slot = PW_NEW_ARRAY(d->arena, emu_opnd, ci->narg + 1);
  c->arg_local = PW_NEW_ARRAY(d->arena, uint32_t, ci->narg + 1);
  c->arg_size = PW_NEW_ARRAY(d->arena, uint32_t, ci->narg + 1);
  c->arg_is_local = PW_NEW_ARRAY(d->arena, bool, ci->narg + 1);
  for (uint32_t k = 0; k < ci->nret + ci->narg; k++) {
    const ir_value *v = i->src[1 + k];
    bool is_ret = k < ci->nret;
    uint32_t j = is_ret ? k : k - ci->nret;
    emu_opnd slot = EMU_OPND_NONE;
    uint32_t local = 0, size = 0;
    bool is_local = false;
    if (v->kind == IR_VAL_SYMBOL) {
      const ir_symbol *s = &v->symref.sym;
      const void *key = NULL;
      if (s->kind == IR_SYM_GLOBAL && is_param_space(s->global->space)) {
        key = s->global;
        size = global_bytes(s->global);
        local = frame_local(d, key, size, s->global->align) + (uint32_t)v->symref.offset;
      } else if (s->kind == IR_SYM_PARAM && !d->f->is_kernel) {
        key = s->param;
        size = param_bytes(s->param);
        if (!s->param->count && d->em->call_arg_max > size) size = (uint32_t)d->em->call_arg_max;
        local = frame_local(d, key, size, param_align(s->param)) + (uint32_t)v->symref.offset;
      } else {
        return "call operand that is neither a register nor a .param variable";
      }
      is_local = true;
    } else if (is_ret) {
      if (v->kind != IR_VAL_INSTR && v->kind != IR_VAL_PARAM) return "call return operand is not a register";
      slot = value_slot(d, v);
    } else {
      slot = src_opnd(d, v);
    }
    if (is_ret) {
      c->ret_slot[j] = slot;
      c->ret_local[j] = local;
      c->ret_size[j] = size;
      c->ret_is_local[j] = is_local;
    } else {
      c->arg_slot[j] = slot;
      c->arg_local[j] = local;
      c->arg_size[j] = size;
      c->arg_is_local[j] = is_local;
    }
  }
  /* register results are instruction results in SSA: map dsts too */
  if (i->ndst > EMU_MAXOPND) return "call with more than 10 register results";
  for (uint32_t k = 0; k < i->ndst; k++) in->dst[k] = value_slot(d, i->dst[k]);
  if (i->ndst && c->nret) {
    /* the IR gives register returns as dsts in order */
    uint32_t r = 0;
    for (uint32_t k = 0; k < c->nret && r < i->ndst; k++)
      if (!c->ret_is_local[k]) c->ret_slot[k] = value_slot(d, i->dst[r++]);
  } else if (i->ndst && !c->nret) {
    c->nret = i->ndst;
    for (uint32_t k = 0; k < i->ndst; k++) {
      c->ret_slot[k] = value_slot(d, i->dst[k]);
      c->ret_is_local[k] = false;
    }
  }
  in->aux = c;
  in->kind = EMU_K_CALL;
  return NULL;
}

/* Memory operand: src[0] is the address (a symbol, a register or an
 * immediate), instr->offset the displacement. */
static void decode_address(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  const ir_value *a = i->src[0];
  in->imm = i->offset;
  unsigned sp;
  switch ((ir_space)i->mods.space) {
  case IR_SPACE_GLOBAL: sp = EMU_SP_GLOBAL; break;
  case IR_SPACE_SHARED: case IR_SPACE_SHARED_CTA: case IR_SPACE_SHARED_CLUSTER: sp = EMU_SP_SHARED; break;
  case IR_SPACE_LOCAL: sp = EMU_SP_LOCAL; break;
  case IR_SPACE_CONST: sp = EMU_SP_CONST; break;
  case IR_SPACE_PARAM: case IR_SPACE_PARAM_ENTRY: case IR_SPACE_PARAM_FUNC:
    sp = d->f->is_kernel ? EMU_SP_PARAM : EMU_SP_GENERIC;
    break;
  default: sp = EMU_SP_GENERIC; break;
  }
  if (a && a->kind == IR_VAL_SYMBOL) {
    symres r = resolve_symbol(d, a, false);
    in->src[0] = r.opnd;
    /* a variable named in the address fixes the space (a generic ld of a
     * shared variable reads shared memory) */
    if (r.space != EMU_SP_GENERIC) sp = r.space;
    if (sp == EMU_SP_PARAM && !d->f->is_kernel) sp = EMU_SP_LOCAL;
  } else {
    in->src[0] = src_opnd(d, a);
    if (sp == EMU_SP_PARAM && a && a->kind != IR_VAL_CONST) sp = EMU_SP_GENERIC;
  }
  in->stype[0] = a ? a->type : ir_type_u64;
  in->space = (uint8_t)sp;
  /* [%r+off] with a 32-bit register: the address arithmetic is 32-bit */
  in->amask = (a && a->kind != IR_VAL_SYMBOL && ir_type_bits((ir_type)a->type) == 32) ? 0xffffffffull : ~0ull;
}

/* The warp-sync member mask operand of a .sync warp op, or -1. */
static int member_mask_index(const ir_instr *i) {
  switch ((ir_op)i->op) {
  case ir_op_shfl: return i->mods.sync && i->nsrc >= 4 ? 3 : -1;
  case ir_op_vote: return i->mods.sync && i->nsrc >= 2 ? 1 : -1;
  case ir_op_match: return i->nsrc >= 2 ? 1 : -1;
  case ir_op_redux: return i->nsrc >= 2 ? 1 : -1;
  case ir_op_elect: return 0;
  case ir_op_bar_warp_sync: return 0;
  default: return -1;
  }
}

/* The matrix ops' operands, every source then every result, in in->aux
 * (they have more than an emu_inst holds): NULL, or why not. */
static const char *aux_operands(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  if (i->ndst > EMU_MAXOPND) return dfmt(d, "'%s' with %u results", op_name(i), i->ndst);
  emu_opnd *ops = PW_NEW_ARRAY(d->arena, emu_opnd, i->nsrc + i->ndst + 1u);
  for (unsigned k = 0; k < i->nsrc; k++) ops[k] = src_opnd(d, i->src[k]);
  for (unsigned k = 0; k < i->ndst; k++) {
    ops[i->nsrc + k] = in->dst[k] = value_slot(d, i->dst[k]);
    in->dtype[k] = i->dst[k]->type;
  }
  if (d->error) return d->error;
  in->nsrc = 0;
  in->aux = ops;
  return NULL;
}

/* One IR instruction to an emu_inst: its operands (the address through
 * decode_address: ir_ops.def's addr column), guard and keep values, then
 * the selector of its family by one switch over every op (no default).
 * Long: the switch is the emulator's list of what it runs and what it
 * reports as unsupported, one case label per op; it reads best whole. */
static const char *decode_instr(emu_decoder *d, const ir_instr *i, emu_inst *in) {
  in->op = i->op;
  in->type = i->type;
  in->type2 = i->type2;
  in->mods = i->mods;
  in->ir = i;
  in->line = i->loc.line;
  in->guard = EMU_OPND_NONE;
  in->kind = EMU_K_ALU;
  in->vec = i->mods.vec ? i->mods.vec : 1;
  in->tbits = (uint8_t)ir_type_bits((ir_type)i->type);
  in->tmask = emu_type_mask(in->tbits ? in->tbits : 64);
  /* wave_mma, wmma.mma: up to 25 operands, kept in aux (below) */
  bool many = (ir_op)i->op == ir_op_call || (ir_op)i->op == ir_op_wave_mma || (ir_op)i->op == ir_op_wmma_mma ||
              (ir_op)i->op == ir_op_mma;   /* m16n8k16 .f64: 16 sources; m8n8k4 .f32: 8 results */
  if (!many && (i->nsrc > EMU_MAXOPND || i->ndst > EMU_MAXOPND))
    return dfmt(d, "'%s' with %u operands", op_name(i), i->nsrc);
  in->nsrc = i->nsrc;
  in->ndst = i->ndst;
  for (unsigned k = 0; k < EMU_MAXOPND; k++) in->src[k] = in->dst[k] = EMU_OPND_NONE;
  if (!many) {
    for (unsigned k = 0; k < i->nsrc; k++) {
      if (k == 0 && ir_op_has_address((ir_op)i->op)) {
        decode_address(d, i, in);
        continue;
      }
      in->src[k] = src_opnd(d, i->src[k]);
      in->stype[k] = i->src[k] ? i->src[k]->type : ir_type_none;
    }
    for (unsigned k = 0; k < i->ndst; k++) {
      in->dst[k] = value_slot(d, i->dst[k]);
      in->dtype[k] = i->dst[k]->type;
    }
  }
  if (i->guard) {
    in->guard = src_opnd(d, i->guard);
    in->guard_neg = i->guard_neg;
    if (i->ndst) {
      in->keep = PW_NEW_ARRAY(d->arena, emu_opnd, i->ndst);
      for (unsigned k = 0; k < i->ndst; k++)
        in->keep[k] = i->keep && i->keep[k] ? src_opnd(d, i->keep[k])
                                           : const_opnd(d, 0, value_cls((ir_type)i->dst[k]->type));
    }
  }
  if (d->error) return d->error;

  switch ((ir_op)i->op) {
  /* ---- control flow: run by the wave loop ---- */
  case ir_op_br:
  case ir_op_cbr:
  case ir_op_brx:
    in->kind = i->op == ir_op_br ? EMU_K_BR : i->op == ir_op_cbr ? EMU_K_CBR : EMU_K_BRX;
    if (i->guard) return dfmt(d, "guarded '%s' (the front end turns @p bra into a conditional branch)", op_name(i));
    return NULL;
  case ir_op_ret:
    in->kind = EMU_K_RET;
    return i->guard ? "guarded ret" : NULL;
  case ir_op_exit:
    in->kind = EMU_K_EXIT;
    return i->guard ? "guarded exit" : NULL;
  case ir_op_trap:
  case ir_op_unreachable:
    in->kind = EMU_K_TRAP;
    return NULL;
  case ir_op_call:
    return decode_call(d, i, in);
  case ir_op_bar:
  case ir_op_bar_red:
    in->kind = EMU_K_BAR;
    if (i->op == ir_op_bar && i->mods.barmode != IR_BAR_SYNC && i->mods.barmode != IR_BAR_ARRIVE)
      return dfmt(d, "'%s' in a mode other than sync or arrive", op_name(i));
    return NULL;
  case ir_op_phi:
    return "phi in the middle of a block";

  /* ---- integer, logic, compare, moves ---- */
  case ir_op_copy: case ir_op_sreg: case ir_op_pack: case ir_op_unpack: case ir_op_symaddr:
  case ir_op_addc: case ir_op_subc: case ir_op_madc:
  case ir_op_mul24: case ir_op_mad24: case ir_op_sad: case ir_op_rem:
  case ir_op_popc: case ir_op_clz: case ir_op_bfind: case ir_op_fns: case ir_op_brev:
  case ir_op_bfe: case ir_op_bfi: case ir_op_szext: case ir_op_bmsk: case ir_op_dp4a: case ir_op_dp2a:
  case ir_op_set: case ir_op_setp: case ir_op_selp: case ir_op_slct:
  case ir_op_and: case ir_op_or: case ir_op_xor: case ir_op_not: case ir_op_cnot: case ir_op_lop3:
  case ir_op_shf: case ir_op_shl: case ir_op_shr: case ir_op_prmt:
    return emu_sel_alu(d, i, in);
  case ir_op_add: case ir_op_sub: case ir_op_mul: case ir_op_mad: case ir_op_div:
  case ir_op_abs: case ir_op_neg: case ir_op_min: case ir_op_max:
    return emu_type_is_float((ir_type)i->type) ? emu_sel_float(d, i, in) : emu_sel_alu(d, i, in);

  /* ---- floating point ---- */
  case ir_op_fma: case ir_op_rcp: case ir_op_sqrt: case ir_op_rsqrt: case ir_op_sin: case ir_op_cos:
  case ir_op_lg2: case ir_op_ex2: case ir_op_tanh: case ir_op_copysign: case ir_op_testp:
    return emu_sel_float(d, i, in);

  case ir_op_cvt: case ir_op_cvt_pack:
    return emu_sel_cvt(d, i, in);

  /* ---- memory ---- */
  case ir_op_ld: case ir_op_ldu: case ir_op_st: case ir_op_atom: case ir_op_red:
  case ir_op_prefetch: case ir_op_prefetchu: case ir_op_isspacep: case ir_op_cvta:
  case ir_op_membar: case ir_op_fence:
  case ir_op_nanosleep: case ir_op_pmevent: case ir_op_brkpt: case ir_op_griddepcontrol: case ir_op_setmaxnreg:
  case ir_op_applypriority: case ir_op_discard: case ir_op_createpolicy:
  case ir_op_alloca: case ir_op_stacksave: case ir_op_stackrestore:
  case ir_op_cp_async: case ir_op_cp_async_commit_group: case ir_op_cp_async_wait_group:
  case ir_op_cp_async_bulk_prefetch: case ir_op_cp_async_bulk_prefetch_tensor:
    return emu_sel_mem(d, i, in);

  /* ---- scalar video (emu_video.c) ---- */
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr: case ir_op_vset:
    return emu_sel_video(d, i, in);
  case ir_op_vadd2: case ir_op_vsub2: case ir_op_vavrg2: case ir_op_vabsdiff2: case ir_op_vmin2:
  case ir_op_vmax2: case ir_op_vset2: case ir_op_vadd4: case ir_op_vsub4: case ir_op_vavrg4:
  case ir_op_vabsdiff4: case ir_op_vmin4: case ir_op_vmax4: case ir_op_vset4:
    return emu_sel_simd_video(d, i, in);

  /* ---- mbarrier objects (emu_mbarrier.c) ---- */
  case ir_op_mbarrier_init: case ir_op_mbarrier_inval: case ir_op_mbarrier_expect_tx:
  case ir_op_mbarrier_complete_tx: case ir_op_mbarrier_arrive: case ir_op_mbarrier_arrive_drop:
  case ir_op_mbarrier_test_wait: case ir_op_mbarrier_try_wait: case ir_op_mbarrier_pending_count:
  case ir_op_cp_async_mbarrier_arrive: case ir_op_cp_async_bulk: case ir_op_cp_async_bulk_commit_group:
  case ir_op_cp_async_bulk_wait_group: case ir_op_cp_async_bulk_tensor:
  case ir_op_cp_reduce_async_bulk: case ir_op_cp_reduce_async_bulk_tensor: case ir_op_tensormap_replace:
  case ir_op_tensormap_cp_fenceproxy:
    return emu_sel_mbarrier(d, i, in);

  /* ---- warp ---- */
  case ir_op_shfl: case ir_op_vote: case ir_op_match: case ir_op_activemask: case ir_op_redux:
  case ir_op_elect: case ir_op_bar_warp_sync: {
    const char *why = emu_sel_warp(d, i, in);
    if (why) return why;
    int mi = member_mask_index(i);
    if (mi >= 0) {
      in->kind = EMU_K_SYNC;
      in->sub = (uint8_t)mi;
    }
    return NULL;
  }

  /* ---- warp-level matrix ops (emu_matrix.c): .sync.aligned, the whole warp ---- */
  case ir_op_mma: case ir_op_ldmatrix: case ir_op_stmatrix: case ir_op_movmatrix: {
    if ((ir_op)i->op == ir_op_mma) {   /* operands in aux, as wmma.mma's */
      const char *err = aux_operands(d, i, in);
      if (err) return err;
    }
    const char *why = emu_sel_matrix(d, i, in);
    if (why) return why;
    in->kind = EMU_K_SYNC;
    in->sub = EMU_SYNC_WHOLE_WARP;
    return NULL;
  }

  /* ---- wmma (emu_matrix.c): per-thread loads and stores; mma of the whole
   * warp, its operands in aux ---- */
  case ir_op_wmma_load: case ir_op_wmma_store:
    return emu_sel_wmma(d, i, in);
  case ir_op_wmma_mma: {
    const char *err = aux_operands(d, i, in);
    if (err) return err;
    const char *why = emu_sel_wmma(d, i, in);
    if (why) return why;
    in->kind = EMU_K_SYNC;
    in->sub = EMU_SYNC_WHOLE_WARP;
    return NULL;
  }

  /* ---- the wave-level matrix op (emu_matrix.c): every operand in aux ---- */
  case ir_op_wave_mma: {
    const char *err = aux_operands(d, i, in);
    if (err) return err;
    return emu_sel_wave_mma(d, i, in);
  }

  /* ---- wave-level target ops (emu_wave_ops.c) ---- */
  case ir_op_wave_lane_id: case ir_op_wave_ballot: case ir_op_wave_exec: case ir_op_wave_bpermute: case ir_op_wave_swizzle:
  case ir_op_wave_readlane: case ir_op_wave_readfirstlane: case ir_op_wave_sync:
  case ir_op_workgroup_barrier: case ir_op_workitem_id: case ir_op_workgroup_id:
  case ir_op_workgroup_size: case ir_op_workgroup_count: case ir_op_dyn_lds_size:
  case ir_op_cycle_counter: case ir_op_realtime_counter: case ir_op_hw_id:
    return emu_sel_wave(d, i, in);

  /* ---- what the emulator does not run (docs/emulator.md) ---- */
  case ir_op_st_async: case ir_op_mapa: case ir_op_getctarank:
  case ir_op_multimem_ld_reduce: case ir_op_multimem_st: case ir_op_multimem_red:
  case ir_op_tex: case ir_op_tld4: case ir_op_txq: case ir_op_istypep: case ir_op_suld: case ir_op_sust:
  case ir_op_sured: case ir_op_suq:
  case ir_op_barrier_cluster: case ir_op_red_async:
  case ir_op_mma_sp:
  case ir_op_wgmma_fence: case ir_op_wgmma_commit_group: case ir_op_wgmma_wait_group: case ir_op_wgmma_mma_async:
  case ir_op_opaque:
  case ir_op_count:
    return dfmt(d, "unsupported instruction '%s'", op_name(i));
  }
  return dfmt(d, "unsupported instruction '%s'", op_name(i));
}

/* ---- one function --------------------------------------------------------- */
/* A device function's parameters and register returns: a register
 * parameter is its value's slot, a .param one a place in the frame's local
 * memory; a register return a slot of its own. */
static void decode_params(emu_decoder *d, emu_func *ef, const ir_func *f) {
  ef->nparams = f->nparams;
  ef->nrets = f->nrets;
  ef->params = PW_NEW_ARRAY(d->arena, emu_fparam, f->nparams + 1);
  ef->rets = PW_NEW_ARRAY(d->arena, emu_fparam, f->nrets + 1);
  if (!f->is_kernel) {
    for (uint32_t k = 0; k < f->nparams; k++) {
      const ir_param *p = &f->params[k];
      if (p->space == IR_SPACE_REG && p->value) {
        ef->params[k] = (emu_fparam){.is_reg = true, .slot = value_slot(d, p->value),
                                     .size = param_bytes(p)};
      } else {
        /* an array of unknown size (a[]) holds what the largest argument
         * of the module's calls (pass_args copies the caller's size) */
        uint64_t sz = param_bytes(p);
        if (!p->count && d->em->call_arg_max > sz) sz = d->em->call_arg_max;
        if (sz > EMU_FRAME_MAX) sz = EMU_FRAME_MAX;
        ef->params[k] = (emu_fparam){.local = frame_local(d, p, sz, param_align(p)), .size = (uint32_t)sz};
      }
    }
    for (uint32_t k = 0; k < f->nrets; k++) {
      const ir_param *p = &f->rets[k];
      if (p->space == IR_SPACE_REG) {
        /* a register return: `ret` names its value (src k); the frame keeps
         * it in a slot of its own until the caller copies it */
        ef->rets[k] = (emu_fparam){.is_reg = true, .slot = new_slot(d, value_cls((ir_type)p->type)),
                                   .size = param_bytes(p)};
      } else {
        ef->rets[k] = (emu_fparam){.local = frame_local(d, p, param_bytes(p), param_align(p)),
                                   .size = param_bytes(p)};
      }
    }
  }
}

/* Frees the decoder's own buffers (what went to the module's arena stays
 * with the module). */
static void decoder_free(emu_decoder *d) {
  free(d->slot_of);
  free(d->blocks);
  free(d->start);
  free(d->order);
  free(d->consts);
  free(d->ckeys);
  free(d->chash);
  free(d->ccls);
  free(d->coffs);
  free(d->syms);
  free(d->shash);
  free(d->shared_used);
  free(d->shared_seen);
  free(d->callees);
  free(d->pred_next);
  free(d->pred_base);
  pw_map_free(&d->callee_set);
  pw_map_free(&d->pred_first);
  pw_map_free(&d->local_off);
  pw_map_free(&d->block_num);
}

static emu_status decode_func_body(emu_decoder *d) {
  emu_module *em = d->em;
  emu_func *ef = d->ef;
  const ir_func *f = d->f;
  d->nvalues = f->nvalues;
  d->slot_of = malloc(((size_t)d->nvalues + 1) * sizeof(uint32_t));
  if (!d->slot_of) decode_oom(d);
  memset(d->slot_of, 0xff, ((size_t)d->nvalues + 1) * sizeof(uint32_t));

  /* blocks, numbered locally in layout order */
  ir_foreach_block(f, b) d->nblocks++;
  d->blocks = calloc(d->nblocks ? d->nblocks : 1, sizeof *d->blocks);
  d->start = calloc(d->nblocks + 1, sizeof *d->start);
  d->order = calloc(d->nblocks ? d->nblocks : 1, sizeof *d->order);
  if (!d->blocks || !d->start || !d->order) decode_oom(d);
  uint32_t *order = d->order;
  uint32_t bn = 0;
  ir_foreach_block(f, b) {
    d->blocks[bn] = b;
    index_put(&d->block_num, b, bn);
    bn++;
  }

  decode_params(d, ef, f);

  if (f->is_decl || !f->entry) {
    /* declared only: a builtin the emulator provides, or an error on use */
    if (!strcmp(f->name, "vprintf")) ef->builtin = EMU_BI_VPRINTF;
    else if (!strcmp(f->name, "__assertfail")) ef->builtin = EMU_BI_ASSERTFAIL;
    else if (!strcmp(f->name, "malloc")) ef->builtin = EMU_BI_MALLOC;
    else if (!strcmp(f->name, "free")) ef->builtin = EMU_BI_FREE;
    /* libcudadevrt's device-side launch (cudaGetParameterBufferV2,
     * cudaLaunchDeviceV2, what <<<>>> in a kernel becomes) ends in these
     * calls to the driver */
    else if (!strcmp(f->name, "__cuda_syscall_cnpv2GetParameterBufferV2")) ef->builtin = EMU_BI_CDP_PARAM_BUFFER;
    else if (!strcmp(f->name, "__cuda_syscall_cnpv2LaunchDeviceV2")) ef->builtin = EMU_BI_CDP_LAUNCH;
    else if (!strcmp(f->name, "__cuda_syscall_cnpv2GetLastError")) ef->builtin = EMU_BI_CDP_GET_ERROR;
    else if (!strcmp(f->name, "__cuda_syscall_cnpv2SetLastError")) ef->builtin = EMU_BI_CDP_SET_ERROR;
    else ef->error = dfmt(d, "function '%s' is declared but not defined in this module", f->name);
    goto done;
  }

  if (!order_blocks(d, order)) {
    ef->error = "internal: block order lost blocks";
    goto done;
  }
  /* count instructions (no phis) and block starts in order */
  uint32_t ncode = 0;
  for (uint32_t k = 0; k < d->nblocks; k++) {
    const ir_block *b = d->blocks[order[k]];
    d->start[order[k]] = ncode;
    uint32_t nb = 0;
    ir_foreach_instr(b, i) if (i->op != ir_op_phi) nb++;
    if (!b->last || !ir_is_terminator(b->last)) nb++;   /* room for a synthesized error */
    ncode += nb;
  }
  ef->code = PW_NEW_ARRAY(&em->arena, emu_inst, ncode ? ncode : 1);
  ef->ncode = ncode;
  uint32_t pc = 0;
  for (uint32_t k = 0; k < d->nblocks; k++) {
    const ir_block *b = d->blocks[order[k]];
    ir_foreach_instr(b, i) {
      if (i->op == ir_op_phi) {
        value_slot(d, i->dst[0]);
        continue;
      }
      emu_inst *in = &ef->code[pc++];
      d->error = NULL;
      const char *why = decode_instr(d, i, in);
      if (!why && d->error) why = d->error;
      if (!why && ir_is_terminator(i) && i->ntargets) {
        in->nedges = i->ntargets;
        in->edges = PW_NEW_ARRAY(&em->arena, emu_edge, i->ntargets);
        for (uint32_t t = 0; t < i->ntargets && !d->error; t++) in->edges[t] = make_edge(d, b, t);
        why = d->error;
      }
      if (why) {
        in->kind = EMU_K_UNSUPPORTED;
        if (!ef->error)
          ef->error = dfmt(d, "%s (in function '%s', %s:%u)", why, f->name,
                           em->ir->source_name ? em->ir->source_name : "<ir>", i->loc.line);
      }
    }
    if (!b->last || !ir_is_terminator(b->last)) {
      emu_inst *in = &ef->code[pc++];
      memset(in, 0, sizeof *in);
      in->kind = EMU_K_UNSUPPORTED;
      in->guard = EMU_OPND_NONE;
      if (!ef->error) ef->error = dfmt(d, "block without terminator in function '%s'", f->name);
    }
  }

done:
  ef->regs_size = d->regs_size;
  ef->consts = pw_arena_alloc(&em->arena, d->consts_size ? d->consts_size : 8);
  if (d->consts_size) memcpy(ef->consts, d->consts, d->consts_size);
  ef->consts_size = d->consts_size;
  if (d->frame_local > EMU_FRAME_MAX) {
    if (!ef->error)
      ef->error = dfmt(d, "function '%s' needs more than %llu bytes of local memory per thread", f->name,
                       (unsigned long long)EMU_FRAME_MAX);
    d->frame_local = 0;
  }
  ef->frame_local = align_up((uint32_t)d->frame_local, 16);
  ef->symslots = PW_NEW_ARRAY(&em->arena, emu_symslot, d->nsyms + 1);
  if (d->nsyms) memcpy(ef->symslots, d->syms, d->nsyms * sizeof *d->syms);
  ef->nsymslots = d->nsyms;
  ef->callees = PW_NEW_ARRAY(&em->arena, emu_func *, d->ncallees + 1);
  if (d->ncallees) memcpy(ef->callees, d->callees, d->ncallees * sizeof *d->callees);
  ef->ncallees = d->ncallees;
  ef->shared_used = PW_NEW_ARRAY(&em->arena, uint32_t, d->nshared_used + 1);
  if (d->nshared_used) memcpy(ef->shared_used, d->shared_used, d->nshared_used * sizeof(uint32_t));
  ef->nshared_used = d->nshared_used;
  return EMU_OK;
}


/* Decodes one function.  Out of host memory anywhere in it (the module's
 * arena, the decoder's buffers and maps) unwinds here: the function's
 * buffers are freed and the load fails with EMU_ERR_OUT_OF_MEMORY, where
 * it used to abort() the process (and the application over libcuda). */
static emu_status decode_func(emu_module *em, emu_func *ef, pw_map *gidx, pw_map *fidx) {
  emu_decoder *d = calloc(1, sizeof *d);
  if (!d) return EMU_ERR_OUT_OF_MEMORY;
  *d = (emu_decoder){.em = em, .ef = ef, .f = ef->ir, .arena = &em->arena, .wave = em->wave,
                     .gvar_index = gidx, .func_index = fidx};
  jmp_buf jb;
  void *outer = em->arena.on_oom;
  pw_arena_init(&d->scratch);
  d->scratch.on_oom = &jb;
  pw_map_init(&d->local_off, &d->scratch, 0);
  pw_map_init(&d->block_num, &d->scratch, 0);
  pw_map_init(&d->callee_set, &d->scratch, 0);
  pw_map_init(&d->pred_first, &d->scratch, 0);
  d->oom = &jb;
  emu_status st;
  if (setjmp(jb)) {
    st = EMU_ERR_OUT_OF_MEMORY;
  } else {
    em->arena.on_oom = &jb;
    st = decode_func_body(d);
  }
  em->arena.on_oom = outer;
  decoder_free(d);
  pw_arena_free(&d->scratch);
  free(d);
  return st;
}

/* ---- module ------------------------------------------------------------- */
static uint32_t shared_align(const ir_global *g) {
  uint32_t a = g->align ? g->align : type_bytes((ir_type)g->type);
  return a ? a : 1;
}

/* Kernel closure: the kernel and every function it may call (all defined
 * functions when an indirect call can be reached). */
/* What kernel_layout reuses from one kernel to the next: stamps (the
 * kernel's index + 1) instead of arrays cleared per kernel, so a module's
 * layouts cost its kernels' closures, not kernels x functions. */
typedef struct layout_scratch {
  uint32_t *stamp;      /* by function index */
  uint32_t *reached;    /* the closure's function indexes */
  emu_func **work;
  uint32_t *sstamp;     /* by shared index: used by the closure */
} layout_scratch;

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static void kernel_layout(emu_module *em, emu_func *k, layout_scratch *L) {
  uint32_t n = em->nfuncs, mark = k->index + 1, nr = 0, nw = 0;
  bool indirect = false;
  L->stamp[k->index] = mark;
  L->reached[nr++] = k->index;
  L->work[nw++] = k;
  while (nw) {
    emu_func *f = L->work[--nw];
    indirect |= f->has_indirect_calls;
    for (uint32_t c = 0; c < f->ncallees; c++)
      if (L->stamp[f->callees[c]->index] != mark) {
        L->stamp[f->callees[c]->index] = mark;
        L->reached[nr++] = f->callees[c]->index;
        L->work[nw++] = f->callees[c];
      }
  }
  if (indirect) {
    nr = 0;
    for (uint32_t i = 0; i < n; i++) L->reached[nr++] = i;
  } else {
    qsort(L->reached, nr, sizeof *L->reached, cmp_u32);  /* the first error in module order */
  }
  k->closure_error = NULL;
  for (uint32_t j = 0; j < nr && !k->closure_error; j++) {
    uint32_t i = L->reached[j];
    if (em->funcs[i]->error && (i == k->index || !em->funcs[i]->ir->is_kernel))
      k->closure_error = em->funcs[i]->error;
  }
  /* shared layout: variables in module order, each at its alignment;
   * extern (dynamic) arrays all start where static shared memory ends */
  k->shared_off = PW_NEW_ARRAY(&em->arena, uint32_t, em->nshared + 1);
  for (uint32_t j = 0; j < nr; j++) {
    const emu_func *f = em->funcs[L->reached[j]];
    for (uint32_t s = 0; s < f->nshared_used; s++) L->sstamp[f->shared_used[s]] = mark;
  }
  uint64_t off = 0;
  uint32_t dyn_align = 16;
  const char *too_big = NULL;
  for (uint32_t s = 0; s < em->nshared; s++) {
    const ir_global *g = em->shared[s];
    k->shared_off[s] = UINT32_MAX;
    if (L->sstamp[s] != mark) continue;
    if (g->is_extern_shared || (g->count == 0 && !g->size)) {
      k->shared_off[s] = UINT32_MAX - 1;   /* dynamic: resolved at launch */
      if (shared_align(g) > dyn_align) dyn_align = shared_align(g);
      continue;
    }
    if (too_big) continue;
    uint32_t a = shared_align(g);
    off = (off + a - 1) / a * a;
    k->shared_off[s] = (uint32_t)off;
    off += global_bytes(g);
    if (off > EMU_SHARED_MAX) too_big = g->name;
  }
  if (too_big) {
    /* refused at launch (emu_sched.c reads closure_error), named */
    char buf[512];
    snprintf(buf, sizeof buf,
             "its static shared memory does not fit: '%s' ends at byte %llu, the emulator has %u bytes per block",
             too_big, (unsigned long long)off, EMU_SHARED_MAX);
    if (!k->closure_error) k->closure_error = pw_arena_strdup(&em->arena, buf);
    off = 0;
  }
  k->shared_static = (uint32_t)off;
  k->dyn_align = dyn_align;
  /* kernel parameter layout */
  const ir_func *f = k->ir;
  k->kparams = PW_NEW_ARRAY(&em->arena, emu_param_info, f->nparams + 1);
  uint64_t end = 0;
  bool have_offsets = false;
  for (uint32_t p = 0; p < f->nparams; p++) have_offsets |= f->params[p].offset != 0;
  uint64_t lay = 0;
  for (uint32_t p = 0; p < f->nparams && end <= EMU_KPARAM_MAX; p++) {
    const ir_param *pp = &f->params[p];
    uint32_t a = param_align(pp);
    uint64_t sz = param_bytes(pp);
    lay = (lay + a - 1) / a * a;
    uint64_t o = have_offsets || f->nparams == 1 ? pp->offset : lay;
    if (o + sz > EMU_KPARAM_MAX) {
      char buf[512];
      snprintf(buf, sizeof buf, "its parameters do not fit: '%s' ends at byte %llu, CUDA allows %u bytes",
               pp->name ? pp->name : "?", (unsigned long long)(o + sz), EMU_KPARAM_MAX);
      if (!k->closure_error) k->closure_error = pw_arena_strdup(&em->arena, buf);
      /* no layout: emu_kernel_params refuses the kernel, so no caller packs
       * parameters by a half-built table */
      k->kparams = NULL;
      end = 0;
      break;
    }
    k->kparams[p] = (emu_param_info){.offset = (uint32_t)o, .size = (uint32_t)sz, .align = a};
    lay = o + sz;
    if (o + sz > end) end = o + sz;
  }
  k->kparam_size = (uint32_t)end;
}

emu_status emu_decode_module(emu_module *em, char *err, size_t errn) {
  ir_module *m = em->ir;
  /* Out of host memory while decoding unwinds to here (or to decode_func
   * for one function's work): an error, never an abort. */
  pw_arena scratch;
  pw_arena_init(&scratch);
  jmp_buf jb;
  pw_map gidx, fidx;
  pw_map_init(&gidx, &scratch, 0);
  pw_map_init(&fidx, &scratch, 0);
  if (setjmp(jb)) {
    em->arena.on_oom = NULL;
    pw_arena_free(&scratch);
    if (err) snprintf(err, errn, "out of host memory decoding the module");
    return EMU_ERR_OUT_OF_MEMORY;
  }
  scratch.on_oom = &jb;
  em->arena.on_oom = &jb;
  /* functions */
  em->nfuncs = m->nfuncs;
  em->funcs = PW_NEW_ARRAY(&em->arena, emu_func *, m->nfuncs + 1);
  uint32_t fi = 0;
  ir_foreach_func(m, f) {
    if (fi >= em->nfuncs) break;
    emu_func *ef = PW_NEW(&em->arena, emu_func);
    ef->ir = f;
    ef->mod = em;
    ef->index = fi;
    em->funcs[fi] = ef;
    index_put(&fidx, f, fi);
    fi++;
  }
  em->nfuncs = fi;
  /* variables: indexes of storage variables, and the shared ones */
  uint32_t nshared_cap = 0;
  for (uint32_t g = 0; g < em->ngvars; g++) {
    const ir_global *gv = m->globals[g];
    if (gv->space == IR_SPACE_SHARED || gv->space == IR_SPACE_SHARED_CTA ||
        gv->space == IR_SPACE_SHARED_CLUSTER) {
      void *ns = grow_or_null(em->shared, &nshared_cap, em->nshared + 1, sizeof *em->shared);
      if (!ns) longjmp(jb, 1);
      em->shared = ns;
      em->gvars[g].shared_index = em->nshared;
      index_put(&gidx, gv, em->nshared | SHARED_BIT);
      em->shared[em->nshared++] = gv;
    } else {
      index_put(&gidx, gv, g);
    }
  }
  /* function-scope shared variables that the module list does not hold are
   * found through the symbol operands that name them */
  ir_foreach_func(m, f) ir_foreach_block(f, b) ir_foreach_instr(b, i) for (unsigned k = 0; k < i->nsrc; k++) {
    const ir_value *v = i->src[k];
    if (!v || v->kind != IR_VAL_SYMBOL) continue;
    /* a .param argument of a call: the largest sizes callees' a[] (the
     * PTX ISA: its size is the argument's, which differs per call) */
    if ((ir_op)i->op == ir_op_call && k > 0) {
      uint64_t sz = v->symref.sym.kind == IR_SYM_GLOBAL ? global_bytes(v->symref.sym.global)
                    : v->symref.sym.kind == IR_SYM_PARAM ? param_bytes(v->symref.sym.param) : 0;
      if (sz > em->call_arg_max) em->call_arg_max = sz;
    }
    if (v->symref.sym.kind != IR_SYM_GLOBAL) continue;
    const ir_global *gv = v->symref.sym.global;
    uint32_t tmp;
    if (index_get(&gidx, gv, &tmp)) continue;
    if (gv->space == IR_SPACE_SHARED || gv->space == IR_SPACE_SHARED_CTA ||
        gv->space == IR_SPACE_SHARED_CLUSTER) {
      void *ns = grow_or_null(em->shared, &nshared_cap, em->nshared + 1, sizeof *em->shared);
      if (!ns) longjmp(jb, 1);
      em->shared = ns;
      index_put(&gidx, gv, em->nshared | SHARED_BIT);
      em->shared[em->nshared++] = gv;
    }
  }
  emu_status st = EMU_OK;
  for (uint32_t k = 0; k < em->nfuncs && st == EMU_OK; k++) st = decode_func(em, em->funcs[k], &gidx, &fidx);
  /* zeroed by the arena: no stamp is 0, a kernel's is its index + 1 */
  layout_scratch L = {.stamp = PW_NEW_ARRAY(&scratch, uint32_t, em->nfuncs + 1),
                      .reached = PW_NEW_ARRAY(&scratch, uint32_t, em->nfuncs + 1),
                      .work = PW_NEW_ARRAY(&scratch, emu_func *, em->nfuncs + 1),
                      .sstamp = PW_NEW_ARRAY(&scratch, uint32_t, em->nshared + 1)};
  for (uint32_t k = 0; k < em->nfuncs && st == EMU_OK; k++)
    if (em->funcs[k]->ir->is_kernel) kernel_layout(em, em->funcs[k], &L);
  if (st != EMU_OK && err) snprintf(err, errn, "out of host memory decoding the module");
  em->arena.on_oom = NULL;
  pw_arena_free(&scratch);
  return st;
}

bool emu_type_is_float(ir_type t) {
  ir_type_kind k = ir_type_kind_of(t);
  return k == IR_TK_FLOAT || k == IR_TK_PACKED_FLOAT;
}
