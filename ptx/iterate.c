/* ptx/iterate.c: the walk the layers above use (every PTX module of a
 * file, decompressed, with a stable name), and the cheap `.entry` scan that
 * `ptxwave inspect` prints.
 *
 * Stable names: <file>.c<container>.e<entry>.sm_<arch><suffix>.<ext>, the
 * container numbered in file order over the whole input (all ar members
 * together), 4 digits at least, the entry within its container, 2 digits at
 * least.  They depend only on the input's bytes and its base name, so a
 * corpus extracted twice has the same names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "container_impl.h"

const char *ptx_kind_name(uint16_t kind) {
  switch (kind) {
  case ptx_kind_ptx: return "ptx";
  case ptx_kind_elf: return "cubin";
  case ptx_kind_other: return "kind8";
  default: return "unknown";
  }
}

size_t ptx_entry_name(char *buf, size_t cap, const ptx_file *f, uint32_t ci, uint32_t ei) {
  const ptx_entry *e = &f->containers[ci].entries[ei];
  char ext[16];
  if (e->kind == ptx_kind_ptx)
    snprintf(ext, sizeof ext, "ptx");
  else if (e->kind == ptx_kind_elf)
    snprintf(ext, sizeof ext, "cubin");
  else
    snprintf(ext, sizeof ext, "kind%u", e->kind);
  char sfx[2] = {e->arch_suffix, 0};
  int n = snprintf(buf, cap, "%s.c%04u.e%02u.sm_%u%s.%s", f->name, ci, ei, e->arch, sfx, ext);
  return n < 0 ? 0 : (size_t)n;
}

static bool is_ident(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '$' || c == '%';
}

/* PTX ISA 9.0 section 4.2: comments are // to end of line and / * * /;
 * strings only appear in a few directives (.file, .pragma).  `.entry` is a
 * directive token, so it must stand alone: not part of `.entry_x` or
 * `a.entry`. */
/* The cluster directives of the kernel whose name ends at text[i]: the
 * performance-tuning directives stand between the parameter list and the
 * body's `{` (PTX ISA 11.4): .reqnctapercluster nx{, ny{, nz}} (missing
 * dimensions are 1) and .explicitcluster. */
static void scan_cluster(const char *text, size_t len, size_t i, ptx_kernel_cluster *c) {
  *c = (ptx_kernel_cluster){{0, 0, 0}, false};
  while (i < len && text[i] != '{') {
    if (text[i] == '/' && i + 1 < len && text[i + 1] == '/') {
      const char *nl = memchr(text + i, '\n', len - i);
      i = nl ? (size_t)(nl - text) + 1 : len;
      continue;
    }
    static const char req[] = ".reqnctapercluster", expl[] = ".explicitcluster";
    if (len - i > sizeof req - 1 && !memcmp(text + i, req, sizeof req - 1) &&
        !is_ident((unsigned char)text[i + sizeof req - 1])) {
      i += sizeof req - 1;
      for (unsigned d = 0; d < 3; d++) {
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) i++;
        if (i >= len || text[i] < '0' || text[i] > '9') break;
        uint64_t v = 0;
        while (i < len && text[i] >= '0' && text[i] <= '9' && v < (1ull << 32)) v = v * 10 + (uint64_t)(text[i++] - '0');
        c->reqnctapercluster[d] = v >= (1ull << 32) ? UINT32_MAX : (uint32_t)v;
        while (i < len && (text[i] == ' ' || text[i] == '\t')) i++;
        if (i < len && text[i] == ',') i++;
        else break;
      }
      for (unsigned d = 0; d < 3; d++)
        if (c->reqnctapercluster[0] && !c->reqnctapercluster[d]) c->reqnctapercluster[d] = 1;
      continue;
    }
    if (len - i > sizeof expl - 1 && !memcmp(text + i, expl, sizeof expl - 1) &&
        !is_ident((unsigned char)text[i + sizeof expl - 1])) {
      c->explicitcluster = true;
      i += sizeof expl - 1;
      continue;
    }
    i++;
  }
}

