/*
 * const_local: the memory spaces and accesses that are not global or shared.
 *
 *  - __constant__ const arrays with initializers in the module (.const with
 *    an initializer list), a __constant__ array written with
 *    cudaMemcpyToSymbol, and a __device__ global with an initializer, read
 *    back with cudaMemcpyFromSymbol and reached through
 *    cudaGetSymbolAddress.
 *  - constant memory indexed by a per-thread (divergent) index.
 *  - local memory: a 40-int per-thread array filled in a loop and read with
 *    data-dependent indices (it cannot live in registers), and a local array
 *    of structs.
 *  - a dense switch (nvcc 13 turns it into a lookup table, not a jump), and
 *    an indirect branch through a .branchtargets table (brx.idx, inline PTX
 *    in a __noinline__ function so that its labels exist once).
 *  - __ldg and const __restrict__ loads (ld.global.nc), vector loads and
 *    stores (v2/v4), and volatile shared accesses (ld/st.volatile.shared).
 */
#include "check.h"

__constant__ const int c_table[16] = {3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5, -8, 9, 7, -9, 3};
__constant__ const float c_coef[4] = {0.5f, -0.25f, 2.0f, 1.5f};
__constant__ unsigned c_keys[64];
__device__ int g_counter = 1234;
__device__ unsigned g_scratch[4] = {1, 2, 3, 4};

struct item {
    int key;
    float weight;
};

__device__ __noinline__ int classify(unsigned v)
{
    switch (v % 12) {
    case 0: return 17;
    case 1: return -3;
    case 2: return 99;
    case 3: return 4;
    case 4: return 1000;
    case 5: return -77;
    case 6: return 12;
    case 7: return 5;
    case 8: return -1;
    case 9: return 64;
    case 10: return 31;
    default: return 8;
    }
}

#ifdef PTXWAVE_NATIVE
/* Native twin for benchmarks/quality_bench.py (the macro is only defined by
 * benchmarks/native/cuda_on_hip.h): brx.idx over the four targets (PTX ISA
 * "brx.idx": branch to the idx-th label of the .branchtargets list) is a
 * switch on idx & 3 with the same four bodies. */
__device__ __noinline__ unsigned jump_table(unsigned idx, unsigned v)
{
    switch (idx & 3u) {
    case 0: return v * 3u;
    case 1: return v ^ 0x55u;
    case 2: return v + 1000u;
    default: return ~v;
    }
}
#else
__device__ __noinline__ unsigned jump_table(unsigned idx, unsigned v)
{
    unsigned r;
    asm("{\n\t"
        "pw_ts: .branchtargets pw_L0, pw_L1, pw_L2, pw_L3;\n\t"
        "brx.idx %1, pw_ts;\n\t"
        "pw_L0: mul.lo.u32 %0, %2, 3;\n\t"
        "bra.uni pw_LE;\n\t"
        "pw_L1: xor.b32 %0, %2, 0x55;\n\t"
        "bra.uni pw_LE;\n\t"
        "pw_L2: add.u32 %0, %2, 1000;\n\t"
        "bra.uni pw_LE;\n\t"
        "pw_L3: not.b32 %0, %2;\n\t"
        "pw_LE:\n\t"
        "}"
        : "=r"(r)
        : "r"(idx & 3u), "r"(v));
    return r;
}
#endif

__global__ void const_local_kernel(const unsigned *__restrict__ in, const float4 *__restrict__ vin, int *out,
                                   float4 *vout, unsigned *keys_out)
{
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = __ldg(&in[g]);
    int *o = out + g * 7;

    /* constant memory, uniform and divergent indices */
    o[0] = c_table[v & 15] * c_table[threadIdx.x & 15];
    keys_out[g] = c_keys[(v >> 8) & 63] ^ c_keys[threadIdx.x & 63];

    /* local array, data-dependent indices */
    unsigned arr[40]; /* unsigned: wrapping sums */
    for (int i = 0; i < 40; i++)
        arr[i] = v ^ (unsigned)(i * 0x9E3779B1u);
    unsigned acc = 0;
    unsigned idx = v;
    for (int j = 0; j < 8; j++) {
        acc += arr[idx % 40];
        arr[(idx >> 3) % 40] += (unsigned)j;
        idx = idx * 1664525u + 1013904223u;
    }
    o[1] = (int)acc;

    /* local array of structs */
    item items[8];
    for (int i = 0; i < 8; i++) {
        items[i].key = (int)((v >> (i * 4)) & 15);
        items[i].weight = c_coef[i & 3];
    }
    float wsum = 0.0f;
    for (int i = 0; i < 8; i++)
        wsum += items[items[i].key & 7].weight; /* exact: sums of multiples of 0.25 */
    o[2] = __float_as_int(wsum);

    o[3] = classify(v);
    o[4] = atomicAdd(&g_counter, 0) + (int)g_scratch[g & 3]; /* read globals through their symbols */

    /* vector accesses */
    float4 f = vin[g];
    vout[g] = make_float4(f.w, f.z, f.y, f.x);

    /* volatile shared */
    volatile __shared__ int vsh[1024];
    vsh[threadIdx.x] = (int)v;
    __syncthreads();
    o[5] = vsh[blockDim.x - 1 - threadIdx.x];

    o[6] = (int)jump_table(v >> 7, v); /* divergent targets within a warp */
}

__global__ void bump_global(void)
{
    g_counter += 1; /* one thread */
    g_scratch[0] = 42;
}

