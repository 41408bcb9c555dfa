#!/usr/bin/env python3
"""Input and reference for tensormap_replace.ptx.

  tensormap_replace.py gen IO       two tensor maps (the second all zero)
  tensormap_replace.py check IO     prints each field's check

The layout is ir/ir_tensormap.h's, written out here by hand; the expected
fields follow PTX ISA 9.7.9.26 (.rank takes the rank minus one, .elemtype
the ISA's codes: 10 is .bf16, CUtensorMapDataType 9, 2 bytes)."""
import struct
import sys

FMT = "<QIBBBB5I5BB5H4x4Q40x"
NAMES = ["addr", "magic", "rank", "ebytes", "swizzle", "nan", "dim0", "dim1", "dim2", "dim3", "dim4",
         "es0", "es1", "es2", "es3", "es4", "dtype", "box0", "box1", "box2", "box3", "box4",
         "st0", "st1", "st2", "st3"]


def start():
    # a 2-d f32 map: 48 x 40, stride 192, box 16 x 8, element strides 1
    return dict(addr=0x400000, magic=0x50414D54, rank=2, ebytes=4, swizzle=0, nan=0, dim0=47, dim1=39, dim2=0,
                dim3=0, dim4=0, es0=1, es1=1, es2=1, es3=1, es4=1, dtype=7, box0=16, box1=8, box2=1, box3=1,
                box4=1, st0=192, st1=0, st2=0, st3=0)


def pack(d):
    return struct.pack(FMT, *[d[n] for n in NAMES])


def main():
    if sys.argv[1] == "gen":
        open(sys.argv[2], "wb").write(pack(start()) + bytes(128))
        return
    out = open(sys.argv[2], "rb").read()
    want = start()
    want.update(addr=0x1122334455667780, rank=3, box1=64, dim2=999, st1=0x12340, es3=4, dtype=9, ebytes=2,
                swizzle=2, nan=1)
    copy = dict(want, box0=200, addr=0x600000)
    want.update(es2=7)   # the generic replace, after the copy
    for k, (exp, blob) in enumerate(((want, out[:128]), (copy, out[128:256]))):
        got = dict(zip(NAMES, struct.unpack(FMT, blob)))
        bad = [n for n in NAMES if got[n] != exp[n]]
        print(f"map {k}: " + ("ok" if not bad else ", ".join(f"{n} = {got[n]:#x}, want {exp[n]:#x}" for n in bad)))


main()
