/* tree_graft.c: building one tree from others (the report of a session with regions): group
 * nodes with their own kind and figures, a copy of a module tree under one of them, groups'
 * totals, and which nodes are measured. collect/compose.c and the collector's merge say what
 * goes where; the nodes' fields are written here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"
#include "model/tree.h"

char *lp_tree_join_path(const char *prefix, const char *name) {
    size_t lp = prefix ? strlen(prefix) : 0, ln = strlen(name);
    char *p = malloc(lp + ln + 2);
    if (!p) return NULL;
    if (prefix)
        snprintf(p, lp + ln + 2, "%s/%s", prefix, name);
    else
        memcpy(p, name, ln + 1);
    return p;
}

int lp_tree_add_named(lp_tree *t, const char *path, const char *name, const char *class_name,
                      int kind, int32_t parent) {
    int32_t idx = lp_tree_add(t, path, class_name, parent);
    if (idx < 0) return idx;
    int rc = lp_tree_set_name(t, idx, name);
    if (rc) return rc;
    t->nodes[idx].kind = kind;
    return idx;
}

void lp_tree_set_figures(lp_tree *t, int32_t index, const lp_figures *fig) {
    t->nodes[index].fig = *fig;
}

int lp_tree_graft(lp_tree *out, const lp_tree *from, int32_t parent, const char *prefix) {
    int32_t base = (int32_t)out->n_nodes;
    for (size_t i = 0; i < from->n_nodes; i++) {
        const lp_tree_node *n = &from->nodes[i];
        char *path = lp_tree_join_path(prefix, n->path);
        if (!path) return lp_error_set(LP_ERR_NOMEM, "out of memory composing the report");
        int32_t p = n->parent < 0 ? parent : base + n->parent;
        int idx = lp_tree_add_named(out, path, n->name, n->class_name, LP_NODE_MODULE, p);
        free(path);
        if (idx < 0) return idx;
        lp_tree_node *o = &out->nodes[idx];
        o->selected = n->selected;
        o->container = n->container;
        o->fig = n->fig;
        if (n->fused_module) {
            int rc = lp_tree_set_fused(out, idx, n->fused_module, n->fused_kernel, n->fused_more);
            if (rc) return rc;
        }
    }
    int32_t op_base = (int32_t)out->n_ops;
    for (size_t r = 0; r < from->n_ops; r++) { /* a parent op row precedes its children */
        const lp_op_node *o = &from->ops[r];
        int idx = lp_tree_add_op(out, base + o->module,
                                 o->parent_op < 0 ? -1 : op_base + o->parent_op, o->op, o->shapes);
        if (idx < 0) return idx;
        out->ops[idx].fig = o->fig;
    }
    return LP_OK;
}

void lp_tree_sum_children(lp_tree *t, int32_t node) {
    uint64_t total = 0;
    for (int32_t ch = t->nodes[node].first_child; ch >= 0; ch = t->nodes[ch].next_sibling)
        total += t->nodes[ch].fig.total_ns;
    t->nodes[node].fig.total_ns = total;
}

void lp_tree_mark_measured(lp_tree *t, const uint8_t *roots) {
    /* Pre-order: a parent is marked before its children read it. */
    for (size_t m = 0; m < t->n_nodes; m++) {
        int32_t p = t->nodes[m].parent;
        t->nodes[m].selected = roots[m] || (p >= 0 && t->nodes[p].selected);
    }
}