static uint32_t scan(const char *text, size_t len, pw_arena *a, const char **names, ptx_kernel_cluster *clusters,
                     uint32_t cap) {
  uint32_t n = 0;
  size_t i = 0;
  while (i < len) {
    /* Jump to the next character that can start a comment, a string or
     * `.entry`. */
    const char *p = text + i;
    size_t left = len - i;
    const char *q = NULL;
    for (size_t k = 0; k < left; k++) {
      char c = p[k];
      if (c == '/' || c == '"' || c == '.') {
        q = p + k;
        break;
      }
    }
    if (!q) break;
    i = (size_t)(q - text);
    char c = text[i];
    if (c == '/' && i + 1 < len && text[i + 1] == '/') {
      const char *nl = memchr(text + i, '\n', len - i);
      i = nl ? (size_t)(nl - text) + 1 : len;
    } else if (c == '/' && i + 1 < len && text[i + 1] == '*') {
      size_t j = i + 2;
      while (j + 1 < len && !(text[j] == '*' && text[j + 1] == '/')) j++;
      i = j + 2;
    } else if (c == '"') {
      size_t j = i + 1;
      while (j < len && text[j] != '"' && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      i = j + 1;
    } else if (c == '.' && len - i > 6 && !memcmp(text + i, ".entry", 6) &&
               (i == 0 || !is_ident((unsigned char)text[i - 1])) &&
               (text[i + 6] == ' ' || text[i + 6] == '\t' || text[i + 6] == '\n' || text[i + 6] == '\r')) {
      size_t j = i + 6;
      while (j < len && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) j++;
      size_t s = j;
      while (j < len && is_ident((unsigned char)text[j])) j++;
      if (j > s) {
        if (names && n < cap) names[n] = pw_arena_strndup(a, text + s, j - s);
        if (clusters && n < cap) scan_cluster(text, len, j, &clusters[n]);
        n++;
      }
      i = j;
    } else {
      i++;
    }
  }
  return n;
}

uint32_t ptx_scan_kernels(const char *text, size_t len, pw_arena *a, const char **names, uint32_t cap) {
  return scan(text, len, a, names, NULL, cap);
}

uint32_t ptx_scan_kernel_clusters(const char *text, size_t len, ptx_kernel_cluster *out, uint32_t cap) {
  return scan(text, len, NULL, NULL, out, cap);
}

int ptx_file_for_each(const ptx_file *f, unsigned visit, const ptx_read_options *opt,
                      ptx_decoder *dec, pw_diag *d, ptx_module_fn fn, void *user) {
  int errors = 0;
  if (f->input == ptx_input_ptx || (f->input == ptx_input_cubin && (visit & PTX_VISIT_CUBIN))) {
    /* The whole file is the module; copy it so the text ends in a NUL. */
    size_t len = (size_t)f->size;
    if (f->input == ptx_input_ptx)
      while (len && f->data[len - 1] == 0) len--;
    char *t = malloc(len + 1);
    if (!t) {
      pw_error(d, f->path, "out of memory for %zu bytes", len);
      return 1;
    }
    memcpy(t, f->data, len);
    t[len] = 0;
    ptx_module m = {
        .file = f,
        .kind = f->input == ptx_input_ptx ? ptx_kind_ptx : ptx_kind_elf,
        .arch = f->arch,
        .arch_suffix = f->arch_suffix,
        .name = f->name,
        .text = t,
        .len = len,
    };
    fn(&m, user);
    free(t);
    return 0;
  }
  ptx_decoder *own = dec ? NULL : ptx_decoder_new();
  if (!dec) dec = own;
  char name[4096];
  for (uint32_t ci = 0; ci < f->ncontainers; ci++) {
    const ptx_container *c = &f->containers[ci];
    for (uint32_t ei = 0; ei < c->nentries; ei++) {
      const ptx_entry *e = &c->entries[ei];
      bool want = (e->kind == ptx_kind_ptx && (visit & PTX_VISIT_PTX)) ||
                  (e->kind == ptx_kind_elf && (visit & PTX_VISIT_CUBIN));
      if (!want) continue;
      ptx_payload pl;
      if (!ptx_entry_read(f, e, opt, dec, d, &pl)) {
        errors++;
        continue;
      }
      ptx_entry_name(name, sizeof name, f, ci, ei);
      ptx_module m = {
          .file = f,
          .container = c,
          .entry = e,
          .container_index = ci,
          .entry_index = ei,
          .kind = e->kind,
          .arch = e->arch,
          .arch_suffix = e->arch_suffix,
          .name = name,
          .text = (const char *)pl.data,
          .len = pl.len,
      };
      bool more = fn(&m, user);
      ptx_payload_free(&pl);
      if (!more) goto out;
    }
  }
out:
  ptx_decoder_free(own);
  return errors;
}

int ptx_for_each_ptx(const char *path, const ptx_read_options *opt, pw_diag *d, ptx_module_fn fn,
                     void *user) {
  ptx_file *f = ptx_file_open(path, d);
  if (!f) return 1;
  int errors = f->nerrors;
  errors += ptx_file_for_each(f, PTX_VISIT_PTX, opt, NULL, d, fn, user);
  ptx_file_close(f);
  return errors;
}
