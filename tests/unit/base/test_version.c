/* test_version.c: lp_version and lp_version_number agree with each other, with the header's
 * macros and with the project version CMake builds (LP_PROJECT_VERSION). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

static void the_number_is_the_header_version(void **state) {
    (void)state;
    assert_int_equal(lp_version_number(), LP_VERSION_NUMBER);
    assert_int_equal(LP_VERSION_NUMBER,
                     LP_VERSION_MAJOR * 10000ul + LP_VERSION_MINOR * 100ul + LP_VERSION_PATCH);
    assert_true(LP_VERSION_MINOR < 100 && LP_VERSION_PATCH < 100);
}

static void the_string_spells_the_number(void **state) {
    (void)state;
    char text[32];
    snprintf(text, sizeof text, "%lu.%lu.%lu", lp_version_number() / 10000,
             lp_version_number() / 100 % 100, lp_version_number() % 100);
    assert_string_equal(lp_version(), text);
    assert_string_equal(lp_version(), LP_VERSION_STRING);
}

static void the_header_is_the_project_version(void **state) {
    (void)state;
    assert_string_equal(LP_VERSION_STRING, LP_PROJECT_VERSION);
}

static void a_program_compares_numbers(void **state) {
    (void)state;
    /* What a program checks at run time: the library is at least the header it was built with. */
    assert_true(lp_version_number() >= LP_VERSION_NUMBER);
    assert_true(LP_VERSION_NUMBER >= 200ul); /* 0.2.0, the first version with lp_version_number */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_number_is_the_header_version),
        cmocka_unit_test(the_string_spells_the_number),
        cmocka_unit_test(the_header_is_the_project_version),
        cmocka_unit_test(a_program_compares_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
