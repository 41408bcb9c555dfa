/* tests/unit/test_emu_amx.c: the emulator's wave_mma (emu/emu_matrix.c), one
 * MFMA/WMMA instruction per row of ir/ir_amd_matrix.def, against a C
 * reference.
 *
 * The test places matrices A, B and C into registers with the layouts as
 * AMD's Matrix Instruction Calculator prints them in its "matrix element to
 * register mapping" form (element -> lane, GPR, bits: the direction opposite
 * to ir_amd_matrix.h's, written out here again), runs the instruction from
 * IR text, reads D back the same way and compares it with D = A * B + C
 * computed in C.  Elements are small integers, so every sum is exact in any
 * order.  A layout that is wrong in the table, the header or the emulator
 * moves elements and fails (the order of k is the exception: A and B share
 * it in every layout, so a consistent reordering of k changes no D, on the
 * hardware either).  The f64 rows (two words per element) have their own
 * runner (run_f64_row).  RDNA3's repetition rule (lanes 16-31 repeat
 * 0-15 in A and B) is tested too: a lane that breaks it makes its row NaN.
 */
#include <math.h>

#include "emu_test.h"
#include "ir/ir_amd_matrix.h"

/* f16 / bf16 bits of a small integer (|v| <= 64), by hand */
static uint16_t f16_of(int v) {
  if (!v) return 0;
  unsigned s = v < 0, a = (unsigned)(v < 0 ? -v : v), e = 31 - (unsigned)__builtin_clz(a);
  unsigned mant = (a << (10 - e)) & 0x3ff;   /* e <= 6 < 10 */
  return (uint16_t)(s << 15 | (e + 15) << 10 | mant);
}
static uint16_t bf16_of(int v) {
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  return (uint16_t)(b >> 16);   /* small integers have <= 8 significant bits: exact */
}

typedef struct place { unsigned lane[2], nlanes, gpr, half; } place;

/* Where element [b][x][k] of A (x = i) or of B (x = j) goes; bits: of an
 * element (16, or 8 for the i8 MFMA: "GPR k / 4, bits 8 (k % 4)"). */
/* The bits of an integer as an element of type t (a row's ta or tb). */
static uint16_t elem_of(ir_type t, int v) {
  if (t == ir_type_s8) return (uint8_t)(int8_t)v;
  if (t == ir_type_u8) return (uint8_t)v;
  return t == ir_type_bf16 ? bf16_of(v) : f16_of(v);
}

static place ab_place(ir_amx_layout lay, unsigned bits, unsigned b, unsigned x, unsigned k) {
  unsigned per = bits < 32 ? 32 / bits : 1;   /* f64: one element in two registers */
  place p = {{0, 0}, 1, k / per, k % per};
  switch (lay) {
  case IR_AMX_L_MFMA_4X4_16B: p.lane[0] = 4 * b + x; break;   /* "Lane: 4 * block + i" */
  case IR_AMX_L_WMMA_GFX11: p.lane[0] = x, p.lane[1] = x + 16, p.nlanes = 2; break;   /* "i and i+16" */
  case IR_AMX_L_WMMA_GFX12:
    p.gpr = 2 * (k / 8) + (k / 2) % 2;   /* "(2 * floor(k / 8) + (floor(k / 2) % 2))" */
    p.lane[0] = 16 * ((k / 4) % 2) + x;  /* "16 * (floor(k / 4) % 2) + i" */
    break;
  case IR_AMX_L_WMMA_GFX12_IU8:
    p.gpr = (k / 4) % 2;                 /* "(floor(k / 4) % 2).[8 * (k % 4) + 7 : 8 * (k % 4)]" */
    p.lane[0] = 16 * (k / 8) + x;        /* "16 * floor(k / 8) + i" */
    break;
  case IR_AMX_L_MFMA_F64_16X16:          /* "GPR: [1:0]", "Lane: 16 * k + i" (run_f64_row) */
    p.gpr = 0, p.half = 0, p.lane[0] = 16 * k + x;
    break;
  }
  return p;
}
/* Where element [b][i][j] of C and D goes (one lane). */
static place cd_place(ir_amx_layout lay, unsigned b, unsigned i, unsigned j) {
  place p = {{0, 0}, 1, 0, 0};
  switch (lay) {
  case IR_AMX_L_MFMA_4X4_16B: p.gpr = i, p.lane[0] = 4 * b + j; break;
  case IR_AMX_L_WMMA_GFX11: p.gpr = i / 2, p.lane[0] = (16 * i) % 32 + j; break;
  case IR_AMX_L_WMMA_GFX12: case IR_AMX_L_WMMA_GFX12_IU8: p.gpr = i % 8, p.lane[0] = 16 * (i / 8) + j; break;
  /* "GPR: [2*floor(i / 4)+1 : 2*floor(i / 4)]", "Lane: 16 * (i % 4) + j": gpr is the pair's low word */
  case IR_AMX_L_MFMA_F64_16X16: p.gpr = 2 * (i / 4), p.lane[0] = 16 * (i % 4) + j; break;
  }
  return p;
}

