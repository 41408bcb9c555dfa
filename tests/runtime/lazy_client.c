/* tests/runtime/lazy_client.c: the loading model (docs/runtime.md
 * "Loading"), on fatbin containers built here byte by byte from the layout
 * of ptx/fatbin.c:
 *
 *   - cuModuleGetLoadingMode answers LAZY;
 *   - a fatbin whose only PTX is for a newer SM (compute_90 beside an sm_80
 *     cubin) loads at the reported capability and runs its PTX kernel; its
 *     function attributes PTX_VERSION and BINARY_VERSION are 90, the
 *     module's, whatever the device reports;
 *   - a kernel only the cubin defines is found, and each of its launches
 *     fails with CUDA_ERROR_NO_BINARY_FOR_GPU (the log line, once, is
 *     checked by test_lazy.py); a name no image defines is NOT_FOUND;
 *   - a fatbin with cubins only loads (it used to fail the load), and so
 *     does a cubin given as the image; both list the cubin's kernel;
 *   - a fatbin whose PTX does not parse loads (nothing is parsed at load)
 *     and the lookup fails with CUDA_ERROR_INVALID_PTX.
 * Prints "lazy_client: ok".
 */
#include <stdint.h>
#include <string.h>

#include "client.h"
#include "cubin.h"

static _Alignas(16) uint8_t fat_mixed[4096], fat_sass[4096], fat_bad[4096];

static void put(uint8_t *p, uint64_t v, int n) { memcpy(p, &v, (size_t)n); }

/* Appends an uncompressed entry (kind 1 PTX, 2 cubin) at `at`. */
static size_t entry(uint8_t *c, size_t at, uint16_t kind, uint32_t arch, const void *p, size_t n) {
  size_t psz = (n + 7) & ~(size_t)7;
  uint8_t *h = c + at;
  put(h, kind, 2);
  put(h + 2, 0x0101, 2);
  put(h + 4, 0x40, 4);
  put(h + 8, psz, 8);
  put(h + 0x18, kind == 1 ? 0 : 8, 2);  /* version minor: PTX ISA 8.0, cubin ABI 1.8 */
  put(h + 0x1A, kind == 1 ? 8 : 1, 2);
  put(h + 0x1C, arch, 4);
  put(h + 0x28, 0x11, 8);               /* 64-bit, Linux */
  memcpy(h + 0x40, p, n);
  return at + 0x40 + psz;
}

static void header(uint8_t *c, size_t end) {
  put(c, 0xBA55ED50u, 4);
  put(c + 4, 1, 2);
  put(c + 6, 16, 2);
  put(c + 8, end - 16, 8);
}

static const char ptx90[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry ptx_k(.param .u64 p) {\n"
    "  .reg .b64 %rd<2>;\n  .reg .b32 %r<2>;\n"
    "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd1, %rd1;\n"
    "  mov.u32 %r1, 42;\n  st.global.u32 [%rd1], %r1;\n  ret;\n}\n";
/* PTX that does not parse (an unknown instruction would parse and fail
 * only the launches of the kernels reaching it: docs/runtime.md
 * "Per-kernel failure") */
static const char ptx_bad[] = HEAD ".visible .entry bad_k( {\n  ret;\n}\n";

int main(void) {
  uint8_t cubin[448];
  size_t cn = make_cubin(cubin);
  size_t e = entry(fat_mixed, 16, 2, 80, cubin, cn);
  e = entry(fat_mixed, e, 1, 90, ptx90, sizeof ptx90 - 1);
  header(fat_mixed, e);
  header(fat_sass, entry(fat_sass, 16, 2, 80, cubin, cn));
  e = entry(fat_bad, 16, 2, 80, cubin, cn);
  header(fat_bad, entry(fat_bad, e, 1, 80, ptx_bad, sizeof ptx_bad - 1));

  CK(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmoduleLoadingMode mode;
  CK(cuModuleGetLoadingMode(&mode));
  EXPECT(mode == CU_MODULE_LAZY_LOADING);

  /* PTX for a newer SM than the reported one, beside a cubin */
  int major = 0;
  CK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  CUmodule m;
  CK(cuModuleLoadData(&m, fat_mixed));
  CUfunction k, s;
  CK(cuModuleGetFunction(&k, m, "ptx_k"));
  CUdeviceptr d;
  CK(cuMemAlloc(&d, 4));
  CK(cuMemsetD32(d, 0, 1));
  void *args[] = {&d};
  CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
  uint32_t v = 0;
  CK(cuMemcpyDtoH(&v, d, 4));
  EXPECT(v == 42);
  int pv = 0, bv = 0;
  CK(cuFuncGetAttribute(&pv, CU_FUNC_ATTRIBUTE_PTX_VERSION, k));
  CK(cuFuncGetAttribute(&bv, CU_FUNC_ATTRIBUTE_BINARY_VERSION, k));
  EXPECT(pv == 90 && bv == 90);
  /* the cubin's kernel: found, every launch refused */
  CK(cuModuleGetFunction(&s, m, "sass_k"));
  WANT(cuLaunchKernel(s, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
  WANT(cuLaunchKernel(s, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
  WANT(cuModuleGetFunction(&s, m, "nowhere"), CUDA_ERROR_NOT_FOUND);
  /* the module's other kernels still run */
  CK(cuLaunchKernel(k, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL));
  /* listing: the PTX's kernels */
  unsigned nf = 0;
  CK(cuModuleGetFunctionCount(&nf, m));
  EXPECT(nf == 1);
  CUfunction fl[2] = {0};
  CK(cuModuleEnumerateFunctions(fl, 2, m));
  EXPECT(fl[0] == k);
  CK(cuModuleUnload(m));

  /* a cubin as the image: loads, lists its kernel, launches fail */
  CK(cuModuleLoadData(&m, cubin));
  CK(cuModuleGetFunctionCount(&nf, m));
  EXPECT(nf == 1);
  CK(cuModuleGetFunction(&s, m, "sass_k"));
  WANT(cuLaunchKernel(s, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
  CK(cuModuleUnload(m));

  /* cubins only: loads; its kernel is SASS only */
  CK(cuModuleLoadData(&m, fat_sass));
  CK(cuModuleGetFunction(&s, m, "sass_k"));
  WANT(cuLaunchKernel(s, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_NO_BINARY_FOR_GPU);
  WANT(cuModuleGetFunction(&k, m, "ptx_k"), CUDA_ERROR_NOT_FOUND);
  CK(cuModuleUnload(m));

  /* PTX that does not parse: the load does not look at it */
  CUlibrary lib;
  CK(cuLibraryLoadData(&lib, fat_bad, NULL, NULL, 0, NULL, NULL, 0));
  CUkernel bk;
  WANT(cuLibraryGetKernel(&bk, lib, "bad_k"), CUDA_ERROR_INVALID_PTX);
  WANT(cuLibraryGetKernel(&bk, lib, "bad_k"), CUDA_ERROR_INVALID_PTX);
  CK(cuLibraryUnload(lib));
  CK(cuMemFree(d));
  printf("lazy_client: ok (compute capability %d reported)\n", major);
  return 0;
}
