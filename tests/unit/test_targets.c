/* tests/unit/test_targets.c: the one target table (ir/ir_targets.def,
 * ir/ir_target.h).  The expected values are written here by hand from
 * AMD's documents, not read from the table:
 *   - generation and wave size of each processor: LLVM's AMDGPUUsage,
 *     "Processors" table: the section a processor is listed under (GCN
 *     GFX9 CDNA, GFX10.3 RDNA 2, GFX11 RDNA 3 / 3.5, GFX12 RDNA 4), and
 *     whether it lists the wavefrontsize64 target feature (gfx10+ but
 *     gfx1250: wave32 by default, wave64 optional; gfx9: wave64 only);
 *   - LDS per workgroup: AMDGPUUsage "Memory Spaces" (64 KiB; gfx950 160);
 *   - the hardware id register and its fields: the CDNA3 ISA (3.12, Table 6
 *     HW_ID), the RDNA3 ISA (3.4.8 HW_ID1), the RDNA4 ISA (3.4.9 HW_ID1).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "util/diag.h"

typedef struct expect {
  const char *name;
  ir_gen gen;
  unsigned wave;
  unsigned lds_kib;
  bool codegen;
} expect;

static const expect processors[] = {
    {"gfx908", ir_gen_gfx9, 64, 64, false},   {"gfx90a", ir_gen_gfx9, 64, 64, true},
    {"gfx940", ir_gen_gfx9, 64, 64, false},   {"gfx941", ir_gen_gfx9, 64, 64, false},
    {"gfx942", ir_gen_gfx9, 64, 64, true},    {"gfx950", ir_gen_gfx9, 64, 160, true},
    {"gfx1030", ir_gen_gfx10, 32, 64, true},  {"gfx1100", ir_gen_gfx11, 32, 64, true},
    {"gfx1101", ir_gen_gfx11, 32, 64, true},  {"gfx1102", ir_gen_gfx11, 32, 64, false},
    {"gfx1150", ir_gen_gfx11, 32, 64, false}, {"gfx1151", ir_gen_gfx11, 32, 64, false},
    {"gfx1200", ir_gen_gfx12, 32, 64, true},  {"gfx1201", ir_gen_gfx12, 32, 64, true},
    {"gfx1250", ir_gen_gfx12, 32, 64, false},
};
#define NPROC (sizeof processors / sizeof *processors)

static const expect *expected(const char *name) {
  for (unsigned i = 0; i < NPROC; i++)
    if (!strcmp(processors[i].name, name)) return &processors[i];
  return NULL;
}

START_TEST(processors_as_documented) {
  for (unsigned i = 0; i < NPROC; i++) {
    const expect *e = &processors[i];
    const ir_target *t = ir_target_find(e->name);
    ck_assert_msg(t != NULL, "%s is not in the table", e->name);
    ck_assert_str_eq(t->name, e->name);
    ck_assert_msg(t->gen == e->gen, "%s: generation %s", e->name, ir_gen_infos[t->gen].name);
    ck_assert_uint_eq(t->wave_size, e->wave);
    ck_assert_uint_eq(t->lds_bytes, e->lds_kib * 1024);
    ck_assert_int_eq(t->codegen, e->codegen);
    ck_assert_ptr_nonnull(strstr(t->llvm_features, e->wave == 64 ? "+wavefrontsize64" : "+wavefrontsize32"));
    ck_assert_ptr_eq(ir_target_gen(t), &ir_gen_infos[e->gen]);
  }
}
END_TEST

/* Every row is documented above (a new row needs its line here), the
 * pseudo targets aside; the codegen rows come first (cg_targets). */
START_TEST(every_row_checked) {
  unsigned n;
  const ir_target *t = ir_targets(&n);
  ck_assert_uint_eq(n, NPROC + 2);
  bool cg_part = true;
  for (unsigned i = 0; i < n; i++) {
    if (!t[i].codegen) cg_part = false;
    ck_assert_msg(!t[i].codegen || cg_part, "codegen row %s after a lowering-only row", t[i].name);
    ck_assert_ptr_eq(ir_target_find(t[i].name), &t[i]);
    if (!strcmp(t[i].name, "wave64") || !strcmp(t[i].name, "wave32")) continue;
    ck_assert_msg(expected(t[i].name) != NULL, "row %s has no expectation", t[i].name);
  }
}
END_TEST

START_TEST(lookups) {
  ck_assert_ptr_null(ir_target_find("gfx94"));
  ck_assert_ptr_null(ir_target_find("sm_90"));
  ck_assert_ptr_null(ir_target_find(""));
  ck_assert_ptr_null(ir_target_find(NULL));
  const ir_target *w64 = ir_target_for_wave(64), *w32 = ir_target_for_wave(32);
  ck_assert_str_eq(w64->name, "wave64");
  ck_assert_str_eq(w32->name, "wave32");
  ck_assert_uint_eq(w64->wave_size, 64);
  ck_assert_uint_eq(w32->wave_size, 32);
  ck_assert(!w64->codegen && !w32->codegen);
  /* their generation decides only %smid's layout: wave64 is gfx9's */
  ck_assert(w64->gen == ir_gen_gfx9);
  ck_assert_uint_eq(ir_target_gen(w32)->hw_id_reg, 23);
}
END_TEST

