/* rank_report.c: one rank of a multi-process job writes its labelled JSON report; run N of them
 * and `layerprof merge` says which rank was slow where (examples/fleet_ranks.sh, docs/merge.md).
 *
 *   rank_report MODEL.pt RANK SHAPE OUT.json      e.g. rank_report models/resnet18.pt 3
 *                                                      1x3x64x64:float32 rank3.json
 *
 * The report's run carries "labels": {"rank": "3"}: merge names the rank by it, and a session
 * serving /metrics would put rank="3" on every series, the same words in both places. */
#include <stdio.h>
#include <string.h>

#include "layerprof.h"

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s MODEL.pt RANK SHAPE[:DTYPE] OUT.json\n", argv[0]);
        return 2;
    }
    lp_options opts;
    lp_options_init(&opts);
    opts.model_path = argv[1];
    opts.warmup = 3;
    opts.iterations = 10;
    opts.threads = 1; /* the ranks share the machine: one core each, as a job's workers would */

    char label[64];
    snprintf(label, sizeof label, "rank=%s", argv[2]);
    const char *labels[] = {label};
    opts.labels = labels; /* checked when the session opens: a bad rank text fails there */
    opts.n_labels = 1;

    lp_input_spec input;
    if (lp_input_spec_parse(argv[3], &input) != LP_OK) {
        fprintf(stderr, "rank %s: bad input: %s\n", argv[2], lp_error_last());
        return 2;
    }
    opts.inputs = &input;
    opts.n_inputs = 1;

    lp_output_spec out = {LP_FORMAT_JSON, argv[4]};
    opts.outputs = &out;
    opts.n_outputs = 1;

    lp_session *session = NULL;
    int rc = lp_session_open(&session, &opts);
    if (rc == LP_OK) rc = lp_session_run(session);
    if (rc == LP_OK) rc = lp_session_write_outputs(session);
    if (rc != LP_OK)
        fprintf(stderr, "rank %s: %s (%s)\n", argv[2], lp_error_last(), lp_status_name(rc));
    lp_session_close(session);
    return rc == LP_OK ? 0 : rc == LP_ERR_INVALID ? 2 : 1;
}
