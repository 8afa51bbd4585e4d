/* regions.c: profile a program's own loop with layerprof, as torchtimer does in Python.
 *
 * Each of the 100 iterations makes an 8-bit image, normalises it into the model's input
 * ("preprocess"), runs the model ("forward", whose module tree appears under it) and turns the
 * logits into probabilities and a top class ("postprocess"). A schedule records two cycles of 40
 * steps, each after 5 unprofiled and 5 warm-up steps; every completed cycle is written to
 * REPORT_DIR/regions_%d.json and announced by a callback. At the end the program prints the tree
 * and torchtimer's summary table (the last cycle's figures).
 *
 *   regions MODEL.pt [N,C,H,W] [REPORT_DIR]     e.g. regions models/resnet18.pt 1x3x224x224 /tmp
 *
 * The input is one float32 image batch, N x C x H x W (default 1x3x224x224).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layerprof.h"

#define ITERATIONS 100

/* A pretend camera frame: H x W x C bytes, different every iteration. */
static void capture_image(uint8_t *pixels, size_t n, uint32_t frame) {
    uint32_t x = 2463534242u ^ frame * 2654435761u;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        pixels[i] = (uint8_t)x;
    }
}

/* HWC bytes -> CHW floats, normalised with ImageNet's per-channel mean and deviation. */
static void normalise(const uint8_t *pixels, float *chw, int64_t c, int64_t h, int64_t w) {
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
    for (int64_t ch = 0; ch < c; ch++)
        for (int64_t i = 0; i < h * w; i++)
            chw[ch * h * w + i] = ((float)pixels[i * c + ch] / 255.0f - mean[ch % 3]) / std[ch % 3];
}

/* Softmax over the logits; returns the top class and its probability. */
static size_t top_class(const float *logits, size_t n, float *prob) {
    float max = logits[0];
    size_t best = 0;
    for (size_t i = 1; i < n; i++)
        if (logits[i] > max) max = logits[i], best = i;
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += exp((double)(logits[i] - max));
    *prob = (float)(1.0 / sum);
    return best;
}

/* Called when a schedule cycle completes: the session holds that cycle's figures. */
static void on_cycle(lp_session *session, int cycle, void *payload) {
    (void)payload;
    size_t node;
    lp_node_info info;
    if (lp_session_find(session, "main/forward", &node) == LP_OK &&
        lp_session_node(session, node, &info) == LP_OK)
        printf("cycle %d: %llu forwards, %.3f ms mean, %.3f ms std\n", cycle,
               (unsigned long long)info.raw_calls, info.time_mean_ns / 1e6, info.time_std_ns / 1e6);
}

static int fail(lp_session *session, int rc) {
    fprintf(stderr, "regions: %s (%s)\n", lp_error_last(), lp_status_name(rc));
    lp_session_close(session);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s MODEL.pt [NxCxHxW] [REPORT_DIR]\n", argv[0]);
        return 2;
    }
    lp_input_spec input;
    if (lp_input_spec_parse(argc > 2 ? argv[2] : "1x3x224x224", &input) != LP_OK ||
        input.ndim != 4 || input.dtype != LP_DTYPE_FLOAT32) {
        fprintf(stderr, "regions: the input must be NxCxHxW float32: %s\n", lp_error_last());
        return 2;
    }
    char report[LP_PATH_MAX];
    snprintf(report, sizeof report, "%s/regions_%%d.json", argc > 3 ? argv[3] : ".");
    lp_output_spec outputs[] = {{LP_FORMAT_JSON, report}};

    lp_options opts;
    lp_options_init(&opts);
    opts.model_path = argv[1];
    opts.inputs = &input;
    opts.n_inputs = 1;
    opts.memory = 1;
    opts.outputs = outputs;
    opts.n_outputs = 1;
    opts.schedule = (lp_schedule){.wait = 5, .warmup = 5, .active = 40, .repeat = 2};
    opts.on_cycle = on_cycle;

    lp_session *session = NULL;
    int rc = lp_session_open(&session, &opts);
    if (rc != LP_OK) return fail(session, rc);

    int64_t n = input.shape[0], c = input.shape[1], h = input.shape[2], w = input.shape[3];
    size_t image_bytes = (size_t)(h * w * c), input_floats = (size_t)(n * c * h * w);
    uint8_t *pixels = malloc(image_bytes);
    float *chw = malloc(input_floats * sizeof *chw);
    if (!pixels || !chw) {
        fprintf(stderr, "regions: out of memory\n");
        return 1;
    }
    size_t top = 0;
    float prob = 0;
    for (int i = 0; i < ITERATIONS && rc == LP_OK; i++) {
        if ((rc = lp_session_region_begin(session, "preprocess"))) break;
        capture_image(pixels, image_bytes, (uint32_t)i);
        for (int64_t b = 0; b < n; b++)
            normalise(pixels, chw + b * c * h * w, c, h, w);
        rc = lp_session_input_set(session, 0, chw, input_floats * sizeof *chw);
        if (rc || (rc = lp_session_region_end(session, "preprocess"))) break;

        void *out = NULL;
        size_t out_bytes = 0;
        if ((rc = lp_session_region_begin(session, "forward"))) break;
        rc = lp_session_forward(session, &out, &out_bytes);
        if (rc || (rc = lp_session_region_end(session, "forward"))) break;

        if ((rc = lp_session_region_begin(session, "postprocess"))) break;
        if (out_bytes >= sizeof(float)) top = top_class(out, out_bytes / sizeof(float), &prob);
        free(out);
        if ((rc = lp_session_region_end(session, "postprocess"))) break;
        rc = lp_session_step(session);
    }
    free(pixels);
    free(chw);
    if (rc != LP_OK) return fail(session, rc);
    printf("last top class: %zu (p=%.4f)\n\n", top, prob);
    if ((rc = lp_session_render(session, LP_FORMAT_TREE, stdout)) || fputc('\n', stdout) == EOF ||
        (rc = lp_session_render(session, LP_FORMAT_SUMMARY, stdout)))
        return fail(session, rc ? rc : LP_ERR_IO);
    lp_session_close(session);
    return 0;
}
