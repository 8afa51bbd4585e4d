// test_attach_pt2.cpp: an AOTInductor package the program loaded itself, profiled through
// layerprof_pt2.hpp (lp_session_attach_package). Run with the directory integration.pt2_export
// fills.
//
// The program's loader runs before it is attached (nothing of a package is compiled at its first
// run, so that is allowed); the attached tree must have the calls of a session that loaded the
// same file itself, kernel time in the modules the map places kernels in (the same modules as
// the file session's), and the outputs must be bitwise the loader's unprofiled ones, during and
// after the session. Refusals, each with its status: another libtorch, no model path, a package
// without layerprof's map, a path whose package the loader was not loaded from, the same loader
// twice (and again after the first session closed: allowed).
//
// FLOPs and output shapes (check_figures): PackageSession::run hands its inputs' shapes to the
// session (lp_session_input_shapes_set), and every module's figures must be exactly those of a
// session that loads the same file with the same input, as the CLI does: resnet18 at 1x3x224x224,
// the dynamic transformer at two batch sizes. Then, on one session, shapes that change between
// forwards, shapes the package refuses (an Error before the loader runs, nothing recorded), and
// a forward begun without shapes (no figures, not the last shapes').
#include <torch/script.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "layerprof_pt2.hpp"
#include "lp_check.hpp"

struct Figures {
    double calls = 0;
    bool timed = false;
};

static std::map<std::string, Figures> figures_of(lp_session *s) {
    std::map<std::string, Figures> out;
    size_t n = 0;
    lp_session_node_count(s, &n);
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        if (lp_session_node(s, i, &info) == LP_OK && info.kind == LP_NODE_MODULE)
            out[info.path] = Figures{info.calls, info.raw_self_ns > 0};
    }
    return out;
}

static lp_options options_for(const std::string &path) {
    lp_options o;
    lp_options_init(&o);
    o.model_path = path.c_str();
    return o;
}

static bool same_bits(const std::vector<at::Tensor> &a, const std::vector<at::Tensor> &b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); i++)
        if (!a[i].sizes().equals(b[i].sizes()) ||
            std::memcmp(a[i].contiguous().data_ptr(), b[i].contiguous().data_ptr(),
                        a[i].nbytes()) != 0)
            return false;
    return true;
}

static void check_package(const std::string &dir, const char *name,
                          const std::vector<int64_t> &shape) {
    std::string path = dir + "/" + name + ".pt2";
    std::printf("== %s\n", name);
    // The reference: a session that loads the file itself.
    std::map<std::string, Figures> want;
    {
        lp_options o = options_for(path);
        o.iterations = 3;
        lp_session *s = nullptr;
        LP_CHECK(lp_session_open(&s, &o) == LP_OK, "%s: %s", name, lp_error_last());
        LP_CHECK(lp_session_run(s) == LP_OK, "%s: %s", name, lp_error_last());
        want = figures_of(s);
        lp_session_close(s);
    }
    torch::inductor::AOTIModelPackageLoader loader(path);
    c10::InferenceMode no_autograd;
    std::vector<at::Tensor> inputs{torch::rand(shape)};
    std::vector<at::Tensor> before = loader.run(inputs); // it ran before the session: allowed
    {
        layerprof::PackageSession session(loader, options_for(path));
        session.warmup(inputs);
        for (int i = 0; i < 3; i++)
            LP_CHECK(same_bits(session.run(inputs), before), "%s: outputs changed", name);
        std::map<std::string, Figures> got = figures_of(session.get());
        LP_CHECK(got.size() == want.size(), "%s: %zu modules, the file session %zu", name,
                 got.size(), want.size());
        for (const auto &[module, w] : want) {
            auto it = got.find(module);
            LP_CHECK(it != got.end(), "%s: module '%s' missing", name, module.c_str());
            if (it == got.end()) continue;
            LP_CHECK(it->second.calls == w.calls, "%s: '%s' %g calls, the file session %g", name,
                     module.c_str(), it->second.calls, w.calls);
            LP_CHECK(it->second.timed == w.timed, "%s: '%s' timed %d, the file session %d", name,
                     module.c_str(), it->second.timed, w.timed);
        }
        // One session per loader.
        lp_session *twice = nullptr;
        lp_options o = options_for(path);
        int rc = lp_session_attach_package(&twice, &o, &loader, layerprof::torch_build());
        LP_CHECK(rc == LP_ERR_BUSY && !twice, "%s: a second session got %s", name,
                 lp_status_name(rc));
    }
    LP_CHECK(same_bits(loader.run(inputs), before), "%s: outputs changed after the session", name);
    lp_session *again = nullptr;
    lp_options o = options_for(path);
    LP_CHECK(lp_session_attach_package(&again, &o, &loader, layerprof::torch_build()) == LP_OK,
             "%s: attaching after the first session closed: %s", name, lp_error_last());
    lp_session_close(again);
}

