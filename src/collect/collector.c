/* collector.c: the hot path. See collector.h for the contract, collector_internal.h for the
 * files around it.
 *
 * Every open call (module, op, or a helper frame that is not a call) is a frame on the thread's
 * stack. Closing a frame computes its inclusive time and adds it to its node; the time also goes
 * into the enclosing frame's `child_ns`, which is what turns totals into self times without ever
 * counting nested work twice. Memory is attributed the same way: each allocation raises the live
 * bytes of every open call, and remembers which call made it, so a later free lowers exactly the
 * calls that are both still open and enclosing that one. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime (clock.h) */
#include "collect/collector.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/error.h"
#include "base/ptrmap.h"
#include "base/thread_local.h"
#include "collect/collector_internal.h"
#include "collect/cuda_join.h"
#include "layerprof.h"

/* For the hot path's helpers (pop, enter_module, record_hist): inlined into each entry that calls
 * them, whatever gcc's size heuristics say. Each call saved is a prologue and an epilogue per
 * event (callgrind, modules only: about 27 instructions per module call pair for these three). */
#define LP_FORCE_INLINE static inline __attribute__((always_inline))

static LP_THREAD_LOCAL uint64_t tls_generation;
static LP_THREAD_LOCAL lp_thread_state *tls_state;

/* The calling thread's state on its first event of this collector: out of line, so that the hot
 * path's callers keep state_of's one compare and save no registers for this call. */
static __attribute__((noinline, cold)) lp_thread_state *claim_state(lp_collector *c) {
    /* A thread that alternates between collectors (two sessions) comes back to its own state
     * instead of claiming a new slot at every switch. */
    pthread_t self = pthread_self();
    uint32_t claimed = atomic_load(&c->n_threads);
    for (uint32_t i = 0; i < claimed && i < LP_MAX_THREADS; i++) {
        lp_thread_state *mine = atomic_load_explicit(&c->threads[i], memory_order_acquire);
        if (mine && pthread_equal(mine->owner, self)) {
            tls_generation = c->generation;
            tls_state = mine;
            return mine;
        }
    }
    uint32_t slot = atomic_fetch_add(&c->n_threads, 1);
    if (slot >= LP_MAX_THREADS) {
        atomic_fetch_sub(&c->n_threads, 1);
        atomic_fetch_add(&c->lost_threads, 1);
        return NULL;
    }
    lp_thread_state *ts = lp_thread_state_new(c);
    if (ts) {
        ts->slot = slot;
        ts->owner = self;
    }
    /* May be NULL on allocation failure: events are then dropped. */
    atomic_store_explicit(&c->threads[slot], ts, memory_order_release);
    tls_generation = c->generation;
    tls_state = ts;
    return ts;
}

/* The calling thread's state: one compare in steady state; a claim on a thread's first event. */
static inline lp_thread_state *state_of(lp_collector *c) {
    if (__builtin_expect(tls_generation == c->generation, 1)) return tls_state;
    return claim_state(c);
}

/* ---- frames ---------------------------------------------------------------------------------- */

/* The innermost open frame, NULL outside every call. */
static inline const lp_frame *top_frame(const lp_thread_state *ts) {
    return ts->sp ? &ts->stack[ts->sp - 1] : NULL;
}

/* Opens a frame above `top` (top_frame: its caller has usually read it already). */
static inline lp_frame *push_on(lp_thread_state *ts, const lp_frame *top, int kind, int32_t node,
                                uint64_t t, int measured) {
    int sp = ts->sp;
    if (sp == LP_MAX_STACK || ts->overflow) {
        ts->overflow++;
        ts->dropped++;
        return NULL;
    }
    lp_frame *f = &ts->stack[sp];
    f->t_start = t;
    f->child_ns = 0;
    f->serial = ++ts->next_serial;
    f->node = node;
    f->kind = (uint8_t)kind;
    f->measured = (uint8_t)measured;
    f->is_call = 1;
    f->module_frame = kind == FRAME_MODULE ? sp : top ? top->module_frame : -1;
    f->region_frame = kind == FRAME_REGION ? sp : top ? top->region_frame : -1;
    memset(f->mem, 0, sizeof f->mem);
    f->scope = 0;
    ts->sp = sp + 1;
    return f;
}

