/* test_collector.c: the event collector, fed synthetic events with hand-picked timestamps, so every
 * figure it produces can be checked exactly. */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/collector.h"
#include "layerprof.h"
#include "model/tree.h"

#include "tree_fixtures.h"

/* The model every test profiles:
 *   ""            Net         0
 *   features      Sequential  1
 *   features.0    Conv2d      2
 *   features.1    ReLU        3
 *   classifier    Linear      4
 *   unused        Dropout     5  (never runs) */
enum { ROOT, FEATURES, F0, F1, CLASSIFIER, UNUSED, N_MODULES };

static const tf_module MODULES[] = {
    {"", "Net", -1},
    {"features", "Sequential", ROOT},
    {"features.0", "Conv2d", FEATURES},
    {"features.1", "ReLU", FEATURES},
    {"classifier", "Linear", ROOT},
    {"unused", "Dropout", ROOT},
};
_Static_assert(sizeof MODULES / sizeof *MODULES == N_MODULES, "a row per module");

typedef struct fixture {
    lp_tree tree;
    lp_collector *c;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    if (tf_tree_of(&f->tree, MODULES, N_MODULES)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    lp_collector_free(f->c);
    lp_tree_free(&f->tree);
    free(f);
    return 0;
}

static lp_collector *start(void **state, int ops, int memory, const uint8_t *selected) {
    fixture *f = *state;
    lp_collector_config cfg = {0};
    cfg.ops = ops;
    cfg.memory = memory;
    cfg.memory_devices = memory ? 1u << LP_DEV_CPU : 0;
    cfg.selected = selected;
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    return f->c;
}

static lp_tree *tree_of(void **state) {
    return &((fixture *)*state)->tree;
}

/* Fake allocation addresses: distinct, 64-byte aligned, never dereferenced. */
#define P(n) ((const void *)(uintptr_t)(0x100000u + (uintptr_t)(n)*64u))

static void enter(lp_collector *c, int32_t module, uint64_t t) {
    lp_ev_call_enter(c, module, t);
}
static void leave(lp_collector *c, uint64_t t) {
    lp_ev_call_exit(c, t);
}
static void op(lp_collector *c, const char *name, uint64_t t) {
    lp_ev_op_start(c, name, 0, t);
}
static void op_end(lp_collector *c, uint64_t t) {
    lp_ev_op_end(c, t);
}
static void alloc(lp_collector *c, int id, int64_t bytes) {
    lp_ev_memory(c, P(id), bytes, LP_DEV_CPU, 0);
}
static void release(lp_collector *c, int id, int64_t bytes) {
    lp_ev_memory(c, P(id), -bytes, LP_DEV_CPU, 0);
}

#define FIG(state, node) (&tree_of(state)->nodes[(node)].fig)

#define ASSERT_TIMES(fig, calls_, total_, self_)                                                   \
    do {                                                                                           \
        assert_int_equal((fig)->calls, (calls_));                                                  \
        assert_int_equal((fig)->total_ns, (total_));                                               \
        assert_int_equal((fig)->self_ns, (self_));                                                 \
    } while (0)

#define ASSERT_STAT(stat, sum_, min_, max_, n_)                                                    \
    do {                                                                                           \
        assert_int_equal((stat).sum, (sum_));                                                      \
        assert_int_equal((stat).min, (min_));                                                      \
        assert_int_equal((stat).max, (max_));                                                      \
        assert_int_equal((stat).n, (n_));                                                          \
    } while (0)

/* Memory figures of a node called once on the CPU. */
#define ASSERT_MEM1(fig, retained_, self_retained_, peak_, net_)                                   \
    do {                                                                                           \
        ASSERT_STAT((fig)->mem[LP_DEV_CPU].retained, (retained_), (retained_), (retained_), 1);    \
        ASSERT_STAT((fig)->mem[LP_DEV_CPU].self_retained, (self_retained_), (self_retained_),      \
                    (self_retained_), 1);                                                          \
        ASSERT_STAT((fig)->mem[LP_DEV_CPU].peak, (peak_), (peak_), (peak_), 1);                    \
        ASSERT_STAT((fig)->mem[LP_DEV_CPU].net, (net_), (net_), (net_), 1);                        \
    } while (0)

static void assert_no_memory(const lp_figures *fig) {
    for (int d = 0; d < LP_DEV_COUNT; d++) {
        assert_int_equal(fig->mem[d].retained.n, 0);
        assert_int_equal(fig->mem[d].self_retained.n, 0);
        assert_int_equal(fig->mem[d].peak.n, 0);
        assert_int_equal(fig->mem[d].net.n, 0);
    }
}

/* The op row named `name` directly under module `module` (parent_op -1) or under op row
 * `parent_op`; -1 when there is none. */
static int32_t find_op(const lp_tree *t, int32_t module, int32_t parent_op, const char *name) {
    int32_t r = parent_op >= 0 ? t->ops[parent_op].first_child : t->nodes[module].first_op;
    for (; r >= 0; r = t->ops[r].next_sibling)
        if (strcmp(t->op_names[t->ops[r].op], name) == 0) return r;
    return -1;
}

static lp_collector_stats stats_of(const lp_collector *c) {
    lp_collector_stats s;
    lp_collector_get_stats(c, &s);
    return s;
}

/* ---- module calls -------------------------------------------------------------------------- */

static void test_creating_a_collector_without_a_tree_is_an_invalid_argument(void **state) {
    lp_collector *c = NULL;
    lp_collector_config cfg = {0};
    assert_int_equal(lp_collector_create(&c, NULL, &cfg), LP_ERR_INVALID);
    assert_null(c);
    assert_int_equal(lp_collector_create(&c, tree_of(state), NULL), LP_ERR_INVALID);
    assert_int_equal(lp_collector_create(NULL, tree_of(state), &cfg), LP_ERR_INVALID);
}

static void test_nested_modules_get_exact_total_and_self_times(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    enter(c, F0, 20);
    leave(c, 50);
    enter(c, F1, 60);
    leave(c, 70);
    leave(c, 80);
    enter(c, CLASSIFIER, 90);
    leave(c, 120);
    leave(c, 130);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, ROOT), 1, 130, 30);    /* 130 - features 70 - classifier 30 */
    ASSERT_TIMES(FIG(state, FEATURES), 1, 70, 30); /* 70 - 30 - 10 */
    ASSERT_TIMES(FIG(state, F0), 1, 30, 30);
    ASSERT_TIMES(FIG(state, F1), 1, 10, 10);
    ASSERT_TIMES(FIG(state, CLASSIFIER), 1, 30, 30);
    assert_int_equal(tree_of(state)->iterations, 1);
    for (int m = 0; m < N_MODULES; m++)
        assert_true(tree_of(state)->nodes[m].selected);
    assert_int_equal(tree_of(state)->n_ops, 0);
    assert_int_equal(stats_of(c).events, 10);
    assert_int_equal(stats_of(c).threads, 1);
}

