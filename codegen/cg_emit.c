/* codegen/cg_emit.c: ptxwave IR -> LLVM IR for the AMDGPU backend.
 *
 * Algorithm: declare every function and variable first (calls and address
 * constants may point forward), then translate each body in reverse post-
 * order of its CFG, so every definition is emitted before its non-phi uses;
 * phis are created empty at the top of their block and filled once every
 * block is done, from the LLVM block that ends each IR predecessor (a guard
 * may have split it).
 *
 * Values: each IR value becomes an LLVM value of its type's natural LLVM
 * type (pred i1, bN/uN/sN iN, f16 half, bf16 bfloat, f32 float, f64 double,
 * packed types an integer of their width).  PTX lets an instruction read a
 * register of another type of the same size (add.f32 of a .b32), or a wider
 * one, so every use goes through coerce(): bitcast for equal sizes, trunc or
 * extension otherwise.  Addresses are i64 integers, as in PTX: a memory
 * operation turns them into a pointer of its state space's address space
 * (inttoptr), and cvta converts between a space's window and the generic
 * (flat) address with addrspacecast.  Symbols used directly as addresses
 * (ld.shared [sym+8]) become GEPs on the variable, which LLVM optimises best.
 *
 * Kernel ABI (design.md "Code generation", docs/codegen.md): a kernel is an
 * amdgpu_kernel whose arguments are its .params, each a byref pointer in
 * addrspace(4) to a byte array of the .param's size with its alignment, so
 * the kernarg segment has CUDA's parameter-buffer layout.  A device
 * function's .params (and .param return values) are pointers in addrspace(5)
 * to buffers its caller allocates; .reg params are plain values.
 *
 * Invariant: an instruction that cannot be translated reports an error naming
 * the PTX instruction, the function, the line and the target, and emission
 * goes on (to report more); the module is then discarded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_priv.h"
#include "ir/ir_amd_matrix.h"

/* ---- a pointer -> LLVM value map --------------------------------------- */

typedef struct ptr_map {
  const void **keys;
  LLVMValueRef *vals;
  size_t cap, n;
} ptr_map;

static size_t ptr_hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static void map_put(ptr_map *m, const void *k, LLVMValueRef v) {
  if ((m->n + 1) * 2 > m->cap) {
    ptr_map nm = {0};
    nm.cap = m->cap ? m->cap * 2 : 64;
    nm.keys = calloc(nm.cap, sizeof *nm.keys);
    nm.vals = calloc(nm.cap, sizeof *nm.vals);
    if (!nm.keys || !nm.vals) PW_DIE("out of memory");
    for (size_t i = 0; i < m->cap; i++)
      if (m->keys[i]) map_put(&nm, m->keys[i], m->vals[i]);
    free(m->keys);
    free(m->vals);
    *m = nm;
  }
  size_t i = ptr_hash(k, m->cap);
  while (m->keys[i] && m->keys[i] != k) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) m->n++;
  m->keys[i] = k;
  m->vals[i] = v;
}

static LLVMValueRef map_get(const ptr_map *m, const void *k) {
  if (!m->cap) return NULL;
  size_t i = ptr_hash(k, m->cap);
  while (m->keys[i]) {
    if (m->keys[i] == k) return m->vals[i];
    i = (i + 1) & (m->cap - 1);
  }
  return NULL;
}

static void map_free(ptr_map *m) {
  free(m->keys);
  free(m->vals);
  memset(m, 0, sizeof *m);
}

/* ---- the emitter -------------------------------------------------------- */

typedef struct emitter {
  cg_context *c;
  LLVMBuilderRef b;
  const ir_module *m;
  const pw_src *src;
  pw_diag *d;
  ptr_map syms;              /* ir_global / ir_func / ir_param -> LLVM value */
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
} emitter;

static void unsupported(emitter *E, const ir_instr *i, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void unsupported(emitter *E, const ir_instr *i, const char *fmt, ...) {
  char why[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  const ir_op_info *info = &ir_op_infos[i->op];
  const char *ptx = i->op == ir_op_opaque && i->opaque ? i->opaque : info->ptx[0] ? info->ptx : info->name;
  pw_error_at(E->d, E->src, i->loc.line, i->loc.col, "cannot compile '%s' in %s '%s' for %s: %s", ptx,
              E->f->is_kernel ? "kernel" : "function", E->f->name, E->c->target->name, why);
  E->failed = true;
  /* ir_func.failed_at is an annotation for cg_compile_ptx (which owns the
   * module and leaves out the kernels that reach this function), not part
   * of the IR codegen reads: writing it through the const view is safe. */
  ir_func *f = (ir_func *)E->f;
  if (f && !f->failed_at) f->failed_at = i;
}

static LLVMTypeRef ltype(emitter *E, ir_type t) {
  cg_context *c = E->c;
  switch (t) {
  case ir_type_pred: return c->i1;
  case ir_type_f16: return c->f16;
  case ir_type_bf16: return c->bf16;
  case ir_type_f32:
  case ir_type_tf32: return c->f32;
  case ir_type_f64: return c->f64;
  /* packed floats are vectors: add/mul/fma/min/max work lane-wise, and
   * the backend selects v_pk_* */
  case ir_type_f16x2: return LLVMVectorType(c->f16, 2);
  case ir_type_bf16x2: return LLVMVectorType(c->bf16, 2);
  case ir_type_f32x2: return LLVMVectorType(c->f32, 2);
  default: break;
  }
  unsigned bits = ir_type_bits(t);
  if (!bits) bits = 32;
  return LLVMIntTypeInContext(c->ctx, bits);
}

static bool is_float(ir_type t) { return ir_type_kind_of(t) == IR_TK_FLOAT; }
static bool is_fvec(ir_type t) { return t == ir_type_f16x2 || t == ir_type_bf16x2 || t == ir_type_f32x2; }

/* A float constant of type t, splat when t is a vector. */
static LLVMValueRef fconst(LLVMTypeRef t, double v) {
  if (LLVMGetTypeKind(t) != LLVMVectorTypeKind) return LLVMConstReal(t, v);
  LLVMValueRef e[2] = {LLVMConstReal(LLVMGetElementType(t), v), LLVMConstReal(LLVMGetElementType(t), v)};
  return LLVMConstVector(e, LLVMGetVectorSize(t));
}
static bool is_signed(ir_type t) { return ir_type_kind_of(t) == IR_TK_SINT; }

static unsigned type_bits(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind: return LLVMGetIntTypeWidth(t);
  case LLVMHalfTypeKind:
  case LLVMBFloatTypeKind: return 16;
  case LLVMFloatTypeKind: return 32;
  case LLVMDoubleTypeKind: return 64;
  case LLVMVectorTypeKind: return LLVMGetVectorSize(t) * type_bits(LLVMGetElementType(t));
  default: return 64;
  }
}

/* v as type want: bitcast for equal sizes, else through integers, extending
 * with sign when sext. */
static LLVMValueRef coerce_ext(emitter *E, LLVMValueRef v, LLVMTypeRef want, bool sext) {
  LLVMTypeRef have = LLVMTypeOf(v);
  if (have == want) return v;
  unsigned hb = type_bits(have), wb = type_bits(want);
  bool hint = LLVMGetTypeKind(have) == LLVMIntegerTypeKind;
  bool wint = LLVMGetTypeKind(want) == LLVMIntegerTypeKind;
  if (hb == wb) return LLVMBuildBitCast(E->b, v, want, "");
  LLVMValueRef iv = hint ? v : LLVMBuildBitCast(E->b, v, LLVMIntTypeInContext(E->c->ctx, hb), "");
  LLVMTypeRef wi = wint ? want : LLVMIntTypeInContext(E->c->ctx, wb);
  if (hb > wb) iv = LLVMBuildTrunc(E->b, iv, wi, "");
  else if (sext && hb > 1) iv = LLVMBuildSExt(E->b, iv, wi, "");
  else iv = LLVMBuildZExt(E->b, iv, wi, "");
  return wint ? iv : LLVMBuildBitCast(E->b, iv, want, "");
}

static LLVMValueRef coerce(emitter *E, LLVMValueRef v, LLVMTypeRef want) {
  return coerce_ext(E, v, want, false);
}

static LLVMValueRef symbol_ptr(emitter *E, ir_symbol sym, const ir_instr *i);

/* The LLVM value of an IR value, in its own type. */
static LLVMValueRef val(emitter *E, const ir_instr *i, const ir_value *v) {
  switch ((ir_value_kind)v->kind) {
  case IR_VAL_INSTR:
  case IR_VAL_PARAM:
    if (v->id < E->f->nvalues && E->vals[v->id]) return E->vals[v->id];
    unsupported(E, i, "operand %%%u used before its definition was translated", v->id);
    return LLVMGetUndef(ltype(E, (ir_type)v->type));
  case IR_VAL_CONST: {
    LLVMTypeRef t = ltype(E, (ir_type)v->type);
    unsigned bits = type_bits(t);
    LLVMValueRef k = LLVMConstInt(LLVMIntTypeInContext(E->c->ctx, bits), v->imm, 0);
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? k : LLVMConstBitCast(k, t);
  }
  case IR_VAL_UNDEF: return LLVMGetUndef(ltype(E, (ir_type)v->type));
  case IR_VAL_SYMBOL: {
    LLVMValueRef p = symbol_ptr(E, v->symref.sym, i);
    LLVMValueRef a = LLVMBuildPtrToInt(E->b, p, LLVMIntTypeInContext(E->c->ctx, 64), "");
    if (v->symref.offset) a = LLVMBuildAdd(E->b, a, LLVMConstInt(E->c->i64, (uint64_t)v->symref.offset, 0), "");
    return coerce(E, a, ltype(E, (ir_type)v->type));
  }
  }
  return NULL;
}

/* Operand k of i as LLVM type t. */
static LLVMValueRef op_as(emitter *E, const ir_instr *i, unsigned k, LLVMTypeRef t) {
  return coerce_ext(E, val(E, i, i->src[k]), t, is_signed((ir_type)i->src[k]->type));
}

static LLVMValueRef op(emitter *E, const ir_instr *i, unsigned k) {
  return op_as(E, i, k, ltype(E, (ir_type)i->type));
}

static void set_dst(emitter *E, const ir_instr *i, unsigned k, LLVMValueRef v, bool sext) {
  if (k >= i->ndst || !i->dst[k]) return;
  E->vals[i->dst[k]->id] = coerce_ext(E, v, ltype(E, (ir_type)i->dst[k]->type), sext);
}

/* ---- address spaces, symbols, addresses -------------------------------- */

static unsigned space_as(const emitter *E, ir_space s) {
  switch (s) {
  case IR_SPACE_GLOBAL: return CG_AS_GLOBAL;
  case IR_SPACE_SHARED:
  case IR_SPACE_SHARED_CTA:
  case IR_SPACE_SHARED_CLUSTER: return CG_AS_LDS;
  case IR_SPACE_LOCAL: return CG_AS_PRIVATE;
  case IR_SPACE_CONST: return CG_AS_CONST;
  case IR_SPACE_PARAM:
    return E->f->is_kernel ? CG_AS_CONST : CG_AS_PRIVATE;
  case IR_SPACE_PARAM_ENTRY: return CG_AS_CONST;
  case IR_SPACE_PARAM_FUNC: return CG_AS_PRIVATE;
  case IR_SPACE_GENERIC:
  case IR_SPACE_TEX:
  case IR_SPACE_REG: return CG_AS_FLAT;
  }
  return CG_AS_FLAT;
}

static LLVMValueRef symbol_ptr(emitter *E, ir_symbol sym, const ir_instr *i) {
  const void *key = sym.kind == IR_SYM_GLOBAL ? (const void *)sym.global
                    : sym.kind == IR_SYM_FUNC ? (const void *)sym.func
                                              : (const void *)sym.param;
  LLVMValueRef p = map_get(&E->syms, key);
  if (!p) {
    unsupported(E, i, "symbol '%s' has no storage here",
                sym.kind == IR_SYM_GLOBAL ? sym.global->name
                : sym.kind == IR_SYM_FUNC ? sym.func->name
                                          : sym.param->name);
    return LLVMGetUndef(E->c->ptr[0]);
  }
  return p;
}

static LLVMValueRef gep_bytes(emitter *E, LLVMValueRef p, int64_t off) {
  if (!off) return p;
  LLVMValueRef idx = LLVMConstInt(E->c->i64, (uint64_t)off, 1);
  return LLVMBuildGEP2(E->b, E->c->i8, p, &idx, 1, "");
}

/* The pointer a memory instruction's address operand (src[0] + offset)
 * designates, in the address space of `space`. */
static LLVMValueRef address(emitter *E, const ir_instr *i, ir_space space) {
  cg_context *c = E->c;
  const ir_value *a = i->src[0];
  unsigned as = space_as(E, space);
  if (a->kind == IR_VAL_SYMBOL) {
    /* the variable's own address space, whatever space the instruction
     * names: ld.param of a caller's .param buffer in a kernel is private,
     * ld [tile] (generic) of a shared variable is the LDS access */
    LLVMValueRef p = symbol_ptr(E, a->symref.sym, i);
    return gep_bytes(E, p, a->symref.offset + i->offset);
  }
  LLVMValueRef v = val(E, i, a);
  bool narrow = as == CG_AS_LDS || as == CG_AS_PRIVATE;
  v = coerce(E, v, narrow ? c->i32 : c->i64);
  LLVMValueRef p = LLVMBuildIntToPtr(E->b, v, c->ptr[as], "");
  return gep_bytes(E, p, i->offset);
}

/* ---- memory model ------------------------------------------------------- */

/* AMDGPUUsage "Memory Model": PTX scopes to AMDGPU sync scopes.  A cluster
 * is no larger than the device here (no cluster launch), so it is agent. */
static unsigned sync_scope(emitter *E, ir_scope s) {
  switch (s) {
  case IR_SCOPE_CTA: return E->c->ss_workgroup;
  case IR_SCOPE_CLUSTER:
  case IR_SCOPE_GPU:
  case IR_SCOPE_NONE: return E->c->ss_agent;
  case IR_SCOPE_SYS: return E->c->ss_system;
  }
  return E->c->ss_system;
}

static LLVMAtomicOrdering ordering(ir_sem s, LLVMAtomicOrdering dflt) {
  switch (s) {
  case IR_SEM_RELAXED: return LLVMAtomicOrderingMonotonic;
  case IR_SEM_ACQUIRE: return LLVMAtomicOrderingAcquire;
  case IR_SEM_RELEASE: return LLVMAtomicOrderingRelease;
  case IR_SEM_ACQ_REL: return LLVMAtomicOrderingAcquireRelease;
  case IR_SEM_SC: return LLVMAtomicOrderingSequentiallyConsistent;
  case IR_SEM_NONE:
  case IR_SEM_WEAK:
  case IR_SEM_VOLATILE:
  case IR_SEM_MMIO: return dflt;
  }
  return dflt;
}

static void fence(emitter *E, LLVMAtomicOrdering o, unsigned ss) {
  LLVMBuildFenceSyncScope(E->b, o, ss, "");
}

/* CUDA's bar.sync 0 / __syncthreads: every thread's earlier writes are seen
 * by the workgroup after it.  AMDGPUUsage "Memory Model GFX942": release
 * fence at workgroup scope, s_barrier, acquire fence at workgroup scope. */
static void workgroup_barrier(emitter *E) {
  fence(E, LLVMAtomicOrderingRelease, E->c->ss_workgroup);
  cg_intrinsic(E->c, "llvm.amdgcn.s.barrier", NULL, 0, NULL, 0, true);
  fence(E, LLVMAtomicOrderingAcquire, E->c->ss_workgroup);
}

/* ---- dispatch values ----------------------------------------------------- */

static LLVMValueRef dim_const(emitter *E, const ir_instr *i, unsigned k, unsigned *dim) {
  const ir_value *v = i->src[k];
  if (v->kind != IR_VAL_CONST || v->imm > 2) {
    unsupported(E, i, "the dimension must be an immediate 0, 1 or 2");
    *dim = 0;
    return NULL;
  }
  *dim = (unsigned)v->imm;
  return NULL;
}

static LLVMValueRef load_at(emitter *E, LLVMTypeRef t, LLVMValueRef base, int64_t off, unsigned align) {
  LLVMValueRef p = gep_bytes(E, base, off);
  LLVMValueRef l = LLVMBuildLoad2(E->b, t, p, "");
  LLVMSetAlignment(l, align);
  return l;
}

static LLVMValueRef workitem_id(emitter *E, unsigned dim) {
  static const char *const n[] = {"llvm.amdgcn.workitem.id.x", "llvm.amdgcn.workitem.id.y",
                                  "llvm.amdgcn.workitem.id.z"};
  return cg_intrinsic(E->c, n[dim], NULL, 0, NULL, 0, false);
}

static LLVMValueRef workgroup_id(emitter *E, unsigned dim) {
  static const char *const n[] = {"llvm.amdgcn.workgroup.id.x", "llvm.amdgcn.workgroup.id.y",
                                  "llvm.amdgcn.workgroup.id.z"};
  return cg_intrinsic(E->c, n[dim], NULL, 0, NULL, 0, false);
}

/* %ntid: COV5 hidden_group_size_x/y/z (u16 at implicit argument offsets
 * 12, 14, 16); COV4 the dispatch packet's workgroup_size_x (u16 at 4).
 * The alignment is what the offset from the base gives: the implicit
 * arguments are 8-aligned (LLVM's getAlignmentForImplicitArgPtr on HSA),
 * the dispatch packet 64-aligned (AMDGPUUsage).  With align 2 everywhere,
 * the backend merged the x and y loads into a dword that SMEM cannot load
 * (scalar loads need 4-byte alignment): a VMEM load into VGPRs and a wait
 * on vmcnt in nearly every kernel (benchmarks/quality_bench.py). */
static LLVMValueRef workgroup_size(emitter *E, unsigned dim) {
  cg_context *c = E->c;
  LLVMValueRef v;
  unsigned off = c->cov >= 5 ? 12 + 2 * dim : 4 + 2 * dim;
  if (c->cov >= 5) {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.implicitarg.ptr", NULL, 0, NULL, 0, false);
    v = load_at(E, c->i16, p, off, off % 4 ? 2 : 4);
  } else {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
    v = load_at(E, c->i16, p, off, off % 4 ? 2 : 4);
  }
  return LLVMBuildZExt(E->b, v, c->i32, "");
}

/* %nctaid: COV5 hidden_block_count_x/y/z (u32 at offsets 0, 4, 8); COV4
 * grid_size_x (u32 at 12 + 4*dim of the packet) / workgroup size. */
static LLVMValueRef workgroup_count(emitter *E, unsigned dim) {
  cg_context *c = E->c;
  if (c->cov >= 5) {
    LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.implicitarg.ptr", NULL, 0, NULL, 0, false);
    return load_at(E, c->i32, p, 4 * dim, 4);
  }
  LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
  LLVMValueRef g = load_at(E, c->i32, p, 12 + 4 * dim, 4);
  return LLVMBuildUDiv(E->b, g, workgroup_size(E, dim), "");
}

static LLVMValueRef dyn_lds_size(emitter *E) {
  cg_context *c = E->c;
  LLVMValueRef p = cg_intrinsic(c, "llvm.amdgcn.dispatch.ptr", NULL, 0, NULL, 0, false);
  LLVMValueRef total = load_at(E, c->i32, p, 24, 4);
  LLVMValueRef st = cg_intrinsic(c, "llvm.amdgcn.groupstaticsize", NULL, 0, NULL, 0, false);
  return LLVMBuildSub(E->b, total, st, "");
}

static LLVMValueRef lane_id(emitter *E) {
  cg_context *c = E->c;
  LLVMValueRef a[2] = {LLVMConstInt(c->i32, ~0ull, 0), c->i32_0};
  LLVMValueRef lo = cg_intrinsic(c, "llvm.amdgcn.mbcnt.lo", NULL, 0, a, 2, false), r = lo;
  if (c->wave_size != 32) {
    a[1] = lo;
    r = cg_intrinsic(c, "llvm.amdgcn.mbcnt.hi", NULL, 0, a, 2, false);
  }
  /* range(i32 0, wave size): the lanes below this one in a full mask.
   * LLVM does not know it of mbcnt.hi, and lower/'s (L & 31) + (L & 32)
   * folds back to L only with it (the shuffle source lanes). */
  unsigned kind = LLVMGetEnumAttributeKindForName("range", 5);
  uint64_t lower = 0, upper = c->wave_size;
  LLVMAddCallSiteAttribute(r, LLVMAttributeReturnIndex, LLVMCreateConstantRangeAttribute(c->ctx, kind, 32, &lower, &upper));
  return r;
}

static LLVMValueRef realtime(emitter *E) {
  cg_context *c = E->c;
  if (c->target->features & IR_TARGET_MEMTIME)
    return cg_intrinsic(c, "llvm.amdgcn.s.memrealtime", NULL, 0, NULL, 0, false);
  return cg_intrinsic(c, "llvm.readsteadycounter", NULL, 0, NULL, 0, false);
}

static LLVMValueRef ballot(emitter *E, LLVMValueRef pred) {
  LLVMTypeRef t = E->c->wave_mask;
  return cg_intrinsic(E->c, E->c->wave_size == 64 ? "llvm.amdgcn.ballot.i64" : "llvm.amdgcn.ballot.i32",
                      &t, 1, &pred, 1, true);
}

/* Special registers read directly, before lower/ exists: the dispatch
 * values; everything warp-level is left to lower/. */
static LLVMValueRef sreg(emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  unsigned k = i->sreg_comp;
  switch ((ir_sreg)i->sreg) {
  case ir_sreg_tid: return workitem_id(E, k);
  case ir_sreg_ctaid: return workgroup_id(E, k);
  case ir_sreg_ntid: return workgroup_size(E, k);
  case ir_sreg_nctaid: return workgroup_count(E, k);
  case ir_sreg_laneid:
    /* %laneid is the lane of the warp: the wave's lane on wave32. */
    if (c->wave_size == 32) return lane_id(E);
    break;
  case ir_sreg_clock: return LLVMBuildTrunc(E->b, cg_intrinsic(c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false), c->i32, "");
  case ir_sreg_clock64: return cg_intrinsic(c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false);
  case ir_sreg_globaltimer: /* ns from the 100 MHz real-time counter */
    return LLVMBuildMul(E->b, realtime(E), LLVMConstInt(c->i64, 10, 0), "");
  case ir_sreg_globaltimer_lo:
    return LLVMBuildTrunc(E->b, LLVMBuildMul(E->b, realtime(E), LLVMConstInt(c->i64, 10, 0), ""), c->i32, "");
  case ir_sreg_dynamic_smem_size: return dyn_lds_size(E);
  case ir_sreg_gridid: return c->i64_0;
  case ir_sreg_nsmid: return LLVMConstInt(c->i32, 1, 0);
  default: break;
  }
  unsupported(E, i, "special register %%%s needs lower/ (not run)", ir_sreg_infos[i->sreg].name);
  return LLVMGetUndef(ltype(E, ir_sreg_infos[i->sreg].type));
}

/* ---- arithmetic helpers --------------------------------------------------- */

static LLVMValueRef intr1(emitter *E, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(E->c, name, &t, 1, &a, 1, false);
}

static LLVMValueRef intr2(emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef v[2] = {a, b};
  return cg_intrinsic(E->c, name, &t, 1, v, 2, false);
}

static LLVMValueRef intr3(emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef v[3] = {a, b, x};
  return cg_intrinsic(E->c, name, &t, 1, v, 3, false);
}

static LLVMValueRef kint(LLVMTypeRef t, uint64_t v) { return LLVMConstInt(t, v, 0); }

/* The f32 value x flushed to sign-preserving zero when subnormal (.ftz on
 * one instruction in a function that keeps subnormals). */
static LLVMValueRef sat01(emitter *E, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(x);
  /* PTX .sat: NaN -> 0, then clamp to [0, 1]; maxnum(NaN, 0) = 0. */
  x = intr2(E, "llvm.maxnum", x, fconst(t, 0.0));
  return intr2(E, "llvm.minnum", x, fconst(t, 1.0));
}

/* Float op with PTX rounding: rn (or none) is the plain IEEE op; rz/rm/rp
 * are done by directed() where it applies, else reported. */
static bool fp_round_ok(emitter *E, const ir_instr *i) {
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_NONE:
  case IR_RND_RN: return true;
  default:
    unsupported(E, i, "rounding .%s needs mode-register switching (not implemented)", ir_rnd_name((ir_rnd)i->mods.rnd));
    return false;
  }
}

