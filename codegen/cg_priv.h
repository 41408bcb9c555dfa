/* codegen/cg_priv.h: what the files of codegen/ share: the codegen context,
 * a thin wrapper over LLVM-C in the manner of Mesa's ac_llvm_build.c
 * (style.md #14). */
#ifndef PW_CG_PRIV_H
#define PW_CG_PRIV_H

#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "codegen/codegen.h"

/* AMDGPU address spaces (AMDGPUUsage "Address Spaces"). */
enum { CG_AS_FLAT = 0, CG_AS_GLOBAL = 1, CG_AS_LDS = 3, CG_AS_CONST = 4, CG_AS_PRIVATE = 5 };

/* One compile: its own LLVMContext, module and builder; cached types and
 * constants; the target facts.  Never shared between threads. */
typedef struct cg_context {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  const ir_target *target;
  unsigned wave_size;
  unsigned cov;
  LLVMTypeRef i1, i8, i16, i32, i64, i128, f16, bf16, f32, f64, voidt;
  LLVMTypeRef ptr[6];          /* ptr addrspace(N) */
  LLVMTypeRef wave_mask;       /* i32 or i64 */
  LLVMValueRef i32_0, i32_1, i64_0;
  unsigned kind_convergent;    /* attribute kinds, looked up once */
  unsigned kind_callbuf;       /* metadata !ptxwave.callbuf: an alloca that is a call's
                                * .param buffer (cg_emit.c, cg_compile.c) */
  /* sync scope ids: workgroup, agent, system (""), wavefront */
  unsigned ss_workgroup, ss_agent, ss_system, ss_wavefront;
  /* LLVM's own diagnostics (backend errors such as an LDS overflow,
   * warnings) go here instead of LLVM's default handler, which prints
   * them and exit()s the process on an error */
  pw_diag *diag;
  const pw_src *src;
  int llvm_errors;
  /* --emit ll/asm/obj: a relocatable object may call functions and use
   * variables other modules define (.extern), and keeps .visible functions
   * external so others can call them (docs/codegen.md "Relocatable
   * objects").  A .hsaco is complete: an external call is an error. */
  bool relocatable;
} cg_context;

/* cg_context.c */
void cg_context_init(cg_context *c, const ir_target *t, unsigned cov, const char *name);
/* A context whose module is read from bitcode (a partition of a split
 * compile, cg_compile.c): its own LLVMContext, so it may run on its own
 * thread.  false (and err) when the bitcode does not parse. */
bool cg_context_init_bitcode(cg_context *c, const ir_target *t, unsigned cov, const void *bc, size_t len,
                             char *err, size_t cap);
void cg_context_fini(cg_context *c);
/* Declares intrinsic `name` (overloaded on types[0..ntypes)) on first use
 * and calls it.  convergent: mark the call site convergent (cross-lane
 * operations: the optimiser must not make them control dependent on more
 * values).  Returns NULL if LLVM has no such intrinsic. */
LLVMValueRef cg_intrinsic(cg_context *c, const char *name, LLVMTypeRef *types, unsigned ntypes,
                          LLVMValueRef *args, unsigned nargs, bool convergent);
LLVMValueRef cg_const_int(cg_context *c, LLVMTypeRef t, uint64_t v);
/* Adds the string attribute key=value to function f. */
void cg_fn_attr(cg_context *c, LLVMValueRef f, const char *key, const char *value);
void cg_enum_attr(cg_context *c, LLVMValueRef f, unsigned idx, const char *name, uint64_t v);
/* An LLVM message (char *) or error: text copied into buf, original disposed. */
void cg_take_message(char *msg, char *buf, size_t cap);

/* cg_store_tuples.c: in functions of at least min_blocks blocks, the
 * elements of vector stores outside loops that are defined in other blocks
 * are copied next to the store, so that LLVM's register coalescer does not
 * join long-lived values into the stores' register tuples (quadratic in the
 * function's size: docs/codegen.md "Vector stores in huge functions").
 * CG_STORE_COPY_MIN_BLOCKS is the default, chosen by measurement; it is part
 * of cg_code_options (the runtime's cache key). */
#define CG_STORE_COPY_MIN_BLOCKS 300
void cg_copy_store_tuples(LLVMModuleRef mod, unsigned min_blocks);

/* cg_notes.c: before linking the n objects of a split compile, gives
 * objs[0] one AMDGPU metadata note listing every object's kernels (objs[0]
 * is realloc'd, sizes[0] updated) and marks the others' notes SHF_EXCLUDE,
 * so the code object has one note as an unsplit compile's has.  false (and
 * err) if an object has no such note. */
bool cg_merge_notes(uint8_t **objs, size_t *sizes, unsigned n, char *err, size_t cap);

/* cg_emit.c: the IR -> LLVM IR translation; false with errors in d. */
bool cg_emit_module(cg_context *c, const ir_module *m, const pw_src *src, pw_diag *d);

/* cg_llvm_opts.cpp: LLVM's cl::ParseCommandLineOptions (argv[0] is the
 * program name); false with LLVM's first message in err when an option is
 * unknown or has a bad value (the others are still taken; an option given
 * again takes the new value). */
bool cg_llvm_parse(int argc, const char *const *argv, char *err, size_t errsize);

#endif
