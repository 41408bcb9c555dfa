#!/usr/bin/env python3
"""Writes a PTX module for store-tuples.ptx: kernel `huge` has a loop that
accumulates four floats and stores them as a vector (in the loop), an
epilogue that stores the accumulators and four values computed in place as
vectors, and then GUARDS guarded scalar stores, each under its own condition (two blocks each) that make
the function large; kernel `small` is the same with few guarded stores.

usage: huge-epilogue.py [GUARDS_HUGE [GUARDS_SMALL]]"""
import sys


def kernel(name, guards):
    out = [f".visible .entry {name}(.param .u64 out, .param .u32 n)", "{",
           "  .reg .pred %p<4>;", "  .reg .f32 %f<16>;", "  .reg .b32 %r<8>;", "  .reg .b64 %rd<4>;",
           "  .shared .align 16 .b8 sbuf[64];",
           "  ld.param.u64 %rd1, [out];", "  ld.param.u32 %r1, [n];", "  mov.u32 %r2, %tid.x;",
           "  mov.f32 %f1, 0f00000000;", "  mov.f32 %f2, 0f3F800000;",
           "  mov.f32 %f3, 0f40000000;", "  mov.f32 %f4, 0f40400000;", "  mov.u32 %r3, 0;",
           "LOOP:",
           "  cvt.rn.f32.u32 %f9, %r3;",
           "  add.f32 %f1, %f1, %f9;", "  mul.f32 %f2, %f2, %f9;",
           "  sub.f32 %f3, %f3, %f9;", "  fma.rn.f32 %f4, %f4, %f9, %f9;",
           # a branch in the loop, so that the store below is in another
           # block than the accumulators' definitions
           "  setp.eq.u32 %p3, %r3, 7;", "  @%p3 bra LSKIP;",
           "  st.shared.f32 [sbuf+48], %f9;",
           "LSKIP:",
           # in a loop: stays a plain tuple (a copy would run on every trip)
           "  st.shared.v4.f32 [sbuf], {%f1, %f2, %f3, %f4};",
           "  add.u32 %r3, %r3, 1;", "  setp.lt.u32 %p1, %r3, %r1;", "  @%p1 bra LOOP;",
           # after the loop: the accumulators, defined in the loop, get copies
           "  st.shared.v4.f32 [sbuf+16], {%f1, %f2, %f3, %f4};",
           # computed in this block: no copies
           "  add.f32 %f5, %f1, 0f3F800000;", "  add.f32 %f6, %f2, 0f3F800000;",
           "  add.f32 %f7, %f3, 0f3F800000;", "  add.f32 %f8, %f4, 0f3F800000;",
           "  st.shared.v4.f32 [sbuf+32], {%f5, %f6, %f7, %f8};",
           "  ld.shared.f32 %f10, [sbuf+4];"]
    for i in range(guards):
        out += [f"  ld.global.f32 %f11, [%rd1+{4 * i}];", "  setp.gt.f32 %p2, %f11, %f10;", f"  @%p2 bra SKIP{i};",
                f"  st.global.f32 [%rd1+{4 * i}], %f10;", f"SKIP{i}:"]
    out += ["  ret;", "}", ""]
    return "\n".join(out)


def main():
    huge = int(sys.argv[1]) if len(sys.argv) > 1 else 600
    small = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    print(".version 8.0\n.target sm_80\n.address_size 64\n")
    print(kernel("huge", huge))
    print(kernel("small", small))


if __name__ == "__main__":
    main()
