/* test_tree.c: the tree's accumulators (per-call statistics, Welford, merged across threads),
 * % Total's bases (lp_tree_set_shares), and the strings it owns: copies, kept when renamed or
 * rebuilt on a shared pool, op names copied from the collector's tables or interned.
 *
 * Every expected number is worked out by hand in a comment beside it. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/node_info.h"
#include "model/tree.h"
#include "tree_fixtures.h"

static void assert_near(double actual, double expected, double rel) {
    double tol = rel * fmax(fabs(expected), 1.0);
    if (fabs(actual - expected) > tol)
        fail_msg("%.17g is not within %.3g of %.17g", actual, tol, expected);
}

/* Welford ------------------------------------------------------------------------------------- */

static void welford_of_four_durations_has_exact_mean_extremes_and_sample_std(void **state) {
    (void)state;
    static const uint64_t xs[] = {10, 20, 30, 40};
    lp_welford w = tf_welford_of(xs, 4);
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
    lp_welford w = tf_welford_of(xs, 1);
    assert_int_equal(w.n, 1);
    assert_true(w.mean == 1234567.0);
    assert_true(w.m2 == 0.0);
    assert_int_equal(w.min, 1234567);
    assert_int_equal(w.max, 1234567);
    assert_true(lp_welford_std(&w) == 0.0);
}

