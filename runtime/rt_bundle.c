/* runtime/rt_bundle.c: code-object bundles (rt_bundle.h has the format). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "runtime/rt_log.h"
#include "runtime/rt_bundle.h"

#define ROW 64
#define HEADER 32

struct rt_bundle {
  const uint8_t *map;
  size_t size;
  uint32_t count;
};

static uint64_t rd64(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}
static uint32_t rd32(const uint8_t *p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

void rt_bundle_key(const rt_cache_key *k, uint8_t out[16]) {
  char hex[33];
  rt_cache_key_hex(k, hex);
  for (int i = 0; i < 16; i++) {
    unsigned v;
    sscanf(hex + 2 * i, "%2x", &v);
    out[i] = (uint8_t)v;
  }
}

rt_bundle *rt_bundle_open(const char *path, char *err, size_t cap) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    snprintf(err, cap, "%s: %s", path, strerror(errno));
    return NULL;
  }
  struct stat sb;
  if (fstat(fd, &sb) || sb.st_size < HEADER) {
    snprintf(err, cap, "%s: not a bundle (too short)", path);
    close(fd);
    return NULL;
  }
  size_t size = (size_t)sb.st_size;
  void *m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (m == MAP_FAILED) {
    snprintf(err, cap, "%s: mmap: %s", path, strerror(errno));
    return NULL;
  }
  const uint8_t *p = m;
  uint32_t count = rd32(p + 12);
  const char *why = NULL;
  if (memcmp(p, RT_BUNDLE_MAGIC, 8)) why = "bad magic";
  else if (rd32(p + 8) != 1) why = "unknown version";
  else if (rd64(p + 16) != size) why = "truncated or extended";
  else if ((uint64_t)count * ROW > size - HEADER) why = "index past the end";
  for (uint32_t i = 0; !why && i < count; i++) {
    const uint8_t *r = p + HEADER + (size_t)i * ROW;
    uint64_t off = rd64(r + 32), len = rd64(r + 40);
    if (off > size || len > size - off) why = "payload past the end";
    else if (i && memcmp(r - ROW, r, 16) >= 0) why = "index not sorted";
  }
  if (why) {
    snprintf(err, cap, "%s: not a valid bundle: %s", path, why);
    munmap(m, size);
    return NULL;
  }
  rt_bundle *b = malloc(sizeof *b);
  if (!b) {
    munmap(m, size);
    snprintf(err, cap, "out of memory");
    return NULL;
  }
  *b = (rt_bundle){.map = p, .size = size, .count = count};
  return b;
}

void rt_bundle_close(rt_bundle *b) {
  if (!b) return;
  munmap((void *)b->map, b->size);
  free(b);
}

uint32_t rt_bundle_count(const rt_bundle *b) { return b->count; }

void rt_bundle_entry(const rt_bundle *b, uint32_t i, uint8_t key[16], const char **target,
                     const void **data, size_t *len) {
  const uint8_t *r = b->map + HEADER + (size_t)i * ROW;
  memcpy(key, r, 16);
  *target = (const char *)r + 48;  /* NUL-padded; a full 16 bytes is cut by readers */
  *data = b->map + rd64(r + 32);
  *len = (size_t)rd64(r + 40);
}

bool rt_bundle_find(const rt_bundle *b, const uint8_t key[16], const void **data, size_t *len) {
  uint32_t lo = 0, hi = b->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const uint8_t *r = b->map + HEADER + (size_t)mid * ROW;
    int c = memcmp(r, key, 16);
    if (c < 0) lo = mid + 1;
    else if (c > 0) hi = mid;
    else {
      const uint8_t *pl = b->map + rd64(r + 32);
      size_t n = (size_t)rd64(r + 40);
      XXH128_canonical_t cn;
      XXH128_canonicalFromHash(&cn, XXH3_128bits(pl, n));
      if (memcmp(cn.digest, r + 16, 16)) return false;  /* altered: compile instead */
      *data = pl;
      *len = n;
      return true;
    }
  }
  return false;
}

static int by_key(const void *a, const void *b) {
  return memcmp(((const rt_bundle_item *)a)->key, ((const rt_bundle_item *)b)->key, 16);
}

