/* report_load_fixture.h: a hand-built tree as a report read back from a JSON file, as the CLI's
 * readers (merge, diff) get it. Include after defining _POSIX_C_SOURCE (mkstemp). */
#ifndef LP_TEST_REPORT_LOAD_FIXTURE_H
#define LP_TEST_REPORT_LOAD_FIXTURE_H

#include <unistd.h>

#include "export_fixtures.h"
#include "layerprof.h"

/* t written as JSON with `run` to a temporary file, loaded, the file removed. */
static inline lp_report *fx_report(const lp_tree *t, const json_t *run) {
    char path[64];
    snprintf(path, sizeof path, "/tmp/lp_test_report_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(lp_render_json(t, run, f), LP_OK);
    fclose(f);
    lp_report *r = NULL;
    assert_int_equal(lp_report_load(&r, path), LP_OK);
    unlink(path);
    return r;
}

#endif
