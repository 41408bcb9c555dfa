/* convert/cv_convert.c: scanning inputs, the worker pool, storing code
 * objects (convert.h has the design).
 *
 * Jobs are (module, target): a module is one fatbin container (its PTX
 * entries in the runtime's order, tried until one compiles) or one PTX
 * entry (all_entries), or a .ptx file.  Workers take the next job index
 * from a shared counter; each has its own decompressor.  The calling
 * thread only waits, reports progress and watches the stop flag.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convert/convert.h"
#include "pw_config.h"
#include "ptx/container.h"
#include "runtime/rt_bundle.h"
#include "runtime/rt_cache.h"
#include "util/pw_vec.h"

#define MAX_CHAIN 16

typedef struct job {
  uint32_t input;             /* index in run->inputs and files[] */
  uint32_t container;         /* UINT32_MAX: the whole file is PTX text */
  uint32_t entries[MAX_CHAIN];
  uint32_t nentries;
  const ir_target *target;
} job;

/* One bundle being written: its file, its staging directory, and the
 * bundle already there (extended, its entries kept). */
typedef struct bslot {
  char *path;                 /* NULL: no bundle (an input with nothing to convert) */
  char parts[PATH_MAX];
  rt_bundle *old;
  bool usable;                /* the staging directory exists */
} bslot;

typedef struct priv {
  ptx_file **files;           /* per input, open for the whole run */
  job *jobs;
  size_t njobs, cap;
  size_t next;                /* next job to take (under lock) */
  pthread_mutex_t lock;
  pthread_cond_t cond;
  unsigned running;
  rt_cache *cache;
  bslot *slots;               /* cv_dest_bundle: one; cv_dest_next_to_input: one per input */
  uint32_t nslots;
  double t0;
} priv;

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- scanning ------------------------------------------------------------ */

static bool has_binary_magic(const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  unsigned char m[8] = {0};
  ssize_t n = read(fd, m, sizeof m);
  close(fd);
  if (n < 4) return false;
  uint32_t w;
  memcpy(&w, m, 4);
  return !memcmp(m, "\177ELF", 4) || (n == 8 && !memcmp(m, "!<arch>\n", 8)) ||
         w == PTX_FATBIN_MAGIC;
}

static void add_job(cv_run *r, const job *j) {
  priv *P = r->priv;
  job *nj = pw_vec_grow(P->jobs, &P->cap, P->njobs + 1, sizeof *nj);
  if (!nj) return;
  P->jobs = nj;
  P->jobs[P->njobs++] = *j;
}

static uint32_t count_kernels(const ptx_file *f, const ptx_entry *e, ptx_decoder *dec) {
  ptx_payload p;
  pw_diag d;
  pw_diag_init(&d, NULL);
  uint32_t n = 0;
  if (ptx_entry_read(f, e, NULL, dec, &d, &p)) {
    n = ptx_scan_kernels((const char *)p.data, p.len, NULL, NULL, 0);
    ptx_payload_free(&p);
  }
  pw_diag_fini(&d);
  return n;
}

/* A bundle to write at path (NULL: none, keeps the slots aligned with the
 * inputs): its staging directory made, an existing bundle opened to be
 * extended (an invalid one is replaced).  False when the directory cannot
 * be made (reported). */
static bool open_slot(cv_run *r, const char *path, pw_diag *d) {
  priv *P = r->priv;
  bslot *ns = realloc(P->slots, (P->nslots + 1) * sizeof *ns);
  if (!ns) return false;
  P->slots = ns;
  bslot *B = &P->slots[P->nslots++];
  memset(B, 0, sizeof *B);
  if (!path) return true;
  if (!(B->path = strdup(path))) return false;
  snprintf(B->parts, sizeof B->parts, "%s.parts", path);
  if (mkdir(B->parts, 0755) && errno != EEXIST) {
    pw_error(d, B->parts, "cannot make the staging directory: %s", strerror(errno));
    return false;
  }
  B->usable = true;
  char err[PATH_MAX + 128];
  if (access(path, F_OK) == 0 && !(B->old = rt_bundle_open(path, err, sizeof err))) {
    pw_src where = {path, NULL, 0};
    size_t pl = strlen(path);
    const char *why = !strncmp(err, path, pl) && err[pl] == ':' ? err + pl + 2 : err;
    pw_warn_at(d, &where, 0, 0, "%s (it will be replaced)", why);
  }
  return true;
}

