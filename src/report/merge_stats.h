/* merge_stats.h: the distribution of one quantity across merged reports: min, nearest-rank median
 * and p90, max, and which report held the max. */
#ifndef LP_MERGE_STATS_H
#define LP_MERGE_STATS_H

#include <stddef.h>

typedef struct lp_spread {
    size_t n; /* the reports where the module ran (values that are not NaN) */
    double min, median, p90, max;
    size_t max_at; /* the index of the report that held the max (the first of equal ones) */
    double skew;   /* max / median; +inf when only the median is 0; 0 when both are or n is 0 */
} lp_spread;

/* The nearest-rank percentile of `sorted` (ascending, n >= 1): the value at 1-based rank
 * ceil(p / 100 * n). The median is p 50: the lower middle value when n is even. */
double lp_nearest_rank(const double *sorted, size_t n, int p);

/* The spread of values[0..n) (NaN: the module did not run in that report), sorted in `scratch`
 * (room for n). */
void lp_spread_of(const double *values, size_t n, double *scratch, lp_spread *out);

#endif
