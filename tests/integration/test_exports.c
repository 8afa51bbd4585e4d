/* test_exports.c: every export format from real runs, parsed back: the JSON report (and its round
 * trip through lp_report_load), CSV rows, the markdown table, the HTML page's data and the Chrome
 * trace (required fields, spans nesting per thread, module spans adding up to the report's
 * totals), plus the trace's iteration cap and the progress callback. */
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
#include <jansson.h>
#include <math.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

static lp_mode g_mode = LP_MODE_HOOKS; /* the mode run_model uses */

static lp_session *run_model(const char *model, int iterations, int trace, int trace_iterations,
                             lp_progress_fn progress, void *payload) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pt", LP_MODELS_DIR, model);
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.mode = g_mode;
    o.warmup = 1;
    o.iterations = iterations;
    o.memory = 1;
    o.events = 1;
    o.trace = trace;
    o.trace_iterations = trace_iterations;
    o.progress = progress;
    o.progress_payload = payload;
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &o);
    if (rc) fail_msg("open %s: %s", path, lp_error_last());
    rc = lp_session_run(s);
    if (rc) {
        lp_session_close(s);
        fail_msg("run %s: %s", path, lp_error_last());
    }
    return s;
}

static char *render(lp_session *s, lp_format format) {
    FILE *f = tmpfile();
    assert_non_null(f);
    int rc = lp_session_render(s, format, f);
    if (rc) fail_msg("render %s: %s", lp_format_name(format), lp_error_last());
    long n = ftell(f);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

static json_t *parse(const char *text, const char *what) {
    json_error_t err;
    json_t *doc = json_loads(text, 0, &err);
    if (!doc) fail_msg("%s does not parse: %s (line %d)", what, err.text, err.line);
    return doc;
}

static size_t count_ops(const json_t *ops) {
    size_t n = 0, i;
    json_t *o;
    json_array_foreach(ops, i, o) n += 1 + count_ops(json_object_get(o, "ops"));
    return n;
}

static size_t count_lines(const char *text, const char *eol) {
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, eol)); p += strlen(eol))
        n++;
    return n;
}

/* The trace's module spans, checked against the JSON report of the same run: per thread they nest,
 * and with every iteration traced each module's spans add up to its total. */
static void check_trace(const char *trace_text, const json_t *report, int all_traced,
                        size_t *threads_out) {
    json_t *doc = parse(trace_text, "the trace");
    json_t *events = json_object_get(doc, "traceEvents");
    assert_true(json_array_size(events) > 0);
    json_t *mods = json_object_get(report, "modules");
    size_t n_mods = json_array_size(mods);
    double *sum_ns = calloc(n_mods, sizeof *sum_ns);
    assert_non_null(sum_ns);

    /* Spans as the file lists them: per tid, sorted by start, parents first. */
    size_t i;
    json_t *ev;
    int tid = -1;
    double open_end[512];
    int sp = 0;
    size_t threads = 0;
    json_array_foreach(events, i, ev) {
        const char *ph = json_string_value(json_object_get(ev, "ph"));
        assert_non_null(ph);
        assert_non_null(json_string_value(json_object_get(ev, "name")));
        assert_true(json_is_integer(json_object_get(ev, "pid")));
        if (strcmp(ph, "C") == 0) {
            assert_true(json_is_number(json_object_get(ev, "ts")));
            assert_true(json_is_integer(json_object_get(json_object_get(ev, "args"), "allocated")));
            continue;
        }
        if (strcmp(ph, "X") != 0) continue;
        json_t *jts = json_object_get(ev, "ts"), *jdur = json_object_get(ev, "dur");
        assert_true(json_is_number(jts) && json_is_number(jdur));
        assert_true(json_is_integer(json_object_get(ev, "tid")));
        double ts = json_number_value(jts), dur = json_number_value(jdur);
        int t = (int)json_integer_value(json_object_get(ev, "tid"));
        assert_true(dur >= 0);
        if (t != tid) {
            assert_true(t > tid); /* threads in order */
            tid = t;
            sp = 0;
            threads++;
        }
        /* Microseconds with three decimals: compare in whole ns. */
        long long t0 = llround(ts * 1000), t1 = llround((ts + dur) * 1000);
        while (sp && open_end[sp - 1] <= (double)t0 &&
               !(open_end[sp - 1] == (double)t0 && t1 == t0))
            sp--;
        if (sp && (double)t1 > open_end[sp - 1])
            fail_msg("span '%s' [%lld, %lld] on tid %d ends after its parent (%.0f)",
                     json_string_value(json_object_get(ev, "name")), t0, t1, t, open_end[sp - 1]);
        assert_true(sp < 512);
        open_end[sp++] = (double)t1;
        const char *cat = json_string_value(json_object_get(ev, "cat"));
        if (cat && strcmp(cat, "module") == 0) {
            const char *path =
                json_string_value(json_object_get(json_object_get(ev, "args"), "path"));
            assert_non_null(path);
            size_t k;
            json_t *m;
            json_array_foreach(
                mods, k, m) if (strcmp(json_string_value(json_object_get(m, "path")), path) == 0) {
                sum_ns[k] += (double)llround(dur * 1000);
                break;
            }
        }
    }
    if (all_traced) {
        size_t k;
        json_t *m;
        json_array_foreach(mods, k, m) {
            double total = (double)json_integer_value(json_object_get(m, "total_ns"));
            if (sum_ns[k] != total)
                fail_msg("module '%s': spans add up to %.0f ns, the report says %.0f",
                         json_string_value(json_object_get(m, "path")), sum_ns[k], total);
        }
    }
    if (threads_out) *threads_out = threads;
    free(sum_ns);
    json_decref(doc);
}

