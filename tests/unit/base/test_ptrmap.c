/* test_ptrmap.c: the live-allocation map (open addressing, backward-shift deletion). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/ptrmap.h"

static lp_alloc_rec rec_of(uintptr_t ptr, int64_t bytes) {
    lp_alloc_rec r;
    memset(&r, 0, sizeof r);
    r.ptr = ptr;
    r.bytes = bytes;
    r.owner_serial = (uint64_t)bytes * 3;
    r.module_serial = (uint64_t)bytes * 5;
    r.owner_depth = (int16_t)(bytes % 100);
    r.module_depth = (int16_t)(bytes % 7);
    r.device = (int32_t)(bytes & 1);
    r.pkg_module = (int32_t)(bytes % 11) - 1;
    r.pkg_forward = (uint32_t)bytes * 7;
    return r;
}

static void assert_rec_equal(const lp_alloc_rec *a, const lp_alloc_rec *b) {
    assert_int_equal(a->ptr, b->ptr);
    assert_int_equal(a->bytes, b->bytes);
    assert_int_equal(a->owner_serial, b->owner_serial);
    assert_int_equal(a->module_serial, b->module_serial);
    assert_int_equal(a->owner_depth, b->owner_depth);
    assert_int_equal(a->module_depth, b->module_depth);
    assert_int_equal(a->device, b->device);
    assert_int_equal(a->pkg_module, b->pkg_module);
    assert_int_equal(a->pkg_forward, b->pkg_forward);
}

/* The map's home slot for a pointer, as ptrmap.c computes it. Used only to pick keys that collide:
 * should the hash change, these tests still check correctness, only with less clustering. */
static size_t home_of(uintptr_t p, size_t cap) {
    return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
}

/* Fills `out` with `n` 16-byte aligned pointers whose home slot is `home` in a map of `cap`. */
static void keys_with_home(size_t home, size_t cap, uintptr_t *out, size_t n, uintptr_t *next) {
    size_t k = 0;
    for (uintptr_t p = *next; k < n; p += 16)
        if (home_of(p, cap) == home) {
            out[k++] = p;
            *next = p + 16;
        }
}

static void test_a_new_map_is_empty_and_finds_nothing(void **state) {
    (void)state;
    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 10), 0);
    assert_int_equal(m.cap, 64); /* at least 64, a power of two */
    assert_int_equal(m.count, 0);
    lp_alloc_rec out;
    assert_int_equal(lp_ptrmap_take(&m, 0x1000, &out), 0);
    lp_ptrmap_free(&m);
    assert_null(m.slots);
    assert_int_equal(m.cap, 0);

    assert_int_equal(lp_ptrmap_init(&m, 1000), 0);
    assert_int_equal(m.cap, 1024);
    lp_ptrmap_free(&m);
}

static void test_inserted_records_are_taken_back_once(void **state) {
    (void)state;
    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 64), 0);
    lp_alloc_rec a = rec_of(0x1000, 101), b = rec_of(0x2040, 202), c = rec_of(0x30c0, 303);
    assert_int_equal(lp_ptrmap_put(&m, &a), 0);
    assert_int_equal(lp_ptrmap_put(&m, &b), 0);
    assert_int_equal(lp_ptrmap_put(&m, &c), 0);
    assert_int_equal(m.count, 3);

    lp_alloc_rec out;
    assert_int_equal(lp_ptrmap_take(&m, 0x2040, &out), 1);
    assert_rec_equal(&out, &b);
    assert_int_equal(lp_ptrmap_take(&m, 0x2040, &out), 0);
    assert_int_equal(lp_ptrmap_take(&m, 0x9999, &out), 0);
    assert_int_equal(m.count, 2);
    assert_int_equal(lp_ptrmap_take(&m, 0x1000, &out), 1);
    assert_rec_equal(&out, &a);
    assert_int_equal(lp_ptrmap_take(&m, 0x30c0, &out), 1);
    assert_rec_equal(&out, &c);
    assert_int_equal(m.count, 0);
    lp_ptrmap_free(&m);
}

static void test_putting_a_known_pointer_replaces_its_record(void **state) {
    (void)state;
    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 64), 0);
    lp_alloc_rec first = rec_of(0x4000, 10), second = rec_of(0x4000, 20);
    assert_int_equal(lp_ptrmap_put(&m, &first), 0);
    assert_int_equal(lp_ptrmap_put(&m, &second), 0);
    assert_int_equal(m.count, 1);
    lp_alloc_rec out;
    assert_int_equal(lp_ptrmap_take(&m, 0x4000, &out), 1);
    assert_rec_equal(&out, &second);
    assert_int_equal(lp_ptrmap_take(&m, 0x4000, &out), 0);
    assert_int_equal(m.count, 0);
    lp_ptrmap_free(&m);
}

