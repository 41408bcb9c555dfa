// codegen/cg_llvm_opts.cpp: LLVM's command-line options with their errors.
// LLVMParseCommandLineOptions (the C API) sends LLVM's messages to a null
// stream and returns nothing, so an unknown option or a bad value would be
// dropped without a word; cl::ParseCommandLineOptions with a stream of our
// own returns whether every option was taken and says why not.
//
// It also keeps the options it applied, in order (ptxwave's defaults, then
// the caller's --llvm options): lld's ELF driver, which links every code
// object in process (cg_lld.cpp), calls cl::ResetAllOptionOccurrences()
// before it parses its own -mllvm options, which puts every LLVM option of
// the process back to LLVM's default.  cg_lld.cpp passes the kept options
// to lld as -mllvm, so that its reset ends with ptxwave's options in force
// again; without that, every compile after a process's first link ran with
// LLVM's defaults (docs/codegen.md "Backend IR passes").
#include <cstddef>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include "codegen/cg_llvm_opts.h"

namespace {
std::mutex applied_mutex;
std::vector<std::string> applied;  // every option taken, in order
}  // namespace

std::vector<std::string> cg_llvm_applied_options() {
  std::lock_guard<std::mutex> lock(applied_mutex);
  return applied;
}

extern "C" bool cg_llvm_parse(int argc, const char *const *argv, char *err, size_t errsize) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  bool ok = llvm::cl::ParseCommandLineOptions(argc, argv, "", &os);
  os.flush();
  if (ok) {
    std::lock_guard<std::mutex> lock(applied_mutex);
    for (int i = 1; i < argc; i++) applied.emplace_back(argv[i]);
  }
  if (err && errsize) {
    // LLVM's first message, without the advice to run `ptxwave --help`
    std::string line = msg.substr(0, msg.find('\n'));
    size_t try_at = line.find("  Try: ");
    if (try_at != std::string::npos) line.erase(try_at);
    std::snprintf(err, errsize, "%s", line.c_str());
  }
  return ok;
}
