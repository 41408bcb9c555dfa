# tests/lower/ptx/gen_wmma.py: writes wmma.ptx next to it (python3 gen_wmma.py).
#
# One kernel per wmma form (PTX ISA 9.7.14.4): shape, types, the layouts of
# A, B and D, address space, with and without the stride operand.  Every
# full warp (a partial warp takes no part: .aligned) makes A, B and C in
# its own 16 KiB region of `out` from a hash of `in`'s words (small
# integers, so every sum is exact in any order and precision: lowered runs
# on MFMA/WMMA must be bit-identical to the unlowered one), loads them with
# wmma.load, runs wmma.mma and stores D with wmma.store into the same
# region; lower_diff_ptx compares all of `out`.
import os

# (name, shape, a/b type, c type, d type, alayout, blayout, dlayout, space, stride, satfinite)
FORMS = [
    ('f16_f32_m16n16k16', 'm16n16k16', 'f16', 'f32', 'f32', 'row', 'col', 'row', '.global', True, False),
    ('f16_f32_m16n16k16_cr', 'm16n16k16', 'f16', 'f32', 'f32', 'col', 'row', 'col', '', False, False),
    ('f16_f16_m16n16k16', 'm16n16k16', 'f16', 'f16', 'f16', 'row', 'row', 'col', '.global', True, False),
    ('f16_mixed_m16n16k16', 'm16n16k16', 'f16', 'f32', 'f16', 'col', 'col', 'row', '', True, False),
    ('f16_f32_m32n8k16', 'm32n8k16', 'f16', 'f32', 'f32', 'col', 'col', 'row', '.global', True, False),
    ('f16_f16_m32n8k16', 'm32n8k16', 'f16', 'f16', 'f32', 'row', 'col', 'col', '', False, False),
    ('f16_f32_m8n32k16', 'm8n32k16', 'f16', 'f32', 'f32', 'row', 'col', 'row', '.global', True, False),
    ('f16_f16_m8n32k16', 'm8n32k16', 'f16', 'f16', 'f16', 'col', 'row', 'col', '.global', True, False),
    ('bf16_m16n16k16', 'm16n16k16', 'bf16', 'f32', 'f32', 'row', 'col', 'row', '.global', True, False),
    ('bf16_m32n8k16', 'm32n8k16', 'bf16', 'f32', 'f32', 'col', 'row', 'col', '', True, False),
    ('bf16_m8n32k16', 'm8n32k16', 'bf16', 'f32', 'f32', 'row', 'row', 'row', '.global', False, False),
    ('tf32_m16n16k8', 'm16n16k8', 'tf32', 'f32', 'f32', 'row', 'col', 'row', '.global', True, False),
    ('tf32_m16n16k8_cr', 'm16n16k8', 'tf32', 'f32', 'f32', 'col', 'row', 'col', '', True, False),
    ('f64_m8n8k4', 'm8n8k4', 'f64', 'f64', 'f64', 'row', 'col', 'row', '.global', True, False),
    ('f64_m8n8k4_cr', 'm8n8k4', 'f64', 'f64', 'f64', 'col', 'row', 'col', '', False, False),
    ('s8_m16n16k16', 'm16n16k16', 's8', 's32', 's32', 'row', 'col', 'row', '.global', True, False),
    ('u8_m32n8k16', 'm32n8k16', 'u8', 's32', 's32', 'col', 'row', 'col', '', True, False),
    # .u8 in the other two shapes (RDNA's iu8 WMMA reads it unsigned: its sign flags), .satfinite
    # with C near the ends of the s32 range (below) so that the clamp is reached
    ('u8_m16n16k16_sat', 'm16n16k16', 'u8', 's32', 's32', 'row', 'col', 'row', '.global', True, True),
    ('u8_m8n32k16', 'm8n32k16', 'u8', 's32', 's32', 'col', 'col', 'col', '', False, False),
    ('s8_m8n32k16_sat', 'm8n32k16', 's8', 's32', 's32', 'row', 'row', 'row', '.global', True, True),
    ('f16_f32_m16n16k16_shared', 'm16n16k16', 'f16', 'f32', 'f32', 'row', 'col', 'col', '.shared', True, False),
    # fragments between the instructions (lower_wmma_web.c: kept in AMD's layout on gfx1100/gfx1201,
    # except the escape)
    ('f16_f32_m16n16k16_scale', 'm16n16k16', 'f16', 'f32', 'f32', 'row', 'col', 'row', '.global', True, False),
    ('f16_f16_m16n16k16_scale', 'm16n16k16', 'f16', 'f16', 'f16', 'col', 'row', 'row', '', True, False),
    ('f16_f32_m16n16k16_loop', 'm16n16k16', 'f16', 'f32', 'f32', 'row', 'col', 'col', '.global', True, False),
    ('f16_f16_m16n16k16_loop', 'm16n16k16', 'f16', 'f16', 'f16', 'row', 'row', 'row', '.global', False, False),
    ('bf16_m16n16k16_loop', 'm16n16k16', 'bf16', 'f32', 'f32', 'col', 'col', 'row', '.global', True, False),
    ('f16_f32_m16n16k16_escape', 'm16n16k16', 'f16', 'f32', 'f32', 'row', 'col', 'row', '.global', True, False),
    ('f16_f16_m16n16k16_halves', 'm16n16k16', 'f16', 'f16', 'f16', 'row', 'col', 'col', '.global', True, False),
    ('f16_f16_m16n16k16_swap', 'm16n16k16', 'f16', 'f16', 'f16', 'row', 'col', 'row', '.global', True, False),
    ('f16_f32_m16n16k16_tohalf', 'm16n16k16', 'f16', 'f32', 'f32', 'col', 'col', 'col', '.global', True, False),
    # the sub-byte forms (A .row, B .col only) and .b1's two operations
    ('s4_m8n8k32', 'm8n8k32', 's4', 's32', 's32', 'row', 'col', 'row', '.global', True, False),
    ('u4_m8n8k32_sat', 'm8n8k32', 'u4', 's32', 's32', 'row', 'col', 'col', '', False, True),
    ('s4_m8n8k32_sat', 'm8n8k32', 's4', 's32', 's32', 'row', 'col', 'col', '.global', False, True),
    ('b1_m8n8k128_xor', 'm8n8k128', 'b1', 's32', 's32', 'row', 'col', 'row', '.global', True, False),
    ('b1_m8n8k128_and', 'm8n8k128', 'b1', 's32', 's32', 'row', 'col', 'col', '', False, False),
    # f64 in the other rounding modes, on inputs whose sums round (below)
    ('f64_m8n8k4_rz', 'm8n8k4', 'f64', 'f64', 'f64', 'row', 'col', 'row', '.global', True, False),
    ('f64_m8n8k4_rm', 'm8n8k4', 'f64', 'f64', 'f64', 'col', 'row', 'col', '', False, False),
    ('f64_m8n8k4_rp', 'm8n8k4', 'f64', 'f64', 'f64', 'row', 'row', 'row', '.global', True, False),
    ('f64_m8n8k4_rn', 'm8n8k4', 'f64', 'f64', 'f64', 'col', 'col', 'row', '.global', False, False),
]
# .satfinite of f16 wmma.mma: PTX 6.4 and before only (ptxas rejects it from 6.5 on), so these go
# to wmma_sat.ptx (.version 6.4, sm_75), with C scaled by 8192 so that many sums leave f16's range
# (and C of -65536 is -inf in f16)
SAT_FORMS = [
    ('f16_f16_m16n16k16_satf', 'm16n16k16', 'f16', 'f16', 'f16', 'row', 'col', 'row', '.global', True, True),
    ('f16_f32_m16n16k16_satf', 'm16n16k16', 'f16', 'f32', 'f32', 'col', 'row', 'col', '', False, True),
    ('f16_mixed_m32n8k16_satf', 'm32n8k16', 'f16', 'f32', 'f16', 'row', 'row', 'row', '.global', True, True),
    ('f16_f16_m8n32k16_satf', 'm8n32k16', 'f16', 'f16', 'f32', 'col', 'col', 'col', '.global', True, True),
]
# What happens to the fragments between wmma.mma and wmma.store:
#   scale  D = 2 * D + C element-wise (mul, add of the same register index of D and C)
#   loop   the accumulator carried around a loop (phis): C = mma(A, B, C) three times, C stored
#   escape D's first register also stored by an ordinary st (its value depends on the layout: the
#          web keeps ptxwave's, and the st's word matches the unlowered run)
#   halves each .f16 element of D doubled as nvcc writes it: the register split into its halves
#          (mov.b32 {h0, h1}), add.f16 on each, joined back in place
#   tohalf D (.f32) converted element by element to a .f16 fragment (cvt.rn.f16.f32 of registers
#          2u and 2u + 1 joined into register u) and stored as .f16
#   swap   the same with the halves joined swapped (an element moved within the fragment: depends on
#          the layout, the web keeps ptxwave's)
VARIANT = {name: name.rsplit('_', 1)[1] for (name, *_) in FORMS if name.rsplit('_', 1)[1] in ('scale', 'loop', 'escape', 'halves', 'swap', 'tohalf')}
# f64 rounding (the suffix) and .b1's operation
RND = {name: name.rsplit('_', 1)[1] for (name, *_) in FORMS if name.startswith('f64_') and name[-3:] in ('_rz', '_rm', '_rp', '_rn')}
BOOLOP = {name: name.rsplit('_', 1)[1] for (name, *_) in FORMS if name.startswith('b1_')}

