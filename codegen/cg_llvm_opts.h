// codegen/cg_llvm_opts.h: what cg_llvm_opts.cpp shares with cg_lld.cpp (C++).
// The C side (cg_llvm_parse) is declared in cg_priv.h.
#ifndef PTXWAVE_CG_LLVM_OPTS_H
#define PTXWAVE_CG_LLVM_OPTS_H

#include <cstddef>
#include <string>
#include <vector>

extern "C" bool cg_llvm_parse(int argc, const char *const *argv, char *err, size_t errsize);

// The LLVM options cg_llvm_parse has applied in this process, in order
// (ptxwave's defaults first): what lld must be given back as -mllvm.
std::vector<std::string> cg_llvm_applied_options();

#endif
