/* columns.c: one table entry, getter and formatter per column. Adding a column is adding a row here
 * (and, for a new statistic, its field in tree.h); renderers pick it up by id. */
#include "report/columns.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/suggest.h"
#include "base/units.h"

/* Getters -------------------------------------------------------------------------------------- */

/* Times and calls are per iteration, as the table shows one forward; memory is a mean per call. */
static int get_self_cpu(const lp_figures *fig, double iterations, double *out) {
    *out = (double)fig->self_ns / iterations;
    return 1;
}

static int get_cpu_total(const lp_figures *fig, double iterations, double *out) {
    *out = (double)fig->total_ns / iterations;
    return 1;
}

/* CUDA time per iteration, for rows that are calls (modules and ops that ran) or hold CUDA time
 * without a call of their own (a container such as a ModuleList, whose total is its items'): the
 * "(self)" and Total rows carry CPU time only, so they stay blank here rather than show a false 0.
 * A container whose items launched no kernel cannot be told from those rows here: blank too. */
static int has_cuda(const lp_figures *fig) {
    return fig->calls > 0 || fig->cuda_total_ns > 0 || fig->cuda_self_ns > 0;
}

static int get_self_cuda(const lp_figures *fig, double iterations, double *out) {
    *out = (double)fig->cuda_self_ns / iterations;
    return has_cuda(fig);
}

static int get_cuda_total(const lp_figures *fig, double iterations, double *out) {
    *out = (double)fig->cuda_total_ns / iterations;
    return has_cuda(fig);
}

static int get_calls(const lp_figures *fig, double iterations, double *out) {
    *out = (double)fig->calls / iterations;
    return 1;
}

/* Per-call statistics of inclusive time (Welford, tree.h): per call, not per iteration, so they
 * do not depend on how often a module runs in one forward. Blank without calls rather than a false
 * 0, and the standard deviation needs two calls. */
static int get_mean(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    *out = fig->time.mean;
    return fig->time.n > 0;
}

static int get_min(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    *out = (double)fig->time.min;
    return fig->time.n > 0;
}

static int get_max(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    *out = (double)fig->time.max;
    return fig->time.n > 0;
}

/* One call has no spread to estimate: NaN, which the table shows as "-" (known to be unknown, not
 * a blank that means "not applicable") and the CSV leaves empty. */
static int get_std(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    *out = fig->time.n > 1 ? lp_welford_std(&fig->time) : fig->time.n ? NAN : 0.0;
    return fig->time.n > 0;
}

/* % Total: the row's total against its context's (lp_tree_set_shares). Both are raw sums over the
 * same iterations, so the ratio is the per-iteration one. Rows with no base ("(self)", Total, a
 * tree whose shares were never set) stay blank. */
static int get_share(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    if (fig->share_base_ns == 0) {
        *out = 0.0;
        return 0;
    }
    *out = 100.0 * (double)fig->total_ns / (double)fig->share_base_ns;
    return 1;
}

#define MEM_GETTER(fn, dev, stat)                                                                  \
    static int fn(const lp_figures *fig, double iterations, double *out) {                         \
        (void)iterations;                                                                          \
        *out = lp_stat_mean(&fig->mem[dev].stat);                                                  \
        return 1;                                                                                  \
    }
MEM_GETTER(get_self_cpu_mem, LP_DEV_CPU, self_retained)
MEM_GETTER(get_cpu_mem, LP_DEV_CPU, retained)
MEM_GETTER(get_peak_cpu_mem, LP_DEV_CPU, peak)
MEM_GETTER(get_net_cpu_mem, LP_DEV_CPU, net)
MEM_GETTER(get_self_cuda_mem, LP_DEV_CUDA, self_retained)
MEM_GETTER(get_cuda_mem, LP_DEV_CUDA, retained)
MEM_GETTER(get_peak_cuda_mem, LP_DEV_CUDA, peak)
MEM_GETTER(get_net_cuda_mem, LP_DEV_CUDA, net)

/* What the module holds (lp_module_size): the same whatever ran, so not per iteration. */
#define SIZE_GETTER(fn, field)                                                                     \
    static int fn(const lp_figures *fig, double iterations, double *out) {                         \
        (void)iterations;                                                                          \
        *out = (double)fig->size.field;                                                            \
        return fig->size.known;                                                                    \
    }
SIZE_GETTER(get_params, params)
SIZE_GETTER(get_self_params, self_params)
SIZE_GETTER(get_param_bytes, bytes)

/* FLOPs per call (2 per multiply-add), over the subtree or the module's own ops; blank without
 * calls (a container, a module that never ran). */
static int get_flops(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    *out = fig->calls ? (double)fig->flops_total / (double)fig->calls : 0.0;
    return fig->calls > 0;
}

