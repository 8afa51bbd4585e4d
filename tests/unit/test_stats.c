/* test_stats.c: per-call time statistics (Welford), % Total's bases, and the columns that show
 * them (Mean, Min, Max, Std, % Total) in the tree view and the CSV.
 *
 * Every expected number is worked out by hand in a comment beside it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "golden.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/columns.h"
#include "model/node_info.h"
#include "model/tree.h"
#include "report/json_report.h"
#include "report/render.h"

/* Helpers -------------------------------------------------------------------------------------- */

static lp_welford welford_of(const uint64_t *xs, size_t n) {
    lp_welford w;
    memset(&w, 0, sizeof w);
    for (size_t i = 0; i < n; i++)
        lp_welford_add(&w, xs[i]);
    return w;
}

static void assert_near(double actual, double expected, double rel) {
    double tol = rel * fmax(fabs(expected), 1.0);
    if (fabs(actual - expected) > tol)
        fail_msg("%.17g is not within %.3g of %.17g", actual, tol, expected);
}

static int32_t add(lp_tree *t, const char *path, const char *cls, int32_t parent, int kind) {
    int idx = lp_tree_add(t, path, cls, parent);
    assert_true(idx >= 0);
    t->nodes[idx].kind = kind;
    return idx;
}

/* Calls with these inclusive durations (ns): calls, total and the Welford accumulator agree, as
 * the collector leaves them. Self is the total unless set afterwards. */
static void ran(lp_tree *t, int32_t m, const uint64_t *ns, size_t n) {
    lp_figures *f = &t->nodes[m].fig;
    f->calls = n;
    f->time = welford_of(ns, n);
    f->total_ns = 0;
    for (size_t i = 0; i < n; i++)
        f->total_ns += ns[i];
    f->self_ns = f->total_ns;
}

static char *render_to_string(const lp_tree *t, const lp_render_opts *ro,
                              int (*fn)(const lp_tree *, const lp_render_opts *, FILE *)) {
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fn(t, ro, f), LP_OK);
    return golden_take(f);
}

/* Welford ---------------------------------------------------------------------------------------
 */

static void welford_of_four_durations_has_exact_mean_extremes_and_sample_std(void **state) {
    (void)state;
    static const uint64_t xs[] = {10, 20, 30, 40};
    lp_welford w = welford_of(xs, 4);
    assert_int_equal(w.n, 4);
    /* Every step is exact in binary: means 10, 15, 20, 25; m2 0, 50, 200, 500. */
    assert_true(w.mean == 25.0);
    assert_true(w.m2 == 500.0); /* (-15)^2 + (-5)^2 + 5^2 + 15^2 */
    assert_int_equal(w.min, 10);
    assert_int_equal(w.max, 40);
    assert_true(lp_welford_std(&w) == sqrt(500.0 / 3.0)); /* sample: n - 1 = 3 */
}

static void welford_of_one_sample_has_no_spread(void **state) {
    (void)state;
    static const uint64_t xs[] = {1234567};
    lp_welford w = welford_of(xs, 1);
    assert_int_equal(w.n, 1);
    assert_true(w.mean == 1234567.0);
    assert_true(w.m2 == 0.0);
    assert_int_equal(w.min, 1234567);
    assert_int_equal(w.max, 1234567);
    assert_true(lp_welford_std(&w) == 0.0);
}

static void welford_of_no_sample_is_all_zero(void **state) {
    (void)state;
    lp_welford w = welford_of(NULL, 0);
    assert_int_equal(w.n, 0);
    assert_true(w.mean == 0.0 && w.m2 == 0.0);
    assert_int_equal(w.min, 0);
    assert_int_equal(w.max, 0);
    assert_true(lp_welford_std(&w) == 0.0);
}

/* What threads do at the end of a run: each keeps its own accumulator, then they merge. */
static void merging_two_accumulators_equals_adding_every_sample(void **state) {
    (void)state;
    static const uint64_t xs[] = {120, 7, 3000, 45, 45, 999, 1, 250000, 31, 64, 8, 77777};
    const size_t n = sizeof xs / sizeof xs[0];
    lp_welford all = welford_of(xs, n);
    for (size_t split = 0; split <= n; split++) {
        lp_welford a = welford_of(xs, split), b = welford_of(xs + split, n - split);
        lp_welford_merge(&a, &b);
        assert_int_equal(a.n, all.n);
        assert_near(a.mean, all.mean, 1e-9);
        assert_near(a.m2, all.m2, 1e-9);
        assert_int_equal(a.min, 1);
        assert_int_equal(a.max, 250000);
        assert_near(lp_welford_std(&a), lp_welford_std(&all), 1e-9);
    }
}

