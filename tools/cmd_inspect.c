/* tools/cmd_inspect.c: `ptxwave inspect FILE...`: what NVIDIA containers a
 * file holds, one line per container, entry and wrapper, or JSON.
 *
 * By default every PTX and cubin payload is decompressed: PTX to count its
 * kernels, both to check that the payload is sound, so a zero exit status
 * means every entry can be extracted.  --quick skips that.
 *
 * --coverage answers another question, per FILE (a library): of the
 * kernels its fatbins define, how many have PTX (ptxwave can translate
 * them) and how many are SASS only (a cubin defines them, no PTX entry
 * does).  Kernels are told by name: the PTX's `.entry` names and the
 * cubins' STO_CUDA_ENTRY symbols (ptx/cubin.c), each counted once per file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ptx/container.h"
#include "tools.h"

typedef struct inspect_opts {
  bool json, quick, all_kernels, coverage;
  ptx_read_options read;
} inspect_opts;

static void usage(FILE *out) {
  fprintf(out,
          "usage: ptxwave inspect [OPTIONS] FILE...\n"
          "\n"
          "Lists the NVIDIA fatbin containers in each FILE and their entries.  FILE is\n"
          "told by its content: a host ELF (executable, shared library, object), an ar\n"
          "archive of objects, a raw fatbin (nvcc -fatbin), PTX text, or a cubin.\n"
          "\n"
          "Containers are found in every section, not only .nv_fatbin: cuDNN, cuFFT and\n"
          "others keep more in .rodata, .ldata, .cask_resource and __nv_relfatbin.\n"
          "\n"
          "Text output, one line each:\n"
          "  FILE: INPUT, N containers, N entries (N PTX, N cubin, N other), N wrappers\n"
          "  c0003 SECTION+0xOFF at 0xFILEOFF, SIZE bytes, N entries[, wrapper w0002 (v1)]\n"
          "    e01 ptx sm_90a PTX 8.7 flags 0x108011 zstd 1200 -> 4096 bytes at 0xOFF\n"
          "        options \"...\" kernels 2: k1 k2      (all on one line)\n"
          "  w0002 v1 at 0xFILEOFF data 0xADDR -> c0003\n"
          "Flags: 0x2000 LZ4, 0x8000 zstd, 0x100000 sm_XXa, 0x200000 sm_XXf, 0x2 -G\n"
          "(docs/containers.md lists them all).\n"
          "The entry number and arch are those `ptxwave extract` puts in file names.\n"
          "\n"
          "options:\n"
          "  --json          one JSON document: {\"files\": [...]} with every field\n"
          "  --quick         do not decompress payloads (no kernel names, no payload check)\n"
          "  --all-kernels   list every kernel name (text output shows 8 by default)\n"
          "  --coverage      per FILE only: its kernels with PTX and SASS only, e.g.\n"
          "                  FILE: 400 kernels, 380 with PTX (95.0%%), 20 SASS only;\n"
          "                  200 containers, 150 with PTX, 50 cubins only\n"
          "  --max-size=N    refuse payloads that decompress to more than N bytes\n"
          "                  (default 1073741824; K, M, G suffixes allowed)\n"
          "  -h, --help      this text\n"
          "\n"
          "Exit status: 0 when every input was read cleanly; 1 when an input is\n"
          "malformed (what was readable is still printed; errors go to stderr with\n"
          "the byte offset); 2 on a usage error.\n");
}

bool cmd_parse_size(const char *s, uint64_t *out) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return false;
  uint64_t mul = 1;
  if (*end == 'K' || *end == 'k') mul = 1ull << 10, end++;
  else if (*end == 'M' || *end == 'm') mul = 1ull << 20, end++;
  else if (*end == 'G' || *end == 'g') mul = 1ull << 30, end++;
  if (*end || v == 0 || v > UINT64_MAX / mul) return false;
  *out = v * mul;
  return true;
}

/* JSON string (RFC 8259): quotes, backslash and control characters
 * escaped; bytes >= 0x80 (names and options come from hostile input and
 * need not be UTF-8) as \u00XX, so the document is always valid. */
static void json_str(FILE *o, const char *s, size_t n) {
  fputc('"', o);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      fprintf(o, "\\%c", c);
    else if (c == '\n')
      fputs("\\n", o);
    else if (c == '\t')
      fputs("\\t", o);
    else if (c < 0x20 || c >= 0x7f)
      fprintf(o, "\\u%04x", c);
    else
      fputc(c, o);
  }
  fputc('"', o);
}

