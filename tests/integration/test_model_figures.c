/* test_model_figures.c: what each module is, beside what it costs (params, param bytes, FLOPs),
 * on real models through real libtorch, against figures this file works out from the models'
 * definitions: torchvision's resnet18 at 1x3x224x224 and the shared-module pattern (pat_shared).
 * Also: the FLOPs are recorded only when a flops column asks for them, and reports carry all of it
 * to JSON and back. */
#define _POSIX_C_SOURCE 200809L
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

static lp_session *run_model_in(const char *model, lp_mode mode, const char *const *columns,
                                size_t n_columns) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.pt", LP_MODELS_DIR, model);
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.warmup = 1;
    o.iterations = 2;
    o.threads = 1;
    o.columns = columns;
    o.n_columns = n_columns;
    o.mode = mode;
    lp_session *s = NULL;
    int rc = lp_session_open(&s, &o);
    if (rc) fail_msg("lp_session_open(%s): %s", path, lp_error_last());
    if ((rc = lp_session_run(s))) {
        lp_session_close(s);
        fail_msg("lp_session_run(%s): %s", path, lp_error_last());
    }
    return s;
}

static lp_session *run_model(const char *model, const char *const *columns, size_t n_columns) {
    return run_model_in(model, LP_MODE_MARKERS, columns, n_columns);
}

static lp_node_info node(lp_session *s, const char *path) {
    size_t i = 0;
    if (lp_session_find(s, path, &i)) fail_msg("no module '%s': %s", path, lp_error_last());
    lp_node_info info;
    if (lp_session_node(s, i, &info)) fail_msg("node '%s': %s", path, lp_error_last());
    return info;
}

/* resnet18 from its definition (torchvision.models.resnet): a 7x7 stem, four stages of two
 * BasicBlocks (3x3 conv, BN, 3x3 conv, BN; a 1x1 conv and BN where the width changes), a 1000-way
 * fc. Convolutions have no bias. BN holds 2C parameters and 2C + 1 buffers (running mean and
 * variance as float32, num_batches_tracked as one int64). */
typedef struct resnet_counts {
    uint64_t params, buffer_bytes;
} resnet_counts;

static void add_conv(resnet_counts *r, uint64_t in, uint64_t out, uint64_t k) {
    r->params += in * out * k * k;
}

static void add_bn(resnet_counts *r, uint64_t c) {
    r->params += 2 * c;
    r->buffer_bytes += 2 * c * 4 + 8;
}

static resnet_counts resnet18_counts(void) {
    resnet_counts r = {0, 0};
    add_conv(&r, 3, 64, 7);
    add_bn(&r, 64);
    uint64_t in = 64;
    const uint64_t widths[] = {64, 128, 256, 512};
    for (int stage = 0; stage < 4; stage++) {
        uint64_t w = widths[stage];
        for (int block = 0; block < 2; block++) {
            uint64_t block_in = block == 0 ? in : w;
            add_conv(&r, block_in, w, 3);
            add_bn(&r, w);
            add_conv(&r, w, w, 3);
            add_bn(&r, w);
            if (block == 0 && block_in != w) { /* stride 2 and a new width: the downsample */
                add_conv(&r, block_in, w, 1);
                add_bn(&r, w);
            }
        }
        in = w;
    }
    r.params += 512 * 1000 + 1000; /* fc */
    return r;
}

static void resnet18_params_are_exact(void **state) {
    (void)state;
    const char *const columns[] = {"self_cpu", "params", "param_bytes"};
    lp_session *s = run_model("resnet18", columns, 3);
    resnet_counts want = resnet18_counts();
    assert_int_equal(want.params, 11689512); /* torchinfo's figure for resnet18 */
    lp_node_info root = node(s, "");
    assert_true(root.size_known);
    assert_int_equal(root.params, want.params);
    assert_int_equal(root.self_params, 0);
    assert_int_equal(root.param_bytes, 4 * want.params + want.buffer_bytes);
    lp_node_info conv1 = node(s, "conv1");
    assert_int_equal(conv1.params, 9408);
    assert_int_equal(conv1.params, 64 * 3 * 7 * 7);
    assert_int_equal(conv1.self_params, conv1.params);
    assert_int_equal(node(s, "fc").params, 513000);
    lp_node_info bn1 = node(s, "bn1");
    assert_int_equal(bn1.params, 128);
    assert_int_equal(bn1.param_bytes, 128 * 4 + 128 * 4 + 8);
    /* A stage's total is its blocks', its own is nothing. */
    lp_node_info layer1 = node(s, "layer1");
    assert_int_equal(layer1.self_params, 0);
    assert_int_equal(layer1.params, node(s, "layer1.0").params + node(s, "layer1.1").params);
    /* No flops column, no FLOPs: the default path reads no shapes. */
    assert_false(root.flops_known);
    assert_int_equal(root.raw_flops, 0);
    lp_session_close(s);
}

