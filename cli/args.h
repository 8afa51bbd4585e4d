/* args.h: the command line read into settings: (option key, text) pairs in the order given, to be
 * laid with lp_options_set over the config file's options, and the flags only the CLI has. */
#ifndef LP_CLI_ARGS_H
#define LP_CLI_ARGS_H

#include <stddef.h>

#include "layerprof.h"

enum { LP_EXIT_RUNTIME = 1, LP_EXIT_USAGE = 2 };

/* One value from the command line. */
typedef struct cli_setting {
    const char *key;         /* lp_options_set's key */
    const char *value;       /* its text */
    const char *flag;        /* how messages name it ("--iterations"); NULL for the model */
    const char *format_flag; /* outputs: "--format" when a --format named the format */
} cli_setting;

typedef struct cli_args {
    cli_setting *settings;
    size_t n_settings;
    char **owned; /* strings built here (outputs' "FORMAT:FILE") */
    size_t n_owned;
    const char *config; /* --config FILE */
    int print_config;   /* --print-config */
} cli_args;

/* Reads argv. Returns -1 to go on, 0 after printing --help or --version, or LP_EXIT_USAGE after
 * printing the error. */
int cli_parse(cli_args *args, int argc, char **argv);

/* Prints "layerprof: error: ..." for a failed lp_options_set of `s`, naming the option the way the
 * user typed it: a message that starts with the option's quoted name gets the flag instead. */
void cli_setting_error(const cli_setting *s, const char *message);

void cli_args_free(cli_args *args);

#endif
