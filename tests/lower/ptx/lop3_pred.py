#!/usr/bin/env python3
"""tests/lower/ptx/lop3_pred.py gen A B C | check A B C OUT: inputs for
tests/lower/ptx/lop3_pred.ptx and the check of its outputs against lop3 as
the PTX ISA describes it (9.7.8.6): each bit of d is immLut's bit number
(a_bit << 2 | b_bit << 1 | c_bit) (the table "ta = 0xF0, tb = 0xCC,
tc = 0xAA": F(ta, tb, tc) = immLut), and "p = (d != 0) BoolOp q".
"""
import random
import sys

import abc_check  # the gen/check driver these scripts share

N = 64
EDGE = [0, 1, 2, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF, 0xFF00FF00, 0x00FF00FF, 0x12345678, 0xFFFFFFFE]

# (boolop, immLut, b as an immediate or None, q: "q", "!q", 0 or 1, output: "d" or "p")
FORMS = [
    ("or", 0xFE, None, "q", "d"), ("or", 0xFE, None, "q", "p"),
    ("and", 0x80, None, "q", "d"), ("and", 0x80, None, "q", "p"),
    ("and", 0x96, None, "!q", "d"), ("and", 0x96, None, "!q", "p"),
    ("or", 0xE8, 0xFF00FF00, 0, "d"), ("or", 0xE8, 0xFF00FF00, 0, "p"),
    ("and", 0xB8, None, 1, "p"),
]


def lut(t, a, b, c):
    d = 0
    for i in range(32):
        k = ((a >> i) & 1) << 2 | ((b >> i) & 1) << 1 | ((c >> i) & 1)
        d |= ((t >> k) & 1) << i
    return d


def ref(form, a, b, c):
    bop, t, bimm, qs, out = form
    d = lut(t, a, b if bimm is None else bimm, c)
    q = {"q": c & 1 != 0, "!q": c & 1 == 0, 0: False, 1: True}[qs]
    p = (d != 0) and q if bop == "and" else (d != 0) or q
    return d if out == "d" else int(p)


def inputs():
    rng = random.Random(20)
    vals = []
    for k in range(3):
        v = [EDGE[(i + 3 * k) % len(EDGE)] for i in range(len(EDGE))]
        v += [rng.getrandbits(32) if i % 3 else rng.getrandbits(32) & rng.getrandbits(32) & rng.getrandbits(32)
              for i in range(N - len(EDGE))]
        vals.append(v)
    # some threads where a & b & c and a ^ b ^ c are zero: d == 0 decides p
    for t in range(40, 48):
        vals[0][t], vals[1][t], vals[2][t] = 0, 0, t & 1
    return vals


if __name__ == "__main__":
    sys.exit(abc_check.main("lop3_pred", sys.argv, N, FORMS, inputs, ref))
