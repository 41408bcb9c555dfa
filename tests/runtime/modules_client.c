/* tests/runtime/modules_client.c: the driver API on the emulator backend
 * with PTX text written here: two modules at once, a module global read and
 * written through cuModuleGetGlobal, launches with kernelParams and with
 * CU_LAUNCH_PARAM_BUFFER_POINTER, and bad input (an instruction the front
 * end does not know; PTX that does not parse; a missing kernel), which must
 * fail with the right CUresult and leave the program running.  A module
 * with an unknown instruction loads: only the launch of the kernel that
 * uses it fails (CUDA_ERROR_NOT_SUPPORTED), its other kernel runs
 * (docs/runtime.md "Per-kernel failure"); the same for a texture form
 * lower_tex refuses.
 * Expected values are computed here: x -> (x + 1) * g. */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

#include "client.h"

#define INDEX                                                                       \
  "  .reg .pred %p<2>;\n  .reg .b32 %r<8>;\n  .reg .b64 %rd<4>;\n"                    \
  "  ld.param.u64 %rd1, [p];\n  ld.param.u32 %r1, [n];\n"                             \
  "  mov.u32 %r2, %ctaid.x;\n  mov.u32 %r3, %ntid.x;\n  mov.u32 %r4, %tid.x;\n"       \
  "  mad.lo.s32 %r5, %r2, %r3, %r4;\n  setp.ge.u32 %p1, %r5, %r1;\n  @%p1 bra DONE;\n" \
  "  cvta.to.global.u64 %rd2, %rd1;\n  mul.wide.u32 %rd3, %r5, 4;\n"                  \
  "  add.s64 %rd2, %rd2, %rd3;\n  ld.global.u32 %r6, [%rd2];\n"

static const char mod_a[] = HEAD
    ".visible .entry add1(.param .u64 p, .param .u32 n)\n{\n" INDEX
    "  add.u32 %r6, %r6, 1;\n  st.global.u32 [%rd2], %r6;\nDONE:\n  ret;\n}\n";

static const char mod_b[] = HEAD
    ".visible .global .align 4 .u32 g = 5;\n"
    ".visible .entry mulg(.param .u64 p, .param .u32 n)\n{\n" INDEX
    "  ld.global.u32 %r7, [g];\n  mul.lo.u32 %r6, %r6, %r7;\n  st.global.u32 [%rd2], %r6;\n"
    "DONE:\n  ret;\n}\n";

static const char mod_unknown[] = HEAD
    ".visible .entry weird(.param .u64 p)\n{\n  .reg .b32 %r<3>;\n"
    "  frobnicate.b32 %r1, %r2;\n  ret;\n}\n"
    ".visible .entry fine(.param .u64 p)\n{\n  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  st.global.u32 [%rd2], 77;\n  ret;\n}\n";

/* a texture form lower_tex refuses (a texel offset; ptxas 13 accepts it) in
 * one kernel: the module loads, that kernel's launch fails, the other runs */
static const char mod_texgap[] = HEAD
    ".visible .entry texgap(.param .u64 p, .param .u64 t)\n{\n  .reg .b64 %rd<4>;\n  .reg .f32 %f<8>;\n"
    "  ld.param.u64 %rd1, [p];\n  ld.param.u64 %rd2, [t];\n  mov.f32 %f1, 0f3F000000;\n"
    "  tex.2d.v4.f32.f32 {%f2, %f3, %f4, %f5}, [%rd2, {%f1, %f1}], {1, 1};\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n  st.global.f32 [%rd3], %f2;\n  ret;\n}\n"
    ".visible .entry fine2(.param .u64 p)\n{\n  .reg .b64 %rd<3>;\n"
    "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
    "  st.global.u32 [%rd2], 78;\n  ret;\n}\n";

static const char mod_broken[] = HEAD ".visible .entry broken(\n{\n  ret\n";

