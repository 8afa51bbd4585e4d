/* collector_driver.c: what the driving thread does with a collector, between forwards: create and
 * free it, count iterations, drop the stacks of a forward that threw, merge every thread's figures
 * into the tree (lp_collector_finish), CUDA time, statistics. See collector.h. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (clock.h) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "collect/collector.h"
#include "collect/collector_internal.h"
#include "collect/cuda_join.h"
#include "layerprof.h"

static _Atomic uint64_t lp_generation_counter = 1;

static uint64_t default_clock(void) {
    return lp_now_ns();
}

/* ---- creation -------------------------------------------------------------------------------- */

int lp_collector_create(lp_collector **out, lp_tree *tree, const lp_collector_config *cfg) {
    if (!out || !tree || !cfg)
        return lp_error_set(LP_ERR_INVALID, "lp_collector_create: NULL argument");
    *out = NULL;
    lp_collector *c = calloc(1, sizeof *c);
    if (!c) return lp_error_set(LP_ERR_NOMEM, "out of memory creating the collector");
    c->tree = tree;
    c->cfg = *cfg;
    c->measured_root = calloc(tree->n_nodes ? tree->n_nodes : 1, 1);
    c->hist_mode = calloc(tree->n_nodes ? tree->n_nodes : 1, 1);
    c->under_container = calloc(tree->n_nodes ? tree->n_nodes : 1, 1);
    c->rolled_ns = calloc(tree->n_nodes ? tree->n_nodes : 1, sizeof *c->rolled_ns);
    c->regions = calloc(LP_MAX_REGIONS, sizeof *c->regions);
    c->region_index = calloc(LP_REGION_INDEX_CAP, sizeof *c->region_index);
    if (!c->measured_root || !c->hist_mode || !c->under_container || !c->rolled_ns || !c->regions ||
        !c->region_index) {
        free(c->measured_root);
        free(c->hist_mode);
        free(c->under_container);
        free(c->rolled_ns);
        free(c->regions);
        free(c->region_index);
        free(c);
        return lp_error_set(LP_ERR_NOMEM, "out of memory creating the collector");
    }
    for (size_t i = 0; i < tree->n_nodes; i++) {
        c->measured_root[i] = cfg->selected ? cfg->selected[i] : 1;
        int32_t parent = tree->nodes[i].parent;
        c->under_container[i] = parent >= 0 && tree->nodes[parent].container;
    }
    c->cfg.selected = NULL; /* borrowed: use the copy */
    for (size_t i = 0; cfg->histograms && i < tree->n_nodes; i++) {
        int depth = tree->nodes[i].depth, limit = cfg->hist_depth;
        c->hist_mode[i] = limit < 0 || depth < limit ? HIST_SELF
                          : depth == limit           ? HIST_FOLDED
                                                     : HIST_NONE;
    }
    c->clock = cfg->clock ? cfg->clock : default_clock;
    c->generation = atomic_fetch_add(&lp_generation_counter, 1);
    pthread_mutex_init(&c->names_lock, NULL);
    if (cfg->memory)
        for (int d = 0; d < LP_DEV_COUNT; d++)
            if (cfg->memory_devices & (1u << d)) tree->has_memory[d] = 1;
    if (cfg->cuda_time) tree->has_cuda_time = 1;
    c->timeline.recorded = cfg->trace != 0;
    *out = c;
    return LP_OK;
}

void lp_collector_free(lp_collector *c) {
    if (!c) return;
    uint32_t n = atomic_load(&c->n_threads);
    for (uint32_t i = 0; i < n && i < LP_MAX_THREADS; i++)
        lp_thread_state_free(c->threads[i]);
    for (size_t i = 0; i < c->n_names; i++)
        free(c->names[i]);
    free(c->names);
    free(c->name_ptrs);
    for (size_t i = 0; i < c->n_shapes; i++)
        free(c->shape_texts[i]);
    free(c->shape_texts);
    free(c->measured_root);
    free(c->hist_mode);
    free(c->under_container);
    free(c->rolled_ns);
    for (uint32_t i = 0; i < atomic_load(&c->n_regions); i++)
        free(c->regions[i].name);
    free(c->regions);
    free(c->region_index);
    free(c->region_figs);
    lp_timeline_free(&c->timeline);
    pthread_mutex_destroy(&c->names_lock);
    free(c);
}

/* ---- driving thread -------------------------------------------------------------------------- */

