/* tests/unit/test_util.c: the arena, the diagnostics format and the hash
 * map (checked against a plain array searched linearly). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"
#include "util/diag.h"
#include "util/pw_map.h"
#include "util/pw_vec.h"

START_TEST(arena_alignment_and_zeroing) {
  pw_arena a;
  pw_arena_init(&a);
  for (int i = 1; i < 5000; i += 7) {
    unsigned char *p = pw_arena_alloc(&a, (size_t)i);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq((uintptr_t)p % 16, 0);
    unsigned char any = 0;   /* one assertion per block: ck_assert per byte took seconds */
    for (int j = 0; j < i; j++) any |= p[j];
    ck_assert_uint_eq(any, 0);
    memset(p, 0xab, (size_t)i);
  }
  /* a big block gets its own chunk and leaves the current one usable */
  void *big = pw_arena_alloc(&a, 3u << 20);
  ck_assert_ptr_nonnull(big);
  ck_assert_ptr_null(pw_arena_alloc_array(&a, SIZE_MAX / 2, 4));
  ck_assert_str_eq(pw_arena_strndup(&a, "kernel_name", 6), "kernel");
  pw_arena_free(&a);
}
END_TEST

START_TEST(diag_caret_under_column) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  pw_src s = {"k.ptx", "first\n  add.s32 %r1;\n", 21};
  pw_error_at(&d, &s, 2, 3, "unknown '%s'", "add");
  const char *want =
      "k.ptx:2:3: error: unknown 'add'\n"
      "     2 |   add.s32 %r1;\n"
      "       |   ^\n";
  ck_assert_str_eq(pw_diag_text(&d), want);
  ck_assert_int_eq(d.nerrors, 1);
  pw_diag_fini(&d);
}
END_TEST

START_TEST(diag_byte_offset_and_limit) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 1;
  pw_error_off(&d, "lib.so", 0x40, "bad magic %#x", 0x1234u);
  pw_error_off(&d, "lib.so", 0x80, "second");
  ck_assert_int_eq(d.nerrors, 2);
  ck_assert_str_eq(pw_diag_text(&d),
                   "lib.so: at byte offset 0x40: error: bad magic 0x1234\n"
                   "too many errors; further errors are counted but not shown\n");
  pw_diag_fini(&d);
}
END_TEST

/* ---- pw_map ------------------------------------------------------------ */

/* The home slot of an entry's key in a table of cap entries. */
static uint32_t home_of(const pw_map_entry *e, uint32_t cap) { return e->hash & (cap - 1); }

START_TEST(map_str_and_ptr_keys) {
  pw_arena a;
  pw_arena_init(&a);
  pw_map m;
  pw_map_init(&m, &a, 4);
  bool found;
  /* a span is compared by its bytes, not its address */
  char buf1[] = "%rd12", buf2[] = "%rd12";
  *pw_map_str_slot(&m, buf1, 5, &found) = (void *)1;
  ck_assert(!found);
  ck_assert_ptr_eq(pw_map_str_get(&m, buf2, 5), (void *)1);
  ck_assert_ptr_null(pw_map_str_get(&m, buf2, 4));   /* "%rd1": another key */
  *pw_map_str_slot(&m, buf2, 5, &found) = (void *)2;
  ck_assert(found);
  ck_assert_ptr_eq(pw_map_str_get(&m, buf1, 5), (void *)2);
  /* a pointer key is its address, beside spans in one map */
  int x, y;
  pw_map_ptr_put(&m, &x, (void *)3);
  ck_assert_ptr_eq(pw_map_ptr_get(&m, &x), (void *)3);
  ck_assert_ptr_null(pw_map_ptr_get(&m, &y));
  /* a stored 0 is found; an absent key is not */
  pw_map_ptr_put(&m, &y, NULL);
  ck_assert_ptr_nonnull(pw_map_ptr_find(&m, &y));
  ck_assert_ptr_null(pw_map_ptr_find(&m, buf1));
  /* the empty span is a key like any other */
  pw_map_str_put(&m, "", 0, (void *)4);
  ck_assert_ptr_eq(pw_map_str_get(&m, NULL, 0), (void *)4);
  ck_assert_uint_eq(m.n, 4);
  pw_arena_free(&a);
}
END_TEST