DIMS = {'m16n16k16': (16, 16, 16), 'm32n8k16': (32, 8, 16), 'm8n32k16': (8, 32, 16), 'm16n16k8': (16, 16, 8),
        'm8n8k4': (8, 8, 4), 'm8n8k32': (8, 8, 32), 'm8n8k128': (8, 8, 128)}
BYTES = {'f16': 2, 'bf16': 2, 'tf32': 4, 'f32': 4, 'f64': 8, 's8': 1, 'u8': 1, 's32': 4}
PER = {'f16': 2, 'bf16': 2, 's8': 4, 'u8': 4, 's4': 8, 'u4': 8, 'b1': 32}
BITS = {'s4': 4, 'u4': 4, 'b1': 1}
# the padding of a strided matrix, in elements: 16 bytes for the sub-byte types (the ISA's multiple)
PAD = {'s4': 32, 'u4': 32, 'b1': 128}


def nregs(frag, t, m, n, k):
    if frag in 'ab' and t == 'f16':
        return 8
    rows, cols = {'a': (m, k), 'b': (k, n), 'c': (m, n)}[frag]
    return rows * cols // 32 // PER.get(t, 1)


def regtype(t):
    return {'f32': 'f32', 'f64': 'f64', 's32': 's32'}.get(t, 'b32')


