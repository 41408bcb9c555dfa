#!/usr/bin/env python3
"""tests/lower/ptx/mma_f8.py: inputs and the reference for mma_f8.ptx.

    mma_f8.py gen A Bt C          writes the three input files
    mma_f8.py check A Bt C OUT    compares OUT (the kernel's output) with
                                  the exact products, prints "mma_f8: OK"
                                  or the mismatches

The reference decodes e4m3 (bias 7, 3 mantissa bits, no infinity) and e5m2
(bias 15, 2 mantissa bits) from their definitions (PTX ISA 5.2.5.1
"Alternate floating point data formats"), sums exactly with fractions and
rounds once: to f32 for D1/D2 (exact: the inputs below make every sum a
short binary fraction) and to f16 for D3 (round to nearest even by
struct's 'e' format).  The inputs are bytes of small values (0, +-0.5,
+-1, +-1.5, +-2, +-3, +-4 in e4m3), which the e5m2 reading of the same
bytes turns into other short values (0.125 .. 8).
"""
import random
import struct
import sys
from fractions import Fraction


def decode(b, ebits, mbits, bias):
    s = -1 if b & 0x80 else 1
    e = (b >> mbits) & ((1 << ebits) - 1)
    m = b & ((1 << mbits) - 1)
    if e == 0:
        return s * Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return s * (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


def e4m3(b):
    return decode(b, 4, 3, 7)


def e5m2(b):
    return decode(b, 5, 2, 15)


NICE = [0x00, 0x30, 0x38, 0x3C, 0x40, 0x44, 0x48]  # e4m3: 0, 0.5, 1, 1.5, 2, 3, 4


def gen(pa, pb, pc):
    r = random.Random(0xF8)
    pick = lambda: r.choice(NICE) | (0x80 if r.random() < 0.5 else 0)
    open(pa, 'wb').write(bytes(pick() for _ in range(16 * 32)))
    open(pb, 'wb').write(bytes(pick() for _ in range(8 * 32)))
    open(pc, 'wb').write(struct.pack('<128f', *[float(r.randint(-100, 100)) for _ in range(128)]))


def check(pa, pb, pc, po):
    A = open(pa, 'rb').read()
    Bt = open(pb, 'rb').read()
    C = struct.unpack('<128f', open(pc, 'rb').read())
    out = open(po, 'rb').read()
    D1 = struct.unpack_from('<128f', out, 0)
    D2 = struct.unpack_from('<128f', out, 512)
    D3 = struct.unpack_from('<128e', out, 1024)
    bad = 0
    for m in range(16):
        for n in range(8):
            o = m * 8 + n
            c = Fraction(C[o])
            s1 = c + sum(e4m3(A[m * 32 + k]) * e4m3(Bt[n * 32 + k]) for k in range(32))
            s2 = c + sum(e5m2(A[m * 32 + k]) * e4m3(Bt[n * 32 + k]) for k in range(32))
            s3 = c + sum(e4m3(A[m * 32 + k]) * e5m2(Bt[n * 32 + k]) for k in range(16))
            w1 = struct.unpack('<f', struct.pack('<f', float(s1)))[0]
            w2 = struct.unpack('<f', struct.pack('<f', float(s2)))[0]
            w3 = struct.unpack('<e', struct.pack('<e', float(s3)))[0]
            for name, got, want, exact in (('D1', D1[o], w1, s1), ('D2', D2[o], w2, s2), ('D3', D3[o], w3, None)):
                if got != want or (exact is not None and Fraction(want) != exact):
                    bad += 1
                    if bad <= 10:
                        print(f'mma_f8: {name}[{m}][{n}] = {got}, want {want}')
    print('mma_f8: OK' if bad == 0 else f'mma_f8: FAIL ({bad} mismatches)')
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == 'gen':
        gen(*sys.argv[2:])
    elif len(sys.argv) == 6 and sys.argv[1] == 'check':
        sys.exit(check(*sys.argv[2:]))
    else:
        sys.exit('usage: mma_f8.py gen A Bt C | check A Bt C OUT')
