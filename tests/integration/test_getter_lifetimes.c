/* test_getter_lifetimes.c: every string a getter hands out (node paths, names and classes, op
 * names and shapes) stays valid until lp_session_close, through more reads, forwards, regions,
 * steps and schedule cycles, although a session with regions rebuilds the tree it reports after
 * each of them. Each test keeps the pointers of one read with copies of their text, records more,
 * reads again, and compares: in the sanitizer build a pointer into freed memory fails at once
 * (heap-use-after-free), elsewhere the text it reads no longer matches. */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

#define MODEL LP_MODELS_DIR "/nested.pt"

/* Pointers handed out by one read, and what they said then. */
typedef struct held {
    const char **ptr;
    char **text;
    size_t n, cap;
} held;

static void hold(held *h, const char *p) {
    if (!p) return;
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 256;
        h->ptr = realloc(h->ptr, h->cap * sizeof *h->ptr);
        h->text = realloc(h->text, h->cap * sizeof *h->text);
        assert_true(h->ptr && h->text);
    }
    h->ptr[h->n] = p;
    h->text[h->n] = strdup(p);
    assert_non_null(h->text[h->n]);
    h->n++;
}

/* Every string of every node and op row the session reports now. */
static void hold_all(held *h, lp_session *s) {
    size_t n;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        assert_int_equal(lp_session_node(s, i, &info), LP_OK);
        hold(h, info.path);
        hold(h, info.name);
        hold(h, info.class_name);
    }
    assert_int_equal(lp_session_op_count(s, &n), LP_OK);
    for (size_t i = 0; i < n; i++) {
        lp_op_info op;
        assert_int_equal(lp_session_op(s, i, &op), LP_OK);
        hold(h, op.name);
        hold(h, op.shapes);
    }
}

/* Each pointer still reads the text it had; then the copies go. */
static void check_and_release(held *h) {
    for (size_t i = 0; i < h->n; i++) {
        if (strcmp(h->ptr[i], h->text[i]) != 0)
            fail_msg("string %zu was '%s', now reads '%s'", i, h->text[i], h->ptr[i]);
        free(h->text[i]);
    }
    free(h->ptr);
    free(h->text);
    memset(h, 0, sizeof *h);
}

static lp_session *open_nested(const lp_schedule *schedule) {
    lp_options opts;
    lp_options_init(&opts);
    opts.model_path = MODEL;
    opts.threads = 1;
    opts.events = 1;
    opts.shapes = 1;
    if (schedule) opts.schedule = *schedule;
    lp_session *s = NULL;
    if (lp_session_open(&s, &opts)) fail_msg("open: %s", lp_error_last());
    return s;
}

static void forward_in(lp_session *s, const char *context, const char *region) {
    assert_int_equal(lp_session_region_begin_in(s, context, region), LP_OK);
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
    assert_int_equal(lp_session_region_end(s, region), LP_OK);
}

/* New regions and contexts, forwards in new regions (new module trees), steps: the report is
 * composed again at every read, and what the first read gave still reads the same. */
static void strings_survive_recomposition_with_new_regions(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    forward_in(s, "main", "forward");
    assert_int_equal(lp_session_step(s), LP_OK);
    held first = {0};
    hold_all(&first, s);
    assert_true(first.n > 20);

    forward_in(s, "main", "forward");
    assert_int_equal(lp_session_region_begin(s, "preprocess"),
                     LP_OK); /* a region before the others */
    assert_int_equal(lp_session_region_end(s, "preprocess"), LP_OK);
    assert_int_equal(lp_session_step(s), LP_OK);
    held second = {0};
    hold_all(&second, s); /* a read in between: one recomposition more */

    forward_in(s, "eval", "cold"); /* a new context, and a new module tree under it */
    forward_in(s, "main", "other");
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK); /* outside every region */
    assert_int_equal(lp_session_step(s), LP_OK);
    size_t n;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    assert_true(n > 4 * 11); /* four module trees by now */
    lp_node_info again;
    size_t idx;
    assert_int_equal(lp_session_find(s, "main/forward/block", &idx), LP_OK);
    assert_int_equal(lp_session_node(s, idx, &again), LP_OK);
    assert_string_equal(again.path, "main/forward/block");

    check_and_release(&first);
    check_and_release(&second);
    lp_session_close(s);
}

/* Without regions the report is the module tree itself; more runs add to it. */
static void strings_survive_more_runs_without_regions(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_run(s), LP_OK);
    held first = {0};
    hold_all(&first, s);
    assert_int_equal(lp_session_run(s), LP_OK);
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
    held second = {0};
    hold_all(&second, s);
    check_and_release(&first);
    check_and_release(&second);
    lp_session_close(s);
}

/* A schedule's new cycle drops every figure, and the next read composes the report afresh. */
static void strings_survive_a_schedules_new_cycles(void **state) {
    (void)state;
    lp_schedule sched = {.wait = 1, .warmup = 1, .active = 1, .repeat = 0};
    lp_session *s = open_nested(&sched);
    for (int i = 0; i < 3; i++) { /* wait, warm-up, active: the first cycle completes */
        forward_in(s, "main", "forward");
        assert_int_equal(lp_session_step(s), LP_OK);
    }
    held first = {0};
    hold_all(&first, s);
    for (int i = 0; i < 7; i++) { /* two more cycles and a partial one */
        forward_in(s, i % 2 ? "main" : "eval", "forward");
        assert_int_equal(lp_session_step(s), LP_OK);
        held mid = {0};
        hold_all(&mid, s);
        check_and_release(&mid);
    }
    check_and_release(&first);
    lp_session_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(strings_survive_recomposition_with_new_regions),
        cmocka_unit_test(strings_survive_more_runs_without_regions),
        cmocka_unit_test(strings_survive_a_schedules_new_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
