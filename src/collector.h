/* collector.h: turns the shim's events into figures in the module tree.
 *
 * Events arrive on the threads that run the model. Each thread gets its own state (a scope stack,
 * per-module accumulators, op rows, live allocations), claimed on its first event, so the hot path
 * takes no lock and, once warm, allocates nothing. lp_collector_finish merges the threads into the
 * tree once, at the end. */
#ifndef LP_COLLECTOR_H
#define LP_COLLECTOR_H

#include <stdint.h>

#include "tree.h"

typedef struct lp_collector lp_collector;

typedef struct lp_collector_config {
    int memory;              /* attribute allocations to calls */
    unsigned memory_devices; /* bit per LP_DEV_*: devices whose memory columns exist */
    int ops;                 /* keep op rows (event expansion) */
    const uint8_t *selected; /* per module: 1 = profile it and its subtree; NULL = all */
} lp_collector_config;

/* The collector adds into `tree`, which must outlive it and keep its shape. */
int lp_collector_create(lp_collector **out, lp_tree *tree, const lp_collector_config *cfg);
void lp_collector_free(lp_collector *c);

/* --- events (hot path; any thread) ------------------------------------------------------------
 * call_enter: a TorchScript function frame starts; `module` is the node whose `self` it runs on, or
 * -1 (a free function). A frame on the module already on top is a helper method: it is not a call.
 * op_start: an op starts; `module` is the node it belongs to when the caller knows it (graph mode,
 * top-level ops), else -1 (it belongs to the innermost open module).
 * memory: `bytes` > 0 allocates `ptr`, < 0 frees it; `device` is an LP_DEV_* value. */
void lp_ev_call_enter(lp_collector *c, int32_t module, uint64_t t_ns);
void lp_ev_call_exit(lp_collector *c, uint64_t t_ns);
void lp_ev_op_start(lp_collector *c, const char *name, int32_t module, uint64_t t_ns);
void lp_ev_op_end(lp_collector *c, uint64_t t_ns);
void lp_ev_memory(lp_collector *c, const void *ptr, int64_t bytes, int device, uint64_t t_ns);

/* --- driving thread ------------------------------------------------------------------------- */
/* Counts one profiled iteration (a forward) into the tree. */
void lp_collector_count_iteration(lp_collector *c);
/* Drops whatever calls are still open (after a forward that threw) so the next forward starts
 * clean. Returns the number of frames dropped. */
int lp_collector_reset_stacks(lp_collector *c);
/* Merges every thread's figures into the tree (and resets them, so it can be called per run). */
int lp_collector_finish(lp_collector *c);

/* Diagnostics: events that could not be used (unbalanced exits, stack overflow, threads beyond
 * the limit, allocation failures). The report says so when they are not zero. */
typedef struct lp_collector_stats {
    uint64_t events;
    uint64_t dropped;
    uint64_t unbalanced;
    uint64_t foreign_frees; /* frees of blocks this thread did not see allocated */
    uint32_t threads;
} lp_collector_stats;
void lp_collector_get_stats(const lp_collector *c, lp_collector_stats *out);

#endif
