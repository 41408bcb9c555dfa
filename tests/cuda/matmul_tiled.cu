/*
 * matmul_tiled: C = A * B with TILE x TILE shared-memory tiles.
 *
 * Each thread accumulates one C element with an explicit fma per k, in the
 * order k = 0, 1, ..., so the result is bit-exact against the host's
 * fmaf/fma loop in the same order (both correctly rounded fused
 * multiply-adds).  Out-of-range tile entries are loaded as 0; the extra
 * steps fma(0, 0, acc) return acc unchanged (acc never becomes -0: it starts
 * at +0 and a rounded-to-nearest sum is -0 only when both addends are -0).
 *
 * Sizes are not multiples of the tile, to exercise the guards.  Tiles: 16x16
 * (256 threads) and 32x32 (1024 threads) in float, 8x8 in double.
 */
#include "check.h"

#include <math.h>

template <typename T>
__device__ __forceinline__ T fused(T a, T b, T c);
template <>
__device__ __forceinline__ float fused<float>(float a, float b, float c) { return fmaf(a, b, c); }
template <>
__device__ __forceinline__ double fused<double>(double a, double b, double c) { return fma(a, b, c); }

template <typename T, int TILE>
__global__ void matmul_tiled(const T *A, const T *B, T *C, int M, int N, int K)
{
    __shared__ T As[TILE][TILE];
    __shared__ T Bs[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    T acc = 0;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : (T)0;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : (T)0;
        __syncthreads();
        for (int k = 0; k < TILE; k++)
            acc = fused<T>(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}

static float host_fma(float a, float b, float c) { return fmaf(a, b, c); }
static double host_fma(double a, double b, double c) { return fma(a, b, c); }

template <typename T, int TILE>
static void run(pw_report *rep, const char *what, int M, int N, int K, pw_rng *rng)
{
    T *A = (T *)malloc(M * K * sizeof(T));
    T *B = (T *)malloc(K * N * sizeof(T));
    T *C = (T *)malloc(M * N * sizeof(T));
    for (int i = 0; i < M * K; i++)
        A[i] = (T)pw_rng_float(rng, -1.0f, 1.0f);
    for (int i = 0; i < K * N; i++)
        B[i] = (T)pw_rng_float(rng, -1.0f, 1.0f) / (T)3;
    T *dA, *dB, *dC;
    CHECK(cudaMalloc(&dA, M * K * sizeof(T)));
    CHECK(cudaMalloc(&dB, K * N * sizeof(T)));
    CHECK(cudaMalloc(&dC, M * N * sizeof(T)));
    CHECK(cudaMemcpy(dA, A, M * K * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dB, B, K * N * sizeof(T), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dC, 0xff, M * N * sizeof(T)));
    dim3 block(TILE, TILE);
    dim3 grid(PW_DIV_UP(N, TILE), PW_DIV_UP(M, TILE));
    matmul_tiled<T, TILE><<<grid, block>>>(dA, dB, dC, M, N, K);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(C, dC, M * N * sizeof(T), cudaMemcpyDeviceToHost));
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            T acc = 0;
            for (int k = 0; k < K; k++)
                acc = host_fma(A[i * K + k], B[k * N + j], acc);
            T got = C[i * N + j];
            pw_expect(rep, memcmp(&got, &acc, sizeof(T)) == 0, "%s %dx%dx%d C[%d][%d]=%a want %a", what, M, N, K, i, j,
                      (double)got, (double)acc);
        }
    free(A);
    free(B);
    free(C);
    CHECK(cudaFree(dA));
    CHECK(cudaFree(dB));
    CHECK(cudaFree(dC));
}

int main(void)
{
    pw_report rep = pw_report_start("matmul_tiled");
    pw_rng rng = pw_rng_seed(6);
    run<float, 16>(&rep, "f32 tile16", 70, 45, 33, &rng);
    run<float, 32>(&rep, "f32 tile32", 64, 96, 80, &rng);
    run<double, 8>(&rep, "f64 tile8", 37, 29, 41, &rng);
    return pw_finish(&rep);
}
