/* codegen/cg_call.c: calls and the ABI: functions' LLVM types, kernel
 * attributes and parameters, calls, traps.
 *
 * Kernel ABI (design.md "Code generation", docs/codegen.md): a kernel is an
 * amdgpu_kernel whose arguments are its .params, each a byref pointer in
 * addrspace(4) to a byte array of the .param's size with its alignment, so
 * the kernarg segment has CUDA's parameter-buffer layout.  A device
 * function's .params (and .param return values) are pointers in addrspace(5)
 * to buffers its caller allocates; .reg params are plain values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

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
static LLVMTypeRef ret_by_value_bytes(cg_emitter *E, uint64_t bytes) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) return NULL;
  return LLVMIntTypeInContext(E->c->ctx, (unsigned)bytes * 8);
}

static LLVMTypeRef ret_by_value(cg_emitter *E, const ir_func *f) {
  if (f->is_kernel || f->nrets != 1 || f->rets[0].space != IR_SPACE_PARAM_FUNC) return NULL;
  return ret_by_value_bytes(E, ir_type_bits((ir_type)f->rets[0].type) / 8 * f->rets[0].count);
}

/* The same for each .param parameter of a device function: 1, 2, 4 or 8
 * bytes are passed as an integer (the caller loads its param buffer; the
 * callee stores the value into a buffer of its own, which its ld.param
 * read and SROA removes), also for address-taken functions, which
 * argpromotion leaves alone. */
static LLVMTypeRef param_by_value(cg_emitter *E, const ir_func *f, unsigned p) {
  if (f->is_kernel || f->params[p].space != IR_SPACE_PARAM_FUNC) return NULL;
  return ret_by_value_bytes(E, ir_type_bits((ir_type)f->params[p].type) / 8 * f->params[p].count);
}

/* A function returning several .reg values (`.func (.reg .b32 a, .reg
 * .b64 b) f(...)`, which ptxas takes, "disabling ABI") returns them as
 * one LLVM struct, in order; NULL for any other shape. */
static LLVMTypeRef multi_reg_ret(cg_emitter *E, const ir_func *f) {
  if (f->is_kernel || f->nrets < 2 || f->nrets > 64) return NULL;
  LLVMTypeRef el[64];
  for (uint32_t r = 0; r < f->nrets; r++) {
    if (f->rets[r].space != IR_SPACE_REG) return NULL;
    el[r] = cg_ltype(E, (ir_type)f->rets[r].type);
  }
  return LLVMStructTypeInContext(E->c->ctx, el, f->nrets, 0);
}

LLVMTypeRef cg_func_type(cg_emitter *E, const ir_func *f) {
  cg_context *c = E->c;
  unsigned n = f->nparams + f->nrets;
  LLVMTypeRef *pt = calloc(n ? n : 1, sizeof *pt);
  unsigned k = 0;
  LLVMTypeRef ret = c->voidt;
  for (uint32_t p = 0; p < f->nparams; p++) {
    LLVMTypeRef pv = param_by_value(E, f, p);
    pt[k++] = f->is_kernel ? c->ptr[CG_AS_CONST]
              : f->params[p].space == IR_SPACE_REG ? cg_ltype(E, (ir_type)f->params[p].type)
              : pv ? pv : c->ptr[CG_AS_PRIVATE];
  }
  LLVMTypeRef rv = ret_by_value(E, f), mr = multi_reg_ret(E, f);
  if (mr) ret = mr;
  for (uint32_t r = 0; r < f->nrets && !mr; r++) {
    if (rv) ret = rv;
    else if (f->rets[r].space == IR_SPACE_REG && r == 0 && f->nrets == 1) ret = cg_ltype(E, (ir_type)f->rets[r].type);
    else pt[k++] = c->ptr[CG_AS_PRIVATE];
  }
  LLVMTypeRef ft = LLVMFunctionType(ret, pt, k, 0);
  free(pt);
  return ft;
}


