/* tests/unit/test_multimem.c: multimem.ld_reduce / st / red on the
 * emulator after lower_multimem (lower/lower_multimem.c).  On one device a
 * multimem address names one copy, so the expected memory is computed by
 * hand as if each instruction were ld / st / red of that copy. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "emu/emu.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"

/* in (u32 words):  [0] 7   [1] 2.5f   [2] 0xfffffff6 (-10)   [4..7] bf16x2 bits
 * out (u32 words): [2] 5   [8] 1.0f   [9] 2.0f, the rest 0 */
static const char *ptx =
  ".version 8.1\n.target sm_90\n.address_size 64\n"
  ".visible .entry mm(.param .u64 pin, .param .u64 pout)\n{\n"
  "  .reg .b64 %rd<4>;\n  .reg .b32 %r<12>;\n  .reg .f32 %f<4>;\n  .reg .pred %p<3>;\n"
  "  ld.param.u64 %rd1, [pin];\n  ld.param.u64 %rd2, [pout];\n"
  "  multimem.ld_reduce.relaxed.sys.global.add.u32 %r1, [%rd1];\n"
  "  multimem.ld_reduce.acquire.sys.global.add.acc::f32.v4.bf16x2 {%r2, %r3, %r4, %r5}, [%rd1+16];\n"
  "  multimem.ld_reduce.acquire.gpu.global.max.f32 %f1, [%rd1+4];\n"
  "  multimem.st.relaxed.sys.global.u32 [%rd2], %r1;\n"
  "  multimem.st.release.sys.global.v4.f32 [%rd2+16], {%r2, %r3, %r4, %r5};\n"
  "  multimem.red.relaxed.sys.global.add.u32 [%rd2+8], %r1;\n"
  "  multimem.red.release.gpu.global.add.v2.f32 [%rd2+32], {%f1, %f1};\n"
  "  st.global.f32 [%rd2+4], %f1;\n"
  /* guards: %p1 is false (7 != 0) */
  "  setp.eq.u32 %p1, %r1, 0;\n"
  "  @%p1 multimem.st.relaxed.sys.global.u32 [%rd2+12], 99;\n"
  "  mov.u32 %r6, 1;\n"
  "  @!%p1 multimem.ld_reduce.weak.global.min.s32 %r6, [%rd1+8];\n"
  "  @%p1 multimem.ld_reduce.weak.global.min.s32 %r7, [%rd1+8];\n"
  "  st.global.u32 [%rd2+48], %r6;\n"
  "  ret;\n}\n";

static ir_module *parse_lowered(void) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse("mm.ptx", ptx, strlen(ptx), &d, NULL);
  if (!m) fprintf(stderr, "%s\n", pw_diag_text(&d));
  ck_assert_ptr_nonnull(m);
  ck_assert(lower_multimem(m, &(lower_multimem_options){.diag = &d}));
  ck_assert_msg(ir_verify(m, NULL, &d), "%s", pw_diag_text(&d));
  pw_diag_fini(&d);
  return m;
}

START_TEST(one_copy) {
  ir_module *m = parse_lowered();
  emu_context *ctx;
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &ctx), EMU_OK);
  emu_module *em;
  emu_status st = emu_module_load(ctx, m, &em);
  ck_assert_msg(st == EMU_OK, "load: %s", emu_error_message(ctx));
  uint32_t in[8] = {7, 0x40200000u /* 2.5f */, 0xfffffff6u, 0, 0x3f803f80u, 0x40004000u, 0xbf80c000u, 0x12345678u};
  uint32_t out[16] = {0};
  out[2] = 5;
  out[8] = 0x3f800000u;  /* 1.0f */
  out[9] = 0x40000000u;  /* 2.0f */
  uint64_t din, dout;
  ck_assert_int_eq(emu_malloc(ctx, sizeof in, &din), EMU_OK);
  ck_assert_int_eq(emu_malloc(ctx, sizeof out, &dout), EMU_OK);
  ck_assert_int_eq(emu_memcpy_htod(ctx, din, in, sizeof in), EMU_OK);
  ck_assert_int_eq(emu_memcpy_htod(ctx, dout, out, sizeof out), EMU_OK);
  void *params[] = {&din, &dout};
  st = emu_launch(em, "mm", (emu_dim3){1, 1, 1}, (emu_dim3){1, 1, 1}, 0, params);
  ck_assert_msg(st == EMU_OK, "launch: %s", emu_error_message(ctx));
  ck_assert_int_eq(emu_memcpy_dtoh(ctx, out, dout, sizeof out), EMU_OK);
  ck_assert_uint_eq(out[0], 7);                 /* st of ld_reduce.add over one copy */
  ck_assert_uint_eq(out[1], 0x40200000u);       /* ld_reduce.max.f32 = 2.5 */
  ck_assert_uint_eq(out[2], 12);                /* red.add: 5 + 7 */
  ck_assert_uint_eq(out[3], 0);                 /* guarded-off st */
  for (int k = 0; k < 4; k++) ck_assert_uint_eq(out[4 + k], in[4 + k]);  /* v4 bits unchanged */
  ck_assert_uint_eq(out[8], 0x40600000u);       /* 1.0 + 2.5 = 3.5 */
  ck_assert_uint_eq(out[9], 0x40900000u);       /* 2.0 + 2.5 = 4.5 */
  ck_assert_uint_eq(out[12], 0xfffffff6u);      /* guarded-on ld_reduce.min.s32 = -10 */
  emu_context_destroy(ctx);
  ir_module_destroy(m);
}
END_TEST

/* Nothing named multimem is left for the emulator or codegen. */
START_TEST(none_left) {
  ir_module *m = parse_lowered();
  unsigned n = 0;
  ir_foreach_func(m, f) ir_foreach_block(f, b) ir_foreach_instr(b, i)
    n += i->op == ir_op_multimem_ld_reduce || i->op == ir_op_multimem_st || i->op == ir_op_multimem_red;
  ck_assert_uint_eq(n, 0);
  ir_module_destroy(m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("multimem");
  TCase *tc = tcase_create("multimem");
  tcase_add_test(tc, one_copy);
  tcase_add_test(tc, none_left);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
