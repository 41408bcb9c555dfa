/* ptx/ptx_parse.h: the PTX front end's entry point: PTX text -> SSA IR.
 *
 * One call parses one module (PTX ISA 5.0 to 9.1, .address_size 64) into a
 * new ir_module.  Errors go to d as file:line:col with the source line and
 * a caret; the parser recovers at the next ';' (or the end of a function)
 * and reports several per run.  On any error the result is NULL.  The text
 * need not be NUL-terminated and need not outlive the module.
 *
 * What later stages cannot run is still parsed: "unsupported" is a verdict
 * of lowering or code generation, never of the parser.
 */
#ifndef PW_PTX_PARSE_H
#define PW_PTX_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "util/diag.h"

typedef struct ptx_parse_stats {
  uint64_t instrs;      /* PTX instructions read */
  uint64_t opaque;      /* of which kept as ir_op_opaque (unknown family or modifier) */
  uint64_t funcs;
  uint64_t phis, phis_removed; /* SSA construction: phis made, trivial ones removed */
} ptx_parse_stats;

/* path names the text in messages.  stats may be NULL. */
ir_module *ptx_parse(const char *path, const char *text, size_t len, pw_diag *d,
                     ptx_parse_stats *stats);

#endif
