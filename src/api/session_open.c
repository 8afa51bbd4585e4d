/* session_open.c: opening a session (options copied, checks before anything runs, custom-op
 * libraries and the model loaded, the tree, inputs, collector and CUDA timing set up) and
 * closing it. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/session_config.h"
#include "api/session_internal.h"
#include "api/session_setup.h"
#include "base/error.h"
#include "base/model_file.h"
#include "base/sysmem.h"
#include "base/units.h"
#include "config/options_version.h"
#include "config/schedule.h"
#include "report/columns.h"
#include "model/paths.h"

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
    s->labels = dup_list(o->labels, o->n_labels);
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
    s->opts.labels = (const char *const *)s->labels;
    s->opts.outputs = s->outputs;
    s->opts.inputs = NULL;
    s->opts.libraries = NULL; /* loaded during open, not kept */
    s->opts.n_libraries = 0;
    if (!s->model_path || !s->device || (o->sort && !s->sort) || (o->n_paths && !s->paths) ||
        (o->n_columns && !s->columns) || (o->n_labels && !s->labels))
        return lp_error_set(LP_ERR_NOMEM, "out of memory");
    return LP_OK;
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

/* Points the inputs' texts (file names, str: values) to the session's own copies, made from
 * wherever they pointed. */
static int keep_input_texts(lp_session *s) {
    for (size_t i = 0; i < s->n_inputs; i++) {
        if (!s->inputs[i].file) continue;
        if (!(s->input_texts[i] = dup_or_null(s->inputs[i].file)))
            return lp_error_set(LP_ERR_NOMEM, "out of memory");
        s->inputs[i].file = s->input_texts[i];
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

/* The collector's describer for a new (parent, op, shapes) row: the op being started. */
static int describe_shapes(void *payload, char *buf, size_t size) {
    (void)payload;
    return lps_op_input_shapes(buf, size);
}

/* How the shim loads the model for a mode: libtorch fixes it per function at the first run.
 * Graph mode runs as markers (see lp_session_open). The out_shape column needs the exit markers
 * to take the calls' outputs, which they do only then. */
static int exec_of(const lp_session *s) {
    if (s->opts.mode == LP_MODE_HOOKS) return LPS_EXEC_HOOKS;
    return LPS_EXEC_MARKERS | (s->out_shape ? LPS_EXEC_OUTPUTS : 0);
}

int lp_session_open(lp_session **out, const lp_options *in) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_session_open: out is NULL");
    *out = NULL;
    if (!in) return lp_error_set(LP_ERR_INVALID, "lp_session_open: options are NULL");
    /* An older version's missing fields read as their defaults; the session copies what it
     * keeps, so the view is closed at once. */
    lp_options_view view;
    int rc = lp_options_view_open(&view, in, "lp_session_open");
    session_source file = {NULL, NULL, 0};
    if (!rc) rc = session_open_from(out, &view.opts, &file);
    lp_options_view_close(&view);
    return rc;
}

/* The custom-op libraries a model needs (torchvision's _C.so, torchaudio's libtorchaudio.so, a
 * program's own), loaded before the model. A library registers its operators with libtorch as it
 * loads, so it must be loaded with RTLD_GLOBAL before the model is, and it stays loaded for the
 * life of the process: closing a library whose operators are registered would leave the registry
 * pointing into unmapped code. */
static int session_load_libraries(const char *const *libs, size_t n) {
    for (size_t i = 0; i < n; i++) {
        const char *path = libs[i];
        if (!path || !*path) return lp_error_set(LP_ERR_INVALID, "library %zu: empty path", i + 1);
        dlerror();
        if (dlopen(path, RTLD_NOW | RTLD_GLOBAL)) continue; /* never closed: see above */
        const char *why = dlerror();
        if (!why) why = "unknown error";
        /* glibc's message starts with the path: say it once */
        size_t len = strlen(path);
        if (!strncmp(why, path, len) && !strncmp(why + len, ": ", 2)) why += len + 2;
        return lp_error_set(LP_ERR_IO, "cannot load library '%s': %s", path, why);
    }
    return LP_OK;
}

/* What can be refused before anything loads: every value the option table knows, and each
 * output file (a schedule's per-cycle ones by the name of the first cycle's). */
static int check_options(const lp_options *opts) {
    int rc = lp_options_validate(opts);
    for (size_t i = 0; i < opts->n_outputs && !rc; i++)
        rc = check_writable(opts->outputs[i].file);
    if (rc || !lp_sched_on(&opts->schedule)) return rc;
    for (size_t i = 0; i < opts->n_outputs && !rc; i++)
        if (opts->outputs[i].file && strstr(opts->outputs[i].file, "%d")) {
            char first[LP_PATH_MAX];
            if (!(rc = session_cycle_file(opts->outputs[i].file, 1, first, sizeof first)))
                rc = check_writable(first);
        }
    return rc;
}

/* A column or sort key whose figure this run will not record is a usage error now, not an
 * empty column (or a sort that silently keeps model order) after the run. */
static int check_columns_recorded(const lp_session *s, const lp_options *opts) {
    int cuda = strncmp(s->device, "cuda", 4) == 0;
    unsigned recorded = LP_NEED_FLOPS | LP_NEED_OUT_SHAPE | (opts->memory ? LP_NEED_CPU_MEM : 0) |
                        (cuda && opts->memory ? LP_NEED_CUDA_MEM : 0) |
                        (cuda && opts->cuda_timing != LP_CUDA_TIMING_OFF ? LP_NEED_CUDA_TIME : 0);
    return lp_columns_check_recorded(opts->columns, opts->n_columns, opts->sort, recorded);
}

/* The shim set up (threads, device, custom-op libraries), then the model: loaded from its file,
 * or the program's module or package attached; and its module tree. */
static int load_model(lp_session *s, const lp_options *opts, const session_source *src) {
    lps_set_verbose(opts->verbose);
    /* The shim's failures leave their message where lp_error_last() reads it. */
    int rc = lps_set_threads(opts->threads);
    if (!rc) rc = lps_cuda_check(s->device); /* "CUDA is not available: ..." before loading */
    if (!rc) rc = session_load_libraries(opts->libraries, opts->n_libraries);
    if (rc) return rc;
    s->attached = src->module != NULL;
    if (!s->attached && !src->package && (rc = lp_model_file_check(s->model_path))) return rc;
    if (src->package)
        rc = lps_model_attach_package(src->module, src->torch_build, s->model_path, s->device,
                                      exec_of(s), &s->model);
    else if (s->attached)
        rc = lps_model_attach(src->module, src->torch_build, s->device, exec_of(s), &s->model);
    else
        rc = lps_model_load(s->model_path, s->device, exec_of(s), &s->model);
    return rc ? rc : session_setup_tree(&s->tree, s->model);
}

/* The inputs: the options', or the model's recorded example for a file; then the tensors, unless
 * the program attached its module without inputs and runs its own forwards. */
static int make_inputs(lp_session *s, const lp_options *opts) {
    int rc = LP_OK;
    if (opts->n_inputs) {
        memcpy(s->inputs, opts->inputs, opts->n_inputs * sizeof *s->inputs);
        s->n_inputs = opts->n_inputs;
        rc = keep_input_texts(s);
    } else if (!s->attached) {
        lp_options owner;
        lp_options_init(&owner);
        /* The model's recorded inputs; `owner` keeps their texts until keep_input_texts copies
         * them. */
        rc = session_setup_recorded_inputs(s->model, s->model_path, s->inputs, LP_MAX_INPUTS,
                                           &s->n_inputs, &owner);
        if (!rc) rc = keep_input_texts(s);
        lp_options_release(&owner);
    }
    if (rc || (!s->n_inputs && s->attached)) return rc;
    if ((rc = check_input_sizes(s))) return rc;
    return lps_inputs_create(s->model, s->inputs, s->n_inputs, opts->seed, &s->tensors);
}

/* The modules chosen by path, the collector that records into the tree, CUDA timing, and the
 * recording around them. */
static int make_recording(lp_session *s, const lp_options *opts) {
    int rc;
    if (opts->n_paths) {
        s->selected = calloc(s->tree.n_nodes, 1);
        if (!s->selected) return lp_error_set(LP_ERR_NOMEM, "out of memory");
        if ((rc = lp_paths_select(&s->tree, s->opts.paths, opts->n_paths, s->selected))) return rc;
    }
    int cuda = strncmp(s->device, "cuda", 4) == 0;
    /* CUDA kernel time per module (CUPTI, else the shim's CUDA events) and NVTX ranges. */
    lp_cuda_events_backend events = {s->model,
                                     lps_cuda_events_begin,
                                     lps_cuda_events_push,
                                     lps_cuda_events_pop,
                                     lps_cuda_events_collect,
                                     lps_cuda_events_end};
    lp_cuda_prof_config pc = {.cuda_device = cuda,
                              .timing = (int)opts->cuda_timing,
                              .nvtx = opts->nvtx,
                              .ops = opts->events,
                              .tree = &s->tree,
                              .events = lps_cuda_built() ? &events : NULL};
    if ((rc = lp_cuda_prof_open(&s->cuda, &pc))) return rc;
    /* Reading every op's shapes costs: only when a FLOPs column asks for them. */
    s->flops = lp_columns_any(opts->columns, opts->n_columns, LP_NEED_FLOPS, 0);
    lp_collector_config cc =
        session_config_collector(opts, cuda, s->selected, s->flops, s->out_shape);
    cc.describe_shapes = cc.shapes ? describe_shapes : NULL;
    cc.cuda_time = lp_cuda_prof_timing(s->cuda);
    cc.scopes = lp_cuda_prof_hooks(s->cuda);
    if ((rc = lp_collector_create(&s->collector, &s->tree, &cc))) return rc;
    lp_recording_init(&s->rec, s->collector, &s->tree);
    return session_start_step(s);
}

/* Checks, the model, the inputs, the recording, the notes every report carries, and the live
 * path: in that order, each needing what came before. */
int session_open_from(lp_session **out, const lp_options *opts, const session_source *src) {
    int rc = check_options(opts);
    if (rc) return rc;
    lp_session *s = calloc(1, sizeof *s);
    if (!s) return lp_error_set(LP_ERR_NOMEM, "out of memory");
    s->main_context = -1;
    atomic_store(&s->enabled, 1);
    if ((rc = copy_options(s, opts))) goto fail;
    /* Graph mode inferred module calls from each op's inlined call stack, and got them wrong
     * where a name was ambiguous (two ModuleLists under one parent), a call was split (a list
     * comprehension) or merged (back-to-back calls, CSE). Markers see the same optimised model
     * with exact calls, so the old name runs as markers rather than print wrong figures. */
    int asked_graph = s->opts.mode == LP_MODE_GRAPH;
    if (asked_graph) s->opts.mode = LP_MODE_MARKERS;
    s->out_shape = s->opts.mode != LP_MODE_HOOKS &&
                   lp_columns_any(opts->columns, opts->n_columns, LP_NEED_OUT_SHAPE, 0);
    if ((rc = check_columns_recorded(s, opts)) || (rc = load_model(s, opts, src)) ||
        (rc = make_inputs(s, opts)) || (rc = make_recording(s, opts)))
        goto fail;
    lp_format_date((long long)time(NULL), s->date, sizeof s->date);
    lps_pt2_info pt2 = {0};
    lps_model_pt2_info(s->model, &pt2); /* a package loaded, or attached */
    s->pt2 = pt2.is_pt2;
    session_add_open_notes(s, &pt2, asked_graph);
    if ((rc = session_live_setup(s))) goto fail;
    *out = s;
    return LP_OK;
fail:
    lp_session_close(s);
    return rc;
}

void lp_session_close(lp_session *s) {
    if (!s) return;
    lp_cuda_prof_close(s->cuda);
    lps_inputs_free(s->tensors);
    lps_model_free(s->model);
    lp_recording_free(&s->rec);
    lp_note_list_free(&s->notes);
    lp_collector_free(s->collector);
    lp_tree_free(&s->tree);
    free(s->selected);
    free(s->model_path);
    free(s->device);
    free(s->sort);
    free_list(s->paths, s->opts.n_paths);
    free_list(s->columns, s->opts.n_columns);
    free_list(s->labels, s->opts.n_labels);
    free_list(s->output_files, s->opts.n_outputs);
    free(s->outputs);
    for (size_t i = 0; i < s->n_inputs; i++)
        free(s->input_texts[i]);
    free(s);
}
