/* test_memory.c: per-module memory (retained, peak) through the public API, on the real libtorch.
 *
 * memory_known.pt has known figures (models/memory_known.expected.json, see models/export.py);
 * on resnet18 every Conv2d must retain exactly its output tensor, whose size the test computes
 * from the layer's shape arithmetic. */
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

#define WARMUP(mode) ((mode) == LP_MODE_GRAPH ? 2 : 1) /* graph: the profiling executor */
#define ITERATIONS 2

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

static lp_node_info node_at(lp_session *s, const char *path) {
    size_t i = 0;
    lp_node_info info;
    memset(&info, 0, sizeof info);
    if (lp_session_find(s, path, &i) != LP_OK) fail_msg("no node '%s': %s", path, lp_error_last());
    assert_int_equal(lp_session_node(s, i, &info), LP_OK);
    return info;
}

static const char *mode_name(lp_mode m) {
    return m == LP_MODE_GRAPH ? "graph" : "hooks";
}

/* ---- memory_known ---------------------------------------------------------------------------- */

/* Every iteration must see the same bytes: min == max == mean. */
static void expect_exact(const char *what, const char *path, lp_mode mode, double mean,
                         int64_t min, int64_t max, int64_t want) {
    if (mean != (double)want || min != want || max != want)
        fail_msg("memory_known/%s: '%s' %s mean %.1f (min %lld, max %lld), expected %lld",
                 mode_name(mode), path, what, mean, (long long)min, (long long)max,
                 (long long)want);
}

static void memory_known(void **state) {
    lp_mode mode = *(const lp_mode *)*state;
    char file[1024];
    snprintf(file, sizeof file, "%s/memory_known.expected.json", LP_MODELS_DIR);
    json_error_t err;
    json_t *expected = json_load_file(file, 0, &err);
    if (!expected) fail_msg("cannot read %s: %s", file, err.text);
    json_t *modules = json_object_get(expected, "modules");
    assert_non_null(modules);

    /* The figures the brief states, independently of the JSON file. */
    const json_t *mb = json_object_get(modules, "make_big");
    const json_t *tb = json_object_get(modules, "temp_big");
    assert_int_equal(json_integer_value(json_object_get(mb, "retained")), 4000000);
    assert_int_equal(json_integer_value(json_object_get(mb, "peak")), 4000000);
    assert_int_equal(json_integer_value(json_object_get(tb, "retained")), 4);
    assert_int_equal(json_integer_value(json_object_get(tb, "peak")), 4000004);

    lp_session *s = open_and_run("memory_known", mode, 1);
    const char *path;
    json_t *want;
    json_object_foreach(modules, path, want) {
        lp_node_info info = node_at(s, path);
        assert_int_equal(info.cpu_mem.recorded, 1);
        assert_int_equal(info.cuda_mem.recorded, 0);
        double calls = json_number_value(json_object_get(want, "calls"));
        if (info.calls != calls)
            fail_msg("memory_known/%s: '%s' %g calls, expected %g", mode_name(mode), path,
                     info.calls, calls);
        int64_t retained = json_integer_value(json_object_get(want, "retained"));
        int64_t peak = json_integer_value(json_object_get(want, "peak"));
        expect_exact("retained", path, mode, info.cpu_mem.retained, info.cpu_mem.retained_min,
                     info.cpu_mem.retained_max, retained);
        expect_exact("peak", path, mode, info.cpu_mem.peak, info.cpu_mem.peak_min,
                     info.cpu_mem.peak_max, peak);
        /* net = allocated - freed */
        int64_t net = json_integer_value(json_object_get(want, "allocated")) -
                      json_integer_value(json_object_get(want, "freed"));
        expect_exact("net", path, mode, info.cpu_mem.net, info.cpu_mem.net_min,
                     info.cpu_mem.net_max, net);
        assert_true(info.cpu_mem.self_retained <= info.cpu_mem.retained);
    }
    /* The root's own allocations, without its children's: the output of `big + small`, 4 MB,
     * minus nothing (the children's blocks are freed, and what is freed does not count). */
    lp_node_info root = node_at(s, "");
    lp_node_info make_big = node_at(s, "make_big");
    lp_node_info temp_big = node_at(s, "temp_big");
    assert_true(make_big.cpu_mem.peak == 4000000.0);
    assert_true(temp_big.cpu_mem.peak >= 4000000.0);
    assert_true(root.cpu_mem.peak >= make_big.cpu_mem.peak + temp_big.cpu_mem.peak);
    lp_session_close(s);
    json_decref(expected);
}

static void memory_off(void **state) {
    lp_mode mode = *(const lp_mode *)*state;
    lp_session *s = open_and_run("memory_known", mode, 0);
    size_t n = 0;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        assert_int_equal(lp_session_node(s, i, &info), LP_OK);
        assert_int_equal(info.cpu_mem.recorded, 0);
        assert_int_equal(info.cuda_mem.recorded, 0);
        assert_true(info.cpu_mem.retained == 0 && info.cpu_mem.peak == 0);
    }
    lp_session_close(s);
}

