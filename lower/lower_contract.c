/* lower/lower_contract.c: what happens after each pass (style.md #7, #8;
 * Mesa's NIR_PASS and nir_metadata_preserve).
 *
 * Every pass declares a contract (lower_internal.h, lower_contract): what
 * it eliminates and which analyses it keeps.  lower_module runs each pass
 * through LOWER_PASS (pipeline.c), which hands the pass's progress to
 * lower_pass_done:
 *   - no progress: the module is what it was, so nothing is invalidated,
 *     printed or verified again;
 *   - progress: the analyses the pass does not preserve are no longer
 *     current (ir_func.analyses), --print-after prints the module, and a
 *     verifying build verifies it;
 *   - a verifying build (verify_each: ptxwave lower, fuzz_lower; or
 *     -Dlower_verify_each=true, scripts/test.sh's ASan build) then checks
 *     the contract: no instruction of the eliminated set may remain, except
 *     in a function where a pass reported what it could not lower
 *     (lower_error marks it: ir_func.failed_at, the kernels that reach it
 *     are not compiled).  A pass that forgets a form, or whose expansion
 *     rebuilds what it eliminates, is named with the instruction.
 * Other compiles skip both walks: verifying after every pass was three
 * fifths of the front end's time (docs/lowering.md, "Pipeline").
 */
#include <stdio.h>
#include <string.h>

#include "lower_internal.h"
#include "pw_config.h"

#define LOWER_VERIFY_DEFAULT (PW_LOWER_VERIFY_EACH != 0)

static bool want_print(const lower_pipeline_options *o, const char *pass) {
  return o && o->print_after && (!strcmp(o->print_after, pass) || !strcmp(o->print_after, "all"));
}

bool lower_contract_covers(const lower_contract *c, const ir_instr *i) {
  bool in = false;
  if (i->op == ir_op_sreg && i->sreg < ir_sreg_count) {
    in = (ir_sreg_infos[i->sreg].flags & c->sreg_flags) != 0;
    for (const ir_sreg *s = c->sregs; s && *s != ir_sreg_count && !in; s++) in = *s == i->sreg;
  }
  if (!in && i->op < ir_op_count) {
    in = (ir_op_infos[i->op].flags & c->op_flags) != 0;
    for (const ir_op *o = c->ops; o && *o != ir_op_count && !in; o++) in = *o == i->op;
  }
  return in && (!c->form || c->form(i, NULL));
}

/* The first instruction of c's set left in each function not marked
 * failed, reported; false if there was one. */
static bool check_contract(ir_module *m, const lower_contract *c, pw_diag *d) {
  bool ok = true;
  ir_foreach_func(m, f) {
    if (f->is_decl || f->failed_at) continue;
    ir_foreach_block(f, b) ir_foreach_instr(b, i) {
      if (!lower_contract_covers(c, i)) continue;
      char text[256] = "";   /* the instruction as printed, cut at 255 bytes */
      FILE *s = fmemopen(text, sizeof text - 1, "w");
      if (s) {
        ir_print_instr(s, i);
        fclose(s);
      }
      size_t n = strlen(text);
      while (n && (text[n - 1] == '\n' || text[n - 1] == ' ')) text[--n] = 0;
      const char *t = text;
      while (*t == ' ') t++;
      lower_error(d, i, "internal error: '%s' remains after %s, whose contract says it eliminates it", t, c->pass);
      ok = false;
      goto next_func;
    }
  next_func:;
  }
  return ok;
}

bool lower_pass_done(ir_module *m, const lower_contract *c, bool progress, const lower_pipeline_options *opt) {
  pw_diag *diag = opt ? opt->diag : NULL;
  bool verify = LOWER_VERIFY_DEFAULT || (opt && opt->verify_each);
  if (progress) {
    ir_foreach_func(m, f) ir_invalidate_analyses(f, c->preserves);
    if (want_print(opt, c->pass)) {
      FILE *out = opt->print_out ? opt->print_out : stdout;
      fprintf(out, "; IR after %s\n", c->pass);
      ir_print_module(out, m);
    }
    if (verify && !ir_verify(m, NULL, diag)) {
      if (diag) pw_error(diag, m->source_name ? m->source_name : "<module>", "the IR does not verify after %s", c->pass);
      return false;
    }
  } else if (want_print(opt, c->pass)) {
    fprintf(opt->print_out ? opt->print_out : stdout, "; IR after %s: unchanged\n", c->pass);
  }
  return !verify || check_contract(m, c, diag);
}
