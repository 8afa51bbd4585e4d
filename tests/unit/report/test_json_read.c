/* test_json_read.c: JSON reports read back (lp_report): written again byte for byte, the same tree
 * (the other formats agree), the nodes as sessions give them, old files without newer fields, and
 * files that are not reports. */
#define _POSIX_C_SOURCE 200809L
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

/* fx_small's tree written as JSON (with `run`, or none) to a temporary file and loaded back;
 * *path and *text (the JSON) are the caller's to unlink and free. */
static lp_report *small_report(lp_tree *t, json_t *run, const char **path, char **text) {
    fx_small(t);
    *text = json_of(t, run);
    *path = temp_file_with(*text);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, *path), LP_OK);
    return r;
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
    assert_int_equal(lp_report_render(r, LP_FORMAT_JSON, NULL, f), LP_OK);
    char *second = fx_close(f);
    assert_string_equal(first, second);

    /* And the tree read back is the tree written: the other formats agree too. */
    FILE *a = fx_open(), *b = fx_open();
    assert_int_equal(lp_render_csv(&t, NULL, a), LP_OK);
    assert_int_equal(lp_report_render(r, LP_FORMAT_CSV, NULL, b), LP_OK);
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

/* Durations whose mean and std are not short decimals (1/3s, 1e12-scale values), and nodes of
 * every kind: what the file holds must come back bit for bit. The file holds the std, not m2: the
 * m2 read back is the one that gives that std again, within a rounding of the original. */
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
    assert_int_equal(lp_report_render(r, LP_FORMAT_JSON, NULL, f), LP_OK);
    char *second = fx_close(f);
    assert_string_equal(first, second);

    const lp_tree *back = lp_report_tree(r);
    for (size_t i = 0; i < t.n_nodes; i++) {
        const lp_welford *a = &t.nodes[i].fig.time, *b = &back->nodes[i].fig.time;
        assert_int_equal(back->nodes[i].kind, t.nodes[i].kind);
        assert_int_equal(b->n, a->n);
        assert_memory_equal(&b->mean, &a->mean, sizeof a->mean);
        double std_a = lp_welford_std(a), std_b = lp_welford_std(b);
        assert_memory_equal(&std_b, &std_a, sizeof std_a);
        assert_true(fabs(b->m2 - a->m2) <= 1e-14 * a->m2);
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

/* Schema 1 held Welford's m2 where 2 holds std_ns: both read to the same statistics, and the
 * report renders again as schema 2. */
static void schema_1_m2_and_schema_2_std_read_alike(void **state) {
    (void)state;
    static const char *const time_of[] = {
        "{\"n\": 3, \"mean_ns\": 100.0, \"m2\": 200.0, \"min_ns\": 90, \"max_ns\": 110}",
        "{\"n\": 3, \"mean_ns\": 100.0, \"std_ns\": 10.0, \"min_ns\": 90, \"max_ns\": 110}"};
    for (int version = 1; version <= 2; version++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "{\"schema_version\": %d, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
                 "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, "
                 "\"iterations\": 3, \"modules\": [{\"path\": \"\", \"name\": \"Net\", "
                 "\"class\": \"Net\", \"parent\": -1, \"depth\": 0, \"selected\": true, "
                 "\"calls\": 3, \"total_ns\": 300, \"self_ns\": 300, \"time\": %s}]}",
                 version, time_of[version - 1]);
        const char *path = temp_file_with(text);
        lp_report *r = NULL;
        assert_int_equal(lp_report_load(&r, path), LP_OK);
        lp_node_info info;
        assert_int_equal(lp_report_node(r, 0, &info), LP_OK);
        assert_true(info.time_mean_ns == 100.0);
        assert_true(info.time_std_ns == 10.0); /* sqrt(200 / 2) */
        lp_meta_info meta;
        assert_int_equal(lp_report_meta(r, &meta), LP_OK);
        assert_int_equal(meta.schema_version, version);
        FILE *f = fx_open();
        assert_int_equal(lp_report_render(r, LP_FORMAT_JSON, NULL, f), LP_OK);
        char *again = fx_close(f);
        assert_non_null(strstr(again, "\"schema_version\": 2"));
        assert_non_null(strstr(again, "\"std_ns\": 10.0"));
        assert_null(strstr(again, "\"m2\""));
        free(again);
        lp_report_free(r);
        unlink(path);
    }
    /* A schema-2 file's time needs std_ns, and a negative one is refused. */
    const char *bad =
        "{\"schema_version\": 2, \"run\": {}, \"recorded\": {\"cpu_memory\": false, "
        "\"cuda_memory\": false, \"cuda_time\": false, \"ops\": false}, \"iterations\": 3, "
        "\"modules\": [{\"path\": \"\", \"name\": \"Net\", \"class\": \"Net\", \"parent\": -1, "
        "\"depth\": 0, \"selected\": true, \"calls\": 3, \"total_ns\": 300, \"self_ns\": 300, "
        "\"time\": {\"n\": 3, \"mean_ns\": 100.0, \"std_ns\": -1.0, \"min_ns\": 90, "
        "\"max_ns\": 110}}]}";
    const char *path = temp_file_with(bad);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "std_ns"));
    unlink(path);
}

