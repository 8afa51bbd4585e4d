/* test_input_parse.c: structured forward arguments (lists, tuples, dicts, scalars, none,
 * saved:FILE) parsed into prefix-ordered entries, formatted back, and checked whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "layerprof.h"

#include "owner_fixture.h"

#define MAX 16

typedef struct parsed {
    lp_input_spec e[MAX];
    size_t n;
} parsed;

static parsed *parse(const char *text) {
    parsed *p = calloc(1, sizeof *p);
    int rc = lp_input_parse(text, p->e, MAX, &p->n, &g_owner);
    if (rc) fail_msg("'%s' did not parse: %s", text, lp_error_last());
    return p;
}

/* The text is refused as invalid, with a message that contains `why`. */
static void assert_refused(const char *text, const char *why) {
    parsed *p = calloc(1, sizeof *p);
    assert_int_equal(lp_input_parse(text, p->e, MAX, &p->n, &g_owner), LP_ERR_INVALID);
    if (!strstr(lp_error_last(), why))
        fail_msg("'%s': message '%s' does not say '%s'", text, lp_error_last(), why);
    assert_int_equal(p->n, 0);
    free(p);
}

static void assert_formats_as(const parsed *p, const char *want) {
    char buf[512];
    int len = lp_input_format(p->e, p->n, buf, sizeof buf);
    assert_int_equal(len, (int)strlen(want));
    assert_string_equal(buf, want);
}

static void test_a_tensor_spec_is_one_tensor_entry(void **state) {
    (void)state;
    parsed *p = parse("1x3x224x224:float16:zeros");
    assert_int_equal(p->n, 1);
    assert_int_equal(p->e[0].kind, LP_INPUT_TENSOR);
    assert_int_equal(p->e[0].ndim, 4);
    assert_int_equal(p->e[0].dtype, LP_DTYPE_FLOAT16);
    assert_int_equal(p->e[0].fill, LP_FILL_ZEROS);
    assert_formats_as(p, "1x3x224x224:float16:zeros");
    free(p);
}

static void test_a_list_of_images_is_a_head_and_its_items(void **state) {
    (void)state;
    parsed *p = parse("[3x320x320, 3x240x320]");
    assert_int_equal(p->n, 3);
    assert_int_equal(p->e[0].kind, LP_INPUT_LIST);
    assert_int_equal(p->e[0].n_items, 2);
    assert_int_equal(p->e[1].kind, LP_INPUT_TENSOR);
    assert_int_equal(p->e[1].shape[1], 320);
    assert_int_equal(p->e[2].kind, LP_INPUT_TENSOR);
    assert_int_equal(p->e[2].shape[1], 240);
    assert_int_equal(lp_input_value_size(p->e, p->n), 3);
    assert_formats_as(p, "[3x320x320:float32, 3x240x320:float32]");
    free(p);
}

static void test_scalars_none_and_text(void **state) {
    (void)state;
    parsed *p = parse("(int:-5, float:0.5, bool:true, bool:false, str:hello world, none)");
    assert_int_equal(p->n, 7);
    assert_int_equal(p->e[0].kind, LP_INPUT_TUPLE);
    assert_int_equal(p->e[0].n_items, 6);
    assert_int_equal(p->e[1].kind, LP_INPUT_INT);
    assert_int_equal(p->e[1].integer, -5);
    assert_int_equal(p->e[2].kind, LP_INPUT_FLOAT);
    assert_true(p->e[2].real == 0.5);
    assert_int_equal(p->e[3].kind, LP_INPUT_BOOL);
    assert_int_equal(p->e[3].integer, 1);
    assert_int_equal(p->e[4].integer, 0);
    assert_int_equal(p->e[5].kind, LP_INPUT_STR);
    assert_string_equal(p->e[5].file, "hello world");
    assert_int_equal(p->e[6].kind, LP_INPUT_NONE);
    assert_formats_as(p, "(int:-5, float:0.5, bool:true, bool:false, str:hello world, none)");
    free(p);
}

static void test_a_top_level_string_keeps_its_commas(void **state) {
    (void)state;
    parsed *p = parse("str:a, b]");
    assert_int_equal(p->n, 1);
    assert_string_equal(p->e[0].file, "a, b]");
    free(p);
    /* ... and its trailing spaces and newlines, as a file name after saved: does (the fuzzer's
     * find: they were trimmed, so what lp_input_format wrote read back shorter). */
    p = parse("saved:a.pt \n");
    assert_string_equal(p->e[0].file, "a.pt \n");
    char buf[64];
    lp_input_format(p->e, p->n, buf, sizeof buf);
    assert_string_equal(buf, "saved:a.pt \n");
    free(p);
    p = parse("  str: x ");
    assert_string_equal(p->e[0].file, " x ");
    free(p);
}

