/* strpool.h: interned strings that never move, shared by reference count.
 *
 * A tree takes every string it exposes (paths, names, op names, shape texts) from a pool, and the
 * trees of one session share one pool: a string a reader was handed stays valid when the tree that
 * held it is rebuilt, until the last tree holding the pool is freed. Interning makes equal texts
 * one pointer, so rebuilding a tree from the same names adds nothing. Not thread-safe: the trees
 * are built on the driving thread, never on the hot path. */
#ifndef LP_STRPOOL_H
#define LP_STRPOOL_H

#include <stddef.h>

typedef struct lp_strpool lp_strpool;

/* A new, empty pool holding one reference; NULL when out of memory. */
lp_strpool *lp_strpool_new(void);

/* One more reference to `p`; returns `p`. */
lp_strpool *lp_strpool_retain(lp_strpool *p);

/* Drops one reference; the last one frees the pool and every string in it. NULL is allowed. */
void lp_strpool_release(lp_strpool *p);

/* The pool's copy of `s`: the same pointer for every equal text, valid until the pool is freed.
 * NULL when out of memory. */
const char *lp_strpool_intern(lp_strpool *p, const char *s);

/* Distinct strings held. */
size_t lp_strpool_count(const lp_strpool *p);

#endif
