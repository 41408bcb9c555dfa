/*
 * simd_intrinsics: CUDA's per-byte and per-half-word SIMD intrinsics, bit-exact.
 *
 * nvcc 13 compiles __vabsdiffu2/__vabsdiffu4/__vabsdiffs4 and the sums of
 * absolute differences __vsadu2/__vsadu4/__vsads4 to the PTX video
 * instructions vabsdiff2/vabsdiff4 (with .add for the sums: PTX ISA
 * 9.7.18.2); the others become plain integer code.  The host recomputes
 * each from the CUDA Math API's description ("SIMD Intrinsics"), element by
 * element, on random operands with all-zero, all-one and sign-boundary
 * elements mixed in.
 */
#include "check.h"

#define K 14

__global__ void simd(const unsigned *in, unsigned *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned a = in[2 * t], b = in[2 * t + 1], *o = out + (size_t)t * K;
    o[0] = __vabsdiffu2(a, b);
    o[1] = __vabsdiffu4(a, b);
    o[2] = __vabsdiffs4(a, b);
    o[3] = __vabsdiffs2(a, b);
    o[4] = __vsadu2(a, b);
    o[5] = __vsadu4(a, b);
    o[6] = __vsads4(a, b);
    o[7] = __vadd2(a, b);
    o[8] = __vavgu4(a, b);
    o[9] = __vhaddu4(a, b);
    o[10] = __vmaxs2(a, b);
    o[11] = __vcmpgtu2(a, b);
    o[12] = __vsetlts2(a, b);
    o[13] = __vsubss2(a, b);
}

/* element i of x, w bits wide, signed or not */
static int elem(unsigned x, int i, int w, int sgn)
{
    unsigned e = (x >> (i * w)) & ((1u << w) - 1);
    return sgn && (e >> (w - 1)) ? (int)e - (int)(1u << w) : (int)e;
}

static unsigned put(unsigned d, int i, int w, int v) { return d | (((unsigned)v & ((1u << w) - 1)) << (i * w)); }

static void reference(unsigned a, unsigned b, unsigned *w)
{
    for (int k = 0; k < K; k++) w[k] = 0;
    for (int i = 0; i < 2; i++) {
        int ua = elem(a, i, 16, 0), ub = elem(b, i, 16, 0), sa = elem(a, i, 16, 1), sb = elem(b, i, 16, 1);
        w[0] = put(w[0], i, 16, abs(ua - ub));
        w[3] = put(w[3], i, 16, abs(sa - sb));
        w[4] += (unsigned)abs(ua - ub);
        w[7] = put(w[7], i, 16, ua + ub);
        w[10] = put(w[10], i, 16, sa > sb ? sa : sb);
        w[11] = put(w[11], i, 16, ua > ub ? 0xffff : 0);
        w[12] = put(w[12], i, 16, sa < sb);
        int d = sa - sb;
        w[13] = put(w[13], i, 16, d > 32767 ? 32767 : d < -32768 ? -32768 : d);
    }
    for (int i = 0; i < 4; i++) {
        int ua = elem(a, i, 8, 0), ub = elem(b, i, 8, 0), sa = elem(a, i, 8, 1), sb = elem(b, i, 8, 1);
        w[1] = put(w[1], i, 8, abs(ua - ub));
        w[2] = put(w[2], i, 8, abs(sa - sb));
        w[5] += (unsigned)abs(ua - ub);
        w[6] += (unsigned)abs(sa - sb);
        w[8] = put(w[8], i, 8, (ua + ub + 1) >> 1);
        w[9] = put(w[9], i, 8, (ua + ub) >> 1);
    }
}

int main(void)
{
    pw_report rep = pw_report_start("simd_intrinsics");
    pw_rng rng = pw_rng_seed(23);
    const int n = 1024, bs = 128;
    static const unsigned special[] = {0u, 0xffffffffu, 0x80008000u, 0x7fff7fffu, 0x80808080u, 0x7f7f7f7fu,
                                       0x00ff00ffu, 0x01000100u};
    unsigned *in = (unsigned *)malloc(n * 2 * sizeof(unsigned));
    for (int t = 0; t < 2 * n; t++) {
        unsigned r = pw_rng_u32(&rng);
        if ((pw_rng_u32(&rng) & 3) == 0) r = special[pw_rng_u32(&rng) % PW_ARRAY_SIZE(special)];
        in[t] = r;
    }
    unsigned *din, *dout;
    CHECK(cudaMalloc(&din, n * 2 * sizeof(unsigned)));
    CHECK(cudaMalloc(&dout, (size_t)n * K * sizeof(unsigned)));
    CHECK(cudaMemcpy(din, in, n * 2 * sizeof(unsigned), cudaMemcpyHostToDevice));
    simd<<<PW_DIV_UP(n, bs), bs>>>(din, dout, n);
    CHECK_LAUNCH();
    unsigned *out = (unsigned *)malloc((size_t)n * K * sizeof(unsigned));
    CHECK(cudaMemcpy(out, dout, (size_t)n * K * sizeof(unsigned), cudaMemcpyDeviceToHost));
    static const char *names[K] = {"__vabsdiffu2", "__vabsdiffu4", "__vabsdiffs4", "__vabsdiffs2", "__vsadu2",
                                   "__vsadu4", "__vsads4", "__vadd2", "__vavgu4", "__vhaddu4", "__vmaxs2",
                                   "__vcmpgtu2", "__vsetlts2", "__vsubss2"};
    for (int t = 0; t < n; t++) {
        unsigned w[K];
        reference(in[2 * t], in[2 * t + 1], w);
        for (int k = 0; k < K; k++)
            pw_expect(&rep, out[(size_t)t * K + k] == w[k], "%s [%d] a=%08x b=%08x: %08x want %08x", names[k], t,
                      in[2 * t], in[2 * t + 1], out[(size_t)t * K + k], w[k]);
    }
    free(in);
    free(out);
    CHECK(cudaFree(din));
    CHECK(cudaFree(dout));
    return pw_finish(&rep);
}
