/* test_pkg_memory.c: memory per module of an AOTInductor package's forward (collect/pkg_memory.h),
 * fed the events the shim delivers for one: the root's call, the wrapper's allocations and frees
 * between kernels, each kernel's module frames, and the map's calls. Every figure is exact. */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "collect/collector.h"
#include "layerprof.h"
#include "model/tree.h"

#include "tree_fixtures.h"

/* The package's modules:
 *   ""          Net      0
 *   s1          Stage    1
 *   s2          Stage    2
 *   s2.inner    Linear   3
 *   other       Linear   4 */
enum { ROOT, S1, S2, INNER, OTHER, N_MODULES };

static const tf_module MODULES[] = {
    {"", "Net", -1},           {"s1", "Stage", ROOT},
    {"s2", "Stage", ROOT},     {"s2.inner", "Linear", S2},
    {"other", "Linear", ROOT},
};
_Static_assert(sizeof MODULES / sizeof *MODULES == N_MODULES, "a row per module");

typedef struct fixture {
    lp_tree tree;
    lp_collector *c;
} fixture;

static int setup(void **state) {
    fixture *f = calloc(1, sizeof *f);
    if (!f) return -1;
    if (tf_tree_of(&f->tree, MODULES, N_MODULES)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state) {
    fixture *f = *state;
    lp_collector_free(f->c);
    lp_tree_free(&f->tree);
    free(f);
    return 0;
}

static lp_collector *start(void **state, const uint8_t *selected) {
    fixture *f = *state;
    lp_collector_config cfg = {0};
    cfg.memory = 1;
    cfg.memory_devices = 1u << LP_DEV_CPU;
    cfg.selected = selected;
    assert_int_equal(lp_collector_create(&f->c, &f->tree, &cfg), LP_OK);
    return f->c;
}

#define P(n) ((const void *)(uintptr_t)(0x100000u + (uintptr_t)(n)*64u))
#define FIG(state, node) (&((fixture *)*(state))->tree.nodes[(node)].fig)

static void alloc(lp_collector *c, int id, int64_t bytes) {
    lp_ev_memory(c, P(id), bytes, LP_DEV_CPU, 0);
}
static void release(lp_collector *c, int id, int64_t bytes) {
    lp_ev_memory(c, P(id), -bytes, LP_DEV_CPU, 0);
}

/* A forward's start, as aoti.cpp's pt2_enter delivers it: the wrapper's first allocations are the
 * first kernel's module's. */
static void forward(lp_collector *c, int32_t first) {
    lp_ev_call_enter(c, ROOT, 0);
    lp_ev_pkg_memory_to(c, first, ROOT);
}

/* A kernel placed in `module` (its chain of module frames from the root's child down), with the
 * allocations `inside` it makes (an extern kernel's output, id and bytes; 0 for none), then the
 * wrapper's charging for the next kernel's module. As the shim runs it: the first `open` frames
 * of its chain are open already (kept by the kernel before), and it leaves the first `keep` open
 * for the next one (shim/aoti.cpp, frame_start and frame_end). */
static void kernel_kept(lp_collector *c, int32_t module, int inside_id, int64_t inside,
                        int32_t next, int open, int keep) {
    int32_t chain[2];
    int depth = 0;
    if (module == INNER) chain[depth++] = S2;
    if (module != ROOT) chain[depth++] = module;
    lp_ev_pkg_memory_to(c, module, module);
    for (int i = open; i < depth; i++)
        lp_ev_method_enter(c, chain[i], 1);
    if (inside) alloc(c, inside_id, inside);
    for (int i = depth; i > keep; i--)
        lp_ev_call_exit(c, 2);
    lp_ev_pkg_memory_to(c, next, module);
}

/* A kernel that shares no module frame with its neighbours. */
static void kernel(lp_collector *c, int32_t module, int inside_id, int64_t inside, int32_t next) {
    kernel_kept(c, module, inside_id, inside, next, 0, 0);
}

static void end_forward(lp_collector *c) {
    for (int32_t m = S1; m < N_MODULES; m++)
        if (m != OTHER) lp_ev_add_calls(c, m, 1);
    lp_ev_call_exit(c, 10);
}

#define ASSERT_STAT(stat, sum_, min_, max_, n_)                                                    \
    do {                                                                                           \
        assert_int_equal((stat).sum, (sum_));                                                      \
        assert_int_equal((stat).min, (min_));                                                      \
        assert_int_equal((stat).max, (max_));                                                      \
        assert_int_equal((stat).n, (n_));                                                          \
    } while (0)

/* retained, self retained, peak and net of a module called once per forward, over `n` forwards
 * that each gave the same figures. */
#define ASSERT_MEM(fig, n, retained_, self_, peak_, net_)                                          \
    do {                                                                                           \
        const lp_mem_stats *m_ = &(fig)->mem[LP_DEV_CPU];                                          \
        ASSERT_STAT(m_->retained, (n) * (retained_), (retained_), (retained_), (n));               \
        ASSERT_STAT(m_->self_retained, (n) * (self_), (self_), (self_), (n));                      \
        ASSERT_STAT(m_->peak, (n) * (peak_), (peak_), (peak_), (n));                               \
        ASSERT_STAT(m_->net, (n) * (net_), (net_), (net_), (n));                                   \
    } while (0)

/* The generated wrapper of tests/integration/pt2_models.py's memory_stages, event for event:
 *   buf0 = empty(8x64) 2048 B; relu kernel (s1); buf1 = empty(8x128) 4096 B; mm (s1);
 *   buf0 freed; relu in place on buf1 (s2); buf3 = empty(8x32) 1024 B; mm (s2); buf3 returned,
 *   buf1 freed when the wrapper's scope ends. */
static void stages_forward(lp_collector *c) {
    forward(c, S1);
    alloc(c, 0, 2048);
    kernel_kept(c, S1, 0, 0, S1, 0, 1); /* s1 stays open for its mm */
    alloc(c, 1, 4096);
    kernel_kept(c, S1, 0, 0, S2, 1, 0);
    release(c, 0, 2048);
    kernel_kept(c, S2, 0, 0, S2, 0, 1);
    alloc(c, 3, 1024);
    kernel_kept(c, S2, 0, 0, ROOT, 1, 0);
    release(c, 1, 4096);
    end_forward(c);
    release(c, 3, 1024); /* the output, freed by the caller after the forward */
}

static void
test_the_wrappers_buffers_go_to_their_producer_and_frees_to_the_last_consumer(void **state) {
    lp_collector *c = start(state, NULL);
    stages_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    /* s1: buf0 and buf1 (6144 B at once), buf0 freed after its mm: buf1 is its output. */
    ASSERT_MEM(FIG(state, S1), 1, 4096, 4096, 6144, 4096);
    /* s2: buf3 only (its relu ran in place); it frees s1's buf1, its input: net 1024 - 4096. */
    ASSERT_MEM(FIG(state, S2), 1, 1024, 1024, 1024, -3072);
    /* The root: everything, none of it its own. */
    ASSERT_MEM(FIG(state, ROOT), 1, 1024, 0, 6144, 1024);
    assert_int_equal(FIG(state, S1)->calls, 1);
    assert_int_equal(FIG(state, OTHER)->mem[LP_DEV_CPU].retained.n, 0); /* no call, no sample */
}

static void test_each_forward_adds_its_own_figures(void **state) {
    lp_collector *c = start(state, NULL);
    stages_forward(c);
    stages_forward(c);
    stages_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, S1), 3, 4096, 4096, 6144, 4096);
    ASSERT_MEM(FIG(state, S2), 3, 1024, 1024, 1024, -3072);
    ASSERT_MEM(FIG(state, ROOT), 3, 1024, 0, 6144, 1024);
}

