/* test_regions_api.c: regions, contexts, steps and schedules through the public API, on real
 * TorchScript models run by real libtorch. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "layerprof.h"

#define MODEL LP_MODELS_DIR "/nested.pt"

static lp_session *open_nested(const lp_options *extra) {
    lp_options opts;
    if (extra)
        opts = *extra;
    else
        lp_options_init(&opts);
    opts.model_path = MODEL;
    opts.threads = 1;
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &opts);
    if (rc) fail_msg("open: %s", lp_error_last());
    return s;
}

static lp_node_info node_at(lp_session *s, const char *path) {
    size_t i;
    lp_node_info info;
    if (lp_session_find(s, path, &i)) fail_msg("no node '%s': %s", path, lp_error_last());
    assert_int_equal(lp_session_node(s, i, &info), LP_OK);
    return info;
}

/* One iteration of a program's loop: preprocess, forward, postprocess, step. */
static void iteration(lp_session *s) {
    assert_int_equal(lp_session_region_begin(s, "preprocess"), LP_OK);
    assert_int_equal(lp_session_region_end(s, "preprocess"), LP_OK);
    assert_int_equal(lp_session_region_begin(s, "forward"), LP_OK);
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
    assert_int_equal(lp_session_region_end(s, "forward"), LP_OK);
    assert_int_equal(lp_session_region_begin(s, "postprocess"), LP_OK);
    assert_int_equal(lp_session_region_end(s, "postprocess"), LP_OK);
    assert_int_equal(lp_session_step(s), LP_OK);
}

static void without_regions_the_tree_is_the_module_tree(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_run(s), LP_OK);
    size_t n;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    assert_int_equal(n, 11); /* nested's named_modules(), nothing added */
    lp_node_info root = node_at(s, "");
    assert_int_equal(root.kind, LP_NODE_MODULE);
    assert_string_equal(root.name, "Nested");
    assert_int_equal(root.raw_calls, 10);
    assert_true(root.share == 1.0);
    lp_session_close(s);
}

static void forwards_in_a_region_hang_under_it_with_exact_counts(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    for (int i = 0; i < 7; i++)
        iteration(s);
    lp_node_info session = node_at(s, ""), ctx = node_at(s, "main");
    lp_node_info fw = node_at(s, "main/forward"), root = node_at(s, "main/forward/");
    lp_node_info block = node_at(s, "main/forward/block");
    assert_int_equal(session.kind, LP_NODE_SESSION);
    assert_int_equal(ctx.kind, LP_NODE_CONTEXT);
    assert_int_equal(fw.kind, LP_NODE_REGION);
    assert_int_equal(root.kind, LP_NODE_MODULE);
    assert_int_equal(fw.iterations, 7);
    assert_int_equal(fw.raw_calls, 7);
    assert_int_equal(root.raw_calls, 7);
    assert_int_equal(block.raw_calls, 14); /* nested calls block twice per forward */
    assert_int_equal(node_at(s, "main/preprocess").raw_calls, 7);
    /* The region holds the forward: its total covers the root's, its self is the rest. */
    assert_true(fw.raw_total_ns >= root.raw_total_ns);
    assert_int_equal(fw.raw_self_ns, fw.raw_total_ns - root.raw_total_ns);
    assert_int_equal(ctx.raw_total_ns, node_at(s, "main/preprocess").raw_total_ns +
                                           fw.raw_total_ns +
                                           node_at(s, "main/postprocess").raw_total_ns);
    /* Statistics per call and the share of the context. */
    assert_int_equal(fw.time_min_ns <= fw.time_max_ns, 1);
    assert_true(fw.time_mean_ns >= (double)fw.time_min_ns &&
                fw.time_mean_ns <= (double)fw.time_max_ns);
    /* The share is the region's part of its context's total, by definition: checked as that
     * quotient rather than as a size (the empty regions' times are whatever the machine's load
     * makes of two clock reads). */
    double want_share = (double)fw.raw_total_ns / (double)ctx.raw_total_ns;
    assert_true(fw.share > 0.0 && fw.share <= 1.0);
    assert_true(fabs(fw.share - want_share) <= 1e-9 * want_share);
    lp_session_close(s);
}

