// attach.cpp: the TorchScript backend's wrapping of a torch::jit::Module the program holds
// (layerprof.hpp; torchscript.cpp's lps_model_attach makes the model), instead of a file the shim
// loads, and the live forwards the program runs on it on several threads.
//
// The model shares the program's module object, so every module's `self` is the one the program's
// forwards run on. What libtorch fixes at a function's first run (docs/libtorch.md) decides what
// can be attached: the optimizer setting and the graph (markers included) are compiled into
// forward's executor then, for the life of the module. So attach checks forward's compiled graph:
// GraphFunction::optimized_graph() is the one its executor was built from when forward has run,
// and is made now, exactly as that first run would make it, when it has not.
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <mutex>
#include <unordered_set>

#include "base/clock.h"
#include "torchscript.hpp"

namespace {

using lps::TorchScript;

// The forwards of the modules wrapped by an open model: two would insert and remove each other's
// markers. Keyed by the compiled function, not the object: two module objects of one type (a
// Module::copy()) share their methods' graphs, markers and split included.
std::mutex g_attached_mu;
std::unordered_set<const void *> g_attached;

const void *key_of(TorchScript *m) {
    return &m->module.get_method("forward").function();
}

// The parameters and buffers must be where the session runs and the inputs are made. "cuda"
// without an index is the CUDA device the module is on: a program's module.to(torch::kCUDA) puts
// it on the current device (cuda:0 unless the program chose another), and it becomes that device
// here, so that the session synchronises and makes inputs there.
int check_device(TorchScript *m, const char *device) {
    std::string found;
    auto on_device = [&](const at::Tensor &t) {
        if (!t.defined()) return true;
        if (m->device.is_cuda() && !m->device.has_index() && t.device().is_cuda())
            m->device = t.device();
        if (t.device() == m->device) return true;
        found = t.device().str();
        return false;
    };
    for (const at::Tensor &t : m->module.parameters())
        if (!on_device(t)) goto wrong;
    for (const at::Tensor &t : m->module.buffers())
        if (!on_device(t)) goto wrong;
    return LP_OK;
wrong:
    return lp_error_set(LP_ERR_INVALID,
                        "the module's parameters are not all on '%s', the session's device (one "
                        "is on %s): set the device option to where the module is (cpu, cuda or "
                        "cuda:N)",
                        device && *device ? device : "cpu", found.c_str());
}

// Whether forward's compiled graph is one the model's mode can profile (see the top of the file).
int check_not_compiled(TorchScript *m) {
    auto &fn = torch::jit::toGraphFunction(m->module.get_method("forward").function());
    torch::jit::GraphOptimizerEnabledGuard optimize(m->optimize != 0);
    std::shared_ptr<torch::jit::Graph> compiled = fn.optimized_graph();
    if (m->markers) {
        auto inlined = fn.graph()->copy(); // what the optimizer is given: markers of every call
        torch::jit::Inline(*inlined);
        if (lps::count_enter_markers(*inlined) == 0 || lps::count_enter_markers(*compiled) > 0)
            return LP_OK;
        return lp_error_set(
            LP_ERR_STATE,
            "the module's forward already ran before it was attached: TorchScript compiled it "
            "then, without layerprof's markers, and keeps that for the module's life. Attach the "
            "module before its first forward (markers mode), or attach a fresh copy "
            "(torch::jit::load)");
    }
    if (lps::count_submodule_calls(*fn.graph()) == 0 || lps::count_submodule_calls(*compiled) > 0)
        return LP_OK;
    return lp_error_set(
        LP_ERR_STATE,
        "the module's forward already ran with TorchScript's optimizer on before it was attached, "
        "which inlined its submodule calls for the module's life: hooks mode cannot see them. "
        "Attach the module before its first forward, or attach a fresh copy (torch::jit::load)");
}

} // namespace

namespace lps {

void detach_module(TorchScript *m) noexcept {
    try {
        if (m->markers) lps::remove_markers(m);
    } catch (...) { // out of memory: the graphs keep markers (and forward its split, which is
        // whole: markers.cpp swaps a body only once the new one is built), and they do nothing
        // without a session
    }
    try {
        std::lock_guard<std::mutex> lock(g_attached_mu);
        g_attached.erase(key_of(m));
    } catch (...) { // get_method allocates its name: the key stays, the module is refused again
    }
}

int attach_module(TorchScript *m, const char *device) {
    int rc = check_device(m, device);
    if (rc) return rc;
    if (!m->module.find_method("forward"))
        return lp_error_set(LP_ERR_MODEL, "the module has no forward method");
    {
        std::lock_guard<std::mutex> lock(g_attached_mu);
        if (!g_attached.insert(key_of(m)).second)
            return lp_error_set(LP_ERR_BUSY,
                                "the module (or a copy sharing its compiled forward) is already "
                                "attached to another open session: close that session first");
    }
    m->attached = true; // from here on, freeing the model undoes what follows (detach_module)
    lps::index_modules(m);
    if (m->markers) {
        m->marker_sites = lps::insert_markers(m);
        lps::split_unsampled(m);
    }
    return check_not_compiled(m);
}

} // namespace lps

extern "C" {

// Live forwards (lp_shim.h). Only the thread's own state changes: t_live and its optimizer
// setting; the model's fields are read, and live_sink is written once before any live forward.
int lps_live_prepare(lps_model *model, const lp_event_sink *sink) noexcept {
    if (!model || !sink) return lp_error_set(LP_ERR_INVALID, "lps_live_prepare: NULL argument");
    TorchScript *m = lps::torchscript(model); // a package has no markers
    if (!m || !m->markers)
        return lp_error_set(LP_ERR_UNSUPPORTED, "live forwards need the markers mode");
    m->live_sink = *sink;
    return LP_OK;
}

int lps_live_enter(lps_model *model, int record, lps_live_forward *f) noexcept {
    if (!model || !f) return lp_error_set(LP_ERR_INVALID, "lps_live_enter: NULL argument");
    TorchScript *m = lps::torchscript(model);
    if (!m) return lp_error_set(LP_ERR_UNSUPPORTED, "live forwards need the markers mode");
    if (lps::t_live)
        return lp_error_set(LP_ERR_STATE, "a recorded forward is already open on this thread: "
                                          "end it first (lp_session_forward_end)");
    return lps::guard([&]() -> int {
        f->saved_optimize = torch::jit::getGraphExecutorOptimize() ? 1 : 0;
        lps::set_optimize(m->optimize != 0);
        f->recording = record != 0;
        f->t0 = 0;
        if (!record) return LP_OK;
        lps::begin_forward(m);
        lps::t_live = m;
        f->t0 = lp_now_ns();
        m->live_sink.call_enter(m->live_sink.ctx, 0, f->t0);
        return LP_OK;
    });
}

int lps_live_leave(lps_model *model, lps_live_forward *f, int completed,
                   uint64_t *forward_ns) noexcept {
    uint64_t t1 = f && f->recording ? lp_now_ns() : 0;
    if (forward_ns) *forward_ns = 0;
    if (!model || !f) return lp_error_set(LP_ERR_INVALID, "lps_live_leave: NULL argument");
    TorchScript *m = lps::torchscript(model);
    if (!m) return lp_error_set(LP_ERR_UNSUPPORTED, "live forwards need the markers mode");
    if (f->recording) {
        if (completed) m->live_sink.call_exit(m->live_sink.ctx, t1);
        lps::t_live = nullptr;
        if (forward_ns) *forward_ns = t1 - f->t0;
    }
    return lps::guard([&]() -> int {
        lps::set_optimize(f->saved_optimize != 0);
        return LP_OK;
    });
}

} // extern "C"
