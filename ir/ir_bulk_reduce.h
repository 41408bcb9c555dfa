/* ir/ir_bulk_reduce.h: which reductions cp.reduce.async.bulk{.tensor}
 * takes (ir_bulk_reduce.def) and the element type a tensor map's data type
 * reduces as.  Shared by the emulator (emu/emu_mbarrier.c) and lowering
 * (lower/lower_async.c), so both refuse the same forms. */
#ifndef PW_IR_BULK_REDUCE_H
#define PW_IR_BULK_REDUCE_H

#include <stdbool.h>

#include "ir/ir.h"

typedef enum ir_bulk_red_form { IR_BULK_RED_GLOBAL, IR_BULK_RED_CLUSTER, IR_BULK_RED_TENSOR } ir_bulk_red_form;

/* Whether op.type is a reduction of that form; noftz: the instruction's
 * .noftz (required on the f16/bf16 additions, refused elsewhere). */
static inline bool ir_bulk_red_ok(ir_atomop op, ir_type t, bool noftz, ir_bulk_red_form form) {
  static const struct { uint8_t op, type, col[3]; } rows[] = {
#define BULK_RED(o, ty, g, c, tn) {o, ir_type_##ty, {g, c, tn}},
#include "ir/ir_bulk_reduce.def"
#undef BULK_RED
  };
  for (unsigned k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    if (rows[k].op != op || rows[k].type != t) continue;
    unsigned v = rows[k].col[form];
    if (form == IR_BULK_RED_TENSOR) return v != 0;
    return v == 2 ? noftz : v == 1 && !noftz;
  }
  return false;
}

/* The element type a CUtensorMapDataType (cuda.h's order) reduces as;
 * ir_type_none for those no reduction takes (u8, u16, tf32, the packed
 * sub-byte types).  FLOAT32_FTZ adds as f32, whose atomic addition flushes
 * subnormals anyway (atom.add.f32). */
static inline ir_type ir_tmap_dtype_red_type(unsigned dtype) {
  static const uint8_t types[] = {
    ir_type_none, ir_type_none, ir_type_u32, ir_type_s32, ir_type_u64, ir_type_s64,
    ir_type_f16, ir_type_f32, ir_type_f64, ir_type_bf16, ir_type_f32,
  };
  return dtype < sizeof types ? (ir_type)types[dtype] : ir_type_none;
}

#endif
