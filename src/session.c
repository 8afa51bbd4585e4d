/* session.c: one profiling session: load, warm up, run the profiled forwards, report.
 * The only core file that talks to the shim. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <time.h>

#include <stdatomic.h>

#include "clock.h"
#include "collector.h"
#include "compose.h"
#include "cupti_collector.h"
#include "error.h"
#include "node_info.h"
#include "export.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "paths.h"
#include "render.h"
#include "schedule.h"
#include "sysmem.h"
#include "tree.h"

_Static_assert((int)LPS_DEV_CPU == (int)LP_DEV_CPU && (int)LPS_DEV_CUDA == (int)LP_DEV_CUDA,
               "device ids agree");

#define LP_MAX_NOTES 8
#define LP_MAX_FORWARD_REGIONS 16 /* distinct regions a session's forwards may run in */
#define LP_MAX_MOUNTS (LP_MAX_FORWARD_REGIONS + 1) /* and forwards outside every region */

struct lp_session {
    lp_options opts; /* pointers below are the session's own copies */
    char *model_path, *device, *sort;
    char **paths, **columns;
    lp_output_spec *outputs;
    char **output_files;
    lp_input_spec inputs[LP_MAX_INPUTS];
    size_t n_inputs;

    lps_model *model;
    lps_inputs *tensors;
    lp_tree tree;
    lp_collector *collector;
    uint8_t *selected;
    uint64_t driver_ns;
    char notes[LP_MAX_NOTES][256];
    size_t n_notes;
    char date[32];      /* ISO 8601 UTC of the last lp_session_run (or of the open) */
    int trace_done;     /* profiled iterations recorded on the timeline so far */
    lp_cuda_prof *cuda; /* CUDA time per module and NVTX ranges; NULL when neither is on */
    int capture;        /* lp_session_forward_output: keep the profiled forward's output */
    void *capture_bytes;
    size_t capture_size;

    /* Regions (compose.h): the module tree of forwards run in each region, mounts[0] being
     * s->tree for forwards outside every region; the others are owned. */
    lp_mount mounts[LP_MAX_MOUNTS];
    size_t n_mounts;
    lp_tree composed;       /* the report when regions exist */
    _Atomic int dirty;      /* events since the last merge */
    int implicit_iteration; /* recorded before any step: counted as one iteration until a step */
    int32_t main_context;   /* region id of context "main", -1 until used */
    _Atomic int enabled;    /* lp_session_enable */
    _Atomic int sched_profiled; /* the current step is profiled by the schedule */
    uint64_t step;              /* steps completed (lp_session_step, or run's forwards) */
    int hooks_on;               /* the shim's hooks are installed on the driving thread */
    int cycles_done;
    /* A cycle's first warm-up or active step started: what the session holds is dropped when
     * that cycle first records, so the last completed cycle stays readable until then. */
    int clear_pending;
    int partial_cycle; /* the figures held are of a cycle that has not completed */
    int step_traced;   /* the current step is recorded on the timeline */
};

static int cycle_file(const char *pattern, int cycle, char *buf, size_t size);
static int start_step(lp_session *s);
static const lp_tree *report_tree(const lp_session *s);

