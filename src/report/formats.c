/* formats.c: format names and file extensions, the one dispatch from a format to its renderer, and
 * the op-row label the table renderers share. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/error.h"
#include "report/render.h"

static const struct {
    const char *name;
    lp_format format;
} names[] = {
    {"tree", LP_FORMAT_TREE},
    {"json", LP_FORMAT_JSON},
    {"csv", LP_FORMAT_CSV},
    {"markdown", LP_FORMAT_MARKDOWN},
    {"trace", LP_FORMAT_TRACE},
    {"html", LP_FORMAT_HTML},
    /* Name only: no file extension implies it, since a summary is markdown and ".md" already
     * means the markdown tree. */
    {"summary", LP_FORMAT_SUMMARY},
    /* aliases after the canonical names: lp_format_name returns the first match */
    {"md", LP_FORMAT_MARKDOWN},
    {"chrome", LP_FORMAT_TRACE},
};
#define N_NAMES (sizeof names / sizeof names[0])

const char *lp_format_name(lp_format format) {
    for (size_t i = 0; i < N_NAMES; i++)
        if (names[i].format == format) return names[i].name;
    return NULL;
}

int lp_format_parse(const char *name, lp_format *out) {
    if (!name || !out) return lp_error_set(LP_ERR_INVALID, "lp_format_parse: NULL argument");
    for (size_t i = 0; i < N_NAMES; i++)
        if (strcmp(names[i].name, name) == 0) {
            *out = names[i].format;
            return LP_OK;
        }
    return lp_error_set(LP_ERR_INVALID,
                        "unknown format '%s' (tree, json, csv, markdown, trace, html or summary)",
                        name);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcasecmp(s + n - m, suffix) == 0;
}

int lp_format_from_path(const char *path, lp_format *out) {
    static const struct {
        const char *suffix;
        lp_format format;
    } ext[] = {
        /* longest first: "r.trace.json" is a trace, not a report */
        {".trace.json", LP_FORMAT_TRACE}, {".trace", LP_FORMAT_TRACE},
        {".json", LP_FORMAT_JSON},        {".csv", LP_FORMAT_CSV},
        {".md", LP_FORMAT_MARKDOWN},      {".markdown", LP_FORMAT_MARKDOWN},
        {".html", LP_FORMAT_HTML},        {".htm", LP_FORMAT_HTML},
        {".txt", LP_FORMAT_TREE},
    };
    if (!path || !out) return lp_error_set(LP_ERR_INVALID, "lp_format_from_path: NULL argument");
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++)
        if (ends_with(path, ext[i].suffix)) {
            *out = ext[i].format;
            return LP_OK;
        }
    return lp_error_set(LP_ERR_NOT_FOUND, "'%s': no format known for this file name", path);
}

char *lp_render_op_label(const lp_tree *t, int32_t row) {
    const lp_op_node *o = &t->ops[row];
    const char *name = lp_tree_op_name(t, o->op), *shapes = lp_tree_shapes(t, o->shapes);
    char idbuf[32];
    if (!name) {
        snprintf(idbuf, sizeof idbuf, "op#%d", (int)o->op);
        name = idbuf;
    }
    size_t n = strlen(name) + (shapes ? strlen(shapes) + 3 : 0) + 1;
    char *s = malloc(n);
    if (!s) return NULL;
    if (shapes)
        snprintf(s, n, "%s [%s]", name, shapes);
    else
        snprintf(s, n, "%s", name);
    return s;
}

int lp_render_format(lp_format format, const lp_tree *tree, const lp_timeline *tl,
                     const json_t *run, const lp_render_opts *ro, FILE *out) {
    switch (format) {
    case LP_FORMAT_TREE:
        return lp_render_tree(tree, ro, out);
    case LP_FORMAT_JSON:
        return lp_render_json(tree, run, out);
    case LP_FORMAT_CSV:
        return lp_render_csv(tree, ro, out);
    case LP_FORMAT_MARKDOWN:
        return lp_render_markdown(tree, ro, run, out);
    case LP_FORMAT_TRACE:
        if (!tl)
            return lp_error_set(LP_ERR_UNSUPPORTED, "a JSON report holds no timeline: write the "
                                                    "trace from the run itself");
        return lp_render_trace(tree, tl, run, out);
    case LP_FORMAT_HTML:
        return lp_render_html(tree, tl, run, out);
    case LP_FORMAT_SUMMARY:
        return lp_render_summary(tree, ro, out);
    }
    return lp_error_set(LP_ERR_INVALID, "unknown output format %d", (int)format);
}
