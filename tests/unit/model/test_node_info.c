/* test_node_info.c: the public view of a node (lp_node_info), as sessions and reports fill it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "model/node_info.h"
#include "model/tree.h"
#include "tree_fixtures.h"

static void node_info_carries_the_per_call_statistics(void **state) {
    (void)state;
    static const uint64_t xs[] = {10, 20, 30, 40};
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 2;
    int32_t root = tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
    int32_t idle = tf_node(&t, "idle", "Dropout", root, LP_NODE_MODULE);
    tf_calls(&t, root, xs, 4);
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

/* Means per call, extremes as recorded, and whether the device was profiled at all. */
static void memory_figures_are_means_per_call_with_their_extremes(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    t.has_memory[LP_DEV_CPU] = 1;
    lp_figures f;
    memset(&f, 0, sizeof f);
    lp_stat_add(&f.mem[LP_DEV_CPU].retained, 1000);
    lp_stat_add(&f.mem[LP_DEV_CPU].retained, 3000);
    lp_stat_add(&f.mem[LP_DEV_CPU].peak, 4096);
    lp_stat_add(&f.mem[LP_DEV_CPU].net, -512);
    lp_stat_add(&f.mem[LP_DEV_CPU].net, 512);
    lp_node_mem m;
    lp_node_mem_fill(&t, &f, LP_DEV_CPU, &m);
    assert_int_equal(m.recorded, 1);
    assert_true(m.retained == 2000.0);
    assert_int_equal(m.retained_min, 1000);
    assert_int_equal(m.retained_max, 3000);
    assert_true(m.peak == 4096.0);
    assert_true(m.net == 0.0);
    assert_int_equal(m.net_min, -512);
    assert_int_equal(m.net_max, 512);
    lp_node_mem_fill(&t, &f, LP_DEV_CUDA, &m);
    assert_int_equal(m.recorded, 0);
    assert_true(m.retained == 0.0 && m.peak == 0.0);
    lp_tree_free(&t);
}

static void an_index_out_of_range_is_invalid_and_names_the_caller(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
    lp_node_info info;
    assert_int_equal(lp_tree_node_info(&t, 1, &info, "lp_session_node"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "lp_session_node: node 1 out of range (1 nodes)");
    assert_int_equal(lp_tree_node_info(&t, 0, &info, "lp_session_node"), LP_OK);
    assert_string_equal(info.path, "");
    assert_string_equal(info.name, "Net");
    assert_string_equal(info.class_name, "Net");
    assert_int_equal(info.parent, -1);
    lp_tree_free(&t);
}

/* Reports spell kinds as words; they read back to the same kind. */
static void kind_names_read_back_to_their_kind(void **state) {
    (void)state;
    for (int k = LP_NODE_MODULE; k <= LP_NODE_SESSION; k++) {
        int back = -1;
        assert_non_null(lp_node_kind_name(k));
        assert_int_equal(lp_node_kind_parse(lp_node_kind_name(k), &back), LP_OK);
        assert_int_equal(back, k);
    }
    assert_string_equal(lp_node_kind_name(LP_NODE_CONTEXT), "context");
    assert_null(lp_node_kind_name(-1));
    assert_null(lp_node_kind_name(LP_NODE_SESSION + 1));
    int kind = 7;
    assert_int_equal(lp_node_kind_parse("layer", &kind), LP_ERR_NOT_FOUND);
    assert_int_equal(lp_node_kind_parse(NULL, &kind), LP_ERR_NOT_FOUND);
    assert_int_equal(kind, 7);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_info_carries_the_per_call_statistics),
        cmocka_unit_test(memory_figures_are_means_per_call_with_their_extremes),
        cmocka_unit_test(an_index_out_of_range_is_invalid_and_names_the_caller),
        cmocka_unit_test(kind_names_read_back_to_their_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
