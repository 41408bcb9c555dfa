/* benchmarks/native/include/cooperative_groups.h: exactly what
 * tests/cuda/coop_groups.cu uses of CUDA's cooperative groups, for the
 * native compile of quality_bench.py, on the wave operations of
 * cuda_on_hip.h, with CUDA's semantics: a warp is 32 lanes (on gfx942's
 * 64-lane waves, the 32-lane half holding the lane: a tile of 32 is half a
 * wave), tiles of N are the aligned groups of N lanes of the warp, ranks
 * follow the block's linear thread index.
 *   thread_block: sync (s_barrier), thread_rank, size, group_index,
 *     thread_index;
 *   thread_block_tile<N>: shfl, shfl_down, shfl_xor (ds_bpermute within
 *     the N-lane segment), ballot / any / all (the segment's bits of the
 *     wave's ballot), thread_rank, meta_group_rank, meta_group_size, sync;
 *   coalesced_group (coalesced_threads, labeled_partition): a lane mask of
 *     the warp; rank = lanes of the mask below the lane, shfl by rank;
 *   reduce: butterfly over a tile's lanes; over a coalesced group,
 *     pw_reduce_masked (cuda_on_hip.h: one round per group of lanes with
 *     the same mask, v_readlane and the scalar unit), since the groups of
 *     a labeled partition differ per lane;
 *   inclusive_scan: Hillis-Steele with shfl_up within the tile. */
#ifndef PW_NATIVE_COOPERATIVE_GROUPS_H
#define PW_NATIVE_COOPERATIVE_GROUPS_H
namespace cooperative_groups {
struct thread_block {
  __device__ void sync() const { __syncthreads(); }
  __device__ unsigned thread_rank() const {
    uint3 t = pw_tid(), n = pw_ntid();
    return (t.z * n.y + t.y) * n.x + t.x;
  }
  __device__ unsigned size() const { uint3 n = pw_ntid(); return n.x * n.y * n.z; }
  __device__ dim3 group_index() const { uint3 b = pw_ctaid(); return dim3(b.x, b.y, b.z); }
  __device__ dim3 thread_index() const { uint3 t = pw_tid(); return dim3(t.x, t.y, t.z); }
};
static __device__ inline thread_block this_thread_block() { return thread_block(); }

template <unsigned N> struct thread_block_tile {
  static_assert(N && N <= 32 && (N & (N - 1)) == 0, "tile size");
  __device__ unsigned thread_rank() const { return pw_laneid() & (N - 1); }
  __device__ static constexpr unsigned size() { return N; }
  __device__ unsigned meta_group_rank() const { return thread_block().thread_rank() / N; }
  __device__ unsigned meta_group_size() const { return (thread_block().size() + N - 1) / N; }
  __device__ void sync() const { __syncwarp(); }
  template <class T> __device__ T shfl(T v, int src) const { return __shfl_sync(0xffffffffu, v, src, N); }
  template <class T> __device__ T shfl_down(T v, unsigned d) const { return __shfl_down_sync(0xffffffffu, v, d, N); }
  template <class T> __device__ T shfl_up(T v, unsigned d) const { return __shfl_up_sync(0xffffffffu, v, d, N); }
  template <class T> __device__ T shfl_xor(T v, int m) const { return __shfl_xor_sync(0xffffffffu, v, m, N); }
  __device__ unsigned ballot(int p) const {
    unsigned b = __ballot_sync(0xffffffffu, p);
    return N == 32 ? b : (b >> (pw_laneid() & ~(N - 1))) & ((1u << N) - 1);
  }
  __device__ bool any(int p) const { return ballot(p) != 0; }
  __device__ bool all(int p) const { return ballot(p) == (N == 32 ? 0xffffffffu : (1u << N) - 1); }
};
template <unsigned N> static __device__ inline thread_block_tile<N> tiled_partition(const thread_block &) {
  return thread_block_tile<N>();
}

struct coalesced_group {
  unsigned mask;
  __device__ unsigned size() const { return __builtin_popcount(mask); }
  __device__ unsigned thread_rank() const { return __builtin_popcount(mask & pw_lanemask_lt()); }
  /* the lane of rank r: the r-th set bit of the mask */
  __device__ unsigned lane_of(unsigned r) const {
    unsigned m = mask;
    for (unsigned i = 0; i < r; i++) m &= m - 1;
    return __builtin_ctz(m);
  }
  template <class T> __device__ T shfl(T v, unsigned r) const { return __shfl_sync(mask, v, (int)lane_of(r)); }
};
static __device__ inline coalesced_group coalesced_threads() { return coalesced_group{__activemask()}; }
template <class T> static __device__ inline coalesced_group labeled_partition(const thread_block_tile<32> &, T label) {
  return coalesced_group{__match_any_sync(__activemask(), label)};
}

template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class T> struct greater { __device__ T operator()(T a, T b) const { return a > b ? a : b; } };
template <class T> struct less { __device__ T operator()(T a, T b) const { return a < b ? a : b; } };
template <class T> struct bit_and { __device__ T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { __device__ T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { __device__ T operator()(T a, T b) const { return a ^ b; } };

template <unsigned N, class T, class Op> static __device__ inline T reduce(const thread_block_tile<N> &g, T v, Op op) {
  for (unsigned o = N / 2; o; o >>= 1) v = op(v, g.shfl_xor(v, (int)o));
  return v;
}
template <class T, class Op> static __device__ inline T reduce(const coalesced_group &g, T v, Op op) {
  return pw_reduce_masked(g.mask, v, op);
}
template <unsigned N, class T> static __device__ inline T inclusive_scan(const thread_block_tile<N> &g, T v) {
  for (unsigned o = 1; o < N; o <<= 1) {
    T x = g.shfl_up(v, o);
    if (g.thread_rank() >= o) v += x;
  }
  return v;
}
} // namespace cooperative_groups
#endif
