/* owner_fixture.h: the options that keep the texts input parsers copy (lp_input_parse's
 * `owner`), from a test group's first test to its last: cmocka_run_group_tests(tests,
 * init_owner, release_owner). For the config tests that parse inputs. */
#ifndef LP_TEST_OWNER_FIXTURE_H
#define LP_TEST_OWNER_FIXTURE_H

#include "layerprof.h"

static lp_options g_owner;

static int init_owner(void **state) {
    (void)state;
    lp_options_init(&g_owner);
    return 0;
}

static int release_owner(void **state) {
    (void)state;
    lp_options_release(&g_owner);
    return 0;
}

#endif
