// codegen/cg_attrs.cpp: a kernel's parameter attributes set in one step.
//
// LLVM-C adds attributes one at a time (LLVMAddAttributeAtIndex): each call
// builds a new AttributeList as long as the function's parameter list and
// interns it in the LLVMContext for the context's life, so five attributes
// per parameter cost O(n^2) memory (issue 20: 8,000 u32 parameters, 1.37 GB).
// AttributeList::get over all parameters at once is linear; the C API has no
// such call, hence this file.
#include <llvm-c/Core.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Attributes.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/Support/MathExtras.h>

#include <cstdint>

#include "cg_attrs.h"

using namespace llvm;

// Parameter k of fn (0-based) gets byref([size x i8]), align, noalias,
// nonnull and dereferenceable(size), added to what it has already.
extern "C" void cg_kernel_param_attrs(LLVMValueRef fn, unsigned n, const uint64_t *size,
                                      const uint32_t *align) {
  Function *F = unwrap<Function>(fn);
  LLVMContext &C = F->getContext();
  AttributeList old = F->getAttributes();
  SmallVector<AttributeSet, 16> args;
  args.reserve(n);
  for (unsigned k = 0; k < n; k++) {
    AttrBuilder B(C, old.getParamAttrs(k));
    B.addByRefAttr(ArrayType::get(Type::getInt8Ty(C), size[k]));
    // the parser takes only powers of two; a bad value must not assert here
    B.addAlignmentAttr(Align(isPowerOf2_64(align[k]) ? align[k] : 1));
    B.addAttribute(Attribute::NoAlias);
    B.addAttribute(Attribute::NonNull);
    B.addDereferenceableAttr(size[k]);
    args.push_back(AttributeSet::get(C, B));
  }
  F->setAttributes(AttributeList::get(C, old.getFnAttrs(), old.getRetAttrs(), args));
}
