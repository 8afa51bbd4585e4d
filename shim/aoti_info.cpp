// aoti_info.cpp: what a loaded package's map tells the core's reports (lps_model_pt2_info,
// lps_model_module_fused): whether it is a package, its kernels, the calls that missed the map's
// order, and where each module's fused work was timed. A TorchScript model answers "none".
#include "aoti_pt2.hpp"

extern "C" int lps_model_module_fused(const lps_model *model, size_t index, const char **module,
                                      const char **kernel, unsigned *more) noexcept {
    if (!model || !module || !kernel || !more)
        return lp_error_set(LP_ERR_INVALID, "lps_model_module_fused: NULL argument");
    *module = *kernel = nullptr;
    *more = 0;
    const lps::Package *m = lps::package(model); // a TorchScript module fuses nothing
    if (!m || !m->pt2 || index >= m->pt2->fused_into.size()) return LP_OK;
    const lps::Pt2::FusedInto &f = m->pt2->fused_into[index];
    if (f.kernel < 0) return LP_OK;
    *module = f.module.c_str();
    *kernel = m->pt2->kernels[static_cast<size_t>(f.kernel)].name.c_str();
    *more = f.more;
    return LP_OK;
}

extern "C" int lps_model_pt2_info(const lps_model *model, lps_pt2_info *out) noexcept {
    if (!model || !out) return lp_error_set(LP_ERR_INVALID, "lps_model_pt2_info: NULL argument");
    *out = lps_pt2_info{};
    const lps::Package *m = lps::package(model);
    if (!m || !m->pt2) return LP_OK;
    out->is_pt2 = 1;
    out->has_map = m->pt2->has_map;
    out->kernels = m->pt2->kernels.size();
    out->unplaced = m->pt2->unplaced;
    out->calls_hooked = m->pt2->calls_hooked;
    out->calls_without_nodes = m->pt2->calls_without_nodes;
    return LP_OK;
}
