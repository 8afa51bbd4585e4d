/* collector.c: the hot path. See collector.h for the contract.
 *
 * Every open call (module, op, or a helper frame that is not a call) is a frame on the thread's
 * stack. Closing a frame computes its inclusive time and adds it to its node; the time also goes
 * into the enclosing frame's `child_ns`, which is what turns totals into self times without ever
 * counting nested work twice. Memory is attributed the same way: each allocation raises the live
 * bytes of every open call, and remembers which call made it, so a later free lowers exactly the
 * calls that are both still open and enclosing that one. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (clock.h) */
#include "collect/collector.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/ptrmap.h"
#include "collect/cuda_join.h"
#include "layerprof.h"

#define LP_MAX_STACK 512
#define LP_MAX_THREADS 64
#define LP_REGION_INDEX_CAP (LP_MAX_REGIONS * 2) /* open addressing, at most half full */

/* REGION frames are the program's own code segments (lp_region_begin): they sit below every
 * module frame of a forward run inside them, measure themselves, and never make the calls above
 * them measured (path selection still decides that). */
enum { FRAME_MODULE = 0, FRAME_OP = 1, FRAME_PASS = 2, FRAME_REGION = 3 };

typedef struct lp_frame_mem {
    int64_t live, self_live, peak, net;
} lp_frame_mem;

typedef struct lp_frame {
    uint64_t t_start;
    uint64_t child_ns;    /* inclusive time of nested frames that are subtracted for self time */
    uint64_t serial;      /* unique per frame in this thread: orders calls for free attribution */
    int32_t node;         /* module node, or op row (thread-local) */
    int32_t module_frame; /* index of the innermost MODULE frame at or below this one, -1 */
    int32_t region_frame; /* index of the innermost REGION frame at or below this one, -1 */
    uint8_t kind;
    uint8_t inferred; /* graph mode: entry inferred from an op's module */
    uint8_t measured; /* inside a selected subtree */
    lp_frame_mem mem[LP_DEV_COUNT];
    uint64_t scope; /* scope id handed to the scope hooks' enter, 0 when none */
} lp_frame;

/* One op row as a thread sees it: key (parent, name, shape_key), figures. */
typedef struct lp_row {
    int32_t parent_key; /* module node * 2, or op row * 2 + 1 */
    int32_t op;         /* global op name id */
    const char *name;   /* the pointer libtorch gave: the hash key */
    uint64_t shape_key; /* 0 without shapes */
    int32_t shapes;     /* global shape text id, -1 when none */
    lp_figures fig;
} lp_row;

typedef struct lp_thread_state {
    pthread_t owner; /* the thread whose events this state holds */
    lp_frame stack[LP_MAX_STACK];
    int sp;
    uint32_t overflow; /* frames not pushed because the stack was full */
    uint64_t next_serial;
    uint64_t last_op_end; /* end of the last top-level op (graph mode exits) */
    lp_figures *mods;     /* per module node */
    lp_figures *regs;     /* per region id (LP_MAX_REGIONS), made by the thread's first region */
    lp_row *rows;
    size_t n_rows, cap_rows;
    int32_t *row_index; /* open addressing: row + 1, 0 empty */
    size_t index_cap;
    lp_ptrmap live;
    uint64_t events, dropped, unbalanced, foreign_frees;
    uint32_t slot;     /* index in lp_collector.threads: op scope ids carry it */
    lp_span_buf trace; /* timeline spans and memory samples (cfg.trace) */
} lp_thread_state;

struct lp_collector {
    lp_tree *tree;
    lp_collector_config cfg;
    uint8_t *measured_root; /* per module: selected (copied) */
    uint64_t generation;
    _Atomic uint32_t n_threads;
    /* A slot is claimed (n_threads) before its state is published here: readers of a claimed
     * slot may still see NULL, and see a published state whole (release/acquire). */
    lp_thread_state *_Atomic threads[LP_MAX_THREADS];
    _Atomic uint64_t lost_threads;
    pthread_mutex_t names_lock; /* op names are added on first sight only, never in steady state */
    char **names;
    const char **name_ptrs;
    size_t n_names, cap_names;
    char **shape_texts; /* under names_lock too: added when a thread first sees a shape key */
    size_t n_shapes, cap_shapes;
    _Atomic int tracing;  /* cfg.trace and inside the iterations asked for */
    lp_timeline timeline; /* merged by lp_collector_finish */
    /* Regions and contexts. Entries are written once, under names_lock, and published through
     * the index with a release store, so lookups in steady state take no lock. */
    lp_region_entry *regions;      /* LP_MAX_REGIONS */
    _Atomic int32_t *region_index; /* LP_REGION_INDEX_CAP: id + 1, 0 empty */
    _Atomic uint32_t n_regions;
    lp_figures *region_figs; /* merged by lp_collector_finish; NULL until a region closed */
    uint64_t (*clock)(void); /* regions' timestamps: cfg.clock or lp_now_ns */
};

