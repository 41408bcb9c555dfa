#!/usr/bin/env python3
"""tests/codegen/check_notes.py: structural test of the code objects.

Compiles the tests/cuda programs' PTX (built by nvcc into PTX_DIR) for
gfx90a, gfx942, gfx950, gfx1100 and gfx1201 with `ptxwave compile`, and
reads each code object's AMDGPU metadata with `llvm-readelf-22 --notes`.
For every kernel it checks, against values computed here from the PTX text
alone (not from ptxwave's parser or codegen):

  - the kernel and its descriptor are present (.name, .symbol = NAME.kd);
  - the explicit kernel arguments have CUDA's layout: one by_value argument
    per .param, at the offset and with the size of CUDA's parameter buffer
    (each .param aligned to its .align or natural alignment), and the
    kernarg segment is at least that buffer;
  - .wavefront_size is 64 on CDNA (gfx9) and 32 on RDNA (gfx10+);
  - .group_segment_fixed_size (static LDS) lies between the sum of the
    sizes of the .shared variables the kernel's body names (and lower/'s
    barrier state where the body has bar.red, bar.arrive or a barrier with
    a thread count: docs/lowering.md "Barriers") and that sum plus their
    alignment padding (LLVM may order them to save padding).

Every program compiles through lower/ (shfl, vote, bar.red ... become wave
operations for the target's wave size) and is checked; programs in
EXPECTED_FAIL, and FileCheck files whose RUN line expects failure
(`RUN: not %ptxwave`, other than of `emulate`), must fail with a diagnostic (not a crash) or leave
the failing kernels out of the code object with a warning each; when one of
them starts compiling, the test fails until the list is updated.
Usage: check_notes.py PATH...   (directories of .ptx files, or .ptx files;
exit 77: skipped, no PTX or no readelf)
"""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

TARGETS = {"gfx90a": 64, "gfx942": 64, "gfx950": 64, "gfx1100": 32, "gfx1201": 32}
# Each with the reason; all are tracked in docs/codegen.md "Unsupported".
EXPECTED_FAIL = {
    # grid.sync() reads the cooperative grid's workspace from %envreg1/2:
    # no grid barrier for AMD yet (docs/runtime.md "Cooperative launch")
    "coop_grid": "grid.sync: %envreg1/2 has no AMD lowering; the kernel is left out",
    # -rdc=true files: each calls what another file (or libcudadevrt)
    # defines, linked at load (docs/runtime.md "Relocatable device code")
    "rdc_link": "relocatable: calls __device__ functions of parts/rdc_link_b.cu",
    "dynpar": "relocatable: calls libcudadevrt's __cudaCDP2* (device-side launches)",
}

# docs/lowering.md "Barriers": bar.red, bar.arrive and barriers with a thread
# count become counters in three shared u32 arrays lower/ adds (16-aligned),
# each sized for what the module uses: a count and a generation per named
# barrier id 0..n-1 (n = 1 + the largest id, 16 if an id is a register;
# counted barriers and counted bar.red), one accumulator for bar.red
# without a count, one per id for bar.red with one.  A kernel holds those
# of the kinds it reaches (in its body or a function it calls).
BAR_INSN = re.compile(r"\b(bar|barrier)((?:\.[a-z0-9_:]+)*)\s+([^;]*);")


def barriers(text):
    """[(counted, is_red, id or None)] of the bar/barrier instructions that
    use the array (not bar.sync/barrier.sync without a count)."""
    out = []
    for m in BAR_INSN.finditer(text):
        mods, ops = m.group(2), [o.strip() for o in m.group(3).split(",")]
        if ".cluster" in mods or ".warp" in mods:
            continue
        red = ".red" in mods
        if red:
            counted, ident = len(ops) == 4, ops[1]
        else:
            counted, ident = len(ops) == 2, ops[0]
            if not counted and ".arrive" not in mods:
                continue
        out.append((counted, red, int(ident) if re.fullmatch(r"\d+", ident) else None))
    return out


def bar_ids(text):
    """n of the module: 1 + the largest named barrier id (16 for a register)."""
    named = [b for b in barriers(text) if b[0]]
    return max(((b[2] + 1) if b[2] is not None and b[2] < 16 else 16) for b in named) if named else 0


