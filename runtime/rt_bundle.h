/* runtime/rt_bundle.h: code-object bundles, the files `ptxwave convert -o`
 * writes next to a binary so that the runtime loads its kernels without a
 * compiler and without a shared cache (docs/convert.md "Bundles").
 *
 * A bundle maps cache keys (rt_code_object_key: PTX text, target, compiler,
 * options) to code objects, so a lookup is the same question as a cache
 * lookup and needs no knowledge of which file a module came from.  Layout
 * (little endian):
 *
 *   0   char magic[8]       "PTXWBND1"
 *   8   u32 version         1
 *   12  u32 count           entries
 *   16  u64 file size       the whole file; a truncated bundle is refused
 *   24  u64 reserved        0
 *   32  count x 64-byte index rows, sorted by key (binary search):
 *         u8  key[16]       XXH3-128 of the key parts (rt_cache.c)
 *         u8  hash[16]      XXH3-128 of the payload (tamper check)
 *         u64 offset, size  the payload, inside the file
 *         char target[16]   "gfx942", NUL-padded (for `ptxwave inspect`-like tools)
 *   payloads, each at a 16-byte aligned offset
 *
 * Every field is checked against the file before use; an entry whose
 * payload hash differs is treated as absent (the caller compiles).
 *
 * Where the runtime looks (rt_bundles_get): PTXWAVE_BUNDLES (paths separated
 * by ':'), then, for every object loaded in the process (the executable and
 * each shared library, dl_iterate_phdr), the file "<object path>.ptxwave".
 * Objects loaded later are picked up on the next miss.
 */
#ifndef PW_RT_BUNDLE_H
#define PW_RT_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtime/rt_cache.h"

#define RT_BUNDLE_MAGIC "PTXWBND1"
#define RT_BUNDLE_SUFFIX ".ptxwave"

typedef struct rt_bundle rt_bundle;

/* Maps and checks the file; NULL (errno-style message in err) if it is not
 * a whole, well-formed bundle. */
rt_bundle *rt_bundle_open(const char *path, char *err, size_t cap);
void rt_bundle_close(rt_bundle *b);
uint32_t rt_bundle_count(const rt_bundle *b);
/* The i-th entry (index order): key, target, payload (points into the map). */
void rt_bundle_entry(const rt_bundle *b, uint32_t i, uint8_t key[16], const char **target,
                     const void **data, size_t *len);
/* By key; *data points into the map (valid until close).  False when absent
 * or when the payload fails its hash. */
bool rt_bundle_find(const rt_bundle *b, const uint8_t key[16], const void **data, size_t *len);

/* The 16 bytes of a key (the hex of rt_cache_key_hex, as bytes). */
void rt_bundle_key(const rt_cache_key *k, uint8_t out[16]);

/* Writing: entries collected, then one atomic write (temporary file in the
 * same directory, fsync, rename).  Duplicate keys keep the first. */
typedef struct rt_bundle_item {
  uint8_t key[16];
  char target[16];
  const void *data;
  size_t len;
} rt_bundle_item;
bool rt_bundle_write(const char *path, rt_bundle_item *items, size_t n, char *err, size_t cap);

/* The process-wide lookup of the HIP backend: a malloc'd copy of the code
 * object for k from the first bundle that has it. */
bool rt_bundles_get(const rt_cache_key *k, void **data, size_t *len);

#endif