/* ---- directed rounding (.rz .rm .rp) of div, rcp, sqrt ------------------
 * add/sub/mul/fma are one instruction under the mode register
 * (mode_rounded below).  Division and square root are multi-instruction
 * sequences (v_div_scale/v_div_fmas/v_div_fixup, Newton steps) proven for
 * round-to-nearest only, so they cannot just run under another mode.
 * Instead: compute the round-to-nearest result r and the sign of the exact
 * result's difference from it, which the fma residual gives exactly, then
 * move r one ulp when the asked direction disagrees:
 *   rz: r > 0 and exact < r, or r < 0 and exact > r: one ulp toward zero
 *   rm: exact < r: next below;   rp: exact > r: next above.
 * Overflow to infinity from finite operands counts as "exact is below +inf /
 * above -inf", so rz/rm/rp give the largest finite value as IEEE requires.
 * Stepping is integer arithmetic on the bits (sign-magnitude).  Limit: a
 * quotient or root whose residual underflows below the smallest subnormal
 * (results near 2^-126 / 2^-1022, roots of tiny f64) may miss its one-ulp
 * step; lower/ (lower_math.c) expands directed div/rcp/sqrt exactly before
 * codegen, so only IR that skipped lower/ reaches these. */
static bool is_rnd_directed(const ir_instr *i) {
  return i->mods.rnd == IR_RND_RZ || i->mods.rnd == IR_RND_RM || i->mods.rnd == IR_RND_RP;
}

static LLVMValueRef step_ulp(emitter *E, const ir_instr *i, LLVMValueRef r, LLVMValueRef gt, LLVMValueRef lt) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(r);
  unsigned n = type_bits(ft);
  LLVMTypeRef it = LLVMIntTypeInContext(E->c->ctx, n);
  LLVMValueRef bits = LLVMBuildBitCast(B, r, it, "");
  LLVMValueRef zero = LLVMConstReal(ft, 0.0);
  LLVMValueRef pos = LLVMBuildFCmp(B, LLVMRealOGT, r, zero, "");
  LLVMValueRef neg = LLVMBuildFCmp(B, LLVMRealOLT, r, zero, "");
  LLVMValueRef isz = LLVMBuildFCmp(B, LLVMRealOEQ, r, zero, "");
  LLVMValueRef minus1 = LLVMBuildSub(B, bits, kint(it, 1), "");
  LLVMValueRef plus1 = LLVMBuildAdd(B, bits, kint(it, 1), "");
  LLVMValueRef res = bits;
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_RZ: {
    LLVMValueRef away = LLVMBuildOr(B, LLVMBuildAnd(B, pos, lt, ""), LLVMBuildAnd(B, neg, gt, ""), "");
    res = LLVMBuildSelect(B, away, minus1, bits, "");
    break;
  }
  case IR_RND_RM: { /* next below: +x -> bits-1, -x -> bits+1, 0 -> -min subnormal */
    LLVMValueRef nd = LLVMBuildSelect(B, pos, minus1, plus1, "");
    nd = LLVMBuildSelect(B, isz, kint(it, (1ull << (n - 1)) | 1), nd, "");
    res = LLVMBuildSelect(B, lt, nd, bits, "");
    break;
  }
  case IR_RND_RP: { /* next above: +x -> bits+1, -x -> bits-1, 0 -> +min subnormal */
    LLVMValueRef nu = LLVMBuildSelect(B, neg, minus1, plus1, "");
    nu = LLVMBuildSelect(B, isz, kint(it, 1), nu, "");
    res = LLVMBuildSelect(B, gt, nu, bits, "");
    break;
  }
  default: break;
  }
  return LLVMBuildBitCast(B, res, ft, "");
}

/* gt/lt of "exact vs r" from a residual whose sign is the error's sign
 * (times sign_of, when given), with overflow from finite operands. */
static void residual_sign(emitter *E, LLVMValueRef r, LLVMValueRef res, LLVMValueRef sign_of,
                          LLVMValueRef ops_finite, LLVMValueRef *gt, LLVMValueRef *lt) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef ft = LLVMTypeOf(r);
  LLVMValueRef zero = LLVMConstReal(ft, 0.0);
  LLVMValueRef rp = LLVMBuildFCmp(B, LLVMRealOGT, res, zero, "");
  LLVMValueRef rn = LLVMBuildFCmp(B, LLVMRealOLT, res, zero, "");
  if (sign_of) {
    LLVMValueRef sneg = LLVMBuildFCmp(B, LLVMRealOLT, sign_of, zero, "");
    LLVMValueRef t = LLVMBuildSelect(B, sneg, rn, rp, "");
    rn = LLVMBuildSelect(B, sneg, rp, rn, "");
    rp = t;
  }
  LLVMValueRef inf = LLVMBuildFCmp(B, LLVMRealOEQ, intr1(E, "llvm.fabs", r), LLVMConstReal(ft, __builtin_inf()), "");
  LLVMValueRef ovf = LLVMBuildAnd(B, inf, ops_finite, "");
  LLVMValueRef rpos = LLVMBuildFCmp(B, LLVMRealOGT, r, zero, "");
  *gt = LLVMBuildSelect(B, ovf, LLVMBuildNot(B, rpos, ""), rp, "");
  *lt = LLVMBuildSelect(B, ovf, rpos, rn, "");
}

static LLVMValueRef is_finite(emitter *E, LLVMValueRef x) {
  LLVMTypeRef ft = LLVMTypeOf(x);
  return LLVMBuildFCmp(E->b, LLVMRealOLT, intr1(E, "llvm.fabs", x), LLVMConstReal(ft, __builtin_inf()), "");
}

/* a / b with a directed rounding; also sqrt (op 's', b NULL) and rcp
 * (a NULL: 1/b). */
static LLVMValueRef directed(emitter *E, const ir_instr *i, char op, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = E->b;
  LLVMValueRef r, res, sign_of = NULL, fin, gt, lt;
  LLVMTypeRef ft = LLVMTypeOf(a ? a : b);
  switch (op) {
  case '/': /* a/b - q has the sign of fma(-q, b, a) * sign(b) */
    if (!a) a = LLVMConstReal(ft, 1.0);
    r = LLVMBuildFDiv(B, a, b, "");
    res = intr3(E, "llvm.fma", LLVMBuildFNeg(B, r, ""), b, a);
    sign_of = b;
    fin = LLVMBuildAnd(B, is_finite(E, a), LLVMBuildFCmp(B, LLVMRealONE, b, LLVMConstReal(ft, 0.0), ""), "");
    break;
  default: /* sqrt: sqrt(a) - s has the sign of fma(-s, s, a) */
    r = intr1(E, "llvm.sqrt", a);
    res = intr3(E, "llvm.fma", LLVMBuildFNeg(B, r, ""), r, a);
    fin = LLVMConstInt(E->c->i1, 0, 0);
    break;
  }
  residual_sign(E, r, res, sign_of, fin, &gt, &lt);
  return step_ulp(E, i, r, gt, lt);
}

/* ---- directed rounding by the mode register -------------------------------
 * add/sub/mul/fma of f32 and f64 with .rz/.rm/.rp (PTX ISA 9.7.3.1-9.7.3.6)
 * are the one hardware instruction under the wanted rounding: MODE.FP_ROUND
 * (hwreg 1) bits 1:0 round f32, bits 3:2 f64 and f16; 0 nearest even, 1
 * toward +inf, 2 toward -inf, 3 toward zero (the AMDGPU ISA manuals' MODE
 * register; LLVM's SIDefines.h FP_ROUND_*).  Every kernel starts in
 * round-to-nearest (the kernel descriptor's FLOAT_ROUND_MODE, which LLVM
 * leaves 0), so the mode goes back to 0 after the instruction.  The ROCm
 * device libraries do the same (ocml's fma_rtn etc.: set the round mode,
 * the plain op, set it back).
 * All in one inline asm, not llvm.amdgcn.s.setreg around an llvm.fma: LLVM
 * orders plain FP operations only by their data, so the SelectionDAG
 * scheduler may place another (round-to-nearest) operation of the block
 * between the two setregs, and IR passes may fold the op by its constants
 * assuming round-to-nearest (x + -0 -> x is wrong under .rm for x = +0).
 * The asm is opaque and indivisible.  Its s_nops: the hazard recognizer
 * does not look inside inline asm, so the two wait states the ISA asks
 * between an s_setreg and a later s_setreg/s_getreg of the same register
 * are explicit before the first and after the last setreg (LLVM's own
 * MODE setregs: f32 division's denormal switch, fptrunc.round), and so is
 * one between a VALU op and an s_setreg, where LLVM puts one on gfx9 (it
 * puts none between an s_setreg of the round mode and a VALU op).  The asm has no side effect (it restores MODE):
 * LLVM may move, merge or drop it like the op itself. */
typedef struct rnd_insn {
  char op;              /* '+', '-', '*', 'f' (fma) */
  const char *f32, *f64; /* the VOP3 form, $0 = $1 op $2 [op $3] */
} rnd_insn;
static const rnd_insn rnd_insns[] = {
    {'+', "v_add_f32_e64 $0, $1, $2", "v_add_f64 $0, $1, $2"},
    {'-', "v_sub_f32_e64 $0, $1, $2", "v_add_f64 $0, $1, -$2"},
    {'*', "v_mul_f32_e64 $0, $1, $2", "v_mul_f64 $0, $1, $2"},
    {'f', "v_fma_f32 $0, $1, $2, $3", "v_fma_f64 $0, $1, $2, $3"},
};

static unsigned hw_round_mode(ir_rnd r) {
  switch (r) {
  case IR_RND_RP: return 1;
  case IR_RND_RM: return 2;
  case IR_RND_RZ: return 3;
  default: return 0;
  }
}

/* i's op ('+', '-', '*', 'f') on n operands of f32 or f64 with i's
 * directed rounding (is_rnd_directed(i)). */
static LLVMValueRef mode_rounded(emitter *E, const ir_instr *i, char op, LLVMValueRef *ops, unsigned n) {
  LLVMTypeRef t = LLVMTypeOf(ops[0]);
  bool f64 = t == E->c->f64;
  const char *insn = NULL;
  for (size_t k = 0; k < sizeof rnd_insns / sizeof rnd_insns[0]; k++)
    if (rnd_insns[k].op == op) insn = f64 ? rnd_insns[k].f64 : rnd_insns[k].f32;
  char text[256];
  unsigned off = f64 ? 2 : 0;
  snprintf(text, sizeof text,
           "s_nop 1\n\ts_setreg_imm32_b32 hwreg(1, %u, 2), %u\n\t%s\n\t"
           "s_nop 1\n\ts_setreg_imm32_b32 hwreg(1, %u, 2), 0\n\ts_nop 1",
           off, hw_round_mode((ir_rnd)i->mods.rnd), insn, off);
  const char *cons = n == 3 ? "=v,v,v,v" : "=v,v,v";
  LLVMTypeRef params[3] = {t, t, t};
  LLVMTypeRef fty = LLVMFunctionType(t, params, n, 0);
  LLVMValueRef fn = LLVMGetInlineAsm(fty, text, strlen(text), (char *)cons, strlen(cons), 0, 0,
                                     LLVMInlineAsmDialectATT, 0);
  LLVMValueRef call = LLVMBuildCall2(E->b, fty, fn, ops, n, "");
  /* a pure function of its operands: nounwind, memory(none) */
  static const char *const attrs[] = {"nounwind", "memory"}; /* memory(none) is 0 */
  for (unsigned k = 0; k < 2; k++) {
    unsigned kind = LLVMGetEnumAttributeKindForName(attrs[k], strlen(attrs[k]));
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex, LLVMCreateEnumAttribute(E->c->ctx, kind, 0));
  }
  return call;
}

static LLVMValueRef fp_flags(LLVMValueRef v, const ir_instr *i) {
  if (i->mods.approx && LLVMIsAInstruction(v)) LLVMSetFastMathFlags(v, LLVMFastMathApproxFunc | LLVMFastMathAllowReciprocal);
  return v;
}

/* mul.hi / mul.wide / mad.hi on N-bit integers. */
static LLVMValueRef mul_ext(emitter *E, LLVMValueRef a, LLVMValueRef b, bool sgn, unsigned n, bool hi) {
  LLVMTypeRef w = LLVMIntTypeInContext(E->c->ctx, 2 * n);
  LLVMValueRef x = sgn ? LLVMBuildSExt(E->b, a, w, "") : LLVMBuildZExt(E->b, a, w, "");
  LLVMValueRef y = sgn ? LLVMBuildSExt(E->b, b, w, "") : LLVMBuildZExt(E->b, b, w, "");
  LLVMValueRef p = LLVMBuildMul(E->b, x, y, "");
  if (!hi) return p;
  return LLVMBuildTrunc(E->b, LLVMBuildLShr(E->b, p, kint(w, n), ""), LLVMTypeOf(a), "");
}

static LLVMValueRef fcmp_or_icmp(emitter *E, const ir_instr *i, ir_type t, LLVMValueRef a, LLVMValueRef b) {
  bool f = is_float(t), s = is_signed(t);
  LLVMRealPredicate rp = LLVMRealOEQ;
  LLVMIntPredicate ip = LLVMIntEQ;
  switch ((ir_cmp)i->mods.cmp) {
  case IR_CMP_EQ: rp = LLVMRealOEQ; ip = LLVMIntEQ; break;
  case IR_CMP_NE: rp = LLVMRealONE; ip = LLVMIntNE; break;
  case IR_CMP_LT: rp = LLVMRealOLT; ip = s ? LLVMIntSLT : LLVMIntULT; break;
  case IR_CMP_LE: rp = LLVMRealOLE; ip = s ? LLVMIntSLE : LLVMIntULE; break;
  case IR_CMP_GT: rp = LLVMRealOGT; ip = s ? LLVMIntSGT : LLVMIntUGT; break;
  case IR_CMP_GE: rp = LLVMRealOGE; ip = s ? LLVMIntSGE : LLVMIntUGE; break;
  case IR_CMP_LO: ip = LLVMIntULT; break;
  case IR_CMP_LS: ip = LLVMIntULE; break;
  case IR_CMP_HI: ip = LLVMIntUGT; break;
  case IR_CMP_HS: ip = LLVMIntUGE; break;
  case IR_CMP_EQU: rp = LLVMRealUEQ; break;
  case IR_CMP_NEU: rp = LLVMRealUNE; break;
  case IR_CMP_LTU: rp = LLVMRealULT; break;
  case IR_CMP_LEU: rp = LLVMRealULE; break;
  case IR_CMP_GTU: rp = LLVMRealUGT; break;
  case IR_CMP_GEU: rp = LLVMRealUGE; break;
  case IR_CMP_NUM: rp = LLVMRealORD; break;
  case IR_CMP_NAN: rp = LLVMRealUNO; break;
  case IR_CMP_NONE: unsupported(E, i, "comparison without an operator"); break;
  }
  return f ? LLVMBuildFCmp(E->b, rp, a, b, "") : LLVMBuildICmp(E->b, ip, a, b, "");
}

/* <2 x T> with x in both elements. */
static LLVMValueRef splat2(emitter *E, LLVMValueRef x) {
  LLVMValueRef v = LLVMGetUndef(LLVMVectorType(LLVMTypeOf(x), 2));
  v = LLVMBuildInsertElement(E->b, v, x, E->c->i32_0, "");
  return LLVMBuildInsertElement(E->b, v, x, E->c->i32_1, "");
}

static LLVMValueRef boolop(emitter *E, const ir_instr *i, LLVMValueRef p, LLVMValueRef q) {
  switch ((ir_boolop)i->mods.boolop) {
  case IR_BOOL_AND: return LLVMBuildAnd(E->b, p, q, "");
  case IR_BOOL_OR: return LLVMBuildOr(E->b, p, q, "");
  case IR_BOOL_XOR: return LLVMBuildXor(E->b, p, q, "");
  case IR_BOOL_NONE: break;
  }
  return p;
}

