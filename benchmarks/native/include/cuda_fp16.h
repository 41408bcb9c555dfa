/* benchmarks/native/include/cuda_fp16.h: __half and __half2 for the native
 * compile of quality_bench.py (benchmarks/README.md): _Float16 and a clang
 * vector of two (gfx942 has f16 and packed f16 instructions).  Directed
 * conversions set the MODE round bits around v_cvt_f16_f32 (cuda_on_hip.h,
 * "directed rounding"). */
#ifndef PW_NATIVE_CUDA_FP16_H
#define PW_NATIVE_CUDA_FP16_H
typedef _Float16 __half;
typedef _Float16 __half2 __attribute__((ext_vector_type(2)));
#define PW_H __half
#define PW_H2 __half2
#include "pw_half_ops.h"
#undef PW_H
#undef PW_H2
PW_DI __half __ushort_as_half(unsigned short u) { return __builtin_bit_cast(__half, u); }
PW_DI unsigned short __half_as_ushort(__half h) { return __builtin_bit_cast(unsigned short, h); }
PW_DI __half __float2half(float f) { return (__half)f; }
PW_DI __half __float2half_rn(float f) { return (__half)f; }
PW_DI __half __float2half_rz(float f) { pw_mode_in<PW_RZ>(f); return pw_mode_out((__half)f); }
PW_DI __half __float2half_rd(float f) { pw_mode_in<PW_RD>(f); return pw_mode_out((__half)f); }
PW_DI __half __float2half_ru(float f) { pw_mode_in<PW_RU>(f); return pw_mode_out((__half)f); }
PW_DI __half __double2half(double d) { return (__half)d; }
PW_DI __half __int2half_rn(int i) { return (__half)i; }
PW_DI __half __ushort2half_rn(unsigned short u) { return (__half)u; }
PW_DI float __half2float(__half h) { return (float)h; }
PW_DI int __half2int_rn(__half h) { return (int)__builtin_rintf((float)h); }
PW_DI int __half2int_rz(__half h) { return (int)(float)h; }
PW_DI int __half2int_rd(__half h) { return (int)__builtin_floorf((float)h); }
PW_DI int __half2int_ru(__half h) { return (int)__builtin_ceilf((float)h); }
PW_DI short __half2short_rz(__half h) { return (short)(float)h; }
PW_DI unsigned __half2uint_rn(__half h) { return (unsigned)__builtin_rintf((float)h); }
PW_DI __half2 __halves2half2(__half lo, __half hi) { return (__half2){lo, hi}; }
PW_DI __half __low2half(__half2 v) { return v.x; }
PW_DI __half __high2half(__half2 v) { return v.y; }
PW_DI float __low2float(__half2 v) { return (float)v.x; }
PW_DI float __high2float(__half2 v) { return (float)v.y; }
PW_DI __half2 __floats2half2_rn(float a, float b) { return (__half2){(__half)a, (__half)b}; }
/* atom.add.noftz.f16x2: global_atomic_pk_add_f16 through a flat address;
 * f16: no scalar f16 atomic on gfx942, LLVM expands it to a CAS loop */
PW_DI __half2 atomicAdd(__half2 *p, __half2 v) { return __builtin_amdgcn_flat_atomic_fadd_v2f16(p, v); }
PW_DI __half atomicAdd(__half *p, __half v) {
  return __hip_atomic_fetch_add(p, v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
#endif
