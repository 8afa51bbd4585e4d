/* noise.c: the notes that say when a run's ranking is within its own noise (noise.h). */
#include "model/noise.h"

#include <math.h>
#include <stdio.h>

#include "base/units.h"
#include "layerprof.h"

/* Above this, std / mean of the forward's time is worth a word (10%). */
#define FORWARD_CV_NOTE 0.10

typedef struct ranked {
    int32_t node;
    double per_iteration; /* ns */
    double error;         /* its standard error, ns */
} ranked;

/* A module with calls and no child module: its per-call time is its own. */
static int is_leaf(const lp_tree *t, int32_t i) {
    const lp_tree_node *n = &t->nodes[i];
    return n->kind == LP_NODE_MODULE && n->selected && n->fig.calls > 0 && n->first_child < 0;
}

/* The LP_NOISE_RANKED slowest leaves by time per iteration, slowest first; returns how many. */
static size_t slowest_leaves(const lp_tree *t, ranked *out) {
    size_t n = 0;
    double it = (double)t->iterations;
    for (size_t i = 0; i < t->n_nodes; i++) {
        if (!is_leaf(t, (int32_t)i)) continue;
        const lp_figures *f = &t->nodes[i].fig;
        ranked r = {(int32_t)i, (double)f->total_ns / it,
                    lp_welford_std(&f->time) * sqrt((double)f->calls) / it};
        size_t k;
        if (n < LP_NOISE_RANKED)
            k = n++;
        else if (r.per_iteration > out[LP_NOISE_RANKED - 1].per_iteration)
            k = LP_NOISE_RANKED - 1; /* the last one goes */
        else
            continue;
        while (k > 0 && out[k - 1].per_iteration < r.per_iteration) {
            out[k] = out[k - 1];
            k--;
        }
        out[k] = r;
    }
    return n;
}

static const char *path_of(const lp_tree *t, int32_t i) {
    return t->nodes[i].parent < 0 ? t->nodes[i].name : t->nodes[i].path;
}

size_t lp_noise_notes(const lp_tree *t, char (*lines)[256], size_t max) {
    if (!max || !t->n_nodes || !t->iterations || t->nodes[0].kind != LP_NODE_MODULE ||
        !t->nodes[0].fig.calls)
        return 0;
    size_t n = 0;
    uint64_t it = t->iterations;
    if (it < 2) {
        snprintf(lines[n++], 256,
                 "noise: one profiled iteration has no spread to judge these figures by: "
                 "--iterations 10 or more tells whether their order is steady");
        return n;
    }
    const lp_welford *fw = &t->nodes[0].fig.time;
    double cv = fw->mean > 0 ? lp_welford_std(fw) / fw->mean : 0.0;
    if (cv > FORWARD_CV_NOTE && n < max)
        snprintf(lines[n++], 256,
                 "noise: the forward's time varied by %.0f%% (std / mean over %llu iterations): "
                 "a busy machine, or a model still warming up",
                 100.0 * cv, (unsigned long long)it);
    ranked top[LP_NOISE_RANKED];
    size_t k = slowest_leaves(t, top);
    for (size_t i = 0; i + 1 < k && n < max; i++) {
        double gap = top[i].per_iteration - top[i + 1].per_iteration;
        double error = sqrt(top[i].error * top[i].error + top[i + 1].error * top[i + 1].error);
        if (gap >= 2.0 * error) continue;
        char a[32], b[32], need[48];
        lp_format_time(top[i].per_iteration, LP_UNITS_AUTO, a, sizeof a);
        lp_format_time(top[i + 1].per_iteration, LP_UNITS_AUTO, b, sizeof b);
        /* less a hair: the errors' roundoff must not turn an exact 32 into 33 */
        double ratio = 2.0 * error / gap;
        double want = gap > 0 ? ceil((double)it * ratio * ratio * (1.0 - 1e-12)) : 0;
        if (want > 0 && want < 1e7)
            snprintf(need, sizeof need, "about %.0f iterations would", want);
        else
            snprintf(need, sizeof need, "no number of iterations may");
        int len = snprintf(lines[n++], 256,
                           "noise: the order of the slowest layers is not settled: %s (%s) and "
                           "%s (%s) differ by less than their noise over %llu iterations; %s "
                           "tell them apart",
                           path_of(t, top[i].node), a, path_of(t, top[i + 1].node), b,
                           (unsigned long long)it, need);
        if (len >= 256) lines[n - 1][252] = lines[n - 1][253] = lines[n - 1][254] = '.';
        break; /* the first unsettled pair says it: a list of them would bury the table */
    }
    return n;
}