/* Graph mode infers module frames from ops: they must all close inside the region. */
static void graph_mode_forwards_close_inside_their_region(void **state) {
    (void)state;
    lp_options opts;
    lp_options_init(&opts);
    opts.mode = LP_MODE_GRAPH;
    lp_session *s = open_nested(&opts);
    for (int i = 0; i < 4; i++)
        iteration(s);
    lp_node_info fw = node_at(s, "main/forward"), root = node_at(s, "main/forward/");
    assert_int_equal(fw.raw_calls, 4);
    assert_int_equal(root.raw_calls, 4);
    assert_int_equal(node_at(s, "main/forward/stem").raw_calls, 4);
    assert_true(fw.raw_total_ns >= root.raw_total_ns);
    lp_run_info run;
    assert_int_equal(lp_session_run_info(s, &run), LP_OK);
    assert_int_equal(run.dropped, 0);
    lp_session_close(s);
}

/* Op rows (events) under a region's modules, with their per-call statistics. */
static void op_rows_under_a_region_carry_statistics(void **state) {
    (void)state;
    lp_options opts;
    lp_options_init(&opts);
    opts.events = 1;
    lp_session *s = open_nested(&opts);
    for (int i = 0; i < 3; i++)
        iteration(s);
    size_t n, stem;
    assert_int_equal(lp_session_op_count(s, &n), LP_OK);
    assert_true(n > 0);
    assert_int_equal(lp_session_find(s, "main/forward/stem", &stem), LP_OK);
    int seen = 0;
    for (size_t i = 0; i < n; i++) {
        lp_op_info op;
        assert_int_equal(lp_session_op(s, i, &op), LP_OK);
        if ((size_t)op.module != stem || op.parent_op >= 0) continue;
        seen++;
        assert_true(op.raw_calls >= 3);
        assert_true(op.time_min_ns <= op.time_max_ns);
        assert_true(op.time_mean_ns >= (double)op.time_min_ns &&
                    op.time_mean_ns <= (double)op.time_max_ns);
        assert_true(op.share > 0 && op.share < 1);
    }
    assert_true(seen > 0);
    lp_session_close(s);
}

static void forwards_in_two_regions_are_two_module_trees(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_region_begin_in(s, "eval", "cold"), LP_OK);
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
    assert_int_equal(lp_session_region_end(s, "cold"), LP_OK);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(lp_session_region_begin_in(s, "eval", "warm"), LP_OK);
        assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
        assert_int_equal(lp_session_region_end(s, "warm"), LP_OK);
    }
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK); /* outside: context main */
    assert_int_equal(node_at(s, "eval/cold/").raw_calls, 1);
    assert_int_equal(node_at(s, "eval/warm/").raw_calls, 3);
    assert_int_equal(node_at(s, "eval/warm/block").raw_calls, 6);
    assert_int_equal(node_at(s, "main/").raw_calls, 1);
    lp_session_close(s);
}

static void a_disabled_session_records_nothing_until_enabled(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_enable(s, 0), LP_OK);
    for (int i = 0; i < 3; i++)
        iteration(s);
    assert_int_equal(node_at(s, "main/forward").raw_calls, 0);
    size_t i;
    assert_int_equal(lp_session_find(s, "main/forward/", &i), LP_ERR_NOT_FOUND);
    assert_int_equal(lp_session_enable(s, 1), LP_OK);
    iteration(s);
    assert_int_equal(node_at(s, "main/forward").raw_calls, 1);
    assert_int_equal(node_at(s, "main/forward/").raw_calls, 1);
    assert_int_equal(node_at(s, "main/forward").iterations, 1); /* disabled steps do not count */
    lp_session_close(s);
}

