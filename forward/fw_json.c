/* forward/fw_json.c: just enough JSON (RFC 8259) to read cuDNN's execution
 * plan back (CUDNN_ATTR_EXECUTION_PLAN_JSON_REPRESENTATION, fw_dnn.c).
 *
 * No tree is built: a value is a span [p, end) of the text, and lookups
 * walk it, skipping what they do not need (fw_json_skip).  Strings are
 * compared as they stand (the keys and names read here have no escapes).
 * Every step is bounded by `end`: a malformed text gives NULL, never a read
 * past the buffer.
 */
#include <stdlib.h>
#include <string.h>

#include "forward/fw_json.h"

static const char *ws(const char *p, const char *end) {
  if (!p) return end;   /* an absent value: every caller then finds nothing */
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
  return p;
}

/* past the string starting at p (at its opening quote) */
static const char *skip_string(const char *p, const char *end) {
  for (p++; p < end; p++) {
    if (*p == '\\') p++;
    else if (*p == '"') return p + 1;
  }
  return NULL;
}

const char *fw_json_skip(const char *p, const char *end) {
  if (!p) return NULL;
  p = ws(p, end);
  if (p >= end) return NULL;
  if (*p == '"') return skip_string(p, end);
  if (*p == '{' || *p == '[') {
    /* balanced brackets, strings skipped whole */
    int depth = 0;
    for (; p < end; p++) {
      if (*p == '"') {
        if (!(p = skip_string(p, end))) return NULL;
        p--;
      } else if (*p == '{' || *p == '[') {
        depth++;
      } else if (*p == '}' || *p == ']') {
        if (--depth == 0) return p + 1;
      }
    }
    return NULL;
  }
  /* a number, true, false, null */
  const char *q = p;
  while (q < end && *q != ',' && *q != '}' && *q != ']' && *q != ' ' && *q != '\n') q++;
  return q > p ? q : NULL;
}

const char *fw_json_nth_member(const char *obj, const char *end, int i, const char **key,
                               int *key_len) {
  const char *p = ws(obj, end);
  if (p >= end || *p != '{') return NULL;
  p = ws(p + 1, end);
  for (int n = 0; p < end && *p == '"'; n++) {
    const char *k = p + 1, *q = skip_string(p, end);
    if (!q) return NULL;
    p = ws(q, end);
    if (p >= end || *p != ':') return NULL;
    p = ws(p + 1, end);
    if (n == i) {
      *key = k;
      *key_len = (int)(q - 1 - k);
      return p;
    }
    if (!(p = fw_json_skip(p, end))) return NULL;
    p = ws(p, end);
    if (p < end && *p == ',') p = ws(p + 1, end);
  }
  return NULL;
}

const char *fw_json_member(const char *obj, const char *end, const char *key) {
  size_t klen = strlen(key);
  const char *k, *v;
  int n;
  for (int i = 0; (v = fw_json_nth_member(obj, end, i, &k, &n)); i++)
    if ((size_t)n == klen && !memcmp(k, key, klen)) return v;
  return NULL;
}

const char *fw_json_index(const char *arr, const char *end, int i) {
  const char *p = ws(arr, end);
  if (p >= end || *p != '[') return NULL;
  p = ws(p + 1, end);
  if (p < end && *p == ']') return NULL;
  for (int n = 0; p < end; n++) {
    if (n == i) return p;
    if (!(p = fw_json_skip(p, end))) return NULL;
    p = ws(p, end);
    if (p >= end || *p != ',') return NULL;
    p = ws(p + 1, end);
  }
  return NULL;
}

int fw_json_length(const char *arr, const char *end) {
  int n = 0;
  while (fw_json_index(arr, end, n)) n++;
  return n;
}

bool fw_json_is(const char *v, const char *end, const char *s) {
  size_t n = strlen(s);
  v = v ? ws(v, end) : NULL;
  return v && v < end && *v == '"' && (size_t)(end - v) > n + 1 && !memcmp(v + 1, s, n) &&
         v[n + 1] == '"';
}

bool fw_json_int(const char *v, const char *end, long long *out) {
  v = v ? ws(v, end) : NULL;
  if (!v || v >= end) return false;
  const char *q = fw_json_skip(v, end);
  if (!q) return false;
  /* a number, or a string holding one (cuDNN writes tensor names so) */
  if (*v == '"') v++, q--;
  char buf[32];
  size_t n = (size_t)(q - v);
  if (n == 0 || n >= sizeof buf) return false;
  memcpy(buf, v, n);
  buf[n] = 0;
  char *e;
  *out = strtoll(buf, &e, 10);
  return *e == 0;
}

bool fw_json_true(const char *v, const char *end) {
  v = v ? ws(v, end) : NULL;
  return v && end - v >= 4 && !memcmp(v, "true", 4);
}