static void test_a_block_called_twice_in_a_forward_counts_two_calls_per_iteration(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    for (uint64_t base = 0; base <= 1000; base += 1000) {
        enter(c, ROOT, base + 0);
        enter(c, CLASSIFIER, base + 10);
        leave(c, base + 30);
        enter(c, CLASSIFIER, base + 50);
        leave(c, base + 60);
        leave(c, base + 100);
        lp_collector_count_iteration(c);
    }
    assert_int_equal(lp_collector_finish(c), LP_OK);

    assert_int_equal(tree_of(state)->iterations, 2);
    ASSERT_TIMES(FIG(state, CLASSIFIER), 4, 60, 60);
    ASSERT_TIMES(FIG(state, ROOT), 2, 200, 140);
}

static void test_ops_in_the_parent_do_not_reduce_its_self_time(void **state) {
    lp_collector *c = start(state, 1, 0, NULL);
    enter(c, ROOT, 0);
    op(c, "aten::add", 5);
    op_end(c, 15);
    enter(c, FEATURES, 20);
    op(c, "aten::conv2d", 30);
    op_end(c, 60);
    leave(c, 70);
    op(c, "aten::relu", 80);
    op_end(c, 90);
    leave(c, 100);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const lp_tree *t = tree_of(state);
    ASSERT_TIMES(FIG(state, ROOT), 1, 100, 50); /* only the features call is taken out */
    ASSERT_TIMES(FIG(state, FEATURES), 1, 50, 50);
    assert_int_equal(t->n_ops, 3);
    int32_t add = find_op(t, ROOT, -1, "aten::add");
    int32_t relu = find_op(t, ROOT, -1, "aten::relu");
    int32_t conv = find_op(t, FEATURES, -1, "aten::conv2d");
    assert_true(add >= 0 && relu >= 0 && conv >= 0);
    ASSERT_TIMES(&t->ops[add].fig, 1, 10, 10);
    ASSERT_TIMES(&t->ops[relu].fig, 1, 10, 10);
    ASSERT_TIMES(&t->ops[conv].fig, 1, 30, 30);
    /* First-seen order under the root. */
    assert_int_equal(t->nodes[ROOT].first_op, add);
    assert_int_equal(t->ops[add].next_sibling, relu);
    assert_int_equal(t->ops[relu].next_sibling, -1);
    assert_int_equal(t->ops[conv].module, FEATURES);
    assert_int_equal(t->ops[conv].parent_op, -1);
    assert_true(t->has_ops);
}

static void test_a_module_that_never_ran_has_zero_calls(void **state) {
    lp_collector *c = start(state, 1, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    alloc(c, 1, 64);
    leave(c, 20);
    leave(c, 30);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, UNUSED), 0, 0, 0);
    ASSERT_TIMES(FIG(state, CLASSIFIER), 0, 0, 0);
    assert_no_memory(FIG(state, UNUSED));
    assert_int_equal(tree_of(state)->nodes[UNUSED].first_op, -1);
    assert_true(tree_of(state)->nodes[UNUSED].selected); /* measured, it just never ran */
}

static void test_several_iterations_add_raw_sums_and_count_iterations(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    leave(c, 40);
    leave(c, 100);
    lp_collector_count_iteration(c);
    enter(c, ROOT, 200);
    enter(c, FEATURES, 210);
    leave(c, 290);
    leave(c, 350);
    lp_collector_count_iteration(c);
    enter(c, ROOT, 400);
    leave(c, 401);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    assert_int_equal(tree_of(state)->iterations, 3);
    ASSERT_TIMES(FIG(state, ROOT), 3, 100 + 150 + 1, (100 - 30) + (150 - 80) + 1);
    ASSERT_TIMES(FIG(state, FEATURES), 2, 30 + 80, 30 + 80);
}

static void test_helper_method_and_free_function_frames_are_not_calls(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    enter(c, -1, 5);         /* a free function */
    enter(c, CLASSIFIER, 6); /* a module called from it still counts */
    leave(c, 8);
    leave(c, 9);
    enter(c, ROOT, 10); /* a helper method on the root's own self */
    enter(c, FEATURES, 20);
    enter(c, FEATURES, 25); /* features calling its own helper */
    enter(c, -1, 26);
    leave(c, 27);
    leave(c, 30);
    leave(c, 40);
    leave(c, 50);
    leave(c, 100);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, ROOT), 1, 100, 100 - 20 - 2);
    ASSERT_TIMES(FIG(state, FEATURES), 1, 20, 20);
    ASSERT_TIMES(FIG(state, CLASSIFIER), 1, 2, 2);
    assert_int_equal(stats_of(c).unbalanced, 0);
}

static void test_a_method_frame_adds_time_to_its_module_but_no_call(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    enter(c, ROOT, 0);
    lp_ev_method_enter(c, CLASSIFIER, 100); /* e.g. classifier.reset() run from the root */
    alloc(c, 1, 64);
    leave(c, 300);
    enter(c, CLASSIFIER, 400); /* its forward: the one call */
    leave(c, 600);
    leave(c, 1000);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, CLASSIFIER), 1, 400, 400);
    ASSERT_TIMES(FIG(state, ROOT), 1, 1000, 600);
    /* Per-call figures describe the call alone. */
    assert_int_equal(FIG(state, CLASSIFIER)->time.n, 1);
    assert_int_equal(FIG(state, CLASSIFIER)->time.min, 200);
    ASSERT_STAT(FIG(state, CLASSIFIER)->mem[LP_DEV_CPU].retained, 0, 0, 0, 1);
    ASSERT_STAT(FIG(state, ROOT)->mem[LP_DEV_CPU].retained, 64, 64, 64, 1);
}

/* A site marker's caller (shim/marker_calls.cpp) is the innermost module open on the thread: a
 * method frame counts, an op or an unknown module (a pass-through frame) does not hide the
 * module around it, and with no frame there is none. */
