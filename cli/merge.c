/* merge.c: `layerprof merge [OPTIONS] REPORT.json...`: many reports of one model as one tree of
 * per-module distributions (lp_merge_*). The reports are read one at a time and freed once their
 * figures are kept, so the memory does not grow with the size of the documents. A client of the
 * public API only. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"
#include "merge.h"

static void merge_usage(FILE *out) {
    fputs(
        "usage: layerprof merge [--force] [--format tree|json|csv|markdown] [--columns A,B,...]\n"
        "                       [--top N [--sort COLUMN]] [--label KEY=VALUE] REPORT.json...\n"
        "\n"
        "Prints the first report's module tree with, per module, the distribution across the\n"
        "reports of the per-call self and total time (and CUDA time where recorded): min,\n"
        "median, p90 (nearest rank), max, the report that held the max and the skew\n"
        "(max/median). A report is named by the --label given before it, else by its run's\n"
        "labels (a run's --label), else by its file name.\n"
        "\n"
        "  --top N         the N modules with the highest skew (or --sort COLUMN), highest first\n"
        "  --sort COLUMN   what --top ranks by (default total_skew; e.g. total_max)\n"
        "  --columns LIST  QUANTITY_FIGURE ids: self, total, cuda_self, cuda_total with min,\n"
        "                  median, p90, max, skew, source; and reports\n"
        "  --force         merge reports run with other device, mode, threads or inputs\n"
        "                  (a note names the options that differ)\n"
        "\n"
        "Reports of another model or module tree are refused (exit 2).\n",
        out);
}

/* One line, whatever was typed: control characters in `arg` are shown as '?'. */
static int usage_error(const char *what, const char *arg) {
    fprintf(stderr, "layerprof merge: error: %s '", what);
    for (const unsigned char *p = (const unsigned char *)arg; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, stderr);
    fputs("' (try 'layerprof merge --help')\n", stderr);
    return 2;
}

/* "a,b,c" split in place into `out` (at most `cap`); returns the count, or cap + 1 when there
 * are more. */
static size_t split_columns(char *list, const char **out, size_t cap) {
    size_t n = 0;
    for (char *p = strtok(list, ","); p; p = strtok(NULL, ","))
        if (n++ < cap) out[n - 1] = p;
    return n;
}

/* KEY=VALUE with a key of Prometheus' form, the value not empty. */
static int label_ok(const char *s) {
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !eq[1]) return 0;
    for (const char *p = s; p < eq; p++) {
        int alpha = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_';
        if (!alpha && !(p > s && *p >= '0' && *p <= '9')) return 0;
    }
    return 1;
}

typedef struct merge_args {
    char **files, **labels; /* labels[i]: the --label before files[i], or NULL */
    size_t n;
    unsigned flags;
    lp_format format;
    const char *columns[64];
    size_t n_columns;
    int top;
    const char *sort;
} merge_args;

/* Returns -1 to go on, else the exit code (after printing the usage or the error). */
static int parse(merge_args *a, int argc, char **argv) {
    const char *pending = NULL;
    a->files = calloc((size_t)argc, sizeof *a->files);
    a->labels = calloc((size_t)argc, sizeof *a->labels);
    if (!a->files || !a->labels) {
        fputs("layerprof merge: error: out of memory\n", stderr);
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        int has_value = i + 1 < argc;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            merge_usage(stdout);
            return 0;
        } else if (strcmp(arg, "--force") == 0) {
            a->flags |= LP_MERGE_FORCE;
        } else if (strcmp(arg, "--format") == 0 && has_value) {
            if (lp_format_parse(argv[++i], &a->format) != LP_OK)
                return usage_error("unknown format", argv[i]);
        } else if (strcmp(arg, "--columns") == 0 && has_value) {
            a->n_columns = split_columns(argv[++i], a->columns, 64);
            if (a->n_columns > 64) {
                fputs("layerprof merge: error: --columns takes at most 64 columns\n", stderr);
                return 2;
            }
        } else if (strcmp(arg, "--top") == 0 && has_value) {
            char *end;
            errno = 0;
            long n = strtol(argv[++i], &end, 10);
            if (errno || *end || n < 1 || n > 1000000)
                return usage_error("--top takes a count from 1, not", argv[i]);
            a->top = (int)n;
        } else if (strcmp(arg, "--sort") == 0 && has_value) {
            a->sort = argv[++i];
        } else if (strcmp(arg, "--label") == 0 && has_value) {
            if (!label_ok(argv[++i]))
                return usage_error("--label takes KEY=VALUE (KEY: [a-zA-Z_][a-zA-Z0-9_]*), not",
                                   argv[i]);
            pending = argv[i];
        } else if (arg[0] == '-' && arg[1] != '\0') {
            return usage_error(has_value || strncmp(arg, "--", 2) != 0 ? "unknown option"
                                                                       : "a value is missing after",
                               arg);
        } else {
            a->labels[a->n] = (char *)pending;
            a->files[a->n++] = argv[i];
            pending = NULL;
        }
    }
    if (pending) return usage_error("--label names the report after it; none follows", pending);
    if (a->sort && !a->top)
        return usage_error("--sort orders --top's rows: give --top N with", a->sort);
    if (a->n == 0) {
        fputs("layerprof merge: error: no reports to merge (try 'layerprof merge --help')\n",
              stderr);
        return 2;
    }
    return -1;
}

static int merge_all(const merge_args *a) {
    lp_merge *m = NULL;
    int rc = lp_merge_new(&m, a->flags);
    for (size_t i = 0; i < a->n && rc == LP_OK; i++) {
        lp_report *r = NULL;
        rc = lp_report_load(&r, a->files[i]);
        if (rc == LP_OK) rc = lp_merge_add(m, r, a->labels[i], a->files[i]);
        lp_report_free(r); /* one report at a time: only its figures stay */
    }
    if (rc == LP_OK)
        rc = lp_merge_render(m, a->format, a->n_columns ? a->columns : NULL, a->n_columns, a->top,
                             a->sort, stdout);
    if (rc == LP_OK && fflush(stdout) != 0) rc = LP_ERR_IO;
    if (rc) fprintf(stderr, "layerprof merge: error: %s\n", lp_error_last());
    lp_merge_free(m);
    return rc == LP_OK                                                                  ? 0
           : rc == LP_ERR_INVALID || rc == LP_ERR_NOT_FOUND || rc == LP_ERR_UNSUPPORTED ? 2
                                                                                        : 1;
}

int lp_cli_merge(int argc, char **argv) {
    merge_args a;
    memset(&a, 0, sizeof a);
    a.format = LP_FORMAT_TREE;
    int rc = parse(&a, argc, argv);
    if (rc < 0) rc = merge_all(&a);
    free(a.files);
    free(a.labels);
    return rc;
}
