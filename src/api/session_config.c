/* session_config.c: see session_config.h. */
#include "api/session_config.h"
#include "lp_shim.h" /* the LPS_HOOK_* values only: nothing of the shim is called */

unsigned session_config_hooks(const lp_options *o, int flops) {
    /* Markers need no frame callback: the module calls come from the graph itself. */
    unsigned hooks = o->mode == LP_MODE_HOOKS ? LPS_HOOK_MODULES : LPS_HOOK_MARKERS;
    if (o->events) hooks |= LPS_HOOK_OPS;
    if (o->memory) hooks |= LPS_HOOK_MEMORY;
    if (o->events && o->shapes) hooks |= LPS_HOOK_SHAPES;
    if (flops) hooks |= LPS_HOOK_FLOPS;
    return hooks;
}

/* A timeline is recorded when asked for, or when an output needs it (a trace). */
static int wants_timeline(const lp_options *o) {
    int want = o->trace;
    for (size_t i = 0; i < o->n_outputs && o->outputs; i++)
        want |= o->outputs[i].format == LP_FORMAT_TRACE;
    return want;
}

lp_collector_config session_config_collector(const lp_options *o, int cuda, const uint8_t *selected,
                                             int flops, int out_shape) {
    lp_collector_config cc = {.memory = o->memory,
                              .memory_devices = 1u << (cuda ? LP_DEV_CUDA : LP_DEV_CPU),
                              .ops = o->events,
                              .selected = selected};
    if (cuda) cc.memory_devices |= 1u << LP_DEV_CPU;
    cc.scope_ops = o->events;
    cc.shapes = o->events && o->shapes; /* op rows by input shapes (group_by_input_shape) */
    cc.trace = wants_timeline(o);       /* the trace output, the HTML memory-over-time view */
    cc.flops = flops;
    cc.out_shape = out_shape;
    cc.histograms = 1; /* fixed memory: modules x buckets per thread (docs/sampling.md) */
    cc.hist_depth = o->metrics_depth;
    return cc;
}
