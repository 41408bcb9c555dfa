/* benchmarks/native/cuda_on_hip.h: CUDA's device built-ins on clang's HIP
 * mode for AMD GPUs, for quality_bench.py (benchmarks/README.md).
 *
 * quality_bench compiles tests/cuda/ *.cu natively with
 *   clang-22 -x hip --offload-arch=gfx942 --cuda-device-only -nogpuinc -nogpulib -O3
 *   -include cuda_on_hip.h -I benchmarks/native/include
 * so that the native code is what clang would make of the same source, the
 * reference ptxwave's code (from nvcc's PTX) is compared against.  There are
 * no HIP headers and no device libraries (-nogpuinc -nogpulib): everything a
 * kernel uses maps to clang / __builtin_amdgcn_* builtins here, and the
 * headers under include/ (cuda_fp16.h, cuda_bf16.h, cuda/atomic,
 * cooperative_groups.h, the runtime and driver API) provide the rest.
 * Inline PTX `asm` cannot be compiled by clang: the test programs that use
 * it have a native twin of each asm site under `#ifdef PTXWAVE_NATIVE`,
 * which this header defines (nvcc never sees it, so its PTX is unchanged).
 * What has no native equivalent here is declared as an undefined weak
 * pw_nolib_* function: the functions only device libraries have (double
 * sin/exp/log/atan2/pow, atan2f, tanhf) and texture/surface fetches (gfx942
 * has no image instructions).  The code object links, and quality_bench.py
 * lists every kernel that reaches one (its code would count a call where
 * ptxwave's has the whole function) instead of comparing it.
 * Where a CUDA operation has no single AMDGPU instruction the choices are
 * the ones a native implementation makes, each explained at its section:
 * directed rounding by s_setreg of MODE, device printf as ptxwave's
 * records, match/redux with a partial mask in rounds over groups.
 *
 * CUDA semantics kept where they matter for the comparison:
 *  - a CUDA warp is 32 lanes; gfx942 waves have 64, so warp operations work
 *    on the 32-lane half of the wave that holds the lane (what ptxwave's
 *    lower/ does too: docs/lower.md), shuffles through ds_bpermute
 *    (AMDGPUUsage; HIP's __shfl* with width 32 do the same);
 *  - blockDim/gridDim come from the COV5 implicit kernel arguments
 *    (AMDGPUUsage "Code Object V5 Metadata": hidden_block_count_{x,y,z} at
 *    0/4/8, hidden_group_size_{x,y,z} at 12/14/16).
 * The host side of each .cu file only has to parse: the runtime API is
 * declared in include/cuda_runtime.h as catch-all templates.
 */
#ifndef PW_CUDA_ON_HIP_H
#define PW_CUDA_ON_HIP_H

#include <stddef.h>
#include <stdint.h>

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __managed__ __attribute__((managed))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __align__(n) __attribute__((aligned(n)))
#define __CUDACC__ 1
#define __CUDA_ARCH__ 800
#define PTXWAVE_NATIVE 1 /* tests/cuda/ *.cu: the native twins of inline PTX asm */
static constexpr int warpSize = 32;

#define PW_DI static __device__ inline __attribute__((always_inline))

/* ---- vector types (CUDA's vector_types.h: size-aligned structs) --------- */

#define PW_VEC(T, N)                                                                          \
  struct __attribute__((aligned(sizeof(T) * 2))) N##2 { T x, y; };                            \
  struct N##3 { T x, y, z; };                                                                 \
  struct __attribute__((aligned(sizeof(T) * 4 > 16 ? 16 : sizeof(T) * 4))) N##4 { T x, y, z, w; }; \
  static inline __host__ __device__ N##2 make_##N##2(T x, T y) { return {x, y}; }                                          \
  static inline __host__ __device__ N##3 make_##N##3(T x, T y, T z) { return {x, y, z}; }                                   \
  static inline __host__ __device__ N##4 make_##N##4(T x, T y, T z, T w) { return {x, y, z, w}; }
PW_VEC(float, float)
PW_VEC(double, double)
PW_VEC(int, int)
PW_VEC(unsigned, uint)
PW_VEC(long long, longlong)
PW_VEC(unsigned long long, ulonglong)
PW_VEC(short, short)
PW_VEC(unsigned short, ushort)
PW_VEC(signed char, char)
PW_VEC(unsigned char, uchar)

/* ---- dim3 and the built-in variables ------------------------------------ */

struct dim3 {
  unsigned x, y, z;
  __host__ __device__ constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};


PW_DI uint3 pw_tid(void) {
  return {__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z()};
}
PW_DI uint3 pw_ctaid(void) {
  return {__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z()};
}
PW_DI uint3 pw_ntid(void) {
  const unsigned short *p = (const unsigned short *)__builtin_amdgcn_implicitarg_ptr();
  return {p[6], p[7], p[8]};
}
PW_DI uint3 pw_nctaid(void) {
  const unsigned *p = (const unsigned *)__builtin_amdgcn_implicitarg_ptr();
  return {p[0], p[1], p[2]};
}
#define threadIdx (pw_tid())
#define blockIdx (pw_ctaid())
#define blockDim (pw_ntid())
#define gridDim (pw_nctaid())

/* ---- barriers and fences (AMDGPUUsage memory model) --------------------- */

