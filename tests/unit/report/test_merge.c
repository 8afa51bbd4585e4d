/* test_merge.c: `layerprof merge` on hand-built reports whose distributions are known exactly:
 * nearest-rank median and p90, the max's source, the skew, the ranking by skew, and the reports
 * refused (another model, another tree, other options without LP_MERGE_FORCE). The reports go
 * through JSON files and lp_report_load, as the CLI reads them. */
#define _POSIX_C_SOURCE 200809L
#include "report_load_fixture.h"

#include "report/merge_stats.h"

/* Net (root) > conv (Conv2d), relu (ReLU); conv runs once per forward, relu twice. `conv_us`:
 * conv's total (= self) per call; relu's total 10us per call; the root's total conv + 20 + 5. */
static void small_tree(lp_tree *t, uint64_t conv_us, const char *relu_class) {
    lp_tree_init(t);
    t->iterations = 2;
    int32_t root = fx_add(t, "", "Net", -1);
    int32_t conv = fx_add(t, "conv", "Conv2d", root);
    int32_t relu = fx_add(t, "relu", relu_class, root);
    fx_ran(t, root, 1, conv_us + 25, 5);
    fx_ran(t, conv, 1, conv_us, conv_us);
    fx_ran(t, relu, 2, 20, 20);
}

/* The tree as a JSON report, read back; `edit` changes the run object before writing. */
static lp_report *as_report(const lp_tree *t, void (*edit)(json_t *run)) {
    json_t *run = fx_run();
    if (edit) edit(run);
    lp_report *r = fx_report(t, run);
    json_decref(run);
    return r;
}

static int add_tree(lp_merge *m, uint64_t conv_us, const char *label, void (*edit)(json_t *)) {
    lp_tree t;
    small_tree(&t, conv_us, "ReLU");
    lp_report *r = as_report(&t, edit);
    lp_tree_free(&t);
    int rc = lp_merge_add(m, r, label, "synthetic.json");
    lp_report_free(r);
    return rc;
}

static json_t *render_json(const lp_merge *m, int top) {
    FILE *f = fx_open();
    assert_int_equal(lp_merge_render(m, LP_FORMAT_JSON, NULL, 0, top, NULL, f), LP_OK);
    char *text = fx_close(f);
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    assert_non_null(doc);
    free(text);
    return doc;
}

static json_t *module(json_t *doc, const char *path) {
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(doc, "modules"), i, m) {
        if (strcmp(json_string_value(json_object_get(m, "path")), path) == 0) return m;
    }
    fail_msg("no module '%s'", path);
    return NULL;
}

static double fig(json_t *mod, const char *q, const char *key) {
    return json_number_value(json_object_get(json_object_get(mod, q), key));
}

static void nearest_rank_is_exact(void **state) {
    (void)state;
    const double four[] = {1, 2, 3, 4}, five[] = {10, 20, 30, 40, 50};
    assert_true(lp_nearest_rank(four, 4, 50) == 2);  /* rank ceil(2.0) = 2: the lower middle */
    assert_true(lp_nearest_rank(four, 4, 90) == 4);  /* rank ceil(3.6) = 4 */
    assert_true(lp_nearest_rank(five, 5, 50) == 30); /* rank ceil(2.5) = 3 */
    assert_true(lp_nearest_rank(five, 5, 90) == 50); /* rank ceil(4.5) = 5 */
    assert_true(lp_nearest_rank(five, 1, 90) == 10);
    const double ten[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_true(lp_nearest_rank(ten, 10, 90) == 9); /* rank ceil(9.0) = 9 exactly */
}

/* Five ranks; rank 3's conv is the straggler (1000us against 100..400). */
static void distributions_are_exact(void **state) {
    (void)state;
    static const uint64_t conv[] = {300, 100, 1000, 400, 200};
    static const char *const labels[] = {"rank=0", "rank=1", "rank=2", "rank=3", "rank=4"};
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    for (int i = 0; i < 5; i++)
        assert_int_equal(add_tree(m, conv[i], labels[i], NULL), LP_OK);
    json_t *doc = render_json(m, 0);
    assert_int_equal(json_integer_value(json_object_get(doc, "reports")), 5);
    json_t *c = module(doc, "conv");
    assert_true(fig(c, "total", "min_ns") == 100000.0);
    assert_true(fig(c, "total", "median_ns") == 300000.0); /* sorted 100 200 300 400 1000 */
    assert_true(fig(c, "total", "p90_ns") == 1000000.0);
    assert_true(fig(c, "total", "max_ns") == 1000000.0);
    assert_true(fig(c, "total", "skew") == 1000.0 / 300.0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(c, "total"), "max_source")), "rank=2");
    assert_true(fig(c, "self", "median_ns") == 300000.0);
    /* relu: 2 calls of 10us per forward in every report: per call 10us, no skew. */
    json_t *relu = module(doc, "relu");
    assert_true(fig(relu, "total", "median_ns") == 10000.0);
    assert_true(fig(relu, "total", "skew") == 1.0);
    assert_true(json_is_null(json_object_get(relu, "cuda_total")) ||
                !json_object_get(relu, "cuda_total"));
    json_decref(doc);

    /* Ranked by skew, the straggling conv first (then the root, which contains it). */
    doc = render_json(m, 2);
    json_t *mods = json_object_get(doc, "modules");
    assert_int_equal(json_array_size(mods), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(mods, 0), "path")),
                        "conv");
    assert_string_equal(json_string_value(json_object_get(json_array_get(mods, 1), "path")), "");
    json_decref(doc);

    /* The text tree: the columns asked, the max's source named. */
    FILE *f = fx_open();
    const char *cols[] = {"total_median", "total_p90", "skew", "total_source"};
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, cols, 4, 0, NULL, f), LP_OK);
    char *text = fx_close(f);
    assert_non_null(strstr(text, "5 reports of small.pt (cpu, hooks mode)"));
    assert_non_null(strstr(text, "├── conv |    300.000us |   1.000ms |      3.33x | rank=2\n"));
    assert_non_null(strstr(text, "└── relu |     10.000us |  10.000us |      1.00x | rank=0\n"));
    free(text);
    lp_merge_free(m);
}

