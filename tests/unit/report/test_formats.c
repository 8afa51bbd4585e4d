/* test_formats.c: format names, the format a file name implies, op row labels, and the one
 * dispatch from a format to its renderer. */
#include "export_fixtures.h"

#include "layerprof.h"

static void format_names_parse_and_files_imply_formats(void **state) {
    (void)state;
    static const char *const names[] = {"tree", "json", "csv", "markdown", "trace", "html"};
    for (int f = LP_FORMAT_TREE; f <= LP_FORMAT_HTML; f++) {
        assert_string_equal(lp_format_name((lp_format)f), names[f]);
        lp_format back;
        assert_int_equal(lp_format_parse(names[f], &back), LP_OK);
        assert_int_equal(back, f);
    }
    lp_format fmt;
    assert_int_equal(lp_format_parse("md", &fmt), LP_OK);
    assert_int_equal(fmt, LP_FORMAT_MARKDOWN);
    assert_int_equal(lp_format_parse("xml", &fmt), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "markdown"));
    assert_null(lp_format_name((lp_format)99));
    static const struct {
        const char *file;
        lp_format want;
    } files[] = {{"r.json", LP_FORMAT_JSON},   {"out/r.trace.json", LP_FORMAT_TRACE},
                 {"r.trace", LP_FORMAT_TRACE}, {"R.CSV", LP_FORMAT_CSV},
                 {"r.md", LP_FORMAT_MARKDOWN}, {"r.markdown", LP_FORMAT_MARKDOWN},
                 {"r.html", LP_FORMAT_HTML},   {"r.htm", LP_FORMAT_HTML},
                 {"r.txt", LP_FORMAT_TREE}};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        assert_int_equal(lp_format_from_path(files[i].file, &fmt), LP_OK);
        assert_int_equal(fmt, files[i].want);
    }
    assert_int_equal(lp_format_from_path("report", &fmt), LP_ERR_NOT_FOUND);
    assert_int_equal(lp_format_from_path(".json", &fmt), LP_ERR_NOT_FOUND);
}

/* CSV and markdown label op rows "name" or "name [shapes]"; an id without a name stays visible. */
/* Every ending a format lists implies that format, and the list ends with NULL. */
static void each_formats_endings_imply_it(void **state) {
    (void)state;
    assert_string_equal(lp_format_extension(LP_FORMAT_OPENMETRICS, 0), ".prom");
    assert_null(lp_format_extension(LP_FORMAT_OPENMETRICS, 1));
    assert_string_equal(lp_format_extension(LP_FORMAT_MARKDOWN, 1), ".markdown");
    assert_null(lp_format_extension(LP_FORMAT_SUMMARY, 0)); /* a name, no ending */
    assert_null(lp_format_extension((lp_format)99, 0));
    for (lp_format f = LP_FORMAT_TREE; lp_format_name(f); f = (lp_format)(f + 1))
        for (size_t i = 0; lp_format_extension(f, i); i++) {
            char name[64];
            snprintf(name, sizeof name, "report%s", lp_format_extension(f, i));
            lp_format got;
            assert_int_equal(lp_format_from_path(name, &got), LP_OK);
            assert_int_equal(got, f);
        }
}

static void op_labels_carry_their_input_shapes_in_brackets(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    char *conv = lp_render_op_label(&t, 0, 64, 0), *convolution = lp_render_op_label(&t, 1, 64, 0);
    assert_string_equal(conv, "aten::conv2d [[1, 3, 8, 8], [4, 3, 3, 3]]");
    assert_string_equal(convolution, "aten::convolution");
    free(conv);
    free(convolution);
    t.ops[2].op = 99; /* an id the tree has no name for */
    char *unnamed = lp_render_op_label(&t, 2, 64, 0);
    assert_string_equal(unnamed, "op#99");
    free(unnamed);
    lp_tree_free(&t);
}

/* A kernel name longer than the width keeps both ends around one ellipsis, exactly `width`
 * characters; 0 keeps it whole, widths under 16 count as 16, and names outside ASCII are not cut.
 */
static void long_op_names_are_shortened_in_the_middle(void **state) {
    (void)state;
    const char *k = "cpp_fused__scaled_dot_product_flash_attention_for_cpu__unsafe_view_add_"
                    "clone_select_squeeze_transpose_unsqueeze_view_1"; /* 119 characters */
    size_t head = 0, tail = 0;
    assert_int_equal(lp_render_name_cut(k, 0, 0, &head, &tail), 0);
    assert_int_equal(lp_render_name_cut(k, 200, 0, &head, &tail), 0);
    assert_int_equal(lp_render_name_cut(k, 40, 0, &head, &tail), 1);
    assert_int_equal(head, 20);
    assert_int_equal(tail, 19); /* 20 + "…" + 19 = 40 */
    assert_int_equal(lp_render_name_cut(k, 40, 1, &head, &tail), 1);
    assert_int_equal(head + 3 + tail, 40); /* "..." */
    assert_int_equal(lp_render_name_cut(k, 3, 0, &head, &tail), 1);
    assert_int_equal(head + 1 + tail, 16);
    assert_int_equal(
        lp_render_name_cut("layer1.0.conv1_caf\xc3\xa9_and_more_than_sixteen", 16, 0, &head, &tail),
        0);

    lp_tree t;
    fx_small(&t);
    int32_t op = t.ops[1].op; /* "aten::convolution", its name borrowed for the long one */
    const char *saved = t.op_names[op];
    t.op_names[op] = k;
    char *cut = lp_render_op_label(&t, 1, 40, 0), *whole = lp_render_op_label(&t, 1, 0, 0);
    assert_string_equal(cut, "cpp_fused__scaled_do…se_unsqueeze_view_1");
    assert_string_equal(whole, k);
    free(cut);
    free(whole);
    t.op_names[op] = saved;
    lp_tree_free(&t);
}

/* One dispatch for sessions and reports: a report has no timeline, so no trace. */
static void every_format_dispatches_and_a_trace_needs_a_timeline(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    for (int f = LP_FORMAT_TREE; f <= LP_FORMAT_SUMMARY; f++) {
        FILE *out = fx_open();
        int rc = lp_render_format((lp_format)f, &t, NULL, NULL, NULL, out);
        char *text = fx_close(out);
        if (f == LP_FORMAT_TRACE) {
            assert_int_equal(rc, LP_ERR_UNSUPPORTED);
            assert_non_null(strstr(lp_error_last(), "timeline"));
            assert_string_equal(text, "");
        } else {
            if (rc != LP_OK) fail_msg("%s: %s", lp_format_name((lp_format)f), lp_error_last());
            assert_true(strlen(text) > 0);
        }
        free(text);
    }
    assert_int_equal(lp_render_format((lp_format)99, &t, NULL, NULL, NULL, stdout), LP_ERR_INVALID);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_names_parse_and_files_imply_formats),
        cmocka_unit_test(each_formats_endings_imply_it),
        cmocka_unit_test(op_labels_carry_their_input_shapes_in_brackets),
        cmocka_unit_test(long_op_names_are_shortened_in_the_middle),
        cmocka_unit_test(every_format_dispatches_and_a_trace_needs_a_timeline),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
