# tests/lower/ptx/gen_mma_forms.py: writes mma_forms.ptx next to it (python3 gen_mma_forms.py).
#
# The mma.sync forms beyond sm_80's f16/bf16/tf32/s8/fp8 m16n8 ones
# (PTX ISA 9.7.14.5.14): Turing's m8n8k16 .s8/.u8, the .s4/.u4 shapes
# m8n8k32, m16n8k32 and m16n8k64, the .b1 shapes m8n8k128, m16n8k128 and
# m16n8k256 with .and.popc and .xor.popc, sm_90's .f64 m16n8k4/k8/k16 and Volta's
# m8n8k4 .f16 in every layout pair.
# One kernel per form.  Every full warp (a partial warp takes no part:
# .aligned) hashes 16 words of `in` (at in + 64 * its thread index) into
# its fragment registers: integer forms take every bit pattern (their sums
# are exact, so any order gives the same D), and the .satfinite forms take
# C near INT32_MAX / INT32_MIN so that the clamp is reached; .f64 takes
# small integers (w & 15) - 8, exact in any order.  D goes to out + 64 * the
# index; lower_diff_ptx compares all of `out`, unlowered against lowered.
import os
from ptxgen import warp_entry

INT = [  # (name, shape, atype, btype, A regs, B regs, C/D regs, satfinite, b1 op)
    ('m8n8k16_s8s8', 'm8n8k16', 's8', 's8', 1, 1, 2, False, None),
    ('m8n8k16_u8s8', 'm8n8k16', 'u8', 's8', 1, 1, 2, False, None),
    ('m8n8k16_s8u8_sat', 'm8n8k16', 's8', 'u8', 1, 1, 2, True, None),
    ('m8n8k16_u8u8_sat', 'm8n8k16', 'u8', 'u8', 1, 1, 2, True, None),
    ('m8n8k32_s4s4', 'm8n8k32', 's4', 's4', 1, 1, 2, False, None),
    ('m8n8k32_u4s4_sat', 'm8n8k32', 'u4', 's4', 1, 1, 2, True, None),
    ('m8n8k32_u4u4', 'm8n8k32', 'u4', 'u4', 1, 1, 2, False, None),
    ('m16n8k32_s4s4', 'm16n8k32', 's4', 's4', 2, 1, 4, False, None),
    ('m16n8k32_s4u4_sat', 'm16n8k32', 's4', 'u4', 2, 1, 4, True, None),
    ('m16n8k32_u4u4', 'm16n8k32', 'u4', 'u4', 2, 1, 4, False, None),
    ('m16n8k64_s4s4_sat', 'm16n8k64', 's4', 's4', 4, 2, 4, True, None),
    ('m16n8k64_u4s4', 'm16n8k64', 'u4', 's4', 4, 2, 4, False, None),
    ('m16n8k64_u4u4_sat', 'm16n8k64', 'u4', 'u4', 4, 2, 4, True, None),
    ('m8n8k128_xor', 'm8n8k128', 'b1', 'b1', 1, 1, 2, False, 'xor'),
    ('m8n8k128_and', 'm8n8k128', 'b1', 'b1', 1, 1, 2, False, 'and'),
    ('m16n8k128_xor', 'm16n8k128', 'b1', 'b1', 2, 1, 4, False, 'xor'),
    ('m16n8k128_and', 'm16n8k128', 'b1', 'b1', 2, 1, 4, False, 'and'),
    ('m16n8k256_xor', 'm16n8k256', 'b1', 'b1', 4, 2, 4, False, 'xor'),
    ('m16n8k256_and', 'm16n8k256', 'b1', 'b1', 4, 2, 4, False, 'and'),
]
F64 = [('m16n8k4_f64', 'm16n8k4', 2, 1), ('m16n8k8_f64', 'm16n8k8', 4, 2), ('m16n8k16_f64', 'm16n8k16', 8, 4)]

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
w("""// tests/lower/ptx/mma_forms.ptx: written by gen_mma_forms.py (python3 gen_mma_forms.py), do not edit.
// The sm_75/sm_80 integer and sub-byte mma.sync forms and sm_90's .f64 m16n8 shapes, unlowered
// against lowered (lower_diff_mma_forms): see gen_mma_forms.py.
.version 8.5
.target sm_90
.address_size 64
""")

