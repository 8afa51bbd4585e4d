/* columns.h: the report's columns as data (uftrace's field table): choosing and ordering them is a
 * list of ids, never an if-chain in a renderer. Every renderer (tree, CSV, ...) reads this. It
 * lives in report/, with those renderers, because it formats values for display; the figures it
 * reads stay in model/tree.h, and nothing below report/ needs a column. */
#ifndef LP_COLUMNS_H
#define LP_COLUMNS_H

#include <stddef.h>

#include "layerprof.h"
#include "model/tree.h"

/* Which rows carry a value for a column. A renderer gives each row a mask of these (a module that
 * never ran has none, a "(self)" row only time), so blank cells need no per-column logic. */
enum {
    LP_COLGRP_TIME = 1u << 0,
    LP_COLGRP_MEM = 1u << 1,
    LP_COLGRP_CALLS = 1u << 2,
    /* What a module is (params, bytes): not a measurement, so every module row shows it, run or
     * not, selected or not; rows that are no module (ops, totals) have none to show. */
    LP_COLGRP_SIZE = 1u << 3,
    LP_COLGRP_ALL = LP_COLGRP_TIME | LP_COLGRP_MEM | LP_COLGRP_CALLS | LP_COLGRP_SIZE
};

/* What the tree must have recorded for a column to hold data. */
enum {
    LP_NEED_CPU_MEM = 1u << 0,
    LP_NEED_CUDA_MEM = 1u << 1,
    LP_NEED_CUDA_TIME = 1u << 2, /* lp_tree.has_cuda_time (CUDA device, docs/cuda.md) */
    LP_NEED_FLOPS = 1u << 3,     /* lp_tree.has_flops (asked for with a flops column) */
    LP_NEED_OUT_SHAPE = 1u << 4  /* lp_tree.has_out_shape (asked for with out_shape) */
};

/* The most columns one selection may list (the table has 25; repeats are allowed). */
#define LP_MAX_COLUMNS 32

typedef struct lp_column {
    const char *id;     /* what users type: --columns, --sort, the YAML config */
    const char *header; /* torchprof's header text */
    unsigned group;     /* LP_COLGRP_* */
    unsigned needs;     /* LP_NEED_* bits; 0: always available */
    int is_default;     /* in the default set when its needs are met */
    /* What the unformatted value counts, as a suffix of the CSV header: "_ns", "_bytes", "_pct",
     * or "" (calls). Not derived from `group`: % Total is a time column but not in ns. */
    const char *unit;
    /* The per-iteration (times, calls), per-call (memory, Mean/Min/Max/Std) or percentage (%
     * Total) value of `fig`, measured over `iterations` forwards. Returns 1 and sets *out, or 0
     * when the figures hold no such value (a blank cell). */
    int (*get)(const lp_figures *fig, double iterations, double *out);
    /* Formats a value from get(); returns the length as snprintf does. */
    int (*fmt)(double value, lp_units units, char *buf, size_t size);
    /* A column whose cell is text rather than a number (out_shape): writes it like snprintf.
     * get() then gives the value it sorts by. NULL for the numeric columns. */
    int (*text)(const lp_figures *fig, char *buf, size_t size);
} lp_column;

/* The whole table, in torchprof's header order. */
const lp_column *lp_columns_all(size_t *n);

/* The column with this exact id, or NULL. */
const lp_column *lp_column_find(const char *id);

/* Like lp_column_find, but an unknown id fails with LP_ERR_NOT_FOUND and a message naming the
 * closest id: "unknown <what> 'cpu_totl' (did you mean 'cpu_total'?)". */
int lp_column_lookup(const char *id, const char *what, const lp_column **out);

/* 1 when one of `ids` is a column that needs one of the `needs` bits or is in one of `groups`:
 * what decides the recordings a column costs (LP_NEED_FLOPS: every op's input shapes are read;
 * LP_NEED_OUT_SHAPE: the exit markers take the calls' outputs). */
int lp_columns_any(const char *const *ids, size_t n, unsigned needs, unsigned groups);

/* Before a run: LP_ERR_INVALID when one of `ids` or the `sort` key (NULL: none) needs a
 * recording that `recorded` (LP_NEED_* bits) lacks, with a message naming the column, where it
 * was asked for and the option that records it, rather than a table with an empty column. */
int lp_columns_check_recorded(const char *const *ids, size_t n, const char *sort,
                              unsigned recorded);

/* The cell's text for a value from lp_column_value: the column's text, or its number formatted. */
int lp_column_format(const lp_column *col, const lp_figures *fig, double value, lp_units units,
                     char *buf, size_t size);

/* 1 when `tree` recorded what the column needs. */
int lp_column_available(const lp_column *col, const lp_tree *tree);

/* Resolves `ids` (n > 0) or, for n == 0, the default set for what `tree` holds, into `out`
 * (LP_MAX_COLUMNS entries). *n_out gets the count. Fails like lp_column_lookup. */
int lp_columns_select(const lp_tree *tree, const char *const *ids, size_t n, const lp_column **out,
                      size_t *n_out);

/* The value cell for `fig` on a row showing `groups`: 1 and the value when there is one. Blank
 * (0) when the row does not carry the column's group or the tree lacks the column's data. */
int lp_column_value(const lp_column *col, const lp_tree *tree, const lp_figures *fig,
                    unsigned groups, double *out);

#endif
