/* render_openmetrics.c: Prometheus' text exposition (format 0.0.4, which node_exporter's textfile
 * collector and `promtool check metrics` read) of the module tree: per module, histograms of self
 * and total seconds per call, calls, parameters and FLOPs; per model, the forwards and those
 * profiled. Bounded: modules deeper than ro->metrics_depth are folded into their ancestor, whose
 * self histogram then holds its whole calls' time (docs/sampling.md). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/labels.h"
#include "report/render.h"

/* The root's `module` label: "" would equal a missing label in PromQL, and "." is no module
 * attribute name, so it names no submodule. */
#define ROOT_LABEL "."

typedef struct om_ctx {
    const lp_tree *tree;
    const lp_render_opts *ro;
    FILE *out;
    char model[256]; /* escaped */
    /* The run's labels (lp_options.labels), escaped, each as ',name="value"': after the module's
     * own on every series. 16 labels of 64-byte names and 256-byte values, escaped. */
    char extra[16 * (64 + 4 + 2 * 256) + 1];
} om_ctx;

/* A label value with \, " and line feeds escaped, as the text format wants. */
static void escape(const char *s, char *buf, size_t size) {
    size_t o = 0;
    for (; s && *s && o + 3 < size; s++) {
        if (*s == '\\' || *s == '"') {
            buf[o++] = '\\';
            buf[o++] = *s;
        } else if (*s == '\n') {
            buf[o++] = '\\';
            buf[o++] = 'n';
        } else {
            buf[o++] = *s;
        }
    }
    buf[o] = '\0';
}

/* "models/resnet50.pt" -> "resnet50". */
static void model_label(const char *path, char *buf, size_t size) {
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path && *path ? path : "model";
    char name[256];
    snprintf(name, sizeof name, "%s", base);
    char *dot = strrchr(name, '.');
    if (dot && dot != name &&
        (strcmp(dot, ".pt") == 0 || strcmp(dot, ".pt2") == 0 || strcmp(dot, ".pth") == 0 ||
         strcmp(dot, ".ts") == 0))
        *dot = '\0';
    escape(name, buf, size);
}

static int shown(const om_ctx *c, size_t i) {
    const lp_tree_node *n = &c->tree->nodes[i];
    return n->kind == LP_NODE_MODULE &&
           (c->ro->metrics_depth < 0 || n->depth <= c->ro->metrics_depth);
}

static int folded(const om_ctx *c, size_t i) {
    return c->ro->metrics_depth >= 0 && c->tree->nodes[i].depth == c->ro->metrics_depth;
}

/* The room for a series' labels: the module's (its path up to 1024 bytes) and the run's. */
#define OM_LABELS_MAX (1600 + sizeof(((om_ctx *)0)->extra))

/* The run's labels ("labels": {"name": "value"}) as ',name="value"...', values escaped. A report
 * read back from a file was checked by nobody: a label that breaks Prometheus' rules
 * (base/labels.h), or one past LP_MAX_LABELS, is left out rather than written into the
 * exposition. */
static void run_labels(const json_t *run, char *buf, size_t size) {
    size_t len = 0, kept = 0;
    const char *name;
    json_t *v;
    buf[0] = '\0';
    json_object_foreach(json_object_get(run, "labels"), name, v) {
        char text[LP_LABEL_NAME_MAX + LP_LABEL_VALUE_MAX + 2];
        const char *s = json_string_value(v);
        int t = s ? snprintf(text, sizeof text, "%s=%s", name, s) : -1;
        if (t < 0 || (size_t)t >= sizeof text || kept == LP_MAX_LABELS ||
            lp_label_check("label", text) != LP_OK)
            continue;
        kept++;
        char value[2 * 256 + 1];
        escape(json_string_value(v), value, sizeof value);
        int n = snprintf(buf + len, size - len, ",%s=\"%s\"", name, value);
        if (n < 0 || (size_t)n >= size - len) { /* not whole: none of it */
            buf[len] = '\0';
            return;
        }
        len += (size_t)n;
    }
}

/* The labels of node i: model, module, class, then the run's. */
static void labels(const om_ctx *c, size_t i, char *buf, size_t size) {
    const lp_tree_node *n = &c->tree->nodes[i];
    char path[1024], cls[256];
    escape(n->path && *n->path ? n->path : ROOT_LABEL, path, sizeof path);
    escape(n->class_name, cls, sizeof cls);
    snprintf(buf, size, "model=\"%s\",module=\"%s\",class=\"%s\"%s", c->model, path, cls, c->extra);
}

