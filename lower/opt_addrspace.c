/* lower/opt_addrspace.c: generic memory accesses whose address provably
 * points into one state space become accesses of that space (an opt_
 * pass: it keeps the meaning and may be skipped; docs/lowering.md,
 * "Memory").
 *
 * A generic address (PTX ISA 6.4.1.1) made by `cvta.global/.shared/.local/
 * .const` of a space's address, or loaded from a kernel parameter (global:
 * the host passed it), then moved (mov), offset (add, sub of a
 * non-pointer, mad whose addend is the pointer) or merged (phi) with others
 * of the same space, points into that space: PTX pointer arithmetic stays
 * inside its object (the same assumption as LLVM's infer-address-spaces).
 * Then `ld/st/atom/red [p]` becomes `ld/st/atom/red.S [cvta.to.S(p)]`:
 * codegen emits a global/LDS/private access instead of a flat one (no
 * aperture check, LDS without the flat path, scratch by buffer), and the
 * emulator skips decoding the window.
 *
 * Analysis: an optimistic fixpoint (a worklist over def-use edges) over
 * each function's values: unknown
 * (not yet reached), one space, or none (not provable).  cvta of a space
 * gives it; copy passes it on; add gives the pointer operand's space when
 * exactly one operand has one; sub when the first does and the second has
 * none; mad the addend's when the factors have none; phi the common space
 * of its known operands.  A kernel's own 64-bit parameters are global
 * (kernel_arg).  Anything else (loads from memory, a device function's
 * parameters, constants) has none.  Values still unknown at the fixpoint (cycles that no cvta
 * reaches) are not converted.
 */
#include <string.h>

#include "lower_internal.h"

enum { AS_TOP = 0, AS_BOTTOM = 255 };

static bool convertible_space(unsigned s) {
  return s == IR_SPACE_GLOBAL || s == IR_SPACE_SHARED || s == IR_SPACE_SHARED_CTA || s == IR_SPACE_LOCAL ||
         s == IR_SPACE_CONST;
}

static uint8_t state_of(const uint8_t *st, const ir_value *v) {
  return v && v->kind == IR_VAL_INSTR ? st[v->id] : AS_BOTTOM;
}
static bool is_space(uint8_t s) { return s != AS_TOP && s != AS_BOTTOM; }

/* A 64-bit load of one of kernel f's own parameters: a pointer argument
 * comes from the host, which can only name global memory (a kernel's
 * shared and local memory do not exist before it runs), so a generic
 * address made from it is global (CUDA's model: cudaMalloc'd, managed or
 * mapped memory).  Call buffers and return values (.param variables of
 * the kernel's calls) are not parameters of f and do not count. */
static bool kernel_arg(const ir_func *f, const ir_instr *i) {
  if (!f->is_kernel || i->op != ir_op_ld || i->ndst != 1 || i->mods.vec > 1) return false;
  if (i->mods.space != IR_SPACE_PARAM && i->mods.space != IR_SPACE_PARAM_ENTRY) return false;
  if (ir_type_bits((ir_type)i->type) != 64) return false;
  const ir_value *a = i->src[0];
  if (a->kind != IR_VAL_SYMBOL || a->symref.sym.kind != IR_SYM_PARAM) return false;
  const ir_param *p = a->symref.sym.param;
  return f->nparams && p >= f->params && p < f->params + f->nparams;
}

static uint8_t transfer(const ir_func *f, const ir_instr *i, const uint8_t *st) {
  if (kernel_arg(f, i)) return IR_SPACE_GLOBAL;
  switch ((ir_op)i->op) {
  case ir_op_cvta:
    if (!i->mods.cvta_to && convertible_space(i->mods.space) && ir_type_bits((ir_type)i->type) == 64)
      return i->mods.space == IR_SPACE_SHARED_CTA ? IR_SPACE_SHARED : i->mods.space;
    return AS_BOTTOM;
  case ir_op_copy: return state_of(st, i->src[0]);
  case ir_op_add: case ir_op_sub: {
    if (i->ndst != 1 || ir_type_bits((ir_type)i->type) != 64) return AS_BOTTOM;   /* no .cc */
    uint8_t x = state_of(st, i->src[0]), y = state_of(st, i->src[1]);
    if (is_space(x) && is_space(y)) return AS_BOTTOM;
    if (is_space(x)) return x;
    if (is_space(y)) return i->op == ir_op_add ? y : AS_BOTTOM;
    return x == AS_TOP || y == AS_TOP ? AS_TOP : AS_BOTTOM;
  }
  case ir_op_mad: {
    if (i->ndst != 1 || ir_type_bits((ir_type)i->type) > 64 || i->nsrc != 3) return AS_BOTTOM;
    if (i->mods.mulmode != IR_MUL_LO && i->mods.mulmode != IR_MUL_WIDE) return AS_BOTTOM;
    unsigned rbits = i->mods.mulmode == IR_MUL_WIDE ? 2 * ir_type_bits((ir_type)i->type) : ir_type_bits((ir_type)i->type);
    if (rbits != 64 || i->mods.sat) return AS_BOTTOM;
    uint8_t a = state_of(st, i->src[0]), b = state_of(st, i->src[1]), c = state_of(st, i->src[2]);
    if (is_space(a) || is_space(b)) return AS_BOTTOM;
    if (is_space(c)) return c;
    return c == AS_TOP || a == AS_TOP || b == AS_TOP ? AS_TOP : AS_BOTTOM;
  }
  case ir_op_phi: {
    uint8_t r = AS_TOP;
    for (unsigned k = 0; k < i->nsrc; k++) {
      uint8_t s = state_of(st, i->src[k]);
      if (s == AS_TOP) continue;
      if (s == AS_BOTTOM || (r != AS_TOP && r != s)) return AS_BOTTOM;
      r = s;
    }
    return r;
  }
  default: return AS_BOTTOM;
  }
}

