/* util/pw_map.h: the project's one hash map.
 *
 * Open addressing with linear probing over a power-of-two table of
 * {key, length, hash, value} entries, grown by doubling at a load of 3/4.
 * Keys are byte spans (pointer + length: names, PTX tokens; not copied, so
 * they must outlive the map) or pointers (IR objects); one map may hold
 * both kinds.  Values are void *; an integer is stored cast to uintptr_t,
 * and pw_map_*_find tells a stored 0 from an absent key.
 *
 * Memory: a map made with an arena takes its tables from it (a grown map
 * abandons the old table there: at most half the map's memory is waste,
 * and it dies with the arena); a map with no arena (zero-initialised, or
 * pw_map_init(m, NULL, n)) uses malloc and is released by pw_map_free.
 * No global state: each map is its owner's, and maps are not shared
 * between threads.
 *
 * Deletion shifts the entries after the removed one back (Knuth 6.4,
 * Algorithm R), so there are no tombstones and a map that is filled and
 * emptied over and over (the PTX parser's '{ }' scopes) stays short.
 *
 * Iteration (pw_map_next) goes in table order, which depends only on the
 * keys, their insertion order and the sizes asked for: the same inputs
 * give the same order, so error messages listed in it are stable.
 */
#ifndef PW_UTIL_MAP_H
#define PW_UTIL_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"

/* The length of a pointer key (no byte span is this long). */
#define PW_MAP_PTR UINT32_MAX

typedef struct pw_map_entry {
  const void *key;      /* NULL: an empty slot */
  uint32_t len;         /* the key's bytes, or PW_MAP_PTR */
  uint32_t hash;
  void *val;
} pw_map_entry;

typedef struct pw_map {
  pw_arena *arena;      /* NULL: the tables are malloc'd */
  pw_map_entry *e;      /* cap entries; NULL until the first insertion */
  uint32_t cap, n;
} pw_map;

/* Room for expect keys before the first growth.  a NULL: malloc. */
void pw_map_init(pw_map *m, pw_arena *a, uint32_t expect);
/* Frees a malloc'd map's table; nothing for an arena's.  The map is left
 * empty and usable. */
void pw_map_free(pw_map *m);

/* The value slot of the key, inserted (value NULL) when absent; *found
 * says whether it was there.  The slot moves when the map grows: use it
 * before the next insertion. */
void **pw_map_str_slot(pw_map *m, const char *s, size_t len, bool *found);
void **pw_map_ptr_slot(pw_map *m, const void *p, bool *found);
/* The entry of the key, NULL when absent (valid until the next change). */
pw_map_entry *pw_map_str_find(const pw_map *m, const char *s, size_t len);
pw_map_entry *pw_map_ptr_find(const pw_map *m, const void *p);
/* The value, NULL when absent. */
void *pw_map_str_get(const pw_map *m, const char *s, size_t len);
void *pw_map_ptr_get(const pw_map *m, const void *p);
/* Sets the value of the key, inserting it when absent. */
void pw_map_str_put(pw_map *m, const char *s, size_t len, void *val);
void pw_map_ptr_put(pw_map *m, const void *p, void *val);
/* Removes the key; false when it was absent. */
bool pw_map_str_remove(pw_map *m, const char *s, size_t len);
bool pw_map_ptr_remove(pw_map *m, const void *p);

/* The entry after e in table order (the first when e is NULL); NULL at the
 * end.  The map must not change during a walk.
 *   for (pw_map_entry *e = NULL; (e = pw_map_next(m, e));) ... */
pw_map_entry *pw_map_next(const pw_map *m, const pw_map_entry *e);

#endif
