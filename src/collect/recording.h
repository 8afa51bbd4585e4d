/* recording.h: what a session's forwards recorded, and the report made of it.
 *
 * A recording holds the module tree of the forwards run outside every region, one more tree per
 * region that forwards ran in (mounts), and the report composed of them once regions exist
 * (compose.h). The collector adds into the tree of the region the current forward runs in.
 * Finishing is one call: every thread's figures merged, the iteration counted when the program
 * never stepped, the timeline's coverage, the shares, the composition. All on the driving thread,
 * between forwards. */
#ifndef LP_RECORDING_H
#define LP_RECORDING_H

#include <stddef.h>
#include <stdint.h>

#include "collect/collector.h"
#include "collect/compose.h"
#include "model/tree.h"

#define LP_MAX_FORWARD_REGIONS 16 /* distinct regions a session's forwards may run in */
#define LP_MAX_MOUNTS (LP_MAX_FORWARD_REGIONS + 1) /* and forwards outside every region */

typedef struct lp_recording {
    lp_collector *collector; /* borrowed */
    /* mounts[0] is the module tree (borrowed: the collector's first), the others are owned. */
    lp_mount mounts[LP_MAX_MOUNTS];
    size_t n_mounts;
    lp_tree composed;       /* the report when regions exist */
    int implicit_iteration; /* recorded before any step: counted as one iteration until a step */
} lp_recording;

/* `tree` is the one `c` was created with: the forwards outside every region. A recording zeroed
 * (calloc) may be freed before it is initialised. */
void lp_recording_init(lp_recording *r, lp_collector *c, lp_tree *tree);
void lp_recording_free(lp_recording *r);

/* Points the collector at the tree of the region the next forward runs in (the calling thread's
 * innermost open region), made on its first forward; the figures of the tree it leaves are
 * merged first. LP_ERR_UNSUPPORTED past LP_MAX_FORWARD_REGIONS regions. */
int lp_recording_target(lp_recording *r);

/* Finishes what was recorded so far, so that the report can be read: merges every thread's
 * figures, records the timeline's coverage (`traced` of the iterations recorded on it), counts
 * a recording made before any step as one iteration, fills the shares and composes the report
 * when regions exist. May be called again after more forwards. */
int lp_recording_finish(lp_recording *r, uint64_t traced);

/* A recorded step ended: one iteration more, unless it is the one already counted because the
 * program had not stepped when the recording was finished. */
void lp_recording_count_step(lp_recording *r);

/* Drops every figure recorded so far (a schedule's fresh start); the trees keep their shapes.
 * Call it right after lp_recording_finish, so that no thread holds figures still unmerged. */
void lp_recording_clear(lp_recording *r);

/* The tree every reader sees: the module tree, or the composed report once regions exist.
 * Borrowed; as of the last lp_recording_finish. */
const lp_tree *lp_recording_report(const lp_recording *r);

#endif
