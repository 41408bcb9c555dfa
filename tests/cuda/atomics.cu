/*
 * atomics: every atomic function on every type, with results that do not
 * depend on the order in which the atomics happen.
 *
 * 768 threads (8 blocks of 96), thread t with a random 32-bit value v[t]:
 *  - atomicAdd: int, unsigned, unsigned long long (wrapping sums), float and
 *    double with integer values whose partial sums stay below 2^24 / 2^53
 *    (exact in any order), __half2 (1.0, 0.5) and __half 1.0 into 4 counters
 *    (192 adds each: every partial sum is a multiple of 0.5 below 2^8, exact in
 *    f16).  The old values of atomicAdd(unsigned, 1) are a permutation of
 *    0..767; those of the __half2 counters of 0..191.
 *  - atomicCAS loops: 32-bit (add), 64-bit (add), 16-bit (increment four
 *    adjacent shorts that share 8 bytes: no lost neighbour updates).
 *  - atomicExch int/float/ull: the final value and the 768 old values
 *    together are exactly {initial, 1, ..., 768}.
 *  - atomicMin/Max on int, unsigned, long long, unsigned long long;
 *    atomicAnd/Or/Xor on int, unsigned, unsigned long long.
 *  - atomicInc/atomicDec with limit 16: ((old >= limit) ? 0 : old+1) and
 *    ((old == 0 || old > limit) ? limit : old-1) (CUDA Programming Guide,
 *    Atomic Functions): a counter moves through the residues mod 17, so
 *    the final value and the multiset of old values are known; one counter
 *    starts above the limit (100).
 *  - scopes: atomicAdd_block (atom.cta) into per-block counters,
 *    atomicAdd_system (atom.sys).
 *  - cuda::atomic_ref with explicit memory orders (relaxed fetch_add,
 *    acq_rel fetch_or, release store / acquire load), which nvcc emits as
 *    atom/ld/st with .relaxed/.acq_rel/.release/.acquire and .gpu.
 *  - red.global.add/or and red.relaxed.gpu (inline PTX: nvcc 13 emits atom
 *    even when the result is unused), a seq_cst fetch_add (fence.sc) and
 *    atomic_thread_fence(acq_rel) (fence.acq_rel.gpu).
 *  - shared-memory atomics (atom.shared, red.shared) of the same ops per block.
 */
#include "check.h"

#include <cuda/atomic>
#include <cuda_fp16.h>

#define NT 768
#define NB 8

struct counters {
    int add_i;
    unsigned add_u;
    unsigned long long add_ull;
    float add_f;
    double add_d;
    __half2 add_h2[4];
    __half add_h[4];
    unsigned cas32;
    unsigned long long cas64;
    unsigned short cas16[4];
    int exch_i;
    float exch_f;
    unsigned long long exch_ull;
    int min_i, max_i;
    unsigned min_u, max_u;
    long long min_ll, max_ll;
    unsigned long long min_ull, max_ull;
    int and_i, or_i, xor_i;
    unsigned and_u, or_u, xor_u;
    unsigned long long and_ull, or_ull, xor_ull;
    unsigned inc, dec, inc_hi;
    unsigned block_add[NB];
    unsigned sys_add;
    unsigned ref_add, ref_or, ref_flag, ref_sc;
    unsigned red_add, red_or, red_add_relaxed;
    unsigned ticket;
};

struct olds {
    unsigned ticket[NT];
    float h2x[NT];
    float h1[NT];
    int exch_i[NT];
    float exch_f[NT];
    unsigned long long exch_ull[NT];
    unsigned inc[NT], dec[NT], inc_hi[NT];
};

#define NSH 10
struct shared_results {
    unsigned v[NB][NSH];
};

