/* clock.h: the one clock every event is stamped with (also used by the C++ shim).
 *
 * Steady nanoseconds, read twice per module call and per op: the largest single cost of an event
 * (docs/architecture.md, "The event clock"). Where the kernel itself keeps time with the CPU's
 * time-stamp counter (its clocksource is "tsc", which it picks only for an invariant TSC that is
 * in step on every CPU), the clock reads the counter and scales it (about 10 ns on this project's
 * VMs); anywhere else, or with LAYERPROF_CLOCK=monotonic, it is CLOCK_MONOTONIC from the vDSO
 * (about 17 ns there: the vDSO orders its counter read with a fence and retries a seqlock). The
 * counter is scaled by a rate measured against CLOCK_MONOTONIC over 2 ms on the first call, so both
 * read the same time then, and durations agree to about 1e-5. */
#ifndef LP_CLOCK_H
#define LP_CLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) && defined(__SIZEOF_INT128__)
#include <x86intrin.h>
#define LP_CLOCK_HAS_TSC 1
#else
#define LP_CLOCK_HAS_TSC 0
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum { LP_CLOCK_UNDECIDED = 0, LP_CLOCK_TSC = 1, LP_CLOCK_MONOTONIC = 2 };

/* Written once (clock.c, under pthread_once) before `source` is published with a release store;
 * read after an acquire load of it. */
typedef struct lp_clock_state {
    int source; /* LP_CLOCK_*: read and written with __atomic builtins (C and C++ alike) */
    uint64_t base_tsc, base_ns;
    uint64_t mult; /* ns per tick, times 2^32 */
} lp_clock_state;
extern lp_clock_state lp_clock;

/* The first call of the process: decides the source (and calibrates), then reads it. */
uint64_t lp_now_ns_slow(void);
/* The source in use after the first read ("tsc" or "monotonic"), for reports and benchmarks. */
const char *lp_clock_source(void);

/* CLOCK_MONOTONIC in ns: the fallback source, and what the TSC is calibrated against. */
static inline uint64_t lp_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t lp_now_ns(void) {
#if LP_CLOCK_HAS_TSC
    if (__builtin_expect(__atomic_load_n(&lp_clock.source, __ATOMIC_ACQUIRE) == LP_CLOCK_TSC, 1)) {
        /* Signed: another CPU's counter may read a few ticks before the calibration point. */
        int64_t ticks = (int64_t)(__rdtsc() - lp_clock.base_tsc);
        return lp_clock.base_ns + (uint64_t)(int64_t)(((__int128)ticks * lp_clock.mult) >> 32);
    }
#endif
    if (__atomic_load_n(&lp_clock.source, __ATOMIC_ACQUIRE) == LP_CLOCK_MONOTONIC)
        return lp_monotonic_ns();
    return lp_now_ns_slow();
}

#ifdef __cplusplus
}
#endif

#endif
