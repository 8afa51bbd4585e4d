/* json_write.c: the report as JSON (docs/json-schema.md), built with jansson.
 *
 * Integers wherever the tree holds integers: raw sums, min/max and counts exactly, plus the
 * iteration count, so a reader derives any mean itself and nothing is lost to float formatting.
 * The one exception is the per-call time statistics' mean and standard deviation (from Welford's
 * accumulator, tree.h), which are doubles: jansson prints reals with 17 significant digits, which
 * strtod reads back to the same double, and the reader picks the m2 that gives the same std
 * again, so they round-trip exactly too. Keys are added in one fixed order, which
 * jansson keeps, so the same report always gives the same bytes and a file read back
 * (json_read.c) and written again is identical. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "base/error.h"
#include "report/json_report.h"
#include "report/render.h"

static const char *const dev_names[LP_DEV_COUNT] = {"cpu", "cuda"};

/* Adds `v` to `obj` under `key`, stealing the reference; a NULL value poisons `*ok`. */
static void put(json_t *obj, const char *key, json_t *v, int *ok) {
    if (!v || json_object_set_new(obj, key, v)) *ok = 0;
}

static json_t *jint(int64_t v) {
    return json_integer((json_int_t)v);
}

/* uint64 sums never reach 2^63 in practice (292 years of ns); saturate rather than wrap. */
static json_t *juint(uint64_t v) {
    return json_integer(v > (uint64_t)LLONG_MAX ? LLONG_MAX : (json_int_t)v);
}

/* jansson refuses NaN and infinities; neither can come out of Welford on finite durations, but a
 * corrupt accumulator must not make the whole report fail. */
static json_t *jreal(double v) {
    return json_real(isfinite(v) ? v : 0.0);
}

static json_t *jstr(const char *s) {
    return json_string(s ? s : "");
}

