/* lower/lower_util.c: the walker every pass is built on and the IR helpers
 * the passes share (lower_internal.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"

/* ---- diagnostics ---------------------------------------------------------- */
/* Every message names the kernel (or function) and the target it was
 * being lowered for, unless the text already does: "... (in kernel 'k',
 * for gfx942)".  lower_module sets m->facts.target before the passes
 * (ir_module_set_target). */
static void report(pw_diag *d, const ir_instr *i, bool warning, const char *fmt, va_list ap) {
  if (!d) return;
  const ir_func *f = i->block ? i->block->func : NULL;
  const ir_module *m = f ? f->module : NULL;
  pw_src src = {.path = m && m->source_name ? m->source_name : "<module>"};
  char msg[1024], quoted[256] = "", ctx[384] = "";
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (f && f->name) snprintf(quoted, sizeof quoted, "'%s'", f->name);
  bool name_f = *quoted && !strstr(msg, quoted);
  const char *tgt = m && m->facts.target ? m->facts.target->name : NULL;
  bool name_t = tgt && !strstr(msg, tgt);
  if (name_f || name_t)
    snprintf(ctx, sizeof ctx, " (%s%s%s%s%s)", name_f ? (f->is_kernel ? "in kernel " : "in function ") : "",
             name_f ? quoted : "", name_f && name_t ? ", " : "", name_t ? "for " : "", name_t ? tgt : "");
  if (warning) pw_warn_at(d, &src, i->loc.line, i->loc.col, "%s%s", msg, ctx);
  else pw_error_at(d, &src, i->loc.line, i->loc.col, "%s%s", msg, ctx);
}

void lower_error(pw_diag *d, const ir_instr *i, const char *fmt, ...) {
  /* the function is marked: cg_compile_ptx leaves out the kernels that
   * reach it and compiles the others (ir_func.failed_at) */
  ir_func *f = i->block ? i->block->func : NULL;
  if (f && !f->failed_at) f->failed_at = i;
  va_list ap;
  va_start(ap, fmt);
  report(d, i, false, fmt, ap);
  va_end(ap);
}

void lower_warn(pw_diag *d, const ir_instr *i, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  report(d, i, true, fmt, ap);
  va_end(ap);
}

/* ---- scratch memory ------------------------------------------------------- */
void *lower_scratch_array(pw_arena *a, size_t n, size_t elem) {
  void *p = pw_arena_alloc_array(a, n ? n : 1, elem);
  if (!p) PW_DIE("out of memory (%zu x %zu bytes of scratch)", n, elem);
  return p;
}

void *lower_scratch_grow(pw_arena *a, void *old, size_t n, size_t want, size_t elem) {
  void *p = lower_scratch_array(a, want, elem);
  if (n) memcpy(p, old, n * elem);
  return p;
}

void *lower_scratch_reserve(pw_arena *a, void *old, size_t *cap, size_t n, size_t elem) {
  if (old && n <= *cap) return old;
  *cap = n > 2 * *cap ? n : 2 * *cap;
  return lower_scratch_array(a, *cap, elem);
}

/* ---- the walker ----------------------------------------------------------- */
typedef struct repl {
  ir_value *from, *to;
} repl;

/* Turns `@p i` into  A: cbr p, B, C   B: i; br C   C: phi(keep, result).
 * Returns C; i sits alone in B, without its guard (and keep values). */
static ir_block *unguard(ir_instr *i) {
  ir_block *a = i->block;
  ir_block *bb = ir_block_split_before(i, NULL);
  ir_block *c = ir_block_split_before(i->next, NULL);
  ir_builder b = ir_builder_at_end(a);
  b.loc = i->loc;
  if (i->guard_neg) ir_cbr(&b, i->guard, c, bb);
  else ir_cbr(&b, i->guard, bb, c);
  ir_instr_set_guard(&b, i, NULL, false, NULL);
  (void)bb;
  return c;
}

/* One scratch arena for the walk: the list of wanted instructions, the
 * replacements and the use map, each reused from one function to the
 * next. */
