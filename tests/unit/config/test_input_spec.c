/* test_input_spec.c: the "SHAPE[:DTYPE][:FILL]" and "FILE:SHAPE[:DTYPE]" input syntax. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

#include "owner_fixture.h"

static int parse_file(const char *text, lp_input_spec *out) {
    return lp_input_spec_parse_file(text, out, &g_owner);
}

static lp_input_spec parsed(const char *text) {
    lp_input_spec s;
    int rc = lp_input_spec_parse(text, &s);
    if (rc) fail_msg("'%s' did not parse: %s", text, lp_error_last());
    return s;
}

static lp_input_spec parsed_file(const char *text) {
    lp_input_spec s;
    int rc = lp_input_spec_parse_file(text, &s, &g_owner);
    if (rc) fail_msg("'%s' did not parse: %s", text, lp_error_last());
    return s;
}

/* The spec is rejected as invalid, with a message that contains `why`. */
#define ASSERT_REJECTED(parse, text, why)                                                          \
    do {                                                                                           \
        lp_input_spec s_;                                                                          \
        assert_int_equal(parse((text), &s_), LP_ERR_INVALID);                                      \
        if (!strstr(lp_error_last(), (why)))                                                       \
            fail_msg("'%s': message '%s' does not say '%s'", (text), lp_error_last(), (why));      \
    } while (0)

static void assert_shape(const lp_input_spec *s, int ndim, const int64_t *dims) {
    assert_int_equal(s->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        assert_int_equal(s->shape[i], dims[i]);
}

/* ---- good specs ---------------------------------------------------------------------------- */

static void test_a_bare_shape_is_random_float32(void **state) {
    (void)state;
    lp_input_spec s = parsed("1x3x224x224");
    assert_shape(&s, 4, (const int64_t[]){1, 3, 224, 224});
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT32);
    assert_int_equal(s.fill, LP_FILL_RANDOM);
    assert_false(s.has_range);
    assert_null(s.file);
}

static void test_an_integer_input_takes_a_range(void **state) {
    (void)state;
    lp_input_spec s = parsed("1x32:int64:0..1000");
    assert_shape(&s, 2, (const int64_t[]){1, 32});
    assert_int_equal(s.dtype, LP_DTYPE_INT64);
    assert_int_equal(s.fill, LP_FILL_RANDOM);
    assert_true(s.has_range);
    assert_true(s.low == 0.0);
    assert_true(s.high == 1000.0);
}

static void test_a_dtype_and_a_constant_fill_are_both_read(void **state) {
    (void)state;
    lp_input_spec s = parsed("2x8:float16:zeros");
    assert_shape(&s, 2, (const int64_t[]){2, 8});
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT16);
    assert_int_equal(s.fill, LP_FILL_ZEROS);
    assert_false(s.has_range);
}

static void test_the_dtype_may_be_left_out_before_the_fill(void **state) {
    (void)state;
    lp_input_spec s = parsed("4:ones");
    assert_shape(&s, 1, (const int64_t[]){4});
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT32);
    assert_int_equal(s.fill, LP_FILL_ONES);
    s = parsed("4:-0.5..0.5");
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT32);
    assert_true(s.has_range);
    assert_true(s.low == -0.5);
    assert_true(s.high == 0.5);
}

static void test_aliases_upper_case_x_and_negative_ranges_are_accepted(void **state) {
    (void)state;
    lp_input_spec s = parsed("2X3:half");
    assert_shape(&s, 2, (const int64_t[]){2, 3});
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT16);
    assert_int_equal(parsed("1:long:-5..-1").dtype, LP_DTYPE_INT64);
    assert_true(parsed("1:long:-5..-1").low == -5.0);
    assert_true(parsed("1:long:-5..-1").high == -1.0);
    assert_int_equal(parsed("1:double").dtype, LP_DTYPE_FLOAT64);
    assert_int_equal(parsed("1:float").dtype, LP_DTYPE_FLOAT32);
    assert_int_equal(parsed("1:int:0..9").dtype, LP_DTYPE_INT32);
    assert_int_equal(parsed("1:bfloat16:rand").fill, LP_FILL_RANDOM);
    assert_int_equal(parsed("1:int8:zero").fill, LP_FILL_ZEROS);
    assert_int_equal(parsed("1:uint8:one").fill, LP_FILL_ONES);
    assert_shape((lp_input_spec[]){parsed("4611686018427387904")}, 1,
                 (const int64_t[]){INT64_C(4611686018427387904)});
}

