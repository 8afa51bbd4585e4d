/* test_render_openmetrics.c: the Prometheus text exposition (LP_FORMAT_OPENMETRICS) of a
 * synthetic tree against golden files: a session's histograms from a fake source (every bucket),
 * a report's from the tree's sums (+Inf alone), the depth limit folding a subtree into its
 * ancestor, label escaping, and the families' order. LP_UPDATE_GOLDEN=1 rewrites the files. */
#include "golden_cases.h"
#include "report/json_report.h"
#include "tree_fixtures.h"

#include <string.h>

/* Net (root) -> stem (Conv2d), block (Block) -> block.fc (Linear), head (Linear "q\"x"). */
static void tree_net(lp_tree *t) {
    lp_tree_init(t);
    int32_t root = tf_node(t, "", "Net", -1, LP_NODE_MODULE);
    int32_t stem = tf_node(t, "stem", "Conv2d", root, LP_NODE_MODULE);
    int32_t block = tf_node(t, "block", "Block", root, LP_NODE_MODULE);
    int32_t fc = tf_node(t, "block.fc", "Linear", block, LP_NODE_MODULE);
    int32_t head = tf_node(t, "head", "Li\"ne\\ar", root, LP_NODE_MODULE);
    const uint64_t r[] = {9000000, 11000000}, s[] = {2000, 2500}, b[] = {4000000, 6000000},
                   f[] = {3000000, 5000000}, h[] = {900, 1100};
    tf_calls(t, root, r, 2);
    tf_calls(t, stem, s, 2);
    tf_calls(t, block, b, 2);
    tf_calls(t, fc, f, 2);
    tf_calls(t, head, h, 2);
    t->nodes[root].fig.self_ns = 20000000 - 4500 - 10000000 - 2000;
    t->nodes[block].fig.self_ns = 2000000;
    uint64_t params[] = {1000, 100, 800, 800, 100};
    for (int i = 0; i < 5; i++) {
        t->nodes[i].fig.size.known = 1;
        t->nodes[i].fig.size.params = params[i];
    }
    t->iterations = 2;
}

/* A session's histograms: module i's calls at i+1 us self and 2(i+1) us total, one per call
 * of the tree. */
static int fake_read(const void *ctx, int32_t module, lp_hist *self, lp_hist *total) {
    const lp_tree *t = ctx;
    memset(self, 0, sizeof *self);
    memset(total, 0, sizeof *total);
    uint64_t calls = t->nodes[module].fig.calls;
    uint64_t us = (uint64_t)module + 1;
    self->bucket[lp_hist_bucket(us * 1000)] = calls;
    total->bucket[lp_hist_bucket(2 * us * 1000)] = calls;
    self->count = total->count = calls;
    self->sum_ns = calls * us * 1000;
    total->sum_ns = calls * 2 * us * 1000;
    return 1;
}

static lp_tree *fake_tree;
static lp_hist_source fake_source;

static int render_with_source(const lp_tree *tree, const lp_render_opts *ro, FILE *out) {
    fake_tree = (lp_tree *)tree;
    fake_source = (lp_hist_source){tree, fake_read, 7, 2};
    lp_render_opts o = *ro;
    o.hist = &fake_source;
    o.metrics_model = "my\"model";
    return lp_render_openmetrics(tree, NULL, &o, out);
}

static int render_as_report(const lp_tree *tree, const lp_render_opts *ro, FILE *out) {
    json_t *run = json_pack("{s:s}", "model", "models/net.pt");
    int rc = lp_render_openmetrics(tree, run, ro, out);
    json_decref(run);
    return rc;
}

static void no_limit(lp_render_opts *ro) {
    ro->metrics_depth = -1;
}

static void depth0(lp_render_opts *ro) {
    ro->metrics_depth = 0;
}

static const golden_case cases[] = {
    {"openmetrics_session.prom", tree_net, NULL, render_with_source},
    {"openmetrics_session_all.prom", tree_net, no_limit, render_with_source},
    {"openmetrics_report.prom", tree_net, NULL, render_as_report},
    {"openmetrics_report_depth0.prom", tree_net, depth0, render_as_report},
};

/* A tree of regions has no per-module series yet; a bad depth is refused. */
static void refusals(void **state) {
    (void)state;
    lp_tree t;
    lp_tree_init(&t);
    tf_node(&t, "", "session", -1, LP_NODE_SESSION);
    FILE *f = tmpfile();
    assert_int_equal(lp_render_openmetrics(&t, NULL, NULL, f), LP_ERR_UNSUPPORTED);
    lp_tree_free(&t);
    tree_net(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    ro.metrics_depth = -2;
    assert_int_equal(lp_render_openmetrics(&t, NULL, &ro, f), LP_ERR_INVALID);
    assert_int_equal(lp_render_openmetrics(NULL, NULL, NULL, f), LP_ERR_INVALID);
    fclose(f);
    lp_tree_free(&t);
}

/* The run's labels (--label) follow the module's on every series, values escaped, in order. */
static void run_labels_on_every_series(void **state) {
    (void)state;
    lp_tree t;
    tree_net(&t);
    const char *labels[] = {"rank=3", "host=a\"b"};
    json_t *run =
        json_pack("{s:s, s:o}", "model", "models/net.pt", "labels", lp_export_labels(labels, 2));
    FILE *f = tmpfile();
    assert_int_equal(lp_render_openmetrics(&t, run, NULL, f), LP_OK);
    char *text = golden_take(f);
    assert_non_null(strstr(text,
                           "layerprof_module_self_seconds_bucket{model=\"net\",module=\"stem\","
                           "class=\"Conv2d\",rank=\"3\",host=\"a\\\"b\",le=\"+Inf\"} 2\n"));
    /* Every sample line carries them. */
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
        if (line[0] != '#' && !strstr(line, ",rank=\"3\",host=\"a\\\"b\""))
            fail_msg("a series without the run's labels: %s", line);
    free(text);
    json_decref(run);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest others[] = {cmocka_unit_test(refusals),
                                        cmocka_unit_test(run_labels_on_every_series)};
    return golden_cases_main("render_openmetrics", render_as_report, cases,
                             sizeof cases / sizeof cases[0], others, 2);
}
