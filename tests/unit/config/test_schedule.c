/* test_schedule.c: torch.profiler's schedule as step arithmetic (schedule.h), and its text form.
 * Phases are checked as whole sequences, one letter per step, so an off-by-one anywhere in a
 * cycle shows as a shifted letter. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/schedule.h"
#include "layerprof.h"

/* W wait, U warm-up, A active, D done, R record (no schedule). */
static char letter(lp_sched_phase p) {
    switch (p) {
    case LP_SCHED_RECORD:
        return 'R';
    case LP_SCHED_WAIT:
        return 'W';
    case LP_SCHED_WARMUP:
        return 'U';
    case LP_SCHED_ACTIVE:
        return 'A';
    case LP_SCHED_DONE:
        return 'D';
    }
    return '?';
}

/* The phases of steps 0..strlen(want)-1, checked as one string. */
static void check_phases(const lp_schedule *s, const char *want) {
    char got[128];
    size_t n = strlen(want);
    assert_true(n < sizeof got);
    for (size_t i = 0; i < n; i++)
        got[i] = letter(lp_sched_phase_of(s, i));
    got[n] = '\0';
    assert_string_equal(got, want);
}

/* Steps where `pred` holds, as "2,6". */
static void check_steps(const lp_schedule *s, int (*pred)(const lp_schedule *, uint64_t),
                        uint64_t n, const char *want) {
    char got[256] = "";
    size_t off = 0;
    for (uint64_t i = 0; i < n; i++)
        if (pred(s, i))
            off += (size_t)snprintf(got + off, sizeof got - off, "%s%llu", off ? "," : "",
                                    (unsigned long long)i);
    assert_string_equal(got, want);
}

static void wait_warmup_active_repeat_two(void **state) {
    (void)state;
    lp_schedule s = {1, 1, 2, 2};
    assert_true(lp_sched_on(&s));
    check_phases(&s, "WUAAWUAADD");
    check_steps(&s, lp_sched_starts_active, 10, "2,6");
    check_steps(&s, lp_sched_ends_cycle, 10, "3,7");
    static const int cycles[] = {1, 1, 1, 1, 2, 2, 2, 2, 3, 3};
    for (uint64_t i = 0; i < 10; i++)
        assert_int_equal(lp_sched_cycle_of(&s, i), cycles[i]);
}

static void repeat_zero_cycles_forever(void **state) {
    (void)state;
    lp_schedule s = {2, 0, 1, 0};
    check_phases(&s, "WWAWWAWWAWWAWWA");
    check_steps(&s, lp_sched_starts_active, 15, "2,5,8,11,14");
    check_steps(&s, lp_sched_ends_cycle, 15, "2,5,8,11,14");
    assert_int_equal(lp_sched_cycle_of(&s, 0), 1);
    assert_int_equal(lp_sched_cycle_of(&s, 14), 5);
    /* Far along, still cycling. */
    assert_int_equal(lp_sched_phase_of(&s, 3000000002ull), LP_SCHED_ACTIVE);
    assert_int_equal(lp_sched_phase_of(&s, 3000000003ull), LP_SCHED_WAIT);
}

static void active_only_records_every_step_in_cycles(void **state) {
    (void)state;
    lp_schedule s = {0, 0, 3, 0};
    check_phases(&s, "AAAAAAA");
    check_steps(&s, lp_sched_starts_active, 7, "0,3,6");
    check_steps(&s, lp_sched_ends_cycle, 7, "2,5");
    lp_schedule one = {0, 0, 1, 3};
    check_phases(&one, "AAADDD");
    check_steps(&one, lp_sched_starts_active, 6, "0,1,2");
    check_steps(&one, lp_sched_ends_cycle, 6, "0,1,2");
}

static void warmup_without_wait(void **state) {
    (void)state;
    lp_schedule s = {0, 2, 2, 1};
    check_phases(&s, "UUAADDDD");
    check_steps(&s, lp_sched_starts_active, 8, "2");
    check_steps(&s, lp_sched_ends_cycle, 8, "3");
}

static void no_schedule_records_everything(void **state) {
    (void)state;
    lp_schedule s = {0, 0, 0, 0};
    assert_false(lp_sched_on(&s));
    assert_false(lp_sched_on(NULL));
    check_phases(&s, "RRRRRR");
    check_steps(&s, lp_sched_starts_active, 6, "");
    check_steps(&s, lp_sched_ends_cycle, 6, "");
    assert_int_equal(lp_sched_cycle_of(&s, 0), 0);
    assert_int_equal(lp_sched_cycle_of(&s, UINT64_MAX), 0);
    assert_int_equal(lp_sched_phase_of(NULL, 5), LP_SCHED_RECORD);
    /* Without active steps the other fields mean nothing (validation refuses them). */
    lp_schedule waits = {3, 1, 0, 2};
    check_phases(&waits, "RRRR");
}

