/* test_api_null.c: every public function of layerprof.h called with NULL handles and arguments
 * (and a few out-of-range ones) returns an error code with a message, or does the documented
 * harmless thing; none crashes. A function added to the header belongs here too.
 *
 * To tell a fresh message from a stale one, each check first leaves a sentinel message behind
 * (a failed parse of a text nobody else uses) and then requires a different, non-empty one. */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

#define SENTINEL "sentinel-input-spec-for-test-api-null"

static void prime(void) {
    lp_input_spec spec;
    assert_int_equal(lp_input_spec_parse(SENTINEL, &spec), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), SENTINEL));
}

/* `call` must fail with `code` and leave a new message. */
#define EXPECT_ERROR(code, call)                                                                   \
    do {                                                                                           \
        prime();                                                                                   \
        int rc_ = (call);                                                                          \
        if (rc_ != (code))                                                                         \
            fail_msg("%s returned %d (%s), expected %d", #call, rc_, lp_error_last(),              \
                     (int)(code));                                                                 \
        if (!lp_error_last()[0] || strstr(lp_error_last(), SENTINEL))                              \
            fail_msg("%s failed without a message of its own", #call);                             \
    } while (0)

static lp_session *open_nested(void) {
    lp_options o;
    lp_options_init(&o);
    o.model_path = LP_MODELS_DIR "/nested.pt";
    o.warmup = 0;
    o.iterations = 1;
    lp_session *s = NULL;
    if (lp_session_open(&s, &o)) fail_msg("lp_session_open: %s", lp_error_last());
    return s;
}

/* ---- status, version ------------------------------------------------------------------------ */

static void status_and_version_functions_never_return_null(void **state) {
    (void)state;
    assert_non_null(lp_error_last());
    const int codes[] = {LP_OK,
                         LP_ERR_INVALID,
                         LP_ERR_IO,
                         LP_ERR_MODEL,
                         LP_ERR_RUNTIME,
                         LP_ERR_NOMEM,
                         LP_ERR_UNSUPPORTED,
                         LP_ERR_BUSY,
                         LP_ERR_NOT_FOUND,
                         LP_ERR_STATE,
                         1,
                         -100,
                         INT_MIN,
                         INT_MAX};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        const char *name = lp_status_name(codes[i]);
        assert_non_null(name);
        assert_true(name[0] != '\0');
    }
    assert_non_null(lp_version());
    assert_string_equal(lp_version(), LP_VERSION_STRING);
    assert_non_null(lp_torch_version());
}

/* ---- inputs --------------------------------------------------------------------------------- */

static void input_spec_functions_refuse_null(void **state) {
    (void)state;
    lp_input_spec spec;
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_parse(NULL, &spec));
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_parse("1x3", NULL));
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_parse(NULL, NULL));
    lp_options owner;
    lp_options_init(&owner);
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_parse_file(NULL, &spec, &owner));
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_parse_file("x.bin:1x3", NULL, &owner));
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_parse_file("x.bin:1x3", &spec, NULL));
    lp_options_release(&owner);

    char buf[64];
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_format(NULL, buf, sizeof buf));
    assert_int_equal(lp_input_spec_parse("1x3:float16:zeros", &spec), LP_OK);
    /* Like snprintf: NULL with size 0 asks for the length; NULL with a size is an error. */
    int need = lp_input_spec_format(&spec, NULL, 0);
    assert_int_equal(need, (int)strlen("1x3:float16:zeros"));
    EXPECT_ERROR(LP_ERR_INVALID, lp_input_spec_format(&spec, NULL, 8));
    assert_int_equal(lp_input_spec_format(&spec, buf, 4), need); /* truncated, still the length */
    assert_string_equal(buf, "1x3");

    assert_int_equal(lp_input_spec_bytes(NULL), 0);
    spec.ndim = -1;
    assert_int_equal(lp_input_spec_bytes(&spec), 0);
    spec.ndim = LP_MAX_DIMS + 1;
    assert_int_equal(lp_input_spec_bytes(&spec), 0);
    assert_non_null(lp_dtype_name((lp_dtype)-1));
    assert_non_null(lp_dtype_name((lp_dtype)999));
}