/* Through 10,000 insertions the map doubles from 16 entries and every key
 * stays found; the load stays at or under 3/4. */
START_TEST(map_growth) {
  pw_arena a;
  pw_arena_init(&a);
  pw_map m;
  pw_map_init(&m, &a, 0);
  ck_assert_uint_eq(m.cap, 16);
  enum { N = 10000 };
  static char keys[N][8];
  for (int i = 0; i < N; i++) {
    snprintf(keys[i], sizeof keys[i], "k%d", i);
    pw_map_str_put(&m, keys[i], strlen(keys[i]), (void *)(uintptr_t)(i + 1));
    ck_assert_uint_le(m.n * 4, m.cap * 3);
  }
  ck_assert_uint_eq(m.n, N);
  ck_assert_uint_eq(m.cap, 16384);   /* 10,000 > 3/4 of 8,192 */
  for (int i = 0; i < N; i++)
    ck_assert_uint_eq((uintptr_t)pw_map_str_get(&m, keys[i], strlen(keys[i])), (uintptr_t)i + 1);
  /* the walk visits each key once */
  uint32_t seen = 0;
  for (pw_map_entry *e = NULL; (e = pw_map_next(&m, e));) seen++;
  ck_assert_uint_eq(seen, N);
  pw_arena_free(&a);
}
END_TEST

/* Keys chosen by home slot: one whose home is the table's next-to-last
 * slot, then five whose home is the last, so the cluster wraps to slot 0.
 * Each is found, and removing any one leaves the others found: the entries
 * after the hole move back across the wrap, except those whose home lies
 * between the hole and themselves. */
START_TEST(map_collisions_wrap_and_removal) {
  enum { K = 6 };
  for (int victim = 0; victim < K; victim++) {
    pw_map m = {0};   /* malloc'd */
    pw_map_init(&m, NULL, 8);
    uint32_t cap = m.cap;
    ck_assert_uint_eq(cap, 16);
    static char pool[4096][8];
    const char *keys[K];
    int nk = 0;
    for (int i = 0; nk < K && i < 4096; i++) {
      snprintf(pool[i], sizeof pool[i], "c%d", i);
      /* ask the map where the key lives: insert, read its hash, remove */
      pw_map_str_put(&m, pool[i], strlen(pool[i]), NULL);
      pw_map_entry *e = pw_map_str_find(&m, pool[i], strlen(pool[i]));
      uint32_t want = nk == 0 ? cap - 2 : cap - 1;
      bool take = home_of(e, cap) == want;
      ck_assert(pw_map_str_remove(&m, pool[i], strlen(pool[i])));
      if (take) keys[nk++] = pool[i];
    }
    ck_assert_int_eq(nk, K);
    ck_assert_uint_eq(m.n, 0);
    for (int k = 0; k < K; k++) pw_map_str_put(&m, keys[k], strlen(keys[k]), (void *)(uintptr_t)(k + 1));
    ck_assert_uint_eq(m.cap, cap);   /* 6 of 16: no growth */
    /* the cluster occupies slots 14, 15, 0, 1, ... in insertion order */
    ck_assert_ptr_eq(m.e[cap - 2].key, keys[0]);
    ck_assert_ptr_eq(m.e[cap - 1].key, keys[1]);
    ck_assert_ptr_eq(m.e[0].key, keys[2]);
    ck_assert(pw_map_str_remove(&m, keys[victim], strlen(keys[victim])));
    ck_assert(!pw_map_str_remove(&m, keys[victim], strlen(keys[victim])));
    ck_assert_uint_eq(m.n, K - 1);
    for (int k = 0; k < K; k++) {
      void *v = pw_map_str_get(&m, keys[k], strlen(keys[k]));
      if (k == victim) ck_assert_ptr_null(v);
      else ck_assert_uint_eq((uintptr_t)v, (uintptr_t)k + 1);
    }
    /* no slot is left empty inside the cluster: K - 1 entries from slot 14
     * on, or from 15 when the one of home 14 went */
    uint32_t first = victim == 0 ? cap - 1 : cap - 2;
    for (uint32_t s = 0; s < K - 1; s++) ck_assert_ptr_nonnull(m.e[(first + s) & (cap - 1)].key);
    ck_assert_ptr_null(m.e[(first + K - 1) & (cap - 1)].key);
    pw_map_free(&m);
    ck_assert_ptr_null(m.e);
  }
}
END_TEST

