/* export.h: the report in other formats (JSON, CSV, markdown, Chrome trace, HTML), reading JSON
 * reports back, and comparing two of them.
 *
 * Every exporter reads the finished lp_tree (and, for the trace and the HTML memory view, the
 * timeline) and never changes it. Run metadata travels as the JSON report's "run" object, so a
 * report loaded from a file renders exactly like the session that wrote it. */
#ifndef LP_EXPORT_H
#define LP_EXPORT_H

#include <jansson.h>
#include <stdio.h>

#include "layerprof.h"
#include "render.h"
#include "timeline.h"
#include "tree.h"

/* The JSON report's schema version (docs/json-schema.md). */
#define LP_JSON_SCHEMA_VERSION 1

/* What a session knows about its run, for the "run" object. Strings borrowed; NULL lists empty. */
typedef struct lp_run_meta {
    const char *model;
    const char *device;
    lp_mode mode;
    const char *libtorch_version;
    const char *layerprof_version;
    const char *date; /* ISO 8601 UTC: "2024-05-01T12:34:56Z" */
    uint64_t iterations;
    int warmup, threads;
    uint64_t seed;
    int memory, events, shapes, trace, trace_iterations;
    const char *const *inputs; /* specs as lp_input_spec_format writes them */
    size_t n_inputs;
    const char *const *paths;
    size_t n_paths;
    const char *const *notes;
    size_t n_notes;
    uint64_t dropped_events;
} lp_run_meta;

/* The "run" object (new reference), or NULL when out of memory. */
json_t *lp_export_run(const lp_run_meta *m);

/* The whole JSON report for `tree` with `run` (borrowed; NULL: an empty object). New reference,
 * NULL when out of memory. */
json_t *lp_export_report(const lp_tree *tree, const json_t *run);

/* Writes a JSON document the way every layerprof JSON file is written (2-space indent, keys in
 * the order they were added, a final newline), so the same document always gives the same bytes.
 */
int lp_json_write(const json_t *doc, FILE *out);

/* The renderers. `ro` NULL: lp_render_opts_init's defaults. `run` may be NULL (no title). Each
 * returns LP_OK, LP_ERR_NOMEM, or LP_ERR_IO when writing failed. */
int lp_render_json(const lp_tree *tree, const json_t *run, FILE *out);
int lp_render_csv(const lp_tree *tree, const lp_render_opts *ro, FILE *out);
int lp_render_markdown(const lp_tree *tree, const lp_render_opts *ro, const json_t *run, FILE *out);
/* LP_ERR_STATE when `tl` recorded nothing (the run had no `trace`). */
int lp_render_trace(const lp_tree *tree, const lp_timeline *tl, const json_t *run, FILE *out);
/* `tl` may be NULL or empty: the memory-over-time chart is then left out. */
int lp_render_html(const lp_tree *tree, const lp_timeline *tl, const json_t *run, FILE *out);

/* A node kind's name in the JSON report: "module", "region", "context", "session" (lp_node_kind);
 * NULL when out of range. */
const char *lp_node_kind_name(int kind);
/* The reverse; LP_ERR_NOT_FOUND (no message set) for any other name. */
int lp_node_kind_parse(const char *name, int *out);

/* A module or op row label for CSV and markdown: "name" or "name [shapes]". Returns a malloc'ed
 * string (NULL when out of memory). */
char *lp_export_op_label(const lp_tree *tree, int32_t op_row);

/* ISO 8601 UTC of `t` ("2024-05-01T12:34:56Z") into buf (at least 21 bytes). */
void lp_export_date(long long t, char *buf, size_t size);

/* Reports read back (report_json.c) ------------------------------------------------------------ */

/* Builds `r`'s tree and run from a parsed JSON report; used by lp_report_load and the tests. On
 * failure the message names the offending field. */
int lp_report_from_json(lp_report **out, const json_t *doc, const char *name_for_errors);
const lp_tree *lp_report_tree(const lp_report *r);
const json_t *lp_report_run(const lp_report *r);

/* diff.c: the tree of `after` with each module's change against `before`. */
int lp_diff_render(const lp_report *before, const lp_report *after, unsigned flags, FILE *out);

#endif
