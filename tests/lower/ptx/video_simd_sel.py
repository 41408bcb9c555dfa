#!/usr/bin/env python3
"""tests/lower/ptx/video_simd_sel.py gen A B C | check A B C OUT | ptx: the
SIMD video instructions' operand selectors and destination masks (PTX ISA
9.7.18.2), as video_simd.py checks their default forms: inputs, the check
against this reading of the ISA's pseudocode, and the kernel (`ptx` prints
it; tests/lower/ptx/video_simd_sel.ptx is that output).

    Va = extractAndSignExt_2/4(a, b, .asel, .atype): of the 64-bit {b, a}
         (half-words 0-1 / bytes 0-3 are a's, 2-3 / 4-7 b's), element i is
         the half-word or byte that .asel's digit for element i names
         (.hxy: x for element 1, y for element 0; .bxyzw: x for 3 ... w
         for 0), sign- or zero-extended by atype; Vb likewise by .bsel
         (defaults .h10/.b3210 for a, .h32/.b7654 for b)
    t[i] = the op (video_simd.py), .sat clamps to dtype's element range
    mask = the elements .mask names (.h0 .h1 .h10; .b and digits 3-0)
    .add:  d = c + sum of t[i] over the mask
    else:  element i of d = mask[i] ? t[i] : Vc[i] (c's element i)

Forms: every .hxy for a and for b of vop2, each of the eight bytes in each
element of vop4's a and b, every mask with and without .add, on every
operation, with the compares whose 0-with-0 is true among them.
"""
import random
import sys

import abc_check

N = 64
EDGE = [0, 1, 0xFFFFFFFF, 0x7FFF7FFF, 0x80008000, 0x7F7F7F7F, 0x80808080, 0xFF00FF00,
        0x00FF00FF, 0x12345678, 0x8001FFFE, 0x01FF80FE]
OPS = ["add", "sub", "avrg", "absdiff", "min", "max", "set"]
CMPS = ["eq", "ne", "lt", "le", "gt", "ge"]
MASKS2 = ["h0", "h1", "h10"]
MASKS4 = ["b" + "".join(str(d) for d in range(3, -1, -1) if m >> d & 1) for m in range(1, 16)]


