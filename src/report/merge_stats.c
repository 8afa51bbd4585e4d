/* merge_stats.c: distributions across reports. Percentiles are nearest-rank (no interpolation),
 * so every figure printed is one a report holds: the median of 1, 2, 3, 100 is 2, not 2.5, and
 * the reader can find the report behind it. */
#include <math.h>
#include <stdlib.h>

#include "report/merge_stats.h"

double lp_nearest_rank(const double *sorted, size_t n, int p) {
    /* ceil(p * n / 100) in integers: no rounding of p / 100 can move the rank. */
    size_t rank = ((size_t)p * n + 99) / 100;
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

static int ascending(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void lp_spread_of(const double *values, size_t n, double *scratch, lp_spread *out) {
    *out = (lp_spread){0};
    for (size_t i = 0; i < n; i++) {
        if (isnan(values[i])) continue;
        if (out->n == 0 || values[i] > out->max) {
            out->max = values[i];
            out->max_at = i;
        }
        scratch[out->n++] = values[i];
    }
    if (out->n == 0) return;
    qsort(scratch, out->n, sizeof *scratch, ascending);
    out->min = scratch[0];
    out->median = lp_nearest_rank(scratch, out->n, 50);
    out->p90 = lp_nearest_rank(scratch, out->n, 90);
    /* A median of 0 with a max above it is the worst straggler there is (a module that took no
     * time in most runs and time in one): +inf ranks it first. All zeros: no skew at all. */
    out->skew = out->median > 0 ? out->max / out->median : out->max > 0 ? INFINITY : 0.0;
}
