// aoti.cpp: AOTInductor packages (.pt2): loading one with its module map, running it, and timing
// its kernels into the module tree (docs/pt2.md).
//
// A compiled package has no module boundaries left: its wrapper runs a fixed sequence of kernels.
// Compiled with cpp.enable_kernel_profile, each kernel call is a RecordFunction named after the
// kernel ("graph_0_cpp_fused_relu_2", "aoti_torch_cpu_convolution"). python/layerprof_export.py
// stores in the package (data/layerprof/modules.json) the kernels in the order the wrapper runs
// them, each with the module it is placed in, and each module's calls per forward (from the
// exported program's nn_module_stack). The callbacks below take the package's kernels in that
// order: the k-th kernel call of a forward is the map's k-th kernel when its name agrees. Its time
// goes to its module as a method frame (time, not a call: the calls come from the map, added once
// per forward), the ATen ops an extern kernel runs inside it become its op rows. The frames of the
// modules a kernel shares with the map's next one, down to the innermost that both ran inside one
// call of (aoti_map.cpp), stay open between the two, so that the wrapper's code there is timed in
// that module.
#include "aoti_pt2.hpp"

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/clock.h"

#if TORCH_VERSION_MAJOR >= 2
#include <c10/core/InferenceMode.h>
#include <caffe2/serialize/inline_container.h>
#endif

namespace lps {

bool is_pt2_path(const char *path) noexcept {
    size_t n = std::strlen(path);
    return n >= 4 && std::strcmp(path + n - 4, ".pt2") == 0;
}

} // namespace lps

