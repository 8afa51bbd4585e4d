/* options.c: defaults and validation of lp_options, shared by the API, the CLI and the config. */
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "config/options.h"
#include "layerprof.h"

void lp_options_init(lp_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->version = LP_OPTIONS_VERSION;
    opts->device = "cpu";
    opts->mode = LP_MODE_HOOKS;
    opts->warmup = 2;
    opts->iterations = 10;
    opts->threads = 0;
    opts->depth = -1;
    opts->units = LP_UNITS_AUTO;
    /* The memset leaves these at "off", spelled out because each is a documented default. */
    opts->schedule = (lp_schedule){0, 0, 0, 0}; /* no schedule: every step recorded */
    opts->on_cycle = NULL;
    opts->on_cycle_payload = NULL;
    opts->summary = 0;
}

/* "cpu", "cuda", "cuda:N". */
int lp_device_parse(const char *device, int *is_cuda, int *index) {
    *is_cuda = 0;
    *index = -1;
    if (!device || strcmp(device, "cpu") == 0) return LP_OK;
    if (strncmp(device, "cuda", 4) == 0) {
        const char *p = device + 4;
        *is_cuda = 1;
        if (*p == '\0') return LP_OK;
        if (*p == ':' && p[1] >= '0' && p[1] <= '9') {
            int v = 0;
            for (p++; *p >= '0' && *p <= '9' && v < 1000; p++)
                v = v * 10 + (*p - '0');
            if (*p == '\0') {
                *index = v;
                return LP_OK;
            }
        }
    }
    return lp_error_set(LP_ERR_INVALID, "unknown device '%s' (cpu, cuda or cuda:N)", device);
}

/* All zero is "no schedule"; anything else needs active steps, or the cycle would never record. */
static int validate_schedule(const lp_schedule *s) {
    const struct {
        const char *name;
        int value;
    } f[] = {
        {"wait", s->wait}, {"warmup", s->warmup}, {"active", s->active}, {"repeat", s->repeat}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value < 0)
            return lp_error_set(LP_ERR_INVALID, "schedule.%s must be 0 or more, not %d", f[i].name,
                                f[i].value);
    if (s->active == 0)
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            if (f[i].value)
                return lp_error_set(LP_ERR_INVALID,
                                    "schedule.%s is %d but schedule.active is 0: a schedule "
                                    "records at least 1 active step per cycle (all 0: no "
                                    "schedule)",
                                    f[i].name, f[i].value);
    return LP_OK;
}

int lp_options_validate(const lp_options *o) {
    if (!o) return lp_error_set(LP_ERR_INVALID, "options are NULL");
    if (o->version != LP_OPTIONS_VERSION)
        return lp_error_set(LP_ERR_INVALID,
                            "options version %u is not %u: initialise with lp_options_init",
                            o->version, LP_OPTIONS_VERSION);
    if (!o->model_path || !*o->model_path)
        return lp_error_set(LP_ERR_INVALID, "no model file given");
    int is_cuda, index;
    int rc = lp_device_parse(o->device, &is_cuda, &index);
    if (rc) return rc;
    if (o->mode != LP_MODE_HOOKS && o->mode != LP_MODE_GRAPH)
        return lp_error_set(LP_ERR_INVALID, "unknown mode %d (hooks or graph)", (int)o->mode);
    if (o->warmup < 0 || o->warmup > LP_MAX_ITERATIONS)
        return lp_error_set(LP_ERR_INVALID, "warmup must be between 0 and %d, not %d",
                            LP_MAX_ITERATIONS, o->warmup);
    if (o->iterations < 1 || o->iterations > LP_MAX_ITERATIONS)
        return lp_error_set(LP_ERR_INVALID, "iterations must be between 1 and %d, not %d",
                            LP_MAX_ITERATIONS, o->iterations);
    if (o->threads < 0 || o->threads > LP_MAX_INTRAOP_THREADS)
        return lp_error_set(LP_ERR_INVALID,
                            "threads must be between 0 (libtorch's default) and %d, not %d",
                            LP_MAX_INTRAOP_THREADS, o->threads);
    if (o->n_inputs > LP_MAX_INPUTS)
        return lp_error_set(LP_ERR_INVALID, "at most %d inputs, not %zu", LP_MAX_INPUTS,
                            o->n_inputs);
    if (o->n_inputs && !o->inputs)
        return lp_error_set(LP_ERR_INVALID, "n_inputs is %zu but inputs is NULL", o->n_inputs);
    for (size_t i = 0; i < o->n_inputs; i++)
        if (o->inputs[i].ndim < 0 || o->inputs[i].ndim > LP_MAX_DIMS)
            return lp_error_set(LP_ERR_INVALID, "input %zu: %d dimensions", i + 1,
                                o->inputs[i].ndim);
    if (o->n_paths && !o->paths)
        return lp_error_set(LP_ERR_INVALID, "n_paths is %zu but paths is NULL", o->n_paths);
    for (size_t i = 0; i < o->n_paths; i++)
        if (!o->paths[i]) return lp_error_set(LP_ERR_INVALID, "path %zu is NULL", i + 1);
    if (o->n_columns && !o->columns)
        return lp_error_set(LP_ERR_INVALID, "n_columns is %zu but columns is NULL", o->n_columns);
    for (size_t i = 0; i < o->n_columns; i++)
        if (!o->columns[i]) return lp_error_set(LP_ERR_INVALID, "column %zu is NULL", i + 1);
    if (o->depth < -1)
        return lp_error_set(LP_ERR_INVALID, "depth must be -1 (no limit) or more, not %d",
                            o->depth);
    if (o->top < 0) return lp_error_set(LP_ERR_INVALID, "top must be 0 or more, not %d", o->top);
    if ((int)o->units < LP_UNITS_AUTO || o->units > LP_UNITS_S)
        return lp_error_set(LP_ERR_INVALID, "unknown units %d", (int)o->units);
    if ((int)o->cuda_timing < LP_CUDA_TIMING_AUTO || o->cuda_timing > LP_CUDA_TIMING_OFF)
        return lp_error_set(LP_ERR_INVALID, "unknown CUDA timing %d (auto, cupti, events or off)",
                            (int)o->cuda_timing);
    if (o->n_outputs && !o->outputs)
        return lp_error_set(LP_ERR_INVALID, "n_outputs is %zu but outputs is NULL", o->n_outputs);
    return validate_schedule(&o->schedule);
}
