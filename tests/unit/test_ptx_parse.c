/* tests/unit/test_ptx_parse.c: the parser's API contract (ptx_parse.h):
 * NULL and every error reported on bad input, several errors per run, text
 * read only up to len, statistics; and the SSA it builds on small programs
 * whose phis are worked out by hand. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ptx/ptx_parse.h"

#define HEAD ".version 8.0\n.target sm_80\n.address_size 64\n"

static ir_module *parse(const char *text, pw_diag *d, ptx_parse_stats *st) {
  pw_diag_init(d, NULL);
  return ptx_parse("t.ptx", text, strlen(text), d, st);
}

static unsigned count_op(const ir_func *f, ir_op op) {
  unsigned n = 0;
  ir_foreach_block(f, b) {
    ir_foreach_instr(b, i) n += i->op == op;
  }
  return n;
}

START_TEST(good_module_verifies) {
  pw_diag d;
  ptx_parse_stats st;
  ir_module *m = parse(HEAD
                       ".visible .entry k(.param .u64 p) {\n"
                       "  .reg .b32 %r<3>; .reg .b64 %rd1;\n"
                       "  ld.param.u64 %rd1, [p];\n"
                       "  mov.u32 %r1, %tid.x;\n"
                       "  st.global.u32 [%rd1], %r1;\n"
                       "  ret;\n"
                       "}\n",
                       &d, &st);
  ck_assert_ptr_nonnull(m);
  ck_assert_int_eq(d.nerrors, 0);
  ck_assert(ir_verify(m, NULL, &d));
  ck_assert_uint_eq(st.instrs, 4);
  ck_assert_uint_eq(st.funcs, 1);
  ck_assert_uint_eq(st.opaque, 0);
  ck_assert_int_eq(m->ptx_version, 80);
  ck_assert_int_eq(m->sm, 80);
  ck_assert_ptr_nonnull(ir_module_find_func(m, "k"));
  ir_module_destroy(m);
  pw_diag_fini(&d);
}
END_TEST

START_TEST(errors_are_all_reported) {
  pw_diag d;
  ir_module *m = parse(HEAD
                       ".entry k() {\n"
                       "  .reg .b32 %r<2>;\n"
                       "  add.s32 %r1, %r7, 1;\n"   /* undeclared */
                       "  mov.u32 %r1 0;\n"         /* missing ',' */
                       "  bogus.op %r1;\n"          /* unknown: opaque, not an error */
                       "  bra NOWHERE;\n"           /* undefined label */
                       "}\n"
                       ".global .u32 x = ;\n",      /* bad initializer */
                       &d, NULL);
  ck_assert_ptr_null(m);
  ck_assert_int_eq(d.nerrors, 4);
  const char *t = pw_diag_text(&d);
  ck_assert_ptr_nonnull(strstr(t, "t.ptx:6:16: error: undeclared register '%r7'"));
  ck_assert_ptr_nonnull(strstr(t, "t.ptx:7:15: error: expected ',' or ';', found '0'"));
  ck_assert_ptr_nonnull(strstr(t, "t.ptx:9:7: error: label 'NOWHERE' is not defined"));
  ck_assert_ptr_nonnull(strstr(t, "t.ptx:11:18: error: expected a constant expression, found ';'"));
  pw_diag_fini(&d);
}
END_TEST

START_TEST(reads_only_len_bytes) {
  /* The text is not NUL-terminated: what follows len must not be read. */
  const char *good = HEAD ".entry k() { ret; }\n";
  size_t len = strlen(good);
  char *buf = malloc(len + 8);
  memcpy(buf, good, len);
  memcpy(buf + len, "garbage!", 8);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("t.ptx", buf, len, &d, NULL);
  ck_assert_ptr_nonnull(m);
  ir_module_destroy(m);
  /* Cut in the middle of the body: an error, not a read past the end. */
  m = ptx_parse("t.ptx", buf, len - 4, &d, NULL);
  ck_assert_ptr_null(m);
  ck_assert_int_ge(d.nerrors, 1);
  pw_diag_fini(&d);
  free(buf);
}
END_TEST

