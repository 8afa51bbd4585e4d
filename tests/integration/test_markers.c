/* test_markers.c: the markers survive TorchScript's optimizer and change nothing the model
 * computes.
 *
 * For every test model (MODELS below): after the profiling executor's warm-up, the optimised graph
 * of forward holds, for every module type, at least as many enter markers as the marked graph held
 * once its calls were inlined (what the optimizer was given; unrolled loops copy theirs), and as
 * many exit markers as enter markers: none removed. Exact per-call counts are test_models' job. And
 * the output of the marked model is bitwise identical to that of the same file loaded optimised
 * without markers, on the same inputs. Links the shim and the core directly, as the benchmarks do:
 * the census is not public API. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"
#include "lp_shim.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

#define WARMUP 3 /* the profiling executor optimises during the first forwards */

static void must(int rc, const char *what, const char *model) {
    if (rc) fail_msg("%s: %s: %s", model, what, lp_error_last());
}

/* The model's recorded inputs, made with a fixed seed so two copies get the same values. */
static lps_inputs *inputs_for(lps_model *m, const char *model) {
    const char *text = lps_model_default_inputs(m);
    if (!text) fail_msg("%s records no inputs", model);
    lp_input_spec specs[LP_MAX_INPUTS];
    size_t n = 0;
    char line[512];
    lp_options owner; /* keeps the entries' texts until the inputs are made */
    lp_options_init(&owner);
    while (*text && n < LP_MAX_INPUTS) {
        size_t len = strcspn(text, "\n"), got;
        if (len && len < sizeof line) {
            memcpy(line, text, len);
            line[len] = '\0';
            must(lp_input_parse(line, &specs[n], LP_MAX_INPUTS - n, &got, &owner), "input", model);
            n += got;
        }
        text += len + (text[len] == '\n');
    }
    lps_inputs *in = NULL;
    must(lps_inputs_create(m, specs, n, 7, &in), "lps_inputs_create", model);
    lp_options_release(&owner);
    return in;
}

static lps_model *load(const char *model, int exec) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s.pt", LP_MODELS_DIR, model);
    lps_model *m = NULL;
    must(lps_model_load(path, "cpu", exec, &m), "lps_model_load", model);
    return m;
}

static void check_model(void **state) {
    const char *model = *state;
    lps_set_verbose(0);
    lps_model *marked = load(model, LPS_EXEC_MARKERS);
    lps_model *plain = load(model, LPS_EXEC_OPTIMISED);
    lps_inputs *in_marked = inputs_for(marked, model);
    lps_inputs *in_plain = inputs_for(plain, model);
    for (int i = 0; i < WARMUP; i++) {
        must(lps_forward(marked, in_marked), "forward (marked)", model);
        must(lps_forward(plain, in_plain), "forward (plain)", model);
    }

    lps_marker_census c, p;
    must(lps_markers_census(marked, in_marked, &c), "lps_markers_census", model);
    must(lps_markers_census(plain, in_plain, &p), "lps_markers_census (plain)", model);
    print_message("%s: %zu marked call sites (%zu with the module object); forward inlined holds "
                  "%zu enter markers, the optimised graph %zu enters and %zu exits, %zu lost; "
                  "%zu attribute reads (%zu unmarked)\n",
                  model, c.sites, c.object_sites, c.expected, c.enters, c.exits, c.lost,
                  c.attr_reads, p.attr_reads);
    /* Site markers write nothing: where every site has a fixed callee, the optimizer merges the
     * module attribute reads exactly as in the unmarked model (object markers made lstm_cell
     * read 67 attributes per loop body instead of 18). */
    assert_true(p.attr_reads > 0);
    if (c.object_sites == 0) assert_int_equal(c.attr_reads, p.attr_reads);
    assert_true(c.sites > 0);
    assert_true(c.expected > 0);
    assert_int_equal(c.lost, 0);
    assert_int_equal(c.exits, c.enters);
    assert_true(c.enters >= c.expected);
    /* No loop to unroll: the very same markers. */
    if (!strcmp(model, "nested") || !strcmp(model, "resnet18") || !strcmp(model, "pat_shared"))
        assert_int_equal(c.enters, c.expected);

    void *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    must(lps_forward_output(plain, in_plain, &a, &na), "output (plain)", model);
    must(lps_forward_output(marked, in_marked, &b, &nb), "output (marked)", model);
    assert_true(na > 0);
    assert_int_equal(na, nb);
    if (memcmp(a, b, na) != 0) fail_msg("%s: the marked model's output differs", model);
    free(a);
    free(b);

    lps_inputs_free(in_marked);
    lps_inputs_free(in_plain);
    lps_model_free(marked);
    lps_model_free(plain);
}

#define MODELS(X)                                                                                  \
    X(nested)                                                                                      \
    X(resnet18)                                                                                    \
    X(mobilenet_v2)                                                                                \
    X(transformer)                                                                                 \
    X(lstm_cell) X(forked) X(pat_loops) X(pat_branches) X(pat_lists) X(pat_shared) X(pat_traced)   \
        X(pat_state) X(pat_structured) X(pat_overload)
#define TEST(name) {#name, check_model, NULL, NULL, (void *)#name},

int main(void) {
    const struct CMUnitTest tests[] = {MODELS(TEST)};
    return cmocka_run_group_tests_name("integration.markers", tests, NULL, NULL);
}
