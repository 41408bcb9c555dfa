// Tensor Memory Accelerator copies (cp.async.bulk.tensor, PTX ISA
// 9.7.9.25.5) through tensor maps from cuTensorMapEncodeTiled: 2-d and 3-d
// tile loads into shared memory completed on an mbarrier, out-of-bounds
// boxes (zero and NaN fill), element strides, the 32B/64B/128B swizzles, a
// tile store that writes only the in-bounds part, and the encoder's checks.
// Expected values are computed on the host from the rules cuda.h and the
// PTX ISA state (the box traversal, the bounds) and from the swizzle as
// CUTLASS's Swizzle<b,4,3> defines it for these modes.
#include <cuda.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CK(x)                                                                   \
  do {                                                                          \
    cudaError_t e_ = (x);                                                       \
    if (e_ != cudaSuccess) {                                                    \
      printf("%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                 \
    }                                                                           \
  } while (0)

static int fails;
#define EXPECT(c, ...)           \
  do {                           \
    if (!(c)) {                  \
      if (fails++ < 12) {        \
        printf(__VA_ARGS__);     \
        printf("\n");            \
      }                          \
    }                            \
  } while (0)

__device__ static inline uint32_t smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

enum { BUF = 8192 };

// One tile load of `bytes` bytes at (c0, c1, c2) into shared memory, then
// the raw shared bytes (swizzled as they landed) copied out.
__global__ void tma_load(const __grid_constant__ CUtensorMap map, int rank, int c0, int c1, int c2, unsigned bytes,
                         uint32_t *out) {
  __shared__ alignas(1024) uint32_t buf[BUF / 4];
  __shared__ alignas(8) uint64_t bar;
  for (unsigned i = threadIdx.x; i < BUF / 4; i += blockDim.x) buf[i] = 0xdeadbeefu;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(bytes) : "memory");
    if (rank == 2)
      asm volatile(
          "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
          ::"r"(smem(buf)), "l"(&map), "r"(c0), "r"(c1), "r"(smem(&bar))
          : "memory");
    else
      asm volatile(
          "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
          "[%5];" ::"r"(smem(buf)), "l"(&map), "r"(c0), "r"(c1), "r"(c2), "r"(smem(&bar))
          : "memory");
  }
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      "WAIT%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], 0;\n"
      " @!p bra WAIT%=;\n"
      "}" ::"r"(smem(&bar))
      : "memory");
  for (unsigned i = threadIdx.x; i < BUF / 4; i += blockDim.x) out[i] = buf[i];
}

// A tile store of a box whose shared bytes are 1000000 + index.
__global__ void tma_store(const __grid_constant__ CUtensorMap map, int c0, int c1, unsigned words) {
  __shared__ alignas(1024) uint32_t buf[BUF / 4];
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) buf[i] = 1000000u + i;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(&map),
                 "r"(c0), "r"(c1), "r"(smem(buf))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

// The tensor: H x W (x D) 32-bit words, word (z, y, x) = z*100000 + y*1000 + x.
enum { W = 48, H = 40, D = 3 };
static uint32_t val(int z, int y, int x) { return (uint32_t)(z * 100000 + y * 1000 + x); }

static uint64_t swz(int mode, uint64_t a) {  // Swizzle<b,4,3>, b = 1, 2, 3
  if (!mode) return a;
  uint64_t m = (1u << mode) - 1;
  return a ^ (((a >> 7) & m) << 4);
}

static CUtensorMap encode(int *err, int rank, void *g, uint32_t b0, uint32_t b1, uint32_t b2, uint32_t es1,
                          CUtensorMapSwizzle sw, CUtensorMapFloatOOBfill fill, CUtensorMapDataType ty) {
  alignas(64) CUtensorMap m;
  cuuint64_t dim[3] = {W, H, D}, stride[2] = {W * 4, (cuuint64_t)W * H * 4};
  cuuint32_t box[3] = {b0, b1, b2}, es[3] = {1, es1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, ty, rank, g, dim, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, fill);
  if (r != CUDA_SUCCESS) {
    printf("cuTensorMapEncodeTiled: %d\n", (int)r);
    (*err)++;
  }
  return m;
}

