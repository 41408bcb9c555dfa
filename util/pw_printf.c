/* util/pw_printf.c: see pw_printf.h.
 *
 * Each conversion is handed to the host's snprintf with its flags, width
 * and precision kept and its length modifier replaced by the one that
 * matches the value as read (ll for integers, none for doubles), so the
 * host C library does the formatting CUDA's own printf does (CUDA's is
 * C99's).  Integer arguments of 4 bytes are narrowed per h/hh and
 * sign- or zero-extended per the conversion before that.
 */
#include "pw_printf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pw_printf_piece pw_printf_next(const char **sp) {
  const char *s = *sp;
  pw_printf_piece p = {.text = s};
  if (!*s) return p;
  if (*s != '%') {
    const char *e = strchr(s, '%');
    p.kind = PW_PRINTF_TEXT;
    p.len = e ? (size_t)(e - s) : strlen(s);
    *sp = s + p.len;
    return p;
  }
  if (s[1] == '%') {
    p.kind = PW_PRINTF_PERCENT;
    p.len = 2;
    *sp = s + 2;
    return p;
  }
  /* %[flags][width][.precision][length]conversion (C99 7.19.6.1) */
  s++;
  while (*s && strchr("-+ #0", *s)) s++;
  while (*s >= '0' && *s <= '9') s++;
  if (*s == '.') {
    s++;
    while (*s >= '0' && *s <= '9') s++;
  }
  size_t speclen = (size_t)(s - p.text);
  for (;;) {
    if (*s == 'h') p.length = p.length == -1 ? -2 : -1;
    else if (*s == 'l') p.length = p.length == 1 ? 2 : 1;
    else if (*s && strchr("jztLq", *s)) p.length = 2;
    else break;
    s++;
  }
  if (!*s) {   /* a lone '%' (and modifiers) at the end: printed as written */
    p.kind = PW_PRINTF_UNKNOWN;
    p.len = (size_t)(s - p.text);
    *sp = s;
    return p;
  }
  p.conv = *s++;
  p.len = (size_t)(s - p.text);
  *sp = s;
  if (speclen >= sizeof p.spec - 4) speclen = sizeof p.spec - 4;
  memcpy(p.spec, p.text, speclen);
  p.spec[speclen] = 0;
  switch (p.conv) {
  case 'd': case 'i': case 'u': case 'x': case 'X': case 'o': case 'c':
    p.kind = PW_PRINTF_INT;
    p.arg_size = p.length >= 1 ? 8 : 4;
    break;
  case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A':
    p.kind = PW_PRINTF_FLOAT;
    p.arg_size = 8;
    break;
  case 's': p.kind = PW_PRINTF_STRING; p.arg_size = 8; break;
  case 'p': p.kind = PW_PRINTF_POINTER; p.arg_size = 8; break;
  default: p.kind = PW_PRINTF_UNKNOWN; break;
  }
  return p;
}

void pw_printf_layout(const char *fmt, uint64_t *args_bytes, unsigned *nargs) {
  uint64_t off = 0;
  unsigned n = 0;
  for (const char *s = fmt;;) {
    pw_printf_piece p = pw_printf_next(&s);
    if (p.kind == PW_PRINTF_END) break;
    if (!p.arg_size) continue;
    off = (off + p.arg_size - 1) / p.arg_size * p.arg_size + p.arg_size;
    n++;
  }
  *args_bytes = off;
  *nargs = n;
}

static void append(char **out, size_t *len, const char *s, size_t n) {
  char *np = realloc(*out, *len + n + 1);
  if (!np) return;
  memcpy(np + *len, s, n);
  *len += n;
  np[*len] = 0;
  *out = np;
}

/* snprintf into a growing piece: the width may exceed any fixed buffer. */
#define PIECE(...)                                                        \
  do {                                                                    \
    int n_ = snprintf(NULL, 0, __VA_ARGS__);                              \
    if (n_ > 0) {                                                         \
      char *b_ = malloc((size_t)n_ + 1);                                  \
      if (b_) {                                                           \
        snprintf(b_, (size_t)n_ + 1, __VA_ARGS__);                        \
        append(out, len, b_, (size_t)n_);                                 \
        free(b_);                                                         \
      }                                                                   \
    }                                                                     \
  } while (0)

int pw_printf_format(const char *fmt, const pw_printf_io *io, char **out, size_t *len) {
  uint64_t off = 0;
  int nargs = 0;
  if (!*out) append(out, len, "", 0);
  for (const char *s = fmt;;) {
    pw_printf_piece p = pw_printf_next(&s);
    if (p.kind == PW_PRINTF_END) break;
    if (p.kind == PW_PRINTF_TEXT || p.kind == PW_PRINTF_UNKNOWN) {
      append(out, len, p.text, p.len);
      continue;
    }
    if (p.kind == PW_PRINTF_PERCENT) {
      append(out, len, "%", 1);
      continue;
    }
    uint64_t v = 0;
    off = (off + p.arg_size - 1) / p.arg_size * p.arg_size;
    if (!io->arg(io->ctx, off, p.arg_size, &v)) return -1;
    off += p.arg_size;
    nargs++;
    char spec[72];
    size_t sl = strlen(p.spec);
    memcpy(spec, p.spec, sl);
    switch (p.kind) {
    case PW_PRINTF_INT: {
      bool sgn = p.conv == 'd' || p.conv == 'i';
      long long sv;
      if (p.arg_size == 4) {
        if (p.length == -1) sv = sgn ? (long long)(short)v : (long long)(unsigned short)v;
        else if (p.length == -2) sv = sgn ? (long long)(signed char)v : (long long)(unsigned char)v;
        else sv = sgn ? (long long)(int32_t)v : (long long)(uint32_t)v;
      } else {
        sv = (long long)v;
      }
      if (p.conv == 'c') {
        memcpy(spec + sl, "c", 2);
        PIECE(spec, (int)(unsigned char)v);
      } else {
        spec[sl] = 'l';
        spec[sl + 1] = 'l';
        spec[sl + 2] = p.conv;
        spec[sl + 3] = 0;
        PIECE(spec, sv);
      }
      break;
    }
    case PW_PRINTF_FLOAT: {
      double d;
      memcpy(&d, &v, sizeof d);
      spec[sl] = p.conv;
      spec[sl + 1] = 0;
      PIECE(spec, d);
      break;
    }
    case PW_PRINTF_STRING: {
      char str[1024];
      if (!v) snprintf(str, sizeof str, "(null)");
      else if (!io->str(io->ctx, v, str, sizeof str)) return -1;
      memcpy(spec + sl, "s", 2);
      PIECE(spec, str);
      break;
    }
    case PW_PRINTF_POINTER:
      /* CUDA prints %p as 0x followed by the hexadecimal address */
      PIECE("0x%llx", (unsigned long long)v);
      break;
    case PW_PRINTF_END: case PW_PRINTF_TEXT: case PW_PRINTF_PERCENT: case PW_PRINTF_UNKNOWN:
      break;
    }
  }
  return nargs;
}
