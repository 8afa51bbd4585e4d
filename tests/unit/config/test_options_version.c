/* test_options_version.c: a program built against an older layerprof.h holds an older, smaller
 * lp_options. The library reads it (the missing fields as their defaults) and never writes past
 * its end: each test puts a guard region right after a version-2-sized struct. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

/* Version 2 ends where `libraries` begins; its lp_input_spec ended where `kind` begins. */
#define V2_SIZE offsetof(lp_options, libraries)
#define V2_INPUT_SIZE offsetof(lp_input_spec, kind)
#define GUARD 256

/* lp_input_spec as version 2 has it, in this ABI's layout (layerprof 0.2: `file` a pointer). */
typedef struct v2_input {
    int ndim;
    int64_t shape[LP_MAX_DIMS];
    lp_dtype dtype;
    lp_fill fill;
    int has_range;
    double low, high;
    const char *file;
} v2_input;
_Static_assert(sizeof(v2_input) == V2_INPUT_SIZE, "version 2's input entries");

/* A version-2 struct as an old program lays it out, with guard bytes after it. */
typedef struct v2_block {
    _Alignas(lp_options) unsigned char opts[V2_SIZE];
    unsigned char guard[GUARD];
} v2_block;

static lp_options *v2_opts(v2_block *b) {
    memset(b, 0xCD, sizeof *b);
    return (lp_options *)(void *)b->opts;
}

static void assert_guard_intact(const v2_block *b) {
    for (size_t i = 0; i < GUARD; i++)
        if (b->guard[i] != 0xCD)
            fail_msg("guard byte %zu after the version-2 struct was written", i);
}

static void init_writes_only_the_callers_version(void **state) {
    (void)state;
    v2_block b;
    lp_options *o = v2_opts(&b);
    assert_int_equal(lp_options_init_version(o, 2), LP_OK);
    assert_guard_intact(&b);
    assert_int_equal(o->version, 2);
    assert_int_equal(o->iterations, 10);
    assert_int_equal(o->warmup, 3);
    assert_int_equal(o->mode, LP_MODE_MARKERS);
    assert_null(o->store);
}

static void unknown_versions_are_refused_and_nothing_is_written(void **state) {
    (void)state;
    lp_options o;
    memset(&o, 0xCD, sizeof o);
    assert_int_equal(lp_options_init_version(&o, LP_OPTIONS_VERSION + 1), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "newer than this layerprof reads (2 to 7)"));
    assert_int_equal(lp_options_init_version(&o, 1), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "options version 1 is not one this layerprof reads"));
    const unsigned char *p = (const unsigned char *)&o;
    for (size_t i = 0; i < sizeof o; i++)
        if (p[i] != 0xCD) fail_msg("byte %zu written for a refused version", i);
    assert_int_equal(lp_options_init_version(NULL, 2), LP_ERR_INVALID);

    lp_options_init(&o);
    o.model_path = "m.pt";
    o.version = LP_OPTIONS_VERSION + 1;
    assert_int_equal(lp_options_validate(&o), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "built against a newer layerprof.h"));
    assert_int_equal(lp_options_set(&o, "iterations", "5"), LP_ERR_INVALID);
}

static void set_writes_inside_the_version_and_refuses_what_it_lacks(void **state) {
    (void)state;
    v2_block b;
    lp_options *o = v2_opts(&b);
    assert_int_equal(lp_options_init_version(o, 2), LP_OK);
    assert_int_equal(lp_options_set(o, "iterations", "5"), LP_OK);
    assert_int_equal(lp_options_set(o, "display.columns", "calls,self_cpu"), LP_OK);
    assert_int_equal(lp_options_set(o, "paths", "features.*"), LP_OK);
    assert_int_equal(o->iterations, 5);
    assert_int_equal(o->n_columns, 2);
    assert_non_null(o->store);
    assert_guard_intact(&b);
    /* `libraries` is version 3's, and version 2's inputs have the older, shorter entries. */
    assert_int_equal(lp_options_set(o, "libraries", "a.so"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "'libraries' needs options version 3; these are "
                                            "version 2"));
    assert_int_equal(lp_options_set(o, "inputs", "1x3"), LP_ERR_INVALID);
    assert_int_equal(lp_options_set(o, "input_file", "a.bin:1x3"), LP_ERR_INVALID);
    assert_int_equal(lp_options_set(o, "inputs", NULL), LP_ERR_INVALID);
    assert_guard_intact(&b);
    lp_options_release(o);
    assert_guard_intact(&b);
    assert_int_equal(o->version, 2);
    assert_int_equal(o->iterations, 10);
    assert_null(o->store);
}

