/* node_info.h: the public view (lp_node_info, lp_op_info) of a tree node or op row, the same for a
 * live session and a report read back from JSON. */
#ifndef LP_NODE_INFO_H
#define LP_NODE_INFO_H

#include <stddef.h>

#include "layerprof.h"
#include "model/tree.h"

/* Fills `out` for node `index` of `t`: kind, raw sums, per-iteration means, memory, CUDA time,
 * per-call time statistics and share. Strings are borrowed from the tree. LP_ERR_INVALID (named
 * after `caller`) when index is out of range. */
int lp_tree_node_info(const lp_tree *t, size_t index, lp_node_info *out, const char *caller);

/* Fills `out` for op row `index` of `t`, its figures as lp_tree_node_info fills a module's. Strings
 * are borrowed from the tree. LP_ERR_INVALID when index is out of range. */
int lp_tree_op_info(const lp_tree *t, size_t index, lp_op_info *out);

/* One device's memory figures of `f` (means per call, min and max). */
void lp_node_mem_fill(const lp_tree *t, const lp_figures *f, int dev, lp_node_mem *out);

/* A node kind's name in reports: "module", "region", "context", "session" (lp_node_kind); NULL
 * when out of range. */
const char *lp_node_kind_name(int kind);
/* The reverse; LP_ERR_NOT_FOUND (no message set) for any other name. */
int lp_node_kind_parse(const char *name, int *out);

#endif
