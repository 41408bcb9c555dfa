// codegen/cg_llvm_opts.cpp: LLVM's command-line options with their errors.
// LLVMParseCommandLineOptions (the C API) sends LLVM's messages to a null
// stream and returns nothing, so an unknown option or a bad value would be
// dropped without a word; cl::ParseCommandLineOptions with a stream of our
// own returns whether every option was taken and says why not.
#include <cstddef>
#include <cstdio>
#include <string>

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

// declared in cg_priv.h (a C header)
extern "C" bool cg_llvm_parse(int argc, const char *const *argv, char *err, size_t errsize);

extern "C" bool cg_llvm_parse(int argc, const char *const *argv, char *err, size_t errsize) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  bool ok = llvm::cl::ParseCommandLineOptions(argc, argv, "", &os);
  os.flush();
  if (err && errsize) {
    // LLVM's first message, without the advice to run `ptxwave --help`
    std::string line = msg.substr(0, msg.find('\n'));
    size_t try_at = line.find("  Try: ");
    if (try_at != std::string::npos) line.erase(try_at);
    std::snprintf(err, errsize, "%s", line.c_str());
  }
  return ok;
}
