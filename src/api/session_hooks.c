/* session_hooks.c: the shim's hooks on the driving thread, which deliver the events straight to
 * the collector's sink, and CUDA timing around them. */
#include "api/session_internal.h"

int session_hooks_install(lp_session *s) {
    if (s->hooks_on) return LP_OK;
    lp_event_sink sink; /* the shim delivers straight to the collector */
    lp_collector_sink(s->collector, &sink);
    /* Markers need no frame callback: the module calls come from the graph itself. */
    unsigned hooks = s->opts.mode == LP_MODE_HOOKS ? LPS_HOOK_MODULES : LPS_HOOK_MARKERS;
    if (s->opts.events) hooks |= LPS_HOOK_OPS;
    if (s->opts.memory) hooks |= LPS_HOOK_MEMORY;
    if (s->opts.events && s->opts.shapes) hooks |= LPS_HOOK_SHAPES;
    if (s->flops) hooks |= LPS_HOOK_FLOPS;
    int rc = lps_profile_begin(s->model, &sink, hooks);
    if (rc) return rc;
    if ((rc = lp_cuda_prof_begin(s->cuda))) {
        lps_profile_end(s->model);
        return rc;
    }
    s->hooks_on = 1;
    return LP_OK;
}

/* Removes the hooks; CUDA records are joined here, before any merge. */
int session_hooks_remove(lp_session *s) {
    if (!s->hooks_on) return LP_OK;
    lps_profile_end(s->model);
    s->hooks_on = 0;
    return lp_cuda_prof_end(s->cuda, s->collector);
}
