/* diff.h: `layerprof diff BEFORE.json AFTER.json`. */
#ifndef LP_CLI_DIFF_H
#define LP_CLI_DIFF_H

/* argv[0] is "diff". Returns the process exit code (0, 1 runtime failure, 2 usage error). */
int lp_cli_diff(int argc, char **argv);

#endif
