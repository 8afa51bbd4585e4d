/* diff.c: two JSON reports side by side: `after`'s module tree, with each module's self and total
 * time per iteration before and after and the change (absolute and relative).
 *
 * Modules are matched by path. A module only in `after` is marked "(added)", one only in `before`
 * "(removed)" and shown where it used to be (after the sibling it followed). A module that did not
 * run on one side has blank cells there and counts as 0 in the change. The Total row compares the
 * reports' totals the way the tree view computes them. Colours (LP_DIFF_COLOR): red where time
 * grew, green where it shrank, bold from 10% on; added rows cyan, removed rows magenta.
 *
 * A change of total time within the two runs' own noise is marked "~" after its %: under twice
 * the standard error of the difference, each side's from its per-call spread (noise.h's rule).
 * A side whose module ran fewer than twice has no spread to judge by: "?". A legend under the
 * table says what the marks mean when one was used. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"
#include "report/json_report.h"
#include "report/textbuf.h"

enum { C_SELF_B, C_SELF_A, C_SELF_D, C_SELF_P, C_TOT_B, C_TOT_A, C_TOT_D, C_TOT_P, N_CELLS };

static const char *const headers[N_CELLS] = {
    "Self CPU before",  "Self CPU after",  "Self change",  "Self %",
    "CPU total before", "CPU total after", "Total change", "Total %"};

typedef struct row {
    char *label;
    int kind; /* 0 both, 1 added, 2 removed, 3 total */
    char cell[N_CELLS][40];
    int sign[N_CELLS]; /* -1 shrank, 0 same, 1 grew: colours */
    int strong[N_CELLS];
} row;

/* A tree's paths sorted, for matching by path. */
typedef struct path_ref {
    const char *path;
    int32_t node;
} path_ref;

typedef struct path_index {
    path_ref *refs;
    size_t n;
} path_index;

static int by_path(const void *a, const void *b) {
    return strcmp(((const path_ref *)a)->path, ((const path_ref *)b)->path);
}

static int index_build(path_index *pi, const lp_tree *t) {
    pi->n = t->n_nodes;
    pi->refs = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *pi->refs);
    if (!pi->refs) return LP_ERR_NOMEM;
    for (size_t i = 0; i < t->n_nodes; i++)
        pi->refs[i] = (path_ref){t->nodes[i].path, (int32_t)i};
    qsort(pi->refs, pi->n, sizeof *pi->refs, by_path);
    return LP_OK;
}

static int32_t index_find(const path_index *pi, const char *path) {
    path_ref key = {path, -1};
    const path_ref *hit = bsearch(&key, pi->refs, pi->n, sizeof *pi->refs, by_path);
    return hit ? hit->node : -1;
}

/* A row to come: the node in `after` (a) and in `before` (b), either -1. */
typedef struct pair {
    int32_t a, b;
} pair;

typedef struct level {
    pair *kids;
    size_t n, i;
} level;

typedef struct differ {
    const lp_tree *ta, *tb;
    path_index ia, ib;
    row *rows;
    size_t n_rows, cap_rows;
    level *stack;
    size_t depth, cap_stack;
    int oom;
    int marked_noise, marked_unknown; /* the legend's lines */
} differ;

/* The children of (a, b): a's in order, each matched in b, then b's that a lacks, each placed
 * after the sibling it followed in b. */
static int children(differ *d, pair p, level *out) {
    size_t na = 0, nb = 0;
    if (p.a >= 0)
        for (int32_t c = d->ta->nodes[p.a].first_child; c >= 0; c = d->ta->nodes[c].next_sibling)
            na++;
    if (p.b >= 0)
        for (int32_t c = d->tb->nodes[p.b].first_child; c >= 0; c = d->tb->nodes[c].next_sibling)
            nb++;
    out->n = out->i = 0;
    out->kids = malloc((na + nb + 1) * sizeof *out->kids);
    if (!out->kids) return LP_ERR_NOMEM;
    if (p.a >= 0)
        for (int32_t c = d->ta->nodes[p.a].first_child; c >= 0; c = d->ta->nodes[c].next_sibling)
            out->kids[out->n++] = (pair){c, index_find(&d->ib, d->ta->nodes[c].path)};
    if (p.b < 0) return LP_OK;
    int32_t prev = -1; /* the previous sibling in b */
    for (int32_t c = d->tb->nodes[p.b].first_child; c >= 0;
         prev = c, c = d->tb->nodes[c].next_sibling) {
        if (index_find(&d->ia, d->tb->nodes[c].path) >= 0) continue;
        size_t at = 0;
        for (size_t k = 0; prev >= 0 && k < out->n; k++)
            if (out->kids[k].b == prev) at = k + 1;
        memmove(out->kids + at + 1, out->kids + at, (out->n - at) * sizeof *out->kids);
        out->kids[at] = (pair){-1, c};
        out->n++;
    }
    return LP_OK;
}

