#!/usr/bin/env python3
"""tests/lower/ptx/mma_f8f6f4.py: inputs and the reference for mma_f8f6f4.ptx.

    mma_f8f6f4.py gen A Bt C S          writes the four input files
    mma_f8f6f4.py check A Bt C S OUT    compares OUT (the kernel's output) with
                                        the exact results, prints
                                        "mma_f8f6f4: OK" or the mismatches

The reference decodes every format from its definition (PTX ISA 5.2.5.x,
the OCP 8-bit and MX formats: sign, exponent, mantissa, bias; e4m3 and
e5m2 as in mma_f8.py, e3m2 bias 3, e2m3 bias 1, e2m1 bias 1, no infinity or
NaN in the last three), reads the fp6 value from bits 5..0 of its byte and
the fp4 one from bits 5..2 (.kind::f8f6f4) or from a nibble (m16n8k64),
sums exactly with fractions and rounds once to f32.  Block scaling
(9.7.14.3): D = C + sum over the blocks j of SF_A[m][j] SF_B[j][n] (sum over
block j of a b), SF_A[m][j] byte byte-id-a + j of scale-a-data in lane
4 (m & 7) + 2 thread-id-a + (m >> 3), SF_B[j][n] byte byte-id-b + j in lane
4 n + thread-id-b; ue8m0 is 2^(e - 127), ue4m3 an unsigned e4m3.

Inputs: the A operand of D1, D2, D3 and D4 runs through every code of its
format (every fp6/fp4 value, subnormals and both zeros included, over the
512 elements), the B operands and D5/D6's A are random codes of short
values, the scales powers of two from 1/4 to 4 (ue8m0) or ue4m3 values
0.5 .. 2: every sum is exact in f32.
"""
import random
import struct
import sys
from fractions import Fraction


def decode(b, ebits, mbits, bias):
    s = -1 if (b >> (ebits + mbits)) & 1 else 1
    e = (b >> mbits) & ((1 << ebits) - 1)
    m = b & ((1 << mbits) - 1)
    if e == 0:
        return s * Fraction(m, 1 << mbits) * Fraction(2) ** (1 - bias)
    return s * (1 + Fraction(m, 1 << mbits)) * Fraction(2) ** (e - bias)


FMT = {  # ebits, mbits, bias
    'e4m3': (4, 3, 7), 'e5m2': (5, 2, 15), 'e3m2': (3, 2, 3), 'e2m3': (2, 3, 1), 'e2m1': (2, 1, 1),
}


def value(t, byte):
    """An element of type t in its byte (.kind::f8f6f4's containers)."""
    if t == 'e3m2' or t == 'e2m3':
        byte &= 0x3F
    elif t == 'e2m1':
        byte = (byte >> 2) & 0xF
    return decode(byte, *FMT[t])


def encode(t, v):
    """The code of value v in type t (v one of the short values below)."""
    eb, mb, bias = FMT[t]
    for c in range(1 << (1 + eb + mb)):
        if decode(c, eb, mb, bias) == v and (v != 0 or c == 0):
            return c
    raise ValueError((t, v))


SHORT = [Fraction(x, 2) for x in (0, 1, 2, 3, 4, 6, 8)]   # 0, 0.5, 1, 1.5, 2, 3, 4

# (A type, B type, shape k, scale: None or (type, vec, bid_a, tid_a, bid_b, tid_b, scale words))
FORMS = [
    ('e2m1', 'e3m2', 32, None),
    ('e2m3', 'e4m3', 32, None),
    ('e3m2', 'e2m3', 32, None),
    ('e2m1', 'e4m3', 32, ('ue8m0', 1, 1, 1, 2, 3, 0)),
    ('e2m1', 'e2m1', 64, ('ue8m0', 2, 2, 0, 0, 1, 0)),
    ('e2m1', 'e2m1', 64, ('ue4m3', 4, 0, 1, 0, 2, 2)),
]


def container(t, code):
    return code << 2 if t == 'e2m1' else code


