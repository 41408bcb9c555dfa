/* tests/forward/json_test.c: forward/fw_json.c, the in-place JSON reader
 * the forwarding layer reads cuDNN's plans with: lookups in a plan-shaped
 * text (values worked out by hand), then every prefix of it and texts
 * broken on purpose, which must give NULL/false and never read past the
 * end (the buffer is cut exactly there, so ASan would see one byte more). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "forward/fw_json.h"

#define EXPECT(c)                                                          \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "%s:%d: %s does not hold\n", __FILE__, __LINE__, #c); \
      return 1;                                                            \
    }                                                                      \
  } while (0)

static const char plan[] =
    "{\"cudnnVersion\":91900,\"operationGraph\":{\"tensors\":[{\"name\":\"97\","
    "\"dataType\":\"CUDNN_DATA_FLOAT\",\"dim\":[1, 16,8],\"stride\":[128,8,1],"
    "\"isVirtual\":false},{\"name\":\"a\\\"b\",\"isVirtual\":true,\"dim\":[]}],"
    "\"nodes\":[{\"operation\":\"CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR\","
    "\"matA\":\"97\"}]},\"blob\":\"{[\\\"]}\"}";

/* the lookups the layer makes; 0 when each finds what it should */
static int lookups(const char *t, const char *end, int *found) {
  const char *g = fw_json_member(t, end, "operationGraph");
  const char *ts = fw_json_member(g, end, "tensors");
  const char *t0 = fw_json_index(ts, end, 0), *t1 = fw_json_index(ts, end, 1);
  long long v = 0;
  *found = 0;
  (void)v;
  *found += fw_json_int(fw_json_member(t0, end, "name"), end, &v) && v == 97;
  *found += fw_json_is(fw_json_member(t0, end, "dataType"), end, "CUDNN_DATA_FLOAT");
  *found += fw_json_length(fw_json_member(t0, end, "dim"), end) == 3;
  *found += fw_json_int(fw_json_index(fw_json_member(t0, end, "dim"), end, 1), end, &v) && v == 16;
  *found += !fw_json_true(fw_json_member(t0, end, "isVirtual"), end);
  *found += fw_json_true(fw_json_member(t1, end, "isVirtual"), end);
  *found += fw_json_length(fw_json_member(t1, end, "dim"), end) == 0;
  *found += fw_json_index(ts, end, 2) == NULL;
  const char *n0 = fw_json_index(fw_json_member(g, end, "nodes"), end, 0);
  *found += fw_json_is(fw_json_member(n0, end, "matA"), end, "97");
  /* a string holding brackets and an escaped quote is skipped whole */
  *found += fw_json_member(t, end, "blob") != NULL && fw_json_member(t, end, "nothere") == NULL;
  const char *key = NULL;
  int klen = 0;
  *found += fw_json_nth_member(t, end, 0, &key, &klen) && klen == 12 && !memcmp(key, "cudnnVersion", 12);
  return 0;
}

int main(void) {
  size_t len = strlen(plan);
  int found = 0;
  /* the text without its NUL: the end is the end (a global: ASan guards it) */
  static char buf[sizeof plan - 1];
  memcpy(buf, plan, len);
  EXPECT(!lookups(buf, buf + len, &found));
  EXPECT(found == 11);
  /* every prefix: nothing is read past the cut (ASan watches in the
   * sanitized build), and one that cuts the node short misses its operand */
  size_t node_end = (size_t)(strstr(plan, "\"matA\":\"97\"") - plan) + 11;
  for (size_t n = 0; n < len; n++) {
    char *p = malloc(n ? n : 1);
    memcpy(p, plan, n);
    lookups(p, p + n, &found);
    EXPECT(n >= node_end || found < 11);
    free(p);
  }
  /* broken texts */
  static const char *const broken[] = {"", "{", "[", "\"", "{\"a\"", "{\"a\":", "{\"a\" 1}",
                                       "[1,", "[1 2]", "{\"a\":[}", "nul", "{]"};
  for (unsigned i = 0; i < sizeof broken / sizeof broken[0]; i++) {
    size_t n = strlen(broken[i]);
    char *p = malloc(n ? n : 1);
    memcpy(p, broken[i], n);
    long long v = 0;
    /* a member's value is found lazily; it is read only when used */
    EXPECT(!fw_json_int(fw_json_member(p, p + n, "a"), p + n, &v));
    fw_json_length(fw_json_member(p, p + n, "a"), p + n);
    fw_json_length(p, p + n);
    fw_json_skip(p, p + n);
    free(p);
  }
  /* NULL in, NULL out */
  EXPECT(!fw_json_member(NULL, buf + len, "a") && !fw_json_index(NULL, buf + len, 0) &&
         fw_json_length(NULL, buf + len) == 0 && !fw_json_is(NULL, buf + len, "x") &&
         !fw_json_true(NULL, buf + len) && !fw_json_skip(NULL, buf + len));
  printf("json_test: ok\n");
  return 0;
}