/* Shifts with PTX semantics: amounts >= the width give 0 (shl, shr.u) or
 * the sign (shr.s), where LLVM would give poison. */
static LLVMValueRef shift(emitter *E, const ir_instr *i, bool left) {
  LLVMTypeRef t = ltype(E, (ir_type)i->type);
  unsigned n = type_bits(t);
  LLVMValueRef a = op(E, i, 0);
  LLVMValueRef s = coerce(E, val(E, i, i->src[1]), E->c->i32);
  LLVMValueRef big = LLVMBuildICmp(E->b, LLVMIntUGE, s, kint(E->c->i32, n), "");
  LLVMValueRef sc = LLVMBuildSelect(E->b, big, kint(E->c->i32, n - 1), s, "");
  sc = coerce(E, sc, t);
  if (!left && is_signed((ir_type)i->type)) return LLVMBuildAShr(E->b, a, sc, "");
  LLVMValueRef r = left ? LLVMBuildShl(E->b, a, sc, "") : LLVMBuildLShr(E->b, a, sc, "");
  return LLVMBuildSelect(E->b, big, kint(t, 0), r, "");
}

/* bfe (9.7.1.19): pos = b & 0xff, len = c & 0xff; bits beyond the msb read
 * as the sign (signed) or zero. */
static LLVMValueRef bfe(emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = ltype(E, (ir_type)i->type);
  unsigned n = type_bits(t);
  bool sgn = is_signed((ir_type)i->type);
  LLVMValueRef a = op(E, i, 0);
  LLVMValueRef pos = LLVMBuildAnd(B, coerce(E, val(E, i, i->src[1]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef len = LLVMBuildAnd(B, coerce(E, val(E, i, i->src[2]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef posbig = LLVMBuildICmp(B, LLVMIntUGE, pos, kint(E->c->i32, n), "");
  LLVMValueRef posc = coerce(E, LLVMBuildSelect(B, posbig, kint(E->c->i32, n - 1), pos, ""), t);
  LLVMValueRef sh = sgn ? LLVMBuildAShr(B, a, posc, "") : LLVMBuildLShr(B, a, posc, "");
  if (!sgn) sh = LLVMBuildSelect(B, posbig, kint(t, 0), sh, "");
  LLVMValueRef lenbig = LLVMBuildICmp(B, LLVMIntUGE, len, kint(E->c->i32, n), "");
  LLVMValueRef lenzero = LLVMBuildICmp(B, LLVMIntEQ, len, E->c->i32_0, "");
  /* 0 < len < n: keep len bits (sign-extend from bit len-1 when signed) */
  LLVMValueRef lensafe = LLVMBuildSelect(B, LLVMBuildOr(B, lenbig, lenzero, ""), kint(E->c->i32, 1), len, "");
  LLVMValueRef k = coerce(E, LLVMBuildSub(B, kint(E->c->i32, n), lensafe, ""), t);
  LLVMValueRef part = LLVMBuildShl(B, sh, k, "");
  part = sgn ? LLVMBuildAShr(B, part, k, "") : LLVMBuildLShr(B, part, k, "");
  LLVMValueRef r = LLVMBuildSelect(B, lenbig, sh, part, "");
  return LLVMBuildSelect(B, lenzero, kint(t, 0), r, "");
}

/* bfi (9.7.1.20): insert len bits of a into b at pos. */
static LLVMValueRef bfi(emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = ltype(E, (ir_type)i->type);
  unsigned n = type_bits(t);
  LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
  LLVMValueRef pos = LLVMBuildAnd(B, coerce(E, val(E, i, i->src[2]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef len = LLVMBuildAnd(B, coerce(E, val(E, i, i->src[3]), E->c->i32), kint(E->c->i32, 0xff), "");
  LLVMValueRef posbig = LLVMBuildICmp(B, LLVMIntUGE, pos, kint(E->c->i32, n), "");
  LLVMValueRef lenbig = LLVMBuildICmp(B, LLVMIntUGE, len, kint(E->c->i32, n), "");
  LLVMValueRef posc = coerce(E, LLVMBuildSelect(B, posbig, E->c->i32_0, pos, ""), t);
  LLVMValueRef lenc = coerce(E, LLVMBuildSelect(B, lenbig, E->c->i32_0, len, ""), t);
  LLVMValueRef ones = LLVMBuildSub(B, LLVMBuildShl(B, kint(t, 1), lenc, ""), kint(t, 1), "");
  ones = LLVMBuildSelect(B, lenbig, kint(t, ~0ull), ones, "");
  LLVMValueRef mask = LLVMBuildShl(B, ones, posc, "");
  LLVMValueRef r = LLVMBuildOr(B, LLVMBuildAnd(B, b, LLVMBuildNot(B, mask, ""), ""),
                               LLVMBuildAnd(B, LLVMBuildShl(B, a, posc, ""), mask, ""), "");
  return LLVMBuildSelect(B, posbig, b, r, "");
}

/* prmt (9.7.9.7), default mode: byte k of d is byte (c >> 4k) & 7 of {b, a}
 * (a the low word), or its sign replicated when bit 3 of the nibble is set.
 * A constant selector without sign bits is exactly v_perm_b32 with src0 = b,
 * src1 = a (llvm.amdgcn.perm); anything else is expanded bytewise. */
static LLVMValueRef prmt(emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  cg_context *c = E->c;
  LLVMValueRef a = op_as(E, i, 0, c->i32), b = op_as(E, i, 1, c->i32);
  if (i->mods.prmt != IR_PRMT_NONE) {
    /* the modes' byte tables (9.7.9.7), d.b0 first, per c[1:0], as
     * v_perm selectors (byte k of the selector picks byte k of d) */
    static const uint8_t tab[7][4][4] = {
        [IR_PRMT_F4E] = {{0, 1, 2, 3}, {1, 2, 3, 4}, {2, 3, 4, 5}, {3, 4, 5, 6}},
        [IR_PRMT_B4E] = {{0, 7, 6, 5}, {1, 0, 7, 6}, {2, 1, 0, 7}, {3, 2, 1, 0}},
        [IR_PRMT_RC8] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {3, 3, 3, 3}},
        [IR_PRMT_ECL] = {{0, 1, 2, 3}, {1, 1, 2, 3}, {2, 2, 2, 3}, {3, 3, 3, 3}},
        [IR_PRMT_ECR] = {{0, 0, 0, 0}, {0, 1, 1, 1}, {0, 1, 2, 2}, {0, 1, 2, 3}},
        [IR_PRMT_RC16] = {{0, 1, 0, 1}, {2, 3, 2, 3}, {0, 1, 0, 1}, {2, 3, 2, 3}},
    };
    uint32_t sels[4];
    for (unsigned k = 0; k < 4; k++) {
      const uint8_t *e = tab[i->mods.prmt][k];
      sels[k] = e[0] | e[1] << 8 | (uint32_t)e[2] << 16 | (uint32_t)e[3] << 24;
    }
    LLVMValueRef sel;
    if (i->src[2]->kind == IR_VAL_CONST) {
      sel = kint(c->i32, sels[i->src[2]->imm & 3]);
    } else {
      LLVMValueRef cc = LLVMBuildAnd(B, op_as(E, i, 2, c->i32), kint(c->i32, 3), "");
      sel = kint(c->i32, sels[3]);
      for (int k = 2; k >= 0; k--)
        sel = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, cc, kint(c->i32, k), ""), kint(c->i32, sels[k]), sel, "");
    }
    LLVMValueRef args[3] = {b, a, sel};
    return cg_intrinsic(c, "llvm.amdgcn.perm", NULL, 0, args, 3, false);
  }
  const ir_value *sv = i->src[2];
  if (sv->kind == IR_VAL_CONST && !(sv->imm & 0x8888)) {
    uint32_t sel = 0;
    for (unsigned k = 0; k < 4; k++) sel |= (uint32_t)((sv->imm >> (4 * k)) & 7) << (8 * k);
    LLVMValueRef args[3] = {b, a, kint(c->i32, sel)};
    return cg_intrinsic(c, "llvm.amdgcn.perm", NULL, 0, args, 3, false);
  }
  LLVMValueRef s = op_as(E, i, 2, c->i32);
  LLVMValueRef ab = LLVMBuildOr(B, LLVMBuildShl(B, LLVMBuildZExt(B, b, c->i64, ""), kint(c->i64, 32), ""),
                                LLVMBuildZExt(B, a, c->i64, ""), "");
  LLVMValueRef r = c->i32_0;
  for (unsigned k = 0; k < 4; k++) {
    LLVMValueRef nib = LLVMBuildAnd(B, LLVMBuildLShr(B, s, kint(c->i32, 4 * k), ""), kint(c->i32, 0xf), "");
    LLVMValueRef idx = LLVMBuildAnd(B, nib, kint(c->i32, 7), "");
    LLVMValueRef byte = LLVMBuildTrunc(B, LLVMBuildLShr(B, ab, LLVMBuildZExt(B, LLVMBuildShl(B, idx, kint(c->i32, 3), ""), c->i64, ""), ""), c->i8, "");
    LLVMValueRef sgn = LLVMBuildAShr(B, byte, kint(c->i8, 7), "");
    LLVMValueRef use_sgn = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, nib, kint(c->i32, 8), ""), c->i32_0, "");
    byte = LLVMBuildSelect(B, use_sgn, sgn, byte, "");
    r = LLVMBuildOr(B, r, LLVMBuildShl(B, LLVMBuildZExt(B, byte, c->i32, ""), kint(c->i32, 8 * k), ""), "");
  }
  return r;
}

/* lop3 (9.7.8.6): the sum of the minterms the LUT selects, with the
 * indices of PTX's ta = 0xF0, tb = 0xCC, tc = 0xAA; LLVM folds it and the
 * backend picks v_bfi/v_and_or/v_xor3 ... */
static LLVMValueRef lop3(emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  LLVMTypeRef t = ltype(E, (ir_type)i->type);
  LLVMValueRef a = op(E, i, 0), b = op(E, i, 1), x = op(E, i, 2);
  if (i->src[3]->kind != IR_VAL_CONST) {
    unsupported(E, i, "the LUT must be an immediate");
    return LLVMGetUndef(t);
  }
  unsigned lut = (unsigned)i->src[3]->imm & 0xff;
  if (lut == 0) return kint(t, 0);
  if (lut == 0xff) return kint(t, ~0ull);
  /* the common tables nvcc emits, as the expressions instcombine and the
   * backend recognise (v_xor3, v_and_or, v_bfi ...) */
  switch (lut) {
  case 0x96: return LLVMBuildXor(B, LLVMBuildXor(B, a, b, ""), x, "");
  case 0x69: return LLVMBuildNot(B, LLVMBuildXor(B, LLVMBuildXor(B, a, b, ""), x, ""), "");
  case 0x80: return LLVMBuildAnd(B, LLVMBuildAnd(B, a, b, ""), x, "");
  case 0xfe: return LLVMBuildOr(B, LLVMBuildOr(B, a, b, ""), x, "");
  case 0xe8: /* majority */
    return LLVMBuildOr(B, LLVMBuildAnd(B, a, b, ""), LLVMBuildAnd(B, x, LLVMBuildOr(B, a, b, ""), ""), "");
  case 0xca: /* a ? b : c, bitwise */
    return LLVMBuildOr(B, LLVMBuildAnd(B, a, b, ""), LLVMBuildAnd(B, LLVMBuildNot(B, a, ""), x, ""), "");
  case 0xf8: return LLVMBuildOr(B, a, LLVMBuildAnd(B, b, x, ""), "");
  case 0xea: return LLVMBuildOr(B, LLVMBuildAnd(B, a, b, ""), x, "");
  case 0x78: return LLVMBuildXor(B, a, LLVMBuildAnd(B, b, x, ""), "");
  case 0x6a: return LLVMBuildXor(B, LLVMBuildAnd(B, a, b, ""), x, "");
  default: break;
  }
  LLVMValueRef na = LLVMBuildNot(B, a, ""), nb = LLVMBuildNot(B, b, ""), nx = LLVMBuildNot(B, x, "");
  LLVMValueRef r = NULL;
  for (unsigned k = 0; k < 8; k++) {
    if (!(lut >> k & 1)) continue;
    LLVMValueRef m = LLVMBuildAnd(B, LLVMBuildAnd(B, k & 4 ? a : na, k & 2 ? b : nb, ""), k & 1 ? x : nx, "");
    r = r ? LLVMBuildOr(B, r, m, "") : m;
  }
  return r;
}

/* ---- cvt (9.7.9.21) ------------------------------------------------------- */

static LLVMValueRef round_float(emitter *E, const ir_instr *i, LLVMValueRef x) {
  switch ((ir_rnd)i->mods.rnd) {
  case IR_RND_RNI: return intr1(E, "llvm.rint", x);
  case IR_RND_RZI: return intr1(E, "llvm.trunc", x);
  case IR_RND_RMI: return intr1(E, "llvm.floor", x);
  case IR_RND_RPI: return intr1(E, "llvm.ceil", x);
  default: return x;
  }
}

/* A narrowing float conversion of x to el with the instruction's rounding:
 * rn is fptrunc; rz/rm/rp are llvm.fptrunc.round where the backend selects
 * it (f32 -> f16, f64 -> f32: it sets the mode register around the
 * conversion); f32 -> bf16 is done on the bits (bf16 is f32's upper half:
 * truncate, then add one ulp of magnitude when rounding away from zero in
 * the asked direction; NaNs stay quiet NaNs).  NULL: not supported (the
 * backend would abort on it, so it must never be emitted). */
static LLVMValueRef narrow(emitter *E, const ir_instr *i, LLVMValueRef x, LLVMTypeRef el) {
  LLVMBuilderRef B = E->b;
  cg_context *c = E->c;
  if (!is_rnd_directed(i)) return LLVMBuildFPTrunc(B, x, el, "");
  LLVMTypeRef sl = LLVMTypeOf(x);
  if ((sl == c->f32 && el == c->f16) || (sl == c->f64 && el == c->f32)) {
    const char *m = i->mods.rnd == IR_RND_RZ ? "round.towardzero" : i->mods.rnd == IR_RND_RM ? "round.downward" : "round.upward";
    LLVMTypeRef tys[2] = {el, sl};
    LLVMValueRef args[2] = {x, LLVMMetadataAsValue(c->ctx, LLVMMDStringInContext2(c->ctx, m, strlen(m)))};
    return cg_intrinsic(c, "llvm.fptrunc.round", tys, 2, args, 2, false);
  }
  if (sl == c->f32 && el == c->bf16) {
    LLVMValueRef bits = LLVMBuildBitCast(B, x, c->i32, "");
    LLVMValueRef hi = LLVMBuildLShr(B, bits, kint(c->i32, 16), "");
    LLVMValueRef inexact = LLVMBuildICmp(B, LLVMIntNE, LLVMBuildAnd(B, bits, kint(c->i32, 0xffff), ""), c->i32_0, "");
    LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, bits, c->i32_0, "");
    LLVMValueRef up = LLVMConstInt(c->i1, 0, 0);
    if (i->mods.rnd == IR_RND_RP) up = LLVMBuildAnd(B, inexact, LLVMBuildNot(B, neg, ""), "");
    if (i->mods.rnd == IR_RND_RM) up = LLVMBuildAnd(B, inexact, neg, "");
    LLVMValueRef r = LLVMBuildAdd(B, hi, LLVMBuildZExt(B, up, c->i32, ""), "");
    LLVMValueRef nan = LLVMBuildFCmp(B, LLVMRealUNO, x, x, "");
    r = LLVMBuildSelect(B, nan, LLVMBuildOr(B, hi, kint(c->i32, 0x40), ""), r, "");
    return LLVMBuildBitCast(B, LLVMBuildTrunc(B, r, c->i16, ""), c->bf16, "");
  }
  return NULL;
}

static LLVMValueRef cvt(emitter *E, const ir_instr *i) {
  LLVMBuilderRef B = E->b;
  ir_type dt = (ir_type)i->type, st = (ir_type)i->type2;
  LLVMTypeRef dl = ltype(E, dt), sl = ltype(E, st);
  if (is_fvec(dt) && dt != ir_type_f32x2 && i->nsrc == 2 && st == ir_type_f32 && !i->mods.satfinite) {
    /* cvt.rn[.relu].f16x2.f32 d, a, b (9.7.9.21): a to the upper half,
     * b to the lower */
    LLVMTypeRef el = LLVMGetElementType(dl);
    LLVMValueRef v = LLVMGetUndef(dl);
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef x = op_as(E, i, 1 - k, sl);
      LLVMValueRef h = narrow(E, i, x, el);
      if (!h) {
        unsupported(E, i, "cvt.%s.%s.%s is not implemented", ir_rnd_name((ir_rnd)i->mods.rnd), ir_type_name(dt), ir_type_name(st));
        return LLVMGetUndef(dl);
      }
      if (i->mods.relu) h = intr2(E, "llvm.maxnum", h, LLVMConstReal(el, 0.0));
      v = LLVMBuildInsertElement(B, v, h, kint(E->c->i32, k), "");
    }
    return v;
  }
  LLVMValueRef x = op_as(E, i, 0, sl);
  bool df = is_float(dt), sf = is_float(st);
  if (i->nsrc != 1 || ir_type_kind_of(dt) == IR_TK_PACKED_FLOAT || ir_type_kind_of(st) == IR_TK_PACKED_FLOAT ||
      (df && ir_type_bits(dt) < 16) || (sf && ir_type_bits(st) < 16) || dt == ir_type_tf32) {
    unsupported(E, i, "cvt.%s.%s is expanded by lower/ (lower_math.c) where PTX has it", ir_type_name(dt), ir_type_name(st));
    return LLVMGetUndef(dl);
  }
  if (df && sf) {
    unsigned db = type_bits(dl), sb = type_bits(sl);
    LLVMValueRef r;
    if (db == sb && dt == st) {
      r = round_float(E, i, x);
    } else if (db > sb || (db == sb)) {
      r = db == sb ? LLVMBuildFPCast(B, LLVMBuildFPExt(B, x, E->c->f32, ""), dl, "") : LLVMBuildFPExt(B, x, dl, "");
    } else {
      r = narrow(E, i, x, dl);
      if (!r) {
        unsupported(E, i, "cvt.%s.%s.%s is not implemented", ir_rnd_name((ir_rnd)i->mods.rnd), ir_type_name(dt), ir_type_name(st));
        return LLVMGetUndef(dl);
      }
    }
    if (i->mods.sat) r = sat01(E, r);
    return r;
  }
  if (df) { /* int -> float: rn, or directed by comparing back */
    LLVMValueRef r = is_signed(st) ? LLVMBuildSIToFP(B, x, dl, "") : LLVMBuildUIToFP(B, x, dl, "");
    if (is_rnd_directed(i) && (dt == ir_type_f32 || dt == ir_type_f64)) {
      /* back = the result converted back (saturating); the rounding went
       * up when x < back, or when r reached 2^N (signed 2^(N-1)), which
       * the saturated back cannot show */
      unsigned sb = type_bits(sl);
      LLVMTypeRef tys[2] = {sl, dl};
      LLVMValueRef back = cg_intrinsic(E->c, is_signed(st) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &r, 1, false);
      bool sg = is_signed(st);
      LLVMValueRef big = LLVMBuildFCmp(B, LLVMRealOGE, r, LLVMConstReal(dl, __builtin_ldexp(1.0, sg ? sb - 1 : sb)), "");
      LLVMValueRef lt = LLVMBuildOr(B, big, LLVMBuildICmp(B, sg ? LLVMIntSLT : LLVMIntULT, x, back, ""), "");
      LLVMValueRef gt = LLVMBuildAnd(B, LLVMBuildNot(B, big, ""), LLVMBuildICmp(B, sg ? LLVMIntSGT : LLVMIntUGT, x, back, ""), "");
      r = step_ulp(E, i, r, gt, lt);
    } else if (!fp_round_ok(E, i)) {
      return LLVMGetUndef(dl);
    }
    return i->mods.sat ? sat01(E, r) : r;
  }
  if (sf) { /* float -> int: round as asked, then saturate (NaN -> 0) */
    LLVMValueRef r = x;
    if (i->mods.rnd == IR_RND_NONE) {
      unsupported(E, i, "float-to-integer cvt needs a rounding modifier");
      return LLVMGetUndef(dl);
    }
    r = round_float(E, i, x);
    LLVMTypeRef tys[2] = {dl, sl};
    return cg_intrinsic(E->c, is_signed(dt) ? "llvm.fptosi.sat" : "llvm.fptoui.sat", tys, 2, &r, 1, false);
  }
  /* int -> int: extend by the source's signedness; .sat clamps to the
   * destination's range. */
  unsigned db = type_bits(dl), sb = type_bits(sl);
  if (i->mods.sat) {
    LLVMTypeRef w = LLVMIntTypeInContext(E->c->ctx, (db > sb ? db : sb) + 1);
    LLVMValueRef xw = is_signed(st) ? LLVMBuildSExt(B, x, w, "") : LLVMBuildZExt(B, x, w, "");
    uint64_t lo = is_signed(dt) ? ~0ull << (db - 1) : 0;   /* -2^(db-1), no signed overflow at 64 */
    uint64_t hi = is_signed(dt) ? (1ull << (db - 1)) - 1 : (db == 64 ? ~0ull : (1ull << db) - 1);
    LLVMValueRef vlo = LLVMConstInt(w, lo, 1);
    LLVMValueRef vhi = LLVMConstInt(w, hi, 0);
    if (db == 64 && !is_signed(dt)) vhi = LLVMBuildZExt(B, LLVMConstInt(E->c->i64, ~0ull, 0), w, "");
    xw = intr2(E, "llvm.smax", xw, vlo);
    xw = intr2(E, "llvm.smin", xw, vhi);
    return LLVMBuildTrunc(B, xw, dl, "");
  }
  if (db == sb) return x;
  if (db < sb) return LLVMBuildTrunc(B, x, dl, "");
  return is_signed(st) ? LLVMBuildSExt(B, x, dl, "") : LLVMBuildZExt(B, x, dl, "");
}

/* ---- atomics (9.7.13.5) ---------------------------------------------------- */

static unsigned elem_align(ir_type t) {
  unsigned b = ir_type_bits(t) / 8;
  return b ? b : 1;
}

/* One atomic on the element at byte offset `off` of the address, with the
 * value operand `vsrc` (atom.cas: vsrc, vsrc + 1). */
static LLVMValueRef atomic_one(emitter *E, const ir_instr *i, LLVMValueRef base, unsigned off, unsigned vsrc) {
  cg_context *c = E->c;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = ltype(E, t);
  LLVMValueRef p = off ? gep_bytes(E, base, off) : base;
  LLVMAtomicOrdering o = ordering((ir_sem)i->mods.sem, LLVMAtomicOrderingMonotonic);
  unsigned ss = sync_scope(E, (ir_scope)i->mods.scope);
  if (i->mods.atomop == IR_ATOM_CAS) {
    LLVMValueRef cmp = op(E, i, vsrc), nv = op(E, i, vsrc + 1);
    LLVMAtomicOrdering fo = o == LLVMAtomicOrderingRelease ? LLVMAtomicOrderingMonotonic
                            : o == LLVMAtomicOrderingAcquireRelease ? LLVMAtomicOrderingAcquire : o;
    if (is_float(t)) {
      cmp = coerce(E, cmp, LLVMIntTypeInContext(c->ctx, ir_type_bits(t)));
      nv = coerce(E, nv, LLVMTypeOf(cmp));
    }
    LLVMValueRef x = LLVMBuildAtomicCmpXchgSyncScope(E->b, p, cmp, nv, o, fo, ss);
    return LLVMBuildExtractValue(E->b, x, 0, "");
  }
  bool f = is_float(t) || is_fvec(t), s = is_signed(t);
  LLVMAtomicRMWBinOp rop = LLVMAtomicRMWBinOpAdd;
  switch ((ir_atomop)i->mods.atomop) {
  case IR_ATOM_ADD: rop = f ? LLVMAtomicRMWBinOpFAdd : LLVMAtomicRMWBinOpAdd; break;
  case IR_ATOM_MIN: rop = f ? LLVMAtomicRMWBinOpFMin : s ? LLVMAtomicRMWBinOpMin : LLVMAtomicRMWBinOpUMin; break;
  case IR_ATOM_MAX: rop = f ? LLVMAtomicRMWBinOpFMax : s ? LLVMAtomicRMWBinOpMax : LLVMAtomicRMWBinOpUMax; break;
  case IR_ATOM_INC: rop = LLVMAtomicRMWBinOpUIncWrap; break;
  case IR_ATOM_DEC: rop = LLVMAtomicRMWBinOpUDecWrap; break;
  case IR_ATOM_AND: rop = LLVMAtomicRMWBinOpAnd; break;
  case IR_ATOM_OR: rop = LLVMAtomicRMWBinOpOr; break;
  case IR_ATOM_XOR: rop = LLVMAtomicRMWBinOpXor; break;
  case IR_ATOM_EXCH: rop = LLVMAtomicRMWBinOpXchg; break;
  case IR_ATOM_CAS:
  case IR_ATOM_POPC:
  case IR_ATOM_NONE:
    unsupported(E, i, "atomic operation .%s", ir_atomop_name((ir_atomop)i->mods.atomop));
    return LLVMGetUndef(lt);
  }
  LLVMValueRef v = op(E, i, vsrc);
  if (!f && LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind) v = coerce(E, v, LLVMIntTypeInContext(c->ctx, ir_type_bits(t)));
  return LLVMBuildAtomicRMWSyncScope(E->b, rop, p, v, o, ss);
}

/* atom / red, scalar or vector.  PTX ISA 9.7.13.5: a vector atom
 * (atom.global.v2/.v4.f32.add, .v2/.v4/.v8 of f16/bf16, .v2/.v4 of
 * f16x2/bf16x2) is atomic for each element separately, not as a whole: one
 * atomic per element at consecutive addresses, in element order, each
 * result to its destination. */
static void atomic(emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  LLVMValueRef p = address(E, i, (ir_space)i->mods.space);
  if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT && !is_fvec(t)) {
    unsupported(E, i, "atomics on packed %s", ir_type_name(t));
    return;
  }
  unsigned n = i->mods.vec > 1 ? i->mods.vec : 1;
  if (n > 1 && i->mods.atomop == IR_ATOM_CAS) {
    unsupported(E, i, "vector atom.cas (the PTX ISA has none)");
    return;
  }
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef r = atomic_one(E, i, p, k * elem_align(t), 1 + k);
    if (k < i->ndst) set_dst(E, i, k, r, false);
  }
}

