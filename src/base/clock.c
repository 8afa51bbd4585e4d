/* clock.c: which source lp_now_ns reads, decided once per process (clock.h says why). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "base/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

lp_clock_state lp_clock;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static char g_description[128] = "undecided (no event stamped yet)";

#if LP_CLOCK_HAS_TSC
/* The kernel's own clocksource: it keeps time with the TSC only when the counter is invariant
 * and in step across CPUs (its checks at boot and its watchdog), which is what lets an event
 * stamped on one CPU be closed on another. */
static int kernel_clocksource(char *out, size_t size) {
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f) return -1;
    int ok = fgets(out, (int)size, f) != NULL;
    fclose(f);
    if (!ok) return -1;
    out[strcspn(out, "\n")] = '\0';
    return 0;
}

/* A (counter, ns) pair: the counter read between two clock reads, from the try whose two reads
 * lay closest together (an interrupt between them would skew the pair). */
static void anchor(uint64_t *tsc, uint64_t *ns) {
    uint64_t narrowest = UINT64_MAX;
    for (int i = 0; i < 8; i++) {
        uint64_t a = lp_monotonic_ns();
        uint64_t t = __rdtsc();
        uint64_t b = lp_monotonic_ns();
        if (b - a < narrowest) {
            narrowest = b - a;
            *tsc = t;
            *ns = a + (b - a) / 2;
        }
    }
}

/* Measures the counter's rate against CLOCK_MONOTONIC over 2 ms: the pairs' ±10-20 ns over
 * 2 ms is a rate good to about 1e-5, and the cost is paid once per process. */
static int calibrate(void) {
    uint64_t t0, n0, t1, n1;
    anchor(&t0, &n0);
    do
        anchor(&t1, &n1);
    while (n1 - n0 < 2000000);
    uint64_t ticks = t1 - t0, ns = n1 - n0;
    /* Anything from 0.1 to 20 ticks per ns is a real counter; else it is not ticking as the
     * kernel says it does. */
    if (ticks < ns / 10 || ticks > ns * 20) return -1;
    lp_clock.mult = (uint64_t)(((unsigned __int128)ns << 32) / ticks);
    lp_clock.base_tsc = t1;
    lp_clock.base_ns = n1;
    snprintf(g_description, sizeof g_description, "tsc (%.2f GHz, the kernel's clocksource)",
             (double)ticks / (double)ns);
    return 0;
}
#endif

static void decide(void) {
    int source = LP_CLOCK_MONOTONIC;
    const char *asked = getenv("LAYERPROF_CLOCK");
    if (asked && !strcmp(asked, "monotonic")) {
        snprintf(g_description, sizeof g_description, "monotonic (LAYERPROF_CLOCK=monotonic)");
    } else if (asked && asked[0] && strcmp(asked, "auto") != 0) {
        /* A library has no better place for a misspelt setting than its clock's description and
         * one line on stderr: the time itself is still right. */
        snprintf(g_description, sizeof g_description,
                 "monotonic (LAYERPROF_CLOCK=%.40s is not 'auto' or 'monotonic')", asked);
        fprintf(stderr, "layerprof: %s\n", g_description);
    } else {
#if LP_CLOCK_HAS_TSC
        char kernel[64];
        if (kernel_clocksource(kernel, sizeof kernel) != 0)
            snprintf(g_description, sizeof g_description,
                     "monotonic (the kernel's clocksource is not readable)");
        else if (strcmp(kernel, "tsc") != 0)
            snprintf(g_description, sizeof g_description,
                     "monotonic (the kernel's clocksource is %.40s, not tsc)", kernel);
        else if (calibrate() == 0)
            source = LP_CLOCK_TSC;
        else
            snprintf(g_description, sizeof g_description,
                     "monotonic (the TSC's rate against CLOCK_MONOTONIC is implausible)");
#else
        snprintf(g_description, sizeof g_description, "monotonic (no TSC on this CPU)");
#endif
    }
    __atomic_store_n(&lp_clock.source, source, __ATOMIC_RELEASE);
}

uint64_t lp_now_ns_slow(void) {
    pthread_once(&g_once, decide);
#if LP_CLOCK_HAS_TSC
    if (__atomic_load_n(&lp_clock.source, __ATOMIC_ACQUIRE) == LP_CLOCK_TSC) return lp_now_ns();
#endif
    return lp_monotonic_ns();
}

const char *lp_clock_source(void) {
    pthread_once(&g_once, decide);
    return g_description;
}
