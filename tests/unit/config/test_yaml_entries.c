/* test_yaml_entries.c: the configuration's values that are more than one scalar (yaml_entries.c):
 * inputs, outputs and the schedule, with their positioned errors. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config_fixtures.h"
#include "layerprof.h"

static void shape_with_a_zero_points_at_the_dimension(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_shape_zero.yaml", LP_ERR_INVALID, "3:19",
                                        "must be a positive integer, got '0'");
    check_excerpt(msg, "  - shape: [1, 3, 0, 224]", 19);
}

static void shape_with_a_letter_points_at_the_dimension(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_shape_letter.yaml", LP_ERR_INVALID, "4:24",
                                        "must be a positive integer, got '22a'");
    check_excerpt(msg, "    shape: [1, 3, 224, 22a]", 24);
}

static void unknown_dtype_suggests_a_dtype(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_unknown_dtype.yaml", LP_ERR_INVALID, "4:12",
                                        "unknown dtype 'int46'; did you mean 'int16'?");
    check_excerpt(msg, "    dtype: int46", 12);
}

static void too_many_inputs_points_at_the_first_extra(void **state) {
    (void)state;
    char yaml[2048] = "inputs:\n";
    for (int i = 0; i < LP_MAX_INPUTS + 1; i++)
        strcat(yaml, "  - {shape: [1]}\n");
    expect_error(yaml, "66:5", "at most 64 input entries are allowed");
}

static void inputs_written_as_text_are_structured_arguments(void **state) {
    (void)state;
    lp_config *cfg = parse_ok("inputs:\n"
                              "  - \"[3x320x320, 3x240x320]\"\n"
                              "  - {shape: [2], dtype: int64, range: [0, 9]}\n"
                              "  - int:5\n"
                              "  - saved:args.pt\n");
    const lp_options *o = lp_config_options(cfg);
    assert_int_equal(o->n_inputs, 6);
    assert_int_equal(o->inputs[0].kind, LP_INPUT_LIST);
    assert_int_equal(o->inputs[0].n_items, 2);
    assert_int_equal(o->inputs[2].shape[1], 240);
    assert_int_equal(o->inputs[3].kind, LP_INPUT_TENSOR);
    assert_int_equal(o->inputs[3].dtype, LP_DTYPE_INT64);
    assert_int_equal(o->inputs[4].kind, LP_INPUT_INT);
    assert_int_equal(o->inputs[4].integer, 5);
    assert_int_equal(o->inputs[5].kind, LP_INPUT_SAVED);
    assert_string_equal(o->inputs[5].file, "args.pt");
    lp_config_free(cfg);
    expect_error("inputs:\n  - 1x3\n  - \"[1x3, int:x]\"\n", "3:5",
                 "input '[1x3, int:x]': bad integer 'int:x'");
    expect_error("inputs:\n  - ''\n", "2:5", "an input written as text cannot be empty");
    expect_error("inputs:\n  - [1x3]\n", "2:5", "or one argument as text");
}

static void schedule_as_a_mapping_or_a_string_and_summary(void **state) {
    (void)state;
    lp_config *cfg = parse_ok("model: m.pt\n"
                              "schedule:\n"
                              "  repeat: 2\n"
                              "  wait: 1\n"
                              "  active: 3\n"
                              "summary: true\n");
    const lp_options *o = lp_config_options(cfg);
    assert_int_equal(o->schedule.wait, 1);
    assert_int_equal(o->schedule.warmup, 0);
    assert_int_equal(o->schedule.active, 3);
    assert_int_equal(o->schedule.repeat, 2);
    assert_int_equal(o->summary, 1);
    assert_int_equal(lp_options_validate(o), LP_OK);
    lp_config_free(cfg);

    /* --schedule's spelling, quoted or not. */
    cfg = parse_ok("schedule: wait=1,warmup=2,active=3,repeat=4\nsummary: off\n");
    o = lp_config_options(cfg);
    assert_int_equal(o->schedule.wait, 1);
    assert_int_equal(o->schedule.warmup, 2);
    assert_int_equal(o->schedule.active, 3);
    assert_int_equal(o->schedule.repeat, 4);
    assert_int_equal(o->summary, 0);
    lp_config_free(cfg);
    cfg = parse_ok("schedule: \"active=5\"\n");
    o = lp_config_options(cfg);
    assert_int_equal(o->schedule.active, 5);
    assert_int_equal(o->schedule.wait, 0);
    lp_config_free(cfg);

    /* null is no schedule. */
    cfg = parse_ok("schedule: ~\n");
    o = lp_config_options(cfg);
    assert_int_equal(o->schedule.active, 0);
    assert_int_equal(o->schedule.wait, 0);
    lp_config_free(cfg);

    /* Outputs written once per cycle: "%d" in a name is just a name here; summary is a format. */
    cfg = parse_ok("outputs:\n"
                   "  - {format: json, file: \"reports/cycle_%d.json\"}\n"
                   "  - {format: summary, file: summary_%d.md}\n");
    o = lp_config_options(cfg);
    assert_int_equal(o->n_outputs, 2);
    assert_int_equal(o->outputs[0].format, LP_FORMAT_JSON);
    assert_string_equal(o->outputs[0].file, "reports/cycle_%d.json");
    assert_int_equal(o->outputs[1].format, LP_FORMAT_SUMMARY);
    assert_string_equal(o->outputs[1].file, "summary_%d.md");
    lp_config_free(cfg);
}

