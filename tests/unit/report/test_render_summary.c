/* test_render_summary.c: torchtimer's summary tables (LP_FORMAT_SUMMARY) against golden files, as
 * a table of {golden file, tree}.
 *
 * The first trees reproduce the tables of torchtimer's README figure for figure (its 1000
 * randn/matmul/sum segments, its word2vec contexts, its "no reference" memory example), so the
 * golden files are those tables as torchtimer printed them; the others cover what torchtimer has
 * no example of: nested regions, a forward outside regions, rows that never ran, plain module
 * trees. LP_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing. */
#include "export_fixtures.h"
#include "golden_cases.h"
#include "tree_fixtures.h"

#include <string.h>

/* Helpers ------------------------------------------------------------------------------------ */

/* A node that ran `calls` times for `total_ns` in all, each call taking the mean. */
static void ran(lp_tree *t, int32_t i, uint64_t calls, uint64_t total_ns) {
    lp_figures *f = &t->nodes[i].fig;
    f->calls = calls;
    f->total_ns = total_ns;
    f->time.n = calls;
    f->time.mean = calls ? (double)total_ns / (double)calls : 0.0;
}

/* Net and peak memory per call on `dev`: the first call has the *_lo values, the others *_hi. */
static void mem(lp_tree *t, int32_t i, int dev, int64_t net_lo, int64_t net_hi, int64_t peak_lo,
                int64_t peak_hi) {
    lp_mem_stats *m = &t->nodes[i].fig.mem[dev];
    for (uint64_t c = 0; c < t->nodes[i].fig.calls; c++) {
        lp_stat_add(&m->net, c ? net_hi : net_lo);
        lp_stat_add(&m->peak, c ? peak_hi : peak_lo);
    }
}

/* A session tree: the root named `name`, kind session. */
static int32_t session(lp_tree *t, const char *name) {
    lp_tree_init(t);
    return tf_node(t, "", name, -1, LP_NODE_SESSION);
}

static int32_t context(lp_tree *t, const char *name, uint64_t total_ns) {
    int32_t c = tf_node(t, name, "context", 0, LP_NODE_CONTEXT);
    t->nodes[c].fig.total_ns = total_ns;
    return c;
}

/* A region below `parent`, its path the parent's plus "/name". */
static int32_t region(lp_tree *t, int32_t parent, const char *name, uint64_t calls,
                      uint64_t total_ns) {
    char path[256];
    snprintf(path, sizeof path, "%s/%s", t->nodes[parent].path, name);
    int32_t r = tf_node(t, path, "region", parent, LP_NODE_REGION);
    ran(t, r, calls, total_ns);
    return r;
}

/* torchtimer's README ------------------------------------------------------------------------ */

/* "Timing multiple code segments": 1000 loops of randn, matmul and sum on a GPU. Regions are
 * added in another order than the table's, which is sorted by total time. */
static void readme_code_segments(lp_tree *t) {
    session(t, "timer");
    t->has_memory[LP_DEV_CUDA] = 1;
    t->has_memory[LP_DEV_CPU] = 1; /* the GPU's memory is the one shown */
    int32_t main_ctx = context(t, "main", 3309886500u);
    int32_t sum = region(t, main_ctx, "sum", 1000, 198909700u);
    int32_t randn = region(t, main_ctx, "randn", 1000, 1638668400u);
    int32_t matmul = region(t, main_ctx, "matmul", 1000, 1472308400u);
    mem(t, randn, LP_DEV_CUDA, 0, 8000000, 4000000, 8000000);
    mem(t, matmul, LP_DEV_CUDA, 0, 4000000, 4000000, 4000000);
    mem(t, sum, LP_DEV_CUDA, 0, 4096, 4096, 4096);
    mem(t, randn, LP_DEV_CPU, 1, 1, 1, 1); /* never shown */
}

