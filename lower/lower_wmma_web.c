/* lower/lower_wmma_web.c: which wmma instructions may keep their fragments
 * in the layout of AMD's matrix instruction (lower_wmma.c), decided per
 * web: a connected set of fragment registers (docs/lowering.md, "wmma",
 * "Fragments in AMD's layout").
 *
 * CUDA leaves the fragment layout unspecified (PTX ISA 9.7.14.4.1): a
 * program may load, store, run mma and apply one operation to every
 * element.  A fragment whose registers go only there computes the same
 * matrices in any layout, so lower_wmma may choose AMD's; a fragment read
 * in any other way (stored by st, shuffled, passed to a call, packed or
 * unpacked, compared) may depend on ptxwave's documented layout
 * (ir/ir_wmma.h), and keeps it.  The rule, per function:
 *
 *   - Web values: every register a wmma instruction reads or writes as a
 *     fragment register, every result of an element-wise instruction
 *     (is_elementwise) one of whose operands is a web value, every phi
 *     operand and result connected to one.  Constants (and copies or cvt
 *     of constants: fill_fragment(c, 0.0f)) are the same element in every
 *     layout and are not web values.
 *   - A web value is bad when it is read by anything but a wmma
 *     instruction's fragment operand, an element-wise instruction or a phi;
 *     when it is defined by anything but a wmma instruction, a phi or an
 *     element-wise instruction reading a web value (a register filled by
 *     ld or a shuffle is an element the program placed itself); when a
 *     guarded instruction reads or writes it (its keep value is a second
 *     definition); and when it has two slots (below).
 *   - Slot: the fragment kind (A f16, A bf16, B f16, B bf16, accumulator
 *     f32, accumulator f16) and register index a wmma instruction gives a
 *     value.  Element-wise instructions and phis join their web operands'
 *     and result's slots: a.x[i] * c.x[j] with i != j, or an A register
 *     used as C, reads elements whose pairing depends on the layout.
 *   - A web (the values joined through one wmma instruction, one
 *     element-wise instruction or one phi) with a bad value, or with a wmma
 *     instruction the target cannot run in AMD's layout (fits()), keeps
 *     ptxwave's layout as a whole; the others go to AMD's.
 *
 * Element-wise operands that are not web values (alpha in alpha * acc.x[i])
 * are the program's to make uniform, as in CUDA.
 */
#include <stdlib.h>
#include <string.h>

#include "ir/ir_wmma.h"
#include "lower_internal.h"

/* The same operation on each element, a result of the operands alone
 * (one result: add.cc's carry is not). */
static bool is_elementwise(const ir_instr *i) {
  if (i->ndst != 1) return false;
  switch ((ir_op)i->op) {
  case ir_op_copy: case ir_op_add: case ir_op_sub: case ir_op_mul: case ir_op_mad: case ir_op_fma:
  case ir_op_neg: case ir_op_abs: case ir_op_min: case ir_op_max: case ir_op_cvt: case ir_op_div:
  case ir_op_rcp: case ir_op_sqrt: case ir_op_rsqrt: case ir_op_ex2: case ir_op_lg2: case ir_op_tanh:
  case ir_op_copysign: case ir_op_and: case ir_op_or: case ir_op_xor: case ir_op_not: case ir_op_selp:
    return true;
  default:
    return false;
  }
}

/* A register split into its two 16-bit halves (mov.b32 {h0, h1}, r) and
 * two halves joined into a register (mov.b32 r, {h0, h1}): nvcc's code for
 * an operation on each .f16 element of a fragment.  Half h of a register
 * is an element of its own slot (half_slot), so a join must put the halves
 * of one register back in their places. */
