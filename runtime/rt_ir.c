/* runtime/rt_ir.c: checks on a module's IR that both backends make before
 * loading it.
 *
 * An instruction the PTX front end does not know (or a modifier it does not
 * decode) is kept as ir_op_opaque with its spelling.  No backend can run
 * it, so the module load fails as CUDA's JIT would fail the whole module
 * (CUDA_ERROR_INVALID_PTX), naming the instruction, the function and the
 * PTX line, rather than failing a later launch.
 */
#include <stdio.h>

#include "codegen/codegen.h"
#include "runtime/rt.h"

/* The scan is codegen's (cg_first_opaque), the one cg_compile_ptx makes
 * for the HIP backend and `ptxwave convert`. */
bool rt_ir_supported(const ir_module *m, const char *name, char *err, size_t cap) {
  const ir_func *f = NULL;
  const ir_instr *i = cg_first_opaque(m, &f);
  if (!i) return true;
  snprintf(err, cap, "%s:%u: %s %s uses '%s', which ptxwave does not support", name, i->loc.line,
           f->is_kernel ? "kernel" : "function", f->name, i->opaque ? i->opaque : "?");
  return false;
}
