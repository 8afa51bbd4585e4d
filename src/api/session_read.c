/* session_read.c: reading a session: its nodes, op rows and what the run did (the getters),
 * rendering it with the run metadata every export carries, and writing the outputs the options ask
 * for, under the file names a schedule's cycles give them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/session_internal.h"
#include "base/callback_file.h"
#include "base/error.h"
#include "base/out_size.h"
#include "base/units.h"
#include "config/schedule.h"
#include "model/node_info.h"
#include "report/json_report.h"
#include "report/render.h"

#define LP_TRACE_ITERATIONS 3 /* profiled iterations on the timeline when trace_iterations is 0 */

/* "report_%d.json" with the cycle number in place of the first "%d"; nothing else is a format. */
int session_cycle_file(const char *pattern, int cycle, char *buf, size_t size) {
    const char *at = strstr(pattern, "%d");
    int n = at ? snprintf(buf, size, "%.*s%d%s", (int)(at - pattern), pattern, cycle, at + 2)
               : snprintf(buf, size, "%s", pattern);
    if (n < 0 || (size_t)n >= size)
        return lp_error_set(LP_ERR_INVALID, "output file name too long: '%s'", pattern);
    return LP_OK;
}

int session_is_cycle_output(const lp_session *s, const lp_output_spec *o) {
    return lp_sched_on(&s->opts.schedule) && o->file && strstr(o->file, "%d");
}

int session_trace_cap(const lp_session *s) {
    return s->opts.trace_iterations ? s->opts.trace_iterations : LP_TRACE_ITERATIONS;
}

/* The trace, with each region span named by its path ("main/preprocess"). */
static int render_trace_with_regions(lp_session *s, const json_t *run, FILE *out) {
    lp_timeline *tl = lp_collector_timeline(s->collector);
    char **paths = NULL;
    size_t n = 0;
    int rc = lp_region_paths(s->collector, &paths, &n);
    if (rc) return rc;
    lp_timeline_name_regions(tl, (const char *const *)paths, n);
    rc = lp_render_trace(&s->tree, tl, run, out);
    lp_timeline_name_regions(tl, NULL, 0);
    free(paths);
    return rc;
}

/* The forward's arguments as text, one string per argument (a structured one spans several
 * entries). Releases with free_argument_texts. */
static size_t argument_texts(const lp_session *s, char **texts) {
    size_t n = 0;
    for (size_t i = 0; i < s->n_inputs; n++) {
        size_t used = lp_input_value_size(&s->inputs[i], s->n_inputs - i);
        int len = used ? lp_input_format(&s->inputs[i], used, NULL, 0) : -1;
        texts[n] = len >= 0 ? malloc((size_t)len + 1) : NULL;
        if (texts[n]) lp_input_format(&s->inputs[i], used, texts[n], (size_t)len + 1);
        i += used ? used : 1;
    }
    return n;
}

static void free_argument_texts(char **texts, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(texts[i]);
}

static int render_export(lp_session *s, lp_format format, const lp_render_opts *ro, FILE *out) {
    char *inputs[LP_MAX_INPUTS];
    size_t n_inputs = argument_texts(s, inputs);
    const char *input_ptrs[LP_MAX_INPUTS];
    for (size_t i = 0; i < n_inputs; i++)
        input_ptrs[i] = inputs[i] ? inputs[i] : "?";
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    lp_run_meta m = {.model = s->model_path,
                     .device = s->device,
                     .mode = s->opts.mode,
                     .aoti = s->pt2,
                     .libtorch_version = lp_torch_version(),
                     .layerprof_version = lp_version(),
                     .date = s->date,
                     .iterations = s->tree.iterations,
                     .warmup = s->opts.warmup,
                     .threads = s->opts.threads,
                     .seed = s->opts.seed,
                     .memory = s->opts.memory,
                     .events = s->opts.events,
                     .shapes = s->opts.shapes,
                     .trace = lp_collector_timeline(s->collector)->recorded,
                     .trace_iterations = session_trace_cap(s),
                     .inputs = input_ptrs,
                     .n_inputs = n_inputs,
                     .paths = s->opts.paths,
                     .n_paths = s->opts.n_paths,
                     .labels = s->opts.labels,
                     .n_labels = s->opts.n_labels,
                     .notes = ro->notes,
                     .n_notes = ro->n_notes,
                     .dropped_events = st.dropped + st.unbalanced,
                     .forward_ns = s->tree.iterations ? s->synced_ns / s->tree.iterations : 0};
    json_t *run = lp_export_run(&m);
    free_argument_texts(inputs, n_inputs);
    if (!run) return lp_error_set(LP_ERR_NOMEM, "out of memory describing the run");
    const lp_tree *t = NULL;
    int rc = format == LP_FORMAT_TRACE /* spans name module nodes: the module tree's */
                 ? render_trace_with_regions(s, run, out)
                 : session_report_tree(s, &t, "lp_session_render");
    if (!rc && format != LP_FORMAT_TRACE)
        rc = lp_render_format(format, t, lp_collector_timeline(s->collector), run, ro, out);
    json_decref(run);
    return rc;
}