PW_DI void __syncthreads(void) {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}
PW_DI void __threadfence_block(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup"); }
PW_DI void __threadfence(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "agent"); }
PW_DI void __threadfence_system(void) { __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, ""); }
PW_DI void __syncwarp(unsigned mask = 0xffffffffu) {
  (void)mask;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "wavefront");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "wavefront");
}

/* ---- warp operations: 32-lane halves of the 64-lane wave ---------------- */

PW_DI unsigned pw_lane64(void) { return __builtin_amdgcn_mbcnt_hi(~0u, __builtin_amdgcn_mbcnt_lo(~0u, 0u)); }
PW_DI unsigned pw_half(unsigned long long m) { return (unsigned)(m >> (pw_lane64() & 32)); }
PW_DI unsigned __ballot_sync(unsigned mask, int p) { return pw_half(__builtin_amdgcn_ballot_w64(p != 0)) & mask; }
PW_DI unsigned __activemask(void) { return pw_half(__builtin_amdgcn_read_exec()); }
PW_DI int __any_sync(unsigned mask, int p) { return __ballot_sync(mask, p) != 0; }
PW_DI int __all_sync(unsigned mask, int p) { return __ballot_sync(mask, p) == (mask & __activemask()); }
/* lane src (0..63) of v */
PW_DI int pw_bperm(unsigned src, int v) { return __builtin_amdgcn_ds_bpermute((int)(src << 2), v); }
PW_DI int pw_shfl_i(int v, int src, int width) {
  unsigned l = pw_lane64(), base = l & ~(unsigned)(width - 1);
  return pw_bperm(base + ((unsigned)src & (width - 1)), v);
}
PW_DI int pw_shfl_up_i(int v, unsigned d, int width) {
  unsigned l = pw_lane64(), w = l & (width - 1);
  return pw_bperm(w >= d ? l - d : l, v);
}
PW_DI int pw_shfl_down_i(int v, unsigned d, int width) {
  unsigned l = pw_lane64(), w = l & (width - 1);
  return pw_bperm(w + d < (unsigned)width ? l + d : l, v);
}
PW_DI int pw_shfl_xor_i(int v, int m, int width) {
  unsigned l = pw_lane64(), t = l ^ (unsigned)m;
  return pw_bperm((t & 32) == (l & 32) && (t & ~(unsigned)(width - 1)) == (l & ~(unsigned)(width - 1)) ? t : l, v);
}
/* every type through 32-bit pieces */
#define PW_SHFL(NAME, IMPL, ARG)                                                               \
  template <class T> PW_DI T NAME(unsigned mask, T v, ARG a, int width = 32) {                 \
    (void)mask;                                                                                \
    static_assert(sizeof(T) % 4 == 0 || sizeof(T) < 4, "shuffle type");                        \
    union { T t; int w[sizeof(T) < 4 ? 1 : sizeof(T) / 4]; } u;                               \
    u.w[0] = 0;                                                                                \
    u.t = v;                                                                                   \
    for (unsigned i = 0; i < sizeof u.w / 4; i++) u.w[i] = IMPL(u.w[i], a, width);             \
    return u.t;                                                                                \
  }
PW_SHFL(__shfl_sync, pw_shfl_i, int)
PW_SHFL(__shfl_up_sync, pw_shfl_up_i, unsigned)
PW_SHFL(__shfl_down_sync, pw_shfl_down_i, unsigned)
PW_SHFL(__shfl_xor_sync, pw_shfl_xor_i, int)

/* ---- atomics: relaxed, at the scope CUDA names ------------------------- */

#define PW_ATOM(NAME, OP)                                                                      \
  template <class T, class U> PW_DI T NAME(T *p, U v) {                                       \
    return __hip_atomic_##OP(p, (T)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);             \
  }                                                                                            \
  template <class T, class U> PW_DI T NAME##_block(T *p, U v) {                               \
    return __hip_atomic_##OP(p, (T)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);         \
  }                                                                                            \
  template <class T, class U> PW_DI T NAME##_system(T *p, U v) {                              \
    return __hip_atomic_##OP(p, (T)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_SYSTEM);            \
  }
PW_ATOM(atomicAdd, fetch_add)
PW_ATOM(atomicSub, fetch_sub)
PW_ATOM(atomicMin, fetch_min)
PW_ATOM(atomicMax, fetch_max)
PW_ATOM(atomicAnd, fetch_and)
PW_ATOM(atomicOr, fetch_or)
PW_ATOM(atomicXor, fetch_xor)
PW_ATOM(atomicExch, exchange)
template <class T, class U, class V> PW_DI T atomicCAS(T *p, U cmp, V v) {
  T c = (T)cmp;
  __hip_atomic_compare_exchange_strong(p, &c, (T)v, __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_AGENT);
  return c;
}
PW_DI unsigned atomicInc(unsigned *p, unsigned v) { return __builtin_amdgcn_atomic_inc32(p, v, __ATOMIC_RELAXED, "agent"); }
PW_DI unsigned atomicDec(unsigned *p, unsigned v) { return __builtin_amdgcn_atomic_dec32(p, v, __ATOMIC_RELAXED, "agent"); }

/* ---- loads and bit tricks ---------------------------------------------- */

