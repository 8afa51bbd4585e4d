/* test_cuda_device.c: `--device cuda` and the CUDA options, on any machine.
 *
 *     test_cuda_device LAYERPROF_BINARY
 *
 * Without a usable CUDA device (a CPU-only libtorch, no GPU, no driver) a CUDA session must fail
 * cleanly: status LP_ERR_UNSUPPORTED, exit code 2 (a usage error: run it another way), one line
 * "layerprof: error: CUDA is not available: <why>", no crash. With one, the same commands must
 * succeed and show the CUDA columns. The GPU figures themselves are checked by test_cuda_gpu (ctest
 * label gpu). */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "layerprof.h"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif
#ifndef LP_TEST_HAVE_NVTX
#define LP_TEST_HAVE_NVTX 0
#endif

#define NOT_AVAILABLE "CUDA is not available: "

static const char *g_cli;
static int g_has_cuda; /* decided once in main */

/* Runs the CLI with `args` (a shell-quoted tail), stdout and stderr together. Returns the exit
 * code, or -1 when it died from a signal. */
static int run_cli(const char *args, char *out, size_t size) {
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", g_cli, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    if (!WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

static void test_api_refuses_or_runs_cuda(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    o.model_path = LP_MODELS_DIR "/nested.pt";
    o.device = "cuda";
    o.warmup = 1;
    o.iterations = 1;
    o.memory = 1;
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &o);
    if (!g_has_cuda) {
        assert_int_equal(rc, LP_ERR_UNSUPPORTED);
        assert_null(s);
        assert_memory_equal(lp_error_last(), NOT_AVAILABLE, strlen(NOT_AVAILABLE));
        assert_null(strchr(lp_error_last(), '\n'));
        return;
    }
    assert_int_equal(rc, LP_OK);
    assert_int_equal(lp_session_run(s), LP_OK);
    lp_node_info info;
    assert_int_equal(lp_session_node(s, 0, &info), LP_OK);
    assert_true(info.cuda_recorded);
    assert_true(info.cuda_mem.recorded);
    assert_true(info.raw_cuda_total_ns > 0);
    lp_session_close(s);
}

static void test_cli_says_cuda_is_not_available_and_exits_2(void **state) {
    (void)state;
    char out[8192];
    int rc = run_cli("'" LP_MODELS_DIR "/nested.pt' --device cuda --warmup 1 --iterations 1", out,
                     sizeof out);
    if (!g_has_cuda) {
        assert_int_equal(rc, 2);
        assert_non_null(strstr(out, "layerprof: error: " NOT_AVAILABLE));
        return;
    }
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "Self CUDA total"));
    assert_non_null(strstr(out, "CUDA time: "));
}

static void test_cli_refuses_a_device_index_that_does_not_exist(void **state) {
    (void)state;
    char out[8192];
    int rc =
        run_cli("'" LP_MODELS_DIR "/nested.pt' --device cuda:99 --iterations 1", out, sizeof out);
    assert_int_equal(rc, 2);
    assert_non_null(strstr(out, "layerprof: error: " NOT_AVAILABLE));
}

static void test_cli_cuda_timing_values(void **state) {
    (void)state;
    char out[8192];
    assert_int_equal(
        run_cli("'" LP_MODELS_DIR "/nested.pt' --cuda-timing sometimes", out, sizeof out), 2);
    assert_non_null(strstr(out, "--cuda-timing must be auto, cupti, events or off"));
    /* On the CPU the CUDA timing options change nothing. */
    assert_int_equal(run_cli("'" LP_MODELS_DIR "/nested.pt' --cuda-timing cupti --iterations 1",
                             out, sizeof out),
                     0);
    assert_null(strstr(out, "CUDA total"));
}

static void test_cli_nvtx_on_the_cpu(void **state) {
    (void)state;
    char out[8192];
    int rc =
        run_cli("'" LP_MODELS_DIR "/nested.pt' --nvtx --events --iterations 1", out, sizeof out);
    if (LP_TEST_HAVE_NVTX) {
        assert_int_equal(rc, 0);
        assert_non_null(strstr(out, "NVTX: a range per module call and per op"));
    } else {
        assert_int_equal(rc, 2);
        assert_non_null(strstr(out, "NVTX ranges are not available"));
    }
}

static void test_api_rejects_an_unknown_cuda_timing(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    o.model_path = LP_MODELS_DIR "/nested.pt";
    o.cuda_timing = (lp_cuda_timing)17;
    lp_session *s = NULL;
    assert_int_equal(lp_session_open(&s, &o), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "unknown CUDA timing 17"));
    assert_null(s);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s LAYERPROF_BINARY\n", argv[0]);
        return 2;
    }
    g_cli = argv[1];
    /* The device check runs before the model is read: a missing file tells the two apart. */
    lp_options o;
    lp_options_init(&o);
    o.model_path = "/nonexistent/model.pt";
    o.device = "cuda";
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &o);
    g_has_cuda = !(rc == LP_ERR_UNSUPPORTED && strstr(lp_error_last(), NOT_AVAILABLE));
    printf("CUDA device: %s (%s)\n", g_has_cuda ? "yes" : "no", lp_error_last());
    lp_session_close(s);

    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_api_refuses_or_runs_cuda),
        cmocka_unit_test(test_cli_says_cuda_is_not_available_and_exits_2),
        cmocka_unit_test(test_cli_refuses_a_device_index_that_does_not_exist),
        cmocka_unit_test(test_cli_cuda_timing_values),
        cmocka_unit_test(test_cli_nvtx_on_the_cpu),
        cmocka_unit_test(test_api_rejects_an_unknown_cuda_timing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
