/* test_labels.c: a run's labels against Prometheus' rules (base/labels.h), through
 * lp_options_set as the CLI and the YAML file set them, and lp_options_validate as a program
 * that fills lp_options.labels itself is checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "base/labels.h"
#include "layerprof.h"

static void good_labels_are_kept_in_order(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    assert_int_equal(lp_options_set(&o, "labels", "host=node-1.example"), LP_OK);
    assert_int_equal(lp_options_set(&o, "labels", "rank=3"), LP_OK);
    assert_int_equal(lp_options_set(&o, "labels", "_x9=caf\xc3\xa9 = ok"), LP_OK);
    assert_int_equal(o.n_labels, 3);
    assert_string_equal(o.labels[0], "host=node-1.example");
    assert_string_equal(o.labels[2], "_x9=caf\xc3\xa9 = ok");
    lp_options_release(&o);
}

/* Each bad label: refused with its reason, the options unchanged. */
static void bad_labels_are_refused(void **state) {
    (void)state;
    static const struct {
        const char *text, *message;
    } cases[] = {
        {"rank", "'labels' takes NAME=VALUE (e.g. rank=3), not 'rank'"},
        {"=3", ": the label name '' is not one Prometheus accepts"},
        {"9rank=3", ": the label name '9rank' is not one Prometheus accepts"},
        {"ra-nk=3", ": the label name 'ra-nk' is not one Prometheus accepts"},
        {"__name__=x", ": label names starting with '__' are Prometheus' own ('__name__')"},
        {"module=x", ": the label 'module' is taken"},
        {"instance=x", ": the label 'instance' is taken"},
        {"rank=", ": the label 'rank' has an empty value"},
        {"rank=\xff", ": the value of label 'rank' is not valid UTF-8"},
        {"rank=\xc0\xaf", ": the value of label 'rank' is not valid UTF-8"},     /* overlong */
        {"rank=\xed\xa0\x80", ": the value of label 'rank' is not valid UTF-8"}, /* surrogate */
        {"host=again", ": the label 'host' is given twice"},
    };
    lp_options o;
    lp_options_init(&o);
    assert_int_equal(lp_options_set(&o, "labels", "host=a"), LP_OK);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        assert_int_equal(lp_options_set(&o, "labels", cases[i].text), LP_ERR_INVALID);
        if (!strstr(lp_error_last(), cases[i].message))
            fail_msg("'%s': got '%s'", cases[i].text, lp_error_last());
        assert_int_equal(o.n_labels, 1);
    }
    lp_options_release(&o);
}

static void at_most_16(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    char text[32];
    for (int i = 0; i < LP_MAX_LABELS; i++) {
        snprintf(text, sizeof text, "l%d=v", i);
        assert_int_equal(lp_options_set(&o, "labels", text), LP_OK);
    }
    assert_int_equal(lp_options_set(&o, "labels", "one_more=v"), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "'labels': at most 16 labels, not 17");
    assert_int_equal(o.n_labels, LP_MAX_LABELS);
    lp_options_release(&o);
}

/* A program that fills the field itself gets the same checks from lp_options_validate. */
static void validate_checks_a_list_set_by_hand(void **state) {
    (void)state;
    lp_options o;
    lp_options_init(&o);
    o.model_path = "m.pt";
    const char *bad[] = {"rank=1", "rank=2"};
    o.labels = bad;
    o.n_labels = 2;
    assert_int_equal(lp_options_validate(&o), LP_ERR_INVALID);
    assert_string_equal(lp_error_last(), "labels: the label 'rank' is given twice");
    const char *reserved[] = {"le=1"};
    o.labels = reserved;
    o.n_labels = 1;
    assert_int_equal(lp_options_validate(&o), LP_ERR_INVALID);
    const char *good[] = {"rank=1", "host=b"};
    o.labels = good;
    o.n_labels = 2;
    assert_int_equal(lp_options_validate(&o), LP_OK);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_labels_are_kept_in_order),
        cmocka_unit_test(bad_labels_are_refused),
        cmocka_unit_test(at_most_16),
        cmocka_unit_test(validate_checks_a_list_set_by_hand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
