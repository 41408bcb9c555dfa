#!/usr/bin/env python3
"""benchmarks/mma_native_bench.py: ptxwave's tensor-core code against the same
tile written natively in HIP with __builtin_amdgcn_mfma_* / _wmma_* (issue 21,
"Generated code against native").

    python3 benchmarks/mma_native_bench.py [--ptxwave build/tools/ptxwave]
        [--arch gfx942,gfx1100] [--types f16,bf16,tf32,s8,e4m3,f16-ldm,bf16-ldm,tf32-ldm,e4m3-ldm] [--tiles 8] [--no-mca]
        [--keep DIR]

Three kernels per (target, type), each with 1 and TILES chained tiles, per
tile = (TILES-tile kernel - 1-tile kernel) / (TILES - 1) so that the
accumulator's load and store around the tiles cancel (mma_bench.py's method):
  ptxwave   mma_bench.py's PTX kernel (every thread loads its NVIDIA fragments
            of each tile from global memory, D_t = A_t B_t + D_{t-1}), here
            extended to tf32 (m16n8k8) and s8 and u8 (m16n8k32; u8 not
            among the default --types), through `ptxwave compile --emit
            hsaco`
  expand    the same PTX with --expand-mma (today's per-thread expansion)
  native    the same chain written in HIP as a HIP programmer would: every
            lane loads its operands already in the layout of AMD's instruction
            (fragment-major memory, 16- or 32-byte vectors: no lane exchange)
            and calls the builtin, compiled by clang-22 -O3 for the same
            target (quality_bench.py's flags: --cuda-device-only -nogpuinc
            -nogpulib)
The "-ldm" types (f16-ldm, bf16-ldm; tf32-ldm, e4m3-ldm) are the tile every
GEMM has: A and B of each tile by ldmatrix.x4 / .x2 from shared memory
(ldm_kernel), against the native chain with every lane reading its operands in
the instruction's layout from LDS (one ds_read per operand and step; tf32-ldm
and e4m3-ldm have no native row: run them with --ptxwave of two builds to
compare those, docs/codegen.md "ldmatrix of tf32 and fp8").
Native forms (NATIVE below, one row per form): "tile" is one warp's m16n8kK per
32 lanes as the PTX has it (wave64: the 16-block 4x4 MFMA, each half-wave's
8 blocks its own tile, the only MFMA whose K stays in the half; wave32: one
WMMA, half of N padding), so the ratio is per tile of the same work and data;
"wide" (gfx942 only) is one 16x16xK MFMA per wave and step: the work of the
wave's two warp tiles, A shared between them (the tiles are not independent
any more), for what a larger native tile buys.  Forms a target lacks are not
invented: gfx942 has no 4x4 fp8 or tf32 form (tile: f32 4x4x1, exact for
tf32 inputs), RDNA3 no tf32 (tile: per-lane v_fma_f32, what a HIP programmer
writes without a matrix instruction) and no fp8 (not compared).
--loop: one tile per iteration of a K loop with a runtime trip count instead
(the accumulator a phi of the loop: zeros before it, stored after it), ptxwave
and native alike (loop_ptx_kernel, loop_hip_kernel); printed: the whole
kernel's instructions, lane moves and matrix instructions, and the loop body's
size in bytes (what its backward branch spans): the per-iteration cost.
Printed per kernel: instructions (llvm-objdump-22 of the kernel symbol),
llvm-mca-22 total cycles for one pass (-iterations=1), both per tile; VGPRs
and AGPRs of the TILES-tile kernel (code object notes); the ratio
ptxwave/native and the speed-up of ptxwave over the expansion
(expansion/ptxwave).  Nothing is asserted: this is a measurement.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality_bench import kernel_code, run  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# PTX side: type -> (shape, D/C type, A/B type, C register class).  Every form
# has four A and two B .b32 registers per thread and four C/D registers.
PTX_FORMS = {
    "f16": ("m16n8k16", "f32", "f16", "f"),
    "bf16": ("m16n8k16", "f32", "bf16", "f"),
    "tf32": ("m16n8k8", "f32", "tf32", "f"),
    "s8": ("m16n8k32", "s32", "s8", "r"),
    "u8": ("m16n8k32", "s32", "u8", "r"),
    "e4m3": ("m16n8k32", "f32", "e4m3", "f"),
}


def ldm_kernel(tiles, t):
    """The ldmatrix-fed tile (type "f16-ldm", "bf16-ldm"): tile i's A by
    ldmatrix.x4 and B by ldmatrix.x2 from shared memory (A row-major 16x16,
    B^T 8x16, 1 KiB per tile), as every GEMM feeds mma.sync; ptxwave loads
    them straight into AMD's layout (lower_ldm_plan.c)."""
    shape, dt, ab, cr = PTX_FORMS[t[:-4]]
    c = [f"%c{i}" for i in range(4)]
    body = ["  ld.param.u64 %rd1, [p];", "  mov.u32 %r1, %tid.x;", "  mul.wide.u32 %rd2, %r1, 16;",
            "  add.u64 %rd3, %rd1, %rd2;", f"  ld.global.v4.f32 {{{', '.join(c)}}}, [%rd3];",
            "  and.b32 %r2, %r1, 15;", "  shl.b32 %r3, %r2, 5;", "  shr.u32 %r4, %r1, 4;", "  and.b32 %r4, %r4, 1;",
            "  shl.b32 %r4, %r4, 4;", "  mov.u32 %r5, S;", "  add.u32 %r6, %r5, %r3;", "  add.u32 %r6, %r6, %r4;",
            "  and.b32 %r7, %r1, 7;", "  shl.b32 %r7, %r7, 5;", "  shr.u32 %r8, %r1, 3;", "  and.b32 %r8, %r8, 1;",
            "  shl.b32 %r8, %r8, 4;", "  add.u32 %r9, %r5, 512;", "  add.u32 %r9, %r9, %r7;", "  add.u32 %r9, %r9, %r8;"]
    for i in range(tiles):
        a = [10 + 8 * i + k for k in range(6)]
        body.append(f"  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, [%r6+{1024 * i}];")
        body.append(f"  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{%r{a[4]}, %r{a[5]}}}, [%r9+{1024 * i}];")
        body.append(f"  mma.sync.aligned.{shape}.row.col.{dt}.{ab}.{ab}.{dt} {{{', '.join(c)}}}, "
                    f"{{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, {{%r{a[4]}, %r{a[5]}}}, {{{', '.join(c)}}};")
    body.append(f"  st.global.v4.f32 [%rd3], {{{', '.join(c)}}};")
    body.append("  ret;")
    return (".version 8.7\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f"  .reg .b32 %r<{10 + 8 * tiles}>;\n  .reg .f32 %c<4>;\n  .reg .b64 %rd<4>;\n"
            f"  .shared .align 16 .b8 S[{1024 * tiles}];\n" + "\n".join(body) + "\n}\n")


