"""tests/lower/ptx/ptxgen.py: what the PTX generators of this directory share.

warp_entry() is the start of a kernel `(.param .u64 in, .param .u64 out)` that
runs only the complete warps of its block: mma.sync is .aligned, so a warp
with missing threads must not reach it (the threads of an incomplete last
warp branch to the kernel's DONE label).  It leaves %r1 = %tid.x, %r2 =
%ntid.x, %r5 = the thread's index in the grid, %rd1 / %rd2 = the in / out
pointers (as the parameters hold them), and needs .pred %p1, .b32 %r1-%r5,
.b64 %rd1-%rd2 declared.  ldm_entry() goes on for the ldmatrix generators
(mma_ldmatrix.py, mma_ldmatrix_tf32.py): 64 input and 256 output bytes per
thread, and the warp's 1 KiB of shared memory S as R0 and R1."""


def warp_entry(comment=""):
    """The kernel's first lines; comment, if any, follows the setp."""
    return f"""  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  and.b32 %r3, %r1, -32;
  add.u32 %r3, %r3, 32;
  setp.gt.u32 %p1, %r3, %r2;{comment}
  @%p1 bra DONE;
  mov.u32 %r4, %ctaid.x;
  mad.lo.u32 %r5, %r4, %r2, %r1;
  ld.param.u64 %rd1, [in];
  ld.param.u64 %rd2, [out];
"""


def ldm_entry():
    """warp_entry(), then %rd4 / %rd6 the thread's 64 bytes of input and 256
    of output, %r6 its lane, %r7 its warp, %r10 / %r11 = R0 / R1, the two
    512-byte halves of the warp's 1 KiB of .shared S."""
    return warp_entry("     // the threads of an incomplete warp do nothing") + """  cvta.to.global.u64 %rd1, %rd1;
  cvta.to.global.u64 %rd2, %rd2;
  mul.wide.u32 %rd3, %r5, 64;
  add.u64 %rd4, %rd1, %rd3;
  mul.wide.u32 %rd5, %r5, 256;
  add.u64 %rd6, %rd2, %rd5;
  and.b32 %r6, %r1, 31;          // lane
  shr.u32 %r7, %r1, 5;           // warp
  mov.u32 %r8, S;
  shl.b32 %r9, %r7, 10;
  add.u32 %r10, %r8, %r9;        // R0
  add.u32 %r11, %r10, 512;       // R1
  // fill: word lane + 32q of the warp's 1 KiB from input word q
"""


def ldm_generic():
    """An x2 ldmatrix of R0 and an x1 of R1 through 64-bit generic addresses
    (cvta.shared of S plus the offsets in %r31 and %r36) into %r82, %r83 and
    %r85."""
    return """  mov.u64 %rd8, S;
  cvta.shared.u64 %rd7, %rd8;
  sub.u32 %r80, %r10, %r8;
  add.u32 %r81, %r80, %r31;
  cvt.u64.u32 %rd9, %r81;
  add.u64 %rd10, %rd7, %rd9;
  ldmatrix.sync.aligned.m8n8.x2.b16 {%r82, %r83}, [%rd10];
  add.u32 %r84, %r80, 512;
  add.u32 %r84, %r84, %r36;
  cvt.u64.u32 %rd11, %r84;
  add.u64 %rd12, %rd7, %rd11;
  ldmatrix.sync.aligned.m8n8.x1.b16 {%r85}, [%rd12];
"""
