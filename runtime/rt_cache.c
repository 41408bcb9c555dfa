/* runtime/rt_cache.c: the kernel cache (rt_cache.h has the design). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "codegen/codegen.h"

#include "pw_config.h"
#include "runtime/rt_log.h"
#include "runtime/rt_cache.h"

#define CACHE_MAGIC 0x31435750u  /* "PWC1" */
#define CACHE_FORMAT 1u

typedef struct entry_header {
  uint32_t magic, format;
  uint64_t size;
  uint8_t payload_hash[16];
  uint8_t key[16];
} entry_header;
_Static_assert(sizeof(entry_header) == 48, "cache entry header");

struct rt_cache {
  char dir[PATH_MAX];
  uint64_t max_bytes, max_entry;
  atomic_flag warned_write;     /* a failed write is reported once */
  rt_cache_stats st;
  pthread_mutex_t lock;
};

static bool mkdir_p(const char *path, mode_t mode) {
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(tmp, 0700) && errno != EEXIST) return false;
      *p = '/';
    }
  return !mkdir(tmp, mode) || errno == EEXIST;
}

rt_cache *rt_cache_open(const char *dir, uint64_t max_bytes) {
  rt_cache *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  const char *e;
  if (dir && *dir) snprintf(c->dir, sizeof c->dir, "%s", dir);
  else if ((e = getenv("PTXWAVE_CACHE_DIR")) && *e) snprintf(c->dir, sizeof c->dir, "%s", e);
  else if ((e = getenv("XDG_CACHE_HOME")) && *e) snprintf(c->dir, sizeof c->dir, "%s/ptxwave", e);
  else if ((e = getenv("HOME")) && *e) snprintf(c->dir, sizeof c->dir, "%s/.cache/ptxwave", e);
  else {
    free(c);
    return NULL;
  }
  if (!max_bytes) {
    const char *m = getenv("PTXWAVE_CACHE_MAX_MB");
    max_bytes = (m && atoll(m) > 0 ? (uint64_t)atoll(m) : 1024) << 20;
  }
  c->max_bytes = max_bytes;
  const char *me = getenv("PTXWAVE_CACHE_MAX_ENTRY_MB");
  c->max_entry = me && atoll(me) > 0 ? (uint64_t)atoll(me) << 20 : max_bytes / 4;
  atomic_flag_clear(&c->warned_write);
  struct stat sb;
  if (!mkdir_p(c->dir, 0700) || stat(c->dir, &sb) || !S_ISDIR(sb.st_mode) ||
      sb.st_uid != getuid()) {
    RT_LOG(rt_warn, "kernel cache: %s is not a directory of ours; caching disabled", c->dir);
    free(c);
    return NULL;
  }
  if ((sb.st_mode & 077) && chmod(c->dir, 0700)) {
    RT_LOG(rt_warn, "kernel cache: cannot make %s private; caching disabled", c->dir);
    free(c);
    return NULL;
  }
  pthread_mutex_init(&c->lock, NULL);
  return c;
}

void rt_cache_close(rt_cache *c) {
  if (!c) return;
  pthread_mutex_destroy(&c->lock);
  free(c);
}

const char *rt_cache_dir(const rt_cache *c) { return c->dir; }

static void key_hash(const rt_cache_key *k, uint8_t out[16]) {
  if (k->sealed) {
    memcpy(out, k->digest, 16);
    return;
  }
  XXH3_state_t *s = XXH3_createState();
  XXH3_128bits_reset(s);
  const char *parts[4] = {k->ptx, k->target, k->compiler, k->options};
  size_t lens[4] = {k->ptx_len, 0, 0, 0};
  for (int i = 1; i < 4; i++) lens[i] = parts[i] ? strlen(parts[i]) : 0;
  for (int i = 0; i < 4; i++) {
    uint64_t n = lens[i];
    XXH3_128bits_update(s, &n, sizeof n);  /* length prefix: no concatenation collisions */
    if (n) XXH3_128bits_update(s, parts[i], n);
  }
  XXH128_hash_t h = XXH3_128bits_digest(s);
  XXH3_freeState(s);
  XXH128_canonical_t cn;
  XXH128_canonicalFromHash(&cn, h);
  memcpy(out, cn.digest, 16);
}

void rt_cache_key_seal(rt_cache_key *k) {
  k->sealed = false;
  key_hash(k, k->digest);
  k->sealed = true;
}

void rt_cache_key_hex(const rt_cache_key *k, char out[33]) {
  uint8_t h[16];
  key_hash(k, h);
  for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", h[i]);
}

static void payload_hash(const void *p, size_t n, uint8_t out[16]) {
  XXH128_canonical_t cn;
  XXH128_canonicalFromHash(&cn, XXH3_128bits(p, n));
  memcpy(out, cn.digest, 16);
}

static void entry_path(const rt_cache *c, const rt_cache_key *k, char *path, size_t cap,
                       uint8_t key[16]) {
  char hex[33];
  key_hash(k, key);
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
  snprintf(path, cap, "%s/%s.pwc", c->dir, hex);
}

static void count(rt_cache *c, uint64_t *field) {
  pthread_mutex_lock(&c->lock);
  (*field)++;
  pthread_mutex_unlock(&c->lock);
}

