/* test_columns.c: the column table: values and formats of the per-call statistics and % Total,
 * blanks, and the default set for what a tree recorded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "report/columns.h"
#include "model/tree.h"
#include "tree_fixtures.h"

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
    f.time = tf_welford_of(xs, 4);
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

/* CUDA time: blank on a row that is no call and holds none (the "(self)" and Total rows); shown
 * on a container, which is never called but holds its items' kernels (a ModuleList: on the H200
 * its row read blank beside a CPU total while its parent's CUDA total was all its items'). */
static void cuda_columns_show_a_container_and_leave_a_time_only_row_blank(void **state) {
    (void)state;
    lp_figures f;
    memset(&f, 0, sizeof f);
    f.self_ns = f.total_ns = 3000; /* a "(self)" row: CPU time only */
    assert_true(isnan(value("self_cuda", &f)));
    assert_true(isnan(value("cuda_total", &f)));
    lp_figures list;
    memset(&list, 0, sizeof list);
    list.total_ns = 6000;
    list.cuda_total_ns = 60000; /* its items' kernels over the 2 forwards value() divides by */
    assert_true(value("cuda_total", &list) == 30000.0);
    assert_true(value("self_cuda", &list) == 0.0);
    lp_figures call;
    memset(&call, 0, sizeof call);
    call.calls = 1; /* a call that launched nothing: 0, not blank */
    assert_true(value("self_cuda", &call) == 0.0);
    assert_true(value("cuda_total", &call) == 0.0);
}

static void default_columns_leave_the_statistics_out(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
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

static void default_columns_follow_what_the_tree_recorded(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    const lp_column *cols[LP_MAX_COLUMNS];
    size_t n;
    assert_int_equal(lp_columns_select(&t, NULL, 0, cols, &n), LP_OK);
    assert_int_equal(n, 3);
    assert_string_equal(cols[0]->id, "self_cpu");
    assert_string_equal(cols[1]->id, "cpu_total");
    assert_string_equal(cols[2]->id, "calls");
    t.has_memory[LP_DEV_CUDA] = 1;
    assert_int_equal(lp_columns_select(&t, NULL, 0, cols, &n), LP_OK);
    assert_int_equal(n, 6);
    assert_string_equal(cols[2]->id, "self_cuda_mem");
    assert_string_equal(cols[4]->id, "peak_cuda_mem");
    assert_string_equal(cols[5]->id, "calls");
    lp_tree_free(&t);
}

/* What a module is: counts with thousands separators, FLOPs with SI prefixes per call, throughput
 * over CPU time or, when kernels were timed, over CUDA time, and the output shape as text. */
static void model_figure_columns(void **state) {
    (void)state;
    lp_figures f;
    memset(&f, 0, sizeof f);
    char buf[64];
    assert_true(isnan(value("params", &f))); /* not known: blank */
    f.size = (lp_module_size){1, 9408, 11689512, 37632, 46796608};
    assert_true(value("params", &f) == 11689512.0);
    assert_true(value("self_params", &f) == 9408.0);
    col("params")->fmt(value("params", &f), LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "11,689,512");
    col("params")->fmt(512.0, LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "512");
    col("params")->fmt(1000.0, LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "1,000");
    assert_true(value("param_bytes", &f) == 46796608.0);

    assert_true(isnan(value("flops", &f))); /* no call: blank */
    f.calls = 2;
    f.self_ns = 1000;
    f.flops_self = 2 * 236027904ull;
    f.flops_total = 2 * 300000000ull;
    assert_true(value("self_flops", &f) == 236027904.0);
    assert_true(value("flops", &f) == 300000000.0);
    col("flops")->fmt(value("self_flops", &f), LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "236.03 M");
    col("flops")->fmt(999.0, LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "999");
    /* The subtree's FLOPs over the subtree's time: a parent's rate is its children's work's. */
    f.total_ns = 5000;
    assert_true(value("gflops_per_s", &f) == 2.0 * 300000000.0 / 5000.0); /* over CPU time */
    f.cuda_self_ns = 4000;
    f.cuda_total_ns = 8000;
    assert_true(value("gflops_per_s", &f) == 2.0 * 300000000.0 / 8000.0); /* over kernel time */
    col("gflops_per_s")->fmt(118.013952, LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "118.01");

    assert_true(isnan(value("out_shape", &f)));
    const int64_t dims[] = {1, 64, 112, 112};
    lp_out_shape_add(&f.out, dims, 4);
    assert_true(value("out_shape", &f) == 1.0 * 64 * 112 * 112); /* sorts by elements */
    lp_column_format(col("out_shape"), &f, 0.0, LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "[1, 64, 112, 112]");
    const int64_t other[] = {1, 64, 56, 56};
    lp_out_shape_add(&f.out, other, 4);
    lp_column_format(col("out_shape"), &f, 0.0, LP_UNITS_AUTO, buf, sizeof buf);
    assert_string_equal(buf, "[1, 64, 112, 112]*"); /* the first call's, marked */
    char small[6];
    assert_int_equal(
        lp_column_format(col("out_shape"), &f, 0.0, LP_UNITS_AUTO, small, sizeof small),
        18); /* snprintf's contract: the length it needs */
    assert_string_equal(small, "[1, 6");
}

/* A column or sort key whose figure the run will not record is refused before it, naming the
 * option that records it; what is recorded passes. */
static void columns_a_run_will_not_record_are_refused(void **state) {
    (void)state;
    const char *const ids[] = {"self_cpu", "peak_cpu_mem"};
    assert_int_equal(lp_columns_check_recorded(ids, 2, NULL, 0), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(),
                        "column 'peak_cpu_mem' is recorded only with --memory (memory: true)");
    assert_int_equal(lp_columns_check_recorded(ids, 2, NULL, LP_NEED_CPU_MEM), LP_OK);
    assert_int_equal(lp_columns_check_recorded(NULL, 0, "cuda_total", LP_NEED_CPU_MEM),
                     LP_ERR_INVALID);
    assert_non_null(
        strstr(lp_error_last(), "sort key 'cuda_total' is recorded only with --device cuda"));
    assert_int_equal(lp_columns_check_recorded(NULL, 0, "self_cpu", 0), LP_OK);
    assert_int_equal(lp_columns_check_recorded(NULL, 0, NULL, 0), LP_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(columns_a_run_will_not_record_are_refused),
        cmocka_unit_test(stat_columns_show_per_call_values_independent_of_iterations),
        cmocka_unit_test(model_figure_columns),
        cmocka_unit_test(stat_columns_are_blank_without_calls_or_a_base),
        cmocka_unit_test(cuda_columns_show_a_container_and_leave_a_time_only_row_blank),
        cmocka_unit_test(default_columns_leave_the_statistics_out),
        cmocka_unit_test(default_columns_follow_what_the_tree_recorded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
