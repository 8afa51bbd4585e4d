// model.cpp: the entry points every model has, whichever backend runs it (shim_internal.hpp's
// lps::Backend): loading a file with the backend that opens it, running forward (inputs.cpp makes
// its arguments) and bracketing the program's own forwards, the modules' listing, releasing a
// model. Nothing here knows a backend's state: it calls the model's table.
#include <ATen/Parallel.h>
#include <c10/util/Logging.h>
#include <torch/version.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

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
        // The package claims its files first: TorchScript takes any other (its own error says
        // what the file is not).
        const lps::Backend &backend =
            lps::k_package.opens(path) ? lps::k_package : lps::k_torchscript;
        return backend.load(path, dev, exec, out);
    });
}

void lps_model_free(lps_model *m) noexcept {
    if (!m) return;
    lps_profile_end(m);
    m->backend->free(m);
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
        m->backend->forward(m, in);
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
        c10::IValue out = m->backend->forward(m, in);
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

int lps_forward_enter(lps_model *m) noexcept {
    if (!m) return lp_error_set(LP_ERR_INVALID, "lps_forward_enter: NULL model");
    if (m->in_forward)
        return lp_error_set(LP_ERR_STATE, "a forward is already open on this session: end it "
                                          "first (lp_session_forward_end)");
    m->in_forward = true;
    m->backend->forward_enter(m);
    return LP_OK;
}

int lps_forward_leave(lps_model *m, int completed) noexcept {
    uint64_t t1 = lp_now_ns();
    if (!m) return lp_error_set(LP_ERR_INVALID, "lps_forward_leave: NULL model");
    if (!m->in_forward)
        return lp_error_set(LP_ERR_STATE, "no forward is open on this session "
                                          "(lp_session_forward_begin was not called)");
    m->in_forward = false;
    m->backend->forward_leave(m, completed != 0, t1);
    return lps_device_synchronize(m);
}

} // extern "C"
