/* render_summary.c: torchtimer's summary, a markdown table per context that pastes straight into a
 * README or an issue:
 *
 *   ###### timer::main: (total runtime 3.3098865s)
 *   | name     | repeats    | average time | total time   | % total time    | net mem alloc  ...
 *   | -------- | ---------- | ------------ | ------------ | --------------- | -------------- ...
 *   | 'randn'  | 1000       | 0.00163867   | 1.6386684    | 49.51           | 0B - 7.6MB     ...
 *
 * The numbers are spelled the way torchtimer (Python) prints them, so tables from both tools can
 * sit side by side: seconds rounded to 8 decimals, percentages to 2, trailing zeros dropped but
 * one decimal kept ("100.0"), memory in 1024-based units with one decimal ("3.8MB", "0B").
 * Unlike Python's str(), tiny times stay in fixed notation (0.00000512, not 5.12e-06): a column
 * of numbers is easier to scan that way. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "report/render.h"
#include "report/textbuf.h"

enum { N_COLS = 7 };

static const char *const headers[N_COLS] = {"name",          "repeats",      "average time",
                                            "total time",    "% total time", "net mem alloc",
                                            "peak mem alloc"};

/* torchtimer pads every column but the name to a fixed width, wider than its header. */
static const size_t min_width[N_COLS] = {4, 10, 12, 12, 15, 20, 20};

typedef struct row {
    int32_t node;
    uint64_t total_ns;
    char *name; /* quoted and escaped; owned */
    char cell[N_COLS - 1][48];
} row;

/* ------------------------------------------------------------------------------------------ */
/* Numbers as torchtimer prints them                                                          */

/* Drops trailing zeros of a decimal fraction, keeping one digit after the point ("100.0"), as
 * Python's str() of a rounded float does. */
static void trim_zeros(char *s) {
    char *dot = strchr(s, '.');
    if (!dot) return;
    char *end = s + strlen(s);
    while (end > dot + 2 && end[-1] == '0')
        end--;
    *end = '\0';
}

/* Nanoseconds as seconds rounded to 8 decimals (10 ns), from integers so the digits are exact. */
static void format_seconds(double ns, char *buf, size_t size) {
    if (!(ns > 0)) ns = 0;
    double tens = floor(ns / 10.0 + 0.5);
    if (tens >= 1.8e19) { /* past uint64_t: years of run time, print it roughly */
        snprintf(buf, size, "%.0f.0", tens / 1e8);
        return;
    }
    uint64_t t = (uint64_t)tens;
    snprintf(buf, size, "%" PRIu64 ".%08" PRIu64, t / 100000000u, t % 100000000u);
    trim_zeros(buf);
}

/* 100 * part / whole rounded to 2 decimals: "49.51", "6.01", "39.5", "100.0". */
static void format_percent(uint64_t part, uint64_t whole, char *buf, size_t size) {
    double hundredths = whole ? floor((double)part * 10000.0 / (double)whole + 0.5) : 0.0;
    snprintf(buf, size, "%.2f", hundredths / 100.0);
    trim_zeros(buf);
}

/* torchtimer's sizes: "0B", "512B", "4.0KB", "3.8MB", "-1.5GB". */
static void format_size(int64_t bytes, char *buf, size_t size) {
    static const char *const units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
    double v = fabs((double)bytes);
    const char *sign = bytes < 0 ? "-" : "";
    if (v < 1024) {
        snprintf(buf, size, "%s%.0fB", sign, v);
        return;
    }
    size_t u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    snprintf(buf, size, "%s%.1f%s", sign, v, units[u]);
}

/* "min - max", or "-" when this memory was not recorded for the row. */
static void format_range(const lp_stat *s, int recorded, char *buf, size_t size) {
    if (!recorded || s->n == 0) {
        snprintf(buf, size, "-");
        return;
    }
    char lo[20], hi[20];
    format_size(s->min, lo, sizeof lo);
    format_size(s->max, hi, sizeof hi);
    snprintf(buf, size, "%s - %s", lo, hi);
}

/* ------------------------------------------------------------------------------------------ */
/* Rows                                                                                       */

/* 'name', with what would break a markdown table made harmless: '|' escaped, line breaks and
 * other control characters turned into spaces. */
static char *quote_name(const char *s, size_t len) {
    size_t pipes = 0;
    for (size_t i = 0; i < len; i++)
        pipes += s[i] == '|';
    char *q = malloc(len + pipes + 3);
    if (!q) return NULL;
    size_t o = 0;
    q[o++] = '\'';
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '|') q[o++] = '\\';
        q[o++] = ch < 0x20 || ch == 0x7F ? ' ' : (char)ch;
    }
    q[o++] = '\'';
    q[o] = '\0';
    return q;
}