static uint64_t default_clock(void) {
    return lp_now_ns();
}

static _Atomic uint64_t lp_generation_counter = 1;
static _Thread_local uint64_t tls_generation;
static _Thread_local lp_thread_state *tls_state;

/* ---- thread states --------------------------------------------------------------------------- */

static lp_thread_state *thread_state_new(const lp_collector *c) {
    lp_thread_state *ts = calloc(1, sizeof *ts);
    if (!ts) return NULL;
    ts->mods = calloc(c->tree->n_nodes ? c->tree->n_nodes : 1, sizeof *ts->mods);
    if (!ts->mods || (c->cfg.memory && lp_ptrmap_init(&ts->live, 1024))) {
        free(ts->mods);
        free(ts);
        return NULL;
    }
    return ts;
}

static void thread_state_free(lp_thread_state *ts) {
    if (!ts) return;
    free(ts->mods);
    free(ts->regs);
    free(ts->rows);
    free(ts->row_index);
    lp_ptrmap_free(&ts->live);
    lp_span_buf_free(&ts->trace);
    free(ts);
}

/* The calling thread's state: one compare in steady state; a claim on a thread's first event. */
static inline lp_thread_state *state_of(lp_collector *c) {
    if (__builtin_expect(tls_generation == c->generation, 1)) return tls_state;
    /* A thread that alternates between collectors (two sessions) comes back to its own state
     * instead of claiming a new slot at every switch. */
    pthread_t self = pthread_self();
    uint32_t claimed = atomic_load(&c->n_threads);
    for (uint32_t i = 0; i < claimed && i < LP_MAX_THREADS; i++) {
        lp_thread_state *mine = atomic_load_explicit(&c->threads[i], memory_order_acquire);
        if (mine && pthread_equal(mine->owner, self)) {
            tls_generation = c->generation;
            tls_state = mine;
            return mine;
        }
    }
    uint32_t slot = atomic_fetch_add(&c->n_threads, 1);
    if (slot >= LP_MAX_THREADS) {
        atomic_fetch_sub(&c->n_threads, 1);
        atomic_fetch_add(&c->lost_threads, 1);
        return NULL;
    }
    lp_thread_state *ts = thread_state_new(c);
    if (ts) {
        ts->slot = slot;
        ts->owner = self;
    }
    /* May be NULL on allocation failure: events are then dropped. */
    atomic_store_explicit(&c->threads[slot], ts, memory_order_release);
    tls_generation = c->generation;
    tls_state = ts;
    return ts;
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
    c->regions = calloc(LP_MAX_REGIONS, sizeof *c->regions);
    c->region_index = calloc(LP_REGION_INDEX_CAP, sizeof *c->region_index);
    if (!c->measured_root || !c->regions || !c->region_index) {
        free(c->measured_root);
        free(c->regions);
        free(c->region_index);
        free(c);
        return lp_error_set(LP_ERR_NOMEM, "out of memory creating the collector");
    }
    for (size_t i = 0; i < tree->n_nodes; i++)
        c->measured_root[i] = cfg->selected ? cfg->selected[i] : 1;
    c->cfg.selected = NULL; /* borrowed: use the copy */
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
        thread_state_free(c->threads[i]);
    for (size_t i = 0; i < c->n_names; i++)
        free(c->names[i]);
    free(c->names);
    free(c->name_ptrs);
    for (size_t i = 0; i < c->n_shapes; i++)
        free(c->shape_texts[i]);
    free(c->shape_texts);
    free(c->measured_root);
    for (uint32_t i = 0; i < atomic_load(&c->n_regions); i++)
        free(c->regions[i].name);
    free(c->regions);
    free(c->region_index);
    free(c->region_figs);
    lp_timeline_free(&c->timeline);
    pthread_mutex_destroy(&c->names_lock);
    free(c);
}

/* ---- frames ---------------------------------------------------------------------------------- */