/* ---- loads and stores (9.7.9.8, 9.7.9.11) --------------------------------- */

static void mem_order(emitter *E, const ir_instr *i, LLVMValueRef inst, bool load) {
  ir_sem sem = (ir_sem)i->mods.sem;
  if (sem == IR_SEM_VOLATILE || sem == IR_SEM_MMIO) {
    LLVMSetVolatile(inst, 1);
  } else if (sem == IR_SEM_RELAXED || sem == IR_SEM_ACQUIRE || sem == IR_SEM_RELEASE || sem == IR_SEM_SC) {
    LLVMAtomicOrdering o = ordering(sem, LLVMAtomicOrderingMonotonic);
    if (sem == IR_SEM_SC) o = LLVMAtomicOrderingSequentiallyConsistent;
    (void)load;
    LLVMSetOrdering(inst, o);
    LLVMSetAtomicSyncScopeID(inst, sync_scope(E, (ir_scope)i->mods.scope));
  }
}


static void load(emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  LLVMTypeRef et = ltype(E, t);
  unsigned n = i->mods.vec > 1 ? i->mods.vec : 1;
  if (n > 1 && is_fvec(t)) et = LLVMIntTypeInContext(E->c->ctx, ir_type_bits(t));
  LLVMValueRef p = address(E, i, (ir_space)i->mods.space);
  LLVMTypeRef lt = n > 1 ? LLVMVectorType(et, n) : et;
  LLVMValueRef l = LLVMBuildLoad2(E->b, lt, p, "");
  LLVMSetAlignment(l, elem_align(t) * n);
  if (n == 1) mem_order(E, i, l, true);
  else if (i->mods.sem == IR_SEM_VOLATILE) LLVMSetVolatile(l, 1);
  for (unsigned k = 0; k < n && k < i->ndst; k++) {
    LLVMValueRef e = n > 1 ? LLVMBuildExtractElement(E->b, l, kint(E->c->i32, k), "") : l;
    set_dst(E, i, k, e, is_signed(t));
  }
}

static void store(emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  LLVMTypeRef et = ltype(E, t);
  unsigned n = i->mods.vec > 1 ? i->mods.vec : 1;
  if (n > 1 && is_fvec(t)) et = LLVMIntTypeInContext(E->c->ctx, ir_type_bits(t));
  LLVMValueRef p = address(E, i, (ir_space)i->mods.space);
  LLVMValueRef v;
  if (n > 1) {
    v = LLVMGetUndef(LLVMVectorType(et, n));
    for (unsigned k = 0; k < n && k + 1 < i->nsrc; k++)
      v = LLVMBuildInsertElement(E->b, v, op_as(E, i, k + 1, et), kint(E->c->i32, k), "");
  } else {
    v = op_as(E, i, 1, et);
  }
  LLVMValueRef s = LLVMBuildStore(E->b, v, p);
  LLVMSetAlignment(s, elem_align(t) * n);
  if (n == 1) mem_order(E, i, s, false);
  else if (i->mods.sem == IR_SEM_VOLATILE) LLVMSetVolatile(s, 1);
}

/* ---- calls (9.7.12.4) -------------------------------------------------------- */

/* The return of a device function: one .param of 1, 2, 4 or 8 bytes (the
 * func_retval0 of every scalar-returning function nvcc emits) is returned
 * as an integer of that size, in registers, instead of through a pointer
 * to the caller's buffer in scratch; the callee keeps a private buffer
 * that SROA removes, and the caller stores the value into its own buffer
 * (its ld.param then reads it back, also promoted).  Decided by the
 * declaration alone (a direct call: the callee's .param; an indirect one:
 * the caller's buffer, which the .callprototype makes the same size), so
 * separately compiled modules agree.  NULL: the pointer convention. */
static LLVMTypeRef ret_by_value_bytes(emitter *E, uint64_t bytes) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return NULL;
  return LLVMIntTypeInContext(E->c->ctx, (unsigned)bytes * 8);
}

static LLVMTypeRef ret_by_value(emitter *E, const ir_func *f) {
  if (f->is_kernel || f->nrets != 1 || f->rets[0].space != IR_SPACE_PARAM_FUNC) return NULL;
  return ret_by_value_bytes(E, ir_type_bits((ir_type)f->rets[0].type) / 8 * f->rets[0].count);
}

/* The same for each .param parameter of a device function: 1, 2, 4 or 8
 * bytes are passed as an integer (the caller loads its param buffer; the
 * callee stores the value into a buffer of its own, which its ld.param
 * read and SROA removes), also for address-taken functions, which
 * argpromotion leaves alone. */
static LLVMTypeRef param_by_value(emitter *E, const ir_func *f, unsigned p) {
  if (f->is_kernel || f->params[p].space != IR_SPACE_PARAM_FUNC) return NULL;
  return ret_by_value_bytes(E, ir_type_bits((ir_type)f->params[p].type) / 8 * f->params[p].count);
}

/* A function returning several .reg values (`.func (.reg .b32 a, .reg
 * .b64 b) f(...)`, which ptxas takes, "disabling ABI") returns them as
 * one LLVM struct, in order; NULL for any other shape. */
static LLVMTypeRef multi_reg_ret(emitter *E, const ir_func *f) {
  if (f->is_kernel || f->nrets < 2 || f->nrets > 64) return NULL;
  LLVMTypeRef el[64];
  for (uint32_t r = 0; r < f->nrets; r++) {
    if (f->rets[r].space != IR_SPACE_REG) return NULL;
    el[r] = ltype(E, (ir_type)f->rets[r].type);
  }
  return LLVMStructTypeInContext(E->c->ctx, el, f->nrets, 0);
}

static LLVMTypeRef func_type(emitter *E, const ir_func *f) {
  cg_context *c = E->c;
  unsigned n = f->nparams + f->nrets;
  LLVMTypeRef *pt = calloc(n ? n : 1, sizeof *pt);
  unsigned k = 0;
  LLVMTypeRef ret = c->voidt;
  for (uint32_t p = 0; p < f->nparams; p++) {
    LLVMTypeRef pv = param_by_value(E, f, p);
    pt[k++] = f->is_kernel ? c->ptr[CG_AS_CONST]
              : f->params[p].space == IR_SPACE_REG ? ltype(E, (ir_type)f->params[p].type)
              : pv ? pv : c->ptr[CG_AS_PRIVATE];
  }
  LLVMTypeRef rv = ret_by_value(E, f), mr = multi_reg_ret(E, f);
  if (mr) ret = mr;
  for (uint32_t r = 0; r < f->nrets && !mr; r++) {
    if (rv) ret = rv;
    else if (f->rets[r].space == IR_SPACE_REG && r == 0 && f->nrets == 1) ret = ltype(E, (ir_type)f->rets[r].type);
    else pt[k++] = c->ptr[CG_AS_PRIVATE];
  }
  LLVMTypeRef ft = LLVMFunctionType(ret, pt, k, 0);
  free(pt);
  return ft;
}


/* llvm.trap; on IR_TARGET_TRAP_OUT_OF_LINE targets (gfx11) a call of one
 * internal noinline function that traps: LLVM 22 expands gfx11's simulated
 * trap by splitting the block and then leaves the 64-bit scalar add pseudos
 * of the blocks after it unexpanded, which aborts the object writer
 * ("Unsupported instruction"; lower/targets.def).  Out of line, the split
 * happens in a function with nothing else in it.  Traps are cold: the call
 * costs nothing on the paths that run. */
static void emit_trap(emitter *E) {
  cg_context *c = E->c;
  if (!(c->target->features & IR_TARGET_TRAP_OUT_OF_LINE)) {
    cg_intrinsic(c, "llvm.trap", NULL, 0, NULL, 0, false);
    return;
  }
  static const char name[] = "__ptxwave_trap";
  LLVMTypeRef ft = LLVMFunctionType(c->voidt, NULL, 0, 0);
  LLVMValueRef fn = LLVMGetNamedFunction(c->mod, name);
  if (!fn) {
    fn = LLVMAddFunction(c->mod, name, ft);
    LLVMSetLinkage(fn, LLVMInternalLinkage);
    static const char *const attrs[] = {"noinline", "noreturn", "cold", "nounwind"};
    for (unsigned k = 0; k < sizeof attrs / sizeof *attrs; k++)
      cg_enum_attr(c, fn, LLVMAttributeFunctionIndex, attrs[k], 0);
    LLVMBasicBlockRef here = LLVMGetInsertBlock(c->b);
    LLVMPositionBuilderAtEnd(c->b, LLVMAppendBasicBlockInContext(c->ctx, fn, "entry"));
    cg_intrinsic(c, "llvm.trap", NULL, 0, NULL, 0, false);
    LLVMBuildUnreachable(c->b);
    LLVMPositionBuilderAtEnd(c->b, here);
  }
  LLVMValueRef call = LLVMBuildCall2(c->b, ft, fn, NULL, 0, "");
  LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                           LLVMCreateEnumAttribute(c->ctx, LLVMGetEnumAttributeKindForName("noreturn", 8), 0));
}

static void call(emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  const ir_call_info *ci = i->aux;
  if (!ci) {
    unsupported(E, i, "call without call information");
    return;
  }
  const ir_value *callee = i->src[0];
  const ir_func *f = callee->kind == IR_VAL_SYMBOL && callee->symref.sym.kind == IR_SYM_FUNC ? callee->symref.sym.func : NULL;
  unsigned nargs = ci->narg + ci->nret;
  LLVMValueRef *args = calloc(nargs ? nargs : 1, sizeof *args);
  LLVMTypeRef *tys = calloc(nargs ? nargs : 1, sizeof *tys);
  unsigned k = 0;
  bool reg_ret = false;
  for (unsigned a = 0; a < ci->narg; a++) {
    const ir_value *v = i->src[1 + ci->nret + a];
    LLVMTypeRef pv = NULL; /* by value (param_by_value): the callee's declaration, else the buffer's size */
    if (v->kind == IR_VAL_SYMBOL && f && a < f->nparams) pv = param_by_value(E, f, a);
    else if (v->kind == IR_VAL_SYMBOL && !f && v->symref.offset == 0 && v->symref.sym.kind == IR_SYM_GLOBAL &&
             v->symref.sym.global->space == IR_SPACE_PARAM)
      pv = ret_by_value_bytes(E, v->symref.sym.global->size);
    if (pv) args[k] = LLVMBuildLoad2(E->b, pv, gep_bytes(E, symbol_ptr(E, v->symref.sym, i), v->symref.offset), "");
    else if (v->kind == IR_VAL_SYMBOL) args[k] = gep_bytes(E, symbol_ptr(E, v->symref.sym, i), v->symref.offset);
    else args[k] = f && a < f->nparams ? op_as(E, i, 1 + ci->nret + a, ltype(E, (ir_type)f->params[a].type)) : val(E, i, v);
    tys[k] = LLVMTypeOf(args[k]);
    k++;
  }
  /* a by-value return (ret_by_value): the callee's declaration decides,
   * else (indirect) the size of the caller's buffer */
  LLVMTypeRef rv = NULL;
  LLVMValueRef ret_dst = NULL;
  if (ci->nret == 1 && i->src[1]->kind == IR_VAL_SYMBOL) {
    const ir_value *v = i->src[1];
    if (f) rv = ret_by_value(E, f);
    else if (v->symref.offset == 0 && v->symref.sym.kind == IR_SYM_GLOBAL && v->symref.sym.global->space == IR_SPACE_PARAM)
      rv = ret_by_value_bytes(E, v->symref.sym.global->size);
    if (rv) ret_dst = gep_bytes(E, symbol_ptr(E, v->symref.sym, i), v->symref.offset);
  }
  for (unsigned r = 0; r < ci->nret && !rv; r++) {
    const ir_value *v = i->src[1 + r];
    if (v->kind == IR_VAL_SYMBOL) {
      args[k] = gep_bytes(E, symbol_ptr(E, v->symref.sym, i), v->symref.offset);
      tys[k] = LLVMTypeOf(args[k]);
      k++;
    } else {
      reg_ret = true;
    }
  }
  LLVMTypeRef rt = c->voidt;
  bool multi = false;
  if (rv) {
    rt = rv;
  } else if (i->ndst > 1 && i->ndst <= 64 && (f ? multi_reg_ret(E, f) != NULL : ci->nret == 0)) {
    /* several .reg results: one struct (multi_reg_ret) */
    LLVMTypeRef el[64];
    for (unsigned r = 0; r < i->ndst; r++)
      el[r] = f && r < f->nrets ? ltype(E, (ir_type)f->rets[r].type)
              : i->dst[r] ? ltype(E, (ir_type)i->dst[r]->type) : c->i32;
    rt = LLVMStructTypeInContext(c->ctx, el, i->ndst, 0);
    multi = true;
  } else if (reg_ret || i->ndst) {
    rt = i->ndst && i->dst[0] ? ltype(E, (ir_type)i->dst[0]->type) : c->voidt;
  }
  LLVMValueRef fnv;
  LLVMTypeRef ft;
  if (f && f->is_decl && !strcmp(f->name, "__assertfail")) {
    /* CUDA's device assert() in unlowered IR (lower/lower_printf.c makes
     * it a printf-buffer record with its message): the kernel stops */
    emit_trap(E);
    free(args);
    free(tys);
    return;
  }
  if (f && f->is_decl && !E->c->relocatable) {
    unsupported(E, i, "call of the external function '%s'%s", f->name,
                !strcmp(f->name, "vprintf") ? " (device printf: lower/ turns it into a printf-buffer record; run lower/ first)" : "");
    free(args);
    free(tys);
    return;
  }
  if (f) {
    fnv = symbol_ptr(E, callee->symref.sym, i);
    ft = LLVMGlobalGetValueType(fnv);
    /* argument types follow the callee's declaration */
    unsigned np = LLVMCountParamTypes(ft);
    if (np != k) {
      unsupported(E, i, "call of '%s' with %u arguments, it takes %u", f->name, k, np);
      free(args);
      free(tys);
      return;
    }
  } else {
    ft = LLVMFunctionType(rt, tys, k, 0);
    fnv = LLVMBuildIntToPtr(E->b, coerce(E, val(E, i, callee), c->i64), c->ptr[0], "");
  }
  LLVMValueRef call = LLVMBuildCall2(E->b, ft, fnv, args, k, "");
  if (ret_dst) LLVMBuildStore(E->b, call, ret_dst);
  else if (multi && LLVMGetTypeKind(LLVMGetReturnType(ft)) == LLVMStructTypeKind) {
    for (unsigned r = 0; r < i->ndst; r++)
      if (i->dst[r]) set_dst(E, i, r, LLVMBuildExtractValue(E->b, call, r, ""), false);
  } else if (i->ndst && LLVMGetReturnType(ft) != c->voidt) set_dst(E, i, 0, call, false);
  free(args);
  free(tys);
}