/* One file: its modules become jobs.  Files without PTX are not inputs. */
static void scan_file(cv_run *r, const char *path, bool explicit, pw_diag *d, ptx_decoder *dec) {
  priv *P = r->priv;
  const cv_options *o = r->opt;
  r->files_scanned++;
  size_t pl = strlen(path);
  bool is_ptx = pl > 4 && !strcmp(path + pl - 4, ".ptx");
  if (!is_ptx && !has_binary_magic(path)) {
    if (explicit) pw_error(d, path, "not an ELF file, archive, fatbin or .ptx file");
    return;
  }
  pw_diag fd;
  pw_diag_init(&fd, NULL);
  ptx_file *f = ptx_file_open(path, &fd);
  if (!f) {
    pw_error(d, path, "%s", pw_diag_text(&fd));
    pw_diag_fini(&fd);
    return;
  }
  pw_src where = {path, NULL, 0};  /* messages about the whole file: "path:0:0: warning: ..." */
  if (f->nerrors && d) pw_warn_at(d, &where, 0, 0, "%s", pw_diag_text(&fd));
  pw_diag_fini(&fd);
  uint32_t input = r->ninputs;
  cv_input in = {0};
  /* the runtime's rule (rt_ptx_rank): its default capability, any PTX */
  ptx_target t = {.max_isa_major = 9, .max_isa_minor = 1, .max_sm = o->sm ? o->sm : 120,
                  .arch_specific = false, .any_ptx = true};
  size_t first_job = P->njobs;
  if (f->input == ptx_input_ptx) {
    in.modules = 1;
    in.kernels = ptx_scan_kernels((const char *)f->data, (size_t)f->size, NULL, NULL, 0);
    for (unsigned k = 0; k < o->ntargets; k++)
      add_job(r, &(job){.input = input, .container = UINT32_MAX, .target = o->targets[k]});
  }
  for (uint32_t c = 0; f->input != ptx_input_ptx && c < f->ncontainers; c++) {
    const ptx_container *pc = &f->containers[c];
    if (o->max_modules && in.modules >= o->max_modules) break;
    if (o->all_entries) {
      for (uint32_t e = 0; e < pc->nentries; e++) {
        if (pc->entries[e].kind != ptx_kind_ptx) continue;
        if (o->max_modules && in.modules >= o->max_modules) break;
        in.modules++;
        in.kernels += count_kernels(f, &pc->entries[e], dec);
        for (unsigned k = 0; k < o->ntargets; k++)
          add_job(r, &(job){.input = input, .container = c, .entries = {e}, .nentries = 1,
                            .target = o->targets[k]});
      }
      continue;
    }
    job j = {.input = input, .container = c};
    j.nentries = ptx_rank(pc, &t, j.entries, MAX_CHAIN);
    if (j.nentries > MAX_CHAIN) j.nentries = MAX_CHAIN;
    if (!j.nentries) continue;  /* cubins only, or PTX newer than the runtime takes */
    in.modules++;
    in.kernels += count_kernels(f, &pc->entries[j.entries[0]], dec);
    for (unsigned k = 0; k < o->ntargets; k++) {
      j.target = o->targets[k];
      add_job(r, &j);
    }
  }
  if (P->njobs == first_job) {  /* nothing to convert here */
    if (explicit)
      pw_warn_at(d, &where, 0, 0, "no PTX the runtime would load at compute capability %u.%u (--cc)",
                 t.max_sm / 10, t.max_sm % 10);
    ptx_file_close(f);
    f = NULL;
    if (!explicit) return;
  }
  cv_input *ni = realloc(r->inputs, (r->ninputs + 1) * sizeof *ni);
  ptx_file **nf = realloc(P->files, (r->ninputs + 1) * sizeof *nf);
  if (ni) r->inputs = ni;
  if (nf) P->files = nf;
  if (!ni || !nf) {  /* out of memory: the jobs must not name a missing input */
    P->njobs = first_job;
    if (f) ptx_file_close(f);
    return;
  }
  in.path = strdup(path);
  if (o->dest == cv_dest_next_to_input) {
    /* "<file>.ptxwave" next to the file the path resolves to: the runtime
     * looks next to /proc/self/exe and to each loaded object's real path
     * (rt_bundle.c) */
    char real[PATH_MAX], bpath[PATH_MAX + 16];
    bool want = P->njobs != first_job && realpath(path, real);
    if (want) snprintf(bpath, sizeof bpath, "%s%s", real, RT_BUNDLE_SUFFIX);
    open_slot(r, want ? bpath : NULL, d);
    if (P->nslots != r->ninputs + 1) {  /* out of memory: keep the slots aligned */
      free(in.path);
      P->njobs = first_job;
      if (f) ptx_file_close(f);
      return;
    }
  }
  r->inputs[r->ninputs] = in;
  P->files[r->ninputs] = f;
  r->ninputs++;
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Directories recursively, in name order; symbolic links are not followed
 * inside directories (libfoo.so -> libfoo.so.1 -> libfoo.so.1.2 is one
 * file), but a link given on the command line is. */
static void scan_path(cv_run *r, const char *path, bool explicit, pw_diag *d, ptx_decoder *dec) {
  struct stat sb;
  if ((explicit ? stat(path, &sb) : lstat(path, &sb))) {
    if (explicit) pw_error(d, path, "%s", strerror(errno));
    return;
  }
  if (S_ISREG(sb.st_mode)) {
    scan_file(r, path, explicit, d, dec);
    return;
  }
  if (!S_ISDIR(sb.st_mode)) return;
  DIR *dir = opendir(path);
  if (!dir) {
    pw_error(d, path, "%s", strerror(errno));
    return;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  while ((de = readdir(dir))) {
    if (de->d_name[0] == '.') continue;
    char **nn = pw_vec_grow(names, &cap, n + 1, sizeof *nn);
    if (!nn) break;
    names = nn;
    names[n++] = strdup(de->d_name);
  }
  closedir(dir);
  qsort(names, n, sizeof *names, by_name);
  for (size_t i = 0; i < n; i++) {
    char sub[PATH_MAX];
    size_t l = strlen(names[i]);
    bool bundle = l > 8 && !strcmp(names[i] + l - 8, RT_BUNDLE_SUFFIX);
    if (names[i] && !bundle && snprintf(sub, sizeof sub, "%s/%s", path, names[i]) < (int)sizeof sub)
      scan_path(r, sub, false, d, dec);
    free(names[i]);
  }
  free(names);
}

/* ---- destinations --------------------------------------------------------- */

static void part_path(const bslot *B, const uint8_t key[16], const char *target, char *out,
                      size_t cap) {
  char hex[33];
  for (int i = 0; i < 16; i++) snprintf(hex + 2 * i, 3, "%02x", key[i]);
  snprintf(out, cap, "%s/%s.%s", B->parts, hex, target);
}

/* The bundle the jobs of an input go to. */
static bslot *slot_of(cv_run *r, uint32_t input) {
  priv *P = r->priv;
  uint32_t i = r->opt->dest == cv_dest_next_to_input ? input : 0;
  return i < P->nslots ? &P->slots[i] : NULL;
}

/* The stored record for k (code object or failure), malloc'd into *data;
 * false when there is none. */
static bool lookup(cv_run *r, uint32_t input, const rt_cache_key *k, void **data, size_t *len) {
  priv *P = r->priv;
  if (r->opt->dest == cv_dest_cache) return rt_cache_get(P->cache, k, data, len);
  const bslot *B = slot_of(r, input);
  if (!B || !B->usable) return false;
  uint8_t key[16];
  rt_bundle_key(k, key);
  const void *p;
  size_t n;
  if (B->old && rt_bundle_find(B->old, key, &p, &n)) {
    if (!(*data = malloc(n ? n : 1))) return false;
    memcpy(*data, p, n);
    *len = n;
    return true;
  }
  char path[PATH_MAX + 64];
  part_path(B, key, k->target, path, sizeof path);
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  bool ok = !fseek(f, 0, SEEK_END);
  long sz = ok ? ftell(f) : -1;
  ok = sz >= 0 && !fseek(f, 0, SEEK_SET) && (*data = malloc(sz ? (size_t)sz : 1)) != NULL;
  if (ok && fread(*data, 1, (size_t)sz, f) != (size_t)sz) {
    free(*data);
    ok = false;
  }
  fclose(f);
  if (ok) *len = (size_t)sz;
  return ok;
}

static bool stored(cv_run *r, uint32_t input, const rt_cache_key *k) {
  void *data;
  size_t len;
  if (!lookup(r, input, k, &data, &len)) return false;
  free(data);
  return true;
}

/* A failure recorded by an earlier run (and not to be retried): its reason. */
static bool failed_before(cv_run *r, uint32_t input, const rt_cache_key *fk, char *reason,
                          size_t cap) {
  if (r->opt->retry_unsupported) return false;
  void *data;
  size_t len;
  if (!lookup(r, input, fk, &data, &len)) return false;
  size_t ml = strlen(CV_FAILURE_MAGIC);
  bool ok = len >= ml && !memcmp(data, CV_FAILURE_MAGIC, ml);
  if (ok) snprintf(reason, cap, "%.*s", (int)(len - ml), (const char *)data + ml);
  free(data);
  return ok;
}

static bool write_file_atomic(const char *path, const void *data, size_t len) {
  char tmp[PATH_MAX + 96];
  snprintf(tmp, sizeof tmp, "%s.tmp.%ld.%lx", path, (long)getpid(), (unsigned long)pthread_self());
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  const uint8_t *p = data;
  size_t left = len;
  bool ok = true;
  while (ok && left) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    ok = w > 0;
    if (ok) {
      p += w;
      left -= (size_t)w;
    }
  }
  ok = ok && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path)) {
    unlink(tmp);
    return false;
  }
  return true;
}