static inline lp_frame *push(lp_thread_state *ts, int kind, int32_t node, uint64_t t,
                             int measured) {
    return push_on(ts, top_frame(ts), kind, node, t, measured);
}

/* Scope hooks (CUDA timing, NVTX) around a frame just pushed: measured modules, and op rows when
 * asked. The frame remembers its id so pop() closes exactly what was opened. */
static inline void scope_enter(lp_collector *c, const lp_thread_state *ts, lp_frame *f,
                               const char *op_name) {
    if (!f || !c->cfg.scopes.enter || !f->measured) return;
    if (f->kind == FRAME_MODULE) {
        f->scope = lp_cuda_scope_module(f->node);
        c->cfg.scopes.enter(c->cfg.scopes.ctx, f->scope, f->node, NULL);
    } else if (f->kind == FRAME_OP && c->cfg.scope_ops && f->node >= 0) {
        f->scope = lp_cuda_scope_op(ts->slot, f->node);
        c->cfg.scopes.enter(c->cfg.scopes.ctx, f->scope, -1, op_name);
    }
}

/* Whether a call opened above `top` inherits being measured: a region measures only itself. */
static inline int measured_above(const lp_frame *top) {
    return top && top->measured && top->kind != FRAME_REGION;
}

static inline int top_measured(const lp_thread_state *ts) {
    return measured_above(top_frame(ts));
}

/* The module node of the innermost module frame at or below `top`, -1 when none. */
static inline int32_t module_node_at(const lp_thread_state *ts, const lp_frame *top) {
    return top && top->module_frame >= 0 ? ts->stack[top->module_frame].node : -1;
}

static inline int32_t top_module_node(const lp_thread_state *ts) {
    return module_node_at(ts, top_frame(ts));
}

/* Out of line: only with memory on, and the modules-only pop stays small without it. */
static __attribute__((noinline)) void record_memory(lp_collector *c, lp_figures *fig,
                                                    const lp_frame *f) {
    for (int d = 0; d < LP_DEV_COUNT; d++) {
        if (!(c->cfg.memory_devices & (1u << d))) continue;
        lp_stat_add(&fig->mem[d].retained, f->mem[d].live);
        lp_stat_add(&fig->mem[d].self_retained, f->mem[d].self_live);
        lp_stat_add(&fig->mem[d].peak, f->mem[d].peak);
        lp_stat_add(&fig->mem[d].net, f->mem[d].net);
    }
}

/* Timeline: the closing frame as a span when it is a measured module call or op row. */
static void trace_span(const lp_collector *c, lp_thread_state *ts, const lp_frame *f, uint64_t t) {
    if (!f->measured) return;
    if (f->kind == FRAME_MODULE)
        lp_span_buf_add_span(&ts->trace, c->cfg.trace_max_spans, LP_SPAN_MODULE, f->node, ts->sp,
                             f->t_start, t);
    else if (f->kind == FRAME_OP && f->node >= 0)
        lp_span_buf_add_span(&ts->trace, c->cfg.trace_max_spans, LP_SPAN_OP, ts->rows[f->node].op,
                             ts->sp, f->t_start, t);
    else if (f->kind == FRAME_REGION)
        lp_span_buf_add_span(&ts->trace, c->cfg.trace_max_spans, LP_SPAN_REGION, f->node, ts->sp,
                             f->t_start, t);
}

/* A closed call's figures: count, times (self = total minus what nested calls took), memory. A
 * method frame (a module's method other than forward, run from outside it) adds its time and
 * nothing else: a call is a forward, and per-call figures describe calls. */
