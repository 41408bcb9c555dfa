/* runtime/rt_printf.h: the host side of device printf and assert on a
 * backend that runs lowered code (docs/runtime.md, "Device printf").
 *
 * lower/lower_printf.c makes each vprintf and __assertfail call leave a
 * record in one device buffer per context (layout: util/pw_printf.h).  At
 * every synchronising call the backend drains it: rt_printf_drain reads the
 * records back through the backend's memory callbacks, formats each like
 * CUDA (util/pw_printf.c: the format string and the %s strings are read
 * from device memory too), writes them in the order they were reserved,
 * and empties the buffer.
 *
 * No backend types here: the callbacks are all it needs, so tests drive it
 * with the emulator's memory (tests/lower) and the recording HIP stand-in
 * (tests/runtime/fake_hip.c).
 */
#ifndef PW_RT_PRINTF_H
#define PW_RT_PRINTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Device memory as the drain sees it.  read: n bytes at device address
 * addr (false when it cannot be read, e.g. past the end of an allocation);
 * write: n bytes to addr. */
typedef struct rt_printf_mem {
  bool (*read)(void *ctx, uint64_t addr, void *dst, size_t n);
  bool (*write)(void *ctx, uint64_t addr, const void *src, size_t n);
  void *ctx;
} rt_printf_mem;

typedef struct rt_printf_result {
  unsigned records;        /* printf records formatted */
  unsigned asserts;        /* assert records (the launch failed: CUDA_ERROR_ASSERT) */
  uint64_t dropped_bytes;  /* reserved past the capacity: records lost */
  char first_assert[512];  /* the first assert's message, without its newline */
} rt_printf_result;

/* Drains the buffer at `buffer` whose record area holds `capacity` bytes:
 * printf records go to out, assert messages to err (both flushed), then
 * the used bytes are zeroed and the write offset reset.  False when the
 * buffer cannot be read or written (the message is in *res->first_assert
 * left empty; nothing is printed). */
bool rt_printf_drain(const rt_printf_mem *mem, uint64_t buffer, uint32_t capacity, FILE *out, FILE *err,
                     rt_printf_result *res);

/* The default capacity of a context's buffer (PTXWAVE_PRINTF_BUFFER bytes
 * overrides it, as cudaLimitPrintfFifoSize would). */
uint32_t rt_printf_capacity(void);

#endif
