/* lower/lower_barriers.c: CTA barriers (PTX ISA 9.7.13.1 bar, barrier,
 * bar.red) on AMD's one workgroup barrier (s_barrier) and shared memory
 * (docs/lowering.md, "Barriers", has the algorithms and why they hold).
 *
 *   bar.sync a / barrier.sync a without a thread count: every thread of
 *     the CTA takes part, so any id is the one hardware barrier:
 *     workgroup_barrier.
 *   bar.sync a, b / bar.arrive a, b (b threads, counted in 32-thread warps
 *     as PTX counts them): an arrival count and a generation per id in the
 *     shared array __ptxwave_bar the pass adds to the module.  The lowest
 *     active lane of the wave adds the number of its warps (halves with an
 *     active lane) under a guard; the wave that completes the count resets
 *     it and bumps the generation; a sync waits in a loop that every lane
 *     of the wave runs (uniform), until the generation moves.
 *   bar.red.{popc,and,or} a, p: one accumulator (the count of lanes with
 *     p true for popc/or, p false for and), between two workgroup barriers
 *     (no count) or two named barriers (count); the thread or lane that is
 *     sure everyone has read it subtracts what it read, so the next round
 *     starts from zero whatever order the next adds come in.
 * The array is zeroed at the entry of every kernel of a module that needs
 * it (thread 0's v4/v2 stores, then workgroup_barrier): LDS is not zeroed
 * by the hardware.  The state is three arrays, each sized for what the
 * module uses (layout()) and each held only by the kernels that reach it:
 * LDS is occupancy, and a kernel with one __syncthreads_count should not
 * pay for sixteen named barriers.
 */
#include <stdlib.h>

#include "lower_internal.h"

/* The arrays (docs/lowering.md "Barriers"), u32, 16-aligned:
 *   __ptxwave_bar        count and generation of named barriers 0..n-1
 *                        (bar/barrier with a thread count, bar.arrive,
 *                        and the two barriers of a counted bar.red);
 *   __ptxwave_bar_red    bar.red without a count: one accumulator (red_count);
 *   __ptxwave_bar_red_id bar.red with a count: one accumulator per id;
 * n = 1 + the largest barrier id, 16 when an id is not a constant. */
enum { SEC_NAMED, SEC_RED, SEC_RED_ID, NSEC };
static const char *const sec_name[NSEC] = {"__ptxwave_bar", "__ptxwave_bar_red", "__ptxwave_bar_red_id"};

typedef struct bar_layout {
  unsigned words[NSEC];   /* 0: not used by the module */
} bar_layout;

typedef struct bars_state {
  const lower_barriers_options *opt;
  unsigned wave;          /* the module's facts: its wave size */
  bar_layout l;
  ir_global *arr[NSEC];   /* created on first need */
} bars_state;

static bool has_count(const ir_instr *i) {
  return i->op == ir_op_bar_red ? i->nsrc >= 3 : i->nsrc >= 2;
}

static bool want(const ir_instr *i, void *data) {
  (void)data;
  return i->op == ir_op_bar || i->op == ir_op_bar_red;
}

/* Eliminates bar/barrier and bar.red; builds blocks (spin loops, the
 * arrays' zeroing). */
const lower_contract lower_barriers_contract = {
    .pass = "lower_barriers",
    .ops = (const ir_op[]){ir_op_bar, ir_op_bar_red, ir_op_count},
    .preserves = 0,
};

static bar_layout layout(const ir_module *m) {
  bool named = false, red = false, redc = false;
  unsigned n = 0;
  ir_foreach_func(m, f) ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
    if (!want(i, NULL) || !has_count(i)) {
      if (i->op == ir_op_bar_red) red = true;   /* bar.red without a count */
      continue;
    }
    named = true;
    if (i->op == ir_op_bar_red) redc = true;
    const ir_value *id = i->nsrc ? i->src[0] : NULL;
    unsigned k = id && id->kind == IR_VAL_CONST && id->imm < 16 ? (unsigned)id->imm + 1 : 16;
    if (k > n) n = k;
  }
  bar_layout l = {{named ? 2 * n : 0, red ? 1 : 0, redc ? n : 0}};
  return l;
}

