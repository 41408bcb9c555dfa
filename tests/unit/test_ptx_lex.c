/* tests/unit/test_ptx_lex.c: the PTX lexer.  Expected values are worked by
 * hand from the PTX ISA's token syntax (and IEEE bit patterns for floats). */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "ptx/ptx_lex.h"

/* Lexes s into at most n tokens; returns how many came before EOF. */
static int lex_all(const char *s, ptx_tok *out, int n) {
  ptx_lexer lx;
  ptx_lex_init(&lx, s, strlen(s));
  for (int i = 0; i < n; i++) {
    ptx_lex_next(&lx, &out[i]);
    if (out[i].kind == PTX_TOK_EOF) return i;
  }
  return n;
}

static void assert_tok(const ptx_tok *t, ptx_tok_kind k, const char *text) {
  ck_assert_msg(t->kind == k, "kind %s, want %s for '%.*s'", ptx_tok_kind_name(t->kind),
                ptx_tok_kind_name(k), (int)t->len, t->text);
  ck_assert_uint_eq(t->len, strlen(text));
  ck_assert_msg(!memcmp(t->text, text, t->len), "text '%.*s', want '%s'", (int)t->len,
                t->text, text);
}

START_TEST(instruction_words_and_operands) {
  ptx_tok t[32];
  int n = lex_all("\tld.global.nc.v4.f32 \t{%f26, %f27}, [%rd27+-4];", t, 32);
  ck_assert_int_eq(n, 18);
  assert_tok(&t[0], PTX_TOK_IDENT, "ld");
  ck_assert_uint_eq(t[0].col, 2);
  ck_assert(t[0].flags & PTX_TOKF_SPACE_BEFORE);
  assert_tok(&t[1], PTX_TOK_DOTWORD, ".global");
  ck_assert(!(t[1].flags & PTX_TOKF_SPACE_BEFORE));
  assert_tok(&t[2], PTX_TOK_DOTWORD, ".nc");
  assert_tok(&t[3], PTX_TOK_DOTWORD, ".v4");
  assert_tok(&t[4], PTX_TOK_DOTWORD, ".f32");
  assert_tok(&t[5], PTX_TOK_LBRACE, "{");
  ck_assert(t[5].flags & PTX_TOKF_SPACE_BEFORE);
  assert_tok(&t[6], PTX_TOK_IDENT, "%f26");
  assert_tok(&t[7], PTX_TOK_COMMA, ",");
  assert_tok(&t[8], PTX_TOK_IDENT, "%f27");
  assert_tok(&t[9], PTX_TOK_RBRACE, "}");
  assert_tok(&t[10], PTX_TOK_COMMA, ",");
  assert_tok(&t[11], PTX_TOK_LBRACKET, "[");
  assert_tok(&t[12], PTX_TOK_IDENT, "%rd27");
  assert_tok(&t[13], PTX_TOK_PLUS, "+");
  assert_tok(&t[14], PTX_TOK_MINUS, "-");
  assert_tok(&t[15], PTX_TOK_INT, "4");
  ck_assert_uint_eq(t[15].ival, 4);
  assert_tok(&t[16], PTX_TOK_RBRACKET, "]");
}
END_TEST

START_TEST(names) {
  ptx_tok t[20];
  int n = lex_all("$L__BB0_3: %tid.x _ _Z6helperfi %r<100> @!%p1 %r23|%p3", t, 20);
  ck_assert_int_eq(n, 16);
  assert_tok(&t[0], PTX_TOK_IDENT, "$L__BB0_3");
  assert_tok(&t[1], PTX_TOK_COLON, ":");
  assert_tok(&t[2], PTX_TOK_IDENT, "%tid");
  assert_tok(&t[3], PTX_TOK_DOTWORD, ".x");
  assert_tok(&t[4], PTX_TOK_IDENT, "_");
  assert_tok(&t[5], PTX_TOK_IDENT, "_Z6helperfi");
  assert_tok(&t[6], PTX_TOK_IDENT, "%r");
  assert_tok(&t[7], PTX_TOK_LT, "<");
  assert_tok(&t[8], PTX_TOK_INT, "100");
  assert_tok(&t[9], PTX_TOK_GT, ">");
  assert_tok(&t[10], PTX_TOK_AT, "@");
  assert_tok(&t[11], PTX_TOK_BANG, "!");
  assert_tok(&t[12], PTX_TOK_IDENT, "%p1");
  assert_tok(&t[13], PTX_TOK_IDENT, "%r23");
  assert_tok(&t[14], PTX_TOK_PIPE, "|");
  assert_tok(&t[15], PTX_TOK_IDENT, "%p3");
}
END_TEST

