/* tests/unit/test_codegen.c: codegen's API contract: the target table,
 * deterministic output, compiles on several threads at once (each with its
 * own LLVMContext; lld serialised) giving the same bytes as one at a time,
 * and errors reported, not aborted. */
#include <check.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ptx/ptx_parse.h"

/* cg_compile takes lowered IR, or IR without the ops lower/ translates:
 * the element index is a parameter here (%tid.x would need lower/). */
static const char kernel_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".visible .entry k(.param .u64 p, .param .u32 n, .param .u32 t)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b32 %r<5>;\n  .reg .f32 %f<3>;\n  .reg .b64 %rd<5>;\n"
    "  .shared .align 4 .b8 tile[512];\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n"
    "  ld.param.u32 %r2, [t];\n  setp.ge.u32 %p1, %r2, %r1;\n  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.u32 %rd3, %r2, 4;\n  add.s64 %rd4, %rd2, %rd3;\n"
    "  ld.global.f32 %f1, [%rd4];\n  mul.rn.f32 %f2, %f1, %f1;\n"
    "  st.shared.f32 [tile], %f2;\n  bar.sync 0;\n  ld.shared.f32 %f2, [tile];\n"
    "  st.global.f32 [%rd4], %f2;\n"
    "DONE:\n  ret;\n}\n";

static ir_module *parse(void) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("k.ptx", kernel_ptx, strlen(kernel_ptx), &d, NULL);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  return m;
}

START_TEST(target_table) {
  unsigned n;
  const ir_target *t = cg_targets(&n);
  ck_assert_uint_ge(n, 8);
  for (unsigned i = 0; i < n; i++) {
    /* wave64 exactly on gfx9 (CDNA), wave32 on gfx10+ (RDNA) */
    unsigned want = strncmp(t[i].name, "gfx9", 4) ? 32 : 64;
    ck_assert_uint_eq(t[i].wave_size, want);
    ck_assert_ptr_nonnull(strstr(t[i].llvm_features, want == 64 ? "+wavefrontsize64" : "+wavefrontsize32"));
    ck_assert_ptr_eq(cg_target_find(t[i].name), &t[i]);
  }
  ck_assert_uint_eq(cg_target_find("gfx950")->lds_bytes, 160 * 1024);
  ck_assert_uint_eq(cg_target_find("gfx942")->lds_bytes, 64 * 1024);
  ck_assert_ptr_null(cg_target_find("sm_90"));
  /* the rows lower/ reads (one table): lowering-only ones are not codegen's */
  ck_assert_ptr_eq(cg_target_find("gfx1100"), ir_target_find("gfx1100"));
  ck_assert_ptr_nonnull(ir_target_find("gfx908"));
  ck_assert_ptr_null(cg_target_find("gfx908"));
  ck_assert_ptr_null(cg_target_find("wave64"));
}
END_TEST

typedef struct job {
  const ir_module *m;
  const char *target;
  cg_output out;
  bool ok;
} job;

static void *run_job(void *p) {
  job *j = p;
  pw_diag d;
  pw_diag_init(&d, NULL);
  cg_options opt = {.target = cg_target_find(j->target)};
  pw_src src = {"k.ptx", kernel_ptx, strlen(kernel_ptx)};
  j->ok = cg_compile(j->m, &src, &opt, CG_EMIT_HSACO, &j->out, &d);
  pw_diag_fini(&d);
  return NULL;
}

START_TEST(parallel_equals_sequential) {
  ir_module *m = parse();
  static const char *const targets[] = {"gfx90a", "gfx942", "gfx1100", "gfx1201"};
  enum { NT = 4, REP = 3 };
  job seq[NT], par[NT * REP];
  for (int t = 0; t < NT; t++) {
    seq[t] = (job){.m = m, .target = targets[t]};
    run_job(&seq[t]);
    ck_assert(seq[t].ok);
    ck_assert_uint_eq(seq[t].out.nkernels, 1);
    ck_assert_mem_eq(seq[t].out.data, "\177ELF", 4);
  }
  pthread_t th[NT * REP];
  for (int i = 0; i < NT * REP; i++) {
    par[i] = (job){.m = m, .target = targets[i % NT]};
    ck_assert_int_eq(pthread_create(&th[i], NULL, run_job, &par[i]), 0);
  }
  for (int i = 0; i < NT * REP; i++) {
    pthread_join(th[i], NULL);
    const job *s = &seq[i % NT];
    ck_assert(par[i].ok);
    ck_assert_uint_eq(par[i].out.size, s->out.size);
    ck_assert(!memcmp(par[i].out.data, s->out.data, s->out.size));
    free(par[i].out.data);
  }
  for (int t = 0; t < NT; t++) free(seq[t].out.data);
  ir_module_destroy(m);
}
END_TEST

