// bench_sampling.cpp: what sampling costs a service's stream of forwards (docs/sampling.md),
// through layerprof.hpp as a service uses it: the program's module attached to a live session,
// each forward between lp_session_forward_begin and _end.
//
//   lp_bench_sampling stream MODEL.pt SPEC [--block B] [--rounds R]
//   lp_bench_sampling render MODEL.pt SPEC [--renders N]
//   lp_bench_sampling pairs MODEL.pt SPEC
//
// `stream`: four copies of the model loaded in one process, one intra-op thread, the input SPEC
// (lp_input_spec_parse's syntax: a float tensor, or an integer one with a range):
//   opt      the module as shipped: optimised, no markers, no session (the reference);
//   never    attached, sample_every INT_MAX: after the first, every forward unprofiled, so its
//            cost over `opt` per forward is what an unsampled forward costs (ns);
//   1/100    attached, sample_every 100;  1/10  attached, sample_every 10.
// Each copy warms up (3 forwards, unprofiled), then every round times one block of B forwards
// of each setting back to back, in an order that rotates each round; x_opt is the median over
// rounds of block / opt's block in the same round (on the thread's CPU clock), with the spread of
// those ratios (half the interquartile range). B is a multiple of 100, so each block of 1/100 holds
// exactly B/100 profiled forwards.
//
// `render`: the exposition (LP_FORMAT_OPENMETRICS) of a live session after 20 profiled forwards,
// rendered N times into memory: the median time of one render, and its size.
//
// Output: `|`-separated lines for bench/run.sh: SAMPLING|model|setting|x_opt|spread|base_us|
// ns_per_forward|profiled and RENDER|model|median_us|bytes|series.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "layerprof.hpp"

using Clock = std::chrono::steady_clock;

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double quantile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    double at = q * (double)(v.size() - 1);
    size_t lo = (size_t)at;
    size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (at - (double)lo) * (v[hi] - v[lo]);
}

static c10::IValue make_input(const char *spec_text) {
    lp_input_spec spec;
    if (lp_input_spec_parse(spec_text, &spec) != LP_OK) {
        std::fprintf(stderr, "bad input spec '%s': %s\n", spec_text, lp_error_last());
        std::exit(2);
    }
    std::vector<int64_t> shape(spec.shape, spec.shape + spec.ndim);
    torch::manual_seed(1);
    if (spec.dtype == LP_DTYPE_INT64)
        return torch::randint((int64_t)spec.low, (int64_t)spec.high, shape, torch::kLong);
    return torch::rand(shape);
}

struct Setting {
    const char *name;
    int every; // 0: the reference, no session
    torch::jit::Module module;
    std::unique_ptr<layerprof::Session> session;
    std::vector<double> block_ns;
    uint64_t profiled_before = 0;
};

static uint64_t sampled_forwards(lp_session *s) {
    lp_run_info info;
    return lp_session_run_info(s, &info) == LP_OK ? info.iterations : 0;
}

/* The thread's CPU time: one intra-op thread runs the whole forward on this thread, and the CPU
 * clock does not count the time the machine's other work preempted it (bench/README.md). */
static uint64_t cpu_ns() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void run_block(Setting &st, const std::vector<c10::IValue> &in, int n) {
    uint64_t t0 = cpu_ns();
    for (int i = 0; i < n; i++) {
        if (!st.session) {
            st.module.forward(in);
            continue;
        }
        layerprof::Session::Forward scope(*st.session);
        st.module.forward(in);
        scope.end();
    }
    st.block_ns.push_back((double)(cpu_ns() - t0));
}

static int stream(const char *path, const char *spec, int block, int rounds, const char *name) {
    std::vector<c10::IValue> in{make_input(spec)};
    std::vector<Setting> settings;
    settings.push_back({"opt", 0, {}, nullptr, {}});
    settings.push_back({"never", INT_MAX, {}, nullptr, {}});
    settings.push_back({"1/100", 100, {}, nullptr, {}});
    settings.push_back({"1/10", 10, {}, nullptr, {}});
    for (auto &st : settings) {
        st.module = torch::jit::load(path);
        st.module.eval();
        if (st.every) {
            lp_options o;
            lp_options_init(&o);
            o.model_path = path;
            o.sample_every = st.every;
            st.session = std::make_unique<layerprof::Session>(st.module, o);
            st.session->warmup(in);
        } else {
            for (int i = 0; i < 3; i++)
                st.module.forward(in);
        }
    }
    // One untimed round: each copy's caches and the sampler's first (profiled) forward.
    for (auto &st : settings)
        run_block(st, in, block);
    for (auto &st : settings)
        st.block_ns.clear();
    size_t n = settings.size();
    for (int r = 0; r < rounds; r++)
        for (size_t k = 0; k < n; k++)
            run_block(settings[(k + (size_t)r) % n], in, block);
    const std::vector<double> &ref = settings[0].block_ns;
    double base_us = median(ref) / block / 1000;
    for (auto &st : settings) {
        std::vector<double> ratios, extra_ns;
        for (int r = 0; r < rounds; r++) {
            ratios.push_back(st.block_ns[r] / ref[r]);
            extra_ns.push_back((st.block_ns[r] - ref[r]) / block);
        }
        double x = median(ratios);
        double spread = (quantile(ratios, 0.75) - quantile(ratios, 0.25)) / 2;
        uint64_t profiled = st.session ? sampled_forwards(st.session->get()) : 0;
        std::printf("SAMPLING|%s|%s|%.4f|%.4f|%.1f|%.0f|%llu\n", name, st.name, x, spread, base_us,
                    median(extra_ns), (unsigned long long)profiled);
    }
    return 0;
}

