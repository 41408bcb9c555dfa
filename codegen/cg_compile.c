/* codegen/cg_compile.c: one compile, start to end.
 *
 *   IR module --cg_emit_module--> LLVM module --verify (debug builds)-->
 *   --LLVMRunPasses(cg_default_pipeline)--> --target machine--> ELF object
 *   --check every kernel and its .kd--> --cg_lld_link--> .hsaco
 *
 * or, for a module split into partitions (cg_options.threads, below):
 *   ... --LLVMRunPasses--> bitcode --one thread per partition--> objects
 *   --check--> --cg_merge_notes--> --cg_lld_link_n--> .hsaco
 *
 * The check after codegen exists because LLVM drops a function it cannot
 * compile for the target without an error (design.md: e.g. a wave-size
 * mismatch), which would otherwise surface only at launch time.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitWriter.h>
#include <llvm-c/ErrorHandling.h>
#include <llvm-c/Object.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include "codegen/cg_priv.h"
#include "util/pw_map.h"

/* The pass pipeline (docs/codegen.md "Pipeline").  PTX from nvcc has been
 * through NVVM's -O3: inlining, unrolling, vectorisation and LICM are done.
 * What AMDGPU still needs is what the PTX form hides: promoting the .param
 * and .local buffers to registers (sroa after inlining the small device
 * functions), folding the dispatch-value loads and address arithmetic
 * (early-cse, instcombine), and a cfg cleanup.  default<O1> adds little
 * that matters here for several times the compile time, and O2/O3 would
 * also run the SLP vectorizer, which is pathological on very large
 * functions (10 s+ at 20 k ops).  The pipeline below is measured in
 * benchmarks/ (docs/codegen.md).  argpromotion after inlining: a device
 * function's .param arguments arrive as pointers to the caller's .param
 * buffers (scratch); for internal functions called only directly (the
 * recursive and not inlined ones) it passes the loaded values instead, and
 * the caller's buffer then disappears (recursion: scratch 144 -> 128
 * bytes, as native).  infer-alignment and load-store-vectorizer at the
 * end of the second function group: PTX computes shared addresses as
 * integers (ptrtoint of the variable + offsets, inttoptr at the access),
 * which the backend's own load-store vectorizer does not see through for
 * alignment; with the alignment inferred from the (16-aligned, cg_emit.c)
 * LDS variable, a row of LDS reads becomes ds_read_b128 (matmul_tiled
 * f32: 115 -> 111 and 156 -> 148 instructions), at no measurable compile
 * time.  amdgpu-attributor last: it proves which
 * implicit arguments and preloaded registers a kernel does not use
 * (amdgpu-no-*), which shrinks the kernarg segment and frees SGPRs; llc's
 * pipeline does not run it. */
#define CG_DEFAULT_PIPELINE                                                                            \
  "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg),"                            \
  "cgscc(inline,argpromotion),"                                                                      \
  "function(sroa,early-cse,instcombine<no-verify-fixpoint>,simplifycfg,infer-alignment,load-store-vectorizer)," \
  "amdgpu-attributor"
const char cg_default_pipeline[] = CG_DEFAULT_PIPELINE;

/* Kernel parameter loads back to the entry block, after the IR pipeline.
 * PTX reads every kernel .param at the top; instcombine sinks each load
 * into the one block that uses it (past an `if (i >= n) return`), and the
 * backend then loads them one s_load_dword at a time, each with its own
 * wait, where clang's kernels (arguments lowered after the IR pipeline,
 * AMDGPULowerKernelArguments) load them together (s_load_dwordx2/x4).  A
 * load at a constant offset inside a byref kernel argument (addrspace 4:
 * the read-only kernarg segment, dereferenceable(size)) may run anywhere in
 * the kernel, so moving it (and its constant GEP) to the end of the entry
 * block only speculates a read of the kernarg segment. */
static uint64_t deref_bytes(LLVMValueRef fn, unsigned arg) {
  unsigned kind = LLVMGetEnumAttributeKindForName("dereferenceable", 15);
  LLVMAttributeRef a = LLVMGetEnumAttributeAtIndex(fn, arg + 1, kind);
  return a ? LLVMGetEnumAttributeValue(a) : 0;
}

