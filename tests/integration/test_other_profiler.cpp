// test_other_profiler.cpp: layerprof next to libtorch's own profilers in one process.
//
// libtorch's profilers (the legacy autograd profiler, the Kineto one behind torch.profiler, and a
// global on-demand one) use the same PROFILER_STATE slot as layerprof's memory reporter; pushing
// ours while one of them is on crashed (docs/libtorch.md). lp_session_run must refuse with
// LP_ERR_BUSY and a message, leave the process and the session intact, and work again once the
// other profiler is off. This test is C++ because it has to drive libtorch's profiler API; it
// links libtorch directly (only the shim does in the product).
#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/csrc/profiler/orchestration/observer.h>
#include <torch/version.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "layerprof.h"
#include "lp_check.hpp"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

namespace prof = torch::profiler::impl;
namespace aprof = torch::autograd::profiler;

// A session on nested.pt with memory and op events: everything that touches the slot.
static lp_session *open_session() {
    std::string path = std::string(LP_MODELS_DIR) + "/nested.pt";
    lp_options o;
    lp_options_init(&o);
    o.model_path = path.c_str();
    o.warmup = 1;
    o.iterations = 1;
    o.memory = 1;
    o.events = 1;
    lp_session *s = nullptr;
    int rc = lp_session_open(&s, &o);
    if (rc) {
        std::fprintf(stderr, "lp_session_open: %s\n", lp_error_last());
        std::exit(1);
    }
    return s;
}

static uint64_t root_calls(lp_session *s) {
    lp_node_info n;
    if (lp_session_node(s, 0, &n)) return UINT64_MAX;
    return n.raw_calls;
}

// Runs with another profiler on: refused, nothing recorded, the message says why.
static void expect_busy(lp_session *s, const char *which) {
    uint64_t before = root_calls(s);
    int rc = lp_session_run(s);
    LP_CHECK(rc == LP_ERR_BUSY, "%s: lp_session_run returned %d (%s), not LP_ERR_BUSY", which, rc,
             lp_error_last());
    LP_CHECK(std::strstr(lp_error_last(), "another profiler") != nullptr, "%s: message '%s'", which,
             lp_error_last());
    LP_CHECK(root_calls(s) == before, "%s: a refused run recorded calls", which);
    // A session opened while the other profiler is on is refused the same way when it runs.
    lp_session *t = open_session();
    LP_CHECK(lp_session_run(t) == LP_ERR_BUSY, "%s: a new session was not refused", which);
    lp_session_close(t);
}

static void expect_works(lp_session *s, const char *which) {
    uint64_t before = root_calls(s);
    int rc = lp_session_run(s);
    LP_CHECK(rc == LP_OK, "%s: lp_session_run returned %d: %s", which, rc, lp_error_last());
    LP_CHECK(root_calls(s) == before + 1, "%s: root calls %llu, expected %llu", which,
             (unsigned long long)root_calls(s), (unsigned long long)before + 1);
}

// The legacy autograd profiler (torch.autograd.profiler.profile(use_kineto=False)): thread-local.
static void legacy_profiler(lp_session *s) {
    prof::ProfilerConfig cfg(prof::ProfilerState::CPU, /*report_input_shapes=*/false,
                             /*profile_memory=*/true);
    aprof::enableProfilerLegacy(cfg);
    expect_busy(s, "legacy profiler");
    aprof::disableProfilerLegacy();
    expect_works(s, "after the legacy profiler");
}

// The Kineto profiler (torch.profiler.profile), CPU activity only: thread-local too.
static void kineto_profiler(lp_session *s) {
    prof::ProfilerConfig cfg(prof::ProfilerState::KINETO, /*report_input_shapes=*/false,
                             /*profile_memory=*/true);
    std::set<prof::ActivityType> activities{prof::ActivityType::CPU};
    aprof::prepareProfiler(cfg, activities); // what torch.profiler does first (Kineto's init)
    aprof::enableProfiler(cfg, activities);
    expect_busy(s, "kineto profiler");
    auto result = aprof::disableProfiler();
    (void)result;
    expect_works(s, "after the kineto profiler");
}

// A global profiler state (what on-demand Kineto pushes): ProfilerStateBase::push makes a state
// whose config is KINETO_ONDEMAND global. A stand-in state checks the global branch on both
// libtorch versions without needing a Kineto daemon.
struct StandInState : prof::ProfilerStateBase {
    StandInState()
        : prof::ProfilerStateBase(prof::ProfilerConfig(prof::ProfilerState::KINETO_ONDEMAND)) {}
    prof::ActiveProfilerType profilerType() override {
        return prof::ActiveProfilerType::KINETO;
    }
    // The totals are int64_t in 1.13 and size_t in 2.x: both, without `override`.
    void reportMemoryUsage(void *, int64_t, int64_t, int64_t, c10::Device) {}
    void reportMemoryUsage(void *, int64_t, size_t, size_t, c10::Device) {}
};

static void global_profiler(lp_session *s) {
    prof::ProfilerStateBase::push(std::make_shared<StandInState>());
#if TORCH_VERSION_MAJOR >= 2
    LP_CHECK(prof::ProfilerStateBase::getGlobal() != nullptr, "the stand-in state is not global");
#else
    LP_CHECK(prof::ProfilerStateBase::get(/*global=*/true) != nullptr,
             "the stand-in is not global");
#endif
    expect_busy(s, "global profiler state");
    auto popped = prof::ProfilerStateBase::pop(/*global=*/true);
    LP_CHECK(popped != nullptr, "could not pop the stand-in state");
    expect_works(s, "after the global profiler state");
}

int main() {
    lp_session *s = open_session();
    expect_works(s, "before any other profiler");
    legacy_profiler(s);
    kineto_profiler(s);
    global_profiler(s);
    lp_session_close(s);
    if (g_failures) {
        std::fprintf(stderr, "%d check(s) failed\n", g_failures);
        return 1;
    }
    std::printf("ok: layerprof refuses (LP_ERR_BUSY) while the legacy, Kineto or a global profiler "
                "is on, and works after\n");
    return 0;
}
