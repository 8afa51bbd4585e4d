/* test_cuda_gpu.c: CUDA kernel time and CUDA memory per module, on a real GPU (ctest label gpu).
 *
 * Without a usable CUDA device it prints "skipped: no CUDA device (<why>)" and exits 77, which
 * ctest reports as skipped (SKIP_RETURN_CODE). With one:
 *  (a) cuda_matmul: a 4096x4096 matmul module next to a 16x16 one: the big one holds nearly all
 *      of the CUDA total, with CUPTI and with the CUDA-events fallback;
 *  (b) resnet18: per-module CUDA times add up to the root's (every module's total is its self
 *      plus its children's totals; the root itself launches next to nothing), and the root's
 *      CUDA total fits in the forwards' wall time;
 *  (c) memory_known on CUDA: the caching allocator's block sizes, exactly.
 * Models: LP_MODELS_DIR (models/export.py) and LP_CUDA_MODELS_DIR (cuda_models.py, at build). */
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
#ifndef LP_CUDA_MODELS_DIR
#error "LP_CUDA_MODELS_DIR must be defined"
#endif

#define SKIP 77
#define NOT_AVAILABLE "CUDA is not available: "

static int have(const char *path) {
    return access(path, R_OK) == 0;
}

/* The session a test has open: closed by close_session after the test, passed or failed, so a
 * failing test does not leave CUPTI taken for the tests after it. */
static lp_session *g_open;

static int close_session(void **state) {
    (void)state;
    lp_session_close(g_open);
    g_open = NULL;
    return 0;
}

/* Opens and runs `model` on cuda; NULL (and a printed reason) when the timing method asked for
 * cannot be used here, which the caller turns into a skip. The session is closed after the test. */
static lp_session *run_cuda(const char *model, lp_cuda_timing timing, int memory, int iterations) {
    lp_options o;
    lp_options_init(&o);
    o.model_path = model;
    o.device = "cuda";
    o.cuda_timing = timing;
    o.memory = memory;
    o.warmup = 3;
    o.iterations = iterations;
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &o);
    g_open = s;
    if (rc == LP_ERR_UNSUPPORTED && timing == LP_CUDA_TIMING_CUPTI) {
        printf("skipped: %s\n", lp_error_last());
        return NULL;
    }
    if (rc) fail_msg("lp_session_open(%s): %s: %s", model, lp_status_name(rc), lp_error_last());
    rc = lp_session_run(s);
    if (rc) {
        fail_msg("lp_session_run(%s): %s: %s", model, lp_status_name(rc), lp_error_last());
    }
    return s;
}

static lp_node_info node(lp_session *s, const char *path) {
    size_t i = 0;
    lp_node_info info;
    memset(&info, 0, sizeof info);
    if (lp_session_find(s, path, &i) != LP_OK) fail_msg("no node '%s': %s", path, lp_error_last());
    assert_int_equal(lp_session_node(s, i, &info), LP_OK);
    return info;
}

/* The rendered report, for the notes (which method, dropped records). Caller frees. */
static char *report(lp_session *s) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(lp_session_render(s, LP_FORMAT_TREE, f), LP_OK);
    fclose(f);
    return buf;
}

/* ---- (a) the big matmul holds the CUDA time ------------------------------------------------- */

/* CUPTI times the kernels themselves, which the host's load cannot stretch. CUDA events time the
 * stream between two events that the host records around a module: a host thread preempted
 * between `small`'s start event and its kernel's launch, once the GPU has drained `big`, puts the
 * preemption in `small`'s time. So with events the test keeps the best of MATMUL_EVENT_SESSIONS
 * sessions (the least `small` share): to fail, every one of them must have been interrupted in
 * that window. */
#define MATMUL_EVENT_SESSIONS 3