static void test_the_current_module_is_the_innermost_open_module_frame(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    assert_int_equal(lp_ev_current_module(c), -1);
    enter(c, ROOT, 0);
    assert_int_equal(lp_ev_current_module(c), ROOT);
    enter(c, FEATURES, 10);
    lp_ev_method_enter(c, F0, 20);
    assert_int_equal(lp_ev_current_module(c), F0);
    lp_ev_op_start(c, "aten::add", 0, 30);
    assert_int_equal(lp_ev_current_module(c), F0);
    lp_ev_op_end(c, 40);
    leave(c, 50);
    assert_int_equal(lp_ev_current_module(c), FEATURES);
    lp_ev_call_enter(c, -1, 60); /* a module the tree does not hold */
    assert_int_equal(lp_ev_current_module(c), FEATURES);
    lp_ev_method_enter(c, FEATURES, 62); /* a helper method of the call: passes through */
    assert_int_equal(lp_ev_current_module(c), FEATURES);
    leave(c, 64);
    leave(c, 70);
    leave(c, 80);
    assert_int_equal(lp_ev_current_module(c), ROOT);
    leave(c, 90);
    assert_int_equal(lp_ev_current_module(c), -1);
    /* Deeper than the stack keeps: the deepest kept module answers, and its calls below are
     * dropped anyway. */
    enter(c, ROOT, 100);
    for (int i = 1; i < 600; i++)
        enter(c, i % 2 ? F0 : F1, 100 + (uint64_t)i);
    /* The stack keeps 512 frames (LP_MAX_STACK): the last kept, frame 511, is F0's. */
    assert_int_equal(lp_ev_current_module(c), F0);
    for (int i = 0; i < 600; i++)
        leave(c, 800 + (uint64_t)i);
    assert_int_equal(lp_ev_current_module(c), -1);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_int_equal(stats_of(c).unbalanced, 0);
}

/* An AOTInductor package: its kernels arrive as method frames of the modules they are placed in
 * (the chain from below the root down), and the calls the export recorded once per forward. */
static void package_forward(lp_collector *c, uint64_t t) {
    enter(c, ROOT, t);
    lp_ev_method_enter(c, FEATURES, t + 10); /* a kernel of features.0 */
    lp_ev_method_enter(c, F0, t + 10);
    leave(c, t + 30);
    leave(c, t + 30);
    lp_ev_method_enter(c, FEATURES, t + 40); /* a kernel that fused features.0 and .1 */
    leave(c, t + 50);
    lp_ev_method_enter(c, FEATURES, t + 60); /* a kernel of features.1 */
    lp_ev_method_enter(c, F1, t + 60);
    leave(c, t + 65);
    leave(c, t + 65);
    lp_ev_add_calls(c, FEATURES, 1);
    lp_ev_add_calls(c, F0, 1);
    lp_ev_add_calls(c, F1, 2); /* called twice, one kernel: fused */
    leave(c, t + 100);
    lp_collector_count_iteration(c);
}

static void test_package_kernels_are_time_and_the_export_gives_the_calls(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    package_forward(c, 0);
    package_forward(c, 1000);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, ROOT), 2, 2 * 100, 2 * (100 - 35));
    ASSERT_TIMES(FIG(state, FEATURES), 2, 2 * 35, 2 * 10);
    ASSERT_TIMES(FIG(state, F0), 2, 2 * 20, 2 * 20);
    ASSERT_TIMES(FIG(state, F1), 4, 2 * 5, 2 * 5);
    /* No call was a frame: no per-call times. */
    assert_int_equal(FIG(state, F1)->time.n, 0);
    assert_int_equal(FIG(state, CLASSIFIER)->calls, 0);
}

static void test_package_calls_of_unselected_modules_are_not_counted(void **state) {
    static const uint8_t selected[N_MODULES] = {[F1] = 1};
    lp_collector *c = start(state, 0, 0, selected);
    package_forward(c, 0);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    assert_int_equal(FIG(state, F1)->calls, 2);
    assert_int_equal(FIG(state, F0)->calls, 0);
    assert_int_equal(FIG(state, FEATURES)->calls, 0);
}

/* A package's FLOPs and output shapes, as its export worked them out: added once per forward per
 * module, like the calls; per-call figures then divide by the calls; an unselected module keeps
 * none, and nothing is kept unless asked for. */
static void package_figures(lp_collector *c, uint64_t t) {
    static const int64_t conv_out[] = {1, 8, 4, 4}, relu_out[] = {1, 8, 4, 4};
    enter(c, ROOT, t);
    lp_ev_method_enter(c, FEATURES, t + 10); /* one kernel, fusing features.0 and .1 */
    leave(c, t + 50);
    lp_ev_add_calls(c, FEATURES, 1);
    lp_ev_add_calls(c, F0, 1);
    lp_ev_add_calls(c, F1, 2);
    lp_ev_add_flops(c, F0, 1000);
    lp_ev_add_flops(c, F1, 2 * 128);    /* two calls' */
    lp_ev_add_flops(c, CLASSIFIER, 77); /* not selected: dropped */
    lp_ev_add_out_shape(c, F0, conv_out, 4);
    lp_ev_add_out_shape(c, F1, relu_out, 4);
    lp_ev_add_out_shape(c, F1, relu_out, 3); /* a second call, another shape */
    leave(c, t + 100);
    lp_collector_count_iteration(c);
}

static void test_package_figures_are_added_per_forward(void **state) {
    fixture *f = *state;
    uint8_t selected[N_MODULES] = {0};
    selected[FEATURES] = 1;
    lp_collector_config cfg = {0};
    cfg.flops = 1;
    cfg.out_shape = 1;
    cfg.selected = selected;
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    package_figures(f->c, 0);
    package_figures(f->c, 1000);
    assert_int_equal(lp_collector_finish(f->c), LP_OK);

    assert_int_equal(FIG(state, F0)->flops_self, 2 * 1000);
    assert_int_equal(FIG(state, F1)->flops_self, 2 * 256);
    assert_int_equal(FIG(state, F1)->calls, 4);
    assert_int_equal(FIG(state, FEATURES)->flops_total, 2 * 1256);
    assert_int_equal(FIG(state, CLASSIFIER)->flops_self, 0);
    assert_int_equal(FIG(state, F0)->out.rank, 4);
    assert_int_equal(FIG(state, F0)->out.dims[1], 8);
    assert_false(FIG(state, F0)->out.varies);
    assert_true(FIG(state, F1)->out.varies);
}

static void test_package_figures_are_ignored_unless_asked_for(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    package_figures(c, 0);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_int_equal(FIG(state, F0)->flops_self, 0);
    assert_false(FIG(state, F0)->out.seen);
    assert_int_equal(FIG(state, F1)->calls, 2);
}

