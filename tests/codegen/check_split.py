#!/usr/bin/env python3
"""tests/codegen/check_split.py: a module compiled in partitions on several
threads (cg_options.threads, `ptxwave compile -j N`) gives the same code
object interface as compiled on one thread (docs/codegen.md "Parallel
compile of one module").

For every tests/cuda PTX module with two kernels or more, for gfx942
(wave64) and gfx1100 (wave32): `ptxwave compile -j 1` and `-j 3 --time`,
then with llvm-readelf-22 (not ptxwave's code):
  - the split compile really split (--time reports more than 1 partition),
    unless the module takes a function's address (then it must not split);
  - each code object has exactly one NT_AMDGPU_METADATA note;
  - the same kernels, each with the same metadata (arguments, kernarg size,
    LDS, scratch, registers, wave size ...), and the same other keys
    (amdhsa.target, amdhsa.version);
  - the same dynamic symbols (what the loader and cuModuleGetGlobal see).
The reference is the unsplit compile, which the codegen-notes test checks
against the PTX text.
Usage: check_split.py PTX_DIR   (exit 77: skipped, no PTX or no readelf)
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

TARGETS = ["gfx942", "gfx1100"]
# programs that do not compile alone (check_notes.py EXPECTED_FAIL)
SKIP = {"coop_grid", "rdc_link", "dynpar"}


def notes(readelf, path):
    text = subprocess.run([readelf, "--notes", path], capture_output=True, text=True, check=True).stdout
    n = text.count("NT_AMDGPU_METADATA")
    start = text.index("---")
    meta = yaml.safe_load(text[start:text.index("...", start) + 3])
    kernels = {k[".name"]: k for k in meta.pop("amdhsa.kernels")}
    return n, kernels, meta


def dynsyms(readelf, path):
    text = subprocess.run([readelf, "--dyn-syms", "--wide", path], capture_output=True, text=True,
                          check=True).stdout
    rows = [l.split() for l in text.splitlines() if re.match(r"^\s*\d+:", l)]
    return sorted((r[7] if len(r) > 7 else "", r[3], r[4], r[5]) for r in rows)


def check(ptxwave, readelf, ptx, target, tmp):
    name = os.path.basename(ptx)[:-4]
    errs = []
    outs = []
    for j in (1, 3):
        out = os.path.join(tmp, f"{name}.{target}.j{j}.hsaco")
        r = subprocess.run([ptxwave, "compile", ptx, "--arch", target, "-o", out, "-j", str(j), "--time"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            return [f"{name} {target} -j {j}: compile failed: {r.stderr.strip()[:300]}"]
        m = re.search(r"(\d+) partitions", r.stderr)
        outs.append((out, int(m.group(1)) if m else -1))
    (one, p1), (split, p3) = outs
    text = open(ptx).read()
    # a function's address taken: .func symbol used as an operand of mov/cvta
    # or in an initializer (a prototype call through a register)
    funcs = re.findall(r"\.func\s+(?:\([^)]*\)\s*)?([\w$]+)", text)
    taken = any(re.search(r"(?:mov|cvta)\.[\w.]+\s+[^;]*\b%s\b" % re.escape(f), text) or
                re.search(r"=\s*\{[^}]*\b%s\b" % re.escape(f), text) for f in funcs)
    if p1 != 1:
        errs.append(f"{name} {target}: -j 1 compiled {p1} partitions")
    if taken and p3 != 1:
        errs.append(f"{name} {target}: a function's address is taken, yet -j 3 split into {p3}")
    if not taken and p3 < 2:
        errs.append(f"{name} {target}: -j 3 did not split ({p3} partitions)")
    n1, k1, m1 = notes(readelf, one)
    n3, k3, m3 = notes(readelf, split)
    if n1 != 1 or n3 != 1:
        errs.append(f"{name} {target}: metadata notes: {n1} unsplit, {n3} split (want 1)")
    if sorted(k1) != sorted(k3):
        errs.append(f"{name} {target}: kernels differ: {sorted(k1)} vs {sorted(k3)}")
    for k in k1:
        if k in k3 and k1[k] != k3[k]:
            diff = {key: (k1[k].get(key), k3[k].get(key)) for key in set(k1[k]) | set(k3[k])
                    if k1[k].get(key) != k3[k].get(key)}
            errs.append(f"{name} {target}: {k}: metadata differs: {diff}")
    if m1 != m3:
        errs.append(f"{name} {target}: module metadata differs: {m1} vs {m3}")
    if dynsyms(readelf, one) != dynsyms(readelf, split):
        errs.append(f"{name} {target}: dynamic symbols differ")
    return errs


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    ptxwave = os.environ.get("PTXWAVE", "build/tools/ptxwave")
    readelf = shutil.which("llvm-readelf-22")
    ptxs = sorted(os.path.join(sys.argv[1], f) for f in os.listdir(sys.argv[1]) if f.endswith(".ptx")) \
        if os.path.isdir(sys.argv[1]) else []
    ptxs = [p for p in ptxs if os.path.basename(p)[:-4] not in SKIP and
            len(re.findall(r"\.entry\s", open(p).read())) >= 2]
    if not ptxs or not readelf:
        print("no multi-kernel PTX (nvcc missing?) or no llvm-readelf-22: skipped")
        return 77
    errs = []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        jobs = [pool.submit(check, ptxwave, readelf, p, t, tmp) for p in ptxs for t in TARGETS]
        for j in jobs:
            errs += j.result()
    for e in errs:
        print("FAIL:", e)
    print(f"{len(ptxs)} multi-kernel modules x {len(TARGETS)} targets: split and unsplit compared, "
          f"{len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
