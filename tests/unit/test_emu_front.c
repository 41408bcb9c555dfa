/* tests/unit/test_emu_front.c: PTX front-end forms whose meaning only a
 * run shows: nested scopes (a block's register hides the function's, also
 * an element of a %r<N> range; a block's label is the one its branches
 * take), register names without '%', register + constant operands.  Each
 * kernel is accepted by ptxas 13 (checked by hand when written); expected
 * values are worked out by hand in the comments. */
#include "emu_test.h"

/* Runs kernel k(OUT) on one block of bs threads (one thread's results
 * matter) and returns the first n words of OUT. */
static void run1(const char *ptx, unsigned n, uint32_t *out) {
  for (unsigned wave = 32; wave <= 64; wave += 32) {
    emu_options o = {.threads = 1, .wave_size = wave};
    et *t = et_load_opts(ptx, &o);
    uint64_t d = et_alloc(t, n * 4, NULL);
    et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, 1, d));
    et_get(t, out, d, n * 4);
    et_free(t);
  }
}

#define CHECK_WORDS(out, want, n)                                                            \
  do {                                                                                       \
    for (unsigned i_ = 0; i_ < (n); i_++)                                                    \
      ck_assert_msg((out)[i_] == (want)[i_], "word %u: got %u (0x%x), want %u", i_, (out)[i_], \
                    (out)[i_], (want)[i_]);                                                  \
  } while (0)

/* ---- nested scopes ------------------------------------------------------------ */
static const char *scopes_ptx = ET_HEADER
    ".visible .entry k(.param .u64 OUT)\n{\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p<2>;\n"
    "  ld.param.u64 %rd1, [OUT];\n"
    "  mov.u32 %r1, 7;\n"
    "  {\n"
    "    .reg .b32 %r1;\n"              /* hides element 1 of %r<8> */
    "    mov.u32 %r1, 99;\n"
    "    st.global.u32 [%rd1+4], %r1;\n" /* [1] = 99 */
    "    mov.u32 %r2, 5;\n"             /* the function's %r2 */
    "    {\n"
    "      .reg .b32 %r<3>;\n"          /* hides the block's %r1 and the function's %r2 */
    "      mov.u32 %r1, 11;\n"
    "      mov.u32 %r2, 12;\n"
    "      add.u32 %r0, %r1, %r2;\n"
    "      st.global.u32 [%rd1+8], %r0;\n" /* [2] = 23 */
    "    }\n"
    "    st.global.u32 [%rd1+12], %r1;\n"  /* [3] = 99: the inner range is gone */
    "  }\n"
    "  st.global.u32 [%rd1], %r1;\n"       /* [0] = 7: untouched by the block */
    "  st.global.u32 [%rd1+16], %r2;\n"    /* [4] = 5 */
    "  ret;\n}\n";

static const char *scope_labels_ptx = ET_HEADER
    ".visible .entry k(.param .u64 OUT)\n{\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p<2>;\n"
    "  ld.param.u64 %rd1, [OUT];\n"
    /* A block's own label wins over the function's of the same name, also
     * when the branch comes before it: %r3 = 1, the branch skips the +1000
     * (branching to the loop's L1 would give 1003). */
    "  mov.u32 %r3, 0;\n"
    "L1:\n"
    "  add.u32 %r3, %r3, 1;\n"
    "  setp.lt.u32 %p1, %r3, 3;\n"
    "  {\n"
    "    @%p1 bra L1;\n"
    "    add.u32 %r3, %r3, 1000;\n"
    "L1:\n"
    "  }\n"
    "  st.global.u32 [%rd1], %r3;\n"        /* [0] = 1 */
    /* a label the block does not define is the function's: a loop to 3 */
    "  mov.u32 %r4, 0;\n"
    "L2:\n"
    "  add.u32 %r4, %r4, 1;\n"
    "  setp.lt.u32 %p1, %r4, 3;\n"
    "  {\n"
    "    @%p1 bra L2;\n"
    "  }\n"
    "  st.global.u32 [%rd1+4], %r4;\n"      /* [1] = 3 */
    /* ... also one the function defines after the block */
    "  mov.u32 %r5, 1;\n"
    "  {\n"
    "    bra L3;\n"
    "  }\n"
    "  mov.u32 %r5, 2;\n"
    "L3:\n"
    "  st.global.u32 [%rd1+8], %r5;\n"      /* [2] = 1 */
    /* sibling blocks: their own label and .local variable of one name */
    "  {\n"
    "    .local .b32 x;\n"
    "L4:\n"
    "    st.local.u32 [x], 40;\n"
    "    ld.local.u32 %r6, [x];\n"
    "  }\n"
    "  {\n"
    "    .local .b32 x;\n"
    "L4:\n"
    "    st.local.u32 [x], 41;\n"
    "    ld.local.u32 %r7, [x];\n"
    "  }\n"
    "  st.global.u32 [%rd1+12], %r6;\n"     /* [3] = 40 */
    "  st.global.u32 [%rd1+16], %r7;\n"     /* [4] = 41 */
    "  ret;\n}\n";

