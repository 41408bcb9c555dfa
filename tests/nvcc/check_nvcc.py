#!/usr/bin/env python3
"""tests/nvcc/check_nvcc.py: programs built by nvcc, read by `ptxwave inspect`
and `ptxwave extract`.

Builds tests/nvcc/kernels.cu with /usr/local/cuda/bin/nvcc at test time, in
the ways programs ship: a default executable (static cudart), one with
`-cudart shared`, one with LZ4 PTX (`--compress-mode=speed`), one with
compressed cubins (`-Xfatbin -compress-all`), a raw fatbin (`-fatbin`), a
relocatable object (`-rdc=true`) inside an ar archive with a long member
name.  The expected values come from elsewhere:

  - section offsets, addresses and sizes: binutils' `readelf -SW`;
  - wrappers (count, version, data pointer): the raw bytes of
    .nvFatBinSegment read here, 24 bytes each (CUDA's fatbinary_section.h);
  - the cubin: `nvcc -cubin` for the same source and arch, byte for byte;
  - the PTX: `nvcc -ptx` for the same source.  nvcc's fatbinary step strips
    comments and indentation from the PTX it embeds, keeping every line
    (docs/containers.md), so both texts are compared after removing `//`
    comments and collapsing white space, line by line;
  - the ISA version and kernel names: the `.version` and `.entry` lines of
    that reference PTX;
  - archive members: `ar t`.

Exits 77 (skipped) when the CUDA toolkit is absent.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

CUDA = os.environ.get("CUDA_HOME", "/usr/local/cuda")
NVCC = os.path.join(CUDA, "bin", "nvcc")
PTXWAVE = os.environ.get("PTXWAVE")
SRC = os.path.join(os.environ.get("PTXWAVE_SOURCE_ROOT", "."), "tests", "nvcc", "kernels.cu")
GENCODE = ["-gencode", "arch=compute_80,code=[sm_80,compute_80]"]

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)
    return cond


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        print("command failed:", " ".join(cmd), "\n", r.stdout, r.stderr)
        sys.exit(1)
    return r.stdout


def inspect(path):
    r = subprocess.run([PTXWAVE, "inspect", "--json", path], capture_output=True, text=True)
    check(r.returncode == 0, f"inspect {path} exits 0 (got {r.returncode}: {r.stderr.strip()})")
    return json.loads(r.stdout)["files"][0]


def sections(path):
    """name -> (address, file offset, size) from readelf -SW."""
    out = {}
    for line in run(["readelf", "-SW", path]).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
        if m:
            out[m.group(1)] = tuple(int(m.group(i), 16) for i in (2, 3, 4))
    return out


def raw_wrappers(path, secs):
    addr, off, size = secs[".nvFatBinSegment"]
    with open(path, "rb") as f:
        f.seek(off)
        data = f.read(size)
    ws = []
    for i in range(0, size - size % 24, 24):
        magic, version, ptr, lst = struct.unpack_from("<IIQQ", data, i)
        ws.append((magic, version, ptr, off + i))
    return ws


def normalize_ptx(text):
    lines = []
    for line in text.split("\n"):
        line = line.split("//", 1)[0]
        lines.append(" ".join(line.split()))
    while lines and lines[-1] == "":
        lines.pop()
    return lines


def ptx_facts(text):
    version = re.search(r"^\s*\.version\s+(\d+\.\d+)", text, re.M).group(1)
    kernels = re.findall(r"\.entry\s+([A-Za-z0-9_$]+)", text)
    return version, kernels


def check_linked(tmp, name, flags, ptx_comp, cubin_comp, ref_cubin, ref_ptx):
    exe = os.path.join(tmp, name)
    run([NVCC] + GENCODE + flags + ["-o", exe, SRC])
    secs = sections(exe)
    j = inspect(exe)
    check(j["input"] == "ELF", f"{name}: input is ELF")
    wr = raw_wrappers(exe, secs)
    fat_addr, fat_off, fat_size = secs[".nv_fatbin"]
    # One container per wrapper, all in .nv_fatbin, tiling it.
    check(len(j["containers"]) == len(wr), f"{name}: {len(wr)} containers, one per wrapper")
    check(len(j["wrappers"]) == len(wr), f"{name}: {len(wr)} wrappers listed")
    check(sum(c["size"] for c in j["containers"]) <= fat_size, f"{name}: containers fit .nv_fatbin")
    check(j["containers"][0]["offset"] == fat_off, f"{name}: first container at .nv_fatbin's offset")
    for w, (magic, version, ptr, off) in zip(j["wrappers"], wr):
        check(magic == 0x466243B1, f"{name}: wrapper magic")
        check(w["offset"] == off and w["version"] == version and w["data"] == ptr,
              f"{name}: wrapper at {off:#x} is v{version} -> {ptr:#x}")
        c = j["containers"][w["container"]] if w["container"] is not None else None
        check(c is not None and c["section"] == ".nv_fatbin" and c["vaddr"] == ptr
              and c["offset"] == fat_off + (ptr - fat_addr),
              f"{name}: wrapper -> container at address {ptr:#x}")
    # The program's own container: an sm_80 cubin and compute_80 PTX.
    mine = [c for c in j["containers"] if any(e["kind"] == 1 for e in c["entries"])]
    check(len(mine) == 1, f"{name}: one container with PTX")
    ents = mine[0]["entries"]
    kinds = sorted((e["kind_name"], e["sm"]) for e in ents)
    check(kinds == [("cubin", "sm_80"), ("ptx", "sm_80")], f"{name}: entries {kinds}")
    version, kernels = ptx_facts(open(ref_ptx).read())
    for e in ents:
        if e["kind"] == 1:
            check(e["compression"] == ptx_comp, f"{name}: PTX is {ptx_comp} (got {e['compression']})")
            check(e["version"] == version, f"{name}: PTX ISA {version} (got {e['version']})")
            check(e["kernels"] == kernels, f"{name}: kernels {kernels} (got {e['kernels']})")
        else:
            check(e["compression"] == cubin_comp, f"{name}: cubin is {cubin_comp} (got {e['compression']})")
            check(e["uncompressed_size"] == os.path.getsize(ref_cubin),
                  f"{name}: cubin size equals nvcc -cubin's")
    # Extraction: the cubin byte for byte, the PTX modulo stripping.
    out = os.path.join(tmp, name + ".out")
    run([PTXWAVE, "extract", "-q", exe, "-o", out])
    ci = j["containers"].index(mine[0])
    for e in ents:
        path = os.path.join(out, e["name"])
        check(os.path.exists(path), f"{name}: extracted {e['name']}")
        check(e["name"].startswith(f"{name}.c{ci:04d}.e{e['index']:02d}.sm_80."), f"{name}: stable name {e['name']}")
        data = open(path, "rb").read()
        if e["kind"] == 2:
            check(data == open(ref_cubin, "rb").read(), f"{name}: extracted cubin equals nvcc -cubin")
        else:
            check(normalize_ptx(data.decode()) == normalize_ptx(open(ref_ptx).read()),
                  f"{name}: extracted PTX equals nvcc -ptx (comments and white space aside)")
            check(not data.endswith(b"\0"), f"{name}: no trailing NUL in extracted PTX")
    return exe


def main():
    if not os.path.exists(NVCC):
        print(f"skipped: no CUDA toolkit at {CUDA} (nvcc not found)")
        return 77
    if not PTXWAVE:
        print("PTXWAVE is not set")
        return 1
    if not shutil.which("readelf") or not shutil.which("ar"):
        print("skipped: binutils (readelf, ar) not installed")
        return 77
    tmp = tempfile.mkdtemp(prefix="ptxwave-nvcc-")
    try:
        ref_ptx = os.path.join(tmp, "ref.ptx")
        ref_cubin = os.path.join(tmp, "ref.cubin")
        run([NVCC, "-ptx", "-gencode", "arch=compute_80,code=compute_80", "-o", ref_ptx, SRC])
        run([NVCC, "-cubin", "-gencode", "arch=compute_80,code=sm_80", "-o", ref_cubin, SRC])

        check_linked(tmp, "app_static", [], "zstd", "stored", ref_cubin, ref_ptx)
        exe = check_linked(tmp, "app_shared", ["-cudart", "shared"], "zstd", "stored", ref_cubin, ref_ptx)
        dyn = run(["readelf", "-dW", exe])
        check("libcudart.so" in dyn, "app_shared: links libcudart.so")
        check_linked(tmp, "app_lz4", ["--compress-mode=speed"], "lz4", "stored", ref_cubin, ref_ptx)
        check_linked(tmp, "app_all", ["-Xfatbin", "-compress-all"], "zstd", "zstd", ref_cubin, ref_ptx)

        # A raw fatbin: one container covering the file.
        fb = os.path.join(tmp, "k.fatbin")
        run([NVCC, "-fatbin"] + GENCODE + ["-o", fb, SRC])
        j = inspect(fb)
        check(j["input"] == "fatbin", "fatbin: input kind")
        check(len(j["containers"]) == 1 and j["containers"][0]["offset"] == 0
              and j["containers"][0]["size"] == os.path.getsize(fb), "fatbin: one container, the whole file")

        # A relocatable object in an archive with a GNU long name.
        obj = os.path.join(tmp, "a_member_name_longer_than_sixteen_chars.o")
        run([NVCC, "-c", "-rdc=true"] + GENCODE + ["-o", obj, SRC])
        lib = os.path.join(tmp, "libkernels.a")
        run(["ar", "rcs", lib, obj])
        members = run(["ar", "t", lib]).split()
        j = inspect(lib)
        secs = sections(obj)
        check(j["input"] == "ar archive", "archive: input kind")
        check([c["member"] for c in j["containers"]] == members, f"archive: members {members}")
        c = j["containers"][0]
        check(c["section"] == "__nv_relfatbin" and c["size"] == secs["__nv_relfatbin"][2],
              "archive: container fills __nv_relfatbin")
        check(len(j["wrappers"]) == 1 and j["wrappers"][0]["container"] == 0,
              "archive: the wrapper's relocation points at the container")
        ptx = [e for e in c["entries"] if e["kind"] == 1]
        check(len(ptx) == 1 and ptx[0]["options"] == "--compile-only", "archive: rdc PTX carries --compile-only")

        # A truncated program: an error with a byte offset, exit 1, no crash.
        cut = os.path.join(tmp, "cut")
        whole = open(os.path.join(tmp, "app_static"), "rb").read()
        fat_off = sections(os.path.join(tmp, "app_static"))[".nv_fatbin"][1]
        open(cut, "wb").write(whole[: fat_off + 100])
        r = subprocess.run([PTXWAVE, "inspect", cut], capture_output=True, text=True)
        check(r.returncode == 1, f"truncated: exit 1 (got {r.returncode})")
        check("at byte offset 0x" in r.stderr and "error:" in r.stderr, f"truncated: message with offset: {r.stderr.strip()[:200]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if failures:
        print(f"{len(failures)} checks failed")
        return 1
    print("all nvcc checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