template <class T> PW_DI T __ldg(const T *p) { return *p; }
PW_DI int __popc(unsigned x) { return __builtin_popcount(x); }
PW_DI int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
PW_DI int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
PW_DI int __clzll(long long x) { return x ? __builtin_clzll((unsigned long long)x) : 64; }
PW_DI int __ffs(int x) { return __builtin_ffs(x); }
PW_DI unsigned __brev(unsigned x) { return __builtin_bitreverse32(x); }
PW_DI unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
PW_DI int __mulhi(int a, int b) { return (int)(((long long)a * b) >> 32); }
PW_DI unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return (unsigned long long)(((unsigned __int128)a * b) >> 64);
}
PW_DI long long __mul64hi(long long a, long long b) { return (long long)(((__int128)a * b) >> 64); }
PW_DI int __mul24(int a, int b) { return ((a << 8) >> 8) * ((b << 8) >> 8); }
PW_DI unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
PW_DI float __int_as_float(int x) { return __builtin_bit_cast(float, x); }
PW_DI int __float_as_int(float x) { return __builtin_bit_cast(int, x); }
PW_DI float __uint_as_float(unsigned x) { return __builtin_bit_cast(float, x); }
PW_DI unsigned __float_as_uint(float x) { return __builtin_bit_cast(unsigned, x); }
PW_DI double __longlong_as_double(long long x) { return __builtin_bit_cast(double, x); }
PW_DI long long __double_as_longlong(double x) { return __builtin_bit_cast(long long, x); }
PW_DI double __hiloint2double(int hi, int lo) {
  return __builtin_bit_cast(double, ((unsigned long long)(unsigned)hi << 32) | (unsigned)lo);
}
PW_DI long long clock64(void) { return (long long)__builtin_readcyclecounter(); }
PW_DI int clock(void) { return (int)__builtin_readcyclecounter(); }

/* ---- math: clang builtins (llvm.* intrinsics the backend expands) ------- */

