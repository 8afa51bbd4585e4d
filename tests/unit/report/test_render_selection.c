/* test_render_selection.c: path selection, op rows and input shapes end to end through the core:
 * patterns -> lp_paths_select -> the collector, fed synthetic events with hand-picked times the
 * way the shim delivers them -> lp_render_tree, compared with golden files byte for byte.
 *
 * The fake shim below follows the collector's contract (collector.h): it skips the ops the core
 * says it does not want, as hooks.cpp does, so the tests also count what selection saves.
 * LP_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing (review the diff). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "golden.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collect/collector.h"
#include "layerprof.h"
#include "model/paths.h"
#include "model/tree.h"
#include "report/render.h"

/* Golden files ----------------------------------------------------------------------------------
 */

static char *render(const lp_tree *t, const lp_render_opts *ro) {
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(lp_render_tree(t, ro, f), LP_OK);
    return golden_take(f);
}

/* The model ------------------------------------------------------------------------------------ */

/* torchprof's AlexNet, cut down (the same shape as render_unselected.txt). */
static void alexnet(lp_tree *t) {
    static const char *const modules[][2] = {
        {"", "AlexNet"},
        {"features", "Sequential"},
        {"features.0", "Conv2d"},
        {"features.1", "ReLU"},
        {"features.2", "MaxPool2d"},
        {"features.3", "Conv2d"},
        {"avgpool", "AdaptiveAvgPool2d"},
        {"classifier", "Sequential"},
        {"classifier.0", "Dropout"},
        {"classifier.1", "Linear"},
        {"classifier.2", "ReLU"},
    };
    lp_tree_init(t);
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++) {
        const char *path = modules[i][0];
        int32_t parent = -1;
        if (i > 0) {
            char prefix[64] = "";
            const char *dot = strrchr(path, '.');
            if (dot) memcpy(prefix, path, (size_t)(dot - path));
            parent = lp_tree_find(t, prefix);
        }
        assert_int_equal(lp_tree_add(t, path, modules[i][1], parent), (int)i);
    }
}

/* The shim, faked: delivers events as hooks.cpp does, skipping unwanted ops. Times in us. */
typedef struct shim {
    lp_collector *c;
    const lp_tree *t;
    int wanted, skip;
    int skipping;       /* 0: deliver every op (what the core sees without the shim's early-out) */
    const char *shapes; /* the next op's input shapes, for the describer */
    int described;      /* describer calls */
} shim;

static int describe(void *payload, char *buf, size_t size) {
    shim *s = payload;
    s->described++;
    return snprintf(buf, size, "%s", s->shapes);
}

/* Any nonzero hash of the text will do: the shim hashes sizes, not text. */
static uint64_t key_of(const char *text) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (; text && *text; text++)
        h = (h ^ (unsigned char)*text) * 0x100000001B3ull;
    return h ? h : 1;
}

static void enter(shim *s, const char *path, uint64_t us) {
    int32_t m = lp_tree_find(s->t, path);
    assert_true(m >= 0);
    s->wanted = lp_ev_call_enter(s->c, m, us * 1000);
}
static void leave(shim *s, uint64_t us) {
    s->wanted = lp_ev_call_exit(s->c, us * 1000);
}
static void op(shim *s, const char *name, const char *shapes, uint64_t us) {
    if (s->skip || (s->skipping && !s->wanted)) {
        s->skip++;
        return;
    }
    s->shapes = shapes;
    s->wanted = lp_ev_op_start(s->c, name, shapes ? key_of(shapes) : 0, us * 1000);
}
static void op_end(shim *s, uint64_t us) {
    if (s->skip) {
        s->skip--;
        return;
    }
    lp_ev_op_end(s->c, us * 1000);
}

/* Op names are interned by pointer first: one pointer per name, as libtorch gives. */
static const char CONV2D[] = "aten::conv2d", CONVOLUTION[] = "aten::convolution",
                  RELU[] = "aten::relu_", MAXPOOL[] = "aten::max_pool2d",
                  AVGPOOL[] = "aten::adaptive_avg_pool2d", FLATTEN[] = "aten::flatten",
                  DROPOUT[] = "aten::dropout", LINEAR[] = "aten::linear", ADDMM[] = "aten::addmm";

