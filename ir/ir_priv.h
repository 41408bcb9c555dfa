/* ir/ir_priv.h: internals shared by the files of ir/ (hash maps, the
 * modifier-field table, expected types, the dominator solver, the printer's
 * hooks).  Not an API for other layers: they include ir.h and ir_builder.h.
 */
#ifndef PW_IR_PRIV_H
#define PW_IR_PRIV_H

#include <stdio.h>

#include "ir.h"
#include "ir_builder.h"
#include "util/pw_map.h"

/* ---- memory (ir_module.c) ---------------------------------------------- */
/* Arena allocation that dies on exhaustion (QBE's alloc: running out of
 * memory is not an input error we can report). */
void *ir_alloc(pw_arena *a, size_t size);
#define IR_NEW(a, T) ((T *)ir_alloc((a), sizeof(T)))
#define IR_NEW_ARRAY(a, T, n) ((T *)ir_alloc_array((a), (n), sizeof(T)))
void *ir_alloc_array(pw_arena *a, size_t n, size_t elem);
/* Grows an arena array from n to at least want elements (the old one stays
 * in the arena); returns the new array. */
void *ir_grow_array(pw_arena *a, void *old, size_t n, size_t want, size_t elem);

/* ---- structure helpers (ir_module.c, ir_builder.c) --------------------- */
/* A function not yet in m->funcs (the parser's forward references); link it
 * when its definition is reached. */
ir_func *ir_func_new_unlinked(ir_module *m, const char *name, bool is_kernel);
void ir_func_link(ir_func *f);
/* Enters f / g under its current name, replacing the old entry (ir_link). */
void ir_symtab_set_func(ir_module *m, ir_func *f);
void ir_symtab_set_global(ir_module *m, ir_global *g);
/* A block outside the layout (forward references); ir_block_link appends. */
ir_block *ir_block_new_unlinked(ir_func *f, const char *name);
void ir_block_link(ir_block *b);
/* An instruction with zeroed operand arrays, inserted at the cursor. */
ir_instr *ir_instr_new(ir_builder *b, ir_op op, ir_type type, unsigned nsrc, unsigned ndst);
/* A result value for i->dst[k] of type t (fills kind, def, index, id). */
ir_value *ir_instr_make_dst(ir_instr *i, unsigned k, ir_type t);
/* Phi operand arrays have capacity ir_phi_cap(nsrc) so they can grow. */
static inline unsigned ir_phi_cap(unsigned n) {
  unsigned c = 4;
  while (c < n) c *= 2;
  return c;
}
/* Block preds from terminators, in layout order, without touching phis;
 * edges to blocks outside f's layout are left out (the verifier reports
 * them).  Renumbers block ids in layout order. */
void ir_compute_preds_raw(ir_func *f);

/* ---- modifier fields (ir_names.c) ------------------------------------- */
typedef struct ir_mod_field_info {
  const char *name;            /* the field's C name, for messages */
  const char *const *spell;    /* spelling of each value (NULL: invalid value) */
  unsigned nspell;
  const char *zero;            /* printed for value 0 on ops that use the field
                                  (shf .r, .wrap; dp2a .lo), else NULL */
} ir_mod_field_info;

extern const ir_mod_field_info ir_mod_field_infos[ir_mod_count];
/* The same as bit masks (bit f = field f): the fields op uses, the fields
 * set (non-zero) in m, the fields with a spelling for value 0. */
uint64_t ir_op_mod_mask(ir_op op);
uint64_t ir_mods_nonzero(const ir_mods *m);
extern const uint64_t ir_mod_zero_spelled;
/* Spelling of value v of field f, or NULL if v is not a valid value. */
const char *ir_mod_spelling(ir_mod_field f, unsigned v);
/* Enum name of a special register (ir_sreg_<name>), spelling in .pwir. */
const char *ir_sreg_name(ir_sreg s);

/* ---- types (ir_builder.c) --------------------------------------------- */
/* The type result k of i gets from the opcode table's rule and the
 * instruction's modifiers (mul.wide doubles, .cc adds a pred carry, sreg
 * reads its table), or ir_type_none where the rule says "stated per
 * instruction".  The builder, printer, parser and verifier share it. */
ir_type ir_expected_dst_type(const ir_instr *i, unsigned k);
/* The type an untyped literal operand k of i gets in .pwir text (never
 * none): the printer omits a constant's type when it equals this. */
ir_type ir_default_src_type(const ir_instr *i, unsigned k);
/* Whether operand k of i must be a predicate (guards aside). */
bool ir_src_is_pred(const ir_instr *i, unsigned k);
/* Width in bytes and printed type of one initializer item of a variable of
 * type t: the type itself, b8 below a byte, b64 above 8 bytes (b128). */
static inline unsigned ir_init_elem(ir_type t, ir_type *et) {
  unsigned bits = ir_type_bits(t);
  if (bits < 8) {
    *et = ir_type_b8;
    return 1;
  }
  if (bits > 64) {
    *et = ir_type_b64;
    return 8;
  }
  *et = t;
  return (bits + 7) / 8;
}
/* Masks bits to the width of t (constants are stored canonical). */
uint64_t ir_mask_bits(ir_type t, uint64_t bits);

/* ---- dominators (ir_dom.c) -------------------------------------------- */
/* Cooper-Harvey-Kennedy on a graph given as CSR arrays: n nodes, root r;
 * succ[soff[v]..soff[v+1]) are v's successors (for the DFS from r),
 * pred[poff[v]..poff[v+1]) its predecessors.  Fills idom[v] (the root's is
 * itself; IR_DOM_NONE for nodes not reachable from r) and the dominator
 * tree's DFS numbers pre[v], post[v] (0 for unreachable nodes), so that
 * a dominates b iff pre[a] <= pre[b] && post[b] <= post[a]. */
#define IR_DOM_NONE UINT32_MAX
void ir_dom_solve(uint32_t n, uint32_t r, const uint32_t *soff, const uint32_t *succ,
                  const uint32_t *poff, const uint32_t *pred, uint32_t *idom, uint32_t *pre,
                  uint32_t *post);

/* ---- printer internals (ir_print.c) ----------------------------------- */
typedef struct ir_printer ir_printer;
typedef enum ir_print_at { IR_PRINT_AT_FUNC, IR_PRINT_AT_BLOCK, IR_PRINT_AT_INSTR } ir_print_at;
typedef void (*ir_print_hook)(ir_printer *p, ir_print_at at, const void *what, void *ctx);
struct ir_printer {
  FILE *out;
  const ir_func *f;
  uint32_t *num;               /* value id -> printed number + 1 (0: none) */
  pw_map blocks;               /* block -> layout index + 1 */
  pw_arena scratch;
  uint8_t addr_size;
  bool locs;
  /* The verifier's inline errors: after the function header (what = f),
   * after each block label (what = block), after each instruction. */
  ir_print_hook hook;
  void *hook_ctx;
  /* When set, blocks and instructions it rejects are left out, each run
   * of them printed as one "; ..." line (the verifier's dumps of big
   * functions). */
  bool (*show)(ir_printer *p, ir_print_at at, const void *what, void *ctx);
};
void ir_printer_begin(ir_printer *p, FILE *out, const ir_func *f);
void ir_printer_end(ir_printer *p);
void ir_printer_func(ir_printer *p);
void ir_printer_value(ir_printer *p, const ir_value *v);
void ir_printer_block_name(ir_printer *p, const ir_block *b);

#endif