static void hoist_kernarg_loads(LLVMModuleRef mod) {
  LLVMTargetDataRef td = LLVMGetModuleDataLayout(mod);
  LLVMBuilderRef b = LLVMCreateBuilderInContext(LLVMGetModuleContext(mod));
  for (LLVMValueRef fn = LLVMGetFirstFunction(mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn) || LLVMGetFunctionCallConv(fn) != LLVMAMDGPUKERNELCallConv) continue;
    LLVMBasicBlockRef entry = LLVMGetEntryBasicBlock(fn);
    LLVMValueRef term = LLVMGetBasicBlockTerminator(entry);
    if (!term) continue;
    for (LLVMBasicBlockRef bb = LLVMGetNextBasicBlock(entry); bb; bb = LLVMGetNextBasicBlock(bb)) {
      LLVMValueRef next;
      for (LLVMValueRef in = LLVMGetFirstInstruction(bb); in; in = next) {
        next = LLVMGetNextInstruction(in);
        if (!LLVMIsALoadInst(in) || LLVMGetVolatile(in) || LLVMGetOrdering(in) != LLVMAtomicOrderingNotAtomic) continue;
        LLVMValueRef ptr = LLVMGetOperand(in, 0), gep = NULL, base = ptr;
        uint64_t off = 0;
        if (LLVMIsAGetElementPtrInst(ptr)) {
          /* instcombine's form of a constant offset: gep i8, %arg, C */
          LLVMValueRef ix = LLVMGetNumOperands(ptr) == 2 ? LLVMGetOperand(ptr, 1) : NULL;
          if (!ix || !LLVMIsAConstantInt(ix) || LLVMGetGEPSourceElementType(ptr) != LLVMInt8TypeInContext(LLVMGetModuleContext(mod)))
            continue;
          long long c = LLVMConstIntGetSExtValue(ix);
          if (c < 0) continue;
          off = (uint64_t)c;
          gep = ptr;
          base = LLVMGetOperand(ptr, 0);
        }
        if (!LLVMIsAArgument(base) || LLVMGetPointerAddressSpace(LLVMTypeOf(base)) != 4) continue;
        unsigned arg = 0, n = LLVMCountParams(fn);
        while (arg < n && LLVMGetParam(fn, arg) != base) arg++;
        if (arg == n || off + LLVMStoreSizeOfType(td, LLVMTypeOf(in)) > deref_bytes(fn, arg)) continue;
        LLVMPositionBuilderBefore(b, term);
        if (gep && LLVMGetInstructionParent(gep) != entry) {
          LLVMInstructionRemoveFromParent(gep);
          LLVMInsertIntoBuilder(b, gep);
        }
        LLVMInstructionRemoveFromParent(in);
        LLVMInsertIntoBuilder(b, in);
      }
    }
  }
  LLVMDisposeBuilder(b);
}

/* What this thread is compiling, for the message of an LLVM fatal error
 * (a backend "Cannot select" aborts the process: codegen must never emit
 * what the backend cannot select, and when it happens anyway the message
 * names the module and target). */
static _Thread_local const char *current_module, *current_target;

static void fatal_handler(const char *reason) {
  fprintf(stderr, "ptxwave: internal error: LLVM failed on %s for %s: %s\n",
          current_module ? current_module : "?", current_target ? current_target : "?", reason);
}

/* ---- Target machines, kept per thread ------------------------------------
 * Creating an LLVM TargetMachine for AMDGPU builds its MCRegisterInfo
 * (register alias caches over thousands of registers), instruction info
 * and, on first use, the GCNSubtarget and its TargetLowering: measured at
 * about a third of the CPU time of compiling a small module.  A target
 * machine may compile any number of modules one after another but is not
 * safe to share between threads, so each thread keeps the few it has used
 * (keyed by CPU and feature string) and disposes of them when it exits
 * (the pthread key's destructor).  Nothing is shared between threads. */
enum { TM_CACHE = 4 };
typedef struct tm_cache {
  struct { char cpu[32], features[512]; LLVMTargetMachineRef tm; } e[TM_CACHE];
  unsigned n, next;
} tm_cache;

static pthread_key_t tm_key;
static void tm_cache_free(void *p) {
  tm_cache *tc = p;
  for (unsigned i = 0; i < tc->n; i++) LLVMDisposeTargetMachine(tc->e[i].tm);
  free(tc);
}

/* The thread's target machine for (cpu, features), created on first use;
 * NULL (with *err set) when LLVM has no AMDGPU target.  *owned: the caller
 * disposes of it (it could not be cached), else the thread's cache does. */