static void check_matmul(lp_cuda_timing timing, const char *note, double min_share) {
    const char *model = LP_CUDA_MODELS_DIR "/cuda_matmul.pt";
    if (!have(model)) {
        printf("skipped: %s was not exported (LP_PYTHON without torch?)\n", model);
        skip();
    }
    int sessions = timing == LP_CUDA_TIMING_EVENTS ? MATMUL_EVENT_SESSIONS : 1;
    lp_session *s = NULL;
    lp_node_info root, big, small;
    double share = 0, small_share = 1;
    for (int k = 0; k < sessions; k++) {
        if (k) close_session(NULL); /* the previous session's CUDA state goes first */
        s = run_cuda(model, timing, 0, 5);
        if (!s) skip();
        root = node(s, "");
        big = node(s, "big");
        small = node(s, "small");
        assert_true(root.cuda_recorded);
        assert_true(root.cuda_total_ns > 0);
        share = big.cuda_total_ns / root.cuda_total_ns;
        small_share = small.cuda_total_ns / root.cuda_total_ns;
        printf("session %d: big %.1f%%, small %.2f%% of the CUDA total %.3f ms\n", k + 1,
               100 * share, 100 * small_share, root.cuda_total_ns / 1e6);
        if (share >= min_share && small_share < 0.05 &&
            big.cuda_total_ns > 100 * small.cuda_total_ns)
            break;
    }
    char *text = report(s);
    printf("%s", text);
    assert_non_null(strstr(text, note));
    assert_null(strstr(text, "dropped"));
    assert_true(share >= min_share);
    assert_true(small_share < 0.05);
    assert_true(big.cuda_total_ns > 100 * small.cuda_total_ns);
    /* A matmul of 137 GFLOP takes at least 0.1 ms on any GPU there is. */
    assert_true(big.cuda_total_ns > 1e5);
    free(text);
}

static void test_big_matmul_holds_most_cuda_time_cupti(void **state) {
    (void)state;
    check_matmul(LP_CUDA_TIMING_CUPTI, "CUDA time: CUPTI activity records", 0.95);
}

static void test_big_matmul_holds_most_cuda_time_events(void **state) {
    (void)state;
    check_matmul(LP_CUDA_TIMING_EVENTS, "CUDA time: CUDA events", 0.80);
}

/* ---- (b) resnet18: the parts add up ---------------------------------------------------------- */

static void test_resnet18_module_cuda_times_add_up(void **state) {
    (void)state;
    const char *model = LP_MODELS_DIR "/resnet18.pt";
    if (!have(model)) {
        printf("skipped: %s missing (build the models target)\n", model);
        skip();
    }
    lp_session *s = run_cuda(model, LP_CUDA_TIMING_CUPTI, 0, 10);
    if (!s) skip();
    size_t n = 0;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    lp_node_info root;
    assert_int_equal(lp_session_node(s, 0, &root), LP_OK);
    assert_true(root.raw_cuda_total_ns > 0);

    uint64_t selves = 0, top = 0;
    for (size_t i = 0; i < n; i++) {
        lp_node_info m, c;
        assert_int_equal(lp_session_node(s, i, &m), LP_OK);
        selves += m.raw_cuda_self_ns;
        if (m.parent == 0) top += m.raw_cuda_total_ns;
        /* Every module: total = self + its children's totals. */
        uint64_t kids = 0;
        for (size_t j = i + 1; j < n; j++) {
            assert_int_equal(lp_session_node(s, j, &c), LP_OK);
            if ((size_t)c.parent == i) kids += c.raw_cuda_total_ns;
        }
        assert_int_equal(m.raw_cuda_total_ns, m.raw_cuda_self_ns + kids);
    }
    assert_int_equal(selves, root.raw_cuda_total_ns);
    /* The root itself only flattens (a view): its children hold the kernels, within a few %. */
    double top_share = (double)top / (double)root.raw_cuda_total_ns;
    printf("top-level modules hold %.2f%% of the root's CUDA total (%.3f ms per forward)\n",
           100 * top_share, root.cuda_total_ns / 1e6);
    assert_true(top_share >= 0.97);
    /* Device time of one stream cannot exceed the forwards' wall time until the device was idle
     * (synced_ns, below). Not the driver's time: that ends at the last launch, which a GPU slower
     * than its host's launches finishes later. */
    lp_run_info ri;
    assert_int_equal(lp_session_run_info(s, &ri), LP_OK);
    /* The forward's true time ends when its device work is done, after its launches: the report
     * says it, with the CUDA time beside it. */
    printf("forward %.3f ms per iteration until the device was idle, %.3f ms until it returned\n",
           (double)ri.synced_ns / 1e6 / (double)ri.iterations,
           (double)ri.driver_ns / 1e6 / (double)ri.iterations);
    assert_true(ri.synced_ns >= ri.driver_ns);
    assert_true(root.raw_cuda_total_ns <= ri.synced_ns);
    char *text = report(s);
    assert_non_null(strstr(text, "forward: "));
    assert_non_null(strstr(text, "until its device work was done"));
    free(text);
    /* Convolutions launch kernels: every Conv2d has CUDA time. */
    for (size_t i = 0; i < n; i++) {
        lp_node_info m;
        assert_int_equal(lp_session_node(s, i, &m), LP_OK);
        if (strcmp(m.class_name, "Conv2d") == 0 && m.raw_cuda_self_ns == 0)
            fail_msg("%s has no CUDA time", m.path);
    }
}

