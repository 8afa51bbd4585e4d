/* session.c: one profiling session: load, warm up, run the profiled forwards, report.
 * The only core file that talks to the shim. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "collector.h"
#include "error.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "paths.h"
#include "render.h"
#include "sysmem.h"
#include "tree.h"

_Static_assert((int)LPS_DEV_CPU == (int)LP_DEV_CPU && (int)LPS_DEV_CUDA == (int)LP_DEV_CUDA,
               "device ids agree");

#define LP_MAX_NOTES 8

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
};

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

int lp_session_open(lp_session **out, const lp_options *opts) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_session_open: out is NULL");
    *out = NULL;
    int rc = lp_options_validate(opts);
    if (rc) return rc;
    for (size_t i = 0; i < opts->n_outputs; i++)
        if ((rc = check_writable(opts->outputs[i].file))) return rc;

    lp_session *s = calloc(1, sizeof *s);
    if (!s) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    if ((rc = copy_options(s, opts))) goto fail;

    lps_set_verbose(opts->verbose);
    if ((rc = lps_set_threads(opts->threads))) {
        rc = shim_error(rc);
        goto fail;
    }
    if ((rc = lps_model_load(s->model_path, s->device, opts->mode == LP_MODE_GRAPH, &s->model))) {
        rc = shim_error(rc);
        goto fail;
    }
    if ((rc = build_tree(s))) goto fail;

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
    if ((rc = lp_collector_create(&s->collector, &s->tree, &cc))) goto fail;

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
    *out = s;
    return LP_OK;
fail:
    lp_session_close(s);
    return rc;
}

static void sink_call_enter(void *c, int32_t m, uint64_t t) {
    lp_ev_call_enter(c, m, t);
}
static void sink_call_exit(void *c, uint64_t t) {
    lp_ev_call_exit(c, t);
}
static void sink_op_start(void *c, const char *name, int32_t m, uint64_t t) {
    lp_ev_op_start(c, name, m, t);
}
static void sink_op_end(void *c, uint64_t t) {
    lp_ev_op_end(c, t);
}
static void sink_memory(void *c, const void *p, int64_t b, int d, uint64_t t) {
    lp_ev_memory(c, p, b, d, t);
}

int lp_session_run(lp_session *s) {
    if (!s) return lp_error_set(LP_ERR_INVALID, "lp_session_run: session is NULL");
    int rc;
    for (int i = 0; i < s->opts.warmup; i++)
        if ((rc = lps_forward(s->model, s->tensors))) return shim_error(rc);

    lps_sink sink = {s->collector,  sink_call_enter, sink_call_exit,
                     sink_op_start, sink_op_end,     sink_memory};
    unsigned hooks = LPS_HOOK_MODULES;
    if (s->opts.events || s->opts.mode == LP_MODE_GRAPH) hooks |= LPS_HOOK_OPS;
    if (s->opts.memory) hooks |= LPS_HOOK_MEMORY;
    if ((rc = lps_profile_begin(s->model, &sink, hooks))) return shim_error(rc);
    for (int i = 0; i < s->opts.iterations; i++) {
        uint64_t t0 = lp_now_ns();
        rc = lps_forward(s->model, s->tensors);
        uint64_t t1 = lp_now_ns();
        if (rc) {
            rc = shim_error(rc);
            lp_collector_reset_stacks(s->collector);
            break;
        }
        s->driver_ns += t1 - t0;
        lp_collector_count_iteration(s->collector);
    }
    lps_profile_end(s->model);
    int frc = lp_collector_finish(s->collector);
    return rc ? rc : frc;
}

int lp_session_render(lp_session *s, lp_format format, FILE *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_render: NULL argument");
    if (format != LP_FORMAT_TREE)
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
    const char *notes[LP_MAX_NOTES + 2];
    size_t n = 0;
    for (size_t i = 0; i < s->n_notes; i++)
        notes[n++] = s->notes[i];
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
    if (!s->tree.iterations) {
        snprintf(extra[1], sizeof extra[1], "note: no profiled iteration completed");
        notes[n++] = extra[1];
    }
    ro.notes = notes;
    ro.n_notes = n;
    return lp_render_tree(&s->tree, &ro, out);
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
    if (!s->opts.n_outputs) {
        lp_output_spec o = {LP_FORMAT_TREE, NULL};
        return write_one(s, &o);
    }
    for (size_t i = 0; i < s->opts.n_outputs; i++) {
        int rc = write_one(s, &s->outputs[i]);
        if (rc) return rc;
    }
    return LP_OK;
}

void lp_session_close(lp_session *s) {
    if (!s) return;
    lps_inputs_free(s->tensors);
    lps_model_free(s->model);
    lp_collector_free(s->collector);
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
    *out = s->tree.n_nodes;
    return LP_OK;
}

static void fill_mem(const lp_tree *t, const lp_figures *f, int dev, lp_node_mem *out) {
    const lp_mem_stats *m = &f->mem[dev];
    memset(out, 0, sizeof *out);
    out->recorded = t->has_memory[dev];
    out->retained = lp_stat_mean(&m->retained);
    out->self_retained = lp_stat_mean(&m->self_retained);
    out->peak = lp_stat_mean(&m->peak);
    out->net = lp_stat_mean(&m->net);
    out->retained_min = m->retained.min;
    out->retained_max = m->retained.max;
    out->peak_min = m->peak.min;
    out->peak_max = m->peak.max;
    out->net_min = m->net.min;
    out->net_max = m->net.max;
}

int lp_session_node(const lp_session *s, size_t index, lp_node_info *out) {
    if (!s || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_node: NULL argument");
    if (index >= s->tree.n_nodes)
        return lp_error_set(LP_ERR_INVALID, "node %zu out of range (%zu nodes)", index,
                            s->tree.n_nodes);
    const lp_tree_node *n = &s->tree.nodes[index];
    uint64_t it = s->tree.iterations;
    out->path = n->path;
    out->name = n->name;
    out->class_name = n->class_name;
    out->parent = n->parent;
    out->depth = n->depth;
    out->selected = n->selected;
    out->raw_calls = n->fig.calls;
    out->raw_total_ns = n->fig.total_ns;
    out->raw_self_ns = n->fig.self_ns;
    out->iterations = it;
    out->calls = it ? (double)n->fig.calls / (double)it : 0;
    out->total_ns = it ? (double)n->fig.total_ns / (double)it : 0;
    out->self_ns = it ? (double)n->fig.self_ns / (double)it : 0;
    fill_mem(&s->tree, &n->fig, LP_DEV_CPU, &out->cpu_mem);
    fill_mem(&s->tree, &n->fig, LP_DEV_CUDA, &out->cuda_mem);
    return LP_OK;
}

int lp_session_find(const lp_session *s, const char *path, size_t *out) {
    if (!s || !path || !out) return lp_error_set(LP_ERR_INVALID, "lp_session_find: NULL argument");
    int32_t i = lp_tree_find(&s->tree, path);
    if (i < 0) return lp_error_set(LP_ERR_NOT_FOUND, "no module at path '%s'", path);
    *out = (size_t)i;
    return LP_OK;
}

int lp_session_is_frozen(const lp_session *s) {
    return s && s->tree.n_nodes == 1;
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
