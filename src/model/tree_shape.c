/* tree_shape.c: a tree's shape apart from its figures: what each module is (container, sizes),
 * a copy of the shape for another recording, and the figures dropped with the shape kept. The
 * session and the collector use these rather than write a node's fields themselves. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"
#include "model/tree.h"

void lp_tree_set_module(lp_tree *t, int32_t index, int container, const lp_module_size *size) {
    lp_tree_node *n = &t->nodes[index];
    n->container = container != 0;
    if (size) n->fig.size = *size;
}

int lp_tree_copy_shape(lp_tree *out, lp_tree *from) {
    lp_tree_init(out);
    /* One pool for both: a report composed from the copy reads its strings from either. */
    int rc = lp_tree_share_strings(out, from);
    for (size_t i = 0; i < from->n_nodes && rc >= 0; i++) {
        const lp_tree_node *n = &from->nodes[i];
        rc = lp_tree_add(out, n->path, n->class_name, n->parent);
        if (rc >= 0) lp_tree_set_module(out, rc, n->container, &n->fig.size);
        if (rc >= 0 && n->fused_module)
            rc = lp_tree_set_fused(out, rc, n->fused_module, n->fused_kernel, n->fused_more);
    }
    if (rc < 0) {
        lp_tree_free(out);
        return rc;
    }
    return LP_OK;
}

void lp_tree_clear_figures(lp_tree *t) {
    for (size_t i = 0; i < t->n_nodes; i++) {
        lp_tree_node *n = &t->nodes[i];
        lp_module_size size = n->fig.size; /* what the module is stays */
        memset(&n->fig, 0, sizeof n->fig);
        n->fig.size = size;
        n->first_op = -1;
    }
    t->n_ops = 0;
    t->iterations = 0;
}
