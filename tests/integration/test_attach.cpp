// test_attach.cpp: a module the program holds, profiled through layerprof.hpp (lp_session_attach).
//
// The program loads its own torch::jit::Module and runs its own forwards; the figures must be
// those of a session that loaded the same file itself (the same calls per module, in both modes),
// the outputs must be bitwise those of the module unprofiled, and after the session the module
// and the thread's TorchScript settings must be as they were: no marker left in its graphs (it
// saves and loads again), the optimizer setting restored. Refusals: a module whose forward already
// ran (both modes), a module attached twice, another libtorch, the session's own forwards without
// inputs, begin/end out of order. C++ because it holds a torch::jit::Module; links libtorch itself.
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "layerprof.hpp"
#include "lp_check.hpp"

#if defined(LAYERPROF_STR) || defined(LAYERPROF_STR2) || defined(LAYERPROF_CXX11_ABI)
#error "layerprof.hpp leaves its helper macros defined in the program"
#endif

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

static std::string model_file(const char *name) {
    return std::string(LP_MODELS_DIR) + "/" + name + ".pt";
}

static lp_options options_for(lp_mode mode) {
    lp_options o;
    lp_options_init(&o);
    o.mode = mode;
    return o;
}

// Calls per module path, per iteration.
static std::map<std::string, double> calls_of(lp_session *s) {
    std::map<std::string, double> calls;
    size_t n = 0;
    lp_session_node_count(s, &n);
    for (size_t i = 0; i < n; i++) {
        lp_node_info info;
        if (lp_session_node(s, i, &info) == LP_OK && info.kind == LP_NODE_MODULE)
            calls[info.path] = info.calls;
    }
    return calls;
}

// The reference: a session that loads the file itself and runs it.
static std::map<std::string, double> file_calls(const char *name, lp_mode mode) {
    std::string path = model_file(name);
    lp_options o = options_for(mode);
    o.model_path = path.c_str();
    o.iterations = 2;
    lp_session *s = nullptr;
    std::map<std::string, double> calls;
    if (lp_session_open(&s, &o) == LP_OK && lp_session_run(s) == LP_OK) calls = calls_of(s);
    LP_CHECK(!calls.empty(), "%s: %s", name, lp_error_last());
    lp_session_close(s);
    return calls;
}

static std::vector<c10::IValue> inputs_for(const char *name) {
    torch::manual_seed(1);
    if (std::strcmp(name, "nested") == 0) return {torch::rand({1, 3, 16, 16})};
    return {torch::rand({2, 32})}; // pat_loops, pat_branches
}

// The figures, the outputs and the module after the session, for one model and mode.
static void check_same_as_file(const char *name, lp_mode mode) {
    const char *mode_name = mode == LP_MODE_HOOKS ? "hooks" : "markers";
    torch::jit::Module module = torch::jit::load(model_file(name));
    module.eval();
    auto inputs = inputs_for(name);
    bool optimize_before = torch::jit::getGraphExecutorOptimize();
    std::map<std::string, double> calls;
    at::Tensor profiled_out;
    {
        layerprof::Session session(module, options_for(mode));
        session.warmup(inputs);
        for (int i = 0; i < 3; i++)
            profiled_out = session.forward(inputs).toTensor();
        LP_CHECK(torch::jit::getGraphExecutorOptimize() == optimize_before,
                 "%s/%s: the thread's optimizer setting changed during the session", name,
                 mode_name);
        calls = calls_of(session.get());
        std::string tree = session.render();
        LP_CHECK(tree.find("after attaching") == std::string::npos,
                 "%s/%s: warmed-up forwards were noted as early ones:\n%s", name, mode_name,
                 tree.c_str());
    }
    auto want = file_calls(name, mode);
    LP_CHECK(calls == want,
             "%s/%s: calls differ from a session that loaded the file (%zu against "
             "%zu modules)",
             name, mode_name, calls.size(), want.size());
    for (const auto &kv : want)
        LP_CHECK(calls[kv.first] == kv.second, "%s/%s: '%s' %g calls, the file's session %g", name,
                 mode_name, kv.first.c_str(), calls[kv.first], kv.second);

    // The module is the program's again: the same output unprofiled, no marker in its graphs,
    // and it saves and loads.
    at::Tensor plain_out = module.forward(inputs).toTensor();
    LP_CHECK(torch::equal(plain_out, profiled_out), "%s/%s: outputs differ with profiling", name,
             mode_name);
    std::string graph = module.get_method("forward").graph()->toString();
    LP_CHECK(graph.find("layerprof::") == std::string::npos,
             "%s/%s: markers left in forward's graph after close", name, mode_name);
    std::stringstream saved;
    module.save(saved);
    torch::jit::Module again = torch::jit::load(saved);
    LP_CHECK(torch::equal(again.forward(inputs).toTensor(), plain_out),
             "%s/%s: the saved module computes something else", name, mode_name);
}

