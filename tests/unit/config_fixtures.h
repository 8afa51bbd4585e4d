/* config_fixtures.h: what the tests of src/config/ share: positioned-message checks, parsing
 * helpers, and comparing options field by field (for round trips through the YAML writer). */
#ifndef LP_TEST_CONFIG_FIXTURES_H
#define LP_TEST_CONFIG_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"

#define CFG_DIR LP_FIXTURE_DIR "/config/"
#define EXAMPLES_DIR LP_FIXTURE_DIR "/../../examples/"

/* Checks that `msg` is "<name>:<pos>: ..." containing `needle`. */
static inline void check_message(const char *msg, const char *name, const char *pos,
                                 const char *needle) {
    char prefix[1200];
    snprintf(prefix, sizeof prefix, "%s:%s: ", name, pos);
    if (strncmp(msg, prefix, strlen(prefix)) != 0)
        fail_msg("expected the message to start with '%s', got:\n%s", prefix, msg);
    if (!strstr(msg, needle)) fail_msg("expected '%s' in:\n%s", needle, msg);
}

/* Checks the second and third lines: the source line and a caret under column `col`. */
static inline void check_excerpt(const char *msg, const char *line, int col) {
    char want[1024];
    int off = snprintf(want, sizeof want, "\n  %s\n  ", line);
    for (int i = 1; i < col; i++)
        want[off++] = ' ';
    want[off++] = '^';
    want[off] = '\0';
    const char *nl = strchr(msg, '\n');
    if (!nl || strcmp(nl, want) != 0)
        fail_msg("expected the excerpt\n%s\ngot the message:\n%s", want + 1, msg);
}

/* Loads CFG_DIR/file, which must fail with `status` at `pos` with `needle` in the message. */
static inline const char *expect_file_error(const char *file, int status, const char *pos,
                                            const char *needle) {
    static char path[1024];
    char dummy;
    lp_config *cfg = (lp_config *)(void *)&dummy;
    snprintf(path, sizeof path, CFG_DIR "%s", file);
    assert_int_equal(lp_config_load(&cfg, path), status);
    assert_null(cfg);
    check_message(lp_error_last(), path, pos, needle);
    return lp_error_last();
}

/* Parses `yaml` (named "t.yaml"), which must fail as LP_ERR_INVALID at `pos` with `needle`. */
static inline const char *expect_error(const char *yaml, const char *pos, const char *needle) {
    lp_config *cfg = NULL;
    int rc = lp_config_parse_string(&cfg, yaml, "t.yaml");
    if (rc != LP_ERR_INVALID) fail_msg("expected LP_ERR_INVALID, got %d for:\n%s", rc, yaml);
    assert_null(cfg);
    check_message(lp_error_last(), "t.yaml", pos, needle);
    return lp_error_last();
}

static inline lp_config *parse_ok(const char *yaml) {
    lp_config *cfg = NULL;
    int rc = lp_config_parse_string(&cfg, yaml, "t.yaml");
    if (rc != LP_OK) fail_msg("unexpected error for:\n%s\n%s", yaml, lp_error_last());
    assert_non_null(cfg);
    return cfg;
}

/* lp_options_write_yaml's output as a string (free it). */
static inline char *write_yaml(const lp_options *opts) {
    FILE *f = tmpfile();
    assert_non_null(f);
    int rc = lp_options_write_yaml(opts, f);
    if (rc != LP_OK) fail_msg("lp_options_write_yaml: %s", lp_error_last());
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    return text;
}

static inline void assert_str_or_null_equal(const char *a, const char *b) {
    if (!a || !b)
        assert_ptr_equal(a, b);
    else
        assert_string_equal(a, b);
}

static inline void assert_inputs_equal(const lp_input_spec *a, const lp_input_spec *b) {
    assert_int_equal(a->kind, b->kind);
    assert_int_equal(a->integer, b->integer);
    assert_true(a->real == b->real);
    assert_int_equal(a->n_items, b->n_items);
    if (a->kind == LP_INPUT_STR || a->kind == LP_INPUT_SAVED) assert_string_equal(a->file, b->file);
    assert_int_equal(a->ndim, b->ndim);
    for (int d = 0; d < a->ndim; d++)
        assert_int_equal(a->shape[d], b->shape[d]);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->fill, b->fill);
    assert_int_equal(a->has_range, b->has_range);
    if (a->has_range) {
        /* Exact: the writer must print enough digits to read back the same double. */
        assert_true(a->low == b->low);
        assert_true(a->high == b->high);
    }
    if (a->fill == LP_FILL_FILE) assert_string_equal(a->file, b->file);
}

static inline void assert_options_equal(const lp_options *a, const lp_options *b) {
    assert_int_equal(a->version, b->version);
    assert_str_or_null_equal(a->model_path, b->model_path);
    assert_str_or_null_equal(a->device, b->device);
    assert_int_equal(a->mode, b->mode);
    assert_int_equal(a->n_inputs, b->n_inputs);
    for (size_t i = 0; i < a->n_inputs; i++)
        assert_inputs_equal(&a->inputs[i], &b->inputs[i]);
    assert_true(a->seed == b->seed);
    assert_int_equal(a->warmup, b->warmup);
    assert_int_equal(a->iterations, b->iterations);
    assert_int_equal(a->threads, b->threads);
    assert_int_equal(a->memory, b->memory);
    assert_int_equal(a->events, b->events);
    assert_int_equal(a->shapes, b->shapes);
    assert_int_equal(a->trace, b->trace);
    assert_int_equal(a->trace_iterations, b->trace_iterations);
    assert_int_equal(a->cuda_timing, b->cuda_timing);
    assert_int_equal(a->nvtx, b->nvtx);
    assert_int_equal(a->n_paths, b->n_paths);
    for (size_t i = 0; i < a->n_paths; i++)
        assert_string_equal(a->paths[i], b->paths[i]);
    assert_int_equal(a->depth, b->depth);
    assert_str_or_null_equal(a->sort, b->sort);
    assert_int_equal(a->top, b->top);
    assert_int_equal(a->n_columns, b->n_columns);
    for (size_t i = 0; i < a->n_columns; i++)
        assert_string_equal(a->columns[i], b->columns[i]);
    assert_int_equal(a->units, b->units);
    assert_int_equal(a->ascii, b->ascii);
    assert_int_equal(a->n_outputs, b->n_outputs);
    for (size_t i = 0; i < a->n_outputs; i++) {
        assert_int_equal(a->outputs[i].format, b->outputs[i].format);
        assert_str_or_null_equal(a->outputs[i].file, b->outputs[i].file);
    }
    assert_int_equal(a->verbose, b->verbose);
    assert_int_equal(a->schedule.wait, b->schedule.wait);
    assert_int_equal(a->schedule.warmup, b->schedule.warmup);
    assert_int_equal(a->schedule.active, b->schedule.active);
    assert_int_equal(a->schedule.repeat, b->schedule.repeat);
    assert_int_equal(a->summary, b->summary);
}

/* Writes `opts`, parses the text again and checks the options came back identical. */
static inline void check_round_trip(const lp_options *opts) {
    char *text = write_yaml(opts);
    lp_config *again = NULL;
    if (lp_config_parse_string(&again, text, "written.yaml") != LP_OK)
        fail_msg("the written configuration does not parse:\n%s\n%s", text, lp_error_last());
    assert_options_equal(opts, lp_config_options(again));
    /* And writing is stable: the second text is the first. */
    char *text2 = write_yaml(lp_config_options(again));
    assert_string_equal(text, text2);
    free(text2);
    lp_config_free(again);
    free(text);
}

#endif
