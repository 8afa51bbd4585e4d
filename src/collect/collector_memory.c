/* collector_memory.c: memory events (collector.h's lp_ev_memory), and an AOTInductor package's
 * charging of its wrapper's memory to modules (lp_ev_pkg_memory_to, collect/pkg_memory.h). The
 * hot path for allocations, beside collector.c's frames: see collector.c's top for how memory is
 * attributed to open calls. */
#include <stdatomic.h>
#include <stdint.h>

#include "base/ptrmap.h"
#include "collect/collector.h"
#include "collect/collector_internal.h"
#include "collect/pkg_memory.h"
#include "collect/timeline.h"

/* The innermost open module's node, -1 when none (as collector.c's). */
static inline int32_t top_module_node(const lp_thread_state *ts) {
    if (!ts->sp) return -1;
    int mf = ts->stack[ts->sp - 1].module_frame;
    return mf >= 0 ? ts->stack[mf].node : -1;
}

/* Lowers the live bytes of the calls that enclose (or are) the allocating call and are still open.
 */
static void release_block(lp_thread_state *ts, const lp_alloc_rec *rec) {
    int d = rec->device;
    for (int i = ts->sp - 1; i >= 0; i--) {
        lp_frame *f = &ts->stack[i];
        if (f->serial > rec->owner_serial)
            continue; /* opened after the allocation: not its owner */
        f->mem[d].live -= rec->bytes;
    }
    if (rec->owner_depth >= 0 && rec->owner_depth < ts->sp &&
        ts->stack[rec->owner_depth].serial == rec->owner_serial)
        ts->stack[rec->owner_depth].mem[d].self_live -= rec->bytes;
    if (rec->module_depth >= 0 && rec->module_depth != rec->owner_depth &&
        rec->module_depth < ts->sp && ts->stack[rec->module_depth].serial == rec->module_serial)
        ts->stack[rec->module_depth].mem[d].self_live -= rec->bytes;
}

/* Inside a package's forward (lp_ev_pkg_memory_to): the module an allocation (`alloc`) or a free
 * is charged to, and whether the wrapper made it (the root's frame on top: between kernels, or
 * in a kernel that opened no frame of its own); -1 outside a package's forward. */
static inline int32_t pkg_module(const lp_thread_state *ts, int alloc, int *by_wrapper) {
    const lp_pkg_mem *p = &ts->pkg;
    *by_wrapper = 0;
    if (!p->root_serial || p->root_depth >= ts->sp ||
        ts->stack[p->root_depth].serial != p->root_serial)
        return -1;
    if (ts->sp - 1 == p->root_depth) {
        *by_wrapper = 1;
        return alloc ? p->alloc_module : p->free_module;
    }
    return top_module_node(ts);
}

void lp_ev_memory(lp_collector *c, const void *ptr, int64_t bytes, int device, uint64_t t) {
    (void)t;
    lp_thread_state *ts = lp_collector_thread(c);
    if (!ts || !c->cfg.memory || device < 0 || device >= LP_DEV_COUNT || bytes == 0) return;
    ts->events++;
    if (__builtin_expect(atomic_load_explicit(&c->tracing, memory_order_relaxed), 0))
        lp_span_buf_add_mem(&ts->trace, c->cfg.trace_max_spans, t, bytes, device);
    int by_wrapper;
    int32_t pm = pkg_module(ts, bytes > 0, &by_wrapper);
    /* Outside any measured call, allocations are not looked at (unless a package's module takes
     * them), and nor are frees while no block we saw allocated is alive. */
    int measured = ts->sp && ts->stack[ts->sp - 1].measured;
    if (bytes > 0) {
        if (!measured && pm < 0) return;
        lp_alloc_rec rec = {.ptr = (uintptr_t)ptr,
                            .bytes = bytes,
                            .owner_depth = -1,
                            .module_depth = -1,
                            .device = device,
                            .pkg_module = pm};
        if (measured) {
            int top = ts->sp - 1;
            lp_frame *owner = &ts->stack[top];
            int mf = owner->module_frame;
            for (int i = 0; i <= top; i++) {
                lp_frame_mem *m = &ts->stack[i].mem[device];
                m->live += bytes;
                m->net += bytes;
                if (m->live > m->peak) m->peak = m->live;
            }
            rec.owner_serial = owner->serial;
            /* A buffer the wrapper allocated for a module's kernel is that module's, not the
             * package root's own. */
            if (!by_wrapper || pm == ts->pkg.root_node) {
                owner->mem[device].self_live += bytes;
                if (mf >= 0 && mf != top) ts->stack[mf].mem[device].self_live += bytes;
                rec.owner_depth = top;
                rec.module_depth = mf;
                rec.module_serial = mf >= 0 ? ts->stack[mf].serial : 0;
            }
        }
        if (pm >= 0) lp_pkg_mem_alloc(&ts->pkg, c->tree, pm, bytes, device);
        if (lp_ptrmap_put(&ts->live, &rec)) ts->dropped++;
    } else {
        if (measured)
            for (int i = 0; i < ts->sp; i++)
                ts->stack[i].mem[device].net += bytes;
        lp_alloc_rec rec;
        int seen = ts->live.count && lp_ptrmap_take(&ts->live, (uintptr_t)ptr, &rec);
        if (seen)
            release_block(ts, &rec);
        else if (measured)
            ts->foreign_frees++;
        if (pm >= 0)
            lp_pkg_mem_free(&ts->pkg, c->tree, pm, seen ? rec.pkg_module : -1, -bytes, device);
    }
}

void lp_ev_pkg_memory_to(lp_collector *c, int32_t alloc_module, int32_t free_module) {
    lp_thread_state *ts = lp_collector_thread(c);
    if (!ts || !c->cfg.memory || !ts->pkg.span || !ts->sp) return;
    const lp_frame *top = &ts->stack[ts->sp - 1];
    lp_pkg_mem *p = &ts->pkg;
    if (p->root_serial != top->serial) {
        /* The first of a forward: its root's frame is on top (a later one finds it there too,
         * between kernels). */
        if (top->kind != FRAME_MODULE || !top->is_call) return;
        lp_pkg_mem_clear(p);
        p->root_serial = top->serial;
        p->root_depth = ts->sp - 1;
        p->root_node = top->node;
    }
    p->alloc_module = alloc_module;
    p->free_module = free_module;
}