static bool write_all(int fd, const void *p, size_t n) {
  const uint8_t *q = p;
  while (n) {
    ssize_t w = write(fd, q, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    q += w;
    n -= (size_t)w;
  }
  return true;
}

bool rt_bundle_write(const char *path, rt_bundle_item *items, size_t n, char *err, size_t cap) {
  qsort(items, n, sizeof *items, by_key);
  size_t m = 0;  /* drop duplicate keys (the same module twice in one binary) */
  for (size_t i = 0; i < n; i++)
    if (!m || memcmp(items[m - 1].key, items[i].key, 16)) items[m++] = items[i];
  n = m;
  uint64_t off = HEADER + (uint64_t)n * ROW;
  uint8_t *index = calloc(n ? n : 1, ROW);
  if (!index) {
    snprintf(err, cap, "out of memory");
    return false;
  }
  uint64_t *offs = calloc(n ? n : 1, sizeof *offs);
  for (size_t i = 0; offs && i < n; i++) {
    off = (off + 15) & ~(uint64_t)15;
    offs[i] = off;
    uint8_t *r = index + i * ROW;
    memcpy(r, items[i].key, 16);
    XXH128_canonical_t cn;
    XXH128_canonicalFromHash(&cn, XXH3_128bits(items[i].data, items[i].len));
    memcpy(r + 16, cn.digest, 16);
    uint64_t len = items[i].len;
    memcpy(r + 32, &off, 8);
    memcpy(r + 40, &len, 8);
    memcpy(r + 48, items[i].target, strnlen(items[i].target, 16));
    off += len;
  }
  uint8_t hdr[HEADER] = {0};
  memcpy(hdr, RT_BUNDLE_MAGIC, 8);
  uint32_t ver = 1, cnt = (uint32_t)n;
  memcpy(hdr + 8, &ver, 4);
  memcpy(hdr + 12, &cnt, 4);
  memcpy(hdr + 16, &off, 8);
  char tmp[PATH_MAX + 64];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  int fd = offs ? open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1;
  bool ok = fd >= 0 && write_all(fd, hdr, HEADER) && write_all(fd, index, n * ROW);
  uint64_t at = HEADER + (uint64_t)n * ROW;
  static const uint8_t zeros[16];
  for (size_t i = 0; ok && i < n; i++) {
    ok = write_all(fd, zeros, (size_t)(offs[i] - at)) && write_all(fd, items[i].data, items[i].len);
    at = offs[i] + items[i].len;
  }
  if (fd >= 0) {
    ok = ok && fsync(fd) == 0;
    ok = close(fd) == 0 && ok;
  }
  if (!ok || rename(tmp, path)) {
    snprintf(err, cap, "%s: %s", path, strerror(errno ? errno : EIO));
    unlink(tmp);
    ok = false;
  }
  free(index);
  free(offs);
  return ok;
}

/* ---- the runtime's lookup ---------------------------------------------- */

static pthread_mutex_t bundles_lock = PTHREAD_MUTEX_INITIALIZER;
static rt_bundle **bundles;
static char **seen;          /* paths tried, found or not */
static size_t nbundles, nseen;
static unsigned long long last_adds = ~0ull;

static void try_path(const char *path) {
  for (size_t i = 0; i < nseen; i++)
    if (!strcmp(seen[i], path)) return;
  char **ns = realloc(seen, (nseen + 1) * sizeof *ns);
  if (!ns) return;
  seen = ns;
  if (!(seen[nseen] = strdup(path))) return;
  nseen++;
  if (access(path, R_OK)) return;
  char err[512];
  rt_bundle *b = rt_bundle_open(path, err, sizeof err);
  if (!b) {
    RT_LOG(rt_warn, "bundle %s", err);
    return;
  }
  rt_bundle **nb = realloc(bundles, (nbundles + 1) * sizeof *nb);
  if (!nb) {
    rt_bundle_close(b);
    return;
  }
  bundles = nb;
  bundles[nbundles++] = b;
  RT_LOG(rt_info, "bundle %s: %u code objects", path, rt_bundle_count(b));
}

static int each_object(struct dl_phdr_info *info, size_t size, void *user) {
  char path[PATH_MAX + 16];
  const char *name = info->dlpi_name;
  if (!name || !*name) {  /* the executable */
    ssize_t n = readlink("/proc/self/exe", path, PATH_MAX);
    if (n <= 0) return 0;
    path[n] = 0;
  } else {
    snprintf(path, PATH_MAX, "%s", name);
  }
  strcat(path, RT_BUNDLE_SUFFIX);
  try_path(path);
  if (name && *name) {  /* also next to the file the link resolves to (libx.so.1 -> libx.so.1.2.3) */
    char real[PATH_MAX];
    if (realpath(name, real) && strcmp(real, name)) {
      snprintf(path, sizeof path, "%s%s", real, RT_BUNDLE_SUFFIX);
      try_path(path);
    }
  }
  *(unsigned long long *)user = info->dlpi_adds;
  return 0;
}

/* dlpi_adds, the count of objects ever loaded, is the same in every
 * callback: the first one answers. */
static int adds_only(struct dl_phdr_info *info, size_t size, void *user) {
  *(unsigned long long *)user = info->dlpi_adds;
  return 1;
}

static void rescan(void) {
  const char *env = getenv("PTXWAVE_BUNDLES");
  if (env && *env) {
    char *copy = strdup(env), *save = NULL;
    for (char *t = copy ? strtok_r(copy, ":", &save) : NULL; t; t = strtok_r(NULL, ":", &save))
      try_path(t);
    free(copy);
  }
  unsigned long long adds = 0;
  dl_iterate_phdr(each_object, &adds);
  last_adds = adds;
}

bool rt_bundles_get(const rt_cache_key *k, void **data, size_t *len) {
  uint8_t key[16];
  rt_bundle_key(k, key);
  pthread_mutex_lock(&bundles_lock);
  bool found = false;
  for (int pass = 0; pass < 2 && !found; pass++) {
    if (pass == 1 || last_adds == ~0ull) {
      /* a miss looks again only when objects were loaded since: the full
       * walk (readlink, realpath per object) would cost every cache-served
       * load tens of microseconds per loaded library */
      unsigned long long adds = 0;
      dl_iterate_phdr(adds_only, &adds);
      if (pass == 1 && adds == last_adds) break;  /* nothing new loaded */
      rescan();
    }
    for (size_t i = 0; i < nbundles && !found; i++) {
      const void *p;
      size_t n;
      if (rt_bundle_find(bundles[i], key, &p, &n)) {
        void *copy = malloc(n ? n : 1);
        if (copy) {
          memcpy(copy, p, n);
          *data = copy;
          *len = n;
          found = true;
        }
      }
    }
  }
  pthread_mutex_unlock(&bundles_lock);
  return found;
}
