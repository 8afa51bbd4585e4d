// aoti_attach.cpp: an AOTInductor package that a program loaded itself with
// torch::inductor::AOTIModelPackageLoader (layerprof_pt2.hpp), and the forwards it runs on it.
//
// Nothing of a package is compiled at its first run, so unlike a TorchScript module (attach.cpp)
// a loader can be attached after it ran. What is checked: the program's libtorch is layerprof's,
// the package at the path has layerprof's map, its library is loaded in this process with kernel
// profiling (aoti.cpp's pt2_attach), and no other open session holds the same loader.
#include <mutex>
#include <unordered_set>

#include "shim_internal.hpp"

namespace {

std::mutex g_loaders_mu;
std::unordered_set<const void *> g_loaders; // the loaders of open sessions

// Lets go of an attached package's loader (lps_model::detach): imports put back, loader free.
void package_detach(lps_model *m) noexcept {
    lps::pt2_detach(m);
    std::lock_guard<std::mutex> lock(g_loaders_mu);
    g_loaders.erase(m->held_loader);
}

} // namespace

extern "C" int lps_model_attach_package(void *loader, const char *torch_build, const char *path,
                                        const char *device, int exec, lps_model **out) noexcept {
    if (!loader || !torch_build || !path || !out)
        return lp_error_set(LP_ERR_INVALID, "lps_model_attach_package: NULL argument");
    *out = nullptr;
    return lps::guard([&]() -> int {
        std::unique_ptr<lps_model> m;
        if (int rc = lps::attached_model(torch_build, "a package's loader", device, &m)) return rc;
        {
            std::lock_guard<std::mutex> lock(g_loaders_mu);
            if (!g_loaders.insert(loader).second)
                return lp_error_set(LP_ERR_BUSY,
                                    "the package's loader is already attached to another open "
                                    "session: close that session first");
        }
        m->attached = true; // from here on, lps_model_free lets the loader go
        m->detach = package_detach;
        m->held_loader = loader;
        m->mark_outputs = (exec & LPS_EXEC_OUTPUTS) != 0; // as lps_model_load's package
        int rc = lps::pt2_attach(m.get(), loader, path);
        if (rc) {
            lps_model_free(m.release());
            return rc;
        }
        *out = m.release();
        return LP_OK;
    });
}