def ptx_kernel(tiles, t):
    if t.endswith("-ldm"):
        return ldm_kernel(tiles, t)
    shape, dt, ab, cr = PTX_FORMS[t]
    c = [f"%c{i}" for i in range(4)]
    creg = ".f32" if cr == "f" else ".b32"
    ld = "f32" if cr == "f" else "u32"
    body = ["  ld.param.u64 %rd1, [p];", "  mov.u32 %r1, %tid.x;", "  mul.wide.u32 %rd2, %r1, 16;",
            "  add.u64 %rd3, %rd1, %rd2;", f"  ld.global.v4.{ld} {{{', '.join(c)}}}, [%rd3];"]
    for i in range(tiles):
        off = 4096 * (i + 1)
        a = [10 + 8 * i + k for k in range(6)]
        body.append(f"  ld.global.v4.u32 {{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, [%rd3+{off}];")
        body.append(f"  ld.global.v2.u32 {{%r{a[4]}, %r{a[5]}}}, [%rd3+{off + 2048}];")
        body.append(f"  mma.sync.aligned.{shape}.row.col.{dt}.{ab}.{ab}.{dt} {{{', '.join(c)}}}, "
                    f"{{%r{a[0]}, %r{a[1]}, %r{a[2]}, %r{a[3]}}}, {{%r{a[4]}, %r{a[5]}}}, {{{', '.join(c)}}};")
    body.append(f"  st.global.v4.{ld} [%rd3], {{{', '.join(c)}}};")
    body.append("  ret;")
    return (".version 8.7\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p)\n{\n"
            f"  .reg .b32 %r<{10 + 8 * tiles}>;\n  .reg {creg} %c<4>;\n  .reg .b64 %rd<4>;\n"
            + "\n".join(body) + "\n}\n")


