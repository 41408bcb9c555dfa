/* codegen/cg_ptx.c: the one compile entry of `ptxwave compile` and the
 * runtime's HIP backend (docs/codegen.md "From PTX"):
 *
 *   PTX text --ptx_parse--> IR --ir_verify--> --lower_module(target)-->
 *   lowered IR --cg_compile--> LLVM IR | asm | object | .hsaco
 *
 * Lowering is per target (a warp is a wave on wave32 and half of one on
 * wave64), and lower_module rewrites the module in place, so every target
 * gets its own parse: parsing costs a fraction of the LLVM compile
 * (docs/codegen.md "Measurements").  A .pwir text (the IR's textual form,
 * by the name's suffix) already marked lowered is compiled as it is.
 */
#include <string.h>

#include "codegen/codegen.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"

bool cg_compile_ptx(const char *name, const char *text, size_t len, const cg_options *opt,
                    cg_emit_kind kind, cg_output *out, pw_diag *d) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<ptx>";
  if (!opt->target) {
    pw_error(d, name, "no target");
    return false;
  }
  size_t nl = strlen(name);
  ptx_parse_stats st = {0};
  ir_module *m = nl > 5 && !strcmp(name + nl - 5, ".pwir") ? ir_parse(name, text, len, d)
                                                          : ptx_parse(name, text, len, d, &st);
  bool ok = m != NULL && ir_verify(m, NULL, d);
  if (ok && !opt->no_lower && !m->facts.lowered) {
    const lower_target *lt = lower_find_target(opt->target->name);
    if (!lt) {
      pw_error(d, name, "internal: no lowering facts for %s", opt->target->name);
      ok = false;
    } else {
      ok = lower_module(m, lt, &(lower_pipeline_options){.diag = d});
    }
  }
  pw_src src = {name, text, len};
  if (ok) ok = cg_compile(m, &src, opt, kind, out, d);
  if (m) ir_module_destroy(m);
  return ok;
}
