/* test_names.c: the spellings of the options' enum values (names.c): every value has a canonical
 * name, listed before its aliases, and the names agree with the public ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config/names.h"
#include "layerprof.h"

static void every_value_has_its_canonical_name_first(void **state) {
    (void)state;
    const lp_cfg_names *all[] = {&lp_cfg_modes, &lp_cfg_units, &lp_cfg_formats, &lp_cfg_fills,
                                 &lp_cfg_cuda_timings};
    for (size_t t = 0; t < sizeof all / sizeof all[0]; t++) {
        const lp_cfg_names *names = all[t];
        assert_non_null(names->what);
        for (size_t i = 0; i < names->n; i++) {
            const char *canonical = lp_cfg_name_of(names, names->v[i].value);
            assert_non_null(canonical);
            for (size_t j = 0; j < names->n; j++) /* the canonical entry comes first */
                if (names->v[j].name == canonical) assert_true(j <= i);
        }
        assert_null(lp_cfg_name_of(names, 99));
    }
    assert_string_equal(lp_cfg_name_of(&lp_cfg_fills, LP_FILL_ZEROS), "zeros");
    assert_string_equal(lp_cfg_name_of(&lp_cfg_cuda_timings, LP_CUDA_TIMING_OFF), "off");
}

/* The file's format names are the library's (lp_format_name), aliases included. */
static void format_names_match_the_public_ones(void **state) {
    (void)state;
    for (int f = LP_FORMAT_TREE; f <= LP_FORMAT_SUMMARY; f++)
        assert_string_equal(lp_cfg_name_of(&lp_cfg_formats, f), lp_format_name((lp_format)f));
    for (size_t i = 0; i < lp_cfg_formats.n; i++) {
        lp_format parsed;
        assert_int_equal(lp_format_parse(lp_cfg_formats.v[i].name, &parsed), LP_OK);
        assert_int_equal((int)parsed, lp_cfg_formats.v[i].value);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_value_has_its_canonical_name_first),
        cmocka_unit_test(format_names_match_the_public_ones),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
