/* tree_fold.c: the one rule for a view that hides modules (tree.h: lp_tree_fold). The table
 * renderers draw the folded copy as they draw any tree, so no renderer has a folding rule of its
 * own to get wrong: a row that stands for hidden modules adds up the way every row does. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"
#include "model/tree.h"

/* Hidden module `h` into the row `row` that stands for it; `top` when no measured ancestor of h
 * lies between them (h's total is then not inside another hidden module's). Time, CUDA time and
 * FLOPs add: the row's self becomes its own plus the hidden selves, which is its whole figure.
 * Memory and parameters do not add across modules (a child's retained bytes may be freed before
 * its parent returns; a tied weight is one tensor held twice), so the row's self there is its
 * whole figure as recorded: what it and everything it stands for kept alive, or hold. */
static void fold_module(lp_tree_node *row, int row_measured, const lp_tree_node *h, int top) {
    lp_figures *f = &row->fig;
    if (row->folded++ == 0) { /* the first module it stands for */
        if (f->size.known) {
            f->size.self_params = f->size.params;
            f->size.self_bytes = f->size.bytes;
        }
        if (row_measured) {
            for (int d = 0; d < LP_DEV_COUNT; d++)
                f->mem[d].self_retained = f->mem[d].retained;
        } else {
            /* What an unmeasured row held (a container's sum of its children) is not shown;
             * it shows the time it stands for, counted below. */
            f->self_ns = f->total_ns = 0;
        }
    }
    if (!lp_node_measured(h)) return;
    f->self_ns += h->fig.self_ns;
    if (!row_measured) {
        if (top) f->total_ns += h->fig.total_ns;
        return; /* time only: the row has no calls of its own to give the rest a meaning */
    }
    f->cuda_self_ns += h->fig.cuda_self_ns;
    f->flops_self += h->fig.flops_self;
}

/* The op row under (module, parent_op) of `out` named like `o`, or -1. Siblings are few. */
static int32_t find_sibling(const lp_tree *out, int32_t module, int32_t parent_op,
                            const lp_op_node *o) {
    int32_t r = parent_op >= 0 ? out->ops[parent_op].first_child : out->nodes[module].first_op;
    for (; r >= 0; r = out->ops[r].next_sibling)
        if (out->ops[r].op == o->op && out->ops[r].shapes == o->shapes) return r;
    return -1;
}

/* Every op row of `from` into `out`, under the row its module maps to (`row_of`); rows that meet
 * under one parent with one (name, shapes) become one. Parents come before their children. */
static int fold_ops(const lp_tree *from, const int32_t *row_of, lp_tree *out) {
    if (!from->n_ops) return LP_OK;
    int32_t *op_of = malloc(from->n_ops * sizeof *op_of);
    if (!op_of) return lp_error_set(LP_ERR_NOMEM, "out of memory folding op rows");
    int rc = LP_OK;
    for (size_t i = 0; i < from->n_ops && rc >= 0; i++) {
        const lp_op_node *o = &from->ops[i];
        int32_t module = row_of[o->module];
        int32_t parent = o->parent_op >= 0 ? op_of[o->parent_op] : -1;
        if (module < 0) { /* a pruned module's: it had none, being unprofiled */
            op_of[i] = -1;
            continue;
        }
        int32_t r = find_sibling(out, module, parent, o);
        if (r >= 0) {
            lp_figures_merge(&out->ops[r].fig, &o->fig);
        } else {
            rc = r = lp_tree_add_op(out, module, parent, o->op, o->shapes);
            if (r >= 0) lp_tree_restore_op(out, r, &o->fig);
        }
        op_of[i] = r;
    }
    free(op_of);
    out->has_ops = from->has_ops;
    return rc < 0 ? rc : LP_OK;
}

/* Per node: it was profiled, or holds a module that was (what --prune keeps). */
static uint8_t *profiled_within(const lp_tree *t) {
    uint8_t *keep = calloc(t->n_nodes ? t->n_nodes : 1, 1);
    if (!keep) return NULL;
    for (size_t i = t->n_nodes; i-- > 0;) { /* children after their parent: one reverse pass */
        if (t->nodes[i].selected) keep[i] = 1;
        if (keep[i] && t->nodes[i].parent >= 0) keep[t->nodes[i].parent] = 1;
    }
    keep[0] = 1; /* the root always has its row */
    return keep;
}

int lp_tree_fold(const lp_tree *from, int depth, int prune, lp_tree *out) {
    lp_tree_init(out);
    out->iterations = from->iterations;
    memcpy(out->has_memory, from->has_memory, sizeof out->has_memory);
    out->has_cuda_time = from->has_cuda_time;
    out->has_flops = from->has_flops;
    out->has_out_shape = from->has_out_shape;
    int rc = lp_tree_extend_names(out, (const char *const *)from->op_names, from->n_op_names,
                                  (const char *const *)from->shape_names, from->n_shape_names);
    size_t n = from->n_nodes ? from->n_nodes : 1;
    int32_t *row_of = malloc(n * sizeof *row_of); /* from's node -> the row showing it */
    uint8_t *row_measured = calloc(n, 1);         /* per row: measured before anything folded in */
    uint8_t *inside = calloc(n, 1); /* per hidden node: a measured hidden module encloses it */
    uint8_t *keep = prune ? profiled_within(from) : NULL;
    if (!row_of || !row_measured || !inside || (prune && !keep))
        rc = lp_error_set(LP_ERR_NOMEM, "out of memory folding the tree");
    for (size_t i = 0; i < from->n_nodes && rc >= 0; i++) {
        const lp_tree_node *h = &from->nodes[i];
        if (keep && !keep[i]) { /* pruned: no figure, no op row, nothing below that has one */
            row_of[i] = -1;
            continue;
        }
        if (depth < 0 || h->depth <= depth) {
            int32_t parent = h->parent >= 0 ? row_of[h->parent] : -1;
            rc = lp_tree_add_named(out, h->path, h->name, h->class_name, h->kind, parent);
            if (rc < 0) break;
            row_of[i] = rc;
            row_measured[rc] = (uint8_t)lp_node_measured(h);
            lp_tree_restore_node(out, rc, h->kind, h->selected, h->container, &h->fig);
            if (h->fused_module) {
                int32_t row = rc;
                rc = lp_tree_set_fused(out, row, h->fused_module, h->fused_kernel, h->fused_more);
                if (rc < 0) break;
            }
            continue;
        }
        const lp_tree_node *p = &from->nodes[h->parent];
        int32_t row = row_of[i] = row_of[h->parent];
        inside[i] = (uint8_t)(p->depth > depth && (inside[h->parent] || lp_node_measured(p)));
        fold_module(&out->nodes[row], row_measured[row], h, !inside[i]);
    }
    if (rc >= 0) rc = fold_ops(from, row_of, out);
    free(row_of);
    free(row_measured);
    free(inside);
    free(keep);
    if (rc < 0) {
        lp_tree_free(out);
        return rc;
    }
    return LP_OK;
}
