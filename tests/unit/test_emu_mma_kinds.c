/* tests/unit/test_emu_mma_kinds.c: the emulator's sm_120a mma kinds
 * (emu/emu_matrix.c; PTX ISA 9.7.14.5.14, block scaling 9.7.14.3) on
 * fragments whose every element is the same value, so D is a formula
 * checked by hand below, and on scale words that differ per lane and per
 * byte, so that a wrong lane or byte shows.  The encodings are written out
 * here from the formats' definitions (PTX ISA 5.2.5.x), not taken from the
 * emulator:
 *   e2m1 (bias 1) 1.0 = 0b0010, 1.5 = 0b0011, 6.0 = 0b0111, in bits 5..2 of
 *   its byte with .kind::f8f6f4 (0x08, 0x0c, 0x1c); e3m2 (bias 3)
 *   -0.25 = 1 001 00 = 0x24; e2m3 (bias 1) 0.125 = 0 00 001 (a subnormal);
 *   e4m3 2.0 = 0x40; ue8m0 2^(e - 127).
 * D's fragment (c_i at row g + 8 (i >> 1), column 2t + (i & 1)) is read
 * back through the ISA's formula, written out here too.
 */
#include <math.h>

#include "emu_test.h"

#define HDR ".version 8.7\n.target sm_120a\n.address_size 64\n"

/* One warp: A registers all a, B registers all b, C all c (f32 bits),
 * then `op` (an mma taking {%r0..%r3}, {%r4, %r5}, {%f0..%f3} and, where it
 * scales, %r6 and %r7: scale words the prologue makes per lane: byte 0 0,
 * byte 1 127 + (lane & 3), byte 2 127 - (lane >> 2), byte 3 0xff (NaN)),
 * D stored as 4 f32 per lane. */
static void run(const char *op, uint32_t a, uint32_t b, uint32_t c, float D[16][8]) {
  char ptx[4096];
  snprintf(ptx, sizeof ptx,
           HDR ".visible .entry k(.param .u64 out)\n{\n"
           "  .reg .b32 %%r<16>;\n  .reg .f32 %%f<8>;\n  .reg .b64 %%rd<4>;\n"
           "  mov.b32 %%r0, %u;\n  mov.b32 %%r1, %%r0;\n  mov.b32 %%r2, %%r0;\n  mov.b32 %%r3, %%r0;\n"
           "  mov.b32 %%r4, %u;\n  mov.b32 %%r5, %%r4;\n"
           "  mov.b32 %%f0, %u;\n  mov.f32 %%f1, %%f0;\n  mov.f32 %%f2, %%f0;\n  mov.f32 %%f3, %%f0;\n"
           "  mov.u32 %%r8, %%laneid;\n  and.b32 %%r9, %%r8, 3;\n  add.u32 %%r9, %%r9, 127;\n"
           "  shr.u32 %%r10, %%r8, 2;\n  mov.u32 %%r11, 127;\n  sub.u32 %%r10, %%r11, %%r10;\n"
           "  shl.b32 %%r9, %%r9, 8;\n  shl.b32 %%r10, %%r10, 16;\n  or.b32 %%r6, %%r9, %%r10;\n"
           "  or.b32 %%r6, %%r6, 0xff000000;\n  mov.b32 %%r7, %%r6;\n"
           "  %s\n"
           "  ld.param.u64 %%rd1, [out];\n  mul.wide.u32 %%rd2, %%r8, 16;\n  add.u64 %%rd1, %%rd1, %%rd2;\n"
           "  st.global.v4.f32 [%%rd1], {%%f4, %%f5, %%f6, %%f7};\n  ret;\n}\n",
           a, b, c, op);
  et *t = et_load(ptx);
  uint64_t out = et_alloc(t, 32 * 16, NULL);
  et_ok(t, et_launch(t, "k", (emu_dim3){1, 1, 1}, (emu_dim3){32, 1, 1}, 0, 1, out));
  float d[32][4];
  et_get(t, d, out, sizeof d);
  for (unsigned l = 0; l < 32; l++)
    for (unsigned i = 0; i < 4; i++) D[(l >> 2) + 8 * (i >> 1)][2 * (l & 3) + (i & 1)] = d[l][i];
  et_free(t);
}

#define REGS "{%f4, %f5, %f6, %f7}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f0, %f1, %f2, %f3}"

