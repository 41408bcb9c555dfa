/* tests/unit/test_ir_link.c: ir_link (ir/ir_link.h): PTX modules that
 * declare what another defines, linked into one module and run on the
 * emulator.  Expected values are computed by hand from the PTX below;
 * error texts are the ones ir_link.h documents. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "ir/ir_link.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

#define HDR ".version 8.0\n.target sm_80\n.address_size 64\n"

/* A kernel that calls an external function: out[i] = mul_op(i, 3). */
static const char *caller_ptx =
  HDR
  ".extern .func (.param .b32 r) mul_op (.param .b32 a, .param .b32 b);\n"
  ".visible .entry k(.param .u64 out)\n{\n"
  "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
  "  mov.u32 %r1, %tid.x;\n"
  "  { .param .b32 pa; .param .b32 pb; .param .b32 pr;\n"
  "    st.param.b32 [pa], %r1;\n    st.param.b32 [pb], 3;\n"
  "    call.uni (pr), mul_op, (pa, pb);\n"
  "    ld.param.b32 %r2, [pr]; }\n"
  "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd1, %rd1, %rd2;\n"
  "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";

/* mul_op(a, b) = a * b + 1 */
static const char *callee_ptx =
  HDR
  ".visible .func (.param .b32 r) mul_op (.param .b32 a, .param .b32 b)\n{\n"
  "  .reg .b32 %r<4>;\n"
  "  ld.param.b32 %r1, [a];\n  ld.param.b32 %r2, [b];\n  mad.lo.u32 %r3, %r1, %r2, 1;\n"
  "  st.param.b32 [r], %r3;\n  ret;\n}\n";

/* mul_op(a, b) = a * b + 2, weak: loses against the .visible one (its
 * function-scope variable must go with it) */
static const char *weak_callee_ptx =
  HDR
  ".weak .func (.param .b32 r) mul_op (.param .b32 a, .param .b32 b)\n{\n"
  "  .reg .b32 %r<4>;\n  .shared .align 4 .b32 weak_scratch[4];\n"
  "  ld.param.b32 %r1, [a];\n  ld.param.b32 %r2, [b];\n  mad.lo.u32 %r3, %r1, %r2, 2;\n"
  "  st.param.b32 [r], %r3;\n  ret;\n}\n";

static ir_module *parse(const char *name, const char *text) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse(name, text, strlen(text), &d, NULL);
  if (!m) fprintf(stderr, "%s\n", pw_diag_text(&d));
  ck_assert_ptr_nonnull(m);
  pw_diag_fini(&d);
  return m;
}

/* Runs kernel `k` of m with 32 threads and one u32 output per thread. */
static void run32(ir_module *m, const char *kernel, uint32_t out[32]) {
  emu_context *ctx;
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &ctx), EMU_OK);
  emu_module *em;
  emu_status st = emu_module_load(ctx, m, &em);
  ck_assert_msg(st == EMU_OK, "module load: %s", emu_error_message(ctx));
  uint64_t d;
  ck_assert_int_eq(emu_malloc(ctx, 32 * 4, &d), EMU_OK);
  void *params[] = {&d};
  st = emu_launch(em, kernel, (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, params);
  ck_assert_msg(st == EMU_OK, "launch: %s", emu_error_message(ctx));
  ck_assert_int_eq(emu_memcpy_dtoh(ctx, out, d, 32 * 4), EMU_OK);
  emu_context_destroy(ctx);
}

static bool verifies(const ir_module *m) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  bool ok = ir_verify(m, NULL, &d);
  if (!ok) fprintf(stderr, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  return ok;
}

/* ir_link_drop_unreached: what a kernel calls (directly or through a
 * callee), takes the address of, or a variable's initializer points to
 * stays; the rest goes, chains of dead callers included; declarations
 * stay; the module still verifies and runs. */