/* The options as lp_options_write_yaml writes them (the caller frees). */
static char *yaml_of(const lp_options *o) {
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    assert_int_equal(lp_options_write_yaml(o, f), LP_OK);
    fclose(f);
    return text;
}

/* Reading a version-2 struct: its inputs in the shorter layout, the fields it lacks as defaults. */
static void validate_and_write_read_a_version_2_struct(void **state) {
    (void)state;
    v2_block b;
    lp_options *o = v2_opts(&b);
    assert_int_equal(lp_options_init_version(o, 2), LP_OK);
    o->model_path = "m.pt";
    v2_input inputs[2];
    memset(inputs, 0, sizeof inputs);
    for (int i = 0; i < 2; i++) {
        inputs[i].ndim = 2;
        inputs[i].shape[0] = 1 + i;
        inputs[i].shape[1] = 3 + i;
    }
    o->inputs = (const lp_input_spec *)(void *)inputs;
    o->n_inputs = 2;
    assert_int_equal(lp_options_validate(o), LP_OK);
    char *text = yaml_of(o);
    /* Both entries at their own stride, and version 3's field at its default. */
    assert_non_null(strstr(text, "  - shape: [1, 3]\n"));
    assert_non_null(strstr(text, "  - shape: [2, 4]\n"));
    assert_non_null(strstr(text, "\nlibraries: []\n"));
    free(text);
    assert_guard_intact(&b);

    o->n_inputs = 1;
    inputs[0].ndim = LP_MAX_DIMS + 1; /* still checked */
    assert_int_equal(lp_options_validate(o), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "input 1: 9 dimensions"));
}

/* Version 6 added `name_width`: a version-5 struct is initialised without it, reads it as its
 * default, and refuses to set it. */
static void a_version_5_struct_reads_name_width_as_its_default(void **state) {
    (void)state;
    size_t n = offsetof(lp_options, name_width), guard = 64;
    unsigned char *buf = malloc(n + guard);
    assert_non_null(buf);
    memset(buf, 0xCD, n + guard);
    lp_options *o = (lp_options *)(void *)buf;
    assert_int_equal(lp_options_init_version(o, 5), LP_OK);
    for (size_t i = n; i < n + guard; i++)
        if (buf[i] != 0xCD) fail_msg("byte %zu past the version-5 struct was written", i - n);
    assert_int_equal(lp_options_set(o, "display.name_width", "20"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "'display.name_width' needs options version 6"));
    char *text = yaml_of(o);
    assert_non_null(strstr(text, "name_width: 64"));
    free(text);
    free(buf);
}

/* Version 7 added `labels`: a version-6 struct is initialised without them, has none, and refuses
 * to set one. */
static void a_version_6_struct_has_no_labels(void **state) {
    (void)state;
    size_t n = offsetof(lp_options, labels), guard = 64;
    unsigned char *buf = malloc(n + guard);
    assert_non_null(buf);
    memset(buf, 0xCD, n + guard);
    lp_options *o = (lp_options *)(void *)buf;
    assert_int_equal(lp_options_init_version(o, 6), LP_OK);
    for (size_t i = n; i < n + guard; i++)
        if (buf[i] != 0xCD) fail_msg("byte %zu past the version-6 struct was written", i - n);
    assert_int_equal(lp_options_set(o, "labels", "rank=1"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "'labels' needs options version 7"));
    free(buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_writes_only_the_callers_version),
        cmocka_unit_test(unknown_versions_are_refused_and_nothing_is_written),
        cmocka_unit_test(set_writes_inside_the_version_and_refuses_what_it_lacks),
        cmocka_unit_test(validate_and_write_read_a_version_2_struct),
        cmocka_unit_test(a_version_5_struct_reads_name_width_as_its_default),
        cmocka_unit_test(a_version_6_struct_has_no_labels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