static LLVMTargetMachineRef target_machine(const char *cpu, const char *features, bool *owned, char **err) {
  *owned = false;
  tm_cache *tc = pthread_getspecific(tm_key);
  if (!tc) {
    tc = calloc(1, sizeof *tc);
    if (!tc || pthread_setspecific(tm_key, tc)) {
      free(tc);
      tc = NULL;
    }
  }
  for (unsigned i = 0; tc && i < tc->n; i++)
    if (!strcmp(tc->e[i].cpu, cpu) && !strcmp(tc->e[i].features, features)) return tc->e[i].tm;
  LLVMTargetRef t;
  if (LLVMGetTargetFromTriple("amdgcn-amd-amdhsa", &t, err)) return NULL;
  LLVMTargetMachineRef tm = LLVMCreateTargetMachine(t, "amdgcn-amd-amdhsa", cpu, features, LLVMCodeGenLevelDefault,
                                                    LLVMRelocPIC, LLVMCodeModelDefault);
  if (!tc || strlen(cpu) >= sizeof tc->e[0].cpu || strlen(features) >= sizeof tc->e[0].features) {
    *owned = true;
    return tm;
  }
  unsigned k = tc->n < TM_CACHE ? tc->n++ : tc->next++ % TM_CACHE;
  if (tc->e[k].tm) LLVMDisposeTargetMachine(tc->e[k].tm);
  snprintf(tc->e[k].cpu, sizeof tc->e[k].cpu, "%s", cpu);
  snprintf(tc->e[k].features, sizeof tc->e[k].features, "%s", features);
  tc->e[k].tm = tm;
  return tm;
}

/* ---- Options of the backend's pipeline -----------------------------------
 * Options of LLVM's codegen pipeline (llc's command-line options: the C API
 * has no other way to reach them), set once per process before the first
 * compile and given back to lld at every link, which resets them
 * (cg_lld.cpp).  The first two remove passes of the AMDGPU backend's IR stage
 * that repeat what NVVM's -O3 did before it wrote the PTX (the backend 9%
 * faster on the 138 modules of the ptxas comparison, 21% on smaller sets);
 * the last two remove work that changes (nearly) nothing in the code on
 * AMDGPU (4% more).  Measured in docs/codegen.md ("Backend IR passes"):
 * the 68 kernels of benchmarks/quality_bench.py compile to the same code
 * or better (instructions, registers, mca cycles).  cg_llvm_options
 * (ptxwave compile --llvm, cg_bench --llvm) sets these first and then the
 * caller's: LLVM keeps the last value of an option given twice. */
#define CG_LLVM_OPTIONS(X)                                                    \
  /* SeparateConstOffsetFromGEP, straight-line strength reduction,          \
   * NaryReassociate and two EarlyCSE runs (AMDGPUPassConfig::addIRPasses):  \
   * NVPTX's pipeline ran the same passes on this code, and PTX addresses   \
   * are integers, not GEPs; 5% of the backend on its own (SLSR). */        \
  X("-amdgpu-scalar-ir-passes=0")                                            \
  /* loop strength reduction: NVVM's LSR already shaped every PTX loop */    \
  X("-disable-lsr")                                                          \
  /* CodeGenPrepare restarts its walk from the first block after every      \
   * change to the dominator tree, quadratic in the blocks: 2.2 s of a      \
   * 1,272-block cuBLASLt kernel.  Past 500 blocks it revisits only the     \
   * blocks it changed (LLVM's default: past 10,000), to the same code. */  \
  X("-cgpp-huge-func=500")                                                   \
  /* Post-RA machine LICM: on AMDGPU nearly every instruction reads EXEC,   \
   * which loops write, so it hoists almost nothing (one s_mov in 2 of 178  \
   * corpus modules), yet takes a fifth of a module whose loops call        \
   * functions (the register masks of the calls). */                        \
  X("-disable-postra-machine-licm")

static const char *const cg_default_llvm_options[] = {
    "ptxwave",
#define X(opt) opt,
    CG_LLVM_OPTIONS(X)
#undef X
};

/* The defaults above shape the code without the caller asking for them,
 * and so does the threshold of cg_copy_store_tuples, so the runtime's cache
 * key carries them (rt_code_object_key): code objects cached by a build
 * with another pipeline, other backend options or another threshold are
 * compiled again, not loaded. */
#define X(opt) " " opt
#define CG_STR_(x) #x
#define CG_STR(x) CG_STR_(x)
const char cg_code_options[] = "pipeline=" CG_DEFAULT_PIPELINE " llvm:" CG_LLVM_OPTIONS(X)
    " store-copies:" CG_STR(CG_STORE_COPY_MIN_BLOCKS);
#undef CG_STR
#undef CG_STR_
#undef X

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void init_llvm(void) {
  cg_llvm_parse((int)(sizeof cg_default_llvm_options / sizeof *cg_default_llvm_options),
                cg_default_llvm_options, NULL, 0);
  pthread_key_create(&tm_key, tm_cache_free);
  LLVMInstallFatalErrorHandler(fatal_handler);
  /* LLVM's target registry: process-wide, written once. */
  LLVMInitializeAMDGPUTargetInfo();
  LLVMInitializeAMDGPUTarget();
  LLVMInitializeAMDGPUTargetMC();
  LLVMInitializeAMDGPUAsmPrinter();
  LLVMInitializeAMDGPUAsmParser();
}

