// modules.cpp: a TorchScript model's modules as layerprof numbers them: named_modules() in
// order, each with its parent, class, `self` object (what a frame or marker names) and the sizes
// of its parameters and buffers.
#include <unordered_set>

#include "torchscript.hpp"

// Lists named_modules() in order, records each module object's address (the `self` a frame
// runs on) and each path, so events map to module indices without building strings.
// Each module's parameters and buffers, own and with its subtree: every tensor is added to the
// module that holds it and to each of its ancestors, once per module however often it is reached
// (a set of TensorImpl per module), so shared tensors count once in a total. `all` is the
// named_modules() listing that m->modules was built from.
static void module_sizes(lps::TorchScript *m, const torch::jit::named_module_list &all) {
    size_t n = m->modules.size();
    std::vector<std::unordered_set<const void *>> seen(n), seen_self(n);
    size_t i = 0;
    for (const auto &item : all) {
        auto add = [&](const at::Tensor &t, bool param) {
            if (!t.defined()) return;
            const void *key = t.unsafeGetTensorImpl();
            uint64_t elems = static_cast<uint64_t>(t.numel()), bytes = t.nbytes();
            if (seen_self[i].insert(key).second) {
                m->modules[i].size.self_bytes += bytes;
                if (param) m->modules[i].size.self_params += elems;
            }
            for (int32_t a = static_cast<int32_t>(i); a >= 0; a = m->modules[a].parent) {
                if (!seen[a].insert(key).second) continue;
                m->modules[a].size.bytes += bytes;
                if (param) m->modules[a].size.params += elems;
            }
        };
        for (const auto &p : item.value.named_parameters(/*recurse=*/false))
            add(p.value, true);
        for (const auto &b : item.value.named_buffers(/*recurse=*/false))
            add(b.value, false);
        i++;
    }
}

// Whether code calls the module: its class has forward, or only overloads of it.
// @torch.jit._overload_method compiles each declared signature to forward__0, forward__1, ...
// and leaves no method named forward, yet calls dispatch to them (densenet's _DenseLayer, the
// RNNs). A container (ModuleList, ModuleDict) has neither.
static bool has_forward(const torch::jit::Module &module) {
    if (module.find_method("forward").has_value()) return true;
    for (const auto &method : module.get_methods())
        if (method.name().rfind("forward__", 0) == 0) return true;
    return false;
}

void lps::index_modules(lps::TorchScript *m) {
    auto all = m->module.named_modules();
    m->self_to_module.reserve(all.size());
    for (const auto &item : all) {
        lps::ModuleEntry e;
        e.path = item.name;
        auto type = item.value.type();
        e.class_name = type->name() ? type->name()->name() : std::string("Module");
        e.parent = lps::parent_of(m, e.path);
        e.has_forward = has_forward(item.value);
        int32_t index = (int32_t)m->modules.size();
        m->path_to_module.emplace(e.path, index);
        m->self_to_module.add(item.value._ivalue().get(), index);
        m->modules.push_back(std::move(e));
    }
    module_sizes(m, all);
}
