/* golden.h: comparing rendered text with a golden file in LP_GOLDEN_DIR, shared by the unit tests.
 * LP_UPDATE_GOLDEN=1 rewrites the files instead (review the diff before committing them). */
#ifndef LP_TEST_GOLDEN_H
#define LP_TEST_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The whole file, NUL-terminated (free it), or NULL when it cannot be read. */
static inline char *golden_read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    char *text = n >= 0 ? malloc((size_t)n + 1) : NULL;
    rewind(f);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) {
        free(text);
        fclose(f);
        return NULL;
    }
    text[n] = '\0';
    fclose(f);
    return text;
}

/* What a renderer wrote into `f` (a tmpfile), NUL-terminated (free it); closes `f`. */
static inline char *golden_take(FILE *f) {
    assert_non_null(f);
    fflush(f);
    long n = ftell(f);
    assert_true(n >= 0);
    char *text = malloc((size_t)n + 1);
    assert_non_null(text);
    rewind(f);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    text[n] = '\0';
    fclose(f);
    return text;
}

static inline void assert_golden(const char *name, const char *actual) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", LP_GOLDEN_DIR, name);
    const char *update = getenv("LP_UPDATE_GOLDEN");
    if (update && strcmp(update, "1") == 0) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fputs(actual, f);
        fclose(f);
        return;
    }
    char *expected = golden_read_file(path);
    if (!expected) fail_msg("missing golden file %s (LP_UPDATE_GOLDEN=1 writes it)", path);
    if (strcmp(expected, actual) != 0) {
        fprintf(stderr, "--- expected %s\n%s--- actual\n%s---\n", path, expected, actual);
        free(expected);
        fail_msg("output differs from %s", name);
    }
    free(expected);
}

#endif
