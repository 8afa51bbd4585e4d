/* sink.c: the event sink the shim calls (event_sink.h), filled with the collector's events.
 *
 * Each entry only turns the sink's untyped context back into the collector (calling lp_ev_*
 * through a pointer of another type would be undefined): one jump on the hot path, no
 * allocation, lock or string. */
#include "collect/collector.h"

static int call_enter(void *c, int32_t module, uint64_t t) {
    return lp_ev_call_enter(c, module, t);
}

static int method_enter(void *c, int32_t module, uint64_t t) {
    return lp_ev_method_enter(c, module, t);
}

static int call_exit(void *c, uint64_t t) {
    return lp_ev_call_exit(c, t);
}

static int op_start(void *c, const char *name, uint64_t shape_key, uint64_t t) {
    return lp_ev_op_start(c, name, shape_key, t);
}

static void op_end(void *c, uint64_t t) {
    lp_ev_op_end(c, t);
}

static void memory(void *c, const void *ptr, int64_t bytes, int device, uint64_t t) {
    lp_ev_memory(c, ptr, bytes, device, t);
}

static void flops(void *c, uint64_t n) {
    lp_ev_flops(c, n);
}

static void flops_unknown(void *c, const char *name) {
    lp_ev_flops_unknown(c, name);
}

static void out_shape(void *c, const int64_t *dims, int rank) {
    lp_ev_out_shape(c, dims, rank);
}

static void add_calls(void *c, int32_t module, uint64_t n) {
    lp_ev_add_calls(c, module, n);
}

static void pkg_memory_to(void *c, int32_t alloc_module, int32_t free_module) {
    lp_ev_pkg_memory_to(c, alloc_module, free_module);
}

static void add_flops(void *c, int32_t module, uint64_t flops) {
    lp_ev_add_flops(c, module, flops);
}

static void add_out_shape(void *c, int32_t module, const int64_t *dims, int rank) {
    lp_ev_add_out_shape(c, module, dims, rank);
}

static int32_t current_module(void *c) {
    return lp_ev_current_module(c);
}

void lp_collector_sink(lp_collector *c, lp_event_sink *out) {
    *out = (lp_event_sink){.ctx = c,
                           .call_enter = call_enter,
                           .call_exit = call_exit,
                           .op_start = op_start,
                           .op_end = op_end,
                           .memory = memory,
                           .method_enter = method_enter,
                           .flops = flops,
                           .flops_unknown = flops_unknown,
                           .out_shape = out_shape,
                           .add_calls = add_calls,
                           .add_flops = add_flops,
                           .add_out_shape = add_out_shape,
                           .pkg_memory_to = pkg_memory_to,
                           .current_module = current_module};
}
