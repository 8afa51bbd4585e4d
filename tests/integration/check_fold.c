/* check_fold.c: the folding rule's properties on reports of real models, at every depth.
 *
 *     check_fold REPORT.json...
 *
 * Each report (a real run's JSON, written by test_fold.sh) is folded at every depth from 0 to its
 * deepest module and without a limit, with --prune and without (lp_tree_fold, what the tree and
 * markdown views draw), and
 * every folded tree must keep these, for every row and every additive column:
 *   - rows add up: a measured row's total is its self plus its shown children's totals, in CPU
 *     time and in FLOPs;
 *   - a folded row is the sum of what it hides: its self time and self FLOPs are its own plus its
 *     hidden measured modules', its self retained memory and self parameters its whole figures
 *     (they do not add across modules); a row standing in for modules measured below it has
 *     their selves as self and the topmost ones' totals as total;
 *   - nothing is lost or made: the shown selves sum to the recorded selves, the op rows' calls
 *     and self times sum to the recorded ones, and each row's top-level op rows fit in its self
 *     time (its "(self)" row is the rest);
 *   - the model's lines do not move with the view: the root's total, calls, FLOPs and
 *     parameters are the same at every depth;
 *   - the views agree with the report: the tree view's Self and Total cells at that depth are
 *     the folded figures (to the printed ns), and the CSV's are the report's (JSON) figures.
 * Times are integer ns from one clock: sums must agree to 1 ns per row (the collector's own
 * rounding of per-call selves). Prints one line per report; exits 1 on the first report that
 * breaks a property, after listing what broke. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "layerprof.h"
#include "model/tree.h"
#include "report/json_report.h"
#include "report/render.h"

static int bad;

static void problem(const char *report, int depth, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (bad < 20) {
        fprintf(stderr, "%s, depth %d: ", report, depth);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
    }
    va_end(ap);
    bad++;
}

static uint64_t diff(uint64_t a, uint64_t b) {
    return a > b ? a - b : b - a;
}

/* What the source tree says of source node `s` and its descendants deeper than `depth`. */
typedef struct hidden_sums {
    uint64_t self_ns, flops_self, top_total_ns;
} hidden_sums;

static hidden_sums sums_under(const lp_tree *t, int32_t s, int depth) {
    hidden_sums h = {0, 0, 0};
    /* Pre-order: the subtree of s is the run of nodes after it that are deeper than it. */
    for (size_t i = (size_t)s + 1; i < t->n_nodes && t->nodes[i].depth > t->nodes[s].depth; i++) {
        const lp_tree_node *n = &t->nodes[i];
        if (n->depth <= depth || !lp_node_measured(n)) continue;
        h.self_ns += n->fig.self_ns;
        h.flops_self += n->fig.flops_self;
        int top = 1; /* no measured hidden ancestor between s and n */
        for (int32_t a = n->parent; a != s; a = t->nodes[a].parent)
            if (lp_node_measured(&t->nodes[a])) top = 0;
        if (top) h.top_total_ns += n->fig.total_ns;
    }
    return h;
}