static bool is_split(const ir_instr *i) {
  return i->op == ir_op_unpack && i->nsrc == 1 && i->ndst == 2 && ir_type_bits((ir_type)i->src[0]->type) == 32 &&
         ir_type_bits((ir_type)i->dst[0]->type) == 16 && ir_type_bits((ir_type)i->dst[1]->type) == 16;
}
static bool is_join(const ir_instr *i) {
  return i->op == ir_op_pack && i->nsrc == 2 && i->ndst == 1 && ir_type_bits((ir_type)i->dst[0]->type) == 32 &&
         ir_type_bits((ir_type)i->src[0]->type) == 16 && ir_type_bits((ir_type)i->src[1]->type) == 16;
}

static bool is_wmma(const ir_instr *i) {
  return i->op == ir_op_wmma_load || i->op == ir_op_wmma_store || i->op == ir_op_wmma_mma;
}

/* Constants and element-wise results of constants: one value for every
 * element in any layout. */
static bool const_like(const ir_value *v, unsigned depth) {
  if (v->kind == IR_VAL_CONST || v->kind == IR_VAL_UNDEF) return true;
  if (v->kind != IR_VAL_INSTR || depth > 4) return false;
  const ir_instr *d = v->def;
  if ((d->op != ir_op_copy && d->op != ir_op_cvt) || d->guard || d->nsrc != 1) return false;
  return const_like(d->src[0], depth + 1);
}

/* A fragment operand of a wmma instruction: which value, its slot. */
typedef struct frag_ref { ir_value *v; unsigned slot; } frag_ref;
enum { K_A_F16, K_A_BF16, K_B_F16, K_B_BF16, K_ACC_F32, K_ACC_F16, K_OTHER };

static unsigned kind_of(unsigned frag, ir_type t) {
  if (frag == IR_FRAG_A || frag == IR_FRAG_B) {
    unsigned base = frag == IR_FRAG_A ? K_A_F16 : K_B_F16;
    return t == ir_type_f16 ? base : t == ir_type_bf16 ? base + 1 : K_OTHER;
  }
  return t == ir_type_f32 ? K_ACC_F32 : t == ir_type_f16 ? K_ACC_F16 : K_OTHER;
}
/* slot 0: none; else 1 + 32 kind + index (at most 16 registers); half h
 * of the register of slot s: s + (h + 1) SLOT_HALF */
static unsigned slot(unsigned kind, unsigned idx) { return 1 + 32 * kind + idx; }
#define SLOT_HALF 0x10000u

/* The slot of half h of a register of slot s (0: a half has no halves).
 * Half h of register u of an .f16 accumulator is element 2u + h, the
 * element register 2u + h of an .f32 accumulator holds, in ptxwave's
 * layout (ir_wmma.h: C/D packed low to high) and in AMD's (lower_wmma.c:
 * row register 2u + h): so cvt.f16.f32 of acc.x[2u], acc.x[2u + 1] joined
 * is register u of a .f16 fragment in either. */
static uint32_t half_slot(uint32_t s, unsigned h) {
  if (s >= SLOT_HALF) return 0;
  unsigned kind = (s - 1) / 32, idx = (s - 1) % 32;
  if (kind == K_ACC_F16) return slot(K_ACC_F32, 2 * idx + h);
  return s + (h + 1) * SLOT_HALF;
}
/* The register's slot whose half h has slot s, or 0. */
static uint32_t whole_slot(uint32_t s, unsigned h) {
  if (s >= SLOT_HALF) return s / SLOT_HALF == h + 1 ? s % SLOT_HALF : 0;
  unsigned kind = (s - 1) / 32, idx = (s - 1) % 32;
  return kind == K_ACC_F32 && idx % 2 == h ? slot(K_ACC_F16, idx / 2) : 0;
}

/* The fragment operands of wmma instruction i (ir_wmma_find accepted it)
 * into r[]; the count. */
