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
#include "base/thread_local.h"
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
    lps_module_size size{}; // its parameters and buffers (modules.cpp, or a package's map)
};

struct Backend;

} // namespace lps

// What every model has, whichever backend runs it: what the common entry points (model.cpp,
// inputs.cpp, profile.cpp) and the core read. A backend's own state is in the type it derives
// (torchscript.hpp's lps::TorchScript, aoti_pt2.hpp's lps::Package), which only that backend's
// files name; its table's `free` deletes it, so nothing else deletes an lps_model.
struct lps_model {
    const lps::Backend *backend; // what runs it (set by the backend that made it)
    c10::Device device{c10::kCPU};
    // The out_shape column asked for, and the backend can say it (TorchScript's markers with
    // LPS_EXEC_OUTPUTS, a package's map): both backends deliver output shapes to the sink.
    bool mark_outputs = false;
    // Both backends list modules: TorchScript from the module's tree, a package from its map.
    std::vector<lps::ModuleEntry> modules;
    std::unordered_map<std::string, int32_t> path_to_module; // at load: each module's parent
    std::string default_inputs;
    bool has_default_inputs = false;
    bool attached = false;   // the program's module or loader (lps_model_attach*), not a file's
    bool in_forward = false; // between lps_forward_enter and lps_forward_leave
    uint64_t forward_t0 = 0; // the forward's start, for lps_last_synced_ns (either backend's)

    // Profiling state (profile.cpp): the sink both backends deliver to, the hooks asked for, and
    // what is removed at lps_profile_end: the RecordFunction callbacks either backend added and
    // the memory reporter, which is the same for both.
    lp_event_sink sink{};
    unsigned hooks = 0;
    std::vector<at::CallbackHandle> handles;
    std::shared_ptr<c10::DebugInfoBase> reporter;
    std::unique_ptr<c10::DebugInfoGuard> reporter_guard;
    uint64_t last_forward_ns = 0; // the last forward call's wall time (lps_last_forward_ns)
    uint64_t last_synced_ns = 0;  // ... until its device work was done (lps_last_synced_ns)

  protected:
    explicit lps_model(const lps::Backend *b) : backend(b) {}
    ~lps_model() = default; // the backend's `free` deletes the whole model
    lps_model(const lps_model &) = delete;
    lps_model &operator=(const lps_model &) = delete;
};

namespace lps {

// A backend's operations: what the common entry points ask of the model whatever runs it. Called
// once per load, forward or profile, never per event: each backend's callbacks or markers find
// their own state without this table. Every operation that may throw is called inside guard().
struct Backend {
    enum class Kind { torchscript, package };
    Kind kind; // for a backend's own entry points to check the model is theirs (torchscript())
    // Whether `path` is this backend's file (model.cpp asks the package first: TorchScript takes
    // any other file), and loading it on `device` (run as `exec` says) into *out.
    bool (*opens)(const char *path) noexcept;
    int (*load)(const char *path, c10::Device device, int exec, lps_model **out);
    // The forward's declared argument types, self first, to type structured inputs by (empty: a
    // package's inputs are tensors, in the order it was exported with); and the inputs' check
    // once made (a package's map's constraints: LP_ERR_INVALID with the message).
    std::vector<c10::TypePtr> (*declared_inputs)(lps_model *m);
    int (*check_inputs)(lps_model *m, lps_inputs *in);
    // Runs one forward on the calling thread, and returns its outputs (throws on failure).
    c10::IValue (*forward)(lps_model *m, lps_inputs *in);
    // Brackets a forward the program runs itself (lps_forward_enter/_leave); `t1` is the leave's
    // clock, read first.
    void (*forward_enter)(lps_model *m) noexcept;
    void (*forward_leave)(lps_model *m, bool completed, uint64_t t1) noexcept;
    // Installs the backend's own event sources once the model is the profiled one (the memory
    // reporter is the common code's), and stops them; handles go in m->handles.
    void (*profile_begin)(lps_model *m);
    void (*profile_end)(lps_model *m) noexcept;
    // Undoes an attach (m->attached) and deletes the model.
    void (*free)(lps_model *m) noexcept;
};

// The two backends (torchscript.cpp, aoti_backend.cpp).
extern const Backend k_torchscript;
extern const Backend k_package;

} // namespace lps

struct lps_inputs {
    std::vector<c10::IValue> values; // the forward's arguments, after self
    std::vector<at::Tensor> tensors; // by entry of lp_options.inputs: its tensor, or undefined
};

namespace lps {

// The op's own arguments. A boxed call from the interpreter hands RecordFunction its whole stack
// (values of the caller's frame first): the arguments are the last num_inputs() (the schema's).
inline c10::ArrayRef<const c10::IValue> op_inputs(const at::RecordFunction &fn) {
    auto in = fn.inputs();
    size_t n = fn.num_inputs();
    return n < in.size() ? in.slice(in.size() - n) : in;
}

// The libtorch dtype of an input spec's (dtypes.cpp).
c10::ScalarType scalar_type(lp_dtype d) noexcept;

// The parent of the module at dotted `path` among those listed so far (the root for a top-level
// one or a path whose parent is not listed), -1 for the root itself: both backends list their
// modules by path (TorchScript's modules.cpp, a package's map in aoti_map.cpp).
inline int32_t parent_of(const lps_model *m, const std::string &path) {
    if (path.empty()) return -1;
    size_t dot = path.rfind('.');
    auto it = m->path_to_module.find(dot == std::string::npos ? "" : path.substr(0, dot));
    return it == m->path_to_module.end() ? 0 : it->second;
}

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

// The start of attaching what a program holds (either backend's lps_model_attach*):
// LP_ERR_UNSUPPORTED unless the program was built against this libtorch (`what`: "a module", "a
// package's loader"; version.cpp), and the device it is attached on, "cpu" when NULL or empty
// (cuda.cpp).
int check_torch_build(const char *torch_build, const char *what) noexcept;
int attach_device(const char *device, c10::Device *out) noexcept;

} // namespace lps