START_TEST(nested_scope_registers) {
  static const uint32_t want[5] = {7, 99, 23, 99, 5};
  uint32_t out[5];
  run1(scopes_ptx, 5, out);
  CHECK_WORDS(out, want, 5);
}
END_TEST

START_TEST(nested_scope_labels_and_variables) {
  static const uint32_t want[5] = {1, 3, 1, 40, 41};
  uint32_t out[5];
  run1(scope_labels_ptx, 5, out);
  CHECK_WORDS(out, want, 5);
}
END_TEST

/* ---- names without '%', register + constant -------------------------------------- */
static const char *names_ptx = ET_HEADER
    ".visible .entry k(.param .u64 OUT)\n{\n"
    "  .local .align 8 .b8 local_x[8];\n"
    "  .reg .b64 out, temp;\n"
    "  .reg .b32 a<2>;\n"
    "  .reg .b16 in16_<2>;\n"
    "  .reg .pred q;\n"
    "  ld.param.u64 out, [OUT];\n"
    "  mov.u32 a0, 40;\n"
    "  add.u32 a1, a0, 2;\n"
    "  st.global.u32 [out], a1;\n"                  /* [0] = 42 */
    "  mov.u16 in16_0, 7;\n"
    "  mov.u16 in16_1, 9;\n"
    "  mul.lo.u16 in16_0, in16_0, in16_1;\n"
    "  cvt.u32.u16 a0, in16_0;\n"
    "  st.global.u32 [out+4], a0;\n"                /* [1] = 63 */
    "  mov.u64 temp, 12;\n"
    "  st.u64 [local_x], temp + 1;\n"                /* 13 */
    "  ld.u64 temp, [local_x+0];\n"
    "  cvt.u32.u64 a0, temp;\n"
    "  st.global.u32 [out+8], a0;\n"                /* [2] = 13 */
    "  mov.u32 a1, 0xfffffffe;\n"
    "  add.u32 a0, a1 + 3, 10;\n"                   /* wraps at 32 bits: 1 + 10 */
    "  st.global.u32 [out+12], a0;\n"               /* [3] = 11 */
    "  setp.eq.u32 q, a0 + -11, 0;\n"
    "  selp.u32 a1, 5, 6, q;\n"
    "  st.global.u32 [out+16], a1;\n"               /* [4] = 5 */
    "  ret;\n}\n";

START_TEST(names_without_percent_and_reg_plus_constant) {
  static const uint32_t want[5] = {42, 63, 13, 11, 5};
  uint32_t out[5];
  run1(names_ptx, 5, out);
  CHECK_WORDS(out, want, 5);
}
END_TEST