void lp_collector_count_iteration(lp_collector *c) {
    c->tree->iterations++;
}

int lp_collector_reset_stacks(lp_collector *c) {
    int dropped = 0;
    uint32_t n = atomic_load(&c->n_threads);
    for (uint32_t i = 0; i < n && i < LP_MAX_THREADS; i++) {
        lp_thread_state *ts = c->threads[i];
        if (!ts) continue;
        /* Scopes are per thread (CUPTI's and NVTX's stacks): only this thread's can be closed. */
        dropped += lp_thread_state_drop_frames(c, ts, lp_collector_is_calling_thread(c, ts));
    }
    return dropped;
}

/* Maps a thread's op row to the tree's op row with the same (module, parent, op, shapes). */
static int32_t tree_row(lp_tree *t, int32_t module, int32_t parent_op, int32_t op, int32_t shapes) {
    int32_t r = parent_op >= 0 ? t->ops[parent_op].first_child : t->nodes[module].first_op;
    for (; r >= 0; r = t->ops[r].next_sibling)
        if (t->ops[r].op == op && t->ops[r].shapes == shapes) return r;
    return lp_tree_add_op(t, module, parent_op, op, shapes);
}

/* The optional parts of lp_figures this collector records: merges leave the others alone. */
static unsigned recorded_parts(const lp_collector *c) {
    unsigned parts = c->cfg.out_shape ? LP_FIG_OUT_SHAPE : 0;
    if (c->cfg.memory) parts |= c->cfg.memory_devices & (LP_FIG_MEM_CPU | LP_FIG_MEM_CUDA);
    return parts;
}

static int merge_rows(lp_collector *c, lp_thread_state *ts) {
    if (!ts->n_rows) return LP_OK;
    lp_tree *t = c->tree;
    /* Rows past the last merge may be new to the tree: room for all of them at once, rather
     * than doubling (at 100k rows, each doubling copies and faults in tens of MB). */
    int rc = lp_tree_reserve_ops(t, ts->n_rows - ts->rows_merged);
    if (rc) return rc;
    int32_t *map = malloc(ts->n_rows * sizeof *map);
    if (!map) return lp_error_set(LP_ERR_NOMEM, "out of memory merging op rows");
    /* A row's parent row is always created before it, so one pass in order resolves parents. */
    for (size_t r = 0; r < ts->n_rows; r++) {
        const lp_row *row = &ts->rows[r];
        int32_t module, parent_op = -1;
        if (row->parent_key & 1) {
            parent_op = map[row->parent_key >> 1];
            module = t->ops[parent_op].module;
        } else {
            module = row->parent_key >> 1;
        }
        int32_t tr = tree_row(t, module, parent_op, row->op, row->shapes);
        if (tr < 0) {
            free(map);
            return tr;
        }
        map[r] = tr;
        lp_figures_move_parts(&t->ops[tr].fig, &ts->rows[r].fig, recorded_parts(c));
    }
    free(map);
    ts->rows_merged = ts->n_rows;
    return LP_OK;
}

static int merge_regions(lp_collector *c, lp_thread_state *ts) {
    uint32_t n = atomic_load(&c->n_regions);
    if (!ts->regs || !n) return LP_OK;
    if (!c->region_figs && !(c->region_figs = calloc(LP_MAX_REGIONS, sizeof *c->region_figs)))
        return lp_error_set(LP_ERR_NOMEM, "out of memory merging regions");
    for (uint32_t r = 0; r < n; r++)
        lp_figures_move_parts(&c->region_figs[r], &ts->regs[r], recorded_parts(c));
    return LP_OK;
}

/* Moves every thread's spans into the timeline, in thread-slot order, and sorts it. */
static int collect_timeline(lp_collector *c) {
    uint32_t n = atomic_load(&c->n_threads);
    for (uint32_t i = 0; i < n && i < LP_MAX_THREADS; i++)
        if (c->threads[i]) {
            int rc = lp_timeline_take(&c->timeline, &c->threads[i]->trace, (uint16_t)i);
            if (rc) return rc;
        }
    lp_timeline_sort(&c->timeline);
    return LP_OK;
}

void lp_collector_set_tracing(lp_collector *c, int on) {
    atomic_store(&c->tracing, on && c->cfg.trace);
}

lp_timeline *lp_collector_timeline(lp_collector *c) {
    return &c->timeline;
}