static void test_a_container_totals_its_own_methods_and_its_childrens_calls(void **state) {
    tree_of(state)->nodes[FEATURES].container = 1; /* a ModuleList: no forward */
    lp_collector *c = start(state, 0, 0, NULL);
    for (uint64_t it = 0; it < 2; it++) {
        uint64_t t = it * 1000;
        enter(c, ROOT, t);
        lp_ev_method_enter(c, FEATURES, t + 10); /* len(self.features) */
        leave(c, t + 20);
        enter(c, F0, t + 100); /* the elements run in the root's forward */
        leave(c, t + 300);
        enter(c, F1, t + 400);
        leave(c, t + 700);
        leave(c, t + 1000);
        lp_collector_count_iteration(c);
    }
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, FEATURES), 0, 2 * (10 + 200 + 300), 2 * 10);
    ASSERT_TIMES(FIG(state, F0), 2, 2 * 200, 2 * 200);
    ASSERT_TIMES(FIG(state, F1), 2, 2 * 300, 2 * 300);
    /* The self times still add up to the root's total. */
    ASSERT_TIMES(FIG(state, ROOT), 2, 2000, 2 * (1000 - 10 - 200 - 300));
    assert_int_equal(FIG(state, FEATURES)->time.n, 0);
}

static void test_nested_containers_each_total_what_ran_outside_them(void **state) {
    tree_of(state)->nodes[ROOT].container = 0;
    tree_of(state)->nodes[FEATURES].container = 1; /* features: a ModuleDict ... */
    tree_of(state)->nodes[F0].container = 1;       /* ... holding a ModuleList with no element */
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    enter(c, F1, 100);
    leave(c, 400);
    lp_ev_method_enter(c, F0, 500);
    leave(c, 550);
    leave(c, 1000);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, F0), 0, 50, 50);
    ASSERT_TIMES(FIG(state, FEATURES), 0, 300 + 50, 0);
    ASSERT_TIMES(FIG(state, ROOT), 1, 1000, 1000 - 300 - 50);
}

static void test_a_module_index_outside_the_tree_is_a_pass_through_frame(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    enter(c, N_MODULES + 7, 10);
    enter(c, F0, 20);
    leave(c, 30);
    leave(c, 40);
    leave(c, 50);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_TIMES(FIG(state, ROOT), 1, 50, 40);
    ASSERT_TIMES(FIG(state, F0), 1, 10, 10);
    assert_int_equal(stats_of(c).unbalanced, 0);
}

/* ---- op rows ------------------------------------------------------------------------------- */

static void test_nested_op_rows_get_exact_self_and_total_times(void **state) {
    lp_collector *c = start(state, 1, 0, NULL);
    /* Forward 2 names the ops through other pointers with the same text: same rows. */
    char conv2d[] = "aten::conv2d", convolution[] = "aten::convolution",
         _convolution[] = "aten::_convolution";
    const char *names[2][3] = {{"aten::conv2d", "aten::convolution", "aten::_convolution"},
                               {conv2d, convolution, _convolution}};
    for (int i = 0; i < 2; i++) {
        uint64_t b = (uint64_t)i * 200, shrink = (uint64_t)i * 10;
        enter(c, ROOT, b + 0);
        enter(c, F0, b + 10);
        op(c, names[i][0], b + 20);
        op(c, names[i][1], b + 25);
        op(c, names[i][2], b + 30);
        op_end(c, b + 70 - 2 * shrink);
        op_end(c, b + 75 - 2 * shrink);
        op_end(c, b + 80 - 2 * shrink);
        leave(c, b + 90);
        leave(c, b + 100);
        lp_collector_count_iteration(c);
    }
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const lp_tree *t = tree_of(state);
    assert_int_equal(t->n_ops, 3);
    int32_t conv = find_op(t, F0, -1, "aten::conv2d");
    assert_true(conv >= 0);
    int32_t mid = find_op(t, F0, conv, "aten::convolution");
    assert_true(mid >= 0);
    int32_t inner = find_op(t, F0, mid, "aten::_convolution");
    assert_true(inner >= 0);
    /* totals: conv2d 60 + 40, convolution 50 + 30, _convolution 40 + 20 */
    ASSERT_TIMES(&t->ops[conv].fig, 2, 100, 100 - 80);
    ASSERT_TIMES(&t->ops[mid].fig, 2, 80, 80 - 60);
    ASSERT_TIMES(&t->ops[inner].fig, 2, 60, 60);
    assert_int_equal(t->ops[mid].parent_op, conv);
    assert_int_equal(t->ops[inner].parent_op, mid);
    assert_int_equal(t->ops[inner].module, F0);
    assert_int_equal(t->ops[conv].shapes, -1);
    assert_int_equal(t->ops[inner].first_child, -1);
    /* Ops never take time out of the module. */
    ASSERT_TIMES(FIG(state, F0), 2, 160, 160);
    assert_int_equal(t->nodes[ROOT].first_op, -1);
}

static void test_op_rows_are_not_kept_without_the_ops_option(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    op(c, "aten::add", 10);
    op_end(c, 20);
    leave(c, 30);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_int_equal(tree_of(state)->n_ops, 0);
    assert_false(tree_of(state)->has_ops);
    ASSERT_TIMES(FIG(state, ROOT), 1, 30, 30);
}

/* ---- memory -------------------------------------------------------------------------------- */

static void test_memory_of_nested_modules_counts_in_every_enclosing_call(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    enter(c, ROOT, 0);
    alloc(c, 1, 1000);
    enter(c, FEATURES, 10);
    alloc(c, 2, 200);
    enter(c, F0, 20);
    alloc(c, 3, 30);
    alloc(c, 4, 5); /* a temporary */
    release(c, 4, 5);
    leave(c, 30);
    leave(c, 40);
    leave(c, 50);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    /* retained, self retained, peak, net */
    ASSERT_MEM1(FIG(state, F0), 30, 30, 35, 30);
    ASSERT_MEM1(FIG(state, FEATURES), 230, 200, 235, 230);
    ASSERT_MEM1(FIG(state, ROOT), 1230, 1000, 1235, 1230);
    assert_true(tree_of(state)->has_memory[LP_DEV_CPU]);
    assert_false(tree_of(state)->has_memory[LP_DEV_CUDA]);
    assert_no_memory(FIG(state, UNUSED));
    assert_int_equal(stats_of(c).foreign_frees, 0);
}

