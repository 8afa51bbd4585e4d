// hooks.cpp: the TorchScript backend's RecordFunction callbacks (module frames, ops, FLOPs),
// forwarding plain events to the core; profile.cpp installs the memory reporter, which is common.
//
// Hot path rules: the callbacks below run for every op. They take a timestamp first (after the
// early-out for ops the core does not want), then do a hash lookup or a pointer compare at most,
// and call the sink. No allocation, no lock, no string.
#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/interpreter.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "torchscript.hpp"

namespace lps {
// RecordFunction callbacks and marker instructions are plain functions, so the active model is a
// global. One profiled model at a time per process: lps_profile_begin refuses a second one.
std::atomic<TorchScript *> g_active{nullptr};
// Ops the core does not want (the innermost call is not measured: an unselected module, or ops
// not kept) are not delivered: the core's last answer on this thread. A stale answer from an
// earlier session is harmless: a thread's first call event replaces it, and until then the core
// has no measured call on the thread.
__thread LP_TLS_MODEL bool t_ops_wanted = false;
} // namespace lps

namespace {

using lps::g_active;
using lps::t_ops_wanted;
using lps::TorchScript;

// How many ops are open that were not delivered (the core did not want them: t_ops_wanted), so
// that their ends (ops nest on a thread) are skipped too.
LP_THREAD_LOCAL int t_skip_depth = 0;
// The op whose op_start is being delivered (LPS_HOOK_SHAPES): what lps_op_input_shapes describes.
LP_THREAD_LOCAL const at::RecordFunction *t_current_op = nullptr;

inline bool is_fork_frame(const at::RecordFunction &fn) {
    return std::strcmp(fn.name(), "<forked function>") == 0;
}

// The module whose `self` the frame runs on (inputs()[0]: docs/libtorch.md), or -1.
int32_t frame_module(const TorchScript *m, const at::RecordFunction &fn) noexcept {
    try {
        auto inputs = fn.inputs();
        if (!inputs.empty() && inputs[0].isObject()) {
            return m->self_to_module.find(&inputs[0].toObjectRef());
        }
    } catch (...) { // not a module frame we can name: a pass-through frame for the core
    }
    return -1;
}

// The callbacks are noexcept: an exception would unwind through libtorch's dispatcher (and,
// from the sink, through C frames). What they call either cannot throw or is caught above.
std::unique_ptr<at::ObserverContext> on_frame_start(const at::RecordFunction &fn) noexcept {
    uint64_t t = lp_now_ns();
    TorchScript *m = g_active.load(std::memory_order_relaxed);
    if (!m) return nullptr;
    int32_t module = frame_module(m, fn);
    // A forked closure's frame runs on the module it forked (its `self`): that frame is the call,
    // and the forward inside it then passes through.
    bool fork = is_fork_frame(fn);
    auto enter = fork || lps::is_forward_name(fn.name()) || !m->sink.method_enter
                     ? m->sink.call_enter
                     : m->sink.method_enter;
    t_ops_wanted = enter(m->sink.ctx, module, t) != 0;
    return nullptr;
}

void on_frame_end(const at::RecordFunction &, at::ObserverContext *) noexcept {
    uint64_t t = lp_now_ns();
    TorchScript *m = g_active.load(std::memory_order_relaxed);
    if (m) t_ops_wanted = m->sink.call_exit(m->sink.ctx, t) != 0;
}

// A hash of the op's input sizes (LPS_HOOK_SHAPES): tensors mix their rank and sizes, lists of
// tensors each element's, anything else a tag. No allocation, no string: the text is made by
// lps_op_input_shapes only when the core sees a key for the first time. Never 0 (0 = no shapes).
inline uint64_t mix(uint64_t h, uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 32);
}

uint64_t mix_tensor(uint64_t h, const c10::IValue &v) {
    if (!v.isTensor()) return mix(h, 0xC3);
    const at::Tensor &t = v.toTensor();
    if (!t.defined()) return mix(h, 0xC3);
    auto sizes = t.sizes();
    h = mix(h, 0xA1 + sizes.size());
    for (int64_t d : sizes)
        h = mix(h, static_cast<uint64_t>(d));
    return h;
}

uint64_t shape_key(const at::RecordFunction &fn) noexcept {
    uint64_t h = 0xCBF29CE484222325ull;
    try {
        for (const c10::IValue &v : lps::op_inputs(fn)) {
            if (v.isTensorList()) {
                auto list = v.toListRef();
                h = mix(h, 0xB2 + list.size());
                for (const c10::IValue &e : list)
                    h = mix_tensor(h, e);
            } else {
                h = mix_tensor(h, v);
            }
        }
    } catch (...) {
        h = mix(h, 0xE4); // sizes() throws for nested tensors: one row for "unknown"
    }
    return h ? h : 1;
}

