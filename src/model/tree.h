/* tree.h: the module tree and the figures aggregated into it.
 *
 * The tree is built once per session from the model's named_modules() (pre-order, root first) and
 * never changes shape afterwards; the collector only adds into its accumulators. Everything is raw
 * integer sums plus the iteration count, so any renderer or export can derive means exactly.
 *
 * Strings: every string a tree exposes (node paths, names and classes, op names, shape texts) is
 * the tree's own, interned in its string pool (base/strpool.h). Trees may share one pool
 * (lp_tree_share_strings): a string then stays valid until the last tree sharing the pool is
 * freed, whichever tree it was read from. A session's trees (its module tree, the trees of the
 * regions forwards ran in, the composed report) all share the module tree's pool, so what a getter
 * hands out lives until lp_session_close, however often the report is composed again. */
#ifndef LP_TREE_H
#define LP_TREE_H

#include <stddef.h>
#include <stdint.h>

#include "base/strpool.h"

/* min/max/sum of one per-call quantity (bytes can be negative for net memory). */
typedef struct lp_stat {
    int64_t sum;
    int64_t min;
    int64_t max;
    uint64_t n; /* samples (calls) */
} lp_stat;

/* Adds one sample. Inline: the collector adds four per device per closed call with memory on. */
static inline void lp_stat_add(lp_stat *s, int64_t v) {
    if (s->n++ == 0) {
        s->min = s->max = v;
    } else {
        if (v < s->min) s->min = v;
        if (v > s->max) s->max = v;
    }
    s->sum += v;
}
void lp_stat_merge(lp_stat *into, const lp_stat *from);
double lp_stat_mean(const lp_stat *s);

/* Memory figures of one device, per call (see README "Memory"). */
typedef struct lp_mem_stats {
    lp_stat retained;      /* allocated inside the call (children included), alive at exit */
    lp_stat self_retained; /* the same, without what child modules allocated */
    lp_stat peak;          /* highest amount of the call's own allocations alive at once */
    lp_stat net;           /* all allocated minus all freed during the call */
} lp_mem_stats;

enum { LP_DEV_CPU = 0, LP_DEV_CUDA = 1, LP_DEV_COUNT = 2 };

/* Per-call durations, online (Welford): count, mean, sum of squared deviations, extremes. No
 * per-call storage; two accumulators merge exactly (Chan et al.), so threads merge at the end. */
typedef struct lp_welford {
    uint64_t n;
    double mean;
    double m2;
    uint64_t min, max; /* 0 when n is 0 */
} lp_welford;

/* Adds one sample. Inline: the collector adds one per closed call, on the hot path. */
static inline void lp_welford_add(lp_welford *w, uint64_t x) {
    uint64_t n = ++w->n;
    if (n == 1) {
        w->min = w->max = x;
    } else {
        if (x < w->min) w->min = x;
        if (x > w->max) w->max = x;
    }
    double delta = (double)x - w->mean;
    w->mean += delta / (double)n;
    w->m2 += delta * ((double)x - w->mean);
}
void lp_welford_merge(lp_welford *into, const lp_welford *from);
/* Sample standard deviation (n - 1); 0 when n < 2. */
double lp_welford_std(const lp_welford *w);

/* What a module holds, beside what it costs: parameters (elements) and the bytes of its parameters
 * and buffers, its own and with its submodules' (a tensor two modules share counts once in every
 * total covering both). Set when the tree is built from the model, or read back from a report:
 * not a measurement, so never merged, and kept when the figures are cleared. `known` is 0 on op
 * rows, total rows and trees made without a model. */
typedef struct lp_module_size {
    int known;
    uint64_t self_params, params;
    uint64_t self_bytes, bytes;
} lp_module_size;

/* The shape of the first tensor a module's calls returned (the out_shape column): the first call's,
 * and whether a later call's differed. */
#define LP_OUT_SHAPE_DIMS 8
typedef struct lp_out_shape {
    uint8_t seen;   /* a call returned a tensor */
    uint8_t varies; /* calls returned different shapes */
    uint8_t rank;
    int64_t dims[LP_OUT_SHAPE_DIMS];
} lp_out_shape;

/* Records one call's output shape into `s` (dims past LP_OUT_SHAPE_DIMS are not kept). */
void lp_out_shape_add(lp_out_shape *s, const int64_t *dims, int rank);