static inline lp_frame *push(lp_thread_state *ts, int kind, int32_t node, uint64_t t,
                             int measured) {
    if (ts->sp == LP_MAX_STACK || ts->overflow) {
        ts->overflow++;
        ts->dropped++;
        return NULL;
    }
    lp_frame *f = &ts->stack[ts->sp];
    int below_module = ts->sp ? ts->stack[ts->sp - 1].module_frame : -1;
    f->t_start = t;
    f->child_ns = 0;
    f->serial = ++ts->next_serial;
    f->node = node;
    f->kind = (uint8_t)kind;
    f->inferred = 0;
    f->measured = (uint8_t)measured;
    f->module_frame = kind == FRAME_MODULE ? ts->sp : below_module;
    f->region_frame = kind == FRAME_REGION ? ts->sp
                      : ts->sp             ? ts->stack[ts->sp - 1].region_frame
                                           : -1;
    memset(f->mem, 0, sizeof f->mem);
    f->scope = 0;
    ts->sp++;
    return f;
}

/* Scope hooks (CUDA timing, NVTX) around a frame just pushed: measured modules, and op rows when
 * asked. The frame remembers its id so pop() closes exactly what was opened. */
static inline void scope_enter(lp_collector *c, const lp_thread_state *ts, lp_frame *f,
                               const char *op_name) {
    if (!f || !c->cfg.scopes.enter || !f->measured) return;
    if (f->kind == FRAME_MODULE) {
        f->scope = lp_cuda_scope_module(f->node);
        c->cfg.scopes.enter(c->cfg.scopes.ctx, f->scope, f->node, NULL);
    } else if (f->kind == FRAME_OP && c->cfg.scope_ops && f->node >= 0) {
        f->scope = lp_cuda_scope_op(ts->slot, f->node);
        c->cfg.scopes.enter(c->cfg.scopes.ctx, f->scope, -1, op_name);
    }
}

/* Whether a call opened now inherits being measured: a region measures only itself. */
static inline int top_measured(const lp_thread_state *ts) {
    return ts->sp ? ts->stack[ts->sp - 1].measured && ts->stack[ts->sp - 1].kind != FRAME_REGION
                  : 0;
}

static inline int32_t top_module_node(const lp_thread_state *ts) {
    if (!ts->sp) return -1;
    int mf = ts->stack[ts->sp - 1].module_frame;
    return mf >= 0 ? ts->stack[mf].node : -1;
}

static void record_memory(lp_collector *c, lp_figures *fig, const lp_frame *f) {
    for (int d = 0; d < LP_DEV_COUNT; d++) {
        if (!(c->cfg.memory_devices & (1u << d))) continue;
        lp_stat_add(&fig->mem[d].retained, f->mem[d].live);
        lp_stat_add(&fig->mem[d].self_retained, f->mem[d].self_live);
        lp_stat_add(&fig->mem[d].peak, f->mem[d].peak);
        lp_stat_add(&fig->mem[d].net, f->mem[d].net);
    }
}

/* Timeline: the closing frame as a span when it is a measured module call or op row. */
static void trace_span(const lp_collector *c, lp_thread_state *ts, const lp_frame *f, uint64_t t) {
    if (!f->measured) return;
    if (f->kind == FRAME_MODULE)
        lp_span_buf_add_span(&ts->trace, c->cfg.trace_max_spans, LP_SPAN_MODULE, f->node, ts->sp,
                             f->t_start, t);
    else if (f->kind == FRAME_OP && f->node >= 0)
        lp_span_buf_add_span(&ts->trace, c->cfg.trace_max_spans, LP_SPAN_OP, ts->rows[f->node].op,
                             ts->sp, f->t_start, t);
    else if (f->kind == FRAME_REGION)
        lp_span_buf_add_span(&ts->trace, c->cfg.trace_max_spans, LP_SPAN_REGION, f->node, ts->sp,
                             f->t_start, t);
}

/* A closed call's figures: count, times (self = total minus what nested calls took), memory. */
static void record_call(lp_collector *c, lp_figures *fig, const lp_frame *f, uint64_t total) {
    fig->calls++;
    fig->total_ns += total;
    fig->self_ns += total > f->child_ns ? total - f->child_ns : 0;
    lp_welford_add(&fig->time, total);
    if (c->cfg.memory) record_memory(c, fig, f);
}

/* Closes the top frame at time t and adds its figures to its node. */
static void pop(lp_collector *c, lp_thread_state *ts, uint64_t t) {
    lp_frame *f = &ts->stack[--ts->sp];
    if (__builtin_expect(atomic_load_explicit(&c->tracing, memory_order_relaxed), 0))
        trace_span(c, ts, f, t);
    if (f->scope) c->cfg.scopes.exit(c->cfg.scopes.ctx, f->scope);
    uint64_t total = t > f->t_start ? t - f->t_start : 0;
    lp_frame *below = ts->sp ? &ts->stack[ts->sp - 1] : NULL;
    if (f->kind == FRAME_MODULE) {
        if (f->measured) record_call(c, &ts->mods[f->node], f, total);
        /* The enclosing module's self time excludes this call; a forward's root call is a child
         * of the region it ran in. */
        if (below && below->module_frame >= 0)
            ts->stack[below->module_frame].child_ns += total;
        else if (f->region_frame >= 0)
            ts->stack[f->region_frame].child_ns += total;
    } else if (f->kind == FRAME_REGION) {
        if (f->measured) record_call(c, &ts->regs[f->node], f, total);
        if (below && below->region_frame >= 0) ts->stack[below->region_frame].child_ns += total;
    } else if (f->kind == FRAME_OP) {
        if (f->measured && f->node >= 0) record_call(c, &ts->rows[f->node].fig, f, total);
        if (below && below->kind == FRAME_OP)
            below->child_ns += total;
        else
            ts->last_op_end = t;
    }
}