static void test_integer_inputs_need_no_range_when_constant_and_bool_never_does(void **state) {
    (void)state;
    assert_int_equal(parsed("3:int32:zeros").fill, LP_FILL_ZEROS);
    assert_int_equal(parsed("3:int16:ones").fill, LP_FILL_ONES);
    lp_input_spec s = parsed("3:bool");
    assert_int_equal(s.dtype, LP_DTYPE_BOOL);
    assert_int_equal(s.fill, LP_FILL_RANDOM);
    assert_false(s.has_range);
}

static void test_eight_dimensions_are_allowed(void **state) {
    (void)state;
    lp_input_spec s = parsed("1x2x3x4x5x6x7x8");
    assert_shape(&s, LP_MAX_DIMS, (const int64_t[]){1, 2, 3, 4, 5, 6, 7, 8});
}

/* ---- errors -------------------------------------------------------------------------------- */

static void test_malformed_shapes_are_rejected_with_the_reason(void **state) {
    (void)state;
    ASSERT_REJECTED(lp_input_spec_parse, "", "the shape is empty");
    ASSERT_REJECTED(lp_input_spec_parse, ":float32", "the shape is empty");
    ASSERT_REJECTED(lp_input_spec_parse, "1x0", "dimensions must be positive");
    ASSERT_REJECTED(lp_input_spec_parse, "0", "dimensions must be positive");
    ASSERT_REJECTED(lp_input_spec_parse, "1xa", "expected a dimension at 'a'");
    ASSERT_REJECTED(lp_input_spec_parse, "x2", "expected a dimension");
    ASSERT_REJECTED(lp_input_spec_parse, "1xx2", "expected a dimension");
    ASSERT_REJECTED(lp_input_spec_parse, "-1", "expected a dimension");
    ASSERT_REJECTED(lp_input_spec_parse, "1x", "ends with 'x'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2x", "ends with 'x'");
    ASSERT_REJECTED(lp_input_spec_parse, "1*2", "unexpected '*'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2 ", "unexpected ' '");
    ASSERT_REJECTED(lp_input_spec_parse, "1x1x1x1x1x1x1x1x1", "more than 8 dimensions");
    ASSERT_REJECTED(lp_input_spec_parse, "99999999999999999999", "dimension too large");
    ASSERT_REJECTED(lp_input_spec_parse, "1x99999999999999999999x1", "dimension too large");
}

static void test_unknown_dtypes_and_fills_are_rejected(void **state) {
    (void)state;
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:foo:zeros", "unknown dtype 'foo'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2::zeros", "unknown dtype ''");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:Float32:zeros", "unknown dtype 'Float32'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:foo", "unknown fill 'foo'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:", "unknown fill ''");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:full", "unknown fill 'full'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:1..x", "unknown fill '1..x'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:..1", "unknown fill '..1'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:1..", "unknown fill '1..'");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:5..1", "empty range 5..1");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:1..1", "empty range");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:float32:zeros:more", "too many ':' fields");
}

/* A typo gets the config file's message for the same word (test_yaml_entries.c:
 * unknown_dtype_suggests_a_dtype), whether the word stands where a dtype or a fill may. */
static void typos_get_the_config_files_suggestion(void **state) {
    (void)state;
    ASSERT_REJECTED(lp_input_spec_parse, "1x3x224x224:float33",
                    "input '1x3x224x224:float33': unknown dtype 'float33'; did you mean "
                    "'float32'?");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:int46:zeros",
                    "unknown dtype 'int46'; did you mean 'int16'?");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:zeroes", "unknown fill 'zeroes'; did you mean 'zeros'?");
    ASSERT_REJECTED(lp_input_spec_parse, "1x2:int64:rnadom",
                    "unknown fill 'rnadom'; did you mean 'random'?");
}