/* A child's buffer counts in its parent's total, not in the parent's self; a block the child
 * allocated and the parent's own kernel freed is not retained by the parent, and is by the child
 * (it was alive when the child's part ended). An extern kernel's own output is its module's. */
static void test_nested_modules_total_their_childrens_memory(void **state) {
    lp_collector *c = start(state, NULL);
    forward(c, INNER);
    alloc(c, 1, 100);            /* inner's buffer */
    kernel(c, INNER, 2, 30, S2); /* an extern kernel: 30 B inside it */
    alloc(c, 3, 7);              /* s2's own */
    kernel(c, S2, 0, 0, ROOT);
    release(c, 1, 100); /* s2's kernel was inner's buffer's last consumer */
    kernel(c, ROOT, 4, 5, ROOT);
    end_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, INNER), 1, 130, 130, 130, 130);
    ASSERT_MEM(FIG(state, S2), 1, 37, 7, 137, 37);
    ASSERT_MEM(FIG(state, ROOT), 1, 42, 5, 137, 42);
    ASSERT_MEM(FIG(state, S1), 1, 0, 0, 0, 0); /* called, with no memory of its own */
}

/* A free of memory allocated before the forward (an input) lowers net only; a module the
 * export counted twice gets two samples that add up to the forward's figures. */