START_TEST(unsupported_versions_refused) {
  pw_diag d;
  ck_assert_ptr_null(parse(".version 4.3\n.target sm_60\n.address_size 64\n", &d, NULL));
  ck_assert_ptr_nonnull(strstr(pw_diag_text(&d), "PTX ISA 4.3 is not supported (5.0 or later)"));
  pw_diag_fini(&d);
  ck_assert_ptr_null(parse(".version 8.0\n.target sm_80\n.address_size 32\n", &d, NULL));
  ck_assert_ptr_nonnull(strstr(pw_diag_text(&d), ".address_size 32 is not supported"));
  pw_diag_fini(&d);
  ck_assert_ptr_null(parse(".target sm_80\n", &d, NULL));
  ck_assert_ptr_nonnull(strstr(pw_diag_text(&d), "missing .version"));
  pw_diag_fini(&d);
}
END_TEST

/* PTX ISA 5.0 (CUDA 8): cuDNN's JIT probe, and the warp operations of that
 * ISA, which have no .sync form and no member mask. */
START_TEST(isa_5_0_parses) {
  pw_diag d;
  ir_module *m = parse(".version 5.0\n.target sm_50\n.address_size 64\n"
                       ".visible .entry nopCudnnHardwareDetection()\n{\n  ret;\n}\n"
                       ".visible .entry w(.param .u64 p) {\n"
                       "  .reg .b32 %r<4>; .reg .pred %q; .reg .b64 %rd1;\n"
                       "  ld.param.u64 %rd1, [p];\n"
                       "  mov.u32 %r1, %tid.x;\n"
                       "  shfl.bfly.b32 %r2, %r1, 1, 31;\n"
                       "  setp.ne.u32 %q, %r2, 0;\n"
                       "  vote.ballot.b32 %r3, %q;\n"
                       "  st.global.u32 [%rd1], %r3;\n"
                       "  ret;\n"
                       "}\n",
                       &d, NULL);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  ck_assert_int_eq(m->ptx_version, 50);
  ck_assert(ir_verify(m, NULL, &d));
  ck_assert_uint_eq(count_op(ir_module_find_func(m, "w"), ir_op_shfl), 1);
  ck_assert_uint_eq(count_op(ir_module_find_func(m, "w"), ir_op_vote), 1);
  ir_module_destroy(m);
  pw_diag_fini(&d);
}
END_TEST

/* if/else diamond: one phi at the join for the register both arms write,
 * none for the one only read. */
START_TEST(diamond_has_one_phi) {
  pw_diag d;
  ir_module *m = parse(HEAD
                       ".func (.reg .b32 r) f(.reg .b32 a) {\n"
                       "  .reg .pred %p; .reg .b32 %x;\n"
                       "  setp.eq.u32 %p, a, 0;\n"
                       "  @%p bra ELSE;\n"
                       "  add.u32 %x, a, 1;\n"
                       "  bra.uni JOIN;\n"
                       "ELSE:\n"
                       "  add.u32 %x, a, 2;\n"
                       "JOIN:\n"
                       "  add.u32 r, %x, a;\n"
                       "  ret;\n"
                       "}\n",
                       &d, NULL);
  ck_assert_ptr_nonnull(m);
  ck_assert(ir_verify(m, NULL, &d));
  ir_func *f = ir_module_find_func(m, "f");
  ck_assert_uint_eq(count_op(f, ir_op_phi), 1);
  ir_module_destroy(m);
  pw_diag_fini(&d);
}
END_TEST

/* A register only read in a loop needs no phi; the counter does. */
START_TEST(loop_phis_only_where_written) {
  pw_diag d;
  ir_module *m = parse(HEAD
                       ".func (.reg .b32 r) f(.reg .b32 n) {\n"
                       "  .reg .pred %p; .reg .b32 %i, %k;\n"
                       "  mov.u32 %i, 0; mov.u32 %k, 5;\n"
                       "L:\n"
                       "  add.u32 %i, %i, %k;\n"
                       "  setp.lt.u32 %p, %i, n;\n"
                       "  @%p bra L;\n"
                       "  mov.u32 r, %i;\n"
                       "  ret;\n"
                       "}\n",
                       &d, NULL);
  ck_assert_ptr_nonnull(m);
  ck_assert(ir_verify(m, NULL, &d));
  ck_assert_uint_eq(count_op(ir_module_find_func(m, "f"), ir_op_phi), 1);
  ir_module_destroy(m);
  pw_diag_fini(&d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ptx_parse");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, good_module_verifies);
  tcase_add_test(tc, errors_are_all_reported);
  tcase_add_test(tc, reads_only_len_bytes);
  tcase_add_test(tc, unsupported_versions_refused);
  tcase_add_test(tc, isa_5_0_parses);
  tcase_add_test(tc, diamond_has_one_phi);
  tcase_add_test(tc, loop_phis_only_where_written);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
