// The rest of the bulk async-copy family (PTX ISA 9.7.9.25.4-5, 9.7.9.26):
// cp.reduce.async.bulk shared::cta -> global (each operation, 32/64-bit
// integers, f32, f16/bf16 add.noftz, min.f16, max.bf16) and -> shared::cluster
// on an mbarrier, cp.reduce.async.bulk.tensor .tile (a 2-d box over the
// tensor's edge: add on s32, min on u32, add on f16), tensormap.replace of a
// map's global address and box dimension followed by a tile load through
// the changed map.  Expected values are computed on the host: the
// reductions as the ISA defines each operation (inc/dec wrap at the source
// value, float adds rounded to nearest in the element type, computed here
// through float/double with a final rounding), the tensor forms from the
// tile mode's bounds rule (out-of-bounds elements are not written).
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

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
      if (fails++ < 16) {        \
        printf(__VA_ARGS__);     \
        printf("\n");            \
      }                          \
    }                            \
  } while (0)

__device__ static inline uint32_t smem(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

// ---- cp.reduce.async.bulk ---------------------------------------------------
// Region r of 64 bytes of dst gets region r of src reduced into it, one
// operation per region (the order of OPS below); regions 14 and 15 are the
// shared::cluster forms (add.u32, xor.b32) into a shared copy of dst's
// regions, completing on an mbarrier, then copied back.
enum { NREG = 16, RB = 64 };

#define RED(op, r) \
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group." op " [%0], [%1], 64;" ::"l"(dst + (r) * RB), \
               "r"(smem(s + (r) * RB))                                                                          \
               : "memory")

__global__ void bulk_reduce(unsigned char *dst, const unsigned char *src) {
  __shared__ alignas(128) unsigned char s[NREG * RB];
  __shared__ alignas(16) unsigned char acc[2 * RB];
  __shared__ alignas(8) uint64_t bar;
  for (unsigned i = threadIdx.x; i < NREG * RB; i += blockDim.x) s[i] = src[i];
  for (unsigned i = threadIdx.x; i < 2 * RB; i += blockDim.x) acc[i] = dst[14 * RB + i];
  if (threadIdx.x == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)));
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  if (threadIdx.x == 0) {
    RED("add.u32", 0);
    RED("min.s32", 1);
    RED("max.u32", 2);
    RED("inc.u32", 3);
    RED("dec.u32", 4);
    RED("and.b32", 5);
    RED("or.b64", 6);
    RED("xor.b64", 7);
    RED("add.u64", 8);
    RED("max.s64", 9);
    RED("add.f32", 10);
    RED("add.noftz.f16", 11);
    RED("add.noftz.bf16", 12);
    RED("min.f16", 13);
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 128;" ::"r"(smem(&bar)) : "memory");
    asm volatile(
        "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.add.u32 [%0], [%1], 64, [%2];" ::
            "r"(smem(acc)),
        "r"(smem(s + 14 * RB)), "r"(smem(&bar))
        : "memory");
    asm volatile(
        "cp.reduce.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes.xor.b32 [%0], [%1], 64, [%2];" ::
            "r"(smem(acc + RB)),
        "r"(smem(s + 15 * RB)), "r"(smem(&bar))
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
  for (unsigned i = threadIdx.x; i < 2 * RB; i += blockDim.x) dst[14 * RB + i] = acc[i];
}

static uint32_t lcg_state = 12345;
static uint32_t rnd(void) {
  lcg_state = lcg_state * 1664525u + 1013904223u;
  return lcg_state >> 8;
}

static float h2f(uint16_t h) {
  __half_raw r;
  r.x = h;
  return __half2float(__half(r));
}
static uint16_t f2h(float f) {
  __half_raw r = __half_raw(__float2half_rn(f));
  return r.x;
}
static float b2f(uint16_t b) {
  uint32_t u = (uint32_t)b << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
static uint16_t f2b(float f) {  // round to nearest even (no NaN here)
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

static int check_bulk_reduce(void) {
  static unsigned char d[NREG * RB], s[NREG * RB], got[NREG * RB];
  for (unsigned i = 0; i < sizeof d; i += 4) {
    uint32_t a = rnd() * 7u + rnd(), b = rnd() * 5u + rnd();
    memcpy(d + i, &a, 4);
    memcpy(s + i, &b, 4);
  }
  // inc/dec: small values around the bound 5 (the source)
  for (int k = 0; k < 16; k++) {
    uint32_t a = (uint32_t)(k % 8), b = 5;
    if (k == 15) a = 0xffffffffu;
    memcpy(d + 3 * RB + 4 * k, &a, 4);
    memcpy(s + 3 * RB + 4 * k, &b, 4);
    memcpy(d + 4 * RB + 4 * k, &a, 4);
    memcpy(s + 4 * RB + 4 * k, &b, 4);
  }
  // floats: normal values (f32 add flushes subnormals, not tested here)
  for (int k = 0; k < 16; k++) {
    float a = (float)((int)(rnd() % 20001) - 10000) / 64.0f, b = (float)((int)(rnd() % 20001) - 10000) / 64.0f;
    memcpy(d + 10 * RB + 4 * k, &a, 4);
    memcpy(s + 10 * RB + 4 * k, &b, 4);
  }
  for (int k = 0; k < 32; k++) {
    uint16_t a = f2h((float)((int)(rnd() % 4001) - 2000) / 16.0f), b = f2h((float)((int)(rnd() % 4001) - 2000) / 16.0f);
    memcpy(d + 11 * RB + 2 * k, &a, 2);
    memcpy(s + 11 * RB + 2 * k, &b, 2);
    a = f2b((float)((int)(rnd() % 4001) - 2000) / 8.0f), b = f2b((float)((int)(rnd() % 4001) - 2000) / 8.0f);
    memcpy(d + 12 * RB + 2 * k, &a, 2);
    memcpy(s + 12 * RB + 2 * k, &b, 2);
    a = f2h((float)((int)(rnd() % 4001) - 2000) / 16.0f), b = f2h((float)((int)(rnd() % 4001) - 2000) / 16.0f);
    memcpy(d + 13 * RB + 2 * k, &a, 2);
    memcpy(s + 13 * RB + 2 * k, &b, 2);
  }
  unsigned char *dd, *ds;
  CK(cudaMalloc(&dd, sizeof d));
  CK(cudaMalloc(&ds, sizeof s));
  CK(cudaMemcpy(dd, d, sizeof d, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ds, s, sizeof s, cudaMemcpyHostToDevice));
  bulk_reduce<<<1, 128>>>(dd, ds);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got, dd, sizeof got, cudaMemcpyDeviceToHost));
  static const char *const names[NREG] = {"add.u32", "min.s32", "max.u32", "inc.u32", "dec.u32", "and.b32",
                                          "or.b64", "xor.b64", "add.u64", "max.s64", "add.f32", "add.noftz.f16",
                                          "add.noftz.bf16", "min.f16", "cluster add.u32", "cluster xor.b32"};
  for (int r = 0; r < NREG; r++)
    for (int k = 0; k < RB;) {
      const unsigned char *a = d + r * RB + k, *b = s + r * RB + k, *g = got + r * RB + k;
      uint64_t want = 0, have = 0;
      int n = 4;
      uint32_t a32, b32;
      uint64_t a64, b64;
      uint16_t a16, b16;
      memcpy(&a32, a, 4), memcpy(&b32, b, 4);
      memcpy(&a64, a, 8), memcpy(&b64, b, 8);
      memcpy(&a16, a, 2), memcpy(&b16, b, 2);
      switch (r) {
      case 0: case 14: want = a32 + b32; break;
      case 1: want = (uint32_t)((int32_t)a32 < (int32_t)b32 ? a32 : b32); break;
      case 2: want = a32 > b32 ? a32 : b32; break;
      case 3: want = a32 >= b32 ? 0 : a32 + 1; break;
      case 4: want = (a32 == 0 || a32 > b32) ? b32 : a32 - 1; break;
      case 5: want = a32 & b32; break;
      case 6: want = a64 | b64, n = 8; break;
      case 7: want = a64 ^ b64, n = 8; break;
      case 8: want = a64 + b64, n = 8; break;
      case 9: want = (uint64_t)((int64_t)a64 > (int64_t)b64 ? a64 : b64), n = 8; break;
      case 10: {
        float x, y, z;
        memcpy(&x, &a32, 4), memcpy(&y, &b32, 4);
        z = (float)((double)x + (double)y);
        uint32_t u;
        memcpy(&u, &z, 4);
        want = u;
        break;
      }
      case 11: want = f2h((float)((double)h2f(a16) + (double)h2f(b16))), n = 2; break;
      case 12: want = f2b((float)((double)b2f(a16) + (double)b2f(b16))), n = 2; break;
      case 13: want = h2f(a16) < h2f(b16) ? a16 : b16, n = 2; break;
      case 15: want = a32 ^ b32; break;
      }
      memcpy(&have, g, n);
      EXPECT(have == want, "bulk reduce %s: element %d = %#llx, want %#llx", names[r], k / n,
             (unsigned long long)have, (unsigned long long)want);
      k += n;
    }
  CK(cudaFree(dd));
  CK(cudaFree(ds));
  return 0;
}

// ---- cp.reduce.async.bulk.tensor ----------------------------------------------
// A 2-d box of BW x BH elements of `eb` bytes at (c0, c1), whose shared
// bytes are given, reduced into the tensor.
enum { BW = 16, BH = 8 };
__global__ void tensor_reduce(const __grid_constant__ CUtensorMap map, int op, int c0, int c1,
                              const unsigned char *box, unsigned bytes) {
  __shared__ alignas(128) unsigned char s[BW * BH * 4];
  for (unsigned i = threadIdx.x; i < bytes; i += blockDim.x) s[i] = box[i];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    if (op == 0)
      asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                       &map),
                   "r"(c0), "r"(c1), "r"(smem(s))
                   : "memory");
    else
      asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.min.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                       &map),
                   "r"(c0), "r"(c1), "r"(smem(s))
                   : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}