int main(void)
{
    pw_report rep = pw_report_start("const_local");
    pw_rng rng = pw_rng_seed(24);
    const int table[16] = {3, -1, 4, -1, 5, -9, 2, 6, -5, 3, 5, -8, 9, 7, -9, 3};
    const float coef[4] = {0.5f, -0.25f, 2.0f, 1.5f};
    unsigned keys[64];
    for (int i = 0; i < 64; i++)
        keys[i] = pw_rng_u32(&rng);
    CHECK(cudaMemcpyToSymbol(c_keys, keys, sizeof(keys)));
    unsigned keys_back[64];
    CHECK(cudaMemcpyFromSymbol(keys_back, c_keys, sizeof(keys_back)));
    pw_expect(&rep, memcmp(keys, keys_back, sizeof(keys)) == 0, "cudaMemcpyFromSymbol(c_keys) differs");
    int init_counter = 0;
    CHECK(cudaMemcpyFromSymbol(&init_counter, g_counter, sizeof(int)));
    pw_expect(&rep, init_counter == 1234, "initialized __device__ global: %d want 1234", init_counter);

    const int grid = 3, bs = 96, n = grid * bs;
    unsigned in[n];
    float4 vin[n], vout[n];
    for (int i = 0; i < n; i++) {
        in[i] = pw_rng_u32(&rng);
        vin[i] = make_float4(pw_rng_float(&rng, -1, 1), pw_rng_float(&rng, -1, 1), pw_rng_float(&rng, -1, 1),
                             pw_rng_float(&rng, -1, 1));
    }
    unsigned *din, *dkeys;
    int *dout;
    float4 *dvin, *dvout;
    CHECK(cudaMalloc(&din, sizeof(in)));
    CHECK(cudaMalloc(&dkeys, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&dout, n * 7 * sizeof(int)));
    CHECK(cudaMalloc(&dvin, sizeof(vin)));
    CHECK(cudaMalloc(&dvout, sizeof(vout)));
    CHECK(cudaMemcpy(din, in, sizeof(in), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dvin, vin, sizeof(vin), cudaMemcpyHostToDevice));
    const_local_kernel<<<grid, bs>>>(din, dvin, dout, dvout, dkeys);
    CHECK_LAUNCH();
    int out[n * 7];
    unsigned kout[n];
    CHECK(cudaMemcpy(out, dout, sizeof(out), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(kout, dkeys, sizeof(kout), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(vout, dvout, sizeof(vout), cudaMemcpyDeviceToHost));
    static const int cls[12] = {17, -3, 99, 4, 1000, -77, 12, 5, -1, 64, 31, 8};
    const unsigned scratch[4] = {1, 2, 3, 4};
    for (int g = 0; g < n; g++) {
        int t = g % bs;
        unsigned v = in[g];
        int w[7];
        w[0] = table[v & 15] * table[t & 15];
        int arr[40];
        for (int i = 0; i < 40; i++)
            arr[i] = (int)(v ^ (unsigned)(i * 0x9E3779B1u));
        int acc = 0;
        unsigned idx = v;
        for (int j = 0; j < 8; j++) {
            acc = (int)((unsigned)acc + (unsigned)arr[idx % 40]);
            arr[(idx >> 3) % 40] = (int)((unsigned)arr[(idx >> 3) % 40] + (unsigned)j);
            idx = idx * 1664525u + 1013904223u;
        }
        w[1] = acc;
        float ws = 0.0f;
        for (int i = 0; i < 8; i++) {
            int key = (int)((v >> (i * 4)) & 15);
            ws += coef[(key & 7) & 3];
        }
        w[2] = (int)f2u(ws);
        w[3] = cls[v % 12];
        w[4] = 1234 + (int)scratch[g & 3];
        w[5] = (int)in[(g / bs) * bs + bs - 1 - t];
        switch ((v >> 7) & 3u) {
        case 0: w[6] = (int)(v * 3u); break;
        case 1: w[6] = (int)(v ^ 0x55u); break;
        case 2: w[6] = (int)(v + 1000u); break;
        default: w[6] = (int)~v; break;
        }
        for (int k = 0; k < 7; k++)
            pw_expect(&rep, out[g * 7 + k] == w[k], "thread %d result %d: %d want %d", g, k, out[g * 7 + k], w[k]);
        pw_expect(&rep, kout[g] == (keys[(v >> 8) & 63] ^ keys[t & 63]), "thread %d constant keys", g);
        pw_expect(&rep, f2u(vout[g].x) == f2u(vin[g].w) && f2u(vout[g].y) == f2u(vin[g].z) &&
                            f2u(vout[g].z) == f2u(vin[g].y) && f2u(vout[g].w) == f2u(vin[g].x),
                  "thread %d float4 swizzle", g);
    }

    /* globals written by a kernel, read through symbol copies and addresses */
    bump_global<<<1, 1>>>();
    CHECK_LAUNCH();
    int counter;
    unsigned *scratch_addr;
    unsigned scratch_back[4];
    CHECK(cudaMemcpyFromSymbol(&counter, g_counter, sizeof(int)));
    CHECK(cudaGetSymbolAddress((void **)&scratch_addr, g_scratch));
    CHECK(cudaMemcpy(scratch_back, scratch_addr, sizeof(scratch_back), cudaMemcpyDeviceToHost));
    pw_expect(&rep, counter == 1235, "g_counter after bump: %d want 1235", counter);
    pw_expect(&rep, scratch_back[0] == 42 && scratch_back[1] == 2 && scratch_back[2] == 3 && scratch_back[3] == 4,
              "g_scratch through cudaGetSymbolAddress: %u %u %u %u", scratch_back[0], scratch_back[1], scratch_back[2],
              scratch_back[3]);

    CHECK(cudaFree(din));
    CHECK(cudaFree(dkeys));
    CHECK(cudaFree(dout));
    CHECK(cudaFree(dvin));
    CHECK(cudaFree(dvout));
    return pw_finish(&rep);
}
