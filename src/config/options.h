/* options.h: option helpers shared inside the core. */
#ifndef LP_OPTIONS_H
#define LP_OPTIONS_H

#include "layerprof.h"

/* Ceilings that catch typos ("--iterations 1000000000") before they become hour-long runs. Shared
 * by lp_options_validate, the config file and the CLI through the option table. Literal numbers:
 * the table stringifies them. */
#define LP_MAX_ITERATIONS 10000000
#define LP_MAX_INTRAOP_THREADS 1024

/* Parses "cpu", "cuda", "cuda:N"; *index is -1 when no index was given. */
int lp_device_parse(const char *device, int *is_cuda, int *index);

struct lp_opt;
/* Puts the row's default into its field of `opts` (a list: empty; a mapping: every key of it). */
void lp_opt_reset(const struct lp_opt *opt, lp_options *opts);

#endif
