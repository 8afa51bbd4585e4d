/* bench_stats.h: the benchmarks' statistics and verdicts: samples and their quantiles, intervals
 * of the median per-round ratio, the rotation of model copies, and the PASS/MISS/UNSURE/SUSPECT
 * budget lines run.sh collects. No clock, no heap counting, no libtorch: a library of its own
 * (lp_bench_stats), tested with exact expected outcomes by bench/test_stats.c. Internal to bench/:
 * never part of the library. */
#ifndef LP_BENCH_STATS_H
#define LP_BENCH_STATS_H

#include <stddef.h>
#include <stdint.h>

/* ---- statistics ------------------------------------------------------------------------------ */

/* A growable array of samples (nanoseconds, or ratios). */
typedef struct bench_samples {
    double *v;
    size_t n, cap;
} bench_samples;

void bench_samples_add(bench_samples *s, double v);
/* Room for n samples in all, so that adding them calls no allocator (a timed loop's heap count). */
void bench_samples_reserve(bench_samples *s, size_t n);
void bench_samples_free(bench_samples *s);
/* The q-quantile (0..1, linear interpolation) of v[0..n); sorts a copy. 0 when n == 0. */
double bench_quantile(const double *v, size_t n, double q);
double bench_median(const double *v, size_t n);
/* The same, sorting v itself: no heap call (for use while heap calls are being counted). */
double bench_quantile_inplace(double *v, size_t n, double q);

/* A distribution-free confidence interval of the median of v[0..n): the order statistics X(k) and
 * X(n+1-k), k the largest rank with P(Binomial(n, 1/2) < k) <= 2.5% (n = 20: ranks 6 and 15; n = 8:
 * 1 and 8, 99%). It assumes only that the samples are independent draws of one distribution. For
 * n < 6 no pair of ranks reaches 95%: the whole range (coverage 1 - 2^(1-n): 0 for one sample,
 * 0.94 for 5). *coverage (when not NULL) gets the interval's true coverage (0.959 for n = 20).
 * Sorts a copy. */
typedef struct bench_interval {
    double lo, mid, hi; /* mid: the median */
} bench_interval;
bench_interval bench_median_ci(const double *v, size_t n, double *coverage);

/* What no in-process figure can show: the same code's ratios differ between processes by about
 * this much (bench/results/2026-11-24-markers-default.md's repeated lstm_cell runs:
 * x_opt 1.045-1.055), from each process's own memory layout of the two model copies. Every ratio's
 * interval is at least this wide each side. */
#define BENCH_RATIO_FLOOR 0.005
/* A verdict (PASS or MISS) needs an interval of at least this coverage: with fewer than 6 rounds
 * (run.sh --smoke) the range of the rounds covers the median too rarely to decide: UNSURE. */
#define BENCH_MIN_COVERAGE 0.95
/* The interval of the median per-round ratio num[r] / den[r] (each a block median of round r),
 * bench_median_ci's, widened each side by `widen` (the [A/A] spread) or BENCH_RATIO_FLOOR,
 * whichever is larger, times the median; widen < 0: not widened at all. */
bench_interval bench_ratio_interval(const bench_samples *num, const bench_samples *den,
                                    double widen, double *coverage);
/* The larger half of an interval. */
double bench_half_width(bench_interval i);
/* The [A/A] spread: how far the interval (unwidened) of the median per-round ratio aa[r] / ref[r]
 * strays from 1.000 at its farther end; what bench_ratio_interval's `widen` takes. */
double bench_aa_spread(const bench_samples *aa, const bench_samples *ref);

/* ---- model copies ----------------------------------------------------------------------------
 * Which copy each kind runs in round r (lp_bench_torch --copies K): K copies of each kind, `mine`
 * (the mode's own, which the baseline and the profiled settings run; m = max(K, 2) of them, the
 * [A/A] taking the one after the baseline's) and `opt` (x_opt's reference). Every copy in a
 * process sits where that process put its weights, and on a memory-bound model (alexnet, 240 MB
 * of weights) that placement makes one copy a few percent faster or slower than another, a
 * per-process draw that no repetition of one copy reveals (bench/README.md). Rotating the copies
 * turns that bias into per-round spread, which the interval then holds, and the median of the
 * per-round ratios averages it over K x K pairings: the opt copy advances by one more every K
 * rounds, so rounds 0..K*K-1 pair every mode copy with every opt copy once. */