/* ---- resnet18: each Conv2d retains its output ------------------------------------------------ */

static int64_t conv_out(int64_t h, int k, int stride, int pad) {
    return (h + 2 * pad - k) / stride + 1;
}

/* Spatial size of the output of resnet18's layer L (1..4) on a 224x224 input. */
static int64_t layer_hw(int layer) {
    int64_t h = conv_out(224, 7, 2, 3); /* conv1: 112 */
    h = conv_out(h, 3, 2, 1);           /* maxpool 3x3 s2 p1: 56 */
    for (int l = 2; l <= layer; l++)
        h = conv_out(h, 3, 2, 1); /* layerL.0.conv1 (and downsample 1x1 s2 p0) halve it */
    return h;
}

/* Output bytes (float32, batch 1) of the Conv2d at `path`, or -1 for a path it does not know. */
static int64_t resnet18_conv_bytes(const char *path) {
    int64_t c, h;
    if (strcmp(path, "conv1") == 0) {
        c = 64;
        h = conv_out(224, 7, 2, 3);
    } else {
        int layer, block;
        char rest[64];
        if (sscanf(path, "layer%d.%d.%63s", &layer, &block, rest) != 3 || layer < 1 || layer > 4)
            return -1;
        c = 64 << (layer - 1);
        int64_t h_in = layer == 1 ? layer_hw(1) : layer_hw(layer - 1);
        int first = block == 0 && layer > 1;
        if (strcmp(rest, "conv1") == 0)
            h = first ? conv_out(h_in, 3, 2, 1) : conv_out(layer_hw(layer), 3, 1, 1);
        else if (strcmp(rest, "conv2") == 0)
            h = conv_out(layer_hw(layer), 3, 1, 1);
        else if (strcmp(rest, "downsample.0") == 0 && first)
            h = conv_out(h_in, 1, 2, 0);
        else
            return -1;
        assert_int_equal(h, layer_hw(layer));
    }
    return c * h * h * (int64_t)sizeof(float);
}

static void resnet18_convs(void **state) {
    (void)state;
    /* spot checks of the table itself */
    assert_int_equal(resnet18_conv_bytes("conv1"), 64 * 112 * 112 * 4);
    assert_int_equal(resnet18_conv_bytes("layer1.1.conv2"), 64 * 56 * 56 * 4);
    assert_int_equal(resnet18_conv_bytes("layer2.0.downsample.0"), 128 * 28 * 28 * 4);
    assert_int_equal(resnet18_conv_bytes("layer4.1.conv1"), 512 * 7 * 7 * 4);

    lp_session *s = open_and_run("resnet18", LP_MODE_HOOKS, 1);
    size_t n = 0;
    assert_int_equal(lp_session_node_count(s, &n), LP_OK);
    int convs = 0, bad = 0;
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        assert_int_equal(lp_session_node(s, i, &info), LP_OK);
        assert_int_equal(info.cpu_mem.recorded, 1);
        if (strcmp(info.class_name, "Conv2d") != 0) continue;
        convs++;
        int64_t want = resnet18_conv_bytes(info.path);
        if (want < 0) fail_msg("resnet18: Conv2d '%s' is not in the test's table", info.path);
        if (info.calls != 1 || info.cpu_mem.retained != (double)want ||
            info.cpu_mem.retained_min != want || info.cpu_mem.retained_max != want) {
            print_error("resnet18: '%s' retained %.1f (min %lld max %lld), output is %lld B\n",
                        info.path, info.cpu_mem.retained, (long long)info.cpu_mem.retained_min,
                        (long long)info.cpu_mem.retained_max, (long long)want);
            bad++;
        }
        if (info.cpu_mem.peak < (double)want) {
            print_error("resnet18: '%s' peak %.1f < its output %lld B\n", info.path,
                        info.cpu_mem.peak, (long long)want);
            bad++;
        }
    }
    assert_int_equal(convs, 20);
    if (bad) fail_msg("resnet18: %d Conv2d memory figure(s) wrong", bad);
    lp_session_close(s);
}

static lp_mode k_hooks = LP_MODE_HOOKS, k_graph = LP_MODE_GRAPH;

int main(void) {
    const struct CMUnitTest tests[] = {
        {"memory_known/hooks", memory_known, NULL, NULL, &k_hooks},
        {"memory_known/graph", memory_known, NULL, NULL, &k_graph},
        {"memory_off/hooks", memory_off, NULL, NULL, &k_hooks},
        {"memory_off/graph", memory_off, NULL, NULL, &k_graph},
        {"resnet18_convs/hooks", resnet18_convs, NULL, NULL, NULL},
    };
    return cmocka_run_group_tests_name("integration.memory", tests, NULL, NULL);
}
