/* ir/ir_builder.h: the only way to make IR (style.md #6, NIR's nir_builder).
 *
 * A builder holds a cursor (a block, and an instruction to insert before or
 * NULL to append) and the source position stamped on new instructions.
 * One generic constructor, ir_build(), makes any instruction from the opcode
 * table; the short helpers below cover the common shapes.  Optional fields
 * go through a compound literal:
 *
 *     ir_value *s = ir_alu2(b, ir_op_add, ir_type_f32, x, y, .rnd = IR_RND_RZ, .ftz = 1);
 *     ir_value *v = ir_shfl(b, ir_type_b32, x, lane, c, mask, .shfl = IR_SHFL_BFLY, .sync = 1);
 *
 * Passes never fill in ir_instr by hand.
 */
#ifndef PW_IR_BUILDER_H
#define PW_IR_BUILDER_H

#include "ir.h"

typedef struct ir_builder {
  ir_module *module;
  ir_func *func;
  ir_block *block;         /* insertion block */
  ir_instr *before;        /* insert before this instruction; NULL: append */
  ir_loc loc;              /* stamped on every new instruction */
} ir_builder;

ir_builder ir_builder_at_end(ir_block *b);
ir_builder ir_builder_before(ir_instr *i);
ir_builder ir_builder_after(ir_instr *i);

/* ---- module structure ------------------------------------------------- */
ir_func *ir_func_create(ir_module *m, const char *name, bool is_kernel);
/* Appends a parameter (kernel .param, .func .param, or register param) and
 * returns it; CUDA's layout offset is assigned by ir_func_layout_params.
 * f->params is one array that grows: pointers into it (the returned one,
 * ir_sym_param symbols) are stable once the last parameter is added, so add
 * them all before building the body (PTX declares them in the header). */
ir_param *ir_func_add_param(ir_func *f, const char *name, ir_type type, ir_space space,
                            uint32_t align, uint64_t count);
ir_param *ir_func_add_ret(ir_func *f, const char *name, ir_type type, ir_space space,
                          uint32_t align, uint64_t count);
/* Assigns each .param its offset: each aligned to its alignment, in order
 * (the CUDA kernel parameter layout, design.md "Code generation"). */
void ir_func_layout_params(ir_func *f);
/* A module-scope variable (owner NULL) or a function-scope one. */
ir_global *ir_global_create(ir_module *m, ir_func *owner, const char *name, ir_space space,
                            ir_type type, uint64_t count, uint32_t align);
/* A new block appended to f's layout (or inserted after `after`). */
ir_block *ir_block_create(ir_func *f, const char *name);
ir_block *ir_block_create_after(ir_func *f, ir_block *after, const char *name);
void ir_block_add_pred(ir_block *b, ir_block *pred);
/* Moves the instructions from `at` to the end of its block into a new block
 * placed after it; returns the new block (used to split at a guarded
 * terminator). */
ir_block *ir_block_split_before(ir_instr *at, const char *name);

/* ---- values ----------------------------------------------------------- */
ir_value *ir_imm(ir_builder *b, ir_type t, uint64_t bits);
ir_value *ir_imm_f32(ir_builder *b, float f);
ir_value *ir_imm_f64(ir_builder *b, double d);
ir_value *ir_undef(ir_builder *b, ir_type t);
ir_value *ir_symref(ir_builder *b, ir_symbol sym, int64_t offset, ir_type t);
static inline ir_symbol ir_sym_global(ir_global *g) { return (ir_symbol){.kind = IR_SYM_GLOBAL, .global = g}; }
static inline ir_symbol ir_sym_func(ir_func *f) { return (ir_symbol){.kind = IR_SYM_FUNC, .func = f}; }
static inline ir_symbol ir_sym_param(ir_param *p) { return (ir_symbol){.kind = IR_SYM_PARAM, .param = p}; }
/* A fresh value with the next id of the function (results, register params). */
ir_value *ir_value_create(ir_func *f, ir_value_kind kind, ir_type t);

/* ---- instructions ----------------------------------------------------- */
/* The generic constructor: op with its type suffix, nsrc operands, ndst
 * results of the given types (dst_types may be NULL when ndst <= 1: the
 * result rule of the opcode table decides), modifiers (NULL: none).
 * Returns the instruction, inserted at the cursor. */
ir_instr *ir_build(ir_builder *b, ir_op op, ir_type type, unsigned nsrc, ir_value *const *src,
                   unsigned ndst, const ir_type *dst_types, const ir_mods *mods);

/* One result: returns it. */
ir_value *ir_build_value(ir_builder *b, ir_op op, ir_type type, unsigned nsrc,
                         ir_value *const *src, const ir_mods *mods);

#define IR_MODS(...) (&(ir_mods){__VA_ARGS__})
#define ir_alu1(b, op, t, x, ...) \
  ir_build_value((b), (op), (t), 1, (ir_value *[]){(x)}, IR_MODS(__VA_ARGS__))
#define ir_alu2(b, op, t, x, y, ...) \
  ir_build_value((b), (op), (t), 2, (ir_value *[]){(x), (y)}, IR_MODS(__VA_ARGS__))
#define ir_alu3(b, op, t, x, y, z, ...) \
  ir_build_value((b), (op), (t), 3, (ir_value *[]){(x), (y), (z)}, IR_MODS(__VA_ARGS__))
