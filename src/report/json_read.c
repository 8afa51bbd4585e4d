/* json_read.c: JSON reports read back into an lp_tree (lp_report), for diffs and re-rendering.
 *
 * The reader is strict where the writer is fixed (types, parents before children, the schema
 * version), so a file layerprof wrote reads back into the same tree, and writing that tree again
 * gives the same bytes. The "run" object is kept as it was read and written back untouched. */
#include <limits.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/callback_file.h"
#include "base/error.h"
#include "base/out_size.h"
#include "model/node_info.h"
#include "report/json_report.h"
#include "report/render.h"

struct lp_report {
    json_t *run;  /* owned reference */
    lp_tree tree; /* owns every string the report hands out */
    int schema_version;
};

typedef struct reader {
    lp_report *r;
    const char *file;
    char where[160]; /* "modules[3].ops[0]" */
    int version;     /* the file's schema_version */
} reader;

static int bad(const reader *rd, const char *field, const char *what) {
    return lp_error_set(LP_ERR_INVALID, "%s: %s%s%s: %s", rd->file, rd->where,
                        *rd->where && field ? "." : "", field ? field : "", what);
}

static int get_uint(const reader *rd, const json_t *obj, const char *key, uint64_t *out) {
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return bad(rd, key, "expected an integer >= 0");
    *out = (uint64_t)json_integer_value(v);
    return LP_OK;
}

static int get_int(const reader *rd, const json_t *obj, const char *key, int64_t *out) {
    json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v)) return bad(rd, key, "expected an integer");
    *out = (int64_t)json_integer_value(v);
    return LP_OK;
}

static int get_bool(const reader *rd, const json_t *obj, const char *key, int *out) {
    json_t *v = json_object_get(obj, key);
    if (!json_is_boolean(v)) return bad(rd, key, "expected true or false");
    *out = json_is_true(v);
    return LP_OK;
}

static const char *get_str(const reader *rd, const json_t *obj, const char *key) {
    json_t *v = json_object_get(obj, key);
    if (!json_is_string(v)) {
        bad(rd, key, "expected a string");
        return NULL;
    }
    return json_string_value(v);
}

static int read_stat(reader *rd, const json_t *dev, const char *key, lp_stat *s) {
    json_t *o = json_object_get(dev, key);
    if (!json_is_object(o)) return bad(rd, key, "expected an object {sum, min, max, n}");
    size_t len = strlen(rd->where);
    snprintf(rd->where + len, sizeof rd->where - len, "%s%s", len ? "." : "", key);
    int rc = get_int(rd, o, "sum", &s->sum);
    if (!rc) rc = get_int(rd, o, "min", &s->min);
    if (!rc) rc = get_int(rd, o, "max", &s->max);
    if (!rc) rc = get_uint(rd, o, "n", &s->n);
    rd->where[len] = '\0';
    return rc;
}

static int get_real(const reader *rd, const json_t *obj, const char *key, double *out) {
    json_t *v = json_object_get(obj, key);
    if (!json_is_number(v) || json_number_value(v) < 0)
        return bad(rd, key, "expected a number >= 0");
    *out = json_number_value(v);
    return LP_OK;
}

/* The m2 (sum of squared deviations) whose sample standard deviation is exactly `std`, as
 * lp_welford_std computes it: the product's rounding is undone by stepping to the neighbouring
 * doubles (sqrt is monotonic), so a schema-2 report read back writes the same std_ns. */
static double m2_of_std(double std, uint64_t n) {
    if (n < 2 || !(std > 0)) return 0.0;
    double k = (double)(n - 1), m2 = std * std * k;
    for (int i = 0; i < 16; i++) {
        lp_welford w = {.n = n, .m2 = m2};
        double got = lp_welford_std(&w);
        if (got == std) break;
        m2 = nextafter(m2, got < std ? INFINITY : 0.0);
    }
    return m2;
}

