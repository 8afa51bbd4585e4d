/* render_tree.c: torchprof's box-drawn module table, with its faults fixed (real parent rows, a
 * Total that adds up, `│` only where an ancestor really has a later sibling).
 *
 * Two passes, both linear in the number of rows: a pre-order walk formats every cell into one text
 * arena (widths are only known at the end), then the lines are padded and written. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/units.h"
#include "report/columns.h"
#include "report/render.h"
#include "report/textbuf.h"

/* The walk ------------------------------------------------------------------------------------- */

typedef struct glyphs {
    const char *bar, *space, *tee, *elbow;
} glyphs;

static const glyphs box_glyphs = {"│", " ", "├── ", "└── "};
static const glyphs ascii_glyphs = {"|", " ", "|-- ", "`-- "};

enum { ITEM_MODULE, ITEM_OP, ITEM_SELF };

/* One row to come: a child module, an op row, or a module's "(self)" remainder. */
typedef struct item {
    int kind;
    int32_t idx; /* node index (module, self) or op index */
    size_t pos;  /* position in model order, for a stable sort */
    double key;  /* sort column value, -inf when blank so blanks go last */
} item;

typedef struct frame {
    item *kids;
    size_t n, i;
} frame;

/* Per module, over its subtree: what folding and the Total row need, summed bottom-up once. */
typedef struct subtree {
    uint64_t self_ns;  /* self of every measured module in it */
    uint64_t total_ns; /* total of its top-level measured modules (itself, when measured) */
} subtree;

typedef struct render {
    const lp_tree *t;   /* what the table draws: the tree, or its folded copy (--depth) */
    const lp_tree *raw; /* the tree as recorded: the top list ranks every module */
    const lp_render_opts *ro;
    const glyphs *g;
    const lp_column *cols[LP_MAX_COLUMNS];
    size_t n_cols;
    const lp_column *sort; /* NULL: model order */
    subtree *sub;
    int folded; /* some row stands for modules the depth limit hid */

    lp_textbuf text; /* every label and cell, NUL-separated */
    size_t *cell;    /* per row, n_cols + 1 offsets into text (label first) */
    size_t n_rows, cap_rows;
    size_t width[LP_MAX_COLUMNS + 1];

    frame *stack;
    size_t depth, cap_stack;
} render;

/* Nodes are stored parent before child (lp_tree_add needs the parent first), so one reverse pass
 * sees every child before its parent. */
static int sum_subtrees(render *r) {
    const lp_tree *t = r->t;
    r->sub = calloc(t->n_nodes ? t->n_nodes : 1, sizeof *r->sub);
    if (!r->sub) return LP_ERR_NOMEM;
    for (size_t i = t->n_nodes; i-- > 0;) {
        const lp_tree_node *n = &t->nodes[i];
        subtree *s = &r->sub[i];
        if (lp_node_measured(n) || lp_node_stands_in(n)) {
            s->self_ns += n->fig.self_ns;
            s->total_ns = n->fig.total_ns; /* its children's totals are inside its own */
        }
        if (n->parent >= 0) {
            subtree *p = &r->sub[n->parent];
            p->self_ns += s->self_ns;
            p->total_ns += s->total_ns;
        }
    }
    return LP_OK;
}

/* A module that was profiled and never called (dropout in eval mode, an unused branch) says so with
 * 0 calls; an unselected one was not watched, and a container has no forward to call. */
static int never_ran(const lp_tree_node *n) {
    return n->kind == LP_NODE_MODULE && n->selected && !n->container && n->fig.calls == 0;
}

/* The figures a module row shows, and which column groups carry a value. A row that stands for
 * hidden modules already holds their figures (lp_tree_fold); an unmeasured one (paths selected
 * deeper) shows only the time measured beneath it. */
static lp_figures module_figures(const render *r, int32_t m, unsigned *groups) {
    const lp_tree_node *n = &r->t->nodes[m];
    lp_figures fig = n->fig;
    *groups = lp_node_measured(n) ? LP_COLGRP_ALL : never_ran(n) ? LP_COLGRP_CALLS : 0;
    /* A context or the session is a group, never a call: it shows the time of what it holds. */
    if ((n->kind == LP_NODE_CONTEXT || n->kind == LP_NODE_SESSION) && fig.total_ns) {
        *groups = LP_COLGRP_TIME;
        return fig;
    }
    if (lp_node_stands_in(n)) *groups = LP_COLGRP_TIME | (never_ran(n) ? LP_COLGRP_CALLS : 0);
    return fig;
}