enum { W = 40, H = 24 };

static int encode(CUtensorMap *m, CUtensorMapDataType ty, unsigned eb, void *g, cuuint32_t b0, cuuint32_t b1) {
  cuuint64_t dim[2] = {W, H}, stride[1] = {(cuuint64_t)W * eb};
  cuuint32_t box[2] = {b0, b1}, es[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(m, ty, 2, g, dim, stride, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    printf("cuTensorMapEncodeTiled: %d\n", (int)r);
    fails++;
    return 1;
  }
  return 0;
}

// kind: 0 add.s32, 1 min.u32, 2 add.f16
static int check_tensor_reduce(int kind, int c0, int c1) {
  static const CUtensorMapDataType types[3] = {CU_TENSOR_MAP_DATA_TYPE_INT32, CU_TENSOR_MAP_DATA_TYPE_UINT32,
                                               CU_TENSOR_MAP_DATA_TYPE_FLOAT16};
  unsigned eb = kind == 2 ? 2 : 4;
  static unsigned char t[W * H * 4], box[BW * BH * 4], got[W * H * 4];
  for (unsigned i = 0; i < W * H; i++) {
    uint32_t v = kind == 0 ? (uint32_t)((int)(rnd() % 2001) - 1000) : kind == 1 ? rnd() : f2h((float)(i % 97) / 4.0f);
    memcpy(t + i * eb, &v, eb);
  }
  for (unsigned i = 0; i < BW * BH; i++) {
    uint32_t v = kind == 0 ? (uint32_t)((int)(rnd() % 2001) - 1000) : kind == 1 ? rnd() : f2h((float)(i % 31) - 15.5f);
    memcpy(box + i * eb, &v, eb);
  }
  unsigned char *dt, *db;
  CK(cudaMalloc(&dt, sizeof t));
  CK(cudaMalloc(&db, sizeof box));
  CK(cudaMemcpy(dt, t, sizeof t, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, box, sizeof box, cudaMemcpyHostToDevice));
  alignas(64) CUtensorMap m;
  if (encode(&m, types[kind], eb, dt, BW, BH)) return 1;
  tensor_reduce<<<1, 128>>>(m, kind == 1, c0, c1, db, BW * BH * eb);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got, dt, sizeof got, cudaMemcpyDeviceToHost));
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      uint32_t a = 0, have = 0, want;
      memcpy(&a, t + (y * W + x) * eb, eb);
      memcpy(&have, got + (y * W + x) * eb, eb);
      want = a;
      int bx = x - c0, by = y - c1;
      if (bx >= 0 && bx < BW && by >= 0 && by < BH) {
        uint32_t b = 0;
        memcpy(&b, box + (by * BW + bx) * eb, eb);
        if (kind == 0) want = a + b;
        else if (kind == 1) want = a < b ? a : b;
        else want = f2h((float)((double)h2f((uint16_t)a) + (double)h2f((uint16_t)b)));
      }
      EXPECT(have == want, "tensor reduce %d at (%d,%d): (%d,%d) = %#x, want %#x", kind, c0, c1, x, y, have, want);
    }
  CK(cudaFree(dt));
  CK(cudaFree(db));
  return 0;
}