static row *new_row(differ *d) {
    if (d->n_rows == d->cap_rows) {
        size_t cap = d->cap_rows ? d->cap_rows * 2 : 64;
        row *r = realloc(d->rows, cap * sizeof *r);
        if (!r) return NULL;
        d->rows = r;
        d->cap_rows = cap;
    }
    row *r = &d->rows[d->n_rows++];
    memset(r, 0, sizeof *r);
    return r;
}

static void fmt_time(char *buf, double ns) {
    char t[64];
    lp_format_time(ns, LP_UNITS_AUTO, t, sizeof t);
    snprintf(buf, 40, "%.39s", t);
}

/* Before, after, change and % of one quantity into four cells starting at `c`. `has_*`: the
 * module ran on that side (else its cell is blank and it counts as 0). */
static void compare(row *r, int c, int has_b, double vb, int has_a, double va) {
    if (has_b) fmt_time(r->cell[c], vb);
    if (has_a) fmt_time(r->cell[c + 1], va);
    if (!has_a && !has_b) return;
    if (!has_b) vb = 0;
    if (!has_a) va = 0;
    double delta = va - vb;
    char t[40];
    fmt_time(t, fabs(delta));
    double pct = vb != 0 ? 100.0 * delta / vb : 0.0;
    /* The sign is the change's as printed: noise below the printed precision is "0". */
    int shown_zero = strcmp(t, "0.000us") == 0;
    snprintf(r->cell[c + 2], 40, "%s%.30s", shown_zero ? "" : delta > 0 ? "+" : "-", t);
    if (vb == 0 && va != 0)
        snprintf(r->cell[c + 3], 40, "new");
    else if (fabs(pct) < 0.05)
        snprintf(r->cell[c + 3], 40, "0.0%%");
    else
        snprintf(r->cell[c + 3], 40, "%+.1f%%", pct);
    int sign = shown_zero ? 0 : delta > 0 ? 1 : -1;
    r->sign[c + 2] = r->sign[c + 3] = sign;
    r->strong[c + 2] = r->strong[c + 3] = sign && (vb == 0 || fabs(pct) >= 10.0);
}

static int ran(const lp_tree *t, int32_t i) {
    return i >= 0 && t->nodes[i].selected && t->nodes[i].fig.calls > 0;
}

static double per_it(const lp_tree *t, uint64_t v) {
    return t->iterations ? (double)v / (double)t->iterations : 0.0;
}

/* The standard error of a module's total time per iteration: its per-call std times sqrt(calls)
 * over the iterations (independent calls). */
static double total_error(const lp_tree *t, int32_t i) {
    const lp_figures *f = &t->nodes[i].fig;
    return lp_welford_std(&f->time) * sqrt((double)f->calls) / (double)t->iterations;
}

/* "~" after a total change within the noise, "?" where a side cannot tell (one call). */
static void mark_noise(differ *d, row *r, pair p) {
    if (p.a < 0 || p.b < 0 || !ran(d->ta, p.a) || !ran(d->tb, p.b) || !r->cell[C_TOT_P][0]) return;
    const char *mark;
    if (d->ta->nodes[p.a].fig.time.n < 2 || d->tb->nodes[p.b].fig.time.n < 2) {
        mark = " ?";
        d->marked_unknown = 1;
    } else {
        double eb = total_error(d->tb, p.b), ea = total_error(d->ta, p.a);
        double delta = per_it(d->ta, d->ta->nodes[p.a].fig.total_ns) -
                       per_it(d->tb, d->tb->nodes[p.b].fig.total_ns);
        if (fabs(delta) >= 2.0 * sqrt(eb * eb + ea * ea)) return;
        mark = " ~";
        d->marked_noise = 1;
    }
    size_t len = strlen(r->cell[C_TOT_P]);
    snprintf(r->cell[C_TOT_P] + len, sizeof r->cell[C_TOT_P] - len, "%s", mark);
}

