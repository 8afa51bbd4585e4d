/* test_cuda_prof.c: choosing how CUDA time is measured (cuda_prof.h), and the CUDA-events
 * fallback end to end: a fake timer behind the collector's scope hooks hands over raw spans, and
 * the self times, totals and notes come out exact. No GPU. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/collector.h"
#include "collect/cuda_prof.h"
#include "layerprof.h"
#include "model/tree.h"

#include "tree_fixtures.h"

/* The model:
 *   ""      Net     0
 *   a       Block   1 */
enum { ROOT, A, N_MODULES };

static const tf_module MODULES[] = {
    {"", "Net", -1},
    {"a", "Block", ROOT},
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

#define FIG(state, node) (&((fixture *)*(state))->tree.nodes[(node)].fig)
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

/* ---- the CUDA-events fallback through lp_cuda_prof ---------------------------------------------
 */

/* A timer whose calls each take 7 ns of their own: a call's span is 7 plus its children's. */
typedef struct fake_events {
    int begun, ended;
    uint64_t open[16];         /* scope per open call */
    int32_t open_span[16];     /* its span's index */
    int64_t open_children[16]; /* the spans of its closed children */
    int sp;
    struct {
        uint64_t scope;
        int32_t parent;
        int64_t ns;
    } done[64]; /* in the order the calls started */
    int n_done;
    uint64_t lost;
} fake_events;

static int ev_begin(void *ctx) {
    ((fake_events *)ctx)->begun++;
    return LP_OK;
}
static void ev_push(void *ctx, uint64_t scope) {
    fake_events *e = ctx;
    int32_t i = e->n_done++;
    e->done[i].scope = scope;
    e->done[i].parent = e->sp ? e->open_span[e->sp - 1] : -1;
    e->done[i].ns = -1;
    e->open[e->sp] = scope;
    e->open_span[e->sp] = i;
    e->open_children[e->sp++] = 0;
}
static void ev_pop(void *ctx, uint64_t scope) {
    fake_events *e = ctx;
    assert_int_equal(e->open[--e->sp], scope);
    int64_t ns = 7 + e->open_children[e->sp];
    e->done[e->open_span[e->sp]].ns = ns;
    if (e->sp) e->open_children[e->sp - 1] += ns;
}
/* Hands over the raw spans: the self times are the core's to work out. */
static int ev_collect(void *ctx, lp_cuda_span_sink span, void *span_ctx, uint64_t *lost) {
    fake_events *e = ctx;
    for (int i = 0; i < e->n_done; i++)
        span(span_ctx, e->done[i].scope, e->done[i].parent, e->done[i].ns);
    e->n_done = 0;
    *lost = e->lost;
    return LP_OK;
}
static void ev_end(void *ctx) {
    ((fake_events *)ctx)->ended++;
}

static void test_events_fallback_times_each_call_and_says_so(void **state) {
    fixture *f = *state;
    fake_events fe = {0};
    fe.lost = 2;
    lp_cuda_events_backend be = {&fe, ev_begin, ev_push, ev_pop, ev_collect, ev_end};
    lp_cuda_prof_config pc = {1, LP_CUDA_TIMING_EVENTS, 0, 0, &f->tree, &be};
    lp_cuda_prof *p = NULL;
    assert_int_equal(lp_cuda_prof_open(&p, &pc), LP_OK);
    assert_non_null(p);
    assert_string_equal(lp_cuda_prof_method(p), "events");
    assert_true(lp_cuda_prof_timing(p));

    lp_collector_config cfg = {0};
    cfg.cuda_time = lp_cuda_prof_timing(p);
    cfg.scopes = lp_cuda_prof_hooks(p);
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    assert_int_equal(lp_cuda_prof_begin(p), LP_OK);
    for (int it = 0; it < 2; it++) {
        enter(f->c, ROOT);
        enter(f->c, A);
        leave(f->c);
        enter(f->c, A);
        leave(f->c);
        leave(f->c);
        lp_collector_count_iteration(f->c);
        assert_int_equal(lp_cuda_prof_iteration_done(p, f->c), LP_OK);
    }
    assert_int_equal(lp_cuda_prof_end(p, f->c), LP_OK);
    assert_int_equal(lp_collector_finish(f->c), LP_OK);
    ASSERT_CUDA(FIG(state, A), 2 * 2 * 7, 2 * 2 * 7);
    ASSERT_CUDA(FIG(state, ROOT), 2 * 7, 2 * 3 * 7);

    char notes[4][256];
    size_t n = lp_cuda_prof_notes(p, &notes[0][0], sizeof notes[0], 4);
    assert_int_equal(n, 3);
    assert_non_null(strstr(notes[0], "CUDA events"));
    /* Said in every events report: the spans' idle gaps inflate launch-bound models. */
    assert_non_null(strstr(notes[1], "idle gaps between launches"));
    assert_non_null(strstr(notes[2], "4 calls could not be timed"));
    lp_cuda_prof_close(p);
    assert_int_equal(fe.begun, 1);
    assert_int_equal(fe.ended, 1);
}

static void test_nothing_to_do_on_the_cpu_and_forced_methods_say_why(void **state) {
    fixture *f = *state;
    lp_cuda_prof *p = (lp_cuda_prof *)1;
    lp_cuda_prof_config pc = {0, LP_CUDA_TIMING_AUTO, 0, 0, &f->tree, NULL};
    assert_int_equal(lp_cuda_prof_open(&p, &pc), LP_OK);
    assert_null(p);
    assert_false(lp_cuda_prof_timing(NULL));
    assert_null(lp_cuda_prof_hooks(NULL).enter);
    assert_int_equal(lp_cuda_prof_begin(NULL), LP_OK);
    assert_int_equal(lp_cuda_prof_end(NULL, NULL), LP_OK);
    assert_string_equal(lp_cuda_prof_method(NULL), "off");

    pc.cuda_device = 1;
    pc.timing = LP_CUDA_TIMING_OFF;
    assert_int_equal(lp_cuda_prof_open(&p, &pc), LP_OK);
    assert_null(p);

    pc.timing = LP_CUDA_TIMING_EVENTS; /* a libtorch without CUDA has no events */
    assert_int_equal(lp_cuda_prof_open(&p, &pc), LP_ERR_UNSUPPORTED);
    assert_non_null(strstr(lp_error_last(), "CUDA events timing is not available"));

    pc.timing = 17;
    assert_int_equal(lp_cuda_prof_open(&p, &pc), LP_ERR_INVALID);
}

#define TEST(name) cmocka_unit_test_setup_teardown(name, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_events_fallback_times_each_call_and_says_so),
        TEST(test_nothing_to_do_on_the_cpu_and_forced_methods_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
