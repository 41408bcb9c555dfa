#!/usr/bin/env python3
"""Writes tests/lower/ptx/mma_ldmatrix.ptx: ldmatrix results feeding mma.sync
(lower_ldm_plan.c / lower_mma_amd.c load them straight into AMD's A/B
layout), for lower_diff_mma_ldmatrix.  Usage: mma_ldmatrix.py > mma_ldmatrix.ptx"""

from ptxgen import ldm_entry, ldm_generic

HEAD = """// ldmatrix (PTX ISA 9.7.14.5.15) feeding mma.sync (9.7.14.5.14): where every
// result of an ldmatrix is an A or B operand of mma on one of lower_mma_amd's
// schemes, the ldmatrix loads each AMD register straight in AMD's layout
// (lower/lower_ldm_plan.c, lower/lower_mma_amd.c "ldmatrix straight into the
// scheme's A/B layout").  Written by mma_ldmatrix.py.  Lowered for gfx90a,
// gfx942, gfx950 (MFMA 4x4x4_16b) and gfx1100, gfx1201 (WMMA) the results must
// be bit-identical to the unlowered run (lower_diff_mma_ldmatrix): elements
// are small integers (w & 7) - 4 and C (w & 15) - 8, so every sum is exact.
//
// Each full warp fills 1 KiB of shared memory (R0, R1: 512 bytes each) and runs
//   1 A ldmatrix.x4 of R0 (16x16 row-major), B ldmatrix.x2 of R1 (B^T 8x16), m16n8k16
//   2 A ldmatrix.x4.trans of R1 (A^T 16x16), B ldmatrix.x2.trans of R0 (B 16x8)
//   3 B ldmatrix.x4 of R1 (B^T 16x16): two mma (n tiles), both with case 1's A
//     (one ldmatrix read by three mma)
//   4 m16n8k8: A ldmatrix.x2, B ldmatrix.x1 through 64-bit generic addresses
//   5 fallback: an A ldmatrix.x4 whose register is also stored (NVIDIA's layout kept)
//   6 f16 accumulators (.f16 C and D) with case 2's A and case 1's B
//   7 m16n8k8: A ldmatrix.x2.trans, B ldmatrix.x1.trans
.version 8.7
.target sm_89
.address_size 64
"""

def loop_body(t, store):
    """A software-pipelined K loop (three steps): the fragments of the next
    step loaded by ldmatrix before the back edge, alternating between R0 and
    R1, so the mma reads them through phis; with store, the last A
    register is also stored after the loop (NVIDIA's layout kept for every
    ldmatrix of the loop)."""
    tail = "  st.global.u32 [%rd6+16], %r51;\n" if store else ""
    return f"""  bar.warp.sync 0xffffffff;
  and.b32 %r30, %r6, 15;
  shl.b32 %r31, %r30, 5;
  shr.u32 %r32, %r6, 4;
  shl.b32 %r33, %r32, 4;
  add.u32 %r34, %r31, %r33;      // 32 (l & 15) + 16 (l >> 4)
  shl.b32 %r42, %r30, 4;         // 16 (l & 15)
  add.u32 %r50, %r10, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r51, %r52, %r53, %r54}}, [%r50];
  add.u32 %r55, %r11, %r42;
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%r56, %r57}}, [%r55];
  mov.u32 %r120, 0;
LOOP:
  mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%f0, %f1, %f2, %f3}},
      {{%r51, %r52, %r53, %r54}}, {{%r56, %r57}}, {{%f0, %f1, %f2, %f3}};
  add.u32 %r120, %r120, 1;
  and.b32 %r121, %r120, 1;
  shl.b32 %r122, %r121, 9;
  add.u32 %r123, %r10, %r122;
  add.u32 %r50, %r123, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r51, %r52, %r53, %r54}}, [%r50];
  sub.u32 %r124, %r11, %r122;
  add.u32 %r55, %r124, %r42;
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%r56, %r57}}, [%r55];
  setp.lt.u32 %p2, %r120, 3;
  @%p2 bra LOOP;
  st.global.v4.f32 [%rd6], {{%f0, %f1, %f2, %f3}};
{tail}DONE:
  ret;
}}
"""