for name, shape, at, bt, na, nb, nc, sat, op in INT:
    w(f"\n.visible .entry mma_{name}(.param .u64 in, .param .u64 out)\n{{\n")
    w("  .reg .pred %p<2>;\n  .reg .b32 %r<128>;\n  .reg .b64 %rd<16>;\n\n")
    w(PROLOGUE)
    # h_j = w_j * 0x9e3779b1 + 0x7f4a7c15 * (j + 1), then xor-shift: every bit pattern
    for j in range(16):
        w(f"  mad.lo.u32 %r{30 + j}, %r{10 + j}, -1640531535, {0x7f4a7c15 * (j + 1) & 0xffffffff};\n")
        w(f"  shr.u32 %r{60 + j}, %r{30 + j}, 15;\n")
        w(f"  xor.b32 %r{30 + j}, %r{30 + j}, %r{60 + j};\n")
    a = [f"%r{30 + j}" for j in range(na)]
    b = [f"%r{34 + j}" for j in range(nb)]
    c = [f"%r{40 + j}" for j in range(nc)]
    if sat:  # C near INT32_MAX or INT32_MIN (top bit from the hash): the clamp is reached
        for j in range(nc):
            w(f"  and.b32 %r{40 + j}, %r{40 + j}, -2147418113;\n")   # 0x8000ffff
            w(f"  xor.b32 %r{40 + j}, %r{40 + j}, 2147418112;\n")    # 0x7fff0000
    d = [f"%r{80 + j}" for j in range(nc)]
    mods = '.satfinite' if sat else ''
    tail = f'.{op}.popc' if op else ''
    w(f"  mma.sync.aligned.{shape}.row.col{mods}.s32.{at}.{bt}.s32{tail} {{{', '.join(d)}}},\n"
      f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n")
    for j in range(nc):
        w(f"  st.global.u32 [%rd6+{4 * j}], {d[j]};\n")
    w("DONE:\n  ret;\n}\n")

for name, shape, na, nb in F64:
    w(f"\n.visible .entry mma_{name}(.param .u64 in, .param .u64 out)\n{{\n")
    w("  .reg .pred %p<2>;\n  .reg .b32 %r<128>;\n  .reg .b64 %rd<16>;\n  .reg .f64 %fd<32>;\n\n")
    w(PROLOGUE)
    for j in range(16):   # small integers (w & 15) - 8 of a hash of w: exact in any order
        w(f"  mad.lo.u32 %r{30 + j}, %r{10 + j}, -1640531535, {0x7f4a7c15 * (j + 1) & 0xffffffff};\n")
        w(f"  shr.u32 %r{30 + j}, %r{30 + j}, 20;\n")
        w(f"  and.b32 %r{30 + j}, %r{30 + j}, 15;\n")
        w(f"  sub.s32 %r{30 + j}, %r{30 + j}, 8;\n")
        w(f"  cvt.rn.f64.s32 %fd{j}, %r{30 + j};\n")
    a = [f"%fd{j}" for j in range(na)]
    b = [f"%fd{8 + j}" for j in range(nb)]
    c = [f"%fd{12 + j}" for j in range(4)]
    d = [f"%fd{20 + j}" for j in range(4)]
    w(f"  mma.sync.aligned.{shape}.row.col.f64.f64.f64.f64 {{{', '.join(d)}}},\n"
      f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n")
    for j in range(4):
        w(f"  st.global.f64 [%rd6+{8 * j}], {d[j]};\n")
    w("DONE:\n  ret;\n}\n")

# Volta's m8n8k4 .f16 (9.7.14.5.1): every A/B layout pair, .f16 and .f32 C and D; A and B small
# integers (w & 7) - 4 as f16, C (w & 15) - 8: every sum exact in f32 and f16.
VOLTA = [(al, bl, d, c) for al in ('row', 'col') for bl in ('row', 'col') for d, c in (('f32', 'f32'), ('f16', 'f16'))]
VOLTA += [('row', 'col', 'f32', 'f16'), ('col', 'row', 'f32', 'f16')]   # .f16 D with .f32 C: ptxas refuses it
for al, bl, dt, ct in VOLTA:
    name = f'm8n8k4_{al}_{bl}_{dt}_{ct}'
    w(f"\n.visible .entry mma_{name}(.param .u64 in, .param .u64 out)\n{{\n")
    w("  .reg .pred %p<2>;\n  .reg .b32 %r<128>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<32>;\n  .reg .b16 %h<32>;\n\n")
    w(PROLOGUE)
    for j in range(16):
        w(f"  mad.lo.u32 %r{30 + j}, %r{10 + j}, -1640531535, {0x7f4a7c15 * (j + 1) & 0xffffffff};\n")
        w(f"  shr.u32 %r{30 + j}, %r{30 + j}, 20;\n")
        w(f"  and.b32 %r{30 + j}, %r{30 + j}, {7 if j < 8 else 15};\n")
        w(f"  sub.s32 %r{30 + j}, %r{30 + j}, {4 if j < 8 else 8};\n")
        w(f"  cvt.rn.f16.s32 %h{j}, %r{30 + j};\n")
        w(f"  cvt.rn.f32.s32 %f{j}, %r{30 + j};\n")
    for j in range(4):   # A and B: four .f16x2 of the first eight values
        w(f"  mov.b32 %r{50 + j}, {{%h{2 * j}, %h{2 * j + 1}}};\n")
    for j in range(4):   # .f16 C: four .f16x2 of values 8..15
        w(f"  mov.b32 %r{54 + j}, {{%h{8 + 2 * j}, %h{9 + 2 * j}}};\n")
    a, b = ['%r50', '%r51'], ['%r52', '%r53']
    c = [f'%f{8 + j}' for j in range(8)] if ct == 'f32' else [f'%r{54 + j}' for j in range(4)]
    d = [f'%f{20 + j}' for j in range(8)] if dt == 'f32' else [f'%r{80 + j}' for j in range(4)]
    w(f"  mma.sync.aligned.m8n8k4.{al}.{bl}.{dt}.f16.f16.{ct} {{{', '.join(d)}}},\n"
      f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n")
    for j, v in enumerate(d):
        w(f"  st.global.b32 [%rd6+{4 * j}], {v};\n")
    w("DONE:\n  ret;\n}\n")

# Volta's m8n8k4 on MFMA/WMMA (lower/lower_mma_volta.c): signed zeros and non-finite values.
# A and B elements are mostly zeros of either sign (an all-zero sum then keeps C's sign only if
# every product is -0: C is -0 for a quarter of the elements), and the lanes of quad-pair 1 put
# +Inf in their first A element, those of quad-pair 2 a NaN in their second B element: the four
# quad-pairs' products are independent, so no other quad-pair's D may see them (the WMMA scheme
# keeps each quad-pair's data out of the others' blocks).  Exact sums: equal in any order.
SPECIAL = [('row', 'col', 'f32', 'f32'), ('col', 'row', 'f32', 'f32'), ('col', 'row', 'f16', 'f16'),
           ('row', 'row', 'f32', 'f16'), ('col', 'col', 'f16', 'f16')]


def volta_values(j, zeros):
    """%h<j> (f16) and %f<j> (f32) from the hash in %r<30 + j>: (w & 7) - 4 (A, B) or (w & 15) - 8
    (C, j >= 8); with zeros, A/B are a signed zero unless bits 8-9 are 0, C is -0 when bits
    12-13 are 0."""
    w(f"  mad.lo.u32 %r{30 + j}, %r{10 + j}, -1640531535, {0x7f4a7c15 * (j + 1) & 0xffffffff};\n")
    w(f"  shr.u32 %r{60 + j}, %r{30 + j}, 20;\n")
    w(f"  and.b32 %r{60 + j}, %r{60 + j}, {7 if j < 8 else 15};\n")
    w(f"  sub.s32 %r{60 + j}, %r{60 + j}, {4 if j < 8 else 8};\n")
    w(f"  cvt.rn.f16.s32 %h{j}, %r{60 + j};\n")
    w(f"  cvt.rn.f32.s32 %f{j}, %r{60 + j};\n")
    if not zeros:
        return
    if j < 8:
        w(f"  and.b32 %r90, %r{30 + j}, 768;\n  setp.ne.u32 %p1, %r90, 0;\n")
        w(f"  shr.u32 %r91, %r{30 + j}, 10;\n  and.b32 %r91, %r91, 1;\n  shl.b32 %r91, %r91, 15;\n")
        w(f"  cvt.u16.u32 %rs1, %r91;\n  mov.b16 %h{j}, %rs1;\n" .replace("mov.b16", "@%p1 mov.b16"))
    else:
        w(f"  and.b32 %r90, %r{30 + j}, 12288;\n  setp.eq.u32 %p1, %r90, 0;\n")
        w(f"  @%p1 mov.b32 %f{j}, 0f80000000;\n")
        w(f"  @%p1 mov.b16 %h{j}, 0x8000;\n")


def volta_kernel(name, al, bl, dt, ct, zeros=False, diverged=False):
    w(f"\n.visible .entry mma_{name}(.param .u64 in, .param .u64 out)\n{{\n")
    w("  .reg .pred %p<4>;\n  .reg .b32 %r<128>;\n  .reg .b64 %rd<16>;\n  .reg .f32 %f<32>;\n"
      "  .reg .b16 %h<32>;\n  .reg .b16 %rs<4>;\n\n")
    w(PROLOGUE)
    for j in range(16):
        volta_values(j, zeros)
    if zeros:   # quad-pair 1: +Inf in A's first element; quad-pair 2: NaN in B's second
        w("  shr.u32 %r92, %r1, 2;\n  and.b32 %r92, %r92, 3;\n")
        w("  setp.eq.u32 %p2, %r92, 1;\n  @%p2 mov.b16 %h0, 0x7c00;\n")
        w("  setp.eq.u32 %p2, %r92, 2;\n  @%p2 mov.b16 %h5, 0x7e00;\n")
    for j in range(4):   # A and B: four .f16x2 of the first eight values
        w(f"  mov.b32 %r{50 + j}, {{%h{2 * j}, %h{2 * j + 1}}};\n")
    for j in range(4):   # .f16 C: four .f16x2 of values 8..15
        w(f"  mov.b32 %r{54 + j}, {{%h{8 + 2 * j}, %h{9 + 2 * j}}};\n")
    a, b = ['%r50', '%r51'], ['%r52', '%r53']
    c = [f'%f{8 + j}' for j in range(8)] if ct == 'f32' else [f'%r{54 + j}' for j in range(4)]
    d = [f'%f{20 + j}' for j in range(8)] if dt == 'f32' else [f'%r{80 + j}' for j in range(4)]
    mma = f"  mma.sync.aligned.m8n8k4.{al}.{bl}.{dt}.f16.f16.{ct} {{{', '.join(d)}}},\n"
    if diverged:
        # odd warps: a loop of (warp) trips adding 1 to C's first element, then the mma; even
        # warps: another mma site with A and B swapped (a wave64's halves at different sites)
        c0 = c[0]
        w("  shr.u32 %r6, %r1, 5;\n  and.b32 %r7, %r6, 1;\n  setp.eq.u32 %p2, %r7, 1;\n  @!%p2 bra EVEN;\n")
        w("  mov.u32 %r8, 0;\nLOOP:\n  setp.ge.u32 %p3, %r8, %r6;\n  @%p3 bra ODD_MMA;\n")
        w(f"  add.{'f32' if ct == 'f32' else 'f16x2'} {c0}, {c0}, {'0f3F800000' if ct == 'f32' else '0x3c003c00'};\n")
        w("  add.u32 %r8, %r8, 1;\n  bra LOOP;\nODD_MMA:\n")
        w(mma + f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n  bra STORE;\nEVEN:\n")
        w(mma + f"      {{{', '.join(b)}}}, {{{', '.join(a)}}}, {{{', '.join(c)}}};\nSTORE:\n")
    else:
        w(mma + f"      {{{', '.join(a)}}}, {{{', '.join(b)}}}, {{{', '.join(c)}}};\n")
    for j, v in enumerate(d):
        w(f"  st.global.b32 [%rd6+{4 * j}], {v};\n")
    w("DONE:\n  ret;\n}\n")


for al, bl, dt, ct in SPECIAL:
    volta_kernel(f'm8n8k4_{al}_{bl}_{dt}_{ct}_special', al, bl, dt, ct, zeros=True)
for al, bl, dt, ct in [('col', 'row', 'f32', 'f32'), ('row', 'col', 'f16', 'f16')]:
    volta_kernel(f'm8n8k4_{al}_{bl}_{dt}_{ct}_diverged', al, bl, dt, ct, diverged=True)

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'mma_forms.ptx'), 'w') as f:
    f.write(''.join(out))