/* The array of a section, created on first use. */
static ir_global *array(bars_state *s, ir_module *m, unsigned sec) {
  if (!s->arr[sec]) {
    s->arr[sec] = ir_module_find_global(m, sec_name[sec]);
    if (!s->arr[sec])
      s->arr[sec] = ir_global_create(m, NULL, sec_name[sec], IR_SPACE_SHARED, ir_type_b32, s->l.words[sec], 16);
  }
  return s->arr[sec];
}

static ir_value *base(ir_builder *b, bars_state *s, unsigned sec) {
  return ir_symref(b, ir_sym_global(array(s, b->block->func->module, sec)), 0, ir_type_u64);
}

/* Address of word w (a u32 value or NULL) + k of a section's array: a
 * 32-bit shared-window offset, as `mov.u32 %r, var` gives it. */
static ir_value *word_addr(ir_builder *b, bars_state *s, unsigned sec, ir_value *w, unsigned k) {
  ir_value *a = ir_alu1(b, ir_op_symaddr, ir_type_u32, base(b, s, sec));
  if (w) a = ir_add(b, ir_type_u32, a, lower_alu(b, ir_op_shl, ir_type_b32, w, lower_imm32(b, 2)));
  return k ? ir_add(b, ir_type_u32, a, lower_imm32(b, 4 * k)) : a;
}

static ir_value *ld_volatile(ir_builder *b, ir_value *addr) {
  return ir_build_mem(b, ir_op_ld, ir_type_u32, addr, 0, 0, NULL, 1,
                      IR_MODS(.space = IR_SPACE_SHARED, .sem = IR_SEM_VOLATILE))->dst[0];
}
static void fence_cta(ir_builder *b) {
  ir_build(b, ir_op_membar, ir_type_none, 0, NULL, 0, NULL, IR_MODS(.scope = IR_SCOPE_CTA));
}
static void wg_barrier(ir_builder *b) {
  ir_build(b, ir_op_workgroup_barrier, ir_type_none, 0, NULL, 0, NULL, NULL);
}

/* The wave's lowest active lane. */
static ir_value *is_first_lane(ir_builder *b, const lower_wave *lw, ir_value *exec) {
  ir_value *low = ir_and(b, lw->mask_type, exec, ir_alu2(b, ir_op_sub, lw->mask_type, ir_imm(b, lw->mask_type, 0), exec));
  ir_value *first = ir_alu1(b, ir_op_bfind, lw->w == 64 ? ir_type_u64 : ir_type_u32, low);
  return lower_setp(b, IR_CMP_EQ, ir_type_u32, lw->lane, first);
}

static ir_value *popc_mask(ir_builder *b, const lower_wave *lw, ir_value *m) {
  return ir_alu1(b, ir_op_popc, lw->mask_type, m);
}

static void guard(ir_builder *b, ir_instr *i, ir_value *p) { ir_instr_set_guard(b, i, p, false, NULL); }

static ir_instr *atom_add_i(ir_builder *b, ir_value *addr, ir_value *v) {
  return ir_build_mem(b, ir_op_atom, ir_type_u32, addr, 0, 1, (ir_value *[]){v}, 1,
                      IR_MODS(.space = IR_SPACE_SHARED, .atomop = IR_ATOM_ADD));
}

/* The whole wave runs the sequence, one lane (the lowest active) does the
 * atomics through guards, and the spin loop is uniform: every lane of the
 * wave loads the generation, so no lane of the wave runs ahead of the
 * others whatever the reconvergence model (docs/lowering.md). */