bool rt_cache_get(rt_cache *c, const rt_cache_key *k, void **data, size_t *len) {
  char path[PATH_MAX + 64];
  uint8_t key[16];
  entry_path(c, k, path, sizeof path, key);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    count(c, &c->st.misses);
    return false;
  }
  entry_header h;
  struct stat sb;
  void *buf = NULL;
  bool ok = fstat(fd, &sb) == 0 && read(fd, &h, sizeof h) == (ssize_t)sizeof h &&
            h.magic == CACHE_MAGIC && h.format == CACHE_FORMAT && !memcmp(h.key, key, 16) &&
            (uint64_t)sb.st_size == sizeof h + h.size;
  if (ok) {
    buf = malloc(h.size ? h.size : 1);
    ok = buf && read(fd, buf, h.size) == (ssize_t)h.size;
    uint8_t ph[16];
    if (ok) payload_hash(buf, h.size, ph);
    ok = ok && !memcmp(ph, h.payload_hash, 16);
  }
  close(fd);
  if (!ok) {
    free(buf);
    RT_LOG(rt_warn, "kernel cache: %s is truncated or altered; removed, will rebuild", path);
    unlink(path);
    count(c, &c->st.corrupt);
    count(c, &c->st.misses);
    return false;
  }
  utimensat(AT_FDCWD, path, NULL, 0);  /* recently used: last to be evicted */
  *data = buf;
  *len = h.size;
  count(c, &c->st.hits);
  return true;
}

typedef struct file_age {
  char name[80];
  struct timespec mtime;
  off_t size;
} file_age;

static int by_age(const void *a, const void *b) {
  const file_age *x = a, *y = b;
  if (x->mtime.tv_sec != y->mtime.tv_sec) return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
  if (x->mtime.tv_nsec != y->mtime.tv_nsec) return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
  return strcmp(x->name, y->name);
}

/* Down to 90% of the bound, oldest first, sparing keep (the entry just
 * written: with coarse mtimes it may sort among the oldest). */
static void evict(rt_cache *c, const char *keep) {
  DIR *d = opendir(c->dir);
  if (!d) return;
  file_age *v = NULL;
  size_t n = 0, cap = 0;
  uint64_t total = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l < 5 || l >= 80 || strcmp(de->d_name + l - 4, ".pwc")) continue;
    struct stat sb;
    if (fstatat(dirfd(d), de->d_name, &sb, 0)) continue;
    if (!strcmp(de->d_name, keep)) {   /* counted, never a candidate */
      total += (uint64_t)sb.st_size;
      continue;
    }
    if (n == cap) {
      file_age *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof *v);
      if (!nv) break;
      v = nv;
    }
    snprintf(v[n].name, sizeof v[n].name, "%s", de->d_name);
    v[n].mtime = sb.st_mtim;
    v[n].size = sb.st_size;
    total += (uint64_t)sb.st_size;
    n++;
  }
  if (total > c->max_bytes) {
    qsort(v, n, sizeof *v, by_age);
    for (size_t i = 0; i < n && total > c->max_bytes / 10 * 9; i++)
      if (!unlinkat(dirfd(d), v[i].name, 0)) {
        total -= (uint64_t)v[i].size;
        count(c, &c->st.evicted);
      }
  }
  closedir(d);
  free(v);
}

bool rt_cache_put(rt_cache *c, const rt_cache_key *k, const void *data, size_t len) {
  char path[PATH_MAX + 64], tmp[PATH_MAX + 96];
  entry_header h = {.magic = CACHE_MAGIC, .format = CACHE_FORMAT, .size = len};
  entry_path(c, k, path, sizeof path, h.key);
  payload_hash(data, len, h.payload_hash);
  snprintf(tmp, sizeof tmp, "%s/.tmp.%ld.%lx", c->dir, (long)getpid(),
           (unsigned long)pthread_self());
  if (sizeof h + (uint64_t)len > c->max_entry) {
    RT_LOG(rt_warn, "kernel cache: an entry of %zu bytes is above the limit of %llu "
           "(PTXWAVE_CACHE_MAX_ENTRY_MB); not stored", len, (unsigned long long)c->max_entry);
    count(c, &c->st.refused);
    return false;
  }
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool ok = fd >= 0;
  int err = ok ? 0 : errno;
  if (ok) {
    ok = write(fd, &h, sizeof h) == (ssize_t)sizeof h &&
         write(fd, data, len) == (ssize_t)len && fsync(fd) == 0;
    if (!ok) err = errno;
    if (close(fd) && ok) {
      ok = false;
      err = errno;
    }
    if (ok && rename(tmp, path)) {
      ok = false;
      err = errno;
    }
    if (!ok) unlink(tmp);
  }
  if (!ok) {
    count(c, &c->st.write_failures);
    if (!atomic_flag_test_and_set(&c->warned_write))
      RT_LOG(rt_warn, "kernel cache: cannot write to %s: %s; compiled code is not cached "
             "(reported once)", c->dir, strerror(err ? err : EIO));
    return false;
  }
  count(c, &c->st.stores);
  const char *name = strrchr(path, '/');
  evict(c, name ? name + 1 : path);
  return true;
}

void rt_cache_get_stats(const rt_cache *c, rt_cache_stats *out) {
  pthread_mutex_lock((pthread_mutex_t *)&c->lock);
  *out = c->st;
  pthread_mutex_unlock((pthread_mutex_t *)&c->lock);
}

rt_cache_key rt_code_object_key(const char *ptx, size_t len, const char *arch) {
  return (rt_cache_key){.ptx = ptx, .ptx_len = len, .target = arch,
                        .compiler = RT_CODE_OBJECT_COMPILER, .options = cg_code_options};
}
