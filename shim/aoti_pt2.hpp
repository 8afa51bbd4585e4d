// aoti_pt2.hpp: the AOTInductor backend's state (lps::Package) and what its files share: the
// backend's table, loading and attaching (aoti_backend.cpp), loading and running a package and
// timing its kernels (aoti.cpp), reading its map (aoti_map.cpp), its rebound imports
// (aoti_rebind.cpp) and the shapes a program gives for its next forward (aoti_shapes.cpp).
#pragma once

#include <torch/version.h>

#include <memory>
#include <string>
#include <vector>

#include "collect/pt2_shapes.h"
#include "shim_internal.hpp"

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>
#endif

namespace lps {

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

struct Pt2ShapesDeleter {
    void operator()(lp_pt2_shapes *s) const noexcept {
        lp_pt2_shapes_free(s);
    }
};

struct Pt2 {
#if TORCH_VERSION_MAJOR >= 2
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
    // What runs the forwards: `loader`, or the program's own loader (attached, aoti_backend.cpp).
    torch::inductor::AOTIModelPackageLoader *runner = nullptr;
#endif
    std::vector<ReboundSlot> slots; // an attached package's rebound imports, put back at detach
    struct Kernel {
        std::string name;           // as kernel_information.json names it (no "graph_0_")
        std::string label;          // its op row: the name, and the modules it fused
        std::vector<int32_t> chain; // the modules from below the root down to its placement
        // Per module of `chain`: which call of it the kernel ran in (a number per call key of
        // the map), -1 where the map does not say (aoti_map.cpp).
        std::vector<int32_t> call_keys;
        // How many of `chain`'s first modules the kernel before it in the map shares, down to
        // the innermost that both ran inside one call of: their frames stay open from that
        // kernel to this one (aoti_map.cpp's shared_frames, aoti.cpp's frame_end).
        size_t shared = 0;
    };
    std::vector<Kernel> kernels;
    // Per module: where Inductor fused its work into a kernel placed in another module (the
    // first such kernel, and how many more), for its row to say where its time went.
    struct FusedInto {
        int32_t kernel = -1; // index into `kernels`, -1: none
        std::string module;  // the kernel's placement
        size_t depth = 0;    // the placement's depth
        unsigned more = 0;
    };
    std::vector<FusedInto> fused_into;
    std::vector<uint64_t> calls;     // per module: calls per forward, from the export
    bool calls_hooked = false;       // counted by forward hooks at export (else the graph's keys)
    size_t calls_without_nodes = 0;  // modules called there that left no node (identity modules)
    std::vector<std::string> inputs; // the example inputs' specs ("1x3x224x224", "4:int64")
    // The inputs' constraints, the FLOPs and output shapes (collect/pt2_shapes.c); set with a map.
    std::unique_ptr<lp_pt2_shapes, Pt2ShapesDeleter> shapes;
    bool has_map = false;
    bool rebound = false; // its kernel-profile imports go through aoti_rebind.cpp's wrappers
    // The next forward's inputs passed the map's check (pt2_forward's own, or the shapes the
    // program gave: lps_model_pt2_shapes), and so did the forward running now's (pt2_enter takes
    // the one into the other): only then are the figures worked out for them delivered at its
    // end, never those of an earlier forward's shapes.
    bool shapes_next = false;
    bool shapes_now = false;
    uint64_t unplaced = 0; // kernel calls that did not follow the map's order (under the root)
};

// An AOTInductor package: the common state, and the package's own, which no TorchScript code
// reads. The package's tables are behind `pt2`, which pt2_load or pt2_attach makes (none on
// libtorch 1.x, where no package loads): what the kernel callbacks read per event is one load
// from the model, as it was.
struct Package : lps_model {
    Package() : lps_model(&k_package) {}
    std::unique_ptr<Pt2> pt2;
    const void *held_loader = nullptr; // attached: the program's loader (aoti_backend.cpp)
};

// The model as a package, or null when another backend runs it: for the entry points only a
// package has (lps_model_pt2_*, lps_model_module_fused).
inline Package *package(lps_model *m) noexcept {
    return m->backend->kind == Backend::Kind::package ? static_cast<Package *>(m) : nullptr;
}
inline const Package *package(const lps_model *m) noexcept {
    return m->backend->kind == Backend::Kind::package ? static_cast<const Package *>(m) : nullptr;
}

// The package's layerprof map (aoti_map.cpp). pt2_read_map returns the map's text and whether
// the package holds one (throws what libtorch's archive reader throws for a file that is not a
// package); pt2_parse_map fills m's modules, kernels and default inputs from it: a status with
// a message for a malformed map or one of another version.
#if TORCH_VERSION_MAJOR >= 2
std::string pt2_read_map(const char *path, bool *found);
int pt2_parse_map(Package *m, const std::string &text, const char *path);
#endif

// The package's side (aoti.cpp). A path ending in .pt2 is one. pt2_load fills m->modules and the
// default inputs from the package's layerprof map (or gives it one root without a map), and
// loads it on m->device: a status with a message. pt2_forward runs it once and returns its
// outputs as a list (throws like TorchScript's forward). pt2_profile_begin/_end install and
// remove the kernel callbacks or import hooks that replace the module, marker, op and FLOPs ones
// for a package.
bool is_pt2_path(const char *path) noexcept;
int pt2_load(Package *m, const char *path);
c10::IValue pt2_forward(Package *m, lps_inputs *in);
// The package's input check (its map's constraints), for lps_inputs_create: LP_ERR_INVALID
// with the message naming the input, the dimension and the range it must be in.
int pt2_check_inputs(Package *m, lps_inputs *in);
// A package the program loaded itself (aoti_backend.cpp): its map read from `path`, `loader` (a
// torch::inductor::AOTIModelPackageLoader) runs it, its library's kernel-profile imports rebound
// (refused with a message when none is loaded, or it has none); detach puts them back.
// pt2_enter/pt2_leave bracket one forward on the calling thread (pt2_forward's, or the program's).
int pt2_attach(Package *m, void *loader, const char *path);
void pt2_detach(Package *m) noexcept;
void pt2_enter(Package *m) noexcept;
void pt2_leave(Package *m, bool completed) noexcept;
void pt2_profile_begin(Package *m);
void pt2_profile_end(Package *m) noexcept;

} // namespace lps