namespace {

using lps::Package;
using lps::Pt2;

#if TORCH_VERSION_MAJOR >= 2

// The active profiled package (one profiled model per process, as hooks.cpp's g_active).
std::atomic<Package *> g_pt2{nullptr};

// Per thread, for the forward running on it. One thread_local, read through one reference per
// function: in a shared library each thread_local of its own costs a __tls_get_addr call at each
// use (callgrind counted 9 to 11 per kernel's end with the fields apart).
struct KernelThread {
    size_t next = 0; // the next kernel's index in the map
    int depth = 0;   // how deep inside a kernel the callbacks are (0: between kernels)
    // How many module frames of the last kernel's chain are open: all of them inside it; between
    // kernels those it shares with the map's next one.
    size_t chain = 0;
    uint64_t gap = 0;        // when the last kernel ended
    bool top_wanted = false; // whether the core wants ops in the innermost open frame
    bool row = false;        // the kernel's own op row was opened
    bool wanted = false;     // ops are wanted where the callbacks are
    int skip = 0;            // op rows being skipped (the core did not want them)
    // The package whose forward runs on this thread. Kernels run on it; the ATen ops of an extern
    // kernel may run parts on libtorch's intra-op threads, which carry the callbacks too but are
    // none of a kernel's frames: their events are not the package's kernels.
    const lps_model *driver = nullptr;
    // The module of the kernel open or last run (0: the root, or a kernel out of the map's
    // order), and whether that kernel was the map's.
    int32_t module = 0;
    bool placed = false;
};
LP_THREAD_LOCAL KernelThread t_kernel;

// The container runner's own frame around the whole run: neither a kernel nor inside one.
bool is_runner_frame(const char *name) {
    return std::strncmp(name, "AOTIModelContainerRunner", 24) == 0;
}

bool ends_with(const char *s, const std::string &tail) {
    size_t n = std::strlen(s);
    return n >= tail.size() && std::memcmp(s + n - tail.size(), tail.data(), tail.size()) == 0;
}

// Op rows of kernels that have no entry in a map: the name a kernel's RecordFunction carries is
// not a string that lives on (the rows are keyed by the name's pointer), so they share a label.
constexpr const char k_unmapped[] = "AOTInductor kernel (no module map)";
constexpr const char k_unplaced[] = "AOTInductor kernel (out of the map's order)";

// The map's entry for this forward's next kernel call, or nullptr when the call does not match
// it (a package run differently than it was exported: the call is timed under the root). A
// name compare, not a pointer test: AOTInductor's names are not interned.
const Pt2::Kernel *next_kernel(KernelThread &th, Pt2 &p, const char *name) {
    size_t k = th.next++;
    if (k < p.kernels.size() && ends_with(name, p.kernels[k].name)) return &p.kernels[k];
    if (p.has_map) p.unplaced++;
    return nullptr;
}

int32_t module_of(const Pt2::Kernel *k) {
    return k && !k->chain.empty() ? k->chain.back() : 0;
}

// --memory: which module the wrapper's allocations and frees are charged to from now on
// (event_sink.h's pkg_memory_to): the producer of a buffer is the kernel that runs next, the last
// consumer of a buffer freed between kernels the one that ran last (docs/pt2.md, "Memory").
void memory_to(lps_model *m, int32_t alloc_module, int32_t free_module) {
    if ((m->hooks & LPS_HOOK_MEMORY) && m->sink.pkg_memory_to)
        m->sink.pkg_memory_to(m->sink.ctx, alloc_module, free_module);
}

// The module of the map's next kernel in this forward, 0 past the last one.
int32_t next_module(const KernelThread &th, const Pt2 &p) {
    return th.next < p.kernels.size() ? module_of(&p.kernels[th.next]) : 0;
}

// Closes the open module frames of the kernels' chains down to `keep` at `t`.
void close_chain(KernelThread &th, Package *m, size_t keep, uint64_t t) noexcept {
    for (; th.chain > keep; th.chain--)
        th.top_wanted = m->sink.call_exit(m->sink.ctx, t) != 0;
}

// A kernel's record, or an op's inside an extern kernel, starting: from the callback, or from
// the package's rebound imports (aoti_rebind.cpp), which see only the kernels. The module frames
// a kernel shares with the one before it are open already (frame_end): consecutive kernels of a
// module enter it once, and the wrapper's code between them is timed in it.
void frame_start(KernelThread &th, Package *m, const char *name) noexcept {
    if (th.depth == 0) {
        if (is_runner_frame(name)) return;
        th.depth = 1;
        const Pt2::Kernel *k = next_kernel(th, *m->pt2, name);
        th.module = module_of(k);
        th.placed = k != nullptr;
        memory_to(m, th.module, th.module); // before the clock: not the kernel's time
        uint64_t t = lp_now_ns();
        // The frames left open are those the map's next kernel shares: this one, when placed (no
        // frame closes). Another kernel shares none: the gap since the last one is the root's.
        close_chain(th, m, k ? k->shared : 0, th.gap);
        size_t depth = k ? k->chain.size() : 0;
        bool wanted = th.top_wanted;
        for (size_t i = th.chain; i < depth; i++)
            wanted = m->sink.method_enter(m->sink.ctx, k->chain[i], t) != 0;
        th.chain = depth;
        th.top_wanted = wanted;
        th.row = wanted;
        th.skip = 0;
        const char *row = k ? k->label.c_str() : m->pt2->has_map ? k_unplaced : k_unmapped;
        th.wanted = wanted && m->sink.op_start(m->sink.ctx, row, 0, t) != 0;
        return;
    }
    th.depth++;
    if (th.skip || !th.wanted) { // inside an op the core does not want: so is this one
        th.skip++;
        return;
    }
    th.wanted = m->sink.op_start(m->sink.ctx, name, 0, lp_now_ns()) != 0;
}

void frame_end(KernelThread &th, Package *m) noexcept {
    if (th.depth == 0) return; // the runner's frame
    uint64_t t = lp_now_ns();
    if (--th.depth > 0) {
        if (th.skip)
            th.skip--;
        else
            m->sink.op_end(m->sink.ctx, t);
        return;
    }
    if (th.row) m->sink.op_end(m->sink.ctx, t);
    // The module frames the map's next kernel shares stay open (after a kernel out of the map's
    // order there are none): it closes them itself if another kernel runs instead.
    const Pt2 &p = *m->pt2;
    close_chain(th, m, th.placed && th.next < p.kernels.size() ? p.kernels[th.next].shared : 0, t);
    th.gap = t;
    th.wanted = th.top_wanted;
    th.row = false;
    // After a kernel out of the map's order, the map's next one may not be what runs next.
    memory_to(m, th.placed ? next_module(th, p) : 0, th.module);
}

// Whether the kernels come through the package's rebound imports in this profile (no callback).
std::atomic<bool> g_by_imports{false};

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &fn) noexcept {
    Package *m = g_pt2.load(std::memory_order_relaxed);
    KernelThread &th = t_kernel;
    if (m && th.driver == m) frame_start(th, m, fn.name());
    return nullptr;
}

