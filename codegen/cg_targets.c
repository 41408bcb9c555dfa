/* codegen/cg_targets.c: codegen's view of the one target table,
 * lower/targets.def: the rows marked CG, with the columns codegen needs. */
#include <string.h>

#include "codegen/codegen.h"

#define CG_ROW_CG(...) __VA_ARGS__
#define CG_ROW_NOCG(...)
static const cg_target targets[] = {
#define PW_TARGET(name, wave, lds_kib, feats, llvm_features, cg) \
  CG_ROW_##cg({#name, wave, (lds_kib) * 1024u, feats, llvm_features},)
#include "lower/targets.def"
#undef PW_TARGET
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