__global__ void atomics_global(const unsigned *vals, counters *c, olds *o, shared_results *sr)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = vals[t];

    atomicAdd(&c->add_i, (int)(v & 0xffff) - 0x8000);
    atomicAdd(&c->add_u, v);
    atomicAdd(&c->add_ull, (unsigned long long)v << 20);
    atomicAdd(&c->add_f, (float)(t % 17));
    atomicAdd(&c->add_d, (double)v);
    o->h2x[t] = __low2float(atomicAdd(&c->add_h2[t % 4], __floats2half2_rn(1.0f, 0.5f)));
    o->h1[t] = __half2float(atomicAdd(&c->add_h[t % 4], __float2half(1.0f)));
    o->ticket[t] = atomicAdd(&c->ticket, 1u);

    /* compare-and-swap loops */
    unsigned old32 = c->cas32, assumed;
    do {
        assumed = old32;
        old32 = atomicCAS(&c->cas32, assumed, assumed + v);
    } while (old32 != assumed);
    unsigned long long old64 = c->cas64, assumed64;
    do {
        assumed64 = old64;
        old64 = atomicCAS(&c->cas64, assumed64, assumed64 + ((unsigned long long)v << 20));
    } while (old64 != assumed64);
    unsigned short *s16 = &c->cas16[t % 4];
    unsigned short old16 = *s16, assumed16;
    do {
        assumed16 = old16;
        old16 = atomicCAS(s16, assumed16, (unsigned short)(assumed16 + 1));
    } while (old16 != assumed16);

    o->exch_i[t] = atomicExch(&c->exch_i, t + 1);
    o->exch_f[t] = atomicExch(&c->exch_f, (float)(t + 1));
    o->exch_ull[t] = atomicExch(&c->exch_ull, (unsigned long long)(t + 1) << 33);

    atomicMin(&c->min_i, (int)v);
    atomicMax(&c->max_i, (int)v);
    atomicMin(&c->min_u, v);
    atomicMax(&c->max_u, v);
    long long sv = (long long)(int)v * 12345;
    atomicMin(&c->min_ll, sv);
    atomicMax(&c->max_ll, sv);
    atomicMin(&c->min_ull, (unsigned long long)v * v);
    atomicMax(&c->max_ull, (unsigned long long)v * v);
    atomicAnd(&c->and_i, (int)(v | 0x10204080u));
    atomicOr(&c->or_i, (int)(v & 0x01020408u));
    atomicXor(&c->xor_i, (int)v);
    atomicAnd(&c->and_u, v | 0xf0f0f0f0u);
    atomicOr(&c->or_u, v & 0x00ff00ffu);
    atomicXor(&c->xor_u, v * 3u);
    atomicAnd(&c->and_ull, ((unsigned long long)v << 32) | 0xffff0000ffffffffull);
    atomicOr(&c->or_ull, (unsigned long long)(v & 0x11111111u) << (t % 33));
    atomicXor(&c->xor_ull, (unsigned long long)v * 0x100000001ull);

    o->inc[t] = atomicInc(&c->inc, 16u);
    o->dec[t] = atomicDec(&c->dec, 16u);
    o->inc_hi[t] = atomicInc(&c->inc_hi, 16u);

    atomicAdd_block(&c->block_add[blockIdx.x], v);
    atomicAdd_system(&c->sys_add, v);

    cuda::atomic_ref<unsigned, cuda::thread_scope_device> r_add(c->ref_add), r_or(c->ref_or), r_flag(c->ref_flag);
    r_add.fetch_add(v, cuda::std::memory_order_relaxed);
    r_or.fetch_or(v & 0x80402010u, cuda::std::memory_order_acq_rel);
    if (t == 0)
        r_flag.store(1u, cuda::std::memory_order_release);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> r_sc(c->ref_sc);
    r_sc.fetch_add(1u); /* seq_cst: fence.sc + atom */
    cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);

    /* reductions without a result (red), which nvcc 13 never emits by itself */
#ifdef PTXWAVE_NATIVE
    /* native twin (benchmarks/native/cuda_on_hip.h defines the macro): red is
     * an atomic whose result is unused (PTX ISA "red"; relaxed, gpu scope by
     * default), which LLVM emits as the no-return form */
    atomicAdd(&c->red_add, v);
    atomicOr(&c->red_or, v & 0x00f000f0u);
    atomicAdd(&c->red_add_relaxed, v >> 4);
