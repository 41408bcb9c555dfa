/*
 * warp_vote: votes, ballots, match, redux and lane masks, converged and
 * divergent.
 *
 *  - vote_full: all 32 lanes: __ballot_sync, __all_sync, __any_sync,
 *    vote.sync.uni (inline PTX), __activemask, __match_any_sync (32- and
 *    64-bit keys), __match_all_sync with its predicate, __reduce_add/min/max
 *    (unsigned and signed), __reduce_and/or/xor (redux.sync, sm_80), and the
 *    special registers %laneid, %lanemask_eq/lt/le/gt/ge.  Warps are given
 *    all-true, all-false and mixed predicates so every vote answers both ways.
 *  - vote_divergent: the same operations in the two branches of
 *    `lane < 20`, each with its branch's mask, and a nested branch on odd
 *    lanes; __activemask() after __syncwarp(branch mask).
 *  - vote_exit: lanes 28..31 return at once; the others vote with the mask
 *    0x0fffffff, and __activemask() must not contain the exited lanes.
 *
 * About __activemask(): CUDA only promises the lanes that happen to be
 * converged, not the whole branch.  This test expects the whole branch
 * after __syncwarp(mask): that is what reconvergence at the branch gives in
 * our emulator, and what GPUs give in practice for code this simple.
 * Blocks of 96 threads (3 warps) and 4 blocks.
 */
#include "check.h"

#define FULL 0xffffffffu
#define K_FULL 24

#ifdef PTXWAVE_NATIVE
/* Native twins for benchmarks/quality_bench.py (clang, no PTX asm; the
 * macro is only defined by benchmarks/native/cuda_on_hip.h).  PTX ISA
 * "Special registers": %laneid is the lane in the 32-lane warp,
 * %lanemask_eq/lt/le/gt/ge the lanes equal to / below / up to / above /
 * from it; vote.sync.uni: true when the predicate is the same in every
 * non-exited thread of the member mask. */
__device__ __forceinline__ unsigned sreg_laneid(void) { return pw_laneid(); }
__device__ __forceinline__ unsigned sreg_eq(void) { return 1u << pw_laneid(); }
__device__ __forceinline__ unsigned sreg_lt(void) { return (1u << pw_laneid()) - 1; }
__device__ __forceinline__ unsigned sreg_le(void) { return (2u << pw_laneid()) - 1; }
__device__ __forceinline__ unsigned sreg_gt(void) { return ~((2u << pw_laneid()) - 1); }
__device__ __forceinline__ unsigned sreg_ge(void) { return ~((1u << pw_laneid()) - 1); }