def gen(pa, pb, pc, ps):
    r = random.Random(0xF8F6F4)
    short = lambda t: container(t, encode(t, r.choice(SHORT)) | (1 << (sum(FMT[t][:2]))) * (r.random() < 0.5))
    A, B = bytearray(), bytearray()
    for s, (ta, tb, k, sc) in enumerate(FORMS):
        if k == 32 and s < 4:   # every code of A's format, in turn
            n = 1 << (1 + sum(FMT[ta][:2]))
            A += bytes(container(ta, i % n) for i in range(512))
        else:                   # m16n8k64: two random e2m1 nibbles a byte
            A += bytes(r.randrange(16) | r.randrange(16) << 4 for _ in range(512))
        if k == 32:
            B += bytes(short(tb) for _ in range(256))
        else:
            B += bytes(r.randrange(16) | r.randrange(16) << 4 for _ in range(256))
    open(pa, 'wb').write(bytes(A))
    open(pb, 'wb').write(bytes(B))
    open(pc, 'wb').write(struct.pack('<128f', *[float(r.randint(-100, 100)) for _ in range(128)]))
    e8 = lambda: 125 + r.randrange(5)                        # 2^-2 .. 2^2
    u43 = lambda: r.choice([0x30, 0x38, 0x3C, 0x40])         # ue4m3 0.5, 1, 1.5, 2
    words = [sum(e8() << (8 * i) for i in range(4)) for _ in range(64)]
    words += [sum(u43() << (8 * i) for i in range(4)) for _ in range(64)]
    open(ps, 'wb').write(struct.pack('<128I', *words))


def f32(x):
    return struct.unpack('<f', struct.pack('<f', float(x)))[0]


def check(pa, pb, pc, ps, po):
    A = open(pa, 'rb').read()
    Bt = open(pb, 'rb').read()
    C = struct.unpack('<128f', open(pc, 'rb').read())
    S = struct.unpack('<128I', open(ps, 'rb').read())
    out = open(po, 'rb').read()
    bad = 0
    for s, (ta, tb, K, sc) in enumerate(FORMS):
        D = struct.unpack_from('<128f', out, 512 * s)
        a, bt = A[512 * s:512 * (s + 1)], Bt[256 * s:256 * (s + 1)]
        # the elements decoded once: Av[m][k], Bv[n][k]
        if K == 32:
            Av = [[value(ta, a[m * 32 + k]) for k in range(K)] for m in range(16)]
            Bv = [[value(tb, bt[n * 32 + k]) for k in range(K)] for n in range(8)]
        else:
            nib = lambda buf, i: (buf[i >> 1] >> (4 * (i & 1))) & 0xF
            Av = [[decode(nib(a, m * 64 + k), *FMT['e2m1']) for k in range(K)] for m in range(16)]
            Bv = [[decode(nib(bt, n * 64 + k), *FMT['e2m1']) for k in range(K)] for n in range(8)]
        av = lambda m, k: Av[m][k]
        bv = lambda k, n: Bv[n][k]
        for m in range(16):
            for n in range(8):
                o = m * 8 + n
                if sc is None:
                    want = Fraction(C[o]) + sum(av(m, k) * bv(k, n) for k in range(K))
                else:
                    st, vec, bida, tida, bidb, tidb, base = sc
                    sa_w = S[64 * (base // 2) + 4 * (m & 7) + 2 * tida + (m >> 3)]
                    sb_w = S[64 * (base // 2) + 32 + 4 * n + tidb]
                    sv = (lambda x: Fraction(2) ** (x - 127)) if st == 'ue8m0' else (lambda x: decode(x & 0x7F, 4, 3, 7))
                    want = Fraction(C[o])
                    bk = K // vec
                    for j in range(vec):
                        sa = sv((sa_w >> (8 * (bida + j))) & 0xFF)
                        sb = sv((sb_w >> (8 * (bidb + j))) & 0xFF)
                        want += sa * sb * sum(av(m, k) * bv(k, n) for k in range(j * bk, (j + 1) * bk))
                w = f32(want)
                if Fraction(w) != want:
                    print(f'mma_f8f6f4: D{s + 1}[{m}][{n}]: the reference sum {want} is not exact in f32 (test inputs)')
                    bad += 1
                elif D[o] != w:
                    bad += 1
                    if bad <= 10:
                        print(f'mma_f8f6f4: D{s + 1}[{m}][{n}] = {D[o]}, want {w}')
    print('mma_f8f6f4: OK' if bad == 0 else f'mma_f8f6f4: FAIL ({bad} mismatches)')
    return 1 if bad else 0


if __name__ == '__main__':
    if len(sys.argv) == 6 and sys.argv[1] == 'gen':
        gen(*sys.argv[2:])
    elif len(sys.argv) == 7 and sys.argv[1] == 'check':
        sys.exit(check(*sys.argv[2:]))
    else:
        sys.exit('usage: mma_f8f6f4.py gen A Bt C S | check A Bt C S OUT')
