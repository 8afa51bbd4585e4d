/* test_render_tree.c: the tree table (render_tree.c) against golden files, byte for byte, as a
 * table of {golden file, fixture, options}; then its option checks and its scale.
 *
 * Trees are built with lp_tree_add and filled by hand with per-iteration figures, so every number
 * in a golden file can be checked by eye. LP_UPDATE_GOLDEN=1 rewrites the golden files instead of
 * comparing (review the diff before committing it). */
#include "export_fixtures.h"
#include "golden_cases.h"

#include <time.h>

#include "report/columns.h"

/* Helpers -------------------------------------------------------------------------------------- */

/* Adds a module under the one named by the path's prefix ("" for top-level modules). */
static int32_t add(lp_tree *t, const char *path, const char *cls) {
    int32_t parent = -1;
    if (t->n_nodes > 0) {
        char prefix[256] = "";
        const char *dot = strrchr(path, '.');
        if (dot) memcpy(prefix, path, (size_t)(dot - path));
        parent = lp_tree_find(t, prefix);
        assert_true(parent >= 0);
    }
    int idx = lp_tree_add(t, path, cls, parent);
    assert_true(idx >= 0);
    return idx;
}

/* Fills a module's figures from per-iteration values (the raw sums are those times iterations). */
static void ran(lp_tree *t, int32_t m, uint64_t calls, uint64_t total_ns, uint64_t self_ns) {
    lp_figures *f = &t->nodes[m].fig;
    f->calls = calls;
    f->total_ns = total_ns * t->iterations;
    f->self_ns = self_ns * t->iterations;
}

/* The same memory sample for every call of the module. */
static void mem(lp_tree *t, int32_t m, int64_t retained, int64_t self_retained, int64_t peak) {
    lp_mem_stats *s = &t->nodes[m].fig.mem[LP_DEV_CPU];
    for (uint64_t i = 0; i < t->nodes[m].fig.calls; i++) {
        lp_stat_add(&s->retained, retained);
        lp_stat_add(&s->self_retained, self_retained);
        lp_stat_add(&s->peak, peak);
        lp_stat_add(&s->net, retained);
    }
}

static int32_t at(const lp_tree *t, const char *path) {
    int32_t i = lp_tree_find(t, path);
    assert_true(i >= 0);
    return i;
}

/* Renders into a string (caller frees); *rc gets lp_render_tree's status. */
static char *render(const lp_tree *t, const lp_render_opts *ro, int *rc) {
    FILE *f = tmpfile();
    assert_non_null(f);
    *rc = lp_render_tree(t, ro, f);
    return golden_take(f);
}

/* Fixtures ------------------------------------------------------------------------------------- */

/* torchprof's AlexNet, cut down: two iterations, CPU memory, per-iteration times whose selves add
 * up to the root total (2.750ms). classifier.2 ran 3 times over the 2 iterations: 1.50 calls. */
static void alexnet(lp_tree *t) {
    lp_tree_init(t);
    t->iterations = 2;
    t->has_memory[LP_DEV_CPU] = 1;
    int32_t root = add(t, "", "AlexNet");
    int32_t features = add(t, "features", "Sequential");
    int32_t f0 = add(t, "features.0", "Conv2d");
    int32_t f1 = add(t, "features.1", "ReLU");
    int32_t f2 = add(t, "features.2", "MaxPool2d");
    int32_t f3 = add(t, "features.3", "Conv2d");
    int32_t avgpool = add(t, "avgpool", "AdaptiveAvgPool2d");
    int32_t classifier = add(t, "classifier", "Sequential");
    int32_t c0 = add(t, "classifier.0", "Dropout");
    int32_t c1 = add(t, "classifier.1", "Linear");
    int32_t c2 = add(t, "classifier.2", "ReLU");

    ran(t, f0, 2, 1808000, 1808000);
    ran(t, f1, 2, 49693, 49693);
    ran(t, f2, 2, 78267, 78267);
    ran(t, f3, 2, 281690, 281690);
    ran(t, features, 2, 2219650, 2000);
    ran(t, avgpool, 2, 55585, 55585);
    ran(t, c0, 2, 29937, 29937);
    ran(t, c1, 2, 399993, 399993);
    ran(t, c2, 3, 28043, 28043);
    ran(t, classifier, 2, 459000, 1027);
    ran(t, root, 2, 2750000, 15765);

    mem(t, f0, 774656, 774656, 3890217);
    mem(t, f2, 186624, 186624, 186624);
    mem(t, f3, 559872, 559872, 2810880);
    mem(t, features, 559872, 0, 3890217);
    mem(t, avgpool, 36864, 36864, 36864);
    mem(t, c1, 16384, 16384, 32768);
    mem(t, classifier, 16384, 0, 32768);
    mem(t, root, 16384, 0, 3890217);
}