static void json_cstr(FILE *o, const char *s) {
  if (s)
    json_str(o, s, strlen(s));
  else
    fputs("null", o);
}

/* Text output quotes options; they are printable ASCII (checked when
 * read), but may hold quotes. */
static void text_quoted(FILE *o, const char *s) {
  fputc('"', o);
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') fputc('\\', o);
    fputc(*s, o);
  }
  fputc('"', o);
}

static void sm_name(char *buf, size_t cap, uint32_t arch, char sfx) {
  snprintf(buf, cap, "sm_%u%s", arch, sfx == 'a' ? "a" : sfx == 'f' ? "f" : "");
}

/* One entry: decompresses it when asked and prints it. */
static int print_entry(FILE *o, const ptx_file *f, uint32_t ci, uint32_t ei, const inspect_opts *op,
                       ptx_decoder *dec, pw_diag *d) {
  const ptx_entry *e = &f->containers[ci].entries[ei];
  int errors = 0;
  uint32_t nk = 0;
  const char **names = NULL;
  pw_arena a;
  pw_arena_init(&a);
  bool decoded = false;
  if (!op->quick && (e->kind == ptx_kind_ptx || e->kind == ptx_kind_elf)) {
    ptx_payload pl;
    if (ptx_entry_read(f, e, &op->read, dec, d, &pl)) {
      decoded = true;
      if (e->kind == ptx_kind_ptx) {
        nk = ptx_scan_kernels((const char *)pl.data, pl.len, NULL, NULL, 0);
        names = PW_NEW_ARRAY(&a, const char *, nk ? nk : 1);
        if (names) ptx_scan_kernels((const char *)pl.data, pl.len, &a, names, nk);
      }
      ptx_payload_free(&pl);
    } else {
      errors++;
    }
  }
  char sm[32];
  sm_name(sm, sizeof sm, e->arch, e->arch_suffix);
  if (op->json) {
    char name[4096];
    ptx_entry_name(name, sizeof name, f, ci, ei);
    fprintf(o,
            "{\"index\": %u, \"name\": ", ei);
    json_cstr(o, name);
    fprintf(o,
            ", \"offset\": %" PRIu64 ", \"header_size\": %u, \"kind\": %u, \"kind_name\": \"%s\", "
            "\"arch\": %u, \"arch_suffix\": \"%s\", \"sm\": \"%s\", \"version\": \"%u.%u\", "
            "\"flags\": %" PRIu64 ", \"compression\": \"%s\", \"payload_offset\": %" PRIu64
            ", \"payload_size\": %" PRIu64 ", \"compressed_size\": %" PRIu64
            ", \"uncompressed_size\": %" PRIu64 ", \"options\": ",
            e->offset, e->header_size, e->kind, ptx_kind_name(e->kind), e->arch,
            e->arch_suffix == 'a' ? "a" : e->arch_suffix == 'f' ? "f" : "", sm, e->version_major,
            e->version_minor, e->flags, ptx_compression_name(e->compression), e->payload_offset,
            e->payload_size, e->compressed_size, e->uncompressed_size);
    json_cstr(o, e->options);
    fputs(", \"options_hex\": ", o);
    if (e->options_bin) {
      fputc('"', o);
      for (uint32_t i = 0; i < e->options_bin_len; i++) fprintf(o, "%02x", e->options_bin[i]);
      fputc('"', o);
    } else {
      fputs("null", o);
    }
    fputs(", \"ident\": ", o);
    json_cstr(o, e->ident);
    if (decoded && e->kind == ptx_kind_ptx) {
      fprintf(o, ", \"kernels\": [");
      for (uint32_t k = 0; k < nk; k++) {
        if (k) fputs(", ", o);
        json_cstr(o, names ? names[k] : NULL);
      }
      fputc(']', o);
    } else {
      fputs(", \"kernels\": null", o);
    }
    fprintf(o, ", \"decoded\": %s}", decoded ? "true" : "false");
  } else {
    fprintf(o, "    e%02u %-5s %-8s", ei, ptx_kind_name(e->kind), sm);
    if (e->kind == ptx_kind_ptx)
      fprintf(o, " PTX %u.%u", e->version_major, e->version_minor);
    else
      fprintf(o, " v%u.%u", e->version_major, e->version_minor);
    fprintf(o, " flags 0x%" PRIx64, e->flags);
    if (e->compression == ptx_comp_none)
      fprintf(o, " stored %" PRIu64 " bytes", e->payload_size);
    else
      fprintf(o, " %s %" PRIu64 " -> %" PRIu64 " bytes", ptx_compression_name(e->compression),
              e->compressed_size, e->uncompressed_size);
    fprintf(o, " at 0x%" PRIx64, e->offset);
    if (e->options) {
      fputs(" options ", o);
      text_quoted(o, e->options);
    } else if (e->options_bin) {
      fprintf(o, " options <%u binary bytes>", e->options_bin_len);
    }
    if (e->ident) {
      fputs(" ident ", o);
      text_quoted(o, e->ident);
    }
    if (decoded && e->kind == ptx_kind_ptx) {
      fprintf(o, " kernels %u", nk);
      uint32_t show = op->all_kernels ? nk : (nk < 8 ? nk : 8);
      if (show) fputc(':', o);
      for (uint32_t k = 0; k < show && names; k++) fprintf(o, " %s", names[k]);
      if (show < nk) fprintf(o, " ... (%u more)", nk - show);
    }
    fputc('\n', o);
  }
  pw_arena_free(&a);
  return errors;
}

