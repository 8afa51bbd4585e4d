/* test_cuda_events.c: the CUDA-events timer's spans turned into self times (cuda_events.h), with
 * synthetic spans and exact numbers: nesting, spans that could not be read, calls under an
 * unreadable parent, the lost counts, and a backend driven through lp_cuda_events_collect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "base/error.h"
#include "collect/cuda_events.h"
#include "layerprof.h"

/* What the sink received: self ns per scope (scopes are small numbers here), and refusals. */
typedef struct received {
    uint64_t self[16];
    int calls[16];
    uint64_t refuse; /* this scope is refused, as an unknown scope would be */
} received;

static int sink(void *ctx, uint64_t scope, uint64_t ns) {
    received *r = ctx;
    assert_true(scope < 16);
    if (scope == r->refuse) return -1;
    r->self[scope] += ns;
    r->calls[scope]++;
    return 0;
}

static void add(lp_cuda_spans *s, uint64_t scope, int32_t parent, int64_t ns) {
    lp_cuda_spans_add(s, scope, parent, ns);
}

/* root(1) 100 ns
 *   a(2) 30 ns
 *     a1(3) 10 ns
 *   b(4) 20 ns       */
static void self_is_the_span_minus_the_spans_directly_nested_in_it(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, 100);
    add(&s, 2, 0, 30);
    add(&s, 3, 1, 10);
    add(&s, 4, 0, 20);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0);
    assert_int_equal(r.self[1], 50);
    assert_int_equal(r.self[2], 20);
    assert_int_equal(r.self[3], 10);
    assert_int_equal(r.self[4], 20);
    /* The selves add up to the outermost span. */
    assert_int_equal(r.self[1] + r.self[2] + r.self[3] + r.self[4], 100);
    lp_cuda_spans_free(&s);
}

/* The same call twice under one parent: each delivery is its own call. */
static void repeated_calls_each_count(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, 40);
    add(&s, 2, 0, 7);
    add(&s, 2, 0, 9);
    add(&s, 5, -1, 3); /* a second top-level call */
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0);
    assert_int_equal(r.self[1], 24);
    assert_int_equal(r.self[2], 16);
    assert_int_equal(r.calls[2], 2);
    assert_int_equal(r.self[5], 3);
    lp_cuda_spans_free(&s);
}

/* a(2) could not be read: it gets no time and counts as lost; its readable child a1(3) is
 * subtracted from root(1), which keeps a's own time, so nothing is counted twice. */
static void a_span_that_could_not_be_read_is_lost_and_looked_through(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, 100);
    add(&s, 2, 0, -1);
    add(&s, 3, 1, 10);
    add(&s, 4, 0, 20);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 1);
    assert_int_equal(r.self[1], 70);
    assert_int_equal(r.calls[2], 0);
    assert_int_equal(r.self[3], 10);
    assert_int_equal(r.self[4], 20);
    lp_cuda_spans_free(&s);
}

/* root(1) and a(2) unreadable: a1(3) has no readable ancestor and keeps its whole span. */
static void calls_under_untimed_parents_keep_their_span(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, -1);
    add(&s, 2, 0, -1);
    add(&s, 3, 1, 10);
    add(&s, 6, 2, 4); /* a1's child: subtracted from a1 */
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 2);
    assert_int_equal(r.self[3], 6);
    assert_int_equal(r.self[6], 4);
    assert_int_equal(r.calls[1] + r.calls[2], 0);
    lp_cuda_spans_free(&s);
}

/* Spans are stream time between two events: children can add up to more than their parent
 * (rounding, other work). A self time is never negative. */
static void a_self_time_is_never_negative(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, 10);
    add(&s, 2, 0, 8);
    add(&s, 3, 0, 8);
    add(&s, 4, -1, 0);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0);
    assert_int_equal(r.self[1], 0);
    assert_int_equal(r.calls[1], 1);
    assert_int_equal(r.self[2] + r.self[3], 16);
    assert_int_equal(r.calls[4], 1);
    lp_cuda_spans_free(&s);
}

/* A parent index that is not an earlier span (a broken backend) makes the span a top one. */
static void a_parent_that_is_not_an_earlier_span_is_ignored(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, 50);
    add(&s, 2, 1, 20); /* its own index */
    add(&s, 3, 9, 5);  /* beyond the end */
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0);
    assert_int_equal(r.self[1], 50);
    assert_int_equal(r.self[2], 20);
    assert_int_equal(r.self[3], 5);
    lp_cuda_spans_free(&s);
}

