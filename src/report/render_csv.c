/* render_csv.c: one row per module, and per op row when events were recorded, for spreadsheets
 * and pandas. RFC 4180: CRLF line ends, fields quoted when they hold a comma, quote or line end.
 *
 * Rows follow the tree's order (a module, its op rows, then its child modules). Paths are full:
 * the dotted module path ("" for the root), and for op rows the module path, "/", and the chain of
 * op labels down to the row ("layer1.0.conv1/aten::conv2d/aten::convolution"). Values are the
 * columns' numbers unformatted, the unit in the header ("cpu_total_ns"): times in ns and calls per
 * iteration, memory in bytes per call, Mean/Min/Max/Std in ns per call, % Total in percent; whole
 * numbers print without decimals, others with three. Depth folding and sorting are display
 * choices of the tree view and do not apply: a CSV holds every row. A package's tree with modules
 * whose work Inductor fused into another module's kernel ends each row with two more fields,
 * fused_into_module and fused_into_kernel (the kernel the row names, whole), empty on other rows;
 * other trees keep their columns. A fused row always names its kernel: an empty
 * fused_into_module beside it is the root, whose path is "" in the first field too. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/columns.h"
#include "model/node_info.h"
#include "report/render.h"

void lp_csv_field(FILE *out, const char *s) {
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void put_number(FILE *out, double v) {
    if (v == nearbyint(v) && fabs(v) < 9e15)
        fprintf(out, "%.0f", v);
    else
        fprintf(out, "%.3f", v);
}

typedef struct csv {
    const lp_tree *t;
    const lp_column *cols[LP_MAX_COLUMNS];
    size_t n_cols;
    FILE *out;
    char *path; /* the current row's path, grown as op chains deepen */
    size_t cap;
    int fused; /* some module was fused into another's kernel: the two fused_into fields */
} csv;

static int set_path(csv *c, size_t at, const char *add, const char *sep) {
    size_t need = at + strlen(sep) + strlen(add) + 1;
    if (need > c->cap) {
        size_t cap = c->cap ? c->cap : 256;
        while (cap < need)
            cap *= 2;
        char *p = realloc(c->path, cap);
        if (!p) return LP_ERR_NOMEM;
        c->path = p;
        c->cap = cap;
    }
    snprintf(c->path + at, c->cap - at, "%s%s", sep, add);
    return LP_OK;
}

static void put_row(csv *c, const char *kind, const char *name, const char *cls, int depth,
                    const lp_figures *fig, unsigned groups, const lp_tree_node *node) {
    lp_csv_field(c->out, c->path);
    fprintf(c->out, ",%s,", kind);
    lp_csv_field(c->out, name);
    fputc(',', c->out);
    lp_csv_field(c->out, cls);
    fprintf(c->out, ",%d", depth);
    for (size_t i = 0; i < c->n_cols; i++) {
        double v;
        fputc(',', c->out);
        if (!lp_column_value(c->cols[i], c->t, fig, groups, &v) || isnan(v)) continue;
        if (c->cols[i]->text) {
            char text[160];
            c->cols[i]->text(fig, text, sizeof text);
            lp_csv_field(c->out, text);
        } else {
            put_number(c->out, v);
        }
    }
    if (c->fused) { /* where a fused module's time went: the module's path, the kernel */
        fputc(',', c->out);
        if (node && node->fused_module) lp_csv_field(c->out, node->fused_module);
        fputc(',', c->out);
        if (node && node->fused_module) lp_csv_field(c->out, node->fused_kernel);
    }
    fputs("\r\n", c->out);
}

static int put_ops(csv *c, int32_t first, size_t at, int depth) {
    for (int32_t r = first; r >= 0; r = c->t->ops[r].next_sibling) {
        char *label = lp_render_op_label(c->t, r, 0, 0); /* in full: CSV is read by programs */
        if (!label) return LP_ERR_NOMEM;
        int rc = set_path(c, at, label, "/");
        if (rc == LP_OK) {
            const lp_op_node *o = &c->t->ops[r];
            put_row(c, "op", label, "", depth, &o->fig, LP_COLGRP_ALL, NULL);
            if (o->first_child >= 0) rc = put_ops(c, o->first_child, strlen(c->path), depth + 1);
        }
        free(label);
        if (rc) return rc;
    }
    return LP_OK;
}

int lp_render_csv(const lp_tree *t, const lp_render_opts *ro, FILE *out) {
    lp_render_opts defaults;
    csv c = {.t = t, .out = out};
    int rc = lp_render_begin(t, out, &ro, &defaults, c.cols, &c.n_cols);
    if (rc) return rc;

    fputs("path,kind,name,class,depth", out);
    for (size_t i = 0; i < c.n_cols; i++)
        fprintf(out, ",%s%s", c.cols[i]->id, c.cols[i]->unit);
    for (size_t i = 0; i < t->n_nodes && !c.fused; i++)
        c.fused = t->nodes[i].fused_module != NULL;
    if (c.fused) fputs(",fused_into_module,fused_into_kernel", out);
    fputs("\r\n", out);
    int show_ops = ro->show_ops && t->has_ops;
    for (size_t i = 0; i < t->n_nodes && rc == LP_OK; i++) {
        const lp_tree_node *n = &t->nodes[i];
        if ((rc = set_path(&c, 0, n->path, ""))) break;
        unsigned groups = n->selected && n->fig.calls ? LP_COLGRP_ALL : 0;
        /* A context or the session is a group, never a call: only its times hold. */
        if ((n->kind == LP_NODE_CONTEXT || n->kind == LP_NODE_SESSION) && n->fig.total_ns)
            groups = LP_COLGRP_TIME;
        put_row(&c, lp_node_kind_name(n->kind), n->name, n->class_name, n->depth, &n->fig, groups,
                n);
        if (show_ops && n->first_op >= 0)
            rc = put_ops(&c, n->first_op, strlen(c.path), n->depth + 1);
    }
    free(c.path);
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "render: out of memory");
    if (ferror(out)) return lp_error_set(LP_ERR_IO, "render: writing the CSV failed");
    return rc;
}