bool lower_walk(ir_module *m, lower_want_fn want, lower_instr_fn lower, void *data) {
  bool progress = false;
  pw_arena scratch;
  pw_arena_init(&scratch);
  scratch.on_oom = m->arena.on_oom;  /* out of memory unwinds as in the module's arena */
  size_t cap = 0, repcap = 0;
  ir_instr **list = NULL;
  repl *reps = NULL;
  LOWER_SCRATCH_BUF(ir_value *) map = {0};
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    size_t n = 0;
    ir_foreach_block(f, blk) ir_foreach_instr(blk, i) {
      if (!want(i, data)) continue;
      if (n == cap) {
        list = lower_scratch_grow(&scratch, list, n, cap ? 2 * cap : 64, sizeof *list);
        cap = cap ? 2 * cap : 64;
      }
      list[n++] = i;
    }
    if (!n) continue;
    size_t nrep = 0;
    bool cfg_changed = false;
    for (size_t k = 0; k < n; k++) {
      ir_instr *i = list[k];
      ir_value **keep = i->keep;
      ir_block *join = NULL;
      if (i->guard) {
        join = unguard(i);
        cfg_changed = progress = true;   /* a change even if lower() then leaves i */
      }
      ir_builder b = ir_builder_before(i);
      b.loc = i->loc;
      ir_value *outv[16] = {0};
      ir_value **out = i->ndst <= 16 ? outv : LOWER_SCRATCH(&scratch, ir_value *, i->ndst);
      ir_block *before_blk = i->block;
      if (!lower(&b, i, out, data)) continue;   /* left in place (already unguarded: the same meaning) */
      progress = true;
      if (i->block != before_blk) cfg_changed = true;
      ir_block *fin = i->block;
      ir_instr_remove(i);
      if (join) {
        ir_builder e = ir_builder_at_end(fin);
        e.loc = i->loc;
        ir_br(&e, join);
      }
      for (unsigned d = 0; d < i->ndst; d++) {
        ir_value *to = out[d];
        if (!to) to = ir_undef(&b, (ir_type)i->dst[d]->type);
        if (join) {
          ir_instr *phi = ir_phi(&b, join, (ir_type)i->dst[d]->type, join->npreds);
          for (uint32_t p = 0; p < join->npreds; p++)
            ir_phi_set_src(phi, p, join->preds[p] == fin ? to : keep[d]);
          to = phi->dst[0];
        }
        if (nrep == repcap) {
          reps = lower_scratch_grow(&scratch, reps, nrep, repcap ? 2 * repcap : 64, sizeof *reps);
          repcap = repcap ? 2 * repcap : 64;
        }
        reps[nrep++] = (repl){i->dst[d], to};
      }
    }
    if (nrep) {
      LOWER_RESERVE(&scratch, map, f->nvalues + 1);
      memset(map.p, 0, (f->nvalues + 1) * sizeof *map.p);
      for (size_t r = 0; r < nrep; r++) map.p[reps[r].from->id] = reps[r].to;
      ir_replace_uses(f, map.p);
    }
    if (cfg_changed) ir_compute_preds(f);
  }
  pw_arena_free(&scratch);
  return progress;
}

/* ---- folding constructors ------------------------------------------------- */
bool lower_const(const ir_value *v, uint64_t *out) {
  if (!v || v->kind != IR_VAL_CONST) return false;
  *out = v->imm;
  return true;
}

bool lower_const_through_copies(const ir_value *v, uint64_t *out) {
  /* nvcc -O3 keeps constants in registers (mov.u32 %r36, 16; ... %r36):
   * in the IR an unguarded copy of an immediate */
  for (unsigned depth = 0; v && depth < 8; depth++) {
    if (v->kind == IR_VAL_CONST) {
      *out = v->imm;
      return true;
    }
    if (v->kind != IR_VAL_INSTR || !v->def || v->def->op != ir_op_copy || v->def->guard || v->def->nsrc != 1)
      return false;
    v = v->def->src[0];
  }
  return false;
}

