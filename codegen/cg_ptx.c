/* codegen/cg_ptx.c: the one compile entry of `ptxwave compile`, `ptxwave
 * convert` and the runtime's HIP backend (docs/codegen.md "From PTX"):
 *
 *   PTX text --ptx_parse--> IR --no opaque instruction--> --ir_verify-->
 *   --lower_module(target)--> lowered IR --cg_compile--> LLVM IR | asm |
 *   object | .hsaco
 *
 * Lowering is per target (a warp is a wave on wave32 and half of one on
 * wave64), and lower_module rewrites the module in place, so every target
 * gets its own parse: parsing costs a fraction of the LLVM compile
 * (docs/codegen.md "Measurements").  A .pwir text (the IR's textual form,
 * by the name's suffix) already marked lowered is compiled as it is.
 *
 * cg_ptx_info (optional) gives callers that report on thousands of modules
 * the count of PTX instructions and a short reason for a failure: the PTX
 * instruction of the first construct that stops the module.  All state is
 * local to the call: any number of threads may compile at once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/codegen.h"
#include "ir/ir_link.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"

const ir_instr *cg_first_opaque(const ir_module *m, const ir_func **fn) {
  for (const ir_func *f = m->funcs; f; f = f->next)
    for (const ir_block *b = f->entry; b; b = b->next)
      for (const ir_instr *i = b->first; i; i = i->next)
        if (i->op == ir_op_opaque) {
          if (fn) *fn = f;
          return i;
        }
  return NULL;
}

/* The reason of a failure from the messages it left: "cannot compile
 * 'INSTR' in kernel ..." (cg_emit.c) gives INSTR, else the first error's
 * text up to the end of its line, else fallback. */
static void reason_from_text(const char *text, const char *fallback, char *reason, size_t cap) {
  const char *p = strstr(text, "cannot compile '");
  if (p) {
    p += strlen("cannot compile '");
    size_t n = strcspn(p, "'\n");
    snprintf(reason, cap, "%.*s", (int)n, p);
    return;
  }
  p = strstr(text, "error: ");
  if (!p) {
    snprintf(reason, cap, "%s", fallback);
    return;
  }
  p += strlen("error: ");
  snprintf(reason, cap, "%.*s", (int)strcspn(p, "\n"), p);
}

bool cg_compile_ptx(const char *name, const char *text, size_t len, const cg_options *opt,
                    cg_emit_kind kind, cg_output *out, pw_diag *d) {
  memset(out, 0, sizeof *out);
  if (!name) name = "<ptx>";
  cg_ptx_info scratch, *info = opt->info ? opt->info : &scratch;
  memset(info, 0, sizeof *info);
  /* The reason is read back from the messages: they must be collected
   * here when the caller prints them (or wants none). */
  pw_diag local, *dd = d;
  bool collect = !d || (d->out && opt->info);
  if (collect) {
    pw_diag_init(&local, NULL);
    local.max_errors = d ? d->max_errors : 4;
    dd = &local;
  }
  size_t mark = dd->buf_len;  /* this compile's messages start here */
  size_t nl = strlen(name);
  ptx_parse_stats st = {0};
  ir_module *m = NULL;
  bool ok = opt->target != NULL;
  if (!ok) {
    pw_error(dd, name, "no target");
    snprintf(info->reason, sizeof info->reason, "no target");
  } else {
    m = nl > 5 && !strcmp(name + nl - 5, ".pwir") ? ir_parse(name, text, len, dd)
                                                 : ptx_parse(name, text, len, dd, &st);
    info->instrs = st.instrs;
    if (!(ok = m != NULL)) snprintf(info->reason, sizeof info->reason, "PTX does not parse");
  }
  /* a complete code object: what no kernel reaches can never run
   * (ir_link_drop_unreached; ptxas drops it too) */
  if (ok && kind == CG_EMIT_HSACO && !opt->no_opt) ir_link_drop_unreached(m);
  /* An instruction the front end kept opaque: no backend can run it.  The
   * runtime fails the module load on it (rt_ir.c), naming it. */
  const ir_func *of = NULL;
  const ir_instr *oi = ok ? cg_first_opaque(m, &of) : NULL;
  if (oi) {
    const char *what = oi->opaque ? oi->opaque : "unknown instruction";
    snprintf(info->reason, sizeof info->reason, "%s", what);
    pw_error_at(dd, &(pw_src){name, text, len}, oi->loc.line, oi->loc.col,
                "%s '%s' uses '%s', which ptxwave does not support (target %s)",
                of->is_kernel ? "kernel" : "function", of->name, what, opt->target->name);
    ok = false;
  }
  if (ok && !ir_verify(m, NULL, dd)) {
    snprintf(info->reason, sizeof info->reason, "internal: the parsed IR does not verify");
    ok = false;
  }
  /* a complete code object: every used symbol defined here (relocatable
   * device code goes through --emit obj or a link, ir/ir_link.h) */
  if (ok && kind == CG_EMIT_HSACO && !(ok = ir_link_check_defined(m, dd)))
    snprintf(info->reason, sizeof info->reason, "undefined symbol");
  if (ok && !opt->no_lower && !m->facts.lowered) {
    const lower_target *lt = lower_find_target(opt->target->name);
    if (!lt) {
      pw_error(dd, name, "internal: no lowering facts for %s", opt->target->name);
      snprintf(info->reason, sizeof info->reason, "internal: no lowering facts");
      ok = false;
    } else if (!(ok = lower_module(m, lt, &(lower_pipeline_options){.diag = dd, .expand_mma = opt->expand_mma}))) {
      const char *what = NULL;
      if (lower_first_unlowered(m, &what) && what)
        snprintf(info->reason, sizeof info->reason, "%s", what);
      else
        reason_from_text(pw_diag_text(dd) + mark, "lowering failed", info->reason,
                         sizeof info->reason);
    }
  }
  pw_src src = {name, text, len};
  if (ok && !(ok = cg_compile(m, &src, opt, kind, out, dd)))
    reason_from_text(pw_diag_text(dd) + mark, "code generation failed", info->reason,
                     sizeof info->reason);
  if (m) ir_module_destroy(m);
  if (ok) info->reason[0] = 0;
  if (collect) {
    if (d) {  /* hand the messages to the caller's stream */
      fputs(pw_diag_text(&local), d->out);
      d->nerrors += local.nerrors;
      d->nwarnings += local.nwarnings;
    }
    pw_diag_fini(&local);
  }
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
  if (ok && kind == CG_EMIT_HSACO && !opt->no_opt) ir_link_drop_unreached(m);
  if (ok && !opt->no_lower) {
    const lower_target *lt = lower_find_target(opt->target->name);
    ok = lt && lower_module(m, lt, &(lower_pipeline_options){.diag = d, .expand_mma = opt->expand_mma});
  }
  /* locations point into several texts: messages name the linked module */
  if (ok) ok = cg_compile(m, &(pw_src){.path = m->source_name}, opt, kind, out, d);
  if (m) ir_module_destroy(m);
  return ok;
}