static int append_piece(void *payload, const char *data, size_t size) {
    FILE *f = payload;
    return fwrite(data, 1, size, f) == size ? 0 : 1;
}

static int refuse_piece(void *payload, const char *data, size_t size) {
    (void)payload, (void)data, (void)size;
    return 1;
}

/* A report renders with a session's display options, to a FILE or a write callback. */
static void reports_render_with_display_options_and_to_a_callback(void **state) {
    (void)state;
    lp_tree t;
    const char *path;
    char *text;
    lp_report *r = small_report(&t, NULL, &path, &text);
    FILE *f = fx_open();
    assert_int_equal(lp_report_render(r, LP_FORMAT_TREE, NULL, f), LP_OK);
    char *plain = fx_close(f);

    lp_options display;
    lp_options_init(&display);
    display.depth = 0;
    display.ascii = 1;
    static const char *const columns[] = {"calls", "self_cpu"};
    display.columns = columns;
    display.n_columns = 2;
    f = fx_open();
    assert_int_equal(lp_report_render(r, LP_FORMAT_TREE, &display, f), LP_OK);
    char *shaped = fx_close(f);
    assert_string_not_equal(plain, shaped);
    assert_non_null(strstr(shaped, "Number of Calls | Self CPU total"));
    assert_null(strstr(shaped, "CPU total |")); /* only the two columns */
    assert_null(strstr(shaped, "\n|-- "));      /* depth 0: the root alone */
    assert_null(strstr(shaped, "\n`-- "));
    assert_non_null(strstr(shaped, "folded into their ancestor"));
    display.depth = -1; /* every module, drawn in ASCII */
    f = fx_open();
    assert_int_equal(lp_report_render(r, LP_FORMAT_TREE, &display, f), LP_OK);
    char *ascii = fx_close(f);
    assert_non_null(strstr(ascii, "\n`-- "));
    assert_null(strstr(ascii, "\xe2\x94"));     /* no box-drawing glyph */
    assert_non_null(strstr(plain, "\xe2\x94")); /* which the default has */
    free(ascii);
    display.depth = 0;

    /* The callback gets the same bytes as the FILE. */
    FILE *pieces = fx_open();
    assert_int_equal(lp_report_render_to(r, LP_FORMAT_TREE, &display, append_piece, pieces), LP_OK);
    char *via_callback = fx_close(pieces);
    assert_string_equal(via_callback, shaped);
    assert_int_equal(lp_report_render_to(r, LP_FORMAT_TREE, NULL, refuse_piece, NULL), LP_ERR_IO);
    assert_non_null(strstr(lp_error_last(), "write callback refused"));

    /* An unknown column is refused before anything is written. */
    static const char *const wrong[] = {"calls", "self_cpux"};
    display.columns = wrong;
    f = fx_open();
    assert_int_equal(lp_report_render(r, LP_FORMAT_TREE, &display, f), LP_ERR_NOT_FOUND);
    char *nothing = fx_close(f);
    assert_string_equal(nothing, "");
    assert_non_null(strstr(lp_error_last(), "self_cpux"));

    free(plain);
    free(shaped);
    free(via_callback);
    free(nothing);
    free(text);
    lp_report_free(r);
    unlink(path);
    lp_tree_free(&t);
}

/* Output structs are filled through macros that pass the caller's sizeof. A struct from a newer
 * header (larger) gets this library's fields and the rest is left alone; one smaller than the
 * first version is refused with nothing written. */
static void getters_write_no_more_than_the_callers_struct(void **state) {
    (void)state;
    lp_tree t;
    const char *path;
    char *text;
    lp_report *r = small_report(&t, NULL, &path, &text);
    struct {
        lp_node_info info;
        unsigned char newer_fields[64];
    } big;
    memset(&big, 0xCD, sizeof big);
    assert_int_equal(lp_report_node_sized(r, 0, &big.info, sizeof big), LP_OK);
    assert_string_equal(big.info.class_name, "Net");
    for (size_t i = 0; i < sizeof big.newer_fields; i++)
        assert_int_equal(big.newer_fields[i], 0xCD);
    lp_node_info exact;
    assert_int_equal(lp_report_node(r, 0, &exact), LP_OK); /* the macro: sizeof exact */
    assert_memory_equal(&exact, &big.info, sizeof exact);

    unsigned char small[sizeof(lp_node_info)];
    memset(small, 0xCD, sizeof small);
    assert_int_equal(lp_report_node_sized(r, 0, (lp_node_info *)(void *)small, 16), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "a lp_node_info of 16 bytes is smaller than any"));
    for (size_t i = 0; i < sizeof small; i++)
        assert_int_equal(small[i], 0xCD);

    struct {
        lp_meta_info meta;
        unsigned char newer_fields[32];
    } meta;
    memset(&meta, 0xCD, sizeof meta);
    assert_int_equal(lp_report_meta_sized(r, &meta.meta, sizeof meta), LP_OK);
    assert_int_equal(meta.meta.schema_version, 2);
    for (size_t i = 0; i < sizeof meta.newer_fields; i++)
        assert_int_equal(meta.newer_fields[i], 0xCD);
    assert_int_equal(lp_report_meta_sized(r, &meta.meta, 8), LP_ERR_INVALID);

    free(text);
    lp_report_free(r);
    unlink(path);
    lp_tree_free(&t);
}

