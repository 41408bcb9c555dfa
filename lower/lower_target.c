/* lower/lower_target.c: the targets lowering knows, every row of the one
 * target table lower/targets.def (codegen reads the same file). */
#include <string.h>

#include "lower.h"

static const lower_target targets[] = {
#define PW_TARGET(name, wave, lds_kib, feats, llvm_features, cg) \
  {#name, wave, ((feats) & LOWER_FEAT_DOT) != 0, (lds_kib) * 1024u, feats},
#include "targets.def"
#undef PW_TARGET
};

const lower_target *lower_find_target(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (!strcmp(targets[i].name, name)) return &targets[i];
  return NULL;
}

const lower_target *lower_target_for_wave(unsigned wave_size) {
  return lower_find_target(wave_size == 64 ? "wave64" : "wave32");
}
