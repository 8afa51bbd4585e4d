/* test_option_parse.c: one option's value from text (option_parse.c), the parse and the message
 * the CLI, lp_options_set and the YAML reader share. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "config/arena.h"
#include "config/option_table.h"
#include "config/option_parse.h"
#include "layerprof.h"

static lp_arena *arena;
static lp_options opts;

static int setup(void **state) {
    (void)state;
    arena = lp_arena_new();
    lp_options_init(&opts);
    return arena ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    lp_arena_free(arena);
    return 0;
}

static int parse(const char *key, const char *text) {
    const lp_opt *o = lp_opt_find(key);
    if (!o) fail_msg("no row '%s'", key);
    char subject[LP_OPT_QUOTE_MAX];
    return lp_opt_parse(o, lp_opt_subject(o, subject, sizeof subject), text, &opts, arena);
}

static void parse_ok(const char *key, const char *text) {
    if (parse(key, text) != LP_OK) fail_msg("%s '%s': %s", key, text, lp_error_last());
}

/* Refused with exactly `message`. */
static void parse_refused(const char *key, const char *text, const char *message) {
    assert_int_equal(parse(key, text), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), message);
}

static void quoting_clips_and_hides_control_characters(void **state) {
    (void)state;
    char buf[LP_OPT_QUOTE_MAX];
    assert_string_equal(lp_opt_quote("abc", 3, buf, sizeof buf), "'abc'");
    assert_string_equal(lp_opt_quote("a\tb\x7f", 4, buf, sizeof buf), "'a?b?'");
    assert_string_equal(lp_opt_quote("", 0, buf, sizeof buf), "''");
    char small[12];
    assert_string_equal(lp_opt_quote("abcdefghijkl", 12, small, sizeof small), "'abcd...'");
    /* "é" is two bytes: it is kept whole or dropped whole. */
    assert_string_equal(lp_opt_quote("abc\xc3\xa9xyz", 8, small, sizeof small), "'abc...'");
    assert_string_equal(lp_opt_subject(lp_opt_find("display.sort"), buf, sizeof buf), "'sort'");
}

static void booleans_take_yaml_spellings(void **state) {
    (void)state;
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes",
                                      "YES",  "on",   "On",   "ON"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No",
                                     "NO",    "off",   "Off",   "OFF"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        parse_ok("profile.memory", yes[i]);
        assert_int_equal(opts.memory, 1);
        parse_ok("profile.memory", no[i]);
        assert_int_equal(opts.memory, 0);
    }
    parse_refused("verbose", "maybe", "'verbose' must be true or false, got 'maybe'");
    parse_refused("verbose", "1", "'verbose' must be true or false, got '1'");
    assert_int_equal(lp_opt_bool_value("tRue"), -1);
}

static void integers_are_plain_decimal_in_range(void **state) {
    (void)state;
    parse_ok("iterations", "25");
    assert_int_equal(opts.iterations, 25);
    parse_ok("iterations", "+7");
    assert_int_equal(opts.iterations, 7);
    parse_ok("display.depth", "-1");
    assert_int_equal(opts.depth, -1);
    static const char *const bad[] = {"abc",
                                      "1.5",
                                      "0x10",
                                      "1_000",
                                      "",
                                      "-",
                                      "1e3",
                                      " 5",
                                      "0",
                                      "10000001",
                                      "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[128];
        snprintf(want, sizeof want, "'iterations' must be an integer from 1 to 10000000, got '%s'",
                 bad[i]);
        parse_refused("iterations", bad[i], want);
        assert_int_equal(opts.iterations, 7); /* unchanged */
    }
    parse_refused("threads", "2000",
                  "'threads' must be an integer from 0 (libtorch's default) to 1024, got '2000'");
    parse_refused("display.depth", "-2",
                  "'depth' must be an integer >= -1 (-1: no limit), got '-2'");
    parse_refused("schedule.active", "0", "'active' must be an integer >= 1, got '0'");
    parse_ok("seed", "18446744073709551615");
    assert_true(opts.seed == UINT64_MAX);
    parse_refused("seed", "18446744073709551616",
                  "'seed' must be an integer >= 0, got '18446744073709551616'");
    parse_refused("seed", "-1", "'seed' must be an integer >= 0, got '-1'");
}

