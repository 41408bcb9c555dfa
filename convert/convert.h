/* convert/convert.h: offline conversion of whole binaries (issue 8,
 * docs/convert.md).
 *
 *   paths (files, directories) --scan--> inputs: ELF executables, shared
 *   libraries, ar archives, raw fatbins, .ptx files
 *   --per fatbin container, the PTX entries the runtime would pick-->
 *   jobs (module x target) --N worker threads: cg_compile_ptx (PTX -> IR
 *   -> lower/ -> codegen/ .hsaco, the entry the runtime's HIP backend
 *   uses)--> the kernel cache or a bundle (runtime/rt_bundle.h)
 *
 * The key of every code object is rt_code_object_key (runtime/rt_cache.h),
 * the function the HIP backend calls at load time, so a converted module is
 * found without compiling.  Which PTX entry of a container is converted
 * follows the runtime too: ptx_rank for the compute capability the runtime
 * reports (PTXWAVE_CC, default 8.0), first entry that compiles.
 *
 * Resumable: every code object is written atomically as soon as it is
 * compiled (cache entry, or a file in the bundle's staging directory
 * BUNDLE.parts/), and a job whose key is already stored is skipped.  So is
 * a failure: recorded the same way under the failure key (below), a rerun
 * reports it with its reason without compiling it again.  A stop
 * request (cv_options.stop, set from a signal handler) lets running
 * compiles finish and starts no new one; the bundle is still assembled
 * from what is done.
 *
 * Thread safety: workers share nothing but the job counter and the
 * statistics (one mutex).  The compiler has no global mutable state: one
 * ir_module, one LLVMContext (cg_compile) per job; codegen serialises only
 * its LLD link.
 */
#ifndef PW_CONVERT_H
#define PW_CONVERT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codegen/codegen.h"
#include "runtime/rt_cache.h"
#include "util/diag.h"

#define CV_MAX_TARGETS 16
#define CV_MAX_REASONS 32

typedef enum cv_dest {
  cv_dest_cache,   /* the runtime's kernel cache (PTXWAVE_CACHE_DIR ...) */
  cv_dest_bundle,  /* one bundle file (rt_bundle.h) */
  cv_dest_next_to_input, /* a bundle per input file, "<file>.ptxwave" next to it */
} cv_dest;

typedef struct cv_run cv_run;

typedef struct cv_options {
  const ir_target *targets[CV_MAX_TARGETS];
  unsigned ntargets;
  unsigned jobs;              /* worker threads; 0 means 1 */
  cv_dest dest;
  const char *cache_dir;      /* cv_dest_cache: NULL means the runtime's default */
  const char *bundle;         /* cv_dest_bundle: the file to write */
  unsigned sm;                /* compute capability the runtime reports, 120 for 12.0; 0: 120 */
  bool all_entries;           /* every PTX entry of every container, not the runtime's pick */
  bool retry_unsupported;     /* compile again what an earlier run recorded as unsupported */
  uint32_t max_modules;       /* per input, the first N modules only (CI subsets); 0: all */
  const volatile sig_atomic_t *stop; /* nonzero: finish running jobs, start no more */
  /* Called on the calling thread about 5 times a second and once at the end. */
  void (*progress)(const cv_run *run, void *user);
  void *user;
} cv_options;

typedef struct cv_reason {
  char what[64];              /* the PTX instruction, or a short cause */
  uint32_t count;             /* modules x targets it stopped */
} cv_reason;

typedef struct cv_input {
  char *path;
  uint32_t modules;           /* PTX modules to convert (per target) */
  uint32_t kernels;           /* .entry directives in them */
  uint64_t instrs;            /* PTX instructions parsed */
  uint32_t converted, skipped, unsupported;
  uint32_t failed_before;     /* of unsupported: recorded by an earlier run, not compiled again */
  cv_reason reasons[CV_MAX_REASONS];
  uint32_t nreasons;
  uint32_t other_reasons;     /* failures whose reason did not fit the table */
} cv_input;

struct cv_run {
  cv_input *inputs;
  uint32_t ninputs;
  uint32_t files_scanned;     /* files looked at, with or without PTX */
  uint32_t total, done;       /* jobs (modules x targets) */
  uint32_t converted, skipped, unsupported;
  uint32_t failed_before;     /* of unsupported: recorded by an earlier run, not compiled again */
  uint64_t instrs_compiled;   /* PTX instructions of the modules converted */
  double elapsed;             /* seconds since the workers started */
  double compile_seconds;     /* CPU-side time inside jobs, all workers */
  bool interrupted;
  unsigned jobs;
  const cv_options *opt;
  /* private */
  void *priv;
};

/* Scans paths, converts, stores.  Returns the run (never NULL unless out
 * of memory); errors that stop it early (no writable destination) go to d
 * and leave run->total 0.  Input errors (unreadable files, malformed
 * containers) go to d and the rest goes on. */
cv_run *cv_convert(const char *const *paths, unsigned npaths, const cv_options *opt, pw_diag *d);
void cv_run_free(cv_run *run);

/* A module that does not compile for a target is remembered, so a rerun
 * does not spend its compile again: a record under the code object's key
 * with this compiler name (cv_failure_key), whose payload is
 * CV_FAILURE_MAGIC then the short reason.  The compiler name carries the
 * ptxwave version: a new version tries the module again. */
#define CV_FAILURE_COMPILER RT_CODE_OBJECT_COMPILER "-unsupported"
#define CV_FAILURE_MAGIC "PTXWFAIL"

#endif