/* Graph mode: closes inferred module frames on top (they end where their last op ended). */
static void close_inferred(lp_collector *c, lp_thread_state *ts) {
    while (ts->sp && ts->stack[ts->sp - 1].inferred)
        pop(c, ts, ts->last_op_end);
}

static int is_ancestor_or_self(const lp_tree *t, int32_t a, int32_t m) {
    int32_t da = t->nodes[a].depth;
    while (m >= 0 && t->nodes[m].depth > da)
        m = t->nodes[m].parent;
    return m == a;
}

/* Graph mode: makes `module` the innermost open module, closing and opening inferred frames. */
static void move_to_module(lp_collector *c, lp_thread_state *ts, int32_t module, uint64_t t) {
    const lp_tree *tree = c->tree;
    for (;;) {
        int32_t top = top_module_node(ts);
        if (top == module) return;
        lp_frame *f = ts->sp ? &ts->stack[ts->sp - 1] : NULL;
        if (top >= 0 && is_ancestor_or_self(tree, top, module)) break;
        if (!f || !f->inferred) break; /* a real frame: only open below it */
        pop(c, ts, ts->last_op_end);
    }
    /* Open the chain from below `module` up to the innermost open ancestor, outermost first. */
    int32_t top = top_module_node(ts);
    int32_t chain[LP_MAX_STACK];
    int n = 0;
    for (int32_t m = module; m >= 0 && m != top && n < LP_MAX_STACK; m = tree->nodes[m].parent)
        if (!tree->nodes[m].container || m == module)
            chain[n++] = m; /* containers are never called */
    if (top >= 0 && !is_ancestor_or_self(tree, top, module)) n = 1; /* unrelated: open it alone */
    for (int i = n - 1; i >= 0; i--) {
        int measured = c->measured_root[chain[i]] || top_measured(ts);
        lp_frame *f = push(ts, FRAME_MODULE, chain[i], t, measured);
        if (f) f->inferred = 1;
        scope_enter(c, ts, f, NULL);
    }
}

/* ---- events ---------------------------------------------------------------------------------- */

/* The events' answer (collector.h): op events are wanted when rows are kept and the innermost
 * open call is measured. Outside every call (sp 0) nothing is measured. */
static inline int ops_wanted(const lp_collector *c, const lp_thread_state *ts) {
    return c->cfg.ops && top_measured(ts);
}

int lp_ev_call_enter(lp_collector *c, int32_t module, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return 0;
    ts->events++;
    if (module < 0 || (size_t)module >= c->tree->n_nodes || module == top_module_node(ts)) {
        push(ts, FRAME_PASS, -1, t, top_measured(ts));
        return ops_wanted(c, ts);
    }
    close_inferred(c, ts);
    lp_frame *f = push(ts, FRAME_MODULE, module, t, c->measured_root[module] || top_measured(ts));
    scope_enter(c, ts, f, NULL);
    return ops_wanted(c, ts);
}

int lp_ev_call_exit(lp_collector *c, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return 0;
    ts->events++;
    if (ts->overflow) {
        ts->overflow--;
        return ops_wanted(c, ts);
    }
    close_inferred(c, ts);
    if (!ts->sp || ts->stack[ts->sp - 1].kind == FRAME_OP) {
        ts->unbalanced++;
        return ops_wanted(c, ts);
    }
    pop(c, ts, t);
    return ops_wanted(c, ts);
}

static uint64_t hash_row_key(int32_t parent_key, const char *name, uint64_t shape_key) {
    uint64_t h = (uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)parent_key * 0xC2B2AE3D27D4EB4Full;
    return h ^ (shape_key ^ (shape_key >> 29)) * 0xBF58476D1CE4E5B9ull;
}