static void resnet18_flops_are_exact(void **state) {
    (void)state;
    const char *const columns[] = {"self_cpu", "flops", "self_flops", "gflops_per_s"};
    lp_session *s = run_model("resnet18", columns, 4);
    lp_node_info conv1 = node(s, "conv1");
    assert_true(conv1.flops_known);
    /* 2 FLOPs per multiply-add: 2 * Cout * Cin * kh * kw * Hout * Wout, 112x112 out. */
    const uint64_t conv1_flops = 2ull * 64 * 3 * 7 * 7 * 112 * 112;
    assert_int_equal(conv1.raw_self_flops, conv1_flops * conv1.raw_calls);
    assert_true(conv1.self_flops == (double)conv1_flops);
    assert_true(conv1.flops == (double)conv1_flops);
    lp_node_info inner = node(s, "layer1.0.conv1"); /* 64 -> 64, 3x3, 56x56 */
    assert_true(inner.self_flops == 2.0 * 64 * 64 * 3 * 3 * 56 * 56);
    lp_node_info fc = node(s, "fc");
    assert_true(fc.self_flops == 2.0 * 512 * 1000);
    /* Totals are the subtree's own FLOPs: the root's is every module's self, and a block's is its
     * children's plus its own (the residual add and its relu). */
    lp_node_info root = node(s, "");
    size_t n = 0;
    lp_session_node_count(s, &n);
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        assert_int_equal(lp_session_node(s, i, &info), LP_OK);
        sum += info.raw_self_flops;
    }
    assert_int_equal(root.raw_flops, sum);
    lp_node_info block = node(s, "layer1.0");
    uint64_t kids = 0;
    const char *const parts[] = {"layer1.0.conv1", "layer1.0.bn1", "layer1.0.relu",
                                 "layer1.0.conv2", "layer1.0.bn2"};
    for (size_t i = 0; i < 5; i++)
        kids += node(s, parts[i]).raw_flops;
    assert_int_equal(block.raw_flops, kids + block.raw_self_flops);
    assert_true(block.raw_self_flops > 0); /* out += identity */
    lp_session_close(s);
}

static void a_shared_module_counts_once_at_the_common_ancestor(void **state) {
    (void)state;
    const char *const columns[] = {"params"};
    lp_session *s = run_model("pat_shared", columns, 1);
    const uint64_t linear = 16 * 16 + 16; /* nn.Linear(16, 16) */
    /* a and b each hold the shared Linear and one of their own. */
    assert_int_equal(node(s, "a.shared").self_params, linear);
    assert_int_equal(node(s, "a").params, 2 * linear);
    assert_int_equal(node(s, "b").params, 2 * linear);
    /* Three distinct Linears under the root: the shared one once, not twice. */
    assert_int_equal(node(s, "").params, 3 * linear);
    lp_session_close(s);
}

#define ASSERT_SHAPE(info, ...)                                                                    \
    do {                                                                                           \
        const int64_t want_[] = {__VA_ARGS__};                                                     \
        int rank_ = (int)(sizeof want_ / sizeof want_[0]);                                         \
        assert_int_equal((info).out_rank, rank_);                                                  \
        for (int d_ = 0; d_ < rank_; d_++)                                                         \
            assert_int_equal((info).out_shape[d_], want_[d_]);                                     \
    } while (0)

/* resnet18 at 1x3x224x224, from its definition: the stem halves 224 twice (conv1 stride 2, the
 * max pool), each later stage halves again, the pool makes 1x1, fc gives 1000. */
