/* collector.h: turns the shim's events into figures in the module tree.
 *
 * Events arrive on the threads that run the model. Each thread gets its own state (a scope stack,
 * per-module accumulators, op rows, live allocations), claimed on its first event, so the hot path
 * takes no lock and, once warm, allocates nothing. lp_collector_finish merges the threads into the
 * tree once, at the end. */
#ifndef LP_COLLECTOR_H
#define LP_COLLECTOR_H

#include <stddef.h>
#include <stdint.h>

#include "collect/event_sink.h"
#include "collect/timeline.h"
#include "model/histo.h"
#include "model/tree.h"

typedef struct lp_collector lp_collector;

/* Called around every measured module call, and every op call that has a row when `scope_ops`
 * is set (CUDA timing, NVTX ranges). `scope` names the node (lp_cuda_scope_*, cuda_join.h);
 * `module` is the module node, or -1 for an op, whose name is then `op_name`. Hot path: on the
 * thread that runs the call, properly nested, no allocation. */
typedef struct lp_scope_hooks {
    void *ctx;
    void (*enter)(void *ctx, uint64_t scope, int32_t module, const char *op_name);
    void (*exit)(void *ctx, uint64_t scope);
} lp_scope_hooks;

typedef struct lp_collector_config {
    int memory;              /* attribute allocations to calls */
    unsigned memory_devices; /* bit per LP_DEV_*: devices whose memory columns exist */
    int ops;                 /* keep op rows (event expansion) */
    const uint8_t *selected; /* per module: 1 = profile it and its subtree; NULL = all */
    int cuda_time;           /* CUDA time per node is recorded (lp_collector_add_cuda) */
    lp_scope_hooks scopes;   /* enter NULL: none */
    int scope_ops;           /* hooks around op calls too (they need `ops`) */
    int trace;               /* keep a timeline while lp_collector_set_tracing is on */
    size_t trace_max_spans;  /* per thread; 0: LP_TRACE_DEFAULT_MAX_SPANS */
    int flops;     /* FLOPs per module (lp_ev_flops) and ops without a formula are recorded */
    int out_shape; /* module calls' output shapes (lp_ev_out_shape) are recorded */
    int shapes;    /* op rows are keyed by (parent, name, shape_key), not (parent, name) */
    /* With `shapes`: the text of the starting op's input shapes ("[1, 3], []"), asked only when a
     * thread sees a (parent, name, shape_key) row for the first time, from inside lp_ev_op_start
     * on the thread that runs the op. Writes like snprintf; returns the length needed, < 0 when
     * unknown. NULL: rows carry no text. */
    int (*describe_shapes)(void *payload, char *buf, size_t size);
    void *describe_payload;
    /* The clock regions are stamped with (module and op events carry their own times); NULL:
     * lp_now_ns. Tests give a fake one. */
    uint64_t (*clock)(void);
    /* Per-call histograms of self and total time per module (model/histo.h), cumulative for the
     * collector's life, down to `hist_depth` (-1: every module): a module at that depth gets its
     * subtree folded in (its self histogram takes its calls' total time), deeper ones get none. */
    int histograms;
    int hist_depth;
} lp_collector_config;

/* The collector adds into `tree`, which must outlive it and keep its shape. */
int lp_collector_create(lp_collector **out, lp_tree *tree, const lp_collector_config *cfg);
void lp_collector_free(lp_collector *c);

/* The shim's sink, each entry one of the lp_ev_* functions below with `c` as its context (sink.c):
 * the shim calls the collector directly. */
void lp_collector_sink(lp_collector *c, lp_event_sink *out);

/* --- events (hot path; any thread) ------------------------------------------------------------
 * call_enter: a TorchScript function frame starts; `module` is the node whose `self` it runs on, or
 * -1 (a free function). A frame on the module already on top is a helper method: it is not a call.
 * op_start: an op starts, in the innermost open module. `shape_key` identifies the op's input
 * shapes (any nonzero hash; 0 when shapes are not recorded).
 * memory: `bytes` > 0 allocates `ptr`, < 0 frees it; `device` is an LP_DEV_* value.
 * call_enter, call_exit and op_start return 1 when op events are wanted on this thread now (ops
 * are kept and the innermost open call is measured), else 0: the caller may then skip the ops
 * that start before the next call_enter/call_exit (and their op_end), which is what makes
 * unselected modules cheap. The answer holds until the next of these three calls on the thread.
 * An op_start skipped must have its op_end skipped too. */
