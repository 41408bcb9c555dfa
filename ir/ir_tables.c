/* ir/ir_tables.c: the info tables generated from ir_ops.def, ir_types.def
 * and ir_sregs.def, and name lookups over them.  All const. */
#include <string.h>

#include "ir.h"

const ir_type_info ir_type_infos[ir_type_count] = {
#define IR_TYPE(name, ptx, bits, kind) [ir_type_##name] = {ptx, bits, kind},
#include "ir_types.def"
#undef IR_TYPE
};

const ir_op_info ir_op_infos[ir_op_count] = {
#define IR_OP(name, nsrc, ndst, res, flags, ptx, sec) [ir_op_##name] = {#name, nsrc, ndst, res, flags, ptx, sec},
#include "ir_ops.def"
#undef IR_OP
};

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
