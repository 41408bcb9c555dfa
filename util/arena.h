/* util/arena.h: bump allocation for IR and scratch data.
 *
 * An arena owns every object allocated from it and frees them in one call
 * (QBE's per-function pool, NIR's ralloc).  No object is freed on its own.
 * Arenas are not shared between threads: each module being compiled owns
 * its arena, so several modules compile at once with no locking.
 */
#ifndef PW_UTIL_ARENA_H
#define PW_UTIL_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct pw_arena_chunk pw_arena_chunk;

typedef struct pw_arena {
  pw_arena_chunk *head;   /* newest chunk; older chunks hang off ->next */
  size_t total;           /* bytes obtained from malloc, for statistics */
  /* A jmp_buf * (setjmp.h) or NULL.  Set: an allocation that fails
   * longjmps there (value 1) instead of returning NULL: the owner's
   * recovery point, so that out of memory in code that allocates at
   * hundreds of places (the parser, the emulator's decoder) becomes an
   * error return, not a NULL dereference or an abort.  The owner sets it
   * around its work and clears it after; what the arena holds stays
   * valid (the failed allocation took nothing). */
  void *on_oom;
} pw_arena;

void pw_arena_init(pw_arena *a);
void pw_arena_free(pw_arena *a);
/* Returns zeroed memory aligned to 16 bytes; NULL only when malloc fails
 * or size overflows. */
void *pw_arena_alloc(pw_arena *a, size_t size);
void *pw_arena_alloc_array(pw_arena *a, size_t n, size_t elem);
char *pw_arena_strndup(pw_arena *a, const char *s, size_t n);
char *pw_arena_strdup(pw_arena *a, const char *s);
/* Moves every chunk of src into dst (behind dst's head, whose free space
 * stays usable); src is left empty.  What was allocated from src now dies
 * with dst: ir_link() merges two modules' arenas this way. */
void pw_arena_adopt(pw_arena *dst, pw_arena *src);

#define PW_NEW(a, T) ((T *)pw_arena_alloc((a), sizeof(T)))
#define PW_NEW_ARRAY(a, T, n) ((T *)pw_arena_alloc_array((a), (n), sizeof(T)))

#endif