static unsigned frag_refs(const ir_instr *i, const ir_wmma_form *f, frag_ref *r) {
  unsigned n = 0;
  if (i->op == ir_op_wmma_load) {
    unsigned k = kind_of(i->mods.frag, (ir_type)i->type);
    for (unsigned j = 0; j < i->ndst; j++) r[n++] = (frag_ref){i->dst[j], slot(k, j)};
  } else if (i->op == ir_op_wmma_store) {
    unsigned k = kind_of(IR_FRAG_D, (ir_type)i->type), nr = ir_wmma_nregs(f, IR_FRAG_D, (ir_type)i->type);
    for (unsigned j = 0; j < nr; j++) r[n++] = (frag_ref){i->src[1 + j], slot(k, j)};
  } else {
    ir_wmma_types t = ir_wmma_mma_types(i);
    unsigned na = ir_wmma_nregs(f, IR_FRAG_A, t.a), nb = ir_wmma_nregs(f, IR_FRAG_B, t.b);
    unsigned nc = ir_wmma_nregs(f, IR_FRAG_C, t.c);
    for (unsigned j = 0; j < na; j++) r[n++] = (frag_ref){i->src[j], slot(kind_of(IR_FRAG_A, t.a), j)};
    for (unsigned j = 0; j < nb; j++) r[n++] = (frag_ref){i->src[na + j], slot(kind_of(IR_FRAG_B, t.b), j)};
    for (unsigned j = 0; j < nc; j++) r[n++] = (frag_ref){i->src[na + nb + j], slot(kind_of(IR_FRAG_C, t.c), j)};
    for (unsigned j = 0; j < i->ndst; j++) r[n++] = (frag_ref){i->dst[j], slot(kind_of(IR_FRAG_D, t.d), j)};
  }
  return n;
}


static bool web_value(const ir_value *v) { return v->kind == IR_VAL_INSTR || v->kind == IR_VAL_PARAM; }

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (ir_instr *const *)a, y = (uintptr_t) * (ir_instr *const *)b;
  return x < y ? -1 : x > y;
}

/* One function's analysis: per value id, whether it is a web value, bad,
 * its component (union-find over webs) and slot class (union-find over
 * values that must share a slot), the slot a wmma instruction gives it,
 * and per class root the class's slot. */
typedef struct web_fn {
  uint8_t *web, *bad;
  uint32_t *comp, *cls, *slot_of, *cslot;
  bool (*fits)(const ir_instr *, void *);
  void *data;
} web_fn;

/* Seeds (the fragment registers of every wmma instruction) and the
 * closure through element-wise instructions, splits, joins and phis. */
static void web_seed(web_fn *w, ir_func *fn) {
  frag_ref refs[64];
  ir_foreach_block(fn, blk) ir_foreach_instr(blk, i) {
    ir_wmma_form f;
    if (!is_wmma(i) || !ir_wmma_find(i, &f, NULL, NULL)) continue;   /* others: lower_warps reports them */
    unsigned n = frag_refs(i, &f, refs);
    for (unsigned k = 0; k < n; k++)
      if (web_value(refs[k].v) && !const_like(refs[k].v, 0)) w->web[refs[k].v->id] = 1;
  }
  for (bool changed = true; changed;) {
    changed = false;
    ir_foreach_block(fn, blk) ir_foreach_instr(blk, i) {
      bool phi = i->op == ir_op_phi;
      if (!phi && !is_elementwise(i) && !is_split(i) && !is_join(i)) continue;
      bool in = phi && w->web[i->dst[0]->id];
      for (unsigned k = 0; k < i->nsrc && !in; k++) in = web_value(i->src[k]) && w->web[i->src[k]->id];
      if (!in) continue;
      for (unsigned k = 0; k < i->ndst; k++)
        if (!w->web[i->dst[k]->id]) w->web[i->dst[k]->id] = 1, changed = true;
      if (phi)
        for (unsigned k = 0; k < i->nsrc; k++)
          if (web_value(i->src[k]) && !const_like(i->src[k], 0) && !w->web[i->src[k]->id])
            w->web[i->src[k]->id] = 1, changed = true;
    }
  }
}

