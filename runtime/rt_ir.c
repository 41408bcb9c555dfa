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

#include "runtime/rt.h"

bool rt_ir_supported(const ir_module *m, const char *name, char *err, size_t cap) {
  for (const ir_func *f = m->funcs; f; f = f->next)
    for (const ir_block *b = f->entry; b; b = b->next)
      for (const ir_instr *i = b->first; i; i = i->next)
        if (i->op == ir_op_opaque) {
          snprintf(err, cap, "%s:%u: %s %s uses '%s', which ptxwave does not support", name,
                   i->loc.line, f->is_kernel ? "kernel" : "function", f->name,
                   i->opaque ? i->opaque : "?");
          return false;
        }
  return true;
}
