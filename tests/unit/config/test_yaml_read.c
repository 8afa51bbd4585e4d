/* test_yaml_read.c: YAML configuration files read into lp_options (yaml_read.c). Every error
 * class is checked down to its exact line:column, since pointing at the mistake is the feature. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, close, unlink */

#include <unistd.h>
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

static void unknown_key_suggests_the_closest_key(void **state) {
    (void)state;
    const char *msg =
        expect_file_error("err_unknown_key.yaml", LP_ERR_INVALID, "3:1",
                          "unknown key 'iteratons' in the top level; did you mean 'iterations'?");
    check_excerpt(msg, "iteratons: 10", 1);
}

static void wrong_type_names_the_type_expected(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_wrong_type.yaml", LP_ERR_INVALID, "3:11",
                                        "'memory' must be true or false, got a list");
    check_excerpt(msg, "  memory: [true]", 11);
}

static void negative_iterations_are_out_of_range(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_negative_iterations.yaml", LP_ERR_INVALID, "3:13",
                                        "'iterations' must be an integer from 1 to");
    check_excerpt(msg, "iterations: -5", 13);
}

static void unknown_device_suggests_cuda_for_gpu(void **state) {
    (void)state;
    const char *msg =
        expect_file_error("err_unknown_device.yaml", LP_ERR_INVALID, "2:11",
                          "'device' must be cpu, cuda or cuda:N, got 'gpu'; did you mean 'cuda'?");
    check_excerpt(msg, "device:   gpu", 11);
}

static void empty_file_says_it_is_empty(void **state) {
    (void)state;
    const char *msg =
        expect_file_error("err_empty.yaml", LP_ERR_INVALID, "1:1", "the configuration is empty");
    assert_null(strchr(msg, '\n')); /* nothing to quote */
}

static void top_level_list_is_not_a_mapping(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_not_mapping.yaml", LP_ERR_INVALID, "2:1",
                                        "the top level must be a mapping of options");
    check_excerpt(msg, "- model: models/resnet18.pt", 1);
}

static void missing_file_is_an_io_error(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    const char *path = CFG_DIR "does_not_exist.yaml";
    assert_int_equal(lp_config_load(&cfg, path), LP_ERR_IO);
    assert_null(cfg);
    assert_memory_equal(lp_error_last(), path, strlen(path));
    assert_non_null(strstr(lp_error_last(), "cannot open the configuration file"));
}

static void directory_is_an_io_error(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    assert_int_equal(lp_config_load(&cfg, CFG_DIR), LP_ERR_IO);
    assert_null(cfg);
    assert_non_null(strstr(lp_error_last(), "cannot read the configuration file"));
}