#define BENCH_MAX_COPIES 8
typedef struct bench_copy_plan {
    int k, m;
} bench_copy_plan;
bench_copy_plan bench_copy_plan_of(int copies);
int bench_copy_mine(bench_copy_plan p, int r);
int bench_copy_aa(bench_copy_plan p, int r);
int bench_copy_opt(bench_copy_plan p, int r);

/* ---- output ---------------------------------------------------------------------------------
 * Budget lines go to stdout as "BUDGET|<what>|<value text>|<limit text>|<verdict>[|<note>]";
 * run.sh lifts them into the summary at the end. A budget is reported, never enforced: exit codes
 * do not depend on timings. Verdicts: PASS (the whole noise interval meets the limit), MISS (none
 * of it does), UNSURE (the interval straddles the limit, or the figure cannot be measured at this
 * noise), SUSPECT (the figure is impossible, e.g. a profiled forward faster than the unprofiled
 * one beyond the noise: the harness is at fault, not the code). */
typedef enum bench_verdict { BENCH_PASS, BENCH_MISS, BENCH_UNSURE, BENCH_SUSPECT } bench_verdict;
const char *bench_verdict_name(bench_verdict v);
/* A "value <= limit" budget on an interval [lo, hi]. */
bench_verdict bench_judge_at_most(double lo, double hi, double limit);
/* A profiled setting's median ratio to its unprofiled reference below this says the reference is
 * skewed (bench/README.md, Verdicts), however wide its interval. */
#define BENCH_SKEWED_RATIO 0.95
/* What r, the interval of a ratio whose numerator does more work than its denominator (a profiled
 * setting over its unprofiled reference), says of the harness. SUSPECT: impossible beyond the
 * noise (wholly below 1.0). SKEWED: the median is below BENCH_SKEWED_RATIO but the interval
 * reaches 1.0: not a decision either way, and never a PASS. Ordered: the worse is the larger. */
typedef enum bench_ratio_check {
    BENCH_RATIO_OK = 0,
    BENCH_RATIO_SKEWED = 1,
    BENCH_RATIO_SUSPECT = 2
} bench_ratio_check;
bench_ratio_check bench_ratio_check_of(bench_interval r);
/* The verdict of a "value <= limit" budget line on the interval x: SUSPECT when `check` is
 * BENCH_RATIO_SUSPECT (the caller may combine several ratios' checks: the larger wins), UNSURE
 * when it is BENCH_RATIO_SKEWED, or when max_half > 0 and the interval's half-width (hi - lo) / 2
 * exceeds it (the figure cannot be measured at this noise), else bench_judge_at_most.
 * bench_torch.c, bench_cuda.c and bench_sampling.cpp decide every ratio and ns/op budget line
 * here; bench/test_stats.c checks it. */
bench_verdict bench_judge(bench_interval x, double limit, bench_ratio_check check, double max_half);
/* The note a SUSPECT or SKEWED line carries instead of its margin ("" when OK): `than` names the
 * reference ("its unprofiled reference"). */
void bench_check_note(char *buf, size_t size, bench_ratio_check check, const char *than);
/* A "value >= limit" budget on an interval [lo, hi]: PASS when lo meets it, MISS when hi does not.
 */
bench_verdict bench_judge_at_least(double lo, double hi, double limit);
/* "margin +0.038 = 4.1x the noise ±0.009": the distance to the limit (positive: on the good side)
 * against the interval's half-width, `decimals` digits, `unit` after the margin ("" for ratios). */
void bench_margin_note(char *buf, size_t size, double margin, double noise, int decimals,
                       const char *unit);
void bench_budget_verdict(const char *what, bench_verdict v, const char *value, const char *limit,
                          const char *note);
void bench_budget(const char *what, int pass, const char *value_fmt, double value,
                  const char *limit);
/* The same with the value already formatted. */
void bench_budget_text(const char *what, int pass, const char *value, const char *limit);

#endif