/* IR text: load the row's registers (register r of lane l at word r*W + l
 * of in), run wave_mma, store D the same way to out. */
static char *kernel_text(unsigned row) {
  const ir_amx_info *r = ir_amx_info_of(row);
  size_t cap = 16384, n = 0;
  char *t = malloc(cap);
  n += (size_t)snprintf(t + n, cap - n,
                        "module ptx 8.5 sm_90 addr64 wave %u lowered target \"%s\"\n\n"
                        "visible kernel @k(param::entry u64 @in align 8 offset 0, param::entry u64 @out align 8 "
                        "offset 8) {\nbb0:\n  %%0 = wave_lane_id.u32\n  %%1 = ld.param.u64 [@in]\n"
                        "  %%2 = ld.param.u64 [@out]\n  %%3 = mul.wide.u32 %%0, 4\n  %%4 = add.u64 %%1, %%3\n"
                        "  %%5 = add.u64 %%2, %%3\n",
                        r->wave, r->wave == 64 ? "gfx942" : "gfx1100");
  unsigned nin = r->na + r->nb + r->nc;
  for (unsigned k = 0; k < nin; k++) n += (size_t)snprintf(t + n, cap - n, "  %%%u = ld.global.b32 [%%4+%u]\n", 10 + k, 4 * r->wave * k);
  for (unsigned k = 0; k < r->nc; k++) n += (size_t)snprintf(t + n, cap - n, "%s%%%u:b32", k ? ", " : "  ", 100 + k);
  n += (size_t)snprintf(t + n, cap - n, " = wave_mma.b32 %u", row);
  for (unsigned k = 0; k < nin; k++) n += (size_t)snprintf(t + n, cap - n, ", %%%u", 10 + k);
  n += (size_t)snprintf(t + n, cap - n, "\n");
  for (unsigned k = 0; k < r->nc; k++)
    n += (size_t)snprintf(t + n, cap - n, "  st.global.b32 [%%5+%u], %%%u\n", 4 * r->wave * k, 100 + k);
  snprintf(t + n, cap - n, "  ret\n}\n");
  return t;
}

static uint64_t rng_state = 0x243F6A8885A308D3ull;
static uint64_t rng(void) {
  rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
  return rng_state;
}
static int small(void) { return (int)(rng() % 9) - 4; }
/* A value of an A/B element of type t: small for the float types (exact
 * sums), the whole range for the bytes (s8 -128..127, u8 0..255, half of
 * them >= 128: read as signed they would be negative) */
static int value_of(ir_type t) {
  if (t == ir_type_s8) return (int)(rng() % 256) - 128;
  if (t == ir_type_u8) return (int)(rng() % 256);
  return small();
}

