/* tests/unit/test_ptx_mutate.c: the PTX front end on every seed of the
 * fuzzer's corpus (fuzz/corpus/ptx) with, at each token, one to three
 * tokens deleted, the token repeated, swapped with the next, or replaced
 * by another token of the file.  Each variant must either fail to parse, with an error,
 * or parse into IR that verifies: the parser, not the verifier, is where
 * bad PTX is refused (with a line and column), and libFuzzer's random
 * mutations reach these deletions only rarely (CI's 30 s run found one an
 * add with its .s32 deleted; this walk found 805 variants of that kind
 * in the seeds, and the other mutations 39 more, all fixed in
 * ptx_instr.c).  Deterministic, so a failure
 * here is the same on every machine. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ptx/ptx_lex.h"
#include "ptx/ptx_parse.h"
#include "util/pw_file.h"

static const char *corpus_dir;

/* Parses text; returns false (with the verifier's report in *why) when it
 * parsed into IR that does not verify. */
static bool parses_or_refuses(const char *text, size_t len, char **why) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 10;
  ir_module *m = ptx_parse("mutant.ptx", text, len, &d, NULL);
  bool ok = true;
  if (m) {
    pw_diag v;
    pw_diag_init(&v, NULL);
    ok = ir_verify(m, NULL, &v);
    if (!ok) *why = strdup(pw_diag_text(&v));
    pw_diag_fini(&v);
    ir_module_destroy(m);
  } else if (d.nerrors == 0) {
    ok = false;
    *why = strdup("refused without an error");
  }
  pw_diag_fini(&d);
  return ok;
}

START_TEST(deleted_tokens_parse_or_refuse) {
  DIR *dir = opendir(corpus_dir);
  ck_assert_msg(dir != NULL, "cannot open %s", corpus_dir);
  unsigned files = 0, variants = 0, bad = 0;
  struct dirent *e;
  while ((e = readdir(dir))) {
    size_t nl = strlen(e->d_name);
    if (nl < 5 || strcmp(e->d_name + nl - 4, ".ptx")) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", corpus_dir, e->d_name);
    size_t n;
    char *s = pw_read_file(path, &n);
    ck_assert_msg(s != NULL, "cannot read %s", path);
    files++;
    /* the tokens' extents */
    size_t cap = 256, k = 0;
    size_t *st = malloc(cap * sizeof *st), *en = malloc(cap * sizeof *en);
    ptx_lexer lx;
    ptx_lex_init(&lx, s, n);
    ptx_tok t;
    do {
      ptx_lex_next(&lx, &t);
      if (k == cap) {
        cap *= 2;
        st = realloc(st, cap * sizeof *st);
        en = realloc(en, cap * sizeof *en);
      }
      st[k] = (size_t)(t.text - s);
      en[k++] = (size_t)(t.text - s) + t.len;
    } while (t.kind != PTX_TOK_EOF);
    char *b = malloc(2 * n + 1);
    char what[160];
#define TRY(len, ...)                                                                           \
  do {                                                                                          \
    char *why = NULL;                                                                           \
    variants++;                                                                                 \
    if (!parses_or_refuses(b, (len), &why)) {                                                   \
      snprintf(what, sizeof what, __VA_ARGS__);                                                 \
      if (++bad <= 3) fprintf(stderr, "%s: %s parses into IR that does not verify:\n%s\n", path, what, why); \
      free(why);                                                                                \
    }                                                                                           \
  } while (0)
    for (size_t i = 0; i + 1 < k; i++) {   /* never the EOF token */
      size_t x = st[i], y = en[i];
      /* delete tokens i .. i+w-1 */
      for (size_t w = 1; w <= 3 && i + w < k; w++) {
        size_t yw = en[i + w - 1];
        memcpy(b, s, x);
        memcpy(b + x, s + yw, n - yw);
        TRY(n - (yw - x), "deleting '%.*s' (bytes %zu..%zu)", (int)(yw - x), s + x, x, yw);
      }
      /* repeat token i */
      memcpy(b, s, y);
      memcpy(b + y, s + x, y - x);
      memcpy(b + y + (y - x), s + y, n - y);
      TRY(n + (y - x), "repeating '%.*s' (byte %zu)", (int)(y - x), s + x, x);
      /* swap tokens i and i+1, keeping the text between */
      if (i + 2 < k) {
        size_t x2 = st[i + 1], y2 = en[i + 1], o = x;
        memcpy(b, s, x);
        memcpy(b + o, s + x2, y2 - x2), o += y2 - x2;
        memcpy(b + o, s + y, x2 - y), o += x2 - y;
        memcpy(b + o, s + x, y - x), o += y - x;
        memcpy(b + o, s + y2, n - y2), o += n - y2;
        TRY(o, "swapping '%.*s' and '%.*s' (byte %zu)", (int)(y - x), s + x, (int)(y2 - x2), s + x2, x);
      }
      /* token i replaced by three other tokens of the file (a type by
       * another type, a register by a literal: what found .reg .f32 %rd,
       * fma.f64.f32 and match with an immediate result) */
      for (size_t r = 0; r < 3; r++) {
        size_t j = (i * 7919 + r * (k / 3) + 1) % (k - 1), xj = st[j], yj = en[j], o = x;
        memcpy(b, s, x);
        memcpy(b + o, s + xj, yj - xj), o += yj - xj;
        memcpy(b + o, s + y, n - y), o += n - y;
        TRY(o, "replacing '%.*s' (byte %zu) by '%.*s'", (int)(y - x), s + x, x, (int)(yj - xj), s + xj);
      }
    }
#undef TRY
    free(b);
    free(st);
    free(en);
    free(s);
  }
  closedir(dir);
  printf("%u seeds, %u variants, %u failed\n", files, variants, bad);
  ck_assert_uint_gt(files, 0);
  ck_assert_uint_eq(bad, 0);
}
END_TEST

int main(int argc, char **argv) {
  corpus_dir = argc > 1 ? argv[1] : "fuzz/corpus/ptx";
  Suite *s = suite_create("ptx_mutate");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 0);   /* meson's timeout governs */
  tcase_add_test(tc, deleted_tokens_parse_or_refuse);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