bool cg_llvm_options(int n, const char *const *opts, char *err, size_t errsize) {
  if (err && errsize) *err = 0;
  const char *argv[65] = {"ptxwave"};
  if (n < 0 || n > 64) {
    if (err) snprintf(err, errsize, "at most 64 LLVM options");
    return false;
  }
  /* the defaults first: LLVM takes the last of repeated options */
  pthread_once(&init_once, init_llvm);
  for (int i = 0; i < n; i++) argv[i + 1] = opts[i];
  bool ok = cg_llvm_parse(n + 1, argv, err, errsize);
  /* some of LLVM's messages (a bad value) go to stderr, not to our stream */
  if (!ok && err && errsize && !*err) snprintf(err, errsize, "LLVM refused an option (its message above)");
  return ok;
}

void cg_llvm_finish(void) { LLVMShutdown(); }

static uint8_t *dup_bytes(const char *p, size_t n, bool nul) {
  uint8_t *r = malloc(n + (nul ? 1 : 0) + 1);
  if (!r) PW_DIE("out of memory");
  memcpy(r, p, n);
  r[n] = 0;
  return r;
}

/* Every kernel of m and its kernel descriptor <name>.kd are defined symbols
 * of one of the objs. */
static bool check_kernels(cg_context *c, const ir_module *m, const pw_src *src, LLVMMemoryBufferRef *objs,
                          unsigned nobjs, uint32_t *nkernels, pw_diag *d) {
  uint32_t nk = 0;
  ir_foreach_func(m, f) if (f->is_kernel) nk++;
  bool *have = calloc(2 * (nk ? nk : 1), sizeof *have);
  for (unsigned o = 0; o < nobjs; o++) {
    char *err = NULL;
    LLVMBinaryRef bin = LLVMCreateBinary(objs[o], c->ctx, &err);
    if (!bin) {
      char msg[512];
      cg_take_message(err, msg, sizeof msg);
      pw_error(d, src ? src->path : "<module>", "internal: cannot read the object LLVM wrote: %s", msg);
      free(have);
      return false;
    }
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
  }
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

/* ---- Lifetimes of call buffers -------------------------------------------
 *
 * nvcc declares a call's .param argument and return buffers in a { } scope
 * around the call sequence (PTX ISA 5.1.6.4, "Parameter State Space":
 * st.param, call, ld.param), so their contents are dead outside it.  In
 * LLVM they are allocas of the function's entry block; without lifetime
 * markers the backend gives each one its own stack slot, and a function
 * with several non-inlined calls (recursion) has a frame of every buffer
 * of every call.  For each buffer cg_emit.c marked !ptxwave.callbuf whose
 * uses all lie in one basic block (the call sequence, unless a guard
 * split it), llvm.lifetime.start goes before the first use and
 * llvm.lifetime.end after the last: stack colouring then shares slots
 * between calls.  A buffer used in several blocks keeps its own slot. */

/* Collects the instructions that use v, through GEPs and casts of it;
 * false if one of them is not a load, a store to it, a call or such an
 * address computation (the address escapes), or if they span blocks. */
static bool buffer_uses(LLVMValueRef v, LLVMBasicBlockRef *bb, LLVMValueRef *users, unsigned *n,
                        unsigned cap, unsigned depth) {
  if (depth > 8) return false;
  for (LLVMUseRef u = LLVMGetFirstUse(v); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef i = LLVMGetUser(u);
    if (!LLVMIsAInstruction(i)) return false;
    LLVMBasicBlockRef b = LLVMGetInstructionParent(i);
    if (*bb && *bb != b) return false;
    *bb = b;
    if (*n == cap) return false;
    users[(*n)++] = i;
    if (LLVMIsALoadInst(i) || LLVMIsACallInst(i)) continue;
    if (LLVMIsAStoreInst(i)) {
      if (LLVMGetOperand(i, 0) == v) return false; /* the address itself stored */
      continue;
    }
    if (LLVMIsAGetElementPtrInst(i) || LLVMIsAAddrSpaceCastInst(i)) {
      if (!buffer_uses(i, bb, users, n, cap, depth + 1)) return false;
      continue;
    }
    return false;
  }
  return true;
}

static void call_buffer_lifetimes(cg_context *c) {
  enum { CAP = 64 };
  LLVMValueRef users[CAP];
  unsigned id_start = LLVMLookupIntrinsicID("llvm.lifetime.start", 19);
  unsigned id_end = LLVMLookupIntrinsicID("llvm.lifetime.end", 17);
  LLVMTypeRef pt = c->ptr[CG_AS_PRIVATE];
  LLVMValueRef fs = LLVMGetIntrinsicDeclaration(c->mod, id_start, &pt, 1);
  LLVMValueRef fe = LLVMGetIntrinsicDeclaration(c->mod, id_end, &pt, 1);
  LLVMTypeRef ts = LLVMIntrinsicGetType(c->ctx, id_start, &pt, 1);
  LLVMTypeRef te = LLVMIntrinsicGetType(c->ctx, id_end, &pt, 1);
  /* Each instruction's position in its block (+1), numbered once per
   * function when a buffer needs it: scanning the users' block per buffer
   * was quadratic in the calls of one block (scale_bench calls: 2,400
   * calls 28x slower than 600).  The lifetime calls inserted below are not
   * numbered and never users of a later buffer. */
  pw_map pos = {0};
  for (LLVMValueRef fn = LLVMGetFirstFunction(c->mod); fn; fn = LLVMGetNextFunction(fn)) {
    LLVMBasicBlockRef entry = LLVMIsDeclaration(fn) ? NULL : LLVMGetEntryBasicBlock(fn);
    bool numbered = false;
    for (LLVMValueRef a = entry ? LLVMGetFirstInstruction(entry) : NULL; a; a = LLVMGetNextInstruction(a)) {
      if (!LLVMIsAAllocaInst(a) || !LLVMGetMetadata(a, c->kind_callbuf)) continue;
      LLVMBasicBlockRef bb = NULL;
      unsigned n = 0;
      if (!buffer_uses(a, &bb, users, &n, CAP, 0) || !n || bb == entry) continue;
      if (!numbered) {
        pw_map_free(&pos);
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(fn); b; b = LLVMGetNextBasicBlock(b)) {
          uintptr_t k = 0;
          for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
            pw_map_ptr_put(&pos, i, (void *)++k);
        }
        numbered = true;
      }
      /* the first and last user in the block's order */
      LLVMValueRef first = NULL, last = NULL;
      uintptr_t pf = 0, pl = 0;
      for (unsigned k = 0; k < n; k++) {
        uintptr_t p = (uintptr_t)pw_map_ptr_get(&pos, users[k]);
        if (!p) continue;
        if (!first || p < pf) first = users[k], pf = p;
        if (!last || p > pl) last = users[k], pl = p;
      }
      if (!first || !last || !LLVMGetNextInstruction(last)) continue;
      LLVMPositionBuilderBefore(c->b, first);
      LLVMBuildCall2(c->b, ts, fs, &a, 1, "");
      LLVMPositionBuilderBefore(c->b, LLVMGetNextInstruction(last));
      LLVMBuildCall2(c->b, te, fe, &a, 1, "");
    }
  }
  pw_map_free(&pos);
}

