/* test_cuda_join.c: CUDA kernel time per module without a GPU. Synthetic CUPTI records (kernels,
 * memcpys, memsets, external correlations) are joined to scopes, and a fake CUPTI drives the
 * collector's scope hooks exactly as the real one does: every launch gets a new correlation id,
 * and an external-correlation record naming the innermost scope pushed on the launching thread.
 * Every figure is checked exactly. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/collector.h"
#include "collect/cuda_join.h"
#include "layerprof.h"
#include "report/columns.h"
#include "model/tree.h"

#include "tree_fixtures.h"

/* The model:
 *   ""      Net     0
 *   a       Block   1
 *   a.x     Conv2d  2
 *   b       Linear  3
 *   c       ReLU    4  (never runs) */
enum { ROOT, A, AX, B, C, N_MODULES };

#define CUSTOM0 3u /* Kineto's kind: never ours */

/* ---- a fake CUPTI ------------------------------------------------------------------------------
 */

typedef struct fake_cupti {
    uint64_t stack[64]; /* the launching thread's external-correlation stack (CUSTOM2) */
    int sp;
    uint32_t next_corr;
    lp_cuda_records rec;
    int pushes, pops, mismatched;
    const char *last_op_name;
    int32_t last_module;
} fake_cupti;

static void fake_enter(void *ctx, uint64_t scope, int32_t module, const char *op_name) {
    fake_cupti *f = ctx;
    assert_true(f->sp < 64);
    f->stack[f->sp++] = scope;
    f->pushes++;
    f->last_module = module;
    f->last_op_name = op_name;
}

static void fake_exit(void *ctx, uint64_t scope) {
    fake_cupti *f = ctx;
    assert_true(f->sp > 0);
    if (f->stack[--f->sp] != scope) f->mismatched++;
    f->pops++;
}

/* A launch on the device at [start, end): what CUPTI records for it. */
static void launch(fake_cupti *f, int kind, uint64_t start, uint64_t end) {
    uint32_t corr = ++f->next_corr;
    lp_cuda_activity a = {start, end, corr, 7, (uint8_t)kind};
    assert_int_equal(lp_cuda_records_add_activity(&f->rec, &a), 0);
    if (f->sp) {
        lp_cuda_ext_corr e = {LP_CUDA_EXT_KIND, corr, f->stack[f->sp - 1]};
        assert_int_equal(lp_cuda_records_add_ext(&f->rec, &e), 0);
    }
}

/* ---- fixture -----------------------------------------------------------------------------------
 */

static const tf_module MODULES[] = {
    {"", "Net", -1},       {"a", "Block", ROOT}, {"a.x", "Conv2d", A},
    {"b", "Linear", ROOT}, {"c", "ReLU", ROOT},
};
_Static_assert(sizeof MODULES / sizeof *MODULES == N_MODULES, "a row per module");

typedef struct fixture {
    lp_tree tree;
    lp_collector *c;
    fake_cupti cupti;
    lp_cuda_join_stats st;
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
    lp_cuda_records_free(&f->cupti.rec);
    free(f);
    return 0;
}

static lp_collector *start(void **state, int ops, const uint8_t *selected) {
    fixture *f = *state;
    lp_collector_config cfg = {0};
    cfg.ops = ops;
    cfg.selected = selected;
    cfg.cuda_time = 1;
    cfg.scopes.ctx = &f->cupti;
    cfg.scopes.enter = fake_enter;
    cfg.scopes.exit = fake_exit;
    cfg.scope_ops = ops;
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    return f->c;
}

/* Joins what the fake CUPTI recorded into the collector and finishes the run. */
static void finish(void **state) {
    fixture *f = *state;
    assert_int_equal(lp_cuda_join(&f->cupti.rec, lp_collector_add_cuda, f->c, &f->st), LP_OK);
    lp_cuda_records_clear(&f->cupti.rec);
    assert_int_equal(lp_collector_finish(f->c), LP_OK);
}

#define TREE(state) (&((fixture *)*(state))->tree)
#define CUPTI(state) (&((fixture *)*(state))->cupti)
#define STATS(state) (&((fixture *)*(state))->st)
#define FIG(state, node) (&TREE(state)->nodes[(node)].fig)
#define ASSERT_CUDA(fig, self_, total_)                                                            \
    do {                                                                                           \
        assert_int_equal((fig)->cuda_self_ns, (self_));                                            \
        assert_int_equal((fig)->cuda_total_ns, (total_));                                          \
    } while (0)

