/* tree.c: building the module tree and merging figures into it. */
#include "model/tree.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

void lp_stat_merge(lp_stat *into, const lp_stat *from) {
    if (from->n == 0) return;
    if (into->n == 0 || from->min < into->min) into->min = from->min;
    if (into->n == 0 || from->max > into->max) into->max = from->max;
    into->sum += from->sum;
    into->n += from->n;
}

double lp_stat_mean(const lp_stat *s) {
    return s->n ? (double)s->sum / (double)s->n : 0.0;
}

void lp_welford_merge(lp_welford *into, const lp_welford *from) {
    if (from->n == 0) return;
    if (into->n == 0) {
        *into = *from;
        return;
    }
    double na = (double)into->n, nb = (double)from->n, n = na + nb;
    double delta = from->mean - into->mean;
    into->mean += delta * nb / n;
    into->m2 += from->m2 + delta * delta * na * nb / n;
    if (from->min < into->min) into->min = from->min;
    if (from->max > into->max) into->max = from->max;
    into->n += from->n;
}

double lp_welford_std(const lp_welford *w) {
    if (w->n < 2) return 0.0;
    double var = w->m2 / (double)(w->n - 1);
    return var > 0 ? sqrt(var) : 0.0;
}

static void merge_out_shape(lp_out_shape *into, const lp_out_shape *from) {
    if (!from->seen) return;
    if (into->seen) {
        int varies = from->varies;
        lp_out_shape_add(into, from->dims, from->rank);
        into->varies |= varies;
    } else {
        *into = *from;
    }
}

static void merge_mem(lp_mem_stats *into, const lp_mem_stats *from) {
    lp_stat_merge(&into->retained, &from->retained);
    lp_stat_merge(&into->self_retained, &from->self_retained);
    lp_stat_merge(&into->peak, &from->peak);
    lp_stat_merge(&into->net, &from->net);
}

static void merge_parts(lp_figures *into, const lp_figures *from, unsigned parts) {
    lp_welford_merge(&into->time, &from->time);
    into->calls += from->calls;
    into->total_ns += from->total_ns;
    into->self_ns += from->self_ns;
    into->cuda_self_ns += from->cuda_self_ns;
    into->cuda_total_ns += from->cuda_total_ns;
    into->flops_self += from->flops_self;
    into->flops_total += from->flops_total;
    if (parts & LP_FIG_OUT_SHAPE) merge_out_shape(&into->out, &from->out);
    for (int d = 0; d < LP_DEV_COUNT; d++)
        if (parts & (1u << d)) merge_mem(&into->mem[d], &from->mem[d]);
}

void lp_figures_merge(lp_figures *into, const lp_figures *from) {
    merge_parts(into, from, LP_FIG_ALL);
}

void lp_figures_move_parts(lp_figures *into, lp_figures *from, unsigned parts) {
    merge_parts(into, from, parts);
    memset(from, 0, offsetof(lp_figures, out));
    if (parts & LP_FIG_OUT_SHAPE) memset(&from->out, 0, sizeof from->out);
    for (int d = 0; d < LP_DEV_COUNT; d++)
        if (parts & (1u << d)) memset(&from->mem[d], 0, sizeof from->mem[d]);
}

int lp_tree_init(lp_tree *t) {
    memset(t, 0, sizeof *t);
    return LP_OK;
}

void lp_tree_free(lp_tree *t) {
    if (!t) return;
    lp_strpool_release(t->strings);
    free(t->nodes);
    free(t->ops);
    free(t->op_names);
    free(t->shape_names);
    memset(t, 0, sizeof *t);
}

int lp_tree_share_strings(lp_tree *t, lp_tree *with) {
    if (t->strings)
        return lp_error_set(LP_ERR_STATE, "lp_tree_share_strings: the tree has strings already");
    if (!with->strings && !(with->strings = lp_strpool_new()))
        return lp_error_set(LP_ERR_NOMEM, "out of memory");
    t->strings = lp_strpool_retain(with->strings);
    return LP_OK;
}

