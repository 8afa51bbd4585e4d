/* test_noise.c: the noise notes (lp_noise_notes) on hand-built trees, every number worked out
 * beside it: one iteration has no spread, a forward that varies by more than 10% is named, and
 * the first two slowest leaf modules whose order is within their standard errors get the
 * iterations that would separate them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "model/noise.h"
#include "tree_fixtures.h"

typedef struct three {
    lp_tree t;
    int32_t root, a, b, c;
} three;

/* Net over three leaves a, b, c, each called once per iteration, with these per-call times. */
static void build(three *x, uint64_t iterations, const uint64_t *root, const uint64_t *a,
                  const uint64_t *b, const uint64_t *c) {
    lp_tree_init(&x->t);
    x->root = tf_node(&x->t, "", "Net", -1, LP_NODE_MODULE);
    x->a = tf_node(&x->t, "a", "Conv", x->root, LP_NODE_MODULE);
    x->b = tf_node(&x->t, "b", "Conv", x->root, LP_NODE_MODULE);
    x->c = tf_node(&x->t, "c", "Conv", x->root, LP_NODE_MODULE);
    x->t.iterations = iterations;
    tf_calls(&x->t, x->root, root, iterations);
    tf_calls(&x->t, x->a, a, iterations);
    tf_calls(&x->t, x->b, b, iterations);
    tf_calls(&x->t, x->c, c, iterations);
}

static void one_iteration_has_no_spread(void **state) {
    (void)state;
    three x;
    static const uint64_t r[] = {1000}, a[] = {500}, b[] = {300}, c[] = {100};
    build(&x, 1, r, a, b, c);
    char lines[2][256];
    assert_int_equal(lp_noise_notes(&x.t, lines, 2), 1);
    assert_non_null(strstr(lines[0], "one profiled iteration has no spread"));
    lp_tree_free(&x.t);
}

static void steady_figures_need_no_word(void **state) {
    (void)state;
    three x;
    static const uint64_t r[] = {1000, 1000}, a[] = {500, 500}, b[] = {300, 300}, c[] = {100, 100};
    build(&x, 2, r, a, b, c);
    char lines[2][256];
    assert_int_equal(lp_noise_notes(&x.t, lines, 2), 0);
    lp_tree_free(&x.t);
}

/* The forward took 1000 and 1400 ns: mean 1200, sample std sqrt(200^2 + 200^2) = 282.8, 23.6%. */
static void a_forward_that_varies_is_named(void **state) {
    (void)state;
    three x;
    static const uint64_t r[] = {1000, 1400}, a[] = {500, 500}, b[] = {300, 300}, c[] = {100, 100};
    build(&x, 2, r, a, b, c);
    char lines[2][256];
    assert_int_equal(lp_noise_notes(&x.t, lines, 2), 1);
    assert_non_null(strstr(lines[0], "the forward's time varied by 24% (std / mean over 2"));
    lp_tree_free(&x.t);
}

/* a: 500 and 300 ns, 400 per iteration, per-call std sqrt(100^2 + 100^2) = 141.4, standard error
 * 141.4 * sqrt(2) / 2 = 100. b: 350 and 350, error 0. The gap, 50, is under 2 * 100: unsettled;
 * 2 * (200 / 50)^2 = 32 iterations would separate them. b and c (350 vs 100) are settled. */
static void an_unsettled_order_gets_the_iterations_that_settle_it(void **state) {
    (void)state;
    three x;
    static const uint64_t r[] = {1000, 1000}, a[] = {500, 300}, b[] = {350, 350}, c[] = {100, 100};
    build(&x, 2, r, a, b, c);
    char lines[2][256];
    assert_int_equal(lp_noise_notes(&x.t, lines, 2), 1);
    assert_non_null(strstr(lines[0], "the order of the slowest layers is not settled: a ("));
    assert_non_null(strstr(lines[0], ") and b ("));
    assert_non_null(strstr(lines[0], "about 32 iterations would tell them apart"));
    /* The same gap with a fifth of the error (a: 420 and 380, std 28.3, error 20): 50 is not
     * under 2 * 20, so the order stands. */
    static const uint64_t a2[] = {420, 380};
    lp_tree_free(&x.t);
    build(&x, 2, r, a2, b, c);
    assert_int_equal(lp_noise_notes(&x.t, lines, 2), 0);
    lp_tree_free(&x.t);
}

/* No forward recorded: nothing to say. */
static void an_empty_tree_says_nothing(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    char lines[2][256];
    assert_int_equal(lp_noise_notes(&t, lines, 2), 0);
    tf_node(&t, "", "Net", -1, LP_NODE_MODULE);
    assert_int_equal(lp_noise_notes(&t, lines, 2), 0);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_iteration_has_no_spread),
        cmocka_unit_test(steady_figures_need_no_word),
        cmocka_unit_test(a_forward_that_varies_is_named),
        cmocka_unit_test(an_unsettled_order_gets_the_iterations_that_settle_it),
        cmocka_unit_test(an_empty_tree_says_nothing),
    };
    return cmocka_run_group_tests_name("unit.test_noise", tests, NULL, NULL);
}