# Native side: (family, type) -> forms.  A form: name, accumulator type, A
# and B operand types, steps per tile, and the call ({a} {b} {c}); "fma" is
# the per-lane f32 loop instead of a builtin.  Steps: wave64 4x4 forms
# cover k 4 (f16, bf16, i8) or 1 (f32) per step; the tile's K over them.
HIP_TYPES = """
typedef _Float16 h4 __attribute__((ext_vector_type(4)));
typedef _Float16 h16 __attribute__((ext_vector_type(16)));
typedef short s4 __attribute__((ext_vector_type(4)));
typedef short s16 __attribute__((ext_vector_type(16)));
typedef float f2 __attribute__((ext_vector_type(2)));
typedef float f4 __attribute__((ext_vector_type(4)));
typedef float f8 __attribute__((ext_vector_type(8)));
typedef float f16v __attribute__((ext_vector_type(16)));
typedef int i4 __attribute__((ext_vector_type(4)));
typedef int i8 __attribute__((ext_vector_type(8)));
"""

NATIVE = {
    ("gfx9", "f16"): [
        ("tile 4x(4x4x4_16b_f16)", "f4", "h4", "h4", 4, "__builtin_amdgcn_mfma_f32_4x4x4f16({a}, {b}, {c}, 0, 0, 0)"),
        ("wide 1x(16x16x16_f16)", "f4", "h4", "h4", 1, "__builtin_amdgcn_mfma_f32_16x16x16f16({a}, {b}, {c}, 0, 0, 0)"),
    ],
    ("gfx9", "bf16"): [
        ("tile 4x(4x4x4_16b_bf16)", "f4", "s4", "s4", 4,
         "__builtin_amdgcn_mfma_f32_4x4x4bf16_1k({a}, {b}, {c}, 0, 0, 0)"),
        ("wide 1x(16x16x16_bf16)", "f4", "s4", "s4", 1,
         "__builtin_amdgcn_mfma_f32_16x16x16bf16_1k({a}, {b}, {c}, 0, 0, 0)"),
    ],
    ("gfx9", "tf32"): [
        ("tile 8x(4x4x1_16b_f32)", "f4", "float", "float", 8,
         "__builtin_amdgcn_mfma_f32_4x4x1f32({a}, {b}, {c}, 0, 0, 0)"),
        ("wide 1x(16x16x8_xf32)", "f4", "f2", "f2", 1, "__builtin_amdgcn_mfma_f32_16x16x8_xf32({a}, {b}, {c}, 0, 0, 0)"),
    ],
    ("gfx9", "s8"): [
        ("tile 8x(4x4x4_16b_i8)", "i4", "int", "int", 8, "__builtin_amdgcn_mfma_i32_4x4x4i8({a}, {b}, {c}, 0, 0, 0)"),
        ("wide 1x(16x16x32_i8)", "i4", "long", "long", 1,
         "__builtin_amdgcn_mfma_i32_16x16x32_i8({a}, {b}, {c}, 0, 0, 0)"),
    ],
    ("gfx9", "e4m3"): [
        ("wide 1x(16x16x32_fp8)", "f4", "long", "long", 1,
         "__builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8({a}, {b}, {c}, 0, 0, 0)"),
    ],
    ("gfx11", "f16"): [
        ("tile 1x(wmma 16x16x16_f16)", "f8", "h16", "h16", 1, "__builtin_amdgcn_wmma_f32_16x16x16_f16_w32({a}, {b}, {c})"),
    ],
    ("gfx11", "bf16"): [
        ("tile 1x(wmma 16x16x16_bf16)", "f8", "s16", "s16", 1,
         "__builtin_amdgcn_wmma_f32_16x16x16_bf16_w32({a}, {b}, {c})"),
    ],
    ("gfx11", "s8"): [
        ("tile 2x(wmma 16x16x16_iu8)", "i8", "i4", "i4", 2,
         "__builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(true, {a}, true, {b}, {c}, false)"),
    ],
    # u8: the same WMMA with both sign flags clear (CDNA's i8 MFMA has none: no native row there)
    ("gfx11", "u8"): [
        ("tile 2x(wmma 16x16x16_iu8 u8)", "i8", "i4", "i4", 2,
         "__builtin_amdgcn_wmma_i32_16x16x16_iu8_w32(false, {a}, false, {b}, {c}, false)"),
    ],
    # no tf32/f32 WMMA on RDNA3: a lane computes 2 rows x 2 columns of the
    # 16x8 tile over k 8 (A: its two rows, B: its two columns, 16 f32 each)
    ("gfx11", "tf32"): [
        ("tile 32x v_fma_f32 per lane", "f4", "f16v", "f16v", 1, "fma"),
    ],
}


