/*
 * grid3d: 2D and 3D grids and blocks; every x/y/z of threadIdx, blockIdx,
 * blockDim and gridDim (%tid %ctaid %ntid %nctaid), the linear thread
 * index, %laneid (warps are formed from the linear index x + y*Dx + z*Dx*Dy),
 * and a 3D array indexed with all of them.
 *
 * clock64() is read twice around some work and the difference is stored in
 * a buffer that is never checked (it only has to run); %smid and %warpid
 * are likewise stored and not checked (their values are not defined).
 * Shapes: block 4x3x5 (60 threads: the second warp is partial) in a 3x2x2
 * grid, block 8x4x3 (96) in 2x3x1, block 32x1x2 in 1x1x4, block 16x16x4
 * (1024) in 2x1x1.
 */
#include "check.h"

#define NF 16

__global__ void where_am_i(unsigned *rec, unsigned *vol, long long *ticks, float *cube, int W, int H, int D)
{
    unsigned lin_t = threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y;
    unsigned lin_b = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
    unsigned nt = blockDim.x * blockDim.y * blockDim.z;
    unsigned g = lin_b * nt + lin_t;
    long long t0 = clock64();
    unsigned *r = rec + (size_t)g * NF;
    r[0] = threadIdx.x; r[1] = threadIdx.y; r[2] = threadIdx.z;
    r[3] = blockIdx.x; r[4] = blockIdx.y; r[5] = blockIdx.z;
    r[6] = blockDim.x; r[7] = blockDim.y; r[8] = blockDim.z;
    r[9] = gridDim.x; r[10] = gridDim.y; r[11] = gridDim.z;
    unsigned lane;
#ifdef PTXWAVE_NATIVE
    /* native twin (benchmarks/native/cuda_on_hip.h defines the macro):
     * PTX ISA "Special registers": %laneid, the lane in the 32-lane warp */
    lane = pw_laneid();
#else
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
#endif
    r[12] = lane;
    r[13] = lin_t;
    r[14] = lin_b;
    /* a 3D array: global coordinates from all the indices */
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    int z = blockIdx.z * blockDim.z + threadIdx.z;
    r[15] = 0;
    if (x < W && y < H && z < D) {
        cube[((size_t)z * H + y) * W + x] = (float)(x + 100 * y + 10000 * z);
        r[15] = 1;
    }
    long long t1 = clock64();
    ticks[g] = t1 - t0;
    unsigned smid, warpid;
#ifdef PTXWAVE_NATIVE
    /* native twin: %smid and %warpid, hardware ids (unchecked: PTX ISA says
     * they are volatile), computed as ptxwave lowers them (cuda_on_hip.h) */
    smid = pw_smid();
    warpid = pw_warpid();
#else
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(warpid));
#endif
    vol[2 * g] = smid;
    vol[2 * g + 1] = warpid;
}

int main(void)
{
    pw_report rep = pw_report_start("grid3d");
    struct {
        dim3 grid, block;
    } cfg[] = {{dim3(3, 2, 2), dim3(4, 3, 5)},
               {dim3(2, 3, 1), dim3(8, 4, 3)},
               {dim3(1, 1, 4), dim3(32, 1, 2)},
               {dim3(2, 1, 1), dim3(16, 16, 4)}};
    for (size_t c = 0; c < PW_ARRAY_SIZE(cfg); c++) {
        dim3 G = cfg[c].grid, B = cfg[c].block;
        unsigned nt = B.x * B.y * B.z, nb = G.x * G.y * G.z, n = nt * nb;
        /* the cube is a little smaller than the grid of threads in x and z */
        int W = (int)(G.x * B.x) - 1, H = (int)(G.y * B.y), D = (int)(G.z * B.z) - 1;
        if (W < 1) W = 1;
        if (D < 1) D = 1;
        unsigned *drec, *dvol;
        long long *dticks;
        float *dcube;
        size_t cube_n = (size_t)W * H * D;
        CHECK(cudaMalloc(&drec, (size_t)n * NF * 4));
        CHECK(cudaMalloc(&dvol, (size_t)n * 2 * 4));
        CHECK(cudaMalloc(&dticks, (size_t)n * 8));
        CHECK(cudaMalloc(&dcube, cube_n * sizeof(float)));
        CHECK(cudaMemset(dcube, 0xff, cube_n * sizeof(float)));
        where_am_i<<<G, B>>>(drec, dvol, dticks, dcube, W, H, D);
        CHECK_LAUNCH();
        unsigned *rec = (unsigned *)malloc((size_t)n * NF * 4);
        float *cube = (float *)malloc(cube_n * sizeof(float));
        CHECK(cudaMemcpy(rec, drec, (size_t)n * NF * 4, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(cube, dcube, cube_n * sizeof(float), cudaMemcpyDeviceToHost));
        for (unsigned bz = 0; bz < G.z; bz++)
            for (unsigned by = 0; by < G.y; by++)
                for (unsigned bx = 0; bx < G.x; bx++)
                    for (unsigned tz = 0; tz < B.z; tz++)
                        for (unsigned ty = 0; ty < B.y; ty++)
                            for (unsigned tx = 0; tx < B.x; tx++) {
                                unsigned lin_t = tx + ty * B.x + tz * B.x * B.y;
                                unsigned lin_b = bx + by * G.x + bz * G.x * G.y;
                                unsigned g = lin_b * nt + lin_t;
                                int x = (int)(bx * B.x + tx), y = (int)(by * B.y + ty), z = (int)(bz * B.z + tz);
                                unsigned w[NF] = {tx, ty, tz, bx, by, bz, B.x, B.y, B.z, G.x, G.y, G.z,
                                                  lin_t % 32, lin_t, lin_b, (x < W && y < H && z < D) ? 1u : 0u};
                                for (int k = 0; k < NF; k++)
                                    pw_expect(&rep, rec[(size_t)g * NF + k] == w[k],
                                              "config %zu thread (%u,%u,%u) block (%u,%u,%u) field %d: %u want %u", c, tx,
                                              ty, tz, bx, by, bz, k, rec[(size_t)g * NF + k], w[k]);
                            }
        for (int z = 0; z < D; z++)
            for (int y = 0; y < H; y++)
                for (int x = 0; x < W; x++) {
                    float want = (float)(x + 100 * y + 10000 * z);
                    float got = cube[((size_t)z * H + y) * W + x];
                    pw_expect(&rep, got == want, "config %zu cube[%d][%d][%d]=%g want %g", c, z, y, x, got, want);
                }
        free(rec);
        free(cube);
        CHECK(cudaFree(drec));
        CHECK(cudaFree(dvol));
        CHECK(cudaFree(dticks));
        CHECK(cudaFree(dcube));
    }
    return pw_finish(&rep);
}