int lp_session_render_to(lp_session *s, lp_format format, lp_write_fn write, void *payload) {
    if (!s || !write) return lp_error_set(LP_ERR_INVALID, "lp_session_render_to: NULL argument");
    lp_callback_sink sink = {write, payload, 0};
    FILE *f = lp_callback_file(&sink);
    if (!f) return lp_error_set(LP_ERR_NOMEM, "out of memory opening the write callback");
    return lp_callback_file_close(f, &sink, lp_session_render(s, format, f));
}

/* The exposition reads the module tree's shape and the collector's histograms, which forwards on
 * other threads write with atomic stores: a live session renders it while they run, so it merges
 * nothing then (what it shows needs no merge: docs/sampling.md). */
static int render_metrics(lp_session *s, FILE *out) {
    if (!s->live) {
        int rc = session_sync_report(s); /* FLOPs, for sessions that record them */
        if (rc) return rc;
    }
    if (s->rec.n_mounts > 1 || lp_region_count(s->collector))
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "the openmetrics format does not cover sessions with regions yet: "
                            "its series are per module of the model");
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.metrics_depth = s->opts.metrics_depth;
    lp_hist_source src = {s->collector, lp_collector_hist_read,
                          atomic_load_explicit(&s->forwards_seen, memory_order_relaxed),
                          atomic_load_explicit(&s->forwards_sampled, memory_order_relaxed)};
    ro.hist = &src;
    json_t *run = json_object();
    /* The run's labels go on every series: the same words as in its JSON reports. */
    if (!run || json_object_set_new(run, "model", json_string(s->model_path)) ||
        (s->opts.n_labels &&
         json_object_set_new(run, "labels", lp_export_labels(s->opts.labels, s->opts.n_labels)))) {
        json_decref(run);
        return lp_error_set(LP_ERR_NOMEM, "out of memory describing the run");
    }
    int rc = lp_render_format(LP_FORMAT_OPENMETRICS, &s->tree, NULL, run, &ro, out);
    json_decref(run);
    return rc;
}

int lp_session_render(lp_session *s, lp_format format, FILE *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_render: NULL argument");
    if (!lp_format_name(format))
        return lp_error_set(LP_ERR_UNSUPPORTED, "unknown output format %d", (int)format);
    if (format == LP_FORMAT_OPENMETRICS) return render_metrics(s, out);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.depth = s->opts.depth;
    ro.sort = s->opts.sort;
    ro.top = s->opts.top;
    ro.columns = s->opts.columns;
    ro.n_columns = s->opts.n_columns;
    ro.units = s->opts.units;
    ro.ascii = s->opts.ascii;
    ro.name_width = s->opts.name_width;
    ro.prune = s->opts.prune;
    ro.show_ops = s->opts.events;
    const lp_tree *t = NULL;
    int rc = session_report_tree(s, &t, "lp_session_render");
    if (rc) return rc;
    lp_note_list lines;
    lp_note_list_init(&lines);
    rc = session_report_notes(s, t, &lines);
    if (!rc) {
        ro.notes = (const char *const *)lines.lines;
        ro.n_notes = lines.n;
        rc = format != LP_FORMAT_TREE ? render_export(s, format, &ro, out)
                                      : lp_render_tree(t, &ro, out);
    }
    lp_note_list_free(&lines);
    return rc;
}

/* A report goes to "FILE.lp-tmp-PID" beside FILE and is renamed over it once complete, so a run
 * killed while writing (or a full disk) never leaves a truncated report where the previous one
 * was. Only for a regular file or a new one: /dev/null, a FIFO or a terminal is written in place
 * (renaming over it would replace the device). *tmp is "" when writing in place. */
static FILE *open_report(const char *file, char *tmp, size_t size) {
    struct stat st;
    tmp[0] = '\0';
    int regular = stat(file, &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode);
    if (regular && (size_t)snprintf(tmp, size, "%s.lp-tmp-%ld", file, (long)getpid()) < size) {
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
        FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (f) return f;
        if (fd >= 0) close(fd);
        if (fd >= 0) unlink(tmp);
    }
    tmp[0] = '\0'; /* a directory we cannot create in: write the file itself */
    return fopen(file, "w");
}

