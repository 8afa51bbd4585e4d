// model.cpp: loading a TorchScript file (modules.cpp lists its modules) or dispatching a
// package's load (aoti.cpp), running forward (inputs.cpp makes its arguments), releasing a model.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Parallel.h>
#include <c10/core/InferenceMode.h>
#include <c10/util/Logging.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/version.h>

#include <cerrno>
#include <cstdio>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <new>
#include <sstream>
#include <stdexcept>
#include <unordered_set>

#include "base/clock.h"
#include "shim_internal.hpp"

namespace {

// libtorch's warnings (TORCH_WARN) go here unless --verbose: they are not the report.
// The handler's signature changed between 1.13 and 2.x.
struct SilentWarnings : c10::WarningHandler {
#if TORCH_VERSION_MAJOR >= 2
    void process(const c10::Warning &) override {}
#else
    void process(const c10::SourceLocation &, const std::string &, const bool) override {}
#endif
};
SilentWarnings g_silent;

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
} // namespace

extern "C" {

void lps_set_verbose(int verbose) noexcept {
    if (verbose) return;
    try {
#if TORCH_VERSION_MAJOR >= 2
        c10::WarningUtils::set_warning_handler(&g_silent);
#else
        c10::Warning::set_warning_handler(&g_silent);
#endif
    } catch (...) { // libtorch's warnings then reach the terminal: noise, not a failure
    }
    FLAGS_caffe2_log_level = 3; // errors come back as exceptions, not log lines
#ifdef C10_USE_GLOG
    // Debian's libtorch logs through glog, which ignores caffe2_log_level: CPUAllocator's
    // "Memory block of unknown size was allocated before the profiling started" (a tensor made
    // before --memory began, freed during it) reached stderr as a glog warning.
    FLAGS_minloglevel = 2; // glog::ERROR
#endif
}

int lps_set_threads(int threads) noexcept {
    return lps::guard([&]() -> int {
        if (threads > 0) at::set_num_threads(threads);
        return LP_OK;
    });
}

static int parse_device(const char *device, c10::Device *out) {
    try {
        *out = c10::Device(device && *device ? device : "cpu");
    } catch (...) {
        return lp_error_set(LP_ERR_INVALID, "unknown device '%s'", device);
    }
    if (!out->is_cpu() && !out->is_cuda())
        return lp_error_set(LP_ERR_INVALID, "unsupported device '%s' (cpu or cuda)", device);
    return LP_OK;
}

int lps_model_load(const char *path, const char *device, int exec, lps_model **out) noexcept {
    if (!path || !out) return lp_error_set(LP_ERR_INVALID, "lps_model_load: NULL argument");
    *out = nullptr;
    return lps::guard([&]() -> int {
        c10::Device dev(c10::kCPU);
        int rc = parse_device(device, &dev);
        if (rc) return rc;
        {
            std::ifstream probe(path, std::ios::binary);
            if (!probe)
                return lp_error_set(LP_ERR_IO, "cannot open model '%s': %s", path, strerror(errno));
        }
        auto m = std::make_unique<lps_model>();
        if (lps::is_pt2_path(path)) { // an AOTInductor package (aoti.cpp)
            m->device = dev;
            m->mark_outputs = (exec & LPS_EXEC_OUTPUTS) != 0; // the out_shape column asked for
            int prc = lps::pt2_load(m.get(), path);
            if (prc) return prc;
            *out = m.release();
            return LP_OK;
        }
        try {
            // The executor mode must be set before the first run of any function of this
            // module: libtorch caches its decision per function (docs/libtorch.md).
            lps::set_exec(m.get(), exec);
            // The thread's setting as the caller had it afterwards (a program's own TorchScript).
            torch::jit::GraphOptimizerEnabledGuard optimize(m->optimize != 0);
            m->device = dev;
            std::unordered_map<std::string, std::string> extra{{"layerprof.inputs", ""}};
            m->module = torch::jit::load(path, dev, extra);
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
    });
}

void lps_model_free(lps_model *m) noexcept {
    if (!m) return;
    lps_profile_end(m);
    if (m->detach) m->detach(m);
    try {
        delete m;
    } catch (...) {
    }
}

size_t lps_model_module_count(const lps_model *m) noexcept {
    return m ? m->modules.size() : 0;
}

int lps_model_module(const lps_model *m, size_t index, const char **path, const char **class_name,
                     int32_t *parent) noexcept {
    if (!m || index >= m->modules.size())
        return lp_error_set(LP_ERR_INVALID, "module index %zu out of range", index);
    const auto &e = m->modules[index];
    *path = e.path.c_str();
    *class_name = e.class_name.c_str();
    *parent = e.parent;
    return LP_OK;
}

int lps_model_module_has_forward(const lps_model *m, size_t index) noexcept {
    return m && index < m->modules.size() && m->modules[index].has_forward;
}

int lps_model_module_size(const lps_model *m, size_t index, lps_module_size *out) noexcept {
    if (!m || !out || index >= m->modules.size())
        return lp_error_set(LP_ERR_INVALID, "module index %zu out of range", index);
    *out = m->modules[index].size;
    return LP_OK;
}

const char *lps_model_default_inputs(const lps_model *m) noexcept {
    return m && m->has_default_inputs ? m->default_inputs.c_str() : nullptr;
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
namespace {
struct InlineTasks {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> queue;
    bool done = false;   // the forward's future completed
    bool closed = false; // the forward returned: launch on libtorch's pool
};
} // namespace

static c10::IValue run_forward(lps_model *m, lps_inputs *in) {
    if (m->pt2) return lps::pt2_forward(m, in);
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

uint64_t lps_last_forward_ns(const lps_model *m) noexcept {
    return m ? m->last_forward_ns : 0;
}

uint64_t lps_last_synced_ns(const lps_model *m) noexcept {
    return m ? m->last_synced_ns : 0;
}

// CUDA runs asynchronously: results are read after this. On a GPU the forward's true time ends
// here, not when the call returned (its last kernels were only launched then).
static int synchronize_after_forward(lps_model *m) {
    int rc = lps_device_synchronize(m);
    m->last_synced_ns = rc ? 0 : lp_now_ns() - m->forward_t0;
    return rc;
}

int lps_forward(lps_model *m, lps_inputs *in) noexcept {
    if (!m || !in) return lp_error_set(LP_ERR_INVALID, "lps_forward: NULL argument");
    return lps::guard([&]() -> int {
        run_forward(m, in);
        return synchronize_after_forward(m);
    });
}

static void append_bytes(const c10::IValue &v, std::vector<char> &buf) {
    lps::for_each_tensor(v, [&](const at::Tensor &tensor) {
        at::Tensor t = tensor.contiguous().to(c10::kCPU);
        const char *p = static_cast<const char *>(t.data_ptr());
        buf.insert(buf.end(), p, p + t.nbytes());
    });
}

int lps_forward_output(lps_model *m, lps_inputs *in, void **bytes, size_t *size) noexcept {
    if (!m || !in || !bytes || !size)
        return lp_error_set(LP_ERR_INVALID, "lps_forward_output: NULL argument");
    *bytes = nullptr;
    *size = 0;
    return lps::guard([&]() -> int {
        c10::IValue out = run_forward(m, in);
        if (int rc = synchronize_after_forward(m)) return rc;
        std::vector<char> buf;
        append_bytes(out, buf);
        void *p = malloc(buf.size() ? buf.size() : 1);
        if (!p) return lp_error_set(LP_ERR_NOMEM, "out of memory");
        if (!buf.empty()) memcpy(p, buf.data(), buf.size());
        *bytes = p;
        *size = buf.size();
        return LP_OK;
    });
}

} // extern "C"