# The ldmatrix-fed tiles' native counterpart: the same builtins, every lane
# loading its operands in the instruction's layout from LDS (fragment-major,
# lane stride the operand's size: one ds_read per operand and step).
for (fam, base) in [("gfx9", "f16"), ("gfx9", "bf16"), ("gfx11", "f16"), ("gfx11", "bf16")]:
    NATIVE[(fam, base + "-ldm")] = [f[:1] + ("lds",) + f[1:] for f in NATIVE[(fam, base)] if f[0].startswith("tile")]

OPERAND_BYTES = {"h4": 8, "s4": 8, "h16": 32, "s16": 32}


def family(arch):
    return "gfx11" if arch.startswith(("gfx11", "gfx12")) else "gfx9"


def hip_lds_kernel(tiles, form):
    name, _, acc, at, bt, steps, call = form
    sz = OPERAND_BYTES[at]
    chunk = 64 * sz
    lines = [HIP_TYPES, 'extern "C" __attribute__((global)) void k(char *p)', "{",
             f"  static __attribute__((shared)) char lds[{tiles * 2 * steps * chunk}];",
             "  char *q = p + __builtin_amdgcn_workitem_id_x() * 32;",
             f"  const char *s = lds + __builtin_amdgcn_workitem_id_x() % 64 * {sz};",
             f"  {acc} c = *({acc} *)q;"]
    for i in range(tiles):
        for j in range(steps):
            ao, bo = chunk * (2 * steps * i + j), chunk * (2 * steps * i + steps + j)
            lines.append("  c = " + call.format(a=f"*(const {at} *)(s + {ao})", b=f"*(const {bt} *)(s + {bo})", c="c") + ";")
    lines += [f"  *({acc} *)q = c;", "}"]
    return "\n".join(lines) + "\n"


