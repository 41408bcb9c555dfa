#!/usr/bin/env python3
"""tests/codegen/unbundle.py BUNDLE OUTDIR: reads a clang offload bundle
(the format clang-offload-bundler writes: "__CLANG_OFFLOAD_BUNDLE__", u64
entry count, per entry u64 offset, u64 size, u64 id length, id), prints
"ID SIZE" per entry and writes each non-empty entry to OUTDIR/ID.  An
implementation independent of ptxwave's writer, for its tests."""
import os
import struct
import sys

data = open(sys.argv[1], "rb").read()
if data[:24] != b"__CLANG_OFFLOAD_BUNDLE__":
    sys.exit("not an offload bundle")
(n,) = struct.unpack_from("<Q", data, 24)
pos = 32
for _ in range(n):
    off, size, idlen = struct.unpack_from("<QQQ", data, pos)
    ident = data[pos + 24:pos + 24 + idlen].decode()
    pos += 24 + idlen
    if off + size > len(data):
        sys.exit(f"{ident}: entry past the end")
    print(ident, size)
    if size:
        with open(os.path.join(sys.argv[2], ident), "wb") as f:
            f.write(data[off:off + size])