/* "(self)": the module's time outside its top-level op rows, clamped at 0 because ops' own clocks
 * can overrun the module's by a little. Time only: memory and calls do not split this way. */
static lp_figures self_figures(const render *r, int32_t m) {
    unsigned groups;
    lp_figures fig = module_figures(r, m, &groups);
    uint64_t ops = 0;
    for (int32_t o = r->t->nodes[m].first_op; o >= 0; o = r->t->ops[o].next_sibling)
        ops += r->t->ops[o].fig.total_ns;
    uint64_t rest = fig.self_ns > ops ? fig.self_ns - ops : 0;
    memset(&fig, 0, sizeof fig);
    fig.self_ns = fig.total_ns = rest;
    return fig;
}

static int shows_ops(const render *r) {
    return r->ro->show_ops && r->t->has_ops;
}

static double sort_key(const render *r, const lp_figures *fig, unsigned groups) {
    double v;
    if (!lp_column_value(r->sort, r->t, fig, groups, &v) || isnan(v)) return -INFINITY;
    return v;
}

static int by_key_desc(const void *a, const void *b) {
    const item *x = a, *y = b;
    if (x->key != y->key) return x->key > y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static void sort_items(const render *r, item *items, size_t n) {
    if (r->sort && n > 1) qsort(items, n, sizeof *items, by_key_desc);
}

/* The rows under `parent`: child modules first, then op rows, then "(self)" when ops were shown. */
static int children(render *r, const item *parent, frame *out) {
    const lp_tree *t = r->t;
    size_t n_mods = 0, n_ops = 0;
    int32_t first_mod = -1, first_op = -1;
    if (parent->kind == ITEM_MODULE) {
        first_mod = t->nodes[parent->idx].first_child;
        if (shows_ops(r)) first_op = t->nodes[parent->idx].first_op;
    } else if (parent->kind == ITEM_OP) {
        first_op = t->ops[parent->idx].first_child;
    }
    for (int32_t c = first_mod; c >= 0; c = t->nodes[c].next_sibling)
        n_mods++;
    for (int32_t o = first_op; o >= 0; o = t->ops[o].next_sibling)
        n_ops++;
    unsigned groups = 0;
    if (parent->kind == ITEM_MODULE) module_figures(r, parent->idx, &groups);
    int with_self = parent->kind == ITEM_MODULE && n_ops > 0 && (groups & LP_COLGRP_TIME);

    out->n = n_mods + n_ops + (size_t)with_self;
    out->i = 0;
    out->kids = NULL;
    if (out->n == 0) return LP_OK;
    out->kids = malloc(out->n * sizeof *out->kids);
    if (!out->kids) return LP_ERR_NOMEM;

    size_t k = 0;
    for (int32_t c = first_mod; c >= 0; c = t->nodes[c].next_sibling, k++) {
        unsigned g;
        lp_figures fig = module_figures(r, c, &g);
        out->kids[k] = (item){ITEM_MODULE, c, k, r->sort ? sort_key(r, &fig, g) : 0.0};
    }
    sort_items(r, out->kids, n_mods);
    for (int32_t o = first_op; o >= 0; o = t->ops[o].next_sibling, k++) {
        double key = r->sort ? sort_key(r, &t->ops[o].fig, LP_COLGRP_ALL) : 0.0;
        out->kids[k] = (item){ITEM_OP, o, k, key};
    }
    sort_items(r, out->kids + n_mods, n_ops);
    if (with_self) out->kids[k] = (item){ITEM_SELF, parent->idx, k, 0.0};
    return LP_OK;
}

static int push(render *r, const item *parent) {
    if (r->depth == r->cap_stack) {
        size_t cap = r->cap_stack ? r->cap_stack * 2 : 32;
        frame *s = realloc(r->stack, cap * sizeof *s);
        if (!s) return LP_ERR_NOMEM;
        r->stack = s;
        r->cap_stack = cap;
    }
    int rc = children(r, parent, &r->stack[r->depth]);
    if (rc == LP_OK) r->depth++;
    return rc;
}

static int new_row(render *r) {
    if (r->n_rows == r->cap_rows) {
        size_t cap = r->cap_rows ? r->cap_rows * 2 : 64;
        size_t *c = realloc(r->cell, cap * (r->n_cols + 1) * sizeof *c);
        if (!c) return LP_ERR_NOMEM;
        r->cell = c;
        r->cap_rows = cap;
    }
    r->n_rows++;
    return LP_OK;
}

/* Ends the current arena string as cell `c` of the newest row and widens its column. */
static void end_cell(render *r, size_t c, size_t start) {
    lp_textbuf_put(&r->text, "", 1); /* keep the NUL: cells are read back as C strings */
    r->cell[(r->n_rows - 1) * (r->n_cols + 1) + c] = start;
    if (!r->text.oom) {
        size_t w = lp_text_width(r->text.p + start);
        if (w > r->width[c]) r->width[c] = w;
    }
}

static void add_cells(render *r, const lp_figures *fig, unsigned groups) {
    for (size_t c = 0; c < r->n_cols; c++) {
        size_t start = r->text.len;
        double v;
        char buf[64];
        if (lp_column_value(r->cols[c], r->t, fig, groups, &v)) {
            lp_column_format(r->cols[c], fig, v, r->ro->units, buf, sizeof buf);
            lp_textbuf_puts(&r->text, buf);
        }
        end_cell(r, c + 1, start);
    }
}

/* A row at walk depth d: one glyph per ancestor level 1..d-1 (`│` only when that ancestor has a
 * later sibling: torchprof drew it for every level), then the branch, then the name. */
static int add_row(render *r, const item *it, int last) {
    const lp_tree *t = r->t;
    int rc = new_row(r);
    if (rc != LP_OK) return rc;
    size_t start = r->text.len;
    for (size_t level = 1; level < r->depth; level++) {
        const frame *f = &r->stack[level - 1];
        lp_textbuf_puts(&r->text, f->i < f->n ? r->g->bar : r->g->space);
    }
    if (r->depth > 0) lp_textbuf_puts(&r->text, last ? r->g->elbow : r->g->tee);

    lp_figures fig;
    unsigned groups = LP_COLGRP_ALL;
    if (it->kind == ITEM_MODULE) {
        if (t->nodes[it->idx].fused_module) { /* where a fused module's time went */
            char *label = lp_render_module_label(t, it->idx, r->ro->name_width, r->ro->ascii);
            if (!label) return LP_ERR_NOMEM;
            lp_textbuf_puts(&r->text, label);
            free(label);
        } else {
            lp_textbuf_puts(&r->text, t->nodes[it->idx].name);
        }
        fig = module_figures(r, it->idx, &groups);
        if (t->nodes[it->idx].folded) r->folded = 1;
    } else if (it->kind == ITEM_OP) {
        const lp_op_node *o = &t->ops[it->idx];
        const char *name = lp_tree_op_name(t, o->op), *shapes = lp_tree_shapes(t, o->shapes);
        size_t head, tail;
        if (name && lp_render_name_cut(name, r->ro->name_width, r->ro->ascii, &head, &tail)) {
            lp_textbuf_put(&r->text, name, head);
            lp_textbuf_puts(&r->text, lp_render_ellipsis(r->ro->ascii));
            lp_textbuf_puts(&r->text, name + strlen(name) - tail);
        } else if (name)
            lp_textbuf_puts(&r->text, name);
        else
            lp_textbuf_printf(&r->text, "op#%d", (int)o->op);
        if (shapes) lp_textbuf_printf(&r->text, " [%s]", shapes);
        fig = o->fig;
    } else {
        lp_textbuf_puts(&r->text, "(self)");
        fig = self_figures(r, it->idx);
        groups = LP_COLGRP_TIME;
    }
    end_cell(r, 0, start);
    add_cells(r, &fig, groups);
    return LP_OK;
}

/* Pre-order walk with an explicit stack: a 10,000-deep chain of modules must not overflow C's. */
static int walk(render *r) {
    if (r->t->n_nodes == 0) return LP_OK;
    item root = {ITEM_MODULE, 0, 0, 0.0};
    int rc = add_row(r, &root, 1);
    if (rc == LP_OK) rc = push(r, &root);
    while (rc == LP_OK && r->depth > 0) {
        frame *f = &r->stack[r->depth - 1];
        if (f->i == f->n) {
            free(f->kids);
            r->depth--;
            continue;
        }
        item it = f->kids[f->i++];
        rc = add_row(r, &it, f->i == f->n);
        if (rc == LP_OK) rc = push(r, &it);
    }
    return rc;
}

/* Total: the measured model as one unit, per column group.
 *  - Self times: the sum of every measured module's self (folded or not). Parent rows are real, so
 *    this equals the CPU total beside it; a gap means time was lost or counted twice.
 *  - Totals: the sum of the top-level measured modules' totals (the root's total when it ran;
 *    disjoint subtrees when paths were selected), since their children are inside them.
 *  - Memory: blank. Cells are means per call, and neither means nor peaks add across modules; the
 *    root row already shows the whole model's figures.
 *  - Calls: blank: calls of different modules are not one quantity. */
static int add_total(render *r) {
    if (new_row(r) != LP_OK) return LP_ERR_NOMEM;
    size_t start = r->text.len;
    lp_textbuf_puts(&r->text, "Total");
    end_cell(r, 0, start);
    lp_figures fig;
    memset(&fig, 0, sizeof fig);
    if (r->t->n_nodes > 0) {
        fig.self_ns = r->sub[0].self_ns;
        fig.total_ns = r->sub[0].total_ns;
    }
    add_cells(r, &fig, LP_COLGRP_TIME);
    return LP_OK;
}

/* Output --------------------------------------------------------------------------------------- */

/* Writes one line with trailing whitespace stripped, as torchprof does. */
static void put_line(lp_textbuf *line, FILE *out) {
    while (line->len > 0 && line->p[line->len - 1] == ' ')
        line->len--;
    lp_textbuf_put(line, "\n", 1);
    if (!line->oom) fputs(line->p, out);
    line->len = 0;
}

/* torchprof: cells joined with " | ", each left-aligned to its column's widest cell. */
static void put_cells(render *r, const char *const *cells, lp_textbuf *line, FILE *out) {
    for (size_t c = 0; c <= r->n_cols; c++) {
        if (c > 0) lp_textbuf_puts(line, " | ");
        lp_textbuf_puts(line, cells[c]);
        lp_textbuf_pad(line, ' ', r->width[c] - lp_text_width(cells[c]));
    }
    put_line(line, out);
}

/* torchprof: "-" * (w0 + 1), then "|" + "-" * (w + 2) per column, the last one w + 1. */
static void put_separator(render *r, lp_textbuf *line, FILE *out) {
    lp_textbuf_pad(line, '-', r->width[0] + 1);
    for (size_t c = 1; c <= r->n_cols; c++) {
        lp_textbuf_puts(line, "|");
        lp_textbuf_pad(line, '-', r->width[c] + (c == r->n_cols ? 1 : 2));
    }
    put_line(line, out);
}

static void put_table(render *r, lp_textbuf *line, FILE *out) {
    const char *cells[LP_MAX_COLUMNS + 1];
    cells[0] = "Module";
    for (size_t c = 0; c < r->n_cols; c++)
        cells[c + 1] = r->cols[c]->header;
    for (size_t c = 0; c <= r->n_cols; c++) {
        size_t w = lp_text_width(cells[c]);
        if (w > r->width[c]) r->width[c] = w;
    }
    put_cells(r, cells, line, out);
    put_separator(r, line, out);
    for (size_t i = 0; i < r->n_rows; i++) {
        if (i + 1 == r->n_rows) put_separator(r, line, out); /* the last row is Total */
        for (size_t c = 0; c <= r->n_cols; c++)
            cells[c] = r->text.p + r->cell[i * (r->n_cols + 1) + c];
        put_cells(r, cells, line, out);
    }
}

/* Hottest modules ------------------------------------------------------------------------------ */

typedef struct hot {
    uint64_t self_ns;
    int32_t idx;
    char time[32], pct[16];
} hot;

static int by_self_desc(const void *a, const void *b) {
    const hot *x = a, *y = b;
    if (x->self_ns != y->self_ns) return x->self_ns > y->self_ns ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The K measured modules with the most self time (raw, not folded: the list is where modules the
 * depth limit hides still show up), as a share of the measured total. */
static int put_top(render *r, lp_textbuf *line, FILE *out) {
    const lp_tree *t = r->raw;
    hot *h = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof *h);
    if (!h) return LP_ERR_NOMEM;
    size_t n = 0;
    for (size_t i = 0; i < t->n_nodes; i++)
        if (lp_node_measured(&t->nodes[i]))
            h[n++] = (hot){t->nodes[i].fig.self_ns, (int32_t)i, "", ""};
    qsort(h, n, sizeof *h, by_self_desc);
    if (n > (size_t)r->ro->top) n = (size_t)r->ro->top;

    /* Format first, then align: paths left, numbers right. */
    size_t wpath = 0, wtime = 0, wpct = 0, wrank = (size_t)snprintf(NULL, 0, "%zu", n);
    double iterations = t->iterations ? (double)t->iterations : 1.0;
    double whole = t->n_nodes ? (double)r->sub[0].total_ns : 0.0;
    for (size_t k = 0; k < n; k++) {
        const lp_tree_node *node = &t->nodes[h[k].idx];
        const char *path = node->parent < 0 ? node->name : node->path;
        hot *e = &h[k];
        lp_format_time((double)e->self_ns / iterations, r->ro->units, e->time, sizeof e->time);
        if (whole > 0)
            snprintf(e->pct, sizeof e->pct, "%.1f%%", 100.0 * (double)e->self_ns / whole);
        else
            snprintf(e->pct, sizeof e->pct, "-");
        size_t w = lp_text_width(path);
        wpath = w > wpath ? w : wpath;
        wtime = strlen(e->time) > wtime ? strlen(e->time) : wtime;
        wpct = strlen(e->pct) > wpct ? strlen(e->pct) : wpct;
    }
    lp_textbuf_puts(line, "");
    put_line(line, out);
    lp_textbuf_puts(line, "Hottest modules (self CPU)");
    put_line(line, out);
    for (size_t k = 0; k < n; k++) {
        const lp_tree_node *node = &t->nodes[h[k].idx];
        const char *path = node->parent < 0 ? node->name : node->path;
        lp_textbuf_printf(line, "%*zu. ", (int)wrank + 2, k + 1);
        lp_textbuf_puts(line, path);
        lp_textbuf_pad(line, ' ', wpath - lp_text_width(path) + 2);
        lp_textbuf_printf(line, "%*s  %*s", (int)wtime, h[k].time, (int)wpct, h[k].pct);
        put_line(line, out);
    }
    free(h);
    return LP_OK;
}

/* Entry point ---------------------------------------------------------------------------------- */

static void put_notes(render *r, lp_textbuf *line, FILE *out) {
    int any = r->ro->n_notes > 0 || r->folded;
    for (size_t c = 0; c < r->n_cols && !any; c++)
        any = !lp_column_available(r->cols[c], r->t);
    if (!any) return;
    put_line(line, out); /* a blank line between the table (or top list) and the notes */
    for (size_t i = 0; i < r->ro->n_notes; i++) {
        lp_textbuf_puts(line, r->ro->notes[i] ? r->ro->notes[i] : "");
        put_line(line, out);
    }
    if (r->folded) {
        lp_textbuf_printf(
            line,
            "note: modules deeper than depth %d are folded into their ancestor at that "
            "depth: its self columns (time, memory, FLOPs, parameters) and its op rows "
            "include theirs",
            r->ro->depth);
        put_line(line, out);
    }
    for (size_t c = 0; c < r->n_cols; c++) {
        if (lp_column_available(r->cols[c], r->t)) continue;
        lp_textbuf_printf(line, "note: column '%s' is empty: this profile did not record it",
                          r->cols[c]->id);
        put_line(line, out);
    }
}

int lp_render_tree(const lp_tree *tree, const lp_render_opts *ro, FILE *out) {
    lp_render_opts defaults;
    render r;
    memset(&r, 0, sizeof r);
    int rc = lp_render_begin(tree, out, &ro, &defaults, r.cols, &r.n_cols);
    if (rc != LP_OK) return rc;
    lp_tree folded;
    int fold = ro->depth >= 0 || ro->prune;
    if (fold && (rc = lp_tree_fold(tree, ro->depth, ro->prune, &folded)) != LP_OK) return rc;
    r.t = fold ? &folded : tree;
    r.raw = tree;
    r.ro = ro;
    r.g = ro->ascii ? &ascii_glyphs : &box_glyphs;
    if (ro->sort) rc = lp_column_lookup(ro->sort, "sort key", &r.sort);
    if (rc == LP_OK) rc = sum_subtrees(&r);
    if (rc == LP_OK) rc = walk(&r);
    if (rc == LP_OK) rc = add_total(&r);

    lp_textbuf line = {0};
    if (rc == LP_OK && !r.text.oom) {
        put_table(&r, &line, out);
        if (ro->top > 0) rc = put_top(&r, &line, out);
        put_notes(&r, &line, out);
    }
    if (rc == LP_OK && (r.text.oom || line.oom)) rc = LP_ERR_NOMEM;

    while (r.depth > 0)
        free(r.stack[--r.depth].kids);
    free(r.stack);
    free(r.cell);
    lp_textbuf_free(&r.text);
    lp_textbuf_free(&line);
    free(r.sub);
    if (fold) lp_tree_free(&folded);
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "render: out of memory");
    if (rc != LP_OK) return rc;
    if (ferror(out)) return lp_error_set(LP_ERR_IO, "render: writing the table failed");
    return LP_OK;
}
