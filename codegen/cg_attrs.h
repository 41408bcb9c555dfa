/* codegen/cg_attrs.h: attribute lists built in one step (cg_attrs.cpp, C++:
 * LLVM-C has no call for it). */
#ifndef PTXWAVE_CG_ATTRS_H
#define PTXWAVE_CG_ATTRS_H

#include <stdint.h>

#include <llvm-c/Core.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Parameters 0..n-1 of fn: byref([size x i8]) align(align) noalias nonnull
 * dereferenceable(size), in one AttributeList (linear in n; adding them one
 * at a time through LLVM-C is quadratic in memory). */
void cg_kernel_param_attrs(LLVMValueRef fn, unsigned n, const uint64_t *size, const uint32_t *align);

#ifdef __cplusplus
}
#endif

#endif
