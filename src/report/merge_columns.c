/* merge_columns.c: naming and reading merge's columns (merge_columns.h). */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "report/merge_columns.h"

static const char *const q_ids[LP_MQ_COUNT] = {"self", "total", "cuda_self", "cuda_total"};
static const char *const q_headers[LP_MQ_COUNT] = {"Self", "Total", "CUDA self", "CUDA total"};
static const char *const stat_ids[] = {"min", "median", "p90", "max", "skew", "source"};
static const char *const stat_headers[] = {"min", "median", "p90", "max", "skew", "max in"};
#define N_STATS (sizeof stat_ids / sizeof *stat_ids)

int lp_merge_col_parse(const char *id, int has_cuda, lp_merge_col *out) {
    if (strcmp(id, "reports") == 0) {
        *out = (lp_merge_col){LP_MQ_TOTAL, LP_MS_REPORTS};
        return LP_OK;
    }
    if (strcmp(id, "skew") == 0) id = "total_skew";
    for (int q = LP_MQ_COUNT - 1; q >= 0; q--) { /* cuda_self before self: longest prefix */
        size_t len = strlen(q_ids[q]);
        if (strncmp(id, q_ids[q], len) != 0 || id[len] != '_') continue;
        for (size_t s = 0; s < N_STATS; s++) {
            if (strcmp(id + len + 1, stat_ids[s]) != 0) continue;
            if (q >= LP_MQ_CUDA_SELF && !has_cuda)
                return lp_error_set(LP_ERR_INVALID,
                                    "column '%s': no merged report recorded CUDA time", id);
            *out = (lp_merge_col){(lp_merge_q)q, (lp_merge_stat)s};
            return LP_OK;
        }
    }
    return lp_error_set(LP_ERR_NOT_FOUND,
                        "unknown column '%s' (merge's columns: QUANTITY_FIGURE with QUANTITY self, "
                        "total, cuda_self or cuda_total and FIGURE min, median, p90, max, skew or "
                        "source; skew; reports)",
                        id);
}

const char *lp_merge_col_id(lp_merge_col c, char *buf, size_t size) {
    if (c.stat == LP_MS_REPORTS) return "reports";
    snprintf(buf, size, "%s_%s", q_ids[c.q], stat_ids[c.stat]);
    return buf;
}

const char *lp_merge_col_header(lp_merge_col c, char *buf, size_t size) {
    if (c.stat == LP_MS_REPORTS) return "Reports";
    snprintf(buf, size, "%s %s", q_headers[c.q], stat_headers[c.stat]);
    return buf;
}

double lp_merge_col_value(lp_merge_col c, const lp_spread *s) {
    switch (c.stat) {
    case LP_MS_MIN:
        return s->min;
    case LP_MS_MEDIAN:
        return s->median;
    case LP_MS_P90:
        return s->p90;
    case LP_MS_MAX:
        return s->max;
    case LP_MS_SKEW:
        return s->skew;
    case LP_MS_SOURCE:
        return (double)s->max_at;
    case LP_MS_REPORTS:
        return (double)s->n;
    }
    return 0.0;
}