static void enter(lp_collector *c, int32_t m) {
    lp_ev_call_enter(c, m, 0);
}
static void leave(lp_collector *c) {
    lp_ev_call_exit(c, 0);
}

/* ---- scope ids ---------------------------------------------------------------------------------
 */

static void test_scope_ids_round_trip_and_never_collide(void **state) {
    (void)state;
    uint32_t thread;
    int32_t index;
    uint64_t m = lp_cuda_scope_module(12345);
    assert_int_equal(lp_cuda_scope_decode(m, &thread, &index), LP_SCOPE_MODULE);
    assert_int_equal(index, 12345);
    uint64_t o = lp_cuda_scope_op(63, 0x7FFFFFFF);
    assert_int_equal(lp_cuda_scope_decode(o, &thread, &index), LP_SCOPE_OP);
    assert_int_equal(thread, 63);
    assert_int_equal(index, 0x7FFFFFFF);
    assert_true(m != 0 && o != 0);
    assert_true(lp_cuda_scope_module(0) != lp_cuda_scope_op(0, 0));
    /* Ids that are not ours (0, another tool's small counters) decode to nothing. */
    assert_int_equal(lp_cuda_scope_decode(0, &thread, &index), LP_SCOPE_NONE);
    assert_int_equal(lp_cuda_scope_decode(42, &thread, &index), LP_SCOPE_NONE);
    assert_int_equal(lp_cuda_scope_decode(3ull << 62, &thread, &index), LP_SCOPE_NONE);
    assert_int_equal(index, -1);
}

/* ---- the join alone ----------------------------------------------------------------------------
 */

typedef struct sums {
    uint64_t ns[8];
    int calls;
} sums;

/* A sink that knows module scopes 0..7 only. */
static int sum_sink(void *ctx, uint64_t scope, uint64_t ns) {
    sums *s = ctx;
    uint32_t thread;
    int32_t index;
    if (lp_cuda_scope_decode(scope, &thread, &index) != LP_SCOPE_MODULE || index >= 8) return -1;
    s->ns[index] += ns;
    s->calls++;
    return 0;
}

static void add_act(lp_cuda_records *r, int kind, uint32_t corr, uint64_t start, uint64_t end) {
    lp_cuda_activity a = {start, end, corr, 0, (uint8_t)kind};
    assert_int_equal(lp_cuda_records_add_activity(r, &a), 0);
}
static void add_ext(lp_cuda_records *r, uint32_t kind, uint32_t corr, uint64_t id) {
    lp_cuda_ext_corr e = {kind, corr, id};
    assert_int_equal(lp_cuda_records_add_ext(r, &e), 0);
}

static void test_kernels_memcpys_and_memsets_join_through_their_correlation(void **state) {
    (void)state;
    lp_cuda_records r = {0};
    add_ext(&r, LP_CUDA_EXT_KIND, 1, lp_cuda_scope_module(1));
    add_ext(&r, LP_CUDA_EXT_KIND, 2, lp_cuda_scope_module(2));
    add_ext(&r, LP_CUDA_EXT_KIND, 3, lp_cuda_scope_module(1));
    add_act(&r, LP_CUDA_KERNEL, 1, 1000, 1100); /* 100 -> 1 */
    add_act(&r, LP_CUDA_MEMCPY, 2, 2000, 2030); /* 30 -> 2 */
    add_act(&r, LP_CUDA_MEMSET, 3, 3000, 3007); /* 7 -> 1 */
    add_act(&r, LP_CUDA_KERNEL, 3, 4000, 4001); /* a second kernel of the same launch call */
    sums s = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cuda_join(&r, sum_sink, &s, &st), LP_OK);
    assert_int_equal(s.ns[1], 108);
    assert_int_equal(s.ns[2], 30);
    assert_int_equal(st.records, 4);
    assert_int_equal(st.kernels, 2);
    assert_int_equal(st.memcpys, 1);
    assert_int_equal(st.memsets, 1);
    assert_int_equal(st.attributed, 4);
    assert_int_equal(st.attributed_ns, 138);
    assert_int_equal(st.unattributed, 0);
    assert_int_equal(st.dropped, 0);
    lp_cuda_records_free(&r);
}