/* Random insertions, overwrites and removals of pointer keys, checked after
 * every step against a reference array searched linearly. */
START_TEST(map_against_reference) {
  enum { NKEYS = 300, STEPS = 20000 };
  static int objs[NKEYS];
  static uintptr_t ref[NKEYS];   /* 0: absent, else value + 1 */
  memset(ref, 0, sizeof ref);
  pw_map m = {0};
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  uint32_t live = 0;
  for (int step = 0; step < STEPS; step++) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    uint32_t k = (uint32_t)(rng % NKEYS);
    uint32_t op = (uint32_t)(rng >> 32) % 3;
    if (op == 2) {
      bool had = ref[k] != 0;
      ck_assert(pw_map_ptr_remove(&m, &objs[k]) == had);
      if (had) live--;
      ref[k] = 0;
    } else {
      bool found;
      void **slot = pw_map_ptr_slot(&m, &objs[k], &found);
      ck_assert(found == (ref[k] != 0));
      if (!found) live++;
      *slot = (void *)(uintptr_t)step;
      ref[k] = (uintptr_t)step + 1;
    }
    ck_assert_uint_eq(m.n, live);
    if (step % 97 == 0 || step > STEPS - 50) {
      for (uint32_t i = 0; i < NKEYS; i++) {
        pw_map_entry *e = pw_map_ptr_find(&m, &objs[i]);
        if (!ref[i]) {
          ck_assert_ptr_null(e);
        } else {
          ck_assert_ptr_nonnull(e);
          ck_assert_uint_eq((uintptr_t)e->val, ref[i] - 1);
        }
      }
    }
  }
  pw_map_free(&m);
}
END_TEST

/* ---- pw_vec_grow --------------------------------------------------------- */

START_TEST(vec_grow_doubles_and_keeps) {
  int *a = NULL;
  size_t cap = 0, n = 0;
  for (int i = 0; i < 1000; i++) {
    int *na = pw_vec_grow(a, &cap, n + 1, sizeof *na);
    ck_assert_ptr_nonnull(na);
    a = na;
    a[n++] = i * 3;
    ck_assert_uint_ge(cap, n);
  }
  ck_assert_uint_eq(cap, 1024);   /* 8, 16, ... 1024 */
  for (int i = 0; i < 1000; i++) ck_assert_int_eq(a[i], i * 3);
  /* room already there: the same array */
  ck_assert_ptr_eq(pw_vec_grow(a, &cap, 1000, sizeof *a), a);
  /* a jump: doubled until it fits */
  a = pw_vec_grow(a, &cap, 5000, sizeof *a);
  ck_assert_uint_eq(cap, 8192);
  ck_assert_int_eq(a[999], 999 * 3);
  /* too large: NULL, and the array and its capacity stay as they were */
  size_t before = cap;
  ck_assert_ptr_null(pw_vec_grow(a, &cap, SIZE_MAX / 2, sizeof *a));
  ck_assert_ptr_null(pw_vec_grow(a, &cap, SIZE_MAX, 1));
  ck_assert_uint_eq(cap, before);
  ck_assert_int_eq(a[500], 500 * 3);
  free(a);
}
END_TEST

int main(void) {
  Suite *s = suite_create("util");
  TCase *tc = tcase_create("core");
  tcase_add_test(tc, arena_alignment_and_zeroing);
  tcase_add_test(tc, diag_caret_under_column);
  tcase_add_test(tc, diag_byte_offset_and_limit);
  tcase_add_test(tc, map_str_and_ptr_keys);
  tcase_add_test(tc, map_growth);
  tcase_add_test(tc, map_collisions_wrap_and_removal);
  tcase_add_test(tc, map_against_reference);
  tcase_add_test(tc, vec_grow_doubles_and_keeps);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
