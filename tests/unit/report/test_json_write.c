/* test_json_write.c: the JSON report of a hand-built tree, against its golden file, and what it
 * holds: integers everywhere but the Welford terms. */
#include "export_fixtures.h"
#include "golden_cases.h"

static char *json_of(const lp_tree *t, const json_t *run) {
    FILE *f = fx_open();
    assert_int_equal(lp_render_json(t, run, f), LP_OK);
    return fx_close(f);
}

/* The JSON report with the fixed run object. */
static int json_with_run(const lp_tree *t, const lp_render_opts *ro, FILE *out) {
    (void)ro;
    json_t *run = fx_run();
    int rc = lp_render_json(t, run, out);
    json_decref(run);
    return rc;
}

static const golden_case cases[] = {
    {"export_report.json", fx_small, NULL, NULL},
};

static void json_report_holds_integers_but_for_the_welford_terms(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    char *text = json_of(&t, NULL);
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    assert_non_null(doc);
    /* Walk every value: the only reals are a "time" object's mean_ns and std_ns (doubles, written
     * with enough digits to read back exactly). */
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
            welford_reals += strcmp(key, "mean_ns") == 0 || strcmp(key, "std_ns") == 0;
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
    /* mean_ns of every module (7, the one that never ran too: 0.0) and op row (3), and std_ns
     * of all but the module that never ran: fewer than two calls have none (null). */
    assert_int_equal(reals, 2 * (7 + 3) - 1);
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

/* The run's labels: an object in the order given, only when there are some (a report without
 * them keeps the bytes it always had). */
static void run_labels_only_when_given(void **state) {
    (void)state;
    json_t *run = fx_run();
    assert_null(json_object_get(run, "labels"));
    json_decref(run);
    static const char *const labels[] = {"rank=3", "host=a=b"};
    lp_run_meta m = {.model = "m.pt", .labels = labels, .n_labels = 2};
    run = lp_export_run(&m);
    assert_non_null(run);
    char *text = json_dumps(json_object_get(run, "labels"), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(text, "{\"rank\":\"3\",\"host\":\"a=b\"}");
    free(text);
    json_decref(run);
}

int main(void) {
    const struct CMUnitTest others[] = {
        cmocka_unit_test(json_report_holds_integers_but_for_the_welford_terms),
        cmocka_unit_test(run_labels_only_when_given),
    };
    return golden_cases_main("json_write", json_with_run, cases, sizeof cases / sizeof cases[0],
                             others, sizeof others / sizeof others[0]);
}