static int add_row(differ *d, pair p, int last) {
    row *r = new_row(d);
    if (!r) return LP_ERR_NOMEM;
    size_t len = 0, cap = 64;
    for (size_t level = 1; level < d->depth; level++)
        cap += 8;
    const lp_tree_node *n = p.a >= 0 ? &d->ta->nodes[p.a] : &d->tb->nodes[p.b];
    cap += strlen(n->name) + 16;
    r->label = malloc(cap);
    if (!r->label) return LP_ERR_NOMEM;
    r->label[0] = '\0';
    for (size_t level = 1; level < d->depth; level++) {
        const struct level *f = &d->stack[level - 1];
        len += (size_t)snprintf(r->label + len, cap - len, "%s", f->i < f->n ? "│" : " ");
    }
    if (d->depth > 0)
        len += (size_t)snprintf(r->label + len, cap - len, "%s", last ? "└── " : "├── ");
    r->kind = p.a < 0 ? 2 : p.b < 0 && d->depth > 0 ? 1 : 0;
    snprintf(r->label + len, cap - len, "%s%s", n->name,
             r->kind == 1   ? " (added)"
             : r->kind == 2 ? " (removed)"
                            : "");
    int hb = ran(d->tb, p.b), ha = ran(d->ta, p.a);
    compare(r, C_SELF_B, hb, hb ? per_it(d->tb, d->tb->nodes[p.b].fig.self_ns) : 0, ha,
            ha ? per_it(d->ta, d->ta->nodes[p.a].fig.self_ns) : 0);
    compare(r, C_TOT_B, hb, hb ? per_it(d->tb, d->tb->nodes[p.b].fig.total_ns) : 0, ha,
            ha ? per_it(d->ta, d->ta->nodes[p.a].fig.total_ns) : 0);
    mark_noise(d, r, p);
    return LP_OK;
}

static int push(differ *d, pair p) {
    if (d->depth == d->cap_stack) {
        size_t cap = d->cap_stack ? d->cap_stack * 2 : 32;
        level *s = realloc(d->stack, cap * sizeof *s);
        if (!s) return LP_ERR_NOMEM;
        d->stack = s;
        d->cap_stack = cap;
    }
    int rc = children(d, p, &d->stack[d->depth]);
    if (rc == LP_OK) d->depth++;
    return rc;
}

/* The tree view's Total: every measured module's self, and the top-level measured totals. */
static void totals(const lp_tree *t, double *self, double *total) {
    uint64_t s = 0, tot = 0;
    for (size_t i = 0; i < t->n_nodes; i++) {
        const lp_tree_node *n = &t->nodes[i];
        if (!ran(t, (int32_t)i)) continue;
        s += n->fig.self_ns;
        int32_t p = n->parent;
        while (p >= 0 && !ran(t, p))
            p = t->nodes[p].parent;
        if (p < 0) tot += n->fig.total_ns;
    }
    *self = per_it(t, s);
    *total = per_it(t, tot);
}

static void pad(FILE *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        fputc(' ', out);
}

static void describe(FILE *out, const char *what, const lp_report *r) {
    lp_meta_info m;
    lp_report_meta(r, &m);
    fprintf(out, "%s %s (%s, %s mode, %llu iteration%s", what, *m.model ? m.model : "?",
            *m.device ? m.device : "?", *m.mode ? m.mode : "?", (unsigned long long)m.iterations,
            m.iterations == 1 ? "" : "s");
    if (*m.libtorch_version) fprintf(out, ", libtorch %s", m.libtorch_version);
    if (*m.date) fprintf(out, ", %s", m.date);
    fputs(")\n", out);
}

static void print_row(const row *r, const size_t *w, int color, FILE *final);

static void print(const differ *d, const lp_report *before, const lp_report *after, int color,
                  FILE *out) {
    size_t w[N_CELLS + 1];
    w[0] = lp_text_width("Module");
    for (int c = 0; c < N_CELLS; c++)
        w[c + 1] = lp_text_width(headers[c]);
    for (size_t i = 0; i < d->n_rows; i++) {
        const row *r = &d->rows[i];
        if (lp_text_width(r->label) > w[0]) w[0] = lp_text_width(r->label);
        for (int c = 0; c < N_CELLS; c++)
            if (strlen(r->cell[c]) > w[c + 1]) w[c + 1] = strlen(r->cell[c]);
    }
    describe(out, "before:", before);
    describe(out, "after: ", after);
    fputc('\n', out);
    fputs("Module", out);
    pad(out, w[0] - lp_text_width("Module"));
    for (int c = 0; c < N_CELLS; c++) {
        fputs(" | ", out);
        pad(out, w[c + 1] - lp_text_width(headers[c]));
        fputs(headers[c], out);
    }
    fputc('\n', out);
    for (size_t i = 0; i < d->n_rows; i++) {
        const row *r = &d->rows[i];
        print_row(r, w, color, out);
    }
    if (d->marked_noise || d->marked_unknown) fputc('\n', out);
    if (d->marked_noise)
        fputs("~: the change is within the two runs' noise (under twice the standard error of "
              "the difference, from each side's per-call spread)\n",
              out);
    if (d->marked_unknown)
        fputs("?: a side ran the module once: no spread to judge the change by (more "
              "--iterations)\n",
              out);
}

