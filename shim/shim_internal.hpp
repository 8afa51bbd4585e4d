// shim_internal.hpp: what the shim's translation units share. C++ only; never included by the core.
#pragma once

#include <torch/script.h>

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "lp_shim.h"

namespace lps {

// Records the message for lps_error_last() and returns `status`.
int set_error(int status, const char *fmt, ...) noexcept;

// The boundary: every extern "C" body runs inside LPS_GUARD, so no exception escapes.
#define LPS_GUARD(body)                                                                            \
    try {                                                                                          \
        body                                                                                       \
    } catch (const c10::Error &e) {                                                                \
        return lps::set_error(LP_ERR_RUNTIME, "%s",                                                \
                              lps::first_line(e.what_without_backtrace()).c_str());                \
    } catch (const std::bad_alloc &) {                                                             \
        return lps::set_error(LP_ERR_NOMEM, "out of memory");                                      \
    } catch (const std::exception &e) {                                                            \
        return lps::set_error(LP_ERR_RUNTIME, "%s", lps::first_line(e.what()).c_str());            \
    } catch (...) {                                                                                \
        return lps::set_error(LP_ERR_RUNTIME, "unknown C++ exception in libtorch");                \
    }

// libtorch messages are several lines (a TorchScript traceback); the useful cause is condensed
// into one line: the last "RuntimeError:"-style line if there is one, else the first line.
std::string first_line(const std::string &what);

struct ModuleEntry {
    std::string path, class_name;
    int32_t parent;
    bool has_forward;              // false for containers (ModuleList, ModuleDict): never called
    std::vector<int32_t> children; // direct children, in order
};

struct OpSite {
    const char *name; // the op's interned name pointer: verifies the cached site
    int32_t module;
};

} // namespace lps

struct lps_model {
    torch::jit::Module module;
    c10::Device device{c10::kCPU};
    int optimize = 0;
    std::vector<lps::ModuleEntry> modules;
    std::unordered_map<const void *, int32_t> self_to_module; // ivalue::Object* -> index
    std::unordered_map<std::string, int32_t> path_to_module;
    std::string default_inputs;
    bool has_default_inputs = false;

    // Profiling state (see hooks.cpp).
    lps_sink sink{};
    unsigned hooks = 0;
    std::vector<at::CallbackHandle> handles;
    std::shared_ptr<c10::DebugInfoBase> reporter;
    std::unique_ptr<c10::DebugInfoGuard> reporter_guard;
    std::vector<lps::OpSite> sites; // graph mode: top-level op position -> module
    uint64_t sites_resolved = 0, sites_hit = 0;
    uint64_t last_forward_ns = 0; // the last forward call's wall time (lps_last_forward_ns)
};

struct lps_inputs {
    std::vector<c10::IValue> values;
};

namespace lps {
// Resets the per-forward op position used by the graph mode's site cache (hooks.cpp).
void begin_forward(lps_model *m) noexcept;
} // namespace lps
