/* help.h: --help, generated from the option table (lp_options_key) and the CLI's own flags. */
#ifndef LP_CLI_HELP_H
#define LP_CLI_HELP_H

#include <stdio.h>

void cli_help(FILE *out);

#endif
