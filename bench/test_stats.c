/* test_stats.c: the bench's statistics (bench_stats.h) on exact samples: quantiles by linear
 * interpolation, the order-statistic interval of the median and its coverage; and its verdict
 * rules, which decide as bench/README.md ("Verdicts") documents, on synthetic per-round ratios: the
 * order-statistic interval of the median, its widening by the [A/A] spread or the
 * BENCH_RATIO_FLOOR, and PASS / MISS / UNSURE / SUSPECT from bench_judge. Each ratio series goes
 * through bench_ratio_interval as bench_torch.c feeds it (a setting's per-round block medians over
 * its reference's); the reference reads 1.0 in every round, so the ratios are exactly the numbers
 * written here. No libtorch, no timing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "bench_stats.h"

/* Comparing computed bounds with hand-computed ones: far below any figure the bench prints.
 * (cmocka's assert_float_equal works in float, too coarse for this.) */
#define EPS 1e-12
#define assert_close(a, b, eps) close_at((a), (b), (eps), #a, __FILE__, __LINE__)

static void close_at(double a, double b, double eps, const char *expr, const char *file, int line) {
    double d = a > b ? a - b : b - a;
    if (d > eps) {
        print_error("%s = %.15g, expected %.15g\n", expr, a, b);
        _fail(file, line);
    }
}

/* The interval bench_torch.c gives a setting whose per-round ratios are v[0..n). */
static bench_interval interval_of(const double *v, size_t n, double widen, double *coverage) {
    bench_samples num = {0}, den = {0};
    for (size_t i = 0; i < n; i++) {
        bench_samples_add(&num, v[i]);
        bench_samples_add(&den, 1.0);
    }
    bench_interval r = bench_ratio_interval(&num, &den, widen, coverage);
    bench_samples_free(&num);
    bench_samples_free(&den);
    return r;
}

/* A verdict of a profiled setting's ratio on a "<= limit" budget, as bench_torch.c and
 * bench_cuda.c decide it. */
static bench_verdict judge_ratio(bench_interval x, double limit) {
    return bench_judge(x, limit, bench_ratio_check_of(x), 0);
}

/* 20 rounds, start, start + step, ...: shuffled, since rounds arrive in no order. */
static void ramp20(double *v, double start, double step) {
    static const int order[20] = {7,  19, 0, 12, 3,  15, 9,  1, 18, 5,
                                  11, 14, 2, 8,  17, 4,  13, 6, 16, 10};
    for (int i = 0; i < 20; i++)
        v[i] = start + step * order[i];
}

/* The full run's 20 rounds: the 6th and 15th sorted ratios, 95.9%; the floor widens each side by
 * 0.005 x the median when the [A/A] spread is smaller. */
static void test_interval_20_rounds_floor(void **state) {
    (void)state;
    double v[20], cover = 0;
    ramp20(v, 1.000, 0.001); /* sorted: 1.000 .. 1.019 */
    bench_interval raw = interval_of(v, 20, -1, &cover);
    assert_close(raw.lo, 1.005, EPS);
    assert_close(raw.hi, 1.014, EPS);
    assert_close(raw.mid, 1.0095, EPS);
    assert_close(cover, 0.9586105346679688, 1e-9); /* 1 - 2 P(Binomial(20, 1/2) < 6) */
    /* An [A/A] spread under the floor: the floor. */
    bench_interval w = interval_of(v, 20, 0.001, NULL);
    assert_close(w.lo, 1.005 - 0.005 * 1.0095, EPS);
    assert_close(w.hi, 1.014 + 0.005 * 1.0095, EPS);
    assert_close(w.mid, 1.0095, EPS);
    /* No [A/A] at all (widen 0, the [A/A] row itself): still the floor. */
    bench_interval z = interval_of(v, 20, 0, NULL);
    assert_close(z.lo, 1.005 - BENCH_RATIO_FLOOR * 1.0095, EPS);
    assert_close(z.hi, 1.014 + BENCH_RATIO_FLOOR * 1.0095, EPS);
}

