#!/usr/bin/env python3
"""Inputs and host reference for bulk_reduce.ptx (cp.reduce.async.bulk).

  bulk_reduce.py gen IO      writes the 2304-byte buffer (destinations, sources)
  bulk_reduce.py check IN IO prints "region R ok" or the first difference

The reference is this file's own arithmetic on Python integers and floats
(each element: dst = dst op src, the PTX ISA's atom/red definitions of the
operation: inc = old >= b ? 0 : old + 1, dec = old == 0 || old > b ? b :
old - 1; float additions rounded to nearest even in the destination type),
not the emulator's.  Floats avoid subnormals where the ISA flushes (f32 add)
and NaN; f16 add.noftz has a subnormal operand, which it keeps."""
import struct
import sys

# (region, op, type): the order of bulk_reduce.ptx; 16 and 17 are the cluster forms
REGIONS = [("add", "u32"), ("min", "s32"), ("max", "u32"), ("inc", "u32"), ("dec", "u32"),
           ("and", "b32"), ("or", "b64"), ("xor", "b64"), ("add", "u64"), ("min", "s64"),
           ("add", "f32"), ("add", "f64"), ("add", "f16"), ("add", "bf16"), ("min", "f16"),
           ("max", "bf16"), ("add", "u32"), ("xor", "b32")]
FMT = {"u32": "<16I", "s32": "<16i", "b32": "<16I", "b64": "<8Q", "u64": "<8Q", "s64": "<8q",
       "f32": "<16f", "f64": "<8d", "f16": "<32H", "bf16": "<32H"}


def lcg(seed):
    x = seed
    while True:
        x = (x * 6364136223846793005 + 1442695040888963407) & (2**64 - 1)
        yield x >> 11


def f16_bits(v):
    return struct.unpack("<H", struct.pack("<e", v))[0]


def f16_val(b):
    return struct.unpack("<e", struct.pack("<H", b))[0]


def bf16_val(b):
    return struct.unpack("<f", struct.pack("<I", b << 16))[0]


def bf16_bits(v):
    # double -> f32 is exact for the sums below (operands within 2^10 of each
    # other); f32 -> bf16 rounds to nearest even
    u = struct.unpack("<I", struct.pack("<f", v))[0]
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def values(r, op, ty, rnd, src):
    n = 8 if ty in ("b64", "u64", "s64", "f64") else 32 if ty in ("f16", "bf16") else 16
    if ty in ("u32", "b32"):
        if op in ("inc", "dec"):
            return [5] * n if src else [0, 1, 4, 5, 6, 7, 0xFFFFFFFF, 2, 3, 9, 0, 5, 100, 4, 1, 6]
        return [next(rnd) & 0xFFFFFFFF for _ in range(n)]
    if ty == "s32":
        return [(next(rnd) % 2001) - 1000 for _ in range(n)]
    if ty in ("b64", "u64"):
        return [next(rnd) & (2**64 - 1) for _ in range(n)]
    if ty == "s64":
        return [(next(rnd) % (2**40)) - 2**39 for _ in range(n)]
    if ty == "f32":
        return [struct.unpack("<f", struct.pack("<f", ((next(rnd) % 20001) - 10000) / 64.0))[0] for _ in range(n)]
    if ty == "f64":
        return [((next(rnd) % 2000001) - 1000000) / 1024.0 + 1.0 / 3.0 for _ in range(n)]
    if ty == "f16":
        v = [f16_bits(((next(rnd) % 4001) - 2000) / 16.0) for _ in range(n)]
        if not src:
            v[3] = 0x0001  # a subnormal: add.noftz keeps it
        return v
    if ty == "bf16":
        return [bf16_bits(((next(rnd) % 4001) - 2000) / 8.0) for _ in range(n)]
    raise ValueError(ty)


def reduce(op, ty, a, b):
    if ty == "f16":
        x, y = f16_val(a), f16_val(b)
        return f16_bits(x + y if op == "add" else min(x, y) if op == "min" else max(x, y))
    if ty == "bf16":
        x, y = bf16_val(a), bf16_val(b)
        return bf16_bits(x + y if op == "add" else min(x, y) if op == "min" else max(x, y))
    if ty == "f32":
        return struct.unpack("<f", struct.pack("<f", a + b))[0]
    if ty == "f64":
        return a + b
    bits = 64 if ty.endswith("64") else 32
    m = 2**bits - 1
    if op == "add":
        return (a + b) & m
    if op == "min":
        return min(a, b)
    if op == "max":
        return max(a, b)
    if op == "inc":
        return 0 if a >= b else a + 1
    if op == "dec":
        return b if a == 0 or a > b else a - 1
    if op == "and":
        return a & b
    if op == "or":
        return a | b
    if op == "xor":
        return a ^ b
    raise ValueError(op)


def main():
    if sys.argv[1] == "gen":
        rnd = lcg(20)
        dst, src = b"", b""
        for r, (op, ty) in enumerate(REGIONS):
            dst += struct.pack(FMT[ty], *values(r, op, ty, rnd, False))
            src += struct.pack(FMT[ty], *values(r, op, ty, rnd, True))
        open(sys.argv[2], "wb").write(dst + src)
        return
    inp, out = open(sys.argv[2], "rb").read(), open(sys.argv[3], "rb").read()
    for r, (op, ty) in enumerate(REGIONS):
        d = struct.unpack(FMT[ty], inp[r * 64:r * 64 + 64])
        s = struct.unpack(FMT[ty], inp[1152 + r * 64:1152 + r * 64 + 64])
        got = struct.unpack(FMT[ty], out[r * 64:r * 64 + 64])
        want = [reduce(op, ty, a, b) for a, b in zip(d, s)]
        bad = [k for k in range(len(want)) if struct.pack(FMT[ty][-1], got[k]) != struct.pack(FMT[ty][-1], want[k])]
        if bad:
            k = bad[0]
            print(f"region {r} {op}.{ty}: element {k}: {d[k]!r} op {s[k]!r} = {got[k]!r}, want {want[k]!r}")
        else:
            print(f"region {r} ok")


main()
