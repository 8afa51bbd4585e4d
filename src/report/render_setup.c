/* render_setup.c: what every renderer shares before it draws a row: the display options'
 * defaults and their check, the opening each renderer starts with (lp_render_require,
 * lp_render_begin), and the op-row label of the table renderers. Renderers call this file; it
 * calls none of them, so the format table (formats.c) can call every renderer without a ring. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/columns.h"
#include "report/render.h"

void lp_render_opts_init(lp_render_opts *ro) {
    memset(ro, 0, sizeof *ro);
    ro->depth = -1;
    ro->units = LP_UNITS_AUTO;
    ro->show_ops = 1; /* shown only when the tree recorded op rows */
    ro->metrics_depth = 1;
    ro->name_width = 64; /* lp_options' default */
}

int lp_render_check_opts(const lp_render_opts *ro) {
    if (!ro) return LP_OK;
    if (ro->depth < -1) return lp_error_set(LP_ERR_INVALID, "depth must be >= 0 (or -1: no limit)");
    if (ro->top < 0) return lp_error_set(LP_ERR_INVALID, "top must be >= 0");
    if (ro->units < LP_UNITS_AUTO || ro->units > LP_UNITS_S)
        return lp_error_set(LP_ERR_INVALID, "unknown units %d", (int)ro->units);
    if (ro->n_columns > 0 && !ro->columns)
        return lp_error_set(LP_ERR_INVALID, "%zu columns given but no column list", ro->n_columns);
    if (ro->n_columns > LP_MAX_COLUMNS)
        return lp_error_set(LP_ERR_INVALID, "too many columns (%zu, at most %d)", ro->n_columns,
                            LP_MAX_COLUMNS);
    const lp_column *col;
    for (size_t i = 0; i < ro->n_columns; i++) {
        int rc = lp_column_lookup(ro->columns[i], "column", &col);
        if (rc != LP_OK) return rc;
    }
    if (ro->sort) return lp_column_lookup(ro->sort, "sort key", &col);
    return LP_OK;
}

int lp_render_require(const lp_tree *tree, FILE *out) {
    if (!tree || !out) return lp_error_set(LP_ERR_INVALID, "render: tree and output are required");
    return LP_OK;
}

int lp_render_begin(const lp_tree *tree, FILE *out, const lp_render_opts **ro,
                    lp_render_opts *defaults, const lp_column **cols, size_t *n_cols) {
    if (!*ro) {
        lp_render_opts_init(defaults);
        *ro = defaults;
    }
    int rc = lp_render_require(tree, out);
    if (!rc) rc = lp_render_check_opts(*ro);
    if (!rc) rc = lp_columns_select(tree, (*ro)->columns, (*ro)->n_columns, cols, n_cols);
    return rc;
}

int lp_render_name_cut(const char *name, int width, int ascii, size_t *head, size_t *tail) {
    if (width <= 0) return 0;
    size_t w = width < 16 ? 16 : (size_t)width, n = strlen(name);
    if (n <= w) return 0;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p >= 0x80) return 0;
    size_t dots = ascii ? 3 : 1; /* the ellipsis' width */
    *tail = (w - dots) / 2;
    *head = w - dots - *tail;
    return 1;
}

const char *lp_render_ellipsis(int ascii) {
    return ascii ? "..." : "…";
}

char *lp_render_op_label(const lp_tree *t, int32_t row, int name_width, int ascii) {
    const lp_op_node *o = &t->ops[row];
    const char *name = lp_tree_op_name(t, o->op), *shapes = lp_tree_shapes(t, o->shapes);
    char idbuf[32];
    if (!name) {
        snprintf(idbuf, sizeof idbuf, "op#%d", (int)o->op);
        name = idbuf;
    }
    size_t head = strlen(name), tail = 0;
    const char *dots = "";
    if (lp_render_name_cut(name, name_width, ascii, &head, &tail)) dots = lp_render_ellipsis(ascii);
    size_t n = head + strlen(dots) + tail + (shapes ? strlen(shapes) + 3 : 0) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    snprintf(s, n, "%.*s%s%s%s%s%s", (int)head, name, dots, name + strlen(name) - tail,
             shapes ? " [" : "", shapes ? shapes : "", shapes ? "]" : "");
    return s;
}

char *lp_render_module_label(const lp_tree *t, int32_t node, int name_width, int ascii) {
    const lp_tree_node *n = &t->nodes[node];
    if (!n->fused_module) return strdup(n->name);
    /* The receiving module by its path: a row's own name alone ("0") would not find it. */
    const char *into = *n->fused_module || !t->n_nodes ? n->fused_module : t->nodes[0].name;
    const char *kernel = n->fused_kernel ? n->fused_kernel : "";
    size_t head = strlen(kernel), tail = 0;
    const char *dots = "";
    if (lp_render_name_cut(kernel, name_width, ascii, &head, &tail))
        dots = lp_render_ellipsis(ascii);
    char more[40] = "";
    if (n->fused_more) snprintf(more, sizeof more, " + %u more", (unsigned)n->fused_more);
    size_t len = strlen(n->name) + strlen(into) + head + strlen(dots) + tail + strlen(more) + 20;
    char *s = malloc(len);
    if (!s) return NULL;
    snprintf(s, len, "%s [fused into %s: %.*s%s%s%s]", n->name, into, (int)head, kernel, dots,
             kernel + strlen(kernel) - tail, more);
    return s;
}
