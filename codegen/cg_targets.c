/* codegen/cg_targets.c: the target table built from cg_targets.def. */
#include <string.h>

#include "codegen/codegen.h"

static const cg_target targets[] = {
#define CG_TARGET(name, wave, lds_kib, feats, llvm_features) \
  {#name, wave, (lds_kib) * 1024u, feats, llvm_features},
#include "cg_targets.def"
#undef CG_TARGET
};

const cg_target *cg_target_find(const char *name) {
  for (unsigned i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(targets[i].name, name)) return &targets[i];
  return NULL;
}

const cg_target *cg_targets(unsigned *n) {
  *n = sizeof targets / sizeof targets[0];
  return targets;
}