static inline void record_call(lp_collector *c, lp_figures *fig, const lp_frame *f,
                               uint64_t total) {
    fig->total_ns += total;
    fig->self_ns += total > f->child_ns ? total - f->child_ns : 0;
    if (!f->is_call) return;
    fig->calls++;
    lp_welford_add(&fig->time, total);
    if (c->cfg.memory) record_memory(c, fig, f);
}

/* A measured module call into its histograms (cfg.histograms), as hist_mode says. */
LP_FORCE_INLINE void record_hist(const lp_collector *c, lp_thread_state *ts, const lp_frame *f,
                                 uint64_t total) {
    uint8_t mode = c->hist_mode[f->node];
    if (mode == HIST_NONE) return;
    lp_module_hist *h = &ts->hist[f->node];
    lp_hist_add(&h->total, total);
    lp_hist_add(&h->self, mode == HIST_FOLDED   ? total
                          : total > f->child_ns ? total - f->child_ns
                                                : 0);
}

/* Closes the top frame at time t and adds its figures to its node. */
LP_FORCE_INLINE void pop(lp_collector *c, lp_thread_state *ts, uint64_t t) {
    lp_frame *f = &ts->stack[--ts->sp];
    if (__builtin_expect(atomic_load_explicit(&c->tracing, memory_order_relaxed), 0))
        trace_span(c, ts, f, t);
    if (f->scope) c->cfg.scopes.exit(c->cfg.scopes.ctx, f->scope);
    uint64_t total = t > f->t_start ? t - f->t_start : 0;
    lp_frame *below = ts->sp ? f - 1 : NULL;
    if (f->kind == FRAME_MODULE) {
        if (f->measured) {
            record_call(c, &ts->mods[f->node], f, total);
            if (ts->hist && f->is_call) record_hist(c, ts, f, total);
        }
        /* The enclosing module's self time excludes this call; a forward's root call is a child
         * of the region it ran in. */
        if (below && below->module_frame >= 0) {
            lp_frame *encl = &ts->stack[below->module_frame];
            encl->child_ns += total;
            if (f->measured && c->under_container[f->node] &&
                encl->node != c->tree->nodes[f->node].parent)
                ts->outside_ns[f->node] += total;
        } else if (f->region_frame >= 0) {
            ts->stack[f->region_frame].child_ns += total;
        }
        /* A package forward's root is a module frame: op pops never look. */
        if (__builtin_expect(ts->pkg.root_serial == f->serial, 0))
            lp_pkg_mem_flush(&ts->pkg, c->tree, ts->mods, c->measured_root, c->cfg.memory_devices);
    } else if (f->kind == FRAME_REGION) {
        if (f->measured) record_call(c, &ts->regs[f->node], f, total);
        if (below && below->region_frame >= 0) ts->stack[below->region_frame].child_ns += total;
    } else if (f->kind == FRAME_OP) {
        if (f->measured && f->node >= 0) record_call(c, &ts->rows[f->node].fig, f, total);
        if (below && below->kind == FRAME_OP) below->child_ns += total;
    }
}

/* ---- events ---------------------------------------------------------------------------------- */

/* The events' answer (collector.h): op events are wanted when rows are kept and the innermost
 * open call is measured. Outside every call (sp 0) nothing is measured. */
static inline int ops_wanted(const lp_collector *c, const lp_thread_state *ts) {
    return c->cfg.ops && top_measured(ts);
}

/* A module frame: a forward call (is_call) or another method of the module. A frame on the
 * module already innermost is a helper method of that call: it passes through. */
LP_FORCE_INLINE int enter_module(lp_collector *c, int32_t module, int is_call, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return 0;
    ts->events++;
    const lp_frame *top = top_frame(ts);
    if (module < 0 || (size_t)module >= c->tree->n_nodes || module == module_node_at(ts, top)) {
        push_on(ts, top, FRAME_PASS, -1, t, measured_above(top));
        return ops_wanted(c, ts);
    }
    lp_frame *f =
        push_on(ts, top, FRAME_MODULE, module, t, c->measured_root[module] || measured_above(top));
    if (f) f->is_call = (uint8_t)is_call;
    scope_enter(c, ts, f, NULL);
    return ops_wanted(c, ts);
}

