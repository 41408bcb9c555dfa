/* codegen/codegen.h: lowered IR to AMD GPU code objects through LLVM 22
 * (design.md "Code generation", docs/codegen.md).
 *
 *   cg_compile(module, options)  ->  LLVM IR text | assembly | ELF object
 *                                    | linked code object (.hsaco)
 *
 * Every compile has its own LLVMContext: several modules may compile at once
 * on several threads (linking with LLD is serialised: cg_lld.cpp).  Errors in
 * the input (an instruction the backend cannot handle yet) are reported to
 * the pw_diag as file:line:col with the PTX instruction, the kernel and the
 * target; they never abort.
 */
#ifndef PW_CODEGEN_H
#define PW_CODEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"
#include "lower/lower.h"
#include "util/diag.h"

/* ---- cg_targets.c ------------------------------------------------------ */

/* The codegen rows (cg column CG) of the one target table
 * ir/ir_targets.def: the row for name ("gfx942"), or NULL when there is
 * none or it is lowering only. */
const ir_target *cg_target_find(const char *name);
/* All codegen rows, *n set to their count. */
const ir_target *cg_targets(unsigned *n);
/* ---- cg_compile.c ------------------------------------------------------ */

typedef enum cg_emit_kind { CG_EMIT_LL, CG_EMIT_ASM, CG_EMIT_OBJ, CG_EMIT_HSACO } cg_emit_kind;

typedef struct cg_options {
  const ir_target *target;    /* required: a codegen row (cg_target_find) */
  unsigned cov;               /* code object version 4, 5 or 6; 0 means 5 */
  const char *pipeline;       /* LLVM pass pipeline text; NULL: cg_default_pipeline */
  bool no_opt;                /* skip the pass pipeline (measurements, --emit ll of raw IR) */
  bool verify;                /* verify the LLVM module (always on in debug builds) */
  const char *extra_features; /* appended to the target's features ("+x,-y"), or NULL */
  bool no_lower;              /* cg_compile_ptx: compile the IR as parsed, without lower/
                               * (tests of codegen's own diagnostics) */
  bool expand_mma;            /* lower mma.sync per thread even where the target has
                               * MFMA/WMMA (lower_pipeline_options; benchmarks) */
  struct cg_ptx_info *info;   /* cg_compile_ptx: optional out (NULL: not wanted) */
  unsigned threads;           /* CG_EMIT_HSACO: compile the module's kernels in this many
                               * partitions, each on its own thread, linked in one lld
                               * link (docs/codegen.md "Parallel compile of one module");
                               * 1: one thread; 0: automatic, split only a module big
                               * enough to pay (CG_SPLIT_MIN_INSTS per partition), at
                               * most the CPUs online and 8 */
} cg_options;

/* The output bytes (malloc'd; free with free()).  For CG_EMIT_LL and
 * CG_EMIT_ASM, text with a terminating NUL not counted in size. */
typedef struct cg_output {
  uint8_t *data;
  size_t size;
  uint32_t nkernels;          /* kernels checked present in the object */
  uint32_t nparts;            /* partitions compiled on their own threads (1: unsplit) */
  uint32_t ndropped;          /* cg_compile_ptx: kernels left out, each reported as a
                               * warning (docs/codegen.md "Per-kernel failure") */
} cg_output;

/* src is the PTX text the module's locations point into (may be NULL). */
bool cg_compile(const ir_module *m, const pw_src *src, const cg_options *opt,
                cg_emit_kind kind, cg_output *out, pw_diag *d);

/* ---- cg_ptx.c ---------------------------------------------------------- */

/* What cg_compile_ptx tells a caller that reports on many modules (ptxwave
 * convert) besides the diagnostics. */
typedef struct cg_ptx_info {
  uint64_t instrs;            /* PTX instructions parsed */
  /* On failure: the PTX instruction of the first construct that stops the
   * module ("cp.async", "fma"), else a short cause ("PTX does not parse");
   * "" on success. */
  char reason[64];
} cg_ptx_info;

/* The first instruction the PTX front end kept opaque (an instruction or
 * modifier it does not decode), and its function; NULL if none.  No
 * backend can run one: cg_compile_ptx leaves out the kernels that reach it
 * (docs/codegen.md "Per-kernel failure"). */
const ir_instr *cg_first_opaque(const ir_module *m, const ir_func **fn);

/* PTX text (or a .pwir text, by name's suffix) to code for opt->target:
 * parse, leave out the kernels that reach an instruction no stage can
 * translate (opaque, or reported by lower/ or codegen/: out->ndropped, a
 * warning each), verify, lower_module()
 * for the target (unless no_lower, or the .pwir is already lowered),
 * cg_compile().  The one entry `ptxwave compile`, `ptxwave convert` and the
 * runtime's HIP backend share (docs/codegen.md "From PTX").  opt->info, if
 * set, gets the instruction count and the short reason of a failure. */
bool cg_compile_ptx(const char *name, const char *text, size_t len, const cg_options *opt,
                    cg_emit_kind kind, cg_output *out, pw_diag *d);

/* Several PTX texts, linked at the IR level (ir/ir_link.h) into one module,
 * compiled as one: relocatable device code and the modules that define
 * its .extern symbols (`ptxwave compile a.ptx b.ptx`, cuLinkComplete's
 * images on the HIP backend).  n == 1 is cg_compile_ptx. */
bool cg_compile_ptx_linked(unsigned n, const char *const *names, const char *const *texts,
                           const size_t *lens, const cg_options *opt, cg_emit_kind kind, cg_output *out,
                           pw_diag *d);

/* The pass pipeline used when cg_options.pipeline is NULL, and why
 * (docs/codegen.md "Pipeline"). */
extern const char cg_default_pipeline[];

/* The defaults that shape the code (cg_default_pipeline and the LLVM
 * options codegen sets, CG_LLVM_OPTIONS in cg_compile.c) as one string:
 * part of the runtime's cache key, so that a change of either compiles
 * cached modules again. */
extern const char cg_code_options[];

/* LLVM command-line options (llc's: "-disable-lsr=0", "-time-passes") for
 * experiments and measurements (`ptxwave compile --llvm OPT`, cg_bench).
 * LLVM's options are process-wide: call this before compiling, never while
 * another thread compiles.  An option given here wins over the one codegen
 * sets by default (cg_compile.c, CG_LLVM_OPTIONS).  False, with LLVM's
 * message in err, if LLVM refused an option (unknown, a bad value); the
 * options it took stay set. */
bool cg_llvm_options(int n, const char *const *opts, char *err, size_t errsize);

/* At the end of a process that gave LLVM options: LLVM's reports (the
 * -time-passes table) print when LLVM shuts down.  No compile may follow. */
void cg_llvm_finish(void);

/* ---- cg_lld.cpp -------------------------------------------------------- */

/* Links one AMDGPU ELF relocatable object into a shared code object with
 * lld's ELF driver, in process: `ld.lld -shared obj -o out`.  Returns 0 on
 * success; on failure, lld's messages in errbuf.  *out is malloc'd. */
int cg_lld_link(const uint8_t *obj, size_t obj_size, uint8_t **out, size_t *out_size,
                char *errbuf, size_t errbuf_size);
/* The same for n objects in one link (the partitions of a split compile,
 * cg_options.threads): `ld.lld -shared obj0 ... objN-1 -o out`. */
int cg_lld_link_n(const uint8_t *const *objs, const size_t *sizes, unsigned n, uint8_t **out,
                  size_t *out_size, char *errbuf, size_t errbuf_size);

#endif
