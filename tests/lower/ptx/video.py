#!/usr/bin/env python3
"""tests/lower/ptx/video.py gen A B C | check A B C OUT: inputs for
tests/lower/ptx/video.ptx and the check of its outputs against the scalar
video instructions as the PTX ISA's pseudocode gives them (9.7.18.1):

    ta, tb = a, b sign- or zero-extended by atype, btype (u32 for shifts)
    tmp = ta op tb, exactly (shifts: .clamp -> min(tb, 32), .wrap -> tb & 31)
    tmp = saturate(tmp) to dtype's range with .sat
    d = tmp op2 c (add, min, max; c extended by dtype), low 32 bits
"""
import random
import sys

import abc_check  # the gen/check driver these scripts share

N = 64
EDGE = [0, 1, 2, 31, 32, 33, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 0x12345678, 0x8000FFFF]

# (op, dtype, atype, btype, sat, op2, mode) in the kernel's order
FORMS = [
    ("add", "u", "u", "u", False, None, None),
    ("add", "s", "s", "s", True, None, None),
    ("sub", "u", "u", "u", True, None, None),
    ("sub", "s", "s", "u", False, "add", None),
    ("absdiff", "u", "s", "s", False, None, None),
    ("absdiff", "s", "u", "u", True, "max", None),
    ("min", "s", "s", "u", False, None, None),
    ("max", "u", "s", "s", True, "min", None),
    ("shl", "u", "u", "u", False, None, "clamp"),
    ("shl", "s", "s", "u", True, None, "wrap"),
    ("shr", "u", "u", "u", False, "add", "clamp"),
    ("shr", "s", "s", "u", False, None, "clamp"),
    ("shr", "s", "s", "u", False, "max", "wrap"),
    ("shl", "u", "u", "u", True, None, "clamp"),
]


def ext(v, t):
    return v - (1 << 32) if t == "s" and v >= 1 << 31 else v


def ref(form, a, b, c):
    op, dt, at, bt, sat, op2, mode = form
    ta, tb = ext(a, at), ext(b, "u" if op in ("shl", "shr") else bt)
    if op == "add": t = ta + tb
    elif op == "sub": t = ta - tb
    elif op == "absdiff": t = abs(ta - tb)
    elif op == "min": t = min(ta, tb)
    elif op == "max": t = max(ta, tb)
    else:
        tb = min(tb, 32) if mode == "clamp" else tb & 31
        t = ta << tb if op == "shl" else ta >> tb   # Python's >> is arithmetic
    if sat:
        lo, hi = (-(1 << 31), (1 << 31) - 1) if dt == "s" else (0, (1 << 32) - 1)
        t = max(lo, min(hi, t))
    if op2:
        tc = ext(c, dt)
        t = t + tc if op2 == "add" else min(t, tc) if op2 == "min" else max(t, tc)
    return t & 0xFFFFFFFF


def inputs():
    rnd = random.Random(20)
    a, b, c = [], [], []
    for i in range(N):
        if i < len(EDGE) * 4:
            a.append(EDGE[i % len(EDGE)])
            b.append(EDGE[(i // len(EDGE) * 5 + i) % len(EDGE)])
        else:
            a.append(rnd.getrandbits(32))
            b.append(rnd.choice([rnd.getrandbits(32), rnd.randrange(40)]))
        c.append(rnd.choice(EDGE + [rnd.getrandbits(32)]))
    return a, b, c


def main():
    return abc_check.main("video", sys.argv, N, FORMS, inputs, ref)


if __name__ == "__main__":
    sys.exit(main())