/* Dropout is skipped in eval mode: no calls at all. Its time sits in nobody's total. */
static void alexnet_dropout_never_ran(lp_tree *t) {
    alexnet(t);
    lp_tree_node *c0 = &t->nodes[at(t, "classifier.0")];
    memset(&c0->fig, 0, sizeof c0->fig);
    t->nodes[at(t, "classifier")].fig.total_ns -= 2 * 29937;
    t->nodes[at(t, "")].fig.total_ns -= 2 * 29937;
}

/* torchprof's paths example: only features.3 and classifier are measured. Figures left in the
 * others must not show; classifier's children are not measured, so its self is its total. */
static void alexnet_two_paths_selected(lp_tree *t) {
    alexnet(t);
    for (size_t i = 0; i < t->n_nodes; i++)
        t->nodes[i].selected = 0;
    t->nodes[at(t, "features.3")].selected = 1;
    lp_tree_node *classifier = &t->nodes[at(t, "classifier")];
    classifier->selected = 1;
    classifier->fig.self_ns = classifier->fig.total_ns;
}

/* The shapes torchprof draws wrongly: deep subtrees under last children, next to ancestors that
 * do have later siblings. One iteration, one call each, 1us of self per module. */
static void branches(lp_tree *t) {
    static const char *const paths[] = {"",           "a",    "a.a1",    "a.a1.x",
                                        "b",          "b.b1", "b.b1.c1", "b.b1.c1.d1",
                                        "b.b1.c1.d2", "b.b2", "b.b2.e1", "b.b2.e1.f1"};
    static const uint64_t totals[] = {12, 3, 2, 1, 8, 4, 3, 1, 1, 3, 2, 1};
    lp_tree_init(t);
    t->iterations = 1;
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        int32_t m = add(t, paths[i], i == 0 ? "Net" : "Block");
        ran(t, m, 1, totals[i] * 1000, 1000);
    }
}

/* A small net with op rows: nested dispatch, shapes, and "(self)" remainders (clamped for relu,
 * whose op clock overran its own). */