static int inspect_file(FILE *o, const char *path, const inspect_opts *op, ptx_decoder *dec,
                        pw_diag *d, bool first) {
  ptx_file *f = ptx_file_open(path, d);
  if (!f) {
    if (op->json) {
      fprintf(o, "%s{\"path\": ", first ? "" : ",\n");
      json_cstr(o, path);
      fputs(", \"input\": null, \"errors\": 1}", o);
    }
    return 1;
  }
  int errors = f->nerrors;
  uint32_t nent = 0, nptx = 0, ncubin = 0;
  for (uint32_t i = 0; i < f->ncontainers; i++) {
    nent += f->containers[i].nentries;
    for (uint32_t j = 0; j < f->containers[i].nentries; j++) {
      nptx += f->containers[i].entries[j].kind == ptx_kind_ptx;
      ncubin += f->containers[i].entries[j].kind == ptx_kind_elf;
    }
  }
  char sm[32];
  sm_name(sm, sizeof sm, f->arch, f->arch_suffix);
  if (op->json) {
    fprintf(o, "%s{\"path\": ", first ? "" : ",\n");
    json_cstr(o, f->path);
    fprintf(o, ", \"input\": \"%s\", \"size\": %" PRIu64 ", \"members\": %u", ptx_input_name(f->input),
            f->size, f->nmembers);
    if (f->input == ptx_input_ptx || f->input == ptx_input_cubin)
      fprintf(o, ", \"arch\": %u, \"sm\": \"%s\", \"version\": \"%u.%u\"", f->arch, sm, f->version_major,
              f->version_minor);
    fputs(", \"containers\": [", o);
  } else {
    fprintf(o, "%s: %s", f->path, ptx_input_name(f->input));
    if (f->input == ptx_input_ptx) {
      fprintf(o, ", PTX %u.%u, target %s", f->version_major, f->version_minor, sm);
    } else if (f->input == ptx_input_cubin) {
      fprintf(o, ", %s, ELF ABI v%u (not translatable: SASS, no PTX)", sm, f->version_major);
    } else {
      if (f->input == ptx_input_ar) fprintf(o, ", %u members", f->nmembers);
      fprintf(o, ", %u containers, %u entries (%u PTX, %u cubin, %u other), %u wrappers", f->ncontainers,
              nent, nptx, ncubin, nent - nptx - ncubin, f->nwrappers);
    }
  }
  if (f->input == ptx_input_ptx && !op->quick) {
    /* A PTX file: its kernels. */
    size_t len = (size_t)f->size;
    uint32_t nk = ptx_scan_kernels((const char *)f->data, len, NULL, NULL, 0);
    pw_arena a;
    pw_arena_init(&a);
    const char **names = PW_NEW_ARRAY(&a, const char *, nk ? nk : 1);
    if (names) ptx_scan_kernels((const char *)f->data, len, &a, names, nk);
    if (op->json) {
      fputs("], \"kernels\": [", o);
      for (uint32_t k = 0; k < nk; k++) {
        if (k) fputs(", ", o);
        json_cstr(o, names ? names[k] : NULL);
      }
    } else {
      fprintf(o, ", kernels %u", nk);
      uint32_t show = op->all_kernels ? nk : (nk < 8 ? nk : 8);
      if (show) fputc(':', o);
      for (uint32_t k = 0; k < show && names; k++) fprintf(o, " %s", names[k]);
      if (show < nk) fprintf(o, " ... (%u more)", nk - show);
    }
    pw_arena_free(&a);
  }
  if (!op->json) fputc('\n', o);

  for (uint32_t ci = 0; ci < f->ncontainers; ci++) {
    const ptx_container *c = &f->containers[ci];
    if (op->json) {
      fprintf(o, "%s\n  {\"index\": %u, \"offset\": %" PRIu64 ", \"size\": %" PRIu64 ", \"section\": ",
              ci ? "," : "", ci, c->offset, c->size);
      json_cstr(o, c->section);
      fprintf(o, ", \"section_offset\": %" PRIu64 ", \"vaddr\": %" PRIu64 ", \"member\": ", c->section_offset,
              c->vaddr);
      json_cstr(o, c->member);
      if (c->wrapper >= 0)
        fprintf(o, ", \"wrapper\": %d", c->wrapper);
      else
        fputs(", \"wrapper\": null", o);
      fprintf(o, ", \"malformed\": %s, \"entries\": [", c->malformed ? "true" : "false");
    } else {
      fprintf(o, "  c%04u ", ci);
      if (c->member) fprintf(o, "%s:", c->member);
      if (c->section)
        fprintf(o, "%s+0x%" PRIx64, c->section, c->section_offset);
      else
        fputs("fatbin", o);
      fprintf(o, " at 0x%" PRIx64 ", %" PRIu64 " bytes, %u entries", c->offset, c->size, c->nentries);
      if (c->wrapper >= 0) fprintf(o, ", wrapper w%04d (v%u)", c->wrapper, f->wrappers[c->wrapper].version);
      if (c->malformed) fputs(", MALFORMED", o);
      fputc('\n', o);
    }
    for (uint32_t ei = 0; ei < c->nentries; ei++) {
      if (op->json) fprintf(o, "%s\n    ", ei ? "," : "");
      errors += print_entry(o, f, ci, ei, op, dec, d);
    }
    if (op->json) fputs("]}", o);
  }
  if (op->json) fputs("],\n \"wrappers\": [", o);
  for (uint32_t wi = 0; wi < f->nwrappers; wi++) {
    const ptx_wrapper *w = &f->wrappers[wi];
    if (op->json) {
      fprintf(o, "%s\n  {\"index\": %u, \"offset\": %" PRIu64 ", \"version\": %u, \"data\": %" PRIu64
                 ", \"list\": %" PRIu64 ", \"member\": ",
              wi ? "," : "", wi, w->offset, w->version, w->data, w->list);
      json_cstr(o, w->member);
      if (w->container >= 0)
        fprintf(o, ", \"container\": %d}", w->container);
      else
        fputs(", \"container\": null}", o);
    } else {
      fprintf(o, "  w%04u v%u at 0x%" PRIx64 " data 0x%" PRIx64, wi, w->version, w->offset, w->data);
      if (w->version == 2) fprintf(o, " list 0x%" PRIx64, w->list);
      if (w->container >= 0)
        fprintf(o, " -> c%04d\n", w->container);
      else
        fputs(" -> (no container found at that address)\n", o);
    }
  }
  if (op->json) fprintf(o, "], \"errors\": %d}", errors);
  ptx_file_close(f);
  return errors;
}