static void test_random_integer_inputs_without_a_range_are_rejected(void **state) {
    (void)state;
    ASSERT_REJECTED(lp_input_spec_parse, "1x32:int64", "random int64 values need a range");
    ASSERT_REJECTED(lp_input_spec_parse, "1x32:int64:random", "need a range");
    ASSERT_REJECTED(lp_input_spec_parse, "1x32:long", "random int64 values need a range");
    ASSERT_REJECTED(lp_input_spec_parse, "1x32:uint8", "random uint8 values need a range");
    /* The example in the message is a spec that parses, with the user's shape. */
    ASSERT_REJECTED(lp_input_spec_parse, "2x5:int32:rand", "e.g. 2x5:int32:0..100");
    lp_input_spec s = parsed("2x5:int32:0..100");
    assert_int_equal(s.dtype, LP_DTYPE_INT32);
}

static void test_null_arguments_are_invalid(void **state) {
    (void)state;
    lp_input_spec s;
    assert_int_equal(lp_input_spec_parse(NULL, &s), LP_ERR_INVALID);
    assert_int_equal(lp_input_spec_parse("1", NULL), LP_ERR_INVALID);
    assert_int_equal(lp_input_spec_parse_file(NULL, &s, &g_owner), LP_ERR_INVALID);
    assert_int_equal(lp_input_spec_parse_file("a:1", NULL, &g_owner), LP_ERR_INVALID);
    assert_int_equal(lp_input_spec_parse_file("a:1", &s, NULL), LP_ERR_INVALID); /* no owner */
}

/* ---- file specs ---------------------------------------------------------------------------- */

static void test_a_file_spec_reads_raw_data_of_a_shape(void **state) {
    (void)state;
    lp_input_spec s = parsed_file("data.bin:1x3x8x8");
    assert_string_equal(s.file, "data.bin");
    assert_shape(&s, 4, (const int64_t[]){1, 3, 8, 8});
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT32);
    assert_int_equal(s.fill, LP_FILL_FILE);
    assert_false(s.has_range);
    s = parsed_file("ids.bin:1x32:int64"); /* no range needed: the values come from the file */
    assert_string_equal(s.file, "ids.bin");
    assert_int_equal(s.dtype, LP_DTYPE_INT64);
}

static void test_a_file_name_may_contain_colons(void **state) {
    (void)state;
    lp_input_spec s = parsed_file("C:/inputs/x.bin:1x3:float16");
    assert_string_equal(s.file, "C:/inputs/x.bin");
    assert_shape(&s, 2, (const int64_t[]){1, 3});
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT16);
    s = parsed_file("a:b:c.bin:2x2");
    assert_string_equal(s.file, "a:b:c.bin");
    assert_int_equal(s.dtype, LP_DTYPE_FLOAT32);
    s = parsed_file("run:float:4"); /* "float" is part of the name: the last field is the shape */
    assert_string_equal(s.file, "run:float");
    assert_shape(&s, 1, (const int64_t[]){4});
}

static void test_file_specs_without_a_shape_or_a_name_are_rejected(void **state) {
    (void)state;
    ASSERT_REJECTED(parse_file, "data.bin", "expected FILE:SHAPE[:DTYPE]");
    ASSERT_REJECTED(parse_file, "data.bin:float16", "expected FILE:SHAPE[:DTYPE]");
    ASSERT_REJECTED(parse_file, ":1x3", "expected FILE:SHAPE[:DTYPE]");
    ASSERT_REJECTED(parse_file, "", "expected FILE:SHAPE[:DTYPE]");
    ASSERT_REJECTED(parse_file, "data.bin:", "the shape is empty");
    ASSERT_REJECTED(parse_file, "data.bin::int64", "the shape is empty");
    ASSERT_REJECTED(parse_file, "data.bin:1x0", "dimensions must be positive");
    ASSERT_REJECTED(parse_file, "C:/x.bin:1x3:foo", "expected a dimension at 'foo'");
}

static void test_a_file_name_longer_than_a_path_is_rejected(void **state) {
    (void)state;
    size_t n = LP_PATH_MAX + 16;
    char *text = malloc(n);
    assert_non_null(text);
    memset(text, 'a', n);
    memcpy(text + LP_PATH_MAX, ":1x3", 5);
    lp_input_spec s;
    assert_int_equal(lp_input_spec_parse_file(text, &s, &g_owner), LP_ERR_INVALID);
    assert_true(strncmp(lp_error_last(), "input file 'aaaa", 16) == 0);
    /* One character shorter than the buffer fits. */
    memcpy(text + LP_PATH_MAX - 1, ":1x3", 5);
    s = parsed_file(text);
    assert_int_equal(strlen(s.file), LP_PATH_MAX - 1);
    free(text);
}

