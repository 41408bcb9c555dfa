/* tests/codegen/cg_wrap.c: every kernel of the emulator's own suites
 * compiles for every codegen target (issue 6: "every kernel of the emulator
 * and lowering suites compiles for gfx90a, gfx942, gfx950, gfx1100 and
 * gfx1201").
 *
 * Linked into a copy of each emulator test (tests/unit/test_emu_*.c) with
 * -Wl,--wrap=emu_module_load: each module a test loads, and the emulator
 * accepts, is printed as IR text and compiled through cg_compile_ptx
 * (parse, verify, lower_module for the target, LLVM, LLD, every kernel and
 * its .kd checked) for each target; a module that does not compile fails
 * the test that loaded it, with codegen's message.  Modules the emulator
 * refuses (the suites' error tests) are not compiled.  The tests' own
 * checks still run on the emulator as usual.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "codegen/codegen.h"
#include "emu/emu.h"
#include "ir/ir.h"

emu_status __real_emu_module_load(emu_context *c, ir_module *m, emu_module **out);
emu_status __wrap_emu_module_load(emu_context *c, ir_module *m, emu_module **out);

static const char *const targets[] = {"gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1201"};

emu_status __wrap_emu_module_load(emu_context *c, ir_module *m, emu_module **out) {
  emu_status s = __real_emu_module_load(c, m, out);
  if (s != EMU_OK || m->facts.lowered) return s;
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(f);
  ir_print_module(f, m);
  fclose(f);
  for (unsigned k = 0; k < sizeof targets / sizeof *targets; k++) {
    const ir_target *t = cg_target_find(targets[k]);
    ck_assert_ptr_nonnull(t);
    cg_output o;
    pw_diag d;
    pw_diag_init(&d, NULL);
    /* one thread: the suites run many small modules; .pwir: the text is IR */
    bool ok = cg_compile_ptx("emu-suite.pwir", text, len, &(cg_options){.target = t, .threads = 1},
                             CG_EMIT_HSACO, &o, &d);
    if (!ok) fprintf(stderr, "cg_wrap: module does not compile for %s:\n%s\n--- IR ---\n%s\n", t->name,
                     pw_diag_text(&d), text);
    ck_assert_msg(ok, "codegen failed for %s: %s", t->name, pw_diag_text(&d));
    unsigned nk = 0;
    for (const ir_func *fn = m->funcs; fn; fn = fn->next) nk += fn->is_kernel && !fn->is_decl;
    ck_assert_msg(o.nkernels == nk, "%s: %u of %u kernels in the code object", t->name, o.nkernels, nk);
    free(o.data);
    pw_diag_fini(&d);
  }
  free(text);
  return s;
}
