/* session_setup.c: a session's module tree, recorded inputs, hooks and collector configuration,
 * from a loaded model and the options (session_setup.h says who else builds with them). */
#include <string.h>

#include "api/session_setup.h"
#include "base/error.h"

int session_setup_tree(lp_tree *t, const lps_model *m) {
    int rc = lp_tree_init(t);
    size_t n = lps_model_module_count(m);
    for (size_t i = 0; i < n && rc >= 0; i++) {
        const char *path, *cls;
        int32_t parent;
        rc = lps_model_module(m, i, &path, &cls, &parent);
        if (rc == LP_OK) rc = lp_tree_add(t, path, cls, parent);
        if (rc < 0) break;
        lps_module_size ms = {0};
        int known = lps_model_module_size(m, i, &ms) == LP_OK;
        lp_module_size size = {1, ms.self_params, ms.params, ms.self_bytes, ms.bytes};
        lp_tree_set_module(t, rc, !lps_model_module_has_forward(m, i), known ? &size : NULL);
    }
    return rc < 0 ? rc : LP_OK; /* the shim and the tree report through the same message */
}

int session_setup_recorded_inputs(const lps_model *m, const char *model_path, lp_input_spec *inputs,
                                  size_t max, size_t *n, lp_options *owner) {
    const char *text = lps_model_default_inputs(m);
    if (!text)
        return lp_error_set(
            LP_ERR_INVALID,
            "'%s' records no input shape: give one with --input SHAPE[:DTYPE] (e.g. 1x3x224x224)",
            model_path);
    while (*text) {
        const char *nl = strchr(text, '\n');
        size_t len = nl ? (size_t)(nl - text) : strlen(text);
        if (len) {
            char line[512];
            if (len >= sizeof line || *n == max)
                return lp_error_set(LP_ERR_MODEL, "'%s': bad recorded inputs", model_path);
            memcpy(line, text, len);
            line[len] = '\0';
            size_t got;
            int rc = lp_input_parse(line, &inputs[*n], max - *n, &got, owner);
            if (rc) return rc;
            *n += got;
        }
        text += len + (nl ? 1 : 0);
    }
    return LP_OK;
}

unsigned session_setup_hooks(const lp_options *o, int flops) {
    /* Markers need no frame callback: the module calls come from the graph itself. */
    unsigned hooks = o->mode == LP_MODE_HOOKS ? LPS_HOOK_MODULES : LPS_HOOK_MARKERS;
    if (o->events) hooks |= LPS_HOOK_OPS;
    if (o->memory) hooks |= LPS_HOOK_MEMORY;
    if (o->events && o->shapes) hooks |= LPS_HOOK_SHAPES;
    if (flops) hooks |= LPS_HOOK_FLOPS;
    return hooks;
}

/* The collector's describer for a new (parent, op, shapes) row: the op being started. */
static int describe_shapes(void *payload, char *buf, size_t size) {
    (void)payload;
    return lps_op_input_shapes(buf, size);
}

/* A timeline is recorded when asked for, or when an output needs it (a trace). */
static int wants_timeline(const lp_options *o) {
    int want = o->trace;
    for (size_t i = 0; i < o->n_outputs && o->outputs; i++)
        want |= o->outputs[i].format == LP_FORMAT_TRACE;
    return want;
}

lp_collector_config session_setup_collector(const lp_options *o, int cuda, const uint8_t *selected,
                                            int flops, int out_shape) {
    lp_collector_config cc = {.memory = o->memory,
                              .memory_devices = 1u << (cuda ? LP_DEV_CUDA : LP_DEV_CPU),
                              .ops = o->events,
                              .selected = selected};
    if (cuda) cc.memory_devices |= 1u << LP_DEV_CPU;
    cc.scope_ops = o->events;
    cc.shapes = o->events && o->shapes; /* op rows by input shapes (group_by_input_shape) */
    cc.describe_shapes = cc.shapes ? describe_shapes : NULL;
    cc.trace = wants_timeline(o); /* the trace output, the HTML memory-over-time view */
    cc.flops = flops;
    cc.out_shape = out_shape;
    cc.histograms = 1; /* fixed memory: modules x buckets per thread (docs/sampling.md) */
    cc.hist_depth = o->metrics_depth;
    return cc;
}
