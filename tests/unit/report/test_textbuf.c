/* test_textbuf.c: the text buffer the fixed-width tables are built in, and the width they pad by.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "report/textbuf.h"

static void appends_keep_the_text_nul_terminated(void **state) {
    (void)state;
    lp_textbuf b = {0};
    lp_textbuf_puts(&b, "Module");
    lp_textbuf_put(&b, " | xyz", 3);
    lp_textbuf_pad(&b, '-', 4);
    lp_textbuf_printf(&b, "%d calls", 12);
    assert_false(b.oom);
    assert_string_equal(b.p, "Module | ----12 calls");
    assert_int_equal(b.len, strlen(b.p));
    lp_textbuf_free(&b);
    assert_null(b.p);
    assert_int_equal(b.len, 0);
}

/* A cell longer than printf's stack buffer (a cat of many tensors' shapes) arrives whole. */
static void a_long_formatted_cell_is_written_whole(void **state) {
    (void)state;
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    lp_textbuf b = {0};
    lp_textbuf_printf(&b, "[%s]", big);
    assert_false(b.oom);
    assert_int_equal(b.len, sizeof big + 1);
    assert_int_equal(b.p[0], '[');
    assert_int_equal(b.p[b.len - 1], ']');
    lp_textbuf_free(&b);
}

/* Growing past the first 4 KiB keeps what was written. */
static void the_buffer_grows_and_keeps_its_content(void **state) {
    (void)state;
    lp_textbuf b = {0};
    for (int i = 0; i < 10000; i++)
        lp_textbuf_put(&b, i % 2 ? "b" : "a", 1);
    assert_int_equal(b.len, 10000);
    assert_true(b.cap > 10000);
    for (int i = 0; i < 10000; i++)
        assert_int_equal(b.p[i], i % 2 ? 'b' : 'a');
    lp_textbuf_free(&b);
}

static void width_counts_code_points_not_bytes(void **state) {
    (void)state;
    assert_int_equal(lp_text_width(""), 0);
    assert_int_equal(lp_text_width("conv1"), 5);
    assert_int_equal(lp_text_width("├── "), 4);   /* 3-byte box glyphs */
    assert_int_equal(lp_text_width("│└── 0"), 6); /* as the tree's rows are */
    assert_int_equal(lp_text_width("Größe"), 5);  /* 2-byte letters */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(appends_keep_the_text_nul_terminated),
        cmocka_unit_test(a_long_formatted_cell_is_written_whole),
        cmocka_unit_test(the_buffer_grows_and_keeps_its_content),
        cmocka_unit_test(width_counts_code_points_not_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