int lp_ev_call_enter(lp_collector *c, int32_t module, uint64_t t_ns);
/* method_enter: a frame of another method than forward (a ModuleList's __len__, RAFT's
 * corr_block.index_pyramid called from RAFT.forward): its time goes to the module, as a call's
 * does, but it is no call: calls count forwards, as eager forward hooks do. Closed by
 * lp_ev_call_exit. */
int lp_ev_method_enter(lp_collector *c, int32_t module, uint64_t t_ns);
int lp_ev_call_exit(lp_collector *c, uint64_t t_ns);
/* The module of the calling thread's innermost open module frame (a call or a method frame), -1
 * when it has none. Frames dropped past LP_MAX_STACK are not looked at: the deepest kept one
 * answers. */
int32_t lp_ev_current_module(lp_collector *c);
int lp_ev_op_start(lp_collector *c, const char *name, uint64_t shape_key, uint64_t t_ns);
void lp_ev_op_end(lp_collector *c, uint64_t t_ns);
void lp_ev_memory(lp_collector *c, const void *ptr, int64_t bytes, int device, uint64_t t_ns);
/* `flops` of an op in the innermost measured module call on this thread (cfg.flops), and an op
 * that has no formula (`name`: the caller's, valid for the collector's life). Hot path. */
void lp_ev_flops(lp_collector *c, uint64_t flops);
void lp_ev_flops_unknown(lp_collector *c, const char *name);
/* `n` calls of `module` that no frame delivers: an AOTInductor package's, whose kernels carry
 * no module boundaries (the calls the export recorded, once per forward; the kernels' time
 * arrives as method frames). Counted when the module is measured; no time, no per-call figures.
 * On the thread that runs the forward, while its root call is open. */
void lp_ev_add_calls(lp_collector *c, int32_t module, uint64_t n);
/* An AOTInductor package's forward, on its thread (cfg.memory; collect/pkg_memory.h): from now
 * on, what the wrapper allocates is `alloc_module`'s and what it frees `free_module`'s (the root's
 * module for the root). The first call of a forward comes right after the root's call_enter. */
void lp_ev_pkg_memory_to(lp_collector *c, int32_t alloc_module, int32_t free_module);
/* The same for what such a package's export worked out: `flops` of `module`'s own ops in this
 * forward (cfg.flops), and the output shape of one of its calls (cfg.out_shape). */
void lp_ev_add_flops(lp_collector *c, int32_t module, uint64_t flops);
void lp_ev_add_out_shape(lp_collector *c, int32_t module, const int64_t *dims, int rank);
/* The output shape of the module call about to exit (the innermost, which must be measured). */
void lp_ev_out_shape(lp_collector *c, const int64_t *dims, int rank);
/* The ops without a formula seen so far (after lp_collector_finish), at most `max` in `names`;
 * returns how many there are in all. */
size_t lp_collector_no_formula(const lp_collector *c, const char **names, size_t max);

/* Any thread, while events arrive on others: module node `module`'s histograms summed over the
 * threads (cfg.histograms), with atomic loads and no lock. Returns 1, or 0 when the module has
 * none (deeper than hist_depth, or histograms off). Matches lp_hist_source.read with `c` as the
 * context. */
int lp_collector_hist_read(const void *c, int32_t module, lp_hist *self, lp_hist *total);

/* --- driving thread ------------------------------------------------------------------------- */
/* Counts one profiled iteration (a forward) into the tree. */
void lp_collector_count_iteration(lp_collector *c);
/* Drops whatever calls are still open (after a forward that threw) so the next forward starts
 * clean. Returns the number of frames dropped. */
int lp_collector_reset_stacks(lp_collector *c);
/* The same for the calling thread's stack alone: what a live forward that threw left open, while
 * other threads' forwards go on. Any thread. */
int lp_collector_reset_calling_thread(lp_collector *c);
/* Merges every thread's figures into the tree (and resets them, so it can be called per run). */
int lp_collector_finish(lp_collector *c);

