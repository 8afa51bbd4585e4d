// flops.cpp: FLOPs per op from its input shapes (LPS_HOOK_FLOPS), for the flops columns.
//
// A RecordFunction callback of its own, installed only when a flops column is asked for: it needs
// the ops' inputs, which cost every op a copy of its arguments, and the default run pays nothing.
// Counting is 2 FLOPs per multiply-add (fvcore counts 1; docs/model-figures.md has the formulas).
// Ops nest (aten::linear runs aten::addmm, aten::conv2d runs aten::convolution ...): an op with a
// formula counts for everything inside it, and the ops inside are not looked at. An op without one
// is named to the sink (flops_unknown) when nothing inside it counted either, so that a missing
// formula is visible in the report rather than a silent 0.
//
// Hot path: the formula of an op name is found by comparing strings once per name and thread,
// then from a small per-thread table keyed by the name's pointer; shapes are read from the
// inputs libtorch hands the callback. No allocation, no lock, no string built.
#include <ATen/record_function.h>

#include <array>
#include <cstring>

#include "base/thread_block.h"
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

// Which formula each operator gets: shim/flops_table.def, the table python/layerprof_shapes.py
// reads too (integration.pt2 still compares the two sides' figures per module). A row names
// several operators, without "aten::", separated by spaces.
struct Row {
    Formula formula;
    const char *names;
};
const Row k_table[] = {
#define LP_FLOPS(formula, names) {Formula::formula, names},
#include "flops_table.def"
#undef LP_FLOPS
};

// Whether the space-separated list `names` holds `name`: no string is built.
bool names_hold(const char *names, const char *name, size_t len) {
    for (const char *p = names; *p;) {
        const char *end = std::strchr(p, ' ');
        size_t n = end ? static_cast<size_t>(end - p) : std::strlen(p);
        if (n == len && std::memcmp(p, name, len) == 0) return true;
        if (!end) break;
        p = end + 1;
    }
    return false;
}

// Once per op name and thread (NameCache below keeps the answer).
Formula lookup(const char *name) {
    static constexpr char k_ns[] = "aten::";
    if (std::strncmp(name, k_ns, sizeof k_ns - 1) != 0) return Formula::unknown;
    const char *op = name + sizeof k_ns - 1;
    size_t len = std::strlen(op);
    for (const Row &r : k_table)
        if (names_hold(r.names, op, len)) return r.formula;
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
// Both, 3 KB, are too big for the library's thread-local segment (thread_local.h): they live in
// a block of the thread's own, made on its first op with a flops column asked for.
struct FlopsThread {
    NameCache names;
    OpenOps open;
};
LP_THREAD_LOCAL FlopsThread *t_flops;
void forget_flops() {
    t_flops = nullptr;
}
lp_thread_block g_flops_block = {sizeof(FlopsThread), forget_flops, {}, {}};

// The thread's state; null without memory for it, and then the op is not counted (asked again at
// the next op: an end whose start found none finds no open op, flops_op_end's n_unknown check).
FlopsThread *flops_thread() noexcept {
    if (!t_flops) { // once per thread: zeroed memory is an empty NameCache and OpenOps
        void *block = lp_thread_block_get(&g_flops_block);
        if (block) t_flops = new (block) FlopsThread();
    }
    return t_flops;
}

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
    FlopsThread *thread = flops_thread();
    if (!thread) return;
    OpenOps &open = thread->open;
    if (open.counted_depth) { // inside an op that counted: already included
        open.counted_depth++;
        return;
    }
    const char *name = fn.name();
    Formula f = thread->names.get(name);
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
    FlopsThread *thread = flops_thread();
    if (!thread) return;
    OpenOps &open = thread->open;
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
    if (t_flops) t_flops->open = OpenOps{}; // a thread that never counted has nothing to reset
}

} // namespace lps