static void test_the_null_pointer_is_never_a_key(void **state) {
    (void)state;
    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 64), 0);
    lp_alloc_rec a = rec_of(0x1000, 1), null = rec_of(0, 2);
    assert_int_equal(lp_ptrmap_put(&m, &a), 0);
    assert_int_equal(lp_ptrmap_put(&m, &null), -1);
    assert_int_equal(m.count, 1);
    lp_alloc_rec out;
    assert_int_equal(lp_ptrmap_take(&m, 0, &out), 0); /* must not "find" an empty slot */
    assert_int_equal(m.count, 1);
    assert_int_equal(lp_ptrmap_take(&m, 0x1000, &out), 1);
    assert_int_equal(m.count, 0);
    lp_ptrmap_free(&m);
}

static void test_the_map_grows_when_half_full_and_keeps_every_record(void **state) {
    (void)state;
    enum { N = 20000 };
    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 64), 0);
    for (int i = 1; i <= N; i++) {
        lp_alloc_rec r = rec_of((uintptr_t)i * 64, i);
        assert_int_equal(lp_ptrmap_put(&m, &r), 0);
        assert_true(m.count * 2 <= m.cap);
        assert_int_equal(m.cap & (m.cap - 1), 0);
    }
    assert_int_equal(m.count, N);
    assert_int_equal(m.cap, 65536);
    lp_alloc_rec out;
    for (int i = N; i >= 1; i--) {
        assert_int_equal(lp_ptrmap_take(&m, (uintptr_t)i * 64, &out), 1);
        lp_alloc_rec want = rec_of((uintptr_t)i * 64, i);
        assert_rec_equal(&out, &want);
    }
    assert_int_equal(m.count, 0);
    lp_ptrmap_free(&m);
}

static void test_clear_forgets_everything_but_keeps_the_capacity(void **state) {
    (void)state;
    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 64), 0);
    for (int i = 1; i <= 100; i++) {
        lp_alloc_rec r = rec_of((uintptr_t)i * 16, i);
        assert_int_equal(lp_ptrmap_put(&m, &r), 0);
    }
    size_t cap = m.cap;
    lp_ptrmap_clear(&m);
    assert_int_equal(m.count, 0);
    assert_int_equal(m.cap, cap);
    lp_alloc_rec out;
    for (int i = 1; i <= 100; i++)
        assert_int_equal(lp_ptrmap_take(&m, (uintptr_t)i * 16, &out), 0);
    lp_alloc_rec r = rec_of(0x80, 5);
    assert_int_equal(lp_ptrmap_put(&m, &r), 0);
    assert_int_equal(lp_ptrmap_take(&m, 0x80, &out), 1);
    lp_ptrmap_free(&m);
}

/* Checks that exactly the keys with live[i] set are in the map (each taken and put back). */
static void assert_holds_exactly(lp_ptrmap *m, const uintptr_t *keys, const int *live, size_t n) {
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        lp_alloc_rec out;
        int found = lp_ptrmap_take(m, keys[i], &out);
        assert_int_equal(found, live[i]);
        if (found) {
            count++;
            assert_int_equal(out.ptr, keys[i]);
            assert_int_equal(out.bytes, (int64_t)i + 1);
            assert_int_equal(lp_ptrmap_put(m, &out), 0);
        }
    }
    assert_int_equal(m->count, count);
}

/* One run of keys sharing a home slot, then keys homed inside that run (they sit displaced past
 * it), across the end of the table so the run wraps around to slot 0. Deleting from the front,
 * middle and back must leave every other key reachable. */