/* An [A/A] spread wider than the floor widens each side by itself x the median. */
static void test_interval_aa_spread(void **state) {
    (void)state;
    double v[20];
    ramp20(v, 1.000, 0.001);
    bench_interval w = interval_of(v, 20, 0.02, NULL);
    assert_close(w.lo, 1.005 - 0.02 * 1.0095, EPS);
    assert_close(w.hi, 1.014 + 0.02 * 1.0095, EPS);
    assert_close(bench_half_width(w), 1.014 + 0.02 * 1.0095 - 1.0095, EPS);
    /* The same ratios PASS 1.05 with the floor and read UNSURE once the A/A spread is 0.04. */
    assert_int_equal(judge_ratio(interval_of(v, 20, 0, NULL), 1.05), BENCH_PASS);
    assert_int_equal(judge_ratio(interval_of(v, 20, 0.04, NULL), 1.05), BENCH_UNSURE);
}

/* 20 rounds clearly under 1.05: PASS; clearly over: MISS; straddling: UNSURE. */
static void test_pass_miss_unsure(void **state) {
    (void)state;
    double v[20];
    ramp20(v, 1.000, 0.001); /* interval [1.00, 1.02] */
    assert_int_equal(judge_ratio(interval_of(v, 20, 0.003, NULL), 1.05), BENCH_PASS);
    ramp20(v, 1.100, 0.001); /* interval [1.10, 1.12] */
    assert_int_equal(judge_ratio(interval_of(v, 20, 0.003, NULL), 1.05), BENCH_MISS);
    ramp20(v, 1.040, 0.001); /* median 1.0495, interval [1.040, 1.059] */
    bench_interval x = interval_of(v, 20, 0.003, NULL);
    assert_true(x.mid < 1.05);
    assert_int_equal(judge_ratio(x, 1.05), BENCH_UNSURE);
    /* On the limit itself: the whole interval must meet it for PASS, none of it for MISS. */
    assert_int_equal(bench_judge((bench_interval){1.00, 1.02, 1.05}, 1.05, 0, 0), BENCH_PASS);
    assert_int_equal(bench_judge((bench_interval){1.05, 1.06, 1.07}, 1.05, 0, 0), BENCH_UNSURE);
    assert_int_equal(bench_judge((bench_interval){1.0501, 1.06, 1.07}, 1.05, 0, 0), BENCH_MISS);
}

/* --quick's 8 rounds: the interval is the whole range (ranks 1 and 8, 99.2%), so a range that
 * straddles the limit reads UNSURE though the median is well under it. */
static void test_quick_8_rounds_unsure(void **state) {
    (void)state;
    const double v[8] = {1.03, 1.00, 1.06, 1.02, 1.04, 1.01, 1.03, 1.02};
    double cover = 0;
    bench_interval raw = interval_of(v, 8, -1, &cover);
    assert_close(raw.lo, 1.00, EPS);
    assert_close(raw.hi, 1.06, EPS);
    assert_close(raw.mid, 1.025, EPS);
    assert_close(cover, 1 - 2.0 / 256, EPS);
    bench_interval x = interval_of(v, 8, 0.003, NULL);
    assert_close(x.hi, 1.06 + 0.005 * 1.025, EPS);
    assert_true(x.mid < 1.05);
    assert_int_equal(judge_ratio(x, 1.05), BENCH_UNSURE);
    /* The same median from 20 rounds as tight as the 8 are loose would decide. */
    double t[20];
    ramp20(t, 1.0155, 0.001); /* median 1.025 */
    assert_int_equal(judge_ratio(interval_of(t, 20, 0.003, NULL), 1.05), BENCH_PASS);
}

/* Fewer than 6 rounds: no pair of ranks reaches 95%, so the whole range. */
static void test_few_rounds_whole_range(void **state) {
    (void)state;
    const double v[5] = {1.02, 0.99, 1.04, 1.00, 1.01};
    bench_interval raw = interval_of(v, 5, -1, NULL);
    assert_close(raw.lo, 0.99, EPS);
    assert_close(raw.hi, 1.04, EPS);
    assert_close(raw.mid, 1.01, EPS);
}

