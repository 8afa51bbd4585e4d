// shim_internal.hpp: what the shim's translation units share. C++ only; never included by the core.
#pragma once

#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/error.h"
#include "lp_shim.h"

namespace lps {

// libtorch messages are several lines (a TorchScript traceback); the useful cause is one line: the
// last "RuntimeError:"-style line if there is one, else the first. A view into `what`: condensing
// must not allocate, since it runs while an exception (bad_alloc included) is being handled.
std::string_view condense(std::string_view what) noexcept;

// Sets the thread's message to libtorch's message condensed, and returns `status`.
int fail(int status, const char *what) noexcept;

// The boundary: every extern "C" body that can throw runs inside guard(), so no exception escapes
// and every failure leaves its message in the one channel (lp_error_set).
template <typename F> int guard(F &&body) noexcept {
    try {
        return body();
    } catch (const c10::Error &e) {
        return fail(LP_ERR_RUNTIME, e.what_without_backtrace());
    } catch (const std::bad_alloc &) {
        return lp_error_set(LP_ERR_NOMEM, "out of memory");
    } catch (const std::exception &e) {
        return fail(LP_ERR_RUNTIME, e.what());
    } catch (...) {
        return lp_error_set(LP_ERR_RUNTIME, "unknown C++ exception in libtorch");
    }
}

// A flat table with linear probing and Fibonacci hashing, filled once at load and read at every
// module call: a multiply, a shift and usually one slot, where std::unordered_map took a division
// by a prime and a node walk. `Key{}` marks an empty slot, so it is never a key.
template <typename Key> class FlatIndex {
  public:
    // Room for `n` keys at most half full (short probes).
    void reserve(size_t n) {
        size_t cap = 8;
        unsigned bits = 3;
        while (cap < 2 * n) {
            cap *= 2;
            bits++;
        }
        slots_.assign(cap, Slot{});
        shift_ = 64 - bits;
    }
    // Keeps the first index given for a key, as unordered_map::emplace did.
    void add(Key key, int32_t index) {
        for (size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
            if (slots_[i].key == key) return;
            if (slots_[i].key == Key{}) {
                slots_[i] = Slot{key, index};
                return;
            }
        }
    }
    int32_t find(Key key) const noexcept {
        if (slots_.empty()) return -1;
        for (size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
            if (slots_[i].key == key) return slots_[i].index;
            if (slots_[i].key == Key{}) return -1;
        }
    }

  private:
    struct Slot {
        Key key{};
        int32_t index = -1;
    };
    size_t slot_of(Key key) const noexcept {
        return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> shift_);
    }
    std::vector<Slot> slots_;
    unsigned shift_ = 61;
};

// Module objects (ivalue::Object*) -> module index.
struct ModuleIndex : FlatIndex<uintptr_t> {
    void add(const void *key, int32_t index) {
        FlatIndex::add((uintptr_t)key, index);
    }
    int32_t find(const void *key) const noexcept {
        return FlatIndex::find((uintptr_t)key);
    }
};

// A static call site's callee, by the module that makes the call (markers.cpp: site markers):
// (caller index, site) -> callee index. The key is never 0: sites are numbered from 1.
using SiteIndex = FlatIndex<uint64_t>;
inline uint64_t site_key(int32_t caller, uint32_t site) noexcept {
    return ((uint64_t)(uint32_t)caller << 32) | site;
}

struct ModuleEntry {
    std::string path, class_name;
    int32_t parent;
    bool has_forward;       // false for containers (ModuleList, ModuleDict): never called
    lps_module_size size{}; // its parameters and buffers (model.cpp: module_sizes)
};

// An AOTInductor package's loader and module map (aoti.cpp).
struct Pt2;
struct Pt2Deleter {
    void operator()(Pt2 *p) const noexcept;
};

} // namespace lps

namespace lps {
// A package's side of lps_profile_begin/_end (aoti.cpp sets it with the package): its kernels
// are the events. hooks.cpp calls it through the model, so that no file of the TorchScript side
// names a function of the package's: the shim's files call one way (tests/arch/check_rings.py).
struct PackageProfiling {
    void (*begin)(lps_model *m);
    void (*end)(lps_model *m) noexcept;
};
} // namespace lps

