/* fuzz/fuzz_container.c: libFuzzer target for the container readers.
 *
 * The input is a whole file as ptx_file_from_memory sees it: ELF, ar,
 * fatbin, PTX or anything else.  Every entry found is decompressed (with a
 * 16 MiB cap so a hostile size cannot exhaust the fuzzer's memory limit
 * before the cap logic is reached), PTX is scanned for kernels, containers
 * are ranked for a target, names are formed.  The same bytes also go to
 * the decompressors directly, behind a 5-byte prefix choosing the scheme
 * and the claimed size, so LZ4 and zstd garbage is reached without a valid
 * container around it.
 *
 * Built only with -Dfuzz=true (clang, -fsanitize=fuzzer,address,undefined);
 * scripts/test.sh runs it for a bounded time on fuzz/corpus/container/.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/container.h"

static bool visit(const ptx_module *m, void *user) {
  size_t *total = user;
  *total += m->len;
  if (m->kind == ptx_kind_ptx) ptx_scan_kernels(m->text, m->len, NULL, NULL, 0);
  return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pw_diag d;
  pw_diag_init(&d, NULL); /* collected, not printed */
  d.max_errors = 8;
  ptx_read_options opt = {.max_decompressed = 16u << 20};
  ptx_decoder *dec = ptx_decoder_new();

  ptx_file *f = ptx_file_from_memory("fuzz", data, size, &d);
  if (f) {
    size_t total = 0;
    ptx_file_for_each(f, PTX_VISIT_PTX | PTX_VISIT_CUBIN, &opt, dec, &d, visit, &total);
    ptx_target t = {.max_isa_major = 9, .max_isa_minor = 1, .max_sm = 120, .arch_specific = true};
    char name[512];
    for (uint32_t i = 0; i < f->ncontainers; i++) {
      uint32_t order[4];
      ptx_rank(&f->containers[i], &t, order, 4);
      for (uint32_t j = 0; j < f->containers[i].nentries; j++) ptx_entry_name(name, sizeof name, f, i, j);
    }
    ptx_file_close(f);
  }

  if (size >= 5) {
    ptx_compression c = (ptx_compression)(data[0] % 4);
    uint64_t expected = (uint64_t)(data[1] | data[2] << 8 | data[3] << 16 | (data[4] & 0x3) << 24);
    ptx_payload pl;
    if (ptx_decompress(c, data + 5, size - 5, expected, 16u << 20, dec, &d, "fuzz", 5, &pl))
      ptx_payload_free(&pl);
  }
  ptx_decoder_free(dec);
  pw_diag_fini(&d);
  return 0;
}
