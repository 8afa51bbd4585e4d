// aoti_map.cpp: a package's layerprof map (data/layerprof/modules.json, written by
// python/layerprof_export.py): its modules, its kernels in the order the wrapper runs them, each
// placed in a module, the calls of each module per forward, the example inputs and their
// constraints (docs/pt2.md). Read once, at load or attach; nothing here runs per event.
#include "aoti_pt2.hpp"

#include <string>
#include <unordered_map>
#include <vector>

#if TORCH_VERSION_MAJOR >= 2
#include <caffe2/serialize/inline_container.h>
#include <jansson.h>

namespace {

using lps::Package;
using lps::Pt2;

constexpr const char k_map_record[] = "data/layerprof/modules.json";
constexpr const char k_map_format[] = "layerprof-pt2-map";
constexpr int k_map_version = 2; // python/layerprof_export.py's MAP_VERSION

const char *str_of(json_t *obj, const char *key) {
    const char *s = json_string_value(json_object_get(obj, key));
    return s ? s : "";
}

// Module `path` had work in the kernel at `kernel`, placed `depth` levels below the root in
// `placed`: when that is another module, the module's row names where its time went
// (lps_model_module_fused). Of several such kernels it names the one placed deepest, the most
// specific (resnet18's first kernel, placed in the root, touches every convolution and batch
// norm; a block's batch norm and ReLU went into the block's own kernel), the first of equals.
void note_fused(Package *m, const std::string &path, const std::string &placed, size_t kernel,
                size_t depth) {
    auto it = m->path_to_module.find(path);
    if (path == placed || it == m->path_to_module.end()) return;
    Pt2::FusedInto &f = m->pt2->fused_into[static_cast<size_t>(it->second)];
    if (f.kernel >= 0) f.more++;
    if (f.kernel >= 0 && depth <= f.depth) return;
    f.kernel = static_cast<int32_t>(kernel);
    f.module = placed;
    f.depth = depth;
}

// Whether kernels `a` and `b`, their chains equal down to `level`, ran inside one call of the
// module at `level`: the map's call keys say which call of it each kernel's nodes came from
// (torch.export names every call of a module: "cell", "cell@1", ...; a kernel whose nodes do not
// agree has a key of its own there, "!INDEX"); where either kernel has none (a map written
// before the keys), only a module the export saw called exactly once per forward is known to be
// one call.
bool one_call(const Pt2 &p, const Pt2::Kernel &a, const Pt2::Kernel &b, size_t level) {
    int32_t ka = a.call_keys[level], kb = b.call_keys[level];
    if (ka >= 0 && kb >= 0) return ka == kb;
    return p.calls[static_cast<size_t>(a.chain[level])] == 1;
}

// How many of `k`'s chain's first modules the kernel `before` it shares: down to the innermost
// module both ran inside one call of. Their frames stay open from one to the other, and the
// wrapper's code between them is that module's. A ModuleList, never called itself, holds no
// code of its own: the module looping over it does.
size_t shared_frames(const Pt2 &p, const Pt2::Kernel &before, const Pt2::Kernel &k) {
    size_t common = 0;
    while (common < before.chain.size() && common < k.chain.size() &&
           before.chain[common] == k.chain[common])
        common++;
    while (common > 0 && !one_call(p, before, k, common - 1))
        common--;
    return common;
}

// The kernel entry `v` of the map: its name, its row's label (the modules it fused), its module
// chain and the call of each module on it.
Pt2::Kernel read_kernel(Package *m, json_t *v, std::unordered_map<std::string, int32_t> &keys) {
    Pt2 &p = *m->pt2;
    Pt2::Kernel k;
    k.name = str_of(v, "name");
    k.label = k.name;
    std::string placed = str_of(v, "module");
    size_t j;
    json_t *f;
    json_t *fused = json_object_get(v, "fused");
    json_array_foreach(fused, j, f) {
        if (j == 3) { // a row stays readable: the first three, and how many more
            k.label += " + " + std::to_string(json_array_size(fused) - 3) + " more";
            break;
        }
        // Each fused module by its path below the placement ("bn1"), the placement as "self".
        std::string path = json_string_value(f) ? json_string_value(f) : "";
        if (path == placed)
            path = "self";
        else if (!placed.empty() && path.compare(0, placed.size() + 1, placed + ".") == 0)
            path = path.substr(placed.size() + 1);
        k.label += (j == 0 ? " [fuses " : " + ") + path;
    }
    if (json_array_size(fused)) k.label += "]";
    auto it = m->path_to_module.find(placed);
    int32_t at = it == m->path_to_module.end() ? 0 : it->second;
    for (int32_t n = at; n > 0; n = m->modules[static_cast<size_t>(n)].parent)
        k.chain.insert(k.chain.begin(), n);
    // Each chain module's call, a number per distinct key: -1 where the map has none.
    json_t *calls = json_object_get(v, "call_keys");
    for (int32_t n : k.chain) {
        const char *key = json_string_value(
            json_object_get(calls, m->modules[static_cast<size_t>(n)].path.c_str()));
        k.call_keys.push_back(
            key ? keys.emplace(key, static_cast<int32_t>(keys.size())).first->second : -1);
    }
    json_array_foreach(fused, j, f) // every one, though the label names three
        note_fused(m, json_string_value(f) ? json_string_value(f) : "", placed, p.kernels.size(),
                   k.chain.size());
    if (!p.kernels.empty()) k.shared = shared_frames(p, p.kernels.back(), k);
    return k;
}

} // namespace