static void events(lp_tree *t) {
    static const char *op_names[] = {"aten::conv2d", "aten::convolution", "aten::_convolution",
                                     "aten::add_",   "aten::relu_",       "aten::threshold_",
                                     "aten::flatten"};
    static const char *shape_names[] = {"1x3x8x8, 4x3x3x3, 4"};
    lp_tree_init(t);
    t->iterations = 1;
    for (size_t i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
        assert_int_equal(lp_tree_intern_op_name(t, op_names[i]), (int32_t)i);
    assert_int_equal(lp_tree_intern_shapes(t, shape_names[0]), 0);
    int32_t root = add(t, "", "Net");
    int32_t conv = add(t, "conv", "Conv2d");
    int32_t relu = add(t, "relu", "ReLU");
    ran(t, conv, 1, 100000, 100000);
    ran(t, relu, 1, 30000, 30000);
    ran(t, root, 1, 150000, 20000);

    int32_t conv2d = lp_tree_add_op(t, conv, -1, 0, 0);
    int32_t convolution = lp_tree_add_op(t, conv, conv2d, 1, -1);
    int32_t _convolution = lp_tree_add_op(t, conv, convolution, 2, -1);
    int32_t add_ = lp_tree_add_op(t, conv, -1, 3, -1);
    int32_t relu_ = lp_tree_add_op(t, relu, -1, 4, -1);
    int32_t threshold = lp_tree_add_op(t, relu, relu_, 5, -1);
    int32_t flatten = lp_tree_add_op(t, root, -1, 6, -1);
    const struct {
        int32_t op;
        uint64_t calls, total, self;
    } figs[] = {
        {conv2d, 1, 90000, 2000}, {convolution, 1, 88000, 3000}, {_convolution, 1, 85000, 85000},
        {add_, 2, 6000, 6000},    {relu_, 1, 31000, 11000},      {threshold, 1, 20000, 20000},
        {flatten, 1, 4500, 4500},
    };
    for (size_t i = 0; i < sizeof figs / sizeof figs[0]; i++) {
        lp_figures *f = &t->ops[figs[i].op].fig;
        f->calls = figs[i].calls;
        f->total_ns = figs[i].total;
        f->self_ns = figs[i].self;
    }
}

/* Options -------------------------------------------------------------------------------------- */

static void set_columns(lp_render_opts *ro, const char *const *ids, size_t n) {
    ro->columns = ids;
    ro->n_columns = n;
}

static const char *const total_and_calls[] = {"cpu_total", "calls"};
static const char *const times[] = {"self_cpu", "cpu_total"};
static const char *const times_and_calls[] = {"self_cpu", "cpu_total", "calls"};

static void total_and_calls_only(lp_render_opts *ro) {
    set_columns(ro, total_and_calls, 2);
}

static void ascii_total_and_calls(lp_render_opts *ro) {
    set_columns(ro, total_and_calls, 2);
    ro->ascii = 1;
}

static void times_and_calls_only(lp_render_opts *ro) {
    set_columns(ro, times_and_calls, 3);
}

static void hide_ops(lp_render_opts *ro) {
    ro->show_ops = 0;
}

static void sort_self_cpu(lp_render_opts *ro) {
    ro->sort = "self_cpu";
}

static void depth_1(lp_render_opts *ro) {
    ro->depth = 1;
}

static void depth_0_times(lp_render_opts *ro) {
    ro->depth = 0;
    set_columns(ro, times, 2);
}

static void sort_cpu_total(lp_render_opts *ro) {
    ro->sort = "cpu_total";
}

static void top_4_with_a_note(lp_render_opts *ro) {
    static const char *const notes[] = {"mode: hooks (TorchScript optimizer off)"};
    set_columns(ro, times_and_calls, 3);
    ro->top = 4;
    ro->notes = notes;
    ro->n_notes = 1;
}

static void calls_net_mem_self(lp_render_opts *ro) {
    static const char *const ids[] = {"calls", "net_cpu_mem", "self_cpu"};
    set_columns(ro, ids, 3);
}

static void times_in_ms(lp_render_opts *ro) {
    set_columns(ro, times, 2);
    ro->units = LP_UNITS_MS;
}

static void self_and_cuda_mem(lp_render_opts *ro) {
    static const char *const ids[] = {"self_cpu", "cuda_mem"};
    set_columns(ro, ids, 2);
}

static void every_statistic(lp_render_opts *ro) {
    set_columns(ro, fx_stats_columns, 7);
}

/* --sort mean: conv (500us) > head (300us) > relu (115us), the module that never ran last. */
static void statistics_sorted_by_mean(lp_render_opts *ro) {
    set_columns(ro, fx_stats_columns + 2, 5); /* mean, std, min, max, share */
    ro->sort = "mean";
}

static void whole_names(lp_render_opts *ro) {
    ro->name_width = 0;
}

/* Golden tables -------------------------------------------------------------------------------- */

static const golden_case cases[] = {
    /* torchprof's table, with filled parent rows */
    {"render_alexnet.txt", alexnet, NULL, NULL},
    /* bars are drawn only for ancestors with later siblings; ASCII glyphs replace box drawing */
    {"render_branches.txt", branches, total_and_calls_only, NULL},
    {"render_branches_ascii.txt", branches, ascii_total_and_calls, NULL},
    /* a module that never ran; unselected modules have blank cells even with figures */
    {"render_never_ran.txt", alexnet_dropout_never_ran, NULL, NULL},
    {"render_unselected.txt", alexnet_two_paths_selected, times_and_calls_only, NULL},
    /* op rows nest under their module with a (self) remainder; hidden when not asked for; sorted
     * too, with (self) kept last */
    {"render_events.txt", events, NULL, NULL},
    {"render_events_hidden.txt", events, hide_ops, NULL},
    {"render_events_sort_self_cpu.txt", events, sort_self_cpu, NULL},
    /* depth folds deeper modules' self time into the printed ancestor; depth 0 leaves the root
     * holding all of it */
    {"render_depth1.txt", alexnet, depth_1, NULL},
    {"render_depth0.txt", alexnet, depth_0_times, NULL},
    /* siblings sorted by a column, descending */
    {"render_sort_cpu_total.txt", alexnet, sort_cpu_total, NULL},
    /* the hottest modules, then the notes */
    {"render_top4.txt", alexnet, top_4_with_a_note, NULL},
    /* columns in the order asked, in the units asked */
    {"render_columns.txt", alexnet, calls_net_mem_self, NULL},
    {"render_units_ms.txt", alexnet, times_in_ms, NULL},
    /* a column the profile lacks is blank, with a note */
    {"render_missing_column.txt", branches, self_and_cuda_mem, NULL},
    /* per-call statistics and % Total */
    {"render_stats.txt", fx_stats, every_statistic, NULL},
    {"render_stats_sort_mean.txt", fx_stats, statistics_sorted_by_mean, NULL},
    /* a package's modules fused into another module's kernel say where their time went, the
     * kernel shortened like an op row (whole with --name-width 0); folded rows keep it */
    {"render_fused.txt", fx_fused_package, NULL, NULL},
    {"render_fused_whole.txt", fx_fused_package, whole_names, NULL},
    {"render_fused_depth1.txt", fx_fused_package, depth_1, NULL},
};

/* Sorting by std puts head (one call: blank) after relu. */
static void sort_by_std_puts_a_blank_after_every_value(void **state) {
    (void)state;
    lp_tree t;
    fx_stats(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    statistics_sorted_by_mean(&ro);
    ro.sort = "std";
    int rc;
    char *text = render(&t, &ro, &rc);
    assert_int_equal(rc, LP_OK);
    const char *relu = strstr(text, "relu"), *head = strstr(text, "head");
    const char *conv = strstr(text, "conv");
    assert_true(relu && head && conv && relu < conv && conv < head);
    free(text);
    lp_tree_free(&t);
}

/* 0 calls is for a watched module that could have run: a container (no forward) and an unselected
 * module stay blank. */
static void only_a_selected_module_that_never_ran_shows_0_calls(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t root = add(&t, "", "Net");
    int32_t blocks = add(&t, "blocks", "ModuleList");
    int32_t b0 = add(&t, "blocks.0", "Linear");
    add(&t, "idle", "Dropout");
    int32_t off = add(&t, "off", "ReLU");
    t.nodes[blocks].container = 1;
    t.nodes[off].selected = 0;
    ran(&t, root, 1, 3000, 2000);
    ran(&t, b0, 1, 1000, 1000);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    times_and_calls_only(&ro);
    int rc;
    char *text = render(&t, &ro, &rc);
    assert_int_equal(rc, LP_OK);
    assert_non_null(strstr(text, "\n├── blocks |                |           |\n"));
    assert_non_null(strstr(text, "\n├── idle   |                |           | 0\n"));
    assert_non_null(strstr(text, "\n└── off    |                |           |\n"));
    free(text);
    lp_tree_free(&t);
}

/* Errors and checks ---------------------------------------------------------------------------- */

static void an_unknown_column_fails_naming_the_closest_id(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    const char *const columns[] = {"self_cpu", "cpu_totl"};
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = columns;
    ro.n_columns = 2;
    int rc;
    char *text = render(&t, &ro, &rc);
    assert_int_equal(rc, LP_ERR_NOT_FOUND);
    assert_string_equal(text, "");
    assert_string_equal(lp_error_last(), "unknown column 'cpu_totl' (did you mean 'cpu_total'?)");
    free(text);
    lp_tree_free(&t);
}

static void an_unknown_sort_key_fails_naming_the_closest_id(void **state) {
    (void)state;
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.sort = "SelfCPU";
    assert_int_equal(lp_render_check_opts(&ro), LP_ERR_NOT_FOUND);
    assert_string_equal(lp_error_last(), "unknown sort key 'SelfCPU' (did you mean 'self_cpu'?)");
}

static void a_column_id_far_from_all_lists_every_id(void **state) {
    (void)state;
    const char *const columns[] = {"zzz"};
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.columns = columns;
    ro.n_columns = 1;
    assert_int_equal(lp_render_check_opts(&ro), LP_ERR_NOT_FOUND);
    assert_string_equal(lp_error_last(),
                        "unknown column 'zzz' (valid ids: self_cpu, cpu_total, self_cuda, "
                        "cuda_total, self_cpu_mem, cpu_mem, peak_cpu_mem, net_cpu_mem, "
                        "self_cuda_mem, cuda_mem, peak_cuda_mem, net_cuda_mem, calls, mean, min, "
                        "max, std, share, params, self_params, param_bytes, flops, self_flops, "
                        "gflops_per_s, out_shape)");
}

/* An op row with a long kernel name: shortened in the middle to the width (both ends kept), with
 * "..." under ASCII glyphs, whole with width 0. */
static void long_op_names_are_shortened_in_the_tree(void **state) {
    (void)state;
    static const char *kernel = "cpp_fused__scaled_dot_product_flash_attention_for_cpu__unsafe_"
                                "view_add_clone_select_squeeze_transpose_unsqueeze_view_1";
    lp_tree t;
    events(&t);
    int32_t id = lp_tree_intern_op_name(&t, kernel);
    assert_true(id >= 0);
    for (size_t r = 0; r < t.n_ops; r++)
        if (t.ops[r].op == 6) t.ops[r].op = id; /* aten::flatten becomes the kernel */
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    assert_int_equal(ro.name_width, 64);
    ro.name_width = 40;
    int rc;
    char *out = render(&t, &ro, &rc);
    assert_int_equal(rc, LP_OK);
    assert_non_null(strstr(out, "── cpp_fused__scaled_do…se_unsqueeze_view_1 "));
    assert_null(strstr(out, kernel));
    free(out);
    ro.ascii = 1;
    out = render(&t, &ro, &rc);
    assert_non_null(strstr(out, "-- cpp_fused__scaled_d...e_unsqueeze_view_1 "));
    free(out);
    ro.ascii = 0;
    ro.name_width = 0;
    out = render(&t, &ro, &rc);
    assert_non_null(strstr(out, kernel));
    free(out);
    lp_tree_free(&t);
}

static void bad_depth_and_top_are_invalid(void **state) {
    (void)state;
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    assert_int_equal(lp_render_check_opts(&ro), LP_OK);
    ro.depth = -2;
    assert_int_equal(lp_render_check_opts(&ro), LP_ERR_INVALID);
    lp_render_opts_init(&ro);
    ro.top = -1;
    assert_int_equal(lp_render_check_opts(&ro), LP_ERR_INVALID);
}

/* Scale ---------------------------------------------------------------------------------------- */

/* 10,000 modules (100 blocks of 99 layers) render, and the figures add up at that size. */
static void ten_thousand_modules_render_and_add_up(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    char path[64];
    int32_t root = lp_tree_add(&t, "", "Big", -1);
    uint64_t all = 0;
    for (int b = 0; b < 100; b++) {
        snprintf(path, sizeof path, "b%d", b);
        int32_t block = lp_tree_add(&t, path, "Block", root);
        for (int l = 0; l < 99; l++) {
            snprintf(path, sizeof path, "b%d.l%d", b, l);
            int32_t layer = lp_tree_add(&t, path, "Layer", block);
            ran(&t, layer, 1, 1000, 1000);
        }
        ran(&t, block, 1, 100000, 1000);
        all += 100000;
    }
    ran(&t, root, 1, all, 0);
    assert_int_equal(t.n_nodes, 10001);

    /* How fast it renders is the bench's to say (bench_core.c, "tree size": per module at 1k,
     * 10k and 100k, side by side), where noise is reported; a test here would judge one
     * duration that the machine's load decides. */
    int rc;
    char *text = render(&t, NULL, &rc);
    assert_int_equal(rc, LP_OK);
    assert_non_null(strstr(text, "\n└── b99  | 1.000us        | 100.000us "));
    assert_non_null(strstr(text, "\nTotal    | 10.000ms       | 10.000ms  |\n"));
    free(text);
    lp_tree_free(&t);
}

/* A 3,000-deep chain: the walk keeps its own stack, so depth is bounded by memory, not C's. */
static void a_very_deep_chain_renders_without_recursion(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    t.iterations = 1;
    int32_t parent = lp_tree_add(&t, "", "Chain", -1);
    ran(&t, parent, 1, 3000000, 0);
    for (int d = 0; d < 3000; d++) {
        char path[16];
        snprintf(path, sizeof path, "m%d", d);
        parent = lp_tree_add(&t, path, "Link", parent);
        ran(&t, parent, 1, (uint64_t)(3000 - d) * 1000, 1000);
    }
    int rc;
    char *text = render(&t, NULL, &rc);
    assert_int_equal(rc, LP_OK);
    assert_non_null(strstr(text, "└── m2999 "));
    free(text);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest others[] = {
        cmocka_unit_test(sort_by_std_puts_a_blank_after_every_value),
        cmocka_unit_test(only_a_selected_module_that_never_ran_shows_0_calls),
        cmocka_unit_test(an_unknown_column_fails_naming_the_closest_id),
        cmocka_unit_test(an_unknown_sort_key_fails_naming_the_closest_id),
        cmocka_unit_test(a_column_id_far_from_all_lists_every_id),
        cmocka_unit_test(long_op_names_are_shortened_in_the_tree),
        cmocka_unit_test(bad_depth_and_top_are_invalid),
        cmocka_unit_test(ten_thousand_modules_render_and_add_up),
        cmocka_unit_test(a_very_deep_chain_renders_without_recursion),
    };
    return golden_cases_main("render_tree", lp_render_tree, cases, sizeof cases / sizeof cases[0],
                             others, sizeof others / sizeof others[0]);
}
