/* tests/runtime/cubin.h: a minimal SASS-only image for the test clients
 * (lazy_client.c, tests/forward/fake_blas.c): its kernel loads and every
 * launch of it is refused (CUDA_ERROR_NO_BINARY_FOR_GPU). */
#ifndef PW_TEST_CUBIN_H
#define PW_TEST_CUBIN_H

#include <stdint.h>
#include <string.h>

static inline void cubin_put(uint8_t *p, uint64_t v, int n) { memcpy(p, &v, (size_t)n); }

/* An SASS cubin defining one kernel, `sass_k`: an ELF64 for EM_CUDA with
 * .strtab and .symtab, the symbol STT_FUNC with STO_CUDA_ENTRY (0x10).
 * b holds 448 bytes; returns the size. */
static inline size_t make_cubin(uint8_t *b) {
  static const char strtab[] = "\0sass_k";
  memset(b, 0, 448);
  memcpy(b, "\177ELF", 4);
  b[4] = 2;
  b[5] = 1;
  cubin_put(b + 18, 190, 2);
  cubin_put(b + 40, 256, 8);
  cubin_put(b + 58, 64, 2);
  cubin_put(b + 60, 3, 2);
  memcpy(b + 64, strtab, sizeof strtab);
  uint8_t *y = b + 128 + 24;
  cubin_put(y, 1, 4);
  y[4] = 0x12;   /* STB_GLOBAL, STT_FUNC */
  y[5] = 0x10;   /* STO_CUDA_ENTRY */
  uint8_t *s1 = b + 256 + 64, *s2 = b + 256 + 128;
  cubin_put(s1 + 4, 3, 4);
  cubin_put(s1 + 24, 64, 8);
  cubin_put(s1 + 32, sizeof strtab, 8);
  cubin_put(s2 + 4, 2, 4);
  cubin_put(s2 + 24, 128, 8);
  cubin_put(s2 + 32, 48, 8);
  cubin_put(s2 + 40, 1, 4);
  cubin_put(s2 + 56, 24, 8);
  return 448;
}

#endif
