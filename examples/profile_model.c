/* profile_model.c: profile a TorchScript model from C with layerprof's public API and print the
 * module tree, then read one module's figures programmatically.
 *
 *   profile_model MODEL.pt [SHAPE]      e.g. profile_model models/resnet18.pt 1x3x224x224
 */
#include <stdio.h>

#include "layerprof.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s MODEL.pt [SHAPE[:DTYPE]]\n", argv[0]);
        return 2;
    }
    lp_options opts;
    lp_options_init(&opts);
    opts.model_path = argv[1];
    opts.warmup = 1;
    opts.iterations = 5;
    opts.memory = 1;

    lp_input_spec input; /* without one, the inputs recorded in the model file are used */
    if (argc > 2) {
        if (lp_input_spec_parse(argv[2], &input) != LP_OK) {
            fprintf(stderr, "bad input: %s\n", lp_error_last());
            return 2;
        }
        opts.inputs = &input;
        opts.n_inputs = 1;
    }

    lp_session *session = NULL;
    int rc = lp_session_open(&session, &opts);
    if (rc == LP_OK) rc = lp_session_run(session);
    if (rc == LP_OK) rc = lp_session_render(session, LP_FORMAT_TREE, stdout);
    if (rc != LP_OK) {
        fprintf(stderr, "layerprof: %s (%s)\n", lp_error_last(), lp_status_name(rc));
        lp_session_close(session);
        return 1;
    }

    /* The same figures, as numbers: the slowest module by self time. */
    size_t n = 0, slowest = 0;
    lp_session_node_count(session, &n);
    double best = -1;
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        if (lp_session_node(session, i, &info) == LP_OK && info.self_ns > best) {
            best = info.self_ns;
            slowest = i;
        }
    }
    lp_node_info info;
    if (lp_session_node(session, slowest, &info) == LP_OK)
        printf("\nslowest module by self time: '%s' (%s), %.1f us per iteration, retained %.0f bytes\n",
               info.path, info.class_name, info.self_ns / 1000.0, info.cpu_mem.retained);
    lp_session_close(session);
    return 0;
}