static int expect_error(int rc, int status, const char *needle, const char *what) {
    const char *msg = lp_error_last();
    LP_CHECK(rc == status, "%s: status %s, wanted %s (%s)", what, lp_status_name(rc),
             lp_status_name(status), msg);
    LP_CHECK(std::strstr(msg, needle), "%s: message '%s' lacks '%s'", what, msg, needle);
    return rc;
}

// A forward that already ran fixed what libtorch compiled: both modes refuse, saying why.
static void check_already_ran() {
    for (lp_mode mode : {LP_MODE_MARKERS, LP_MODE_HOOKS}) {
        torch::jit::Module module = torch::jit::load(model_file("nested"));
        module.forward(inputs_for("nested"));
        lp_options o = options_for(mode);
        lp_session *s = nullptr;
        int rc = lp_session_attach(&s, &o, &module, layerprof::torch_build());
        expect_error(rc, LP_ERR_STATE, "before its first forward", "attach after a forward");
        LP_CHECK(!s, "no session on failure");
        std::string graph = module.get_method("forward").graph()->toString();
        LP_CHECK(graph.find("layerprof::") == std::string::npos,
                 "a refused attach left markers in the module");
    }
    // The thread's setting off when the module first ran (the program's choice): markers refuse,
    // hooks accept, since the compiled forward still calls its submodules.
    torch::jit::Module module = torch::jit::load(model_file("nested"));
    {
        torch::jit::GraphOptimizerEnabledGuard off(false);
        module.forward(inputs_for("nested"));
    }
    lp_options o = options_for(LP_MODE_HOOKS);
    lp_session *s = nullptr;
    LP_CHECK(lp_session_attach(&s, &o, &module, layerprof::torch_build()) == LP_OK,
             "hooks on a module first run unoptimised: %s", lp_error_last());
    lp_session_close(s);
}

// Re-attaching after close works (the markers forward was compiled with stay in its executor,
// and do nothing between sessions), and a second session on an attached module is refused.
static void check_twice() {
    torch::jit::Module module = torch::jit::load(model_file("nested"));
    auto inputs = inputs_for("nested");
    std::map<std::string, double> first;
    {
        layerprof::Session session(module);
        session.warmup(inputs);
        session.forward(inputs);
        first = calls_of(session.get());
        lp_options o = options_for(LP_MODE_MARKERS);
        lp_session *s = nullptr;
        expect_error(lp_session_attach(&s, &o, &module, layerprof::torch_build()), LP_ERR_BUSY,
                     "already attached", "a second session");
        // A copy is another object of the same type: it shares forward's graph, markers and all.
        torch::jit::Module copy = module.copy();
        expect_error(lp_session_attach(&s, &o, &copy, layerprof::torch_build()), LP_ERR_BUSY,
                     "already attached", "a copy sharing the compiled forward");
    }
    module.forward(inputs); // unprofiled between sessions: the markers do nothing
    layerprof::Session session(module);
    session.forward(inputs);
    LP_CHECK(calls_of(session.get()) == first, "a second session counts other calls");
}

