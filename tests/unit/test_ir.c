/* tests/unit/test_ir.c: the IR: builder, printer, parser, verifier,
 * dominators.  Expected texts and dominator trees are written by hand from
 * the shapes built here; they never come from the code under test. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ir/ir_builder.h"
#include "ir/ir_priv.h"
#include "util/diag.h"

/* ---- helpers ---------------------------------------------------------- */

static char *print_str(const ir_module *m) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  ir_print_module(f, m);
  fclose(f);
  return buf;
}

static bool verify_ok(const ir_module *m, bool lowered) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  bool ok = ir_verify(m, &(ir_verify_options){.require_lowered = lowered}, &d);
  if (!ok) fprintf(stderr, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  return ok;
}

/* The verifier's report, for modules expected to fail (caller frees). */
static char *verify_errors(const ir_module *m, bool lowered) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  bool ok = ir_verify(m, &(ir_verify_options){.require_lowered = lowered}, &d);
  ck_assert_msg(!ok, "the verifier accepted broken IR");
  char *s = strdup(pw_diag_text(&d));
  pw_diag_fini(&d);
  return s;
}

static ir_module *parse_str_q(const char *text, bool quiet) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("t.pwir", text, strlen(text), &d);
  if (!m && !quiet) fprintf(stderr, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  return m;
}

static ir_module *parse_str(const char *text) { return parse_str_q(text, false); }

static char *parse_error(const char *text) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("t.pwir", text, strlen(text), &d);
  ck_assert_ptr_null(m);
  char *s = strdup(pw_diag_text(&d));
  pw_diag_fini(&d);
  return s;
}

/* print -> parse -> print is the identity; returns the printed text. */
static char *roundtrip(const ir_module *m) {
  char *t1 = print_str(m);
  ir_module *m2 = parse_str(t1);
  ck_assert_msg(m2 != NULL, "printed IR does not parse back:\n%s", t1);
  char *t2 = print_str(m2);
  ck_assert_str_eq(t2, t1);
  ir_module_destroy(m2);
  free(t2);
  return t1;
}

static void check_text(const ir_module *m, const char *want) {
  char *got = roundtrip(m);
  ck_assert_str_eq(got, want);
  free(got);
}

#define CONTAINS(hay, needle) ck_assert_msg(strstr((hay), (needle)) != NULL, \
    "expected to find:\n%s\nin:\n%.2000s", (needle), (hay))

/* ---- builder, printer, round trip ------------------------------------- */

/* A counted loop with a phi:
 *   bb0: br bb1
 *   bb1: i = phi(0 from bb0, i+1 from bb1); i+1 < n ? bb1 : bb2
 *   bb2: ret */
static ir_module *build_loop(void) {
  ir_module *m = ir_module_create("loop");
  m->ptx_version = 85;
  m->sm = 90;
  m->sm_suffix = 'a';
  ir_func *f = ir_func_create(m, "loop", true);
  ir_param *pn = ir_func_add_param(f, "n", ir_type_u32, IR_SPACE_PARAM_ENTRY, 0, 1);
  ir_func_layout_params(f);
  f->maxntid[0] = 128;
  f->maxntid[1] = f->maxntid[2] = 1;
  ir_block *b0 = ir_block_create(f, NULL), *b1 = ir_block_create(f, "$L__BB0_1"),
           *b2 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_value *n = ir_build_mem(&b, ir_op_ld, ir_type_u32,
                             ir_symref(&b, ir_sym_param(pn), 0, ir_type_u64), 0, 0, NULL, 1,
                             IR_MODS(.space = IR_SPACE_PARAM_ENTRY))->dst[0];
  ir_br(&b, b1);
  b = ir_builder_at_end(b1);
  ir_instr *phi = ir_phi(&b, b1, ir_type_u32, 2);
  ir_value *i1 = ir_add(&b, ir_type_u32, phi->dst[0], ir_imm(&b, ir_type_u32, 1));
  ir_value *c = ir_setp(&b, ir_type_u32, i1, n, .cmp = IR_CMP_LT);
  ir_cbr(&b, c, b1, b2);
  ir_phi_set_src(phi, 0, ir_imm(&b, ir_type_u32, 0));
  ir_phi_set_src(phi, 1, i1);
  b = ir_builder_at_end(b2);
  ir_ret(&b);
  return m;
}

START_TEST(loop_with_phi) {
  ir_module *m = build_loop();
  ck_assert(verify_ok(m, true));
  check_text(m,
             "module ptx 8.5 sm_90a addr64\n"
             "\n"
             "kernel @loop(param::entry u32 @n align 4 offset 0) maxntid 128,1,1 {\n"
             "bb0:\n"
             "  %0 = ld.param::entry.u32 [@n]\n"
             "  br bb1\n"
             "bb1 \"$L__BB0_1\":  ; preds bb0, bb1\n"
             "  %1 = phi.u32 [0, bb0], [%2, bb1]\n"
             "  %2 = add.u32 %1, 1\n"
             "  %3 = setp.lt.u32 %2, %0\n"
             "  cbr %3, bb1, bb2\n"
             "bb2:  ; preds bb1\n"
             "  ret\n"
             "}\n");
  ir_func *f = m->funcs;
  ir_compute_dominators(f);
  ir_block *b0 = f->entry, *b1 = b0->next, *b2 = b1->next;
  ck_assert_ptr_null(b0->idom);
  ck_assert_ptr_eq(b1->idom, b0);
  ck_assert_ptr_eq(b2->idom, b1);
  ck_assert(ir_block_dominates(b1, b2) && !ir_block_dominates(b2, b1));
  ir_compute_post_dominators(f);
  ck_assert_ptr_eq(b0->ipdom, b1);
  ck_assert_ptr_eq(b1->ipdom, b2);
  ck_assert_ptr_null(b2->ipdom);
  ir_module_destroy(m);
}
END_TEST

/* Diamond:  bb0 -> bb1, bb2 -> bb3; a phi merges the two sides. */
static ir_module *build_diamond(void) {
  ir_module *m = ir_module_create("diamond");
  ir_func *f = ir_func_create(m, "diamond", false);
  ir_param *x = ir_func_add_param(f, "x", ir_type_s32, IR_SPACE_REG, 0, 1);
  ir_block *b0 = ir_block_create(f, NULL), *b1 = ir_block_create(f, NULL),
           *b2 = ir_block_create(f, NULL), *b3 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_value *c = ir_setp(&b, ir_type_s32, x->value, ir_imm(&b, ir_type_s32, (uint64_t)-5), .cmp = IR_CMP_GT);
  ir_cbr(&b, c, b1, b2);
  b = ir_builder_at_end(b1);
  ir_value *y = ir_alu1(&b, ir_op_neg, ir_type_s32, x->value);
  ir_br(&b, b3);
  b = ir_builder_at_end(b2);
  ir_value *z = ir_mul(&b, ir_type_s32, x->value, x->value, .mulmode = IR_MUL_LO);
  ir_br(&b, b3);
  b = ir_builder_at_end(b3);
  ir_instr *phi = ir_phi(&b, b3, ir_type_s32, 2);
  ir_phi_set_src(phi, 0, y);
  ir_phi_set_src(phi, 1, z);
  ir_ret(&b);
  return m;
}