static void merging_into_or_from_an_empty_accumulator_copies_the_other(void **state) {
    (void)state;
    static const uint64_t xs[] = {5, 9, 11};
    lp_welford full = welford_of(xs, 3), empty = welford_of(NULL, 0);

    lp_welford into = empty;
    lp_welford_merge(&into, &full); /* into empty: becomes the other, bit for bit */
    assert_memory_equal(&into, &full, sizeof full);

    lp_welford from = full;
    lp_welford_merge(&from, &empty); /* from empty: unchanged */
    assert_memory_equal(&from, &full, sizeof full);

    lp_welford both = empty;
    lp_welford_merge(&both, &empty);
    assert_int_equal(both.n, 0);
    assert_true(lp_welford_std(&both) == 0.0);
}

/* 1e12 ns (17 minutes) per call, differing by a few ns: the textbook case where the naive
 * sum-of-squares formula cancels catastrophically. Deviations from 1e12 + 10 are -6, -3, 3, 6:
 * m2 = 90, sample variance 30. */
static void large_durations_keep_an_accurate_variance(void **state) {
    (void)state;
    const uint64_t base = 1000000000000ull;
    const uint64_t xs[] = {base + 4, base + 7, base + 13, base + 16};
    lp_welford w = welford_of(xs, 4);
    assert_true(w.mean == 1000000000010.0);
    assert_near(w.m2, 90.0, 1e-9);
    assert_near(lp_welford_std(&w) * lp_welford_std(&w), 30.0, 1e-9);
    assert_int_equal(w.min, base + 4);
    assert_int_equal(w.max, base + 16);

    /* The naive formula on the same doubles: the sum of squares is near 4e24, where doubles are
     * 2^29 apart, so a variance of 30 is lost entirely (it comes out 0 here). This is why the tree
     * keeps Welford's terms. */
    double sum = 0, sumsq = 0;
    for (size_t i = 0; i < 4; i++) {
        sum += (double)xs[i];
        sumsq += (double)xs[i] * (double)xs[i];
    }
    double naive = (sumsq - sum * sum / 4) / 3;
    assert_true(fabs(naive - 30.0) > 10.0);

    /* Merging halves of large values stays accurate too. */
    lp_welford a = welford_of(xs, 2), b = welford_of(xs + 2, 2);
    lp_welford_merge(&a, &b);
    assert_near(a.m2, 90.0, 1e-9);
    assert_true(a.mean == 1000000000010.0);
}

/* % Total's bases -------------------------------------------------------------------------------
 */

/* Without regions every row is a share of the root's total, op rows included. */
static void shares_of_a_module_tree_are_of_the_root_total(void **state) {
    (void)state;
    static const char *const ops[] = {"aten::add"};
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t root = add(&t, "", "Net", -1, LP_NODE_MODULE);
    int32_t a = add(&t, "a", "Block", root, LP_NODE_MODULE);
    int32_t a1 = add(&t, "a.x", "Conv2d", a, LP_NODE_MODULE);
    int32_t b = add(&t, "b", "Linear", root, LP_NODE_MODULE);
    t.nodes[root].fig.total_ns = 1000;
    t.nodes[a].fig.total_ns = 600;
    t.nodes[a1].fig.total_ns = 500;
    t.nodes[b].fig.total_ns = 300;
    t.op_names = (const char **)ops;
    int32_t op = lp_tree_add_op(&t, a1, -1, 0, -1);
    assert_true(op >= 0);
    t.ops[op].fig.total_ns = 50;
    lp_tree_set_shares(&t);
    for (size_t i = 0; i < t.n_nodes; i++)
        assert_int_equal(t.nodes[i].fig.share_base_ns, 1000);
    assert_int_equal(t.ops[op].fig.share_base_ns, 1000);

    lp_node_info info;
    assert_int_equal(lp_tree_node_info(&t, (size_t)a1, &info, "test"), LP_OK);
    assert_true(info.share == 0.5);
    assert_int_equal(info.kind, LP_NODE_MODULE);
    assert_int_equal(lp_tree_node_info(&t, (size_t)root, &info, "test"), LP_OK);
    assert_true(info.share == 1.0);
    lp_tree_free(&t);
}

/* session 1000 > context train 800 > region step 600 > region fwd 400 > module net 300, and
 * context eval 200 > region val 150: rows are shares of their context; a context (and the
 * session) of the session's total. */