out = []
w = out.append
w("""// tests/lower/ptx/wmma.ptx: written by gen_wmma.py (python3 gen_wmma.py), do not edit.
// wmma.load / wmma.mma / wmma.store in every shape and type lower/lower_wmma.c
// lowers (PTX ISA 9.7.14.4), run unlowered and lowered by lower_diff_ptx
// (lower_diff_wmma: gfx942 and gfx950 wave 64, gfx1100 and gfx1201 wave 32,
// where f16/bf16 reach MFMA/WMMA and the rest the per-thread expansion).
// Each full warp builds A, B and C in its 16 KiB region of `out` (A at +0,
// B at +4096, C at +8192, D at +12288) from a hash of `in`: A and B in
// [-4, 3] (s8 over [-128, 127], u8 [0, 255]), C in [-8, 7]; so every sum
// is exact in any order (|sum| <= 16 * 16 + 8 < 2048 for f16 D).  The
// stride of a strided form is the matrix's width plus 16 elements.
// Sub-byte A and B (.s4/.u4, .b1) are random 32-bit words (every sum is
// exact: integers), their stride the width plus 16 bytes.  The f64 forms
// with a rounding suffix (.rz/.rm/.rp/.rn) take A, B and C of 24-bit
// integers times 2^-e (e < 32): the sums round, and each fma in its mode
// must match.
.version 8.5
.target sm_80
.address_size 64
""")