PW_DI float sqrtf(float x) { return __builtin_sqrtf(x); }
PW_DI double sqrt(double x) { return __builtin_sqrt(x); }
PW_DI float rsqrtf(float x) { return 1.0f / __builtin_sqrtf(x); }
PW_DI double rsqrt(double x) { return 1.0 / __builtin_sqrt(x); }
PW_DI float fmaf(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
PW_DI double fma(double a, double b, double c) { return __builtin_fma(a, b, c); }
PW_DI float fabsf(float x) { return __builtin_fabsf(x); }
PW_DI double fabs(double x) { return __builtin_fabs(x); }
PW_DI float fminf(float a, float b) { return __builtin_fminf(a, b); }
PW_DI float fmaxf(float a, float b) { return __builtin_fmaxf(a, b); }
PW_DI double fmin(double a, double b) { return __builtin_fmin(a, b); }
PW_DI double fmax(double a, double b) { return __builtin_fmax(a, b); }
PW_DI float floorf(float x) { return __builtin_floorf(x); }
PW_DI float ceilf(float x) { return __builtin_ceilf(x); }
PW_DI float truncf(float x) { return __builtin_truncf(x); }
PW_DI float rintf(float x) { return __builtin_rintf(x); }
PW_DI float roundf(float x) { return __builtin_roundf(x); }
PW_DI double floor(double x) { return __builtin_floor(x); }
PW_DI double ceil(double x) { return __builtin_ceil(x); }
PW_DI double trunc(double x) { return __builtin_trunc(x); }
PW_DI double rint(double x) { return __builtin_rint(x); }
PW_DI double nearbyint(double x) { return __builtin_nearbyint(x); }
PW_DI double round(double x) { return __builtin_round(x); }
PW_DI float copysignf(float a, float b) { return __builtin_copysignf(a, b); }
PW_DI double copysign(double a, double b) { return __builtin_copysign(a, b); }
PW_DI float expf(float x) { return __builtin_expf(x); }
PW_DI float logf(float x) { return __builtin_logf(x); }
PW_DI float exp2f(float x) { return __builtin_exp2f(x); }
PW_DI float log2f(float x) { return __builtin_log2f(x); }
PW_DI float sinf(float x) { return __builtin_sinf(x); }
PW_DI float cosf(float x) { return __builtin_cosf(x); }
PW_DI float ldexpf(float x, int e) { return __builtin_ldexpf(x, e); }
PW_DI double ldexp(double x, int e) { return __builtin_ldexp(x, e); }
/* the fast intrinsics: hardware approximations, as NVIDIA's are */
PW_DI float __expf(float x) { return __builtin_amdgcn_exp2f(x * 1.44269504f); }
PW_DI float __logf(float x) { return __builtin_amdgcn_logf(x) * 0.693147181f; }
PW_DI float __sinf(float x) { return __builtin_amdgcn_sinf(x * 0.159154943f); }
PW_DI float __cosf(float x) { return __builtin_amdgcn_cosf(x * 0.159154943f); }
PW_DI float __fdividef(float a, float b) { return a * __builtin_amdgcn_rcpf(b); }
PW_DI float __saturatef(float x) { return __builtin_fminf(__builtin_fmaxf(x, 0.0f), 1.0f); }
/* ADD, SUB and MUL of type T, each rounded once: CUDA's _rn and __hadd
 * forms are never contracted into an fma (also used by pw_half_ops.h for
 * the 16-bit types and their pairs) */
#define PW_UNCONTRACTED_OPS(T, ADD, SUB, MUL)                                   \
  PW_DI T ADD(T a, T b) { _Pragma("clang fp contract(off)") return a + b; }     \
  PW_DI T SUB(T a, T b) { _Pragma("clang fp contract(off)") return a - b; }     \
  PW_DI T MUL(T a, T b) { _Pragma("clang fp contract(off)") return a * b; }
PW_UNCONTRACTED_OPS(float, __fadd_rn, __fsub_rn, __fmul_rn)
PW_DI float __fmaf_rn(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
template <class T> PW_DI T min(T a, T b) { return a < b ? a : b; }
template <class T> PW_DI T max(T a, T b) { return a > b ? a : b; }
PW_DI int abs(int x) { return x < 0 ? -x : x; }

/* isnan/isinf for float and double (math.h's macros are host-only here) */
#undef isnan
#undef isinf
template <class T> PW_DI bool isnan(T x) { return __builtin_isnan(x); }
template <class T> PW_DI bool isinf(T x) { return __builtin_isinf(x); }

/* ---- barrier reductions and warp reductions ----------------------------- */

/* bar.red: every lane's predicate through LDS would be what a HIP author
 * writes; an LDS counter with workgroup-scope atomics between two barriers */
PW_DI int pw_bar_count(int p) {
  __shared__ unsigned cnt;
  if (__builtin_amdgcn_workitem_id_x() == 0 && __builtin_amdgcn_workitem_id_y() == 0 &&
      __builtin_amdgcn_workitem_id_z() == 0)
    cnt = 0;
  __syncthreads();
  if (p) __hip_atomic_fetch_add(&cnt, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __syncthreads();
  int r = (int)cnt;
  __syncthreads();
  return r;
}
PW_DI int __syncthreads_count(int p) { return pw_bar_count(p); }
PW_DI int __syncthreads_or(int p) { return pw_bar_count(p) != 0; }
PW_DI int __syncthreads_and(int p) {
  uint3 n = pw_ntid();
  return pw_bar_count(p) == (int)(n.x * n.y * n.z);
}
/* redux.sync / __reduce_*_sync(mask, v): op over the lanes of mask (PTX
 * ISA "redux.sync"; every lane of mask executes it with the same mask).
 * The full mask, known at compile time: a butterfly over the 32-lane half
 * (ds_bpermute).  Any other mask: the lanes of the wave are served in
 * rounds, one group (same mask, same half) per round, found with
 * readfirstlane; the round's mask is uniform, so its values are read with
 * v_readlane into scalar registers and folded on the scalar unit.  (A
 * butterfly with the absent lanes as the identity is wrong for masks like
 * {0, 3}, and inactive lanes hold stale values.) */
template <class T, class F> PW_DI T pw_reduce_masked(unsigned mask, T v, F op) {
  static_assert(sizeof(T) == 4, "32-bit reduction");
  T r;
  for (;;) {
    unsigned m0 = (unsigned)__builtin_amdgcn_readfirstlane((int)mask);
    unsigned h0 = (unsigned)__builtin_amdgcn_readfirstlane((int)(pw_lane64() & 32));
    if (mask == m0 && (pw_lane64() & 32) == h0) {
      unsigned m = m0;
      T acc = (T)__builtin_amdgcn_readlane((int)v, (int)(h0 + __builtin_ctz(m)));
      for (m &= m - 1; m; m &= m - 1) acc = op(acc, (T)__builtin_amdgcn_readlane((int)v, (int)(h0 + __builtin_ctz(m))));
      r = acc;
      break;
    }
  }
  return r;
}
#define PW_REDUCE(NAME, T, OP)                                                                \
  PW_DI T NAME(unsigned mask, T v) {                                                          \
    auto op = [](T v, T w) { return OP; };                                                    \
    if (__builtin_constant_p(mask) && mask == 0xffffffffu) {                                  \
      for (int o = 16; o; o >>= 1) v = op(v, __shfl_xor_sync(mask, v, o));                    \
      return v;                                                                               \
    }                                                                                         \
    return pw_reduce_masked(mask, v, op);                                                     \
  }
PW_REDUCE(__reduce_add_sync, unsigned, v + w)
PW_REDUCE(__reduce_min_sync, unsigned, v < w ? v : w)
PW_REDUCE(__reduce_max_sync, unsigned, v > w ? v : w)
PW_REDUCE(__reduce_and_sync, unsigned, v & w)
PW_REDUCE(__reduce_or_sync, unsigned, v | w)
PW_REDUCE(__reduce_xor_sync, unsigned, v ^ w)
PW_REDUCE(__reduce_add_sync, int, v + w)
PW_REDUCE(__reduce_min_sync, int, v < w ? v : w)
PW_REDUCE(__reduce_max_sync, int, v > w ? v : w)
/* match: the lanes of the 32-lane half holding the same value, the way a
 * wave does it (HIP's __match_any works alike): each round takes the value
 * of the first lane still looking (readfirstlane) and the ballot of the
 * lanes holding it, which are done; as many rounds as distinct values
 * among the active lanes, not 32 shuffles. */
template <class T> PW_DI T pw_readfirst(T v) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "readfirstlane type");
  if constexpr (sizeof(T) == 4) {
    return __builtin_bit_cast(T, __builtin_amdgcn_readfirstlane(__builtin_bit_cast(int, v)));
  } else {
    unsigned long long u = __builtin_bit_cast(unsigned long long, v);
    unsigned lo = (unsigned)__builtin_amdgcn_readfirstlane((int)(unsigned)u);
    unsigned hi = (unsigned)__builtin_amdgcn_readfirstlane((int)(unsigned)(u >> 32));
    return __builtin_bit_cast(T, (unsigned long long)hi << 32 | lo);
  }
}
template <class T> PW_DI unsigned __match_any_sync(unsigned mask, T v) {
  unsigned r;
  for (;;) {
    if (v == pw_readfirst(v)) {
      r = pw_half(__builtin_amdgcn_ballot_w64(true));
      break;
    }
  }
  return r & mask;
}
template <class T> PW_DI unsigned __match_all_sync(unsigned mask, T v, int *pred) {
  unsigned m = __match_any_sync(mask, v);
  *pred = m == (mask & __activemask());
  return *pred ? m : 0;
}
PW_DI int __ffsll(long long x) { return __builtin_ffsll(x); }
PW_DI unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }
PW_DI unsigned __byte_perm(unsigned a, unsigned b, unsigned s) {
  unsigned long long v = ((unsigned long long)b << 32) | a;
  unsigned r = 0;
  for (int i = 0; i < 4; i++) r |= (unsigned)((v >> (((s >> (4 * i)) & 7) * 8)) & 0xff) << (8 * i);
  return r;
}
PW_DI unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32 | lo) << (s & 31)) >> 32);
}
PW_DI unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (s & 31));
}
PW_DI unsigned __funnelshift_lc(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)((((unsigned long long)hi << 32 | lo) << (s > 32 ? 32 : s)) >> 32);
}
PW_DI unsigned __funnelshift_rc(unsigned lo, unsigned hi, unsigned s) {
  return (unsigned)(((unsigned long long)hi << 32 | lo) >> (s > 32 ? 32 : s));
}

