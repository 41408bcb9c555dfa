#!/usr/bin/env python3
"""tests/lower/ptx/vmad.py gen A B C | check A B C OUT: inputs for
tests/lower/ptx/vmad.ptx and the check of its outputs against vmad as the
PTX ISA's pseudocode gives it (9.7.18.1.3), in exact integers:

    ta, tb = partSelectSignExtend(a, atype, asel), (b, btype, bsel)
    signedFinal = signed atype or btype, or a.negate ^ b.negate, or c.negate
    tmp = ta * tb
    .po: lsb = 1;  a.negate ^ b.negate: tmp = ~tmp, lsb = 1;
    c.negate: c = ~c (32 bits), lsb = 1
    tmp = tmp + (signedFinal ? sext32(c) : zext(c)) + lsb
    .shr7 / .shr15: tmp >> 7 / 15 (the low 64 bits: the exact value fits)
    .sat: clamp to the 32-bit range of signedFinal's sign
    d = the low 32 bits
"""
import random
import sys

import abc_check  # the gen/check driver these scripts share

N = 64
EDGE = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
        0x80FF7F01, 0x12345678, 0xFE01807F, 0xFFFFFFFE]

# (dtype, atype, btype, sat, po, scale, neg_a, neg_b, neg_c, asel, bsel) in the kernel's order
FORMS = [
    ('u', 'u', 'u', False, False, 0, False, False, False, None, None),
    ('u', 'u', 'u', True, False, 0, False, False, False, None, None),
    ('s', 's', 's', True, False, 0, False, False, False, None, None),
    ('s', 's', 'u', True, False, 0, False, False, True, None, None),
    ('s', 'u', 'u', True, False, 0, True, False, False, None, None),
    ('s', 'u', 'u', True, False, 0, False, False, True, None, None),
    ('s', 'u', 'u', False, False, 7, False, True, False, None, None),
    ('u', 'u', 'u', False, False, 15, False, False, False, 'h0', 'h0'),
    ('s', 'u', 's', True, False, 15, True, False, False, 'h1', 'b2'),
    ('u', 'u', 'u', True, True, 7, False, False, False, 'b0', 'h1'),
    ('s', 's', 's', False, True, 0, False, False, False, 'b3', 'b1'),
    ('s', 's', 'u', True, False, 7, True, True, False, None, 'h0'),
    ('s', 'u', 'u', True, False, 15, False, False, True, None, None),
    ('u', 's', 's', True, False, 0, True, False, False, 'h1', 'h1'),
]

FIELD = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def select(v, t, sel):
    pos, n = FIELD[sel] if sel else (0, 32)
    x = (v >> pos) & ((1 << n) - 1)
    return x - (1 << n) if t == "s" and x >> (n - 1) else x


def ref(form, a, b, c):
    dt, at, bt, sat, po, scale, na, nb, nc, asel, bsel = form
    ta, tb = select(a, at, asel), select(b, bt, bsel)
    signed_final = at == "s" or bt == "s" or (na != nb) or nc
    tmp = ta * tb
    lsb = 0
    if po:
        lsb = 1
    elif na != nb:
        tmp, lsb = ~tmp, 1
    elif nc:
        c, lsb = ~c & 0xFFFFFFFF, 1
    c128 = c - (1 << 32) if signed_final and c >> 31 else c
    tmp = tmp + c128 + lsb
    r = tmp >> scale if scale else tmp
    if sat:
        lo, hi = (-(1 << 31), (1 << 31) - 1) if signed_final else (0, (1 << 32) - 1)
        r = max(lo, min(hi, r))
    return r & 0xFFFFFFFF


def inputs():
    rnd = random.Random(97)
    a, b, c = [], [], []
    for i in range(N):
        if i < 32:
            a.append(EDGE[i % len(EDGE)])
            b.append(EDGE[(i * 5 + i // 16) % len(EDGE)])
        else:
            a.append(rnd.getrandbits(32))
            b.append(rnd.choice([rnd.getrandbits(32), rnd.randrange(1 << 12)]))
        c.append(rnd.choice(EDGE + [rnd.getrandbits(32)]))
    return a, b, c


def main():
    return abc_check.main("vmad", sys.argv, N, FORMS, inputs, ref)


if __name__ == "__main__":
    sys.exit(main())
