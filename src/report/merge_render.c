/* merge_render.c: the merged distributions as a tree (or, with `top`, the modules ranked by a
 * column), in the text, markdown, CSV and JSON formats. Every format shows the same rows; the
 * text and markdown ones the chosen columns, CSV the chosen columns in raw numbers (ns per call),
 * JSON every figure. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"
#include "report/json_report.h"
#include "report/merge_columns.h"
#include "report/render.h"
#include "report/textbuf.h"

static const char *const default_cols[] = {"total_median", "total_p90",   "total_max", "total_skew",
                                           "total_source", "self_median", "self_max",  "reports"};
static const char *const default_cuda_cols[] = {"cuda_total_median", "cuda_total_max"};

typedef struct view {
    const lp_merge *m;
    lp_spread *spreads; /* [module * LP_MQ_COUNT + q] */
    lp_merge_col cols[64];
    size_t n_cols;
    size_t *rows; /* module indices, in the order shown */
    char **labels;
    size_t n_rows;
    int ranked;
    char rank_id[64]; /* the column the rows are ranked by */
} view;

static const lp_spread *spread(const view *v, size_t module, lp_merge_q q) {
    return &v->spreads[module * LP_MQ_COUNT + q];
}

static int add_col(view *v, const char *id) {
    if (v->n_cols == sizeof v->cols / sizeof *v->cols)
        return lp_error_set(LP_ERR_INVALID, "merge: more than 64 columns");
    return lp_merge_col_parse(id, v->m->has_cuda, &v->cols[v->n_cols++]);
}

static int pick_cols(view *v, const char *const *columns, size_t n) {
    int rc = LP_OK;
    if (n) {
        for (size_t i = 0; i < n && !rc; i++)
            rc = add_col(v, columns[i]);
        return rc;
    }
    for (size_t i = 0; i < sizeof default_cols / sizeof *default_cols && !rc; i++)
        rc = add_col(v, default_cols[i]);
    for (size_t i = 0; v->m->has_cuda && i < 2 && !rc; i++)
        rc = add_col(v, default_cuda_cols[i]);
    return rc;
}

/* A module and the value it is ranked by: qsort has no payload, so the values travel with it
 * (two threads may render at once). */
typedef struct ranked {
    double value;
    double tie; /* equal skews (infinite ones: medians of 0): the greater max first */
    size_t module;
} ranked;

static int by_rank(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->value != y->value) return x->value > y->value ? -1 : 1;
    if (x->tie != y->tie) return x->tie > y->tie ? -1 : 1;
    return x->module < y->module ? -1 : x->module > y->module; /* ties in model order */
}

/* The label of a tree row: the branch glyphs of its ancestors (last_at[1..depth): whether the
 * ancestor at that depth was its parent's last child), its own branch, its name. */
static char *tree_label(const char *name, const unsigned char *last_at, size_t depth) {
    size_t cap = strlen(name) + 1 + depth * sizeof "├── "; /* the widest glyph, per depth */
    char *label = malloc(cap), *p = label;
    if (!label) return NULL;
    for (size_t d = 1; d < depth; d++)
        p += sprintf(p, "%s", last_at[d] ? "    " : "│   ");
    if (depth) p += sprintf(p, "%s", last_at[depth] ? "└── " : "├── ");
    strcpy(p, name);
    return label;
}

/* Tree rows: depth first from the root (module 0), children in model order. Iterative and linear
 * (a deep or wide tree of many thousand modules costs no stack and no rescans): child lists are
 * built once, then the walk goes down to a first child, else on to a sibling, else back up. */
static int tree_rows(view *v) {
    const lp_merge *m = v->m;
    size_t n = m->n_modules;
    int32_t *first = malloc(n * sizeof *first), *next = malloc(n * sizeof *next);
    size_t *depth = malloc(n * sizeof *depth);
    unsigned char *last_at = malloc(n + 1);
    int rc = first && next && depth && last_at ? LP_OK : LP_ERR_NOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        first[i] = next[i] = -1;
    for (size_t i = n; !rc && i-- > 1;) { /* backwards, so each list is in model order */
        int32_t p = m->modules[i].parent;
        if (p < 0 || (size_t)p >= i) continue; /* parents come first; anything else is no child */
        next[i] = first[p];
        first[p] = (int32_t)i;
    }
    int32_t node = 0;
    if (!rc) depth[0] = 0;
    while (!rc && node >= 0) {
        last_at[depth[node]] = next[node] < 0;
        v->labels[v->n_rows] = tree_label(m->modules[node].name, last_at, depth[node]);
        if (!v->labels[v->n_rows]) rc = LP_ERR_NOMEM;
        v->rows[v->n_rows++] = (size_t)node;
        if (first[node] >= 0) {
            depth[first[node]] = depth[node] + 1;
            node = first[node];
            continue;
        }
        while (node > 0 && next[node] < 0)
            node = m->modules[node].parent;
        if (node <= 0) break;
        depth[next[node]] = depth[node];
        node = next[node];
    }
    free(first);
    free(next);
    free(depth);
    free(last_at);
    return rc;
}

