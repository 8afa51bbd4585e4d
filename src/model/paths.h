/* paths.h: choosing modules by path: torchprof's tuples ("AlexNet,features,3"), dotted paths
 * ("features.3"), and globs per segment ("features.*", "layer?.0", "**.conv1"). */
#ifndef LP_PATHS_H
#define LP_PATHS_H

#include <stddef.h>
#include <stdint.h>

#include "model/tree.h"

/* 1 when `pattern` matches the node's path. The root may be named by its class name or left out;
 * "**" matches zero or more segments. */
int lp_path_matches(const lp_tree *t, const char *pattern, int32_t node);

/* Sets selected[i] = 1 for every node matched by any pattern (0 for the rest). A pattern that
 * matches nothing is an LP_ERR_NOT_FOUND error naming the closest existing paths. */
int lp_paths_select(const lp_tree *t, const char *const *patterns, size_t n, uint8_t *selected);

#endif