int lp_ev_call_enter(lp_collector *c, int32_t module, uint64_t t) {
    return enter_module(c, module, 1, t);
}

int lp_ev_method_enter(lp_collector *c, int32_t module, uint64_t t) {
    return enter_module(c, module, 0, t);
}

int32_t lp_ev_current_module(lp_collector *c) {
    lp_thread_state *ts = state_of(c);
    return ts ? top_module_node(ts) : -1;
}

int lp_ev_call_exit(lp_collector *c, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return 0;
    ts->events++;
    if (ts->overflow) {
        ts->overflow--;
        return ops_wanted(c, ts);
    }
    if (!ts->sp || ts->stack[ts->sp - 1].kind == FRAME_OP) {
        ts->unbalanced++;
        return ops_wanted(c, ts);
    }
    pop(c, ts, t);
    return ops_wanted(c, ts);
}

static uint64_t hash_row_key(int32_t parent_key, const char *name, uint64_t shape_key) {
    uint64_t h = (uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)parent_key * 0xC2B2AE3D27D4EB4Full;
    return h ^ (shape_key ^ (shape_key >> 29)) * 0xBF58476D1CE4E5B9ull;
}

static int rows_rehash(lp_thread_state *ts, size_t cap) {
    int32_t *idx = calloc(cap, sizeof *idx);
    if (!idx) return -1;
    for (size_t r = 0; r < ts->n_rows; r++) {
        const lp_row *row = &ts->rows[r];
        size_t i = hash_row_key(row->parent_key, row->name, row->shape_key) & (cap - 1);
        while (idx[i])
            i = (i + 1) & (cap - 1);
        idx[i] = (int32_t)r + 1;
    }
    free(ts->row_index);
    ts->row_index = idx;
    ts->index_cap = cap;
    return 0;
}

/* The row for (parent, name, shape_key) in this thread: a probe in steady state, creation (and
 * the shape text, when shapes are kept) on first sight. */
static int32_t find_row(lp_collector *c, lp_thread_state *ts, int32_t parent_key, const char *name,
                        uint64_t shape_key) {
    uint64_t h = hash_row_key(parent_key, name, shape_key);
    if (ts->index_cap) {
        size_t mask = ts->index_cap - 1;
        for (size_t i = h & mask; ts->row_index[i]; i = (i + 1) & mask) {
            lp_row *r = &ts->rows[ts->row_index[i] - 1];
            if (r->name == name && r->parent_key == parent_key && r->shape_key == shape_key)
                return ts->row_index[i] - 1;
        }
    }
    if ((ts->n_rows + 1) * 2 > ts->index_cap &&
        rows_rehash(ts, ts->index_cap ? ts->index_cap * 2 : 256))
        return -1;
    if (ts->n_rows == ts->cap_rows) {
        size_t cap = ts->cap_rows ? ts->cap_rows * 2 : 128;
        lp_row *rows = realloc(ts->rows, cap * sizeof *rows);
        if (!rows) return -1;
        ts->rows = rows;
        ts->cap_rows = cap;
    }
    int32_t op = lp_collector_intern_name(c, name);
    if (op < 0) return -1;
    int32_t r = (int32_t)ts->n_rows++;
    memset(&ts->rows[r], 0, sizeof ts->rows[r]);
    ts->rows[r].parent_key = parent_key;
    ts->rows[r].op = op;
    ts->rows[r].name = name;
    ts->rows[r].shape_key = shape_key;
    ts->rows[r].shapes = c->cfg.shapes ? lp_collector_intern_shapes(c) : -1;
    size_t mask = ts->index_cap - 1;
    size_t i = h & mask;
    while (ts->row_index[i])
        i = (i + 1) & mask;
    ts->row_index[i] = r + 1;
    return r;
}