static void report_nodes_read_back_like_session_nodes(void **state) {
    (void)state;
    lp_tree t;
    json_t *run = fx_run();
    const char *path;
    char *text;
    lp_report *r = small_report(&t, run, &path, &text);
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
    lp_meta_info meta;
    assert_int_equal(lp_report_meta(r, &meta), LP_OK);
    assert_string_equal(meta.date, "2024-01-02T03:04:05Z");
    assert_string_equal(meta.mode, "hooks");
    assert_int_equal(meta.schema_version, 2);
    assert_int_equal(lp_report_render(r, LP_FORMAT_TRACE, NULL, stdout), LP_ERR_UNSUPPORTED);
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
        {"{\"schema_version\": 3, \"run\": {}}",
         "schema_version 3 is not one this layerprof reads (1 to 2; written by a newer"},
        {"{\"schema_version\": 0, \"run\": {}}", "schema_version 0 is not one"},
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

/* A package's fused modules: "fused_into" in the JSON says where their time went, it reads back
 * (the same file again, the same rows in every format) and the node getter gives it; other
 * modules have none. */
static void where_fused_modules_time_went_survives_the_round_trip(void **state) {
    (void)state;
    lp_tree t;
    fx_fused_package(&t);
    char *first = json_of(&t, NULL);
    assert_non_null(strstr(first, "\"fused_into\": {\n        \"module\": \"layer1.0\""));
    const char *path = temp_file_with(first);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    static const lp_format formats[] = {LP_FORMAT_JSON, LP_FORMAT_TREE, LP_FORMAT_CSV,
                                        LP_FORMAT_MARKDOWN, LP_FORMAT_SUMMARY};
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        FILE *f = fx_open();
        assert_int_equal(lp_report_render(r, formats[i], NULL, f), LP_OK);
        char *text = fx_close(f);
        if (formats[i] == LP_FORMAT_JSON) {
            assert_string_equal(first, text);     /* written back byte for byte */
        } else if (formats[i] == LP_FORMAT_CSV) { /* the receiving module's path, the kernel */
            assert_non_null(strstr(text, ",layer1.0,cpp_fused_"));
            assert_non_null(strstr(text, ",,cpp_fused_max_pool2d_relu_0\r\n"));
        } else if (formats[i] == LP_FORMAT_MARKDOWN) { /* markdown escapes '_' and '[' */
            assert_non_null(strstr(text, "bn1 \\[fused into layer1.0: cpp\\_fused\\_"));
            assert_non_null(strstr(text, "\\[fused into ResNet: cpp\\_fused\\_max"));
        } else {
            assert_non_null(strstr(text, "fused into layer1.0: cpp_fused_"));
            assert_non_null(strstr(text, "fused into ResNet: cpp_fused_max_pool2d_relu_0"));
        }
        free(text);
    }
    size_t bn1 = 0, conv1 = 0;
    assert_int_equal(lp_report_find(r, "layer1.0.bn1", &bn1), LP_OK);
    assert_int_equal(lp_report_find(r, "layer1.0.conv1", &conv1), LP_OK);
    lp_node_info info;
    assert_int_equal(lp_report_node(r, bn1, &info), LP_OK);
    assert_string_equal(info.fused_into_module, "layer1.0");
    assert_string_equal(info.fused_into_kernel, fx_fused_kernel);
    assert_int_equal(info.fused_into_more, 0);
    assert_int_equal(info.raw_total_ns, 0); /* says where the time went; moves none */
    assert_int_equal(lp_report_node(r, conv1, &info), LP_OK);
    assert_null(info.fused_into_module);
    assert_null(info.fused_into_kernel);
    lp_report_free(r);
    unlink(path);
    free(first);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_round_trip_write_read_write_gives_identical_bytes),
        cmocka_unit_test(json_round_trip_keeps_welford_doubles_and_kinds_exactly),
        cmocka_unit_test(a_report_without_kind_or_time_reads_as_modules_without_statistics),
        cmocka_unit_test(schema_1_m2_and_schema_2_std_read_alike),
        cmocka_unit_test(report_nodes_read_back_like_session_nodes),
        cmocka_unit_test(reports_render_with_display_options_and_to_a_callback),
        cmocka_unit_test(getters_write_no_more_than_the_callers_struct),
        cmocka_unit_test(loading_a_file_that_is_not_a_report_names_the_problem),
        cmocka_unit_test(where_fused_modules_time_went_survives_the_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
