/*
 * int128.cu: unsigned __int128 division and remainder by a 64-bit value,
 * in nvcc's own expansion (a normalised reciprocal, then sub.cc/subc.cc
 * chains whose carry flag `addc.u32 d, 0, 0` reads to decide whether to
 * add the divisor back: right only if CC.CF after a subtraction is the
 * carry-out of a + ~b + 1, as on NVIDIA's hardware).  The reference is the
 * host compiler's unsigned __int128 arithmetic.
 */
#include "check.h"

__global__ void div128(const unsigned long long *x, const unsigned long long *d, unsigned long long *q,
                       unsigned long long *r, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned __int128 v = ((unsigned __int128)x[2 * i] << 64) | x[2 * i + 1];
    unsigned __int128 qq = v / d[i];
    q[2 * i] = (unsigned long long)(qq >> 64);
    q[2 * i + 1] = (unsigned long long)qq;
    r[i] = (unsigned long long)(v % d[i]);
}

int main(void)
{
    pw_report rep = pw_report_start("int128");
    pw_rng rng = pw_rng_seed(128);
    const int n = 400, bs = 64;
    unsigned long long *x = (unsigned long long *)malloc(n * 16), *d = (unsigned long long *)malloc(n * 8);
    for (int i = 0; i < n; i++) {
        unsigned long long hi = pw_rng_u64(&rng), lo = pw_rng_u64(&rng), dv = pw_rng_u64(&rng);
        switch (i % 8) {
        case 0: dv = 1; break;                               /* the quotient is the dividend */
        case 1: dv >>= pw_rng_int(&rng, 1, 62); break;       /* small divisors */
        case 2: hi = 0; break;                               /* a 64-bit dividend */
        case 3: dv = hi ? hi : 3; break;                     /* the divisor equals the high word */
        case 4: hi = lo = ~0ull; break;                      /* the largest dividend */
        case 5: dv |= 1ull << 63; break;                     /* already normalised */
        case 6: dv = (dv >> 32) ? (dv >> 32) : 7; break;     /* a 32-bit divisor */
        default: break;
        }
        if (!dv) dv = 5;
        x[2 * i] = hi;
        x[2 * i + 1] = lo;
        d[i] = dv;
    }
    unsigned long long *dx, *dd, *dq, *dr;
    CHECK(cudaMalloc(&dx, n * 16));
    CHECK(cudaMalloc(&dd, n * 8));
    CHECK(cudaMalloc(&dq, n * 16));
    CHECK(cudaMalloc(&dr, n * 8));
    CHECK(cudaMemcpy(dx, x, n * 16, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dd, d, n * 8, cudaMemcpyHostToDevice));
    div128<<<PW_DIV_UP(n, bs), bs>>>(dx, dd, dq, dr, n);
    CHECK_LAUNCH();
    unsigned long long *q = (unsigned long long *)malloc(n * 16), *r = (unsigned long long *)malloc(n * 8);
    CHECK(cudaMemcpy(q, dq, n * 16, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(r, dr, n * 8, cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        unsigned __int128 v = ((unsigned __int128)x[2 * i] << 64) | x[2 * i + 1];
        unsigned __int128 wq = v / d[i];
        unsigned long long wr = (unsigned long long)(v % d[i]);
        if (q[2 * i] != (unsigned long long)(wq >> 64) || q[2 * i + 1] != (unsigned long long)wq || r[i] != wr)
            pw_fail(&rep, "[%d] %016llx%016llx / %016llx: got q %016llx%016llx r %016llx, want q %016llx%016llx r %016llx",
                    i, x[2 * i], x[2 * i + 1], d[i], q[2 * i], q[2 * i + 1], r[i],
                    (unsigned long long)(wq >> 64), (unsigned long long)wq, wr);
    }
    free(x), free(d), free(q), free(r);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dd));
    CHECK(cudaFree(dq));
    CHECK(cudaFree(dr));
    return pw_finish(&rep);
}