static void profiled_phases(void **state) {
    (void)state;
    assert_true(lp_sched_profiled(LP_SCHED_RECORD));
    assert_true(lp_sched_profiled(LP_SCHED_WARMUP));
    assert_true(lp_sched_profiled(LP_SCHED_ACTIVE));
    assert_false(lp_sched_profiled(LP_SCHED_WAIT));
    assert_false(lp_sched_profiled(LP_SCHED_DONE));
}

static void large_values_do_not_overflow(void **state) {
    (void)state;
    /* A cycle of 3 * INT_MAX steps, repeated INT_MAX times: past 2^63 steps in all. */
    lp_schedule s = {INT_MAX, INT_MAX, INT_MAX, INT_MAX};
    uint64_t m = INT_MAX, period = 3 * m;
    assert_int_equal(lp_sched_phase_of(&s, 0), LP_SCHED_WAIT);
    assert_int_equal(lp_sched_phase_of(&s, m - 1), LP_SCHED_WAIT);
    assert_int_equal(lp_sched_phase_of(&s, m), LP_SCHED_WARMUP);
    assert_int_equal(lp_sched_phase_of(&s, 2 * m), LP_SCHED_ACTIVE);
    assert_true(lp_sched_starts_active(&s, 2 * m));
    assert_true(lp_sched_ends_cycle(&s, period - 1));
    assert_int_equal(lp_sched_cycle_of(&s, period), 2);
    assert_int_equal(lp_sched_phase_of(&s, period * m - 1), LP_SCHED_ACTIVE);
    assert_int_equal(lp_sched_cycle_of(&s, period * m - 1), INT_MAX);
    assert_int_equal(lp_sched_phase_of(&s, period * m), LP_SCHED_DONE);
    assert_int_equal(lp_sched_phase_of(&s, UINT64_MAX), LP_SCHED_DONE);
    /* Forever, one step per cycle: the cycle number saturates instead of wrapping. */
    lp_schedule fast = {0, 0, 1, 0};
    assert_int_equal(lp_sched_cycle_of(&fast, (uint64_t)INT_MAX - 2), INT_MAX - 1);
    assert_int_equal(lp_sched_cycle_of(&fast, (uint64_t)INT_MAX - 1), INT_MAX);
    assert_int_equal(lp_sched_cycle_of(&fast, UINT64_MAX), INT_MAX);
    assert_int_equal(lp_sched_phase_of(&fast, UINT64_MAX), LP_SCHED_ACTIVE);
    /* Negative counts (never validated) read as 0 rather than wrapping. */
    lp_schedule neg = {-5, -1, 2, -3};
    check_phases(&neg, "AAAA");
}

/* ------------------------------------------------------------------------------------------ */
/* Text                                                                                        */

static void parse_reads_keys_in_any_order(void **state) {
    (void)state;
    lp_schedule s;
    assert_int_equal(lp_schedule_parse("wait=1,warmup=1,active=3,repeat=2", &s), LP_OK);
    assert_int_equal(s.wait, 1);
    assert_int_equal(s.warmup, 1);
    assert_int_equal(s.active, 3);
    assert_int_equal(s.repeat, 2);
    assert_int_equal(lp_schedule_parse("repeat=4,active=2,wait=7", &s), LP_OK);
    assert_int_equal(s.wait, 7);
    assert_int_equal(s.warmup, 0);
    assert_int_equal(s.active, 2);
    assert_int_equal(s.repeat, 4);
    assert_int_equal(lp_schedule_parse("active=1", &s), LP_OK);
    assert_int_equal(s.wait, 0);
    assert_int_equal(s.warmup, 0);
    assert_int_equal(s.active, 1);
    assert_int_equal(s.repeat, 0);
    /* Blanks around entries, keys and values, as typed by hand. */
    assert_int_equal(lp_schedule_parse(" wait = 2 , active=\t5 ", &s), LP_OK);
    assert_int_equal(s.wait, 2);
    assert_int_equal(s.active, 5);
    assert_int_equal(lp_schedule_parse("active=2147483647,wait=0", &s), LP_OK);
    assert_int_equal(s.active, INT_MAX);
}

static void parse_error(const char *text, const char *want) {
    lp_schedule s = {9, 9, 9, 9};
    int rc = lp_schedule_parse(text, &s);
    if (rc != LP_ERR_INVALID) fail_msg("'%s': expected LP_ERR_INVALID, got %d", text, rc);
    assert_string_equal(lp_error_last(), want);
    /* Nothing is written on failure. */
    assert_int_equal(s.wait, 9);
    assert_int_equal(s.active, 9);
}