static bool is_generic_access(const ir_instr *i) {
  switch ((ir_op)i->op) {
  case ir_op_ld: case ir_op_st: case ir_op_atom: case ir_op_red:
    return i->mods.space == IR_SPACE_GENERIC && i->nsrc >= 1;
  default: return false;
  }
}

/* The pass's scratch: one arena, its arrays reused from one function to
 * the next (LOWER_RESERVE). */
typedef struct addr_scratch {
  pw_arena a;
  LOWER_SCRATCH_BUF(uint8_t) st, queued;
  LOWER_SCRATCH_BUF(size_t) first, fill;
  LOWER_SCRATCH_BUF(const ir_instr *) use, work;
  LOWER_SCRATCH_BUF(ir_instr *) nw;
  LOWER_SCRATCH_BUF(ir_value *) map, src;
  ir_instr **list;
  size_t list_cap;
} addr_scratch;

/* Rebuilds i as an access of space s through cvta.to.s of its address:
 * a clone with that address operand and space. */
static void convert(addr_scratch *S, ir_instr *i, unsigned s, ir_instr **out) {
  ir_builder b = ir_builder_before(i);
  b.loc = i->loc;
  ir_value **src = LOWER_RESERVE(&S->a, S->src, i->nsrc);
  for (unsigned k = 0; k < i->nsrc; k++) src[k] = i->src[k];
  src[0] = ir_alu1(&b, ir_op_cvta, ir_type_u64, i->src[0], .space = (uint8_t)s, .cvta_to = 1);
  ir_mods mods = i->mods;
  mods.space = (uint8_t)s;
  *out = ir_clone(&b, i, src, &mods);
  ir_instr_remove(i);
}

/* A state only goes down: unknown -> a space -> none.  transfer() alone
 * is not monotone (add of two spaces is none, but once one operand has
 * become none, add gives the other's space), and in a loop that made the
 * states cycle forever (cuBLASLt modules hung lowering); meeting with the
 * old state keeps the descent, and only ever gives up a conversion. */
static uint8_t meet(uint8_t old, uint8_t s) {
  if (old == AS_TOP) return s;
  if (old == AS_BOTTOM || s == AS_TOP) return old;
  return s == old ? old : AS_BOTTOM;
}

/* The fixpoint by a worklist over the def-use edges: a value's state only
 * goes down (unknown -> a space -> none), so each instruction is visited
 * at most a few times per operand; sweeping the blocks until nothing
 * changed took one sweep per step a state travels against layout order:
 * quadratic, minutes on a large cuBLASLt module. */
enum { QUEUED = 1, EVALUATED = 2 };  /* queued[]: on the worklist; transfer() ran once */

