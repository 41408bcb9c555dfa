/* codegen/cg_emit_util.c: the helpers of the IR -> LLVM IR translation
 * (cg_emit.h): the map from IR symbols to LLVM values, error reports, the
 * LLVM type of an IR type, the value of an operand in the type an
 * instruction reads it as, symbols' addresses, intrinsic calls.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/cg_emit.h"

/* ---- the symbol -> LLVM value map (util/pw_map.h) ------------------------ */

void cg_map_put(cg_ptr_map *m, const void *k, LLVMValueRef v) { pw_map_ptr_put(m, k, v); }

LLVMValueRef cg_map_get(const cg_ptr_map *m, const void *k) { return pw_map_ptr_get(m, k); }

void cg_map_free(cg_ptr_map *m) { pw_map_free(m); }

/* ---- errors, types, values ------------------------------------------------ */

void cg_unsupported(cg_emitter *E, const ir_instr *i, const char *fmt, ...) {
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

LLVMTypeRef cg_ltype(cg_emitter *E, ir_type t) {
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

unsigned cg_type_bits(LLVMTypeRef t) {
  switch (LLVMGetTypeKind(t)) {
  case LLVMIntegerTypeKind: return LLVMGetIntTypeWidth(t);
  case LLVMHalfTypeKind:
  case LLVMBFloatTypeKind: return 16;
  case LLVMFloatTypeKind: return 32;
  case LLVMDoubleTypeKind: return 64;
  case LLVMVectorTypeKind: return LLVMGetVectorSize(t) * cg_type_bits(LLVMGetElementType(t));
  default: return 64;
  }
}

/* v as type want: bitcast for equal sizes, else through integers, extending
 * with sign when sext. */
LLVMValueRef cg_coerce_ext(cg_emitter *E, LLVMValueRef v, LLVMTypeRef want, bool sext) {
  LLVMTypeRef have = LLVMTypeOf(v);
  if (have == want) return v;
  unsigned hb = cg_type_bits(have), wb = cg_type_bits(want);
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

LLVMValueRef cg_coerce(cg_emitter *E, LLVMValueRef v, LLVMTypeRef want) {
  return cg_coerce_ext(E, v, want, false);
}

/* The LLVM value of an IR value, in its own type. */
LLVMValueRef cg_val(cg_emitter *E, const ir_instr *i, const ir_value *v) {
  switch ((ir_value_kind)v->kind) {
  case IR_VAL_INSTR:
  case IR_VAL_PARAM:
    if (v->id < E->f->nvalues && E->vals[v->id]) return E->vals[v->id];
    cg_unsupported(E, i, "operand %%%u used before its definition was translated", v->id);
    return LLVMGetUndef(cg_ltype(E, (ir_type)v->type));
  case IR_VAL_CONST: {
    LLVMTypeRef t = cg_ltype(E, (ir_type)v->type);
    unsigned bits = cg_type_bits(t);
    LLVMValueRef k = LLVMConstInt(LLVMIntTypeInContext(E->c->ctx, bits), v->imm, 0);
    return LLVMGetTypeKind(t) == LLVMIntegerTypeKind ? k : LLVMConstBitCast(k, t);
  }
  case IR_VAL_UNDEF: return LLVMGetUndef(cg_ltype(E, (ir_type)v->type));
  case IR_VAL_SYMBOL: {
    LLVMValueRef p = cg_symbol_ptr(E, v->symref.sym, i);
    LLVMValueRef a = LLVMBuildPtrToInt(E->b, p, LLVMIntTypeInContext(E->c->ctx, 64), "");
    if (v->symref.offset) a = LLVMBuildAdd(E->b, a, LLVMConstInt(E->c->i64, (uint64_t)v->symref.offset, 0), "");
    return cg_coerce(E, a, cg_ltype(E, (ir_type)v->type));
  }
  }
  return NULL;
}

/* Operand k of i as LLVM type t. */
LLVMValueRef cg_op_as(cg_emitter *E, const ir_instr *i, unsigned k, LLVMTypeRef t) {
  return cg_coerce_ext(E, cg_val(E, i, i->src[k]), t, is_signed((ir_type)i->src[k]->type));
}

LLVMValueRef cg_op(cg_emitter *E, const ir_instr *i, unsigned k) {
  return cg_op_as(E, i, k, cg_ltype(E, (ir_type)i->type));
}

void cg_set_dst(cg_emitter *E, const ir_instr *i, unsigned k, LLVMValueRef v, bool sext) {
  if (k >= i->ndst || !i->dst[k]) return;
  E->vals[i->dst[k]->id] = cg_coerce_ext(E, v, cg_ltype(E, (ir_type)i->dst[k]->type), sext);
}

/* The report of an op that codegen translates in other forms than i's
 * (its type, or its state space for isspacep); NULL, for a handler to
 * return. */
LLVMValueRef cg_no_form(cg_emitter *E, const ir_instr *i) {
  ir_type t = (ir_type)i->type;
  if (t != ir_type_none && *ir_type_name(t)) cg_unsupported(E, i, "the .%s form is not implemented by codegen", ir_type_name(t));
  else if (i->op == ir_op_isspacep) cg_unsupported(E, i, "the .%s form is not implemented by codegen", ir_space_name((ir_space)i->mods.space));
  else cg_unsupported(E, i, "this form is not implemented by codegen");
  return NULL;
}

/* ---- symbols ---------------------------------------------------------------- */

LLVMValueRef cg_symbol_ptr(cg_emitter *E, ir_symbol sym, const ir_instr *i) {
  const void *key = sym.kind == IR_SYM_GLOBAL ? (const void *)sym.global
                    : sym.kind == IR_SYM_FUNC ? (const void *)sym.func
                                              : (const void *)sym.param;
  LLVMValueRef p = cg_map_get(&E->syms, key);
  if (!p) {
    cg_unsupported(E, i, "symbol '%s' has no storage here",
                sym.kind == IR_SYM_GLOBAL ? sym.global->name
                : sym.kind == IR_SYM_FUNC ? sym.func->name
                                          : sym.param->name);
    return LLVMGetUndef(E->c->ptr[0]);
  }
  return p;
}

LLVMValueRef cg_gep_bytes(cg_emitter *E, LLVMValueRef p, int64_t off) {
  if (!off) return p;
  LLVMValueRef idx = LLVMConstInt(E->c->i64, (uint64_t)off, 1);
  return LLVMBuildGEP2(E->b, E->c->i8, p, &idx, 1, "");
}

/* ---- intrinsics -------------------------------------------------------------- */

LLVMValueRef cg_intr1(cg_emitter *E, const char *name, LLVMValueRef a) {
  LLVMTypeRef t = LLVMTypeOf(a);
  return cg_intrinsic(E->c, name, &t, 1, &a, 1, false);
}

LLVMValueRef cg_intr2(cg_emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef v[2] = {a, b};
  return cg_intrinsic(E->c, name, &t, 1, v, 2, false);
}

LLVMValueRef cg_intr3(cg_emitter *E, const char *name, LLVMValueRef a, LLVMValueRef b, LLVMValueRef x) {
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef v[3] = {a, b, x};
  return cg_intrinsic(E->c, name, &t, 1, v, 3, false);
}
