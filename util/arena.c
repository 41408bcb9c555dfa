/* util/arena.c: see arena.h.  Chunks grow geometrically up to 1 MiB; a
 * request larger than a quarter of the chunk size gets a chunk of its own so
 * big objects do not waste the tail of the current chunk. */
#include "arena.h"

#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

struct pw_arena_chunk {
  pw_arena_chunk *next;
  size_t used, cap;
  _Alignas(16) unsigned char data[];
};

#define ARENA_MIN_CHUNK ((size_t)4096)
#define ARENA_MAX_CHUNK ((size_t)1 << 20)

void pw_arena_init(pw_arena *a) {
  a->head = NULL;
  a->total = 0;
  a->on_oom = NULL;
}

static void *out_of_memory(pw_arena *a) {
  if (a->on_oom) longjmp(*(jmp_buf *)a->on_oom, 1);
  return NULL;
}

void pw_arena_free(pw_arena *a) {
  pw_arena_chunk *c = a->head;
  while (c) {
    pw_arena_chunk *n = c->next;
    free(c);
    c = n;
  }
  a->head = NULL;
  a->total = 0;
}

static pw_arena_chunk *new_chunk(pw_arena *a, size_t cap) {
  /* calloc: fresh pages from the kernel are zero already, so big chunks
   * cost no memset; no byte of a chunk is handed out twice, so
   * allocations need none either. */
  pw_arena_chunk *c = calloc(1, sizeof(*c) + cap);
  if (!c) return NULL;
  c->used = 0;
  c->cap = cap;
  a->total += cap;
  return c;
}

void *pw_arena_alloc(pw_arena *a, size_t size) {
  if (size > SIZE_MAX / 2) return out_of_memory(a);
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  pw_arena_chunk *c = a->head;
  if (!c || c->cap - c->used < size) {
    size_t want = c ? c->cap * 2 : ARENA_MIN_CHUNK;
    if (want > ARENA_MAX_CHUNK) want = ARENA_MAX_CHUNK;
    if (size > want / 4) {
      /* Big request: own chunk, linked behind the head so the head's free
       * space stays usable. */
      pw_arena_chunk *big = new_chunk(a, size);
      if (!big) return out_of_memory(a);
      big->used = size;
      if (c) {
        big->next = c->next;
        c->next = big;
      } else {
        big->next = NULL;
        a->head = big;
      }
      return big->data;
    }
    pw_arena_chunk *n = new_chunk(a, want);
    if (!n) return out_of_memory(a);
    n->next = c;
    a->head = c = n;
  }
  void *p = c->data + c->used;
  c->used += size;
  return p;
}

void pw_arena_adopt(pw_arena *dst, pw_arena *src) {
  pw_arena_chunk *first = src->head;
  if (!first) return;
  pw_arena_chunk *last = first;
  while (last->next) last = last->next;
  if (dst->head) {
    last->next = dst->head->next;
    dst->head->next = first;
  } else {
    dst->head = first;
  }
  dst->total += src->total;
  src->head = NULL;
  src->total = 0;
}

void *pw_arena_alloc_array(pw_arena *a, size_t n, size_t elem) {
  if (elem && n > SIZE_MAX / elem) return out_of_memory(a);
  return pw_arena_alloc(a, n * elem);
}

char *pw_arena_strndup(pw_arena *a, const char *s, size_t n) {
  char *p = pw_arena_alloc(a, n + 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *pw_arena_strdup(pw_arena *a, const char *s) {
  return pw_arena_strndup(a, s, strlen(s));
}