// What the flops and out_shape columns recorded for one module.
struct Shapes {
    bool flops_known = false;
    uint64_t raw_flops = 0, raw_calls = 0;
    double flops = 0;               // per call
    std::vector<int64_t> out_shape; // empty: none recorded
    bool varies = false;
};

static std::map<std::string, Shapes> shapes_of(lp_session *s) {
    std::map<std::string, Shapes> out;
    size_t n = 0;
    lp_session_node_count(s, &n);
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        if (lp_session_node(s, i, &info) != LP_OK || info.kind != LP_NODE_MODULE) continue;
        Shapes &f = out[info.path];
        f.flops_known = info.flops_known;
        f.raw_flops = info.raw_flops;
        f.raw_calls = info.raw_calls;
        f.flops = info.flops;
        if (info.out_rank >= 0) f.out_shape.assign(info.out_shape, info.out_shape + info.out_rank);
        f.varies = info.out_shape_varies;
    }
    return out;
}

static const char *const k_figure_columns[] = {"self_cpu", "flops", "self_flops", "out_shape"};

static lp_options figure_options(const std::string &path) {
    lp_options o = options_for(path);
    o.columns = k_figure_columns;
    o.n_columns = sizeof k_figure_columns / sizeof k_figure_columns[0];
    return o;
}

static std::string shape_text(const std::vector<int64_t> &shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); i++)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

// The figures an attached session records for `inputs` (two forwards: the second one's shapes are
// the cached ones), checked module by module against a session that loads the file with the
// input `spec`, as the CLI's --input says it. Returns the attached session's.
static std::map<std::string, Shapes> check_figures(const std::string &dir, const char *name,
                                                   const char *spec,
                                                   torch::inductor::AOTIModelPackageLoader &loader,
                                                   const std::vector<at::Tensor> &inputs) {
    std::string path = dir + "/" + name + ".pt2";
    std::printf("== %s figures at %s\n", name, spec);
    std::map<std::string, Shapes> want, got;
    {
        lp_options o = figure_options(path);
        lp_input_spec in[LP_MAX_INPUTS];
        size_t n = 0;
        LP_CHECK(lp_input_parse(spec, in, LP_MAX_INPUTS, &n, nullptr) == LP_OK, "%s: %s", spec,
                 lp_error_last());
        o.inputs = in;
        o.n_inputs = n;
        o.warmup = 1;
        o.iterations = 1;
        lp_session *s = nullptr;
        LP_CHECK(lp_session_open(&s, &o) == LP_OK, "%s: %s", name, lp_error_last());
        LP_CHECK(lp_session_run(s) == LP_OK, "%s: %s", name, lp_error_last());
        want = shapes_of(s);
        lp_session_close(s);
    }
    {
        layerprof::PackageSession session(loader, figure_options(path));
        for (int i = 0; i < 2; i++)
            session.run(inputs);
        got = shapes_of(session.get());
    }
    LP_CHECK(got.size() == want.size(), "%s: %zu modules, the file session %zu", name, got.size(),
             want.size());
    size_t with_flops = 0, with_shape = 0;
    for (const auto &[module, w] : want) {
        auto it = got.find(module);
        if (it == got.end()) continue; // said above
        const Shapes &g = it->second;
        const char *at = module.empty() ? "(root)" : module.c_str();
        LP_CHECK(g.flops_known == w.flops_known && g.flops == w.flops,
                 "%s: '%s' %.0f FLOPs per call attached, %.0f in the file session", name, at,
                 g.flops, w.flops);
        LP_CHECK(g.out_shape == w.out_shape,
                 "%s: '%s' out_shape %s attached, %s in the file session", name, at,
                 shape_text(g.out_shape).c_str(), shape_text(w.out_shape).c_str());
        with_flops += w.flops > 0;
        with_shape += !w.out_shape.empty();
    }
    LP_CHECK(with_flops > 3 && with_shape > 3, "%s: %zu modules with FLOPs, %zu with out_shape",
             name, with_flops, with_shape);
    std::printf("   root %.0f FLOPs per forward, out_shape %s; %zu modules with FLOPs\n",
                got[""].flops, shape_text(got[""].out_shape).c_str(), with_flops);
    return got;
}