static void labels_from_the_run(json_t *run) {
    json_object_set_new(run, "labels", json_pack("{s:s, s:s}", "host", "b", "rank", "7"));
}

static void sources_default_to_run_labels(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(add_tree(m, 100, NULL, NULL), LP_OK);
    assert_int_equal(add_tree(m, 900, NULL, labels_from_the_run), LP_OK);
    json_t *doc = render_json(m, 0);
    json_t *c = module(doc, "conv");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(c, "total"), "max_source")),
        "host=b,rank=7");
    assert_true(fig(c, "total", "median_ns") == 100000.0); /* of two, the lower */
    json_decref(doc);
    lp_merge_free(m);
}

static void no_inputs(json_t *run) {
    json_object_del(json_object_get(run, "options"), "inputs");
}

static void inputs_as_text(json_t *run) {
    json_object_set_new(json_object_get(run, "options"), "inputs", json_string("1x3x8x8"));
}

/* Reports from other writers: no inputs, or inputs of another type, still merge (they compare as
 * JSON text); a source name that is not UTF-8 reaches the JSON with its other bytes as '?'. */
static void odd_runs_and_sources_merge(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(add_tree(m, 100, "r=caf\xe9", no_inputs), LP_OK);
    assert_int_equal(add_tree(m, 900, NULL, no_inputs), LP_OK);
    json_t *doc = render_json(m, 0);
    json_t *c = module(doc, "conv");
    assert_non_null(json_object_get(c, "self")); /* every figure object written */
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(c, "total"), "max_source")),
        "synthetic.json");
    json_decref(doc);
    lp_merge_free(m);

    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(add_tree(m, 900, "r=caf\xe9", inputs_as_text), LP_OK);
    assert_int_equal(add_tree(m, 100, NULL, inputs_as_text), LP_OK);
    doc = render_json(m, 0);
    c = module(doc, "conv");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(c, "total"), "max_source")), "r=caf?");
    json_decref(doc);
    lp_merge_free(m);
}

static void other_model(json_t *run) {
    json_object_set_new(run, "model", json_string("/elsewhere/big.pt"));
}

static void same_model_elsewhere(json_t *run) {
    json_object_set_new(run, "model", json_string("/elsewhere/small.pt"));
}

static void other_threads(json_t *run) {
    json_object_set_new(json_object_get(run, "options"), "threads", json_integer(1));
}