static void shares_with_regions_are_of_the_enclosing_context_total(void **state) {
    (void)state;
    static const char *const ops[] = {"aten::mm"};
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t session = add(&t, "", "session", -1, LP_NODE_SESSION);
    int32_t train = add(&t, "train", "context", session, LP_NODE_CONTEXT);
    int32_t step = add(&t, "train.step", "region", train, LP_NODE_REGION);
    int32_t fwd = add(&t, "train.step.fwd", "region", step, LP_NODE_REGION);
    int32_t net = add(&t, "train.step.fwd.net", "Net", fwd, LP_NODE_MODULE);
    int32_t eval = add(&t, "eval", "context", session, LP_NODE_CONTEXT);
    int32_t val = add(&t, "eval.val", "region", eval, LP_NODE_REGION);
    static const uint64_t totals[] = {1000, 800, 600, 400, 300, 200, 150};
    for (size_t i = 0; i < 7; i++)
        t.nodes[i].fig.total_ns = totals[i];
    t.op_names = (const char **)ops;
    int32_t op = lp_tree_add_op(&t, net, -1, 0, -1);
    assert_true(op >= 0);
    t.ops[op].fig.total_ns = 30;
    lp_tree_set_shares(&t);

    assert_int_equal(t.nodes[session].fig.share_base_ns, 1000);
    assert_int_equal(t.nodes[train].fig.share_base_ns, 1000);
    assert_int_equal(t.nodes[eval].fig.share_base_ns, 1000);
    assert_int_equal(t.nodes[step].fig.share_base_ns, 800);
    assert_int_equal(t.nodes[fwd].fig.share_base_ns, 800);
    assert_int_equal(t.nodes[net].fig.share_base_ns, 800);
    assert_int_equal(t.ops[op].fig.share_base_ns, 800);
    assert_int_equal(t.nodes[val].fig.share_base_ns, 200);

    lp_node_info info;
    assert_int_equal(lp_tree_node_info(&t, (size_t)net, &info, "test"), LP_OK);
    assert_true(info.share == 0.375); /* 300 / 800 */
    assert_int_equal(lp_tree_node_info(&t, (size_t)val, &info, "test"), LP_OK);
    assert_true(info.share == 0.75); /* 150 / 200 */
    assert_int_equal(info.kind, LP_NODE_REGION);
    assert_int_equal(lp_tree_node_info(&t, (size_t)train, &info, "test"), LP_OK);
    assert_true(info.share == 0.8); /* 800 / 1000 */
    assert_int_equal(info.kind, LP_NODE_CONTEXT);
    assert_int_equal(lp_tree_node_info(&t, (size_t)session, &info, "test"), LP_OK);
    assert_int_equal(info.kind, LP_NODE_SESSION);
    lp_tree_free(&t);
}

static void node_info_carries_the_per_call_statistics(void **state) {
    (void)state;
    static const uint64_t xs[] = {10, 20, 30, 40};
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 2;
    int32_t root = add(&t, "", "Net", -1, LP_NODE_MODULE);
    int32_t idle = add(&t, "idle", "Dropout", root, LP_NODE_MODULE);
    ran(&t, root, xs, 4);
    lp_tree_set_shares(&t);
    lp_node_info info;
    assert_int_equal(lp_tree_node_info(&t, (size_t)root, &info, "test"), LP_OK);
    assert_true(info.time_mean_ns == 25.0);
    assert_true(info.time_std_ns == sqrt(500.0 / 3.0));
    assert_int_equal(info.time_min_ns, 10);
    assert_int_equal(info.time_max_ns, 40);
    assert_true(info.share == 1.0);
    /* Never ran: no statistics, and a share of 0 (0 of the root's 100). */
    assert_int_equal(lp_tree_node_info(&t, (size_t)idle, &info, "test"), LP_OK);
    assert_true(info.time_mean_ns == 0.0 && info.time_std_ns == 0.0 && info.share == 0.0);
    assert_int_equal(info.time_min_ns, 0);
    assert_int_equal(info.time_max_ns, 0);
    lp_tree_free(&t);
}

/* Columns ---------------------------------------------------------------------------------------
 */

static const lp_column *col(const char *id) {
    const lp_column *c = lp_column_find(id);
    if (!c) fail_msg("no column '%s'", id);
    return c;
}

/* The value a column's getter gives, or NAN for a blank cell. */
static double value(const char *id, const lp_figures *fig) {
    double v = -1.0;
    int has = col(id)->get(fig, 2.0, &v);
    assert_true(has || v == 0.0); /* a blank leaves 0, never a stale value */
    return has ? v : NAN;
}