static json_t *string_list(const char *const *list, size_t n) {
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, jstr(list[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* The config's spelling of the mode (--mode), which the report keeps as text. A session runs
 * LP_MODE_GRAPH as markers and records it so: no report says "graph". */
static const char *mode_name(lp_mode mode) {
    return mode == LP_MODE_HOOKS ? "hooks" : "markers";
}

json_t *lp_export_labels(const char *const *labels, size_t n) {
    json_t *o = json_object();
    for (size_t i = 0; o && i < n; i++) {
        size_t name = strcspn(labels[i], "=");
        json_t *v = json_string(labels[i][name] ? labels[i] + name + 1 : "");
        if (!v || json_object_setn_new(o, labels[i], name, v)) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

json_t *lp_export_run(const lp_run_meta *m) {
    int ok = 1;
    json_t *run = json_object(), *opt = json_object();
    if (!run || !opt) {
        json_decref(run);
        json_decref(opt);
        return NULL;
    }
    put(run, "model", jstr(m->model), &ok);
    put(run, "device", jstr(m->device ? m->device : "cpu"), &ok);
    put(run, "mode", jstr(m->aoti ? "aoti" : mode_name(m->mode)), &ok);
    put(run, "libtorch_version", jstr(m->libtorch_version), &ok);
    put(run, "layerprof_version", jstr(m->layerprof_version), &ok);
    put(run, "date", jstr(m->date), &ok);
    put(run, "iterations", juint(m->iterations), &ok);
    if (m->forward_ns) put(run, "forward_ns", juint(m->forward_ns), &ok);
    /* Only when given: reports without labels keep the bytes they always had. */
    if (m->n_labels) put(run, "labels", lp_export_labels(m->labels, m->n_labels), &ok);
    put(opt, "warmup", jint(m->warmup), &ok);
    put(opt, "threads", jint(m->threads), &ok);
    put(opt, "seed", juint(m->seed), &ok);
    put(opt, "memory", json_boolean(m->memory), &ok);
    put(opt, "events", json_boolean(m->events), &ok);
    put(opt, "shapes", json_boolean(m->shapes), &ok);
    put(opt, "trace", json_boolean(m->trace), &ok);
    put(opt, "trace_iterations", jint(m->trace_iterations), &ok);
    put(opt, "inputs", string_list(m->inputs, m->n_inputs), &ok);
    put(opt, "paths", string_list(m->paths, m->n_paths), &ok);
    put(run, "options", opt, &ok);
    put(run, "notes", string_list(m->notes, m->n_notes), &ok);
    put(run, "dropped_events", juint(m->dropped_events), &ok);
    if (!ok) {
        json_decref(run);
        return NULL;
    }
    return run;
}

static json_t *stat_json(const lp_stat *s) {
    int ok = 1;
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "sum", jint(s->sum), &ok);
    put(o, "min", jint(s->min), &ok);
    put(o, "max", jint(s->max), &ok);
    put(o, "n", juint(s->n), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The per-call statistics as users read them: count, mean, sample standard deviation, min, max. */
static json_t *welford_json(const lp_welford *w) {
    int ok = 1;
    json_t *o = json_object();
    if (!o) return NULL;
    put(o, "n", juint(w->n), &ok);
    put(o, "mean_ns", jreal(w->mean), &ok);
    /* One call has no standard deviation: null, not a 0 that reads as "no spread". */
    put(o, "std_ns", w->n > 1 ? jreal(lp_welford_std(w)) : json_null(), &ok);
    put(o, "min_ns", juint(w->min), &ok);
    put(o, "max_ns", juint(w->max), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* calls, total_ns, self_ns, the per-call time statistics, the CUDA times when recorded, and
 * "memory" per recorded device. */
static void put_figures(json_t *o, const lp_tree *t, const lp_figures *f, int *ok) {
    put(o, "calls", juint(f->calls), ok);
    put(o, "total_ns", juint(f->total_ns), ok);
    put(o, "self_ns", juint(f->self_ns), ok);
    put(o, "time", welford_json(&f->time), ok);
    if (t->has_cuda_time) {
        put(o, "cuda_total_ns", juint(f->cuda_total_ns), ok);
        put(o, "cuda_self_ns", juint(f->cuda_self_ns), ok);
    }
    if (!t->has_memory[LP_DEV_CPU] && !t->has_memory[LP_DEV_CUDA]) return;
    json_t *mem = json_object();
    put(o, "memory", mem, ok);
    if (!mem) return;
    for (int d = 0; d < LP_DEV_COUNT; d++) {
        if (!t->has_memory[d]) continue;
        const lp_mem_stats *m = &f->mem[d];
        json_t *dev = json_object();
        put(mem, dev_names[d], dev, ok);
        if (!dev) return;
        put(dev, "retained", stat_json(&m->retained), ok);
        put(dev, "self_retained", stat_json(&m->self_retained), ok);
        put(dev, "peak", stat_json(&m->peak), ok);
        put(dev, "net", stat_json(&m->net), ok);
    }
}

/* FLOPs per call as integers (the subtree's and the module's own; 2 per multiply-add), and the
 * sums over every call they come from, which readers take exactly. */
static void put_flops(json_t *m, const lp_figures *f, int *ok) {
    uint64_t calls = f->calls;
    put(m, "flops", juint(calls ? (f->flops_total + calls / 2) / calls : 0), ok);
    put(m, "self_flops", juint(calls ? (f->flops_self + calls / 2) / calls : 0), ok);
    put(m, "flops_sum", juint(f->flops_total), ok);
    put(m, "self_flops_sum", juint(f->flops_self), ok);
}

/* The first call's output shape, and whether other calls returned another. */
static void put_out_shape(json_t *m, const lp_out_shape *s, int *ok) {
    json_t *dims = json_array();
    for (int d = 0; dims && d < s->rank; d++)
        if (json_array_append_new(dims, json_integer(s->dims[d]))) *ok = 0;
    put(m, "out_shape", dims, ok);
    put(m, "out_shape_varies", json_boolean(s->varies), ok);
}

/* The op rows starting at `first`, with their nested rows. Depth is that of op dispatch (a few
 * levels), so plain recursion is fine here. */
static json_t *ops_json(const lp_tree *t, int32_t first, int *ok) {
    json_t *a = json_array();
    if (!a) {
        *ok = 0;
        return NULL;
    }
    for (int32_t r = first; r >= 0 && *ok; r = t->ops[r].next_sibling) {
        const lp_op_node *o = &t->ops[r];
        json_t *row = json_object();
        if (!row || json_array_append_new(a, row)) {
            *ok = 0;
            break;
        }
        const char *shapes = lp_tree_shapes(t, o->shapes);
        put(row, "name", jstr(lp_tree_op_name(t, o->op)), ok);
        if (shapes) put(row, "shapes", jstr(shapes), ok);
        put_figures(row, t, &o->fig, ok);
        if (o->first_child >= 0) put(row, "ops", ops_json(t, o->first_child, ok), ok);
    }
    return a;
}

/* A package's module whose work was fused into another module's kernel: where its time went
 * (docs/json-schema.md). Only on such modules, so other reports keep their bytes. */
static json_t *fused_json(const lp_tree_node *n, int *ok) {
    json_t *f = json_object();
    if (!f) {
        *ok = 0;
        return NULL;
    }
    put(f, "module", jstr(n->fused_module), ok);
    put(f, "kernel", jstr(n->fused_kernel), ok);
    put(f, "more_kernels", juint(n->fused_more), ok);
    return f;
}

json_t *lp_export_report(const lp_tree *t, const json_t *run) {
    int ok = 1;
    json_t *doc = json_object();
    if (!doc) return NULL;
    put(doc, "schema_version", json_integer(LP_JSON_SCHEMA_VERSION), &ok);
    put(doc, "generator", json_string("layerprof"), &ok);
    put(doc, "run", run ? json_deep_copy(run) : json_object(), &ok);
    json_t *rec = json_object();
    put(doc, "recorded", rec, &ok);
    if (rec) {
        put(rec, "cpu_memory", json_boolean(t->has_memory[LP_DEV_CPU]), &ok);
        put(rec, "cuda_memory", json_boolean(t->has_memory[LP_DEV_CUDA]), &ok);
        put(rec, "cuda_time", json_boolean(t->has_cuda_time), &ok);
        put(rec, "ops", json_boolean(t->has_ops), &ok);
        /* Only when recorded: reports without FLOPs keep their bytes. */
        if (t->has_flops) put(rec, "flops", json_true(), &ok);
        if (t->has_out_shape) put(rec, "out_shape", json_true(), &ok);
    }
    put(doc, "iterations", juint(t->iterations), &ok);
    json_t *mods = json_array();
    put(doc, "modules", mods, &ok);
    for (size_t i = 0; mods && ok && i < t->n_nodes; i++) {
        const lp_tree_node *n = &t->nodes[i];
        json_t *m = json_object();
        if (!m || json_array_append_new(mods, m)) {
            ok = 0;
            break;
        }
        put(m, "path", jstr(n->path), &ok);
        put(m, "name", jstr(n->name), &ok);
        put(m, "class", jstr(n->class_name), &ok);
        put(m, "kind", jstr(lp_node_kind_name(n->kind)), &ok);
        put(m, "parent", json_integer(n->parent), &ok);
        put(m, "depth", json_integer(n->depth), &ok);
        put(m, "selected", json_boolean(n->selected), &ok);
        /* Only when true, so reports of models without containers keep their bytes. */
        if (n->container) put(m, "container", json_true(), &ok);
        if (n->fig.size.known) { /* what the module holds; absent from regions and old reports */
            put(m, "params", juint(n->fig.size.params), &ok);
            put(m, "self_params", juint(n->fig.size.self_params), &ok);
            put(m, "param_bytes", juint(n->fig.size.bytes), &ok);
            put(m, "self_param_bytes", juint(n->fig.size.self_bytes), &ok);
        }
        put_figures(m, t, &n->fig, &ok);
        if (n->fused_module) put(m, "fused_into", fused_json(n, &ok), &ok);
        if (t->has_flops) put_flops(m, &n->fig, &ok);
        if (t->has_out_shape && n->fig.out.seen) put_out_shape(m, &n->fig.out, &ok);
        if (n->first_op >= 0) put(m, "ops", ops_json(t, n->first_op, &ok), &ok);
    }
    if (!ok) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

int lp_render_json(const lp_tree *tree, const json_t *run, FILE *out) {
    int rc = lp_render_require(tree, out);
    if (rc) return rc;
    json_t *doc = lp_export_report(tree, run);
    if (!doc) return lp_error_set(LP_ERR_NOMEM, "out of memory building the JSON report");
    rc = lp_json_write(doc, out);
    json_decref(doc);
    return rc;
}

/* jansson keeps insertion order (2.8+), so fixed construction order gives fixed bytes. */
static int put_chunk(const char *buffer, size_t size, void *data) {
    return fwrite(buffer, 1, size, (FILE *)data) == size ? 0 : -1;
}

int lp_json_write(const json_t *doc, FILE *out) {
    if (json_dump_callback(doc, put_chunk, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
        fputc('\n', out) == EOF || ferror(out))
        return lp_error_set(LP_ERR_IO, "writing the JSON report failed");
    return LP_OK;
}
