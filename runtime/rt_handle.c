/* runtime/rt_handle.c: the registry of live handles.
 *
 * Every CUDA handle the layer gives out (context, stream, event, module,
 * function, graph, graph node, executable graph) is a pointer to a struct
 * of ours.  Checking a magic number inside that struct is not enough: a
 * destroyed handle points at freed memory, and a made-up one (a stream
 * 0x1234) at no memory at all; reading either is the crash CUDA does not
 * have (it answers CUDA_ERROR_INVALID_HANDLE).  So every handle is entered
 * here when it is created and removed before it is freed, and an entry
 * point asks the registry before it touches the struct.
 *
 * An open-addressing hash set of (pointer, kind) under one mutex, with
 * tombstones; it grows at half full.  A lookup hashes the pointer and
 * reads a few slots: cheap next to any call that reaches the backend.
 */
#include <stdlib.h>

#include "runtime/rt.h"

typedef struct slot {
  const void *p;              /* NULL: empty; TOMB: removed */
  rt_handle_kind kind;
} slot;

static const char tomb;
#define TOMB ((const void *)&tomb)

static struct {
  pthread_mutex_t lock;
  slot *s;
  size_t cap, used;           /* used counts live entries and tombstones */
} H = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static bool grow(void) {
  size_t cap = H.cap ? H.cap * 2 : 256;
  slot *s = calloc(cap, sizeof *s);
  if (!s) return false;
  size_t used = 0;
  for (size_t i = 0; i < H.cap; i++) {
    if (!H.s[i].p || H.s[i].p == TOMB) continue;
    size_t j = hash(H.s[i].p, cap);
    while (s[j].p) j = (j + 1) & (cap - 1);
    s[j] = H.s[i];
    used++;
  }
  free(H.s);
  H.s = s;
  H.cap = cap;
  H.used = used;
  return true;
}

bool rt_handle_add(rt_handle_kind kind, const void *p) {
  pthread_mutex_lock(&H.lock);
  bool ok = true;
  if ((H.used + 1) * 2 > H.cap) ok = grow();
  if (ok) {
    size_t j = hash(p, H.cap), t = (size_t)-1;
    while (H.s[j].p && H.s[j].p != p) {
      if (H.s[j].p == TOMB && t == (size_t)-1) t = j;
      j = (j + 1) & (H.cap - 1);
    }
    if (!H.s[j].p) {
      if (t != (size_t)-1) j = t;
      else H.used++;
    }
    H.s[j] = (slot){p, kind};
  }
  pthread_mutex_unlock(&H.lock);
  return ok;
}

static size_t find(const void *p) {
  if (!H.cap || !p) return (size_t)-1;
  size_t j = hash(p, H.cap);
  while (H.s[j].p) {
    if (H.s[j].p == p) return j;
    j = (j + 1) & (H.cap - 1);
  }
  return (size_t)-1;
}

bool rt_handle_remove(rt_handle_kind kind, const void *p) {
  pthread_mutex_lock(&H.lock);
  size_t j = find(p);
  bool ok = j != (size_t)-1 && H.s[j].kind == kind;
  if (ok) H.s[j].p = TOMB;
  pthread_mutex_unlock(&H.lock);
  return ok;
}

bool rt_handle_valid(rt_handle_kind kind, const void *p) {
  pthread_mutex_lock(&H.lock);
  size_t j = find(p);
  bool ok = j != (size_t)-1 && H.s[j].kind == kind;
  pthread_mutex_unlock(&H.lock);
  return ok;
}