/* One row, without trailing blanks (a module that ran on neither side has empty cells). */
static void print_row(const row *r, const size_t *w, int color, FILE *final) {
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out) out = final; /* no memory for a line buffer: write the row as it comes */
    if (r->kind == 3) {    /* a rule above the Total row */
        for (int c = 0; c <= N_CELLS; c++) {
            if (c) fputs("-|-", out);
            for (size_t k = 0; k < w[c]; k++)
                fputc('-', out);
        }
        fputc('\n', out);
    }
    const char *lc = !color ? NULL : r->kind == 1 ? "\033[36m" : r->kind == 2 ? "\033[35m" : NULL;
    if (lc) fputs(lc, out);
    fputs(r->label, out);
    if (lc) fputs("\033[0m", out);
    pad(out, w[0] - lp_text_width(r->label));
    for (int c = 0; c < N_CELLS; c++) {
        fputs(" | ", out);
        pad(out, w[c + 1] - strlen(r->cell[c]));
        const char *cc = NULL;
        if (color && r->sign[c])
            cc = r->sign[c] > 0 ? (r->strong[c] ? "\033[1;31m" : "\033[31m")
                                : (r->strong[c] ? "\033[1;32m" : "\033[32m");
        if (cc) fputs(cc, out);
        fputs(r->cell[c], out);
        if (cc) fputs("\033[0m", out);
    }
    if (out != final) {
        fclose(out);
        while (len > 0 && buf[len - 1] == ' ')
            len--;
        fwrite(buf, 1, len, final);
        free(buf);
    }
    fputc('\n', final);
}

int lp_report_diff(const lp_report *before, const lp_report *after, unsigned flags, FILE *out) {
    if (!before || !after || !out)
        return lp_error_set(LP_ERR_INVALID, "lp_report_diff: NULL argument");
    differ d;
    memset(&d, 0, sizeof d);
    d.ta = lp_report_tree(after);
    d.tb = lp_report_tree(before);
    int rc = index_build(&d.ia, d.ta);
    if (rc == LP_OK) rc = index_build(&d.ib, d.tb);
    if (rc == LP_OK && d.ta->n_nodes && d.tb->n_nodes) {
        pair root = {0, 0};
        rc = add_row(&d, root, 1);
        if (rc == LP_OK) rc = push(&d, root);
        while (rc == LP_OK && d.depth > 0) {
            level *f = &d.stack[d.depth - 1];
            if (f->i == f->n) {
                free(f->kids);
                d.depth--;
                continue;
            }
            pair p = f->kids[f->i++];
            rc = add_row(&d, p, f->i == f->n);
            if (rc == LP_OK) rc = push(&d, p);
        }
    }
    if (rc == LP_OK) {
        row *r = new_row(&d);
        if (!r || !(r->label = malloc(8))) {
            rc = LP_ERR_NOMEM;
        } else {
            strcpy(r->label, "Total");
            r->kind = 3;
            double sb, tb, sa, ta;
            totals(d.tb, &sb, &tb);
            totals(d.ta, &sa, &ta);
            compare(r, C_SELF_B, 1, sb, 1, sa);
            compare(r, C_TOT_B, 1, tb, 1, ta);
        }
    }
    if (rc == LP_OK) print(&d, before, after, (flags & LP_DIFF_COLOR) != 0, out);
    while (d.depth > 0)
        free(d.stack[--d.depth].kids);
    free(d.stack);
    for (size_t i = 0; i < d.n_rows; i++)
        free(d.rows[i].label);
    free(d.rows);
    free(d.ia.refs);
    free(d.ib.refs);
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "diff: out of memory");
    if (rc != LP_OK) return rc;
    if (ferror(out)) return lp_error_set(LP_ERR_IO, "diff: writing failed");
    return LP_OK;
}
