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
#include <torch/script.h>

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
