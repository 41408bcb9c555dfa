"""tests/lower/ptx/abc_check.py: the driver the pseudocode checkers share
(video.py, video_sel.py, video_simd.py, vmad.py).

Each of those scripts reads a PTX instruction family's pseudocode as a
Python `ref(form, a, b, c)` over N threads' 32-bit operands a, b, c and a
list of FORMS; a kernel writes one 32-bit result per thread and form.

    SCRIPT gen A B C         writes N little-endian u32 inputs per file
    SCRIPT check A B C OUT   compares OUT (N * len(FORMS) words, thread
                             major) with ref, prints the first mismatches
"""
import struct


def main(name, argv, n, forms, inputs, ref, spell=str):
    if argv[1] == "gen":
        for path, vals in zip(argv[2:5], inputs()):
            with open(path, "wb") as f:
                f.write(struct.pack(f"<{n}I", *vals))
        return 0
    a, b, c = (list(struct.unpack(f"<{n}I", open(p, "rb").read())) for p in argv[2:5])
    out = struct.unpack(f"<{n * len(forms)}I", open(argv[5], "rb").read())
    bad = 0
    for t in range(n):
        for k, form in enumerate(forms):
            want, got = ref(form, a[t], b[t], c[t]), out[t * len(forms) + k]
            if want != got:
                bad += 1
                if bad <= 10:
                    print(f"thread {t} form {k} {spell(form)}: a={a[t]:#x} b={b[t]:#x} c={c[t]:#x}: "
                          f"got {got:#x}, want {want:#x}")
    print(f"{name}: OK" if not bad else f"{name}: {bad} mismatches")
    return 1 if bad else 0
