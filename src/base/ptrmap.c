/* ptrmap.c: see ptrmap.h. */
#include "base/ptrmap.h"

#include <stdlib.h>
#include <string.h>

static size_t hash_ptr(uintptr_t p, size_t mask) {
    /* Allocations are 16/64-byte aligned: mix the high bits down (Fibonacci hashing). */
    return (size_t)(((uint64_t)p * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

int lp_ptrmap_init(lp_ptrmap *m, size_t initial_cap) {
    size_t cap = 64;
    while (cap < initial_cap)
        cap *= 2;
    m->slots = calloc(cap, sizeof *m->slots);
    m->cap = m->slots ? cap : 0;
    m->count = 0;
    return m->slots ? 0 : -1;
}

void lp_ptrmap_free(lp_ptrmap *m) {
    free(m->slots);
    memset(m, 0, sizeof *m);
}

void lp_ptrmap_clear(lp_ptrmap *m) {
    if (m->slots) memset(m->slots, 0, m->cap * sizeof *m->slots);
    m->count = 0;
}

static int rehash(lp_ptrmap *m, size_t cap) {
    lp_alloc_rec *old = m->slots;
    size_t old_cap = m->cap;
    m->slots = calloc(cap, sizeof *m->slots);
    if (!m->slots) {
        m->slots = old;
        return -1;
    }
    m->cap = cap;
    m->count = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].ptr) lp_ptrmap_put(m, &old[i]);
    free(old);
    return 0;
}

int lp_ptrmap_put(lp_ptrmap *m, const lp_alloc_rec *rec) {
    if (!rec->ptr) return -1; /* 0 marks an empty slot: it cannot be a key */
    if ((m->count + 1) * 2 > m->cap && rehash(m, m->cap ? m->cap * 2 : 64)) return -1;
    size_t mask = m->cap - 1;
    for (size_t i = hash_ptr(rec->ptr, mask);; i = (i + 1) & mask) {
        if (m->slots[i].ptr == rec->ptr) {
            m->slots[i] = *rec;
            return 0;
        }
        if (!m->slots[i].ptr) {
            m->slots[i] = *rec;
            m->count++;
            return 0;
        }
    }
}

int lp_ptrmap_take(lp_ptrmap *m, uintptr_t ptr, lp_alloc_rec *out) {
    if (!m->count || !ptr) return 0; /* 0 would "find" an empty slot and corrupt the count */
    size_t mask = m->cap - 1;
    size_t i = hash_ptr(ptr, mask);
    while (m->slots[i].ptr != ptr) {
        if (!m->slots[i].ptr) return 0;
        i = (i + 1) & mask;
    }
    *out = m->slots[i];
    /* Backward-shift deletion: move later entries of the probe run into the hole. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].ptr; j = (j + 1) & mask) {
        size_t home = hash_ptr(m->slots[j].ptr, mask);
        /* Entry j may move to `hole` if its home is not cyclically in (hole, j]. */
        int in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_range) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].ptr = 0;
    m->count--;
    return 1;
}
