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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(node_info_carries_the_per_call_statistics),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
