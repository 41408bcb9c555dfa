/* codegen/cg_emit.h: what the files of the IR -> LLVM IR translation share
 * (cg_emit.c, the driver, and one file per concern): the emitter, the value
 * helpers and each file's handlers.  Private to codegen/; cg_priv.h holds
 * the codegen context under it.
 *
 * Values: each IR value becomes an LLVM value of its type's natural LLVM
 * type (pred i1, bN/uN/sN iN, f16 half, bf16 bfloat, f32 float, f64 double,
 * packed types an integer of their width).  PTX lets an instruction read a
 * register of another type of the same size (add.f32 of a .b32), or a wider
 * one, so every use goes through cg_coerce(): bitcast for equal sizes, trunc or
 * extension otherwise.  Addresses are i64 integers, as in PTX: a memory
 * operation turns them into a pointer of its state space's address space
 * (inttoptr), and cvta converts between a space's window and the generic
 * (flat) address with addrspacecast.  Symbols used directly as addresses
 * (ld.shared [sym+8]) become GEPs on the variable, which LLVM optimises best.
 */
#ifndef PW_CG_EMIT_H
#define PW_CG_EMIT_H

#include "codegen/cg_priv.h"

/* ---- a pointer -> LLVM value map --------------------------------------- */

typedef struct cg_ptr_map {
  const void **keys;
  LLVMValueRef *vals;
  size_t cap, n;
} cg_ptr_map;

void cg_map_put(cg_ptr_map *m, const void *k, LLVMValueRef v);
LLVMValueRef cg_map_get(const cg_ptr_map *m, const void *k);
void cg_map_free(cg_ptr_map *m);

/* ---- the emitter -------------------------------------------------------- */

typedef struct cg_emitter {
  cg_context *c;
  LLVMBuilderRef b;
  const ir_module *m;
  const pw_src *src;
  pw_diag *d;
  cg_ptr_map syms;           /* ir_global / ir_func / ir_param -> LLVM value */
  /* per function */
  const ir_func *f;
  LLVMValueRef fn;
  LLVMValueRef *vals;        /* by value id */
  LLVMBasicBlockRef *bbs;    /* by block id: where the block starts */
  LLVMBasicBlockRef *bb_end; /* by block id: where it ends (after guard splits) */
  LLVMBasicBlockRef alloca_bb;
  LLVMValueRef ret_buf;      /* a by-value .param return's buffer (ret_by_value) */
  LLVMTypeRef ret_ty;
  bool failed;
} cg_emitter;

/* ---- small helpers ------------------------------------------------------ */

static inline bool is_float(ir_type t) { return ir_type_kind_of(t) == IR_TK_FLOAT; }
static inline bool is_fvec(ir_type t) { return t == ir_type_f16x2 || t == ir_type_bf16x2 || t == ir_type_f32x2; }
static inline bool is_signed(ir_type t) { return ir_type_kind_of(t) == IR_TK_SINT; }
static inline LLVMValueRef kint(LLVMTypeRef t, uint64_t v) { return LLVMConstInt(t, v, 0); }

/* A float constant of type t, splat when t is a vector. */
static inline LLVMValueRef fconst(LLVMTypeRef t, double v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstReal(t, v);
  LLVMValueRef e[2] = {LLVMConstReal(LLVMGetElementType(t), v), LLVMConstReal(LLVMGetElementType(t), v)};
  return LLVMConstVector(e, LLVMGetVectorSize(t));
}

/* .rz .rm .rp: a directed rounding (cg_float.c, "directed rounding"). */
static inline bool is_rnd_directed(const ir_instr *i) {
  return i->mods.rnd == IR_RND_RZ || i->mods.rnd == IR_RND_RM || i->mods.rnd == IR_RND_RP;
}

/* cg_emit_util.c: types, values and operands */
/* Reports that i cannot be translated (the PTX instruction, function, line
 * and target) and marks the function failed; emission goes on. */