/* Runs row with random small-integer matrices; break_lane >= 0 changes that
 * lane's first A register (a repetition violation on RDNA3).  Checks every
 * element of D; returns the number of NaN rows seen. */
/* Runs kernel k of m on one block of W lanes: in holds nin registers of W
 * words each, out receives nout. */
static void launch(ir_module *m, unsigned W, const uint32_t *in, unsigned nin, uint32_t *out, unsigned nout) {
  emu_context *ctx;
  ck_assert_int_eq(emu_context_create(&(emu_options){.threads = 1}, &ctx), EMU_OK);
  emu_module *em;
  ck_assert_msg(emu_module_load(ctx, m, &em) == EMU_OK, "load: %s", emu_error_message(ctx));
  uint64_t din, dout;
  emu_malloc(ctx, nin * W * 4, &din);
  emu_malloc(ctx, nout * W * 4, &dout);
  emu_memcpy_htod(ctx, din, in, nin * W * 4);
  uint64_t params[2] = {din, dout};
  emu_status st = emu_launch_buffer(em, "k", (emu_dim3){1, 1, 1}, (emu_dim3){W, 1, 1}, 0, params, sizeof params);
  ck_assert_msg(st == EMU_OK, "launch: %s", emu_error_message(ctx));
  emu_memcpy_dtoh(ctx, out, dout, nout * W * 4);
  emu_module_unload(em);
  emu_context_destroy(ctx);
}

static unsigned run_row(unsigned row, int break_lane) {
  const ir_amx_info *r = ir_amx_info_of(row);
  ir_amx_layout lay = (ir_amx_layout)r->layout;
  unsigned W = r->wave, nin = r->na + r->nb + r->nc, bits = ir_type_bits((ir_type)r->ta);
  bool i32 = r->tc == ir_type_s32;
  int A[16][16][16], B[16][16][16], C[16][16][16];
  uint32_t *in = calloc(nin * W, 4), *out = calloc(r->nc * W, 4);
  for (unsigned b = 0; b < r->blocks; b++)
    for (unsigned x = 0; x < 16; x++)
      for (unsigned y = 0; y < 16; y++)
        A[b][x][y] = value_of((ir_type)r->ta), B[b][x][y] = value_of((ir_type)r->tb), C[b][x][y] = small();
  for (unsigned b = 0; b < r->blocks; b++)
    for (unsigned k = 0; k < r->k; k++) {
      for (unsigned i = 0; i < r->m; i++) {
        place p = ab_place(lay, bits, b, i, k);
        uint16_t e = elem_of((ir_type)r->ta, A[b][i][k]);
        for (unsigned q = 0; q < p.nlanes; q++) in[p.gpr * W + p.lane[q]] |= (uint32_t)e << (bits * p.half);
      }
      for (unsigned j = 0; j < r->n; j++) {
        place p = ab_place(lay, bits, b, j, k);
        uint16_t e = elem_of((ir_type)r->tb, B[b][k][j]);
        for (unsigned q = 0; q < p.nlanes; q++) in[(r->na + p.gpr) * W + p.lane[q]] |= (uint32_t)e << (bits * p.half);
      }
    }
  for (unsigned b = 0; b < r->blocks; b++)
    for (unsigned i = 0; i < r->m; i++)
      for (unsigned j = 0; j < r->n; j++) {
        place p = cd_place(lay, b, i, j);
        float f = (float)C[b][i][j];
        int32_t v = C[b][i][j];
        if (i32) memcpy(&in[(r->na + r->nb + p.gpr) * W + p.lane[0]], &v, 4);
        else memcpy(&in[(r->na + r->nb + p.gpr) * W + p.lane[0]], &f, 4);
      }
  if (break_lane >= 0) in[(unsigned)break_lane] ^= 0x3c00u;   /* another value: + 1.0 in the low half, byte 1 of bytes */
  char *text = kernel_text(row);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("amx.pwir", text, strlen(text), &d);
  ck_assert_msg(m != NULL, "the test IR does not parse: %s\n%s", pw_diag_text(&d), text);
  ck_assert_msg(ir_verify(m, NULL, &d), "the test IR does not verify: %s", pw_diag_text(&d));
  {
    /* printed IR parses back to the same text (style.md #10) */
    char *p1 = NULL, *p2 = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *f = open_memstream(&p1, &n1);
    ir_print_module(f, m);
    fclose(f);
    ir_module *m2 = ir_parse("amx2.pwir", p1, n1, &d);
    ck_assert_msg(m2 != NULL, "printed IR does not parse: %s", pw_diag_text(&d));
    f = open_memstream(&p2, &n2);
    ir_print_module(f, m2);
    fclose(f);
    ck_assert_str_eq(p1, p2);
    ck_assert_msg(strstr(p1, "wave_mma") != NULL, "no wave_mma printed");
    ir_module_destroy(m2);
    free(p1);
    free(p2);
  }
  pw_diag_fini(&d);
  launch(m, W, in, nin, out, r->nc);
  unsigned nan_rows = 0;
  for (unsigned b = 0; b < r->blocks; b++)
    for (unsigned i = 0; i < r->m; i++) {
      bool row_nan = false;
      for (unsigned j = 0; j < r->n; j++) {
        int want = C[b][i][j];
        for (unsigned k = 0; k < r->k; k++) want += A[b][i][k] * B[b][k][j];
        place p = cd_place(lay, b, i, j);
        float got;
        memcpy(&got, &out[p.gpr * W + p.lane[0]], 4);
        if (i32) got = out[p.gpr * W + p.lane[0]] == 0x80000000u ? NAN   /* the iu8 rows' undefined result */
                     : (float)(int32_t)out[p.gpr * W + p.lane[0]];   /* |D| < 16 * 255 * 255 + 4 < 2^24: exact */
        if (isnan(got)) {
          row_nan = true;
          continue;
        }
        ck_assert_msg(got == (float)want, "%s: D[%u][%u][%u] = %g, expected %d", r->name, b, i, j, got, want);
      }
      nan_rows += row_nan;
      ck_assert_msg(break_lane >= 0 || !row_nan, "%s: row %u of block %u is NaN", r->name, i, b);
    }
  ir_module_destroy(m);
  free(text);
  free(in);
  free(out);
  return nan_rows;
}

