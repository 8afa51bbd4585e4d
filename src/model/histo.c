/* histo.c: see histo.h. */
#include "model/histo.h"

#include <string.h>

const uint64_t lp_hist_bounds_ns[LP_HIST_BOUNDS] = {
    1000ull,      3000ull,      10000ull,      30000ull,      100000ull,
    300000ull,    1000000ull,   3000000ull,    10000000ull,   30000000ull,
    100000000ull, 300000000ull, 1000000000ull, 3000000000ull, 10000000000ull};

const char *const lp_hist_bounds_text[LP_HIST_BOUNDS] = {
    "1e-06", "3e-06", "1e-05", "3e-05", "0.0001", "0.0003", "0.001", "0.003",
    "0.01",  "0.03",  "0.1",   "0.3",   "1",      "3",      "10"};

const uint8_t lp_hist_by_bits[65] = {
    0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  0,  1,  1,  2,  2,  3,  4,  4,  5,  5,  6,  7,
    7,  8,  8,  9,  10, 10, 11, 11, 12, 13, 13, 14, 14, 15, 15, 15, 15, 15, 15, 15, 15, 15,
    15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15};

void lp_hist_accumulate(lp_hist *into, const lp_hist_cell *cell) {
    for (unsigned i = 0; i < LP_HIST_BUCKETS; i++) {
        uint64_t n = atomic_load_explicit(&cell->bucket[i], memory_order_relaxed);
        into->bucket[i] += n;
        into->count += n;
    }
    into->sum_ns += atomic_load_explicit(&cell->sum_ns, memory_order_relaxed);
}

void lp_hist_cell_clear(lp_hist_cell *cell) {
    for (unsigned i = 0; i < LP_HIST_BUCKETS; i++)
        atomic_store_explicit(&cell->bucket[i], 0, memory_order_relaxed);
    atomic_store_explicit(&cell->sum_ns, 0, memory_order_relaxed);
}