/* ---- format and round trips ---------------------------------------------------------------- */

static void assert_formats_as(const lp_input_spec *s, const char *want) {
    char buf[256];
    int n = lp_input_spec_format(s, buf, sizeof buf);
    assert_string_equal(buf, want);
    assert_int_equal(n, (int)strlen(want));
}

static void test_format_writes_the_canonical_syntax(void **state) {
    (void)state;
    lp_input_spec s = parsed("1x3x224x224");
    assert_formats_as(&s, "1x3x224x224:float32");
    s = parsed("1x32:long:0..1000");
    assert_formats_as(&s, "1x32:int64:0..1000");
    s = parsed("2x8:half:zero");
    assert_formats_as(&s, "2x8:float16:zeros");
    s = parsed("4:ones");
    assert_formats_as(&s, "4:float32:ones");
    s = parsed_file("C:/inputs/x.bin:1x3");
    assert_formats_as(&s, "C:/inputs/x.bin:1x3:float32");
}

static void test_format_into_a_short_buffer_truncates_and_says_the_length_needed(void **state) {
    (void)state;
    lp_input_spec s = parsed("1x3x224x224");
    char buf[8];
    memset(buf, '#', sizeof buf);
    assert_int_equal(lp_input_spec_format(&s, buf, sizeof buf), 19);
    assert_string_equal(buf, "1x3x224");
    assert_int_equal(lp_input_spec_format(&s, NULL, 0), 19);
}

static void assert_same_spec(const lp_input_spec *a, const lp_input_spec *b) {
    assert_int_equal(a->ndim, b->ndim);
    for (int i = 0; i < a->ndim; i++)
        assert_int_equal(a->shape[i], b->shape[i]);
    assert_int_equal(a->dtype, b->dtype);
    assert_int_equal(a->fill, b->fill);
    assert_int_equal(a->has_range, b->has_range);
    assert_memory_equal(&a->low, &b->low, sizeof a->low); /* bit for bit */
    assert_memory_equal(&a->high, &b->high, sizeof a->high);
    assert_true(!a->file == !b->file);
    if (a->file) assert_string_equal(a->file, b->file);
}

static void test_format_then_parse_gives_back_the_same_spec(void **state) {
    (void)state;
    static const char *const specs[] = {
        "1x3x224x224",
        "1x32:int64:0..1000",
        "2x8:float16:zeros",
        "4:ones",
        "3:bool",
        "1x2x3x4x5x6x7x8:uint8:0..255",
        "5:float64:0.1..0.3",
        "7:bfloat16:-1e-05..3.5e10",
        "9:int8:-128..127",
        "6:int32:ones",
        "4611686018427387904:int16:zeros",
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        lp_input_spec a = parsed(specs[i]);
        char buf[512];
        int n = lp_input_spec_format(&a, buf, sizeof buf);
        assert_true(n > 0 && (size_t)n < sizeof buf);
        lp_input_spec b = parsed(buf);
        assert_same_spec(&a, &b);
    }
    static const char *const files[] = {"x.bin:1x3", "C:/in/a:b.bin:2x2:float16",
                                        "ids.bin:1x32:int64", "a:b:c:4:bool"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        lp_input_spec a = parsed_file(files[i]);
        char buf[512];
        lp_input_spec_format(&a, buf, sizeof buf);
        lp_input_spec b = parsed_file(buf);
        assert_same_spec(&a, &b);
    }
}

/* ---- bytes --------------------------------------------------------------------------------- */

static void test_bytes_multiply_the_shape_by_the_element_size(void **state) {
    (void)state;
    lp_input_spec s = parsed("1x3x224x224");
    assert_int_equal(lp_input_spec_bytes(&s), 602112);
    s = parsed("2x8:float16:zeros");
    assert_int_equal(lp_input_spec_bytes(&s), 32);
    s = parsed("1x32:int64:0..10");
    assert_int_equal(lp_input_spec_bytes(&s), 256);
    s = parsed("7:bool");
    assert_int_equal(lp_input_spec_bytes(&s), 7);
    s = parsed("3:bfloat16");
    assert_int_equal(lp_input_spec_bytes(&s), 6);
    s = parsed("5:float64");
    assert_int_equal(lp_input_spec_bytes(&s), 40);
}

