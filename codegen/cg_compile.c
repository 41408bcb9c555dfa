/* codegen/cg_compile.c: one compile, start to end.
 *
 *   IR module --cg_emit_module--> LLVM module --verify (debug builds)-->
 *   --LLVMRunPasses(cg_default_pipeline)--> --target machine--> ELF object
 *   --check every kernel and its .kd--> --cg_lld_link--> .hsaco
 *
 * The check after codegen exists because LLVM drops a function it cannot
 * compile for the target without an error (design.md: e.g. a wave-size
 * mismatch), which would otherwise surface only at launch time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Object.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/cg_priv.h"

/* The pass pipeline (docs/codegen.md "Pipeline").  PTX from nvcc has been
 * through NVVM's -O3: inlining, unrolling, vectorisation and LICM are done.
 * What AMDGPU still needs is what the PTX form hides: promoting the .param
 * and .local buffers to registers (sroa after inlining the small device
 * functions), folding the dispatch-value loads and address arithmetic
 * (early-cse, instcombine), and a cfg cleanup.  default<O1> adds little
 * that matters here for several times the compile time, and O2/O3 would
 * also run the SLP vectorizer, which is pathological on very large
 * functions (10 s+ at 20 k ops).  The pipeline below is measured in
 * benchmarks/ (docs/codegen.md).  amdgpu-attributor last: it proves which
 * implicit arguments and preloaded registers a kernel does not use
 * (amdgpu-no-*), which shrinks the kernarg segment and frees SGPRs; llc's
 * pipeline does not run it. */
const char cg_default_pipeline[] =
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg),"
    "cgscc(inline),"
    "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg),"
    "amdgpu-attributor";

/* What this thread is compiling, for the message of an LLVM fatal error
 * (a backend "Cannot select" aborts the process: codegen must never emit
 * what the backend cannot select, and when it happens anyway the message
 * names the module and target). */
static _Thread_local const char *current_module, *current_target;

static void fatal_handler(const char *reason) {
  fprintf(stderr, "ptxwave: internal error: LLVM failed on %s for %s: %s\n",
          current_module ? current_module : "?", current_target ? current_target : "?", reason);
}

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_llvm(void) {
  LLVMInstallFatalErrorHandler(fatal_handler);
  /* LLVM's target registry: process-wide, written once. */
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  LLVMInitializeAMDGPUAsmParser();
}

static uint8_t *dup_bytes(const char *p, size_t n, bool nul) {
  uint8_t *r = malloc(n + (nul ? 1 : 0) + 1);
  if (!r) PW_DIE("out of memory");
  memcpy(r, p, n);
  r[n] = 0;
  return r;
}

/* Every kernel of m and its kernel descriptor <name>.kd are defined symbols
 * of the object. */
static bool check_kernels(cg_context *c, const ir_module *m, const pw_src *src, LLVMMemoryBufferRef obj,
                          uint32_t *nkernels, pw_diag *d) {
  char *err = NULL;
  LLVMBinaryRef bin = LLVMCreateBinary(obj, c->ctx, &err);
  if (!bin) {
    char msg[512];
    cg_take_message(err, msg, sizeof msg);
    pw_error(d, src ? src->path : "<module>", "internal: cannot read the object LLVM wrote: %s", msg);
    return false;
  }
  uint32_t nk = 0;
  ir_foreach_func(m, f) if (f->is_kernel) nk++;
  bool *have = calloc(2 * (nk ? nk : 1), sizeof *have);
  LLVMSymbolIteratorRef it = LLVMObjectFileCopySymbolIterator(bin);
  while (it && !LLVMObjectFileIsSymbolIteratorAtEnd(bin, it)) {
    const char *name = LLVMGetSymbolName(it);
    uint32_t k = 0;
    ir_foreach_func(m, f) {
      if (!f->is_kernel) continue;
      size_t n = strlen(f->name);
      if (!strncmp(name, f->name, n)) {
        if (!name[n]) have[2 * k] = true;
        else if (!strcmp(name + n, ".kd")) have[2 * k + 1] = true;
      }
      k++;
    }
    LLVMMoveToNextSymbol(it);
  }
  if (it) LLVMDisposeSymbolIterator(it);
  LLVMDisposeBinary(bin);
  bool ok = true;
  uint32_t k = 0;
  ir_foreach_func(m, f) {
    if (!f->is_kernel) continue;
    if (!have[2 * k] || !have[2 * k + 1]) {
      pw_error_at(d, src, f->loc.line, f->loc.col,
                  "LLVM dropped kernel '%s' for %s: %s missing from the object", f->name,
                  c->target->name, have[2 * k] ? "its descriptor .kd is" : "it is");
      ok = false;
    }
    k++;
  }
  free(have);
  *nkernels = nk;
  return ok;
}

