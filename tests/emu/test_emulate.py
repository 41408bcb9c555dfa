#!/usr/bin/env python3
"""tests/emu/test_emulate.py: `ptxwave emulate` from a shell's point of view.

Runs a small kernel with scalar and buffer arguments and checks the files it
writes back against values computed here; checks the exit status and message
of a launch that faults, of bad usage and of an unsupported instruction."""
import os
import struct
import subprocess
import sys
import tempfile

PTXWAVE = os.environ["PTXWAVE"]

PTX = r"""
.version 8.0
.target sm_80
.address_size 64
.visible .entry scale(.param .u64 in, .param .u64 out, .param .u32 n, .param .f32 s, .param .u64 io)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<4>;
  .reg .pred %p<2>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  ld.param.u32 %r5, [n];
  setp.ge.u32 %p1, %r4, %r5;
  @%p1 bra DONE;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
  ld.param.u64 %rd3, [io];
  mul.wide.u32 %rd4, %r4, 4;
  add.u64 %rd5, %rd1, %rd4;
  add.u64 %rd6, %rd2, %rd4;
  add.u64 %rd7, %rd3, %rd4;
  ld.global.f32 %f1, [%rd5];
  ld.param.f32 %f2, [s];
  mul.rn.f32 %f3, %f1, %f2;
  st.global.f32 [%rd6], %f3;
  ld.global.u32 %r6, [%rd7];
  add.u32 %r6, %r6, %r4;
  st.global.u32 [%rd7], %r6;
DONE:
  ret;
}
.visible .entry bad(.param .u64 p)
{
  .reg .b64 %rd<3>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  ld.global.u32 %r1, [%rd1+4096];
  ret;
}
"""

failures = 0


def check(cond, what):
    global failures
    if not cond:
        print("FAIL:", what)
        failures += 1


