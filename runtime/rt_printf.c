/* runtime/rt_printf.c: see rt_printf.h.
 *
 * Draining: read the header (the write offset), then min(offset,
 * capacity) bytes of records, walk them (each starts with its size, a
 * multiple of 8; a zero size ends the list: a record that did not fit was
 * never written, so the bytes after the last whole one are still zero),
 * format each, then zero the bytes read and the offset.  Kernels that run
 * while the host drains (another stream) could reserve bytes the host then
 * clears; CUDA's own FIFO has the same window, and programs that print
 * synchronise before they read the output.
 */
#include "rt_printf.h"

#include <stdlib.h>
#include <string.h>

#include "util/pw_printf.h"

uint32_t rt_printf_capacity(void) {
  const char *e = getenv("PTXWAVE_PRINTF_BUFFER");
  if (e && *e) {
    char *end;
    unsigned long long v = strtoull(e, &end, 0);
    if (*end == 0 && v >= 256 && v <= (1ull << 30)) return (uint32_t)v;
  }
  return 1u << 20;   /* CUDA's default cudaLimitPrintfFifoSize: 1 MiB */
}

/* Reads a NUL-terminated string: in chunks, then byte by byte near the end
 * of an allocation (a chunk read past it fails). */
static bool read_str(const rt_printf_mem *mem, uint64_t addr, char *buf, size_t cap) {
  size_t n = 0;
  while (n + 1 < cap) {
    size_t chunk = cap - 1 - n < 64 ? cap - 1 - n : 64;
    if (!mem->read(mem->ctx, addr + n, buf + n, chunk)) {
      if (!mem->read(mem->ctx, addr + n, buf + n, 1)) return false;
      chunk = 1;
    }
    void *z = memchr(buf + n, 0, chunk);
    if (z) return true;
    n += chunk;
  }
  buf[n] = 0;
  return true;
}

typedef struct rec_io {
  const rt_printf_mem *mem;
  const uint8_t *args;
  size_t args_len;
} rec_io;

static bool rec_arg(void *ctx, uint64_t off, unsigned size, uint64_t *out) {
  rec_io *io = ctx;
  if (off + size > io->args_len) return false;
  *out = 0;
  memcpy(out, io->args + off, size);
  return true;
}

static bool rec_str(void *ctx, uint64_t addr, char *buf, size_t cap) {
  rec_io *io = ctx;
  return read_str(io->mem, addr, buf, cap);
}

static uint32_t u32_at(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}
static uint64_t u64_at(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

static void format_printf(const rt_printf_mem *mem, const uint8_t *r, uint32_t size, FILE *out,
                          rt_printf_result *res) {
  char fmt[4096];
  if (!read_str(mem, u64_at(r + PW_PRINTF_REC_FORMAT), fmt, sizeof fmt)) {
    fprintf(out, "<ptxwave: device printf: unreadable format string at 0x%llx>\n",
            (unsigned long long)u64_at(r + PW_PRINTF_REC_FORMAT));
    return;
  }
  rec_io io = {mem, r + PW_PRINTF_REC_ARGS, size - PW_PRINTF_REC_ARGS};
  char *text = NULL;
  size_t len = 0;
  if (pw_printf_format(fmt, &(pw_printf_io){rec_arg, rec_str, &io}, &text, &len) < 0) {
    /* a %s whose string the host cannot read (a thread's local memory is
     * gone after the kernel): the line so far, then say so */
    static const char why[] = "<ptxwave: device printf: a %s argument is not readable from the host>\n";
    if (len) fwrite(text, 1, len, out);
    fwrite(why, 1, sizeof why - 1, out);
    free(text);
    res->records++;
    return;
  }
  if (len) fwrite(text, 1, len, out);
  free(text);
  res->records++;
}

static void format_assert(const rt_printf_mem *mem, const uint8_t *r, FILE *err, rt_printf_result *res) {
  char msg[1024] = "?", file[1024] = "?", func[1024] = "?";
  if (!read_str(mem, u64_at(r + PW_ASSERT_REC_MSG), msg, sizeof msg)) strcpy(msg, "?");
  if (!read_str(mem, u64_at(r + PW_ASSERT_REC_FILE), file, sizeof file)) strcpy(file, "?");
  if (!read_str(mem, u64_at(r + PW_ASSERT_REC_FUNC), func, sizeof func)) strcpy(func, "?");
  const uint8_t *c = r + PW_ASSERT_REC_CTAID, *t = r + PW_ASSERT_REC_TID;
  char text[4096];
  snprintf(text, sizeof text, PW_ASSERT_FORMAT, file, u32_at(r + PW_ASSERT_REC_LINE), func, u32_at(c),
           u32_at(c + 4), u32_at(c + 8), u32_at(t), u32_at(t + 4), u32_at(t + 8), msg);
  fputs(text, err);
  if (!res->asserts) {
    text[strcspn(text, "\n")] = 0;
    snprintf(res->first_assert, sizeof res->first_assert, "%.500s", text);
  }
  res->asserts++;
}

bool rt_printf_drain(const rt_printf_mem *mem, uint64_t buffer, uint32_t capacity, FILE *out, FILE *err,
                     rt_printf_result *res) {
  memset(res, 0, sizeof *res);
  uint8_t head[PW_PRINTF_BUF_HEADER];
  if (!buffer || !mem->read(mem->ctx, buffer, head, sizeof head)) return false;
  uint32_t offset = u32_at(head + PW_PRINTF_BUF_OFFSET);
  if (!offset) return true;
  uint32_t used = offset < capacity ? offset : capacity;
  if (offset > capacity) res->dropped_bytes = offset - capacity;
  uint8_t *recs = calloc(1, (size_t)used + 8);
  if (!recs || !mem->read(mem->ctx, buffer + PW_PRINTF_BUF_HEADER, recs, used)) {
    free(recs);
    return false;
  }
  for (uint32_t at = 0; at + PW_PRINTF_REC_ARGS <= used;) {
    const uint8_t *r = recs + at;
    uint32_t size = u32_at(r + PW_PRINTF_REC_SIZE), kind = u32_at(r + PW_PRINTF_REC_KIND);
    if (size < PW_PRINTF_REC_ARGS || size % 8 || size > used - at) break;
    if (kind == PW_PRINTF_KIND_PRINTF) format_printf(mem, r, size, out, res);
    else if (kind == PW_PRINTF_KIND_ASSERT && size >= PW_ASSERT_REC_BYTES) format_assert(mem, r, err, res);
    at += size;
  }
  fflush(out);
  if (res->dropped_bytes)
    fprintf(err, "ptxwave: device printf buffer full (%u bytes): %llu bytes of records dropped "
                 "(PTXWAVE_PRINTF_BUFFER sets its size)\n",
            capacity, (unsigned long long)res->dropped_bytes);
  fflush(err);
  /* empty it: zeroed records (the end marker), then the offset */
  memset(recs, 0, used);
  bool ok = mem->write(mem->ctx, buffer + PW_PRINTF_BUF_HEADER, recs, used);
  memset(head, 0, sizeof head);
  ok = ok && mem->write(mem->ctx, buffer, head, sizeof head);
  free(recs);
  return ok;
}
