/* test_formats.c: format names, and the format a file name implies. */
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(format_names_parse_and_files_imply_formats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
