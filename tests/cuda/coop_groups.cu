/*
 * coop_groups: cooperative groups inside a block.
 *
 * thread_block (sync, thread_rank, size, group_index, thread_index),
 * tiled_partition<32>, <16> and <8> (shfl, shfl_down, shfl_xor, ballot,
 * any, all, thread_rank, meta_group_rank, meta_group_size, sync),
 * cg::reduce (plus, greater, bit_and: redux.sync for 32-bit integers on
 * sm_80), cg::inclusive_scan, labeled_partition (match.any + masked
 * shuffles), and coalesced_threads() in a divergent branch (same caveat as
 * warp_vote: we expect the whole branch to be the coalesced group).
 * Blocks of 96 and 1024 threads (multiples of every tile size).
 */
#include "check.h"

#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

#define K 20

__global__ void cg_kernel(const unsigned *in, unsigned *out)
{
    extern __shared__ unsigned sh[];
    cg::thread_block block = cg::this_thread_block();
    cg::thread_block_tile<32> t32 = cg::tiled_partition<32>(block);
    cg::thread_block_tile<16> t16 = cg::tiled_partition<16>(block);
    cg::thread_block_tile<8> t8 = cg::tiled_partition<8>(block);
    unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = in[g];
    unsigned *o = out + (size_t)g * K;

    o[0] = block.thread_rank();
    o[1] = block.size();
    o[2] = block.group_index().x;
    o[3] = block.thread_index().x;

    sh[block.thread_rank()] = v;
    block.sync();
    o[4] = sh[block.size() - 1 - block.thread_rank()];

    unsigned s = v;
    for (unsigned off = t16.size() / 2; off > 0; off >>= 1)
        s += t16.shfl_down(s, off);
    o[5] = t16.shfl(s, 0); /* tile total, broadcast from rank 0 */
    o[6] = t16.thread_rank() | t16.meta_group_rank() << 8 | t16.meta_group_size() << 16;
    o[7] = t16.ballot(v & 1);
    o[8] = t16.any(v == 0) | t16.all(v != 0) << 1;
    o[9] = t8.shfl_xor(v, 5);
    o[10] = cg::reduce(t8, v, cg::plus<unsigned>());
    o[11] = cg::reduce(t32, v, cg::greater<unsigned>());
    o[12] = cg::reduce(t32, v | 0xf0f0f0f0u, cg::bit_and<unsigned>());
    o[13] = cg::inclusive_scan(t16, v & 0xffff);
    t8.sync();

    cg::coalesced_group lp = cg::labeled_partition(t32, v % 3);
    o[14] = lp.size();
    o[15] = lp.thread_rank();
    o[16] = cg::reduce(lp, v, cg::plus<unsigned>());

    if (v & 1) {
        cg::coalesced_group odd = cg::coalesced_threads();
        o[17] = odd.size();
        o[18] = odd.thread_rank();
        o[19] = odd.shfl(v, 0); /* the value of the lowest odd lane */
    } else {
        o[17] = o[18] = o[19] = 0xdeadbeefu;
    }
}

int main(void)
{
    pw_report rep = pw_report_start("coop_groups");
    pw_rng rng = pw_rng_seed(22);
    const int cfg[][2] = {{3, 96}, {2, 1024}};
    for (size_t c = 0; c < PW_ARRAY_SIZE(cfg); c++) {
        int grid = cfg[c][0], bs = cfg[c][1], n = grid * bs;
        unsigned *in = (unsigned *)malloc(n * 4), *out = (unsigned *)malloc((size_t)n * K * 4);
        for (int i = 0; i < n; i++)
            in[i] = (i % 23 == 0) ? 0u : pw_rng_u32(&rng);
        unsigned *din, *dout;
        CHECK(cudaMalloc(&din, n * 4));
        CHECK(cudaMalloc(&dout, (size_t)n * K * 4));
        CHECK(cudaMemcpy(din, in, n * 4, cudaMemcpyHostToDevice));
        cg_kernel<<<grid, bs, bs * sizeof(unsigned)>>>(din, dout);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, dout, (size_t)n * K * 4, cudaMemcpyDeviceToHost));
        for (int g = 0; g < n; g++) {
            int b = g / bs, t = g % bs;
            unsigned v = in[g];
            int b16 = g - t % 16, b8 = g - t % 8, b32 = g - t % 32;
            unsigned w[K];
            w[0] = (unsigned)t;
            w[1] = (unsigned)bs;
            w[2] = (unsigned)b;
            w[3] = (unsigned)t;
            w[4] = in[b * bs + bs - 1 - t];
            unsigned s16 = 0, bal = 0, any0 = 0, all_nz = 1, s8 = 0, mx = 0, an = 0xffffffffu, scan = 0;
            for (int i = 0; i < 16; i++) {
                s16 += in[b16 + i];
                bal |= (in[b16 + i] & 1u) << i;
                any0 |= in[b16 + i] == 0;
                all_nz &= in[b16 + i] != 0;
                if (i <= t % 16)
                    scan += in[b16 + i] & 0xffff;
            }
            for (int i = 0; i < 8; i++)
                s8 += in[b8 + i];
            for (int i = 0; i < 32; i++) {
                mx = in[b32 + i] > mx ? in[b32 + i] : mx;
                an &= in[b32 + i] | 0xf0f0f0f0u;
            }
            w[5] = s16;
            w[6] = (unsigned)(t % 16) | (unsigned)(t / 16) << 8 | (unsigned)(bs / 16) << 16;
            w[7] = bal;
            w[8] = any0 | all_nz << 1;
            w[9] = in[b8 + ((t % 8) ^ 5)];
            w[10] = s8;
            w[11] = mx;
            w[12] = an;
            w[13] = scan;
            unsigned lsize = 0, lrank = 0, lsum = 0, osize = 0, orank = 0, ofirst = 0;
            int have_first = 0;
            for (int i = 0; i < 32; i++) {
                unsigned u = in[b32 + i];
                if (u % 3 == v % 3) {
                    lsize++;
                    lsum += u;
                    if (i < t % 32)
                        lrank++;
                }
                if (u & 1) {
                    osize++;
                    if (i < t % 32)
                        orank++;
                    if (!have_first) {
                        ofirst = u;
                        have_first = 1;
                    }
                }
            }
            w[14] = lsize;
            w[15] = lrank;
            w[16] = lsum;
            if (v & 1) {
                w[17] = osize;
                w[18] = orank;
                w[19] = ofirst;
            } else {
                w[17] = w[18] = w[19] = 0xdeadbeefu;
            }
            for (int k = 0; k < K; k++)
                pw_expect(&rep, out[(size_t)g * K + k] == w[k], "bs=%d thread %d result %d: %08x want %08x", bs, g, k,
                          out[(size_t)g * K + k], w[k]);
        }
        free(in);
        free(out);
        CHECK(cudaFree(din));
        CHECK(cudaFree(dout));
    }
    return pw_finish(&rep);
}