/* ---- several .reg results, a function's .global, vector mov --------------------- */
static const char *calls_ptx = ET_HEADER
    ".func (.reg .b32 a, .reg .b32 b, .reg .b64 c) three(.reg .b32 x)\n{\n"
    "  add.u32 a, x, 1;\n  add.u32 b, x, 2;\n  cvt.u64.u32 c, x;\n  add.u64 c, c, 0x100000003;\n  ret;\n}\n"
    ".visible .entry k(.param .u64 OUT)\n{\n"
    "  .global .align 4 .b32 gv;\n"               /* one per program, like a C static */
    "  .reg .b32 %r<12>;\n  .reg .b64 %rd<4>;\n  .reg .b16 %h<8>;\n"
    "  ld.param.u64 %rd1, [OUT];\n"
    "  mov.u32 %r1, 10;\n"
    "  call (%r2, %r3, %rd2), three, (%r1);\n"
    "  st.global.u32 [%rd1], %r2;\n"              /* [0] = 11 */
    "  st.global.u32 [%rd1+4], %r3;\n"            /* [1] = 12 */
    "  st.global.u64 [%rd1+8], %rd2;\n"           /* [2], [3] = 0x100000003 + 10 */
    "  ld.global.u32 %r4, [gv];\n"                /* 0: zero-initialised */
    "  add.u32 %r4, %r4, 20;\n"
    "  st.global.u32 [gv], %r4;\n"
    "  ld.global.u32 %r5, [gv];\n"
    "  st.global.u32 [%rd1+16], %r5;\n"           /* [4] = 20 */
    "  mov.u16 %h0, 1;\n  mov.u16 %h1, 2;\n  mov.u16 %h2, 3;\n  mov.u16 %h3, 4;\n"
    "  mov.v4.u16 {%h4, %h5, %h6, %h7}, {%h0, %h1, %h2, %h3};\n"  /* h4..h7 = 1 2 3 4 */
    "  mov.v4.u16 {%h0, %h1, %h2, %h3}, {%h1, %h2, %h3, %h0};\n"  /* rotates: 2 3 4 1 */
    "  mov.v2.u32 {%r6, %r7}, {%r2, 77};\n"                       /* 11, 77 */
    "  mov.v2.u32 {%r6, %r7}, {%r7, %r6};\n"                      /* swaps: 77, 11 */
    "  st.global.u32 [%rd1+20], %r6;\n"           /* [5] = 77 */
    "  st.global.v4.u16 [%rd1+24], {%h0, %h1, %h2, %h3};\n"       /* [6] = 0x00030002, [7] = 0x00010004 */
    "  st.global.v4.u16 [%rd1+32], {%h4, %h5, %h6, %h7};\n"       /* [8] = 0x00020001, [9] = 0x00040003 */
    "  st.global.u32 [%rd1+40], %r7;\n"           /* [10] = 11 */
    "  ret;\n}\n";

START_TEST(several_results_global_in_function_vector_mov) {
  static const uint32_t want[11] = {11, 12, 13, 1, 20, 77, 0x00030002, 0x00010004, 0x00020001, 0x00040003, 11};
  uint32_t out[11];
  run1(calls_ptx, 11, out);
  CHECK_WORDS(out, want, 11);
}
END_TEST

/* ---- vote.sync when members of the mask leave ------------------------------------ */
/* PTX ISA 9.1, vote.sync: the executing thread waits "until all non-exited
 * threads corresponding to membermask have executed vote.sync".  Lanes 16..31
 * of each warp skip the vote (exited first, or branching past it and
 * exiting after): lanes 0..15 get the ballot of their own predicates,
 * lane & 1, i.e. 0xaaaa; the others store 77.  (Before: the branching case
 * was reported as a deadlock.) */
static const char *vote_leave_ptx = ET_HEADER
    ".visible .entry k(.param .u64 OUT, .param .u32 MODE)\n{\n"
    "  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p<4>;\n"
    "  ld.param.u64 %rd1, [OUT];\n  ld.param.u32 %r6, [MODE];\n"
    "  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd2, %r1, 4;\n  add.u64 %rd3, %rd1, %rd2;\n"
    "  mov.u32 %r3, 77;\n  and.b32 %r5, %r1, 31;\n  setp.ge.u32 %p1, %r5, 16;\n"
    "  setp.ne.u32 %p3, %r6, 0;\n"
    "  @%p3 bra BRANCH;\n"
    "  @%p1 st.global.u32 [%rd3], %r3;\n"
    "  @%p1 exit;\n"
    "BRANCH:\n"
    "  @%p1 bra SKIP;\n"
    "  and.b32 %r2, %r1, 1;\n  setp.eq.u32 %p2, %r2, 1;\n"
    "  vote.sync.ballot.b32 %r3, %p2, 0xffffffff;\n"
    "SKIP:\n"
    "  st.global.u32 [%rd3], %r3;\n"
    "  ret;\n}\n";

START_TEST(vote_sync_members_leave) {
  for (unsigned wave = 32; wave <= 64; wave += 32)
    for (unsigned mode = 0; mode < 2; mode++) {
      emu_options o = {.threads = 1, .wave_size = wave};
      et *t = et_load_opts(vote_leave_ptx, &o);
      uint64_t d = et_alloc(t, 64 * 4, NULL);
      et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){64, 1, 1}, 0, 2, d, (uint64_t)mode));
      uint32_t out[64];
      et_get(t, out, d, sizeof out);
      for (unsigned l = 0; l < 64; l++)
        ck_assert_msg(out[l] == ((l & 31) < 16 ? 0xaaaau : 77u), "wave %u mode %u lane %u: got 0x%x", wave, mode, l,
                      out[l]);
      et_free(t);
    }
}
END_TEST