int lp_ev_op_start(lp_collector *c, const char *name, uint64_t shape_key, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return 0;
    ts->events++;
    int measured = top_measured(ts);
    int32_t row = -1;
    /* A frame the full stack will drop gets no row (it would stay in the report with no calls). */
    if (measured && c->cfg.ops && ts->sp && ts->sp < LP_MAX_STACK && !ts->overflow) {
        const lp_frame *top = &ts->stack[ts->sp - 1];
        int32_t parent_key = -1;
        if (top->kind == FRAME_OP)
            parent_key = top->node >= 0 ? top->node * 2 + 1 : -1;
        else if (top->module_frame >= 0)
            parent_key = ts->stack[top->module_frame].node * 2;
        if (parent_key >= 0) row = find_row(c, ts, parent_key, name, shape_key);
        if (row < 0) ts->dropped++;
    }
    lp_frame *f = push(ts, FRAME_OP, row, t, measured);
    scope_enter(c, ts, f, name);
    return ops_wanted(c, ts);
}

void lp_ev_op_end(lp_collector *c, uint64_t t) {
    lp_thread_state *ts = state_of(c);
    if (!ts) return;
    ts->events++;
    if (ts->overflow) {
        ts->overflow--;
        return;
    }
    if (!ts->sp || ts->stack[ts->sp - 1].kind != FRAME_OP) {
        ts->unbalanced++;
        return;
    }
    pop(c, ts, t);
}

/* ---- memory --------------------------------------------------------------------------------- */

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

/* An allocation in the top frame (measured): the live, net and peak bytes of every open call
 * rise; when `own`, the self bytes of the top call and its module too (rec says which). */
static inline void frames_alloc(lp_thread_state *ts, lp_alloc_rec *rec, int device, int own) {
    int top = ts->sp - 1;
    lp_frame *owner = &ts->stack[top];
    int mf = owner->module_frame;
    for (int i = 0; i <= top; i++) {
        lp_frame_mem *m = &ts->stack[i].mem[device];
        m->live += rec->bytes;
        m->net += rec->bytes;
        if (m->live > m->peak) m->peak = m->live;
    }
    rec->owner_serial = owner->serial;
    if (!own) return;
    owner->mem[device].self_live += rec->bytes;
    if (mf >= 0 && mf != top) ts->stack[mf].mem[device].self_live += rec->bytes;
    rec->owner_depth = (int16_t)top;
    rec->module_depth = (int16_t)mf;
    rec->module_serial = mf >= 0 ? ts->stack[mf].serial : 0;
}

/* A block just allocated, owned by no frame yet (frames_alloc says which); `pkg_module` the
 * package module it is charged to in package forward `pkg_forward`, -1 outside packages. */
static inline lp_alloc_rec new_block(const void *ptr, int64_t bytes, int device, int32_t pkg_module,
                                     uint32_t pkg_forward) {
    return (lp_alloc_rec){.ptr = (uintptr_t)ptr,
                          .bytes = bytes,
                          .owner_depth = -1,
                          .module_depth = -1,
                          .device = device,
                          .pkg_module = pkg_module,
                          .pkg_forward = pkg_forward};
}

/* A memory event inside a package's forward (lp_ev_pkg_memory_to), out of TorchScript's path:
 * the frames' accounting, and the package's modules' (pkg_memory.h); 0 when that forward's root
 * is no longer open (the event is then TorchScript's path's). The module charged is the
 * wrapper's current one when a module frame is on top (between kernels, or in a kernel that
 * opened no op frame), else the innermost module's (an op's inside an extern kernel). */