def kernel(name, shape, ab, ct, dt, al, bl, dl, space, strided, sat):
    m, n, k = DIMS[shape]
    shared = space == '.shared'
    # per matrix: rows, cols, layout, element type, region offset
    # the shared kernel: 4 warps per block take part, 8 KiB regions (A +0,
    # B +2048, C +4096, D +6144): 32 KiB of static shared memory
    q = 2 if shared else 1
    mats = [('a', m, k, al, ab, 0), ('b', k, n, bl, ab, 4096 // q), ('c', m, n, 'row', ct, 8192 // q)]
    doff = 12288 // q
    w(f"""
// {shape} {ab} -> {dt} (C {ct}), A .{al}, B .{bl}, D .{dl}, {space or 'generic'}{', stride' if strided else ''}{', .satfinite' if sat else ''}
.visible .entry wmma_{name}(.param .u64 in, .param .u64 out)
{{
  .reg .pred %p<4>;
  .reg .b32 %r<64>;
  .reg .b64 %rd<32>;
  .reg .b16 %h<4>;
  .reg .f32 %f<4>;
  .reg .f64 %fd<4>;
  .reg .b32 %fa<8>;
  .reg .b32 %fb<8>;
  .reg .{regtype(ct)} %fc<8>;
  .reg .{regtype(dt)} %fdd<8>;""")
    if ab == 'f64':
        w("  .reg .f64 %ga<2>;\n  .reg .f64 %gb<2>;")
    if shared:
        w("  .shared .align 32 .b8 smem[32768];")
    w(f"""  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  and.b32 %r3, %r1, -32;
  add.u32 %r3, %r3, 32;
  setp.gt.u32 %p1, %r3, %r2;
  @%p1 bra DONE;
  mov.u32 %r4, %ctaid.x;
  add.u32 %r5, %r2, 31;
  shr.u32 %r5, %r5, 5;                 // warps per block
  shr.u32 %r6, %r1, 5;
  mad.lo.u32 %r6, %r4, %r5, %r6;       // the warp's global index
  and.b32 %r7, %r1, 31;                // lane
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r6, 16384;
  add.u64 %rd4, %rd2, %rd3;            // the warp's region of out
  mul.wide.u32 %rd5, %r6, 4096;
  add.u64 %rd6, %rd1, %rd5;            // its 1024 words of in""")
    if shared:
        w("""  shr.u32 %r8, %r1, 5;                 // warp in the block: the first 4 take part
  setp.ge.u32 %p2, %r8, 4;
  @%p2 bra DONE;
  mov.u32 %r9, smem;
  mul.lo.u32 %r10, %r8, 8192;
  add.u32 %r11, %r9, %r10;              // the warp's region of smem (32-bit shared address)""")
    for (fr, rows, cols, lay, t, off) in mats:
        ld = (cols if lay == 'row' else rows) + (PAD.get(t, 16) if strided else 0)
        cnt = rows * cols
        sh = {'a': 0, 'b': 8, 'c': 16}[fr]
        if t in BITS:
            # random words: row (column) r's word j at r * ld * bits / 8 + 4 j bytes
            inner = cols if lay == 'row' else rows
            wpo = inner * BITS[t] // 32
            w(f"""  // {fr.upper()}: {rows} x {cols} .{t}, .{lay}, stride {ld}: {cnt * BITS[t] // 32} random words
  mov.u32 %r20, %r7;
LOOP_{fr}:
  setp.ge.u32 %p3, %r20, {cnt * BITS[t] // 32};
  @%p3 bra END_{fr};
  mul.wide.u32 %rd7, %r20, 4;
  add.u64 %rd8, %rd6, %rd7;
  ld.global.u32 %r22, [%rd8];
  mul.lo.u32 %r23, %r22, 2654435761;
  xor.b32 %r23, %r23, {sh + 1};
  mul.lo.u32 %r23, %r23, 668265263;
  div.u32 %r24, %r20, {wpo};
  rem.u32 %r25, %r20, {wpo};
  mul.lo.u32 %r26, %r24, {ld * BITS[t] // 8};
  mad.lo.u32 %r26, %r25, 4, %r26;
  cvt.u64.u32 %rd9, %r26;
  add.u64 %rd10, %rd4, {off};
  add.u64 %rd10, %rd10, %rd9;
  st.global.b32 [%rd10], %r23;
  add.u32 %r20, %r20, 32;
  bra LOOP_{fr};
END_{fr}:""")
            continue
        w(f"""  // {fr.upper()}: {rows} x {cols} .{t}, .{lay}, stride {ld}
  mov.u32 %r20, %r7;
LOOP_{fr}:
  setp.ge.u32 %p3, %r20, {cnt};
  @%p3 bra END_{fr};
  and.b32 %r21, %r20, 1023;
  mul.wide.u32 %rd7, %r21, 4;
  add.u64 %rd8, %rd6, %rd7;
  ld.global.u32 %r22, [%rd8];
  mul.lo.u32 %r23, %r22, 2654435761;  // a hash of the word
  xor.b32 %r23, %r23, %r20;
  mul.lo.u32 %r23, %r23, 668265263;
  shr.u32 %r23, %r23, {sh + 8};
  div.u32 %r24, %r20, {cols};          // row
  rem.u32 %r25, %r20, {cols};          // column""")
        if lay == 'row':
            w(f"  mad.lo.u32 %r26, %r24, {ld}, %r25;")
        else:
            w(f"  mad.lo.u32 %r26, %r25, {ld}, %r24;")
        b = BYTES[t]
        if shared:
            w(f"""  mad.lo.u32 %r27, %r26, {b}, {off};
  add.u32 %r28, %r11, %r27;""")
        else:
            w(f"""  mul.wide.u32 %rd9, %r26, {b};
  add.u64 %rd10, %rd4, {off};
  add.u64 %rd10, %rd10, %rd9;""")
        addr = '%r28' if shared else '%rd10'
        stsp = '.shared' if shared else '.global'
        if t in ('s8', 'u8'):
            w("  and.b32 %r29, %r23, 255;")
            if t == 's8':
                w("  sub.s32 %r29, %r29, 128;")
            w(f"  st{stsp}.b8 [{addr}], %r29;")
        elif t == 's32' and sat and ab in ('s4', 'u4', 'u8'):
            # C near the ends of the s32 range, so that .satfinite clamps
            w("  and.b32 %r29, %r23, 15;\n  sub.s32 %r29, %r29, 8;\n  setp.lt.s32 %p2, %r29, 0;")
            w("  selp.b32 %r30, -2147483100, 2147483000, %p2;\n  add.s32 %r29, %r29, %r30;")
            w(f"  st{stsp}.b32 [{addr}], %r29;")
        elif t == 's32':
            w("  and.b32 %r29, %r23, 15;\n  sub.s32 %r29, %r29, 8;")
            w(f"  st{stsp}.b32 [{addr}], %r29;")
        elif t == 'f64' and name in RND:
            # a 24-bit integer times 2^-(0..31): sums that round
            w("  shr.s32 %r29, %r23, 8;\n  cvt.rn.f64.s32 %fd0, %r29;")
            w("  and.b32 %r30, %r22, 31;\n  shl.b32 %r30, %r30, 20;\n  mov.b64 {%r31, %r32}, %fd0;")
            w("  sub.s32 %r32, %r32, %r30;\n  setp.eq.s32 %p2, %r29, 0;\n  @!%p2 mov.b64 %fd0, {%r31, %r32};")
            w(f"  st{stsp}.f64 [{addr}], %fd0;")
        else:
            mask, bias = (15, 8) if fr == 'c' else (7, 4)
            w(f"  and.b32 %r29, %r23, {mask};\n  sub.s32 %r29, %r29, {bias};")
            if sat and fr == 'c':   # float .satfinite: C in [-65536, 57344] (-65536 is -inf as f16)
                w("  mul.lo.s32 %r29, %r29, 8192;")
            if t == 'f16':
                w(f"  cvt.rn.f16.s32 %h0, %r29;\n  st{stsp}.b16 [{addr}], %h0;")
            elif t == 'bf16':
                w(f"  cvt.rn.f32.s32 %f0, %r29;\n  cvt.rn.bf16.f32 %h0, %f0;\n  st{stsp}.b16 [{addr}], %h0;")
            elif t in ('f32', 'tf32') and sat and fr == 'c':
                # an f32 C cannot be reached by the sums: -inf, +inf and NaN in its place where c is -8, 7, 6
                w("  cvt.rn.f32.s32 %f0, %r29;\n  setp.eq.s32 %p2, %r29, -65536;\n  @%p2 mov.f32 %f0, 0fFF800000;")
                w("  setp.eq.s32 %p2, %r29, 57344;\n  @%p2 mov.f32 %f0, 0f7F800000;")
                w("  setp.eq.s32 %p2, %r29, 49152;\n  @%p2 mov.f32 %f0, 0f7FFFFFFF;")
                w(f"  st{stsp}.f32 [{addr}], %f0;")
            elif t in ('f32', 'tf32'):
                w(f"  cvt.rn.f32.s32 %f0, %r29;\n  st{stsp}.f32 [{addr}], %f0;")
            else:
                w(f"  cvt.rn.f64.s32 %fd0, %r29;\n  st{stsp}.f64 [{addr}], %fd0;")
        w(f"""  add.u32 %r20, %r20, 32;
  bra LOOP_{fr};
END_{fr}:""")
    w("  bar.warp.sync -1;")
    # the loads
    regs = {}
    for (fr, rows, cols, lay, t, off) in mats:
        cnt = nregs(fr, t, m, n, k)
        if t == 'f64' and fr in 'ab':
            rl = [f'%g{fr}{i}' for i in range(cnt)]
        elif fr == 'c':
            rl = [f'%fc{i}' for i in range(cnt)]
        else:
            rl = [f'%f{fr}{i}' for i in range(cnt)]
        regs[fr] = rl
        ld = (cols if lay == 'row' else rows) + PAD.get(t, 16)
        if shared:
            w(f"  add.u32 %r40, %r11, {off};")
            addr = '%r40'
        else:
            if space == '':
                w(f"  cvta.global.u64 %rd20, %rd4;\n  add.u64 %rd21, %rd20, {off};")
            else:
                w(f"  add.u64 %rd21, %rd4, {off};")
            addr = '%rd21'
        stride = f', {ld}' if strided else ''
        w(f"  wmma.load.{fr}.sync.aligned.{lay}.{shape}{space}.{t} {{{', '.join(rl)}}}, [{addr}]{stride};")
    nd = nregs('c', dt, m, n, k)
    dregs = [f'%fdd{i}' for i in range(nd)]
    if ab == 'f16':
        types = f'{dt}.{ct}'
    else:
        types = f'{dt}.{ab}.{ab}.{ct}'
    mods = '.' + RND.get(name, 'rn') if ab == 'f64' else ''
    mods += '.satfinite' if sat else ''
    op = f'.{BOOLOP[name]}.popc' if name in BOOLOP else ''
    var = VARIANT.get(name)
    if var == 'loop':   # D is C: the accumulator around the loop
        dregs = regs['c']
        w("  mov.u32 %r50, 0;\nLOOP_MMA:")
    w(f"  wmma.mma{op}.sync.aligned.{al}.{bl}.{shape}.{types}{mods} {{{', '.join(dregs)}}}, {{{', '.join(regs['a'])}}}, "
      f"{{{', '.join(regs['b'])}}}, {{{', '.join(regs['c'])}}};")
    if var == 'loop':
        w("  add.u32 %r50, %r50, 1;\n  setp.lt.u32 %p2, %r50, 3;\n  @%p2 bra LOOP_MMA;")
    elif var == 'scale':
        for (dr, cr) in zip(dregs, regs['c']):
            if dt == 'f32':
                w(f"  mul.f32 {dr}, {dr}, 0f40000000;\n  add.f32 {dr}, {dr}, {cr};")
            else:
                w(f"  mov.b32 %r51, 0x40004000;\n  mul.f16x2 {dr}, {dr}, %r51;\n  add.f16x2 {dr}, {dr}, {cr};")
    elif var in ('halves', 'swap'):
        for dr in dregs:
            hi, lo = ('%h1', '%h0') if var == 'halves' else ('%h0', '%h1')
            w(f"  mov.b32 {{%h0, %h1}}, {dr};\n  add.f16 %h0, %h0, %h0;\n  add.f16 %h1, %h1, %h1;\n  mov.b32 {dr}, {{{lo}, {hi}}};")
    elif var == 'tohalf':
        for u in range(len(dregs) // 2):
            w(f"  cvt.rn.f16.f32 %h0, {dregs[2 * u]};\n  cvt.rn.f16.f32 %h1, {dregs[2 * u + 1]};\n  mov.b32 %r{52 + u}, {{%h0, %h1}};")
        dregs = [f'%r{52 + u}' for u in range(len(dregs) // 2)]
        dt = 'f16'
    elif var == 'escape':
        w(f"  mul.wide.u32 %rd24, %r7, 4;\n  add.u64 %rd25, %rd4, %rd24;\n  st.global.b32 [%rd25+16256], {dregs[0]};")
    dld = (n if dl == 'row' else m) + 16
    if shared:
        w(f"  add.u32 %r41, %r11, {doff};")
        daddr = '%r41'
    elif space == '':
        w("  cvta.global.u64 %rd22, %rd4;\n  add.u64 %rd23, %rd22, 12288;")
        daddr = '%rd23'
    else:
        w("  add.u64 %rd23, %rd4, 12288;")
        daddr = '%rd23'
    stride = f', {dld}' if strided else ''
    w(f"  wmma.store.d.sync.aligned.{dl}.{shape}{space}.{dt} [{daddr}], {{{', '.join(dregs)}}}{stride};")
    if shared:
        # copy the warp's shared region to out (D and the inputs)
        w("""  bar.warp.sync -1;
  mov.u32 %r20, %r7;
COPY:
  setp.ge.u32 %p3, %r20, 2048;
  @%p3 bra DONE;
  mul.lo.u32 %r21, %r20, 4;
  add.u32 %r22, %r11, %r21;
  ld.shared.u32 %r23, [%r22];
  mul.wide.u32 %rd11, %r21, 1;
  add.u64 %rd12, %rd4, %rd11;
  st.global.u32 [%rd12], %r23;
  add.u32 %r20, %r20, 32;
  bra COPY;""")
    w("DONE:\n  ret;\n}")



for f in FORMS:
    kernel(*f)
here = os.path.dirname(os.path.abspath(__file__))
open(os.path.join(here, 'wmma.ptx'), 'w').write('\n'.join(out) + '\n')

out.clear()
w("""// tests/lower/ptx/wmma_sat.ptx: written by gen_wmma.py (python3 gen_wmma.py), do not edit.
// .satfinite of wmma.mma with .f16 inputs (f16 and f32 results), which PTX
// has only up to ISA 6.4 (ptxas 13 rejects it from 6.5 on): as wmma.ptx
// (lower_diff_wmma_sat), with C in [-65536, 57344] (multiples of 8192, so
// that many sums leave f16's range, and -65536 is -inf as an f16 C; an
// f32 C is -inf, +inf or NaN where it would be -65536, 57344 or 49152).
.version 6.4
.target sm_75
.address_size 64
""")
for f in SAT_FORMS:
    kernel(*f)
open(os.path.join(here, 'wmma_sat.ptx'), 'w').write('\n'.join(out) + '\n')