static void check_depth(const char *name, const lp_tree *src, int depth, int prune) {
    lp_tree f;
    if (lp_tree_fold(src, depth, prune, &f) != LP_OK) {
        problem(name, depth, "lp_tree_fold failed: %s", lp_error_last());
        return;
    }
    uint64_t tol = f.n_nodes; /* 1 ns per row */
    uint64_t shown_self = 0, src_self = 0;
    for (size_t i = 0; i < src->n_nodes; i++)
        if (lp_node_measured(&src->nodes[i])) src_self += src->nodes[i].fig.self_ns;
    for (size_t i = 0; i < f.n_nodes; i++) {
        const lp_tree_node *n = &f.nodes[i];
        int32_t s = lp_tree_find(src, n->path);
        const lp_tree_node *sn = &src->nodes[s];
        if (lp_node_measured(n) || lp_node_stands_in(n)) shown_self += n->fig.self_ns;
        /* Rows add up. */
        if (lp_node_measured(n) && n->kind == LP_NODE_MODULE) {
            uint64_t kids = 0, kid_flops = 0;
            int all_shown = 1;
            for (int32_t c = n->first_child; c >= 0; c = f.nodes[c].next_sibling) {
                if (lp_node_measured(&f.nodes[c]) || lp_node_stands_in(&f.nodes[c]))
                    kids += f.nodes[c].fig.total_ns;
                kid_flops += f.nodes[c].fig.flops_total;
                if (!f.nodes[c].selected) all_shown = 0;
            }
            if (!n->container && diff(n->fig.self_ns + kids, n->fig.total_ns) > tol)
                problem(name, depth, "'%s': self %llu + children %llu != total %llu ns", n->path,
                        (unsigned long long)n->fig.self_ns, (unsigned long long)kids,
                        (unsigned long long)n->fig.total_ns);
            if (f.has_flops && all_shown && n->fig.flops_self + kid_flops != n->fig.flops_total)
                problem(name, depth, "'%s': self FLOPs %llu + children %llu != FLOPs %llu", n->path,
                        (unsigned long long)n->fig.flops_self, (unsigned long long)kid_flops,
                        (unsigned long long)n->fig.flops_total);
        }
        /* A folded row is the sum of what it hides. */
        if (n->folded) {
            hidden_sums h = sums_under(src, s, depth);
            if (lp_node_measured(sn)) {
                if (n->fig.self_ns != sn->fig.self_ns + h.self_ns)
                    problem(name, depth, "folded '%s': self %llu ns, own %llu + hidden %llu",
                            n->path, (unsigned long long)n->fig.self_ns,
                            (unsigned long long)sn->fig.self_ns, (unsigned long long)h.self_ns);
                if (n->fig.flops_self != sn->fig.flops_self + h.flops_self)
                    problem(name, depth, "folded '%s': self FLOPs %llu, own %llu + hidden %llu",
                            n->path, (unsigned long long)n->fig.flops_self,
                            (unsigned long long)sn->fig.flops_self,
                            (unsigned long long)h.flops_self);
                for (int d = 0; d < LP_DEV_COUNT; d++)
                    if (n->fig.mem[d].self_retained.sum != sn->fig.mem[d].retained.sum)
                        problem(name, depth, "folded '%s': self retained is not its retained",
                                n->path);
                if (n->fig.size.known && n->fig.size.self_params != sn->fig.size.params)
                    problem(name, depth, "folded '%s': self params %llu, params %llu", n->path,
                            (unsigned long long)n->fig.size.self_params,
                            (unsigned long long)sn->fig.size.params);
            } else if (h.self_ns &&
                       (n->fig.self_ns != h.self_ns || n->fig.total_ns != h.top_total_ns)) {
                problem(name, depth,
                        "'%s' stands for %llu ns self, %llu ns total; shows %llu, %llu", n->path,
                        (unsigned long long)h.self_ns, (unsigned long long)h.top_total_ns,
                        (unsigned long long)n->fig.self_ns, (unsigned long long)n->fig.total_ns);
            }
        }
        /* Its top-level op rows fit in its self time. */
        uint64_t ops = 0;
        for (int32_t o = n->first_op; o >= 0; o = f.ops[o].next_sibling)
            ops += f.ops[o].fig.total_ns;
        if (lp_node_measured(n) && f.has_ops && ops > n->fig.self_ns + tol + n->fig.self_ns / 100)
            problem(name, depth, "'%s': op rows %llu ns > self %llu ns", n->path,
                    (unsigned long long)ops, (unsigned long long)n->fig.self_ns);
    }
    if (diff(shown_self, src_self) > 0)
        problem(name, depth, "shown selves sum to %llu ns, recorded %llu ns",
                (unsigned long long)shown_self, (unsigned long long)src_self);
    /* Nothing lost among the op rows. */
    uint64_t calls[2] = {0, 0}, self[2] = {0, 0};
    for (size_t i = 0; i < src->n_ops; i++) {
        calls[0] += src->ops[i].fig.calls;
        self[0] += src->ops[i].fig.self_ns;
    }
    for (size_t i = 0; i < f.n_ops; i++) {
        calls[1] += f.ops[i].fig.calls;
        self[1] += f.ops[i].fig.self_ns;
    }
    if (calls[0] != calls[1] || self[0] != self[1])
        problem(name, depth, "op rows: %llu calls, %llu ns recorded; %llu, %llu shown",
                (unsigned long long)calls[0], (unsigned long long)self[0],
                (unsigned long long)calls[1], (unsigned long long)self[1]);
    /* The model's lines do not move (a root measured only below it, paths selected, stands in
     * for the time measured there: its total is theirs, as every such row's). */
    const lp_figures *a = &src->nodes[0].fig, *b = &f.nodes[0].fig;
    if ((lp_node_measured(&src->nodes[0]) && a->total_ns != b->total_ns) || a->calls != b->calls ||
        a->flops_total != b->flops_total || a->size.params != b->size.params ||
        a->size.bytes != b->size.bytes)
        problem(name, depth, "the root's figures moved");
    lp_tree_free(&f);
}

/* The i-th " | "-separated cell of a table line, trimmed, into buf ("" past the last). The
 * renderer strips trailing blanks, so a line of blank last cells ends in " |": it gets its space
 * back first. */
static void cell_of(const char *line, int i, char *buf, size_t size) {
    char copy[4096];
    size_t len = strcspn(line, "\n");
    if (len > sizeof copy - 2) len = sizeof copy - 2;
    memcpy(copy, line, len);
    copy[len] = ' ';
    copy[len + 1] = '\0';
    const char *p = copy;
    for (int k = 0; k < i && p; k++)
        p = strstr(p, " | ") ? strstr(p, " | ") + 3 : NULL;
    size_t n = 0;
    if (p) {
        const char *end = strstr(p, " | ");
        n = end ? (size_t)(end - p) : strlen(p);
    }
    while (n > 0 && p[n - 1] == ' ')
        n--;
    while (n > 0 && *p == ' ')
        p++, n--;
    if (n >= size) n = size - 1;
    memcpy(buf, p ? p : "", n);
    buf[n] = '\0';
}