/* A function's parameters, where its body finds them: a .reg parameter is
 * its value; a by-value .param (param_by_value) is stored into a buffer
 * of the callee's own, which its ld.param reads (SROA removes it); other
 * .params are the pointers the caller passes.  A by-value return gets the
 * callee's own buffer too (ret returns its contents, cg_ret); other .param
 * returns are pointer arguments after the parameters. */
void cg_bind_params(cg_emitter *E, const ir_func *f, LLVMValueRef fn) {
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
      cg_map_put(&E->syms, &f->params[p], buf);
    } else {
      cg_map_put(&E->syms, &f->params[p], a);
    }
  }
  E->ret_buf = NULL;
  E->ret_ty = ret_by_value(E, f);
  for (uint32_t r = 0; r < f->nrets; r++) {
    if (E->ret_ty) { /* the callee's own buffer; ret returns its contents */
      LLVMPositionBuilderAtEnd(E->b, E->alloca_bb);
      E->ret_buf = LLVMBuildAlloca(E->b, E->ret_ty, f->rets[r].name);
      LLVMSetAlignment(E->ret_buf, f->rets[r].align ? f->rets[r].align : 4);
      cg_map_put(&E->syms, &f->rets[r], E->ret_buf);
      continue;
    }
    if (f->rets[r].space == IR_SPACE_REG && ((r == 0 && f->nrets == 1) || multi_reg_ret(E, f))) continue;
    LLVMValueRef a = LLVMGetParam(fn, k++);
    LLVMSetValueName2(a, f->rets[r].name, strlen(f->rets[r].name));
    cg_map_put(&E->syms, &f->rets[r], a);
  }
}

/* llvm.trap; on IR_TARGET_TRAP_OUT_OF_LINE targets (gfx11) a call of one
 * internal noinline function that traps: LLVM 22 expands gfx11's simulated
 * trap by splitting the block and then leaves the 64-bit scalar add pseudos
 * of the blocks after it unexpanded, which aborts the object writer
 * ("Unsupported instruction"; lower/targets.def).  Out of line, the split
 * happens in a function with nothing else in it.  Traps are cold: the call
 * costs nothing on the paths that run. */