/* One named barrier (id, count threads); sync: wait for it, else arrive.
 * Returns the predicate of the lane that completed it (the lowest active
 * lane of the last wave to arrive), false elsewhere. */
static ir_value *named_sync(ir_builder *b, bars_state *s, ir_value *id, ir_value *count, bool sync) {
  lower_wave lw;
  lower_wave_init(b, s->wave, &lw);
  ir_value *exec = ir_build_value(b, ir_op_wave_exec, lw.mask_type, 0, NULL, NULL);
  ir_value *nw;
  if (lw.w == 64) {
    ir_value *lo = lower_lo32(b, exec);
    ir_value *hi = lower_lo32(b, lower_alu(b, ir_op_shr, ir_type_b64, exec, lower_imm32(b, 32)));
    ir_value *a = lower_selp(b, ir_type_u32, lower_imm32(b, 1), lower_imm32(b, 0),
                             lower_setp(b, IR_CMP_NE, ir_type_b32, lo, lower_imm32(b, 0)));
    ir_value *c = lower_selp(b, ir_type_u32, lower_imm32(b, 1), lower_imm32(b, 0),
                             lower_setp(b, IR_CMP_NE, ir_type_b32, hi, lower_imm32(b, 0)));
    nw = ir_add(b, ir_type_u32, a, c);
  } else {
    nw = lower_imm32(b, 1);
  }
  ir_value *expected = lower_alu(b, ir_op_shr, ir_type_b32, lower_alu(b, ir_op_add, ir_type_b32, count, lower_imm32(b, 31)),
                                 lower_imm32(b, 5));
  ir_value *slot = lower_alu(b, ir_op_shl, ir_type_b32, id, lower_imm32(b, 1));
  ir_value *first = is_first_lane(b, &lw, exec);
  ir_value *gen_addr = word_addr(b, s, SEC_NAMED, slot, 1), *cnt_addr = word_addr(b, s, SEC_NAMED, slot, 0);
  fence_cta(b);
  ir_value *gen = ld_volatile(b, gen_addr);
  ir_instr *add = atom_add_i(b, cnt_addr, nw);
  guard(b, add, first);
  ir_value *old = ir_alu1(b, ir_op_wave_readfirstlane, ir_type_u32, add->dst[0]);
  ir_value *done = lower_setp(b, IR_CMP_EQ, ir_type_u32, ir_add(b, ir_type_u32, old, nw), expected);
  ir_value *last = ir_and(b, ir_type_pred, done, first);
  ir_instr *reset = ir_build_mem(b, ir_op_st, ir_type_u32, cnt_addr, 0, 1, (ir_value *[]){lower_imm32(b, 0)}, 0,
                                 IR_MODS(.space = IR_SPACE_SHARED));
  guard(b, reset, last);
  fence_cta(b);
  guard(b, atom_add_i(b, gen_addr, lower_imm32(b, 1)), last);
  if (sync) {
    /* while (!done && generation unchanged) {} -- uniform over the wave */
    ir_block *pre = b->block;
    ir_block *exit = ir_block_split_before(b->before, NULL);
    ir_block *spin = ir_block_create_after(pre->func, pre, NULL);
    ir_builder e = ir_builder_at_end(pre);
    e.loc = b->loc;
    ir_cbr(&e, done, exit, spin);
    e = ir_builder_at_end(spin);
    e.loc = b->loc;
    ir_value *now = ld_volatile(&e, gen_addr);
    ir_value *same = lower_setp(&e, IR_CMP_EQ, ir_type_u32, now, gen);
    ir_cbr(&e, same, spin, exit);
    ir_loc loc = b->loc;
    *b = ir_builder_before(exit->first);
    b->loc = loc;
  }
  fence_cta(b);
  return last;
}

static bool lower_named(ir_builder *b, bars_state *s, ir_instr *i) {
  named_sync(b, s, i->src[0], i->src[1], i->mods.barmode != IR_BAR_ARRIVE);
  return true;
}