#define ir_add(b, t, x, y, ...) ir_alu2(b, ir_op_add, t, x, y, __VA_ARGS__)
#define ir_sub(b, t, x, y, ...) ir_alu2(b, ir_op_sub, t, x, y, __VA_ARGS__)
#define ir_mul(b, t, x, y, ...) ir_alu2(b, ir_op_mul, t, x, y, __VA_ARGS__)
#define ir_and(b, t, x, y, ...) ir_alu2(b, ir_op_and, t, x, y, __VA_ARGS__)
#define ir_or(b, t, x, y, ...) ir_alu2(b, ir_op_or, t, x, y, __VA_ARGS__)
#define ir_xor(b, t, x, y, ...) ir_alu2(b, ir_op_xor, t, x, y, __VA_ARGS__)
#define ir_shl(b, t, x, y, ...) ir_alu2(b, ir_op_shl, t, x, y, __VA_ARGS__)
#define ir_shr(b, t, x, y, ...) ir_alu2(b, ir_op_shr, t, x, y, __VA_ARGS__)
#define ir_selp(b, t, x, y, p, ...) ir_alu3(b, ir_op_selp, t, x, y, p, __VA_ARGS__)
#define ir_setp(b, t, x, y, ...) ir_alu2(b, ir_op_setp, t, x, y, __VA_ARGS__)
#define ir_copy(b, t, x) ir_alu1(b, ir_op_copy, t, x)
#define ir_shfl(b, t, a, lane, c, mask, ...) \
  ir_build_value((b), ir_op_shfl, (t), 4, (ir_value *[]){(a), (lane), (c), (mask)}, IR_MODS(__VA_ARGS__))

/* Reads a special register: %tid.y is ir_sreg_tid, comp 1. */
ir_value *ir_read_sreg(ir_builder *b, ir_sreg sr, unsigned comp);
/* A memory access [base + offset]: src[0] = base; for st, then the values. */
ir_instr *ir_build_mem(ir_builder *b, ir_op op, ir_type type, ir_value *base, int64_t offset,
                       unsigned nval, ir_value *const *vals, unsigned ndst, const ir_mods *mods);

/* Phis: created with npreds empty operands at the top of the block; fill
 * them with ir_phi_set_src (operand i belongs to block->preds[i]). */
ir_instr *ir_phi(ir_builder *b, ir_block *block, ir_type t, unsigned npreds);
void ir_phi_set_src(ir_instr *phi, unsigned i, ir_value *v);
void ir_phi_add_src(ir_instr *phi, ir_value *v);   /* grows the operand array */

/* Terminators. */
ir_instr *ir_br(ir_builder *b, ir_block *target);
ir_instr *ir_cbr(ir_builder *b, ir_value *cond, ir_block *if_true, ir_block *if_false);
ir_instr *ir_brx(ir_builder *b, ir_value *index, unsigned ntargets, ir_block *const *targets);
ir_instr *ir_ret(ir_builder *b);
ir_instr *ir_exit(ir_builder *b);

/* Guards a just-built instruction: @p (neg = false) or @!p.  keep[i] is the
 * value dst[i] takes when the guard is false (ir.h, ir_instr.keep). */
void ir_instr_set_guard(ir_builder *b, ir_instr *i, ir_value *pred, bool neg, ir_value *const *keep);

/* ---- conversions and clones ------------------------------------------ */
/* cvt.<to>.<from> x (PTX ISA 9.7.9.21): the result has type `to`, the
 * instruction's type; the source type is its second type.  Modifiers
 * through the compound literal:
 *     ir_value *f = ir_convert(b, ir_type_f32, ir_type_f16, h, .rnd = IR_RND_RN);
 */
#define ir_convert(b, to, from, x, ...) ir_build_convert((b), (to), (from), (x), IR_MODS(__VA_ARGS__))
ir_value *ir_build_convert(ir_builder *b, ir_type to, ir_type from, ir_value *x, const ir_mods *mods);
/* A copy of i at the cursor: the same op, types, special register, address
 * offset, opaque text, family data (aux: shared, not copied), branch targets
 * and guard with its keep values; operands src (NULL: i's own), modifiers
 * mods (NULL: i's own); fresh results of i's result types.  i is not
 * changed: the caller replaces its uses and removes it. */
ir_instr *ir_clone(ir_builder *b, const ir_instr *i, ir_value *const *src, const ir_mods *mods);
/* mma.sync with its four types (D, A, B, C): type, type2, type3, type4. */
ir_instr *ir_build_mma(ir_builder *b, ir_type d, ir_type a, ir_type bt, ir_type c, unsigned nsrc,
                       ir_value *const *src, unsigned ndst, const ir_type *dst_types, const ir_mods *mods);
/* Makes target k of branch i (br, cbr, brx) the block t.  Block preds are
 * not updated: ir_compute_preds. */
void ir_instr_set_target(ir_instr *i, unsigned k, ir_block *t);

/* Unlinks an instruction from its block (its memory stays in the arena). */
void ir_instr_remove(ir_instr *i);
/* Replaces every use (src, keep, guard) of value v by map[v->id] where that
 * is non-NULL, following chains (a -> b -> c).  map has f->nvalues entries.
 * One pass over the function: what SSA construction's trivial-phi removal
 * and copy propagation need. */
void ir_replace_uses(ir_func *f, ir_value **map);

#endif
