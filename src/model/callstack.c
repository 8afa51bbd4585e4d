/* callstack.c: resolving graph mode's call stacks against the module tree. See callstack.h.
 * Slow path: runs once per op site, so a linear scan of the children is fine. */
#include "model/callstack.h"

#include <string.h>

static int text_is(const char *text, size_t len, const char *literal) {
    return len == strlen(literal) && memcmp(text, literal, len) == 0;
}

/* Whether node `i` is called `name` by its parent: the last segment of its dotted path (its
 * display name may have been replaced, lp_tree_set_name). */
static int named(const lp_tree *t, int32_t i, const char *name, size_t len) {
    const char *path = t->nodes[i].path;
    const char *dot = strrchr(path, '.');
    const char *last = dot ? dot + 1 : path;
    return strlen(last) == len && memcmp(last, name, len) == 0;
}

static int32_t child_named(const lp_tree *t, int32_t cur, const char *name, size_t len) {
    for (int32_t c = t->nodes[cur].first_child; c >= 0; c = t->nodes[c].next_sibling)
        if (named(t, c, name, len)) return c;
    for (int32_t c = t->nodes[cur].first_child; c >= 0; c = t->nodes[c].next_sibling) {
        if (!t->nodes[c].container) continue;
        for (int32_t e = t->nodes[c].first_child; e >= 0; e = t->nodes[e].next_sibling)
            if (named(t, e, name, len)) return e;
    }
    return -1;
}

int32_t lp_callstack_resolve(const lp_tree *t, const lp_callstack_frame *frames, size_t n,
                             int32_t fork_base) {
    if (!t || !t->n_nodes) return -1;
    int32_t cur = 0;
    if (n && text_is(frames[0].method, frames[0].method_len, LP_CALLSTACK_FORKED) &&
        fork_base > 0 && (size_t)fork_base < t->n_nodes)
        cur = fork_base;
    for (size_t i = 0; i < n; i++) {
        const lp_callstack_frame *f = &frames[i];
        if (!f->instance_len || text_is(f->instance, f->instance_len, "TOP") ||
            text_is(f->instance, f->instance_len, "SELF"))
            continue;
        int32_t next = child_named(t, cur, f->instance, f->instance_len);
        if (next < 0) break;
        cur = next;
    }
    return cur;
}