/* "Timing in different context": two contexts, two tables. */
static void readme_word2vec_contexts(lp_tree *t) {
    session(t, "Word2Vec");
    t->has_memory[LP_DEV_CUDA] = 1;
    int32_t fwd = context(t, "forward", 583368000u);
    int32_t emb = region(t, fwd, "embedding", 100, 18850700u);
    int32_t lin = region(t, fwd, "linear", 100, 564517300u);
    mem(t, emb, LP_DEV_CUDA, 51200, 51200, 51200, 51200);
    mem(t, lin, LP_DEV_CUDA, 3072, 3072, 3072, 3072);
    int32_t sim = context(t, "most_similar", 10962200u);
    int32_t emb2 = region(t, sim, "embedding", 6, 2432600u);
    int32_t cos = region(t, sim, "cos sim", 6, 2952100u);
    int32_t topk = region(t, sim, "topk", 6, 1247800u);
    int32_t fin = region(t, sim, "finalize", 6, 4329700u);
    mem(t, emb2, LP_DEV_CUDA, 1024, 1024, 1024, 1024);
    mem(t, cos, LP_DEV_CUDA, 5632, 5632, 5632, 5632);
    mem(t, topk, LP_DEV_CUDA, 1024, 1024, 1024, 1024);
    mem(t, fin, LP_DEV_CUDA, 0, 0, 0, 0);
}

/* "Memory statistics": net against peak; the name column widens to the longest name. */
static void readme_memory_references(lp_tree *t) {
    session(t, "timer");
    t->has_memory[LP_DEV_CUDA] = 1;
    int32_t main_ctx = context(t, "main", 1853900u);
    int32_t noref = region(t, main_ctx, "no reference", 1, 1611900u);
    int32_t del = region(t, main_ctx, "delete", 1, 138300u);
    int32_t with = region(t, main_ctx, "with reference", 1, 103700u);
    mem(t, noref, LP_DEV_CUDA, 0, 0, 4000000, 4000000);
    mem(t, del, LP_DEV_CUDA, 0, 0, 4000000, 4000000);
    mem(t, with, LP_DEV_CUDA, 4000000, 4000000, 4000000, 4000000);
}

/* "Print a summary": one unnamed segment, 100% of its context. */
static void readme_default_segment(lp_tree *t) {
    session(t, "timer");
    t->has_memory[LP_DEV_CUDA] = 1;
    int32_t main_ctx = context(t, "main", 521948100u);
    int32_t def = region(t, main_ctx, "default", 1, 521948100u);
    mem(t, def, LP_DEV_CUDA, 0, 0, 4000000, 4000000);
}

/* Beyond the README ------------------------------------------------------------------------- */

/* Nested regions are named by their path below the context; a forward run directly in the
 * context is a row (its modules are not); regions that never ran and a context that never ran are
 * left out; CPU memory, negative values; '|' in a name is escaped. */
static void nested_regions_forward_and_cpu_memory(lp_tree *t) {
    session(t, "Pipeline");
    t->has_memory[LP_DEV_CPU] = 1;
    int32_t main_ctx = context(t, "main", 2000000000u);
    int32_t load = region(t, main_ctx, "load", 1, 500000000u);
    int32_t pre = region(t, main_ctx, "preprocess", 10, 1000000000u);
    int32_t resize = region(t, pre, "resize", 10, 600000000u);
    int32_t crop = region(t, resize, "crop", 20, 5120u);
    /* The model's forward inside a region: its modules are not rows. */
    int32_t inner = tf_node(t, "main/preprocess/ResNet", "ResNet", pre, LP_NODE_MODULE);
    ran(t, inner, 10, 300000000u);
    region(t, main_ctx, "skipped", 0, 0);
    int32_t noop = region(t, main_ctx, "noop", 3, 0);
    /* A forward outside regions: the model's root module right under the context, named by its
     * class, with its own module below it (not a row). */
    int32_t fwd = tf_node(t, "", "ResNet", main_ctx, LP_NODE_MODULE);
    ran(t, fwd, 2, 500000000u);
    int32_t fc = tf_node(t, "fc", "Linear", fwd, LP_NODE_MODULE);
    ran(t, fc, 2, 100000000u);
    mem(t, load, LP_DEV_CPU, 3 << 20, 3 << 20, 3 << 20, 3 << 20);
    mem(t, pre, LP_DEV_CPU, -1572864, 512, 0, 1023);
    mem(t, resize, LP_DEV_CPU, -(5LL << 30), 1536, 1024, 1048575);
    mem(t, fwd, LP_DEV_CPU, 0, 0, 2 << 20, 2 << 20);
    (void)crop;
    (void)noop;
    int32_t eval = context(t, "eval", 0);
    region(t, eval, "disabled", 0, 0);
    int32_t io = context(t, "io", 40000u);
    region(t, io, "read|write", 4, 40000u);
}