/* The pool's copy of `s` (the pool made with the first string); NULL when out of memory. */
static const char *own_str(lp_tree *t, const char *s) {
    if (!t->strings && !(t->strings = lp_strpool_new())) return NULL;
    return lp_strpool_intern(t->strings, s);
}

/* Grows an array by doubling; element size given. Returns 0 on success. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return 0;
    size_t n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, n * elem);
    if (!p) return -1;
    *arr = p;
    *cap = n;
    return 0;
}

int lp_tree_add(lp_tree *t, const char *path, const char *class_name, int32_t parent) {
    if (!path || !class_name)
        return lp_error_set(LP_ERR_INVALID, "module path and class are required");
    if (t->n_nodes == 0 ? parent != -1 : (parent < 0 || (size_t)parent >= t->n_nodes))
        return lp_error_set(LP_ERR_INVALID, "module '%s': parent %d does not exist", path, parent);
    if (t->n_nodes >= INT32_MAX - 1) return lp_error_set(LP_ERR_NOMEM, "too many modules");
    if (grow((void **)&t->nodes, &t->cap_nodes, t->n_nodes + 1, sizeof *t->nodes))
        return lp_error_set(LP_ERR_NOMEM, "out of memory adding module '%s'", path);

    int32_t idx = (int32_t)t->n_nodes;
    lp_tree_node *n = &t->nodes[idx];
    memset(n, 0, sizeof *n);
    const char *dot = strrchr(path, '.');
    const char *last = parent < 0 ? class_name : (dot ? dot + 1 : path);
    n->path = own_str(t, path);
    n->name = own_str(t, last);
    n->class_name = own_str(t, class_name);
    if (!n->path || !n->name || !n->class_name)
        return lp_error_set(LP_ERR_NOMEM, "out of memory adding module '%s'", path);
    n->parent = parent;
    n->depth = parent < 0 ? 0 : t->nodes[parent].depth + 1;
    n->first_child = n->next_sibling = n->first_op = -1;
    n->selected = 1;
    t->n_nodes++;

    if (parent >= 0) {
        /* Children arrive in pre-order, so the new node is the parent's last child so far; find
         * the previous last child by walking back from the newest sibling link (kept in
         * `last_child` scratch below) to stay linear in tree size. */
        lp_tree_node *p = &t->nodes[parent];
        if (p->first_child < 0) {
            p->first_child = idx;
        } else {
            int32_t c = p->last_child_scratch;
            t->nodes[c].next_sibling = idx;
        }
        p->last_child_scratch = idx;
    }
    return idx;
}

int lp_tree_set_name(lp_tree *t, int32_t index, const char *name) {
    const char *copy = own_str(t, name);
    if (!copy) return lp_error_set(LP_ERR_NOMEM, "out of memory naming node '%s'", name);
    t->nodes[index].name = copy;
    return LP_OK;
}

int lp_tree_set_class(lp_tree *t, int32_t index, const char *class_name) {
    const char *copy = own_str(t, class_name);
    if (!copy) return lp_error_set(LP_ERR_NOMEM, "out of memory naming class '%s'", class_name);
    t->nodes[index].class_name = copy;
    return LP_OK;
}

int lp_tree_set_fused(lp_tree *t, int32_t index, const char *module, const char *kernel,
                      uint32_t more) {
    lp_tree_node *n = &t->nodes[index];
    n->fused_module = n->fused_kernel = NULL;
    n->fused_more = 0;
    if (!module) return LP_OK;
    n->fused_module = own_str(t, module);
    n->fused_kernel = own_str(t, kernel ? kernel : "");
    if (!n->fused_module || !n->fused_kernel) {
        n->fused_module = n->fused_kernel = NULL;
        return lp_error_set(LP_ERR_NOMEM, "out of memory naming where '%s' was fused", n->path);
    }
    n->fused_more = more;
    return LP_OK;
}

