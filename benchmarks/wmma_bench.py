#!/usr/bin/env python3
"""benchmarks/wmma_bench.py: wmma fragments kept in the layout of AMD's matrix
instruction (lower/lower_wmma.c, lower_wmma_web.c) against ptxwave's own
layout (the mma.sync tiles that lower_mma_amd shuffles into AMD's layout and
back on every wmma.mma), on the same kernel and target (issue 21).

    python3 benchmarks/wmma_bench.py --before OLD_PTXWAVE [--ptxwave build/tools/ptxwave]
                                     [--arch gfx1100,gfx1201] [--tiles 8] [--types f16,f16acc,bf16]

OLD_PTXWAVE is a ptxwave built without the AMD layout (the main branch
before it, or any build of it: the comparison is of two compilers on one
kernel).  The kernel (generated here) is a GEMM's inner loop unrolled
TILES times: per step, wmma.load.a (.row) and wmma.load.b (.col) of
m16n16k16 from global memory and one wmma.mma into the accumulator, which
starts from fill_fragment's zero and is stored once by wmma.store.d.  It
is compiled with 1 and with TILES steps; per step = (TILES-step kernel -
1-step kernel) / (TILES - 1), so the store and the address setup cancel.
Measured as mma_bench.py measures (quality_bench's method): instructions
of the kernel's symbol, VGPRs of the whole TILES-step kernel, llvm-mca-22
cycles for one pass (-iterations=1), v_wmma/v_mfma and ds_bpermute per
step.  Types: f16 (f32 accumulators), f16acc (f16 accumulators), bf16.
Nothing is asserted: this is a measurement.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality_bench import kernel_code, kernel_notes, mca_cycles, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def kernel(tiles, t):
    ab = "bf16" if t == "bf16" else "f16"
    acc = "f16" if t == "f16acc" else "f32"
    nc = 4 if acc == "f16" else 8
    na = 4 if ab == "bf16" else 8
    c = [f"%c{i}" for i in range(nc)]
    body = ["  ld.param.u64 %rd1, [p];", "  cvta.to.global.u64 %rd1, %rd1;"]
    zero = "0" if acc == "f16" else "0f00000000"
    body += [f"  mov.b32 {r}, {zero};" for r in c]
    for i in range(tiles):
        a = [f"%a{i}_{k}" for k in range(na)]
        b = [f"%b{i}_{k}" for k in range(na)]
        body.append(f"  wmma.load.a.sync.aligned.row.m16n16k16.global.{ab} {{{', '.join(a)}}}, [%rd1+{1024 * i}], 256;")
        body.append(f"  wmma.load.b.sync.aligned.col.m16n16k16.global.{ab} {{{', '.join(b)}}}, [%rd1+{65536 + 1024 * i}], 256;")
        types = f"{acc}.{acc}" if ab == "f16" else f"{acc}.bf16.bf16.{acc}"
        body.append(f"  wmma.mma.sync.aligned.row.col.m16n16k16.{types} {{{', '.join(c)}}}, {{{', '.join(a)}}}, "
                    f"{{{', '.join(b)}}}, {{{', '.join(c)}}};")
    body.append(f"  wmma.store.d.sync.aligned.row.m16n16k16.global.{acc} [%rd1+131072], {{{', '.join(c)}}}, 16;")
    body.append("  ret;")
    decl = "".join(f"  .reg .b32 %a{i}_<{na}>;\n  .reg .b32 %b{i}_<{na}>;\n" for i in range(tiles))
    creg = ".b32" if acc == "f16" else ".f32"
    return (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f"{decl}  .reg {creg} %c<{nc}>;\n  .reg .b64 %rd<4>;\n" + "\n".join(body) + "\n}\n")


def measure(ptxwave, arch, tiles, t, tag, tmp, mca=True):
    ptx = os.path.join(tmp, f"k{tiles}_{t}.ptx")
    with open(ptx, "w") as f:
        f.write(kernel(tiles, t))
    out = os.path.join(tmp, f"k{tiles}_{t}_{arch}_{tag}.hsaco")
    r = run([ptxwave, "compile", ptx, "--arch", arch, "--emit", "hsaco", "-o", out])
    if r.returncode:
        return None, r.stderr.strip()[:200]
    code, notes = kernel_code(out), kernel_notes(out)
    insts = code.get("k", [])
    mm = sum(1 for i in insts if i.startswith(("v_mfma", "v_wmma")))
    bp = sum(1 for i in insts if i.startswith("ds_bpermute"))
    return {"insts": len(insts), "vgpr": notes.get("k", {}).get("vgpr"),
            "cycles": mca_cycles(insts, arch, tmp) if mca else 0.0, "matrix": mm, "bpermute": bp}, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxwave", default=os.path.join(ROOT, "build", "tools", "ptxwave"))
    ap.add_argument("--before", required=True, help="a ptxwave without the AMD fragment layout")
    ap.add_argument("--arch", default="gfx1100,gfx1201")
    ap.add_argument("--tiles", type=int, default=8)
    ap.add_argument("--types", default="f16,f16acc,bf16")
    ap.add_argument("--no-mca", action="store_true", help="skip llvm-mca (cycles 0)")
    a = ap.parse_args()
    n = a.tiles
    print(f"per step (m16n16k16: 2 wmma.load + 1 wmma.mma) ({n}-step kernel minus 1-step kernel, / {n - 1}); "
          f"AMD fragment layout vs before; VGPR of the whole {n}-step kernel")
    print(f"{'arch':8} {'type':6} | {'insts':>7} {'before':>7} {'ratio':>6} | {'mca cyc':>8} {'before':>8} {'ratio':>6} |"
          f" {'matrix':>6} {'before':>6} | {'bperm':>5} {'before':>6} | {'VGPR':>5} {'before':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in a.arch.split(","):
            for t in a.types.split(","):
                res = {}
                for tag, exe in (("after", a.ptxwave), ("before", a.before)):
                    one, e1 = measure(exe, arch, 1, t, tag, tmp, not a.no_mca)
                    many, e2 = measure(exe, arch, n, t, tag, tmp, not a.no_mca)
                    if not one or not many:
                        print(f"{arch:8} {t:6} | {tag} failed: {e1 or e2}")
                        break
                    res[tag] = {k: (many[k] - one[k]) / (n - 1) for k in ("insts", "cycles", "matrix", "bpermute")}
                    res[tag]["vgpr"] = many["vgpr"]
                if len(res) < 2:
                    continue
                m, x = res["after"], res["before"]
                print(f"{arch:8} {t:6} | {m['insts']:7.1f} {x['insts']:7.1f} {m['insts'] / x['insts']:6.2f} |"
                      f" {m['cycles']:8.1f} {x['cycles']:8.1f} {m['cycles'] / x['cycles'] if x['cycles'] else 0:6.2f} |"
                      f" {m['matrix']:6.1f} {x['matrix']:6.1f} | {m['bpermute']:5.1f} {x['bpermute']:6.1f} |"
                      f" {m['vgpr']:5} {x['vgpr']:6}")


if __name__ == "__main__":
    main()