static void a_disabled_context_records_nothing_of_its_own(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_context_enable(s, "quiet", 0), LP_OK);
    for (int k = 0; k < 2; k++) {
        assert_int_equal(lp_session_region_begin_in(s, "quiet", "work"), LP_OK);
        assert_int_equal(lp_session_region_begin(s, "inner"), LP_OK); /* nests in quiet */
        assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
        assert_int_equal(lp_session_region_end(s, "inner"), LP_OK);
        assert_int_equal(lp_session_region_end(s, "work"), LP_OK);
        iteration(s); /* context main still records */
    }
    assert_int_equal(node_at(s, "quiet/work").raw_calls, 0);
    assert_int_equal(node_at(s, "quiet/work/inner").raw_calls, 0);
    size_t i;
    assert_int_equal(lp_session_find(s, "quiet/work/inner/", &i), LP_ERR_NOT_FOUND);
    assert_int_equal(node_at(s, "main/forward").raw_calls, 2);
    assert_int_equal(lp_session_context_enable(s, "quiet", 1), LP_OK);
    assert_int_equal(lp_session_region_begin_in(s, "quiet", "work"), LP_OK);
    assert_int_equal(lp_session_region_end(s, "work"), LP_OK);
    assert_int_equal(node_at(s, "quiet/work").raw_calls, 1);
    lp_session_close(s);
}

typedef struct cycles_seen {
    int n;
    int cycle[8];
    uint64_t iterations[8], root_calls[8];
} cycles_seen;

static void record_cycle(lp_session *s, int cycle, void *payload) {
    cycles_seen *seen = payload;
    if (seen->n == 8) return;
    size_t i;
    lp_node_info root;
    memset(&root, 0, sizeof root);
    if (lp_session_find(s, "", &i) == LP_OK) lp_session_node(s, i, &root);
    seen->cycle[seen->n] = cycle;
    seen->iterations[seen->n] = root.iterations;
    seen->root_calls[seen->n] = root.raw_calls;
    seen->n++;
}

/* wait=1, warmup=1, active=2, repeat=2 over 10 forwards: cycles end at steps 3 and 7, each
 * holding exactly its 2 active forwards; the last cycle's figures stay in the session. */
static void a_schedule_reports_each_active_cycle(void **state) {
    (void)state;
    char dir[] = "/tmp/lp_regions_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char pattern[128], file[128];
    snprintf(pattern, sizeof pattern, "%s/cycle_%%d.json", dir);
    lp_output_spec outputs[] = {{LP_FORMAT_JSON, pattern}};
    cycles_seen seen = {0};
    lp_options opts;
    lp_options_init(&opts);
    opts.iterations = 10;
    opts.warmup = 0;
    opts.schedule = (lp_schedule){.wait = 1, .warmup = 1, .active = 2, .repeat = 2};
    opts.on_cycle = record_cycle;
    opts.on_cycle_payload = &seen;
    opts.outputs = outputs;
    opts.n_outputs = 1;
    lp_session *s = open_nested(&opts);
    assert_int_equal(lp_session_run(s), LP_OK);
    assert_int_equal(seen.n, 2);
    for (int c = 0; c < 2; c++) {
        assert_int_equal(seen.cycle[c], c + 1);
        assert_int_equal(seen.iterations[c], 2);
        assert_int_equal(seen.root_calls[c], 2);
        snprintf(file, sizeof file, "%s/cycle_%d.json", dir, c + 1);
        lp_report *r = NULL;
        assert_int_equal(lp_report_load(&r, file), LP_OK);
        lp_node_info info;
        assert_int_equal(lp_report_node(r, 0, &info), LP_OK);
        assert_int_equal(info.raw_calls, 2);
        assert_int_equal(info.iterations, 2);
        lp_report_free(r);
        unlink(file);
    }
    snprintf(file, sizeof file, "%s/cycle_3.json", dir);
    assert_int_equal(access(file, F_OK), -1);
    assert_int_equal(node_at(s, "").raw_calls, 2); /* the last cycle */
    /* Outputs named per cycle are not written again at the end. */
    assert_int_equal(lp_session_write_outputs(s), LP_OK);
    snprintf(file, sizeof file, "%s/cycle_%%d.json", dir);
    assert_int_equal(access(file, F_OK), -1);
    lp_session_close(s);
    rmdir(dir);
}

