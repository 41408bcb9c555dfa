#!/usr/bin/env python3
"""tests/corpus/independent_scan.py: a second, deliberately simple reader of
fatbin containers, to cross-check the counts of tests/corpus/corpus_sweep.c
(which uses ptxwave's C readers) on a new toolkit.

    python3 tests/corpus/independent_scan.py /usr/local/cuda/lib64/*.so* \
        /usr/local/cuda/lib64/libcudadevrt.a

It shares no code with ptx/: it reads section headers with struct, finds the
magic 0xBA55ED50 anywhere in a section's bytes (bytes.find, any alignment),
accepts a container when its version is 1, its header 16 bytes and its
entries tile its size, and counts entry kinds.  It reports the alignment of
what it found, which is how the 8-byte address alignment rule of
docs/containers.md was established.  Prints the counts corpus_sweep.c
expects (PTXWAVE_CORPUS_EXPECT format at the end).
"""
import collections
import mmap
import os
import struct
import sys

MAGIC = struct.pack("<I", 0xBA55ED50)


def sections(m, base):
    if m[base:base + 4] != b"\x7fELF":
        return []
    shoff, = struct.unpack_from("<Q", m, base + 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", m, base + 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQ", m, base + shoff + i * shentsize) for i in range(shnum)]
    stroff = base + hdrs[shstrndx][4]
    out = []
    for name, typ, flags, addr, off, size in hdrs:
        end = m.find(b"\0", stroff + name)
        out.append((m[stroff + name:end].decode(), typ, addr, base + off, size))
    return out


def members(m):
    if m[:8] != b"!<arch>\n":
        return [0]
    bases, p = [], 8
    while p + 60 <= len(m):
        size = int(m[p + 48:p + 58].strip())
        bases.append(p + 60)
        p += 60 + size + ((60 + size) & 1)
    return bases


def main(paths):
    st = collections.Counter()
    seen = set()
    for path in paths:
        real = os.path.realpath(path)
        if real in seen:
            continue
        seen.add(real)
        with open(real, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                continue
            m = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
        found = 0
        for base in members(m):
            for name, typ, addr, off, size in sections(m, base):
                if typ == 8 or size == 0:  # SHT_NOBITS
                    continue
                p, end = off, off + size
                while True:
                    i = m.find(MAGIC, p, end)
                    if i < 0 or i + 16 > end:
                        break
                    ver, hs, fs = struct.unpack_from("<HHQ", m, i + 4)
                    if ver != 1 or hs != 16 or i + 16 + fs > end:
                        p = i + 4
                        continue
                    q, e, kinds = i + 16, i + 16 + fs, []
                    while q + 64 <= e:
                        kind, _, ehs, psz = struct.unpack_from("<HHIQ", m, q)
                        if ehs < 64 or q + ehs + psz > e:
                            break
                        kinds.append(kind)
                        q += ehs + psz
                    if q != e:
                        st["rejected (entries do not tile)"] += 1
                        p = i + 4
                        continue
                    found += 1
                    st["containers"] += 1
                    st[f"in {name}"] += 1
                    st[f"address mod 8 = {(addr + i - off) % 8}" if addr else
                       f"section offset mod 8 = {(i - off) % 8} (no address)"] += 1
                    for k in kinds:
                        st[f"kind {k}"] += 1
                    p = e
        if found:
            st["files"] += 1
            print(f"{path}: {found} containers")
    for k, v in sorted(st.items()):
        print(f"{k}: {v}")
    print("PTXWAVE_CORPUS_EXPECT=%d,%d,%d,%d,%d" % (st["files"], st["containers"], st["kind 1"],
                                                    st["kind 2"], st["kind 8"]))


if __name__ == "__main__":
    main(sys.argv[1:])