static char *render_to_text(const lp_tree *t, const lp_render_opts *ro, int csv) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) return NULL;
    int rc = csv ? lp_render_csv(t, ro, f) : lp_render_tree(t, ro, f);
    fclose(f);
    if (rc != LP_OK) {
        free(text);
        return NULL;
    }
    return text;
}

/* The tree view at this depth draws the folded figures, row for row in model order; the CSV (the
 * whole tree) draws the report's. Times are compared as printed: in us with 3 decimals. */
static void check_views(const char *name, const lp_tree *src, int depth, int prune) {
    static const char *const cols[] = {"self_cpu", "cpu_total"};
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.depth = depth;
    ro.prune = prune;
    ro.columns = cols;
    ro.n_columns = 2;
    ro.units = LP_UNITS_US;
    ro.show_ops = 0;
    lp_tree f;
    char *tree = render_to_text(src, &ro, 0), *csv = render_to_text(src, &ro, 1);
    if (!tree || !csv || lp_tree_fold(src, depth, prune, &f) != LP_OK) {
        problem(name, depth, "rendering failed: %s", lp_error_last());
        free(tree);
        free(csv);
        return;
    }
    double it = (double)f.iterations;
    const char *line = strchr(tree, '\n');
    line = line ? strchr(line + 1, '\n') : NULL; /* past the header and its rule */
    for (size_t i = 0; i < f.n_nodes && line; i++, line = strchr(line, '\n')) {
        line++;
        const lp_tree_node *n = &f.nodes[i];
        int shown = lp_node_measured(n) || lp_node_stands_in(n);
        uint64_t v[2] = {n->fig.self_ns, n->fig.total_ns};
        for (int c = 0; c < 2; c++) {
            char got[64], want[64] = "";
            cell_of(line, c + 1, got, sizeof got);
            if (shown) lp_format_time((double)v[c] / it, LP_UNITS_US, want, sizeof want);
            if (strcmp(got, want) != 0)
                problem(name, depth, "tree row '%s' shows %s '%s', the figures say '%s'", n->path,
                        cols[c], got, want);
        }
    }
    line = strchr(csv, '\n'); /* past the header */
    /* A package with fused modules ends each row with fused_into_module, fused_into_kernel. */
    int fused =
        line && strstr(csv, ",fused_into_kernel\r\n") && strstr(csv, ",fused_into_kernel") < line;
    for (size_t i = 0; i < src->n_nodes && line; i++, line = strchr(line, '\n')) {
        line++;
        const lp_tree_node *n = &src->nodes[i];
        /* the last two fields of the columns: self_cpu_ns, cpu_total_ns (per iteration) */
        const char *end = line + strcspn(line, "\r\n"), *c2, *c1;
        for (int skip = fused ? 2 : 0; skip > 0 && end > line; skip--) /* no comma in either */
            while (end > line && *--end != ',')
                ;
        c2 = end;
        while (c2 > line && c2[-1] != ',')
            c2--;
        c1 = c2 - 1;
        while (c1 > line && c1[-1] != ',')
            c1--;
        int has = n->selected && n->fig.calls > 0;
        double got[2] = {atof(c1), atof(c2)};
        double want[2] = {(double)n->fig.self_ns / it, (double)n->fig.total_ns / it};
        for (int c = 0; c < 2; c++)
            if (has ? (got[c] - want[c] > 0.001 || want[c] - got[c] > 0.001)
                    : (c ? *c2 != '\r' && *c2 != '\n' && *c2 != ',' : *c1 != ','))
                problem(name, depth, "CSV row '%s': %s %.3f, the report says %.3f", n->path,
                        cols[c], got[c], has ? want[c] : 0.0);
    }
    lp_tree_free(&f);
    free(tree);
    free(csv);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s REPORT.json...\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        lp_report *r = NULL;
        if (lp_report_load(&r, argv[i]) != LP_OK) {
            fprintf(stderr, "%s: %s\n", argv[i], lp_error_last());
            return 1;
        }
        const lp_tree *t = lp_report_tree(r);
        int deepest = 0;
        for (size_t k = 0; k < t->n_nodes; k++)
            if (t->nodes[k].depth > deepest) deepest = t->nodes[k].depth;
        for (int prune = 0; prune <= 1; prune++)
            for (int d = -1; d <= deepest; d++) {
                check_depth(argv[i], t, d, prune);
                check_views(argv[i], t, d, prune);
            }
        printf("%s: %zu modules, %zu op rows, depths -1..%d, pruned and not: %s\n", argv[i],
               t->n_nodes, t->n_ops, deepest, bad ? "FAILED" : "every property holds");
        lp_report_free(r);
        if (bad) return 1;
    }
    return 0;
}
