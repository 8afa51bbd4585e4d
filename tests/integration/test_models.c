/* test_models.c: the module tree, call counts and times of every test model, in both modes,
 * through the public API against the real libtorch.
 *
 * The truth is models/NAME.counts.json, written by models/export.py from forward hooks on the
 * eager nn.Module: `order` (named_modules() paths), `classes` (short class names) and `calls`
 * (calls per forward). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

/* The markers mode runs TorchScript's profiling executor, which optimises during the first
 * forwards; the unoptimised hooks mode is steady from the first. */
#define WARMUP(mode) ((mode) == LP_MODE_HOOKS ? 1 : 3)
#define ITERATIONS 2

#if defined(__SANITIZE_ADDRESS__)
#define LP_DRIVER_SLACK_NS 20000.0
#else
#define LP_DRIVER_SLACK_NS 5000.0
#endif

/* ---- helpers --------------------------------------------------------------------------------- */

typedef struct model_case {
    const char *model;
    lp_mode mode;
} model_case;

static json_t *load_counts(const char *model) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.counts.json", LP_MODELS_DIR, model);
    json_error_t err;
    json_t *j = json_load_file(path, 0, &err);
    if (!j) fail_msg("cannot read %s: %s (line %d)", path, err.text, err.line);
    return j;
}

static lp_session *open_and_run(const char *model, lp_mode mode, int memory) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pt", LP_MODELS_DIR, model);
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.mode = mode;
    o.warmup = WARMUP(mode);
    o.iterations = ITERATIONS;
    o.memory = memory;
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &o);
    if (rc) fail_msg("lp_session_open(%s): %s: %s", path, lp_status_name(rc), lp_error_last());
    rc = lp_session_run(s);
    if (rc) {
        lp_session_close(s);
        fail_msg("lp_session_run(%s): %s: %s", path, lp_status_name(rc), lp_error_last());
    }
    return s;
}

static const char *mode_name(lp_mode m) {
    return m == LP_MODE_GRAPH ? "graph" : m == LP_MODE_MARKERS ? "markers" : "hooks";
}

/* ---- the checks ------------------------------------------------------------------------------ */

/* The root's total lies inside the driver's own timing of the same forwards, less what the
 * driver itself does around a forward (inputs, the root frame's entry): a few us, so within 5%
 * on every model of tens of us and more, a fixed 5 us per forward on the tiny pattern models (a
 * 25 us forward), 20 us under the sanitizers (measured: up to 9 us). *ratio: root / driver. */
static int root_within_driver(uint64_t root, uint64_t driver_ns, double *ratio) {
    double slack = 0.05 * (double)driver_ns;
    if (slack < LP_DRIVER_SLACK_NS * ITERATIONS) slack = LP_DRIVER_SLACK_NS * ITERATIONS;
    *ratio = driver_ns ? (double)root / (double)driver_ns : 0.0;
    return root <= driver_ns && (double)root >= (double)driver_ns - slack;
}

/* The same, measured on a fresh session of the model: for a second reading when the first was
 * off. The property is systematic (a root frame that starts late or ends early does so in every
 * forward); the measurement is two forwards on a shared machine, where one interruption outside
 * the root frame, a preemption or a burst of page faults, is 20% of it (seen once in CI: ratio
 * 0.80 on pat_structured, 0.99 on its next three runs). */
static int root_within_driver_again(const char *model, lp_mode mode, double *ratio) {
    lp_session *s = open_and_run(model, mode, 0);
    lp_node_info root;
    lp_run_info ri;
    assert_int_equal(lp_session_node(s, 0, &root), LP_OK);
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    int ok = root_within_driver(root.raw_total_ns, ri.driver_ns, ratio);
    lp_session_close(s);
    return ok;
}

