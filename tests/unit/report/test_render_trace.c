/* test_render_trace.c: the collector's timeline and the Chrome trace written from it, from
 * synthetic events with hand-picked timestamps: the exact trace (golden), spans nesting per thread,
 * module spans adding up to the tree's totals, recording only while tracing is on, and the cap. */
#define _POSIX_C_SOURCE 200809L
#include "export_fixtures.h"

#include <pthread.h>

#include "collect/collector.h"
#include "layerprof.h"

enum { ROOT, A, AB, N_MODULES };

static void small_tree(lp_tree *t) {
    lp_tree_init(t);
    assert_int_equal(lp_tree_add(t, "", "Net", -1), ROOT);
    assert_int_equal(lp_tree_add(t, "a", "Block", ROOT), A);
    assert_int_equal(lp_tree_add(t, "a.b", "Linear", A), AB);
}

static lp_collector *tracing_collector(lp_tree *t, int trace, size_t max_spans) {
    lp_collector_config cfg = {.memory = 1,
                               .memory_devices = 1u << LP_DEV_CPU,
                               .ops = 1,
                               .trace = trace,
                               .trace_max_spans = max_spans};
    lp_collector *c = NULL;
    assert_int_equal(lp_collector_create(&c, t, &cfg), LP_OK);
    return c;
}

/* One forward starting at `t0` (ns): Net > { aten::relu, a > { a.b > aten::addmm } }, with a block
 * allocated in a.b and freed at the end of a. 1000 ns long. */
static void forward(lp_collector *c, uint64_t t0) {
    static int block;
    lp_ev_call_enter(c, ROOT, t0);
    lp_ev_op_start(c, "aten::relu", 0, t0 + 50);
    lp_ev_op_end(c, t0 + 150);
    lp_ev_call_enter(c, A, t0 + 200);
    lp_ev_call_enter(c, AB, t0 + 300);
    lp_ev_op_start(c, "aten::addmm", 0, t0 + 350);
    lp_ev_memory(c, &block, 4096, LP_DEV_CPU, t0 + 400);
    lp_ev_op_end(c, t0 + 650);
    lp_ev_call_exit(c, t0 + 700);
    lp_ev_memory(c, &block, -4096, LP_DEV_CPU, t0 + 750);
    lp_ev_call_exit(c, t0 + 800);
    lp_ev_call_exit(c, t0 + 1000);
}

static void trace_of_synthetic_events_matches_golden(void **state) {
    (void)state;
    lp_tree t;
    small_tree(&t);
    lp_collector *c = tracing_collector(&t, 1, 0);
    lp_collector_set_tracing(c, 1);
    forward(c, 1000000);
    lp_collector_count_iteration(c);
    lp_collector_set_tracing(c, 0); /* the second forward is profiled but not traced */
    forward(c, 2000000);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);

    lp_timeline *tl = lp_collector_timeline(c);
    tl->iterations = 1;
    tl->iterations_of = 2;
    assert_int_equal(tl->n_spans, 5); /* 3 modules, 2 ops, once */
    assert_int_equal(tl->n_mem, 2);
    assert_int_equal(t.nodes[ROOT].fig.calls, 2); /* the tree has both forwards */
    json_t *run = fx_run();
    FILE *f = fx_open();
    assert_int_equal(lp_render_trace(&t, tl, run, f), LP_OK);
    char *text = fx_close(f);
    fx_golden("export_trace.json", text);

    /* It is JSON with what the Trace Event Format requires. */
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    if (!doc) fail_msg("trace does not parse: %s (line %d)", err.text, err.line);
    json_t *events = json_object_get(doc, "traceEvents");
    size_t i, complete = 0, counters = 0;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        assert_non_null(ph);
        assert_non_null(json_string_value(json_object_get(ev, "name")));
        assert_true(json_is_integer(json_object_get(ev, "pid")));
        if (strcmp(ph, "X") == 0) {
            complete++;
            assert_true(json_is_number(json_object_get(ev, "ts")));
            assert_true(json_is_number(json_object_get(ev, "dur")));
            assert_true(json_is_integer(json_object_get(ev, "tid")));
        } else if (strcmp(ph, "C") == 0) {
            counters++;
            assert_true(json_is_integer(json_object_get(json_object_get(ev, "args"), "allocated")));
        }
    }
    assert_int_equal(complete, 5);
    assert_int_equal(counters, 2);
    json_decref(doc);
    free(text);
    json_decref(run);
    lp_collector_free(c);
    lp_tree_free(&t);
}

/* Threads ------------------------------------------------------------------------------------ */

typedef struct worker {
    lp_collector *c;
    uint64_t t0;
    int rounds;
    int module; /* the module this thread's calls run on */
} worker;

/* Like a forked branch: `rounds` calls of one module, each with a nested op pair. */
static void *branch(void *arg) {
    worker *w = arg;
    uint64_t t = w->t0;
    for (int i = 0; i < w->rounds; i++) {
        lp_ev_call_enter(w->c, w->module, t);
        lp_ev_op_start(w->c, "aten::linear", 0, t + 10);
        lp_ev_op_start(w->c, "aten::addmm", 0, t + 20);
        lp_ev_op_end(w->c, t + 80 + (uint64_t)i);
        lp_ev_op_end(w->c, t + 90 + (uint64_t)i);
        lp_ev_call_exit(w->c, t + 100 + (uint64_t)i);
        t += 200;
    }
    return NULL;
}

