/* export_fixtures.h: what the report tests share: hand-built trees whose every figure can be
 * checked by eye, the run metadata with a fixed date, capturing a renderer's output, and golden
 * files (LP_UPDATE_GOLDEN=1 rewrites them instead of comparing: review the diff). */
#ifndef LP_TEST_EXPORT_FIXTURES_H
#define LP_TEST_EXPORT_FIXTURES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "golden.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tree.h"
#include "report/json_report.h"
#include "report/render.h"
#include "tree_fixtures.h"

static inline int32_t fx_add(lp_tree *t, const char *path, const char *cls, int32_t parent) {
    int idx = lp_tree_add(t, path, cls, parent);
    assert_true(idx >= 0);
    return idx;
}

/* Per-call times as the collector would record them: the calls alternate 10% below and above the
 * mean, so they add up to total_ns (the fixture's counts are even) and the std is not 0. */
static inline void fx_times(lp_figures *f) {
    uint64_t mean = f->calls ? f->total_ns / f->calls : 0, d = mean / 10;
    memset(&f->time, 0, sizeof f->time);
    for (uint64_t i = 0; i < f->calls; i++)
        lp_welford_add(&f->time, i % 2 ? mean + d : mean - d);
}

/* Per-iteration figures; raw sums are those times the tree's iterations. */
static inline void fx_ran(lp_tree *t, int32_t m, uint64_t calls, uint64_t total_us,
                          uint64_t self_us) {
    lp_figures *f = &t->nodes[m].fig;
    f->calls = calls * t->iterations;
    f->total_ns = total_us * 1000 * t->iterations;
    f->self_ns = self_us * 1000 * t->iterations;
    fx_times(f);
}

/* The same CPU memory sample for every call. */
static inline void fx_mem(lp_figures *f, int64_t retained, int64_t self_retained, int64_t peak) {
    lp_mem_stats *s = &f->mem[LP_DEV_CPU];
    for (uint64_t i = 0; i < f->calls; i++) {
        lp_stat_add(&s->retained, retained);
        lp_stat_add(&s->self_retained, self_retained);
        lp_stat_add(&s->peak, peak);
        lp_stat_add(&s->net, retained - (int64_t)i); /* min and max differ */
    }
}

static const char *const fx_op_names[] = {"aten::conv2d", "aten::convolution", "aten::add"};
static const char *const fx_shape_names[] = {"[1, 3, 8, 8], [4, 3, 3, 3]"};

/* Two iterations, CPU memory, op rows (one with shapes: commas), per-call times (fx_times), and a
 * module whose name holds a pipe, a quote and a comma, for every format's escaping. Shares are
 * set (every base is the root's total). Selves add up to the root's total:
 *   Net 1000us (self 100) > features 700 (50) > features.0 500, features.1 150;
 *   head 200 (150), called twice per iteration > head.w|"q",x 50; unused never ran. */
static inline void fx_small(lp_tree *t) {
    lp_tree_init(t);
    t->iterations = 2;
    t->has_memory[LP_DEV_CPU] = 1;
    int32_t root = fx_add(t, "", "Net", -1);
    int32_t features = fx_add(t, "features", "Sequential", root);
    int32_t f0 = fx_add(t, "features.0", "Conv2d", features);
    int32_t f1 = fx_add(t, "features.1", "ReLU", features);
    int32_t head = fx_add(t, "head", "Linear", root);
    int32_t odd = fx_add(t, "head.w|\"q\",x", "Identity", head);
    fx_add(t, "unused", "Dropout", root);
    fx_ran(t, root, 1, 1000, 100);
    fx_ran(t, features, 1, 700, 50);
    fx_ran(t, f0, 1, 500, 500);
    fx_ran(t, f1, 1, 150, 150);
    fx_ran(t, head, 2, 200, 150);
    fx_ran(t, odd, 1, 50, 50);
    fx_mem(&t->nodes[root].fig, 4096, 0, 65536);
    fx_mem(&t->nodes[features].fig, 2048, 0, 65536);
    fx_mem(&t->nodes[f0].fig, 2048, 2048, 65536);
    fx_mem(&t->nodes[head].fig, 2048, 1024, 4096);
    fx_mem(&t->nodes[odd].fig, 1024, 1024, 1024);

    for (size_t i = 0; i < sizeof fx_op_names / sizeof fx_op_names[0]; i++)
        assert_int_equal(lp_tree_intern_op_name(t, fx_op_names[i]), (int32_t)i);
    assert_int_equal(lp_tree_intern_shapes(t, fx_shape_names[0]), 0);
    int32_t conv = lp_tree_add_op(t, f0, -1, 0, 0);
    int32_t convolution = lp_tree_add_op(t, f0, conv, 1, -1);
    int32_t add = lp_tree_add_op(t, root, -1, 2, -1);
    assert_true(conv >= 0 && convolution >= 0 && add >= 0);
    lp_figures *fc = &t->ops[conv].fig, *fv = &t->ops[convolution].fig, *fa = &t->ops[add].fig;
    fc->calls = fv->calls = fa->calls = 2;
    fc->total_ns = 2 * 480000;
    fc->self_ns = 2 * 30000;
    fv->total_ns = fv->self_ns = 2 * 450000;
    fa->total_ns = fa->self_ns = 2 * 40000;
    fx_times(fc);
    fx_times(fv);
    fx_times(fa);
    fx_mem(fc, 2048, 0, 65536);
    fx_mem(fv, 2048, 2048, 65536);
    fx_mem(fa, 2048, 2048, 2048);
    lp_tree_set_shares(t);
}

