/* util/pw_file.h: a whole file read into memory.
 *
 * Ten places (the runtime's module loader and HIP backend, the JIT tool,
 * tests and benchmarks) each read a file the same way by hand; they share
 * this one, which checks every step (a file that cannot be sized, or
 * shrinks while read, is a NULL, never a short buffer). */
#ifndef PW_UTIL_FILE_H
#define PW_UTIL_FILE_H

#include <stddef.h>

/* The contents of path, malloc'd, with a NUL after the last byte (the
 * text can be used as a C string when it has no NUL of its own); *len the
 * byte count without that NUL.  NULL when the file cannot be opened, its
 * size known, the memory had or all of it read; *len is then untouched. */
char *pw_read_file(const char *path, size_t *len);

#endif
