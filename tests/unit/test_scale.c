/* tests/unit/test_scale.c: generated inputs past the sizes that broke
 * ptxwave (issue 20): a label with 66,000 predecessors (a phi past the IR's
 * 65,534 operands aborted the process), 40,000 .pragma lines (memory was
 * quadratic), 60,000 distinct constants in one kernel (the emulator's load
 * was quadratic).  Each must parse, load and give the values worked out
 * here; the cost is benchmarks/'s business.  Not in the lowered and
 * compiled copies of the emulator suites: LLVM on 66,000 blocks is minutes. */
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "codegen/codegen.h"
#include "emu_test.h"
#include "lower/lower.h"

typedef struct sbuf { char *s; size_t n, cap; } sbuf;
static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k >= 0 && b->n + (size_t)k < b->cap) {
      b->n += (size_t)k;
      return;
    }
    b->cap = b->cap ? b->cap * 2 : 1 << 16;
    b->s = realloc(b->s, b->cap);
    ck_assert_ptr_nonnull(b->s);
  }
}

static uint32_t run_n(const char *ptx, uint32_t n) {
  emu_options o = {.threads = 1};
  et *t = et_load_opts(ptx, &o);
  uint64_t d = et_alloc(t, 8, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, 2, (uint64_t)n, d));
  uint32_t r;
  et_get(t, &r, d, 4);
  et_free(t);
  return r;
}

/* brx.idx to N labels, each adding its index to 5 and branching to END: END
 * has N predecessors and a phi of N operands; n picks the label. */
START_TEST(label_with_66000_predecessors) {
  enum { N = 66000 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n  mov.u32 %%r2, 5;\nT: .branchtargets ");
  for (int i = 0; i < N; i++) sb_printf(&b, "%sL%d", i ? ", " : "", i);
  sb_printf(&b, ";\n  brx.idx %%r1, T;\n");
  for (int i = 0; i < N; i++) sb_printf(&b, "L%d:\n  add.u32 %%r2, %%r2, %d;\n  bra END;\n", i, i);
  sb_printf(&b, "END:\n  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n");
  ck_assert_uint_eq(run_n(b.s, 0), 5);
  ck_assert_uint_eq(run_n(b.s, 40000), 40005);
  ck_assert_uint_eq(run_n(b.s, N - 1), N + 4);
  free(b.s);
}
END_TEST

/* One launch of kernel k(n, out) of an already loaded module. */
static uint32_t run_loaded(emu_context *ctx, emu_module *em, uint32_t n) {
  uint64_t d;
  ck_assert_int_eq(emu_malloc(ctx, 8, &d), EMU_OK);
  et t = {.ctx = ctx, .mod = em};
  et_ok(&t, et_launch(&t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, 2, (uint64_t)n, d));
  uint32_t r;
  ck_assert_int_eq(emu_memcpy_dtoh(ctx, &r, d, 4), EMU_OK);
  emu_free(ctx, d);
  return r;
}

/* A brx.idx whose table of 65,540 entries goes to END directly but for
 * entry 1,000 (A: 7) and the last (B: 9): END has 65,540 predecessor edges
 * and a phi of as many operands (past the IR's 16-bit operand count,
 * which aborted the process) with three different values.  Through the
 * emulator unlowered and lowered for gfx942 (wave 64), and through
 * ptxwave compile's path (cg_compile_ptx, a gfx942 code object); this
 * shape costs LLVM seconds, where LLVM's time on n distinct labels grows
 * faster than n (docs/codegen.md "Large inputs").  Values from the table
 * written here. */
START_TEST(table_of_65540_edges_through_emulator_and_compile) {
  enum { N = 65540 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n  mov.u32 %%r2, 5;\nT: .branchtargets ");
  for (int i = 0; i < N; i++) sb_printf(&b, "%s%s", i ? ", " : "", i == 1000 ? "A" : i == N - 1 ? "B" : "END");
  sb_printf(&b, ";\n  brx.idx %%r1, T;\nA:\n  mov.u32 %%r2, 7;\n  bra END;\nB:\n  mov.u32 %%r2, 9;\n  bra END;\n"
                "END:\n  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n");
  static const uint32_t ns[] = {0, 999, 1000, 1001, 40000, N - 2, N - 1};
  static const uint32_t want[] = {5, 5, 7, 5, 5, 5, 9};
  for (unsigned k = 0; k < 7; k++) ck_assert_uint_eq(run_n(b.s, ns[k]), want[k]);

  /* lowered for gfx942 */
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("edges.ptx", b.s, b.n, &d, NULL);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  ck_assert_msg(lower_module(m, ir_target_find("gfx942"), &(lower_pipeline_options){.diag = &d}), "%s",
                pw_diag_text(&d));
  emu_context *ctx;
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &ctx), EMU_OK);
  emu_module *em;
  ck_assert_msg(emu_module_load(ctx, m, &em) == EMU_OK, "%s", emu_error_message(ctx));
  for (unsigned k = 0; k < 7; k++) ck_assert_uint_eq(run_loaded(ctx, em, ns[k]), want[k]);
  emu_context_destroy(ctx);
  ir_module_destroy(m);

  /* compiled */
  cg_output out = {0};
  bool ok = cg_compile_ptx("edges.ptx", b.s, b.n, &(cg_options){.target = cg_target_find("gfx942"), .threads = 1},
                           CG_EMIT_HSACO, &out, &d);
  ck_assert_msg(ok, "%s", pw_diag_text(&d));
  ck_assert_uint_eq(out.nkernels, 1);
  ck_assert_uint_eq(out.ndropped, 0);
  free(out.data);
  pw_diag_fini(&d);
  free(b.s);
}
END_TEST