/* ---- one instruction ------------------------------------------------------- */

static LLVMValueRef emit_value_op(emitter *E, const ir_instr *i, bool *handled);

/* wave_mma: one MFMA or WMMA instruction through its intrinsic (row r of
 * ir/ir_amd_matrix.def).  A and B go as the vectors the intrinsic takes
 * (<2na x half> for f16, <2na x i16> for bf16: IntrinsicsAMDGPU.td gives
 * bf16 operands as i16), C as <nc x float>; the MFMA rows' cbsz, abid and
 * blgp are 0 (no broadcast), the WMMA intrinsics are overloaded on the D
 * and A types.  LLVM places A/B/C in VGPRs or AGPRs and inserts the MFMA
 * and WMMA hazard waits (GCNHazardRecognizer). */
static void wave_mma(emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  const ir_amx_info *r = ir_amx_info_of((unsigned)i->src[0]->imm);
  LLVMTypeRef et = r->ta == ir_type_bf16 ? c->i16 : c->f16;
  LLVMValueRef vec[3];
  unsigned first[3] = {1, 1u + r->na, 1u + r->na + r->nb}, count[3] = {r->na, r->nb, r->nc};
  for (unsigned v = 0; v < 3; v++) {
    LLVMTypeRef wt = LLVMVectorType(v < 2 ? c->i32 : c->f32, count[v]);
    LLVMValueRef x = LLVMGetPoison(wt);
    for (unsigned k = 0; k < count[v]; k++)
      x = LLVMBuildInsertElement(B, x, op_as(E, i, first[v] + k, v < 2 ? c->i32 : c->f32), kint(c->i32, k), "");
    vec[v] = v < 2 ? LLVMBuildBitCast(B, x, LLVMVectorType(et, 2 * count[v]), "") : x;
  }
  LLVMValueRef d;
  if (r->layout == IR_AMX_L_MFMA_4X4_16B) {
    LLVMValueRef args[6] = {vec[0], vec[1], vec[2], c->i32_0, c->i32_0, c->i32_0};
    d = cg_intrinsic(c, r->llvm, NULL, 0, args, 6, true);
  } else {
    LLVMTypeRef types[2] = {LLVMTypeOf(vec[2]), LLVMTypeOf(vec[0])};
    d = cg_intrinsic(c, r->llvm, types, 2, vec, 3, true);
  }
  if (!d) {
    unsupported(E, i, "LLVM has no intrinsic %s", r->llvm);
    return;
  }
  for (unsigned k = 0; k < r->nc; k++) set_dst(E, i, k, LLVMBuildExtractElement(B, d, kint(c->i32, k), ""), false);
}

static void emit_instr(emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  switch ((ir_op)i->op) {
  case ir_op_phi: return; /* created with the block */
  case ir_op_ld:
  case ir_op_ldu:
    load(E, i);
    return;
  case ir_op_st:
    store(E, i);
    return;
  case ir_op_atom:
  case ir_op_red:
    atomic(E, i);
    return;
  case ir_op_call:
    call(E, i);
    return;
  case ir_op_wave_mma:
    wave_mma(E, i);
    return;
  case ir_op_unpack: {
    LLVMValueRef x = val(E, i, i->src[0]);
    unsigned tb = type_bits(LLVMTypeOf(x));
    LLVMValueRef xi = coerce(E, x, LLVMIntTypeInContext(c->ctx, tb));
    unsigned off = 0;
    for (unsigned k = 0; k < i->ndst; k++) {
      if (!i->dst[k]) continue;
      LLVMTypeRef dt = ltype(E, (ir_type)i->dst[k]->type);
      unsigned db = type_bits(dt);
      LLVMValueRef part = LLVMBuildLShr(B, xi, kint(LLVMTypeOf(xi), off), "");
      part = LLVMBuildTrunc(B, part, LLVMIntTypeInContext(c->ctx, db), "");
      set_dst(E, i, k, part, false);
      off += db;
    }
    return;
  }
  case ir_op_setp: {
    ir_type t = (ir_type)i->type;
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    if (is_fvec(t)) {
      /* setp.f16x2 p|q: p from the low halves, q from the high ones, each
       * combined with c: p = BoolOp(t[0], c), q = BoolOp(t[1], c) */
      LLVMValueRef v = fcmp_or_icmp(E, i, ir_type_f32, a, b);
      if (i->nsrc > 2) v = boolop(E, i, v, splat2(E, op_as(E, i, 2, c->i1)));
      set_dst(E, i, 0, LLVMBuildExtractElement(B, v, c->i32_0, ""), false);
      set_dst(E, i, 1, LLVMBuildExtractElement(B, v, c->i32_1, ""), false);
      return;
    }
    LLVMValueRef p = fcmp_or_icmp(E, i, t, a, b);
    LLVMValueRef q = LLVMBuildNot(B, p, "");
    if (i->nsrc > 2) {
      LLVMValueRef cc = op_as(E, i, 2, c->i1);
      p = boolop(E, i, p, cc);
      q = boolop(E, i, q, cc);
    }
    set_dst(E, i, 0, p, false);
    set_dst(E, i, 1, q, false);
    return;
  }
  case ir_op_add:
  case ir_op_sub:
  case ir_op_mad:
    if (i->mods.cc) {
      /* carry out (.cc): the unsigned overflow of the add; for sub.cc the
       * carry-out of a + ~b + 1, i.e. no borrow (emu/emu_alu.c's head:
       * NVIDIA's CC.CF, which addc/madc after a sub.cc read). */
      LLVMTypeRef t = ltype(E, (ir_type)i->type);
      LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
      if (i->op == ir_op_mad) {
        a = i->mods.mulmode == IR_MUL_HI ? mul_ext(E, a, b, is_signed((ir_type)i->type), type_bits(t), true)
                                         : LLVMBuildMul(B, a, b, "");
        b = op(E, i, 2);
      }
      LLVMValueRef r = intr2(E, i->op == ir_op_sub ? "llvm.usub.with.overflow" : "llvm.uadd.with.overflow", a, b);
      set_dst(E, i, 0, LLVMBuildExtractValue(B, r, 0, ""), false);
      LLVMValueRef ov = LLVMBuildExtractValue(B, r, 1, "");
      set_dst(E, i, i->ndst - 1, i->op == ir_op_sub ? LLVMBuildNot(B, ov, "") : ov, false);
      return;
    }
    break;
  case ir_op_addc:
  case ir_op_subc:
  case ir_op_madc: {
    LLVMTypeRef t = ltype(E, (ir_type)i->type);
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    unsigned cin = i->op == ir_op_madc ? 3 : 2;
    if (i->op == ir_op_madc) {
      a = i->mods.mulmode == IR_MUL_HI ? mul_ext(E, a, b, is_signed((ir_type)i->type), type_bits(t), true)
                                       : LLVMBuildMul(B, a, b, "");
      b = op(E, i, 2);
    }
    bool sub = i->op == ir_op_subc;
    /* subc: a + ~b + CC.CF, i.e. a - b - (1 - CC.CF), and CC.CF out is
     * "no borrow" (emu/emu_alu.c's head) */
    LLVMValueRef cf = op_as(E, i, cin, c->i1);
    LLVMValueRef ci = LLVMBuildZExt(B, sub ? LLVMBuildNot(B, cf, "") : cf, t, "");
    const char *n = sub ? "llvm.usub.with.overflow" : "llvm.uadd.with.overflow";
    LLVMValueRef r1 = intr2(E, n, a, b);
    LLVMValueRef r2 = intr2(E, n, LLVMBuildExtractValue(B, r1, 0, ""), ci);
    set_dst(E, i, 0, LLVMBuildExtractValue(B, r2, 0, ""), false);
    if (i->mods.cc) {
      LLVMValueRef ov = LLVMBuildOr(B, LLVMBuildExtractValue(B, r1, 1, ""), LLVMBuildExtractValue(B, r2, 1, ""), "");
      set_dst(E, i, i->ndst - 1, sub ? LLVMBuildNot(B, ov, "") : ov, false);
    }
    return;
  }
  case ir_op_br:
    LLVMBuildBr(B, E->bbs[i->targets[0]->id]);
    return;
  case ir_op_cbr:
    LLVMBuildCondBr(B, op_as(E, i, 0, c->i1), E->bbs[i->targets[0]->id], E->bbs[i->targets[1]->id]);
    return;
  case ir_op_brx: {
    LLVMValueRef idx = op_as(E, i, 0, c->i32);
    /* an index past the list is undefined in PTX: the last target */
    LLVMValueRef sw = LLVMBuildSwitch(B, idx, E->bbs[i->targets[i->ntargets - 1]->id], i->ntargets);
    for (uint32_t k = 0; k + 1 < i->ntargets; k++) LLVMAddCase(sw, kint(c->i32, k), E->bbs[i->targets[k]->id]);
    return;
  }
  case ir_op_ret:
  case ir_op_exit:
    if (!E->f->is_kernel && i->op == ir_op_exit) {
      cg_intrinsic(c, "llvm.amdgcn.endpgm", NULL, 0, NULL, 0, false);
      LLVMBuildUnreachable(B);
      return;
    }
    if (E->ret_buf) {
      LLVMBuildRet(B, LLVMBuildLoad2(B, E->ret_ty, E->ret_buf, ""));
    } else if (LLVMGetTypeKind(LLVMGetReturnType(LLVMGlobalGetValueType(E->fn))) == LLVMStructTypeKind) {
      /* several .reg returns (multi_reg_ret): ret's operands, in order */
      LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(E->fn));
      LLVMValueRef agg = LLVMGetUndef(rt);
      for (unsigned r = 0; r < LLVMCountStructElementTypes(rt) && r < i->nsrc; r++)
        agg = LLVMBuildInsertValue(B, agg, op_as(E, i, r, LLVMStructGetTypeAtIndex(rt, r)), r, "");
      LLVMBuildRet(B, agg);
    } else if (LLVMGetReturnType(LLVMGlobalGetValueType(E->fn)) != c->voidt) {
      LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(E->fn));
      LLVMBuildRet(B, i->nsrc ? op_as(E, i, 0, rt) : LLVMGetUndef(rt));
    } else {
      LLVMBuildRetVoid(B);
    }
    return;
  case ir_op_trap:
    emit_trap(E);
    LLVMBuildUnreachable(B);
    return;
  case ir_op_unreachable:
    LLVMBuildUnreachable(B);
    return;
  case ir_op_bar:
    if (i->mods.barmode == IR_BAR_SYNC && (i->nsrc == 0 || (i->nsrc == 1 && i->src[0]->kind == IR_VAL_CONST && i->src[0]->imm == 0))) {
      workgroup_barrier(E);
      return;
    }
    unsupported(E, i, "named barriers, thread counts and bar.arrive are left to lower/ (not run)");
    return;
  case ir_op_workgroup_barrier:
    workgroup_barrier(E);
    return;
  case ir_op_wave_sync:
    cg_intrinsic(c, "llvm.amdgcn.wave.barrier", NULL, 0, NULL, 0, true);
    return;
  case ir_op_membar:
  case ir_op_fence:
    if (i->mods.proxy) return; /* proxy fences order nothing on AMD GPUs (one proxy) */
    fence(E, i->op == ir_op_membar || i->mods.sem == IR_SEM_SC || i->mods.sem == IR_SEM_NONE
                 ? LLVMAtomicOrderingSequentiallyConsistent
                 : ordering((ir_sem)i->mods.sem, LLVMAtomicOrderingSequentiallyConsistent),
          sync_scope(E, (ir_scope)i->mods.scope));
    return;
  case ir_op_prefetch:
  case ir_op_prefetchu:
  case ir_op_pmevent:
  case ir_op_nanosleep:
  case ir_op_applypriority:
  case ir_op_discard:
  case ir_op_cp_async_bulk_prefetch:
  case ir_op_cp_async_bulk_prefetch_tensor:
    /* Hints without a required effect (PTX ISA 9.7.9.14-15, 9.7.9.25.4.3:
     * discard leaves the lines' contents undefined, which keeping them is).
     * AMDGPU has no per-thread data prefetch: gfx12's s_prefetch_data (what
     * LLVM makes of llvm.prefetch there, AMDGPUUsage) takes a uniform
     * scalar address, gfx9-gfx11 have none, and a prefetch that never
     * faults cannot be a load.  Eviction priorities have no counterpart
     * either (the cache-policy bits of AMD loads are per instruction,
     * not per line), so these are no-ops. */
    return;
  case ir_op_brkpt:
    cg_intrinsic(c, "llvm.debugtrap", NULL, 0, NULL, 0, false);
    return;
  default: break;
  }
  bool handled = true;
  LLVMValueRef v = emit_value_op(E, i, &handled);
  if (!handled) return;
  if (v) set_dst(E, i, 0, v, is_signed((ir_type)i->type));
}

