/*
 * softmax: row-wise softmax, one warp per row, warp reductions by shfl.bfly.
 *
 * Each lane strides over the row (cols = 100, 32 and 7: rows shorter than a
 * warp leave lanes with nothing), a butterfly of fmaxf gives the row maximum
 * m, then e_c = exp(x_c - m) and their butterfly sum s, y_c = e_c / s.
 * Blocks of 96 threads hold 3 rows; in the last block the warps past the
 * last row return as a whole, before any shuffle.
 *
 * Inputs are in [-8, 8], so 0 <= m - x_c <= 16.  Reference in double.
 * Relative tolerances (u = 2^-24):
 *  - expf: 2 ulp (CUDA Programming Guide, Mathematical Functions, expf),
 *    i.e. <= 4u; the rounding of x_c - m is <= 2^-20 absolute (half an ulp
 *    of 16), i.e. <= 16u relative after exp; the float sum of 100 positive
 *    terms is within 100u (Higham §4.2); the division adds u.  In total
 *    20u + 20u + 100u + u < 200u.
 *  - __expf, computed as ex2.approx.ftz.f32(x * log2(e)): the guide bounds it
 *    by 2 + floor(|1.173 x|) ulp, i.e. at most 21 ulp = 42u for |x| <= 16
 *    (the PTX ISA's ex2.approx bound plus the error of the product x*log2 e
 *    amplified by the exponential).  In total 58u + 58u + 100u + u < 300u.
 */
#include "check.h"

#include <math.h>

#define FULL 0xffffffffu

__global__ void softmax_rows(const float *x, float *y, int rows, int cols, int fast)
{
    int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    int lane = threadIdx.x & 31;
    if (row >= rows)
        return; /* the whole warp leaves: blockDim.x is a multiple of 32 */
    const float *xr = x + row * cols;
    float *yr = y + row * cols;

    float m = -INFINITY;
    for (int c = lane; c < cols; c += 32)
        m = fmaxf(m, xr[c]);
    for (int off = 16; off > 0; off >>= 1)
        m = fmaxf(m, __shfl_xor_sync(FULL, m, off));

    float s = 0.0f;
    for (int c = lane; c < cols; c += 32) {
        float e = fast ? __expf(xr[c] - m) : expf(xr[c] - m);
        yr[c] = e;
        s += e;
    }
    for (int off = 16; off > 0; off >>= 1)
        s += __shfl_xor_sync(FULL, s, off);

    for (int c = lane; c < cols; c += 32)
        yr[c] = yr[c] / s;
}

int main(void)
{
    pw_report rep = pw_report_start("softmax");
    pw_rng rng = pw_rng_seed(11);
    const int rows = 64;
    const int col_sizes[] = {100, 32, 7};
    float *x = (float *)malloc(rows * 100 * sizeof(float));
    float *y = (float *)malloc(rows * 100 * sizeof(float));
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, rows * 100 * sizeof(float)));
    CHECK(cudaMalloc(&dy, rows * 100 * sizeof(float)));
    for (size_t k = 0; k < PW_ARRAY_SIZE(col_sizes); k++) {
        int cols = col_sizes[k];
        for (int i = 0; i < rows * cols; i++)
            x[i] = pw_rng_float(&rng, -8.0f, 8.0f);
        CHECK(cudaMemcpy(dx, x, rows * cols * sizeof(float), cudaMemcpyHostToDevice));
        for (int fast = 0; fast < 2; fast++) {
            const int bs = 96, rows_per_block = bs / 32;
            softmax_rows<<<PW_DIV_UP(rows, rows_per_block), bs>>>(dx, dy, rows, cols, fast);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(y, dy, rows * cols * sizeof(float), cudaMemcpyDeviceToHost));
            double tol = (fast ? 300.0 : 200.0) * ldexp(1.0, -24);
            for (int r = 0; r < rows; r++) {
                const float *xr = x + r * cols;
                double m = -INFINITY, s = 0;
                for (int c = 0; c < cols; c++)
                    m = fmax(m, (double)xr[c]);
                for (int c = 0; c < cols; c++)
                    s += exp((double)xr[c] - m);
                for (int c = 0; c < cols; c++) {
                    double want = exp((double)xr[c] - m) / s;
                    double got = y[r * cols + c];
                    pw_expect(&rep, fabs(got - want) <= tol * want, "%s cols=%d y[%d][%d]=%.9g want %.9g",
                              fast ? "__expf" : "expf", cols, r, c, got, want);
                }
            }
        }
    }
    free(x);
    free(y);
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    return pw_finish(&rep);
}
