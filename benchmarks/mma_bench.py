#!/usr/bin/env python3
"""benchmarks/mma_bench.py: mma.sync on AMD's matrix instructions
(lower/lower_mma_amd.c) against the per-thread expansion (lower_mma.c,
`--expand-mma`) on the same kernel and target (issue 21).

    python3 benchmarks/mma_bench.py [--ptxwave build/tools/ptxwave] [--arch gfx942,...] [--tiles 8]

The kernel (generated here): every thread loads its fragments of TILES
independent m16n8k16 tiles (A, B, C from global memory, so nothing is shared
between tiles) and chains them: D_t = A_t * B_t + D_{t-1}, then stores D.
It is compiled with 1 and with TILES tiles, both ways, through `ptxwave
compile --emit hsaco`; per tile = (TILES-tile kernel - 1-tile kernel) /
(TILES - 1), so the loads and stores around the tiles cancel.  Measured as
benchmarks/quality_bench.py measures a kernel: instructions of the kernel's
symbol (llvm-objdump-22), VGPRs (the code object's notes; on gfx90a+ they
include the AGPRs), and llvm-mca-22's total cycles for one pass over the
instructions (-iterations=1: a static estimate that treats the code as
straight-line; it knows the MFMA/WMMA latencies of LLVM's scheduling
model).  f16 and bf16 (m16n8k16) and e4m3 (m16n8k32: the same four A and
two B registers, its bytes widened to f16 in their own thread and run as two
f16 m16n8k16 steps; --types), the integer m16n8k32 .s32 forms (--types s8,
u8, or A.B such as u8.s8: the i8 MFMA, RDNA's iu8 WMMA with its sign
flags), and Volta's m8n8k4 .f16 (--types
m8n8k4.AL.BL.DT.CT, e.g. m8n8k4.col.row.f32.f32, cuBLAS's form:
lower/lower_mma_volta.c; a tile is one m8n8k4, D chained into C), and
m8n8k4 .f64 (--types f64: lower/lower_mma_f64.c, a tile one m8n8k4 with D
chained into C; the MFMA side is measured on the path a full wave64 takes,
the other side of its EXEC branch, the expansion, left out of instructions
and cycles (not of the VGPRs)).  Nothing is asserted: this is a measurement.
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality_bench import kernel_code, kernel_notes, mca_cycles, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


INT8 = ("s8", "u8")


def kernel(tiles, t):
    """PTX of kernel k: `tiles` chained mma.m16n8k16.f32.T.T.f32 (fp8: m16n8k32); the integer
    types m16n8k32.s32.A.B.s32 (t "s8", "u8", or "A.B" for a mix such as "u8.s8")."""
    ta, tb = t.split(".") if "." in t else (t, t)
    integer = ta in INT8
    shape = "m16n8k32" if t in ("e4m3", "e5m2") or integer else "m16n8k16"
    dt, ld = ("s32", "u32") if integer else ("f32", "f32")
    body = []
    body.append("  ld.param.u64 %rd1, [p];")
    body.append("  mov.u32 %r1, %tid.x;")
    body.append("  mul.wide.u32 %rd2, %r1, 16;")
    body.append("  add.u64 %rd3, %rd1, %rd2;")
    body.append(f"  ld.global.v4.{ld} {{%f0, %f1, %f2, %f3}}, [%rd3];")
    for i in range(tiles):
        off = 4096 * (i + 1)
        a = [10 + 8 * i + k for k in range(6)]
        body.append(f"  ld.global.v4.u32 {{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, [%rd3+{off}];")
        body.append(f"  ld.global.v2.u32 {{%r{a[4]}, %r{a[5]}}}, [%rd3+{off + 2048}];")
        body.append(f"  mma.sync.aligned.{shape}.row.col.{dt}.{ta}.{tb}.{dt} {{%f0, %f1, %f2, %f3}}, "
                    f"{{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, {{%r{a[4]}, %r{a[5]}}}, {{%f0, %f1, %f2, %f3}};")
    body.append(f"  st.global.v4.{ld} [%rd3], {{%f0, %f1, %f2, %f3}};")
    body.append("  ret;")
    return (".version 8.7\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f"  .reg .b32 %r<{10 + 8 * tiles}>;\n  .reg .{'b32' if integer else 'f32'} %f<4>;\n  .reg .b64 %rd<4>;\n"
            + "\n".join(body) + "\n}\n")


def kernel_volta(tiles, t):
    """PTX of kernel k: `tiles` chained Volta mma.m8n8k4.AL.BL.DT.f16.f16.CT (t = "m8n8k4.AL.BL.DT.CT",
    lower/lower_mma_volta.c; CT = DT so that D feeds the next C)."""
    _, al, bl, dt, ct = t.split(".")
    nd = 8 if dt == "f32" else 4
    acc = [f"%f{k}" for k in range(8)] if dt == "f32" else [f"%r{k}" for k in range(4)]
    body = ["  ld.param.u64 %rd1, [p];", "  mov.u32 %r100, %tid.x;", "  mul.wide.u32 %rd2, %r100, 32;",
            "  add.u64 %rd3, %rd1, %rd2;"]
    ty = "f32" if dt == "f32" else "u32"
    body.append(f"  ld.global.v4.{ty} {{{', '.join(acc[:4])}}}, [%rd3];")
    if nd == 8:
        body.append(f"  ld.global.v4.{ty} {{{', '.join(acc[4:])}}}, [%rd3+16];")
    for i in range(tiles):
        off = 4096 * (i + 1)
        a = [10 + 4 * i + k for k in range(4)]
        body.append(f"  ld.global.v4.u32 {{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, [%rd3+{off}];")
        body.append(f"  mma.sync.aligned.m8n8k4.{al}.{bl}.{dt}.f16.f16.{ct} {{{', '.join(acc)}}}, "
                    f"{{%r{a[0]}, %r{a[1]}}}, {{%r{a[2]}, %r{a[3]}}}, {{{', '.join(acc)}}};")
    body.append(f"  st.global.v4.{ty} [%rd3], {{{', '.join(acc[:4])}}};")
    if nd == 8:
        body.append(f"  st.global.v4.{ty} [%rd3+16], {{{', '.join(acc[4:])}}};")
    body.append("  ret;")
    return (".version 8.5\n.target sm_70\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f"  .reg .b32 %r<{110 + 4 * tiles}>;\n  .reg .f32 %f<8>;\n  .reg .b64 %rd<4>;\n"
            + "\n".join(body) + "\n}\n")


def kernel_f64(tiles):
    """PTX of kernel k: `tiles` chained mma.m8n8k4.row.col.f64 (lower/lower_mma_f64.c), D into C."""
    body = ["  ld.param.u64 %rd1, [p];", "  mov.u32 %r1, %tid.x;", "  mul.wide.u32 %rd2, %r1, 16;",
            "  add.u64 %rd3, %rd1, %rd2;", "  ld.global.v2.f64 {%fd0, %fd1}, [%rd3];"]
    for i in range(tiles):
        off = 4096 * (i + 1)
        a, b = 10 + 2 * i, 11 + 2 * i
        body.append(f"  ld.global.v2.f64 {{%fd{a}, %fd{b}}}, [%rd3+{off}];")
        body.append(f"  mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{%fd0, %fd1}}, {{%fd{a}}}, {{%fd{b}}}, {{%fd0, %fd1}};")
    body.append("  st.global.v2.f64 [%rd3], {%fd0, %fd1};")
    body.append("  ret;")
    return (".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f"  .reg .b32 %r<4>;\n  .reg .f64 %fd<{10 + 2 * tiles}>;\n  .reg .b64 %rd<4>;\n"
            + "\n".join(body) + "\n}\n")


def fast_path(asm):
    """The instructions of kernel k's assembly (ptxwave --emit asm) that a full wave64 runs: every
    basic block but those of the expansion (blocks with v_fma(c)_f64 and no v_mfma: the other side
    of lower_mma_f64's branch), so that llvm-mca, which reads straight-line code, sees one path."""
    blocks, cur, inside = [], [], False
    for line in asm.splitlines():
        if line.startswith("k:"):
            inside = True
            continue
        if not inside:
            continue
        if line.startswith(".Lfunc_end") or line.strip().startswith(".section"):
            break
        if re.match(r"^\.?[A-Za-z0-9_.$]+:", line):
            blocks.append(cur)
            cur = []
            continue
        ins = line.split(";")[0].strip()
        if ins and not ins.startswith("."):
            cur.append(ins)
    blocks.append(cur)
    slow = lambda b: any(i.startswith(("v_fma_f64", "v_fmac_f64")) for i in b) and not any(i.startswith("v_mfma") for i in b)
    return [i for b in blocks if not slow(b) for i in b]


def measure(ptxwave, arch, tiles, t, expand, tmp, mca=True):
    ptx = os.path.join(tmp, f"k{tiles}_{t}.ptx")
    with open(ptx, "w") as f:
        f.write(kernel_f64(tiles) if t == "f64" else kernel_volta(tiles, t) if t.startswith("m8n8k4") else kernel(tiles, t))
    out = os.path.join(tmp, f"k{tiles}_{t}_{arch}_{int(expand)}.hsaco")
    cmd = [ptxwave, "compile", ptx, "--arch", arch, "--emit", "hsaco", "-o", out] + (["--expand-mma"] if expand else [])
    r = run(cmd)
    if r.returncode:
        return None, r.stderr.strip()[:200]
    code, notes = kernel_code(out), kernel_notes(out)
    insts = code.get("k", [])
    if t == "f64" and not expand:   # the full-wave path only (the code object holds both sides)
        r = run([ptxwave, "compile", ptx, "--arch", arch, "--emit", "asm", "-o", "-"])
        insts = fast_path(r.stdout)
    mm = sum(1 for i in insts if i.startswith(("v_mfma", "v_wmma")))
    bp = sum(1 for i in insts if i.startswith("ds_bpermute"))
    return {"insts": len(insts), "vgpr": notes.get("k", {}).get("vgpr"), "cycles": mca_cycles(insts, arch, tmp) if mca else 0.0,
            "matrix": mm, "bpermute": bp}, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxwave", default=os.path.join(ROOT, "build", "tools", "ptxwave"))
    ap.add_argument("--arch", default="gfx90a,gfx942,gfx950,gfx1100,gfx1201")
    ap.add_argument("--tiles", type=int, default=8)
    ap.add_argument("--types", default="f16,bf16,e4m3")
    ap.add_argument("--no-mca", action="store_true", help="skip llvm-mca (cycles 0): it can take minutes on a loaded machine")
    a = ap.parse_args()
    n = a.tiles
    print(f"per tile (m16n8k16; fp8 m16n8k32) ({n}-tile kernel minus 1-tile kernel, / {n - 1}); "
          f"MFMA/WMMA path vs --expand-mma; VGPR of the whole {n}-tile kernel")
    print(f"{'arch':8} {'type':5} | {'insts':>7} {'exp':>7} {'ratio':>6} | {'mca cyc':>8} {'exp':>8} {'ratio':>6} |"
          f" {'mfma/wmma':>9} {'bperm':>6} {'exp bperm':>9} | {'VGPR':>5} {'exp':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        for arch in a.arch.split(","):
            for t in a.types.split(","):
                res = {}
                for expand in (False, True):
                    one, e1 = measure(a.ptxwave, arch, 1, t, expand, tmp, not a.no_mca)
                    many, e2 = measure(a.ptxwave, arch, n, t, expand, tmp, not a.no_mca)
                    if not one or not many:
                        print(f"{arch:8} {t:5} | failed: {e1 or e2}")
                        break
                    res[expand] = {k: (many[k] - one[k]) / (n - 1) for k in ("insts", "cycles", "matrix", "bpermute")}
                    res[expand]["vgpr"] = many["vgpr"]
                if len(res) < 2:
                    continue
                m, x = res[False], res[True]
                print(f"{arch:8} {t:5} | {m['insts']:7.1f} {x['insts']:7.1f} {m['insts'] / x['insts']:6.2f} |"
                      f" {m['cycles']:8.1f} {x['cycles']:8.1f} {m['cycles'] / x['cycles'] if x['cycles'] else 0:6.2f} |"
                      f" {m['matrix']:9.1f} {m['bpermute']:6.1f} {x['bpermute']:9.1f} | {m['vgpr']:5} {x['vgpr']:5}")


if __name__ == "__main__":
    main()
