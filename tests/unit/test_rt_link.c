/* tests/unit/test_rt_link.c: the linked image of cuLinkComplete
 * (runtime/rt_link.h) as the backends read it: parsed into one linked IR
 * module (the emulator's step) and compiled into one code object (the HIP
 * backend's step), and malformed images refused.  The image text is
 * written here by hand in the documented format. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "runtime/rt_link.h"
#include "util/diag.h"

#define HDR ".version 8.0\n.target sm_80\n.address_size 64\n"
static const char user[] = HDR
    ".extern .func (.param .b32 r) twice (.param .b32 a);\n"
    ".visible .entry k(.param .u64 out)\n{\n  .reg .b32 %r<3>;\n  .reg .b64 %rd<2>;\n"
    "  { .param .b32 pa; .param .b32 pr;\n    st.param.b32 [pa], 21;\n"
    "    call.uni (pr), twice, (pa);\n    ld.param.b32 %r1, [pr]; }\n"
    "  ld.param.u64 %rd1, [out];\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
static const char def[] = HDR
    ".visible .func (.param .b32 r) twice (.param .b32 a)\n{\n  .reg .b32 %r<3>;\n"
    "  ld.param.b32 %r1, [a];\n  shl.b32 %r2, %r1, 1;\n  st.param.b32 [r], %r2;\n  ret;\n}\n";

static char *image(const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 256;
  char *s = malloc(n);
  snprintf(s, n, "//ptxwave-linked-ptx v1 2\n//part %zu user.ptx\n%s\n//part %zu def.ptx\n%s\n", strlen(a), a,
           strlen(b), b);
  return s;
}

START_TEST(parse_links) {
  char *img = image(user, def);
  ck_assert(rt_link_is_image(img, strlen(img)));
  ck_assert(!rt_link_is_image(user, strlen(user)));
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = rt_parse_module("img", img, strlen(img), &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  ir_func *f = ir_module_find_func(m, "twice");
  ck_assert_ptr_nonnull(f);
  ck_assert(!f->is_decl);
  ck_assert_ptr_nonnull(ir_module_find_func(m, "k"));
  ir_module_destroy(m);
  pw_diag_fini(&d);
  free(img);
}
END_TEST

START_TEST(compile_links) {
  char *img = image(user, def);
  const ir_target *t = cg_target_find("gfx942");
  ck_assert_ptr_nonnull(t);
  pw_diag d;
  pw_diag_init(&d, NULL);
  cg_output out;
  bool ok = rt_link_compile("img", img, strlen(img), &(cg_options){.target = t}, CG_EMIT_HSACO, &out, &d);
  ck_assert_msg(ok, "%s", pw_diag_text(&d));
  /* an AMDGPU code object (ELF64 LE, e_machine EM_AMDGPU = 224) with k */
  ck_assert(out.size > 64 && !memcmp(out.data, "\177ELF", 4) && out.data[4] == 2);
  ck_assert_uint_eq(out.data[0x12] | out.data[0x13] << 8, 224);
  ck_assert_uint_eq(out.nkernels, 1);
  free(out.data);
  pw_diag_fini(&d);
  free(img);
}
END_TEST

START_TEST(undefined_and_malformed) {
  char *img = image(user, HDR);  /* twice defined nowhere */
  pw_diag d;
  pw_diag_init(&d, NULL);
  ck_assert_ptr_null(rt_parse_module("img", img, strlen(img), &d));
  ck_assert_msg(strstr(pw_diag_text(&d), "undefined symbol 'twice'"), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  free(img);
  const char *bad[] = {
    "//ptxwave-linked-ptx v1 1\n//part 99999 a.ptx\n.version 8.0\n",   /* length past the end */
    "//ptxwave-linked-ptx v1 1\n//part x a.ptx\n",                      /* no length */
    "//ptxwave-linked-ptx v1 1\n//part 3 a.ptx",                        /* no newline */
    "//ptxwave-linked-ptx v1 0\n",                                      /* no module */
  };
  for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) {
    pw_diag_init(&d, NULL);
    ck_assert_ptr_null(rt_parse_module("bad", bad[k], strlen(bad[k]), &d));
    ck_assert_msg(strstr(pw_diag_text(&d), "linked image"), "case %u: %s", k, pw_diag_text(&d));
    pw_diag_fini(&d);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("rt_link");
  TCase *tc = tcase_create("image");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, parse_links);
  tcase_add_test(tc, compile_links);
  tcase_add_test(tc, undefined_and_malformed);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
