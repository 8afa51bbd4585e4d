/* test_thread_block.c: per-thread heap blocks: one per thread, zeroed, kept across asks, and freed
 * with the caller's pointer forgotten when the thread exits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>

#include "base/thread_block.h"
#include "base/thread_local.h"

static LP_THREAD_LOCAL unsigned char *t_cached; /* the pointer a caller keeps */
static _Atomic int forgotten;                   /* forget() calls, all threads */

static void forget(void) {
    t_cached = NULL;
    atomic_fetch_add(&forgotten, 1);
}
static lp_thread_block block = {.size = 1000, .forget = forget};

/* Asks twice: the same block, zeroed at first, keeping what was written. */
static void *use_block(void *arg) {
    unsigned char *b = t_cached = lp_thread_block_get(&block);
    if (!b) return NULL;
    for (size_t i = 0; i < block.size; i++)
        if (b[i] != 0) return NULL;
    memset(b, (int)(intptr_t)arg, block.size);
    if (lp_thread_block_get(&block) != b || b[block.size - 1] != (unsigned char)(intptr_t)arg)
        return NULL;
    return b;
}

static void test_one_block_per_thread(void **state) {
    (void)state;
    enum { N = 4 };
    pthread_t threads[N];
    int before = atomic_load(&forgotten);
    for (intptr_t i = 0; i < N; i++)
        assert_int_equal(pthread_create(&threads[i], NULL, use_block, (void *)(i + 1)), 0);
    void *blocks[N];
    for (int i = 0; i < N; i++) {
        assert_int_equal(pthread_join(threads[i], &blocks[i]), 0);
        assert_non_null(blocks[i]);
    }
    /* Each thread's exit forgot its pointer and freed its block (the sanitizer build would see
     * a block leaked); each found its block zeroed, so none was handed one still in use. */
    assert_int_equal(atomic_load(&forgotten) - before, N);
}

static void test_main_thread_keeps_its_block(void **state) {
    (void)state;
    unsigned char *b = use_block((void *)9);
    assert_non_null(b);
    assert_ptr_equal(t_cached, b);
    assert_ptr_equal(lp_thread_block_get(&block), b);
    assert_int_equal(b[0], 9);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_block_per_thread),
        cmocka_unit_test(test_main_thread_keeps_its_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
