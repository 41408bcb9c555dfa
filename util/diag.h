/* util/diag.h: diagnostics in the style of chibicc's verror_at.
 *
 *   file.ptx:12:7: error: expected ';', found 'ld'
 *      12 |   add.s32 %r1, %r2, %r3
 *         |       ^
 *
 * Errors in the input (pw_error_*) are kept apart from internal bugs
 * (pw_die, QBE's die()).  A pw_diag belongs to one compilation: it is not
 * shared between threads.  With out == NULL the messages are collected in a
 * buffer (the runtime hands them back to its caller instead of printing).
 */
#ifndef PW_UTIL_DIAG_H
#define PW_UTIL_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* A source text that positions refer to. */
typedef struct pw_src {
  const char *path;   /* shown in messages; e.g. "libcublas.so.13:fatbin#3/ptx#2" */
  const char *text;   /* may be NULL for binary inputs */
  size_t len;
} pw_src;

typedef struct pw_diag {
  FILE *out;          /* NULL: collect into buf */
  int nerrors;
  int nwarnings;
  int max_errors;     /* 0: unlimited; after this many errors, more are counted only */
  char *buf;          /* collected messages (malloc'd), when out == NULL */
  size_t buf_len, buf_cap;
} pw_diag;

void pw_diag_init(pw_diag *d, FILE *out);
void pw_diag_fini(pw_diag *d);
/* The collected text ("" when none); valid until the next message or fini. */
const char *pw_diag_text(const pw_diag *d);
/* Appends the messages another (collecting) pw_diag holds, and its counts. */
void pw_diag_append(pw_diag *d, const pw_diag *from);
/* Appends text as it is (no count): for tools that rewrite messages. */
void pw_diag_append_text(pw_diag *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* file:line:col: error: ..., then the source line and a caret. */
void pw_error_at(pw_diag *d, const pw_src *s, uint32_t line, uint32_t col,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void pw_warn_at(pw_diag *d, const pw_src *s, uint32_t line, uint32_t col,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void pw_verror_at(pw_diag *d, const pw_src *s, uint32_t line, uint32_t col,
                  bool warning, const char *fmt, va_list ap);
/* path: at byte offset 0x1234: error: ...  (binary containers) */
void pw_error_off(pw_diag *d, const char *path, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* path: error: ...  (no position) */
void pw_error(pw_diag *d, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Internal invariant broken: a bug in ptxwave, not in the input. */
_Noreturn void pw_die(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
#define PW_DIE(...) pw_die(__FILE__, __LINE__, __VA_ARGS__)
#define PW_ASSERT(c) ((c) ? (void)0 : pw_die(__FILE__, __LINE__, "assertion failed: %s", #c))

#endif