/* Timeline (cfg.trace): spans and memory samples are recorded while tracing is on. Driving
 * thread, between forwards. Off, it costs the hot path one predictable branch per frame. */
void lp_collector_set_tracing(lp_collector *c, int on);
/* The timeline merged by lp_collector_finish (empty, recorded 0, without cfg.trace). Borrowed. */
lp_timeline *lp_collector_timeline(lp_collector *c);

/* CUDA time: adds `ns` launched directly in `scope` (a scope id the hooks were given) to that
 * node's self CUDA time; an op's time also goes to its module's self. Driving thread, after the
 * iterations and before lp_collector_finish, while no event arrives. Returns 0, or -1 for a scope
 * this collector never handed out. Matches lp_cuda_sink (cuda_join.h) with `c` as the context. */
int lp_collector_add_cuda(void *c, uint64_t scope, uint64_t ns);

/* Diagnostics: events that could not be used (unbalanced exits, stack overflow, threads beyond
 * the limit, allocation failures). The report says so when they are not zero. */
typedef struct lp_collector_stats {
    uint64_t events;
    uint64_t dropped;
    uint64_t unbalanced;
    uint64_t foreign_frees; /* frees of blocks this thread did not see allocated */
    uint32_t pkg_failed;    /* threads whose package memory per module could not be kept */
    uint32_t threads;
} lp_collector_stats;
void lp_collector_get_stats(const lp_collector *c, lp_collector_stats *out);

/* --- regions (lp_session_region_begin): the program's own code segments
 * ---------------------------------- A region is named by (parent region, name); a parent of -1
 * makes a context, the top-level group of regions. Ids are dense from 0 in creation order and never
 * change. At most LP_MAX_REGIONS regions and contexts together. */
#define LP_MAX_REGIONS 512

typedef struct lp_region_entry {
    char *name;          /* owned */
    int32_t parent;      /* -1 for a context */
    int32_t context;     /* the context it belongs to (itself for a context) */
    _Atomic int enabled; /* contexts: lp_session_context_enable */
} lp_region_entry;

/* The id of (parent, name), created on first sight (a lock and an allocation, once); lock-free
 * and allocation-free afterwards. A negative status on failure (too many, out of memory). */
int32_t lp_region_intern(lp_collector *c, int32_t parent, const char *name);
/* The id of (parent, name) if it exists, else -1. Lock-free. */
int32_t lp_region_find(const lp_collector *c, int32_t parent, const char *name);
size_t lp_region_count(const lp_collector *c);
/* NULL for an unknown id. Borrowed; never moves. */
const lp_region_entry *lp_region_get(const lp_collector *c, int32_t id);
/* Every region's path ("main/preprocess"), by region id, in one allocation the caller frees with
 * free(). *paths is NULL when there is no region. LP_OK or LP_ERR_NOMEM. */
int lp_region_paths(const lp_collector *c, char ***paths, size_t *n);
void lp_region_set_enabled(lp_collector *c, int32_t id, int on);
/* The figures merged by lp_collector_finish (zeros before any). Borrowed. */
const lp_figures *lp_region_figures(const lp_collector *c, int32_t id);
/* Zeroes the merged region figures (a schedule's fresh start). Driving thread. */
void lp_collector_clear_regions(lp_collector *c);

/* Calling thread, stamped with lp_now_ns: opens a REGION frame (record 0: a placeholder that keeps
 * begin/end balanced and records nothing, for disabled sessions and contexts). LP_OK or a status
 * with a message. */
int lp_ev_region_begin(lp_collector *c, int32_t region, int record);
/* Calling thread: closes the innermost region, which must be `name` (NULL: any). LP_ERR_STATE
 * with a message when no region is open, a forward is running, or the names differ. */
int lp_ev_region_end(lp_collector *c, const char *name);
/* Calling thread: the innermost open region, or -1. */
int32_t lp_collector_open_region(lp_collector *c);
/* Calling thread: 0 when the innermost open region records nothing (a placeholder), else 1. */
int lp_collector_region_recording(lp_collector *c);

/* Redirects module figures to `tree` (same module structure), for forwards run in another region.
 * Driving thread, right after lp_collector_finish, while no event arrives. */
void lp_collector_set_tree(lp_collector *c, lp_tree *tree);
lp_tree *lp_collector_tree(lp_collector *c);

#endif