/* Figures of one node (a module, or an op inside a module). The fields every call writes come
 * first, so that recording a call touches two cache lines and a merge of a profile without memory
 * or shapes reads and clears only them (lp_figures_merge_parts): at 100k modules the merge is
 * bound by memory traffic, not instructions. */
typedef struct lp_figures {
    uint64_t calls;
    uint64_t total_ns;      /* inclusive wall time */
    uint64_t self_ns;       /* total minus children's totals */
    uint64_t cuda_self_ns;  /* device time of kernels/memcpys/memsets launched directly here */
    uint64_t cuda_total_ns; /* the same over the subtree (lp_tree_cuda_totals) */
    /* FLOPs (tree.has_flops; 2 per multiply-add) of the ops run directly in the node, summed over
     * its calls, and the same over its subtree (lp_tree_flops_totals). */
    uint64_t flops_self, flops_total;
    lp_welford time; /* per-call inclusive time */
    /* -- the parts below are merged only when recorded (LP_FIG_*) -- */
    lp_out_shape out; /* tree.has_out_shape */
    lp_mem_stats mem[LP_DEV_COUNT];
    /* -- never merged -- */
    /* % Total's denominator: the total of the context this row belongs to (the root's without
     * regions). lp_tree_set_shares fills it on the finished tree; 0: no share. */
    uint64_t share_base_ns;
    lp_module_size size; /* modules: what they hold */
} lp_figures;

/* The optional parts of lp_figures: a merge leaves out those nothing recorded. */
enum {
    LP_FIG_MEM_CPU = 1u << LP_DEV_CPU,
    LP_FIG_MEM_CUDA = 1u << LP_DEV_CUDA,
    LP_FIG_OUT_SHAPE = 1u << LP_DEV_COUNT,
    LP_FIG_ALL = LP_FIG_MEM_CPU | LP_FIG_MEM_CUDA | LP_FIG_OUT_SHAPE
};

/* Adds `from`'s figures to `into`: the per-call fields always, the optional ones named in
 * `parts`. Then clears in `from` what was merged (the thread's figures start over). */
void lp_figures_move_parts(lp_figures *into, lp_figures *from, unsigned parts);

/* Adds every merged field of `from` to `into` (lp_figures_move_parts with LP_FIG_ALL, without
 * clearing `from`). */
void lp_figures_merge(lp_figures *into, const lp_figures *from);

/* One op row: an op name under a module, or under another op (nested dispatch). */
typedef struct lp_op_node {
    int32_t module;    /* module node this op ran in */
    int32_t parent_op; /* -1 when directly under the module */
    int32_t op;        /* op name id: index into lp_tree.op_names */
    int32_t shapes;    /* input-shape signature id, -1 when shapes are not recorded */
    int32_t first_child, next_sibling; /* op rows in first-seen order */
    lp_figures fig;
} lp_op_node;

typedef struct lp_tree_node {
    const char *path;       /* dotted path, "" for the root (the tree's pool) */
    const char *name;       /* last segment (class name for the root) */
    const char *class_name; /* short class name ("Conv2d") */
    int32_t parent;         /* -1 for the root */
    int32_t depth;
    int32_t first_child, next_sibling; /* -1 terminated, model order */
    int32_t first_op;                  /* first op row directly under this module, -1 if none */
    int selected;                      /* measured (all nodes unless paths were given) */
    int container;                     /* no forward (ModuleList, ModuleDict): never a call */
    int kind;                          /* lp_node_kind (layerprof.h); LP_NODE_MODULE is 0 */
    int32_t last_child_scratch;        /* construction only: keeps lp_tree_add linear */
    int32_t folded; /* a folded view's row (lp_tree_fold): the modules it stands for, else 0 */
    /* A package's module whose work Inductor fused into a kernel placed in another module
     * (docs/pt2.md): that module's path in the model ("" the root) and the kernel's name (the
     * shim picks which, of several), and how many more kernels took some of its work. NULL when
     * none. Says where the module's time went; no time moves (lp_tree_set_fused). */
    const char *fused_module, *fused_kernel;
    uint32_t fused_more;
    lp_figures fig;
} lp_tree_node;