static void parse_errors_name_the_bad_part(void **state) {
    (void)state;
    parse_error("wait=1,actve=2",
                "schedule 'wait=1,actve=2': unknown key 'actve'; did you mean 'active'?");
    parse_error("warmpu=1,active=2",
                "schedule 'warmpu=1,active=2': unknown key 'warmpu'; did you mean 'warmup'?");
    parse_error("active=2,steps=3",
                "schedule 'active=2,steps=3': unknown key 'steps' (keys: wait, warmup, active, "
                "repeat)");
    parse_error("active=2,active=3", "schedule 'active=2,active=3': 'active' is given twice");
    parse_error("wait=-1,active=2",
                "schedule 'wait=-1,active=2': 'wait' must be a whole number from 0 to "
                "2147483647, not '-1'");
    parse_error("active=2147483648",
                "schedule 'active=2147483648': 'active' must be a whole number from 0 to "
                "2147483647, not '2147483648'");
    parse_error("active=1.5",
                "schedule 'active=1.5': 'active' must be a whole number from 0 to 2147483647, "
                "not '1.5'");
    parse_error("active=",
                "schedule 'active=': 'active' must be a whole number from 0 to 2147483647, not "
                "''");
    parse_error("active=0x10", "schedule 'active=0x10': 'active' must be a whole number from 0 "
                               "to 2147483647, not '0x10'");
    parse_error("wait=1,active", "schedule 'wait=1,active': 'active' is not KEY=N (keys: wait, "
                                 "warmup, active, repeat)");
    parse_error("wait=1,,active=2",
                "schedule 'wait=1,,active=2': an empty entry; expected KEY=N entries separated by "
                "commas, e.g. wait=1,warmup=1,active=3,repeat=2");
    parse_error("active=2,",
                "schedule 'active=2,': an empty entry; expected KEY=N entries separated by "
                "commas, e.g. wait=1,warmup=1,active=3,repeat=2");
    parse_error("", "schedule '': an empty entry; expected KEY=N entries separated by commas, "
                    "e.g. wait=1,warmup=1,active=3,repeat=2");
    parse_error("wait=1,repeat=2",
                "schedule 'wait=1,repeat=2': 'active' must be at least 1 (the steps recorded per "
                "cycle)");
    parse_error("active=0",
                "schedule 'active=0': 'active' must be at least 1 (the steps recorded per cycle)");
    parse_error("Active=1", "schedule 'Active=1': unknown key 'Active'; did you mean 'active'?");
    lp_schedule s;
    assert_int_equal(lp_schedule_parse(NULL, &s), LP_ERR_INVALID);
    assert_int_equal(lp_schedule_parse("active=1", NULL), LP_ERR_INVALID);
}

static void format_round_trips(void **state) {
    (void)state;
    static const char *const texts[] = {"wait=1,warmup=1,active=3,repeat=2", "active=1",
                                        "repeat=5,active=7", "wait=2147483647,active=2147483647"};
    static const char *const want[] = {
        "wait=1,warmup=1,active=3,repeat=2", "wait=0,warmup=0,active=1,repeat=0",
        "wait=0,warmup=0,active=7,repeat=5", "wait=2147483647,warmup=0,active=2147483647,repeat=0"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        lp_schedule s, again;
        char buf[128];
        assert_int_equal(lp_schedule_parse(texts[i], &s), LP_OK);
        int n = lp_schedule_format(&s, buf, sizeof buf);
        assert_int_equal(n, (int)strlen(want[i]));
        assert_string_equal(buf, want[i]);
        assert_int_equal(lp_schedule_parse(buf, &again), LP_OK);
        assert_memory_equal(&s, &again, sizeof s);
    }
    /* Like snprintf: the length needed, the text cut to fit. */
    lp_schedule s = {1, 2, 3, 4};
    char small[8];
    assert_int_equal(lp_schedule_format(&s, small, sizeof small), 33);
    assert_string_equal(small, "wait=1,");
    assert_int_equal(lp_schedule_format(&s, NULL, 0), 33);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(wait_warmup_active_repeat_two),
        cmocka_unit_test(repeat_zero_cycles_forever),
        cmocka_unit_test(active_only_records_every_step_in_cycles),
        cmocka_unit_test(warmup_without_wait),
        cmocka_unit_test(no_schedule_records_everything),
        cmocka_unit_test(profiled_phases),
        cmocka_unit_test(large_values_do_not_overflow),
        cmocka_unit_test(parse_reads_keys_in_any_order),
        cmocka_unit_test(parse_errors_name_the_bad_part),
        cmocka_unit_test(format_round_trips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