/* ---- directed rounding and flush-to-zero (float_math, double_math, fp16) --
 * clang cannot express a rounding mode other than the default on AMDGPU:
 * `#pragma STDC FENV_ROUND` is "not supported" (clang-22 ignores it), and
 * `#pragma STDC FENV_ACCESS ON` is ignored on this target unless
 * -fexperimental-strict-floating-point, with which a strictfp helper
 * inlined into a kernel (not strictfp) loses its ordering: two adds in two
 * modes were merged into one (tried with clang-22).  So the mode is set the
 * way the hardware does it and the way LLVM's own llvm.set.rounding lowers:
 * s_setreg of the MODE register's FP_ROUND field (hwreg(HW_REG_MODE, 0, 4):
 * bits [1:0] round mode of f32, [3:2] of f64 and f16; 0 nearest even,
 * 1 +inf, 2 -inf, 3 zero; AMD Instinct MI300 ISA, "MODE" register; AMDGPU
 * usage guide, "llvm.set.rounding"), the operation, then MODE back to
 * round-to-nearest (CUDA's default).  The setreg is inline asm that takes
 * the operands as "+v" (read-modify-write), and the restore takes the
 * result the same way, so the operation is data-dependent on both and can
 * be neither hoisted out nor merged with the same operation in another
 * mode; between them the compiler emits its usual code (for div/sqrt the
 * whole correctly-rounded sequence runs in the directed mode, as its final
 * fma/fixup rounding is what the mode steers).  The cost counted: two
 * s_setreg and the operands forced to VGPRs, what a native directed
 * operation costs on this hardware, which has no per-instruction rounding
 * field (unlike PTX's .rz/.rm/.rp).  FTZ (PTX .ftz) is the same with the
 * FP_DENORM field of f32 (hwreg(HW_REG_MODE, 4, 2): 0 flushes inputs and
 * outputs, 3 keeps denormals, the kernel default). */
enum { PW_RN = 0x0, PW_RU = 0x5, PW_RD = 0xa, PW_RZ = 0xf };
template <int M, class T> PW_DI void pw_mode_in(T &a) {
  asm volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), %1" : "+v"(a) : "i"(M));
}
template <int M, class T, class U> PW_DI void pw_mode_in(T &a, U &b) {
  asm volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), %2" : "+v"(a), "+v"(b) : "i"(M));
}
template <int M, class T, class U, class V> PW_DI void pw_mode_in(T &a, U &b, V &c) {
  asm volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), %3" : "+v"(a), "+v"(b), "+v"(c) : "i"(M));
}
template <class T> PW_DI T pw_mode_out(T r) {
  asm volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 0, 4), 0" : "+v"(r));
  return r;
}
/* NAME_rz/_rd/_ru: setreg around the operation (NAME_rn: the default mode) */
#define PW_RND2(NAME, T, EXPR)                                                                \
  PW_DI T NAME##_rz(T a, T b) { pw_mode_in<PW_RZ>(a, b); return pw_mode_out<T>(EXPR); }       \
  PW_DI T NAME##_rd(T a, T b) { pw_mode_in<PW_RD>(a, b); return pw_mode_out<T>(EXPR); }       \
  PW_DI T NAME##_ru(T a, T b) { pw_mode_in<PW_RU>(a, b); return pw_mode_out<T>(EXPR); }
