/* test_histo.c: bucket placement of the per-call histograms (model/histo.h), exact at every
 * bound, and cells summed into a snapshot. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/histo.h"

static void a_value_goes_to_the_first_bound_at_or_above_it(void **state) {
    (void)state;
    assert_int_equal(lp_hist_bucket(0), 0);
    assert_int_equal(lp_hist_bucket(1000), 0); /* le="1e-06" holds 1 us itself */
    assert_int_equal(lp_hist_bucket(1001), 1); /* just above: le="3e-06" */
    assert_int_equal(lp_hist_bucket(3000), 1);
    assert_int_equal(lp_hist_bucket(3001), 2);
    assert_int_equal(lp_hist_bucket(999999), 6); /* just under 1 ms: le="0.001" */
    assert_int_equal(lp_hist_bucket(1000000), 6);
    assert_int_equal(lp_hist_bucket(1000001), 7);
    assert_int_equal(lp_hist_bucket(10000000000ull), 14);             /* 10 s: the last bound */
    assert_int_equal(lp_hist_bucket(10000000001ull), LP_HIST_BOUNDS); /* +Inf */
    assert_int_equal(lp_hist_bucket(UINT64_MAX), LP_HIST_BOUNDS);
    for (unsigned b = 0; b < LP_HIST_BOUNDS; b++) {
        assert_int_equal(lp_hist_bucket(lp_hist_bounds_ns[b]), b);
        assert_int_equal(lp_hist_bucket(lp_hist_bounds_ns[b] + 1), b + 1);
    }
}

/* The definition, counted the slow way: how many bounds lie below ns. */
static unsigned bounds_below(uint64_t ns) {
    unsigned n = 0;
    for (unsigned b = 0; b < LP_HIST_BOUNDS; b++)
        n += lp_hist_bounds_ns[b] < ns;
    return n;
}

/* The bit-length guess plus one compare equals the definition at every bound and power of two
 * (and one either side), and on a spread of other values. */
static void the_fast_bucket_equals_the_definition(void **state) {
    (void)state;
    for (unsigned b = 0; b < LP_HIST_BOUNDS; b++)
        for (int d = -1; d <= 1; d++) {
            uint64_t v = lp_hist_bounds_ns[b] + (uint64_t)(int64_t)d;
            assert_int_equal(lp_hist_bucket(v), bounds_below(v));
        }
    for (unsigned bit = 0; bit < 64; bit++)
        for (int d = -1; d <= 1; d++) {
            uint64_t v = (1ull << bit) + (uint64_t)(int64_t)d;
            assert_int_equal(lp_hist_bucket(v), bounds_below(v));
        }
    uint64_t x = 88172645463325252ull; /* xorshift64 */
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t v = x >> (x & 63); /* every magnitude */
        assert_int_equal(lp_hist_bucket(v), bounds_below(v));
    }
}

static void the_bounds_text_says_the_bounds_in_seconds(void **state) {
    (void)state;
    for (unsigned b = 0; b < LP_HIST_BOUNDS; b++) {
        double s = strtod(lp_hist_bounds_text[b], NULL);
        double ns = (double)lp_hist_bounds_ns[b];
        assert_true(s * 1e9 > ns * 0.999999 && s * 1e9 < ns * 1.000001);
        if (b) assert_true(lp_hist_bounds_ns[b] > lp_hist_bounds_ns[b - 1]);
    }
}

static void cells_add_up_into_a_snapshot(void **state) {
    (void)state;
    lp_hist_cell a, b;
    lp_hist_cell_clear(&a);
    lp_hist_cell_clear(&b);
    lp_hist_add(&a, 500);         /* bucket 0 */
    lp_hist_add(&a, 2000);        /* bucket 1 */
    lp_hist_add(&b, 2000);        /* bucket 1 */
    lp_hist_add(&b, 20000000000); /* +Inf */
    lp_hist h;
    memset(&h, 0, sizeof h);
    lp_hist_accumulate(&h, &a);
    lp_hist_accumulate(&h, &b);
    assert_int_equal(h.count, 4);
    assert_int_equal(h.bucket[0], 1);
    assert_int_equal(h.bucket[1], 2);
    assert_int_equal(h.bucket[LP_HIST_BOUNDS], 1);
    assert_int_equal(h.sum_ns, 500 + 2000 + 2000 + 20000000000ull);
    lp_hist_cell_clear(&a);
    memset(&h, 0, sizeof h);
    lp_hist_accumulate(&h, &a);
    assert_int_equal(h.count, 0);
    assert_int_equal(h.sum_ns, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_value_goes_to_the_first_bound_at_or_above_it),
        cmocka_unit_test(the_fast_bucket_equals_the_definition),
        cmocka_unit_test(the_bounds_text_says_the_bounds_in_seconds),
        cmocka_unit_test(cells_add_up_into_a_snapshot),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
