#!/usr/bin/env python3
"""Writes tests/lower/ptx/mma_ldmatrix_tf32.ptx: ldmatrix results feeding tf32
and e4m3/e5m2 mma.sync (lower_ldm_plan.c / lower_mma_amd.c load each AMD
register's word straight from shared memory and split or widen it in the
lane), for lower_diff_mma_ldmatrix_tf32.
Usage: mma_ldmatrix_tf32.py > mma_ldmatrix_tf32.ptx"""

from ptxgen import ldm_entry, ldm_generic

HEAD = """// ldmatrix (PTX ISA 9.7.14.5.15) feeding tf32 and fp8 mma.sync (9.7.14.5.14):
// where every result of an ldmatrix is an A or B operand of mma that
// lower_mma_amd puts on its bf16 (tf32: hi/lo split per element) or f16 (fp8:
// widened per element) scheme, each AMD lane loads the 32-bit word (fp8: the
// 16-bit half) its register is made from and converts it in place
// (lower/lower_ldm_plan.c, lower/lower_mma_amd.c "ldm_form").  Written by
// mma_ldmatrix_tf32.py.  Lowered for gfx90a, gfx942, gfx950 (MFMA 4x4x4_16b;
// gfx90a has no fp8 path difference: the f16 scheme) and gfx1100, gfx1201
// (WMMA) the results must be bit-identical to the unlowered run
// (lower_diff_mma_ldmatrix_tf32): every sum is exact:
//   tf32 elements a + b/128 (a = (w & 7) - 4, b = (w >> 3) & 7: up to 10
//     significant bits, so bf16 hi and lo are both used), C (w & 15) - 8:
//     products are multiples of 2^-14 below 16, every partial sum (three
//     loop steps) below 2^9;
//   e4m3 bytes with exponent field 5..8 (2^-2 .. 2^1, no NaN), e5m2 bytes
//     with exponent 13..16: multiples of 2^-5 (e5m2 2^-4) below 4, so 32-term
//     sums need at most 20 bits.
//
// Each full warp fills 1 KiB of shared memory (R0: words 0..127 from input
// words 0..3, the A type; R1: words 128..255 from input words 4..7, the B
// type), row stride 32 bytes, and runs
//   1 A ldmatrix.x4 of R0 (16 x 32 bytes), B ldmatrix.x2 of R1 (B^T 8 x 32 bytes):
//     m16n8k8 .tf32 / m16n8k32 fp8
//   2 B ldmatrix.x4 of R1 (B^T 16 x 32 bytes): two mma (n tiles) with case 1's A
//     (one ldmatrix read by three mma)
//   3 A ldmatrix.x2, B ldmatrix.x1 through 64-bit generic addresses:
//     m16n8k4 .tf32 / m16n8k16 fp8
//   4 fallback: an A ldmatrix.x4 whose register is also stored (NVIDIA's layout kept
//     for it and for the B ldmatrix.x2 of its mma)
//   and, in the _loop kernels, a software-pipelined K loop whose fragments
//   reach the mma through phis; mma_ldm_tf32_round rounds each tf32 register
//   per thread between ldmatrix and mma as cuSPARSE does (A: +-(2 or 3) +
//   b/128 with random low 13 bits, rounded up one tf32 ulp where bit 12 is
//   set; B: integers -4..3), directly, through a loop's phis, with a
//   rounded value also stored, and with only rows g rounded (refused: an AMD
//   register would compute two ways); mma_ldm_e4m3_neg negates the fp8 A bytes
//   (xor 0x80808080) between them, mma_ldm_f16_arith the f16 A halves (and
//   doubles B with add.f16x2), taken on every target.
.version 8.7
.target sm_89
.address_size 64
"""

