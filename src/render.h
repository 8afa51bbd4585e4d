/* render.h: turning a finished lp_tree into text. Renderers only read the tree. */
#ifndef LP_RENDER_H
#define LP_RENDER_H

#include <stdio.h>

#include "layerprof.h"
#include "tree.h"

/* Display choices, taken from lp_options. Pointers borrowed. */
typedef struct lp_render_opts {
    int depth;        /* -1: no limit */
    const char *sort; /* column id, NULL: model order */
    int top;          /* hottest-modules list length, 0: none */
    const char *const *columns;
    size_t n_columns; /* 0: default columns for what the tree holds */
    lp_units units;
    int ascii;
    int show_ops; /* op rows under modules (when the tree has them) */
    const char *const *notes; /* lines printed under the table (mode, warnings) */
    size_t n_notes;
} lp_render_opts;

/* Defaults: no depth limit, model order, no top list, default columns, auto units, box glyphs,
 * show_ops 1 (op rows appear only when the tree recorded them). */
void lp_render_opts_init(lp_render_opts *ro);

/* torchprof's box-drawn table, then a Total row, the top list and the notes. `ro` NULL: defaults.
 * Op labels are "name" or "name [shape]" with shape_names[shapes] inside the brackets.
 * Checks `ro` first (nothing is written when it fails); LP_ERR_IO when writing `out` failed. */
int lp_render_tree(const lp_tree *tree, const lp_render_opts *ro, FILE *out);

/* torchtimer's summary (LP_FORMAT_SUMMARY): a markdown table per context titled
 * "###### ROOT::CONTEXT: (total runtime Ts)", a row per region (and per forward run outside
 * regions), most total time first; a tree without regions gives one table of its modules. `ro` is
 * not used (NULL is fine). LP_ERR_IO when writing `out` failed. */
int lp_render_summary(const lp_tree *tree, const lp_render_opts *ro, FILE *out);

/* Checks column ids and the sort key against the column table; the error names the closest id. */
int lp_render_check_opts(const lp_render_opts *ro);

/* Unit formatting, as torchprof prints: "49.693us", "1.808ms", "1.234s"; "756.50 Kb", "0 b".
 * Return the length of the full text, as snprintf does (it is truncated when >= size). */
int lp_format_time(double ns, lp_units units, char *buf, size_t size);
int lp_format_bytes(double bytes, char *buf, size_t size);

#endif