static char *dup_or_null(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static char **dup_list(const char *const *list, size_t n) {
    if (!n) return NULL;
    char **d = calloc(n, sizeof *d);
    if (!d) return NULL;
    for (size_t i = 0; i < n; i++)
        d[i] = dup_or_null(list[i]);
    return d;
}

static void free_list(char **list, size_t n) {
    if (!list) return;
    for (size_t i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

/* Copies what the session keeps, so the caller's strings may go away after open. */
static int copy_options(lp_session *s, const lp_options *o) {
    s->opts = *o;
    s->model_path = dup_or_null(o->model_path);
    s->device = dup_or_null(o->device ? o->device : "cpu");
    s->sort = dup_or_null(o->sort);
    s->paths = dup_list(o->paths, o->n_paths);
    s->columns = dup_list(o->columns, o->n_columns);
    if (o->n_outputs) {
        s->outputs = calloc(o->n_outputs, sizeof *s->outputs);
        s->output_files = calloc(o->n_outputs, sizeof *s->output_files);
        if (!s->outputs || !s->output_files) return lp_error_set(LP_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < o->n_outputs; i++) {
            s->outputs[i] = o->outputs[i];
            s->output_files[i] = dup_or_null(o->outputs[i].file);
            s->outputs[i].file = s->output_files[i];
        }
    }
    s->opts.model_path = s->model_path;
    s->opts.device = s->device;
    s->opts.sort = s->sort;
    s->opts.paths = (const char *const *)s->paths;
    s->opts.columns = (const char *const *)s->columns;
    s->opts.outputs = s->outputs;
    s->opts.inputs = NULL;
    if (!s->model_path || !s->device || (o->sort && !s->sort) || (o->n_paths && !s->paths) ||
        (o->n_columns && !s->columns))
        return lp_error_set(LP_ERR_NOMEM, "out of memory");
    return LP_OK;
}

static void add_note(lp_session *s, const char *fmt, const char *arg) {
    if (s->n_notes < LP_MAX_NOTES) snprintf(s->notes[s->n_notes++], sizeof s->notes[0], fmt, arg);
}

/* A report that cannot be written should fail before the run, not after minutes of profiling. */
static int check_writable(const char *file) {
    if (!file || strcmp(file, "-") == 0) return LP_OK;
    struct stat st;
    /* access() says yes to a directory, and to anything for root: a directory must be named. */
    if (stat(file, &st) == 0 && S_ISDIR(st.st_mode))
        return lp_error_set(LP_ERR_IO, "cannot write '%s': %s", file, strerror(EISDIR));
    if (access(file, F_OK) == 0) {
        if (access(file, W_OK) != 0)
            return lp_error_set(LP_ERR_IO, "cannot write '%s': %s", file, strerror(errno));
        return LP_OK;
    }
    char *copy = dup_or_null(file);
    if (!copy) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    const char *dir = dirname(copy);
    int ok = access(dir, W_OK) == 0;
    int err = errno;
    free(copy);
    return ok ? LP_OK : lp_error_set(LP_ERR_IO, "cannot write '%s': %s", file, strerror(err));
}

/* The model's recorded inputs ("layerprof.inputs": one spec per line) when none were given. */
static int default_inputs(lp_session *s) {
    const char *text = lps_model_default_inputs(s->model);
    if (!text)
        return lp_error_set(
            LP_ERR_INVALID,
            "'%s' records no input shape: give one with --input SHAPE[:DTYPE] (e.g. 1x3x224x224)",
            s->model_path);
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        if (len) {
            char line[512];
            if (len >= sizeof line || s->n_inputs == LP_MAX_INPUTS)
                return lp_error_set(LP_ERR_MODEL, "'%s': bad recorded inputs", s->model_path);
            memcpy(line, text, len);
            line[len] = '\0';
            int rc = lp_input_spec_parse(line, &s->inputs[s->n_inputs]);
            if (rc) return rc;
            s->n_inputs++;
        }
        text += len + (nl ? 1 : 0);
    }
    return LP_OK;
}

/* Linux overcommits: an input larger than the memory available would be OOM-killed later. */
static int check_input_sizes(const lp_session *s) {
    int64_t avail = lp_mem_available();
    int64_t total = 0;
    for (size_t i = 0; i < s->n_inputs; i++) {
        int64_t b = lp_input_spec_bytes(&s->inputs[i]);
        total = b > INT64_MAX - total ? INT64_MAX : total + b;
    }
    /* Random inputs are made as float32/int64 first, then converted: count twice. */
    if (avail > 0 && total > avail / 2) {
        char need[32], have[32];
        lp_format_bytes((double)total, need, sizeof need);
        lp_format_bytes((double)avail, have, sizeof have);
        return lp_error_set(LP_ERR_NOMEM, "the inputs need %s but only %s of memory is available",
                            need, have);
    }
    return LP_OK;
}

static int build_tree(lp_session *s) {
    int rc = lp_tree_init(&s->tree);
    size_t n = lps_model_module_count(s->model);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        const char *path, *cls;
        int32_t parent;
        rc = lps_model_module(s->model, i, &path, &cls, &parent);
        if (rc == LP_OK) rc = lp_tree_add(&s->tree, path, cls, parent);
        if (rc >= 0) s->tree.nodes[rc].container = !lps_model_module_has_forward(s->model, i);
    }
    if (rc < 0)
        return rc == LP_ERR_RUNTIME || rc == LP_ERR_INVALID
                   ? lp_error_set(rc, "%s", lps_error_last())
                   : rc;
    return LP_OK;
}

/* Copies the shim's message into the public error, keeping the code. */
static int shim_error(int rc) {
    return lp_error_set(rc, "%s", lps_error_last());
}

/* The collector's describer for a new (parent, op, shapes) row: the op being started. */
static int describe_shapes(void *payload, char *buf, size_t size) {
    (void)payload;
    return lps_op_input_shapes(buf, size);
}

/* Exports (export.h): the timeline, progress, and the run metadata every export carries ----- */

#define LP_TRACE_ITERATIONS 3 /* profiled iterations on the timeline when trace_iterations is 0 */

static int trace_cap(const lp_session *s) {
    return s->opts.trace_iterations ? s->opts.trace_iterations : LP_TRACE_ITERATIONS;
}

/* A timeline is recorded when asked for, or when an output needs it (a trace). */
static int wants_timeline(const lp_options *o) {
    int want = o->trace;
    for (size_t i = 0; i < o->n_outputs && o->outputs; i++)
        want |= o->outputs[i].format == LP_FORMAT_TRACE;
    return want;
}

static void progress(const lp_session *s, lp_phase phase, int done, int total) {
    if (!s->opts.progress) return;
    lp_progress p = {phase, done, total};
    s->opts.progress(&p, s->opts.progress_payload);
}

/* After a run's merge: what the timeline covers, and a note when its buffers filled up. */
static void timeline_done(lp_session *s) {
    lp_timeline *tl = lp_collector_timeline(s->collector);
    if (!tl->recorded) return;
    tl->iterations = (uint64_t)s->trace_done;
    tl->iterations_of = s->tree.iterations;
    if (tl->lost_spans || tl->lost_mem) {
        for (size_t i = 0; i < s->n_notes; i++)
            if (strncmp(s->notes[i], "note: the trace buffer", 22) == 0) return;
        char msg[200];
        snprintf(msg, sizeof msg,
                 "%llu spans and %llu memory samples were not recorded: a thread's buffer was full",
                 (unsigned long long)tl->lost_spans, (unsigned long long)tl->lost_mem);
        add_note(s, "note: the trace buffer filled up; %s", msg);
    }
}

/* The trace, with each region span named by its path ("main/preprocess"). */
static int render_trace_with_regions(lp_session *s, const json_t *run, FILE *out) {
    lp_timeline *tl = lp_collector_timeline(s->collector);
    size_t n = lp_region_count(s->collector);
    char **paths = n ? calloc(n, sizeof *paths) : NULL;
    int rc = n && !paths ? lp_error_set(LP_ERR_NOMEM, "out of memory") : LP_OK;
    for (size_t i = 0; i < n && !rc; i++) { /* a parent region always has a lower id */
        const lp_region_entry *e = lp_region_get(s->collector, (int32_t)i);
        size_t len = strlen(e->name) + (e->parent >= 0 ? strlen(paths[e->parent]) + 1 : 0) + 1;
        if (!(paths[i] = malloc(len))) {
            rc = lp_error_set(LP_ERR_NOMEM, "out of memory");
            break;
        }
        if (e->parent >= 0)
            snprintf(paths[i], len, "%s/%s", paths[e->parent], e->name);
        else
            snprintf(paths[i], len, "%s", e->name);
    }
    tl->region_paths = (const char *const *)paths;
    tl->n_region_paths = rc ? 0 : n;
    if (!rc) rc = lp_render_trace(&s->tree, tl, run, out);
    tl->region_paths = NULL;
    tl->n_region_paths = 0;
    for (size_t i = 0; i < n && paths; i++)
        free(paths[i]);
    free(paths);
    return rc;
}

static int render_export(lp_session *s, lp_format format, const lp_render_opts *ro, FILE *out) {
    char inputs[LP_MAX_INPUTS][LP_PATH_MAX + 64];
    const char *input_ptrs[LP_MAX_INPUTS];
    for (size_t i = 0; i < s->n_inputs; i++) {
        lp_input_spec_format(&s->inputs[i], inputs[i], sizeof inputs[i]);
        input_ptrs[i] = inputs[i];
    }
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    lp_run_meta m = {.model = s->model_path,
                     .device = s->device,
                     .mode = s->opts.mode,
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
                     .trace_iterations = trace_cap(s),
                     .inputs = input_ptrs,
                     .n_inputs = s->n_inputs,
                     .paths = s->opts.paths,
                     .n_paths = s->opts.n_paths,
                     .notes = ro->notes,
                     .n_notes = ro->n_notes,
                     .dropped_events = st.dropped + st.unbalanced};
    json_t *run = lp_export_run(&m);
    if (!run) return lp_error_set(LP_ERR_NOMEM, "out of memory describing the run");
    const lp_timeline *tl = lp_collector_timeline(s->collector);
    const lp_tree *t = report_tree(s);
    int rc;
    switch (format) {
    case LP_FORMAT_JSON:
        rc = lp_render_json(t, run, out);
        break;
    case LP_FORMAT_CSV:
        rc = lp_render_csv(t, ro, out);
        break;
    case LP_FORMAT_MARKDOWN:
        rc = lp_render_markdown(t, ro, run, out);
        break;
    case LP_FORMAT_TRACE: /* spans name module nodes: the module tree's */
        rc = render_trace_with_regions(s, run, out);
        break;
    case LP_FORMAT_HTML:
        rc = lp_render_html(t, tl, run, out);
        break;
    case LP_FORMAT_SUMMARY:
        rc = lp_render_summary(t, ro, out);
        break;
    default:
        rc = lp_render_tree(t, ro, out);
        break;
    }
    json_decref(run);
    return rc;
}

int lp_session_open(lp_session **out, const lp_options *opts) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_session_open: out is NULL");
    *out = NULL;
    int rc = lp_options_validate(opts);
    if (rc) return rc;
    if (opts->trace_iterations < 0)
        return lp_error_set(LP_ERR_INVALID,
                            "trace_iterations must be 0 (default: 3) or more, not %d",
                            opts->trace_iterations);
    for (size_t i = 0; i < opts->n_outputs; i++)
        if ((rc = check_writable(opts->outputs[i].file))) return rc;

    if (lp_sched_on(&opts->schedule))
        for (size_t i = 0; i < opts->n_outputs; i++)
            if (opts->outputs[i].file && strstr(opts->outputs[i].file, "%d")) {
                char first[LP_PATH_MAX];
                if ((rc = cycle_file(opts->outputs[i].file, 1, first, sizeof first)) ||
                    (rc = check_writable(first)))
                    return rc;
            }

    lp_session *s = calloc(1, sizeof *s);
    if (!s) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    s->main_context = -1;
    atomic_store(&s->enabled, 1);
    if ((rc = copy_options(s, opts))) goto fail;

    lps_set_verbose(opts->verbose);
    if ((rc = lps_set_threads(opts->threads))) {
        rc = shim_error(rc);
        goto fail;
    }
    if ((rc = lps_cuda_check(s->device))) { /* "CUDA is not available: ..." before loading */
        rc = shim_error(rc);
        goto fail;
    }
    if ((rc = lps_model_load(s->model_path, s->device, opts->mode == LP_MODE_GRAPH, &s->model))) {
        rc = shim_error(rc);
        goto fail;
    }
    if ((rc = build_tree(s))) goto fail;
    s->mounts[0] = (lp_mount){-1, &s->tree};
    s->n_mounts = 1;

    if (opts->n_inputs) {
        memcpy(s->inputs, opts->inputs, opts->n_inputs * sizeof *s->inputs);
        s->n_inputs = opts->n_inputs;
    } else if ((rc = default_inputs(s))) {
        goto fail;
    }
    if ((rc = check_input_sizes(s))) goto fail;
    if ((rc = lps_inputs_create(s->model, s->inputs, s->n_inputs, opts->seed, &s->tensors))) {
        rc = shim_error(rc);
        goto fail;
    }

    if (opts->n_paths) {
        s->selected = calloc(s->tree.n_nodes, 1);
        if (!s->selected) {
            rc = lp_error_set(LP_ERR_NOMEM, "out of memory");
            goto fail;
        }
        if ((rc = lp_paths_select(&s->tree, s->opts.paths, opts->n_paths, s->selected))) goto fail;
    }
    lp_collector_config cc = {
        .memory = opts->memory,
        .memory_devices = 1u << (strncmp(s->device, "cuda", 4) == 0 ? LP_DEV_CUDA : LP_DEV_CPU),
        .ops = opts->events,
        .selected = s->selected};
    if (strncmp(s->device, "cuda", 4) == 0) cc.memory_devices |= 1u << LP_DEV_CPU;
    /* CUDA kernel time per module (CUPTI, else the shim's CUDA events) and NVTX ranges. */
    lp_cuda_events_backend events = {s->model,
                                     lps_cuda_events_begin,
                                     lps_cuda_events_push,
                                     lps_cuda_events_pop,
                                     lps_cuda_events_collect,
                                     lps_cuda_events_end,
                                     lps_cuda_events_error};
    lp_cuda_prof_config pc = {.cuda_device = strncmp(s->device, "cuda", 4) == 0,
                              .timing = (int)opts->cuda_timing,
                              .nvtx = opts->nvtx,
                              .ops = opts->events,
                              .tree = &s->tree,
                              .events = lps_cuda_built() ? &events : NULL};
    if ((rc = lp_cuda_prof_open(&s->cuda, &pc))) goto fail;
    cc.cuda_time = lp_cuda_prof_timing(s->cuda);
    cc.scopes = lp_cuda_prof_hooks(s->cuda);
    cc.scope_ops = opts->events;
    cc.shapes = opts->events && opts->shapes; /* op rows by input shapes (group_by_input_shape) */
    cc.describe_shapes = cc.shapes ? describe_shapes : NULL;
    cc.trace = wants_timeline(opts); /* the trace output, the HTML memory-over-time view */
    if ((rc = lp_collector_create(&s->collector, &s->tree, &cc))) goto fail;
    if ((rc = start_step(s))) goto fail;
    lp_export_date((long long)time(NULL), s->date, sizeof s->date);

    if (opts->mode == LP_MODE_HOOKS)
        add_note(s, "%s",
                 "mode: hooks (TorchScript optimizer off, so every module call is a real frame; "
                 "the model ran unoptimised)");
    else
        add_note(s, "%s",
                 "mode: graph (optimised graph; module entry and exit inferred from each op's "
                 "call stack: see the README)");
    if (s->tree.n_nodes == 1)
        add_note(s,
                 "note: '%s' has no submodules (frozen or optimized for inference?): only the root "
                 "can be timed",
                 s->model_path);
    if (opts->shapes && !opts->events)
        add_note(s, "%s", "note: shapes are recorded with op rows only (events): none recorded");
    *out = s;
    return LP_OK;
fail:
    lp_session_close(s);
    return rc;
}