#else
    asm volatile("red.global.add.u32 [%0], %1;" ::"l"(&c->red_add), "r"(v) : "memory");
    asm volatile("red.global.or.b32 [%0], %1;" ::"l"(&c->red_or), "r"(v & 0x00f000f0u) : "memory");
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(&c->red_add_relaxed), "r"(v >> 4) : "memory");
#endif

    /* shared memory: the same operations within each block */
    __shared__ unsigned sh[NSH];
    __shared__ unsigned long long sh64;
    __shared__ unsigned sh_red;
    if (threadIdx.x == 0) {
        sh[0] = 0; sh[1] = 0xffffffffu; sh[2] = 0; sh[3] = 0xffffffffu; sh[4] = 0;
        sh[5] = 0; sh[6] = 0; sh[7] = 0; sh[8] = 0;
        sh64 = 0;
        sh_red = 0;
    }
    __syncthreads();
    atomicAdd(&sh[0], v);
    atomicMin(&sh[1], v);
    atomicMax(&sh[2], v);
    atomicAnd(&sh[3], v | 0x0f0f0f0fu);
    atomicOr(&sh[4], v & 0x10101010u);
    atomicXor(&sh[5], v);
    atomicInc(&sh[6], 10u);
    unsigned so = sh[7], sa;
    do {
        sa = so;
        so = atomicCAS(&sh[7], sa, sa + 2u);
    } while (so != sa);
    atomicAdd(&sh64, (unsigned long long)v);
    {
        unsigned sh_addr = (unsigned)__cvta_generic_to_shared(&sh_red);
#ifdef PTXWAVE_NATIVE
        /* native twin: red.shared.add.u32 on the same word */
        (void)sh_addr;
        atomicAdd_block(&sh_red, v & 0xffu);
#else
        asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(sh_addr), "r"(v & 0xffu) : "memory");
#endif
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int k = 0; k < 8; k++)
            sr->v[blockIdx.x][k] = sh[k];
        sr->v[blockIdx.x][8] = (unsigned)(sh64 >> 3);
        sr->v[blockIdx.x][9] = sh_red;
    }
}

__global__ void read_flag(counters *c, unsigned *flag)
{
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> r_flag(c->ref_flag);
    *flag = r_flag.load(cuda::std::memory_order_acquire);
}