void on_end(const at::RecordFunction &, at::ObserverContext *) noexcept {
    Package *m = g_pt2.load(std::memory_order_relaxed);
    KernelThread &th = t_kernel;
    if (m && th.driver == m) frame_end(th, m); // not another thread's op
}

// A tensor's dtype as the map's example specs name it ("float32", "int64": lp_dtype_name's, else
// libtorch's), a string that lives on.
const char *dtype_of(const at::Tensor &t) {
    for (int d = LP_DTYPE_FLOAT32; d <= LP_DTYPE_BOOL; d++)
        if (lps::scalar_type(static_cast<lp_dtype>(d)) == t.scalar_type())
            return d == LP_DTYPE_FLOAT32 ? "float32" : lp_dtype_name(static_cast<lp_dtype>(d));
    return c10::toString(t.scalar_type());
}

// The package's input check (collect/pt2_shapes.c): LP_OK when `args` fit its constraints, else
// LP_ERR_INVALID with the message.
int check_inputs(Pt2 &p, const std::vector<at::Tensor> &args) {
    std::vector<lp_pt2_input> desc;
    desc.reserve(args.size());
    for (const auto &t : args)
        desc.push_back({t.sizes().data(), t.sizes().size(), dtype_of(t)});
    return lp_pt2_shapes_check(p.shapes.get(), desc.data(), desc.size());
}

std::vector<at::Tensor> package_args(lps_inputs *in) {
    std::vector<at::Tensor> args; // a package takes tensors: the example's, flattened
    for (const auto &v : in->values)
        lps::for_each_tensor(v, [&](const at::Tensor &t) { args.push_back(t); });
    return args;
}

#endif // TORCH_VERSION_MAJOR >= 2

} // namespace

namespace lps {

#if TORCH_VERSION_MAJOR >= 2

void pt2_import_start(const char *name) noexcept;
void pt2_import_end() noexcept;

int pt2_load(Package *m, const char *path) {
    m->pt2.reset(new Pt2);
    Pt2 &p = *m->pt2;
    bool found = false;
    std::string text;
    try {
        text = pt2_read_map(path, &found);
    } catch (const std::exception &e) {
        std::string_view why = condense(e.what());
        return lp_error_set(LP_ERR_MODEL, "cannot load '%s' as an AOTInductor package: %.*s", path,
                            static_cast<int>(why.size()), why.data());
    }
    if (found) {
        if (int rc = pt2_parse_map(m, text, path)) return rc;
        p.has_map = true;
    } else {
        // No map: one root, every kernel under it. The package's own input check is the only one
        // there is then (without it a wrong shape reads past a buffer); the map's is ours.
        m->modules.push_back(ModuleEntry{"", "AOTInductorModel", -1, true, {}});
        p.calls.push_back(1);
        setenv("AOTI_RUNTIME_CHECK_INPUTS", "1", 0);
    }
    try {
        std::set<std::string> before = loaded_objects();
        p.loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            std::string(path), "model", false, 1,
            m->device.is_cuda() ? m->device.index() : c10::DeviceIndex(-1));
        p.runner = p.loader.get();
        RebindTarget loaded_now;
        loaded_now.before = &before; // the package's library
        p.rebound = pt2_rebind(loaded_now, nullptr) > 0;
    } catch (const std::exception &e) {
        std::string_view why = condense(e.what());
        return lp_error_set(LP_ERR_MODEL, "cannot load '%s' as an AOTInductor package: %.*s", path,
                            static_cast<int>(why.size()), why.data());
    }
    return LP_OK;
}