/* ---- sizes past 32 bits ---------------------------------------------------------- */
/* A 4 GiB .shared array and a 64-byte one once laid out as 0 + 64 bytes,
 * the second aliasing the first, and the kernel ran; a parameter array
 * past 4 GiB wrapped the same way; a .local array too.  Each is now a
 * launch error naming what does not fit. */
/* The codegen copy of this suite (tests/codegen/cg_wrap.c, linked with
 * --wrap=emu_module_load) compiles every module a test loads; these are
 * meant to be refused, by codegen too (tests/filecheck/codegen/
 * lds-wrap.ptx), so they load through the real loader where the link has
 * a wrapped one. */
emu_status __real_emu_module_load(emu_context *c, ir_module *m, emu_module **out) __attribute__((weak));

static void launch_fails(const char *ptx, const char *want, int nparams) {
  et *t = calloc(1, sizeof *t);
  pw_diag dg;
  pw_diag_init(&dg, NULL);
  t->ir = ptx_parse("test.ptx", ptx, strlen(ptx), &dg, NULL);
  ck_assert_msg(t->ir != NULL, "does not parse: %s", pw_diag_text(&dg));
  pw_diag_fini(&dg);
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &t->ctx), EMU_OK);
  emu_status ls = __real_emu_module_load ? __real_emu_module_load(t->ctx, t->ir, &t->mod)
                                         : emu_module_load(t->ctx, t->ir, &t->mod);
  ck_assert_msg(ls == EMU_OK, "module load: %s", emu_error_message(t->ctx));
  uint64_t d = et_alloc(t, 64, NULL);
  emu_status st = et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, nparams, d);
  ck_assert_msg(st != EMU_OK, "the launch succeeded");
  const char *msg = emu_error_message(t->ctx);
  ck_assert_msg(strstr(msg, want) != NULL, "message '%s' lacks '%s'", msg, want);
  et_free(t);
}

START_TEST(sizes_past_32_bits) {
  launch_fails(ET_HEADER ".visible .entry k(.param .u64 OUT)\n{\n"
               "  .shared .align 4 .b8 big[4294967296];\n  .shared .align 4 .b8 small[64];\n"
               "  .reg .b32 %r<3>;\n  .reg .b64 %rd<3>;\n  ld.param.u64 %rd1, [OUT];\n  mov.u32 %r1, 7;\n"
               "  st.shared.u32 [small], %r1;\n  st.shared.u32 [big], %r1;\n  ld.shared.u32 %r2, [small];\n"
               "  st.global.u32 [%rd1], %r2;\n  ret;\n}\n",
               "'big' ends at byte 4294967296", 1);
  /* what fits in 32 bits but not in a block: named too */
  launch_fails(ET_HEADER ".visible .entry k(.param .u64 OUT)\n{\n"
               "  .shared .align 4 .b8 a[1048000];\n  .shared .align 4 .b8 b[4096];\n"
               "  .reg .b32 %r<3>;\n  mov.u32 %r1, a;\n  mov.u32 %r2, b;\n  st.shared.u32 [%r1], %r2;\n"
               "  st.shared.u32 [%r2], %r1;\n  ret;\n}\n",
               "'b' ends at byte 1052096", 1);
  launch_fails(ET_HEADER ".visible .entry k(.param .u64 OUT, .param .align 4 .b8 big[4294967300])\n{\n"
               "  ret;\n}\n",
               "'big' ends at byte 4294967308", 2);
  launch_fails(ET_HEADER ".visible .entry k(.param .u64 OUT)\n{\n"
               "  .local .align 8 .b8 x[4294967296];\n  .reg .b64 %rd<3>;\n  mov.u64 %rd1, x;\n"
               "  st.local.u32 [%rd1], 1;\n  st.local.u32 [%rd1+4294967292], 2;\n  ret;\n}\n",
               "more than 2147483647 bytes of local memory", 1);
}
END_TEST

Suite *emu_front_suite(void) {
  Suite *s = suite_create("emu_front");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, nested_scope_registers);
  tcase_add_test(tc, nested_scope_labels_and_variables);
  tcase_add_test(tc, names_without_percent_and_reg_plus_constant);
  tcase_add_test(tc, several_results_global_in_function_vector_mov);
  tcase_add_test(tc, vote_sync_members_leave);
  tcase_add_test(tc, sizes_past_32_bits);
  suite_add_tcase(s, tc);
  return s;
}

int main(void) {
  SRunner *sr = srunner_create(emu_front_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
