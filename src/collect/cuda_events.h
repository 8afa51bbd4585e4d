/* cuda_events.h: the CUDA-events timer, the fallback when CUPTI cannot be had (cuda_prof.h).
 *
 * The timer records an event on the current stream at each scope's entry and exit. That needs the
 * CUDA runtime and libtorch's current stream, which only the shim has: it comes in as function
 * pointers (lp_cuda_events_backend), which keeps this layer free of libtorch and testable. */
#ifndef LP_CUDA_EVENTS_H
#define LP_CUDA_EVENTS_H

#include <stdint.h>

#include "collect/cuda_join.h"

/* The shim's CUDA-events timer. Every function may be NULL only if `begin` is. A failing function
 * returns a status and leaves its message in the thread's error (lp_error_set). */
typedef struct lp_cuda_events_backend {
    void *ctx;
    int (*begin)(void *ctx);                 /* LP_OK, or a status with the message set */
    void (*push)(void *ctx, uint64_t scope); /* hot path: an event on the current stream */
    void (*pop)(void *ctx, uint64_t scope);
    /* After a synchronised forward: each timed call's self span (its span minus nested spans) goes
     * to `sink`; calls that could not be timed are added to *lost. */
    int (*collect)(void *ctx, lp_cuda_sink sink, void *sink_ctx, uint64_t *lost);
    void (*end)(void *ctx);
} lp_cuda_events_backend;

/* Starts the timer. LP_OK, or the backend's status with its message as "CUDA events: ...". */
int lp_cuda_events_begin(const lp_cuda_events_backend *b);

/* After a synchronised forward: the calls' CUDA time into `sink` (lp_collector_add_cuda), and
 * the calls that could not be timed added to *lost. Messages as lp_cuda_events_begin's. */
int lp_cuda_events_collect(const lp_cuda_events_backend *b, lp_cuda_sink sink, void *ctx,
                           uint64_t *lost);

#endif