static void test_calls_split_the_forwards_figures_and_old_blocks_lower_net_only(void **state) {
    lp_collector *c = start(state, NULL);
    alloc(c, 9, 64); /* before profiling */
    forward(c, S1);
    alloc(c, 1, 301);
    kernel(c, S1, 0, 0, ROOT);
    release(c, 9, 64);
    lp_ev_add_calls(c, S1, 2);
    lp_ev_call_exit(c, 10);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const lp_mem_stats *m = &FIG(state, S1)->mem[LP_DEV_CPU];
    ASSERT_STAT(m->retained, 301, 150, 151, 2);
    ASSERT_STAT(m->self_retained, 301, 150, 151, 2);
    ASSERT_STAT(m->net, 237, 118, 119, 2);
    ASSERT_STAT(m->peak, 602, 301, 301, 2); /* the forward's, in each call */
    assert_int_equal(FIG(state, S1)->calls, 2);
    ASSERT_MEM(FIG(state, ROOT), 1, 301, 0, 301, 237);
}

/* --path s2: the root is not measured, its wrapper's memory for s2's kernels still is s2's. */
static void test_a_selected_module_gets_the_wrappers_memory_under_an_unmeasured_root(void **state) {
    uint8_t selected[N_MODULES] = {0};
    selected[S2] = 1;
    lp_collector *c = start(state, selected);
    stages_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, S2), 1, 1024, 1024, 1024, -3072);
    assert_int_equal(FIG(state, S1)->mem[LP_DEV_CPU].retained.n, 0);
    assert_int_equal(FIG(state, ROOT)->mem[LP_DEV_CPU].retained.n, 0);
}

/* An aborted forward leaves nothing behind for the next one. */
static void test_an_aborted_forward_is_forgotten(void **state) {
    lp_collector *c = start(state, NULL);
    forward(c, S1);
    alloc(c, 7, 5000);
    lp_ev_method_enter(c, S1, 1); /* the kernel throws */
    lp_collector_reset_calling_thread(c);
    stages_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, S1), 1, 4096, 4096, 6144, 4096);
}

/* Without the package's charging (a TorchScript forward), the wrapper's rules do not apply. */
static void test_a_forward_without_the_package_events_keeps_memory_in_the_frames(void **state) {
    lp_collector *c = start(state, NULL);
    lp_ev_call_enter(c, ROOT, 0);
    alloc(c, 1, 10);
    lp_ev_call_enter(c, S1, 1);
    alloc(c, 2, 20);
    lp_ev_call_exit(c, 2);
    lp_ev_call_exit(c, 3);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, S1), 1, 20, 20, 20, 20);
    ASSERT_MEM(FIG(state, ROOT), 1, 30, 10, 30, 30);
}

/* AOTInductor reorders kernels: s1's kernels run around other's. Buffer A, s1's, is consumed and
 * freed after other's kernel, before s1's last kernel gets B. A module's retained is what was
 * allocated for its kernels and not freed by its own kernels (or its submodules'): A counts, as
 * it left s1 for another module; its peak is the most of those bytes at once. The root's frame
 * sees A die before B is made. */
static void test_interleaved_kernels_count_what_other_modules_freed(void **state) {
    lp_collector *c = start(state, NULL);
    forward(c, S1);
    alloc(c, 1, 100); /* A, for s1's first kernel */
    kernel(c, S1, 0, 0, OTHER);
    kernel(c, OTHER, 0, 0, S1);
    release(c, 1, 100); /* other's kernel was A's last consumer */
    alloc(c, 2, 100);   /* B, for s1's second kernel */
    kernel(c, S1, 0, 0, ROOT);
    end_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, S1), 1, 200, 200, 200, 200);
    ASSERT_MEM(FIG(state, OTHER), 1, 0, 0, 0, -100);
    ASSERT_MEM(FIG(state, ROOT), 1, 100, 0, 100, 100);
}