/* "time": the per-call statistics; schema 1 held Welford's m2 where 2 holds std_ns. Reports
 * written before it existed have none: their rows simply have no per-call statistics (n 0), as a
 * module that never ran. */
static int read_time(reader *rd, const json_t *o, lp_welford *w) {
    json_t *tm = json_object_get(o, "time");
    if (!tm) return LP_OK;
    if (!json_is_object(tm))
        return bad(rd, "time",
                   rd->version == 1 ? "expected an object {n, mean_ns, m2, min_ns, max_ns}"
                                    : "expected an object {n, mean_ns, std_ns, min_ns, max_ns}");
    size_t len = strlen(rd->where);
    snprintf(rd->where + len, sizeof rd->where - len, "%stime", len ? "." : "");
    int rc = get_uint(rd, tm, "n", &w->n);
    if (!rc) rc = get_real(rd, tm, "mean_ns", &w->mean);
    double std = 0;
    if (!rc && rd->version == 1) rc = get_real(rd, tm, "m2", &w->m2);
    if (!rc && rd->version != 1 && !json_is_null(json_object_get(tm, "std_ns")))
        rc = get_real(rd, tm, "std_ns", &std); /* null: fewer than two calls */
    if (!rc && rd->version != 1) {
        if (std < 0) rc = bad(rd, "std_ns", "negative");
        w->m2 = m2_of_std(std, w->n);
    }
    if (!rc) rc = get_uint(rd, tm, "min_ns", &w->min);
    if (!rc) rc = get_uint(rd, tm, "max_ns", &w->max);
    if (!rc && w->min > w->max) rc = bad(rd, "min_ns", "greater than max_ns");
    rd->where[len] = '\0';
    return rc;
}

/* A module's output shape, when it has one: "out_shape" (integers) and "out_shape_varies". */
static int read_out_shape(reader *rd, const json_t *m, lp_out_shape *out) {
    memset(out, 0, sizeof *out);
    json_t *dims = json_object_get(m, "out_shape");
    if (!dims) return LP_OK;
    if (!json_is_array(dims) || json_array_size(dims) > LP_OUT_SHAPE_DIMS)
        return bad(rd, "out_shape", "expected an array of at most 8 integers");
    int64_t d[LP_OUT_SHAPE_DIMS];
    size_t i;
    json_t *v;
    json_array_foreach(dims, i, v) {
        if (!json_is_integer(v)) return bad(rd, "out_shape", "expected integers");
        d[i] = (int64_t)json_integer_value(v);
    }
    int varies = 0;
    int rc = get_bool(rd, m, "out_shape_varies", &varies);
    if (rc) return rc;
    lp_out_shape_add(out, d, (int)json_array_size(dims));
    out->varies = (uint8_t)varies;
    return LP_OK;
}

/* What a module holds: all four counts, or none (regions, reports written before them). */
static int read_size(reader *rd, const json_t *m, lp_module_size *out) {
    memset(out, 0, sizeof *out);
    if (!json_object_get(m, "params")) return LP_OK;
    int rc = get_uint(rd, m, "params", &out->params);
    if (!rc) rc = get_uint(rd, m, "self_params", &out->self_params);
    if (!rc) rc = get_uint(rd, m, "param_bytes", &out->bytes);
    if (!rc) rc = get_uint(rd, m, "self_param_bytes", &out->self_bytes);
    out->known = rc == LP_OK;
    return rc;
}