#define PW_RND1(NAME, T, R, EXPR)                                                             \
  PW_DI R NAME##_rn(T a) { return EXPR; }                                                     \
  PW_DI R NAME##_rz(T a) { pw_mode_in<PW_RZ>(a); return pw_mode_out<R>(EXPR); }               \
  PW_DI R NAME##_rd(T a) { pw_mode_in<PW_RD>(a); return pw_mode_out<R>(EXPR); }               \
  PW_DI R NAME##_ru(T a) { pw_mode_in<PW_RU>(a); return pw_mode_out<R>(EXPR); }
PW_RND2(__fadd, float, a + b)
PW_RND2(__fmul, float, a * b)
PW_RND2(__fdiv, float, a / b)
PW_RND2(__dadd, double, a + b)
PW_RND2(__dmul, double, a * b)
PW_RND2(__ddiv, double, a / b)
PW_RND1(__fsqrt, float, float, __builtin_sqrtf(a))
PW_RND1(__frcp, float, float, 1.0f / a)
PW_RND1(__dsqrt, double, double, __builtin_sqrt(a))
PW_RND1(__drcp, double, double, 1.0 / a)
PW_RND1(__int2float, int, float, (float)a)
PW_RND1(__uint2float, unsigned, float, (float)a)
PW_RND1(__ll2float, long long, float, (float)a)
PW_RND1(__ull2float, unsigned long long, float, (float)a)
PW_RND1(__ll2double, long long, double, (double)a)
PW_RND1(__ull2double, unsigned long long, double, (double)a)
PW_RND1(__double2float, double, float, (float)a)
PW_DI double __int2double_rn(int a) { return (double)a; }
PW_DI float __fdiv_rn(float a, float b) { return a / b; }
PW_DI double __ddiv_rn(double a, double b) { return a / b; }
PW_DI double __dadd_rn(double a, double b) {
#pragma clang fp contract(off)
  return a + b;
}
PW_DI double __dmul_rn(double a, double b) {
#pragma clang fp contract(off)
  return a * b;
}
PW_DI float __fmaf_rz(float a, float b, float c) { pw_mode_in<PW_RZ>(a, b, c); return pw_mode_out(__builtin_fmaf(a, b, c)); }
PW_DI float __fmaf_rd(float a, float b, float c) { pw_mode_in<PW_RD>(a, b, c); return pw_mode_out(__builtin_fmaf(a, b, c)); }
PW_DI float __fmaf_ru(float a, float b, float c) { pw_mode_in<PW_RU>(a, b, c); return pw_mode_out(__builtin_fmaf(a, b, c)); }
PW_DI double __fma_rn(double a, double b, double c) { return __builtin_fma(a, b, c); }
/* float -> integer: what HIP's headers do (round, then convert: v_cvt_*
 * saturates and maps NaN to 0, as PTX cvt.rni/rzi/rmi/rpi do) */
#define PW_F2I(NAME, F, I, RINT, FLOOR, CEIL)                                                 \
  PW_DI I NAME##_rn(F x) { return (I)RINT(x); }                                               \
  PW_DI I NAME##_rz(F x) { return (I)x; }                                                     \
  PW_DI I NAME##_rd(F x) { return (I)FLOOR(x); }                                              \
  PW_DI I NAME##_ru(F x) { return (I)CEIL(x); }
PW_F2I(__float2int, float, int, __builtin_rintf, __builtin_floorf, __builtin_ceilf)
PW_F2I(__float2uint, float, unsigned, __builtin_rintf, __builtin_floorf, __builtin_ceilf)
PW_F2I(__float2ll, float, long long, __builtin_rintf, __builtin_floorf, __builtin_ceilf)
PW_F2I(__float2ull, float, unsigned long long, __builtin_rintf, __builtin_floorf, __builtin_ceilf)
PW_F2I(__double2int, double, int, __builtin_rint, __builtin_floor, __builtin_ceil)
PW_F2I(__double2uint, double, unsigned, __builtin_rint, __builtin_floor, __builtin_ceil)
PW_F2I(__double2ll, double, long long, __builtin_rint, __builtin_floor, __builtin_ceil)
PW_F2I(__double2ull, double, unsigned long long, __builtin_rint, __builtin_floor, __builtin_ceil)
PW_DI int __double2hiint(double x) { return (int)(__builtin_bit_cast(unsigned long long, x) >> 32); }
PW_DI int __double2loint(double x) { return (int)__builtin_bit_cast(unsigned long long, x); }
/* PTX .ftz on an f32 operation: the FP_DENORM bits of f32 set to flush
 * around it (see above) */
template <class T, class U> PW_DI void pw_ftz_in(T &a, U &b) {
  asm volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 0" : "+v"(a), "+v"(b));
}
template <class T> PW_DI T pw_ftz_out(T r) {
  asm volatile("s_setreg_imm32_b32 hwreg(HW_REG_MODE, 4, 2), 3" : "+v"(r));
  return r;
}

/* ---- functions only device libraries provide -----------------------------
 * With -nogpulib there is no ocml: these are undefined weak symbols, so the
 * code object links and quality_bench.py lists the kernels that call one
 * (found by their relocations) instead of comparing them. */
