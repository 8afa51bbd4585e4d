/* test_options.c: lp_options defaults and validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/option_parse.h"
#include "layerprof.h"

static lp_options valid_options(void) {
    lp_options o;
    lp_options_init(&o);
    o.model_path = "model.pt";
    return o;
}

/* Validation fails as invalid, with a message that contains `why`. */
#define ASSERT_INVALID(opts, why)                                                                  \
    do {                                                                                           \
        assert_int_equal(lp_options_validate(opts), LP_ERR_INVALID);                               \
        if (!strstr(lp_error_last(), (why)))                                                       \
            fail_msg("message '%s' does not say '%s'", lp_error_last(), (why));                    \
    } while (0)

static void test_init_fills_in_the_documented_defaults(void **state) {
    (void)state;
    lp_options o;
    memset(&o, 0xA5, sizeof o);
    lp_options_init(&o);
    assert_int_equal(o.version, LP_OPTIONS_VERSION);
    assert_null(o.model_path);
    assert_string_equal(o.device, "cpu");
    assert_int_equal(o.mode, LP_MODE_MARKERS);
    assert_null(o.inputs);
    assert_int_equal(o.n_inputs, 0);
    assert_int_equal(o.seed, 0);
    assert_int_equal(o.warmup, 3);
    assert_int_equal(o.iterations, 10);
    assert_int_equal(o.threads, 0);
    assert_int_equal(o.memory, 0);
    assert_int_equal(o.events, 0);
    assert_int_equal(o.shapes, 0);
    assert_null(o.paths);
    assert_int_equal(o.n_paths, 0);
    assert_int_equal(o.depth, -1);
    assert_null(o.sort);
    assert_int_equal(o.top, 0);
    assert_null(o.columns);
    assert_int_equal(o.n_columns, 0);
    assert_int_equal(o.units, LP_UNITS_AUTO);
    assert_int_equal(o.ascii, 0);
    assert_null(o.outputs);
    assert_int_equal(o.n_outputs, 0);
    assert_int_equal(o.verbose, 0);
    assert_int_equal(o.schedule.wait, 0);
    assert_int_equal(o.schedule.warmup, 0);
    assert_int_equal(o.schedule.active, 0);
    assert_int_equal(o.schedule.repeat, 0);
    assert_null(o.on_cycle);
    assert_null(o.on_cycle_payload);
    assert_int_equal(o.summary, 0);
    lp_options_init(NULL); /* allowed, does nothing */
}

static void test_defaults_with_a_model_are_valid(void **state) {
    (void)state;
    lp_options o = valid_options();
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.device = NULL; /* means cpu */
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.device = "cuda";
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.device = "cuda:0";
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.device = "cuda:12";
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.mode = LP_MODE_GRAPH;
    o.warmup = 0;
    o.iterations = 1;
    o.threads = 8;
    o.depth = 0;
    o.top = 5;
    o.units = LP_UNITS_S;
    assert_int_equal(lp_options_validate(&o), LP_OK);
}

static void test_a_missing_model_is_invalid(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    ASSERT_INVALID(&o, "no model file given");
    o.model_path = "";
    ASSERT_INVALID(&o, "no model file given");
}

static void test_null_or_uninitialised_options_are_invalid(void **state) {
    (void)state;
    ASSERT_INVALID(NULL, "options are NULL");
    lp_options o = valid_options();
    o.version = 0;
    ASSERT_INVALID(&o, "initialise with lp_options_init");
}

static void test_iteration_counts_out_of_range_are_invalid(void **state) {
    (void)state;
    lp_options o = valid_options();
    o.iterations = 0;
    ASSERT_INVALID(&o, "iterations must be between 1 and 10000000, not 0");
    o.iterations = -3;
    ASSERT_INVALID(&o, "iterations must be between 1");
    o.iterations = 10000001;
    ASSERT_INVALID(&o, "not 10000001");
    o.iterations = 10000000;
    assert_int_equal(lp_options_validate(&o), LP_OK);

    o = valid_options();
    o.warmup = -1;
    ASSERT_INVALID(&o, "warmup must be between 0 and 10000000, not -1");
    o.warmup = 10000001;
    ASSERT_INVALID(&o, "warmup must be");
}

