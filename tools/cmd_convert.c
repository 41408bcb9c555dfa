/* tools/cmd_convert.c: `ptxwave convert PATH... --arch gfx942[,...] [-j N]
 * [--into-cache | -o BUNDLE]`: every PTX module of binaries, libraries,
 * archives and directories compiled ahead of time (convert/convert.h,
 * docs/convert.md).
 *
 * Presentation only: a progress bar on a terminal (stderr), plain progress
 * lines otherwise, then a table per input or --json.  SIGINT and SIGTERM
 * ask the conversion to stop after the running compiles; what is done is
 * kept, and a rerun skips it.  Exit status: 0 done (unsupported modules
 * are reported, not fatal), 1 input or destination errors, 2 usage,
 * 130 interrupted.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

#ifdef PW_HAVE_CONVERT
#include "convert/convert.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave convert PATH... --arch gfx942[,gfx90a,...] [-j N]\n"
          "                       [--into-cache [--cache-dir DIR] | -o BUNDLE |\n"
          "                        --bundle-next-to-binary]\n"
          "                       [--cc X.Y] [--all-entries] [--max-modules N]\n"
          "                       [--retry-unsupported]\n"
          "                       [--json] [--quiet] [--verbose]\n"
          "\n"
          "Compiles every PTX module found in PATHs (executables, shared libraries,\n"
          "archives, fatbins, .ptx files; directories recursively) for every target,\n"
          "so the runtime loads them without compiling.  Destination: the kernel\n"
          "cache (default; PTXWAVE_CACHE_DIR, else $XDG_CACHE_HOME/ptxwave), or with\n"
          "-o a bundle file the runtime reads when it is named BINARY.ptxwave next\n"
          "to a loaded binary or listed in PTXWAVE_BUNDLES; --bundle-next-to-binary\n"
          "writes one such BINARY.ptxwave next to each input file.\n"
          "  -j N            worker threads (default: the CPUs online)\n"
          "  --cc X.Y        compute capability whose PTX the runtime picks\n"
          "                  (default PTXWAVE_CC, else 12.0, as the runtime)\n"
          "  --all-entries   every PTX entry, not only the runtime's pick\n"
          "  --max-modules N the first N modules of each input (samples)\n"
          "  --retry-unsupported  compile again modules an earlier run found unsupported\n"
          "                  (a new ptxwave version always does)\n"
          "  --json          the summary as JSON on stdout\n"
          "  --verbose       every failure's full message on stderr\n"
          "Interrupt (Ctrl-C) keeps what is done; run again to resume: what is\n"
          "converted or known unsupported is not compiled again.\n");
}

static volatile sig_atomic_t stop_flag;
static void on_signal(int sig) {
  stop_flag = 1;
  signal(sig, SIG_DFL);  /* a second one ends the process */
}

typedef struct ui {
  bool tty, quiet;
  bool ended;                 /* the full bar was drawn and its line ended */
  uint32_t last_done;
  double last_print;
} ui;

static void fmt_time(double s, char *buf, size_t cap) {
  if (s < 0 || s > 1e7) snprintf(buf, cap, "--:--");
  else if (s >= 3600) snprintf(buf, cap, "%d:%02d:%02d", (int)s / 3600, (int)s / 60 % 60, (int)s % 60);
  else snprintf(buf, cap, "%d:%02d", (int)s / 60, (int)s % 60);
}

static void progress(const cv_run *r, void *user) {
  ui *u = user;
  if (u->quiet || !r->total) return;
  double rate = r->elapsed > 0 ? r->done / r->elapsed : 0;
  char left[32];
  fmt_time(rate > 0 ? (r->total - r->done) / rate : -1, left, sizeof left);
  if (u->tty) {
    if (u->ended) return;  /* the final call after the last job drew nothing new */
    int width = 30, fill = (int)((uint64_t)r->done * (unsigned)width / r->total);
    char bar[64];
    for (int i = 0; i < width; i++) bar[i] = i < fill ? '#' : '.';
    bar[width] = 0;
    fprintf(stderr, "\r[%s] %u/%u modules  %.1f/s  %s left  (%u unsupported, %u skipped) ", bar,
            r->done, r->total, rate, left, r->unsupported, r->skipped);
    if (r->done == r->total || !r->jobs) {
      fprintf(stderr, "\n");
      u->ended = true;
    }
    fflush(stderr);
    return;
  }
  /* plain lines: at most one a second, and the last */
  if (r->done == u->last_done || (r->elapsed - u->last_print < 1.0 && r->done != r->total)) return;
  u->last_done = r->done;
  u->last_print = r->elapsed;
  fprintf(stderr, "convert: %u/%u modules, %u converted, %u skipped, %u unsupported, %.1f/s, %s left\n",
          r->done, r->total, r->converted, r->skipped, r->unsupported, rate, left);
  fflush(stderr);
}

