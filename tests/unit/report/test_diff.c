/* test_diff.c: `layerprof diff` on two hand-built reports with known changes, and on a
 * report against itself. The reports go through JSON files and lp_report_load, as the CLI does. */
#define _POSIX_C_SOURCE 200809L
#include "report_load_fixture.h"

#include "layerprof.h"

/* fx_small after a change: features.0 got faster (500 -> 400us), the root's own work slower
 * (self 100 -> 150us), head.w|"q",x is gone and head.extra (30us) is new. Selves still add up. */
static void after_tree(lp_tree *t) {
    lp_tree_init(t);
    t->iterations = 3; /* a different count: per-iteration figures are compared, not raw sums */
    int32_t root = fx_add(t, "", "Net", -1);
    int32_t features = fx_add(t, "features", "Sequential", root);
    int32_t f0 = fx_add(t, "features.0", "Conv2d", features);
    int32_t f1 = fx_add(t, "features.1", "ReLU", features);
    int32_t head = fx_add(t, "head", "Linear", root);
    int32_t extra = fx_add(t, "head.extra", "Identity", head);
    fx_add(t, "unused", "Dropout", root);
    fx_ran(t, root, 1, 950, 150);
    fx_ran(t, features, 1, 600, 50);
    fx_ran(t, f0, 1, 400, 400);
    fx_ran(t, f1, 1, 150, 150);
    fx_ran(t, head, 2, 200, 170);
    fx_ran(t, extra, 1, 30, 30);
}

static lp_report *load_tree(const lp_tree *t, const char *date) {
    json_t *run = fx_run();
    json_object_set_new(run, "date", json_string(date));
    lp_report *r = fx_report(t, run);
    json_decref(run);
    return r;
}

static char *diff_text(const lp_report *before, const lp_report *after, unsigned flags) {
    FILE *f = fx_open();
    assert_int_equal(lp_report_diff(before, after, flags, f), LP_OK);
    return fx_close(f);
}

/* The line of the row whose label ends with `name` (the text after the tree glyphs). */
static const char *row_of(const char *text, const char *name) {
    size_t n = strlen(name);
    for (const char *line = text; line && *line;
         line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *bar = strstr(line, " | ");
        const char *eol = strchr(line, '\n');
        if (!bar || (eol && bar > eol)) continue;
        const char *end = bar;
        while (end > line && end[-1] == ' ')
            end--;
        if ((size_t)(end - line) >= n && strncmp(end - n, name, n) == 0) return line;
    }
    fail_msg("no row '%s' in\n%s", name, text);
    return NULL;
}

static void diff_shows_known_deltas_added_and_removed_modules(void **state) {
    (void)state;
    lp_tree tb, ta;
    fx_small(&tb);
    after_tree(&ta);
    lp_report *before = load_tree(&tb, "2024-01-02T03:04:05Z");
    lp_report *after = load_tree(&ta, "2024-01-03T03:04:05Z");
    char *text = diff_text(before, after, 0);
    fx_golden("export_diff.txt", text);
    /* features.0: self 500 -> 400us: -100us, -20.0%. */
    const char *f0 = row_of(text, "── 0");
    assert_non_null(strstr(f0, "-100.000us"));
    assert_non_null(strstr(f0, "-20.0%"));
    const char *root = row_of(text, "Net");
    assert_non_null(strstr(root, "+50.000us"));
    assert_non_null(strstr(root, "+50.0%"));
    assert_non_null(strstr(root, "-5.0%"));
    const char *added = row_of(text, "extra (added)");
    assert_non_null(strstr(added, "new"));
    const char *removed = row_of(text, "w|\"q\",x (removed)");
    assert_non_null(strstr(removed, "-100.0%"));
    /* The removed module sits where it was: head's first child, before the new one. */
    assert_true(strstr(text, "w|\"q\",x (removed)") < strstr(text, "extra (added)"));
    assert_true(strstr(text, "(removed)") < strstr(text, "unused"));
    const char *total = row_of(text, "Total");
    assert_non_null(strstr(total, "1.000ms"));
    assert_non_null(strstr(total, "950.000us"));
    free(text);
    lp_report_free(before);
    lp_report_free(after);
    lp_tree_free(&tb);
    lp_tree_free(&ta);
}

/* A one-leaf model whose leaf took these per-call times (one call per iteration). */
static void one_leaf(lp_tree *t, const uint64_t *ns, size_t n) {
    lp_tree_init(t);
    t->iterations = n;
    int32_t root = fx_add(t, "", "Net", -1);
    int32_t leaf = fx_add(t, "leaf", "Conv2d", root);
    tf_calls(t, root, ns, n);
    tf_calls(t, leaf, ns, n);
    t->nodes[root].fig.self_ns = 0;
}

