/* render.h: turning a finished lp_tree into text, one renderer per format. Renderers only read
 * the tree (and, for the trace and the HTML memory view, the timeline). Run metadata travels as
 * the JSON report's "run" object (json_report.h), so a report loaded from a file renders exactly
 * like the session that wrote it. */
#ifndef LP_RENDER_H
#define LP_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "collect/timeline.h"
#include "layerprof.h"
#include "model/histo.h"
#include "model/tree.h"
#include "report/columns.h"

/* Display choices, taken from lp_options. Pointers borrowed. */
typedef struct lp_render_opts {
    int depth;        /* -1: no limit */
    const char *sort; /* column id, NULL: model order */
    int top;          /* hottest-modules list length, 0: none */
    const char *const *columns;
    size_t n_columns; /* 0: default columns for what the tree holds */
    lp_units units;
    int ascii;
    int prune;      /* leave out unprofiled modules holding no profiled one */
    int show_ops;   /* op rows under modules (when the tree has them) */
    int name_width; /* tree and markdown: op names longer than this are shortened (0: never) */
    const char *const *notes; /* lines printed under the table (mode, warnings) */
    size_t n_notes;
    /* LP_FORMAT_OPENMETRICS: modules deeper than metrics_depth are folded (-1: no limit; the
     * default 1); the model label (NULL: the run's "model", its file name without directory
     * and extension); the per-call histograms (NULL: the tree's sums alone). */
    int metrics_depth;
    const char *metrics_model;
    const lp_hist_source *hist;
} lp_render_opts;

/* ---- render_setup.c: what every renderer shares ------------------------------------------- */

/* Defaults: no depth limit, model order, no top list, default columns, auto units, box glyphs,
 * show_ops 1 (op rows appear only when the tree recorded them). */
void lp_render_opts_init(lp_render_opts *ro);

/* Checks column ids and the sort key against the column table; the error names the closest id. */
int lp_render_check_opts(const lp_render_opts *ro);

/* The first lines of every renderer: LP_ERR_INVALID ("render: tree and output are required")
 * unless both are given. */
int lp_render_require(const lp_tree *tree, FILE *out);

/* The opening of the renderers that take display options (tree, CSV, markdown): *ro NULL becomes
 * lp_render_opts_init's defaults, kept in *defaults; then lp_render_require, lp_render_check_opts,
 * and the columns to draw into cols (LP_MAX_COLUMNS entries) and *n_cols. Nothing is written. */
int lp_render_begin(const lp_tree *tree, FILE *out, const lp_render_opts **ro,
                    lp_render_opts *defaults, const lp_column **cols, size_t *n_cols);

/* A module or op row label for CSV and markdown: "name" or "name [shapes]", the name shortened
 * to `name_width` (lp_render_name_cut; 0: in full). Returns a malloc'ed string (NULL when out of
 * memory). */
char *lp_render_op_label(const lp_tree *tree, int32_t op_row, int name_width, int ascii);

/* A module row's label: its name, and for a package's module whose work Inductor fused into a
 * kernel placed in another module, where its time went: "bn1 [fused into layer1.0: KERNEL]"
 * ("+ N more" when more kernels took some; the root by its name), the kernel's name shortened to
 * `name_width` (0: in full). Returns a malloc'ed string (NULL when out of memory). */
char *lp_render_module_label(const lp_tree *tree, int32_t node, int name_width, int ascii);

/* Whether `name` is shortened to `width` characters (lp_render_opts.name_width; under 16 counts
 * as 16, 0 never shortens): its first *head bytes, then lp_render_ellipsis(ascii) ("…", or "..."
 * with ASCII glyphs), then its last
 * *tail bytes. Both ends are kept because an AOTInductor kernel's name says what it is at its
 * start (cpp_fused_, triton_poi_) and which one at its end (_1, [fuses bn1 + relu]). Names with
 * bytes outside ASCII are never cut (a byte count is then not a character count). */
int lp_render_name_cut(const char *name, int width, int ascii, size_t *head, size_t *tail);
const char *lp_render_ellipsis(int ascii);

/* ---- the renderers, one file each ------------------------------------------------------------ */

/* torchprof's box-drawn table, then a Total row, the top list and the notes. `ro` NULL: defaults.
 * Op labels are "name" or "name [shape]" with shape_names[shapes] inside the brackets.
 * Checks `ro` first (nothing is written when it fails); LP_ERR_IO when writing `out` failed. */
int lp_render_tree(const lp_tree *tree, const lp_render_opts *ro, FILE *out);

/* torchtimer's summary (LP_FORMAT_SUMMARY): a markdown table per context titled
 * "###### ROOT::CONTEXT: (total runtime Ts)", a row per region (and per forward run outside
 * regions), most total time first; a tree without regions gives one table of its modules. `ro` is
 * not used (NULL is fine). LP_ERR_IO when writing `out` failed. */
int lp_render_summary(const lp_tree *tree, const lp_render_opts *ro, FILE *out);

/* The renderers below: `ro` NULL means lp_render_opts_init's defaults; `run` may be NULL (no
 * title). Each returns LP_OK, LP_ERR_NOMEM, or LP_ERR_IO when writing failed. */
int lp_render_json(const lp_tree *tree, const json_t *run, FILE *out);
int lp_render_csv(const lp_tree *tree, const lp_render_opts *ro, FILE *out);

/* One CSV field: as is, or quoted (RFC 4180) when it holds a comma, a quote or a line break. */
void lp_csv_field(FILE *out, const char *s);
int lp_render_markdown(const lp_tree *tree, const lp_render_opts *ro, const json_t *run, FILE *out);
/* LP_ERR_STATE when `tl` recorded nothing (the run had no `trace`). */
int lp_render_trace(const lp_tree *tree, const lp_timeline *tl, const json_t *run, FILE *out);
/* `tl` may be NULL or empty: the memory-over-time chart is then left out. */
int lp_render_html(const lp_tree *tree, const lp_timeline *tl, const json_t *run, FILE *out);

/* Prometheus' text exposition (LP_FORMAT_OPENMETRICS, render_openmetrics.c): docs/sampling.md.
 * Histograms come from ro->hist when given (a session), else from the tree's sums alone (a
 * report read back): then each histogram is its +Inf bucket, _sum and _count. */
int lp_render_openmetrics(const lp_tree *tree, const json_t *run, const lp_render_opts *ro,
                          FILE *out);

/* ---- formats.c: the table of formats {format, names, extensions, renderer} --------------------
 */

/* The one dispatch from a format to its renderer, for sessions and reports read back alike.
 * `tl` NULL: no timeline (LP_FORMAT_TRACE then fails with LP_ERR_UNSUPPORTED and a message). */
int lp_render_format(lp_format format, const lp_tree *tree, const lp_timeline *tl,
                     const json_t *run, const lp_render_opts *ro, FILE *out);

#endif
