/* tests/corpus/corpus_sweep.c: every fatbin in the CUDA toolkit's
 * libraries, found, counted and decompressed.
 *
 * Inputs: every `*.so*` in $PTXWAVE_CUDA_LIB (default /usr/local/cuda/lib64),
 * symlinks followed and each real file counted once, plus libcudadevrt.a.
 *
 * Expected: the counts of an independent scan of CUDA 13.0's lib64 (a
 * separate Python reader, design.md): 17 files with fatbins, 29,615
 * containers, 9,582 PTX entries, 19,784 cubins, 12,932 entries of kind 8.
 * Override with PTXWAVE_CORPUS_EXPECT="files,containers,ptx,cubin,kind8"
 * for another toolkit.
 *
 * Beyond the counts, every PTX and cubin entry must decompress, and each
 * payload is checked against facts that do not come from the fatbin header
 * decoder: a PTX text's own `.version` and `.target` lines must equal the
 * header's ISA version and arch (with its a/f suffix), and a cubin must be
 * an EM_CUDA ELF.  Every wrapper must point at a container.
 *
 * Files are shared among threads (a work counter, one decoder and one
 * diagnostics buffer per thread): the readers have no global state, and
 * this is where that is exercised.  Skipped (77) without the toolkit.
 */
#include <dirent.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ptx/container.h"

typedef struct file_result {
  char path[1024];
  uint64_t containers, ptx, cubin, kind8, other, wrappers, unmapped_wrappers;
  uint64_t ptx_bytes, cubin_bytes, lz4, zstd, stored;
  uint64_t mismatches;  /* payload facts that disagree with the header */
  int errors;
  char first_problem[512];
} file_result;

typedef struct sweep {
  file_result *files;
  int nfiles;
  atomic_int next;
} sweep;

static void problem(file_result *r, const char *fmt, const char *name, const char *detail) {
  r->mismatches++;
  if (!r->first_problem[0]) snprintf(r->first_problem, sizeof r->first_problem, fmt, name, detail);
}

/* ".version 8.7" and ".target sm_90a" of a PTX text (first occurrence,
 * outside comments is not checked: nvcc's embedded PTX has none left). */
static bool directive(const char *t, size_t n, const char *dir, char *out, size_t cap) {
  size_t dl = strlen(dir);
  for (size_t i = 0; i + dl < n; i++) {
    if ((i && t[i - 1] != '\n') || memcmp(t + i, dir, dl)) continue;
    size_t j = i + dl;
    while (j < n && (t[j] == ' ' || t[j] == '\t')) j++;
    size_t k = 0;
    while (j < n && k + 1 < cap && t[j] != ' ' && t[j] != ',' && t[j] != '\n' && t[j] != '\r') out[k++] = t[j++];
    out[k] = 0;
    return true;
  }
  return false;
}

static void sweep_file(file_result *r, ptx_decoder *dec) {
  pw_diag d;
  pw_diag_init(&d, NULL);
  d.max_errors = 5;
  ptx_file *f = ptx_file_open(r->path, &d);
  if (!f) {
    r->errors++;
    snprintf(r->first_problem, sizeof r->first_problem, "%s", pw_diag_text(&d));
    pw_diag_fini(&d);
    return;
  }
  r->containers = f->ncontainers;
  r->wrappers = f->nwrappers;
  for (uint32_t i = 0; i < f->nwrappers; i++) r->unmapped_wrappers += f->wrappers[i].container < 0;
  char name[4096];
  for (uint32_t ci = 0; ci < f->ncontainers; ci++) {
    const ptx_container *c = &f->containers[ci];
    for (uint32_t ei = 0; ei < c->nentries; ei++) {
      const ptx_entry *e = &c->entries[ei];
      switch (e->kind) {
      case ptx_kind_ptx: r->ptx++; break;
      case ptx_kind_elf: r->cubin++; break;
      case ptx_kind_other: r->kind8++; break;
      default: r->other++; break;
      }
      if (e->kind != ptx_kind_ptx && e->kind != ptx_kind_elf) continue;
      r->lz4 += e->compression == ptx_comp_lz4;
      r->zstd += e->compression == ptx_comp_zstd;
      r->stored += e->compression == ptx_comp_none;
      ptx_payload pl;
      if (!ptx_entry_read(f, e, NULL, dec, &d, &pl)) continue;
      ptx_entry_name(name, sizeof name, f, ci, ei);
      if (e->kind == ptx_kind_ptx) {
        r->ptx_bytes += pl.len;
        char v[32], t[32], want[32];
        snprintf(want, sizeof want, "%u.%u", e->version_major, e->version_minor);
        if (!directive((const char *)pl.data, pl.len, ".version", v, sizeof v) || strcmp(v, want))
          problem(r, "%.300s: .version is not the header's %s", name, want);
        snprintf(want, sizeof want, "sm_%u%s", e->arch,
                 e->arch_suffix == 'a' ? "a" : e->arch_suffix == 'f' ? "f" : "");
        if (!directive((const char *)pl.data, pl.len, ".target", t, sizeof t) || strcmp(t, want))
          problem(r, "%.300s: .target is not the header's %s", name, want);
      } else {
        r->cubin_bytes += pl.len;
        if (pl.len < 64 || memcmp(pl.data, "\x7f" "ELF", 4) || pl.data[18] != 190 || pl.data[19] != 0)
          problem(r, "%.300s: cubin is not an EM_CUDA ELF%s", name, "");
      }
      ptx_payload_free(&pl);
    }
  }
  r->errors += d.nerrors;
  if (d.nerrors && !r->first_problem[0])
    snprintf(r->first_problem, sizeof r->first_problem, "%s", pw_diag_text(&d));
  ptx_file_close(f);
  pw_diag_fini(&d);
}

