// profile.cpp: lps_profile_begin/_end, the same for every model: one profiled model per process,
// the backend's own event sources (its table's profile_begin: TorchScript's callbacks and markers,
// a package's kernels) and the memory reporter, which both backends share.
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/profiler/orchestration/observer.h>

#include <atomic>
#include <type_traits>

#include "base/clock.h"
#include "shim_internal.hpp"

namespace {

// The profiled model, whichever backend runs it: lps_profile_begin refuses a second one. Each
// backend keeps its own for its callbacks (hooks.cpp's g_active, aoti.cpp's g_pt2), typed as
// its model, so that none of them reads another backend's model.
std::atomic<lps_model *> g_profiled{nullptr};

// The CPU (and CUDA caching) allocators report every allocation (+size) and free (-size) to the
// PROFILER_STATE debug info of the thread doing it.
struct MemoryReporter : c10::MemoryReportingInfoBase {
    lps_model *m;
    explicit MemoryReporter(lps_model *model) : m(model) {}
    void report(void *ptr, int64_t size, c10::Device device) noexcept {
        uint64_t t = lp_now_ns();
        int dev = device.is_cuda() ? LPS_DEV_CUDA : LPS_DEV_CPU;
        m->sink.memory(m->sink.ctx, ptr, size, dev, t);
    }
    // libtorch 1.13 declares the totals int64_t, 2.x size_t: declare both, without `override`.
    void reportMemoryUsage(void *ptr, int64_t size, int64_t, int64_t, c10::Device device) noexcept {
        report(ptr, size, device);
    }
    void reportMemoryUsage(void *ptr, int64_t size, size_t, size_t, c10::Device device) noexcept {
        report(ptr, size, device);
    }
    bool memoryProfilingEnabled() const override {
        return true;
    }
};

// The global profiler state is read through get(/*global=*/true) up to libtorch 2.11 and through
// getGlobal() in later 2.x (2.15 has no get(bool)). Which one a release has is detected, not
// guessed from its version number: a version test once broke the build against 2.11.
template <typename State, typename = void> struct has_get_global : std::false_type {};
template <typename State>
struct has_get_global<State, std::void_t<decltype(State::getGlobal())>> : std::true_type {};

template <typename State> bool global_profiler_active() {
    if constexpr (has_get_global<State>::value)
        return State::getGlobal() != nullptr;
    else
        return State::get(/*global=*/true) != nullptr;
}

bool another_profiler_active() {
    if (c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) return true;
    return global_profiler_active<torch::profiler::impl::ProfilerStateBase>();
}

} // namespace

extern "C" {

int lps_profile_begin(lps_model *m, const lp_event_sink *sink, unsigned hooks) noexcept {
    if (!m || !sink) return lp_error_set(LP_ERR_INVALID, "lps_profile_begin: NULL argument");
    return lps::guard([&]() -> int {
        if (another_profiler_active())
            return lp_error_set(LP_ERR_BUSY,
                                "another profiler (torch.profiler or the autograd profiler) is "
                                "active in this process; stop it before profiling with layerprof");
        lps_model *expected = nullptr;
        if (!g_profiled.compare_exchange_strong(expected, m))
            return lp_error_set(LP_ERR_BUSY,
                                "another layerprof session is profiling in this process");
        m->sink = *sink;
        m->hooks = hooks;
        try {
            m->backend->profile_begin(m); // its own events: callbacks, markers or kernels
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
    });
}

void lps_profile_end(lps_model *m) noexcept {
    if (!m) return;
    try {
        for (auto h : m->handles)
            at::removeCallback(h);
        m->handles.clear();
        m->reporter_guard.reset();
        m->reporter.reset();
    } catch (...) {
    }
    m->backend->profile_end(m);
    lps_model *expected = m;
    g_profiled.compare_exchange_strong(expected, nullptr);
}

} // extern "C"