static int ranked_rows(view *v, int top, const char *rank_by) {
    lp_merge_col c;
    int rc = lp_merge_col_parse(rank_by ? rank_by : "total_skew", v->m->has_cuda, &c);
    if (rc) return rc;
    if (c.stat == LP_MS_SOURCE)
        return lp_error_set(LP_ERR_INVALID, "merge: cannot rank by '%s' (a report, not a figure)",
                            rank_by);
    ranked *order = malloc((v->m->n_modules ? v->m->n_modules : 1) * sizeof *order);
    if (!order) return LP_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < v->m->n_modules; i++)
        if (spread(v, i, c.q)->n > 0)
            order[n++] = (ranked){lp_merge_col_value(c, spread(v, i, c.q)),
                                  c.stat == LP_MS_SKEW ? spread(v, i, c.q)->max : 0.0, i};
    qsort(order, n, sizeof *order, by_rank);
    v->n_rows = (size_t)top < n ? (size_t)top : n;
    for (size_t i = 0; i < v->n_rows; i++)
        v->rows[i] = order[i].module;
    free(order);
    for (size_t i = 0; i < v->n_rows; i++) {
        const lp_merge_module *mod = &v->m->modules[v->rows[i]];
        v->labels[i] = strdup(*mod->path ? mod->path : mod->name);
        if (!v->labels[i]) return LP_ERR_NOMEM;
    }
    v->ranked = 1;
    lp_merge_col_id(c, v->rank_id, sizeof v->rank_id);
    return LP_OK;
}

/* The cell's text: "" where the module did not run (or, for skew, ran in no time at all); a skew
 * over a median of 0 is "inf". */
static void cell(const view *v, size_t module, lp_merge_col c, char *buf, size_t size) {
    const lp_spread *s = spread(v, module, c.q);
    buf[0] = '\0';
    if (s->n == 0) return;
    switch (c.stat) {
    case LP_MS_SOURCE:
        snprintf(buf, size, "%s", v->m->sources[s->max_at]);
        break;
    case LP_MS_SKEW:
        if (isinf(s->skew))
            snprintf(buf, size, "inf");
        else if (s->median > 0)
            snprintf(buf, size, "%.2fx", s->skew);
        break;
    case LP_MS_REPORTS:
        snprintf(buf, size, "%zu", s->n);
        break;
    default:
        lp_format_time(lp_merge_col_value(c, s), LP_UNITS_AUTO, buf, size);
        break;
    }
}

static void heading(const view *v, FILE *out, const char *line_start) {
    const lp_merge *m = v->m;
    fprintf(out, "%s%zu report%s of %s (%s, %s mode); figures per call\n", line_start, m->n_reports,
            m->n_reports == 1 ? "" : "s", *m->model ? m->model : "?", *m->device ? m->device : "?",
            *m->mode ? m->mode : "?");
    if (m->differs) {
        char what[64];
        lp_merge_option_names(m->differs, what, sizeof what);
        fprintf(out, "%snote: merged with --force: the reports differ in %s\n", line_start, what);
    }
}

static void pad(FILE *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        fputc(' ', out);
}