static void
test_a_child_freeing_memory_its_parent_allocated_lowers_the_parent_retained(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    alloc(c, 1, 100);
    enter(c, F0, 20);
    release(c, 1, 100);
    leave(c, 30);
    leave(c, 40);
    leave(c, 50);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_MEM1(FIG(state, F0), 0, 0, 0, -100);
    ASSERT_MEM1(FIG(state, FEATURES), 0, 0, 100, 0);
    ASSERT_MEM1(FIG(state, ROOT), 0, 0, 100, 0);
    assert_int_equal(stats_of(c).foreign_frees, 0);
}

static void test_a_module_freeing_its_input_from_a_previous_sibling_has_negative_net(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    enter(c, F0, 20);
    alloc(c, 1, 400); /* features.0's output */
    leave(c, 30);
    enter(c, F1, 40);
    alloc(c, 2, 300);   /* features.1's output */
    release(c, 1, 400); /* its input, no longer needed */
    leave(c, 50);
    leave(c, 60);
    leave(c, 70);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_MEM1(FIG(state, F0), 400, 400, 400, 400);
    ASSERT_MEM1(FIG(state, F1), 300, 300, 300, -100);
    ASSERT_MEM1(FIG(state, FEATURES), 300, 0, 700, 300);
    ASSERT_MEM1(FIG(state, ROOT), 300, 0, 700, 300);
    assert_int_equal(stats_of(c).foreign_frees, 0);
}

static void test_retained_peak_and_net_differ_when_a_temporary_is_freed(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, CLASSIFIER, 10);
    alloc(c, 1, 100);
    alloc(c, 2, 50);
    release(c, 2, 50);
    leave(c, 20);
    leave(c, 30);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_MEM1(FIG(state, CLASSIFIER), 100, 100, 150, 100);
    ASSERT_MEM1(FIG(state, ROOT), 100, 0, 150, 100);
}

static void test_self_retained_excludes_what_child_modules_allocated(void **state) {
    lp_collector *c = start(state, 1, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    alloc(c, 1, 300); /* features itself */
    op(c, "aten::cat", 11);
    alloc(c, 2, 64); /* an op of features: still features' own */
    op_end(c, 12);
    enter(c, -1, 13);
    alloc(c, 3, 16); /* a free function called by features: features' own too */
    leave(c, 14);
    enter(c, F0, 20);
    alloc(c, 4, 200); /* the child's */
    alloc(c, 5, 7);
    release(c, 5, 7);
    leave(c, 30);
    leave(c, 40);
    leave(c, 50);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_MEM1(FIG(state, F0), 200, 200, 207, 200);
    ASSERT_MEM1(FIG(state, FEATURES), 580, 380, 587, 580);
    ASSERT_MEM1(FIG(state, ROOT), 580, 0, 587, 580);
    const lp_tree *t = tree_of(state);
    int32_t cat = find_op(t, FEATURES, -1, "aten::cat");
    assert_true(cat >= 0);
    ASSERT_MEM1(&t->ops[cat].fig, 64, 64, 64, 64);
}

static void test_a_free_of_memory_allocated_before_profiling_only_lowers_net(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    alloc(c, 9, 80); /* no call open: not seen as allocated by any call */
    enter(c, ROOT, 0);
    enter(c, CLASSIFIER, 10);
    alloc(c, 1, 10);
    release(c, 9, 80);
    release(c, 42, 5); /* a block never reported at all */
    leave(c, 20);
    leave(c, 30);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_MEM1(FIG(state, CLASSIFIER), 10, 10, 10, 10 - 80 - 5);
    ASSERT_MEM1(FIG(state, ROOT), 10, 0, 10, 10 - 80 - 5);
    assert_int_equal(stats_of(c).foreign_frees, 2);
}

static void test_memory_stats_keep_sum_min_and_max_over_calls(void **state) {
    lp_collector *c = start(state, 0, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, CLASSIFIER, 10);
    alloc(c, 1, 100);
    leave(c, 20);
    enter(c, CLASSIFIER, 30);
    alloc(c, 2, 40);
    release(c, 1, 100); /* the first call's block */
    leave(c, 40);
    leave(c, 50);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const lp_mem_stats *m = &FIG(state, CLASSIFIER)->mem[LP_DEV_CPU];
    ASSERT_STAT(m->retained, 140, 40, 100, 2);
    ASSERT_STAT(m->self_retained, 140, 40, 100, 2);
    ASSERT_STAT(m->peak, 140, 40, 100, 2);
    ASSERT_STAT(m->net, 40, -60, 100, 2);
    ASSERT_MEM1(FIG(state, ROOT), 40, 0, 140, 40);
}

static void test_memory_of_a_device_without_columns_is_not_recorded(void **state) {
    lp_collector *c = start(state, 0, 1, NULL); /* CPU only */
    enter(c, ROOT, 0);
    lp_ev_memory(c, P(1), 1000, LP_DEV_CUDA, 0);
    alloc(c, 2, 8);
    leave(c, 10);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM1(FIG(state, ROOT), 8, 8, 8, 8);
    assert_int_equal(FIG(state, ROOT)->mem[LP_DEV_CUDA].retained.n, 0);
    assert_int_equal(FIG(state, ROOT)->mem[LP_DEV_CUDA].peak.n, 0);
}

static void test_memory_events_are_ignored_without_the_memory_option(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    alloc(c, 1, 100);
    release(c, 2, 100);
    leave(c, 10);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_no_memory(FIG(state, ROOT));
    assert_false(tree_of(state)->has_memory[LP_DEV_CPU]);
    assert_int_equal(stats_of(c).foreign_frees, 0);
    assert_int_equal(stats_of(c).events, 2);
}

/* ---- selection ----------------------------------------------------------------------------- */

static void test_unselected_modules_get_no_figures_op_rows_or_memory(void **state) {
    static const uint8_t selected[N_MODULES] = {[FEATURES] = 1};
    lp_collector *c = start(state, 1, 1, selected);
    enter(c, ROOT, 0);
    alloc(c, 1, 1000);
    op(c, "aten::add", 1);
    op_end(c, 2);
    enter(c, FEATURES, 10);
    op(c, "aten::cat", 11);
    op_end(c, 12);
    alloc(c, 2, 50);
    enter(c, F0, 20); /* measured: under a selected module */
    alloc(c, 3, 20);
    op(c, "aten::conv2d", 21);
    op_end(c, 29);
    leave(c, 30);
    leave(c, 40);
    enter(c, CLASSIFIER, 50);
    alloc(c, 4, 70);
    op(c, "aten::linear", 51);
    op_end(c, 59);
    leave(c, 60);
    leave(c, 100);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const lp_tree *t = tree_of(state);
    ASSERT_TIMES(FIG(state, ROOT), 0, 0, 0);
    ASSERT_TIMES(FIG(state, CLASSIFIER), 0, 0, 0);
    assert_no_memory(FIG(state, ROOT));
    assert_no_memory(FIG(state, CLASSIFIER));
    assert_int_equal(t->nodes[ROOT].first_op, -1);
    assert_int_equal(t->nodes[CLASSIFIER].first_op, -1);

    ASSERT_TIMES(FIG(state, FEATURES), 1, 30, 20);
    ASSERT_TIMES(FIG(state, F0), 1, 10, 10);
    ASSERT_MEM1(FIG(state, FEATURES), 70, 50, 70, 70);
    ASSERT_MEM1(FIG(state, F0), 20, 20, 20, 20);
    assert_int_equal(t->n_ops, 2);
    assert_true(find_op(t, FEATURES, -1, "aten::cat") >= 0);
    assert_true(find_op(t, F0, -1, "aten::conv2d") >= 0);

    static const int expected[N_MODULES] = {0, 1, 1, 1, 0, 0};
    for (int m = 0; m < N_MODULES; m++)
        assert_int_equal(t->nodes[m].selected, expected[m]);
}

/* ---- robustness ---------------------------------------------------------------------------- */

static void test_unbalanced_exits_are_counted_and_change_no_figures(void **state) {
    lp_collector *c = start(state, 1, 0, NULL);
    leave(c, 1);  /* no call open */
    op_end(c, 2); /* no op open */
    enter(c, ROOT, 10);
    op(c, "aten::add", 20);
    leave(c, 25); /* an op is open: not the root's exit */
    op_end(c, 30);
    op_end(c, 35); /* the root is on top, not an op */
    leave(c, 40);
    leave(c, 50); /* nothing open any more */
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    lp_collector_stats s = stats_of(c);
    assert_int_equal(s.unbalanced, 5);
    assert_int_equal(s.dropped, 0);
    ASSERT_TIMES(FIG(state, ROOT), 1, 30, 30);
    ASSERT_TIMES(&tree_of(state)->ops[find_op(tree_of(state), ROOT, -1, "aten::add")].fig, 1, 10,
                 10);
}

#define LP_TEST_MAX_STACK 512

static void
test_frames_beyond_the_stack_limit_are_dropped_without_corrupting_figures(void **state) {
    lp_collector *c = start(state, 1, 0, NULL);
    /* root + 510 free-function frames + features = 512 frames: the limit. */
    enter(c, ROOT, 0);
    for (int i = 0; i < LP_TEST_MAX_STACK - 2; i++)
        enter(c, -1, 1);
    enter(c, FEATURES, 100);
    enter(c, F0, 110);          /* frame 513: dropped */
    op(c, "aten::conv2d", 115); /* dropped */
    enter(c, F1, 116);          /* dropped */
    leave(c, 117);
    op_end(c, 118);
    leave(c, 120); /* features.0's exit, matched with the dropped entry */
    leave(c, 130); /* features */
    for (int i = 0; i < LP_TEST_MAX_STACK - 2; i++)
        leave(c, 140);
    leave(c, 200);
    lp_collector_count_iteration(c);

    lp_collector_stats s = stats_of(c);
    assert_int_equal(s.dropped, 3);
    assert_int_equal(s.unbalanced, 0);

    /* The next forward is measured exactly. */
    enter(c, ROOT, 300);
    enter(c, FEATURES, 310);
    enter(c, F0, 315);
    op(c, "aten::conv2d", 316);
    op_end(c, 320);
    leave(c, 325);
    leave(c, 330);
    leave(c, 400);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, ROOT), 2, 200 + 100, 170 + 80);
    ASSERT_TIMES(FIG(state, FEATURES), 2, 30 + 20, 30 + 10);
    ASSERT_TIMES(FIG(state, F0), 1, 10, 10);
    ASSERT_TIMES(FIG(state, F1), 0, 0, 0);
    const lp_tree *t = tree_of(state);
    assert_int_equal(t->n_ops, 1); /* no empty row for the dropped op */
    assert_int_equal(t->nodes[FEATURES].first_op, -1);
    ASSERT_TIMES(&t->ops[find_op(t, F0, -1, "aten::conv2d")].fig, 1, 4, 4);
    assert_int_equal(stats_of(c).unbalanced, 0);
}