START_TEST(dotwords_with_scopes) {
  ptx_tok t[8];
  int n = lex_all(".L2::cache_hint .shared::cluster .1d .mbarrier::complete_tx::bytes .a::", t, 8);
  ck_assert_int_eq(n, 7);
  assert_tok(&t[0], PTX_TOK_DOTWORD, ".L2::cache_hint");
  assert_tok(&t[1], PTX_TOK_DOTWORD, ".shared::cluster");
  assert_tok(&t[2], PTX_TOK_DOTWORD, ".1d");
  assert_tok(&t[3], PTX_TOK_DOTWORD, ".mbarrier::complete_tx::bytes");
  /* "::" not followed by a name is not part of the word */
  assert_tok(&t[4], PTX_TOK_DOTWORD, ".a");
  assert_tok(&t[5], PTX_TOK_COLON, ":");
}
END_TEST

START_TEST(integers) {
  ptx_tok t[16];
  int n = lex_all("0 42 0x1F 0XffU 017 0b101 0B1U 18446744073709551615 "
                  "18446744073709551616 -2147483648", t, 16);
  ck_assert_int_eq(n, 11);
  uint64_t want[] = {0, 42, 31, 255, 15, 5, 1, UINT64_MAX};
  for (int i = 0; i < 8; i++) {
    ck_assert_int_eq(t[i].kind, PTX_TOK_INT);
    ck_assert_uint_eq(t[i].ival, want[i]);
    ck_assert(!(t[i].flags & PTX_TOKF_OVERFLOW));
  }
  ck_assert(t[3].flags & PTX_TOKF_UNSIGNED);
  ck_assert(t[6].flags & PTX_TOKF_UNSIGNED);
  ck_assert(!(t[2].flags & PTX_TOKF_UNSIGNED));
  ck_assert(t[8].flags & PTX_TOKF_OVERFLOW);
  ck_assert_int_eq(t[9].kind, PTX_TOK_MINUS);
  ck_assert_uint_eq(t[10].ival, 2147483648u);
}
END_TEST

START_TEST(floats) {
  ptx_tok t[8];
  int n = lex_all("0f3F800000 0fBFC90FDA 0d3FF0000000000000 1.5 9.0 2e3 0.25E-1", t, 8);
  ck_assert_int_eq(n, 7);
  ck_assert_int_eq(t[0].kind, PTX_TOK_F32);
  ck_assert_uint_eq(t[0].ival, 0x3F800000u);
  ck_assert_uint_eq(t[1].ival, 0xBFC90FDAu);
  ck_assert_int_eq(t[2].kind, PTX_TOK_F64);
  ck_assert_uint_eq(t[2].ival, 0x3FF0000000000000ull);
  double want[] = {1.5, 9.0, 2000.0, 0.025};
  for (int i = 0; i < 4; i++) {
    double d;
    ck_assert_int_eq(t[3 + i].kind, PTX_TOK_F64);
    memcpy(&d, &t[3 + i].ival, sizeof d);
    ck_assert_double_eq(d, want[i]);
  }
}
END_TEST