void pt2_enter(Package *m) noexcept {
    KernelThread &th = t_kernel;
    th.next = 0;
    th.depth = 0;
    th.chain = 0; // th.module and th.placed are set by each kernel's start before they are read
    m->pt2->shapes_now = m->pt2->shapes_next; // the shapes given count for this forward only
    m->pt2->shapes_next = false;
    uint64_t t0 = lp_now_ns();
    m->forward_t0 = t0;
    if (g_pt2.load(std::memory_order_relaxed) == m) {
        th.wanted = th.top_wanted = m->sink.call_enter(m->sink.ctx, 0, t0) != 0;
        memory_to(m, next_module(th, *m->pt2), 0); // the buffers of the first kernel
    }
    th.driver = m;
}

void pt2_leave(Package *m, bool completed) noexcept {
    KernelThread &th = t_kernel;
    th.driver = nullptr;
    uint64_t t1 = lp_now_ns();
    m->last_forward_ns = t1 - m->forward_t0;
    if (!completed || g_pt2.load(std::memory_order_relaxed) != m) return;
    close_chain(th, m, 0,
                th.gap); // kept for a map's kernel that did not run: the gap is the root's
    Pt2 &p = *m->pt2;
    if (th.next != p.kernels.size() && p.has_map) p.unplaced++;
    if (m->sink.add_calls)
        for (size_t i = 1; i < p.calls.size(); i++)
            if (p.calls[i]) m->sink.add_calls(m->sink.ctx, static_cast<int32_t>(i), p.calls[i]);
    // The figures at the shapes the input check bound for this forward (none: none delivered).
    if (p.has_map && p.shapes_now)
        lp_pt2_shapes_deliver(p.shapes.get(), &m->sink, (m->hooks & LPS_HOOK_FLOPS) != 0,
                              m->mark_outputs);
    th.wanted = m->sink.call_exit(m->sink.ctx, t1) != 0;
}

int pt2_attach(Package *m, void *loader, const char *path) {
    m->pt2.reset(new Pt2);
    Pt2 &p = *m->pt2;
    bool found = false;
    std::string text, library;
    try {
        text = pt2_read_map(path, &found);
        caffe2::serialize::PyTorchStreamReader reader{std::string(path)};
        for (const std::string &record : reader.getAllRecords()) // the package's compiled model
            if (record.size() > 11 && record.compare(record.size() - 11, 11, ".wrapper.so") == 0)
                library = record.substr(record.rfind('/') + 1);
    } catch (const std::exception &e) {
        std::string_view why = condense(e.what());
        return lp_error_set(LP_ERR_MODEL, "cannot read '%s' as an AOTInductor package: %.*s", path,
                            static_cast<int>(why.size()), why.data());
    }
    if (!found)
        return lp_error_set(LP_ERR_MODEL,
                            "'%s' holds no layerprof module map: attaching to a package needs one "
                            "exported with python/layerprof_export.py (the map places its kernels "
                            "in modules; give the path the loader was loaded from as the model)",
                            path);
    if (int rc = pt2_parse_map(m, text, path)) return rc;
    p.has_map = true;
    p.runner = static_cast<torch::inductor::AOTIModelPackageLoader *>(loader);
    // The loader's library is loaded under its name in the package (in a directory of its own).
    RebindTarget named;
    named.suffix = library;
    int rebound = library.empty() ? 0 : pt2_rebind(named, &p.slots);
    if (rebound == 0)
        return lp_error_set(
            LP_ERR_MODEL,
            "no library loaded in this process is the compiled model of '%s' "
            "with kernel profiling: load the loader from that path before "
            "attaching it, from a package exported by python/layerprof_export.py "
            "(which compiles with cpp.enable_kernel_profile: without it a package's "
            "kernels cannot be seen)",
            path);
    p.rebound = rebound > 0; // -1: no rebinding on this platform: the callbacks see the kernels
    return LP_OK;
}

