/* ir/ir_target.h: the AMD GPUs ptxwave knows, one row each of the one
 * target table ir/ir_targets.def, and their hardware generations.
 *
 * A module lowered for a target points at its row (m->facts.target,
 * ir.h); lower/, codegen/, emu/ and runtime/ read the same rows, so a fact
 * is written once.  Rows are static and never change: compare them by
 * pointer.
 */
#ifndef PW_IR_TARGET_H
#define PW_IR_TARGET_H

#include <stdbool.h>
#include <stdint.h>

typedef struct ir_module ir_module;

/* ---- generations (IR_GEN rows) ------------------------------------------ */
typedef enum ir_gen {
#define IR_GEN(name, ...) ir_gen_##name,
#include "ir/ir_targets.def"
  ir_gen_count
} ir_gen;

/* A field of the hardware id register: bits [lo + bits - 1 : lo]; bits 0:
 * the generation has none. */
typedef struct ir_hw_field {
  uint8_t lo, bits;
} ir_hw_field;

typedef struct ir_gen_info {
  const char *name;        /* "gfx9" */
  uint8_t hw_id_reg;       /* s_getreg_b32 id: 4 (HW_ID, gfx9), 23 (HW_ID1, gfx10+) */
  /* its fields (ir_targets.def): the wave's slot, the unit that runs a
   * workgroup (CU on gfx9, WGP on gfx10+), the shader array, the engine */
  ir_hw_field wave, unit, sa, se;
} ir_gen_info;

extern const ir_gen_info ir_gen_infos[ir_gen_count];

/* ---- processors (IR_TARGET rows) ---------------------------------------- */
/* features: only what something reads (ir_targets.def says who) */
enum {
  IR_TARGET_MEMTIME = 1u << 0,          /* s_memrealtime (gfx9, gfx10.3) */
  IR_TARGET_TRAP_OUT_OF_LINE = 1u << 1, /* llvm.trap in a function of its own (gfx11, LLVM 22) */
};

typedef struct ir_target {
  const char *name;           /* "gfx942" (LLVM's -mcpu), or the pseudo targets "wave64" / "wave32" */
  ir_gen gen;                 /* its hardware generation: ir_gen_infos[gen] */
  uint8_t wave_size;          /* 64 on gfx9 (CDNA), 32 on gfx10+ (RDNA) */
  uint32_t lds_bytes;         /* LDS per workgroup */
  uint32_t features;          /* IR_TARGET_* */
  const char *llvm_features;  /* LLVM target-features string */
  bool codegen;               /* a codegen target (codegen.h: cg_target_find) */
} ir_target;

/* The row of that name (any row, codegen or not), or NULL. */
const ir_target *ir_target_find(const char *name);
/* The pseudo target of a wave size, for tests: "wave64" for 64, else "wave32". */
const ir_target *ir_target_for_wave(unsigned wave_size);
/* Every row, *n set to their count; the codegen rows come first. */
const ir_target *ir_targets(unsigned *n);
/* The generation of t. */
static inline const ir_gen_info *ir_target_gen(const ir_target *t) { return &ir_gen_infos[t->gen]; }

/* Sets m's target facts for t: m->facts.target = t and its wave size.
 * lower_module does it first; a tool or test that runs a pass alone does
 * the same before it (the passes read the facts, not their options). */
void ir_module_set_target(ir_module *m, const ir_target *t);

#endif