/* A profiled setting whose interval lies wholly below 1.0 against its reference: SUSPECT. */
static void test_suspect_interval_below_one(void **state) {
    (void)state;
    double v[20];
    ramp20(v, 0.960, 0.001); /* median 0.9695 (above 0.95), interval [0.960, 0.979] */
    bench_interval x = interval_of(v, 20, 0.003, NULL);
    assert_true(x.hi < 1 && x.mid > BENCH_SKEWED_RATIO);
    assert_int_equal(bench_ratio_check_of(x), BENCH_RATIO_SUSPECT);
    assert_int_equal(judge_ratio(x, 1.05), BENCH_SUSPECT); /* not the PASS its bounds give */
    /* Just around 1.0: an honest figure. */
    ramp20(v, 0.990, 0.001);
    x = interval_of(v, 20, 0.003, NULL);
    assert_int_equal(bench_ratio_check_of(x), BENCH_RATIO_OK);
    assert_int_equal(judge_ratio(x, 1.05), BENCH_PASS);
}

/* A median below 0.95 whose interval reaches above 1.0: skewed, UNSURE whatever its bounds say,
 * never PASS; wholly below 1.0 as well, SUSPECT. */
static void test_skewed_below_095_wide(void **state) {
    (void)state;
    const double v[20] = {1.10, 0.80, 1.05, 0.81, 0.93, 1.09, 0.82, 1.00, 0.83, 1.02,
                          0.84, 1.06, 0.85, 1.03, 0.86, 1.07, 0.87, 0.95, 0.90, 1.08};
    bench_interval x = interval_of(v, 20, 0.003, NULL);
    assert_close(x.mid, 0.94, EPS);
    assert_true(x.hi > 1.0);
    assert_int_equal(bench_judge(x, 1.05, BENCH_RATIO_OK, 0), BENCH_UNSURE); /* the bounds alone */
    assert_int_equal(bench_ratio_check_of(x), BENCH_RATIO_SKEWED);
    assert_int_equal(judge_ratio(x, 1.05), BENCH_UNSURE);
    /* Under a limit its whole interval meets (1.10 >= 1.08), still not a PASS. */
    assert_int_equal(bench_judge(x, 1.10, BENCH_RATIO_OK, 0), BENCH_PASS);
    assert_int_equal(judge_ratio(x, 1.10), BENCH_UNSURE);
    char note[200];
    bench_check_note(note, sizeof note, BENCH_RATIO_SKEWED, "its reference");
    assert_non_null(strstr(note, "skewed: median below 0.95x its reference, within the noise"));
    /* The same rounds 0.06 lower: wholly below 1.0, SUSPECT, before the measurability cutoff
     * too. */
    double low[20];
    for (int i = 0; i < 20; i++)
        low[i] = v[i] - 0.06;
    x = interval_of(low, 20, 0.003, NULL);
    assert_true(x.hi < 1.0);
    assert_int_equal(judge_ratio(x, 1.05), BENCH_SUSPECT);
    assert_int_equal(bench_judge(x, 1.05, BENCH_RATIO_SUSPECT, 0.001), BENCH_SUSPECT);
    bench_check_note(note, sizeof note, BENCH_RATIO_SUSPECT, "its reference");
    assert_non_null(strstr(note, "SUSPECT: faster than its reference beyond the noise"));
}

/* ns/op (an interval in ns): UNSURE when its half-width is over the cutoff (bench_torch.c:
 * 100 ns/op), judged on its bounds otherwise. */
static void test_ns_op_cutoff(void **state) {
    (void)state;
    bench_interval wide = {20, 80, 260}; /* half-width 120 */
    assert_int_equal(bench_judge(wide, 400, 0, 100), BENCH_UNSURE);
    bench_interval edge = {60, 100, 260}; /* half-width exactly 100: measurable */
    assert_int_equal(bench_judge(edge, 400, 0, 100), BENCH_PASS);
    assert_int_equal(bench_judge(edge, 150, 0, 100), BENCH_UNSURE);
    bench_interval tight = {140, 150, 160};
    assert_int_equal(bench_judge(tight, 400, 0, 100), BENCH_PASS);
    assert_int_equal(bench_judge(tight, 130, 0, 100), BENCH_MISS);
    /* No cutoff (max_half 0): bounds only. */
    assert_int_equal(bench_judge(wide, 400, 0, 0), BENCH_PASS);
}

/* The copies' rotation (bench_copy_plan): rounds 0..K*K-1 pair every mode copy with every opt copy
 * exactly once; the [A/A] never runs the baseline's copy; one copy (K = 1) keeps a second mode
 * copy for the [A/A]. */