static bool store(cv_run *r, uint32_t input, const rt_cache_key *k, const void *data,
                  size_t len) {
  priv *P = r->priv;
  if (r->opt->dest == cv_dest_cache) return rt_cache_put(P->cache, k, data, len);
  const bslot *B = slot_of(r, input);
  if (!B || !B->usable) return false;
  uint8_t key[16];
  rt_bundle_key(k, key);
  char path[PATH_MAX + 64];
  part_path(B, key, k->target, path, sizeof path);
  return write_file_atomic(path, data, len);
}

/* The bundle: the entries of the old one, then every staged part (code
 * objects and failure records alike: both are looked up by key). */
static bool assemble_bundle(const bslot *B, pw_diag *d) {
  rt_bundle_item *items = NULL;
  void **owned = NULL;
  size_t n = 0, cap = 0, nowned = 0;
  bool ok = true;
  uint32_t nold = B->old ? rt_bundle_count(B->old) : 0;
  cap = nold + 64;
  items = calloc(cap, sizeof *items);
  for (uint32_t i = 0; items && i < nold; i++) {
    const char *t;
    rt_bundle_entry(B->old, i, items[n].key, &t, &items[n].data, &items[n].len);
    snprintf(items[n].target, sizeof items[n].target, "%.15s", t);
    n++;
  }
  DIR *dir = opendir(B->parts);
  struct dirent *de;
  while (items && dir && (de = readdir(dir))) {
    const char *name = de->d_name;
    const char *dot = strchr(name, '.');
    if (!dot || dot - name != 32 || strstr(name, ".tmp.")) continue;
    rt_bundle_item *ni = pw_vec_grow(items, &cap, n + 1, sizeof *ni);
    if (!ni) {
      ok = false;
      break;
    }
    items = ni;
    rt_bundle_item *it = &items[n];
    memset(it, 0, sizeof *it);
    for (int i = 0; i < 16; i++) {
      unsigned v;
      sscanf(name + 2 * i, "%2x", &v);
      it->key[i] = (uint8_t)v;
    }
    snprintf(it->target, sizeof it->target, "%.15s", dot + 1);
    char path[PATH_MAX + 320];
    snprintf(path, sizeof path, "%s/%.255s", B->parts, name);
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = len > 0 ? malloc((size_t)len) : NULL;
    bool got = buf && fread(buf, 1, (size_t)len, f) == (size_t)len;
    fclose(f);
    if (!got) {
      free(buf);
      continue;
    }
    void **no = realloc(owned, (nowned + 1) * sizeof *no);
    if (!no) {
      free(buf);
      ok = false;
      break;
    }
    owned = no;
    owned[nowned++] = buf;
    it->data = buf;
    it->len = (size_t)len;
    n++;
  }
  if (dir) closedir(dir);
  char err[PATH_MAX + 128];
  if (ok && items) ok = rt_bundle_write(B->path, items, n, err, sizeof err);
  else snprintf(err, sizeof err, "out of memory");
  if (!ok) pw_error(d, B->path, "cannot write the bundle: %s", err);
  for (size_t i = 0; i < nowned; i++) free(owned[i]);
  free(owned);
  free(items);
  if (ok) {  /* what is in the bundle leaves the staging directory */
    if ((dir = opendir(B->parts))) {
      while ((de = readdir(dir)))
        if (de->d_name[0] != '.') unlinkat(dirfd(dir), de->d_name, 0);
      closedir(dir);
    }
    rmdir(B->parts);
  }
  return ok;
}