/* A container (ModuleList, ModuleDict: no forward) is never called, and its elements run inside
 * its parent's frames, not its own. Its total is what its own frames took (a __len__, at most)
 * plus everything of its children that ran outside it, so the tree never shows a parent smaller
 * than its children. Its self time stays what its own frames took, so the self times still add up
 * to the root's total. Children come after their parent in the tree's pre-order: walking
 * backwards, a container's children are all added up before it is reached. */
static void roll_up_containers(const lp_tree *t, lp_thread_state *ts, uint64_t *rolled) {
    memset(rolled, 0, t->n_nodes * sizeof *rolled);
    for (size_t m = t->n_nodes; m-- > 1;) {
        const lp_tree_node *node = &t->nodes[m];
        if (node->container) ts->mods[m].total_ns += rolled[m];
        if (t->nodes[node->parent].container)
            rolled[node->parent] += ts->outside_ns[m] + (node->container ? rolled[m] : 0);
        ts->outside_ns[m] = 0;
    }
}

/* The thread's ops without a formula join the collector's list (names compare by pointer: each
 * is libtorch's one string for its operator). */
static void merge_no_formula(lp_collector *c, lp_thread_state *ts) {
    for (uint32_t i = 0; i < ts->n_no_formula; i++) {
        size_t k = 0;
        while (k < c->n_no_formula && c->no_formula[k] != ts->no_formula[i])
            k++;
        if (k < c->n_no_formula) continue;
        if (c->n_no_formula < LP_MAX_NO_FORMULA)
            c->no_formula[c->n_no_formula++] = ts->no_formula[i];
        else
            c->more_no_formula++;
    }
    ts->n_no_formula = 0;
}

int lp_collector_finish(lp_collector *c) {
    lp_tree *t = c->tree;
    uint32_t n = atomic_load(&c->n_threads);
    if (c->cfg.trace) {
        int trc = collect_timeline(c);
        if (trc) return trc;
    }
    for (uint32_t i = 0; i < n && i < LP_MAX_THREADS; i++) {
        lp_thread_state *ts = c->threads[i];
        if (!ts) continue;
        roll_up_containers(t, ts, c->rolled_ns);
        unsigned parts = recorded_parts(c);
        for (size_t m = 0; m < t->n_nodes; m++)
            lp_figures_move_parts(&t->nodes[m].fig, &ts->mods[m], parts);
        merge_no_formula(c, ts);
        int rc = merge_rows(c, ts);
        if (rc) return rc;
        rc = merge_regions(c, ts);
        if (rc) return rc;
    }
    /* The tree keeps its own copies of the names it does not have yet, so they outlive us. */
    pthread_mutex_lock(&c->names_lock);
    int nrc = lp_tree_extend_names(t, (const char *const *)c->names, c->n_names,
                                   (const char *const *)c->shape_texts, c->n_shapes);
    pthread_mutex_unlock(&c->names_lock);
    if (nrc) return nrc;
    /* A node is measured when it or an ancestor was selected. */
    lp_tree_mark_measured(t, c->measured_root);
    if (t->has_cuda_time) lp_tree_cuda_totals(t);
    if (c->cfg.flops) {
        t->has_flops = 1;
        lp_tree_flops_totals(t);
    }
    if (c->cfg.out_shape) t->has_out_shape = 1;
    return LP_OK;
}

size_t lp_collector_no_formula(const lp_collector *c, const char **names, size_t max) {
    for (size_t i = 0; i < c->n_no_formula && i < max; i++)
        names[i] = c->no_formula[i];
    return c->n_no_formula + c->more_no_formula;
}

int lp_collector_add_cuda(void *ctx, uint64_t scope, uint64_t ns) {
    lp_collector *c = ctx;
    uint32_t thread;
    int32_t index;
    switch (lp_cuda_scope_decode(scope, &thread, &index)) {
    case LP_SCOPE_MODULE:
        /* Module scopes carry no thread: any thread's figures merge into the same node. */
        if ((size_t)index >= c->tree->n_nodes) return -1;
        for (uint32_t i = 0; i < atomic_load(&c->n_threads) && i < LP_MAX_THREADS; i++)
            if (c->threads[i]) {
                c->threads[i]->mods[index].cuda_self_ns += ns;
                return 0;
            }
        return -1;
    case LP_SCOPE_OP: {
        lp_thread_state *ts = thread < LP_MAX_THREADS && thread < atomic_load(&c->n_threads)
                                  ? c->threads[thread]
                                  : NULL;
        if (!ts || (size_t)index >= ts->n_rows) return -1;
        ts->rows[index].fig.cuda_self_ns += ns;
        /* The op's module: up the op rows to the first one directly under a module. */
        int32_t key = ts->rows[index].parent_key;
        while ((key & 1) && (size_t)(key >> 1) < ts->n_rows)
            key = ts->rows[key >> 1].parent_key;
        if (!(key & 1) && (size_t)(key >> 1) < c->tree->n_nodes)
            ts->mods[key >> 1].cuda_self_ns += ns;
        return 0;
    }
    default:
        return -1;
    }
}

