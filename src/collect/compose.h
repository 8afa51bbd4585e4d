/* compose.h: the report tree of a session that used regions.
 *
 * Without regions the report is the module tree itself. With them it is composed, after each
 * merge, from the region table and the module trees of the forwards run in each region:
 *
 *   session (the model's class name)      LP_NODE_SESSION, path ""
 *   └── main                              LP_NODE_CONTEXT, path "main"
 *       ├── preprocess                    LP_NODE_REGION,  path "main/preprocess"
 *       └── forward                       LP_NODE_REGION,  path "main/forward"
 *           └── AlexNet                   LP_NODE_MODULE,  path "main/forward/"
 *               └── features              LP_NODE_MODULE,  path "main/forward/features"
 *
 * Forwards run outside every region hang under context "main". A context's total is the sum of
 * its children's totals (torchtimer's "total runtime"), the session's the sum of its contexts'. */
#ifndef LP_COMPOSE_H
#define LP_COMPOSE_H

#include "collect/collector.h"
#include "model/tree.h"

/* The module tree of the forwards run with `region` innermost (-1: outside every region). */
typedef struct lp_mount {
    int32_t region;
    lp_tree *tree;
} lp_mount;

/* Rebuilds `out` (freed first; initialised by the caller) from the regions of `c` and `mounts`,
 * all of which share the module structure of mounts[0].tree. `iterations` is copied. */
int lp_compose(lp_tree *out, const lp_collector *c, const lp_mount *mounts, size_t n_mounts,
               uint64_t iterations);

#endif