static void expect_refused(const char *what, int rc, int status, const char *words);

// resnet18: what integration.pt2 checks of the CLI's report (conv1 2*64*3*7*7*112*112 FLOPs).
static void check_resnet18(const std::string &dir) {
    torch::inductor::AOTIModelPackageLoader loader(dir + "/resnet18.pt2");
    c10::InferenceMode no_autograd;
    std::vector<at::Tensor> inputs{torch::rand({1, 3, 224, 224})};
    auto got = check_figures(dir, "resnet18", "1x3x224x224", loader, inputs);
    LP_CHECK(got["conv1"].flops == 236027904.0, "resnet18: conv1 %.0f FLOPs", got["conv1"].flops);
    LP_CHECK(got["conv1"].out_shape == (std::vector<int64_t>{1, 64, 112, 112}),
             "resnet18: conv1 out_shape %s", shape_text(got["conv1"].out_shape).c_str());
    LP_CHECK(got["fc"].out_shape == (std::vector<int64_t>{1, 1000}), "resnet18: fc out_shape %s",
             shape_text(got["fc"].out_shape).c_str());
    LP_CHECK(std::llround(got[""].flops / 1e7) == 364, "resnet18: %.0f FLOPs per forward",
             got[""].flops);
}

static std::vector<at::Tensor> ids(int64_t batch, int64_t seq) {
    return {torch::randint(0, 999, {batch, seq}, torch::kLong)};
}

