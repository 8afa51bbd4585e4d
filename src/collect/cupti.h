/* cupti.h: CUPTI activity records for lp_cuda_prof (cuda_prof.h): libcupti opened at run time,
 * its one subscriber slot, the scope push/pop of the scope hooks, each launch tagged with its
 * scope, and the completed buffers parsed into plain records (cuda_join.h) and joined to scopes.
 *
 * Tagging a launch with its scope, three ways (LAYERPROF_CUPTI_TAGGING chooses; docs/cuda.md has
 * what each cost on a GPU):
 *   callbacks (default): CUPTI calls us on entry to each launch, memcpy and memset function only;
 *     we note {the call's correlation id, the innermost scope on this thread}. The scope stack is
 *     our own thread-local array, so a push or pop is two stores.
 *   api-launches: external-correlation ids pushed into CUPTI, with API records enabled for the
 *     launch functions only (CUPTI writes external-correlation records only beside API records).
 *   api-all: the same with the RUNTIME and DRIVER kinds: an API record for every CUDA call.
 *
 * CUPTI is process-global: one set of buffer callbacks, one external-correlation stack per
 * thread. So one lp_cupti at a time records, and its records go through one lock (CUPTI completes
 * buffers on its own thread). Built for real only with LP_HAVE_CUPTI (the CUDA Toolkit's headers);
 * without it lp_cupti_claim says why and nothing else is ever called. */
#ifndef LP_CUPTI_H
#define LP_CUPTI_H

#include <stddef.h>
#include <stdint.h>

#include "collect/cuda_join.h"

typedef struct lp_cupti lp_cupti;

enum { LP_CUPTI_TAGGING_CALLBACKS = 0, LP_CUPTI_TAGGING_API_LAUNCHES, LP_CUPTI_TAGGING_API_ALL };

/* Loads libcupti (preferring the copy libtorch loaded) and takes its subscriber slot, so no other
 * tool changes CUPTI's state under us. NULL with the reason in `why` when it cannot be had. */
lp_cupti *lp_cupti_claim(char *why, size_t size);

/* Registers the buffer callbacks, enables kernel, memcpy and memset records and the tagging.
 * 0, or -1 with the reason in `why` (another layerprof session records). */
int lp_cupti_enable(lp_cupti *c, char *why, size_t size);

/* Hot path, on the launching thread: tags the launches until the matching pop with `scope`. */
void lp_cupti_push(lp_cupti *c, uint64_t scope);
void lp_cupti_pop(lp_cupti *c, uint64_t scope);

/* Flushes every record still in CUPTI's buffers (the device is idle: forwards synchronise),
 * disables the records until the next enable, joins them to their scopes into `sink`, adds to
 * *stats and drops them. LP_OK or LP_ERR_NOMEM (with a message). */
int lp_cupti_flush_join(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats);

/* After each synchronised forward: joins what was recorded so far once the tag buffer is half
 * full, so a run of any length never runs out of it. LP_OK or LP_ERR_NOMEM. */
int lp_cupti_iteration_done(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats);

/* Pushes or pops that CUPTI refused, or pops that returned another scope. */
uint64_t lp_cupti_push_failures(const lp_cupti *c);
/* Launches the tag buffer could not hold (their records are unattributed). */
uint64_t lp_cupti_tags_lost(const lp_cupti *c);
/* How launches are tagged (LP_CUPTI_TAGGING_*; -1 without CUPTI), and its words for the notes. */
int lp_cupti_tagging(const lp_cupti *c);
const char *lp_cupti_tagging_name(int tagging);

/* Disables the records and gives the subscriber slot back. NULL-safe. */
void lp_cupti_release(lp_cupti *c);

#endif