/* ---- Parallel compile of one module (docs/codegen.md) ------------------
 *
 * LLVM's code generation of one module runs on one thread.  A module with
 * many kernels is split after the IR pipeline: its bitcode is read back
 * into one LLVMContext per partition, each keeps its share of the kernels
 * (the device functions they call come along, as internal copies), and each
 * compiles to an object on its own thread; one lld link joins the objects.
 * Module-scope variables must exist once (the host writes them by name, and
 * all kernels share them): partition 0 keeps their definitions, the others
 * only declarations that the link resolves.  A variable that was internal
 * becomes hidden so that the link can resolve it without exporting it.
 * LDS variables stay internal in every partition: each kernel has its own
 * LDS anyway.  Modules where a function's address is taken are not split
 * (a copy per partition would give it several addresses). */

/* The smallest share of a split worth its cost: LLVM instructions (after
 * the IR pipeline) per partition.  Below it, reading the bitcode back once
 * per partition and the longer link cost more than the parallel codegen
 * wins (measured with cg_bench --threads, docs/codegen.md). */
#define CG_SPLIT_MIN_INSTS 4000
/* Each partition holds the whole module's IR while it deletes the other
 * kernels: the automatic choice stops at 8 partitions. */
#define CG_SPLIT_AUTO_MAX 8

typedef struct cg_part {
  /* in */
  const cg_options *opt;
  const char *features, *path;
  unsigned cov;
  const void *bc;              /* the whole module, shared read-only */
  size_t bc_len;
  char **kernels;              /* the kernels this partition keeps */
  unsigned nkernels;
  bool owner;                  /* defines the module-scope variables */
  /* out */
  pw_diag diag;                /* collected; replayed on the calling thread */
  uint8_t *obj;
  size_t obj_size;
  bool ok;
} cg_part;

static bool is_kernel_fn(LLVMValueRef fn) {
  return LLVMGetFunctionCallConv(fn) == LLVMAMDGPUKERNELCallConv;
}

static unsigned fn_insts(LLVMValueRef fn) {
  unsigned n = 0;
  for (LLVMBasicBlockRef bb = LLVMGetFirstBasicBlock(fn); bb; bb = LLVMGetNextBasicBlock(bb))
    for (LLVMValueRef i = LLVMGetFirstInstruction(bb); i; i = LLVMGetNextInstruction(i)) n++;
  return n;
}

