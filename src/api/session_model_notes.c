/* session_model_notes.c: the lines under the report that say what the model is, when a params or
 * FLOPs column was asked for: its parameters and their bytes, its FLOPs per forward, and the ops
 * that had no FLOPs formula (counted as 0, named so that a low figure is never a silent one). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>

#include "api/session_internal.h"
#include "report/columns.h"

/* A size, FLOPs or output-shape column among those asked for. */
static int asks_for_model_figures(const lp_session *s) {
    return lp_columns_any(s->opts.columns, s->opts.n_columns, LP_NEED_FLOPS | LP_NEED_OUT_SHAPE,
                          LP_COLGRP_SIZE);
}

/* `value` as column `id` formats it ("11,689,512", "3.64 G", "44.63 Mb"). */
static void format_as(const char *id, double value, char *buf, size_t size) {
    const lp_column *col = lp_column_find(id);
    if (!col || col->fmt(value, LP_UNITS_AUTO, buf, size) < 0) snprintf(buf, size, "%.0f", value);
}

/* FLOPs of the measured subtrees' tops, over all iterations: the root's when it was profiled. */
static uint64_t selected_flops(const lp_tree *t) {
    uint64_t sum = 0;
    for (size_t i = 0; i < t->n_nodes; i++) {
        const lp_tree_node *n = &t->nodes[i];
        if (n->selected && (n->parent < 0 || !t->nodes[n->parent].selected))
            sum += n->fig.flops_total;
    }
    return sum;
}

size_t session_model_notes(const lp_session *s, char (*lines)[256], size_t max) {
    if (max < 2 || !asks_for_model_figures(s) || !s->tree.n_nodes) return 0;
    const lp_figures *root = &s->tree.nodes[0].fig;
    size_t n = 0;
    char params[48], bytes[48], flops[48];
    format_as("params", (double)root->size.params, params, sizeof params);
    format_as("param_bytes", (double)root->size.bytes, bytes, sizeof bytes);
    int len =
        snprintf(lines[n], sizeof lines[n], "model: %s parameters, %s with buffers", params, bytes);
    if (s->flops && s->tree.iterations && len > 0 && (size_t)len < sizeof lines[n]) {
        /* The whole model's FLOPs when the root was profiled; with paths selected only the
         * selected subtrees' ops were counted, and the line says so rather than call their sum
         * the model's (issue: "0FLOPs per forward" with --path). */
        int whole = s->tree.nodes[0].selected;
        format_as("flops", (double)selected_flops(&s->tree) / (double)s->tree.iterations, flops,
                  sizeof flops);
        size_t fl = strlen(flops);
        const char *gap = fl && flops[fl - 1] >= '0' && flops[fl - 1] <= '9' ? " " : "";
        snprintf(lines[n] + len, sizeof lines[n] - (size_t)len,
                 "; %s%sFLOPs per forward%s (2 per multiply-add%s)", flops, gap,
                 whole ? "" : " in the selected modules",
                 whole ? "" : "; the rest was not profiled");
    }
    n++;
    for (size_t i = 0; i < s->tree.n_nodes && n < max; i++)
        if (s->tree.nodes[i].fig.out.varies) {
            snprintf(lines[n++], sizeof lines[0],
                     "out_shape: * the calls returned different shapes: the first call's is shown");
            break;
        }
    const char *names[8];
    size_t all = s->flops ? lp_collector_no_formula(s->collector, names, 8) : 0;
    if (all && n < max) {
        size_t shown = all < 8 ? all : 8, used = 0;
        used += (size_t)snprintf(lines[n], sizeof lines[n], "flops: no formula for");
        for (size_t i = 0; i < shown && used < sizeof lines[n]; i++)
            used += (size_t)snprintf(lines[n] + used, sizeof lines[n] - used, "%s %s", i ? "," : "",
                                     names[i]);
        if (used < sizeof lines[n])
            snprintf(lines[n] + used, sizeof lines[n] - used, "%s (counted as 0)",
                     all > shown ? " and others" : "");
        n++;
    }
    return n;
}