/* Out of host memory while the emulator loads a module is an error
 * (EMU_ERR_OUT_OF_MEMORY, CUDA_ERROR_OUT_OF_MEMORY through the runtime),
 * not an abort: in a child whose address space is capped just above what
 * it has, loading a kernel of 200,000 distinct constants (a constant pool
 * of about 50 MB) must fail with that status and leave the process alive.
 * It aborted before (emu_decode.c's grow()).  Not under sanitizers, whose
 * shadow memory an address-space cap breaks. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PW_NO_RLIMIT_TEST 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define PW_NO_RLIMIT_TEST 1
#endif
#endif

static long vm_size_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "VmSize:", 7)) v = strtol(line + 7, NULL, 10);
  if (f) fclose(f);
  return v;
}

START_TEST(emulator_load_out_of_memory_is_an_error) {
#ifdef PW_NO_RLIMIT_TEST
  return;
#else
  enum { N = 200000 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n");
  for (int i = 0; i < N; i++) sb_printf(&b, "  add.u32 %%r1, %%r1, %d;\n", 1000 + i);
  sb_printf(&b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("oom.ptx", b.s, b.n, &d, NULL);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  free(b.s);
  emu_context *ctx;
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &ctx), EMU_OK);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    long kb = vm_size_kb();
    if (kb <= 0) _exit(10);
    struct rlimit rl = {.rlim_cur = ((rlim_t)kb + 4096) * 1024, .rlim_max = ((rlim_t)kb + 4096) * 1024};
    if (setrlimit(RLIMIT_AS, &rl)) _exit(11);
    emu_module *em = NULL;
    emu_status st = emu_module_load(ctx, m, &em);
    _exit(st == EMU_ERR_OUT_OF_MEMORY ? 0 : st == EMU_OK ? 12 : 13);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ck_assert_msg(WEXITSTATUS(status) == 0, "the child exited %d (12: loaded, 13: another error)",
                WEXITSTATUS(status));
  emu_context_destroy(ctx);
  ir_module_destroy(m);
  pw_diag_fini(&d);
#endif
}
END_TEST

/* The same for the parser: out of memory in the module's arena while
 * parsing a large kernel is a diagnostic and a NULL module (it was
 * ir_alloc's PW_DIE, an abort). */
