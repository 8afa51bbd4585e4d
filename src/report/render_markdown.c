/* render_markdown.c: the report as a GitHub-flavoured markdown pipe table, ready to paste into an
 * issue or a pull request (torchtimer's habit).
 *
 * GitHub strips leading spaces in table cells, so the tree is drawn with non-breaking spaces: four
 * `&nbsp;` per level. Op rows are code spans. Cells are the tree view's (same columns, units and
 * depth folding); rows stay in model order. A Total row and the notes follow the table. */
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/columns.h"
#include "report/json_report.h"
#include "report/render.h"

/* Markdown inline text: backslash-escape what GitHub would read as formatting, and the pipe. */
static void put_text(FILE *out, const char *s) {
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else {
            if (strchr("\\`*_[]|#", *s)) fputc('\\', out);
            fputc(*s, out);
        }
    }
}

/* A code span: only the pipe needs escaping (GitHub's table parser reads `\|` before the span). */
static void put_code(FILE *out, const char *s) {
    fputc('`', out);
    for (; *s; s++) {
        if (*s == '|') fputc('\\', out);
        fputc(*s == '`' ? '\'' : *s, out);
    }
    fputc('`', out);
}

static void indent(FILE *out, int depth) {
    for (int i = 0; i < depth * 4; i++)
        fputs("&nbsp;", out);
}

typedef struct md {
    const lp_tree *t;
    const lp_render_opts *ro;
    const lp_column *cols[LP_MAX_COLUMNS];
    size_t n_cols;
    uint64_t *sub_self;  /* per module: self of every measured module in its subtree */
    uint64_t *sub_total; /* per module: totals of its top-level measured modules */
    uint8_t *sub_measured;
    FILE *out;
    int folded;
} md;

static void put_cells(md *m, const lp_figures *fig, unsigned groups) {
    for (size_t c = 0; c < m->n_cols; c++) {
        double v;
        char buf[64];
        fputs(" | ", m->out);
        if (lp_column_value(m->cols[c], m->t, fig, groups, &v)) {
            lp_column_format(m->cols[c], fig, v, m->ro->units, buf, sizeof buf);
            fputs(buf, m->out);
        }
    }
    fputs(" |\n", m->out);
}

static int put_ops(md *m, int32_t first, int depth) {
    for (int32_t r = first; r >= 0; r = m->t->ops[r].next_sibling) {
        char *label = lp_render_op_label(m->t, r, m->ro->name_width, 0) /* markdown is UTF-8 */;
        if (!label) return LP_ERR_NOMEM;
        fputs("| ", m->out);
        indent(m->out, depth);
        put_code(m->out, label);
        free(label);
        put_cells(m, &m->t->ops[r].fig, LP_COLGRP_ALL);
        int rc = put_ops(m, m->t->ops[r].first_child, depth + 1);
        if (rc) return rc;
    }
    return LP_OK;
}

static void put_title(FILE *out, const json_t *run, uint64_t iterations) {
    const char *model = json_string_value(json_object_get(run, "model"));
    if (!model) return;
    const char *slash = strrchr(model, '/');
    const char *dev = json_string_value(json_object_get(run, "device"));
    const char *mode = json_string_value(json_object_get(run, "mode"));
    const char *torch = json_string_value(json_object_get(run, "libtorch_version"));
    fputs("###### layerprof: ", out);
    put_text(out, slash ? slash + 1 : model);
    fprintf(out, " (%s, %s mode, %llu iteration%s", dev ? dev : "cpu", mode ? mode : "hooks",
            (unsigned long long)iterations, iterations == 1 ? "" : "s");
    if (torch && *torch) fprintf(out, ", libtorch %s", torch);
    fputs(")\n\n", out);
}

