/* cuda_prof.h: CUDA kernel time per module (CUPTI activity records, or CUDA events as a fallback)
 * and NVTX ranges per module, wired to the collector's scope hooks.
 *
 * This file chooses the method and runs its lifecycle; each method has its own file: cupti.c
 * (activity records, joined by cuda_join.c), cuda_events.c (the shim's timer), nvtx.c. Plain C.
 * CUPTI and NVTX are used only when the build found the CUDA Toolkit (LP_HAVE_CUPTI,
 * LP_HAVE_NVTX); libcupti is opened at run time, preferring the copy libtorch already loaded (one
 * CUPTI per process), so the library loads and runs on machines without it.
 *
 * Life of a session:  open (choose the method, register NVTX names) -> hooks into the collector ->
 *   per run: begin -> iterations (iteration_done after each synchronised forward) -> end (flush,
 *   join into the collector) -> lp_collector_finish -> ... -> close. */
#ifndef LP_CUDA_PROF_H
#define LP_CUDA_PROF_H

#include <stddef.h>
#include <stdint.h>

#include "collect/collector.h"
#include "collect/cuda_events.h"
#include "collect/cuda_join.h"
#include "layerprof.h"
#include "model/tree.h"

typedef struct lp_cuda_prof_config {
    int cuda_device;                      /* the model runs on a CUDA device: time its kernels */
    int timing;                           /* lp_cuda_timing */
    int nvtx;                             /* NVTX ranges (any device) */
    int ops;                              /* scopes around op rows too (the collector's `ops`) */
    const lp_tree *tree;                  /* module paths, for NVTX range names */
    const lp_cuda_events_backend *events; /* NULL: no CUDA-events fallback in this build */
} lp_cuda_prof_config;

typedef struct lp_cuda_prof lp_cuda_prof;

/* Chooses how CUDA time is measured: CUPTI when asked or (auto) when it can be had, else CUDA
 * events (auto, or asked). Fails with a one-line message when a forced method cannot be used.
 * *out is NULL (and LP_OK) when there is nothing to do (CPU device, no NVTX). */
int lp_cuda_prof_open(lp_cuda_prof **out, const lp_cuda_prof_config *cfg);
void lp_cuda_prof_close(lp_cuda_prof *p);

/* 1 when CUDA time per node is measured (the collector's `cuda_time`). NULL-safe. */
int lp_cuda_prof_timing(const lp_cuda_prof *p);
/* "cupti", "events" or "off". NULL-safe. */
const char *lp_cuda_prof_method(const lp_cuda_prof *p);
/* The collector's scope hooks (enter NULL when none are needed). NULL-safe. */
lp_scope_hooks lp_cuda_prof_hooks(lp_cuda_prof *p);

/* Before the profiled forwards of a run: enables CUPTI's activity records (or the events pool).
 * In auto mode a CUPTI that refuses here falls back to events, with a note. */
int lp_cuda_prof_begin(lp_cuda_prof *p);
/* After each profiled forward (the device is synchronised): the events fallback reads its spans. */
int lp_cuda_prof_iteration_done(lp_cuda_prof *p, lp_collector *c);
/* After the run's forwards, before lp_collector_finish: flushes CUPTI's buffers, joins the records
 * into `c` (lp_collector_add_cuda) and disables the records until the next begin. */
int lp_cuda_prof_end(lp_cuda_prof *p, lp_collector *c);

/* The figures of the join so far (records, unattributed, dropped). NULL-safe (zeroes). */
void lp_cuda_prof_stats(const lp_cuda_prof *p, lp_cuda_join_stats *out);

/* The report's notes: which method, why a fallback, dropped records. Returns how many were written
 * (at most `max`), each NUL-terminated in `size` bytes. */
size_t lp_cuda_prof_notes(const lp_cuda_prof *p, char *notes, size_t size, size_t max);

#endif