/* Global id of an op name, interned by text on its first sight in any thread. */
static int32_t intern_name(lp_collector *c, const char *name) {
    int32_t id = -1;
    pthread_mutex_lock(&c->names_lock);
    for (size_t i = 0; i < c->n_names; i++)
        if (c->name_ptrs[i] == name || strcmp(c->names[i], name) == 0) {
            id = (int32_t)i;
            break;
        }
    if (id < 0 && c->n_names == c->cap_names) {
        size_t cap = c->cap_names ? c->cap_names * 2 : 64;
        char **n = realloc(c->names, cap * sizeof *n);
        if (n) c->names = n;
        const char **p = realloc(c->name_ptrs, cap * sizeof *p);
        if (p) c->name_ptrs = p;
        if (n && p) c->cap_names = cap;
    }
    if (id < 0 && c->n_names < c->cap_names) {
        size_t len = strlen(name) + 1;
        char *copy = malloc(len);
        if (copy) {
            memcpy(copy, name, len);
            c->names[c->n_names] = copy;
            c->name_ptrs[c->n_names] = name;
            id = (int32_t)c->n_names++;
        }
    }
    pthread_mutex_unlock(&c->names_lock);
    return id;
}

/* Global id of the starting op's input-shape text, from the describer, interned by text. Runs
 * when a thread creates a row, never in steady state. -1 when there is no text. */
static int32_t intern_shapes(lp_collector *c) {
    if (!c->cfg.describe_shapes) return -1;
    char small[512];
    char *text = small;
    int n = c->cfg.describe_shapes(c->cfg.describe_payload, small, sizeof small);
    if (n < 0) return -1;
    if ((size_t)n >= sizeof small) { /* a long signature (a cat of many tensors) */
        text = malloc((size_t)n + 1);
        if (!text) return -1;
        int m = c->cfg.describe_shapes(c->cfg.describe_payload, text, (size_t)n + 1);
        if (m < 0 || m > n) {
            free(text);
            return -1;
        }
    }
    int32_t id = -1;
    pthread_mutex_lock(&c->names_lock);
    for (size_t i = 0; i < c->n_shapes; i++)
        if (strcmp(c->shape_texts[i], text) == 0) {
            id = (int32_t)i;
            break;
        }
    if (id < 0 && c->n_shapes == c->cap_shapes) {
        size_t cap = c->cap_shapes ? c->cap_shapes * 2 : 64;
        char **p = realloc(c->shape_texts, cap * sizeof *p);
        if (p) {
            c->shape_texts = p;
            c->cap_shapes = cap;
        }
    }
    if (id < 0 && c->n_shapes < c->cap_shapes) {
        char *copy = text;
        if (text == small) {
            size_t len = strlen(small) + 1;
            copy = malloc(len);
            if (copy) memcpy(copy, small, len);
        }
        if (copy) {
            c->shape_texts[c->n_shapes] = copy;
            id = (int32_t)c->n_shapes++;
            text = small; /* the table owns it now */
        }
    }
    pthread_mutex_unlock(&c->names_lock);
    if (text != small) free(text);
    return id;
}

static int rows_rehash(lp_thread_state *ts, size_t cap) {
    int32_t *idx = calloc(cap, sizeof *idx);
    if (!idx) return -1;
    for (size_t r = 0; r < ts->n_rows; r++) {
        const lp_row *row = &ts->rows[r];
        size_t i = hash_row_key(row->parent_key, row->name, row->shape_key) & (cap - 1);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = (int32_t)r + 1;
    }
    free(ts->row_index);
    ts->row_index = idx;
    ts->index_cap = cap;
    return 0;
}

/* The row for (parent, name, shape_key) in this thread: a probe in steady state, creation (and
 * the shape text, when shapes are kept) on first sight. */
static int32_t find_row(lp_collector *c, lp_thread_state *ts, int32_t parent_key, const char *name,
                        uint64_t shape_key) {
    uint64_t h = hash_row_key(parent_key, name, shape_key);
    if (ts->index_cap) {
        size_t mask = ts->index_cap - 1;
        for (size_t i = h & mask; ts->row_index[i]; i = (i + 1) & mask) {
            lp_row *r = &ts->rows[ts->row_index[i] - 1];
            if (r->name == name && r->parent_key == parent_key && r->shape_key == shape_key)
                return ts->row_index[i] - 1;
        }
    }
    if ((ts->n_rows + 1) * 2 > ts->index_cap &&
        rows_rehash(ts, ts->index_cap ? ts->index_cap * 2 : 256))
        return -1;
    if (ts->n_rows == ts->cap_rows) {
        size_t cap = ts->cap_rows ? ts->cap_rows * 2 : 128;
        lp_row *rows = realloc(ts->rows, cap * sizeof *rows);
        if (!rows) return -1;
        ts->rows = rows;
        ts->cap_rows = cap;
    }
    int32_t op = intern_name(c, name);
    if (op < 0) return -1;
    int32_t r = (int32_t)ts->n_rows++;
    memset(&ts->rows[r], 0, sizeof ts->rows[r]);
    ts->rows[r].parent_key = parent_key;
    ts->rows[r].op = op;
    ts->rows[r].name = name;
    ts->rows[r].shape_key = shape_key;
    ts->rows[r].shapes = c->cfg.shapes ? intern_shapes(c) : -1;
    size_t mask = ts->index_cap - 1;
    size_t i = h & mask;
    while (ts->row_index[i])
        i = (i + 1) & mask;
    ts->row_index[i] = r + 1;
    return r;
}