void lp_collector_get_stats(const lp_collector *c, lp_collector_stats *out) {
    memset(out, 0, sizeof *out);
    uint32_t n = atomic_load(&c->n_threads);
    for (uint32_t i = 0; i < n && i < LP_MAX_THREADS; i++) {
        const lp_thread_state *ts = c->threads[i];
        if (!ts) continue;
        out->events += ts->events;
        out->dropped += ts->dropped;
        out->unbalanced += ts->unbalanced;
        out->foreign_frees += ts->foreign_frees;
        out->pkg_failed += ts->pkg_failed != 0;
    }
    out->threads = n;
    out->dropped += atomic_load(&c->lost_threads);
}

void lp_collector_set_tree(lp_collector *c, lp_tree *tree) {
    c->tree = tree;
    if (c->cfg.memory)
        for (int d = 0; d < LP_DEV_COUNT; d++)
            if (c->cfg.memory_devices & (1u << d)) tree->has_memory[d] = 1;
    if (c->cfg.cuda_time) tree->has_cuda_time = 1;
}

lp_tree *lp_collector_tree(lp_collector *c) {
    return c->tree;
}

/* Once per forward and module of an AOTInductor package: not the per-op hot path. */
/* The thread's figures of `module` when it is measured (it or an ancestor selected), else NULL. */
static lp_figures *package_module(lp_collector *c, int32_t module) {
    lp_thread_state *ts = lp_collector_thread(c);
    if (!ts || module < 0 || (size_t)module >= c->tree->n_nodes) return NULL;
    int measured = 0;
    for (int32_t m = module; m >= 0 && !measured; m = c->tree->nodes[m].parent)
        measured = c->measured_root[m];
    return measured ? &ts->mods[module] : NULL;
}

void lp_ev_add_calls(lp_collector *c, int32_t module, uint64_t n) {
    lp_figures *f = package_module(c, module);
    if (f) f->calls += n;
    lp_thread_state *ts = lp_collector_thread(c);
    if (ts && ts->pkg.root_serial) lp_pkg_mem_calls(&ts->pkg, module, n); /* memory per call */
}

void lp_ev_add_flops(lp_collector *c, int32_t module, uint64_t flops) {
    lp_figures *f = c->cfg.flops ? package_module(c, module) : NULL;
    if (f) f->flops_self += flops;
}

void lp_ev_add_out_shape(lp_collector *c, int32_t module, const int64_t *dims, int rank) {
    lp_figures *f = c->cfg.out_shape ? package_module(c, module) : NULL;
    if (f) lp_out_shape_add(&f->out, dims, rank);
}

/* Any thread: the claimed slots are read with acquire loads, so a state is seen whole or not at
 * all; its cells with relaxed atomic loads (model/histo.h). States live until the collector is
 * freed, so no slot goes away under the reader. */
int lp_collector_hist_read(const void *ctx, int32_t module, lp_hist *self, lp_hist *total) {
    const lp_collector *c = ctx;
    memset(self, 0, sizeof *self);
    memset(total, 0, sizeof *total);
    if (!c->cfg.histograms || module < 0 || (size_t)module >= c->tree->n_nodes ||
        c->hist_mode[module] == HIST_NONE)
        return 0;
    uint32_t n = atomic_load_explicit(&((lp_collector *)c)->n_threads, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < LP_MAX_THREADS; i++) {
        const lp_thread_state *ts =
            atomic_load_explicit(&((lp_collector *)c)->threads[i], memory_order_acquire);
        if (!ts || !ts->hist) continue;
        lp_hist_accumulate(self, &ts->hist[module].self);
        lp_hist_accumulate(total, &ts->hist[module].total);
    }
    return 1;
}
