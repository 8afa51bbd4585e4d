// attach_pt2.cpp: a C++ program that loads and runs its own AOTInductor package, as a service
// does, and profiles its own forwards in place with layerprof_pt2.hpp (libtorch 2.x builds).
//
//   attach_pt2 [--json] PACKAGE.pt2 SHAPE [SHAPE...]    e.g. attach_pt2 nested.pt2 1x3x16x16
//
// The program keeps its loader and its inputs (float32 tensors of the shapes given: a package
// runs only on the shapes it was exported for); layerprof only watches. The package must come from
// python/layerprof_export.py, whose module map the session reads from the same path.
#include <torch/script.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "layerprof_pt2.hpp"

// "1x3x224x224" -> {1, 3, 224, 224}; empty on anything else.
static std::vector<int64_t> parse_shape(const char *text) {
    std::vector<int64_t> dims;
    for (const char *p = text; *p;) {
        char *end;
        long long d = std::strtoll(p, &end, 10);
        if (end == p || d <= 0) return {};
        dims.push_back(d);
        p = *end == 'x' ? end + 1 : end;
        if (*end && *end != 'x') return {};
    }
    return dims;
}

int main(int argc, char **argv) {
    int arg = 1;
    bool json = argc > 1 && std::strcmp(argv[1], "--json") == 0;
    arg += json;
    if (argc - arg < 2) {
        std::fprintf(stderr, "usage: %s [--json] PACKAGE.pt2 SHAPE [SHAPE...]\n", argv[0]);
        return 2;
    }
    const char *package = argv[arg++];
    std::vector<at::Tensor> inputs;
    for (; arg < argc; arg++) {
        std::vector<int64_t> shape = parse_shape(argv[arg]);
        if (shape.empty()) {
            std::fprintf(stderr, "bad shape '%s' (e.g. 1x3x224x224)\n", argv[arg]);
            return 2;
        }
        inputs.push_back(torch::rand(shape));
    }
    try {
        // The program's own package, already run once, as a service would have.
        torch::inductor::AOTIModelPackageLoader loader(package);
        c10::InferenceMode no_autograd;
        loader.run(inputs);

        lp_options options;
        lp_options_init(&options);
        options.model_path = package; // the package the loader came from: its module map
        layerprof::PackageSession session(loader, options);
        session.warmup(inputs);
        for (int i = 0; i < 5; i++)
            session.run(inputs);
        session.render(json ? LP_FORMAT_JSON : LP_FORMAT_TREE, stdout);
        if (json) return 0;

        // The loader is the program's again: an unprofiled forward as before.
        std::vector<at::Tensor> out = loader.run(inputs);
        std::printf("\nafter the session: %zu output(s), the first %s\n", out.size(),
                    out.empty() ? "none" : c10::str(out[0].sizes()).c_str());
        return 0;
    } catch (const layerprof::Error &e) {
        std::fprintf(stderr, "layerprof: %s (%s)\n", e.what(), lp_status_name(e.status()));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
    }
    return 1;
}
