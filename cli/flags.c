/* flags.c: the flags only the CLI has (flags.h). Their own file because both the parser
 * (args.c) and --help (help.c) read them, and args.c calls help.c: kept in args.c, the table made
 * the two files call each other. */
#include <stddef.h>

#include "flags.h"
#include "layerprof.h"

static const lp_option_info flags[N_CLI_ONLY] = {
    /* The format names and file endings are left out here: --help lists them from the format
     * table (lp_format_name, lp_format_extension), so a new format cannot be missing there. */
    [CLI_FORMAT] = {NULL, "format", "FORMAT",
                    "the format of the next --output; without one, a report on stdout", NULL,
                    LP_SECTION_OUTPUTS, 1, 1, 0},
    [CLI_OUTPUT] = {NULL, "output", "FILE",
                    "write a report to FILE (- for stdout); repeatable. Without --format the name "
                    "says which",
                    NULL, LP_SECTION_OUTPUTS, 1, 1, 0},
    [CLI_CONFIG] = {NULL, "config", "RUN.yaml",
                    "read options from a YAML file (docs/config.md); flags override it", NULL,
                    LP_SECTION_OTHER, 1, 0, 0},
    [CLI_PRINT_CONFIG] = {NULL, "print-config", NULL,
                          "print the effective configuration as YAML and exit", NULL,
                          LP_SECTION_OTHER, 0, 0, 0},
    [CLI_HELP] = {NULL, "help", NULL, "print this help and exit", NULL, LP_SECTION_OTHER, 0, 0, 0},
    [CLI_VERSION] = {NULL, "version", NULL, "print the versions of layerprof and libtorch and exit",
                     NULL, LP_SECTION_OTHER, 0, 0, 0},
};

const lp_option_info *cli_only_flags(size_t *n) {
    *n = N_CLI_ONLY;
    return flags;
}