def bar_kinds(body, n):
    """[(array, (bytes, align))] of the arrays a body's own barriers use."""
    bs = barriers(body)
    out = []
    if any(c for c, _, _ in bs):
        out.append(("named", (8 * n, 16)))
    if any(r and not c for c, r, _ in bs):
        out.append(("red", (4, 16)))                 # bar.red without a count: one word
    if any(r and c for c, r, _ in bs):
        out.append(("red_id", (4 * n, 16)))          # bar.red with a count: one word per id
    return out


def funcs(text):
    """name -> body of every .func"""
    out = {}
    for m in re.finditer(r"\.func\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(", text):
        j = text.find("{", m.end())
        semi = text.find(";", m.end())
        if j < 0 or (0 <= semi < j):
            continue  # a declaration
        depth, k = 1, j + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        out[m.group(1)] = text[j:k]
    return out


def reached_bodies(body, fns, seen=None):
    """The body and those of the functions it calls (by name, any depth)."""
    seen = seen if seen is not None else set()
    out = [body]
    for name, fbody in fns.items():
        if name not in seen and re.search(r"\bcall(?:\.uni)?\b[^;]*?(?<![\w$])" + re.escape(name) + r"(?![\w$])", body):
            seen.add(name)
            out += reached_bodies(fbody, fns, seen)
    return out

SIZES = {"b8": 1, "u8": 1, "s8": 1, "b16": 2, "u16": 2, "s16": 2, "f16": 2, "bf16": 2,
         "b32": 4, "u32": 4, "s32": 4, "f32": 4, "b64": 8, "u64": 8, "s64": 8, "f64": 8,
         "f16x2": 4, "bf16x2": 4, "b128": 16}

PARAM = re.compile(r"\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(?:\.ptr\s+[.\w\s]*?)?([\w$]+)(?:\[(\d+)\])?")
SHARED = re.compile(r"\.shared\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+([\w$]+)((?:\[\d*\])*)\s*;")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def kernels(text):
    """Each .entry: name, [(offset, size)] of CUDA's parameter buffer, body."""
    out = []
    for m in re.finditer(r"\.entry\s+([\w$]+)\s*\(", text):
        depth, i = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        params, off = [], 0
        for p in PARAM.finditer(text[m.end():i - 1]):
            align, ty, _, count = p.groups()
            size = SIZES[ty] * (int(count) if count else 1)
            a = int(align) if align else SIZES[ty]
            off = (off + a - 1) // a * a
            params.append((off, size))
            off += size
        j = text.index("{", i)
        depth, k = 1, j + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            k += 1
        out.append((m.group(1), params, text[j:k]))
    return out


def shared_vars(text):
    """name -> (size, align) of every static .shared variable."""
    out = {}
    for m in SHARED.finditer(text):
        align, ty, name, dims = m.groups()
        if "[]" in dims:
            continue  # extern (dynamic) shared: not in the static size
        n = 1
        for d in re.findall(r"\[(\d+)\]", dims):
            n *= int(d)
        out[name] = (SIZES.get(ty, 4) * n, int(align) if align else SIZES.get(ty, 4))
    return out


def names_var(body, v):
    """The body uses shared variable v: in an address, or through a register
    it moves the address into that is read again (a dead `mov %r, v` is
    dropped, and the variable with it)."""
    ref = r"(?<![\w$])" + re.escape(v) + r"(?![\w$])"
    for m in re.finditer(ref, body):
        line_start = body.rfind("\n", 0, m.start()) + 1
        line = body[line_start:body.find("\n", m.end())]
        if line.lstrip().startswith("."):
            continue  # its declaration (a kernel-scope .shared)
        d = re.match(r"\s*(?:mov|cvta)[.\w]*\s+(%[\w$]+)\s*,\s*" + ref, line)
        if not d:
            return True
        if len(re.findall(re.escape(d.group(1)) + r"(?![\w$])", body)) > 1:
            return True
    return False


def expects_failure(ptx):
    """In EXPECTED_FAIL, or a FileCheck test of a diagnostic."""
    name = os.path.basename(ptx)[:-4]
    # a launch the emulator refuses (`not %ptxwave emulate`) says nothing
    # about compiling
    return name in EXPECTED_FAIL or re.search(r"RUN:\s*not\s+%ptxwave\s+(?!emulate\b)", open(ptx).read()) is not None