# fill transforms: word w (input) -> the element word stored
FILL = {
    "tf32": lambda dst: f"""  and.b32 %t0, %r20, 7;
  sub.s32 %t0, %t0, 4;
  shr.u32 %t1, %r20, 3;
  and.b32 %t1, %t1, 7;
  cvt.rn.f32.s32 %g0, %t0;
  cvt.rn.f32.s32 %g1, %t1;
  fma.rn.f32 %g2, %g1, 0f3C000000, %g0;   // a + b / 128, exact
  mov.b32 {dst}, %g2;
""",
    # +-(2 or 3) + b/128 with random low 13 bits: cuSPARSE's rounding (+ 4096
    # unless inf/NaN) moves the value up one tf32 ulp where bit 12 is set
    "tf32r": lambda dst: f"""  and.b32 %t0, %r20, 1;
  shr.u32 %t1, %r20, 1;
  and.b32 %t1, %t1, 1;
  add.u32 %t1, %t1, 2;
  setp.ne.u32 %p3, %t0, 0;
  @%p3 neg.s32 %t1, %t1;
  shr.u32 %t2, %r20, 3;
  and.b32 %t2, %t2, 7;
  cvt.rn.f32.s32 %g0, %t1;
  cvt.rn.f32.s32 %g1, %t2;
  fma.rn.f32 %g2, %g1, 0f3C000000, %g0;
  mov.b32 %t3, %g2;
  shr.u32 %t2, %r20, 8;
  and.b32 %t2, %t2, 0x1fff;
  or.b32 {dst}, %t3, %t2;
""",
    # integers -4 .. 3 (B of the rounding kernel: the rounding leaves them)
    "int": lambda dst: f"""  and.b32 %t0, %r20, 7;
  sub.s32 %t0, %t0, 4;
  cvt.rn.f32.s32 %g0, %t0;
  mov.b32 {dst}, %g0;
""",
    # two f16 integers -4 .. 3 (the f16 kernel with per-thread arithmetic)
    "f16": lambda dst: f"""  and.b32 %t0, %r20, 7;
  sub.s32 %t0, %t0, 4;
  shr.u32 %t1, %r20, 4;
  and.b32 %t1, %t1, 7;
  sub.s32 %t1, %t1, 4;
  cvt.rn.f16.s32 %h0, %t0;
  cvt.rn.f16.s32 %h1, %t1;
  mov.b32 {dst}, {{%h0, %h1}};
""",
    # s eeee mmm: exponent field 5 + ((w >> 3) & 3), every byte
    "e4m3": lambda dst: f"""  and.b32 %t0, %r20, 0x87878787;
  and.b32 %t1, %r20, 0x18181818;
  add.u32 %t1, %t1, 0x28282828;
  or.b32 {dst}, %t0, %t1;
""",
    # s eeeee mm: exponent field 13 + ((w >> 2) & 3)
    "e5m2": lambda dst: f"""  and.b32 %t0, %r20, 0x83838383;
  and.b32 %t1, %r20, 0x0c0c0c0c;
  add.u32 %t1, %t1, 0x34343434;
  or.b32 {dst}, %t0, %t1;
""",
}


def mma(ta, tb, k, d, a, b, c):
    t = "tf32.tf32" if ta == "tf32" else f"{ta}.{tb}"
    return (f"  mma.sync.aligned.m16n8k{k}.row.col.f32.{t}.f32 {{{d}}},\n"
            f"      {{{a}}}, {{{b}}}, {{{c}}};\n")