static void test_reset_stacks_after_an_aborted_forward_starts_the_next_one_clean(void **state) {
    lp_collector *c = start(state, 1, 1, NULL);
    enter(c, ROOT, 0);
    enter(c, FEATURES, 10);
    alloc(c, 1, 100);
    op(c, "aten::conv2d", 15);
    /* the forward throws here */
    assert_int_equal(lp_collector_reset_stacks(c), 3);
    assert_int_equal(lp_collector_reset_stacks(c), 0);

    enter(c, ROOT, 100);
    enter(c, FEATURES, 110);
    release(c, 1, 100); /* the aborted forward's block: no call of this forward owns it */
    leave(c, 150);
    leave(c, 200);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    ASSERT_TIMES(FIG(state, ROOT), 1, 100, 60);
    ASSERT_TIMES(FIG(state, FEATURES), 1, 40, 40);
    ASSERT_MEM1(FIG(state, FEATURES), 0, 0, 0, -100);
    ASSERT_MEM1(FIG(state, ROOT), 0, 0, 0, -100);
    lp_collector_stats s = stats_of(c);
    assert_int_equal(s.unbalanced, 0);
    assert_int_equal(s.foreign_frees, 1);
    /* The aborted op never ended: its row, if any, has no calls. */
    for (size_t r = 0; r < tree_of(state)->n_ops; r++)
        assert_int_equal(tree_of(state)->ops[r].fig.calls, 0);
}

static void test_finish_resets_the_threads_so_it_can_be_called_per_run(void **state) {
    lp_collector *c = start(state, 1, 0, NULL);
    enter(c, ROOT, 0);
    op(c, "aten::add", 5);
    op_end(c, 10);
    leave(c, 20);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_int_equal(lp_collector_finish(c), LP_OK); /* nothing new: nothing added */
    ASSERT_TIMES(FIG(state, ROOT), 1, 20, 20);

    enter(c, ROOT, 100);
    op(c, "aten::add", 105);
    op_end(c, 108);
    leave(c, 130);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const lp_tree *t = tree_of(state);
    ASSERT_TIMES(FIG(state, ROOT), 2, 50, 50);
    assert_int_equal(t->iterations, 2);
    assert_int_equal(t->n_ops, 1);
    ASSERT_TIMES(&t->ops[find_op(t, ROOT, -1, "aten::add")].fig, 2, 8, 8);
}