static int sink_call_enter(void *c, int32_t m, uint64_t t) {
    return lp_ev_call_enter(c, m, t);
}
static int sink_call_exit(void *c, uint64_t t) {
    return lp_ev_call_exit(c, t);
}
static int sink_op_start(void *c, const char *name, int32_t m, uint64_t shape_key, uint64_t t) {
    return lp_ev_op_start(c, name, m, shape_key, t);
}
static void sink_op_end(void *c, uint64_t t) {
    lp_ev_op_end(c, t);
}
static void sink_memory(void *c, const void *p, int64_t b, int d, uint64_t t) {
    lp_ev_memory(c, p, b, d, t);
}

/* ---- hooks, mounts, merging ---------------------------------------------------------------- */

static int hooks_install(lp_session *s) {
    if (s->hooks_on) return LP_OK;
    lps_sink sink = {s->collector,  sink_call_enter, sink_call_exit,
                     sink_op_start, sink_op_end,     sink_memory};
    unsigned hooks = LPS_HOOK_MODULES;
    if (s->opts.events || s->opts.mode == LP_MODE_GRAPH) hooks |= LPS_HOOK_OPS;
    if (s->opts.memory) hooks |= LPS_HOOK_MEMORY;
    if (s->opts.events && s->opts.shapes) hooks |= LPS_HOOK_SHAPES;
    int rc = lps_profile_begin(s->model, &sink, hooks);
    if (rc) return shim_error(rc);
    if ((rc = lp_cuda_prof_begin(s->cuda))) {
        lps_profile_end(s->model);
        return rc;
    }
    s->hooks_on = 1;
    return LP_OK;
}