START_TEST(drop_unreached_functions) {
  const char *text =
    HDR
    ".extern .func (.param .b32 r) ext_unused (.param .b32 a);\n"
    ".func (.param .b32 r) leaf (.param .b32 a)\n{\n  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [a];\n  add.u32 %r2, %r1, 5;\n  st.param.b32 [r], %r2;\n  ret;\n}\n"
    ".visible .func (.param .b32 r) called (.param .b32 a)\n{\n  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [a];\n"
    "  { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1;\n"
    "    call.uni (pr), leaf, (pa); ld.param.b32 %r2, [pr]; }\n"
    "  st.param.b32 [r], %r2;\n  ret;\n}\n"
    ".func dead_leaf ()\n{\n  ret;\n}\n"
    ".visible .func dead_caller ()\n{\n  call.uni dead_leaf, ();\n  ret;\n}\n"
    ".func in_table ()\n{\n  ret;\n}\n"
    ".func addr_taken ()\n{\n  ret;\n}\n"
    ".global .align 8 .u64 table[1] = {in_table};\n"
    ".visible .entry k(.param .u64 out)\n{\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<5>;\n"
    "  mov.u32 %r1, %tid.x;\n  mov.u64 %rd4, addr_taken;\n"
    "  { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1;\n"
    "    call.uni (pr), called, (pa); ld.param.b32 %r2, [pr]; }\n"
    "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd1, %rd1, %rd2;\n"
    "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";
  ir_module *m = parse("drop.ptx", text);
  ck_assert_uint_eq(m->nfuncs, 8);
  ir_link_drop_unreached(m);
  const char *stay[] = {"ext_unused", "leaf", "called", "in_table", "addr_taken", "k"};
  ck_assert_uint_eq(m->nfuncs, 6);
  unsigned n = 0;
  ir_foreach_func(m, f) {
    ck_assert_msg(n < 6 && !strcmp(f->name, stay[n]), "function %u is %s, want %s", n, f->name, n < 6 ? stay[n] : "none");
    n++;
  }
  ck_assert_uint_eq(n, 6);
  ck_assert_ptr_eq(m->last_func, ir_module_find_func(m, "k"));
  ck_assert(verifies(m));
  uint32_t out[32];
  run32(m, "k", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i + 5);
  ir_module_destroy(m);

  /* a module without kernels keeps only its declarations */
  m = parse("nokernel.ptx", HDR ".extern .func ext ();\n.visible .func f ()\n{\n  call.uni ext, ();\n  ret;\n}\n");
  ir_link_drop_unreached(m);
  ck_assert_uint_eq(m->nfuncs, 1);
  ck_assert_str_eq(m->funcs->name, "ext");
  ck_assert_ptr_eq(m->last_func, m->funcs);
  ck_assert(verifies(m));
  ir_module_destroy(m);
}
END_TEST

