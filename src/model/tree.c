/* tree.c: building the module tree and merging figures into it. */
#include "model/tree.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

void lp_stat_add(lp_stat *s, int64_t v) {
    if (s->n == 0 || v < s->min) s->min = v;
    if (s->n == 0 || v > s->max) s->max = v;
    s->sum += v;
    s->n++;
}

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

void lp_welford_add(lp_welford *w, uint64_t x) {
    if (w->n == 0 || x < w->min) w->min = x;
    if (w->n == 0 || x > w->max) w->max = x;
    w->n++;
    double delta = (double)x - w->mean;
    w->mean += delta / (double)w->n;
    w->m2 += delta * ((double)x - w->mean);
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

void lp_figures_merge(lp_figures *into, const lp_figures *from) {
    lp_welford_merge(&into->time, &from->time);
    into->calls += from->calls;
    into->total_ns += from->total_ns;
    into->self_ns += from->self_ns;
    into->cuda_self_ns += from->cuda_self_ns;
    into->cuda_total_ns += from->cuda_total_ns;
    for (int d = 0; d < LP_DEV_COUNT; d++) {
        lp_stat_merge(&into->mem[d].retained, &from->mem[d].retained);
        lp_stat_merge(&into->mem[d].self_retained, &from->mem[d].self_retained);
        lp_stat_merge(&into->mem[d].peak, &from->mem[d].peak);
        lp_stat_merge(&into->mem[d].net, &from->mem[d].net);
    }
}

int lp_tree_init(lp_tree *t) {
    memset(t, 0, sizeof *t);
    return LP_OK;
}

void lp_tree_free(lp_tree *t) {
    if (!t) return;
    for (size_t i = 0; i < t->n_nodes; i++) {
        free(t->nodes[i].path);
        free(t->nodes[i].name);
        free(t->nodes[i].class_name);
    }
    free(t->nodes);
    free(t->ops);
    memset(t, 0, sizeof *t);
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
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
    n->path = dup_str(path);
    n->name = dup_str(last);
    n->class_name = dup_str(class_name);
    if (!n->path || !n->name || !n->class_name) {
        free(n->path);
        free(n->name);
        free(n->class_name);
        return lp_error_set(LP_ERR_NOMEM, "out of memory adding module '%s'", path);
    }
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
    char *copy = dup_str(name);
    if (!copy) return lp_error_set(LP_ERR_NOMEM, "out of memory naming node '%s'", name);
    free(t->nodes[index].name);
    t->nodes[index].name = copy;
    return LP_OK;
}

int32_t lp_tree_find(const lp_tree *t, const char *path) {
    for (size_t i = 0; i < t->n_nodes; i++)
        if (strcmp(t->nodes[i].path, path) == 0) return (int32_t)i;
    return -1;
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