int lp_ev_op_start(lp_collector *c, const char *name, int32_t module, uint64_t shape_key,
                   uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return 0;
    ts->events++;
    if (module >= 0 && (size_t)module < c->tree->n_nodes) move_to_module(c, ts, module, t);
    int measured = top_measured(ts);
    int32_t row = -1;
    /* A frame the full stack will drop gets no row (it would stay in the report with no calls). */
    if (measured && c->cfg.ops && ts->sp && ts->sp < LP_MAX_STACK && !ts->overflow) {
        const lp_frame *top = &ts->stack[ts->sp - 1];
        int32_t parent_key = -1;
        if (top->kind == FRAME_OP)
            parent_key = top->node >= 0 ? top->node * 2 + 1 : -1;
        else if (top->module_frame >= 0)
            parent_key = ts->stack[top->module_frame].node * 2;
        if (parent_key >= 0) row = find_row(c, ts, parent_key, name, shape_key);
        if (row < 0) ts->dropped++;
    }
    lp_frame *f = push(ts, FRAME_OP, row, t, measured);
    scope_enter(c, ts, f, name);
    return ops_wanted(c, ts);
}

void lp_ev_op_end(lp_collector *c, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return;
    ts->events++;
    if (ts->overflow) {
        ts->overflow--;
        return;
    }
    if (!ts->sp || ts->stack[ts->sp - 1].kind != FRAME_OP) {
        ts->unbalanced++;
        return;
    }
    pop(c, ts, t);
}

/* Lowers the live bytes of the calls that enclose (or are) the allocating call and are still open.
 */
static void release_block(lp_thread_state *ts, const lp_alloc_rec *rec) {
    int d = rec->device;
    for (int i = ts->sp - 1; i >= 0; i--) {
        lp_frame *f = &ts->stack[i];
        if (f->serial > rec->owner_serial)
            continue; /* opened after the allocation: not its owner */
        f->mem[d].live -= rec->bytes;
    }
    if (rec->owner_depth < ts->sp && ts->stack[rec->owner_depth].serial == rec->owner_serial)
        ts->stack[rec->owner_depth].mem[d].self_live -= rec->bytes;
    if (rec->module_depth >= 0 && rec->module_depth != rec->owner_depth &&
        rec->module_depth < ts->sp && ts->stack[rec->module_depth].serial == rec->module_serial)
        ts->stack[rec->module_depth].mem[d].self_live -= rec->bytes;
}