void append_sizes(std::string &out, const c10::IValue &v) {
    out += '[';
    if (v.isTensor() && v.toTensor().defined()) {
        bool first = true;
        for (int64_t d : v.toTensor().sizes()) {
            if (!first) out += ", ";
            first = false;
            out += std::to_string(d);
        }
    }
    out += ']';
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction &fn) noexcept {
    if (t_skip_depth) { // inside an op that was skipped: so is this one
        t_skip_depth++;
        return nullptr;
    }
    TorchScript *m = g_active.load(std::memory_order_relaxed);
    if (!m) return nullptr;
    if (!t_ops_wanted) {
        t_skip_depth = 1;
        return nullptr;
    }
    uint64_t key = (m->hooks & LPS_HOOK_SHAPES) ? shape_key(fn) : 0;
    uint64_t t = lp_now_ns();
    const char *name = fn.name();
    t_current_op = &fn;
    t_ops_wanted = m->sink.op_start(m->sink.ctx, name, key, t) != 0;
    t_current_op = nullptr;
    return nullptr;
}

void on_op_end(const at::RecordFunction &, at::ObserverContext *) noexcept {
    if (t_skip_depth) {
        t_skip_depth--;
        return;
    }
    uint64_t t = lp_now_ns();
    TorchScript *m = g_active.load(std::memory_order_relaxed);
    if (m) m->sink.op_end(m->sink.ctx, t);
}

std::unique_ptr<at::ObserverContext> on_flops_start(const at::RecordFunction &fn) noexcept {
    TorchScript *m = g_active.load(std::memory_order_relaxed);
    if (m) lps::flops_op_start(m, fn);
    return nullptr;
}

void on_flops_end(const at::RecordFunction &, at::ObserverContext *) noexcept {
    TorchScript *m = g_active.load(std::memory_order_relaxed);
    if (m) lps::flops_op_end(m);
}

} // namespace

namespace lps {

void begin_forward(TorchScript *) noexcept {
    t_skip_depth = 0; // a forward that threw may have left skipped ops open
    flops_reset();
}

void ts_profile_begin(TorchScript *m) {
    t_ops_wanted = false;
    t_skip_depth = 0;
    flops_reset();
    g_active.store(m); // profile.cpp's lps_profile_begin made it the one profiled model
    unsigned hooks = m->hooks;
    if (hooks & LPS_HOOK_MODULES)
        m->handles.push_back(
            at::addThreadLocalCallback(at::RecordFunctionCallback(on_frame_start, on_frame_end)
                                           .needsInputs(true)
                                           .scopes({at::RecordScope::TORCHSCRIPT_FUNCTION})));
    if (hooks & LPS_HOOK_OPS)
        m->handles.push_back(
            at::addThreadLocalCallback(at::RecordFunctionCallback(on_op_start, on_op_end)
                                           .needsInputs((hooks & LPS_HOOK_SHAPES) != 0)
                                           .scopes({at::RecordScope::FUNCTION})));
    if ((hooks & LPS_HOOK_FLOPS) && m->sink.flops)
        m->handles.push_back(
            at::addThreadLocalCallback(at::RecordFunctionCallback(on_flops_start, on_flops_end)
                                           .needsInputs(true)
                                           .scopes({at::RecordScope::FUNCTION})));
}

void ts_profile_end(TorchScript *m) noexcept {
    TorchScript *expected = m; // the callbacks are removed already (profile.cpp)
    g_active.compare_exchange_strong(expected, nullptr);
}
} // namespace lps

extern "C" {

int lps_op_input_shapes(char *buf, size_t size) noexcept {
    const at::RecordFunction *fn = t_current_op;
    if (!fn) return -1;
    try {
        std::string text;
        bool first = true;
        for (const c10::IValue &v : lps::op_inputs(*fn)) {
            if (!first) text += ", ";
            first = false;
            if (v.isTensorList()) {
                text += '[';
                bool first_elem = true;
                for (const c10::IValue &e : v.toListRef()) {
                    if (!first_elem) text += ", ";
                    first_elem = false;
                    append_sizes(text, e);
                }
                text += ']';
            } else {
                append_sizes(text, v);
            }
        }
        if (text.size() > INT32_MAX) return -1;
        if (size) std::snprintf(buf, size, "%s", text.c_str());
        return static_cast<int>(text.size());
    } catch (...) {
        return -1;
    }
}

} // extern "C"
