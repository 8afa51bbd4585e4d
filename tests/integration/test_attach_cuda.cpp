// test_attach_cuda.cpp: attached sessions on a GPU (ctest label gpu): a module the program holds
// and moves to CUDA itself, run on the default stream and on a stream of its own, and a CUDA
// AOTInductor package the program loaded (given as argv[1]; bench/cuda_check.sh exports one).
//
// Without a usable CUDA device it prints "skipped: ..." and exits 77 (ctest: skipped). With one:
//  (a) resnet18 attached on cuda: every module's CUDA total is its self plus its children's
//      totals, exactly; the root's CUDA total is within 5% of a session that loaded the same file
//      (the same kernels: the file session moves the same weights to the same device), and every
//      module holding >= 2% of it within 10%; nothing launched outside a module.
//  (b) the same module's forwards on a pool stream (the program's CUDAStream, set current): the
//      kernels still land in their modules (each launch is tagged on the launching thread, not by
//      stream), the root within 10% of (a)'s.
//  (c) forwards the program does not synchronise after (one synchronisation at the end): the
//      figures complete all the same, the root within 10% of (a)'s.
//  (d) with argv[1], a CUDA package attached (layerprof::PackageSession): additivity as in (a)
//      and CUDA time on the root; the share of its kernels placed below the root is printed.
// Every figure is printed, passing or not, so that a GPU run's log holds them.
#include <c10/cuda/CUDAStream.h>
#include <torch/cuda.h>
#include <torch/script.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "layerprof.hpp"
#if LP_TEST_PT2
#include "layerprof_pt2.hpp"
#endif
#include "lp_check.hpp"

#ifndef LP_MODELS_DIR
#error "LP_MODELS_DIR must be defined"
#endif

#define SKIP 77