START_TEST(comments_strings_and_lines) {
  ptx_tok t[8];
  int n = lex_all("// header\n.pragma \"nounroll\"; /* a\n b */ ret;\n  // end", t, 8);
  ck_assert_int_eq(n, 5);
  assert_tok(&t[0], PTX_TOK_DOTWORD, ".pragma");
  ck_assert_uint_eq(t[0].line, 2);
  ck_assert_uint_eq(t[0].col, 1);
  assert_tok(&t[1], PTX_TOK_STRING, "\"nounroll\"");
  assert_tok(&t[2], PTX_TOK_SEMI, ";");
  assert_tok(&t[3], PTX_TOK_IDENT, "ret");
  ck_assert_uint_eq(t[3].line, 3);
  ck_assert_uint_eq(t[3].col, 7);
  assert_tok(&t[4], PTX_TOK_SEMI, ";");
}
END_TEST

START_TEST(two_char_punctuation) {
  ptx_tok t[16];
  int n = lex_all("<< >> <= >= == != && || < > = ! & | ~ ^", t, 16);
  ck_assert_int_eq(n, 16);
  ptx_tok_kind want[] = {PTX_TOK_SHL, PTX_TOK_SHR, PTX_TOK_LE, PTX_TOK_GE,
                         PTX_TOK_EQEQ, PTX_TOK_NE, PTX_TOK_ANDAND, PTX_TOK_OROR,
                         PTX_TOK_LT, PTX_TOK_GT, PTX_TOK_EQ, PTX_TOK_BANG,
                         PTX_TOK_AMP, PTX_TOK_PIPE, PTX_TOK_TILDE, PTX_TOK_CARET};
  for (int i = 0; i < 16; i++) ck_assert_int_eq(t[i].kind, want[i]);
}
END_TEST

START_TEST(errors_make_progress) {
  ptx_tok t[16];
  int n = lex_all("0f3F80 \"open\n# 09 12ab . $ /* never closed", t, 16);
  ck_assert_int_eq(n, 8);
  ck_assert_int_eq(t[0].kind, PTX_TOK_ERROR);
  ck_assert_str_eq(t[0].msg, "an f32 literal 0f needs exactly 8 hex digits");
  ck_assert_int_eq(t[1].kind, PTX_TOK_ERROR);
  ck_assert_str_eq(t[1].msg, "unterminated string");
  ck_assert_int_eq(t[2].kind, PTX_TOK_ERROR); /* '#' */
  ck_assert_uint_eq(t[2].line, 2);
  ck_assert_int_eq(t[3].kind, PTX_TOK_ERROR); /* 09: octal */
  ck_assert_int_eq(t[4].kind, PTX_TOK_ERROR); /* 12ab */
  ck_assert_int_eq(t[5].kind, PTX_TOK_ERROR); /* lone '.' */
  ck_assert_int_eq(t[6].kind, PTX_TOK_ERROR); /* lone '$' */
  ck_assert_int_eq(t[7].kind, PTX_TOK_ERROR);
  ck_assert_str_eq(t[7].msg, "unterminated comment");
  ck_assert_uint_eq(t[7].col, 15);
}
END_TEST

START_TEST(nul_bytes_and_eof_repeat) {
  const char s[] = {'a', 0, 'b'};
  ptx_lexer lx;
  ptx_tok t;
  ptx_lex_init(&lx, s, sizeof s);
  ptx_lex_next(&lx, &t);
  ck_assert_int_eq(t.kind, PTX_TOK_IDENT);
  ptx_lex_next(&lx, &t);
  ck_assert_int_eq(t.kind, PTX_TOK_ERROR);
  ptx_lex_next(&lx, &t);
  ck_assert_int_eq(t.kind, PTX_TOK_IDENT);
  for (int i = 0; i < 3; i++) {
    ptx_lex_next(&lx, &t);
    ck_assert_int_eq(t.kind, PTX_TOK_EOF);
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("ptx_lex");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, instruction_words_and_operands);
  tcase_add_test(tc, names);
  tcase_add_test(tc, dotwords_with_scopes);
  tcase_add_test(tc, integers);
  tcase_add_test(tc, floats);
  tcase_add_test(tc, comments_strings_and_lines);
  tcase_add_test(tc, two_char_punctuation);
  tcase_add_test(tc, errors_make_progress);
  tcase_add_test(tc, nul_bytes_and_eof_repeat);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