def make_forms():
    """(op, n, dtype, atype, btype, sat, add, cmp, asel, bsel, mask)."""
    rnd = random.Random(2024)
    forms = []
    k = 0

    def one(n, asel, bsel, mask, add):
        nonlocal k
        op = OPS[k % len(OPS)]
        cmp = CMPS[k % len(CMPS)] if op == "set" else None
        at, bt = "su"[k % 2], "su"[(k // 2) % 2]
        dt = None if op == "set" else "su"[(k // 3) % 2]
        sat = (not add) and op != "set" and k % 3 == 0
        forms.append((op, n, dt, at, bt, sat, add, cmp, asel, bsel, mask))
        k += 1

    for x in range(4):          # vop2: every .hxy for a, then for b
        for y in range(4):
            one(2, f"h{x}{y}", f"h{rnd.randrange(4)}{rnd.randrange(4)}", None, False)
            one(2, f"h{rnd.randrange(4)}{rnd.randrange(4)}", f"h{x}{y}", None, False)
    for r in range(8):          # vop4: byte r + e in element e, a then b
        sel = "b" + "".join(str((r + e) % 8) for e in range(3, -1, -1))
        rs = "b" + "".join(str(rnd.randrange(8)) for _ in range(4))
        one(4, sel, rs, None, False)
        one(4, rs, sel, None, False)
    for op in OPS:              # masks on every op, merge and accumulate
        for mask in MASKS2:
            for add in (False, True):
                one(2, f"h{rnd.randrange(4)}{rnd.randrange(4)}", None, mask, add)
    for mask in MASKS4:
        for add in (False, True):
            one(4, None, "b" + "".join(str(rnd.randrange(8)) for _ in range(4)), mask, add)
    # vset's accumulate under a mask, every compare
    for cmp in CMPS:
        for n, mask in ((2, "h1"), (4, "b31"), (4, "b0")):
            forms.append(("set", n, None, "s" if cmp in ("lt", "ge") else "u", "u", False, True, cmp,
                          None, None, mask))
    return forms


FORMS = make_forms()


def select(a, b, sel, n, signed):
    """extractAndSignExt: element i of the selection from {b, a}."""
    w = 32 // n
    both = (b << 32) | a
    digits = [int(ch) for ch in sel[1:]]   # the first written is element n - 1
    out = []
    for i in range(n):
        src = digits[n - 1 - i]
        e = (both >> (src * w)) & ((1 << w) - 1)
        if signed and e >> (w - 1):
            e -= 1 << w
        out.append(e)
    return out


def ref(form, a, b, c):
    op, n, dt, at, bt, sat, add, cmp, asel, bsel, mask = form
    w = 32 // n
    va = select(a, b, asel or ("h10" if n == 2 else "b3210"), n, at == "s")
    vb = select(a, b, bsel or ("h32" if n == 2 else "b7654"), n, bt == "s")
    m = [True] * n if mask is None else [str(i) in mask[1:] for i in range(n)]
    ts = []
    for x, y in zip(va, vb):
        if op == "add": t = x + y
        elif op == "sub": t = x - y
        elif op == "avrg": t = (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1
        elif op == "absdiff": t = abs(x - y)
        elif op == "min": t = min(x, y)
        elif op == "max": t = max(x, y)
        else:
            t = int({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[cmp])
        if sat:
            lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if dt == "s" else (0, (1 << w) - 1)
            t = max(lo, min(hi, t))
        ts.append(t)
    if add:
        return (c + sum(t for t, keep in zip(ts, m) if keep)) & 0xFFFFFFFF
    d = 0
    for i, t in enumerate(ts):
        e = t if m[i] else (c >> (i * w))
        d |= (e & ((1 << w) - 1)) << (i * w)
    return d


def spelling(form):
    op, n, dt, at, bt, sat, add, cmp, asel, bsel, mask = form
    s = f"v{op}{n}"
    s += f".{at}32.{bt}32.{cmp}" if op == "set" else f".{dt}32.{at}32.{bt}32"
    s += (".sat" if sat else "") + (".add" if add else "")
    sel = lambda x: "." + x if x else ""
    return f"{s} %r10{sel(mask)}, %r2{sel(asel)}, %r3{sel(bsel)}, %r4"


def ptx():
    k = len(FORMS)
    lines = [
        "// The SIMD video instructions' operand selectors and masks (PTX ISA",
        f"// 9.7.18.2) over per-thread operands: thread t reads a, b, c = A[t], B[t],",
        f"// C[t] and writes {k} forms to out[{k} t + k].  Generated by",
        "// tests/lower/ptx/video_simd_sel.py (`ptx`), which also writes the inputs and",
        "// checks the outputs against its own reading of the ISA's pseudocode.",
        "// ptxas 13 accepts this file.",
        ".version 8.0", ".target sm_80", ".address_size 64", "",
        ".visible .entry video_simd_sel(.param .u64 pa, .param .u64 pb, .param .u64 pc, .param .u64 po)",
        "{", "  .reg .b32 %r<12>;", "  .reg .b64 %rd<12>;",
        "  ld.param.u64 %rd1, [pa];", "  ld.param.u64 %rd2, [pb];", "  ld.param.u64 %rd3, [pc];",
        "  ld.param.u64 %rd4, [po];", "  mov.u32 %r1, %tid.x;", "  mul.wide.u32 %rd5, %r1, 4;",
        "  add.u64 %rd6, %rd1, %rd5;", "  add.u64 %rd7, %rd2, %rd5;", "  add.u64 %rd8, %rd3, %rd5;",
        "  ld.global.u32 %r2, [%rd6];", "  ld.global.u32 %r3, [%rd7];", "  ld.global.u32 %r4, [%rd8];",
        f"  mul.wide.u32 %rd9, %r1, {4 * k};", "  add.u64 %rd10, %rd4, %rd9;",
    ]
    for i, f in enumerate(FORMS):
        lines.append(f"  {spelling(f)};")
        lines.append(f"  st.global.u32 [%rd10+{4 * i}], %r10;" if i else "  st.global.u32 [%rd10], %r10;")
    lines += ["  ret;", "}"]
    print("\n".join(lines))


def inputs():
    rnd = random.Random(22)
    a, b, c = [], [], []
    for i in range(N):
        if i < len(EDGE) * 4:
            a.append(EDGE[i % len(EDGE)])
            b.append(EDGE[(i // len(EDGE) * 5 + i) % len(EDGE)])
        else:
            a.append(rnd.getrandbits(32))
            b.append(rnd.getrandbits(32))
        c.append(rnd.choice(EDGE + [rnd.getrandbits(32)]))
    return a, b, c


def main():
    if sys.argv[1] == "ptx":
        ptx()
        return 0
    return abc_check.main("video_simd_sel", sys.argv, N, FORMS, inputs, ref, spell=spelling)


if __name__ == "__main__":
    sys.exit(main())
