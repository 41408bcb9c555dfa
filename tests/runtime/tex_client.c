/* tests/runtime/tex_client.c: the driver API's arrays, 3D copies, texture
 * and surface objects on the emulator backend, with PTX text written here
 * (what cudart does not reach from tests/cuda/texture.cu):
 *   - a 2D layered float array (cuArray3DCreate, CUDA_ARRAY3D_LAYERED),
 *     filled by cuMemcpy3D from the host, read with tex.a2d (point,
 *     unnormalized): texel (x, y) of layer l, layers past the end clamp;
 *   - a 1D layered array read with tex.a1d;
 *   - cubemaps: cuArray3DCreate's shape rules (Width == Height, Depth 6 or
 *     a multiple of 6 when layered), CU_TRSF_SEAMLESS_CUBEMAP (point: made,
 *     linear: made, on a non-cubemap: INVALID_VALUE);
 *   - a 3D int array as a surface: sust.b.3d writes, cuMemcpy3D back to
 *     the host, cuMemcpyAtoH of one slice;
 *   - descriptors round-trip: cuArray3DGetDescriptor,
 *     cuTexObjectGetResourceDesc / GetTextureDesc, cuSurfObjectGetResourceDesc;
 *   - bad input: a resource view and an unknown handle are refused; a
 *     .texref use fails the launch of the kernel that uses it, not the load.
 * Expected values are the texels the host wrote (v = 100 l + 10 y + x). */
#include <cuda.h>

#include <stdio.h>
#include <string.h>

#include "client.h"

/* thread i reads coordinates c[4i..4i+3] (x, y, layer as s32/f32 bits) */
#define PRO                                                                                  \
  "  .reg .b32 %r<12>;\n  .reg .f32 %f<12>;\n  .reg .b64 %rd<8>;\n"                           \
  "  ld.param.u64 %rd1, [t];\n  ld.param.u64 %rd2, [c];\n  ld.param.u64 %rd3, [o];\n"        \
  "  mov.u32 %r0, %tid.x;\n  mul.wide.u32 %rd4, %r0, 16;\n"                                   \
  "  add.u64 %rd5, %rd2, %rd4;\n  add.u64 %rd6, %rd3, %rd4;\n"                                \
  "  ld.global.v4.b32 {%r4, %r5, %r6, %r7}, [%rd5];\n"                                        \
  "  mov.b32 %f4, %r4;\n  mov.b32 %f5, %r5;\n"

static const char mod[] = HEAD
    ".visible .entry la2d(.param .u64 t, .param .u64 c, .param .u64 o)\n{\n" PRO
    "  tex.a2d.v4.f32.f32 {%f0, %f1, %f2, %f3}, [%rd1, {%r6, %f4, %f5, %f5}];\n"
    "  st.global.v4.f32 [%rd6], {%f0, %f1, %f2, %f3};\n  ret;\n}\n"
    ".visible .entry la1d(.param .u64 t, .param .u64 c, .param .u64 o)\n{\n" PRO
    "  tex.a1d.v4.f32.f32 {%f0, %f1, %f2, %f3}, [%rd1, {%r6, %f4}];\n"
    "  st.global.v4.f32 [%rd6], {%f0, %f1, %f2, %f3};\n  ret;\n}\n"
    ".visible .entry s3d(.param .u64 t, .param .u64 c, .param .u64 o)\n{\n" PRO
    "  shl.b32 %r8, %r4, 2;\n  add.u32 %r9, %r4, 7;\n"
    "  sust.b.3d.b32.trap [%rd1, {%r8, %r5, %r6, %r6}], {%r9};\n  ret;\n}\n";

static const char mod_texref[] = HEAD ".global .texref tr;\n"
    ".visible .entry old(.param .u64 o)\n{\n  .reg .b32 %r<6>;\n  .reg .b64 %rd<2>;\n"
    "  mov.u32 %r5, 0;\n  tex.1d.v4.s32.s32 {%r1, %r2, %r3, %r4}, [tr, {%r5}];\n"
    "  ld.param.u64 %rd1, [o];\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";