/* The f64 rows: each element two words (low first) at the place's gpr and
 * gpr + 1; A, B and C small multiples of 1/4, so sums are exact.  order:
 * A[i][0] B[0][j] = 2^60, A[i][1] B[1][j] = -2^60, C = 1, the rest 0: the
 * emulator's documented order (fma from C in k order) gives 0, where the
 * exact sum is 1 (emu_matrix.c: the hardware's order is not documented). */
static void put64(uint32_t *in, unsigned W, unsigned gpr, unsigned lane, double v) {
  uint64_t b;
  memcpy(&b, &v, 8);
  in[gpr * W + lane] = (uint32_t)b;
  in[(gpr + 1) * W + lane] = (uint32_t)(b >> 32);
}
static void run_f64_row(unsigned row, bool order) {
  const ir_amx_info *r = ir_amx_info_of(row);
  ir_amx_layout lay = (ir_amx_layout)r->layout;
  unsigned W = r->wave, nin = r->na + r->nb + r->nc;
  double A[16][4], B[4][16], C[16][16];
  uint32_t *in = calloc(nin * W, 4), *out = calloc(r->nc * W, 4);
  for (unsigned i = 0; i < 16; i++)
    for (unsigned k = 0; k < 4; k++) {
      A[i][k] = order ? (k == 0 ? 0x1p30 : k == 1 ? -0x1p30 : 0) : small() / 4.0;
      B[k][i] = order ? (k < 2 ? 0x1p30 : 0) : small() / 4.0;
    }
  for (unsigned i = 0; i < 16; i++)
    for (unsigned j = 0; j < 16; j++) C[i][j] = order ? 1 : small() / 4.0;
  for (unsigned x = 0; x < 16; x++)
    for (unsigned k = 0; k < 4; k++) {
      put64(in, W, ab_place(lay, 64, 0, x, k).gpr, ab_place(lay, 64, 0, x, k).lane[0], A[x][k]);
      put64(in, W, r->na + ab_place(lay, 64, 0, x, k).gpr, ab_place(lay, 64, 0, x, k).lane[0], B[k][x]);
    }
  for (unsigned i = 0; i < 16; i++)
    for (unsigned j = 0; j < 16; j++) {
      place p = cd_place(lay, 0, i, j);
      put64(in, W, r->na + r->nb + p.gpr, p.lane[0], C[i][j]);
    }
  char *text = kernel_text(row);
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ir_parse("amx64.pwir", text, strlen(text), &d);
  ck_assert_msg(m != NULL, "the test IR does not parse: %s\n%s", pw_diag_text(&d), text);
  ck_assert_msg(ir_verify(m, NULL, &d), "the test IR does not verify: %s", pw_diag_text(&d));
  pw_diag_fini(&d);
  launch(m, W, in, nin, out, r->nc);
  for (unsigned i = 0; i < 16; i++)
    for (unsigned j = 0; j < 16; j++) {
      double want = C[i][j];
      for (unsigned k = 0; k < 4 && !order; k++) want += A[i][k] * B[k][j];
      if (order) want = 0;
      place p = cd_place(lay, 0, i, j);
      uint64_t b = out[p.gpr * W + p.lane[0]] | (uint64_t)out[(p.gpr + 1) * W + p.lane[0]] << 32;
      double got;
      memcpy(&got, &b, 8);
      ck_assert_msg(got == want, "%s: D[%u][%u] = %g, expected %g", r->name, i, j, got, want);
    }
  ir_module_destroy(m);
  free(text);
  free(in);
  free(out);
}

