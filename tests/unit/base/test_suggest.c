/* test_suggest.c: "did you mean": the closest id to a typo, and none for an unrelated word. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "base/suggest.h"

static void closest_suggests_typos_but_not_unrelated_words(void **state) {
    (void)state;
    const char *const ids[] = {"self_cpu", "cpu_total", "calls"};
    assert_string_equal(lp_closest("cpu_totl", ids, 3), "cpu_total");
    assert_string_equal(lp_closest("CALLS", ids, 3), "calls");
    assert_string_equal(lp_closest("self-cpu", ids, 3), "self_cpu");
    assert_null(lp_closest("time", ids, 3));
    assert_null(lp_closest("x", ids, 0));
    assert_int_equal(lp_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(lp_edit_distance("", "abc"), 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(closest_suggests_typos_but_not_unrelated_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
