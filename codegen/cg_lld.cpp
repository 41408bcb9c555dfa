// codegen/cg_lld.cpp: in-process linking of an AMDGPU object into a code
// object with lld's ELF driver (design.md: a subprocess costs ~76 ms per
// module against ~7 ms in process).  LLD has no C API; this C++ file (with
// cg_llvm_opts.cpp) exports cg_lld_link() (codegen.h).
//
// Caveats of lld as a library (lld/Common/Driver.h), and how they are met:
//  - lldMain() is safe to call again only while Result::canRunAgain is true;
//    after a crash inside lld (caught by its CrashRecoveryContext) memory may
//    be corrupt.  We remember that, and every later call fails with a message
//    instead of linking again: the runtime then falls back to its cache or
//    reports the error (it never aborts the host program).
//  - lld keeps its state in one global context (CommonLinkerContext): two
//    links at once would share it.  A mutex serialises the calls; the rest of
//    codegen runs in parallel.
//  - exitEarly is false under lldMain, so lld never calls exit().
//  - lld reads inputs and writes its output through files: a private
//    temporary directory (mkdtemp) holds both, removed before returning.
//  - lld's driver resets every LLVM command-line option of the process to
//    LLVM's default (cl::ResetAllOptionOccurrences) before it parses its
//    -mllvm options, so every link passes the options ptxwave has applied
//    (cg_llvm_applied_options: its defaults, then --llvm) as -mllvm, and
//    they are in force again when lld returns.  Between lld's reset and its
//    parse (microseconds, inside the link) a compile running on another
//    thread could read LLVM's defaults: that can make its code differ (not
//    wrong: these options choose optimisations), and is the price of lld's
//    process-wide options.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include <unistd.h>

#include "codegen/cg_llvm_opts.h"
#include "lld/Common/Driver.h"
#include "llvm/Support/raw_ostream.h"

LLD_HAS_DRIVER(elf)

namespace {
std::mutex lld_mutex;
bool lld_broken = false;

bool write_file(const std::string &path, const uint8_t *p, size_t n) {
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  bool ok = std::fwrite(p, 1, n, f) == n;
  return std::fclose(f) == 0 && ok;
}

bool read_file(const std::string &path, uint8_t **out, size_t *size) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::fseek(f, 0, SEEK_END);
  long n = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  uint8_t *buf = n >= 0 ? static_cast<uint8_t *>(std::malloc(n ? n : 1)) : nullptr;
  bool ok = buf && std::fread(buf, 1, n, f) == static_cast<size_t>(n);
  std::fclose(f);
  if (!ok) {
    std::free(buf);
    return false;
  }
  *out = buf;
  *size = static_cast<size_t>(n);
  return true;
}

void set_err(char *errbuf, size_t cap, const std::string &s) {
  if (!cap) return;
  std::snprintf(errbuf, cap, "%s", s.c_str());
}
}  // namespace

extern "C" int cg_lld_link_n(const uint8_t *const *objs, const size_t *sizes, unsigned n, uint8_t **out,
                             size_t *out_size, char *errbuf, size_t errbuf_size) {
  *out = nullptr;
  *out_size = 0;
  const char *tmp = std::getenv("TMPDIR");
  std::string dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/ptxwave-lld-XXXXXX";
  if (!mkdtemp(&dir[0])) {
    set_err(errbuf, errbuf_size, std::string("mkdtemp: ") + std::strerror(errno));
    return -1;
  }
  std::vector<std::string> ins;
  std::string outp = dir + "/out.hsaco";
  int rc = -1;
  std::string msgs;
  bool written = true;
  for (unsigned i = 0; i < n && written; i++) {
    ins.push_back(dir + "/in" + std::to_string(i) + ".o");
    if (!write_file(ins.back(), objs[i], sizes[i])) {
      msgs = "cannot write " + ins.back();
      written = false;
    }
  }
  if (written) {
    std::lock_guard<std::mutex> lock(lld_mutex);
    if (lld_broken) {
      msgs = "lld crashed earlier in this process and cannot be run again";
    } else {
      // one link of all the partitions' objects: symbols defined in one
      // (module-scope variables) resolve the others' references
      std::vector<const char *> args = {"ld.lld", "-shared", "--no-undefined"};
      const std::vector<std::string> llvm_opts = cg_llvm_applied_options();
      for (const std::string &o : llvm_opts) {
        args.push_back("-mllvm");
        args.push_back(o.c_str());
      }
      for (const std::string &in : ins) args.push_back(in.c_str());
      args.push_back("-o");
      args.push_back(outp.c_str());
      llvm::raw_string_ostream os(msgs), es(msgs);
      lld::Result r = lld::lldMain(args, os, es, {{lld::Gnu, &lld::elf::link}});
      os.flush();
      es.flush();
      if (!r.canRunAgain) lld_broken = true;
      rc = r.retCode;
    }
  }
  if (rc == 0 && !read_file(outp, out, out_size)) {
    msgs = "cannot read " + outp;
    rc = -1;
  }
  if (rc != 0) set_err(errbuf, errbuf_size, msgs.empty() ? "lld failed" : msgs);
  for (const std::string &in : ins) unlink(in.c_str());
  unlink(outp.c_str());
  rmdir(dir.c_str());
  return rc == 0 ? 0 : -1;
}

extern "C" int cg_lld_link(const uint8_t *obj, size_t obj_size, uint8_t **out,
                           size_t *out_size, char *errbuf, size_t errbuf_size) {
  return cg_lld_link_n(&obj, &obj_size, 1, out, out_size, errbuf, errbuf_size);
}
