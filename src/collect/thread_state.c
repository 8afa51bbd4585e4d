/* thread_state.c: a thread's state in a collector, made on the thread's first event and freed with
 * the collector (collector_internal.h). Out of the hot path's file: it runs once per thread. */
#include <stdlib.h>

#include "base/ptrmap.h"
#include "collect/collector_internal.h"

lp_thread_state *lp_thread_state_new(const lp_collector *c) {
    lp_thread_state *ts = calloc(1, sizeof *ts);
    if (!ts) return NULL;
    ts->mods = calloc(c->tree->n_nodes ? c->tree->n_nodes : 1, sizeof *ts->mods);
    ts->outside_ns = calloc(c->tree->n_nodes ? c->tree->n_nodes : 1, sizeof *ts->outside_ns);
    if (c->cfg.histograms)
        ts->hist = calloc(c->tree->n_nodes ? c->tree->n_nodes : 1, sizeof *ts->hist);
    if (!ts->mods || !ts->outside_ns || (c->cfg.histograms && !ts->hist) ||
        (c->cfg.memory && lp_ptrmap_init(&ts->live, 1024))) {
        lp_ptrmap_free(&ts->live);
        free(ts->hist);
        free(ts->mods);
        free(ts->outside_ns);
        free(ts);
        return NULL;
    }
    return ts;
}

void lp_thread_state_free(lp_thread_state *ts) {
    if (!ts) return;
    free(ts->mods);
    free(ts->hist);
    free(ts->outside_ns);
    free(ts->regs);
    free(ts->rows);
    free(ts->row_index);
    lp_ptrmap_free(&ts->live);
    lp_pkg_mem_release(&ts->pkg);
    lp_span_buf_free(&ts->trace);
    free(ts);
}