static void test_records_in_any_order_give_the_same_figures(void **state) {
    (void)state;
    /* Kernel records first, correlations later and shuffled, as separate CUPTI buffers deliver. */
    lp_cuda_records r = {0};
    for (uint32_t k = 20; k >= 1; k--)
        add_act(&r, LP_CUDA_KERNEL, k, 100 * k, 100 * k + k);
    for (uint32_t k = 1; k <= 20; k += 2)
        add_ext(&r, LP_CUDA_EXT_KIND, k, lp_cuda_scope_module(3));
    for (uint32_t k = 20; k >= 2; k -= 2)
        add_ext(&r, LP_CUDA_EXT_KIND, k, lp_cuda_scope_module(4));
    sums s = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cuda_join(&r, sum_sink, &s, &st), LP_OK);
    assert_int_equal(s.ns[3], 1 + 3 + 5 + 7 + 9 + 11 + 13 + 15 + 17 + 19);
    assert_int_equal(s.ns[4], 2 + 4 + 6 + 8 + 10 + 12 + 14 + 16 + 18 + 20);
    assert_int_equal(st.attributed, 20);
    lp_cuda_records_free(&r);
}

static void test_records_without_our_external_id_are_counted_not_attributed(void **state) {
    (void)state;
    lp_cuda_records r = {0};
    add_ext(&r, CUSTOM0, 1, lp_cuda_scope_module(1));           /* Kineto's, not ours */
    add_ext(&r, LP_CUDA_EXT_KIND, 3, lp_cuda_scope_module(7));  /* ours */
    add_ext(&r, LP_CUDA_EXT_KIND, 4, lp_cuda_scope_module(99)); /* a scope the sink rejects */
    add_act(&r, LP_CUDA_KERNEL, 1, 0, 40);                      /* only Kineto's id */
    add_act(&r, LP_CUDA_KERNEL, 2, 0, 50);                      /* no external id at all */
    add_act(&r, LP_CUDA_KERNEL, 3, 0, 60);
    add_act(&r, LP_CUDA_KERNEL, 4, 0, 70);
    add_act(&r, LP_CUDA_KERNEL, 5, 90, 80); /* end before start: 0 ns, counted */
    sums s = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cuda_join(&r, sum_sink, &s, &st), LP_OK);
    assert_int_equal(s.ns[1], 0);
    assert_int_equal(s.ns[7], 60);
    assert_int_equal(st.attributed, 1);
    assert_int_equal(st.attributed_ns, 60);
    assert_int_equal(st.unattributed, 4);
    assert_int_equal(st.unattributed_ns, 40 + 50 + 70);
    assert_int_equal(st.records, 5);
    lp_cuda_records_free(&r);
}

static void test_a_correlation_seen_twice_keeps_the_first_scope(void **state) {
    (void)state;
    lp_cuda_records r = {0};
    add_ext(&r, LP_CUDA_EXT_KIND, 9, lp_cuda_scope_module(2));
    add_ext(&r, LP_CUDA_EXT_KIND, 9, lp_cuda_scope_module(5));
    add_act(&r, LP_CUDA_KERNEL, 9, 0, 10);
    sums s = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cuda_join(&r, sum_sink, &s, &st), LP_OK);
    assert_int_equal(s.ns[2], 10);
    assert_int_equal(s.ns[5], 0);
    lp_cuda_records_free(&r);
}

static void test_dropped_records_are_reported_and_stats_accumulate_over_runs(void **state) {
    (void)state;
    lp_cuda_records r = {0};
    lp_cuda_join_stats st = {0};
    sums s = {0};
    for (int run = 0; run < 2; run++) {
        add_ext(&r, LP_CUDA_EXT_KIND, 1, lp_cuda_scope_module(0));
        add_act(&r, LP_CUDA_KERNEL, 1, 0, 25);
        r.dropped += 3; /* what CUPTI's dropped-records count adds per completed buffer */
        assert_int_equal(lp_cuda_join(&r, sum_sink, &s, &st), LP_OK);
        lp_cuda_records_clear(&r);
        assert_int_equal(r.n_acts, 0);
        assert_int_equal(r.dropped, 0);
    }
    assert_int_equal(st.dropped, 6);
    assert_int_equal(st.kernels, 2);
    assert_int_equal(s.ns[0], 50);
    lp_cuda_records_free(&r);
}

static void test_many_records_grow_the_buffers(void **state) {
    (void)state;
    lp_cuda_records r = {0};
    for (uint32_t k = 0; k < 5000; k++) {
        add_ext(&r, LP_CUDA_EXT_KIND, k, lp_cuda_scope_module((int32_t)(k % 8)));
        add_act(&r, LP_CUDA_KERNEL, k, 0, 2);
    }
    sums s = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cuda_join(&r, sum_sink, &s, &st), LP_OK);
    assert_int_equal(st.attributed_ns, 10000);
    assert_int_equal(s.ns[0], 625 * 2);
    assert_int_equal(r.dropped, 0);
    lp_cuda_records_free(&r);
}