/* Removes the hooks; CUDA records are joined here, before any merge. */
static int hooks_remove(lp_session *s) {
    if (!s->hooks_on) return LP_OK;
    lps_profile_end(s->model);
    s->hooks_on = 0;
    return lp_cuda_prof_end(s->cuda, s->collector);
}

/* Merges what the threads recorded into the trees, and recomposes the report when regions exist.
 * Driving thread, with no forward running and no region call in flight on another thread. */
static int sync_report(lp_session *s) {
    if (!atomic_exchange(&s->dirty, 0)) return LP_OK;
    int rc = lp_collector_finish(s->collector);
    if (rc) return rc;
    timeline_done(s);
    if (s->tree.iterations == 0 && s->tree.nodes[0].fig.calls + lp_region_count(s->collector)) {
        s->tree.iterations = 1; /* a program that never stepped: its whole recording */
        s->implicit_iteration = 1;
    }
    lp_tree_set_shares(&s->tree);
    if (!lp_region_count(s->collector)) return LP_OK;
    return lp_compose(&s->composed, s->collector, s->mounts, s->n_mounts, s->tree.iterations);
}

/* The tree every reader sees: the module tree, or the composed one once regions exist. */
static const lp_tree *report_tree(const lp_session *s) {
    lp_session *m = (lp_session *)s; /* merging pending events changes no figure already read */
    if (sync_report(m)) return &s->tree;
    return lp_region_count(s->collector) ? &s->composed : &s->tree;
}