/* true when every use of fn is a direct call of it */
static bool only_called(LLVMValueRef fn) {
  for (LLVMUseRef u = LLVMGetFirstUse(fn); u; u = LLVMGetNextUse(u)) {
    LLVMValueRef user = LLVMGetUser(u);
    if (!LLVMIsACallInst(user) || LLVMGetCalledValue(user) != fn) return false;
  }
  return true;
}

static bool name_in(const char *name, size_t len, char **names, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (strlen(names[i]) == len && !memcmp(names[i], name, len)) return true;
  return false;
}

/* One partition, on its own thread: its own context, module, target
 * machine; nothing shared but the read-only bitcode and options. */
static void *part_main(void *arg) {
  cg_part *p = arg;
  current_module = p->path;
  current_target = p->opt->target->name;
  pw_src src = {.path = p->path};
  cg_context c;
  char msg[4096];
  p->ok = false;
  if (!cg_context_init_bitcode(&c, p->opt->target, p->cov, p->bc, p->bc_len, msg, sizeof msg)) {
    pw_error(&p->diag, p->path, "internal: %s", msg);
    cg_context_fini(&c);
    return NULL;
  }
  c.diag = &p->diag;
  c.src = &src;
  /* kernels of the other partitions go (nothing uses a kernel: checked) */
  LLVMValueRef next;
  for (LLVMValueRef fn = LLVMGetFirstFunction(c.mod); fn; fn = next) {
    next = LLVMGetNextFunction(fn);
    size_t len;
    const char *name = LLVMGetValueName2(fn, &len);
    if (!LLVMIsDeclaration(fn) && is_kernel_fn(fn) && !name_in(name, len, p->kernels, p->nkernels))
      LLVMDeleteFunction(fn);
  }
  /* module-scope variables: defined in the owner only */
  if (!p->owner) {
    for (LLVMValueRef g = LLVMGetFirstGlobal(c.mod); g; g = LLVMGetNextGlobal(g)) {
      if (LLVMIsDeclaration(g) || LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == CG_AS_LDS) continue;
      LLVMLinkage l = LLVMGetLinkage(g);
      if (l == LLVMInternalLinkage || l == LLVMPrivateLinkage) continue; /* constants: copies */
      LLVMSetInitializer(g, NULL);
      LLVMSetLinkage(g, LLVMExternalLinkage);
    }
  }
  char *err = NULL;
  bool tm_owned;
  LLVMTargetMachineRef tm = target_machine(p->opt->target->name, p->features, &tm_owned, &err);
  if (!tm) {
    cg_take_message(err, msg, sizeof msg);
    pw_error(&p->diag, p->path, "LLVM has no AMDGPU target: %s", msg);
  } else {
    /* the device functions and constants no kept kernel uses */
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMErrorRef e = LLVMRunPasses(c.mod, "globaldce", tm, po);
    LLVMDisposePassBuilderOptions(po);
    LLVMMemoryBufferRef buf = NULL;
    if (e) {
      char *em = LLVMGetErrorMessage(e);
      pw_error(&p->diag, p->path, "LLVM pass pipeline: %s", em);
      LLVMDisposeErrorMessage(em);
    } else if (LLVMTargetMachineEmitToMemoryBuffer(tm, c.mod, LLVMObjectFile, &err, &buf)) {
      cg_take_message(err, msg, sizeof msg);
      pw_error(&p->diag, p->path, "LLVM code generation for %s: %s", p->opt->target->name, msg);
    } else {
      p->obj_size = LLVMGetBufferSize(buf);
      p->obj = dup_bytes(LLVMGetBufferStart(buf), p->obj_size, false);
      LLVMDisposeMemoryBuffer(buf);
      p->ok = !c.llvm_errors;
    }
  }
  if (tm && tm_owned) LLVMDisposeTargetMachine(tm);
  cg_context_fini(&c);
  return NULL;
}

/* Replays a partition's collected messages on the compile's pw_diag, as
 * they would have been reported unsplit. */
static void replay(pw_diag *d, const pw_src *src, const char *path, const pw_diag *pd) {
  const char *text = pw_diag_text(pd);
  while (*text) {
    const char *eol = strchr(text, '\n');
    size_t n = eol ? (size_t)(eol - text) : strlen(text);
    const char *w = memmem(text, n, ": warning: ", 11), *e = memmem(text, n, ": error: ", 9);
    if (w && (!e || w < e)) pw_warn_at(d, src, 0, 0, "%.*s", (int)(n - (w + 11 - text)), w + 11);
    else if (e) pw_error_at(d, src, 0, 0, "%.*s", (int)(n - (e + 9 - text)), e + 9);
    else if (n) pw_error(d, path, "%.*s", (int)n, text);
    text += n + (eol ? 1 : 0);
  }
}

