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
#include "util/pw_map.h"

/* ---- the symbol -> LLVM value map --------------------------------------- */

/* IR globals, functions and parameters -> their LLVM values: the project's
 * one hash map (util/pw_map.h), zero-initialised, malloc'd. */
typedef pw_map cg_ptr_map;

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

/* cg_emit_util.c: errors, types, values and operands */
/* Reports that i cannot be translated (the PTX instruction, function, line
 * and target) and marks the function failed; emission goes on. */
void cg_unsupported(cg_emitter *E, const ir_instr *i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The report for a form of an op codegen translates in other forms; NULL. */
LLVMValueRef cg_no_form(cg_emitter *E, const ir_instr *i);
LLVMTypeRef cg_ltype(cg_emitter *E, ir_type t);
unsigned cg_type_bits(LLVMTypeRef t);
/* v as type want: bitcast for equal sizes, else through integers (sext:
 * extending with the sign) */
LLVMValueRef cg_coerce_ext(cg_emitter *E, LLVMValueRef v, LLVMTypeRef want, bool sext);
LLVMValueRef cg_coerce(cg_emitter *E, LLVMValueRef v, LLVMTypeRef want);
/* An IR value in its own type; operand k of i as type t, or in i's type */
LLVMValueRef cg_val(cg_emitter *E, const ir_instr *i, const ir_value *v);
LLVMValueRef cg_op_as(cg_emitter *E, const ir_instr *i, unsigned k, LLVMTypeRef t);
LLVMValueRef cg_op(cg_emitter *E, const ir_instr *i, unsigned k);
/* Result k of i is v (in the result's type) */
void cg_set_dst(cg_emitter *E, const ir_instr *i, unsigned k, LLVMValueRef v, bool sext);
/* A symbol's storage; p + off bytes */
LLVMValueRef cg_symbol_ptr(cg_emitter *E, ir_symbol sym, const ir_instr *i);
LLVMValueRef cg_gep_bytes(cg_emitter *E, LLVMValueRef p, int64_t off);
/* Calls of intrinsics overloaded on the first operand's type. */
LLVMValueRef cg_intr1(cg_emitter *E, const char *name, LLVMValueRef a);
LLVMValueRef cg_intr2(cg_emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b);
LLVMValueRef cg_intr3(cg_emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b, LLVMValueRef x);

/* The handlers of ops: each takes the instruction; one that returns a value
 * gives its one result (NULL: none, or reported), the others store their
 * results (cg_set_dst).  cg_emit.c's emit_instr says which op goes where. */

/* cg_int.c: integer arithmetic, bit operations, comparisons and selects */
LLVMValueRef cg_int_pack(cg_emitter *E, const ir_instr *i);
void cg_int_unpack(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_add(cg_emitter *E, const ir_instr *i);
void cg_int_addc(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_mul(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_mad(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_mul24(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_sad(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_div(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_abs(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_neg(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_minmax(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_popc(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_clz(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_bfind(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_brev(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_bfe(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_bfi(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_bmsk(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_dp4a(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_dp2a(cg_emitter *E, const ir_instr *i);
void cg_int_setp(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_set(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_selp(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_slct(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_logic(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_lop3(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_shf(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_shift(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_int_prmt(cg_emitter *E, const ir_instr *i);

/* cg_float.c: float arithmetic and its rounding */
LLVMValueRef cg_float_add(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_mul(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_fma(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_div(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_abs(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_neg(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_minmax(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_rcp_sqrt(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_sincos(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_lg2_ex2(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_tanh(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_copysign(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_float_testp(cg_emitter *E, const ir_instr *i);
/* for cg_cvt.c: .sat (NaN -> 0, clamp to [0, 1]); false (reported) for a
 * rounding other than rn; one ulp step of r in i's direction given the
 * sign of the exact result's difference from r (gt, lt) */
LLVMValueRef cg_sat01(cg_emitter *E, LLVMValueRef x);
bool cg_fp_round_ok(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_step_ulp(cg_emitter *E, const ir_instr *i, LLVMValueRef r, LLVMValueRef gt, LLVMValueRef lt);

/* cg_cvt.c: conversions */
LLVMValueRef cg_cvt(cg_emitter *E, const ir_instr *i);

/* cg_mem.c: memory and the memory model */
void cg_mem_load(cg_emitter *E, const ir_instr *i);
void cg_mem_store(cg_emitter *E, const ir_instr *i);
void cg_mem_atomic(cg_emitter *E, const ir_instr *i);
void cg_mem_fence(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_mem_cvta(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_mem_isspacep(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_mem_createpolicy(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_mem_alloca(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_mem_stacksave(cg_emitter *E, const ir_instr *i);
void cg_mem_stackrestore(cg_emitter *E, const ir_instr *i);
/* a fence of ordering o at sync scope ss */
void cg_fence(cg_emitter *E, LLVMAtomicOrdering o, unsigned ss);

/* cg_wave.c: barriers, wave operations, the dispatch values */
void cg_workgroup_barrier(cg_emitter *E);
void cg_wave_bar(cg_emitter *E, const ir_instr *i);
void cg_wave_sync(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_lane_id(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_ballot(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_bpermute(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_swizzle(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_readlane(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_readfirstlane(cg_emitter *E, const ir_instr *i);
void cg_wave_mma(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_dispatch_id(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_dyn_lds_size(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_cycle_counter(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_realtime_counter(cg_emitter *E, const ir_instr *i);
LLVMValueRef cg_wave_hw_id(cg_emitter *E, const ir_instr *i);

/* cg_call.c: calls and the ABI */
void cg_call(cg_emitter *E, const ir_instr *i);
void cg_ret(cg_emitter *E, const ir_instr *i);
void cg_trap(cg_emitter *E, const ir_instr *i);
void cg_brkpt(cg_emitter *E, const ir_instr *i);
/* for the driver: functions' types and parameters */
LLVMTypeRef cg_func_type(cg_emitter *E, const ir_func *f);
void cg_bind_params(cg_emitter *E, const ir_func *f, LLVMValueRef fn);
/* false: reported (the parameters do not fit CUDA's limit, or no memory) */
bool cg_kernel_attrs(cg_emitter *E, const ir_func *f, LLVMValueRef fn);

#endif