START_TEST(extern_func_resolves) {
  ir_module *a = parse("a.ptx", caller_ptx), *b = parse("b.ptx", callee_ptx);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ck_assert(!ir_link_check_defined(a, &d));  /* alone, a is incomplete */
  ck_assert(ir_link(a, b, &d));
  ck_assert_msg(ir_link_check_defined(a, &d), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  ir_func *f = ir_module_find_func(a, "mul_op");
  ck_assert_ptr_nonnull(f);
  ck_assert(!f->is_decl);
  ck_assert_uint_eq(a->nfuncs, 2);  /* k and the definition; the declaration is gone */
  ck_assert(verifies(a));
  uint32_t out[32];
  run32(a, "k", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i * 3 + 1);
  ir_module_destroy(a);  /* b's memory goes with it (ASan checks the leak) */
}
END_TEST

/* The definition first, the user second: the user's declaration loses. */
START_TEST(definition_first) {
  ir_module *b = parse("b.ptx", callee_ptx), *a = parse("a.ptx", caller_ptx);
  ir_module *mods[] = {b, a};
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_link_modules(mods, 2, false, &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  uint32_t out[32];
  run32(m, "k", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i * 3 + 1);
  ir_module_destroy(m);
}
END_TEST

START_TEST(undefined_is_named) {
  ir_module *a = parse("a.ptx", caller_ptx);
  ir_module *mods[] = {a};
  pw_diag d;
  pw_diag_init(&d, NULL);
  ck_assert_ptr_null(ir_link_modules(mods, 1, false, &d));
  ck_assert_msg(strstr(pw_diag_text(&d), "undefined symbol 'mul_op'"), "%s", pw_diag_text(&d));
  ck_assert_msg(strstr(pw_diag_text(&d), "a.ptx:"), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
}
END_TEST

START_TEST(multiply_defined_is_named) {
  ir_module *a = parse("a.ptx", callee_ptx), *b = parse("b.ptx", callee_ptx);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ck_assert(!ir_link(a, b, &d));
  ck_assert_msg(strstr(pw_diag_text(&d), "symbol 'mul_op' is multiply defined (in a.ptx and in b.ptx)"),
                "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  /* a failed link changes nothing: both still whole, both still ours */
  ck_assert_uint_eq(a->nfuncs, 1);
  ck_assert_uint_eq(b->nfuncs, 1);
  ir_module_destroy(a);
  ir_module_destroy(b);
}
END_TEST

START_TEST(weak_loses_to_visible) {
  ir_module *a = parse("a.ptx", caller_ptx), *w = parse("w.ptx", weak_callee_ptx),
            *b = parse("b.ptx", callee_ptx);
  ir_module *mods[] = {a, w, b};
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_link_modules(mods, 3, false, &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  uint32_t out[32];
  run32(m, "k", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i * 3 + 1);  /* +1: b's, not +2 */
  /* every function-scope variable belongs to a function of the module */
  for (uint32_t k = 0; k < m->nglobals; k++) {
    if (!m->globals[k]->owner) continue;
    bool found = false;
    ir_foreach_func(m, f) found |= f == m->globals[k]->owner;
    ck_assert_msg(found, "variable '%s' of a dropped function", m->globals[k]->name);
  }
  ir_module_destroy(m);
}
END_TEST

/* Many modules (linked in rounds of pairs, ir_link_modules): the order
 * still decides between two weak definitions, the first one winning, and
 * a failure in a later round consumes every module (nothing leaks: the
 * sanitized build checks). */
static ir_module *filler(const char *name, unsigned k) {
  char text[512];
  snprintf(text, sizeof text,
           HDR ".visible .func (.param .b32 r) fill%u (.param .b32 a)\n{\n  .reg .b32 %%r<2>;\n"
               "  ld.param.b32 %%r1, [a];\n  st.param.b32 [r], %%r1;\n  ret;\n}\n", k);
  return parse(name, text);
}

START_TEST(many_modules_keep_order) {
  char weak5[1024];
  snprintf(weak5, sizeof weak5, "%s", weak_callee_ptx);
  char *two = strstr(weak5, "%r2, 2;");
  ck_assert_ptr_nonnull(two);
  two[5] = '5';   /* a * b + 5 */
  /* (a+f1) (f2+w2) (f3+w5) -> ((a+f1)+(f2+w2)) (f3+w5) -> all: w2 is first */
  ir_module *mods[] = {parse("a.ptx", caller_ptx), filler("f1.ptx", 1), filler("f2.ptx", 2),
                       parse("w2.ptx", weak_callee_ptx), filler("f3.ptx", 3), parse("w5.ptx", weak5)};
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_link_modules(mods, 6, false, &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  ck_assert_uint_eq(m->nfuncs, 5);   /* k, fill1..3, one mul_op */
  uint32_t out[32];
  run32(m, "k", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i * 3 + 2);  /* w2's, not w5's */
  ir_module_destroy(m);

  /* multiply defined, found in the second round: (a+b) + (f1+b2) */
  ir_module *bad[] = {parse("a.ptx", caller_ptx), parse("b.ptx", callee_ptx), filler("f1.ptx", 1),
                      parse("b2.ptx", callee_ptx), filler("f2.ptx", 2)};
  pw_diag_init(&d, NULL);
  ck_assert_ptr_null(ir_link_modules(bad, 5, false, &d));
  ck_assert_msg(strstr(pw_diag_text(&d), "symbol 'mul_op' is multiply defined"), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
}
END_TEST

/* .extern .global bound to another module's initialised definition. */
START_TEST(extern_global_resolves) {
  const char *user =
    HDR
    ".extern .global .align 4 .u32 table[4];\n"
    ".visible .entry k(.param .u64 out)\n{\n"
    "  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n"
    "  mov.u32 %r1, %tid.x;\n  and.b32 %r1, %r1, 3;\n"
    "  mov.u64 %rd3, table;\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd3, %rd3, %rd2;\n"
    "  ld.global.u32 %r2, [%rd3];\n"
    "  mov.u32 %r1, %tid.x;\n"
    "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd1, %rd1, %rd2;\n"
    "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n";
  const char *def = HDR ".visible .global .align 4 .u32 table[4] = {10, 20, 30, 40};\n";
  ir_module *a = parse("a.ptx", user), *b = parse("b.ptx", def);
  ir_module *mods[] = {a, b};
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_link_modules(mods, 2, false, &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  ck_assert(verifies(m));
  uint32_t out[32];
  run32(m, "k", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], 10 * (i % 4 + 1));
  ir_module_destroy(m);
}
END_TEST

/* Two modules with a module-local helper of the same name: each kernel
 * keeps calling its own. */
START_TEST(local_names_stay_local) {
  const char *fmt =
    HDR
    ".func (.param .b32 r) helper (.param .b32 a)\n{\n  .reg .b32 %%r<3>;\n"
    "  ld.param.b32 %%r1, [a];\n  add.u32 %%r2, %%r1, %u;\n  st.param.b32 [r], %%r2;\n  ret;\n}\n"
    ".visible .entry %s(.param .u64 out)\n{\n"
    "  .reg .b32 %%r<4>;\n  .reg .b64 %%rd<4>;\n"
    "  mov.u32 %%r1, %%tid.x;\n"
    "  { .param .b32 pa; .param .b32 pr;\n    st.param.b32 [pa], %%r1;\n"
    "    call.uni (pr), helper, (pa);\n    ld.param.b32 %%r2, [pr]; }\n"
    "  ld.param.u64 %%rd1, [out];\n  mul.wide.u32 %%rd2, %%r1, 4;\n  add.u64 %%rd1, %%rd1, %%rd2;\n"
    "  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n";
  char t1[2048], t2[2048];
  snprintf(t1, sizeof t1, fmt, 100u, "k1");
  snprintf(t2, sizeof t2, fmt, 200u, "k2");
  ir_module *a = parse("a.ptx", t1), *b = parse("b.ptx", t2);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ck_assert_msg(ir_link(a, b, &d), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  ck_assert_ptr_nonnull(ir_module_find_func(a, "helper"));
  ck_assert_ptr_nonnull(ir_module_find_func(a, "helper_pwl1"));
  ck_assert(verifies(a));
  uint32_t out[32];
  run32(a, "k1", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i + 100);
  run32(a, "k2", out);
  for (uint32_t i = 0; i < 32; i++) ck_assert_uint_eq(out[i], i + 200);
  ir_module_destroy(a);
}
END_TEST

START_TEST(signature_mismatch_is_named) {
  const char *other = HDR ".visible .func (.param .b32 r) mul_op (.param .b32 a)\n{\n  st.param.b32 [r], 0;\n  ret;\n}\n";
  ir_module *a = parse("a.ptx", caller_ptx), *b = parse("b.ptx", other);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ck_assert(!ir_link(a, b, &d));
  ck_assert_msg(strstr(pw_diag_text(&d), "function 'mul_op' has different signatures"), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  ir_module_destroy(a);
  ir_module_destroy(b);
}
END_TEST

static Suite *suite(void) {
  Suite *s = suite_create("ir_link");
  TCase *tc = tcase_create("link");
  tcase_add_test(tc, extern_func_resolves);
  tcase_add_test(tc, definition_first);
  tcase_add_test(tc, undefined_is_named);
  tcase_add_test(tc, multiply_defined_is_named);
  tcase_add_test(tc, weak_loses_to_visible);
  tcase_add_test(tc, many_modules_keep_order);
  tcase_add_test(tc, extern_global_resolves);
  tcase_add_test(tc, local_names_stay_local);
  tcase_add_test(tc, signature_mismatch_is_named);
  tcase_add_test(tc, drop_unreached_functions);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