/* How many partitions: 1 = do not split (docs/codegen.md). */
static unsigned split_count(cg_context *c, const cg_options *opt, cg_emit_kind kind) {
  if (kind != CG_EMIT_HSACO || opt->threads == 1) return 1;
  unsigned nk = 0, total = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(c->mod); fn; fn = LLVMGetNextFunction(fn)) {
    if (LLVMIsDeclaration(fn)) continue;
    if (is_kernel_fn(fn)) {
      if (LLVMGetFirstUse(fn)) return 1;
      nk++;
    } else if (!only_called(fn)) {
      return 1;
    }
    total += fn_insts(fn);
  }
  unsigned n = opt->threads;
  if (!n) {
    /* automatic: enough work per partition, a CPU each, and at most
     * CG_SPLIT_AUTO_MAX copies of the module in memory at once */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    n = total / CG_SPLIT_MIN_INSTS;
    if (cpus > 0 && n > (unsigned)cpus) n = (unsigned)cpus;
    if (n > CG_SPLIT_AUTO_MAX) n = CG_SPLIT_AUTO_MAX;
  }
  if (n > nk) n = nk;
  if (n > 64) n = 64;
  return n < 2 ? 1 : n;
}

typedef struct kcost {
  LLVMValueRef fn;
  unsigned cost;
} kcost;