/* ---- threads ------------------------------------------------------------------------------- */

#define THREAD_FORWARDS 500

typedef struct thread_arg {
    lp_collector *c;
    pthread_barrier_t *barrier;
    int k; /* 0 or 1: thread k's calls of features.0 last 20 + 5k ns, retain 100 (k + 1) bytes */
} thread_arg;

static void *run_forwards(void *p) {
    thread_arg *a = p;
    lp_collector *c = a->c;
    uint64_t k = (uint64_t)a->k;
    char add[] = "aten::add"; /* a name of this thread's own: rows still merge by text */
    pthread_barrier_wait(a->barrier);
    for (int i = 0; i < THREAD_FORWARDS; i++) {
        uint64_t b = (uint64_t)i * 1000;
        int id = a->k * THREAD_FORWARDS + i;
        enter(c, ROOT, b);
        enter(c, FEATURES, b + 10);
        enter(c, F0, b + 20);
        op(c, "aten::relu", b + 25);
        op_end(c, b + 30);
        alloc(c, id, 100 * (int64_t)(k + 1));
        leave(c, b + 40 + 5 * k);
        leave(c, b + 60);
        op(c, add, b + 70);
        op_end(c, b + 72);
        release(c, id, 100 * (int64_t)(k + 1));
        leave(c, b + 100 + 10 * k);
    }
    return NULL;
}

static void test_two_threads_keep_their_own_stacks_and_are_merged_at_finish(void **state) {
    lp_collector *c = start(state, 1, 1, NULL);
    pthread_barrier_t barrier;
    pthread_barrier_init(&barrier, NULL, 2);
    pthread_t th[2];
    thread_arg args[2];
    for (int k = 0; k < 2; k++) {
        args[k] = (thread_arg){c, &barrier, k};
        assert_int_equal(pthread_create(&th[k], NULL, run_forwards, &args[k]), 0);
    }
    for (int k = 0; k < 2; k++)
        pthread_join(th[k], NULL);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < 2 * THREAD_FORWARDS; i++)
        lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const uint64_t n = THREAD_FORWARDS;
    const lp_tree *t = tree_of(state);
    assert_int_equal(t->iterations, 2 * n);
    ASSERT_TIMES(FIG(state, ROOT), 2 * n, n * (100 + 110), n * (50 + 60));
    ASSERT_TIMES(FIG(state, FEATURES), 2 * n, n * (50 + 50), n * (30 + 25));
    ASSERT_TIMES(FIG(state, F0), 2 * n, n * (20 + 25), n * (20 + 25));
    const lp_mem_stats *m = &FIG(state, F0)->mem[LP_DEV_CPU];
    ASSERT_STAT(m->retained, (int64_t)n * 300, 100, 200, 2 * n);
    ASSERT_STAT(FIG(state, ROOT)->mem[LP_DEV_CPU].retained, 0, 0, 0, 2 * n);
    ASSERT_STAT(FIG(state, ROOT)->mem[LP_DEV_CPU].peak, (int64_t)n * 300, 100, 200, 2 * n);
    assert_int_equal(t->n_ops, 2);
    ASSERT_TIMES(&t->ops[find_op(t, F0, -1, "aten::relu")].fig, 2 * n, 10 * n, 10 * n);
    ASSERT_TIMES(&t->ops[find_op(t, ROOT, -1, "aten::add")].fig, 2 * n, 4 * n, 4 * n);

    lp_collector_stats s = stats_of(c);
    assert_int_equal(s.threads, 2);
    assert_int_equal(s.dropped, 0);
    assert_int_equal(s.unbalanced, 0);
    assert_int_equal(s.foreign_frees, 0);
    assert_int_equal(s.events, 2 * n * 12);
}

/* collector.c keeps the states of at most this many threads. */
#define LP_TEST_MAX_THREADS 64

/* Two sessions used in turn from one thread (profile A, then B, then A ...) must not claim a new
 * thread slot at every switch: after 64 switches every event would be dropped. */
static void test_one_thread_alternating_between_two_collectors_keeps_one_state_each(void **state) {
    lp_collector *a = start(state, 0, 0, NULL);
    lp_tree other;
    lp_tree_init(&other);
    assert_int_equal(lp_tree_add(&other, "", "Other", -1), 0);
    lp_collector *b = NULL;
    lp_collector_config cfg = {0};
    assert_int_equal(lp_collector_create(&b, &other, &cfg), LP_OK);
    for (uint64_t i = 0; i < 100; i++) {
        enter(a, ROOT, 10 * i);
        leave(a, 10 * i + 4);
        enter(b, 0, 10 * i);
        leave(b, 10 * i + 6);
    }
    lp_collector_stats sa, sb;
    lp_collector_get_stats(a, &sa);
    lp_collector_get_stats(b, &sb);
    assert_int_equal(sa.threads, 1);
    assert_int_equal(sb.threads, 1);
    assert_int_equal(sa.dropped, 0);
    assert_int_equal(sb.dropped, 0);
    assert_int_equal(lp_collector_finish(a), LP_OK);
    assert_int_equal(lp_collector_finish(b), LP_OK);
    assert_int_equal(tree_of(state)->nodes[ROOT].fig.calls, 100);
    assert_int_equal(tree_of(state)->nodes[ROOT].fig.total_ns, 400);
    assert_int_equal(other.nodes[0].fig.calls, 100);
    assert_int_equal(other.nodes[0].fig.total_ns, 600);
    lp_collector_free(b);
    lp_tree_free(&other);
}

typedef struct one_call_arg {
    lp_collector *c;
    pthread_barrier_t *alive; /* keeps every thread alive until all have called: distinct ids */
} one_call_arg;

static void *run_one_call(void *p) {
    one_call_arg *a = p;
    enter(a->c, ROOT, 0);
    leave(a->c, 10);
    pthread_barrier_wait(a->alive);
    return NULL;
}

static void test_threads_beyond_the_limit_have_their_events_dropped(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enum { N = LP_TEST_MAX_THREADS + 1 };
    pthread_barrier_t alive;
    pthread_barrier_init(&alive, NULL, N);
    one_call_arg arg = {c, &alive};
    pthread_t th[N];
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&th[i], NULL, run_one_call, &arg), 0);
    for (int i = 0; i < N; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&alive);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_TIMES(FIG(state, ROOT), LP_TEST_MAX_THREADS, 10 * LP_TEST_MAX_THREADS,
                 10 * LP_TEST_MAX_THREADS);
    lp_collector_stats s = stats_of(c);
    assert_int_equal(s.threads, LP_TEST_MAX_THREADS);
    assert_int_equal(s.dropped, 2); /* the last thread's two events */
    assert_int_equal(s.events, 2 * LP_TEST_MAX_THREADS);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