struct lps_model {
    torch::jit::Module module;
    c10::Device device{c10::kCPU};
    int optimize = 0;          // the graph executor's optimizer is on (plain and markers)
    bool markers = false;      // LPS_EXEC_MARKERS: call sites carry enter/exit markers
    bool mark_outputs = false; // LPS_EXEC_OUTPUTS: the exit markers take the call's output
    size_t marker_sites = 0;   // marker pairs inserted at load
    std::vector<lps::ModuleEntry> modules;
    lps::ModuleIndex self_to_module;     // ivalue::Object* -> index
    lps::SiteIndex site_callee;          // site markers: (caller, site) -> callee (markers.cpp)
    std::vector<std::string> site_types; // site markers: the callee's type, by site (census)
    uint64_t marker_tag = 0; // site markers carry it: whose sites they are (markers.cpp)
    // An attached module's root forward graph before split_unsampled (markers.cpp), put back
    // when it is detached; null when not split.
    std::shared_ptr<torch::jit::Graph> unsplit_root;
    std::unordered_map<std::string, int32_t> path_to_module; // at load: each module's parent
    std::string default_inputs;
    bool has_default_inputs = false;
    bool attached = false; // the program's module (lps_model_attach), not a file's
    // Undoes what attaching did (attach.cpp for a module, aoti_attach.cpp for a package's
    // loader); lps_model_free calls it, through the model, naming neither file.
    void (*detach)(lps_model *m) noexcept = nullptr;
    bool in_forward = false;    // between lps_forward_enter and lps_forward_leave
    bool saved_optimize = true; // the thread's optimizer setting before lps_forward_enter
    uint64_t forward_t0 = 0;    // lps_forward_enter's clock, or run_forward's

    // Profiling state (see hooks.cpp).
    lp_event_sink sink{};
    lp_event_sink live_sink{}; // lps_live_prepare: where live recorded forwards deliver
    unsigned hooks = 0;
    std::vector<at::CallbackHandle> handles;
    std::shared_ptr<c10::DebugInfoBase> reporter;
    std::unique_ptr<c10::DebugInfoGuard> reporter_guard;
    uint64_t last_forward_ns = 0; // the last forward call's wall time (lps_last_forward_ns)
    uint64_t last_synced_ns = 0;  // ... until its device work was done (lps_last_synced_ns)

    // An AOTInductor package (.pt2) instead of a TorchScript module (aoti.cpp): `module` is empty.
    std::unique_ptr<lps::Pt2, lps::Pt2Deleter> pt2;
    const lps::PackageProfiling *package_profiling = nullptr; // set with pt2
    const void *held_loader = nullptr; // an attached package: the program's loader
};

struct lps_inputs {
    std::vector<c10::IValue> values; // the forward's arguments, after self
    std::vector<at::Tensor> tensors; // by entry of lp_options.inputs: its tensor, or undefined
};