static int read_figures(reader *rd, const json_t *o, lp_figures *f) {
    const lp_tree *t = &rd->r->tree;
    int rc = get_uint(rd, o, "calls", &f->calls);
    if (!rc) rc = get_uint(rd, o, "total_ns", &f->total_ns);
    if (!rc) rc = get_uint(rd, o, "self_ns", &f->self_ns);
    if (!rc) rc = read_time(rd, o, &f->time);
    if (!rc && t->has_cuda_time) rc = get_uint(rd, o, "cuda_total_ns", &f->cuda_total_ns);
    if (!rc && t->has_cuda_time) rc = get_uint(rd, o, "cuda_self_ns", &f->cuda_self_ns);
    if (rc || (!t->has_memory[LP_DEV_CPU] && !t->has_memory[LP_DEV_CUDA])) return rc;
    json_t *mem = json_object_get(o, "memory");
    if (!json_is_object(mem)) return bad(rd, "memory", "expected an object");
    static const char *const devs[LP_DEV_COUNT] = {"cpu", "cuda"};
    for (int d = 0; d < LP_DEV_COUNT && !rc; d++) {
        if (!t->has_memory[d]) continue;
        json_t *dev = json_object_get(mem, devs[d]);
        if (!json_is_object(dev)) return bad(rd, "memory", "a recorded device is missing");
        size_t len = strlen(rd->where);
        snprintf(rd->where + len, sizeof rd->where - len, "%smemory.%s", len ? "." : "", devs[d]);
        lp_mem_stats *m = &f->mem[d];
        rc = read_stat(rd, dev, "retained", &m->retained);
        if (!rc) rc = read_stat(rd, dev, "self_retained", &m->self_retained);
        if (!rc) rc = read_stat(rd, dev, "peak", &m->peak);
        if (!rc) rc = read_stat(rd, dev, "net", &m->net);
        rd->where[len] = '\0';
    }
    return rc;
}

/* Op rows: an explicit stack is not needed; nesting is op dispatch depth (a handful). */
static int read_ops(reader *rd, const json_t *arr, int32_t module, int32_t parent_op, int level) {
    if (!json_is_array(arr)) return bad(rd, "ops", "expected an array");
    if (level > 256) return bad(rd, "ops", "nested too deeply");
    lp_report *r = rd->r;
    size_t i;
    json_t *row;
    json_array_foreach(arr, i, row) {
        size_t len = strlen(rd->where);
        snprintf(rd->where + len, sizeof rd->where - len, ".ops[%zu]", i);
        if (!json_is_object(row)) return bad(rd, NULL, "expected an object");
        const char *name = get_str(rd, row, "name");
        if (!name) return LP_ERR_INVALID;
        int32_t op = lp_tree_intern_op_name(&r->tree, name);
        if (op < 0) return op;
        int32_t shapes = -1;
        json_t *sh = json_object_get(row, "shapes");
        if (sh) {
            if (!json_is_string(sh)) return bad(rd, "shapes", "expected a string");
            shapes = lp_tree_intern_shapes(&r->tree, json_string_value(sh));
            if (shapes < 0) return shapes;
        }
        int idx = lp_tree_add_op(&r->tree, module, parent_op, op, shapes);
        if (idx < 0) return idx;
        lp_figures fig;
        memset(&fig, 0, sizeof fig);
        int rc = read_figures(rd, row, &fig);
        if (!rc) lp_tree_restore_op(&r->tree, idx, &fig);
        json_t *kids = json_object_get(row, "ops");
        if (!rc && kids) rc = read_ops(rd, kids, module, idx, level + 1);
        if (rc) return rc;
        rd->where[len] = '\0';
    }
    return LP_OK;
}

/* "kind": absent in reports written before regions existed, where every node is a module. */
static int read_kind(const reader *rd, const json_t *m, int *kind) {
    json_t *v = json_object_get(m, "kind");
    *kind = LP_NODE_MODULE;
    if (!v) return LP_OK;
    if (!json_is_string(v) || lp_node_kind_parse(json_string_value(v), kind) != LP_OK)
        return bad(rd, "kind", "expected \"module\", \"region\", \"context\" or \"session\"");
    return LP_OK;
}