ir_value *lower_imm32(ir_builder *b, uint32_t v) { return ir_imm(b, ir_type_b32, v); }

static uint64_t tmask(ir_type t) {
  unsigned bits = ir_type_bits(t);
  return bits >= 64 ? ~0ull : (1ull << bits) - 1;
}

ir_value *lower_alu(ir_builder *b, ir_op op, ir_type t, ir_value *x, ir_value *y) {
  uint64_t cx, cy, mk = tmask(t);
  bool kx = lower_const(x, &cx), ky = lower_const(y, &cy);
  if (kx) cx &= mk;
  if (ky && op != ir_op_shl && op != ir_op_shr) cy &= mk;
  unsigned bits = ir_type_bits(t);
  if (kx && ky) {
    uint64_t r = 0;
    switch (op) {
    case ir_op_and: r = cx & cy; break;
    case ir_op_or: r = cx | cy; break;
    case ir_op_xor: r = cx ^ cy; break;
    case ir_op_add: r = cx + cy; break;
    case ir_op_sub: r = cx - cy; break;
    case ir_op_mul: r = cx * cy; break;
    case ir_op_shl: r = cy >= bits ? 0 : cx << cy; break;
    case ir_op_shr: r = cy >= bits ? 0 : cx >> cy; break;   /* unsigned types only */
    default: goto build;
    }
    return ir_imm(b, t, r & mk);
  }
  switch (op) {
  case ir_op_and:
    if ((ky && cy == mk)) return x;
    if ((kx && cx == mk)) return y;
    if ((ky && cy == 0) || (kx && cx == 0)) return ir_imm(b, t, 0);
    break;
  case ir_op_or: case ir_op_xor: case ir_op_add:
    if (ky && cy == 0) return x;
    if (kx && cx == 0) return y;
    break;
  case ir_op_sub: case ir_op_shl: case ir_op_shr:
    if (ky && cy == 0) return x;
    break;
  default: break;
  }
build:
  if (op == ir_op_mul) return ir_alu2(b, op, t, x, y, .mulmode = IR_MUL_LO);
  return ir_alu2(b, op, t, x, y);
}

ir_value *lower_not(ir_builder *b, ir_type t, ir_value *x) {
  uint64_t c;
  if (lower_const(x, &c)) return ir_imm(b, t, ~c & tmask(t));
  return ir_alu1(b, ir_op_not, t, x);
}

ir_value *lower_setp(ir_builder *b, ir_cmp c, ir_type t, ir_value *x, ir_value *y) {
  return ir_setp(b, t, x, y, .cmp = c);
}

ir_value *lower_selp(ir_builder *b, ir_type t, ir_value *x, ir_value *y, ir_value *p) {
  return ir_selp(b, t, x, y, p);
}

ir_value *lower_lo32(ir_builder *b, ir_value *x64) {
  uint64_t c;
  if (lower_const(x64, &c)) return lower_imm32(b, (uint32_t)c);
  ir_instr *u = ir_build(b, ir_op_unpack, ir_type_b64, 1, (ir_value *[]){x64}, 2,
                         (ir_type[]){ir_type_b32, ir_type_b32}, NULL);
  return u->dst[0];
}

ir_value *lower_zext64(ir_builder *b, ir_value *x32) {
  uint64_t c;
  if (lower_const(x32, &c)) return ir_imm(b, ir_type_b64, (uint32_t)c);
  return ir_build_value(b, ir_op_pack, ir_type_b64, 2, (ir_value *[]){x32, lower_imm32(b, 0)}, NULL);
}

/* ---- waves ---------------------------------------------------------------- */
void lower_wave_init(ir_builder *b, unsigned wave_size, lower_wave *lw) {
  lw->w = wave_size;
  lw->mask_type = wave_size == 64 ? ir_type_b64 : ir_type_b32;
  lw->lane = ir_build_value(b, ir_op_wave_lane_id, ir_type_u32, 0, NULL, NULL);
  if (wave_size == 64) {
    lw->laneid = lower_alu(b, ir_op_and, ir_type_b32, lw->lane, lower_imm32(b, 31));
    lw->base = lower_alu(b, ir_op_and, ir_type_b32, lw->lane, lower_imm32(b, 32));
  } else {
    lw->laneid = lw->lane;
    lw->base = lower_imm32(b, 0);
  }
}

