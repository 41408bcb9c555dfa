/* runtime/rt_cache.h: the persistent, content-addressed cache of compiled
 * kernels (design.md "Runtime"; docs/runtime.md "The kernel cache").
 *
 * Key: XXH3-128 of the PTX text, the target (e.g. "gfx942"), the compiler's
 * version and the options (for code objects, codegen's defaults:
 * cg_code_options), each length-prefixed so no two keys collide by
 * concatenation.  Value: what the backend compiled (for HIP, the .hsaco
 * code object); the emulator has no code object and does not use it.
 *
 * Directory: PTXWAVE_CACHE_DIR, else $XDG_CACHE_HOME/ptxwave, else
 * ~/.cache/ptxwave; created 0700.  Entry: <key>.pwc, a 48-byte header
 * (magic, format version, payload size, XXH3-128 of the payload, the key)
 * then the payload.  Writes go to a temporary file in the same directory
 * and are renamed into place, so a reader sees a whole entry or none, and
 * any number of processes may share the directory.  A truncated or altered
 * entry fails its header check, is deleted and reported as a miss, and the
 * caller compiles and stores it again.  Size bound: PTXWAVE_CACHE_MAX_MB
 * (default 1024); past it the least recently used entries (mtime, touched
 * on every hit) are evicted down to 90%, never the entry just written.  An
 * entry above PTXWAVE_CACHE_MAX_ENTRY_MB (default a quarter of the bound)
 * is refused and logged: one oversized code object would otherwise empty
 * the cache.  A write that fails (a full or read-only directory) is
 * reported once per cache at warning level and counted.
 */
#ifndef PW_RT_CACHE_H
#define PW_RT_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rt_cache rt_cache;

typedef struct rt_cache_key {
  const char *ptx;
  size_t ptx_len;
  const char *target, *compiler, *options;
  /* rt_cache_key_seal: the hash, computed once for a key asked of several
   * stores (bundles, then the cache); zero-initialised keys are hashed on
   * every use */
  bool sealed;
  uint8_t digest[16];
} rt_cache_key;

typedef struct rt_cache_stats {
  uint64_t hits, misses, corrupt, stores, evicted;
  uint64_t refused;             /* entries above the size limit, not stored */
  uint64_t write_failures;      /* puts that could not write (full, read-only) */
} rt_cache_stats;

/* dir NULL: from the environment.  max_bytes 0: PTXWAVE_CACHE_MAX_MB or
 * 1 GiB.  NULL (logged) when the directory cannot be made private. */
rt_cache *rt_cache_open(const char *dir, uint64_t max_bytes);
void rt_cache_close(rt_cache *c);
const char *rt_cache_dir(const rt_cache *c);
/* 32 hex digits and a NUL. */
void rt_cache_key_hex(const rt_cache_key *k, char out[33]);
/* Hashes k's parts now and keeps the digest in k: hashing a 2 MB PTX text
 * is a fifth of a warm load.  Seal after the last change to the parts (a
 * copy with another compiler name must be sealed again or unsealed). */
void rt_cache_key_seal(rt_cache_key *k);
/* On a hit, *data is malloc'd (the caller frees it). */
bool rt_cache_get(rt_cache *c, const rt_cache_key *k, void **data, size_t *len);
bool rt_cache_put(rt_cache *c, const rt_cache_key *k, const void *data, size_t len);
void rt_cache_get_stats(const rt_cache *c, rt_cache_stats *out);

/* The key under which the HIP backend looks up the code object of one PTX
 * module for one gfx target.  The one place that names the compiler and
 * its options: the backend and the offline converter (convert/) both call
 * it, so what `ptxwave convert` stores is what a load finds. */
#define RT_CODE_OBJECT_COMPILER "ptxwave-" PTXWAVE_VERSION "-llvm22"
rt_cache_key rt_code_object_key(const char *ptx, size_t len, const char *arch);

#endif
