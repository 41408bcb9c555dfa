/*
 * warp_shfl: every shuffle mode, width, and the raw clamp/segment operand.
 *
 * The host reference is the PTX ISA definition of shfl.sync (§9.7.8.6): with
 * bval = b[4:0], cval = c[4:0], segmask = c[12:8],
 *   maxLane = (lane & segmask) | (cval & ~segmask), minLane = lane & segmask
 *   up:   j = lane - bval, p = j >= maxLane     down: j = lane + bval, p = j <= maxLane
 *   bfly: j = lane ^ bval, p = j <= maxLane     idx:  j = minLane | (bval & ~segmask), p = j <= maxLane
 *   d = a[p ? j : lane].
 * The CUDA intrinsics pass c = ((32 - width) << 8) | 0x1f (up: without the
 * 0x1f), as sm_30_intrinsics.hpp shows.
 *
 *  - shfl_widths: __shfl_sync / _up / _down / _xor with widths 1, 2, 4, 8,
 *    16, 32; source lanes out of range and negative (they wrap modulo the
 *    width), deltas >= width, xor masks that leave the segment (a lane may
 *    read an earlier segment, never a later one); 64-bit and float values.
 *  - shfl_raw: inline PTX shfl.sync with the predicate output, for c values
 *    the intrinsics never produce.
 *  - shfl_divergent: shuffles inside divergent branches, with the mask of
 *    each branch, reading only lanes of the same branch.
 *  - shfl_partial: a block of 48 threads: warp 1 has 16 lanes and uses the
 *    mask 0xffff and width 16.
 * All source lanes are active whenever a value is read.
 */
#include "check.h"

#define FULL 0xffffffffu

__constant__ int c_widths[6] = {1, 2, 4, 8, 16, 32};
#define N_IDX 4
#define N_DELTA 4
#define N_XOR 5
__constant__ int c_idx_fixed[N_IDX - 1] = {5, 37, -1};
__constant__ unsigned c_delta[N_DELTA] = {0, 1, 3, 16};
__constant__ int c_xor[N_XOR] = {1, 3, 8, 16, 31};
#define PER_WIDTH (N_IDX + 2 * N_DELTA + N_XOR) /* 17 */
#define K_WIDTHS (6 * PER_WIDTH)                /* 102 */

__global__ void shfl_widths(const unsigned *in, unsigned *out, unsigned long long *out64, float *outf)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    unsigned v = in[g];
    unsigned *o = out + (size_t)g * K_WIDTHS;
    int k = 0;
    for (int wi = 0; wi < 6; wi++) {
        int w = c_widths[wi];
        o[k++] = __shfl_sync(FULL, v, (lane * 7 + 3) % 64 - 16, w);
        for (int s = 0; s < N_IDX - 1; s++)
            o[k++] = __shfl_sync(FULL, v, c_idx_fixed[s], w);
        for (int s = 0; s < N_DELTA; s++)
            o[k++] = __shfl_up_sync(FULL, v, c_delta[s], w);
        for (int s = 0; s < N_DELTA; s++)
            o[k++] = __shfl_down_sync(FULL, v, c_delta[s], w);
        for (int s = 0; s < N_XOR; s++)
            o[k++] = __shfl_xor_sync(FULL, v, c_xor[s], w);
    }
    unsigned long long v64 = (unsigned long long)v << 32 | in[(g + 1) % (gridDim.x * blockDim.x)];
    out64[2 * g] = __shfl_sync(FULL, v64, (lane + 5) & 31);
    out64[2 * g + 1] = __shfl_xor_sync(FULL, v64, 7, 16);
    outf[g] = __shfl_down_sync(FULL, __uint_as_float(v & 0x3fffffffu), 9, 16);
}

#define N_C 5
#define N_B 2
#define K_RAW (4 * N_C * N_B) /* 40 values and 40 predicates */
__constant__ unsigned c_craw[N_C] = {0x001f, 0x0000, 0x181f, 0x1007, 0x0805};

#ifdef PTXWAVE_NATIVE
/* Native twin for benchmarks/quality_bench.py (the macro is only defined by
 * benchmarks/native/cuda_on_hip.h): PTX ISA "shfl.sync", its pseudocode
 * with the raw b and c operands (segment mask c[12:8], clamp c[4:0]); the
 * value read with ds_bpermute from lane j of this lane's 32-lane warp. */