int32_t lp_tree_find(const lp_tree *t, const char *path) {
    for (size_t i = 0; i < t->n_nodes; i++)
        if (strcmp(t->nodes[i].path, path) == 0) return (int32_t)i;
    return -1;
}

int lp_tree_reserve_ops(lp_tree *t, size_t extra) {
    if (grow((void **)&t->ops, &t->cap_ops, t->n_ops + extra, sizeof *t->ops))
        return lp_error_set(LP_ERR_NOMEM, "out of memory adding op rows");
    return LP_OK;
}

int lp_tree_add_op(lp_tree *t, int32_t module, int32_t parent_op, int32_t op, int32_t shapes) {
    if (module < 0 || (size_t)module >= t->n_nodes)
        return lp_error_set(LP_ERR_INVALID, "op row: module %d does not exist", module);
    if (parent_op >= 0 && (size_t)parent_op >= t->n_ops)
        return lp_error_set(LP_ERR_INVALID, "op row: parent op %d does not exist", parent_op);
    if (grow((void **)&t->ops, &t->cap_ops, t->n_ops + 1, sizeof *t->ops))
        return lp_error_set(LP_ERR_NOMEM, "out of memory adding an op row");
    int32_t idx = (int32_t)t->n_ops;
    lp_op_node *o = &t->ops[idx];
    memset(o, 0, sizeof *o);
    o->module = module;
    o->parent_op = parent_op;
    o->op = op;
    o->shapes = shapes;
    o->first_child = o->next_sibling = -1;
    /* Append at the end of the sibling list: first-seen order. Op rows per parent are few. */
    int32_t *link = parent_op >= 0 ? &t->ops[parent_op].first_child : &t->nodes[module].first_op;
    while (*link >= 0)
        link = &t->ops[*link].next_sibling;
    *link = idx;
    t->n_ops++;
    t->has_ops = 1;
    return idx;
}

void lp_tree_set_shares(lp_tree *t) {
    if (!t->n_nodes) return;
    uint64_t root_total = t->nodes[0].fig.total_ns;
    /* Pre-order: a parent's base is known before its children's. */
    for (size_t i = 0; i < t->n_nodes; i++) {
        lp_tree_node *n = &t->nodes[i];
        uint64_t base = root_total;
        if (n->parent >= 0 && n->kind != LP_NODE_CONTEXT) {
            const lp_tree_node *p = &t->nodes[n->parent];
            base = p->kind == LP_NODE_CONTEXT ? p->fig.total_ns : p->fig.share_base_ns;
        }
        n->fig.share_base_ns = base;
    }
    for (size_t r = 0; r < t->n_ops; r++)
        t->ops[r].fig.share_base_ns = t->nodes[t->ops[r].module].fig.share_base_ns;
}

/* Appends the pool's copy of `s` to a name table. */
static int table_append(lp_tree *t, const char ***table, size_t *n, size_t *cap, const char *s) {
    const char *copy = own_str(t, s);
    if (!copy || grow((void **)table, cap, *n + 1, sizeof **table))
        return lp_error_set(LP_ERR_NOMEM, "out of memory copying op names");
    (*table)[(*n)++] = copy;
    return LP_OK;
}

int lp_tree_extend_names(lp_tree *t, const char *const *op_names, size_t n_op_names,
                         const char *const *shape_names, size_t n_shape_names) {
    int rc = LP_OK;
    for (size_t i = t->n_op_names; i < n_op_names && rc == LP_OK; i++)
        rc = table_append(t, &t->op_names, &t->n_op_names, &t->cap_op_names, op_names[i]);
    for (size_t i = t->n_shape_names; i < n_shape_names && rc == LP_OK; i++)
        rc = table_append(t, &t->shape_names, &t->n_shape_names, &t->cap_shape_names,
                          shape_names[i]);
    return rc;
}