def kernel(name, t, loop=None):
    cvt = ("  cvt.rn.f16.s32 %h0, %t0;\n  cvt.rn.f16.s32 %h1, %t1;\n" if t == "f16" else
           "  cvt.rn.f32.s32 %g0, %t0;\n  cvt.rn.f32.s32 %g1, %t1;\n"
           "  cvt.rn.bf16.f32 %h0, %g0;\n  cvt.rn.bf16.f32 %h1, %g1;\n")
    o = []
    w = o.append
    w(f"""
.visible .entry {name}(.param .u64 in, .param .u64 out)
{{
  .reg .pred %p<4>;
  .reg .b16 %h<4>;
  .reg .b32 %t<4>;
  .reg .f32 %g<4>;
  .reg .b32 %r<200>;
  .reg .f32 %f<100>;
  .reg .b64 %rd<16>;
  .shared .align 16 .b8 S[32768];

""")
    w(ldm_entry())
    for q in range(8):
        w(f"""  ld.global.u32 %r20, [%rd4+{4*q}];
  and.b32 %t0, %r20, 7;
  sub.s32 %t0, %t0, 4;
  shr.u32 %t1, %r20, 4;
  and.b32 %t1, %t1, 7;
  sub.s32 %t1, %t1, 4;
{cvt}  mov.b32 %r21, {{%h0, %h1}};
  add.u32 %r22, %r6, {32*q};
  shl.b32 %r22, %r22, 2;
  add.u32 %r22, %r10, %r22;
  st.shared.u32 [%r22], %r21;
""")
    for e in range(4):
        w(f"""  ld.global.u32 %r20, [%rd4+{32+4*e}];
  and.b32 %r20, %r20, 15;
  sub.s32 %r20, %r20, 8;
  cvt.rn.f32.s32 %f{e}, %r20;
""")
    if loop is not None:
        w(loop_body(t, loop))
        return "".join(o)
    w(f"""  cvt.rn.f16.f32 %h0, %f0;
  cvt.rn.f16.f32 %h1, %f1;
  mov.b32 %r24, {{%h0, %h1}};
  cvt.rn.f16.f32 %h0, %f2;
  cvt.rn.f16.f32 %h1, %f3;
  mov.b32 %r25, {{%h0, %h1}};
  bar.warp.sync 0xffffffff;
  // addresses
  and.b32 %r30, %r6, 15;
  shl.b32 %r31, %r30, 5;
  shr.u32 %r32, %r6, 4;
  shl.b32 %r33, %r32, 4;
  add.u32 %r34, %r31, %r33;      // 32 (l & 15) + 16 (l >> 4)
  and.b32 %r35, %r6, 7;
  shl.b32 %r36, %r35, 5;
  shr.u32 %r37, %r6, 3;
  and.b32 %r37, %r37, 1;
  shl.b32 %r38, %r37, 4;
  add.u32 %r39, %r36, %r38;      // 32 (l & 7) + 16 ((l >> 3) & 1)
  shl.b32 %r40, %r32, 8;
  add.u32 %r41, %r39, %r40;      // 32 ((l & 7) + 8 (l >> 4)) + 16 ((l >> 3) & 1)
  shl.b32 %r42, %r30, 4;         // 16 (l & 15)
  // case 1
  add.u32 %r50, %r10, %r34;
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r51, %r52, %r53, %r54}}, [%r50];
  add.u32 %r55, %r11, %r39;
  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {{%r56, %r57}}, [%r55];
  mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%f10, %f11, %f12, %f13}},
      {{%r51, %r52, %r53, %r54}}, {{%r56, %r57}}, {{%f0, %f1, %f2, %f3}};
  st.global.v4.f32 [%rd6], {{%f10, %f11, %f12, %f13}};
  // case 2
  add.u32 %r60, %r11, %r41;
  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {{%r61, %r62, %r63, %r64}}, [%r60];
  add.u32 %r65, %r10, %r42;
  ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {{%r66, %r67}}, [%r65];
  mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%f14, %f15, %f16, %f17}},
      {{%r61, %r62, %r63, %r64}}, {{%r66, %r67}}, {{%f3, %f2, %f1, %f0}};
  st.global.v4.f32 [%rd6+16], {{%f14, %f15, %f16, %f17}};
  // case 3
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r71, %r72, %r73, %r74}}, [%r60];
  mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%f18, %f19, %f20, %f21}},
      {{%r51, %r52, %r53, %r54}}, {{%r71, %r72}}, {{%f0, %f1, %f2, %f3}};
  mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%f22, %f23, %f24, %f25}},
      {{%r51, %r52, %r53, %r54}}, {{%r73, %r74}}, {{%f1, %f0, %f3, %f2}};
  st.global.v4.f32 [%rd6+32], {{%f18, %f19, %f20, %f21}};
  st.global.v4.f32 [%rd6+48], {{%f22, %f23, %f24, %f25}};
  // case 4: generic addresses
""")
    w(ldm_generic())
    w(f"""  mma.sync.aligned.m16n8k8.row.col.f32.{t}.{t}.f32 {{%f26, %f27, %f28, %f29}},
      {{%r82, %r83}}, {{%r85}}, {{%f2, %f3, %f0, %f1}};
  st.global.v4.f32 [%rd6+64], {{%f26, %f27, %f28, %f29}};
  // case 5: a register also stored: NVIDIA's layout kept
  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%r91, %r92, %r93, %r94}}, [%r50];
  mma.sync.aligned.m16n8k16.row.col.f32.{t}.{t}.f32 {{%f30, %f31, %f32, %f33}},
      {{%r91, %r92, %r93, %r94}}, {{%r66, %r67}}, {{%f0, %f1, %f2, %f3}};
  st.global.v4.f32 [%rd6+80], {{%f30, %f31, %f32, %f33}};
  st.global.u32 [%rd6+96], %r93;
""")
    if t == "f16":
        w(f"""  // case 6: f16 accumulators
  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {{%r100, %r101}},
      {{%r61, %r62, %r63, %r64}}, {{%r56, %r57}}, {{%r24, %r25}};
  st.global.v2.u32 [%rd6+104], {{%r100, %r101}};
""")
    else:
        w(f"""  // case 6 (bf16 has no .bf16 accumulators): case 2's A with case 1's B
  mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {{%f34, %f35, %f36, %f37}},
      {{%r61, %r62, %r63, %r64}}, {{%r56, %r57}}, {{%f0, %f0, %f1, %f1}};
  st.global.v4.f32 [%rd6+112], {{%f34, %f35, %f36, %f37}};
""")
    w(f"""  // case 7: m16n8k8 from .trans
  add.u32 %r110, %r11, %r39;
  ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {{%r111, %r112}}, [%r110];
  shl.b32 %r113, %r35, 4;
  add.u32 %r114, %r10, %r113;
  ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {{%r115}}, [%r114];
  mma.sync.aligned.m16n8k8.row.col.f32.{t}.{t}.f32 {{%f40, %f41, %f42, %f43}},
      {{%r111, %r112}}, {{%r115}}, {{%f1, %f2, %f3, %f0}};
  st.global.v4.f32 [%rd6+128], {{%f40, %f41, %f42, %f43}};
DONE:
  ret;
}}
""")
    return "".join(o)


print(HEAD + kernel("mma_ldm_f16", "f16") + kernel("mma_ldm_bf16", "bf16") + kernel("mma_ldm_loop_f16", "f16", False)
      + kernel("mma_ldm_loop_bf16", "bf16", False) + kernel("mma_ldm_loop_stored", "f16", True), end="")