static bool in_web(const web_fn *w, const ir_value *v) { return web_value(v) && w->web[v->id]; }

/* Instruction i's part: the webs it joins, the slots it gives, the web
 * values it reads or defines in a way that makes them bad. */
static void web_instr(web_fn *w, ir_instr *i) {
  bool phi = i->op == ir_op_phi, ew = is_elementwise(i), wm = is_wmma(i), sj = is_split(i) || is_join(i);
  frag_ref refs[64];
  ir_wmma_form f;
  unsigned n = 0;
  if (wm && ir_wmma_find(i, &f, NULL, NULL)) {
    n = frag_refs(i, &f, refs);
    bool ok = !i->guard && w->fits(i, w->data);
    uint32_t first = UINT32_MAX;
    for (unsigned k = 0; k < n; k++) {
      ir_value *v = refs[k].v;
      if (!in_web(w, v)) continue;
      if (first == UINT32_MAX) first = v->id;
      lower_uf_unite(w->comp, v->id, first);
      if ((w->slot_of[v->id] && w->slot_of[v->id] != refs[k].slot) || !ok) w->bad[v->id] = 1;
      w->slot_of[v->id] = refs[k].slot;
    }
  }
  /* uses: only as a fragment operand (not the address or the stride) */
  for (unsigned k = 0; k < i->nsrc; k++) {
    ir_value *v = i->src[k];
    if (!in_web(w, v)) continue;
    bool frag = false;
    for (unsigned r = 0; r < n && !frag; r++) frag = refs[r].v == v && !(i->op == ir_op_wmma_load && k == 0);
    if (wm && i->op == ir_op_wmma_store && (k == 0 || k > ir_wmma_nregs(&f, IR_FRAG_D, (ir_type)i->type))) frag = false;
    if (!(wm ? frag : phi || ew || sj) || i->guard || v->kind == IR_VAL_PARAM) w->bad[v->id] = 1;
    if ((phi || ew) && w->web[i->dst[0]->id]) {
      lower_uf_unite(w->comp, v->id, i->dst[0]->id);
      lower_uf_unite(w->cls, v->id, i->dst[0]->id);
    }
    if (sj)
      for (unsigned d = 0; d < i->ndst; d++) lower_uf_unite(w->comp, v->id, i->dst[d]->id);
  }
  for (unsigned k = 0; k < i->ndst && i->guard; k++) {
    if (w->web[i->dst[k]->id]) w->bad[i->dst[k]->id] = 1;
    if (i->keep && i->keep[k] && in_web(w, i->keep[k])) w->bad[i->keep[k]->id] = 1;
  }
  /* definitions: a web result of anything else is an element the program
   * placed itself */
  for (unsigned k = 0; k < i->ndst && !wm && !phi; k++) {
    if (!w->web[i->dst[k]->id]) continue;
    bool from_web = false;
    for (unsigned s = 0; s < i->nsrc && (ew || sj); s++) from_web |= in_web(w, i->src[s]);
    if (is_join(i))   /* both halves elements of the web, not a constant in a place of the layout */
      from_web = in_web(w, i->src[0]) && in_web(w, i->src[1]);
    if (!from_web) w->bad[i->dst[k]->id] = 1;
  }
}

/* One slot per class; the halves' slots through splits and joins, to a
 * fixed point (a chain of them passes slots on one step per round). */
