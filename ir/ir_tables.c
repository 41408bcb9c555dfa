/* ir/ir_tables.c: the info tables generated from ir_ops.def, ir_types.def
 * and ir_sregs.def, and name lookups over them.  All const. */
#include <string.h>

#include "ir_priv.h"

const ir_type_info ir_type_infos[ir_type_count] = {
#define IR_TYPE(name, ptx, bits, kind) [ir_type_##name] = {ptx, bits, kind},
#include "ir_types.def"
#undef IR_TYPE
};

/* The vocabulary of ir_ops.def's columns (its legend). */
#define P(k) (1u << (k))
#define P_LAST IR_PRED_LAST
#define S(from, kind) from, IR_SRC_##kind
#define M(f) (UINT64_C(1) << ir_mod_##f)
#define MEMORD (M(sem) | M(scope) | M(space))
#define HINTS (M(l1evict) | M(l2evict) | M(has_cache_hint))
#define FLOAT (M(rnd) | M(ftz) | M(sat))

const ir_op_info ir_op_infos[ir_op_count] = {
#define IR_OP(name, nsrc, ndst, res, flags, ptx, sec, level, addr, pred, srcs, count, div, mods) \
  [ir_op_##name] = {#name, nsrc, ndst, res, flags, ptx, sec, IR_OPLEVEL_##level, addr, pred, srcs, \
                    IR_COUNT_##count, IR_DIV_##div, mods},
#include "ir_ops.def"
#undef IR_OP
};

bool ir_instr_is_unlowered(const ir_instr *i) {
  if (i->op >= ir_op_count) return false;
  if (i->op == ir_op_sreg) return i->sreg < ir_sreg_count && (ir_sreg_infos[i->sreg].flags & IR_SR_WARP);
  return ir_op_infos[i->op].level == IR_OPLEVEL_PTX;
}

const ir_sreg_info ir_sreg_infos[ir_sreg_count] = {
#define IR_SREG(name, ptx, type, ncomp, flags) [ir_sreg_##name] = {ptx, ir_type_##type, ncomp, flags},
#include "ir_sregs.def"
#undef IR_SREG
};

static bool eq(const char *a, const char *s, size_t len) {
  return strlen(a) == len && memcmp(a, s, len) == 0;
}

ir_type ir_type_from_name(const char *s, size_t len) {
  for (int t = 1; t < ir_type_count; t++)
    if (eq(ir_type_infos[t].name, s, len)) return (ir_type)t;
  return ir_type_none;
}

ir_op ir_op_from_name(const char *s, size_t len) {
  for (int o = 0; o < ir_op_count; o++)
    if (eq(ir_op_infos[o].name, s, len)) return (ir_op)o;
  return ir_op_count;
}