static int by_count(const void *a, const void *b) {
  const cv_reason *x = a, *y = b;
  return x->count != y->count ? (x->count < y->count ? 1 : -1) : strcmp(x->what, y->what);
}

static void json_str(FILE *f, const char *s) {
  fputc('"', f);
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
    else if (c < 0x20) fprintf(f, "\\u%04x", c);
    else fputc(c, f);
  }
  fputc('"', f);
}

static void print_json(const cv_run *r, const cv_options *o) {
  printf("{\"targets\": [");
  for (unsigned k = 0; k < o->ntargets; k++) printf("%s\"%s\"", k ? ", " : "", o->targets[k]->name);
  printf("], \"workers\": %u, \"files_scanned\": %u, \"jobs\": %u, \"done\": %u, \"converted\": %u, "
         "\"skipped\": %u, \"unsupported\": %u, \"failed_before\": %u, \"interrupted\": %s, "
         "\"seconds\": %.3f, "
         "\"instructions_compiled\": %llu, \"instructions_per_second\": %.1f,\n \"inputs\": [",
         r->jobs, r->files_scanned, r->total, r->done, r->converted, r->skipped, r->unsupported,
         r->failed_before, r->interrupted ? "true" : "false", r->elapsed, (unsigned long long)r->instrs_compiled,
         r->elapsed > 0 ? r->instrs_compiled / r->elapsed : 0.0);
  for (uint32_t i = 0; i < r->ninputs; i++) {
    const cv_input *in = &r->inputs[i];
    printf("%s\n  {\"path\": ", i ? "," : "");
    json_str(stdout, in->path);
    printf(", \"modules\": %u, \"kernels\": %u, \"instructions\": %llu, \"converted\": %u, "
           "\"skipped\": %u, \"unsupported\": %u, \"failed_before\": %u, \"reasons\": [",
           in->modules, in->kernels, (unsigned long long)in->instrs, in->converted, in->skipped,
           in->unsupported, in->failed_before);
    for (uint32_t k = 0; k < in->nreasons; k++) {
      printf("%s{\"what\": ", k ? ", " : "");
      json_str(stdout, in->reasons[k].what);
      printf(", \"count\": %u}", in->reasons[k].count);
    }
    printf("]}");
  }
  printf("]}\n");
}

static void print_table(const cv_run *r, const cv_options *o) {
  printf("%-44s %7s %7s %9s %7s %11s  %s\n", "input", "modules", "kernels", "converted", "skipped",
         "unsupported", "most common reasons");
  for (uint32_t i = 0; i < r->ninputs; i++) {
    const cv_input *in = &r->inputs[i];
    const char *p = in->path;
    size_t l = strlen(p);
    if (l > 44) p += l - 44;
    printf("%-44s %7u %7u %9u %7u %11u  ", p, in->modules, in->kernels, in->converted, in->skipped,
           in->unsupported);
    for (uint32_t k = 0; k < in->nreasons && k < 3; k++)
      printf("%s%s (%u)", k ? ", " : "", in->reasons[k].what, in->reasons[k].count);
    if (in->nreasons > 3 || in->other_reasons) printf(", ...");
    printf("\n");
  }
  printf("%u modules x %u target%s: %u converted, %u skipped (done before), %u unsupported "
         "(%u known from before)%s; "
         "%.1f s, %u worker%s, %.0f PTX instructions/s\n",
         r->total / (o->ntargets ? o->ntargets : 1), o->ntargets, o->ntargets == 1 ? "" : "s",
         r->converted, r->skipped, r->unsupported, r->failed_before,
         r->interrupted ? " (interrupted: run again to resume)" : "", r->elapsed, r->jobs,
         r->jobs == 1 ? "" : "s", r->elapsed > 0 ? r->instrs_compiled / r->elapsed : 0.0);
}

