#!/usr/bin/env python3
"""Inputs and reference for gather4.ptx.

  gather4.py gen MAP DATA    the tensor map (ir/ir_tensormap.h's layout,
                             packed here by hand; its address is set by the
                             kernel) and the 16 x 12 u32 tensor
  gather4.py check DATA OUT  the tensor after the scatter, the gathered rows

The expected values follow the ISA's gather4/scatter4 description written
out here: row k of the four is box[0] = 8 elements from the column on, an
element outside the tensor reads as zero and is not written."""
import struct
import sys

W, H, BOX0 = 16, 12, 8
FMT = "<QIBBBB5I5BB5H4x4Q40x"


def val(y, x):
    return y * 100 + x


def main():
    if sys.argv[1] == "gen":
        # addr 0 (replaced), magic, rank 2, 4-byte elements, no swizzle, zero fill,
        # dims - 1, element strides 1, UINT32, box 8 x 1, row stride 64 bytes
        m = struct.pack(FMT, 0, 0x50414D54, 2, 4, 0, 0, W - 1, H - 1, 0, 0, 0, 1, 1, 1, 1, 1, 2, BOX0, 1, 1, 1, 1,
                        W * 4, 0, 0, 0)
        open(sys.argv[2], "wb").write(m)
        open(sys.argv[3], "wb").write(struct.pack(f"<{W * H}I", *[val(y, x) for y in range(H) for x in range(W)]))
        return
    data = struct.unpack(f"<{W * H}I", open(sys.argv[2], "rb").read())
    out = struct.unpack("<32I", open(sys.argv[3], "rb").read())
    want_g = []
    for row in (5, 11, 0, 14):
        for x in range(12, 12 + BOX0):
            want_g.append(val(row, x) if x < W and row < H else 0)
    want_d = {(y, x): val(y, x) for y in range(H) for x in range(W)}
    for k, row in enumerate((2, 7, 20, 3)):
        for j, x in enumerate(range(-4, -4 + BOX0)):
            if 0 <= x < W and 0 <= row < H:
                want_d[(row, x)] = 5000 + k * BOX0 + j
    print("gather " + ("ok" if list(out) == want_g else f"{list(out)} want {want_g}"))
    bad = [(y, x) for y in range(H) for x in range(W) if data[y * W + x] != want_d[(y, x)]]
    print("scatter " + ("ok" if not bad else f"{len(bad)} wrong, first {bad[0]}: {data[bad[0][0] * W + bad[0][1]]}, "
                                            f"want {want_d[bad[0]]}"))


main()