START_TEST(diamond) {
  ir_module *m = build_diamond();
  ck_assert(verify_ok(m, true));
  check_text(m,
             "module addr64\n"
             "\n"
             "func @diamond(reg s32 @x align 4 = %0) {\n"
             "bb0:\n"
             "  %1 = setp.gt.s32 %0, -5\n"
             "  cbr %1, bb1, bb2\n"
             "bb1:  ; preds bb0\n"
             "  %2 = neg.s32 %0\n"
             "  br bb3\n"
             "bb2:  ; preds bb0\n"
             "  %3 = mul.lo.s32 %0, %0\n"
             "  br bb3\n"
             "bb3:  ; preds bb1, bb2\n"
             "  %4 = phi.s32 [%2, bb1], [%3, bb2]\n"
             "  ret\n"
             "}\n");
  ir_func *f = m->funcs;
  ir_compute_dominators(f);
  ir_compute_post_dominators(f);
  ir_block *b0 = f->entry, *b1 = b0->next, *b2 = b1->next, *b3 = b2->next;
  ck_assert_ptr_eq(b1->idom, b0);
  ck_assert_ptr_eq(b2->idom, b0);
  ck_assert_ptr_eq(b3->idom, b0);
  ck_assert(!ir_block_dominates(b1, b3) && ir_block_dominates(b0, b3));
  ck_assert_ptr_eq(b0->ipdom, b3);
  ck_assert_ptr_eq(b1->ipdom, b3);
  ck_assert_ptr_eq(b2->ipdom, b3);
  ck_assert_ptr_null(b3->ipdom);
  ir_module_destroy(m);
}
END_TEST

/* A loop with two exits and an unreachable block after ret:
 *   bb0 -> bb1
 *   bb1 -> bb2 | bb4      (exit 1)
 *   bb2 -> bb3 | bb5      (exit 2)
 *   bb3 -> bb1            (latch)
 *   bb4 -> bb6,  bb5 -> bb6,  bb6: ret
 *   bb7: unreachable code (br bb6), as nvcc leaves after ret.
 * Dominators (hand): bb1<-bb0, bb2<-bb1, bb3<-bb2, bb4<-bb1, bb5<-bb2,
 * bb6<-bb1; bb7 none.  Post-dominators: bb6 for bb4, bb5, bb1, bb2, bb0
 * (every path from bb1 ends in bb6); bb3 -> bb1; bb6 -> exit; bb7 -> bb6. */
START_TEST(multi_exit_loop) {
  ir_module *m = ir_module_create("mexit");
  ir_func *f = ir_func_create(m, "mexit", true);
  ir_block *bb[8];
  for (int k = 0; k < 8; k++) bb[k] = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(bb[0]);
  ir_value *t = ir_read_sreg(&b, ir_sreg_tid, 0);
  ir_br(&b, bb[1]);
  b = ir_builder_at_end(bb[1]);
  ir_instr *phi = ir_phi(&b, bb[1], ir_type_u32, 2);
  ir_value *c1 = ir_setp(&b, ir_type_u32, phi->dst[0], ir_imm(&b, ir_type_u32, 10), .cmp = IR_CMP_LT);
  ir_cbr(&b, c1, bb[2], bb[4]);
  b = ir_builder_at_end(bb[2]);
  ir_value *c2 = ir_setp(&b, ir_type_u32, phi->dst[0], t, .cmp = IR_CMP_NE);
  ir_cbr(&b, c2, bb[3], bb[5]);
  b = ir_builder_at_end(bb[3]);
  ir_value *inc = ir_add(&b, ir_type_u32, phi->dst[0], ir_imm(&b, ir_type_u32, 1));
  ir_br(&b, bb[1]);
  ir_phi_set_src(phi, 0, t);
  ir_phi_set_src(phi, 1, inc);
  b = ir_builder_at_end(bb[4]);
  ir_br(&b, bb[6]);
  b = ir_builder_at_end(bb[5]);
  ir_br(&b, bb[6]);
  b = ir_builder_at_end(bb[6]);
  ir_ret(&b);
  b = ir_builder_at_end(bb[7]);
  ir_value *dead = ir_add(&b, ir_type_u32, inc, inc);  /* a use in dead code: tolerated */
  (void)dead;
  ir_br(&b, bb[6]);
  ck_assert(verify_ok(m, true));
  free(roundtrip(m));

  ir_compute_dominators(f);
  ir_block *want_idom[8] = {NULL, bb[0], bb[1], bb[2], bb[1], bb[2], bb[1], NULL};
  for (int k = 0; k < 8; k++) ck_assert_msg(bb[k]->idom == want_idom[k], "idom of bb%d", k);
  ck_assert_uint_eq(bb[7]->dom_pre, 0);
  ck_assert(!ir_block_dominates(bb[0], bb[7]));
  ck_assert(ir_block_dominates(bb[7], bb[7]));
  ck_assert(ir_block_dominates(bb[1], bb[5]) && ir_block_dominates(bb[2], bb[5]));
  ck_assert(!ir_block_dominates(bb[4], bb[6]) && !ir_block_dominates(bb[3], bb[1]));
  ir_compute_post_dominators(f);
  ir_block *want_ipdom[8] = {bb[1], bb[6], bb[6], bb[1], bb[6], bb[6], NULL, bb[6]};
  for (int k = 0; k < 8; k++) ck_assert_msg(bb[k]->ipdom == want_ipdom[k], "ipdom of bb%d", k);
  ir_module_destroy(m);
}
END_TEST

/* An infinite loop: bb1 <-> bb2 with no path to a ret.  Their post-
 * dominator is NULL (documented in ir_dom.c).  bb0 branches to the loop or
 * to bb3: ret; every path from bb0 that reaches the exit passes bb3 (the
 * loop is no path to the exit), so bb3 post-dominates bb0. */
START_TEST(infinite_loop_postdom) {
  ir_module *m = parse_str(
      "kernel @spin() {\n"
      "bb0:\n"
      "  %0 = sreg laneid\n"
      "  %1 = setp.eq.u32 %0, 0\n"
      "  cbr %1, bb1, bb3\n"
      "bb1:\n"
      "  br bb2\n"
      "bb2:\n"
      "  br bb1\n"
      "bb3:\n"
      "  ret\n"
      "}\n");
  ck_assert_ptr_nonnull(m);
  ck_assert(verify_ok(m, false));
  ir_func *f = m->funcs;
  ir_compute_post_dominators(f);
  ir_compute_dominators(f);
  ir_block *b0 = f->entry, *b1 = b0->next, *b2 = b1->next, *b3 = b2->next;
  ck_assert_ptr_eq(b0->ipdom, b3);
  ck_assert_ptr_null(b1->ipdom);
  ck_assert_ptr_null(b2->ipdom);
  ck_assert_ptr_null(b3->ipdom);
  ck_assert_ptr_eq(b2->idom, b1);
  ck_assert_ptr_eq(b1->idom, b0);
  ir_module_destroy(m);
}
END_TEST

/* Guarded vector load with keep values, a carry chain, setp with two
 * results, vector store, all in one block. */