static void schedule_and_summary_errors_are_positioned(void **state) {
    (void)state;
    static const struct {
        const char *yaml, *pos, *needle;
    } cases[] = {
        {"schedule: {wait: 1, actve: 2}", "1:21",
         "unknown key 'actve' in 'schedule'; did you mean 'active'?"},
        {"schedule: {active: 0}", "1:20", "'active' must be an integer >= 1, got '0'"},
        {"schedule: {wait: -1, active: 1}", "1:18", "'wait' must be an integer >= 0, got '-1'"},
        {"schedule: {active: 1, repeat: x}", "1:31",
         "'repeat' must be an integer >= 0 (0: no limit), got 'x'"},
        {"schedule: {wait: 2}", "1:11",
         "'schedule' needs 'active', the steps recorded per cycle (at least 1)"},
        {"schedule: {}", "1:11", "'schedule' needs 'active'"},
        {"schedule:\n  wait: 1\n  wait: 2\n  active: 1\n", "3:3",
         "duplicate key 'wait' (first at line 2)"},
        {"schedule: \"wait=1,actve=2\"", "1:11",
         "schedule 'wait=1,actve=2': unknown key 'actve'; did you mean 'active'?"},
        {"schedule: active=0", "1:11",
         "schedule 'active=0': 'active' must be at least 1 (the steps recorded per cycle)"},
        {"schedule: 3", "1:11", "schedule '3': '3' is not KEY=N"},
        {"schedule: [1, 2]", "1:11",
         "'schedule' must be a mapping of wait, warmup, active and repeat, or a string such as "
         "\"wait=1,warmup=1,active=3,repeat=2\", got a list"},
        {"schedule: \"active=1\\0\"", "1:11", "'schedule' must be a mapping"},
        {"active: 3", "1:1", "unknown key 'active' in the top level; it belongs under 'schedule'"},
        {"summary: maybe", "1:10", "'summary' must be true or false, got 'maybe'"},
        {"summary: [true]", "1:10", "'summary' must be true or false, got a list"},
        {"outputs: [{format: summry}]", "1:20",
         "'format' must be tree, json, csv, markdown, trace, html, summary or openmetrics, got "
         "'summry'; did "
         "you mean 'summary'?"},
        {"outputs: [{format: excel}]", "1:20",
         "'format' must be tree, json, csv, markdown, trace, html, summary or openmetrics, got "
         "'excel'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error(cases[i].yaml, cases[i].pos, cases[i].needle);
    check_excerpt(expect_error("model: m.pt\nschedule: {wait: 1, actve: 2}\n", "2:21",
                               "did you mean 'active'?"),
                  "schedule: {wait: 1, actve: 2}", 21);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shape_with_a_zero_points_at_the_dimension),
        cmocka_unit_test(shape_with_a_letter_points_at_the_dimension),
        cmocka_unit_test(unknown_dtype_suggests_a_dtype),
        cmocka_unit_test(too_many_inputs_points_at_the_first_extra),
        cmocka_unit_test(inputs_written_as_text_are_structured_arguments),
        cmocka_unit_test(schedule_as_a_mapping_or_a_string_and_summary),
        cmocka_unit_test(schedule_and_summary_errors_are_positioned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
