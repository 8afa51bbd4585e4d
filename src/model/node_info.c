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

/* Per-call time statistics (0 without calls) and the share of the context's total. */
static void time_fill(const lp_figures *f, lp_node_info *out) {
    const lp_welford *w = &f->time;
    out->time_mean_ns = w->n ? w->mean : 0.0;
    out->time_std_ns = lp_welford_std(w);
    out->time_min_ns = w->n ? w->min : 0;
    out->time_max_ns = w->n ? w->max : 0;
    /* No base: lp_tree_set_shares has not run, or the row has no context to be a share of. */
    out->share = f->share_base_ns ? (double)f->total_ns / (double)f->share_base_ns : 0.0;
}

int lp_tree_node_info(const lp_tree *t, size_t index, lp_node_info *out, const char *caller) {
    if (index >= t->n_nodes)
        return lp_error_set(LP_ERR_INVALID, "%s: node %zu out of range (%zu nodes)", caller, index,
                            t->n_nodes);
    const lp_tree_node *n = &t->nodes[index];
    uint64_t it = t->iterations;
    double per = it ? 1.0 / (double)it : 0.0; /* no iteration: every mean is 0 */
    memset(out, 0, sizeof *out);
    out->path = n->path;
    out->name = n->name;
    out->class_name = n->class_name;
    out->parent = n->parent;
    out->depth = n->depth;
    out->selected = n->selected;
    out->raw_calls = n->fig.calls;
    out->raw_total_ns = n->fig.total_ns;
    out->raw_self_ns = n->fig.self_ns;
    out->iterations = it;
    out->calls = (double)n->fig.calls * per;
    out->total_ns = (double)n->fig.total_ns * per;
    out->self_ns = (double)n->fig.self_ns * per;
    lp_node_mem_fill(t, &n->fig, LP_DEV_CPU, &out->cpu_mem);
    lp_node_mem_fill(t, &n->fig, LP_DEV_CUDA, &out->cuda_mem);
    out->cuda_recorded = t->has_cuda_time;
    out->raw_cuda_self_ns = n->fig.cuda_self_ns;
    out->raw_cuda_total_ns = n->fig.cuda_total_ns;
    out->cuda_self_ns = (double)n->fig.cuda_self_ns * per;
    out->cuda_total_ns = (double)n->fig.cuda_total_ns * per;
    out->kind = (lp_node_kind)n->kind;
    out->container = n->container;
    time_fill(&n->fig, out);
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
