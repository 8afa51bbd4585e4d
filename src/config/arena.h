/* arena.h: allocations freed together. A configuration (lp_config) and an lp_options store
 * (lp_options_set) each own one, so every string and array their options point to lives exactly
 * as long as they do. */
#ifndef LP_ARENA_H
#define LP_ARENA_H

#include <stddef.h>

#include "layerprof.h"

typedef struct lp_arena lp_arena;

/* An empty arena, or NULL when out of memory. */
lp_arena *lp_arena_new(void);

/* Zeroed memory for n elements of `size` bytes (at least 1 byte), owned by the arena; NULL when
 * out of memory or when n * size overflows. */
void *lp_arena_alloc(lp_arena *arena, size_t n, size_t size);

/* A NUL-terminated copy of s[0..len), owned by the arena; NULL when out of memory. */
char *lp_arena_strndup(lp_arena *arena, const char *s, size_t len);

/* Frees every allocation and the arena. NULL is allowed. */
void lp_arena_free(lp_arena *arena);

/* The arena of opts->store, where lp_options_set and the input parsers copy what the options
 * point to: created on first need; NULL when out of memory. */
lp_arena *lp_options_arena(lp_options *opts);

/* Frees opts->store and everything in it, and sets it to NULL. */
void lp_options_arena_free(lp_options *opts);

#endif
