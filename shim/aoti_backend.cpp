// aoti_backend.cpp: the AOTInductor backend's table (lps::k_package), and what makes and frees its
// models: a package file the shim loads, or a package a program loaded itself with
// torch::inductor::AOTIModelPackageLoader (layerprof_pt2.hpp), whose forwards it runs itself.
// The table's operations are aoti.cpp's; only this file makes a Package, so that file never
// calls back here.
//
// Nothing of a package is compiled at its first run, so unlike a TorchScript module (attach.cpp)
// a loader can be attached after it ran. What is checked: the program's libtorch is layerprof's,
// the package at the path has layerprof's map, its library is loaded in this process with kernel
// profiling (aoti.cpp's pt2_attach), and no other open session holds the same loader.
#include <mutex>
#include <unordered_set>

#include "aoti_pt2.hpp"

namespace {

using lps::Package;

std::mutex g_loaders_mu;
std::unordered_set<const void *> g_loaders; // the loaders of open sessions

Package *package_of(lps_model *m) noexcept {
    return static_cast<Package *>(m); // the table's operations are called with its own models
}

bool opens(const char *path) noexcept {
    return lps::is_pt2_path(path);
}

int load(const char *path, c10::Device device, int exec, lps_model **out) {
    auto m = std::make_unique<Package>();
    m->device = device;
    m->mark_outputs = (exec & LPS_EXEC_OUTPUTS) != 0; // the out_shape column asked for
    if (int rc = lps::pt2_load(m.get(), path)) return rc;
    *out = m.release();
    return LP_OK;
}

std::vector<c10::TypePtr> declared_inputs(lps_model *) {
    return {}; // a package's inputs are tensors, in the order it was exported with
}

int check_inputs(lps_model *m, lps_inputs *in) {
    return lps::pt2_check_inputs(package_of(m), in);
}

c10::IValue forward(lps_model *m, lps_inputs *in) {
    return lps::pt2_forward(package_of(m), in);
}

void forward_enter(lps_model *m) noexcept {
    lps::pt2_enter(package_of(m));
}

void forward_leave(lps_model *m, bool completed, uint64_t) noexcept {
    lps::pt2_leave(package_of(m), completed); // its own clock, after its kernels' last event
}

void profile_begin(lps_model *m) {
    lps::pt2_profile_begin(package_of(m));
}

void profile_end(lps_model *m) noexcept {
    lps::pt2_profile_end(package_of(m));
}

// An attached package lets go of the program's loader: imports put back, loader free for
// another session.
void free_package(lps_model *model) noexcept {
    Package *m = package_of(model);
    if (m->attached) {
        lps::pt2_detach(m);
        std::lock_guard<std::mutex> lock(g_loaders_mu);
        g_loaders.erase(m->held_loader);
    }
    delete m;
}

} // namespace

namespace lps {
const Backend k_package{Backend::Kind::package, opens,       load,          declared_inputs,
                        check_inputs,           forward,     forward_enter, forward_leave,
                        profile_begin,          profile_end, free_package};
} // namespace lps

extern "C" int lps_model_attach_package(void *loader, const char *torch_build, const char *path,
                                        const char *device, int exec, lps_model **out) noexcept {
    if (!loader || !torch_build || !path || !out)
        return lp_error_set(LP_ERR_INVALID, "lps_model_attach_package: NULL argument");
    *out = nullptr;
    return lps::guard([&]() -> int {
        if (int rc = lps::check_torch_build(torch_build, "a package's loader")) return rc;
        c10::Device dev(c10::kCPU);
        if (int rc = lps::attach_device(device, &dev)) return rc;
        auto m = std::make_unique<Package>();
        m->device = dev;
        {
            std::lock_guard<std::mutex> lock(g_loaders_mu);
            if (!g_loaders.insert(loader).second)
                return lp_error_set(LP_ERR_BUSY,
                                    "the package's loader is already attached to another open "
                                    "session: close that session first");
        }
        m->attached = true; // from here on, freeing the model lets the loader go
        m->held_loader = loader;
        m->mark_outputs = (exec & LPS_EXEC_OUTPUTS) != 0; // as a loaded package's
        int rc;
        try {
            rc = lps::pt2_attach(m.get(), loader, path);
        } catch (...) { // out of memory reading the map or rebinding: let the loader go too
            free_package(m.release());
            throw; // guard() turns it into the status and message
        }
        if (rc) {
            free_package(m.release()); // never profiled: nothing of lps_model_free's else to undo
            return rc;
        }
        *out = m.release();
        return LP_OK;
    });
}