static int render_text(const view *v, FILE *out) {
    char buf[256], hb[64];
    size_t w[65];
    w[0] = lp_text_width("Module");
    for (size_t c = 0; c < v->n_cols; c++)
        w[c + 1] = lp_text_width(lp_merge_col_header(v->cols[c], hb, sizeof hb));
    for (size_t r = 0; r < v->n_rows; r++) {
        if (lp_text_width(v->labels[r]) > w[0]) w[0] = lp_text_width(v->labels[r]);
        for (size_t c = 0; c < v->n_cols; c++) {
            cell(v, v->rows[r], v->cols[c], buf, sizeof buf);
            if (lp_text_width(buf) > w[c + 1]) w[c + 1] = lp_text_width(buf);
        }
    }
    heading(v, out, "");
    if (v->ranked) fprintf(out, "the %zu modules with the highest %s\n", v->n_rows, v->rank_id);
    fputc('\n', out);
    fputs("Module", out);
    pad(out, w[0] - lp_text_width("Module"));
    for (size_t c = 0; c < v->n_cols; c++) {
        const char *h = lp_merge_col_header(v->cols[c], hb, sizeof hb);
        int left = v->cols[c].stat == LP_MS_SOURCE;
        fputs(" | ", out);
        if (!left) pad(out, w[c + 1] - lp_text_width(h));
        fputs(h, out);
        if (left && c + 1 < v->n_cols) pad(out, w[c + 1] - lp_text_width(h));
    }
    fputc('\n', out);
    for (size_t r = 0; r < v->n_rows; r++) {
        fputs(v->labels[r], out);
        pad(out, w[0] - lp_text_width(v->labels[r]));
        for (size_t c = 0; c < v->n_cols; c++) {
            cell(v, v->rows[r], v->cols[c], buf, sizeof buf);
            fputs(" | ", out);
            /* Report names read left to right; numbers line up on the right. No blanks end a
             * line. */
            int left = v->cols[c].stat == LP_MS_SOURCE;
            if (!left) pad(out, w[c + 1] - lp_text_width(buf));
            fputs(buf, out);
            if (left && c + 1 < v->n_cols) pad(out, w[c + 1] - lp_text_width(buf));
        }
        fputc('\n', out);
    }
    return LP_OK;
}

static void md_escape(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '*' || *s == '_' || *s == '`') fputc('\\', out);
        fputc(*s, out);
    }
}

static int render_markdown(const view *v, FILE *out) {
    char buf[256], hb[64];
    heading(v, out, "");
    fputs("\n| Module |", out);
    for (size_t c = 0; c < v->n_cols; c++)
        fprintf(out, " %s |", lp_merge_col_header(v->cols[c], hb, sizeof hb));
    fputs("\n|:--|", out);
    for (size_t c = 0; c < v->n_cols; c++)
        fputs(v->cols[c].stat == LP_MS_SOURCE ? ":--|" : "--:|", out);
    fputc('\n', out);
    for (size_t r = 0; r < v->n_rows; r++) {
        const lp_merge_module *mod = &v->m->modules[v->rows[r]];
        fputs("| ", out);
        md_escape(out, *mod->path ? mod->path : mod->name);
        fputs(" |", out);
        for (size_t c = 0; c < v->n_cols; c++) {
            cell(v, v->rows[r], v->cols[c], buf, sizeof buf);
            fputc(' ', out);
            md_escape(out, buf);
            fputs(" |", out);
        }
        fputc('\n', out);
    }
    return LP_OK;
}

static int render_csv(const view *v, FILE *out) {
    char id[64];
    fputs("path,class", out);
    for (size_t c = 0; c < v->n_cols; c++) {
        lp_merge_stat s = v->cols[c].stat;
        fprintf(out, ",%s%s", lp_merge_col_id(v->cols[c], id, sizeof id),
                s <= LP_MS_MAX ? "_ns" : "");
    }
    fputs("\r\n", out);
    for (size_t r = 0; r < v->n_rows; r++) {
        size_t i = v->rows[r];
        lp_csv_field(out, v->m->modules[i].path);
        fputc(',', out);
        lp_csv_field(out, v->m->modules[i].cls);
        for (size_t c = 0; c < v->n_cols; c++) {
            const lp_spread *s = spread(v, i, v->cols[c].q);
            fputc(',', out);
            if (s->n == 0) continue;
            if (v->cols[c].stat == LP_MS_SOURCE)
                lp_csv_field(out, v->m->sources[s->max_at]);
            else if (v->cols[c].stat == LP_MS_REPORTS)
                fprintf(out, "%zu", s->n);
            else
                fprintf(out, "%.17g", lp_merge_col_value(v->cols[c], s));
        }
        fputs("\r\n", out);
    }
    return LP_OK;
}

static json_t *spread_json(const view *v, const lp_spread *s) {
    if (s->n == 0) return json_null();
    /* JSON has no infinity: an infinite skew (a median of 0) is null, as docs/merge.md says. */
    return json_pack("{s:f, s:f, s:f, s:f, s:o, s:s}", "min_ns", s->min, "median_ns", s->median,
                     "p90_ns", s->p90, "max_ns", s->max, "skew",
                     isinf(s->skew) ? json_null() : json_real(s->skew), "max_source",
                     v->m->sources[s->max_at]);
}

