/* test_options_set.c: lp_options_set and lp_options_release (options_set.c): keys, list semantics,
 * defaults restored by NULL, ownership by the options' store, and messages that are the YAML
 * reader's for the same value. */
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

static void set_ok(lp_options *o, const char *key, const char *value) {
    if (lp_options_set(o, key, value) != LP_OK)
        fail_msg("%s = '%s': %s", key, value ? value : "NULL", lp_error_last());
}

static void scalars_are_set_from_text(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    set_ok(&o, "iterations", "50");
    set_ok(&o, "profile.memory", "true");
    set_ok(&o, "mode", "graph");
    set_ok(&o, "display.sort", "calls");
    set_ok(&o, "seed", "42");
    set_ok(&o, "schedule", "wait=1,active=2");
    assert_int_equal(o.iterations, 50);
    assert_int_equal(o.memory, 1);
    assert_int_equal(o.mode, LP_MODE_GRAPH);
    assert_string_equal(o.sort, "calls");
    assert_true(o.seed == 42);
    assert_int_equal(o.schedule.active, 2);
    o.model_path = "m.pt";
    assert_int_equal(lp_options_validate(&o), LP_OK);
    lp_options_release(&o);
}

static void strings_belong_to_the_options_store(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    assert_null(o.store);
    set_ok(&o, "paths", NULL); /* a reset needs no store */
    assert_null(o.store);
    char path[] = "features.3", model[] = "m.pt";
    set_ok(&o, "paths", path);
    set_ok(&o, "model", model);
    assert_non_null(o.store);
    memset(path, 'x', strlen(path));
    memset(model, 'x', strlen(model));
    assert_string_equal(o.paths[0], "features.3");
    assert_string_equal(o.model_path, "m.pt");
    /* A copy shares the store; releasing the original resets it to the defaults. */
    lp_options copy = o;
    assert_ptr_equal(copy.store, o.store);
    lp_options_release(&o);
    assert_null(o.store);
    assert_null(o.paths);
    assert_int_equal(o.n_paths, 0);
    assert_int_equal(o.iterations, 10);
    lp_options_release(&o); /* twice: nothing left to free */
    lp_options_release(NULL);
}

static void lists_append_or_replace_and_null_restores_the_default(void **state) {
    (void)state;
    static const char *const borrowed[] = {"block"};
    lp_options o;
    lp_options_init(&o);
    o.paths = borrowed; /* set by hand: appending keeps it, borrowed as it was */
    o.n_paths = 1;
    set_ok(&o, "paths", "stem");
    assert_int_equal(o.n_paths, 2);
    assert_string_equal(o.paths[0], "block");
    assert_string_equal(o.paths[1], "stem");
    set_ok(&o, "paths", NULL);
    assert_int_equal(o.n_paths, 0);
    assert_null(o.paths);

    set_ok(&o, "display.columns", "self_cpu,calls");
    set_ok(&o, "display.columns", "mean");
    assert_int_equal(o.n_columns, 1);
    assert_string_equal(o.columns[0], "mean");

    set_ok(&o, "inputs", "1x3");
    set_ok(&o, "input_file", "x.bin:4");
    set_ok(&o, "outputs", "json:r.json");
    set_ok(&o, "outputs", "tree");
    assert_int_equal(o.n_inputs, 2);
    assert_int_equal(o.n_outputs, 2);
    set_ok(&o, "input_file", NULL); /* one list, whichever key empties it */
    assert_int_equal(o.n_inputs, 0);

    set_ok(&o, "device", "cuda");
    set_ok(&o, "device", NULL);
    assert_string_equal(o.device, "cpu");
    set_ok(&o, "profile.memory", "yes");
    set_ok(&o, "profile.events", "on");
    set_ok(&o, "profile", NULL); /* a mapping: every key of it */
    assert_int_equal(o.memory, 0);
    assert_int_equal(o.events, 0);
    set_ok(&o, "schedule", "active=3");
    set_ok(&o, "schedule", NULL);
    assert_int_equal(o.schedule.active, 0);
    lp_options_release(&o);
}

static void every_default_text_sets_the_default(void **state) {
    (void)state;
    lp_options defaults, o;
    lp_options_init(&defaults);
    lp_options_init(&o);
    for (size_t i = 0; i < lp_options_key_count(); i++) {
        lp_option_info info;
        assert_int_equal(lp_options_key(i, &info), LP_OK);
        if (!info.takes_value && info.flag)
            set_ok(&o, info.key, "false");
        else if (!strcmp(info.default_text, "null") || !strcmp(info.default_text, "none") ||
                 !strcmp(info.key, "schedule.active") || strchr(info.default_text, ' '))
            set_ok(&o, info.key, NULL); /* no text for it: the default by NULL */
        else
            set_ok(&o, info.key, info.default_text);
    }
    assert_options_equal(&defaults, &o); /* field by field: the store aside */
    lp_options_release(&o);
}

