/* merge.h: `layerprof merge REPORT.json...`. */
#ifndef LP_CLI_MERGE_H
#define LP_CLI_MERGE_H

/* argv[0] is "merge". Returns the process exit code (0, 1 runtime failure, 2 usage error). */
int lp_cli_merge(int argc, char **argv);

#endif