__device__ __forceinline__ unsigned shfl_raw_one(int mode, unsigned v, unsigned b, unsigned c, unsigned *p)
{
    int lane = (int)pw_laneid(), bval = (int)(b & 0x1f), clamp = (int)(c & 0x1f), segmask = (int)((c >> 8) & 0x1f);
    int maxLane = (lane & segmask) | (clamp & ~segmask), minLane = lane & segmask, j;
    bool pv;
    switch (mode) {
    case 0: j = lane - bval; pv = j >= maxLane; break;
    case 1: j = lane + bval; pv = j <= maxLane; break;
    case 2: j = lane ^ bval; pv = j <= maxLane; break;
    default: j = minLane | (bval & ~segmask); pv = j <= maxLane; break;
    }
    if (!pv)
        j = lane;
    *p = pv;
    return (unsigned)pw_bperm((pw_lane64() & 32) + (unsigned)j, (int)v);
}
#else
__device__ __forceinline__ unsigned shfl_raw_one(int mode, unsigned v, unsigned b, unsigned c, unsigned *p)
{
    unsigned r, pv;
    switch (mode) {
    case 0:
        asm volatile("{ .reg .pred q; shfl.sync.up.b32 %0|q, %2, %3, %4, %5; selp.u32 %1, 1, 0, q; }"
                     : "=r"(r), "=r"(pv) : "r"(v), "r"(b), "r"(c), "r"(FULL));
        break;
    case 1:
        asm volatile("{ .reg .pred q; shfl.sync.down.b32 %0|q, %2, %3, %4, %5; selp.u32 %1, 1, 0, q; }"
                     : "=r"(r), "=r"(pv) : "r"(v), "r"(b), "r"(c), "r"(FULL));
        break;
    case 2:
        asm volatile("{ .reg .pred q; shfl.sync.bfly.b32 %0|q, %2, %3, %4, %5; selp.u32 %1, 1, 0, q; }"
                     : "=r"(r), "=r"(pv) : "r"(v), "r"(b), "r"(c), "r"(FULL));
        break;
    default:
        asm volatile("{ .reg .pred q; shfl.sync.idx.b32 %0|q, %2, %3, %4, %5; selp.u32 %1, 1, 0, q; }"
                     : "=r"(r), "=r"(pv) : "r"(v), "r"(b), "r"(c), "r"(FULL));
        break;
    }
    *p = pv;
    return r;
}
#endif

__global__ void shfl_raw(const unsigned *in, unsigned *out, unsigned *pred)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    unsigned v = in[g];
    int k = 0;
    for (int mode = 0; mode < 4; mode++)
        for (int ci = 0; ci < N_C; ci++)
            for (int bi = 0; bi < N_B; bi++) {
                unsigned b = bi == 0 ? 3u : (unsigned)(lane * 5) & 31u;
                unsigned p;
                out[(size_t)g * K_RAW + k] = shfl_raw_one(mode, v, b, c_craw[ci], &p);
                pred[(size_t)g * K_RAW + k] = p;
                k++;
            }
}

#define M0 0x49249249u /* lanes 0, 3, 6, ..., 30 */
#define K_DIV 2

__global__ void shfl_divergent(const unsigned *in, unsigned *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    unsigned v = in[g];
    unsigned r;
    if (lane % 3 == 0) {
        r = __shfl_sync(M0, v, lane + 3 > 30 ? 0 : lane + 3);
    } else {
        int src = (lane % 3 == 1 && lane < 31) ? lane + 1 : (lane % 3 == 2 ? lane - 1 : lane);
        r = __shfl_sync(~M0, v, src);
    }
    out[g * K_DIV] = r;
    if (lane < 20)
        r = __shfl_down_sync(0x000fffffu, v, 2, 4);
    else
        r = __shfl_up_sync(0xfff00000u, v, 1, 4);
    out[g * K_DIV + 1] = r;
}

#define K_PART 5

__global__ void shfl_partial(const unsigned *in, unsigned *out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int lane = threadIdx.x & 31;
    int warp = threadIdx.x >> 5;
    int nlanes = min(32, (int)blockDim.x - warp * 32);
    unsigned mask = nlanes == 32 ? FULL : (1u << nlanes) - 1;
    int width = nlanes == 32 ? 32 : 16; /* 48-thread blocks: 32 and 16 */
    unsigned v = in[g];
    out[g * K_PART + 0] = __shfl_xor_sync(mask, v, 1, width);
    out[g * K_PART + 1] = __shfl_xor_sync(mask, v, 6, width);
    out[g * K_PART + 2] = __shfl_sync(mask, v, width - 1 - (lane % width), width);
    out[g * K_PART + 3] = __shfl_down_sync(mask, v, 5, width);
    out[g * K_PART + 4] = __shfl_up_sync(mask, v, 5, width);
}

