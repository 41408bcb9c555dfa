/* util/pw_file.c: see pw_file.h. */
#include "util/pw_file.h"

#include <stdio.h>
#include <stdlib.h>

char *pw_read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = fseek(f, 0, SEEK_END) ? -1 : ftell(f);
  if (n >= 0 && !fseek(f, 0, SEEK_SET) && (buf = malloc((size_t)n + 1)) &&
      fread(buf, 1, (size_t)n, f) == (size_t)n) {
    buf[n] = 0;
    *len = (size_t)n;
  } else {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}
