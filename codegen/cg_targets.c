/* codegen/cg_targets.c: codegen's targets: the rows of the one target
 * table ir/ir_targets.def marked CG (the same rows lower/ reads). */
#include <string.h>

#include "codegen/codegen.h"

const ir_target *cg_target_find(const char *name) {
  const ir_target *t = ir_target_find(name);
  return t && t->codegen ? t : NULL;
}

const ir_target *cg_targets(unsigned *n) {
  unsigned all, k = 0;
  const ir_target *t = ir_targets(&all);
  while (k < all && t[k].codegen) k++;   /* the CG rows come first (ir_targets.def) */
  *n = k;
  return t;
}
