/* test_cupti.c: src/collect/cupti.c against a fake libcupti (fake_cupti.c) that keeps real
 * CUPTI's rules: no external-correlation record without an API record, callbacks only where
 * enabled, a runtime launch's kernel carrying the runtime call's correlation id. Every way of
 * tagging launches must put each kernel, memcpy and memset into the scope it was launched in;
 * removing what makes the tags (the callbacks, the API kinds) makes these tests fail, with no GPU.
 *
 * Built only where the CUDA headers were found (LP_HAVE_CUPTI); ctest points LAYERPROF_CUPTI at
 * the fake. Without them it says so and exits 77 (skipped). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/cupti.h"
#include "layerprof.h"

#if LP_HAVE_CUPTI
#include <dlfcn.h>

enum { FAKE_RUNTIME_KERNEL, FAKE_DRIVER_KERNEL, FAKE_RUNTIME_MEMCPY, FAKE_RUNTIME_OTHER };

static void (*fake_reset)(int other_tool);
static void (*fake_launch)(int what, uint64_t start, uint64_t end);
static uint64_t (*fake_callbacks_on_other_calls)(void);

/* What the join handed over, per scope. */
#define MAX_SCOPES 8
typedef struct joined {
    uint64_t scope[MAX_SCOPES], ns[MAX_SCOPES];
    int n;
} joined;

static int sink(void *ctx, uint64_t scope, uint64_t ns) {
    joined *j = ctx;
    for (int i = 0; i < j->n; i++)
        if (j->scope[i] == scope) {
            j->ns[i] += ns;
            return 0;
        }
    if (j->n == MAX_SCOPES) return 1;
    j->scope[j->n] = scope;
    j->ns[j->n++] = ns;
    return 0;
}

static uint64_t ns_of(const joined *j, uint64_t scope) {
    for (int i = 0; i < j->n; i++)
        if (j->scope[i] == scope) return j->ns[i];
    return 0;
}

enum { A = 11, B = 22 };

static lp_cupti *claim(const char *tagging) {
    setenv("LAYERPROF_CUPTI_TAGGING", tagging, 1);
    fake_reset(0);
    char why[200] = "";
    lp_cupti *c = lp_cupti_claim(why, sizeof why);
    if (!c) fail_msg("lp_cupti_claim(%s): %s", tagging, why);
    if (lp_cupti_enable(c, why, sizeof why)) fail_msg("lp_cupti_enable: %s", why);
    return c;
}

/* scope A { runtime kernel [0,100); scope B { driver kernel [100,250) }; memcpy [300,310) },
 * a kernel outside any scope [400,405), and calls that put nothing on the device. */
static void launch_the_pattern(lp_cupti *c) {
    fake_launch(FAKE_RUNTIME_OTHER, 0, 0);
    lp_cupti_push(c, A);
    fake_launch(FAKE_RUNTIME_OTHER, 0, 0);
    fake_launch(FAKE_RUNTIME_KERNEL, 0, 100);
    lp_cupti_push(c, B);
    fake_launch(FAKE_DRIVER_KERNEL, 100, 250);
    lp_cupti_pop(c, B);
    fake_launch(FAKE_RUNTIME_MEMCPY, 300, 310);
    lp_cupti_pop(c, A);
    fake_launch(FAKE_RUNTIME_KERNEL, 400, 405);
}

static void check_the_pattern(const char *tagging) {
    lp_cupti *c = claim(tagging);
    launch_the_pattern(c);
    joined j = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cupti_flush_join(c, sink, &j, &st), LP_OK);
    assert_int_equal(ns_of(&j, A), 110); /* the runtime kernel and the memcpy */
    assert_int_equal(ns_of(&j, B), 150); /* the driver-only kernel (Triton's way) */
    assert_int_equal(j.n, 2);
    assert_int_equal(st.kernels, 3);
    assert_int_equal(st.memcpys, 1);
    assert_int_equal(st.attributed, 3);
    assert_int_equal(st.unattributed, 1);
    assert_int_equal(st.unattributed_ns, 5);
    assert_int_equal(lp_cupti_push_failures(c), 0);
    assert_int_equal(lp_cupti_tags_lost(c), 0);
    lp_cupti_release(c);
}

static void test_callbacks_tag_every_launch(void **state) {
    (void)state;
    check_the_pattern("callbacks");
    /* Only the functions that put work on the device call back. */
    assert_int_equal(fake_callbacks_on_other_calls(), 0);
}

static void test_api_records_of_launches_tag_every_launch(void **state) {
    (void)state;
    check_the_pattern("api-launches");
}

static void test_api_records_of_every_call_tag_every_launch(void **state) {
    (void)state;
    check_the_pattern("api-all");
}

static void test_callbacks_are_the_default(void **state) {
    (void)state;
    unsetenv("LAYERPROF_CUPTI_TAGGING");
    fake_reset(0);
    char why[200];
    lp_cupti *c = lp_cupti_claim(why, sizeof why);
    assert_non_null(c);
    assert_int_equal(lp_cupti_tagging(c), LP_CUPTI_TAGGING_CALLBACKS);
    assert_string_equal(lp_cupti_tagging_name(lp_cupti_tagging(c)), "launch callbacks");
    lp_cupti_release(c);
}

