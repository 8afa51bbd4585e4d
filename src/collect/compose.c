/* compose.c: see compose.h. Runs after a merge, on the driving thread; allocates freely. */
#include "collect/compose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

typedef struct composer {
    lp_tree *out;
    const lp_collector *c;
    const lp_mount *mounts;
    size_t n_mounts;
    int32_t main_context; /* the context unregioned forwards go to: "main", -1 when absent */
} composer;

static int add_region(composer *k, int32_t id, int32_t parent, const char *prefix);

/* The regions under `id` and the forwards run in it, in first-seen order. */
static int add_children(composer *k, int32_t id, int32_t node, const char *path) {
    size_t n = lp_region_count(k->c);
    for (size_t r = 0; r < n; r++)
        if (lp_region_get(k->c, (int32_t)r)->parent == id) {
            int rc = add_region(k, (int32_t)r, node, path);
            if (rc < 0) return rc;
        }
    for (size_t i = 0; i < k->n_mounts; i++) {
        int32_t region = k->mounts[i].region;
        const lp_tree *m = k->mounts[i].tree;
        int here = region == id || (region < 0 && id == k->main_context);
        if (here && m->n_nodes && m->nodes[0].fig.calls) {
            int rc = lp_tree_graft(k->out, m, node, path);
            if (rc < 0) return rc;
        }
    }
    return LP_OK;
}

static int add_region(composer *k, int32_t id, int32_t parent, const char *prefix) {
    const lp_region_entry *e = lp_region_get(k->c, id);
    int context = e->parent < 0;
    char *path = lp_tree_join_path(prefix, e->name);
    if (!path) return lp_error_set(LP_ERR_NOMEM, "out of memory composing the report");
    int node = lp_tree_add_named(k->out, path, e->name, context ? "context" : "region",
                                 context ? LP_NODE_CONTEXT : LP_NODE_REGION, parent);
    if (node >= 0 && !context) lp_tree_set_figures(k->out, node, lp_region_figures(k->c, id));
    int rc = node < 0 ? node : add_children(k, id, node, path);
    free(path);
    if (rc < 0) return rc;
    if (context) lp_tree_sum_children(k->out, node);
    return node;
}

int lp_compose(lp_tree *out, const lp_collector *c, const lp_mount *mounts, size_t n_mounts,
               uint64_t iterations) {
    lp_tree_free(out);
    lp_tree_init(out);
    if (!n_mounts || !mounts[0].tree->n_nodes)
        return lp_error_set(LP_ERR_INVALID, "lp_compose: no module tree");
    /* The mounts' pool: what was read from the report composed before stays valid. */
    int src = lp_tree_share_strings(out, mounts[0].tree);
    if (src) return src;
    const lp_tree *model = mounts[0].tree;
    composer k = {out, c, mounts, n_mounts, -1};
    size_t n = lp_region_count(c);
    for (size_t r = 0; r < n && k.main_context < 0; r++) {
        const lp_region_entry *e = lp_region_get(c, (int32_t)r);
        if (e->parent < 0 && strcmp(e->name, "main") == 0) k.main_context = (int32_t)r;
    }
    int rc = lp_tree_add_named(out, "", model->nodes[0].class_name, "session", LP_NODE_SESSION, -1);
    for (size_t r = 0; r < n && rc >= 0; r++)
        if (lp_region_get(c, (int32_t)r)->parent < 0) rc = add_region(&k, (int32_t)r, 0, NULL);
    /* Forwards outside every region, in a session whose regions never named "main". */
    int unregioned = 0;
    for (size_t i = 0; i < n_mounts; i++)
        unregioned |= mounts[i].region < 0 && mounts[i].tree->nodes[0].fig.calls > 0;
    if (rc >= 0 && k.main_context < 0 && unregioned) {
        int main_node = rc = lp_tree_add_named(out, "main", "main", "context", LP_NODE_CONTEXT, 0);
        for (size_t i = 0; i < n_mounts && rc >= 0; i++)
            if (mounts[i].region < 0 && mounts[i].tree->nodes[0].fig.calls)
                rc = lp_tree_graft(out, mounts[i].tree, main_node, "main");
        if (rc >= 0) lp_tree_sum_children(out, main_node);
    }
    if (rc < 0) return rc;
    lp_tree_sum_children(out, 0);
    out->iterations = iterations;
    /* The mounts' tables are prefixes of the collector's: together they cover every op id. */
    for (size_t i = 0; i < n_mounts && rc >= 0; i++) {
        const lp_tree *m = mounts[i].tree;
        rc =
            lp_tree_extend_names(out, m->op_names, m->n_op_names, m->shape_names, m->n_shape_names);
    }
    if (rc < 0) return rc;
    out->has_ops |= model->has_ops;
    out->has_cuda_time = model->has_cuda_time;
    for (int d = 0; d < LP_DEV_COUNT; d++)
        out->has_memory[d] = model->has_memory[d];
    lp_tree_set_shares(out);
    return LP_OK;
}
