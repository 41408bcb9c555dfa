/* benchmarks/ptx_survey.c: what a corpus of PTX modules uses.
 *
 *   ptx_survey FILE|DIR...  > docs/ptx-forms.txt
 *
 * Reads every PTX file named (a directory: every *.ptx in it) with the
 * front end's lexer and counts, over all statements:
 *   - instruction forms: the opcode with its modifiers exactly as written,
 *     e.g. ld.global.nc.v4.f32 (the dotwords that follow the opcode with no
 *     space between);
 *   - opcodes alone (ld), with the number of modules using each;
 *   - directives (the dotword that opens a statement) and the attributes
 *     written in declaration statements (.align, .ptr, .maxntid ...);
 *   - special registers: %names used as operands that no .reg declares
 *     (%tid.x, %laneid, %envreg3 ...).
 * The result is the checklist of what the parser must cover.  Nothing here
 * needs the parser: statements are found from ';', '{', '}' and labels.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptx/ptx_lex.h"

/* A string -> count table, open addressing; keys are copied. */
typedef struct {
  char *key;
  uint64_t count;
  uint64_t modules;   /* modules that use it */
  uint32_t last_mod;  /* module id that last counted it */
} entry;

typedef struct {
  entry *e;
  size_t cap, n;
} table;

static uint64_t hash(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static entry *lookup(table *t, const char *s, size_t n) {
  if (2 * (t->n + 1) > t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 1024;
    entry *ne = calloc(nc, sizeof *ne);
    for (size_t i = 0; i < t->cap; i++)
      if (t->e[i].key) {
        size_t j = hash(t->e[i].key, strlen(t->e[i].key)) & (nc - 1);
        while (ne[j].key) j = (j + 1) & (nc - 1);
        ne[j] = t->e[i];
      }
    free(t->e);
    t->e = ne;
    t->cap = nc;
  }
  size_t j = hash(s, n) & (t->cap - 1);
  while (t->e[j].key) {
    if (strlen(t->e[j].key) == n && !memcmp(t->e[j].key, s, n)) return &t->e[j];
    j = (j + 1) & (t->cap - 1);
  }
  t->e[j].key = strndup(s, n);
  t->n++;
  return &t->e[j];
}

static uint32_t module_id;

static void bump(table *t, const char *s, size_t n) {
  entry *e = lookup(t, s, n);
  e->count++;
  if (e->last_mod != module_id) {
    e->last_mod = module_id;
    e->modules++;
  }
}

static table forms, opcodes, directives, attributes, sregs;
static table declared; /* per module: .reg names and range prefixes */
static uint64_t n_modules, n_bytes, n_instrs;

static int by_count(const void *a, const void *b) {
  const entry *x = a, *y = b;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return strcmp(x->key, y->key);
}

static void dump(const char *title, table *t, bool modules) {
  entry *v = malloc((t->n + 1) * sizeof *v);
  size_t k = 0;
  for (size_t i = 0; i < t->cap; i++)
    if (t->e[i].key) v[k++] = t->e[i];
  qsort(v, k, sizeof *v, by_count);
  printf("\n## %s: %zu distinct\n", title, k);
  for (size_t i = 0; i < k; i++) {
    if (modules)
      printf("%12llu %8llu  %s\n", (unsigned long long)v[i].count,
             (unsigned long long)v[i].modules, v[i].key);
    else
      printf("%12llu  %s\n", (unsigned long long)v[i].count, v[i].key);
  }
  free(v);
}

static void clear(table *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->e[i].key);
  free(t->e);
  memset(t, 0, sizeof *t);
}

/* Is %name declared by a .reg (exactly, or as prefix<N>)? */
static bool is_declared(const char *s, size_t n) {
  if (!declared.cap) return false;
  size_t j = hash(s, n) & (declared.cap - 1);
  for (; declared.e[j].key; j = (j + 1) & (declared.cap - 1))
    if (strlen(declared.e[j].key) == n && !memcmp(declared.e[j].key, s, n)) return true;
  size_t m = n;
  while (m > 1 && s[m - 1] >= '0' && s[m - 1] <= '9') m--;
  if (m == n) return false;
  char buf[256];
  if (m + 2 > sizeof buf) return false;
  memcpy(buf, s, m);
  buf[m] = '<';
  j = hash(buf, m + 1) & (declared.cap - 1);
  for (; declared.e[j].key; j = (j + 1) & (declared.cap - 1))
    if (strlen(declared.e[j].key) == m + 1 && !memcmp(declared.e[j].key, buf, m + 1)) return true;
  return false;
}

