// flops.cpp: FLOPs per op from its input shapes (LPS_HOOK_FLOPS), for the flops columns.
//
// A RecordFunction callback of its own, installed only when a flops column is asked for: it needs
// the ops' inputs, which cost every op a copy of its arguments, and the default run pays nothing.
// Counting is 2 FLOPs per multiply-add (fvcore counts 1; docs/flops.md has the table). Ops nest
// (aten::linear runs aten::addmm, aten::conv2d runs aten::convolution ...): an op with a formula
// counts for everything inside it, and the ops inside are not looked at. An op without one is
// named to the sink (flops_unknown) when nothing inside it counted either, so that a missing
// formula is visible in the report rather than a silent 0.
//
// Hot path: the formula of an op name is found by comparing strings once per name and thread,
// then from a small per-thread table keyed by the name's pointer; shapes are read from the
// inputs libtorch hands the callback. No allocation, no lock, no string built.
#include <ATen/record_function.h>

#include <array>
#include <cstring>

#include "shim_internal.hpp"

namespace {

enum class Formula : uint8_t {
    unknown,
    zero, // moves or views data: no arithmetic
    conv,
    linear,
    matmul, // mm, bmm, matmul: the last two dims of each operand
    addmm,  // addmm, baddbmm, addbmm: operands 1 and 2
    attention,
    norm2,   // batch_norm in eval: one multiply-add per element
    norm5,   // layer_norm, group_norm, instance_norm: mean, variance, normalise, affine
    pool,    // one comparison or addition per input element
    eltwise, // one per element of the largest input
    softmax, // exp, sum, divide: three per element
};

struct Entry {
    const char *name;
    Formula formula;
};

// Operator names as RecordFunction gives them. Anything else is unknown. python/layerprof_shapes.py
// has the same table for AOTInductor packages (integration.pt2 compares the two's figures).
const Entry k_table[] = {
    {"aten::conv1d", Formula::conv},
    {"aten::conv2d", Formula::conv},
    {"aten::conv3d", Formula::conv},
    {"aten::convolution", Formula::conv},
    {"aten::_convolution", Formula::conv},
    {"aten::conv_transpose1d", Formula::conv},
    {"aten::conv_transpose2d", Formula::conv},
    {"aten::conv_transpose3d", Formula::conv},
    {"aten::linear", Formula::linear},
    {"aten::mm", Formula::matmul},
    {"aten::bmm", Formula::matmul},
    {"aten::matmul", Formula::matmul},
    {"aten::addmm", Formula::addmm},
    {"aten::baddbmm", Formula::addmm},
    {"aten::addbmm", Formula::addmm},
    {"aten::scaled_dot_product_attention", Formula::attention},
    {"aten::batch_norm", Formula::norm2},
    {"aten::_native_batch_norm_legit_no_training", Formula::norm2},
    {"aten::native_batch_norm", Formula::norm2},
    {"aten::layer_norm", Formula::norm5},
    {"aten::native_layer_norm", Formula::norm5},
    {"aten::group_norm", Formula::norm5},
    {"aten::native_group_norm", Formula::norm5},
    {"aten::instance_norm", Formula::norm5},
    {"aten::max_pool1d", Formula::pool},
    {"aten::max_pool2d", Formula::pool},
    {"aten::max_pool3d", Formula::pool},
    {"aten::max_pool2d_with_indices", Formula::pool},
    {"aten::avg_pool1d", Formula::pool},
    {"aten::avg_pool2d", Formula::pool},
    {"aten::avg_pool3d", Formula::pool},
    {"aten::adaptive_avg_pool1d", Formula::pool},
    {"aten::adaptive_avg_pool2d", Formula::pool},
    {"aten::adaptive_avg_pool3d", Formula::pool},
    {"aten::adaptive_max_pool2d", Formula::pool},
    {"aten::mean", Formula::pool},
    {"aten::sum", Formula::pool},
    {"aten::relu", Formula::eltwise},
    {"aten::relu_", Formula::eltwise},
    {"aten::relu6", Formula::eltwise},
    {"aten::hardtanh", Formula::eltwise},
    {"aten::hardtanh_", Formula::eltwise},
    {"aten::gelu", Formula::eltwise},
    {"aten::silu", Formula::eltwise},
    {"aten::silu_", Formula::eltwise},
    {"aten::sigmoid", Formula::eltwise},
    {"aten::tanh", Formula::eltwise},
    {"aten::hardswish", Formula::eltwise},
    {"aten::hardswish_", Formula::eltwise},
    {"aten::hardsigmoid", Formula::eltwise},
    {"aten::leaky_relu", Formula::eltwise},
    {"aten::elu", Formula::eltwise},
    {"aten::clamp", Formula::eltwise},
    {"aten::add", Formula::eltwise},
    {"aten::add_", Formula::eltwise},
    {"aten::sub", Formula::eltwise},
    {"aten::mul", Formula::eltwise},
    {"aten::mul_", Formula::eltwise},
    {"aten::div", Formula::eltwise},
    {"aten::div_", Formula::eltwise},
    {"aten::pow", Formula::eltwise},
    {"aten::sqrt", Formula::eltwise},
    {"aten::rsqrt", Formula::eltwise},
    {"aten::exp", Formula::eltwise},
    {"aten::neg", Formula::eltwise},
    {"aten::abs", Formula::eltwise},
    {"aten::maximum", Formula::eltwise},
    {"aten::minimum", Formula::eltwise},
    {"aten::where", Formula::eltwise},
    {"aten::masked_fill", Formula::eltwise},
    {"aten::gt", Formula::eltwise},
    {"aten::lt", Formula::eltwise},
    {"aten::ge", Formula::eltwise},
    {"aten::le", Formula::eltwise},
    {"aten::eq", Formula::eltwise},
    {"aten::ne", Formula::eltwise},
    {"aten::softmax", Formula::softmax},
    {"aten::_softmax", Formula::softmax},
    {"aten::log_softmax", Formula::softmax},
    {"aten::view", Formula::zero},
    {"aten::reshape", Formula::zero},
    {"aten::_reshape_alias", Formula::zero},
    {"aten::flatten", Formula::zero},
    {"aten::unflatten", Formula::zero},
    {"aten::contiguous", Formula::zero},
    {"aten::size", Formula::zero},
    {"aten::t", Formula::zero},
    {"aten::transpose", Formula::zero},
    {"aten::permute", Formula::zero},
    {"aten::select", Formula::zero},
    {"aten::slice", Formula::zero},
    {"aten::unsqueeze", Formula::zero},
    {"aten::squeeze", Formula::zero},
    {"aten::expand", Formula::zero},
    {"aten::to", Formula::zero},
    {"aten::_to_copy", Formula::zero},
    {"aten::detach", Formula::zero},
    {"aten::clone", Formula::zero},
    {"aten::copy_", Formula::zero},
    {"aten::cat", Formula::zero},
    {"aten::stack", Formula::zero},
    {"aten::split", Formula::zero},
    {"aten::chunk", Formula::zero},
    {"aten::unbind", Formula::zero},
    {"aten::narrow", Formula::zero},
    {"aten::as_strided", Formula::zero},
    {"aten::empty", Formula::zero},
    {"aten::empty_like", Formula::zero},
    {"aten::zeros", Formula::zero},
    {"aten::zeros_like", Formula::zero},
    {"aten::ones", Formula::zero},
    {"aten::ones_like", Formula::zero},
    {"aten::full", Formula::zero},
    {"aten::arange", Formula::zero},
    {"aten::fill_", Formula::zero},
    {"aten::zero_", Formula::zero},
    {"aten::dropout", Formula::zero},
    {"aten::feature_dropout", Formula::zero},
    {"aten::embedding", Formula::zero},
    {"aten::index", Formula::zero},
    {"aten::index_select", Formula::zero},
    {"aten::resize_", Formula::zero},
    {"aten::lift_fresh", Formula::zero},
    {"aten::alias", Formula::zero},
    {"aten::numel", Formula::zero},
    {"aten::dim", Formula::zero},
    {"aten::item", Formula::zero},
    {"aten::_local_scalar_dense", Formula::zero},
    {"aten::is_floating_point", Formula::zero},
    {"aten::triu", Formula::zero},
    {"aten::tril", Formula::zero},
    {"aten::expand_as", Formula::zero},
    {"aten::view_as", Formula::zero},
    {"aten::reshape_as", Formula::zero},
    {"aten::new_empty", Formula::zero},
    {"aten::new_zeros", Formula::zero},
    {"aten::new_ones", Formula::zero},
    {"aten::new_full", Formula::zero},
    {"aten::empty_strided", Formula::zero},
    {"aten::full_like", Formula::zero},
    {"aten::scalar_tensor", Formula::zero},
};

Formula lookup(const char *name) {
    for (const Entry &e : k_table)
        if (std::strcmp(e.name, name) == 0) return e.formula;
    return Formula::unknown;
}

// The formula of each op name this thread has seen, by the name's pointer (libtorch's: stable for
// the operator's life). Full: look the name up again, which is correct, only slower.
struct NameCache {
    static constexpr size_t k_size = 256;
    std::array<const char *, k_size> names{};
    std::array<Formula, k_size> formulas{};
    Formula get(const char *name) {
        size_t slot = (reinterpret_cast<uintptr_t>(name) >> 4) & (k_size - 1);
        for (size_t i = 0; i < 8; i++, slot = (slot + 1) & (k_size - 1)) {
            if (names[slot] == name) return formulas[slot];
            if (!names[slot]) {
                names[slot] = name;
                return formulas[slot] = lookup(name);
            }
        }
        return lookup(name);
    }
};

// The ops open on this thread (see the top of the file): how deep inside an op that counted, and
// the unknown ops around the current one, with whether anything inside them counted.
struct OpenOps {
    static constexpr int k_depth = 64;
    int counted_depth = 0;
    int n_unknown = 0;
    std::array<const char *, k_depth> unknown{};
    std::array<bool, k_depth> counted_inside{};
};
thread_local NameCache t_names;
thread_local OpenOps t_open;

using Inputs = c10::ArrayRef<const c10::IValue>;

const at::Tensor *tensor_at(Inputs in, size_t i) {
    if (i >= in.size() || !in[i].isTensor()) return nullptr;
    const at::Tensor &t = in[i].toTensor();
    return t.defined() ? &t : nullptr;
}

// An int list argument's element `d` (stride, padding...), repeated when given as one value.
int64_t int_arg(Inputs in, size_t i, size_t d, int64_t fallback) {
    if (i >= in.size()) return fallback;
    const c10::IValue &v = in[i];
    if (v.isInt()) return v.toInt();
    if (v.isIntList()) {
        auto list = v.toIntList();
        if (list.empty()) return fallback;
        return list.get(d < list.size() ? d : list.size() - 1);
    }
    return fallback;
}

// conv*d(input, weight, bias, stride, padding, dilation, groups), conv_transpose*d(input, weight,
// bias, stride, padding, output_padding, groups, dilation), convolution(input, weight, bias,
// stride, padding, dilation, transposed, output_padding, groups): 2 * N * Cout * (Cin / groups) *
// prod(kernel) * prod(output) for a convolution; a transposed one applies its kernel at every
// input position, so prod(input spatial) and Cin * (Cout / groups).
uint64_t conv_flops(const char *name, Inputs in) {
    const at::Tensor *x = tensor_at(in, 0), *w = tensor_at(in, 1);
    if (!x || !w || x->dim() < 3 || w->dim() != x->dim()) return 0;
    bool general = std::strstr(name, "convolution") != nullptr;
    bool transposed = general ? (in.size() > 6 && in[6].isBool() && in[6].toBool())
                              : std::strstr(name, "transpose") != nullptr;
    size_t dilation_at = general ? 5 : transposed ? 7 : 5;
    int64_t spatial = x->dim() - 2;
    uint64_t kernel = 1, positions = 1;
    for (int64_t d = 0; d < spatial; d++) {
        int64_t k = w->size(d + 2);
        kernel *= static_cast<uint64_t>(k);
        int64_t size = x->size(d + 2);
        if (transposed) {
            positions *= static_cast<uint64_t>(size);
            continue;
        }
        int64_t stride = int_arg(in, 3, d, 1), dilation = int_arg(in, dilation_at, d, 1);
        int64_t pad = 0;
        if (in.size() > 4 && in[4].isString()) { // conv2d(..., padding="same" | "valid")
            pad = in[4].toStringRef() == "same" ? (dilation * (k - 1)) / 2 : 0;
        } else {
            pad = int_arg(in, 4, d, 0);
        }
        int64_t out = (size + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
        positions *= static_cast<uint64_t>(out > 0 ? out : 0);
    }
    uint64_t n = static_cast<uint64_t>(x->size(0));
    // Weight: (Cout, Cin / groups, k...) for a convolution, (Cin, Cout / groups, k...) transposed.
    uint64_t per_position = static_cast<uint64_t>(w->size(0)) * static_cast<uint64_t>(w->size(1));
    return 2 * n * per_position * kernel * positions;
}

// The product of the broadcast batch dimensions of two operands (all but their last two).
uint64_t batch_of(const at::Tensor &a, const at::Tensor &b) {
    int64_t da = a.dim() - 2, db = b.dim() - 2;
    uint64_t batch = 1;
    for (int64_t i = 0; i < std::max(da, db); i++) {
        int64_t sa = i < da ? a.size(da - 1 - i) : 1, sb = i < db ? b.size(db - 1 - i) : 1;
        batch *= static_cast<uint64_t>(std::max(sa, sb));
    }
    return batch;
}

// a (..., n, k) @ b (..., k, m): 2 * batch * n * k * m; a vector operand has n or m of 1.
uint64_t matmul_flops(const at::Tensor *a, const at::Tensor *b) {
    if (!a || !b || a->dim() < 1 || b->dim() < 1) return 0;
    uint64_t k = static_cast<uint64_t>(a->size(-1));
    uint64_t n = a->dim() >= 2 ? static_cast<uint64_t>(a->size(-2)) : 1;
    uint64_t m = b->dim() >= 2 ? static_cast<uint64_t>(b->size(-1)) : 1;
    uint64_t batch = a->dim() > 2 || b->dim() > 2 ? batch_of(*a, *b) : 1;
    return 2 * batch * n * k * m;
}

uint64_t numel(const at::Tensor *t) {
    return t ? static_cast<uint64_t>(t->numel()) : 0;
}

// The largest tensor argument: an element-wise op's output has its size (broadcasting).
uint64_t largest_input(Inputs in) {
    uint64_t most = 0;
    for (const c10::IValue &v : in)
        if (v.isTensor() && v.toTensor().defined())
            most = std::max(most, static_cast<uint64_t>(v.toTensor().numel()));
    return most;
}

uint64_t flops_of(Formula f, const char *name, Inputs in) {
    switch (f) {
    case Formula::conv:
        return conv_flops(name, in);
    case Formula::linear: { // input (..., in), weight (out, in)
        const at::Tensor *x = tensor_at(in, 0), *w = tensor_at(in, 1);
        if (!x || !w || w->dim() != 2) return 0;
        return 2 * numel(x) * static_cast<uint64_t>(w->size(0));
    }
    case Formula::matmul:
        return matmul_flops(tensor_at(in, 0), tensor_at(in, 1));
    case Formula::addmm:
        return matmul_flops(tensor_at(in, 1), tensor_at(in, 2));
    case Formula::attention: { // q (..., L, E), k (..., S, E), v (..., S, Ev)
        const at::Tensor *q = tensor_at(in, 0), *k = tensor_at(in, 1), *v = tensor_at(in, 2);
        if (!q || !k || !v || q->dim() < 2 || k->dim() < 2 || v->dim() < 2) return 0;
        uint64_t batch = numel(q) / static_cast<uint64_t>(q->size(-1) * q->size(-2));
        uint64_t l = static_cast<uint64_t>(q->size(-2)), s = static_cast<uint64_t>(k->size(-2));
        uint64_t e = static_cast<uint64_t>(q->size(-1)), ev = static_cast<uint64_t>(v->size(-1));
        return 2 * batch * l * s * (e + ev);
    }
    case Formula::norm2:
        return 2 * numel(tensor_at(in, 0));
    case Formula::norm5:
        return 5 * numel(tensor_at(in, 0));
    case Formula::pool:
        return numel(tensor_at(in, 0));
    case Formula::eltwise:
        return largest_input(in);
    case Formula::softmax:
        return 3 * numel(tensor_at(in, 0));
    case Formula::zero:
    case Formula::unknown:
        break;
    }
    return 0;
}

} // namespace

namespace lps {

void flops_op_start(lps_model *m, const at::RecordFunction &fn) noexcept {
    OpenOps &open = t_open;
    if (open.counted_depth) { // inside an op that counted: already included
        open.counted_depth++;
        return;
    }
    const char *name = fn.name();
    Formula f = t_names.get(name);
    if (f == Formula::unknown) {
        if (open.n_unknown < OpenOps::k_depth) {
            open.unknown[open.n_unknown] = name;
            open.counted_inside[open.n_unknown] = false;
        }
        open.n_unknown++;
        return;
    }
    open.counted_depth = 1;
    // An unknown op whose parts do arithmetic we count is covered; one that only allocates or
    // reshapes inside (zero) still did its own arithmetic unseen.
    if (f != Formula::zero && open.n_unknown > 0 && open.n_unknown <= OpenOps::k_depth)
        open.counted_inside[open.n_unknown - 1] = true;
    uint64_t flops = 0;
    try {
        flops = flops_of(f, name, op_inputs(fn));
    } catch (...) { // sizes() throws for nested tensors: counted as 0, like an unknown shape
    }
    if (flops) m->sink.flops(m->sink.ctx, flops);
}

void flops_op_end(lps_model *m) noexcept {
    OpenOps &open = t_open;
    if (open.counted_depth) {
        open.counted_depth--;
        return;
    }
    if (open.n_unknown == 0) return; // began before the callback was installed
    int top = --open.n_unknown;
    if (top >= OpenOps::k_depth) return;
    if (open.counted_inside[top]) { // its parts had formulas: so, in effect, has it
        if (top > 0) open.counted_inside[top - 1] = true;
        return;
    }
    if (m->sink.flops_unknown) m->sink.flops_unknown(m->sink.ctx, open.unknown[top]);
}

void flops_reset() noexcept {
    t_open = OpenOps{};
}

} // namespace lps