__device__ __forceinline__ unsigned vote_uni(unsigned mask, int pred)
{
    unsigned b = __ballot_sync(mask, pred != 0);
    return b == 0 || b == (mask & __activemask());
}
#else
__device__ __forceinline__ unsigned sreg_laneid(void) { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_eq(void) { unsigned r; asm volatile("mov.u32 %0, %%lanemask_eq;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_lt(void) { unsigned r; asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_le(void) { unsigned r; asm volatile("mov.u32 %0, %%lanemask_le;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_gt(void) { unsigned r; asm volatile("mov.u32 %0, %%lanemask_gt;" : "=r"(r)); return r; }
__device__ __forceinline__ unsigned sreg_ge(void) { unsigned r; asm volatile("mov.u32 %0, %%lanemask_ge;" : "=r"(r)); return r; }

__device__ __forceinline__ unsigned vote_uni(unsigned mask, int pred)
{
    unsigned r;
    asm volatile("{ .reg .pred p, q; setp.ne.s32 p, %1, 0; vote.sync.uni.pred q, p, %2; selp.u32 %0, 1, 0, q; }"
                 : "=r"(r) : "r"(pred), "r"(mask));
    return r;
}
#endif

/* the predicate and keys the host recomputes */
__host__ __device__ inline int pred_of(unsigned v, int gwarp)
{
    switch (gwarp % 4) {
    case 0: return 1;
    case 1: return 0;
    default: return (v & 3) != 0;
    }
}
__host__ __device__ inline unsigned key_of(unsigned v, int gwarp) { return gwarp % 4 == 0 ? 7u : v % 5; }

__global__ void vote_full(const unsigned *in, unsigned *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int gwarp = g >> 5;
    unsigned v = in[g];
    int pred = pred_of(v, gwarp);
    unsigned key = key_of(v, gwarp);
    unsigned *o = out + (size_t)g * K_FULL;
    __syncwarp();
    o[0] = __ballot_sync(FULL, pred);
    o[1] = __all_sync(FULL, pred) != 0;
    o[2] = __any_sync(FULL, pred) != 0;
    o[3] = vote_uni(FULL, pred);
    o[4] = __activemask();
    o[5] = __match_any_sync(FULL, key);
    int mp;
    o[6] = __match_all_sync(FULL, key, &mp);
    o[7] = mp != 0;
    unsigned long long k64 = (unsigned long long)(v % 3) << 32 | (v & 1);
    o[8] = __match_any_sync(FULL, k64);
    o[9] = __reduce_add_sync(FULL, v);
    o[10] = __reduce_min_sync(FULL, v);
    o[11] = __reduce_max_sync(FULL, v);
    o[12] = (unsigned)__reduce_min_sync(FULL, (int)v);
    o[13] = (unsigned)__reduce_max_sync(FULL, (int)v);
    o[14] = __reduce_and_sync(FULL, v | 0x0f0f0f0fu);
    o[15] = __reduce_or_sync(FULL, v & 0x01010101u);
    o[16] = __reduce_xor_sync(FULL, v);
    o[17] = sreg_laneid();
    o[18] = sreg_eq();
    o[19] = sreg_lt();
    o[20] = sreg_le();
    o[21] = sreg_gt();
    o[22] = sreg_ge();
    o[23] = __ballot_sync(FULL, 1); /* a constant predicate */
}

#define K_DIV 12

__global__ void vote_divergent(const unsigned *in, unsigned *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int gwarp = g >> 5;
    int lane = threadIdx.x & 31;
    unsigned v = in[g];
    int pred = pred_of(v, gwarp);
    unsigned key = key_of(v, gwarp);
    unsigned *o = out + (size_t)g * K_DIV;
    unsigned mask = lane < 20 ? 0x000fffffu : 0xfff00000u;
    if (lane < 20) {
        __syncwarp(mask);
        o[0] = __activemask();
        o[1] = __ballot_sync(mask, pred);
        o[2] = __all_sync(mask, pred) != 0;
        o[3] = __any_sync(mask, pred) != 0;
        o[4] = __reduce_add_sync(mask, v);
        o[5] = __match_any_sync(mask, key);
        o[6] = __reduce_max_sync(mask, (int)v);
        if (lane & 1) {
            __syncwarp(0x000aaaaau);
            o[7] = __activemask();
            o[8] = __ballot_sync(0x000aaaaau, pred);
            o[9] = __reduce_or_sync(0x000aaaaau, v);
        } else {
            __syncwarp(0x00055555u);
            o[7] = __activemask();
            o[8] = __ballot_sync(0x00055555u, pred);
            o[9] = __reduce_or_sync(0x00055555u, v);
        }
    } else {
        __syncwarp(mask);
        o[0] = __activemask();
        o[1] = __ballot_sync(mask, pred);
        o[2] = __all_sync(mask, pred) != 0;
        o[3] = __any_sync(mask, pred) != 0;
        o[4] = __reduce_add_sync(mask, v);
        o[5] = __match_any_sync(mask, key);
        o[6] = __reduce_max_sync(mask, (int)v);
        o[7] = o[8] = o[9] = 0;
    }
    /* reconverged */
    __syncwarp();
    o[10] = __activemask();
    o[11] = __ballot_sync(FULL, lane < 20);
}

#define K_EXIT 5

__global__ void vote_exit(const unsigned *in, unsigned *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int gwarp = g >> 5;
    int lane = threadIdx.x & 31;
    if (lane >= 28)
        return;
    unsigned v = in[g];
    const unsigned mask = 0x0fffffffu;
    unsigned *o = out + (size_t)g * K_EXIT;
    __syncwarp(mask);
    o[0] = __activemask();
    o[1] = __ballot_sync(mask, pred_of(v, gwarp));
    o[2] = __reduce_add_sync(mask, v);
    o[3] = __match_any_sync(mask, key_of(v, gwarp));
    o[4] = __shfl_sync(mask, v, 27 - lane);
}

/* ---- host reference over one warp's lanes in `mask` ------------------------------ */

static unsigned h_ballot(const unsigned *v, int gw, unsigned mask)
{
    unsigned b = 0;
    for (int l = 0; l < 32; l++)
        if ((mask >> l & 1) && pred_of(v[l], gw))
            b |= 1u << l;
    return b;
}

static unsigned h_match(const unsigned long long *k, unsigned mask, int lane)
{
    unsigned m = 0;
    for (int l = 0; l < 32; l++)
        if ((mask >> l & 1) && k[l] == k[lane])
            m |= 1u << l;
    return m;
}

static unsigned h_redux(const unsigned *v, unsigned mask, int op)
{
    unsigned acc = 0;
    int first = 1;
    for (int l = 0; l < 32; l++) {
        if (!(mask >> l & 1))
            continue;
        unsigned x = v[l];
        switch (op) {
        case 0: acc += x; break;                                                       /* add */
        case 1: acc = first || x < acc ? x : acc; break;                               /* min u32 */
        case 2: acc = first || x > acc ? x : acc; break;                               /* max u32 */
        case 3: acc = first || (int)x < (int)acc ? x : acc; break;                     /* min s32 */
        case 4: acc = first || (int)x > (int)acc ? x : acc; break;                     /* max s32 */
        case 5: acc = first ? (x | 0x0f0f0f0fu) : acc & (x | 0x0f0f0f0fu); break;      /* and */
        case 6: acc |= x & 0x01010101u; break;                                         /* or */
        case 7: acc ^= x; break;                                                       /* xor */
        default: acc |= x; break;                                                      /* plain or */
        }
        first = 0;
    }
    return acc;
}

int main(void)
{
    pw_report rep = pw_report_start("warp_vote");
    pw_rng rng = pw_rng_seed(17);
    const int grid = 4, bs = 96, n = grid * bs;
    unsigned in[n];
    for (int i = 0; i < n; i++)
        in[i] = pw_rng_u32(&rng);
    in[5] = 0x80000000u; /* extremes for signed and unsigned min/max */
    in[6] = 0x7fffffffu;
    in[40] = 0;
    in[41] = 0xffffffffu;
    unsigned *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, sizeof(in)));
    CHECK(cudaMalloc(&d_out, (size_t)n * K_FULL * sizeof(unsigned)));
    CHECK(cudaMemcpy(d_in, in, sizeof(in), cudaMemcpyHostToDevice));
    unsigned *out = (unsigned *)malloc((size_t)n * K_FULL * sizeof(unsigned));

    vote_full<<<grid, bs>>>(d_in, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out, d_out, (size_t)n * K_FULL * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int gw = 0; gw < n / 32; gw++) {
        const unsigned *v = in + gw * 32;
        unsigned long long k32[32], k64[32];
        for (int l = 0; l < 32; l++) {
            k32[l] = key_of(v[l], gw);
            k64[l] = (unsigned long long)(v[l] % 3) << 32 | (v[l] & 1);
        }
        unsigned ballot = h_ballot(v, gw, FULL);
        int all_same = 1;
        for (int l = 1; l < 32; l++)
            all_same &= k32[l] == k32[0];
        for (int l = 0; l < 32; l++) {
            unsigned want[K_FULL] = {
                ballot, ballot == FULL, ballot != 0, ballot == FULL || ballot == 0, FULL,
                h_match(k32, FULL, l), all_same ? FULL : 0u, (unsigned)all_same, h_match(k64, FULL, l),
                h_redux(v, FULL, 0), h_redux(v, FULL, 1), h_redux(v, FULL, 2), h_redux(v, FULL, 3),
                h_redux(v, FULL, 4), h_redux(v, FULL, 5), h_redux(v, FULL, 6), h_redux(v, FULL, 7),
                (unsigned)l, 1u << l, (1u << l) - 1, (unsigned)(((unsigned long long)2 << l) - 1), ~((2u << l) - 1) * (l != 31),
                ~((1u << l) - 1), FULL};
            static const char *names[K_FULL] = {"ballot", "all", "any", "uni", "activemask", "match_any",
                                                "match_all", "match_all.pred", "match_any.b64", "redux.add",
                                                "redux.min.u32", "redux.max.u32", "redux.min.s32", "redux.max.s32",
                                                "redux.and", "redux.or", "redux.xor", "laneid", "lanemask_eq",
                                                "lanemask_lt", "lanemask_le", "lanemask_gt", "lanemask_ge",
                                                "ballot(1)"};
            for (int k = 0; k < K_FULL; k++) {
                unsigned got = out[(size_t)(gw * 32 + l) * K_FULL + k];
                pw_expect(&rep, got == want[k], "full %s warp %d lane %d: %08x want %08x", names[k], gw, l, got, want[k]);
            }
        }
    }

    vote_divergent<<<grid, bs>>>(d_in, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out, d_out, (size_t)n * K_DIV * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int gw = 0; gw < n / 32; gw++) {
        const unsigned *v = in + gw * 32;
        unsigned long long k32[32];
        for (int l = 0; l < 32; l++)
            k32[l] = key_of(v[l], gw);
        for (int l = 0; l < 32; l++) {
            unsigned mask = l < 20 ? 0x000fffffu : 0xfff00000u;
            unsigned b = h_ballot(v, gw, mask);
            unsigned inner = (l & 1) ? 0x000aaaaau : 0x00055555u;
            int in_inner = l < 20;
            unsigned want[K_DIV] = {mask, b, b == mask, b != 0, h_redux(v, mask, 0), h_match(k32, mask, l),
                                    h_redux(v, mask, 4), in_inner ? inner : 0u,
                                    in_inner ? h_ballot(v, gw, inner) : 0u, in_inner ? h_redux(v, inner, 8) : 0u,
                                    FULL, 0x000fffffu};
            for (int k = 0; k < K_DIV; k++) {
                unsigned got = out[(size_t)(gw * 32 + l) * K_DIV + k];
                pw_expect(&rep, got == want[k], "divergent op %d warp %d lane %d: %08x want %08x", k, gw, l, got, want[k]);
            }
        }
    }

    CHECK(cudaMemset(d_out, 0, (size_t)n * K_EXIT * sizeof(unsigned)));
    vote_exit<<<grid, bs>>>(d_in, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out, d_out, (size_t)n * K_EXIT * sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (int gw = 0; gw < n / 32; gw++) {
        const unsigned *v = in + gw * 32;
        unsigned long long k32[32];
        for (int l = 0; l < 32; l++)
            k32[l] = key_of(v[l], gw);
        const unsigned mask = 0x0fffffffu;
        for (int l = 0; l < 32; l++) {
            unsigned want[K_EXIT] = {mask, h_ballot(v, gw, mask), h_redux(v, mask, 0), h_match(k32, mask, l), v[27 - l]};
            if (l >= 28)
                for (int k = 0; k < K_EXIT; k++)
                    want[k] = 0; /* exited: nothing written */
            for (int k = 0; k < K_EXIT; k++) {
                unsigned got = out[(size_t)(gw * 32 + l) * K_EXIT + k];
                pw_expect(&rep, got == want[k], "exit op %d warp %d lane %d: %08x want %08x", k, gw, l, got, want[k]);
            }
        }
    }

    free(out);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return pw_finish(&rep);
}