static int get_self_flops(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    *out = fig->calls ? (double)fig->flops_self / (double)fig->calls : 0.0;
    return fig->calls > 0;
}

/* Achieved throughput: the row's FLOPs over the row's time (FLOPs per ns is GFLOP/s), both over
 * its whole subtree, so a parent row gives the rate of the work done inside it (its own ops are
 * rarely any: a self-only rate read 0.00 on every parent) and a folded row that of everything it
 * stands for. The device time of its kernels when they were timed (CUDA), else its CPU time. */
static int get_gflops_per_s(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    uint64_t ns = fig->cuda_total_ns ? fig->cuda_total_ns : fig->total_ns;
    *out = ns ? (double)fig->flops_total / (double)ns : 0.0;
    return fig->calls > 0 && ns > 0;
}

/* The first call's output shape; sorted by its element count. */
static int get_out_shape(const lp_figures *fig, double iterations, double *out) {
    (void)iterations;
    double n = 1.0;
    for (int d = 0; d < fig->out.rank; d++)
        n *= (double)fig->out.dims[d];
    *out = fig->out.seen ? n : 0.0;
    return fig->out.seen;
}

/* "[1, 64, 112, 112]", with a "*" when the calls returned different shapes (the first is shown). */
static int text_out_shape(const lp_figures *fig, char *buf, size_t size) {
    size_t len = 0;
    int n = snprintf(buf, size, "[");
    for (int d = 0; d < fig->out.rank && n >= 0; d++) {
        len += (size_t)n;
        n = snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, "%s%lld",
                     d ? ", " : "", (long long)fig->out.dims[d]);
    }
    if (n < 0) return n;
    len += (size_t)n;
    n = snprintf(buf + (len < size ? len : size), len < size ? size - len : 0, "]%s",
                 fig->out.varies ? "*" : "");
    return n < 0 ? n : (int)(len + (size_t)n);
}

/* Formatters ----------------------------------------------------------------------------------- */

static int fmt_time(double v, lp_units units, char *buf, size_t size) {
    return lp_format_time(v, units, buf, size);
}

static int fmt_bytes(double v, lp_units units, char *buf, size_t size) {
    (void)units;
    return lp_format_bytes(v, buf, size);
}

/* Calls per iteration are whole unless a module runs a varying number of times per forward. */
static int fmt_calls(double v, lp_units units, char *buf, size_t size) {
    (void)units;
    if (v == nearbyint(v) && fabs(v) < 1e15) return snprintf(buf, size, "%.0f", v);
    return snprintf(buf, size, "%.2f", v);
}

/* "11,689,512": counts of things, as torchinfo prints parameters. */
static int fmt_count(double v, lp_units units, char *buf, size_t size) {
    (void)units;
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%.0f", v);
    if (n < 0 || (size_t)n >= sizeof digits) return snprintf(buf, size, "%.0f", v);
    char grouped[48];
    size_t len = 0;
    int lead = digits[0] == '-';
    for (int i = 0; i < n; i++) {
        int left = n - i; /* digits from here to the end */
        if (i > lead && left % 3 == 0) grouped[len++] = ',';
        grouped[len++] = digits[i];
    }
    grouped[len] = '\0';
    return snprintf(buf, size, "%s", grouped);
}

/* "236.03 M": FLOPs with an SI prefix, as DeepSpeed's profiler prints them. */
static int fmt_si(double v, lp_units units, char *buf, size_t size) {
    (void)units;
    static const char *const prefix[] = {"", " K", " M", " G", " T", " P"};
    size_t p = 0;
    while (fabs(v) >= 1000.0 && p + 1 < sizeof prefix / sizeof prefix[0]) {
        v /= 1000.0;
        p++;
    }
    return p ? snprintf(buf, size, "%.2f%s", v, prefix[p]) : snprintf(buf, size, "%.0f", v);
}

/* "12.34": GFLOP/s. */
static int fmt_rate(double v, lp_units units, char *buf, size_t size) {
    (void)units;
    return snprintf(buf, size, "%.2f", v);
}

/* "49.51%": the value is already a percentage. */
static int fmt_percent(double v, lp_units units, char *buf, size_t size) {
    (void)units;
    return snprintf(buf, size, "%.2f%%", v);
}

/* The table ------------------------------------------------------------------------------------ */

#define TIME LP_COLGRP_TIME
#define MEM LP_COLGRP_MEM
#define CPU_MEM LP_NEED_CPU_MEM
#define CUDA_MEM LP_NEED_CUDA_MEM
#define CUDA_TIME LP_NEED_CUDA_TIME

/* torchprof's order, then the per-call statistics (not in the default set); the default set is
 * every is_default entry whose needs the tree meets. */
