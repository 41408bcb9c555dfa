# tests/lower/ptx/gen_mma_f64_rnd.py: writes mma_f64_rnd.ptx next to it (python3 gen_mma_f64_rnd.py).
#
# mma.sync's .f64 forms (m8n8k4, sm_90's m16n8k4/k8/k16) in each rounding mode (.rn, .rz, .rm,
# .rp: ptxas 13 accepts all four, PTX ISA 9.7.14.5.14), unlowered against lowered
# (lower_diff_mma_f64_rnd).  The ISA defines the f64 mma as fma in k order from C; the emulator
# runs that chain in the mode and lower_mma's expansion builds each fma with it, so the two
# must agree bit for bit on inputs whose sums round: every operand is a 24-bit integer of a hash
# of `in` times 2^-e (e < 32), so the products are exact and nearly every sum is not.
# Every full warp hashes 16 words of `in` (at in + 64 * its thread index); D goes to out + 64 *
# the index.
import os
from ptxgen import warp_entry

SHAPES = [('m8n8k4', 1, 1, 2), ('m16n8k4', 2, 1, 4), ('m16n8k8', 4, 2, 4), ('m16n8k16', 8, 4, 4)]
MODES = ['rn', 'rz', 'rm', 'rp']

PROLOGUE = warp_entry() + """  mul.wide.u32 %rd3, %r5, 64;
  add.u64 %rd4, %rd1, %rd3;
  add.u64 %rd6, %rd2, %rd3;
  ld.global.v4.u32 {%r10, %r11, %r12, %r13}, [%rd4];
  ld.global.v4.u32 {%r14, %r15, %r16, %r17}, [%rd4+16];
  ld.global.v4.u32 {%r18, %r19, %r20, %r21}, [%rd4+32];
  ld.global.v4.u32 {%r22, %r23, %r24, %r25}, [%rd4+48];
"""

out = []
w = out.append
w("""// tests/lower/ptx/mma_f64_rnd.ptx: written by gen_mma_f64_rnd.py (python3 gen_mma_f64_rnd.py), do not edit.
// mma.sync .f64 in each rounding mode on sums that round, unlowered against lowered
// (lower_diff_mma_f64_rnd): see gen_mma_f64_rnd.py.
.version 8.5
.target sm_90
.address_size 64
""")
for shape, na, nb, nc in SHAPES:
    for mode in MODES:
        w(f"\n.visible .entry mma_{shape}_{mode}(.param .u64 in, .param .u64 out)\n{{\n")
        w("  .reg .pred %p<2>;\n  .reg .b32 %r<128>;\n  .reg .b64 %rd<16>;\n  .reg .f64 %fd<32>;\n\n")
        w(PROLOGUE)
        for j in range(16):   # a 24-bit integer (the hash's top bits) times 2^-(its low 5 bits), as f64 bits
            w(f"  mad.lo.u32 %r{30 + j}, %r{10 + j}, -1640531535, {0x7f4a7c15 * (j + 1) & 0xffffffff};\n")
            w(f"  shr.u32 %r{60 + j}, %r{30 + j}, 15;\n")
            w(f"  xor.b32 %r{30 + j}, %r{30 + j}, %r{60 + j};\n")
            w(f"  shr.s32 %r{80 + j}, %r{30 + j}, 8;\n")
            w(f"  cvt.rn.f64.s32 %fd{j}, %r{80 + j};\n")
            w(f"  mov.b64 %rd8, 0x3ff0000000000000;\n  cvt.u64.u32 %rd9, %r{30 + j};\n  and.b64 %rd9, %rd9, 31;\n")
            w(f"  shl.b64 %rd9, %rd9, 52;\n  sub.s64 %rd8, %rd8, %rd9;\n  mov.b64 %fd31, %rd8;\n")
            w(f"  mul.rn.f64 %fd{j}, %fd{j}, %fd31;\n")
        a = [f"%fd{j}" for j in range(na)]
        b = [f"%fd{8 + j}" for j in range(nb)]
        c = [f"%fd{12 + j}" for j in range(nc)]
        d = [f"%fd{20 + j}" for j in range(nc)]
        w(f"  mma.sync.aligned.{shape}.row.col.{mode}.f64.f64.f64.f64 {{{', '.join(d)}}},\n"
          f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n")
        for j in range(nc):
            w(f"  st.global.f64 [%rd6+{8 * j}], {d[j]};\n")
        w("DONE:\n  ret;\n}\n")

open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'mma_f64_rnd.ptx'), 'w').write(''.join(out))
