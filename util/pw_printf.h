/* util/pw_printf.h: CUDA device printf, the one parser and formatter that
 * every layer shares (docs/runtime.md, "Device printf").
 *
 * vprintf(fmt, args) (PTX ISA 9.1, "System calls", vprintf): args points
 * at a buffer holding the arguments packed in order, each at the next
 * offset aligned to its own size.  Which arguments there are follows from
 * the format alone: %d %i %u %x %X %o %c take a 32-bit integer, or 64 bits
 * with the length modifier l, ll, j, z, t (C's default promotions make
 * char and short arguments ints); every floating-point conversion takes a
 * double (float arguments are promoted); %s and %p take a 64-bit generic
 * address.
 *
 * Three users, one table of facts:
 *   - lower/lower_printf.c parses a constant format at compile time to
 *     learn the size of the argument buffer it copies into a record and
 *     the number of arguments vprintf returns;
 *   - emu/emu_printf.c formats a lane's call when the emulator runs
 *     unlowered PTX (vprintf implemented natively);
 *   - runtime/rt_printf.c formats the records the lowered code left in the
 *     device printf buffer.
 * The formatter reads the arguments and the strings that %s names through
 * callbacks, so it does not care where they live (a lane's local memory,
 * a record copied to the host, a device reached through HIP).
 */
#ifndef PW_UTIL_PRINTF_H
#define PW_UTIL_PRINTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One piece of a format string. */
typedef enum pw_printf_kind {
  PW_PRINTF_END,       /* end of the format */
  PW_PRINTF_TEXT,      /* literal text (len bytes at text) */
  PW_PRINTF_PERCENT,   /* %% */
  PW_PRINTF_INT,       /* d i u x X o c: arg_size 4 or 8 */
  PW_PRINTF_FLOAT,     /* f F e E g G a A: a double */
  PW_PRINTF_STRING,    /* s: a 64-bit generic address */
  PW_PRINTF_POINTER,   /* p: a 64-bit address */
  PW_PRINTF_UNKNOWN,   /* an unknown conversion: printed as written, takes no argument */
} pw_printf_kind;

typedef struct pw_printf_piece {
  pw_printf_kind kind;
  const char *text;    /* where the piece starts in the format */
  size_t len;          /* its length in the format */
  char conv;           /* the conversion character */
  int8_t length;       /* 0 int, 1 l, 2 ll (and j z t L q), -1 h, -2 hh */
  unsigned arg_size;   /* bytes it takes from the argument buffer (0: none) */
  char spec[64];       /* "%-10.3" (flags, width, precision; no length, no conversion) */
} pw_printf_piece;

/* Parses the piece at *s and advances *s past it. */
pw_printf_piece pw_printf_next(const char **s);

/* The layout of the argument buffer of a format: its size in bytes (each
 * argument aligned to its size) and the number of arguments. */
void pw_printf_layout(const char *fmt, uint64_t *args_bytes, unsigned *nargs);

/* Where the formatter reads from.  arg: `size` bytes (4 or 8) at byte
 * offset `off` of the argument buffer.  str: the NUL-terminated string at
 * generic address addr, at most cap-1 bytes of it, NUL-terminated in buf.
 * Either returns false when the memory cannot be read. */
typedef struct pw_printf_io {
  bool (*arg)(void *ctx, uint64_t off, unsigned size, uint64_t *out);
  bool (*str)(void *ctx, uint64_t addr, char *buf, size_t cap);
  void *ctx;
} pw_printf_io;

/* Formats fmt like CUDA's printf and appends the text to *out (malloc'd,
 * NUL-terminated; *len its length).  Returns the number of arguments, or
 * -1 when an argument or a string cannot be read (the text so far is kept). */
int pw_printf_format(const char *fmt, const pw_printf_io *io, char **out, size_t *len);

/* ---- the device printf buffer (lower/lower_printf.c writes records,
 * runtime/rt_printf.c reads them) ------------------------------------------
 * Each lowered module has a variable PW_PRINTF_VAR in .global: {u64 buffer;
 * u32 capacity; u32 dropped}, zero until the runtime writes the address
 * and capacity of its buffer into it after loading the module.  The buffer
 * (one per context) is a header {u32 offset; u32 0; u64 0} followed by
 * `capacity` bytes of records; a kernel reserves a record with one atomic
 * add on offset, so offset may pass capacity (the records that did not
 * fit were dropped and counted in the variable's `dropped`).  A record
 * starts {u32 size (a multiple of 8); u32 kind; u64 format}; zero bytes
 * after the last record end the list. */
#define PW_PRINTF_VAR "__ptxwave_printf"
enum {
  PW_PRINTF_VAR_BUFFER = 0, PW_PRINTF_VAR_CAPACITY = 8, PW_PRINTF_VAR_DROPPED = 12, PW_PRINTF_VAR_BYTES = 16,
  PW_PRINTF_BUF_OFFSET = 0, PW_PRINTF_BUF_HEADER = 16,
  PW_PRINTF_REC_SIZE = 0, PW_PRINTF_REC_KIND = 4, PW_PRINTF_REC_FORMAT = 8, PW_PRINTF_REC_ARGS = 16,
  PW_PRINTF_REC_MAX = 4096,          /* largest record: 4080 bytes of arguments */
  /* kinds (never 0: zeroed memory is no record) */
  PW_PRINTF_KIND_PRINTF = 1,         /* vprintf: the argument bytes follow at REC_ARGS */
  PW_PRINTF_KIND_ASSERT = 2,         /* __assertfail: the fields below */
  PW_ASSERT_REC_MSG = 8, PW_ASSERT_REC_FILE = 16, PW_ASSERT_REC_FUNC = 24, PW_ASSERT_REC_LINE = 32,
  PW_ASSERT_REC_CTAID = 36,          /* u32 x, y, z */
  PW_ASSERT_REC_TID = 48,            /* u32 x, y, z */
  PW_ASSERT_REC_BYTES = 64,
};

/* CUDA's message for a failed device assert: file, line, function,
 * block x y z, thread x y z, message. */
#define PW_ASSERT_FORMAT "%s:%u: %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n"

#endif