/* FLOPs go to the innermost measured module call, whatever op frames are open; the subtree's
 * totals are filled at finish; a module outside the selection keeps none. */
static void test_flops_go_to_the_innermost_measured_module(void **state) {
    fixture *f = *state;
    lp_collector_config cfg = {0};
    cfg.flops = 1;
    cfg.ops = 1;
    uint8_t selected[N_MODULES] = {0};
    selected[FEATURES] = 1;
    cfg.selected = selected;
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    lp_collector *c = f->c;
    enter(c, ROOT, 0);
    lp_ev_flops(c, 1000); /* the root is not measured: dropped */
    enter(c, FEATURES, 10);
    lp_ev_flops(c, 5); /* the Sequential's own op */
    enter(c, F0, 20);
    op(c, "aten::conv2d", 21);
    lp_ev_flops(c, 300); /* inside an op frame: still F0's */
    op_end(c, 30);
    leave(c, 40);
    enter(c, F1, 50);
    lp_ev_flops(c, 7);
    leave(c, 60);
    enter(c, F1, 61); /* called twice: per-call figures halve */
    lp_ev_flops(c, 7);
    leave(c, 62);
    leave(c, 70);
    leave(c, 80);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    lp_tree *t = tree_of(state);
    assert_true(t->has_flops);
    assert_int_equal(FIG(state, F0)->flops_self, 300);
    assert_int_equal(FIG(state, F1)->flops_self, 14);
    assert_int_equal(FIG(state, F1)->calls, 2);
    assert_int_equal(FIG(state, FEATURES)->flops_self, 5);
    assert_int_equal(FIG(state, FEATURES)->flops_total, 319);
    assert_int_equal(FIG(state, ROOT)->flops_self, 0);
    assert_int_equal(FIG(state, ROOT)->flops_total, 0); /* not measured: no total */
}

/* Ops without a formula are kept once each, by name pointer, across threads' merges. */
static void test_ops_without_a_formula_are_named_once(void **state) {
    fixture *f = *state;
    lp_collector_config cfg = {0};
    cfg.flops = 1;
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    lp_collector *c = f->c;
    static const char roi[] = "torchvision::roi_align", nms[] = "torchvision::nms";
    enter(c, ROOT, 0);
    lp_ev_flops_unknown(c, roi);
    lp_ev_flops_unknown(c, nms);
    lp_ev_flops_unknown(c, roi);
    leave(c, 10);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    enter(c, ROOT, 20);
    lp_ev_flops_unknown(c, roi); /* again in a later run: still once */
    leave(c, 30);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const char *names[4] = {NULL};
    assert_int_equal(lp_collector_no_formula(c, names, 4), 2);
    assert_ptr_equal(names[0], roi);
    assert_ptr_equal(names[1], nms);
    assert_int_equal(lp_collector_no_formula(c, names, 1), 2); /* how many in all */
}

/* Without cfg.flops nothing is recorded, whatever arrives. */
static void test_flops_are_ignored_unless_asked_for(void **state) {
    lp_collector *c = start(state, 0, 0, NULL);
    enter(c, ROOT, 0);
    lp_ev_flops(c, 99);
    lp_ev_flops_unknown(c, "aten::x");
    leave(c, 10);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_false(tree_of(state)->has_flops);
    assert_int_equal(FIG(state, ROOT)->flops_self, 0);
    const char *names[1];
    assert_int_equal(lp_collector_no_formula(c, names, 1), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_flops_go_to_the_innermost_measured_module),
        TEST(test_ops_without_a_formula_are_named_once),
        TEST(test_flops_are_ignored_unless_asked_for),
        TEST(test_creating_a_collector_without_a_tree_is_an_invalid_argument),
        TEST(test_nested_modules_get_exact_total_and_self_times),
        TEST(test_a_block_called_twice_in_a_forward_counts_two_calls_per_iteration),
        TEST(test_ops_in_the_parent_do_not_reduce_its_self_time),
        TEST(test_a_module_that_never_ran_has_zero_calls),
        TEST(test_several_iterations_add_raw_sums_and_count_iterations),
        TEST(test_helper_method_and_free_function_frames_are_not_calls),
        TEST(test_a_method_frame_adds_time_to_its_module_but_no_call),
        TEST(test_the_current_module_is_the_innermost_open_module_frame),
        TEST(test_package_kernels_are_time_and_the_export_gives_the_calls),
        TEST(test_package_calls_of_unselected_modules_are_not_counted),
        TEST(test_package_figures_are_added_per_forward),
        TEST(test_package_figures_are_ignored_unless_asked_for),
        TEST(test_a_container_totals_its_own_methods_and_its_childrens_calls),
        TEST(test_nested_containers_each_total_what_ran_outside_them),
        TEST(test_a_module_index_outside_the_tree_is_a_pass_through_frame),
        TEST(test_nested_op_rows_get_exact_self_and_total_times),
        TEST(test_op_rows_are_not_kept_without_the_ops_option),
        TEST(test_memory_of_nested_modules_counts_in_every_enclosing_call),
        TEST(test_a_child_freeing_memory_its_parent_allocated_lowers_the_parent_retained),
        TEST(test_a_module_freeing_its_input_from_a_previous_sibling_has_negative_net),
        TEST(test_retained_peak_and_net_differ_when_a_temporary_is_freed),
        TEST(test_self_retained_excludes_what_child_modules_allocated),
        TEST(test_a_free_of_memory_allocated_before_profiling_only_lowers_net),
        TEST(test_memory_stats_keep_sum_min_and_max_over_calls),
        TEST(test_memory_of_a_device_without_columns_is_not_recorded),
        TEST(test_memory_events_are_ignored_without_the_memory_option),
        TEST(test_unselected_modules_get_no_figures_op_rows_or_memory),
        TEST(test_unbalanced_exits_are_counted_and_change_no_figures),
        TEST(test_frames_beyond_the_stack_limit_are_dropped_without_corrupting_figures),
        TEST(test_reset_stacks_after_an_aborted_forward_starts_the_next_one_clean),
        TEST(test_finish_resets_the_threads_so_it_can_be_called_per_run),
        TEST(test_two_threads_keep_their_own_stacks_and_are_merged_at_finish),
        TEST(test_one_thread_alternating_between_two_collectors_keeps_one_state_each),
        TEST(test_threads_beyond_the_limit_have_their_events_dropped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