START_TEST(guarded_carry_vector) {
  ir_module *m = ir_module_create("g");
  ir_func *f = ir_func_create(m, "g", false);
  ir_param *pa = ir_func_add_param(f, "a", ir_type_u64, IR_SPACE_REG, 0, 1);
  ir_param *pb = ir_func_add_param(f, "b", ir_type_u32, IR_SPACE_REG, 0, 1);
  ir_block *b0 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_value *a = pa->value, *x = pb->value;
  /* setp.lt.and: p|q = (x < 7) and (x != 0)-ish: c is a pred */
  ir_value *nz = ir_setp(&b, ir_type_u32, x, ir_imm(&b, ir_type_u32, 0), .cmp = IR_CMP_NE);
  ir_instr *sp = ir_build(&b, ir_op_setp, ir_type_u32, 3,
                          (ir_value *[]){x, ir_imm(&b, ir_type_u32, 7), nz}, 2, NULL,
                          IR_MODS(.cmp = IR_CMP_LT, .boolop = IR_BOOL_AND));
  ck_assert_uint_eq(sp->dst[0]->type, ir_type_pred);
  ck_assert_uint_eq(sp->dst[1]->type, ir_type_pred);
  /* 64-bit add as a carry chain */
  ir_value *lo = ir_add(&b, ir_type_u32, x, ir_imm(&b, ir_type_u32, 0xffffffff), .cc = 1);
  ir_value *carry = lo->def->dst[1];
  ck_assert_uint_eq(carry->type, ir_type_pred);
  ir_value *hi = ir_alu3(&b, ir_op_addc, ir_type_u32, x, ir_imm(&b, ir_type_u32, 0), carry);
  /* guarded ld.global.nc.v4.f32 keeping zeros */
  ir_instr *ld = ir_build_mem(&b, ir_op_ld, ir_type_f32, a, 16, 0, NULL, 4,
                              IR_MODS(.space = IR_SPACE_GLOBAL, .nc = 1, .vec = 4));
  ir_value *z = ir_imm_f32(&b, 0.0f);
  ir_instr_set_guard(&b, ld, sp->dst[0], true, (ir_value *[]){z, z, z, z});
  ir_build_mem(&b, ir_op_st, ir_type_u32, a, -8, 2, (ir_value *[]){lo, hi}, 0,
               IR_MODS(.space = IR_SPACE_GLOBAL, .vec = 2));
  ir_build_mem(&b, ir_op_st, ir_type_f32, a, 0, 4, ld->dst, 0,
               IR_MODS(.space = IR_SPACE_GLOBAL, .vec = 4, .l1evict = IR_EVICT_LAST));
  ir_ret(&b);
  ck_assert(verify_ok(m, true));
  check_text(m,
             "module addr64\n"
             "\n"
             "func @g(reg u64 @a align 8 = %0, reg u32 @b align 4 = %1) {\n"
             "bb0:\n"
             "  %2 = setp.ne.u32 %1, 0\n"
             "  %3, %4 = setp.lt.and.u32 %1, 7, %2\n"
             "  %5, %6 = add.cc.u32 %1, 4294967295\n"
             "  %7 = addc.u32 %1, 0, %6\n"
             "  %8, %9, %10, %11 = @!%3 ld.global.nc.v4.f32 [%0+16] keep 0f00000000, 0f00000000, 0f00000000, 0f00000000\n"
             "  st.global.v2.u32 [%0-8], %5, %7\n"
             "  st.global.L1::evict_last.v4.f32 [%0], %8, %9, %10, %11\n"
             "  ret\n"
             "}\n");
  ir_module_destroy(m);
}
END_TEST

/* A device function called with .param arguments, and an indirect call
 * through a prototype; brx over a jump table. */
START_TEST(call_and_brx) {
  ir_module *m = ir_module_create("c");
  ir_func *callee = ir_func_create(m, "_Z3fooi", false);
  ir_param *cp = ir_func_add_param(callee, "_Z3fooi_param_0", ir_type_b32, IR_SPACE_PARAM_FUNC, 0, 1);
  ir_param *cr = ir_func_add_ret(callee, "func_retval0", ir_type_b32, IR_SPACE_PARAM_FUNC, 0, 1);
  (void)cp;
  (void)cr;
  ir_func_layout_params(callee);
  callee->is_decl = 1;
  callee->linkage = IR_LINK_EXTERN;

  ir_func *f = ir_func_create(m, "k", true);
  ir_global *arg = ir_global_create(m, f, "param0", IR_SPACE_PARAM, ir_type_b32, 1, 4);
  ir_global *ret = ir_global_create(m, f, "retval0", IR_SPACE_PARAM, ir_type_b32, 1, 4);
  ir_block *b0 = ir_block_create(f, NULL), *c0 = ir_block_create(f, "case0"),
           *c1 = ir_block_create(f, "case1"), *end = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_value *tid = ir_read_sreg(&b, ir_sreg_tid, 1);
  ir_build_mem(&b, ir_op_st, ir_type_b32, ir_symref(&b, ir_sym_global(arg), 0, ir_type_u64), 0, 1,
               &tid, 0, IR_MODS(.space = IR_SPACE_PARAM));
  ir_instr *call = ir_build(&b, ir_op_call, ir_type_none, 3,
                            (ir_value *[]){ir_symref(&b, ir_sym_func(callee), 0, ir_type_u64),
                                           ir_symref(&b, ir_sym_global(ret), 0, ir_type_u64),
                                           ir_symref(&b, ir_sym_global(arg), 0, ir_type_u64)},
                            0, NULL, IR_MODS(.uni = 1));
  ir_call_info *ci = malloc(sizeof *ci);  /* the test owns it; freed below */
  *ci = (ir_call_info){.nret = 1, .narg = 1};
  call->aux = ci;
  ir_value *r = ir_build_mem(&b, ir_op_ld, ir_type_b32, ir_symref(&b, ir_sym_global(ret), 0, ir_type_u64),
                             0, 0, NULL, 1, IR_MODS(.space = IR_SPACE_PARAM))->dst[0];
  ir_value *idx = ir_alu2(&b, ir_op_and, ir_type_b32, r, ir_imm(&b, ir_type_b32, 1));
  ir_brx(&b, idx, 2, (ir_block *[]){c0, c1});
  b = ir_builder_at_end(c0);
  ir_br(&b, end);
  b = ir_builder_at_end(c1);
  ir_br(&b, end);
  b = ir_builder_at_end(end);
  ir_exit(&b);
  ck_assert(verify_ok(m, true));
  check_text(m,
             "module addr64\n"
             "\n"
             "extern func @_Z3fooi(param::func b32 @_Z3fooi_param_0 align 4 offset 0) -> "
             "(param::func b32 @func_retval0 align 4 offset 0)\n"
             "\n"
             "kernel @k() {\n"
             "  var param b32 @param0 align 4\n"
             "  var param b32 @retval0 align 4\n"
             "bb0:\n"
             "  %0 = sreg tid.y\n"
             "  st.param.b32 [@param0], %0\n"
             "  call.uni (@retval0), @_Z3fooi, (@param0)\n"
             "  %1 = ld.param.b32 [@retval0]\n"
             "  %2 = and.b32 %1, 0x1\n"
             "  brx %2, bb1, bb2\n"
             "bb1 \"case0\":  ; preds bb0\n"
             "  br bb3\n"
             "bb2 \"case1\":  ; preds bb0\n"
             "  br bb3\n"
             "bb3:  ; preds bb1, bb2\n"
             "  exit\n"
             "}\n");
  ck_assert_ptr_eq(ir_module_find_func(m, "_Z3fooi"), callee);
  ck_assert_ptr_eq(ir_module_find_func(m, "k"), f);
  ck_assert_ptr_null(ir_module_find_func(m, "nope"));
  ck_assert_ptr_null(ir_module_find_global(m, "param0"));  /* function scope */
  ir_module_destroy(m);
  free(ci);
}
END_TEST

START_TEST(globals_and_initializers) {
  const char *text =
      "module ptx 9.1 sm_120f addr64 texmode_independent\n"
      "\n"
      "var shared b8 @sdata[1024] align 16\n"
      "extern var shared b8 @dyn[] align 16 extern_shared\n"
      "visible var global u32 @tab[4] align 4 = {1, 2, 3, 4294967295}\n"
      "var const f32 @k[2] align 4 = {0f3F800000, 0fBF800000}\n"
      "var global s16 @neg[2] align 2 = {-1, 32767}\n"
      "weak var global u64 @ptrs[3] align 8 = {@tab+4, generic(@sdata), @f}\n"
      "var global b8 @bytes[12] align 1 = {0x1, b32 @tab, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8}\n"
      "common var global v4 f32 @v[2] align 16\n"
      "var global b32 @big align 4 ptr global size 64\n"
      "\n"
      "func @f() noreturn pragma \"nounroll\" {\n"
      "bb0:\n"
      "  trap\n"
      "}\n";
  ir_module *m = parse_str(text);
  ck_assert_ptr_nonnull(m);
  ck_assert(verify_ok(m, false));
  check_text(m, text);
  ir_global *tab = ir_module_find_global(m, "tab"), *p = ir_module_find_global(m, "ptrs");
  ck_assert_uint_eq(tab->size, 16);
  ck_assert_uint_eq(tab->init[12], 0xff);
  ck_assert_uint_eq(p->nrelocs, 3);
  ck_assert_uint_eq(p->relocs[0].offset, 0);
  ck_assert_int_eq(p->relocs[0].addend, 4);
  ck_assert(p->relocs[1].generic);
  ck_assert_int_eq(p->relocs[2].sym.kind, IR_SYM_FUNC);
  ir_global *by = ir_module_find_global(m, "bytes");
  ck_assert_uint_eq(by->size, 12);
  ck_assert_uint_eq(by->relocs[0].offset, 1);
  ck_assert_uint_eq(by->relocs[0].size, 4);
  ck_assert_uint_eq(ir_module_find_global(m, "big")->size, 64);
  ck_assert_uint_eq(ir_module_find_global(m, "v")->vec, 4);
  ck_assert_uint_eq(m->ptx_version, 91);
  ck_assert_uint_eq(m->sm, 120);
  ck_assert_int_eq(m->sm_suffix, 'f');
  ir_module_destroy(m);
}
END_TEST