static void enums_take_names_and_aliases_and_suggest(void **state) {
    (void)state;
    parse_ok("mode", "graph");
    assert_int_equal(opts.mode, LP_MODE_GRAPH);
    parse_ok("display.units", "ms");
    assert_int_equal(opts.units, LP_UNITS_MS);
    parse_ok("profile.cuda_timing", "events");
    assert_int_equal(opts.cuda_timing, LP_CUDA_TIMING_EVENTS);
    parse_refused("mode", "fast", "'mode' must be hooks, graph or markers, got 'fast'");
    parse_refused("mode", "grph",
                  "'mode' must be hooks, graph or markers, got 'grph'; did you mean 'graph'?");
    parse_refused("profile.cuda_timing", "sometimes",
                  "'cuda_timing' must be auto, cupti, events or off, got 'sometimes'");
    parse_refused("display.units", "", "'units' must be auto, us, ms or s, got ''");
    assert_int_equal(opts.mode, LP_MODE_GRAPH);
    int v = -1;
    assert_int_equal(lp_opt_parse_enum(&lp_opt_output_format, "'format'", "chrome", &v), LP_OK);
    assert_int_equal(v, LP_FORMAT_TRACE);
}

static void strings_are_copied_and_checked(void **state) {
    (void)state;
    char text[] = "models/m.pt";
    parse_ok("model", text);
    text[0] = 'X';
    assert_string_equal(opts.model_path, "models/m.pt");
    parse_refused("model", "", "'model' must be the path of a TorchScript file, got ''");
    parse_ok("device", "cuda:3");
    assert_string_equal(opts.device, "cuda:3");
    parse_refused("device", "gpu",
                  "'device' must be cpu, cuda or cuda:N, got 'gpu'; did you mean 'cuda'?");
    parse_refused("device", "cuda:x",
                  "'device' must be cpu, cuda or cuda:N, got 'cuda:x'; did you mean 'cuda'?");
    assert_string_equal(opts.device, "cuda:3");
    parse_ok("display.sort", "cpu_total");
    assert_string_equal(opts.sort, "cpu_total");
    parse_refused("display.sort", "cpu_totl",
                  "'sort' must be a column id, got 'cpu_totl'; did you mean 'cpu_total'?");
    assert_int_equal(parse("display.sort", "zzzzzzzz"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "'sort' must be a column id (one of: self_cpu, "));
    assert_non_null(strstr(lp_error_last(), ", out_shape), got 'zzzzzzzz'"));
}

static void columns_replace_the_list(void **state) {
    (void)state;
    parse_ok("display.columns", "self_cpu, calls ,mean");
    assert_int_equal(opts.n_columns, 3);
    assert_string_equal(opts.columns[0], "self_cpu");
    assert_string_equal(opts.columns[1], "calls");
    assert_string_equal(opts.columns[2], "mean");
    parse_ok("display.columns", "share");
    assert_int_equal(opts.n_columns, 1);
    parse_refused(
        "display.columns", "self_cpu,weights",
        "'columns' must be column ids (one of: self_cpu, cpu_total, self_cuda, "
        "cuda_total, self_cpu_mem, cpu_mem, peak_cpu_mem, net_cpu_mem, self_cuda_mem, "
        "cuda_mem, peak_cuda_mem, net_cuda_mem, calls, mean, min, max, std, share, "
        "params, self_params, param_bytes, flops, self_flops, gflops_per_s, out_shape), got "
        "'weights'");
    parse_refused("display.columns", "calls,,mean",
                  "'columns' must be column ids separated by commas, got 'calls,,mean' (an empty "
                  "entry)");
    parse_refused("display.columns", "",
                  "'columns' must be column ids separated by commas, got '' (an empty entry)");
    char many[400] = "calls";
    for (int i = 0; i < 32; i++)
        strcat(many, ",calls");
    parse_refused("display.columns", many, "'columns' takes at most 32 entries");
    assert_int_equal(opts.n_columns, 1);
    assert_string_equal(opts.columns[0], "share");
}