/* "fused_into" (optional: a package's module whose work another module's kernel took). */
static int read_fused(reader *rd, const json_t *m, int32_t idx) {
    const json_t *f = json_object_get(m, "fused_into");
    if (!f) return LP_OK;
    if (!json_is_object(f)) return bad(rd, "fused_into", "expected an object");
    const char *module = get_str(rd, f, "module");
    const char *kernel = module ? get_str(rd, f, "kernel") : NULL;
    uint64_t more = 0;
    if (!kernel) return LP_ERR_INVALID;
    int rc = get_uint(rd, f, "more_kernels", &more);
    if (rc) return rc;
    if (more > UINT32_MAX) return bad(rd, "fused_into", "more_kernels out of range");
    return lp_tree_set_fused(&rd->r->tree, idx, module, kernel, (uint32_t)more);
}

static int read_modules(reader *rd, const json_t *mods) {
    lp_tree *t = &rd->r->tree;
    if (!json_is_array(mods)) return bad(rd, "modules", "expected an array");
    size_t i;
    json_t *m;
    json_array_foreach(mods, i, m) {
        snprintf(rd->where, sizeof rd->where, "modules[%zu]", i);
        if (!json_is_object(m)) return bad(rd, NULL, "expected an object");
        const char *path = get_str(rd, m, "path");
        const char *cls = path ? get_str(rd, m, "class") : NULL;
        if (!cls) return LP_ERR_INVALID;
        int64_t parent = 0;
        int rc = get_int(rd, m, "parent", &parent);
        if (rc) return rc;
        if (i == 0 ? parent != -1 : (parent < 0 || (uint64_t)parent >= i))
            return bad(rd, "parent", "must be -1 for the first module, else an earlier index");
        int idx = lp_tree_add(t, path, cls, (int32_t)parent);
        if (idx < 0) return idx;
        /* Read whole, then handed to the tree: only model/ writes a node's fields. */
        int kind = LP_NODE_MODULE, selected = 1;
        lp_figures fig;
        memset(&fig, 0, sizeof fig);
        if ((rc = read_kind(rd, m, &kind))) return rc;
        if ((rc = get_bool(rd, m, "selected", &selected))) return rc;
        json_t *container = json_object_get(m, "container"); /* optional: absent means false */
        if (container && !json_is_boolean(container))
            return bad(rd, "container", "expected true or false");
        if ((rc = read_figures(rd, m, &fig))) return rc;
        if ((rc = read_size(rd, m, &fig.size))) return rc;
        if ((rc = read_out_shape(rd, m, &fig.out))) return rc;
        if (t->has_flops && kind == LP_NODE_MODULE &&
            ((rc = get_uint(rd, m, "flops_sum", &fig.flops_total)) ||
             (rc = get_uint(rd, m, "self_flops_sum", &fig.flops_self))))
            return rc;
        lp_tree_restore_node(t, idx, kind, selected, json_is_true(container), &fig);
        if ((rc = read_fused(rd, m, idx))) return rc;
        json_t *ops = json_object_get(m, "ops");
        if (ops && (rc = read_ops(rd, ops, idx, -1, 0))) return rc;
    }
    rd->where[0] = '\0';
    return LP_OK;
}

