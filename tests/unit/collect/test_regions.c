/* test_regions.c: regions and contexts in the collector, and the report tree composed from them,
 * fed synthetic events on a fake clock so every figure is exact. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/collector.h"
#include "collect/compose.h"
#include "layerprof.h"
#include "model/tree.h"

#include "tree_fixtures.h"

/* The model: "" Net 0, "body" Linear 1. */
enum { ROOT, BODY, N_MODULES };

static uint64_t fake_now;
static _Atomic unsigned clock_reads;
static uint64_t fake_clock(void) {
    clock_reads++;
    return fake_now;
}

static const tf_module MODULES[] = {
    {"", "Net", -1},
    {"body", "Linear", ROOT},
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
    lp_collector_config cfg = {0};
    cfg.memory = 1;
    cfg.memory_devices = 1u << LP_DEV_CPU;
    cfg.clock = fake_clock;
    if (lp_collector_create(&f->c, &f->tree, &cfg) != LP_OK) return -1;
    fake_now = 0;
    clock_reads = 0;
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

static lp_collector *col(void **state) {
    return ((fixture *)*state)->c;
}

static void begin_at(lp_collector *c, int32_t region, uint64_t t) {
    fake_now = t;
    assert_int_equal(lp_ev_region_begin(c, region, 1), LP_OK);
}

static void end_at(lp_collector *c, const char *name, uint64_t t) {
    fake_now = t;
    assert_int_equal(lp_ev_region_end(c, name), LP_OK);
}

static const lp_figures *figs(lp_collector *c, int32_t id) {
    return lp_region_figures(c, id);
}

static void nested_regions_have_exact_self_and_total_times(void **state) {
    lp_collector *c = col(state);
    int32_t main_ctx = lp_region_intern(c, -1, "main");
    int32_t outer = lp_region_intern(c, main_ctx, "outer");
    int32_t inner = lp_region_intern(c, outer, "inner");
    int32_t other = lp_region_intern(c, outer, "other");
    assert_true(main_ctx >= 0 && outer >= 0 && inner >= 0 && other >= 0);
    assert_int_equal(lp_region_intern(c, outer, "inner"), inner); /* interned once */
    assert_int_equal(lp_region_get(c, inner)->context, main_ctx);
    assert_int_equal(lp_region_get(c, inner)->parent, outer);

    begin_at(c, outer, 0);
    assert_int_equal(lp_collector_open_region(c), outer);
    begin_at(c, inner, 10);
    assert_int_equal(lp_collector_open_region(c), inner);
    end_at(c, "inner", 40);
    begin_at(c, other, 50);
    end_at(c, NULL, 70); /* NULL: whichever is innermost */
    end_at(c, "outer", 100);
    assert_int_equal(lp_collector_open_region(c), -1);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    assert_int_equal(figs(c, outer)->calls, 1);
    assert_int_equal(figs(c, outer)->total_ns, 100);
    assert_int_equal(figs(c, outer)->self_ns, 50); /* 100 - 30 - 20 */
    assert_int_equal(figs(c, inner)->total_ns, 30);
    assert_int_equal(figs(c, inner)->self_ns, 30);
    assert_int_equal(figs(c, other)->total_ns, 20);
    assert_int_equal(figs(c, main_ctx)->calls, 0); /* a context is never a call */
}

static void the_same_name_under_two_parents_is_two_regions(void **state) {
    lp_collector *c = col(state);
    int32_t a = lp_region_intern(c, -1, "train");
    int32_t b = lp_region_intern(c, -1, "eval");
    int32_t ta = lp_region_intern(c, a, "forward");
    int32_t tb = lp_region_intern(c, b, "forward");
    assert_true(ta >= 0 && tb >= 0 && ta != tb);
    /* A name in a reused buffer is looked up by its text, not its address. */
    char buf[16];
    strcpy(buf, "forward");
    assert_int_equal(lp_region_intern(c, a, buf), ta);
    strcpy(buf, "backward");
    int32_t bw = lp_region_intern(c, a, buf);
    assert_true(bw >= 0 && bw != ta);
    assert_string_equal(lp_region_get(c, bw)->name, "backward");
    assert_int_equal((int)lp_region_count(c), 5);
}

/* Per-call statistics of a region called with known durations 10, 20, 30, 40 ns. */
static void region_statistics_on_known_durations_are_exact(void **state) {
    lp_collector *c = col(state);
    int32_t r = lp_region_intern(c, lp_region_intern(c, -1, "main"), "step");
    uint64_t t = 1000;
    for (uint64_t d = 10; d <= 40; d += 10) {
        begin_at(c, r, t);
        end_at(c, "step", t + d);
        t += 100;
    }
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const lp_figures *f = figs(c, r);
    assert_int_equal(f->calls, 4);
    assert_int_equal(f->total_ns, 100);
    assert_int_equal(f->time.n, 4);
    assert_true(f->time.mean == 25.0);
    assert_int_equal(f->time.min, 10);
    assert_int_equal(f->time.max, 40);
    assert_true(fabs(lp_welford_std(&f->time) - sqrt(500.0 / 3.0)) < 1e-12);
}

/* A forward run inside a region: its root call is the region's child, its memory the region's. */
static void a_forward_inside_a_region_is_its_child(void **state) {
    fixture *fx = *state;
    lp_collector *c = fx->c;
    int32_t fw = lp_region_intern(c, lp_region_intern(c, -1, "main"), "forward");
    begin_at(c, fw, 0);
    lp_ev_call_enter(c, ROOT, 100);
    lp_ev_memory(c, (const void *)0x1000, 4096, LP_DEV_CPU, 110);
    lp_ev_call_enter(c, BODY, 200);
    lp_ev_memory(c, (const void *)0x2000, 1024, LP_DEV_CPU, 210);
    lp_ev_memory(c, (const void *)0x2000, -1024, LP_DEV_CPU, 220);
    lp_ev_call_exit(c, 500);
    lp_ev_call_exit(c, 900);
    lp_ev_memory(c, (const void *)0x1000, -4096, LP_DEV_CPU, 950); /* the output, freed */
    end_at(c, "forward", 1000);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    const lp_figures *r = figs(c, fw);
    assert_int_equal(r->total_ns, 1000);
    assert_int_equal(r->self_ns, 200); /* 1000 - the root's 800 */
    assert_int_equal(fx->tree.nodes[ROOT].fig.total_ns, 800);
    assert_int_equal(fx->tree.nodes[ROOT].fig.self_ns, 500);
    assert_int_equal(fx->tree.nodes[BODY].fig.total_ns, 300);
    assert_int_equal(r->mem[LP_DEV_CPU].peak.max, 5120);
    assert_int_equal(r->mem[LP_DEV_CPU].net.max, 0);
    assert_int_equal(fx->tree.nodes[ROOT].fig.mem[LP_DEV_CPU].retained.max, 4096);
}

/* A disabled context's region is a placeholder: balanced, reads no clock, records nothing. */
static void a_placeholder_region_records_nothing_and_reads_no_clock(void **state) {
    lp_collector *c = col(state);
    int32_t r = lp_region_intern(c, lp_region_intern(c, -1, "quiet"), "work");
    unsigned reads = clock_reads;
    assert_int_equal(lp_ev_region_begin(c, r, 0), LP_OK);
    assert_int_equal(lp_collector_region_recording(c), 0);
    assert_int_equal(lp_collector_open_region(c), r);
    assert_int_equal(lp_ev_region_end(c, "work"), LP_OK);
    assert_int_equal(clock_reads, reads);
    assert_int_equal(lp_collector_region_recording(c), 1);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_int_equal(figs(c, r)->calls, 0);
}

static void ending_a_region_never_begun_is_an_error(void **state) {
    lp_collector *c = col(state);
    assert_int_equal(lp_ev_region_end(c, "preprocess"), LP_ERR_STATE);
    assert_string_equal(lp_error_last(),
                        "lp_session_region_end('preprocess'): no region is open on this thread");
    int32_t r = lp_region_intern(c, lp_region_intern(c, -1, "main"), "preprocess");
    begin_at(c, r, 0);
    end_at(c, "preprocess", 5);
    assert_int_equal(lp_ev_region_end(c, "preprocess"), LP_ERR_STATE); /* a double end */
}

static void ending_the_wrong_region_names_both_and_keeps_it_open(void **state) {
    lp_collector *c = col(state);
    int32_t ctx = lp_region_intern(c, -1, "main");
    int32_t a = lp_region_intern(c, ctx, "a");
    int32_t b = lp_region_intern(c, a, "b");
    begin_at(c, a, 0);
    begin_at(c, b, 1);
    assert_int_equal(lp_ev_region_end(c, "a"), LP_ERR_STATE);
    assert_string_equal(
        lp_error_last(),
        "lp_session_region_end('a'): the innermost open region is 'b': end it first");
    assert_int_equal(lp_collector_open_region(c), b);
    end_at(c, "b", 2);
    end_at(c, "a", 3);
}

static void a_region_cannot_end_inside_a_running_forward(void **state) {
    lp_collector *c = col(state);
    int32_t r = lp_region_intern(c, lp_region_intern(c, -1, "main"), "r");
    begin_at(c, r, 0);
    lp_ev_call_enter(c, ROOT, 1);
    assert_int_equal(lp_ev_region_end(c, "r"), LP_ERR_STATE);
    /* A forward that threw: its frames go, the program's region stays. */
    assert_int_equal(lp_collector_reset_stacks(c), 1);
    assert_int_equal(lp_collector_open_region(c), r);
    end_at(c, "r", 10);
}

/* The composed report: session -> contexts -> regions -> the modules of forwards in them. */
static void the_report_tree_puts_forwards_under_their_region(void **state) {
    fixture *fx = *state;
    lp_collector *c = fx->c;
    int32_t ctx = lp_region_intern(c, -1, "main");
    int32_t pre = lp_region_intern(c, ctx, "preprocess");
    int32_t fw = lp_region_intern(c, ctx, "forward");
    int32_t other = lp_region_intern(c, -1, "eval");
    int32_t ev = lp_region_intern(c, other, "score");
    begin_at(c, pre, 0);
    end_at(c, "preprocess", 100);
    begin_at(c, fw, 100);
    lp_ev_call_enter(c, ROOT, 150);
    lp_ev_call_exit(c, 350);
    end_at(c, "forward", 400);
    begin_at(c, ev, 400);
    end_at(c, "score", 450);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    fx->tree.iterations = 1;

    lp_mount mounts[] = {{-1, &fx->tree}, {fw, &fx->tree}};
    lp_tree out;
    lp_tree_init(&out);
    /* Only the mount of `forward` holds calls here: mount -1 shares its tree in this test, so
     * give it none by composing with the forward's alone. */
    assert_int_equal(lp_compose(&out, c, &mounts[1], 1, 1), LP_OK);
    static const struct {
        const char *path, *name;
        int kind;
        uint64_t total;
    } want[] = {
        {"", "Net", LP_NODE_SESSION, 450},
        {"main", "main", LP_NODE_CONTEXT, 400},
        {"main/preprocess", "preprocess", LP_NODE_REGION, 100},
        {"main/forward", "forward", LP_NODE_REGION, 300},
        {"main/forward/", "Net", LP_NODE_MODULE, 200},
        {"main/forward/body", "body", LP_NODE_MODULE, 0},
        {"eval", "eval", LP_NODE_CONTEXT, 50},
        {"eval/score", "score", LP_NODE_REGION, 50},
    };
    assert_int_equal(out.n_nodes, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < out.n_nodes; i++) {
        assert_string_equal(out.nodes[i].path, want[i].path);
        assert_string_equal(out.nodes[i].name, want[i].name);
        assert_int_equal(out.nodes[i].kind, want[i].kind);
        assert_int_equal(out.nodes[i].fig.total_ns, want[i].total);
    }
    assert_int_equal(out.nodes[3].fig.self_ns, 100); /* forward: 300 - the root's 200 */
    /* % Total is of the context: preprocess 100 of main's 400; main's of the session's 450. */
    assert_int_equal(out.nodes[2].fig.share_base_ns, 400);
    assert_int_equal(out.nodes[4].fig.share_base_ns, 400);
    assert_int_equal(out.nodes[7].fig.share_base_ns, 50);
    assert_int_equal(out.nodes[1].fig.share_base_ns, 450);
    assert_int_equal(out.iterations, 1);
    lp_tree_free(&out);
}

/* Forwards outside every region land in context "main", made when no region named it. */
static void forwards_outside_regions_go_to_context_main(void **state) {
    fixture *fx = *state;
    lp_collector *c = fx->c;
    int32_t r = lp_region_intern(c, lp_region_intern(c, -1, "eval"), "score");
    begin_at(c, r, 0);
    end_at(c, "score", 10);
    lp_ev_call_enter(c, ROOT, 20);
    lp_ev_call_exit(c, 50);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    lp_mount mounts[] = {{-1, &fx->tree}};
    lp_tree out;
    lp_tree_init(&out);
    assert_int_equal(lp_compose(&out, c, mounts, 1, 1), LP_OK);
    assert_int_equal(out.n_nodes, 6);
    assert_string_equal(out.nodes[3].path, "main");
    assert_int_equal(out.nodes[3].kind, LP_NODE_CONTEXT);
    assert_int_equal(out.nodes[3].fig.total_ns, 30);
    assert_string_equal(out.nodes[4].path, "main/");
    assert_string_equal(out.nodes[5].path, "main/body");
    assert_int_equal(out.nodes[0].fig.total_ns, 40);
    lp_tree_free(&out);
}

/* Threads creating and using regions at once: each sees the same ids, nothing is lost. */
#define N_WORKERS 4
#define N_ROUNDS 2000
typedef struct worker {
    lp_collector *c;
    int32_t ctx;
    int index;
    int failures;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    char own[16];
    snprintf(own, sizeof own, "own%d", w->index);
    for (int i = 0; i < N_ROUNDS; i++) {
        int32_t shared = lp_region_intern(w->c, w->ctx, "shared");
        int32_t mine = lp_region_intern(w->c, shared, own);
        w->failures += shared < 0 || mine < 0;
        w->failures += lp_ev_region_begin(w->c, shared, 1) != LP_OK;
        w->failures += lp_ev_region_begin(w->c, mine, 1) != LP_OK;
        w->failures += lp_ev_region_end(w->c, own) != LP_OK;
        w->failures += lp_ev_region_end(w->c, "shared") != LP_OK;
    }
    return NULL;
}

static void threads_share_regions_without_losing_a_call(void **state) {
    lp_collector *c = col(state);
    int32_t ctx = lp_region_intern(c, -1, "main");
    pthread_t tid[N_WORKERS];
    worker w[N_WORKERS];
    for (int i = 0; i < N_WORKERS; i++) {
        w[i] = (worker){c, ctx, i, 0};
        assert_int_equal(pthread_create(&tid[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < N_WORKERS; i++) {
        assert_int_equal(pthread_join(tid[i], NULL), 0);
        assert_int_equal(w[i].failures, 0);
    }
    assert_int_equal(lp_collector_finish(c), LP_OK);
    assert_int_equal((int)lp_region_count(c), 2 + N_WORKERS);
    int32_t shared = lp_region_find(c, ctx, "shared");
    assert_true(shared >= 0);
    assert_int_equal(figs(c, shared)->calls, N_WORKERS * N_ROUNDS);
    for (int i = 0; i < N_WORKERS; i++) {
        char own[16];
        snprintf(own, sizeof own, "own%d", i);
        int32_t mine = lp_region_find(c, shared, own);
        assert_true(mine >= 0);
        assert_int_equal(figs(c, mine)->calls, N_ROUNDS);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
        T(nested_regions_have_exact_self_and_total_times),
        T(the_same_name_under_two_parents_is_two_regions),
        T(region_statistics_on_known_durations_are_exact),
        T(a_forward_inside_a_region_is_its_child),
        T(a_placeholder_region_records_nothing_and_reads_no_clock),
        T(ending_a_region_never_begun_is_an_error),
        T(ending_the_wrong_region_names_both_and_keeps_it_open),
        T(a_region_cannot_end_inside_a_running_forward),
        T(the_report_tree_puts_forwards_under_their_region),
        T(forwards_outside_regions_go_to_context_main),
        T(threads_share_regions_without_losing_a_call),
#undef T
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
