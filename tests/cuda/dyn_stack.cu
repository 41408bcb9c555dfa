/*
 * dyn_stack: per-thread dynamic stack allocation in device code, which
 * nvcc compiles to PTX's alloca / stacksave / stackrestore (PTX ISA
 * 9.7.17, sm_52+): alloca() with a per-thread size (divergent sizes in one
 * warp), an over-aligned alloca(), a loop whose body allocates a new block
 * each iteration inside a scope (nvcc saves and restores the stack around
 * it), and a __noinline__ function that allocates in its own frame while
 * its caller's allocation is live (the callee's frame must lie above it);
 * the blocks are 8-byte aligned and do not overlap.
 *
 * Thread t: n = 1 + t % 13 words; fills an alloca'd array with
 * x_k = in[t] * (k + 1) ^ k, sums it, calls sum_squares(n, seed) (which
 * allocates its own array), and for 4 iterations allocates (i + 1) * n
 * words in a block scope, filling and summing them.  The host computes the
 * same in plain C.  Two blocks of 96 threads.
 */
#include "check.h"

__device__ __noinline__ unsigned long long sum_squares(unsigned n, unsigned seed)
{
    unsigned *b = (unsigned *)alloca(n * sizeof(unsigned));
    for (unsigned k = 0; k < n; k++)
        b[k] = seed + 3 * k;
    unsigned long long s = 0;
    for (unsigned k = 0; k < n; k++)
        s += (unsigned long long)b[k] * b[k];
    return s;
}

struct results {
    unsigned long long sum, sq, loop;
    unsigned aligned_ok;
    unsigned pad;
};

__global__ void dyn(const unsigned *in, results *out)
{
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned n = 1 + t % 13;
    unsigned *a = (unsigned *)alloca(n * sizeof(unsigned));
    for (unsigned k = 0; k < n; k++)
        a[k] = in[t] * (k + 1) ^ k;
    /* a second block, of 8-byte elements */
    double *d = (double *)alloca(n * sizeof(double));
    for (unsigned k = 0; k < n; k++)
        d[k] = (double)a[k];
    results r;
    r.aligned_ok = ((unsigned long long)d % 8) == 0 && (char *)d + n * sizeof(double) <= (char *)a ||
                   (char *)a + n * sizeof(unsigned) <= (char *)d;
    /* the callee allocates above this frame's live allocations */
    r.sq = sum_squares(n, in[t] & 0xffff);
    unsigned long long s = 0;
    for (unsigned k = 0; k < n; k++)
        s += a[k] + (unsigned long long)d[k];
    r.sum = s;
    unsigned long long l = 0;
    for (unsigned i = 0; i < 4; i++) {
        unsigned m = (i + 1) * n;
        unsigned *c = (unsigned *)alloca(m * sizeof(unsigned));
        for (unsigned k = 0; k < m; k++)
            c[k] = a[k % n] + i;
        for (unsigned k = 0; k < m; k++)
            l += c[k];
    }
    r.loop = l;
    r.pad = 0;
    out[t] = r;
}

int main(void)
{
    pw_report rep = pw_report_start("dyn_stack");
    pw_rng rng = pw_rng_seed(52);
    const int grid = 2, bs = 96, n = grid * bs;
    unsigned *in = (unsigned *)malloc(n * sizeof(unsigned));
    results *out = (results *)malloc(n * sizeof(results));
    for (int i = 0; i < n; i++)
        in[i] = pw_rng_u32(&rng);
    unsigned *d_in;
    results *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_out, n * sizeof(results)));
    CHECK(cudaMemcpy(d_in, in, n * sizeof(unsigned), cudaMemcpyHostToDevice));
    dyn<<<grid, bs>>>(d_in, d_out);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out, d_out, n * sizeof(results), cudaMemcpyDeviceToHost));

    for (int t = 0; t < n; t++) {
        unsigned m = 1 + t % 13, a[13];
        unsigned long long s = 0, sq = 0, l = 0;
        for (unsigned k = 0; k < m; k++) {
            a[k] = in[t] * (k + 1) ^ k;
            s += a[k] + (unsigned long long)a[k];
        }
        for (unsigned k = 0; k < m; k++) {
            unsigned b = (in[t] & 0xffff) + 3 * k;
            sq += (unsigned long long)b * b;
        }
        for (unsigned i = 0; i < 4; i++)
            for (unsigned k = 0; k < (i + 1) * m; k++)
                l += a[k % m] + i;
        const results *r = &out[t];
        pw_expect(&rep, r->sum == s, "t=%d sum=%llu want %llu", t, r->sum, s);
        pw_expect(&rep, r->sq == sq, "t=%d sum_squares=%llu want %llu", t, r->sq, sq);
        pw_expect(&rep, r->loop == l, "t=%d loop=%llu want %llu", t, r->loop, l);
        pw_expect(&rep, r->aligned_ok == 1, "t=%d the double block is misaligned or overlaps the first", t);
    }
    free(in);
    free(out);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return pw_finish(&rep);
}
