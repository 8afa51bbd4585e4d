/* pkg_memory.c: memory per module for AOTInductor packages (pkg_memory.h). Runs on the memory
 * events of a package forward: a walk up the module's ancestors, no allocation, no lock. */
#include "collect/pkg_memory.h"

#include <stdlib.h>
#include <string.h>

int lp_pkg_mem_init(lp_pkg_mem *p, size_t n_nodes) {
    memset(p, 0, sizeof *p);
    size_t n = n_nodes ? n_nodes : 1;
    p->span = calloc(n * LP_DEV_COUNT, sizeof *p->span);
    p->calls = calloc(n, sizeof *p->calls);
    p->touched = calloc(n, sizeof *p->touched);
    p->is_touched = calloc(n, sizeof *p->is_touched);
    p->n_nodes = n_nodes;
    p->root_node = -1;
    if (!p->span || !p->calls || !p->touched || !p->is_touched) {
        lp_pkg_mem_release(p);
        return -1;
    }
    return 0;
}

void lp_pkg_mem_release(lp_pkg_mem *p) {
    free(p->span);
    free(p->calls);
    free(p->touched);
    free(p->is_touched);
    memset(p, 0, sizeof *p);
}

void lp_pkg_mem_clear(lp_pkg_mem *p) {
    for (size_t i = 0; i < p->n_touched; i++) {
        size_t n = (size_t)p->touched[i];
        memset(&p->span[n * LP_DEV_COUNT], 0, LP_DEV_COUNT * sizeof *p->span);
        p->calls[n] = 0;
        p->is_touched[n] = 0;
    }
    p->n_touched = 0;
    p->root_serial = 0;
}

/* Whether `module` is a package module of this table (the root's figures are the frames'). */
static inline int in_table(const lp_pkg_mem *p, int32_t module) {
    return module >= 0 && (size_t)module < p->n_nodes && module != p->root_node;
}

static inline lp_pkg_span *span_of(lp_pkg_mem *p, int32_t module, int dev) {
    if (!p->is_touched[module]) {
        p->is_touched[module] = 1;
        p->touched[p->n_touched++] = module;
    }
    return &p->span[(size_t)module * LP_DEV_COUNT + (size_t)dev];
}

void lp_pkg_mem_alloc(lp_pkg_mem *p, const lp_tree *t, int32_t module, int64_t bytes, int dev) {
    if (!in_table(p, module)) return;
    span_of(p, module, dev)->self_live += bytes;
    for (int32_t a = module; in_table(p, a); a = t->nodes[a].parent) {
        lp_pkg_span *s = span_of(p, a, dev);
        s->live += bytes;
        s->net += bytes;
        if (s->live > s->peak) s->peak = s->live;
    }
}

/* Whether `a` is `n` or one of its ancestors. */
static int encloses(const lp_tree *t, int32_t a, int32_t n) {
    for (; n >= 0; n = t->nodes[n].parent)
        if (n == a) return 1;
    return 0;
}

void lp_pkg_mem_free(lp_pkg_mem *p, const lp_tree *t, int32_t module, int32_t owner, int64_t bytes,
                     int dev) {
    if (!in_table(p, module)) return;
    int known = in_table(p, owner);
    if (known && encloses(t, owner, module)) span_of(p, owner, dev)->self_live -= bytes;
    /* Once an ancestor of the freeing module encloses the owner, every one above it does too. */
    int above_owner = 0;
    for (int32_t a = module; in_table(p, a); a = t->nodes[a].parent) {
        lp_pkg_span *s = span_of(p, a, dev);
        s->net -= bytes;
        if (known && !above_owner) above_owner = encloses(t, a, owner);
        if (above_owner) s->live -= bytes;
    }
}

void lp_pkg_mem_calls(lp_pkg_mem *p, int32_t module, uint64_t n) {
    if (!in_table(p, module)) return;
    (void)span_of(p, module, 0);
    p->calls[module] += n;
}

/* `n` samples adding up to `v`: each v / n, the remainder spread one by one over the first. */
static void add_split(lp_stat *s, int64_t v, uint64_t n) {
    int64_t q = v / (int64_t)n, r = v - q * (int64_t)n;
    for (uint64_t i = 0; i < n; i++) {
        int64_t extra = r > 0 ? 1 : r < 0 ? -1 : 0;
        lp_stat_add(s, q + extra);
        r -= extra;
    }
}

void lp_pkg_mem_flush(lp_pkg_mem *p, const lp_tree *t, lp_figures *figs,
                      const uint8_t *measured_root, unsigned devices) {
    for (size_t i = 0; i < p->n_touched; i++) {
        int32_t n = p->touched[i];
        int measured = 0;
        for (int32_t a = n; a >= 0 && !measured; a = t->nodes[a].parent)
            measured = measured_root[a];
        if (!measured) continue;
        uint64_t calls = p->calls[n] ? p->calls[n] : 1;
        for (int d = 0; d < LP_DEV_COUNT; d++) {
            if (!(devices & (1u << d))) continue;
            const lp_pkg_span *s = &p->span[(size_t)n * LP_DEV_COUNT + (size_t)d];
            lp_mem_stats *m = &figs[n].mem[d];
            add_split(&m->retained, s->live, calls);
            add_split(&m->self_retained, s->self_live, calls);
            add_split(&m->net, s->net, calls);
            for (uint64_t k = 0; k < calls; k++)
                lp_stat_add(&m->peak, s->peak);
        }
    }
    lp_pkg_mem_clear(p);
}
