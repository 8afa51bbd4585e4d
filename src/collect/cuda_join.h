/* cuda_join.h: CUDA kernel time per module, from plain records. No CUDA header, no GPU.
 *
 * While CUDA timing is on, the collector tags every measured module call (and op call, with
 * events) with a *scope id* that names its node: CUPTI carries the innermost id pushed on the
 * launching thread into an external-correlation record {externalKind, externalId, correlationId}
 * for every kernel, memcpy and memset launch, and the activity record of the launch carries the
 * same correlationId. Joining the two gives, per scope, the device time of the work launched
 * *directly* in it (its self CUDA time); a node's CUDA total is then its self plus its children's
 * totals, summed over the finished tree. The CUDA-events fallback feeds the same sink with per-call
 * self spans. Records may arrive in any order and in any number of buffers: nothing here depends on
 * it.
 */
#ifndef LP_CUDA_JOIN_H
#define LP_CUDA_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "model/tree.h"

/* CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2: Kineto (torch.profiler) takes CUSTOM0 and CUSTOM1. */
#define LP_CUDA_EXT_KIND 5u

/* --- scope ids ---------------------------------------------------------------------------------
 * Bits 63-62: 1 module, 2 op. A module id holds its tree node; an op id holds the collector's
 * thread slot (bits 61-40) and that thread's op row (bits 39-0), since op rows are per thread until
 * lp_collector_finish merges them. Never 0. */
enum { LP_SCOPE_NONE = 0, LP_SCOPE_MODULE = 1, LP_SCOPE_OP = 2 };

static inline uint64_t lp_cuda_scope_module(int32_t node) {
    return (1ull << 62) | (uint64_t)(uint32_t)node;
}
static inline uint64_t lp_cuda_scope_op(uint32_t thread, int32_t row) {
    return (2ull << 62) | ((uint64_t)(thread & 0x3FFFFFu) << 40) | (uint64_t)(uint32_t)row;
}
/* Returns LP_SCOPE_MODULE (*index: node), LP_SCOPE_OP (*thread, *index: row) or LP_SCOPE_NONE. */
int lp_cuda_scope_decode(uint64_t scope, uint32_t *thread, int32_t *index);

/* --- records -------------------------------------------------------------------------------- */
enum { LP_CUDA_KERNEL = 0, LP_CUDA_MEMCPY = 1, LP_CUDA_MEMSET = 2 };

/* A kernel, memcpy or memset as it ran on the device (CUPTI timestamps, ns). */
typedef struct lp_cuda_activity {
    uint64_t start_ns, end_ns;
    uint32_t correlation_id; /* of the runtime/driver call that launched it */
    uint32_t stream_id;
    uint8_t kind; /* LP_CUDA_KERNEL, ... */
} lp_cuda_activity;

/* CUPTI's CUpti_ActivityExternalCorrelation, as plain data. */
typedef struct lp_cuda_ext_corr {
    uint32_t external_kind; /* only LP_CUDA_EXT_KIND records are ours */
    uint32_t correlation_id;
    uint64_t external_id; /* a scope id */
} lp_cuda_ext_corr;

/* What one run collected. Grows as records arrive; cleared after each join. */
typedef struct lp_cuda_records {
    lp_cuda_activity *acts;
    size_t n_acts, cap_acts;
    lp_cuda_ext_corr *ext;
    size_t n_ext, cap_ext;
    uint64_t dropped; /* records lost before they reached us (CUPTI's count, full buffers) */
} lp_cuda_records;

/* Append one record; on allocation failure the record is counted in `dropped` and -1 returned. */
int lp_cuda_records_add_activity(lp_cuda_records *r, const lp_cuda_activity *a);
int lp_cuda_records_add_ext(lp_cuda_records *r, const lp_cuda_ext_corr *e);
void lp_cuda_records_clear(lp_cuda_records *r); /* keeps the capacity */
void lp_cuda_records_free(lp_cuda_records *r);

/* --- join ----------------------------------------------------------------------------------- */
/* Receives the device time launched directly in `scope`. Returns 0, or nonzero when the scope is
 * not one the receiver knows (the time is then counted as unattributed). */
typedef int (*lp_cuda_sink)(void *ctx, uint64_t scope, uint64_t ns);

typedef struct lp_cuda_join_stats {
    uint64_t records; /* activity records seen (kernels + memcpys + memsets) */
    uint64_t kernels, memcpys, memsets;
    uint64_t attributed; /* records whose launch carried one of our scope ids */
    uint64_t attributed_ns;
    uint64_t unattributed; /* launched outside any scope, or into an unknown scope */
    uint64_t unattributed_ns;
    uint64_t dropped; /* records lost before the join (from lp_cuda_records) */
} lp_cuda_join_stats;

/* Joins every activity record of `r` to its scope through the external correlations of kind
 * LP_CUDA_EXT_KIND (others are ignored) and hands each record's duration to `sink`. Adds into
 * *stats (which the caller zeroes once, so several runs accumulate). Does not modify `r`.
 * Returns LP_OK or LP_ERR_NOMEM. */
int lp_cuda_join(const lp_cuda_records *r, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats);

#endif
