/* test_sampler.c: the sampler's decisions (collect/sampler.h): every Nth exactly, a probability
 * with a seeded generator (the same seed, the same decisions; the rate near P), and the budget's
 * rate from the measured costs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "collect/sampler.h"

static void the_defaults_profile_every_forward(void **state) {
    (void)state;
    lp_sampler s;
    lp_sampler_init(&s, 1, 1.0, 0.0, 7);
    assert_true(lp_sampler_all(&s));
    uint64_t rng = lp_sampler_rng_seed(&s, 0);
    for (int i = 0; i < 100; i++)
        assert_int_equal(lp_sampler_decide(&s, &rng), 1);
}

static void every_nth_profiles_the_first_and_each_nth_after(void **state) {
    (void)state;
    lp_sampler s;
    lp_sampler_init(&s, 4, 1.0, 0.0, 0);
    assert_false(lp_sampler_all(&s));
    uint64_t rng = lp_sampler_rng_seed(&s, 0);
    int got[12];
    for (int i = 0; i < 12; i++)
        got[i] = lp_sampler_decide(&s, &rng);
    const int want[12] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    for (int i = 0; i < 12; i++)
        assert_int_equal(got[i], want[i]);
}

static int count_profiled(double p, uint64_t seed, int n, int *first8) {
    lp_sampler s;
    lp_sampler_init(&s, 1, p, 0.0, seed);
    uint64_t rng = lp_sampler_rng_seed(&s, 0);
    int k = 0;
    for (int i = 0; i < n; i++) {
        int d = lp_sampler_decide(&s, &rng);
        if (i < 8) first8[i] = d;
        k += d;
    }
    return k;
}

static void a_probability_is_reproducible_and_near_its_rate(void **state) {
    (void)state;
    int a[8], b[8], c[8];
    int ka = count_profiled(0.1, 42, 100000, a);
    int kb = count_profiled(0.1, 42, 100000, b);
    int kc = count_profiled(0.1, 43, 100000, c);
    assert_int_equal(ka, kb); /* the same seed: the same decisions */
    assert_memory_equal(a, b, sizeof a);
    assert_true(ka != kc); /* another seed: others (these two differ) */
    /* 10% of 100000 is 10000; 5 standard deviations (95) either side. */
    assert_in_range(ka, 10000 - 475, 10000 + 475);
    /* Threads draw from their own generators, seeded apart. */
    lp_sampler s;
    lp_sampler_init(&s, 1, 0.5, 0.0, 42);
    assert_true(lp_sampler_rng_seed(&s, 0) != lp_sampler_rng_seed(&s, 1));
    assert_true(lp_sampler_rng_seed(&s, 0) != 0);
}

static void every_and_probability_both_decide(void **state) {
    (void)state;
    lp_sampler s;
    lp_sampler_init(&s, 2, 0.5, 0.0, 9);
    uint64_t rng = lp_sampler_rng_seed(&s, 0);
    int k = 0;
    for (int i = 0; i < 40000; i++) {
        int d = lp_sampler_decide(&s, &rng);
        if (i % 2) assert_int_equal(d, 0); /* odd forwards never */
        k += d;
    }
    assert_in_range(k, 10000 - 500, 10000 + 500);
}

static void the_budget_rate_follows_the_measured_cost(void **state) {
    (void)state;
    lp_sampler s;
    lp_sampler_init(&s, 1, 1.0, 0.01, 1);
    uint64_t rng = lp_sampler_rng_seed(&s, 0);
    /* Nothing measured: profile one to learn its cost, then leave one unprofiled. */
    assert_true(lp_sampler_budget_rate(&s) == 1.0);
    assert_int_equal(lp_sampler_decide(&s, &rng), 1);
    lp_sampler_observe(&s, 1, 1200000); /* 1.2 ms profiled */
    assert_true(lp_sampler_budget_rate(&s) == 0.0);
    assert_int_equal(lp_sampler_decide(&s, &rng), 0);
    lp_sampler_observe(&s, 0, 1000000); /* 1 ms plain: profiling costs 0.2 ms */
    /* rate * 0.2 ms = 1% of 1 ms: 0.05 */
    assert_float_equal(lp_sampler_budget_rate(&s), 0.05, 1e-12);
    /* The means move by 1/16 of each new measurement's difference. */
    lp_sampler_observe(&s, 1, 2800000); /* profiled mean 1.2 + (2.8 - 1.2) / 16 = 1.3 ms */
    assert_float_equal(lp_sampler_budget_rate(&s), 0.01 * 1.0 / 0.3, 1e-12);
    /* Profiling that costs nothing measurable: every other forward, never more, so that the
     * unprofiled mean stays current. */
    lp_sampler_observe(&s, 0, 100000000);
    assert_float_equal(lp_sampler_budget_rate(&s), 0.5, 0);
    /* Profiling that costs far more than the budget: never below the floor. */
    lp_sampler t;
    lp_sampler_init(&t, 1, 1.0, 0.001, 1);
    lp_sampler_observe(&t, 1, 1000000000);
    lp_sampler_observe(&t, 0, 1000);
    assert_float_equal(lp_sampler_budget_rate(&t), 1e-4, 0);
    /* Decisions at the budget's rate: about 5% of forwards. */
    lp_sampler u;
    lp_sampler_init(&u, 1, 1.0, 0.01, 3);
    lp_sampler_observe(&u, 1, 1200000);
    lp_sampler_observe(&u, 0, 1000000);
    int k = 0;
    for (int i = 0; i < 100000; i++)
        k += lp_sampler_decide(&u, &rng);
    assert_in_range(k, 5000 - 350, 5000 + 350);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_defaults_profile_every_forward),
        cmocka_unit_test(every_nth_profiles_the_first_and_each_nth_after),
        cmocka_unit_test(a_probability_is_reproducible_and_near_its_rate),
        cmocka_unit_test(every_and_probability_both_decide),
        cmocka_unit_test(the_budget_rate_follows_the_measured_cost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
