/* test_yaml_write.c: lp_options written back as YAML (yaml_write.c), checked by reading the
 * output back into identical options. */
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

#include "owner_fixture.h"

static void full_fixture_round_trips(void **state) {
    (void)state;
    lp_config *cfg = NULL;
    if (lp_config_load(&cfg, CFG_DIR "valid_full.yaml") != LP_OK) fail_msg("%s", lp_error_last());
    check_round_trip(lp_config_options(cfg));
    lp_config_free(cfg);
}

static void defaults_round_trip_and_every_key_is_written(void **state) {
    (void)state;
    static const char *const keys[] = {
        "\nmodel: ",          "\ndevice: ",    "\nmode: ",
        "\ninputs: ",         "\nseed: ",      "\nwarmup: ",
        "\niterations: ",     "\nthreads: ",   "\nprofile: {memory: ",
        "events: ",           "shapes: ",      "trace: ",
        "trace_iterations: ", "cuda_timing: ", "nvtx: ",
        "\npaths: ",          "\ndisplay:\n",  "\n  depth: ",
        "\n  sort: ",         "\n  top: ",     "\n  columns: ",
        "\n  units: ",        "\n  ascii: ",   "\noutputs: ",
        "\nsummary: ",        "\nverbose: "};
    lp_options o;
    lp_options_init(&o);
    char *text = write_yaml(&o);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (!strstr(text, keys[i])) fail_msg("'%s' is missing from:\n%s", keys[i], text);
    free(text);
    check_round_trip(&o);
}

static void awkward_strings_and_numbers_round_trip(void **state) {
    (void)state;
    static const char *const paths[] = {
        "true",
        "null",
        "~",
        "123",
        "- x",
        "#c",
        "a: b",
        " lead and trail ",
        "quote \" and \\",
        "tab\tnewline\ncr\r",
        "\x01\x1f\x7f",
        "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
        "nel\xc2\x85 ls\xe2\x80\xa8 ps\xe2\x80\xa9 bom\xef\xbb\xbf c1\xc2\x80",
        "*alias",
        "&anchor",
        "{flow}",
        "[seq]",
        "'single'",
        "%directive",
        "@",
        "`",
        "|",
        ">",
        "!tag",
        "--- x",
        "..."};
    static const char *const columns[] = {"calls", "self_cpu"};
    lp_input_spec inputs[3];
    lp_output_spec outputs[2] = {{LP_FORMAT_TREE, "-"}, {LP_FORMAT_TREE, "out dir/\"x\".txt"}};
    lp_options o;
    lp_options_init(&o);
    assert_int_equal(
        lp_input_spec_parse("1x3x224x224:float64:0.1..0.30000000000000004", &inputs[0]), LP_OK);
    assert_int_equal(lp_input_spec_parse("2x8:int16:-1e-300..1e300", &inputs[1]), LP_OK);
    assert_int_equal(
        lp_input_spec_parse_file("dir:with:colons/\xc3\xa9.bin:7x9:bfloat16", &inputs[2], &g_owner),
        LP_OK);
    o.model_path = "models/m\"odel\\.pt";
    o.device = "cuda:3";
    o.mode = LP_MODE_GRAPH;
    o.inputs = inputs;
    o.n_inputs = 3;
    o.seed = UINT64_MAX;
    o.warmup = 0;
    o.iterations = 10000000;
    o.threads = 1024;
    o.memory = 1;
    o.paths = paths;
    o.n_paths = sizeof paths / sizeof paths[0];
    o.depth = 0;
    o.sort = "calls";
    o.top = 2147483647;
    o.columns = columns;
    o.n_columns = 2;
    o.units = LP_UNITS_S;
    o.outputs = outputs;
    o.n_outputs = 2;
    check_round_trip(&o);
}

static void structured_inputs_round_trip_as_text(void **state) {
    (void)state;
    lp_input_spec inputs[16];
    size_t n = 0, got;
    const char *args[] = {"[3x320x320, 3x240x320:float16:ones]", "2x2",
                          "({boxes: 4x4, int:3: str:a: b}, float:0.1, bool:false, none)",
                          "saved:dir/a \"b\".pt"};
    for (size_t i = 0; i < sizeof args / sizeof *args; i++) {
        assert_int_equal(lp_input_parse(args[i], inputs + n, 16 - n, &got, &g_owner), LP_OK);
        n += got;
    }
    lp_options o;
    lp_options_init(&o);
    o.inputs = inputs;
    o.n_inputs = n;
    char *text = write_yaml(&o);
    assert_non_null(strstr(text, "\n  - \"[3x320x320:float32, 3x240x320:float16:ones]\"\n"
                                 "  - shape: [2, 2]\n"));
    free(text);
    check_round_trip(&o);
    inputs[0].n_items = 99; /* not one whole value */
    FILE *f = tmpfile();
    assert_int_equal(lp_options_write_yaml(&o, f), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "input 1 does not start a whole value"));
    fclose(f);
}

static void schedule_and_summary_round_trip(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    /* No schedule: the key is left out, and reads back as no schedule. */
    char *text = write_yaml(&o);
    assert_null(strstr(text, "schedule"));
    assert_non_null(strstr(text, "\nsummary: false\n"));
    free(text);
    check_round_trip(&o);

    lp_output_spec outputs[2] = {{LP_FORMAT_SUMMARY, "summary_%d.md"},
                                 {LP_FORMAT_JSON, "cycle_%d.json"}};
    o.schedule = (lp_schedule){1, 2, 3, 4};
    o.summary = 1;
    o.outputs = outputs;
    o.n_outputs = 2;
    text = write_yaml(&o);
    assert_non_null(strstr(text, "\nschedule: {wait: 1, warmup: 2, active: 3, repeat: 4}\n"));
    assert_non_null(strstr(text, "\nsummary: true\n"));
    assert_non_null(strstr(text, "{format: summary, file: \"summary_%d.md\"}"));
    free(text);
    check_round_trip(&o);

    o.schedule = (lp_schedule){0, 0, INT_MAX, 0};
    check_round_trip(&o);
}

static void write_refuses_what_yaml_cannot_carry(void **state) {
    (void)state;
    lp_options o;
    FILE *f = tmpfile();
    assert_non_null(f);
    lp_options_init(&o);
    o.model_path = "bad \xff utf-8";
    assert_int_equal(lp_options_write_yaml(&o, f), LP_ERR_INVALID);
    lp_options_init(&o);
    o.mode = (lp_mode)99;
    assert_int_equal(lp_options_write_yaml(&o, f), LP_ERR_INVALID);
    lp_options_init(&o);
    o.n_paths = 1;
    assert_int_equal(lp_options_write_yaml(&o, f), LP_ERR_INVALID);
    fclose(f);
    /* A full device: the failure shows when the stream is flushed. */
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        lp_options_init(&o);
        assert_int_equal(lp_options_write_yaml(&o, full), LP_ERR_IO);
        fclose(full);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_fixture_round_trips),
        cmocka_unit_test(defaults_round_trip_and_every_key_is_written),
        cmocka_unit_test(awkward_strings_and_numbers_round_trip),
        cmocka_unit_test(structured_inputs_round_trip_as_text),
        cmocka_unit_test(schedule_and_summary_round_trip),
        cmocka_unit_test(write_refuses_what_yaml_cannot_carry),
    };
    return cmocka_run_group_tests(tests, init_owner, release_owner);
}
