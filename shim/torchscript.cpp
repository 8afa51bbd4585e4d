// torchscript.cpp: the TorchScript backend's table (lps::k_torchscript), and what makes and frees
// its models: a TorchScript file loaded (modules.cpp lists its modules, markers.cpp puts the
// markers in) or a module the program holds (attach.cpp wraps it); and its forwards, run here or
// by the program. Only this file makes a TorchScript model, so the files below never call here.
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <new>
#include <sstream>
#include <stdexcept>

#include "base/clock.h"
#include "torchscript.hpp"

namespace {

using lps::TorchScript;

TorchScript *ts_of(lps_model *m) noexcept {
    return static_cast<TorchScript *>(m); // the table's operations are called with its own models
}

// "ns::name" from TorchScript's "Unknown builtin op: ns::name." (an operator of a custom-op
// library that is not loaded), or empty.
std::string_view unknown_op(std::string_view what) {
    constexpr std::string_view k_tag = "Unknown builtin op: ";
    size_t at = what.find(k_tag);
    if (at == std::string_view::npos) return {};
    std::string_view op = what.substr(at + k_tag.size());
    size_t end = op.find_first_of(". \n");
    op = op.substr(0, end);
    return op.find("::") == std::string_view::npos ? std::string_view{} : op;
}

bool opens(const char *) noexcept {
    return true; // any file the package does not claim: torch::jit::load says what it is not
}

int load(const char *path, c10::Device device, int exec, lps_model **out) {
    auto m = std::make_unique<TorchScript>();
    try {
        // The executor mode must be set before the first run of any function of this
        // module: libtorch caches its decision per function (docs/libtorch.md).
        lps::set_exec(m.get(), exec);
        // The thread's setting as the caller had it afterwards (a program's own TorchScript).
        torch::jit::GraphOptimizerEnabledGuard optimize(m->optimize != 0);
        m->device = device;
        std::unordered_map<std::string, std::string> extra{{"layerprof.inputs", ""}};
        m->module = torch::jit::load(path, device, extra);
        m->module.eval();
        auto it = extra.find("layerprof.inputs");
        if (it != extra.end() && !it->second.empty()) {
            m->default_inputs = it->second;
            m->has_default_inputs = true;
        }
        if (!m->module.find_method("forward"))
            return lp_error_set(LP_ERR_MODEL, "model '%s' has no forward method", path);
        lps::index_modules(m.get());
        if (m->markers) m->marker_sites = lps::insert_markers(m.get());
    } catch (const std::bad_alloc &) {
        throw; // out of memory, not a bad model: the guard says so
    } catch (const std::exception &e) {
        std::string_view op = unknown_op(e.what());
        if (!op.empty()) {
            std::string_view ns = op.substr(0, op.find("::"));
            return lp_error_set(
                LP_ERR_MODEL,
                "cannot load '%s': it uses the operator '%.*s', which no loaded library "
                "provides: load the library of the '%.*s' operators with --load-library PATH "
                "(torchvision: torchvision/_C*.so; torchaudio: "
                "torchaudio/lib/libtorchaudio.so)",
                path, static_cast<int>(op.size()), op.data(), static_cast<int>(ns.size()),
                ns.data());
        }
        std::string_view why = lps::condense(e.what());
        return lp_error_set(LP_ERR_MODEL, "cannot load '%s' as a TorchScript model: %.*s", path,
                            static_cast<int>(why.size()), why.data());
    } catch (...) {
        return lp_error_set(LP_ERR_MODEL, "cannot load '%s' as a TorchScript model", path);
    }
    *out = m.release();
    return LP_OK;
}

std::vector<c10::TypePtr> declared_inputs(lps_model *m) {
    std::vector<c10::TypePtr> declared;
    if (auto forward = ts_of(m)->module.find_method("forward"))
        for (const auto &arg : forward->function().getSchema().arguments())
            declared.push_back(arg.type());
    return declared;
}

int check_inputs(lps_model *, lps_inputs *) {
    return LP_OK; // the forward's schema checks them when it runs (forward below)
}

// torch.jit.fork tasks, and the rest of a function after a torch.jit.wait that had to wait, are
// normally handed to libtorch's inter-op pool. There (1) the executor mode is that thread's own
// (setGraphExecutorOptimize is thread-local), so the hooks mode got optimised, inlined graphs for
// forked submodules, and methods shared by several instances were compiled either way depending on
// which thread ran them first; (2) a module frame began on one thread and ended on another, which
// per-thread call stacks cannot attribute (the root's frame was never closed on the calling
// thread). So every task of the forward runs here, on the calling thread, in launch order: the
// nesting eager PyTorch has, where fork runs its function at once (docs/threads.md). Tasks that
// arrive after the forward has returned go to libtorch's pool as usual.
struct InlineTasks {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool done = false;   // the forward's future completed
    bool closed = false; // the forward returned: launch on libtorch's pool
};

c10::IValue forward(lps_model *model, lps_inputs *in) {
    TorchScript *m = ts_of(model);
    c10::InferenceMode guard;
    lps::OptimizeScope optimize(m->optimize != 0); // restored on return
    lps::begin_forward(m);
    torch::jit::Function &fn = m->module.get_method("forward").function();
    std::vector<c10::IValue> stack;
    stack.reserve(in->values.size() + 1);
    stack.push_back(m->module._ivalue());
    stack.insert(stack.end(), in->values.begin(), in->values.end());
    try {
        fn.getSchema().checkAndNormalizeInputs(stack); // what Method::operator() checks
    } catch (const c10::Error &e) {
        // Inputs that do not fit: say what TorchScript expected and the whole signature, on one
        // line, so the user sees which --input to change.
        std::string_view said = lps::condense(e.what());
        size_t own = said.find(". Declaration:"); // some messages show it: once is enough
        if (own != std::string_view::npos) said = said.substr(0, own);
        if (!said.empty() && said.back() == '.') said.remove_suffix(1);
        std::ostringstream why;
        why << said << "; the model's forward is " << fn.getSchema();
        std::string example = lps::example_inputs(fn.getSchema());
        if (!example.empty())
            why << "; inputs of these types: " << example << " (shapes are examples)";
        throw std::runtime_error(why.str());
    }

    auto tasks = std::make_shared<InlineTasks>();
    torch::jit::TaskLauncher launcher = [tasks](std::function<void()> task) {
        {
            std::lock_guard<std::mutex> lock(tasks->mu);
            if (!tasks->closed) {
                tasks->queue.push_back(std::move(task));
                tasks->cv.notify_one();
                return;
            }
        }
        at::launch(std::move(task));
    };
    auto close = [&tasks] {
        std::lock_guard<std::mutex> lock(tasks->mu);
        tasks->closed = true;
        tasks->queue.clear(); // after an error: what is left belongs to the failed forward
    };
    // The driver's own timing of the forward call: from the call into TorchScript until it and its
    // tasks are done. Setting up the call (above) is layerprof's, not the model's.
    uint64_t t0 = lp_now_ns();
    m->forward_t0 = t0;
    lps::markers_root(m, true, t0);
    auto future = fn.runAsync(stack, launcher);
    future->addCallback([tasks](c10::ivalue::Future &) {
        std::lock_guard<std::mutex> lock(tasks->mu);
        tasks->done = true;
        tasks->cv.notify_one();
    });
    // Until the forward is done and no task is left (a fork nobody waited for still runs).
    for (;;) {
        std::function<void()> task;
        {
            std::unique_lock<std::mutex> lock(tasks->mu);
            tasks->cv.wait(lock, [&] { return tasks->done || !tasks->queue.empty(); });
            if (tasks->queue.empty()) break;
            task = std::move(tasks->queue.front());
            tasks->queue.pop_front();
        }
        try {
            task();
        } catch (...) {
            close();
            throw;
        }
    }
    close();
    uint64_t t1 = lp_now_ns();
    m->last_forward_ns = t1 - t0;
    c10::IValue out = future->value(); // rethrows the forward's error (the collector then resets)
    lps::markers_root(m, false, t1, &out);
    return out;
}

// A forward the program runs on its module (lps_forward_enter/_leave): the thread's optimizer
// setting as the model's mode needs it, and the root call the markers do not see.
void forward_enter(lps_model *model) noexcept {
    TorchScript *m = ts_of(model);
    m->saved_optimize = torch::jit::getGraphExecutorOptimize();
    lps::set_optimize(m->optimize != 0);
    lps::begin_forward(m);
    m->forward_t0 = lp_now_ns();
    lps::markers_root(m, true, m->forward_t0);
}

void forward_leave(lps_model *model, bool completed, uint64_t t1) noexcept {
    TorchScript *m = ts_of(model);
    m->last_forward_ns = t1 - m->forward_t0;
    if (completed) lps::markers_root(m, false, t1);
    lps::set_optimize(m->saved_optimize);
}

void profile_begin(lps_model *m) {
    lps::ts_profile_begin(ts_of(m));
}

void profile_end(lps_model *m) noexcept {
    lps::ts_profile_end(ts_of(m));
}

// An attached module goes back to the program as it came (attach.cpp).
void free_ts(lps_model *model) noexcept {
    TorchScript *m = ts_of(model);
    if (m->attached) lps::detach_module(m);
    delete m;
}

} // namespace