/* A context's row is named by its path below the context: "preprocess/resize". Region paths
 * start with the context's ("main/preprocess/resize"); anything else (a model forward run
 * outside regions) is named by its own path segments joined from the context down. */
static char *context_row_name(const lp_tree *t, int32_t ctx, int32_t i) {
    const char *cp = t->nodes[ctx].path, *p = t->nodes[i].path;
    size_t cl = strlen(cp);
    if (cl && strncmp(p, cp, cl) == 0 && p[cl] == '/' && p[cl + 1]) {
        p += cl + 1;
        return quote_name(p, strlen(p));
    }
    size_t len = 0, parts = 0;
    for (int32_t j = i; j != ctx && j >= 0; j = t->nodes[j].parent, parts++)
        len += strlen(t->nodes[j].name);
    char *joined = malloc(len + parts + 1);
    if (!joined) return NULL;
    size_t at = len + (parts ? parts - 1 : 0);
    joined[at] = '\0';
    for (int32_t j = i; j != ctx && j >= 0; j = t->nodes[j].parent) {
        size_t n = strlen(t->nodes[j].name);
        at -= n;
        memcpy(joined + at, t->nodes[j].name, n);
        if (at) joined[--at] = '/';
    }
    const char *name = *joined ? joined : t->nodes[i].class_name;
    char *q = quote_name(name, strlen(name));
    free(joined);
    return q;
}

static void fill_row(const lp_tree *t, row *r, int32_t i, uint64_t whole, int dev) {
    const lp_figures *f = &t->nodes[i].fig;
    int recorded = dev >= 0 && t->has_memory[dev];
    r->node = i;
    r->total_ns = f->total_ns;
    snprintf(r->cell[0], sizeof r->cell[0], "%" PRIu64, f->calls);
    /* Trees merged from before the per-call statistics have no Welford count: the mean of the
     * raw sums is the same figure. */
    double mean = f->time.n ? f->time.mean : f->calls ? (double)f->total_ns / (double)f->calls : 0;
    format_seconds(mean, r->cell[1], sizeof r->cell[1]);
    format_seconds((double)f->total_ns, r->cell[2], sizeof r->cell[2]);
    format_percent(f->total_ns, whole, r->cell[3], sizeof r->cell[3]);
    format_range(&f->mem[recorded ? dev : 0].net, recorded, r->cell[4], sizeof r->cell[4]);
    format_range(&f->mem[recorded ? dev : 0].peak, recorded, r->cell[5], sizeof r->cell[5]);
}

/* Most total time first; equal totals keep the tree's order. */
static int by_total(const void *a, const void *b) {
    const row *x = a, *y = b;
    if (x->total_ns != y->total_ns) return x->total_ns > y->total_ns ? -1 : 1;
    return (x->node > y->node) - (x->node < y->node);
}

static void put_cell(FILE *out, const char *s, size_t width) {
    fprintf(out, "| %s", s);
    for (size_t w = lp_text_width(s); w < width; w++)
        fputc(' ', out);
    fputc(' ', out);
}

/* One titled table of rows[0..n) (sorted here). */
static void put_table(FILE *out, const char *title_a, const char *title_b, uint64_t whole,
                      row *rows, size_t n) {
    char total[48];
    format_seconds((double)whole, total, sizeof total);
    if (title_b)
        fprintf(out, "###### %s::%s: (total runtime %ss)\n", title_a, title_b, total);
    else
        fprintf(out, "###### %s: (total runtime %ss)\n", title_a, total);

    qsort(rows, n, sizeof *rows, by_total);
    size_t width[N_COLS];
    for (size_t c = 0; c < N_COLS; c++) {
        width[c] = min_width[c];
        if (strlen(headers[c]) > width[c]) width[c] = strlen(headers[c]);
        for (size_t r = 0; r < n; r++) {
            size_t w = lp_text_width(c ? rows[r].cell[c - 1] : rows[r].name);
            if (w > width[c]) width[c] = w;
        }
    }
    for (size_t c = 0; c < N_COLS; c++)
        put_cell(out, headers[c], width[c]);
    fputs("|\n", out);
    for (size_t c = 0; c < N_COLS; c++) {
        fputs("| ", out);
        for (size_t w = 0; w < width[c]; w++)
            fputc('-', out);
        fputc(' ', out);
    }
    fputs("|\n", out);
    for (size_t r = 0; r < n; r++) {
        for (size_t c = 0; c < N_COLS; c++)
            put_cell(out, c ? rows[r].cell[c - 1] : rows[r].name, width[c]);
        fputs("|\n", out);
    }
}

static void free_rows(row *rows, size_t n) {
    for (size_t r = 0; r < n; r++)
        free(rows[r].name);
}

