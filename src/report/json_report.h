/* json_report.h: the JSON report (docs/json-schema.md): the run's metadata, writing the document
 * and reading it back. */
#ifndef LP_JSON_REPORT_H
#define LP_JSON_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "layerprof.h"
#include "model/node_info.h"
#include "model/tree.h"

/* The JSON report's schema version (docs/json-schema.md): 2 gives the per-call statistics as
 * std_ns where 1 had Welford's m2. The reader reads both. */
#define LP_JSON_SCHEMA_VERSION 2

/* What a session knows about its run, for the "run" object. Strings borrowed; NULL lists empty. */
typedef struct lp_run_meta {
    const char *model;
    const char *device;
    lp_mode mode;
    int aoti; /* an AOTInductor package: the mode is "aoti", whatever `mode` says */
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
    const char *const *labels; /* "NAME=VALUE" each, checked (base/labels.h) */
    size_t n_labels;
    const char *const *notes;
    size_t n_notes;
    uint64_t dropped_events;
    /* The profiled forwards' mean wall time until their device work was done (the device
     * synchronisation included); 0: not measured (the program's own forwards). */
    uint64_t forward_ns;
} lp_run_meta;

/* The run's labels ("NAME=VALUE" each) as the run object's "labels": {"NAME": "VALUE", ...}, in
 * order. New reference, NULL when out of memory. */
json_t *lp_export_labels(const char *const *labels, size_t n);

/* The "run" object (new reference), or NULL when out of memory. */
json_t *lp_export_run(const lp_run_meta *m);

/* The whole JSON report for `tree` with `run` (borrowed; NULL: an empty object). New reference,
 * NULL when out of memory. */
json_t *lp_export_report(const lp_tree *tree, const json_t *run);

/* Writes a JSON document the way every layerprof JSON file is written (2-space indent, keys in
 * the order they were added, a final newline), so the same document always gives the same bytes.
 */
int lp_json_write(const json_t *doc, FILE *out);

/* Reports read back (json_read.c) ------------------------------------------------------------ */

/* Builds `r`'s tree and run from a parsed JSON report; used by lp_report_load and the tests. On
 * failure the message names the offending field. */
int lp_report_from_json(lp_report **out, const json_t *doc, const char *name_for_errors);
const lp_tree *lp_report_tree(const lp_report *r);
const json_t *lp_report_run(const lp_report *r);

#endif