/* ---- workers ----------------------------------------------------------------- */

static void add_reason(cv_input *in, const char *what) {
  for (uint32_t i = 0; i < in->nreasons; i++)
    if (!strcmp(in->reasons[i].what, what)) {
      in->reasons[i].count++;
      return;
    }
  if (in->nreasons == CV_MAX_REASONS) {
    in->other_reasons++;
    return;
  }
  snprintf(in->reasons[in->nreasons].what, sizeof in->reasons[0].what, "%.63s", what);
  in->reasons[in->nreasons++].count = 1;
}

static void record_failure(cv_run *r, uint32_t input, const rt_cache_key *fk, const char *reason) {
  char buf[160];
  int n = snprintf(buf, sizeof buf, "%s%s", CV_FAILURE_MAGIC, reason);
  if (n > (int)sizeof buf - 1) n = (int)sizeof buf - 1;
  store(r, input, fk, buf, (size_t)n);  /* best effort: without it a rerun only compiles again */
}

typedef enum outcome { out_converted, out_skipped, out_unsupported, out_failed_before } outcome;

/* One job: the container's PTX entries in the runtime's order until one
 * compiles (or is stored).  Every entry that fails gets its failure
 * record; entries that failed before are passed over without compiling. */
static outcome run_job(cv_run *r, const job *j, ptx_decoder *dec, uint64_t *instrs, char *reason,
                       size_t cap) {
  priv *P = r->priv;
  const ptx_file *f = P->files[j->input];
  reason[0] = 0;
  bool compiled_any = false;  /* false at the end: every entry failed in an earlier run */
  uint32_t n = j->container == UINT32_MAX ? 1 : j->nentries;
  for (uint32_t i = 0; i < n; i++) {
    ptx_payload p = {0};
    const char *text;
    size_t len;
    char name[256];
    if (j->container == UINT32_MAX) {
      text = (const char *)f->data;
      len = (size_t)f->size;
      snprintf(name, sizeof name, "%s", f->path);
    } else {
      const ptx_container *pc = &f->containers[j->container];
      pw_diag d;
      pw_diag_init(&d, NULL);
      bool ok = ptx_entry_read(f, &pc->entries[j->entries[i]], NULL, dec, &d, &p);
      pw_diag_fini(&d);
      if (!ok) {
        if (!reason[0]) snprintf(reason, cap, "entry does not decompress");
        compiled_any = true;  /* tried now, not known from before */
        continue;
      }
      text = (const char *)p.data;
      len = p.len;
      ptx_entry_name(name, sizeof name, f, j->container, j->entries[i]);
    }
    rt_cache_key k = rt_code_object_key(text, len, j->target->name);
    if (stored(r, j->input, &k)) {
      ptx_payload_free(&p);
      return out_skipped;
    }
    rt_cache_key fk = k;
    fk.compiler = CV_FAILURE_COMPILER;
    char why[128];
    if (failed_before(r, j->input, &fk, why, sizeof why)) {
      if (!reason[0]) snprintf(reason, cap, "%s", why);
      ptx_payload_free(&p);
      continue;
    }
    compiled_any = true;
    cg_output out;
    cg_ptx_info info;
    pw_diag d;
    pw_diag_init(&d, NULL);
    d.max_errors = 4;
    /* With several workers every core is busy already: splitting a module
     * across threads as well (cg_options.threads, automatic by default)
     * would only oversubscribe them.  One worker lets a big module split. */
    unsigned split = r->jobs > 1 ? 1 : 0;
    bool ok = cg_compile_ptx(name, text, len,
                             &(cg_options){.target = j->target, .info = &info, .threads = split},
                             CG_EMIT_HSACO, &out, &d);
    pw_diag_fini(&d);
    snprintf(why, sizeof why, "%s", info.reason);
    if (ok && !store(r, j->input, &k, out.data, out.size)) {
      ok = false;
      snprintf(why, sizeof why, "cannot store the code object");
    } else if (!ok) {
      record_failure(r, j->input, &fk, why);
    }
    free(out.data);
    ptx_payload_free(&p);
    if (ok) {
      *instrs = info.instrs;
      return out_converted;
    }
    if (!reason[0]) snprintf(reason, cap, "%s", why);  /* the best entry's reason */
  }
  return compiled_any ? out_unsupported : out_failed_before;
}

