/* test_export.c: JSON, CSV, markdown and HTML from a hand-built tree, against golden files; the
 * JSON report read back (lp_report) and written again byte for byte; format names. */
#define _POSIX_C_SOURCE 200809L
#include "base/units.h"
#include "export_fixtures.h"

#include <math.h>
#include <unistd.h>

#include "layerprof.h"

/* Writes `text` to a fresh temporary file and returns its path (static buffer). */
static const char *temp_file_with(const char *text) {
    static char path[64];
    snprintf(path, sizeof path, "/tmp/lp_test_export_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static char *json_of(const lp_tree *t, const json_t *run) {
    FILE *f = fx_open();
    assert_int_equal(lp_render_json(t, run, f), LP_OK);
    return fx_close(f);
}

/* JSON ----------------------------------------------------------------------------------------- */

static void json_report_of_a_synthetic_tree_matches_golden(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    json_t *run = fx_run();
    char *text = json_of(&t, run);
    fx_golden("export_report.json", text);
    free(text);
    json_decref(run);
    lp_tree_free(&t);
}

static void json_report_holds_integers_but_for_the_welford_terms(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    char *text = json_of(&t, NULL);
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    assert_non_null(doc);
    /* Walk every value: the only reals are a "time" object's mean_ns and m2 (doubles in the tree,
     * written with enough digits to read back exactly). */
    struct {
        json_t *v;
        const char *key;
    } stack[256];
    size_t sp = 0;
    stack[sp].v = doc;
    stack[sp++].key = "";
    size_t reals = 0, welford_reals = 0, ints = 0;
    while (sp) {
        sp--;
        json_t *v = stack[sp].v;
        const char *key = stack[sp].key;
        if (json_is_real(v)) {
            reals++;
            welford_reals += strcmp(key, "mean_ns") == 0 || strcmp(key, "m2") == 0;
        }
        if (json_is_integer(v)) ints++;
        const char *k;
        json_t *c;
        size_t i;
        if (json_is_object(v)) json_object_foreach(v, k, c) if (sp < 256) {
                stack[sp].v = c;
                stack[sp++].key = k;
            }
        if (json_is_array(v)) json_array_foreach(v, i, c) if (sp < 256) {
                stack[sp].v = c;
                stack[sp++].key = "";
            }
    }
    assert_int_equal(reals, welford_reals);
    /* mean_ns and m2 of every module (7, the one that never ran too: 0.0) and op row (3). */
    assert_int_equal(reals, 2 * (7 + 3));
    assert_true(ints > 50);
    json_t *mods = json_object_get(doc, "modules");
    assert_int_equal(json_array_size(mods), t.n_nodes);
    json_t *f0 = json_array_get(mods, 2);
    assert_string_equal(json_string_value(json_object_get(f0, "path")), "features.0");
    assert_int_equal(json_integer_value(json_object_get(f0, "total_ns")), 1000000);
    json_t *conv = json_array_get(json_object_get(f0, "ops"), 0);
    assert_string_equal(json_string_value(json_object_get(conv, "shapes")),
                        "[1, 3, 8, 8], [4, 3, 3, 3]");
    assert_int_equal(json_array_size(json_object_get(conv, "ops")), 1);
    json_decref(doc);
    free(text);
    lp_tree_free(&t);
}

static void json_round_trip_write_read_write_gives_identical_bytes(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    json_t *run = fx_run();
    char *first = json_of(&t, run);
    const char *path = temp_file_with(first);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    FILE *f = fx_open();
    assert_int_equal(lp_report_render(r, LP_FORMAT_JSON, f), LP_OK);
    char *second = fx_close(f);
    assert_string_equal(first, second);

    /* And the tree read back is the tree written: the other formats agree too. */
    FILE *a = fx_open(), *b = fx_open();
    assert_int_equal(lp_render_csv(&t, NULL, a), LP_OK);
    assert_int_equal(lp_report_render(r, LP_FORMAT_CSV, b), LP_OK);
    char *csv_a = fx_close(a), *csv_b = fx_close(b);
    assert_string_equal(csv_a, csv_b);
    free(csv_a);
    free(csv_b);

    lp_report_free(r);
    unlink(path);
    free(first);
    free(second);
    json_decref(run);
    lp_tree_free(&t);
}

/* Durations whose mean and m2 are not short decimals (1/3s, 1e12-scale values), and nodes of every
 * kind: what the file holds must come back bit for bit. */
static void json_round_trip_keeps_welford_doubles_and_kinds_exactly(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 3;
    int32_t session = fx_add(&t, "", "Session", -1);
    int32_t ctx = fx_add(&t, "main", "Context", session);
    int32_t region = fx_add(&t, "main.step", "Region", ctx);
    int32_t mod = fx_add(&t, "main.step.net", "Net", region);
    t.nodes[session].kind = LP_NODE_SESSION;
    t.nodes[ctx].kind = LP_NODE_CONTEXT;
    t.nodes[region].kind = LP_NODE_REGION;
    static const uint64_t samples[][3] = {{1000000000007ull, 999999999989ull, 1000000000013ull},
                                          {1000000000000ull, 999999999990ull, 1000000000010ull},
                                          {10, 20, 35},
                                          {7, 8, 8}};
    for (int32_t i = 0; i < 4; i++) {
        lp_figures *f = &t.nodes[i].fig;
        f->calls = 3;
        for (int k = 0; k < 3; k++) {
            lp_welford_add(&f->time, samples[i][k]);
            f->total_ns += samples[i][k];
            f->self_ns += samples[i][k] / 2;
        }
    }
    lp_tree_set_shares(&t);
    char *first = json_of(&t, NULL);
    assert_non_null(strstr(first, "\"kind\": \"context\""));
    const char *path = temp_file_with(first);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    FILE *f = fx_open();
    assert_int_equal(lp_report_render(r, LP_FORMAT_JSON, f), LP_OK);
    char *second = fx_close(f);
    assert_string_equal(first, second);

    const lp_tree *back = lp_report_tree(r);
    for (size_t i = 0; i < t.n_nodes; i++) {
        const lp_welford *a = &t.nodes[i].fig.time, *b = &back->nodes[i].fig.time;
        assert_int_equal(back->nodes[i].kind, t.nodes[i].kind);
        assert_int_equal(b->n, a->n);
        assert_memory_equal(&b->mean, &a->mean, sizeof a->mean);
        assert_memory_equal(&b->m2, &a->m2, sizeof a->m2);
        assert_int_equal(b->min, a->min);
        assert_int_equal(b->max, a->max);
        /* Shares are derived again on load, from the same totals. */
        assert_int_equal(back->nodes[i].fig.share_base_ns, t.nodes[i].fig.share_base_ns);
    }
    lp_node_info info;
    assert_int_equal(lp_report_node(r, (size_t)mod, &info), LP_OK);
    assert_int_equal(info.kind, LP_NODE_MODULE);
    assert_true(info.time_min_ns == 7 && info.time_max_ns == 8);
    assert_true(info.time_mean_ns == t.nodes[mod].fig.time.mean);
    assert_true(info.time_std_ns == lp_welford_std(&t.nodes[mod].fig.time));
    /* net's base is its context's total: 23 / 3000000000000. */
    assert_true(info.share == 23.0 / 3000000000000.0);
    assert_int_equal(lp_report_node(r, (size_t)ctx, &info), LP_OK);
    assert_int_equal(info.kind, LP_NODE_CONTEXT);

    lp_report_free(r);
    unlink(path);
    free(first);
    free(second);
    lp_tree_free(&t);
}

/* A report written before kinds and per-call times existed: every node a module, no statistics. */
static void a_report_without_kind_or_time_reads_as_modules_without_statistics(void **state) {
    (void)state;
    const char *text =
        "{\"schema_version\": 1, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
        "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, \"iterations\": 2, "
        "\"modules\": [{\"path\": \"\", \"name\": \"Net\", \"class\": \"Net\", \"parent\": -1, "
        "\"depth\": 0, \"selected\": true, \"calls\": 2, \"total_ns\": 4000, \"self_ns\": 1000}, "
        "{\"path\": \"fc\", \"name\": \"fc\", \"class\": \"Linear\", \"parent\": 0, "
        "\"depth\": 1, \"selected\": true, \"calls\": 2, \"total_ns\": 3000, \"self_ns\": 3000}]}";
    const char *path = temp_file_with(text);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    lp_node_info info;
    assert_int_equal(lp_report_node(r, 1, &info), LP_OK);
    assert_int_equal(info.kind, LP_NODE_MODULE);
    assert_int_equal(info.raw_calls, 2);
    assert_true(info.time_mean_ns == 0.0 && info.time_std_ns == 0.0);
    assert_int_equal(info.time_min_ns, 0);
    assert_int_equal(info.time_max_ns, 0);
    assert_true(info.share == 0.75); /* shares need only the totals */
    lp_report_free(r);
    unlink(path);
}

static void report_nodes_read_back_like_session_nodes(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    json_t *run = fx_run();
    char *text = json_of(&t, run);
    const char *path = temp_file_with(text);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    size_t n = 0, idx = 0;
    assert_int_equal(lp_report_node_count(r, &n), LP_OK);
    assert_int_equal(n, 7);
    assert_int_equal(lp_report_find(r, "head", &idx), LP_OK);
    lp_node_info info;
    assert_int_equal(lp_report_node(r, idx, &info), LP_OK);
    assert_string_equal(info.class_name, "Linear");
    assert_int_equal(info.raw_calls, 4);
    assert_int_equal(info.iterations, 2);
    assert_true(info.calls == 2.0);
    assert_true(info.total_ns == 200000.0);
    assert_true(info.cpu_mem.recorded);
    assert_true(info.cpu_mem.peak == 4096.0);
    /* head's 4 calls alternate 90us and 110us (fx_times); its share is 400us of the root's 2ms. */
    assert_int_equal(info.kind, LP_NODE_MODULE);
    assert_true(fabs(info.time_mean_ns - 100000.0) < 1e-6);
    assert_true(fabs(info.time_std_ns - sqrt(4 * 10000.0 * 10000.0 / 3)) < 1e-6);
    assert_int_equal(info.time_min_ns, 90000);
    assert_int_equal(info.time_max_ns, 110000);
    assert_true(info.share == 0.2);
    assert_int_equal(lp_report_find(r, "nope", &idx), LP_ERR_NOT_FOUND);
    lp_report_meta meta;
    assert_int_equal(lp_report_get_meta(r, &meta), LP_OK);
    assert_string_equal(meta.date, "2024-01-02T03:04:05Z");
    assert_string_equal(meta.mode, "hooks");
    assert_int_equal(meta.schema_version, 1);
    assert_int_equal(lp_report_render(r, LP_FORMAT_TRACE, stdout), LP_ERR_UNSUPPORTED);
    lp_report_free(r);
    unlink(path);
    free(text);
    json_decref(run);
    lp_tree_free(&t);
}

static void loading_a_file_that_is_not_a_report_names_the_problem(void **state) {
    (void)state;
    lp_report *r = (lp_report *)1;
    assert_int_equal(lp_report_load(&r, "/nonexistent/r.json"), LP_ERR_IO);
    assert_null(r);
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"{ not json", "r.json"},
        {"[1, 2]", "not a JSON object"},
        {"{\"modules\": []}", "schema_version"},
        {"{\"schema_version\": 2, \"run\": {}}", "schema_version 2"},
        {"{\"schema_version\": 1, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
         "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, \"iterations\": 1, "
         "\"modules\": [{\"path\": \"\", \"class\": \"Net\", \"parent\": -1, \"selected\": "
         "true, \"calls\": \"1\"}]}",
         "modules[0].calls"},
        {"{\"schema_version\": 1, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
         "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, \"iterations\": 1, "
         "\"modules\": [{\"path\": \"\", \"class\": \"Net\", \"parent\": 3}]}",
         "modules[0].parent"},
        {"{\"schema_version\": 1, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
         "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, \"iterations\": 1, "
         "\"modules\": [{\"path\": \"\", \"class\": \"Net\", \"kind\": \"layer\", \"parent\": "
         "-1}]}",
         "modules[0].kind"},
        {"{\"schema_version\": 1, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
         "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, \"iterations\": 1, "
         "\"modules\": [{\"path\": \"\", \"class\": \"Net\", \"parent\": -1, \"selected\": "
         "true, \"calls\": 1, \"total_ns\": 5, \"self_ns\": 5, \"time\": {\"n\": 1, "
         "\"mean_ns\": \"5\", \"m2\": 0, \"min_ns\": 5, \"max_ns\": 5}}]}",
         "modules[0].time.mean_ns"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *path = temp_file_with(cases[i].text);
        char named[128];
        snprintf(named, sizeof named, "%s", path);
        r = NULL;
        assert_int_equal(lp_report_load(&r, named), LP_ERR_INVALID);
        assert_null(r);
        const char *says = strcmp(cases[i].says, "r.json") == 0 ? "lp_test_export" : cases[i].says;
        if (!strstr(lp_error_last(), says))
            fail_msg("case %zu: '%s' does not mention '%s'", i, lp_error_last(), says);
        unlink(named);
    }
}