namespace lps {

// A call is a forward, as eager forward hooks count them: "forward", a traced model's later calls
// of one submodule ("forward1", "forward2"...), or an overload of a scripted forward
// ("forward__0", torch.jit._overload_method, as torchvision's DenseNet layers have). Another
// method (a ModuleList's __len__, RAFT's corr_block.index_pyramid) is time in its module, not a
// call of it.
inline bool is_forward_name(const char *name) noexcept {
    if (std::strncmp(name, "forward", 7) != 0) return false;
    name += 7;
    if (name[0] == '_' && name[1] == '_' && name[2]) name += 2;
    for (; *name; name++)
        if (*name < '0' || *name > '9') return false;
    return true;
}

// The op's own arguments. A boxed call from the interpreter hands RecordFunction its whole stack
// (values of the caller's frame first): the arguments are the last num_inputs() (the schema's).
inline c10::ArrayRef<const c10::IValue> op_inputs(const at::RecordFunction &fn) {
    auto in = fn.inputs();
    size_t n = fn.num_inputs();
    return n < in.size() ? in.slice(in.size() - n) : in;
}

// The thread's TorchScript optimizer setting, set only where it differs: libtorch 2.x logs every
// set (a JIT-log check that builds and frees strings, about 1,600 instructions on 2.15), a read is
// a thread-local load. Every forward sets it as its mode needs, and puts it back.
inline void set_optimize(bool on) {
    if (torch::jit::getGraphExecutorOptimize() != on) torch::jit::setGraphExecutorOptimize(on);
}
struct OptimizeScope {
    bool saved;
    explicit OptimizeScope(bool on) : saved(torch::jit::getGraphExecutorOptimize()) {
        set_optimize(on);
    }
    ~OptimizeScope() {
        set_optimize(saved);
    }
    OptimizeScope(const OptimizeScope &) = delete;
    OptimizeScope &operator=(const OptimizeScope &) = delete;
};

// How a model runs (LPS_EXEC_* and LPS_EXEC_OUTPUTS), as lps_model_load and lps_model_attach
// are told it.
inline void set_exec(lps_model *m, int exec) {
    m->optimize = (exec & 0xff) != LPS_EXEC_HOOKS;
    m->markers = (exec & 0xff) == LPS_EXEC_MARKERS;
    m->mark_outputs = m->markers && (exec & LPS_EXEC_OUTPUTS);
}

// The libtorch dtype of an input spec's (dtypes.cpp).
c10::ScalarType scalar_type(lp_dtype d) noexcept;

// The parent of the module at dotted `path` among those listed so far (the root for a top-level
// one or a path whose parent is not listed), -1 for the root itself (modules.cpp).
int32_t parent_of(const lps_model *m, const std::string &path);

// Calls f(const at::Tensor &) on every tensor of `v`: itself, or those inside its tuples, lists and
// dicts (in insertion order), depth first. Other values are skipped.
template <typename F> void for_each_tensor(const c10::IValue &v, F &&f) {
    if (v.isTensor()) {
        f(v.toTensor());
    } else if (v.isTuple()) {
        for (const auto &e : v.toTupleRef().elements())
            for_each_tensor(e, f);
    } else if (v.isList()) {
        for (const auto &e : v.toListRef())
            for_each_tensor(e, f);
    } else if (v.isGenericDict()) {
        for (const auto &kv : v.toGenericDict())
            for_each_tensor(kv.value(), f);
    }
}

// FLOPs of the ops (flops.cpp), from hooks.cpp's callbacks; reset clears the thread's open ops.
void flops_op_start(lps_model *m, const at::RecordFunction &fn) noexcept;
void flops_op_end(lps_model *m) noexcept;
void flops_reset() noexcept;

// "--input 2x3 --input '[2x3, 2x3]'": arguments in the --input syntax that fit the forward's
// signature (tensor shapes are placeholders), or "" when some type has no such syntax
// (input_example.cpp).
std::string example_inputs(const c10::FunctionSchema &schema);

// AOTInductor packages (aoti.cpp). A path ending in .pt2 is one. pt2_load fills m->modules and the
// default inputs from the package's layerprof map (or gives it one root without a map), and
// loads it on m->device: a status with a message. pt2_forward runs it once and returns its
// outputs as a list (throws like run_forward). Its m->package_profiling installs and removes the
// kernel callbacks that replace the module, marker, op and FLOPs ones for a package.
bool is_pt2_path(const char *path) noexcept;
int pt2_load(lps_model *m, const char *path);
c10::IValue pt2_forward(lps_model *m, lps_inputs *in);
// The package's input check (its map's constraints), for lps_inputs_create: LP_ERR_INVALID
// with the message naming the input, the dimension and the range it must be in.
int pt2_check_inputs(lps_model *m, lps_inputs *in);
// A package the program loaded itself (aoti_attach.cpp): its map read from `path`, `loader` (a
// torch::inductor::AOTIModelPackageLoader) runs it, its library's kernel-profile imports rebound
// (refused with a message when none is loaded, or it has none); detach puts them back.
// pt2_enter/pt2_leave bracket one forward on the calling thread (pt2_forward's, or the program's).
int pt2_attach(lps_model *m, void *loader, const char *path);
void pt2_detach(lps_model *m) noexcept;
void pt2_enter(lps_model *m) noexcept;
void pt2_leave(lps_model *m, bool completed) noexcept;

// A package's kernel boundaries without a RecordFunction callback (aoti_rebind.cpp). pt2_rebind
// points the kernel-profile imports (aoti_record_function_start/_end) of the loaded objects
// `which` names at wrappers that call libtorch's own functions, and the hooks pt2_imports_observe
// set: the objects loaded since `before` (loaded_objects(), taken before the package's loader was
// made), or the one whose path ends in "/" + `suffix` (the package library's name in the
// package). Returns how many slots it rebound (listed in `slots` when not NULL): 0 when the
// objects import neither (a package compiled without kernel profiling), -1 on a platform where
// this is not done. pt2_unbind puts back in each slot exactly what it held before, and only
// where the slot still holds layerprof's wrapper: whoever rebinds it after us keeps theirs.
struct RebindTarget {
    const std::set<std::string> *before = nullptr;
    std::string suffix;
    bool matches(const char *path) const;
};
std::set<std::string> loaded_objects();
struct ReboundSlot {
    void **slot;
    void *found; // what the slot held before the wrapper went in
};
int pt2_rebind(const RebindTarget &which, std::vector<ReboundSlot> *slots);
void pt2_unbind(const std::vector<ReboundSlot> &slots) noexcept;

// What the wrappers call besides libtorch's functions: a kernel's start (its name) and end.
// Set while a package is profiled through its imports, nullptr otherwise: a forward nobody
// records (a sampled session's unsampled one, a loader's run outside any session) then calls no
// function of layerprof's, only the wrapper's one load of the hook (docs/pt2.md).
void pt2_imports_observe(void (*on_start)(const char *name) noexcept,
                         void (*on_end)() noexcept) noexcept;

// Resets the thread's per-forward hook state (hooks.cpp).
void begin_forward(lps_model *m) noexcept;

// The model whose live forward this thread is recording (lps_live_enter), or null: the markers
// deliver to its live_sink, before looking at the process-wide profiled model (marker_calls.cpp).
extern thread_local lps_model *t_live;

// The model lps_profile_begin is profiling (one per process), and the core's last answer on this
// thread to whether it wants ops (an op's start is not delivered when it does not): hooks.cpp's
// callbacks and the markers (marker_calls.cpp) read both on every event. __thread, not
// thread_local: a plain TLS access from another file, with no initialisation wrapper to call.
extern std::atomic<lps_model *> g_active;
extern __thread bool t_ops_wanted;

// Lists the modules of m->module, root first, with their parents and `self` objects
// (modules.cpp).
void index_modules(lps_model *m);

// The start of attaching what a program holds (attach.cpp): LP_ERR_UNSUPPORTED unless the program
// was built against this libtorch (`what`: "a module", "a package's loader"), then a fresh model
// on `device` ("cpu" when NULL or empty) in *out. Inside guard() (it allocates).
int attached_model(const char *torch_build, const char *what, const char *device,
                   std::unique_ptr<lps_model> *out);

// Markers (markers.cpp puts them in the graphs; marker_calls.cpp delivers what they say).
// Puts an enter and an exit marker around every submodule call site of every method of `m`'s
// modules; returns the number of sites. Before any method of `m` has run.
size_t insert_markers(lps_model *m);
// Splits the root's forward graph of an attached model (after insert_markers, before its first
// run) into `if layerprof::recording(): <the marked body> else: <the body every call inlined, no
// marker>`: a forward the thread does not record runs the model as shipped, with no marker
// instruction (docs/sampling.md). remove_markers puts the graph back as it was.
void split_unsampled(lps_model *m);
// Whether the calling thread records the forward of the model tagged `tag` (a live forward, or
// the profiled model's in markers mode): the split's condition.
bool marker_recording(uint64_t tag) noexcept;
// Takes every marker out of the method graphs of `m`'s modules again (an attached module goes back
// to the program as it came, so that saving it writes no layerprof operator).
void remove_markers(lps_model *m);
// Enter markers in a graph (and its blocks and forked subgraphs).
size_t count_enter_markers(torch::jit::Graph &g);
// Calls of a submodule's method directly in a graph's blocks (what inlining removes).
size_t count_submodule_calls(torch::jit::Graph &g);
// Run by the marker instructions on the thread that runs the model: `self` is the module being
// called; `call` says whether the method is a forward (a call) or another method (time only).
void marker_enter(const c10::IValue &self, bool call) noexcept;
void marker_exit() noexcept;
// The same, for an exit marker that was given the call's output (LPS_EXEC_OUTPUTS).
void marker_exit_out(const c10::IValue &out) noexcept;
// Site markers (marker_calls.cpp): a call site whose callee is a fixed submodule of the calling
// module names it by `site`, resolved against the module the thread is in (the collector's
// innermost open module, lp_event_sink.current_module); `tag` is the
// model's marker_tag (another model's markers are not this one's calls).
void marker_enter_site(uint64_t tag, uint32_t site, bool call) noexcept;
void marker_leave(uint64_t tag) noexcept;
// The driver's enter and exit of each forward's root call in markers mode (the markers sit at
// call sites, and the root has none).
// `out`: the forward's output on exit, for its shape (LPS_EXEC_OUTPUTS); NULL when unknown.
void markers_root(lps_model *m, bool enter, uint64_t t, const c10::IValue *out = nullptr) noexcept;
} // namespace lps