static void *worker(void *arg) {
  cv_run *r = arg;
  priv *P = r->priv;
  ptx_decoder *dec = ptx_decoder_new();
  for (;;) {
    pthread_mutex_lock(&P->lock);
    bool stop = r->opt->stop && *r->opt->stop;
    if (stop) r->interrupted = true;
    size_t i = P->next < P->njobs && !stop ? P->next++ : SIZE_MAX;
    pthread_mutex_unlock(&P->lock);
    if (i == SIZE_MAX) break;
    const job *j = &P->jobs[i];
    char reason[128];
    uint64_t instrs = 0;
    double t0 = now();
    outcome o = run_job(r, j, dec, &instrs, reason, sizeof reason);
    double dt = now() - t0;
    pthread_mutex_lock(&P->lock);
    cv_input *in = &r->inputs[j->input];
    r->done++;
    r->compile_seconds += dt;
    switch (o) {
    case out_converted:
      r->converted++, in->converted++;
      r->instrs_compiled += instrs;
      in->instrs += instrs;
      break;
    case out_skipped: r->skipped++, in->skipped++; break;
    case out_failed_before:  /* still unsupported, only not compiled again */
    case out_unsupported:
      if (o == out_failed_before) r->failed_before++, in->failed_before++;
      r->unsupported++, in->unsupported++;
      add_reason(in, reason);
      break;
    }
    pthread_cond_signal(&P->cond);
    pthread_mutex_unlock(&P->lock);
  }
  ptx_decoder_free(dec);
  pthread_mutex_lock(&P->lock);
  P->running--;
  pthread_cond_signal(&P->cond);
  pthread_mutex_unlock(&P->lock);
  return NULL;
}