START_TEST(every_row) {
  for (unsigned row = 0; row < IR_AMX_COUNT; row++)
    for (unsigned rep = 0; rep < 4; rep++) {
      if (ir_amx_info_of(row)->ta == ir_type_f64) run_f64_row(row, false);
      else run_row(row, -1);
    }
}
END_TEST

START_TEST(f64_order) {
  run_f64_row(IR_AMX_mfma_f64_16x16x4_f64, true);
}
END_TEST

START_TEST(gfx11_repetition) {
  /* lane 20 holds A row 4 again (lane 4's copy): changing it poisons row 4 only */
  ck_assert_uint_eq(run_row(IR_AMX_wmma_f32_16x16x16_f16, 20), 1);
  ck_assert_uint_eq(run_row(IR_AMX_wmma_f32_16x16x16_f16, 4), 1);
  /* the iu8 rows: INT32_MIN in place of NaN */
  ck_assert_uint_eq(run_row(IR_AMX_wmma_i32_16x16x16_iu8, 20), 1);
  ck_assert_uint_eq(run_row(IR_AMX_wmma_i32_16x16x16_iu8_u8u8, 4), 1);
}
END_TEST

START_TEST(table_facts) {
  /* register counts: (M*K*blocks*16 bits) / (32 bits * W) for A; the calculator's "GPRs required" */
  for (unsigned row = 0; row < IR_AMX_COUNT; row++) {
    const ir_amx_info *r = ir_amx_info_of(row);
    unsigned rep = r->layout == IR_AMX_L_WMMA_GFX11 ? 2 : 1, bits = ir_type_bits((ir_type)r->ta);
    ck_assert_uint_eq(r->na * 32u * r->wave, (unsigned)r->m * r->k * r->blocks * bits * rep);
    ck_assert_uint_eq(r->nb * 32u * r->wave, (unsigned)r->n * r->k * r->blocks * bits * rep);
    ck_assert_uint_eq(r->nc * 32u * r->wave, (unsigned)r->m * r->n * r->blocks * ir_type_bits((ir_type)r->tc));
  }
  ck_assert(ir_amx_on_target(IR_AMX_mfma_f32_4x4x4_16b_f16, "gfx942"));
  ck_assert(!ir_amx_on_target(IR_AMX_mfma_f32_4x4x4_16b_f16, "gfx94"));
  ck_assert(!ir_amx_on_target(IR_AMX_wmma_f32_16x16x16_f16, "gfx1200"));
  ck_assert(ir_amx_on_target(IR_AMX_wmma_f32_16x16x16_f16_gfx12, "gfx1201"));
  ck_assert_int_eq(ir_amx_find("wave64", ir_type_f16, ir_type_f32, 4, 4, 4), -1);
  ck_assert_int_eq(ir_amx_find("gfx942", ir_type_s8, ir_type_s32, 4, 4, 4), IR_AMX_mfma_i32_4x4x4_16b_i8);
  ck_assert_int_eq(ir_amx_find("gfx1100", ir_type_s8, ir_type_s32, 4, 4, 4), -1);
  ck_assert_int_eq(ir_amx_find("gfx1201", ir_type_s8, ir_type_s32, 16, 16, 16), IR_AMX_wmma_i32_16x16x16_iu8_gfx12);
  ck_assert_int_eq(ir_amx_find("gfx1100", ir_type_s8, ir_type_s32, 16, 16, 16), IR_AMX_wmma_i32_16x16x16_iu8);
  /* the iu8 WMMA's sign variants: A's type first; none on the MFMA (signed only) */
  ck_assert_int_eq(ir_amx_find_ab("gfx1100", ir_type_u8, ir_type_s8, ir_type_s32, 16, 16, 16),
                   IR_AMX_wmma_i32_16x16x16_iu8_u8s8);
  ck_assert_int_eq(ir_amx_find_ab("gfx1201", ir_type_s8, ir_type_u8, ir_type_s32, 16, 16, 16),
                   IR_AMX_wmma_i32_16x16x16_iu8_s8u8_gfx12);
  ck_assert_int_eq(ir_amx_find("gfx1101", ir_type_u8, ir_type_s32, 16, 16, 16), IR_AMX_wmma_i32_16x16x16_iu8_u8u8);
  ck_assert_int_eq(ir_amx_find("gfx1200", ir_type_u8, ir_type_s32, 16, 16, 16), IR_AMX_wmma_i32_16x16x16_iu8_u8u8_gfx12);
  ck_assert_int_eq(ir_amx_find_ab("gfx942", ir_type_u8, ir_type_s8, ir_type_s32, 4, 4, 4), -1);
  ck_assert(!ir_amx_signed(ir_amx_info_of(IR_AMX_wmma_i32_16x16x16_iu8_u8s8), false));
  ck_assert(ir_amx_signed(ir_amx_info_of(IR_AMX_wmma_i32_16x16x16_iu8_u8s8), true));
  ck_assert_int_eq(ir_amx_find("gfx90a", ir_type_f64, ir_type_f64, 16, 16, 4), IR_AMX_mfma_f64_16x16x4_f64);
  ck_assert_int_eq(ir_amx_find("gfx950", ir_type_f64, ir_type_f64, 16, 16, 4), IR_AMX_mfma_f64_16x16x4_f64);
  ck_assert_int_eq(ir_amx_find("gfx1201", ir_type_f64, ir_type_f64, 16, 16, 4), -1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("emu_amx");
  TCase *tc = tcase_create("wave_mma");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, every_row);
  tcase_add_test(tc, gfx11_repetition);
  tcase_add_test(tc, f64_order);
  tcase_add_test(tc, table_facts);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
