/* codegen/cg_mem.c: memory and the memory model: address spaces, the
 * pointers memory instructions use, loads, stores and atomics (PTX ISA
 * 9.7.9.8, 9.7.9.11, 9.7.13.5) with their orderings and scopes
 * (AMDGPUUsage "Memory Model"), fences, generic addresses (cvta,
 * isspacep) and cache policies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* ---- address spaces, addresses ---------------------------------------- */

static unsigned space_as(const cg_emitter *E, ir_space s) {
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

/* The pointer a memory instruction's address operand (src[0] + offset)
 * designates, in the address space of `space`. */
static LLVMValueRef address(cg_emitter *E, const ir_instr *i, ir_space space) {
  cg_context *c = E->c;
  const ir_value *a = i->src[0];
  unsigned as = space_as(E, space);
  if (a->kind == IR_VAL_SYMBOL) {
    /* the variable's own address space, whatever space the instruction
     * names: ld.param of a caller's .param buffer in a kernel is private,
     * ld [tile] (generic) of a shared variable is the LDS access */
    LLVMValueRef p = cg_symbol_ptr(E, a->symref.sym, i);
    return cg_gep_bytes(E, p, a->symref.offset + i->offset);
  }
  LLVMValueRef v = cg_val(E, i, a);
  bool narrow = as == CG_AS_LDS || as == CG_AS_PRIVATE;
  v = cg_coerce(E, v, narrow ? c->i32 : c->i64);
  LLVMValueRef p = LLVMBuildIntToPtr(E->b, v, c->ptr[as], "");
  return cg_gep_bytes(E, p, i->offset);
}

/* ---- memory model ------------------------------------------------------- */

/* AMDGPUUsage "Memory Model": PTX scopes to AMDGPU sync scopes.  A cluster
 * is no larger than the device here (no cluster launch), so it is agent. */
static unsigned sync_scope(cg_emitter *E, ir_scope s) {
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

void cg_fence(cg_emitter *E, LLVMAtomicOrdering o, unsigned ss) {
  LLVMBuildFenceSyncScope(E->b, o, ss, "");
}

/* ---- atomics (9.7.13.5) ---------------------------------------------------- */

static unsigned elem_align(ir_type t) {
  unsigned b = ir_type_bits(t) / 8;
  return b ? b : 1;
}

/* One atomic on the element at byte offset `off` of the address, with the
 * value operand `vsrc` (atom.cas: vsrc, vsrc + 1). */
static LLVMValueRef atomic_one(cg_emitter *E, const ir_instr *i, LLVMValueRef base, unsigned off, unsigned vsrc) {
  cg_context *c = E->c;
  ir_type t = (ir_type)i->type;
  LLVMTypeRef lt = cg_ltype(E, t);
  LLVMValueRef p = off ? cg_gep_bytes(E, base, off) : base;
  LLVMAtomicOrdering o = ordering((ir_sem)i->mods.sem, LLVMAtomicOrderingMonotonic);
  unsigned ss = sync_scope(E, (ir_scope)i->mods.scope);
  if (i->mods.atomop == IR_ATOM_CAS) {
    LLVMValueRef cmp = cg_op(E, i, vsrc), nv = cg_op(E, i, vsrc + 1);
    LLVMAtomicOrdering fo = o == LLVMAtomicOrderingRelease ? LLVMAtomicOrderingMonotonic
                            : o == LLVMAtomicOrderingAcquireRelease ? LLVMAtomicOrderingAcquire : o;
    if (is_float(t)) {
      cmp = cg_coerce(E, cmp, LLVMIntTypeInContext(c->ctx, ir_type_bits(t)));
      nv = cg_coerce(E, nv, LLVMTypeOf(cmp));
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
    cg_unsupported(E, i, "atomic operation .%s", ir_atomop_name((ir_atomop)i->mods.atomop));
    return LLVMGetUndef(lt);
  }
  LLVMValueRef v = cg_op(E, i, vsrc);
  if (!f && LLVMGetTypeKind(LLVMTypeOf(v)) != LLVMIntegerTypeKind) v = cg_coerce(E, v, LLVMIntTypeInContext(c->ctx, ir_type_bits(t)));
  return LLVMBuildAtomicRMWSyncScope(E->b, rop, p, v, o, ss);
}

/* atom / red, scalar or vector.  PTX ISA 9.7.13.5: a vector atom
 * (atom.global.v2/.v4.f32.add, .v2/.v4/.v8 of f16/bf16, .v2/.v4 of
 * f16x2/bf16x2) is atomic for each element separately, not as a whole: one
 * atomic per element at consecutive addresses, in element order, each
 * result to its destination. */
void cg_mem_atomic(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  LLVMValueRef p = address(E, i, (ir_space)i->mods.space);
  if (ir_type_kind_of(t) == IR_TK_PACKED_FLOAT && !is_fvec(t)) {
    cg_unsupported(E, i, "atomics on packed %s", ir_type_name(t));
    return;
  }
  unsigned n = i->mods.vec > 1 ? i->mods.vec : 1;
  if (n > 1 && i->mods.atomop == IR_ATOM_CAS) {
    cg_unsupported(E, i, "vector atom.cas (the PTX ISA has none)");
    return;
  }
  for (unsigned k = 0; k < n; k++) {
    LLVMValueRef r = atomic_one(E, i, p, k * elem_align(t), 1 + k);
    if (k < i->ndst) cg_set_dst(E, i, k, r, false);
  }
}

/* ---- loads and stores (9.7.9.8, 9.7.9.11) --------------------------------- */

static void mem_order(cg_emitter *E, const ir_instr *i, LLVMValueRef inst, bool load) {
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


void cg_mem_load(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  LLVMTypeRef et = cg_ltype(E, t);
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
    cg_set_dst(E, i, k, e, is_signed(t));
  }
}

void cg_mem_store(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  LLVMTypeRef et = cg_ltype(E, t);
  unsigned n = i->mods.vec > 1 ? i->mods.vec : 1;
  if (n > 1 && is_fvec(t)) et = LLVMIntTypeInContext(E->c->ctx, ir_type_bits(t));
  LLVMValueRef p = address(E, i, (ir_space)i->mods.space);
  LLVMValueRef v;
  if (n > 1) {
    v = LLVMGetUndef(LLVMVectorType(et, n));
    for (unsigned k = 0; k < n && k + 1 < i->nsrc; k++)
      v = LLVMBuildInsertElement(E->b, v, cg_op_as(E, i, k + 1, et), kint(E->c->i32, k), "");
  } else {
    v = cg_op_as(E, i, 1, et);
  }
  LLVMValueRef s = LLVMBuildStore(E->b, v, p);
  LLVMSetAlignment(s, elem_align(t) * n);
  if (n == 1) mem_order(E, i, s, false);
  else if (i->mods.sem == IR_SEM_VOLATILE) LLVMSetVolatile(s, 1);
}

/* ---- fences (9.7.13.4) ------------------------------------------------------ */

/* membar, fence: membar and fence.sc are seq_cst fences, fence.acq_rel an
 * acq_rel fence, at their scope */
void cg_mem_fence(cg_emitter *E, const ir_instr *i) {
  if (i->mods.proxy) return; /* proxy fences order nothing on AMD GPUs (one proxy) */
  cg_fence(E, i->op == ir_op_membar || i->mods.sem == IR_SEM_SC || i->mods.sem == IR_SEM_NONE
                 ? LLVMAtomicOrderingSequentiallyConsistent
                 : ordering((ir_sem)i->mods.sem, LLVMAtomicOrderingSequentiallyConsistent),
           sync_scope(E, (ir_scope)i->mods.scope));
}

/* ---- generic addresses (9.7.9.17-18) ---------------------------------------- */

/* cvta.<space>: window address -> generic; cvta.to.<space>: back.
 * Global addresses are the same in both (AMDGPUUsage: flat = global). */
LLVMValueRef cg_mem_cvta(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_space sp = (ir_space)i->mods.space;
  LLVMValueRef a = cg_val(E, i, i->src[0]);
  if (sp == IR_SPACE_GLOBAL) return a;
  unsigned as = space_as(E, sp);
  bool narrow = as == CG_AS_LDS || as == CG_AS_PRIVATE;
  if (i->mods.cvta_to) {
    LLVMValueRef p = LLVMBuildIntToPtr(B, cg_coerce(E, a, c->i64), c->ptr[0], "");
    p = LLVMBuildAddrSpaceCast(B, p, c->ptr[as], "");
    return LLVMBuildPtrToInt(B, p, narrow ? c->i32 : c->i64, "");
  }
  LLVMValueRef p = LLVMBuildIntToPtr(B, cg_coerce(E, a, narrow ? c->i32 : c->i64), c->ptr[as], "");
  p = LLVMBuildAddrSpaceCast(B, p, c->ptr[0], "");
  return LLVMBuildPtrToInt(B, p, c->i64, "");
}

/* ---- the dynamic stack (9.7.17) --------------------------------------------------
 * alloca.type ptr, size{, immAlign}: LLVM's dynamic alloca of size bytes in
 * the private address space (5, the data layout's alloca space), aligned
 * to max(immAlign, 8) ("8 ... the minimum guaranteed alignment"); ptr is
 * its .local address, the 32-bit private offset (as cvta and .local
 * loads read it: address() above).  stacksave/stackrestore are
 * llvm.stacksave/llvm.stackrestore on that space.  The AMDGPU backend
 * keeps a wave's stack in scratch: a divergent size is the wave's largest
 * (LLVM reduces it), and the frame is released at return. */
enum { CG_ALLOCA_MIN_ALIGN = 8 };

LLVMValueRef cg_mem_alloca(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  /* the private space is 32-bit: a larger size cannot be had, and wraps
   * here as the address would */
  LLVMValueRef size = cg_coerce(E, cg_val(E, i, i->src[0]), c->i32);
  unsigned align = CG_ALLOCA_MIN_ALIGN;
  if (i->nsrc > 1 && i->src[1]->kind == IR_VAL_CONST && i->src[1]->imm > align) align = (unsigned)i->src[1]->imm;
  LLVMValueRef a = LLVMBuildArrayAlloca(B, c->i8, size, "");
  LLVMSetAlignment(a, align);
  return LLVMBuildPtrToInt(B, a, c->i32, "");
}

LLVMValueRef cg_mem_stacksave(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  (void)i;
  LLVMTypeRef pt = c->ptr[CG_AS_PRIVATE];
  LLVMValueRef p = cg_intrinsic(c, "llvm.stacksave", &pt, 1, NULL, 0, false);
  return LLVMBuildPtrToInt(E->b, p, c->i32, "");
}

void cg_mem_stackrestore(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMTypeRef pt = c->ptr[CG_AS_PRIVATE];
  LLVMValueRef p = LLVMBuildIntToPtr(E->b, cg_coerce(E, cg_val(E, i, i->src[0]), c->i32), pt, "");
  cg_intrinsic(c, "llvm.stackrestore", &pt, 1, &p, 1, false);
}

/* isspacep (9.7.9.17).  A generic address is in LDS or scratch iff it lies
 * in that aperture (AMDGPUUsage "Address Spaces"); a cluster is one CTA
 * here, so .shared::cluster is .shared.  Our .const variables live in
 * global memory (addrspace 4): .const is true inside one of the module's
 * .const variables, and .global is the rest of the flat space, as the
 * emulator answers (emu_mem.c h_isspacep: const is a read-only allocation,
 * global a writable one). */
LLVMValueRef cg_mem_isspacep(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
  ir_space sp = (ir_space)i->mods.space;
  LLVMValueRef p = LLVMBuildIntToPtr(B, cg_coerce(E, cg_val(E, i, i->src[0]), c->i64), c->ptr[0], "");
  if (sp == IR_SPACE_SHARED || sp == IR_SPACE_SHARED_CTA || sp == IR_SPACE_SHARED_CLUSTER)
    return cg_intrinsic(c, "llvm.amdgcn.is.shared", NULL, 0, &p, 1, false);
  if (sp == IR_SPACE_LOCAL) return cg_intrinsic(c, "llvm.amdgcn.is.private", NULL, 0, &p, 1, false);
  if (sp != IR_SPACE_GLOBAL && sp != IR_SPACE_CONST) return cg_no_form(E, i);
  LLVMValueRef in_const = LLVMConstInt(c->i1, 0, 0), pi = LLVMBuildPtrToInt(B, p, c->i64, "");
  for (uint32_t g = 0; g < E->m->nglobals; g++) {
    const ir_global *v = E->m->globals[g];
    LLVMValueRef gv = v->space == IR_SPACE_CONST && v->size ? cg_map_get(&E->syms, v) : NULL;
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

/* ---- cache hints (9.7.9.14-16) --------------------------------------------- */

/* createpolicy: the cache policy ld/st/cp.async take with .L2::cache_hint
 * (PTX ISA 9.7.9.16), an opaque 64-bit value that only those hints read,
 * and codegen honours none (cg_emit.c: the hints are no-ops), so any value
 * is right.  0, as the emulator gives (emu_mem.c). */
LLVMValueRef cg_mem_createpolicy(cg_emitter *E, const ir_instr *i) {
  (void)i;
  return kint(E->c->i64, 0);
}