static void test_copy_rotation(void **state) {
    (void)state;
    for (int k = 1; k <= BENCH_MAX_COPIES; k++) {
        bench_copy_plan p = bench_copy_plan_of(k);
        assert_int_equal(p.k, k);
        assert_int_equal(p.m, k < 2 ? 2 : k);
        int seen[BENCH_MAX_COPIES][BENCH_MAX_COPIES] = {{0}};
        for (int r = 0; r < k * k; r++) {
            int mine = bench_copy_mine(p, r), opt = bench_copy_opt(p, r), aa = bench_copy_aa(p, r);
            assert_true(mine >= 0 && mine < p.k && opt >= 0 && opt < p.k);
            assert_true(aa >= 0 && aa < p.m && aa != mine);
            seen[mine][opt]++;
        }
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                assert_int_equal(seen[i][j], 1);
    }
    /* K = 3 over the full run's first rounds, as bench/README.md gives them. */
    bench_copy_plan three = bench_copy_plan_of(3);
    const int mine[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2}, opt[9] = {0, 1, 2, 1, 2, 0, 2, 0, 1};
    for (int r = 0; r < 9; r++) {
        assert_int_equal(bench_copy_mine(three, r), mine[r]);
        assert_int_equal(bench_copy_opt(three, r), opt[r]);
        assert_int_equal(bench_copy_aa(three, r), (mine[r] + 1) % 3);
    }
}

/* Quantiles interpolate linearly between order statistics, whatever the samples' order, and leave
 * the caller's array as it was (bench_quantile sorts a copy). */
static void test_quantiles(void **state) {
    (void)state;
    const double v[5] = {40, 10, 30, 50, 20}; /* sorted: 10 20 30 40 50 */
    assert_close(bench_quantile(v, 5, 0), 10, EPS);
    assert_close(bench_quantile(v, 5, 1), 50, EPS);
    assert_close(bench_median(v, 5), 30, EPS);
    assert_close(bench_quantile(v, 5, 0.25), 20, EPS);
    assert_close(bench_quantile(v, 5, 0.1), 14, EPS); /* 0.4 of the way from 10 to 20 */
    assert_close(v[0], 40, EPS);
    const double even[4] = {4, 1, 3, 2};
    assert_close(bench_median(even, 4), 2.5, EPS);
    assert_close(bench_median(even, 0), 0, EPS);
    double sortme[3] = {3, 1, 2};
    assert_close(bench_quantile_inplace(sortme, 3, 0.5), 2, EPS);
    assert_close(sortme[0], 1, EPS); /* sorted in place */
}

/* The median's interval: 20 samples give ranks 6 and 15 with coverage 1 - 2 P(B(20, 1/2) < 6)
 * = 0.958611...; 8 give the whole range at 1 - 2^-7; one sample, itself with coverage 0. */
static void test_median_interval(void **state) {
    (void)state;
    double v[20];
    for (int i = 0; i < 20; i++)
        v[i] = (double)(20 - i); /* 20, 19, ..., 1 */
    double cover = -1;
    bench_interval r = bench_median_ci(v, 20, &cover);
    assert_close(r.lo, 6, EPS);
    assert_close(r.hi, 15, EPS);
    assert_close(r.mid, 10.5, EPS);
    /* P(B < 6) = (1 + 20 + 190 + 1140 + 4845 + 15504) / 2^20 = 21700 / 1048576 */
    assert_close(cover, 1 - 2 * 21700.0 / 1048576.0, EPS);
    r = bench_median_ci(v, 8, &cover); /* 20..13 */
    assert_close(r.lo, 13, EPS);
    assert_close(r.hi, 20, EPS);
    assert_close(cover, 1 - 2.0 / 256.0, EPS);
    r = bench_median_ci(v, 1, &cover);
    assert_close(r.lo, 20, EPS);
    assert_close(r.hi, 20, EPS);
    assert_close(cover, 0, EPS);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_quantiles),
        cmocka_unit_test(test_median_interval),
        cmocka_unit_test(test_interval_20_rounds_floor),
        cmocka_unit_test(test_interval_aa_spread),
        cmocka_unit_test(test_pass_miss_unsure),
        cmocka_unit_test(test_quick_8_rounds_unsure),
        cmocka_unit_test(test_few_rounds_whole_range),
        cmocka_unit_test(test_suspect_interval_below_one),
        cmocka_unit_test(test_skewed_below_095_wide),
        cmocka_unit_test(test_ns_op_cutoff),
        cmocka_unit_test(test_copy_rotation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