static int render_json(const view *v, FILE *out) {
    static const char *const keys[LP_MQ_COUNT] = {"self", "total", "cuda_self", "cuda_total"};
    const lp_merge *m = v->m;
    json_t *doc = json_object(), *mods = json_array(), *notes = json_array();
    int ok = doc && mods && notes;
    if (ok && m->differs) {
        char what[64];
        lp_merge_option_names(m->differs, what, sizeof what);
        ok = !json_array_append_new(
            notes, json_sprintf("merged with --force: the reports differ in %s", what));
    }
    for (size_t r = 0; ok && r < v->n_rows; r++) {
        size_t i = v->rows[r];
        json_t *o =
            json_pack("{s:s, s:s, s:I}", "path", m->modules[i].path, "class", m->modules[i].cls,
                      "reports", (json_int_t)spread(v, i, LP_MQ_TOTAL)->n);
        int set = o != NULL;
        for (int q = 0; set && q < LP_MQ_COUNT; q++)
            if (q < LP_MQ_CUDA_SELF || m->has_cuda)
                set = !json_object_set_new(o, keys[q], spread_json(v, spread(v, i, (lp_merge_q)q)));
        if (!set) json_decref(o);
        ok = set && !json_array_append_new(mods, o);
    }
    if (ok)
        ok = !json_object_set_new(doc, "model", json_string(m->model)) &&
             !json_object_set_new(doc, "reports", json_integer((json_int_t)m->n_reports)) &&
             !json_object_set_new(doc, "notes", json_incref(notes)) &&
             !json_object_set_new(doc, "modules", json_incref(mods));
    int rc = ok ? lp_json_write(doc, out) : lp_error_set(LP_ERR_NOMEM, "merge: out of memory");
    json_decref(notes);
    json_decref(mods);
    json_decref(doc);
    return rc;
}

static int build(view *v, const char *const *columns, size_t n_columns, int top,
                 const char *rank_by) {
    const lp_merge *m = v->m;
    size_t n = m->n_modules;
    v->spreads = malloc((n ? n : 1) * LP_MQ_COUNT * sizeof *v->spreads);
    double *scratch = malloc((2 * m->n_reports + 1) * sizeof *scratch);
    v->rows = malloc((n ? n : 1) * sizeof *v->rows);
    v->labels = calloc(n ? n : 1, sizeof *v->labels);
    if (!v->spreads || !scratch || !v->rows || !v->labels) {
        free(scratch);
        return lp_error_set(LP_ERR_NOMEM, "merge: out of memory");
    }
    for (size_t i = 0; i < n; i++)
        for (int q = 0; q < LP_MQ_COUNT; q++)
            lp_merge_spread(m, (lp_merge_q)q, i, scratch, &v->spreads[i * LP_MQ_COUNT + q]);
    free(scratch);
    int rc = pick_cols(v, columns, n_columns);
    if (rc) return rc;
    rc = top > 0 ? ranked_rows(v, top, rank_by) : n ? tree_rows(v) : LP_OK;
    return rc == LP_ERR_NOMEM ? lp_error_set(rc, "merge: out of memory") : rc;
}

int lp_merge_render(const lp_merge *m, lp_format format, const char *const *columns,
                    size_t n_columns, int top, const char *rank_by, FILE *out) {
    if (!m || !out || (n_columns && !columns))
        return lp_error_set(LP_ERR_INVALID, "lp_merge_render: NULL argument");
    if (m->n_reports == 0) return lp_error_set(LP_ERR_INVALID, "merge: no report to merge");
    if (top < 0) return lp_error_set(LP_ERR_INVALID, "merge: --top must be >= 0");
    if (format != LP_FORMAT_TREE && format != LP_FORMAT_JSON && format != LP_FORMAT_CSV &&
        format != LP_FORMAT_MARKDOWN)
        return lp_error_set(LP_ERR_UNSUPPORTED,
                            "merge renders tree, json, csv and markdown, not %s",
                            lp_format_name(format) ? lp_format_name(format) : "that format");
    view v = {.m = m};
    int rc = build(&v, columns, n_columns, top, rank_by);
    if (!rc) {
        rc = format == LP_FORMAT_JSON       ? render_json(&v, out)
             : format == LP_FORMAT_CSV      ? render_csv(&v, out)
             : format == LP_FORMAT_MARKDOWN ? render_markdown(&v, out)
                                            : render_text(&v, out);
    }
    for (size_t i = 0; v.labels && i < m->n_modules; i++)
        free(v.labels[i]);
    free(v.labels);
    free(v.rows);
    free(v.spreads);
    if (!rc && ferror(out)) rc = lp_error_set(LP_ERR_IO, "merge: writing failed");
    return rc;
}