/* What one wave adds to the accumulator: the number of its active lanes
 * with p true (.popc, .or: the result is that count, or whether it is
 * nonzero) or with p false (.and: true when that count is zero).  One
 * count answers each operation, so one accumulator word suffices. */
static ir_value *red_count(ir_builder *b, const lower_wave *lw, ir_value *exec, ir_instr *i) {
  ir_value *bt = ir_build_value(b, ir_op_wave_ballot, lw->mask_type, 1, (ir_value *[]){i->src[i->nsrc - 1]}, NULL);
  ir_value *m = i->mods.atomop == IR_ATOM_AND ? ir_xor(b, lw->mask_type, exec, bt) : bt;
  return popc_mask(b, lw, m);
}

static ir_value *red_result(ir_builder *b, ir_instr *i, ir_value *v) {
  switch ((ir_atomop)i->mods.atomop) {
  case IR_ATOM_AND: return lower_setp(b, IR_CMP_EQ, ir_type_u32, v, lower_imm32(b, 0));
  case IR_ATOM_OR: return lower_setp(b, IR_CMP_NE, ir_type_u32, v, lower_imm32(b, 0));
  default: return v;
  }
}

static bool lower_red(ir_builder *b, bars_state *s, ir_instr *i, ir_value **out) {
  lower_wave lw;
  lower_wave_init(b, s->wave, &lw);
  ir_value *exec = ir_build_value(b, ir_op_wave_exec, lw.mask_type, 0, NULL, NULL);
  ir_value *first = is_first_lane(b, &lw, exec);
  ir_value *acc = word_addr(b, s, SEC_RED, NULL, 0);
  ir_value *n = red_count(b, &lw, exec, i);
  fence_cta(b);
  guard(b, atom_add_i(b, acc, n), first);
  wg_barrier(b);
  ir_value *v = ld_volatile(b, acc);
  wg_barrier(b);
  ir_value *tid0 = lower_setp(b, IR_CMP_EQ, ir_type_u32,
                              ir_alu2(b, ir_op_or, ir_type_b32, ir_read_sreg(b, ir_sreg_tid, 0),
                                      ir_alu2(b, ir_op_or, ir_type_b32, ir_read_sreg(b, ir_sreg_tid, 1),
                                              ir_read_sreg(b, ir_sreg_tid, 2))),
                              lower_imm32(b, 0));
  guard(b, atom_add_i(b, acc, ir_alu1(b, ir_op_neg, ir_type_s32, v)), tid0);
  out[0] = red_result(b, i, v);
  return true;
}

/* bar.red with a thread count: the accumulators of barrier id a, between
 * two named barriers; the lane that completes the second subtracts what
 * was read (everyone has read it by then, and the next round's reads wait
 * for that lane at the next first barrier). */
static bool lower_red_counted(ir_builder *b, bars_state *s, ir_instr *i, ir_value **out) {
  lower_wave lw;
  lower_wave_init(b, s->wave, &lw);
  ir_value *id = i->src[0], *count = i->src[1];
  ir_value *exec = ir_build_value(b, ir_op_wave_exec, lw.mask_type, 0, NULL, NULL);
  ir_value *first = is_first_lane(b, &lw, exec);
  ir_value *acc = word_addr(b, s, SEC_RED_ID, id, 0);
  ir_value *n = red_count(b, &lw, exec, i);
  fence_cta(b);
  guard(b, atom_add_i(b, acc, n), first);
  named_sync(b, s, id, count, true);
  ir_value *v = ld_volatile(b, acc);
  ir_value *last = named_sync(b, s, id, count, true);
  guard(b, atom_add_i(b, acc, ir_alu1(b, ir_op_neg, ir_type_s32, v)), last);
  out[0] = red_result(b, i, v);
  return true;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  bars_state *s = data;
  if (i->op == ir_op_bar && i->mods.barmode == IR_BAR_SYNC && !has_count(i)) {
    wg_barrier(b);
    return true;
  }
  if (i->op == ir_op_bar && (i->mods.barmode != IR_BAR_SYNC && i->mods.barmode != IR_BAR_ARRIVE)) {
    lower_error(s->opt->diag, i, "cannot lower this barrier mode");
    return false;
  }
  if (i->op == ir_op_bar && !has_count(i)) {
    lower_error(s->opt->diag, i, "bar.arrive needs a thread count");
    return false;
  }
  if (i->op == ir_op_bar_red) return has_count(i) ? lower_red_counted(b, s, i, out) : lower_red(b, s, i, out);
  return lower_named(b, s, i);
}

