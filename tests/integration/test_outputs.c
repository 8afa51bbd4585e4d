/* test_outputs.c: profiling never changes a model's outputs.
 *
 * For resnet18, lstm_cell and transformer in the hooks and the graph mode, with memory and op
 * events recorded (everything that installs a callback), the output of a profiled forward is
 * bitwise identical to unprofiled forwards of the same session before and after it. The graph
 * mode's first forwards run the profiling executor (a different graph), so the comparison starts
 * after a few unprofiled forwards; the model's output is then deterministic on a CPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

#define SETTLE 3 /* unprofiled forwards before comparing (graph mode's profiling runs) */

typedef struct out_case {
    const char *model;
    lp_mode mode;
} out_case;

static void forward(lp_session *s, int profiled, void **bytes, size_t *size) {
    int rc = lp_session_forward_output(s, profiled, bytes, size);
    if (rc) fail_msg("lp_session_forward_output(profiled %d): %s", profiled, lp_error_last());
    assert_non_null(*bytes);
}

static void assert_same_bytes(const char *what, const void *a, size_t na, const void *b,
                              size_t nb) {
    if (na != nb) fail_msg("%s: %zu bytes, expected %zu", what, nb, na);
    if (memcmp(a, b, na) != 0) {
        size_t i = 0;
        while (((const unsigned char *)a)[i] == ((const unsigned char *)b)[i])
            i++;
        fail_msg("%s: the outputs differ first at byte %zu of %zu", what, i, na);
    }
}

static void profiled_output_equals_unprofiled(void **state) {
    const out_case *c = *state;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pt", LP_MODELS_DIR, c->model);
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.mode = c->mode;
    o.memory = 1;
    o.events = 1;
    o.shapes = 1;
    lp_session *s = NULL;
    if (lp_session_open(&s, &o)) fail_msg("lp_session_open(%s): %s", path, lp_error_last());

    void *bytes;
    size_t size;
    for (int i = 0; i < SETTLE; i++) {
        forward(s, 0, &bytes, &size);
        free(bytes);
    }
    void *before, *profiled, *after;
    size_t n_before, n_profiled, n_after;
    forward(s, 0, &before, &n_before);
    assert_true(n_before > 0);
    forward(s, 1, &profiled, &n_profiled);
    forward(s, 0, &after, &n_after);
    assert_same_bytes("unprofiled, run twice", before, n_before, after, n_after);
    assert_same_bytes("profiled vs unprofiled", before, n_before, profiled, n_profiled);

    /* The profiled forward really was profiled: the root got its call, and ops were recorded. */
    lp_node_info root;
    assert_int_equal(lp_session_node(s, 0, &root), LP_OK);
    assert_int_equal(root.raw_calls, 1);
    assert_int_equal(root.iterations, 1);
    assert_int_equal(root.cpu_mem.recorded, 1);
    size_t ops = 0;
    assert_int_equal(lp_session_op_count(s, &ops), LP_OK);
    assert_true(ops > 0);

    free(before);
    free(profiled);
    free(after);
    lp_session_close(s);
}

static const out_case k_cases[] = {
    {"resnet18", LP_MODE_HOOKS},  {"resnet18", LP_MODE_GRAPH},    {"lstm_cell", LP_MODE_HOOKS},
    {"lstm_cell", LP_MODE_GRAPH}, {"transformer", LP_MODE_HOOKS}, {"transformer", LP_MODE_GRAPH},
};
#define N_CASES (sizeof k_cases / sizeof k_cases[0])

int main(void) {
    struct CMUnitTest tests[N_CASES];
    char names[N_CASES][96];
    for (size_t i = 0; i < N_CASES; i++) {
        snprintf(names[i], sizeof names[i], "%s_%s_profiled_output_equals_unprofiled",
                 k_cases[i].model, k_cases[i].mode == LP_MODE_HOOKS ? "hooks" : "graph");
        tests[i] = (struct CMUnitTest){.name = names[i],
                                       .test_func = profiled_output_equals_unprofiled,
                                       .initial_state = (void *)&k_cases[i]};
    }
    return _cmocka_run_group_tests("outputs", tests, N_CASES, NULL, NULL);
}
