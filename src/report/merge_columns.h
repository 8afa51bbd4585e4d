/* merge_columns.h: the columns of `layerprof merge`: a quantity (self, total, cuda_self,
 * cuda_total; per call) and a figure of its spread across the reports (min, median, p90, max,
 * skew, source), or the count of reports where the module ran ("reports"). */
#ifndef LP_MERGE_COLUMNS_H
#define LP_MERGE_COLUMNS_H

#include <stddef.h>

#include "report/merge.h"

typedef enum lp_merge_stat {
    LP_MS_MIN = 0,
    LP_MS_MEDIAN,
    LP_MS_P90,
    LP_MS_MAX,
    LP_MS_SKEW,   /* max / median */
    LP_MS_SOURCE, /* the report that held the max */
    LP_MS_REPORTS /* the reports where the module ran (the quantity is ignored) */
} lp_merge_stat;

typedef struct lp_merge_col {
    lp_merge_q q;
    lp_merge_stat stat;
} lp_merge_col;

/* Parses "total_p90", "skew" (total_skew), "reports". LP_ERR_NOT_FOUND names the valid ones;
 * LP_ERR_INVALID for a CUDA column when no report recorded CUDA time (has_cuda 0). */
int lp_merge_col_parse(const char *id, int has_cuda, lp_merge_col *out);

/* The column's id ("total_p90") and its header ("Total p90"), static storage. */
const char *lp_merge_col_id(lp_merge_col c, char *buf, size_t size);
const char *lp_merge_col_header(lp_merge_col c, char *buf, size_t size);

/* The figure of `s` the column shows, as a number (source: the report's index). */
double lp_merge_col_value(lp_merge_col c, const lp_spread *s);

#endif
