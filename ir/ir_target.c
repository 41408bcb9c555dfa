/* ir/ir_target.c: the rows of the one target table ir/ir_targets.def and
 * their lookups (ir_target.h). */
#include <string.h>

#include "ir/ir.h"

const ir_gen_info ir_gen_infos[ir_gen_count] = {
#define IR_GEN(nm, reg, wl, wb, ul, ub, sl, sb, el, eb) \
  [ir_gen_##nm] = {#nm, reg, {wl, wb}, {ul, ub}, {sl, sb}, {el, eb}},
#include "ir/ir_targets.def"
};

#define IR_TARGET_CG 1
#define IR_TARGET_NOCG 0
static const ir_target targets[] = {
#define IR_TARGET(nm, gen, wave, lds_kib, features, llvm_features, cg) \
  {#nm, ir_gen_##gen, wave, (lds_kib) * 1024u, features, llvm_features, IR_TARGET_##cg},
#include "ir/ir_targets.def"
};

const ir_target *ir_target_find(const char *name) {
  if (!name) return NULL;
  for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
    if (!strcmp(targets[i].name, name)) return &targets[i];
  return NULL;
}

const ir_target *ir_target_for_wave(unsigned wave_size) {
  return ir_target_find(wave_size == 64 ? "wave64" : "wave32");
}

const ir_target *ir_targets(unsigned *n) {
  *n = (unsigned)(sizeof targets / sizeof *targets);
  return targets;
}

void ir_module_set_target(ir_module *m, const ir_target *t) {
  m->facts.target = t;
  m->facts.wave_size = t->wave_size;
}
