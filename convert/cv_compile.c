/* convert/cv_compile.c: one PTX module to one code object.
 *
 *   ptx_parse -> no opaque instruction (what the runtime refuses to load,
 *   runtime/rt_ir.c) -> ir_verify -> lower_module (the target's wave size)
 *   -> cg_compile (.hsaco, every kernel and its .kd checked)
 *
 * Each step's failure yields a short reason for the report (the PTX
 * instruction where there is one) and the full message in the diag.  All
 * state is local: any number of threads may call this at once.
 */
#include <stdio.h>
#include <string.h>

#include "convert/convert.h"
#include "ir/ir.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"

/* "cannot compile 'INSTR' in kernel ..." (cg_emit.c) -> INSTR */
static void reason_from_text(const char *text, const char *fallback, char *reason, size_t cap) {
  const char *p = strstr(text, "cannot compile '");
  if (p) {
    p += strlen("cannot compile '");
    const char *q = strchr(p, '\'');
    size_t n = q ? (size_t)(q - p) : strlen(p);
    if (n >= cap) n = cap - 1;
    memcpy(reason, p, n);
    reason[n] = 0;
    return;
  }
  /* else the message after "error: ", up to the end of its line */
  p = strstr(text, "error: ");
  if (!p) {
    snprintf(reason, cap, "%s", fallback);
    return;
  }
  p += 7;
  size_t n = strcspn(p, "\n");
  if (n >= cap) n = cap - 1;
  snprintf(reason, cap, "%.*s", (int)n, p);
}

bool cv_compile(const char *name, const char *ptx, size_t len, const cg_target *t,
                cg_output *out, uint64_t *instrs, char *reason, size_t cap, pw_diag *d) {
  memset(out, 0, sizeof *out);
  *instrs = 0;
  pw_diag local;
  pw_diag_init(&local, NULL);
  local.max_errors = 4;
  ptx_parse_stats st = {0};
  ir_module *m = ptx_parse(name, ptx, len, &local, &st);
  *instrs = st.instrs;
  bool ok = m != NULL;
  if (!ok) snprintf(reason, cap, "PTX does not parse");
  for (const ir_func *f = ok ? m->funcs : NULL; f && ok; f = f->next)
    for (const ir_block *b = f->entry; b && ok; b = b->next)
      for (const ir_instr *i = b->first; i && ok; i = i->next)
        if (i->op == ir_op_opaque) {
          snprintf(reason, cap, "%s", i->opaque ? i->opaque : "unknown instruction");
          pw_error(&local, name, "%s '%s' line %u uses '%s', which ptxwave does not support",
                   f->is_kernel ? "kernel" : "function", f->name, i->loc.line, reason);
          ok = false;
        }
  if (ok && !ir_verify(m, NULL, &local)) {
    snprintf(reason, cap, "internal: the parsed IR does not verify");
    ok = false;
  }
  if (ok) {
    const lower_target *lt = lower_find_target(t->name);
    if (!lt) lt = lower_target_for_wave(t->wave_size);
    lower_pipeline_options lo = {.diag = &local};
    if (!lower_module(m, lt, &lo)) {
      const char *what = NULL;
      if (lower_first_unlowered(m, &what) && what) snprintf(reason, cap, "%s", what);
      else reason_from_text(pw_diag_text(&local), "lowering failed", reason, cap);
      ok = false;
    }
  }
  if (ok) {
    cg_options co = {.target = t};
    pw_src src = {name, ptx, len};
    if (!cg_compile(m, &src, &co, CG_EMIT_HSACO, out, &local)) {
      reason_from_text(pw_diag_text(&local), "code generation failed", reason, cap);
      ok = false;
    }
  }
  if (!ok && d) pw_error(d, name, "%s: %s", t->name, pw_diag_text(&local));
  if (m) ir_module_destroy(m);
  pw_diag_fini(&local);
  return ok;
}