static void bad_keys_and_values(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    assert_int_equal(lp_options_set(&o, "iteratons", "3"), LP_ERR_NOT_FOUND);
    assert_string_equal(lp_error_last(), "unknown option 'iteratons'; did you mean 'iterations'?");
    assert_int_equal(lp_options_set(&o, "sort", "calls"), LP_ERR_NOT_FOUND);
    assert_string_equal(lp_error_last(), "unknown option 'sort'; did you mean 'display.sort'?");
    assert_int_equal(lp_options_set(&o, "colour", "red"), LP_ERR_NOT_FOUND);
    assert_non_null(strstr(lp_error_last(), "unknown option 'colour' (keys are the YAML config's"));
    assert_int_equal(lp_options_set(&o, "display", "x"), LP_ERR_INVALID);
    assert_int_equal(lp_options_set(&o, "iterations", "0"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(),
                        "'iterations' must be an integer from 1 to 10000000, got '0'");
    assert_int_equal(o.iterations, 10);
    assert_int_equal(lp_options_set(NULL, "iterations", "3"), LP_ERR_INVALID);
    assert_int_equal(lp_options_set(&o, NULL, "3"), LP_ERR_INVALID);
    lp_options raw;
    memset(&raw, 0, sizeof raw);
    assert_int_equal(lp_options_set(&raw, "iterations", "3"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "initialise with lp_options_init"));
    lp_options_release(&o);
}

/* The message for a bad value is the file's, after its position: one check, one text. */
static void messages_are_the_yaml_readers(void **state) {
    (void)state;
    static const struct {
        const char *key, *value, *yaml;
    } cases[] = {
        {"iterations", "abc", "iterations: abc"},
        {"display.sort", "cpu_totl", "display: {sort: cpu_totl}"},
        {"display.columns", "calls,nope_nope", "display: {columns: [calls, nope_nope]}"},
        {"mode", "fast", "mode: fast"},
        {"display.units", "minutes", "display: {units: minutes}"},
        {"profile.cuda_timing", "cupt", "profile: {cuda_timing: cupt}"},
        {"device", "gpu", "device: gpu"},
        {"verbose", "maybe", "verbose: maybe"},
        {"seed", "-1", "seed: -1"},
        {"schedule", "wait=1", "schedule: wait=1"},
        {"outputs", "excel:r.xls", "outputs: [{format: excel, file: r.xls}]"},
        {"schedule.active", "0", "schedule: {active: 0}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        lp_options o;
        lp_options_init(&o);
        char from_set[1024], from_yaml[1024];
        assert_int_equal(lp_options_set(&o, cases[i].key, cases[i].value), LP_ERR_INVALID);
        snprintf(from_set, sizeof from_set, "%s", lp_error_last());
        lp_config *cfg = NULL;
        assert_int_equal(lp_config_parse_string(&cfg, cases[i].yaml, "t.yaml"), LP_ERR_INVALID);
        const char *body = strstr(lp_error_last(), ": "); /* after "t.yaml:1:7" */
        assert_non_null(body);
        snprintf(from_yaml, sizeof from_yaml, "%.*s", (int)strcspn(body + 2, "\n"), body + 2);
        if (strcmp(from_set, from_yaml) != 0)
            fail_msg("%s '%s':\n  set:  %s\n  yaml: %s", cases[i].key, cases[i].value, from_set,
                     from_yaml);
        lp_options_release(&o);
    }
}

/* Options made by lp_options_set write and read back like any others. */
static void set_options_round_trip_through_yaml(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    set_ok(&o, "model", "models/resnet18.pt");
    set_ok(&o, "inputs", "1x3x224x224:float16:ones");
    set_ok(&o, "input_file", "a:b.bin:2x2:int8");
    set_ok(&o, "paths", "layer1");
    set_ok(&o, "paths", "AlexNet,features,3");
    set_ok(&o, "display.columns", "self_cpu,calls");
    set_ok(&o, "outputs", "json:r.json");
    set_ok(&o, "outputs", "summary");
    set_ok(&o, "schedule", "wait=1,warmup=1,active=3,repeat=2");
    set_ok(&o, "profile.trace_iterations", "5");
    check_round_trip(&o);
    lp_options_release(&o);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scalars_are_set_from_text),
        cmocka_unit_test(strings_belong_to_the_options_store),
        cmocka_unit_test(lists_append_or_replace_and_null_restores_the_default),
        cmocka_unit_test(every_default_text_sets_the_default),
        cmocka_unit_test(bad_keys_and_values),
        cmocka_unit_test(messages_are_the_yaml_readers),
        cmocka_unit_test(set_options_round_trip_through_yaml),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