typedef struct lp_tree {
    lp_tree_node *nodes;
    size_t n_nodes, cap_nodes;
    lp_op_node *ops;
    size_t n_ops, cap_ops;
    lp_strpool *strings; /* every string of the tree; NULL until the first one */
    /* Indexed by op id; the array is the tree's, the strings the pool's. Ids are the collector's
     * (lp_tree_extend_names) or the tree's own (lp_tree_intern_op_name): never both in one tree. */
    const char **op_names;
    size_t n_op_names, cap_op_names;
    /* Indexed by lp_op_node.shapes: the inputs' sizes without outer brackets, "[1, 3], []". */
    const char **shape_names;
    size_t n_shape_names, cap_shape_names;
    uint64_t iterations;
    int has_memory[LP_DEV_COUNT]; /* memory was recorded for this device */
    int has_ops;
    int has_cuda_time; /* CUDA kernel time per node was recorded */
    int has_flops;     /* FLOPs per node were recorded (a flops column was asked for) */
    int has_out_shape; /* output shapes were recorded (the out_shape column, markers mode) */
} lp_tree;

/* Tree construction (from the shim's module listing, or from tests). lp_tree_init cannot fail: the
 * pool is made with the first string. lp_tree_free drops the tree's reference to its pool. */
int lp_tree_init(lp_tree *t);
void lp_tree_free(lp_tree *t);

/* Makes `t`, which holds no string yet, take its strings from `with`'s pool (made now if `with`
 * has none), so they outlive `t`: a tree rebuilt this way (a composed report) never invalidates
 * what was read from its earlier self. LP_ERR_STATE when `t` already has strings. */
int lp_tree_share_strings(lp_tree *t, lp_tree *with);
/* Appends a node; `parent` must already exist (or be -1 for the first node). Returns its index or
 * a negative status. */
int lp_tree_add(lp_tree *t, const char *path, const char *class_name, int32_t parent);
/* Replaces a node's display name (lp_tree_add takes it from the path's last dotted segment). The
 * old name stays valid: it is the pool's. */
int lp_tree_set_name(lp_tree *t, int32_t index, const char *name);
/* Replaces a node's class name, likewise. */
int lp_tree_set_class(lp_tree *t, int32_t index, const char *class_name);
/* Where module `index`'s work went when Inductor fused it into `kernel`, placed in the module at
 * `module` (the path; "" the root), and `more` other kernels (lp_tree_node.fused_module). Copies
 * the strings into the tree's pool. `module` NULL: clears it. */
int lp_tree_set_fused(lp_tree *t, int32_t index, const char *module, const char *kernel,
                      uint32_t more);
/* What module `index` is beside its place (tree_shape.c): a container (no forward, never a call),
 * and its sizes (`size` NULL: unknown, left as they are). */
void lp_tree_set_module(lp_tree *t, int32_t index, int container, const lp_module_size *size);
/* Makes `out` (not initialised) a tree of `from`'s shape, sharing its string pool: its nodes and
 * what each module is, no figure (the tree of forwards run in another region). */
int lp_tree_copy_shape(lp_tree *out, lp_tree *from);
/* Drops every figure (a schedule's fresh start): the nodes' but their sizes, the op rows, the
 * iteration count. The shape stays. */
void lp_tree_clear_figures(lp_tree *t);

/* Index of the node with this dotted path, or -1. */
int32_t lp_tree_find(const lp_tree *t, const char *path);

/* Building one tree from others (tree_graft.c) ------------------------------------------------- */
/* "<prefix>/<name>", or `name` when `prefix` is NULL: the caller frees it. NULL: out of memory. */
char *lp_tree_join_path(const char *prefix, const char *name);
/* lp_tree_add, with its display name and its lp_node_kind. Returns its index or a status. */
int lp_tree_add_named(lp_tree *t, const char *path, const char *name, const char *class_name,
                      int kind, int32_t parent);
/* Replaces a node's figures (a region's, merged by the collector). */
void lp_tree_set_figures(lp_tree *t, int32_t index, const lp_figures *fig);
/* A copy of every node and op row of `from`, with their figures, under `parent` of `out`, paths
 * prefixed with "<prefix>/". LP_OK or a negative status. */
int lp_tree_graft(lp_tree *out, const lp_tree *from, int32_t parent, const char *prefix);
/* A group node's total: the sum of its direct children's totals. */
void lp_tree_sum_children(lp_tree *t, int32_t node);
/* Marks each node measured (`selected`) when roots[node] is set or its parent is measured. */
void lp_tree_mark_measured(lp_tree *t, const uint8_t *roots);

/* A module whose figures a view shows: selected (profiled), with a call or with time without one
 * (a container's, whose elements ran inside its parent; a module whose other methods ran, never
 * its forward). Every view draws the same rows (the tree, markdown, the fold). */
