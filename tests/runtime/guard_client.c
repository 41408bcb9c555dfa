/* tests/runtime/guard_client.c: module loading reads nothing past the image.
 *
 * Each image is placed so that its last byte is the last byte of a page
 * whose next page is PROT_NONE: one read past the end is a SIGSEGV, which
 * fails the test.  cuModuleLoadData has no size argument, so the image's
 * size is what it says of itself: a NUL-terminated text ends at its NUL,
 * a fatbin container at its 16-byte header plus the bytes it states.
 *   - texts shorter than a magic number ("ab", and texts starting like a
 *     fatbin container, a fatbin wrapper, an ELF file): the parse error
 *     CUDA_ERROR_INVALID_PTX, after reading at most to the NUL;
 *   - a container header stating a 65535-byte header and no payload:
 *     CUDA_ERROR_INVALID_IMAGE without reading the 64 KiB (only version 1
 *     with a 16-byte header is a layout, as ptx/fatbin.c has it);
 *   - a container of a header and nothing else: refused, not read past;
 *   - a valid PTX module whose NUL is the page's last byte: it loads.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client.h"

static uint8_t *guard;   /* the first byte of the PROT_NONE page */

static const void *at_end(const void *img, size_t n) {
  uint8_t *p = guard - n;
  memcpy(p, img, n);
  return p;
}

static const char ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry k(.param .u64 p)\n{\n  ret;\n}\n";

int main(void) {
  long pg = sysconf(_SC_PAGESIZE);
  uint8_t *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  EXPECT(m != MAP_FAILED);
  EXPECT(mprotect(m + pg, (size_t)pg, PROT_NONE) == 0);
  guard = m + pg;
  CK(cuInit(0));
  CUdevice dev;
  CUcontext ctx;
  CK(cuDeviceGet(&dev, 0));
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;

  WANT(cuModuleLoadData(&mod, at_end("ab", 3)), CUDA_ERROR_INVALID_PTX);
  WANT(cuModuleLoadData(&mod, at_end("", 1)), CUDA_ERROR_INVALID_PTX);
  WANT(cuModuleLoadData(&mod, at_end("\x50\xed", 3)), CUDA_ERROR_INVALID_PTX);
  WANT(cuModuleLoadData(&mod, at_end("\x50\xed\x55", 4)), CUDA_ERROR_INVALID_PTX);
  WANT(cuModuleLoadData(&mod, at_end("\xb1\x43\x62", 4)), CUDA_ERROR_INVALID_PTX);
  WANT(cuModuleLoadData(&mod, at_end("\x7f" "EL", 4)), CUDA_ERROR_INVALID_PTX);

  /* container: magic, version 1, header size 0xffff, 0 bytes */
  const uint8_t big[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 0xff, 0xff};
  WANT(cuModuleLoadData(&mod, at_end(big, sizeof big)), CUDA_ERROR_INVALID_IMAGE);
  /* the same through cuModuleLoadFatBinary */
  WANT(cuModuleLoadFatBinary(&mod, at_end(big, sizeof big)), CUDA_ERROR_INVALID_IMAGE);
  /* a well-formed header with nothing after it: a fatbin without entries
   * loads (lazily, as CUDA's does: some of cuBLAS's hold no kernels) and has
   * no functions; nothing past the header is read, at load or at lookup */
  const uint8_t empty[16] = {0x50, 0xed, 0x55, 0xba, 1, 0, 16, 0};
  CK(cuModuleLoadData(&mod, at_end(empty, sizeof empty)));
  CUfunction none;
  WANT(cuModuleGetFunction(&none, mod, "k"), CUDA_ERROR_NOT_FOUND);
  CK(cuModuleUnload(mod));

  CK(cuModuleLoadData(&mod, at_end(ptx, sizeof ptx)));
  CUfunction f;
  CK(cuModuleGetFunction(&f, mod, "k"));
  CK(cuModuleUnload(mod));
  puts("guard_client: ok");
  return 0;
}
