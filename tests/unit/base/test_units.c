/* test_units.c: the units of every cell, at the boundaries where PyTorch switches units, and the
 * reports' dates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "base/units.h"

static const char *time_text(double ns, lp_units units) {
    static char buf[64];
    int n = lp_format_time(ns, units, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

static const char *bytes_text(double bytes) {
    static char buf[64];
    int n = lp_format_bytes(bytes, buf, sizeof buf);
    assert_int_equal(n, (int)strlen(buf));
    return buf;
}

static void time_below_a_millisecond_prints_microseconds(void **state) {
    (void)state;
    assert_string_equal(time_text(0, LP_UNITS_AUTO), "0.000us");
    assert_string_equal(time_text(410, LP_UNITS_AUTO), "0.410us");
    assert_string_equal(time_text(49693, LP_UNITS_AUTO), "49.693us");
    assert_string_equal(time_text(999999, LP_UNITS_AUTO), "999.999us");
}

static void time_from_a_millisecond_prints_milliseconds(void **state) {
    (void)state;
    assert_string_equal(time_text(1000000, LP_UNITS_AUTO), "1.000ms");
    assert_string_equal(time_text(1808000, LP_UNITS_AUTO), "1.808ms");
    assert_string_equal(time_text(999999000, LP_UNITS_AUTO), "999.999ms");
}

static void time_from_a_second_prints_seconds(void **state) {
    (void)state;
    assert_string_equal(time_text(1e9, LP_UNITS_AUTO), "1.000s");
    assert_string_equal(time_text(1234567890, LP_UNITS_AUTO), "1.235s");
    assert_string_equal(time_text(3600e9, LP_UNITS_AUTO), "3600.000s");
}

static void time_in_forced_units_ignores_magnitude(void **state) {
    (void)state;
    assert_string_equal(time_text(1808000, LP_UNITS_US), "1808.000us");
    assert_string_equal(time_text(49693, LP_UNITS_MS), "0.050ms");
    assert_string_equal(time_text(2e9, LP_UNITS_MS), "2000.000ms");
    assert_string_equal(time_text(1808000, LP_UNITS_S), "0.002s");
    assert_string_equal(time_text(0, LP_UNITS_S), "0.000s");
}

static void time_into_a_short_buffer_truncates_and_reports_the_full_length(void **state) {
    (void)state;
    char buf[4];
    assert_int_equal(lp_format_time(1808000, LP_UNITS_AUTO, buf, sizeof buf), 7);
    assert_string_equal(buf, "1.8");
}

static void bytes_below_a_kilobyte_print_whole_bytes(void **state) {
    (void)state;
    assert_string_equal(bytes_text(0), "0 b");
    assert_string_equal(bytes_text(4), "4 b");
    assert_string_equal(bytes_text(1023), "1023 b");
    assert_string_equal(bytes_text(-5), "-5 b");
    assert_string_equal(bytes_text(2.4), "2 b");
}

static void bytes_of_a_tiny_negative_mean_print_zero_without_a_sign(void **state) {
    (void)state;
    assert_string_equal(bytes_text(-0.4), "0 b");
}

static void bytes_that_round_to_a_kilobyte_print_kilobytes(void **state) {
    (void)state;
    assert_string_equal(bytes_text(1023.6), "1.00 Kb");
}

static void bytes_use_binary_multiples(void **state) {
    (void)state;
    assert_string_equal(bytes_text(1024), "1.00 Kb");
    assert_string_equal(bytes_text(774656), "756.50 Kb");
    assert_string_equal(bytes_text(1048575), "1024.00 Kb");
    assert_string_equal(bytes_text(1048576), "1.00 Mb");
    assert_string_equal(bytes_text(3890217), "3.71 Mb");
    assert_string_equal(bytes_text(1073741824), "1.00 Gb");
    assert_string_equal(bytes_text(5.5 * 1073741824.0), "5.50 Gb");
}

static void negative_bytes_keep_their_sign(void **state) {
    (void)state;
    assert_string_equal(bytes_text(-18432), "-18.00 Kb");
    assert_string_equal(bytes_text(-1024), "-1.00 Kb");
    assert_string_equal(bytes_text(-3890217), "-3.71 Mb");
}

static void export_dates_are_iso_8601_utc(void **state) {
    (void)state;
    char buf[32];
    lp_format_date(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    lp_format_date(1704164645, buf, sizeof buf);
    assert_string_equal(buf, "2024-01-02T03:04:05Z");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(time_below_a_millisecond_prints_microseconds),
        cmocka_unit_test(time_from_a_millisecond_prints_milliseconds),
        cmocka_unit_test(time_from_a_second_prints_seconds),
        cmocka_unit_test(time_in_forced_units_ignores_magnitude),
        cmocka_unit_test(time_into_a_short_buffer_truncates_and_reports_the_full_length),
        cmocka_unit_test(bytes_below_a_kilobyte_print_whole_bytes),
        cmocka_unit_test(bytes_of_a_tiny_negative_mean_print_zero_without_a_sign),
        cmocka_unit_test(bytes_that_round_to_a_kilobyte_print_kilobytes),
        cmocka_unit_test(bytes_use_binary_multiples),
        cmocka_unit_test(negative_bytes_keep_their_sign),
        cmocka_unit_test(export_dates_are_iso_8601_utc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
