/* tests/unit/test_emu_concurrent.c: launches on several host threads at
 * once on one emulator context (docs/emulator.md "The API and the
 * command": the runtime's streams each launch from a host thread of their
 * own).  Not among the suites the codegen and lower-diff harnesses wrap
 * (tests/codegen/cg_wrap.c, tests/lower/diff_wrap.c): those re-run each
 * launch on the calling thread and keep global state, and codegen leaves
 * kernels that call malloc out. */
#include <pthread.h>
#include <unistd.h>

#include "emu_test.h"

/* A kernel spinning on a flag, launched first on one host thread, is
 * released by a kernel another host thread launches while it spins: each
 * launch runs on host threads of its own, so the second must not wait for
 * the first.  The spinner gives up after a bound (about a second), so
 * launches run one after the other fail instead of hanging.  Both kernels
 * take device malloc from the context's heap (one heap, two launches):
 * the blocks must not overlap. */
static const char *pair_ptx = ET_HEADER
    ".extern .func (.param .b64 r) malloc (.param .b64 n);\n"
    ".visible .entry spin(.param .u64 FLAG, .param .u64 OUT)\n{\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<8>;\n  .reg .pred %p<4>;\n"
    "  ld.param.u64 %rd1, [FLAG];\n  ld.param.u64 %rd2, [OUT];\n"
    "  { .param .b64 n; .param .b64 r; st.param.b64 [n], 64;\n"
    "    call.uni (r), malloc, (n); ld.param.b64 %rd3, [r]; }\n"
    "  st.global.u64 [%rd2+8], %rd3;\n"
    "  mov.u32 %r1, 1;\n  st.volatile.global.u32 [%rd2+4], %r1;\n  mov.u32 %r2, 0;\n"
    "L:\n  ld.volatile.global.u32 %r3, [%rd1];\n  setp.ne.u32 %p1, %r3, 0;\n  @%p1 bra FOUND;\n"
    "  add.u32 %r2, %r2, 1;\n  setp.lt.u32 %p2, %r2, 10000000;\n  @%p2 bra L;\n"
    "  mov.u32 %r4, 2;\n  st.global.u32 [%rd2], %r4;\n  ret;\n"
    "FOUND:\n  mov.u32 %r4, 1;\n  st.global.u32 [%rd2], %r4;\n  ret;\n}\n"
    ".visible .entry setter(.param .u64 FLAG, .param .u64 OUT)\n{\n"
    "  .reg .b32 %r<2>;\n  .reg .b64 %rd<4>;\n"
    "  ld.param.u64 %rd1, [FLAG];\n  ld.param.u64 %rd2, [OUT];\n"
    "  { .param .b64 n; .param .b64 r; st.param.b64 [n], 64;\n"
    "    call.uni (r), malloc, (n); ld.param.b64 %rd3, [r]; }\n"
    "  st.global.u64 [%rd2+16], %rd3;\n"
    "  mov.u32 %r1, 1;\n  st.volatile.global.u32 [%rd1], %r1;\n  ret;\n}\n";

typedef struct pair_arg {
  et *t;
  uint64_t flag, out;
  emu_status st;
} pair_arg;

static void *pair_spinner(void *p) {
  pair_arg *a = p;
  a->st = et_launch(a->t, "spin", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, 2, a->flag, a->out);
  return NULL;
}

START_TEST(launch_while_another_spins) {
  emu_options o = {.threads = 1};
  et *t = et_load_opts(pair_ptx, &o);
  pair_arg a = {.t = t, .flag = et_alloc(t, 4, NULL), .out = et_alloc(t, 24, NULL)};
  pthread_t th;
  ck_assert_int_eq(pthread_create(&th, NULL, pair_spinner, &a), 0);
  /* device memory is host memory: wait until the spinner has started */
  volatile uint32_t *started = (volatile uint32_t *)(uintptr_t)(a.out + 4);
  for (int i = 0; i < 10000 && !*started; i++) usleep(1000);
  ck_assert_msg(*started, "the spinner did not start");
  et_ok(t, et_launch(t, "setter", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, 2, a.flag, a.out));
  pthread_join(th, NULL);
  et_ok(t, a.st);
  uint64_t r[3];
  et_get(t, r, a.out, sizeof r);
  ck_assert_msg((uint32_t)r[0] == 1, "the spinner %s",
                (uint32_t)r[0] == 2 ? "gave up: the second launch waited for it" : "did not finish");
  /* the two mallocs: distinct 64-byte blocks of the heap */
  ck_assert(r[1] != 0 && r[2] != 0);
  ck_assert(r[1] + 64 <= r[2] || r[2] + 64 <= r[1]);
  et_free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("emu_concurrent");
  TCase *tc = tcase_create("concurrent");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, launch_while_another_spins);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
