// marker_calls.cpp: what the marker instructions deliver at run time (markers.cpp puts them in
// the graphs): a module call's enter and exit to the profiled model's sink, or to the sink of
// the live forward the thread is recording, with the calls' output shapes when asked.
//
// Hot path rules, as for hooks.cpp's callbacks: the markers run in every forward of a marked
// model, so the check whether anything records comes before the clock read; then a pointer hash
// at most, and the sink. No allocation, no lock, no string.
#include <atomic>

#include "base/clock.h"
#include "torchscript.hpp"

namespace lps {

// The markers run in every forward of a marked model, profiled or not: the check comes before
// the clock read, so an unprofiled forward pays a load and a compare per marker.
__thread LP_TLS_MODEL TorchScript *t_live = nullptr;

// Where the markers the calling thread runs deliver: its live recorded forward's sink, else the
// profiled model's (markers hooks on), else nowhere. `m` receives the model.
static inline const lp_event_sink *marker_sink(TorchScript **m) noexcept {
    if ((*m = t_live)) return &(*m)->live_sink;
    *m = g_active.load(std::memory_order_relaxed);
    return *m && ((*m)->hooks & LPS_HOOK_MARKERS) ? &(*m)->sink : nullptr;
}

bool marker_recording(uint64_t tag) noexcept {
    TorchScript *m;
    return marker_sink(&m) && m->marker_tag == tag;
}

static inline void deliver_enter(const lp_event_sink *sink, int32_t module, bool call,
                                 uint64_t t) noexcept {
    auto enter = call || !sink->method_enter ? sink->call_enter : sink->method_enter;
    t_ops_wanted = enter(sink->ctx, module, t) != 0;
}

void marker_enter(const c10::IValue &self, bool call) noexcept {
    TorchScript *m;
    const lp_event_sink *sink = marker_sink(&m);
    if (!sink) return;
    uint64_t t = lp_now_ns();
    int32_t module = -1;
    if (self.isObject()) { // always, for a module; the lookup is a pointer hash
        module = m->self_to_module.find(&self.toObjectRef());
    }
    deliver_enter(sink, module, call, t);
}

void marker_enter_site(uint64_t tag, uint32_t site, bool call) noexcept {
    TorchScript *m;
    const lp_event_sink *sink = marker_sink(&m);
    if (!sink || m->marker_tag != tag) return;
    uint64_t t = lp_now_ns();
    // The calling module: the innermost one open in the sink's stack on this thread.
    int32_t caller = sink->current_module ? sink->current_module(sink->ctx) : -1;
    int32_t module = caller < 0 ? -1 : m->site_callee.find(site_key(caller, site));
    deliver_enter(sink, module, call, t);
}

static inline void deliver_exit(const lp_event_sink *sink) noexcept {
    uint64_t t = lp_now_ns();
    t_ops_wanted = sink->call_exit(sink->ctx, t) != 0;
}

void marker_exit() noexcept {
    TorchScript *m;
    const lp_event_sink *sink = marker_sink(&m);
    if (sink) deliver_exit(sink);
}

void marker_leave(uint64_t tag) noexcept {
    TorchScript *m;
    const lp_event_sink *sink = marker_sink(&m);
    if (sink && m->marker_tag == tag) deliver_exit(sink);
}

// The first tensor of a module's output: itself, or the first tensor of a tuple, list or dict (in
// its order), looked for depth first.
static const at::Tensor *first_tensor(const c10::IValue &v) {
    if (v.isTensor()) return v.toTensor().defined() ? &v.toTensor() : nullptr;
    if (v.isTuple()) {
        for (const c10::IValue &e : v.toTupleRef().elements())
            if (const at::Tensor *t = first_tensor(e)) return t;
    } else if (v.isList()) {
        for (const c10::IValue &e : v.toListRef())
            if (const at::Tensor *t = first_tensor(e)) return t;
    } else if (v.isGenericDict()) {
        for (const auto &kv : v.toGenericDict())
            if (const at::Tensor *t = first_tensor(kv.value())) return t;
    }
    return nullptr;
}

static void report_shape(TorchScript *m, const c10::IValue &out) noexcept {
    if (!m->sink.out_shape) return;
    try {
        if (const at::Tensor *t = first_tensor(out)) {
            auto sizes = t->sizes();
            m->sink.out_shape(m->sink.ctx, sizes.data(), static_cast<int>(sizes.size()));
        }
    } catch (...) { // sizes() throws for nested tensors: no shape for this call
    }
}

void marker_exit_out(const c10::IValue &out) noexcept {
    TorchScript *m;
    const lp_event_sink *sink = marker_sink(&m);
    if (!sink) return;
    if (sink == &m->sink) report_shape(m, out); // live forwards record no output shape
    marker_exit();
}

void markers_root(TorchScript *m, bool enter, uint64_t t, const c10::IValue *out) noexcept {
    if (!m->markers || g_active.load(std::memory_order_relaxed) != m ||
        !(m->hooks & LPS_HOOK_MARKERS))
        return;
    if (!enter && out && m->mark_outputs) report_shape(m, *out);
    t_ops_wanted =
        (enter ? m->sink.call_enter(m->sink.ctx, 0, t) : m->sink.call_exit(m->sink.ctx, t)) != 0;
}
} // namespace lps
