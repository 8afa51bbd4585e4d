/* test_note_list.c: the lines under a report's table, a list with no fixed length. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "base/note_list.h"
#include "layerprof.h"

/* A thousand lines, formatted, kept in the order added: none dropped, none lost. */
static void keeps_every_line_in_order(void **state) {
    (void)state;
    lp_note_list l;
    lp_note_list_init(&l);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(lp_note_list_addf(&l, "note: %d of %s", i, "many"), LP_OK);
    assert_int_equal(l.n, 1000);
    assert_int_equal(l.lost, 0);
    char want[64];
    for (int i = 0; i < 1000; i++) {
        snprintf(want, sizeof want, "note: %d of many", i);
        assert_string_equal(l.lines[i], want);
    }
    lp_note_list_free(&l);
    assert_int_equal(l.n, 0);
    assert_null(l.lines);
}

/* A line longer than any fixed buffer the notes once had (256) is kept whole. */
static void keeps_a_long_line_whole(void **state) {
    (void)state;
    char long_text[2000];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    lp_note_list l = {0};
    assert_int_equal(lp_note_list_addf(&l, "warning: %s.", long_text), LP_OK);
    assert_int_equal(strlen(l.lines[0]), strlen("warning: .") + sizeof long_text - 1);
    lp_note_list_free(&l);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(keeps_every_line_in_order),
        cmocka_unit_test(keeps_a_long_line_whole),
    };
    return cmocka_run_group_tests_name("unit.base.note_list", tests, NULL, NULL);
}