/* A block of an earlier forward still alive, freed by a module in the next one, lowers that
 * module's net only there, as an input's free does: never its retained. */
static void test_a_block_of_an_earlier_forward_lowers_net_only(void **state) {
    lp_collector *c = start(state, NULL);
    forward(c, S1);
    alloc(c, 5, 100);
    kernel(c, S1, 0, 0, ROOT);
    end_forward(c); /* block 5 stays alive */
    forward(c, S1);
    kernel(c, S1, 0, 0, ROOT);
    release(c, 5, 100); /* charged to s1, the kernel that ran last */
    end_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    const lp_mem_stats *m = &FIG(state, S1)->mem[LP_DEV_CPU];
    ASSERT_STAT(m->retained, 100, 0, 100, 2);
    ASSERT_STAT(m->self_retained, 100, 0, 100, 2);
    ASSERT_STAT(m->peak, 100, 0, 100, 2);
    ASSERT_STAT(m->net, 0, -100, 100, 2);
}

/* A kernel the map placed in the root runs as an op frame right on the root (no module chain):
 * what it allocates is the root's own. */
static void test_an_op_on_the_root_charges_the_root(void **state) {
    lp_collector *c = start(state, NULL);
    forward(c, ROOT);
    /* The wrapper's memory would be s1's: only the op's frame makes the block the root's. */
    lp_ev_pkg_memory_to(c, S1, S1);
    lp_ev_op_start(c, "kernel", 0, 1);
    alloc(c, 1, 40);
    lp_ev_op_end(c, 2);
    lp_ev_pkg_memory_to(c, ROOT, ROOT);
    end_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, ROOT), 1, 40, 40, 40, 40);
    ASSERT_MEM(FIG(state, S1), 1, 0, 0, 0, 0);
}

/* Kernels in s2, s2.inner, s2: the shim keeps s2's frame open from one to the next (shim/aoti.cpp),
 * so the wrapper's buffer for the inner kernel is allocated and freed with s2's frame on top, and
 * still goes to s2.inner, its producer and last consumer, not to s2. */
static void test_the_wrapper_charges_the_next_kernel_with_a_shared_module_frame_open(void **state) {
    lp_collector *c = start(state, NULL);
    forward(c, S2);
    lp_ev_pkg_memory_to(c, S2, S2);
    lp_ev_method_enter(c, S2, 1); /* kernel 1, in s2; s2 stays open */
    lp_ev_pkg_memory_to(c, INNER, S2);
    alloc(c, 1, 100); /* for kernel 2 */
    lp_ev_pkg_memory_to(c, INNER, INNER);
    lp_ev_method_enter(c, INNER, 2); /* kernel 2, in s2.inner */
    lp_ev_call_exit(c, 3);
    lp_ev_pkg_memory_to(c, S2, INNER);
    release(c, 1, 100);             /* after its last reader, kernel 2 */
    lp_ev_pkg_memory_to(c, S2, S2); /* kernel 3, in s2 */
    lp_ev_call_exit(c, 4);
    lp_ev_pkg_memory_to(c, ROOT, S2);
    end_forward(c);
    assert_int_equal(lp_collector_finish(c), LP_OK);
    ASSERT_MEM(FIG(state, INNER), 1, 0, 0, 100, 0);
    ASSERT_MEM(FIG(state, S2), 1, 0, 0, 100, 0);
    ASSERT_MEM(FIG(state, ROOT), 1, 0, 0, 100, 0);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        TEST(test_the_wrappers_buffers_go_to_their_producer_and_frees_to_the_last_consumer),
        TEST(test_each_forward_adds_its_own_figures),
        TEST(test_nested_modules_total_their_childrens_memory),
        TEST(test_calls_split_the_forwards_figures_and_old_blocks_lower_net_only),
        TEST(test_a_selected_module_gets_the_wrappers_memory_under_an_unmeasured_root),
        TEST(test_an_aborted_forward_is_forgotten),
        TEST(test_a_forward_without_the_package_events_keeps_memory_in_the_frames),
        TEST(test_interleaved_kernels_count_what_other_modules_freed),
        TEST(test_a_block_of_an_earlier_forward_lowers_net_only),
        TEST(test_an_op_on_the_root_charges_the_root),
        TEST(test_the_wrapper_charges_the_next_kernel_with_a_shared_module_frame_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
