/* cupti.h: CUPTI activity records for lp_cuda_prof (cuda_prof.h): libcupti opened at run time,
 * its one subscriber slot, the correlation push/pop of the scope hooks, and the completed buffers
 * parsed into plain records (cuda_join.h) and joined to scopes.
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

/* Loads libcupti (preferring the copy libtorch loaded) and takes its subscriber slot, so no other
 * tool changes CUPTI's state under us. NULL with the reason in `why` when it cannot be had. */
lp_cupti *lp_cupti_claim(char *why, size_t size);

/* Registers the buffer callbacks and enables kernel, memcpy, memset and external-correlation
 * records. 0, or -1 with the reason in `why` (another layerprof session records). */
int lp_cupti_enable(lp_cupti *c, char *why, size_t size);

/* Hot path, on the launching thread: tags the launches until the matching pop with `scope`. */
void lp_cupti_push(lp_cupti *c, uint64_t scope);
void lp_cupti_pop(lp_cupti *c, uint64_t scope);

/* Flushes every record still in CUPTI's buffers (the device is idle: forwards synchronise),
 * disables the records until the next enable, joins them to their scopes into `sink`, adds to
 * *stats and drops them. LP_OK or LP_ERR_NOMEM (with a message). */
int lp_cupti_flush_join(lp_cupti *c, lp_cuda_sink sink, void *ctx, lp_cuda_join_stats *stats);

/* Pushes or pops that CUPTI refused, or pops that returned another scope. */
uint64_t lp_cupti_push_failures(const lp_cupti *c);

/* Disables the records and gives the subscriber slot back. NULL-safe. */
void lp_cupti_release(lp_cupti *c);

#endif
