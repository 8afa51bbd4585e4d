/* test_strpool.c: interned strings that never move, shared by reference count. Run under ASan
 * (the sanitizer build) a string read after its pool was freed, or moved by growth, fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/strpool.h"

static void equal_texts_are_one_pointer_and_a_copy(void **state) {
    (void)state;
    lp_strpool *p = lp_strpool_new();
    assert_non_null(p);
    char buf[16] = "conv1";
    const char *a = lp_strpool_intern(p, buf);
    assert_non_null(a);
    assert_ptr_not_equal(a, buf); /* the pool's copy, not the caller's buffer */
    strcpy(buf, "relu");
    assert_string_equal(a, "conv1");
    assert_ptr_equal(lp_strpool_intern(p, "conv1"), a);
    const char *b = lp_strpool_intern(p, buf);
    assert_string_equal(b, "relu");
    assert_ptr_not_equal(a, b);
    const char *empty = lp_strpool_intern(p, "");
    assert_string_equal(empty, "");
    assert_ptr_equal(lp_strpool_intern(p, ""), empty);
    assert_int_equal(lp_strpool_count(p), 3);
    lp_strpool_release(p);
}

/* Thousands of strings (table growth, many chunks) and long ones (a chunk each): every pointer
 * handed out earlier still reads its text, and interning it again gives it back. */
static void strings_never_move_as_the_pool_grows(void **state) {
    (void)state;
    enum { N = 20000 };
    lp_strpool *p = lp_strpool_new();
    const char **got = malloc(N * sizeof *got);
    assert_non_null(got);
    char text[64];
    char *big = malloc(40000);
    assert_non_null(big);
    for (int i = 0; i < N; i++) {
        if (i % 1000 == 999) { /* longer than a chunk, and longer than a quarter of one */
            memset(big, 'a' + i % 26, (size_t)(i % 2 ? 39999 : 5000));
            big[i % 2 ? 39999 : 5000] = '\0';
            memcpy(big + 1, &"0123456789abcdefghij"[i / 1000], 1); /* unique: no two equal */
            got[i] = lp_strpool_intern(p, big);
        } else {
            snprintf(text, sizeof text, "layer%d.%d.conv", i / 7, i % 7);
            got[i] = lp_strpool_intern(p, text);
        }
        assert_non_null(got[i]);
    }
    assert_int_equal(lp_strpool_count(p), N);
    for (int i = 0; i < N; i++) {
        if (i % 1000 == 999) {
            assert_int_equal(strlen(got[i]), i % 2 ? 39999 : 5000);
            assert_int_equal(got[i][0], 'a' + i % 26);
            assert_int_equal(got[i][1], "0123456789abcdefghij"[i / 1000]);
            continue;
        }
        snprintf(text, sizeof text, "layer%d.%d.conv", i / 7, i % 7);
        assert_string_equal(got[i], text);
        assert_ptr_equal(lp_strpool_intern(p, text), got[i]);
    }
    assert_int_equal(lp_strpool_count(p), N);
    free(big);
    free(got);
    lp_strpool_release(p);
}

/* The last reference frees the pool; until then every holder reads every string. */
static void a_shared_pool_lives_until_its_last_reference(void **state) {
    (void)state;
    lp_strpool *p = lp_strpool_new();
    lp_strpool *q = lp_strpool_retain(p);
    assert_ptr_equal(q, p);
    const char *s = lp_strpool_intern(p, "main/forward/block");
    lp_strpool_release(p); /* one holder gone */
    assert_string_equal(s, "main/forward/block");
    assert_ptr_equal(lp_strpool_intern(q, "main/forward/block"), s);
    lp_strpool_release(q); /* the last one: freed (ASan and LSan check) */
    lp_strpool_release(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(equal_texts_are_one_pointer_and_a_copy),
        cmocka_unit_test(strings_never_move_as_the_pool_grows),
        cmocka_unit_test(a_shared_pool_lives_until_its_last_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
