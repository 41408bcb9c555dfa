/* tests/unit/test_divergence.c: ir_compute_divergence (ir/ir_divergence.c)
 * on hand-written .pwir functions.
 *
 * Each line that defines values ends with the expected answer, written by
 * hand from the rules of uniformity (what differs between the lanes of one
 * wave): "; U" uniform, "; D" divergent, or one letter per result ("; DD").
 * The test finds each instruction's line by its position (the parser stamps
 * the line of the first result's name) and compares every result; a line
 * with an answer but no instruction is an error too.  The analysis never
 * sees the answers: they are comments.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/ir_builder.h"
#include "util/diag.h"

/* The answer written on line `line` of text ("" when none). */
static const char *answer(const char *text, uint32_t line, char *buf, size_t cap) {
  const char *p = text;
  for (uint32_t l = 1; l < line && p; l++) {
    p = strchr(p, '\n');
    if (p) p++;
  }
  buf[0] = 0;
  if (!p) return buf;
  const char *e = strchr(p, '\n');
  size_t n = e ? (size_t)(e - p) : strlen(p);
  const char *c = memchr(p, ';', n);
  if (!c) return buf;
  c++;
  while (*c == ' ') c++;
  size_t k = 0;
  while (k + 1 < cap && (c[k] == 'U' || c[k] == 'D')) {
    buf[k] = c[k];
    k++;
  }
  buf[k] = 0;
  return buf;
}

static unsigned count_answers(const char *text) {
  unsigned n = 0;
  for (const char *p = text; (p = strstr(p, "; ")); p += 2)
    if (p[2] == 'U' || p[2] == 'D') n++;
  return n;
}

/* Parses text, analyses every function for a wave of `wave` lanes and
 * checks each result against its line's answer. */