def hip_kernel(tiles, form):
    if form[1] == "lds":
        return hip_lds_kernel(tiles, form)
    name, acc, at, bt, steps, call = form
    # fragment-major memory: lane stride 32 bytes; step j's A at region +
    # 2048 j, B after the A's (64 lanes x 32 bytes per chunk)
    lines = [HIP_TYPES, 'extern "C" __attribute__((global)) void k(char *p)', "{",
             "  char *q = p + __builtin_amdgcn_workitem_id_x() * 32;",
             f"  {acc} c = *({acc} *)q;"]
    for i in range(tiles):
        reg = 65536 * (i + 1)
        for j in range(steps):
            ao, bo = reg + 2048 * j, reg + 2048 * (steps + j)
            a, b = f"*(const {at} *)(q + {ao})", f"*(const {bt} *)(q + {bo})"
            if call == "fma":
                lines.append(f"  {{ {at} a = {a}; {bt} b = {b};")
                for r in range(2):
                    for n in range(2):
                        for kk in range(8):
                            lines.append(f"    c[{2 * r + n}] = __builtin_fmaf(a[{8 * r + kk}], b[{8 * n + kk}], c[{2 * r + n}]);")
                lines.append("  }")
            else:
                lines.append("  c = " + call.format(a=a, b=b, c="c") + ";")
    lines += [f"  *({acc} *)q = c;", "}"]
    return "\n".join(lines) + "\n"


def mca_cycles(insts, arch, tmp, timeout):
    """llvm-mca-22's total cycles (quality_bench's options), or None when it
    does not finish in timeout seconds: LLVM 22's llvm-mca never returns on
    some gfx942 sequences (five lines are enough: two global_load_dwordx2,
    v_mfma_f32_4x4x4_16b_f16 of the first load's result, a v_add_co_u32, a
    second MFMA of the second load's; docs/codegen.md)."""
    path = os.path.join(tmp, "mca.s")
    with open(path, "w") as f:
        f.write("\n".join(insts) + "\n")
    try:
        r = subprocess.run(["llvm-mca-22", "-mtriple=amdgcn-amd-amdhsa", "-mcpu=" + arch, "-iterations=1", path],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"Total Cycles:\s+(\d+)", r.stdout)
    return int(m.group(1)) if m else None


def notes(hsaco):
    """{vgpr, agpr} of kernel k from the code object's notes."""
    r = run(["llvm-readelf-22", "--notes", hsaco])
    out = {}
    for key in ("vgpr", "agpr"):
        m = re.search(r"\.%s_count:\s+(\d+)" % key, r.stdout)
        out[key] = int(m.group(1)) if m else 0
    return out


def measure(hsaco, arch, tmp, mca):
    insts = kernel_code(hsaco).get("k", [])
    n = notes(hsaco)
    return {"insts": len(insts), "cycles": mca_cycles(insts, arch, tmp, mca) if mca else 0,
            "matrix": sum(1 for i in insts if i.startswith(("v_mfma", "v_wmma"))),
            "moves": sum(1 for i in insts if i.startswith(("ds_bpermute", "ds_swizzle", "v_permlane"))
                         or "row_" in i or "quad_perm" in i),
            "vgpr": n["vgpr"], "agpr": n["agpr"]}


def compile_ptx(ptxwave, arch, tiles, t, expand, tmp):
    ptx = os.path.join(tmp, f"p{tiles}_{t}.ptx")
    with open(ptx, "w") as f:
        f.write(ptx_kernel(tiles, t))
    out = os.path.join(tmp, f"p{tiles}_{t}_{arch}_{int(expand)}.hsaco")
    r = run([ptxwave, "compile", ptx, "--arch", arch, "--emit", "hsaco", "-o", out] + (["--expand-mma"] if expand else []))
    return (out, None) if r.returncode == 0 else (None, r.stderr.strip()[:200])


def compile_native(arch, tiles, form, idx, t, tmp):
    src = os.path.join(tmp, f"n{tiles}_{t}_{arch}_{idx}.hip")
    with open(src, "w") as f:
        f.write(hip_kernel(tiles, form))
    out = src[:-4] + ".hsaco"
    ld = shutil.which("ld.lld-22") or "ld.lld"
    r = run(["clang-22", "-x", "hip", "--offload-arch=" + arch, "--cuda-device-only", "--no-gpu-bundle-output",
             "-nogpuinc", "-nogpulib", "-O3", "-mcode-object-version=5", "--ld-path=" + ld, src, "-o", out])
    return (out, None) if r.returncode == 0 else (None, r.stderr.strip()[:200])


