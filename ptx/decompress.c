/* ptx/decompress.c: an entry's payload, decompressed.
 *
 * Flag 0x2000: the payload's first `compressed size` bytes are one raw LZ4
 * block (lz4's Block_format.md, no frame), expanding to the header's
 * uncompressed size: LZ4_decompress_safe, which never writes past the
 * capacity it is given nor reads past the input.  Flag 0x8000: one zstd
 * frame (RFC 8878): ZSTD_decompressDCtx into a buffer of exactly the
 * header's uncompressed size, so a frame that expands further fails
 * instead of growing anything.  Neither flag: the payload is stored.
 *
 * Invariants: the only allocation is the output buffer, sized from the
 * header's claim after it is checked against the cap (default 1 GiB), so a
 * hostile size costs an error message, not memory; the output must come
 * out exactly as long as the header says.  PTX text keeps no trailing NULs
 * (nvcc pads it), and every buffer ends in one NUL past its length.
 */
#include <lz4.h>
#include <stdlib.h>
#include <zstd.h>

#include "container_impl.h"

struct ptx_decoder {
  ZSTD_DCtx *zstd;
};

ptx_decoder *ptx_decoder_new(void) {
  ptx_decoder *dec = calloc(1, sizeof *dec);
  if (!dec) return NULL;
  dec->zstd = ZSTD_createDCtx();
  if (!dec->zstd) {
    free(dec);
    return NULL;
  }
  return dec;
}

void ptx_decoder_free(ptx_decoder *dec) {
  if (!dec) return;
  ZSTD_freeDCtx(dec->zstd);
  free(dec);
}

void ptx_payload_free(ptx_payload *p) {
  if (!p) return;
  free(p->data);
  p->data = NULL;
  p->len = 0;
}

const char *ptx_compression_name(ptx_compression c) {
  switch (c) {
  case ptx_comp_none: return "stored";
  case ptx_comp_lz4: return "lz4";
  case ptx_comp_zstd: return "zstd";
  case ptx_comp_unsupported: return "unsupported";
  }
  return "?";
}

bool ptx_decompress(ptx_compression comp, const uint8_t *src, size_t src_len, uint64_t expected,
                    uint64_t cap, ptx_decoder *dec, pw_diag *d, const char *path, uint64_t off,
                    ptx_payload *out) {
  out->data = NULL;
  out->len = 0;
  if (comp == ptx_comp_unsupported) {
    pw_error_off(d, path, off, "payload uses a compression ptxwave does not know (only LZ4 0x2000 and zstd 0x8000)");
    return false;
  }
  if (expected > cap || expected >= SIZE_MAX) {
    pw_error_off(d, path, off, "decompressed size %llu bytes exceeds the limit of %llu bytes",
                 (unsigned long long)expected, (unsigned long long)cap);
    return false;
  }
  if (comp == ptx_comp_lz4 && (expected > LZ4_MAX_INPUT_SIZE || src_len > LZ4_MAX_INPUT_SIZE)) {
    /* LZ4's block API counts in int. */
    pw_error_off(d, path, off, "LZ4 block of %zu bytes expanding to %llu bytes is beyond LZ4's 2 GB block limit",
                 src_len, (unsigned long long)expected);
    return false;
  }
  uint8_t *buf = malloc((size_t)expected + 1);
  if (!buf) {
    pw_error_off(d, path, off, "out of memory for %llu decompressed bytes", (unsigned long long)expected);
    return false;
  }
  switch (comp) {
  case ptx_comp_none:
    /* Callers pass expected == src_len for stored payloads. */
    if (src_len < expected) {
      pw_error_off(d, path, off, "stored payload has %zu bytes, %llu expected", src_len,
                   (unsigned long long)expected);
      free(buf);
      return false;
    }
    memcpy(buf, src, (size_t)expected);
    break;
  case ptx_comp_lz4: {
    int n = LZ4_decompress_safe((const char *)src, (char *)buf, (int)src_len, (int)expected);
    if (n < 0 || (uint64_t)n != expected) {
      if (n < 0)
        pw_error_off(d, path, off, "corrupt LZ4 block (%zu bytes; LZ4 error at input byte %d)", src_len, -n - 1);
      else
        pw_error_off(d, path, off, "LZ4 block expands to %d bytes, the header says %llu", n,
                     (unsigned long long)expected);
      free(buf);
      return false;
    }
    break;
  }
  case ptx_comp_zstd: {
    unsigned long long fcs = ZSTD_getFrameContentSize(src, src_len);
    if (fcs == ZSTD_CONTENTSIZE_ERROR) {
      pw_error_off(d, path, off, "not a zstd frame (%zu bytes)", src_len);
      free(buf);
      return false;
    }
    if (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != expected) {
      pw_error_off(d, path, off, "zstd frame holds %llu bytes, the header says %llu", fcs,
                   (unsigned long long)expected);
      free(buf);
      return false;
    }
    ZSTD_DCtx *own = NULL, *z = dec ? dec->zstd : (own = ZSTD_createDCtx());
    size_t r = z ? ZSTD_decompressDCtx(z, buf, (size_t)expected, src, src_len) : (size_t)-1;
    ZSTD_freeDCtx(own);
    if (ZSTD_isError(r) || r != expected) {
      if (ZSTD_isError(r))
        pw_error_off(d, path, off, "corrupt zstd frame (%zu bytes): %s", src_len, ZSTD_getErrorName(r));
      else
        pw_error_off(d, path, off, "zstd frame expands to %zu bytes, the header says %llu", r,
                     (unsigned long long)expected);
      free(buf);
      return false;
    }
    break;
  }
  case ptx_comp_unsupported:
    break; /* refused above */
  }
  buf[expected] = 0;
  out->data = buf;
  out->len = (size_t)expected;
  return true;
}