static void check_divergence(const char *text, unsigned wave) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("t.pwir", text, strlen(text), &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  ck_assert_msg(ir_verify(m, NULL, &d), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  unsigned checked = 0;
  ir_foreach_func(m, f) {
    if (f->is_decl) continue;
    ir_compute_divergence(f, wave);
    ck_assert(f->analyses & IR_ANALYSIS_DIVERGENCE);
    ir_foreach_block(f, b) ir_foreach_instr(b, i) {
      if (!i->ndst) continue;
      char want[16];
      answer(text, i->loc.line, want, sizeof want);
      if (!want[0]) continue;
      ck_assert_msg(strlen(want) == 1 || strlen(want) == i->ndst, "line %u: %zu answers for %u results", i->loc.line,
                    strlen(want), i->ndst);
      for (unsigned k = 0; k < i->ndst; k++) {
        char w = want[strlen(want) == 1 ? 0 : k];
        ck_assert_msg((w == 'D') == (bool)i->dst[k]->divergent, "line %u (wave%u): result %u is %s, expected %s",
                      i->loc.line, wave, k, i->dst[k]->divergent ? "divergent" : "uniform",
                      w == 'D' ? "divergent" : "uniform");
      }
      checked++;
    }
  }
  ck_assert_uint_eq(checked, count_answers(text));
  ir_module_destroy(m);
}

/* ---- sources and data dependence ---------------------------------------- */
START_TEST(data_dependence) {
  check_divergence(
      "var global u32 @g[64] align 4\n"
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]            ; U a kernel parameter\n"
      "  %t = sreg tid.x                          ; D\n"
      "  %c = sreg ctaid.x                        ; U the same for the whole CTA\n"
      "  %n = sreg ntid.x                         ; U\n"
      "  %l = sreg laneid                         ; D\n"
      "  %u = mad.lo.u32 %c, %n, 7                ; U uniform operands\n"
      "  %v = add.u32 %u, %t                      ; D reads %tid\n"
      "  %w = mul.wide.u32 %u, 4                  ; U\n"
      "  %a = add.u64 %p, %w                      ; U\n"
      "  %x = ld.global.u32 [%a]                  ; U the same address in every lane\n"
      "  %o = mul.wide.u32 %v, 4                  ; D\n"
      "  %b = add.u64 %p, %o                      ; D\n"
      "  %y = ld.global.u32 [%b]                  ; D a different address per lane\n"
      "  %z = atom.global.add.u32 [%a], 1         ; D each lane gets its own old value\n"
      "  %q = setp.lt.u32 %x, 5                   ; U\n"
      "  %r = setp.lt.u32 %y, 5                   ; D\n"
      "  %s = @%q add.u32 %x, 1 keep u32 0        ; U uniform guard, uniform keep\n"
      "  %s2 = @%r add.u32 %x, 1 keep u32 0       ; D a divergent guard: some lanes keep 0\n"
      "  %s3 = @%q add.u32 %x, 1 keep %y          ; D a divergent keep value\n"
      "  %gl = ld.global.u32 [@g+8]               ; U a symbol's address\n"
      "  st.global.u32 [%b], %s2\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* %laneid-derived values through a .local array: per-lane memory is
 * divergent even at a uniform address (PTX ISA 5.1.5). */
START_TEST(local_memory) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]           ; U\n"
      "  %a = cvta.to.local.u64 %p               ; U\n"
      "  %x = ld.local.u32 [%a]                  ; D each lane's own copy\n"
      "  %g = cvta.local.u64 %p                  ; D the generic address of each lane's copy\n"
      "  %y = ld.u32 [%g]                        ; D through it\n"
      "  %z = ld.global.u32 [%p]                 ; U\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* Warp-level results: one value per warp, so the same for a wave of 32
 * and different between the two warps of a wave of 64; lane-dependent
 * ones differ in both. */
START_TEST(warp_ops) {
  static const char *const text[2] = {
      /* wave32 */
      "kernel @k() {\n"
      "bb0:\n"
      "  %c = sreg ctaid.x                                  ; U\n"
      "  %t = sreg tid.x                                    ; D\n"
      "  %w = sreg warpid                                   ; U one warp per wave\n"
      "  %nw = sreg nwarpid                                 ; U\n"
      "  %p = setp.eq.u32 %c, 0                             ; U\n"
      "  %q = setp.eq.u32 %t, 0                             ; D\n"
      "  %b = vote.sync.ballot.b32 %q, 0xffffffff           ; U the warp's ballot\n"
      "  %any = vote.sync.any.pred %q, 0xffffffff           ; U one answer for the warp\n"
      "  %any2 = vote.sync.any.pred %p, 0xffffffff          ; U\n"
      "  %am = activemask.b32                               ; U\n"
      "  %s, %ok = shfl.sync.idx.b32 %c, 0, 31, 0xffffffff  ; UD the value is the same everywhere, the predicate per lane\n"
      "  %s2, %ok2 = shfl.sync.idx.b32 %t, 0, 31, 0xffffffff ; D\n"
      "  %r = redux.sync.add.u32 %t, 0xffffffff             ; U a sum over the warp\n"
      "  %mk = selp.b32 1, 3, %q                            ; D\n"
      "  %bm = vote.sync.ballot.b32 %p, %mk                 ; D member masks that differ per lane\n"
      "  ret\n"
      "}\n",
      /* wave64 */
      "kernel @k() {\n"
      "bb0:\n"
      "  %c = sreg ctaid.x                                  ; U\n"
      "  %t = sreg tid.x                                    ; D\n"
      "  %w = sreg warpid                                   ; D two warps per wave\n"
      "  %nw = sreg nwarpid                                 ; U\n"
      "  %p = setp.eq.u32 %c, 0                             ; U\n"
      "  %q = setp.eq.u32 %t, 0                             ; D\n"
      "  %b = vote.sync.ballot.b32 %p, 0xffffffff           ; D each warp's active lanes\n"
      "  %any = vote.sync.any.pred %q, 0xffffffff           ; D each warp's answer\n"
      "  %any2 = vote.sync.any.pred %p, 0xffffffff          ; U the same answer in both warps\n"
      "  %am = activemask.b32                               ; D\n"
      "  %s, %ok = shfl.sync.idx.b32 %c, 0, 31, 0xffffffff  ; UD\n"
      "  %s2, %ok2 = shfl.sync.idx.b32 %t, 0, 31, 0xffffffff ; D\n"
      "  %r = redux.sync.add.u32 %c, 0xffffffff             ; D a sum over each warp's active lanes\n"
      "  %mk = selp.b32 1, 3, %q                            ; D\n"
      "  %bm = vote.sync.ballot.b32 %p, %mk                 ; D\n"
      "  ret\n"
      "}\n",
  };
  check_divergence(text[0], 32);
  check_divergence(text[1], 64);
}
END_TEST

/* Lowered IR: the lane id is a source; reading one lane or the whole
 * wave gives every lane the same value whatever the operand. */
START_TEST(wave_ops) {
  check_divergence(
      "module wave 64 lowered\n"
      "kernel @k() {\n"
      "bb0:\n"
      "  %l = wave_lane_id.u32                  ; D\n"
      "  %t = workitem_id.u32 1                 ; D\n"
      "  %g = workgroup_id.u32 0                ; U\n"
      "  %p = setp.lt.u32 %l, 7                 ; D\n"
      "  %m = wave_ballot.b64 %p                ; U one mask for the wave\n"
      "  %f = wave_readfirstlane.b32 %t         ; U\n"
      "  %r = wave_readlane.b32 %l, 3           ; U\n"
      "  %e = wave_exec.b64                     ; U\n"
      "  %x = wave_bpermute.b32 %g, %l          ; U every lane's copy of %g is %g\n"
      "  %y = wave_bpermute.b32 %l, %g          ; D\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* ---- sync dependence ------------------------------------------------------ */
/* if/else on a divergent condition: the phi at the join picks by the path
 * its lane took, though both operands are constants; on a uniform
 * condition the whole wave takes one path. */
START_TEST(join_phi) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %c = sreg ctaid.x               ; U\n"
      "  %q = setp.eq.u32 %t, 0          ; D\n"
      "  %qu = setp.eq.u32 %c, 0         ; U\n"
      "  cbr %q, a, b\n"
      "a:\n"
      "  %ia = add.u32 %c, 1             ; U the lanes here agree on it\n"
      "  br j\n"
      "b:\n"
      "  br j\n"
      "j:\n"
      "  %x = phi.u32 [%ia, a], [2, b]   ; D sync dependence on the divergent branch\n"
      "  cbr %qu, c, d\n"
      "c:\n"
      "  br e\n"
      "d:\n"
      "  br e\n"
      "e:\n"
      "  %y = phi.u32 [1, c], [2, d]     ; U the branch is uniform\n"
      "  %z = add.u32 %y, %x             ; D\n"
      "  st.global.u32 [%p], %z\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A join where every path from the divergent branch brings the same value,
 * and another value comes only along an edge no lane of that split takes
 * (from before a uniform branch): the lanes of the split all see the
 * same value.  With two values on the split's paths: divergent. */
START_TEST(join_same_value) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %c = sreg ctaid.x               ; U\n"
      "  %q = setp.eq.u32 %t, 0          ; D\n"
      "  %qu = setp.eq.u32 %c, 0         ; U\n"
      "  cbr %qu, a, j\n"
      "a:\n"
      "  %x1 = add.u32 %c, 1             ; U\n"
      "  cbr %q, j, b\n"
      "b:\n"
      "  br j\n"
      "j:\n"
      "  %x = phi.u32 [%c, bb0], [%x1, a], [%x1, b]  ; U\n"
      "  %y = phi.u32 [%c, bb0], [%x1, a], [%c, b]   ; D\n"
      "  %z = phi.u32 [%c, bb0], [undef, a], [%x1, b] ; U undef is any value\n"
      "  %s = add.u32 %x, %y             ; D\n"
      "  %s2 = add.u32 %s, %z            ; D\n"
      "  st.global.u32 [%p], %s2\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* Nested branches: a uniform one outside any divergent region, and a
 * uniform one inside a divergent region.  The lanes in that region all left
 * the divergent branch the same way, then all take the same side of the
 * uniform one: its join is no join of the divergent branch (both of its
 * predecessors are reached through the same successor of it), only the
 * divergent branch's own post-dominator is. */
START_TEST(nested_join) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %c = sreg ctaid.x               ; U\n"
      "  %q = setp.eq.u32 %t, 0          ; D\n"
      "  %qu = setp.eq.u32 %c, 0         ; U\n"
      "  cbr %qu, a, out\n"
      "a:\n"
      "  %x = phi.u32 [%c, bb0]          ; U one predecessor\n"
      "  cbr %qu, b, c\n"
      "b:\n"
      "  br j\n"
      "c:\n"
      "  br j\n"
      "j:\n"
      "  %y = phi.u32 [1, b], [2, c]     ; U inside no divergent region\n"
      "  br out\n"
      "out:\n"
      "  %z = phi.u32 [0, bb0], [%y, j]  ; U\n"
      "  cbr %q, d, e\n"
      "d:\n"
      "  cbr %qu, f, g\n"
      "f:\n"
      "  br h\n"
      "g:\n"
      "  br h\n"
      "h:\n"
      "  %w = phi.u32 [1, f], [2, g]     ; U every lane here came through d\n"
      "  br e\n"
      "e:\n"
      "  %v = phi.u32 [%z, out], [%w, h] ; D\n"
      "  st.global.u32 [%p], %v\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A loop whose exit depends on the lane: lanes leave at different
 * iterations.  Inside the loop the counter is the same in every lane still
 * running (uniform); a value of the loop used after it is what each lane
 * saw when it left: divergent (temporal divergence). */
START_TEST(divergent_loop_exit) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  br head\n"
      "head:\n"
      "  %i = phi.u32 [0, bb0], [%i1, head]  ; U\n"
      "  %sq = mul.lo.u32 %i, %i         ; D used after the loop\n"
      "  %i1 = add.u32 %i, 1             ; U\n"
      "  %more = setp.lt.u32 %i1, %t     ; D\n"
      "  cbr %more, head, out\n"
      "out:\n"
      "  %r = add.u32 %sq, 1             ; D\n"
      "  st.global.u32 [%p], %r\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A value the loop computes from values defined before it only is the
 * same in every iteration: where the lanes leave does not matter. */
START_TEST(invariant_in_divergent_loop) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %n = sreg ntid.x                ; U\n"
      "  br head\n"
      "head:\n"
      "  %i = phi.u32 [0, bb0], [%i1, head]  ; U\n"
      "  %inv = mul.lo.u32 %n, 3         ; U loop-invariant, left in the loop\n"
      "  %inv2 = add.u32 %inv, 1         ; U\n"
      "  %x = ld.global.u32 [%p]         ; D memory may change between iterations\n"
      "  %i1 = add.u32 %i, 1             ; U\n"
      "  %more = setp.lt.u32 %i1, %t     ; D\n"
      "  cbr %more, head, out\n"
      "out:\n"
      "  %r = add.u32 %inv2, %x          ; D\n"
      "  %r2 = add.u32 %inv2, 1          ; U\n"
      "  st.global.u32 [%p], %r\n"
      "  st.global.u32 [%p+4], %r2\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* The same loop with a uniform exit: every lane leaves together. */
START_TEST(uniform_loop_exit) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %n = sreg ntid.x                ; U\n"
      "  br head\n"
      "head:\n"
      "  %i = phi.u32 [0, bb0], [%i1, head]  ; U\n"
      "  %sq = mul.lo.u32 %i, %i         ; U\n"
      "  %i1 = add.u32 %i, 1             ; U\n"
      "  %more = setp.lt.u32 %i1, %n     ; U\n"
      "  cbr %more, head, out\n"
      "out:\n"
      "  %r = add.u32 %sq, 1             ; U\n"
      "  st.global.u32 [%p], %r\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A loop with a divergent exit and a uniform one: lanes leave by
 * different exits at different iterations, so the phi where the exits meet
 * is divergent, and so is a loop value used after it; values used only in
 * the loop stay uniform. */
START_TEST(two_exits) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %n = sreg ntid.x                ; U\n"
      "  br head\n"
      "head:\n"
      "  %i = phi.u32 [0, bb0], [%i1, latch]  ; U\n"
      "  %w = add.u32 %i, 5              ; D used after the loop\n"
      "  %q = setp.eq.u32 %i, %t         ; D\n"
      "  cbr %q, out1, latch\n"
      "latch:\n"
      "  %i1 = add.u32 %i, 1             ; U\n"
      "  %u = setp.lt.u32 %i1, %n        ; U\n"
      "  cbr %u, head, out2\n"
      "out1:\n"
      "  br j\n"
      "out2:\n"
      "  br j\n"
      "j:\n"
      "  %r = phi.u32 [1, out1], [2, out2]  ; D\n"
      "  %s = add.u32 %w, %r             ; D\n"
      "  st.global.u32 [%p], %s\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A uniform loop inside a divergent region: the lanes in it run it
 * together, so its counter is uniform; where the region meets the lanes
 * that skipped it, divergent. */
START_TEST(loop_in_divergent_region) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %n = sreg ntid.x                ; U\n"
      "  %q = setp.eq.u32 %t, 0          ; D\n"
      "  cbr %q, pre, out\n"
      "pre:\n"
      "  br head\n"
      "head:\n"
      "  %i = phi.u32 [0, pre], [%i1, head]  ; U\n"
      "  %i1 = add.u32 %i, 1             ; U\n"
      "  %m = setp.lt.u32 %i1, %n        ; U\n"
      "  cbr %m, head, done\n"
      "done:\n"
      "  br out\n"
      "out:\n"
      "  %z = phi.u32 [0, bb0], [%i1, done]  ; D\n"
      "  st.global.u32 [%p], %z\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A lane that exits early: the divergent branch's post-dominator is the
 * function's end, so its region is everything after it; the lanes that go
 * on all went the same way (a), and a uniform branch after that does not
 * split them.  A phi where the exit's side meets the others would be a
 * join: there is none (the exit leaves). */
START_TEST(exit_in_divergent_code) {
  check_divergence(
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %t = sreg tid.x                 ; D\n"
      "  %c = sreg ctaid.x               ; U\n"
      "  %q = setp.eq.u32 %t, 0          ; D\n"
      "  %qu = setp.eq.u32 %c, 0         ; U\n"
      "  cbr %q, x, a\n"
      "x:\n"
      "  exit\n"
      "a:\n"
      "  cbr %qu, b, c\n"
      "b:\n"
      "  br j\n"
      "c:\n"
      "  br j\n"
      "j:\n"
      "  %y = phi.u32 [1, b], [2, c]     ; U\n"
      "  st.global.u32 [%p], %y\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* A device function: its register parameters are uniform (per function),
 * a call's result divergent (the callee is not analysed). */
START_TEST(calls_and_params) {
  check_divergence(
      "func @f(reg b32 @a align 4 = %a) -> (reg b32 @r align 4) {\n"
      "bb0:\n"
      "  %b = add.u32 %a, 1              ; U\n"
      "  ret %b\n"
      "}\n"
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]   ; U\n"
      "  %x:b32 = call @f, (b32 0x7)     ; D\n"
      "  st.global.u32 [%p], %x\n"
      "  ret\n"
      "}\n",
      64);
}
END_TEST

/* The analysis marks itself current, and a recomputation after a change
 * starts from scratch (a value that was divergent can become uniform). */
START_TEST(recompute) {
  const char *text =
      "kernel @k(param::entry u64 @p) {\n"
      "bb0:\n"
      "  %p = ld.param::entry.u64 [@p]\n"
      "  %t = sreg tid.x\n"
      "  %x = add.u32 %t, 1\n"
      "  st.global.u32 [%p], %x\n"
      "  ret\n"
      "}\n";
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("t.pwir", text, strlen(text), &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  ir_func *f = m->funcs;
  ck_assert(!(f->analyses & IR_ANALYSIS_DIVERGENCE));
  ir_compute_divergence(f, 64);
  ck_assert(f->analyses & IR_ANALYSIS_DIVERGENCE);
  ck_assert_uint_eq(f->divergence_wave, 64);
  ir_instr *tid = f->entry->first->next, *add = tid->next;
  ck_assert(tid->op == ir_op_sreg && add->op == ir_op_add);
  ck_assert(add->dst[0]->divergent);
  /* make the add read %p's low half instead: uniform */
  ir_builder b = ir_builder_before(add);
  ir_value *lo = ir_convert(&b, ir_type_u32, ir_type_u64, f->entry->first->dst[0]);
  ir_instr *n = ir_clone(&b, add, (ir_value *[]){lo, add->src[1]}, NULL);
  ir_value **map = calloc(f->nvalues + 1, sizeof *map);
  map[add->dst[0]->id] = n->dst[0];
  ir_replace_uses(f, map);
  free(map);
  ir_instr_remove(add);
  ir_invalidate_analyses(f, 0);
  ck_assert(!(f->analyses & IR_ANALYSIS_DIVERGENCE));
  ir_compute_divergence(f, 64);
  ck_assert(!n->dst[0]->divergent);
  ck_assert(tid->dst[0]->divergent);
  ir_module_destroy(m);
}
END_TEST

static Suite *divergence_suite(void) {
  Suite *s = suite_create("divergence");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, data_dependence);
  tcase_add_test(tc, local_memory);
  tcase_add_test(tc, warp_ops);
  tcase_add_test(tc, wave_ops);
  tcase_add_test(tc, join_phi);
  tcase_add_test(tc, nested_join);
  tcase_add_test(tc, divergent_loop_exit);
  tcase_add_test(tc, uniform_loop_exit);
  tcase_add_test(tc, invariant_in_divergent_loop);
  tcase_add_test(tc, join_same_value);
  tcase_add_test(tc, two_exits);
  tcase_add_test(tc, loop_in_divergent_region);
  tcase_add_test(tc, exit_in_divergent_code);
  tcase_add_test(tc, calls_and_params);
  tcase_add_test(tc, recompute);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(divergence_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