static void refuses_other_models_and_trees(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, LP_MERGE_FORCE), LP_OK);
    assert_int_equal(add_tree(m, 100, "a", NULL), LP_OK);
    assert_int_equal(add_tree(m, 100, "b", same_model_elsewhere), LP_OK);
    assert_int_equal(add_tree(m, 100, "c", other_model), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(),
                        "synthetic.json: another model ('big.pt') than a's ('small.pt')");
    lp_tree t;
    small_tree(&t, 100, "GELU");
    lp_report *r = as_report(&t, NULL);
    lp_tree_free(&t);
    assert_int_equal(lp_merge_add(m, r, NULL, "gelu.json"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "gelu.json: another module tree than a's: module 2 is "
                                         "'relu' (ReLU) there, 'relu' (GELU) here");
    lp_report_free(r);
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t root = fx_add(&t, "", "Net", -1);
    fx_add(&t, "conv", "Conv2d", root);
    r = as_report(&t, NULL);
    lp_tree_free(&t);
    assert_int_equal(lp_merge_add(m, r, NULL, "short.json"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(),
                        "short.json: another module tree than a's: 2 modules here, 3 there");
    lp_report_free(r);
    lp_merge_free(m);
}

static void other_options_need_force(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(add_tree(m, 100, "a", NULL), LP_OK);
    assert_int_equal(add_tree(m, 100, "b", other_threads), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "synthetic.json: run with other options than a "
                                         "(threads); --force merges them anyway");
    lp_merge_free(m);

    assert_int_equal(lp_merge_new(&m, LP_MERGE_FORCE), LP_OK);
    assert_int_equal(add_tree(m, 100, "a", NULL), LP_OK);
    assert_int_equal(add_tree(m, 300, "b", other_threads), LP_OK);
    json_t *doc = render_json(m, 0);
    assert_string_equal(json_string_value(json_array_get(json_object_get(doc, "notes"), 0)),
                        "merged with --force: the reports differ in threads");
    json_decref(doc);
    FILE *f = fx_open();
    assert_int_equal(lp_merge_render(m, LP_FORMAT_CSV, NULL, 0, 0, NULL, f), LP_OK);
    char *text = fx_close(f);
    assert_non_null(strstr(text, "path,class,total_median_ns,"));
    assert_non_null(strstr(text, "conv,Conv2d,100000,300000,300000,3,b,"));
    free(text);
    lp_merge_free(m);
}

static void bad_calls(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    FILE *f = fx_open();
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, NULL, 0, 0, NULL, f), LP_ERR_INVALID);
    assert_int_equal(add_tree(m, 100, "a", NULL), LP_OK);
    const char *bad[] = {"total_p99"};
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, bad, 1, 0, NULL, f), LP_ERR_NOT_FOUND);
    const char *cuda[] = {"cuda_total_max"};
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, cuda, 1, 0, NULL, f), LP_ERR_INVALID);
    assert_int_equal(lp_merge_render(m, LP_FORMAT_HTML, NULL, 0, 0, NULL, f), LP_ERR_UNSUPPORTED);
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, NULL, 0, 3, "total_source", f),
                     LP_ERR_INVALID);
    free(fx_close(f));
    assert_int_equal(lp_merge_add(NULL, NULL, NULL, NULL), LP_ERR_INVALID);
    assert_int_equal(lp_merge_new(NULL, 0), LP_ERR_INVALID);
    lp_merge_free(m);
    lp_merge_free(NULL);
}

/* conv took no time in two ranks of three and 500us in the third: a median of 0, the worst
 * skew there is. It ranks first, as "inf" in the text and CSV and null in JSON (which has no
 * infinity); a module that took no time anywhere has no skew at all. */
static void zero_median_skew_ranks_first(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(add_tree(m, 0, "rank=0", NULL), LP_OK);
    assert_int_equal(add_tree(m, 500, "rank=1", NULL), LP_OK);
    assert_int_equal(add_tree(m, 0, "rank=2", NULL), LP_OK);
    json_t *doc = render_json(m, 1);
    json_t *first = json_array_get(json_object_get(doc, "modules"), 0);
    assert_string_equal(json_string_value(json_object_get(first, "path")), "conv");
    assert_true(json_is_null(json_object_get(json_object_get(first, "total"), "skew")));
    assert_true(fig(first, "total", "max_ns") == 500000.0);
    json_decref(doc);

    FILE *f = fx_open();
    const char *cols[] = {"total_median", "skew", "total_source"};
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, cols, 3, 2, NULL, f), LP_OK);
    char *text = fx_close(f);
    assert_non_null(strstr(text, "\nconv   |      0.000us |        inf | rank=1\n"
                                 "Net    |     25.000us |     21.00x | rank=1\n"));
    free(text);
    f = fx_open();
    assert_int_equal(lp_merge_render(m, LP_FORMAT_CSV, cols, 3, 1, NULL, f), LP_OK);
    text = fx_close(f);
    assert_non_null(strstr(text, "\r\nconv,Conv2d,0,inf,rank=1\r\n"));
    free(text);
    lp_merge_free(m);

    lp_spread s;
    double zeros[] = {0, 0}, scratch[2];
    lp_spread_of(zeros, 2, scratch, &s);
    assert_true(s.skew == 0.0);
}

/* Net > a, b; per call, a takes a_us and b b_us (each its own total), the root 1us of its own. */
static lp_report *two_leaves(uint64_t a_us, uint64_t b_us) {
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t root = fx_add(&t, "", "Net", -1);
    int32_t a = fx_add(&t, "a", "Linear", root), b = fx_add(&t, "b", "Linear", root);
    fx_ran(&t, root, 1, a_us + b_us + 1, 1);
    fx_ran(&t, a, 1, a_us, a_us);
    fx_ran(&t, b, 1, b_us, b_us);
    lp_report *r = as_report(&t, NULL);
    lp_tree_free(&t);
    return r;
}