void lp_ev_memory(lp_collector *c, const void *ptr, int64_t bytes, int device, uint64_t t) {
    (void)t;
    lp_thread_state *ts = state_of(c);
    if (!ts || !c->cfg.memory || device < 0 || device >= LP_DEV_COUNT || bytes == 0) return;
    ts->events++;
    if (__builtin_expect(atomic_load_explicit(&c->tracing, memory_order_relaxed), 0))
        lp_span_buf_add_mem(&ts->trace, c->cfg.trace_max_spans, t, bytes, device);
    if (!ts->sp || !ts->stack[ts->sp - 1].measured) {
        /* Outside any measured call: a block freed here may still be one we saw allocated, but
         * allocations are not looked at, and nor are frees while no measured block is alive. */
        lp_alloc_rec rec;
        if (bytes < 0 && ts->live.count && lp_ptrmap_take(&ts->live, (uintptr_t)ptr, &rec))
            release_block(ts, &rec);
        return;
    }
    if (bytes > 0) {
        int top = ts->sp - 1;
        lp_frame *owner = &ts->stack[top];
        int mf = owner->module_frame;
        for (int i = 0; i <= top; i++) {
            lp_frame_mem *m = &ts->stack[i].mem[device];
            m->live += bytes;
            m->net += bytes;
            if (m->live > m->peak) m->peak = m->live;
        }
        owner->mem[device].self_live += bytes;
        if (mf >= 0 && mf != top) ts->stack[mf].mem[device].self_live += bytes;
        lp_alloc_rec rec = {
            (uintptr_t)ptr, bytes, owner->serial, mf >= 0 ? ts->stack[mf].serial : 0, top, mf,
            device};
        if (lp_ptrmap_put(&ts->live, &rec)) ts->dropped++;
    } else {
        for (int i = 0; i < ts->sp; i++)
            ts->stack[i].mem[device].net += bytes;
        lp_alloc_rec rec;
        if (lp_ptrmap_take(&ts->live, (uintptr_t)ptr, &rec))
            release_block(ts, &rec);
        else
            ts->foreign_frees++;
    }
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
        /* Regions are the program's, opened between forwards: they sit at the bottom and stay. */
        int keep = 0;
        while (keep < ts->sp && ts->stack[keep].kind == FRAME_REGION)
            keep++;
        dropped += ts->sp - keep;
        /* Scopes are per thread (CUPTI's and NVTX's stacks): only this thread's can be closed. */
        if (ts == tls_state && tls_generation == c->generation)
            for (int k = ts->sp - 1; k >= keep; k--)
                if (ts->stack[k].scope) c->cfg.scopes.exit(c->cfg.scopes.ctx, ts->stack[k].scope);
        ts->sp = keep;
        ts->overflow = 0;
        if (c->cfg.memory) lp_ptrmap_clear(&ts->live);
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

static int merge_rows(lp_collector *c, lp_thread_state *ts) {
    if (!ts->n_rows) return LP_OK;
    lp_tree *t = c->tree;
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
        lp_figures_merge(&t->ops[tr].fig, &row->fig);
        memset(&ts->rows[r].fig, 0, sizeof ts->rows[r].fig);
    }
    free(map);
    return LP_OK;
}

static int merge_regions(lp_collector *c, lp_thread_state *ts) {
    uint32_t n = atomic_load(&c->n_regions);
    if (!ts->regs || !n) return LP_OK;
    if (!c->region_figs && !(c->region_figs = calloc(LP_MAX_REGIONS, sizeof *c->region_figs)))
        return lp_error_set(LP_ERR_NOMEM, "out of memory merging regions");
    for (uint32_t r = 0; r < n; r++) {
        lp_figures_merge(&c->region_figs[r], &ts->regs[r]);
        memset(&ts->regs[r], 0, sizeof ts->regs[r]);
    }
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
        for (size_t m = 0; m < t->n_nodes; m++) {
            lp_figures_merge(&t->nodes[m].fig, &ts->mods[m]);
            memset(&ts->mods[m], 0, sizeof ts->mods[m]);
        }
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
    for (size_t m = 0; m < t->n_nodes; m++)
        t->nodes[m].selected = 0;
    /* A node is measured when it or an ancestor was selected (pre-order: parents come first). */
    for (size_t m = 0; m < t->n_nodes; m++) {
        int32_t p = t->nodes[m].parent;
        t->nodes[m].selected = c->measured_root[m] || (p >= 0 && t->nodes[p].selected);
    }
    if (t->has_cuda_time) lp_cuda_tree_totals(t);
    return LP_OK;
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
    }
    out->threads = n;
    out->dropped += atomic_load(&c->lost_threads);
}

/* ---- regions --------------------------------------------------------------------------------- */

static uint64_t region_hash(int32_t parent, const char *name) {
    uint64_t h =
        0xcbf29ce484222325ull; /* FNV-1a over the text: a name may sit in a reused buffer */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h ^ (uint64_t)(uint32_t)(parent + 1) * 0x9E3779B97F4A7C15ull;
}

/* The region with this (parent, name), or -1; lock-free: entries are complete before published. */
static int32_t region_lookup(const lp_collector *c, int32_t parent, const char *name, uint64_t h) {
    for (size_t i = h & (LP_REGION_INDEX_CAP - 1);; i = (i + 1) & (LP_REGION_INDEX_CAP - 1)) {
        int32_t e = atomic_load_explicit(&c->region_index[i], memory_order_acquire);
        if (!e) return -1;
        const lp_region_entry *r = &c->regions[e - 1];
        if (r->parent == parent && strcmp(r->name, name) == 0) return e - 1;
    }
}

int32_t lp_region_find(const lp_collector *c, int32_t parent, const char *name) {
    if (!c || !name) return -1;
    return region_lookup(c, parent, name, region_hash(parent, name));
}