def per_tile(build, arch, tiles, tmp, mca):
    """(per-tile measures, TILES-kernel measures) or (None, error)."""
    res = []
    for n in (1, tiles):
        path, err = build(n)
        if not path:
            return None, err
        res.append(measure(path, arch, tmp, mca))
    one, many = res
    d = {k: (many[k] - one[k]) / (tiles - 1) if many[k] is not None and one[k] is not None else None
         for k in ("insts", "cycles", "matrix", "moves")}
    d["vgpr"], d["agpr"] = many["vgpr"], many["agpr"]
    return d, None


def loop_ptx_kernel(t):
    """One mma per iteration of a K loop, n (a parameter) iterations, C from
    zeros, D stored after the loop (nvcc's guarded do-while shape)."""
    shape, dt, ab, cr = PTX_FORMS[t]
    c = [f"%c{i}" for i in range(4)]
    creg = ".f32" if cr == "f" else ".b32"
    st = "f32" if cr == "f" else "u32"
    zero = "0f00000000" if cr == "f" else "0"
    body = ["  ld.param.u64 %rd1, [p];", "  ld.param.u32 %r1, [n];", "  mov.u32 %r2, %tid.x;",
            "  mul.wide.u32 %rd2, %r2, 16;", "  add.u64 %rd3, %rd1, %rd2;", "  mov.u64 %rd4, %rd3;"]
    body += [f"  mov.{'f32' if cr == 'f' else 'b32'} {x}, {zero};" for x in c]
    body += ["  mov.u32 %r3, 0;", "  setp.eq.u32 %p1, %r1, 0;", "  @%p1 bra DONE;", "LOOP:",
             "  ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd4+4096];",
             "  ld.global.v2.u32 {%r14, %r15}, [%rd4+6144];",
             f"  mma.sync.aligned.{shape}.row.col.{dt}.{ab}.{ab}.{dt} {{{', '.join(c)}}}, "
             f"{{%r10, %r11, %r12, %r13}}, {{%r14, %r15}}, {{{', '.join(c)}}};",
             "  add.u64 %rd4, %rd4, 8192;", "  add.u32 %r3, %r3, 1;", "  setp.lt.u32 %p2, %r3, %r1;",
             "  @%p2 bra LOOP;", "DONE:", f"  st.global.v4.{st} [%rd3], {{{', '.join(c)}}};", "  ret;"]
    return (".version 8.7\n.target sm_89\n.address_size 64\n.visible .entry k(.param .u64 p, .param .u32 n)\n{\n"
            f"  .reg .pred %p<3>;\n  .reg .b32 %r<16>;\n  .reg {creg} %c<4>;\n  .reg .b64 %rd<5>;\n"
            + "\n".join(body) + "\n}\n")


def loop_hip_kernel(form):
    name, acc, at, bt, steps, call = form
    lines = [HIP_TYPES, 'extern "C" __attribute__((global)) void k(char *p, unsigned n)', "{",
             "  char *q = p + __builtin_amdgcn_workitem_id_x() * 32;", f"  {acc} c = {{}};",
             "  for (unsigned i = 0; i < n; i++) {", "    char *r = q + 65536 * (i + 1);"]
    for j in range(steps):
        a, b = f"*(const {at} *)(r + {2048 * j})", f"*(const {bt} *)(r + {2048 * (steps + j)})"
        if call == "fma":
            lines.append(f"    {{ {at} a = {a}; {bt} b = {b};")
            for rr in range(2):
                for nn in range(2):
                    for kk in range(8):
                        lines.append(f"      c[{2 * rr + nn}] = __builtin_fmaf(a[{8 * rr + kk}], b[{8 * nn + kk}], c[{2 * rr + nn}]);")
            lines.append("    }")
        else:
            lines.append("    c = " + call.format(a=a, b=b, c="c") + ";")
    lines += ["  }", f"  *({acc} *)q = c;", "}"]
    return "\n".join(lines) + "\n"