static void every_format_of_a_real_run_parses_back(void **state) {
    (void)state;
    lp_session *s = run_model("nested", 3, 1, 3, NULL, NULL);
    size_t n_nodes = 0;
    assert_int_equal(lp_session_node_count(s, &n_nodes), LP_OK);

    char *json_text = render(s, LP_FORMAT_JSON);
    json_t *report = parse(json_text, "the JSON report");
    assert_int_equal(json_integer_value(json_object_get(report, "schema_version")), 2);
    json_t *run = json_object_get(report, "run");
    assert_string_equal(json_string_value(json_object_get(run, "libtorch_version")),
                        lp_torch_version());
    assert_string_equal(json_string_value(json_object_get(run, "layerprof_version")), lp_version());
    const char *date = json_string_value(json_object_get(run, "date"));
    assert_non_null(date);
    assert_int_equal(strlen(date), 20);
    assert_true(date[10] == 'T' && date[19] == 'Z');
    /* The forwards' mean time until their device work was done (lp_run_info.synced_ns). */
    lp_run_info ri;
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    assert_true(ri.synced_ns > 0);
    assert_int_equal(json_integer_value(json_object_get(run, "forward_ns")),
                     ri.synced_ns / ri.iterations);
    json_t *mods = json_object_get(report, "modules");
    assert_int_equal(json_array_size(mods), n_nodes);
    size_t n_ops = 0;
    for (size_t i = 0; i < n_nodes; i++) {
        lp_node_info info;
        assert_int_equal(lp_session_node(s, i, &info), LP_OK);
        json_t *m = json_array_get(mods, i);
        assert_string_equal(json_string_value(json_object_get(m, "path")), info.path);
        assert_int_equal(json_integer_value(json_object_get(m, "total_ns")), info.raw_total_ns);
        assert_int_equal(json_integer_value(json_object_get(m, "calls")), info.raw_calls);
        n_ops += count_ops(json_object_get(m, "ops"));
    }
    assert_true(n_ops > 10);

    /* Round trip: the file read back writes the same bytes. */
    char path[] = "/tmp/lp_test_exports_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, json_text, strlen(json_text)), (ssize_t)strlen(json_text));
    close(fd);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    FILE *f = tmpfile();
    assert_int_equal(lp_report_render(r, LP_FORMAT_JSON, NULL, f), LP_OK);
    long n = ftell(f);
    char *again = malloc((size_t)n + 1);
    rewind(f);
    assert_int_equal(fread(again, 1, (size_t)n, f), (size_t)n);
    again[n] = '\0';
    fclose(f);
    assert_string_equal(json_text, again);
    free(again);
    /* The exposition of the report read back: each histogram its +Inf bucket, _sum and _count,
     * with the calls the session counted (nested's block runs twice per forward). */
    f = tmpfile();
    assert_int_equal(lp_report_render(r, LP_FORMAT_OPENMETRICS, NULL, f), LP_OK);
    n = ftell(f);
    char *prom = malloc((size_t)n + 1);
    rewind(f);
    assert_int_equal(fread(prom, 1, (size_t)n, f), (size_t)n);
    prom[n] = '\0';
    fclose(f);
    assert_non_null(strstr(prom, "layerprof_module_calls_total{model=\"nested\",module=\"block\","
                                 "class=\"Block\"} 6\n"));
    assert_non_null(strstr(prom,
                           "layerprof_module_self_seconds_count{model=\"nested\",module=\".\","
                           "class=\"Nested\"} 3\n"));
    assert_non_null(strstr(prom, "layerprof_module_total_seconds_bucket{model=\"nested\",module=\""
                                 "block\",class=\"Block\",le=\"+Inf\"} 6\n"));
    assert_null(strstr(prom, "le=\"0.001\"")); /* no per-call histogram in a file */
    assert_null(strstr(prom, "block.body"));   /* metrics_depth 1 by default */
    free(prom);
    lp_report_free(r);
    unlink(path);

    char *csv = render(s, LP_FORMAT_CSV);
    assert_int_equal(count_lines(csv, "\r\n"), 1 + n_nodes + n_ops);
    assert_true(strncmp(csv, "path,kind,name,class,depth,", 27) == 0);
    assert_non_null(strstr(csv, "\r\nblock.body.0,module,0,Conv2d,3,"));
    assert_non_null(strstr(csv, "\r\nblock.body.0/aten::conv2d,op,aten::conv2d,,4,"));

    char *md = render(s, LP_FORMAT_MARKDOWN);
    assert_true(strncmp(md, "###### layerprof: nested.pt", 27) == 0);
    /* Title, blank, header, rule, one row per module and op row, Total. */
    size_t rows = 0;
    for (const char *p = md; (p = strstr(p, "\n| ")); p++)
        rows++;
    assert_int_equal(rows, 1 + n_nodes + n_ops + 1);

    char *html = render(s, LP_FORMAT_HTML);
    char *data = strstr(html, "<script type=\"application/json\" id=\"lp-data\">\n");
    assert_non_null(data);
    data = strchr(data, '\n') + 1;
    *strstr(data, "</script>") = '\0';
    json_t *page = parse(data, "the page data");
    assert_int_equal(json_array_size(json_object_get(json_object_get(page, "report"), "modules")),
                     n_nodes);
    json_t *tl = json_object_get(page, "timeline");
    assert_true(json_is_object(tl));
    assert_int_equal(json_array_size(json_object_get(tl, "forwards")), 3);
    assert_true(json_array_size(json_object_get(json_object_get(tl, "memory"), "cpu")) > 3);
    json_decref(page);

    char *trace = render(s, LP_FORMAT_TRACE);
    check_trace(trace, report, 1, NULL);

    free(trace);
    free(html);
    free(md);
    free(csv);
    json_decref(report);
    free(json_text);
    lp_session_close(s);
}