ir_value *lower_warp_bits(ir_builder *b, const lower_wave *lw, ir_value *wave_mask) {
  if (lw->w != 64) return wave_mask;
  return lower_lo32(b, lower_alu(b, ir_op_shr, ir_type_b64, wave_mask, lw->base));
}

/* ---- a loop over the lanes of a mask --------------------------------------- */
void lower_lane_loop_begin(ir_builder *b, const lower_wave *lw, ir_value *mask, unsigned nacc,
                           ir_value *const *init, lower_lane_loop *L) {
  PW_ASSERT(b->before && nacc <= LOWER_LOOP_MAX_ACC);
  memset(L, 0, sizeof *L);
  ir_func *f = b->block->func;
  L->mask_type = lw->mask_type;
  L->nacc = nacc;
  L->pre = b->block;
  L->exit = ir_block_split_before(b->before, NULL);
  L->header = ir_block_create_after(f, L->pre, NULL);
  L->body = ir_block_create_after(f, L->header, NULL);
  ir_builder p = ir_builder_at_end(L->pre);
  p.loc = b->loc;
  ir_br(&p, L->header);
  ir_builder h = ir_builder_at_end(L->header);
  h.loc = b->loc;
  L->phi_rem = ir_phi(&h, L->header, L->mask_type, 1);
  ir_phi_set_src(L->phi_rem, 0, mask);
  L->rem = L->phi_rem->dst[0];
  for (unsigned j = 0; j < nacc; j++) {
    L->phi_acc[j] = ir_phi(&h, L->header, (ir_type)init[j]->type, 1);
    ir_phi_set_src(L->phi_acc[j], 0, init[j]);
    L->acc[j] = L->phi_acc[j]->dst[0];
  }
  ir_value *more = lower_setp(&h, IR_CMP_NE, L->mask_type, L->rem, ir_imm(&h, L->mask_type, 0));
  ir_cbr(&h, more, L->body, L->exit);
  *b = ir_builder_at_end(L->body);
  b->loc = h.loc;
  ir_value *neg = ir_alu2(b, ir_op_sub, L->mask_type, ir_imm(b, L->mask_type, 0), L->rem);
  ir_value *low = ir_alu2(b, ir_op_and, L->mask_type, L->rem, neg);
  L->k = ir_alu1(b, ir_op_bfind, L->mask_type == ir_type_b64 ? ir_type_u64 : ir_type_u32, low);
}

void lower_lane_loop_end(ir_builder *b, lower_lane_loop *L, ir_value *rem_next, ir_value *const *next) {
  if (!rem_next)
    rem_next = ir_alu2(b, ir_op_and, L->mask_type, L->rem,
                       ir_alu2(b, ir_op_sub, L->mask_type, L->rem, ir_imm(b, L->mask_type, 1)));
  ir_block *latch = b->block;
  ir_br(b, L->header);
  ir_phi_add_src(L->phi_rem, rem_next);
  for (unsigned j = 0; j < L->nacc; j++) ir_phi_add_src(L->phi_acc[j], next[j]);
  (void)latch;
  ir_loc loc = b->loc;
  *b = ir_builder_before(L->exit->first);
  b->loc = loc;
}

/* Union-find over value ids (p[x] == x: a root), with path halving: the
 * webs of lower_wmma_web.c and the ldmatrix groups of lower_ldm_plan.c. */
uint32_t lower_uf_find(uint32_t *p, uint32_t x) {
  while (p[x] != x) x = p[x] = p[p[x]];
  return x;
}
void lower_uf_unite(uint32_t *p, uint32_t x, uint32_t y) {
  x = lower_uf_find(p, x), y = lower_uf_find(p, y);
  if (x != y) p[x] = y;
}