static void test_an_unknown_tagging_is_refused(void **state) {
    (void)state;
    setenv("LAYERPROF_CUPTI_TAGGING", "psychic", 1);
    char why[200] = "";
    assert_null(lp_cupti_claim(why, sizeof why));
    assert_non_null(strstr(why, "callbacks, api-launches or api-all"));
}

static void test_another_tool_holding_cupti_is_said(void **state) {
    (void)state;
    setenv("LAYERPROF_CUPTI_TAGGING", "callbacks", 1);
    fake_reset(1);
    char why[200] = "";
    assert_null(lp_cupti_claim(why, sizeof why));
    assert_non_null(strstr(why, "CUPTI is taken by another tool"));
}

/* Nothing is tagged between runs: a launch after the flush is in no scope's time. */
static void test_launches_after_a_run_are_not_tagged(void **state) {
    (void)state;
    lp_cupti *c = claim("callbacks");
    joined j = {0};
    lp_cuda_join_stats st = {0};
    assert_int_equal(lp_cupti_flush_join(c, sink, &j, &st), LP_OK);
    lp_cupti_push(c, A);
    fake_launch(FAKE_RUNTIME_KERNEL, 0, 100);
    lp_cupti_pop(c, A);
    char why[200];
    assert_int_equal(lp_cupti_enable(c, why, sizeof why), 0);
    assert_int_equal(lp_cupti_flush_join(c, sink, &j, &st), LP_OK);
    assert_int_equal(j.n, 0);
    lp_cupti_release(c);
}

/* A run longer than the tag buffer holds: joined after each forward once half full, nothing is
 * lost; never joined, the excess is counted, never written past the buffer. */
#define LAUNCHES 300000 /* two tags each (runtime and driver): more than half of 2^20 */
static void run_long(lp_cupti *c, int forwards, int join_between, joined *j,
                     lp_cuda_join_stats *st) {
    for (int f = 0; f < forwards; f++) {
        lp_cupti_push(c, A);
        for (int i = 0; i < LAUNCHES; i++)
            fake_launch(FAKE_RUNTIME_KERNEL, 0, 1);
        lp_cupti_pop(c, A);
        if (join_between) assert_int_equal(lp_cupti_iteration_done(c, sink, j, st), LP_OK);
    }
    assert_int_equal(lp_cupti_flush_join(c, sink, j, st), LP_OK);
}

static void test_long_runs_join_as_they_go(void **state) {
    (void)state;
    lp_cupti *c = claim("callbacks");
    joined j = {0};
    lp_cuda_join_stats st = {0};
    run_long(c, 3, 1, &j, &st);
    assert_int_equal(ns_of(&j, A), 3 * LAUNCHES);
    assert_int_equal(st.unattributed, 0);
    assert_int_equal(lp_cupti_tags_lost(c), 0);
    lp_cupti_release(c);

    c = claim("callbacks");
    memset(&j, 0, sizeof j);
    memset(&st, 0, sizeof st);
    run_long(c, 2, 0, &j, &st); /* 1.2M tags into 2^20 slots */
    assert_int_equal(lp_cupti_tags_lost(c), 2 * 2 * LAUNCHES - (1u << 20));
    assert_true(st.unattributed > 0);
    assert_int_equal(ns_of(&j, A) + st.unattributed_ns, 2 * LAUNCHES);
    lp_cupti_release(c);
}

int main(void) {
    const char *lib = getenv("LAYERPROF_CUPTI");
    void *h = lib ? dlopen(lib, RTLD_NOW) : NULL;
    if (!h) {
        printf("skipped: LAYERPROF_CUPTI names no fake CUPTI (%s)\n", lib ? dlerror() : "unset");
        return 77;
    }
    *(void **)&fake_reset = dlsym(h, "fake_cupti_reset");
    *(void **)&fake_launch = dlsym(h, "fake_cupti_launch");
    *(void **)&fake_callbacks_on_other_calls = dlsym(h, "fake_cupti_callbacks_on_other_calls");
    if (!fake_reset || !fake_launch || !fake_callbacks_on_other_calls) {
        printf("%s is not the fake CUPTI\n", lib);
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callbacks_tag_every_launch),
        cmocka_unit_test(test_api_records_of_launches_tag_every_launch),
        cmocka_unit_test(test_api_records_of_every_call_tag_every_launch),
        cmocka_unit_test(test_callbacks_are_the_default),
        cmocka_unit_test(test_an_unknown_tagging_is_refused),
        cmocka_unit_test(test_another_tool_holding_cupti_is_said),
        cmocka_unit_test(test_launches_after_a_run_are_not_tagged),
        cmocka_unit_test(test_long_runs_join_as_they_go),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

int main(void) {
    printf("skipped: this build found no CUDA headers (CUPTI): nothing of cupti.c to test\n");
    return 77;
}

#endif
