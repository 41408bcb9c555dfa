/* benchmarks/native/include/cuda_bf16.h: __nv_bfloat16 and __nv_bfloat162
 * for the native compile of quality_bench.py: clang's __bf16 (gfx942 has
 * no bf16 arithmetic: LLVM computes in f32 and rounds, as nvcc does for
 * sm_80's missing forms) and a vector of two.  Directed conversions from
 * float are integer arithmetic on the bits, as CUDA's own header does where
 * there is no instruction: v_cvt has no bf16 destination on gfx942, so the
 * MODE round bits would not apply. */
#ifndef PW_NATIVE_CUDA_BF16_H
#define PW_NATIVE_CUDA_BF16_H
#include <cuda_fp16.h>
typedef __bf16 __nv_bfloat16;
typedef __bf16 __nv_bfloat162 __attribute__((ext_vector_type(2)));
#define PW_H __nv_bfloat16
#define PW_H2 __nv_bfloat162
#include "pw_half_ops.h"
#undef PW_H
#undef PW_H2
PW_DI __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __builtin_bit_cast(__nv_bfloat16, u); }
PW_DI unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return __builtin_bit_cast(unsigned short, h); }
PW_DI __nv_bfloat16 __float2bfloat16(float f) { return (__nv_bfloat16)f; }
PW_DI __nv_bfloat16 __float2bfloat16_rn(float f) { return (__nv_bfloat16)f; }
/* up: away from zero when positive and inexact; down: when negative */
PW_DI __nv_bfloat16 pw_f2bf_dir(float f, bool up, bool down) {
  unsigned u = __builtin_bit_cast(unsigned, f), hi = u >> 16;
  if (f != f) return __ushort_as_bfloat16((unsigned short)(hi | 0x40));
  bool neg = u >> 31;
  hi += (u & 0xffff) != 0 && ((up && !neg) || (down && neg));
  return __ushort_as_bfloat16((unsigned short)hi);
}
PW_DI __nv_bfloat16 __float2bfloat16_rz(float f) { return pw_f2bf_dir(f, false, false); }
PW_DI __nv_bfloat16 __float2bfloat16_rd(float f) { return pw_f2bf_dir(f, false, true); }
PW_DI __nv_bfloat16 __float2bfloat16_ru(float f) { return pw_f2bf_dir(f, true, false); }
PW_DI __nv_bfloat16 __double2bfloat16(double d) { return (__nv_bfloat16)d; }
PW_DI __nv_bfloat16 __int2bfloat16_rn(int i) { return (__nv_bfloat16)i; }
PW_DI __nv_bfloat16 __ushort2bfloat16_rn(unsigned short u) { return (__nv_bfloat16)u; }
PW_DI float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
PW_DI int __bfloat162int_rn(__nv_bfloat16 h) { return (int)__builtin_rintf((float)h); }
PW_DI int __bfloat162int_rz(__nv_bfloat16 h) { return (int)(float)h; }
PW_DI int __bfloat162int_rd(__nv_bfloat16 h) { return (int)__builtin_floorf((float)h); }
PW_DI int __bfloat162int_ru(__nv_bfloat16 h) { return (int)__builtin_ceilf((float)h); }
PW_DI short __bfloat162short_rz(__nv_bfloat16 h) { return (short)(float)h; }
PW_DI unsigned __bfloat162uint_rn(__nv_bfloat16 h) { return (unsigned)__builtin_rintf((float)h); }
PW_DI __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 lo, __nv_bfloat16 hi) { return (__nv_bfloat162){lo, hi}; }
PW_DI __nv_bfloat16 __low2bfloat16(__nv_bfloat162 v) { return v.x; }
PW_DI __nv_bfloat16 __high2bfloat16(__nv_bfloat162 v) { return v.y; }
PW_DI float __low2float(__nv_bfloat162 v) { return (float)v.x; }
PW_DI float __high2float(__nv_bfloat162 v) { return (float)v.y; }
PW_DI __nv_bfloat162 __floats2bfloat162_rn(float a, float b) {
  return (__nv_bfloat162){(__nv_bfloat16)a, (__nv_bfloat16)b};
}
/* bf16x2: global_atomic_pk_add_bf16 (flat); bf16: a CAS loop (LLVM) */
PW_DI __nv_bfloat162 atomicAdd(__nv_bfloat162 *p, __nv_bfloat162 v) {
  return __builtin_bit_cast(__nv_bfloat162, __builtin_amdgcn_flat_atomic_fadd_v2bf16(
                                                (pw_short2 *)p, __builtin_bit_cast(pw_short2, v)));
}
PW_DI __nv_bfloat16 atomicAdd(__nv_bfloat16 *p, __nv_bfloat16 v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
#endif