int32_t lp_region_intern(lp_collector *c, int32_t parent, const char *name) {
    if (!c || !name || parent >= (int32_t)atomic_load(&c->n_regions) || parent < -1)
        return lp_error_set(LP_ERR_INVALID, "lp_region_intern: bad argument");
    uint64_t h = region_hash(parent, name);
    int32_t id = region_lookup(c, parent, name, h);
    if (id >= 0) return id;
    pthread_mutex_lock(&c->names_lock);
    id = region_lookup(c, parent, name, h); /* another thread may have added it meanwhile */
    uint32_t n = atomic_load(&c->n_regions);
    if (id < 0 && n == LP_MAX_REGIONS)
        id = lp_error_set(LP_ERR_UNSUPPORTED, "too many regions and contexts (at most %d)",
                          LP_MAX_REGIONS);
    if (id == -1) {
        size_t len = strlen(name) + 1;
        char *copy = malloc(len);
        if (!copy) {
            id = lp_error_set(LP_ERR_NOMEM, "out of memory adding region '%s'", name);
        } else {
            memcpy(copy, name, len);
            lp_region_entry *r = &c->regions[n];
            r->name = copy;
            r->parent = parent;
            r->context = parent < 0 ? (int32_t)n : c->regions[parent].context;
            atomic_store(&r->enabled, 1);
            size_t i = h & (LP_REGION_INDEX_CAP - 1);
            while (atomic_load(&c->region_index[i]))
                i = (i + 1) & (LP_REGION_INDEX_CAP - 1);
            atomic_store(&c->n_regions, n + 1);
            atomic_store_explicit(&c->region_index[i], (int32_t)n + 1, memory_order_release);
            id = (int32_t)n;
        }
    }
    pthread_mutex_unlock(&c->names_lock);
    return id;
}

size_t lp_region_count(const lp_collector *c) {
    return atomic_load(&((lp_collector *)c)->n_regions);
}

const lp_region_entry *lp_region_get(const lp_collector *c, int32_t id) {
    return id >= 0 && (size_t)id < lp_region_count(c) ? &c->regions[id] : NULL;
}

const lp_figures *lp_region_figures(const lp_collector *c, int32_t id) {
    static const lp_figures none;
    return c->region_figs && lp_region_get(c, id) ? &c->region_figs[id] : &none;
}

void lp_region_set_enabled(lp_collector *c, int32_t id, int on) {
    if (lp_region_get(c, id)) atomic_store(&c->regions[id].enabled, on != 0);
}

int32_t lp_collector_open_region(lp_collector *c) {
    lp_thread_state *ts = state_of(c);
    if (!ts || !ts->sp) return -1;
    int rf = ts->stack[ts->sp - 1].region_frame;
    return rf >= 0 ? ts->stack[rf].node : -1;
}

int lp_collector_region_recording(lp_collector *c) {
    lp_thread_state *ts = state_of(c);
    if (!ts || !ts->sp) return 1;
    int rf = ts->stack[ts->sp - 1].region_frame;
    return rf < 0 || ts->stack[rf].measured;
}

int lp_ev_region_begin(lp_collector *c, int32_t region, int record) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return lp_error_set(LP_ERR_UNSUPPORTED, "more than %d threads", LP_MAX_THREADS);
    if (!lp_region_get(c, region)) return lp_error_set(LP_ERR_INVALID, "no region %d", region);
    if (ts->sp == LP_MAX_STACK || ts->overflow)
        return lp_error_set(LP_ERR_STATE, "regions nested more than %d deep", LP_MAX_STACK);
    if (record && !ts->regs && !(ts->regs = calloc(LP_MAX_REGIONS, sizeof *ts->regs)))
        return lp_error_set(LP_ERR_NOMEM, "out of memory opening a region");
    /* A placeholder reads no clock: that is most of what a disabled region would cost. */
    push(ts, FRAME_REGION, region, record ? c->clock() : 0, record && ts->regs);
    return LP_OK;
}

int lp_ev_region_end(lp_collector *c, const char *name) {
    lp_thread_state *ts = state_of(c);
    const lp_frame *top = ts && ts->sp ? &ts->stack[ts->sp - 1] : NULL;
    if (!top || top->region_frame < 0)
        return lp_error_set(LP_ERR_STATE, "lp_region_end('%s'): no region is open on this thread",
                            name ? name : "(innermost)");
    if (top->kind != FRAME_REGION)
        return lp_error_set(LP_ERR_STATE,
                            "lp_region_end: a forward is still running on this thread");
    const char *open = c->regions[top->node].name;
    if (name && strcmp(name, open) != 0)
        return lp_error_set(LP_ERR_STATE,
                            "lp_region_end('%s'): the innermost open region is '%s': end it first",
                            name, open);
    pop(c, ts, top->measured ? c->clock() : 0);
    return LP_OK;
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

void lp_collector_clear_regions(lp_collector *c) {
    if (c->region_figs) memset(c->region_figs, 0, LP_MAX_REGIONS * sizeof *c->region_figs);
}