/* ---- (c) CUDA memory of known allocations ---------------------------------------------------- */

/* c10's CUDACachingAllocator hands out blocks of round_size(n) = 512 * ceil(n / 512) bytes (with
 * the default configuration: no roundup_power2_divisions), and reports the block size. The 20 MiB
 * segment a 4 MB block is split from is not what a tensor holds. */
#define CUDA_BLOCK(n) ((((int64_t)(n) + 511) / 512) * 512)

static void test_memory_known_on_cuda(void **state) {
    (void)state;
    const char *model = LP_MODELS_DIR "/memory_known.pt";
    if (!have(model)) {
        printf("skipped: %s missing (build the models target)\n", model);
        skip();
    }
    lp_session *s = run_cuda(model, LP_CUDA_TIMING_AUTO, 1, 2);
    const int64_t big = CUDA_BLOCK(4000000), small = CUDA_BLOCK(4);
    assert_int_equal(big, 4000256);
    assert_int_equal(small, 512);

    lp_node_info mk = node(s, "make_big"), tb = node(s, "temp_big"), root = node(s, "");
    assert_true(mk.cuda_mem.recorded);
    assert_true(mk.cuda_mem.retained == (double)big);
    assert_true(mk.cuda_mem.peak == (double)big);
    assert_true(tb.cuda_mem.retained == (double)small);
    assert_true(tb.cuda_mem.peak == (double)(big + small));
    assert_true(root.cuda_mem.retained == (double)big);
    assert_true(root.cuda_mem.peak == (double)(2 * big + small));
    assert_true(root.cuda_mem.net == (double)big);

    char *text = report(s);
    printf("%s", text);
    assert_non_null(strstr(text, "Self CUDA Mem"));
    assert_non_null(strstr(text, "Peak CUDA Mem"));
    assert_non_null(strstr(text, "CUDA total"));
    free(text);
}

int main(void) {
    /* The caching allocator's rounding above assumes its default configuration. */
    unsetenv("PYTORCH_CUDA_ALLOC_CONF");
    unsetenv("PYTORCH_ALLOC_CONF");
    /* The device check runs before the model is read: a missing file tells the two apart. */
    lp_options o;
    lp_options_init(&o);
    o.model_path = "/nonexistent/model.pt";
    o.device = "cuda";
    lp_session *s = NULL;
    if (lp_session_open(&s, &o) == LP_ERR_UNSUPPORTED &&
        strncmp(lp_error_last(), NOT_AVAILABLE, strlen(NOT_AVAILABLE)) == 0) {
        printf("skipped: no CUDA device (%s)\n", lp_error_last());
        return SKIP;
    }
    lp_session_close(s);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_big_matmul_holds_most_cuda_time_cupti, close_session),
        cmocka_unit_test_teardown(test_big_matmul_holds_most_cuda_time_events, close_session),
        cmocka_unit_test_teardown(test_resnet18_module_cuda_times_add_up, close_session),
        cmocka_unit_test_teardown(test_memory_known_on_cuda, close_session),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