int session_write_one(lp_session *s, const lp_output_spec *o) {
    int to_stdout = !o->file || strcmp(o->file, "-") == 0;
    char tmp[LP_PATH_MAX + 32];
    FILE *f = to_stdout ? stdout : open_report(o->file, tmp, sizeof tmp);
    if (!f) return lp_error_set(LP_ERR_IO, "cannot write '%s': %s", o->file, strerror(errno));
    int rc = lp_session_render(s, o->format, f);
    int err = ferror(f) ? errno : 0;
    /* On disk before the rename: a reader of the directory (node_exporter's textfile collector)
     * then sees the previous file or this one whole, even across a crash. */
    if (!rc && !err && !to_stdout && tmp[0] && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        err = errno;
    if (to_stdout) {
        if (fflush(f) != 0 && !rc)
            rc = lp_error_set(LP_ERR_IO, "cannot write the report: %s", strerror(errno));
    } else if (fclose(f) != 0 && !rc) {
        rc = lp_error_set(LP_ERR_IO, "cannot write '%s': %s", o->file, strerror(errno));
    }
    if (!rc && err) rc = lp_error_set(LP_ERR_IO, "cannot write the report: %s", strerror(err));
    if (!to_stdout && tmp[0]) {
        if (!rc && rename(tmp, o->file) != 0)
            rc = lp_error_set(LP_ERR_IO, "cannot write '%s': %s", o->file, strerror(errno));
        if (rc) unlink(tmp); /* the previous report, if any, stays as it was */
    }
    return rc;
}

int lp_session_write_outputs(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_write_outputs: session is NULL");
    int rc = LP_OK;
    if (!s->opts.n_outputs) {
        lp_output_spec o = {LP_FORMAT_TREE, NULL};
        rc = session_write_one(s, &o);
    }
    /* Outputs named per cycle were written as each cycle completed. */
    for (size_t i = 0; i < s->opts.n_outputs && !rc; i++)
        if (!session_is_cycle_output(s, &s->outputs[i])) rc = session_write_one(s, &s->outputs[i]);
    if (!rc && s->opts.summary) {
        lp_output_spec o = {LP_FORMAT_SUMMARY, NULL};
        if (fputc('\n', stdout) == EOF) return lp_error_set(LP_ERR_IO, "cannot write the summary");
        rc = session_write_one(s, &o);
    }
    return rc;
}

int lp_session_node_count(lp_session *s, size_t *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node_count: NULL argument");
    const lp_tree *t;
    int rc = session_report_tree(s, &t, "lp_session_node_count");
    if (!rc) *out = t->n_nodes;
    return rc;
}

int lp_session_node_sized(lp_session *s, size_t index, lp_node_info *out, size_t size) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node: NULL argument");
    lp_node_info full;
    int rc = lp_out_size_check(size, LP_NODE_INFO_SIZE_1, "lp_node_info", "lp_session_node");
    const lp_tree *t;
    if (!rc) rc = session_report_tree(s, &t, "lp_session_node");
    if (!rc) rc = lp_tree_node_info(t, index, &full, "lp_session_node");
    if (!rc) lp_out_copy(out, size, &full, sizeof full);
    return rc;
}

int lp_session_find(lp_session *s, const char *path, size_t *out) {
    if (!s || !path || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_find: NULL argument");
    const lp_tree *t;
    int rc = session_report_tree(s, &t, "lp_session_find");
    if (rc) return rc;
    int32_t i = lp_tree_find(t, path);
    if (i < 0) return lp_error_set(LP_ERR_NOT_FOUND, "no module at path '%s'", path);
    *out = (size_t)i;
    return LP_OK;
}

int lp_session_frozen(const lp_session *s, int *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_frozen: NULL argument");
    *out = s->tree.n_nodes == 1;
    return LP_OK;
}

int lp_session_op_count(lp_session *s, size_t *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_op_count: NULL argument");
    const lp_tree *t;
    int rc = session_report_tree(s, &t, "lp_session_op_count");
    if (!rc) *out = t->n_ops;
    return rc;
}

int lp_session_op_sized(lp_session *s, size_t index, lp_op_info *out, size_t size) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_op: NULL argument");
    lp_op_info full;
    int rc = lp_out_size_check(size, LP_OP_INFO_SIZE_1, "lp_op_info", "lp_session_op");
    const lp_tree *t;
    if (!rc) rc = session_report_tree(s, &t, "lp_session_op");
    if (!rc) rc = lp_tree_op_info(t, index, &full);
    if (!rc) lp_out_copy(out, size, &full, sizeof full);
    return rc;
}

int lp_session_run_info_sized(lp_session *s, lp_run_info *caller, size_t size) {
    if (!s || !caller) return lp_error_set(LP_ERR_INVALID, "lp_session_run_info: NULL argument");
    int rc = lp_out_size_check(size, LP_RUN_INFO_SIZE_1, "lp_run_info", "lp_session_run_info");
    if (rc) return rc;
    lp_run_info full, *out = &full;
    memset(out, 0, sizeof *out);
    const lp_tree *t;
    rc = session_report_tree(
        s, &t, "lp_session_run_info"); /* merges what was recorded since the last read */
    if (rc) return rc;
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    out->iterations = s->tree.iterations;
    out->driver_ns = s->driver_ns;
    out->synced_ns = s->synced_ns;
    out->events = st.events;
    out->dropped = st.dropped + st.unbalanced;
    lp_out_copy(caller, size, &full, sizeof full);
    return LP_OK;
}

const char *lp_torch_version(void) {
    return lps_torch_version();
}