/* One forward: 11 module calls, 12 ops (4 of them nested), 720us. */
static void forward(shim *s) {
    enter(s, "", 0);
    enter(s, "features", 10);
    enter(s, "features.0", 20);
    op(s, CONV2D, "[1, 3, 224, 224], [64, 3, 11, 11], [64]", 30);
    op(s, CONVOLUTION, "[1, 3, 224, 224], [64, 3, 11, 11], [64], [], []", 40);
    op_end(s, 120);
    op_end(s, 130);
    leave(s, 140);
    enter(s, "features.1", 150);
    op(s, RELU, "[1, 64, 55, 55]", 160);
    op_end(s, 190);
    leave(s, 200);
    enter(s, "features.2", 210);
    op(s, MAXPOOL, "[1, 64, 55, 55], [], [], [], [], []", 220);
    op_end(s, 260);
    leave(s, 270);
    enter(s, "features.3", 280);
    op(s, CONV2D, "[1, 64, 27, 27], [192, 64, 5, 5], [192]", 290);
    op(s, CONVOLUTION, "[1, 64, 27, 27], [192, 64, 5, 5], [192], [], []", 300);
    op_end(s, 380);
    op_end(s, 390);
    leave(s, 400);
    leave(s, 410);
    enter(s, "avgpool", 420);
    op(s, AVGPOOL, "[1, 192, 27, 27], []", 430);
    op_end(s, 450);
    leave(s, 460);
    op(s, FLATTEN, "[1, 192, 6, 6], [], []", 470); /* the root's own op */
    op_end(s, 480);
    enter(s, "classifier", 490);
    enter(s, "classifier.0", 500);
    op(s, DROPOUT, "[1, 6912], [], []", 505);
    op_end(s, 510);
    leave(s, 520);
    enter(s, "classifier.1", 530);
    op(s, LINEAR, "[1, 6912], [4096, 6912], [4096]", 540);
    op(s, ADDMM, "[4096], [1, 6912], [6912, 4096], [], []", 550);
    op_end(s, 630);
    op_end(s, 640);
    leave(s, 650);
    enter(s, "classifier.2", 660);
    op(s, RELU, "[1, 4096]", 665);
    op_end(s, 690);
    leave(s, 700);
    leave(s, 710);
    leave(s, 720);
}

typedef struct run_opts {
    const char *const *paths;
    size_t n_paths;
    int ops, shapes, skipping;
    int iterations;
} run_opts;

typedef struct result {
    lp_tree tree;
    lp_collector *c;
    lp_collector_stats stats;
    int described;
} result;

/* Selects, runs the forwards and finishes: the tree is ready to render. */
static void run(const run_opts *o, result *r) {
    memset(r, 0, sizeof *r);
    alexnet(&r->tree);
    uint8_t selected[16];
    if (o->n_paths) assert_int_equal(lp_paths_select(&r->tree, o->paths, o->n_paths, selected), 0);
    shim s = {0};
    s.t = &r->tree;
    s.skipping = o->skipping;
    lp_collector_config cfg = {0};
    cfg.ops = o->ops;
    cfg.selected = o->n_paths ? selected : NULL;
    cfg.shapes = o->shapes;
    cfg.describe_shapes = o->shapes ? describe : NULL;
    cfg.describe_payload = &s;
    assert_int_equal(lp_collector_create(&r->c, &r->tree, &cfg), LP_OK);
    s.c = r->c;
    for (int i = 0; i < (o->iterations ? o->iterations : 1); i++) {
        forward(&s);
        lp_collector_count_iteration(r->c);
    }
    assert_int_equal(lp_collector_finish(r->c), LP_OK);
    lp_collector_get_stats(r->c, &r->stats);
    r->described = s.described;
}

static void done(result *r) {
    lp_collector_free(r->c);
    lp_tree_free(&r->tree);
}

static void check(const result *r, const char *golden) {
    char *text = render(&r->tree, NULL);
    assert_golden(golden, text);
    free(text);
}

/* Tests ---------------------------------------------------------------------------------------- */

/* torchprof crashes on this; here the parent's total counts once and the child is inside it. */
static void a_parent_and_its_child_selected_together_count_once(void **state) {
    (void)state;
    const char *const paths[] = {"features", "features.3"};
    run_opts o = {paths, 2, 0, 0, 1, 2};
    result r;
    run(&o, &r);
    check(&r, "select_parent_and_child.txt");
    done(&r);
}

static void globs_select_leaves_and_leave_their_parents_blank(void **state) {
    (void)state;
    const char *const paths[] = {"features.*", "classifier.?"};
    run_opts o = {paths, 2, 0, 0, 1, 1};
    result r;
    run(&o, &r);
    check(&r, "select_globs.txt");
    done(&r);
}