/* A mount's tree: the module tree's shape, no figures. */
static int mount_new(lp_session *s, int32_t region, lp_tree **out) {
    if (s->n_mounts == LP_MAX_MOUNTS)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "forwards ran in more than %d different regions of one session",
                            LP_MAX_FORWARD_REGIONS);
    lp_tree *t = calloc(1, sizeof *t);
    if (!t) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    lp_tree_init(t);
    int rc = LP_OK;
    for (size_t i = 0; i < s->tree.n_nodes && rc >= 0; i++) {
        const lp_tree_node *n = &s->tree.nodes[i];
        rc = lp_tree_add(t, n->path, n->class_name, n->parent);
        if (rc >= 0) t->nodes[rc].container = n->container;
    }
    if (rc < 0) {
        lp_tree_free(t);
        free(t);
        return rc;
    }
    s->mounts[s->n_mounts++] = (lp_mount){region, t};
    *out = t;
    return LP_OK;
}

/* Points the collector at the tree of the region the next forward runs in. */
static int target_for_forward(lp_session *s) {
    int32_t region = lp_collector_open_region(s->collector);
    lp_tree *t = NULL;
    for (size_t i = 0; i < s->n_mounts && !t; i++)
        if (s->mounts[i].region == region) t = s->mounts[i].tree;
    int rc = t ? LP_OK : mount_new(s, region, &t);
    if (rc || lp_collector_tree(s->collector) == t) return rc;
    if ((rc = lp_collector_finish(s->collector))) return rc; /* the old tree's figures first */
    lp_collector_set_tree(s->collector, t);
    return LP_OK;
}

/* A schedule's fresh start: every figure recorded so far is dropped. */
static int clear_figures(lp_session *s) {
    atomic_store(&s->dirty, 1);
    int rc = sync_report(s);
    if (rc) return rc;
    for (size_t i = 0; i < s->n_mounts; i++) {
        lp_tree *t = s->mounts[i].tree;
        for (size_t n = 0; n < t->n_nodes; n++) {
            memset(&t->nodes[n].fig, 0, sizeof t->nodes[n].fig);
            t->nodes[n].first_op = -1;
        }
        t->n_ops = 0;
    }
    lp_collector_clear_regions(s->collector);
    s->tree.iterations = 0;
    s->implicit_iteration = 0;
    s->driver_ns = 0;
    atomic_store(&s->dirty, 1);
    return LP_OK;
}

/* ---- steps and the schedule ----------------------------------------------------------------- */

/* "report_%d.json" with the cycle number in place of the first "%d"; nothing else is a format. */
static int cycle_file(const char *pattern, int cycle, char *buf, size_t size) {
    const char *at = strstr(pattern, "%d");
    int n = at ? snprintf(buf, size, "%.*s%d%s", (int)(at - pattern), pattern, cycle, at + 2)
               : snprintf(buf, size, "%s", pattern);
    if (n < 0 || (size_t)n >= size)
        return lp_error_set(LP_ERR_INVALID, "output file name too long: '%s'", pattern);
    return LP_OK;
}

static int is_cycle_output(const lp_session *s, const lp_output_spec *o) {
    return lp_sched_on(&s->opts.schedule) && o->file && strstr(o->file, "%d");
}

static int write_one(lp_session *s, const lp_output_spec *o);

/* A cycle completed: its figures go to the callback and to the outputs named per cycle. */
static int cycle_done(lp_session *s, int cycle) {
    int rc = hooks_remove(s);
    atomic_store(&s->dirty, 1);
    if (!rc) rc = sync_report(s);
    if (rc) return rc;
    s->cycles_done = cycle;
    s->partial_cycle = 0;
    if (s->opts.on_cycle) s->opts.on_cycle(s, cycle, s->opts.on_cycle_payload);
    for (size_t i = 0; i < s->opts.n_outputs && !rc; i++) {
        if (!is_cycle_output(s, &s->outputs[i])) continue;
        char file[LP_PATH_MAX];
        lp_output_spec o = s->outputs[i];
        if (!(rc = cycle_file(o.file, cycle, file, sizeof file))) {
            o.file = file;
            rc = write_one(s, &o);
        }
    }
    return rc;
}

/* Whether the step now starting is profiled. A cycle's warm-up starts fresh, and so does its
 * first active step (dropping the warm-up). */
static int start_step(lp_session *s) {
    const lp_schedule *sc = &s->opts.schedule;
    lp_sched_phase phase = lp_sched_phase_of(sc, s->step);
    atomic_store(&s->sched_profiled, lp_sched_profiled(phase));
    /* The timeline holds the first trace_iterations recorded steps, regions included. */
    s->step_traced =
        atomic_load(&s->enabled) && lp_sched_profiled(phase) && s->trace_done < trace_cap(s);
    lp_collector_set_tracing(s->collector, s->step_traced);
    if (!lp_sched_on(sc)) return LP_OK;
    int warmup_starts = phase == LP_SCHED_WARMUP &&
                        (s->step == 0 || lp_sched_phase_of(sc, s->step - 1) != LP_SCHED_WARMUP);
    if (warmup_starts || lp_sched_starts_active(sc, s->step)) s->clear_pending = 1;
    return LP_OK;
}

/* Before the first recording of a step that starts fresh. Driving thread. */
static int apply_pending_clear(lp_session *s) {
    if (!s->clear_pending) return LP_OK;
    s->clear_pending = 0;
    s->partial_cycle = 1;
    return clear_figures(s);
}

