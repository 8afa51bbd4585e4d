/* merge.c: many reports of one model folded into per-module distributions (`layerprof merge`).
 *
 * Each report is checked against the first and its per-call figures copied out; the caller frees
 * the report before reading the next, so thousands merge in memory bounded by the figures kept
 * (merge.h). A report of another model or another module tree is refused, naming the first
 * difference, as is one run with other options (device, mode, threads, inputs) unless the merge
 * was opened with LP_MERGE_FORCE: then the note under the table names the options that differ. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/json_report.h"
#include "report/merge.h"

int lp_merge_new(lp_merge **out, unsigned flags) {
    if (!out) return lp_error_set(LP_ERR_INVALID, "lp_merge_new: NULL argument");
    *out = calloc(1, sizeof **out);
    if (!*out) return lp_error_set(LP_ERR_NOMEM, "merge: out of memory");
    (*out)->flags = flags;
    return LP_OK;
}

/* What keep_first kept of the first report, undone. */
static void forget_first(lp_merge *m) {
    for (size_t i = 0; i < m->n_modules; i++) {
        free(m->modules[i].path);
        free(m->modules[i].cls);
        free(m->modules[i].name);
    }
    free(m->modules);
    m->modules = NULL;
    m->n_modules = 0;
    free(m->model);
    free(m->device);
    free(m->mode);
    free(m->inputs);
    m->model = m->device = m->mode = m->inputs = NULL;
}

void lp_merge_free(lp_merge *m) {
    if (!m) return;
    forget_first(m);
    for (int q = 0; q < LP_MQ_COUNT; q++)
        free(m->values[q]);
    for (size_t i = 0; i < m->n_reports; i++)
        free(m->sources[i]);
    free(m->sources);
    free(m);
}

static char *dup_or_empty(const char *s) {
    return strdup(s ? s : "");
}

/* The model's file name: the same model profiled from two directories is the same model. */
static const char *model_name(const json_t *run) {
    const char *path = json_string_value(json_object_get(run, "model"));
    if (!path) return "";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static const char *run_str(const json_t *run, const char *key) {
    const char *s = json_string_value(json_object_get(run, key));
    return s ? s : "";
}

static long long run_threads(const json_t *run) {
    return (long long)json_integer_value(
        json_object_get(json_object_get(run, "options"), "threads"));
}

/* The inputs as one comparable string ("1x3x224x224:float32 | ..."); NULL when out of memory. */
static char *run_inputs(const json_t *run) {
    json_t *list = json_object_get(json_object_get(run, "options"), "inputs");
    /* Any value, not only arrays and objects: a report may hold none, or a string. */
    char *s = json_dumps(list ? list : json_null(), JSON_COMPACT | JSON_ENCODE_ANY);
    return s;
}

/* "host=a,rank=3" from the run's labels; NULL when it has none (or out of memory). */
static char *labels_text(const json_t *run) {
    json_t *labels = json_object_get(run, "labels");
    if (!json_is_object(labels) || json_object_size(labels) == 0) return NULL;
    size_t len = 0;
    const char *k;
    json_t *v;
    json_object_foreach(labels, k, v) len +=
        strlen(k) + strlen(json_string_value(v) ? json_string_value(v) : "") + 2;
    char *s = malloc(len + 1), *p = s;
    if (!s) return NULL;
    *s = '\0';
    json_object_foreach(labels, k, v) {
        const char *val = json_string_value(v) ? json_string_value(v) : "";
        p += sprintf(p, "%s%s=%s", p == s ? "" : ",", k, val);
    }
    return s;
}

static int keep_first(lp_merge *m, const lp_report *r) {
    const lp_tree *t = lp_report_tree(r);
    const json_t *run = lp_report_run(r);
    m->modules = calloc(t->n_nodes, sizeof *m->modules);
    if (!m->modules) return LP_ERR_NOMEM;
    m->n_modules = t->n_nodes;
    for (size_t i = 0; i < t->n_nodes; i++) {
        m->modules[i].path = strdup(t->nodes[i].path);
        m->modules[i].cls = strdup(t->nodes[i].class_name);
        m->modules[i].name = strdup(t->nodes[i].name);
        m->modules[i].parent = t->nodes[i].parent;
        if (!m->modules[i].path || !m->modules[i].cls || !m->modules[i].name) return LP_ERR_NOMEM;
    }
    m->model = dup_or_empty(model_name(run));
    m->device = dup_or_empty(run_str(run, "device"));
    m->mode = dup_or_empty(run_str(run, "mode"));
    m->inputs = run_inputs(run);
    m->threads = run_threads(run);
    return m->model && m->device && m->mode && m->inputs ? LP_OK : LP_ERR_NOMEM;
}

/* The first difference between r's module tree and the first report's, as an error. */
static int check_tree(const lp_merge *m, const lp_tree *t, const char *name) {
    const char *first = m->sources[0];
    for (size_t i = 0; i < m->n_modules && i < t->n_nodes; i++) {
        const lp_merge_module *a = &m->modules[i];
        const lp_tree_node *b = &t->nodes[i];
        if (strcmp(a->path, b->path) != 0 || strcmp(a->cls, b->class_name) != 0 ||
            a->parent != b->parent)
            return lp_error_set(LP_ERR_INVALID,
                                "%s: another module tree than %s's: module %zu is '%s' (%s) there, "
                                "'%s' (%s) here",
                                name, first, i, a->path, a->cls, b->path, b->class_name);
    }
    if (m->n_modules != t->n_nodes)
        return lp_error_set(LP_ERR_INVALID,
                            "%s: another module tree than %s's: %zu modules here, %zu there", name,
                            first, t->n_nodes, m->n_modules);
    return LP_OK;
}

/* The options r differs in from the first report, as LP_MD_* bits; `what` gets their names. */
static unsigned option_differences(const lp_merge *m, const json_t *run, char *what, size_t size,
                                   int *nomem) {
    unsigned d = 0;
    char *inputs = run_inputs(run);
    if (!inputs) *nomem = 1;
    if (strcmp(m->device, run_str(run, "device")) != 0) d |= LP_MD_DEVICE;
    if (strcmp(m->mode, run_str(run, "mode")) != 0) d |= LP_MD_MODE;
    if (m->threads != run_threads(run)) d |= LP_MD_THREADS;
    if (inputs && strcmp(m->inputs, inputs) != 0) d |= LP_MD_INPUTS;
    free(inputs);
    lp_merge_option_names(d, what, size);
    return d;
}

void lp_merge_option_names(unsigned bits, char *buf, size_t size) {
    static const char *const names[] = {"device", "mode", "threads", "inputs"};
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < 4 && len < size; i++)
        if (bits & (1u << i))
            len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "", names[i]);
}

