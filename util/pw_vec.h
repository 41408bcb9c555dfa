/* util/pw_vec.h: room in a malloc'd array that grows by doubling.
 *
 * The arrays of the runtime and the emulator live as long as the handles
 * they belong to, so they are malloc'd, not arena memory; each grew by
 * hand (a capacity doubled, realloc, a check, two assignments).  The
 * caller keeps the array, its length and its capacity; this only makes
 * room, and reports failure instead of aborting (the runtime returns
 * CUDA_ERROR_OUT_OF_MEMORY, never ends its host program):
 *
 *   T *na = pw_vec_grow(a, &cap, n + 1, sizeof *na);
 *   if (!na) return CUDA_ERROR_OUT_OF_MEMORY;   // a and cap unchanged
 *   a = na;
 *   a[n++] = x;
 */
#ifndef PW_UTIL_VEC_H
#define PW_UTIL_VEC_H

#include <stddef.h>

/* An array with room for at least need elements of elem bytes, holding
 * what p held: p itself when *cap suffices, else p reallocated to a
 * capacity doubled from *cap (from 8 when it is 0) until need fits, and
 * *cap updated.  NULL when the memory cannot be had or the size
 * overflows: p and *cap are then unchanged, p still the caller's. */
void *pw_vec_grow(void *p, size_t *cap, size_t need, size_t elem);

#endif