/* CSV, markdown -------------------------------------------------------------------------------- */

static void csv_of_a_synthetic_tree_matches_golden(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    FILE *f = fx_open();
    assert_int_equal(lp_render_csv(&t, NULL, f), LP_OK);
    char *text = fx_close(f);
    fx_golden("export_report.csv", text);
    /* One row per module and op row, plus the header; RFC 4180 line ends and quoting. */
    size_t lines = 0;
    for (const char *p = text; (p = strstr(p, "\r\n")); p += 2)
        lines++;
    assert_int_equal(lines, 1 + t.n_nodes + t.n_ops);
    assert_non_null(strstr(text, "\"head.w|\"\"q\"\",x\""));
    assert_non_null(strstr(text, "\"features.0/aten::conv2d [[1, 3, 8, 8], [4, 3, 3, 3]]\""));
    free(text);
    lp_tree_free(&t);
}

static void csv_follows_the_chosen_columns(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    const char *const cols[] = {"calls", "cpu_total"};
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = cols;
    ro.n_columns = 2;
    ro.show_ops = 0;
    FILE *f = fx_open();
    assert_int_equal(lp_render_csv(&t, &ro, f), LP_OK);
    char *text = fx_close(f);
    assert_true(strncmp(text, "path,kind,name,class,depth,calls,cpu_total_ns\r\n", 47) == 0);
    assert_non_null(strstr(text, "\r\nhead,module,head,Linear,1,2,200000\r\n"));
    assert_non_null(strstr(text, "\r\nunused,module,unused,Dropout,1,,\r\n"));
    assert_null(strstr(text, "aten::"));
    free(text);
    lp_tree_free(&t);
}