namespace {

struct module_cuda {
    double self_ns = 0, total_ns = 0; // per iteration
};

using cuda_table = std::map<std::string, module_cuda>;

const std::string resnet18 = std::string(LP_MODELS_DIR) + "/resnet18.pt";

lp_options cuda_options() {
    lp_options o;
    lp_options_init(&o);
    o.device = "cuda";
    return o;
}

// Per-module CUDA figures, after checking that each module's total is its self plus its
// children's totals (raw sums: exact).
cuda_table cuda_of(lp_session *s, const char *what) {
    cuda_table t;
    size_t n = 0;
    lp_session_node_count(s, &n);
    std::vector<lp_node_info> nodes(n);
    std::vector<uint64_t> children(n, 0);
    for (size_t i = 0; i < n; i++) {
        LP_CHECK(lp_session_node(s, i, &nodes[i]) == LP_OK, "%s: node %zu: %s", what, i,
                 lp_error_last());
        if (nodes[i].parent >= 0 && nodes[i].kind == LP_NODE_MODULE)
            children[(size_t)nodes[i].parent] += nodes[i].raw_cuda_total_ns;
    }
    for (size_t i = 0; i < n; i++) {
        const lp_node_info &info = nodes[i];
        if (info.kind != LP_NODE_MODULE) continue;
        LP_CHECK(info.cuda_recorded, "%s: '%s' has no CUDA time recorded", what, info.path);
        LP_CHECK(info.raw_cuda_total_ns == info.raw_cuda_self_ns + children[i],
                 "%s: '%s' CUDA total %llu ns != self %llu + children %llu", what, info.path,
                 (unsigned long long)info.raw_cuda_total_ns,
                 (unsigned long long)info.raw_cuda_self_ns, (unsigned long long)children[i]);
        t[info.path] = {info.cuda_self_ns, info.cuda_total_ns};
    }
    return t;
}

double rel(double a, double b) {
    return b > 0 ? std::fabs(a - b) / b : INFINITY;
}

// `got` against `want`: the root within `root_tol`, every module holding >= 2% of want's root
// within `module_tol` (0: the root only). Prints each compared module.
void compare(const char *what, const cuda_table &got, const cuda_table &want, double root_tol,
             double module_tol) {
    double root = want.count("") ? want.at("").total_ns : 0;
    double root_got = got.count("") ? got.at("").total_ns : 0;
    std::printf("%s: root CUDA total %.1f us against %.1f us (%+.1f%%)\n", what, root_got / 1e3,
                root / 1e3, root > 0 ? 100 * (root_got - root) / root : 0.0);
    LP_CHECK(root > 0 && rel(root_got, root) <= root_tol,
             "%s: the root's CUDA total %.1f us, the reference's %.1f us (tolerance %.0f%%)", what,
             root_got / 1e3, root / 1e3, 100 * root_tol);
    if (module_tol <= 0) return;
    int compared = 0;
    double worst = 0;
    for (const auto &kv : want) {
        if (kv.first.empty() || kv.second.total_ns < 0.02 * root) continue;
        auto it = got.find(kv.first);
        double g = it == got.end() ? 0 : it->second.total_ns;
        double r = rel(g, kv.second.total_ns);
        worst = std::fmax(worst, r);
        compared++;
        LP_CHECK(r <= module_tol, "%s: '%s' CUDA total %.1f us, the reference's %.1f us", what,
                 kv.first.c_str(), g / 1e3, kv.second.total_ns / 1e3);
    }
    std::printf("%s: %d modules holding >= 2%% compared, worst %.1f%%\n", what, compared,
                100 * worst);
}

void check_nothing_outside(const char *what, const std::string &tree) {
    LP_CHECK(tree.find("outside any profiled module") == std::string::npos,
             "%s: CUDA work launched outside the modules:\n%s", what, tree.c_str());
    LP_CHECK(tree.find("CUPTI dropped") == std::string::npos, "%s: records dropped:\n%s", what,
             tree.c_str());
}

std::vector<c10::IValue> gpu_inputs() {
    torch::manual_seed(1);
    return {torch::rand({1, 3, 224, 224}).to(torch::kCUDA)};
}

// The reference: a session that loads resnet18.pt itself onto the GPU.
cuda_table file_session(int iterations) {
    lp_options o = cuda_options();
    o.model_path = resnet18.c_str();
    lp_input_spec in;
    lp_input_spec_parse("1x3x224x224", &in);
    o.inputs = &in;
    o.n_inputs = 1;
    o.iterations = iterations;
    o.warmup = 5;
    lp_session *s = nullptr;
    cuda_table t;
    int ok = lp_session_open(&s, &o) == LP_OK && lp_session_run(s) == LP_OK;
    LP_CHECK(ok, "file session: %s", lp_error_last());
    if (ok) t = cuda_of(s, "file session");
    lp_session_close(s);
    return t;
}

enum class sync_after { each_forward, the_last };

// resnet18 attached and moved to the GPU by the program, `iterations` profiled forwards on the
// current stream.
cuda_table attached(const char *what, int iterations, sync_after sync) {
    torch::jit::Module module = torch::jit::load(resnet18);
    module.eval();
    module.to(torch::kCUDA);
    auto inputs = gpu_inputs();
    cuda_table t;
    layerprof::Session session(module, cuda_options());
    session.warmup(inputs, 5);
    for (int i = 0; i < iterations; i++) {
        session.forward(inputs);
        if (sync == sync_after::each_forward) torch::cuda::synchronize();
    }
    torch::cuda::synchronize();
    t = cuda_of(session.get(), what);
    std::string tree = session.render();
    check_nothing_outside(what, tree);
    lp_run_info run;
    int ok = lp_session_run_info(session.get(), &run) == LP_OK;
    LP_CHECK(ok, "%s: %s", what, lp_error_last());
    if (ok)
        std::printf("%s: %llu forwards, host %.1f us per forward\n", what,
                    (unsigned long long)run.iterations,
                    run.iterations ? run.driver_ns / 1e3 / (double)run.iterations : 0.0);
    return t;
}

cuda_table attached_on_pool_stream(int iterations) {
    c10::cuda::CUDAStream before = c10::cuda::getCurrentCUDAStream();
    c10::cuda::CUDAStream pool = c10::cuda::getStreamFromPool();
    LP_CHECK(pool != before, "the pool stream is the current one");
    c10::cuda::setCurrentCUDAStream(pool);
    cuda_table t;
    try {
        t = attached("pool stream", iterations, sync_after::each_forward);
    } catch (...) {
        c10::cuda::setCurrentCUDAStream(before);
        throw;
    }
    c10::cuda::setCurrentCUDAStream(before);
    return t;
}

#if LP_TEST_PT2
void package(const char *path, int iterations) {
    torch::inductor::AOTIModelPackageLoader loader(path);
    lp_options o = cuda_options();
    o.model_path = path;
    torch::manual_seed(1);
    std::vector<at::Tensor> inputs{torch::rand({1, 3, 224, 224}).to(torch::kCUDA)};
    layerprof::PackageSession session(loader, o);
    session.warmup(inputs, 5);
    for (int i = 0; i < iterations; i++) {
        session.run(inputs);
        torch::cuda::synchronize();
    }
    cuda_table t = cuda_of(session.get(), "package");
    double root = t.count("") ? t.at("").total_ns : 0, below = root - t[""].self_ns;
    std::printf("package: root CUDA total %.1f us per forward, %.1f%% of it placed below the "
                "root\n",
                root / 1e3, root > 0 ? 100 * below / root : 0.0);
    LP_CHECK(root > 0, "package: no CUDA time at the root");
    LP_CHECK(below > 0, "package: no CUDA time placed in any module below the root");
}
#endif

} // namespace

int main(int argc, char **argv) {
    if (!torch::cuda::is_available()) {
        std::printf("skipped: no CUDA device (torch::cuda::is_available() is false)\n");
        return SKIP;
    }
    try {
        const int iterations = 20;
        cuda_table file = file_session(iterations);
        cuda_table each = attached("attached", iterations, sync_after::each_forward);
        compare("attached vs file session", each, file, 0.05, 0.10);
        compare("pool stream vs attached", attached_on_pool_stream(iterations), each, 0.10, 0);
        compare("synchronised at the end vs attached",
                attached("synchronised at the end", iterations, sync_after::the_last), each, 0.10,
                0);
        if (argc > 1) {
#if LP_TEST_PT2
            package(argv[1], iterations);
#else
            LP_CHECK(false,
                     "a package was given, but this build has no AOTInductor (libtorch 1.x)");
#endif
        } else {
            std::printf("package: none given (argv[1]), not checked\n");
        }
    } catch (const std::exception &e) {
        std::fprintf(stderr, "unexpected exception: %s\n", e.what());
        return 1;
    }
    if (g_failures) {
        std::fprintf(stderr, "test_attach_cuda: %d check(s) failed\n", g_failures);
        return 1;
    }
    std::printf("test_attach_cuda: ok\n");
    return 0;
}
