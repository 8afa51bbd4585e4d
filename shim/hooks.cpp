// hooks.cpp: RecordFunction callbacks and the memory reporter, forwarding plain events to the core.
//
// Hot path rules: the callbacks below run for every op. They take a timestamp first, then do a
// hash lookup or a pointer compare at most, and call the sink. No allocation, no lock, no string.
#include <ATen/record_function.h>
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/profiler/orchestration/observer.h>
#include <torch/version.h>

#include <atomic>

#include "../src/clock.h"
#include "shim_internal.hpp"

namespace {

// RecordFunction callbacks are plain function pointers, so the active model is a global. One
// profiled model at a time per process: lps_profile_begin refuses a second one.
std::atomic<lps_model *> g_active{nullptr};

// The thread that began profiling: graph mode's op sites are positions in its op sequence.
thread_local bool t_is_driver = false;
thread_local int t_op_depth = 0;
thread_local size_t t_site_pos = 0;

// Sites beyond this are resolved every time instead of cached (keeps the cache from allocating
// on the hot path: it is reserved up front).
constexpr size_t k_max_sites = 1u << 16;

std::unique_ptr<at::ObserverContext> on_frame_start(const at::RecordFunction &fn) {
    uint64_t t = lp_now_ns();
    lps_model *m = g_active.load(std::memory_order_relaxed);
    if (!m) return nullptr;
    int32_t module = -1;
    auto inputs = fn.inputs();
    if (!inputs.empty() && inputs[0].isObject()) {
        auto it = m->self_to_module.find(&inputs[0].toObjectRef());
        if (it != m->self_to_module.end()) module = it->second;
    }
    m->sink.call_enter(m->sink.ctx, module, t);
    return nullptr;
}

void on_frame_end(const at::RecordFunction &, at::ObserverContext *) {
    uint64_t t = lp_now_ns();
    lps_model *m = g_active.load(std::memory_order_relaxed);
    if (m) m->sink.call_exit(m->sink.ctx, t);
}

// Graph mode, slow path: the module of the op running now, from the interpreter's inlined call
// stack. Entries look like "TOP(Net)::forward", "block(Block)::forward", "SELF(Block)::helper",
// "::relu" (a free function): the instance names between TOP and the op make the dotted path.
int32_t resolve_module(lps_model *m) {
    std::string path;
    for (const auto &entry : torch::jit::currentModuleHierarchy()) {
        size_t paren = entry.find('(');
        if (paren == std::string::npos || paren == 0) continue;
        std::string name = entry.substr(0, paren);
        if (name == "TOP" || name == "SELF") continue;
        if (!path.empty()) path += '.';
        path += name;
    }
    // Fall back to the closest enclosing module that exists.
    for (;;) {
        auto it = m->path_to_module.find(path);
        if (it != m->path_to_module.end()) return it->second;
        if (path.empty()) return 0;
        size_t dot = path.rfind('.');
        path = dot == std::string::npos ? std::string() : path.substr(0, dot);
    }
}

// The module of a top-level op in graph mode: cached per position in the forward's op sequence,
// verified by the op's name pointer, so control flow that changes the sequence re-resolves.
int32_t graph_module(lps_model *m, const char *name) {
    size_t k = t_site_pos++;
    if (k < m->sites.size() && m->sites[k].name == name) {
        m->sites_hit++;
        return m->sites[k].module;
    }
    int32_t module = resolve_module(m);
    m->sites_resolved++;
    if (k < m->sites.size())
        m->sites[k] = {name, module};
    else if (k == m->sites.size() && k < k_max_sites)
        m->sites.push_back({name, module});
    return module;
}

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction &fn) {
    uint64_t t = lp_now_ns();
    lps_model *m = g_active.load(std::memory_order_relaxed);
    if (!m) return nullptr;
    int32_t module = -1;
    const char *name = fn.name();
    if (m->optimize && t_is_driver && t_op_depth == 0) module = graph_module(m, name);
    t_op_depth++;
    m->sink.op_start(m->sink.ctx, name, module, t);
    return nullptr;
}