static bool parse_targets(const char *list, cv_options *o) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    const ir_target *ct = cg_target_find(t);
    if (!ct) {
      fprintf(stderr, "ptxwave convert: unknown target '%s'\n", t);
      return false;
    }
    if (o->ntargets == CV_MAX_TARGETS) return false;
    o->targets[o->ntargets++] = ct;
  }
  return o->ntargets > 0;
}

static unsigned parse_cc(const char *s) {
  unsigned maj = 0, min = 0;
  if (strchr(s, '.')) {
    if (sscanf(s, "%u.%u", &maj, &min) != 2) return 0;
    return maj * 10 + min;
  }
  return (unsigned)atoi(s);
}

int cmd_convert(int argc, char **argv) {
  cv_options o = {.dest = cv_dest_cache};
  const char **paths = calloc((size_t)argc, sizeof *paths);
  unsigned npaths = 0;
  bool json = false, quiet = false;
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  o.jobs = ncpu > 0 ? (unsigned)ncpu : 1;
  const char *cc = getenv("PTXWAVE_CC");
  o.sm = cc && *cc ? parse_cc(cc) : 120;   /* the runtime's default, RT_DEFAULT_CC */
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    bool more = i + 1 < argc;
    if (cmd_is_help(a)) {
      usage(stdout);
      free(paths);
      return 0;
    } else if (!strcmp(a, "--arch") && more) {
      if (!parse_targets(argv[++i], &o)) {
        free(paths);
        return 2;
      }
    } else if (!strncmp(a, "--arch=", 7)) {
      if (!parse_targets(a + 7, &o)) {
        free(paths);
        return 2;
      }
    } else if (!strcmp(a, "-j") && more) {
      o.jobs = (unsigned)atoi(argv[++i]);
    } else if (!strncmp(a, "-j", 2) && a[2]) {
      o.jobs = (unsigned)atoi(a + 2);
    } else if (!strcmp(a, "--into-cache")) {
      o.dest = cv_dest_cache;
    } else if (!strcmp(a, "--cache-dir") && more) {
      o.cache_dir = argv[++i];
    } else if (!strcmp(a, "-o") && more) {
      o.dest = cv_dest_bundle;
      o.bundle = argv[++i];
    } else if (!strcmp(a, "--cc") && more) {
      o.sm = parse_cc(argv[++i]);
    } else if (!strcmp(a, "--bundle-next-to-binary")) {
      o.dest = cv_dest_next_to_input;
    } else if (!strcmp(a, "--retry-unsupported")) {
      o.retry_unsupported = true;
    } else if (!strcmp(a, "--all-entries")) {
      o.all_entries = true;
    } else if (!strcmp(a, "--max-modules") && more) {
      o.max_modules = (uint32_t)atoi(argv[++i]);
    } else if (!strcmp(a, "--json")) {
      json = true;
    } else if (!strcmp(a, "--quiet")) {
      quiet = true;
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "ptxwave convert: unknown option '%s'\n", a);
      usage(stderr);
      free(paths);
      return 2;
    } else {
      paths[npaths++] = a;
    }
  }
  if (!npaths || !o.ntargets || !o.jobs || !o.sm) {
    usage(stderr);
    free(paths);
    return 2;
  }
  ui u = {.tty = isatty(2), .quiet = quiet};
  o.stop = &stop_flag;
  o.progress = progress;
  o.user = &u;
  struct sigaction sa = {.sa_handler = on_signal};
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  pw_diag d;
  pw_diag_init(&d, stderr);
  d.max_errors = 100;
  cv_run *r = cv_convert(paths, npaths, &o, &d);
  free(paths);
  if (r && u.tty && !quiet && r->total && !u.ended) fputc('\n', stderr);  /* end the bar */
  if (!r) {
    fprintf(stderr, "ptxwave convert: out of memory\n");
    return 1;
  }
  for (uint32_t i = 0; i < r->ninputs; i++)
    qsort(r->inputs[i].reasons, r->inputs[i].nreasons, sizeof(cv_reason), by_count);
  if (json) print_json(r, &o);
  else print_table(r, &o);
  int rc = r->interrupted ? 130 : d.nerrors ? 1 : 0;
  cv_run_free(r);
  pw_diag_fini(&d);
  return rc;
}

#else

int cmd_convert(int argc, char **argv) {
  fprintf(stderr, "ptxwave convert: not built (the runtime needs the CUDA toolkit's cuda.h)\n");
  return 2;
}

#endif
