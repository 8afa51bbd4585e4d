/* noise.h: whether a run's figures are steady enough to be read as they are ranked, from the
 * per-call statistics the tree already keeps (no per-iteration storage).
 *
 * A module's time per iteration is its calls' sum over the iterations; with independent calls its
 * standard error is the per-call standard deviation times sqrt(calls) over the iterations. Two
 * rows whose difference is under twice the standard error of that difference (about 95%) are not
 * ranked yet; since the error falls as 1/sqrt(iterations), the iterations that would separate
 * them are the run's times (2 * error / difference)^2. */
#ifndef LP_NOISE_H
#define LP_NOISE_H

#include <stddef.h>

#include "model/tree.h"

/* The slowest modules compared (leaf modules, whose per-call time is their self time). */
#define LP_NOISE_RANKED 3

/* Writes at most `max` lines (each under 256 bytes) about the run's noise into `lines`:
 *  - one profiled iteration: there is no spread to judge the figures by;
 *  - the forward's time varied by more than 10% (std / mean over the iterations);
 *  - the first two of the LP_NOISE_RANKED slowest leaf modules whose order is within the noise,
 *    with the iterations that would settle it.
 * Returns the number written; 0 when the figures are steady or the tree has no forward. */
size_t lp_noise_notes(const lp_tree *t, char (*lines)[256], size_t max);

#endif
