/* collector_internal.h: the collector's state, shared by its files (collect/collector*.c,
 * collect/regions.c) and by nothing else. See collector.h for the contract.
 *
 *   collector.c         the hot path: a thread's state, frames, module/op/memory events
 *   collector_names.c   the op name and shape text tables, added to when a row is created
 *   collector_driver.c  the driving thread: create/free, merging the threads into the tree, CUDA
 *                       time, stats
 *   regions.c           the region table and region events */
#ifndef LP_COLLECTOR_INTERNAL_H
#define LP_COLLECTOR_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "base/ptrmap.h"
#include "collect/collector.h"
#include "collect/pkg_memory.h"
#include "collect/timeline.h"
#include "model/tree.h"

#define LP_MAX_STACK 512
/* An allocation record keeps a frame's depth in 16 bits (base/ptrmap.h). */
_Static_assert(LP_MAX_STACK <= INT16_MAX, "lp_alloc_rec's depths are int16_t");
#define LP_MAX_NO_FORMULA 16 /* op names without a FLOPs formula kept per thread and merged */
#define LP_MAX_THREADS 64
#define LP_REGION_INDEX_CAP (LP_MAX_REGIONS * 2) /* open addressing, at most half full */

/* REGION frames are the program's own code segments (lp_session_region_begin): they sit below every
 * module frame of a forward run inside them, measure themselves, and never make the calls above
 * them measured (path selection still decides that). */
/* What a module's calls add to its histograms: nothing (deeper than cfg.hist_depth), self and
 * total time, or total time to both (at hist_depth: its subtree folded into it). */
enum { HIST_NONE = 0, HIST_SELF = 1, HIST_FOLDED = 2 };

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
    uint8_t measured; /* inside a selected subtree */
    uint8_t is_call;  /* MODULE frames: a forward call (counted), or another method (time only) */
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
    lp_figures *mods;     /* per module node */
    lp_module_hist *hist; /* per module node (cfg.histograms); written by this thread only */
    /* Per module node: the time of its frames that ran outside every frame of its tree parent
     * (a ModuleList's elements, called from the list's parent). Containers add it up at merge, so
     * a container's total is never smaller than its children's. */
    uint64_t *outside_ns;
    lp_figures *regs; /* per region id (LP_MAX_REGIONS), made by the thread's first region */
    lp_row *rows;
    size_t n_rows, cap_rows;
    size_t
        rows_merged; /* rows lp_collector_finish has seen: those past it may be new to the tree */
    int32_t *row_index; /* open addressing: row + 1, 0 empty */
    size_t index_cap;
    lp_ptrmap live;
    lp_pkg_mem pkg; /* an AOTInductor package's forward: its modules' memory (cfg.memory) */
    int pkg_failed; /* pkg's arrays could not be made: the wrapper's memory stays the root's */
    uint64_t events, dropped, unbalanced, foreign_frees;
    uint32_t slot; /* index in lp_collector.threads: op scope ids carry it */
    const char *no_formula[LP_MAX_NO_FORMULA]; /* lp_ev_flops_unknown, first seen first */
    uint32_t n_no_formula;
    lp_span_buf trace; /* timeline spans and memory samples (cfg.trace) */
} lp_thread_state;

struct lp_collector {
    lp_tree *tree;
    lp_collector_config cfg;
    uint8_t *measured_root; /* per module: selected (copied) */
    uint8_t *hist_mode;     /* per module: HIST_NONE, HIST_SELF or HIST_FOLDED (cfg.histograms) */
    /* per module: its tree parent is a container, whose roll-up at merge needs the time the
     * module's frames ran outside that parent (outside_ns); for any other module it is not kept */
    uint8_t *under_container;
    uint64_t *rolled_ns; /* per module: containers' roll-up at merge (scratch) */
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
    const char *no_formula[LP_MAX_NO_FORMULA]; /* the threads' merged by lp_collector_finish */
    size_t n_no_formula, more_no_formula;      /* kept, and dropped for want of room */
    _Atomic int tracing;                       /* cfg.trace and inside the iterations asked for */
    lp_timeline timeline;                      /* merged by lp_collector_finish */
    /* Regions and contexts. Entries are written once, under names_lock, and published through
     * the index with a release store, so lookups in steady state take no lock. */
    lp_region_entry *regions;      /* LP_MAX_REGIONS */
    _Atomic int32_t *region_index; /* LP_REGION_INDEX_CAP: id + 1, 0 empty */
    _Atomic uint32_t n_regions;
    lp_figures *region_figs; /* merged by lp_collector_finish; NULL until a region closed */
    uint64_t (*clock)(void); /* regions' timestamps: cfg.clock or lp_now_ns */
};

/* --- collector.c, for the other files ------------------------------------------------------ */
/* The calling thread's state (claimed on its first event), or NULL past LP_MAX_THREADS. */
lp_thread_state *lp_collector_thread(lp_collector *c);
/* Whether `ts` is the calling thread's state (only that thread may close its scopes). */
int lp_collector_is_calling_thread(const lp_collector *c, const lp_thread_state *ts);
/* Drops the frames open on `ts` above the program's regions (which stay), closing their CUDA/NVTX
 * scopes when `close_scopes` (only on the thread that owns them), and forgets its live
 * allocations. Returns the number of frames dropped. */
int lp_thread_state_drop_frames(lp_collector *c, lp_thread_state *ts, int close_scopes);
/* --- thread_state.c -------------------------------------------------------------------------- */
/* A thread's state, its arrays sized for c's tree (NULL out of memory); its release, with all it
 * holds. */
lp_thread_state *lp_thread_state_new(const lp_collector *c);
void lp_thread_state_free(lp_thread_state *ts);
/* --- collector_names.c ----------------------------------------------------------------------- */
/* Global id of an op name, interned by text on its first sight in any thread; of the starting
 * op's input-shape text (cfg.describe_shapes), -1 when there is none. Under names_lock. */
int32_t lp_collector_intern_name(lp_collector *c, const char *name);
int32_t lp_collector_intern_shapes(lp_collector *c);
/* Opens a frame of `kind` on `ts` (NULL when the stack is full), and closes the top one at `t`,
 * adding its figures to its node: what region events share with module and op events. */
lp_frame *lp_collector_push(lp_thread_state *ts, int kind, int32_t node, uint64_t t, int measured);
void lp_collector_pop(lp_collector *c, lp_thread_state *ts, uint64_t t);

#endif