/* ---- through the collector ---------------------------------------------------------------------
 */

static void test_self_is_direct_launches_and_total_includes_children(void **state) {
    lp_collector *c = start(state, 0, NULL);
    fake_cupti *f = CUPTI(state);
    enter(c, ROOT);
    launch(f, LP_CUDA_KERNEL, 0, 10);
    enter(c, A);
    launch(f, LP_CUDA_KERNEL, 20, 120);
    enter(c, AX);
    launch(f, LP_CUDA_KERNEL, 200, 1200);
    leave(c);
    launch(f, LP_CUDA_KERNEL, 2000, 12000);
    leave(c);
    enter(c, B);
    launch(f, LP_CUDA_MEMCPY, 20000, 20005);
    leave(c);
    leave(c);
    launch(f, LP_CUDA_KERNEL, 30000, 30007); /* after the forward: no module */
    lp_collector_count_iteration(c);
    finish(state);

    ASSERT_CUDA(FIG(state, ROOT), 10, 10 + 10100 + 1000 + 5);
    ASSERT_CUDA(FIG(state, A), 100 + 10000, 11100);
    ASSERT_CUDA(FIG(state, AX), 1000, 1000);
    ASSERT_CUDA(FIG(state, B), 5, 5);
    ASSERT_CUDA(FIG(state, C), 0, 0);
    assert_int_equal(STATS(state)->unattributed, 1);
    assert_int_equal(STATS(state)->unattributed_ns, 7);
    assert_int_equal(f->pushes, 4);
    assert_int_equal(f->pops, 4);
    assert_int_equal(f->mismatched, 0);
    assert_int_equal(f->sp, 0);
    assert_true(TREE(state)->has_cuda_time);
}

/* An AOTInductor package (docs/pt2.md) reaches the collector as shim/aoti.cpp delivers it: the
 * forward is one call of the root; each compiled kernel enters, as method frames (time, no call),
 * the chain of modules from below the root down to where the map places it, and leaves them when
 * it ends. A Triton kernel's launch (driver API) inside that frame must land where the CPU
 * kernel's time does: a kernel of a.x in a.x, a kernel that fused a.x and b in their lowest
 * common ancestor (the root: an empty chain), one that fused a and a.x in a. Work the wrapper
 * launches between kernels is the root's; a launch after the forward is no module's. */
static void package_kernel(lp_collector *c, fake_cupti *f, const int32_t *chain, int n,
                           uint64_t start, uint64_t end) {
    for (int i = 0; i < n; i++)
        lp_ev_method_enter(c, chain[i], 0);
    launch(f, LP_CUDA_KERNEL, start, end);
    for (int i = 0; i < n; i++)
        lp_ev_call_exit(c, 0);
}

static void test_package_kernels_land_where_their_cpu_time_does(void **state) {
    static const int32_t in_ax[] = {A, AX}, in_a[] = {A}, in_b[] = {B};
    lp_collector *c = start(state, 0, NULL);
    fake_cupti *f = CUPTI(state);
    enter(c, ROOT);
    package_kernel(c, f, in_ax, 2, 0, 100);    /* triton_poi_fused_convolution_0: a.x */
    package_kernel(c, f, NULL, 0, 100, 130);   /* fused a.x and b: their LCA, the root */
    launch(f, LP_CUDA_MEMSET, 130, 132);       /* the wrapper's, between kernels */
    package_kernel(c, f, in_a, 1, 200, 250);   /* fused a and a.x: a */
    package_kernel(c, f, in_b, 1, 300, 310);   /* a kernel of b */
    package_kernel(c, f, in_ax, 2, 400, 1400); /* a.x again */
    leave(c);
    launch(f, LP_CUDA_KERNEL, 2000, 2009); /* after the forward: untagged */
    lp_collector_count_iteration(c);
    finish(state);

    ASSERT_CUDA(FIG(state, AX), 100 + 1000, 1100);
    ASSERT_CUDA(FIG(state, A), 50, 50 + 1100);
    ASSERT_CUDA(FIG(state, B), 10, 10);
    ASSERT_CUDA(FIG(state, ROOT), 30 + 2, 32 + 1150 + 10);
    ASSERT_CUDA(FIG(state, C), 0, 0);
    assert_int_equal(STATS(state)->attributed, 6);
    assert_int_equal(STATS(state)->unattributed, 1);
    assert_int_equal(STATS(state)->unattributed_ns, 9);
    assert_int_equal(f->mismatched, 0);
    assert_int_equal(f->sp, 0);
}