/* torch.jit.fork: libtorch may run the branches inline on the calling thread (it does with 1.13's
 * inference mode) or on its inter-op pool; either way spans nest per thread and add up. Several
 * threads for sure are covered by the unit test (test_render_trace.c) with real pthreads. */
static void trace_of_a_forked_model_nests_per_thread(void **state) {
    (void)state;
    lp_session *s = run_model("forked", 2, 1, 0, NULL, NULL); /* default cap 3 >= 2 */
    char *json_text = render(s, LP_FORMAT_JSON);
    json_t *report = parse(json_text, "the JSON report");
    char *trace = render(s, LP_FORMAT_TRACE);
    size_t threads = 0;
    check_trace(trace, report, 1, &threads);
    assert_true(threads >= 1);
    free(trace);
    json_decref(report);
    free(json_text);
    lp_session_close(s);
}

/* Graph mode infers module entry and exit from the ops: the spans must still nest and add up. */
static void trace_in_graph_mode_nests_and_adds_up(void **state) {
    (void)state;
    g_mode = LP_MODE_GRAPH;
    lp_session *s = run_model("resnet18", 2, 1, 0, NULL, NULL);
    g_mode = LP_MODE_HOOKS;
    char *json_text = render(s, LP_FORMAT_JSON);
    json_t *report = parse(json_text, "the JSON report");
    char *trace = render(s, LP_FORMAT_TRACE);
    check_trace(trace, report, 1, NULL);
    free(trace);
    json_decref(report);
    free(json_text);
    lp_session_close(s);
}