static void format_functions_refuse_null(void **state) {
    (void)state;
    lp_format f;
    assert_null(lp_format_name((lp_format)999));
    assert_null(lp_format_name((lp_format)-1));
    EXPECT_ERROR(LP_ERR_INVALID, lp_format_parse(NULL, &f));
    EXPECT_ERROR(LP_ERR_INVALID, lp_format_parse("tree", NULL));
    assert_true(lp_format_from_path(NULL, &f) < 0);
    assert_true(lp_format_from_path("report.json", NULL) < 0);
}

/* ---- options -------------------------------------------------------------------------------- */

static void options_functions_refuse_null_fields(void **state) {
    (void)state;
    lp_options_init(NULL); /* documented as harmless */
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(NULL));

    lp_options o;
    lp_options_init(&o);
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&o)); /* no model */
    o.model_path = LP_MODELS_DIR "/nested.pt";
    assert_int_equal(lp_options_validate(&o), LP_OK);

    lp_options bad = o;
    bad.n_inputs = 1;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));
    bad = o;
    bad.n_paths = 2;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));
    const char *one_null[] = {"stem", NULL};
    bad.paths = one_null;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));
    bad = o;
    bad.n_columns = 2;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));
    bad.columns = one_null;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));
    bad = o;
    bad.n_outputs = 1;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));
    bad = o;
    bad.version = 0;
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_validate(&bad));

    lp_session *s = (lp_session *)&o; /* must be overwritten with NULL */
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_open(&s, &bad));
    assert_null(s);
    s = (lp_session *)&o;
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_open(&s, NULL));
    assert_null(s);
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_open(NULL, &o));
}

/* ---- sessions ------------------------------------------------------------------------------- */

static void session_functions_refuse_null_session(void **state) {
    (void)state;
    size_t n;
    lp_node_info node;
    lp_op_info op;
    lp_run_info info;
    void *bytes = (void *)&n;
    size_t size = 1;

    EXPECT_ERROR(LP_ERR_INVALID, lp_session_run(NULL));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_render(NULL, LP_FORMAT_TREE, stdout));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_write_outputs(NULL));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_forward_output(NULL, 1, &bytes, &size));
    lp_session_close(NULL);
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_node_count(NULL, &n));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_node(NULL, 0, &node));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_find(NULL, "", &n));
    int frozen = 1;
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_frozen(NULL, &frozen));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_op_count(NULL, &n));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_op(NULL, 0, &op));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_run_info(NULL, &info));
}

static void session_functions_refuse_null_arguments(void **state) {
    (void)state;
    lp_session *s = open_nested();
    size_t n;
    void *bytes = NULL;
    size_t size = 0;

    EXPECT_ERROR(LP_ERR_INVALID, lp_session_render(s, LP_FORMAT_TREE, NULL));
    EXPECT_ERROR(LP_ERR_UNSUPPORTED, lp_session_render(s, (lp_format)999, stdout));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_forward_output(s, 0, NULL, &size));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_forward_output(s, 1, &bytes, NULL));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_node_count(s, NULL));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_node_sized(s, 0, NULL, sizeof(lp_node_info)));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_node(s, SIZE_MAX, &(lp_node_info){0}));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_find(s, NULL, &n));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_find(s, "", NULL));
    EXPECT_ERROR(LP_ERR_NOT_FOUND, lp_session_find(s, "no.such.module", &n));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_op_count(s, NULL));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_op_sized(s, 0, NULL, sizeof(lp_op_info)));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_op(s, SIZE_MAX, &(lp_op_info){0}));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_run_info_sized(s, NULL, sizeof(lp_run_info)));
    EXPECT_ERROR(LP_ERR_INVALID, lp_session_frozen(s, NULL));
    int frozen = 1;
    assert_int_equal(lp_session_frozen(s, &frozen), LP_OK);
    assert_int_equal(frozen, 0); /* nested.pt has submodules */
    lp_session_close(s);
}