/* Ops with one result computed from their operands. */
static LLVMValueRef emit_value_op(emitter *E, const ir_instr *i, bool *handled) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = ltype(E, t);
  bool f = is_float(t) || is_fvec(t), s = is_signed(t);
  switch ((ir_op)i->op) {
  case ir_op_copy: return op(E, i, 0);
  case ir_op_symaddr: return op(E, i, 0);
  case ir_op_sreg: {
    LLVMValueRef v = sreg(E, i);
    set_dst(E, i, 0, v, false);
    *handled = false;
    return NULL;
  }
  case ir_op_pack: {
    LLVMTypeRef it = LLVMIntTypeInContext(c->ctx, type_bits(lt));
    LLVMValueRef r = kint(it, 0);
    unsigned off = 0;
    for (unsigned k = 0; k < i->nsrc; k++) {
      LLVMValueRef x = val(E, i, i->src[k]);
      unsigned xb = type_bits(LLVMTypeOf(x));
      x = LLVMBuildZExt(B, coerce(E, x, LLVMIntTypeInContext(c->ctx, xb)), it, "");
      r = LLVMBuildOr(B, r, LLVMBuildShl(B, x, kint(it, off), ""), "");
      off += xb;
    }
    return r;
  }
  case ir_op_add:
  case ir_op_sub: {
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    bool add = i->op == ir_op_add;
    if (f) {
      LLVMValueRef r;
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64))
        r = mode_rounded(E, i, add ? '+' : '-', (LLVMValueRef[]){a, b}, 2);
      else if (!fp_round_ok(E, i)) return NULL;
      else r = add ? LLVMBuildFAdd(B, a, b, "") : LLVMBuildFSub(B, a, b, "");
      return i->mods.sat ? sat01(E, r) : r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    if (i->mods.sat) return intr2(E, add ? "llvm.sadd.sat" : "llvm.ssub.sat", a, b);
    return add ? LLVMBuildAdd(B, a, b, "") : LLVMBuildSub(B, a, b, "");
  }
  case ir_op_mul: {
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    if (f) {
      LLVMValueRef r;
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64)) r = mode_rounded(E, i, '*', (LLVMValueRef[]){a, b}, 2);
      else if (!fp_round_ok(E, i)) return NULL;
      else r = LLVMBuildFMul(B, a, b, "");
      return i->mods.sat ? sat01(E, r) : r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    switch ((ir_mulmode)i->mods.mulmode) {
    case IR_MUL_HI: return mul_ext(E, a, b, s, type_bits(lt), true);
    case IR_MUL_WIDE: return mul_ext(E, a, b, s, type_bits(lt), false);
    case IR_MUL_LO:
    case IR_MUL_NONE: return LLVMBuildMul(B, a, b, "");
    }
    break;
  }
  case ir_op_mad:
  case ir_op_fma: {
    if (f) {
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64)) {
        LLVMValueRef r = mode_rounded(E, i, 'f', (LLVMValueRef[]){op(E, i, 0), op(E, i, 1), op(E, i, 2)}, 3);
        return i->mods.sat ? sat01(E, r) : r;
      }
      if (!fp_round_ok(E, i)) return NULL;
      /* mad.f32 with a rounding modifier and fma are fused (9.7.3.6) */
      LLVMValueRef r = intr3(E, "llvm.fma", op(E, i, 0), op(E, i, 1), op(E, i, 2));
      return i->mods.sat ? sat01(E, r) : r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    switch ((ir_mulmode)i->mods.mulmode) {
    case IR_MUL_HI: {
      LLVMValueRef r = mul_ext(E, a, b, s, type_bits(lt), true);
      LLVMValueRef x = op(E, i, 2);
      return i->mods.sat ? intr2(E, "llvm.sadd.sat", r, x) : LLVMBuildAdd(B, r, x, "");
    }
    case IR_MUL_WIDE: {
      LLVMValueRef r = mul_ext(E, a, b, s, type_bits(lt), false);
      return LLVMBuildAdd(B, r, coerce_ext(E, val(E, i, i->src[2]), LLVMTypeOf(r), s), "");
    }
    case IR_MUL_LO:
    case IR_MUL_NONE: return LLVMBuildAdd(B, LLVMBuildMul(B, a, b, ""), op(E, i, 2), "");
    }
    break;
  }
  case ir_op_mul24:
  case ir_op_mad24: {
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    LLVMValueRef k8 = kint(lt, 8);
    a = s ? LLVMBuildAShr(B, LLVMBuildShl(B, a, k8, ""), k8, "") : LLVMBuildAnd(B, a, kint(lt, 0xffffff), "");
    b = s ? LLVMBuildAShr(B, LLVMBuildShl(B, b, k8, ""), k8, "") : LLVMBuildAnd(B, b, kint(lt, 0xffffff), "");
    LLVMValueRef r;
    if (i->mods.mulmode == IR_MUL_HI) {
      /* .hi: bits 47..16 of the 48-bit product (9.7.1.5) */
      LLVMValueRef w = mul_ext(E, a, b, s, type_bits(lt), false);
      r = LLVMBuildTrunc(B, LLVMBuildLShr(B, w, kint(LLVMTypeOf(w), 16), ""), lt, "");
    } else {
      r = LLVMBuildMul(B, a, b, "");
    }
    return i->op == ir_op_mad24 ? LLVMBuildAdd(B, r, op(E, i, 2), "") : r;
  }
  case ir_op_sad: {
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    LLVMValueRef d = LLVMBuildSub(B, intr2(E, s ? "llvm.smax" : "llvm.umax", a, b),
                                  intr2(E, s ? "llvm.smin" : "llvm.umin", a, b), "");
    return LLVMBuildAdd(B, d, op(E, i, 2), "");
  }
  case ir_op_div:
  case ir_op_rem: {
    LLVMValueRef a = op(E, i, 0), b = op(E, i, 1);
    if (f) {
      if (i->op == ir_op_rem) break;
      if (is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64)) return directed(E, i, '/', a, b);
      if (!i->mods.approx && !i->mods.full && !fp_round_ok(E, i)) return NULL;
      LLVMValueRef r = LLVMBuildFDiv(B, a, b, "");
      if (i->mods.approx || i->mods.full) {
        /* div.approx/div.full.f32: within 2 ulp (9.7.3.8): !fpmath 2.5 */
        LLVMValueRef md = LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, (LLVMMetadataRef[]){
          LLVMValueAsMetadata(LLVMConstReal(c->f32, 2.5))}, 1));
        LLVMSetMetadata(r, LLVMGetMDKindIDInContext(c->ctx, "fpmath", 6), md);
      }
      return r;
    }
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    /* PTX leaves x/0 unspecified; LLVM makes it undefined behaviour:
     * divide by 1 instead, keeping the result defined. */
    LLVMValueRef z = LLVMBuildICmp(B, LLVMIntEQ, b, kint(lt, 0), "");
    b = LLVMBuildSelect(B, z, kint(lt, 1), b, "");
    if (s) {
      /* INT_MIN / -1 is undefined in LLVM too */
      unsigned n = type_bits(lt);
      LLVMValueRef ov = LLVMBuildAnd(B, LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 1ull << (n - 1)), ""),
                                     LLVMBuildICmp(B, LLVMIntEQ, b, kint(lt, ~0ull), ""), "");
      b = LLVMBuildSelect(B, ov, kint(lt, 1), b, "");
    }
    if (i->op == ir_op_div) return s ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
    return s ? LLVMBuildSRem(B, a, b, "") : LLVMBuildURem(B, a, b, "");
  }
  case ir_op_abs:
    if (f) return intr1(E, "llvm.fabs", op(E, i, 0));
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    {
      LLVMValueRef a = op(E, i, 0);
      LLVMValueRef args[2] = {a, LLVMConstInt(c->i1, 0, 0)};
      LLVMTypeRef at = LLVMTypeOf(a);
      return cg_intrinsic(c, "llvm.abs", &at, 1, args, 2, false);
    }
  case ir_op_neg:
    if (f) return LLVMBuildFNeg(B, op(E, i, 0), "");
    if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT) break;
    return LLVMBuildNeg(B, op(E, i, 0), "");
  case ir_op_min:
  case ir_op_max: {
    if (i->nsrc < 2 || i->nsrc > 3 || (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT && !is_fvec(t))) break;
    if (!f && (i->mods.absmod || i->mods.xorsign || (i->mods.relu && !s))) break;
    if (i->mods.xorsign != i->mods.absmod) break;   /* PTX has .xorsign only as .xorsign.abs */
    bool mn = i->op == ir_op_min;
    if (!f) {
      /* 9.7.1.10/11: two or three inputs; .relu (s32, s16x2) clamps below at 0 */
      const char *in = mn ? (s ? "llvm.smin" : "llvm.umin") : (s ? "llvm.smax" : "llvm.umax");
      LLVMValueRef r = intr2(E, in, op(E, i, 0), op(E, i, 1));
      if (i->nsrc == 3) r = intr2(E, in, r, op(E, i, 2));
      if (i->mods.relu) r = intr2(E, "llvm.smax", r, LLVMConstNull(LLVMTypeOf(r)));
      return r;
    }
    /* 9.7.3.10/11: minNum/maxNum (.NaN: a NaN input gives NaN), over two or
     * three inputs; .xorsign.abs: of the magnitudes, the result's sign the
     * xor of the inputs' signs (NaN results keep theirs); .relu: a negative
     * result becomes +0. */
    const char *fn = i->mods.nan ? (mn ? "llvm.minimum" : "llvm.maximum") : (mn ? "llvm.minnum" : "llvm.maxnum");
    bool vec = is_fvec(t);
    unsigned eb = vec ? ir_type_bits(t) / 2 : ir_type_bits(t);
    LLVMTypeRef ie = LLVMIntTypeInContext(c->ctx, eb), it = vec ? LLVMVectorType(ie, 2) : ie;
    LLVMValueRef r = NULL, sx = NULL;
    for (unsigned k = 0; k < i->nsrc; k++) {
      LLVMValueRef a = op(E, i, k);
      if (i->mods.xorsign) {
        LLVMValueRef ab = LLVMBuildBitCast(B, a, it, "");
        sx = sx ? LLVMBuildXor(B, sx, ab, "") : ab;
        a = intr1(E, "llvm.fabs", a);
      }
      r = r ? intr2(E, fn, r, a) : a;
    }
    LLVMValueRef isnan = LLVMBuildFCmp(B, LLVMRealUNO, r, r, "");
    if (i->mods.xorsign) {
      LLVMValueRef smask = kint(ie, 1ull << (eb - 1));
      if (vec) smask = LLVMConstVector((LLVMValueRef[]){smask, smask}, 2);
      LLVMValueRef rb = LLVMBuildOr(B, LLVMBuildBitCast(B, r, it, ""), LLVMBuildAnd(B, sx, smask, ""), "");
      r = LLVMBuildSelect(B, isnan, r, LLVMBuildBitCast(B, rb, lt, ""), "");
    }
    if (i->mods.relu) {
      LLVMValueRef neg = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildBitCast(B, r, it, ""), LLVMConstNull(it), "");
      neg = LLVMBuildAnd(B, neg, LLVMBuildNot(B, isnan, ""), "");
      r = LLVMBuildSelect(B, neg, LLVMConstNull(lt), r, "");
    }
    return r;
  }
  case ir_op_popc: return coerce(E, intr1(E, "llvm.ctpop", op(E, i, 0)), c->i32);
  case ir_op_clz: {
    LLVMValueRef a = op(E, i, 0);
    return coerce(E, intr2(E, "llvm.ctlz", a, LLVMConstInt(c->i1, 0, 0)), c->i32);
  }
  case ir_op_bfind: {
    /* 9.7.1.16: the position of the most significant non-sign bit, or
     * 0xffffffff; .shiftamt: the left shift that brings it to the msb. */
    LLVMValueRef a = op(E, i, 0);
    unsigned n = type_bits(lt);
    if (s) a = LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntSLT, a, kint(lt, 0), ""), LLVMBuildNot(B, a, ""), a, "");
    LLVMValueRef lz = coerce(E, intr2(E, "llvm.ctlz", a, LLVMConstInt(c->i1, 0, 0)), c->i32);
    LLVMValueRef none = LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 0), "");
    LLVMValueRef r = i->mods.bfind_shiftamt ? lz : LLVMBuildSub(B, kint(c->i32, n - 1), lz, "");
    return LLVMBuildSelect(B, none, kint(c->i32, 0xffffffff), r, "");
  }
  case ir_op_brev: return intr1(E, "llvm.bitreverse", op(E, i, 0));
  case ir_op_bfe: return bfe(E, i);
  case ir_op_bfi: return bfi(E, i);
  case ir_op_rcp:
  case ir_op_sqrt:
  case ir_op_rsqrt: {
    if (!f) break;
    LLVMValueRef a = op(E, i, 0);
    bool approx = i->mods.approx;
    if (!approx && is_rnd_directed(i) && (t == ir_type_f32 || t == ir_type_f64) && i->op != ir_op_rsqrt)
      return directed(E, i, i->op == ir_op_rcp ? '/' : 's', i->op == ir_op_rcp ? NULL : a, i->op == ir_op_rcp ? a : NULL);
    if (!approx && !fp_round_ok(E, i)) return NULL;
    if (i->op == ir_op_rcp) {
      if (approx && t == ir_type_f32 && i->mods.ftz) return intr1(E, "llvm.amdgcn.rcp", a);
      if (approx && t == ir_type_f32) {
        /* rcp.approx.f32 without .ftz keeps subnormal inputs and results
         * (PTX ISA, rcp); v_rcp_f32 flushes both (a subnormal input gives
         * inf where 1/x may be finite, 1/x below 2^-126 gives 0).  Scaling
         * by s = 2^24 below 2^-126 and 2^-24 above 2^126, rcp(x*s)*s, keeps
         * them (the scalings are exact, the last one rounds once into the
         * subnormal range); NaN, +-0 and +-inf map as before. */
        LLVMValueRef ab = intr1(E, "llvm.fabs", a);
        LLVMValueRef tiny = LLVMBuildFCmp(B, LLVMRealOLT, ab, LLVMConstReal(lt, 0x1p-126), "");
        LLVMValueRef huge = LLVMBuildFCmp(B, LLVMRealOGT, ab, LLVMConstReal(lt, 0x1p126), "");
        LLVMValueRef sc = LLVMBuildSelect(B, tiny, LLVMConstReal(lt, 0x1p24),
                                          LLVMBuildSelect(B, huge, LLVMConstReal(lt, 0x1p-24), LLVMConstReal(lt, 1.0), ""), "");
        LLVMValueRef r = intr1(E, "llvm.amdgcn.rcp", LLVMBuildFMul(B, a, sc, ""));
        return LLVMBuildFMul(B, r, sc, "");
      }
      return fp_flags(LLVMBuildFDiv(B, LLVMConstReal(lt, 1.0), a, ""), i);
    }
    if (i->op == ir_op_sqrt) return fp_flags(intr1(E, "llvm.sqrt", a), i);
    if (t == ir_type_f32 && !i->mods.ftz) {
      /* rsqrt.approx.f32 keeps subnormal inputs (PTX ISA, rsqrt: only .ftz
       * flushes them), which v_rsq_f32 reads as zero (+inf, where the
       * answer is a finite 2^63..2^75; AMDGPUUsage: the f32 instructions do
       * not support denormal inputs).  Below 2^-126 the input is scaled by
       * 2^24 and the result by 2^12, both exact: the same relative error;
       * +-0 still gives +-inf. */
      LLVMValueRef tiny = LLVMBuildFCmp(B, LLVMRealOLT, intr1(E, "llvm.fabs", a), LLVMConstReal(lt, 0x1p-126), "");
      LLVMValueRef x = LLVMBuildSelect(B, tiny, LLVMBuildFMul(B, a, LLVMConstReal(lt, 0x1p24), ""), a, "");
      LLVMValueRef r = intr1(E, "llvm.amdgcn.rsq", x);
      return LLVMBuildSelect(B, tiny, LLVMBuildFMul(B, r, LLVMConstReal(lt, 0x1p12), ""), r, "");
    }
    if (t == ir_type_f32 || t == ir_type_f64) return intr1(E, "llvm.amdgcn.rsq", a);
    break;
  }
  case ir_op_sin:
  case ir_op_cos: {
    if (t != ir_type_f32) break;
    /* v_sin_f32/v_cos_f32 take revolutions: x / 2pi (9.7.3.18: approx) */
    LLVMValueRef a = LLVMBuildFMul(B, op(E, i, 0), LLVMConstReal(c->f32, 0.15915494309189535), "");
    return intr1(E, i->op == ir_op_sin ? "llvm.amdgcn.sin" : "llvm.amdgcn.cos", a);
  }
  case ir_op_lg2:
  case ir_op_ex2: {
    if (t != ir_type_f32 && t != ir_type_f16) break;
    /* ex2/lg2.approx.ftz.f32 (PTX ISA, Floating-Point Instructions: ex2,
     * lg2) flush subnormal inputs and results to sign-preserving zero, which
     * is what v_exp_f32 / v_log_f32 do by themselves (1 ulp in the normal
     * range, as llvm.exp2/log2 use them); LLVM's llvm.exp2/log2 add a
     * rescaling around them for subnormal results/inputs unless the whole
     * function flushes f32 subnormals (nvcc's precise expf uses
     * ex2.approx.ftz.f32 also without -ftz). */
    if (t == ir_type_f32 && i->mods.ftz && i->mods.approx)
      return intr1(E, i->op == ir_op_lg2 ? "llvm.amdgcn.log" : "llvm.amdgcn.exp2", op(E, i, 0));
    return fp_flags(intr1(E, i->op == ir_op_lg2 ? "llvm.log2" : "llvm.exp2", op(E, i, 0)), i);
  }
  case ir_op_tanh: {
    /* tanh.approx.f32 (9.7.3.22: max relative error 2^-11):
     * 1 - 2/(2^(2x log2 e) + 1), which saturates to +-1 through inf and 0;
     * near 0, where that cancels, x - x^3/3 (relative error < 2^-14 for
     * |x| < 1/8). */
    if (t != ir_type_f32) break;
    LLVMValueRef x = op(E, i, 0);
    LLVMValueRef e = intr1(E, "llvm.exp2", LLVMBuildFMul(B, x, LLVMConstReal(c->f32, 2.0 * 1.4426950408889634), ""));
    LLVMSetFastMathFlags(e, LLVMFastMathApproxFunc);
    LLVMValueRef big = LLVMBuildFSub(B, LLVMConstReal(c->f32, 1.0),
                                     LLVMBuildFDiv(B, LLVMConstReal(c->f32, 2.0), LLVMBuildFAdd(B, e, LLVMConstReal(c->f32, 1.0), ""), ""), "");
    LLVMValueRef x3 = LLVMBuildFMul(B, LLVMBuildFMul(B, x, x, ""), x, "");
    LLVMValueRef small = intr3(E, "llvm.fma", x3, LLVMConstReal(c->f32, -1.0 / 3.0), x);
    LLVMValueRef near0 = LLVMBuildFCmp(B, LLVMRealOLT, intr1(E, "llvm.fabs", x), LLVMConstReal(c->f32, 0.125), "");
    return LLVMBuildSelect(B, near0, small, big, "");
  }
  case ir_op_copysign:
    if (!f) break;
    return intr2(E, "llvm.copysign", op(E, i, 1), op(E, i, 0));
  case ir_op_testp: {
    /* llvm.is.fpclass masks (LangRef): snan 1, qnan 2, -inf 4, -normal 8,
     * -subnormal 16, -0 32, +0 64, +subnormal 128, +normal 256, +inf 512 */
    unsigned m = 0;
    switch ((ir_testp)i->mods.testp) {
    case IR_TESTP_FINITE: m = 8 | 16 | 32 | 64 | 128 | 256; break;
    case IR_TESTP_INFINITE: m = 4 | 512; break;
    case IR_TESTP_NUMBER: m = 0x3fc; break;
    case IR_TESTP_NOTANUMBER: m = 3; break;
    case IR_TESTP_NORMAL: m = 8 | 256; break;
    case IR_TESTP_SUBNORMAL: m = 16 | 128; break;
    case IR_TESTP_NONE: break;
    }
    LLVMValueRef a = op(E, i, 0);
    LLVMValueRef args[2] = {a, kint(c->i32, m)};
    LLVMTypeRef at = LLVMTypeOf(a);
    return cg_intrinsic(c, "llvm.is.fpclass", &at, 1, args, 2, false);
  }
  case ir_op_set: {
    ir_type st = i->type2 ? (ir_type)i->type2 : t;
    LLVMTypeRef sl = ltype(E, st);
    bool packed = is_fvec(st);
    /* A packed source compares per half (fcmp on <2 x half>; f32 stands
     * for "a float" in fcmp_or_icmp) and gives a result per half: 1.0 in
     * an .f16x2/.bf16x2 destination, 0xffff in a .u32/.s32 one (PTX ISA,
     * half precision set; emu/emu_alu.c h_set). */
    LLVMValueRef p = fcmp_or_icmp(E, i, packed ? ir_type_f32 : st, op_as(E, i, 0, sl), op_as(E, i, 1, sl));
    if (i->nsrc > 2) p = boolop(E, i, p, packed ? splat2(E, op_as(E, i, 2, c->i1)) : op_as(E, i, 2, c->i1));
    if (packed && is_fvec(t)) return LLVMBuildSelect(B, p, fconst(lt, 1.0), fconst(lt, 0.0), "");
    if (packed) {
      LLVMTypeRef h2 = LLVMVectorType(c->i16, 2);
      LLVMValueRef r = LLVMBuildSelect(B, p, LLVMConstAllOnes(h2), LLVMConstNull(h2), "");
      return coerce(E, LLVMBuildBitCast(B, r, c->i32, ""), lt);
    }
    if (f) return LLVMBuildSelect(B, p, LLVMConstReal(lt, 1.0), LLVMConstReal(lt, 0.0), "");
    return LLVMBuildSelect(B, p, kint(lt, ~0ull), kint(lt, 0), "");
  }
  case ir_op_selp: return LLVMBuildSelect(B, op_as(E, i, 2, c->i1), op(E, i, 0), op(E, i, 1), "");
  case ir_op_slct: {
    ir_type ct = i->type2 ? (ir_type)i->type2 : ir_type_s32;
    LLVMValueRef cc = op_as(E, i, 2, ltype(E, ct));
    LLVMValueRef ge = is_float(ct) ? LLVMBuildFCmp(B, LLVMRealOGE, cc, LLVMConstReal(LLVMTypeOf(cc), 0.0), "")
                                   : LLVMBuildICmp(B, LLVMIntSGE, cc, kint(LLVMTypeOf(cc), 0), "");
    return LLVMBuildSelect(B, ge, op(E, i, 0), op(E, i, 1), "");
  }
  case ir_op_and: return LLVMBuildAnd(B, op(E, i, 0), op(E, i, 1), "");
  case ir_op_or: return LLVMBuildOr(B, op(E, i, 0), op(E, i, 1), "");
  case ir_op_xor: return LLVMBuildXor(B, op(E, i, 0), op(E, i, 1), "");
  case ir_op_not: return LLVMBuildNot(B, op(E, i, 0), "");
  case ir_op_cnot: {
    LLVMValueRef a = op(E, i, 0);
    return LLVMBuildZExt(B, LLVMBuildICmp(B, LLVMIntEQ, a, kint(lt, 0), ""), lt, "");
  }
  case ir_op_lop3: return lop3(E, i);
  case ir_op_shf: {
    /* 9.7.8.7: shf.l d = high word of {b:a} << n; shf.r d = low word of
     * {b:a} >> n; .wrap takes n mod 32 (llvm.fshl/fshr do), .clamp min(n,32). */
    LLVMValueRef a = op_as(E, i, 0, c->i32), b = op_as(E, i, 1, c->i32), n = op_as(E, i, 2, c->i32);
    bool left = i->mods.shf_left;
    LLVMValueRef r = intr3(E, left ? "llvm.fshl" : "llvm.fshr", b, a, n);
    if (i->mods.shf_clamp) {
      LLVMValueRef big = LLVMBuildICmp(B, LLVMIntUGE, n, kint(c->i32, 32), "");
      r = LLVMBuildSelect(B, big, left ? a : b, r, "");
    }
    return r;
  }
  case ir_op_shl: return shift(E, i, true);
  case ir_op_shr: return shift(E, i, false);
  case ir_op_prmt: return prmt(E, i);
  case ir_op_cvta: {
    /* cvta.<space>: window address -> generic; cvta.to.<space>: back.
     * Global addresses are the same in both (AMDGPUUsage: flat = global). */
    ir_space sp = (ir_space)i->mods.space;
    LLVMValueRef a = val(E, i, i->src[0]);
    if (sp == IR_SPACE_GLOBAL) return a;
    unsigned as = space_as(E, sp);
    bool narrow = as == CG_AS_LDS || as == CG_AS_PRIVATE;
    if (i->mods.cvta_to) {
      LLVMValueRef p = LLVMBuildIntToPtr(B, coerce(E, a, c->i64), c->ptr[0], "");
      p = LLVMBuildAddrSpaceCast(B, p, c->ptr[as], "");
      return LLVMBuildPtrToInt(B, p, narrow ? c->i32 : c->i64, "");
    }
    LLVMValueRef p = LLVMBuildIntToPtr(B, coerce(E, a, narrow ? c->i32 : c->i64), c->ptr[as], "");
    p = LLVMBuildAddrSpaceCast(B, p, c->ptr[0], "");
    return LLVMBuildPtrToInt(B, p, c->i64, "");
  }
  case ir_op_isspacep: {
    ir_space sp = (ir_space)i->mods.space;
    LLVMValueRef p = LLVMBuildIntToPtr(B, coerce(E, val(E, i, i->src[0]), c->i64), c->ptr[0], "");
    /* 9.7.9.19.  A generic address is in LDS or scratch iff it lies in
     * that aperture (AMDGPUUsage "Address Spaces"); a cluster is one CTA
     * here, so .shared::cluster is .shared.  Our .const variables live in
     * global memory (addrspace 4): .const is true inside one of the
     * module's .const variables, and .global is the rest of the flat
     * space, as the emulator answers (emu_mem.c h_isspacep: const is a
     * read-only allocation, global a writable one). */
    if (sp == IR_SPACE_SHARED || sp == IR_SPACE_SHARED_CTA || sp == IR_SPACE_SHARED_CLUSTER)
      return cg_intrinsic(c, "llvm.amdgcn.is.shared", NULL, 0, &p, 1, false);
    if (sp == IR_SPACE_LOCAL) return cg_intrinsic(c, "llvm.amdgcn.is.private", NULL, 0, &p, 1, false);
    if (sp != IR_SPACE_GLOBAL && sp != IR_SPACE_CONST) break;
    LLVMValueRef in_const = LLVMConstInt(c->i1, 0, 0), pi = LLVMBuildPtrToInt(B, p, c->i64, "");
    for (uint32_t g = 0; g < E->m->nglobals; g++) {
      const ir_global *v = E->m->globals[g];
      LLVMValueRef gv = v->space == IR_SPACE_CONST && v->size ? map_get(&E->syms, v) : NULL;
      if (!gv) continue;
      LLVMValueRef base = LLVMBuildPtrToInt(B, LLVMBuildAddrSpaceCast(B, gv, c->ptr[0], ""), c->i64, "");
      LLVMValueRef off = LLVMBuildSub(B, pi, base, "");
      in_const = LLVMBuildOr(B, in_const, LLVMBuildICmp(B, LLVMIntULT, off, kint(c->i64, v->size), ""), "");
    }
    if (sp == IR_SPACE_CONST) return in_const;
    LLVMValueRef sh = cg_intrinsic(c, "llvm.amdgcn.is.shared", NULL, 0, &p, 1, false);
    LLVMValueRef pr = cg_intrinsic(c, "llvm.amdgcn.is.private", NULL, 0, &p, 1, false);
    return LLVMBuildNot(B, LLVMBuildOr(B, LLVMBuildOr(B, sh, pr, ""), in_const, ""), "");
  }
  case ir_op_cvt: return cvt(E, i);
  case ir_op_dp4a: {
    /* 9.7.1.23: d = c + sum of the products of the four byte pairs. */
    LLVMValueRef a = op_as(E, i, 0, c->i32), b = op_as(E, i, 1, c->i32), x = op_as(E, i, 2, c->i32);
    LLVMValueRef r = x;
    for (unsigned k = 0; k < 4; k++) {
      LLVMValueRef sh = kint(c->i32, 8 * k);
      LLVMValueRef ab = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, sh, ""), c->i8, "");
      LLVMValueRef bb = LLVMBuildTrunc(B, LLVMBuildLShr(B, b, sh, ""), c->i8, "");
      ab = i->mods.signed_a ? LLVMBuildSExt(B, ab, c->i32, "") : LLVMBuildZExt(B, ab, c->i32, "");
      bb = i->mods.signed_b ? LLVMBuildSExt(B, bb, c->i32, "") : LLVMBuildZExt(B, bb, c->i32, "");
      r = LLVMBuildAdd(B, r, LLVMBuildMul(B, ab, bb, ""), "");
    }
    return r;
  }
  case ir_op_bmsk:
  case ir_op_szext: {
    /* bmsk (9.7.1.22): b ones from bit a; szext (9.7.1.21): the low b
     * bits of a, sign- or zero-extended.  .clamp limits the counts to 32,
     * .wrap takes them mod 32. */
    LLVMValueRef a = op_as(E, i, 0, c->i32), b = op_as(E, i, 1, c->i32);
    LLVMValueRef k32 = kint(c->i32, 32), k31 = kint(c->i32, 31);
    if (i->mods.shf_clamp) {
      b = intr2(E, "llvm.umin", b, k32);
      if (i->op == ir_op_bmsk) a = intr2(E, "llvm.umin", a, k32);
    } else {
      b = LLVMBuildAnd(B, b, k31, "");
      if (i->op == ir_op_bmsk) a = LLVMBuildAnd(B, a, k31, "");
    }
    LLVMValueRef bfull = LLVMBuildICmp(B, LLVMIntUGE, b, k32, "");
    LLVMValueRef bs = LLVMBuildSelect(B, bfull, c->i32_0, b, "");
    LLVMValueRef ones = LLVMBuildSub(B, LLVMBuildShl(B, c->i32_1, bs, ""), c->i32_1, "");
    ones = LLVMBuildSelect(B, bfull, kint(c->i32, ~0ull), ones, "");
    if (i->op == ir_op_bmsk) {
      LLVMValueRef afull = LLVMBuildICmp(B, LLVMIntUGE, a, k32, "");
      LLVMValueRef m = LLVMBuildShl(B, ones, LLVMBuildSelect(B, afull, c->i32_0, a, ""), "");
      return LLVMBuildSelect(B, afull, c->i32_0, m, "");
    }
    if (!s) return LLVMBuildAnd(B, a, ones, "");
    /* sign: shift the field to the top and back; b == 0 gives 0 */
    LLVMValueRef sh = LLVMBuildSub(B, k32, LLVMBuildSelect(B, bfull, k32, LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, b, c->i32_0, ""), k32, b, ""), ""), "");
    LLVMValueRef r = LLVMBuildAShr(B, LLVMBuildShl(B, a, sh, ""), sh, "");
    return LLVMBuildSelect(B, LLVMBuildICmp(B, LLVMIntEQ, b, c->i32_0, ""), c->i32_0, r, "");
  }
  case ir_op_dp2a: {
    /* 9.7.1.24: d = c + a.h0 * b.b(k) + a.h1 * b.b(k+1), k = 0 (.lo) or 2 (.hi) */
    LLVMValueRef a = op_as(E, i, 0, c->i32), b = op_as(E, i, 1, c->i32), x = op_as(E, i, 2, c->i32);
    LLVMValueRef r = x;
    for (unsigned k = 0; k < 2; k++) {
      LLVMValueRef ah = LLVMBuildTrunc(B, LLVMBuildLShr(B, a, kint(c->i32, 16 * k), ""), c->i16, "");
      LLVMValueRef bb = LLVMBuildTrunc(B, LLVMBuildLShr(B, b, kint(c->i32, 8 * (k + (i->mods.dp_hi ? 2 : 0))), ""), c->i8, "");
      ah = i->mods.signed_a ? LLVMBuildSExt(B, ah, c->i32, "") : LLVMBuildZExt(B, ah, c->i32, "");
      bb = i->mods.signed_b ? LLVMBuildSExt(B, bb, c->i32, "") : LLVMBuildZExt(B, bb, c->i32, "");
      r = LLVMBuildAdd(B, r, LLVMBuildMul(B, ah, bb, ""), "");
    }
    return r;
  }
  /* ---- wave-level target operations ---- */
  case ir_op_wave_lane_id: return lane_id(E);
  case ir_op_wave_ballot: return ballot(E, op_as(E, i, 0, c->i1));
  case ir_op_wave_exec: return ballot(E, LLVMConstInt(c->i1, 1, 0));
  case ir_op_wave_bpermute: {
    LLVMValueRef args[2] = {LLVMBuildShl(B, op_as(E, i, 1, c->i32), kint(c->i32, 2), ""), op_as(E, i, 0, c->i32)};
    return cg_intrinsic(c, "llvm.amdgcn.ds.bpermute", NULL, 0, args, 2, true);
  }
  case ir_op_wave_swizzle: {
    const ir_value *pat = i->src[1];
    if (pat->kind != IR_VAL_CONST || pat->imm >= 0x8000) {
      unsupported(E, i, "the swizzle pattern must be an immediate below 0x8000 (bitmask mode)");
      return NULL;
    }
    /* A pattern that stays inside each quad of lanes (and_mask keeps bits
     * 4:2, or_mask and xor_mask touch only bits 1:0) is a DPP quad_perm:
     * v_mov_b32_dpp, one VALU op without the LDS crossbar or a wait, which
     * LLVM's DPP combine can fold into the op that uses it (the last steps
     * of a butterfly reduction, lower_mma's quad broadcasts).  quad_perm
     * lane i of each quad reads lane sel_i: dpp_ctrl = sel_0 | sel_1 << 2 |
     * sel_2 << 4 | sel_3 << 6 (AMDGPU ISA, DPP_CTRL QUAD_PERM 0x00-0xff),
     * row and bank masks all on, bound_ctrl on (a source lane that is
     * not active reads as 0, which PTX leaves undefined; with it LLVM's
     * DPP combine folds the move into a VOP2 user: v_add_f32_dpp).  Every
     * target of the table has DPP16 quad_perm. */
    uint32_t p = (uint32_t)pat->imm, and_m = p & 31, or_m = (p >> 5) & 31, xor_m = (p >> 10) & 31;
    if ((and_m & 0x1c) == 0x1c && !(or_m & 0x1c) && !(xor_m & 0x1c)) {
      uint32_t ctrl = 0;
      for (uint32_t q = 0; q < 4; q++) ctrl |= (((q & and_m) | or_m) ^ xor_m) << (2 * q);
      LLVMValueRef args[6] = {LLVMGetPoison(c->i32), op_as(E, i, 0, c->i32), kint(c->i32, ctrl & 0xff),
                              kint(c->i32, 15), kint(c->i32, 15), LLVMConstInt(c->i1, 1, 0)};
      return cg_intrinsic(c, "llvm.amdgcn.update.dpp", &c->i32, 1, args, 6, true);
    }
    LLVMValueRef args[2] = {op_as(E, i, 0, c->i32), kint(c->i32, pat->imm)};
    return cg_intrinsic(c, "llvm.amdgcn.ds.swizzle", NULL, 0, args, 2, true);
  }
  case ir_op_wave_readlane: {
    LLVMValueRef args[2] = {op(E, i, 0), op_as(E, i, 1, c->i32)};
    return cg_intrinsic(c, "llvm.amdgcn.readlane", &lt, 1, args, 2, true);
  }
  case ir_op_wave_readfirstlane: {
    LLVMValueRef a = op(E, i, 0);
    return cg_intrinsic(c, "llvm.amdgcn.readfirstlane", &lt, 1, &a, 1, true);
  }
  case ir_op_workitem_id:
  case ir_op_workgroup_id:
  case ir_op_workgroup_size:
  case ir_op_workgroup_count: {
    unsigned dim;
    dim_const(E, i, 0, &dim);
    return i->op == ir_op_workitem_id ? workitem_id(E, dim)
           : i->op == ir_op_workgroup_id ? workgroup_id(E, dim)
           : i->op == ir_op_workgroup_size ? workgroup_size(E, dim)
                                           : workgroup_count(E, dim);
  }
  case ir_op_dyn_lds_size: return dyn_lds_size(E);
  case ir_op_cycle_counter: return cg_intrinsic(c, "llvm.readcyclecounter", NULL, 0, NULL, 0, false);
  case ir_op_realtime_counter: return realtime(E);
  case ir_op_hw_id: {
    /* s_getreg_b32 of the generation's hardware id register (ir_targets.def:
     * HW_ID, id 4, on gfx9; HW_ID1, id 23, on gfx10+), all 32 bits:
     * simm16 = id | offset 0 << 6 | (size-1 = 31) << 11 */
    LLVMValueRef a = kint(c->i32, ir_target_gen(c->target)->hw_id_reg | (31u << 11));
    return cg_intrinsic(c, "llvm.amdgcn.s.getreg", NULL, 0, &a, 1, false);
  }
  /* handled in emit_instr */
  case ir_op_phi: case ir_op_ld: case ir_op_ldu: case ir_op_st: case ir_op_atom: case ir_op_red:
  case ir_op_call: case ir_op_unpack: case ir_op_wave_mma: case ir_op_setp: case ir_op_addc: case ir_op_subc:
  case ir_op_madc: case ir_op_br: case ir_op_cbr: case ir_op_brx: case ir_op_ret: case ir_op_exit:
  case ir_op_trap: case ir_op_unreachable: case ir_op_bar: case ir_op_workgroup_barrier:
  case ir_op_wave_sync: case ir_op_membar: case ir_op_fence: case ir_op_prefetch:
  case ir_op_prefetchu: case ir_op_pmevent: case ir_op_nanosleep: case ir_op_applypriority:
  case ir_op_discard: case ir_op_brkpt: case ir_op_cp_async_bulk_prefetch:
  case ir_op_cp_async_bulk_prefetch_tensor:
    break;
  case ir_op_createpolicy:
    /* The cache policy ld/st/cp.async take with .L2::cache_hint (PTX ISA
     * 9.7.9.16): an opaque 64-bit value that only those hints read, and
     * codegen honours none (above, prefetch), so any value is right.  0,
     * as the emulator gives (emu_mem.c). */
    return kint(c->i64, 0);
  /* warp-level: lower/ replaces them before codegen */
  case ir_op_shfl: case ir_op_vote: case ir_op_match: case ir_op_activemask: case ir_op_redux:
  case ir_op_elect: case ir_op_bar_warp_sync:
    unsupported(E, i, "warp-level operation: run lower/ first (wave size %u)", c->wave_size);
    *handled = false;
    return NULL;
  /* math lower/lower_math.c expands into ops mapped here */
  case ir_op_fns: case ir_op_cvt_pack:
    unsupported(E, i, "expanded by lower/ (lower_math.c): run lower/ first");
    *handled = false;
    return NULL;
  /* not implemented by codegen (lowering or later work) */
  case ir_op_st_async: case ir_op_mapa: case ir_op_getctarank:
  case ir_op_cp_async: case ir_op_cp_async_commit_group: case ir_op_cp_async_wait_group:
  case ir_op_cp_async_mbarrier_arrive: case ir_op_cp_async_bulk: case ir_op_cp_reduce_async_bulk:
  case ir_op_cp_async_bulk_tensor: case ir_op_cp_reduce_async_bulk_tensor:
  case ir_op_cp_async_bulk_commit_group: case ir_op_cp_async_bulk_wait_group:
  case ir_op_multimem_ld_reduce: case ir_op_multimem_st: case ir_op_multimem_red:
  case ir_op_tensormap_replace: case ir_op_tex: case ir_op_tld4:
  case ir_op_txq: case ir_op_istypep: case ir_op_suld: case ir_op_sust: case ir_op_sured:
  case ir_op_suq: case ir_op_bar_red: case ir_op_barrier_cluster: case ir_op_red_async:
  case ir_op_griddepcontrol: case ir_op_mbarrier_init: case ir_op_mbarrier_inval:
  case ir_op_mbarrier_expect_tx: case ir_op_mbarrier_complete_tx: case ir_op_mbarrier_arrive:
  case ir_op_mbarrier_arrive_drop: case ir_op_mbarrier_test_wait: case ir_op_mbarrier_try_wait:
  case ir_op_mbarrier_pending_count: case ir_op_setmaxnreg: case ir_op_wmma_load:
  case ir_op_wmma_store: case ir_op_wmma_mma: case ir_op_mma: case ir_op_mma_sp:
  case ir_op_ldmatrix: case ir_op_stmatrix: case ir_op_movmatrix: case ir_op_wgmma_fence:
  case ir_op_wgmma_commit_group: case ir_op_wgmma_wait_group: case ir_op_wgmma_mma_async:
  case ir_op_vadd: case ir_op_vsub: case ir_op_vabsdiff: case ir_op_vmin: case ir_op_vmax:
  case ir_op_vshl: case ir_op_vshr: case ir_op_alloca: case ir_op_stacksave:
  case ir_op_stackrestore: case ir_op_opaque:
    unsupported(E, i, "not implemented by codegen");
    *handled = false;
    return NULL;
  case ir_op_count:
    break;
  }
  if (t != ir_type_none && *ir_type_name(t)) unsupported(E, i, "the .%s form is not implemented by codegen", ir_type_name(t));
  else if (i->op == ir_op_isspacep) unsupported(E, i, "the .%s form is not implemented by codegen", ir_space_name((ir_space)i->mods.space));
  else unsupported(E, i, "this form is not implemented by codegen");
  *handled = false;
  return NULL;
}