static void test_unknown_devices_are_invalid(void **state) {
    (void)state;
    static const char *const bad[] = {"gpu",   "cuda:x", "cuda:",   "cuda:1x",   "CPU",
                                      "cudax", "",       "cuda:-1", "cuda:12345"};
    lp_options o = valid_options();
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.device = bad[i];
        assert_int_equal(lp_options_validate(&o), LP_ERR_INVALID);
        char want[64];
        snprintf(want, sizeof want, "unknown device '%s' (cpu, cuda or cuda:N)", bad[i]);
        if (!strstr(lp_error_last(), want)) fail_msg("'%s': message '%s'", bad[i], lp_error_last());
    }
}

static void test_device_parse_reads_the_cuda_index(void **state) {
    (void)state;
    int is_cuda = -7, index = -7;
    assert_int_equal(lp_device_parse("cpu", &is_cuda, &index), LP_OK);
    assert_int_equal(is_cuda, 0);
    assert_int_equal(index, -1);
    assert_int_equal(lp_device_parse(NULL, &is_cuda, &index), LP_OK);
    assert_int_equal(is_cuda, 0);
    assert_int_equal(lp_device_parse("cuda", &is_cuda, &index), LP_OK);
    assert_int_equal(is_cuda, 1);
    assert_int_equal(index, -1);
    assert_int_equal(lp_device_parse("cuda:3", &is_cuda, &index), LP_OK);
    assert_int_equal(is_cuda, 1);
    assert_int_equal(index, 3);
    assert_int_equal(lp_device_parse("cuda:999", &is_cuda, &index), LP_OK);
    assert_int_equal(index, 999);
    assert_int_equal(lp_device_parse("gpu", &is_cuda, &index), LP_ERR_INVALID);
}

static void test_other_out_of_range_fields_are_invalid(void **state) {
    (void)state;
    lp_options o = valid_options();
    o.mode = (lp_mode)7;
    ASSERT_INVALID(&o, "unknown mode 7");

    o = valid_options();
    o.threads = -1;
    ASSERT_INVALID(&o, "threads must be between 0");
    o.threads = 1025;
    ASSERT_INVALID(&o, "not 1025");

    o = valid_options();
    o.depth = -2;
    ASSERT_INVALID(&o, "depth must be -1");
    o = valid_options();
    o.top = -1;
    ASSERT_INVALID(&o, "top must be 0 or more");
    o = valid_options();
    o.units = (lp_units)9;
    ASSERT_INVALID(&o, "unknown units 9");
}

static void test_counts_without_arrays_are_invalid(void **state) {
    (void)state;
    lp_options o = valid_options();
    o.n_inputs = 1;
    ASSERT_INVALID(&o, "n_inputs is 1 but inputs is NULL");

    lp_input_spec inputs[LP_MAX_INPUTS + 1];
    memset(inputs, 0, sizeof inputs);
    o.inputs = inputs;
    o.n_inputs = LP_MAX_INPUTS + 1;
    ASSERT_INVALID(&o, "at most 64 inputs, not 65");
    o.n_inputs = 2;
    inputs[1].ndim = LP_MAX_DIMS + 1;
    ASSERT_INVALID(&o, "input 2: 9 dimensions");
    inputs[1].ndim = 1;
    assert_int_equal(lp_options_validate(&o), LP_OK);
    inputs[0].kind = LP_INPUT_TUPLE; /* a tuple of two items, with one left to hold them */
    inputs[0].n_items = 2;
    ASSERT_INVALID(&o, "input entries 1 to 2 are not one whole value");
    inputs[0].n_items = 1;
    assert_int_equal(lp_options_validate(&o), LP_OK);

    o = valid_options();
    o.n_paths = 2;
    ASSERT_INVALID(&o, "n_paths is 2 but paths is NULL");
    const char *paths[] = {"features", NULL};
    o.paths = paths;
    ASSERT_INVALID(&o, "path 2 is NULL");

    o = valid_options();
    o.n_columns = 1;
    ASSERT_INVALID(&o, "n_columns is 1 but columns is NULL");
    o = valid_options();
    o.n_outputs = 3;
    ASSERT_INVALID(&o, "n_outputs is 3 but outputs is NULL");
}

