/* golden_cases.h: renderer tests as a table. A case is {golden file, fixture, options, renderer}:
 * the fixture builds a tree, the options adjust lp_render_opts_init's defaults, the renderer writes
 * the tree, and the text must equal tests/golden/<golden> byte for byte. Adding a golden case is
 * adding a row; every row runs as its own cmocka test, named after its golden file.
 * LP_UPDATE_GOLDEN=1 rewrites the files instead of comparing (golden.h). */
#ifndef LP_TEST_GOLDEN_CASES_H
#define LP_TEST_GOLDEN_CASES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "golden.h"
#include <stdio.h>
#include <stdlib.h>

#include "model/tree.h"
#include "report/render.h"

/* A renderer as the cases call it; wrap those that take more (a run object, a timeline). */
typedef int (*golden_render_fn)(const lp_tree *tree, const lp_render_opts *ro, FILE *out);

typedef struct golden_case {
    const char *golden;                  /* file name in tests/golden */
    void (*fixture)(lp_tree *tree);      /* builds the tree (lp_tree_init included) */
    void (*options)(lp_render_opts *ro); /* NULL: the defaults */
    golden_render_fn render;             /* NULL: the table's renderer (golden_cases_main) */
} golden_case;

static golden_render_fn golden_cases_default_render;

static void golden_case_run(void **state) {
    const golden_case *c = *state;
    lp_tree t;
    c->fixture(&t);
    lp_render_opts ro;
    lp_render_opts_init(&ro);
    if (c->options) c->options(&ro);
    golden_render_fn render = c->render ? c->render : golden_cases_default_render;
    FILE *f = tmpfile();
    assert_non_null(f);
    int rc = render(&t, &ro, f);
    if (rc != LP_OK) fail_msg("%s: render failed: %s", c->golden, lp_error_last());
    char *text = golden_take(f);
    assert_golden(c->golden, text);
    free(text);
    lp_tree_free(&t);
}

/* Runs the cases (rendered by `render` unless a row names its own), then the other tests. */
static inline int golden_cases_main(const char *group, golden_render_fn render,
                                    const golden_case *cases, size_t n_cases,
                                    const struct CMUnitTest *others, size_t n_others) {
    golden_cases_default_render = render;
    struct CMUnitTest *tests = calloc(n_cases + n_others, sizeof *tests);
    if (!tests) return 1;
    for (size_t i = 0; i < n_cases; i++)
        tests[i] = (struct CMUnitTest){.name = cases[i].golden,
                                       .test_func = golden_case_run,
                                       .initial_state = (void *)&cases[i]};
    for (size_t i = 0; i < n_others; i++)
        tests[n_cases + i] = others[i];
    int failed = _cmocka_run_group_tests(group, tests, n_cases + n_others, NULL, NULL);
    free(tests);
    return failed;
}

#endif