static void web_slots(web_fn *w, ir_func *fn) {
  uint32_t N = fn->nvalues;
  for (uint32_t k = 0; k < N; k++) {
    if (!w->web[k] || !w->slot_of[k]) continue;
    uint32_t c = lower_uf_find(w->cls, k);
    if (w->cslot[c] && w->cslot[c] != w->slot_of[k]) w->bad[k] = 1;
    w->cslot[c] = w->slot_of[k];
  }
  for (bool changed = true; changed;) {
    changed = false;
    ir_foreach_block(fn, blk) ir_foreach_instr(blk, i) {
      bool sp = is_split(i);
      if (!sp && !is_join(i)) continue;
      ir_value *whole = sp ? i->src[0] : i->dst[0];
      if (!in_web(w, whole)) continue;
      uint32_t cw = lower_uf_find(w->cls, whole->id);
      for (unsigned h = 0; h < 2; h++) {
        ir_value *half = sp ? i->dst[h] : i->src[h];
        if (!in_web(w, half)) continue;
        uint32_t ch = lower_uf_find(w->cls, half->id), *cs = w->cslot;
        uint32_t want = cs[cw] ? half_slot(cs[cw], h) : 0, parent = cs[ch] ? whole_slot(cs[ch], h) : 0;
        if (want && !cs[ch]) cs[ch] = want, changed = true;
        else if (parent && !cs[cw]) cs[cw] = parent, changed = true;
        if (cs[cw] && cs[ch] && (!want || cs[ch] != want)) w->bad[half->id] = w->bad[whole->id] = 1;
      }
    }
  }
  for (uint32_t k = 0; k < N; k++) {
    if (!w->web[k]) continue;
    uint32_t c = lower_uf_find(w->cls, k);
    /* no slot: a web value no wmma instruction reaches (cannot happen: be safe) */
    if (!w->cslot[c] || (w->slot_of[k] && w->cslot[c] != w->slot_of[k])) w->bad[k] = 1;
  }
  for (uint32_t k = 0; k < N; k++)
    if (w->web[k] && w->bad[k]) w->bad[lower_uf_find(w->comp, k)] = 1;
}

void lower_wmma_webs(ir_module *m, pw_arena *a, bool (*fits)(const ir_instr *, void *), void *data,
                     lower_wmma_web *out) {
  *out = (lower_wmma_web){0};
  size_t cap = 0;
  ir_foreach_func(m, fn) {
    if (fn->is_decl || !fn->entry) continue;
    bool any = false;
    ir_foreach_block(fn, blk) ir_foreach_instr(blk, i) any |= is_wmma(i);
    if (!any) continue;
    uint32_t N = fn->nvalues;
    web_fn w = {LOWER_SCRATCH(a, uint8_t, N), LOWER_SCRATCH(a, uint8_t, N), LOWER_SCRATCH(a, uint32_t, N),
                LOWER_SCRATCH(a, uint32_t, N), LOWER_SCRATCH(a, uint32_t, N), LOWER_SCRATCH(a, uint32_t, N), fits, data};
    for (uint32_t k = 0; k < N; k++) w.comp[k] = w.cls[k] = k;
    web_seed(&w, fn);
    ir_foreach_block(fn, blk) ir_foreach_instr(blk, i) web_instr(&w, i);
    web_slots(&w, fn);
    /* the wmma instructions whose web is good */
    frag_ref refs[64];
    ir_foreach_block(fn, blk) ir_foreach_instr(blk, i) {
      ir_wmma_form f;
      if (!is_wmma(i) || !ir_wmma_find(i, &f, NULL, NULL) || i->guard || !fits(i, data)) continue;
      unsigned n = frag_refs(i, &f, refs);
      bool ok = true;
      for (unsigned k = 0; k < n && ok; k++) ok = !in_web(&w, refs[k].v) || !w.bad[lower_uf_find(w.comp, refs[k].v->id)];
      if (!ok) continue;
      if (out->n == cap) {
        out->amd = lower_scratch_grow(a, out->amd, out->n, cap ? 2 * cap : 16, sizeof *out->amd);
        cap = cap ? 2 * cap : 16;
      }
      out->amd[out->n++] = i;
    }
  }
  if (out->n) qsort(out->amd, out->n, sizeof *out->amd, cmp_ptr);
}

bool lower_wmma_web_amd(const lower_wmma_web *w, const ir_instr *i) {
  return w->n && bsearch(&i, w->amd, w->n, sizeof *w->amd, cmp_ptr);
}
