/* tools/tools.h: entry points of the `ptxwave` subcommands and the helpers
 * they share.  The tools' prefix is cmd_ (scripts/check-prefixes.py). */
#ifndef PW_TOOLS_H
#define PW_TOOLS_H

#include <stdbool.h>
#include <stdio.h>

#define PW_COMMAND(name, entry, summary) int entry(int argc, char **argv);
#include "commands.def"
#undef PW_COMMAND

/* True when argv[i] is -h or --help. */
bool cmd_is_help(const char *arg);

/* Parses a byte count with an optional K, M or G suffix (cmd_inspect.c). */
#include <stdint.h>
bool cmd_parse_size(const char *s, uint64_t *out);

#endif
