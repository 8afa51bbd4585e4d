/* render_openmetrics.c: Prometheus' text exposition of the module tree (docs/sampling.md). */
#include "base/error.h"
#include "report/render.h"

int lp_render_openmetrics(const lp_tree *tree, const json_t *run, const lp_render_opts *ro,
                          FILE *out) {
    (void)tree, (void)run, (void)ro, (void)out;
    return lp_error_set(LP_ERR_UNSUPPORTED, "the openmetrics format is not implemented yet");
}