int lp_report_from_json(lp_report **out, const json_t *doc, const char *name) {
    if (out) *out = NULL;
    if (!out || !doc) return lp_error_set(LP_ERR_INVALID, "lp_report_from_json: NULL argument");
    reader rd = {.file = name ? name : "<json>"};
    if (!json_is_object(doc)) return bad(&rd, NULL, "not a JSON object");
    json_t *sv = json_object_get(doc, "schema_version");
    if (!json_is_integer(sv))
        return bad(&rd, "schema_version", "missing: not a layerprof JSON report");
    json_int_t version = json_integer_value(sv);
    if (version < 1 || version > LP_JSON_SCHEMA_VERSION)
        return lp_error_set(LP_ERR_INVALID,
                            "%s: schema_version %lld is not one this layerprof reads (1 to %d; "
                            "written by a newer layerprof?)",
                            rd.file, (long long)version, LP_JSON_SCHEMA_VERSION);
    rd.version = (int)version;
    json_t *run = json_object_get(doc, "run");
    if (!json_is_object(run)) return bad(&rd, "run", "expected an object");
    json_t *rec = json_object_get(doc, "recorded");
    if (!json_is_object(rec)) return bad(&rd, "recorded", "expected an object");

    lp_report *r = calloc(1, sizeof *r);
    if (!r) return lp_error_set(LP_ERR_NOMEM, "out of memory reading the report");
    rd.r = r;
    r->schema_version = rd.version; /* the file's: rendering it again writes the current one */
    lp_tree_init(&r->tree);
    r->run = json_deep_copy(run);
    int has_ops = 0;
    int rc = r->run ? LP_OK : lp_error_set(LP_ERR_NOMEM, "out of memory reading the report");
    snprintf(rd.where, sizeof rd.where, "recorded");
    if (!rc) rc = get_bool(&rd, rec, "cpu_memory", &r->tree.has_memory[LP_DEV_CPU]);
    if (!rc) rc = get_bool(&rd, rec, "cuda_memory", &r->tree.has_memory[LP_DEV_CUDA]);
    if (!rc) rc = get_bool(&rd, rec, "cuda_time", &r->tree.has_cuda_time);
    if (!rc) rc = get_bool(&rd, rec, "ops", &has_ops);
    if (!rc && json_object_get(rec, "flops")) rc = get_bool(&rd, rec, "flops", &r->tree.has_flops);
    if (!rc && json_object_get(rec, "out_shape"))
        rc = get_bool(&rd, rec, "out_shape", &r->tree.has_out_shape);
    rd.where[0] = '\0';
    if (!rc) rc = get_uint(&rd, doc, "iterations", &r->tree.iterations);
    if (!rc) rc = read_modules(&rd, json_object_get(doc, "modules"));
    if (!rc && r->tree.n_nodes == 0) rc = bad(&rd, "modules", "empty: no root module");
    if (rc) {
        lp_report_free(r);
        return rc;
    }
    r->tree.has_ops = has_ops;
    /* % Total's bases are derived, not stored: the file holds the totals they come from. */
    lp_tree_set_shares(&r->tree);
    *out = r;
    return LP_OK;
}

int lp_report_load(lp_report **out, const char *path) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_report_load: NULL argument");
    *out = NULL; /* also when `path` is NULL: *out is never left dangling */
    if (!path) return lp_error_set(LP_ERR_INVALID, "lp_report_load: NULL argument");
    json_error_t err;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (!doc) {
        FILE *f = fopen(path, "rb");
        if (!f) return lp_error_set(LP_ERR_IO, "cannot read '%s'", path);
        fclose(f);
        return lp_error_set(LP_ERR_INVALID, "%s:%d:%d: %s", path, err.line, err.column, err.text);
    }
    int rc = lp_report_from_json(out, doc, path);
    json_decref(doc);
    return rc;
}

void lp_report_free(lp_report *r) {
    if (!r) return;
    json_decref(r->run);
    lp_tree_free(&r->tree);
    free(r);
}

const lp_tree *lp_report_tree(const lp_report *r) {
    return &r->tree;
}

const json_t *lp_report_run(const lp_report *r) {
    return r->run;
}

static const char *run_str(const lp_report *r, const char *key) {
    const char *s = json_string_value(json_object_get(r->run, key));
    return s ? s : "";
}

int lp_report_meta_sized(const lp_report *r, lp_meta_info *caller, size_t size) {
    if (!r || !caller) return lp_error_set(LP_ERR_INVALID, "lp_report_meta: NULL argument");
    int rc = lp_out_size_check(size, LP_REPORT_META_SIZE_1, "lp_meta_info", "lp_report_meta");
    if (rc) return rc;
    lp_meta_info full, *out = &full;
    memset(out, 0, sizeof *out);
    out->schema_version = r->schema_version;
    out->model = run_str(r, "model");
    out->device = run_str(r, "device");
    out->mode = run_str(r, "mode");
    out->libtorch_version = run_str(r, "libtorch_version");
    out->layerprof_version = run_str(r, "layerprof_version");
    out->date = run_str(r, "date");
    out->iterations = r->tree.iterations;
    lp_out_copy(caller, size, &full, sizeof full);
    return LP_OK;
}

