/* runtime/rt_link.h: the JIT linker (cuLink*) and the linked image it
 * produces (docs/runtime.md, "Linking").
 *
 * cuLinkAddData/File collect PTX (given as PTX, or chosen from a fatbin as
 * a module load would).  cuLinkComplete parses every input, links them with
 * ir_link (ir/ir_link.h) to check that each .extern resolves, and returns
 * a "cubin" that is a small text container of the PTX inputs:
 *
 *     //ptxwave-linked-ptx v1 N\n
 *     //part LEN NAME\n  LEN bytes of PTX  \n        (N times)
 *
 * NUL-terminated, so cuModuleLoadData and the caches take it as they take
 * PTX text (it is the cache key too); rt_parse_module() turns it back into
 * one linked IR module for a backend.
 */
#ifndef PW_RT_LINK_H
#define PW_RT_LINK_H

#include <stdbool.h>
#include <stddef.h>

#include "codegen/codegen.h"
#include "ir/ir.h"
#include "util/diag.h"

#define RT_LINK_MAGIC "//ptxwave-linked-ptx v1 "

/* Whether text (len bytes) is a linked image. */
bool rt_link_is_image(const char *text, size_t len);

/* PTX text or a linked image -> one IR module (linked, every symbol
 * defined), with multimem.* lowered for one device (lower_multimem): the
 * parse step of a backend's module load.  NULL with the errors in d. */
ir_module *rt_parse_module(const char *name, const char *text, size_t len, pw_diag *d);

/* A linked image -> one code object for opt->target (the HIP backend's
 * compile step): its PTX parts through cg_compile_ptx_linked. */
bool rt_link_compile(const char *name, const char *text, size_t len, const cg_options *opt,
                     cg_emit_kind kind, cg_output *out, pw_diag *d);

#endif