static void markdown_of_a_synthetic_tree_matches_golden(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    json_t *run = fx_run();
    const char *notes[] = {"mode: hooks (a note)"};
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.notes = notes;
    ro.n_notes = 1;
    FILE *f = fx_open();
    assert_int_equal(lp_render_markdown(&t, &ro, run, f), LP_OK);
    char *text = fx_close(f);
    fx_golden("export_report.md", text);
    free(text);

    /* Folded at depth 1: features takes in its children's self time, the Total is unchanged. */
    ro.depth = 1;
    ro.show_ops = 0;
    f = fx_open();
    assert_int_equal(lp_render_markdown(&t, &ro, NULL, f), LP_OK);
    text = fx_close(f);
    fx_golden("export_report_depth1.md", text);
    free(text);
    json_decref(run);
    lp_tree_free(&t);
}

/* HTML ----------------------------------------------------------------------------------------- */

static void html_page_is_self_contained_and_carries_the_report(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    /* A class name that would close the data block if it were not escaped. */
    free(t.nodes[4].class_name);
    t.nodes[4].class_name = strdup("</script><b>Linear");
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

/* Names ---------------------------------------------------------------------------------------- */

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

static void export_dates_are_iso_8601_utc(void **state) {
    (void)state;
    char buf[32];
    lp_format_date(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    lp_format_date(1704164645, buf, sizeof buf);
    assert_string_equal(buf, "2024-01-02T03:04:05Z");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_report_of_a_synthetic_tree_matches_golden),
        cmocka_unit_test(json_report_holds_integers_but_for_the_welford_terms),
        cmocka_unit_test(json_round_trip_write_read_write_gives_identical_bytes),
        cmocka_unit_test(json_round_trip_keeps_welford_doubles_and_kinds_exactly),
        cmocka_unit_test(a_report_without_kind_or_time_reads_as_modules_without_statistics),
        cmocka_unit_test(report_nodes_read_back_like_session_nodes),
        cmocka_unit_test(loading_a_file_that_is_not_a_report_names_the_problem),
        cmocka_unit_test(csv_of_a_synthetic_tree_matches_golden),
        cmocka_unit_test(csv_follows_the_chosen_columns),
        cmocka_unit_test(markdown_of_a_synthetic_tree_matches_golden),
        cmocka_unit_test(html_page_is_self_contained_and_carries_the_report),
        cmocka_unit_test(format_names_parse_and_files_imply_formats),
        cmocka_unit_test(export_dates_are_iso_8601_utc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