/* A program's own loop with lp_session_step drives the schedule the same way. */
static void lp_session_step_drives_the_schedule(void **state) {
    (void)state;
    cycles_seen seen = {0};
    lp_options opts;
    lp_options_init(&opts);
    opts.schedule = (lp_schedule){.wait = 2, .warmup = 0, .active = 3, .repeat = 0};
    opts.on_cycle = record_cycle;
    opts.on_cycle_payload = &seen;
    lp_session *s = open_nested(&opts);
    for (int i = 0; i < 12; i++) /* cycles of 5: active steps 2-4 and 7-9 complete */
        iteration(s);
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.cycle[1], 2);
    /* Waiting steps 10 and 11 record nothing: the session keeps cycle 2. */
    assert_int_equal(node_at(s, "main/forward").raw_calls, 3);
    assert_int_equal(node_at(s, "main/forward/").raw_calls, 3);
    assert_int_equal(node_at(s, "main/forward").iterations, 3);
    lp_session_close(s);
}

static void bad_use_of_regions_is_an_error_with_a_message(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_region_end(s, "preprocess"), LP_ERR_STATE);
    assert_non_null(strstr(lp_error_last(), "no region is open"));
    assert_int_equal(lp_session_region_begin(s, "a"), LP_OK);
    assert_int_equal(lp_session_region_end(s, "b"), LP_ERR_STATE);
    assert_non_null(strstr(lp_error_last(), "the innermost open region is 'a'"));
    assert_int_equal(lp_session_region_begin_in(s, "other", "x"), LP_ERR_STATE);
    assert_non_null(strstr(lp_error_last(), "a region nests only in its own context"));
    assert_int_equal(lp_session_region_end(s, "a"), LP_OK);
    assert_int_equal(lp_session_region_end(s, "a"), LP_ERR_STATE); /* a double end */
    assert_int_equal(lp_session_region_begin(s, ""), LP_ERR_INVALID);
    assert_int_equal(lp_session_region_begin(s, "a/b"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "without '/'"));
    /* A region named like a top-level module would share a forward's module path. */
    assert_int_equal(lp_session_region_begin(s, "stem"), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "region name 'stem' is also a module of the model"));
    assert_int_equal(lp_session_region_begin(s, NULL), LP_ERR_INVALID);
    assert_int_equal(lp_session_region_begin_in(s, NULL, "x"), LP_ERR_INVALID);
    assert_int_equal(lp_session_context_enable(s, NULL, 0), LP_ERR_INVALID);
    assert_int_equal(lp_session_forward(s, (void **)&s, NULL), LP_ERR_INVALID);
    float wrong[3] = {0};
    assert_int_equal(lp_session_input_set(s, 0, wrong, sizeof wrong), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "holds 3072 bytes"));
    assert_int_equal(lp_session_input_set(s, 5, wrong, sizeof wrong), LP_ERR_INVALID);
    /* The session still works after every refusal. */
    iteration(s);
    assert_int_equal(node_at(s, "main/forward/").raw_calls, 1);
    lp_session_close(s);
}

/* Reading the report while a region is open, then ending it: the next read sees the call. */
static void a_region_ended_after_a_read_is_in_the_next_read(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_region_begin(s, "r"), LP_OK);
    assert_int_equal(lp_session_region_end(s, "r"), LP_OK);
    assert_int_equal(lp_session_region_begin(s, "r"), LP_OK);
    assert_int_equal(node_at(s, "main/r").raw_calls, 1);
    assert_int_equal(lp_session_region_end(s, "r"), LP_OK);
    assert_int_equal(node_at(s, "main/r").raw_calls, 2);
    lp_session_close(s);
}