/* Interned strings compare by pointer: a linear scan of pointers, at load time only. */
static int32_t table_intern(lp_tree *t, const char ***table, size_t *n, size_t *cap,
                            const char *s) {
    const char *copy = own_str(t, s);
    if (!copy) return lp_error_set(LP_ERR_NOMEM, "out of memory copying op names");
    for (size_t i = 0; i < *n; i++)
        if ((*table)[i] == copy) return (int32_t)i;
    if (*n >= INT32_MAX) return lp_error_set(LP_ERR_NOMEM, "too many op names");
    int rc = table_append(t, table, n, cap, copy);
    return rc < 0 ? rc : (int32_t)(*n - 1);
}

int32_t lp_tree_intern_op_name(lp_tree *t, const char *name) {
    return table_intern(t, &t->op_names, &t->n_op_names, &t->cap_op_names, name);
}

int32_t lp_tree_intern_shapes(lp_tree *t, const char *shapes) {
    return table_intern(t, &t->shape_names, &t->n_shape_names, &t->cap_shape_names, shapes);
}

const char *lp_tree_op_name(const lp_tree *t, int32_t op) {
    return op >= 0 && (size_t)op < t->n_op_names ? t->op_names[op] : NULL;
}

const char *lp_tree_shapes(const lp_tree *t, int32_t shapes) {
    return shapes >= 0 && (size_t)shapes < t->n_shape_names ? t->shape_names[shapes] : NULL;
}

void lp_tree_flops_totals(lp_tree *t) {
    for (size_t i = 0; i < t->n_nodes; i++)
        t->nodes[i].fig.flops_total = t->nodes[i].fig.flops_self;
    for (size_t i = t->n_nodes; i-- > 1;) { /* pre-order: children after their parent */
        int32_t p = t->nodes[i].parent;
        if (p >= 0) t->nodes[p].fig.flops_total += t->nodes[i].fig.flops_total;
    }
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!t->nodes[i].selected) t->nodes[i].fig.flops_total = 0;
}

void lp_out_shape_add(lp_out_shape *s, const int64_t *dims, int rank) {
    if (rank < 0) return;
    uint8_t kept = (uint8_t)(rank < LP_OUT_SHAPE_DIMS ? rank : LP_OUT_SHAPE_DIMS);
    if (!s->seen) {
        s->seen = 1;
        s->rank = kept;
        memcpy(s->dims, dims, kept * sizeof *dims);
        return;
    }
    if (s->rank != kept || memcmp(s->dims, dims, kept * sizeof *dims) != 0) s->varies = 1;
}

/* Nodes and op rows are stored parent before child, so one reverse pass sees every child first. */
void lp_tree_cuda_totals(lp_tree *t) {
    for (size_t i = 0; i < t->n_nodes; i++)
        t->nodes[i].fig.cuda_total_ns = t->nodes[i].fig.cuda_self_ns;
    for (size_t i = t->n_nodes; i-- > 1;) {
        int32_t p = t->nodes[i].parent;
        if (p >= 0) t->nodes[p].fig.cuda_total_ns += t->nodes[i].fig.cuda_total_ns;
    }
    /* Like CPU totals, only measured modules have one. */
    for (size_t i = 0; i < t->n_nodes; i++)
        if (!t->nodes[i].selected) t->nodes[i].fig.cuda_total_ns = 0;

    for (size_t i = 0; i < t->n_ops; i++)
        t->ops[i].fig.cuda_total_ns = t->ops[i].fig.cuda_self_ns;
    for (size_t i = t->n_ops; i-- > 0;) {
        int32_t p = t->ops[i].parent_op;
        if (p >= 0) t->ops[p].fig.cuda_total_ns += t->ops[i].fig.cuda_total_ns;
    }
}

void lp_tree_restore_node(lp_tree *t, int32_t index, int kind, int selected, int container,
                          const lp_figures *fig) {
    lp_tree_node *n = &t->nodes[index];
    n->kind = kind;
    n->selected = selected;
    n->container = container;
    n->fig = *fig;
}

void lp_tree_restore_op(lp_tree *t, int32_t row, const lp_figures *fig) {
    t->ops[row].fig = *fig;
}
