/* benchmarks/emu_survey.c: which kernels of real PTX the emulator can run.
 *
 *   ./build/benchmarks/emu_survey [--dir DIR] [--list FILE] [FILE.ptx...]
 *
 * Parses each module, prepares it as the runtime's emulator backend does
 * (lower_multimem, as rt_parse_module runs it; lower_tex, as module_load_ptx
 * does: textures and surfaces are plain IR for the emulator), loads it into
 * the emulator (decoding every function) and counts the kernels a launch would accept, with the reasons of the
 * others, most frequent first.  --list reads file names (one per line,
 * relative to --dir, default /work/corpus), e.g. tests/corpus/sample.txt.
 * Also prints the load (decode) time.  Asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "emu/emu.h"
#include "emu/emu_internal.h"
#include "lower/lower.h"
#include "ptx/ptx_parse.h"
#include "util/diag.h"
#include "util/pw_file.h"

typedef struct reason {
  char *text;
  unsigned count;
} reason;

static reason *reasons;
static unsigned nreasons, capreasons;

static void note(const char *why) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", why);
  char *cut = strstr(buf, " (in function");
  if (cut) *cut = 0;
  for (unsigned i = 0; i < nreasons; i++)
    if (!strcmp(reasons[i].text, buf)) {
      reasons[i].count++;
      return;
    }
  if (nreasons == capreasons) {
    capreasons = capreasons ? capreasons * 2 : 64;
    reasons = realloc(reasons, capreasons * sizeof *reasons);
  }
  reasons[nreasons++] = (reason){strdup(buf), 1};
}

static int by_count(const void *a, const void *b) {
  return (int)((const reason *)b)->count - (int)((const reason *)a)->count;
}

static unsigned long modules, parse_fail, kernels, runnable;
static double load_s;

static void survey(emu_context *ctx, const char *path) {
  size_t len;
  char *text = pw_read_file(path, &len);
  if (!text) {
    fprintf(stderr, "emu_survey: cannot read %s\n", path);
    return;
  }
  pw_diag d;
  pw_diag_init(&d, NULL);
  ir_module *m = ptx_parse(path, text, len, &d, NULL);
  free(text);
  modules++;
  if (!m) {
    pw_diag_fini(&d);
    parse_fail++;
    return;
  }
  /* the passes return progress; errors are counted in the diagnostics */
  lower_multimem(m, &(lower_multimem_options){.diag = &d});
  if (!d.nerrors) lower_tex(m, &(lower_tex_options){.diag = &d});
  if (d.nerrors) {
    /* the runtime refuses the whole module then: count its kernels, once, by the first error */
    const char *msg = pw_diag_text(&d), *e = msg ? strstr(msg, "error: ") : NULL;
    char why[200];
    snprintf(why, sizeof why, "module refused: %.*s", e ? (int)strcspn(e + 7, "\n") : 40, e ? e + 7 : "lowering failed");
    ir_foreach_func(m, f) if (f->is_kernel) {
      kernels++;
      note(why);
    }
    pw_diag_fini(&d);
    ir_module_destroy(m);
    return;
  }
  pw_diag_fini(&d);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  emu_module *em;
  emu_status st = emu_module_load(ctx, m, &em);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  load_s += (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  if (st == EMU_OK) {
    for (uint32_t i = 0; i < em->nfuncs; i++) {
      emu_func *f = em->funcs[i];
      if (!f->ir->is_kernel) continue;
      kernels++;
      if (f->closure_error) note(f->closure_error);
      else runnable++;
    }
    emu_module_unload(em);
  } else {
    note(emu_error_message(ctx));
  }
  ir_module_destroy(m);
}

int main(int argc, char **argv) {
  const char *dir = "/work/corpus", *list = NULL;
  emu_context *ctx;
  if (emu_context_create(&(emu_options){.threads = 1}, &ctx) != EMU_OK) return 1;
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
    else if (!strcmp(argv[i], "--list") && i + 1 < argc) list = argv[++i];
    else {
      survey(ctx, argv[i]);
      nfiles++;
    }
  }
  if (list) {
    FILE *f = fopen(list, "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
      line[strcspn(line, "\r\n")] = 0;
      if (!line[0] || line[0] == '#') continue;
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, line);
      survey(ctx, path);
      nfiles++;
    }
    if (f) fclose(f);
  }
  if (!nfiles) {
    fprintf(stderr, "usage: emu_survey [--dir DIR] [--list FILE] [FILE.ptx...]\n");
    return 2;
  }
  printf("%lu modules (%lu did not parse), %lu kernels, %lu runnable (%.1f%%), decode %.2f s\n", modules, parse_fail,
         kernels, runnable, kernels ? 100.0 * runnable / kernels : 0.0, load_s);
  qsort(reasons, nreasons, sizeof *reasons, by_count);
  for (unsigned i = 0; i < nreasons && i < 40; i++) printf("%7u  %s\n", reasons[i].count, reasons[i].text);
  emu_context_destroy(ctx);
  return 0;
}