/* The block the zeroing goes into: one that runs once.  The entry block
 * has no predecessors in verified IR (ir_verify), and the PTX front end
 * starts a kernel whose first instruction is a branch target with a block
 * of its own.  IR that breaks this (a loop header as the entry, built by
 * hand) gets a fresh entry here: its contents move to a new block that
 * every branch to the old entry now targets, so the zeroing is not
 * repeated each iteration.  An entry with phis cannot be split this way
 * (NULL). */
static ir_block *once_block(ir_func *f) {
  ir_block *e = f->entry;
  if (!e->npreds) return e;
  if (e->first && e->first->op == ir_op_phi) return NULL;
  ir_block *body = e->first ? ir_block_split_before(e->first, NULL) : ir_block_create_after(f, e, NULL);
  ir_foreach_block(f, blk) {
    ir_instr *t = ir_block_terminator(blk);
    if (!t) continue;
    for (uint32_t k = 0; k < t->ntargets; k++)
      if (t->targets[k] == e) ir_instr_set_target(t, k, body);
  }
  ir_builder b = ir_builder_at_end(e);
  b.loc = body->first ? body->first->loc : (ir_loc){0};
  ir_br(&b, body);
  ir_compute_preds(f);
  return e;
}

/* Which kernels reach the array: those whose body, or a function they call
 * (directly, to any depth), names it; a kernel with an indirect call
 * reaches it when any function does.  Only those zero it and hold it in
 * their LDS (a kernel of the same module without counted barriers pays
 * nothing). */
typedef struct fn_use {
  const ir_func *f;
  bool uses;
} fn_use;

static int by_func(const void *a, const void *b) {
  uintptr_t x = (uintptr_t)((const fn_use *)a)->f, y = (uintptr_t)((const fn_use *)b)->f;
  return x < y ? -1 : x > y;
}

static fn_use *find_fn(fn_use *t, size_t n, const ir_func *f) {
  fn_use key = {f, false};
  return bsearch(&key, t, n, sizeof *t, by_func);
}

static bool names_array(const ir_instr *i, const ir_global *arr) {
  for (uint32_t k = 0; k < i->nsrc; k++)
    if (i->src[k] && i->src[k]->kind == IR_VAL_SYMBOL && i->src[k]->symref.sym.kind == IR_SYM_GLOBAL &&
        i->src[k]->symref.sym.global == arr)
      return true;
  return false;
}

static fn_use *array_users(pw_arena *scratch, ir_module *m, const ir_global *arr, size_t *count) {
  size_t n = 0;
  ir_foreach_func(m, f) n++;
  fn_use *t = LOWER_SCRATCH(scratch, fn_use, n);
  size_t k = 0;
  ir_foreach_func(m, f) t[k++].f = f;
  qsort(t, n, sizeof *t, by_func);
  bool any = false;
  for (size_t j = 0; j < n; j++) {
    if (t[j].f->is_decl) continue;
    ir_foreach_block(t[j].f, b) ir_foreach_instr(b, i) if (names_array(i, arr)) t[j].uses = true;
    any |= t[j].uses;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t j = 0; j < n; j++) {
      if (t[j].uses || t[j].f->is_decl) continue;
      ir_foreach_block(t[j].f, b) ir_foreach_instr(b, i) {
        if (i->op != ir_op_call || !i->nsrc || !i->src[0]) continue;
        const ir_value *c = i->src[0];
        bool direct = c->kind == IR_VAL_SYMBOL && c->symref.sym.kind == IR_SYM_FUNC;
        fn_use *u = direct ? find_fn(t, n, c->symref.sym.func) : NULL;
        if ((direct && u && u->uses) || (!direct && any)) {
          t[j].uses = changed = true;
          break;
        }
      }
    }
  }
  *count = n;
  return t;
}

