/* tree_fixtures.h: building trees by hand in the unit tests: a node of a given kind, and calls
 * with given durations whose counts, totals and per-call statistics agree, as the collector leaves
 * them. export_fixtures.h builds its trees on these. */
#ifndef LP_TEST_TREE_FIXTURES_H
#define LP_TEST_TREE_FIXTURES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "layerprof.h"
#include "model/tree.h"

/* The Welford accumulator of these durations. */
static inline lp_welford tf_welford_of(const uint64_t *xs, size_t n) {
    lp_welford w;
    memset(&w, 0, sizeof w);
    for (size_t i = 0; i < n; i++)
        lp_welford_add(&w, xs[i]);
    return w;
}

/* Appends a node of `kind` (lp_node_kind) under `parent`; fails the test when it cannot. */
static inline int32_t tf_node(lp_tree *t, const char *path, const char *cls, int32_t parent,
                              int kind) {
    int idx = lp_tree_add(t, path, cls, parent);
    if (idx < 0) fail_msg("lp_tree_add(%s): %s", path, lp_error_last());
    t->nodes[idx].kind = kind;
    return idx;
}

/* Calls with these inclusive durations (ns): calls, total and the Welford accumulator agree, as
 * the collector leaves them. Self is the total unless set afterwards. */
static inline void tf_calls(lp_tree *t, int32_t m, const uint64_t *ns, size_t n) {
    lp_figures *f = &t->nodes[m].fig;
    f->calls = n;
    f->time = tf_welford_of(ns, n);
    f->total_ns = 0;
    for (size_t i = 0; i < n; i++)
        f->total_ns += ns[i];
    f->self_ns = f->total_ns;
}

/* A module of a tree built from a table: its path, class and parent's index (-1: the root). */
typedef struct tf_module {
    const char *path, *cls;
    int32_t parent;
} tf_module;

/* Initialises `t` with the `n` `modules` in order, each one's node its index in the table (the
 * tests' enums: each table is followed by a static assert that it has a row per enum value); -1,
 * the tree freed, when one does not land there. For setups, which may not fail_msg. */
static inline int tf_tree_of(lp_tree *t, const tf_module *modules, size_t n) {
    lp_tree_init(t);
    for (size_t i = 0; i < n; i++)
        if (lp_tree_add(t, modules[i].path, modules[i].cls, modules[i].parent) != (int)i) {
            lp_tree_free(t);
            return -1;
        }
    return 0;
}

#endif