static void test_dicts_take_word_and_int_keys(void **state) {
    (void)state;
    parsed *p = parse("{boxes: 4x4, int:7: none , labels:4:int64:0..90}");
    assert_int_equal(p->n, 7);
    assert_int_equal(p->e[0].kind, LP_INPUT_DICT);
    assert_int_equal(p->e[0].n_items, 3);
    assert_int_equal(p->e[1].kind, LP_INPUT_STR);
    assert_string_equal(p->e[1].file, "boxes");
    assert_int_equal(p->e[2].kind, LP_INPUT_TENSOR);
    assert_int_equal(p->e[3].kind, LP_INPUT_INT);
    assert_int_equal(p->e[3].integer, 7);
    assert_int_equal(p->e[4].kind, LP_INPUT_NONE);
    assert_string_equal(p->e[5].file, "labels");
    assert_int_equal(p->e[6].dtype, LP_DTYPE_INT64);
    assert_true(p->e[6].low == 0 && p->e[6].high == 90);
    assert_formats_as(p, "{boxes: 4x4:float32, int:7: none, labels: 4:int64:0..90}");
    free(p);
    /* The word "int" as a key is not an int key (the fuzzer's find: it was written "int: none",
     * which read back as a bad int key). */
    p = parse("{int : none, int:-2: none}");
    assert_int_equal(p->e[1].kind, LP_INPUT_STR);
    assert_string_equal(p->e[1].file, "int");
    assert_int_equal(p->e[3].kind, LP_INPUT_INT);
    assert_int_equal(p->e[3].integer, -2);
    assert_formats_as(p, "{int: none, int:-2: none}");
    free(p);
}

static void test_nesting_and_empty_containers(void **state) {
    (void)state;
    parsed *p = parse("([], ([1x2],), {})");
    /* TUPLE(3) LIST(0) TUPLE(1) LIST(1) TENSOR DICT(0) */
    assert_int_equal(p->n, 6);
    assert_int_equal(p->e[0].n_items, 3);
    assert_int_equal(p->e[1].kind, LP_INPUT_LIST);
    assert_int_equal(p->e[1].n_items, 0);
    assert_int_equal(p->e[2].kind, LP_INPUT_TUPLE);
    assert_int_equal(p->e[2].n_items, 1);
    assert_int_equal(p->e[3].n_items, 1);
    assert_int_equal(p->e[5].kind, LP_INPUT_DICT);
    assert_int_equal(p->e[5].n_items, 0);
    assert_int_equal(lp_input_value_size(p->e, p->n), 6);
    assert_formats_as(p, "([], ([1x2:float32],), {})"); /* a one-item tuple keeps its comma */
    free(p);
}

static void test_the_formatted_text_parses_back_to_the_same_entries(void **state) {
    (void)state;
    const char *texts[] = {"[3x8x8, (int:2, none), {a: float:1e-07}]", "saved:/tmp/a,b.pt",
                           "{int:-1: [bool:true, str:x y]}", "2x8:int32:-3..3"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        parsed *a = parse(texts[i]);
        char buf[512];
        lp_input_format(a->e, a->n, buf, sizeof buf);
        parsed *b = parse(buf);
        assert_int_equal(a->n, b->n);
        for (size_t k = 0; k < a->n; k++) {
            assert_int_equal(a->e[k].kind, b->e[k].kind);
            assert_int_equal(a->e[k].n_items, b->e[k].n_items);
            assert_int_equal(a->e[k].integer, b->e[k].integer);
            assert_true(a->e[k].real == b->e[k].real);
            assert_true(!a->e[k].file == !b->e[k].file);
            if (a->e[k].file) assert_string_equal(a->e[k].file, b->e[k].file);
            assert_int_equal(a->e[k].ndim, b->e[k].ndim);
        }
        free(a);
        free(b);
    }
}

static void test_saved_names_a_file_at_the_top_only(void **state) {
    (void)state;
    parsed *p = parse("saved:args.pt");
    assert_int_equal(p->n, 1);
    assert_int_equal(p->e[0].kind, LP_INPUT_SAVED);
    assert_string_equal(p->e[0].file, "args.pt");
    free(p);
    assert_refused("[saved:args.pt]", "saved:FILE is a whole argument list");
    assert_refused("saved:", "the file name is empty");
}

