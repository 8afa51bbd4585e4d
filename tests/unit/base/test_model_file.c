/* test_model_file.c: each way a model path can fail before libtorch reads it gets its own status
 * and reason (model_file.h), and a zip archive passes. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/model_file.h"
#include "layerprof.h"

static char dir[64];

static const char *write_file(const char *name, const void *bytes, size_t n) {
    static char path[128];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (n) assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
    return path;
}

static void expect(const char *path, int status, const char *says) {
    assert_int_equal(lp_model_file_check(path), status);
    if (!strstr(lp_error_last(), says))
        fail_msg("'%s': message '%s' does not say '%s'", path, lp_error_last(), says);
}

static void each_failure_has_its_reason(void **state) {
    (void)state;
    char missing[128];
    snprintf(missing, sizeof missing, "%s/nosuch.pt", dir);
    expect(missing, LP_ERR_NOT_FOUND, "does not exist");
    expect(dir, LP_ERR_INVALID, "is a directory");
    expect(write_file("empty.pt", "", 0), LP_ERR_MODEL, "is empty (0 bytes)");
    expect(write_file("text.pt", "hello, model\n", 13), LP_ERR_MODEL, "are zip archives");
    expect(write_file("short.pt", "PK", 2), LP_ERR_MODEL, "are zip archives");
    expect("/dev/null", LP_ERR_INVALID, "is not a regular file");
}

static void a_zip_archive_passes(void **state) {
    (void)state;
    assert_int_equal(lp_model_file_check(write_file("zip.pt", "PK\3\4rest", 8)), LP_OK);
}

static int setup(void **state) {
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/lp_model_file_XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    const char *names[] = {"empty.pt", "text.pt", "short.pt", "zip.pt"};
    char path[128];
    for (size_t i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    rmdir(dir);
    return 0;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_failure_has_its_reason),
        cmocka_unit_test(a_zip_archive_passes),
    };
    return cmocka_run_group_tests_name("unit.test_model_file", tests, setup, teardown);
}
