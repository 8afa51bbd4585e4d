/* bench_util.h: what the benchmark programs (bench_*.c) share besides the statistics
 * (bench_stats.h): the heap counters behind the linker's --wrap=malloc, the thread's CPU clock,
 * RSS, the command line. Internal to bench/: never part of the library. */
#ifndef LP_BENCH_UTIL_H
#define LP_BENCH_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "bench_stats.h"

/* ---- heap counters ---------------------------------------------------------------------------
 * Filled by __wrap_malloc/calloc/realloc/free (bench_wrap.c) for the objects linked into the
 * benchmark program itself: layerprof's core and shim, never libtorch's shared libraries. */
typedef struct bench_heap {
    uint64_t calls; /* malloc + calloc + realloc calls */
    uint64_t bytes; /* bytes requested by them, in total */
    int64_t live;   /* usable bytes still allocated (only when frees are tracked) */
} bench_heap;

void bench_heap_get(bench_heap *out);
/* 1 when this program tracks frees (bench_wrap.c built with BENCH_WRAP_FREE), so `live` holds. */
int bench_heap_tracks_frees(void);

/* ---- clocks ----------------------------------------------------------------------------------
 * CPU time of the calling thread, in ns: what the thread really ran, so a busy machine's
 * preemptions do not land in the figures (a system call, ~0.1-0.5 us: time blocks, not events). */
uint64_t bench_cpu_ns(void);

/* ---- process ------------------------------------------------------------------------------- */

/* Resident set size now, in bytes (VmRSS), and its peak (VmHWM); -1 when unreadable. */
int64_t bench_rss_now(void);
int64_t bench_rss_peak(void);

/* ---- command line and process setup --------------------------------------------------------- */

/* The value after `key` ("--rounds 8"), or `dflt`. */
const char *bench_arg(int argc, char **argv, const char *key, const char *dflt);
/* A model's display name: the file name without directory and extension. */
void bench_model_name(const char *path, char *buf, size_t size);
/* Fixed heap thresholds, so no timing depends on glibc trimming or mapping a heap
 * (bench/README.md); LP_BENCH_MALLOC=default keeps glibc's own. */
void bench_fix_heap(void);

#endif