static __attribute__((noinline)) int pkg_event(lp_collector *c, lp_thread_state *ts,
                                               const void *ptr, int64_t bytes, int device) {
    lp_pkg_mem *p = &ts->pkg;
    if (p->root_depth >= ts->sp || ts->stack[p->root_depth].serial != p->root_serial) {
        /* Defensive: pop and drop_frames clear root_serial with the root's frame. */
        lp_pkg_mem_clear(p);
        return 0;
    }
    /* The wrapper's, or a kernel's that opened no op frame: the root's frame or module frames on
     * top (the shim keeps those a kernel shares with the next one open between them). */
    int by_wrapper = ts->stack[ts->sp - 1].kind == FRAME_MODULE;
    int32_t pm = by_wrapper ? (bytes > 0 ? p->alloc_module : p->free_module) : top_module_node(ts);
    int measured = ts->stack[ts->sp - 1].measured;
    if (bytes > 0) {
        lp_alloc_rec rec = new_block(ptr, bytes, device, pm, p->forward);
        /* A buffer the wrapper allocated for a module's kernel is that module's, not the root's
         * own. Under an unmeasured root, only the package's modules look at it. */
        if (measured) frames_alloc(ts, &rec, device, !by_wrapper || pm == p->root_node);
        lp_pkg_mem_alloc(p, c->tree, pm, bytes, device);
        if (lp_ptrmap_put(&ts->live, &rec)) ts->dropped++;
        return 1;
    }
    if (measured)
        for (int i = 0; i < ts->sp; i++)
            ts->stack[i].mem[device].net += bytes;
    lp_alloc_rec rec;
    int seen = ts->live.count && lp_ptrmap_take(&ts->live, (uintptr_t)ptr, &rec);
    if (seen)
        release_block(ts, &rec);
    else if (measured)
        ts->foreign_frees++;
    int32_t owner = seen && rec.pkg_forward == p->forward ? rec.pkg_module : -1; /* this one's */
    lp_pkg_mem_free(p, c->tree, pm, owner, -bytes, device);
    return 1;
}

void lp_ev_memory(lp_collector *c, const void *ptr, int64_t bytes, int device, uint64_t t) {
    (void)t;
    lp_thread_state *ts = state_of(c);
    if (!ts || !c->cfg.memory || device < 0 || device >= LP_DEV_COUNT || bytes == 0) return;
    ts->events++;
    if (__builtin_expect(atomic_load_explicit(&c->tracing, memory_order_relaxed), 0))
        lp_span_buf_add_mem(&ts->trace, c->cfg.trace_max_spans, t, bytes, device);
    if (__builtin_expect(ts->pkg.root_serial != 0, 0) && pkg_event(c, ts, ptr, bytes, device))
        return;
    if (!ts->sp || !ts->stack[ts->sp - 1].measured) {
        /* Outside any measured call: a block freed here may still be one we saw allocated, but
         * allocations are not looked at, and nor are frees while no measured block is alive. */
        lp_alloc_rec rec;
        if (bytes < 0 && ts->live.count && lp_ptrmap_take(&ts->live, (uintptr_t)ptr, &rec))
            release_block(ts, &rec);
        return;
    }
    if (bytes > 0) {
        lp_alloc_rec rec = new_block(ptr, bytes, device, -1, 0);
        frames_alloc(ts, &rec, device, 1);
        if (lp_ptrmap_put(&ts->live, &rec)) ts->dropped++;
    } else {
        for (int i = 0; i < ts->sp; i++)
            ts->stack[i].mem[device].net += bytes;
        lp_alloc_rec rec;
        if (lp_ptrmap_take(&ts->live, (uintptr_t)ptr, &rec))
            release_block(ts, &rec);
        else
            ts->foreign_frees++;
    }
}