// Loads one box and checks every word against the rules.
static int check_load(uint32_t *dg, uint32_t *dout, int rank, uint32_t b0, uint32_t b1, uint32_t b2, uint32_t es1,
                      int sw, bool nan_fill, int c0, int c1, int c2) {
  int err = 0;
  CUtensorMap m = encode(&err, rank, dg, b0, b1, b2, es1, (CUtensorMapSwizzle)sw,
                         nan_fill ? CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA : CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                         CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  if (err) return 1;
  unsigned n1 = (b1 + es1 - 1) / es1, n2 = rank == 3 ? b2 : 1, words = b0 * n1 * n2;
  tma_load<<<1, 128>>>(m, rank, c0, c1, c2, words * 4, dout);
  CK(cudaDeviceSynchronize());
  static uint32_t got[BUF / 4];
  CK(cudaMemcpy(got, dout, sizeof got, cudaMemcpyDeviceToHost));
  bool seen[BUF / 4] = {false};
  for (unsigned z = 0; z < n2; z++)
    for (unsigned y = 0; y < n1; y++)
      for (unsigned x = 0; x < b0; x++) {
        unsigned k = (z * n1 + y) * b0 + x;
        uint64_t phys = swz(sw, (uint64_t)k * 4) / 4;
        seen[phys] = true;
        int gx = c0 + (int)x, gy = c1 + (int)(y * es1), gz = rank == 3 ? c2 + (int)z : 0;
        bool in = gx >= 0 && gx < W && gy >= 0 && gy < H && gz >= 0 && gz < D;
        uint32_t v = got[phys];
        if (in)
          EXPECT(v == val(gz, gy, gx), "load r%d sw%d (%d,%d,%d) box (%u,%u,%u): word %u = %u, want %u", rank, sw, c0,
                 c1, c2, x, y, z, (unsigned)phys, v, val(gz, gy, gx));
        else if (nan_fill) {
          float f;
          memcpy(&f, &v, 4);
          EXPECT(isnan(f), "load (%d,%d): out-of-bounds word %u = %#x, want a NaN", c0, c1, (unsigned)phys, v);
        } else
          EXPECT(v == 0, "load r%d (%d,%d,%d) box (%u,%u,%u): out-of-bounds word = %u, want 0", rank, c0, c1, c2, x, y,
                 z, v);
      }
  for (unsigned i = 0; i < BUF / 4; i++)
    if (!seen[i]) EXPECT(got[i] == 0xdeadbeefu, "load: word %u past the box written (%#x)", i, got[i]);
  return 0;
}

int main(void) {
  CK(cudaFree(0));
  static uint32_t h[D * H * W];
  for (int z = 0; z < D; z++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) h[(z * H + y) * W + x] = val(z, y, x);
  uint32_t *dg, *dout;
  CK(cudaMalloc(&dg, sizeof h));
  CK(cudaMalloc(&dout, BUF));
  CK(cudaMemcpy(dg, h, sizeof h, cudaMemcpyHostToDevice));

  // 2-d, in bounds; at the far corner; before the origin
  if (check_load(dg, dout, 2, 16, 8, 1, 1, 0, false, 8, 4, 0)) return 1;
  if (check_load(dg, dout, 2, 16, 8, 1, 1, 0, false, 40, 36, 0)) return 1;
  if (check_load(dg, dout, 2, 16, 8, 1, 1, 0, false, -4, -2, 0)) return 1;
  if (check_load(dg, dout, 2, 16, 8, 1, 1, 0, true, 40, 36, 0)) return 1;
  // element stride 2 along y: ceil(7/2) = 4 rows, every other one
  if (check_load(dg, dout, 2, 8, 7, 1, 2, 0, false, 3, 33, 0)) return 1;
  // 3-d across the depth's end
  if (check_load(dg, dout, 3, 4, 5, 4, 1, 0, false, 44, 2, 1)) return 1;
  // the swizzles, inner rows of 32, 64 and 128 bytes
  if (check_load(dg, dout, 2, 8, 16, 1, 1, CU_TENSOR_MAP_SWIZZLE_32B, false, 4, 3, 0)) return 1;
  if (check_load(dg, dout, 2, 16, 16, 1, 1, CU_TENSOR_MAP_SWIZZLE_64B, false, 0, 20, 0)) return 1;
  if (check_load(dg, dout, 2, 32, 16, 1, 1, CU_TENSOR_MAP_SWIZZLE_128B, false, 24, 30, 0)) return 1;

  // a store at the far corner writes the in-bounds 8 x 4 words only
  {
    int err = 0;
    CUtensorMap m = encode(&err, 2, dg, 16, 8, 1, 1, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                           CU_TENSOR_MAP_DATA_TYPE_UINT32);
    if (err) return 1;
    tma_store<<<1, 128>>>(m, 40, 36, 16 * 8);
    CK(cudaDeviceSynchronize());
    static uint32_t g[D * H * W];
    CK(cudaMemcpy(g, dg, sizeof g, cudaMemcpyDeviceToHost));
    for (int z = 0; z < D; z++)
      for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
          uint32_t want = val(z, y, x);
          if (z == 0 && y >= 36 && x >= 40) want = 1000000u + (unsigned)((y - 36) * 16 + (x - 40));
          EXPECT(g[(z * H + y) * W + x] == want, "store: (%d,%d,%d) = %u, want %u", z, y, x,
                 g[(z * H + y) * W + x], want);
        }
  }

  // the encoder's checks (cuda.h): each answer CUDA's
  {
    alignas(64) unsigned char raw[192];
    CUtensorMap *mis = (CUtensorMap *)(raw + 16), *ok = (CUtensorMap *)raw;
    cuuint64_t dim[2] = {W, H}, stride[1] = {W * 4}, bad_stride[1] = {W * 4 + 4};
    cuuint32_t box[2] = {16, 8}, box3[2] = {3, 8}, es[2] = {1, 1}, es9[2] = {1, 9};
    struct {
      const char *what;
      CUtensorMap *m;
      CUtensorMapDataType ty;
      const cuuint64_t *stride;
      const cuuint32_t *box, *es;
      CUtensorMapInterleave il;
      CUtensorMapSwizzle sw;
      CUtensorMapFloatOOBfill fill;
      CUresult want;
    } cases[] = {
        {"a tensor map not 64-byte aligned", mis, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, stride, box, es,
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
         CUDA_ERROR_INVALID_VALUE},
        {"an inner box of 12 bytes", ok, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, stride, box3, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
         CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CUDA_ERROR_INVALID_VALUE},
        {"a stride not a multiple of 16", ok, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, bad_stride, box, es,
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
         CUDA_ERROR_INVALID_VALUE},
        {"an element stride of 9", ok, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, stride, box, es9, CU_TENSOR_MAP_INTERLEAVE_NONE,
         CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CUDA_ERROR_INVALID_VALUE},
        {"a 64-byte row under a 32B swizzle", ok, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, stride, box, es,
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
         CUDA_ERROR_INVALID_VALUE},
        {"NaN fill of an integer type", ok, CU_TENSOR_MAP_DATA_TYPE_UINT32, stride, box, es,
         CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
         CUDA_ERROR_INVALID_VALUE},
        {"a valid map", ok, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
         CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE, CUDA_SUCCESS},
    };
    for (unsigned k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      CUresult r = cuTensorMapEncodeTiled(cases[k].m, cases[k].ty, 2, dg, dim, cases[k].stride, cases[k].box,
                                          cases[k].es, cases[k].il, cases[k].sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                          cases[k].fill);
      EXPECT(r == cases[k].want, "encode with %s: %d, want %d", cases[k].what, (int)r, (int)cases[k].want);
    }
    EXPECT(cuTensorMapReplaceAddress(ok, dout) == CUDA_SUCCESS, "cuTensorMapReplaceAddress failed");
    EXPECT(cuTensorMapReplaceAddress(ok, (char *)dout + 8) == CUDA_ERROR_INVALID_VALUE,
           "cuTensorMapReplaceAddress accepted an address not 16-byte aligned");
  }

  CK(cudaFree(dg));
  CK(cudaFree(dout));
  printf(fails ? "tma: FAIL (%d)\n" : "tma: PASS\n", fails);
  return fails != 0;
}
