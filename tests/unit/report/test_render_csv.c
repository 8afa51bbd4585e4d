/* test_render_csv.c: the CSV of a hand-built tree, against its golden file; its rows and quoting,
 * the chosen columns, and the statistics unformatted with their units. */
#include "export_fixtures.h"
#include "golden_cases.h"

static char *render_to_string(const lp_tree *t, const lp_render_opts *ro,
                              int (*fn)(const lp_tree *, const lp_render_opts *, FILE *)) {
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fn(t, ro, f), LP_OK);
    return golden_take(f);
}

static const golden_case cases[] = {
    {"export_report.csv", fx_small, NULL, NULL},
    /* a package's fused modules: two more fields, the receiving module and the kernel, whole */
    {"render_fused.csv", fx_fused_package, NULL, NULL},
};

/* The rows behind the golden file: one per module and op row, plus the header. */
static void csv_has_a_row_per_module_and_op_row_quoted_as_rfc_4180(void **state) {
    (void)state;
    lp_tree t;
    fx_small(&t);
    FILE *f = fx_open();
    assert_int_equal(lp_render_csv(&t, NULL, f), LP_OK);
    char *text = fx_close(f);
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

static int csv(const lp_tree *t, const lp_render_opts *ro, FILE *out) {
    return lp_render_csv(t, ro, out);
}

static void csv_has_the_statistics_unformatted_with_their_units(void **state) {
    (void)state;
    lp_tree t;
    fx_stats(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = fx_stats_columns + 2;
    ro.n_columns = 5;
    char *text = render_to_string(&t, &ro, csv);
    assert_string_equal(text,
                        "path,kind,name,class,depth,mean_ns,std_ns,min_ns,max_ns,share_pct\r\n"
                        ",module,Net,Net,0,1010000,14142.136,1000000,1020000,100\r\n"
                        "conv,module,conv,Conv2d,1,500050,70.711,500000,500100,49.510\r\n"
                        "relu,module,relu,ReLU,1,115000,12909.944,100000,130000,22.772\r\n"
                        "head,module,head,Linear,1,300000,,300000,300000,14.851\r\n"
                        "unused,module,unused,Dropout,1,,,,,\r\n");
    free(text);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest others[] = {
        cmocka_unit_test(csv_has_a_row_per_module_and_op_row_quoted_as_rfc_4180),
        cmocka_unit_test(csv_follows_the_chosen_columns),
        cmocka_unit_test(csv_has_the_statistics_unformatted_with_their_units),
    };
    return golden_cases_main("render_csv", lp_render_csv, cases, sizeof cases / sizeof cases[0],
                             others, sizeof others / sizeof others[0]);
}