def loop_body(insts):
    """The loop body's size in bytes: the disassembly prints a branch's
    target as its signed 16-bit offset in dwords from the next instruction,
    so the backward branch (a negative offset) spans -offset dwords."""
    best = None
    for i in insts:
        m = re.match(r"s_cbranch_\w+\s+(-?\d+)$", i) or re.match(r"s_branch\s+(-?\d+)$", i)
        if m:
            off = int(m.group(1))
            off = off - 65536 if off >= 32768 else off
            if off < 0:
                best = -4 * off
    return best


def loop_rows(a, tmp):
    print("K loop, one tile per iteration (--loop): whole kernel instructions / lane moves / matrix instructions;"
          " body = the loop's bytes (what its backward branch spans)")
    print(f"{'arch':8} {'type':5} {'native form':28} | {'pw insts':>8} {'moves':>5} {'mm':>3} {'body':>5} |"
          f" {'nat insts':>9} {'mm':>3} {'body':>5} | {'exp insts':>9} {'body':>5}")
    for arch in a.arch.split(","):
        fam = family(arch)
        for t in a.types.split(","):
            res = {}
            for tag, expand in (("pw", False), ("exp", True)):
                ptx = os.path.join(tmp, f"loop_{t}.ptx")
                with open(ptx, "w") as f:
                    f.write(loop_ptx_kernel(t))
                out = os.path.join(tmp, f"loop_{t}_{arch}_{tag}.hsaco")
                r = run([a.ptxwave, "compile", ptx, "--arch", arch, "--emit", "hsaco", "-o", out]
                        + (["--expand-mma"] if expand else []))
                if r.returncode:
                    print(f"{arch:8} {t:5} ptxwave failed: {r.stderr.strip()[:200]}")
                    break
                res[tag] = measure(out, arch, tmp, 0)
                res[tag]["body"] = loop_body(kernel_code(out).get("k", []))
            if len(res) < 2:
                continue
            for idx, form in enumerate([f for f in NATIVE.get((fam, t), []) if f[0].startswith("tile")] or [None]):
                nat = {"insts": 0, "matrix": 0, "body": None}
                name = form[0] if form else "(none)"
                if form:
                    src = os.path.join(tmp, f"loop_{t}_{arch}_{idx}.hip")
                    with open(src, "w") as f:
                        f.write(loop_hip_kernel(form))
                    out = src[:-4] + ".hsaco"
                    ld = shutil.which("ld.lld-22") or "ld.lld"
                    r = run(["clang-22", "-x", "hip", "--offload-arch=" + arch, "--cuda-device-only",
                             "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-O3", "-mcode-object-version=5",
                             "--ld-path=" + ld, src, "-o", out])
                    if r.returncode == 0:
                        nat = measure(out, arch, tmp, 0)
                        nat["body"] = loop_body(kernel_code(out).get("k", []))
                pw, ex = res["pw"], res["exp"]
                print(f"{arch:8} {t:5} {name:28} | {pw['insts']:8} {pw['moves']:5} {pw['matrix']:3} {str(pw['body']):>5} |"
                      f" {nat['insts']:9} {nat['matrix']:3} {str(nat['body']):>5} | {ex['insts']:9} {str(ex['body']):>5}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ptxwave", default=os.path.join(ROOT, "build", "tools", "ptxwave"))
    ap.add_argument("--arch", default="gfx942,gfx1100")
    ap.add_argument("--types", default="f16,bf16,tf32,s8,e4m3,f16-ldm,bf16-ldm")
    ap.add_argument("--tiles", type=int, default=8)
    ap.add_argument("--no-mca", action="store_true", help="skip llvm-mca (cycles 0)")
    ap.add_argument("--mca-timeout", type=float, default=60, help="seconds per llvm-mca run (default 60)")
    ap.add_argument("--keep", help="keep the sources and code objects in this directory")
    ap.add_argument("--loop", action="store_true", help="the K-loop kernels instead (one tile per iteration)")
    a = ap.parse_args()
    tmp = a.keep or tempfile.mkdtemp(prefix="mma_native_bench-")
    os.makedirs(tmp, exist_ok=True)
    if a.loop:
        loop_rows(a, tmp)
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    n, mca = a.tiles, (0 if a.no_mca else a.mca_timeout)
    print(f"per tile ({n}-tile kernel minus 1-tile kernel, / {n - 1}); VGPR/AGPR of the {n}-tile kernel; "
          "pw = ptxwave, nat = native HIP, exp = ptxwave --expand-mma; moves = lane moves "
          "(ds_bpermute, ds_swizzle, permlane, DPP)")
    print(f"{'arch':8} {'type':8} {'native form':28} | {'insts pw':>8} {'nat':>6} {'pw/nat':>6} {'exp':>6} {'exp/pw':>6} |"
          f" {'mca pw':>7} {'nat':>6} {'pw/nat':>6} {'exp':>7} {'exp/pw':>6} | {'mm pw':>5} {'nat':>4} {'moves':>5} |"
          f" {'VGPR/AGPR pw':>12} {'nat':>7} {'exp':>7}")
    ratios = {"insts": [], "cycles": []}
    for arch in a.arch.split(","):
        fam = family(arch)
        for t in a.types.split(","):
            forms = NATIVE.get((fam, t), [])
            pw, e1 = per_tile(lambda k: compile_ptx(a.ptxwave, arch, k, t, False, tmp), arch, n, tmp, mca)
            ex, e2 = per_tile(lambda k: compile_ptx(a.ptxwave, arch, k, t, True, tmp), arch, n, tmp, mca)
            if not pw or not ex:
                print(f"{arch:8} {t:8} ptxwave failed: {e1 or e2}")
                continue
            if not forms:
                forms = [("(none on this target)", None, None, None, 0, None)]
            for idx, form in enumerate(forms):
                nat = None
                if form[-1]:
                    nat, err = per_tile(lambda k: compile_native(arch, k, form, idx, t, tmp), arch, n, tmp, mca)
                    if not nat:
                        print(f"{arch:8} {t:8} {form[0]:28} native failed: {err}")
                        continue
                def r(x, y):
                    return x / y if x is not None and y else float("nan")

                def c(x):
                    return "%7.1f" % x if x is not None else "   hang"
                ni = nat["insts"] if nat else 0
                nc = nat["cycles"] if nat else 0
                if nat and form[0].startswith("tile"):
                    ratios["insts"].append(r(pw["insts"], ni))
                    if mca and nc and pw["cycles"] and nc > 0 and pw["cycles"] > 0:
                        ratios["cycles"].append(r(pw["cycles"], nc))
                nv = f"{nat['vgpr']}/{nat['agpr']}" if nat else "-"
                print(f"{arch:8} {t:8} {form[0]:28} | {pw['insts']:8.1f} {ni:6.1f} {r(pw['insts'], ni):6.2f}"
                      f" {ex['insts']:6.1f} {r(ex['insts'], pw['insts']):6.2f} |"
                      f" {c(pw['cycles'])} {c(nc)} {r(pw['cycles'], nc):6.2f} {c(ex['cycles'])}"
                      f" {r(ex['cycles'], pw['cycles']):6.2f} |"
                      f" {pw['matrix']:5.1f} {nat['matrix'] if nat else 0:4.1f} {pw['moves']:5.1f} |"
                      f" {pw['vgpr']:>5}/{pw['agpr']:<6} {nv:>7} {ex['vgpr']:>3}/{ex['agpr']:<3}")
    for k, xs in ratios.items():
        if xs:
            g = math.exp(sum(math.log(x) for x in xs) / len(xs))
            print(f"geometric mean ptxwave/native ({k}, 'tile' forms, {len(xs)} rows where both are positive): {g:.2f}")
    if not a.keep:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
