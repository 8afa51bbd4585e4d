/* clock.h: the one clock every event is stamped with (also used by the C++ shim). */
#ifndef LP_CLOCK_H
#define LP_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Steady nanoseconds. CLOCK_MONOTONIC is served from the vDSO: ~20 ns, no system call. */
static inline uint64_t lp_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