// `pairs`: lp_session_forward_begin + _end on a live session, sampled never, with no forward in
// between: what the API adds to an unsampled forward, apart from the markers in the graph.
static int pairs(const char *path, const char *spec, const char *name) {
    std::vector<c10::IValue> in{make_input(spec)};
    torch::jit::Module module = torch::jit::load(path);
    module.eval();
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    o.sample_every = INT_MAX;
    layerprof::Session session(module, o);
    session.warmup(in);
    { // the sampler's first decision profiles: take it here
        layerprof::Session::Forward scope(session);
        module.forward(in);
        scope.end();
    }
    const int n = 200000;
    std::vector<double> ns;
    for (int r = 0; r < 5; r++) {
        uint64_t t0 = cpu_ns();
        for (int i = 0; i < n; i++) {
            lp_session_forward_begin(session.get());
            lp_session_forward_end(session.get(), 1);
        }
        ns.push_back((double)(cpu_ns() - t0) / n);
    }
    std::printf("PAIRS|%s|%.0f\n", name, median(ns));
    return 0;
}

static int append(void *payload, const char *data, size_t size) {
    static_cast<std::string *>(payload)->append(data, size);
    return 0;
}

static int render(const char *path, const char *spec, int renders, const char *name) {
    std::vector<c10::IValue> in{make_input(spec)};
    torch::jit::Module module = torch::jit::load(path);
    module.eval();
    lp_options o;
    lp_options_init(&o);
    o.model_path = path;
    layerprof::Session session(module, o);
    session.warmup(in);
    {
        for (int i = 0; i < 20; i++) {
            layerprof::Session::Forward scope(session);
            module.forward(in);
            scope.end();
        }
    }
    std::vector<double> us;
    std::string text;
    for (int i = 0; i < renders; i++) {
        text.clear();
        auto t0 = Clock::now();
        if (lp_session_render_to(session.get(), LP_FORMAT_OPENMETRICS, append, &text) != LP_OK) {
            std::fprintf(stderr, "render: %s\n", lp_error_last());
            return 1;
        }
        us.push_back((double)std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0)
                         .count() /
                     1000);
    }
    size_t series = 0;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (text[at] != '#') series++;
        at = end == std::string::npos ? text.size() : end + 1;
    }
    std::printf("RENDER|%s|%.1f|%zu|%zu\n", name, median(us), text.size(), series);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: lp_bench_sampling stream|render MODEL.pt SPEC [--block B] "
                             "[--rounds R] [--renders N]\n");
        return 2;
    }
    int block = 100, rounds = 7, renders = 50;
    for (int i = 4; i + 1 < argc; i += 2) {
        if (!std::strcmp(argv[i], "--block")) block = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--renders")) renders = std::atoi(argv[i + 1]);
    }
    if (block < 1 || rounds < 1 || renders < 1) {
        std::fprintf(stderr, "block, rounds and renders must be at least 1\n");
        return 2;
    }
    at::set_num_threads(1);
    // No autograd, for every copy and every forward, warm-up included: the graphs TorchScript
    // optimises then are the ones timed (mixing modes breaks lstm_cell's).
    torch::NoGradGuard no_grad;
    std::string name = argv[2];
    size_t slash = name.rfind('/');
    if (slash != std::string::npos) name = name.substr(slash + 1);
    if (name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0)
        name.resize(name.size() - 3);
    try {
        if (!std::strcmp(argv[1], "stream"))
            return stream(argv[2], argv[3], block, rounds, name.c_str());
        if (!std::strcmp(argv[1], "pairs")) return pairs(argv[2], argv[3], name.c_str());
        if (!std::strcmp(argv[1], "render")) return render(argv[2], argv[3], renders, name.c_str());
    } catch (const std::exception &e) {
        std::fprintf(stderr, "lp_bench_sampling: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "unknown command '%s'\n", argv[1]);
    return 2;
}
