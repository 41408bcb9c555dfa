/* util/pw_vec.c: growing malloc'd arrays (pw_vec.h). */
#include <stdint.h>
#include <stdlib.h>

#include "util/pw_vec.h"

void *pw_vec_grow(void *p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return p;
  size_t nc = *cap ? *cap : 8;
  while (nc < need) {
    if (nc > SIZE_MAX / 2) return NULL;
    nc *= 2;
  }
  if (elem && nc > SIZE_MAX / elem) return NULL;
  void *np = realloc(p, nc * elem);
  if (!np) return NULL;
  *cap = nc;
  return np;
}