int main(void) {
  CK(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuCtxCreate(&ctx, NULL, 0, dev));
  CUmodule a, b, bad;
  CUfunction add1, mulg, f;
  CK(cuModuleLoadData(&a, mod_a));
  CK(cuModuleLoadData(&b, mod_b));
  CK(cuModuleGetFunction(&add1, a, "add1"));
  CK(cuModuleGetFunction(&mulg, b, "mulg"));
  WANT(cuModuleGetFunction(&f, a, "mulg"), CUDA_ERROR_NOT_FOUND);
  CUdeviceptr g;
  size_t gsize = 0;
  unsigned gv = 0;
  CK(cuModuleGetGlobal(&g, &gsize, b, "g"));
  CK(cuMemcpyDtoH(&gv, g, 4));
  if (gsize != 4 || gv != 5) {
    fprintf(stderr, "global g: size %zu value %u, want 4 and 5\n", gsize, gv);
    return 1;
  }
  gv = 3;
  CK(cuMemcpyHtoD(g, &gv, 4));

  enum { N = 1000 };
  unsigned h[N], out[N];
  for (unsigned i = 0; i < N; i++) h[i] = i * 2654435761u;
  CUdeviceptr d;
  CK(cuMemAlloc(&d, sizeof h));
  CK(cuMemcpyHtoD(d, h, sizeof h));
  unsigned n = N;
  void *params[] = {&d, &n};
  CK(cuLaunchKernel(add1, (N + 127) / 128, 1, 1, 128, 1, 1, 0, NULL, params, NULL));
  struct { CUdeviceptr p; unsigned n; } buf = {d, N};   /* .param layout: 8 + 4 */
  size_t size = 12;
  void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                   CU_LAUNCH_PARAM_END};
  CK(cuLaunchKernel(mulg, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(out, d, sizeof out));
  for (unsigned i = 0; i < N; i++)
    if (out[i] != (h[i] + 1) * 3) {
      fprintf(stderr, "element %u: %u, want %u\n", i, out[i], (h[i] + 1) * 3);
      return 1;
    }
  /* a parameter buffer shorter than the parameters, as NCCL passes one
   * (its 4 KiB argument struct, only the bytes it filled): CUDA takes it,
   * and the missing bytes read as zeros here, so n = 0 and nothing is
   * written; no parameters at all is an error */
  size = 8;
  CK(cuLaunchKernel(mulg, (N + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, NULL, extra));
  CK(cuCtxSynchronize());
  CK(cuMemcpyDtoH(out, d, sizeof out));
  for (unsigned i = 0; i < N; i++)
    if (out[i] != (h[i] + 1) * 3) {
      fprintf(stderr, "short buffer: element %u: %u, want %u (n read as 0)\n", i, out[i], (h[i] + 1) * 3);
      return 1;
    }
  WANT(cuLaunchKernel(mulg, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  WANT(cuLaunchKernel(mulg, 1, 1, 1, 2048, 1, 1, 0, NULL, params, NULL), CUDA_ERROR_INVALID_VALUE);

  /* an unknown instruction fails the launch of its kernel only */
  CUmodule unk;
  CUfunction weird, fine;
  CK(cuModuleLoadData(&unk, mod_unknown));
  CK(cuModuleGetFunction(&weird, unk, "weird"));
  CK(cuModuleGetFunction(&fine, unk, "fine"));
  void *p1[] = {&d};
  WANT(cuLaunchKernel(weird, 1, 1, 1, 32, 1, 1, 0, NULL, p1, NULL), CUDA_ERROR_NOT_SUPPORTED);
  CK(cuLaunchKernel(fine, 1, 1, 1, 1, 1, 1, 0, NULL, p1, NULL));
  CK(cuMemcpyDtoH(out, d, 4));
  if (out[0] != 77) {
    fprintf(stderr, "kernel fine: %u, want 77\n", out[0]);
    return 1;
  }
  CK(cuModuleUnload(unk));

  /* so does a texture instruction lower_tex refuses */
  CUmodule texm;
  CUfunction texgap, fine2;
  CK(cuModuleLoadData(&texm, mod_texgap));
  CK(cuModuleGetFunction(&texgap, texm, "texgap"));
  CK(cuModuleGetFunction(&fine2, texm, "fine2"));
  unsigned long long tex0 = 0;
  void *p2[] = {&d, &tex0};
  WANT(cuLaunchKernel(texgap, 1, 1, 1, 32, 1, 1, 0, NULL, p2, NULL), CUDA_ERROR_NOT_SUPPORTED);
  CK(cuLaunchKernel(fine2, 1, 1, 1, 1, 1, 1, 0, NULL, p1, NULL));
  CK(cuMemcpyDtoH(out, d, 4));
  if (out[0] != 78) {
    fprintf(stderr, "kernel fine2: %u, want 78\n", out[0]);
    return 1;
  }
  CK(cuModuleUnload(texm));

  /* bad input fails its load and the program goes on */
  WANT(cuModuleLoadData(&bad, mod_broken), CUDA_ERROR_INVALID_PTX);

  /* no stream ever captures (cuBLAS asks before every dot and nrm2) */
  CUstream st;
  CK(cuStreamCreate(&st, 0));
  CUstream streams[] = {NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD, st};
  for (int i = 0; i < 4; i++) {
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    cuuint64_t id = 7;
    CUgraph g = (CUgraph)&cs;
    size_t ndeps = 3;
    CK(cuStreamGetCaptureInfo(streams[i], &cs, &id, &g, NULL, NULL, &ndeps));
    /* CUDA defines the other outputs only while a capture is active */
    EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
    cs = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    CK(cuStreamIsCapturing(streams[i], &cs));
    EXPECT(cs == CU_STREAM_CAPTURE_STATUS_NONE);
  }
  WANT(cuStreamGetCaptureInfo(st, NULL, NULL, NULL, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
  CK(cuStreamDestroy(st));

  /* memory pools: bookkeeping over ordinary allocations (rt_pool.c) */
  CUmemPoolProps pp;
  memset(&pp, 0, sizeof pp);
  pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  pp.location.id = 0;
  CUmemoryPool pool, dflt, cur;
  CK(cuMemPoolCreate(&pool, &pp));
  CUdeviceptr pa, pb;
  CK(cuMemAllocFromPoolAsync(&pa, 1000, pool, NULL));
  CK(cuMemAllocFromPoolAsync(&pb, 24, pool, NULL));
  CK(cuMemsetD8(pa, 7, 1000));
  cuuint64_t used = 0, high = 0;
  CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT(used == 1024);
  CK(cuMemFreeAsync(pa, NULL));
  CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high));
  EXPECT(used == 24 && high == 1024);
  cuuint64_t zero = 0, thr = 1 << 20, got = 0;
  CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero));
  CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &high));
  EXPECT(high == 24);
  CK(cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &thr));
  CK(cuMemPoolGetAttribute(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &got));
  EXPECT(got == thr);
  CK(cuDeviceGetDefaultMemPool(&dflt, 0));
  CK(cuDeviceGetMemPool(&cur, 0));
  EXPECT(cur == dflt && dflt != pool);
  CK(cuMemAllocAsync(&pa, 64, NULL));
  CK(cuMemPoolGetAttribute(dflt, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, &used));
  EXPECT(used == 64);
  CK(cuMemFreeAsync(pa, NULL));
  WANT(cuMemPoolDestroy(dflt), CUDA_ERROR_INVALID_VALUE);
  /* CUDA: a pool destroyed with allocations outstanding goes when they do;
   * they stay valid and are the application's to free */
  CK(cuMemPoolDestroy(pool));
  CK(cuMemsetD8(pb, 1, 24));
  CK(cuMemFreeAsync(pb, NULL));
  pp.location.type = CU_MEM_LOCATION_TYPE_HOST;
  WANT(cuMemPoolCreate(&pool, &pp), CUDA_ERROR_NOT_SUPPORTED);

  CK(cuMemFree(d));
  CK(cuModuleUnload(a));
  CK(cuModuleUnload(b));
  CK(cuCtxDestroy(ctx));
  puts("modules_client: ok");
  return 0;
}