static void check_misuse() {
    torch::jit::Module module = torch::jit::load(model_file("nested"));
    lp_options o = options_for(LP_MODE_MARKERS);
    lp_session *s = nullptr;
    expect_error(lp_session_attach(&s, &o, &module, "0.0/cxx11abi=1"), LP_ERR_UNSUPPORTED,
                 "same libtorch", "another libtorch");
    LP_CHECK(lp_session_attach(&s, &o, &module, layerprof::torch_build()) == LP_OK, "%s",
             lp_error_last());
    expect_error(lp_session_run(s), LP_ERR_STATE, "given no inputs", "run without inputs");
    expect_error(lp_session_forward_end(s, 1), LP_ERR_STATE, "no forward is open", "end first");
    LP_CHECK(lp_session_forward_begin(s) == LP_OK, "%s", lp_error_last());
    expect_error(lp_session_forward_begin(s), LP_ERR_STATE, "already open", "begin twice");
    expect_error(lp_session_run(s), LP_ERR_STATE, "is open", "run inside a forward");
    LP_CHECK(lp_session_forward_end(s, 0) == LP_OK, "%s", lp_error_last()); // nothing ran
    lp_session_close(s);

    // A forward that throws: its scope drops what it left open, and the next one counts.
    layerprof::Session session(module);
    bool threw = false;
    try {
        session.forward({torch::rand({1, 5})}); // wrong shape: the model throws inside
    } catch (const std::exception &) {
        threw = true;
    }
    LP_CHECK(threw, "a wrong input did not throw");
    auto inputs = inputs_for("nested");
    session.forward(inputs); // the first good forward, profiled without warm-up: noted
    std::string tree = session.render();
    LP_CHECK(tree.find("after attaching was profiled") != std::string::npos,
             "no note on an early profiled forward:\n%s", tree.c_str());
    auto calls = calls_of(session.get());
    LP_CHECK(calls[""] == 1.0, "root calls %g after one good forward and one that threw",
             calls[""]);

    // A file session has no forwards of the program's.
    std::string path = model_file("nested");
    lp_options f = options_for(LP_MODE_MARKERS);
    f.model_path = path.c_str();
    lp_session *fs = nullptr;
    LP_CHECK(lp_session_open(&fs, &f) == LP_OK, "%s", lp_error_last());
    expect_error(lp_session_forward_begin(fs), LP_ERR_STATE, "loaded its model", "begin on a file");
    lp_session_close(fs);
}

// Inputs given in the options: the session's own runs work on the attached module.
static void check_run_with_inputs() {
    torch::jit::Module module = torch::jit::load(model_file("nested"));
    lp_options o = options_for(LP_MODE_MARKERS);
    lp_input_spec in;
    lp_input_spec_parse("1x3x16x16", &in);
    o.inputs = &in;
    o.n_inputs = 1;
    o.iterations = 2;
    layerprof::Session session(module, o);
    layerprof::check(lp_session_run(session.get()));
    LP_CHECK(calls_of(session.get()) == file_calls("nested", LP_MODE_MARKERS),
             "lp_session_run on an attached module counts other calls");
}

int main() {
    try {
        for (const char *name : {"nested", "pat_loops", "pat_branches"}) {
            check_same_as_file(name, LP_MODE_MARKERS);
            check_same_as_file(name, LP_MODE_HOOKS);
        }
        // The program's setting off: kept off, in markers mode too.
        {
            torch::jit::GraphOptimizerEnabledGuard off(false);
            check_same_as_file("nested", LP_MODE_MARKERS);
        }
        check_already_ran();
        check_twice();
        check_misuse();
        check_run_with_inputs();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "unexpected exception: %s\n", e.what());
        return 1;
    }
    if (g_failures) {
        std::fprintf(stderr, "test_attach: %d check(s) failed\n", g_failures);
        return 1;
    }
    std::printf("test_attach: ok\n");
    return 0;
}