START_TEST(parse_out_of_memory_is_an_error) {
#ifdef PW_NO_RLIMIT_TEST
  return;
#else
  enum { N = 300000 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n");
  for (int i = 0; i < N; i++) sb_printf(&b, "  add.u32 %%r1, %%r1, %d;\n", 1000 + i);
  sb_printf(&b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    pw_diag d;
    pw_diag_init(&d, NULL);
    long kb = vm_size_kb();
    if (kb <= 0) _exit(10);
    struct rlimit rl = {.rlim_cur = ((rlim_t)kb + 8192) * 1024, .rlim_max = ((rlim_t)kb + 8192) * 1024};
    if (setrlimit(RLIMIT_AS, &rl)) _exit(11);
    ir_module *m = ptx_parse("oom.ptx", b.s, b.n, &d, NULL);
    if (m) _exit(12);
    _exit(strstr(pw_diag_text(&d), "oom.ptx: error: out of memory parsing") ? 0 : 13);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ck_assert_msg(WEXITSTATUS(status) == 0, "the child exited %d (12: parsed, 13: another message)",
                WEXITSTATUS(status));
  free(b.s);
#endif
}
END_TEST

/* 65,536 if/else diamonds in sequence (196,610 blocks): the emulator's
 * block order (Bourdoncle's WTO) recursed once per block and overflowed
 * the C stack (SIGSEGV; scale_bench domwide).  r starts at 0 and per
 * diamond i becomes r ^ 5 if n < i, else r + 3: worked out here in C. */
START_TEST(deep_cfg_of_65536_diamonds) {
  enum { N = 65536 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .pred %%p;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n"
                "  mov.u32 %%r2, 0;\n");
  for (int i = 0; i < N; i++)
    sb_printf(&b, "  setp.lt.u32 %%p, %%r1, %d;\n  @%%p bra A%d;\n  add.u32 %%r2, %%r2, 3;\n  bra J%d;\n"
                  "A%d:\n  xor.b32 %%r2, %%r2, 5;\nJ%d:\n", i, i, i, i, i);
  sb_printf(&b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r2;\n  ret;\n}\n");
  static const uint32_t ns[] = {5, 40001, N};
  for (unsigned k = 0; k < 3; k++) {
    uint32_t want = 0;
    for (uint32_t i = 0; i < N; i++) want = ns[k] < i ? want ^ 5u : want + 3u;
    ck_assert_uint_eq(run_n(b.s, ns[k]), want);
  }
  free(b.s);
}
END_TEST

/* And for lowering: out of memory while lower_module works on a large
 * parsed kernel fails it with a diagnostic (the module is then discarded),
 * not an abort. */
START_TEST(lower_out_of_memory_is_an_error) {
#ifdef PW_NO_RLIMIT_TEST
  return;
#else
  enum { N = 300000 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n");
  for (int i = 0; i < N; i++) sb_printf(&b, "  add.u32 %%r1, %%r1, %%r1;\n  shfl.sync.bfly.b32 %%r1, %%r1, 1, 31, -1;\n");
  sb_printf(&b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("oom.ptx", b.s, b.n, &d, NULL);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  free(b.s);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    long kb = vm_size_kb();
    if (kb <= 0) _exit(10);
    struct rlimit rl = {.rlim_cur = ((rlim_t)kb + 4096) * 1024, .rlim_max = ((rlim_t)kb + 4096) * 1024};
    if (setrlimit(RLIMIT_AS, &rl)) _exit(11);
    if (lower_module(m, ir_target_find("gfx942"), &(lower_pipeline_options){.diag = &d})) _exit(12);
    _exit(strstr(pw_diag_text(&d), "out of memory lowering the module for gfx942") ? 0 : 13);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status), "the child died of signal %d", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  ck_assert_msg(WEXITSTATUS(status) == 0, "the child exited %d (12: lowered, 13: another message)",
                WEXITSTATUS(status));
  ir_module_destroy(m);
  pw_diag_fini(&d);
#endif
}
END_TEST

START_TEST(many_pragmas) {
  enum { N = 40000 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n");
  for (int i = 0; i < N; i++) sb_printf(&b, "  .pragma \"p%d\";\n", i);
  sb_printf(&b, "  ret;\n}\n");
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("pragmas.ptx", b.s, b.n, &d, NULL);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  ck_assert_uint_eq(m->funcs->npragmas, N);
  ck_assert_str_eq(m->funcs->pragmas[0], "p0");
  ck_assert_str_eq(m->funcs->pragmas[N - 1], "p39999");
  ir_module_destroy(m);
  pw_diag_fini(&d);
  free(b.s);
}
END_TEST

/* N distinct constants: r = n + sum of (1000 + i) for i < N, mod 2^32 */
START_TEST(many_distinct_constants) {
  enum { N = 60000 };
  sbuf b = {0};
  sb_printf(&b, ET_HEADER ".visible .entry k(.param .u32 n, .param .u64 out)\n{\n"
                "  .reg .b32 %%r<3>;\n  .reg .b64 %%rd<2>;\n  ld.param.u32 %%r1, [n];\n");
  uint32_t want = 7;
  for (int i = 0; i < N; i++) {
    sb_printf(&b, "  add.u32 %%r1, %%r1, %d;\n", 1000 + i);
    want += 1000u + (uint32_t)i;
  }
  sb_printf(&b, "  ld.param.u64 %%rd1, [out];\n  st.global.u32 [%%rd1], %%r1;\n  ret;\n}\n");
  ck_assert_uint_eq(run_n(b.s, 7), want);
  free(b.s);
}
END_TEST

int main(void) {
  Suite *s = suite_create("scale");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, label_with_66000_predecessors);
  tcase_add_test(tc, table_of_65540_edges_through_emulator_and_compile);
  tcase_add_test(tc, deep_cfg_of_65536_diamonds);
  tcase_add_test(tc, many_pragmas);
  tcase_add_test(tc, emulator_load_out_of_memory_is_an_error);
  tcase_add_test(tc, parse_out_of_memory_is_an_error);
  tcase_add_test(tc, lower_out_of_memory_is_an_error);
  tcase_add_test(tc, many_distinct_constants);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