int main(void)
{
    pw_report rep = pw_report_start("atomics");
    pw_rng rng = pw_rng_seed(18);
    unsigned vals[NT];
    for (int t = 0; t < NT; t++)
        vals[t] = pw_rng_u32(&rng);
    vals[3] = 0x80000000u;
    vals[4] = 0x7fffffffu;

    counters init;
    memset((void *)&init, 0, sizeof(init)); /* all-zero bits are 0 for every member, __half included */
    init.min_i = 0x7fffffff; init.max_i = (int)0x80000000;
    init.min_u = 0xffffffffu; init.max_u = 0;
    init.min_ll = 0x7fffffffffffffffll; init.max_ll = (long long)0x8000000000000000ull;
    init.min_ull = ~0ull; init.max_ull = 0;
    init.and_i = -1; init.and_u = 0xffffffffu; init.and_ull = ~0ull;
    init.exch_i = 0; init.exch_f = 0.0f; init.exch_ull = 0;
    init.dec = 5; init.inc_hi = 100;

    unsigned *d_vals;
    counters *d_c;
    olds *d_o;
    shared_results *d_sr;
    unsigned *d_flag;
    CHECK(cudaMalloc(&d_vals, sizeof(vals)));
    CHECK(cudaMalloc(&d_c, sizeof(counters)));
    CHECK(cudaMalloc(&d_o, sizeof(olds)));
    CHECK(cudaMalloc(&d_sr, sizeof(shared_results)));
    CHECK(cudaMalloc(&d_flag, sizeof(unsigned)));
    CHECK(cudaMemcpy(d_vals, vals, sizeof(vals), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_c, &init, sizeof(init), cudaMemcpyHostToDevice));
    atomics_global<<<NB, NT / NB>>>(d_vals, d_c, d_o, d_sr);
    CHECK_LAUNCH();
    read_flag<<<1, 1>>>(d_c, d_flag);
    CHECK_LAUNCH();

    counters c;
    olds *o = (olds *)malloc(sizeof(olds));
    shared_results sr;
    unsigned flag;
    CHECK(cudaMemcpy(&c, d_c, sizeof(c), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(o, d_o, sizeof(olds), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&sr, d_sr, sizeof(sr), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&flag, d_flag, sizeof(flag), cudaMemcpyDeviceToHost));

    /* reference folds */
    int add_i = 0;
    unsigned add_u = 0, cas32 = 0, min_u = 0xffffffffu, max_u = 0, and_u = 0xffffffffu, or_u = 0, xor_u = 0;
    unsigned long long add_ull = 0, cas64 = 0, min_ull = ~0ull, max_ull = 0, and_ull = ~0ull, or_ull = 0, xor_ull = 0;
    float add_f = 0;
    double add_d = 0;
    int min_i = 0x7fffffff, max_i = (int)0x80000000, and_i = -1, or_i = 0, xor_i = 0;
    long long min_ll = 0x7fffffffffffffffll, max_ll = (long long)0x8000000000000000ull;
    unsigned block_add[NB] = {0}, ref_or = 0, red_or = 0, red_add_relaxed = 0;
    for (int t = 0; t < NT; t++) {
        unsigned v = vals[t];
        add_i += (int)(v & 0xffff) - 0x8000;
        add_u += v;
        add_ull += (unsigned long long)v << 20;
        add_f += (float)(t % 17);
        add_d += (double)v;
        cas32 += v;
        cas64 += (unsigned long long)v << 20;
        min_i = (int)v < min_i ? (int)v : min_i;
        max_i = (int)v > max_i ? (int)v : max_i;
        min_u = v < min_u ? v : min_u;
        max_u = v > max_u ? v : max_u;
        long long sv = (long long)(int)v * 12345;
        min_ll = sv < min_ll ? sv : min_ll;
        max_ll = sv > max_ll ? sv : max_ll;
        unsigned long long sq = (unsigned long long)v * v;
        min_ull = sq < min_ull ? sq : min_ull;
        max_ull = sq > max_ull ? sq : max_ull;
        and_i &= (int)(v | 0x10204080u);
        or_i |= (int)(v & 0x01020408u);
        xor_i ^= (int)v;
        and_u &= v | 0xf0f0f0f0u;
        or_u |= v & 0x00ff00ffu;
        xor_u ^= v * 3u;
        and_ull &= ((unsigned long long)v << 32) | 0xffff0000ffffffffull;
        or_ull |= (unsigned long long)(v & 0x11111111u) << (t % 33);
        xor_ull ^= (unsigned long long)v * 0x100000001ull;
        block_add[t / (NT / NB)] += v;
        ref_or |= v & 0x80402010u;
        red_or |= v & 0x00f000f0u;
        red_add_relaxed += v >> 4;
    }
#define EXPECT_EQ(what, got, want, fmt) pw_expect(&rep, (got) == (want), what ": " fmt " want " fmt, got, want)
    EXPECT_EQ("atomicAdd int", c.add_i, add_i, "%d");
    EXPECT_EQ("atomicAdd unsigned", c.add_u, add_u, "%u");
    EXPECT_EQ("atomicAdd ull", c.add_ull, add_ull, "%llu");
    EXPECT_EQ("atomicAdd float", c.add_f, add_f, "%g");
    EXPECT_EQ("atomicAdd double", c.add_d, add_d, "%.17g");
    EXPECT_EQ("atomicCAS 32", c.cas32, cas32, "%u");
    EXPECT_EQ("atomicCAS 64", c.cas64, cas64, "%llu");
    EXPECT_EQ("atomicMin int", c.min_i, min_i, "%d");
    EXPECT_EQ("atomicMax int", c.max_i, max_i, "%d");
    EXPECT_EQ("atomicMin unsigned", c.min_u, min_u, "%u");
    EXPECT_EQ("atomicMax unsigned", c.max_u, max_u, "%u");
    EXPECT_EQ("atomicMin long long", c.min_ll, min_ll, "%lld");
    EXPECT_EQ("atomicMax long long", c.max_ll, max_ll, "%lld");
    EXPECT_EQ("atomicMin ull", c.min_ull, min_ull, "%llu");
    EXPECT_EQ("atomicMax ull", c.max_ull, max_ull, "%llu");
    EXPECT_EQ("atomicAnd int", c.and_i, and_i, "%d");
    EXPECT_EQ("atomicOr int", c.or_i, or_i, "%d");
    EXPECT_EQ("atomicXor int", c.xor_i, xor_i, "%d");
    EXPECT_EQ("atomicAnd unsigned", c.and_u, and_u, "%u");
    EXPECT_EQ("atomicOr unsigned", c.or_u, or_u, "%u");
    EXPECT_EQ("atomicXor unsigned", c.xor_u, xor_u, "%u");
    EXPECT_EQ("atomicAnd ull", c.and_ull, and_ull, "%llx");
    EXPECT_EQ("atomicOr ull", c.or_ull, or_ull, "%llx");
    EXPECT_EQ("atomicXor ull", c.xor_ull, xor_ull, "%llx");
    EXPECT_EQ("atomicAdd_system", c.sys_add, add_u, "%u");
    EXPECT_EQ("atomic_ref fetch_add relaxed", c.ref_add, add_u, "%u");
    EXPECT_EQ("atomic_ref fetch_or acq_rel", c.ref_or, ref_or, "%u");
    EXPECT_EQ("atomic_ref store release / load acquire", flag, 1u, "%u");
    EXPECT_EQ("atomic_ref fetch_add seq_cst", c.ref_sc, (unsigned)NT, "%u");
    EXPECT_EQ("red.global.add", c.red_add, add_u, "%u");
    EXPECT_EQ("red.global.or", c.red_or, red_or, "%u");
    EXPECT_EQ("red.relaxed.gpu.global.add", c.red_add_relaxed, red_add_relaxed, "%u");
    for (int b = 0; b < NB; b++)
        pw_expect(&rep, c.block_add[b] == block_add[b], "atomicAdd_block block %d: %u want %u", b, c.block_add[b],
                  block_add[b]);
    for (int k = 0; k < 4; k++)
        pw_expect(&rep, c.cas16[k] == NT / 4, "atomicCAS 16-bit counter %d: %u want %d", k, c.cas16[k], NT / 4);

    /* half counters: 192 adds each: (192.0, 96.0) and 192.0 */
    {
        uint16_t h2[8], h1[4];
        memcpy(h2, c.add_h2, sizeof(h2));
        memcpy(h1, c.add_h, sizeof(h1));
        for (int k = 0; k < 4; k++) {
            /* f16: 192 = 0x5a00, 96 = 0x5600 */
            pw_expect(&rep, h2[2 * k] == 0x5a00 && h2[2 * k + 1] == 0x5600, "atomicAdd half2 counter %d: %04x %04x", k,
                      h2[2 * k], h2[2 * k + 1]);
            pw_expect(&rep, h1[k] == 0x5a00, "atomicAdd half counter %d: %04x", k, h1[k]);
            int seen2[NT / 4] = {0}, seen1[NT / 4] = {0};
            for (int t = k; t < NT; t += 4) {
                int a = (int)o->h2x[t], b = (int)o->h1[t];
                if ((float)a == o->h2x[t] && a >= 0 && a < NT / 4)
                    seen2[a]++;
                if ((float)b == o->h1[t] && b >= 0 && b < NT / 4)
                    seen1[b]++;
            }
            for (int i = 0; i < NT / 4; i++)
                pw_expect(&rep, seen2[i] == 1 && seen1[i] == 1, "half counter %d: old %d seen %d/%d times", k, i,
                          seen2[i], seen1[i]);
        }
    }

    /* tickets: a permutation of 0..NT-1 */
    {
        int seen[NT] = {0};
        for (int t = 0; t < NT; t++)
            if (o->ticket[t] < NT)
                seen[o->ticket[t]]++;
        for (int i = 0; i < NT; i++)
            pw_expect(&rep, seen[i] == 1, "atomicAdd tickets: %d returned %d times", i, seen[i]);
        EXPECT_EQ("atomicAdd ticket counter", c.ticket, (unsigned)NT, "%u");
    }

    /* exchanges: finals + olds == {0, 1, ..., NT} */
    {
        int seen_i[NT + 1] = {0}, seen_f[NT + 1] = {0}, seen_u[NT + 1] = {0};
        for (int t = 0; t <= NT; t++) {
            int vi = t < NT ? o->exch_i[t] : c.exch_i;
            float vf = t < NT ? o->exch_f[t] : c.exch_f;
            unsigned long long vu = (t < NT ? o->exch_ull[t] : c.exch_ull) >> 33;
            if (vi >= 0 && vi <= NT) seen_i[vi]++;
            if (vf >= 0 && vf <= NT && (float)(int)vf == vf) seen_f[(int)vf]++;
            if (vu <= NT) seen_u[vu]++;
        }
        for (int i = 0; i <= NT; i++)
            pw_expect(&rep, seen_i[i] == 1 && seen_f[i] == 1 && seen_u[i] == 1, "atomicExch: value %d seen %d/%d/%d times",
                      i, seen_i[i], seen_f[i], seen_u[i]);
    }

    /* inc/dec: residues mod 17 */
    {
        int want_inc[17] = {0}, want_dec[17] = {0}, got_inc[17] = {0}, got_dec[17] = {0};
        int want_hi[17] = {0}, got_hi[17] = {0}, got_hi_100 = 0;
        for (int k = 0; k < NT; k++) {
            want_inc[k % 17]++;
            want_dec[((5 - k) % 17 + 17) % 17]++;
            if (k > 0)
                want_hi[(k - 1) % 17]++;
        }
        for (int t = 0; t < NT; t++) {
            if (o->inc[t] < 17) got_inc[o->inc[t]]++;
            if (o->dec[t] < 17) got_dec[o->dec[t]]++;
            if (o->inc_hi[t] < 17) got_hi[o->inc_hi[t]]++;
            if (o->inc_hi[t] == 100) got_hi_100++;
        }
        for (int r = 0; r < 17; r++)
            pw_expect(&rep, got_inc[r] == want_inc[r] && got_dec[r] == want_dec[r] && got_hi[r] == want_hi[r],
                      "atomicInc/Dec residue %d: %d/%d/%d olds want %d/%d/%d", r, got_inc[r], got_dec[r], got_hi[r],
                      want_inc[r], want_dec[r], want_hi[r]);
        pw_expect(&rep, got_hi_100 == 1, "atomicInc from above the limit: old value 100 seen %d times", got_hi_100);
        EXPECT_EQ("atomicInc final", c.inc, (unsigned)(NT % 17), "%u");
        EXPECT_EQ("atomicDec final", c.dec, (unsigned)(((5 - NT) % 17 + 17) % 17), "%u");
        EXPECT_EQ("atomicInc (start 100) final", c.inc_hi, (unsigned)((NT - 1) % 17), "%u");
    }

    /* shared-memory atomics per block */
    for (int b = 0; b < NB; b++) {
        const int bs = NT / NB;
        unsigned w[NSH] = {0, 0xffffffffu, 0, 0xffffffffu, 0, 0, 0, 0, 0, 0};
        unsigned long long s64 = 0;
        for (int i = 0; i < bs; i++) {
            unsigned v = vals[b * bs + i];
            w[0] += v;
            w[1] = v < w[1] ? v : w[1];
            w[2] = v > w[2] ? v : w[2];
            w[3] &= v | 0x0f0f0f0fu;
            w[4] |= v & 0x10101010u;
            w[5] ^= v;
            w[6] = w[6] >= 10u ? 0u : w[6] + 1;
            w[7] += 2u;
            w[9] += v & 0xffu;
            s64 += v;
        }
        w[8] = (unsigned)(s64 >> 3);
        for (int k = 0; k < NSH; k++)
            pw_expect(&rep, sr.v[b][k] == w[k], "shared atomic op %d block %d: %u want %u", k, b, sr.v[b][k], w[k]);
    }

    free(o);
    CHECK(cudaFree(d_vals));
    CHECK(cudaFree(d_c));
    CHECK(cudaFree(d_o));
    CHECK(cudaFree(d_sr));
    CHECK(cudaFree(d_flag));
    return pw_finish(&rep);
}