static void spans_nest_per_thread_and_match_the_tree_totals(void **state) {
    (void)state;
    lp_tree t;
    small_tree(&t);
    lp_collector *c = tracing_collector(&t, 1, 0);
    lp_collector_set_tracing(c, 1);
    for (int it = 0; it < 3; it++) {
        uint64_t base = 10000000ull * (uint64_t)(it + 1);
        forward(c, base); /* this thread */
        worker w[2] = {{c, base + 5, 7, AB}, {c, base + 7, 5, A}};
        pthread_t th[2];
        for (int k = 0; k < 2; k++)
            assert_int_equal(pthread_create(&th[k], NULL, branch, &w[k]), 0);
        for (int k = 0; k < 2; k++)
            pthread_join(th[k], NULL);
        lp_collector_count_iteration(c);
    }
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const lp_timeline *tl = lp_collector_timeline(c);
    /* The two workers of a forward run at once, so each forward needs 1 + 2 states; a joined
     * thread's id may be recycled by the next forward's worker, which then reuses its state. */
    assert_in_range(tl->n_threads, 1 + 2, 1 + 2 * 3);
    assert_int_equal(tl->lost_spans, 0);

    /* Per thread, in the timeline's order: every span lies within the innermost open one. */
    const lp_span *open[64];
    int sp = 0, tid = -1;
    for (size_t i = 0; i < tl->n_spans; i++) {
        const lp_span *s = &tl->spans[i];
        if (s->tid != tid) {
            tid = s->tid;
            sp = 0;
        }
        while (sp && open[sp - 1]->t1 <= s->t0 && !(open[sp - 1]->t1 == s->t0 && s->t1 == s->t0))
            sp--;
        if (sp) {
            const lp_span *p = open[sp - 1];
            if (!(p->t0 <= s->t0 && s->t1 <= p->t1))
                fail_msg("span %zu [%llu, %llu] on thread %d crosses its parent [%llu, %llu]", i,
                         (unsigned long long)s->t0, (unsigned long long)s->t1, tid,
                         (unsigned long long)p->t0, (unsigned long long)p->t1);
        }
        assert_true(sp < 64);
        open[sp++] = s;
    }

    /* Every module call of every thread is a span; their durations are the tree's totals. */
    uint64_t sum[N_MODULES] = {0}, calls[N_MODULES] = {0};
    for (size_t i = 0; i < tl->n_spans; i++)
        if (tl->spans[i].kind == LP_SPAN_MODULE) {
            sum[tl->spans[i].id] += tl->spans[i].t1 - tl->spans[i].t0;
            calls[tl->spans[i].id]++;
        }
    for (int m = 0; m < N_MODULES; m++) {
        assert_int_equal(sum[m], t.nodes[m].fig.total_ns);
        assert_int_equal(calls[m], t.nodes[m].fig.calls);
    }
    lp_collector_free(c);
    lp_tree_free(&t);
}

static void without_trace_nothing_is_recorded(void **state) {
    (void)state;
    lp_tree t;
    small_tree(&t);
    lp_collector *c = tracing_collector(&t, 0, 0);
    lp_collector_set_tracing(c, 1); /* ignored: the collector was not made for a timeline */
    forward(c, 1000);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const lp_timeline *tl = lp_collector_timeline(c);
    assert_int_equal(tl->recorded, 0);
    assert_int_equal(tl->n_spans, 0);
    assert_int_equal(tl->n_mem, 0);
    assert_int_equal(t.nodes[ROOT].fig.calls, 1);
    assert_int_equal(lp_render_trace(&t, tl, NULL, stdout), LP_ERR_STATE);
    assert_non_null(strstr(lp_error_last(), "--trace"));
    lp_collector_free(c);
    lp_tree_free(&t);
}

static void a_full_buffer_stops_recording_and_counts_what_it_lost(void **state) {
    (void)state;
    lp_tree t;
    small_tree(&t);
    lp_collector *c = tracing_collector(&t, 1, 3);
    lp_collector_set_tracing(c, 1);
    forward(c, 1000);
    forward(c, 3000);
    lp_collector_count_iteration(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const lp_timeline *tl = lp_collector_timeline(c);
    assert_int_equal(tl->n_spans, 3);
    assert_int_equal(tl->lost_spans, 10 - 3);
    assert_int_equal(tl->n_mem, 3);
    assert_int_equal(tl->lost_mem, 1);
    /* The figures are complete all the same. */
    assert_int_equal(t.nodes[AB].fig.calls, 2);
    FILE *f = fx_open();
    assert_int_equal(lp_render_trace(&t, tl, NULL, f), LP_OK);
    char *text = fx_close(f);
    assert_non_null(strstr(text, "\"lost_spans\":7"));
    free(text);
    lp_collector_free(c);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(trace_of_synthetic_events_matches_golden),
        cmocka_unit_test(spans_nest_per_thread_and_match_the_tree_totals),
        cmocka_unit_test(without_trace_nothing_is_recorded),
        cmocka_unit_test(a_full_buffer_stops_recording_and_counts_what_it_lost),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