/* A guarded instruction (@p): pure ops become a select against the keep
 * values; anything with an effect, a load or a possible fault is branched
 * around, with phis joining its results and the keep values. */
static void emit_guarded(emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  const ir_op_info *info = &ir_op_infos[i->op];
  LLVMValueRef g = val(E, i, i->guard);
  g = coerce(E, g, c->i1);
  if (i->guard_neg) g = LLVMBuildNot(E->b, g, "");
  if (!(info->flags & (IR_F_SIDE | IR_F_LOAD | IR_F_STORE | IR_F_TRAP | IR_F_CONV))) {
    emit_instr(E, i);
    for (unsigned k = 0; k < i->ndst; k++) {
      if (!i->dst[k] || !E->vals[i->dst[k]->id]) continue;
      LLVMValueRef kv = coerce(E, val(E, i, i->keep[k]), LLVMTypeOf(E->vals[i->dst[k]->id]));
      E->vals[i->dst[k]->id] = LLVMBuildSelect(E->b, g, E->vals[i->dst[k]->id], kv, "");
    }
    return;
  }
  LLVMBasicBlockRef pre = LLVMGetInsertBlock(E->b);
  LLVMBasicBlockRef then = LLVMAppendBasicBlockInContext(c->ctx, E->fn, "guarded");
  LLVMBasicBlockRef cont = LLVMAppendBasicBlockInContext(c->ctx, E->fn, "join");
  LLVMValueRef *keep = calloc(i->ndst ? i->ndst : 1, sizeof *keep);
  for (unsigned k = 0; k < i->ndst; k++)
    if (i->dst[k]) keep[k] = coerce(E, val(E, i, i->keep[k]), ltype(E, (ir_type)i->dst[k]->type));
  LLVMBuildCondBr(E->b, g, then, cont);
  LLVMPositionBuilderAtEnd(E->b, then);
  emit_instr(E, i);
  LLVMBasicBlockRef then_end = LLVMGetInsertBlock(E->b);
  LLVMBuildBr(E->b, cont);
  LLVMPositionBuilderAtEnd(E->b, cont);
  for (unsigned k = 0; k < i->ndst; k++) {
    if (!i->dst[k] || !E->vals[i->dst[k]->id]) continue;
    LLVMValueRef v = E->vals[i->dst[k]->id];
    LLVMValueRef phi = LLVMBuildPhi(E->b, LLVMTypeOf(v), "");
    LLVMValueRef in[2] = {v, keep[k]};
    LLVMBasicBlockRef bb[2] = {then_end, pre};
    LLVMAddIncoming(phi, in, bb, 2);
    E->vals[i->dst[k]->id] = phi;
  }
  free(keep);
}

/* ---- functions ---------------------------------------------------------------- */

/* Reverse post-order of the CFG from the entry; unreachable blocks after. */
static uint32_t rpo(const ir_func *f, ir_block **blocks, ir_block **order) {
  uint32_t n = 0;
  ir_foreach_block(f, b) blocks[n++] = b;
  bool *seen = calloc(n ? n : 1, 1);
  ir_block **stack = calloc(n ? n : 1, sizeof *stack);
  uint32_t *next = calloc(n ? n : 1, sizeof *next);
  uint32_t sp = 0, pos = n;
  if (n) {
    stack[sp++] = f->entry;
    seen[f->entry->id] = 1;
  }
  while (sp) {
    ir_block *b = stack[sp - 1];
    uint32_t ns = ir_block_nsuccs(b);
    if (next[b->id] < ns) {
      ir_block *s = ir_block_succ(b, next[b->id]++);
      if (s && !seen[s->id]) {
        seen[s->id] = 1;
        stack[sp++] = s;
      }
    } else {
      order[--pos] = b;
      sp--;
    }
  }
  /* reachable blocks sit in order[pos..n); move them to the front */
  uint32_t nr = n - pos;
  memmove(order, order + pos, nr * sizeof *order);
  uint32_t k = nr;
  for (uint32_t j = 0; j < n; j++)
    if (!seen[blocks[j]->id]) order[k++] = blocks[j];
  free(seen);
  free(stack);
  free(next);
  return n;
}

static const char *value_name(emitter *E, const char *prefix, const char *name, char *buf, size_t cap) {
  (void)E;
  snprintf(buf, cap, "%s%s", prefix, name);
  return buf;
}

/* Float modes of a function: denormal-fp-math-f32 "preserve-sign" when every
 * f32 arithmetic instruction of it has .ftz (nvcc's -ftz=true), else IEEE.
 * A mix keeps subnormals (the ftz ones then keep them too: documented). */
