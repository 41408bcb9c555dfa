/*
 * transpose: out[c][r] = in[r][c], a pure data movement, bit-exact.
 *
 *  - transpose_naive: one element per thread, coalesced reads, strided writes.
 *  - transpose_padded: the classic 32x32 shared tile with one column of
 *    padding ([32][33]) so that the column-wise reads of the tile fall in
 *    distinct banks; blocks of 32x8 threads each move four rows; guards for
 *    matrices that are not multiples of 32.
 * Element types of 1, 4 and 8 bytes; 100x75, 64x64 and 33x97 matrices.
 */
#include "check.h"

#define TILE 32
#define ROWS 8

template <typename T>
__global__ void transpose_naive(const T *in, T *out, int rows, int cols)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < rows && c < cols)
        out[c * rows + r] = in[r * cols + c];
}

template <typename T>
__global__ void transpose_padded(const T *in, T *out, int rows, int cols)
{
    __shared__ T tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x; /* input column */
    int y = blockIdx.y * TILE + threadIdx.y; /* input row */
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x; /* output column = input row */
    y = blockIdx.x * TILE + threadIdx.y; /* output row = input column */
    for (int j = 0; j < TILE; j += ROWS)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

template <typename T>
static void run(pw_report *rep, const char *what, int rows, int cols, pw_rng *rng)
{
    size_t bytes = (size_t)rows * cols * sizeof(T);
    T *in = (T *)malloc(bytes);
    T *out = (T *)malloc(bytes);
    for (int i = 0; i < rows * cols; i++) {
        uint64_t r = pw_rng_u64(rng);
        memcpy(&in[i], &r, sizeof(T));
    }
    T *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in, bytes, cudaMemcpyHostToDevice));
    for (int variant = 0; variant < 2; variant++) {
        CHECK(cudaMemset(d_out, 0, bytes));
        if (variant == 0) {
            dim3 block(16, 6); /* 96 threads */
            dim3 grid(PW_DIV_UP(cols, 16), PW_DIV_UP(rows, 6));
            transpose_naive<T><<<grid, block>>>(d_in, d_out, rows, cols);
        } else {
            dim3 block(TILE, ROWS);
            dim3 grid(PW_DIV_UP(cols, TILE), PW_DIV_UP(rows, TILE));
            transpose_padded<T><<<grid, block>>>(d_in, d_out, rows, cols);
        }
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
        for (int r = 0; r < rows; r++)
            for (int c = 0; c < cols; c++)
                pw_expect(rep, memcmp(&out[c * rows + r], &in[r * cols + c], sizeof(T)) == 0,
                          "%s %s %dx%d: out[%d][%d] differs from in[%d][%d]", what, variant ? "padded" : "naive",
                          rows, cols, c, r, r, c);
    }
    free(in);
    free(out);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
}

int main(void)
{
    pw_report rep = pw_report_start("transpose");
    pw_rng rng = pw_rng_seed(7);
    const int shapes[][2] = {{100, 75}, {64, 64}, {33, 97}};
    for (size_t k = 0; k < PW_ARRAY_SIZE(shapes); k++) {
        run<float>(&rep, "f32", shapes[k][0], shapes[k][1], &rng);
        run<unsigned long long>(&rep, "u64", shapes[k][0], shapes[k][1], &rng);
        run<unsigned char>(&rep, "u8", shapes[k][0], shapes[k][1], &rng);
    }
    return pw_finish(&rep);
}
