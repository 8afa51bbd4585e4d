/* node_info.c: see node_info.h. */
#include "model/node_info.h"

#include <string.h>

#include "base/error.h"

void lp_node_mem_fill(const lp_tree *t, const lp_figures *f, int dev, lp_node_mem *out) {
    const lp_mem_stats *m = &f->mem[dev];
    memset(out, 0, sizeof *out);
    out->recorded = t->has_memory[dev];
    out->retained = lp_stat_mean(&m->retained);
    out->self_retained = lp_stat_mean(&m->self_retained);
    out->peak = lp_stat_mean(&m->peak);
    out->net = lp_stat_mean(&m->net);
    out->retained_min = m->retained.min;
    out->retained_max = m->retained.max;
    out->peak_min = m->peak.min;
    out->peak_max = m->peak.max;
    out->net_min = m->net.min;
    out->net_max = m->net.max;
}

/* The figures a module row and an op row share, filled the same way for both: raw sums over the
 * iterations, their per-iteration means (divided as the columns divide them, so a getter and the
 * table agree), memory, per-call time (the Welford figures are 0 without calls) and the share of
 * the context's total. The two public structs name these fields alike but are distinct types,
 * hence a macro rather than a function. */
#define FILL_FIGURES(out, t, f)                                                                    \
    do {                                                                                           \
        uint64_t it_ = (t)->iterations;                                                            \
        (out)->iterations = it_;                                                                   \
        (out)->raw_calls = (f)->calls;                                                             \
        (out)->raw_total_ns = (f)->total_ns;                                                       \
        (out)->raw_self_ns = (f)->self_ns;                                                         \
        (out)->calls = per_iteration((f)->calls, it_);                                             \
        (out)->total_ns = per_iteration((f)->total_ns, it_);                                       \
        (out)->self_ns = per_iteration((f)->self_ns, it_);                                         \
        lp_node_mem_fill((t), (f), LP_DEV_CPU, &(out)->cpu_mem);                                   \
        lp_node_mem_fill((t), (f), LP_DEV_CUDA, &(out)->cuda_mem);                                 \
        (out)->time_mean_ns = (f)->time.mean;                                                      \
        (out)->time_std_ns = lp_welford_std(&(f)->time);                                           \
        (out)->time_min_ns = (f)->time.min;                                                        \
        (out)->time_max_ns = (f)->time.max;                                                        \
        /* No base: lp_tree_set_shares has not run, or the row has no context to share. */         \
        (out)->share =                                                                             \
            (f)->share_base_ns ? (double)(f)->total_ns / (double)(f)->share_base_ns : 0.0;         \
    } while (0)

/* A sum over the iterations as a mean per iteration; 0 before any iteration. */
static double per_iteration(uint64_t sum, uint64_t iterations) {
    return iterations ? (double)sum / (double)iterations : 0.0;
}

int lp_tree_node_info(const lp_tree *t, size_t index, lp_node_info *out, const char *caller) {
    if (index >= t->n_nodes)
        return lp_error_set(LP_ERR_INVALID, "%s: node %zu out of range (%zu nodes)", caller, index,
                            t->n_nodes);
    const lp_tree_node *n = &t->nodes[index];
    memset(out, 0, sizeof *out);
    FILL_FIGURES(out, t, &n->fig);
    out->path = n->path;
    out->name = n->name;
    out->class_name = n->class_name;
    out->parent = n->parent;
    out->depth = n->depth;
    out->selected = n->selected;
    out->cuda_recorded = t->has_cuda_time;
    out->raw_cuda_self_ns = n->fig.cuda_self_ns;
    out->raw_cuda_total_ns = n->fig.cuda_total_ns;
    out->cuda_self_ns = per_iteration(n->fig.cuda_self_ns, t->iterations);
    out->cuda_total_ns = per_iteration(n->fig.cuda_total_ns, t->iterations);
    out->kind = (lp_node_kind)n->kind;
    out->container = n->container;
    const lp_module_size *size = &n->fig.size;
    out->size_known = size->known;
    out->params = size->params;
    out->self_params = size->self_params;
    out->param_bytes = size->bytes;
    out->self_param_bytes = size->self_bytes;
    out->flops_known = t->has_flops;
    out->raw_flops = n->fig.flops_total;
    out->raw_self_flops = n->fig.flops_self;
    double per_call = n->fig.calls ? 1.0 / (double)n->fig.calls : 0.0;
    out->flops = (double)n->fig.flops_total * per_call;
    out->self_flops = (double)n->fig.flops_self * per_call;
    out->out_rank = n->fig.out.seen ? n->fig.out.rank : -1;
    for (int d = 0; d < out->out_rank && d < LP_MAX_DIMS; d++)
        out->out_shape[d] = n->fig.out.dims[d];
    out->out_shape_varies = n->fig.out.varies;
    out->fused_into_module = n->fused_module;
    out->fused_into_kernel = n->fused_kernel;
    out->fused_into_more = n->fused_more;
    return LP_OK;
}

int lp_tree_op_info(const lp_tree *t, size_t index, lp_op_info *out) {
    if (index >= t->n_ops)
        return lp_error_set(LP_ERR_INVALID, "op row %zu out of range (%zu op rows)", index,
                            t->n_ops);
    const lp_op_node *o = &t->ops[index];
    memset(out, 0, sizeof *out);
    out->module = o->module;
    out->parent_op = o->parent_op;
    out->name = lp_tree_op_name(t, o->op) ? lp_tree_op_name(t, o->op) : "";
    out->shapes = lp_tree_shapes(t, o->shapes);
    FILL_FIGURES(out, t, &o->fig);
    return LP_OK;
}

static const char *const kind_names[] = {"module", "region", "context", "session"};
#define N_KINDS (sizeof kind_names / sizeof kind_names[0])

const char *lp_node_kind_name(int kind) {
    return kind >= 0 && (size_t)kind < N_KINDS ? kind_names[kind] : NULL;
}

int lp_node_kind_parse(const char *name, int *out) {
    for (size_t k = 0; name && k < N_KINDS; k++)
        if (strcmp(name, kind_names[k]) == 0) {
            *out = (int)k;
            return LP_OK;
        }
    return LP_ERR_NOT_FOUND;
}
