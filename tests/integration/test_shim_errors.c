/* test_shim_errors.c: the shim's side of the one error channel, against the real libtorch.
 *
 * The shim reports into the library's thread-local message (lp_error_set) itself, so a status
 * from any lps_* function comes with its own message in lp_error_last(), with no copying by the
 * caller; and an exception thrown inside libtorch comes back as a status and a one-line message.
 * Each check first leaves a sentinel message behind, so a stale message cannot pass for a fresh
 * one. Drives the shim directly (linked with lp_shim and lp_core, as the benchmarks are). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/error.h"
#include "layerprof.h"
#include "lp_shim.h"
#include "model/tree.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

#define SENTINEL "sentinel message of test_shim_errors"

static void prime(void) {
    lp_error_set(LP_ERR_STATE, "%s", SENTINEL);
}

/* The call failed with `code` and left a message of its own, on one line. */
static void expect_fresh(int rc, int code, const char *part) {
    if (rc != code) fail_msg("returned %d (%s), expected %d", rc, lp_error_last(), code);
    const char *msg = lp_error_last();
    if (!msg[0] || strstr(msg, SENTINEL)) fail_msg("failed without a message of its own");
    if (part && !strstr(msg, part)) fail_msg("message '%s' does not say '%s'", msg, part);
    if (strchr(msg, '\n')) fail_msg("message '%s' is more than one line", msg);
}

static void shim_failures_leave_their_message_in_lp_error_last(void **state) {
    (void)state;
    lps_set_verbose(0);
    lps_model *m = NULL;
    prime();
    expect_fresh(lps_model_load(LP_MODELS_DIR "/no-such-model.pt", "cpu", 0, &m), LP_ERR_IO,
                 "cannot open model");
    assert_null(m);

    prime();
    expect_fresh(lps_model_load(LP_MODELS_DIR "/nested.pt", "tpu", 0, &m), LP_ERR_INVALID,
                 "device 'tpu'");

    assert_int_equal(lps_model_load(LP_MODELS_DIR "/nested.pt", "cpu", 0, &m), LP_OK);
    prime();
    const char *path, *cls;
    int32_t parent;
    expect_fresh(lps_model_module(m, 100000, &path, &cls, &parent), LP_ERR_INVALID, "out of range");
    lps_model_free(m);
}

/* A forward on inputs of the wrong rank throws inside TorchScript (a c10::Error with a
 * traceback): the shim turns it into LP_ERR_RUNTIME and one line. */
static void an_exception_inside_libtorch_becomes_a_status_and_one_line(void **state) {
    (void)state;
    lps_model *m = NULL;
    assert_int_equal(lps_model_load(LP_MODELS_DIR "/nested.pt", "cpu", 0, &m), LP_OK);
    lp_input_spec spec;
    assert_int_equal(lp_input_spec_parse("2x3", &spec), LP_OK);
    lps_inputs *in = NULL;
    assert_int_equal(lps_inputs_create(m, &spec, 1, 0, &in), LP_OK);
    prime();
    expect_fresh(lps_forward(m, in), LP_ERR_RUNTIME, NULL);

    /* The next failure, the core's own, replaces it: one channel, the latest failure's text. */
    lp_tree t;
    lp_tree_init(&t);
    assert_int_equal(lp_tree_add(&t, "x", "X", 7), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "module 'x': parent 7 does not exist");
    lp_tree_free(&t);

    prime();
    expect_fresh(lps_inputs_set(in, 0, "abc", 3), LP_ERR_INVALID, "holds");
    lps_inputs_free(in);
    lps_model_free(m);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(shim_failures_leave_their_message_in_lp_error_last),
        cmocka_unit_test(an_exception_inside_libtorch_becomes_a_status_and_one_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