/* Every modifier field every op uses, at every value it has a spelling for,
 * alone and all together, prints and parses back to the same fields: an
 * ambiguous spelling among one op's fields would fail here.  (White box:
 * the field table is ir/ir_priv.h's.) */
static void mods_round_trip(ir_op op, const ir_mods *mods) {
  ir_module *m = ir_module_create("mods");
  ir_func *f = ir_func_create(m, "f", false);
  ir_block *b0 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_instr *i = ir_build(&b, op, ir_type_b32, 0, NULL, 0, NULL, mods);
  ir_ret(&b);
  char *t1 = print_str(m);
  ir_module *m2 = parse_str(t1);
  ck_assert_msg(m2 != NULL, "op %s:\n%s", ir_op_infos[op].name, t1);
  ir_instr *j = m2->funcs->entry->first;
  ck_assert_msg(memcmp(&i->mods, &j->mods, sizeof *mods) == 0, "op %s: %s", ir_op_infos[op].name, t1);
  char *t2 = print_str(m2);
  ck_assert_str_eq(t2, t1);
  free(t1);
  free(t2);
  ir_module_destroy(m2);
  ir_module_destroy(m);
}

START_TEST(every_modifier_round_trips) {
  int checked = 0;
  for (unsigned op = 0; op < ir_op_count; op++) {
    if (op == ir_op_phi || op == ir_op_call || op == ir_op_sreg) continue;
    ir_mods all;
    memset(&all, 0, sizeof all);
    for (unsigned fl = 0; fl < ir_mod_count; fl++) {
      if (!ir_op_uses_mod((ir_op)op, (ir_mod_field)fl)) continue;
      for (unsigned v = 1; v < ir_mod_field_infos[fl].nspell; v++) {
        if (!ir_mod_spelling((ir_mod_field)fl, v)) continue;
        ir_mods one;
        memset(&one, 0, sizeof one);
        ir_mods_set(&one, (ir_mod_field)fl, v);
        ck_assert_uint_eq(ir_mods_get(&one, (ir_mod_field)fl), v);
        mods_round_trip((ir_op)op, &one);
        ir_mods_set(&all, (ir_mod_field)fl, v);
        checked++;
      }
    }
    mods_round_trip((ir_op)op, &all);
  }
  ck_assert_int_gt(checked, 500);
}
END_TEST

START_TEST(every_type_and_sreg_round_trips) {
  for (unsigned t = 1; t < ir_type_count; t++) {
    ir_module *m = ir_module_create("t");
    ir_func *f = ir_func_create(m, "f", false);
    ir_block *b0 = ir_block_create(f, NULL);
    ir_builder b = ir_builder_at_end(b0);
    ir_value *c = ir_imm(&b, (ir_type)t, 0xfedcba9876543210ull);
    ir_value *x = ir_copy(&b, (ir_type)t, c);
    ir_build(&b, ir_op_cvt, (ir_type)t, 1, &x, 1, NULL, IR_MODS(0));
    ir_instr *cv = b0->last;
    cv->type2 = (uint8_t)(ir_type_count - t);
    ir_ret(&b);
    free(roundtrip(m));
    ir_module_destroy(m);
  }
  ir_module *m = ir_module_create("s");
  ir_func *f = ir_func_create(m, "f", false);
  ir_block *b0 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  for (unsigned s = 0; s < ir_sreg_count; s++)
    for (unsigned c = 0; c < ir_sreg_infos[s].ncomp; c++) ir_read_sreg(&b, (ir_sreg)s, c);
  ir_ret(&b);
  ck_assert(verify_ok(m, false));
  char *t = roundtrip(m);
  CONTAINS(t, "= sreg tid.z\n");
  CONTAINS(t, "= sreg pm_64.7\n");
  CONTAINS(t, "= sreg envreg.31\n");
  CONTAINS(t, "= sreg laneid\n");
  CONTAINS(t, "= sreg reserved_smem_offset_2.1\n");  /* _0 and _1 */
  free(t);
  ir_module_destroy(m);
}
END_TEST

START_TEST(parse_hand_written) {
  /* Named values and labels, no keep on a guard, implicit entry block,
   * forward references to a value (phi) and a function, parameter offsets
   * computed. */
  ir_module *m = parse_str_q(
      "func @main(param::func u8 @a, param::func u64 @b) {\n"
      "  %x = ld.param::func.u8 [@a]\n"
      "  br loop\n"
      "loop:\n"
      "  %i = phi.u8 [%x, bb0], [%next, loop]\n"
      "  %next = add.u8 %i, 1\n"
      "  %p = setp.eq.u8 %next, 0\n"
      "  %r = @!%p ld.global.u8 [@b]\n"
      "  call (), @later, ()\n"
      "  cbr %p, out, loop\n"
      "out:\n"
      "  ret\n"
      "}\n"
      "func @later() {\n"
      "bb0:\n"
      "  ret\n"
      "}\n", true);
  ck_assert_ptr_null(m);  /* 'bb0' is not a label of @main */
  m = parse_str_q(
      "func @main(param::func u8 @a, param::func u64 @b) {\n"
      "  %x = ld.param::func.u8 [@a]\n"
      "  br loop\n"
      "loop:\n"
      "  %i = phi.u8 [%next, loop], [%x, start]\n"
      "  %next = add.u8 %i, 1\n"
      "  %p = setp.eq.u8 %next, 0\n"
      "  %r = @!%p ld.global.u8 [@b]\n"
      "  call @later, ()\n"
      "  cbr %p, out, loop\n"
      "out:\n"
      "  ret\n"
      "}\n"
      "func @later() {\n"
      "start:\n"
      "  ret\n"
      "}\n", true);
  ck_assert_ptr_null(m);  /* 'start' is a label of @later only */
  m = parse_str(
      "func @main(param::func u8 @a, param::func u64 @b) {\n"
      "start:\n"
      "  %x = ld.param::func.u8 [@a]\n"
      "  br loop\n"
      "loop:\n"
      "  %i = phi.u8 [%next, loop], [%x, start]\n"
      "  %next = add.u8 %i, 1\n"
      "  %p = setp.eq.u8 %next, 0\n"
      "  %r = @!%p ld.global.u8 [@b]\n"
      "  call @later, ()\n"
      "  cbr %p, out, loop\n"
      "out:\n"
      "  ret\n"
      "}\n"
      "func @later() {\n"
      "bb0:\n"
      "  ret\n"
      "}\n");
  ck_assert_ptr_nonnull(m);
  ck_assert(verify_ok(m, true));
  check_text(m,
             "module addr64\n"
             "\n"
             "func @main(param::func u8 @a align 1 offset 0, param::func u64 @b align 8 offset 8) {\n"
             "bb0:\n"
             "  %0 = ld.param::func.u8 [@a]\n"
             "  br bb1\n"
             "bb1:  ; preds bb1, bb0\n"
             "  %1 = phi.u8 [%2, bb1], [%0, bb0]\n"
             "  %2 = add.u8 %1, 1\n"
             "  %3 = setp.eq.u8 %2, 0\n"
             "  %4 = @!%3 ld.global.u8 [@b] keep undef\n"
             "  call @later, ()\n"
             "  cbr %3, bb2, bb1\n"
             "bb2:  ; preds bb1\n"
             "  ret\n"
             "}\n"
             "\n"
             "func @later() {\n"
             "bb0:\n"
             "  ret\n"
             "}\n");
  ir_module_destroy(m);
}
END_TEST