static void trace_iterations_caps_the_timeline(void **state) {
    (void)state;
    lp_session *s = run_model("nested", 5, 1, 2, NULL, NULL);
    char *trace = render(s, LP_FORMAT_TRACE);
    json_t *doc = parse(trace, "the trace");
    size_t roots = 0, i;
    json_t *ev;
    json_array_foreach(json_object_get(doc, "traceEvents"), i, ev) {
        json_t *args = json_object_get(ev, "args");
        const char *p = json_string_value(json_object_get(args, "path"));
        if (p && !*p) roots++;
    }
    assert_int_equal(roots, 2);
    json_t *other = json_object_get(doc, "otherData");
    assert_int_equal(json_integer_value(json_object_get(other, "iterations_recorded")), 2);
    assert_int_equal(json_integer_value(json_object_get(other, "iterations_run")), 5);
    json_decref(doc);
    free(trace);
    lp_session_close(s);
}

static void a_trace_needs_a_timeline(void **state) {
    (void)state;
    lp_session *s = run_model("nested", 1, 0, 0, NULL, NULL);
    FILE *f = tmpfile();
    assert_int_equal(lp_session_render(s, LP_FORMAT_TRACE, f), LP_ERR_STATE);
    fclose(f);
    lp_session_close(s);
}

/* What a write callback was handed, in order; it refuses after `refuse_after` pieces (< 0: never).
 */
typedef struct collected {
    char *text;
    size_t len, pieces;
    int refuse_after;
} collected;

static int collect(void *payload, const char *data, size_t size) {
    collected *c = payload;
    if (c->refuse_after >= 0 && c->pieces >= (size_t)c->refuse_after) return 1;
    c->text = realloc(c->text, c->len + size + 1);
    assert_non_null(c->text);
    memcpy(c->text + c->len, data, size);
    c->len += size;
    c->text[c->len] = '\0';
    c->pieces++;
    return 0;
}

/* A write callback gets exactly the bytes a FILE would, in pieces, for every format; one that
 * refuses makes the render fail with LP_ERR_IO. */
static void a_write_callback_gets_what_a_file_gets(void **state) {
    (void)state;
    lp_session *s = run_model("resnet18", 1, 0, 0, NULL, NULL);
    static const lp_format formats[] = {LP_FORMAT_TREE, LP_FORMAT_JSON, LP_FORMAT_CSV,
                                        LP_FORMAT_MARKDOWN, LP_FORMAT_HTML};
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        char *want = render(s, formats[i]);
        collected c = {NULL, 0, 0, -1};
        assert_int_equal(lp_session_render_to(s, formats[i], collect, &c), LP_OK);
        assert_non_null(c.text);
        assert_string_equal(c.text, want);
        if (strlen(want) > BUFSIZ) assert_true(c.pieces > 1); /* streamed, not held whole */
        free(c.text);
        free(want);
    }
    collected refusing = {NULL, 0, 0, 1};
    assert_int_equal(lp_session_render_to(s, LP_FORMAT_JSON, collect, &refusing), LP_ERR_IO);
    assert_non_null(strstr(lp_error_last(), "write callback"));
    free(refusing.text);
    assert_int_equal(lp_session_render_to(s, LP_FORMAT_JSON, NULL, NULL), LP_ERR_INVALID);
    lp_session_close(s);
}

typedef struct seen {
    int calls, warmup_done, profile_done, done;
    int in_order;
} seen;

static void on_progress(const lp_progress *p, void *payload) {
    seen *s = payload;
    s->calls++;
    if (p->phase == LP_PHASE_WARMUP) {
        if (p->done < s->warmup_done || s->profile_done) s->in_order = 0;
        s->warmup_done = p->done;
    } else if (p->phase == LP_PHASE_PROFILE) {
        if (p->done < s->profile_done || p->total != 3) s->in_order = 0;
        s->profile_done = p->done;
    } else {
        s->done++;
    }
}

static void progress_reports_warmup_and_iterations_in_order(void **state) {
    (void)state;
    seen s = {.in_order = 1};
    lp_session *session = run_model("nested", 3, 0, 0, on_progress, &s);
    assert_true(s.in_order);
    assert_int_equal(s.warmup_done, 1);
    assert_int_equal(s.profile_done, 3);
    assert_int_equal(s.done, 1);
    assert_int_equal(s.calls, 2 + 4 + 1); /* 0..1 warm-up, 0..3 profiled, done */
    lp_session_close(session);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_format_of_a_real_run_parses_back),
        cmocka_unit_test(trace_of_a_forked_model_nests_per_thread),
        cmocka_unit_test(trace_in_graph_mode_nests_and_adds_up),
        cmocka_unit_test(trace_iterations_caps_the_timeline),
        cmocka_unit_test(a_trace_needs_a_timeline),
        cmocka_unit_test(a_write_callback_gets_what_a_file_gets),
        cmocka_unit_test(progress_reports_warmup_and_iterations_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
