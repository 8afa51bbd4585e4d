// attach.cpp: a C++ program that loads and runs its own TorchScript model, as a service does, and
// profiles its own forwards in place with layerprof.hpp.
//
//   attach MODEL.pt [SHAPE] [hooks|markers]     e.g. attach models/resnet18.pt 1x3x224x224
//
// The program keeps its torch::jit::Module and its inputs; layerprof only watches. The module is
// attached before its first forward: libtorch compiles forward at that first run for the module's
// life, and layerprof has to be in that compilation.
#include <torch/script.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "layerprof.hpp"

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
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s MODEL.pt [SHAPE] [hooks|markers]\n", argv[0]);
        return 2;
    }
    std::vector<int64_t> shape = parse_shape(argc > 2 ? argv[2] : "1x3x224x224");
    if (shape.empty()) {
        std::fprintf(stderr, "bad shape '%s' (e.g. 1x3x224x224)\n", argv[2]);
        return 2;
    }
    try {
        // The program's own model and data.
        torch::jit::Module module = torch::jit::load(argv[1]);
        module.eval();
        std::vector<c10::IValue> inputs{torch::rand(shape)};

        lp_options options;
        lp_options_init(&options);
        options.model_path = argv[1]; // names the model in the report; nothing is loaded from it
        if (argc > 3 && std::strcmp(argv[3], "hooks") == 0) options.mode = LP_MODE_HOOKS;
        layerprof::Session session(module, options);

        c10::InferenceMode no_autograd; // as the program would run it
        session.warmup(inputs);
        for (int i = 0; i < 5; i++)
            session.forward(inputs);
        session.render(LP_FORMAT_TREE, stdout);

        // The module is the program's again: an unprofiled forward as before.
        at::Tensor out = module.forward(inputs).toTensor();
        std::printf("\nafter the session: output %s\n", c10::str(out.sizes()).c_str());
        return 0;
    } catch (const layerprof::Error &e) {
        std::fprintf(stderr, "layerprof: %s (%s)\n", e.what(), lp_status_name(e.status()));
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
    }
    return 1;
}