static int end_step(lp_session *s) {
    const lp_schedule *sc = &s->opts.schedule;
    int rc = LP_OK;
    /* A disabled session's steps record nothing: counting them would dilute every mean. */
    if (atomic_load(&s->sched_profiled) && atomic_load(&s->enabled)) {
        s->trace_done += s->step_traced;
        if (s->implicit_iteration)
            s->implicit_iteration = 0; /* already counted when it was merged */
        else
            s->tree.iterations++;
        atomic_store(&s->dirty, 1);
    }
    if (lp_sched_on(sc) && lp_sched_ends_cycle(sc, s->step))
        rc = cycle_done(s, lp_sched_cycle_of(sc, s->step));
    s->step++;
    int src = start_step(s);
    return rc ? rc : src;
}

/* Recorded now: the session and schedule say so, and no placeholder region is innermost. */
static int profiling_now(lp_session *s) {
    return atomic_load(&s->enabled) && atomic_load(&s->sched_profiled) &&
           lp_collector_region_recording(s->collector);
}

/* One forward, profiled or not; the hooks must already be as `profiled` says. */
static int forward_once(lp_session *s, int profiled) {
    int rc = s->capture
                 ? lps_forward_output(s->model, s->tensors, &s->capture_bytes, &s->capture_size)
                 : lps_forward(s->model, s->tensors);
    if (rc) {
        rc = shim_error(rc);
        lp_collector_reset_stacks(s->collector);
        return rc;
    }
    if (!profiled) return LP_OK;
    s->driver_ns += lps_last_forward_ns(s->model);
    atomic_store(&s->dirty, 1);
    return lp_cuda_prof_iteration_done(s->cuda, s->collector);
}

int lp_session_run(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_run: session is NULL");
    int rc;
    lp_export_date((long long)time(NULL), s->date, sizeof s->date);
    progress(s, LP_PHASE_WARMUP, 0, s->opts.warmup);
    for (int i = 0; i < s->opts.warmup; i++) {
        if ((rc = lps_forward(s->model, s->tensors))) return shim_error(rc);
        progress(s, LP_PHASE_WARMUP, i + 1, s->opts.warmup);
    }
    progress(s, LP_PHASE_PROFILE, 0, s->opts.iterations);
    if ((rc = target_for_forward(s))) return rc;
    for (int i = 0; i < s->opts.iterations && !rc; i++) {
        int profiled = profiling_now(s);
        rc = profiled ? apply_pending_clear(s) : LP_OK;
        if (!rc) rc = profiled ? hooks_install(s) : hooks_remove(s);
        if (!rc) rc = forward_once(s, profiled);
        if (rc) break;
        progress(s, LP_PHASE_PROFILE, i + 1, s->opts.iterations);
        rc = end_step(s); /* each forward is a step */
    }
    int hrc = hooks_remove(s);
    if (!rc) rc = hrc;
    atomic_store(&s->dirty, 1);
    int frc = sync_report(s);
    progress(s, LP_PHASE_DONE, s->opts.iterations, s->opts.iterations);
    return rc ? rc : frc;
}

int lp_session_forward(lp_session *s, void **output, size_t *output_size) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_forward: session is NULL");
    if (output && !output_size)
        return lp_error_set(LP_ERR_INVALID, "lp_session_forward: output_size is NULL");
    if (output) *output = NULL;
    if (output_size) *output_size = 0;
    int profiled = profiling_now(s);
    int rc = profiled ? apply_pending_clear(s) : LP_OK;
    if (!rc && profiled) rc = target_for_forward(s);
    if (!rc && profiled) rc = hooks_install(s);
    s->capture = output != NULL;
    s->capture_bytes = NULL;
    if (!rc) rc = forward_once(s, profiled);
    s->capture = 0;
    int hrc = hooks_remove(s); /* hooks stay only for the forward: other code runs unobserved */
    if (!rc) rc = hrc;
    if (rc) {
        free(s->capture_bytes);
    } else if (output) {
        *output = s->capture_bytes;
        *output_size = s->capture_size;
    }
    s->capture_bytes = NULL;
    return rc;
}

int lp_session_set_input(lp_session *s, size_t index, const void *data, size_t bytes) {
    if (!s || (!data && bytes))
        return lp_error_set(LP_ERR_INVALID, "lp_session_set_input: NULL argument");
    int rc = lps_inputs_set(s->tensors, index, data, bytes);
    return rc ? shim_error(rc) : LP_OK;
}

int lp_session_step(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_step: session is NULL");
    return end_step(s);
}

int lp_session_enable(lp_session *s, int enabled) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_enable: session is NULL");
    atomic_store(&s->enabled, enabled != 0);
    return LP_OK;
}

/* ---- regions -------------------------------------------------------------------------------- */

/* Region and context names become path segments: "main/preprocess". */
static int check_name(const char *what, const char *name, const char *caller) {
    if (!name) return lp_error_set(LP_ERR_INVALID, "%s: the %s name is NULL", caller, what);
    if (!*name || strchr(name, '/'))
        return lp_error_set(LP_ERR_INVALID,
                            "%s: bad %s name '%s' (it must be non-empty, without '/')", caller,
                            what, name);
    return LP_OK;
}

static int32_t context_id(lp_session *s, const char *context) {
    if (strcmp(context, "main") == 0 && s->main_context >= 0) return s->main_context;
    int32_t id = lp_region_intern(s->collector, -1, context);
    if (id >= 0 && strcmp(context, "main") == 0) s->main_context = id;
    return id;
}

/* A new region's name: a path segment ("main/preprocess") that no module path under its parent
 * can be ("main/stem" when forwards run in "main"), so every path names one node. */