static inline int lp_node_measured(const lp_tree_node *n) {
    return n->selected && (n->fig.calls > 0 || n->fig.total_ns > 0);
}

/* A folded row that stands for hidden modules measured only below it (paths selected below the
 * row): it shows their time and nothing else (lp_tree_fold). */
static inline int lp_node_stands_in(const lp_tree_node *n) {
    return n->folded && !lp_node_measured(n) && n->fig.total_ns > 0;
}

/* Folding (tree_fold.c): the one rule for a view that hides modules -------------------------
 * `out` (not initialised; lp_tree_free it) becomes a copy of `from` without the modules deeper
 * than `depth` (the root is depth 0). The row at `depth` above hidden modules stands for them
 * (its `folded`: how many) as one unit: each self figure becomes what the unit did. Self CPU
 * time, self CUDA time and self FLOPs add the hidden measured modules' selves to its own (which
 * makes them its whole figures); self retained memory and self parameters and bytes become its
 * whole figures as recorded, since those do not add across modules (bytes a child kept may be
 * freed before its parent returns; a tied weight is one tensor held twice). Peak and net memory,
 * totals and calls already describe the unit and stay. Hidden op rows join its own, merged level
 * by level by (name, shapes), so its op rows and its "(self)" remainder still add up to its self
 * time. A row that was not measured itself (paths selected below it) stands for time only: the
 * hidden measured modules' selves, and as total the totals of the topmost of them. `depth` < 0
 * copies every depth. `prune` also leaves out every module that was not profiled (not selected)
 * and holds none that was: rows of no figure, so nothing is lost. */
int lp_tree_fold(const lp_tree *from, int depth, int prune, lp_tree *out);

/* Fills every node's and op row's fig.share_base_ns: the total of its nearest LP_NODE_CONTEXT
 * ancestor; the root's total for context nodes, the root, and trees without contexts. */
void lp_tree_set_shares(lp_tree *t);

/* Fills every module's fig.flops_total from the flops_self of its subtree; unmeasured modules
 * have none, as for time. */
void lp_tree_flops_totals(lp_tree *t);

/* After the collector merged its threads: every node's and op row's cuda_total_ns becomes its
 * cuda_self_ns plus its children's totals (child modules for modules, nested op rows for ops).
 * A module's self already holds its own op rows' time, so ops are not added to modules again.
 * Recomputed from the selves each time, so it can run after every run. Unmeasured modules have
 * none, as for time. */
void lp_tree_cuda_totals(lp_tree *t);

/* A node as a report file gives it (report/json_read.c): its lp_node_kind, whether it was
 * measured, whether it is a container, and its figures. */
void lp_tree_restore_node(lp_tree *t, int32_t index, int kind, int selected, int container,
                          const lp_figures *fig);
/* An op row's figures, likewise. */
void lp_tree_restore_op(lp_tree *t, int32_t row, const lp_figures *fig);

/* Appends an op row under module `module` (parent_op -1) or under `parent_op`. Returns its index.
 */
/* Makes room for `extra` more op rows in one allocation (a merge that knows how many may come). */
int lp_tree_reserve_ops(lp_tree *t, size_t extra);

int lp_tree_add_op(lp_tree *t, int32_t module, int32_t parent_op, int32_t op, int32_t shapes);

/* Op names and shape texts ----------------------------------------------------------------------
 * Copies, once per new name, the entries of a source's tables (the collector's) that `t` lacks:
 * those from index n_op_names (n_shape_names) on. The source's tables only grow, so the tree's
 * stay prefixes of them and op ids mean the same in both. Runs at merge time, never per event. */
int lp_tree_extend_names(lp_tree *t, const char *const *op_names, size_t n_op_names,
                         const char *const *shape_names, size_t n_shape_names);

/* The id of this op name (shape text) in the tree's own table, appended when new: for trees read
 * back from a file or built by hand. A negative status when out of memory. */
int32_t lp_tree_intern_op_name(lp_tree *t, const char *name);
int32_t lp_tree_intern_shapes(lp_tree *t, const char *shapes);

/* The op name (shape text) of an id, or NULL when the id has none (-1, or out of range). */
const char *lp_tree_op_name(const lp_tree *t, int32_t op);
const char *lp_tree_shapes(const lp_tree *t, int32_t shapes);

#endif
