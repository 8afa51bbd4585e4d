/* arena.c: a list of allocations freed together (arena.h). Options hold a few dozen strings at
 * most, so a growing array of pointers is all the bookkeeping needed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config/arena.h"
#include "layerprof.h"

struct lp_arena {
    void **blocks;
    size_t n, cap;
};

lp_arena *lp_arena_new(void) {
    return calloc(1, sizeof(lp_arena));
}

void *lp_arena_alloc(lp_arena *a, size_t n, size_t size) {
    if (!a || (size && n > SIZE_MAX / size)) return NULL;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        void **p = realloc(a->blocks, cap * sizeof *p);
        if (!p) return NULL;
        a->blocks = p;
        a->cap = cap;
    }
    void *mem = calloc(n ? n : 1, size ? size : 1);
    if (mem) a->blocks[a->n++] = mem;
    return mem;
}

char *lp_arena_strndup(lp_arena *a, const char *s, size_t len) {
    char *d = lp_arena_alloc(a, len + 1, 1);
    if (d) memcpy(d, s, len);
    return d;
}

void lp_arena_free(lp_arena *a) {
    if (!a) return;
    for (size_t i = 0; i < a->n; i++)
        free(a->blocks[i]);
    free(a->blocks);
    free(a);
}

/* lp_options_store (layerprof.h) is opaque: here it is an arena. */
struct lp_options_store {
    lp_arena *arena;
};

lp_arena *lp_options_arena(lp_options *o) {
    if (o->store) return o->store->arena;
    lp_options_store *s = calloc(1, sizeof *s);
    if (s && !(s->arena = lp_arena_new())) {
        free(s);
        s = NULL;
    }
    return (o->store = s) ? s->arena : NULL;
}

void lp_options_arena_free(lp_options *o) {
    if (!o->store) return;
    lp_arena_free(o->store->arena);
    free(o->store);
    o->store = NULL;
}
