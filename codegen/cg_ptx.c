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
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir_link.h"
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
  /* a complete code object: every used symbol defined here (relocatable
   * device code goes through --emit obj or a link, ir/ir_link.h) */
  if (ok && kind == CG_EMIT_HSACO) ok = ir_link_check_defined(m, d);
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

/* Several PTX texts linked into one module (ir_link: each .extern bound to
 * the definition another text holds), then as cg_compile_ptx.  A complete
 * code object (CG_EMIT_HSACO) needs every used symbol defined; a
 * relocatable object may leave some for a later link. */
bool cg_compile_ptx_linked(unsigned n, const char *const *names, const char *const *texts,
                           const size_t *lens, const cg_options *opt, cg_emit_kind kind, cg_output *out,
                           pw_diag *d) {
  memset(out, 0, sizeof *out);
  if (n == 1) return cg_compile_ptx(names[0], texts[0], lens[0], opt, kind, out, d);
  if (!opt->target || n == 0) {
    pw_error(d, n ? names[0] : "<ptx>", n ? "no target" : "nothing to link");
    return false;
  }
  ir_module **mods = calloc(n, sizeof *mods);
  if (!mods) return false;
  bool ok = true;
  for (unsigned k = 0; k < n && ok; k++) {
    mods[k] = ptx_parse(names[k], texts[k], lens[k], d, NULL);
    ok = mods[k] != NULL;
  }
  ir_module *m = NULL;
  if (ok) {
    m = ir_link_modules(mods, n, kind != CG_EMIT_HSACO, d);
  } else {
    for (unsigned k = 0; k < n; k++) ir_module_destroy(mods[k]);
  }
  free(mods);
  ok = m != NULL && ir_verify(m, NULL, d);
  if (ok && !opt->no_lower) {
    const lower_target *lt = lower_find_target(opt->target->name);
    ok = lt && lower_module(m, lt, &(lower_pipeline_options){.diag = d});
  }
  /* locations point into several texts: messages name the linked module */
  if (ok) ok = cg_compile(m, &(pw_src){.path = m->source_name}, opt, kind, out, d);
  if (m) ir_module_destroy(m);
  return ok;
}