/* Reading before running, running twice, asking for an output between runs. */
static void session_calls_out_of_order_work_or_fail_cleanly(void **state) {
    (void)state;
    lp_session *s = open_nested();
    size_t n = 0;
    lp_node_info node;
    lp_run_info info;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    assert_true(n > 1);
    assert_int_equal(lp_session_node(s, 0, &node), LP_OK);
    assert_int_equal(node.raw_calls, 0);
    assert_int_equal(lp_session_run_info(s, &info), LP_OK);
    assert_int_equal(info.iterations, 0);
    FILE *sink = fopen("/dev/null", "w");
    assert_non_null(sink);
    assert_int_equal(lp_session_render(s, LP_FORMAT_TREE, sink), LP_OK); /* "no iteration" note */

    void *bytes = NULL;
    size_t size = 0;
    assert_int_equal(lp_session_forward_output(s, 0, &bytes, &size), LP_OK);
    assert_non_null(bytes);
    free(bytes);
    assert_int_equal(lp_session_run(s), LP_OK);
    assert_int_equal(lp_session_run(s), LP_OK);
    assert_int_equal(lp_session_forward_output(s, 1, &bytes, &size), LP_OK);
    free(bytes);
    assert_int_equal(lp_session_node(s, 0, &node), LP_OK);
    assert_int_equal(node.raw_calls, 3);
    assert_int_equal(node.iterations, 3);
    assert_int_equal(lp_session_render(s, LP_FORMAT_TREE, sink), LP_OK);
    fclose(sink);
    lp_session_close(s);
}

/* ---- reports -------------------------------------------------------------------------------- */

static void report_functions_refuse_null(void **state) {
    (void)state;
    lp_report *r = (lp_report *)&r;
    lp_meta_info meta;
    lp_node_info node;
    size_t n;
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_load(&r, NULL));
    assert_null(r);
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_load(NULL, "report.json"));
    r = (lp_report *)&r;
    EXPECT_ERROR(LP_ERR_IO, lp_report_load(&r, "/nonexistent/report.json"));
    assert_null(r);
    lp_report_free(NULL);
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_meta(NULL, &meta));
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_node_count(NULL, &n));
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_node(NULL, 0, &node));
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_find(NULL, "", &n));
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_render(NULL, LP_FORMAT_TREE, NULL, stdout));
    EXPECT_ERROR(LP_ERR_INVALID, lp_report_diff(NULL, NULL, 0, stdout));
}

/* ---- configuration -------------------------------------------------------------------------- */

static void config_functions_refuse_null(void **state) {
    (void)state;
    lp_config *c = (lp_config *)&c;
    EXPECT_ERROR(LP_ERR_INVALID, lp_config_load(&c, NULL));
    assert_null(c);
    EXPECT_ERROR(LP_ERR_INVALID, lp_config_load(NULL, "run.yaml"));
    EXPECT_ERROR(LP_ERR_INVALID, lp_config_parse_string(NULL, "model: m.pt\n", NULL));
    c = (lp_config *)&c;
    EXPECT_ERROR(LP_ERR_INVALID, lp_config_parse_string(&c, NULL, NULL));
    assert_null(c);
    assert_null(lp_config_options(NULL));
    lp_config_free(NULL);

    lp_options o;
    lp_options_init(&o);
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_write_yaml(NULL, stdout));
    EXPECT_ERROR(LP_ERR_INVALID, lp_options_write_yaml(&o, NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_and_version_functions_never_return_null),
        cmocka_unit_test(input_spec_functions_refuse_null),
        cmocka_unit_test(format_functions_refuse_null),
        cmocka_unit_test(options_functions_refuse_null_fields),
        cmocka_unit_test(session_functions_refuse_null_session),
        cmocka_unit_test(session_functions_refuse_null_arguments),
        cmocka_unit_test(session_calls_out_of_order_work_or_fail_cleanly),
        cmocka_unit_test(report_functions_refuse_null),
        cmocka_unit_test(config_functions_refuse_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
