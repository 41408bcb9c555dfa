/* util/diag.c: see diag.h. */
#include "diag.h"

#include <stdlib.h>
#include <string.h>

void pw_diag_init(pw_diag *d, FILE *out) {
  memset(d, 0, sizeof(*d));
  d->out = out;
}

void pw_diag_fini(pw_diag *d) {
  free(d->buf);
  d->buf = NULL;
  d->buf_len = d->buf_cap = 0;
}

const char *pw_diag_text(const pw_diag *d) { return d->buf ? d->buf : ""; }

static void emitv(pw_diag *d, const char *fmt, va_list ap) {
  if (d->out) {
    vfprintf(d->out, fmt, ap);
    return;
  }
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(NULL, 0, fmt, ap2);
  va_end(ap2);
  if (n < 0) return;
  size_t need = d->buf_len + (size_t)n + 1;
  if (need > d->buf_cap) {
    size_t cap = d->buf_cap ? d->buf_cap * 2 : 256;
    while (cap < need) cap *= 2;
    char *nb = realloc(d->buf, cap);
    if (!nb) return;
    d->buf = nb;
    d->buf_cap = cap;
  }
  vsnprintf(d->buf + d->buf_len, (size_t)n + 1, fmt, ap);
  d->buf_len += (size_t)n;
}

static void emit(pw_diag *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emitv(d, fmt, ap);
  va_end(ap);
}

void pw_diag_append_text(pw_diag *d, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emitv(d, fmt, ap);
  va_end(ap);
}

void pw_diag_append(pw_diag *d, const pw_diag *from) {
  if (from->buf_len) emit(d, "%s", pw_diag_text(from));
  d->nerrors += from->nerrors;
  d->nwarnings += from->nwarnings;
}

/* Counts the message and says whether it is still to be shown. */
static bool count(pw_diag *d, bool warning) {
  if (warning) {
    d->nwarnings++;
    return true;
  }
  d->nerrors++;
  if (d->max_errors && d->nerrors == d->max_errors + 1) {
    emit(d, "too many errors; further errors are counted but not shown\n");
  }
  return !(d->max_errors && d->nerrors > d->max_errors);
}

/* Control bytes (ESC, BEL, CR ...; not tab or newline) of the input go
 * out as \xNN: a message quotes the input's tokens and lines, and raw
 * terminal escape sequences from a hostile file must not reach the user's
 * terminal. */
static bool is_ctl(unsigned char c) { return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f; }

static void emit_escaped(pw_diag *d, const char *s, size_t n) {
  size_t run = 0;
  for (size_t i = 0; i < n; i++) {
    if (!is_ctl((unsigned char)s[i])) continue;
    if (i > run) emit(d, "%.*s", (int)(i - run), s + run);
    emit(d, "\\x%02x", (unsigned char)s[i]);
    run = i + 1;
  }
  if (n > run) emit(d, "%.*s", (int)(n - run), s + run);
}

/* A message, formatted, with its control bytes escaped. */
static void emit_msg(pw_diag *d, const char *fmt, va_list ap) {
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int mn = vsnprintf(small, sizeof small, fmt, ap2);
  va_end(ap2);
  if (mn >= 0 && (size_t)mn < sizeof small) {
    emit_escaped(d, small, (size_t)mn);
  } else if (mn >= 0) {
    char *big = malloc((size_t)mn + 1);
    if (big) {
      vsnprintf(big, (size_t)mn + 1, fmt, ap);
      emit_escaped(d, big, (size_t)mn);
      free(big);
    }
  }
}

void pw_verror_at(pw_diag *d, const pw_src *s, uint32_t line, uint32_t col,
                  bool warning, const char *fmt, va_list ap) {
  if (!count(d, warning)) return;
  const char *path = s && s->path ? s->path : "<input>";
  emit(d, "%s:%u:%u: %s: ", path, line, col, warning ? "warning" : "error");
  emit_msg(d, fmt, ap);
  emit(d, "\n");
  if (!s || !s->text || line == 0) return;
  /* Find the line: positions are 1-based. */
  const char *p = s->text, *end = s->text + s->len;
  for (uint32_t l = 1; l < line && p < end; p++)
    if (*p == '\n') l++;
  if (p >= end && line > 1) return;
  const char *e = p;
  while (e < end && *e != '\n' && *e != '\r') e++;
  int width = (int)(e - p);
  if (width > 300) width = 300; /* minified PTX lines can be huge */
  emit(d, "%6u | ", line);
  emit_escaped(d, p, (size_t)width);
  emit(d, "\n       | ");
  for (uint32_t i = 1; i < col && (int)i <= width; i++)
    emit(d, "%s", p[i - 1] == '\t' ? "\t" : is_ctl((unsigned char)p[i - 1]) ? "    " : " ");
  emit(d, "^\n");
}

void pw_error_at(pw_diag *d, const pw_src *s, uint32_t line, uint32_t col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pw_verror_at(d, s, line, col, false, fmt, ap);
  va_end(ap);
}

void pw_warn_at(pw_diag *d, const pw_src *s, uint32_t line, uint32_t col, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pw_verror_at(d, s, line, col, true, fmt, ap);
  va_end(ap);
}

void pw_error_off(pw_diag *d, const char *path, uint64_t off, const char *fmt, ...) {
  if (!count(d, false)) return;
  emit(d, "%s: at byte offset 0x%llx: error: ", path ? path : "<input>", (unsigned long long)off);
  va_list ap;
  va_start(ap, fmt);
  emit_msg(d, fmt, ap);
  va_end(ap);
  emit(d, "\n");
}

void pw_error(pw_diag *d, const char *path, const char *fmt, ...) {
  if (!count(d, false)) return;
  emit(d, "%s: error: ", path ? path : "ptxwave");
  va_list ap;
  va_start(ap, fmt);
  emit_msg(d, fmt, ap);
  va_end(ap);
  emit(d, "\n");
}

_Noreturn void pw_die(const char *file, int line, const char *fmt, ...) {
  fprintf(stderr, "ptxwave: internal error at %s:%d: ", file, line);
  va_list ap;
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nThis is a bug in ptxwave; please report it with the input.\n");
  abort();
}