/* The README's example: op rows only under what was selected, nested under their callers. */
static void torchprofs_readme_paths_with_events_keep_ops_of_selected_modules_only(void **state) {
    (void)state;
    const char *const paths[] = {"AlexNet,features,3", "AlexNet,classifier"};
    run_opts o = {paths, 2, 1, 0, 1, 2};
    result r;
    run(&o, &r);
    check(&r, "select_readme_events.txt");
    for (size_t i = 0; i < r.tree.n_ops; i++) {
        const char *path = r.tree.nodes[r.tree.ops[i].module].path;
        if (strcmp(path, "features.3") != 0 && strncmp(path, "classifier", 10) != 0)
            fail_msg("op row %zu belongs to unselected '%s'", i, path);
    }
    /* Per forward: 22 module events, and start+end of the 6 ops in selected modules. The 6 ops
     * elsewhere (flatten in the root among them) never reach the core. */
    assert_int_equal(r.stats.events, 2 * (22 + 2 * 6));
    assert_int_equal(r.stats.dropped + r.stats.unbalanced, 0);
    done(&r);
}

/* The shim's early-out only saves work: the tree is the same when every op is delivered. */
static void skipping_unwanted_ops_changes_no_figure(void **state) {
    (void)state;
    const char *const paths[] = {"AlexNet,features,3", "AlexNet,classifier"};
    run_opts skip = {paths, 2, 1, 1, 1, 2}, all = {paths, 2, 1, 1, 0, 2};
    result a, b;
    run(&skip, &a);
    run(&all, &b);
    char *ta = render(&a.tree, NULL), *tb = render(&b.tree, NULL);
    assert_string_equal(ta, tb);
    assert_int_equal(a.stats.events, 2 * (22 + 2 * 6));
    assert_int_equal(b.stats.events, 2 * (22 + 2 * 12));
    free(ta);
    free(tb);
    done(&a);
    done(&b);
}

static void the_core_wants_ops_only_inside_measured_calls(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    const char *const paths[] = {"features.3"};
    uint8_t selected[16];
    assert_int_equal(lp_paths_select(&t, paths, 1, selected), 0);
    lp_collector_config cfg = {0};
    cfg.ops = 1;
    cfg.selected = selected;
    lp_collector *c;
    assert_int_equal(lp_collector_create(&c, &t, &cfg), LP_OK);
    assert_int_equal(lp_ev_call_enter(c, 0, 0), 0);                              /* root */
    assert_int_equal(lp_ev_call_enter(c, lp_tree_find(&t, "features"), 1), 0);   /* parent */
    assert_int_equal(lp_ev_call_enter(c, lp_tree_find(&t, "features.3"), 2), 1); /* selected */
    assert_int_equal(lp_ev_op_start(c, CONV2D, 0, 3), 1);
    assert_int_equal(lp_ev_call_enter(c, -1, 4), 1); /* a helper frame inside stays wanted */
    assert_int_equal(lp_ev_call_exit(c, 5), 1);
    lp_ev_op_end(c, 6);
    assert_int_equal(lp_ev_call_exit(c, 7), 0); /* back in features */
    assert_int_equal(lp_ev_call_exit(c, 8), 0);
    assert_int_equal(lp_ev_call_exit(c, 9), 0); /* outside every call */
    lp_collector_free(c);

    cfg.selected = NULL;
    cfg.ops = 0; /* no op rows: no ops wanted anywhere */
    assert_int_equal(lp_collector_create(&c, &t, &cfg), LP_OK);
    assert_int_equal(lp_ev_call_enter(c, 0, 0), 0);
    assert_int_equal(lp_ev_call_exit(c, 1), 0);
    lp_collector_free(c);
    lp_tree_free(&t);
}