def prologue(name, ta, tb):
    o = [f"""
.visible .entry {name}(.param .u64 in, .param .u64 out)
{{
  .reg .pred %p<40>;
  .reg .b32 %t<4>;
  .reg .b16 %h<4>;
  .reg .f32 %g<4>;
  .reg .b32 %r<200>;
  .reg .f32 %f<100>;
  .reg .b64 %rd<16>;
  .shared .align 16 .b8 S[32768];

"""]
    o.append(ldm_entry())
    for q in range(8):
        o.append(f"  ld.global.u32 %r20, [%rd4+{4*q}];\n")
        o.append(FILL[ta if q < 4 else tb]("%r21"))
        o.append(f"""  add.u32 %r22, %r6, {32*q};
  shl.b32 %r22, %r22, 2;
  add.u32 %r22, %r10, %r22;
  st.shared.u32 [%r22], %r21;
""")
    for e in range(4):
        o.append(f"""  ld.global.u32 %r20, [%rd4+{32+4*e}];
  and.b32 %r20, %r20, 15;
  sub.s32 %r20, %r20, 8;
  cvt.rn.f32.s32 %f{e}, %r20;
""")
    o.append("""  bar.warp.sync 0xffffffff;
  // addresses
  and.b32 %r30, %r6, 15;
  shl.b32 %r31, %r30, 5;
  shr.u32 %r32, %r6, 4;
  shl.b32 %r33, %r32, 4;
  add.u32 %r34, %r31, %r33;      // A x4: 32 (l & 15) + 16 (l >> 4)
  and.b32 %r35, %r6, 7;
  shl.b32 %r36, %r35, 5;
  shr.u32 %r37, %r6, 3;
  and.b32 %r37, %r37, 1;
  shl.b32 %r38, %r37, 4;
  add.u32 %r39, %r36, %r38;      // B x2: 32 (l & 7) + 16 ((l >> 3) & 1)
  shl.b32 %r40, %r32, 8;
  add.u32 %r41, %r39, %r40;      // B x4: 32 ((l & 7) + 8 (l >> 4)) + 16 ((l >> 3) & 1)
""")
    return "".join(o)