static void welford_of_no_sample_is_all_zero(void **state) {
    (void)state;
    lp_welford w = tf_welford_of(NULL, 0);
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
    lp_welford all = tf_welford_of(xs, n);
    for (size_t split = 0; split <= n; split++) {
        lp_welford a = tf_welford_of(xs, split), b = tf_welford_of(xs + split, n - split);
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
    lp_welford full = tf_welford_of(xs, 3), empty = tf_welford_of(NULL, 0);

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
    lp_welford w = tf_welford_of(xs, 4);
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
    lp_welford a = tf_welford_of(xs, 2), b = tf_welford_of(xs + 2, 2);
    lp_welford_merge(&a, &b);
    assert_near(a.m2, 90.0, 1e-9);
    assert_true(a.mean == 1000000000010.0);
}

/* % Total's bases ----------------------------------------------------------------------------- */

/* Without regions every row is a share of the root's total, op rows included. */
static void shares_of_a_module_tree_are_of_the_root_total(void **state) {
    (void)state;
    static const char *const ops[] = {"aten::add"};
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t root = tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
    int32_t a = tf_node(&t, "a", "Block", root, LP_NODE_MODULE);
    int32_t a1 = tf_node(&t, "a.x", "Conv2d", a, LP_NODE_MODULE);
    int32_t b = tf_node(&t, "b", "Linear", root, LP_NODE_MODULE);
    t.nodes[root].fig.total_ns = 1000;
    t.nodes[a].fig.total_ns = 600;
    t.nodes[a1].fig.total_ns = 500;
    t.nodes[b].fig.total_ns = 300;
    assert_int_equal(lp_tree_intern_op_name(&t, ops[0]), 0);
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
    int32_t session = tf_node(&t, "", "session", -1, LP_NODE_SESSION);
    int32_t train = tf_node(&t, "train", "context", session, LP_NODE_CONTEXT);
    int32_t step = tf_node(&t, "train.step", "region", train, LP_NODE_REGION);
    int32_t fwd = tf_node(&t, "train.step.fwd", "region", step, LP_NODE_REGION);
    int32_t net = tf_node(&t, "train.step.fwd.net", "Net", fwd, LP_NODE_MODULE);
    int32_t eval = tf_node(&t, "eval", "context", session, LP_NODE_CONTEXT);
    int32_t val = tf_node(&t, "eval.val", "region", eval, LP_NODE_REGION);
    static const uint64_t totals[] = {1000, 800, 600, 400, 300, 200, 150};
    for (size_t i = 0; i < 7; i++)
        t.nodes[i].fig.total_ns = totals[i];
    assert_int_equal(lp_tree_intern_op_name(&t, ops[0]), 0);
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

/* Strings ------------------------------------------------------------------------------------- */

/* What the tree exposes is its own copy: the caller's buffers may change or go. */
static void a_tree_copies_the_strings_it_is_given(void **state) {
    (void)state;
    char path[32] = "features", cls[32] = "Sequential";
    lp_tree t;
    lp_tree_init(&t);
    tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
    int32_t f = tf_node(&t, path, cls, 0, LP_NODE_MODULE);
    strcpy(path, "overwritten");
    strcpy(cls, "overwritten");
    assert_string_equal(t.nodes[f].path, "features");
    assert_string_equal(t.nodes[f].name, "features");
    assert_string_equal(t.nodes[f].class_name, "Sequential");
    assert_string_equal(t.nodes[0].name, "Net"); /* the root is named by its class */
    lp_tree_free(&t);
}

/* A name or class replaced later leaves the old text readable: someone may hold it. */
static void renaming_a_node_keeps_the_old_name_valid(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
    int32_t f = tf_node(&t, "head.fc", "Linear", 0, LP_NODE_MODULE);
    const char *name = t.nodes[f].name, *cls = t.nodes[f].class_name;
    assert_int_equal(lp_tree_set_name(&t, f, "head/fc"), LP_OK);
    assert_int_equal(lp_tree_set_class(&t, f, "</script>"), LP_OK);
    assert_string_equal(t.nodes[f].name, "head/fc");
    assert_string_equal(t.nodes[f].class_name, "</script>");
    assert_string_equal(name, "fc"); /* the last dotted segment, as lp_tree_add took it */
    assert_string_equal(cls, "Linear");
    lp_tree_free(&t);
}

/* A composed report is freed and rebuilt after every merge. Built on the module tree's pool, the
 * strings read from the first build stay valid after the rebuild, and are the same pointers. */
static void a_tree_sharing_a_pool_leaves_its_strings_behind_when_rebuilt(void **state) {
    (void)state;
    lp_tree model, composed;
    lp_tree_init(&model);
    tf_node(&model, "", "Net", -1, LP_NODE_MODULE);
    lp_tree_init(&composed);
    assert_int_equal(lp_tree_share_strings(&composed, &model), LP_OK);
    tf_node(&composed, "", "Net", -1, LP_NODE_SESSION);
    int32_t ctx = tf_node(&composed, "main", "context", 0, LP_NODE_CONTEXT);
    int32_t op = lp_tree_intern_op_name(&composed, "aten::addmm");
    assert_true(op >= 0);
    const char *path = composed.nodes[ctx].path, *cls = composed.nodes[ctx].class_name;
    const char *op_name = lp_tree_op_name(&composed, op);

    lp_tree_free(&composed); /* what lp_compose does first */
    assert_string_equal(path, "main");
    assert_string_equal(cls, "context");
    assert_string_equal(op_name, "aten::addmm");

    lp_tree_init(&composed);
    assert_int_equal(lp_tree_share_strings(&composed, &model), LP_OK);
    tf_node(&composed, "", "Net", -1, LP_NODE_SESSION);
    ctx = tf_node(&composed, "main", "context", 0, LP_NODE_CONTEXT);
    assert_ptr_equal(composed.nodes[ctx].path, path);
    assert_int_equal(lp_tree_share_strings(&composed, &model), LP_ERR_STATE);
    lp_tree_free(&composed);
    lp_tree_free(&model); /* the pool's last holder: now it goes (LSan checks) */
}

/* The collector's tables only grow: the tree copies what it lacks, keeping the collector's ids,
 * and the copies outlive the collector's strings. */
static void extending_names_copies_only_the_new_ones_and_keeps_their_ids(void **state) {
    (void)state;
    char *ops[3], *shapes[1];
    ops[0] = strdup("aten::conv2d");
    ops[1] = strdup("aten::relu_");
    ops[2] = strdup("aten::add");
    shapes[0] = strdup("[1, 3, 8, 8], [4, 3, 3, 3]");
    lp_tree t;
    lp_tree_init(&t);
    assert_int_equal(lp_tree_extend_names(&t, (const char *const *)ops, 2, NULL, 0), LP_OK);
    assert_int_equal(t.n_op_names, 2);
    const char *conv = lp_tree_op_name(&t, 0);
    assert_int_equal(
        lp_tree_extend_names(&t, (const char *const *)ops, 3, (const char *const *)shapes, 1),
        LP_OK);
    assert_int_equal(t.n_op_names, 3);
    assert_int_equal(t.n_shape_names, 1);
    assert_ptr_equal(lp_tree_op_name(&t, 0), conv); /* not copied twice */
    for (int i = 0; i < 3; i++)
        free(ops[i]);
    free(shapes[0]);
    assert_string_equal(lp_tree_op_name(&t, 0), "aten::conv2d");
    assert_string_equal(lp_tree_op_name(&t, 2), "aten::add");
    assert_string_equal(lp_tree_shapes(&t, 0), "[1, 3, 8, 8], [4, 3, 3, 3]");
    assert_null(lp_tree_op_name(&t, 3));
    assert_null(lp_tree_op_name(&t, -1));
    assert_null(lp_tree_shapes(&t, -1));
    assert_null(lp_tree_shapes(&t, 1));
    lp_tree_free(&t);
}

/* Trees read back from a file number their names themselves: one id per distinct text. */
static void interning_an_op_name_gives_one_id_per_text(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    char name[32] = "aten::mm";
    assert_int_equal(lp_tree_intern_op_name(&t, name), 0);
    assert_int_equal(lp_tree_intern_op_name(&t, "aten::add"), 1);
    assert_int_equal(lp_tree_intern_op_name(&t, "aten::mm"), 0);
    strcpy(name, "x");
    assert_string_equal(lp_tree_op_name(&t, 0), "aten::mm");
    assert_int_equal(lp_tree_intern_shapes(&t, "[2, 2]"), 0);
    assert_int_equal(lp_tree_intern_shapes(&t, "[2, 2]"), 0);
    assert_int_equal(t.n_op_names, 2);
    assert_int_equal(t.n_shape_names, 1);
    lp_tree_free(&t);
}

/* A thread's figures moved into the tree: the per-call fields always, the optional parts only
 * when named. What was moved is cleared in the thread; a part not named is left as it was on
 * both sides (a collector that records no memory never reads or clears those bytes). */
static void moving_figures_merges_and_clears_only_the_named_parts(void **state) {
    (void)state;
    lp_figures into, from;
    memset(&into, 0, sizeof into);
    memset(&from, 0, sizeof from);
    into.calls = 2, into.total_ns = 100, into.self_ns = 40, into.flops_self = 7;
    from.calls = 3, from.total_ns = 30, from.self_ns = 20, from.cuda_self_ns = 5,
    from.flops_self = 1;
    lp_welford_add(&from.time, 10);
    lp_stat_add(&from.mem[LP_DEV_CPU].peak, 64);
    lp_stat_add(&from.mem[LP_DEV_CUDA].peak, 128);
    int64_t dims[2] = {4, 8};
    lp_out_shape_add(&from.out, dims, 2);

    lp_figures_move_parts(&into, &from, LP_FIG_MEM_CPU);
    assert_int_equal(into.calls, 5);        /* 2 + 3 */
    assert_int_equal(into.total_ns, 130);   /* 100 + 30 */
    assert_int_equal(into.self_ns, 60);     /* 40 + 20 */
    assert_int_equal(into.cuda_self_ns, 5); /* 0 + 5 */
    assert_int_equal(into.flops_self, 8);   /* 7 + 1 */
    assert_int_equal(into.time.n, 1);
    assert_int_equal(into.mem[LP_DEV_CPU].peak.max, 64); /* named: merged */
    assert_int_equal(into.mem[LP_DEV_CUDA].peak.n, 0);   /* not named: not merged */
    assert_int_equal(into.out.seen, 0);                  /* not named: not merged */
    assert_int_equal(from.calls, 0);                     /* moved: cleared */
    assert_int_equal(from.time.n, 0);
    assert_int_equal(from.mem[LP_DEV_CPU].peak.n, 0);
    assert_int_equal(from.mem[LP_DEV_CUDA].peak.max, 128); /* not named: untouched */
    assert_int_equal(from.out.dims[1], 8);

    lp_figures_move_parts(&into, &from, LP_FIG_ALL);
    assert_int_equal(into.mem[LP_DEV_CUDA].peak.max, 128);
    assert_int_equal(into.out.rank, 2);
    assert_int_equal(into.out.dims[1], 8);
    assert_int_equal(into.calls, 5); /* from was cleared by the first move: nothing added */
    assert_int_equal(from.mem[LP_DEV_CUDA].peak.n, 0);
    assert_int_equal(from.out.seen, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(welford_of_four_durations_has_exact_mean_extremes_and_sample_std),
        cmocka_unit_test(welford_of_one_sample_has_no_spread),
        cmocka_unit_test(welford_of_no_sample_is_all_zero),
        cmocka_unit_test(merging_two_accumulators_equals_adding_every_sample),
        cmocka_unit_test(merging_into_or_from_an_empty_accumulator_copies_the_other),
        cmocka_unit_test(large_durations_keep_an_accurate_variance),
        cmocka_unit_test(moving_figures_merges_and_clears_only_the_named_parts),
        cmocka_unit_test(shares_of_a_module_tree_are_of_the_root_total),
        cmocka_unit_test(shares_with_regions_are_of_the_enclosing_context_total),
        cmocka_unit_test(a_tree_copies_the_strings_it_is_given),
        cmocka_unit_test(renaming_a_node_keeps_the_old_name_valid),
        cmocka_unit_test(a_tree_sharing_a_pool_leaves_its_strings_behind_when_rebuilt),
        cmocka_unit_test(extending_names_copies_only_the_new_ones_and_keeps_their_ids),
        cmocka_unit_test(interning_an_op_name_gives_one_id_per_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