/* --shapes: a row per (name, input shapes), as PyTorch's group_by_input_shape. */
static void shapes_split_op_rows_and_are_described_once_per_key(void **state) {
    (void)state;
    lp_tree t;
    alexnet(&t);
    shim s = {0};
    s.t = &t;
    s.skipping = 1;
    lp_collector_config cfg = {0};
    cfg.ops = 1;
    cfg.shapes = 1;
    cfg.describe_shapes = describe;
    cfg.describe_payload = &s;
    assert_int_equal(lp_collector_create(&s.c, &t, &cfg), LP_OK);
    for (int it = 0; it < 3; it++) {
        enter(&s, "", 0);
        enter(&s, "classifier", 10);
        op(&s, ADDMM, "[4096], [1, 9216], [9216, 4096], [], []", 20);
        op_end(&s, 50);
        op(&s, ADDMM, "[4096], [1, 4096], [4096, 4096], [], []", 60);
        op_end(&s, 80);
        op(&s, ADDMM, "[4096], [1, 9216], [9216, 4096], [], []", 90);
        op_end(&s, 110);
        op(&s, DROPOUT, "[1, 4096], [], []", 115);
        op_end(&s, 118);
        leave(&s, 120);
        leave(&s, 130);
        lp_collector_count_iteration(s.c);
    }
    assert_int_equal(lp_collector_finish(s.c), LP_OK);
    assert_int_equal(t.n_ops, 3);
    assert_int_equal(s.described, 3); /* once per key, not per call or iteration */
    assert_int_equal(t.ops[0].fig.calls, 6);
    assert_int_equal(t.ops[1].fig.calls, 3);
    assert_string_equal(t.shape_names[t.ops[0].shapes], "[4096], [1, 9216], [9216, 4096], [], []");
    assert_string_equal(t.shape_names[t.ops[1].shapes], "[4096], [1, 4096], [4096, 4096], [], []");
    char *text = render(&t, NULL);
    assert_golden("select_shapes.txt", text);
    free(text);
    lp_collector_free(s.c);
    lp_tree_free(&t);
}

/* Without shapes the same ops are one row and nothing is described. */
static void without_shapes_an_op_is_one_row_whatever_its_inputs(void **state) {
    (void)state;
    const char *const paths[] = {"classifier"};
    run_opts o = {paths, 1, 1, 0, 1, 3};
    result r;
    run(&o, &r);
    assert_int_equal(r.described, 0);
    for (size_t i = 0; i < r.tree.n_ops; i++)
        assert_int_equal(r.tree.ops[i].shapes, -1);
    done(&r);
}

/* A shape text longer than the collector's stack buffer is asked for again, whole. */
static void a_long_shape_text_is_kept_whole(void **state) {
    (void)state;
    char big[2000];
    size_t n = 0;
    for (int i = 0; n + 20 < sizeof big; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s[%d, 3, 8, 8]", i ? ", " : "", i + 1);
    lp_tree t;
    alexnet(&t);
    shim s = {0};
    s.t = &t;
    s.skipping = 1;
    lp_collector_config cfg = {0};
    cfg.ops = 1;
    cfg.shapes = 1;
    cfg.describe_shapes = describe;
    cfg.describe_payload = &s;
    assert_int_equal(lp_collector_create(&s.c, &t, &cfg), LP_OK);
    enter(&s, "", 0);
    op(&s, "aten::cat", big, 1);
    op_end(&s, 2);
    leave(&s, 3);
    assert_int_equal(lp_collector_finish(s.c), LP_OK);
    assert_int_equal(t.n_ops, 1);
    assert_string_equal(t.shape_names[t.ops[0].shapes], big);
    assert_int_equal(s.described, 2); /* once to learn the length, once to fill */
    lp_collector_free(s.c);
    lp_tree_free(&t);
}

/* The tree owns its op names and shape texts: freed collector, same table, read by ASan. */
static void op_names_and_shapes_outlive_the_collector(void **state) {
    (void)state;
    const char *const paths[] = {"AlexNet,features,3", "AlexNet,classifier"};
    run_opts o = {paths, 2, 1, 1, 1, 2};
    result r;
    run(&o, &r);
    char *before = render(&r.tree, NULL);
    lp_collector_free(r.c);
    r.c = NULL;
    char *after = render(&r.tree, NULL);
    assert_string_equal(after, before);
    assert_non_null(strstr(after, "aten::addmm [[4096], [1, 6912], [6912, 4096], [], []]"));
    free(before);
    free(after);
    done(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_parent_and_its_child_selected_together_count_once),
        cmocka_unit_test(globs_select_leaves_and_leave_their_parents_blank),
        cmocka_unit_test(torchprofs_readme_paths_with_events_keep_ops_of_selected_modules_only),
        cmocka_unit_test(skipping_unwanted_ops_changes_no_figure),
        cmocka_unit_test(the_core_wants_ops_only_inside_measured_calls),
        cmocka_unit_test(shapes_split_op_rows_and_are_described_once_per_key),
        cmocka_unit_test(without_shapes_an_op_is_one_row_whatever_its_inputs),
        cmocka_unit_test(a_long_shape_text_is_kept_whole),
        cmocka_unit_test(op_names_and_shapes_outlive_the_collector),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