void lp_ev_pkg_memory_to(lp_collector *c, int32_t alloc_module, int32_t free_module) {
    lp_thread_state *ts = state_of(c);
    if (!ts || !c->cfg.memory || !ts->sp) return;
    /* Made on the thread's first package forward (as regions'): TorchScript never has them. Out
     * of memory, the thread gives up for good (counted in the stats), not at every kernel. */
    if (__builtin_expect(!ts->pkg.span, 0) &&
        (ts->pkg_failed || (ts->pkg_failed = lp_pkg_mem_init(&ts->pkg, c->tree->n_nodes) != 0)))
        return;
    const lp_frame *top = &ts->stack[ts->sp - 1];
    lp_pkg_mem *p = &ts->pkg;
    if (!p->root_serial || p->root_depth >= ts->sp ||
        ts->stack[p->root_depth].serial != p->root_serial) {
        /* The first of a forward: its root's frame is on top (later ones find it, or module
         * frames a kernel left open for the next, on top: the root's is then below). */
        if (top->kind != FRAME_MODULE || !top->is_call) return;
        lp_pkg_mem_clear(p);
        p->forward = p->forward + 1 ? p->forward + 1 : 1; /* 0 is no package forward's */
        p->root_serial = top->serial;
        p->root_depth = ts->sp - 1;
        p->root_node = top->node;
    }
    p->alloc_module = alloc_module;
    p->free_module = free_module;
}

/* ---- for the collector's other files (collector_internal.h) -------------------------------------
 * Thin wrappers, so the hot path's own calls to the static functions above stay as they were. */

lp_thread_state *lp_collector_thread(lp_collector *c) {
    return state_of(c);
}

int lp_collector_is_calling_thread(const lp_collector *c, const lp_thread_state *ts) {
    return ts == tls_state && tls_generation == c->generation;
}

int lp_thread_state_drop_frames(lp_collector *c, lp_thread_state *ts, int close_scopes) {
    /* Regions are the program's, opened between forwards: they sit at the bottom and stay. */
    int keep = 0;
    while (keep < ts->sp && ts->stack[keep].kind == FRAME_REGION)
        keep++;
    int dropped = ts->sp - keep;
    if (close_scopes)
        for (int k = ts->sp - 1; k >= keep; k--)
            if (ts->stack[k].scope) c->cfg.scopes.exit(c->cfg.scopes.ctx, ts->stack[k].scope);
    ts->sp = keep;
    ts->overflow = 0;
    if (c->cfg.memory) {
        lp_ptrmap_clear(&ts->live);
        lp_pkg_mem_clear(&ts->pkg); /* and its forward, if one was open */
    }
    return dropped;
}

int lp_collector_reset_calling_thread(lp_collector *c) {
    lp_thread_state *ts = state_of(c);
    return ts ? lp_thread_state_drop_frames(c, ts, 1) : 0;
}

lp_frame *lp_collector_push(lp_thread_state *ts, int kind, int32_t node, uint64_t t, int measured) {
    return push(ts, kind, node, t, measured);
}

void lp_collector_pop(lp_collector *c, lp_thread_state *ts, uint64_t t) {
    pop(c, ts, t);
}

void lp_ev_flops(lp_collector *c, uint64_t flops) {
    lp_thread_state *ts = state_of(c);
    if (!ts || !ts->sp || !c->cfg.flops) return;
    const lp_frame *top = &ts->stack[ts->sp - 1];
    if (!top->measured || top->module_frame < 0) return;
    ts->mods[ts->stack[top->module_frame].node].flops_self += flops;
}

void lp_ev_flops_unknown(lp_collector *c, const char *name) {
    lp_thread_state *ts = state_of(c);
    if (!ts || !name || !c->cfg.flops) return;
    for (uint32_t i = 0; i < ts->n_no_formula; i++)
        if (ts->no_formula[i] == name) return;
    if (ts->n_no_formula < LP_MAX_NO_FORMULA) ts->no_formula[ts->n_no_formula++] = name;
}

void lp_ev_out_shape(lp_collector *c, const int64_t *dims, int rank) {
    lp_thread_state *ts = state_of(c);
    if (!ts || !ts->sp || !c->cfg.out_shape) return;
    const lp_frame *top = &ts->stack[ts->sp - 1];
    if (top->kind != FRAME_MODULE || !top->measured || !top->is_call) return;
    lp_out_shape_add(&ts->mods[top->node].out, dims, rank);
}