static void other_errors_are_positioned(void **state) {
    (void)state;
    static const struct {
        const char *yaml, *pos, *needle;
    } cases[] = {
        {"mode: fast", "1:7", "'mode' must be hooks, graph or markers, got 'fast'"},
        {"display: {units: sec}", "1:18", "'units' must be auto, us, ms or s, got 'sec'"},
        {"outputs: [{format: xml}]", "1:20",
         "'format' must be tree, json, csv, markdown, trace, html, summary or openmetrics, got "
         "'xml'"},
        {"display:\n  sort: cpu_totl\n", "2:9",
         "'sort' must be a column id, got 'cpu_totl'; did you mean 'cpu_total'?"},
        {"display: {columns: [self_cpu, nope_nope]}", "1:31",
         "'columns' must be column ids (one of: self_cpu,"},
        {"warmup: 1\nwarmup: 2\n", "2:1", "duplicate key 'warmup' (first at line 1)"},
        {"display: {dept: 3}", "1:11", "unknown key 'dept' in 'display'; did you mean 'depth'?"},
        {"depth: 3", "1:1", "unknown key 'depth' in the top level; it belongs under 'display'"},
        {"model: m.pt\nmemory: true", "2:1", "it belongs under 'profile'"},
        {"colour: red", "1:1",
         "unknown key 'colour' in the top level (expected one of: model, device,"},
        {"outputs: [{format: tree, fil: x}]", "1:26",
         "unknown key 'fil' in an output; did you mean 'file'?"},
        {"inputs:\n  - {shape: [1], fill: zeros, range: [0, 1]}\n", "2:38",
         "'range' applies to random values only, not to zeros"},
        {"inputs: [{shape: [2], file: a.bin, fill: ones}]", "1:42",
         "'fill: ones' conflicts with 'file'"},
        {"inputs: [{shape: [2], fill: file}]", "1:29", "'fill: file' needs a 'file' to read"},
        {"inputs: [{dtype: float32}]", "1:10", "an input needs a 'shape'"},
        {"inputs: [{shape: [1], dtype: int32}]", "1:10",
         "random int32 values need a 'range: [low, high]'"},
        {"inputs: [{shape: [1], range: [1, 1]}]", "1:30", "'range' is empty"},
        {"inputs: [{shape: [1], range: [0, x]}]", "1:30",
         "'range' must be [low, high], two numbers"},
        {"inputs: [{shape: [1], range: [0, 1, 2]}]", "1:30", "'range' must be"},
        {"inputs: [{shape: [1, 2, 3, 4, 5, 6, 7, 8, 9]}]", "1:18",
         "'shape' must have 1 to 8 dimensions, got 9"},
        {"inputs: [{shape: []}]", "1:18", "'shape' must have 1 to 8 dimensions, got 0"},
        {"inputs: [{shape: [-1]}]", "1:19", "must be a positive integer, got '-1'"},
        {"inputs: [{shape: 1x3}]", "1:18",
         "'shape' must be a list of positive integers, got '1x3'"},
        {"inputs: [{shape: [1], dtype: }]", "1:30", "'dtype' must be float32,"},
        {"inputs: [[1, 2]]", "1:10", "each entry of 'inputs' must be a mapping"},
        {"inputs: &a [*a]", "1:9", "each entry of 'inputs' must be a mapping"},
        {"inputs: {shape: [1]}", "1:9", "'inputs' must be a list of inputs"},
        {"inputs: [{shape: [1], file: ''}]", "1:29",
         "'file' must be the path of a raw data file, got ''"},
        {"seed: -1", "1:7", "'seed' must be an integer >= 0, got '-1'"},
        {"seed: 18446744073709551616", "1:7", "'seed' must be an integer >= 0"},
        {"iterations: 1.5", "1:13", "got '1.5'"},
        {"iterations: 0x10", "1:13", "got '0x10'"},
        {"iterations: '10'", "1:13", "got '10'"},
        {"iterations: 0", "1:13", "'iterations' must be an integer from 1 to"},
        {"iterations: 99999999999999999999", "1:13", "'iterations' must be an integer"},
        {"iterations:", "1:12", "'iterations' must be an integer from 1 to 10000000, got null"},
        {"threads: 2000", "1:10", "'threads' must be an integer from 0 (libtorch's default) to"},
        {"display: {depth: -2}", "1:18", "'depth' must be an integer >= -1"},
        {"display: {top: -1}", "1:16", "'top' must be an integer >= 0"},
        {"verbose: maybe", "1:10", "'verbose' must be true or false, got 'maybe'"},
        {"model: ''", "1:8", "'model' must be the path of a TorchScript file, got ''"},
        {"model: [a.pt]", "1:8", "'model' must be the path of a TorchScript file, got a list"},
        {"model: \"a\\0b\"", "1:8", "'model' must be the path of a TorchScript file"},
        {"profile: true", "1:10",
         "'profile' must be a mapping of memory, events, shapes, trace, trace_iterations, "
         "cuda_timing "
         "and nvtx, got 'true'"},
        {"paths: layer1", "1:8", "'paths' must be a list of module paths, got 'layer1'"},
        {"paths: [a, [b]]", "1:12", "each entry of 'paths' must be a string, got a list"},
        {"paths: [a, ~]", "1:12", "each entry of 'paths' must be a string, got null"},
        {"device: cuda:x", "1:9", "'device' must be cpu, cuda or cuda:N, got 'cuda:x'"},
        {"device: tpu", "1:9", "'device' must be cpu, cuda or cuda:N, got 'tpu'"},
        {"x: 1\n---\ny: 2\n", "3:1", "a second YAML document"},
        {"? [a]\n: 1\n", "1:3", "keys in the top level must be names, got a list"},
        {"42", "1:1", "the top level must be a mapping of options (key: value), got '42'"},
        {"# only a comment\n", "1:1", "the configuration is empty"},
        {"---\n", "2:1", "the configuration is empty"},
        {"model: [a.pt", "2:1",
         "syntax error at the end of the file: did not find expected ',' or ']' (while parsing a "
         "flow sequence at line 1, column 8)"},
        {"model: \xff\n", "1:8", "syntax error: invalid leading UTF-8 octet"},
        {"model: a\nwarmup: *nope\n", "2:9", "syntax error: found undefined alias"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        expect_error(cases[i].yaml, cases[i].pos, cases[i].needle);
}

static void long_values_are_clipped_and_long_paths_refused(void **state) {
    (void)state;
    char yaml[6000] = "verbose: ";
    memset(yaml + strlen(yaml), 'x', 300);
    const char *msg = expect_error(yaml, "1:10", "'verbose' must be true or false, got 'xxx");
    const char *nl = strchr(msg, '\n');
    assert_non_null(nl);
    assert_true(nl - msg < 160);
    assert_memory_equal(nl - 4, "...'", 4);

    strcpy(yaml, "inputs: [{shape: [1], file: ");
    memset(yaml + strlen(yaml), 'f', LP_PATH_MAX);
    strcat(yaml, "}]");
    expect_error(yaml, "1:29", "'file' is longer than 4095 bytes");
}

static void oversized_file_is_refused(void **state) {
    (void)state;
    char path[] = "/tmp/lp_test_config_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (int i = 0; i < 40000; i++)
        fputs("# a comment line that is forty bytes ..\n", f);
    fclose(f);
    lp_config *cfg = NULL;
    int rc = lp_config_load(&cfg, path);
    unlink(path);
    assert_int_equal(rc, LP_ERR_INVALID);
    assert_null(cfg);
    assert_non_null(strstr(lp_error_last(), "not a configuration file?"));
}

static void name_defaults_to_string(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    assert_int_equal(lp_config_parse_string(&cfg, "verbose: 2", NULL), LP_ERR_INVALID);
    check_message(lp_error_last(), "<string>", "1:10", "'verbose' must be true or false");
}

static void null_arguments_are_refused(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    assert_int_equal(lp_config_parse_string(NULL, "a: 1", "x"), LP_ERR_INVALID);
    assert_int_equal(lp_config_parse_string(&cfg, NULL, "x"), LP_ERR_INVALID);
    assert_null(cfg);
    assert_int_equal(lp_config_load(NULL, "x"), LP_ERR_INVALID);
    assert_int_equal(lp_config_load(&cfg, NULL), LP_ERR_INVALID);
    assert_null(cfg);
    assert_null(lp_config_options(NULL));
    lp_config_free(NULL);
    assert_int_equal(lp_options_write_yaml(NULL, stdout), LP_ERR_INVALID);
    lp_options o;
    lp_options_init(&o);
    assert_int_equal(lp_options_write_yaml(&o, NULL), LP_ERR_INVALID);
}

static void full_fixture_sets_every_option(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    if (lp_config_load(&cfg, CFG_DIR "valid_full.yaml") != LP_OK) fail_msg("%s", lp_error_last());
    const lp_options *o = lp_config_options(cfg);
    assert_int_equal(o->version, LP_OPTIONS_VERSION);
    assert_string_equal(o->model_path, "models/resnet18.pt");
    assert_string_equal(o->device, "cuda:0");
    assert_int_equal(o->mode, LP_MODE_GRAPH);

    assert_int_equal(o->n_inputs, 4);
    const lp_input_spec *in = o->inputs;
    assert_int_equal(in[0].ndim, 4);
    assert_int_equal(in[0].shape[0], 1);
    assert_int_equal(in[0].shape[1], 3);
    assert_int_equal(in[0].shape[2], 224);
    assert_int_equal(in[0].shape[3], 224);
    assert_int_equal(in[0].dtype, LP_DTYPE_FLOAT16);
    assert_int_equal(in[0].fill, LP_FILL_ONES);
    assert_false(in[0].has_range);
    assert_int_equal(in[1].ndim, 2);
    assert_int_equal(in[1].dtype, LP_DTYPE_INT64);
    assert_int_equal(in[1].fill, LP_FILL_RANDOM);
    assert_true(in[1].has_range);
    assert_true(in[1].low == 0.0 && in[1].high == 999.0);
    assert_int_equal(in[2].dtype, LP_DTYPE_FLOAT32); /* "float" is an alias */
    assert_true(in[2].low == -0.5 && in[2].high == 0.25);
    assert_int_equal(in[3].fill, LP_FILL_FILE);
    assert_int_equal(in[3].dtype, LP_DTYPE_UINT8);
    assert_string_equal(in[3].file, "data/raw input.bin");

    assert_true(o->seed == 12345678901234ull);
    assert_int_equal(o->warmup, 3);
    assert_int_equal(o->iterations, 25);
    assert_int_equal(o->threads, 4);
    assert_int_equal(o->memory, 1);
    assert_int_equal(o->events, 1);
    assert_int_equal(o->shapes, 1);
    assert_int_equal(o->n_paths, 3);
    assert_string_equal(o->paths[0], "layer1");
    assert_string_equal(o->paths[1], "features.*");
    assert_string_equal(o->paths[2], "AlexNet,features,3");
    assert_int_equal(o->depth, 3);
    assert_string_equal(o->sort, "cpu_total");
    assert_int_equal(o->top, 10);
    assert_int_equal(o->n_columns, 3);
    assert_string_equal(o->columns[0], "self_cpu");
    assert_string_equal(o->columns[1], "cpu_total");
    assert_string_equal(o->columns[2], "calls");
    assert_int_equal(o->units, LP_UNITS_MS);
    assert_int_equal(o->ascii, 1);
    assert_int_equal(o->n_outputs, 2);
    assert_int_equal(o->outputs[0].format, LP_FORMAT_TREE);
    assert_string_equal(o->outputs[0].file, "-");
    assert_string_equal(o->outputs[1].file, "reports/resnet18.txt");
    assert_int_equal(o->verbose, 1);
    assert_int_equal(lp_options_validate(o), LP_OK);
    lp_config_free(cfg);
}

static void minimal_fixture_keeps_the_defaults(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    if (lp_config_load(&cfg, CFG_DIR "valid_minimal.yaml") != LP_OK)
        fail_msg("%s", lp_error_last());
    lp_options want;
    lp_options_init(&want);
    want.model_path = "models/resnet18.pt";
    assert_options_equal(&want, lp_config_options(cfg));
    lp_config_free(cfg);
}

static void examples_load_and_validate(void **state) {
    (void)state;
    static const char *const files[] = {"basic.yaml", "memory_events.yaml", "paths.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[1024];
        lp_config *cfg = NULL;
        snprintf(path, sizeof path, EXAMPLES_DIR "%s", files[i]);
        if (lp_config_load(&cfg, path) != LP_OK) fail_msg("%s", lp_error_last());
        if (lp_options_validate(lp_config_options(cfg)) != LP_OK)
            fail_msg("%s: %s", files[i], lp_error_last());
        check_round_trip(lp_config_options(cfg));
        lp_config_free(cfg);
    }
}

static void nulls_aliases_and_boolean_spellings(void **state) {
    (void)state;
    lp_config *cfg = parse_ok("model: ~\n"
                              "device: null\n"
                              "warmup: &n 7\n"
                              "iterations: *n\n"
                              "profile: {memory: YES, events: Off, shapes: no}\n"
                              "display: {sort: , ascii: True}\n"
                              "inputs: [{shape: [3], dtype: bool}, {shape: [2], fill: zero}]\n"
                              "outputs: [{file: NULL}]\n");
    const lp_options *o = lp_config_options(cfg);
    assert_null(o->model_path);
    assert_null(o->device);
    assert_int_equal(o->warmup, 7);
    assert_int_equal(o->iterations, 7);
    assert_int_equal(o->memory, 1);
    assert_int_equal(o->events, 0);
    assert_int_equal(o->shapes, 0);
    assert_null(o->sort);
    assert_int_equal(o->ascii, 1);
    assert_int_equal(o->inputs[0].dtype, LP_DTYPE_BOOL); /* random bools need no range */
    assert_int_equal(o->inputs[1].fill, LP_FILL_ZEROS);
    assert_int_equal(o->n_outputs, 1);
    assert_int_equal(o->outputs[0].format, LP_FORMAT_TREE);
    assert_null(o->outputs[0].file);
    lp_config_free(cfg);
}

static void quoted_strings_stay_strings(void **state) {
    (void)state;
    lp_config *cfg = parse_ok("model: \"null\"\npaths: ['true', \"123\", '~']\n");
    const lp_options *o = lp_config_options(cfg);
    assert_string_equal(o->model_path, "null");
    assert_string_equal(o->paths[0], "true");
    assert_string_equal(o->paths[1], "123");
    assert_string_equal(o->paths[2], "~");
    lp_config_free(cfg);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_key_suggests_the_closest_key),
        cmocka_unit_test(wrong_type_names_the_type_expected),
        cmocka_unit_test(negative_iterations_are_out_of_range),
        cmocka_unit_test(unknown_device_suggests_cuda_for_gpu),
        cmocka_unit_test(empty_file_says_it_is_empty),
        cmocka_unit_test(top_level_list_is_not_a_mapping),
        cmocka_unit_test(missing_file_is_an_io_error),
        cmocka_unit_test(directory_is_an_io_error),
        cmocka_unit_test(other_errors_are_positioned),
        cmocka_unit_test(long_values_are_clipped_and_long_paths_refused),
        cmocka_unit_test(oversized_file_is_refused),
        cmocka_unit_test(name_defaults_to_string),
        cmocka_unit_test(null_arguments_are_refused),
        cmocka_unit_test(full_fixture_sets_every_option),
        cmocka_unit_test(minimal_fixture_keeps_the_defaults),
        cmocka_unit_test(examples_load_and_validate),
        cmocka_unit_test(nulls_aliases_and_boolean_spellings),
        cmocka_unit_test(quoted_strings_stay_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
