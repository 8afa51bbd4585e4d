/* formats.c: the table of output formats, a row per format: the file extensions that imply it
 * and its renderer; their names are format_names.h's list, which the option table reads too.
 * lp_format_name, lp_format_parse, lp_format_from_path and lp_render_format read them, so a new
 * format is a row here, its names there, and its render_<format>.c. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "report/format_names.h"
#include "report/render.h"

/* A renderer as the table calls it: every one gets the tree, the timeline (NULL: none), the run
 * and the display options, and uses what its format needs. */
typedef int (*render_fn)(const lp_tree *tree, const lp_timeline *tl, const json_t *run,
                         const lp_render_opts *ro, FILE *out);

static int tree(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                const lp_render_opts *ro, FILE *out) {
    (void)tl, (void)run;
    return lp_render_tree(t, ro, out);
}

static int json(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                const lp_render_opts *ro, FILE *out) {
    (void)tl, (void)ro;
    return lp_render_json(t, run, out);
}

static int csv(const lp_tree *t, const lp_timeline *tl, const json_t *run, const lp_render_opts *ro,
               FILE *out) {
    (void)tl, (void)run;
    return lp_render_csv(t, ro, out);
}

static int markdown(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                    const lp_render_opts *ro, FILE *out) {
    (void)tl;
    return lp_render_markdown(t, ro, run, out);
}

static int trace(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                 const lp_render_opts *ro, FILE *out) {
    (void)ro;
    if (!tl)
        return lp_error_set(LP_ERR_UNSUPPORTED, "a JSON report holds no timeline: write the "
                                                "trace from the run itself");
    return lp_render_trace(t, tl, run, out);
}

static int html(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                const lp_render_opts *ro, FILE *out) {
    (void)ro;
    return lp_render_html(t, tl, run, out);
}

static int summary(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                   const lp_render_opts *ro, FILE *out) {
    (void)tl, (void)run;
    return lp_render_summary(t, ro, out);
}

static int openmetrics(const lp_tree *t, const lp_timeline *tl, const json_t *run,
                       const lp_render_opts *ro, FILE *out) {
    (void)tl;
    return lp_render_openmetrics(t, run, ro, out);
}

static const struct format_row {
    lp_format format;
    const char *extensions[3]; /* file name endings that imply the format; NULL-ended */
    render_fn render;
} formats[] = {
    {LP_FORMAT_TREE, {".txt"}, tree},
    {LP_FORMAT_JSON, {".json"}, json},
    {LP_FORMAT_CSV, {".csv"}, csv},
    {LP_FORMAT_MARKDOWN, {".md", ".markdown"}, markdown},
    {LP_FORMAT_TRACE, {".trace.json", ".trace"}, trace},
    {LP_FORMAT_HTML, {".html", ".htm"}, html},
    /* No file extension implies it, since a summary is markdown and ".md" already means the
     * markdown tree. */
    {LP_FORMAT_SUMMARY, {NULL}, summary},
    {LP_FORMAT_OPENMETRICS, {".prom"}, openmetrics},
};
#define N_FORMATS (sizeof formats / sizeof formats[0])

#define AS_NAME(value, name) {value, name},
static const struct format_name {
    lp_format format;
    const char *name;
} names[] = {LP_FORMAT_NAMES(AS_NAME)};
#define N_NAMES (sizeof names / sizeof names[0])

static const struct format_row *row_of(lp_format format) {
    for (size_t i = 0; i < N_FORMATS; i++)
        if (formats[i].format == format) return &formats[i];
    return NULL;
}

const char *lp_format_name(lp_format format) {
    if (!row_of(format)) return NULL;
    for (size_t i = 0; i < N_NAMES; i++) /* the canonical name is the first */
        if (names[i].format == format) return names[i].name;
    return NULL;
}

const char *lp_format_extension(lp_format format, size_t i) {
    const struct format_row *r = row_of(format);
    if (!r) return NULL;
    for (size_t k = 0; k < i; k++)
        if (!r->extensions[k]) return NULL;
    return r->extensions[i];
}

int lp_format_parse(const char *name, lp_format *out) {
    if (!name || !out) return lp_error_set(LP_ERR_INVALID, "lp_format_parse: NULL argument");
    for (size_t i = 0; i < N_NAMES; i++)
        if (strcmp(names[i].name, name) == 0 && row_of(names[i].format)) {
            *out = names[i].format;
            return LP_OK;
        }
    /* "tree, json, ..., html or summary": the canonical names, for the message */
    char list[128];
    size_t off = 0;
    for (size_t i = 0; i < N_FORMATS; i++) {
        const char *sep = i == 0 ? "" : i + 1 < N_FORMATS ? ", " : " or ";
        if (off < sizeof list)
            off += (size_t)snprintf(list + off, sizeof list - off, "%s%s", sep,
                                    lp_format_name(formats[i].format));
    }
    return lp_error_set(LP_ERR_INVALID, "unknown format '%s' (%s)", name, list);
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n > m && strcasecmp(s + n - m, suffix) == 0;
}

int lp_format_from_path(const char *path, lp_format *out) {
    if (!path || !out) return lp_error_set(LP_ERR_INVALID, "lp_format_from_path: NULL argument");
    /* The longest ending wins: "r.trace.json" is a trace, not a report. */
    size_t best = 0;
    for (size_t i = 0; i < N_FORMATS; i++)
        for (const char *const *e = formats[i].extensions; *e; e++)
            if (strlen(*e) > best && ends_with(path, *e)) {
                best = strlen(*e);
                *out = formats[i].format;
            }
    if (best) return LP_OK;
    return lp_error_set(LP_ERR_NOT_FOUND, "'%s': no format known for this file name", path);
}

int lp_render_format(lp_format format, const lp_tree *tree, const lp_timeline *tl,
                     const json_t *run, const lp_render_opts *ro, FILE *out) {
    const struct format_row *r = row_of(format);
    if (!r) return lp_error_set(LP_ERR_INVALID, "unknown output format %d", (int)format);
    return r->render(tree, tl, run, ro, out);
}