static void test_mistakes_are_refused_with_what_is_wrong(void **state) {
    (void)state;
    assert_refused("[1x3, 2x2", "']' is missing at the end");
    assert_refused("[1x3 2x2]", "bad shape");
    assert_refused("(1x3; 2)", "bad shape");
    assert_refused("[1x3] 2x2", "unexpected '2x2' after the value");
    assert_refused("]", "unexpected ']'");
    assert_refused("[1x3,,2x2]", "a value is missing");
    assert_refused("", "a value is missing");
    assert_refused("int:5x", "bad integer 'int:5x'");
    assert_refused("int:99999999999999999999", "bad integer");
    assert_refused("float:abc", "bad number");
    assert_refused("float:inf", "bad number");
    assert_refused("bool:yes", "bool takes true or false");
    assert_refused("tensor", "unknown value 'tensor'");
    assert_refused("{a: 1x3", "'}' is missing at the end");
    assert_refused("{a 1x3}", "expected ':' after the key 'a'");
    assert_refused("{: 1x3}", "expected a key");
    assert_refused("[1x0]", "dimensions must be positive");
    assert_refused("[1x3:int64]", "random int64 values need a range");
}

static void test_entries_beyond_the_room_are_refused(void **state) {
    (void)state;
    lp_input_spec e[3];
    size_t n = 99;
    assert_int_equal(lp_input_parse("[1, 2, 3]", e, 3, &n, &g_owner), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "more than 3 entries"));
    assert_int_equal(n, 0);
    assert_int_equal(lp_input_parse("[1, 2]", e, 3, &n, &g_owner), LP_OK);
    assert_int_equal(n, 3);
}

static void test_nesting_is_bounded(void **state) {
    (void)state;
    char deep[200];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 99);
    deep[199] = '\0';
    lp_input_spec *e = calloc(200, sizeof *e);
    size_t n;
    assert_int_equal(lp_input_parse(deep, e, 200, &n, &g_owner), LP_ERR_INVALID);
    assert_non_null(strstr(lp_error_last(), "nested deeper than 32"));
    free(e);
}

static void test_value_size_refuses_entries_that_are_not_whole(void **state) {
    (void)state;
    lp_input_spec e[4];
    memset(e, 0, sizeof e);
    e[0].kind = LP_INPUT_LIST;
    e[0].n_items = 3; /* only two follow */
    e[1].ndim = e[2].ndim = 1;
    e[1].shape[0] = e[2].shape[0] = 2;
    assert_int_equal(lp_input_value_size(e, 3), 0);
    e[0].n_items = 2;
    assert_int_equal(lp_input_value_size(e, 3), 3);
    e[0].kind = LP_INPUT_DICT; /* a tensor key */
    e[0].n_items = 1;
    assert_int_equal(lp_input_value_size(e, 3), 0);
    e[1].kind = LP_INPUT_STR;
    e[1].file = "k";
    assert_int_equal(lp_input_value_size(e, 3), 3);
    e[2].kind = LP_INPUT_SAVED; /* not inside a container */
    e[2].file = "a.pt";
    assert_int_equal(lp_input_value_size(e, 3), 0);
    e[0].kind = (lp_input_kind)99;
    assert_int_equal(lp_input_value_size(e, 3), 0);
    assert_int_equal(lp_input_format(e, 3, NULL, 0), LP_ERR_INVALID);
}

static void test_spec_bytes_count_tensors_only(void **state) {
    (void)state;
    parsed *p = parse("[2x2, int:3]");
    assert_int_equal(lp_input_spec_bytes(&p->e[0]), 0);
    assert_int_equal(lp_input_spec_bytes(&p->e[1]), 16);
    assert_int_equal(lp_input_spec_bytes(&p->e[2]), 0);
    free(p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_tensor_spec_is_one_tensor_entry),
        cmocka_unit_test(test_a_list_of_images_is_a_head_and_its_items),
        cmocka_unit_test(test_scalars_none_and_text),
        cmocka_unit_test(test_a_top_level_string_keeps_its_commas),
        cmocka_unit_test(test_dicts_take_word_and_int_keys),
        cmocka_unit_test(test_nesting_and_empty_containers),
        cmocka_unit_test(test_the_formatted_text_parses_back_to_the_same_entries),
        cmocka_unit_test(test_saved_names_a_file_at_the_top_only),
        cmocka_unit_test(test_mistakes_are_refused_with_what_is_wrong),
        cmocka_unit_test(test_entries_beyond_the_room_are_refused),
        cmocka_unit_test(test_nesting_is_bounded),
        cmocka_unit_test(test_value_size_refuses_entries_that_are_not_whole),
        cmocka_unit_test(test_spec_bytes_count_tensors_only),
    };
    return cmocka_run_group_tests(tests, init_owner, release_owner);
}
