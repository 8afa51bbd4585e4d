// aoti_shapes.cpp: the shapes a program gives for the next forward of a package it attached
// (lp_session_input_shapes_set; layerprof_pt2.hpp's PackageSession::run passes its tensors'),
// checked and bound by the package's map as the inputs of the forwards the shim runs itself are
// (aoti.cpp's check_inputs), so that the FLOPs and output shapes that forward delivers are the
// ones a session loading the package would record for the same inputs.
#include "aoti_pt2.hpp"

extern "C" int lps_model_pt2_shapes(lps_model *model, const lp_tensor_shape *inputs,
                                    size_t n) noexcept {
    if (!model || (!inputs && n) || n > LP_MAX_INPUTS)
        return lp_error_set(LP_ERR_INVALID, "lps_model_pt2_shapes: bad argument");
    lps::Package *m = lps::package(model); // a TorchScript module's forwards check nothing here
    if (!m || !m->pt2 || !m->pt2->has_map || !m->pt2->shapes) return LP_OK;
    lps::Pt2 &p = *m->pt2;
    p.shapes_next = false; // until these pass: a refused shape leaves the forward no figures
    lp_pt2_input desc[LP_MAX_INPUTS]; // on the stack: the check, once per forward, allocates none
    for (size_t i = 0; i < n; i++) {
        // The map names dtypes as lp_dtype_name's canonical names ("float32", "int64"), and
        // every package's inputs have one (the export refuses others): -1, a dtype outside
        // lp_dtype, is never what the package was compiled for, and is refused by name.
        int dtype = inputs[i].dtype;
        desc[i] = lp_pt2_input{inputs[i].sizes, static_cast<size_t>(inputs[i].rank),
                               dtype < 0 ? "a dtype lp_dtype does not name"
                                         : lp_dtype_name(static_cast<lp_dtype>(dtype))};
    }
    int rc = lp_pt2_shapes_check(p.shapes.get(), desc, n);
    p.shapes_next = rc == LP_OK;
    return rc;
}

extern "C" void lps_model_pt2_shapes_forget(lps_model *model) noexcept {
    lps::Package *m = model ? lps::package(model) : nullptr;
    if (m && m->pt2) m->pt2->shapes_next = false;
}