static void float_modes(emitter *E, const ir_func *f, LLVMValueRef fn) {
  unsigned ftz = 0, noftz = 0;
  ir_foreach_block(f, b) ir_foreach_instr(b, i) {
    if (i->type != ir_type_f32) continue;
    switch ((ir_op)i->op) {
    case ir_op_add: case ir_op_sub: case ir_op_mul: case ir_op_fma: case ir_op_mad: case ir_op_div:
    case ir_op_min: case ir_op_max: case ir_op_rcp: case ir_op_sqrt: case ir_op_rsqrt: case ir_op_setp:
      break;
    default: continue;
    }
    if (i->mods.ftz) ftz++;
    else noftz++;
  }
  if (ftz && !noftz) cg_fn_attr(E->c, fn, "denormal-fp-math-f32", "preserve-sign,preserve-sign");
}

static bool emit_body(emitter *E, const ir_func *f, LLVMValueRef fn) {
  cg_context *c = E->c;
  ir_compute_preds((ir_func *)f);
  E->f = f;
  E->fn = fn;
  E->vals = calloc(f->nvalues ? f->nvalues : 1, sizeof *E->vals);
  E->bbs = calloc(f->nblocks + 1, sizeof *E->bbs);
  E->bb_end = calloc(f->nblocks + 1, sizeof *E->bb_end);
  ir_block **blocks = calloc(f->nblocks + 1, sizeof *blocks), **order = calloc(f->nblocks + 1, sizeof *order);
  char nb[256];

  E->alloca_bb = LLVMAppendBasicBlockInContext(c->ctx, fn, "entry");
  ir_foreach_block(f, b) E->bbs[b->id] = LLVMAppendBasicBlockInContext(c->ctx, fn, b->name ? b->name : "");

  /* Parameters. */
  unsigned k = 0;
  for (uint32_t p = 0; p < f->nparams; p++, k++) {
    LLVMValueRef a = LLVMGetParam(fn, k);
    LLVMSetValueName2(a, f->params[p].name, strlen(f->params[p].name));
    LLVMTypeRef pv = param_by_value(E, f, p);
    if (!f->is_kernel && f->params[p].space == IR_SPACE_REG && f->params[p].value) {
      E->vals[f->params[p].value->id] = a;
    } else if (pv) { /* the callee's own buffer of a by-value .param */
      LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
      LLVMValueRef buf = LLVMBuildAlloca(E->b, pv, "");
      LLVMSetAlignment(buf, f->params[p].align ? f->params[p].align : 4);
      LLVMBuildStore(E->b, a, buf);
      map_put(&E->syms, &f->params[p], buf);
    } else {
      map_put(&E->syms, &f->params[p], a);
    }
  }
  E->ret_buf = NULL;
  E->ret_ty = ret_by_value(E, f);
  for (uint32_t r = 0; r < f->nrets; r++) {
    if (E->ret_ty) { /* the callee's own buffer; ret returns its contents */
      LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
      E->ret_buf = LLVMBuildAlloca(E->b, E->ret_ty, f->rets[r].name);
      LLVMSetAlignment(E->ret_buf, f->rets[r].align ? f->rets[r].align : 4);
      map_put(&E->syms, &f->rets[r], E->ret_buf);
      continue;
    }
    if (f->rets[r].space == IR_SPACE_REG && ((r == 0 && f->nrets == 1) || multi_reg_ret(E, f))) continue;
    LLVMValueRef a = LLVMGetParam(fn, k++);
    LLVMSetValueName2(a, f->rets[r].name, strlen(f->rets[r].name));
    map_put(&E->syms, &f->rets[r], a);
  }

  /* Function-scope .local and .param variables: allocas in the entry. */
  LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
  for (uint32_t g = 0; g < E->m->nglobals; g++) {
    const ir_global *v = E->m->globals[g];
    if (v->owner != f || (v->space != IR_SPACE_LOCAL && v->space != IR_SPACE_PARAM &&
                          v->space != IR_SPACE_PARAM_FUNC))
      continue;
    LLVMTypeRef at = LLVMArrayType2(c->i8, v->size ? v->size : 1);
    LLVMValueRef a = LLVMBuildAlloca(E->b, at, value_name(E, "", v->name, nb, sizeof nb));
    LLVMSetAlignment(a, v->align ? v->align : 4);
    /* a call's argument/return buffer: scoped to its call sequence
     * (cg_compile.c gives it lifetime markers) */
    if (v->space == IR_SPACE_PARAM) LLVMSetMetadata(a, c->kind_callbuf, LLVMMetadataAsValue(c->ctx, LLVMMDNodeInContext2(c->ctx, NULL, 0)));
    map_put(&E->syms, v, a);
  }
  LLVMBuildBr(E->b, E->bbs[f->entry->id]);

  uint32_t n = rpo(f, blocks, order);
  /* Blocks no path from the entry reaches are left empty (unreachable):
   * their instructions may use values of other unreachable blocks in any
   * order, and nothing observes them. */
  bool *reach = calloc(f->nblocks + 1, 1);
  reach[f->entry->id] = true;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t j = 0; j < n; j++)
      if (reach[order[j]->id])
        for (uint32_t k = 0; k < ir_block_nsuccs(order[j]); k++) {
          ir_block *sb = ir_block_succ(order[j], k);
          if (sb && !reach[sb->id]) reach[sb->id] = changed = true;
        }
  }
  /* Phis first, so back edges find them. */
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    LLVMPositionBuilderAtEnd(E->b, E->bbs[b->id]);
    ir_foreach_instr(b, i) {
      if (i->op != ir_op_phi) break;
      ir_type pt = (ir_type)i->dst[0]->type;
      E->vals[i->dst[0]->id] = reach[b->id] ? LLVMBuildPhi(E->b, ltype(E, pt), "") : LLVMGetUndef(ltype(E, pt));
    }
  }
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    LLVMBasicBlockRef bb = E->bbs[b->id];
    LLVMPositionBuilderAtEnd(E->b, bb);
    if (!reach[b->id]) {
      ir_foreach_instr(b, i) for (unsigned k = 0; k < i->ndst; k++)
        if (i->dst[k] && !E->vals[i->dst[k]->id]) E->vals[i->dst[k]->id] = LLVMGetUndef(ltype(E, (ir_type)i->dst[k]->type));
      LLVMBuildUnreachable(E->b);
      E->bb_end[b->id] = bb;
      continue;
    }
    ir_foreach_instr(b, i) {
      if (i->guard) emit_guarded(E, i);
      else emit_instr(E, i);
      /* a result left undefined by an error (reported) must not report
       * again at every use */
      for (unsigned k = 0; k < i->ndst; k++)
        if (i->dst[k] && !E->vals[i->dst[k]->id]) E->vals[i->dst[k]->id] = LLVMGetUndef(ltype(E, (ir_type)i->dst[k]->type));
    }
    E->bb_end[b->id] = LLVMGetInsertBlock(E->b);
    if (!LLVMGetBasicBlockTerminator(E->bb_end[b->id])) LLVMBuildUnreachable(E->b);
  }
  /* Phi operands, from the block that ends each predecessor. */
  for (uint32_t j = 0; j < n; j++) {
    ir_block *b = order[j];
    if (!reach[b->id]) continue;
    ir_foreach_instr(b, i) {
      if (i->op != ir_op_phi) break;
      LLVMValueRef phi = E->vals[i->dst[0]->id];
      for (uint32_t p = 0; p < i->nsrc && p < b->npreds; p++) {
        LLVMBasicBlockRef from = E->bb_end[b->preds[p]->id];
        if (!from) continue;
        if (!reach[b->preds[p]->id]) continue; /* ends in unreachable: no edge */
        LLVMBasicBlockRef cur = LLVMGetInsertBlock(E->b);
        /* coercions of the incoming value go at the end of the predecessor */
        LLVMPositionBuilderBefore(E->b, LLVMGetBasicBlockTerminator(from));
        LLVMValueRef v = coerce(E, val(E, i, i->src[p]), LLVMTypeOf(phi));
        LLVMPositionBuilderAtEnd(E->b, cur);
        LLVMAddIncoming(phi, &v, &from, 1);
      }
    }
  }
  float_modes(E, f, fn);
  free(reach);
  free(blocks);
  free(order);
  free(E->vals);
  free(E->bbs);
  free(E->bb_end);
  E->vals = NULL;
  return !E->failed;
}

/* Kernel attributes: 11.4 performance-tuning directives to AMDGPU function
 * attributes (AMDGPUUsage "LLVM IR Attributes"). */
static void kernel_attrs(emitter *E, const ir_func *f, LLVMValueRef fn) {
  cg_context *c = E->c;
  char buf[64];
  LLVMSetFunctionCallConv(fn, LLVMAMDGPUKERNELCallConv);
  unsigned max = 1024;
  if (f->reqntid[0]) max = f->reqntid[0] * (f->reqntid[1] ? f->reqntid[1] : 1) * (f->reqntid[2] ? f->reqntid[2] : 1);
  else if (f->maxntid[0]) max = f->maxntid[0] * (f->maxntid[1] ? f->maxntid[1] : 1) * (f->maxntid[2] ? f->maxntid[2] : 1);
  if (max > 1024) max = 1024;
  snprintf(buf, sizeof buf, "%u,%u", f->reqntid[0] ? max : 1, max);
  cg_fn_attr(c, fn, "amdgpu-flat-work-group-size", buf);
  if (f->minnctapersm) {
    /* .minnctapersm N blocks of `max` threads on one SM: at least
     * ceil(N * max / wave / 4 SIMDs) waves per SIMD (execution unit). */
    unsigned waves = (f->minnctapersm * max + c->wave_size * 4 - 1) / (c->wave_size * 4);
    if (waves > 1) {
      snprintf(buf, sizeof buf, "%u", waves > 8 ? 8 : waves);
      cg_fn_attr(c, fn, "amdgpu-waves-per-eu", buf);
    }
  }
  /* CUDA blocks are always full: no partial workgroups */
  cg_fn_attr(c, fn, "uniform-work-group-size", "true");
  unsigned k = 0;
  unsigned byref = LLVMGetEnumAttributeKindForName("byref", 5);
  for (uint32_t p = 0; p < f->nparams; p++, k++) {
    const ir_param *pp = &f->params[p];
    uint64_t size = (uint64_t)(ir_type_bits((ir_type)pp->type) / 8) * (pp->count ? pp->count : 1);
    if (!size) size = 8;
    LLVMTypeRef at = LLVMArrayType2(c->i8, size);
    LLVMAddAttributeAtIndex(fn, k + 1, LLVMCreateTypeAttribute(c->ctx, byref, at));
    cg_enum_attr(c, fn, k + 1, "align", pp->align ? pp->align : 1);
    cg_enum_attr(c, fn, k + 1, "noalias", 0);
    cg_enum_attr(c, fn, k + 1, "nonnull", 0);
    cg_enum_attr(c, fn, k + 1, "dereferenceable", size);
  }
}

/* ---- module ------------------------------------------------------------------ */

static LLVMValueRef declare_global(emitter *E, const ir_global *g) {
  cg_context *c = E->c;
  unsigned as;
  switch ((ir_space)g->space) {
  case IR_SPACE_GLOBAL: as = CG_AS_GLOBAL; break;
  case IR_SPACE_SHARED:
  case IR_SPACE_SHARED_CTA:
  case IR_SPACE_SHARED_CLUSTER: as = CG_AS_LDS; break;
  case IR_SPACE_CONST: as = CG_AS_CONST; break;
  default: return NULL;
  }
  char name[512];
  if (g->owner) snprintf(name, sizeof name, "%s.%s", g->owner->name, g->name);
  else snprintf(name, sizeof name, "%s", g->name);
  bool dyn = g->is_extern_shared || (as == CG_AS_LDS && g->linkage == IR_LINK_EXTERN && !g->size);
  uint64_t size = g->size;
  LLVMTypeRef t = LLVMArrayType2(c->i8, dyn ? 0 : size);
  LLVMValueRef v = LLVMAddGlobalInAddressSpace(c->mod, t, name, as);
  LLVMSetAlignment(v, g->align ? g->align : 1);
  if (dyn) {
    /* dynamic LDS: a zero-sized external LDS array; LLVM places it after
     * the static LDS of the kernel (AMDGPUUsage "Dynamic LDS") */
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return v;
  }
  if (as == CG_AS_LDS) {
    /* Static LDS aligned to 16 bytes where its size allows (the largest
     * power of two dividing it, at most 16): the address of a shared
     * variable is the implementation's choice, and with it the backend
     * can merge a row of LDS reads into ds_read_b128 (cg_compile.c runs
     * infer-alignment and the load-store vectorizer after the pipeline):
     * PTX's .align 4 on a float array otherwise caps them at
     * ds_read2_b32. */
    unsigned a = g->align ? g->align : 1;
    uint64_t pow2 = size & (~size + 1);
    unsigned want = pow2 >= 16 || !size ? 16 : (unsigned)pow2;
    if (want > a) LLVMSetAlignment(v, want);
    LLVMSetInitializer(v, LLVMGetUndef(t));
    LLVMSetLinkage(v, LLVMInternalLinkage);
    return v;
  }
  if (g->linkage == IR_LINK_EXTERN && !g->init) {
    LLVMSetLinkage(v, LLVMExternalLinkage);
    return v;
  }
  if (!g->nrelocs) {
    LLVMSetInitializer(v, g->init ? LLVMConstStringInContext2(c->ctx, (const char *)g->init, size, 1)
                                  : LLVMConstNull(t));
  }
  if (g->owner) {
    LLVMSetLinkage(v, LLVMInternalLinkage);
  } else {
    /* Module scope, .visible or not: the runtime finds it by name
     * (cuModuleGetGlobal).  A file-static __constant__ or __device__
     * variable is not .visible in nvcc's PTX (5.4.6: internal linkage), yet
     * cudart registers it and cudaMemcpyToSymbol reaches it through
     * cuModuleGetGlobal, which CUDA answers from the cubin's local symbols.
     * A code object's loader only sees exported symbols, so every module
     * variable is exported (protected: one definition, no interposition).
     * It also keeps LLVM from folding loads of a variable the host writes
     * (an internal constant never stored to looks constant to globalopt). */
    LLVMSetLinkage(v, g->linkage == IR_LINK_WEAK || g->linkage == IR_LINK_COMMON ? LLVMWeakAnyLinkage : LLVMExternalLinkage);
    LLVMSetVisibility(v, LLVMProtectedVisibility);
  }
  if (as == CG_AS_CONST) LLVMSetGlobalConstant(v, 0);
  return v;
}

/* An initializer holding addresses ({ f, g+8, generic(s) }, 5.4.4): a
 * packed struct of byte runs and the 32/64-bit address constants. */
static bool reloc_init(emitter *E, const ir_global *g) {
  cg_context *c = E->c;
  LLVMValueRef gv = map_get(&E->syms, g);
  if (!gv) return true;
  uint32_t n = g->nrelocs;
  LLVMValueRef *parts = calloc(2 * n + 1, sizeof *parts);
  unsigned np = 0;
  uint64_t pos = 0;
  for (uint32_t k = 0; k < n; k++) {
    const ir_reloc *r = &g->relocs[k];
    if (r->offset < pos || r->offset + r->size > g->size) {
      free(parts);
      pw_error_at(E->d, E->src, g->loc.line, g->loc.col, "initializer of '%s': relocations overlap", g->name);
      return false;
    }
    if (r->offset > pos)
      parts[np++] = LLVMConstStringInContext2(c->ctx, (const char *)g->init + pos, r->offset - pos, 1);
    const void *key = r->sym.kind == IR_SYM_GLOBAL ? (const void *)r->sym.global
                      : r->sym.kind == IR_SYM_FUNC ? (const void *)r->sym.func
                                                   : (const void *)r->sym.param;
    LLVMValueRef p = map_get(&E->syms, key);
    LLVMTypeRef it = r->size == 4 ? c->i32 : c->i64;
    if (!p) {
      free(parts);
      pw_error_at(E->d, E->src, g->loc.line, g->loc.col, "initializer of '%s': unknown symbol", g->name);
      return false;
    }
    if (r->generic && LLVMGetPointerAddressSpace(LLVMTypeOf(p)) != CG_AS_FLAT)
      p = LLVMConstAddrSpaceCast(p, c->ptr[CG_AS_FLAT]);
    LLVMValueRef a = LLVMConstPtrToInt(p, c->i64);
    if (r->addend) a = LLVMConstAdd(a, LLVMConstInt(c->i64, (uint64_t)r->addend, 1));
    if (r->size == 4) a = LLVMConstTrunc(a, it);
    parts[np++] = a;
    pos = r->offset + r->size;
  }
  if (pos < g->size)
    parts[np++] = LLVMConstStringInContext2(c->ctx, (const char *)g->init + pos, g->size - pos, 1);
  LLVMValueRef init = LLVMConstStructInContext(c->ctx, parts, np, 1);
  free(parts);
  /* the variable's type becomes the struct: replace it */
  LLVMValueRef nv = LLVMAddGlobalInAddressSpace(c->mod, LLVMTypeOf(init), "", LLVMGetPointerAddressSpace(LLVMTypeOf(gv)));
  LLVMSetInitializer(nv, init);
  LLVMSetLinkage(nv, LLVMGetLinkage(gv));
  LLVMSetVisibility(nv, LLVMGetVisibility(gv));
  LLVMSetAlignment(nv, LLVMGetAlignment(gv));
  LLVMReplaceAllUsesWith(gv, nv);
  size_t len;
  const char *name = LLVMGetValueName2(gv, &len);
  char *keep = strndup(name, len);
  LLVMDeleteGlobal(gv);
  LLVMSetValueName2(nv, keep, len);
  free(keep);
  map_put(&E->syms, g, nv);
  return true;
}

bool cg_emit_module(cg_context *c, const ir_module *m, const pw_src *src, pw_diag *d) {
  emitter E = {.c = c, .b = c->b, .m = m, .src = src, .d = d};
  bool ok = true;
  /* Variables.  LLVM's AMDGPU backend counts a kernel's LDS in 32 bits:
   * a .shared variable of 4 GiB or more, or static LDS adding up to that,
   * would wrap and alias (a 4 GiB array and a 64-byte one once compiled
   * to 48 bytes).  No target holds it: refuse it by name, in 64 bits;
   * below that, LLVM reports a kernel's LDS past the target's limit. */
  uint64_t lds_total = 0;
  for (uint32_t g = 0; g < m->nglobals; g++) {
    const ir_global *v = m->globals[g];
    if ((v->space == IR_SPACE_SHARED || v->space == IR_SPACE_SHARED_CTA || v->space == IR_SPACE_SHARED_CLUSTER) &&
        !v->is_extern_shared) {
      lds_total += v->size;
      if (v->size > UINT32_MAX || lds_total > UINT32_MAX) {
        pw_error_at(d, src, v->loc.line, v->loc.col,
                    "shared variable '%s' (%llu bytes) takes static shared memory to %llu bytes; %s has %u bytes of "
                    "LDS per workgroup",
                    v->name, (unsigned long long)v->size, (unsigned long long)lds_total, c->target->name,
                    c->target->lds_bytes);
        ok = false;
        break;
      }
    }
  }
  for (uint32_t g = 0; g < m->nglobals && ok; g++) {
    const ir_global *v = m->globals[g];
    LLVMValueRef gv = declare_global(&E, v);
    if (gv) map_put(&E.syms, v, gv);
  }
  if (!ok) {
    map_free(&E.syms);
    return false;
  }
  /* Functions. */
  ir_foreach_func(m, f) {
    LLVMValueRef fn = LLVMAddFunction(c->mod, f->name, func_type(&E, f));
    map_put(&E.syms, f, fn);
    if (f->is_kernel) {
      kernel_attrs(&E, f, fn);
    } else {
      LLVMSetLinkage(fn, f->is_decl ? LLVMExternalLinkage
                         : c->relocatable && f->linkage == IR_LINK_VISIBLE ? LLVMExternalLinkage
                         : c->relocatable && f->linkage == IR_LINK_WEAK ? LLVMWeakAnyLinkage
                         : LLVMInternalLinkage);
    }
  }
  for (uint32_t g = 0; g < m->nglobals; g++)
    if (m->globals[g]->nrelocs && !reloc_init(&E, m->globals[g])) ok = false;
  ir_foreach_func(m, f) {
    if (f->is_decl || !f->entry) continue;
    E.failed = false;
    if (!emit_body(&E, f, map_get(&E.syms, f))) ok = false;
  }
  map_free(&E.syms);
  return ok;
}
