/* event_sink.h: the events the shim delivers, as the table of functions it calls.
 *
 * The collector fills it (lp_collector_sink, collector.h) and the shim calls it on the threads
 * that run the model, so an event goes from libtorch's callback to the collector with nothing in
 * between. Plain C with no other include of the core: shim/lp_shim.h includes it, one of the two
 * headers of a layer above base/ that the shim may use (docs/architecture.md; the other,
 * pt2_shapes.h, delivers to it). */
#ifndef LP_EVENT_SINK_H
#define LP_EVENT_SINK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every function must not throw, and runs on the thread of the event it is given.
 * call_enter (a forward: one call of the module), method_enter, call_exit and op_start return 1
 * when op events are wanted on this thread now, 0 when the innermost call is not measured: the
 * shim then skips the ops that start before the next of these three calls on the thread (and
 * their op_end). An op belongs to the innermost open call. `shape_key` hashes the op's input
 * sizes when shapes are recorded (never 0 then), else 0. */
typedef struct lp_event_sink {
    void *ctx;
    int (*call_enter)(void *ctx, int32_t module, uint64_t t_ns);
    int (*call_exit)(void *ctx, uint64_t t_ns);
    int (*op_start)(void *ctx, const char *name, uint64_t shape_key, uint64_t t_ns);
    void (*op_end)(void *ctx, uint64_t t_ns);
    void (*memory)(void *ctx, const void *ptr, int64_t bytes, int device, uint64_t t_ns);
    /* A frame of a module's method other than forward (a ModuleList's __len__, a helper another
     * module calls on it): its time is the module's, but it is no call. Closed by call_exit.
     * NULL: such frames go to call_enter, and count as calls. */
    int (*method_enter)(void *ctx, int32_t module, uint64_t t_ns);
    /* FLOPs (shim/flops.cpp): those of an op that just started, in the innermost open call on
     * this thread; and an op with no formula that ended with nothing inside it counted either
     * (its name: libtorch's, valid while the operator is registered). */
    void (*flops)(void *ctx, uint64_t flops);
    void (*flops_unknown)(void *ctx, const char *op_name);
    /* The sizes of the first tensor a module call returned (itself, or the first of a tuple or
     * list), just before its call_exit. `dims` is valid during the call. */
    void (*out_shape)(void *ctx, const int64_t *dims, int rank);
    /* AOTInductor packages: `n` calls of `module` in the forward that is ending (the calls the
     * export recorded; the package's kernels carry no module boundaries), before the root's
     * call_exit, on the driving thread. */
    void (*add_calls)(void *ctx, int32_t module, uint64_t n);
    /* AOTInductor packages, the same way: the FLOPs of `module`'s own ops in that forward, and
     * the output shape of one of its calls, as the export worked them out for this forward's
     * input shapes (the kernels carry neither). `dims` is valid during the call. */
    void (*add_flops)(void *ctx, int32_t module, uint64_t flops);
    void (*add_out_shape)(void *ctx, int32_t module, const int64_t *dims, int rank);
    /* AOTInductor packages, on the driving thread: the module that memory the package's wrapper
     * allocates from now on is charged to (the next kernel's: the buffer's producer), and the
     * one its frees are (the kernel that ran last: usually the buffer's last consumer); 0 for the
     * root. Right after the root's call_enter, and at each kernel's start (its own module for both)
     * and end. Memory inside a kernel's module frames is their innermost module's anyway. */
    void (*pkg_memory_to)(void *ctx, int32_t alloc_module, int32_t free_module);
    /* The module of the innermost module call open on this thread, -1 when none: the caller a
     * site marker resolves its callee from (shim/marker_calls.cpp), read from the collector's
     * stack, the thread's only one. NULL: no caller is known (sites resolve to no module). */
    int32_t (*current_module)(void *ctx);
} lp_event_sink;

#ifdef __cplusplus
}
#endif

#endif
