# tests/lower/ptx/gen_mma_u8.py: writes mma_u8.ptx next to it (python3 gen_mma_u8.py).
#
# Every .s8/.u8 mix of the integer mma.sync forms (PTX ISA 9.7.14.5.14):
# m16n8k16, m16n8k32 and m8n8k16 (which lower/ runs as m16n8k16), A and B
# each .s8 or .u8, wrapping and .satfinite: one kernel per shape, its eight
# mma side by side.  On RDNA3/RDNA4 the iu8 WMMA reads an unsigned operand
# as it is (the row's sign flag, ir/ir_amd_matrix.def); on the i8 MFMA it is
# split into signed bytes + 256 x its top bits (lower_mma_amd.c, lower_i8).
# A wrong sign flag, or NVIDIA's A sign given to WMMA's A (the scheme is
# transposed: WMMA's A is B^T), reads bytes >= 128 as negative: so the bytes
# are a hash of the input (every pattern: half of them >= 128), and one A
# register and one B register of each mma have every byte >= 128 (the hash
# with 0x80808080 set: the largest magnitudes, where a sign error changes
# every product).  C is near INT32_MAX for half of the threads' elements and
# near INT32_MIN for the other half (the hash's bit 0), so that the .u8
# sums (up to 32 x 255 x 255 = 2080800) carry the wrapping forms past the
# end of the range and the .satfinite ones into the clamp, and small for
# the rest.  Integer sums are exact: the lowered runs must be bit-identical
# to the unlowered one (lower_diff_mma_u8).
import os
from ptxgen import warp_entry

SIGNS = [('s8', 's8'), ('u8', 's8'), ('s8', 'u8'), ('u8', 'u8')]
SHAPES = [  # (shape, A regs, B regs, C/D regs)
    ('m16n8k16', 2, 1, 4),
    ('m16n8k32', 4, 2, 4),
    ('m8n8k16', 1, 1, 2),
]

out = []
w = out.append
w("""// tests/lower/ptx/mma_u8.ptx: written by gen_mma_u8.py (python3 gen_mma_u8.py), do not edit.
// Every .s8/.u8 mix of mma.sync m16n8k16, m16n8k32 and m8n8k16, wrapping and .satfinite, on
// bytes >= 128 and C near the ends of the s32 range, unlowered against lowered
// (lower_diff_mma_u8): see gen_mma_u8.py.
.version 8.5
.target sm_80
.address_size 64
""")

for shape, na, nb, nc in SHAPES:
    nmma = 2 * len(SIGNS)
    stride = nmma * nc * 4
    w(f"\n.visible .entry mma_u8_{shape}(.param .u64 in, .param .u64 out)\n{{\n")
    w("  .reg .pred %p<2>;\n  .reg .b32 %r<200>;\n  .reg .b64 %rd<16>;\n\n")
    w(warp_entry())
    w(f"""  mul.wide.u32 %rd3, %r5, 64;
  add.u64 %rd4, %rd1, %rd3;
  mul.wide.u32 %rd5, %r5, {stride};
  add.u64 %rd6, %rd2, %rd5;
  ld.global.v4.u32 {{%r10, %r11, %r12, %r13}}, [%rd4];
  ld.global.v4.u32 {{%r14, %r15, %r16, %r17}}, [%rd4+16];
""")
    # %r30..%r37: hashes of the eight words (every bit pattern)
    for j in range(8):
        w(f"  mad.lo.u32 %r{30 + j}, %r{10 + j}, -1640531535, {0x7f4a7c15 * (j + 1) & 0xffffffff};\n")
        w(f"  shr.u32 %r{60 + j}, %r{30 + j}, 15;\n")
        w(f"  xor.b32 %r{30 + j}, %r{30 + j}, %r{60 + j};\n")
    # A: hashed registers, the last one with every byte >= 128; B likewise (its first)
    w(f"  or.b32 %r{30 + na - 1}, %r{30 + na - 1}, -2139062144;   // 0x80808080\n")
    w("  or.b32 %r34, %r34, -2139062144;\n")
    a = [f"%r{30 + j}" for j in range(na)]
    b = [f"%r{34 + j}" for j in range(nb)]
    # C: the hash's bit 0 picks near INT32_MAX / INT32_MIN (by element parity) or small
    w("""  and.b32 %r40, %r36, 1023;
  sub.s32 %r40, %r40, 512;
  and.b32 %r41, %r36, 1;
  setp.ne.u32 %p1, %r41, 0;
  add.s32 %r42, %r40, 2147483000;
  selp.b32 %r50, %r42, %r40, %p1;
  sub.s32 %r43, %r40, 2147483000;
  selp.b32 %r51, %r43, %r40, %p1;
  neg.s32 %r52, %r50;
  neg.s32 %r53, %r51;
""")
    c = ["%r50", "%r51", "%r52", "%r53"][:nc]
    k = 0
    for at, bt in SIGNS:
        for sat in (False, True):
            d = [f"%r{100 + nc * k + j}" for j in range(nc)]
            mods = '.satfinite' if sat else ''
            w(f"  mma.sync.aligned.{shape}.row.col{mods}.s32.{at}.{bt}.s32 {{{', '.join(d)}}},\n"
              f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n")
            for j in range(nc):
                w(f"  st.global.u32 [%rd6+{4 * (nc * k + j)}], {d[j]};\n")
            k += 1
    w("DONE:\n  ret;\n}\n")

here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(here, 'mma_u8.ptx'), 'w').write(''.join(out))
