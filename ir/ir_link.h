/* ir/ir_link.h: linking PTX modules at the IR level (docs/ir.md,
 * "Linking").
 *
 * Relocatable device code (nvcc -rdc, cuDNN's runtime-compiled engines,
 * cuLinkAddData inputs) declares what another module defines:
 *
 *     .extern .func (.param .b32 r) mul_op (.param .b32 a, .param .b32 b);
 *     .extern .global .align 4 .b32 table[];
 *
 * ir_link() merges one module into another and binds every such
 * declaration to the definition of the same name, so the emulator and
 * codegen each get one module whose calls and addresses name definitions.
 */
#ifndef PW_IR_LINK_H
#define PW_IR_LINK_H

#include <stdbool.h>

#include "ir.h"
#include "util/diag.h"

/* Merges src into dst.  For each module-scope name that both define or
 * declare (PTX ISA 11.6 "Linking Directives"):
 *   declaration (.extern, or a prototype without body) + definition
 *                                  -> the definition, in both modules
 *   .weak or .common + .visible    -> the .visible one
 *   .weak/.common + .weak/.common  -> dst's (the first module's)
 *   .visible + .visible            -> error: "multiply defined"
 *   a name without linkage directive (module-local) in either one
 *                                  -> src's local one is renamed (name_pwlN)
 *   a function in one, a variable in the other, or two functions with
 *   different parameter counts     -> error
 * On success src is consumed: its arena joins dst's and src must not be
 * destroyed; dst holds everything.  On failure nothing changed: the errors
 * (naming the symbol and both modules) are in d and the caller still owns
 * both modules. */
bool ir_link(ir_module *dst, ir_module *src, pw_diag *d);

/* Whether every declared function or variable that m uses (a call, an
 * address, an initializer's relocation) has a definition; each one that
 * has none is reported "undefined symbol 'NAME'" with its first use.
 * Declarations nothing uses, dynamic .extern .shared arrays and the system
 * calls CUDA provides (vprintf, malloc, free, __assertfail) are fine. */
bool ir_link_check_defined(const ir_module *m, pw_diag *d);

/* A complete program (a code object with nothing left to link) holds the
 * kernels and what they reach; every device function is internal there,
 * so one that no kernel calls, names or lists as a call target, and that
 * no variable's initializer points to, can never run.  Unlinks those from
 * m (their memory stays in m's arena).  Declarations stay (the lowerings
 * look some up by name), and so do all variables (the host finds them by
 * name).  ptxas drops such functions in whole-program compilation too;
 * lowering them and running LLVM over them was wasted work (NCCL's
 * relocatable device code modules hold only ncclDevFunc_* functions,
 * reached from another module's ncclDevFuncTable: c0018's 81,208
 * instructions took 5 s to become an empty code object, ptxas's 0.7 s).
 * Not for relocatable objects: a later link may call what is visible. */
void ir_link_drop_unreached(ir_module *m);
/* The same for a relocatable object: what a later link may call (visible,
 * weak, common and extern functions) is kept too; module-local functions
 * no kernel or kept function reaches go. */
void ir_link_drop_unreached_local(ir_module *m);

/* Per-kernel failure (docs/codegen.md "Per-kernel failure"): cause[k], for
 * the k-th function of m in order, is a function with failed_at set that
 * it reaches (through the same edges as ir_link_drop_unreached: calls,
 * addresses taken, .calltargets), itself first, or NULL.  False if out of
 * memory (cause untouched). */
bool ir_link_failure_causes(const ir_module *m, const ir_func **cause);

/* Unlinks the functions with drop[k] set (k: the function's position in
 * m's list).  Their memory is the arena's; the name table keeps them, as
 * after ir_link_drop_unreached. */
void ir_link_remove_funcs(ir_module *m, const uint8_t *drop);

/* Links mods[0..n) into one, in order (in rounds of neighbouring pairs:
 * ir_link_modules' comment says why) and, unless allow_undefined,
 * checks that nothing is left undefined.  Consumes every module: returns
 * the linked module, or NULL after destroying them all. */
ir_module *ir_link_modules(ir_module **mods, unsigned n, bool allow_undefined, pw_diag *d);

#endif