static void test_bytes_saturate_instead_of_overflowing(void **state) {
    (void)state;
    lp_input_spec s = parsed("4611686018427387904x4"); /* 2^62 x 4 float32 = 2^66 bytes */
    assert_int_equal(lp_input_spec_bytes(&s), INT64_MAX);
    s = parsed("3037000500x3037000500x3037000500:int8:zeros");
    assert_int_equal(lp_input_spec_bytes(&s), INT64_MAX);
    /* The largest shape that fits is exact; one more element saturates. */
    s = parsed("1:float64");
    s.shape[0] = INT64_MAX / 8;
    assert_int_equal(lp_input_spec_bytes(&s), INT64_MAX / 8 * 8);
    s.shape[0] = INT64_MAX / 8 + 1;
    assert_int_equal(lp_input_spec_bytes(&s), INT64_MAX);
}

static void test_bytes_of_an_invalid_spec_are_zero(void **state) {
    (void)state;
    assert_int_equal(lp_input_spec_bytes(NULL), 0);
    lp_input_spec s = parsed("2x2");
    s.ndim = -1;
    assert_int_equal(lp_input_spec_bytes(&s), 0);
    s.ndim = LP_MAX_DIMS + 1;
    assert_int_equal(lp_input_spec_bytes(&s), 0);
    s.ndim = 2;
    s.shape[1] = 0;
    assert_int_equal(lp_input_spec_bytes(&s), 0);
    s.shape[1] = -4;
    assert_int_equal(lp_input_spec_bytes(&s), 0);
    s.shape[1] = 2;
    s.dtype = (lp_dtype)99;
    assert_int_equal(lp_input_spec_bytes(&s), 0);
}

static void test_dtype_names_are_canonical(void **state) {
    (void)state;
    static const char *const names[] = {"float32", "float64", "float16", "bfloat16", "int64",
                                        "int32",   "int16",   "int8",    "uint8",    "bool"};
    for (int d = LP_DTYPE_FLOAT32; d <= LP_DTYPE_BOOL; d++)
        assert_string_equal(lp_dtype_name((lp_dtype)d), names[d]);
    assert_string_equal(lp_dtype_name((lp_dtype)99), "unknown");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_bare_shape_is_random_float32),
        cmocka_unit_test(test_an_integer_input_takes_a_range),
        cmocka_unit_test(test_a_dtype_and_a_constant_fill_are_both_read),
        cmocka_unit_test(test_the_dtype_may_be_left_out_before_the_fill),
        cmocka_unit_test(test_aliases_upper_case_x_and_negative_ranges_are_accepted),
        cmocka_unit_test(test_integer_inputs_need_no_range_when_constant_and_bool_never_does),
        cmocka_unit_test(test_eight_dimensions_are_allowed),
        cmocka_unit_test(test_malformed_shapes_are_rejected_with_the_reason),
        cmocka_unit_test(test_unknown_dtypes_and_fills_are_rejected),
        cmocka_unit_test(typos_get_the_config_files_suggestion),
        cmocka_unit_test(test_random_integer_inputs_without_a_range_are_rejected),
        cmocka_unit_test(test_null_arguments_are_invalid),
        cmocka_unit_test(test_a_file_spec_reads_raw_data_of_a_shape),
        cmocka_unit_test(test_a_file_name_may_contain_colons),
        cmocka_unit_test(test_file_specs_without_a_shape_or_a_name_are_rejected),
        cmocka_unit_test(test_a_file_name_longer_than_a_path_is_rejected),
        cmocka_unit_test(test_format_writes_the_canonical_syntax),
        cmocka_unit_test(test_format_into_a_short_buffer_truncates_and_says_the_length_needed),
        cmocka_unit_test(test_format_then_parse_gives_back_the_same_spec),
        cmocka_unit_test(test_bytes_multiply_the_shape_by_the_element_size),
        cmocka_unit_test(test_bytes_saturate_instead_of_overflowing),
        cmocka_unit_test(test_bytes_of_an_invalid_spec_are_zero),
        cmocka_unit_test(test_dtype_names_are_canonical),
    };
    return cmocka_run_group_tests(tests, init_owner, release_owner);
}
