#!/usr/bin/env python3
"""tests/lower/ptx/video_sel.py gen A B C | check A B C OUT: inputs for
tests/lower/ptx/video_sel.ptx and the check of its outputs against the
scalar video instructions with operand selectors, as the PTX ISA's
pseudocode gives them (9.7.18.1):

    ta = partSelectSignExtend(a, atype, asel): the selected byte (.b0-.b3)
         or half-word (.h0, .h1) of a, sign-extended for a signed atype,
         zero-extended otherwise; the whole of a without a selector
    tb likewise (b is .u32 for the shifts)
    tmp = ta op tb, exactly (shifts: .clamp -> min(tb, 32), .wrap -> tb & 31)
    tmp = optSaturate(tmp, sat, isSigned(dtype), dsel): with .sat, clamped
          to the range of dtype, or of the selected byte / half-word of
          dtype's signedness when d has a selector
    d = optSecondaryOp(op2, tmp, c): tmp + c, min, max (c by dtype)
    d = optMerge(dsel, tmp, c): c with the selected field replaced by the
        low bits of tmp
    the low 32 bits
and vset (9.7.18.1.4): tmp = compare(ta, tb, cmp) ? 1 : 0, then the same
secondary op or merge, with c and d unsigned.
"""
import random
import sys

import abc_check  # the gen/check driver these scripts share

N = 64
EDGE = [0, 1, 2, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
        0x80FF7F01, 0x12345678, 0xFE01807F, 0x00800080]

# (op, dtype, atype, btype, sat, op2, shift mode, asel, bsel, dsel) in the kernel's order;
# vset ("set") has no dtype: the second field is its comparison
FORMS = [
    ('add', 'u', 'u', 'u', False, None, None, 'b0', 'b1', None),
    ('add', 's', 's', 's', True, None, None, 'b3', 'h1', None),
    ('sub', 's', 's', 'u', False, 'add', None, 'h0', 'b2', None),
    ('absdiff', 'u', 's', 's', False, None, None, 'h1', 'h0', None),
    ('min', 's', 's', 's', False, 'max', None, 'b2', None, None),
    ('max', 'u', 'u', 's', False, None, None, None, 'b3', None),
    ('add', 'u', 'u', 'u', False, None, None, 'b2', 'h0', 'h1'),
    ('add', 's', 's', 's', True, None, None, 'b1', 'b3', 'b3'),
    ('sub', 'u', 'u', 'u', True, None, None, 'h1', 'b0', 'b0'),
    ('sub', 's', 's', 's', True, None, None, 'h0', 'h1', 'h0'),
    ('absdiff', 's', 'u', 's', False, None, None, None, None, 'b2'),
    ('max', 'u', 's', 'u', True, None, None, 'b0', 'h1', 'h1'),
    ('shl', 'u', 'u', 'u', False, None, 'clamp', 'h0', 'b2', 'b1'),
    ('shr', 's', 's', 'u', True, None, 'wrap', 'h1', 'b1', 'h0'),
    ('shl', 's', 's', 'u', True, 'add', 'clamp', 'b3', 'b0', None),
    ('set', 'lt', 's', 'u', False, None, None, None, None, None),
    ('set', 'ge', 'u', 's', False, 'add', None, 'b1', 'h1', None),
    ('set', 'eq', 's', 's', False, 'min', None, 'h0', 'h1', None),
    ('set', 'ne', 'u', 'u', False, 'max', None, 'b0', 'b3', None),
    ('set', 'gt', 's', 's', False, None, None, 'b2', 'b3', 'b1'),
    ('set', 'le', 's', 'u', False, None, None, 'h1', 'h0', 'h1'),
]

FIELD = {"b0": (0, 8), "b1": (8, 8), "b2": (16, 8), "b3": (24, 8), "h0": (0, 16), "h1": (16, 16)}


def select(v, t, sel):
    pos, n = FIELD[sel] if sel else (0, 32)
    x = (v >> pos) & ((1 << n) - 1)
    return x - (1 << n) if t == "s" and x >> (n - 1) else x


def ref(form, a, b, c):
    op, dt, at, bt, sat, op2, mode, asel, bsel, dsel = form
    ta, tb = select(a, at, asel), select(b, "u" if op in ("shl", "shr") else bt, bsel)
    if op == "set":
        # 9.7.18.1.4: the comparison is 1 or 0, "always unsigned, and
        # therefore destination d and operand c are also unsigned"
        cmp = {"eq": ta == tb, "ne": ta != tb, "lt": ta < tb, "le": ta <= tb, "gt": ta > tb, "ge": ta >= tb}[dt]
        t, dt = int(cmp), "u"
    elif op == "add": t = ta + tb
    elif op == "sub": t = ta - tb
    elif op == "absdiff": t = abs(ta - tb)
    elif op == "min": t = min(ta, tb)
    elif op == "max": t = max(ta, tb)
    else:
        tb = min(tb, 32) if mode == "clamp" else tb & 31
        t = ta << tb if op == "shl" else ta >> tb   # Python's >> is arithmetic
    pos, n = FIELD[dsel] if dsel else (0, 32)
    if sat:
        lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if dt == "s" else (0, (1 << n) - 1)
        t = max(lo, min(hi, t))
    if op2:
        tc = select(c, dt, None)
        t = t + tc if op2 == "add" else min(t, tc) if op2 == "min" else max(t, tc)
    if dsel:
        mask = ((1 << n) - 1) << pos
        t = (c & ~mask) | ((t << pos) & mask)
    return t & 0xFFFFFFFF


def inputs():
    rnd = random.Random(2018)
    a, b, c = [], [], []
    for i in range(N):
        if i < 32:
            a.append(EDGE[i % len(EDGE)])
            b.append(EDGE[(i * 7 + 3) % len(EDGE)])
        else:
            a.append(rnd.getrandbits(32))
            b.append(rnd.choice([rnd.getrandbits(32), rnd.randrange(40) << rnd.choice([0, 8, 16, 24])]))
        c.append(rnd.choice(EDGE + [rnd.getrandbits(32)]))
    # equal operands and swapped half-words, so that vset's eq/le/ge hold
    for i in range(56, N):
        b[i] = a[i] if i % 2 else ((a[i] << 16) | (a[i] >> 16)) & 0xFFFFFFFF
    return a, b, c


def main():
    return abc_check.main("video_sel", sys.argv, N, FORMS, inputs, ref)


if __name__ == "__main__":
    sys.exit(main())