/* torchtimer shows the GPU's memory; a CPU run shows the CPU's; -1: none recorded. */
static int memory_device(const lp_tree *t) {
    if (t->has_memory[LP_DEV_CUDA]) return LP_DEV_CUDA;
    if (t->has_memory[LP_DEV_CPU]) return LP_DEV_CPU;
    return -1;
}

/* One table per context of a session tree. Rows: every region below the context, and a model
 * forward run directly in the context (outside any region). A context none of whose rows ran
 * (disabled all along) is left out, as torchtimer never shows it. */
static int render_contexts(const lp_tree *t, row *rows, FILE *out) {
    int dev = memory_device(t), tables = 0;
    for (int32_t ctx = t->nodes[0].first_child; ctx >= 0; ctx = t->nodes[ctx].next_sibling) {
        const lp_tree_node *c = &t->nodes[ctx];
        if (c->kind != LP_NODE_CONTEXT) continue;
        size_t n = 0;
        /* Pre-order: the context's descendants are the nodes after it that are deeper. */
        for (size_t i = (size_t)ctx + 1; i < t->n_nodes && t->nodes[i].depth > c->depth; i++) {
            const lp_tree_node *nd = &t->nodes[i];
            int wanted =
                nd->kind == LP_NODE_REGION || (nd->kind == LP_NODE_MODULE && nd->parent == ctx);
            if (!wanted || nd->fig.calls == 0) continue;
            memset(&rows[n], 0, sizeof rows[n]);
            fill_row(t, &rows[n], (int32_t)i, c->fig.total_ns, dev);
            rows[n].name = context_row_name(t, ctx, (int32_t)i);
            if (!rows[n].name) {
                free_rows(rows, n);
                return LP_ERR_NOMEM;
            }
            n++;
        }
        if (!n) continue;
        if (tables++) fputc('\n', out);
        put_table(out, t->nodes[0].name, c->name, c->fig.total_ns, rows, n);
        free_rows(rows, n);
    }
    return LP_OK;
}

/* A module by its dotted path, and for a package's module fused into another's kernel where its
 * time went ("layer1.0.bn1 [fused into layer1.0: KERNEL]", the kernel shortened as in the tree). */
static char *module_row_name(const lp_tree *t, int32_t i) {
    const lp_tree_node *nd = &t->nodes[i];
    if (!nd->fused_module) return quote_name(nd->path, strlen(nd->path));
    char *label = lp_render_module_label(t, i, 64, 0);
    if (!label) return NULL;
    const char *marker = label + strlen(nd->name); /* " [fused into ...]" */
    size_t len = strlen(nd->path) + strlen(marker) + 1;
    char *joined = malloc(len);
    if (joined) snprintf(joined, len, "%s%s", nd->path, marker);
    free(label);
    char *q = joined ? quote_name(joined, strlen(joined)) : NULL;
    free(joined);
    return q;
}

/* A plain model: one table, a row per module that ran, named by its dotted path. */
static int render_modules(const lp_tree *t, row *rows, FILE *out) {
    int dev = memory_device(t);
    uint64_t whole = t->nodes[0].fig.total_ns;
    size_t n = 0;
    for (size_t i = 1; i < t->n_nodes; i++) {
        const lp_tree_node *nd = &t->nodes[i];
        if (nd->fig.calls == 0) continue;
        memset(&rows[n], 0, sizeof rows[n]);
        fill_row(t, &rows[n], (int32_t)i, whole, dev);
        rows[n].name = module_row_name(t, (int32_t)i);
        if (!rows[n].name) {
            free_rows(rows, n);
            return LP_ERR_NOMEM;
        }
        n++;
    }
    put_table(out, t->nodes[0].name, NULL, whole, rows, n);
    free_rows(rows, n);
    return LP_OK;
}

int lp_render_summary(const lp_tree *tree, const lp_render_opts *ro, FILE *out) {
    (void)ro; /* the summary has one fixed layout: torchtimer's */
    if (!tree || !out) return lp_error_set(LP_ERR_INVALID, "lp_render_summary: NULL argument");
    if (!tree->n_nodes) return lp_error_set(LP_ERR_INVALID, "summary: the tree is empty");
    row *rows = malloc(tree->n_nodes * sizeof *rows);
    if (!rows) return lp_error_set(LP_ERR_NOMEM, "summary: out of memory");
    int rc = tree->nodes[0].kind == LP_NODE_SESSION ? render_contexts(tree, rows, out)
                                                    : render_modules(tree, rows, out);
    free(rows);
    if (rc == LP_ERR_NOMEM) return lp_error_set(rc, "summary: out of memory");
    if (fflush(out) != 0 || ferror(out))
        return lp_error_set(LP_ERR_IO, "summary: writing the table failed");
    return LP_OK;
}
