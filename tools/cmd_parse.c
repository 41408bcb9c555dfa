/* tools/cmd_parse.c: `ptxwave parse FILE... [--print-ir] [--no-verify]`.
 *
 * Parses each PTX module into the IR, verifies it, and optionally prints
 * it.  A FILE is PTX text, or a binary (host ELF, archive, fatbin) whose
 * every PTX entry is a module, read through the container API and named by
 * its stable name (libcublas.so.13.c0123.e04.sm_90a.ptx) in messages.
 * Errors go to stderr as file:line:col with the source line and a caret.
 * The exit status is 0 when every file parsed and verified, 1 otherwise,
 * 2 for bad usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "ptx/container.h"
#include "ptx/ptx_parse.h"
#include "tools.h"
#include "util/diag.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave parse [--print-ir] [--no-verify] [--stats] FILE...\n"
          "\n"
          "Parses PTX files into ptxwave's SSA IR and verifies it.\n"
          "  --print-ir   print the IR of each module to stdout\n"
          "  --no-verify  skip the IR verifier\n"
          "  --stats      print instruction counts per file to stderr\n"
          "Exit status: 0 when every file parses and verifies.\n");
}

typedef struct parse_run {
  bool print, verify, stats;
  int modules, failed;
} parse_run;

static bool on_module(const ptx_module *pm, void *user) {
  parse_run *r = user;
  /* A text input is named by its path, an entry by its stable name. */
  const char *name = pm->entry ? pm->name : pm->file->path;
  pw_diag d;
  pw_diag_init(&d, stderr);
  d.max_errors = 50;
  ptx_parse_stats st;
  ir_module *m = ptx_parse(name, pm->text, pm->len, &d, &st);
  if (m && r->verify && !ir_verify(m, NULL, &d)) {
    ir_module_destroy(m);
    m = NULL;
  }
  if (r->stats)
    fprintf(stderr, "%s: %llu instructions, %llu kept opaque, %llu functions%s\n", name,
            (unsigned long long)st.instrs, (unsigned long long)st.opaque,
            (unsigned long long)st.funcs, m ? "" : " (failed)");
  r->modules++;
  if (!m) {
    r->failed++;
  } else {
    if (r->print) ir_print_module(stdout, m);
    ir_module_destroy(m);
  }
  pw_diag_fini(&d);
  return true;
}

int cmd_parse(int argc, char **argv) {
  bool print = false, verify = true, stats = false;
  int nfiles = 0, failed = 0;
  for (int i = 1; i < argc; i++) {
    if (cmd_is_help(argv[i])) {
      usage(stdout);
      return 0;
    }
    if (!strcmp(argv[i], "--print-ir")) print = true;
    else if (!strcmp(argv[i], "--no-verify")) verify = false;
    else if (!strcmp(argv[i], "--stats")) stats = true;
    else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "ptxwave parse: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else nfiles++;
  }
  if (!nfiles) {
    usage(stderr);
    return 2;
  }
  parse_run r = {print, verify, stats, 0, 0};
  for (int i = 1; i < argc; i++) {
    if (argv[i][0] == '-' && argv[i][1]) continue;
    pw_diag d;
    pw_diag_init(&d, stderr);
    int before = r.modules;
    int errors = ptx_for_each_ptx(argv[i], NULL, &d, on_module, &r);
    if (errors) failed++;
    if (!errors && r.modules == before)
      fprintf(stderr, "ptxwave parse: %s: no PTX in it\n", argv[i]);
    pw_diag_fini(&d);
  }
  failed += r.failed;
  return failed ? 1 : 0;
}