bool cg_compile(const ir_module *m, const pw_src *src, const cg_options *opt, cg_emit_kind kind,
                cg_output *out, pw_diag *d) {
  memset(out, 0, sizeof *out);
  const char *path = src && src->path ? src->path : m->source_name ? m->source_name : "<module>";
  if (!opt->target) {
    pw_error(d, path, "no target");
    return false;
  }
  unsigned cov = opt->cov ? opt->cov : 5;
  if (cov < 4 || cov > 6) {
    pw_error(d, path, "code object version %u: 4, 5 or 6", cov);
    return false;
  }
  pthread_once(&init_once, init_llvm);
  char features[512];
  snprintf(features, sizeof features, "%s%s%s", opt->target->llvm_features,
           opt->extra_features && *opt->extra_features ? "," : "", opt->extra_features ? opt->extra_features : "");
  cg_context c;
  cg_context_init(&c, opt->target, cov, path);
  current_module = path;
  current_target = opt->target->name;
  c.diag = d;
  c.src = src;
  c.relocatable = kind != CG_EMIT_HSACO;
  bool ok = true;
  char msg[4096];
  char *err = NULL;
  LLVMTargetMachineRef tm = NULL;
  if (ok) {
    LLVMTargetRef t;
    if (LLVMGetTargetFromTriple("amdgcn-amd-amdhsa", &t, &err)) {
      cg_take_message(err, msg, sizeof msg);
      pw_error(d, path, "LLVM has no AMDGPU target: %s", msg);
      ok = false;
    } else {
      tm = LLVMCreateTargetMachine(t, "amdgcn-amd-amdhsa", opt->target->name, features,
                                   LLVMCodeGenLevelDefault, LLVMRelocPIC, LLVMCodeModelDefault);
      LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
      char *dl = LLVMCopyStringRepOfTargetData(td);
      LLVMSetDataLayout(c.mod, dl);
      LLVMDisposeMessage(dl);
      LLVMDisposeTargetData(td);
    }
  }
  /* the data layout first: allocas take their address space from it */
  if (ok && !cg_emit_module(&c, m, src, d)) ok = false;
  /* every function: the target's cpu and features, so inlining and the
   * backend agree with the target machine */
  for (LLVMValueRef fn = LLVMGetFirstFunction(c.mod); ok && fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    cg_fn_attr(&c, fn, "target-cpu", opt->target->name);
    cg_fn_attr(&c, fn, "target-features", features);
  }
#ifndef NDEBUG
  bool verify = true;
#else
  bool verify = opt->verify;
#endif
  if (ok && verify && LLVMVerifyModule(c.mod, LLVMReturnStatusAction, &err)) {
    cg_take_message(err, msg, sizeof msg);
    pw_error(d, path, "internal: the LLVM module for %s does not verify:\n%s", opt->target->name, msg);
    ok = false;
  } else if (err) {
    LLVMDisposeMessage(err);
  }
  if (ok && !opt->no_opt) {
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetSLPVectorization(po, 0);
    LLVMPassBuilderOptionsSetLoopVectorization(po, 0);
    LLVMErrorRef e = LLVMRunPasses(c.mod, opt->pipeline ? opt->pipeline : cg_default_pipeline, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
      char *em = LLVMGetErrorMessage(e);
      snprintf(msg, sizeof msg, "%s", em);
      LLVMDisposeErrorMessage(em);
      pw_error(d, path, "LLVM pass pipeline: %s", msg);
      ok = false;
    }
  }
  if (c.llvm_errors) ok = false;
  if (ok && kind == CG_EMIT_LL) {
    char *s = LLVMPrintModuleToString(c.mod);
    out->size = strlen(s);
    out->data = dup_bytes(s, out->size, true);
    LLVMDisposeMessage(s);
  } else if (ok) {
    LLVMMemoryBufferRef buf = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tm, c.mod, kind == CG_EMIT_ASM ? LLVMAssemblyFile : LLVMObjectFile,
                                            &err, &buf)) {
      cg_take_message(err, msg, sizeof msg);
      pw_error(d, path, "LLVM code generation for %s: %s", opt->target->name, msg);
      ok = false;
    } else {
      if (c.llvm_errors) ok = false;
      if (ok && kind != CG_EMIT_ASM) ok = check_kernels(&c, m, src, buf, &out->nkernels, d);
      const char *p = LLVMGetBufferStart(buf);
      size_t n = LLVMGetBufferSize(buf);
      if (ok && kind == CG_EMIT_HSACO) {
        char lerr[2048];
        if (cg_lld_link((const uint8_t *)p, n, &out->data, &out->size, lerr, sizeof lerr)) {
          pw_error(d, path, "linking the code object for %s: %s", opt->target->name, lerr);
          ok = false;
        }
      } else if (ok) {
        out->data = dup_bytes(p, n, kind == CG_EMIT_ASM);
        out->size = n;
      }
      LLVMDisposeMemoryBuffer(buf);
    }
  }
  if (tm) LLVMDisposeTargetMachine(tm);
  cg_context_fini(&c);
  if (!ok) {
    free(out->data);
    memset(out, 0, sizeof *out);
  }
  return ok;
}
