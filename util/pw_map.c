/* util/pw_map.c: the open-addressing hash map (pw_map.h). */
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "util/pw_map.h"

#define MAP_MIN_CAP 16u
#define MAP_MAX_CAP (1u << 30)

/* FNV-1a: short keys (PTX names are 2 to 30 bytes) hash in a few cycles,
 * and the map compares the full hash before the bytes. */
static uint32_t hash_bytes(const char *s, size_t len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 16777619u;
  return h;
}

/* The finaliser of MurmurHash3: arena pointers differ in a few middle bits,
 * which it spreads over the low bits the table indexes with. */
static uint32_t hash_ptr(const void *p) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return (uint32_t)x;
}

static pw_map_entry *new_table(pw_map *m, uint32_t cap) {
  pw_map_entry *e = m->arena ? PW_NEW_ARRAY(m->arena, pw_map_entry, cap)
                             : calloc(cap, sizeof *e);
  if (!e) PW_DIE("out of memory (hash map of %u entries)", cap);
  return e;
}

void pw_map_init(pw_map *m, pw_arena *a, uint32_t expect) {
  uint32_t cap = MAP_MIN_CAP;
  while (cap < MAP_MAX_CAP && cap / 2 < expect) cap *= 2;
  m->arena = a;
  m->n = 0;
  m->cap = cap;
  m->e = new_table(m, cap);
}

void pw_map_free(pw_map *m) {
  if (!m->arena) free(m->e);
  m->e = NULL;
  m->cap = m->n = 0;
}

static void grow(pw_map *m) {
  pw_map_entry *old = m->e;
  uint32_t oldcap = m->cap;
  if (oldcap >= MAP_MAX_CAP) PW_DIE("hash map too large");
  m->cap = oldcap ? oldcap * 2 : MAP_MIN_CAP;
  m->e = new_table(m, m->cap);
  uint32_t mask = m->cap - 1;
  for (uint32_t i = 0; i < oldcap; i++) {
    if (!old[i].key) continue;
    uint32_t j = old[i].hash & mask;
    while (m->e[j].key) j = (j + 1) & mask;
    m->e[j] = old[i];
  }
  if (!m->arena) free(old);
}

/* The key's entry, or the empty slot that ends its probe sequence.
 * Inlined: it is the whole cost of a lookup (the PTX parser's names). */
static inline __attribute__((always_inline)) pw_map_entry *probe(const pw_map *m, const void *key, uint32_t len, uint32_t h) {
  uint32_t mask = m->cap - 1;
  for (uint32_t j = h & mask;; j = (j + 1) & mask) {
    pw_map_entry *e = &m->e[j];
    if (!e->key) return e;
    if (e->hash != h || e->len != len) continue;
    if (len == PW_MAP_PTR ? e->key == key : memcmp(e->key, key, len) == 0) return e;
  }
}

static pw_map_entry *find(const pw_map *m, const void *key, uint32_t len, uint32_t h) {
  if (!m->cap) return NULL;
  pw_map_entry *e = probe(m, key, len, h);
  return e->key ? e : NULL;
}

static void **slot(pw_map *m, const void *key, uint32_t len, uint32_t h, bool *found) {
  if ((m->n + 1) * 4 > m->cap * 3) grow(m);
  pw_map_entry *e = probe(m, key, len, h);
  *found = e->key != NULL;
  if (!e->key) {
    *e = (pw_map_entry){.key = key, .len = len, .hash = h};
    m->n++;
  }
  return &e->val;
}

/* Knuth's Algorithm R: empty the slot, then move back each entry of the
 * cluster after it whose home slot is not between the hole and itself,
 * so every remaining key is still reached from its home. */
static void remove_at(pw_map *m, pw_map_entry *e) {
  uint32_t mask = m->cap - 1;
  uint32_t i = (uint32_t)(e - m->e);
  for (;;) {
    m->e[i].key = NULL;
    uint32_t j = i;
    for (;;) {
      j = (j + 1) & mask;
      if (!m->e[j].key) {
        m->n--;
        return;
      }
      uint32_t home = m->e[j].hash & mask;
      bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (!stays) break;
    }
    m->e[i] = m->e[j];
    i = j;
  }
}

/* A byte span's key pointer must not be NULL (NULL marks an empty slot). */
static const char *span_key(const char *s, size_t len) {
  if (len >= PW_MAP_PTR) PW_DIE("hash map key too long (%zu bytes)", len);
  return s ? s : "";
}

void **pw_map_str_slot(pw_map *m, const char *s, size_t len, bool *found) {
  s = span_key(s, len);
  return slot(m, s, (uint32_t)len, hash_bytes(s, len), found);
}

void **pw_map_ptr_slot(pw_map *m, const void *p, bool *found) {
  if (!p) PW_DIE("NULL hash map key");
  return slot(m, p, PW_MAP_PTR, hash_ptr(p), found);
}

pw_map_entry *pw_map_str_find(const pw_map *m, const char *s, size_t len) {
  if (len >= PW_MAP_PTR) return NULL;
  s = s ? s : "";
  return find(m, s, (uint32_t)len, hash_bytes(s, len));
}

pw_map_entry *pw_map_ptr_find(const pw_map *m, const void *p) {
  return p ? find(m, p, PW_MAP_PTR, hash_ptr(p)) : NULL;
}

void *pw_map_str_get(const pw_map *m, const char *s, size_t len) {
  pw_map_entry *e = pw_map_str_find(m, s, len);
  return e ? e->val : NULL;
}

void *pw_map_ptr_get(const pw_map *m, const void *p) {
  pw_map_entry *e = pw_map_ptr_find(m, p);
  return e ? e->val : NULL;
}

void pw_map_str_put(pw_map *m, const char *s, size_t len, void *val) {
  bool found;
  *pw_map_str_slot(m, s, len, &found) = val;
}

void pw_map_ptr_put(pw_map *m, const void *p, void *val) {
  bool found;
  *pw_map_ptr_slot(m, p, &found) = val;
}

bool pw_map_str_remove(pw_map *m, const char *s, size_t len) {
  pw_map_entry *e = pw_map_str_find(m, s, len);
  if (e) remove_at(m, e);
  return e != NULL;
}

bool pw_map_ptr_remove(pw_map *m, const void *p) {
  pw_map_entry *e = pw_map_ptr_find(m, p);
  if (e) remove_at(m, e);
  return e != NULL;
}

pw_map_entry *pw_map_next(const pw_map *m, const pw_map_entry *e) {
  uint32_t i = e ? (uint32_t)(e - m->e) + 1 : 0;
  for (; i < m->cap; i++)
    if (m->e[i].key) return &m->e[i];
  return NULL;
}