def run(*args):
    return subprocess.run([PTXWAVE, "emulate", *args], capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    ptx = os.path.join(tmp, "k.ptx")
    with open(ptx, "w") as f:
        f.write(PTX)
    n = 100
    xs = [i * 0.25 - 3.0 for i in range(n)]
    with open(os.path.join(tmp, "in.bin"), "wb") as f:
        f.write(struct.pack("<%df" % n, *xs))
    with open(os.path.join(tmp, "io.bin"), "wb") as f:
        f.write(struct.pack("<%dI" % n, *[7] * n))
    r = run(ptx, "--kernel", "scale", "--grid", "4", "--block", "32,1,1",
            "in:" + os.path.join(tmp, "in.bin"), "out:" + os.path.join(tmp, "out.bin") + ":400",
            "u32:%d" % n, "f32:2.5", "inout:" + os.path.join(tmp, "io.bin"))
    check(r.returncode == 0, "scale: exit status %d: %s" % (r.returncode, r.stderr))
    if r.returncode == 0:
        out = struct.unpack("<%df" % n, open(os.path.join(tmp, "out.bin"), "rb").read())
        want = [struct.unpack("<f", struct.pack("<f", x * 2.5))[0] for x in xs]
        check(list(out) == want, "scale: out.bin")
        io = struct.unpack("<%dI" % n, open(os.path.join(tmp, "io.bin"), "rb").read())
        check(list(io) == [7 + i for i in range(n)], "scale: io.bin written back")

    r = run(ptx, "--kernel", "bad", "--grid", "1", "--block", "1", "zero:16")
    check(r.returncode == 1, "bad: exit status %d" % r.returncode)
    check("illegal address" in r.stderr and "k.ptx:" in r.stderr and "'bad'" in r.stderr,
          "bad: message: " + r.stderr)

    r = run(ptx, "--kernel", "scale", "--grid", "1", "--block", "32", "u32:1")
    check(r.returncode == 1 and "takes 5 parameters" in r.stderr, "parameter count: " + r.stderr)
    r = run(ptx, "--kernel", "scale", "--block", "32")
    check(r.returncode == 2, "no --grid: exit status %d" % r.returncode)
    r = run(ptx, "--kernel", "nosuch", "--grid", "1", "--block", "1")
    check(r.returncode == 1 and "nosuch" in r.stderr, "unknown kernel: " + r.stderr)

    unsup = os.path.join(tmp, "u.ptx")
    with open(unsup, "w") as f:
        f.write(".version 8.0\n.target sm_90a\n.address_size 64\n"
                ".visible .entry t(.param .u64 p)\n{\n  .reg .b32 %r<4>;\n"
                "  wgmma.fence.sync.aligned;\n  ret;\n}\n")
    r = run(unsup, "--kernel", "t", "--grid", "1", "--block", "1", "u64:0")
    check(r.returncode == 1 and "unsupported" in r.stderr and "wgmma.fence" in r.stderr and "u.ptx:7" in r.stderr,
          "unsupported: " + r.stderr)

    # The dynamic stack's launch errors (docs/emulator.md "Calls"): an
    # alloca past the thread's 64 KiB of local memory, and a stackrestore
    # to a value outside the frame's stack.
    stk = os.path.join(tmp, "stack.ptx")
    with open(stk, "w") as f:
        f.write(".version 8.5\n.target sm_90\n.address_size 64\n"
                ".visible .entry overflow(.param .u64 out)\n{\n  .reg .b64 %rd<4>;\n  .reg .b32 %r<2>;\n"
                "  ld.param.u64 %rd1, [out];\n  mov.u32 %r1, %tid.x;\n  mul.wide.u32 %rd3, %r1, 4;\n"
                "  add.u64 %rd3, %rd3, 1048576;\n  alloca.u64 %rd2, %rd3;\n  st.global.u64 [%rd1], %rd2;\n"
                "  ret;\n}\n"
                ".visible .entry badrestore()\n{\n  .reg .b64 %rd<4>;\n  mov.u64 %rd1, 1048576;\n"
                "  stackrestore.u64 %rd1;\n  ret;\n}\n")
    r = run(stk, "--kernel", "overflow", "--grid", "1", "--block", "2", "zero:8")
    check(r.returncode == 1 and "stack.ptx:12" in r.stderr and "'overflow' (alloca)" in r.stderr and
          "stack overflow: alloca of 1048576 bytes (aligned to 8) above 0, the thread has 65536 bytes" in r.stderr,
          "alloca overflow: " + r.stderr)
    r = run(stk, "--kernel", "badrestore", "--grid", "1", "--block", "1")
    check(r.returncode == 1 and "stack.ptx:20" in r.stderr and
          "stackrestore to 0x100000: not a stack pointer of this frame" in r.stderr, "stackrestore: " + r.stderr)

    # A texture object: emulate runs lower_tex first.  The descriptor
    # (lower/tex_desc.def) comes from this file; the kernel stores the data
    # buffer's address into its base field (offset 0), then samples a 2x2
    # float texture bilinearly at (1, 1) (all weights 1/2: the mean, 2.5)
    # and at (0.75, 0.5) (row 0, a quarter of the way: 1.25), and asks
    # txq.width (2).
    texk = os.path.join(tmp, "tex.ptx")
    with open(texk, "w") as f:
        f.write(".version 8.0\n.target sm_80\n.address_size 64\n"
                ".visible .entry t(.param .u64 d, .param .u64 data, .param .u64 out)\n{\n"
                "  .reg .b64 %rd<4>;\n  .reg .b32 %r<2>;\n  .reg .f32 %f<12>;\n"
                "  ld.param.u64 %rd1, [d];\n  ld.param.u64 %rd2, [data];\n  ld.param.u64 %rd3, [out];\n"
                "  st.global.u64 [%rd1], %rd2;\n"
                "  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd1, {0f3F800000, 0f3F800000}];\n"
                "  tex.2d.v4.f32.f32 {%f5, %f6, %f7, %f8}, [%rd1, {0f3F400000, 0f3F000000}];\n"
                "  txq.width.b32 %r1, [%rd1];\n"
                "  st.global.f32 [%rd3], %f1;\n  st.global.f32 [%rd3+4], %f5;\n"
                "  st.global.u32 [%rd3+8], %r1;\n  ret;\n}\n")
    desc = bytearray(128)
    struct.pack_into("<QQQ", desc, 0, 0, 8, 16)                          # base, pitch, slice
    struct.pack_into("<8I", desc, 24, 1, 2, 2, 1, 1, 32, 2, 4)           # kind .. elem_bytes
    struct.pack_into("<5I", desc, 56, 1, 1, 1, 1, 0)                     # clamp x3, linear, unnormalized
    with open(os.path.join(tmp, "desc.bin"), "wb") as f:
        f.write(desc)
    with open(os.path.join(tmp, "texels.bin"), "wb") as f:
        f.write(struct.pack("<4f", 1.0, 2.0, 3.0, 4.0))
    r = run(texk, "--kernel", "t", "--grid", "1", "--block", "1", "inout:" + os.path.join(tmp, "desc.bin"),
            "in:" + os.path.join(tmp, "texels.bin"), "out:" + os.path.join(tmp, "tex_out.bin") + ":12")
    check(r.returncode == 0, "tex: exit status %d: %s" % (r.returncode, r.stderr))
    if r.returncode == 0:
        got = struct.unpack("<2fI", open(os.path.join(tmp, "tex_out.bin"), "rb").read())
        check(got == (2.5, 1.25, 2), "tex: got %s" % (got,))

print("emulate command: %s" % ("FAIL" if failures else "PASS"))
sys.exit(1 if failures else 0)
