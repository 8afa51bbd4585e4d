/* test_render_html.c: the HTML page: self-contained, its data block the JSON report, escaped. */
#include "export_fixtures.h"

static void html_page_is_self_contained_and_carries_the_report(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    /* A class name that would close the data block if it were not escaped. */
    assert_int_equal(lp_tree_set_class(&t, 4, "</script><b>Linear"), LP_OK);
    json_t *run = fx_run();
    FILE *f = fx_open();
    assert_int_equal(lp_render_html(&t, NULL, run, f), LP_OK);
    char *html = fx_close(f);
    assert_true(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    assert_non_null(strstr(html, "</html>\n"));
    /* No network: nothing is fetched from anywhere. */
    assert_null(strstr(html, "<link"));
    assert_null(strstr(html, "src=\"http"));
    assert_null(strstr(html, "url("));
    assert_null(strstr(html, "fetch("));
    /* The data block parses back into the report the JSON format writes. */
    const char *open_tag = "<script type=\"application/json\" id=\"lp-data\">\n";
    char *start = strstr(html, open_tag);
    assert_non_null(start);
    start += strlen(open_tag);
    char *end = strstr(start, "</script>");
    assert_non_null(end);
    *end = '\0';
    json_error_t err;
    json_t *data = json_loads(start, 0, &err);
    if (!data) fail_msg("page data does not parse: %s", err.text);
    json_t *mods = json_object_get(json_object_get(data, "report"), "modules");
    assert_int_equal(json_array_size(mods), t.n_nodes);
    assert_string_equal(json_string_value(json_object_get(json_array_get(mods, 4), "class")),
                        "</script><b>Linear");
    assert_true(json_is_null(json_object_get(data, "timeline")));
    json_decref(data);
    free(html);
    json_decref(run);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(html_page_is_self_contained_and_carries_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