static int check_new_region(const lp_session *s, const char *name, const char *caller) {
    int rc = check_name("region", name, caller);
    if (rc) return rc;
    for (int32_t m = s->tree.nodes[0].first_child; m >= 0; m = s->tree.nodes[m].next_sibling)
        if (strcmp(s->tree.nodes[m].path, name) == 0)
            return lp_error_set(LP_ERR_INVALID,
                                "%s: region name '%s' is also a module of the model: a forward's "
                                "'%s' would have the same path; pick another name",
                                caller, name, name);
    return LP_OK;
}

static int region_open(lp_session *s, int32_t parent, const char *name, const char *caller) {
    if (lp_region_find(s->collector, parent, name) < 0) { /* first sight: the checks, once */
        int rc = check_new_region(s, name, caller);
        if (rc) return rc;
    }
    int32_t id = lp_region_intern(s->collector, parent, name);
    if (id < 0) return id;
    const lp_region_entry *e = lp_region_get(s->collector, id);
    int record = profiling_now(s) && atomic_load(&lp_region_get(s->collector, e->context)->enabled);
    int rc = record ? apply_pending_clear(s) : LP_OK;
    if (!rc) rc = lp_ev_region_begin(s->collector, id, record);
    if (!rc) atomic_store_explicit(&s->dirty, 1, memory_order_relaxed);
    return rc;
}

int lp_region_begin(lp_session *s, const char *name) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_region_begin: session is NULL");
    if (!name) return lp_error_set(LP_ERR_INVALID, "lp_region_begin: the region name is NULL");
    int32_t parent = lp_collector_open_region(s->collector);
    if (parent < 0 && (parent = context_id(s, "main")) < 0) return parent;
    return region_open(s, parent, name, "lp_region_begin");
}

int lp_region_begin_in(lp_session *s, const char *context, const char *name) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_region_begin_in: session is NULL");
    int rc = check_name("context", context, "lp_region_begin_in");
    if (rc) return rc;
    if (!name) return lp_error_set(LP_ERR_INVALID, "lp_region_begin_in: the region name is NULL");
    int32_t ctx = context_id(s, context);
    if (ctx < 0) return ctx;
    int32_t parent = lp_collector_open_region(s->collector);
    if (parent >= 0 && lp_region_get(s->collector, parent)->context != ctx) {
        const lp_region_entry *open = lp_region_get(s->collector, parent);
        return lp_error_set(LP_ERR_STATE,
                            "lp_region_begin_in('%s', '%s'): region '%s' of context '%s' is open: "
                            "a region nests only in its own context",
                            context, name, open->name,
                            lp_region_get(s->collector, open->context)->name);
    }
    return region_open(s, parent >= 0 ? parent : ctx, name, "lp_region_begin_in");
}

int lp_region_end(lp_session *s, const char *name) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_region_end: session is NULL");
    int rc = lp_ev_region_end(s->collector, name);
    if (!rc) atomic_store_explicit(&s->dirty, 1, memory_order_relaxed);
    return rc;
}

int lp_context_enable(lp_session *s, const char *context, int enabled) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_context_enable: session is NULL");
    int rc = check_name("context", context, "lp_context_enable");
    if (rc) return rc;
    int32_t id = context_id(s, context);
    if (id < 0) return id;
    lp_region_set_enabled(s->collector, id, enabled);
    return LP_OK;
}

