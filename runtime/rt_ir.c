/* runtime/rt_ir.c: what the runtime asks of a module's IR.
 *
 * A module loads whatever instructions it contains (docs/runtime.md,
 * "Per-kernel failure"): an instruction the front end kept opaque, or one a
 * backend cannot run, fails only the launch of a kernel that reaches it.
 * The emulator reports it itself at launch (EMU_ERR_UNSUPPORTED); the HIP
 * backend's compile leaves such kernels out of the code object
 * (cg_compile_ptx), and a launch of one asks here why it is missing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir_link.h"
#include "runtime/rt.h"

bool rt_ir_left_out(const ir_module *m, const char *name, const char *kernel, const char *target, char *err,
                    size_t cap) {
  const ir_func *k = NULL;
  unsigned n = 0, at = 0;
  ir_foreach_func(m, f) {
    if (f->is_kernel && !strcmp(f->name, kernel)) {
      k = f;
      at = n;
    }
    n++;
  }
  if (!k) return false;
  /* the first opaque instruction of each function, through the same reach
   * analysis as the compile's */
  const ir_func **cause = calloc(n ? n : 1, sizeof *cause);
  const ir_instr **saved = calloc(n ? n : 1, sizeof *saved);
  const ir_instr *why = NULL;
  const ir_func *in = NULL;
  if (cause && saved) {
    unsigned j = 0;
    ir_foreach_func(m, f) {
      saved[j++] = f->failed_at;
      ir_foreach_block(f, b) ir_foreach_instr(b, i) if (i->op == ir_op_opaque && !f->failed_at) f->failed_at = i;
    }
    if (ir_link_failure_causes(m, cause) && cause[at]) {
      in = cause[at];
      why = in->failed_at;
    }
    j = 0;
    ir_foreach_func(m, f) f->failed_at = saved[j++];
  }
  free(cause);
  free(saved);
  if (why)
    snprintf(err, cap, "%s:%u: kernel %s uses '%s'%s%s, which ptxwave does not support (target %s)", name,
             why->loc.line, kernel, why->opaque ? why->opaque : ir_op_infos[why->op].ptx,
             in != k ? " in function " : "", in != k ? in->name : "", target);
  else
    snprintf(err, cap, "%s: kernel %s could not be compiled for %s and was left out of the code object "
             "(the compile's warnings name the instruction)", name, kernel, target);
  return true;
}