static const lp_column columns[] = {
    {"self_cpu", "Self CPU total", TIME, 0, 1, "_ns", get_self_cpu, fmt_time, NULL},
    {"cpu_total", "CPU total", TIME, 0, 1, "_ns", get_cpu_total, fmt_time, NULL},
    {"self_cuda", "Self CUDA total", TIME, CUDA_TIME, 1, "_ns", get_self_cuda, fmt_time, NULL},
    {"cuda_total", "CUDA total", TIME, CUDA_TIME, 1, "_ns", get_cuda_total, fmt_time, NULL},
    {"self_cpu_mem", "Self CPU Mem", MEM, CPU_MEM, 1, "_bytes", get_self_cpu_mem, fmt_bytes, NULL},
    {"cpu_mem", "CPU Mem", MEM, CPU_MEM, 1, "_bytes", get_cpu_mem, fmt_bytes, NULL},
    {"peak_cpu_mem", "Peak CPU Mem", MEM, CPU_MEM, 1, "_bytes", get_peak_cpu_mem, fmt_bytes, NULL},
    {"net_cpu_mem", "Net CPU Mem", MEM, CPU_MEM, 0, "_bytes", get_net_cpu_mem, fmt_bytes, NULL},
    {"self_cuda_mem", "Self CUDA Mem", MEM, CUDA_MEM, 1, "_bytes", get_self_cuda_mem, fmt_bytes,
     NULL},
    {"cuda_mem", "CUDA Mem", MEM, CUDA_MEM, 1, "_bytes", get_cuda_mem, fmt_bytes, NULL},
    {"peak_cuda_mem", "Peak CUDA Mem", MEM, CUDA_MEM, 1, "_bytes", get_peak_cuda_mem, fmt_bytes,
     NULL},
    {"net_cuda_mem", "Net CUDA Mem", MEM, CUDA_MEM, 0, "_bytes", get_net_cuda_mem, fmt_bytes, NULL},
    {"calls", "Number of Calls", LP_COLGRP_CALLS, 0, 1, "", get_calls, fmt_calls, NULL},
    {"mean", "Mean", TIME, 0, 0, "_ns", get_mean, fmt_time, NULL},
    {"min", "Min", TIME, 0, 0, "_ns", get_min, fmt_time, NULL},
    {"max", "Max", TIME, 0, 0, "_ns", get_max, fmt_time, NULL},
    {"std", "Std", TIME, 0, 0, "_ns", get_std, fmt_time, NULL},
    {"share", "% Total", TIME, 0, 0, "_pct", get_share, fmt_percent, NULL},
    {"params", "Params", LP_COLGRP_SIZE, 0, 0, "", get_params, fmt_count, NULL},
    {"self_params", "Self Params", LP_COLGRP_SIZE, 0, 0, "", get_self_params, fmt_count, NULL},
    {"param_bytes", "Param Bytes", LP_COLGRP_SIZE, 0, 0, "_bytes", get_param_bytes, fmt_bytes,
     NULL},
    {"flops", "FLOPs", TIME, LP_NEED_FLOPS, 0, "", get_flops, fmt_si, NULL},
    {"self_flops", "Self FLOPs", TIME, LP_NEED_FLOPS, 0, "", get_self_flops, fmt_si, NULL},
    {"gflops_per_s", "GFLOP/s", TIME, LP_NEED_FLOPS, 0, "_gflops", get_gflops_per_s, fmt_rate,
     NULL},
    {"out_shape", "Output Shape", TIME, LP_NEED_OUT_SHAPE, 0, "", get_out_shape, fmt_count,
     text_out_shape},
};
#define N_COLUMNS (sizeof columns / sizeof columns[0])

const lp_column *lp_columns_all(size_t *n) {
    if (n) *n = N_COLUMNS;
    return columns;
}

const lp_column *lp_column_find(const char *id) {
    if (!id) return NULL;
    for (size_t i = 0; i < N_COLUMNS; i++)
        if (strcmp(columns[i].id, id) == 0) return &columns[i];
    return NULL;
}