enum { W = 5, H = 4, L = 3, N = 12 };

static int run(CUfunction f, CUtexObject t, const int *coords, float *out) {
  CUdeviceptr dc, dout;
  CK(cuMemAlloc(&dc, 16 * N));
  CK(cuMemAlloc(&dout, 16 * N));
  CK(cuMemcpyHtoD(dc, coords, 16 * N));
  void *args[] = {&t, &dc, &dout};
  CK(cuLaunchKernel(f, 1, 1, 1, N, 1, 1, 0, NULL, args, NULL));
  CK(cuCtxSynchronize());
  if (out) CK(cuMemcpyDtoH(out, dout, 16 * N));
  CK(cuMemFree(dc));
  CK(cuMemFree(dout));
  return 0;
}

int main(void) {
  CK(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuCtxCreate(&ctx, NULL, 0, dev));
  CUmodule m;
  CK(cuModuleLoadData(&m, mod));
  CUfunction la2d, la1d, s3d;
  CK(cuModuleGetFunction(&la2d, m, "la2d"));
  CK(cuModuleGetFunction(&la1d, m, "la1d"));
  CK(cuModuleGetFunction(&s3d, m, "s3d"));

  /* ---- a 2D layered float array ---- */
  float host[L][H][W];
  for (int l = 0; l < L; l++)
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) host[l][y][x] = (float)(100 * l + 10 * y + x);
  CUDA_ARRAY3D_DESCRIPTOR ad = {.Width = W, .Height = H, .Depth = L, .Format = CU_AD_FORMAT_FLOAT,
                                .NumChannels = 1, .Flags = CUDA_ARRAY3D_LAYERED};
  CUarray arr;
  CK(cuArray3DCreate(&arr, &ad));
  CUDA_ARRAY3D_DESCRIPTOR got;
  CK(cuArray3DGetDescriptor(&got, arr));
  EXPECT(got.Width == W && got.Height == H && got.Depth == L && got.Flags == CUDA_ARRAY3D_LAYERED);
  CUDA_MEMCPY3D cp = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = host, .srcPitch = W * 4, .srcHeight = H,
                      .dstMemoryType = CU_MEMORYTYPE_ARRAY, .dstArray = arr,
                      .WidthInBytes = W * 4, .Height = H, .Depth = L};
  CK(cuMemcpy3D(&cp));
  CUDA_RESOURCE_DESC rd = {.resType = CU_RESOURCE_TYPE_ARRAY};
  rd.res.array.hArray = arr;
  CUDA_TEXTURE_DESC td = {.addressMode = {CU_TR_ADDRESS_MODE_CLAMP, CU_TR_ADDRESS_MODE_CLAMP},
                          .filterMode = CU_TR_FILTER_MODE_POINT};
  CUtexObject t;
  CUDA_RESOURCE_VIEW_DESC view = {.format = CU_RES_VIEW_FORMAT_FLOAT_1X32, .width = W, .height = H};
  EXPECT(cuTexObjectCreate(&t, &rd, &td, &view) == CUDA_ERROR_NOT_SUPPORTED);
  CK(cuTexObjectCreate(&t, &rd, &td, NULL));
  CUDA_RESOURCE_DESC rd2;
  CUDA_TEXTURE_DESC td2;
  CK(cuTexObjectGetResourceDesc(&rd2, t));
  CK(cuTexObjectGetTextureDesc(&td2, t));
  EXPECT(rd2.resType == CU_RESOURCE_TYPE_ARRAY && rd2.res.array.hArray == arr);
  EXPECT(td2.filterMode == CU_TR_FILTER_MODE_POINT && td2.addressMode[1] == CU_TR_ADDRESS_MODE_CLAMP);
  EXPECT(cuTexObjectGetResourceDesc(&rd2, t + 16) == CUDA_ERROR_INVALID_VALUE);
  int coords[4 * N];
  float out[4 * N];
  for (int i = 0; i < N; i++) {
    float x = (float)(i % W) + 0.5f, y = (float)(i % H) + 0.5f;
    memcpy(&coords[4 * i], &x, 4);
    memcpy(&coords[4 * i + 1], &y, 4);
    coords[4 * i + 2] = i % (L + 2);   /* layers 3 and 4 clamp to 2 */
    coords[4 * i + 3] = 0;
  }
  if (run(la2d, t, coords, out)) return 1;
  for (int i = 0; i < N; i++) {
    int l = i % (L + 2) < L ? i % (L + 2) : L - 1;
    float want = host[l][i % H][i % W];
    if (out[4 * i] != want || out[4 * i + 1] != 0) {
      fprintf(stderr, "a2d sample %d: got %g want %g\n", i, out[4 * i], want);
      return 1;
    }
  }
  CK(cuTexObjectDestroy(t));
  EXPECT(cuTexObjectDestroy(t) == CUDA_ERROR_INVALID_VALUE);
  CK(cuArrayDestroy(arr));

  /* ---- cubemaps: cuda.h's shape rules, CU_TRSF_SEAMLESS_CUBEMAP ---- */
  {
    CUDA_ARRAY3D_DESCRIPTOR cd = {.Width = 4, .Height = 4, .Depth = 6, .Format = CU_AD_FORMAT_FLOAT,
                                  .NumChannels = 1, .Flags = CUDA_ARRAY3D_CUBEMAP};
    CUarray cube, no;
    CUDA_ARRAY3D_DESCRIPTOR bad = cd;
    bad.Height = 5;   /* Width must equal Height */
    EXPECT(cuArray3DCreate(&no, &bad) == CUDA_ERROR_INVALID_VALUE);
    bad = cd;
    bad.Depth = 12;   /* six faces, unless layered */
    EXPECT(cuArray3DCreate(&no, &bad) == CUDA_ERROR_INVALID_VALUE);
    bad.Flags |= CUDA_ARRAY3D_LAYERED;
    CK(cuArray3DCreate(&no, &bad));   /* two cubemaps */
    CK(cuArrayDestroy(no));
    bad.Depth = 9;   /* not a multiple of six */
    EXPECT(cuArray3DCreate(&no, &bad) == CUDA_ERROR_INVALID_VALUE);
    CK(cuArray3DCreate(&cube, &cd));
    CK(cuArray3DGetDescriptor(&got, cube));
    EXPECT(got.Flags == CUDA_ARRAY3D_CUBEMAP && got.Depth == 6);
    CUDA_RESOURCE_DESC cr = {.resType = CU_RESOURCE_TYPE_ARRAY};
    cr.res.array.hArray = cube;
    CUDA_TEXTURE_DESC st = {.filterMode = CU_TR_FILTER_MODE_POINT, .flags = CU_TRSF_SEAMLESS_CUBEMAP};
    CUtexObject ct;
    CK(cuTexObjectCreate(&ct, &cr, &st, NULL));   /* point: clamp */
    CK(cuTexObjectDestroy(ct));
    st.filterMode = CU_TR_FILTER_MODE_LINEAR;     /* across faces: tests/cuda/texcube_seamless.cu */
    CK(cuTexObjectCreate(&ct, &cr, &st, NULL));
    CK(cuTexObjectDestroy(ct));
    st.filterMode = CU_TR_FILTER_MODE_POINT;
    CUarray flat;
    CK(cuArray3DCreate(&flat, &ad));              /* the 2D layered shape: no cubemap */
    cr.res.array.hArray = flat;
    EXPECT(cuTexObjectCreate(&ct, &cr, &st, NULL) == CUDA_ERROR_INVALID_VALUE);
    CK(cuArrayDestroy(flat));
    CK(cuArrayDestroy(cube));
  }

  /* ---- a 1D layered array: layer l of width W ---- */
  CUDA_ARRAY3D_DESCRIPTOR ad1 = {.Width = W, .Height = 0, .Depth = L, .Format = CU_AD_FORMAT_FLOAT,
                                 .NumChannels = 1, .Flags = CUDA_ARRAY3D_LAYERED};
  CK(cuArray3DCreate(&arr, &ad1));
  CUDA_MEMCPY3D cp1 = {.srcMemoryType = CU_MEMORYTYPE_HOST, .srcHost = host[0][0], .srcPitch = W * 4 * H,
                       .srcHeight = 1, .dstMemoryType = CU_MEMORYTYPE_ARRAY, .dstArray = arr,
                       .WidthInBytes = W * 4, .Height = 1, .Depth = L};
  CK(cuMemcpy3D(&cp1));   /* layer l gets row 0 of host[l] */
  rd.res.array.hArray = arr;
  CK(cuTexObjectCreate(&t, &rd, &td, NULL));
  if (run(la1d, t, coords, out)) return 1;
  for (int i = 0; i < N; i++) {
    int l = i % (L + 2) < L ? i % (L + 2) : L - 1;
    if (out[4 * i] != host[l][0][i % W]) {
      fprintf(stderr, "a1d sample %d: got %g want %g\n", i, out[4 * i], host[l][0][i % W]);
      return 1;
    }
  }
  CK(cuTexObjectDestroy(t));
  CK(cuArrayDestroy(arr));

  /* ---- a 3D int array as a surface ---- */
  CUDA_ARRAY3D_DESCRIPTOR ad3 = {.Width = W, .Height = H, .Depth = L, .Format = CU_AD_FORMAT_SIGNED_INT32,
                                 .NumChannels = 1, .Flags = CUDA_ARRAY3D_SURFACE_LDST};
  CK(cuArray3DCreate(&arr, &ad3));
  int zero[L][H][W];
  memset(zero, 0, sizeof zero);
  CUDA_MEMCPY3D cz = cp;
  cz.srcHost = zero;
  cz.dstArray = arr;
  CK(cuMemcpy3D(&cz));
  rd.res.array.hArray = arr;
  CUsurfObject s;
  CK(cuSurfObjectCreate(&s, &rd));
  CK(cuSurfObjectGetResourceDesc(&rd2, s));
  EXPECT(rd2.res.array.hArray == arr);
  for (int i = 0; i < N; i++) {   /* (x, y, z) = (i % W, i % H, i % L) */
    coords[4 * i] = i % W;
    coords[4 * i + 1] = i % H;
    coords[4 * i + 2] = i % L;
  }
  if (run(s3d, s, coords, NULL)) return 1;
  int back[L][H][W];
  CUDA_MEMCPY3D cb = {.srcMemoryType = CU_MEMORYTYPE_ARRAY, .srcArray = arr,
                      .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = back, .dstPitch = W * 4, .dstHeight = H,
                      .WidthInBytes = W * 4, .Height = H, .Depth = L};
  CK(cuMemcpy3D(&cb));
  int want[L][H][W];
  memset(want, 0, sizeof want);
  for (int i = 0; i < N; i++) want[i % L][i % H][i % W] = i % W + 7;
  EXPECT(memcmp(back, want, sizeof back) == 0);
  int slice[H][W];
  CK(cuMemcpyAtoH(slice, arr, sizeof slice, sizeof slice));   /* slice 1 */
  EXPECT(memcmp(slice, want[1], sizeof slice) == 0);
  CK(cuSurfObjectDestroy(s));
  CK(cuArrayDestroy(arr));

  /* ---- a texture reference fails the kernel that uses it: the module
   * loads (per-kernel failure, docs/runtime.md), its launch is refused ---- */
  CUmodule old_m;
  CUfunction old_k;
  CK(cuModuleLoadData(&old_m, mod_texref));
  CK(cuModuleGetFunction(&old_k, old_m, "old"));
  CUdeviceptr o;
  CK(cuMemAlloc(&o, 16));
  void *op[] = {&o};
  EXPECT(cuLaunchKernel(old_k, 1, 1, 1, 1, 1, 1, 0, NULL, op, NULL) == CUDA_ERROR_NOT_SUPPORTED);
  CK(cuMemFree(o));
  CK(cuModuleUnload(old_m));
  CK(cuModuleUnload(m));
  CK(cuCtxDestroy(ctx));
  printf("tex_client: ok\n");
  return 0;
}
