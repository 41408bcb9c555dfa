/* lower/lower_async.c: cp.async (PTX ISA 9.7.9.25 "Data Movement and
 * Conversion Instructions: cp.async") as a synchronous copy
 * (docs/lowering.md, "cp.async").
 *
 *   cp.async.ca/.cg.shared{::cta}.global [dst], [src], cp-size{, src-size | , ignore-src}{, cache-policy}
 *   cp.async.commit_group   cp.async.wait_group N   cp.async.wait_all
 *
 * cp.async starts a copy of cp-size (4, 8 or 16) bytes from global to
 * shared memory, the bytes past src-size (or all of them under a true
 * ignore-src) zero.  The ISA makes the copy's completion observable only
 * through cp.async.wait_group / wait_all (or an mbarrier tracking it), and
 * leaves unspecified when before that it happens; completing it as it is
 * issued is one allowed execution.  So each cp.async becomes ld.global +
 * st.shared at once, and commit_group / wait_group / wait_all have nothing
 * left to wait for (removed).  This gives up the overlap of the copy with
 * the instructions before the wait (a performance note, not a correctness
 * one).  The same semantics as the emulator's (emu_mem.c, h_cp_async), which
 * runs cp.async itself: the lowered-vs-unlowered differential
 * (lower_diff_emu_mem) compares the two.
 *
 * Without src-size / ignore-src: one ld.global of cp-size bytes (b32 x1, x2
 * or x4; the ISA requires both addresses aligned to cp-size) and one
 * st.shared.  With ignore-src p: that load guarded by !p, zeros kept
 * otherwise.  With a src-size s: byte by byte, each byte j loaded under the
 * guard j < min(s, cp-size) (the bytes past s may lie outside any
 * allocation, so they are never read) and zero otherwise.  .ca/.cg and the
 * cache policy are cache hints with no meaning for the result (dropped).
 * The offset of [dst+off] is the instruction's (the parser folds a [src+k]
 * into an add).  cp.async.bulk* and cp.async.mbarrier.arrive are not
 * expanded here and stay unsupported by codegen.
 */
#include "lower_internal.h"

static bool want(const ir_instr *i, void *data) {
  (void)data;
  return i->op == ir_op_cp_async || i->op == ir_op_cp_async_commit_group || i->op == ir_op_cp_async_wait_group;
}

static bool lower_instr(ir_builder *b, ir_instr *i, ir_value **out, void *data) {
  const lower_async_options *o = data;
  (void)out;
  if (i->op != ir_op_cp_async) return true;   /* every copy is complete already */
  unsigned nval = i->nsrc - (i->mods.has_cache_hint ? 1u : 0u);
  uint64_t n = 0;
  if (nval < 3 || nval > 4 || !lower_const(i->src[2], &n) || (n != 4 && n != 8 && n != 16)) {
    lower_error(o->diag, i, "cp.async needs a constant cp-size of 4, 8 or 16 bytes");
    return false;
  }
  ir_value *dst = i->src[0], *src = i->src[1];
  ir_value *extra = nval == 4 ? i->src[3] : NULL;
  bool ignore = extra && extra->type == ir_type_pred;
  ir_mods gm = {.space = IR_SPACE_GLOBAL}, sm = {.space = IR_SPACE_SHARED};
  if (!extra || ignore) {
    unsigned nw = (unsigned)n / 4;
    if (nw > 1) gm.vec = sm.vec = (uint8_t)nw;
    ir_instr *ld = ir_build_mem(b, ir_op_ld, ir_type_b32, src, 0, 0, NULL, nw, &gm);
    if (ignore) {
      ir_value *z[4];
      for (unsigned k = 0; k < nw; k++) z[k] = lower_imm32(b, 0);
      ir_instr_set_guard(b, ld, extra, true, z);
    }
    ir_build_mem(b, ir_op_st, ir_type_b32, dst, i->offset, nw, ld->dst, 0, &sm);
    return true;
  }
  /* src-size: from = min(s, n) as u32 (src-size is a u32 operand) */
  ir_value *s = extra;
  if (ir_type_bits((ir_type)s->type) == 64) s = lower_lo32(b, s);
  ir_value *from = ir_alu2(b, ir_op_min, ir_type_u32, s, lower_imm32(b, (uint32_t)n));
  for (unsigned j = 0; j < n; j++) {
    ir_value *take = lower_setp(b, IR_CMP_LT, ir_type_u32, lower_imm32(b, j), from);
    ir_instr *ld = ir_build_mem(b, ir_op_ld, ir_type_b8, src, j, 0, NULL, 1, &gm);
    ir_instr_set_guard(b, ld, take, false, (ir_value *[]){ir_imm(b, ir_type_b8, 0)});
    ir_build_mem(b, ir_op_st, ir_type_b8, dst, i->offset + j, 1, ld->dst, 0, &sm);
  }
  return true;
}

bool lower_async(ir_module *m, const lower_async_options *opt) {
  lower_async_options o = opt ? *opt : (lower_async_options){0};
  return lower_walk(m, want, lower_instr, &o);
}
