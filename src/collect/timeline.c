/* timeline.c: per-thread span buffers and their merge (see timeline.h). */
#include "collect/timeline.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "layerprof.h"

/* Doubling growth up to `max` elements. Returns 0 when there is room for one more. */
static int make_room(void **arr, size_t *cap, size_t n, size_t max, size_t elem) {
    if (n < *cap) return 0;
    if (n >= max) return -1;
    size_t want = *cap ? *cap * 2 : 4096;
    if (want > max) want = max;
    void *p = realloc(*arr, want * elem);
    if (!p) return -1;
    *arr = p;
    *cap = want;
    return 0;
}

void lp_span_buf_add_span(lp_span_buf *b, size_t max, int kind, int32_t id, int depth, uint64_t t0,
                          uint64_t t1) {
    if (!max) max = LP_TRACE_DEFAULT_MAX_SPANS;
    if (make_room((void **)&b->spans, &b->cap_spans, b->n_spans, max, sizeof *b->spans)) {
        b->lost_spans++;
        return;
    }
    lp_span *s = &b->spans[b->n_spans++];
    s->t0 = t0;
    s->t1 = t1 > t0 ? t1 : t0;
    s->id = id;
    s->tid = 0;
    s->kind = (uint8_t)kind;
    s->depth = (uint8_t)(depth < 0 ? 0 : depth > 255 ? 255 : depth);
}

void lp_span_buf_add_mem(lp_span_buf *b, size_t max, uint64_t t, int64_t delta, int device) {
    if (!max) max = LP_TRACE_DEFAULT_MAX_SPANS;
    if (make_room((void **)&b->mem, &b->cap_mem, b->n_mem, max, sizeof *b->mem)) {
        b->lost_mem++;
        return;
    }
    lp_mem_sample *m = &b->mem[b->n_mem++];
    m->t = t;
    m->delta = delta;
    m->tid = 0;
    m->device = (uint8_t)device;
    m->seq = 0;
}

void lp_span_buf_free(lp_span_buf *b) {
    if (!b) return;
    free(b->spans);
    free(b->mem);
    memset(b, 0, sizeof *b);
}

static int append(void **arr, size_t *n, const void *from, size_t count, size_t elem) {
    if (!count) return 0;
    void *p = realloc(*arr, (*n + count) * elem);
    if (!p) return -1;
    memcpy((char *)p + *n * elem, from, count * elem);
    *arr = p;
    *n += count;
    return 0;
}

int lp_timeline_take(lp_timeline *tl, lp_span_buf *b, uint16_t tid) {
    size_t s0 = tl->n_spans, m0 = tl->n_mem;
    if (append((void **)&tl->spans, &tl->n_spans, b->spans, b->n_spans, sizeof *b->spans) ||
        append((void **)&tl->mem, &tl->n_mem, b->mem, b->n_mem, sizeof *b->mem))
        return lp_error_set(LP_ERR_NOMEM, "out of memory merging the timeline");
    for (size_t i = s0; i < tl->n_spans; i++)
        tl->spans[i].tid = tid;
    for (size_t i = m0; i < tl->n_mem; i++) {
        tl->mem[i].tid = tid;
        tl->mem[i].seq = (uint32_t)(i - m0);
    }
    if (b->n_spans || b->n_mem || b->lost_spans || b->lost_mem)
        if ((uint32_t)tid + 1 > tl->n_threads) tl->n_threads = (uint32_t)tid + 1;
    tl->lost_spans += b->lost_spans;
    tl->lost_mem += b->lost_mem;
    /* Keep the buffers' capacity for the next run, drop their contents. */
    b->n_spans = b->n_mem = 0;
    b->lost_spans = b->lost_mem = 0;
    return LP_OK;
}

/* Parents first: earlier start, then the longer span, then a module before an op at the same
 * place, then the shallower one (a module and its only child can share both ends). */
static int by_thread_then_start(const void *a, const void *b) {
    const lp_span *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
    if (x->t1 != y->t1) return x->t1 > y->t1 ? -1 : 1;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return 0;
}

static int by_time(const void *a, const void *b) {
    const lp_mem_sample *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void lp_timeline_sort(lp_timeline *tl) {
    if (tl->n_spans > 1) qsort(tl->spans, tl->n_spans, sizeof *tl->spans, by_thread_then_start);
    if (tl->n_mem > 1) qsort(tl->mem, tl->n_mem, sizeof *tl->mem, by_time);
}

void lp_timeline_free(lp_timeline *tl) {
    if (!tl) return;
    free(tl->spans);
    free(tl->mem);
    memset(tl, 0, sizeof *tl);
}

void lp_timeline_name_regions(lp_timeline *tl, const char *const *paths, size_t n) {
    tl->region_paths = paths;
    tl->n_region_paths = paths ? n : 0;
}