static void check_model(void **state) {
    const model_case *mc = *state;
    json_t *counts = load_counts(mc->model);
    json_t *order = json_object_get(counts, "order");
    json_t *calls = json_object_get(counts, "calls");
    json_t *classes = json_object_get(counts, "classes");
    assert_non_null(order);
    assert_non_null(calls);
    assert_non_null(classes);

    lp_session *s = open_and_run(mc->model, mc->mode, 0);
    size_t n = 0;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    lp_node_info *nodes = calloc(n ? n : 1, sizeof *nodes);
    assert_non_null(nodes);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(lp_session_node(s, i, &nodes[i]), LP_OK);
    lp_run_info ri;
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    assert_int_equal(ri.iterations, ITERATIONS);
    assert_int_equal(ri.dropped, 0);

    /* One row per named_modules() entry, in order, with the eager class names. */
    assert_int_equal(n, json_array_size(order));
    for (size_t i = 0; i < n; i++) {
        const char *want = json_string_value(json_array_get(order, i));
        assert_non_null(want);
        if (strcmp(nodes[i].path, want) != 0)
            fail_msg("%s/%s: node %zu is '%s', counts.json order says '%s'", mc->model,
                     mode_name(mc->mode), i, nodes[i].path, want);
        const char *cls = json_string_value(json_object_get(classes, want));
        assert_non_null(cls);
        if (strcmp(nodes[i].class_name, cls) != 0)
            fail_msg("%s: '%s' has class '%s', eager '%s'", mc->model, want, nodes[i].class_name,
                     cls);
        size_t found = (size_t)-1;
        assert_int_equal(lp_session_find(s, want, &found), LP_OK);
        assert_int_equal(found, i);
        assert_int_equal(nodes[i].iterations, ITERATIONS);
        assert_int_equal(nodes[i].selected, 1);
        assert_int_equal(nodes[i].depth, i ? nodes[nodes[i].parent].depth + 1 : 0);
        assert_int_equal(nodes[i].cpu_mem.recorded, 0); /* memory off */
    }
    assert_int_equal(nodes[0].parent, -1);
    assert_string_equal(nodes[0].path, "");

    /* Every check below reports all it finds, then the test fails once at the end. */
    int bad = 0;
#define BAD(...)                                                                                   \
    do {                                                                                           \
        print_error("%s/%s: ", mc->model, mode_name(mc->mode));                                    \
        print_error(__VA_ARGS__);                                                                  \
        print_error("\n");                                                                         \
        bad++;                                                                                     \
    } while (0)

    /* Call counts: exact, per path, in every mode (graph runs as markers). */
    for (size_t i = 0; i < n; i++) {
        double eager = json_number_value(json_object_get(calls, nodes[i].path));
        double got = nodes[i].calls;
        if ((double)nodes[i].raw_calls != got * ITERATIONS)
            BAD("'%s' raw_calls %llu != calls %g x %d", nodes[i].path,
                (unsigned long long)nodes[i].raw_calls, got, ITERATIONS);
        if (got != eager)
            BAD("'%s' (%s) %g calls per iteration, expected %g (eager)", nodes[i].path,
                nodes[i].class_name, got, eager);
    }

    /* Modules that never ran: no calls, no time (a container holds its children's time, with no
     * call of its own: checked below). Every node: self <= total. */
    uint64_t self_sum = 0;
    for (size_t i = 0; i < n; i++) {
        const lp_node_info *x = &nodes[i];
        if (x->raw_calls == 0 && !x->container && (x->raw_total_ns || x->raw_self_ns))
            BAD("'%s' never ran but has total %llu ns, self %llu ns", x->path,
                (unsigned long long)x->raw_total_ns, (unsigned long long)x->raw_self_ns);
        if (x->raw_calls && !x->raw_total_ns) BAD("'%s' ran but has no time", x->path);
        if (x->raw_self_ns > x->raw_total_ns || x->self_ns > x->total_ns)
            BAD("'%s' self %llu ns > total %llu ns", x->path, (unsigned long long)x->raw_self_ns,
                (unsigned long long)x->raw_total_ns);
        self_sum += x->raw_self_ns;
    }

    /* A parent's total covers its children's. A container that is never called itself (a
     * ModuleList: transformer's encoder.layers) has no time of its own, by definition (0 calls,
     * like the eager count): its children's time is inside the nearest ancestor that was called,
     * so that ancestor must cover them. Every parent that was called is checked against its
     * direct children as well, so no case is skipped. */
    uint64_t *child_sum = calloc(n + 1, sizeof *child_sum);     /* direct children */
    uint64_t *covered_sum = calloc(n + 1, sizeof *covered_sum); /* nearest called ancestor */
    assert_non_null(child_sum);
    assert_non_null(covered_sum);
    for (size_t i = 1; i < n; i++) {
        child_sum[nodes[i].parent] += nodes[i].raw_total_ns;
        int a = nodes[i].parent;
        while (a > 0 && nodes[a].raw_calls == 0)
            a = nodes[a].parent;
        /* A container's total holds its children's, which are counted themselves: only its own
         * methods' time (its self) runs inside the caller besides them. */
        covered_sum[a] += nodes[i].container ? nodes[i].raw_self_ns : nodes[i].raw_total_ns;
    }
    for (size_t i = 0; i < n; i++) {
        /* A container's total is exactly its own methods' time plus its children's. */
        if (nodes[i].container && nodes[i].raw_total_ns != nodes[i].raw_self_ns + child_sum[i])
            BAD("container '%s' total %llu ns is not its self %llu ns + its children's %llu ns",
                nodes[i].path, (unsigned long long)nodes[i].raw_total_ns,
                (unsigned long long)nodes[i].raw_self_ns, (unsigned long long)child_sum[i]);
        if (nodes[i].container && nodes[i].raw_calls)
            BAD("container '%s' has %llu calls", nodes[i].path,
                (unsigned long long)nodes[i].raw_calls);
        if ((nodes[i].raw_calls || nodes[i].container) && nodes[i].raw_total_ns < child_sum[i])
            BAD("'%s' total %llu ns < its children's %llu ns", nodes[i].path,
                (unsigned long long)nodes[i].raw_total_ns, (unsigned long long)child_sum[i]);
        if (nodes[i].raw_calls && nodes[i].raw_total_ns < covered_sum[i])
            BAD("'%s' total %llu ns < the %llu ns of the modules it calls", nodes[i].path,
                (unsigned long long)nodes[i].raw_total_ns, (unsigned long long)covered_sum[i]);
        if (!nodes[i].raw_calls && child_sum[i])
            print_message("note: %s/%s: '%s' (%s) never called itself, its children ran %llu ns\n",
                          mc->model, mode_name(mc->mode), nodes[i].path, nodes[i].class_name,
                          (unsigned long long)child_sum[i]);
    }

    /* The self times add up to the root's total (within 1 ns per node). */
    uint64_t root = nodes[0].raw_total_ns;
    uint64_t diff = self_sum > root ? self_sum - root : root - self_sum;
    if (diff > n)
        BAD("self times add up to %llu ns, the root's total is %llu ns",
            (unsigned long long)self_sum, (unsigned long long)root);

    /* The root's total lies inside the driver's own timing of the same forwards. */
    if (nodes[0].raw_calls != ITERATIONS)
        BAD("root called %llu times in %d iterations", (unsigned long long)nodes[0].raw_calls,
            ITERATIONS);
    double ratio, again;
    if (!root_within_driver(root, ri.driver_ns, &ratio)) {
        print_message("note: %s/%s: root/driver %.4f; measuring a fresh session once more\n",
                      mc->model, mode_name(mc->mode), ratio);
        if (!root_within_driver_again(mc->model, mc->mode, &again))
            BAD("root total %llu ns not within the driver's %llu ns less 5%% or 5 us a forward "
                "(ratio %.4f, and %.4f measured again)",
                (unsigned long long)root, (unsigned long long)ri.driver_ns, ratio, again);
    }
#undef BAD

    free(covered_sum);
    free(child_sum);
    free(nodes);
    lp_session_close(s);
    json_decref(counts);
    if (bad)
        fail_msg("%s/%s: %d check(s) failed (listed above)", mc->model, mode_name(mc->mode), bad);
}