static void *worker(void *arg) {
  sweep *s = arg;
  ptx_decoder *dec = ptx_decoder_new();
  for (;;) {
    int i = atomic_fetch_add(&s->next, 1);
    if (i >= s->nfiles) break;
    sweep_file(&s->files[i], dec);
  }
  ptx_decoder_free(dec);
  return NULL;
}

static int cmp_path(const void *a, const void *b) {
  return strcmp(((const file_result *)a)->path, ((const file_result *)b)->path);
}

int main(void) {
  const char *dir = getenv("PTXWAVE_CUDA_LIB");
  if (!dir) dir = "/usr/local/cuda/lib64";
  DIR *dh = opendir(dir);
  if (!dh) {
    printf("skipped: no CUDA toolkit libraries at %s\n", dir);
    return 77;
  }
  uint64_t expect[5] = {17, 29615, 9582, 19784, 12932};
  const char *ex = getenv("PTXWAVE_CORPUS_EXPECT");
  if (ex && sscanf(ex, "%lu,%lu,%lu,%lu,%lu", &expect[0], &expect[1], &expect[2], &expect[3], &expect[4]) != 5) {
    printf("PTXWAVE_CORPUS_EXPECT must be files,containers,ptx,cubin,kind8\n");
    return 1;
  }

  /* The inputs, each real file once. */
  sweep s = {0};
  int cap = 0;
  struct stat *ids = NULL;
  struct dirent *de;
  while ((de = readdir(dh))) {
    if (!strstr(de->d_name, ".so") && strcmp(de->d_name, "libcudadevrt.a")) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) continue;
    bool dup = false;
    for (int i = 0; i < s.nfiles && !dup; i++) dup = ids[i].st_ino == st.st_ino && ids[i].st_dev == st.st_dev;
    if (dup) {
      /* Show the longest name: the real file (libcublas.so.13), not the
       * link (libcublas.so). */
      for (int i = 0; i < s.nfiles; i++)
        if (ids[i].st_ino == st.st_ino && ids[i].st_dev == st.st_dev &&
            strlen(path) > strlen(s.files[i].path))
          snprintf(s.files[i].path, sizeof s.files[i].path, "%s", path);
      continue;
    }
    if (s.nfiles == cap) {
      cap = cap ? cap * 2 : 64;
      s.files = realloc(s.files, (size_t)cap * sizeof *s.files);
      ids = realloc(ids, (size_t)cap * sizeof *ids);
      if (!s.files || !ids) return 1;
    }
    memset(&s.files[s.nfiles], 0, sizeof s.files[0]);
    snprintf(s.files[s.nfiles].path, sizeof s.files[0].path, "%s", path);
    ids[s.nfiles++] = st;
  }
  closedir(dh);
  qsort(s.files, (size_t)s.nfiles, sizeof *s.files, cmp_path);

  enum { nthreads = 2 };
  pthread_t th[nthreads];
  for (int i = 0; i < nthreads; i++) pthread_create(&th[i], NULL, worker, &s);
  for (int i = 0; i < nthreads; i++) pthread_join(th[i], NULL);

  uint64_t files = 0, tot[5] = {0}, ptx_bytes = 0, cubin_bytes = 0, lz4 = 0, zstd = 0, stored = 0;
  uint64_t unmapped = 0, mismatches = 0, other = 0;
  int errors = 0;
  printf("%-44s %10s %7s %7s %7s\n", "file", "containers", "PTX", "cubins", "kind 8");
  for (int i = 0; i < s.nfiles; i++) {
    file_result *r = &s.files[i];
    errors += r->errors;
    mismatches += r->mismatches;
    unmapped += r->unmapped_wrappers;
    other += r->other;
    if (r->first_problem[0]) printf("PROBLEM in %s: %s\n", r->path, r->first_problem);
    if (!r->containers) continue;
    files++;
    const char *b = strrchr(r->path, '/');
    printf("%-44s %10lu %7lu %7lu %7lu\n", b ? b + 1 : r->path, r->containers, r->ptx, r->cubin, r->kind8);
    tot[1] += r->containers;
    tot[2] += r->ptx;
    tot[3] += r->cubin;
    tot[4] += r->kind8;
    ptx_bytes += r->ptx_bytes;
    cubin_bytes += r->cubin_bytes;
    lz4 += r->lz4;
    zstd += r->zstd;
    stored += r->stored;
  }
  tot[0] = files;
  printf("%-44s %10lu %7lu %7lu %7lu\n", "total", tot[1], tot[2], tot[3], tot[4]);
  printf("%lu files with fatbins (of %d read); PTX %lu bytes, cubins %lu bytes decompressed;\n"
         "PTX+cubin payloads: %lu LZ4, %lu zstd, %lu stored; other kinds %lu\n",
         files, s.nfiles, ptx_bytes, cubin_bytes, lz4, zstd, stored, other);
  static const char *what[5] = {"files with fatbins", "containers", "PTX entries", "cubins", "kind-8 entries"};
  int bad = 0;
  for (int i = 0; i < 5; i++)
    if (tot[i] != expect[i]) {
      printf("FAIL: %lu %s, the independent scan found %lu\n", tot[i], what[i], expect[i]);
      bad++;
    }
  if (errors) printf("FAIL: %d errors reading or decompressing\n", errors), bad++;
  if (mismatches) printf("FAIL: %lu payloads disagree with their headers\n", mismatches), bad++;
  if (unmapped) printf("FAIL: %lu wrappers point at no container\n", unmapped), bad++;
  free(s.files);
  free(ids);
  if (!bad) printf("corpus: all counts match, every PTX and cubin entry decompressed\n");
  return bad ? 1 : 0;
}
