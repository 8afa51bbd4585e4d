/* cuda_events.c: driving the shim's CUDA-events timer. See cuda_events.h. */
#include "collect/cuda_events.h"

#include <stdio.h>

#include "base/error.h"
#include "layerprof.h"

/* The backend's failure, said as the timer's: its message is the thread's error already. */
static int events_error(int rc, const char *fallback) {
    char why[512];
    const char *e = lp_error_last();
    snprintf(why, sizeof why, "%s", e && *e ? e : fallback);
    return lp_error_set(rc, "CUDA events: %s", why);
}

int lp_cuda_events_begin(const lp_cuda_events_backend *b) {
    lp_error_clear();
    int rc = b->begin(b->ctx);
    return rc ? events_error(rc, "cannot start") : LP_OK;
}

int lp_cuda_events_collect(const lp_cuda_events_backend *b, lp_cuda_sink sink, void *ctx,
                           uint64_t *lost) {
    lp_error_clear();
    int rc = b->collect(b->ctx, sink, ctx, lost);
    return rc ? events_error(rc, "cannot read the timings") : LP_OK;
}