static void resnet18_output_shapes(void **state) {
    (void)state;
    const char *const columns[] = {"self_cpu", "out_shape"};
    lp_session *s = run_model("resnet18", columns, 2);
    ASSERT_SHAPE(node(s, "conv1"), 1, 64, 112, 112);
    ASSERT_SHAPE(node(s, "maxpool"), 1, 64, 56, 56);
    ASSERT_SHAPE(node(s, "layer2"), 1, 128, 28, 28);
    ASSERT_SHAPE(node(s, "layer4.1.bn2"), 1, 512, 7, 7);
    ASSERT_SHAPE(node(s, "avgpool"), 1, 512, 1, 1);
    ASSERT_SHAPE(node(s, "fc"), 1, 1000);
    ASSERT_SHAPE(node(s, ""), 1, 1000);                      /* the forward's own output */
    assert_false(node(s, "layer1.0.relu").out_shape_varies); /* called twice, same shape */
    lp_session_close(s);
}

/* A module called on inputs of different sizes is marked; hooks mode records no shape. */
static void differing_calls_are_marked_and_hooks_mode_has_none(void **state) {
    (void)state;
    const char *const columns[] = {"calls", "out_shape"};
    lp_session *s = run_model("pat_structured", columns, 2);
    lp_node_info stem = node(s, "stem"); /* one conv on a 3x8x8 and a 3x6x10 image */
    assert_true(stem.out_shape_varies);
    ASSERT_SHAPE(stem, 1, 4, 8, 8);
    assert_false(node(s, "mix").out_shape_varies);
    char buf[4096] = {0};
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_int_equal(lp_session_render(s, LP_FORMAT_TREE, f), LP_OK);
    fclose(f);
    assert_non_null(strstr(buf, "[1, 4, 8, 8]*"));
    assert_non_null(strstr(buf, "out_shape: * the calls returned different shapes"));
    lp_session_close(s);

    s = run_model_in("nested", LP_MODE_HOOKS, columns, 2);
    assert_int_equal(node(s, "stem").out_rank, -1);
    lp_session_close(s);
}

/* The report written as JSON reads back with the same figures. */
static void json_reports_carry_them(void **state) {
    (void)state;
    const char *const columns[] = {"self_cpu", "params", "flops", "out_shape"};
    lp_session *s = run_model("nested", columns, 4);
    char file[] = "/tmp/lp_model_figures_XXXXXX";
    int fd = mkstemp(file);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_int_equal(lp_session_render(s, LP_FORMAT_JSON, f), LP_OK);
    fclose(f);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, file), LP_OK);
    size_t n = 0, m = 0;
    lp_session_node_count(s, &n);
    lp_report_node_count(r, &m);
    assert_int_equal(n, m);
    for (size_t i = 0; i < n; i++) {
        lp_node_info a, b;
        assert_int_equal(lp_session_node(s, i, &a), LP_OK);
        assert_int_equal(lp_report_node(r, i, &b), LP_OK);
        assert_string_equal(a.path, b.path);
        assert_int_equal(a.size_known, b.size_known);
        assert_int_equal(a.params, b.params);
        assert_int_equal(a.param_bytes, b.param_bytes);
        assert_int_equal(a.self_params, b.self_params);
        assert_int_equal(a.flops_known, b.flops_known);
        assert_int_equal(a.raw_flops, b.raw_flops);
        assert_int_equal(a.raw_self_flops, b.raw_self_flops);
        assert_int_equal(a.out_rank, b.out_rank);
        assert_int_equal(a.out_shape_varies, b.out_shape_varies);
        for (int d = 0; d < a.out_rank; d++)
            assert_int_equal(a.out_shape[d], b.out_shape[d]);
    }
    lp_node_info root;
    assert_int_equal(lp_report_node(r, 0, &root), LP_OK);
    assert_true(root.flops_known && root.raw_flops > 0 && root.params > 0 && root.out_rank > 0);
    lp_report_free(r);
    remove(file);
    lp_session_close(s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(resnet18_params_are_exact),
        cmocka_unit_test(resnet18_flops_are_exact),
        cmocka_unit_test(a_shared_module_counts_once_at_the_common_ancestor),
        cmocka_unit_test(resnet18_output_shapes),
        cmocka_unit_test(differing_calls_are_marked_and_hooks_mode_has_none),
        cmocka_unit_test(json_reports_carry_them),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
