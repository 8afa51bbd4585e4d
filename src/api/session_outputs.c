/* session_outputs.c: rendering a session: its notes, the run metadata every export carries, and
 * writing the outputs the options ask for, under the file names a schedule's cycles give them. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/session_internal.h"
#include "model/noise.h"
#include "base/callback_file.h"
#include "base/error.h"
#include "base/units.h"
#include "config/schedule.h"
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
                     .notes = ro->notes,
                     .n_notes = ro->n_notes,
                     .dropped_events = st.dropped + st.unbalanced,
                     .forward_ns = s->tree.iterations ? s->synced_ns / s->tree.iterations : 0};
    json_t *run = lp_export_run(&m);
    free_argument_texts(inputs, n_inputs);
    if (!run) return lp_error_set(LP_ERR_NOMEM, "out of memory describing the run");
    int rc = format == LP_FORMAT_TRACE /* spans name module nodes: the module tree's */
                 ? render_trace_with_regions(s, run, out)
                 : lp_render_format(format, session_report_tree(s),
                                    lp_collector_timeline(s->collector), run, ro, out);
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

/* On a CUDA device: the forward's true time, which no CPU column shows. A module's CPU time ends
 * when its last kernel was launched, so the root's CPU total can be well under the forward's:
 * measured on an H200, resnet50 at batch 32 read 3.0 ms at the root for a 5.3 ms forward. */
static int forward_note(const lp_session *s, const lp_tree *t, char *buf, size_t size) {
    if (!s->device || strncmp(s->device, "cuda", 4) != 0 || !s->synced_ns || !t->iterations ||
        !t->n_nodes)
        return 0;
    double it = (double)t->iterations;
    char fwd[32], kern[32];
    lp_format_time((double)s->synced_ns / it, s->opts.units, fwd, sizeof fwd);
    int n = snprintf(buf, size,
                     "forward: %s per iteration on %s, until its device work was done (the CPU "
                     "columns are host time: a module's ends when its last kernel was launched)",
                     fwd, s->device);
    if (t->has_cuda_time && n > 0 && (size_t)n < size) {
        lp_format_time((double)t->nodes[0].fig.cuda_total_ns / it, s->opts.units, kern,
                       sizeof kern);
        snprintf(buf + n, size - (size_t)n, "; CUDA time: %s", kern);
    }
    return 1;
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
    if (!run || json_object_set_new(run, "model", json_string(s->model_path))) {
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
    ro.prune = s->opts.prune;
    ro.show_ops = s->opts.events;
    const char *notes[LP_MAX_NOTES + 3 + 2 + 6 + 5];
    size_t n = 0;
    for (size_t i = 0; i < s->n_notes; i++)
        notes[n++] = s->notes[i];
    char forward[256];
    if (forward_note(s, session_report_tree(s), forward, sizeof forward)) notes[n++] = forward;
    char model_notes[3][256];
    size_t n_model = session_model_notes(s, model_notes, 3);
    for (size_t i = 0; i < n_model; i++)
        notes[n++] = model_notes[i];
    char noise_notes[2][256]; /* whether the ranking is within the run's own noise */
    size_t n_noise = lp_noise_notes(session_report_tree(s), noise_notes, 2);
    for (size_t i = 0; i < n_noise; i++)
        notes[n++] = noise_notes[i];
    char cuda_notes[6][256];
    size_t n_cuda = lp_cuda_prof_notes(s->cuda, &cuda_notes[0][0], sizeof cuda_notes[0], 6);
    for (size_t i = 0; i < n_cuda; i++)
        notes[n++] = cuda_notes[i];
    lps_pt2_info pt2;
    char unplaced[200];
    if (!s->attached && lps_model_pt2_info(s->model, &pt2) == LP_OK && pt2.unplaced) {
        snprintf(unplaced, sizeof unplaced,
                 "warning: %llu kernel calls did not follow the package's order as its module map "
                 "gives it: they are timed in the root",
                 (unsigned long long)pt2.unplaced);
        notes[n++] = unplaced;
    }
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    char extra[2][200];
    if (st.dropped || st.unbalanced) {
        snprintf(
            extra[0], sizeof extra[0],
            "warning: %llu events could not be attributed (%llu unbalanced); figures may be low",
            (unsigned long long)(st.dropped + st.unbalanced), (unsigned long long)st.unbalanced);
        notes[n++] = extra[0];
    }
    const lp_tree *t = session_report_tree(s);
    char partial[160];
    if (s->partial_cycle) {
        snprintf(partial, sizeof partial,
                 "note: schedule cycle %d has not completed: these figures are of its steps so far",
                 s->cycles_done + 1);
        notes[n++] = partial;
    }
    if (!t->iterations) {
        snprintf(extra[1], sizeof extra[1], "note: no profiled iteration completed");
        notes[n++] = extra[1];
    }
    ro.notes = notes;
    ro.n_notes = n;
    if (format != LP_FORMAT_TREE) return render_export(s, format, &ro, out);
    return lp_render_tree(t, &ro, out);
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
