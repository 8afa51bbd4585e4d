/* timeline.h: the optional timeline behind the Chrome trace and the HTML memory-over-time view.
 *
 * Only `trace` runs record one. Each collector thread fills its own span buffer (no lock, no
 * atomic), capped so that a long run cannot eat the machine: when a buffer is full, later spans
 * are counted as lost instead. This is the only place where layerprof's memory grows with the
 * number of iterations. At the end of a run the buffers are merged into one lp_timeline, sorted
 * per thread by start time, parents before their children. */
#ifndef LP_TIMELINE_H
#define LP_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

enum { LP_SPAN_MODULE = 0, LP_SPAN_OP = 1, LP_SPAN_REGION = 2 };

/* Spans per thread (and memory samples per thread) kept at most: 2^20 * 24 bytes = 24 MiB. */
#define LP_TRACE_DEFAULT_MAX_SPANS ((size_t)1 << 20)

/* One closed call: a module call (id: module node), an op call (id: op name id) or a region
 * (id: region id, collector.h). */
typedef struct lp_span {
    uint64_t t0, t1; /* steady-clock ns; t1 >= t0 */
    int32_t id;
    uint16_t tid;  /* collector thread slot */
    uint8_t kind;  /* LP_SPAN_* */
    uint8_t depth; /* nesting on its thread when it closed (spans only), saturating */
} lp_span;

/* One allocation (delta > 0) or free (delta < 0), in any measured or unmeasured context. */
typedef struct lp_mem_sample {
    uint64_t t;
    int64_t delta;
    uint16_t tid;
    uint8_t device; /* LP_DEV_* */
    uint32_t seq;   /* order within its thread: samples at the same ns stay in order */
} lp_mem_sample;

/* A thread's buffers. Zero-initialised is empty. */
typedef struct lp_span_buf {
    lp_span *spans;
    size_t n_spans, cap_spans;
    lp_mem_sample *mem;
    size_t n_mem, cap_mem;
    uint64_t lost_spans, lost_mem; /* not recorded: the buffer was full (or out of memory) */
} lp_span_buf;

/* Appends; `max` caps the buffer (0: LP_TRACE_DEFAULT_MAX_SPANS). Never fails: a span that does
 * not fit is counted in lost_*. */
void lp_span_buf_add_span(lp_span_buf *b, size_t max, int kind, int32_t id, int depth, uint64_t t0,
                          uint64_t t1);
void lp_span_buf_add_mem(lp_span_buf *b, size_t max, uint64_t t, int64_t delta, int device);
void lp_span_buf_free(lp_span_buf *b);

/* Every thread's spans and samples together. */
typedef struct lp_timeline {
    lp_span *spans; /* sorted by (tid, t0, longer first, module before op) */
    size_t n_spans;
    lp_mem_sample *mem; /* sorted by t */
    size_t n_mem;
    uint64_t lost_spans, lost_mem;
    uint32_t n_threads;     /* highest tid + 1 */
    uint64_t iterations;    /* profiled iterations recorded on it */
    uint64_t iterations_of; /* profiled iterations run in all */
    int recorded;           /* 1 when the run asked for a timeline */
    /* Region spans' names by region id ("main/preprocess"); borrowed, set by whoever renders
     * (lp_timeline_name_regions). */
    const char *const *region_paths;
    size_t n_region_paths;
} lp_timeline;

/* Moves `b`'s contents to the end of `tl` (tagging them with `tid`) and empties `b`. */
int lp_timeline_take(lp_timeline *tl, lp_span_buf *b, uint16_t tid);
/* Sorts what was taken; call once after the last lp_timeline_take. */
void lp_timeline_sort(lp_timeline *tl);
void lp_timeline_free(lp_timeline *tl);
/* Names the region spans for rendering: `paths` (borrowed, by region id) until the next call;
 * NULL and 0 unname them. */
void lp_timeline_name_regions(lp_timeline *tl, const char *const *paths, size_t n);

#endif