namespace lps {

std::string pt2_read_map(const char *path, bool *found) {
    *found = false;
    caffe2::serialize::PyTorchStreamReader reader{std::string(path)};
    if (!reader.hasRecord(k_map_record)) return {};
    auto [data, size] = reader.getRecord(k_map_record);
    *found = true;
    return std::string(static_cast<const char *>(data.get()), size);
}

int pt2_parse_map(Package *m, const std::string &text, const char *path) {
    json_error_t err;
    json_t *root = json_loadb(text.data(), text.size(), 0, &err);
    if (!root) {
        return lp_error_set(LP_ERR_MODEL, "'%s': layerprof's module map is not JSON (%s, line %d)",
                            path, err.text, err.line);
    }
    std::unique_ptr<json_t, void (*)(json_t *)> own(root, json_decref);
    json_t *mods = json_object_get(root, "modules"), *kers = json_object_get(root, "kernels");
    if (std::strcmp(str_of(root, "format"), k_map_format) != 0 || !json_is_array(mods) ||
        !json_is_array(kers) || json_array_size(mods) == 0 ||
        json_integer_value(json_object_get(root, "version")) != k_map_version) {
        return lp_error_set(LP_ERR_MODEL,
                            "'%s': layerprof's module map is not one this layerprof reads (format "
                            "%s version %d); export the package again with "
                            "python/layerprof_export.py",
                            path, k_map_format, k_map_version);
    }
    Pt2 &p = *m->pt2;
    // Maps written before the export counted calls with forward hooks have neither key.
    p.calls_hooked = std::strcmp(str_of(root, "calls_from"), "forward hooks") == 0;
    p.calls_without_nodes = json_array_size(json_object_get(root, "calls_without_nodes"));
    size_t i;
    json_t *v;
    json_array_foreach(mods, i, v) {
        lps::ModuleEntry e;
        e.path = str_of(v, "path");
        e.class_name = str_of(v, "class");
        e.parent = i > 0 ? lps::parent_of(m, e.path) : -1;
        if (i == 0 && !e.path.empty()) {
            return lp_error_set(LP_ERR_MODEL, "'%s': the module map does not start with the root",
                                path);
        }
        e.has_forward = json_is_true(json_object_get(v, "has_forward"));
        auto num = [&](const char *key) {
            json_int_t n = json_integer_value(json_object_get(v, key));
            return n > 0 ? static_cast<uint64_t>(n) : uint64_t{0};
        };
        e.size =
            lps_module_size{num("self_params"), num("params"), num("self_bytes"), num("bytes")};
        m->path_to_module.emplace(e.path, static_cast<int32_t>(m->modules.size()));
        m->modules.push_back(std::move(e));
        p.calls.push_back(num("calls"));
    }
    p.fused_into.resize(m->modules.size());
    std::unordered_map<std::string, int32_t> keys; // the calls' keys, numbered as first seen
    json_array_foreach(kers, i, v) p.kernels.push_back(read_kernel(m, v, keys));
    // A module with kernels of its own has its own time on its row: the marker is for those
    // whose work all went into other modules' kernels (the rows that read 0 us).
    for (const Pt2::Kernel &k : p.kernels)
        p.fused_into[static_cast<size_t>(k.chain.empty() ? 0 : k.chain.back())] = {};
    json_array_foreach(json_object_get(root, "inputs"), i, v)
        p.inputs.push_back(json_string_value(v) ? json_string_value(v) : "");
    for (const auto &s : p.inputs)
        m->default_inputs += s + "\n";
    m->has_default_inputs = !p.inputs.empty();
    std::vector<const char *> examples;
    for (const auto &s : p.inputs)
        examples.push_back(s.c_str());
    lp_pt2_shapes *shapes = nullptr;
    int rc = lp_pt2_shapes_read(&shapes, root, mods, examples.data(), examples.size(), path);
    p.shapes.reset(shapes);
    return rc;
}

} // namespace lps

#endif // TORCH_VERSION_MAJOR >= 2