namespace lps {
const Backend k_torchscript{Backend::Kind::torchscript,
                            opens,
                            load,
                            declared_inputs,
                            check_inputs,
                            forward,
                            forward_enter,
                            forward_leave,
                            profile_begin,
                            profile_end,
                            free_ts};
} // namespace lps

extern "C" int lps_model_attach(void *module, const char *torch_build, const char *device, int exec,
                                lps_model **out) noexcept {
    if (!module || !torch_build || !out)
        return lp_error_set(LP_ERR_INVALID, "lps_model_attach: NULL argument");
    *out = nullptr;
    return lps::guard([&]() -> int {
        if (int rc = lps::check_torch_build(torch_build, "a module")) return rc;
        c10::Device dev(c10::kCPU);
        if (int rc = lps::attach_device(device, &dev)) return rc;
        auto m = std::make_unique<TorchScript>();
        m->device = dev;
        lps::set_exec(m.get(), exec);
        m->module = *static_cast<torch::jit::Module *>(module); // a handle: the same object
        int rc;
        try {
            rc = lps::attach_module(m.get(), device);
        } catch (...) { // what attach did so far is undone (never profiled: nothing else to undo)
            free_ts(m.release());
            throw;
        }
        if (rc) {
            free_ts(m.release());
            return rc;
        }
        *out = m.release();
        return LP_OK;
    });
}