/* Forwards may run in 16 distinct regions (and outside every region); the 17th is refused. */
static void forwards_run_in_at_most_16_regions(void **state) {
    (void)state;
    lp_session *s = open_nested(NULL);
    assert_int_equal(lp_session_forward(s, NULL, NULL), LP_OK);
    char name[16];
    for (int i = 0; i < 17; i++) {
        snprintf(name, sizeof name, "r%d", i);
        assert_int_equal(lp_session_region_begin(s, name), LP_OK);
        int rc = lp_session_forward(s, NULL, NULL);
        assert_int_equal(rc, i < 16 ? LP_OK : LP_ERR_UNSUPPORTED);
        assert_int_equal(lp_session_region_end(s, name), LP_OK);
    }
    assert_non_null(strstr(lp_error_last(), "more than 16 different regions"));
    assert_int_equal(node_at(s, "main/r15/").raw_calls, 1);
    assert_int_equal(node_at(s, "main/").raw_calls, 1);
    lp_session_close(s);
}

/* Events of one category and name in a Chrome trace. */
static int count_events(json_t *events, const char *cat, const char *name) {
    int n = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev) {
        const char *c = json_string_value(json_object_get(ev, "cat"));
        const char *nm = json_string_value(json_object_get(ev, "name"));
        n += c && nm && strcmp(c, cat) == 0 && strcmp(nm, name) == 0;
    }
    return n;
}

/* The trace shows the regions of the first trace_iterations steps, around their forwards. */
static void the_trace_has_region_spans_of_the_first_steps(void **state) {
    (void)state;
    lp_options opts;
    lp_options_init(&opts);
    opts.trace = 1;
    opts.trace_iterations = 2;
    lp_session *s = open_nested(&opts);
    for (int i = 0; i < 4; i++)
        iteration(s);
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(lp_session_render(s, LP_FORMAT_TRACE, f), LP_OK);
    rewind(f);
    json_error_t err;
    json_t *doc = json_loadf(f, 0, &err);
    fclose(f);
    if (!doc) fail_msg("trace does not parse: %s", err.text);
    json_t *events = json_is_array(doc) ? doc : json_object_get(doc, "traceEvents");
    assert_non_null(events);
    assert_int_equal(count_events(events, "region", "main/preprocess"), 2);
    assert_int_equal(count_events(events, "region", "main/forward"), 2);
    assert_int_equal(count_events(events, "region", "main/postprocess"), 2);
    assert_int_equal(count_events(events, "module", "Nested"), 2);
    json_decref(doc);
    lp_session_close(s);
}

static void null_sessions_are_refused(void **state) {
    (void)state;
    assert_int_equal(lp_session_region_begin(NULL, "a"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "lp_session_region_begin: session is NULL");
    assert_int_equal(lp_session_region_begin_in(NULL, "c", "a"), LP_ERR_INVALID);
    assert_int_equal(lp_session_region_end(NULL, "a"), LP_ERR_INVALID);
    assert_int_equal(lp_session_forward(NULL, NULL, NULL), LP_ERR_INVALID);
    assert_int_equal(lp_session_input_set(NULL, 0, "", 0), LP_ERR_INVALID);
    assert_int_equal(lp_session_step(NULL), LP_ERR_INVALID);
    assert_int_equal(lp_session_enable(NULL, 1), LP_ERR_INVALID);
    assert_int_equal(lp_session_context_enable(NULL, "c", 1), LP_ERR_INVALID);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(without_regions_the_tree_is_the_module_tree),
        cmocka_unit_test(forwards_in_a_region_hang_under_it_with_exact_counts),
        cmocka_unit_test(graph_mode_forwards_close_inside_their_region),
        cmocka_unit_test(op_rows_under_a_region_carry_statistics),
        cmocka_unit_test(forwards_in_two_regions_are_two_module_trees),
        cmocka_unit_test(a_disabled_session_records_nothing_until_enabled),
        cmocka_unit_test(a_disabled_context_records_nothing_of_its_own),
        cmocka_unit_test(a_schedule_reports_each_active_cycle),
        cmocka_unit_test(lp_session_step_drives_the_schedule),
        cmocka_unit_test(bad_use_of_regions_is_an_error_with_a_message),
        cmocka_unit_test(a_region_ended_after_a_read_is_in_the_next_read),
        cmocka_unit_test(forwards_run_in_at_most_16_regions),
        cmocka_unit_test(the_trace_has_region_spans_of_the_first_steps),
        cmocka_unit_test(null_sessions_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