/* Marks from the per-call spread: 100 +- 10 vs 200 +- 10 us over 4 calls each is far outside the
 * noise (unmarked); 100 +- 10 vs 105 +- 10 is within it ("~"); one call on a side is "?". */
static void diff_marks_changes_within_the_noise(void **state) {
    (void)state;
    static const uint64_t b[] = {90000, 110000, 90000, 110000},
                          a[] = {190000, 210000, 190000, 210000},
                          near[] = {95000, 115000, 95000, 115000}, one[] = {100000};
    lp_tree tb, ta, tn, t1;
    one_leaf(&tb, b, 4);
    one_leaf(&ta, a, 4);
    one_leaf(&tn, near, 4);
    one_leaf(&t1, one, 1);
    lp_report *rb = load_tree(&tb, "2024-01-02T03:04:05Z"),
              *ra = load_tree(&ta, "2024-01-03T03:04:05Z");
    lp_report *rn = load_tree(&tn, "2024-01-03T03:04:05Z"),
              *r1 = load_tree(&t1, "2024-01-03T03:04:05Z");
    char *far = diff_text(rb, ra, 0), *close = diff_text(rb, rn, 0), *single = diff_text(r1, rb, 0);
    /* 100 -> 200us; errors: std 11.5us * sqrt(4) / 4 = 5.8us a side, 2 * 8.2 = 16.3us < 100us */
    assert_non_null(strstr(row_of(far, "leaf"), "+100.0%"));
    assert_null(strstr(row_of(far, "leaf"), "~"));
    assert_null(strstr(far, "~:"));
    /* 100 -> 105us: 5us is under 16.3us */
    assert_non_null(strstr(row_of(close, "leaf"), "+5.0% ~"));
    assert_non_null(strstr(close, "\n~: the change is within the two runs' noise"));
    assert_non_null(strstr(row_of(single, "leaf"), "0.0% ?"));
    assert_non_null(strstr(single, "\n?: a side ran the module once"));
    free(far);
    free(close);
    free(single);
    lp_report_free(rb);
    lp_report_free(ra);
    lp_report_free(rn);
    lp_report_free(r1);
    lp_tree_free(&tb);
    lp_tree_free(&ta);
    lp_tree_free(&tn);
    lp_tree_free(&t1);
}

static void diff_of_a_report_against_itself_is_all_zero(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    lp_report *r = load_tree(&t, "2024-01-02T03:04:05Z");
    char *text = diff_text(r, r, LP_DIFF_COLOR);
    assert_null(strstr(text, "(added)"));
    assert_null(strstr(text, "(removed)"));
    assert_null(strstr(text, "\033[")); /* nothing changed: nothing coloured */
    assert_null(strstr(text, "new"));
    /* Every row that ran shows 0 change in both quantities. */
    size_t zero_rows = 0;
    for (const char *p = text; (p = strstr(p, "0.000us | ")); p++) {
        const char *pct = p + strlen("0.000us | ");
        while (*pct == ' ')
            pct++;
        if (strncmp(pct, "0.0%", 4) == 0) zero_rows++;
    }
    assert_int_equal(zero_rows, 2 * 7); /* 6 modules that ran and the Total, two quantities */
    assert_null(strstr(text, "+"));
    free(text);
    lp_report_free(r);
    lp_tree_free(&t);
}

static void diff_colours_slower_red_and_faster_green(void **state) {
    (void)state;
    lp_tree tb, ta;
    fx_small(&tb);
    after_tree(&ta);
    lp_report *before = load_tree(&tb, "2024-01-02T03:04:05Z");
    lp_report *after = load_tree(&ta, "2024-01-03T03:04:05Z");
    char *text = diff_text(before, after, LP_DIFF_COLOR);
    const char *root = row_of(text, "Net");
    assert_non_null(strstr(root, "\033[1;31m+50.000us\033[0m")); /* +50%: bold red */
    const char *f0 = row_of(text, "── 0");
    assert_non_null(strstr(f0, "\033[1;32m-100.000us\033[0m")); /* -20%: bold green */
    assert_non_null(strstr(text, "\033[36m"));                  /* added: cyan */
    assert_non_null(strstr(text, "\033[35m"));                  /* removed: magenta */
    free(text);
    lp_report_free(before);
    lp_report_free(after);
    lp_tree_free(&tb);
    lp_tree_free(&ta);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(diff_shows_known_deltas_added_and_removed_modules),
        cmocka_unit_test(diff_marks_changes_within_the_noise),
        cmocka_unit_test(diff_of_a_report_against_itself_is_all_zero),
        cmocka_unit_test(diff_colours_slower_red_and_faster_green),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