/* nested: `unused` is a module that never runs; `block` (one instance) is called twice. */
static void nested_unused(void **state) {
    const model_case *mc = *state;
    lp_session *s = open_and_run("nested", mc->mode, 0);
    size_t i;
    lp_node_info info;
    assert_int_equal(lp_session_find(s, "unused", &i), LP_OK);
    assert_int_equal(lp_session_node(s, i, &info), LP_OK);
    assert_string_equal(info.class_name, "Linear");
    assert_int_equal(info.raw_calls, 0);
    assert_int_equal(info.raw_total_ns, 0);
    assert_int_equal(info.raw_self_ns, 0);
    assert_true(info.calls == 0 && info.total_ns == 0 && info.self_ns == 0);
    assert_int_equal(lp_session_find(s, "nosuch", &i), LP_ERR_NOT_FOUND);
    assert_true(strstr(lp_error_last(), "nosuch") != NULL);
    lp_session_close(s);
}

/* pat_overload: `layer` has only overloads of forward (forward__0, forward__1), as densenet's
 * _DenseLayer: it is called, so it is no container (docs/json-schema.md: a container has no
 * forward and is never called). */
static void overload_not_container(void **state) {
    const model_case *mc = *state;
    lp_session *s = open_and_run("pat_overload", mc->mode, 0);
    size_t i;
    lp_node_info info;
    assert_int_equal(lp_session_find(s, "layer", &i), LP_OK);
    assert_int_equal(lp_session_node(s, i, &info), LP_OK);
    assert_string_equal(info.class_name, "Overload");
    assert_false(info.container);
    assert_int_equal(info.raw_calls, 2 * ITERATIONS); /* once with a tensor, once with a list */
    lp_session_close(s);
}

