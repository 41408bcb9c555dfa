/*
 * vector_add: the smallest real program, in three shapes.
 *
 *  - vadd_f32: one element per thread with a bounds check, n not a multiple
 *    of the block (block 96, and 33).  c = a + b is one correctly rounded
 *    add.rn.f32, so the host's a + b gives the same bits.
 *  - vadd_u32_grid_stride: a grid-stride loop with fewer threads than
 *    elements (7 blocks of 33 threads, then 2 blocks of 1024), wrapping
 *    unsigned addition.
 *  - daxpy: y = fma(alpha, x, y) in double, explicit fma on both sides, so
 *    the result is exact-rounded once (fma.rn.f64).
 */
#include "check.h"

#include <math.h>

__global__ void vadd_f32(const float *a, const float *b, float *c, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        c[i] = a[i] + b[i];
}

__global__ void vadd_u32_grid_stride(const unsigned *a, const unsigned *b, unsigned *c, int n)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        c[i] = a[i] + b[i];
}

__global__ void daxpy(double alpha, const double *x, double *y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = fma(alpha, x[i], y[i]);
}

int main(void)
{
    pw_report rep = pw_report_start("vector_add");
    pw_rng rng = pw_rng_seed(1);
    const int n = 10007; /* prime: no block size divides it */
    const int nu = 65536;

    float *ha = (float *)malloc(n * sizeof(float));
    float *hb = (float *)malloc(n * sizeof(float));
    float *hc = (float *)malloc(n * sizeof(float));
    unsigned *ua = (unsigned *)malloc(nu * sizeof(unsigned));
    unsigned *ub = (unsigned *)malloc(nu * sizeof(unsigned));
    unsigned *uc = (unsigned *)malloc(nu * sizeof(unsigned));
    double *hx = (double *)malloc(n * sizeof(double));
    double *hy = (double *)malloc(n * sizeof(double));
    double *hy0 = (double *)malloc(n * sizeof(double));
    for (int i = 0; i < n; i++) {
        ha[i] = pw_rng_float(&rng, -1000.0f, 1000.0f);
        hb[i] = pw_rng_float(&rng, -1.0f, 1.0f);
        hx[i] = (double)pw_rng_float(&rng, -1.0f, 1.0f) / 3.0;
        hy0[i] = (double)pw_rng_float(&rng, -1.0f, 1.0f) * 7.0;
    }
    for (int i = 0; i < nu; i++) {
        ua[i] = pw_rng_u32(&rng);
        ub[i] = pw_rng_u32(&rng);
    }

    float *da, *db, *dc;
    unsigned *dua, *dub, *duc;
    double *dx, *dy;
    CHECK(cudaMalloc(&da, n * sizeof(float)));
    CHECK(cudaMalloc(&db, n * sizeof(float)));
    CHECK(cudaMalloc(&dc, n * sizeof(float)));
    CHECK(cudaMalloc(&dua, nu * sizeof(unsigned)));
    CHECK(cudaMalloc(&dub, nu * sizeof(unsigned)));
    CHECK(cudaMalloc(&duc, nu * sizeof(unsigned)));
    CHECK(cudaMalloc(&dx, n * sizeof(double)));
    CHECK(cudaMalloc(&dy, n * sizeof(double)));
    CHECK(cudaMemcpy(da, ha, n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(db, hb, n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dua, ua, nu * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dub, ub, nu * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dx, hx, n * sizeof(double), cudaMemcpyHostToDevice));

    /* float add, two block sizes */
    const int fblocks[] = {96, 33};
    for (size_t k = 0; k < PW_ARRAY_SIZE(fblocks); k++) {
        int bs = fblocks[k];
        CHECK(cudaMemset(dc, 0xff, n * sizeof(float)));
        vadd_f32<<<PW_DIV_UP(n, bs), bs>>>(da, db, dc, n);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(hc, dc, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            float want = h_add(ha[i], hb[i]);
            pw_expect(&rep, f2u(hc[i]) == f2u(want), "vadd_f32 bs=%d c[%d]=%a want %a", bs, i, hc[i], want);
        }
    }

    /* grid-stride unsigned add */
    const int gs[][2] = {{7, 33}, {2, 1024}};
    for (size_t k = 0; k < PW_ARRAY_SIZE(gs); k++) {
        CHECK(cudaMemset(duc, 0, nu * sizeof(unsigned)));
        vadd_u32_grid_stride<<<gs[k][0], gs[k][1]>>>(dua, dub, duc, nu);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(uc, duc, nu * sizeof(unsigned), cudaMemcpyDeviceToHost));
        for (int i = 0; i < nu; i++) {
            unsigned want = ua[i] + ub[i];
            pw_expect(&rep, uc[i] == want, "grid-stride %dx%d c[%d]=%08x want %08x", gs[k][0], gs[k][1], i, uc[i], want);
        }
    }

    /* daxpy */
    const double alpha = -1.0 / 7.0;
    CHECK(cudaMemcpy(dy, hy0, n * sizeof(double), cudaMemcpyHostToDevice));
    daxpy<<<PW_DIV_UP(n, 48), 48>>>(alpha, dx, dy, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(hy, dy, n * sizeof(double), cudaMemcpyDeviceToHost));
    for (int i = 0; i < n; i++) {
        double want = fma(alpha, hx[i], hy0[i]);
        pw_expect(&rep, d2u(hy[i]) == d2u(want), "daxpy y[%d]=%a want %a", i, hy[i], want);
    }

    CHECK(cudaFree(da));
    CHECK(cudaFree(db));
    CHECK(cudaFree(dc));
    CHECK(cudaFree(dua));
    CHECK(cudaFree(dub));
    CHECK(cudaFree(duc));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    free(ha); free(hb); free(hc); free(ua); free(ub); free(uc); free(hx); free(hy); free(hy0);
    return pw_finish(&rep);
}