/* ---- host reference ---------------------------------------------------------- */

enum { UP, DOWN, BFLY, IDX };

/* source lane per the PTX ISA, and the predicate */
static int shfl_src(int mode, int lane, unsigned b, unsigned c, int *pval)
{
    int bval = (int)(b & 31), cval = (int)(c & 31), seg = (int)((c >> 8) & 31);
    int maxLane = (lane & seg) | (cval & ~seg);
    int minLane = lane & seg;
    int j, p;
    switch (mode) {
    case UP: j = lane - bval; p = j >= maxLane; break;
    case DOWN: j = lane + bval; p = j <= maxLane; break;
    case BFLY: j = lane ^ bval; p = j <= maxLane; break;
    default: j = minLane | (bval & ~seg); p = j <= maxLane; break;
    }
    *pval = p;
    return p ? j : lane;
}

static unsigned c_of(int mode, int width) { return ((32u - width) << 8) | (mode == UP ? 0u : 0x1fu); }

int main(void)
{
    pw_report rep = pw_report_start("warp_shfl");
    pw_rng rng = pw_rng_seed(16);
    const int grid = 2, bs = 96, n = grid * bs;
    unsigned in[n];
    for (int i = 0; i < n; i++)
        in[i] = pw_rng_u32(&rng);
    unsigned *d_in, *d_out, *d_pred;
    unsigned long long *d_out64;
    float *d_outf;
    CHECK(cudaMalloc(&d_in, sizeof(in)));
    CHECK(cudaMalloc(&d_out, (size_t)n * K_WIDTHS * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_pred, (size_t)n * K_RAW * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out64, 2 * n * sizeof(unsigned long long)));
    CHECK(cudaMalloc(&d_outf, n * sizeof(float)));
    CHECK(cudaMemcpy(d_in, in, sizeof(in), cudaMemcpyHostToDevice));

    /* widths */
    {
        unsigned *out = (unsigned *)malloc((size_t)n * K_WIDTHS * sizeof(unsigned));
        unsigned long long out64[2 * n];
        float outf[n];
        shfl_widths<<<grid, bs>>>(d_in, d_out, d_out64, d_outf);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, d_out, (size_t)n * K_WIDTHS * sizeof(unsigned), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(out64, d_out64, sizeof(out64), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(outf, d_outf, sizeof(outf), cudaMemcpyDeviceToHost));
        const int widths[6] = {1, 2, 4, 8, 16, 32};
        const int idx_fixed[3] = {5, 37, -1};
        const unsigned delta[N_DELTA] = {0, 1, 3, 16};
        const int xr[N_XOR] = {1, 3, 8, 16, 31};
        for (int g = 0; g < n; g++) {
            int lane = g % 32, base = g - lane, p, k = 0;
            for (int wi = 0; wi < 6; wi++) {
                int w = widths[wi];
                int want_src[PER_WIDTH];
                const char *what[PER_WIDTH];
                int m = 0;
                want_src[m] = shfl_src(IDX, lane, (unsigned)((lane * 7 + 3) % 64 - 16), c_of(IDX, w), &p);
                what[m++] = "idx(var)";
                for (int s = 0; s < 3; s++) {
                    want_src[m] = shfl_src(IDX, lane, (unsigned)idx_fixed[s], c_of(IDX, w), &p);
                    what[m++] = "idx";
                }
                for (int s = 0; s < N_DELTA; s++) {
                    want_src[m] = shfl_src(UP, lane, delta[s], c_of(UP, w), &p);
                    what[m++] = "up";
                }
                for (int s = 0; s < N_DELTA; s++) {
                    want_src[m] = shfl_src(DOWN, lane, delta[s], c_of(DOWN, w), &p);
                    what[m++] = "down";
                }
                for (int s = 0; s < N_XOR; s++) {
                    want_src[m] = shfl_src(BFLY, lane, (unsigned)xr[s], c_of(BFLY, w), &p);
                    what[m++] = "xor";
                }
                for (int q = 0; q < PER_WIDTH; q++, k++) {
                    unsigned want = in[base + want_src[q]];
                    unsigned got = out[(size_t)g * K_WIDTHS + k];
                    pw_expect(&rep, got == want, "%s width %d op %d thread %d: %08x want %08x (lane %d)", what[q], w,
                              q, g, got, want, want_src[q]);
                }
            }
            int s1 = shfl_src(IDX, lane, (unsigned)((lane + 5) & 31), c_of(IDX, 32), &p);
            int s2 = shfl_src(BFLY, lane, 7, c_of(BFLY, 16), &p);
            int s3 = shfl_src(DOWN, lane, 9, c_of(DOWN, 16), &p);
            unsigned long long w1 = (unsigned long long)in[base + s1] << 32 | in[(base + s1 + 1) % n];
            unsigned long long w2 = (unsigned long long)in[base + s2] << 32 | in[(base + s2 + 1) % n];
            pw_expect(&rep, out64[2 * g] == w1 && out64[2 * g + 1] == w2, "64-bit shuffles thread %d", g);
            pw_expect(&rep, f2u(outf[g]) == (in[base + s3] & 0x3fffffffu), "float shuffle thread %d", g);
        }
        free(out);
    }

    /* raw c operands with predicates */
    {
        unsigned *out = (unsigned *)malloc((size_t)n * K_RAW * sizeof(unsigned));
        unsigned *pred = (unsigned *)malloc((size_t)n * K_RAW * sizeof(unsigned));
        shfl_raw<<<grid, bs>>>(d_in, d_out, d_pred);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, d_out, (size_t)n * K_RAW * sizeof(unsigned), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(pred, d_pred, (size_t)n * K_RAW * sizeof(unsigned), cudaMemcpyDeviceToHost));
        const unsigned craw[N_C] = {0x001f, 0x0000, 0x181f, 0x1007, 0x0805};
        const char *mname[4] = {"up", "down", "bfly", "idx"};
        for (int g = 0; g < n; g++) {
            int lane = g % 32, base = g - lane, k = 0;
            for (int mode = 0; mode < 4; mode++)
                for (int ci = 0; ci < N_C; ci++)
                    for (int bi = 0; bi < N_B; bi++, k++) {
                        unsigned b = bi == 0 ? 3u : (unsigned)(lane * 5) & 31u;
                        int p;
                        int src = shfl_src(mode, lane, b, craw[ci], &p);
                        unsigned got = out[(size_t)g * K_RAW + k], gp = pred[(size_t)g * K_RAW + k];
                        pw_expect(&rep, got == in[base + src] && gp == (unsigned)p,
                                  "raw %s b=%u c=%#x thread %d: %08x p=%u want %08x p=%d", mname[mode], b, craw[ci], g,
                                  got, gp, in[base + src], p);
                    }
        }
        free(out);
        free(pred);
    }

    /* divergent branches */
    {
        unsigned out[n * K_DIV];
        shfl_divergent<<<grid, bs>>>(d_in, d_out);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        for (int g = 0; g < n; g++) {
            int lane = g % 32, base = g - lane, p;
            int src;
            if (lane % 3 == 0)
                src = lane + 3 > 30 ? 0 : lane + 3;
            else
                src = (lane % 3 == 1 && lane < 31) ? lane + 1 : (lane % 3 == 2 ? lane - 1 : lane);
            pw_expect(&rep, out[g * K_DIV] == in[base + src], "divergent idx thread %d", g);
            src = lane < 20 ? shfl_src(DOWN, lane, 2, c_of(DOWN, 4), &p) : shfl_src(UP, lane, 1, c_of(UP, 4), &p);
            pw_expect(&rep, out[g * K_DIV + 1] == in[base + src], "divergent up/down thread %d: %08x want %08x", g,
                      out[g * K_DIV + 1], in[base + src]);
        }
    }

    /* partial warp: 2 blocks of 48 */
    {
        const int pbs = 48, pn = 2 * pbs;
        unsigned out[pn * K_PART];
        shfl_partial<<<2, pbs>>>(d_in, d_out);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, d_out, sizeof(out), cudaMemcpyDeviceToHost));
        for (int g = 0; g < pn; g++) {
            int t = g % pbs, lane = t % 32, base = g - lane;
            int width = (t / 32 == 0) ? 32 : 16, p;
            int src[K_PART] = {
                shfl_src(BFLY, lane, 1, c_of(BFLY, width), &p),
                shfl_src(BFLY, lane, 6, c_of(BFLY, width), &p),
                shfl_src(IDX, lane, (unsigned)(width - 1 - lane % width), c_of(IDX, width), &p),
                shfl_src(DOWN, lane, 5, c_of(DOWN, width), &p),
                shfl_src(UP, lane, 5, c_of(UP, width), &p),
            };
            for (int k = 0; k < K_PART; k++)
                pw_expect(&rep, out[g * K_PART + k] == in[base + src[k]], "partial warp op %d thread %d: %08x want %08x",
                          k, g, out[g * K_PART + k], in[base + src[k]]);
        }
    }

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_pred));
    CHECK(cudaFree(d_out64));
    CHECK(cudaFree(d_outf));
    return pw_finish(&rep);
}