static void test_kernels_in_an_op_count_for_the_op_and_its_module(void **state) {
    static const char *const linear = "aten::linear", *const addmm = "aten::addmm";
    lp_collector *c = start(state, 1, NULL);
    fake_cupti *f = CUPTI(state);
    enter(c, ROOT);
    enter(c, B);
    lp_ev_op_start(c, linear, 0, 0);
    assert_string_equal(f->last_op_name, linear);
    assert_int_equal(f->last_module, -1);
    lp_ev_op_start(c, addmm, 0, 0);
    launch(f, LP_CUDA_KERNEL, 0, 50);
    lp_ev_op_end(c, 0);
    launch(f, LP_CUDA_KERNEL, 100, 103); /* in linear, outside addmm */
    lp_ev_op_end(c, 0);
    launch(f, LP_CUDA_KERNEL, 200, 202); /* in b, outside its ops */
    leave(c);
    leave(c);
    lp_collector_count_iteration(c);
    finish(state);

    const lp_tree *t = TREE(state);
    int32_t lin = t->nodes[B].first_op;
    assert_true(lin >= 0);
    assert_string_equal(t->op_names[t->ops[lin].op], linear);
    int32_t mm = t->ops[lin].first_child;
    assert_true(mm >= 0);
    assert_string_equal(t->op_names[t->ops[mm].op], addmm);
    ASSERT_CUDA(&t->ops[mm].fig, 50, 50);
    ASSERT_CUDA(&t->ops[lin].fig, 3, 53);
    ASSERT_CUDA(FIG(state, B), 55, 55); /* its ops' kernels are launched in it */
    ASSERT_CUDA(FIG(state, ROOT), 0, 55);
    assert_int_equal(f->pushes, 4);
    assert_int_equal(f->mismatched, 0);
}

static void test_iterations_and_runs_accumulate(void **state) {
    lp_collector *c = start(state, 0, NULL);
    fake_cupti *f = CUPTI(state);
    for (int run = 0; run < 2; run++) {
        for (int it = 0; it < 3; it++) {
            enter(c, ROOT);
            enter(c, A);
            launch(f, LP_CUDA_KERNEL, 0, 40);
            leave(c);
            launch(f, LP_CUDA_KERNEL, 0, 2);
            leave(c);
            lp_collector_count_iteration(c);
        }
        finish(state);
        uint64_t k = (uint64_t)run + 1;
        ASSERT_CUDA(FIG(state, A), 3 * 40 * k, 3 * 40 * k);
        ASSERT_CUDA(FIG(state, ROOT), 3 * 2 * k, 3 * 42 * k); /* recomputed, not doubled */
    }
    /* The columns show one forward: 6 iterations. */
    const lp_column *total = lp_column_find("cuda_total");
    double v;
    assert_non_null(total);
    assert_int_equal(lp_column_value(total, TREE(state), FIG(state, ROOT), LP_COLGRP_ALL, &v), 1);
    assert_true(v == 42.0);
}

static void test_unselected_modules_push_nothing_and_have_no_total(void **state) {
    uint8_t selected[N_MODULES] = {0};
    selected[A] = 1;
    lp_collector *c = start(state, 0, selected);
    fake_cupti *f = CUPTI(state);
    enter(c, ROOT);
    launch(f, LP_CUDA_KERNEL, 0, 9); /* root is not measured: nobody's */
    enter(c, A);
    enter(c, AX);
    launch(f, LP_CUDA_KERNEL, 0, 30);
    leave(c);
    leave(c);
    enter(c, B);
    launch(f, LP_CUDA_KERNEL, 0, 4);
    leave(c);
    leave(c);
    lp_collector_count_iteration(c);
    finish(state);
    ASSERT_CUDA(FIG(state, AX), 30, 30);
    ASSERT_CUDA(FIG(state, A), 0, 30);
    ASSERT_CUDA(FIG(state, ROOT), 0, 0);
    ASSERT_CUDA(FIG(state, B), 0, 0);
    assert_int_equal(f->pushes, 2);
    assert_int_equal(STATS(state)->unattributed, 2);
    assert_int_equal(STATS(state)->unattributed_ns, 13);
}

