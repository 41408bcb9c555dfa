#!/usr/bin/env python3
"""benchmarks/quality_bench.py: ptxwave's code against native clang HIP code
for the same CUDA sources (issue 6, "code quality against native").

    python3 benchmarks/quality_bench.py [--ptxwave build/tools/ptxwave] [--arch gfx942]
        [--ptx-dir build/tests/cuda] [--keep DIR] [--pipeline TEXT] [--llvm=OPT]... [PROGRAM...]

For every program of tests/cuda/programs.txt (or those named):
  native   clang-22 -x hip --offload-arch=ARCH --cuda-device-only -nogpuinc -nogpulib -O3
           -include benchmarks/native/cuda_on_hip.h -I benchmarks/native/include
           (CUDA's built-ins mapped to clang / __builtin_amdgcn_* builtins)
  ptxwave  the PTX nvcc makes of the same source (build/tests/cuda/NAME.ptx, else
           nvcc -ptx -arch=sm_XX as tests/cuda/meson.build does), through
           `ptxwave compile --arch ARCH --emit hsaco`
Per kernel, matched by mangled name: instructions (llvm-objdump-22 -d of the
kernel's own symbol, the code-end padding not counted), VGPRs, SGPRs, LDS and
scratch bytes (llvm-readelf-22 --notes), and llvm-mca-22's total cycles for
one pass over the kernel's instructions (-mcpu=ARCH, -iterations=1: a static
estimate that treats the code as straight-line).  Prints one table and the
geometric mean of each ratio ptxwave/native over the kernels both sides
compiled; LDS and scratch ratios only over kernels where both are non-zero
(the others are counted).  Programs or kernels one side cannot compile are
listed with the first error, never dropped silently; so are kernels whose
native code calls a pw_nolib_* function (what clang has no code for without
device libraries or image instructions: cuda_on_hip.h), which would count a
call against ptxwave's whole function.  Nothing is asserted:
this is a measurement (benchmarks/README.md).
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUDA = os.path.join(ROOT, "tests", "cuda")
NATIVE = os.path.join(ROOT, "benchmarks", "native")

# The per-kernel measures: (key, column title).  One table of facts.
METRICS = [("insts", "insts"), ("vgpr", "VGPR"), ("sgpr", "SGPR"), ("lds", "LDS"),
           ("scratch", "scratch"), ("cycles", "mca cyc")]
# metrics that are often zero on both sides: ratio only where both non-zero
SPARSE = {"lds", "scratch"}


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()[:150]
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[0][:150] if lines else "failed"


def programs():
    out = []
    with open(os.path.join(CUDA, "programs.txt")) as f:
        for line in f:
            p = line.split()
            # -rdc=true programs (libs "rdc"): one file's PTX calls what
            # another defines, nothing to compare alone
            if p and not p[0].startswith("#") and "rdc" not in p[2].split(","):
                out.append((p[0], p[1]))
    return out


def kernel_notes(hsaco):
    """{kernel name: {vgpr, sgpr, lds, scratch}} from the code object metadata."""
    r = run(["llvm-readelf-22", "--notes", hsaco])
    kernels, cur = {}, None
    keys = {".vgpr_count": "vgpr", ".sgpr_count": "sgpr", ".group_segment_fixed_size": "lds",
            ".private_segment_fixed_size": "scratch", ".name": "name"}
    for line in r.stdout.splitlines():
        if re.match(r"^  - \.", line):  # a new entry of amdhsa.kernels
            cur = {}
            kernels.setdefault(id(cur), cur)
            line = "    " + line[4:]
        m = re.match(r"^    (\.[a-z_]+):\s+(\S+)", line)
        if cur is not None and m and m.group(1) in keys:
            v = m.group(2)
            cur[keys[m.group(1)]] = v if m.group(1) == ".name" else int(v)
    return {k["name"]: k for k in kernels.values() if "name" in k}


def kernel_code(hsaco):
    """{symbol: [instruction text]} from the disassembly: the instructions
    inside each function symbol's [value, value + size) (the padding after a
    kernel, s_nop fill and s_code_end, is outside it)."""
    syms = {}
    for line in run(["llvm-readelf-22", "-s", "--wide", hsaco]).stdout.splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "FUNC":
            syms[f[7]] = (int(f[1], 16), int(f[2]))
    r = run(["llvm-objdump-22", "-d", "--no-show-raw-insn", "--no-leading-addr", hsaco])
    code, cur, end = {}, None, 0
    for line in r.stdout.splitlines():
        m = re.match(r"^<(.+)>:$", line)
        if m:
            start, size = syms.get(m.group(1), (0, 1 << 62))
            cur, end = code.setdefault(m.group(1), []), start + size
            continue
        if cur is None or not line.startswith("\t"):
            continue
        ins, _, comment = line.partition("//")
        a = re.match(r"\s*([0-9A-Fa-f]+):", comment)
        if a and int(a.group(1), 16) >= end:
            continue
        # "..." is objdump's elision of a run of zero words (alignment fill)
        if ins.strip() and ins.strip() != "...":
            cur.append(ins.strip())
    return code


def mca_cycles(insts, arch, tmp):
    path = os.path.join(tmp, "mca.s")
    with open(path, "w") as f:
        f.write("\n".join(insts) + "\n")
    r = run(["llvm-mca-22", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + arch, "-iterations=1", path])
    m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    return int(m.group(1)) if m else None


def measure(hsaco, arch, tmp):
    notes, code = kernel_notes(hsaco), kernel_code(hsaco)
    out = {}
    for name, k in notes.items():
        insts = code.get(name, [])
        out[name] = {"insts": len(insts), "vgpr": k.get("vgpr"), "sgpr": k.get("sgpr"),
                     "lds": k.get("lds"), "scratch": k.get("scratch"),
                     "cycles": mca_cycles(insts, arch, tmp) if insts else None}
    return out


def native_cmd(name, arch):
    ld = shutil.which("ld.lld-22") or "ld.lld"
    return ["clang-22", "-x", "hip", "--offload-arch=" + arch, "--cuda-device-only",
            "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3", "-mcode-object-version=5",
            "--ld-path=" + ld, "-include", os.path.join(NATIVE, "cuda_on_hip.h"),
            "-I", os.path.join(NATIVE, "include"), "-I", CUDA, os.path.join(CUDA, name + ".cu")]


def compile_native(name, arch, tmp):
    out = os.path.join(tmp, name + ".native.hsaco")
    r = run(native_cmd(name, arch) + ["-o", out])
    return (out, None) if r.returncode == 0 else (None, first_error(r.stderr))


# What the native side has no code for is an undefined weak pw_nolib_*
# function (benchmarks/native/cuda_on_hip.h: double sin/exp/log/atan2/pow,
# atan2f, tanhf without device libraries; texture and surface fetches
# without image instructions).  A kernel reaching one would be measured as
# a call where ptxwave has the function's code, so it is listed, not compared.
NOLIB = "pw_nolib_"


def nolib_kernels(name, arch, hsaco, tmp):
    """{function: sorted pw_nolib_ names it reaches}, from the assembly of a
    second compile (-S; only when the code object has a pw_nolib_ symbol):
    each function's references (calls through the GOT or rel32) and their
    transitive closure."""
    syms = run(["llvm-readelf-22", "-s", "--wide", hsaco]).stdout
    if NOLIB not in syms:
        return {}
    asm = os.path.join(tmp, name + ".native.s")
    r = run(native_cmd(name, arch) + ["-S", "-o", asm])
    if r.returncode:
        return {}
    refs, cur = {}, None
    with open(asm) as f:
        for line in f:
            m = re.match(r"^([A-Za-z_$][\w.$]*):", line)
            if m:
                cur = refs.setdefault(m.group(1), set())
                continue
            if cur is not None:
                cur.update(re.findall(r"([A-Za-z_$][\w.$]*)@(?:gotpcrel32|gotpcrel|rel32)@lo", line))
    out = {}
    for fn in refs:
        seen, todo, hit = {fn}, [fn], set()
        while todo:
            for t in refs.get(todo.pop(), ()):
                if t.startswith(NOLIB):
                    hit.add(t[len(NOLIB):])
                elif t not in seen:
                    seen.add(t)
                    todo.append(t)
        if hit:
            out[fn] = sorted(hit)
    return out


def ptx_of(name, sm, ptx_dir, tmp):
    if ptx_dir:
        p = os.path.join(ptx_dir, name + ".ptx")
        if os.path.exists(p):
            return p, None
    nvcc = "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else shutil.which("nvcc")
    if not nvcc:
        return None, "no nvcc and no prebuilt PTX"
    p = os.path.join(tmp, name + ".ptx")
    r = run([nvcc, "-ptx", "-arch=sm_" + sm, "-I", CUDA, os.path.join(CUDA, name + ".cu"), "-o", p])
    return (p, None) if r.returncode == 0 else (None, first_error(r.stderr))


def compile_ptxwave(ptxwave, ptx, name, arch, pipeline, llvm, tmp):
    out = os.path.join(tmp, name + ".ptxwave.hsaco")
    cmd = [ptxwave, "compile", ptx, "--arch", arch, "--emit", "hsaco", "-o", out]
    if pipeline:
        cmd += ["--pipeline", pipeline]
    for o in llvm or []:
        cmd += ["--llvm", o]
    r = run(cmd)
    return (out, None) if r.returncode == 0 else (None, first_error(r.stderr))


# clang's spelling of a native fp16 type (demangled) -> CUDA's; longest first
NATIVE_TYPES = [("std::bfloat16_t vector[2]", "__nv_bfloat162"), ("_Float16 vector[2]", "__half2"),
                ("std::bfloat16_t", "__nv_bfloat16"), ("_Float16", "__half")]


def demangle(names):
    r = subprocess.run(["llvm-cxxfilt-22"], input="\n".join(names) + "\n", stdout=subprocess.PIPE, text=True)
    out = r.stdout.split("\n")
    return {n: (out[i] if i < len(out) else n) for i, n in enumerate(names)}


def match_fp16(mn, mp):
    """Renames native kernels whose demangled names, with NATIVE_TYPES
    mapped, equal a ptxwave kernel's demangled name."""
    odd = [k for k in mn if k not in mp]
    if not odd:
        return mn
    dn, dp = demangle(odd), demangle([k for k in mp if k not in mn])
    byp = {v: k for k, v in dp.items()}
    out = dict(mn)
    for k in odd:
        d = dn[k]
        for a, b in NATIVE_TYPES:
            d = d.replace(a, b)
        if d in byp:
            out[byp[d]] = out.pop(k)
    return out


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxwave", default=os.path.join(ROOT, "build", "tools", "ptxwave"))
    ap.add_argument("--arch", default="gfx942")
    ap.add_argument("--ptx-dir", default=os.path.join(ROOT, "build", "tests", "cuda"))
    ap.add_argument("--pipeline", help="ptxwave compile --pipeline TEXT")
    ap.add_argument("--llvm", action="append", metavar="OPT",
                    help="ptxwave compile --llvm OPT (repeatable): an LLVM option, e.g. "
                    "--llvm=-amdgpu-scalar-ir-passes=1 to measure the backend's default")
    ap.add_argument("--keep", help="keep the code objects in this directory")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    for tool in ("clang-22", "llvm-objdump-22", "llvm-readelf-22", "llvm-mca-22", "llvm-cxxfilt-22"):
        if not shutil.which(tool):
            sys.exit("quality_bench: %s not found" % tool)
    tmp = a.keep or tempfile.mkdtemp(prefix="quality_bench-")
    os.makedirs(tmp, exist_ok=True)
    rows, unmatched, failed, no_native, empty = [], [], [], [], []
    for name, sm in programs():
        if a.names and name not in a.names:
            continue
        nat, nerr = compile_native(name, a.arch, tmp)
        ptx, perr = ptx_of(name, sm, a.ptx_dir, tmp)
        pw = None
        if ptx:
            pw, perr = compile_ptxwave(a.ptxwave, ptx, name, a.arch, a.pipeline, a.llvm, tmp)
        if nerr:
            failed.append((name, "native", nerr))
        if perr:
            failed.append((name, "ptxwave", perr))
        if not nat or not pw:
            continue
        mn, mp = measure(nat, a.arch, tmp), measure(pw, a.arch, tmp)
        nolib = nolib_kernels(name, a.arch, nat, tmp)
        # the native fp16 types are clang's (_Float16, __bf16, vectors of
        # two): their mangled names differ from CUDA's structs, so kernels
        # are matched on demangled names with those spellings mapped
        mn = match_fp16(mn, mp)
        if not mn and not mp:
            empty.append(name)
        for k in sorted(set(mn) | set(mp)):
            if k not in mn or k not in mp:
                unmatched.append((name, k, "native" if k in mn else "ptxwave"))
                continue
            if k in nolib:
                no_native.append((name, k, nolib[k]))
                continue
            rows.append((name, k, mp[k], mn[k]))

    hdr = "%-14s %-40s" % ("program", "kernel") + "".join(" %17s" % t for _, t in METRICS)
    print("ptxwave / native per kernel (%s); each cell: ptxwave/native" % a.arch)
    print(hdr)
    for name, k, p, n in rows:
        cells = "".join(" %17s" % ("%s/%s" % (p[m], n[m])) for m, _ in METRICS)
        print("%-14s %-40s%s" % (name, k[:40], cells))
    print()
    print("geometric mean of ptxwave/native over %d kernels in %d programs:" %
          (len(rows), len({r[0] for r in rows})))
    for m, t in METRICS:
        if m in SPARSE:
            xs = [p[m] / n[m] for _, _, p, n in rows if p[m] and n[m]]
            only_p = sum(1 for _, _, p, n in rows if p[m] and not n[m])
            only_n = sum(1 for _, _, p, n in rows if n[m] and not p[m])
            print("  %-8s %6.3f  (%d kernels with both non-zero; non-zero only in ptxwave %d, only native %d)"
                  % (t, geomean(xs), len(xs), only_p, only_n))
        else:
            xs = [p[m] / n[m] for _, _, p, n in rows if p[m] and n[m]]
            print("  %-8s %6.3f  (%d kernels)" % (t, geomean(xs), len(xs)))
    if unmatched:
        print("\nkernels on one side only (name not matched):")
        for name, k, side in unmatched:
            print("  %-14s %s (only %s)" % (name, k, side))
    if empty:
        print("\nprograms with no kernel in their device code (both sides): " + ", ".join(empty))
    if no_native:
        print("\nkernels not compared: the native side calls a function it has no code for"
              " (no device libraries, no image instructions; cuda_on_hip.h):")
        for name, k, fns in no_native:
            print("  %-14s %s (%s)" % (name, k, ", ".join(fns)))
    if failed:
        print("\nprograms one side cannot compile:")
        for name, side, err in failed:
            print("  %-14s %-8s %s" % (name, side, err))
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