/* Zeroes the arrays at the entry of each kernel that reaches them: thread
 * 0 stores, then one workgroup barrier before anyone uses them. */
static void init_kernels(ir_module *m, bars_state *s) {
  size_t nf = 0;
  fn_use *users[NSEC] = {NULL};
  pw_arena scratch;
  pw_arena_init(&scratch);
  scratch.on_oom = m->arena.on_oom;  /* out of memory unwinds as in the module's arena */
  for (unsigned k = 0; k < NSEC; k++)
    if (s->arr[k]) users[k] = array_users(&scratch, m, s->arr[k], &nf);
  ir_foreach_func(m, f) {
    if (!f->is_kernel || f->is_decl || !f->entry) continue;
    bool reach[NSEC] = {false}, any = false;
    for (unsigned k = 0; k < NSEC; k++) {
      fn_use *u = users[k] ? find_fn(users[k], nf, f) : NULL;
      reach[k] = u && u->uses;
      any |= reach[k];
    }
    if (!any) continue;
    ir_block *once = once_block(f);
    if (!once) {
      if (s->opt->diag) pw_error(s->opt->diag, m->source_name ? m->source_name : "<module>",
                                 "kernel '%s': the entry block is a loop header with phis: cannot place the "
                                 "named-barrier array's zeroing", f->name);
      continue;
    }
    ir_instr *at = once->first;
    while (at && at->op == ir_op_phi) at = at->next;
    ir_builder b = at ? ir_builder_before(at) : ir_builder_at_end(once);
    if (at) b.loc = at->loc;
    ir_value *t = ir_alu2(&b, ir_op_or, ir_type_b32, ir_read_sreg(&b, ir_sreg_tid, 0),
                          ir_alu2(&b, ir_op_or, ir_type_b32, ir_read_sreg(&b, ir_sreg_tid, 1),
                                  ir_read_sreg(&b, ir_sreg_tid, 2)));
    ir_value *p = lower_setp(&b, IR_CMP_EQ, ir_type_u32, t, lower_imm32(&b, 0));
    for (unsigned sec = 0; sec < NSEC; sec++) {
      unsigned words = reach[sec] ? (unsigned)s->arr[sec]->count : 0;
      for (unsigned k = 0; k < words; k += 4) {
        ir_value *z = lower_imm32(&b, 0);
        unsigned v = words - k >= 4 ? 4 : words - k >= 2 ? 2 : 1;
        ir_instr *sti = ir_build_mem(&b, ir_op_st, ir_type_u32, base(&b, s, sec), 4 * k, v,
                                     (ir_value *[]){z, z, z, z}, 0, IR_MODS(.space = IR_SPACE_SHARED, .vec = v > 1 ? v : 0));
        ir_instr_set_guard(&b, sti, p, false, NULL);
      }
    }
    wg_barrier(&b);
  }
  pw_arena_free(&scratch);
}

bool lower_barriers(ir_module *m, const lower_barriers_options *opt) {
  bars_state s = {opt, m->facts.wave_size, layout(m), {NULL}};
  bool progress = lower_walk(m, want, lower_instr, &s);
  if (s.arr[SEC_NAMED] || s.arr[SEC_RED] || s.arr[SEC_RED_ID]) init_kernels(m, &s);
  return progress;
}