int lp_session_render(lp_session *s, lp_format format, FILE *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_render: NULL argument");
    if (!lp_format_name(format))
        return lp_error_set(LP_ERR_UNSUPPORTED, "unknown output format %d", (int)format);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.depth = s->opts.depth;
    ro.sort = s->opts.sort;
    ro.top = s->opts.top;
    ro.columns = s->opts.columns;
    ro.n_columns = s->opts.n_columns;
    ro.units = s->opts.units;
    ro.ascii = s->opts.ascii;
    ro.show_ops = s->opts.events;
    const char *notes[LP_MAX_NOTES + 3 + 6];
    size_t n = 0;
    for (size_t i = 0; i < s->n_notes; i++)
        notes[n++] = s->notes[i];
    char cuda_notes[6][256];
    size_t n_cuda = lp_cuda_prof_notes(s->cuda, &cuda_notes[0][0], sizeof cuda_notes[0], 6);
    for (size_t i = 0; i < n_cuda; i++)
        notes[n++] = cuda_notes[i];
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
    const lp_tree *t = report_tree(s);
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

static int write_one(lp_session *s, const lp_output_spec *o) {
    int to_stdout = !o->file || strcmp(o->file, "-") == 0;
    FILE *f = to_stdout ? stdout : fopen(o->file, "w");
    if (!f) return lp_error_set(LP_ERR_IO, "cannot write '%s': %s", o->file, strerror(errno));
    int rc = lp_session_render(s, o->format, f);
    int err = ferror(f) ? errno : 0;
    if (to_stdout) {
        if (fflush(f) != 0 && !rc)
            rc = lp_error_set(LP_ERR_IO, "cannot write the report: %s", strerror(errno));
    } else if (fclose(f) != 0 && !rc) {
        rc = lp_error_set(LP_ERR_IO, "cannot write '%s': %s", o->file, strerror(errno));
    }
    if (!rc && err) rc = lp_error_set(LP_ERR_IO, "cannot write the report: %s", strerror(err));
    return rc;
}

int lp_session_write_outputs(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_write_outputs: session is NULL");
    int rc = LP_OK;
    if (!s->opts.n_outputs) {
        lp_output_spec o = {LP_FORMAT_TREE, NULL};
        rc = write_one(s, &o);
    }
    /* Outputs named per cycle were written as each cycle completed. */
    for (size_t i = 0; i < s->opts.n_outputs && !rc; i++)
        if (!is_cycle_output(s, &s->outputs[i])) rc = write_one(s, &s->outputs[i]);
    if (!rc && s->opts.summary) {
        lp_output_spec o = {LP_FORMAT_SUMMARY, NULL};
        if (fputc('\n', stdout) == EOF) return lp_error_set(LP_ERR_IO, "cannot write the summary");
        rc = write_one(s, &o);
    }
    return rc;
}

int lp_session_forward_output(lp_session *s, int profiled, void **bytes, size_t *size) {
    if (!s || !bytes || !size)
        return lp_error_set(LP_ERR_INVALID, "lp_session_forward_output: NULL argument");
    *bytes = NULL;
    *size = 0;
    if (!profiled) {
        int rc = lps_forward_output(s->model, s->tensors, bytes, size);
        return rc ? shim_error(rc) : LP_OK;
    }
    /* The profiled forward goes through lp_session_run itself, so it is exactly what a run
     * measures: one iteration, no warm-up, its output kept. */
    int warmup = s->opts.warmup, iterations = s->opts.iterations;
    s->opts.warmup = 0;
    s->opts.iterations = 1;
    s->capture = 1;
    s->capture_bytes = NULL;
    int rc = lp_session_run(s);
    s->capture = 0;
    s->opts.warmup = warmup;
    s->opts.iterations = iterations;
    if (rc == LP_OK && !s->capture_bytes)
        rc = lp_error_set(LP_ERR_STATE, "lp_session_forward_output: the forward did not run");
    if (rc) {
        free(s->capture_bytes);
        s->capture_bytes = NULL;
        return rc;
    }
    *bytes = s->capture_bytes;
    *size = s->capture_size;
    s->capture_bytes = NULL;
    return LP_OK;
}

void lp_session_close(lp_session *s) {
    if (!s) return;
    lp_cuda_prof_close(s->cuda);
    lps_inputs_free(s->tensors);
    lps_model_free(s->model);
    lp_collector_free(s->collector);
    for (size_t i = 1; i < s->n_mounts; i++) {
        lp_tree_free(s->mounts[i].tree);
        free(s->mounts[i].tree);
    }
    lp_tree_free(&s->composed);
    lp_tree_free(&s->tree);
    free(s->selected);
    free(s->model_path);
    free(s->device);
    free(s->sort);
    free_list(s->paths, s->opts.n_paths);
    free_list(s->columns, s->opts.n_columns);
    free_list(s->output_files, s->opts.n_outputs);
    free(s->outputs);
    free(s);
}

int lp_session_node_count(const lp_session *s, size_t *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node_count: NULL argument");
    *out = report_tree(s)->n_nodes;
    return LP_OK;
}

int lp_session_node(const lp_session *s, size_t index, lp_node_info *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node: NULL argument");
    return lp_tree_node_info(report_tree(s), index, out, "lp_session_node");
}

int lp_session_find(const lp_session *s, const char *path, size_t *out) {
    if (!s || !path || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_find: NULL argument");
    int32_t i = lp_tree_find(report_tree(s), path);
    if (i < 0) return lp_error_set(LP_ERR_NOT_FOUND, "no module at path '%s'", path);
    *out = (size_t)i;
    return LP_OK;
}

int lp_session_is_frozen(const lp_session *s) {
    return s && s->tree.n_nodes == 1;
}

int lp_session_op_count(const lp_session *s, size_t *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_op_count: NULL argument");
    *out = report_tree(s)->n_ops;
    return LP_OK;
}

int lp_session_op(const lp_session *s, size_t index, lp_op_info *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_op: NULL argument");
    const lp_tree *t = report_tree(s);
    if (index >= t->n_ops)
        return lp_error_set(LP_ERR_INVALID, "op row %zu out of range (%zu op rows)", index,
                            t->n_ops);
    const lp_op_node *o = &t->ops[index];
    uint64_t it = t->iterations;
    memset(out, 0, sizeof *out);
    out->module = o->module;
    out->parent_op = o->parent_op;
    out->name = t->op_names && o->op >= 0 ? t->op_names[o->op] : "";
    out->shapes = t->shape_names && o->shapes >= 0 ? t->shape_names[o->shapes] : NULL;
    out->raw_calls = o->fig.calls;
    out->raw_total_ns = o->fig.total_ns;
    out->raw_self_ns = o->fig.self_ns;
    out->iterations = it;
    out->calls = it ? (double)o->fig.calls / (double)it : 0;
    out->total_ns = it ? (double)o->fig.total_ns / (double)it : 0;
    out->self_ns = it ? (double)o->fig.self_ns / (double)it : 0;
    lp_node_mem_fill(t, &o->fig, LP_DEV_CPU, &out->cpu_mem);
    lp_node_mem_fill(t, &o->fig, LP_DEV_CUDA, &out->cuda_mem);
    out->time_mean_ns = o->fig.time.mean;
    out->time_std_ns = lp_welford_std(&o->fig.time);
    out->time_min_ns = o->fig.time.min;
    out->time_max_ns = o->fig.time.max;
    out->share = o->fig.share_base_ns ? (double)o->fig.total_ns / (double)o->fig.share_base_ns : 0;
    return LP_OK;
}

int lp_session_run_info(const lp_session *s, lp_run_info *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_run_info: NULL argument");
    memset(out, 0, sizeof *out);
    lp_collector_stats st;
    lp_collector_get_stats(s->collector, &st);
    out->iterations = s->tree.iterations;
    out->driver_ns = s->driver_ns;
    out->events = st.events;
    out->dropped = st.dropped + st.unbalanced;
    lps_graph_stats(s->model, &out->graph_sites_resolved, &out->graph_sites_hit);
    return LP_OK;
}

const char *lp_torch_version(void) {
    return lps_torch_version();
}