def check(ptxwave, readelf, ptx, target, tmp):
    name = os.path.basename(ptx)[:-4]
    text = strip_comments(open(ptx).read())
    out = os.path.join(tmp, f"{name}.{target}.hsaco")
    r = subprocess.run([ptxwave, "compile", ptx, "--arch", target, "-o", out],
                       capture_output=True, text=True)
    if expects_failure(ptx):
        # a kernel that reaches what cannot be compiled is left out of the
        # code object, with a warning (docs/codegen.md "Per-kernel failure")
        left_out = r.returncode == 0 and "is left out of the code object" in r.stderr
        if r.returncode == 0 and not left_out:
            why = EXPECTED_FAIL.get(name, "its RUN line expects an error")
            return [f"{name} {target}: compiles now; update the test ({why})"], 0
        if not left_out and (r.returncode != 1 or "error:" not in r.stderr):
            return [f"{name} {target}: expected a diagnostic, got status {r.returncode}:\n{r.stderr[-2000:]}"], 0
        return [], 0
    if r.returncode != 0:
        return [f"{name} {target}: compile failed ({r.returncode}):\n{r.stderr[-3000:]}"], 0
    notes = subprocess.run([readelf, "--notes", out], capture_output=True, text=True, check=True).stdout
    doc = notes[notes.index("---"):notes.index("...", notes.index("---")) + 3]
    meta = yaml.safe_load(doc)
    got = {k[".name"]: k for k in meta["amdhsa.kernels"]}
    errs = []
    shared = shared_vars(text)
    nids = bar_ids(text)
    fns = funcs(text)
    entries = kernels(text)
    for kname, params, body in entries:
        k = got.get(kname)
        if not k:
            errs.append(f"{name} {target}: kernel {kname} missing from the metadata")
            continue
        if k[".symbol"] != kname + ".kd":
            errs.append(f"{name} {target}: {kname}: symbol {k['.symbol']}")
        args = [(a[".offset"], a[".size"]) for a in k.get(".args", []) if a[".value_kind"] == "by_value"]
        if args != params:
            errs.append(f"{name} {target}: {kname}: kernel arguments {args}, CUDA's layout is {params}")
        cuda_size = params[-1][0] + params[-1][1] if params else 0
        if k[".kernarg_segment_size"] < cuda_size:
            errs.append(f"{name} {target}: {kname}: kernarg segment {k['.kernarg_segment_size']} < {cuda_size}")
        if k[".wavefront_size"] != TARGETS[target]:
            errs.append(f"{name} {target}: {kname}: wave size {k['.wavefront_size']}")
        used = [shared[v] for v in shared if names_var(body, v)]
        used += list({kind: a for b in reached_bodies(body, fns) for kind, a in bar_kinds(b, nids)}.values())
        lo = sum(s for s, _ in used)
        hi = lo + sum(a - 1 for _, a in used)
        lds = k[".group_segment_fixed_size"]
        if not lo <= lds <= hi:
            errs.append(f"{name} {target}: {kname}: static LDS {lds}, expected {lo}..{hi}")
    return errs, len(entries)


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    ptxwave = os.environ.get("PTXWAVE", "build/tools/ptxwave")
    readelf = shutil.which("llvm-readelf-22")
    ptxs = []
    for a in sys.argv[1:]:
        if os.path.isdir(a):
            ptxs += sorted(os.path.join(a, f) for f in os.listdir(a) if f.endswith(".ptx"))
        elif a.endswith(".ptx") and os.path.exists(a):
            ptxs.append(a)
    # a FileCheck file that only runs another file (RUN lines, no module)
    ptxs = [p for p in ptxs if re.search(r"^\s*\.version\b", open(p).read(), re.M)]
    if not ptxs or not readelf:
        print("no PTX (nvcc missing?) or no llvm-readelf-22: skipped")
        return 77
    jobs, errs, nkernels = [], [], 0
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(2) as pool:
        for p in ptxs:
            for t in TARGETS:
                jobs.append(pool.submit(check, ptxwave, readelf, p, t, tmp))
        for j in jobs:
            e, n = j.result()
            errs += e
            nkernels += n
    ncompiled = len(ptxs) - len([p for p in ptxs if expects_failure(p)])
    for e in errs:
        print("FAIL:", e)
    print(f"{len(ptxs)} modules x {len(TARGETS)} targets: {ncompiled * len(TARGETS)} "
          f"compiled, {nkernels} kernels checked, {len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
