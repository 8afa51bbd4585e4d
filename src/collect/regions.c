/* regions.c: the program's own code segments (lp_session_region_begin, collector.h): the region
 * table, written once per region under a lock and read lock-free, and the REGION frames that region
 * events push on the calling thread's stack, below the module frames of the forwards run inside. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "collect/collector.h"
#include "collect/collector_internal.h"
#include "layerprof.h"

static uint64_t region_hash(int32_t parent, const char *name) {
    uint64_t h =
        0xcbf29ce484222325ull; /* FNV-1a over the text: a name may sit in a reused buffer */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 0x100000001b3ull;
    return h ^ (uint64_t)(uint32_t)(parent + 1) * 0x9E3779B97F4A7C15ull;
}

/* The region with this (parent, name), or -1; lock-free: entries are complete before published. */
static int32_t region_lookup(const lp_collector *c, int32_t parent, const char *name, uint64_t h) {
    for (size_t i = h & (LP_REGION_INDEX_CAP - 1);; i = (i + 1) & (LP_REGION_INDEX_CAP - 1)) {
        int32_t e = atomic_load_explicit(&c->region_index[i], memory_order_acquire);
        if (!e) return -1;
        const lp_region_entry *r = &c->regions[e - 1];
        if (r->parent == parent && strcmp(r->name, name) == 0) return e - 1;
    }
}

int32_t lp_region_find(const lp_collector *c, int32_t parent, const char *name) {
    if (!c || !name) return -1;
    return region_lookup(c, parent, name, region_hash(parent, name));
}

int32_t lp_region_intern(lp_collector *c, int32_t parent, const char *name) {
    if (!c || !name || parent >= (int32_t)atomic_load(&c->n_regions) || parent < -1)
        return lp_error_set(LP_ERR_INVALID, "lp_region_intern: bad argument");
    uint64_t h = region_hash(parent, name);
    int32_t id = region_lookup(c, parent, name, h);
    if (id >= 0) return id;
    pthread_mutex_lock(&c->names_lock);
    id = region_lookup(c, parent, name, h); /* another thread may have added it meanwhile */
    uint32_t n = atomic_load(&c->n_regions);
    if (id < 0 && n == LP_MAX_REGIONS)
        id = lp_error_set(LP_ERR_UNSUPPORTED, "too many regions and contexts (at most %d)",
                          LP_MAX_REGIONS);
    if (id == -1) {
        size_t len = strlen(name) + 1;
        char *copy = malloc(len);
        if (!copy) {
            id = lp_error_set(LP_ERR_NOMEM, "out of memory adding region '%s'", name);
        } else {
            memcpy(copy, name, len);
            lp_region_entry *r = &c->regions[n];
            r->name = copy;
            r->parent = parent;
            r->context = parent < 0 ? (int32_t)n : c->regions[parent].context;
            atomic_store(&r->enabled, 1);
            size_t i = h & (LP_REGION_INDEX_CAP - 1);
            while (atomic_load(&c->region_index[i]))
                i = (i + 1) & (LP_REGION_INDEX_CAP - 1);
            atomic_store(&c->n_regions, n + 1);
            atomic_store_explicit(&c->region_index[i], (int32_t)n + 1, memory_order_release);
            id = (int32_t)n;
        }
    }
    pthread_mutex_unlock(&c->names_lock);
    return id;
}

size_t lp_region_count(const lp_collector *c) {
    return atomic_load(&((lp_collector *)c)->n_regions);
}

const lp_region_entry *lp_region_get(const lp_collector *c, int32_t id) {
    return id >= 0 && (size_t)id < lp_region_count(c) ? &c->regions[id] : NULL;
}

const lp_figures *lp_region_figures(const lp_collector *c, int32_t id) {
    static const lp_figures none;
    return c->region_figs && lp_region_get(c, id) ? &c->region_figs[id] : &none;
}

void lp_region_set_enabled(lp_collector *c, int32_t id, int on) {
    if (lp_region_get(c, id)) atomic_store(&c->regions[id].enabled, on != 0);
}