/* A thread reuses its target machines (cg_compile.c keeps up to four per
 * thread): compiling other modules and targets in between, evicting and
 * recreating, must not change a module's bytes. */
static const char other_ptx[] =
    ".version 8.0\n.target sm_80\n.address_size 64\n"
    ".func (.reg .f64 r) sq(.reg .f64 x)\n{\n  mul.rn.f64 r, x, x;\n  ret;\n}\n"
    ".visible .entry o(.param .u64 p)\n{\n  .reg .b64 %rd<3>;\n  .reg .f64 %fd<3>;\n"
    "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n  ld.global.f64 %fd1, [%rd2];\n"
    "  call (%fd2), sq, (%fd1);\n  st.global.f64 [%rd2+8], %fd2;\n  ret;\n}\n";

static void *first_compile(void *p) {
  run_job(p);   /* a fresh thread: a target machine of its own, new */
  return NULL;
}

START_TEST(reused_target_machine) {
  ir_module *m = parse();
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *o = ptx_parse("o.ptx", other_ptx, strlen(other_ptx), &d, NULL);
  ck_assert_msg(o != NULL, "%s", pw_diag_text(&d));
  static const char *const targets[] = {"gfx942", "gfx90a", "gfx950", "gfx1100", "gfx1201", "gfx1030"};
  enum { NT = 6 };
  /* LLVM installs its signal handlers, with a malloc'd alternate signal
   * stack for the calling thread, at the first output file lld writes; a
   * thread exiting with that stack trips ASan's thread teardown (it unmaps
   * the alternate stack).  The first compile of the process stays on this
   * thread, as in an application's first module load. */
  job warm = {.m = m, .target = "gfx942"};
  run_job(&warm);
  ck_assert(warm.ok);
  free(warm.out.data);
  for (int round = 0; round < 2; round++) {
    for (int t = 0; t < NT; t++) {
      job fresh = {.m = m, .target = targets[t]}, again = {.m = m, .target = targets[t]};
      pthread_t th;
      ck_assert_int_eq(pthread_create(&th, NULL, first_compile, &fresh), 0);
      pthread_join(th, NULL);
      /* this thread: the other module first, then the kernel */
      job other = {.m = o, .target = targets[(t + 1) % NT]};
      run_job(&other);
      ck_assert(other.ok);
      run_job(&again);
      ck_assert(fresh.ok && again.ok);
      ck_assert_uint_eq(again.out.size, fresh.out.size);
      ck_assert_msg(!memcmp(again.out.data, fresh.out.data, fresh.out.size), "%s: bytes differ on reuse",
                    targets[t]);
      free(fresh.out.data);
      free(again.out.data);
      free(other.out.data);
    }
  }
  pw_diag_fini(&d);
  ir_module_destroy(o);
  ir_module_destroy(m);
}
END_TEST

START_TEST(bad_options_are_errors) {
  ir_module *m = parse();
  pw_diag d;
  pw_diag_init(&d, NULL);
  cg_output out;
  cg_options opt = {.target = cg_target_find("gfx942"), .cov = 3};
  ck_assert(!cg_compile(m, NULL, &opt, CG_EMIT_OBJ, &out, &d));
  ck_assert_ptr_null(out.data);
  ck_assert_ptr_nonnull(strstr(pw_diag_text(&d), "code object version 3"));
  opt.cov = 0;
  opt.pipeline = "no-such-pass";
  ck_assert(!cg_compile(m, NULL, &opt, CG_EMIT_OBJ, &out, &d));
  ck_assert_ptr_nonnull(strstr(pw_diag_text(&d), "pass pipeline"));
  pw_diag_fini(&d);
  ir_module_destroy(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("codegen");
  TCase *tc = tcase_create("codegen");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, target_table);
  tcase_add_test(tc, parallel_equals_sequential);
  tcase_add_test(tc, reused_target_machine);
  tcase_add_test(tc, bad_options_are_errors);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