static void test_schedules_are_checked_field_by_field(void **state) {
    (void)state;
    lp_options o = valid_options();
    o.schedule = (lp_schedule){1, 1, 3, 2};
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.schedule = (lp_schedule){0, 0, 1, 0};
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.summary = 1;
    assert_int_equal(lp_options_validate(&o), LP_OK);

    o.schedule = (lp_schedule){-1, 0, 1, 0};
    ASSERT_INVALID(&o, "schedule.wait must be 0 or more, not -1");
    o.schedule = (lp_schedule){0, -2, 1, 0};
    ASSERT_INVALID(&o, "schedule.warmup must be 0 or more, not -2");
    o.schedule = (lp_schedule){0, 0, -3, 0};
    ASSERT_INVALID(&o, "schedule.active must be 0 or more, not -3");
    o.schedule = (lp_schedule){0, 0, 1, -4};
    ASSERT_INVALID(&o, "schedule.repeat must be 0 or more, not -4");
    /* Without active steps a schedule would never record: the field that was set is named. */
    o.schedule = (lp_schedule){0, 2, 0, 0};
    ASSERT_INVALID(&o, "schedule.warmup is 2 but schedule.active is 0");
    o.schedule = (lp_schedule){5, 0, 0, 0};
    ASSERT_INVALID(&o, "schedule.wait is 5 but schedule.active is 0");
    o.schedule = (lp_schedule){0, 0, 0, 3};
    ASSERT_INVALID(&o, "schedule.repeat is 3 but schedule.active is 0");
}

/* Everything the option table knows is checked here too, so a C program that fills the struct by
 * hand cannot start a run with a bad column, sort key or format whatever it renders. */
static void column_ids_sort_keys_and_formats_are_checked(void **state) {
    (void)state;
    lp_options o = valid_options();
    const char *good[] = {"self_cpu", "calls", "share"};
    o.columns = good;
    o.n_columns = 3;
    o.sort = "cpu_total";
    assert_int_equal(lp_options_validate(&o), LP_OK);

    const char *bad[] = {"self_cpu", "weights"};
    o.columns = bad;
    o.n_columns = 2;
    ASSERT_INVALID(&o, "display.columns must be column ids (one of: self_cpu,");
    ASSERT_INVALID(&o, "got 'weights'");
    o.n_columns = 1;
    assert_int_equal(lp_options_validate(&o), LP_OK);

    o.sort = "cpu_totl";
    ASSERT_INVALID(&o,
                   "display.sort must be a column id, got 'cpu_totl'; did you mean 'cpu_total'?");
    o.sort = "";
    ASSERT_INVALID(&o, "display.sort must be a column id, or null for model order, got ''");
    o.sort = NULL;
    assert_int_equal(lp_options_validate(&o), LP_OK);

    const char *many[33];
    for (size_t i = 0; i < 33; i++)
        many[i] = "calls";
    o.columns = many;
    o.n_columns = 33;
    ASSERT_INVALID(&o, "at most 32 columns, not 33");
    o.n_columns = 32;
    assert_int_equal(lp_options_validate(&o), LP_OK);

    lp_output_spec outputs[2] = {{LP_FORMAT_JSON, "r.json"}, {(lp_format)42, NULL}};
    o = valid_options();
    o.outputs = outputs;
    o.n_outputs = 1;
    assert_int_equal(lp_options_validate(&o), LP_OK);
    o.n_outputs = 2;
    ASSERT_INVALID(&o, "output 2: unknown format 42");

    o = valid_options();
    o.trace_iterations = -1;
    ASSERT_INVALID(&o,
                   "profile.trace_iterations must be between 0 (the first 3) and 10000000, not -1");
    o = valid_options();
    o.cuda_timing = (lp_cuda_timing)17;
    ASSERT_INVALID(&o, "unknown CUDA timing 17 (auto, cupti, events or off)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_fills_in_the_documented_defaults),
        cmocka_unit_test(test_defaults_with_a_model_are_valid),
        cmocka_unit_test(test_a_missing_model_is_invalid),
        cmocka_unit_test(test_null_or_uninitialised_options_are_invalid),
        cmocka_unit_test(test_iteration_counts_out_of_range_are_invalid),
        cmocka_unit_test(test_unknown_devices_are_invalid),
        cmocka_unit_test(test_device_parse_reads_the_cuda_index),
        cmocka_unit_test(test_other_out_of_range_fields_are_invalid),
        cmocka_unit_test(test_counts_without_arrays_are_invalid),
        cmocka_unit_test(test_schedules_are_checked_field_by_field),
        cmocka_unit_test(column_ids_sort_keys_and_formats_are_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
