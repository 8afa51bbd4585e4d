/* test_arena.c: allocations freed together (arena.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/arena.h"

static void allocations_are_zeroed_and_live_until_the_arena_is_freed(void **state) {
    (void)state;
    lp_arena *a = lp_arena_new();
    assert_non_null(a);
    int *ints[100];
    for (int i = 0; i < 100; i++) { /* past the first growth of the block list */
        ints[i] = lp_arena_alloc(a, 4, sizeof(int));
        assert_non_null(ints[i]);
        for (int k = 0; k < 4; k++)
            assert_int_equal(ints[i][k], 0);
        ints[i][3] = i;
    }
    for (int i = 0; i < 100; i++)
        assert_int_equal(ints[i][3], i);
    assert_non_null(lp_arena_alloc(a, 0, 0)); /* an empty list still gets a distinct pointer */
    char *s = lp_arena_strndup(a, "abcdef", 3);
    assert_string_equal(s, "abc");
    lp_arena_free(a);
}

static void overflow_and_null_are_refused(void **state) {
    (void)state;
    lp_arena *a = lp_arena_new();
    assert_null(lp_arena_alloc(a, SIZE_MAX / 2, 4));
    assert_null(lp_arena_alloc(NULL, 1, 1));
    lp_arena_free(a);
    lp_arena_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(allocations_are_zeroed_and_live_until_the_arena_is_freed),
        cmocka_unit_test(overflow_and_null_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
