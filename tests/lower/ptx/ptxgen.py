"""tests/lower/ptx/ptxgen.py: what the PTX generators of this directory share.

warp_entry() is the start of a kernel `(.param .u64 in, .param .u64 out)` that
runs only the complete warps of its block: mma.sync is .aligned, so a warp
with missing threads must not reach it (the threads of an incomplete last
warp branch to the kernel's DONE label).  It leaves %r1 = %tid.x, %r2 =
%ntid.x, %r5 = the thread's index in the grid, %rd1 / %rd2 = the in / out
pointers (as the parameters hold them), and needs .pred %p1, .b32 %r1-%r5,
.b64 %rd1-%rd2 declared."""


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