// ---- tensormap.replace ---------------------------------------------------------
// Thread 0 copies the map into shared memory and replaces its global
// address and its box's first dimension there; warp 0 copies it to global
// memory (`out`, 64-byte aligned) with tensormap.cp_fenceproxy's release
// fence, thread 0 acquires it; the tile load then goes through the changed
// map.
__global__ void replace_and_load(const __grid_constant__ CUtensorMap map, CUtensorMap *out, void *addr,
                                 uint32_t box0, uint32_t *res, unsigned bytes) {
  __shared__ alignas(128) CUtensorMap tm;
  __shared__ alignas(1024) uint32_t buf[BW * BH];
  __shared__ alignas(8) uint64_t bar;
  for (unsigned i = threadIdx.x; i < BW * BH; i += blockDim.x) buf[i] = 0xdeadbeefu;
  if (threadIdx.x == 0) {
    tm = map;
    asm volatile("tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%0], %1;" ::"r"(smem(&tm)),
                 "l"((uint64_t)addr)
                 : "memory");
    asm volatile("tensormap.replace.tile.box_dim.shared::cta.b1024.b32 [%0], 0, %1;" ::"r"(smem(&tm)), "r"(box0)
                 : "memory");
  }
  __syncwarp();
  // the whole warp (.sync.aligned) copies the map out with the release fence
  if (threadIdx.x < 32)
    asm volatile("tensormap.cp_fenceproxy.global.shared::cta.tensormap::generic.release.gpu.sync.aligned [%0], [%1], "
                 "128;" ::"l"(out),
                 "r"(smem(&tm))
                 : "memory");
  if (threadIdx.x == 0) {
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(out) : "memory");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&bar)));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&bar)), "r"(bytes) : "memory");
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
        ::"r"(smem(buf)), "l"(out), "r"(4), "r"(2), "r"(smem(&bar))
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
  for (unsigned i = threadIdx.x; i < BW * BH; i += blockDim.x) res[i] = buf[i];
}