void on_op_end(const at::RecordFunction &, at::ObserverContext *) {
    uint64_t t = lp_now_ns();
    lps_model *m = g_active.load(std::memory_order_relaxed);
    t_op_depth--;
    if (m) m->sink.op_end(m->sink.ctx, t);
}

// The CPU (and CUDA caching) allocators report every allocation (+size) and free (-size) to the
// PROFILER_STATE debug info of the thread doing it.
struct MemoryReporter : c10::MemoryReportingInfoBase {
    lps_model *m;
    explicit MemoryReporter(lps_model *model) : m(model) {}
    void report(void *ptr, int64_t size, c10::Device device) {
        uint64_t t = lp_now_ns();
        int dev = device.is_cuda() ? LPS_DEV_CUDA : LPS_DEV_CPU;
        m->sink.memory(m->sink.ctx, ptr, size, dev, t);
    }
    // libtorch 1.13 declares the totals int64_t, 2.x size_t: declare both, without `override`.
    void reportMemoryUsage(void *ptr, int64_t size, int64_t, int64_t, c10::Device device) {
        report(ptr, size, device);
    }
    void reportMemoryUsage(void *ptr, int64_t size, size_t, size_t, c10::Device device) {
        report(ptr, size, device);
    }
    bool memoryProfilingEnabled() const override {
        return true;
    }
};

bool another_profiler_active() {
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) return true;
#if TORCH_VERSION_MAJOR >= 2
    return torch::profiler::impl::ProfilerStateBase::getGlobal() != nullptr;
#else
    return torch::profiler::impl::ProfilerStateBase::get(/*global=*/true) != nullptr;
#endif
}

} // namespace

namespace lps {
void begin_forward(lps_model *) noexcept {
    t_site_pos = 0;
    t_op_depth = 0;
}
} // namespace lps

extern "C" {

int lps_profile_begin(lps_model *m, const lps_sink *sink, unsigned hooks) {
    if (!m || !sink) return lps::set_error(LP_ERR_INVALID, "lps_profile_begin: NULL argument");
    LPS_GUARD({
        if (another_profiler_active())
            return lps::set_error(
                LP_ERR_BUSY, "another profiler (torch.profiler or the autograd profiler) is "
                             "active in this process; stop it before profiling with layerprof");
        lps_model *expected = nullptr;
        if (!g_active.compare_exchange_strong(expected, m))
            return lps::set_error(LP_ERR_BUSY,
                                  "another layerprof session is profiling in this process");
        m->sink = *sink;
        m->hooks = hooks;
        t_is_driver = true;
        if (m->optimize) m->sites.reserve(k_max_sites);
        m->sites_resolved = m->sites_hit = 0;
        try {
            if (hooks & LPS_HOOK_MODULES)
                m->handles.push_back(at::addThreadLocalCallback(
                    at::RecordFunctionCallback(on_frame_start, on_frame_end)
                        .needsInputs(true)
                        .scopes({at::RecordScope::TORCHSCRIPT_FUNCTION})));
            if (hooks & LPS_HOOK_OPS)
                m->handles.push_back(
                    at::addThreadLocalCallback(at::RecordFunctionCallback(on_op_start, on_op_end)
                                                   .scopes({at::RecordScope::FUNCTION})));
            if (hooks & LPS_HOOK_MEMORY) {
                m->reporter = std::make_shared<MemoryReporter>(m);
                m->reporter_guard = std::make_unique<c10::DebugInfoGuard>(
                    c10::DebugInfoKind::PROFILER_STATE, m->reporter);
            }
        } catch (...) {
            lps_profile_end(m);
            throw;
        }
        return LP_OK;
    })
}

void lps_profile_end(lps_model *m) {
    if (!m) return;
    try {
        for (auto h : m->handles)
            at::removeCallback(h);
        m->handles.clear();
        m->reporter_guard.reset();
        m->reporter.reset();
    } catch (...) {
    }
    lps_model *expected = m;
    g_active.compare_exchange_strong(expected, nullptr);
    t_is_driver = false;
}

void lps_graph_stats(const lps_model *m, uint64_t *resolved, uint64_t *hits) {
    *resolved = m ? m->sites_resolved : 0;
    *hits = m ? m->sites_hit : 0;
}

} // extern "C"
