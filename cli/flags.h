/* flags.h: the flags only the CLI has (--format, --output, --config, --print-config, --help,
 * --version): options of no lp_options field, so the option table does not hold them. The parser
 * (args.c) handles them by index; --help (help.c) lists them with the table's options. */
#ifndef LP_CLI_FLAGS_H
#define LP_CLI_FLAGS_H

#include <stddef.h>

#include "layerprof.h"

enum { CLI_FORMAT, CLI_OUTPUT, CLI_CONFIG, CLI_PRINT_CONFIG, CLI_HELP, CLI_VERSION, N_CLI_ONLY };

/* The N_CLI_ONLY flags, indexed by the enum above, as lp_options_key describes an option. Keys are
 * NULL: they are not lp_options_set keys. */
const lp_option_info *cli_only_flags(size_t *n);

#endif
