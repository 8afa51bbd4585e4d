/* diff.c: `layerprof diff BEFORE.json AFTER.json`: compares two JSON reports module by module.
 * Colours when stdout is a terminal and NO_COLOR is unset (https://no-color.org); --color and
 * --no-color decide instead. A client of the public API only. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "layerprof.h"

static void diff_usage(FILE *out) {
    fputs("usage: layerprof diff [--color|--no-color] BEFORE.json AFTER.json\n"
          "\n"
          "Prints AFTER's module tree with each module's self and total CPU time per iteration\n"
          "in both reports and the change (absolute and %), matching modules by path. Modules\n"
          "only in one report are marked (added) or (removed). Write the reports with\n"
          "--format json (or --output FILE.json).\n",
          out);
}

int lp_cli_diff(int argc, char **argv) {
    const char *files[2];
    int n = 0, color = -1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            diff_usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--color") == 0) {
            color = 1;
        } else if (strcmp(argv[i], "--no-color") == 0) {
            color = 0;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr,
                    "layerprof diff: error: unknown option '%s' (try 'layerprof diff --help')\n",
                    argv[i]);
            return 2;
        } else if (n < 2) {
            files[n++] = argv[i];
        } else {
            fprintf(stderr, "layerprof diff: error: two reports, not more ('%s')\n", argv[i]);
            return 2;
        }
    }
    if (n != 2) {
        diff_usage(stderr);
        return 2;
    }
    if (color < 0) {
        const char *no = getenv("NO_COLOR");
        color = isatty(STDOUT_FILENO) && !(no && *no);
    }
    lp_report *r[2] = {NULL, NULL};
    int rc = LP_OK;
    for (int i = 0; i < 2 && rc == LP_OK; i++)
        rc = lp_report_load(&r[i], files[i]);
    if (rc == LP_OK) rc = lp_report_diff(r[0], r[1], color ? LP_DIFF_COLOR : 0, stdout);
    if (rc == LP_OK && fflush(stdout) != 0) rc = LP_ERR_IO;
    if (rc) fprintf(stderr, "layerprof diff: error: %s\n", lp_error_last());
    lp_report_free(r[0]);
    lp_report_free(r[1]);
    return rc == LP_OK ? 0 : rc == LP_ERR_INVALID ? 2 : 1;
}