#define PW_NOLIB1(NAME, T)                                                                    \
  extern "C" __device__ __attribute__((weak)) T pw_nolib_##NAME(T);                          \
  PW_DI T NAME(T x) { return pw_nolib_##NAME(x); }
#define PW_NOLIB2(NAME, T)                                                                    \
  extern "C" __device__ __attribute__((weak)) T pw_nolib_##NAME(T, T);                       \
  PW_DI T NAME(T x, T y) { return pw_nolib_##NAME(x, y); }
PW_NOLIB1(sin, double)
PW_NOLIB1(cos, double)
PW_NOLIB1(exp, double)
PW_NOLIB1(log, double)
PW_NOLIB2(atan2, double)
PW_NOLIB2(pow, double)
PW_NOLIB2(atan2f, float)
PW_NOLIB1(tanhf, float)

/* ---- integer dot products and averages (int_bitops) --------------------- */

/* dp4a: v_dot4_i32_i8 / v_dot4_u32_u8 (gfx942 has both, no clamp: PTX
 * dp4a wraps) */
PW_DI int __dp4a(int a, int b, int c) { return __builtin_amdgcn_sdot4(a, b, c, false); }
PW_DI unsigned __dp4a(unsigned a, unsigned b, unsigned c) { return __builtin_amdgcn_udot4(a, b, c, false); }
/* dp2a.lo/hi: two 16-bit halves of a times the low or high two bytes of b
 * (PTX ISA, dp2a); v_dot2_i32_i16 takes 16-bit pairs, so the bytes are
 * extended to 16 bits first (v_perm / v_bfe) */
typedef short pw_short2 __attribute__((ext_vector_type(2)));
typedef unsigned short pw_ushort2 __attribute__((ext_vector_type(2)));
PW_DI int pw_dp2a_s(int a, int b, int c, int sh) {
  pw_short2 va = __builtin_bit_cast(pw_short2, a);
  pw_short2 vb = {(short)(signed char)(b >> sh), (short)(signed char)(b >> (sh + 8))};
  return __builtin_amdgcn_sdot2(va, vb, c, false);
}
PW_DI unsigned pw_dp2a_u(unsigned a, unsigned b, unsigned c, int sh) {
  pw_ushort2 va = __builtin_bit_cast(pw_ushort2, a);
  pw_ushort2 vb = {(unsigned short)((b >> sh) & 0xff), (unsigned short)((b >> (sh + 8)) & 0xff)};
  return __builtin_amdgcn_udot2(va, vb, c, false);
}
PW_DI int __dp2a_lo(int a, int b, int c) { return pw_dp2a_s(a, b, c, 0); }
PW_DI int __dp2a_hi(int a, int b, int c) { return pw_dp2a_s(a, b, c, 16); }
PW_DI unsigned __dp2a_lo(unsigned a, unsigned b, unsigned c) { return pw_dp2a_u(a, b, c, 0); }
PW_DI unsigned __dp2a_hi(unsigned a, unsigned b, unsigned c) { return pw_dp2a_u(a, b, c, 16); }
PW_DI unsigned __sad(int a, int b, unsigned c) {
  return c + (a > b ? (unsigned)a - (unsigned)b : (unsigned)b - (unsigned)a);
}
PW_DI unsigned __usad(unsigned a, unsigned b, unsigned c) { return c + (a > b ? a - b : b - a); }
PW_DI int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
PW_DI int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
PW_DI unsigned __uhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b) >> 1); }
PW_DI unsigned __urhadd(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a + b + 1) >> 1); }

/* ---- special registers of PTX without a CUDA built-in ------------------- */

/* %laneid: the lane in the CUDA warp (the 32-lane half of the wave) */
PW_DI unsigned pw_laneid(void) { return pw_lane64() & 31; }
/* %lanemask_*: relative to the lane in the 32-lane warp */
PW_DI unsigned pw_lanemask_lt(void) { return (1u << pw_laneid()) - 1; }
/* %smid / %warpid: the same values ptxwave's lowering gives them
 * (docs/lowering.md "Special registers", ir/ir_targets.def), so that the
 * twin does the same work: %smid from HW_ID on gfx9 (CU_ID [11:8] |
 * SE_ID [15:13] << 4), from HW_ID1 on gfx10+ (WGP_ID [13:10] | SA_ID [16]
 * << 4 | SE_ID << 5: [19:18] on gfx10, [20:18] on gfx11, none on gfx12),
 * %warpid = the linear thread id >> 5 */
PW_DI unsigned pw_smid(void) {
#if defined(__GFX9__)
  unsigned h = __builtin_amdgcn_s_getreg(4 | (0 << 6) | ((32 - 1) << 11)); /* hwreg(HW_REG_HW_ID) */
  return ((h >> 8) & 15) | ((h >> 9) & 0x70);
#else
  unsigned h = __builtin_amdgcn_s_getreg(23 | (0 << 6) | ((32 - 1) << 11)); /* hwreg(HW_REG_HW_ID1) */
  unsigned id = ((h >> 10) & 15) | ((h >> 12) & 0x10);
#if defined(__GFX10__)
  id |= (h >> 13) & 0x60;
#elif defined(__GFX11__)
  id |= (h >> 13) & 0xe0;
#endif
  return id;
#endif
}
PW_DI unsigned pw_warpid(void) {
  uint3 t = pw_tid(), n = pw_ntid();
  return ((t.z * n.y + t.y) * n.x + t.x) >> 5;
}
/* %dynamic_smem_size: COV5 hidden_dynamic_lds_size (AMDGPUUsage, implicit
 * kernel argument at offset 120) */
PW_DI unsigned pw_dynamic_smem_size(void) {
  return ((const unsigned *)__builtin_amdgcn_implicitarg_ptr())[30];
}
PW_DI size_t __cvta_generic_to_shared(const void *p) {
  return (size_t)(unsigned)(unsigned long long)(const __attribute__((address_space(3))) char *)p;
}