def kernel(name, ta, tb):
    big, small = (8, 4) if ta == "tf32" else (32, 16)
    o = [prologue(name, ta, tb)]
    w = o.append
    w("  // case 1\n  add.u32 %r50, %r10, %r34;\n"
      "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r50];\n"
      "  add.u32 %r55, %r11, %r39;\n"
      "  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r55];\n")
    w(mma(ta, tb, big, "%f10, %f11, %f12, %f13", "%r51, %r52, %r53, %r54", "%r56, %r57", "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6], {%f10, %f11, %f12, %f13};\n")
    w("  // case 2\n  add.u32 %r60, %r11, %r41;\n"
      "  ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16 {%r71, %r72, %r73, %r74}, [%r60];\n")
    w(mma(ta, tb, big, "%f18, %f19, %f20, %f21", "%r51, %r52, %r53, %r54", "%r71, %r72", "%f0, %f1, %f2, %f3"))
    w(mma(ta, tb, big, "%f22, %f23, %f24, %f25", "%r51, %r52, %r53, %r54", "%r73, %r74", "%f1, %f0, %f3, %f2"))
    w("  st.global.v4.f32 [%rd6+32], {%f18, %f19, %f20, %f21};\n"
      "  st.global.v4.f32 [%rd6+48], {%f22, %f23, %f24, %f25};\n")
    w("  // case 3: generic addresses, x2 and x1\n")
    w(ldm_generic())
    w(mma(ta, tb, small, "%f26, %f27, %f28, %f29", "%r82, %r83", "%r85", "%f2, %f3, %f0, %f1"))
    w("  st.global.v4.f32 [%rd6+64], {%f26, %f27, %f28, %f29};\n")
    w("  // case 4: a register also stored: NVIDIA's layout kept\n"
      "  add.u32 %r90, %r10, %r34;\n"
      "  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r91, %r92, %r93, %r94}, [%r90];\n"
      "  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r95, %r96}, [%r55];\n")
    w(mma(ta, tb, big, "%f30, %f31, %f32, %f33", "%r91, %r92, %r93, %r94", "%r95, %r96", "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6+80], {%f30, %f31, %f32, %f33};\n"
      "  st.global.u32 [%rd6+96], %r93;\nDONE:\n  ret;\n}\n")
    return "".join(o)


def loop_kernel(name, t):
    """A software-pipelined K loop (three steps): the next step's fragments
    loaded by ldmatrix before the back edge, A and B swapping R0 and R1, so
    the mma reads them through phis."""
    big = 8 if t == "tf32" else 32
    o = [prologue(name, t, t)]
    w = o.append
    w("""  add.u32 %r50, %r10, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r50];
  add.u32 %r55, %r11, %r39;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r55];
  mov.u32 %r120, 0;
LOOP:
""")
    w(mma(t, t, big, "%f0, %f1, %f2, %f3", "%r51, %r52, %r53, %r54", "%r56, %r57", "%f0, %f1, %f2, %f3"))
    w("""  add.u32 %r120, %r120, 1;
  and.b32 %r121, %r120, 1;
  shl.b32 %r122, %r121, 9;
  add.u32 %r123, %r10, %r122;
  add.u32 %r50, %r123, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r50];
  sub.u32 %r124, %r11, %r122;
  add.u32 %r55, %r124, %r39;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r55];
  setp.lt.u32 %p2, %r120, 3;
  @%p2 bra LOOP;
  st.global.v4.f32 [%rd6], {%f0, %f1, %f2, %f3};
DONE:
  ret;
}
""")
    return "".join(o)


def rnd(dst, src, k):
    """cuSPARSE's cvt.rna.tf32.f32 written out (libcusparse c0162): + 4096
    unless |x| is inf or NaN, between the ldmatrix and the mma."""
    return (f"  add.s32 %r{150+k}, {src}, 4096;\n  mov.b32 %f{60+k}, {src};\n  abs.f32 %f{70+k}, %f{60+k};\n"
            f"  setp.geu.f32 %p{10+k}, %f{70+k}, 0f7F800000;\n  selp.b32 {dst}, {src}, %r{150+k}, %p{10+k};\n")


def round_kernel(name):
    """tf32 operands rounded per thread between ldmatrix and mma (A: values
    with random low bits, B: integers): the lanes load the words and round
    them as the threads did; a pipelined loop whose phis merge rounded
    values; a rounded value also stored (NVIDIA's layout kept)."""
    o = [prologue(name, "tf32r", "int")]
    w = o.append
    w("""  add.u32 %r50, %r10, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r50];
  add.u32 %r55, %r11, %r39;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r55];
""")
    for k, r in enumerate([51, 52, 53, 54, 56, 57]):
        w(rnd(f"%r{130+k}", f"%r{r}", k))
    w(mma("tf32", "tf32", 8, "%f10, %f11, %f12, %f13", "%r130, %r131, %r132, %r133", "%r134, %r135",
          "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6], {%f10, %f11, %f12, %f13};\n")
    w("""  // fallback: a rounded register also stored
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r91, %r92, %r93, %r94}, [%r50];
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r95, %r96}, [%r55];
""")
    for k, r in enumerate([91, 92, 93, 94]):
        w(rnd(f"%r{140+k}", f"%r{r}", 6 + k))
    w(mma("tf32", "tf32", 8, "%f30, %f31, %f32, %f33", "%r140, %r141, %r142, %r143", "%r95, %r96",
          "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6+80], {%f30, %f31, %f32, %f33};\n  st.global.u32 [%rd6+96], %r142;\n")
    w("""  // rows g rounded, rows g + 8 not: an AMD register holding both computes two ways (refused)
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r171, %r172, %r173, %r174}, [%r50];
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r175, %r176}, [%r55];
""")
    for k, r in enumerate([171, 173]):
        w(rnd(f"%r{177+k}", f"%r{r}", 18 + k))
    w(mma("tf32", "tf32", 8, "%f34, %f35, %f36, %f37", "%r177, %r172, %r178, %r174", "%r175, %r176",
          "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6+160], {%f34, %f35, %f36, %f37};\n")
    w("  // loop: A rounded, the phis merge rounded values\n")
    for k, r in enumerate([51, 52, 53, 54]):
        w(rnd(f"%r{160+k}", f"%r{r}", 10 + k))
    w("  mov.u32 %r120, 0;\nLOOP:\n")
    w(mma("tf32", "tf32", 8, "%f0, %f1, %f2, %f3", "%r160, %r161, %r162, %r163", "%r56, %r57", "%f0, %f1, %f2, %f3"))
    w("""  add.u32 %r120, %r120, 1;
  and.b32 %r121, %r120, 1;
  shl.b32 %r122, %r121, 4;
  add.u32 %r123, %r50, %r122;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r123];
""")
    for k, r in enumerate([51, 52, 53, 54]):
        w(rnd(f"%r{160+k}", f"%r{r}", 14 + k))
    w("""  add.u32 %r124, %r55, %r122;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r124];
  setp.lt.u32 %p2, %r120, 3;
  @%p2 bra LOOP;
  st.global.v4.f32 [%rd6+128], {%f0, %f1, %f2, %f3};
DONE:
  ret;
}
""")
    return "".join(o)


def neg_kernel(name):
    """fp8 A negated per thread (every byte's sign, xor 0x80808080) between
    ldmatrix and mma: per element, so the lanes negate the words they load."""
    o = [prologue(name, "e4m3", "e5m2")]
    w = o.append
    w("""  add.u32 %r50, %r10, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r50];
  add.u32 %r55, %r11, %r39;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r55];
  xor.b32 %r130, %r51, 0x80808080;
  xor.b32 %r131, %r52, 0x80808080;
  xor.b32 %r132, %r53, 0x80808080;
  xor.b32 %r133, %r54, 0x80808080;
""")
    w(mma("e4m3", "e5m2", 32, "%f10, %f11, %f12, %f13", "%r130, %r131, %r132, %r133", "%r56, %r57",
          "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6], {%f10, %f11, %f12, %f13};\nDONE:\n  ret;\n}\n")
    return "".join(o)


def f16_neg_kernel(name):
    """f16 A negated per thread (xor 0x80008000) and B doubled (add.f16x2 b, b)
    between ldmatrix and mma: followed on every target (f16 needs no
    conversion, so no target refuses it)."""
    o = [prologue(name, "f16", "f16")]
    w = o.append
    w("""  add.u32 %r50, %r10, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r51, %r52, %r53, %r54}, [%r50];
  add.u32 %r55, %r11, %r39;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r56, %r57}, [%r55];
  xor.b32 %r130, %r51, 0x80008000;
  xor.b32 %r131, %r52, 0x80008000;
  xor.b32 %r132, %r53, 0x80008000;
  xor.b32 %r133, %r54, 0x80008000;
  add.rn.f16x2 %r134, %r56, %r56;
  add.rn.f16x2 %r135, %r57, %r57;
""")
    w(mma("f16", "f16", 16, "%f10, %f11, %f12, %f13", "%r130, %r131, %r132, %r133", "%r134, %r135",
          "%f0, %f1, %f2, %f3"))
    w("  st.global.v4.f32 [%rd6], {%f10, %f11, %f12, %f13};\nDONE:\n  ret;\n}\n")
    return "".join(o)


print(HEAD + kernel("mma_ldm_tf32", "tf32", "tf32") + kernel("mma_ldm_e4m3", "e4m3", "e4m3")
      + kernel("mma_ldm_e4m3_e5m2", "e4m3", "e5m2") + kernel("mma_ldm_e5m2_e4m3", "e5m2", "e4m3")
      + loop_kernel("mma_ldm_loop_tf32", "tf32") + loop_kernel("mma_ldm_loop_e4m3", "e4m3")
      + round_kernel("mma_ldm_tf32_round") + neg_kernel("mma_ldm_e4m3_neg") + f16_neg_kernel("mma_ldm_f16_arith"),
      end="")