/* Per-call statistics, two iterations (ns per call):
 *   Net   2 calls 1000000, 1020000: total 2020000, mean 1.010ms, std 14.142us (m2 2e8), 100.00%
 *   conv  2 calls  500000,  500100: total 1000100, mean 500.050us, std 0.071us (m2 5000), 49.51%
 *   relu  4 calls 100000 .. 130000: total  460000, mean 115us, std 12.910us (m2 5e8), 22.77%
 *   head  1 call   300000:          total  300000, no std, 14.85%
 *   unused never ran: blank.
 * Net's self is what its children leave: 2020000 - 1000100 - 460000 - 300000 = 259900. */
static inline void fx_stats(lp_tree *t) {
    static const uint64_t net[] = {1000000, 1020000}, conv[] = {500000, 500100},
                          relu[] = {100000, 110000, 120000, 130000}, head[] = {300000};
    lp_tree_init(t);
    t->iterations = 2;
    int32_t root = tf_node(t, "", "Net", -1, LP_NODE_MODULE);
    tf_calls(t, root, net, 2);
    tf_calls(t, tf_node(t, "conv", "Conv2d", root, LP_NODE_MODULE), conv, 2);
    tf_calls(t, tf_node(t, "relu", "ReLU", root, LP_NODE_MODULE), relu, 4);
    tf_calls(t, tf_node(t, "head", "Linear", root, LP_NODE_MODULE), head, 1);
    tf_node(t, "unused", "Dropout", root, LP_NODE_MODULE);
    t->nodes[root].fig.self_ns = 259900;
    lp_tree_set_shares(t);
}

/* A package's tree as layerprof builds it from the map (docs/pt2.md), one iteration: Inductor
 * fused bn1 and relu into layer1.0's kernel (relu into one more kernel too), and maxpool into a
 * kernel placed in the root. Those rows have their call and no time: their time is in the
 * receiving module's self, and the rows say where it went. The kernel name is long enough to be
 * shortened at the default name width. Selves add up: 10 + 50 + 40 = 100us. */
static const char fx_fused_kernel[] =
    "cpp_fused__native_batch_norm_legit_no_training_add_clone_relu_squeeze_transpose_view_2";
static inline void fx_fused_package(lp_tree *t) {
    lp_tree_init(t);
    t->iterations = 1;
    int32_t root = fx_add(t, "", "ResNet", -1);
    int32_t maxpool = fx_add(t, "maxpool", "MaxPool2d", root);
    int32_t layer1 = fx_add(t, "layer1", "Sequential", root);
    int32_t block = fx_add(t, "layer1.0", "BasicBlock", layer1);
    int32_t conv1 = fx_add(t, "layer1.0.conv1", "Conv2d", block);
    int32_t bn1 = fx_add(t, "layer1.0.bn1", "BatchNorm2d", block);
    int32_t relu = fx_add(t, "layer1.0.relu", "ReLU", block);
    fx_ran(t, root, 1, 100, 10);
    fx_ran(t, maxpool, 1, 0, 0);
    fx_ran(t, layer1, 1, 90, 0);
    fx_ran(t, block, 1, 90, 50);
    fx_ran(t, conv1, 1, 40, 40);
    fx_ran(t, bn1, 1, 0, 0);
    fx_ran(t, relu, 1, 0, 0);
    assert_int_equal(lp_tree_set_fused(t, bn1, "layer1.0", fx_fused_kernel, 0), LP_OK);
    assert_int_equal(lp_tree_set_fused(t, relu, "layer1.0", fx_fused_kernel, 1), LP_OK);
    assert_int_equal(lp_tree_set_fused(t, maxpool, "", "cpp_fused_max_pool2d_relu_0", 0), LP_OK);
    lp_tree_set_shares(t);
}

/* Every statistic column, after the total and the calls. */
static const char *const fx_stats_columns[] = {"cpu_total", "calls", "mean", "std",
                                               "min",       "max",   "share"};

/* A run object with everything fixed (the date normalised), so golden files never change. */
static inline json_t *fx_run(void) {
    static const char *const inputs[] = {"1x3x8x8:float32"};
    static const char *const notes[] = {"mode: hooks (a note, as the session writes them)"};
    lp_run_meta m = {.model = "models/small.pt",
                     .device = "cpu",
                     .mode = LP_MODE_HOOKS,
                     .libtorch_version = "1.13",
                     .layerprof_version = "0.1.0",
                     .date = "2024-01-02T03:04:05Z",
                     .iterations = 2,
                     .warmup = 1,
                     .memory = 1,
                     .events = 1,
                     .trace_iterations = 3,
                     .inputs = inputs,
                     .n_inputs = 1,
                     .notes = notes,
                     .n_notes = 1};
    json_t *run = lp_export_run(&m);
    assert_non_null(run);
    return run;
}

/* A scratch FILE for a renderer, and its whole content afterwards (closes it; caller frees). */
static inline FILE *fx_open(void) {
    FILE *f = tmpfile();
    assert_non_null(f);
    return f;
}

static inline char *fx_close(FILE *f) {
    return golden_take(f);
}

/* The shared golden comparison, under the name these tests use. */
#define fx_golden assert_golden

#endif