static void stat_columns_show_per_call_values_independent_of_iterations(void **state) {
    (void)state;
    static const uint64_t xs[] = {10, 20, 30, 40};
    lp_figures f;
    memset(&f, 0, sizeof f);
    f.calls = 4;
    f.total_ns = 100;
    f.time = welford_of(xs, 4);
    f.share_base_ns = 202;
    assert_true(value("mean", &f) == 25.0);
    assert_true(value("min", &f) == 10.0);
    assert_true(value("max", &f) == 40.0);
    assert_true(value("std", &f) == sqrt(500.0 / 3.0));
    assert_true(value("share", &f) == 100.0 * 100.0 / 202.0);

    char buf[64];
    col("share")->fmt(value("share", &f), LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "49.50%"); /* 49.504950... */
    f.total_ns = 10001;
    f.share_base_ns = 20200;
    col("share")->fmt(value("share", &f), LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "49.51%"); /* 49.509900... */
    col("mean")->fmt(value("mean", &f), LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "0.025us"); /* like every time column */
    col("std")->fmt(value("std", &f), LP_UNITS_MS, buf, sizeof buf);
    assert_string_equal(buf, "0.000ms");

    for (size_t i = 0; i < 5; i++) {
        static const char *const ids[] = {"mean", "min", "max", "std", "share"};
        const lp_column *c = col(ids[i]);
        assert_int_equal(c->group, LP_COLGRP_TIME);
        assert_int_equal(c->needs, 0);
        assert_int_equal(c->is_default, 0);
    }
}

static void stat_columns_are_blank_without_calls_or_a_base(void **state) {
    (void)state;
    lp_figures f;
    memset(&f, 0, sizeof f);
    /* No calls: every statistic is blank, not 0. */
    assert_true(isnan(value("mean", &f)));
    assert_true(isnan(value("min", &f)));
    assert_true(isnan(value("max", &f)));
    assert_true(isnan(value("std", &f)));
    assert_true(isnan(value("share", &f))); /* and no base either */

    /* One call: mean, min and max are that call; a sample std needs two. */
    lp_welford_add(&f.time, 700);
    f.calls = 1;
    f.total_ns = 700;
    assert_true(value("mean", &f) == 700.0);
    assert_true(value("min", &f) == 700.0);
    assert_true(value("max", &f) == 700.0);
    assert_true(isnan(value("std", &f)));
    assert_true(isnan(value("share", &f))); /* shares never set */
    f.share_base_ns = 1400;
    assert_true(value("share", &f) == 50.0);

    /* A base but no time (a module that never ran in a context that did): 0%, not blank. */
    lp_figures idle;
    memset(&idle, 0, sizeof idle);
    idle.share_base_ns = 1400;
    assert_true(value("share", &idle) == 0.0);
}

static void default_columns_leave_the_statistics_out(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    add(&t, "", "Net", -1, LP_NODE_MODULE);
    const lp_column *cols[LP_MAX_COLUMNS];
    size_t n = 0;
    assert_int_equal(lp_columns_select(&t, NULL, 0, cols, &n), LP_OK);
    assert_int_equal(n, 3); /* self_cpu, cpu_total, calls */
    for (size_t i = 0; i < n; i++)
        assert_true(strcmp(cols[i]->id, "mean") && strcmp(cols[i]->id, "share"));
    static const char *const ids[] = {"share", "mean", "std", "min", "max"};
    assert_int_equal(lp_columns_select(&t, ids, 5, cols, &n), LP_OK);
    assert_int_equal(n, 5);
    assert_string_equal(cols[0]->header, "% Total");
    assert_string_equal(cols[1]->header, "Mean");
    assert_string_equal(cols[2]->header, "Std");
    assert_string_equal(cols[3]->header, "Min");
    assert_string_equal(cols[4]->header, "Max");
    lp_tree_free(&t);
}

/* Rendered ----------------------------------------------------------------------------------------
 */

/* Two iterations (ns per call):
 *   Net   2 calls 1000000, 1020000: total 2020000, mean 1.010ms, std 14.142us (m2 2e8), 100.00%
 *   conv  2 calls  500000,  500100: total 1000100, mean 500.050us, std 0.071us (m2 5000), 49.51%
 *   relu  4 calls 100000 .. 130000: total  460000, mean 115us, std 12.910us (m2 5e8), 22.77%
 *   head  1 call   300000:          total  300000, no std, 14.85%
 *   unused never ran: blank.
 * Net's self is what its children leave: 2020000 - 1000100 - 460000 - 300000 = 259900. */