/* Running again adds iterations to the same tree; counts stay per iteration. */
static void run_twice(void **state) {
    const model_case *mc = *state;
    lp_session *s = open_and_run("nested", mc->mode, 0);
    assert_int_equal(lp_session_run(s), LP_OK);
    lp_run_info ri;
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    assert_int_equal(ri.iterations, 2 * ITERATIONS);
    size_t i;
    lp_node_info info;
    assert_int_equal(lp_session_find(s, "block.proj", &i), LP_OK);
    assert_int_equal(lp_session_node(s, i, &info), LP_OK);
    assert_int_equal(info.iterations, 2 * ITERATIONS);
    assert_int_equal(info.raw_calls, 2 * 2 * ITERATIONS); /* called twice per forward */
    assert_true(info.calls == 2.0);
    assert_int_equal(lp_session_node(s, 0, &info), LP_OK);
    assert_int_equal(info.raw_calls, 2 * ITERATIONS);
    assert_true(info.calls == 1.0);
    assert_true(info.raw_total_ns <= ri.driver_ns);
    /* Until the device work was done: on the CPU the same forwards, a little later. */
    assert_true(ri.synced_ns >= ri.driver_ns);
    assert_true(ri.synced_ns < ri.driver_ns + ri.driver_ns / 2 + 2 * ITERATIONS * 1000000ull);
    lp_session_close(s);
}

#define CASES(X)                                                                                   \
    X(nested)                                                                                      \
    X(resnet18)                                                                                    \
    X(alexnet)                                                                                     \
    X(mobilenet_v2)                                                                                \
    X(transformer) X(lstm_cell) X(forked) X(pat_loops) X(pat_branches) X(pat_lists) X(pat_shared)  \
        X(pat_traced) X(pat_state) X(pat_structured) X(pat_overload)

#define DEF_CASES(name)                                                                            \
    static model_case name##_hooks = {#name, LP_MODE_HOOKS};                                       \
    static model_case name##_markers = {#name, LP_MODE_MARKERS};
CASES(DEF_CASES)
static model_case nested_graph = {"nested", LP_MODE_GRAPH};
static model_case pat_lists_graph = {"pat_lists", LP_MODE_GRAPH};

/* A named test with a case as its initial state. */
#define NAMED(label, fn, mc)                                                                       \
    { label, fn, NULL, NULL, mc }
#define TESTS(name)                                                                                \
    NAMED(#name "/hooks", check_model, &name##_hooks),                                             \
        NAMED(#name "/markers", check_model, &name##_markers),

int main(void) {
    const struct CMUnitTest tests[] = {
        CASES(TESTS)
        /* LP_MODE_GRAPH runs as markers: exact calls where its inference merged two. */
        NAMED("nested/graph", check_model, &nested_graph),
        NAMED("pat_lists/graph", check_model, &pat_lists_graph),
        NAMED("nested_unused/hooks", nested_unused, &nested_hooks),
        NAMED("nested_unused/graph", nested_unused, &nested_graph),
        NAMED("run_twice/hooks", run_twice, &nested_hooks),
        NAMED("run_twice/graph", run_twice, &nested_graph),
        NAMED("nested_unused/markers", nested_unused, &nested_markers),
        NAMED("run_twice/markers", run_twice, &nested_markers),
        NAMED("overload_not_container/hooks", overload_not_container, &pat_overload_hooks),
        NAMED("overload_not_container/markers", overload_not_container, &pat_overload_markers),
    };
    return cmocka_run_group_tests_name("integration.models", tests, NULL, NULL);
}
