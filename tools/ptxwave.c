/* tools/ptxwave.c: the `ptxwave` command; dispatches to the subcommands of
 * commands.def. */
#include <stdio.h>
#include <string.h>

#include "pw_config.h"
#include "tools.h"

typedef struct {
  const char *name;
  int (*entry)(int, char **);
  const char *summary;
} command;

static const command commands[] = {
#define PW_COMMAND(name, entry, summary) {#name, entry, summary},
#include "commands.def"
#undef PW_COMMAND
  {NULL, NULL, NULL},
};

bool cmd_is_help(const char *arg) { return !strcmp(arg, "-h") || !strcmp(arg, "--help"); }

static void usage(FILE *f) {
  fprintf(f,
          "usage: ptxwave COMMAND [ARGS...]\n"
          "\n"
          "ptxwave runs CUDA programs on AMD GPUs by recompiling the PTX inside\n"
          "their fatbins.\n"
          "\n"
          "commands:\n");
  for (const command *c = commands; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
  fprintf(f,
          "\n"
          "`ptxwave COMMAND --help` describes one command.\n"
          "`ptxwave --version` prints the version.\n");
}

int main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  if (cmd_is_help(argv[1]) || !strcmp(argv[1], "help")) {
    if (argc > 2) {
      for (const command *c = commands; c->name; c++)
        if (!strcmp(c->name, argv[2])) {
          char *hv[] = {argv[2], "--help", NULL};
          return c->entry(2, hv);
        }
    }
    usage(stdout);
    return 0;
  }
  if (!strcmp(argv[1], "--version")) {
    printf("ptxwave %s\n", PTXWAVE_VERSION);
    return 0;
  }
  for (const command *c = commands; c->name; c++)
    if (!strcmp(c->name, argv[1])) return c->entry(argc - 1, argv + 1);
  fprintf(stderr, "ptxwave: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