/* Refused scopes and unreadable spans are lost; the next forward starts from index 0 again. */
static void lost_counts_refusals_and_each_forward_starts_afresh(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    r.refuse = 7;
    add(&s, 1, -1, 30);
    add(&s, 7, 0, 10); /* refused: still subtracted from its parent, whose own time it is not */
    add(&s, 8, 0, -1);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 2);
    assert_int_equal(r.self[1], 20);

    add(&s, 2, -1, 5);
    add(&s, 3, 0, 2);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0);
    assert_int_equal(r.self[2], 3);
    assert_int_equal(r.self[3], 2);
    assert_int_equal(r.self[1], 20);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0); /* nothing delivered: nothing */
    lp_cuda_spans_free(&s);
}

static void many_spans_grow_the_buffer(void **state) {
    (void)state;
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    add(&s, 1, -1, 100000);
    for (int i = 1; i <= 5000; i++)
        add(&s, 2, 0, 3);
    assert_true(s.cap >= 5001);
    assert_int_equal(lp_cuda_spans_deliver(&s, sink, &r), 0);
    assert_int_equal(r.self[2], 15000);
    assert_int_equal(r.calls[2], 5000);
    assert_int_equal(r.self[1], 85000);
    lp_cuda_spans_free(&s);
    assert_null(s.v);
}

/* ---- lp_cuda_events_collect with a backend -------------------------------------------------- */

typedef struct backend {
    int fail;
    uint64_t unrecorded;
} backend;

static int be_collect(void *ctx, lp_cuda_span_sink span, void *span_ctx, uint64_t *lost) {
    backend *b = ctx;
    span(span_ctx, 1, -1, 12);
    span(span_ctx, 2, 0, 5);
    span(span_ctx, 3, 0, -1);
    *lost = b->unrecorded;
    if (b->fail) return lp_error_set(LP_ERR_RUNTIME, "cannot create a CUDA event: no memory");
    return LP_OK;
}

static int be_begin(void *ctx) {
    backend *b = ctx;
    return b->fail ? lp_error_set(LP_ERR_BUSY, "the timer is already in use") : LP_OK;
}

static void collect_adds_the_backends_lost_calls_to_the_unreadable_ones(void **state) {
    (void)state;
    backend be = {0, 4};
    lp_cuda_events_backend b = {&be, be_begin, NULL, NULL, be_collect, NULL};
    lp_cuda_spans s = {0};
    received r;
    memset(&r, 0, sizeof r);
    uint64_t lost = 0;
    assert_int_equal(lp_cuda_events_begin(&b), LP_OK);
    assert_int_equal(lp_cuda_events_collect(&b, &s, sink, &r, &lost), LP_OK);
    assert_int_equal(lost, 5);
    assert_int_equal(r.self[1], 7);
    assert_int_equal(r.self[2], 5);

    /* A backend that fails after delivering: its spans still count, and the message says which
     * timer failed. */
    be.fail = 1;
    memset(&r, 0, sizeof r);
    assert_int_equal(lp_cuda_events_collect(&b, &s, sink, &r, &lost), LP_ERR_RUNTIME);
    assert_string_equal(lp_error_last(), "CUDA events: cannot create a CUDA event: no memory");
    assert_int_equal(r.self[1], 7);
    assert_int_equal(lost, 5);
    assert_int_equal(lp_cuda_events_begin(&b), LP_ERR_BUSY);
    assert_string_equal(lp_error_last(), "CUDA events: the timer is already in use");
    lp_cuda_spans_free(&s);
}

/* A backend that fails without a message of its own gets a plain one, not a stale one. */
static int be_silent_begin(void *ctx) {
    (void)ctx;
    return LP_ERR_RUNTIME;
}

static void a_backend_failure_without_a_message_is_said_plainly(void **state) {
    (void)state;
    lp_cuda_events_backend b = {NULL, be_silent_begin, NULL, NULL, be_collect, NULL};
    lp_error_set(LP_ERR_STATE, "stale message");
    assert_int_equal(lp_cuda_events_begin(&b), LP_ERR_RUNTIME);
    assert_string_equal(lp_error_last(), "CUDA events: cannot start");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(self_is_the_span_minus_the_spans_directly_nested_in_it),
        cmocka_unit_test(repeated_calls_each_count),
        cmocka_unit_test(a_span_that_could_not_be_read_is_lost_and_looked_through),
        cmocka_unit_test(calls_under_untimed_parents_keep_their_span),
        cmocka_unit_test(a_self_time_is_never_negative),
        cmocka_unit_test(a_parent_that_is_not_an_earlier_span_is_ignored),
        cmocka_unit_test(lost_counts_refusals_and_each_forward_starts_afresh),
        cmocka_unit_test(many_spans_grow_the_buffer),
        cmocka_unit_test(collect_adds_the_backends_lost_calls_to_the_unreadable_ones),
        cmocka_unit_test(a_backend_failure_without_a_message_is_said_plainly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