/* ---- device printf --------------------------------------------------------
 * No device libraries, so no HIP printf (its hostcall services are in
 * ockl).  This writes the same records ptxwave's lowering of vprintf does
 * (lower/lower_printf.c, util/pw_printf.h), so the comparison is like for
 * like: {u64 buffer; u32 capacity; u32 dropped} in a global variable the
 * runtime fills, one atomic add on the buffer's offset to reserve a record
 * {u32 size; u32 kind = 1; u64 format; arguments}, each argument at the
 * next offset aligned to its size after C's default promotions (float ->
 * double, char/short -> int; PTX ISA "vprintf"), a dropped record counted,
 * the number of arguments returned.  The difference: vprintf learns the
 * layout from the format, this from the argument types (the same layout
 * for a format that matches its arguments). */
struct pw_printf_var { unsigned long long buffer; unsigned capacity, dropped; };
__device__ pw_printf_var __ptxwave_printf;
template <class T> PW_DI auto pw_promote(T v) {
  if constexpr (__is_same(T, float)) return (double)v;
  else if constexpr (__is_integral(T) && sizeof(T) < 4) return (int)v;
  else if constexpr (__is_pointer(T)) return (unsigned long long)v;
  else return v;
}
template <class... P> static constexpr unsigned pw_args_bytes(void) {
  unsigned off = 0;
  ((off = (off + (unsigned)sizeof(P) - 1) / (unsigned)sizeof(P) * (unsigned)sizeof(P) + (unsigned)sizeof(P)), ...);
  return off;
}
template <class P> PW_DI void pw_put(char *rec, unsigned &off, P v) {
  off = (off + (unsigned)sizeof(P) - 1) / (unsigned)sizeof(P) * (unsigned)sizeof(P);
  *(P *)(rec + 16 + off) = v;
  off += sizeof(P);
}
template <class... A> PW_DI int printf(const char *fmt, A... a) {
  constexpr unsigned size = (16 + pw_args_bytes<decltype(pw_promote(a))...>() + 7) & ~7u;
  pw_printf_var *pv = &__ptxwave_printf;
  char *buf = (char *)pv->buffer;
  unsigned cap = pv->capacity, old = 0;
  if (buf) old = __hip_atomic_fetch_add((unsigned *)buf, size, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  if (!buf || old > cap || cap - old < size) {
    __hip_atomic_fetch_add(&pv->dropped, 1u, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
    return -1;
  }
  char *rec = buf + 16 + old;
  *(unsigned *)rec = size;
  *(unsigned *)(rec + 4) = 1;
  *(const char **)(rec + 8) = fmt;
  unsigned off = 0;
  (pw_put(rec, off, pw_promote(a)), ...);
  (void)off;
  return (int)sizeof...(A);
}

/* ---- textures and surfaces ------------------------------------------------
 * gfx942 has no image instructions (clang-22: image_sample "needs target
 * feature extended-image-insts"), so there is no native sampling to compare
 * with; ptxwave samples in software from its own descriptor (docs/
 * lowering.md "Textures").  The fetches are pw_nolib_ calls: texture.cu
 * compiles, and quality_bench lists its kernels as having no native
 * counterpart. */
typedef unsigned long long cudaTextureObject_t;
typedef unsigned long long cudaSurfaceObject_t;
extern "C" __device__ __attribute__((weak)) float4 pw_nolib_tex2D(cudaTextureObject_t, float, float);
extern "C" __device__ __attribute__((weak)) float4 pw_nolib_tex2Dgather(cudaTextureObject_t, float, float, int);
extern "C" __device__ __attribute__((weak)) float4 pw_nolib_tex1Dfetch(cudaTextureObject_t, int);
extern "C" __device__ __attribute__((weak)) int pw_nolib_surf2Dread(cudaSurfaceObject_t, int, int);
extern "C" __device__ __attribute__((weak)) void pw_nolib_surf2Dwrite(int, cudaSurfaceObject_t, int, int);
template <class T> PW_DI T pw_from4(float4 v) {
  if constexpr (sizeof(T) == sizeof(float4)) return __builtin_bit_cast(T, v);
  else if constexpr (sizeof(T) == 4) return __builtin_bit_cast(T, v.x);
  else { T r; __builtin_memcpy(&r, &v, sizeof r); return r; }
}
template <class T> PW_DI T tex2D(cudaTextureObject_t t, float x, float y) { return pw_from4<T>(pw_nolib_tex2D(t, x, y)); }
template <class T> PW_DI T tex2Dgather(cudaTextureObject_t t, float x, float y, int c = 0) {
  return pw_from4<T>(pw_nolib_tex2Dgather(t, x, y, c));
}
template <class T> PW_DI T tex1Dfetch(cudaTextureObject_t t, int i) { return pw_from4<T>(pw_nolib_tex1Dfetch(t, i)); }
template <class T> PW_DI T surf2Dread(cudaSurfaceObject_t s, int x, int y) {
  return __builtin_bit_cast(T, pw_nolib_surf2Dread(s, x, y));
}
PW_DI void surf2Dwrite(int v, cudaSurfaceObject_t s, int x, int y) { pw_nolib_surf2Dwrite(v, s, x, y); }

#endif
