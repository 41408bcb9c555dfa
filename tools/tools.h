/* tools/tools.h: entry points of the `ptxwave` subcommands and the helpers
 * they share. */
#ifndef PW_TOOLS_H
#define PW_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#define PW_COMMAND(name, entry, summary) int entry(int argc, char **argv);
#include "commands.def"
#undef PW_COMMAND

/* True when argv[i] is -h or --help. */
bool pw_is_help(const char *arg);

#endif