int lp_render_markdown(const lp_tree *tree, const lp_render_opts *ro, const json_t *run,
                       FILE *out) {
    lp_render_opts defaults;
    md m = {.t = tree, .out = out};
    int rc = lp_render_begin(tree, out, &ro, &defaults, m.cols, &m.n_cols);
    if (rc) return rc;
    lp_tree folded;
    int fold = ro->depth >= 0 || ro->prune;
    if (fold && (rc = lp_tree_fold(tree, ro->depth, ro->prune, &folded)) != LP_OK) return rc;
    const lp_tree *t = fold ? &folded : tree;
    m.t = t;
    m.ro = ro;
    size_t n = t->n_nodes ? t->n_nodes : 1;
    m.sub_self = calloc(n, sizeof *m.sub_self);
    m.sub_total = calloc(n, sizeof *m.sub_total);
    m.sub_measured = calloc(n, 1);
    if (!m.sub_self || !m.sub_total || !m.sub_measured) {
        rc = lp_error_set(LP_ERR_NOMEM, "render: out of memory");
        goto done;
    }
    /* Children come after their parent: one reverse pass sums subtrees (as render_tree.c). */
    for (size_t i = t->n_nodes; i-- > 0;) {
        const lp_tree_node *nd = &t->nodes[i];
        if (lp_node_measured(nd) || lp_node_stands_in(nd)) {
            m.sub_self[i] += nd->fig.self_ns;
            m.sub_total[i] = nd->fig.total_ns;
            m.sub_measured[i] = 1;
        }
        if (nd->parent >= 0) {
            m.sub_self[nd->parent] += m.sub_self[i];
            m.sub_total[nd->parent] += m.sub_total[i];
            m.sub_measured[nd->parent] |= m.sub_measured[i];
        }
    }

    if (run) put_title(out, run, t->iterations);
    fputs("| Module", out);
    for (size_t c = 0; c < m.n_cols; c++)
        fprintf(out, " | %s", m.cols[c]->header);
    fputs(" |\n|:--", out);
    for (size_t c = 0; c < m.n_cols; c++)
        fputs("|--:", out);
    fputs("|\n", out);

    int show_ops = ro->show_ops && t->has_ops;
    for (size_t i = 0; i < t->n_nodes && rc == LP_OK; i++) {
        const lp_tree_node *nd = &t->nodes[i];
        lp_figures fig = nd->fig;
        unsigned groups = lp_node_measured(nd) ? LP_COLGRP_ALL : 0;
        if (nd->folded) m.folded = 1;
        if (lp_node_stands_in(nd)) groups = LP_COLGRP_TIME;
        fputs("| ", out);
        indent(out, nd->depth);
        if (nd->fused_module) { /* where a fused module's time went */
            char *label = lp_render_module_label(t, (int32_t)i, ro->name_width, 0);
            if (!label) {
                rc = LP_ERR_NOMEM;
                break;
            }
            put_text(out, label);
            free(label);
        } else {
            put_text(out, nd->name);
        }
        put_cells(&m, &fig, groups);
        if (show_ops && nd->first_op >= 0) rc = put_ops(&m, nd->first_op, nd->depth + 1);
    }
    if (rc == LP_OK) {
        lp_figures total;
        memset(&total, 0, sizeof total);
        if (t->n_nodes) {
            total.self_ns = m.sub_self[0];
            total.total_ns = m.sub_total[0];
        }
        fputs("| **Total**", out);
        put_cells(&m, &total, LP_COLGRP_TIME);
        if (ro->n_notes || m.folded) fputc('\n', out);
        for (size_t i = 0; i < ro->n_notes; i++) {
            fputs("- ", out);
            put_text(out, ro->notes[i] ? ro->notes[i] : "");
            fputc('\n', out);
        }
        if (m.folded)
            fprintf(out,
                    "- modules deeper than depth %d are folded into their ancestor at that depth: "
                    "its self columns (time, memory, FLOPs, parameters) and its op rows include "
                    "theirs\n",
                    ro->depth);
    }
done:
    if (fold) lp_tree_free(&folded);
    free(m.sub_self);
    free(m.sub_total);
    free(m.sub_measured);
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "render: out of memory");
    if (rc == LP_OK && ferror(out))
        return lp_error_set(LP_ERR_IO, "render: writing the markdown failed");
    return rc;
}