void lp_collector_clear_regions(lp_collector *c) {
    if (c->region_figs) memset(c->region_figs, 0, LP_MAX_REGIONS * sizeof *c->region_figs);
}

/* ---- region events ----------------------------------------------------------------------------
 */

int32_t lp_collector_open_region(lp_collector *c) {
    lp_thread_state *ts = lp_collector_thread(c);
    if (!ts || !ts->sp) return -1;
    int rf = ts->stack[ts->sp - 1].region_frame;
    return rf >= 0 ? ts->stack[rf].node : -1;
}

int lp_collector_region_recording(lp_collector *c) {
    lp_thread_state *ts = lp_collector_thread(c);
    if (!ts || !ts->sp) return 1;
    int rf = ts->stack[ts->sp - 1].region_frame;
    return rf < 0 || ts->stack[rf].measured;
}

int lp_ev_region_begin(lp_collector *c, int32_t region, int record) {
    lp_thread_state *ts = lp_collector_thread(c);
    if (!ts) return lp_error_set(LP_ERR_UNSUPPORTED, "more than %d threads", LP_MAX_THREADS);
    if (!lp_region_get(c, region)) return lp_error_set(LP_ERR_INVALID, "no region %d", region);
    if (ts->sp == LP_MAX_STACK || ts->overflow)
        return lp_error_set(LP_ERR_STATE, "regions nested more than %d deep", LP_MAX_STACK);
    if (record && !ts->regs && !(ts->regs = calloc(LP_MAX_REGIONS, sizeof *ts->regs)))
        return lp_error_set(LP_ERR_NOMEM, "out of memory opening a region");
    /* A placeholder reads no clock: that is most of what a disabled region would cost. */
    lp_collector_push(ts, FRAME_REGION, region, record ? c->clock() : 0, record && ts->regs);
    return LP_OK;
}

int lp_ev_region_end(lp_collector *c, const char *name) {
    lp_thread_state *ts = lp_collector_thread(c);
    const lp_frame *top = ts && ts->sp ? &ts->stack[ts->sp - 1] : NULL;
    if (!top || top->region_frame < 0)
        return lp_error_set(LP_ERR_STATE,
                            "lp_session_region_end('%s'): no region is open on this thread",
                            name ? name : "(innermost)");
    if (top->kind != FRAME_REGION)
        return lp_error_set(LP_ERR_STATE,
                            "lp_session_region_end: a forward is still running on this thread");
    const char *open = c->regions[top->node].name;
    if (name && strcmp(name, open) != 0)
        return lp_error_set(
            LP_ERR_STATE,
            "lp_session_region_end('%s'): the innermost open region is '%s': end it first", name,
            open);
    lp_collector_pop(c, ts, top->measured ? c->clock() : 0);
    return LP_OK;
}

int lp_region_paths(const lp_collector *c, char ***paths, size_t *n) {
    *paths = NULL;
    *n = lp_region_count(c);
    if (!*n) return LP_OK;
    /* One block: the pointers, then the strings. A parent always has a lower id. */
    size_t bytes = *n * sizeof(char *);
    for (size_t i = 0; i < *n; i++) {
        const lp_region_entry *e = lp_region_get(c, (int32_t)i);
        bytes += strlen(e->name) + 1 + (e->parent >= 0 ? 1 : 0);
        for (int32_t p = e->parent; p >= 0; p = lp_region_get(c, p)->parent)
            bytes += strlen(lp_region_get(c, p)->name) + 1;
    }
    char **out = malloc(bytes);
    if (!out) return lp_error_set(LP_ERR_NOMEM, "out of memory naming the regions");
    char *text = (char *)(out + *n), *end = (char *)out + bytes;
    for (size_t i = 0; i < *n; i++) {
        const lp_region_entry *e = lp_region_get(c, (int32_t)i);
        out[i] = text;
        int k = e->parent >= 0
                    ? snprintf(text, (size_t)(end - text), "%s/%s", out[e->parent], e->name)
                    : snprintf(text, (size_t)(end - text), "%s", e->name);
        text += k + 1;
    }
    *paths = out;
    return LP_OK;
}