/* Without regions: one table of the model's modules by dotted path, memory "-" when not recorded,
 * modules that never ran left out, equal totals in model order. */
static void plain_module_tree(lp_tree *t) {
    lp_tree_init(t);
    int32_t root = tf_node(t, "", "Net", -1, LP_NODE_MODULE);
    int32_t features = tf_node(t, "features", "Sequential", root, LP_NODE_MODULE);
    int32_t f0 = tf_node(t, "features.0", "Conv2d", features, LP_NODE_MODULE);
    tf_node(t, "features.1", "ReLU", features, LP_NODE_MODULE); /* never ran */
    int32_t classifier = tf_node(t, "classifier", "Sequential", root, LP_NODE_MODULE);
    int32_t fc = tf_node(t, "classifier.fc", "Linear", classifier, LP_NODE_MODULE);
    ran(t, root, 2, 20000000u);
    ran(t, features, 2, 12000000u);
    ran(t, f0, 4, 8000000u);
    ran(t, classifier, 2, 7000000u);
    ran(t, fc, 2, 7000000u);
    /* A module whose per-call statistics were not kept: the mean comes from the raw sums. */
    t->nodes[fc].fig.time.n = 0;
    t->nodes[fc].fig.time.mean = 0;
}

static const golden_case cases[] = {
    {"summary_code_segments.txt", readme_code_segments, NULL, NULL},
    {"summary_word2vec.txt", readme_word2vec_contexts, NULL, NULL},
    {"summary_references.txt", readme_memory_references, NULL, NULL},
    {"summary_default.txt", readme_default_segment, NULL, NULL},
    {"summary_nested.txt", nested_regions_forward_and_cpu_memory, NULL, NULL},
    {"summary_modules.txt", plain_module_tree, NULL, NULL},
    {"summary_fused.txt", fx_fused_package, NULL, NULL},
};

/* Errors ------------------------------------------------------------------------------------- */

static void write_failures_and_bad_arguments(void **state) {
    (void)state;
    lp_tree t;
    session(&t, "timer");
    int32_t main_ctx = context(&t, "main", 1000u);
    region(&t, main_ctx, "a", 1, 1000u);
    FILE *full = fopen("/dev/full", "w");
    if (full) {
        assert_int_equal(lp_render_summary(&t, NULL, full), LP_ERR_IO);
        assert_non_null(strstr(lp_error_last(), "writing"));
        fclose(full);
    }
    assert_int_equal(lp_render_summary(NULL, NULL, stdout), LP_ERR_INVALID);
    assert_int_equal(lp_render_summary(&t, NULL, NULL), LP_ERR_INVALID);
    lp_tree empty;
    lp_tree_init(&empty);
    assert_int_equal(lp_render_summary(&empty, NULL, stdout), LP_ERR_INVALID);
    lp_tree_free(&t);
}

int main(void) {
    const struct CMUnitTest others[] = {
        cmocka_unit_test(write_failures_and_bad_arguments),
    };
    return golden_cases_main("render_summary", lp_render_summary, cases,
                             sizeof cases / sizeof cases[0], others,
                             sizeof others / sizeof others[0]);
}