static void test_a_forward_that_throws_closes_its_scopes(void **state) {
    lp_collector *c = start(state, 0, NULL);
    fake_cupti *f = CUPTI(state);
    enter(c, ROOT);
    enter(c, A);
    assert_int_equal(f->sp, 2);
    assert_int_equal(lp_collector_reset_stacks(c), 2);
    assert_int_equal(f->sp, 0);
    assert_int_equal(f->mismatched, 0);
}

static void test_scopes_the_collector_never_gave_are_refused(void **state) {
    lp_collector *c = start(state, 1, NULL);
    enter(c, ROOT);
    leave(c);
    assert_int_equal(lp_collector_add_cuda(c, lp_cuda_scope_module(N_MODULES), 5), -1);
    assert_int_equal(lp_collector_add_cuda(c, lp_cuda_scope_op(0, 0), 5), -1); /* no op rows */
    assert_int_equal(lp_collector_add_cuda(c, lp_cuda_scope_op(9, 0), 5), -1); /* no thread 9 */
    assert_int_equal(lp_collector_add_cuda(c, 0, 5), -1);
    assert_int_equal(lp_collector_add_cuda(c, lp_cuda_scope_module(A), 5), 0);
}

/* ---- columns -----------------------------------------------------------------------------------
 */

static int has_column(const lp_column *const *cols, size_t n, const char *id) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(cols[i]->id, id) == 0) return 1;
    return 0;
}

static void test_cuda_columns_appear_with_cuda_time_and_cuda_memory(void **state) {
    lp_tree *t = TREE(state);
    const lp_column *cols[LP_MAX_COLUMNS];
    size_t n;
    assert_int_equal(lp_columns_select(t, NULL, 0, cols, &n), LP_OK);
    assert_false(has_column(cols, n, "self_cuda"));
    assert_false(has_column(cols, n, "cuda_mem"));

    /* What a CUDA session asks of the collector: CUDA time, and CUDA memory beside the CPU's. */
    fixture *f = *state;
    lp_collector_config cfg = {0};
    cfg.cuda_time = 1;
    cfg.memory = 1;
    cfg.memory_devices = (1u << LP_DEV_CUDA) | (1u << LP_DEV_CPU);
    assert_int_equal(lp_collector_create(&f->c, t, &cfg), LP_OK);
    assert_int_equal(lp_columns_select(t, NULL, 0, cols, &n), LP_OK);
    const char *want[] = {"self_cuda", "cuda_total", "self_cuda_mem", "cuda_mem", "peak_cuda_mem"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        assert_true(has_column(cols, n, want[i]));

    /* Rows that are not calls and hold CPU time only (the Total and "(self)" rows) stay blank; a
     * container, never called, shows the CUDA time its items launched; a call shows its own,
     * 0 included. */
    lp_figures fig;
    memset(&fig, 0, sizeof fig);
    fig.self_ns = fig.total_ns = 5;
    double v;
    assert_int_equal(lp_column_value(lp_column_find("self_cuda"), t, &fig, LP_COLGRP_ALL, &v), 0);
    assert_int_equal(lp_column_value(lp_column_find("cuda_total"), t, &fig, LP_COLGRP_ALL, &v), 0);
    fig.cuda_total_ns = 5;
    assert_int_equal(lp_column_value(lp_column_find("cuda_total"), t, &fig, LP_COLGRP_ALL, &v), 1);
    memset(&fig, 0, sizeof fig);
    fig.calls = 1;
    assert_int_equal(lp_column_value(lp_column_find("self_cuda"), t, &fig, LP_COLGRP_ALL, &v), 1);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_scope_ids_round_trip_and_never_collide),
        TEST(test_kernels_memcpys_and_memsets_join_through_their_correlation),
        TEST(test_records_in_any_order_give_the_same_figures),
        TEST(test_records_without_our_external_id_are_counted_not_attributed),
        TEST(test_a_correlation_seen_twice_keeps_the_first_scope),
        TEST(test_dropped_records_are_reported_and_stats_accumulate_over_runs),
        TEST(test_many_records_grow_the_buffers),
        TEST(test_self_is_direct_launches_and_total_includes_children),
        TEST(test_package_kernels_land_where_their_cpu_time_does),
        TEST(test_kernels_in_an_op_count_for_the_op_and_its_module),
        TEST(test_iterations_and_runs_accumulate),
        TEST(test_unselected_modules_push_nothing_and_have_no_total),
        TEST(test_a_forward_that_throws_closes_its_scopes),
        TEST(test_scopes_the_collector_never_gave_are_refused),
        TEST(test_cuda_columns_appear_with_cuda_time_and_cuda_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
