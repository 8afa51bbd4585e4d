// torchscript.hpp: the TorchScript backend's state and what its files share (torchscript.cpp
// loads, runs and attaches; modules.cpp lists the modules; markers.cpp and marker_calls.cpp put
// and run the markers; hooks.cpp holds the callbacks; attach.cpp wraps a program's module).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "shim_internal.hpp"

namespace lps {

// A TorchScript model: the common state, and what only TorchScript has. Here, not in lps_model,
// because no package reads it: the module and how its executor runs, the markers and their
// tables, the live sink (live forwards are markers mode only). The hot path (hooks.cpp's
// callbacks, the markers) reads these fields through g_active and t_live, which hold a
// TorchScript: no indirection beyond the one lps_model had.
struct TorchScript : lps_model {
    TorchScript() : lps_model(&k_torchscript) {}
    torch::jit::Module module;
    int optimize = 0;                    // the graph executor's optimizer is on (plain and markers)
    bool markers = false;                // LPS_EXEC_MARKERS: call sites carry enter/exit markers
    size_t marker_sites = 0;             // marker pairs inserted at load
    ModuleIndex self_to_module;          // ivalue::Object* -> index
    SiteIndex site_callee;               // site markers: (caller, site) -> callee (markers.cpp)
    std::vector<std::string> site_types; // site markers: the callee's type, by site (census)
    uint64_t marker_tag = 0; // site markers carry it: whose sites they are (markers.cpp)
    // An attached module's root forward graph before split_unsampled (markers.cpp), put back
    // when it is detached; null when not split.
    std::shared_ptr<torch::jit::Graph> unsplit_root;
    bool saved_optimize = true; // the thread's optimizer setting before lps_forward_enter
    lp_event_sink live_sink{};  // lps_live_prepare: where live recorded forwards deliver
};

// The model as a TorchScript one, or null when another backend runs it: for the entry points
// only TorchScript has (the markers' census, live forwards).
inline TorchScript *torchscript(lps_model *m) noexcept {
    return m->backend->kind == Backend::Kind::torchscript ? static_cast<TorchScript *>(m) : nullptr;
}

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

// The thread's TorchScript optimizer setting, set only where it differs: libtorch 2.x logs every
// set (a JIT-log check that builds and frees strings, about 1,600 instructions on 2.15), a read is
// a thread-local load. Every forward sets it as its mode needs, and puts it back.
// Never throws: its callers are noexcept (a forward's enter and leave, a scope's destructor), and
// the set's log may run out of memory; the setting may then stay as it was.
inline void set_optimize(bool on) noexcept {
    if (torch::jit::getGraphExecutorOptimize() == on) return;
    try {
        torch::jit::setGraphExecutorOptimize(on);
    } catch (...) {
    }
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
inline void set_exec(TorchScript *m, int exec) {
    m->optimize = (exec & 0xff) != LPS_EXEC_HOOKS;
    m->markers = (exec & 0xff) == LPS_EXEC_MARKERS;
    m->mark_outputs = m->markers && (exec & LPS_EXEC_OUTPUTS);
}

// Resets the thread's per-forward hook state (hooks.cpp).
void begin_forward(TorchScript *m) noexcept;

// The model whose live forward this thread is recording (lps_live_enter), or null: the markers
// deliver to its live_sink, before looking at the process-wide profiled model (marker_calls.cpp).
extern __thread LP_TLS_MODEL TorchScript *t_live;

// The TorchScript model lps_profile_begin is profiling (one per process; set by this backend's
// profile_begin, so that it is never a package), and the core's last answer on this thread to
// whether it wants ops (an op's start is not delivered when it does not): hooks.cpp's callbacks
// and the markers (marker_calls.cpp) read both on every event. __thread, not thread_local: a
// plain TLS access from another file, with no initialisation wrapper to call (the same for
// t_live); in the initial-exec model, as every thread-local of the library (thread_local.h).
extern std::atomic<TorchScript *> g_active;
extern __thread LP_TLS_MODEL bool t_ops_wanted;

// Lists the modules of m->module, root first, with their parents and `self` objects
// (modules.cpp).
void index_modules(TorchScript *m);

// Markers (markers.cpp puts them in the graphs; marker_calls.cpp delivers what they say).
// Puts an enter and an exit marker around every submodule call site of every method of `m`'s
// modules; returns the number of sites. Before any method of `m` has run.
size_t insert_markers(TorchScript *m);
// Splits the root's forward graph of an attached model (after insert_markers, before its first
// run) into `if layerprof::recording(): <the marked body> else: <the body every call inlined, no
// marker>`: a forward the thread does not record runs the model as shipped, with no marker
// instruction (docs/sampling.md). remove_markers puts the graph back as it was.
void split_unsampled(TorchScript *m);
// Whether the calling thread records the forward of the model tagged `tag` (a live forward, or
// the profiled model's in markers mode): the split's condition.
bool marker_recording(uint64_t tag) noexcept;
// Takes every marker out of the method graphs of `m`'s modules again (an attached module goes back
// to the program as it came, so that saving it writes no layerprof operator).
void remove_markers(TorchScript *m);
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
void markers_root(TorchScript *m, bool enter, uint64_t t,
                  const c10::IValue *out = nullptr) noexcept;

// Attaching a program's module (attach.cpp): checks it can be profiled as `m` runs, lists its
// modules and puts the markers in; attach_module marks the model attached once there is something
// to undo, and detach_module undoes it (the backend's free calls it).
int attach_module(TorchScript *m, const char *device);
void detach_module(TorchScript *m) noexcept;

// The backend's profiling (hooks.cpp): the module, op and FLOPs callbacks m->hooks asks for.
void ts_profile_begin(TorchScript *m);
void ts_profile_end(TorchScript *m) noexcept;

} // namespace lps