static void survey_text(const char *text, size_t len) {
  ptx_lexer lx;
  ptx_lex_init(&lx, text, len);
  ptx_tok t;
  module_id++;
  n_modules++;
  n_bytes += len;
  clear(&declared);
  /* Statement state. */
  bool at_start = true, in_reg = false, in_instr = false, in_decl = false, in_init = false;
  ptx_lex_next(&lx, &t);
  while (t.kind != PTX_TOK_EOF) {
    /* Braces inside an instruction are vector operands, after '=' in a
     * declaration an initializer; elsewhere they open or close a body or
     * an inline-asm scope. */
    if (t.kind == PTX_TOK_EQ && in_decl) in_init = true;
    if (t.kind == PTX_TOK_SEMI ||
        (!in_instr && !in_init && (t.kind == PTX_TOK_LBRACE || t.kind == PTX_TOK_RBRACE))) {
      at_start = true;
      in_reg = in_instr = in_decl = in_init = false;
      ptx_lex_next(&lx, &t);
      continue;
    }
    if (at_start && t.kind == PTX_TOK_AT) { /* guard: @%p or @!%p */
      ptx_lex_next(&lx, &t);
      if (t.kind == PTX_TOK_BANG) ptx_lex_next(&lx, &t);
      if (t.kind == PTX_TOK_IDENT) ptx_lex_next(&lx, &t);
      continue;
    }
    if (at_start && t.kind == PTX_TOK_IDENT) {
      ptx_tok name = t;
      ptx_lex_next(&lx, &t);
      if (t.kind == PTX_TOK_COLON) { /* label */
        ptx_lex_next(&lx, &t);
        continue;
      }
      /* opcode and its modifiers */
      char buf[512];
      size_t n = name.len < sizeof buf ? name.len : sizeof buf - 1;
      memcpy(buf, name.text, n);
      bump(&opcodes, buf, n);
      while (t.kind == PTX_TOK_DOTWORD && !(t.flags & PTX_TOKF_SPACE_BEFORE)) {
        if (n + t.len < sizeof buf) {
          memcpy(buf + n, t.text, t.len);
          n += t.len;
        }
        ptx_lex_next(&lx, &t);
      }
      bump(&forms, buf, n);
      n_instrs++;
      at_start = false;
      in_instr = true;
      continue;
    }
    /* These directives end at the line's end, with no ';'. */
    if (t.kind == PTX_TOK_DOTWORD && !in_instr &&
        (PTX_TOK_IS(&t, ".version") || PTX_TOK_IS(&t, ".target") ||
         PTX_TOK_IS(&t, ".address_size") || PTX_TOK_IS(&t, ".file") ||
         PTX_TOK_IS(&t, ".loc") || PTX_TOK_IS(&t, ".section")))
      at_start = true;
    if (at_start && t.kind == PTX_TOK_DOTWORD) {
      bump(&directives, t.text, t.len);
      in_reg = PTX_TOK_IS(&t, ".reg");
      in_decl = true;
      at_start = false;
      ptx_lex_next(&lx, &t);
      continue;
    }
    at_start = false;
    if (in_decl && t.kind == PTX_TOK_DOTWORD) bump(&attributes, t.text, t.len);
    if (in_reg && t.kind == PTX_TOK_IDENT) {
      ptx_tok name = t;
      ptx_lex_next(&lx, &t);
      if (t.kind == PTX_TOK_LT) { /* %r<100>: record "%r<" */
        char buf[256];
        if (name.len + 1 < sizeof buf) {
          memcpy(buf, name.text, name.len);
          buf[name.len] = '<';
          lookup(&declared, buf, name.len + 1);
        }
      } else {
        lookup(&declared, name.text, name.len);
      }
      continue;
    }
    if (in_instr && t.kind == PTX_TOK_IDENT && t.text[0] == '%' && !is_declared(t.text, t.len)) {
      char buf[256];
      size_t n = t.len < 200 ? t.len : 200;
      memcpy(buf, t.text, n);
      ptx_lex_next(&lx, &t);
      if (t.kind == PTX_TOK_DOTWORD && !(t.flags & PTX_TOKF_SPACE_BEFORE) && t.len < 40) {
        memcpy(buf + n, t.text, t.len);
        n += t.len;
        ptx_lex_next(&lx, &t);
      }
      bump(&sregs, buf, n);
      continue;
    }
    ptx_lex_next(&lx, &t);
  }
}

static void survey_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) n = 0;
  fclose(f);
  survey_text(buf, n > 0 ? (size_t)n : 0);
  free(buf);
}

static int cmpstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: ptx_survey FILE|DIR...\n");
    return 2;
  }
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      DIR *d = opendir(argv[i]);
      struct dirent *de;
      char **names = NULL;
      size_t nn = 0, cap = 0;
      while (d && (de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l < 4 || strcmp(de->d_name + l - 4, ".ptx")) continue;
        if (nn == cap) names = realloc(names, (cap = cap ? 2 * cap : 256) * sizeof *names);
        size_t pl = strlen(argv[i]) + l + 2;
        names[nn] = malloc(pl);
        snprintf(names[nn++], pl, "%s/%s", argv[i], de->d_name);
      }
      if (d) closedir(d);
      qsort(names, nn, sizeof *names, cmpstr);
      for (size_t k = 0; k < nn; k++) {
        survey_file(names[k]);
        free(names[k]);
      }
      free(names);
    } else {
      survey_file(argv[i]);
    }
  }
  printf("# PTX survey: %llu modules, %llu bytes, %llu instructions\n",
         (unsigned long long)n_modules, (unsigned long long)n_bytes,
         (unsigned long long)n_instrs);
  printf("# columns: occurrences [modules] name\n");
  dump("instruction forms", &forms, true);
  dump("opcodes", &opcodes, true);
  dump("directives", &directives, true);
  dump("attributes in declarations", &attributes, true);
  dump("special registers", &sregs, true);
  return 0;
}
