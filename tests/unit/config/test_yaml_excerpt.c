/* test_yaml_excerpt.c: positioned messages (yaml_excerpt.c): the line:column, the quoted line and
 * a caret under the column, whatever the characters, tabs, line ends and line lengths. */
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

static void syntax_error_points_at_the_offending_token(void **state) {
    (void)state;
    const char *msg = expect_file_error("err_syntax.yaml", LP_ERR_INVALID, "3:9",
                                        "syntax error: mapping values are not allowed");
    check_excerpt(msg, "  warmup: 3", 9);
}

static void caret_counts_characters_and_keeps_tabs(void **state) {
    (void)state;
    /* Columns count characters, not bytes: é is one column. */
    check_excerpt(expect_error("paths: [\xc3\xa9, [b]]", "1:12", "got a list"),
                  "paths: [\xc3\xa9, [b]]", 12);
    /* A tab before the column is copied to the caret line so the caret lines up on screen. */
    const char *msg = expect_error("paths: [a,\t[b]]", "1:12", "got a list");
    assert_string_equal(strchr(msg, '\n'), "\n  paths: [a,\t[b]]\n            \t^");
    /* A byte order mark is not a column, and is not quoted. */
    check_excerpt(expect_error("\xef\xbb\xbfiterations: x", "1:13", "got 'x'"), "iterations: x",
                  13);
    /* \r\n line ends: the quoted line has no \r. */
    check_excerpt(expect_error("model: a\r\nwarmup: x\r\n", "2:9", "got 'x'"), "warmup: x", 9);
}

static void long_lines_are_quoted_around_the_column(void **state) {
    (void)state;
    char yaml[2048] = "paths: [";
    for (int i = 0; i < 150; i++)
        strcat(yaml, "ab, ");
    strcat(yaml, "[x], ");
    for (int i = 0; i < 150; i++)
        strcat(yaml, "cd, ");
    strcat(yaml, "ef]");
    const char *msg = expect_error(yaml, "1:609", "each entry of 'paths' must be a string");
    const char *line = strchr(msg, '\n'), *caret = line ? strchr(line + 1, '\n') : NULL;
    assert_non_null(caret);
    assert_true(caret - line < 200);          /* a window, not the whole line */
    assert_memory_equal(line, "\n  ...", 6);  /* which says it is cut */
    assert_memory_equal(caret - 3, "...", 3); /* at both ends */
    /* The caret sits under the '[' of "[x]". */
    size_t caret_col = strlen(caret) - 1;
    assert_int_equal(line[caret_col], '[');
    assert_int_equal(line[caret_col + 1], 'x');
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(syntax_error_points_at_the_offending_token),
        cmocka_unit_test(caret_counts_characters_and_keeps_tabs),
        cmocka_unit_test(long_lines_are_quoted_around_the_column),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