static void emit_trap(cg_emitter *E) {
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

/* A call's LLVM arguments and return, in the order the callee's type has
 * them: the .param arguments, then (pointer convention) the return
 * buffers. */
typedef struct call_parts {
  LLVMValueRef *args;
  LLVMTypeRef *tys;
  unsigned n;
  LLVMValueRef ret_dst; /* a by-value return: the caller's buffer it is stored to */
  LLVMTypeRef rt;       /* the return type (for an indirect call's type) */
  bool multi;           /* several .reg results as one struct (multi_reg_ret) */
} call_parts;

/* The arguments: a by-value .param (param_by_value: the callee's
 * declaration decides, else the size of the caller's buffer) is loaded
 * from the caller's buffer; another .param buffer goes as its pointer, a
 * .reg argument as its value (in the callee's parameter type). */
static void call_args(cg_emitter *E, const ir_instr *i, const ir_func *f, call_parts *p) {
  const ir_call_info *ci = i->aux;
  for (unsigned a = 0; a < ci->narg; a++) {
    const ir_value *v = i->src[1 + ci->nret + a];
    LLVMTypeRef pv = NULL; /* by value (param_by_value): the callee's declaration, else the buffer's size */
    if (v->kind == IR_VAL_SYMBOL && f && a < f->nparams) pv = param_by_value(E, f, a);
    else if (v->kind == IR_VAL_SYMBOL && !f && v->symref.offset == 0 && v->symref.sym.kind == IR_SYM_GLOBAL &&
             v->symref.sym.global->space == IR_SPACE_PARAM)
      pv = ret_by_value_bytes(E, v->symref.sym.global->size);
    LLVMValueRef x;
    if (pv) x = LLVMBuildLoad2(E->b, pv, cg_gep_bytes(E, cg_symbol_ptr(E, v->symref.sym, i), v->symref.offset), "");
    else if (v->kind == IR_VAL_SYMBOL) x = cg_gep_bytes(E, cg_symbol_ptr(E, v->symref.sym, i), v->symref.offset);
    else x = f && a < f->nparams ? cg_op_as(E, i, 1 + ci->nret + a, cg_ltype(E, (ir_type)f->params[a].type)) : cg_val(E, i, v);
    p->args[p->n] = x;
    p->tys[p->n++] = LLVMTypeOf(x);
  }
}

/* The return: a by-value return (ret_by_value: the callee's declaration
 * decides, else (indirect) the size of the caller's buffer) is the call's
 * value, stored to the caller's buffer; other .param returns are pointer
 * arguments; .reg results are the call's value, several of them a struct. */
static void call_rets(cg_emitter *E, const ir_instr *i, const ir_func *f, call_parts *p) {
  cg_context *c = E->c;
  const ir_call_info *ci = i->aux;
  bool reg_ret = false;
  LLVMTypeRef rv = NULL;
  if (ci->nret == 1 && i->src[1]->kind == IR_VAL_SYMBOL) {
    const ir_value *v = i->src[1];
    if (f) rv = ret_by_value(E, f);
    else if (v->symref.offset == 0 && v->symref.sym.kind == IR_SYM_GLOBAL && v->symref.sym.global->space == IR_SPACE_PARAM)
      rv = ret_by_value_bytes(E, v->symref.sym.global->size);
    if (rv) p->ret_dst = cg_gep_bytes(E, cg_symbol_ptr(E, v->symref.sym, i), v->symref.offset);
  }
  for (unsigned r = 0; r < ci->nret && !rv; r++) {
    const ir_value *v = i->src[1 + r];
    if (v->kind == IR_VAL_SYMBOL) {
      p->args[p->n] = cg_gep_bytes(E, cg_symbol_ptr(E, v->symref.sym, i), v->symref.offset);
      p->tys[p->n] = LLVMTypeOf(p->args[p->n]);
      p->n++;
    } else {
      reg_ret = true;
    }
  }
  p->rt = c->voidt;
  if (rv) {
    p->rt = rv;
  } else if (i->ndst > 1 && i->ndst <= 64 && (f ? multi_reg_ret(E, f) != NULL : ci->nret == 0)) {
    /* several .reg results: one struct (multi_reg_ret) */
    LLVMTypeRef el[64];
    for (unsigned r = 0; r < i->ndst; r++)
      el[r] = f && r < f->nrets ? cg_ltype(E, (ir_type)f->rets[r].type)
              : i->dst[r] ? cg_ltype(E, (ir_type)i->dst[r]->type) : c->i32;
    p->rt = LLVMStructTypeInContext(c->ctx, el, i->ndst, 0);
    p->multi = true;
  } else if (reg_ret || i->ndst) {
    p->rt = i->ndst && i->dst[0] ? cg_ltype(E, (ir_type)i->dst[0]->type) : c->voidt;
  }
}

/* The called function and its type: a direct call's callee (its
 * declaration gives the argument types), an indirect call's address with
 * the type the arguments make.  false (reported) for a call codegen
 * cannot make. */
static bool callee(cg_emitter *E, const ir_instr *i, const ir_func *f, const call_parts *p, LLVMValueRef *fnv,
                   LLVMTypeRef *ft) {
  cg_context *c = E->c;
  if (f && f->is_decl && !E->c->relocatable) {
    /* libcudadevrt's calls into the driver: only the emulator runs
     * device-side launches (docs/runtime.md "Dynamic parallelism") */
    bool cdp = !strncmp(f->name, "__cuda_syscall_cnp", 18);
    cg_unsupported(E, i, "call of the external function '%s'%s", f->name,
                   !strcmp(f->name, "vprintf") ? " (device printf: lower/ turns it into a printf-buffer record; run lower/ first)"
                   : cdp ? " (a device-side launch: dynamic parallelism runs on the emulator only)" : "");
    return false;
  }
  if (f) {
    *fnv = cg_symbol_ptr(E, i->src[0]->symref.sym, i);
    *ft = LLVMGlobalGetValueType(*fnv);
    /* argument types follow the callee's declaration */
    unsigned np = LLVMCountParamTypes(*ft);
    if (np != p->n) {
      cg_unsupported(E, i, "call of '%s' with %u arguments, it takes %u", f->name, p->n, np);
      return false;
    }
  } else {
    *ft = LLVMFunctionType(p->rt, p->tys, p->n, 0);
    *fnv = LLVMBuildIntToPtr(E->b, cg_coerce(E, cg_val(E, i, i->src[0]), c->i64), c->ptr[0], "");
  }
  return true;
}

/* call (9.7.12.4): src[0] the callee (a function symbol, or an address
 * for an indirect call), then the return and the argument operands
 * (ir_call_info). */
void cg_call(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  const ir_call_info *ci = i->aux;
  if (!ci) {
    cg_unsupported(E, i, "call without call information");
    return;
  }
  const ir_value *cv = i->src[0];
  const ir_func *f = cv->kind == IR_VAL_SYMBOL && cv->symref.sym.kind == IR_SYM_FUNC ? cv->symref.sym.func : NULL;
  unsigned nargs = ci->narg + ci->nret;
  call_parts p = {.args = calloc(nargs ? nargs : 1, sizeof *p.args), .tys = calloc(nargs ? nargs : 1, sizeof *p.tys)};
  call_args(E, i, f, &p);
  call_rets(E, i, f, &p);
  LLVMValueRef fnv;
  LLVMTypeRef ft;
  if (f && f->is_decl && !strcmp(f->name, "__assertfail")) {
    /* CUDA's device assert() in unlowered IR (lower/lower_printf.c makes
     * it a printf-buffer record with its message): the kernel stops */
    emit_trap(E);
  } else if (callee(E, i, f, &p, &fnv, &ft)) {
    LLVMValueRef call = LLVMBuildCall2(E->b, ft, fnv, p.args, p.n, "");
    if (p.ret_dst) LLVMBuildStore(E->b, call, p.ret_dst);
    else if (p.multi && LLVMGetTypeKind(LLVMGetReturnType(ft)) == LLVMStructTypeKind) {
      for (unsigned r = 0; r < i->ndst; r++)
        if (i->dst[r]) cg_set_dst(E, i, r, LLVMBuildExtractValue(E->b, call, r, ""), false);
    } else if (i->ndst && LLVMGetReturnType(ft) != c->voidt) cg_set_dst(E, i, 0, call, false);
  }
  free(p.args);
  free(p.tys);
}

/* ret, exit: exit in a device function ends the program (s_endpgm); a
 * return of a by-value .param (ret_by_value) returns its buffer's
 * contents, several .reg returns (multi_reg_ret) one struct. */
void cg_ret(cg_emitter *E, const ir_instr *i) {
  cg_context *c = E->c;
  LLVMBuilderRef B = E->b;
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
      agg = LLVMBuildInsertValue(B, agg, cg_op_as(E, i, r, LLVMStructGetTypeAtIndex(rt, r)), r, "");
    LLVMBuildRet(B, agg);
  } else if (LLVMGetReturnType(LLVMGlobalGetValueType(E->fn)) != c->voidt) {
    LLVMTypeRef rt = LLVMGetReturnType(LLVMGlobalGetValueType(E->fn));
    LLVMBuildRet(B, i->nsrc ? cg_op_as(E, i, 0, rt) : LLVMGetUndef(rt));
  } else {
    LLVMBuildRetVoid(B);
  }
}

/* trap (9.7.19.4): the kernel stops */
void cg_trap(cg_emitter *E, const ir_instr *i) {
  (void)i;
  emit_trap(E);
  LLVMBuildUnreachable(E->b);
}

/* brkpt (9.7.19.1): llvm.debugtrap, the trap a debugger takes as a
 * breakpoint (AMDGPUUsage "Trap Handler ABI") */
void cg_brkpt(cg_emitter *E, const ir_instr *i) {
  (void)i;
  cg_intrinsic(E->c, "llvm.debugtrap", NULL, 0, NULL, 0, false);
}

/* Kernel attributes: 11.4 performance-tuning directives to AMDGPU function
 * attributes (AMDGPUUsage "LLVM IR Attributes"). */
void cg_kernel_attrs(cg_emitter *E, const ir_func *f, LLVMValueRef fn) {
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