static int by_cost_desc(const void *a, const void *b) {
  unsigned x = ((const kcost *)a)->cost, y = ((const kcost *)b)->cost;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The split compile of c's module (after the IR pipeline) into nparts
 * objects linked into out. */
static bool compile_split(cg_context *c, const ir_module *m, const pw_src *src, const cg_options *opt,
                          const char *features, const char *path, unsigned nparts, cg_output *out,
                          pw_diag *d) {
  /* module-scope variables defined in the module become linkable: hidden
   * where they were internal (never exported), named if unnamed */
  unsigned anon = 0;
  for (LLVMValueRef g = LLVMGetFirstGlobal(c->mod); g; g = LLVMGetNextGlobal(g)) {
    if (LLVMIsDeclaration(g) || LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == CG_AS_LDS) continue;
    LLVMLinkage l = LLVMGetLinkage(g);
    if ((l != LLVMInternalLinkage && l != LLVMPrivateLinkage) || LLVMIsGlobalConstant(g)) continue;
    size_t len;
    LLVMGetValueName2(g, &len);
    if (!len) {
      char nm[32];
      snprintf(nm, sizeof nm, "__ptxwave.var.%u", anon++);
      LLVMSetValueName2(g, nm, strlen(nm));
    }
    LLVMSetLinkage(g, LLVMExternalLinkage);
    LLVMSetVisibility(g, LLVMHiddenVisibility);
  }
  /* kernels to partitions: largest first, each to the least loaded
   * (LPT scheduling), by LLVM instruction count */
  unsigned nk = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(c->mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn) && is_kernel_fn(fn)) nk++;
  kcost *ks = calloc(nk, sizeof *ks);
  cg_part *parts = calloc(nparts, sizeof *parts);
  unsigned *load = calloc(nparts, sizeof *load);
  char **names = calloc(nk, sizeof *names);
  if (!ks || !parts || !load || !names) PW_DIE("out of memory");
  unsigned k = 0;
  for (LLVMValueRef fn = LLVMGetFirstFunction(c->mod); fn; fn = LLVMGetNextFunction(fn))
    if (!LLVMIsDeclaration(fn) && is_kernel_fn(fn)) ks[k++] = (kcost){fn, fn_insts(fn)};
  qsort(ks, nk, sizeof *ks, by_cost_desc);
  unsigned *owner_of = calloc(nk, sizeof *owner_of);
  for (k = 0; k < nk; k++) {
    unsigned best = 0;
    for (unsigned p = 1; p < nparts; p++)
      if (load[p] < load[best]) best = p;
    load[best] += ks[k].cost + 1;
    owner_of[k] = best;
    parts[best].nkernels++;
  }
  /* names grouped by partition */
  unsigned pos = 0;
  for (unsigned p = 0; p < nparts; p++) {
    parts[p].kernels = names + pos;
    unsigned j = 0;
    for (k = 0; k < nk; k++)
      if (owner_of[k] == p) {
        size_t len;
        const char *nm = LLVMGetValueName2(ks[k].fn, &len);
        names[pos + j++] = strndup(nm, len);
      }
    pos += j;
  }
  LLVMMemoryBufferRef bc = LLVMWriteBitcodeToMemoryBuffer(c->mod);
  pthread_t *tid = calloc(nparts, sizeof *tid);
  bool *started = calloc(nparts, sizeof *started);
  for (unsigned p = 0; p < nparts; p++) {
    cg_part *q = &parts[p];
    q->opt = opt;
    q->features = features;
    q->path = path;
    q->cov = c->cov;
    q->bc = LLVMGetBufferStart(bc);
    q->bc_len = LLVMGetBufferSize(bc);
    q->owner = p == 0;
    pw_diag_init(&q->diag, NULL);
    /* partition 0 on this thread; a failed thread start runs inline too */
    if (p > 0 && !pthread_create(&tid[p], NULL, part_main, q)) started[p] = true;
  }
  part_main(&parts[0]);
  for (unsigned p = 1; p < nparts; p++) {
    if (started[p]) pthread_join(tid[p], NULL);
    else part_main(&parts[p]);
  }
  LLVMDisposeMemoryBuffer(bc);
  bool ok = true;
  for (unsigned p = 0; p < nparts; p++) {
    replay(d, src, path, &parts[p].diag);
    if (!parts[p].ok) ok = false;
  }
  if (ok) {
    LLVMMemoryBufferRef *bufs = calloc(nparts, sizeof *bufs);
    for (unsigned p = 0; p < nparts; p++)
      bufs[p] = LLVMCreateMemoryBufferWithMemoryRange((const char *)parts[p].obj, parts[p].obj_size, "part", 0);
    ok = check_kernels(c, m, src, bufs, nparts, &out->nkernels, d);
    for (unsigned p = 0; p < nparts; p++) LLVMDisposeMemoryBuffer(bufs[p]);
    free(bufs);
  }
  if (ok) {
    uint8_t **objs = calloc(nparts, sizeof *objs);
    size_t *sizes = calloc(nparts, sizeof *sizes);
    for (unsigned p = 0; p < nparts; p++) {
      objs[p] = parts[p].obj;
      sizes[p] = parts[p].obj_size;
    }
    char lerr[2048];
    /* one metadata note for all kernels (cg_notes.c) */
    if (!cg_merge_notes(objs, sizes, nparts, lerr, sizeof lerr)) {
      pw_error(d, path, "internal: merging the metadata of the partitions for %s: %s", opt->target->name, lerr);
      ok = false;
    }
    parts[0].obj = objs[0]; /* realloc'd */
    parts[0].obj_size = sizes[0];
    if (ok && cg_lld_link_n((const uint8_t *const *)objs, sizes, nparts, &out->data, &out->size, lerr,
                            sizeof lerr)) {
      pw_error(d, path, "linking the code object for %s: %s", opt->target->name, lerr);
      ok = false;
    }
    free(objs);
    free(sizes);
  }
  for (unsigned p = 0; p < nparts; p++) {
    free(parts[p].obj);
    pw_diag_fini(&parts[p].diag);
  }
  for (k = 0; k < nk; k++) free(names[k]);
  free(names);
  free(owner_of);
  free(tid);
  free(started);
  free(load);
  free(parts);
  free(ks);
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
  bool tm_owned = false;
  if (ok) {
    tm = target_machine(opt->target->name, features, &tm_owned, &err);
    if (!tm) {
      cg_take_message(err, msg, sizeof msg);
      pw_error(d, path, "LLVM has no AMDGPU target: %s", msg);
      ok = false;
    } else {
      LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tm);
      char *dl = LLVMCopyStringRepOfTargetData(td);
      LLVMSetDataLayout(c.mod, dl);
      LLVMDisposeMessage(dl);
      LLVMDisposeTargetData(td);
    }
  }
  /* the data layout first: allocas take their address space from it */
  if (ok && !cg_emit_module(&c, m, src, d)) ok = false;
  if (ok) call_buffer_lifetimes(&c);
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
    } else {
      hoist_kernarg_loads(c.mod);
      cg_copy_store_tuples(c.mod, CG_STORE_COPY_MIN_BLOCKS);
    }
  }
  if (c.llvm_errors) ok = false;
  unsigned nparts = ok ? split_count(&c, opt, kind) : 1;
  out->nparts = 1;
  if (ok && nparts > 1) {
    out->nparts = nparts;
    ok = compile_split(&c, m, src, opt, features, path, nparts, out, d);
  } else if (ok && kind == CG_EMIT_LL) {
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
      if (ok && kind != CG_EMIT_ASM) ok = check_kernels(&c, m, src, &buf, 1, &out->nkernels, d);
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
  if (tm && tm_owned) LLVMDisposeTargetMachine(tm);
  cg_context_fini(&c);
  if (!ok) {
    free(out->data);
    memset(out, 0, sizeof *out);
  }
  return ok;
}