static void paths_inputs_and_outputs_append(void **state) {
    (void)state;
    parse_ok("paths", "AlexNet,features,3");
    parse_ok("paths", "**.conv1");
    assert_int_equal(opts.n_paths, 2);
    assert_string_equal(opts.paths[0], "AlexNet,features,3");
    assert_string_equal(opts.paths[1], "**.conv1");
    parse_refused("paths", "", "'paths' must be a list of module paths, got ''");
    assert_int_equal(opts.n_paths, 2);

    parse_ok("inputs", "1x3:float16:zeros");
    parse_ok("input_file", "dir:x/data.bin:2x2:uint8");
    assert_int_equal(opts.n_inputs, 2);
    assert_int_equal(opts.inputs[0].fill, LP_FILL_ZEROS);
    assert_int_equal(opts.inputs[1].fill, LP_FILL_FILE);
    assert_string_equal(opts.inputs[1].file, "dir:x/data.bin");
    assert_int_equal(parse("inputs", "1x0"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "input '1x0': dimensions must be positive");
    parse_refused("inputs", "1x\n2",
                  "input '1x?2': bad shape: expected a dimension at '?2' (e.g. 1x3x224x224)");
    for (int i = 2; i < LP_MAX_INPUTS; i++)
        parse_ok("inputs", "1");
    parse_refused("inputs", "1", "at most 64 input entries are allowed");
    parse_refused("input_file", "a.bin:1", "at most 64 input entries are allowed");
    parse_refused("inputs_saved", "a.pt", "at most 64 input entries are allowed");
    assert_int_equal(opts.n_inputs, LP_MAX_INPUTS);
    /* A structured argument takes one entry per item and container, all or nothing. */
    opts.n_inputs = LP_MAX_INPUTS - 3;
    parse_refused("inputs", "[1, 2, 3]", "input '[1, 2, 3]': more than 3 entries (LP_MAX_INPUTS)");
    assert_int_equal(opts.n_inputs, LP_MAX_INPUTS - 3);
    parse_ok("inputs", "[1, int:2]");
    assert_int_equal(opts.n_inputs, LP_MAX_INPUTS);
    assert_int_equal(opts.inputs[LP_MAX_INPUTS - 3].kind, LP_INPUT_LIST);
    assert_int_equal(opts.inputs[LP_MAX_INPUTS - 1].kind, LP_INPUT_INT);
    opts.n_inputs = 0;
    parse_ok("inputs_saved", "dir/args.pt");
    assert_int_equal(opts.inputs[0].kind, LP_INPUT_SAVED);
    assert_string_equal(opts.inputs[0].file, "dir/args.pt");
    parse_refused("inputs_saved", "", "--inputs: the file name is empty");

    parse_ok("outputs", "json");
    parse_ok("outputs", "md:reports/a:b.md"); /* the file may hold ':' */
    parse_ok("outputs", "tree:-");
    assert_int_equal(opts.n_outputs, 3);
    assert_int_equal(opts.outputs[0].format, LP_FORMAT_JSON);
    assert_null(opts.outputs[0].file);
    assert_int_equal(opts.outputs[1].format, LP_FORMAT_MARKDOWN);
    assert_string_equal(opts.outputs[1].file, "reports/a:b.md");
    assert_string_equal(opts.outputs[2].file, "-");
    parse_refused("outputs", "xml:r.xml",
                  "'format' must be tree, json, csv, markdown, trace, html, summary or "
                  "openmetrics, got 'xml'; "
                  "did you mean 'html'?");
    parse_refused("outputs",
                  "json:", "'file' must be a file path, \"-\" or null for stdout, got ''");
    assert_int_equal(opts.n_outputs, 3);
}

static void schedules_and_mappings(void **state) {
    (void)state;
    parse_ok("schedule", "wait=1,active=2");
    assert_int_equal(opts.schedule.wait, 1);
    assert_int_equal(opts.schedule.active, 2);
    parse_refused("schedule", "wait=1,actve=2",
                  "schedule 'wait=1,actve=2': unknown key 'actve'; did you mean 'active'?");
    assert_int_equal(opts.schedule.active, 2);
    /* The parsers quote the whole value: a line break in it must not break the message. */
    parse_refused("schedule", "wait=1\nx",
                  "schedule 'wait=1?x': 'wait' must be a whole number from 0 to 2147483647, not "
                  "'1?x'");
    parse_ok("schedule.repeat", "3");
    assert_int_equal(opts.schedule.repeat, 3);
    parse_refused("display", "x", "'display' is a mapping of options: set its keys (display.KEY)");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quoting_clips_and_hides_control_characters),
        cmocka_unit_test(booleans_take_yaml_spellings),
        cmocka_unit_test(integers_are_plain_decimal_in_range),
        cmocka_unit_test(enums_take_names_and_aliases_and_suggest),
        cmocka_unit_test(strings_are_copied_and_checked),
        cmocka_unit_test(columns_replace_the_list),
        cmocka_unit_test(paths_inputs_and_outputs_append),
        cmocka_unit_test(schedules_and_mappings),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
