/* test_stop.c: lp_session_stop, what the CLI's SIGINT/SIGTERM handler calls. A run asked
 * to stop finishes the forward in progress, starts no other, returns LP_OK with the completed
 * iterations, and every report says it was interrupted; the request is used up by that run. */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

typedef struct stop_at {
    lp_session *s;
    lp_phase phase;
    int done; /* ask to stop once this many forwards of `phase` are done */
} stop_at;

static void on_progress(const lp_progress *p, void *payload) {
    stop_at *at = payload;
    if (at->s && p->phase == at->phase && p->done == at->done)
        assert_int_equal(lp_session_stop(at->s), LP_OK);
}

static lp_session *open_nested(stop_at *at, int iterations) {
    lp_options o;
    lp_options_init(&o);
    o.model_path = LP_MODELS_DIR "/nested.pt";
    o.warmup = 3;
    o.iterations = iterations;
    o.progress = on_progress;
    o.progress_payload = at;
    lp_session *s = NULL;
    if (lp_session_open(&s, &o)) fail_msg("lp_session_open: %s", lp_error_last());
    at->s = s;
    return s;
}

static char *tree_text(lp_session *s) {
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    assert_int_equal(lp_session_render(s, LP_FORMAT_TREE, f), LP_OK);
    fclose(f);
    return text;
}

static void stops_after_the_forward_in_progress(void **state) {
    (void)state;
    stop_at at = {NULL, LP_PHASE_PROFILE, 2};
    lp_session *s = open_nested(&at, 1000);
    assert_int_equal(lp_session_run(s), LP_OK);
    lp_run_info ri;
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    assert_int_equal(ri.iterations, 2);
    char *text = tree_text(s);
    assert_non_null(strstr(text, "interrupted: stopped after 2 of 1000 profiled iterations"));
    free(text);
    lp_node_info root;
    assert_int_equal(lp_session_node(s, 0, &root), LP_OK);
    assert_int_equal(root.raw_calls, 2); /* the figures are the two forwards' */

    /* The request was used up: the next run runs all its iterations. */
    at.s = NULL;
    assert_int_equal(lp_session_run(s), LP_OK);
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    assert_int_equal(ri.iterations, 1002);
    lp_session_close(s);
}

static void a_stop_during_the_warm_up_profiles_nothing(void **state) {
    (void)state;
    stop_at at = {NULL, LP_PHASE_WARMUP, 1};
    lp_session *s = open_nested(&at, 50);
    assert_int_equal(lp_session_run(s), LP_OK);
    lp_run_info ri;
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    assert_int_equal(ri.iterations, 0);
    char *text = tree_text(s);
    assert_non_null(strstr(text, "interrupted: stopped after 0 of 50 profiled iterations"));
    free(text);
    lp_session_close(s);
}

/* Each honoured request adds a note, and a session that runs again and again keeps every one: the
 * report's notes have no fixed length (there was once a limit of 8, past which notes vanished),
 * nor does a report read back from JSON (once 16). */
static void every_note_is_kept_however_many(void **state) {
    (void)state;
    enum { RUNS = 20 };
    stop_at at = {NULL, LP_PHASE_PROFILE, 1};
    lp_session *s = open_nested(&at, 5);
    for (int i = 0; i < RUNS; i++)
        assert_int_equal(lp_session_run(s), LP_OK);
    char json[] = "/tmp/lp_test_stop_XXXXXX";
    int fd = mkstemp(json);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(lp_session_render(s, LP_FORMAT_JSON, f), LP_OK);
    fclose(f);
    char *texts[2] = {tree_text(s), NULL};
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, json), LP_OK);
    size_t size = 0;
    f = open_memstream(&texts[1], &size);
    assert_int_equal(lp_report_render(r, LP_FORMAT_TREE, NULL, f), LP_OK);
    fclose(f);
    for (int t = 0; t < 2; t++) {
        int found = 0;
        for (const char *p = texts[t]; (p = strstr(p, "interrupted: stopped after 1 of 5")); p++)
            found++;
        if (found != RUNS)
            fail_msg("%s: %d of %d notes kept", t ? "read back" : "session", found, RUNS);
        free(texts[t]);
    }
    lp_report_free(r);
    unlink(json);
    lp_session_close(s);
}

static void a_null_session_is_refused(void **state) {
    (void)state;
    assert_int_equal(lp_session_stop(NULL), LP_ERR_INVALID);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stops_after_the_forward_in_progress),
        cmocka_unit_test(a_stop_during_the_warm_up_profiles_nothing),
        cmocka_unit_test(every_note_is_kept_however_many),
        cmocka_unit_test(a_null_session_is_refused),
    };
    return cmocka_run_group_tests_name("integration.stop", tests, NULL, NULL);
}