void cg_unsupported(cg_emitter *E, const ir_instr *i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
LLVMTypeRef cg_ltype(cg_emitter *E, ir_type t);
unsigned cg_type_bits(LLVMTypeRef t);
LLVMValueRef cg_coerce_ext(cg_emitter *E, LLVMValueRef v, LLVMTypeRef want, bool sext);
LLVMValueRef cg_coerce(cg_emitter *E, LLVMValueRef v, LLVMTypeRef want);
LLVMValueRef cg_val(cg_emitter *E, const ir_instr *i, const ir_value *v);
LLVMValueRef cg_op_as(cg_emitter *E, const ir_instr *i, unsigned k, LLVMTypeRef t);
LLVMValueRef cg_op(cg_emitter *E, const ir_instr *i, unsigned k);
void cg_set_dst(cg_emitter *E, const ir_instr *i, unsigned k, LLVMValueRef v, bool sext);
LLVMValueRef cg_symbol_ptr(cg_emitter *E, ir_symbol sym, const ir_instr *i);
LLVMValueRef cg_gep_bytes(cg_emitter *E, LLVMValueRef p, int64_t off);
/* Calls of intrinsics overloaded on the first operand's type. */
LLVMValueRef cg_intr1(cg_emitter *E, const char *name, LLVMValueRef a);
LLVMValueRef cg_intr2(cg_emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_intr3(cg_emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b, LLVMValueRef x);

/* cg_int.c: integer arithmetic, bit operations, comparisons */
LLVMValueRef cg_mul_ext(cg_emitter *E, LLVMValueRef a, LLVMValueRef b, bool sgn, unsigned n, bool hi);
LLVMValueRef cg_fcmp_or_icmp(cg_emitter *E, const ir_instr *i, ir_type t, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_splat2(cg_emitter *E, LLVMValueRef x);
LLVMValueRef cg_boolop(cg_emitter *E, const ir_instr *i, LLVMValueRef p, LLVMValueRef q);
LLVMValueRef cg_int_shift(cg_emitter *E, const ir_instr *i, bool left);
LLVMValueRef cg_int_bfe(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_bfi(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_prmt(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_lop3(cg_emitter *E, const ir_instr *i);

/* cg_float.c: float arithmetic and its rounding */
LLVMValueRef cg_sat01(cg_emitter *E, LLVMValueRef x);
bool cg_fp_round_ok(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_step_ulp(cg_emitter *E, const ir_instr *i, LLVMValueRef r, LLVMValueRef gt, LLVMValueRef lt);
LLVMValueRef cg_directed(cg_emitter *E, const ir_instr *i, char op, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_mode_rounded(cg_emitter *E, const ir_instr *i, char op, LLVMValueRef *ops, unsigned n);
LLVMValueRef cg_fp_flags(LLVMValueRef v, const ir_instr *i);

/* cg_cvt.c: conversions */
LLVMValueRef cg_cvt(cg_emitter *E, const ir_instr *i);

/* cg_mem.c: memory and the memory model */
unsigned cg_space_as(const cg_emitter *E, ir_space s);
unsigned cg_sync_scope(cg_emitter *E, ir_scope s);
LLVMAtomicOrdering cg_ordering(ir_sem s, LLVMAtomicOrdering dflt);
void cg_fence(cg_emitter *E, LLVMAtomicOrdering o, unsigned ss);
void cg_mem_atomic(cg_emitter *E, const ir_instr *i);
void cg_mem_load(cg_emitter *E, const ir_instr *i);
void cg_mem_store(cg_emitter *E, const ir_instr *i);

/* cg_wave.c: wave operations, barriers, the dispatch values */
void cg_workgroup_barrier(cg_emitter *E);
LLVMValueRef cg_dim_const(cg_emitter *E, const ir_instr *i, unsigned k, unsigned *dim);
LLVMValueRef cg_workitem_id(cg_emitter *E, unsigned dim);
LLVMValueRef cg_workgroup_id(cg_emitter *E, unsigned dim);
LLVMValueRef cg_workgroup_size(cg_emitter *E, unsigned dim);
LLVMValueRef cg_workgroup_count(cg_emitter *E, unsigned dim);
LLVMValueRef cg_dyn_lds_size(cg_emitter *E);
LLVMValueRef cg_lane_id(cg_emitter *E);
LLVMValueRef cg_realtime(cg_emitter *E);
LLVMValueRef cg_ballot(cg_emitter *E, LLVMValueRef pred);
LLVMValueRef cg_sreg(cg_emitter *E, const ir_instr *i);
void cg_wave_mma(cg_emitter *E, const ir_instr *i);

/* cg_call.c: calls and the ABI */
LLVMTypeRef cg_ret_by_value(cg_emitter *E, const ir_func *f);
LLVMTypeRef cg_param_by_value(cg_emitter *E, const ir_func *f, unsigned p);
LLVMTypeRef cg_multi_reg_ret(cg_emitter *E, const ir_func *f);
LLVMTypeRef cg_func_type(cg_emitter *E, const ir_func *f);
void cg_trap(cg_emitter *E);
void cg_call(cg_emitter *E, const ir_instr *i);
void cg_kernel_attrs(cg_emitter *E, const ir_func *f, LLVMValueRef fn);

#endif