static int check_replace(void) {
  static uint32_t a[W * H], b[W * H], got[BW * BH];
  for (unsigned i = 0; i < W * H; i++) a[i] = i, b[i] = 1000000u + i;
  uint32_t *da, *dbuf, *dres;
  CUtensorMap *dmap;
  CK(cudaMalloc(&da, sizeof a));
  CK(cudaMalloc(&dbuf, sizeof b));
  CK(cudaMalloc(&dres, sizeof got));
  CK(cudaMalloc(&dmap, sizeof(CUtensorMap)));
  CK(cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dbuf, b, sizeof b, cudaMemcpyHostToDevice));
  alignas(64) CUtensorMap m;
  if (encode(&m, CU_TENSOR_MAP_DATA_TYPE_UINT32, 4, da, BW, BH)) return 1;
  // the new box: 8 x 8 words at (4, 2) from b
  replace_and_load<<<1, 128>>>(m, dmap, dbuf, 8, dres, 8 * BH * 4);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(got, dres, sizeof got, cudaMemcpyDeviceToHost));
  for (int i = 0; i < BW * BH; i++) {
    uint32_t want = i < 8 * BH ? b[(2 + i / 8) * W + 4 + i % 8] : 0xdeadbeefu;
    EXPECT(got[i] == want, "tensormap.replace: word %d = %u, want %u", i, got[i], want);
  }
  CK(cudaFree(da));
  CK(cudaFree(dbuf));
  CK(cudaFree(dres));
  CK(cudaFree(dmap));
  return 0;
}

int main(void) {
  CK(cudaFree(0));
  if (check_bulk_reduce()) return 1;
  if (check_tensor_reduce(0, 30, -3)) return 1;   // over the right edge and above the top
  if (check_tensor_reduce(1, 4, 16)) return 1;    // past the bottom
  if (check_tensor_reduce(2, 8, 5)) return 1;     // in bounds
  if (check_replace()) return 1;
  printf(fails ? "bulkred: FAIL (%d)\n" : "bulkred: PASS\n", fails);
  return fails != 0;
}
