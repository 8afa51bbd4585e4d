/* cuda_events.h: the CUDA-events timer, the fallback when CUPTI cannot be had (cuda_prof.h), and
 * the self times of the calls it timed.
 *
 * The timer records an event on the current stream at each scope's entry and exit. That needs the
 * CUDA runtime and libtorch's current stream, which only the shim has: it comes in as function
 * pointers (lp_cuda_events_backend), which keeps this layer free of libtorch and testable. The
 * backend hands over raw spans; what they mean (a call's self time is its span minus the spans of
 * the calls nested in it) is worked out here. */
#ifndef LP_CUDA_EVENTS_H
#define LP_CUDA_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "collect/cuda_join.h"

/* Receives one call the timer recorded: its scope id, the index (in delivery order, from 0 per
 * collect) of the innermost enclosing call it recorded or -1, and the call's span in ns, or -1
 * when it could not be read (a failed event, a call a throwing forward left open). Calls come in
 * the order they started, so a parent always comes before its children. */
typedef void (*lp_cuda_span_sink)(void *ctx, uint64_t scope, int32_t parent, int64_t ns);

/* The shim's CUDA-events timer. Every function may be NULL only if `begin` is. A failing function
 * returns a status and leaves its message in the thread's error (lp_error_set). */
typedef struct lp_cuda_events_backend {
    void *ctx;
    int (*begin)(void *ctx);                 /* LP_OK, or a status with the message set */
    void (*push)(void *ctx, uint64_t scope); /* hot path: an event on the current stream */
    void (*pop)(void *ctx, uint64_t scope);
    /* After a synchronised forward: every call recorded since the last collect goes to `span`;
     * the calls it could not record (pool full, another thread) are added to *lost. */
    int (*collect)(void *ctx, lp_cuda_span_sink span, void *span_ctx, uint64_t *lost);
    void (*end)(void *ctx);
} lp_cuda_events_backend;

/* --- spans ----------------------------------------------------------------------------------- */
typedef struct lp_cuda_span {
    uint64_t scope;
    int32_t parent;  /* as delivered; -1 at the top */
    int32_t timed;   /* the innermost enclosing span that could be read, -1: none */
    int64_t ns;      /* -1: could not be read */
    uint64_t nested; /* sum of the readable spans whose `timed` is this one */
} lp_cuda_span;

/* One forward's spans, as the backend delivered them. The buffer grows between forwards and is
 * reused; zero-initialise it, free it with lp_cuda_spans_free. */
typedef struct lp_cuda_spans {
    lp_cuda_span *v;
    size_t n, cap;
    size_t received; /* delivered since the last lp_cuda_spans_deliver, kept or not */
} lp_cuda_spans;

/* An lp_cuda_span_sink with an lp_cuda_spans as the context. Keeps the span; when the buffer
 * cannot grow, this span and every later one of the forward are counted as lost by deliver
 * (their indices would no longer match). */
void lp_cuda_spans_add(void *spans, uint64_t scope, int32_t parent, int64_t ns);

/* Hands each readable span's self time to `sink`: its span minus the spans nested in it, where a
 * span that could not be read is looked through (its readable children count against the
 * innermost readable span around it, which then holds that call's own time too: nothing is
 * counted twice). Never negative. Returns the calls that got no time: spans that could not be read
 * or kept, and scopes `sink` refused. Empties `s` for the next forward. */
uint64_t lp_cuda_spans_deliver(lp_cuda_spans *s, lp_cuda_sink sink, void *ctx);
void lp_cuda_spans_free(lp_cuda_spans *s);

/* --- the timer ------------------------------------------------------------------------------- */
/* Starts the timer. LP_OK, or the backend's status with its message as "CUDA events: ...". */
int lp_cuda_events_begin(const lp_cuda_events_backend *b);

/* After a synchronised forward: collects the backend's spans into `spans`, and hands their self
 * times to `sink` (lp_collector_add_cuda). *lost: the calls that got no time, the backend's and
 * lp_cuda_spans_deliver's. Messages as lp_cuda_events_begin's. */
int lp_cuda_events_collect(const lp_cuda_events_backend *b, lp_cuda_spans *spans, lp_cuda_sink sink,
                           void *ctx, uint64_t *lost);

#endif