static void put_seconds(FILE *out, uint64_t ns) {
    fprintf(out, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

/* Node i's histograms: the source's, or one bucket (+Inf) from the tree's sums. */
static void node_hists(const om_ctx *c, size_t i, lp_hist *self, lp_hist *total) {
    const lp_hist_source *src = c->ro->hist;
    if (src && src->read(src->ctx, (int32_t)i, self, total)) return;
    memset(self, 0, sizeof *self);
    memset(total, 0, sizeof *total);
    if (src) return; /* the source has none for it: calls of an unselected module */
    const lp_figures *f = &c->tree->nodes[i].fig;
    self->count = total->count = f->calls;
    self->bucket[LP_HIST_BOUNDS] = total->bucket[LP_HIST_BOUNDS] = f->calls;
    total->sum_ns = f->total_ns;
    self->sum_ns = folded(c, i) ? f->total_ns : f->self_ns;
}

static void put_histogram(const om_ctx *c, const char *name, const char *help, int which) {
    FILE *out = c->out;
    fprintf(out, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    for (size_t i = 0; i < c->tree->n_nodes; i++) {
        if (!shown(c, i)) continue;
        lp_hist h[2];
        node_hists(c, i, &h[0], &h[1]);
        const lp_hist *x = &h[which];
        char l[OM_LABELS_MAX];
        labels(c, i, l, sizeof l);
        uint64_t cum = 0;
        /* A report's histograms are their +Inf bucket alone; a session's every bound. */
        if (c->ro->hist)
            for (unsigned b = 0; b < LP_HIST_BOUNDS; b++) {
                cum += x->bucket[b];
                fprintf(out, "%s_bucket{%s,le=\"%s\"} %" PRIu64 "\n", name, l,
                        lp_hist_bounds_text[b], cum);
            }
        fprintf(out, "%s_bucket{%s,le=\"+Inf\"} %" PRIu64 "\n", name, l, x->count);
        fprintf(out, "%s_sum{%s} ", name, l);
        put_seconds(out, x->sum_ns);
        fprintf(out, "\n%s_count{%s} %" PRIu64 "\n", name, l, x->count);
    }
}

static void put_calls(const om_ctx *c) {
    FILE *out = c->out;
    fputs("# HELP layerprof_module_calls_total Profiled calls of the module (forward calls; a "
          "folded module's descendants are not counted).\n"
          "# TYPE layerprof_module_calls_total counter\n",
          out);
    for (size_t i = 0; i < c->tree->n_nodes; i++) {
        if (!shown(c, i)) continue;
        lp_hist self, total;
        node_hists(c, i, &self, &total);
        char l[OM_LABELS_MAX];
        labels(c, i, l, sizeof l);
        fprintf(out, "layerprof_module_calls_total{%s} %" PRIu64 "\n", l, total.count);
    }
}

static void put_gauges(const om_ctx *c) {
    FILE *out = c->out;
    int any_size = 0;
    for (size_t i = 0; i < c->tree->n_nodes; i++)
        any_size |= shown(c, i) && c->tree->nodes[i].fig.size.known;
    char l[OM_LABELS_MAX];
    if (any_size) {
        fputs("# HELP layerprof_module_parameters Parameters (elements) of the module and its "
              "submodules.\n# TYPE layerprof_module_parameters gauge\n",
              out);
        for (size_t i = 0; i < c->tree->n_nodes; i++) {
            if (!shown(c, i) || !c->tree->nodes[i].fig.size.known) continue;
            labels(c, i, l, sizeof l);
            fprintf(out, "layerprof_module_parameters{%s} %" PRIu64 "\n", l,
                    c->tree->nodes[i].fig.size.params);
        }
    }
    if (!c->tree->has_flops) return;
    fputs("# HELP layerprof_module_flops FLOPs per call of the module and its submodules (2 per "
          "multiply-add).\n# TYPE layerprof_module_flops gauge\n",
          out);
    for (size_t i = 0; i < c->tree->n_nodes; i++) {
        const lp_figures *f = &c->tree->nodes[i].fig;
        if (!shown(c, i) || !f->calls) continue;
        labels(c, i, l, sizeof l);
        fprintf(out, "layerprof_module_flops{%s} %.17g\n", l,
                (double)f->flops_total / (double)f->calls);
    }
}

static void put_forwards(const om_ctx *c) {
    uint64_t all = c->ro->hist ? c->ro->hist->forwards : c->tree->iterations;
    uint64_t sampled = c->ro->hist ? c->ro->hist->sampled_forwards : c->tree->iterations;
    fprintf(c->out,
            "# HELP layerprof_forwards_total Forwards of the model the session saw.\n"
            "# TYPE layerprof_forwards_total counter\n"
            "layerprof_forwards_total{model=\"%s\"%s} %" PRIu64 "\n"
            "# HELP layerprof_sampled_forwards_total Forwards that were profiled.\n"
            "# TYPE layerprof_sampled_forwards_total counter\n"
            "layerprof_sampled_forwards_total{model=\"%s\"%s} %" PRIu64 "\n",
            c->model, c->extra, all, c->model, c->extra, sampled);
}

int lp_render_openmetrics(const lp_tree *tree, const json_t *run, const lp_render_opts *ro,
                          FILE *out) {
    int rc = lp_render_require(tree, out);
    if (rc) return rc;
    lp_render_opts defaults;
    if (!ro) {
        lp_render_opts_init(&defaults);
        ro = &defaults;
    }
    if (ro->metrics_depth < -1)
        return lp_error_set(LP_ERR_INVALID, "metrics_depth must be -1 (no limit) or more, not %d",
                            ro->metrics_depth);
    if (tree->n_nodes && tree->nodes[0].kind != LP_NODE_MODULE)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "the openmetrics format does not cover sessions with regions yet: "
                            "its series are per module of the model");
    om_ctx c = {tree, ro, out, "", ""};
    run_labels(run, c.extra, sizeof c.extra);
    if (ro->metrics_model)
        escape(ro->metrics_model, c.model, sizeof c.model);
    else
        model_label(run ? json_string_value(json_object_get(run, "model")) : NULL, c.model,
                    sizeof c.model);
    put_histogram(&c, "layerprof_module_self_seconds",
                  "Self time per call of the module: its own work, its submodules' excluded (at "
                  "the depth limit, its whole call).",
                  0);
    put_histogram(&c, "layerprof_module_total_seconds",
                  "Total time per call of the module, its submodules included.", 1);
    put_calls(&c);
    put_gauges(&c);
    put_forwards(&c);
    if (ferror(out)) return lp_error_set(LP_ERR_IO, "cannot write the metrics");
    return LP_OK;
}