static void solve(addr_scratch *S, const ir_func *f, uint8_t *st) {
  size_t nv = f->nvalues + 1, ninstr = 0, nedges = 0;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    ninstr++;
    for (unsigned k = 0; k < i->nsrc; k++)
      if (i->src[k] && i->src[k]->kind == IR_VAL_INSTR && i->src[k]->id < nv) nedges++;
  }
  /* users of value v: use[first[v] .. first[v + 1]) (CSR) */
  size_t *first = LOWER_RESERVE(&S->a, S->first, nv + 1);
  const ir_instr **use = LOWER_RESERVE(&S->a, S->use, nedges);
  const ir_instr **work = LOWER_RESERVE(&S->a, S->work, ninstr);
  uint8_t *queued = LOWER_RESERVE(&S->a, S->queued, nv);  /* by the instruction's first result */
  memset(first, 0, (nv + 1) * sizeof *first);
  memset(queued, 0, nv);
  ir_foreach_block(f, b) ir_foreach_instr(b, i)
    for (unsigned k = 0; k < i->nsrc; k++)
      if (i->src[k] && i->src[k]->kind == IR_VAL_INSTR && i->src[k]->id < nv) first[i->src[k]->id + 1]++;
  for (size_t v = 0; v < nv; v++) first[v + 1] += first[v];
  size_t *fill = LOWER_RESERVE(&S->a, S->fill, nv);
  memcpy(fill, first, nv * sizeof *fill);
  size_t top = 0;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    for (unsigned k = 0; k < i->nsrc; k++)
      if (i->src[k] && i->src[k]->kind == IR_VAL_INSTR && i->src[k]->id < nv) use[fill[i->src[k]->id]++] = i;
    if (i->ndst >= 1 && i->dst[0] && i->dst[0]->id < nv) {
      work[top++] = i;
      queued[i->dst[0]->id] = QUEUED;
    }
  }
  while (top) {
    const ir_instr *i = work[--top];
    size_t id = i->dst[0]->id;
    bool incremental = queued[id] & EVALUATED;
    queued[id] = EVALUATED;
    if (!incremental || i->op != ir_op_phi) {
      uint8_t s = meet(st[id], transfer(f, i, st));
      if (s == st[id]) continue;
      st[id] = s;
    }
    for (size_t u = first[id]; u < first[id + 1]; u++) {
      const ir_instr *j = use[u];
      if (j->ndst < 1 || !j->dst[0] || j->dst[0]->id >= nv) continue;
      size_t jd = j->dst[0]->id;
      if (j->op == ir_op_phi && (queued[jd] & EVALUATED)) {
        /* A phi is the meet of its operands and states only go down, so
         * meeting its state with the one operand that changed is the same
         * as transfer() over all of them: O(1) per edge.  Re-reading every
         * operand per change was quadratic at a merge of many branches
         * (65,536 predecessors: minutes). */
        uint8_t s = meet(st[jd], st[id]);
        if (s == st[jd]) continue;
        st[jd] = s;
      }
      if (queued[jd] & QUEUED) continue;
      queued[jd] |= QUEUED;
      work[top++] = j;  /* at most one entry per instruction: fits in ninstr */
    }
  }
}

/* Eliminates nothing (an opt_ pass); rewrites accesses in place, so the
 * CFG and its analyses stay; the new values are not in the divergence
 * analysis. */
const lower_contract opt_addrspace_contract = {
    .pass = "opt_addrspace",
    .preserves = IR_ANALYSIS_DOMINANCE | IR_ANALYSIS_POST_DOMINANCE,
};

bool opt_addrspace(ir_module *m, const opt_addrspace_options *opt) {
  bool progress = false;
  addr_scratch S = {0};
  pw_arena_init(&S.a);
  S.a.on_oom = m->arena.on_oom;  /* out of memory unwinds as in the module's arena */
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    uint8_t *st = LOWER_RESERVE(&S.a, S.st, f->nvalues + 1);
    memset(st, AS_TOP, f->nvalues + 1);
    solve(&S, f, st);
    size_t n = 0, total = 0;
    ir_foreach_block(f, b) ir_foreach_instr(b, i) {
      if (!is_generic_access(i)) continue;
      total++;
      if (!is_space(state_of(st, i->src[0]))) continue;
      if (n == S.list_cap) {
        S.list = lower_scratch_grow(&S.a, S.list, n, S.list_cap ? 2 * S.list_cap : 16, sizeof *S.list);
        S.list_cap = S.list_cap ? 2 * S.list_cap : 16;
      }
      S.list[n++] = i;
    }
    if (n) {
      ir_instr **list = S.list, **nw = LOWER_RESERVE(&S.a, S.nw, n);
      for (size_t k = 0; k < n; k++) convert(&S, list[k], state_of(st, list[k]->src[0]), &nw[k]);
      /* the map covers the values the conversions made, too */
      ir_value **map = LOWER_RESERVE(&S.a, S.map, f->nvalues + 1);
      memset(map, 0, (f->nvalues + 1) * sizeof *map);
      for (size_t k = 0; k < n; k++)
        for (unsigned d = 0; d < list[k]->ndst; d++) map[list[k]->dst[d]->id] = nw[k]->dst[d];
      ir_replace_uses(f, map);
      progress = true;
    }
    if (opt && opt->converted) *opt->converted += (unsigned)n;
    if (opt && opt->generic) *opt->generic += (unsigned)total;
  }
  pw_arena_free(&S.a);
  return progress;
}