/* ---- the run -------------------------------------------------------------------- */

cv_run *cv_convert(const char *const *paths, unsigned npaths, const cv_options *opt, pw_diag *d) {
  cv_run *r = calloc(1, sizeof *r);
  priv *P = calloc(1, sizeof *P);
  if (!r || !P) {
    free(r);
    free(P);
    return NULL;
  }
  r->priv = P;
  r->opt = opt;
  r->jobs = opt->jobs ? opt->jobs : 1;
  pthread_mutex_init(&P->lock, NULL);
  pthread_cond_init(&P->cond, NULL);
  if (opt->dest == cv_dest_cache) {
    if (!(P->cache = rt_cache_open(opt->cache_dir, 0))) {
      pw_error(d, opt->cache_dir ? opt->cache_dir : "kernel cache",
               "cannot open the kernel cache (not a private directory of ours?)");
      return r;
    }
  } else {
    /* one bundle (-o); next to each input, the slots are opened as the
     * inputs are found */
    if (opt->dest == cv_dest_bundle && !open_slot(r, opt->bundle, d)) return r;
  }
  ptx_decoder *dec = ptx_decoder_new();
  for (unsigned i = 0; i < npaths; i++) scan_path(r, paths[i], true, d, dec);
  ptx_decoder_free(dec);
  r->total = (uint32_t)P->njobs;

  /* LLVM registers its signal handlers once per process, on the first
   * output file LLD writes (FileOutputBuffer -> RemoveFileOnSignal), and
   * gives the thread that does it an alternate signal stack of its own.  A
   * worker thread that exits with that stack makes ASan's thread teardown
   * unmap memory it does not own and abort.  So the one-time registration
   * happens here, on the calling thread, with a trivial module. */
  if (P->njobs) {
    static const char warm_up[] = ".version 7.0\n.target sm_80\n.address_size 64\n"
                                  ".visible .entry pw_warm_up()\n{\n  ret;\n}\n";
    cg_output o;
    pw_diag wd;
    pw_diag_init(&wd, NULL);
    if (cg_compile_ptx("warm-up.ptx", warm_up, sizeof warm_up - 1,
                       &(cg_options){.target = opt->targets[0]}, CG_EMIT_HSACO, &o, &wd))
      free(o.data);
    pw_diag_fini(&wd);
  }

  P->t0 = now();
  unsigned nw = r->jobs;
  pthread_t *th = calloc(nw, sizeof *th);
  P->running = 0;
  for (unsigned i = 0; th && i < nw; i++)
    if (!pthread_create(&th[i], NULL, worker, r)) P->running++;
  pthread_mutex_lock(&P->lock);
  while (P->running) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_nsec += 200 * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_cond_timedwait(&P->cond, &P->lock, &ts);
    r->elapsed = now() - P->t0;
    if (opt->progress) opt->progress(r, opt->user);
  }
  pthread_mutex_unlock(&P->lock);
  for (unsigned i = 0; th && i < nw; i++) pthread_join(th[i], NULL);
  free(th);
  if (opt->stop && *opt->stop && r->done < r->total) r->interrupted = true;
  r->elapsed = now() - P->t0;
  for (uint32_t i = 0; i < P->nslots; i++)
    if (P->slots[i].path && P->slots[i].usable) assemble_bundle(&P->slots[i], d);
  if (opt->progress) opt->progress(r, opt->user);
  return r;
}

void cv_run_free(cv_run *r) {
  if (!r) return;
  priv *P = r->priv;
  for (uint32_t i = 0; i < r->ninputs; i++) {
    free(r->inputs[i].path);
    if (P->files[i]) ptx_file_close(P->files[i]);
  }
  free(P->files);
  free(r->inputs);
  free(P->jobs);
  rt_cache_close(P->cache);
  for (uint32_t i = 0; i < P->nslots; i++) {
    rt_bundle_close(P->slots[i].old);
    free(P->slots[i].path);
  }
  free(P->slots);
  pthread_mutex_destroy(&P->lock);
  pthread_cond_destroy(&P->cond);
  free(P);
  free(r);
}
