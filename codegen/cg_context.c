/* codegen/cg_context.c: the codegen context, a thin wrapper over LLVM-C
 * (style.md #14, after Mesa's ac_llvm_build.c): cached types and constants,
 * the wave size, and one helper that declares an intrinsic on first use
 * and calls it.  No global mutable state: the context owns its own
 * LLVMContext, so several compiles run at once on several threads. */
#include <stdio.h>
#include <string.h>

#include <llvm-c/BitReader.h>

#include "codegen/cg_priv.h"

/* LLVMContext diagnostic handler: errors and warnings to the compile's
 * pw_diag (remarks and notes dropped). */
static void diag_handler(LLVMDiagnosticInfoRef di, void *user) {
  cg_context *c = user;
  LLVMDiagnosticSeverity sev = LLVMGetDiagInfoSeverity(di);
  if (sev != LLVMDSError && sev != LLVMDSWarning) return;
  char *msg = LLVMGetDiagInfoDescription(di);
  if (c->diag) {
    if (sev == LLVMDSError) {
      c->llvm_errors++;
      pw_error_at(c->diag, c->src, 0, 0, "LLVM (%s): %s", c->target->name, msg);
    } else {
      pw_warn_at(c->diag, c->src, 0, 0, "LLVM (%s): %s", c->target->name, msg);
    }
  } else if (sev == LLVMDSError) {
    c->llvm_errors++;
  }
  LLVMDisposeMessage(msg);
}

/* What every context shares: the LLVMContext with its diagnostic handler,
 * the builder, cached types, constants and sync scopes. */
static void context_common(cg_context *c, const ir_target *t, unsigned cov) {
  memset(c, 0, sizeof *c);
  c->ctx = LLVMContextCreate();
  LLVMContextSetDiagnosticHandler(c->ctx, diag_handler, c);
  c->b = LLVMCreateBuilderInContext(c->ctx);
  c->target = t;
  c->wave_size = t->wave_size;
  c->cov = cov;
  c->i1 = LLVMInt1TypeInContext(c->ctx);
  c->i8 = LLVMInt8TypeInContext(c->ctx);
  c->i16 = LLVMInt16TypeInContext(c->ctx);
  c->i32 = LLVMInt32TypeInContext(c->ctx);
  c->i64 = LLVMInt64TypeInContext(c->ctx);
  c->i128 = LLVMInt128TypeInContext(c->ctx);
  c->f16 = LLVMHalfTypeInContext(c->ctx);
  c->bf16 = LLVMBFloatTypeInContext(c->ctx);
  c->f32 = LLVMFloatTypeInContext(c->ctx);
  c->f64 = LLVMDoubleTypeInContext(c->ctx);
  c->voidt = LLVMVoidTypeInContext(c->ctx);
  for (unsigned as = 0; as < 6; as++) c->ptr[as] = LLVMPointerTypeInContext(c->ctx, as);
  c->wave_mask = t->wave_size == 64 ? c->i64 : c->i32;
  c->i32_0 = LLVMConstInt(c->i32, 0, 0);
  c->i32_1 = LLVMConstInt(c->i32, 1, 0);
  c->i64_0 = LLVMConstInt(c->i64, 0, 0);
  c->kind_convergent = LLVMGetEnumAttributeKindForName("convergent", 10);
  c->kind_callbuf = LLVMGetMDKindIDInContext(c->ctx, "ptxwave.callbuf", 15);
  c->ss_workgroup = LLVMGetSyncScopeID(c->ctx, "workgroup", 9);
  c->ss_agent = LLVMGetSyncScopeID(c->ctx, "agent", 5);
  c->ss_system = LLVMGetSyncScopeID(c->ctx, "", 0);
  c->ss_wavefront = LLVMGetSyncScopeID(c->ctx, "wavefront", 9);
}

void cg_context_init(cg_context *c, const ir_target *t, unsigned cov, const char *name) {
  context_common(c, t, cov);
  c->mod = LLVMModuleCreateWithNameInContext(name ? name : "ptxwave", c->ctx);
  LLVMSetTarget(c->mod, "amdgcn-amd-amdhsa");
  /* AMDGPUUsage "Code Object Metadata": the module flag picks the version
   * (LLVM 22 defaults to 6, which HIP before ROCm 6.3 cannot load). */
  LLVMAddModuleFlag(c->mod, LLVMModuleFlagBehaviorError, "amdhsa_code_object_version",
                    strlen("amdhsa_code_object_version"),
                    LLVMValueAsMetadata(LLVMConstInt(c->i32, cov * 100, 0)));
}

bool cg_context_init_bitcode(cg_context *c, const ir_target *t, unsigned cov, const void *bc, size_t len,
                             char *err, size_t cap) {
  context_common(c, t, cov);
  /* the bytes stay the caller's: parsing materialises the whole module, so
   * the buffer may go as soon as it returns */
  LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(bc, len, "partition", 0);
  bool ok = !LLVMParseBitcodeInContext2(c->ctx, buf, &c->mod);
  LLVMDisposeMemoryBuffer(buf);
  if (!ok) {
    c->mod = NULL;
    snprintf(err, cap, "cannot read back the module's bitcode");
  }
  return ok;
}

void cg_context_fini(cg_context *c) {
  if (c->b) LLVMDisposeBuilder(c->b);
  if (c->mod) LLVMDisposeModule(c->mod);
  if (c->ctx) LLVMContextDispose(c->ctx);
  memset(c, 0, sizeof *c);
}

LLVMValueRef cg_intrinsic(cg_context *c, const char *name, LLVMTypeRef *types, unsigned ntypes,
                          LLVMValueRef *args, unsigned nargs, bool convergent) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) return NULL;
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(c->mod, id, types, ntypes);
  LLVMTypeRef fty = LLVMIntrinsicGetType(c->ctx, id, types, ntypes);
  LLVMValueRef call = LLVMBuildCall2(c->b, fty, fn, args, nargs, "");
  if (convergent)
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(c->ctx, c->kind_convergent, 0));
  return call;
}

LLVMValueRef cg_const_int(cg_context *c, LLVMTypeRef t, uint64_t v) {
  (void)c;
  return LLVMConstInt(t, v, 0);
}

void cg_fn_attr(cg_context *c, LLVMValueRef f, const char *key, const char *value) {
  LLVMAddAttributeAtIndex(f, LLVMAttributeFunctionIndex,
                          LLVMCreateStringAttribute(c->ctx, key, strlen(key), value, strlen(value)));
}

void cg_enum_attr(cg_context *c, LLVMValueRef f, unsigned idx, const char *name, uint64_t v) {
  unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
  LLVMAddAttributeAtIndex(f, idx, LLVMCreateEnumAttribute(c->ctx, kind, v));
}

void cg_take_message(char *msg, char *buf, size_t cap) {
  if (cap) {
    size_t n = msg ? strlen(msg) : 0;
    if (n >= cap) n = cap - 1;
    if (n) memcpy(buf, msg, n);
    buf[n] = 0;
  }
  if (msg) LLVMDisposeMessage(msg);
}