/* Two infinite skews (medians of 0): the one with the greater max ranks first, whatever the
 * model order. */
static void equal_skews_rank_by_their_max(void **state) {
    (void)state;
    static const uint64_t a[] = {0, 300, 0}, b[] = {0, 0, 700};
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    for (int i = 0; i < 3; i++) {
        lp_report *r = two_leaves(a[i], b[i]);
        assert_int_equal(lp_merge_add(m, r, NULL, "leaves.json"), LP_OK);
        lp_report_free(r);
    }
    json_t *doc = render_json(m, 2);
    json_t *mods = json_object_get(doc, "modules");
    assert_string_equal(json_string_value(json_object_get(json_array_get(mods, 0), "path")), "b");
    assert_string_equal(json_string_value(json_object_get(json_array_get(mods, 1), "path")), "a");
    json_decref(doc);
    lp_merge_free(m);
}

/* A tree of 20,000 modules: the root's 19,990 direct children, then a chain 10 deep under the
 * last. Every row comes, in model order, with its branch glyphs (the walk has no recursion and
 * no rescans of the module list). */
static void wide_and_deep_trees_render(void **state) {
    (void)state;
    enum { WIDE = 19990, DEEP = 10 };
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t root = fx_add(&t, "", "Net", -1), parent = root;
    char path[64], chain[256] = "";
    for (int i = 0; i < WIDE; i++) {
        snprintf(path, sizeof path, "m%d", i);
        parent = fx_add(&t, path, "Linear", root);
        fx_ran(&t, parent, 1, 1, 1);
    }
    strcpy(chain, path);
    for (int d = 0; d < DEEP; d++) {
        snprintf(chain + strlen(chain), sizeof chain - strlen(chain), ".c%d", d);
        parent = fx_add(&t, chain, "ReLU", parent);
        fx_ran(&t, parent, 1, 1, 1);
    }
    fx_ran(&t, root, 1, WIDE + DEEP, 1);
    lp_report *r = as_report(&t, NULL);
    lp_tree_free(&t);
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(lp_merge_add(m, r, "a", "wide.json"), LP_OK);
    lp_report_free(r);
    FILE *f = fx_open();
    const char *cols[] = {"reports"};
    assert_int_equal(lp_merge_render(m, LP_FORMAT_TREE, cols, 1, 0, NULL, f), LP_OK);
    char *text = fx_close(f);
    assert_non_null(strstr(text, "\n├── m0 "));
    assert_non_null(strstr(text, "\n├── m19988 "));
    assert_non_null(strstr(text, "\n└── m19989 "));
    assert_non_null(strstr(text, "\n    └── c0 "));
    assert_non_null(strstr(text, "\n                                        └── c9 "));
    size_t lines = 0;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 3 + 1 + WIDE + DEEP); /* heading, blank, header; the rows */
    free(text);
    lp_merge_free(m);
}

/* A label or file name with control characters reaches the table with them as '?': a newline
 * there would end the row early, an escape sequence drive the terminal. */
static void control_characters_in_sources_are_shown_as_marks(void **state) {
    (void)state;
    lp_merge *m = NULL;
    assert_int_equal(lp_merge_new(&m, 0), LP_OK);
    assert_int_equal(add_tree(m, 100, "r=a\nb", NULL), LP_OK);
    assert_int_equal(add_tree(m, 900, "r=\x1b[2Jc\x7f", NULL), LP_OK);
    FILE *f = fx_open();
    const char *cols[] = {"total_source"};
    assert_int_equal(lp_merge_render(m, LP_FORMAT_MARKDOWN, cols, 1, 0, NULL, f), LP_OK);
    char *text = fx_close(f);
    assert_non_null(strstr(text, "| conv | r=?[2Jc? |\n"));
    assert_null(strchr(text, '\x1b'));
    free(text);
    lp_merge_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(nearest_rank_is_exact),
        cmocka_unit_test(distributions_are_exact),
        cmocka_unit_test(sources_default_to_run_labels),
        cmocka_unit_test(refuses_other_models_and_trees),
        cmocka_unit_test(other_options_need_force),
        cmocka_unit_test(bad_calls),
        cmocka_unit_test(odd_runs_and_sources_merge),
        cmocka_unit_test(zero_median_skew_ranks_first),
        cmocka_unit_test(equal_skews_rank_by_their_max),
        cmocka_unit_test(wide_and_deep_trees_render),
        cmocka_unit_test(control_characters_in_sources_are_shown_as_marks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