int lp_column_lookup(const char *id, const char *what, const lp_column **out) {
    const lp_column *col = lp_column_find(id);
    if (col) {
        *out = col;
        return LP_OK;
    }
    const char *ids[N_COLUMNS];
    for (size_t i = 0; i < N_COLUMNS; i++)
        ids[i] = columns[i].id;
    const char *near = id ? lp_closest(id, ids, N_COLUMNS) : NULL;
    if (near)
        return lp_error_set(LP_ERR_NOT_FOUND, "unknown %s '%s' (did you mean '%s'?)", what, id,
                            near);
    /* Nothing close: list them all, so the user never has to look the ids up. */
    char list[512];
    size_t len = 0;
    for (size_t i = 0; i < N_COLUMNS && len < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", ids[i]);
    return lp_error_set(LP_ERR_NOT_FOUND, "unknown %s '%s' (valid ids: %s)", what,
                        id ? id : "(null)", list);
}

/* What each need bit asks of the tree. */
static int has_cpu_mem(const lp_tree *t) {
    return t->has_memory[LP_DEV_CPU];
}
static int has_cuda_mem(const lp_tree *t) {
    return t->has_memory[LP_DEV_CUDA];
}
static int has_cuda_time(const lp_tree *t) {
    return t->has_cuda_time;
}
static int has_flops(const lp_tree *t) {
    return t->has_flops;
}
static int has_out_shape(const lp_tree *t) {
    return t->has_out_shape;
}
static const struct {
    unsigned bit;
    int (*has)(const lp_tree *t);
} needs[] = {
    {LP_NEED_CPU_MEM, has_cpu_mem},     {LP_NEED_CUDA_MEM, has_cuda_mem},
    {LP_NEED_CUDA_TIME, has_cuda_time}, {LP_NEED_FLOPS, has_flops},
    {LP_NEED_OUT_SHAPE, has_out_shape},
};

/* The options that record what a need bit stands for, as the CLI and a config file say them. */
static const char *recorded_by(unsigned need) {
    switch (need) {
    case LP_NEED_CPU_MEM:
        return "--memory (memory: true)";
    case LP_NEED_CUDA_MEM:
        return "--device cuda with --memory";
    case LP_NEED_CUDA_TIME:
        return "--device cuda (with CUDA timing on)";
    default:
        return "an option this column needs";
    }
}

static int check_one(const char *id, const char *where, unsigned recorded) {
    const lp_column *col = lp_column_find(id);
    unsigned missing = col ? col->needs & ~recorded : 0;
    if (!missing) return LP_OK;
    unsigned need = missing & -missing; /* the lowest one: one reason at a time */
    return lp_error_set(LP_ERR_INVALID, "%s '%s' is recorded only with %s", where, id,
                        recorded_by(need));
}

int lp_columns_check_recorded(const char *const *ids, size_t n, const char *sort,
                              unsigned recorded) {
    for (size_t i = 0; i < n; i++) {
        int rc = check_one(ids[i], "column", recorded);
        if (rc) return rc;
    }
    return sort ? check_one(sort, "sort key", recorded) : LP_OK;
}

int lp_column_format(const lp_column *col, const lp_figures *fig, double value, lp_units units,
                     char *buf, size_t size) {
    if (isnan(value) && !col->text) return snprintf(buf, size, "-"); /* no estimate (get_std) */
    return col->text ? col->text(fig, buf, size) : col->fmt(value, units, buf, size);
}

int lp_columns_any(const char *const *ids, size_t n, unsigned needs, unsigned groups) {
    for (size_t i = 0; i < n; i++) {
        const lp_column *col = lp_column_find(ids[i]);
        if (col && ((col->needs & needs) || (col->group & groups))) return 1;
    }
    return 0;
}

int lp_column_available(const lp_column *col, const lp_tree *tree) {
    for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++)
        if ((col->needs & needs[i].bit) && !needs[i].has(tree)) return 0;
    return 1;
}

int lp_columns_select(const lp_tree *tree, const char *const *ids, size_t n, const lp_column **out,
                      size_t *n_out) {
    *n_out = 0;
    if (n > LP_MAX_COLUMNS)
        return lp_error_set(LP_ERR_INVALID, "too many columns (%zu, at most %d)", n,
                            LP_MAX_COLUMNS);
    if (n == 0) {
        for (size_t i = 0; i < N_COLUMNS; i++)
            if (columns[i].is_default && lp_column_available(&columns[i], tree))
                out[(*n_out)++] = &columns[i];
        return LP_OK;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = lp_column_lookup(ids[i], "column", &out[i]);
        if (rc != LP_OK) return rc;
    }
    *n_out = n;
    return LP_OK;
}

int lp_column_value(const lp_column *col, const lp_tree *tree, const lp_figures *fig,
                    unsigned groups, double *out) {
    *out = 0.0;
    /* Every module row carries what the module is: the size getters blank the rest. */
    if (col->group == LP_COLGRP_SIZE) groups |= LP_COLGRP_SIZE;
    if (!(groups & col->group) || !lp_column_available(col, tree)) return 0;
    /* A tree that never ran has 0 iterations; its rows are blank anyway, so 1 only avoids 0/0. */
    double iterations = tree->iterations ? (double)tree->iterations : 1.0;
    return col->get(fig, iterations, out);
}