// transformer_dyn (batch 1..64, sequence 2..512): two batch sizes, each against the file session;
// then shapes changing, refused and missing on one session.
static void check_dynamic(const std::string &dir) {
    std::string path = dir + "/transformer_dyn.pt2";
    torch::inductor::AOTIModelPackageLoader loader(path);
    c10::InferenceMode no_autograd;
    auto small = check_figures(dir, "transformer_dyn", "2x16:int64:0..999", loader, ids(2, 16));
    auto large = check_figures(dir, "transformer_dyn", "5x40:int64:0..999", loader, ids(5, 40));
    LP_CHECK(small[""].out_shape == (std::vector<int64_t>{2, 10}), "2x16: root out_shape %s",
             shape_text(small[""].out_shape).c_str());
    LP_CHECK(large[""].out_shape == (std::vector<int64_t>{5, 10}), "5x40: root out_shape %s",
             shape_text(large[""].out_shape).c_str());
    LP_CHECK(large[""].flops > small[""].flops, "5x40: %.0f FLOPs, 2x16 %.0f", large[""].flops,
             small[""].flops);

    layerprof::PackageSession session(loader, figure_options(path));
    lp_session *s = session.get();
    session.run(ids(2, 16));
    session.run(ids(5, 40)); // new shapes: evaluated again, not the last forward's
    auto both = shapes_of(s);
    uint64_t sum = static_cast<uint64_t>(small[""].flops) + static_cast<uint64_t>(large[""].flops);
    LP_CHECK(both[""].raw_flops == sum, "2x16 then 5x40: %llu FLOPs, want %llu",
             static_cast<unsigned long long>(both[""].raw_flops),
             static_cast<unsigned long long>(sum));
    LP_CHECK(both[""].out_shape == (std::vector<int64_t>{2, 10}) && both[""].varies,
             "2x16 then 5x40: root out_shape %s, varies %d", shape_text(both[""].out_shape).c_str(),
             both[""].varies);

    // Refused before the loader runs (it would read past its buffers), and nothing recorded.
    struct Bad {
        std::vector<at::Tensor> inputs;
        const char *words;
    } bad[] = {
        {ids(65, 16), "input 0 dimension 0 is 65, outside the package's range 1..64"},
        {ids(2, 600), "input 0 dimension 1 is 600, outside the package's range 2..512"},
        {{torch::rand({2, 16})}, "input 0 is float32, the package was compiled for int64"},
        // the sizes of the last forward that passed, in another dtype: not taken for it
        {{torch::zeros({5, 40}, torch::kInt)},
         "input 0 is int32, the package was compiled for "
         "int64"},
        {{torch::zeros({5, 40}, torch::kComplexFloat)},
         "input 0 is a dtype lp_dtype does not name, the package was compiled for int64"},
        {{torch::zeros({2, 16, 3}, torch::kLong)}, "input 0 has 3 dimensions"},
        {{}, "the package takes 1 input"},
    };
    for (const Bad &b : bad) {
        try {
            session.run(b.inputs);
            LP_CHECK(false, "refused shapes ran (%s)", b.words);
        } catch (const layerprof::Error &e) {
            LP_CHECK(e.status() == LP_ERR_INVALID && std::strstr(e.what(), b.words),
                     "refused shapes: %s '%s', want '%s'", lp_status_name(e.status()), e.what(),
                     b.words);
        }
    }
    auto after = shapes_of(s);
    LP_CHECK(after[""].raw_flops == sum && after[""].raw_calls == both[""].raw_calls,
             "refused shapes recorded: %llu FLOPs, %llu calls",
             static_cast<unsigned long long>(after[""].raw_flops),
             static_cast<unsigned long long>(after[""].raw_calls));

    // A forward the program begins itself after a refusal, without shapes: its calls and times
    // are recorded, no FLOPs (never those of the last shapes that passed).
    lp_tensor_shape wrong{nullptr, 0, LP_DTYPE_INT64};
    expect_refused("a rank-0 input", lp_session_input_shapes_set(s, &wrong, 1), LP_ERR_INVALID,
                   "has 0 dimensions");
    {
        layerprof::Session::Forward scope(s);
        loader.run(ids(5, 40));
        int64_t sizes[] = {5, 40};
        lp_tensor_shape inside{sizes, 2, LP_DTYPE_INT64};
        expect_refused("shapes inside a forward", lp_session_input_shapes_set(s, &inside, 1),
                       LP_ERR_STATE, "a forward is open");
        scope.end();
    }
    session.step();
    auto without = shapes_of(s);
    LP_CHECK(without[""].raw_flops == sum && without[""].raw_calls == both[""].raw_calls + 1,
             "a forward without shapes: %llu FLOPs, %llu calls",
             static_cast<unsigned long long>(without[""].raw_flops),
             static_cast<unsigned long long>(without[""].raw_calls));

    // The C entry's refusals that need a session (the argument checks: test_tensor_shapes.c).
    int64_t sizes[] = {2, 16};
    lp_tensor_shape good{sizes, 2, LP_DTYPE_INT64};
    expect_refused("no session", lp_session_input_shapes_set(nullptr, &good, 1), LP_ERR_INVALID,
                   "session is NULL");
    lp_tensor_shape deep{sizes, LP_MAX_DIMS + 1, LP_DTYPE_INT64};
    expect_refused("too many dims", lp_session_input_shapes_set(s, &deep, 1), LP_ERR_INVALID,
                   "not 0..8");

    // Shapes that passed, then a refused call, or NULL, 0: the next forward has none (the ones
    // that passed are not this forward's).
    for (int clear = 0; clear < 2; clear++) {
        LP_CHECK(lp_session_input_shapes_set(s, &good, 1) == LP_OK, "2x16: %s", lp_error_last());
        if (clear)
            LP_CHECK(lp_session_input_shapes_set(s, nullptr, 0) == LP_OK, "NULL, 0: %s",
                     lp_error_last());
        else
            expect_refused("too many dims, after good shapes",
                           lp_session_input_shapes_set(s, &deep, 1), LP_ERR_INVALID, "not 0..8");
        auto before = shapes_of(s);
        {
            layerprof::Session::Forward scope(s);
            loader.run(ids(2, 16));
            scope.end();
        }
        session.step();
        auto after_clear = shapes_of(s);
        LP_CHECK(after_clear[""].raw_flops == before[""].raw_flops &&
                     after_clear[""].raw_calls == before[""].raw_calls + 1,
                 "%s: %llu FLOPs (%llu before), %llu calls", clear ? "NULL, 0" : "a refusal",
                 static_cast<unsigned long long>(after_clear[""].raw_flops),
                 static_cast<unsigned long long>(before[""].raw_flops),
                 static_cast<unsigned long long>(after_clear[""].raw_calls));
    }
    lp_options o = options_for(path); // a session that runs the package itself
    lp_session *file = nullptr;
    LP_CHECK(lp_session_open(&file, &o) == LP_OK, "transformer_dyn: %s", lp_error_last());
    expect_refused("a session that loaded its package", lp_session_input_shapes_set(file, &good, 1),
                   LP_ERR_STATE, "not attached to a package");
    lp_session_close(file);
}