int lp_report_node_count(const lp_report *r, size_t *out) {
    if (!r || !out) return lp_error_set(LP_ERR_INVALID, "lp_report_node_count: NULL argument");
    *out = r->tree.n_nodes;
    return LP_OK;
}

int lp_report_node_sized(const lp_report *r, size_t index, lp_node_info *out, size_t size) {
    if (!r || !out) return lp_error_set(LP_ERR_INVALID, "lp_report_node: NULL argument");
    lp_node_info full;
    int rc = lp_out_size_check(size, LP_NODE_INFO_SIZE_1, "lp_node_info", "lp_report_node");
    if (!rc) rc = lp_tree_node_info(&r->tree, index, &full, "lp_report_node");
    if (!rc) lp_out_copy(out, size, &full, sizeof full);
    return rc;
}

int lp_report_find(const lp_report *r, const char *path, size_t *out) {
    if (!r || !path || !out) return lp_error_set(LP_ERR_INVALID, "lp_report_find: NULL argument");
    int32_t i = lp_tree_find(&r->tree, path);
    if (i < 0) return lp_error_set(LP_ERR_NOT_FOUND, "no module at path '%s'", path);
    *out = (size_t)i;
    return LP_OK;
}

int lp_report_render_to(const lp_report *r, lp_format format, const lp_options *display,
                        lp_write_fn write, void *payload) {
    if (!r || !write) return lp_error_set(LP_ERR_INVALID, "lp_report_render_to: NULL argument");
    lp_callback_sink sink = {write, payload, 0};
    FILE *f = lp_callback_file(&sink);
    if (!f) return lp_error_set(LP_ERR_NOMEM, "out of memory opening the write callback");
    return lp_callback_file_close(f, &sink, lp_report_render(r, format, display, f));
}

int lp_report_render(const lp_report *r, lp_format format, const lp_options *display, FILE *out) {
    if (!r || !out) return lp_error_set(LP_ERR_INVALID, "lp_report_render: NULL argument");
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    if (display && (display->version < 2 || display->version > LP_OPTIONS_VERSION))
        return lp_error_set(LP_ERR_INVALID,
                            "lp_report_render: display options of version %u: initialise "
                            "them with lp_options_init",
                            display->version);
    if (display) { /* as lp_session_render takes them from the session's options (every field
                      read here is in version 2 already) */
        ro.depth = display->depth;
        ro.sort = display->sort;
        ro.top = display->top;
        ro.columns = display->columns;
        ro.n_columns = display->n_columns;
        ro.units = display->units;
        ro.ascii = display->ascii;
        ro.show_ops = display->events;
        if (display->version >= 4) ro.metrics_depth = display->metrics_depth;
        if (display->version >= 5) ro.prune = display->prune;
        if (display->version >= 6) ro.name_width = display->name_width;
        int rc = lp_render_check_opts(&ro);
        if (rc) return rc;
    }
    /* The run's notes (mode, warnings) read the same under a re-rendered table: every one. */
    json_t *jn = json_object_get(r->run, "notes");
    size_t n_json = json_array_size(jn);
    const char **notes = n_json ? malloc(n_json * sizeof *notes) : NULL;
    if (n_json && !notes) return lp_error_set(LP_ERR_NOMEM, "out of memory reading the notes");
    for (size_t i = 0; i < n_json; i++)
        if (json_is_string(json_array_get(jn, i)))
            notes[ro.n_notes++] = json_string_value(json_array_get(jn, i));
    ro.notes = notes;
    int rc = lp_render_format(format, &r->tree, NULL, r->run, &ro, out);
    free(notes);
    return rc;
}