/* ---- parse errors ----------------------------------------------------- */

START_TEST(parse_errors) {
  struct { const char *text, *want; } cases[] = {
    {"kernel @k() {\nbb0:\n  %0 = frob.u32 1\n}\n",
     "t.pwir:3:8: error: unknown op 'frob'\n"
     "     3 |   %0 = frob.u32 1\n"
     "       |        ^\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32.bogus 1, 2\n  ret\n}\n",
     "t.pwir:3:16: error: unknown modifier '.bogus' on 'add'\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32 %1, 2\n  ret\n}\n",
     "t.pwir:3:16: error: use of an undefined value\n"},
    {"kernel @k() {\nbb0:\n  br nowhere\n}\n",
     "t.pwir:3:6: error: undefined label 'nowhere'\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32 1, 2\n  %0 = add.u32 1, 2\n  ret\n}\n",
     "t.pwir:4:3: error: value %0 defined twice\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32 1 2\n}\n",
     "t.pwir:3:18: error: expected end of line, found '2'\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32 0x1ffffffffffffffff, 2\n}\n",
     "t.pwir:3:16: error: number too large for 64 bits\n"},
    {"kernel @k() {\nbb0:\n  %0 = opaque \"x\" 1\n}\n",
     "t.pwir:3:3: error: the type of result 0 of 'opaque' must be stated (%0:type)\n"},
    {"kernel @k() {\nbb0:\n  ret\n}\nkernel @k() {\nbb0:\n  ret\n}\n",
     "t.pwir:5:8: error: function '@k' defined twice\n"},
    {"kernel @k() {\nbb0:\n  call @nowhere, ()\n  ret\n}\n",
     "t.pwir:3:8: error: undefined symbol '@nowhere'\n"},
    {"var global u32 @x = {1, @y}\n",
     "t.pwir:1:25: error: undefined symbol '@y'\n"},
    {"kernel @k() {\nbb0:\n  %0 = sreg tid.w\n  ret\n}\n",
     "t.pwir:3:13: error: bad special register component\n"},
    {"kernel @k() {\nbb0:\n  \"unterminated\n}\n", "t.pwir:3:3: error: unterminated string\n"},
    {"kernel @k() {\nbb0:\n  ret\n", "t.pwir:4:1: error: expected '}', found end of file\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32 1, 2 keep 3\n  ret\n}\n",
     "t.pwir:3:21: error: 'keep' without a guard\n"},
    {"kernel @k() {\nbb0:\n  %0 = phi.u32 [1, bb0]\n  ret\n}\n",
     "t.pwir:3:8: error: phi has 1 operands but its block has 0 predecessors\n"},
    {"module ptx 8\n", "t.pwir:1:12: error: expected a version like 8.5\n"},
    {"kernel @k() {\nbb0:\n  %0 = ld.global.global.u32 [0]\n  ret\n}\n",
     "t.pwir:3:18: error: modifier field 'space' given twice\n"},
    {"kernel @k() {\nbb0:\n  %0 = add.u32 1, \x01\n}\n", "t.pwir:3:19: error: unexpected byte 0x01\n"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char *got = parse_error(cases[k].text);
    ck_assert_msg(strncmp(got, cases[k].want, strlen(cases[k].want)) == 0,
                  "case %zu:\nwant: %s\ngot:  %s", k, cases[k].want, got);
    free(got);
  }
}
END_TEST

/* ---- the verifier on broken IR ---------------------------------------- */

START_TEST(verify_use_not_dominated) {
  ir_module *m = build_diamond();
  ir_func *f = m->funcs;
  /* Make bb2 use bb1's value: bb1 does not dominate bb2. */
  ir_block *b1 = f->entry->next, *b2 = b1->next;
  ir_instr *neg = b1->first, *mul = b2->first;
  mul->src[1] = neg->dst[0];
  char *e = verify_errors(m, false);
  CONTAINS(e, "diamond: error: IR verification failed in @diamond (1 error):\n");
  CONTAINS(e, "  %3 = mul.lo.s32 %0, %2\n"
              "  ; error: operand 1 (%2) is not dominated by its definition\n");
  free(e);
  ir_module_destroy(m);

  /* A phi operand must dominate the end of its predecessor. */
  m = build_diamond();
  f = m->funcs;
  b1 = f->entry->next;
  b2 = b1->next;
  ir_instr *phi = b2->next->first;
  phi->src[0] = b2->first->dst[0];  /* bb2's value flowing in from bb1 */
  e = verify_errors(m, false);
  CONTAINS(e, "; error: phi operand 0 (%3) does not dominate the end of predecessor bb1\n");
  free(e);
  ir_module_destroy(m);
}
END_TEST

START_TEST(verify_missing_terminator) {
  ir_module *m = build_diamond();
  ir_block *b3 = m->funcs->last_block;
  ir_instr_remove(b3->last);
  char *e = verify_errors(m, false);
  CONTAINS(e, "bb3:  ; preds bb1, bb2\n"
              "  ; error: block bb3 does not end in a terminator\n"
              "  %4 = phi.s32 [%2, bb1], [%3, bb2]\n}");
  free(e);
  /* And a terminator in the middle. */
  ir_builder b = ir_builder_at_end(b3);
  ir_ret(&b);
  b = ir_builder_before(b3->first);
  ir_ret(&b);
  e = verify_errors(m, false);
  CONTAINS(e, "  ret\n  ; error: terminator 'ret' in the middle of block bb3\n");
  CONTAINS(e, "; error: phi after a non-phi instruction in bb3\n");
  free(e);
  ir_module_destroy(m);
}
END_TEST

START_TEST(verify_phi_arity) {
  ir_module *m = build_diamond();
  ir_instr *phi = m->funcs->last_block->first;
  phi->nsrc = 1;
  char *e = verify_errors(m, false);
  CONTAINS(e, "; error: phi has 1 operands but block bb3 has 2 predecessors\n");
  free(e);
  ir_module_destroy(m);
}
END_TEST

START_TEST(verify_pred_types) {
  ir_module *m = build_diamond();
  ir_func *f = m->funcs;
  ir_instr *cbr = f->entry->last;
  cbr->src[0] = f->params[0].value;  /* s32, not pred */
  ir_builder b = ir_builder_before(cbr);
  ir_value *bad = ir_selp(&b, ir_type_s32, f->params[0].value, f->params[0].value, f->params[0].value);
  (void)bad;
  char *e = verify_errors(m, false);
  CONTAINS(e, "  cbr %0, bb1, bb2\n  ; error: operand 0 of 'cbr' must be pred, found s32\n");
  CONTAINS(e, "; error: operand 2 of 'selp' must be pred, found s32\n");
  free(e);
  /* A result of the wrong type, and a guard that is not pred. */
  ir_instr *neg = f->entry->next->first;
  neg->dst[0]->type = ir_type_f32;
  ir_instr_set_guard(&b, neg, f->params[0].value, false, NULL);
  e = verify_errors(m, false);
  CONTAINS(e, "; error: result 0 (%3) of 'neg' has type f32, expected s32\n");
  CONTAINS(e, "; error: the guard must be pred, found s32\n");
  free(e);
  ir_module_destroy(m);
}
END_TEST

START_TEST(verify_lowered_and_mods) {
  ir_module *m = parse_str(
      "kernel @k() {\n"
      "bb0:\n"
      "  %0 = sreg laneid\n"
      "  %1, %2:pred = shfl.sync.bfly.b32 %0, 1, 31, 0xffffffff\n"
      "  %3 = add.u32 %1, 1\n"
      "  ret\n"
      "}\n");
  ck_assert_ptr_nonnull(m);
  ck_assert(verify_ok(m, false));
  char *e = verify_errors(m, true);
  CONTAINS(e, "(2 errors)");
  CONTAINS(e, "  %0 = sreg laneid\n  ; error: warp-level special register %laneid in lowered IR (at 3:3)\n");
  CONTAINS(e, "  ; error: warp-level op 'shfl' in lowered IR (at 4:3)\n");
  free(e);
  /* A modifier on an op that does not use it. */
  ir_instr *add = m->funcs->entry->first->next->next;
  add->mods.nc = 1;
  e = verify_errors(m, false);
  CONTAINS(e, "  %3 = add.nc.u32 %1, 1\n  ; error: modifier .nc is not valid on 'add' (at 5:3)\n");
  free(e);
  ir_module_destroy(m);
}
END_TEST

/* One definition of "lowered" (ir_instr_is_unlowered): the CTA barriers
 * are PTX-level ops too, not only the warp-level ones; target ops pass. */
START_TEST(verify_lowered_bar) {
  ir_module *m = parse_str(
      "kernel @k() {\n"
      "bb0:\n"
      "  bar.sync.aligned 0\n"
      "  workgroup_barrier\n"
      "  ret\n"
      "}\n");
  ck_assert_ptr_nonnull(m);
  ck_assert(verify_ok(m, false));
  char *e = verify_errors(m, true);
  CONTAINS(e, "(1 error)");
  CONTAINS(e, "  ; error: PTX-level op 'bar' in lowered IR (at 3:3)\n");
  free(e);
  ir_module_destroy(m);
}
END_TEST

/* The op table's columns, read through their accessors, against the PTX
 * ISA by hand: ld's address and its counts (9.7.9.8: [a], .v4 gives four
 * results, L2::cache_hint a policy operand), bar.red's predicate (its last
 * operand, 9.7.13.1), the spellings resolved per op (9.7.1.3 mul.lo, 9.7.6.2
 * setp.lo, 9.7.1.24 dp2a.lo). */
START_TEST(op_table_columns) {
  ck_assert(ir_op_has_address(ir_op_ld));
  ck_assert(ir_op_has_address(ir_op_mbarrier_arrive));
  ck_assert(!ir_op_has_address(ir_op_add));
  unsigned ns, nd;
  ir_op_counts(ir_op_ld, &(ir_mods){.vec = 4, .has_cache_hint = 1}, &ns, &nd);
  ck_assert_uint_eq(ns, 2);
  ck_assert_uint_eq(nd, 4);
  ir_op_counts(ir_op_add, &(ir_mods){.cc = 1}, &ns, &nd);
  ck_assert_uint_eq(ns, 2);
  ck_assert_uint_eq(nd, 2);
  ck_assert(ir_op_src_is_pred(ir_op_bar_red, 2, 3));
  ck_assert(!ir_op_src_is_pred(ir_op_bar_red, 1, 3));
  ck_assert(ir_op_src_is_pred(ir_op_selp, 2, 3));
  ck_assert(!ir_op_src_is_pred(ir_op_selp, 0, 3));
  ck_assert_int_eq(ir_op_infos[ir_op_shfl].level, IR_OPLEVEL_PTX);
  ck_assert_int_eq(ir_op_infos[ir_op_bar].level, IR_OPLEVEL_PTX);
  ck_assert_int_eq(ir_op_infos[ir_op_add].level, IR_OPLEVEL_ANY);
  ck_assert_int_eq(ir_op_infos[ir_op_wave_ballot].level, IR_OPLEVEL_TGT);
  pw_arena a;
  pw_arena_init(&a);
  pw_map words;
  ir_mod_words_init(&words, &a);
  const ir_mod_word *lo = ir_mod_words_get(&words, "lo", 2);
  const ir_mod_word *w = ir_mod_word_for(lo, ir_op_mul, false);
  ck_assert(w && w->field == ir_mod_mulmode && w->value == IR_MUL_LO);
  w = ir_mod_word_for(lo, ir_op_setp, false);
  ck_assert(w && w->field == ir_mod_cmp && w->value == IR_CMP_LO);
  w = ir_mod_word_for(lo, ir_op_dp2a, false);
  ck_assert(w && w->field == ir_mod_dp_hi && w->value == 0);
  ck_assert_ptr_null(ir_mod_word_for(lo, ir_op_add, false));
  w = ir_mod_word_for(ir_mod_words_get(&words, "u32", 3), ir_op_add, false);
  ck_assert(w && w->field < 0 && w->value == ir_type_u32);
  pw_arena_free(&a);
}
END_TEST

START_TEST(verify_preds_and_foreign_values) {
  ir_module *m = build_diamond();
  ir_func *f = m->funcs;
  ir_block *b3 = f->last_block;
  b3->preds[1] = f->entry;  /* bb0 does not branch to bb3 */
  char *e = verify_errors(m, false);
  CONTAINS(e, "; error: the predecessors of bb3 do not match the branches to it (from: bb1, bb2)\n");
  free(e);
  b3->preds[1] = f->entry->next->next;
  /* A value of another function. */
  ir_module *m2 = build_diamond();
  ir_instr *neg = f->entry->next->first;
  neg->src[0] = m2->funcs->entry->next->first->dst[0];
  e = verify_errors(m, false);
  CONTAINS(e, "is defined in another function");
  free(e);
  ir_module_destroy(m2);
  ir_module_destroy(m);
}
END_TEST

/* ---- editing ---------------------------------------------------------- */

START_TEST(replace_uses_follows_chains) {
  ir_module *m = build_diamond();
  ir_func *f = m->funcs;
  ir_block *b1 = f->entry->next, *b2 = b1->next, *b3 = b2->next;
  ir_value *neg = b1->first->dst[0], *mul = b2->first->dst[0], *x = f->params[0].value;
  ir_value **map = calloc(f->nvalues, sizeof *map);
  map[mul->id] = neg;  /* mul -> neg -> x */
  map[neg->id] = x;
  ir_replace_uses(f, map);
  ck_assert_ptr_eq(b3->first->src[0], x);
  ck_assert_ptr_eq(b3->first->src[1], x);
  free(map);
  ir_module_destroy(m);
}
END_TEST

START_TEST(split_and_compute_preds) {
  ir_module *m = build_diamond();
  ir_func *f = m->funcs;
  ir_block *b0 = f->entry, *b1 = b0->next, *b2 = b1->next, *b3 = b2->next;
  /* Split bb1 before its branch: bb3's pred bb1 becomes the new block. */
  ir_block *nb = ir_block_split_before(b1->last, "split");
  ck_assert_ptr_eq(b3->preds[0], nb);
  ir_builder b = ir_builder_at_end(b1);
  ir_br(&b, nb);
  ck_assert(verify_ok(m, true));
  ck_assert_ptr_eq(b1->next, nb);

  /* Retarget bb2 to bb1's new block: bb3 loses pred bb2 (and the phi its
   * operand), nb gains one (a NULL phi-less entry). */
  ir_instr *br2 = b2->last;
  br2->targets[0] = nb;
  ir_instr *phi = b3->first;
  ir_value *from_nb = phi->src[0];
  ir_compute_preds(f);
  ck_assert_uint_eq(b3->npreds, 1);
  ck_assert_ptr_eq(b3->preds[0], nb);
  ck_assert_uint_eq(phi->nsrc, 1);
  ck_assert_ptr_eq(phi->src[0], from_nb);
  ck_assert_uint_eq(nb->npreds, 2);
  ck_assert_ptr_eq(nb->preds[0], b1);
  ck_assert_ptr_eq(nb->preds[1], b2);
  /* ids follow the layout again */
  ck_assert_uint_eq(nb->id, 2);
  ck_assert_uint_eq(b3->id, 4);
  ir_module_destroy(m);
}
END_TEST

START_TEST(big_phi_and_layout) {
  /* 300 predecessors: beyond 8-bit operand counts. */
  ir_module *m = ir_module_create("big");
  ir_func *f = ir_func_create(m, "big", true);
  ir_param *p0 = ir_func_add_param(f, "p0", ir_type_u8, IR_SPACE_PARAM_ENTRY, 0, 1);
  ir_param *p1 = ir_func_add_param(f, "p1", ir_type_b8, IR_SPACE_PARAM_ENTRY, 16, 24);
  ir_param *p2 = ir_func_add_param(f, "p2", ir_type_u64, IR_SPACE_PARAM_ENTRY, 0, 1);
  p2 = &f->params[2];
  p1 = &f->params[1];
  p0 = &f->params[0];
  ir_func_layout_params(f);
  ck_assert_uint_eq(p0->offset, 0);
  ck_assert_uint_eq(p1->offset, 16);
  ck_assert_uint_eq(p2->offset, 40);
  ir_block *entry = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(entry);
  ir_value *t = ir_read_sreg(&b, ir_sreg_tid, 0);
  enum { N = 300 };
  ir_block *cases[N];
  for (int k = 0; k < N; k++) cases[k] = ir_block_create(f, NULL);
  ir_block *join = ir_block_create(f, NULL);
  ir_brx(&b, t, N, cases);
  ir_instr *phi = ir_phi(&b, join, ir_type_u32, 0);
  for (int k = 0; k < N; k++) {
    b = ir_builder_at_end(cases[k]);
    ir_br(&b, join);
    ir_phi_add_src(phi, ir_imm(&b, ir_type_u32, (uint64_t)k));
  }
  b = ir_builder_at_end(join);
  ir_ret(&b);
  ck_assert_uint_eq(phi->nsrc, N);
  ck_assert(verify_ok(m, true));
  free(roundtrip(m));
  ir_compute_dominators(f);
  ir_compute_post_dominators(f);
  ck_assert_ptr_eq(join->idom, entry);
  ck_assert_ptr_eq(cases[17]->ipdom, join);
  ck_assert_ptr_eq(entry->ipdom, join);
  ir_module_destroy(m);
}
END_TEST

/* A big function with many errors: the dump shows the first 100 errors in
 * context and elides the rest, instead of printing 1000+ lines. */
START_TEST(verify_big_function_dump) {
  ir_module *m = ir_module_create("big");
  ir_func *f = ir_func_create(m, "big", true);
  ir_block *b0 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_value *t = ir_read_sreg(&b, ir_sreg_tid, 0);
  for (int k = 0; k < 1000; k++) {
    ir_value *x = ir_add(&b, ir_type_u32, t, ir_imm(&b, ir_type_u32, 1));
    if (k % 5 == 0) x->def->mods.nc = 1;  /* 200 errors */
  }
  ir_ret(&b);
  char *e = verify_errors(m, false);
  CONTAINS(e, "(200 errors):\n");
  /* Errors at %1, %6, %11 ...: each shown with the three instructions
   * before it, the rest elided. */
  CONTAINS(e, "bb0:\n  %0 = sreg tid.x\n  %1 = add.nc.u32 %0, 1\n"
              "  ; error: modifier .nc is not valid on 'add'\n"
              "  ; ...\n  %3 = add.u32 %0, 1\n  %4 = add.u32 %0, 1\n  %5 = add.u32 %0, 1\n"
              "  %6 = add.nc.u32 %0, 1\n  ; error: modifier .nc is not valid on 'add'\n  ; ...\n");
  CONTAINS(e, "}\n; 100 more errors not shown");
  int lines = 0;
  for (const char *c = e; *c; c++) lines += *c == '\n';
  ck_assert_int_lt(lines, 700);
  free(e);
  ir_module_destroy(m);
}
END_TEST

/* ---- conversion and clone builders ---------------------------------------- */

/* ir_convert puts the destination type first and the source second, as
 * cvt.rn.f16.f32 reads (PTX ISA 9.7.9.21); ir_clone copies everything
 * but the operands and modifiers it is given, guard and keep included;
 * ir_instr_set_target moves one edge.  Expected texts by hand. */
START_TEST(convert_clone_retarget) {
  ir_module *m = ir_module_create("c");
  ir_func *f = ir_func_create(m, "k", true);
  ir_param *pp = ir_func_add_param(f, "p", ir_type_u64, IR_SPACE_PARAM_ENTRY, 0, 1);
  ir_func_layout_params(f);
  ir_block *b0 = ir_block_create(f, NULL), *b1 = ir_block_create(f, NULL), *b2 = ir_block_create(f, NULL);
  ir_builder b = ir_builder_at_end(b0);
  ir_value *p = ir_build_mem(&b, ir_op_ld, ir_type_u64, ir_symref(&b, ir_sym_param(pp), 0, ir_type_u64), 0, 0, NULL,
                             1, IR_MODS(.space = IR_SPACE_PARAM_ENTRY))->dst[0];
  ir_value *x = ir_build_mem(&b, ir_op_ld, ir_type_f32, p, 8, 0, NULL, 1, IR_MODS(.space = IR_SPACE_GLOBAL))->dst[0];
  ir_value *h = ir_convert(&b, ir_type_f16, ir_type_f32, x, .rnd = IR_RND_RN);
  ir_value *w = ir_convert(&b, ir_type_f64, ir_type_f16, h);
  ck_assert_uint_eq(h->def->type, ir_type_f16);
  ck_assert_uint_eq(h->def->type2, ir_type_f32);
  ck_assert_uint_eq(h->type, ir_type_f16);
  ir_value *q = ir_setp(&b, ir_type_f64, w, ir_imm_f64(&b, 0.0), .cmp = IR_CMP_GT);
  ir_instr *st = ir_build_mem(&b, ir_op_st, ir_type_f64, p, 16, 1, &w, 0, IR_MODS(.space = IR_SPACE_GLOBAL));
  ir_instr_set_guard(&b, st, q, true, NULL);
  ir_instr *at = ir_build_mem(&b, ir_op_atom, ir_type_u32, p, 4, 1, (ir_value *[]){ir_imm(&b, ir_type_u32, 1)}, 1,
                              IR_MODS(.space = IR_SPACE_GLOBAL, .atomop = IR_ATOM_ADD));
  ir_instr_set_guard(&b, at, q, false, (ir_value *[]){ir_imm(&b, ir_type_u32, 7)});
  /* the clones: a shared atom at another address, a plain copy of the store */
  ir_builder c = ir_builder_after(at);
  ir_mods mods = at->mods;
  mods.space = IR_SPACE_SHARED;
  ir_value *a = ir_imm(&c, ir_type_u64, 64);
  ir_instr *at2 = ir_clone(&c, at, (ir_value *[]){a, at->src[1]}, &mods);
  ir_instr *st2 = ir_clone(&c, st, NULL, NULL);
  ck_assert_ptr_ne(at2->dst[0], at->dst[0]);
  ck_assert_uint_eq(at2->offset, 4);
  ck_assert_ptr_eq(at2->keep[0], at->keep[0]);
  ck_assert(st2->guard == q && st2->guard_neg);
  ir_cbr(&b, q, b1, b1);
  b = ir_builder_at_end(b1);
  ir_ret(&b);
  b = ir_builder_at_end(b2);
  ir_ret(&b);
  ir_instr_set_target(b0->last, 1, b2);
  ir_compute_preds(f);
  ck_assert(verify_ok(m, true));
  check_text(m,
             "module addr64\n"
             "\n"
             "kernel @k(param::entry u64 @p align 8 offset 0) {\n"
             "bb0:\n"
             "  %0 = ld.param::entry.u64 [@p]\n"
             "  %1 = ld.global.f32 [%0+8]\n"
             "  %2 = cvt.rn.f16.f32 %1\n"
             "  %3 = cvt.f64.f16 %2\n"
             "  %4 = setp.gt.f64 %3, 0d0000000000000000\n"
             "  @!%4 st.global.f64 [%0+16], %3\n"
             "  %5 = @%4 atom.global.add.u32 [%0+4], 1 keep 7\n"
             "  %6 = @%4 atom.shared.add.u32 [64+4], 1 keep 7\n"
             "  @!%4 st.global.f64 [%0+16], %3\n"
             "  cbr %4, bb1, bb2\n"
             "bb1:  ; preds bb0\n"
             "  ret\n"
             "bb2:  ; preds bb0\n"
             "  ret\n"
             "}\n");
  ir_module_destroy(m);
}
END_TEST

/* ir_dom_solve on random graphs against the definition: d dominates v iff
 * v is unreachable from the root once d is removed; idom(v) is the
 * dominator of v that every other strict dominator dominates (the one
 * with the most dominators).  The reference is this brute force, not the
 * solver.  Also the shapes that were quadratic (a chain all branching to
 * one node), and unreachable nodes. */
static void reach_without(uint32_t n, uint32_t r, const uint32_t *soff, const uint32_t *succ,
                          uint32_t removed, uint8_t *seen) {
  uint32_t *st = malloc(n * sizeof *st), sp = 0;
  memset(seen, 0, n);
  if (r != removed) {
    seen[r] = 1;
    st[sp++] = r;
  }
  while (sp) {
    uint32_t v = st[--sp];
    for (uint32_t e = soff[v]; e < soff[v + 1]; e++)
      if (succ[e] != removed && !seen[succ[e]]) {
        seen[succ[e]] = 1;
        st[sp++] = succ[e];
      }
  }
  free(st);
}

static void check_dom_graph(uint32_t n, uint32_t ne, const uint32_t *from, const uint32_t *to) {
  uint32_t *soff = calloc(n + 1, 4), *poff = calloc(n + 1, 4), *succ = malloc(ne * 4 + 4),
           *pred = malloc(ne * 4 + 4), *sf = malloc((n + 1) * 4), *pf = malloc((n + 1) * 4);
  for (uint32_t e = 0; e < ne; e++) {
    soff[from[e] + 1]++;
    poff[to[e] + 1]++;
  }
  for (uint32_t v = 0; v < n; v++) {
    soff[v + 1] += soff[v];
    poff[v + 1] += poff[v];
  }
  memcpy(sf, soff, (n + 1) * 4);
  memcpy(pf, poff, (n + 1) * 4);
  for (uint32_t e = 0; e < ne; e++) {
    succ[sf[from[e]]++] = to[e];
    pred[pf[to[e]]++] = from[e];
  }
  uint32_t *idom = malloc(n * 4), *pre = malloc(n * 4), *post = malloc(n * 4);
  ir_dom_solve(n, 0, soff, succ, poff, pred, idom, pre, post);
  /* dom[d * n + v]: d dominates v (brute force) */
  uint8_t *reach = malloc(n), *seen = malloc(n), *dom = calloc((size_t)n * n, 1);
  reach_without(n, 0, soff, succ, UINT32_MAX, reach);
  for (uint32_t d = 0; d < n; d++) {
    reach_without(n, 0, soff, succ, d, seen);
    for (uint32_t v = 0; v < n; v++) dom[(size_t)d * n + v] = reach[v] && (d == v || !seen[v]);
  }
  for (uint32_t v = 0; v < n; v++) {
    if (!reach[v]) {
      ck_assert_uint_eq(idom[v], IR_DOM_NONE);
      continue;
    }
    if (v == 0) {
      ck_assert_uint_eq(idom[v], 0);
      continue;
    }
    uint32_t want = IR_DOM_NONE, best = 0;
    for (uint32_t d = 0; d < n; d++) {
      if (d == v || !dom[(size_t)d * n + v]) continue;
      uint32_t k = 0;  /* dominators of d: the deepest strict dominator has most */
      for (uint32_t x = 0; x < n; x++) k += dom[(size_t)x * n + d];
      if (want == IR_DOM_NONE || k > best) want = d, best = k;
    }
    ck_assert_msg(idom[v] == want, "n=%u: idom(%u) = %u, want %u", n, v, idom[v], want);
    /* the tree numbering answers dominance as the definition does */
    for (uint32_t d = 0; d < n; d++)
      if (reach[d])
        ck_assert_int_eq(pre[d] <= pre[v] && post[v] <= post[d], dom[(size_t)d * n + v]);
  }
  free(soff), free(poff), free(succ), free(pred), free(sf), free(pf);
  free(idom), free(pre), free(post), free(reach), free(seen), free(dom);
}

START_TEST(dominators_against_definition) {
  uint32_t from[400], to[400];
  uint64_t x = 0x2545f4914f6cdd1dull;
  for (int iter = 0; iter < 300; iter++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint32_t n = 2 + (uint32_t)(x % 30), ne = 0;
    /* a spanning path through most nodes (reachable ones), then random
     * edges: back edges, cross edges, self loops, duplicates */
    for (uint32_t v = 1; v < n; v++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      if (x % 8) from[ne] = (uint32_t)(x >> 8) % v, to[ne++] = v;
    }
    uint32_t extra = (uint32_t)(x >> 20) % (2 * n);
    for (uint32_t k = 0; k < extra && ne < 400; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      from[ne] = (uint32_t)(x % n);
      to[ne++] = (uint32_t)((x >> 32) % n);
    }
    check_dom_graph(n, ne, from, to);
  }
  /* a chain 0 -> 1 -> ... -> 199, every node also branching to 200 */
  uint32_t ne = 0;
  for (uint32_t v = 0; v < 199; v++) from[ne] = v, to[ne++] = v + 1;
  for (uint32_t v = 0; v < 200; v++) from[ne] = v, to[ne++] = 200;
  check_dom_graph(201, ne, from, to);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ir");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, loop_with_phi);
  tcase_add_test(tc, diamond);
  tcase_add_test(tc, multi_exit_loop);
  tcase_add_test(tc, infinite_loop_postdom);
  tcase_add_test(tc, guarded_carry_vector);
  tcase_add_test(tc, call_and_brx);
  tcase_add_test(tc, globals_and_initializers);
  tcase_add_test(tc, every_modifier_round_trips);
  tcase_add_test(tc, every_type_and_sreg_round_trips);
  tcase_add_test(tc, parse_hand_written);
  tcase_add_test(tc, parse_errors);
  tcase_add_test(tc, verify_use_not_dominated);
  tcase_add_test(tc, verify_missing_terminator);
  tcase_add_test(tc, verify_phi_arity);
  tcase_add_test(tc, verify_pred_types);
  tcase_add_test(tc, verify_lowered_and_mods);
  tcase_add_test(tc, verify_lowered_bar);
  tcase_add_test(tc, op_table_columns);
  tcase_add_test(tc, verify_preds_and_foreign_values);
  tcase_add_test(tc, replace_uses_follows_chains);
  tcase_add_test(tc, split_and_compute_preds);
  tcase_add_test(tc, big_phi_and_layout);
  tcase_add_test(tc, dominators_against_definition);
  tcase_add_test(tc, verify_big_function_dump);
  tcase_add_test(tc, convert_clone_retarget);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
