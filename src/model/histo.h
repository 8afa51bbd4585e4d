/* histo.h: per-call latency histograms of modules, with fixed bucket bounds (docs/sampling.md).
 *
 * A cell is written by one thread only (the collector's thread state that owns it) with relaxed
 * atomic loads and stores, and read by any thread with relaxed atomic loads: no lock, no
 * read-modify-write on the hot path, and no torn value. A reader summing the cells of every
 * thread sees each call counted once or not yet; a cell's sum may lag its buckets by the call
 * being added, and a snapshot's count is the sum of its buckets, so _count always equals the
 * +Inf bucket. Memory is fixed: cells per module per thread, whatever the uptime. */
#ifndef LP_HISTO_H
#define LP_HISTO_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds (Prometheus' `le`, inclusive) in ns: 1, 3, 10, 30 ... µs up to 10 s, two per
 * decade; one bucket more above them all (+Inf). */
#define LP_HIST_BOUNDS 15
#define LP_HIST_BUCKETS (LP_HIST_BOUNDS + 1)
extern const uint64_t lp_hist_bounds_ns[LP_HIST_BOUNDS];
/* The same bounds in seconds, as the exposition writes them ("1e-06", "0.003", "10"). */
extern const char *const lp_hist_bounds_text[LP_HIST_BOUNDS];

/* lp_hist_bucket's first guess, by bit length: the number of bounds below 2^(L-1), the smallest
 * value of L bits (histo.c; a unit test checks it against the bounds). */
extern const uint8_t lp_hist_by_bits[65];

/* The bucket of a call that took `ns`: the first whose bound is >= ns, LP_HIST_BOUNDS when it is
 * above every bound. On the hot path (two per module call): a value of L bits lies in
 * [2^(L-1), 2^L), a range that holds at most one bound since the bounds are 3x or more apart, so
 * the bit length's guess and one compare place it (a binary search took 4 compares in a call). */
static inline unsigned lp_hist_bucket(uint64_t ns) {
    unsigned k = lp_hist_by_bits[ns ? 64 - __builtin_clzll(ns) : 0];
    return k + (k < LP_HIST_BOUNDS && ns > lp_hist_bounds_ns[k]);
}

/* One histogram as its writer thread holds it: counts per bucket (not cumulative) and the sum. */
typedef struct lp_hist_cell {
    _Atomic uint64_t bucket[LP_HIST_BUCKETS];
    _Atomic uint64_t sum_ns;
} lp_hist_cell;

/* A module's two histograms on one thread: self time and total time per call. */
typedef struct lp_module_hist {
    lp_hist_cell self, total;
} lp_module_hist;

/* Adds one call of `ns` to `cell`. Its one writer thread only. Hot path: no lock, no RMW. */
static inline void lp_hist_add(lp_hist_cell *cell, uint64_t ns) {
    _Atomic uint64_t *b = &cell->bucket[lp_hist_bucket(ns)];
    atomic_store_explicit(b, atomic_load_explicit(b, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&cell->sum_ns,
                          atomic_load_explicit(&cell->sum_ns, memory_order_relaxed) + ns,
                          memory_order_relaxed);
}

/* A histogram read: plain numbers, summed over threads. */
typedef struct lp_hist {
    uint64_t bucket[LP_HIST_BUCKETS]; /* not cumulative */
    uint64_t sum_ns;
    uint64_t count; /* the sum of the buckets */
} lp_hist;

/* Adds `cell` (any thread, atomic loads) into `into`. */
void lp_hist_accumulate(lp_hist *into, const lp_hist_cell *cell);

/* Clears a cell. Only while no thread writes it. */
void lp_hist_cell_clear(lp_hist_cell *cell);

/* Where a renderer reads a module's histograms from (a live session's collector, or a test's
 * numbers): `read` fills self and total of module node `module` and returns 1, or 0 when it holds
 * none for it. The counters are of the forwards: all of them, and those profiled. */
typedef struct lp_hist_source {
    const void *ctx;
    int (*read)(const void *ctx, int32_t module, lp_hist *self, lp_hist *total);
    uint64_t forwards, sampled_forwards;
} lp_hist_source;

#endif