static void expect_refused(const char *what, int rc, int status, const char *words) {
    LP_CHECK(rc == status, "%s: %s, not %s", what, lp_status_name(rc), lp_status_name(status));
    LP_CHECK(std::strstr(lp_error_last(), words), "%s: message '%s' lacks '%s'", what,
             lp_error_last(), words);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s PT2_DIR (integration.pt2_export's packages)\n", argv[0]);
        return 2;
    }
    std::string dir = argv[1];
    check_package(dir, "nested", {1, 3, 16, 16});
    check_package(dir, "pat_loops", {2, 32});
    check_resnet18(dir);
    check_dynamic(dir);

    std::string nested = dir + "/nested.pt2";
    torch::inductor::AOTIModelPackageLoader loader(nested);
    lp_session *s = nullptr;
    lp_options o = options_for(nested);
    expect_refused("another libtorch",
                   lp_session_attach_package(&s, &o, &loader, "1.13/cxx11abi=0"),
                   LP_ERR_UNSUPPORTED, "same libtorch");
    lp_options no_path = options_for(nested);
    no_path.model_path = nullptr;
    expect_refused("no model path",
                   lp_session_attach_package(&s, &no_path, &loader, layerprof::torch_build()),
                   LP_ERR_INVALID, "model");
    std::string nomap_path = dir + "/nested_nomap.pt2";
    lp_options nomap = options_for(nomap_path);
    expect_refused("no map",
                   lp_session_attach_package(&s, &nomap, &loader, layerprof::torch_build()),
                   LP_ERR_MODEL, "no layerprof module map");
    std::string other_path = dir + "/pat_shared.pt2"; // not what the loader was loaded from
    lp_options other = options_for(other_path);
    expect_refused("another package's path",
                   lp_session_attach_package(&s, &other, &loader, layerprof::torch_build()),
                   LP_ERR_MODEL, "no library loaded in this process");
    LP_CHECK(!s, "a refused attach left a session");
    if (g_failures) return 1;
    std::printf("test_attach_pt2: ok\n");
    return 0;
}