START_TEST(f8f6f4_values) {
  float D[16][8];
  /* 1 + 32 * (1.5 * -0.25) = -11 */
  run("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m1.e3m2.f32 " REGS ";", 0x0c0c0c0c, 0x24242424,
      0x3f800000, D);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) ck_assert_msg(D[m][n] == -11.0f, "e2m1 x e3m2 D[%d][%d] = %g", m, n, D[m][n]);
  /* the e2m3 subnormal 0.125 times e2m1 6.0, 32 times: 24; the bits
   * outside a value (6, 7 of e2m3's byte, 0, 1, 6, 7 of e2m1's) ignored */
  run("mma.sync.aligned.m16n8k32.row.col.kind::f8f6f4.f32.e2m3.e2m1.f32 " REGS ";", 0xc1c1c1c1, 0x9f9f9f9f, 0, D);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) ck_assert_msg(D[m][n] == 24.0f, "e2m3 x e2m1 D[%d][%d] = %g", m, n, D[m][n]);
}
END_TEST

START_TEST(block_scale_lanes) {
  float D[16][8];
  /* 1X, A e2m1 1.0, B e4m3 2.0, C 0.5; selectors {1, 1} and {2, 3}:
   * SF_A of row m is byte 1 of lane 4 (m & 7) + 2 + (m >> 3), 2^(2 + (m >> 3));
   * SF_B of column n byte 2 of lane 4n + 3, 2^-n: D = 0.5 + 64 * 2^(2 + (m >> 3) - n) */
  run("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e4m3.f32.ue8m0 " REGS
      ", %r6, {1, 1}, %r7, {2, 3};",
      0x08080808, 0x40404040, 0x3f000000, D);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) {
      float want = 0.5f + ldexpf(64.0f, 2 + (m >> 3) - n);
      ck_assert_msg(D[m][n] == want, "1X D[%d][%d] = %g, want %g", m, n, D[m][n], want);
    }
  /* thread-id-a 0: lanes 4 (m & 7) + (m >> 3), 2^(m >> 3); thread-id-b 0, byte 1: 2^0 */
  run("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e4m3.f32.ue8m0 " REGS
      ", %r6, {1, 0}, %r7, {1, 0};",
      0x08080808, 0x40404040, 0x3f000000, D);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) {
      float want = 0.5f + ldexpf(64.0f, m >> 3);
      ck_assert_msg(D[m][n] == want, "1X tid 0 D[%d][%d] = %g, want %g", m, n, D[m][n], want);
    }
  /* a NaN scale (byte 3, 0xff) makes D NaN */
  run("mma.sync.aligned.m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e4m3.f32.ue8m0 " REGS
      ", %r6, {3, 0}, %r7, {1, 0};",
      0x08080808, 0x40404040, 0x3f000000, D);
  ck_assert(isnan(D[0][0]) && isnan(D[15][7]));
}
END_TEST

START_TEST(block_scale_2x) {
  float D[16][8];
  /* m16n8k64 mxf4 2X, e2m1 nibbles 1.5 (0x3) times 1.0 (0x2): each block of
   * 32 k sums to 48.  A {0, 1}: block j is byte j of lane 4 (m & 7) + 2 +
   * (m >> 3): 2^-127, then 2^(2 + (m >> 3)).  B {2, 1}: bytes 2 and 3 of lane
   * 4n + 1, the second NaN: D NaN.  B {0, 1}: bytes 0 and 1, 2^-127 and 2^1:
   * block 0's term 48 * 2^-254 rounds to 0 in f32 (taken exactly, rounded
   * once), block 1's is 48 * 2^(3 + (m >> 3)). */
  run("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0 " REGS
      ", %r6, {0, 1}, %r7, {2, 1};",
      0x33333333, 0x22222222, 0x3f000000, D);
  ck_assert(isnan(D[3][3]));
  run("mma.sync.aligned.m16n8k64.row.col.kind::mxf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0 " REGS
      ", %r6, {0, 1}, %r7, {0, 1};",
      0x33333333, 0x22222222, 0x3f000000, D);
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 8; n++) {
      float want = 0.5f + ldexpf(48.0f, 3 + (m >> 3));
      ck_assert_msg(D[m][n] == want, "2X D[%d][%d] = %g, want %g", m, n, D[m][n], want);
    }
}
END_TEST

int main(void) {
  Suite *s = suite_create("emu_mma_kinds");
  TCase *tc = tcase_create("mma_kinds");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, f8f6f4_values);
  tcase_add_test(tc, block_scale_lanes);
  tcase_add_test(tc, block_scale_2x);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
