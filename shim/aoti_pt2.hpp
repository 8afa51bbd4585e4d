// aoti_pt2.hpp: what the shim holds of an AOTInductor package (lps_model::pt2), shared by the
// files that load, attach and run one (aoti.cpp, aoti_attach.cpp) and the one that takes the
// shapes a program gives for its next forward (aoti_shapes.cpp).
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

struct Pt2ShapesDeleter {
    void operator()(lp_pt2_shapes *s) const noexcept {
        lp_pt2_shapes_free(s);
    }
};

struct Pt2 {
#if TORCH_VERSION_MAJOR >= 2
    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
    // What runs the forwards: `loader`, or the program's own loader (attached, aoti_attach.cpp).
    torch::inductor::AOTIModelPackageLoader *runner = nullptr;
#endif
    std::vector<ReboundSlot> slots; // an attached package's rebound imports, put back at detach
    struct Kernel {
        std::string name;           // as kernel_information.json names it (no "graph_0_")
        std::string label;          // its op row: the name, and the modules it fused
        std::vector<int32_t> chain; // the modules from below the root down to its placement
        // How many of `chain`'s first modules the kernel before it in the map shares, up to the
        // innermost called once per forward: their frames stay open from that kernel to this one
        // (aoti.cpp, parse_map and frame_end).
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

} // namespace lps
