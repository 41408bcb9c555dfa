/* tests/unit/test_util.c: the arena and the diagnostics format. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "util/arena.h"
#include "util/diag.h"

START_TEST(arena_alignment_and_zeroing) {
  pw_arena a;
  pw_arena_init(&a);
  for (int i = 1; i < 5000; i += 7) {
    unsigned char *p = pw_arena_alloc(&a, (size_t)i);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 16, 0);
    for (int j = 0; j < i; j++) ck_assert_uint_eq(p[j], 0);
    memset(p, 0xab, (size_t)i);
  }
  /* a big block gets its own chunk and leaves the current one usable */
  void *big = pw_arena_alloc(&a, 3u << 20);
  ck_assert_ptr_nonnull(big);
  ck_assert_ptr_null(pw_arena_alloc_array(&a, SIZE_MAX / 2, 4));
  ck_assert_str_eq(pw_arena_strndup(&a, "kernel_name", 6), "kernel");
  pw_arena_free(&a);
}
END_TEST

START_TEST(diag_caret_under_column) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  pw_src s = {"k.ptx", "first\n  add.s32 %r1;\n", 21};
  pw_error_at(&d, &s, 2, 3, "unknown '%s'", "add");
  const char *want =
      "k.ptx:2:3: error: unknown 'add'\n"
      "     2 |   add.s32 %r1;\n"
      "       |   ^\n";
  ck_assert_str_eq(pw_diag_text(&d), want);
  ck_assert_int_eq(d.nerrors, 1);
  pw_diag_fini(&d);
}
END_TEST

START_TEST(diag_byte_offset_and_limit) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 1;
  pw_error_off(&d, "lib.so", 0x40, "bad magic %#x", 0x1234u);
  pw_error_off(&d, "lib.so", 0x80, "second");
  ck_assert_int_eq(d.nerrors, 2);
  ck_assert_str_eq(pw_diag_text(&d),
                   "lib.so: at byte offset 0x40: error: bad magic 0x1234\n"
                   "too many errors; further errors are counted but not shown\n");
  pw_diag_fini(&d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, arena_alignment_and_zeroing);
  tcase_add_test(tc, diag_caret_under_column);
  tcase_add_test(tc, diag_byte_offset_and_limit);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
