/*
 * stencil: 1D and 2D stencils with shared-memory halos, clamped borders.
 *
 *  - stencil1d: radius 3, integer weights in __constant__ memory, blocks of
 *    96 and 33 threads loading B + 6 values (the first 3 threads load the
 *    halos).  Integers: |sum| <= 7 * 10 * 1000, exact.
 *  - stencil2d: 5-point float stencil over BX x BY tiles with a 1-cell halo,
 *    tiles 32x3 (96 threads) and 16x16, iterated 3 times with two buffers.
 *    The order of operations is fixed with explicit roundings:
 *      r = fma(c0, C, fma(c2, E + W, c1 * (N + S)))
 *    (__fadd_rn/__fmul_rn are never contracted into fma), and the host
 *    computes the same sequence, so results are bit-exact.
 */
#include "check.h"

#include <math.h>

#define R 3

__constant__ int c_w[2 * R + 1];

__device__ __forceinline__ int clampi(int i, int n) { return min(max(i, 0), n - 1); }

__global__ void stencil1d(const int *in, int *out, int n)
{
    __shared__ int s[1024 + 2 * R];
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    s[l] = in[clampi(g, n)];
    if (threadIdx.x < R) {
        s[l - R] = in[clampi(g - R, n)];
        s[l + blockDim.x] = in[clampi(g + (int)blockDim.x, n)];
    }
    __syncthreads();
    if (g < n) {
        int acc = 0;
        for (int k = -R; k <= R; k++)
            acc += c_w[k + R] * s[l + k];
        out[g] = acc;
    }
}

template <int BX, int BY>
__global__ void stencil2d(const float *in, float *out, int W, int H, float c0, float c1, float c2)
{
    __shared__ float t[BY + 2][BX + 2];
    int tx = threadIdx.x, ty = threadIdx.y;
    int x = blockIdx.x * BX + tx;
    int y = blockIdx.y * BY + ty;
    int cx = clampi(x, W), cy = clampi(y, H);
    t[ty + 1][tx + 1] = in[cy * W + cx];
    if (tx == 0)
        t[ty + 1][0] = in[cy * W + clampi(x - 1, W)];
    if (tx == BX - 1)
        t[ty + 1][BX + 1] = in[cy * W + clampi(x + 1, W)];
    if (ty == 0)
        t[0][tx + 1] = in[clampi(y - 1, H) * W + cx];
    if (ty == BY - 1)
        t[BY + 1][tx + 1] = in[clampi(y + 1, H) * W + cx];
    __syncthreads();
    if (x < W && y < H) {
        float ns = __fadd_rn(t[ty][tx + 1], t[ty + 2][tx + 1]);
        float ew = __fadd_rn(t[ty + 1][tx + 2], t[ty + 1][tx]);
        float r = __fmul_rn(c1, ns);
        r = fmaf(c2, ew, r);
        r = fmaf(c0, t[ty + 1][tx + 1], r);
        out[y * W + x] = r;
    }
}

static int clamp_host(int i, int n) { return i < 0 ? 0 : i >= n ? n - 1 : i; }

template <int BX, int BY>
static void run2d(pw_report *rep, int W, int H, pw_rng *rng)
{
    const float c0 = 0.5f, c1 = 0.125f, c2 = 0.1171875f;
    size_t bytes = (size_t)W * H * sizeof(float);
    float *a = (float *)malloc(bytes);
    float *b = (float *)malloc(bytes);
    float *got = (float *)malloc(bytes);
    for (int i = 0; i < W * H; i++)
        a[i] = pw_rng_float(rng, -10.0f, 10.0f);
    float *d0, *d1;
    CHECK(cudaMalloc(&d0, bytes));
    CHECK(cudaMalloc(&d1, bytes));
    CHECK(cudaMemcpy(d0, a, bytes, cudaMemcpyHostToDevice));
    dim3 block(BX, BY), grid(PW_DIV_UP(W, BX), PW_DIV_UP(H, BY));
    const int iters = 3;
    for (int it = 0; it < iters; it++) {
        stencil2d<BX, BY><<<grid, block>>>(it % 2 ? d1 : d0, it % 2 ? d0 : d1, W, H, c0, c1, c2);
        CHECK_LAUNCH();
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                float n = a[clamp_host(y - 1, H) * W + x], s = a[clamp_host(y + 1, H) * W + x];
                float e = a[y * W + clamp_host(x + 1, W)], w = a[y * W + clamp_host(x - 1, W)];
                float r = h_mul(c1, h_add(n, s));
                r = fmaf(c2, h_add(e, w), r);
                b[y * W + x] = fmaf(c0, a[y * W + x], r);
            }
        float *t = a;
        a = b;
        b = t;
    }
    CHECK(cudaMemcpy(got, iters % 2 ? d1 : d0, bytes, cudaMemcpyDeviceToHost));
    for (int i = 0; i < W * H; i++)
        pw_expect(rep, f2u(got[i]) == f2u(a[i]), "2d %dx%d tile %dx%d [%d,%d]=%a want %a", W, H, BX, BY, i / W, i % W,
                  got[i], a[i]);
    free(a);
    free(b);
    free(got);
    CHECK(cudaFree(d0));
    CHECK(cudaFree(d1));
}

int main(void)
{
    pw_report rep = pw_report_start("stencil");
    pw_rng rng = pw_rng_seed(9);

    const int w[2 * R + 1] = {1, -2, 5, 10, -3, 7, -1};
    CHECK(cudaMemcpyToSymbol(c_w, w, sizeof(w)));
    const int n = 10000;
    int *h = (int *)malloc(n * sizeof(int));
    int *got = (int *)malloc(n * sizeof(int));
    for (int i = 0; i < n; i++)
        h[i] = pw_rng_int(&rng, -1000, 1000);
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CHECK(cudaMemcpy(d_in, h, n * sizeof(int), cudaMemcpyHostToDevice));
    const int sizes[] = {96, 33, 1024};
    for (size_t k = 0; k < PW_ARRAY_SIZE(sizes); k++) {
        CHECK(cudaMemset(d_out, 0, n * sizeof(int)));
        stencil1d<<<PW_DIV_UP(n, sizes[k]), sizes[k]>>>(d_in, d_out, n);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got, d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; i++) {
            int acc = 0;
            for (int j = -R; j <= R; j++)
                acc += w[j + R] * h[clamp_host(i + j, n)];
            pw_expect(&rep, got[i] == acc, "1d bs=%d out[%d]=%d want %d", sizes[k], i, got[i], acc);
        }
    }
    free(h);
    free(got);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));

    run2d<32, 3>(&rep, 100, 70, &rng);
    run2d<16, 16>(&rep, 75, 61, &rng);
    return pw_finish(&rep);
}