uint64_t ptx_default_budget(uint64_t input_size) {
  uint64_t b = input_size > UINT64_MAX / PTX_BUDGET_FACTOR ? UINT64_MAX : input_size * PTX_BUDGET_FACTOR;
  return b < PTX_BUDGET_FLOOR ? PTX_BUDGET_FLOOR : b;
}

/* Takes n bytes of f's budget; false (nothing taken) when they are not
 * left.  Charged before decoding, from the header's size: the decoders
 * produce exactly that many bytes or fail, so the claim bounds the work. */
static bool charge_budget(const ptx_file *f, uint64_t n) {
  if (!f->decompress_budget || !f->decompressed) return true;
  uint64_t spent = __atomic_load_n(f->decompressed, __ATOMIC_RELAXED);
  do {
    if (n > f->decompress_budget || spent > f->decompress_budget - n) return false;
  } while (!__atomic_compare_exchange_n(f->decompressed, &spent, spent + n, true, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED));
  return true;
}

bool ptx_entry_read(const ptx_file *f, const ptx_entry *e, const ptx_read_options *opt,
                    ptx_decoder *dec, pw_diag *d, ptx_payload *out) {
  uint64_t cap = opt && opt->max_decompressed ? opt->max_decompressed : PTX_DEFAULT_MAX_DECOMPRESSED;
  const uint8_t *src = f->data + e->payload_offset;
  size_t src_len;
  uint64_t expected;
  if (e->compression == ptx_comp_none || e->compression == ptx_comp_unsupported) {
    src_len = (size_t)e->payload_size;
    expected = e->payload_size;
  } else {
    /* The stream is the first compressed_size bytes; the rest of the
     * payload is padding to 8. */
    if (e->compressed_size == 0 || e->compressed_size > e->payload_size) {
      pw_error_off(d, f->path, e->offset + 0x10,
                   "compressed size %llu does not fit the %llu-byte payload",
                   (unsigned long long)e->compressed_size, (unsigned long long)e->payload_size);
      out->data = NULL;
      out->len = 0;
      return false;
    }
    src_len = (size_t)e->compressed_size;
    expected = e->uncompressed_size;
  }
  if (e->compression != ptx_comp_none && e->compression != ptx_comp_unsupported && expected <= cap &&
      !charge_budget(f, expected)) {
    uint64_t spent = f->decompressed ? __atomic_load_n(f->decompressed, __ATOMIC_RELAXED) : 0;
    pw_error_off(d, f->path, e->payload_offset,
                 "decompressing %llu more bytes would pass this input's decompression budget of %llu bytes "
                 "(%llu already decompressed from its %llu bytes)",
                 (unsigned long long)expected, (unsigned long long)f->decompress_budget,
                 (unsigned long long)spent, (unsigned long long)f->size);
    out->data = NULL;
    out->len = 0;
    return false;
  }
  if (!ptx_decompress(e->compression, src, src_len, expected, cap, dec, d, f->path, e->payload_offset, out))
    return false;
  if (e->kind == ptx_kind_ptx)
    while (out->len && out->data[out->len - 1] == 0) out->len--;
  return true;
}
