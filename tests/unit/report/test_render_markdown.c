/* test_render_markdown.c: the markdown table of a hand-built tree against golden files: with the
 * run's title and a note, and folded at depth 1 without op rows or title. */
#include "export_fixtures.h"
#include "golden_cases.h"

/* The markdown with the fixed run object as its title. */
static int markdown_with_run(const lp_tree *t, const lp_render_opts *ro, FILE *out) {
    json_t *run = fx_run();
    int rc = lp_render_markdown(t, ro, run, out);
    json_decref(run);
    return rc;
}

static int markdown_without_run(const lp_tree *t, const lp_render_opts *ro, FILE *out) {
    return lp_render_markdown(t, ro, NULL, out);
}

static void with_a_note(lp_render_opts *ro) {
    static const char *notes[] = {"mode: hooks (a note)"};
    ro->notes = notes;
    ro->n_notes = 1;
}

/* Folded at depth 1: features takes in its children's self time, the Total is unchanged. */
static void folded_at_depth_1_without_ops(lp_render_opts *ro) {
    with_a_note(ro);
    ro->depth = 1;
    ro->show_ops = 0;
}

static const golden_case cases[] = {
    {"export_report.md", fx_small, with_a_note, markdown_with_run},
    {"export_report_depth1.md", fx_small, folded_at_depth_1_without_ops, markdown_without_run},
    /* a package's fused modules say where their time went */
    {"render_fused.md", fx_fused_package, NULL, markdown_without_run},
};

int main(void) {
    return golden_cases_main("render_markdown", markdown_without_run, cases,
                             sizeof cases / sizeof cases[0], NULL, 0);
}