void pt2_detach(Package *m) noexcept {
    if (m->pt2) pt2_unbind(m->pt2->slots);
}

c10::IValue pt2_forward(Package *m, lps_inputs *in) {
    Pt2 &p = *m->pt2;
    std::vector<at::Tensor> args = package_args(in);
    if (p.has_map) {
        // AOTInductor does not check its inputs: a shape it was not compiled for reads past its
        // buffers. lps_inputs_create checked them already; this binds the shapes' symbols.
        if (check_inputs(p, args) != LP_OK) throw std::runtime_error(lp_error_last());
        p.shapes_next = true;
    }
    c10::InferenceMode guard;
    pt2_enter(m);
    std::vector<at::Tensor> out;
    try {
        out = p.runner->run(args);
    } catch (...) {
        pt2_leave(m, false);
        throw;
    }
    pt2_leave(m, true);
    c10::List<at::Tensor> list;
    for (auto &t : out)
        list.push_back(std::move(t));
    return c10::IValue(list);
}

int pt2_check_inputs(Package *m, lps_inputs *in) {
    if (!m->pt2 || !m->pt2->has_map) return LP_OK;
    return check_inputs(*m->pt2, package_args(in));
}

void pt2_profile_begin(Package *m) {
    g_pt2.store(m); // profile.cpp's lps_profile_begin made it the one profiled model
    t_kernel.depth = 0;
    // The ATen ops inside extern kernels are wanted only as --events rows: without them the
    // rebound imports see every kernel, and no op builds a record (docs/pt2.md).
    // LAYERPROF_PT2_KERNELS=callback keeps the callback, to measure one against the other.
    const char *how = std::getenv("LAYERPROF_PT2_KERNELS");
    bool callback = how && std::strcmp(how, "callback") == 0;
    if (m->pt2->rebound && !(m->hooks & LPS_HOOK_OPS) && !callback) {
        g_by_imports.store(true, std::memory_order_relaxed);
        pt2_imports_observe(pt2_import_start, pt2_import_end);
        return;
    }
    m->handles.push_back(at::addThreadLocalCallback(at::RecordFunctionCallback(on_start, on_end)));
}

void pt2_profile_end(Package *m) noexcept {
    // The hooks go before the package is released: a package profiled next, from another thread,
    // sets its own after taking g_pt2, and they stay.
    if (g_pt2.load() != m) return;
    pt2_imports_observe(nullptr, nullptr);
    g_by_imports.store(false, std::memory_order_relaxed);
    g_pt2.store(nullptr);
}

void pt2_import_start(const char *name) noexcept {
    Package *m = g_pt2.load(std::memory_order_relaxed);
    KernelThread &th = t_kernel;
    if (m && th.driver == m && g_by_imports.load(std::memory_order_relaxed))
        frame_start(th, m, name);
}

void pt2_import_end() noexcept {
    Package *m = g_pt2.load(std::memory_order_relaxed);
    KernelThread &th = t_kernel;
    if (m && th.driver == m && g_by_imports.load(std::memory_order_relaxed)) frame_end(th, m);
}

#else // libtorch 1.x: no AOTInductor

int pt2_load(Package *, const char *path) {
    return lp_error_set(LP_ERR_UNSUPPORTED,
                        "'%s' is an AOTInductor package: running it needs layerprof built with "
                        "libtorch 2.x (this one has libtorch %d.%d)",
                        path, TORCH_VERSION_MAJOR, TORCH_VERSION_MINOR);
}

c10::IValue pt2_forward(Package *, lps_inputs *) {
    throw std::runtime_error("AOTInductor packages need libtorch 2.x");
}

int pt2_check_inputs(Package *, lps_inputs *) {
    return LP_OK;
}
int pt2_attach(Package *, void *, const char *path) {
    return pt2_load(nullptr, path);
}
void pt2_detach(Package *) noexcept {}
void pt2_enter(Package *) noexcept {}
void pt2_leave(Package *, bool) noexcept {}
void pt2_profile_begin(Package *) {}
void pt2_profile_end(Package *) noexcept {}

#endif

} // namespace lps