static void
test_deleting_inside_colliding_runs_that_wrap_keeps_every_other_key_reachable(void **state) {
    (void)state;
    enum { CAP = 64, SAME = 12, NEAR = 8, N = SAME + 2 * NEAR };
    uintptr_t keys[N], next = 0x10000;
    keys_with_home(CAP - 4, CAP, keys, SAME, &next); /* run starts 4 slots before the end */
    keys_with_home(CAP - 2, CAP, keys + SAME, NEAR, &next);
    keys_with_home(1, CAP, keys + SAME + NEAR, NEAR, &next); /* homes inside the wrapped part */

    /* Several deletion orders over the same set. */
    static const size_t orders[][N] = {
        {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13,
         14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27},
        {27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, 14,
         13, 12, 11, 10, 9,  8,  7,  6,  5,  4,  3,  2,  1,  0},
        {5, 12, 20, 0, 27, 11, 13, 19, 6,  1,  25, 14, 3,  22,
         8, 17, 10, 2, 24, 9,  16, 4,  21, 15, 7,  26, 18, 23},
    };
    for (size_t o = 0; o < sizeof orders / sizeof orders[0]; o++) {
        lp_ptrmap m;
        assert_int_equal(lp_ptrmap_init(&m, CAP), 0);
        int live[N];
        for (size_t i = 0; i < N; i++) {
            lp_alloc_rec r = rec_of(keys[i], (int64_t)i + 1);
            assert_int_equal(lp_ptrmap_put(&m, &r), 0);
            live[i] = 1;
        }
        assert_int_equal(m.cap, CAP); /* no growth: the collisions stay as built */
        /* The run really wraps: slot 0 is taken. */
        assert_true(m.slots[0].ptr != 0);
        for (size_t k = 0; k < N; k++) {
            size_t i = orders[o][k];
            lp_alloc_rec out;
            assert_int_equal(lp_ptrmap_take(&m, keys[i], &out), 1);
            assert_int_equal(out.bytes, (int64_t)i + 1);
            live[i] = 0;
            assert_holds_exactly(&m, keys, live, N);
        }
        assert_int_equal(m.count, 0);
        for (size_t s = 0; s < CAP; s++)
            assert_int_equal(m.slots[s].ptr, 0);
        lp_ptrmap_free(&m);
    }
}

/* xorshift64*: a fixed sequence on every platform. */
static uint64_t rng_next(uint64_t *s) {
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

/* 100k random puts and takes against a plain array: the map must agree on every answer. The key
 * pool is small and dense, so probe runs are long, collide, wrap and are cut up by deletions. */
static void test_random_puts_and_takes_agree_with_a_reference_array(void **state) {
    (void)state;
    enum { POOL = 3000, OPS = 100000 };
    uintptr_t *keys = malloc(POOL * sizeof *keys);
    int64_t *bytes = calloc(POOL, sizeof *bytes); /* 0: not in the map */
    assert_non_null(keys);
    assert_non_null(bytes);
    uint64_t seed = 0x5EEDC0FFEEull;
    for (size_t i = 0; i < POOL; i++)
        keys[i] = 0x7f0000000000u + (uintptr_t)i * 16;

    lp_ptrmap m;
    assert_int_equal(lp_ptrmap_init(&m, 64), 0);
    size_t live = 0, max_live = 0;
    for (int op = 0; op < OPS; op++) {
        uint64_t r = rng_next(&seed);
        size_t i = (size_t)(r % POOL);
        /* Phases: mostly puts, then mostly takes, so the count sweeps up and down. */
        int put_bias = (op / 10000) % 2 ? 30 : 70;
        if ((int)((r >> 32) % 100) < put_bias) {
            int64_t b = (int64_t)(rng_next(&seed) % 1000000) + 1;
            lp_alloc_rec rec = rec_of(keys[i], b);
            assert_int_equal(lp_ptrmap_put(&m, &rec), 0);
            if (!bytes[i]) live++;
            bytes[i] = b;
        } else {
            lp_alloc_rec out;
            int found = lp_ptrmap_take(&m, keys[i], &out);
            assert_int_equal(found, bytes[i] != 0);
            if (found) {
                lp_alloc_rec want = rec_of(keys[i], bytes[i]);
                assert_rec_equal(&out, &want);
                bytes[i] = 0;
                live--;
            }
        }
        assert_int_equal(m.count, live);
        if (live > max_live) max_live = live;
    }
    assert_true(max_live > POOL / 2); /* the count swept up and down through a grown map */
    /* Every key answers as the reference says. */
    for (size_t i = 0; i < POOL; i++) {
        lp_alloc_rec out;
        int found = lp_ptrmap_take(&m, keys[i], &out);
        assert_int_equal(found, bytes[i] != 0);
        if (found) assert_int_equal(out.bytes, bytes[i]);
    }
    assert_int_equal(m.count, 0);
    lp_ptrmap_free(&m);
    free(keys);
    free(bytes);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_new_map_is_empty_and_finds_nothing),
        cmocka_unit_test(test_inserted_records_are_taken_back_once),
        cmocka_unit_test(test_putting_a_known_pointer_replaces_its_record),
        cmocka_unit_test(test_the_null_pointer_is_never_a_key),
        cmocka_unit_test(test_the_map_grows_when_half_full_and_keeps_every_record),
        cmocka_unit_test(test_clear_forgets_everything_but_keeps_the_capacity),
        cmocka_unit_test(
            test_deleting_inside_colliding_runs_that_wrap_keeps_every_other_key_reachable),
        cmocka_unit_test(test_random_puts_and_takes_agree_with_a_reference_array),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