/* s_memrealtime: gfx8 to gfx10.3 (removed in gfx11, where REALTIME is read
 * with s_sendmsg_rtn); the gfx11 trap workaround on the gfx11 codegen rows */
START_TEST(features) {
  static const char *const memtime[] = {"gfx90a", "gfx942", "gfx950", "gfx1030"};
  static const char *const no_memtime[] = {"gfx1100", "gfx1101", "gfx1200", "gfx1201"};
  for (unsigned i = 0; i < 4; i++) {
    ck_assert(ir_target_find(memtime[i])->features & IR_TARGET_MEMTIME);
    ck_assert(!(ir_target_find(no_memtime[i])->features & IR_TARGET_MEMTIME));
  }
  unsigned n;
  const ir_target *t = ir_targets(&n);
  for (unsigned i = 0; i < n; i++) {
    bool want = t[i].codegen && t[i].gen == ir_gen_gfx11;
    ck_assert_msg(!(t[i].features & IR_TARGET_TRAP_OUT_OF_LINE) == !want, "%s", t[i].name);
  }
}
END_TEST

static void field(ir_hw_field f, unsigned hi, unsigned lo) {
  ck_assert_uint_eq(f.lo, lo);
  ck_assert_uint_eq(f.bits, hi - lo + 1);
}

START_TEST(hw_id_layouts) {
  /* CDNA3 ISA Table 6, HW_ID (s_getreg id 4) */
  const ir_gen_info *g9 = &ir_gen_infos[ir_gen_gfx9];
  ck_assert_str_eq(g9->name, "gfx9");
  ck_assert_uint_eq(g9->hw_id_reg, 4);
  field(g9->wave, 3, 0);
  field(g9->unit, 11, 8);    /* CU_ID */
  ck_assert_uint_eq(g9->sa.bits, 0);   /* SH_ID 12 "is set to zero" */
  field(g9->se, 15, 13);
  /* RDNA3 ISA 3.4.8, HW_ID1 (s_getreg id 23) */
  const ir_gen_info *g11 = &ir_gen_infos[ir_gen_gfx11];
  ck_assert_uint_eq(g11->hw_id_reg, 23);
  field(g11->wave, 4, 0);
  field(g11->unit, 13, 10);  /* WGP_ID */
  field(g11->sa, 16, 16);
  field(g11->se, 20, 18);
  /* RDNA2: the same register, SE_ID 19:18 */
  const ir_gen_info *g10 = &ir_gen_infos[ir_gen_gfx10];
  ck_assert_uint_eq(g10->hw_id_reg, 23);
  field(g10->unit, 13, 10);
  field(g10->sa, 16, 16);
  field(g10->se, 19, 18);
  /* RDNA4 ISA 3.4.9, HW_ID1: no SE_ID listed */
  const ir_gen_info *g12 = &ir_gen_infos[ir_gen_gfx12];
  ck_assert_uint_eq(g12->hw_id_reg, 23);
  field(g12->wave, 4, 0);
  field(g12->unit, 13, 10);
  field(g12->sa, 16, 16);
  ck_assert_uint_eq(g12->se.bits, 0);
}
END_TEST

/* The helper every lowering starts with, and the textual form's target:
 * a row, found by name, printed by name, an unknown one an error. */
START_TEST(module_facts) {
  ir_module *m = ir_module_create("t");
  ck_assert_ptr_null(m->facts.target);
  ck_assert_uint_eq(m->facts.wave_size, 32);
  ir_module_set_target(m, ir_target_find("gfx942"));
  ck_assert_ptr_eq(m->facts.target, ir_target_find("gfx942"));
  ck_assert_uint_eq(m->facts.wave_size, 64);
  ir_module_destroy(m);

  static const char ok[] = "module target \"gfx1100\" wave 32 lowered\n";
  pw_diag d;
  pw_diag_init(&d, NULL);
  m = ir_parse("t.pwir", ok, strlen(ok), &d);
  ck_assert_msg(m != NULL, "%s", pw_diag_text(&d));
  ck_assert_ptr_eq(m->facts.target, ir_target_find("gfx1100"));
  ir_module_destroy(m);
  pw_diag_fini(&d);

  static const char bad[] = "module target \"gfx999\"\n";
  pw_diag_init(&d, NULL);
  m = ir_parse("t.pwir", bad, strlen(bad), &d);
  ck_assert_ptr_null(m);
  ck_assert_ptr_nonnull(strstr(pw_diag_text(&d), "t.pwir:1:15: error: unknown target \"gfx999\""));
  pw_diag_fini(&d);
}
END_TEST

int main(void) {
  Suite *s = suite_create("targets");
  TCase *tc = tcase_create("table");
  tcase_add_test(tc, processors_as_documented);
  tcase_add_test(tc, every_row_checked);
  tcase_add_test(tc, lookups);
  tcase_add_test(tc, features);
  tcase_add_test(tc, hw_id_layouts);
  tcase_add_test(tc, module_facts);
  suite_add_tcase(s, tc);
  SRunner *r = srunner_create(s);
  srunner_run_all(r, CK_NORMAL);
  int failed = srunner_ntests_failed(r);
  srunner_free(r);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
