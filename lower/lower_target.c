/* lower/lower_target.c: the targets lowering knows (their wave size and the
 * features a pass asks about).  codegen's target table (design.md, "Code
 * generation") is not on this branch; this is lower/'s own small table, to
 * be replaced by codegen's when the branches meet. */
#include <string.h>

#include "lower.h"

static const lower_target targets[] = {
  /* CDNA: wave64 only (AMDGPUUsage: "wavefrontsize64" on gfx9) */
  {"gfx908", 64, true},
  {"gfx90a", 64, true},
  {"gfx940", 64, true},
  {"gfx941", 64, true},
  {"gfx942", 64, true},
  {"gfx950", 64, true},
  /* RDNA: wave32 by default */
  {"gfx1030", 32, true},
  {"gfx1100", 32, true},
  {"gfx1101", 32, true},
  {"gfx1102", 32, true},
  {"gfx1150", 32, true},
  {"gfx1151", 32, true},
  {"gfx1200", 32, true},
  {"gfx1201", 32, true},
  {"gfx1250", 32, true},
  /* pseudo targets for tests */
  {"wave64", 64, false},
  {"wave32", 32, false},
};

const lower_target *lower_find_target(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (!strcmp(targets[i].name, name)) return &targets[i];
  return NULL;
}

const lower_target *lower_target_for_wave(unsigned wave_size) {
  return lower_find_target(wave_size == 64 ? "wave64" : "wave32");
}