static int check_same_run(lp_merge *m, const lp_report *r, const char *name) {
    const json_t *run = lp_report_run(r);
    if (strcmp(m->model, model_name(run)) != 0)
        return lp_error_set(LP_ERR_INVALID, "%s: another model ('%s') than %s's ('%s')", name,
                            model_name(run), m->sources[0], m->model);
    int rc = check_tree(m, lp_report_tree(r), name);
    if (rc) return rc;
    char what[64];
    int nomem = 0;
    unsigned d = option_differences(m, run, what, sizeof what, &nomem);
    if (nomem) return LP_ERR_NOMEM;
    if (d && !(m->flags & LP_MERGE_FORCE))
        return lp_error_set(LP_ERR_INVALID,
                            "%s: run with other options than %s (%s); --force merges them anyway",
                            name, m->sources[0], what);
    m->differs |= d;
    return LP_OK;
}

static int grow(lp_merge *m) {
    if (m->n_reports < m->cap_reports) return LP_OK;
    size_t cap = m->cap_reports ? m->cap_reports * 2 : 16;
    char **s = realloc(m->sources, cap * sizeof *s);
    if (!s) return LP_ERR_NOMEM;
    m->sources = s;
    for (int q = 0; q < LP_MQ_COUNT; q++) {
        double *v = realloc(m->values[q], cap * (m->n_modules ? m->n_modules : 1) * sizeof *v);
        if (!v) return LP_ERR_NOMEM;
        m->values[q] = v;
    }
    m->cap_reports = cap;
    return LP_OK;
}

static double per_call(uint64_t ns, uint64_t calls) {
    return (double)ns / (double)calls;
}

/* The report's per-call figures into row n_reports of each quantity. */
static void copy_figures(lp_merge *m, const lp_tree *t) {
    size_t base = m->n_reports * m->n_modules;
    for (size_t i = 0; i < m->n_modules; i++) {
        const lp_tree_node *n = &t->nodes[i];
        int ran = n->selected && n->fig.calls > 0;
        int cuda = ran && t->has_cuda_time;
        m->values[LP_MQ_SELF][base + i] = ran ? per_call(n->fig.self_ns, n->fig.calls) : NAN;
        m->values[LP_MQ_TOTAL][base + i] = ran ? per_call(n->fig.total_ns, n->fig.calls) : NAN;
        m->values[LP_MQ_CUDA_SELF][base + i] =
            cuda ? per_call(n->fig.cuda_self_ns, n->fig.calls) : NAN;
        m->values[LP_MQ_CUDA_TOTAL][base + i] =
            cuda ? per_call(n->fig.cuda_total_ns, n->fig.calls) : NAN;
    }
    if (t->has_cuda_time) m->has_cuda = 1;
}

int lp_merge_add(lp_merge *m, const lp_report *r, const char *label, const char *file) {
    if (!m || !r) return lp_error_set(LP_ERR_INVALID, "lp_merge_add: NULL argument");
    char fallback[32];
    snprintf(fallback, sizeof fallback, "report %zu", m->n_reports + 1);
    const char *name = file ? file : fallback;
    int rc = m->n_reports == 0 ? keep_first(m, r) : LP_OK;
    if (rc == LP_OK && m->n_reports > 0) rc = check_same_run(m, r, name);
    if (rc == LP_OK) rc = grow(m);
    char *source = NULL;
    if (rc == LP_OK) {
        source = label ? strdup(label) : labels_text(lp_report_run(r));
        if (!source) source = strdup(name);
        if (!source) rc = LP_ERR_NOMEM;
    }
    json_t *utf8 = source ? json_string(source) : NULL;
    if (source && !utf8) /* a file name or label in another encoding: JSON holds UTF-8 only */
        for (char *p = source; *p; p++)
            if ((unsigned char)*p >= 0x80) *p = '?';
    json_decref(utf8);
    /* A control character in a file name (or a report's label) would move the cursor or end a
     * line in the tree and the markdown table: shown as '?'. */
    for (char *p = source; p && *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) *p = '?';
    if (rc && m->n_reports == 0) forget_first(m); /* whatever failed, the next one is first */
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "merge: out of memory");
    if (rc) return rc;
    copy_figures(m, lp_report_tree(r));
    m->sources[m->n_reports++] = source;
    return LP_OK;
}

void lp_merge_spread(const lp_merge *m, lp_merge_q q, size_t module, double *scratch,
                     lp_spread *out) {
    /* Gather the module's column: one value per report, strided by the module count. */
    double *column = scratch + m->n_reports;
    for (size_t i = 0; i < m->n_reports; i++)
        column[i] = m->values[q][i * m->n_modules + module];
    lp_spread_of(column, m->n_reports, scratch, out);
}
