/* cuda_events.c: the self times of the CUDA-events timer's spans, and driving the timer. See
 * cuda_events.h. Plain C, fed plain numbers: unit-tested without a GPU. */
#include "collect/cuda_events.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/error.h"
#include "layerprof.h"

void lp_cuda_spans_add(void *ctx, uint64_t scope, int32_t parent, int64_t ns) {
    lp_cuda_spans *s = ctx;
    if (s->received++ != s->n) return; /* an earlier span was lost: indices no longer match */
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1024;
        lp_cuda_span *v = realloc(s->v, cap * sizeof *v);
        if (!v) return;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (lp_cuda_span){scope, parent, -1, ns, 0};
}

uint64_t lp_cuda_spans_deliver(lp_cuda_spans *s, lp_cuda_sink sink, void *ctx) {
    uint64_t lost = s->received - s->n;
    /* Parents come first, so each span's innermost readable ancestor is known when it is met. */
    for (size_t i = 0; i < s->n; i++) {
        lp_cuda_span *sp = &s->v[i];
        int32_t p = sp->parent;
        sp->timed = -1;
        if (p >= 0 && (size_t)p < i) sp->timed = s->v[p].ns >= 0 ? p : s->v[p].timed;
        if (sp->ns >= 0 && sp->timed >= 0) s->v[sp->timed].nested += (uint64_t)sp->ns;
    }
    for (size_t i = 0; i < s->n; i++) {
        const lp_cuda_span *sp = &s->v[i];
        if (sp->ns < 0) {
            lost++;
            continue;
        }
        uint64_t span = (uint64_t)sp->ns;
        if (sink(ctx, sp->scope, span > sp->nested ? span - sp->nested : 0) != 0) lost++;
    }
    s->n = s->received = 0;
    return lost;
}

void lp_cuda_spans_free(lp_cuda_spans *s) {
    free(s->v);
    s->v = NULL;
    s->n = s->cap = s->received = 0;
}

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

int lp_cuda_events_collect(const lp_cuda_events_backend *b, lp_cuda_spans *spans, lp_cuda_sink sink,
                           void *ctx, uint64_t *lost) {
    uint64_t unrecorded = 0;
    lp_error_clear();
    int rc = b->collect(b->ctx, lp_cuda_spans_add, spans, &unrecorded);
    /* What was delivered is delivered even when the backend then failed (growing its pool). */
    *lost = unrecorded + lp_cuda_spans_deliver(spans, sink, ctx);
    return rc ? events_error(rc, "cannot read the timings") : LP_OK;
}