/* ---- --coverage ---------------------------------------------------------- */
typedef struct name_list {
  const char **v;
  size_t n, cap;
} name_list;

static bool push_names(name_list *l, const char **names, uint32_t n) {
  if (l->n + n > l->cap) {
    size_t cap = (l->n + n) * 2;
    const char **v = realloc(l->v, cap * sizeof *v);
    if (!v) return false;
    l->v = v;
    l->cap = cap;
  }
  memcpy(l->v + l->n, names, n * sizeof *names);
  l->n += n;
  return true;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorts and drops duplicates; returns the count left. */
static size_t uniq(name_list *l) {
  if (!l->n) return 0;
  qsort(l->v, l->n, sizeof *l->v, cmp_str);
  size_t k = 1;
  for (size_t i = 1; i < l->n; i++)
    if (strcmp(l->v[i], l->v[k - 1])) l->v[k++] = l->v[i];
  return l->n = k;
}

static int coverage_file(FILE *o, const char *path, const inspect_opts *op, ptx_decoder *dec,
                         pw_diag *d, bool first) {
  ptx_file *f = ptx_file_open(path, d);
  if (!f) return 1;
  int errors = f->nerrors;
  pw_arena a;
  pw_arena_init(&a);
  name_list ptx = {0}, sass = {0};
  uint32_t with_ptx = 0, cubin_only = 0;
  for (uint32_t ci = 0; ci < f->ncontainers; ci++) {
    const ptx_container *c = &f->containers[ci];
    bool has_ptx = false, has_cubin = false;
    for (uint32_t ei = 0; ei < c->nentries; ei++) {
      const ptx_entry *e = &c->entries[ei];
      if (e->kind != ptx_kind_ptx && e->kind != ptx_kind_elf) continue;
      ptx_payload p;
      if (!ptx_entry_read(f, e, &op->read, dec, d, &p)) {
        errors++;
        continue;
      }
      bool is_ptx = e->kind == ptx_kind_ptx;
      has_ptx |= is_ptx;
      has_cubin |= !is_ptx;
      uint32_t n = is_ptx ? ptx_scan_kernels((const char *)p.data, p.len, NULL, NULL, 0)
                          : ptx_cubin_kernels(p.data, p.len, NULL, NULL, 0);
      const char **names = n ? pw_arena_alloc(&a, n * sizeof *names) : NULL;
      if (names) {
        if (is_ptx) ptx_scan_kernels((const char *)p.data, p.len, &a, names, n);
        else ptx_cubin_kernels(p.data, p.len, &a, names, n);
        if (!push_names(is_ptx ? &ptx : &sass, names, n)) errors++;
      }
      ptx_payload_free(&p);
    }
    with_ptx += has_ptx;
    cubin_only += has_cubin && !has_ptx;
  }
  size_t np = uniq(&ptx), ns = uniq(&sass), only = 0;
  for (size_t i = 0; i < ns; i++)
    if (!bsearch(&sass.v[i], ptx.v, np, sizeof *ptx.v, cmp_str)) only++;
  size_t total = np + only;
  if (op->json) {
    fprintf(o, "%s{\"path\": ", first ? "" : ",\n");
    json_cstr(o, f->path);
    fprintf(o, ", \"kernels\": %zu, \"with_ptx\": %zu, \"sass_only\": %zu, \"containers\": %u, "
               "\"containers_with_ptx\": %u, \"containers_cubin_only\": %u, \"errors\": %d}",
            total, np, only, f->ncontainers, with_ptx, cubin_only, errors);
  } else {
    fprintf(o, "%s: %zu kernels, %zu with PTX (%.1f%%), %zu SASS only; %u containers, %u with "
               "PTX, %u cubins only\n",
            f->path, total, np, total ? 100.0 * (double)np / (double)total : 0.0, only,
            f->ncontainers, with_ptx, cubin_only);
  }
  free(ptx.v);
  free(sass.v);
  pw_arena_free(&a);
  ptx_file_close(f);
  return errors;
}

int cmd_inspect(int argc, char **argv) {
  inspect_opts op = {0};
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (cmd_is_help(a)) {
      usage(stdout);
      return 0;
    } else if (!strcmp(a, "--json")) {
      op.json = true;
    } else if (!strcmp(a, "--quick")) {
      op.quick = true;
    } else if (!strcmp(a, "--all-kernels")) {
      op.all_kernels = true;
    } else if (!strcmp(a, "--coverage")) {
      op.coverage = true;
    } else if (!strncmp(a, "--max-size=", 11)) {
      if (!cmd_parse_size(a + 11, &op.read.max_decompressed)) {
        fprintf(stderr, "ptxwave inspect: bad size '%s'\n", a + 11);
        return 2;
      }
    } else if (!strcmp(a, "--")) {
      nfiles += argc - i - 1;
      break;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "ptxwave inspect: unknown option '%s'\n\n", a);
      usage(stderr);
      return 2;
    } else {
      nfiles++;
    }
  }
  if (!nfiles) {
    usage(stderr);
    return 2;
  }
  pw_diag d;
  pw_diag_init(&d, stderr);
  d.max_errors = 50;
  ptx_decoder *dec = ptx_decoder_new();
  int errors = 0;
  bool first = true, files_only = false;
  if (op.json) fputs("{\"files\": [\n", stdout);
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!files_only) {
      if (!strcmp(a, "--")) {
        files_only = true;
        continue;
      }
      if (a[0] == '-' && a[1]) continue;
    }
    errors += op.coverage ? coverage_file(stdout, a, &op, dec, &d, first)
                          : inspect_file(stdout, a, &op, dec, &d, first);
    first = false;
  }
  if (op.json) fputs("\n]}\n", stdout);
  ptx_decoder_free(dec);
  pw_diag_fini(&d);
  fflush(stdout);
  return errors || d.nerrors ? 1 : 0;
}