static void stats_tree(lp_tree *t) {
    static const uint64_t net[] = {1000000, 1020000}, conv[] = {500000, 500100},
                          relu[] = {100000, 110000, 120000, 130000}, head[] = {300000};
    lp_tree_init(t);
    t->iterations = 2;
    int32_t root = add(t, "", "Net", -1, LP_NODE_MODULE);
    ran(t, root, net, 2);
    ran(t, add(t, "conv", "Conv2d", root, LP_NODE_MODULE), conv, 2);
    ran(t, add(t, "relu", "ReLU", root, LP_NODE_MODULE), relu, 4);
    ran(t, add(t, "head", "Linear", root, LP_NODE_MODULE), head, 1);
    add(t, "unused", "Dropout", root, LP_NODE_MODULE);
    t->nodes[root].fig.self_ns = 259900;
    lp_tree_set_shares(t);
}

static const char *const stats_columns[] = {"cpu_total", "calls", "mean", "std",
                                            "min",       "max",   "share"};

static void tree_view_shows_mean_std_extremes_and_share(void **state) {
    (void)state;
    lp_tree t;
    stats_tree(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = stats_columns;
    ro.n_columns = 7;
    char *text = render_to_string(&t, &ro, lp_render_tree);
    assert_golden("render_stats.txt", text);
    free(text);
    lp_tree_free(&t);
}

/* --sort mean: conv (500us) > head (300us) > relu (115us), the module that never ran last. Sorting
 * by std puts head (one call: blank) after relu. */
static void sort_by_a_statistic_orders_siblings_and_puts_blanks_last(void **state) {
    (void)state;
    lp_tree t;
    stats_tree(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = stats_columns + 2; /* mean, std, min, max, share */
    ro.n_columns = 5;
    ro.sort = "mean";
    char *text = render_to_string(&t, &ro, lp_render_tree);
    assert_golden("render_stats_sort_mean.txt", text);
    free(text);

    ro.sort = "std";
    text = render_to_string(&t, &ro, lp_render_tree);
    const char *relu = strstr(text, "relu"), *head = strstr(text, "head");
    const char *conv = strstr(text, "conv");
    assert_true(relu && head && conv && relu < conv && conv < head);
    free(text);
    lp_tree_free(&t);
}

static int csv(const lp_tree *t, const lp_render_opts *ro, FILE *out) {
    return lp_render_csv(t, ro, out);
}

static void csv_has_the_statistics_unformatted_with_their_units(void **state) {
    (void)state;
    lp_tree t;
    stats_tree(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = stats_columns + 2;
    ro.n_columns = 5;
    char *text = render_to_string(&t, &ro, csv);
    assert_string_equal(text,
                        "path,kind,name,class,depth,mean_ns,std_ns,min_ns,max_ns,share_pct\r\n"
                        ",module,Net,Net,0,1010000,14142.136,1000000,1020000,100\r\n"
                        "conv,module,conv,Conv2d,1,500050,70.711,500000,500100,49.510\r\n"
                        "relu,module,relu,ReLU,1,115000,12909.944,100000,130000,22.772\r\n"
                        "head,module,head,Linear,1,300000,,300000,300000,14.851\r\n"
                        "unused,module,unused,Dropout,1,,,,,\r\n");
    free(text);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(welford_of_four_durations_has_exact_mean_extremes_and_sample_std),
        cmocka_unit_test(welford_of_one_sample_has_no_spread),
        cmocka_unit_test(welford_of_no_sample_is_all_zero),
        cmocka_unit_test(merging_two_accumulators_equals_adding_every_sample),
        cmocka_unit_test(merging_into_or_from_an_empty_accumulator_copies_the_other),
        cmocka_unit_test(large_durations_keep_an_accurate_variance),
        cmocka_unit_test(shares_of_a_module_tree_are_of_the_root_total),
        cmocka_unit_test(shares_with_regions_are_of_the_enclosing_context_total),
        cmocka_unit_test(node_info_carries_the_per_call_statistics),
        cmocka_unit_test(stat_columns_show_per_call_values_independent_of_iterations),
        cmocka_unit_test(stat_columns_are_blank_without_calls_or_a_base),
        cmocka_unit_test(default_columns_leave_the_statistics_out),
        cmocka_unit_test(tree_view_shows_mean_std_extremes_and_share),
        cmocka_unit_test(sort_by_a_statistic_orders_siblings_and_puts_blanks_last),
        cmocka_unit_test(csv_has_the_statistics_unformatted_with_their_units),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
